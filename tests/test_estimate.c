/*
 * test_estimate.c - the end-to-end estimate (DESIGN.md section 8): bookkeeping identities,
 * the closed-form KV spill point, the piecewise summation of decode steps against a brute-force
 * sum, the three-layer extrapolation against full-depth schedules, and monotonicity properties
 * over the bundled scenarios.
 *
 * The hand scenario: hidden 1024, 8 heads, 2 KV heads, head_dim 128, intermediate 4096, vocab
 * 8192, gated, tied embeddings, 4 layers, int8; p = 2 (4 query heads, 1 KV head per device),
 * batch 6, seq_len 600 with prefill 1/2 (300 prompt tokens, 300 decode steps, contexts 300 to
 * 599); L2 3 MiB of which half is usable: a 1.5 MiB = 1572864-byte prefetch window.
 *
 * Per device: QKV weights 1024 * 6 * 128 = 786432 bytes; KV cache per cached token per layer
 * 2 * 6 * 1 * 128 = 1536 bytes; O 524288; Gate = Up = Down 2097152; LM head 4194304.
 */
#include <stdlib.h>

#include "internal.h"
#include "testutil.h"

/* The step of s's batch at phase and context (pm_step_of), asserted valid. */
static pm_step pm_test_step(const pm_scenario *s, pm_phase phase, int64_t context)
{
    pm_step step;
    assert_int_equal(pm_step_of(s, phase, context, &step, NULL), PM_OK);
    return step;
}

static pm_scenario hand_scenario(void)
{
    pm_scenario s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "hand");
    s.model = (pm_model){.layers = 4, .hidden = 1024, .heads = 8, .kv_heads = 2,
                         .head_dim = 128, .intermediate = 4096, .vocab = 8192,
                         .gated_mlp = true, .tied_embeddings = true};
    pm_accelerator *a = &s.accel;
    a->peak_flop_per_s[PM_DTYPE_INT8] = 1e15;
    a->compute_efficiency_frac = 1.0;
    a->hbm_capacity_bytes = 64e9;
    a->hbm_bandwidth_bytes_per_s = 1e12;
    a->hbm_efficiency_frac = 1.0;
    a->l2_capacity_bytes = 3.0 * 1048576.0;
    a->l2_bandwidth_bytes_per_s = 4e12;
    a->l2_usable_frac = 0.5;
    a->kv_strided_efficiency_frac = 0.5;
    a->kernel_launch_s = 1e-6;
    a->chunk_half_efficiency_bytes = 65536;
    pm_cluster *c = &s.cluster;
    c->devices = 2;
    c->topology = PM_TOPO_FULL_MESH;
    c->algorithm = PM_AR_AUTO;
    c->link_bandwidth_bytes_per_s = 1e11;
    c->link_latency_s = 1e-5;
    s.workload = (pm_workload){.batch = 6, .seq_len = 600, .prefill_frac = 0.5,
                               .weight_dtype = PM_DTYPE_INT8, .kv_dtype = PM_DTYPE_INT8,
                               .act_dtype = PM_DTYPE_INT8};
    return s;
}

static pm_estimate estimate(const pm_scenario *s)
{
    pm_estimate e;
    pm_error err;
    pm_status st = pm_estimate_compute(s, &e, &err);
    if (st != PM_OK)
        fail_msg("pm_estimate_compute(%s): %s: %s", s->name, pm_status_name(st), err.message);
    return e;
}

static double step_time(const pm_scenario *s, pm_mode m, int64_t ctx)
{
    double t = -1.0;
    pm_error err;
    pm_status st = pm_decode_step_time(s, m, ctx, &t, &err);
    if (st != PM_OK)
        fail_msg("pm_decode_step_time: %s", err.message);
    return t;
}

static const char *const bundled[] = {"llama70b", "llama70b-h100", "llama8b", "phi3-medium",
                                      "phi3-small", "qwen2-72b", "qwen2-7b"};
#define N_BUNDLED (sizeof bundled / sizeof bundled[0])

static pm_scenario load(const char *name, const char *const *ov, size_t n_ov)
{
    return pm_test_load(name, ov, n_ov);
}

/* ---------------------------------------------------------------- bookkeeping */

static void test_estimate_bookkeeping(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    pm_estimate e = estimate(&s);
    /* llround(600 * 0.5) = 300 prompt tokens, 600 - 300 = 300 decode steps */
    assert_int_equal(e.prefill_tokens, 300);
    assert_int_equal(e.decode_steps, 300);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_mode_result *r = &e.modes[m];
        /* these are one or two floating-point operations on the reported numbers */
        assert_rel(r->request_s, r->prefill_s + r->decode_s, 1e-15);
        assert_rel(r->tpot_mean_s, r->decode_s / 300.0, 1e-15);
        assert_rel(r->tokens_per_s, 6.0 * 300.0 / r->request_s, 1e-15);
        /* tpot is one decode step at context seq_len - 1 = 599: the same computation */
        assert_rel(r->tpot_s, step_time(&s, (pm_mode)m, 599), 0.0);
        /* decode allreduce: b * hidden * 1 byte = 6144 bytes on 2 devices, full mesh:
         * oneshot 1e-5 + 6144/1e11 = 1.006144e-5 beats twoshot and ring (2e-5 + ...) */
        assert_int_equal(r->allreduce, PM_AR_ONESHOT);
        assert_rel(r->allreduce_decode_s, 1.006144e-5, 1e-12);
    }
    const pm_mode_result *M = e.modes;
    assert_rel(e.speedup_preserve_vs_serial, M[PM_MODE_SERIAL].request_s / M[PM_MODE_PRESERVE].request_s, 1e-15);
    assert_rel(e.speedup_preserve_vs_fused, M[PM_MODE_FUSED].request_s / M[PM_MODE_PRESERVE].request_s, 1e-15);
    assert_rel(e.speedup_fused_vs_serial, M[PM_MODE_SERIAL].request_s / M[PM_MODE_FUSED].request_s, 1e-15);
    /* Fused chunks, by hand, for the first fused node (O: 6 x 512 x 1024, int8): X = 524288
     * weight + 9216 activation bytes = 533504, h = 65536, so the memory time of k chunks is
     * 533504/1e12 x (0.8906 + 0.1094 k)/k s (about 0.53 us at k = 1) while each chunk's
     * allreduce costs the 10 us start-up plus 6144/k / 1e11 s: a stage is always the allreduce,
     * the node lasts t_gemm(k) + k x t_ar(k) >= 0.53 us / k + 10 k us, and one chunk wins. */
    assert_int_equal(M[PM_MODE_FUSED].fused_chunks, 1);
    /* A requested count is used as given. */
    pm_scenario s3 = s;
    s3.options.fused_chunks = 3;
    assert_int_equal(estimate(&s3).modes[PM_MODE_FUSED].fused_chunks, 3);
    /* shard */
    assert_rel(e.shard.q_heads, 4.0, 0.0);
    assert_rel(e.shard.kv_heads, 1.0, 0.0);
    /* window = 3 MiB * 0.5 */
    assert_rel(e.l2_window_bytes, 1572864.0, 1e-15);
    /* weights per device (tied embeddings: the LM head is the only vocabulary matrix):
     *   per layer 786432 + 524288 + 3 * 2097152 = 7602176; 4 layers 30408704;
     *   LM head 4096 * 1024 = 4194304; total 34603008 bytes */
    assert_rel(e.weight_bytes_per_device, 34603008.0, 1e-15);
    /* KV cache at the end: 4 layers * 1536 bytes * 600 tokens = 3686400 bytes */
    assert_rel(e.kv_bytes_per_device, 3686400.0, 1e-15);
    assert_true(e.fits_hbm);
    /* Without a runtime the weights and KV may take the whole capacity. */
    assert_rel(e.hbm_usable_bytes_per_device, s.accel.hbm_capacity_bytes, 0.0);
    char note[512];
    assert_false(pm_estimate_warning(&s, &e, 0, note, sizeof note)); /* it fits: nothing */
    s.accel.hbm_capacity_bytes = 34603008.0 + 3686400.0 - 1.0;
    pm_estimate over = estimate(&s);
    assert_false(over.fits_hbm);
    /* 34603008 B = 0.0322 GiB of weights, 3686400 B = 0.00343 GiB of KV, 38289407 B =
     * 0.0357 GiB usable; one warning, and none after it. */
    assert_true(pm_estimate_warning(&s, &over, 0, note, sizeof note));
    assert_string_equal(note, "the weights and KV cache per device (0.0322 GiB + 0.00343 GiB) "
                              "exceed its 0.0357 GiB of usable HBM: the times are of memory "
                              "the device does not have (fewer sequences or tokens, or more "
                              "devices, fit)");
    assert_true(pm_estimate_warning(&s, &over, 0, NULL, 0));
    assert_false(pm_estimate_warning(&s, &over, 1, note, sizeof note));
    assert_false(pm_estimate_warning(NULL, &over, 0, note, sizeof note));
    /* A runtime that leaves 0.9 of the HBM to weights and KV: 38289408 bytes need a capacity of
     * 38289408 / 0.9 = 42543786.7; 42543787 fits, 42543786 does not. */
    s.runtime.present = true;
    s.runtime.hbm_usable_frac = 0.9;
    s.accel.hbm_capacity_bytes = 42543787.0;
    assert_true(estimate(&s).fits_hbm);
    /* 0.9 x 42543787 = 38289408.3 bytes usable: 0.3 bytes beyond the 38289408 needed. */
    assert_rel(estimate(&s).hbm_usable_bytes_per_device, 38289408.3, 1e-15);
    s.accel.hbm_capacity_bytes = 42543786.0;
    assert_false(estimate(&s).fits_hbm);
}

static void test_kv_spill_context_closed_form(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    /* The window after the previous layer's MLP allreduce holds QKV then the KV cache:
     * QKV + 1536 c < 1572864  <=>  c < (1572864 - 786432) / 1536 = 512 exactly.
     * At c = 512 the sum equals the window: not strictly below, so 512 is the first context
     * whose KV is not prefetched. */
    pm_estimate e = estimate(&s);
    assert_int_equal(e.kv_spill_context, 512);
    /* ... which is where the insertion pass stops prefetching L1's attention */
    pm_graph *g = pm_graph_alloc(), *ins = pm_graph_alloc();
    for (int64_t c = 511; c <= 512; c++) {
        assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, c, 0, g, NULL), PM_OK);
        assert_int_equal(pm_insert_prefetch(g, 1572864.0, ins, NULL), PM_OK);
        int att = -1;
        for (size_t i = 0; i < ins->n_nodes; i++)
            if (strcmp(ins->nodes[i].name, "L1.Attention") == 0)
                att = (int)i;
        assert_true(att >= 0);
        if (c == 511)
            assert_true(ins->nodes[att].prefetch >= 0);
        else
            assert_int_equal(ins->nodes[att].prefetch, -1);
    }
    pm_graph_free(g);
    pm_graph_free(ins);
    /* A window that is not a whole number of tokens: 786432 + 1536 * 450.5 = 1478400 bytes
     * (L2 2956800 at half usable): (1478400 - 786432) / 1536 = 450.5, first spill at 451. */
    s.accel.l2_capacity_bytes = 2956800.0;
    assert_int_equal(estimate(&s).kv_spill_context, 451);
    /* A window that cannot even hold QKV never prefetches KV: 0 */
    s.accel.l2_capacity_bytes = 786432.0 * 2.0; /* window = QKV exactly: not < */
    assert_int_equal(estimate(&s).kv_spill_context, 0);
    /* One device: nothing to overlap, never prefetched */
    s = hand_scenario();
    s.cluster.devices = 1;
    assert_int_equal(estimate(&s).kv_spill_context, 0);
}

/* Over pipeline stages a step reads one micro-batch's KV: the spill is the micro-batch's.
 * llama70b-h100 with a 64 MiB L2, TP 4, 2 stages, batch 8 in 2 micro-batches of 4: window
 * 0.79 x 67108864 = 53016002.56 bytes; QKV 8192 x (16 + 2 x 2) x 128 x 2 = 41943040; a
 * position's KV 2 (K, V) x 2 heads x 128 x 2 bytes = 1024 a sequence, 4096 a micro-batch:
 * (53016002.56 - 41943040) / 4096 = 2703.4 -> 2704 (the whole batch's 8192: 1352). */
static void test_kv_spill_context_of_a_micro_batch(void **state)
{
    (void)state;
    const char *ov[] = {"accelerator.l2_capacity_MiB=64", "cluster.devices=4", "cluster.pipeline_parallel=2",
                        "workload.batch=8", "workload.seq_len=8192"};
    pm_scenario s = load("llama70b-h100", ov, 5);
    pm_estimate e = estimate(&s);
    assert_int_equal(e.pipeline.micro_batches, 2);
    assert_int_equal(e.pipeline.micro_batch, 4);
    assert_rel(e.l2_window_bytes, 53016002.56, 1e-15);
    assert_int_equal(e.kv_spill_context, 2704);
    /* ... where PRESERVE's last step stops prefetching the KV: its time jumps there alone
     * (the final context is seq_len - 1). */
    double t[3];
    for (int i = 0; i < 3; i++) {
        s.workload.seq_len = 2703 + i;
        t[i] = estimate(&s).modes[PM_MODE_PRESERVE].tpot_s;
    }
    assert_true(t[2] - t[1] > 10.0 * (t[1] - t[0]));
    pm_scenario_release(&s);
}

/* ---------------------------------------------------------------- one device */

static void test_one_device_speedups_are_exactly_one(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.cluster.devices = 1;
    pm_estimate e = estimate(&s);
    /* No allreduce: nothing to prefetch under and nothing to fuse with. The three modes run
     * the same graph, so the ratios are exactly 1. */
    assert_rel(e.speedup_preserve_vs_serial, 1.0, 0.0);
    assert_rel(e.speedup_preserve_vs_fused, 1.0, 0.0);
    assert_rel(e.speedup_fused_vs_serial, 1.0, 0.0);
    assert_rel(e.modes[PM_MODE_SERIAL].allreduce_decode_s, 0.0, 0.0);
    for (size_t i = 0; i < N_BUNDLED; i++) {
        const char *ov[] = {"cluster.devices=1"};
        pm_scenario b = load(bundled[i], ov, 1);
        assert_int_equal(b.cluster.devices, 1);
        e = estimate(&b);
        assert_rel(e.speedup_preserve_vs_serial, 1.0, 0.0);
        assert_rel(e.speedup_fused_vs_serial, 1.0, 0.0);
        pm_scenario_release(&b);
    }
}

/* ---------------------------------------------------------------- summation */

static void check_decode_sum(const pm_scenario *s)
{
    pm_estimate e = estimate(s);
    const int64_t sp = e.prefill_tokens, last = s->workload.seq_len - 1;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double sum = 0.0;
        for (int64_t c = sp; c <= last; c++)
            sum += step_time(s, (pm_mode)m, c);
        /* The closed form sums exact linear pieces (trapezoids); the brute force adds a few
         * hundred terms one by one. Both carry rounding of order n * eps ~ 1e-13: 1e-9
         * allows that and still catches one missing or doubled step (1/300 ~ 3e-3). */
        assert_rel(e.modes[m].decode_s, sum, 1e-9);
    }
}

static void test_decode_sum_matches_brute_force_across_spill(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    /* Contexts 300..599 cross the KV spill at 512 (see above). */
    assert_int_equal(estimate(&s).kv_spill_context, 512);
    check_decode_sum(&s);
    /* The spill makes the preserve step time jump: the KV is then read from HBM in the
     * attention kernel, no longer from L2. */
    assert_true(step_time(&s, PM_MODE_PRESERVE, 512) > step_time(&s, PM_MODE_PRESERVE, 511));
    /* with HBM sharing, and with strided KV (one device: no prefetch at all) */
    s.options.hbm_sharing = true;
    check_decode_sum(&s);
    /* with streaming consumers, whose step time is not convex in the context */
    s = hand_scenario();
    s.accel.prefetch_consumer = PM_CONSUMER_STREAM;
    check_decode_sum(&s);
    s.options.hbm_sharing = true;
    check_decode_sum(&s);
    s = hand_scenario();
    s.cluster.devices = 1;
    check_decode_sum(&s);
}

static void test_decode_sum_matches_brute_force_bundled(void **state)
{
    (void)state;
    /* Llama3-8B on 4 NPUs with a 12 MiB L2 and a 4K sequence: QKV per device is
     * 4096 * (8 + 2 * 2) * 128 = 6291456 bytes, KV per token 2 * 4 * 2 * 128 = 2048 bytes:
     * spill at (12582912 - 6291456) / 2048 = 3072, inside the decode range: the prompt is
     * llround(4096 * 2/3) = 2731 tokens, the contexts 2731..4095. */
    const char *ov[] = {"workload.seq_len=4096", "accelerator.l2_capacity_MiB=12"};
    pm_scenario s = load("llama8b", ov, 2);
    assert_rel(s.accel.l2_capacity_bytes, 12582912.0, 0.0);
    pm_estimate e = estimate(&s);
    assert_int_equal(e.prefill_tokens, 2731);
    assert_int_equal(e.kv_spill_context, 3072);
    check_decode_sum(&s);
    s.accel.prefetch_consumer = PM_CONSUMER_STREAM;
    check_decode_sum(&s);
    pm_scenario_release(&s);
}

/* The closed-form sums of serial and fused steps (and PRESERVE's on one device) against the
 * graph path's steps added one by one, over the decision cases above (the spill inside the
 * request, sharing, streaming consumers, one device), the L2 sizes that stop Algorithm 1 at
 * every kind of node, and a bundled scenario across its spill. */
static void test_closed_form_decode_sums_match_graph_path(void **state)
{
    (void)state;
    double worst = 0.0, w;
    const double l2_mib[] = {0.5, 1.0, 1.6, 2.5, 6.0, 12.0, 64.0};
    for (size_t i = 0; i < sizeof l2_mib / sizeof l2_mib[0]; i++)
        for (int variant = 0; variant < 4; variant++) {
            pm_scenario s = hand_scenario();
            s.accel.l2_capacity_bytes = l2_mib[i] * 1048576.0;
            s.options.hbm_sharing = variant & 1;
            if (variant & 2)
                s.accel.prefetch_consumer = PM_CONSUMER_STREAM;
            w = pm_test_closed_form_matches_graph(&s);
            worst = w > worst ? w : worst;
        }
    pm_scenario s = hand_scenario();
    s.cluster.devices = 1;
    w = pm_test_closed_form_matches_graph(&s);
    worst = w > worst ? w : worst;
    s = hand_scenario();
    s.model.gated_mlp = false;
    s.options.fused_chunks = 4;
    s.cluster.topology = PM_TOPO_RING;
    w = pm_test_closed_form_matches_graph(&s);
    worst = w > worst ? w : worst;
    /* Llama3-8B, 4K, 12 MiB: the spill at 3072 inside the decode range (see above). */
    const char *ov[] = {"workload.seq_len=4096", "accelerator.l2_capacity_MiB=12"};
    s = load("llama8b", ov, 2);
    w = pm_test_closed_form_matches_graph(&s);
    worst = w > worst ? w : worst;
    pm_scenario_release(&s);
    print_message("closed-form decode sums: largest relative difference %.3g\n", worst);
}

/* ---------------------------------------------------------------- layer extrapolation */

static double full_depth_step(const pm_scenario *s, pm_mode m, int64_t ctx)
{
    pm_graph *g = pm_graph_alloc(), *ins = pm_graph_alloc();
    const pm_step step = pm_test_step(s, PM_PHASE_DECODE, ctx);
    assert_int_equal(pm_graph_build_ex(s, &step, 0, m == PM_MODE_FUSED, g, NULL),
                     PM_OK);
    const pm_graph *run = g;
    if (m == PM_MODE_PRESERVE) {
        assert_int_equal(pm_insert_prefetch(g, s->accel.l2_capacity_bytes *
                                                   s->accel.l2_usable_frac,
                                            ins, NULL),
                         PM_OK);
        run = ins;
    }
    pm_schedule sc;
    assert_int_equal(pm_schedule_compute(s, run, &sc, NULL), PM_OK);
    const double t = sc.makespan_s;
    pm_schedule_release(&sc);
    pm_graph_free(g);
    pm_graph_free(ins);
    return t;
}

static void test_layer_extrapolation_matches_full_depth(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    for (int share = 0; share <= 1; share++)
        for (int L = 1; L <= 7; L++)
            for (int m = 0; m < PM_MODE_COUNT; m++)
                for (int64_t ctx = 400; ctx <= 550; ctx += 150) { /* KV prefetched / spilled */
                    s.model.layers = L;
                    s.options.hbm_sharing = share;
                    /* Same operations in a different order (a period times L - 3 instead of
                     * L - 3 more layers): rounding only, 1e-12. */
                    assert_rel(step_time(&s, (pm_mode)m, ctx),
                               full_depth_step(&s, (pm_mode)m, ctx), 1e-12);
                }
    /* And the step time grows linearly with depth beyond three layers. */
    s = hand_scenario();
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double t[3];
        for (int L = 3; L <= 5; L++) {
            s.model.layers = L;
            t[L - 3] = step_time(&s, (pm_mode)m, 450);
        }
        assert_rel(t[2] - t[1], t[1] - t[0], 1e-9);
        assert_true(t[1] > t[0]);
    }
}

/* ---------------------------------------------------------------- fast path vs graph */

/* The fast step evaluator (step_plan.c) against the graph path (build, insert, cost, schedule) on
 * one scenario: every mode, both phases, contexts across the window decisions. */
static void check_fast_equals_graph(const pm_scenario *s)
{
    const int64_t seq = s->workload.seq_len;
    const int64_t ctxs[] = {1, seq / 3, seq / 2, seq - 1, 2 * seq};
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        for (size_t k = 0; k < sizeof ctxs / sizeof ctxs[0]; k++) {
            double fast = -1.0, graph = -2.0;
            assert_int_equal(pm_decode_step_time(s, (pm_mode)m, ctxs[k], &fast, NULL), PM_OK);
            assert_int_equal(pm_step_time_graph(s, (pm_mode)m, PM_PHASE_DECODE, ctxs[k], &graph,
                                                 NULL, NULL),
                             PM_OK);
            /* Same operations, grouped differently (periods instead of three layers): only
             * rounding differs. */
            assert_rel(fast, graph, 1e-11);
        }
        /* Prefill at the prompt length, through the estimate. */
        pm_estimate e = estimate(s);
        double graph = -1.0;
        assert_int_equal(pm_step_time_graph(s, (pm_mode)m, PM_PHASE_PREFILL, e.prefill_tokens,
                                             &graph, NULL, NULL),
                         PM_OK);
        assert_rel(e.modes[m].prefill_s, graph, 1e-11);
    }
}

/* The signature's guess of where the insertion decisions change next (from the room they leave
 * under the capacity) is the first context with other decisions, found here by walking every
 * context, or the walk finds no change (guess -1 or beyond it), for the bundled full-attention
 * scenarios at several batches. */
static void test_signature_guesses_the_next_change(void **state)
{
    (void)state;
    const char *names[] = {"llama70b", "qwen2-7b", "llama8b", "paper-dse", "mixtral8x7b",
                           "qwen3-30b-a3b"};
    int found = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        for (int batch = 1; batch <= 16; batch *= 4) {
            pm_scenario s = load(names[k], NULL, 0);
            s.workload.batch = batch;
            pm_step_plan *p = malloc(sizeof *p);
            assert_non_null(p);
            const pm_step step = pm_test_step(&s, PM_PHASE_DECODE, 1);
            assert_int_equal(pm_step_plan_build(&s, &step, false, true, p, NULL),
                             PM_OK);
            const int64_t end = 400000;
            int64_t ctx = 1;
            while (ctx < end) {
                int64_t next = -2;
                const unsigned sa = pm_step_plan_signature(p, ctx, &next);
                int64_t c = ctx + 1;
                while (c < end && pm_step_plan_signature(p, c, NULL) == sa)
                    c += c < next - 4 ? next - 4 - c : 1; /* jump to near the guess, then walk */
                if (c >= end) {
                    assert_true(next == -1 || next >= end);
                    break;
                }
                /* the first change at or after the jump target is the guess */
                assert_int_equal(c, next);
                found++;
                ctx = c;
            }
            free(p);
            pm_scenario_release(&s);
        }
    }
    assert_true(found >= 8);
}

/* A region compiled at a context (its insertion decisions and segments) times every later
 * context with the same signature exactly as a PRESERVE evaluation there does, bit for bit,
 * and counts the same traffic; its signature and next-change guess are the signature's. Over
 * dense, windowed, chunked and MoE scenarios, with HBM sharing and both consumer kinds. */
static void test_region_equals_step_eval(void **state)
{
    (void)state;
    const char *names[] = {"llama70b", "gemma2-9b", "llama4-scout-h100", "qwen3-30b-a3b"};
    const char *ov[][1] = {{"options.hbm_sharing=true"},
                           {"accelerator.prefetch_consumer=wait"},
                           {"accelerator.prefetch_consumer=stream"}};
    const int64_t starts[] = {1, 4095, 16383, 70000, 90000};
    int compared = 0;
    pm_step_plan *p = malloc(sizeof *p);
    pm_step_region *r = malloc(sizeof *r);
    assert_non_null(p);
    assert_non_null(r);
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        for (size_t o = 0; o <= sizeof ov / sizeof ov[0]; o++) {
            pm_scenario s = load(names[k], o ? ov[o - 1] : NULL, o ? 1 : 0);
            const pm_step step = pm_test_step(&s, PM_PHASE_DECODE, 1);
            assert_int_equal(pm_step_plan_build(&s, &step, false, true, p, NULL),
                             PM_OK);
            pm_step_plan_count(p);
            for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
                const int64_t a = starts[i];
                int64_t next = -2;
                const unsigned sig = pm_step_plan_signature(p, a, &next);
                pm_step_region_init(p, a, true, r);
                assert_int_equal(r->sig, sig);
                assert_int_equal(r->next, next);
                for (int64_t c = a; c < a + 3000; c += c < a + 8 ? 1 : 97) {
                    if (pm_step_plan_signature(p, c, NULL) != sig)
                        break;
                    double t_plan = -1.0, t_region = -2.0;
                    assert_int_equal(pm_step_plan_eval(p, true, c, &t_plan, NULL), PM_OK);
                    assert_int_equal(pm_step_region_eval(r, c, &t_region), PM_OK);
                    assert_memory_equal(&t_plan, &t_region, sizeof t_plan);
                    pm_traffic tr_plan, tr_region;
                    pm_step_plan_traffic(p, true, c, &tr_plan);
                    pm_step_region_traffic(r, c, &tr_region);
                    assert_memory_equal(&tr_plan, &tr_region, sizeof tr_plan);
                    compared++;
                }
            }
            pm_scenario_release(&s);
        }
    }
    free(r);
    free(p);
    assert_true(compared > 500);
}

static void test_fast_path_equals_graph_path(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    /* Window sizes that stop Algorithm 1 at every kind of node: nothing fits, QKV only, QKV
     * and KV, everything, and the LM head. */
    const double l2_mib[] = {0.5, 1.0, 1.6, 2.5, 6.0, 12.0, 64.0};
    for (size_t i = 0; i < sizeof l2_mib / sizeof l2_mib[0]; i++)
        for (int share = 0; share <= 1; share++)
            for (int layers = 1; layers <= 4; layers++) {
                s = hand_scenario();
                s.accel.l2_capacity_bytes = l2_mib[i] * 1048576.0;
                s.options.hbm_sharing = share;
                s.model.layers = layers;
                check_fast_equals_graph(&s);
            }
    /* One device, ideal sharding over an uneven split, a non-gated MLP, fixed fused chunks,
     * a ring. */
    s = hand_scenario();
    s.cluster.devices = 1;
    check_fast_equals_graph(&s);
    s = hand_scenario();
    s.cluster.devices = 3;
    s.options.sharding = PM_SHARDING_IDEAL;
    check_fast_equals_graph(&s);
    s = hand_scenario();
    s.model.gated_mlp = false;
    s.options.fused_chunks = 4;
    s.cluster.topology = PM_TOPO_RING;
    check_fast_equals_graph(&s);
    /* Every bundled scenario, with and without sharing. */
    for (size_t i = 0; i < N_BUNDLED; i++) {
        pm_scenario b = load(bundled[i], NULL, 0);
        check_fast_equals_graph(&b);
        b.options.hbm_sharing = true;
        check_fast_equals_graph(&b);
        pm_scenario_release(&b);
    }
}

/* Sequence parallelism (issue 44): the all-gather before the attention opens a window inside
 * the layer's attention part, the prefix holds one, the tail has its own all-gather; the fast
 * path's periods must still schedule what the graph does, at every window size (the same
 * sizes as above, which stop Algorithm 1 at every kind of node), with and without sharing, a
 * batch that the ranks do not divide (padding), and a streaming consumer. */
static void test_fast_path_equals_graph_path_with_sequence_parallel(void **state)
{
    (void)state;
    const double l2_mib[] = {0.5, 1.0, 1.6, 2.5, 6.0, 12.0, 64.0};
    for (size_t i = 0; i < sizeof l2_mib / sizeof l2_mib[0]; i++)
        for (int share = 0; share <= 1; share++)
            for (int layers = 1; layers <= 3; layers++) {
                pm_scenario s = hand_scenario();
                s.cluster.sequence_parallel = true;
                s.accel.l2_capacity_bytes = l2_mib[i] * 1048576.0;
                s.options.hbm_sharing = share;
                s.model.layers = layers;
                check_fast_equals_graph(&s);
                s.workload.batch = 3;
                s.cluster.topology = PM_TOPO_RING;
                check_fast_equals_graph(&s);
                s.accel.prefetch_consumer = PM_CONSUMER_STREAM;
                check_fast_equals_graph(&s);
            }
    const char *names[] = {"llama70b", "llama8b", "paper-dse", "qwen2-7b", "gemma2-9b",
                           "gemma3-27b"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        pm_scenario b = load(names[i], NULL, 0);
        b.cluster.sequence_parallel = true;
        check_fast_equals_graph(&b);
        b.options.hbm_sharing = true;
        check_fast_equals_graph(&b);
        pm_scenario_release(&b);
    }
}

/* Data-parallel attention with EP MLPs (issue 44 item 3): the graph path and the fast path
 * agree on decode steps along the request and on the prefill, on the bundled MoE scenarios
 * whose every layer is MoE, each device an EP rank, at a batch the ranks divide and one they
 * do not. */
static void test_fast_path_equals_graph_path_with_attention_data_parallel(void **state)
{
    (void)state;
    static const char *const adp[] = {"cluster.attention_data_parallel=true"};
    const char *names[] = {"qwen3-30b-a3b", "llama4-scout-h100"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        for (int batch = 5; batch <= 40; batch *= 8) {
            pm_scenario b = load(names[i], adp, 1);
            b.workload.batch = batch;
            check_fast_equals_graph(&b);
            b.options.hbm_sharing = true;
            check_fast_equals_graph(&b);
            pm_scenario_release(&b);
        }
}

/* Dense layers beside data-parallel attention (DeepSeek-V3: 3 dense layers, then 58 MoE
 * layers): a dense layer's first collective is the all-gather after norm2, a MoE layer's the
 * dispatch after its router, so the fast evaluator's periods are keyed by both layers' MLP
 * classes (dense to dense, dense to MoE, MoE to MoE). The L2 sizes move the windows from
 * stopping inside a layer (50 MiB) to running through the next layer's attention, shared
 * experts and router (1 GiB), and past them into a layer's expert reads (2 GiB). */
static void test_fast_path_equals_graph_path_with_dense_layers_beside_dp_attention(void **state)
{
    (void)state;
    static const char *const adp[] = {"cluster.attention_data_parallel=true",
                                      "cluster.expert_parallel=8"};
    const double l2_MiB[] = {50, 1024, 2048};
    for (size_t k = 0; k < sizeof l2_MiB / sizeof l2_MiB[0]; k++)
        for (int batch = 5; batch <= 40; batch *= 8) {
            pm_scenario b = load("deepseek-v3-h200", adp, 2);
            b.workload.batch = batch;
            b.accel.l2_capacity_bytes = l2_MiB[k] * 1048576.0 / b.accel.l2_usable_frac;
            check_fast_equals_graph(&b);
            b.options.hbm_sharing = true;
            check_fast_equals_graph(&b);
            pm_scenario_release(&b);
        }
}

/* The experts tensor parallel beside data-parallel attention (DeepSeek-V3, EP 1: SGLang's
 * default without --ep): every layer's first collective is the all-gather after norm2, dense
 * or MoE, at L2 windows that stop inside a layer and ones that run into the next. */
static void test_fast_path_equals_graph_path_tensor_parallel_experts_beside_dp_attention(
    void **state)
{
    (void)state;
    static const char *const adp[] = {"cluster.attention_data_parallel=true",
                                      "cluster.expert_parallel=1"};
    const double l2_MiB[] = {50, 1024};
    for (size_t k = 0; k < sizeof l2_MiB / sizeof l2_MiB[0]; k++)
        for (int batch = 5; batch <= 40; batch *= 8) {
            pm_scenario b = load("deepseek-v3-h200", adp, 2);
            b.workload.batch = batch;
            b.accel.l2_capacity_bytes = l2_MiB[k] * 1048576.0 / b.accel.l2_usable_frac;
            check_fast_equals_graph(&b);
            b.options.hbm_sharing = true;
            check_fast_equals_graph(&b);
            pm_scenario_release(&b);
        }
}

static void test_step_model_equals_decode_step_time(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    for (int share = 0; share <= 1; share++) {
        s.options.hbm_sharing = share;
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            pm_step_model *sm = NULL;
            assert_int_equal(pm_step_model_new(&s, (pm_mode)m, &sm, NULL), PM_OK);
            /* Across the KV spill at 512 (see the top of this file). */
            for (int64_t ctx = 0; ctx <= 700; ctx += 50)
                assert_rel(pm_step_model_decode_time(sm, ctx), step_time(&s, (pm_mode)m, ctx),
                           1e-12);
            assert_true(isnan(pm_step_model_decode_time(sm, -1)));
            pm_step_model_free(sm);
        }
    }
    pm_step_model *sm = NULL;
    pm_error err;
    s.cluster.devices = 64; /* more devices than heads */
    assert_int_equal(pm_step_model_new(&s, PM_MODE_SERIAL, &sm, &err), PM_ERR_INCONSISTENT);
    assert_null(sm);
    /* A speculating scenario: a decode step is its verify step, not a token's time (the
     * estimate's TPOT adds the draft and divides by the tokens a step yields), and the draft's
     * memory is not in max_context: a step model is refused. */
    pm_scenario mtp = load("deepseek-v3-mtp", NULL, 0);
    assert_int_equal(pm_step_model_new(&mtp, PM_MODE_SERIAL, &sm, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.speculative");
    assert_null(sm);
    pm_scenario_release(&mtp);
}

static int64_t max_context(const pm_scenario *s)
{
    pm_step_model *sm = NULL;
    pm_error err;
    if (pm_step_model_new(s, PM_MODE_PRESERVE, &sm, &err) != PM_OK)
        fail_msg("pm_step_model_new: %s", err.message);
    const int64_t n = pm_step_model_max_context(sm);
    pm_step_model_free(sm);
    return n;
}

static void test_step_model_max_context_by_hand(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    /* Weights 34603008 bytes per device (test_estimate_by_hand); the KV cache 2 x batch 6 x 1
     * KV head x 128 x 1 byte = 1536 bytes per position per layer, 6144 over the 4 layers. */
    const double w = 34603008.0, kv = 6144.0;
    /* 64e9 bytes: (64e9 - 34603008) / 6144 = 10411034.7 positions. */
    assert_int_equal(max_context(&s), 10411034);
    s.accel.hbm_capacity_bytes = w + 600.0 * kv; /* exactly 600 positions */
    assert_int_equal(max_context(&s), 600);
    /* One step's warning flips at the same context: 34603008 + 601 x 6144 = 38295552 B =
     * 0.0322 GiB + 0.00344 GiB against 0.0357 GiB. */
    char note[512];
    assert_false(pm_context_warning(&s, 600, 0, note, sizeof note));
    assert_true(pm_context_warning(&s, 601, 0, note, sizeof note));
    assert_string_equal(note, "the weights and KV cache per device at context 601 (0.0322 GiB + "
                              "0.00344 GiB) exceed its 0.0357 GiB of usable HBM: the times are of "
                              "memory the device does not have (fewer sequences or tokens, or "
                              "more devices, fit)");
    assert_false(pm_context_warning(&s, 601, 1, note, sizeof note));
    assert_false(pm_context_warning(&s, -1, 0, note, sizeof note));
    pm_estimate e = estimate(&s); /* seq_len 600: the estimate's flag agrees */
    assert_true(e.fits_hbm);
    s.accel.hbm_capacity_bytes -= 1.0;
    assert_int_equal(max_context(&s), 599);
    assert_false(estimate(&s).fits_hbm);
    s.accel.hbm_capacity_bytes = w - 1.0; /* not even the weights */
    assert_int_equal(max_context(&s), -1);
    assert_int_equal(pm_step_model_max_context(NULL), -1);
    /* The runtime's share: 0.9 x 42543787 = 38289408.3 usable, 600 positions and 0.3 bytes. */
    s.runtime.present = true;
    s.runtime.hbm_usable_frac = 0.9;
    s.accel.hbm_capacity_bytes = 42543787.0;
    assert_int_equal(max_context(&s), 600);
    s.runtime = (pm_runtime){0};
    /* Every layer windowed at 256 positions: the cache stops at 4 x 1536 x 256 = 1572864
     * bytes, so every context fits 64e9 bytes... */
    s.accel.hbm_capacity_bytes = 64e9;
    s.model.sliding_window = 256;
    assert_int_equal(max_context(&s), INT64_MAX);
    /* ...and none fits when the window's cache does not: capacity w + 1572863. */
    s.accel.hbm_capacity_bytes = w + 1572863.0;
    assert_int_equal(max_context(&s), 255);
    /* Local and global layers alternating (layers 0 and 2 local): 2 x 1536 x 256 = 786432
     * bytes from the local layers past 256, then 3072 bytes per position from the global ones:
     * capacity w + 786432 + 3072 x 1000 holds 1000 positions. */
    s.model.window_period = 2;
    s.model.local_mask = 1;
    s.accel.hbm_capacity_bytes = w + 786432.0 + 3072.0 * 1000.0;
    assert_int_equal(max_context(&s), 1000);
    /* Capacities on both sides of the window's kink (256 positions: w + 1572864 bytes), each a
     * byte either side of a whole position: the answer n fits and n + 1 does not, by the
     * footprint itself (the search starts from a guess; the rule decides). */
    for (int k = 0; k < 600; k += 7)
        for (int d = -1; d <= 1; d++) {
            s.accel.hbm_capacity_bytes =
                w + (k < 256 ? 6144.0 * k : 786432.0 + 3072.0 * k) + d;
            const int64_t n = max_context(&s);
            if (k == 0 && d < 0) { /* a byte short of the weights */
                assert_int_equal(n, -1);
                continue;
            }
            pm_footprint at, next;
            assert_int_equal(pm_footprint_compute(&s, NULL, n, &at, NULL), PM_OK);
            assert_int_equal(pm_footprint_compute(&s, NULL, n + 1, &next, NULL), PM_OK);
            if (!(at.weight_bytes + at.kv_bytes <= s.accel.hbm_capacity_bytes) ||
                next.weight_bytes + next.kv_bytes <= s.accel.hbm_capacity_bytes)
                fail_msg("capacity w + %d positions %+d bytes: max_context %lld", k, d,
                         (long long)n);
            assert_int_equal(n, d < 0 ? k - 1 : k);
        }
}

/* Bundled architectures (MoE, MLA, windowed and chunked local layers, dense): the estimate's
 * fits_hbm flips between a sequence of max_context and one of max_context + 1. */
static void test_step_model_max_context_is_the_estimates_rule(void **state)
{
    (void)state;
    const char *names[] = {"qwen3-30b-a3b", "deepseek-v3-h200", "gemma2-9b", "llama4-scout-h100",
                           "llama70b"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        pm_scenario s = load(names[i], NULL, 0);
        const int64_t n = max_context(&s);
        if (n < 1 || n == INT64_MAX)
            fail_msg("%s: max_context %lld", names[i], (long long)n);
        s.workload.seq_len = n;
        if (!estimate(&s).fits_hbm)
            fail_msg("%s: seq_len %lld does not fit", names[i], (long long)n);
        s.workload.seq_len = n + 1;
        if (estimate(&s).fits_hbm)
            fail_msg("%s: seq_len %lld fits", names[i], (long long)n + 1);
        pm_scenario_release(&s);
    }
}

/* ---------------------------------------------------------------- properties */

static void assert_sane(const pm_scenario *s, const pm_estimate *e)
{
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_mode_result *r = &e->modes[m];
        const double v[] = {r->request_s, r->prefill_s, r->decode_s, r->tpot_s, r->tpot_mean_s,
                            r->tokens_per_s};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            if (!(isfinite(v[i]) && v[i] > 0))
                fail_msg("%s, mode %s: output %zu is %g", s->name, pm_mode_name((pm_mode)m), i,
                         v[i]);
        if (s->cluster.devices > 1)
            assert_true(isfinite(r->allreduce_decode_s) && r->allreduce_decode_s > 0);
    }
    assert_true(isfinite(e->speedup_preserve_vs_serial) && e->speedup_preserve_vs_serial > 0);
    assert_true(isfinite(e->speedup_preserve_vs_fused) && e->speedup_preserve_vs_fused > 0);
    assert_true(isfinite(e->speedup_fused_vs_serial) && e->speedup_fused_vs_serial > 0);
    assert_true(e->weight_bytes_per_device > 0 && e->kv_bytes_per_device > 0);
    assert_true(e->decode_steps > 0 && e->prefill_tokens > 0);
}

/* b no slower than a in every mode. Comparisons allow 1e-12 relative: the sums of the two
 * runs may round differently where a term does not change at all. */
static void assert_no_slower(const char *what, const pm_scenario *s, const pm_estimate *a,
                             const pm_estimate *b)
{
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        if (!(b->modes[m].request_s <= a->modes[m].request_s * (1 + 1e-12)))
            fail_msg("%s: %s, mode %s: request %.17g s -> %.17g s", what, s->name,
                     pm_mode_name((pm_mode)m), a->modes[m].request_s, b->modes[m].request_s);
        if (!(b->modes[m].tpot_s <= a->modes[m].tpot_s * (1 + 1e-12)))
            fail_msg("%s: %s, mode %s: tpot %.17g s -> %.17g s", what, s->name,
                     pm_mode_name((pm_mode)m), a->modes[m].tpot_s, b->modes[m].tpot_s);
    }
}

static void assert_preserve_no_slower_than_serial(const pm_scenario *s, const pm_estimate *e)
{
    if (!(e->modes[PM_MODE_PRESERVE].request_s <=
          e->modes[PM_MODE_SERIAL].request_s * (1 + 1e-12)))
        fail_msg("%s: preserve %.17g s slower than serial %.17g s", s->name,
                 e->modes[PM_MODE_PRESERVE].request_s, e->modes[PM_MODE_SERIAL].request_s);
}

/* The scenarios the properties run over: every bundled one, plus a few variants that move
 * the KV spill into the decode range and change the device count. */
static size_t property_scenarios(pm_scenario *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < N_BUNDLED && n < cap; i++)
        out[n++] = load(bundled[i], NULL, 0);
    const char *ov1[] = {"accelerator.l2_capacity_MiB=12", "workload.seq_len=4096"};
    const char *ov2[] = {"cluster.devices=8"};
    const char *ov3[] = {"workload.batch=64", "workload.seq_len=2048"};
    out[n++] = load("llama8b", ov1, 2);
    out[n++] = load("llama70b", ov2, 1);
    out[n++] = load("phi3-medium", ov3, 2);
    out[n++] = hand_scenario();
    return n;
}

static void free_all(pm_scenario *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pm_scenario_release(&s[i]);
}

static void test_properties_finite_and_preserve_no_slower(void **state)
{
    (void)state;
    pm_scenario sc[16];
    const size_t n = property_scenarios(sc, 16);
    for (size_t i = 0; i < n; i++) {
        pm_estimate e = estimate(&sc[i]);
        assert_sane(&sc[i], &e);
        assert_preserve_no_slower_than_serial(&sc[i], &e);
        /* sharing HBM with the prefetch stream can only slow preserve down, and leaves the
         * one-stream modes alone */
        pm_scenario sh = sc[i];
        sh.options.hbm_sharing = true;
        pm_estimate es = estimate(&sh);
        assert_sane(&sh, &es);
        assert_true(es.modes[PM_MODE_PRESERVE].request_s >=
                    e.modes[PM_MODE_PRESERVE].request_s * (1 - 1e-12));
        assert_rel(es.modes[PM_MODE_SERIAL].request_s, e.modes[PM_MODE_SERIAL].request_s, 0.0);
        assert_rel(es.modes[PM_MODE_FUSED].request_s, e.modes[PM_MODE_FUSED].request_s, 0.0);
    }
    free_all(sc, n);
}

static void test_properties_more_resources_never_slower(void **state)
{
    (void)state;
    pm_scenario sc[16];
    const size_t n = property_scenarios(sc, 16);
    for (size_t i = 0; i < n; i++) {
        const pm_scenario *s = &sc[i];
        const pm_estimate base = estimate(s);
        pm_scenario v = *s;
        v.accel.hbm_bandwidth_bytes_per_s *= 1.5;
        pm_estimate e = estimate(&v);
        assert_no_slower("1.5x HBM bandwidth", s, &base, &e);
        v = *s;
        v.accel.hbm_efficiency_frac = s->accel.hbm_efficiency_frac * 0.5;
        e = estimate(&v);
        assert_no_slower("half HBM efficiency (reversed)", s, &e, &base);
        v = *s;
        v.cluster.link_bandwidth_bytes_per_s *= 2.0;
        v.cluster.inter_node_bandwidth_bytes_per_s *= 2.0;
        e = estimate(&v);
        assert_no_slower("2x link bandwidth", s, &base, &e);
        v = *s;
        v.cluster.link_latency_s *= 0.5;
        e = estimate(&v);
        assert_no_slower("half link latency", s, &base, &e);
        v = *s;
        for (int d = 0; d < PM_DTYPE_COUNT; d++)
            v.accel.peak_flop_per_s[d] *= 2.0;
        e = estimate(&v);
        assert_no_slower("2x compute", s, &base, &e);
        v = *s;
        v.accel.l2_bandwidth_bytes_per_s *= 2.0;
        e = estimate(&v);
        assert_no_slower("2x L2 bandwidth", s, &base, &e);
    }
    free_all(sc, n);
}

/* A larger L2 admits more prefetches (Algorithm 1 only looks at capacity). Under the
 * schedule of DESIGN.md section 7 a consumer waits for its whole prefetch and then reads L2,
 * so a window whose prefetch outlasts its allreduce by more than the L2 read it saves costs
 * time: e.g. Llama3-8B at 128 MiB admits the 125 MiB LM head under the last allreduce (about
 * 95 us of prefetch under a ~10 us allreduce, then a 28 us L2 read), and the 8x H100 scenario,
 * whose allreduce takes under 2 us, loses from 32 MiB on. The property is therefore checked
 * where every window's prefetch is of the order of its allreduce: the paper's Ascend
 * platform, L2 up to 96 MiB (below the smallest LM-head shard), and the hand scenario. */
static void test_properties_larger_l2_never_slower(void **state)
{
    (void)state;
    const double mib[] = {2, 4, 8, 16, 32, 64, 96};
    pm_scenario sc[16];
    const size_t n = property_scenarios(sc, 16);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(sc[i].name, "llama70b-h100") == 0)
            continue;
        pm_scenario v = sc[i];
        pm_estimate prev;
        for (size_t k = 0; k < sizeof mib / sizeof mib[0]; k++) {
            v.accel.l2_capacity_bytes = mib[k] * 1048576.0;
            pm_estimate e = estimate(&v);
            assert_sane(&v, &e);
            assert_preserve_no_slower_than_serial(&v, &e);
            if (k > 0) {
                char what[64];
                snprintf(what, sizeof what, "L2 %g -> %g MiB", mib[k - 1], mib[k]);
                assert_no_slower(what, &v, &prev, &e);
                /* the spill point moves out (or stays 0 when QKV alone does not fit) */
                assert_true(e.kv_spill_context == 0 ||
                            e.kv_spill_context >= prev.kv_spill_context);
            }
            prev = e;
        }
    }
    free_all(sc, n);
}

/* ---------------------------------------------------------------- errors */

static void test_estimate_rejects_bad_input(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    pm_estimate e;
    double t;
    pm_error err;
    assert_int_equal(pm_estimate_compute(NULL, &e, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_estimate_compute(&s, NULL, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_decode_step_time(&s, PM_MODE_COUNT, 10, &t, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_decode_step_time(&s, PM_MODE_SERIAL, 10, NULL, NULL), PM_ERR_INVALID_ARG);
    s.cluster.devices = 16; /* 8 heads */
    memset(&err, 0, sizeof err);
    assert_int_equal(pm_estimate_compute(&s, &e, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "$.cluster.devices");
    s.options.sharding = PM_SHARDING_IDEAL;
    e = estimate(&s);
    assert_sane(&s, &e);
    s = hand_scenario();
    s.accel.peak_flop_per_s[PM_DTYPE_INT8] = 0.0;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_ERR_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate_bookkeeping),
        cmocka_unit_test(test_kv_spill_context_closed_form),
        cmocka_unit_test(test_kv_spill_context_of_a_micro_batch),
        cmocka_unit_test(test_one_device_speedups_are_exactly_one),
        cmocka_unit_test(test_decode_sum_matches_brute_force_across_spill),
        cmocka_unit_test(test_decode_sum_matches_brute_force_bundled),
        cmocka_unit_test(test_closed_form_decode_sums_match_graph_path),
        cmocka_unit_test(test_layer_extrapolation_matches_full_depth),
        cmocka_unit_test(test_signature_guesses_the_next_change),
        cmocka_unit_test(test_fast_path_equals_graph_path),
        cmocka_unit_test(test_fast_path_equals_graph_path_with_sequence_parallel),
        cmocka_unit_test(test_fast_path_equals_graph_path_with_attention_data_parallel),
        cmocka_unit_test(test_fast_path_equals_graph_path_with_dense_layers_beside_dp_attention),
        cmocka_unit_test(test_fast_path_equals_graph_path_tensor_parallel_experts_beside_dp_attention),
        cmocka_unit_test(test_step_model_equals_decode_step_time),
        cmocka_unit_test(test_step_model_max_context_by_hand),
        cmocka_unit_test(test_step_model_max_context_is_the_estimates_rule),
        cmocka_unit_test(test_region_equals_step_eval),
        cmocka_unit_test(test_properties_finite_and_preserve_no_slower),
        cmocka_unit_test(test_properties_more_resources_never_slower),
        cmocka_unit_test(test_properties_larger_l2_never_slower),
        cmocka_unit_test(test_estimate_rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
