/*
 * sweep.c - design-space axes: parsing "AXIS=START:STOP:STEP" / "x2" / lists with units, an
 * axis's defaults fitted to a scenario, and setting an axis on a scenario. The optimum search
 * along an axis is optimum.c's. pm_best_over_reticle says where a best (the optimum's, the
 * search's, the co-design's) is a chip no reticle prints, pm_best_free_bandwidth where it took
 * bandwidth that moves no area or price as free.
 *
 * May call: accelerator.c, alloc.c, area.c, dtype.c, error.c, estimate.c, plan.c, units.c.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    const size_t limit = max_points ? max_points : PM_AXIS_MAX_POINTS;
    if (a->n_values >= limit)
        return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec, "more than %zu points",
                       limit);
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
static pm_status axis_list(const char *r, const char *spec, size_t max_points, pm_axis *out,
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
    /* A count's points are whole: a fractional increment would round onto its neighbours. */
    if (pm_axis_is_count(kind) && *step > 0 && fabs(*step - round(*step)) > 1e-9 * *step)
        return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec,
                       "%s takes integers: the step must be a whole number (got '%s')",
                       axes[kind].name, buf[2]);
    return PM_OK;
}

/* Points lo, lo+step, ... (step < 0: lo, lo x -step, ...) up to hi, inclusive within a rounding
 * tolerance, pushed onto a. The number of steps is counted from the range, never found by
 * stepping: a step below the precision of lo ("l2=1e30:1e30:1") left lo + i x step at lo, under
 * hi's tolerance for ten million pushes. */
static pm_status fill_range(pm_axis *a, size_t *cap, double lo, double hi, double step,
                            size_t max_points, const char *spec, pm_error *err)
{
    /* Refused before a value is held where the range has more points than allowed (0: the
     * library's PM_AXIS_MAX_POINTS): "batch=1:1e12:1" held gigabytes first. A geometric range
     * of a count is walked (its rounding merges points: the count is an upper bound). The
     * tolerance admits STOP when the steps' rounding falls short of it by 1e-9 of a step. */
    const size_t limit = max_points ? max_points : PM_AXIS_MAX_POINTS;
    const bool count = pm_axis_is_count(a->kind);
    const double q = step > 0 ? (hi - lo) / step : log(hi / lo) / log(-step);
    const double n = floor(q * (1.0 + 1e-12) + 1e-9) + 1.0;
    if (!(count && step < 0) && !(n <= (double)limit + 1.0)) {
        if (!isfinite(n)) /* a step below the range's precision: no count to print */
            return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec,
                           "more than %zu points (the step is too small for the range)", limit);
        return pm_fail(err, PM_ERR_RANGE, PM_ERROR_FILE_AXIS, spec,
                       "more than %zu points (%.3g in the range)", limit, n);
    }
    for (double i = 0; i < n; i++) {
        double v = step > 0 ? lo + i * step : lo * pow(-step, i);
        if (count) {
            v = round(v);
            /* Rounding merges points (a geometric range, or counts beyond 2^53): each value
             * taken once, and a geometric walk jumps to the first step past the last value. */
            if (a->n_values > 0 && v <= a->values[a->n_values - 1]) { /* rounding never falls */
                if (step < 0) {
                    const double next =
                        ceil(log((a->values[a->n_values - 1] + 0.5) / lo) / log(-step));
                    if (next > i + 1)
                        i = next - 1;
                }
                continue;
            }
        }
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
            if ((st = axis_list(r, spec, max_points, out, &cap, err)) != PM_OK)
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

/* (internal.h) pm_scenario_set_axis's fields, per axis: keep the two switches together. */
void pm_scenario_axis_copy(pm_scenario *s, const pm_scenario *from, pm_axis_kind k)
{
    switch (k) {
    case PM_AXIS_SP: s->cluster.sequence_parallel = from->cluster.sequence_parallel; break;
    case PM_AXIS_L2: s->accel.l2_capacity_bytes = from->accel.l2_capacity_bytes; break;
    case PM_AXIS_L2_BW:
        s->accel.l2_bandwidth_bytes_per_s = from->accel.l2_bandwidth_bytes_per_s;
        break;
    case PM_AXIS_COMPUTE:
        memcpy(s->accel.peak_flop_per_s, from->accel.peak_flop_per_s,
               sizeof s->accel.peak_flop_per_s);
        break;
    case PM_AXIS_HBM_BW:
        s->accel.hbm_bandwidth_bytes_per_s = from->accel.hbm_bandwidth_bytes_per_s;
        break;
    case PM_AXIS_LINK_BW:
        s->cluster.link_bandwidth_bytes_per_s = from->cluster.link_bandwidth_bytes_per_s;
        break;
    case PM_AXIS_DEVICES: s->cluster.devices = from->cluster.devices; break;
    case PM_AXIS_BATCH: s->workload.batch = from->workload.batch; break;
    case PM_AXIS_SEQ: s->workload.seq_len = from->workload.seq_len; break;
    case PM_AXIS_EP: s->cluster.expert_parallel = from->cluster.expert_parallel; break;
    case PM_AXIS_PP:
        s->cluster.pipeline_parallel = from->cluster.pipeline_parallel;
        memcpy(s->cluster.stage_layers, from->cluster.stage_layers,
               sizeof s->cluster.stage_layers);
        break;
    case PM_AXIS_DP: s->cluster.data_parallel = from->cluster.data_parallel; break;
    case PM_AXIS_SPLIT:
        memcpy(s->cluster.stage_layers, from->cluster.stage_layers,
               sizeof s->cluster.stage_layers);
        break;
    default: break;
    }
}

double pm_axis_count_max(pm_axis_kind k)
{
    return axis_count_max(k);
}

void pm_axis_default_range(pm_axis_kind k, double *lo, double *hi)
{
    *lo = axes[k].lo;
    *hi = axes[k].hi;
}

pm_status pm_axis_value_parse(const char *text, pm_axis_kind k, const char *spec, double *out,
                              pm_error *err)
{
    return parse_value(text, k, spec, out, err);
}

/* (internal.h) */
bool pm_best_over_reticle(const pm_scenario *s, pm_mode mode, const pm_axis_kind *kinds,
                          const double *values, int n_axes, char *note, size_t n)
{
    pm_scenario t = *s;
    t.provenance = NULL;
    char words[160];
    size_t w = 0;
    words[0] = '\0';
    for (int a = 0; a < n_axes; a++) {
        if (pm_scenario_set_axis(&t, kinds[a], values[a], NULL) != PM_OK)
            return false;
        if (w < sizeof words)
            w += (size_t)snprintf(words + w, sizeof words - w, "%s%s %.6g", a ? ", " : "",
                                  pm_axis_column(kinds[a]),
                                  pm_axis_display_value(kinds[a], values[a]));
    }
    double mm2 = 0.0;
    const char *which = "die";
    if (!pm_die_over_reticle_named(&t.accel, &mm2, &which))
        return false;
    if (note && n > 0)
        snprintf(note, n,
                 "%s: the best is at %s, where the modelled %s is %.0f mm2, over the %.0f mm2 "
                 "reticle: that chip cannot be built as one piece of silicon",
                 pm_mode_name(mode), words, which, mm2, PM_RETICLE_MM2);
    return true;
}

/* What a bandwidth axis keeps of the chip (pm_best_free_bandwidth's words), into out. */
static void kept_of(const pm_scenario *s, pm_axis_kind k, char *out, size_t n)
{
    switch (k) {
    case PM_AXIS_HBM_BW:
        snprintf(out, n, "the die keeps its %d HBM PHY sites, the device its HBM price",
                 s->accel.area.hbm_stacks);
        break;
    case PM_AXIS_LINK_BW:
        snprintf(out, n, "the die keeps its %d link PHYs", s->accel.area.links);
        break;
    default: snprintf(out, n, "the L2's area follows its capacity alone"); break;
    }
}

/* (internal.h) */
bool pm_best_free_bandwidth(const pm_scenario *s, pm_mode mode, const pm_axis_kind *kinds,
                            const double *values, int n_axes, char *note, size_t n)
{
    for (int a = 0; a < n_axes; a++) {
        const pm_axis_kind k = kinds[a];
        double own = 0.0;
        if ((k != PM_AXIS_HBM_BW && k != PM_AXIS_L2_BW && k != PM_AXIS_LINK_BW) ||
            !pm_scenario_axis_value(s, k, &own) || !(values[a] > own * (1.0 + 1e-9)))
            continue;
        if (note && n > 0) {
            char kept[96];
            kept_of(s, k, kept, sizeof kept);
            /* (a link's bandwidth is the cluster's; its PHYs are on the die) */
            snprintf(note, n,
                     "%s: the best is at %s %.6g, above the %s %.6g, at the chip's die area "
                     "and price: %s moves neither (%s), so the per-mm2 or per-dollar objective "
                     "took that bandwidth as free",
                     pm_mode_name(mode), pm_axis_column(k), pm_axis_display_value(k, values[a]),
                     k == PM_AXIS_LINK_BW ? "cluster's" : "chip's",
                     pm_axis_display_value(k, own), pm_axis_name(k), kept);
        }
        return true;
    }
    return false;
}
