/*
 * test_sweep_run.c - the sweep engine and the optimum search: grid order and slices, identical
 * results whatever the thread count and block size, shards that join into the whole grid,
 * invalid points reported in place, a callback that stops the sweep, sweeps run from several
 * threads at once (the library keeps no mutable global state), and the maximiser on functions
 * whose maximum is known in closed form.
 */
#include <pthread.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#include "testutil.h"
#include "internal.h"

static pm_scenario load(const char *name)
{
    return pm_test_load(name, NULL, 0);
}

static pm_axis axis(const char *spec)
{
    pm_axis a;
    pm_error err;
    if (pm_axis_parse(spec, 0, &a, &err) != PM_OK)
        fail_msg("pm_axis_parse(%s): %s", spec, err.message);
    return a;
}

/* Collects what the callback receives. */
typedef struct collect {
    pm_sweep_point *pts;
    size_t n, cap;
    size_t calls;
    size_t stop_after; /* 0: never stop */
} collect;

static int on_points(const pm_sweep_point *p, size_t n, void *user)
{
    collect *c = user;
    c->calls++;
    if (c->n + n > c->cap) {
        c->cap = (c->n + n) * 2;
        c->pts = realloc(c->pts, c->cap * sizeof *c->pts);
        assert_non_null(c->pts);
    }
    memcpy(c->pts + c->n, p, n * sizeof *p);
    c->n += n;
    return c->stop_after && c->calls >= c->stop_after;
}

static collect run(const pm_scenario *s, const pm_axis *ax, size_t n_ax, int threads,
                   size_t block, size_t shard, size_t shards)
{
    collect c = {0};
    pm_sweep_opts o = {.threads = threads, .shard_index = shard, .shard_count = shards,
                       .block_points = block};
    pm_error err;
    pm_status st = pm_sweep_run(s, ax, n_ax, &o, on_points, &c, &err);
    if (st != PM_OK)
        fail_msg("pm_sweep_run: %s", err.message);
    return c;
}

/* Same points, bit for bit, in the same order. */
static void assert_same_points(const collect *a, const pm_sweep_point *b, size_t n)
{
    assert_int_equal(a->n, n);
    for (size_t i = 0; i < n; i++) {
        const pm_sweep_point *p = &a->pts[i], *q = &b[i];
        assert_int_equal(p->index, q->index);
        assert_int_equal(p->status, q->status);
        assert_string_equal(p->error, q->error);
        assert_memory_equal(&p->estimate, &q->estimate, sizeof p->estimate);
        for (int m = 0; m < PM_MODE_COUNT; m++)
            assert_memory_equal(&p->density[m], &q->density[m], sizeof(double));
    }
}

static void test_grid_order_slices_and_threads(void **state)
{
    (void)state;
    pm_scenario s = load("llama8b");
    /* 5 x 3 = 15 points; devices 64 is invalid for Llama3-8B's 32 heads. */
    pm_axis ax[2] = {axis("l2=8MiB:40MiB:8MiB"), axis("devices=2,8,64")};
    assert_int_equal(pm_sweep_size(ax, 2), 15);
    collect ref = run(&s, ax, 2, 1, 0, 0, 0);
    assert_int_equal(ref.n, 15);
    for (size_t i = 0; i < ref.n; i++) {
        const pm_sweep_point *p = &ref.pts[i];
        /* Row-major, the last axis fastest. */
        assert_int_equal(p->index, i);
        assert_rel(p->axis_value[0], (8.0 + 8.0 * (double)(i / 3)) * 1048576.0, 0.0);
        assert_rel(p->axis_value[1], (double)(i % 3 == 0 ? 2 : i % 3 == 1 ? 8 : 64), 0.0);
        if (i % 3 == 2) {
            assert_int_equal(p->status, PM_ERR_INCONSISTENT);
            assert_non_null(strstr(p->error, "attention heads"));
        } else {
            assert_int_equal(p->status, PM_OK);
            /* Each point equals the estimate of its own scenario. */
            pm_scenario t = s;
            t.provenance = NULL;
            t.accel.l2_capacity_bytes = p->axis_value[0];
            t.cluster.devices = (int)p->axis_value[1];
            pm_estimate e;
            assert_int_equal(pm_estimate_compute(&t, &e, NULL), PM_OK);
            assert_memory_equal(&e, &p->estimate, sizeof e);
            assert_true(p->die_mm2 > 0 && p->density[PM_MODE_PRESERVE] > 0);
        }
    }
    /* Any thread count and block size: the same points in the same order. */
    const int threads[] = {2, 3, 8};
    const size_t blocks[] = {1, 4, 1024};
    for (size_t t = 0; t < 3; t++)
        for (size_t b = 0; b < 3; b++) {
            collect c = run(&s, ax, 2, threads[t], blocks[b], 0, 0);
            assert_same_points(&c, ref.pts, ref.n);
            assert_int_equal(c.calls, (ref.n + blocks[b] - 1) / blocks[b]);
            free(c.pts);
        }
    /* Shards: contiguous, in order, joined they are the grid. */
    for (size_t shards = 1; shards <= 16; shards += 5) {
        size_t at = 0;
        for (size_t k = 0; k < shards; k++) {
            size_t first, last;
            pm_sweep_slice(ref.n, k, shards, &first, &last);
            assert_int_equal(first, at);
            assert_true(last - first == ref.n / shards || last - first == ref.n / shards + 1);
            collect c = run(&s, ax, 2, 2, 2, k, shards);
            assert_same_points(&c, ref.pts + first, last - first);
            free(c.pts);
            at = last;
        }
        assert_int_equal(at, ref.n);
    }
    free(ref.pts);
    pm_axis_release(&ax[0]);
    pm_axis_release(&ax[1]);
    pm_scenario_release(&s);
}

/* A sweep reuses what its axes do not change (the decode plans across sequence lengths, the
 * accelerator's figures and area across sequence lengths and batches) with the numbers of each
 * point's own pm_estimate_compute to the last bit, over single axes and grids, for a dense
 * model, a windowed one (local layers) and one with energy and cost data. */
static void check_sweep_matches_points(const char *scenario, const char *const *specs,
                                       size_t n_ax)
{
    pm_scenario s = load(scenario);
    pm_axis ax[PM_SWEEP_MAX_AXES];
    for (size_t a = 0; a < n_ax; a++)
        ax[a] = axis(specs[a]);
    collect c = run(&s, ax, n_ax, 1, 0, 0, 0);
    assert_int_equal(c.n, pm_sweep_size(ax, n_ax));
    size_t valid = 0;
    for (size_t i = 0; i < c.n; i++) {
        const pm_sweep_point *p = &c.pts[i];
        pm_scenario t = s;
        t.provenance = NULL;
        pm_status st = PM_OK;
        for (size_t a = 0; a < n_ax && st == PM_OK; a++)
            st = pm_scenario_set_axis(&t, ax[a].kind, p->axis_value[a], NULL);
        pm_estimate e;
        if (st == PM_OK)
            st = pm_estimate_compute(&t, &e, NULL);
        assert_int_equal(p->status, st);
        if (st != PM_OK)
            continue;
        valid++;
        if (memcmp(&e, &p->estimate, sizeof e) != 0)
            fail_msg("%s, %s: point %zu differs from its own estimate (preserve %.17g vs %.17g)",
                     scenario, specs[0], i, p->estimate.modes[PM_MODE_PRESERVE].request_s,
                     e.modes[PM_MODE_PRESERVE].request_s);
    }
    assert_true(valid > c.n / 2);
    free(c.pts);
    for (size_t a = 0; a < n_ax; a++)
        pm_axis_release(&ax[a]);
    pm_scenario_release(&s);
}

static void test_sweeps_reuse_with_identical_numbers(void **state)
{
    (void)state;
    const char *seq[] = {"seq=1k:100k:3k"}, *batch[] = {"batch=1:256:x2"};
    const char *l2_seq[] = {"l2=16MiB:256MiB:48MiB", "seq=2k:96k:8k"};
    const char *seq_batch[] = {"seq=4k:80k:19k", "batch=1,3,16,64"};
    const char *batch_seq[] = {"batch=1,4,32", "seq=1k:90k:7k"};
    const char *link_seq[] = {"link_bw=100Gbps:900Gbps:400Gbps", "seq=8k:72k:16k"};
    const char *scenarios[] = {"llama70b", "gemma2-9b", "llama70b-h100", "qwen3-30b-a3b",
                               "llama4-scout-h100"};
    for (size_t k = 0; k < PM_ARRAY_LEN(scenarios); k++) {
        check_sweep_matches_points(scenarios[k], seq, 1);
        check_sweep_matches_points(scenarios[k], batch, 1);
        check_sweep_matches_points(scenarios[k], l2_seq, 2);
        check_sweep_matches_points(scenarios[k], seq_batch, 2);
        check_sweep_matches_points(scenarios[k], batch_seq, 2);
        check_sweep_matches_points(scenarios[k], link_seq, 2);
    }
}

/* What is reused: a sequence sweep builds the decode plans and the accelerator's figures once,
 * a batch sweep the accelerator's figures once and the decode plans per batch, an l2 sweep
 * both per point. */
static void test_cache_rebuilds_only_what_changes(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_estimate_cache *c = pm_estimate_cache_new();
    assert_non_null(c);
    pm_estimate e;
    int dec = -1, acc = -1;
    for (int64_t seq = 2048; seq <= 65536; seq *= 2) {
        pm_scenario t = s;
        t.workload.seq_len = seq;
        assert_int_equal(pm_estimate_compute_cached(&t, c, &e, NULL), PM_OK);
    }
    pm_estimate_cache_builds(c, &dec, &acc);
    assert_int_equal(dec, 1); /* 6 sequence lengths, one decode build */
    assert_int_equal(acc, 1);
    assert_true(s.workload.batch % 3 != 0); /* so that every batch below differs from it */
    for (int b = 3; b <= 24; b *= 2) {
        pm_scenario t = s;
        t.workload.batch = b;
        assert_int_equal(pm_estimate_compute_cached(&t, c, &e, NULL), PM_OK);
    }
    pm_estimate_cache_builds(c, &dec, &acc);
    assert_int_equal(dec, 1 + 4); /* batch 3, 6, 12, 24: each differs from the last point */
    assert_int_equal(acc, 1);
    pm_scenario t = s;
    t.accel.l2_capacity_bytes *= 2.0;
    assert_int_equal(pm_estimate_compute_cached(&t, c, &e, NULL), PM_OK);
    pm_estimate_cache_builds(c, &dec, &acc);
    assert_int_equal(dec, 6);
    assert_int_equal(acc, 2);
    pm_estimate_cache_free(c);
    pm_scenario_release(&s);
}

static void test_callback_stops_and_bad_arguments(void **state)
{
    (void)state;
    pm_scenario s = load("llama8b");
    pm_axis ax[2] = {axis("l2=8MiB:256MiB:8MiB"), axis("l2=8MiB")};
    for (int threads = 1; threads <= 4; threads += 3) {
        collect c = {.stop_after = 2};
        pm_sweep_opts o = {.threads = threads, .block_points = 3};
        pm_error err;
        assert_int_equal(pm_sweep_run(&s, ax, 1, &o, on_points, &c, &err), PM_ERR_CANCELLED);
        assert_int_equal(c.calls, 2);
        assert_int_equal(c.n, 6);
        free(c.pts);
    }
    pm_error err;
    collect c = {0};
    pm_sweep_opts bad_shard = {.threads = 1, .shard_index = 3, .shard_count = 3};
    assert_int_equal(pm_sweep_run(&s, ax, 1, &bad_shard, on_points, &c, &err), PM_ERR_INVALID_ARG);
    /* The thread table holds PM_SWEEP_MAX_THREADS: more, or a negative count, is refused. */
    for (int t = 0; t < 2; t++) {
        pm_sweep_opts bad_threads = {.threads = t ? -1 : PM_SWEEP_MAX_THREADS + 1};
        assert_int_equal(pm_sweep_run(&s, ax, 1, &bad_threads, on_points, &c, &err),
                         PM_ERR_RANGE);
        assert_non_null(strstr(err.message, "threads: expected 0 (every CPU) to 256"));
    }
    assert_int_equal(pm_sweep_run(&s, ax, 2, NULL, on_points, &c, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "twice"));
    assert_int_equal(pm_sweep_run(&s, ax, 0, NULL, on_points, &c, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_sweep_run(&s, ax, 1, NULL, NULL, &c, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(c.calls, 0);
    pm_axis_release(&ax[0]);
    pm_axis_release(&ax[1]);
    pm_scenario_release(&s);
}

/* The prepare hook: called on every block, before the in-order callback sees it. */
typedef struct prep {
    unsigned char seen[64];   /* by block start: prepared */
    size_t delivered, stop_from;
    bool order_ok;
} prep;

static int prep_block(const pm_sweep_point *p, size_t n, void *user)
{
    prep *q = user;
    (void)n;
    q->seen[p[0].index] = 1; /* distinct elements per block: no race */
    return q->stop_from && p[0].index >= q->stop_from;
}

static int after_prep(const pm_sweep_point *p, size_t n, void *user)
{
    prep *q = user;
    if (!q->seen[p[0].index] || p[0].index != q->delivered)
        q->order_ok = false;
    q->delivered += n;
    return 0;
}

static void test_prepare_hook(void **state)
{
    (void)state;
    pm_scenario s = load("llama8b");
    pm_axis ax = axis("l2=8MiB:256MiB:8MiB"); /* 32 points */
    for (int threads = 1; threads <= 3; threads += 2) {
        prep q = {.order_ok = true};
        pm_sweep_opts o = {.threads = threads, .block_points = 3, .prepare = prep_block};
        assert_int_equal(pm_sweep_run(&s, &ax, 1, &o, after_prep, &q, NULL), PM_OK);
        assert_true(q.order_ok);
        assert_int_equal(q.delivered, 32);
        /* Non-zero from prepare stops the sweep: nothing from block 6 on is delivered. */
        prep r = {.order_ok = true, .stop_from = 6};
        assert_int_equal(pm_sweep_run(&s, &ax, 1, &o, after_prep, &r, NULL), PM_ERR_CANCELLED);
        assert_true(r.order_ok);
        assert_int_equal(r.delivered, 6);
    }
    pm_axis_release(&ax);
    pm_scenario_release(&s);
}

/* ---------------------------------------------------------------- reentrancy */

typedef struct job {
    const pm_scenario *s;
    const pm_axis *ax;
    collect out;
} job;

static void *sweep_job(void *arg)
{
    job *j = arg;
    pm_sweep_opts o = {.threads = 2, .block_points = 7};
    if (pm_sweep_run(j->s, j->ax, 2, &o, on_points, &j->out, NULL) != PM_OK)
        j->out.n = (size_t)-1;
    return NULL;
}

static void test_sweeps_from_several_threads(void **state)
{
    (void)state;
    const char *names[] = {"llama70b", "llama8b", "qwen2-7b", "phi3-medium"};
    pm_scenario s[4];
    pm_axis ax[2] = {axis("batch=1,4,16"), axis("seq=1k:16k:x2")};
    collect ref[4];
    for (int i = 0; i < 4; i++) {
        s[i] = load(names[i]);
        ref[i] = run(&s[i], ax, 2, 1, 0, 0, 0);
    }
    pthread_t tid[4];
    job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (job){&s[i], ax, {0}};
        assert_int_equal(pthread_create(&tid[i], NULL, sweep_job, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(tid[i], NULL);
        assert_same_points(&jobs[i].out, ref[i].pts, ref[i].n);
        free(jobs[i].out.pts);
        free(ref[i].pts);
        pm_scenario_release(&s[i]);
    }
    pm_axis_release(&ax[0]);
    pm_axis_release(&ax[1]);
}

/* ---------------------------------------------------------------- maximiser */

static double smooth(double x, void *u)
{
    (void)u; /* maximum 0 at x = 37, a parabola in log x */
    const double d = log(x) - log(37.0);
    return -d * d;
}

static double kinked(double x, void *u)
{
    (void)u; /* maximum 3 at x = 5.5, not differentiable there: like density at a spill */
    return 3.0 - fabs(log(x) - log(5.5));
}

static double rising(double x, void *u)
{
    (void)u;
    return x;
}

static double falling(double x, void *u)
{
    (void)u;
    return -x;
}

static double flat(double x, void *u)
{
    (void)u;
    (void)x;
    return 1.0;
}

static double fails(double x, void *u)
{
    int *calls = u;
    return ++*calls > 5 ? NAN : x;
}

static void test_maximiser_finds_known_maxima(void **state)
{
    (void)state;
    pm_maximum r;
    assert_int_equal(pm_maximize_log(smooth, NULL, 1.0, 1000.0, 33, 1e-6, 100, &r), PM_OK);
    /* Brent on a parabola in log x: within the requested relative bracket. */
    assert_rel(r.best_x, 37.0, 1e-5);
    assert_int_equal(r.edge, 0);
    assert_true(r.best_f <= 0.0 && r.best_f > -1e-9);
    assert_true(r.lo <= 37.0 * (1 + 1e-5) && r.hi >= 37.0 * (1 - 1e-5));
    assert_true(r.iterations > 0 && r.evaluations > 33);
    assert_int_equal(pm_maximize_log(kinked, NULL, 1.0, 100.0, 33, 1e-6, 200, &r), PM_OK);
    assert_rel(r.best_x, 5.5, 1e-4);
    assert_rel(r.best_f, 3.0, 1e-4);
    /* The maximum at the upper edge: the edge, no refinement. */
    assert_int_equal(pm_maximize_log(rising, NULL, 2.0, 64.0, 9, 1e-6, 100, &r), PM_OK);
    assert_rel(r.best_x, 64.0, 1e-12);
    assert_int_equal(r.iterations, 0);
    assert_int_equal(r.edge, 1); /* it still rises there: the maximum may lie beyond */
    assert_int_equal(pm_maximize_log(falling, NULL, 2.0, 64.0, 9, 1e-6, 100, &r), PM_OK);
    assert_rel(r.best_x, 2.0, 1e-12);
    assert_int_equal(r.edge, -1);
    /* Flat: every point is a maximum; the lower end is reported, not as an edge. */
    assert_int_equal(pm_maximize_log(flat, NULL, 2.0, 64.0, 9, 1e-6, 100, &r), PM_OK);
    assert_rel(r.best_x, 2.0, 1e-12);
    assert_int_equal(r.edge, 0);
    int calls = 0;
    assert_int_equal(pm_maximize_log(fails, &calls, 2.0, 64.0, 9, 1e-6, 100, &r),
                     PM_ERR_CANCELLED);
}

/* Issue 41: an l2 axis whose largest dies are over the reticle says from which value (the
 * H100's die, 814 mm2 at 50 MiB of L2 built as 60: each MiB enabled adds 1.2 x 1.9268 =
 * 2.31216 mm2, so 64 MiB is 814 + 14 x 2.31216 = 846.4 mm2 and 72 MiB 864.9 mm2, over 858);
 * the base's own die warning is replaced by the axis's. */
/* Issue 48: a bare axis's default range is fitted to the scenario: the devices stop at the
 * cluster's 8 (1..64 ran 3 invalid points), a link axis reaches NVLink4's own 450 GB/s (the
 * default 25-400 GB/s missed it: 56.25, 112.5, 225, 450, 900), an axis whose default holds the
 * scenario's value, and an axis given a range, are left alone. */
static void test_default_axes_fit_the_scenario(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_axis dev = axis("devices"), link = axis("link_bw"), l2 = axis("l2"),
            given = axis("devices=1:64:x2");
    assert_true(dev.default_range && !given.default_range);
    assert_int_equal(dev.n_values, 7);
    pm_axis *all[] = {&dev, &link, &l2, &given};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(pm_axis_fit_scenario(&s, all[i], NULL), PM_OK);
    const double devices[] = {1, 2, 4, 8};
    assert_int_equal(dev.n_values, 4);
    for (size_t i = 0; i < 4; i++)
        assert_rel(dev.values[i], devices[i], 0);
    const double links[] = {56.25e9, 112.5e9, 225e9, 450e9, 900e9};
    assert_int_equal(link.n_values, 5);
    for (size_t i = 0; i < 5; i++)
        assert_rel(link.values[i], links[i], 1e-15);
    double base;
    assert_true(pm_scenario_axis_value(&s, PM_AXIS_LINK_BW, &base));
    assert_rel(base, 450e9, 0);
    assert_int_equal(l2.n_values, 32); /* 8..256 MiB holds the H100's 50 */
    assert_int_equal(given.n_values, 7);
    for (size_t i = 0; i < 4; i++)
        pm_axis_release(all[i]);
    /* The compute axis's own value is the peak of the compute datatype: the H100's bf16. */
    assert_true(pm_scenario_axis_value(&s, PM_AXIS_COMPUTE, &base));
    assert_rel(base, 989.4e12, 1e-12);
    pm_scenario_release(&s);
}

static void test_l2_axis_over_the_reticle_warns(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_axis l2 = axis("l2=56MiB,64MiB,72MiB,128MiB");
    char note[400];
    assert_false(pm_die_over_reticle(&s.accel, NULL));
    assert_true(pm_sweep_warning(&s, &l2, 1, 0, note, sizeof note));
    assert_string_equal(note, "accelerator h100-sxm: the modelled die is over the 858 mm2 "
                              "reticle at 2 of the l2 axis's 4 values (from l2_capacity_MiB 72: "
                              "865 mm2): no such die can be built as one piece of silicon");
    pm_scenario_release(&s);
    /* A package names its die: the 910B's compute die, 665.6068 mm2 at 192 MiB of L2 at 1.3325
     * mm2/MiB, is 665.6068 + 144 x 1.3325 = 857.4868 mm2 at 336 MiB (under) and 665.6068 + 152
     * x 1.3325 = 868.1468 mm2 at 344 MiB (over). */
    s = load("llama70b");
    pm_axis_release(&l2);
    l2 = axis("l2=336MiB,344MiB");
    assert_true(pm_sweep_warning(&s, &l2, 1, 0, note, sizeof note));
    assert_string_equal(note, "accelerator ascend-910b: the modelled compute die is over the 858 "
                              "mm2 reticle at 1 of the l2 axis's 2 values (from l2_capacity_MiB "
                              "344: 868 mm2): no such die can be built as one piece of silicon");
    assert_false(pm_sweep_warning(&s, &l2, 1, 1, note, sizeof note));
    pm_axis_release(&l2);
    pm_scenario_release(&s);
}

/* A seq axis beyond the trained context is warned with its largest value; one within it, other
 * axes and a model without the figure are not. */
static void test_seq_axis_beyond_trained_context_warns(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    s.accel.area.present = false; /* no die warnings here */
    s.model.max_position_embeddings = 131072;
    pm_axis seq = axis("seq=64k,256k,128k"), within = axis("seq=2k:128k:x2"), l2 = axis("l2");
    char note[200];
    assert_true(pm_sweep_warning(&s, &seq, 1, 0, note, sizeof note));
    /* the model named: a loop over models says which (issue 48) */
    assert_string_equal(note, "the seq axis reaches 262144 tokens, beyond the model's "
                              "max_position_embeddings 131072 (model llama3-70b)");
    assert_true(pm_sweep_warning(&s, &seq, 1, 0, NULL, 0));
    const pm_axis both[] = {l2, seq};
    assert_true(pm_sweep_warning(&s, both, 2, 0, note, sizeof note));
    assert_false(pm_sweep_warning(&s, &within, 1, 0, note, sizeof note)); /* 131072 itself: no */
    assert_false(pm_sweep_warning(&s, &l2, 1, 0, note, sizeof note));
    s.model.max_position_embeddings = 0;
    assert_false(pm_sweep_warning(&s, &seq, 1, 0, note, sizeof note));
    assert_false(pm_sweep_warning(NULL, &seq, 1, 0, note, sizeof note));
    /* Llama3-70B's 64 heads, 8 KV heads and 28672 MLP columns divide over 1, 2, 4 and 8 devices,
     * not over 3, 6 (8 KV heads) or 12 (28672 / 12 is not whole), nor 16 (8 KV heads, 16 % 8 = 0:
     * replicated evenly; 28672 / 16 = 1792: even); after the seq axis's, in axis order. */
    s.model.max_position_embeddings = 131072;
    pm_axis dev = axis("devices=1,2,3,4,6,8,12,16");
    const pm_axis seq_dev[] = {seq, dev};
    assert_true(pm_sweep_warning(&s, seq_dev, 2, 1, note, sizeof note));
    assert_string_equal(note, "model llama3-70b does not split evenly over 3 of the devices "
                              "axis's counts (3, 6, 12): the busiest device's share is modelled "
                              "there; engines that split evenly (vLLM, TensorRT-LLM) refuse them");
    assert_false(pm_sweep_warning(&s, seq_dev, 2, 2, note, sizeof note));
    s.options.sharding = PM_SHARDING_IDEAL; /* the hypothetical split says so itself */
    assert_false(pm_sweep_warning(&s, &dev, 1, 0, note, sizeof note));
    pm_axis_release(&dev);
    pm_axis_release(&seq);
    pm_axis_release(&within);
    pm_axis_release(&l2);
    pm_scenario_release(&s);
}

/* A sweep's list is the base's warnings less those about the value an axis replaces (its
 * sequence length under a seq axis, its split under a devices or ep axis), then the axes'. */
static void test_sweep_warnings_replace_what_an_axis_replaces(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    s.accel.area.present = false; /* no die warnings here */
    s.model.max_position_embeddings = 8192; /* below the scenario's 16384 */
    s.cluster.devices = 3;                  /* 8 KV heads over 3: uneven */
    char note[400], first[400];
    size_t n = 0;
    while (pm_scenario_warning(&s, n, NULL, 0))
        n++;
    assert_int_equal(n, 2);
    pm_axis l2 = axis("l2"), seq = axis("seq=1k,2k"), dev = axis("devices=2,4");
    /* An axis that replaces neither: the base's two, as pm_scenario_warning gives them. */
    for (size_t i = 0; i < n; i++) {
        assert_true(pm_sweep_warning(&s, &l2, 1, i, note, sizeof note));
        assert_true(pm_scenario_warning(&s, i, first, sizeof first));
        assert_string_equal(note, first);
    }
    assert_false(pm_sweep_warning(&s, &l2, 1, n, note, sizeof note));
    /* seq=1k,2k lies within 8192: the base's 16384 is not swept, so only the split is left. */
    assert_true(pm_sweep_warning(&s, &seq, 1, 0, note, sizeof note));
    assert_non_null(strstr(note, "over 3 devices"));
    assert_false(pm_sweep_warning(&s, &seq, 1, 1, note, sizeof note));
    /* devices=2,4 divide: the base's 3 is not swept, so only the sequence is left. */
    assert_true(pm_sweep_warning(&s, &dev, 1, 0, note, sizeof note));
    assert_non_null(strstr(note, "exceeds the model's max_position_embeddings 8192"));
    assert_false(pm_sweep_warning(&s, &dev, 1, 1, note, sizeof note));
    const pm_axis both[] = {seq, dev};
    assert_false(pm_sweep_warning(&s, both, 2, 0, note, sizeof note));
    pm_scenario_release(&s);

    /* Mixtral's experts over 8 devices: a routed expert's 14340 columns (4 x 3585, a width made
     * for the test) split over 8 (ep 1: 14340 % 8 = 4) and over 2 (ep 4) evenly only at the
     * second; ep 2 splits them over 4 (14340 % 4 = 0), ep 8 over 1. */
    s = load("mixtral8x7b");
    s.accel.area.present = false; /* no die warnings here */
    s.cluster.devices = 8;
    s.model.expert_intermediate = 14340;
    assert_true(pm_scenario_warning(&s, 0, note, sizeof note));
    assert_non_null(strstr(note, "expert width 14340 over 8"));
    pm_axis ep = axis("ep=2,4,8"), ep_all = axis("ep=1,2,4,8"), dev2 = axis("devices=4,8");
    assert_false(pm_sweep_warning(&s, &ep, 1, 0, note, sizeof note));
    assert_true(pm_sweep_warning(&s, &ep_all, 1, 0, note, sizeof note));
    assert_string_equal(note, "model mixtral-8x7b does not split evenly over 1 of the ep axis's "
                              "expert-parallel degrees (8 devices with ep 1): the busiest "
                              "device's share is modelled there; engines that split evenly "
                              "(vLLM, TensorRT-LLM) refuse them");
    assert_false(pm_sweep_warning(&s, &ep_all, 1, 1, note, sizeof note));
    /* The grid of devices=4,8 and ep=1,2,4,8: ep 8 over 4 devices is refused at its point (ep
     * divides the devices), not counted; 4 devices with ep 1 split 14340 over 4 (even), 8 with
     * ep 1 over 8 (uneven). */
    const pm_axis grid[] = {dev2, ep_all};
    assert_true(pm_sweep_warning(&s, grid, 2, 0, note, sizeof note));
    assert_non_null(strstr(note, "over 1 of the grid's device and expert-parallel counts (8 "
                                 "devices with ep 1)"));
    pm_axis_release(&ep);
    pm_axis_release(&ep_all);
    pm_axis_release(&dev2);
    pm_axis_release(&l2);
    pm_axis_release(&seq);
    pm_axis_release(&dev);
    pm_scenario_release(&s);
}

/* The tally of a sweep's results: the invalid and unfit points counted, the first of each
 * named with its values in the columns' units, each warning only when there are some. */
static void test_sweep_tally_warns_of_invalid_and_unfit_points(void **state)
{
    (void)state;
    pm_axis ax[2] = {axis("seq=1k,2k"), axis("l2=8,16")};
    pm_sweep_point p[4];
    memset(p, 0, sizeof p);
    for (int i = 0; i < 4; i++) {
        p[i].index = (size_t)i;
        p[i].axis_value[0] = 1024.0 * (1 + i / 2);
        p[i].axis_value[1] = 8.0 * 1048576.0 * (1 + i % 2);
        p[i].estimate.fits_hbm = true;
    }
    pm_sweep_tally t = {0};
    char note[512];
    pm_sweep_tally_add(&t, p, 4);
    assert_int_equal(t.points, 4);
    assert_false(pm_sweep_tally_warning(&t, ax, 2, 0, note, sizeof note)); /* nothing to say */
    p[1].status = PM_ERR_INCONSISTENT;
    snprintf(p[1].error, sizeof p[1].error, "why");
    p[2].estimate.fits_hbm = false;
    p[3].estimate.fits_hbm = false;
    pm_sweep_tally u = {0};
    pm_sweep_tally_add(&u, p, 2); /* two blocks, in grid order */
    pm_sweep_tally_add(&u, p + 2, 2);
    assert_int_equal(u.points, 4);
    assert_int_equal(u.invalid, 1);
    assert_int_equal(u.unfit, 2);
    assert_true(pm_sweep_tally_warning(&u, ax, 2, 0, note, sizeof note));
    assert_string_equal(note, "1 of 4 points are not valid (NaN, their error in the last column; "
                              "the first at seq_len 1024, l2_capacity_MiB 16: why)");
    assert_true(pm_sweep_tally_warning(&u, ax, 2, 1, note, sizeof note));
    assert_string_equal(note, "fits_hbm 0 at 2 of 4 points (the first at seq_len 2048, "
                              "l2_capacity_MiB 8): their weights and KV cache exceed the usable "
                              "HBM per device, memory the device does not have");
    assert_true(pm_sweep_tally_warning(&u, ax, 2, 1, NULL, 0));
    char small[12];
    assert_true(pm_sweep_tally_warning(&u, ax, 2, 1, small, sizeof small)); /* cut, ended */
    assert_string_equal(small, "fits_hbm 0 ");
    assert_false(pm_sweep_tally_warning(&u, ax, 2, 2, note, sizeof note));
    /* An invalid point is not counted as unfit, whatever its estimate holds. */
    p[1].estimate.fits_hbm = false;
    pm_sweep_tally v = {0};
    pm_sweep_tally_add(&v, p, 4);
    assert_int_equal(v.unfit, 2);
    pm_sweep_tally_add(NULL, p, 4);
    assert_false(pm_sweep_tally_warning(NULL, ax, 2, 0, note, sizeof note));
    pm_axis_release(&ax[0]);
    pm_axis_release(&ax[1]);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_order_slices_and_threads),
        cmocka_unit_test(test_sweep_warnings_replace_what_an_axis_replaces),
        cmocka_unit_test(test_sweep_tally_warns_of_invalid_and_unfit_points),
        cmocka_unit_test(test_sweeps_reuse_with_identical_numbers),
        cmocka_unit_test(test_cache_rebuilds_only_what_changes),
        cmocka_unit_test(test_callback_stops_and_bad_arguments),
        cmocka_unit_test(test_prepare_hook),
        cmocka_unit_test(test_sweeps_from_several_threads),
        cmocka_unit_test(test_maximiser_finds_known_maxima),
        cmocka_unit_test(test_seq_axis_beyond_trained_context_warns),
        cmocka_unit_test(test_l2_axis_over_the_reticle_warns),
        cmocka_unit_test(test_default_axes_fit_the_scenario),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
