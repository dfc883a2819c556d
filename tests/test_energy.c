/*
 * test_energy.c - energy and dollar cost: the bytes and MACs of one decode step and its energy
 * by hand, the fast path's traffic against the graph path's, the decode sum against brute
 * force, the die cost of an 826 mm2 7 nm die by hand (dies per wafer and the three yield
 * models), the bundled parts' modelled power against their board power, accelerators without
 * the blocks, and properties (energy grows with bytes moved; cost grows with die area); the
 * clock the board power allows a phase by hand, the prefill's power and its warning (issue 47).
 */
#include <gsl/gsl_errno.h>

#include "testutil.h"

/* Tolerances: sums of a few dozen exact products of small integers and decimal coefficients;
 * 1e-12 leaves room for the order of the sums. The decode sum adds thousands of steps in closed
 * form against one at a time: 1e-9. */
#define HAND 1e-12
#define SUM 1e-9

/* A one-layer model small enough to count every byte by hand, on 2 devices in a ring (the
 * shared hand scenario, shrunk). */
static pm_scenario tiny(void)
{
    pm_scenario s = pm_test_hand_scenario(2);
    snprintf(s.name, sizeof s.name, "tiny");
    s.model.layers = 1;
    s.model.hidden = 64;
    s.model.heads = s.model.kv_heads = 2;
    s.model.head_dim = 32;
    s.model.intermediate = 128;
    s.model.vocab = 256;
    s.model.tied_embeddings = true;
    pm_accelerator *a = &s.accel;
    a->l2_capacity_bytes = 64.0 * 1048576.0;
    a->kv_strided_efficiency_frac = 1.0;
    a->kernel_launch_s = 1e-6;
    a->energy.present = true;
    a->energy.hbm_J_per_byte = 48e-12;        /* 6 pJ/bit */
    a->energy.l2_write_J_per_byte = 11.6e-12; /* 1.45 pJ/bit */
    a->energy.l2_read_J_per_byte = 5e-12;
    a->energy.link_J_per_byte = 10.4e-12;     /* 1.3 pJ/bit */
    a->energy.mac_J[PM_DTYPE_INT8] = 0.23e-12;
    a->energy.static_W = 100.0;
    s.cluster.topology = PM_TOPO_RING;
    s.cluster.link_latency_s = 1e-6;
    s.workload.batch = 1;
    s.workload.seq_len = 200;
    return s;
}

static pm_traffic step_traffic(const pm_scenario *s, pm_mode m, int64_t ctx)
{
    pm_traffic t;
    pm_error err;
    pm_status st = pm_decode_step_traffic(s, m, ctx, &t, &err);
    if (st != PM_OK)
        fail_msg("pm_decode_step_traffic: %s", err.message);
    return t;
}

static pm_traffic graph_traffic(const pm_scenario *s, pm_mode m, pm_phase ph, int64_t ctx)
{
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    pm_traffic t;
    pm_error err;
    pm_status st = pm_graph_build_mode(s, m, ph, ctx, 0, g, &err);
    if (st == PM_OK)
        st = pm_graph_traffic(s, g, &t, &err);
    pm_graph_free(g);
    if (st != PM_OK)
        fail_msg("graph traffic: %s", err.message);
    return t;
}

static void assert_traffic_rel(const pm_traffic *a, const pm_traffic *b, double rel)
{
    assert_rel(a->hbm_bytes, b->hbm_bytes, rel);
    assert_rel(a->l2_write_bytes, b->l2_write_bytes, rel);
    assert_rel(a->l2_read_bytes, b->l2_read_bytes, rel);
    assert_rel(a->link_bytes, b->link_bytes, rel);
    for (int d = 0; d < PM_DTYPE_COUNT; d++)
        assert_rel(a->mac[d], b->mac[d], rel);
}

static double step_time(const pm_scenario *s, pm_mode m, int64_t ctx)
{
    double t;
    assert_int_equal(pm_decode_step_time(s, m, ctx, &t, NULL), PM_OK);
    return t;
}

static void test_one_step_energy_by_hand(void **state)
{
    (void)state;
    const pm_scenario s = tiny();
    /* Per device: 1 query and 1 KV head of 32, 64 MLP columns, 128 LM-head rows; batch 1,
     * int8 everywhere (1 byte per element), context 100. Node by node (act + weight + KV):
     *   Embedding   act 64 x (1 + 1) = 128
     *   norm1       act 2 x 64 = 128                         flop 5 x 64 = 320
     *   QKV 64x96   act 64 + 96 = 160, weights 6144          flop 2 x 64 x 96 = 12288
     *   RoPE        act 2 x 2 x 32 + 2 x 32 = 192            flop 6 x 2 x 32 = 384
     *   Attention   act 2 x 32 = 64, KV 2 x 100 x 32 = 6400  flop 4x100x32 + 5x100 = 13300
     *   O 32x64     act 32 + 64 = 96, weights 2048           flop 4096
     *   AR.attn     64 bytes
     *   norm2       act 128                                  flop 320
     *   Gate, Up    act 128 each, weights 4096 each          flop 8192 each
     *   SiLUxMul    act 3 x 64 = 192                         flop 6 x 64 = 384
     *   Down 64x64  act 128, weights 4096                    flop 8192
     *   AR.mlp      64 bytes
     *   FinalNorm   act 128                                  flop 320
     *   LMHead      act 64 + 128 = 192, weights 8192         flop 16384
     * HBM = 1792 act + 28672 weights + 6400 KV = 36864 bytes (no tiling traffic: 64 MiB of
     * L2); MACs = 72372 / 2 = 36186; link: a ring of 2 sends 2 (p - 1) / p x 64 = 64 bytes per
     * allreduce, 128. PRESERVE: AR.attn's window prefetches Gate, Up and Down (12288 bytes),
     * AR.mlp's the LM head (8192): 20480 bytes written to L2 and read back, the same HBM. */
    const double hbm = 36864, macs = 36186, link = 128, l2 = 20480;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_traffic t = step_traffic(&s, (pm_mode)m, 100);
        assert_rel(t.hbm_bytes, hbm, HAND);
        assert_rel(t.mac[PM_DTYPE_INT8], macs, HAND);
        assert_rel(t.link_bytes, link, HAND);
        const double want_l2 = m == PM_MODE_PRESERVE ? l2 : 0.0;
        assert_rel(t.l2_write_bytes, want_l2, HAND);
        assert_rel(t.l2_read_bytes, want_l2, HAND);
        /* The graph path counts the same. */
        const pm_traffic g = graph_traffic(&s, (pm_mode)m, PM_PHASE_DECODE, 100);
        assert_traffic_rel(&t, &g, HAND);
        /* Energy: 36864 x 48 pJ + 128 x 10.4 pJ + 36186 x 0.23 pJ (+ L2: 20480 x (11.6 + 5)
         * pJ) + 100 W x the step time. */
        const double dt = step_time(&s, (pm_mode)m, 100);
        pm_energy e;
        assert_int_equal(pm_energy_compute(&s.accel, &t, dt, &e, NULL), PM_OK);
        assert_rel(e.hbm_J, 36864 * 48e-12, HAND);
        assert_rel(e.link_J, 128 * 10.4e-12, HAND);
        assert_rel(e.mac_J, 36186 * 0.23e-12, HAND);
        assert_rel(e.l2_J, want_l2 * 16.6e-12, HAND);
        assert_rel(e.static_J, 100.0 * dt, HAND);
        assert_rel(e.total_J, 1769472e-12 + 1331.2e-12 + 8322.78e-12 + want_l2 * 16.6e-12 +
                                  100.0 * dt, HAND);
        /* The same traffic behind a hardware cache (a streaming consumer's L2): every HBM byte
         * passes it, a line filled and read, the prefetches' reads as their L2 writes: 20480
         * x (11.6 + 5) pJ + (36864 - 20480) x (11.6 + 5) pJ = 36864 x 16.6 pJ in every mode;
         * nothing else moves. */
        pm_accelerator cache = s.accel;
        cache.prefetch_consumer = PM_CONSUMER_STREAM;
        pm_energy c;
        assert_int_equal(pm_energy_compute(&cache, &t, dt, &c, NULL), PM_OK);
        assert_rel(c.l2_J, 611942.4e-12, HAND);
        assert_rel(c.hbm_J, e.hbm_J, 0.0);
        assert_rel(c.total_J - c.l2_J, e.total_J - e.l2_J, 1e-15);
    }
}

static void test_fast_traffic_equals_graph_traffic_bundled(void **state)
{
    (void)state;
    /* gemma2-9b alternates windowed and global layers, gemma3-27b has five windowed layers to
     * one global: both classes of attention; the MoE scenarios add the MLP classes (DeepSeek-V3:
     * 3 dense then 58 MoE layers; Llama-4-Scout: chunked and global layers, all MoE), the
     * all-to-alls (EP) and the tensor-parallel experts (Mixtral). */
    static const char *const names[] = {"llama70b", "llama70b-h100", "llama8b", "phi3-medium",
                                        "qwen2-7b", "paper-dse", "gemma2-9b", "gemma3-27b",
                                        "mixtral8x7b", "qwen3-30b-a3b", "deepseek-v3-h200",
                                        "llama4-scout-h100"};
    for (size_t i = 0; i < (sizeof names / sizeof names[0]); i++) {
        pm_scenario s = pm_test_load(names[i], NULL, 0);
        const int64_t sp = pm_workload_prompt_tokens(&s.workload);
        const int64_t ctxs[] = {sp, s.workload.seq_len - 1, 200000};
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            for (size_t k = 0; k < 3; k++) {
                const pm_traffic f = step_traffic(&s, (pm_mode)m, ctxs[k]);
                const pm_traffic g = graph_traffic(&s, (pm_mode)m, PM_PHASE_DECODE, ctxs[k]);
                assert_traffic_rel(&f, &g, 1e-10);
            }
        }
        pm_scenario_release(&s);
    }
}

/* Dense layers beside data-parallel attention (DeepSeek-V3): the last window of a dense layer
 * prefetches the next MoE layer's attention, shared experts and router, which no dense layer
 * has before its first collective; both paths count the layers each class of decision holds
 * alike, at L2 sizes from a window that stops inside the layer to one that holds them all. */
static void test_fast_traffic_equals_graph_traffic_dense_beside_dp_attention(void **state)
{
    (void)state;
    static const char *const adp[] = {"cluster.attention_data_parallel=true",
                                      "cluster.expert_parallel=8"};
    const double l2_MiB[] = {50, 1024, 2048};
    for (size_t i = 0; i < sizeof l2_MiB / sizeof l2_MiB[0]; i++) {
        pm_scenario s = pm_test_load("deepseek-v3-h200", adp, 2);
        s.accel.l2_capacity_bytes = l2_MiB[i] * 1048576.0 / s.accel.l2_usable_frac;
        const int64_t sp = pm_workload_prompt_tokens(&s.workload);
        const int64_t ctxs[] = {sp, s.workload.seq_len - 1};
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            for (size_t k = 0; k < 2; k++) {
                const pm_traffic f = step_traffic(&s, (pm_mode)m, ctxs[k]);
                const pm_traffic g = graph_traffic(&s, (pm_mode)m, PM_PHASE_DECODE, ctxs[k]);
                assert_traffic_rel(&f, &g, 1e-10);
            }
        }
        pm_scenario_release(&s);
    }
}

/* The experts tensor parallel beside data-parallel attention (EP 1): the MoE layers gather
 * their ranks' tokens as the dense ones do; both paths count alike. */
static void test_fast_traffic_equals_graph_traffic_tp_experts_beside_dp_attention(void **state)
{
    (void)state;
    static const char *const adp[] = {"cluster.attention_data_parallel=true",
                                      "cluster.expert_parallel=1"};
    const double l2_MiB[] = {50, 1024};
    for (size_t i = 0; i < sizeof l2_MiB / sizeof l2_MiB[0]; i++) {
        pm_scenario s = pm_test_load("deepseek-v3-h200", adp, 2);
        s.accel.l2_capacity_bytes = l2_MiB[i] * 1048576.0 / s.accel.l2_usable_frac;
        const int64_t sp = pm_workload_prompt_tokens(&s.workload);
        const int64_t ctxs[] = {sp, s.workload.seq_len - 1};
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            for (size_t k = 0; k < 2; k++) {
                const pm_traffic f = step_traffic(&s, (pm_mode)m, ctxs[k]);
                const pm_traffic g = graph_traffic(&s, (pm_mode)m, PM_PHASE_DECODE, ctxs[k]);
                assert_traffic_rel(&f, &g, 1e-10);
            }
        }
        pm_scenario_release(&s);
    }
}

/* Sequence parallelism: the all-gather before the attention prefetches in every layer, the
 * reduce-scatters and all-gathers move their own link bytes; both paths count alike. Global
 * and windowed layers (gemma2-9b) included. */
static void test_fast_traffic_equals_graph_traffic_sequence_parallel(void **state)
{
    (void)state;
    static const char *const names[] = {"llama70b", "llama70b-h100", "gemma2-9b", "qwen2-7b"};
    for (size_t i = 0; i < (sizeof names / sizeof names[0]); i++) {
        pm_scenario s = pm_test_load(names[i], NULL, 0);
        s.cluster.sequence_parallel = true;
        const int64_t sp = pm_workload_prompt_tokens(&s.workload);
        const int64_t ctxs[] = {sp, s.workload.seq_len - 1, 200000};
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            for (size_t k = 0; k < 3; k++) {
                const pm_traffic f = step_traffic(&s, (pm_mode)m, ctxs[k]);
                const pm_traffic g = graph_traffic(&s, (pm_mode)m, PM_PHASE_DECODE, ctxs[k]);
                assert_traffic_rel(&f, &g, 1e-10);
            }
        }
        pm_scenario_release(&s);
    }
}

/* An L2 slower than HBM (0.1 GB/s against the 910B's 1.6 TB/s): a streaming consumer reads HBM
 * and ignores its prefetch (pm_stream_consumer_cost), so PRESERVE's step moves what serial's
 * does from HBM plus its prefetches' reads (written to L2, never read back); the fast and graph
 * paths agree. */
static void test_slow_l2_traffic_reads_nothing_back(void **state)
{
    (void)state;
    static const char *const sets[] = {"accelerator.l2_bandwidth_TBps=0.0001"};
    pm_scenario s = pm_test_load("llama70b", sets, 1);
    assert_int_equal(s.accel.prefetch_consumer, PM_CONSUMER_STREAM);
    const int64_t ctx = s.workload.seq_len - 1;
    const pm_traffic ser = step_traffic(&s, PM_MODE_SERIAL, ctx);
    const pm_traffic pre = step_traffic(&s, PM_MODE_PRESERVE, ctx);
    const pm_traffic gpre = graph_traffic(&s, PM_MODE_PRESERVE, PM_PHASE_DECODE, ctx);
    assert_traffic_rel(&pre, &gpre, 1e-10);
    assert_true(pre.l2_write_bytes > 0);
    assert_rel(pre.l2_read_bytes, 0.0, 0.0);
    assert_rel(pre.hbm_bytes, ser.hbm_bytes + pre.l2_write_bytes, 1e-12);
    assert_rel(step_time(&s, PM_MODE_PRESERVE, ctx), step_time(&s, PM_MODE_SERIAL, ctx), 1e-12);
    pm_scenario_release(&s);
}

/* The request's traffic in closed form equals the prefill (graph path) plus every decode step
 * summed one at a time, across the context where the KV cache stops fitting the window. */
static void check_request_traffic(const pm_scenario *sc)
{
    pm_scenario s = *sc;
    pm_estimate e;
    pm_error err;
    assert_int_equal(pm_estimate_compute(&s, &e, &err), PM_OK);
    assert_true(e.energy_present);
    const int64_t sp = e.prefill_tokens, last = s.workload.seq_len - 1;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        pm_traffic sum = graph_traffic(&s, (pm_mode)m, PM_PHASE_PREFILL, sp);
        double decode_s = 0.0;
        for (int64_t c = sp; c <= last; c++) {
            const pm_traffic t = step_traffic(&s, (pm_mode)m, c);
            sum.hbm_bytes += t.hbm_bytes;
            sum.l2_write_bytes += t.l2_write_bytes;
            sum.l2_read_bytes += t.l2_read_bytes;
            sum.link_bytes += t.link_bytes;
            sum.mac[PM_DTYPE_INT8] += t.mac[PM_DTYPE_INT8];
            decode_s += step_time(&s, (pm_mode)m, c);
        }
        const pm_mode_result *r = &e.modes[m];
        assert_traffic_rel(&r->traffic, &sum, SUM);
        if (m == PM_MODE_PRESERVE)
            assert_true(r->traffic.l2_write_bytes > 0);
        pm_energy want;
        assert_int_equal(pm_energy_compute(&s.accel, &sum, r->request_s, &want, NULL), PM_OK);
        assert_rel(r->energy.total_J, want.total_J, SUM);
        assert_rel(r->decode_s, decode_s, SUM);
        /* The tpot step's energy: that step's traffic over its time. */
        const pm_traffic tl = step_traffic(&s, (pm_mode)m, last);
        pm_energy et;
        assert_int_equal(pm_energy_compute(&s.accel, &tl, r->tpot_s, &et, NULL), PM_OK);
        assert_rel(r->tpot_energy_J, et.total_J, HAND);
        /* Per token: 2 devices x the request's energy over 1 x 600 generated tokens. */
        assert_rel(r->energy_per_token_J, 2.0 * r->energy.total_J / 600.0, HAND);
        assert_rel(r->tokens_per_J, 1.0 / r->energy_per_token_J, HAND);
        assert_rel(r->avg_power_W, r->energy.total_J / r->request_s, HAND);
    }
}

static void test_request_traffic_matches_brute_force(void **state)
{
    (void)state;
    pm_scenario s = tiny();
    s.model.layers = 3;
    s.accel.l2_capacity_bytes = 40000.0; /* the KV cache (64 bytes per position) spills */
    s.workload.seq_len = 1200;
    check_request_traffic(&s);
    /* Every other layer windowed at 700 positions, inside the decode range (600..1199): the
     * local layers' traffic stops growing there. */
    s.model.sliding_window = 700;
    s.model.window_period = 2;
    s.model.local_mask = 1;
    check_request_traffic(&s);
}

/* Llama 4 Scout: chunked attention (8192) in three layers of four, MoE; a 16K request has a
 * prompt of exactly one chunk (llround(16384 x 1/2) = 8192), so its first decode step's chunked
 * layers read no position; every mode's request traffic is still the prefill's plus each
 * decode step's, counted one by one. */
static void test_request_traffic_from_a_chunk_boundary(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama4-scout-h100", NULL, 0);
    s.workload.seq_len = 16384;
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_int_equal(e.prefill_tokens, 8192);
    assert_true(s.model.chunked_attention && s.model.sliding_window == 8192);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        pm_traffic sum = graph_traffic(&s, (pm_mode)m, PM_PHASE_PREFILL, 8192);
        for (int64_t c = 8192; c < 16384; c++) {
            const pm_traffic t = step_traffic(&s, (pm_mode)m, c);
            sum.hbm_bytes += t.hbm_bytes;
            sum.l2_write_bytes += t.l2_write_bytes;
            sum.l2_read_bytes += t.l2_read_bytes;
            sum.link_bytes += t.link_bytes;
            for (int d = 0; d < PM_DTYPE_COUNT; d++)
                sum.mac[d] += t.mac[d];
        }
        assert_traffic_rel(&e.modes[m].traffic, &sum, SUM);
    }
    pm_scenario_release(&s);
}

/* The 4N parts' area coefficients are the A100's node-scaled, the compute one fitted to GH100's
 * published die: the bundled H100 SXM models 814 mm2 (the A100's unscaled 7 nm coefficients
 * made it 1851.5 mm2, more than two reticles), the H200 the same die with its sixth HBM PHY. */
static void test_h100_die_is_gh100s_published_area(void **state)
{
    (void)state;
    const pm_load_opts opts = {PM_TEST_DATA_DIR, NULL, 0};
    pm_accelerator a;
    pm_area area;
    assert_int_equal(pm_accelerator_load("h100-sxm", &opts, &a, NULL), PM_OK);
    assert_int_equal(pm_area_compute(&a, &area, NULL), PM_OK);
    /* The silicon that exists (issue 41): 0.25067 mm2/TOPS x 1978.9 TOPS = 496.0509; L2 50 MiB
     * enabled x 1.2 built per enabled = 60 MiB x 1.9268 = 115.608; 6 HBM PHY sites x 14.9617 =
     * 89.7702; 18 NVLink PHYs x 1.7458 = 31.4244; other 81.14: 813.9935 mm2 (the coefficients
     * carry 5 digits: within 0.01 mm2 of 814). */
    assert_true(fabs(area.compute_mm2 - 496.0509) < 1e-3);
    assert_true(fabs(area.l2_mm2 - 115.608) < 1e-3);
    assert_true(fabs(area.hbm_phy_mm2 - 89.7702) < 1e-3);
    assert_true(fabs(area.die_mm2 - 814.0) < 0.02);
    /* The H200 is the same die: the same area (it was 829 mm2, counting populated stacks). */
    assert_int_equal(pm_accelerator_load("h200-sxm", &opts, &a, NULL), PM_OK);
    assert_int_equal(pm_area_compute(&a, &area, NULL), PM_OK);
    assert_true(fabs(area.die_mm2 - 813.9935) < 1e-3);
    /* GA100 (A100, 40 and 80 GB): 0.7632 x 624 = 476.2368; 40 MiB x 1.2 = 48 MiB x 2.4856 =
     * 119.3088; 6 PHY sites x 14.9617 = 89.7702; 12 NVLink PHYs x 1.7458 = 20.9496; other
     * 116.44: 822.7054 mm2, 0.40 % under its published 826 (it was 788: 40 of 48 MiB and 5 of
     * 6 PHYs). */
    const char *ga100[] = {"a100-sxm-40gb", "a100-sxm-80gb"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pm_accelerator_load(ga100[i], &opts, &a, NULL), PM_OK);
        assert_int_equal(pm_area_compute(&a, &area, NULL), PM_OK);
        assert_true(fabs(area.die_mm2 - 822.7054) < 1e-3);
        assert_true(fabs(area.die_mm2 / 826.0 - 1.0) < 0.03);
    }
    /* The 910B's compute die against its die shot's 665.61 mm2 (issue 41): 0.34185 x 800 =
     * 273.48; 192 MiB x 1.3325 = 255.84; 4 HBM PHYs x 14.9617 = 59.8468; the on-chip
     * interconnect 76.44: 665.6068 mm2. Its I/O die: 7 HCCS PHYs x 1.7458 = 12.2206 + the
     * A100's other 40 (PCIe and the rest: on Nimbus, once; it was on both dies) = 52.2206 mm2.
     * The package was one 1276 mm2 die. */
    assert_int_equal(pm_accelerator_load("ascend-910b", &opts, &a, NULL), PM_OK);
    assert_int_equal(pm_area_compute(&a, &area, NULL), PM_OK);
    assert_true(fabs(area.compute_mm2 - 273.48) < 1e-9 && fabs(area.other_mm2 - 76.44) < 1e-9);
    assert_true(fabs(area.io_other_mm2 - 40.0) < 1e-9);
    assert_true(fabs(area.compute_die_mm2 - 665.6068) < 1e-3);
    assert_true(fabs(area.compute_die_mm2 / 665.61 - 1.0) < 0.03);
    assert_int_equal(area.io_dies, 1);
    assert_true(fabs(area.io_die_mm2 - 52.2206) < 1e-3);
    /* TPU v5e (no published die): the 910B's 7 nm systolic and SRAM coefficients, not the
     * A100's SM and L2 ones: 0.34185 x 394 (its int8-equivalent peak, the larger: 2 x 197 bf16
     * TFLOPS, beside 393 int8 TOPS) = 134.6889; its 128 MiB VMEM x 1.3325 = 170.56; 2 HBM PHYs
     * x 14.9617 = 29.9234; 4 ICI PHYs x 1.7458 = 6.9832; other 116.44: 458.5955 mm2 (the A100's
     * coefficients gave 772.2). */
    assert_int_equal(pm_accelerator_load("tpu-v5e", &opts, &a, NULL), PM_OK);
    assert_int_equal(pm_area_compute(&a, &area, NULL), PM_OK);
    assert_true(fabs(area.die_mm2 - 458.5955) < 1e-6);
}

/* Leakage is a process node's (docs/data-format.md): each bundled part takes its node's
 * reference value, whatever its own board power: 4N/N5 the H100's (30 % of 700 W over its
 * modelled 814 mm2: 0.25798 W/mm2), 7 nm-class (N7, N6, SMIC N+1) the A100's (0.1523). MI300X
 * holds both: its 8 N5 XCDs at the first, its 4 N6 IODs at the second, weighted by the
 * modelled silicon at the preset. Gaudi 3 and MI300X carried 0.1134, the H100's 210 W over the
 * 1851.5 mm2 the A100's unscaled coefficients once gave it, though their area no longer uses
 * those coefficients. */
static void test_leakage_is_the_nodes(void **state)
{
    (void)state;
    const pm_load_opts opts = {PM_TEST_DATA_DIR, NULL, 0};
    const double n5 = 210.0 / 814.0, n7 = 0.1523; /* 0.257985 W/mm2: the file carries 5 digits */
    pm_accelerator a;
    pm_area area;
    static const char *const n5_parts[] = {"h100-sxm", "h200-sxm", "gaudi3"};
    for (size_t i = 0; i < sizeof n5_parts / sizeof n5_parts[0]; i++) {
        assert_int_equal(pm_accelerator_load(n5_parts[i], &opts, &a, NULL), PM_OK);
        if (!(fabs(a.energy.leakage_W_per_mm2 / n5 - 1.0) < 5e-5))
            fail_msg("%s: %g W/mm2, the N5 value %g", n5_parts[i], a.energy.leakage_W_per_mm2, n5);
    }
    static const char *const n7_parts[] = {"a100-sxm-40gb", "a100-sxm-80gb", "gaudi2",
                                           "ascend-910b", "tpu-v5e", "paper-dse"};
    for (size_t i = 0; i < sizeof n7_parts / sizeof n7_parts[0]; i++) {
        assert_int_equal(pm_accelerator_load(n7_parts[i], &opts, &a, NULL), PM_OK);
        if (!(fabs(a.energy.leakage_W_per_mm2 - n7) < 1e-12))
            fail_msg("%s: %g W/mm2, the 7 nm value %g", n7_parts[i], a.energy.leakage_W_per_mm2, n7);
    }
    /* MI300X: 8 XCDs x 92.0803 = 736.642 mm2 stacked on 4 IODs, each built to its two XCDs
     * (compute_on_io: their blocks alone 589.474 mm2), 736.642 mm2 (1473.284 in all):
     * (736.642 x 0.25798 + 736.642 x 0.1523) / 1473.284 = 0.20514 W/mm2. */
    assert_int_equal(pm_accelerator_load("mi300x", &opts, &a, NULL), PM_OK);
    assert_int_equal(pm_area_compute(&a, &area, NULL), PM_OK);
    assert_true(fabs(area.compute_dies * area.compute_die_mm2 - 736.642) < 1e-3);
    assert_true(fabs(area.io_dies * area.io_die_mm2 - 736.642) < 1e-3);
    const double mix = (736.642 * 0.25798 + 736.642 * n7) / 1473.284;
    assert_true(fabs(a.energy.leakage_W_per_mm2 / mix - 1.0) < 5e-5);
}

/* HBM is priced per GB as memory is sold, a binary GB: the A100 80GB's 80 GiB at LLMCompass's
 * $7/GB is $560 (LLMCompass's 7 x 80); per decimal GB it was 85.899 x 7 = $601.30. */
static void test_hbm_priced_per_binary_gb(void **state)
{
    (void)state;
    const pm_load_opts opts = {PM_TEST_DATA_DIR, NULL, 0};
    pm_accelerator a;
    pm_device_cost c;
    assert_int_equal(pm_accelerator_load("a100-sxm-80gb", &opts, &a, NULL), PM_OK);
    assert_int_equal(pm_device_cost_compute(&a, &c, NULL), PM_OK);
    assert_rel(c.hbm_usd, 7.0 * 80.0, 1e-12);
}

/* MI300X's I/O dies are on N6 (the 7 nm price, io_wafer_usd), its XCDs on N5: each kind of
 * die on its own node's wafer, at its own dies per wafer and yield. */
static void test_io_dies_on_their_own_wafer(void **state)
{
    (void)state;
    const pm_load_opts opts = {PM_TEST_DATA_DIR, NULL, 0};
    pm_accelerator a;
    pm_device_cost c;
    assert_int_equal(pm_accelerator_load("mi300x", &opts, &a, NULL), PM_OK);
    assert_rel(a.cost.wafer_usd, 16988, 0);
    assert_rel(a.cost.io_wafer_usd, 9346, 0);
    assert_int_equal(pm_device_cost_compute(&a, &c, NULL), PM_OK);
    assert_rel(c.die_usd,
               8 * 16988 / (c.dies_per_wafer * c.yield_frac) +
                   4 * 9346 / (c.io_dies_per_wafer * c.io_yield_frac),
               1e-12);
    /* Their own node's defect density (N6, an N7-family node: TSMC's N7 0.09 /cm2) beside the
     * XCDs' N5 0.10: a 184.2 mm2 IOD yields (1 + 184.2 x 0.0009 / 3)^-3 = 0.85130, where
     * the compute dies' 0.0010 /mm2 gave (1 + 0.1842 / 3)^-3 = 0.83625. */
    assert_rel(a.cost.io_defect_density_per_mm2, 0.0009, 1e-12);
    assert_rel(c.io_yield_frac, pow(1 + 184.2 * 0.0009 / 3, -3), 1e-4);
    const double own = c.io_yield_frac;
    a.cost.io_defect_density_per_mm2 = 0;
    assert_int_equal(pm_device_cost_compute(&a, &c, NULL), PM_OK);
    assert_rel(c.io_yield_frac, pow(1 + 184.2 * 0.0010 / 3, -3), 1e-4);
    assert_true(c.io_yield_frac < own);
    /* A die without I/O dies has no such density to give. */
    const char *ov[] = {"accelerator.cost.io_defect_density_per_cm2=0.09"};
    const pm_load_opts with = {PM_TEST_DATA_DIR, ov, 1};
    pm_scenario h;
    pm_error err;
    assert_int_equal(pm_scenario_load("llama70b-h100", &with, &h, &err), PM_ERR_INCONSISTENT);
    assert_non_null(strstr(err.path, "io_defect_density_per_cm2"));
    /* Not given: the I/O dies on the compute dies' wafer. */
    a.cost.io_wafer_usd = 0;
    assert_int_equal(pm_device_cost_compute(&a, &c, NULL), PM_OK);
    assert_rel(c.die_usd,
               8 * 16988 / (c.dies_per_wafer * c.yield_frac) +
                   4 * 16988 / (c.io_dies_per_wafer * c.io_yield_frac),
               1e-12);
}

/* Issue 41: no bundled accelerator has a die over the reticle (each loads: a file over it is
 * refused), and one a what-if grows over it is flagged, not refused. */
static void test_every_bundled_die_fits_the_reticle(void **state)
{
    (void)state;
    char **names = NULL;
    size_t n = 0;
    assert_int_equal(pm_data_list(PM_TEST_DATA_DIR, PM_KIND_ACCELERATOR, &names, &n, NULL), PM_OK);
    const pm_load_opts opts = {PM_TEST_DATA_DIR, NULL, 0};
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++) {
        pm_accelerator a;
        pm_area area;
        double per_die = -1;
        assert_int_equal(pm_accelerator_load(names[i], &opts, &a, NULL), PM_OK);
        assert_int_equal(pm_area_compute(&a, &area, NULL), PM_OK);
        assert_false(pm_die_over_reticle(&a, &per_die));
        assert_true(per_die > 0 && per_die <= PM_RETICLE_MM2);
        assert_true(area.compute_die_mm2 <= PM_RETICLE_MM2 && area.io_die_mm2 <= PM_RETICLE_MM2);
        /* The dies add up to the package's silicon. */
        assert_true(fabs(area.compute_dies * area.compute_die_mm2 +
                         area.io_dies * area.io_die_mm2 - area.die_mm2) < 1e-9 * area.die_mm2);
    }
    pm_names_free(names, n);
    const char *big[] = {"l2_capacity_MiB=1024"};
    const pm_load_opts ob = {PM_TEST_DATA_DIR, big, 1};
    pm_accelerator a;
    pm_error err;
    assert_int_equal(pm_accelerator_load("ascend-910b", &ob, &a, &err), PM_OK);
    assert_true(pm_die_over_reticle(&a, NULL));
}

/* Issue 41: a zero area coefficient gave a die of 0 mm2 (infinite density), an energy block of
 * zeros 0 J/token beside 0 tokens/J; both are refused, naming the key. */
static void test_zero_area_coefficients_and_energies_refused(void **state)
{
    (void)state;
    pm_accelerator a;
    memset(&a, 0, sizeof a);
    a.peak_flop_per_s[PM_DTYPE_INT8] = 1e15;
    a.area.present = true;
    a.area.compute_mm2_per_flop_per_s = 0.0;
    a.area.l2_mm2_per_byte = a.area.hbm_phy_mm2_per_stack = a.area.link_phy_mm2_per_link = 1e-6;
    pm_area area;
    pm_error err;
    assert_int_equal(pm_area_compute(&a, &area, &err), PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "compute_mm2_per_TOPS must be finite and > 0"));
    a.area.compute_mm2_per_flop_per_s = 1e-13;
    assert_int_equal(pm_area_compute(&a, &area, &err), PM_OK);
    assert_true(area.die_mm2 > 0);
    a.area.hbm_stacks = -4; /* took 4 stacks' PHYs off the die */
    assert_int_equal(pm_area_compute(&a, &area, &err), PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "hbm_stacks and links must be >= 0 (got -4 and 0)"));
    a.area.hbm_stacks = 0;
    a.energy.present = true; /* every coefficient 0 */
    double w;
    assert_int_equal(pm_static_power(&a, &w, &err), PM_ERR_RANGE);
    assert_string_equal(err.path, "$.accelerator.energy");
    a.energy.hbm_J_per_byte = 6e-12 * 8;
    assert_int_equal(pm_static_power(&a, &w, &err), PM_OK);
}

static void test_die_cost_of_826mm2_7nm_by_hand(void **state)
{
    (void)state;
    /* GA100, 826 mm2 on a 300 mm wafer: pi 150^2 / 826 = 85.57607 gross, minus the edge loss
     * pi 300 / sqrt(2 x 826) = 942.4778 / 40.64480 = 23.18815: 62.38792 dies. D0 0.15 /cm2 =
     * 0.0015 /mm2, A D0 = 1.239: negative binomial (1 + 1.239 / 3)^-3 = 1.413^-3 = 0.3544651;
     * Murphy ((1 - e^-1.239) / 1.239)^2 = 0.3286799; Poisson e^-1.239 = 0.2896737. One good
     * die: $9346 / (62.38792 x 0.3544651) = $422.62, "a few hundred dollars" (reference §4.3:
     * $423). Tolerance: the hand values carry 7 digits. */
    assert_rel(pm_dies_per_wafer(300, 826), 62.38792, 1e-6);
    assert_rel(pm_die_yield(PM_YIELD_NEGATIVE_BINOMIAL, 826, 0.0015, 3), 0.3544651, 1e-6);
    assert_rel(pm_die_yield(PM_YIELD_MURPHY, 826, 0.0015, 0), 0.3286799, 1e-6);
    assert_rel(pm_die_yield(PM_YIELD_POISSON, 826, 0.0015, 0), 0.2896737, 1e-6);
    assert_rel(pm_die_yield(PM_YIELD_MURPHY, 826, 0.0, 0), 1.0, 0.0);
    assert_true(isnan(pm_die_yield(PM_YIELD_NEGATIVE_BINOMIAL, 826, 0.0015, 0)));
    assert_true(isnan(pm_die_yield(PM_YIELD_COUNT, 826, 0.0015, 3)));
    /* The same through an accelerator whose area model gives exactly 826 mm2 (other_mm2), with
     * 80 GiB of HBM at $7/GB = 85.899 GB x 7 = $601.30 and a $750 package. */
    pm_accelerator a;
    memset(&a, 0, sizeof a);
    a.hbm_capacity_bytes = 80.0 * 1073741824.0;
    a.area.present = true;
    a.area.other_mm2 = 826.0;
    /* Coefficients must be > 0 (issue 41): with no peak, no L2, no stacks and no links their
     * blocks are 0 mm2. */
    a.area.compute_mm2_per_flop_per_s = a.area.l2_mm2_per_byte = 1.0;
    a.area.hbm_phy_mm2_per_stack = a.area.link_phy_mm2_per_link = 1.0;
    a.cost = (pm_cost_params){true, 9346, 300, 0.0015, PM_YIELD_NEGATIVE_BINOMIAL, 3, 7e-9, 750,
                              0, 0};
    pm_device_cost c;
    assert_int_equal(pm_device_cost_compute(&a, &c, NULL), PM_OK);
    assert_rel(c.die_mm2, 826, 0);
    assert_rel(c.dies_per_wafer, 62.38792, 1e-6);
    assert_rel(c.yield_frac, 0.3544651, 1e-6);
    assert_rel(c.die_usd, 422.6217, 1e-6);
    assert_rel(c.hbm_usd, 601.2954, 1e-6);
    assert_rel(c.package_usd, 750, 0);
    assert_rel(c.device_usd, 422.6217 + 601.2954 + 750, 1e-6);
    /* The same area as two chiplets of 413 mm2: pi 150^2 / 413 - pi 300 / sqrt(826) = 171.1521
     * - 32.79300 = 138.3591 dies per wafer, yield (1 + 0.6195 / 3)^-3 = 0.5694007, two good
     * dies $2 x 9346 / (138.3591 x 0.5694007) = $237.26: a defect scraps half the silicon. */
    a.area.compute_dies = 2;
    assert_int_equal(pm_device_cost_compute(&a, &c, NULL), PM_OK);
    assert_int_equal(c.dies_per_package, 2);
    assert_rel(c.dies_per_wafer, 138.3591, 1e-6);
    assert_rel(c.yield_frac, 0.5694007, 1e-6);
    assert_rel(c.die_usd, 237.2629, 1e-6);
    a.area.compute_dies = 1;
    /* An I/O die beside the compute die (Ascend's Nimbus): a 600 mm2 compute die (other) and a
     * 126 mm2 I/O die holding 26 links of 1 mm2 and 100 mm2 of its own. Compute die: pi 150^2
     * / 600 - pi 300 / sqrt(1200) = 117.8097 - 27.20699 = 90.60273 per wafer, yield 1.3^-3 =
     * 0.4551661, $9346 / (90.60273 x 0.4551661) = $226.6285. I/O die: 560.9987 - 59.37052 =
     * 501.6282 per wafer, yield 1.063^-3 = 0.8325306, $22.37915. Together $249.0077, where one
     * 726 mm2 die would cost more: a defect in the I/O die scraps only it. */
    a.area.other_mm2 = 600.0;
    a.area.links = 26;
    a.area.io_dies = 1;
    a.area.io_holds = PM_IO_LINKS;
    a.area.io_other_mm2 = 100.0;
    pm_area ar;
    assert_int_equal(pm_area_compute(&a, &ar, NULL), PM_OK);
    assert_rel(ar.die_mm2, 726.0, 1e-12);
    assert_rel(ar.compute_die_mm2, 600.0, 1e-12);
    assert_rel(ar.io_die_mm2, 126.0, 1e-12);
    assert_int_equal(pm_device_cost_compute(&a, &c, NULL), PM_OK);
    assert_int_equal(c.dies_per_package, 2);
    assert_rel(c.dies_per_wafer, 90.60273, 1e-6);
    assert_rel(c.yield_frac, 0.4551661, 1e-6);
    assert_rel(c.io_dies_per_wafer, 501.6282, 1e-6);
    assert_rel(c.io_yield_frac, 0.8325306, 1e-6);
    assert_rel(c.die_usd, 226.6285 + 22.37915, 1e-6);
    /* The I/O dies can hold the HBM PHYs and the L2 too (MI300X's base dies): 4 stacks of 1
     * mm2 and 8 bytes of L2 at 1 mm2 per byte move to two I/O dies of (26 + 4 + 8 + 100) / 2
     * = 69 mm2 each; the compute dies keep 600 mm2. */
    a.l2_capacity_bytes = 8;
    a.area.hbm_stacks = 4;
    a.area.io_dies = 2;
    a.area.io_holds = PM_IO_LINKS_HBM;
    assert_int_equal(pm_area_compute(&a, &ar, NULL), PM_OK);
    assert_rel(ar.compute_die_mm2, 608.0, 1e-12);
    assert_rel(ar.io_die_mm2, 65.0, 1e-12);
    a.area.io_holds = PM_IO_LINKS_HBM_L2;
    assert_int_equal(pm_area_compute(&a, &ar, NULL), PM_OK);
    assert_rel(ar.compute_die_mm2, 600.0, 1e-12);
    assert_rel(ar.io_die_mm2, 69.0, 1e-12);
    assert_rel(ar.die_mm2, 738.0, 1e-12);
    assert_int_equal(ar.compute_dies + ar.io_dies, 3);
    a.l2_capacity_bytes = 0;
    a.area.hbm_stacks = 0;
    a.area.links = 0;
    a.area.io_dies = 0;
    a.area.io_other_mm2 = 0.0;
    a.area.other_mm2 = 826.0;
    /* A die larger than the wafer leaves no die. */
    a.area.other_mm2 = 80000.0;
    pm_error err;
    assert_int_equal(pm_device_cost_compute(&a, &c, &err), PM_ERR_RANGE);
    assert_string_equal(err.path, "$.accelerator.cost.wafer_diameter_mm");
    assert_rel(pm_dies_per_wafer(300, 80000.0), 0.0, 0.0);
    assert_rel(pm_dies_per_wafer(0, 826), 0.0, 0.0);
}

static void test_cost_and_energy_need_their_blocks(void **state)
{
    (void)state;
    pm_scenario s = tiny();
    s.accel.energy.present = false;
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_false(e.energy_present);
    assert_false(e.cost_present);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_rel(e.modes[m].energy.total_J, 0.0, 0.0);
        assert_rel(e.modes[m].tokens_per_s_per_usd, 0.0, 0.0);
        assert_true(e.modes[m].traffic.hbm_bytes > 0); /* counted all the same */
    }
    pm_error err;
    double w;
    pm_device_cost c;
    assert_int_equal(pm_static_power(&s.accel, &w, &err), PM_ERR_MISSING);
    assert_string_equal(err.path, "$.accelerator.energy");
    assert_int_equal(pm_device_cost_compute(&s.accel, &c, &err), PM_ERR_MISSING);
    assert_string_equal(err.path, "$.accelerator.cost");
    /* Cost without area coefficients names the area object. */
    s.accel.cost =
        (pm_cost_params){true, 9346, 300, 0.0015, PM_YIELD_POISSON, 0, 7e-9, 750, 0, 0};
    assert_int_equal(pm_device_cost_compute(&s.accel, &c, &err), PM_ERR_MISSING);
    assert_string_equal(err.path, "$.accelerator.area");
    /* Leakage needs the die; a NaN coefficient is refused. */
    s.accel.energy.present = true;
    s.accel.energy.leakage_W_per_mm2 = 0.1;
    assert_int_equal(pm_static_power(&s.accel, &w, &err), PM_ERR_MISSING);
    s.accel.energy.leakage_W_per_mm2 = NAN;
    assert_int_equal(pm_static_power(&s.accel, &w, &err), PM_ERR_RANGE);
    s.accel.cost.present = false;
    assert_int_equal(pm_estimate_compute(&s, &e, &err), PM_ERR_RANGE);
    assert_string_equal(err.path, "$.accelerator.energy");
    s.accel.energy.leakage_W_per_mm2 = 0.0;
    pm_energy en;
    pm_traffic t = {0};
    assert_int_equal(pm_energy_compute(&s.accel, &t, -1.0, &en, &err), PM_ERR_RANGE);
    assert_int_equal(pm_energy_compute(&s.accel, NULL, 1.0, &en, &err), PM_ERR_INVALID_ARG);
}

static void test_loads_energy_and_cost_blocks(void **state)
{
    (void)state;
    pm_accelerator a;
    pm_error err;
    const pm_load_opts opts = {PM_TEST_DATA_DIR, NULL, 0};
    assert_int_equal(pm_accelerator_load(PM_TEST_CONFIG_DIR "/valid/accelerator-with-energy-cost.json",
                                         &opts, &a, &err),
                     PM_OK);
    assert_true(a.energy.present && a.cost.present);
    /* Units converted once: 6 pJ/bit = 48 pJ/byte; 11.6 pJ/byte as written; 0.15 /cm2 =
     * 0.0015 /mm2; $7/GB = 7e-9 $/byte. */
    assert_rel(a.energy.hbm_J_per_byte, 48e-12, HAND);
    assert_rel(a.energy.l2_write_J_per_byte, 11.6e-12, HAND);
    assert_rel(a.energy.l2_read_J_per_byte, 11.6e-12, HAND);
    assert_rel(a.energy.link_J_per_byte, 10.4e-12, HAND);
    assert_rel(a.energy.mac_J[PM_DTYPE_INT8], 0.23e-12, HAND);
    assert_rel(a.energy.mac_J[PM_DTYPE_BF16], 1.5e-12, HAND);
    assert_rel(a.energy.mac_J[PM_DTYPE_FP32], 0.0, 0.0);
    assert_rel(a.energy.static_W, 20, 0);
    assert_rel(a.energy.leakage_W_per_mm2, 0.15, 0);
    assert_rel(a.energy.board_power_W, 400, 0);
    assert_rel(a.cost.wafer_usd, 9346, 0);
    assert_rel(a.cost.wafer_diameter_mm, 300, 0);
    assert_rel(a.cost.defect_density_per_mm2, 0.0015, HAND);
    assert_int_equal(a.cost.yield_model, PM_YIELD_NEGATIVE_BINOMIAL);
    assert_rel(a.cost.yield_alpha, 3, 0);
    assert_rel(a.cost.hbm_usd_per_byte, 7e-9, HAND);
    assert_rel(a.cost.package_usd, 750, 0);
    /* Static power: 20 W + 0.15 W/mm2 x the package's silicon (0.3 x 800 + 1.3 x 192 + 15 x 4
     * + 116 = 665.6 mm2 of compute die, 1.7 x 7 + 40 = 51.9 mm2 of I/O die: 717.5 mm2) =
     * 127.625 W. */
    double w;
    assert_int_equal(pm_static_power(&a, &w, NULL), PM_OK);
    assert_rel(w, 20 + 0.15 * 717.5, 1e-12);
    assert_string_equal(pm_yield_model_name(PM_YIELD_MURPHY), "murphy");
    assert_string_equal(pm_yield_model_name(PM_YIELD_COUNT), "?");
}

/* Every bundled part with a board power: streaming HBM at its nominal bandwidth through L2,
 * with static power, stays below it, and so does every mode's average power on the bundled
 * scenarios. The H100 by name: below its 700 W. */
static void test_modelled_power_below_board_power(void **state)
{
    (void)state;
    char **names = NULL;
    size_t n = 0;
    assert_int_equal(pm_data_list(PM_TEST_DATA_DIR, PM_KIND_ACCELERATOR, &names, &n, NULL), PM_OK);
    const pm_load_opts opts = {PM_TEST_DATA_DIR, NULL, 0};
    int checked = 0;
    for (size_t i = 0; i < n; i++) {
        pm_accelerator a;
        assert_int_equal(pm_accelerator_load(names[i], &opts, &a, NULL), PM_OK);
        assert_true(a.energy.present); /* every bundled part has the blocks */
        assert_true(a.cost.present);
        if (!(a.energy.board_power_W > 0))
            continue;
        double w;
        assert_int_equal(pm_full_bandwidth_power(&a, &w, NULL), PM_OK);
        if (!(w < a.energy.board_power_W))
            fail_msg("%s: %g W at full HBM bandwidth, board power %g W", names[i], w,
                     a.energy.board_power_W);
        if (strcmp(names[i], "h100-sxm") == 0)
            assert_true(w < 700.0);
        checked++;
    }
    assert_true(checked >= 6);
    pm_names_free(names, n);
    static const char *const scen[] = {"llama70b", "llama70b-h100", "llama8b", "phi3-medium",
                                       "phi3-small", "qwen2-72b", "qwen2-7b", "paper-dse",
                                       "gemma2-9b", "gemma3-27b", "mistral7b", "falcon7b",
                                       "llama405b-h200"};
    for (size_t i = 0; i < (sizeof scen / sizeof scen[0]); i++) {
        pm_scenario s = pm_test_load(scen[i], NULL, 0);
        pm_estimate e;
        assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
        assert_true(e.energy_present && e.cost_present);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            const double p = e.modes[m].avg_power_W;
            if (!(p > 0) || (s.accel.energy.board_power_W > 0 && !(p < s.accel.energy.board_power_W)))
                fail_msg("%s %s: average power %g W, board power %g W", scen[i],
                         pm_mode_name((pm_mode)m), p, s.accel.energy.board_power_W);
        }
        pm_scenario_release(&s);
    }
}

/* The clock the board power allows a phase (issue 47, pm_power_clock_frac), by hand: the
 * static power does not scale, the bytes' power scales as x, the MACs' as x^3. */
static void test_power_clock_frac_by_hand(void **state)
{
    (void)state;
    /* 2 s at 100 W static, 200 W of HBM, 800 W of MACs: 1,100 W at the nominal clock. At
     * x = 0.5: 100 + 200 x 0.5 + 800 x 0.125 = 100 + 100 + 100 = 300 W. */
    pm_energy e = {.static_J = 200.0, .hbm_J = 400.0, .mac_J = 1600.0};
    e.total_J = e.static_J + e.hbm_J + e.mac_J;
    assert_rel(pm_power_clock_frac(&e, 2.0, 300.0), 0.5, 1e-12);
    /* Only MACs beside the static power: 200 + 1000 x^3 = 700, x = 0.5^(1/3) = 0.793700526. */
    pm_energy m = {.static_J = 200.0, .mac_J = 1000.0};
    m.total_J = 1200.0;
    assert_rel(pm_power_clock_frac(&m, 1.0, 700.0), 0.7937005259840998, 1e-12);
    /* Within the board power (1,200 W <= 1,200 W), no board power, or the static power alone
     * above it. */
    assert_rel(pm_power_clock_frac(&m, 1.0, 1200.0), 1.0, HAND);
    assert_rel(pm_power_clock_frac(&m, 1.0, 0.0), 1.0, HAND);
    assert_rel(pm_power_clock_frac(&m, 1.0, 150.0), 0.0, HAND);
}

/* The prefill's power is its own energy over its own time, and a memory-bound decode step is
 * never held below its clock: on every bundled GPU scenario, the decode step's power leaves
 * the clock at 1, and the prefill's figures are the prefill traffic's. */
static void test_property_prefill_power_and_decode_clock(void **state)
{
    (void)state;
    static const char *const scen[] = {"llama70b-h100", "llama8b", "llama405b-h200"};
    for (size_t i = 0; i < (sizeof scen / sizeof scen[0]); i++) {
        pm_scenario s = pm_test_load(scen[i], NULL, 0);
        pm_estimate e;
        assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            const pm_mode_result *r = &e.modes[m];
            pm_energy pre, step;
            assert_int_equal(pm_energy_compute(&s.accel, &r->prefill_traffic, r->prefill_s,
                                               &pre, NULL), PM_OK);
            assert_rel(r->prefill_power_W, pre.total_J / r->prefill_s, HAND);
            assert_rel(r->prefill_clock_frac,
                       pm_power_clock_frac(&pre, r->prefill_s, s.accel.energy.board_power_W),
                       HAND);
            pm_traffic t;
            assert_int_equal(pm_decode_step_traffic(&s, (pm_mode)m, s.workload.seq_len - 1, &t,
                                                    NULL), PM_OK);
            assert_int_equal(pm_energy_compute(&s.accel, &t, r->tpot_s, &step, NULL), PM_OK);
            assert_rel(pm_power_clock_frac(&step, r->tpot_s, s.accel.energy.board_power_W), 1.0,
                       HAND);
        }
        pm_scenario_release(&s);
    }
}

/* A prefill beyond the board power is said (pm_estimate_warning's last note), with its clock
 * share, and the times are not changed by it. Llama-3-8B, 16 prompts of 1,024 tokens on one
 * H100: 16,384 tokens x 2 x 8.0e9 weights = 2.6e14 FLOP at 0.8 x 989 TFLOPS, about 0.33 s, of
 * 1.3e14 MACs at 1.5 pJ (the 45 nm bf16 figure): 197 J / 0.33 s = 590 W of MACs above the
 * 210 W of leakage alone: above 700 W. */
static void test_prefill_power_warning(void **state)
{
    (void)state;
    const char *const sets[] = {"accelerator=h100-sxm", "cluster=nvlink4-nvswitch",
                                "workload.batch=16", "workload.seq_len=1025",
                                "workload.prefill_frac=0.9990243902439024",
                                "workload.weight_dtype=bf16", "workload.act_dtype=bf16",
                                "workload.kv_dtype=bf16", "cluster.devices=1"};
    pm_scenario s = pm_test_load("llama8b", sets, sizeof sets / sizeof sets[0]);
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    const pm_mode_result *r = &e.modes[PM_MODE_SERIAL];
    assert_true(r->prefill_power_W > 700.0);
    assert_true(r->prefill_clock_frac > 0.5 && r->prefill_clock_frac < 1.0);
    char note[1024] = "", last[1024] = "";
    for (size_t i = 0; pm_estimate_warning(&s, &e, i, note, sizeof note); i++)
        memcpy(last, note, sizeof last);
    assert_non_null(strstr(last, "the prefill's average power per device (serial "));
    assert_non_null(strstr(last, "board power 700 W"));
    /* The same scenario with a board power of 10 kW: the same times, no prefill note. */
    s.accel.energy.board_power_W = 10000.0;
    pm_estimate f;
    assert_int_equal(pm_estimate_compute(&s, &f, NULL), PM_OK);
    assert_rel(f.modes[PM_MODE_SERIAL].prefill_s, r->prefill_s, HAND);
    assert_rel(f.modes[PM_MODE_SERIAL].prefill_clock_frac, 1.0, HAND);
    for (size_t i = 0; pm_estimate_warning(&s, &f, i, note, sizeof note); i++)
        assert_null(strstr(note, "the prefill's average power"));
    /* A board power of 100 W, under the 210 W of leakage alone: no clock meets it, said so
     * (not "clock 0 of nominal"). */
    s.accel.energy.board_power_W = 100.0;
    assert_int_equal(pm_estimate_compute(&s, &f, NULL), PM_OK);
    assert_rel(f.modes[PM_MODE_SERIAL].prefill_clock_frac, 0.0, 0.0);
    for (size_t i = 0; pm_estimate_warning(&s, &f, i, note, sizeof note); i++)
        memcpy(last, note, sizeof last);
    assert_non_null(strstr(last, "no clock: the static power alone exceeds it"));
    assert_null(strstr(last, "clock 0 of nominal"));
    pm_scenario_release(&s);
}

/* Traffic that cannot have moved (a negative or NaN count) is refused, not priced: -1e9 HBM
 * bytes gave a smaller energy, NaN a NaN one. NULL energy: the full clock, no crash. */
static void test_energy_refuses_impossible_traffic(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b", NULL, 0);
    pm_traffic t = step_traffic(&s, PM_MODE_SERIAL, 4096);
    pm_energy e;
    pm_error err;
    assert_int_equal(pm_energy_compute(&s.accel, &t, 0.01, &e, &err), PM_OK);
    double *fields[] = {&t.hbm_bytes, &t.l2_write_bytes, &t.l2_read_bytes, &t.link_bytes,
                        &t.mac[PM_DTYPE_INT8]};
    for (size_t i = 0; i < (sizeof fields / sizeof fields[0]); i++) {
        const double keep = *fields[i];
        *fields[i] = -1e9;
        assert_int_equal(pm_energy_compute(&s.accel, &t, 0.01, &e, &err), PM_ERR_RANGE);
        assert_non_null(strstr(err.message, "finite and >= 0"));
        *fields[i] = NAN;
        assert_int_equal(pm_energy_compute(&s.accel, &t, 0.01, &e, &err), PM_ERR_RANGE);
        *fields[i] = keep;
    }
    assert_rel(pm_power_clock_frac(NULL, 1.0, 100.0), 1.0, 0.0);
    pm_disagg_workload_defaults(NULL, NULL);
    pm_scenario_release(&s);
}

static void test_property_energy_grows_with_bytes_moved(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b", NULL, 0);
    pm_traffic t = step_traffic(&s, PM_MODE_PRESERVE, 4096);
    pm_energy base, more;
    assert_int_equal(pm_energy_compute(&s.accel, &t, 0.01, &base, NULL), PM_OK);
    double *fields[] = {&t.hbm_bytes, &t.l2_write_bytes, &t.l2_read_bytes, &t.link_bytes,
                        &t.mac[PM_DTYPE_INT8]};
    for (size_t i = 0; i < (sizeof fields / sizeof fields[0]); i++) {
        *fields[i] += 1e6;
        /* A byte written into L2 is a prefetch's: read from HBM (the traffic's identity, on
         * which a hardware cache's pass-through, the HBM bytes less the L2 writes, rests). */
        if (fields[i] == &t.l2_write_bytes)
            t.hbm_bytes += 1e6;
        assert_int_equal(pm_energy_compute(&s.accel, &t, 0.01, &more, NULL), PM_OK);
        assert_true(more.total_J > base.total_J);
        base = more;
    }
    /* A longer context moves more KV bytes: each step's energy grows, in every mode. */
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double prev = 0.0;
        for (int64_t c = 1024; c <= 262144; c *= 4) {
            const pm_traffic tc = step_traffic(&s, (pm_mode)m, c);
            pm_energy ec;
            assert_int_equal(pm_energy_compute(&s.accel, &tc, step_time(&s, (pm_mode)m, c), &ec,
                                               NULL),
                             PM_OK);
            assert_true(ec.total_J > prev);
            prev = ec.total_J;
            /* PRESERVE reads the same HBM bytes as the baseline, plus its L2 traffic. */
            const pm_traffic ts = step_traffic(&s, PM_MODE_SERIAL, c);
            if (m == PM_MODE_PRESERVE) {
                assert_rel(tc.hbm_bytes, ts.hbm_bytes, 1e-12);
                assert_rel(tc.l2_write_bytes, tc.l2_read_bytes, 0.0);
            }
        }
    }
    pm_scenario_release(&s);
}

static void test_property_cost_grows_with_die_area(void **state)
{
    (void)state;
    pm_accelerator a;
    const pm_load_opts opts = {PM_TEST_DATA_DIR, NULL, 0};
    assert_int_equal(pm_accelerator_load("a100-sxm-80gb", &opts, &a, NULL), PM_OK);
    for (int y = 0; y < PM_YIELD_COUNT; y++) {
        a.cost.yield_model = (pm_yield_model)y;
        double prev_usd = 0.0, prev_mm2 = 0.0;
        for (double mib = 1; mib <= 1024; mib *= 2) {
            a.l2_capacity_bytes = mib * 1048576.0;
            pm_device_cost c;
            assert_int_equal(pm_device_cost_compute(&a, &c, NULL), PM_OK);
            assert_true(c.die_mm2 > prev_mm2);
            assert_true(c.die_usd > prev_usd);
            prev_usd = c.die_usd;
            prev_mm2 = c.die_mm2;
        }
    }
    /* Yield and dies per wafer both fall as the die grows. */
    for (double mm2 = 50; mm2 < 800; mm2 += 50) {
        assert_true(pm_dies_per_wafer(300, mm2 + 50) < pm_dies_per_wafer(300, mm2));
        for (int y = 0; y < PM_YIELD_COUNT; y++)
            assert_true(pm_die_yield((pm_yield_model)y, mm2 + 50, 0.0015, 3) <
                        pm_die_yield((pm_yield_model)y, mm2, 0.0015, 3));
    }
}

static void test_optimum_per_objective(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("paper-dse", NULL, 0);
    pm_optimum mm2, mm2_for, usd, joule;
    const double lo = 1048576.0, hi = 1024.0 * 1048576.0;
    assert_int_equal(pm_optimize_axis(&s, PM_AXIS_L2, lo, hi, 33, 1e-3, 100, &mm2, NULL), PM_OK);
    assert_int_equal(pm_optimize_axis_for(&s, PM_AXIS_L2, PM_OBJECTIVE_MM2, lo, hi, 33, 1e-3, 100,
                                          &mm2_for, NULL),
                     PM_OK);
    assert_memory_equal(&mm2, &mm2_for, sizeof mm2);
    assert_int_equal(pm_optimize_axis_for(&s, PM_AXIS_L2, PM_OBJECTIVE_USD, lo, hi, 33, 1e-3, 100,
                                          &usd, NULL),
                     PM_OK);
    assert_int_equal(pm_optimize_axis_for(&s, PM_AXIS_L2, PM_OBJECTIVE_JOULE, lo, hi, 33, 1e-3,
                                          100, &joule, NULL),
                     PM_OK);
    /* The objective at the optimum is the estimate's figure there. */
    const pm_mode P = PM_MODE_PRESERVE;
    pm_scenario t = s;
    pm_estimate e;
    assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_L2, usd.best_value[P], NULL), PM_OK);
    assert_int_equal(pm_estimate_compute(&t, &e, NULL), PM_OK);
    assert_rel(usd.best_density[P], e.modes[P].tokens_per_s_per_usd, 1e-12);
    assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_L2, joule.best_value[P], NULL), PM_OK);
    assert_int_equal(pm_estimate_compute(&t, &e, NULL), PM_OK);
    assert_rel(joule.best_density[P], e.modes[P].tokens_per_J, 1e-12);
    /* The fixed share of a device's price (HBM, package) puts the per-dollar optimum at a larger
     * L2 than the per-mm2 one; leakage and L2 energy put the per-joule one at a smaller L2. */
    assert_true(usd.best_value[P] > mm2.best_value[P]);
    assert_true(joule.best_value[P] < mm2.best_value[P]);
    /* Each objective needs its object, and names it. */
    pm_error err;
    t = s;
    t.accel.cost.present = false;
    t.accel.energy.present = false;
    assert_int_equal(pm_optimize_axis_for(&t, PM_AXIS_L2, PM_OBJECTIVE_USD, lo, hi, 33, 1e-3, 100,
                                          &usd, &err),
                     PM_ERR_MISSING);
    assert_string_equal(err.path, "$.accelerator.cost");
    assert_int_equal(pm_optimize_axis_for(&t, PM_AXIS_L2, PM_OBJECTIVE_JOULE, lo, hi, 33, 1e-3,
                                          100, &joule, &err),
                     PM_ERR_MISSING);
    assert_string_equal(err.path, "$.accelerator.energy");
    assert_int_equal(pm_optimize_axis_for(&t, PM_AXIS_L2, PM_OBJECTIVE_COUNT, lo, hi, 33, 1e-3,
                                          100, &joule, &err),
                     PM_ERR_INVALID_ARG);
    assert_string_equal(pm_objective_name(PM_OBJECTIVE_JOULE), "joule");
    assert_string_equal(pm_objective_column(PM_OBJECTIVE_USD), "tokens_per_s_per_usd");
    assert_string_equal(pm_objective_name(PM_OBJECTIVE_COUNT), "?");
    /* Bad arguments of the traffic and power calls. */
    pm_traffic tr;
    double w;
    assert_int_equal(pm_decode_step_traffic(&s, PM_MODE_COUNT, 10, &tr, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_decode_step_traffic(&s, PM_MODE_SERIAL, -1, &tr, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_graph_traffic(&s, NULL, &tr, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_full_bandwidth_power(&t.accel, &w, &err), PM_ERR_MISSING);
    assert_int_equal(pm_full_bandwidth_power(&t.accel, NULL, &err), PM_ERR_INVALID_ARG);
    pm_scenario_release(&s);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_step_energy_by_hand),
        cmocka_unit_test(test_fast_traffic_equals_graph_traffic_bundled),
        cmocka_unit_test(test_fast_traffic_equals_graph_traffic_sequence_parallel),
        cmocka_unit_test(test_fast_traffic_equals_graph_traffic_dense_beside_dp_attention),
        cmocka_unit_test(test_fast_traffic_equals_graph_traffic_tp_experts_beside_dp_attention),
        cmocka_unit_test(test_slow_l2_traffic_reads_nothing_back),
        cmocka_unit_test(test_request_traffic_matches_brute_force),
        cmocka_unit_test(test_request_traffic_from_a_chunk_boundary),
        cmocka_unit_test(test_die_cost_of_826mm2_7nm_by_hand),
        cmocka_unit_test(test_zero_area_coefficients_and_energies_refused),
        cmocka_unit_test(test_h100_die_is_gh100s_published_area),
        cmocka_unit_test(test_every_bundled_die_fits_the_reticle),
        cmocka_unit_test(test_cost_and_energy_need_their_blocks),
        cmocka_unit_test(test_loads_energy_and_cost_blocks),
        cmocka_unit_test(test_modelled_power_below_board_power),
        cmocka_unit_test(test_leakage_is_the_nodes),
        cmocka_unit_test(test_hbm_priced_per_binary_gb),
        cmocka_unit_test(test_io_dies_on_their_own_wafer),
        cmocka_unit_test(test_power_clock_frac_by_hand),
        cmocka_unit_test(test_property_prefill_power_and_decode_clock),
        cmocka_unit_test(test_prefill_power_warning),
        cmocka_unit_test(test_energy_refuses_impossible_traffic),
        cmocka_unit_test(test_property_energy_grows_with_bytes_moved),
        cmocka_unit_test(test_property_cost_grows_with_die_area),
        cmocka_unit_test(test_optimum_per_objective),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
