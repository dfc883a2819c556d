/*
 * preserve-model - the command-line tool. It uses only the public header: everything it
 * computes comes from libpreserve_model, and it adds only argument parsing and formatting.
 * What it accepts (options, commands, their helps) is options.c's tables; this file parses the
 * command line with them and dispatches. Data goes to stdout, diagnostics to stderr. Exit codes: 0 success, 1 a model or config error
 * (with the library's message), 2 a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "commands.h"
#include "options.h"
#include "output.h"

/* ---------------------------------------------------------------- options */

/* The shortcuts that are one numeric override each. */
static const struct count_shortcut {
    int opt;
    const char *name;
    double lo, hi;
    const char *path;
} count_shortcuts[] = {
    {OPT_DEVICES, "--devices", 1, PM_MAX_DEVICES, "cluster.devices"},
    {OPT_EP, "--ep", 1, PM_MAX_DEVICES, "cluster.expert_parallel"},
    {OPT_PP, "--pp", 1, PM_MAX_STAGES, "cluster.pipeline_parallel"},
    {OPT_DP, "--dp", 1, PM_MAX_DEVICES, "cluster.data_parallel"},
    {OPT_BATCH, "--batch", 1, PM_MAX_BATCH, "workload.batch"},
    {OPT_SEQ, "--seq", 2, (double)PM_MAX_SEQ_LEN, "workload.seq_len"},
};

/* What apply_option returns to keep parsing; any other value is the exit status. */
#define PARSE_ON (-1)

static int parse_format(cli *c, const char *arg)
{
    static const char *const names[] = {"table", "json", "csv", "dot"};
    static const fmt formats[] = {FMT_TABLE, FMT_JSON, FMT_CSV, FMT_DOT};
    int i;
    c->format_given = true;
    if (cli_choice("--format", arg, names, 4, &i))
        return EXIT_USAGE;
    c->format = formats[i];
    return PARSE_ON;
}

/* --objective: search's names (device, mm2, usd, joule); optimize's are the last three
 * (cmd_optimize refuses device). */
static int parse_objective(cli *c, const char *arg)
{
    const char *names[PM_SEARCH_OBJECTIVE_COUNT];
    for (int o = 0; o < PM_SEARCH_OBJECTIVE_COUNT; o++)
        names[o] = pm_search_objective_name((pm_search_objective)o);
    int i;
    if (cli_choice("--objective", arg, names, PM_SEARCH_OBJECTIVE_COUNT, &i))
        return EXIT_USAGE;
    c->search_objective = (pm_search_objective)i;
    c->objective = i == PM_SEARCH_PER_USD     ? PM_OBJECTIVE_USD
                   : i == PM_SEARCH_PER_JOULE ? PM_OBJECTIVE_JOULE
                                              : PM_OBJECTIVE_MM2;
    c->objective_given = true;
    return PARSE_ON;
}

static int parse_rule(cli *c, const char *arg)
{
    const char *names[PM_SERVE_RULE_COUNT];
    for (int r = 0; r < PM_SERVE_RULE_COUNT; r++)
        names[r] = pm_serve_rule_name((pm_serve_rule)r);
    int i;
    if (cli_choice("--rule", arg, names, PM_SERVE_RULE_COUNT, &i))
        return EXIT_USAGE;
    c->rule = (pm_serve_rule)i;
    return PARSE_ON;
}

static int parse_arrival(cli *c, const char *arg)
{
    const char *names[PM_SERVE_ARRIVAL_COUNT];
    for (int a = 0; a < PM_SERVE_ARRIVAL_COUNT; a++)
        names[a] = pm_serve_arrival_name((pm_serve_arrival)a);
    int i;
    if (cli_choice("--arrival", arg, names, PM_SERVE_ARRIVAL_COUNT, &i))
        return EXIT_USAGE;
    c->arrival = (pm_serve_arrival)i;
    return PARSE_ON;
}

/* --ttft-limit and --tpot-limit: a time with its unit ("2s", "50ms"), > 0. */
static int parse_limit(cli *c, int opt, const char *arg)
{
    const char *name = opt == OPT_TTFT_LIMIT ? "--ttft-limit" : "--tpot-limit";
    double v;
    if (!parse_unit_quantity(name, arg, PM_DIM_TIME, &v))
        return EXIT_USAGE;
    if (!(v >= 0 && v <= 1e6)) /* 0: no limit, as the library's and disagg's */
        return usage_error("%s: expected a time in [0, 1e6] s, 0 for none (got '%s')", name,
                           arg);
    *(opt == OPT_TTFT_LIMIT ? &c->ttft_limit_s : &c->tpot_limit_s) = v;
    return PARSE_ON;
}

/* search's space and its per-user floor: the lists are kept as text (search_cmd.c reads
 * them). */
static int parse_space(cli *c, int opt, const char *arg)
{
    int64_t v;
    double r;
    char *end;
    switch (opt) {
    case OPT_BUDGET:
        if (!parse_count("--budget", arg, 1, PM_MAX_DEVICES, &v))
            return EXIT_USAGE;
        c->budget = (int)v;
        return PARSE_ON;
    case OPT_TP_LIST: c->tp_list = arg; return PARSE_ON;
    case OPT_EP_LIST: c->ep_list = arg; return PARSE_ON;
    case OPT_PP_LIST: c->pp_list = arg; return PARSE_ON;
    case OPT_CHUNKS: c->chunks = arg; return PARSE_ON;
    case OPT_EXHAUSTIVE: c->exhaustive = true; return PARSE_ON;
    case OPT_DISAGG: c->disagg = true; return PARSE_ON;
    case OPT_MIX: c->mix = arg; return PARSE_ON;
    default:
        errno = 0;
        r = strtod(arg, &end);
        if (end == arg || *end != '\0' || errno || !(r > 0 && r <= 1e9))
            return usage_error("--min-user-rate: expected tokens/s per user in (0, 1e9] (got "
                               "'%s')",
                               arg);
        c->min_user_rate = r;
        return PARSE_ON;
    }
}

static int parse_phase(cli *c, const char *arg)
{
    static const char *const names[] = {"decode", "prefill"};
    int i;
    if (cli_choice("--phase", arg, names, 2, &i))
        return EXIT_USAGE;
    c->phase = i == 0 ? PM_PHASE_DECODE : PM_PHASE_PREFILL;
    return PARSE_ON;
}

static int parse_mode(cli *c, const char *arg)
{
    const char *names[PM_MODE_COUNT];
    for (int m = 0; m < PM_MODE_COUNT; m++)
        names[m] = pm_mode_name((pm_mode)m);
    int i;
    if (cli_choice("--mode", arg, names, PM_MODE_COUNT, &i))
        return EXIT_USAGE;
    c->mode = (pm_mode)i;
    return PARSE_ON;
}

/* --context, --layers, --stage and --threads: a count kept in the options. */
static int parse_field(cli *c, int opt, const char *arg)
{
    int64_t v;
    if (opt == OPT_CONTEXT)
        return parse_tokens("--context", arg, 0, (double)PM_MAX_SEQ_LEN, &c->context)
                   ? PARSE_ON
                   : EXIT_USAGE;
    if (opt == OPT_LAYERS) {
        if (!parse_count("--layers", arg, 1, PM_MAX_LAYERS, &v))
            return EXIT_USAGE;
        c->layers = (int)v;
    } else if (opt == OPT_STAGE) {
        if (!parse_count("--stage", arg, 0, PM_MAX_STAGES - 1, &v))
            return EXIT_USAGE;
        c->stage = (int)v;
    } else {
        if (!parse_count("--threads", arg, 0, PM_SWEEP_MAX_THREADS, &v))
            return EXIT_USAGE;
        c->threads = (int)v;
    }
    return PARSE_ON;
}

/* The options that are overrides: --set, --model, --accelerator, --cluster and the count
 * shortcuts. */
static int parse_override(cli *c, int opt, const char *arg)
{
    if (opt == 's') {
        if (!strchr(arg, '=') || arg[0] == '=')
            return usage_error("--set: expected PATH=VALUE (got '%s')", arg);
        return add_set(c, NULL, arg, 0) ? PARSE_ON : EXIT_USAGE;
    }
    if (opt == OPT_MODEL || opt == OPT_ACCEL || opt == OPT_CLUSTER)
        return add_set(c, opt == OPT_MODEL ? "model" : opt == OPT_ACCEL ? "accelerator" : "cluster",
                       arg, 0)
                   ? PARSE_ON
                   : EXIT_USAGE;
    for (size_t i = 0; i < sizeof count_shortcuts / sizeof count_shortcuts[0]; i++) {
        const struct count_shortcut *k = &count_shortcuts[i];
        int64_t v;
        if (k->opt == opt)
            return (k->opt == OPT_SEQ ? parse_tokens(k->name, arg, k->lo, k->hi, &v)
                                      : parse_count(k->name, arg, k->lo, k->hi, &v)) &&
                           add_set(c, k->path, NULL, v)
                       ? PARSE_ON
                       : EXIT_USAGE;
    }
    return PARSE_ON;
}

/* The speculative-decoding options (issue 45): overrides of the scenario's "speculative"
 * block, its source naming the command line. */
static int parse_spec(cli *c, int opt, const char *arg)
{
    int64_t v;
    static const char source[] = "speculative.source=";
    bool ok = true; /* the source once, however many --spec-* options */
    for (size_t i = 0; i < c->n_sets && ok; i++)
        ok = strncmp(c->sets[i], source, sizeof source - 1) != 0;
    ok = !ok || add_set(c, "speculative.source", "command line (--spec-* options)", 0);
    c->spec_drafting = c->spec_drafting || opt == OPT_SPEC_TOKENS || opt == OPT_SPEC_ACCEPT;
    if (opt == OPT_SPEC_TOKENS)
        ok = ok && parse_count("--spec-tokens", arg, 0, PM_MAX_SPEC_TOKENS, &v) &&
             add_set(c, "speculative.draft_tokens", NULL, v);
    else if (opt == OPT_SPEC_ACCEPT)
        ok = ok && add_set(c, "speculative.acceptance", arg, 0);
    else if (opt == OPT_SPEC_DRAFT)
        ok = ok && add_set(c, "speculative.method", "draft_model", 0) &&
             add_set(c, "speculative.draft_model", arg, 0);
    else
        ok = ok && parse_count("--spec-mtp", arg, 1, 64, &v) &&
             add_set(c, "speculative.method", "mtp", 0) &&
             add_set(c, "speculative.mtp_layers", NULL, v);
    return ok ? PARSE_ON : EXIT_USAGE;
}

/* Applies one option of getopt_long; PARSE_ON or the exit status. */
static int apply_option(cli *c, int opt, const char *arg, char **argv)
{
    c->given |= cli_given_bit(opt);
    switch (opt) {
    case 'c': c->config = arg; return PARSE_ON;
    case 's': case OPT_MODEL: case OPT_ACCEL: case OPT_CLUSTER: case OPT_DEVICES: case OPT_BATCH: case OPT_SEQ:
    case OPT_EP: case OPT_PP: case OPT_DP:
        return parse_override(c, opt, arg);
    case OPT_SP:
        return add_set(c, "cluster.sequence_parallel", "true", 0) ? PARSE_ON : EXIT_USAGE;
    case OPT_DP_ATTENTION:
        return add_set(c, "cluster.attention_data_parallel", "true", 0) ? PARSE_ON : EXIT_USAGE;
    case OPT_SPEC_TOKENS: case OPT_SPEC_ACCEPT: case OPT_SPEC_DRAFT: case OPT_SPEC_MTP:
        return parse_spec(c, opt, arg);
    case 'f': return parse_format(c, arg);
    case 'h': c->help = true; return PARSE_ON;
    case 'V': printf("preserve-model %s\n", pm_version()); return 0;
    case OPT_CONTEXT: case OPT_LAYERS: case OPT_STAGE: case OPT_THREADS:
        return parse_field(c, opt, arg);
    case OPT_PHASE: return parse_phase(c, arg);
    case OPT_MODE: return parse_mode(c, arg);
    case OPT_DEVLIST: c->devices_list = arg; return PARSE_ON;
    case OPT_DATADIR: c->data_dir = arg; return PARSE_ON;
    case OPT_SWEEP:
        if (c->n_sweeps >= PM_SWEEP_MAX_AXES)
            return usage_error("--sweep: at most %d axes", PM_SWEEP_MAX_AXES);
        c->sweeps[c->n_sweeps++] = arg;
        return PARSE_ON;
    case OPT_OPTIMIZE: c->optimize = arg; return PARSE_ON;
    case OPT_OBJECTIVE: return parse_objective(c, arg);
    case OPT_PLOT: c->plot = arg; return PARSE_ON;
    case OPT_SHARD: c->shard = arg; return PARSE_ON;
    case OPT_COMPARE: c->compare = true; return PARSE_ON;
    case OPT_METRIC: c->metric = arg; return PARSE_ON;
    case OPT_CONCURRENCY: c->concurrency = arg; return PARSE_ON;
    case OPT_RATE: c->rate = arg; return PARSE_ON;
    case OPT_LENGTHS: c->lengths = arg; return PARSE_ON;
    case OPT_BURST: c->burst = arg; return PARSE_ON;
    case OPT_MAX_RUNNING: {
        int64_t n;
        if (!parse_tokens("--max-running", arg, 1, 1e9, &n))
            return EXIT_USAGE;
        c->max_running = (double)n;
        return PARSE_ON;
    }
    case OPT_CHUNK:
        return parse_tokens("--chunk", arg, 1, (double)PM_MAX_SEQ_LEN, &c->chunk) ? PARSE_ON
                                                                                 : EXIT_USAGE;
    case OPT_RULE: return parse_rule(c, arg);
    case OPT_ARRIVAL: return parse_arrival(c, arg);
    case OPT_TTFT_LIMIT: case OPT_TPOT_LIMIT: return parse_limit(c, opt, arg);
    case OPT_BUDGET: case OPT_TP_LIST: case OPT_EP_LIST: case OPT_PP_LIST: case OPT_CHUNKS:
    case OPT_EXHAUSTIVE: case OPT_MIN_USER_RATE: case OPT_MIX: case OPT_DISAGG:
        return parse_space(c, opt, arg);
    case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
    default: return cli_unknown_option(argv[optind - 1]);
    }
}

/* ---------------------------------------------------------------- dispatch */

/* The options a command does not use are an error, and so is a --format it does not write
 * (options.c's table says which); 0 or EXIT_USAGE. label names the command in the message. */
static int check_uses(const cli *c, const char *name, const char *label)
{
    const cli_command *u = cli_command_find(name);
    const unsigned extra = c->given & ~u->options;
    if (extra & (GIVEN_PLOT | GIVEN_SHARD | GIVEN_THREADS) && strcmp(name, "run") == 0)
        return usage_error("%s: only with --sweep%s", cli_given_name(extra),
                           extra & GIVEN_PLOT ? " or timeline (a single run draws no figure)"
                                              : "");
    if (extra)
        return usage_error("%s: %s does not use it (its options: '%s help %s')",
                           cli_given_name(extra), label, prog, name);
    if (c->format_given && !(u->formats & (1u << c->format))) {
        char f[64];
        cli_formats_text(u->formats, f, sizeof f);
        const bool one = u->formats && !(u->formats & (u->formats - 1));
        return usage_error("%s: --format must be %s%s", label,
                           u->formats ? f : "left out (it has one output)",
                           one ? " (the only format it writes)" : "");
    }
    return 0;
}

/* `run`, which is a sweep with --sweep and a search with --optimize. */
static int dispatch_run(cli *c)
{
    if (c->optimize) {
        if (check_uses(c, "optimize", "--optimize"))
            return EXIT_USAGE;
        if (!c->format_given)
            c->format = FMT_CSV;
        return cmd_optimize(c);
    }
    if (c->n_sweeps > 0) {
        if (check_uses(c, "sweep", "--sweep"))
            return EXIT_USAGE;
        if (!c->format_given)
            c->format = FMT_CSV;
        return cmd_sweep(c);
    }
    return check_uses(c, "run", "run") ? EXIT_USAGE : cmd_run(c);
}

/* The commands that take no arguments, and the format each writes without --format. */
static const struct plain_command {
    const char *name;
    int (*run)(const cli *c);
    fmt default_format;
} plain_commands[] = {
    {"explain", cmd_explain, FMT_TABLE},     {"timeline", cmd_timeline, FMT_CSV},
    {"footprint", cmd_footprint, FMT_TABLE}, {"sensitivity", cmd_sensitivity, FMT_TABLE}, {"resolve", cmd_resolve, FMT_CSV},
    {"graph", cmd_graph, FMT_JSON},          {"serve", cmd_serve, FMT_TABLE},
};

/* `help [COMMAND]` and `COMMAND --help`: the command's help on stdout; 0 or EXIT_USAGE. */
static int dispatch_help(const cli *c, const char *cmd, int rest, char **args)
{
    if (strcmp(cmd, "help") == 0) {
        if (rest > 1)
            return usage_error("help takes at most one command (got %d)", rest);
        cmd = rest == 1 ? args[0] : NULL;
    } else if (strcmp(cmd, "run") == 0 && !c->help_command) {
        cmd = c->optimize ? "optimize" : c->n_sweeps > 0 ? "sweep" : NULL;
    }
    if (cmd && strncmp(cmd, "--", 2) == 0)
        cmd += 2;
    const cli_command *u = cmd ? cli_command_find(cmd) : NULL;
    if (cmd && !u)
        return cli_unknown_command(cmd);
    errno = 0;
    cli_help(stdout, u);
    if (ferror(stdout) && errno) /* a help longer than stdio's buffer failed mid-way */
        stdout_failed(errno);
    return 0;
}

static int dispatch(cli *c, const char *cmd, int rest, char **args)
{
    if (c->help || strcmp(cmd, "help") == 0)
        return dispatch_help(c, cmd, rest, args);
    /* validate and list read no scenario; merge reads only its files. */
    if (strcmp(cmd, "validate") == 0)
        return check_uses(c, cmd, cmd) ? EXIT_USAGE : cmd_validate(c, rest, args);
    if (strcmp(cmd, "list") == 0) {
        if (check_uses(c, cmd, cmd))
            return EXIT_USAGE;
        if (!c->format_given)
            c->format = FMT_TABLE;
        return cmd_list(c, rest, args);
    }
    if (strcmp(cmd, "merge") == 0)
        return check_uses(c, cmd, cmd) ? EXIT_USAGE : cmd_merge(rest, args);
    /* search's arguments are the shard files it merges. */
    if (strcmp(cmd, "search") == 0) {
        if (check_uses(c, cmd, cmd))
            return EXIT_USAGE;
        if (!c->format_given)
            c->format = FMT_TABLE;
        return c->mix ? cmd_search_mix(c, rest) : cmd_search(c, rest, args);
    }
    /* sweep and optimize are `run` with --sweep and --optimize: as words their arguments are
     * the axes ("sweep l2 devices=1,2", "optimize l2=8MiB:512MiB"). */
    const bool pseudo = strcmp(cmd, "sweep") == 0 || strcmp(cmd, "optimize") == 0;
    const bool known = strcmp(cmd, "run") == 0 || (cli_command_find(cmd) && !pseudo);
    if (rest > 0 && known)
        return usage_error("unexpected argument '%s'", args[0]);
    if (pseudo) {
        const bool sweep = cmd[0] == 's';
        if (rest == 0 && !(sweep ? c->n_sweeps > 0 : c->optimize != NULL))
            return usage_error("%s needs an axis: '%s %s %s'", cmd, prog, cmd,
                               sweep ? "l2=8MiB:256MiB:8MiB" : "l2=8MiB:512MiB");
        if (!sweep && (rest > 1 || (rest == 1 && c->optimize)))
            return usage_error("optimize takes one axis (got %d)", rest + (c->optimize != NULL));
        if (sweep ? c->optimize != NULL : c->n_sweeps > 0)
            return usage_error("%s: %s is another command", cmd, sweep ? "--optimize" : "--sweep");
        for (int i = 0; i < rest; i++) {
            const int rc = apply_option(c, sweep ? OPT_SWEEP : OPT_OPTIMIZE, args[i], args);
            if (rc != PARSE_ON)
                return rc;
        }
        return dispatch_run(c);
    }
    if (strcmp(cmd, "run") == 0)
        return dispatch_run(c);
    for (size_t i = 0; i < sizeof plain_commands / sizeof plain_commands[0]; i++) {
        const struct plain_command *p = &plain_commands[i];
        if (strcmp(cmd, p->name) != 0)
            continue;
        if (check_uses(c, cmd, cmd))
            return EXIT_USAGE;
        if (!c->format_given)
            c->format = p->default_format;
        return p->run(c);
    }
    return cli_unknown_command(cmd);
}

int main(int argc, char **argv)
{
    static cli c;
    gsl_set_error_handler_off();
    /* A file-size limit (ulimit -f) makes a write fail with EFBIG, reported like any failed
     * write, instead of killing the tool with a partial file. */
    signal(SIGXFSZ, SIG_IGN);
    /* disagg names two scenarios: its options are its own (disagg_cmd.c). */
    if (argc > 1 && strcmp(argv[1], "disagg") == 0)
        return finish_output(cmd_disagg(argc - 1, argv + 1));
    if (argc == 3 && strcmp(argv[1], "help") == 0 && strcmp(argv[2], "disagg") == 0) {
        static char help_opt[] = "--help";
        char *help_argv[] = {argv[2], help_opt, NULL};
        return finish_output(cmd_disagg(2, help_argv));
    }
    cli_init(&c);
    int opt, rc = PARSE_ON;
    opterr = 0;
    while (rc == PARSE_ON &&
           (opt = getopt_long(argc, argv, cli_shortopts(), cli_longopts(), NULL)) != -1)
        rc = apply_option(&c, opt, optarg, argv);
    if (rc == PARSE_ON) {
        c.help_command = optind < argc;
        const char *cmd = optind < argc ? argv[optind++] : "run";
        rc = dispatch(&c, cmd, argc - optind, argv + optind);
    }
    return finish_output(rc);
}
