/*
 * sweep_run.c - the sweep engine. The grid (up to four axes, row-major, last axis fastest) or
 * one contiguous slice of it is cut into blocks; worker threads claim blocks in order and
 * evaluate them into a ring of 2 x threads block buffers; the calling thread hands finished
 * blocks to the callback strictly in order, so the output is identical whatever the thread
 * count, and memory is bounded by the ring, not by the grid. A worker waits when the ring is
 * full (the callback is slower than the evaluation); the callback's thread waits for the next
 * block in order.
 *
 * May call: alloc.c, area.c, data.c, error.c, estimate.c, plan.c, report.c, sweep.c.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

size_t pm_sweep_size(const pm_axis *axes, size_t n_axes)
{
    if (!axes || n_axes == 0)
        return 0;
    size_t total = 1;
    for (size_t a = 0; a < n_axes; a++) {
        if (axes[a].n_values == 0)
            return 0;
        if (total > SIZE_MAX / axes[a].n_values)
            return SIZE_MAX;
        total *= axes[a].n_values;
    }
    return total;
}

/* The seq axis's warning: its largest value beyond the model's trained context. */
static bool seq_warning(const pm_scenario *base, const pm_axis *ax, char *note, size_t n)
{
    const int max_pos = base->model.max_position_embeddings;
    double top = 0.0;
    for (size_t i = 0; i < ax->n_values; i++)
        top = ax->values[i] > top ? ax->values[i] : top;
    if (max_pos <= 0 || top <= (double)max_pos)
        return false;
    if (note)
        snprintf(note, n,
                 "the seq axis reaches %.0f tokens, beyond the model's max_position_embeddings %d "
                 "(model %s)",
                 top, max_pos, base->model.name);
    return true;
}

/* The split's warning: the points of the devices and expert-parallel axes (each the base's
 * value where the sweep has no such axis) at which the model's heads, KV heads, MLP or expert
 * columns do not divide (pm_shard.uneven), where the busiest device's share is modelled. */
static bool split_warning(const pm_scenario *base, const pm_axis *dev, const pm_axis *ep,
                          char *note, size_t n)
{
    pm_scenario t = *base;
    char list[200] = "";
    size_t shown = 0, uneven = 0;
    const size_t nd = dev ? dev->n_values : 1, ne = ep ? ep->n_values : 1;
    for (size_t i = 0; i < nd; i++)
        for (size_t j = 0; j < ne; j++) {
            if (dev)
                t.cluster.devices = (int)dev->values[i];
            if (ep)
                t.cluster.expert_parallel = (int)ep->values[j];
            pm_shard sh;
            if (pm_shard_compute(&t, &sh, NULL) != PM_OK || !sh.uneven)
                continue; /* a point the model refuses fails on its own */
            uneven++;
            const size_t used = strlen(list);
            if (shown == 8 || used + 40 >= sizeof list)
                continue;
            if (ep)
                snprintf(list + used, sizeof list - used, "%s%d devices with ep %d",
                         shown ? ", " : "", t.cluster.devices, t.cluster.expert_parallel);
            else
                snprintf(list + used, sizeof list - used, "%s%d", shown ? ", " : "",
                         t.cluster.devices);
            shown++;
        }
    if (uneven == 0)
        return false;
    if (note)
        snprintf(note, n,
                 "model %s does not split evenly over %zu of the %s (%s%s): the busiest "
                 "device's share is modelled there; engines that split evenly (vLLM, "
                 "TensorRT-LLM) refuse them",
                 base->model.name, uneven,
                 !ep ? "devices axis's counts"
                 : dev ? "grid's device and expert-parallel counts"
                       : "ep axis's expert-parallel degrees",
                 list, uneven > shown ? ", ..." : "");
    return true;
}

/* A die over the reticle somewhere along an axis that grows it (l2, compute), each axis with
 * the others at the scenario's values: the first value over, and how many are. */
static bool reticle_warning(const pm_scenario *base, const pm_axis *ax, char *note, size_t n)
{
    pm_scenario t = *base;
    t.provenance = NULL;
    size_t over = 0;
    double first = 0.0, first_mm2 = 0.0;
    const char *which = "die";
    for (size_t v = 0; v < ax->n_values; v++) {
        t.accel = base->accel;
        double mm2;
        const char *name;
        if (pm_scenario_set_axis(&t, ax->kind, ax->values[v], NULL) != PM_OK ||
            !pm_die_over_reticle_named(&t.accel, &mm2, &name))
            continue;
        if (over++ == 0) {
            first = ax->values[v];
            first_mm2 = mm2;
            which = name;
        }
    }
    if (over == 0)
        return false;
    if (note)
        snprintf(note, n,
                 "accelerator %s: the modelled %s is over the %.0f mm2 reticle at %zu of the %s "
                 "axis's %zu values (from %s %.6g: %.0f mm2): no such die can be built as one "
                 "piece of silicon",
                 base->accel.name, which, PM_RETICLE_MM2, over, pm_axis_name(ax->kind),
                 ax->n_values, pm_axis_column(ax->kind), pm_axis_display_value(ax->kind, first),
                 first_mm2);
    return true;
}

/* The axes a sweep's warnings read: seq, devices, ep, and those that grow a die (l2, compute). */
typedef struct warned_axes {
    const pm_axis *seq, *dev, *ep, *die[2];
} warned_axes;

static warned_axes warned_of(const pm_axis *axes, size_t n_axes)
{
    warned_axes w = {0};
    for (size_t a = 0; a < n_axes; a++) {
        if (axes[a].kind == PM_AXIS_L2 || axes[a].kind == PM_AXIS_COMPUTE)
            w.die[axes[a].kind == PM_AXIS_COMPUTE] = &axes[a];
        else if (axes[a].kind == PM_AXIS_SEQ)
            w.seq = &axes[a];
        else if (axes[a].kind == PM_AXIS_DEVICES)
            w.dev = &axes[a];
        else if (axes[a].kind == PM_AXIS_EP)
            w.ep = &axes[a];
    }
    return w;
}

bool pm_sweep_warning(const pm_scenario *base, const pm_axis *axes, size_t n_axes, size_t i,
                      char *note, size_t n)
{
    if (!base || !axes)
        return false;
    const warned_axes w = warned_of(axes, n_axes);
    /* The base's warnings, less those about a value an axis replaces. */
    const unsigned skip = (w.seq ? PM_WARN_SKIP_SEQ : 0u) |
                          (w.dev || w.ep ? PM_WARN_SKIP_SPLIT : 0u) |
                          (w.die[0] || w.die[1] ? PM_WARN_SKIP_DIE : 0u);
    size_t k = 0; /* the base's warnings */
    while (pm_scenario_warning_except(base, skip, k, NULL, 0))
        k++;
    if (i < k)
        return pm_scenario_warning_except(base, skip, i, note && n > 0 ? note : NULL, n);
    return pm_sweep_axes_warning(base, axes, n_axes, i - k, note, n);
}

bool pm_sweep_axes_warning(const pm_scenario *base, const pm_axis *axes, size_t n_axes,
                           size_t i, char *note, size_t n)
{
    if (!base || !axes)
        return false;
    char *out = note && n > 0 ? note : NULL;
    const warned_axes w = warned_of(axes, n_axes);
    size_t k = 0; /* the warnings before the one looked at */
    if (w.seq && seq_warning(base, w.seq, k == i ? out : NULL, n) && k++ == i)
        return true;
    for (int d = 0; d < 2; d++)
        if (w.die[d] && reticle_warning(base, w.die[d], k == i ? out : NULL, n) && k++ == i)
            return true;
    /* Ideal sharding is never uneven (pm_shard decides). */
    return (w.dev || w.ep) && split_warning(base, w.dev, w.ep, k == i ? out : NULL, n) && k == i;
}

void pm_sweep_tally_add(pm_sweep_tally *t, const pm_sweep_point *pts, size_t n)
{
    if (!t || !pts)
        return;
    for (size_t j = 0; j < n; j++) {
        const pm_sweep_point *p = &pts[j];
        if (p->status != PM_OK) {
            if (t->invalid++ == 0) {
                memcpy(t->first_invalid, p->axis_value, sizeof t->first_invalid);
                snprintf(t->first_error, sizeof t->first_error, "%s", p->error);
            }
        } else if (!p->estimate.fits_hbm && t->unfit++ == 0) {
            memcpy(t->first_unfit, p->axis_value, sizeof t->first_unfit);
        }
    }
    t->points += n;
}

/* " COLUMN VALUE, COLUMN VALUE" of a point, its values in the columns' units. */
static void put_point(const pm_axis *axes, size_t n_axes, const double *value, char *out,
                      size_t n)
{
    size_t k = 0;
    for (size_t a = 0; a < n_axes && a < PM_SWEEP_MAX_AXES; a++) {
        char num[PM_JSON_NUMBER_MAX];
        pm_json_number(pm_axis_display_value(axes[a].kind, value[a]), num, sizeof num);
        const bool room = out && k < n;
        const int w = snprintf(room ? out + k : NULL, room ? n - k : 0, "%s %s %s",
                               a ? "," : "", pm_axis_column(axes[a].kind), num);
        k += w > 0 ? (size_t)w : 0;
    }
}

bool pm_sweep_tally_warning(const pm_sweep_tally *t, const pm_axis *axes, size_t n_axes,
                            size_t i, char *note, size_t n)
{
    if (!t || !axes)
        return false;
    const size_t *counts[] = {&t->invalid, &t->unfit};
    size_t k = 0, which = 0;
    for (; which < 2; which++)
        if (*counts[which] > 0 && k++ == i)
            break;
    if (which == 2)
        return false;
    if (!note || n == 0)
        return true;
    char at[PM_SWEEP_MAX_AXES * 64];
    put_point(axes, n_axes, which == 0 ? t->first_invalid : t->first_unfit, at, sizeof at);
    if (which == 0)
        snprintf(note, n, "%zu of %zu points are not valid (NaN, their error in the last column; "
                          "the first at%s: %s)",
                 t->invalid, t->points, at, t->first_error);
    else
        snprintf(note, n, "fits_hbm 0 at %zu of %zu points (the first at%s): their weights and KV "
                          "cache exceed the usable HBM per device, memory the device does not have",
                 t->unfit, t->points, at);
    return true;
}

void pm_sweep_slice(size_t total, size_t k, size_t count, size_t *first, size_t *last)
{
    if (count == 0 || k >= count) {
        *first = *last = 0;
        return;
    }
    /* k * total / count without overflow: total < 2^64 and count small in practice, but be
     * exact anyway. */
    const size_t q = total / count, r = total % count;
    *first = k * q + (k < r ? k : r);
    *last = *first + q + (k < r ? 1 : 0);
}

/* What a block's consecutive points share: the estimate's plans (reused when only the
 * sequence length changes) and the die area (reused while the accelerator is unchanged), so a
 * sweep re-evaluates only what its axes change, with the same numbers as a point alone. */
typedef struct point_cache {
    pm_estimate_cache *estimate;
    bool area_valid;
    pm_accelerator area_key;
    pm_status area_st;
    pm_area area;
} point_cache;

static const pm_area *area_of(point_cache *pc, const pm_accelerator *a, pm_status *st)
{
    if (!pc->area_valid || memcmp(a, &pc->area_key, sizeof *a) != 0) {
        pc->area_st = pm_area_compute(a, &pc->area, NULL);
        pc->area_key = *a;
        pc->area_valid = true;
    }
    *st = pc->area_st;
    return &pc->area;
}

/* A point's silicon: the package's area, its largest die and the densities. */
static void fill_area(pm_sweep_point *pt, const pm_area *area, int devices)
{
    pt->die_mm2 = area->die_mm2;
    pt->largest_die_mm2 = pm_largest_die_mm2(area);
    pt->area_present = true;
    pt->area = *area;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        pt->density[m] = pm_density(&pt->estimate, (pm_mode)m, devices, area->die_mm2);
}

/* Evaluates one point of the grid. */
static void eval_point(const pm_scenario *base, const pm_axis *axes, size_t n_axes, size_t index,
                       point_cache *pc, pm_sweep_point *pt)
{
    pt->index = index;
    pt->die_mm2 = NAN;
    pt->largest_die_mm2 = NAN;
    pt->area_present = false;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        pt->density[m] = NAN;
    pt->error[0] = '\0';
    size_t rest = index;
    size_t idx[PM_SWEEP_MAX_AXES];
    for (size_t a = n_axes; a-- > 0;) {
        idx[a] = rest % axes[a].n_values;
        rest /= axes[a].n_values;
    }
    pm_scenario t = *base;
    t.provenance = NULL; /* read-only use; never freed here */
    pm_error err;
    pt->status = PM_OK;
    for (size_t a = 0; a < n_axes; a++) {
        pt->axis_value[a] = axes[a].values[idx[a]];
        if (pt->status == PM_OK)
            pt->status = pm_scenario_set_axis(&t, axes[a].kind, pt->axis_value[a], &err);
    }
    for (size_t a = n_axes; a < PM_SWEEP_MAX_AXES; a++)
        pt->axis_value[a] = NAN;
    if (pt->status == PM_OK)
        pt->status = pm_estimate_compute_cached(&t, pc->estimate, &pt->estimate, &err);
    if (pt->status != PM_OK) {
        pm_error_format(&err, pt->error, sizeof pt->error);
        memset(&pt->estimate, 0, sizeof pt->estimate);
        return;
    }
    pm_status ast;
    const pm_area *area = area_of(pc, &t.accel, &ast);
    if (ast == PM_OK)
        fill_area(pt, area, pm_cluster_total_devices(&t.cluster));
}

void pm_sweep_point_of(const pm_scenario *s, const pm_estimate *e, pm_sweep_point *pt)
{
    if (!pt)
        return;
    memset(pt, 0, sizeof *pt);
    pt->status = s && e ? PM_OK : PM_ERR_INVALID_ARG;
    pt->die_mm2 = pt->largest_die_mm2 = NAN;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        pt->density[m] = NAN;
    for (size_t a = 0; a < PM_SWEEP_MAX_AXES; a++)
        pt->axis_value[a] = NAN;
    if (!s || !e)
        return;
    pt->estimate = *e;
    pm_area area;
    if (s->accel.area.present && pm_area_compute(&s->accel, &area, NULL) == PM_OK)
        fill_area(pt, &area, pm_cluster_total_devices(&s->cluster));
}

typedef struct engine {
    const pm_scenario *base;
    const pm_axis *axes;
    size_t n_axes;
    size_t first, last, block, n_blocks, ring;
    pm_sweep_point *buf;   /* ring x block points */
    size_t *ready;         /* per ring slot: 1 + the block it holds, 0 when free */
    bool *nomem;           /* per ring slot: its block ran out of memory */
    bool *stopped;         /* per ring slot: prepare asked to stop */
    int (*prepare)(const pm_sweep_point *, size_t, void *);
    void *user;
    size_t next;           /* next block to claim */
    size_t delivered;      /* blocks handed to the callback */
    bool stop;
    pthread_mutex_t mu;
    pthread_cond_t cv_ready, cv_space;
} engine;

/* Points in block b (the last one may be short). */
static size_t block_len(const engine *e, size_t b)
{
    const size_t lo = e->first + b * e->block;
    return lo + e->block < e->last ? e->block : e->last - lo;
}

/* Evaluates block b into its ring slot; false when memory ran out (a failure of the sweep, not
 * an invalid point). */
static bool eval_block(engine *e, size_t b)
{
    pm_sweep_point *pts = &e->buf[(b % e->ring) * e->block];
    const size_t lo = e->first + b * e->block, hi = lo + block_len(e, b);
    point_cache pc = {.estimate = pm_estimate_cache_new()};
    bool ok = pc.estimate != NULL;
    for (size_t i = lo; i < hi && ok; i++) {
        eval_point(e->base, e->axes, e->n_axes, i, &pc, &pts[i - lo]);
        ok = pts[i - lo].status != PM_ERR_NOMEM;
    }
    pm_estimate_cache_free(pc.estimate);
    e->stopped[b % e->ring] = ok && e->prepare && e->prepare(pts, hi - lo, e->user) != 0;
    return ok;
}

static void *worker(void *arg)
{
    engine *e = arg;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->stop && e->next < e->n_blocks && e->next >= e->delivered + e->ring)
            pthread_cond_wait(&e->cv_space, &e->mu);
        if (e->stop || e->next >= e->n_blocks)
            break;
        const size_t b = e->next++;
        pthread_mutex_unlock(&e->mu);
        const bool ok = eval_block(e, b);
        pthread_mutex_lock(&e->mu);
        e->nomem[b % e->ring] = !ok;
        e->ready[b % e->ring] = b + 1;
        pthread_cond_broadcast(&e->cv_ready);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

/* The arguments' checks: a scenario, a callback, 1 to PM_SWEEP_MAX_AXES parsed axes, each
 * kind once. */
static pm_status check_args(const pm_scenario *base, const pm_axis *axes, size_t n_axes,
                            pm_sweep_fn fn, pm_error *err)
{
    if (!base || !axes || !fn || n_axes == 0 || n_axes > PM_SWEEP_MAX_AXES)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "pm_sweep_run needs a scenario, 1 to %d axes and a callback",
                       PM_SWEEP_MAX_AXES);
    for (size_t a = 0; a < n_axes; a++) {
        if ((int)axes[a].kind < 0 || axes[a].kind >= PM_AXIS_COUNT || !axes[a].values)
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "axis %zu is not parsed", a + 1);
        for (size_t b = 0; b < a; b++)
            if (axes[a].kind == axes[b].kind)
                return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                               "the axis \"%s\" appears twice", pm_axis_name(axes[a].kind));
    }
    return PM_OK;
}

/* Cuts e's slice [first, last) into blocks and sizes the ring; returns the threads to run. */
static int plan_blocks(engine *e, const pm_sweep_opts *o)
{
    int threads = o->threads > 0 ? o->threads : online_cpus();
    if (threads > PM_SWEEP_MAX_THREADS)
        threads = PM_SWEEP_MAX_THREADS;
    /* Default blocks: 1024 points, fewer when that would leave threads idle (8 blocks per
     * thread at least), never under 16 points (the hand-over costs a lock). */
    const size_t n_pts = e->last - e->first;
    e->block = o->block_points;
    if (!e->block) {
        e->block = n_pts / (8 * (size_t)threads);
        e->block = e->block < 16 ? 16 : e->block > 1024 ? 1024 : e->block;
    }
    e->n_blocks = (n_pts + e->block - 1) / e->block;
    if ((size_t)threads > e->n_blocks)
        threads = e->n_blocks ? (int)e->n_blocks : 1;
    e->ring = threads > 1 ? 2 * (size_t)threads : 1;
    return threads;
}

static void engine_free(engine *e)
{
    pm_free(e->buf);
    pm_free(e->ready);
    pm_free(e->nomem);
    pm_free(e->stopped);
}

/* One thread: each block evaluated, then handed over. */
static pm_status run_serial(engine *e, pm_sweep_fn fn, void *user)
{
    pm_status st = PM_OK;
    for (size_t b = 0; b < e->n_blocks && st == PM_OK; b++) {
        if (!eval_block(e, b)) {
            st = PM_ERR_NOMEM;
            break;
        }
        const size_t n = block_len(e, b);
        if (e->stopped[0] || fn(e->buf, n, user) != 0)
            st = PM_ERR_CANCELLED;
    }
    return st;
}

/* Worker threads evaluate; this thread hands the blocks over in order. */
static pm_status run_threaded(engine *e, int threads, pm_sweep_fn fn, void *user)
{
    pm_status st = PM_OK;
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv_ready, NULL);
    pthread_cond_init(&e->cv_space, NULL);
    pthread_t tid[PM_SWEEP_MAX_THREADS];
    int started = 0;
    for (; started < threads; started++)
        if (pthread_create(&tid[started], NULL, worker, e) != 0)
            break;
    if (started == 0) {
        /* No thread could start: evaluate on this one. */
        e->ring = 1;
        e->stop = true;
    }
    for (size_t d = 0; d < e->n_blocks && st == PM_OK; d++) {
        const size_t slot = d % e->ring;
        if (started == 0) {
            e->nomem[slot] = !eval_block(e, d);
        } else {
            pthread_mutex_lock(&e->mu);
            while (e->ready[slot] != d + 1)
                pthread_cond_wait(&e->cv_ready, &e->mu);
            pthread_mutex_unlock(&e->mu);
        }
        const size_t n = block_len(e, d);
        const bool nomem = e->nomem[slot];
        const int rc = nomem ? 0 : e->stopped[slot] ? 1 : fn(&e->buf[slot * e->block], n, user);
        pthread_mutex_lock(&e->mu);
        e->ready[slot] = 0;
        e->delivered = d + 1;
        if (nomem || rc != 0) {
            e->stop = true;
            st = nomem ? PM_ERR_NOMEM : PM_ERR_CANCELLED;
        }
        pthread_cond_broadcast(&e->cv_space);
        pthread_mutex_unlock(&e->mu);
    }
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    pthread_cond_destroy(&e->cv_space);
    pthread_cond_destroy(&e->cv_ready);
    pthread_mutex_destroy(&e->mu);
    return st;
}

pm_status pm_sweep_run(const pm_scenario *base, const pm_axis *axes, size_t n_axes,
                       const pm_sweep_opts *opts, pm_sweep_fn fn, void *user, pm_error *err)
{
    pm_status st = check_args(base, axes, n_axes, fn, err);
    if (st != PM_OK)
        return st;
    const pm_sweep_opts o = opts ? *opts : (pm_sweep_opts){0};
    if (o.threads < 0 || o.threads > PM_SWEEP_MAX_THREADS)
        return pm_fail(err, PM_ERR_RANGE, NULL, NULL,
                       "threads: expected 0 (every CPU) to %d (got %d)", PM_SWEEP_MAX_THREADS,
                       o.threads);
    const size_t count = o.shard_count ? o.shard_count : 1;
    if (o.shard_index >= count)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "slice %zu of %zu does not exist (slices count from 0)", o.shard_index,
                       count);
    const size_t total = pm_sweep_size(axes, n_axes);
    if (total == SIZE_MAX)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "the grid has too many points");
    engine e = {.base = base, .axes = axes, .n_axes = n_axes};
    pm_sweep_slice(total, o.shard_index, count, &e.first, &e.last);
    const int threads = plan_blocks(&e, &o);
    e.buf = pm_malloc(e.ring * e.block * sizeof *e.buf);
    e.ready = pm_calloc(e.ring, sizeof *e.ready);
    e.nomem = pm_calloc(e.ring, sizeof *e.nomem);
    e.stopped = pm_calloc(e.ring, sizeof *e.stopped);
    e.prepare = o.prepare;
    e.user = user;
    if (!e.buf || !e.ready || !e.nomem || !e.stopped) {
        engine_free(&e);
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory for the sweep buffers");
    }
    st = threads <= 1 ? run_serial(&e, fn, user) : run_threaded(&e, threads, fn, user);
    engine_free(&e);
    if (st == PM_ERR_NOMEM)
        return pm_fail(err, st, NULL, NULL, "out of memory evaluating the sweep");
    if (st == PM_ERR_CANCELLED)
        return pm_fail(err, st, NULL, NULL, "the sweep was stopped by its callback");
    return PM_OK;
}
