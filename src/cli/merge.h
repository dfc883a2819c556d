/*
 * merge.h - the shard format's digests and the merge reader (merge.c), shared with the sweep
 * that writes shards (sweep_cmd.c) and with the fuzz harness that reads them (fuzz/fuzz_merge.c).
 */
#ifndef PM_CLI_MERGE_H
#define PM_CLI_MERGE_H

#include <stdint.h>
#include <stdio.h>

#include "cli.h"

/* The largest shard file merge reads (4 GiB): a 10-million-point sweep's CSV is about 2.5 GB. */
#define MERGE_MAX_FILE_BYTES (4ull << 30)

/* 64-bit FNV-1a: h the digest so far (FNV1A64_INIT to start), updated with n bytes of data. */
#define FNV1A64_INIT 14695981039346656037ull
uint64_t fnv1a64(uint64_t h, const void *data, size_t n);

/* The digest of a scenario's resolved inputs: its names and every input with its path, SI
 * unit and the value's bits (the inputs `resolve` lists, the order they are listed in). */
uint64_t scenario_digest(const pm_scenario *s);
/* The "# resolved: ..." and "# data directory ..." lines a CSV records of its inputs: the
 * names, the main counts and the digest of every resolved input. */
void print_resolved(FILE *f, const cli *c, const pm_scenario *s);

/* Checks the shard files paths[0..n) and writes their merge to out; 0, EXIT_USAGE (no files)
 * or EXIT_CONFIG, every mismatch said on stderr with the file (and line). */
int merge_run(int n, char **paths, FILE *out);

#endif
