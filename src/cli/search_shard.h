/*
 * search_shard.h - the shard files of `search --shard K/N` and their merge (search_shard.c).
 */
#ifndef PM_CLI_SEARCH_SHARD_H
#define PM_CLI_SEARCH_SHARD_H

#include <stdint.h>
#include <stdio.h>

#include "cli.h"

/* The digest of the resolved scenario and of the spec's workload, space, limits and
 * objective: the shards of one search share it. */
uint64_t search_inputs_digest(const pm_scenario *s, const pm_search_spec *sp);
/* Writes shard k of n's result r (pm_search_run of its slice) exactly. */
void search_shard_write(FILE *f, size_t k, size_t n, uint64_t inputs, const pm_search_result *r);
/* Reads the shard files paths[0..n_files), checks that they are the n shards of the search
 * whose digest is inputs, each once and whole, and merges them in order into out (free it
 * with pm_search_result_free); 0 or the exit status, said on stderr. */
int search_shard_merge(int n_files, char **paths, uint64_t inputs, pm_search_result *out);

#endif
