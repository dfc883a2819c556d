/*
 * cli.h - what the command-line tool's files share: the parsed options and the helpers that
 * report errors and load the scenario. The tool uses only the library's public header.
 */
#ifndef PM_CLI_H
#define PM_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "preserve_model.h"

#define EXIT_CONFIG 1
#define EXIT_USAGE 2
#define MAX_SETS 256
#define MIB (1024.0 * 1024.0)

typedef enum fmt { FMT_TABLE, FMT_JSON, FMT_CSV, FMT_DOT } fmt;

typedef struct cli {
    const char *config;
    const char *data_dir;
    const char *sets[MAX_SETS];
    char owned[MAX_SETS][288];
    size_t n_sets;
    fmt format;
    bool format_given;
    int64_t context;   /* -1: the default for the command */
    int layers;
    pm_phase phase;
    pm_mode mode;
    const char *devices_list;
    const char *sweeps[PM_SWEEP_MAX_AXES];
    int n_sweeps;
    const char *optimize;
    const char *plot;
    const char *shard;   /* "K/N" */
    int threads;         /* 0: all CPUs */
} cli;

extern const char *prog;

int usage_error(const char *fmt_, ...) __attribute__((format(printf, 1, 2)));
int config_error(const pm_error *err);
/* Loads the scenario of the options; prints the error and returns EXIT_CONFIG on failure. */
int load(const cli *c, pm_scenario *s);

/* sweep_cmd.c */
/* The gnuplot terminal for a figure file (.png, .svg, .pdf; wide: a timeline), or NULL. */
const char *plot_terminal(const char *file, bool wide);
/* The path of a script of plots/ (PRESERVE_MODEL_PLOTS overrides); false, said on stderr,
 * when it cannot be read. */
bool plot_script(const char *name, char *path, size_t n);
int cmd_sweep(const cli *c);
int cmd_optimize(const cli *c);
int cmd_merge(int argc, char **argv);
/* timeline.c */
int cmd_timeline(const cli *c);

#endif
