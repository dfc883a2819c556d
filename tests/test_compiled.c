/*
 * test_compiled.c - a served point compiled once and costed again per hardware point
 * (pm_serve_compute_compiled, issue 46 item 3) against pm_serve_compute, bit for bit, over grids
 * of hardware points (L2 capacity and bandwidth, HBM bandwidth, compute, links) on a dense model
 * (Llama-3-70B), a MoE model (Mixtral-8x7B, expert-parallel), a model of windowed layers
 * (Gemma-2-9B), a speculating one and data-parallel replicas; the grids cross L2 capacities where
 * PRESERVE's insertion decisions change (checked: nothing prefetched at 1 MiB, prefetches from
 * 96 MiB on). And that the comparison can fail: a point compiled at one tensor-parallel degree
 * and served at another (outside the contract) gives another answer. And that a template's counted
 * traffic, kept, is counted again where it reads the hardware.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "internal.h"
#include "testutil.h"

static pm_scenario load(const char *name)
{
    pm_scenario s = pm_test_load(name, NULL, 0);
    pm_scenario_release(&s);
    return s;
}

/* The scenario's prompt and output at `conc` sequences, a chunk budget of 512, decode-first. */
static pm_serve_workload workload(const pm_scenario *s, double conc)
{
    pm_serve_workload w;
    memset(&w, 0, sizeof w);
    w.input_tokens = pm_workload_prompt_tokens(&s->workload);
    w.output_tokens = pm_workload_decode_steps(&s->workload);
    w.concurrency = conc;
    w.chunk_budget = 512;
    w.rule = PM_SERVE_DECODE_FIRST;
    return w;
}

static void set(pm_scenario *t, pm_axis_kind k, double v)
{
    pm_error err;
    if (pm_scenario_set_axis(t, k, v, &err) != PM_OK)
        fail_msg("pm_scenario_set_axis: %s", err.message);
}

/* Bit for bit: every figure of every mode, the memory and the counts (NaN equal to NaN). */
static bool same(const pm_serve_result *a, const pm_serve_result *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* What a grid saw: PRESERVE's decode step equal to the serial one (nothing prefetched) and
 * shorter (prefetches inserted). */
typedef struct seen {
    int points, none_prefetched, prefetched;
} seen;

/* s at hardware point (l2 MiB, x the base compute, HBM and link bandwidths, l2_bw): served
 * through c and directly; the two must be equal. */
static void point(const pm_scenario *s, const pm_serve_workload *w, pm_serve_compiled *c,
                  double l2_mib, double x, seen *sn)
{
    pm_scenario t = *s;
    t.provenance = NULL;
    const double flops = pm_peak_compute(&s->accel, pm_compute_dtype(&s->workload));
    set(&t, PM_AXIS_L2, l2_mib * 1048576.0);
    set(&t, PM_AXIS_COMPUTE, flops * x);
    set(&t, PM_AXIS_HBM_BW, s->accel.hbm_bandwidth_bytes_per_s / x);
    set(&t, PM_AXIS_LINK_BW, s->cluster.link_bandwidth_bytes_per_s * x);
    if (s->accel.l2_bandwidth_bytes_per_s > 0)
        set(&t, PM_AXIS_L2_BW, s->accel.l2_bandwidth_bytes_per_s * (x > 1 ? x : 1.0));
    pm_serve_result ref, got;
    pm_error err;
    assert_int_equal(pm_serve_compute(&t, w, &ref, &err), PM_OK);
    const pm_status st = pm_serve_compute_compiled(&t, w, c, &got, &err);
    if (st != PM_OK)
        fail_msg("pm_serve_compute_compiled: %s", err.message);
    assert_true(c->ready);
    if (!same(&ref, &got))
        fail_msg("%s at L2 %g MiB, x%g: the compiled point differs (PRESERVE tokens/s/device "
                 "%.17g vs %.17g)",
                 s->model.name, l2_mib, x, ref.modes[PM_MODE_PRESERVE].tokens_per_s_per_device,
                 got.modes[PM_MODE_PRESERVE].tokens_per_s_per_device);
    sn->points++;
    const double ser = ref.modes[PM_MODE_SERIAL].decode_step_s;
    const double pre = ref.modes[PM_MODE_PRESERVE].decode_step_s;
    sn->none_prefetched += !(pre < ser) && !(pre > ser);
    sn->prefetched += pre < ser;
}

/* The grid, in an order that crosses the decisions both ways: L2 1 to 384 MiB and back, each
 * at three compute/bandwidth balances. */
static seen grid_of(const pm_scenario *s, pm_serve_workload w)
{
    static const double l2[] = {1, 8, 48, 96, 192, 384, 24, 2};
    static const double x[] = {1.0, 0.5, 2.0};
    pm_serve_compiled c;
    memset(&c, 0, sizeof c);
    seen sn = {0, 0, 0};
    for (size_t i = 0; i < sizeof l2 / sizeof l2[0]; i++)
        for (size_t j = 0; j < sizeof x / sizeof x[0]; j++)
            point(s, &w, &c, l2[i], x[j], &sn);
    pm_serve_compiled_release(&c);
    assert_false(c.ready);
    return sn;
}

static seen grid(const pm_scenario *s, double conc)
{
    return grid_of(s, workload(s, conc));
}

static void test_dense(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b");
    const seen sn = grid(&s, 64);
    assert_int_equal(sn.points, 24);
    /* The decisions change inside the grid: a 1 MiB L2 holds no weight matrix of a layer (the
     * smallest, the K or V projection, 8192 x 1024 int8 = 8 MiB, is 2 MiB on each of the 4
     * devices), so PRESERVE prefetches nothing and its decode step is the serial one; from
     * 96 MiB on, matrices fit the window and are prefetched. */
    assert_true(sn.none_prefetched > 0);
    assert_true(sn.prefetched > 0);
}

static void test_moe(void **state)
{
    (void)state;
    pm_scenario s = load("mixtral8x7b");
    set(&s, PM_AXIS_EP, 2);
    const seen sn = grid(&s, 32);
    assert_int_equal(sn.points, 24);
}

static void test_windowed(void **state)
{
    (void)state;
    const pm_scenario s = load("gemma2-9b");
    const seen sn = grid(&s, 16);
    assert_int_equal(sn.points, 24);
}

static void test_speculating(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    pm_test_speculate(&s, 2, 0.7);
    const seen sn = grid(&s, 16);
    assert_int_equal(sn.points, 24);
}

static void test_replicas(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    s.cluster.data_parallel = 2; /* 2 replicas of TP 8: 32 sequences each */
    const seen sn = grid(&s, 64);
    assert_int_equal(sn.points, 24);
}

/* Kinds that share a plan's room: two length classes at 2 sequences (below a request a step,
 * so each class's prompt is a kind of step of its own, beside the decode step: three kinds,
 * the first in one room, the other two in turn in the second; serve.c's serve_closed). A room
 * copies a compiled template only where it last held another (pm_step_plan_build_from's
 * p->from): were the second class's step served from the first class's nodes left in the
 * room, the prompts' times would differ from pm_serve_compute's. */
static void test_kinds_share_a_room(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b");
    pm_serve_workload w = workload(&s, 2);
    w.n_classes = 2;
    w.classes[0] = (pm_length_class){4000, 100, 0.25};
    w.classes[1] = (pm_length_class){300, 600, 0.75};
    const seen sn = grid_of(&s, w);
    assert_int_equal(sn.points, 24);
}

/* The steps kept over L2 capacities (serve.c's steps_memo): one compiled point walked along an
 * L2 axis of 1 MiB steps with the rest of the hardware fixed (up 1 to 256 MiB, down in 3 MiB
 * steps, up again at another compute/bandwidth balance and back), every point against
 * pm_serve_compute bit for bit. The walks cross the GEMMs' tiling kinks (from 1 MiB the
 * prompt's GEMMs pay the tiling bound) and PRESERVE's decisions changing from one capacity to
 * the next, where a memo that held past either would be seen. */
static seen walk(const pm_scenario *s, pm_serve_workload w)
{
    pm_serve_compiled c;
    memset(&c, 0, sizeof c);
    seen sn = {0, 0, 0};
    for (int mib = 1; mib <= 256; mib++)
        point(s, &w, &c, mib, 1.0, &sn);
    for (int mib = 255; mib >= 1; mib -= 3)
        point(s, &w, &c, mib, 1.0, &sn);
    for (int mib = 2; mib <= 200; mib += 2)
        point(s, &w, &c, mib, mib % 20 ? 2.0 : 1.0, &sn);
    pm_serve_compiled_release(&c);
    return sn;
}

static void test_l2_walks(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    seen sn = walk(&s, workload(&s, 64));
    assert_int_equal(sn.points, 256 + 85 + 100);
    /* Prompt chunks of 2048 tokens: the MLP's up projection, 2048 x 8192 by 8192 x 7168 int8
     * on each of 4 devices, pays the tiling bound below C* = e (2 m n / (m + n))^2 = (2 x 2048
     * x 7168 / 9216)^2 = 10.2 MB (cost.c: tile bytes 2 m n k e over sqrt(C / e) against the
     * compulsory (m k + k n) e): the walks cross it both ways. */
    pm_serve_workload big = workload(&s, 64);
    big.chunk_budget = 2048;
    walk(&s, big);
    assert_true(sn.none_prefetched > 0 && sn.prefetched > 0);
    pm_serve_workload w = workload(&s, 2); /* three kinds, two sharing a room */
    w.n_classes = 2;
    w.classes[0] = (pm_length_class){4000, 100, 0.25};
    w.classes[1] = (pm_length_class){300, 600, 0.75};
    walk(&s, w);
    s = load("mixtral8x7b");
    set(&s, PM_AXIS_EP, 2);
    sn = walk(&s, workload(&s, 32));
    assert_true(sn.prefetched > 0);
    s = load("gemma2-9b");
    sn = walk(&s, workload(&s, 16));
    assert_true(sn.prefetched > 0);
}

/* Outside the contract (another tensor-parallel degree), the compiled templates are the wrong
 * step's: the comparison sees it, so it can fail. */
static void test_contract_matters(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b");
    const pm_serve_workload w = workload(&s, 64);
    pm_serve_compiled c;
    memset(&c, 0, sizeof c);
    pm_serve_result ref, got;
    pm_error err;
    assert_int_equal(pm_serve_compute_compiled(&s, &w, &c, &got, &err), PM_OK);
    pm_scenario t = s;
    set(&t, PM_AXIS_DEVICES, 8); /* the scenario runs TP 4 */
    assert_int_equal(pm_serve_compute(&t, &w, &ref, &err), PM_OK);
    assert_int_equal(pm_serve_compute_compiled(&t, &w, &c, &got, &err), PM_OK);
    assert_false(same(&ref, &got));
    pm_serve_compiled_release(&c);
}

/* A compiled point keeps its step rule's counts and footprint (they read no hardware): served
 * again at another concurrency (outside the contract) it still answers with the compiled
 * point's counts (64 sequences: 64 decoding at most, 32 would decode at most 32), which
 * pm_serve_compute at 32 does not. Were the counts recomputed, the two would agree in them. */
static void test_counts_kept(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b");
    const pm_serve_workload w64 = workload(&s, 64), w32 = workload(&s, 32);
    pm_serve_compiled c;
    memset(&c, 0, sizeof c);
    pm_serve_result at64, ref, got;
    pm_error err;
    assert_int_equal(pm_serve_compute_compiled(&s, &w64, &c, &at64, &err), PM_OK);
    assert_int_equal(pm_serve_compute(&s, &w32, &ref, &err), PM_OK);
    assert_int_equal(pm_serve_compute_compiled(&s, &w32, &c, &got, &err), PM_OK);
    assert_true(ref.decode_sequences <= 32.0);
    assert_true(at64.decode_sequences > 32.0);
    assert_memory_equal(&got.decode_sequences, &at64.decode_sequences, sizeof(double));
    assert_memory_equal(&got.weight_bytes_per_device, &at64.weight_bytes_per_device,
                        sizeof(double));
    assert_false(same(&ref, &got));
    pm_serve_compiled_release(&c);
    assert_null(c.kept);
}

/* A template's roofline rows (cost.c) hold the wave fraction at the accelerator's GEMM fields:
 * a template whose rows were made at one tile and unit count, costed at another, must make
 * them again (pm_cost_key), giving the plan built there bit for bit, and the change must
 * matter (else the comparison could not fail). */
static void test_rows_follow_the_gemm_fields(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    assert_true(s.accel.gemm.present);
    pm_step step;
    assert_int_equal(pm_step_of(&s, PM_PHASE_PREFILL, 2048, &step, NULL), PM_OK);
    pm_step_plan *p = calloc(3, sizeof *p); /* p[2].from NULL: a new room */
    assert_non_null(p);
    assert_int_equal(pm_step_plan_build(&s, &step, false, true, &p[0], NULL), PM_OK);
    pm_scenario t = s;
    t.provenance = NULL;
    t.accel.gemm.tile_m *= 2;
    t.accel.gemm.compute_units += 7;
    assert_int_equal(pm_step_plan_build(&t, &step, false, true, &p[1], NULL), PM_OK);
    assert_int_equal(pm_step_plan_build_from(&t, NULL, &step, &p[0].tmpl, true, &p[2], NULL),
                     PM_OK);
    bool moved = false;
    for (int i = 0; i < p[0].tmpl.n_layer; i++) {
        assert_memory_equal(&p[2].layer[i].hbm, &p[1].layer[i].hbm, sizeof(pm_op_cost));
        moved = moved || memcmp(&p[0].layer[i].hbm, &p[1].layer[i].hbm, sizeof(pm_op_cost));
    }
    assert_true(moved);
    free(p);
}

/* A template's counted traffic (pm_template_counts) costed at another hardware point keeps
 * what reads the nodes alone and counts again what reads the hardware: a plan of llama70b's
 * prefill built from a template counted at a 1 MiB L2 (its GEMMs' tiling bound adds HBM bytes
 * there) and counted at 256 MiB moves, in every mode, what the plan built at 256 MiB moves, bit
 * for bit; and the HBM bytes differ between the two L2 capacities (were they kept, the
 * comparison would fail). */
static void test_traffic_follows_the_l2(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    s.provenance = NULL;
    pm_step step;
    assert_int_equal(pm_step_of(&s, PM_PHASE_PREFILL, 2048, &step, NULL), PM_OK);
    pm_step_plan *p = calloc(3, sizeof *p); /* p[2].from NULL: a new room */
    assert_non_null(p);
    pm_scenario t = s;
    set(&s, PM_AXIS_L2, 1048576.0);
    set(&t, PM_AXIS_L2, 256.0 * 1048576.0);
    assert_int_equal(pm_step_plan_build(&s, &step, false, true, &p[0], NULL), PM_OK);
    pm_step_plan_count(&p[0]);
    assert_true(p[0].tmpl.counts.ready);
    assert_int_equal(pm_step_plan_build(&t, &step, false, true, &p[1], NULL), PM_OK);
    pm_step_plan_count(&p[1]);
    assert_int_equal(pm_step_plan_build_from(&t, NULL, &step, &p[0].tmpl, true, &p[2], NULL),
                     PM_OK);
    assert_true(p[2].tmpl.counts.ready); /* the kept count is what pm_step_plan_count starts from */
    pm_step_plan_count(&p[2]);
    assert_memory_equal(&p[2].plain_rest_tr, &p[1].plain_rest_tr, sizeof(pm_traffic));
    for (int i = 0; i < p[0].tmpl.n_layer; i++)
        assert_memory_equal(&p[2].tmpl.counts.layer[i], &p[1].tmpl.counts.layer[i],
                            sizeof(pm_step_traffic));
    for (int preserve = 0; preserve < 2; preserve++) {
        pm_traffic a, b;
        pm_step_plan_traffic(&p[1], preserve, step.context, &a);
        pm_step_plan_traffic(&p[2], preserve, step.context, &b);
        assert_memory_equal(&a, &b, sizeof a);
    }
    assert_true(p[0].plain_rest_tr.hbm_bytes > p[1].plain_rest_tr.hbm_bytes);
    free(p);
}

/* Plans p (built from a template) and q (built afresh) cost every node the same, bit for bit. */
static void assert_same_costs(const pm_step_plan *p, const pm_step_plan *q)
{
    assert_int_equal(p->tmpl.n_layer, q->tmpl.n_layer);
    for (int i = 0; i < q->tmpl.n_head; i++)
        assert_memory_equal(&p->head_cost[i], &q->head_cost[i], sizeof(pm_op_cost));
    for (int i = 0; i < q->tmpl.n_layer; i++) {
        const pm_step_node *a = &p->layer[i], *b = &q->layer[i];
        assert_memory_equal(&a->hbm, &b->hbm, sizeof(pm_op_cost));
        assert_memory_equal(&a->bytes, &b->bytes, sizeof(double));
        if (q->prefetching && b->bytes > 0) {
            assert_memory_equal(&a->l2, &b->l2, sizeof(pm_op_cost));
            assert_memory_equal(&a->pf, &b->pf, sizeof(pm_op_cost));
        }
    }
    for (int i = 0; i < q->tmpl.n_tail; i++)
        assert_memory_equal(&p->tail[i].hbm, &q->tail[i].hbm, sizeof(pm_op_cost));
    assert_memory_equal(&p->layer_rest_s, &q->layer_rest_s, sizeof(double));
    assert_memory_equal(&p->tail_s, &q->tail_s, sizeof(double));
    assert_memory_equal(&p->head_s, &q->head_s, sizeof(double));
}

/* A template's rows keep their nodes' costs (issue 46 item 3): costed at a 1 MiB L2, where
 * llama70b's prefill GEMMs pay the tiling bound, the rows keep the costs with the bound off (an
 * unbounded L2); a plan built from that template at 256 MiB (the bound off, the rest of the
 * hardware the same: the kept costs serve) and at 1 MiB with half the HBM bandwidth (another
 * pm_cost_hw: costed again) must cost every node, unfused and fused (the chunk search, kept
 * too), as the plan built there, bit for bit. Were the kept costs those of the 1 MiB point, or
 * kept across the HBM bandwidth, the comparison would fail: the costs differ between the
 * points. */
static void test_costs_kept_past_the_kink(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    s.provenance = NULL;
    pm_step step;
    assert_int_equal(pm_step_of(&s, PM_PHASE_PREFILL, 2048, &step, NULL), PM_OK);
    pm_scenario t = s, u = s;
    set(&s, PM_AXIS_L2, 1048576.0);
    set(&u, PM_AXIS_L2, 1048576.0);
    set(&u, PM_AXIS_HBM_BW, s.accel.hbm_bandwidth_bytes_per_s / 2.0);
    set(&t, PM_AXIS_L2, 256.0 * 1048576.0);
    pm_step_plan *p = calloc(6, sizeof *p); /* rooms with from NULL */
    assert_non_null(p);
    assert_int_equal(pm_step_plan_build(&s, &step, false, true, &p[0], NULL), PM_OK);
    pm_step_plan_count(&p[0]);
    pm_step_plan_fuse(&p[0], &p[1]);
    int tiled = 0;
    for (int i = 0; i < p[0].tmpl.n_layer; i++)
        tiled += pm_cost_row_tiling(&p[0].cost, &p[0].tmpl.rows.layer[i]) > 0;
    assert_true(tiled > 0);
    const pm_scenario *at[2] = {&t, &u};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(pm_step_plan_build(at[k], &step, false, true, &p[2], NULL), PM_OK);
        pm_step_plan_count(&p[2]);
        pm_step_plan_fuse(&p[2], &p[3]);
        assert_int_equal(pm_step_plan_build_from(at[k], NULL, &step, &p[0].tmpl, true, &p[4],
                                                 NULL),
                         PM_OK);
        pm_step_plan_count(&p[4]);
        pm_step_plan_fuse(&p[4], &p[5]);
        /* At 256 MiB every row's tiling bound is off: each is served from the kept costs. */
        for (int i = 0; k == 0 && i < p[4].tmpl.n_layer; i++)
            assert_false(pm_cost_row_tiling(&p[4].cost, &p[4].tmpl.rows.layer[i]) > 0);
        assert_same_costs(&p[4], &p[2]);
        assert_memory_equal(&p[5].layer_rest_s, &p[3].layer_rest_s, sizeof(double));
        assert_memory_equal(&p[5].plain_rest_tr, &p[3].plain_rest_tr, sizeof(pm_traffic));
        assert_int_equal(p[5].chunks, p[3].chunks);
        for (int preserve = 0; preserve < 2; preserve++) {
            double a, b;
            assert_int_equal(pm_step_plan_eval(&p[2], preserve, step.context, &a, NULL), PM_OK);
            assert_int_equal(pm_step_plan_eval(&p[4], preserve, step.context, &b, NULL), PM_OK);
            assert_memory_equal(&a, &b, sizeof a);
        }
        /* The points differ where a kept cost could be mistaken for the point's: the GEMMs'
         * HBM bytes or times, the fused plan's time or HBM bytes. */
        bool moved = false;
        for (int i = 0; i < p[0].tmpl.n_layer; i++)
            moved = moved || memcmp(&p[2].layer[i].hbm, &p[0].layer[i].hbm, sizeof(pm_op_cost));
        assert_true(moved);
        assert_true(memcmp(&p[3].layer_rest_s, &p[1].layer_rest_s, sizeof(double)) != 0 ||
                    memcmp(&p[3].plain_rest_tr, &p[1].plain_rest_tr, sizeof(pm_traffic)) != 0);
    }
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense),        cmocka_unit_test(test_moe),
        cmocka_unit_test(test_windowed),     cmocka_unit_test(test_speculating),
        cmocka_unit_test(test_replicas),     cmocka_unit_test(test_kinds_share_a_room),
        cmocka_unit_test(test_contract_matters),
        cmocka_unit_test(test_counts_kept),  cmocka_unit_test(test_rows_follow_the_gemm_fields),
        cmocka_unit_test(test_traffic_follows_the_l2),
        cmocka_unit_test(test_costs_kept_past_the_kink), cmocka_unit_test(test_l2_walks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
