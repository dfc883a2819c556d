/*
 * disagg_cmd.c - `disagg`: a disaggregated deployment (pm_disagg_compute), a prefill pool and
 * a decode pool each from its own scenario, over a list of decode concurrencies, beside the
 * co-located deployments (pm_serve_compute) on each pool's chip at the same concurrencies: a
 * table, CSV or JSON, and with --plot FILE the fronts drawn by plots/disagg.gp. With --codesign
 * AXIS=RANGE each pool's chip is swept along the axis (pm_disagg_codesign) and each pool's best
 * point named. Its options are its own (parsed here): the other commands' scenario options
 * name one scenario, this command two.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "options.h"
#include "fmt.h"
#include "output.h"
#include "plot.h"

#define DG_MAX_POINTS 64
#define DG_MAX_SETS 64
/* The overrides the --spec-* options write into both pools (source, tokens, acceptance, and
 * two for the method, each at most once). */
#define DG_SPEC_SETS 8

typedef struct dg_opts {
    const char *pcfg, *dcfg, *data_dir, *conc, *codesign, *plot;
    const char *psets[DG_MAX_SETS], *dsets[DG_MAX_SETS];
    size_t np, nd;
    fmt format;
    pm_disagg_workload w;
    bool help;
    int64_t chunk;
    char spec[DG_SPEC_SETS][192]; /* the --spec-* options' KEY=VALUE, in both pools' sets */
    int nspec;
} dg_opts;

/* One point of the front: the deployment, and the co-located one on each chip (ok false where
 * it could not be computed, e.g. its cache does not fit). */
typedef struct dg_point {
    double conc;
    pm_disagg_result r;
    pm_serve_result co[2];
    bool co_ok[2];
} dg_point;

static const char dg_help[] =
    "usage: preserve-model disagg --prefill-config SCENARIO --decode-config SCENARIO [options]\n"
    "\n"
    "A disaggregated deployment: prefill instances of one scenario, decode instances of\n"
    "another (the same model), the KV cache of each request sent over the link between them.\n"
    "Reports TTFT, TPOT, throughput per device, mm2, dollar and joule of both pools, the\n"
    "instance ratio, in serial, fused and preserve, beside the co-located deployment on each\n"
    "pool's chip at the same concurrency.\n"
    "\n"
    "  --prefill-config S, --decode-config S   the pools' scenarios (name or file)\n"
    "  --prefill-set K=V, --decode-set K=V     an override of one pool's scenario (repeatable)\n"
    "  --input N, --output N     prompt and output tokens (default: the prefill scenario's)\n"
    "  --concurrency L           decode sequences per decode instance, comma separated\n"
    "                            (default: the most its HBM holds)\n"
    "  --rate R                  a target rate (requests/s): the fewest instances serving it\n"
    "                            (default: the ratio of the most throughput per device)\n"
    "  --prefill-instances X, --decode-instances Y   fixed counts (both)\n"
    "  --max-instances M         search bound per pool (default 64)\n"
    "  --max-load F              a prefill instance's most load (default 0.9, aiconfigurator)\n"
    "  --link-bandwidth BW       per prefill device (e.g. 50GBps, 400Gbps; default the prefill\n"
    "                            cluster's inter-node link, else 25 GBps: inference-sim)\n"
    "  --link-latency T          per transfer (default the inter-node link's, else 50us)\n"
    "  --whole                   send the cache after the prefill (default layer-streamed)\n"
    "  --ttft-limit T, --tpot-limit T   limits for goodput\n"
    "  --chunk N                 the co-located deployments' tokens per step (default 2048)\n"
    "  --spec-tokens K, --spec-accept A[,A2..], --spec-draft MODEL, --spec-mtp N\n"
    "                            speculative decoding in both pools (as run's options): the\n"
    "                            decode pool verifies k + 1 tokens a step beside the draft's\n"
    "                            steps, the prefill pool computes the draft's cache too\n"
    "  --codesign AXIS=RANGE     sweep each pool's chip (l2, l2_bw, compute, hbm_bw), e.g.\n"
    "                            l2=8MiB:256MiB:x2; each pool's best by its tokens/s per mm2\n"
    "  -f, --format table|csv|json   --plot FILE (.png, .svg, .pdf)   --data-dir DIR\n"
    "\n"
    "example: preserve-model disagg --prefill-config llama70b-h100 --decode-config llama70b \\\n"
    "           --decode-set workload=decode-bf16 --codesign l2=8MiB:256MiB:x2\n";

enum {
    DG_PCFG = 1000, DG_DCFG, DG_PSET, DG_DSET, DG_INPUT, DG_OUTPUT, DG_CONC, DG_RATE, DG_PINST,
    DG_DINST, DG_MAXINST, DG_LOAD, DG_LBW, DG_LLAT, DG_WHOLE, DG_TTFT, DG_TPOT, DG_CHUNK_OPT,
    DG_CODESIGN, DG_PLOT, DG_FORMAT, DG_DATADIR, DG_HELP, DG_SPEC_TOKENS, DG_SPEC_ACCEPT,
    DG_SPEC_DRAFT, DG_SPEC_MTP
};

static const struct option dg_long[] = {
    {"prefill-config", required_argument, NULL, DG_PCFG},
    {"decode-config", required_argument, NULL, DG_DCFG},
    {"prefill-set", required_argument, NULL, DG_PSET},
    {"decode-set", required_argument, NULL, DG_DSET},
    {"input", required_argument, NULL, DG_INPUT},
    {"output", required_argument, NULL, DG_OUTPUT},
    {"concurrency", required_argument, NULL, DG_CONC},
    {"rate", required_argument, NULL, DG_RATE},
    {"prefill-instances", required_argument, NULL, DG_PINST},
    {"decode-instances", required_argument, NULL, DG_DINST},
    {"max-instances", required_argument, NULL, DG_MAXINST},
    {"max-load", required_argument, NULL, DG_LOAD},
    {"link-bandwidth", required_argument, NULL, DG_LBW},
    {"link-latency", required_argument, NULL, DG_LLAT},
    {"whole", no_argument, NULL, DG_WHOLE},
    {"ttft-limit", required_argument, NULL, DG_TTFT},
    {"tpot-limit", required_argument, NULL, DG_TPOT},
    {"chunk", required_argument, NULL, DG_CHUNK_OPT},
    {"codesign", required_argument, NULL, DG_CODESIGN},
    {"plot", required_argument, NULL, DG_PLOT},
    {"format", required_argument, NULL, DG_FORMAT},
    {"data-dir", required_argument, NULL, DG_DATADIR},
    {"help", no_argument, NULL, DG_HELP},
    {"spec-tokens", required_argument, NULL, DG_SPEC_TOKENS},
    {"spec-accept", required_argument, NULL, DG_SPEC_ACCEPT},
    {"spec-draft", required_argument, NULL, DG_SPEC_DRAFT},
    {"spec-mtp", required_argument, NULL, DG_SPEC_MTP},
    {NULL, 0, NULL, 0}};

/* A number option in [lo, hi]; false said on stderr. */
static bool dg_number(const char *opt, const char *text, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    const double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno || !(v >= lo && v <= hi)) {
        usage_error("%s: expected a number in [%g, %g] (got '%s')", opt, lo, hi, text);
        return false;
    }
    *out = v;
    return true;
}

/* A quantity option (a bandwidth or a time with its unit) > 0 (a time >= 0). */
static bool dg_quantity(const char *opt, const char *text, pm_dimension dim, double *out)
{
    if (!parse_unit_quantity(opt, text, dim, out))
        return false;
    if (!(*out >= 0 && *out < INFINITY) || (dim == PM_DIM_BANDWIDTH && !(*out > 0))) {
        usage_error("%s: out of range (got '%s')", opt, text);
        return false;
    }
    return true;
}

static bool dg_count(const char *opt, const char *text, int lo, int hi, int *out)
{
    int64_t v;
    if (!parse_count(opt, text, lo, hi, &v))
        return false;
    *out = (int)v;
    return true;
}

/* KEY=VALUE into both pools' overrides (the pools speculate alike); false said on stderr. */
static bool dg_both(dg_opts *o, const char *key, const char *value)
{
    if (o->nspec == DG_SPEC_SETS || o->np == DG_MAX_SETS || o->nd == DG_MAX_SETS ||
        snprintf(o->spec[o->nspec], sizeof o->spec[0], "%s=%s", key, value) >=
            (int)sizeof o->spec[0]) {
        usage_error("--spec-*: too many options or too long a value (%s)", value);
        return false;
    }
    o->psets[o->np++] = o->dsets[o->nd++] = o->spec[o->nspec++];
    return true;
}

/* The speculative-decoding options (issue 45), as the other commands': the scenario's
 * "speculative" block in both pools, its source the command line. */
static bool dg_spec(dg_opts *o, int opt, const char *arg)
{
    int64_t v;
    char num[24];
    bool ok = o->nspec > 0 || /* the source first, once */
              dg_both(o, "speculative.source", "command line (--spec-* options)");
    if (ok && opt == DG_SPEC_TOKENS)
        ok = parse_count("--spec-tokens", arg, 0, PM_MAX_SPEC_TOKENS, &v) &&
             snprintf(num, sizeof num, "%lld", (long long)v) > 0 &&
             dg_both(o, "speculative.draft_tokens", num);
    else if (ok && opt == DG_SPEC_ACCEPT)
        ok = dg_both(o, "speculative.acceptance", arg);
    else if (ok && opt == DG_SPEC_DRAFT)
        ok = dg_both(o, "speculative.method", "draft_model") &&
             dg_both(o, "speculative.draft_model", arg);
    else if (ok)
        ok = parse_count("--spec-mtp", arg, 1, 64, &v) &&
             snprintf(num, sizeof num, "%lld", (long long)v) > 0 &&
             dg_both(o, "speculative.method", "mtp") && dg_both(o, "speculative.mtp_layers", num);
    return ok;
}

static bool dg_apply(dg_opts *o, int opt, const char *arg)
{
    double v;
    switch (opt) {
    case DG_PCFG: o->pcfg = arg; return true;
    case DG_DCFG: o->dcfg = arg; return true;
    case DG_PSET: case DG_DSET: {
        size_t *n = opt == DG_PSET ? &o->np : &o->nd;
        if (*n == DG_MAX_SETS || !strchr(arg, '=')) {
            usage_error("%s: expected at most %d of KEY=VALUE (got '%s')",
                        opt == DG_PSET ? "--prefill-set" : "--decode-set", DG_MAX_SETS, arg);
            return false;
        }
        (opt == DG_PSET ? o->psets : o->dsets)[(*n)++] = arg;
        return true;
    }
    case DG_INPUT:
        return parse_tokens("--input", arg, 1, (double)PM_MAX_SEQ_LEN, &o->w.input_tokens);
    case DG_OUTPUT:
        return parse_tokens("--output", arg, 2, (double)PM_MAX_SEQ_LEN, &o->w.output_tokens);
    case DG_CONC: o->conc = arg; return true;
    case DG_RATE: return dg_number("--rate", arg, 1e-9, 1e12, &o->w.request_rate_per_s);
    case DG_PINST:
        return dg_count("--prefill-instances", arg, 1, PM_DISAGG_MAX_INSTANCES,
                        &o->w.prefill_instances);
    case DG_DINST:
        return dg_count("--decode-instances", arg, 1, PM_DISAGG_MAX_INSTANCES,
                        &o->w.decode_instances);
    case DG_MAXINST:
        return dg_count("--max-instances", arg, 1, PM_DISAGG_MAX_INSTANCES, &o->w.max_instances);
    case DG_LOAD: return dg_number("--max-load", arg, 1e-6, 1.0, &o->w.prefill_max_load_frac);
    case DG_LBW:
        return dg_quantity("--link-bandwidth", arg, PM_DIM_BANDWIDTH,
                           &o->w.link.bandwidth_bytes_per_s);
    case DG_LLAT:
        return dg_quantity("--link-latency", arg, PM_DIM_TIME, &o->w.link.latency_s);
    case DG_WHOLE: o->w.link.layer_streamed = false; return true;
    case DG_TTFT: return dg_quantity("--ttft-limit", arg, PM_DIM_TIME, &o->w.ttft_limit_s);
    case DG_TPOT: return dg_quantity("--tpot-limit", arg, PM_DIM_TIME, &o->w.tpot_limit_s);
    case DG_CHUNK_OPT: return parse_tokens("--chunk", arg, 1, (double)PM_MAX_SEQ_LEN, &o->chunk);
    case DG_CODESIGN: o->codesign = arg; return true;
    case DG_PLOT: o->plot = arg; return true;
    case DG_DATADIR: o->data_dir = arg; return true;
    case DG_HELP: o->help = true; return true;
    case DG_SPEC_TOKENS: case DG_SPEC_ACCEPT: case DG_SPEC_DRAFT: case DG_SPEC_MTP:
        return dg_spec(o, opt, arg);
    case 'f':
    case DG_FORMAT: {
        static const char *const names[] = {"table", "json", "csv"};
        static const fmt formats[] = {FMT_TABLE, FMT_JSON, FMT_CSV};
        int i;
        if (cli_choice("--format", arg, names, 3, &i))
            return false;
        o->format = formats[i];
        return true;
    }
    default: (void)v; return false;
    }
}

/* Parses argv (argv[0] "disagg"); 0 to go on, else the exit status (-1: --help printed). */
static int dg_parse(int argc, char **argv, dg_opts *o)
{
    *o = (dg_opts){.format = FMT_TABLE};
    o->w.max_instances = 64;
    o->w.prefill_max_load_frac = CLI_DISAGG_MAX_LOAD_FRAC;
    o->w.link = (pm_disagg_link){NAN, NAN, true}; /* NaN: the prefill scenario's */
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":f:", dg_long, NULL)) != -1) {
        if (opt == '?' || opt == ':')
            return usage_error("disagg: %s '%s' (its options: '%s disagg --help')",
                               opt == ':' ? "option needs a value" : "unknown option",
                               argv[optind - 1], prog);
        if (!dg_apply(o, opt, optarg))
            return EXIT_USAGE;
    }
    if (optind < argc)
        return usage_error("disagg: unexpected argument '%s'", argv[optind]);
    if (o->help) {
        fputs(dg_help, stdout);
        return -1;
    }
    if (!o->pcfg || !o->dcfg)
        return usage_error("disagg: needs --prefill-config and --decode-config");
    if ((o->w.prefill_instances > 0) != (o->w.decode_instances > 0))
        return usage_error("disagg: --prefill-instances and --decode-instances go together");
    if (o->plot && o->format == FMT_JSON)
        return usage_error("--plot: the figure is drawn from CSV (no --format json)");
    if (o->plot && !plot_terminal(o->plot, PLOT_PAGE))
        return plot_usage_error(o->plot);
    return 0;
}

/* ---------------------------------------------------------------- computing */

/* A pool's scenario, its overrides those of set_opt (--prefill-set, --decode-set: an error
 * names that option). */
static int dg_load(const dg_opts *o, const char *ref, const char *const *sets, size_t n,
                   const char *set_opt, pm_scenario *s)
{
    const pm_load_opts lo = {o->data_dir, n ? sets : NULL, n};
    pm_error err;
    return pm_scenario_load(ref, &lo, s, &err) == PM_OK ? 0 : config_error_of(&err, set_opt);
}

/* The decode concurrencies: the list, or the HBM's most alone (0). */
static int dg_points(const dg_opts *o, double *out)
{
    if (!o->conc) {
        out[0] = 0.0;
        return 1;
    }
    int n = 0;
    char buf[1024];
    if (strlen(o->conc) >= sizeof buf)
        return usage_error("--concurrency: too long"), -1;
    strcpy(buf, o->conc);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == DG_MAX_POINTS)
            return usage_error("--concurrency: at most %d values", DG_MAX_POINTS), -1;
        int c; /* sequences: whole, as every command's --concurrency */
        if (!dg_count("--concurrency", tok, 1, 1000000000, &c))
            return -1;
        out[n++] = c;
    }
    return n;
}

static int dg_compute(dg_opts *o, const pm_scenario *ps, const pm_scenario *ds, dg_point *pt,
                      int n)
{
    for (int i = 0; i < n; i++) {
        o->w.decode_concurrency = pt[i].conc;
        pm_error err;
        if (pm_disagg_compute(ps, ds, &o->w, &pt[i].r, &err) != PM_OK)
            return err.status == PM_ERR_INVALID_ARG ? (config_error(&err), EXIT_USAGE)
                                                    : config_error(&err);
        const double c = pt[i].r.decode_concurrency;
        for (int chip = 0; chip < 2; chip++) /* beside it, co-located on each pool's chip */
            pt[i].co_ok[chip] = pm_disagg_colocated(chip ? ds : ps, &o->w, c, o->chunk,
                                                    &pt[i].co[chip], NULL) == PM_OK;
    }
    return 0;
}

/* ---------------------------------------------------------------- writing */

/* Mode m of the co-located deployment on pool chip's chip (0: prefill, 1: decode). */
static void co_values(const dg_point *p, int chip, int m, double v[PM_DISAGG_COLOCATED_FIELDS])
{
    pm_disagg_colocated_values(p->co_ok[chip] ? &p->co[chip] : NULL, (pm_mode)m, v);
}

/* The decode pool's speculation, one line (nothing without). */
static void dg_spec_line(FILE *f, const char *lead, const pm_scenario *ds)
{
    const pm_speculation *sp = &ds->spec;
    if (sp->draft_tokens > 0)
        fprintf(f, "%sspeculative decoding: %s, %d drafted tokens, %.4f tokens per verify step "
                   "(a request decodes in (output - 1) / E steps)\n",
                lead, sp->method == PM_SPEC_MTP ? "MTP heads" : sp->draft.name, sp->draft_tokens,
                pm_spec_expected_tokens(sp));
}

typedef struct dg_codesign {
    pm_axis axis;
    pm_disagg_codesign_point *pts[PM_DISAGG_POOL_COUNT];
    int best[PM_DISAGG_POOL_COUNT];
} dg_codesign;

/* Where a run's warnings go: stderr, a CSV's header or a JSON list (n: how many so far). */
typedef enum { DG_TO_STDERR, DG_TO_HEADER, DG_TO_JSON } dg_to;
typedef struct dg_sink {
    dg_to to;
    FILE *f;
    size_t n;
} dg_sink;

static void dg_emit(dg_sink *k, const char *pool, const char *note)
{
    if (k->to == DG_TO_STDERR) {
        fprintf(stderr, "warning: %s pool: %s\n", pool, note);
    } else if (k->to == DG_TO_HEADER) {
        fprintf(k->f, "# warning: %s pool: %s\n", pool, note);
    } else {
        char line[600];
        snprintf(line, sizeof line, "%s pool: %s", pool, note);
        fprintf(k->f, "%s", k->n ? ", " : "");
        fput_json_string(k->f, line);
    }
    k->n++;
}

/* Every warning of a run into k, named by its pool: w's requests past the model's trained
 * context ("each": both pools run the model), each pool's scenario's (pm_scenario_warning), or
 * along the codesign axis the sweep's (pm_sweep_warning: a die over the reticle at some of its
 * values...); then, with cd's answer (best_too), each pool's best over the reticle or with
 * bandwidth taken as free (pm_disagg_codesign_warning). */
static void dg_warnings(const pm_scenario *ps, const pm_scenario *ds,
                        const pm_disagg_workload *w, const dg_codesign *cd, bool best_too,
                        dg_sink *k)
{
    const pm_scenario *s[PM_DISAGG_POOL_COUNT] = {ps, ds};
    char note[512];
    /* The requests past the model's trained context (both pools run it). */
    if (pm_disagg_workload_warning(ps, w, note, sizeof note))
        dg_emit(k, "each", note);
    for (int pool = 0; pool < PM_DISAGG_POOL_COUNT; pool++)
        for (size_t i = 0; cd ? pm_sweep_warning(s[pool], &cd->axis, 1, i, note, sizeof note)
                              : pm_scenario_warning(s[pool], i, note, sizeof note);
             i++)
            dg_emit(k, pm_disagg_pool_name((pm_disagg_pool)pool), note);
    for (int pool = 0; cd && best_too && pool < PM_DISAGG_POOL_COUNT; pool++)
        for (size_t i = 0; pm_disagg_codesign_warning(s[pool], cd->axis.kind, cd->pts[pool],
                                                      cd->axis.n_values, cd->best[pool], i,
                                                      note, sizeof note);
             i++)
            dg_emit(k, pm_disagg_pool_name((pm_disagg_pool)pool), note);
}

static void dg_header(FILE *f, const dg_opts *o, const pm_scenario *ps, const pm_scenario *ds,
                      const dg_codesign *cd)
{
    fprintf(f, "# preserve-model %s disagg: prefill %s (%s x %d), decode %s (%s x %d)\n",
            pm_version(), o->pcfg, ps->accel.name, ps->cluster.devices, o->dcfg, ds->accel.name,
            ds->cluster.devices);
    fprintf(f, "# model %s, %lld tokens in, %lld out; link %.6g GB/s per prefill device, %.6g us,"
               " %s\n",
            ps->model.name, (long long)o->w.input_tokens, (long long)o->w.output_tokens,
            o->w.link.bandwidth_bytes_per_s / 1e9, o->w.link.latency_s * 1e6,
            o->w.link.layer_streamed ? "layer-streamed" : "whole");
    for (size_t i = 0; i < o->np; i++)
        fprintf(f, "# --prefill-set %s\n", o->psets[i]);
    for (size_t i = 0; i < o->nd; i++)
        fprintf(f, "# --decode-set %s\n", o->dsets[i]);
    dg_spec_line(f, "# ", ds);
    dg_sink said = {DG_TO_HEADER, f, 0};
    dg_warnings(ps, ds, &o->w, cd, true, &said);
}

static void csv_value(FILE *f, double v, bool first)
{
    char num[FMT_G9_MAX];
    fmt_csv(v, num);
    fprintf(f, "%s%s", first ? "" : ",", num);
}

static void dg_csv(FILE *f, const dg_opts *o, const pm_scenario *ps, const pm_scenario *ds,
                   const dg_point *pt, int n)
{
    static const char *const chips[] = {"colocated_prefill_chip", "colocated_decode_chip"};
    dg_header(f, o, ps, ds, NULL);
    for (size_t i = 0; i < pm_disagg_column_count(); i++)
        fprintf(f, "%s%s", i ? "," : "", pm_disagg_column_name(i));
    for (int chip = 0; chip < 2; chip++)
        for (int m = 0; m < PM_MODE_COUNT; m++)
            for (int k = 0; k < PM_DISAGG_COLOCATED_FIELDS; k++)
                fprintf(f, ",%s_%s_%s", chips[chip], pm_mode_name((pm_mode)m),
                        pm_disagg_colocated_field_name((size_t)k));
    fputc('\n', f);
    for (int i = 0; i < n; i++) {
        double v[256];
        const size_t nc = pm_disagg_point_values(&pt[i].r, v, 256);
        for (size_t k = 0; k < nc && k < 256; k++)
            csv_value(f, v[k], k == 0);
        for (int chip = 0; chip < 2; chip++)
            for (int m = 0; m < PM_MODE_COUNT; m++) {
                double c[PM_DISAGG_COLOCATED_FIELDS];
                co_values(&pt[i], chip, m, c);
                for (int k = 0; k < PM_DISAGG_COLOCATED_FIELDS; k++)
                    csv_value(f, c[k], false);
            }
        fputc('\n', f);
    }
}

static void json_number_field(const char *name, double v, bool comma)
{
    printf("%s\"%s\": ", comma ? ", " : "", name);
    fput_json_number(stdout, v);
}

static void dg_json(const dg_opts *o, const pm_scenario *ps, const pm_scenario *ds,
                    const dg_point *pt, int n)
{
    printf("{\"tool\": \"preserve-model\", \"version\": \"%s\", \"prefill\": ", pm_version());
    fput_json_string(stdout, o->pcfg);
    printf(", \"decode\": ");
    fput_json_string(stdout, o->dcfg);
    printf(", \"model\": ");
    fput_json_string(stdout, ps->model.name);
    printf(", \"prefill_accelerator\": ");
    fput_json_string(stdout, ps->accel.name);
    printf(", \"decode_accelerator\": ");
    fput_json_string(stdout, ds->accel.name);
    printf(", \"input_tokens\": %lld, \"output_tokens\": %lld",
           (long long)o->w.input_tokens, (long long)o->w.output_tokens);
    json_number_field("link_bandwidth_GBps", o->w.link.bandwidth_bytes_per_s / 1e9, true);
    json_number_field("link_latency_us", o->w.link.latency_s * 1e6, true);
    printf(", \"layer_streamed\": %s, \"speculative\": ",
           o->w.link.layer_streamed ? "true" : "false");
    fput_json_speculation(stdout, &ds->spec);
    printf(", \"warnings\": [");
    dg_sink said = {DG_TO_JSON, stdout, 0};
    dg_warnings(ps, ds, &o->w, NULL, false, &said);
    printf("], \"points\": [");
    for (int i = 0; i < n; i++) {
        double v[256];
        const size_t nc = pm_disagg_point_values(&pt[i].r, v, 256);
        printf("%s{", i ? ", " : "");
        for (size_t k = 0; k < nc && k < 256; k++)
            json_number_field(pm_disagg_column_name(k), v[k], k > 0);
        for (int chip = 0; chip < 2; chip++) {
            printf(", \"colocated_%s_chip\": {", chip ? "decode" : "prefill");
            for (int m = 0; m < PM_MODE_COUNT; m++) {
                double c[PM_DISAGG_COLOCATED_FIELDS];
                co_values(&pt[i], chip, m, c);
                printf("%s\"%s\": {", m ? ", " : "", pm_mode_name((pm_mode)m));
                for (int k = 0; k < PM_DISAGG_COLOCATED_FIELDS; k++)
                    json_number_field(pm_disagg_colocated_field_name((size_t)k), c[k], k > 0);
                printf("}");
            }
            printf("}");
        }
        printf("}");
    }
    printf("]}\n");
}

static void dg_table(const dg_opts *o, const pm_scenario *ps, const pm_scenario *ds,
                     const dg_point *pt, int n)
{
    const pm_disagg_result *r0 = &pt[0].r;
    printf("%s: prefill pool %s x %d per instance, decode pool %s x %d per instance\n",
           ps->model.name, ps->accel.name, ps->cluster.devices, ds->accel.name,
           ds->cluster.devices);
    printf("%lld tokens in, %lld out; KV cache %.4g MB a request (%.4g MB per prefill device) "
           "over %.4g GB/s, %.4g us, %s\n\n",
           (long long)o->w.input_tokens, (long long)o->w.output_tokens,
           r0->kv_bytes_per_request / 1e6, r0->transfer_bytes_per_device / 1e6,
           o->w.link.bandwidth_bytes_per_s / 1e9, o->w.link.latency_s * 1e6,
           o->w.link.layer_streamed ? "layer-streamed" : "whole");
    if (ds->spec.draft_tokens > 0) {
        dg_spec_line(stdout, "", ds);
        putchar('\n');
    }
    printf("%8s %-8s %5s %9s %9s %9s %9s %9s %10s %10s %11s  %s\n", "decode_N", "mode", "P:D",
           "in_flight", "TTFT_ms", "xfer_ms", "TPOT_ms", "req/s", "tok/s/dev", "tok/s/user",
           "tok/s/mm2", "co-located tok/s/dev (prefill chip, decode chip)");
    for (int i = 0; i < n; i++)
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            const pm_disagg_mode *x = &pt[i].r.modes[m];
            double c0[PM_DISAGG_COLOCATED_FIELDS], c1[PM_DISAGG_COLOCATED_FIELDS];
            co_values(&pt[i], 0, m, c0);
            co_values(&pt[i], 1, m, c1);
            char ratio[16], mm2[24] = "-"; /* "-": no area block, no density */
            snprintf(ratio, sizeof ratio, "%d:%d", x->prefill_instances, x->decode_instances);
            if (x->tokens_per_s_per_mm2 > 0)
                snprintf(mm2, sizeof mm2, "%.4f", x->tokens_per_s_per_mm2);
            printf("%8.0f %-8s %5s %9.1f %9.1f %9.2f %9.2f %9.2f %10.1f %10.2f %11s  %.1f, "
                   "%.1f%s\n",
                   pt[i].r.decode_concurrency, pm_mode_name((pm_mode)m), ratio,
                   x->decode_in_flight, x->ttft_s * 1e3,
                   x->transfer_s * 1e3, x->tpot_s * 1e3, x->requests_per_s,
                   x->tokens_per_s_per_device, x->tokens_per_s_per_user, mm2, c0[0], c1[0],
                   x->saturated ? "  (saturated)" : "");
        }
    printf("\n(decode_N: sequences per decode instance at full load; the HBM holds %.0f; "
           "in_flight: those a decode instance holds at the deployment's rate, its TPOT's)\n",
           r0->decode_max_concurrency);
}

/* ---------------------------------------------------------------- co-design */

static double pool_density(const pm_disagg_result *r, int pool, int m)
{
    const pm_disagg_mode *x = &r->modes[m];
    return pool == PM_DISAGG_PREFILL ? x->prefill_tokens_per_s_per_mm2
                                     : x->decode_tokens_per_s_per_mm2;
}

static void cd_table(const dg_codesign *cd)
{
    const char *col = pm_axis_column(cd->axis.kind);
    for (int pool = 0; pool < PM_DISAGG_POOL_COUNT; pool++) {
        printf("\n%s pool's chip along %s (the other pool as given); density: its own %s "
               "tokens/s per mm2\n",
               pm_disagg_pool_name((pm_disagg_pool)pool), col,
               pool == PM_DISAGG_PREFILL ? "prompt" : "output");
        printf("%14s %12s %12s %12s %10s %9s %14s\n", col, "serial", "fused", "preserve",
               "TTFT_ms", "TPOT_ms", "deploy/mm2");
        for (size_t i = 0; i < cd->axis.n_values; i++) {
            const pm_disagg_codesign_point *p = &cd->pts[pool][i];
            const double v = pm_axis_display_value(cd->axis.kind, p->value);
            if (p->status != PM_OK) {
                printf("%14.6g  (no deployment: %s)\n", v, pm_status_name(p->status));
                continue;
            }
            const pm_disagg_mode *x = &p->result.modes[PM_MODE_PRESERVE];
            printf("%14.6g %12.4f %12.4f %12.4f %10.1f %9.2f %14.4f%s\n", v,
                   pool_density(&p->result, pool, PM_MODE_SERIAL),
                   pool_density(&p->result, pool, PM_MODE_FUSED),
                   pool_density(&p->result, pool, PM_MODE_PRESERVE), x->ttft_s * 1e3,
                   x->tpot_s * 1e3, x->tokens_per_s_per_mm2,
                   (int)i == cd->best[pool] ? "  <- best (preserve)" : "");
        }
    }
}

static void cd_csv(FILE *f, const dg_codesign *cd)
{
    fprintf(f, "pool,%s", pm_axis_column(cd->axis.kind));
    for (size_t i = 0; i < pm_disagg_column_count(); i++)
        fprintf(f, ",%s", pm_disagg_column_name(i));
    fprintf(f, ",best\n");
    for (int pool = 0; pool < PM_DISAGG_POOL_COUNT; pool++)
        for (size_t i = 0; i < cd->axis.n_values; i++) {
            const pm_disagg_codesign_point *p = &cd->pts[pool][i];
            fprintf(f, "%s", pm_disagg_pool_name((pm_disagg_pool)pool));
            csv_value(f, pm_axis_display_value(cd->axis.kind, p->value), false);
            double v[256];
            const size_t nc = pm_disagg_point_values(&p->result, v, 256);
            for (size_t k = 0; k < nc && k < 256; k++)
                csv_value(f, p->status == PM_OK ? v[k] : NAN, false);
            fprintf(f, ",%d\n", (int)i == cd->best[pool]);
        }
}

static void cd_json(const dg_codesign *cd, const pm_scenario *ps, const pm_scenario *ds,
                    const pm_disagg_workload *w)
{
    printf("{\"axis\": \"%s\", \"column\": \"%s\", \"warnings\": [", pm_axis_name(cd->axis.kind),
           pm_axis_column(cd->axis.kind));
    dg_sink said = {DG_TO_JSON, stdout, 0};
    dg_warnings(ps, ds, w, cd, true, &said);
    printf("], \"pools\": [");
    for (int pool = 0; pool < PM_DISAGG_POOL_COUNT; pool++) {
        const int b = cd->best[pool];
        printf("%s{\"pool\": \"%s\", \"best\": ", pool ? ", " : "",
               pm_disagg_pool_name((pm_disagg_pool)pool));
        fput_json_number(stdout, b >= 0 ? pm_axis_display_value(cd->axis.kind,
                                                                cd->pts[pool][b].value)
                                        : NAN);
        printf(", \"points\": [");
        for (size_t i = 0; i < cd->axis.n_values; i++) {
            const pm_disagg_codesign_point *p = &cd->pts[pool][i];
            printf("%s{", i ? ", " : "");
            json_number_field("value", pm_axis_display_value(cd->axis.kind, p->value), false);
            double v[256];
            const size_t nc = pm_disagg_point_values(&p->result, v, 256);
            for (size_t k = 0; k < nc && k < 256; k++)
                json_number_field(pm_disagg_column_name(k), p->status == PM_OK ? v[k] : NAN,
                                  true);
            printf("}");
        }
        printf("]}");
    }
    printf("]}\n");
}

static int dg_run_codesign(const dg_opts *o, const pm_scenario *ps, const pm_scenario *ds)
{
    dg_codesign cd = {0};
    pm_error err;
    /* The axis first, parsed bare: a chip's (a range's error would hide that another axis is
     * not one). */
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(o->codesign, "="), o->codesign);
    if (pm_axis_parse(name, 4096, &cd.axis, &err) != PM_OK)
        return usage_pm_error("--codesign", &err);
    const bool chip = pm_disagg_codesign_axis(cd.axis.kind);
    pm_axis_release(&cd.axis);
    if (!chip)
        return usage_error("--codesign: axis '%s': a pool's chip sweeps l2, l2_bw, compute or "
                           "hbm_bw (the link between the pools: --link-bandwidth)",
                           name);
    if (pm_axis_parse(o->codesign, 4096, &cd.axis, &err) != PM_OK)
        return usage_pm_error("--codesign", &err);
    int rc = 0;
    for (int pool = 0; pool < PM_DISAGG_POOL_COUNT && rc == 0; pool++) {
        cd.pts[pool] = calloc(cd.axis.n_values, sizeof *cd.pts[pool]);
        if (!cd.pts[pool]) {
            rc = out_of_memory();
            break;
        }
        if (pm_disagg_codesign(ps, ds, &o->w, (pm_disagg_pool)pool, cd.axis.kind,
                               cd.axis.values, cd.axis.n_values, cd.pts[pool], &cd.best[pool],
                               &err) != PM_OK)
            rc = err.status == PM_ERR_INVALID_ARG ? usage_pm_error("--codesign", &err)
                                                  : config_error(&err);
    }
    /* The pools' warnings along the axis, then (answered) each pool's best where its chip
     * cannot be built or took bandwidth for free. */
    dg_sink err_sink = {DG_TO_STDERR, stderr, 0};
    dg_warnings(ps, ds, &o->w, &cd, rc == 0, &err_sink);
    if (rc == 0 && o->format == FMT_CSV) {
        dg_header(stdout, o, ps, ds, &cd);
        cd_csv(stdout, &cd);
    } else if (rc == 0 && o->format == FMT_JSON) {
        cd_json(&cd, ps, ds, &o->w);
    } else if (rc == 0) {
        cd_table(&cd);
    }
    for (int pool = 0; pool < PM_DISAGG_POOL_COUNT; pool++)
        free(cd.pts[pool]);
    pm_axis_release(&cd.axis);
    return rc;
}

/* ---------------------------------------------------------------- the figure */

static int dg_draw(const dg_opts *o, const pm_scenario *ps, const pm_scenario *ds,
                   const dg_point *pt, int n)
{
    out_file csv;
    if (!plot_csv_open(o->plot, &csv))
        return EXIT_CONFIG;
    dg_csv(csv.f, o, ps, ds, pt, n);
    char *path = str_printf("%s", csv.path);
    char *title = str_printf("%s: prefill %s x %d, decode %s x %d; %lld in, %lld out",
                             ps->model.name, ps->accel.name, ps->cluster.devices,
                             ds->accel.name, ds->cluster.devices, (long long)o->w.input_tokens,
                             (long long)o->w.output_tokens);
    char *chips = str_printf("%s x %d", ps->accel.name, ps->cluster.devices);
    char *dchips = str_printf("%s x %d", ds->accel.name, ds->cluster.devices);
    int rc = !path || !title || !chips || !dchips ? out_of_memory() : 0;
    if (rc == 0)
        rc = out_file_commit(&csv);
    else
        out_file_abort(&csv);
    const plot_var vars[] = {{"ttl", title, false}, {"pchip", chips, false},
                             {"dchip", dchips, false}};
    if (rc == 0)
        rc = plot_draw("disagg.gp", path, o->plot, PLOT_PAGE, vars, 3);
    free(path);
    free(title);
    free(chips);
    free(dchips);
    return rc;
}

static int dg_front(dg_opts *o, const pm_scenario *ps, const pm_scenario *ds)
{
    dg_point *pt = calloc(DG_MAX_POINTS, sizeof *pt);
    if (!pt)
        return out_of_memory();
    double conc[DG_MAX_POINTS];
    const int n = dg_points(o, conc);
    int rc = n < 0 ? EXIT_USAGE : 0;
    for (int i = 0; i < n; i++)
        pt[i].conc = conc[i];
    if (rc == 0)
        rc = dg_compute(o, ps, ds, pt, n);
    if (rc == 0 && o->plot)
        rc = dg_draw(o, ps, ds, pt, n);
    else if (rc == 0 && o->format == FMT_CSV)
        dg_csv(stdout, o, ps, ds, pt, n);
    else if (rc == 0 && o->format == FMT_JSON)
        dg_json(o, ps, ds, pt, n);
    else if (rc == 0)
        dg_table(o, ps, ds, pt, n);
    free(pt);
    return rc;
}

int cmd_disagg(int argc, char **argv)
{
    static dg_opts o;
    int rc = dg_parse(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    static pm_scenario ps, ds;
    if ((rc = dg_load(&o, o.pcfg, o.psets, o.np, "--prefill-set", &ps)) != 0)
        return rc;
    if ((rc = dg_load(&o, o.dcfg, o.dsets, o.nd, "--decode-set", &ds)) != 0) {
        pm_scenario_release(&ps);
        return rc;
    }
    pm_disagg_workload_defaults(&ps, &o.w);
    if (o.codesign && o.plot)
        rc = usage_error("--plot: draws the front (not with --codesign)");
    else if (o.codesign && o.conc && strchr(o.conc, ','))
        rc = usage_error("--codesign: at one decode concurrency (got '%s')", o.conc);
    else if (o.codesign) {
        double c[1];
        if (o.conc && dg_points(&o, c) == 1)
            o.w.decode_concurrency = c[0];
        rc = dg_run_codesign(&o, &ps, &ds);
    } else {
        dg_sink err_sink = {DG_TO_STDERR, stderr, 0};
        dg_warnings(&ps, &ds, &o.w, NULL, false, &err_sink);
        rc = dg_front(&o, &ps, &ds);
    }
    if (rc == 0 && ferror(stdout))
        stdout_failed(errno);
    pm_scenario_release(&ps);
    pm_scenario_release(&ds);
    return rc;
}
