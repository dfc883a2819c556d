/*
 * common.c - what every command of the tool shares: error reporting (usage errors exit 2,
 * model and config errors 1 with the library's message), the parsing of numeric option values
 * and overrides, and loading the scenario the options describe.
 *
 * May call: output.c (the program name, comment-safe text), the public API.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"

/* cli_init zeroes what comes before owned: nothing may follow it (but the struct's padding). */
_Static_assert(sizeof(cli) - offsetof(cli, owned) - sizeof(((cli *)0)->owned) < _Alignof(cli),
               "cli: owned must be the last member");

void cli_init(cli *c)
{
    memset(c, 0, offsetof(cli, owned)); /* owned is written before it is read */
    c->config = "llama70b";
    c->context = -1;
    c->layers = 2;
    c->mode = PM_MODE_PRESERVE;
    c->rule = PM_SERVE_DECODE_FIRST;
}

int usage_error(const char *fmt_, ...)
{
    fprintf(stderr, "%s: ", prog);
    va_list ap;
    va_start(ap, fmt_);
    vfprintf(stderr, fmt_, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", prog);
    return EXIT_USAGE;
}

/* file_in_cli_words with the option that gave the overrides (set_opt: "--set",
 * "--prefill-set", ...). */
static const char *file_in_words_of(const char *file, const char *set_opt, char *buf, size_t n)
{
    const size_t k = sizeof PM_ERROR_FILE_OVERRIDE - 1;
    if (!file || strncmp(file, PM_ERROR_FILE_OVERRIDE, k) != 0 || (file[k] && file[k] != ' '))
        return file;
    snprintf(buf, n, "%s%s", set_opt, file + k);
    return buf;
}

const char *file_in_cli_words(const char *file, char *buf, size_t n)
{
    return file_in_words_of(file, "--set", buf, n);
}

/* The library's hints speak of keys (issue 48: its C and Python users have no options); the
 * tool's name the options that set them. */
static const struct {
    const char *library, *tool;
} hints[] = {
    {"(the override model=FILE)", "(--model FILE, or --set model=FILE)"},
    {"(the override accelerator=FILE)", "(--accelerator FILE, or --set accelerator=FILE)"},
    {"(the override cluster=FILE)", "(--cluster FILE, or --set cluster=FILE)"},
    {"(the override workload=FILE)", "(--set workload=FILE)"},
    {"(the override runtime=FILE)", "(--set runtime=FILE)"},
    {"(the scenario to load, not an override)", "(--config FILE)"},
    {"an override of \"", NULL}, /* the option that gave the overrides, then " of \"" */
};

/* err in the tool's words: its file an option (set_opt, the option that gave the overrides:
 * file_in_words_of), a hint of its message the option's (hints). A scenario loaded with
 * another option's overrides (disagg's --prefill-set) names that option, and its hints that
 * name --model or --set are left in the library's words (they are not that command's). */
static void in_cli_words(const pm_error *err, const char *set_opt, pm_error *out)
{
    *out = *err;
    char buf[sizeof out->file];
    if (file_in_words_of(err->file, set_opt, buf, sizeof buf) == buf)
        snprintf(out->file, sizeof out->file, "%s", buf);
    const bool plain = strcmp(set_opt, "--set") == 0;
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        const char *at = strstr(err->message, hints[i].library);
        if (!at || (hints[i].tool && !plain))
            continue;
        char tool[64];
        snprintf(tool, sizeof tool, "%s%s", hints[i].tool ? hints[i].tool : set_opt,
                 hints[i].tool ? "" : " of \"");
        snprintf(out->message, sizeof out->message, "%.*s%s%s", (int)(at - err->message),
                 err->message, tool, at + strlen(hints[i].library));
        break;
    }
}

/* Prints err's whole text, in the tool's words, after the prefix (a long file path included:
 * never cut). */
static void print_pm_error(const char *prefix, const char *opt, const char *set_opt,
                           const pm_error *library_err)
{
    pm_error e;
    in_cli_words(library_err, set_opt, &e);
    const pm_error *err = &e;
    char small[1200];
    const size_t need = pm_error_format(err, small, sizeof small) + 1;
    char *buf = need > sizeof small ? malloc(need) : small;
    if (buf != small && buf)
        pm_error_format(err, buf, need);
    fprintf(stderr, "%s: %s%s%s%s\n", prog, prefix, opt ? opt : "", opt ? ": " : "",
            buf ? buf : small);
    if (buf != small)
        free(buf);
}

int config_error(const pm_error *err)
{
    return config_error_of(err, "--set");
}

int config_error_of(const pm_error *err, const char *set_opt)
{
    print_pm_error("error: ", NULL, set_opt, err);
    return EXIT_CONFIG;
}

int usage_pm_error(const char *opt, const pm_error *err)
{
    print_pm_error("", opt, "--set", err);
    return EXIT_USAGE;
}

bool parse_unit_quantity(const char *opt, const char *text, pm_dimension dim, double *out)
{
    pm_error err;
    if (pm_quantity_parse(text, dim, out, &err) != PM_OK) {
        usage_pm_error(opt, &err);
        return false;
    }
    char *end;
    (void)strtod(text, &end);
    while (*end == ' ')
        end++;
    if (*end == '\0' && fabs(*out) > 0.0) {
        usage_error("%s: give the unit, e.g. %s (a bare number would be %s; got '%s')", opt,
                    dim == PM_DIM_TIME ? "50ms or 2s" : "25GBps or 400Gbps",
                    dim == PM_DIM_TIME ? "seconds" : "bytes/s", text);
        return false;
    }
    return true;
}

/* Whether text starts as a decimal number does: a digit, or a point and a digit (no sign,
 * space, hexadecimal "0x", "inf" or "nan", which strtod would all take). */
static bool starts_decimal(const char *text)
{
    const char *d = text[0] == '.' ? text + 1 : text;
    if (!isdigit((unsigned char)d[0]))
        return false;
    return !(d[0] == '0' && (d[1] == 'x' || d[1] == 'X'));
}

/* parse_count and parse_tokens: the multipliers of pm_quantity_parse, or of
 * pm_token_count_parse (k = 1024) when tokens. */
static bool parse_integer(const char *opt, const char *text, double lo, double hi, bool tokens,
                          int64_t *out)
{
    double v;
    pm_error err;
    if (!starts_decimal(text)) {
        fprintf(stderr, "%s: %s: expected a decimal integer in [%.0f, %.0f] (got '%s')\n", prog,
                opt, lo, hi, text);
        return false;
    }
    if ((tokens ? pm_token_count_parse(text, &v, &err)
                : pm_quantity_parse(text, PM_DIM_NONE, &v, &err)) != PM_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, opt, err.message);
        return false;
    }
    if (!(v >= lo && v <= hi) || fabs(v - floor(v)) > 0.0) {
        fprintf(stderr, "%s: %s: expected an integer in [%.0f, %.0f] (got '%s')\n", prog, opt, lo,
                hi, text);
        return false;
    }
    *out = (int64_t)v;
    return true;
}

bool parse_count(const char *opt, const char *text, double lo, double hi, int64_t *out)
{
    return parse_integer(opt, text, lo, hi, false, out);
}

bool parse_tokens(const char *opt, const char *text, double lo, double hi, int64_t *out)
{
    return parse_integer(opt, text, lo, hi, true, out);
}

/* A whole decimal number without sign or space, at most max; false when it is not one. */
static bool parse_decimal(const char *text, const char **end, unsigned long long max,
                          unsigned long long *out)
{
    unsigned long long v = 0;
    const char *p = text;
    for (; isdigit((unsigned char)*p); p++) {
        const unsigned d = (unsigned)(*p - '0');
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *end = p;
    *out = v;
    return p != text;
}

bool parse_shard(const char *text, size_t *k, size_t *n)
{
    const char *end;
    unsigned long long kk, nn;
    if (!parse_decimal(text, &end, SHARD_MAX, &kk) || *end != '/' ||
        !parse_decimal(end + 1, &end, SHARD_MAX, &nn) || *end || kk < 1 || kk > nn)
        return false;
    *k = (size_t)kk;
    *n = (size_t)nn;
    return true;
}

bool add_set(cli *c, const char *key, const char *value, int64_t n)
{
    if (c->n_sets >= MAX_SETS) {
        fprintf(stderr, "%s: too many overrides (at most %d)\n", prog, MAX_SETS);
        return false;
    }
    char *dst = c->owned[c->n_sets];
    int len;
    if (!key)
        len = snprintf(dst, sizeof c->owned[0], "%s", value);
    else if (value)
        len = snprintf(dst, sizeof c->owned[0], "%s=%s", key, value);
    else
        len = snprintf(dst, sizeof c->owned[0], "%s=%lld", key, (long long)n);
    if (len < 0 || (size_t)len >= sizeof c->owned[0]) {
        fprintf(stderr, "%s: an override is longer than %zu bytes: '%.40s...'\n", prog,
                sizeof c->owned[0] - 1, dst);
        return false;
    }
    c->sets[c->n_sets] = dst;
    c->n_sets++;
    return true;
}

void print_sets(FILE *f, const cli *c)
{
    for (size_t i = 0; i < c->n_sets; i++) {
        fputs("# --set ", f);
        fput_comment_text(f, c->sets[i]);
        fputc('\n', f);
    }
}

void print_sets_model_on(FILE *f, const cli *c, const pm_scenario *s)
{
    print_sets(f, c);
    fputs("# ", f);
    fput_comment_text(f, s->model.name);
    fputs(" on ", f);
    fput_comment_text(f, s->accel.name);
}

pm_load_opts load_opts(const cli *c)
{
    pm_load_opts o = {c->data_dir, c->sets, c->n_sets};
    return o;
}

/* The load's error, and where the --spec-* options drafted with nothing (no --spec-draft or
 * --spec-mtp, and no method in the scenario), which of them names the drafter. */
static int load_error(const cli *c, const pm_error *err)
{
    const int rc = config_error(err);
    if (c->spec_drafting && strcmp(err->path, "$.speculative.method") == 0)
        fprintf(stderr, "%s: the drafter is named by --spec-draft MODEL or --spec-mtp N\n", prog);
    return rc;
}

int load_quiet(const cli *c, pm_scenario *s)
{
    pm_load_opts o = load_opts(c);
    pm_error err;
    return pm_scenario_load(c->config, &o, s, &err) == PM_OK ? 0 : load_error(c, &err);
}

int load(const cli *c, pm_scenario *s)
{
    const pm_load_opts o = load_opts(c);
    return load_with(c, &o, s);
}

int load_with(const cli *c, const pm_load_opts *o, pm_scenario *s)
{
    pm_error err;
    const int rc = pm_scenario_load(c->config, o, s, &err) == PM_OK ? 0 : load_error(c, &err);
    if (rc)
        return rc;
    /* What the estimate may not be of what the user meant (the library's list, which the Python
     * module warns with too): computed either way, but not silently. */
    char note[512];
    for (size_t i = 0; pm_scenario_warning(s, i, note, sizeof note); i++)
        fprintf(stderr, "warning: %s\n", note);
    return 0;
}

void scenario_facts(const pm_scenario *s, char *t, size_t n)
{
    const pm_workload *w = &s->workload;
    int len = snprintf(t, n, "W %s, KV %s, A %s", pm_dtype_name(w->weight_dtype),
                       pm_dtype_name(w->kv_dtype), pm_dtype_name(w->act_dtype));
    const int ep = pm_cluster_ep(&s->cluster);
    if (ep > 1 && s->model.experts >= 1 && len >= 0 && (size_t)len < n)
        len += snprintf(t + len, n - (size_t)len, "; EP %d", ep);
    if (len >= 0 && (size_t)len < n)
        len += snprintf(t + len, n - (size_t)len, "; consumers %s",
                        pm_prefetch_consumer_name(s->accel.prefetch_consumer));
    if (s->runtime.present && len >= 0 && (size_t)len < n)
        snprintf(t + len, n - (size_t)len, "; runtime %s", s->runtime.name);
}

void warn_estimate(const pm_scenario *s, const pm_estimate *e)
{
    char note[512];
    for (size_t i = 0; pm_estimate_warning(s, e, i, note, sizeof note); i++)
        fprintf(stderr, "warning: %s\n", note);
}

int64_t context_of(const cli *c, const pm_scenario *s)
{
    if (c->context >= 0)
        return c->context;
    return pm_default_context(&s->workload, c->phase);
}

int load_step(const cli *c, bool warn, pm_scenario *s, int64_t *context)
{
    int rc = warn ? load(c, s) : load_quiet(c, s);
    if (rc)
        return rc;
    *context = context_of(c, s);
    /* A step whose KV cache outgrows the HBM is drawn all the same, and said. */
    char note[512];
    for (size_t i = 0; warn && pm_context_warning(s, *context, i, note, sizeof note); i++)
        fprintf(stderr, "warning: %s\n", note);
    return 0;
}

int view_open(const cli *c, pm_mode mode, int layers, bool warn, view *v)
{
    memset(v, 0, sizeof *v);
    int rc = load_step(c, warn, &v->s, &v->context);
    if (rc)
        return rc;
    v->layers = layers < v->s.model.layers ? layers : v->s.model.layers;
    v->g = pm_graph_alloc();
    pm_error err;
    if (!v->g)
        rc = out_of_memory();
    else if (pm_graph_build_stage(&v->s, mode, c->phase, v->context, c->stage, v->layers, v->g,
                                  &err) != PM_OK)
        rc = config_error(&err);
    if (rc)
        view_close(v);
    return rc;
}

void view_close(view *v)
{
    pm_graph_free(v->g);
    v->g = NULL;
    pm_scenario_release(&v->s);
}

/* The axes' titles in a figure, with their units (those of pm_axis_column). */
static const char *const axis_titles[PM_AXIS_COUNT] = {
    [PM_AXIS_L2] = "L2 capacity (MiB)",
    [PM_AXIS_L2_BW] = "L2 bandwidth (TB/s)",
    [PM_AXIS_COMPUTE] = "peak compute (10^12 op/s)", /* axis_title names the datatype */
    [PM_AXIS_HBM_BW] = "HBM bandwidth (TB/s)",
    [PM_AXIS_LINK_BW] = "link bandwidth per direction (GB/s)",
    [PM_AXIS_DEVICES] = "devices (tensor parallel)",
    [PM_AXIS_BATCH] = "batch (sequences)",
    [PM_AXIS_SEQ] = "sequence length (tokens)",
    [PM_AXIS_EP] = "expert-parallel ranks",
    [PM_AXIS_PP] = "pipeline stages",
    [PM_AXIS_DP] = "data-parallel replicas",
    [PM_AXIS_SP] = "sequence parallelism (0 off, 1 on)",
    [PM_AXIS_SPLIT] = "layers on the last pipeline stage",
};

/* An axis's title with its unit; the compute axis names the datatype whose peak it scales (an
 * int8 peak is in TOPS, a floating-point one in TFLOP/s; the column is 10^12 operations/s). */
void axis_title(const pm_scenario *s, pm_axis_kind k, char *t, size_t n)
{
    const pm_dtype d = pm_compute_dtype(&s->workload);
    if (k == PM_AXIS_COMPUTE)
        snprintf(t, n, "peak %s compute (%s)", pm_dtype_name(d),
                 d == PM_DTYPE_INT8 ? "TOPS" : "TFLOP/s");
    else
        snprintf(t, n, "%s", axis_titles[k]);
}

/* --lengths IN:OUT:SHARE,... into w's classes; 0 or EXIT_USAGE said on stderr. */
int parse_length_classes(const char *list, pm_serve_workload *w)
{
    w->n_classes = 0;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[96];
        if (w->n_classes == PM_MAX_LENGTH_CLASSES)
            return usage_error("--lengths: at most %d classes", PM_MAX_LENGTH_CLASSES);
        if (len == 0 || len >= sizeof item)
            return usage_error("--lengths: expected IN:OUT:SHARE classes separated by commas "
                               "(got '%s')",
                               list);
        memcpy(item, p, len);
        item[len] = '\0';
        char *c1 = strchr(item, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c1 || !c2 || strchr(c2 + 1, ':'))
            return usage_error("--lengths: '%s' is not IN:OUT:SHARE (e.g. 4000:100:0.25)", item);
        *c1 = *c2 = '\0';
        pm_length_class *k = &w->classes[w->n_classes];
        int64_t in, out;
        if (!parse_tokens("--lengths", item, 1, 1099511627776.0, &in) ||
            !parse_tokens("--lengths", c1 + 1, 1, 1099511627776.0, &out))
            return EXIT_USAGE;
        char *end;
        errno = 0;
        const double share = strtod(c2 + 1, &end);
        if (end == c2 + 1 || *end != '\0' || errno || !(share > 0 && share <= 1e12))
            return usage_error("--lengths: a class's share must be a number > 0 (got '%s')",
                               c2 + 1);
        *k = (pm_length_class){in, out, share};
        w->n_classes++;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

int parse_list(const char *opt, const char *list, const char *what, int max,
               bool (*item)(const char *opt, const char *text, void *ctx, double *out), void *ctx,
               double *out)
{
    int n = 0;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char text[64];
        if (len == 0 || len >= sizeof text) {
            usage_error("%s: expected %s separated by commas (got '%s')", opt, what, list);
            return -1;
        }
        if (n == max) {
            usage_error("%s: at most %d values", opt, max);
            return -1;
        }
        memcpy(text, p, len);
        text[len] = '\0';
        if (!item(opt, text, ctx, &out[n]))
            return -1;
        n++;
        if (!comma)
            return n;
        p = comma + 1;
    }
}

/* parse_list's item of parse_counts: a count in ctx's [lo, hi]. */
static bool count_item(const char *opt, const char *text, void *ctx, double *out)
{
    const double *range = ctx;
    int64_t v;
    if (!parse_count(opt, text, range[0], range[1], &v))
        return false;
    *out = (double)v;
    return true;
}

int parse_counts(const char *opt, const char *list, double lo, double hi, int max, double *out)
{
    double range[2] = {lo, hi};
    return parse_list(opt, list, "counts", max, count_item, range, out);
}

/* "prompts of 2048 tokens, 512 out", or a distribution's classes and means. */
void lengths_words(const pm_serve_workload *w, char *buf, size_t n)
{
    if (w->n_classes == 0) {
        snprintf(buf, n, "prompts of %lld tokens, %lld out", (long long)w->input_tokens,
                 (long long)w->output_tokens);
        return;
    }
    double share = 0.0, in = 0.0, out = 0.0;
    for (int i = 0; i < w->n_classes; i++) {
        share += w->classes[i].share;
        in += w->classes[i].share * (double)w->classes[i].input_tokens;
        out += w->classes[i].share * (double)w->classes[i].output_tokens;
    }
    snprintf(buf, n, "%d length class%s, mean %.0f in, %.0f out", w->n_classes,
             w->n_classes == 1 ? "" : "es", in / share, out / share);
}

/* --lengths NAME or PATH: a lengths file's classes into w; 0 or the error's exit code. */
static int load_length_classes(const cli *c, pm_serve_workload *w)
{
    const pm_load_opts opts = {c->data_dir, NULL, 0};
    pm_lengths l;
    pm_error err;
    if (pm_lengths_load(c->lengths, &opts, &l, &err) != PM_OK)
        return config_error(&err);
    w->n_classes = l.n_classes;
    memcpy(w->classes, l.classes, sizeof l.classes);
    return 0;
}

void served_workload_warn(const pm_scenario *s, const pm_serve_workload *w)
{
    char note[256];
    if (pm_serve_workload_warning(s, w, note, sizeof note))
        fprintf(stderr, "warning: %s\n", note);
}

int served_workload(const cli *c, const pm_workload *wl, int64_t chunk, pm_serve_workload *w)
{
    *w = (pm_serve_workload){pm_workload_prompt_tokens(wl), pm_workload_decode_steps(wl), 1,
                             chunk, c->rule, c->ttft_limit_s, c->tpot_limit_s, c->arrival, 0.0,
                             0, {{0}}};
    if (!c->lengths)
        return 0;
    /* Classes are written IN:OUT:SHARE; anything else names a lengths file. */
    return strchr(c->lengths, ':') ? parse_length_classes(c->lengths, w)
                                   : load_length_classes(c, w);
}
