/*
 * preserve-model - the command-line tool. It uses only the public header: everything it
 * computes comes from libpreserve_model, and it adds only argument parsing and formatting.
 * Data goes to stdout, diagnostics to stderr. Exit codes: 0 success, 1 a model or config error
 * (with the library's message), 2 a usage error.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "commands.h"
#include "output.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: %s [COMMAND] [OPTIONS]\n"
            "\n"
            "Analytical model of tensor-parallel LLM inference with PRESERVE prefetching\n"
            "(weights and KV cache prefetched from HBM into L2 during allreduces).\n"
            "\n"
            "Commands:\n"
            "  run (default)        time per request, per decode step and tokens/s in the three\n"
            "                       modes serial, fused (GEMM+allreduce) and preserve\n"
            "  explain              per collective (allreduce, MoE all-to-all): what is prefetched,\n"
            "                       how many bytes (and routed experts), why it stops\n"
            "  graph                the per-device graph after insertion (--format json|dot)\n"
            "  footprint            per-device attention/MLP memory vs device count, beside the\n"
            "                       bundled accelerators' L2 sizes (the paper's Fig 2)\n"
            "  resolve              every resolved input in SI units with its source\n"
            "  validate [PATH...]   check config files (default: every shipped data file)\n"
            "  list KIND            bundled models|accelerators|clusters|workloads|scenarios\n"
            "  merge FILE...        join the CSVs of --shard K/N runs into the single-run CSV\n"
            "  timeline             the two-stream schedule of one decode layer (--plot FILE\n"
            "                       draws it as a Gantt chart; otherwise CSV; --compare: serial\n"
            "                       above preserve)\n"
            "\n"
            "Options:\n"
            "  -c, --config REF       scenario name or path (default: llama70b)\n"
            "  -s, --set PATH=VALUE   override any field, e.g. workload.batch=8,\n"
            "                         accelerator.l2_capacity_MB=104 (repeatable)\n"
            "      --model REF        shortcut for --set model=REF\n"
            "      --accelerator REF  shortcut for --set accelerator=REF\n"
            "      --devices N        tensor-parallel degree (cluster.devices)\n"
            "      --ep N             expert-parallel ranks of a MoE model: experts split over\n"
            "                         N ranks, each over devices/N (cluster.expert_parallel)\n"
            "      --batch N          workload.batch\n"
            "      --seq N            total sequence length, accepts 16k, 32Ki (workload.seq_len)\n"
            "  -f, --format FMT       table (default), json, csv; graph: json or dot\n"
            "      --context N        context length for explain/graph (default: seq_len - 1)\n"
            "      --phase P          decode (default) or prefill, for explain/graph\n"
            "      --mode M           serial, fused or preserve (graph; default preserve)\n"
            "      --layers N         layers in the printed graph (default 2)\n"
            "      --devices-list L   device counts for footprint (default 1,2,4,8,16)\n"
            "      --data-dir DIR     bundled data directory (default: %s)\n"
            "      --sweep AXIS[=R]   sweep l2, l2_bw, compute, hbm_bw, link_bw, devices, batch,\n"
            "                         seq or ep; R is START:STOP:STEP (units ok: 8MiB:256MiB:8MiB; STEP\n"
            "                         xF is geometric) or a list 1,4,16; up to 4 times for a grid\n"
            "      --optimize AXIS[=LO:HI]  the value maximising tokens/s/mm2 per mode\n"
            "      --objective O      what --optimize maximises: mm2 (tokens/s/mm2, default),\n"
            "                         usd (tokens/s per dollar) or joule (tokens per joule)\n"
            "      --plot FILE        draw the sweep with gnuplot (.png, .svg or .pdf); with\n"
            "                         timeline: the two-stream schedule of one layer\n"
            "      --compare          timeline: serial and preserve, one above the other (the\n"
            "                         CSV: the serial block, two blank lines, the preserve block)\n"
            "      --shard K/N        evaluate only the K-th of N slices of the sweep (1 <= K <= N)\n"
            "      --threads N        sweep threads (default: every CPU)\n"
            "  -h, --help             this help\n"
            "  -V, --version          the version\n"
            "\n"
            "Allreduce models (n bytes, p devices, link bandwidth B, start-up latency a):\n"
            "  ring 2(p-1)(a + n/(pB)); oneshot a + n/B (mesh) or a + (p-1)n/B (switch);\n"
            "  twoshot 2(a + n/(pB)) (mesh); tree 2 ceil(log2 p)(a + n/B);\n"
            "  hierarchical: intra-node reduce-scatter + inter-node ring + intra all-gather;\n"
            "  auto: the fastest the topology allows.\n",
            prog, pm_default_data_dir());
}

/* ---------------------------------------------------------------- options */

enum {
    OPT_MODEL = 256, OPT_ACCEL, OPT_DEVICES, OPT_BATCH, OPT_SEQ, OPT_CONTEXT, OPT_PHASE,
    OPT_MODE, OPT_LAYERS, OPT_DEVLIST, OPT_DATADIR, OPT_SWEEP, OPT_OPTIMIZE, OPT_PLOT, OPT_SHARD,
    OPT_THREADS, OPT_COMPARE, OPT_OBJECTIVE, OPT_EP
};

static const struct option longopts[] = {
    {"config", required_argument, NULL, 'c'},   {"set", required_argument, NULL, 's'},
    {"format", required_argument, NULL, 'f'},   {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},        {"model", required_argument, NULL, OPT_MODEL},
    {"accelerator", required_argument, NULL, OPT_ACCEL},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"ep", required_argument, NULL, OPT_EP},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"seq", required_argument, NULL, OPT_SEQ},
    {"context", required_argument, NULL, OPT_CONTEXT},
    {"phase", required_argument, NULL, OPT_PHASE},
    {"mode", required_argument, NULL, OPT_MODE},
    {"layers", required_argument, NULL, OPT_LAYERS},
    {"devices-list", required_argument, NULL, OPT_DEVLIST},
    {"data-dir", required_argument, NULL, OPT_DATADIR},
    {"sweep", required_argument, NULL, OPT_SWEEP},
    {"optimize", required_argument, NULL, OPT_OPTIMIZE},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"compare", no_argument, NULL, OPT_COMPARE},
    {"objective", required_argument, NULL, OPT_OBJECTIVE},
    {NULL, 0, NULL, 0}};

/* The shortcuts that are one numeric override each. */
static const struct count_shortcut {
    int opt;
    const char *name;
    double lo, hi;
    const char *path;
} count_shortcuts[] = {
    {OPT_DEVICES, "--devices", 1, PM_MAX_DEVICES, "cluster.devices"},
    {OPT_EP, "--ep", 1, PM_MAX_DEVICES, "cluster.expert_parallel"},
    {OPT_BATCH, "--batch", 1, PM_MAX_BATCH, "workload.batch"},
    {OPT_SEQ, "--seq", 2, (double)PM_MAX_SEQ_LEN, "workload.seq_len"},
};

/* What apply_option returns to keep parsing; any other value is the exit status. */
#define PARSE_ON (-1)

static int parse_format(cli *c, const char *arg)
{
    static const char *const names[] = {"table", "json", "csv", "dot"};
    static const fmt formats[] = {FMT_TABLE, FMT_JSON, FMT_CSV, FMT_DOT};
    c->format_given = true;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(arg, names[i]) == 0) {
            c->format = formats[i];
            return PARSE_ON;
        }
    return usage_error("--format: expected table, json, csv or dot (got '%s')", arg);
}

static int parse_objective(cli *c, const char *arg)
{
    for (int o = 0; o < PM_OBJECTIVE_COUNT; o++)
        if (strcmp(arg, pm_objective_name((pm_objective)o)) == 0) {
            c->objective = (pm_objective)o;
            c->objective_given = true;
            return PARSE_ON;
        }
    return usage_error("--objective: expected mm2, usd or joule (got '%s')", arg);
}

static int parse_phase(cli *c, const char *arg)
{
    if (strcmp(arg, "decode") == 0)
        c->phase = PM_PHASE_DECODE;
    else if (strcmp(arg, "prefill") == 0)
        c->phase = PM_PHASE_PREFILL;
    else
        return usage_error("--phase: expected decode or prefill (got '%s')", arg);
    return PARSE_ON;
}

static int parse_mode(cli *c, const char *arg)
{
    for (int m = 0; m < PM_MODE_COUNT; m++)
        if (strcmp(arg, pm_mode_name((pm_mode)m)) == 0) {
            c->mode = (pm_mode)m;
            return PARSE_ON;
        }
    return usage_error("--mode: expected serial, fused or preserve (got '%s')", arg);
}

/* --context, --layers and --threads: a count kept in the options. */
static int parse_field(cli *c, int opt, const char *arg)
{
    int64_t v;
    if (opt == OPT_CONTEXT)
        return parse_count("--context", arg, 0, (double)PM_MAX_SEQ_LEN, &c->context)
                   ? PARSE_ON
                   : EXIT_USAGE;
    if (opt == OPT_LAYERS) {
        if (!parse_count("--layers", arg, 1, PM_MAX_LAYERS, &v))
            return EXIT_USAGE;
        c->layers = (int)v;
    } else {
        if (!parse_count("--threads", arg, 0, 256, &v))
            return EXIT_USAGE;
        c->threads = (int)v;
    }
    return PARSE_ON;
}

/* The options that are overrides: --set, --model, --accelerator and the count shortcuts. */
static int parse_override(cli *c, int opt, const char *arg)
{
    if (opt == 's') {
        if (!strchr(arg, '=') || arg[0] == '=')
            return usage_error("--set: expected PATH=VALUE (got '%s')", arg);
        return add_set(c, NULL, arg, 0) ? PARSE_ON : EXIT_USAGE;
    }
    if (opt == OPT_MODEL || opt == OPT_ACCEL)
        return add_set(c, opt == OPT_MODEL ? "model" : "accelerator", arg, 0) ? PARSE_ON
                                                                              : EXIT_USAGE;
    for (size_t i = 0; i < sizeof count_shortcuts / sizeof count_shortcuts[0]; i++) {
        const struct count_shortcut *k = &count_shortcuts[i];
        int64_t v;
        if (k->opt == opt)
            return parse_count(k->name, arg, k->lo, k->hi, &v) && add_set(c, k->path, NULL, v)
                       ? PARSE_ON
                       : EXIT_USAGE;
    }
    return PARSE_ON;
}

/* The GIVEN_* bit of each option. */
static const struct given_bit {
    int opt;
    unsigned bit;
    const char *name;
} given_bits[] = {
    {'c', GIVEN_CONFIG, "--config"},      {'s', GIVEN_SET, "--set"},
    {OPT_MODEL, GIVEN_SET, "--model"},    {OPT_ACCEL, GIVEN_SET, "--accelerator"},
    {OPT_DEVICES, GIVEN_SET, "--devices"}, {OPT_BATCH, GIVEN_SET, "--batch"},
    {OPT_EP, GIVEN_SET, "--ep"},
    {OPT_SEQ, GIVEN_SET, "--seq"},        {'f', GIVEN_FORMAT, "--format"},
    {OPT_CONTEXT, GIVEN_CONTEXT, "--context"}, {OPT_PHASE, GIVEN_PHASE, "--phase"},
    {OPT_MODE, GIVEN_MODE, "--mode"},     {OPT_LAYERS, GIVEN_LAYERS, "--layers"},
    {OPT_DEVLIST, GIVEN_DEVLIST, "--devices-list"}, {OPT_DATADIR, GIVEN_DATADIR, "--data-dir"},
    {OPT_SWEEP, GIVEN_SWEEP, "--sweep"},  {OPT_OPTIMIZE, GIVEN_OPTIMIZE, "--optimize"},
    {OPT_PLOT, GIVEN_PLOT, "--plot"},     {OPT_SHARD, GIVEN_SHARD, "--shard"},
    {OPT_THREADS, GIVEN_THREADS, "--threads"}, {OPT_COMPARE, GIVEN_COMPARE, "--compare"},
    {OPT_OBJECTIVE, GIVEN_OBJECTIVE, "--objective"},
};

/* The name of the first option given among bits (the table's first, for overrides "--set"). */
static const char *given_name(unsigned bits)
{
    for (size_t i = 0; i < sizeof given_bits / sizeof given_bits[0]; i++)
        if (bits & given_bits[i].bit)
            return given_bits[i].name;
    return "?";
}

/* Applies one option of getopt_long; PARSE_ON or the exit status. */
static int apply_option(cli *c, int opt, const char *arg, char **argv)
{
    for (size_t i = 0; i < sizeof given_bits / sizeof given_bits[0]; i++)
        if (given_bits[i].opt == opt)
            c->given |= given_bits[i].bit;
    switch (opt) {
    case 'c': c->config = arg; return PARSE_ON;
    case 's': case OPT_MODEL: case OPT_ACCEL: case OPT_DEVICES: case OPT_BATCH: case OPT_SEQ:
    case OPT_EP:
        return parse_override(c, opt, arg);
    case 'f': return parse_format(c, arg);
    case 'h': usage(stdout); return 0;
    case 'V': printf("preserve-model %s\n", pm_version()); return 0;
    case OPT_CONTEXT: case OPT_LAYERS: case OPT_THREADS: return parse_field(c, opt, arg);
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
    case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
    default: return usage_error("unknown option '%s'", argv[optind - 1]);
    }
}

/* ---------------------------------------------------------------- dispatch */

#define GIVEN_INPUTS (GIVEN_CONFIG | GIVEN_SET | GIVEN_DATADIR | GIVEN_FORMAT)
#define FORMATS(a, b) ((1u << (a)) | (1u << (b)))

/* What a command uses: the options (GIVEN_* bits) and the formats (1 << fmt). */
typedef struct uses {
    const char *name;
    unsigned options, formats;
} uses;

/* The options a command does not use are an error, and so is a --format it does not write;
 * 0 or EXIT_USAGE. */
static int check_uses(const cli *c, const uses *u)
{
    const unsigned extra = c->given & ~u->options;
    if (extra & (GIVEN_PLOT | GIVEN_SHARD | GIVEN_THREADS) && strcmp(u->name, "run") == 0)
        return usage_error("%s: only with --sweep", given_name(extra));
    if (extra)
        return usage_error("%s: %s does not use it", given_name(extra), u->name);
    if (c->format_given && !(u->formats & (1u << c->format)))
        return usage_error("%s: --format must be %s", u->name,
                           u->formats == (1u << FMT_CSV) ? "csv (the only format it writes)"
                           : u->formats == FORMATS(FMT_TABLE, FMT_CSV) ? "table or csv"
                           : u->formats == FORMATS(FMT_JSON, FMT_DOT) ? "json or dot"
                           : u->formats == FORMATS(FMT_CSV, FMT_JSON) ? "csv or json"
                           : u->formats ? "table, json or csv"
                                        : "left out (it has one output)");
    return 0;
}

/* `run`, which is a sweep with --sweep and a search with --optimize. */
static int dispatch_run(cli *c)
{
    if (c->optimize) {
        const uses u = {"--optimize", GIVEN_INPUTS | GIVEN_OPTIMIZE | GIVEN_OBJECTIVE,
                        1u << FMT_CSV};
        return check_uses(c, &u) ? EXIT_USAGE : cmd_optimize(c);
    }
    if (c->n_sweeps > 0) {
        const uses u = {"--sweep", GIVEN_INPUTS | GIVEN_SWEEP | GIVEN_PLOT | GIVEN_SHARD |
                                       GIVEN_THREADS,
                        FORMATS(FMT_CSV, FMT_JSON)};
        if (check_uses(c, &u))
            return EXIT_USAGE;
        if (!c->format_given)
            c->format = FMT_CSV;
        return cmd_sweep(c);
    }
    const uses u = {"run", GIVEN_INPUTS, (1u << FMT_TABLE) | FORMATS(FMT_JSON, FMT_CSV)};
    return check_uses(c, &u) ? EXIT_USAGE : cmd_run(c);
}

/* The commands that take no arguments, with what each uses. */
static const struct plain_command {
    uses u;
    int (*run)(const cli *c);
} plain_commands[] = {
    {{"explain", GIVEN_INPUTS | GIVEN_CONTEXT | GIVEN_PHASE, 1u << FMT_TABLE}, cmd_explain},
    {{"timeline",
      GIVEN_INPUTS | GIVEN_CONTEXT | GIVEN_PHASE | GIVEN_MODE | GIVEN_PLOT | GIVEN_COMPARE,
      1u << FMT_CSV},
     cmd_timeline},
    {{"footprint", GIVEN_INPUTS | GIVEN_DEVLIST, FORMATS(FMT_TABLE, FMT_CSV)}, cmd_footprint},
    {{"resolve", GIVEN_INPUTS, 1u << FMT_CSV}, cmd_resolve},
    {{"graph", GIVEN_INPUTS | GIVEN_CONTEXT | GIVEN_PHASE | GIVEN_MODE | GIVEN_LAYERS,
      FORMATS(FMT_JSON, FMT_DOT)},
     cmd_graph},
};

static int dispatch(cli *c, const char *cmd, int rest, char **args)
{
    /* validate and list read no scenario; merge reads only its files. */
    const uses validate = {"validate", GIVEN_SET | GIVEN_DATADIR, 0},
               list = {"list", GIVEN_DATADIR, 0}, merge = {"merge", 0, 0};
    if (strcmp(cmd, "validate") == 0)
        return check_uses(c, &validate) ? EXIT_USAGE : cmd_validate(c, rest, args);
    if (strcmp(cmd, "list") == 0)
        return check_uses(c, &list) ? EXIT_USAGE : cmd_list(c, rest, args);
    if (strcmp(cmd, "merge") == 0)
        return check_uses(c, &merge) ? EXIT_USAGE : cmd_merge(rest, args);
    if (rest > 0)
        return usage_error("unexpected argument '%s'", args[0]);
    if (strcmp(cmd, "run") == 0)
        return dispatch_run(c);
    for (size_t i = 0; i < sizeof plain_commands / sizeof plain_commands[0]; i++) {
        const struct plain_command *p = &plain_commands[i];
        if (strcmp(cmd, p->u.name) != 0)
            continue;
        if (check_uses(c, &p->u))
            return EXIT_USAGE;
        if (strcmp(cmd, "graph") == 0 && !c->format_given)
            c->format = FMT_JSON;
        return p->run(c);
    }
    return usage_error("unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
    static cli c;
    gsl_set_error_handler_off();
    /* A file-size limit (ulimit -f) makes a write fail with EFBIG, reported like any failed
     * write, instead of killing the tool with a partial file. */
    signal(SIGXFSZ, SIG_IGN);
    cli_init(&c);
    int opt, rc = PARSE_ON;
    opterr = 0;
    while (rc == PARSE_ON && (opt = getopt_long(argc, argv, ":c:s:f:hV", longopts, NULL)) != -1)
        rc = apply_option(&c, opt, optarg, argv);
    if (rc == PARSE_ON) {
        const char *cmd = optind < argc ? argv[optind++] : "run";
        rc = dispatch(&c, cmd, argc - optind, argv + optind);
    }
    return finish_output(rc);
}
