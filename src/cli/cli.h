/*
 * cli.h - what every file of the command-line tool shares: the parsed options and the helpers of
 * common.c that report errors, parse option values and load the scenario. The tool uses only the
 * library's public header. The commands themselves are declared in commands.h, for main.c.
 */
#ifndef PM_CLI_H
#define PM_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "preserve_model.h"

#define EXIT_CONFIG 1
#define EXIT_USAGE 2
#define MAX_SETS 256
#define MIB (1024.0 * 1024.0)

typedef enum fmt { FMT_TABLE, FMT_JSON, FMT_CSV, FMT_DOT } fmt;

/* The options given, one bit each (the overrides --set, --model, --accelerator, --devices,
 * --batch and --seq share one): a command refuses what it does not use. */
enum {
    GIVEN_CONFIG = 1 << 0, GIVEN_SET = 1 << 1, GIVEN_FORMAT = 1 << 2, GIVEN_CONTEXT = 1 << 3,
    GIVEN_PHASE = 1 << 4, GIVEN_MODE = 1 << 5, GIVEN_LAYERS = 1 << 6, GIVEN_DEVLIST = 1 << 7,
    GIVEN_DATADIR = 1 << 8, GIVEN_SWEEP = 1 << 9, GIVEN_OPTIMIZE = 1 << 10, GIVEN_PLOT = 1 << 11,
    GIVEN_SHARD = 1 << 12, GIVEN_THREADS = 1 << 13, GIVEN_COMPARE = 1 << 14,
    GIVEN_OBJECTIVE = 1 << 15, GIVEN_CONCURRENCY = 1 << 16, GIVEN_CHUNK = 1 << 17,
    GIVEN_RULE = 1 << 18, GIVEN_LIMITS = 1 << 19, GIVEN_METRIC = 1 << 20,
    GIVEN_ARRIVAL = 1 << 21, GIVEN_RATE = 1 << 22, GIVEN_LENGTHS = 1 << 23,
    GIVEN_SPACE = 1 << 24, GIVEN_STAGE = 1 << 25,
    GIVEN_BURST = 1 << 26
};

typedef struct cli {
    const char *config;
    const char *data_dir;
    const char *sets[MAX_SETS];
    size_t n_sets;
    fmt format;
    bool format_given;
    bool spec_drafting;  /* --spec-tokens or --spec-accept given (the drafter may be the file's) */
    int64_t context;   /* -1: the default for the command */
    int layers;
    int stage;          /* --stage: the pipeline stage a graph view shows (0-based) */
    pm_phase phase;
    pm_mode mode;
    const char *devices_list;
    const char *sweeps[PM_SWEEP_MAX_AXES];
    int n_sweeps;
    const char *optimize;
    const char *plot;
    const char *shard;   /* "K/N" */
    int threads;         /* 0: all CPUs */
    bool compare;        /* timeline: serial and preserve, one above the other */
    const char *metric;  /* a 2-D sweep's --plot: the result column the cells show (NULL: the
                            speedup over serial) */
    unsigned given;      /* GIVEN_* bits */
    pm_objective objective; /* what --optimize maximises (default PM_OBJECTIVE_MM2) */
    bool objective_given;
    const char *concurrency; /* serve: the concurrencies, "1,2,4" (NULL: 1 to 1024, doubling) */
    const char *rate;        /* serve: request rates (requests/s), "0.5,1,2": an open loop */
    const char *lengths;     /* serve: a distribution of lengths, "IN:OUT:SHARE,..." */
    const char *burst;       /* serve: bursts of these requests, "200,400" (NULL: none) */
    double max_running;      /* serve --burst: the engine's most running sequences (0: none) */
    int64_t chunk;           /* serve: tokens per step (0: the default, 2048) */
    pm_serve_rule rule;      /* serve: the scheduling rule (default decode-first) */
    pm_serve_arrival arrival; /* serve: staggered (default) or a wave */
    double ttft_limit_s, tpot_limit_s; /* serve: latency limits (0: none) */
    double min_user_rate;    /* search: the tokens/s per user floor (0: none) */
    int budget;              /* search: the deployment's devices (0: one replica) */
    const char *tp_list, *ep_list, *chunks; /* search: the space's lists (NULL: defaults) */
    const char *pp_list;     /* search: pipeline stages, "1,2,4" (NULL: 1) */
    bool exhaustive;         /* search: no pruning */
    bool disagg;             /* search: disaggregated deployments as candidates too */
    const char *mix;         /* search: "SCENARIO[@LENGTHS][=SHARE],..." (NULL: --config) */
    pm_search_objective search_objective; /* search: --objective (default per device) */
    bool help;           /* --help: the command's help instead of the command */
    bool help_command;   /* a command was named (not the default run) */
    /* The overrides' text ("key=value", a key and a path), written by add_set before sets[i]
     * points at it: cli_init leaves it as it is (1 MB; zeroing it was a third of a whole run's
     * instructions). Last, so that the fields before it are zeroed in one memset. Static
     * storage (main's cli). */
    char owned[MAX_SETS][PATH_MAX + 64];
} cli;

/* The program name in every diagnostic. */
extern const char *prog;

/* The options before any is parsed: scenario llama70b, two graph layers, preserve mode. */
void cli_init(cli *c);

/* Prints "prog: MESSAGE" and the --help hint on stderr; returns EXIT_USAGE. */
int usage_error(const char *fmt_, ...) __attribute__((format(printf, 1, 2)));
/* Prints the library's error on stderr in the tool's words (an override is "--set KEY=VALUE",
 * a hint names the option); returns EXIT_CONFIG. */
int config_error(const pm_error *err);
/* config_error for a scenario loaded with another option's overrides (set_opt: disagg's
 * "--prefill-set"): its overrides are named by that option. */
int config_error_of(const pm_error *err, const char *set_opt);
/* A file the library names in the tool's words: "--set KEY=VALUE" into buf (n bytes) for the
 * library's "override KEY=VALUE" (PM_ERROR_FILE_OVERRIDE), else file itself. */
const char *file_in_cli_words(const char *file, char *buf, size_t n);
/* Prints the library's error about an option value ("prog: OPT: message", or without OPT when it
 * is NULL) with no hint; returns EXIT_USAGE. */
int usage_pm_error(const char *opt, const pm_error *err);
/* Prints that memory ran out; returns EXIT_CONFIG. */
int out_of_memory(void);
/* Parses a time or bandwidth option value with its unit ("50ms", "25GBps") into SI; a bare
 * number other than 0 is refused (read in SI it would be seconds or bytes/s: "--tpot-limit 50"
 * meant 50 ms). False, said on stderr (opt named), when it is not one. */
bool parse_unit_quantity(const char *opt, const char *text, pm_dimension dim, double *out);

/* Parses an integer option value ("8", "16k", "32Ki", "1e3") in [lo, hi], written in decimal
 * (no sign, hexadecimal, inf or nan); false, said on stderr, when it is not one. opt names the
 * option in the message. */
bool parse_count(const char *opt, const char *text, double lo, double hi, int64_t *out);
/* parse_count for a token count (--seq, --context): k, M and G are 1024, 1024^2 and 1024^3
 * (pm_token_count_parse: "16k" = 16384). */
bool parse_tokens(const char *opt, const char *text, double lo, double hi, int64_t *out);
/* The most shards a sweep may be cut into. */
#define SHARD_MAX 1000000
/* --shard "K/N": decimal digits only (no sign, space or hexadecimal), 1 <= K <= N <= SHARD_MAX;
 * false when text is not one. */
bool parse_shard(const char *text, size_t *k, size_t *n);
/* Adds the override "key=value", "key=number" when value is NULL, or value itself (already
 * "PATH=VALUE") when key is NULL; false, said on stderr, when there are too many or it is too
 * long. */
bool add_set(cli *c, const char *key, const char *value, int64_t n);
/* Writes one "# --set PATH=VALUE" line per override (the inputs a CSV records). */
void print_sets(FILE *f, const cli *c);
/* print_sets, then "# MODEL on ACCELERATOR" without its line's end (the header's next line). */
void print_sets_model_on(FILE *f, const cli *c, const pm_scenario *s);

/* A list option's values (what: "counts", "rates") separated by commas (none empty, each
 * under 64 bytes, at most max), each read by item (opt names the option, ctx is passed on)
 * into out; the count, or -1 said on stderr. */
int parse_list(const char *opt, const char *list, const char *what, int max,
               bool (*item)(const char *opt, const char *text, void *ctx, double *out), void *ctx,
               double *out);
/* parse_list of counts, each parse_count's in [lo, hi]. */
int parse_counts(const char *opt, const char *list, double lo, double hi, int max, double *out);
/* --lengths IN:OUT:SHARE,... (serve, search) into w's length classes; 0 or EXIT_USAGE said on
 * stderr. */
int parse_length_classes(const char *list, pm_serve_workload *w);
/* The served workload of the options over workload wl (serve, search): the scenario's prompt
 * and decode steps, or --lengths' classes; --rule, --arrival, the limits; one sequence in flight
 * and chunk tokens a step (the caller sets both per point). 0 or EXIT_USAGE said on stderr. */
int served_workload(const cli *c, const pm_workload *wl, int64_t chunk, pm_serve_workload *w);
/* Warns on stderr where w's requests run past the context s's model was trained for
 * (pm_serve_workload_warning). */
void served_workload_warn(const pm_scenario *s, const pm_serve_workload *w);
/* A served workload's lengths in words for a header or a title: "prompts of 2048 tokens, 512
 * out", or its classes' count and means. */
void lengths_words(const pm_serve_workload *w, char *buf, size_t n);
/* The load options of the command line (data directory and overrides). */
pm_load_opts load_opts(const cli *c);
/* Loads the scenario of the options; prints the error and returns EXIT_CONFIG on failure. */
int load_quiet(const cli *c, pm_scenario *s);
/* load_quiet, then the scenario's warnings (pm_scenario_warning) on stderr. */
int load(const cli *c, pm_scenario *s);
/* load with the options o (the command line's data directory and a subset of its overrides). */
int load_with(const cli *c, const pm_load_opts *o, pm_scenario *s);

/* The warnings about the estimate e of s (pm_estimate_warning) on stderr. */
void warn_estimate(const pm_scenario *s, const pm_estimate *e);
/* What decided a figure, for its title: "W int8, KV int8, A int8; EP 4; consumers stream;
 * runtime vllm" (EP and the runtime only when there are). */
void scenario_facts(const pm_scenario *s, char *t, size_t n);

/* An axis's title in a figure with its unit (that of pm_axis_column): "L2 capacity (MiB)"; the
 * compute axis names the datatype whose peak it scales ("peak int8 compute (TOPS)"). */
void axis_title(const pm_scenario *s, pm_axis_kind k, char *t, size_t n);

/* --context, or the library's default for the phase (pm_default_context) when it is not
 * given. */
int64_t context_of(const cli *c, const pm_scenario *s);

/* Loads the scenario of the options for a step's view (graph, explain, timeline) and its
 * context (context_of), with the scenario's and the step's warnings on stderr when warn; on
 * failure prints the error and returns EXIT_CONFIG. Release s with pm_scenario_release. */
int load_step(const cli *c, bool warn, pm_scenario *s, int64_t *context);

/* One step as `graph` shows it: the scenario and the graph of one mode with at most `layers`
 * decoder layers at the options' context. */
typedef struct view {
    pm_scenario s;
    int64_t context;
    int layers;          /* the layers built: the request, at most the model's */
    pm_graph *g;
} view;

/* load_step, then the graph; on failure prints the error, releases what it made and returns
 * EXIT_CONFIG. Release with view_close. */
int view_open(const cli *c, pm_mode mode, int layers, bool warn, view *v);
void view_close(view *v);

#endif
