/*
 * sweep_cmd.c - the design-space commands of the tool: --sweep (CSV or JSON streamed from the
 * library's sweep engine, a figure with --plot, one slice with --shard K/N), `merge` (joins
 * shard outputs into the CSV a single run gives) and --optimize.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fmt.h"

static const char *const sweep_cols[] = {
    "serial_request_s", "fused_request_s", "preserve_request_s", "serial_tpot_s",
    "fused_tpot_s", "preserve_tpot_s", "serial_tokens_per_s", "fused_tokens_per_s",
    "preserve_tokens_per_s", "speedup_preserve_vs_serial", "speedup_preserve_vs_fused",
    "speedup_fused_vs_serial", "die_mm2", "density_serial_tokens_per_s_per_mm2",
    "density_fused_tokens_per_s_per_mm2", "density_preserve_tokens_per_s_per_mm2"};
#define N_SWEEP_COLS (sizeof sweep_cols / sizeof sweep_cols[0])

/* The columns of one point (NaN where the point is invalid or has no area data). */
static void point_values(const pm_sweep_point *p, double *v)
{
    if (p->status != PM_OK) {
        for (size_t i = 0; i < N_SWEEP_COLS; i++)
            v[i] = NAN;
        return;
    }
    const pm_estimate *e = &p->estimate;
    const pm_mode_result *r = e->modes;
    const double vals[N_SWEEP_COLS] = {
        r[0].request_s, r[1].request_s, r[2].request_s, r[0].tpot_s, r[1].tpot_s, r[2].tpot_s,
        r[0].tokens_per_s, r[1].tokens_per_s, r[2].tokens_per_s, e->speedup_preserve_vs_serial,
        e->speedup_preserve_vs_fused, e->speedup_fused_vs_serial, p->die_mm2, p->density[0],
        p->density[1], p->density[2]};
    memcpy(v, vals, sizeof vals);
}

const char *plot_terminal(const char *file, bool wide)
{
    const char *ext = strrchr(file, '.');
    if (!ext || strpbrk(file, "'\"\\$`")) /* the name goes into a shell command */
        return NULL;
    if (strcmp(ext, ".png") == 0)
        return wide ? "pngcairo size 1200,420 font 'Helvetica,11'"
                    : "pngcairo size 1000,800 font 'Helvetica,11'";
    if (strcmp(ext, ".svg") == 0)
        return wide ? "svg size 1200,420" : "svg size 1000,800";
    if (strcmp(ext, ".pdf") == 0)
        return wide ? "pdfcairo size 10in,3.5in" : "pdfcairo size 8in,6.4in";
    return NULL;
}

bool plot_script(const char *name, char *path, size_t n)
{
    const char *dir = getenv("PRESERVE_MODEL_PLOTS");
    snprintf(path, n, "%s/%s", dir && dir[0] ? dir : PM_PLOTS_DIR, name);
    if (access(path, R_OK) == 0)
        return true;
    fprintf(stderr, "%s: --plot: cannot read the gnuplot script %s\n", prog, path);
    return false;
}

static int draw(const cli *c, const char *csv, const pm_axis *ax, int n_ax)
{
    const char *term = plot_terminal(c->plot, false);
    if (!term) {
        fprintf(stderr, "%s: --plot: expected a file ending in .png, .svg or .pdf, without quotes, "
                        "backslashes, $ or ` (got '%s')\n",
                prog, c->plot);
        return EXIT_USAGE;
    }
    char script[1200];
    if (!plot_script(n_ax == 1 ? "sweep.gp" : "heatmap.gp", script, sizeof script))
        return EXIT_CONFIG;
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "gnuplot -e \"csv='%s'; out='%s'; term=\\\"%s\\\"; xcol='%s'; ycol='%s'\" '%s'", csv,
             c->plot, term, pm_axis_column(ax[0].kind),
             n_ax > 1 ? pm_axis_column(ax[1].kind) : "", script);
    int rc = system(cmd);
    if (rc != 0) {
        fprintf(stderr, "%s: --plot: gnuplot failed or is not installed (exit %d); the CSV is in %s\n",
                prog, rc, csv);
        return EXIT_CONFIG;
    }
    fprintf(stderr, "%s: wrote %s\n", prog, c->plot);
    return 0;
}

/* Text of one block, formatted on the worker that evaluated it (pm_sweep_opts.prepare) and
 * written, in grid order, by the callback. */
typedef struct rows_text {
    char *buf;
    size_t len, cap;
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
} sink;

/* Appends to a text (grown as needed). */
static bool put(rows_text *t, const char *fmt_, ...) __attribute__((format(printf, 2, 3)));
static bool put(rows_text *t, const char *fmt_, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt_);
        const int n = t->buf ? vsnprintf(t->buf + t->len, t->cap - t->len, fmt_, ap) : 0;
        va_end(ap);
        if (n < 0)
            return false;
        if (t->buf && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return true;
        }
        const size_t cap = t->cap * 2 + (size_t)n + 4096;
        char *nb = realloc(t->buf, cap);
        if (!nb)
            return false;
        t->buf = nb;
        t->cap = cap;
    }
}

/* Appends n bytes to t. */
static bool append(rows_text *t, const char *src, size_t n)
{
    if (t->cap - t->len <= n) {
        const size_t cap = t->cap * 2 + n + 4096;
        char *nb = realloc(t->buf, cap);
        if (!nb)
            return false;
        t->buf = nb;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, src, n);
    t->len += n;
    t->buf[t->len] = '\0';
    return true;
}

/* Appends v as "%.9g" (fmt_g9: printf's bytes without printf's cost) and a comma. */
static bool put_g9(rows_text *t, double v)
{
    char num[FMT_G9_MAX + 1];
    const int n = fmt_g9(v, num);
    num[n] = ',';
    return append(t, num, (size_t)n + 1);
}

static bool format_rows(const sink *k, const pm_sweep_point *pts, size_t n, rows_text *t)
{
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const pm_sweep_point *p = &pts[i];
        double v[N_SWEEP_COLS];
        point_values(p, v);
        if (k->json) {
            ok = put(t, "%s{", p->index != k->first ? ",\n" : "");
            for (int a = 0; a < k->n_ax && ok; a++)
                ok = put(t, "\"%s\": %.9g, ", pm_axis_column(k->ax[a].kind),
                         pm_axis_display_value(k->ax[a].kind, p->axis_value[a]));
            for (size_t j = 0; j < N_SWEEP_COLS && ok; j++)
                if (isfinite(v[j]))
                    ok = put(t, "\"%s\": %.9g, ", sweep_cols[j], v[j]);
            if (ok) {
                ok = put(t, "\"error\": \"");
                for (const char *q = p->error; *q && ok; q++)
                    ok = put(t, *q == '"' || *q == '\\' ? "\\%c" : "%c", *q);
                ok = ok && put(t, "\"}");
            }
            continue;
        }
        for (int a = 0; a < k->n_ax && ok; a++)
            ok = put_g9(t, pm_axis_display_value(k->ax[a].kind, p->axis_value[a]));
        for (size_t j = 0; j < N_SWEEP_COLS && ok; j++)
            ok = isfinite(v[j]) ? put_g9(t, v[j]) : append(t, "NaN,", 4);
        if (!ok)
            break;
        if (p->status == PM_OK) {
            ok = put(t, "\n");
        } else {
            ok = put(t, "\"");
            for (const char *q = p->error; *q && ok; q++)
                ok = put(t, "%c", *q == '"' || *q == '\n' ? '\'' : *q);
            ok = ok && put(t, "\"\n");
        }
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
    k->texts[i].len = 0;
    /* Formats outside the lock, into a copy: texts[] may move when another worker grows it. */
    rows_text local = k->texts[i];
    pthread_mutex_unlock(&k->mu);
    local.failed = !format_rows(k, pts, n, &local);
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
    } else if (fwrite(t.buf, 1, t.len, stdout) != t.len) {
        fprintf(stderr, "%s: cannot write the output: %s\n", prog, strerror(errno));
        rc = 1;
    } else if (k->csv && k->n_ax == 2) {
        /* gnuplot's grid format: a blank line after each row of the first axis. */
        const char *q = t.buf;
        for (size_t j = 0; j < n; j++) {
            const char *eol = memchr(q, '\n', (size_t)(t.buf + t.len - q));
            fwrite(q, 1, (size_t)(eol - q) + 1, k->csv);
            q = eol + 1;
            if ((pts[j].index + 1) % k->ax[1].n_values == 0)
                fputc('\n', k->csv);
        }
    } else if (k->csv) {
        fwrite(t.buf, 1, t.len, k->csv);
    }
    if (i < k->n_texts) {
        pthread_mutex_lock(&k->mu);
        k->texts[i].used = false;
        pthread_mutex_unlock(&k->mu);
    }
    k->done += n;
    if (k->tty && rc == 0)
        fprintf(stderr, "\r%s: %zu/%zu points", prog, k->done, k->total);
    return rc;
}

static void header(const cli *c, const pm_scenario *s, const pm_axis *ax, int n_ax, FILE *f)
{
    fprintf(f, "# preserve-model %s --config %s", pm_version(), c->config);
    for (int i = 0; i < c->n_sweeps; i++)
        fprintf(f, " --sweep %s", c->sweeps[i]);
    fprintf(f, "\n");
    for (size_t i = 0; i < c->n_sets; i++)
        fprintf(f, "# --set %s\n", c->sets[i]);
    pm_area area;
    if (pm_area_compute(&s->accel, &area, NULL) != PM_OK)
        fprintf(f, "# note: accelerator %s has no area coefficients: die_mm2 and densities are "
                   "NaN\n",
                s->accel.name);
    for (int a = 0; a < n_ax; a++)
        fprintf(f, "%s,", pm_axis_column(ax[a].kind));
    for (size_t i = 0; i < N_SWEEP_COLS; i++)
        fprintf(f, "%s,", sweep_cols[i]);
    fprintf(f, "error\n");
}

/* "K/N" with 1 <= K <= N. */
static bool parse_shard(const char *text, size_t *k, size_t *n)
{
    char *end;
    errno = 0;
    unsigned long long kk = strtoull(text, &end, 10);
    if (end == text || *end != '/' || errno)
        return false;
    const char *q = end + 1;
    unsigned long long nn = strtoull(q, &end, 10);
    if (end == q || *end || errno || nn < 1 || kk < 1 || kk > nn || nn > 1000000)
        return false;
    *k = (size_t)kk;
    *n = (size_t)nn;
    return true;
}

static void release_axes(pm_axis *ax)
{
    for (int i = 0; i < PM_SWEEP_MAX_AXES; i++)
        pm_axis_release(&ax[i]);
}

int cmd_sweep(const cli *c)
{
    if (c->plot && !plot_terminal(c->plot, false))
        return usage_error("--plot: expected a file ending in .png, .svg or .pdf, without quotes, "
                           "backslashes, $ or ` (got '%s')",
                           c->plot);
    size_t shard_k = 1, shard_n = 1;
    if (c->shard) {
        if (!parse_shard(c->shard, &shard_k, &shard_n))
            return usage_error("--shard: expected K/N with 1 <= K <= N (got '%s')", c->shard);
        if (c->format != FMT_CSV)
            return usage_error("--shard: shards are CSV (merge them with '%s merge')", prog);
        if (c->plot)
            return usage_error("--shard: draw the merged CSV, not a shard (no --plot)");
    }
    if (c->plot && c->n_sweeps > 2)
        return usage_error("--plot: a figure shows one or two axes (got %d --sweep)", c->n_sweeps);
    pm_axis ax[PM_SWEEP_MAX_AXES];
    memset(ax, 0, sizeof ax);
    pm_error err;
    for (int i = 0; i < c->n_sweeps; i++) {
        if (pm_axis_parse(c->sweeps[i], 10000000, &ax[i], &err) != PM_OK) {
            release_axes(ax);
            char buf[800];
            pm_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "%s: %s\n", prog, buf);
            return EXIT_USAGE;
        }
        for (int j = 0; j < i; j++)
            if (ax[j].kind == ax[i].kind) {
                release_axes(ax);
                return usage_error("--sweep: the axes must differ (%s twice)",
                                   pm_axis_name(ax[i].kind));
            }
    }
    pm_scenario s;
    int rc = load(c, &s);
    if (rc) {
        release_axes(ax);
        return rc;
    }
    /* With --plot the CSV goes to a file beside the figure as well as stdout. */
    sink k = {.c = c, .ax = ax, .n_ax = c->n_sweeps, .tty = isatty(fileno(stderr)),
              .json = c->format == FMT_JSON};
    char csv_path[1100] = "";
    if (c->plot) {
        snprintf(csv_path, sizeof csv_path, "%s.csv", c->plot);
        k.csv = fopen(csv_path, "w");
        if (!k.csv) {
            fprintf(stderr, "%s: cannot write %s: %s\n", prog, csv_path, strerror(errno));
            pm_scenario_free(&s);
            release_axes(ax);
            return EXIT_CONFIG;
        }
        header(c, &s, ax, c->n_sweeps, k.csv);
    }
    const size_t total = pm_sweep_size(ax, (size_t)c->n_sweeps);
    size_t first, last;
    pm_sweep_slice(total, shard_k - 1, shard_n, &first, &last);
    k.total = last - first;
    if (k.json) {
        printf("{\"tool\": \"preserve-model %s\", \"points\": [\n", pm_version());
    } else {
        header(c, &s, ax, c->n_sweeps, stdout);
        if (c->shard)
            printf("# shard %zu/%zu: rows %zu to %zu of %zu\n", shard_k, shard_n, first + 1, last,
                   total);
    }
    k.first = first;
    pthread_mutex_init(&k.mu, NULL);
    pm_sweep_opts o = {.threads = c->threads, .shard_index = shard_k - 1,
                       .shard_count = shard_n, .prepare = prepare_rows};
    pm_status st = pm_sweep_run(&s, ax, (size_t)c->n_sweeps, &o, on_points, &k, &err);
    for (size_t i = 0; i < k.n_texts; i++)
        free(k.texts[i].buf);
    free(k.texts);
    pthread_mutex_destroy(&k.mu);
    if (k.tty)
        fprintf(stderr, "\n");
    if (k.json)
        printf("\n]}\n");
    rc = st == PM_OK ? 0 : st == PM_ERR_NOMEM ? config_error(&err) : EXIT_CONFIG;
    if (k.csv) {
        fclose(k.csv);
        if (rc == 0)
            rc = draw(c, csv_path, ax, c->n_sweeps);
    }
    pm_scenario_free(&s);
    release_axes(ax);
    return rc;
}

/* ---------------------------------------------------------------- merge */

typedef struct shard_file {
    const char *path;
    char *text;
    size_t k, n;
    const char *body;   /* after the shard line */
    size_t head_len;    /* bytes of header before the shard line */
} shard_file;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *t = malloc(cap);
    size_t got;
    while (t && (got = fread(t + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *nt = realloc(t, cap * 2);
            if (!nt) {
                free(t);
                t = NULL;
                break;
            }
            t = nt;
            cap *= 2;
        }
    }
    fclose(f);
    if (t)
        t[len] = '\0';
    return t;
}

int cmd_merge(int argc, char **argv)
{
    if (argc < 1)
        return usage_error("merge: give the shard files (the CSVs of --shard K/N runs)");
    shard_file *sf = calloc((size_t)argc, sizeof *sf);
    if (!sf)
        return EXIT_CONFIG;
    int rc = 0;
    size_t n = 0;
    for (int i = 0; i < argc && rc == 0; i++) {
        shard_file *f = &sf[i];
        f->path = argv[i];
        f->text = slurp(argv[i]);
        if (!f->text) {
            fprintf(stderr, "%s: merge: cannot read %s: %s\n", prog, argv[i], strerror(errno));
            rc = EXIT_CONFIG;
            break;
        }
        const char *line = strstr(f->text, "# shard ");
        if (!line || (line != f->text && line[-1] != '\n') ||
            sscanf(line, "# shard %zu/%zu:", &f->k, &f->n) != 2 || f->k < 1 || f->k > f->n) {
            fprintf(stderr, "%s: merge: %s: no '# shard K/N' line (was it written with --shard?)\n",
                    prog, argv[i]);
            rc = EXIT_CONFIG;
            break;
        }
        f->head_len = (size_t)(line - f->text);
        const char *eol = strchr(line, '\n');
        f->body = eol ? eol + 1 : line + strlen(line);
        if (i == 0)
            n = f->n;
        if (f->n != n) {
            fprintf(stderr, "%s: merge: %s is shard %zu/%zu but %s is of %zu shards\n", prog,
                    argv[i], f->k, f->n, argv[0], n);
            rc = EXIT_CONFIG;
        } else if (f->head_len != sf[0].head_len ||
                   memcmp(f->text, sf[0].text, f->head_len) != 0) {
            fprintf(stderr, "%s: merge: %s and %s come from different sweeps (their headers "
                            "differ)\n",
                    prog, argv[i], argv[0]);
            rc = EXIT_CONFIG;
        }
    }
    /* Every shard exactly once, then the rows in shard order. */
    const shard_file **order = rc == 0 ? calloc(n + 1, sizeof *order) : NULL;
    if (rc == 0 && !order)
        rc = EXIT_CONFIG;
    for (int i = 0; i < argc && rc == 0; i++) {
        if (order[sf[i].k]) {
            fprintf(stderr, "%s: merge: shard %zu/%zu given twice (%s and %s)\n", prog, sf[i].k, n,
                    order[sf[i].k]->path, sf[i].path);
            rc = EXIT_CONFIG;
        }
        order[sf[i].k] = &sf[i];
    }
    for (size_t k = 1; k <= n && rc == 0; k++)
        if (!order[k]) {
            fprintf(stderr, "%s: merge: shard %zu/%zu is missing\n", prog, k, n);
            rc = EXIT_CONFIG;
        }
    if (rc == 0) {
        fwrite(sf[0].text, 1, sf[0].head_len, stdout);
        for (size_t k = 1; k <= n; k++)
            fputs(order[k]->body, stdout);
    }
    free(order);
    for (int i = 0; i < argc; i++)
        free(sf[i].text);
    free(sf);
    return rc;
}

/* ---------------------------------------------------------------- optimize */

int cmd_optimize(const cli *c)
{
    char spec[256];
    snprintf(spec, sizeof spec, "%s", c->optimize);
    pm_axis ax;
    pm_error err;
    /* The range defaults to the axis's default sweep range. */
    char *eq = strchr(spec, '=');
    char axis_only[64];
    snprintf(axis_only, sizeof axis_only, "%.*s", eq ? (int)(eq - spec) : (int)strlen(spec), spec);
    char full[300];
    if (eq)
        snprintf(full, sizeof full, "%s=%s:x2", axis_only, eq + 1);
    else
        snprintf(full, sizeof full, "%s", axis_only);
    if (pm_axis_parse(full, 0, &ax, &err) != PM_OK) {
        char buf[800];
        pm_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "%s: --optimize: %s\n", prog, buf);
        return EXIT_USAGE;
    }
    double lo = ax.values[0], hi = ax.values[ax.n_values - 1];
    if (eq) { /* LO:HI exactly, not the last geometric point */
        char *colon = strchr(eq + 1, ':');
        if (!colon || strchr(colon + 1, ':')) {
            pm_axis_release(&ax);
            return usage_error("--optimize: expected AXIS or AXIS=LO:HI (got '%s')", c->optimize);
        }
        pm_axis hi_ax;
        char hs[300];
        snprintf(hs, sizeof hs, "%s=%s", axis_only, colon + 1);
        if (pm_axis_parse(hs, 0, &hi_ax, &err) == PM_OK) {
            hi = hi_ax.values[0];
            pm_axis_release(&hi_ax);
        }
    }
    pm_axis_kind kind = ax.kind;
    pm_axis_release(&ax);
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    pm_optimum opt;
    if (pm_optimize_axis(&s, kind, lo, hi, 33, 1e-3, 100, &opt, &err) != PM_OK) {
        pm_scenario_free(&s);
        return config_error(&err);
    }
    printf("# preserve-model %s --config %s --optimize %s\n", pm_version(), c->config, c->optimize);
    for (size_t i = 0; i < c->n_sets; i++)
        printf("# --set %s\n", c->sets[i]);
    printf("# searched %s in [%.6g, %.6g]: 33-point log grid, then Brent (GSL) to 1e-3; %d evaluations\n",
           pm_axis_column(kind), pm_axis_display_value(kind, lo), pm_axis_display_value(kind, hi),
           opt.evaluations);
    printf("mode,best_%s,density_tokens_per_s_per_mm2,bracket_lo,bracket_hi,brent_iterations\n",
           pm_axis_column(kind));
    for (int m = 0; m < PM_MODE_COUNT; m++)
        printf("%s,%.6g,%.6g,%.6g,%.6g,%d\n", pm_mode_name((pm_mode)m),
               pm_axis_display_value(kind, opt.best_value[m]), opt.best_density[m],
               pm_axis_display_value(kind, opt.bracket_lo[m]),
               pm_axis_display_value(kind, opt.bracket_hi[m]), opt.iterations[m]);
    pm_scenario_free(&s);
    return 0;
}
