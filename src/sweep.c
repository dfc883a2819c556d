/*
 * sweep.c - design-space axes: parsing "AXIS=START:STOP:STEP" / "x2" / lists with units,
 * setting an axis on a scenario, and the optimum search of throughput density along one axis
 * (a continuous axis: a log-spaced grid to bracket the best point of a piecewise objective,
 * then GSL's Brent minimiser inside the bracket; a count, pp, dp or split: every value, the
 * refused ones skipped, ties to the smaller value).
 *
 * May call: accelerator.c, alloc.c, area.c, dtype.c, error.c, estimate.c, plan.c, units.c.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_min.h>

#include "internal.h"

typedef struct axis_info {
    const char *name, *column;
    const char *path;     /* the scenario field it sets, as errors name it */
    pm_dimension dim;
    double display;       /* SI per display unit */
    double lo, hi, step;  /* default range (SI); step < 0 means geometric factor -step */
} axis_info;

#define MIB_ (1024.0 * 1024.0)

static const axis_info axes[PM_AXIS_COUNT] = {
    {"l2", "l2_capacity_MiB", "$.accelerator.l2_capacity", PM_DIM_BYTES, MIB_, 8 * MIB_, 256 * MIB_, 8 * MIB_},
    {"l2_bw", "l2_bandwidth_TBps", "$.accelerator.l2_bandwidth", PM_DIM_BANDWIDTH, 1e12, 1e12, 16e12, 1e12},
    {"compute", "compute_TFLOPS", "$.accelerator.peak_compute", PM_DIM_COMPUTE, 1e12, 100e12, 3200e12, -2.0},
    {"hbm_bw", "hbm_bandwidth_TBps", "$.accelerator.hbm_bandwidth", PM_DIM_BANDWIDTH, 1e12, 0.5e12, 8e12, 0.5e12},
    {"link_bw", "link_bandwidth_GBps", "$.cluster.link_bandwidth", PM_DIM_BANDWIDTH, 1e9, 25e9, 400e9, 25e9},
    {"devices", "devices", "$.cluster.devices", PM_DIM_NONE, 1, 1, 64, -2.0},
    {"batch", "batch", "$.workload.batch", PM_DIM_NONE, 1, 1, 256, -2.0},
    {"seq", "seq_len", "$.workload.seq_len", PM_DIM_NONE, 1, 1024, 65536, -2.0},
    {"ep", "expert_parallel", "$.cluster.expert_parallel", PM_DIM_NONE, 1, 1, 64, -2.0},
    {"pp", "pipeline_parallel", "$.cluster.pipeline_parallel", PM_DIM_NONE, 1, 1, 8, -2.0},
    {"dp", "data_parallel", "$.cluster.data_parallel", PM_DIM_NONE, 1, 1, 8, -2.0},
    {"sp", "sequence_parallel", "$.cluster.sequence_parallel", PM_DIM_NONE, 1, 0, 1, 1},
    {"split", "last_stage_layers", "$.cluster.pipeline_layers", PM_DIM_NONE, 1, 1, 64, 1},
};

const char *pm_axis_name(pm_axis_kind k)
{
    return (int)k >= 0 && k < PM_AXIS_COUNT ? axes[k].name : "?";
}

const char *pm_axis_column(pm_axis_kind k)
{
    return (int)k >= 0 && k < PM_AXIS_COUNT ? axes[k].column : "?";
}

double pm_axis_display_value(pm_axis_kind k, double v)
{
    return (int)k >= 0 && k < PM_AXIS_COUNT ? v / axes[k].display : v;
}

void pm_axis_release(pm_axis *a)
{
    if (!a)
        return;
    pm_free(a->values);
    a->values = NULL;
    a->n_values = 0;
}

bool pm_axis_is_count(pm_axis_kind k)
{
    return k == PM_AXIS_DEVICES || k == PM_AXIS_BATCH || k == PM_AXIS_SEQ || k == PM_AXIS_EP ||
           k == PM_AXIS_PP || k == PM_AXIS_DP || k == PM_AXIS_SP || k == PM_AXIS_SPLIT;
}

static pm_status push(pm_axis *a, size_t *cap, double v, size_t max_points, const char *spec,
                      pm_error *err)
{
    if (max_points && a->n_values >= max_points)
        return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec, "more than %zu points",
                       max_points);
    if (a->n_values == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        double *nv = pm_realloc(a->values, nc * sizeof *nv);
        if (!nv)
            return pm_fail(err, PM_ERR_NOMEM, PM_ERROR_FILE_AXIS, spec, "out of memory");
        a->values = nv;
        *cap = nc;
    }
    a->values[a->n_values++] = v;
    return PM_OK;
}

/* A bare number (spaces around it allowed, as around a number with its unit) into *v. */
static bool bare_number(const char *text, double *v)
{
    char *end;
    *v = strtod(text, &end);
    if (end == text || !isfinite(*v))
        return false;
    while (isspace((unsigned char)*end))
        end++;
    return *end == '\0';
}

/* A switch's value: exactly 0 (off) or 1 (on). */
static bool switch_value(double v)
{
    return !(v < 0.0 || v > 0.0) || !(v < 1.0 || v > 1.0);
}

static pm_status parse_value(const char *text, pm_axis_kind k, const char *spec, double *out,
                             pm_error *err)
{
    pm_error e2;
    const axis_info *ai = &axes[k];
    /* A bare number is in the axis's display unit ("l2=8:256:8" means MiB; "2 " too: the
     * unit parser would read it as SI, 2 bytes). */
    double v;
    if (bare_number(text, &v)) {
        *out = v * ai->display;
    } else if ((k == PM_AXIS_SEQ ? pm_token_count_parse(text, out, &e2)
                                 : pm_quantity_parse(text, ai->dim, out, &e2)) != PM_OK) {
        return pm_fail(err, e2.status, PM_ERROR_FILE_AXIS, spec, "%s", e2.message);
    }
    if (k == PM_AXIS_SP && !switch_value(*out))
        return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec,
                       "sp is a switch: 0 (off) or 1 (on) (got '%s')", text);
    if (k != PM_AXIS_SP && (!(*out > 0) || !isfinite(*out)))
        return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec,
                       "values must be > 0 (got '%s')", text);
    if (pm_axis_is_count(k) && fabs(*out - round(*out)) > 1e-9 * *out)
        return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec, "%s takes integers (got '%s')",
                       ai->name, text);
    if (pm_axis_is_count(k))
        *out = round(*out);
    return PM_OK;
}

/* The values of a list "V1,V2,...", pushed onto out. */
static pm_status parse_list(const char *r, const char *spec, size_t max_points, pm_axis *out,
                            size_t *cap, pm_error *err)
{
    /* Every item read, none empty, none cut: no line buffer, one bounded item at a time. */
    for (const char *p = r;;) {
        const char *c = strchr(p, ',');
        const size_t len = c ? (size_t)(c - p) : strlen(p);
        char item[128];
        if (len == 0)
            return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec,
                           "empty item %zu in the list", out->n_values + 1);
        if (len >= sizeof item)
            return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec,
                           "list item %zu is longer than %zu characters", out->n_values + 1,
                           sizeof item - 1);
        memcpy(item, p, len);
        item[len] = '\0';
        double v;
        pm_status st;
        if ((st = parse_value(item, out->kind, spec, &v, err)) != PM_OK ||
            (st = push(out, cap, v, max_points, spec, err)) != PM_OK)
            return st;
        if (!c)
            return PM_OK;
        p = c + 1;
    }
}

/* The STEP of a range: "xF" (geometric, *step = -F) or an increment in the axis's units. */
static pm_status parse_step(const char *text, const axis_info *ai, const char *spec,
                            double *step, pm_error *err)
{
    if (text[0] == 'x') {
        char *end;
        double f = strtod(text + 1, &end);
        if (*end || !(f > 1) || !isfinite(f))
            return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec,
                           "a geometric step is xF with F > 1 (got '%s')", text);
        *step = -f;
        return PM_OK;
    }
    pm_error e2;
    double v;
    if (bare_number(text, &v))
        *step = v * ai->display;
    else if ((ai == &axes[PM_AXIS_SEQ] ? pm_token_count_parse(text, step, &e2)
                               : pm_quantity_parse(text, ai->dim, step, &e2)) != PM_OK)
        return pm_fail(err, e2.status, PM_ERROR_FILE_AXIS, spec, "%s", e2.message);
    if (!(*step > 0) || !isfinite(*step))
        return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec,
                       "the step must be finite and > 0 (got '%s')", text);
    return PM_OK;
}

/* A range "START:STOP:STEP" into *lo, *hi and *step (as in axis_info). */
static pm_status parse_range(const char *r, pm_axis_kind kind, const char *spec, double *lo,
                             double *hi, double *step, pm_error *err)
{
    char buf[3][128] = {"", "", ""};
    int parts = 0;
    const char *p = r;
    while (parts < 3) {
        const char *c = strchr(p, ':');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len >= sizeof buf[0])
            return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec, "range part too long");
        memcpy(buf[parts], p, len);
        buf[parts][len] = '\0';
        parts++;
        if (!c)
            break;
        p = c + 1;
    }
    if (parts != 3 || strchr(p, ':'))
        return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec, "expected START:STOP:STEP");
    pm_status st;
    if ((st = parse_value(buf[0], kind, spec, lo, err)) != PM_OK ||
        (st = parse_value(buf[1], kind, spec, hi, err)) != PM_OK ||
        (st = parse_step(buf[2], &axes[kind], spec, step, err)) != PM_OK)
        return st;
    if (!(*hi >= *lo))
        return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec,
                       "reversed range: STOP must be >= START");
    return PM_OK;
}

/* Points lo, lo+step, ... (step < 0: lo, lo x -step, ...) up to hi, inclusive within a rounding
 * tolerance, pushed onto a. */
static pm_status fill_range(pm_axis *a, size_t *cap, double lo, double hi, double step,
                            size_t max_points, const char *spec, pm_error *err)
{
    const double tol = 1e-9 * hi;
    for (size_t i = 0;; i++) {
        double v = step > 0 ? lo + (double)i * step : lo * pow(-step, (double)i);
        if (v > hi + tol)
            break;
        if (pm_axis_is_count(a->kind))
            v = round(v);
        const pm_status st = push(a, cap, v, max_points, spec, err);
        if (st != PM_OK)
            return st;
    }
    return PM_OK;
}

pm_status pm_axis_parse(const char *spec, size_t max_points, pm_axis *out, pm_error *err)
{
    if (!spec || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL axis specification");
    *out = (pm_axis){0};
    char name[32];
    const char *eq = strchr(spec, '=');
    size_t nlen = eq ? (size_t)(eq - spec) : strlen(spec);
    if (nlen == 0 || nlen >= sizeof name)
        return pm_fail(err, PM_ERR_VALUE, PM_ERROR_FILE_AXIS, spec, "expected AXIS or AXIS=RANGE");
    memcpy(name, spec, nlen);
    name[nlen] = '\0';
    int k = -1;
    for (int i = 0; i < PM_AXIS_COUNT; i++)
        if (strcmp(name, axes[i].name) == 0)
            k = i;
    if (k < 0) {
        const char *names[PM_AXIS_COUNT];
        for (int i = 0; i < PM_AXIS_COUNT; i++)
            names[i] = axes[i].name;
        const char *near = pm_suggest(name, names, PM_AXIS_COUNT);
        char list[160] = ""; /* the axes' names from their table: "l2, l2_bw, ... or ep" */
        for (int i = 0; i < PM_AXIS_COUNT; i++) {
            const size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s",
                     i == 0 ? "" : i == PM_AXIS_COUNT - 1 ? " or " : ", ", names[i]);
        }
        return pm_fail(err, PM_ERR_VALUE, PM_ERROR_FILE_AXIS, spec,
                       "unknown axis \"%s\" (%s%s%sexpected %s)", name,
                       near ? "did you mean \"" : "", near ? near : "", near ? "\"? " : "", list);
    }
    out->kind = (pm_axis_kind)k;
    const axis_info *ai = &axes[k];
    size_t cap = 0;
    pm_status st = PM_OK;
    double lo = ai->lo, hi = ai->hi, step = ai->step;
    if (eq) {
        const char *r = eq + 1;
        if (!*r) {
            st = pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec, "empty range after '='");
            goto fail;
        }
        if (!strchr(r, ':')) { /* a list */
            if ((st = parse_list(r, spec, max_points, out, &cap, err)) != PM_OK)
                goto fail;
            return PM_OK;
        }
        if ((st = parse_range(r, out->kind, spec, &lo, &hi, &step, err)) != PM_OK)
            goto fail;
    }
    out->default_range = !eq;
    if ((st = fill_range(out, &cap, lo, hi, step, max_points, spec, err)) != PM_OK)
        goto fail;
    return PM_OK;
fail:
    pm_axis_release(out);
    return st;
}

bool pm_scenario_axis_value(const pm_scenario *s, pm_axis_kind k, double *v)
{
    if (!s || !v)
        return false;
    switch (k) {
    case PM_AXIS_L2: *v = s->accel.l2_capacity_bytes; break;
    case PM_AXIS_L2_BW: *v = s->accel.l2_bandwidth_bytes_per_s; break;
    case PM_AXIS_COMPUTE: *v = pm_peak_compute(&s->accel, pm_compute_dtype(&s->workload)); break;
    case PM_AXIS_HBM_BW: *v = s->accel.hbm_bandwidth_bytes_per_s; break;
    case PM_AXIS_LINK_BW: *v = s->cluster.link_bandwidth_bytes_per_s; break;
    case PM_AXIS_DEVICES: *v = s->cluster.devices; break;
    case PM_AXIS_BATCH: *v = s->workload.batch; break;
    case PM_AXIS_SEQ: *v = (double)s->workload.seq_len; break;
    case PM_AXIS_EP: *v = pm_cluster_ep(&s->cluster); break;
    case PM_AXIS_PP: *v = pm_cluster_pp(&s->cluster); break;
    case PM_AXIS_DP: *v = pm_cluster_dp(&s->cluster); break;
    case PM_AXIS_SP: *v = s->cluster.sequence_parallel ? 1.0 : 0.0; return true;
    case PM_AXIS_SPLIT: {
        const int pp = pm_cluster_pp(&s->cluster);
        int layers[PM_MAX_STAGES];
        if (pp < 2 || s->model.layers < pp)
            return false;
        pm_pipeline_stage_layers(&s->cluster, s->model.layers, layers);
        *v = layers[pp - 1];
        break;
    }
    default: return false;
    }
    return *v > 0 && isfinite(*v);
}

pm_status pm_axis_fit_scenario(const pm_scenario *s, pm_axis *a, pm_error *err)
{
    if (!s || !a || (int)a->kind < 0 || a->kind >= PM_AXIS_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL scenario or axis");
    if (!a->default_range)
        return PM_OK;
    const axis_info *ai = &axes[a->kind];
    double lo = ai->lo, hi = ai->hi, step = ai->step, base;
    if (a->kind == PM_AXIS_DEVICES || a->kind == PM_AXIS_EP) {
        /* No more devices than the cluster joins (an NVSwitch board's 8). */
        if (s->cluster.max_devices > 0 && s->cluster.max_devices < hi)
            hi = s->cluster.max_devices;
    } else if (a->kind == PM_AXIS_SPLIT && pm_cluster_pp(&s->cluster) > 1) {
        /* From one layer to the even share (ceil(L / PP)): the LM head makes the last stage
         * the heavy one, so its share is what to give up. */
        const int pp = pm_cluster_pp(&s->cluster);
        hi = (s->model.layers + pp - 1) / pp;
    } else if (!pm_axis_is_count(a->kind) && pm_scenario_axis_value(s, a->kind, &base) &&
               (base < lo * (1 - 1e-9) || base > hi * (1 + 1e-9))) {
        /* A range around the scenario's own value: an eighth of it to twice it. */
        lo = base / 8, hi = base * 2, step = -2.0;
    } else {
        return PM_OK;
    }
    pm_axis fitted = {.kind = a->kind, .default_range = true};
    size_t cap = 0;
    const pm_status st = fill_range(&fitted, &cap, lo, hi, step, 0, ai->name, err);
    if (st != PM_OK) {
        pm_axis_release(&fitted);
        return st;
    }
    pm_axis_release(a);
    *a = fitted;
    return PM_OK;
}

/* The largest value of a count axis: the loaders' bounds, beyond which the int fields would
 * overflow. */
static double axis_count_max(pm_axis_kind k)
{
    return k == PM_AXIS_DEVICES || k == PM_AXIS_EP || k == PM_AXIS_DP ? (double)PM_MAX_DEVICES
           : k == PM_AXIS_PP                                          ? (double)PM_MAX_STAGES
           : k == PM_AXIS_SPLIT                                       ? (double)PM_MAX_LAYERS
           : k == PM_AXIS_BATCH                                       ? (double)PM_MAX_BATCH
                                                                      : (double)PM_MAX_SEQ_LEN;
}

pm_status pm_scenario_set_axis(pm_scenario *s, pm_axis_kind k, double v, pm_error *err)
{
    if (!s)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL scenario");
    if ((int)k < 0 || k >= PM_AXIS_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad axis");
    const char *path = axes[k].path;
    if (k == PM_AXIS_SP) {
        if (!switch_value(v))
            return pm_fail(err, PM_ERR_RANGE, NULL, path,
                           "the sp axis is a switch: 0 (off) or 1 (on) (got %.17g)", v);
        s->cluster.sequence_parallel = v > 0.5;
        return PM_OK;
    }
    if (!(v > 0) || !isfinite(v))
        return pm_fail(err, PM_ERR_RANGE, NULL, path, "the %s axis's values must be > 0 (got %g)",
                       pm_axis_name(k), v);
    if (pm_axis_is_count(k) && fabs(v - round(v)) > 0.0)
        return pm_fail(err, PM_ERR_RANGE, NULL, path, "the %s axis takes integers (got %.17g)",
                       pm_axis_name(k), v);
    const double count_max = axis_count_max(k);
    if (pm_axis_is_count(k) && v > count_max)
        return pm_fail(err, PM_ERR_RANGE, NULL, path, "must be at most %.0f (got %.0f)",
                       count_max, v);
    switch (k) {
    case PM_AXIS_L2: s->accel.l2_capacity_bytes = v; break;
    case PM_AXIS_L2_BW: s->accel.l2_bandwidth_bytes_per_s = v; break;
    case PM_AXIS_COMPUTE: {
        const double cur = pm_peak_compute(&s->accel, pm_compute_dtype(&s->workload));
        if (!(cur > 0))
            return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, NULL, "no peak for the compute type");
        for (int d = 0; d < PM_DTYPE_COUNT; d++)
            s->accel.peak_flop_per_s[d] *= v / cur;
        break;
    }
    case PM_AXIS_HBM_BW: s->accel.hbm_bandwidth_bytes_per_s = v; break;
    case PM_AXIS_LINK_BW: s->cluster.link_bandwidth_bytes_per_s = v; break;
    case PM_AXIS_DEVICES: s->cluster.devices = (int)v; break;
    case PM_AXIS_BATCH: s->workload.batch = (int)v; break;
    case PM_AXIS_SEQ: s->workload.seq_len = (int64_t)v; break;
    case PM_AXIS_EP: s->cluster.expert_parallel = (int)v; break;
    case PM_AXIS_PP:
        s->cluster.pipeline_parallel = (int)v;
        s->cluster.stage_layers[0] = 0; /* a list of layers per stage is of its own stages */
        break;
    case PM_AXIS_DP: s->cluster.data_parallel = (int)v; break;
    case PM_AXIS_SPLIT: {
        const int pp = pm_cluster_pp(&s->cluster), L = s->model.layers;
        if (pp < 2)
            return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.cluster.pipeline_parallel",
                           "the split axis sets the layers of the last of several pipeline "
                           "stages: give pp > 1 (--pp N, or a pp axis before split)");
        if (v > L - (pp - 1))
            return pm_fail(err, PM_ERR_RANGE, NULL, path,
                           "the last of %d stages holds at most %d of the %d layers (each "
                           "other stage at least one) (got %.0f)",
                           pp, L - (pp - 1), L, v);
        pm_pipeline_split_last(&s->cluster, L, (int)v);
        break;
    }
    default: return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad axis");
    }
    return PM_OK;
}

/* ---------------------------------------------------------------- optimum */

static const char *const objective_names[PM_OBJECTIVE_COUNT] = {"mm2", "usd", "joule"};
static const char *const objective_columns[PM_OBJECTIVE_COUNT] = {
    "density_tokens_per_s_per_mm2", "tokens_per_s_per_usd", "tokens_per_J"};

const char *pm_objective_name(pm_objective o)
{
    return (int)o >= 0 && o < PM_OBJECTIVE_COUNT ? objective_names[o] : "?";
}

const char *pm_objective_column(pm_objective o)
{
    return (int)o >= 0 && o < PM_OBJECTIVE_COUNT ? objective_columns[o] : "?";
}

typedef struct objective {
    pm_scenario s;
    pm_axis_kind kind;
    pm_objective obj;
    pm_mode mode;
    pm_status st;
    pm_error *err;
    int *evals;
} objective;

/* The objective goal of mode m in e, the estimate of t, whose die is die_mm2. */
static double objective_of(const pm_scenario *t, const pm_estimate *e, pm_objective goal,
                           pm_mode m, double die_mm2)
{
    switch (goal) {
    case PM_OBJECTIVE_USD: return e->modes[m].tokens_per_s_per_usd;
    case PM_OBJECTIVE_JOULE: return e->modes[m].tokens_per_J;
    default: return pm_density(e, m, pm_cluster_total_devices(&t->cluster), die_mm2);
    }
}

static double density_at(objective *o, double v)
{
    if (o->st != PM_OK)
        return NAN;
    (*o->evals)++;
    pm_scenario t = o->s;
    pm_estimate e;
    pm_area a;
    if ((o->st = pm_scenario_set_axis(&t, o->kind, v, o->err)) != PM_OK ||
        (o->st = pm_estimate_compute(&t, &e, o->err)) != PM_OK ||
        (o->st = pm_area_compute(&t.accel, &a, o->err)) != PM_OK)
        return NAN;
    return objective_of(&t, &e, o->obj, o->mode, a.die_mm2);
}

static double density_fn(double v, void *user)
{
    return density_at(user, v);
}

typedef struct log_objective {
    pm_objective_fn f;
    void *user;
    bool failed;
    double lo, hi; /* the interval: exp(log(x)) may land an ulp outside it */
} log_objective;

/* x = exp(lx) inside [o->lo, o->hi]: exp(log(1000)) is 999.9999999999998, which a bound of
 * the model's range (hbm_bw=1e3Bps) refuses; the interval is inclusive at both ends. */
static double from_log(const log_objective *o, double lx)
{
    const double x = exp(lx);
    return x < o->lo ? o->lo : x > o->hi ? o->hi : x;
}

/* GSL minimises: the objective is -f as a function of log(x). */
static double neg_log(double x, void *p)
{
    log_objective *lo = p;
    const double v = lo->failed ? NAN : lo->f(from_log(lo, x), lo->user);
    if (isnan(v))
        lo->failed = true;
    return lo->failed ? 0.0 : -v;
}

pm_status pm_maximize_log(pm_objective_fn f, void *user, double lo, double hi, int grid_points,
                          double rel_tol, int max_iter, pm_maximum *out)
{
    memset(out, 0, sizeof *out);
    log_objective o = {f, user, false, lo, hi};
    const double llo = log(lo), lhi = log(hi), dx = (lhi - llo) / (grid_points - 1);
    double *d = pm_malloc((size_t)grid_points * sizeof *d);
    if (!d)
        return PM_ERR_NOMEM;
    int best = 0;
    double best_d = -INFINITY;
    for (int i = 0; i < grid_points; i++) {
        d[i] = -neg_log(llo + i * dx, &o);
        out->evaluations++;
        if (o.failed) {
            pm_free(d);
            return PM_ERR_CANCELLED;
        }
        if (d[i] > best_d) {
            best_d = d[i];
            best = i;
        }
    }
    if (best == 0 && d[0] > d[1])
        out->edge = -1;
    else if (best == grid_points - 1 && d[best] > d[best - 1])
        out->edge = 1;
    double xb = llo + best * dx, xl = xb - dx, xh = xb + dx;
    out->best_x = from_log(&o, xb);
    out->best_f = best_d;
    out->lo = from_log(&o, xl);
    out->hi = from_log(&o, xh);
    /* Refine inside the bracket when the best grid point is interior and strictly better than
     * its neighbours (what Brent needs); at an edge the optimum is the edge. GSL's error
     * handler stays the host's business (the CLI turns it off); every call below is made with
     * its preconditions checked and its status tested. */
    pm_status st = PM_OK;
    if (best > 0 && best < grid_points - 1 && d[best] > d[best - 1] && d[best] > d[best + 1]) {
        gsl_min_fminimizer *fm = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
        gsl_function F = {neg_log, &o};
        if (!fm) {
            st = PM_ERR_NOMEM;
        } else if (gsl_min_fminimizer_set_with_values(fm, &F, xb, -d[best], xl, -d[best - 1], xh,
                                                      -d[best + 1]) == GSL_SUCCESS) {
            int it = 0, status = GSL_CONTINUE;
            while (status == GSL_CONTINUE && it < max_iter && !o.failed) {
                it++;
                out->evaluations++;
                if (gsl_min_fminimizer_iterate(fm) != GSL_SUCCESS)
                    break;
                status = gsl_min_test_interval(gsl_min_fminimizer_x_lower(fm),
                                               gsl_min_fminimizer_x_upper(fm), rel_tol, 0.0);
            }
            if (o.failed) {
                st = PM_ERR_CANCELLED;
            } else {
                const double fmv = -gsl_min_fminimizer_f_minimum(fm);
                if (fmv >= best_d) {
                    out->best_x = from_log(&o, gsl_min_fminimizer_x_minimum(fm));
                    out->best_f = fmv;
                }
                out->lo = from_log(&o, gsl_min_fminimizer_x_lower(fm));
                out->hi = from_log(&o, gsl_min_fminimizer_x_upper(fm));
                out->iterations = it;
            }
        }
        gsl_min_fminimizer_free(fm);
    }
    pm_free(d);
    return st;
}

/* What objective goal needs of s's accelerator: the "cost" object (usd), the "energy" object
 * (joule) and its area (*a, every objective: the density's divisor). */
static pm_status objective_needs(const pm_scenario *s, pm_objective goal, pm_area *a,
                                 pm_error *err)
{
    if (goal == PM_OBJECTIVE_USD && !s->accel.cost.present)
        return pm_fail(err, PM_ERR_MISSING, NULL, "$.accelerator.cost",
                       "the usd objective needs the accelerator's \"cost\" object, and "
                       "accelerator \"%s\" has none",
                       s->accel.name);
    if (goal == PM_OBJECTIVE_JOULE && !s->accel.energy.present)
        return pm_fail(err, PM_ERR_MISSING, NULL, "$.accelerator.energy",
                       "the joule objective needs the accelerator's \"energy\" object, and "
                       "accelerator \"%s\" has none",
                       s->accel.name);
    return pm_area_compute(&s->accel, a, err);
}

pm_status pm_optimize_axis(const pm_scenario *s, pm_axis_kind kind, double lo, double hi,
                           int grid_points, double rel_tol, int max_iter, pm_optimum *out,
                           pm_error *err)
{
    return pm_optimize_axis_for(s, kind, PM_OBJECTIVE_MM2, lo, hi, grid_points, rel_tol,
                                max_iter, out, err);
}

pm_status pm_optimize_axis_for(const pm_scenario *s, pm_axis_kind kind, pm_objective goal,
                               double lo, double hi, int grid_points, double rel_tol,
                               int max_iter, pm_optimum *out, pm_error *err)
{
    if (!s || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "optimize: %s is NULL",
                       !s ? "the scenario" : "out");
    if ((int)kind < 0 || kind >= PM_AXIS_COUNT || pm_axis_is_count(kind))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "optimize searches a continuous axis (l2, l2_bw, compute, hbm_bw, "
                       "link_bw), not %s (pm_optimize_count searches pp, dp and split)",
                       pm_axis_name(kind));
    if ((int)goal < 0 || goal >= PM_OBJECTIVE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "optimize: objective %d is not one",
                       (int)goal);
    if (!(lo > 0) || !(hi > lo) || grid_points < 3 || !(rel_tol > 0) || max_iter < 1)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "optimize needs 0 < lo < hi, >= 3 grid points, rel_tol > 0 and "
                       "max_iter >= 1 (got lo %g, hi %g, %d points, rel_tol %g, max_iter %d)",
                       lo, hi, grid_points, rel_tol, max_iter);
    memset(out, 0, sizeof *out);
    pm_area a;
    pm_status st = objective_needs(s, goal, &a, err);
    for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++) {
        int evals = 0;
        objective o = {*s, kind, goal, (pm_mode)m, PM_OK, err, &evals};
        pm_maximum r;
        st = pm_maximize_log(density_fn, &o, lo, hi, grid_points, rel_tol, max_iter, &r);
        out->evaluations += evals;
        if (st == PM_ERR_CANCELLED)
            st = o.st; /* the evaluation's own error, already in err */
        else if (st == PM_ERR_NOMEM)
            st = pm_fail(err, st, NULL, NULL, "out of memory");
        if (st != PM_OK)
            break;
        out->best_value[m] = r.best_x;
        out->best_density[m] = r.best_f;
        out->bracket_lo[m] = r.lo;
        out->bracket_hi[m] = r.hi;
        out->iterations[m] = r.iterations;
        out->at_edge[m] = r.edge;
    }
    return st;
}

/* ------------------------------------------------------------ optimum of a count axis */

/* Whether pm_optimize_count searches axis k. */
static bool count_searched(pm_axis_kind k)
{
    return k == PM_AXIS_PP || k == PM_AXIS_DP || k == PM_AXIS_SPLIT;
}

/* The largest value count axis k takes in s (the smallest is 1): pp a layer per stage at
 * least; split the last stage's layers with one left to each other stage; dp the replicas of
 * the most devices a plan may have. */
static double count_domain_hi(const pm_scenario *s, pm_axis_kind k)
{
    const double L = s->model.layers, pp = pm_cluster_pp(&s->cluster);
    if (k == PM_AXIS_PP)
        return L < PM_MAX_STAGES ? L : PM_MAX_STAGES;
    if (k == PM_AXIS_SPLIT)
        return L - (pp - 1) > 1 ? L - (pp - 1) : 1;
    const double dp = floor((double)PM_MAX_DEVICES / ((double)s->cluster.devices * pp));
    return dp > 1 ? dp : 1;
}

/* Value v of count axis kind evaluated: each mode's objective into f[0..PM_MODE_COUNT), the
 * fit into *fits; else the refusal, in err. */
static pm_status count_eval(const pm_scenario *s, pm_axis_kind kind, pm_objective goal, double v,
                            double die_mm2, double *f, bool *fits, pm_error *err)
{
    pm_scenario t = *s;
    pm_estimate e;
    pm_status st = pm_scenario_set_axis(&t, kind, v, err);
    if (st == PM_OK)
        st = pm_estimate_compute(&t, &e, err);
    for (int m = 0; st == PM_OK && m < PM_MODE_COUNT; m++) {
        f[m] = objective_of(&t, &e, goal, (pm_mode)m, die_mm2);
        if (!isfinite(f[m]))
            st = pm_fail(err, PM_ERR_RANGE, NULL, NULL, "%s %.0f: the %s of %s is %g",
                         pm_axis_name(kind), v, pm_objective_column(goal),
                         pm_mode_name((pm_mode)m), f[m]);
    }
    *fits = st == PM_OK && e.fits_hbm;
    return st;
}

/* Per mode, the best of the n values' objectives (f[i * PM_MODE_COUNT + m], where ok[i]): the
 * smallest value within tie_rel_tol x the largest (ties go to the smaller value), the other
 * values of the tie, and the edge: a best better than every other value at an end of the range
 * beyond which the axis goes on (up to domain_hi). */
static void count_best(const double *f, const bool *ok, const bool *fits, size_t n,
                       double domain_hi, pm_optimum *out)
{
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double top = -INFINITY;
        size_t valid = 0, best = n;
        for (size_t i = 0; i < n; i++) {
            valid += ok[i];
            if (ok[i] && f[i * PM_MODE_COUNT + m] > top)
                top = f[i * PM_MODE_COUNT + m];
        }
        const double band = top - out->tie_rel_tol * fabs(top);
        for (size_t i = 0; i < n; i++) {
            if (!ok[i] || !(f[i * PM_MODE_COUNT + m] >= band))
                continue;
            if (best == n)
                best = i;
            else
                out->ties[m]++;
        }
        const double v = out->lo + (double)best;
        out->best_value[m] = out->bracket_lo[m] = out->bracket_hi[m] = v;
        out->best_density[m] = f[best * PM_MODE_COUNT + m];
        out->fits_hbm[m] = fits[best];
        if (out->ties[m] == 0 && valid > 1)
            out->at_edge[m] = best == 0 && out->lo > 1               ? -1
                              : best == n - 1 && out->hi < domain_hi ? 1
                                                                     : 0;
    }
}

pm_status pm_optimize_count(const pm_scenario *s, pm_axis_kind kind, pm_objective goal,
                            double lo, double hi, double tie_rel_tol, pm_optimum *out,
                            pm_error *err)
{
    if (!s || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "optimize: %s is NULL",
                       !s ? "the scenario" : "out");
    if ((int)kind < 0 || kind >= PM_AXIS_COUNT || !count_searched(kind))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "pm_optimize_count searches a count axis (pp, dp or split), not %s",
                       pm_axis_name(kind));
    if ((int)goal < 0 || goal >= PM_OBJECTIVE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "optimize: objective %d is not one",
                       (int)goal);
    const bool own = !(fabs(lo) > 0) && !(fabs(hi) > 0);
    if (!(tie_rel_tol >= 0 && tie_rel_tol < 1) ||
        (!own && !(lo >= 1 && hi >= lo && hi <= axis_count_max(kind) &&
                   !(fabs(lo - round(lo)) > 0) && !(fabs(hi - round(hi)) > 0))))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "optimize %s needs integers 1 <= lo <= hi <= %.0f (or 0 and 0: the "
                       "axis's own range) and 0 <= tie_rel_tol < 1 (got lo %g, hi %g, "
                       "tie_rel_tol %g)",
                       pm_axis_name(kind), axis_count_max(kind), lo, hi, tie_rel_tol);
    *out = (pm_optimum){.exhaustive = true, .tie_rel_tol = tie_rel_tol};
    pm_area a;
    pm_status st = objective_needs(s, goal, &a, err);
    if (st != PM_OK)
        return st;
    const double domain_hi = count_domain_hi(s, kind);
    if (own) /* dp: the sweep's default, its densities being flat */
        lo = 1, hi = kind == PM_AXIS_DP && domain_hi > axes[kind].hi ? axes[kind].hi : domain_hi;
    out->lo = lo;
    out->hi = hi;
    const size_t n = (size_t)(hi - lo) + 1;
    double *f = pm_malloc(n * PM_MODE_COUNT * sizeof *f);
    bool *ok = pm_malloc(n * sizeof *ok), *fits = pm_malloc(n * sizeof *fits);
    pm_error first = {.status = PM_OK};
    for (size_t i = 0; f && ok && fits && i < n && st == PM_OK; i++) {
        pm_error e2;
        const double v = lo + (double)i;
        out->evaluations++;
        st = count_eval(s, kind, goal, v, a.die_mm2, f + i * PM_MODE_COUNT, &fits[i], &e2);
        ok[i] = st == PM_OK;
        if (st == PM_ERR_NOMEM)
            break;
        if (st != PM_OK && out->skipped++ == 0) {
            first = e2;
            out->first_skipped = v;
            pm_error_format(&e2, out->first_skipped_error, sizeof out->first_skipped_error);
        }
        st = PM_OK;
    }
    if (!f || !ok || !fits || st == PM_ERR_NOMEM)
        st = pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    else if ((size_t)out->skipped == n)
        st = pm_fail(err, first.status, first.file, first.path,
                     "every %s in [%.0f, %.0f] was refused; the first (%.0f): %s",
                     pm_axis_name(kind), lo, hi, lo, first.message);
    else
        count_best(f, ok, fits, n, domain_hi, out);
    pm_free(f);
    pm_free(ok);
    pm_free(fits);
    return st;
}

pm_status pm_optimize_spec_parse(const char *spec, pm_axis_kind *kind, double *lo, double *hi,
                                 pm_error *err)
{
    if (!spec || !kind || !lo || !hi)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL specification or output");
    const char *eq = strchr(spec, '=');
    const char *colon = eq ? strchr(eq + 1, ':') : NULL;
    if (eq && (!colon || strchr(colon + 1, ':')))
        return pm_fail(err, PM_ERR_VALUE, NULL, NULL, "expected AXIS or AXIS=LO:HI (got '%s')",
                       spec);
    const size_t name_len = eq ? (size_t)(eq - spec) : strlen(spec);
    /* The axes the search takes: the continuous ones and the counts pm_optimize_count
     * searches, named before anything is parsed. */
    char names[128] = "";
    const char *cont[PM_AXIS_COUNT];
    size_t n_cont = 0;
    int found = -1;
    for (int k = 0; k < PM_AXIS_COUNT; k++) {
        const char *n = axes[k].name;
        if (strlen(n) == name_len && strncmp(spec, n, name_len) == 0)
            found = k;
        if (!pm_axis_is_count((pm_axis_kind)k) || count_searched((pm_axis_kind)k)) {
            cont[n_cont++] = n;
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     names[0] ? ", " : "", n);
        }
    }
    if (found < 0) {
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)(name_len < 63 ? name_len : 63), spec);
        const char *near = pm_suggest(word, cont, n_cont);
        return pm_fail(err, PM_ERR_VALUE, NULL, NULL, "unknown axis \"%.*s\" (%s%s%sexpected %s)",
                       (int)name_len, spec, near ? "did you mean \"" : "", near ? near : "",
                       near ? "\"? " : "", names);
    }
    const bool count = pm_axis_is_count((pm_axis_kind)found);
    if (count && !count_searched((pm_axis_kind)found))
        return pm_fail(err, PM_ERR_VALUE, NULL, NULL,
                       "%s is a count the optimum search does not take (it takes %s); compare "
                       "its values with a sweep of %s",
                       axes[found].name, names, axes[found].name);
    if (!eq) { /* the axis's default sweep range; a count's own range in the scenario */
        *kind = (pm_axis_kind)found;
        *lo = count ? 0.0 : axes[found].lo;
        *hi = count ? 0.0 : axes[found].hi;
        return PM_OK;
    }
    /* LO and HI each read as the axis reads one value: bare in its unit, or with a unit. */
    char part[2][128];
    const size_t lo_len = (size_t)(colon - eq - 1);
    if (lo_len >= sizeof part[0] || strlen(colon + 1) >= sizeof part[1])
        return pm_fail(err, PM_ERR_RANGE, NULL, NULL, "range part too long in '%s'", spec);
    snprintf(part[0], sizeof part[0], "%.*s", (int)lo_len, eq + 1);
    snprintf(part[1], sizeof part[1], "%s", colon + 1);
    pm_error e2;
    if (parse_value(part[0], (pm_axis_kind)found, spec, lo, &e2) != PM_OK ||
        parse_value(part[1], (pm_axis_kind)found, spec, hi, &e2) != PM_OK)
        return pm_fail(err, e2.status, NULL, NULL, "%s", e2.message);
    if (!(*hi > *lo))
        return pm_fail(err, PM_ERR_RANGE, NULL, NULL, "HI must be greater than LO (got '%s')",
                       spec);
    *kind = (pm_axis_kind)found;
    return PM_OK;
}

/* Warning i of a count axis's search (pm_optimum_warning's after the others): the ties, the
 * values skipped, a best that does not fit the HBM. */
static bool count_warning(pm_axis_kind kind, pm_objective goal, const pm_optimum *opt, size_t i,
                          char *note, size_t n)
{
    const char *col = axes[kind].column;
    size_t k = 0;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        if (opt->ties[m] > 0 && k++ == i) {
            if (note)
                snprintf(note, n,
                         "%s: %d values of %s in [%.0f, %.0f] give the best %s within a "
                         "relative %g%s: the smallest, %.0f, is reported (ties go to the "
                         "smaller value)",
                         pm_mode_name((pm_mode)m), opt->ties[m] + 1, col, opt->lo, opt->hi,
                         pm_objective_column(goal), opt->tie_rel_tol,
                         kind == PM_AXIS_DP ? " (replicas multiply tokens/s, devices, dollars "
                                              "and joules alike: the objective is flat in dp)"
                                            : "",
                         opt->best_value[m]);
            return true;
        }
    if (opt->skipped > 0 && k++ == i) {
        if (note)
            snprintf(note, n, "%d of the %d values of %s in [%.0f, %.0f] were refused and "
                              "skipped; the first, %.0f: %s",
                     opt->skipped, opt->evaluations, col, opt->lo, opt->hi, opt->first_skipped,
                     opt->first_skipped_error);
        return true;
    }
    for (int m = 0; m < PM_MODE_COUNT; m++)
        if (!opt->fits_hbm[m] && k++ == i) {
            if (note)
                snprintf(note, n,
                         "%s: at the best %s (%.0f) the weights and KV cache per device exceed "
                         "the usable HBM: the times are of memory the device does not have",
                         pm_mode_name((pm_mode)m), col, opt->best_value[m]);
            return true;
        }
    return false;
}

bool pm_optimum_warning(const pm_scenario *s, pm_axis_kind kind, pm_objective goal,
                        const pm_optimum *opt, size_t i, char *note, size_t n)
{
    if (!s || !opt || (int)kind < 0 || kind >= PM_AXIS_COUNT)
        return false;
    size_t k = 0;
    /* A best at the range's end where the objective still rises is the range's, not the
     * axis's: said, never left to be read as the optimum. */
    for (int m = 0; m < PM_MODE_COUNT; m++)
        if (opt->at_edge[m] && k++ == i) {
            if (note)
                snprintf(note, n,
                         "%s: the best %s is the range's %s end (%.6g) and %s still rises "
                         "toward it: the optimum may lie beyond; widen the range (%s=LO:HI)",
                         pm_mode_name((pm_mode)m), axes[kind].column,
                         opt->at_edge[m] < 0 ? "lower" : "upper",
                         pm_axis_display_value(kind, opt->best_value[m]),
                         pm_objective_column(goal), axes[kind].name);
            return true;
        }
    /* A best that is a die no reticle can print (issue 41): the search itself is over the
     * modelled objective, buildable or not. Only l2 and compute change the die. */
    for (int m = 0; (kind == PM_AXIS_L2 || kind == PM_AXIS_COMPUTE) && m < PM_MODE_COUNT; m++) {
        pm_scenario t = *s;
        t.provenance = NULL;
        double mm2 = 0.0;
        if (pm_scenario_set_axis(&t, kind, opt->best_value[m], NULL) == PM_OK &&
            pm_die_over_reticle(&t.accel, &mm2) && k++ == i) {
            if (note)
                snprintf(note, n,
                         "%s: the best %s (%.6g) is a die of %.0f mm2, over the %.0f mm2 "
                         "reticle: it cannot be built as one piece of silicon",
                         pm_mode_name((pm_mode)m), axes[kind].column,
                         pm_axis_display_value(kind, opt->best_value[m]), mm2, PM_RETICLE_MM2);
            return true;
        }
    }
    return opt->exhaustive && count_warning(kind, goal, opt, i - k, note, n);
}
