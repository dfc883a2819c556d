/*
 * options.h - the one home of what the command line accepts (options.c): every option (its
 * names, its GIVEN_* bit and its help), every command (the options and formats it uses, its
 * help and an example), the help printed from them, and the "did you mean" suggestions for a
 * mistyped option, command or value (the library's rule, pm_suggest).
 */
#ifndef PM_CLI_OPTIONS_H
#define PM_CLI_OPTIONS_H

#include <stdio.h>

#include "cli.h"

/* getopt_long's value of each long option without a short form. */
enum {
    OPT_MODEL = 256, OPT_ACCEL, OPT_DEVICES, OPT_BATCH, OPT_SEQ, OPT_CONTEXT, OPT_PHASE,
    OPT_MODE, OPT_LAYERS, OPT_DEVLIST, OPT_DATADIR, OPT_SWEEP, OPT_OPTIMIZE, OPT_PLOT, OPT_SHARD,
    OPT_THREADS, OPT_COMPARE, OPT_OBJECTIVE, OPT_EP, OPT_CLUSTER, OPT_CONCURRENCY, OPT_CHUNK,
    OPT_RULE, OPT_TTFT_LIMIT, OPT_TPOT_LIMIT, OPT_METRIC, OPT_ARRIVAL, OPT_RATE, OPT_LENGTHS, OPT_BURST, OPT_MAX_RUNNING,
    OPT_PP, OPT_DP, OPT_BUDGET, OPT_TP_LIST, OPT_EP_LIST, OPT_CHUNKS, OPT_EXHAUSTIVE,
    OPT_MIN_USER_RATE, OPT_SP, OPT_SPEC_TOKENS, OPT_SPEC_ACCEPT, OPT_SPEC_DRAFT, OPT_SPEC_MTP,
    OPT_DP_ATTENTION, OPT_MIX, OPT_STAGE, OPT_PP_LIST, OPT_DISAGG
};

/* One option: its long name, whether it takes a value, getopt's value (the short letter or an
 * OPT_*), its GIVEN_* bit (0: always allowed), the value's placeholder and its help. */
typedef struct cli_option {
    const char *name;
    int has_arg;
    int id;
    unsigned bit;
    const char *arg;
    const char *help;
} cli_option;

extern const cli_option cli_options[];
extern const size_t cli_option_count;

/* One command: its name, the options (GIVEN_* bits) and formats (1 << fmt) it uses, the
 * arguments it takes, one line about it, more text for its help (or NULL) and an example.
 * "sweep" and "optimize" are `run` with --sweep and --optimize. */
typedef struct cli_command {
    const char *name;
    unsigned options, formats;
    const char *args;
    const char *about;
    const char *more;
    const char *example;
} cli_command;

/* The command named name, or NULL. */
const cli_command *cli_command_find(const char *name);

/* The short option string and the long options of getopt_long, from cli_options. */
const char *cli_shortopts(void);
const struct option *cli_longopts(void);

/* The name of the first option given among bits ("--set" for the overrides). */
const char *cli_given_name(unsigned bits);
/* The GIVEN_* bit of getopt's value id (0 for none). */
unsigned cli_given_bit(int id);

/* The formats of a mask as words: "table, json or csv". */
void cli_formats_text(unsigned formats, char *buf, size_t n);

/* The help of command cmd (its options, formats and example), or the overview when NULL. */
void cli_help(FILE *f, const cli_command *cmd);

/* " (did you mean 'X'?)" for the name among names nearest to word (the library's rule), into
 * buf, or "" when none is near; returns buf. prefix is put before the suggestion ("--"). */
const char *cli_suggest(const char *word, const char *const *names, size_t n, const char *prefix,
                        char *buf, size_t size);

/* The index of arg among names[0..n) into *out and 0, or the usage error "OPT: expected a, b or
 * c (got 'ARG')" with the nearest name suggested, EXIT_USAGE. */
int cli_choice(const char *opt, const char *arg, const char *const *names, size_t n, int *out);
/* The usage error for a long option getopt did not know (argv text arg: "--bach=8"), with the
 * nearest option's name; EXIT_USAGE. */
int cli_unknown_option(const char *arg);
/* The usage error for an unknown command, with the nearest command; EXIT_USAGE. */
int cli_unknown_command(const char *cmd);

#endif
