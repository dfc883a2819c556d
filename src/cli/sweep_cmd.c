/*
 * sweep_cmd.c - the design-space commands of the tool: --sweep (CSV or JSON streamed from the
 * library's sweep engine, a figure with --plot, one slice with --shard K/N). merge.c joins the
 * shards; optimize.c searches one axis.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "fmt.h"
#include "merge.h"
#include "output.h"
#include "plot.h"

/* The result columns are the library's (pm_sweep_column_name, pm_sweep_point_values): one
 * home for the sweep's columns, which the Python module reads too. */
#define MAX_SWEEP_COLS 64 /* room for pm_sweep_column_count() (checked before a sweep) */

static void point_values(const pm_sweep_point *p, double *v)
{
    pm_sweep_point_values(p, v, MAX_SWEEP_COLS);
}

/* Whether an axis steps by a constant factor (STEP xF, or a list such as 1,4,16,64): drawn on a
 * log axis. */
static bool is_geometric(const pm_axis *a)
{
    if (a->n_values < 3 || !(a->values[0] > 0))
        return false;
    const double r = a->values[1] / a->values[0];
    const double d = a->values[1] - a->values[0];
    bool same_ratio = true, same_step = true;
    for (size_t i = 2; i < a->n_values; i++) {
        same_ratio = same_ratio && fabs(a->values[i] / a->values[i - 1] - r) <= 1e-9 * r;
        same_step = same_step && fabs(a->values[i] - a->values[i - 1] - d) <= 1e-9 * fabs(d);
    }
    return same_ratio && !same_step;
}

/* The scenario's own value of the axis (pm_scenario_axis_value, in the unit of its column) and
 * its label, for the marker of a 1-D figure. */
static bool base_value(const pm_scenario *s, pm_axis_kind k, double *v, char *label, size_t n)
{
    const char *who = s->accel.name, *what, *unit;
    if (!pm_scenario_axis_value(s, k, v))
        return false;
    *v = pm_axis_display_value(k, *v);
    char peak[32];
    switch (k) {
    case PM_AXIS_L2: what = "L2", unit = "MiB"; break;
    case PM_AXIS_L2_BW: what = "L2", unit = "TB/s"; break;
    case PM_AXIS_COMPUTE:
        snprintf(peak, sizeof peak, "%s peak", pm_dtype_name(pm_compute_dtype(&s->workload)));
        what = peak, unit = pm_compute_dtype(&s->workload) == PM_DTYPE_INT8 ? "TOPS" : "TFLOP/s";
        break;
    case PM_AXIS_HBM_BW: what = "HBM", unit = "TB/s"; break;
    case PM_AXIS_LINK_BW: who = s->cluster.name, what = "link", unit = "GB/s"; break;
    case PM_AXIS_DEVICES: who = "scenario", what = "", unit = "devices"; break;
    case PM_AXIS_BATCH: who = "scenario", what = "batch", unit = ""; break;
    case PM_AXIS_SEQ: who = "scenario", what = "", unit = "tokens"; break;
    case PM_AXIS_EP: who = "scenario", what = "", unit = "expert-parallel ranks"; break;
    default: return false;
    }
    snprintf(label, n, "%s%s%s: %g%s%s", who, what[0] ? " " : "", what, *v, unit[0] ? " " : "",
             unit);
    return true;
}

/* "model, accelerator x devices, batch B, sequence S", leaving out what the figure sweeps. */
static void scenario_title(const pm_scenario *s, const pm_axis *ax, int n_ax, char *t, size_t n)
{
    bool swept[PM_AXIS_COUNT] = {false};
    for (int i = 0; i < n_ax; i++)
        swept[ax[i].kind] = true;
    int len = snprintf(t, n, "%s, %s", s->model.name, s->accel.name);
    if (!swept[PM_AXIS_DEVICES] && len >= 0 && (size_t)len < n)
        len += snprintf(t + len, n - (size_t)len, " x %d", s->cluster.devices);
    if (!swept[PM_AXIS_BATCH] && len >= 0 && (size_t)len < n)
        len += snprintf(t + len, n - (size_t)len, ", batch %d", s->workload.batch);
    if (!swept[PM_AXIS_SEQ] && len >= 0 && (size_t)len < n)
        len += snprintf(t + len, n - (size_t)len, ", sequence %lld", (long long)s->workload.seq_len);
}

/* Draws the sweep's CSV: a line plot of one axis, a heat map of two. */
static int draw(const cli *c, const pm_scenario *s, const char *csv, const pm_axis *ax, int n_ax)
{
    char title[320], base[64] = "0", base_label[160] = "", every[2][32], count[2][32];
    scenario_title(s, ax, n_ax, title, sizeof title);
    char facts[160];
    scenario_facts(s, facts, sizeof facts);
    if (n_ax == 1) {
        double v;
        if (base_value(s, ax[0].kind, &v, base_label, sizeof base_label))
            snprintf(base, sizeof base, "%.9g", v);
        char xtitle[64];
        axis_title(s, ax[0].kind, xtitle, sizeof xtitle);
        const plot_var vars[] = {{"xcol", pm_axis_column(ax[0].kind), false},
                                 {"xtitle", xtitle, false},
                                 {"ttl", title, false},
                                 {"facts", facts, false},
                                 {"xlog", is_geometric(&ax[0]) ? "1" : "0", true},
                                 {"base", base, true},
                                 {"baselabel", base_label, false},
                                 {"have_cost", s->accel.cost.present ? "1" : "0", true},
                                 {"have_energy", s->accel.energy.present ? "1" : "0", true},
                                 {"have_area", s->accel.area.present ? "1" : "0", true}};
        return plot_draw("sweep.gp", csv, c->plot, PLOT_PAGE, vars, sizeof vars / sizeof vars[0]);
    }
    /* A tick at every grid value up to 12, then at every k-th; the values in the cells up to
     * 12 x 12. */
    char titles[2][64];
    for (int i = 0; i < 2; i++) {
        snprintf(every[i], sizeof every[i], "%zu", (ax[i].n_values + 11) / 12);
        snprintf(count[i], sizeof count[i], "%zu", ax[i].n_values);
        axis_title(s, ax[i].kind, titles[i], sizeof titles[i]);
    }
    const plot_var vars[] = {{"xcol", pm_axis_column(ax[0].kind), false},
                             {"ycol", pm_axis_column(ax[1].kind), false},
                             {"xtitle", titles[0], false},
                             {"ytitle", titles[1], false},
                             {"ttl", title, false},
                             {"facts", facts, false},
                             {"metric", c->metric ? c->metric : "speedup_preserve_vs_serial",
                              false},
                             {"cells", ax[0].n_values <= 12 && ax[1].n_values <= 12 ? "1" : "0",
                              true},
                             {"xevery", every[0], true},
                             {"yevery", every[1], true},
                             {"nx", count[0], true},
                             {"ny", count[1], true}};
    return plot_draw("heatmap.gp", csv, c->plot, PLOT_PAGE, vars, sizeof vars / sizeof vars[0]);
}

/* Text of one block, formatted on the worker that evaluated it (pm_sweep_opts.prepare) and
 * written, in grid order, by the callback. */
typedef struct rows_text {
    sbuf t;
    size_t key;  /* index of the block's first point */
    bool used;
    bool failed; /* out of memory while formatting */
} rows_text;

/* What the callbacks need. */
typedef struct sink {
    const cli *c;
    const pm_axis *ax;
    int n_ax;
    FILE *csv;          /* the --plot CSV, or NULL */
    size_t first;       /* index of the slice's first point */
    size_t done, total;
    bool tty, json;
    pthread_mutex_t mu; /* guards texts[] (not their contents) */
    rows_text *texts;
    size_t n_texts;
    uint64_t rows_digest; /* of the bytes written to stdout (a shard's end line) */
    pm_sweep_tally tally; /* what the rows hold that a figure does not show */
} sink;

/* Appends v as fmt_csv writes it ("%.9g" without printf's cost, byte counts whole) and a
 * comma. */
static bool put_g9(sbuf *t, double v)
{
    char num[FMT_G9_MAX + 1];
    const int n = fmt_csv(v, num);
    num[n] = ',';
    return sbuf_append(t, num, (size_t)n + 1);
}

/* The error column: always quoted, quotes doubled (RFC 4180); a line break becomes ' so that
 * every row stays one line for merge and gnuplot. */
static bool put_error_field(sbuf *t, const char *error)
{
    bool ok = sbuf_append(t, "\"", 1);
    for (const char *q = error; *q && ok; q++)
        ok = *q == '"'                ? sbuf_append(t, "\"\"", 2)
             : *q == '\n' || *q == '\r' ? sbuf_append(t, "'", 1)
                                      : sbuf_append(t, q, 1);
    return ok && sbuf_append(t, "\"", 1);
}

static bool format_rows(const sink *k, const pm_sweep_point *pts, size_t n, sbuf *t)
{
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const pm_sweep_point *p = &pts[i];
        double v[MAX_SWEEP_COLS];
        point_values(p, v);
        if (k->json) {
            ok = sbuf_printf(t, "%s{", p->index != k->first ? ",\n" : "");
            for (int a = 0; a < k->n_ax && ok; a++)
                ok = sbuf_printf(t, "\"%s\": ", pm_axis_column(k->ax[a].kind)) &&
                     sbuf_json_number(t, pm_axis_display_value(k->ax[a].kind,
                                                               p->axis_value[a])) &&
                     sbuf_append(t, ", ", 2);
            for (size_t j = 0; j < pm_sweep_column_count() && ok; j++)
                if (isfinite(v[j]))
                    ok = sbuf_printf(t, "\"%s\": ", pm_sweep_column_name(j)) &&
                         sbuf_json_number(t, v[j]) && sbuf_append(t, ", ", 2);
            ok = ok && sbuf_printf(t, "\"error\": ") && sbuf_json_string(t, p->error) &&
                 sbuf_append(t, "}", 1);
            continue;
        }
        for (int a = 0; a < k->n_ax && ok; a++)
            ok = put_g9(t, pm_axis_display_value(k->ax[a].kind, p->axis_value[a]));
        for (size_t j = 0; j < pm_sweep_column_count() && ok; j++)
            ok = isfinite(v[j]) ? put_g9(t, v[j]) : sbuf_append(t, "NaN,", 4);
        if (ok && p->status != PM_OK)
            ok = put_error_field(t, p->error);
        ok = ok && sbuf_append(t, "\n", 1);
    }
    return ok;
}

/* On a worker: formats the block into a free text, keyed by its first point. */
static int prepare_rows(const pm_sweep_point *pts, size_t n, void *user)
{
    sink *k = user;
    pthread_mutex_lock(&k->mu);
    size_t i = 0;
    while (i < k->n_texts && k->texts[i].used)
        i++;
    if (i == k->n_texts) {
        rows_text *nt = realloc(k->texts, (k->n_texts + 1) * sizeof *nt);
        if (!nt) {
            pthread_mutex_unlock(&k->mu);
            return 1;
        }
        k->texts = nt;
        k->texts[k->n_texts++] = (rows_text){0};
    }
    k->texts[i].used = true;
    k->texts[i].key = pts[0].index;
    k->texts[i].t.len = 0;
    /* Formats outside the lock, into a copy: texts[] may move when another worker grows it. */
    rows_text local = k->texts[i];
    pthread_mutex_unlock(&k->mu);
    local.failed = !format_rows(k, pts, n, &local.t);
    pthread_mutex_lock(&k->mu);
    k->texts[i] = local;
    pthread_mutex_unlock(&k->mu);
    return 0;
}

/* In grid order: writes the block's text. */
static int on_points(const pm_sweep_point *pts, size_t n, void *user)
{
    sink *k = user;
    pthread_mutex_lock(&k->mu);
    size_t i = 0;
    while (i < k->n_texts && !(k->texts[i].used && k->texts[i].key == pts[0].index))
        i++;
    rows_text t = i < k->n_texts ? k->texts[i] : (rows_text){0};
    pthread_mutex_unlock(&k->mu);
    int rc = 0;
    if (i == k->n_texts || t.failed) {
        fprintf(stderr, "%s: out of memory formatting the sweep\n", prog);
        rc = 1;
    } else if (!k->csv && fwrite(t.t.buf, 1, t.t.len, stdout) != t.t.len) {
        stdout_failed(errno); /* finish_output says that stdout could not be written */
        rc = 1;
    } else if (k->csv && k->n_ax == 2) {
        /* Two blank lines after each value of the first axis: gnuplot's data blocks, so
         * heatmap.gp finds a point's grid position in its block index and point index (the
         * rows are CSV, one line each: --plot refuses JSON). */
        const char *q = t.t.buf, *end = t.t.buf + t.t.len;
        for (size_t j = 0; j < n && q < end; j++) {
            const char *eol = memchr(q, '\n', (size_t)(end - q));
            const size_t len = eol ? (size_t)(eol - q) + 1 : (size_t)(end - q);
            fwrite(q, 1, len, k->csv);
            q += len;
            if ((pts[j].index + 1) % k->ax[1].n_values == 0)
                fputs("\n\n", k->csv);
        }
    } else if (k->csv) {
        fwrite(t.t.buf, 1, t.t.len, k->csv);
    }
    if (rc == 0 && k->c->shard) /* only a shard records it: FNV-1a costs a byte at a time */
        k->rows_digest = fnv1a64(k->rows_digest, t.t.buf, t.t.len);
    if (i < k->n_texts) {
        pthread_mutex_lock(&k->mu);
        k->texts[i].used = false;
        pthread_mutex_unlock(&k->mu);
    }
    pm_sweep_tally_add(&k->tally, pts, n);
    k->done += n;
    if (k->tty && rc == 0)
        fprintf(stderr, "\r%s: %zu/%zu points", prog, k->done, k->total);
    return rc;
}

static void header(const cli *c, const pm_scenario *s, const pm_axis *ax, int n_ax, FILE *f)
{
    fprintf(f, "# preserve-model %s --config ", pm_version());
    fput_comment_text(f, c->config);
    for (int i = 0; i < c->n_sweeps; i++) {
        fputs(" --sweep ", f);
        fput_comment_text(f, c->sweeps[i]);
    }
    fprintf(f, "\n");
    print_sets(f, c);
    print_resolved(f, c, s);
    pm_area area;
    if (pm_area_compute(&s->accel, &area, NULL) != PM_OK) {
        fputs("# note: accelerator ", f);
        fput_comment_text(f, s->accel.name);
        fputs(" has no area coefficients: die_mm2 and densities are NaN\n", f);
    }
    if (!s->accel.energy.present) {
        fputs("# note: accelerator ", f);
        fput_comment_text(f, s->accel.name);
        fputs(" has no energy coefficients: the J_per_token, avg_power_W and tokens_per_J "
              "columns are NaN\n", f);
    }
    if (!s->accel.cost.present) {
        fputs("# note: accelerator ", f);
        fput_comment_text(f, s->accel.name);
        fputs(" has no cost coefficients: device_usd and tokens_per_s_per_usd are NaN\n", f);
    }
    /* The sweep's warnings (a die over the reticle, a context beyond the trained one...), which
     * stderr says too: a CSV read later still says them. */
    char note[512];
    for (size_t i = 0; pm_sweep_warning(s, ax, (size_t)n_ax, i, note, sizeof note); i++) {
        fputs("# warning: ", f);
        fput_comment_text(f, note);
        fputc('\n', f);
    }
    for (int a = 0; a < n_ax; a++)
        fprintf(f, "%s,", pm_axis_column(ax[a].kind));
    for (size_t i = 0; i < pm_sweep_column_count(); i++)
        fprintf(f, "%s,", pm_sweep_column_name(i));
    fprintf(f, "error\n");
}

static void release_axes(pm_axis *ax)
{
    for (int i = 0; i < PM_SWEEP_MAX_AXES; i++)
        pm_axis_release(&ax[i]);
}

/* The rules of --plot and --shard with --sweep; 0 or EXIT_USAGE, with the shard K/N (1/1 when
 * there is none). */
static int check_options(const cli *c, size_t *shard_k, size_t *shard_n)
{
    if (c->plot && !plot_terminal(c->plot, PLOT_PAGE))
        return plot_usage_error(c->plot);
    *shard_k = *shard_n = 1;
    if (c->shard) {
        if (!parse_shard(c->shard, shard_k, shard_n))
            return usage_error("--shard: expected K/N in decimal with 1 <= K <= N <= %d (got "
                               "'%s')",
                               SHARD_MAX, c->shard);
        if (c->format != FMT_CSV)
            return usage_error("--shard: shards are CSV (merge them with '%s merge')", prog);
        if (c->plot)
            return usage_error("--shard: draw the merged CSV, not a shard (no --plot)");
    }
    if (c->plot && c->format != FMT_CSV)
        return usage_error("--plot: the figure is drawn from CSV (no --format json)");
    if (c->plot && c->n_sweeps > 2)
        return usage_error("--plot: a figure shows one or two axes (got %d --sweep)", c->n_sweeps);
    if (c->metric && (!c->plot || c->n_sweeps != 2))
        return usage_error("--metric: it colours the cells of a two-axis --plot (got %d --sweep%s)",
                           c->n_sweeps, c->plot ? "" : ", no --plot");
    if (c->metric) {
        bool known = false;
        for (size_t i = 0; !known && i < pm_sweep_column_count(); i++)
            known = strcmp(c->metric, pm_sweep_column_name(i)) == 0;
        if (!known) {
            const char *names[64];
            const size_t n = pm_sweep_column_count() < 64 ? pm_sweep_column_count() : 64;
            for (size_t i = 0; i < n; i++)
                names[i] = pm_sweep_column_name(i);
            const char *near = pm_suggest(c->metric, names, n);
            return usage_error("--metric: \"%s\" is not a result column of the sweep (%s%s%sthe "
                               "columns are in docs/output-format.md)",
                               c->metric, near ? "did you mean \"" : "", near ? near : "",
                               near ? "\"? " : "");
        }
    }
    return 0;
}

/* The axes of --sweep, each different; 0 or EXIT_USAGE (ax released). */
static int parse_axes(const cli *c, pm_axis *ax)
{
    memset(ax, 0, PM_SWEEP_MAX_AXES * sizeof *ax);
    for (int i = 0; i < c->n_sweeps; i++) {
        pm_error err;
        if (pm_axis_parse(c->sweeps[i], PM_AXIS_MAX_POINTS, &ax[i], &err) != PM_OK) {
            release_axes(ax);
            if (strcmp(err.file, PM_ERROR_FILE_AXIS) == 0) /* the option that gave it */
                snprintf(err.file, sizeof err.file, "--sweep");
            return usage_pm_error(NULL, &err);
        }
        for (int j = 0; j < i; j++)
            if (ax[j].kind == ax[i].kind) {
                release_axes(ax);
                return usage_error("--sweep: the axes must differ (%s twice)",
                                   pm_axis_name(ax[i].kind));
            }
    }
    return 0;
}

/* What a shard records of the sweep it is a slice of: the digest of the resolved inputs
 * (scenario_digest) and of the grid (each axis's kind and values), so that merge refuses shards
 * of different sweeps whatever their command lines say. */
static uint64_t inputs_digest(const pm_scenario *s, const pm_axis *ax, int n_ax)
{
    uint64_t h = scenario_digest(s);
    for (int a = 0; a < n_ax; a++) {
        const int kind = (int)ax[a].kind;
        const uint64_t n = ax[a].n_values;
        h = fnv1a64(h, &kind, sizeof kind);
        h = fnv1a64(h, &n, sizeof n);
        h = fnv1a64(h, ax[a].values, ax[a].n_values * sizeof ax[a].values[0]);
    }
    return h;
}

/* Streams the slice shard_k/shard_n of the sweep to stdout, or to csv (the --plot figure's)
 * when not NULL; the exit status. */
static int run_sweep(const cli *c, const pm_scenario *s, const pm_axis *ax, size_t shard_k,
                     size_t shard_n, FILE *csv, pm_sweep_tally *tally)
{
    sink k = {.c = c, .ax = ax, .n_ax = c->n_sweeps, .csv = csv, .tty = isatty(fileno(stderr)),
              .json = c->format == FMT_JSON};
    const size_t total = pm_sweep_size(ax, (size_t)c->n_sweeps);
    size_t first, last;
    pm_sweep_slice(total, shard_k - 1, shard_n, &first, &last);
    k.total = last - first;
    if (k.json) {
        printf("{\"tool\": \"preserve-model %s\", \"warnings\": [", pm_version());
        char note[512];
        for (size_t i = 0; pm_sweep_warning(s, ax, (size_t)c->n_sweeps, i, note, sizeof note);
             i++) {
            printf("%s", i ? ", " : "");
            fput_json_string(stdout, note);
        }
        printf("], \"points\": [\n");
    } else if (!csv) { /* with --plot the rows go to the figure's CSV only */
        header(c, s, ax, c->n_sweeps, stdout);
        if (c->shard)
            printf("# shard %zu/%zu: rows %zu to %zu of %zu; inputs fnv1a64 %016" PRIx64 "\n",
                   shard_k, shard_n, first + 1, last, total, inputs_digest(s, ax, c->n_sweeps));
    }
    k.first = first;
    k.rows_digest = FNV1A64_INIT;
    pthread_mutex_init(&k.mu, NULL);
    pm_sweep_opts o = {.threads = c->threads, .shard_index = shard_k - 1,
                       .shard_count = shard_n, .prepare = prepare_rows};
    pm_error err;
    pm_status st = pm_sweep_run(s, ax, (size_t)c->n_sweeps, &o, on_points, &k, &err);
    for (size_t i = 0; i < k.n_texts; i++)
        sbuf_free(&k.texts[i].t);
    free(k.texts);
    pthread_mutex_destroy(&k.mu);
    if (k.tty)
        fprintf(stderr, "\n");
    /* The error and fits_hbm columns say it row by row; a figure does not. */
    char note[512];
    for (size_t i = 0; st == PM_OK && pm_sweep_tally_warning(&k.tally, ax, (size_t)k.n_ax, i,
                                                             note, sizeof note);
         i++)
        fprintf(stderr, "warning: %s\n", note);
    *tally = k.tally;
    if (k.json)
        printf("\n]}\n");
    else if (c->shard && st == PM_OK)
        printf("# shard %zu/%zu end: %zu rows, fnv1a64 %016" PRIx64 "\n", shard_k, shard_n,
               last - first, k.rows_digest);
    return st == PM_OK ? 0 : st == PM_ERR_NOMEM ? config_error(&err) : EXIT_CONFIG;
}

/* The most points one run evaluates (a shard's slice of a larger grid): at some 50,000
 * instructions a point, about half an hour on two cores; a larger grid is cut with --shard. */
#define SWEEP_MAX_RUN_POINTS 100000000.0

/* Refuses a grid whose slice exceeds SWEEP_MAX_RUN_POINTS, or whose size exceeds what a count
 * holds, saying how many shards it needs; 0 or EXIT_USAGE. */
static int check_grid_size(const cli *c, const pm_axis *ax, size_t shard_n)
{
    double total = 1.0;
    for (int a = 0; a < c->n_sweeps; a++)
        total *= (double)ax[a].n_values;
    if (total >= 9.2e18)
        return usage_error("--sweep: the grid has %.4g points, more than any run or set of "
                           "shards can count: use fewer values per axis",
                           total);
    if (total / (double)shard_n > SWEEP_MAX_RUN_POINTS)
        return usage_error("--sweep: the grid has %.0f points%s; one run evaluates at most %.0f: "
                           "cut it with --shard K/N for N >= %.0f (and join the CSVs with "
                           "merge), or use fewer values",
                           total, shard_n > 1 ? ", too many for its shards" : "",
                           SWEEP_MAX_RUN_POINTS, ceil(total / SWEEP_MAX_RUN_POINTS));
    return 0;
}

int cmd_sweep(const cli *c)
{
    if (pm_sweep_column_count() > MAX_SWEEP_COLS) { /* a library newer than this tool */
        fprintf(stderr, "%s: the library has %zu sweep columns, this tool room for %d\n", prog,
                pm_sweep_column_count(), MAX_SWEEP_COLS);
        return EXIT_CONFIG;
    }
    size_t shard_k, shard_n;
    int rc = check_options(c, &shard_k, &shard_n);
    if (rc)
        return rc;
    pm_axis ax[PM_SWEEP_MAX_AXES];
    rc = parse_axes(c, ax);
    if (rc)
        return rc;
    if ((rc = check_grid_size(c, ax, shard_n)) != 0) {
        release_axes(ax);
        return rc;
    }
    pm_scenario s;
    rc = load_quiet(c, &s); /* the sweep's warnings replace the scenario's */
    if (rc) {
        release_axes(ax);
        return rc;
    }
    /* A bare axis's default range fitted to the scenario (its cluster's size, its own value). */
    for (int i = 0; i < c->n_sweeps; i++) {
        pm_error err;
        if (pm_axis_fit_scenario(&s, &ax[i], &err) != PM_OK) {
            pm_scenario_release(&s);
            release_axes(ax);
            return config_error(&err);
        }
    }
    char note[512];
    for (size_t i = 0; pm_sweep_warning(&s, ax, (size_t)c->n_sweeps, i, note, sizeof note); i++)
        fprintf(stderr, "warning: %s\n", note);
    /* With --plot the CSV goes to a file beside the figure (FILE.csv), not to stdout: the
     * figure is the output, as with serve and timeline. */
    out_file csv = {0};
    if (c->plot) {
        if (!plot_csv_open(c->plot, &csv)) {
            pm_scenario_release(&s);
            release_axes(ax);
            return EXIT_CONFIG;
        }
        header(c, &s, ax, c->n_sweeps, csv.f);
    }
    pm_sweep_tally tally;
    rc = run_sweep(c, &s, ax, shard_k, shard_n, csv.f, &tally);
    if (c->plot) {
        /* The CSV is kept only whole, and the figure drawn only from a whole CSV of a sweep
         * whose stdout was written. */
        if (rc == 0 && fflush(stdout) != 0)
            rc = EXIT_CONFIG;
        char *path = rc == 0 ? str_printf("%s", csv.path) : NULL;
        if (rc == 0 && !path)
            rc = out_of_memory();
        if (rc == 0)
            rc = out_file_commit(&csv);
        else
            out_file_abort(&csv);
        /* A figure of no valid point would be empty axes (gnuplot fails on them). */
        if (rc == 0 && tally.invalid == tally.points) {
            fprintf(stderr, "%s: --plot: none of the sweep's %zu points is valid (the warning "
                    "above), nothing to draw; the CSV is in %s\n", prog, tally.points, path);
            rc = EXIT_CONFIG;
        }
        if (rc == 0)
            rc = draw(c, &s, path, ax, c->n_sweeps);
        free(path);
    }
    pm_scenario_release(&s);
    release_axes(ax);
    return rc;
}
