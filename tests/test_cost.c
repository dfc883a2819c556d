/*
 * test_cost.c - the roofline cost of one operation (DESIGN.md section 4) on single nodes with
 * round numbers, so that each term can be checked by hand:
 *
 *   t = max(F / (P eta), HBM bytes / BW_hbm + L2 bytes / BW_l2) + t_launch
 *
 * Hand accelerator: 1e15 int8 op/s (efficiency 1), HBM 1e12 bytes/s (efficiency 1), L2
 * 4e12 bytes/s and 8 MiB, strided KV at 0.5 of HBM bandwidth, launch 0 unless a test sets it.
 * Cluster: 4 devices, full mesh, 1e11 bytes/s links, alpha 1e-5 s, one-shot allreduce.
 */
#include <stdlib.h>

#include "internal.h"
#include "testutil.h"

/* Expected values are a few products and quotients of round numbers: a few ulps of rounding
 * at most. 1e-12 allows for that and nothing else. */
#define TOL 1e-12

/* testutil.h's hand scenario on 4 devices, with the one-shot allreduce the comment above
 * works out by hand. */
static pm_scenario hand_scenario(void)
{
    pm_scenario s = pm_test_hand_scenario(4);
    s.accel.peak_flop_per_s[PM_DTYPE_BF16] = 5e14;
    s.cluster.algorithm = PM_AR_ONESHOT;
    return s;
}

/* A runtime that adds nothing (every overhead 0, no kernel of its own): tests set what they
 * check. */
static pm_runtime hand_runtime(void)
{
    pm_runtime r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "hand");
    r.present = true;
    r.allreduce = PM_AR_AUTO;
    return r;
}

static pm_node node(pm_node_kind kind)
{
    pm_node n;
    memset(&n, 0, sizeof n);
    n.kind = kind;
    n.dtype = PM_DTYPE_INT8;
    snprintf(n.name, sizeof n.name, "%s", pm_node_kind_name(kind));
    n.prefetch = n.consumer = n.trigger = n.overflow = -1;
    return n;
}

static pm_op_cost cost(const pm_scenario *s, const pm_node *n)
{
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_add_node(g, n, NULL), PM_OK);
    pm_op_cost c;
    pm_error err;
    pm_status st = pm_op_cost_compute(s, g, 0, &c, &err);
    pm_graph_free(g);
    if (st != PM_OK)
        fail_msg("pm_op_cost_compute: %s", err.message);
    return c;
}

static void test_compute_bound_matmul(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    pm_node n = node(PM_NODE_MATMUL);
    n.flop = 1e12;       /* 1e12 / 1e15 = 1e-3 s */
    n.weight_bytes = 1e6; /* 1e6 / 1e12 = 1e-6 s */
    n.act_bytes = 1e5;    /* 1e-7 s */
    pm_op_cost c = cost(&s, &n);
    assert_rel(c.compute_s, 1e-3, TOL);
    assert_rel(c.hbm_s, 1.1e-6, TOL);
    assert_rel(c.hbm_bytes, 1.1e6, TOL);
    assert_rel(c.total_s, 1e-3, TOL);
    /* half the compute efficiency doubles it */
    s.accel.compute_efficiency_frac = 0.5;
    assert_rel(cost(&s, &n).total_s, 2e-3, TOL);
    /* the compute datatype picks the peak: bf16 at 5e14 */
    s.accel.compute_efficiency_frac = 1.0;
    n.dtype = PM_DTYPE_BF16;
    assert_rel(cost(&s, &n).compute_s, 2e-3, TOL);
    /* A datatype's own efficiency (compute_efficiency_by_dtype) replaces the common one for its
     * GEMMs only: int8 at 0.8, 1e12 / (1e15 x 0.8) = 1.25e-3 s; bf16 keeps 1.0, 2e-3 s. */
    s.accel.compute_efficiency_dtype_frac[PM_DTYPE_INT8] = 0.8;
    assert_rel(cost(&s, &n).compute_s, 2e-3, TOL);
    n.dtype = PM_DTYPE_INT8;
    assert_rel(cost(&s, &n).compute_s, 1.25e-3, TOL);
}

static void test_memory_bound_matmul(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    pm_node n = node(PM_NODE_MATMUL);
    n.flop = 1e6;        /* 1e-9 s */
    n.weight_bytes = 1e9; /* 1e-3 s */
    n.act_bytes = 1e6;    /* 1e-6 s */
    pm_op_cost c = cost(&s, &n);
    assert_rel(c.compute_s, 1e-9, TOL);
    assert_rel(c.total_s, 1.001e-3, TOL);
    /* HBM efficiency 0.8: 1.001e9 / 8e11 */
    s.accel.hbm_efficiency_frac = 0.8;
    assert_rel(cost(&s, &n).total_s, 1.001e9 / 8e11, TOL);
}

static void test_strided_kv_reads(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    pm_node n = node(PM_NODE_ATTENTION);
    n.kv_bytes = 1e6;
    n.act_bytes = 1e5;
    n.flop = 1e3;
    /* contiguous: (1e5 + 1e6) / 1e12 = 1.1e-6 s */
    pm_op_cost c = cost(&s, &n);
    assert_rel(c.hbm_s, 1.1e-6, TOL);
    assert_rel(c.total_s, 1.1e-6, TOL);
    /* strided KV at half the bandwidth; activations unaffected: 1e-7 + 1e6 / 5e11 = 2.1e-6 */
    n.kv_strided = true;
    c = cost(&s, &n);
    assert_rel(c.hbm_s, 2.1e-6, TOL);
    assert_rel(c.total_s, 2.1e-6, TOL);
    assert_rel(c.hbm_bytes, 1.1e6, TOL);
}

/* The builder marks KV strided exactly when a device holds more than one KV head, and the
 * cost follows: 1 device (2 KV heads) vs 2 devices (1 KV head). */
static void test_strided_kv_follows_the_shard(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.cluster.algorithm = PM_AR_AUTO;
    pm_graph *g = pm_graph_alloc();
    pm_op_cost c;
    for (int p = 1; p <= 2; p++) {
        s.cluster.devices = p;
        assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 1000, 1, g, NULL), PM_OK);
        const pm_node *att = &g->nodes[4];
        assert_string_equal(att->name, "L0.Attention");
        assert_int_equal(pm_op_cost_compute(&s, g, 4, &c, NULL), PM_OK);
        /* kv = 2/p heads; KV = 2 * b * ctx * kv * d = 2 * 2 * 1000 * (2/p) * 128 bytes;
         * activations 2 * b * q * d = 2 * 2 * (8/p) * 128 bytes at full bandwidth. */
        const double kv = 2.0 * 2 * 1000 * (2.0 / p) * 128, act = 2.0 * 2 * (8.0 / p) * 128;
        const double kv_bw = p == 1 ? 0.5e12 : 1e12;
        assert_rel(c.hbm_s, act / 1e12 + kv / kv_bw, TOL);
    }
    pm_graph_free(g);
}

static void test_prefetched_bytes_read_at_l2_bandwidth(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    pm_node n = node(PM_NODE_MATMUL);
    n.weight_bytes = 4e6;
    n.flop = 1e3;
    /* all from HBM: 4e-6 s */
    assert_rel(cost(&s, &n).total_s, 4e-6, TOL);
    /* all from L2: 4e6 / 4e12 = 1e-6 s, not free */
    n.l2_bytes = 4e6;
    pm_op_cost c = cost(&s, &n);
    assert_rel(c.hbm_s, 0.0, 0.0);
    assert_rel(c.l2_s, 1e-6, TOL);
    assert_rel(c.total_s, 1e-6, TOL);
    assert_rel(c.hbm_bytes, 0.0, 0.0);
    /* a quarter from L2: HBM 3e6 / 1e12 + L2 1e6 / 4e12 = 3e-6 + 2.5e-7 (sources add) */
    n.l2_bytes = 1e6;
    c = cost(&s, &n);
    assert_rel(c.total_s, 3.25e-6, TOL);
    /* attention: prefetched KV comes from L2, the rest is strided from HBM:
     * 5e5 / 5e11 + 5e5 / 4e12 = 1e-6 + 1.25e-7 */
    pm_node a = node(PM_NODE_ATTENTION);
    a.kv_bytes = 1e6;
    a.kv_strided = true;
    a.l2_bytes = 5e5;
    assert_rel(cost(&s, &a).total_s, 1.125e-6, TOL);
}

static void test_launch_overhead_added(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.accel.kernel_launch_s = 1e-6;
    pm_node n = node(PM_NODE_MATMUL);
    n.flop = 1e12; /* 1e-3 s */
    pm_op_cost c = cost(&s, &n);
    assert_rel(c.launch_s, 1e-6, TOL);
    assert_rel(c.total_s, 1e-3 + 1e-6, TOL);
    n = node(PM_NODE_NORM);
    n.act_bytes = 2e6; /* 2e-6 s */
    assert_rel(cost(&s, &n).total_s, 3e-6, TOL);
    /* a prefetch: bulk contiguous stream at HBM bandwidth, plus its launch; KV of a
     * prefetch is not penalised as strided: 2e6 / 1e12 + 1e-6 */
    n = node(PM_NODE_PREFETCH);
    n.stream = PM_STREAM_PREFETCH;
    n.kv_bytes = 2e6;
    c = cost(&s, &n);
    assert_rel(c.hbm_s, 2e-6, TOL);
    assert_rel(c.total_s, 3e-6, TOL);
}

/* The serving runtime (issue 16): host work per step on the embedding, its launch cost in place
 * of the accelerator's, its collective library's start-up on each allreduce. */
static void test_runtime_adds_step_launch_and_allreduce_overheads(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.accel.kernel_launch_s = 1e-6;
    pm_node e = node(PM_NODE_EMBEDDING);
    e.act_bytes = 2e6; /* 2e-6 s at 1e12 B/s */
    pm_node n = node(PM_NODE_NORM);
    n.act_bytes = 2e6;
    pm_node ar = node(PM_NODE_ALLREDUCE);
    ar.comm_bytes = 1e6;
    /* Without a runtime: 2e-6 + 1e-6 each; the allreduce 1e-5 + 1e6 / 1e11 = 2e-5. */
    assert_rel(cost(&s, &e).total_s, 3e-6, TOL);
    assert_rel(cost(&s, &ar).total_s, 2e-5, TOL);
    s.runtime = hand_runtime();
    s.runtime.step_overhead_s = 800e-6;
    s.runtime.sequence_overhead_s = 40e-6;
    s.runtime.multi_device_overhead_s = 5e-3;
    s.runtime.kernel_launch_s = 8e-6;
    s.runtime.allreduce_overhead_s = 20e-6;
    /* The embedding: 2e-6 + launch 8e-6 + step 800e-6 + batch 2 x 40e-6 + 4 devices > 1, so
     * 5e-3: 2e-6 + 8e-6 + 8e-4 + 8e-5 + 5e-3 = 5.89e-3 s; its launch_s holds all but 2e-6. */
    pm_op_cost c = cost(&s, &e);
    assert_rel(c.total_s, 5.89e-3, TOL);
    assert_rel(c.launch_s, 5.888e-3, TOL);
    /* Any other node: only the runtime's launch, 2e-6 + 8e-6 = 1e-5. */
    assert_rel(cost(&s, &n).total_s, 1e-5, TOL);
    /* The allreduce: 2e-5 + 20e-6 = 4e-5. */
    assert_rel(cost(&s, &ar).total_s, 4e-5, TOL);
    /* One device: no multi-device RPC, 5.89e-3 - 5e-3 = 8.9e-4. */
    s.cluster.devices = 1;
    assert_rel(cost(&s, &e).total_s, 8.9e-4, TOL);
}

/* The attention kernel's fixed time (issue 16): t = max(compute, KV / BW) + t0 + launch, so the
 * effective bandwidth rises with the KV read; on a GPU preset (kv_strided_efficiency 1) the
 * strided penalty is gone, on the paper's NPU (0.5 here) it stays. */
static void test_attention_latency_and_strided_gate(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.accel.attention_latency_s = 14e-6;
    pm_node a = node(PM_NODE_ATTENTION);
    a.kv_bytes = 4e6; /* 4e6 / 1e12 = 4e-6 s */
    /* 4e-6 + 14e-6 = 1.8e-5 s: an effective 4e6 / 1.8e-5 = 0.22 TB/s at a small read... */
    assert_rel(cost(&s, &a).total_s, 1.8e-5, TOL);
    a.kv_bytes = 5.36e8; /* ...and 5.36e-4 + 1.4e-5 = 5.5e-4 s, 0.97 TB/s, at a large one */
    assert_rel(cost(&s, &a).total_s, 5.5e-4, TOL);
    /* Strided (kv_loc >= 2) on the NPU-like preset: 5.36e8 / (1e12 x 0.5) + 1.4e-5 = 1.086e-3 */
    a.kv_strided = true;
    assert_rel(cost(&s, &a).total_s, 1.086e-3, TOL);
    /* On a GPU preset, kv_strided_efficiency 1: the same read as contiguous, 5.5e-4. */
    s.accel.kv_strided_efficiency_frac = 1.0;
    assert_rel(cost(&s, &a).total_s, 5.5e-4, TOL);
    /* Other kernels pay no attention latency: a norm of 2e6 bytes takes 2e-6 s. */
    pm_node n = node(PM_NODE_NORM);
    n.act_bytes = 2e6;
    assert_rel(cost(&s, &n).total_s, 2e-6, TOL);
    /* The accelerator's attention kernel at 0.5 of the HBM bandwidth: 5.36e8 / 5e11 + 1.4e-5 =
     * 1.086e-3 s; a runtime's own kernel at 0.8 replaces it: 5.36e8 / 8e11 + 1.4e-5 = 6.84e-4
     * s; the other kernels keep the operators' bandwidth (the norm: 2e-6 s). */
    s.accel.attention_hbm_efficiency_frac = 0.5;
    assert_rel(cost(&s, &a).total_s, 1.086e-3, TOL);
    s.runtime = hand_runtime();
    s.runtime.attention_hbm_efficiency_frac = 0.8;
    assert_rel(cost(&s, &a).total_s, 6.84e-4, TOL);
    assert_rel(cost(&s, &n).total_s, 2e-6, TOL);
    /* A runtime without its own figure (0) keeps the accelerator's: 1.086e-3 s again. */
    s.runtime.attention_hbm_efficiency_frac = 0.0;
    assert_rel(cost(&s, &a).total_s, 1.086e-3, TOL);
}

/* An attention kernel's products at its own fraction of the peak
 * (attention_compute_efficiency_frac: FlashAttention-3 reaches 0.62 of an H100's peak where
 * its GEMMs reach 0.80), the GEMMs' efficiency where the accelerator gives none; GEMMs and
 * other kernels keep theirs. The hand accelerator: 1e15 int8 op/s. */
static void test_attention_compute_at_its_own_efficiency(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.accel.compute_efficiency_frac = 0.8;
    pm_node a = node(PM_NODE_ATTENTION), m = node(PM_NODE_MATMUL);
    a.flop = m.flop = 1.6e12;
    a.kv_bytes = 1e6; /* 1e-6 s of reads: compute-bound */
    /* No figure: the GEMMs' 0.8, 1.6e12 / (1e15 x 0.8) = 2e-3 s for both. */
    assert_rel(cost(&s, &a).compute_s, 2e-3, TOL);
    assert_rel(cost(&s, &a).total_s, 2e-3, TOL);
    assert_rel(cost(&s, &m).total_s, 2e-3, TOL);
    /* At 0.5: the attention takes 1.6e12 / 5e14 = 3.2e-3 s; the GEMM stays at 2e-3 s. */
    s.accel.attention_compute_efficiency_frac = 0.5;
    assert_rel(cost(&s, &a).compute_s, 3.2e-3, TOL);
    assert_rel(cost(&s, &a).total_s, 3.2e-3, TOL);
    assert_rel(cost(&s, &m).total_s, 2e-3, TOL);
    /* It is a fraction of the node's own datatype's peak, whatever the GEMMs' efficiency for
     * that datatype: bf16 (5e14 op/s here, its GEMMs at 0.9) gives 1.6e12 / 2.5e14 = 6.4e-3 s. */
    s.accel.compute_efficiency_dtype_frac[PM_DTYPE_BF16] = 0.9;
    a.dtype = PM_DTYPE_BF16;
    assert_rel(cost(&s, &a).compute_s, 6.4e-3, TOL);
    /* A memory-bound attention does not notice: 4e9 KV bytes take 4e-3 s > 3.2e-3 s of
     * compute at int8. */
    a.dtype = PM_DTYPE_INT8;
    a.kv_bytes = 4e9;
    assert_rel(cost(&s, &a).total_s, 4e-3, TOL);
}

/* A runtime's PagedAttention decode (runtime.c): the KV reads at paged_attention_efficiency of
 * the efficiency used otherwise, for every model ("all") or where vLLM 0.4-0.6 falls back to it
 * ("fallback": a model whose every layer attends through a sliding window, or an fp8 KV
 * cache); other kernels unchanged. The hand
 * accelerator: HBM 1e12 B/s, attention latency 14 us, the attention reading 5.36e8 KV bytes. */
static void test_paged_attention_slows_the_kv_reads_of_the_models_it_serves(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.accel.attention_latency_s = 14e-6;
    s.accel.kv_strided_efficiency_frac = 1.0;
    s.accel.attention_hbm_efficiency_frac = 0.5;
    pm_node a = node(PM_NODE_ATTENTION), n = node(PM_NODE_NORM);
    a.kv_bytes = 5.36e8;
    n.act_bytes = 2e6;
    /* "all" at 0.5 of the accelerator's 0.5: 5.36e8 / (1e12 x 0.5 x 0.5) + 1.4e-5 = 2.158e-3 s;
     * the norm keeps the operators' bandwidth, 2e6 / 1e12 = 2e-6 s. */
    s.runtime = hand_runtime();
    s.runtime.paged_attention = PM_PAGED_ALL;
    s.runtime.paged_attention_efficiency_frac = 0.5;
    assert_rel(cost(&s, &a).total_s, 2.158e-3, TOL);
    assert_rel(cost(&s, &n).total_s, 2e-6, TOL);
    /* On top of the runtime's own attention figure, 0.8: 5.36e8 / (1e12 x 0.8 x 0.5) + 1.4e-5 =
     * 1.354e-3 s. */
    s.runtime.attention_hbm_efficiency_frac = 0.8;
    assert_rel(cost(&s, &a).total_s, 1.354e-3, TOL);
    /* "fallback": the hand model has no window and an int8 KV cache, so the runtime's 0.8
     * alone: 5.36e8 / 8e11 + 1.4e-5 = 6.84e-4 s; an fp8 KV cache falls back: 1.354e-3 s... */
    s.runtime.paged_attention = PM_PAGED_FALLBACK;
    assert_int_equal(s.model.sliding_window, 0);
    assert_int_equal(s.workload.kv_dtype, PM_DTYPE_INT8);
    assert_rel(cost(&s, &a).total_s, 6.84e-4, TOL);
    assert_null(pm_scenario_attention_fallback(&s));
    s.workload.kv_dtype = PM_DTYPE_FP8;
    assert_rel(cost(&s, &a).total_s, 1.354e-3, TOL);
    assert_string_equal(pm_scenario_attention_fallback(&s), "an fp8 KV cache");
    s.workload.kv_dtype = PM_DTYPE_INT8;
    /* ...a window in every layer (Mistral 7B: local_mask 0 is every layer local): 1.354e-3 s... */
    s.model.sliding_window = 4096;
    assert_rel(cost(&s, &a).total_s, 1.354e-3, TOL);
    assert_string_equal(pm_scenario_attention_fallback(&s), "a sliding window in every layer");
    /* ...but not an interleaved window (one local layer in two, Gemma 2's) nor chunked
     * attention (Llama 4's): 6.84e-4 s. */
    s.model.window_period = 2;
    s.model.local_mask = 1;
    assert_rel(cost(&s, &a).total_s, 6.84e-4, TOL);
    s.model.window_period = 0;
    s.model.local_mask = 0;
    s.model.chunked_attention = true;
    assert_rel(cost(&s, &a).total_s, 6.84e-4, TOL);
    /* Without the runtime's figure and without the accelerator's (0: the operators' HBM
     * bandwidth, 1e12 here), "all" at 0.5: 5.36e8 / 5e11 + 1.4e-5 = 1.086e-3 s. */
    s.model.chunked_attention = false;
    s.runtime.paged_attention = PM_PAGED_ALL;
    s.runtime.attention_hbm_efficiency_frac = 0.0;
    s.accel.attention_hbm_efficiency_frac = 0.0;
    assert_rel(cost(&s, &a).total_s, 1.086e-3, TOL);
}

/* Phi-3-small under vLLM 0.4-0.6 ("fallback"): its dense layers keep FlashAttention, its
 * block-sparse layers decode through the PagedAttention kernel (BlocksparseFlashAttentionImpl
 * calls PagedAttention.forward_decode): only their attention nodes are kv_paged. The hand
 * model, 2 devices: its block-sparse layer 0 reads 2 x batch 2 x 192 x 128 = 98,304 KV bytes at
 * context 320 (test_architectures.c); at 0.5 of the accelerator's 0.5 of 1e12 B/s that is
 * 98,304 / 2.5e11 = 3.93216e-7 s, against 98,304 / 5e11 = 1.96608e-7 s with FlashAttention,
 * each plus the query and output (2 x 2 x 4 x 128 = 2,048 bytes at 1e12 B/s: 2.048e-9 s) and
 * the 14 us latency; the dense layer 1 keeps FlashAttention. */
static void test_paged_attention_of_block_sparse_layers_only(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    s.accel.attention_latency_s = 14e-6;
    s.accel.kv_strided_efficiency_frac = 1.0;
    s.accel.attention_hbm_efficiency_frac = 0.5;
    s.accel.hbm_bandwidth_bytes_per_s = 1e12;
    s.model.layers = 2;
    s.model.sparse_block = 16;
    s.model.sparse_local_blocks = 4;
    s.model.sparse_vert_stride = 8;
    s.model.window_period = 2;
    s.model.local_mask = 1;
    s.runtime = hand_runtime();
    s.runtime.paged_attention = PM_PAGED_FALLBACK;
    s.runtime.paged_attention_efficiency_frac = 0.5;
    assert_true(pm_scenario_paged_layer(&s));
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 320, 0, g, NULL), PM_OK);
    int seen = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *n = &g->nodes[i];
        if (n->kind != PM_NODE_ATTENTION)
            continue;
        seen++;
        assert_int_equal(n->kv_paged, n->layer == 0);
        if (n->layer == 0)
            assert_rel(cost(&s, n).total_s, 3.93216e-7 + 2.048e-9 + 14e-6, TOL);
    }
    assert_int_equal(seen, 2);
    /* The same layer with the paged factor off is FlashAttention's. */
    pm_node a = g->nodes[0];
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].kind == PM_NODE_ATTENTION && g->nodes[i].layer == 0)
            a = g->nodes[i];
    a.kv_paged = false;
    assert_rel(cost(&s, &a).total_s, 1.96608e-7 + 2.048e-9 + 14e-6, TOL);
    pm_graph_free(g);
    /* A whole-model fall-back (an fp8 KV cache) covers every layer already. */
    s.workload.kv_dtype = PM_DTYPE_FP8;
    assert_false(pm_scenario_paged_layer(&s));
    s.workload.kv_dtype = PM_DTYPE_INT8;
    s.runtime.paged_attention = PM_PAGED_ALL;
    assert_false(pm_scenario_paged_layer(&s));
}

/* A bf16 256 x 1280 x 1024 GEMM: 671088640 flop, 1.34217728e-6 s at 5e14; 1e6 weight bytes,
 * 1e-6 s at 1e12 B/s. */
static pm_node bf16_gemm(void)
{
    pm_node n = node(PM_NODE_MATMUL);
    n.dtype = PM_DTYPE_BF16;
    n.m = 256;
    n.n = 1280;
    n.k = 1024;
    n.flop = 2.0 * 256 * 1280 * 1024;
    n.weight_bytes = 1e6;
    return n;
}

/* GEMM efficiency by shape (issue 16, src/gemm_eff.c), each number by hand. The hand
 * accelerator: bf16 5e14 flop/s at efficiency 1, HBM 1e12 B/s, launch 0. */
static void test_gemm_waves_knee_latency_and_dequant(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.workload.weight_dtype = s.workload.act_dtype = PM_DTYPE_BF16;
    pm_node n = bf16_gemm();
    /* No gemm object: the plain roofline, max(1.34217728e-6, 1e-6). (The tiling bound adds no
     * traffic: 2 m n k e / sqrt(C / e) = 1.34e9 / 2048 = 655360 < compulsory 1e6 bytes.) */
    assert_rel(cost(&s, &n).total_s, 1.34217728e-6, TOL);
    /* 128 x 128 tiles on 8 units, the M tile 128 or 64 rows, whichever wastes least: 128
     * rows: ceil(256 / 128) ceil(1280 / 128) = 20 tiles, 3 waves of 8 = 24 slots; 64 rows: 40
     * tiles, 5 whole waves, no waste: compute 1.34217728e-6 s, the ideal. */
    s.accel.gemm = (pm_gemm_params){true, 8, 128, 128, 0.0, 0.0};
    assert_rel(cost(&s, &n).compute_s, 1.34217728e-6, TOL);
    assert_rel(cost(&s, &n).total_s, 1.34217728e-6, TOL);
    /* One token more, m = 257 (k = 1024): 128 rows: 30 tiles, 4 waves, 32 x 128 x 128 =
     * 524288 elements of work; 64 rows: 50 tiles, 7 waves, 56 x 64 x 128 = 458752, the least:
     * 2 x 1024 x 458752 / 5e14 = 1.879048192e-6 s (a padded tile costs a whole one; the tiles'
     * count over the slots, 30 / 32 at 128 rows, gave 1.437248e-6, faster than at m = 384).
     * m = 384: 128 rows, 30 tiles in 4 waves, 524288; 64 rows, 60 tiles in 8 waves, 524288:
     * 2 x 1024 x 524288 / 5e14 = 2.147483648e-6 s. */
    pm_node n257 = n, n384 = n;
    n257.m = 257;
    n257.flop = 2.0 * 257 * 1280 * 1024;
    n384.m = 384;
    n384.flop = 2.0 * 384 * 1280 * 1024;
    assert_rel(cost(&s, &n257).compute_s, 1.879048192e-6, TOL);
    assert_rel(cost(&s, &n384).compute_s, 2.147483648e-6, TOL);
    /* The knee: + 0.25 x min(1.34217728e-6, 1e-6) = + 2.5e-7; the fixed time + 2e-6:
     * 1.34217728e-6 + 2.5e-7 + 2e-6 = 3.59217728e-6 s. */
    s.accel.gemm.overlap_loss_frac = 0.25;
    s.accel.gemm.latency_s = 2e-6;
    assert_rel(cost(&s, &n).total_s, 3.59217728e-6, TOL);
    /* Fewer tiles than units (32 units): split K, no quantisation: compute 1.34217728e-6,
     * total 1.34217728e-6 + 0.25 x 1e-6 + 2e-6 = 3.59217728e-6 s. */
    s.accel.gemm.compute_units = 32;
    assert_rel(cost(&s, &n).total_s, 3.59217728e-6, TOL);
    /* Weight-only int8 (int8 weights, bf16 compute) at 1e12 conversions/s: k n ceil(m / 128) =
     * 1024 x 1280 x 2 = 2621440 conversions, 2.62144e-6 s more compute: 3.96361728e-6 s of
     * compute, total 3.96361728e-6 + 0.25 x 1e-6 + 2e-6 = 6.21361728e-6 s. */
    s.accel.dequant_elem_per_s = 1e12;
    assert_rel(cost(&s, &n).total_s, 3.59217728e-6, TOL); /* bf16 weights: nothing to convert */
    s.workload.weight_dtype = PM_DTYPE_INT8;
    assert_rel(cost(&s, &n).compute_s, 3.96361728e-6, TOL);
    assert_rel(cost(&s, &n).total_s, 6.21361728e-6, TOL);
    /* Other nodes keep the plain roofline: a norm of 2e6 bytes, 2e-6 s. */
    pm_node nm = node(PM_NODE_NORM);
    nm.act_bytes = 2e6;
    assert_rel(cost(&s, &nm).total_s, 2e-6, TOL);
}

/* The engine's routed-expert GEMM kernel (issue 16, runtime.c): a runtime's
 * moe_gemm_efficiency divides a routed MatMul's compute and memory times (HBM and L2); dense
 * MatMuls and a runtime without the figure keep the dense GEMM's. The hand accelerator: bf16
 * 5e14 flop/s, HBM 1e12 B/s, L2 4e12 B/s, launch 0, no gemm object. */
static void test_moe_gemm_efficiency_slows_routed_experts_only(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.workload.weight_dtype = s.workload.act_dtype = PM_DTYPE_BF16;
    pm_node n = bf16_gemm();
    s.runtime = hand_runtime();
    s.runtime.moe_gemm_efficiency_frac = 0.5;
    /* Dense: max(1.34217728e-6, 1e-6) as without a runtime. */
    assert_rel(cost(&s, &n).total_s, 1.34217728e-6, TOL);
    /* Routed at 0.5: compute 2.68435456e-6, memory 2e-6: 2.68435456e-6 s. */
    n.routed = true;
    assert_rel(cost(&s, &n).compute_s, 2.68435456e-6, TOL);
    assert_rel(cost(&s, &n).hbm_s, 2e-6, TOL);
    assert_rel(cost(&s, &n).total_s, 2.68435456e-6, TOL);
    /* Memory-bound (4e6 bytes): 4e-6 / 0.5 = 8e-6 s; with 2e6 of them from L2: 2e6 / 5e11 +
     * 2e6 / 2e12 = 4e-6 + 1e-6 = 5e-6 s. */
    n.weight_bytes = 4e6;
    assert_rel(cost(&s, &n).total_s, 8e-6, TOL);
    n.l2_bytes = 2e6;
    assert_rel(cost(&s, &n).total_s, 5e-6, TOL);
    n.l2_bytes = 0;
    /* A fused GEMM + allreduce of routed experts (ExpertDown without EP): its GEMM part too. */
    pm_node f = n;
    f.kind = PM_NODE_FUSED_MATMUL_ALLREDUCE;
    f.comm_bytes = 1e3;
    f.chunks = 1;
    assert_rel(cost(&s, &f).compute_s, 2.68435456e-6, TOL);
    assert_rel(cost(&s, &f).hbm_s, 8e-6, TOL);
    /* A runtime without the figure (0): the dense GEMM's, 4e-6 s. */
    s.runtime.moe_gemm_efficiency_frac = 0.0;
    assert_rel(cost(&s, &n).total_s, 4e-6, TOL);
    /* Nor does a routed flag on a non-GEMM node change it: a norm of 2e6 bytes, 2e-6 s. */
    s.runtime.moe_gemm_efficiency_frac = 0.5;
    pm_node nm = node(PM_NODE_NORM);
    nm.act_bytes = 2e6;
    nm.routed = true;
    assert_rel(cost(&s, &nm).total_s, 2e-6, TOL);
}

/* The expert GEMMs' compute efficiency by tokens per expert (issue 47, runtime.c): a runtime's
 * table of (tokens per expert, fraction) points, interpolated linearly in log(tokens), clamped
 * at its ends, divides a routed MatMul's compute time only, on the accelerators the table
 * names. bf16_gemm: m = 256 tokens per expert, compute 1.34217728e-6 s, HBM 1e6 B / 1e12 B/s =
 * 1e-6 s. Table (128, 1), (512, 0.8): at 256, (ln 256 - ln 128) / (ln 512 - ln 128) = 1 / 2 of
 * the way, 1 - 0.2 / 2 = 0.9: compute 1.34217728e-6 / 0.9 = 1.491308088...e-6 s. */
static void test_moe_gemm_compute_table_by_tokens_per_expert(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.workload.weight_dtype = s.workload.act_dtype = PM_DTYPE_BF16;
    s.runtime = hand_runtime();
    pm_moe_gemm_curve *c = &s.runtime.moe_gemm_compute;
    c->n_points = 2;
    c->tokens_per_expert[0] = 128;
    c->compute_frac[0] = 1.0;
    c->tokens_per_expert[1] = 512;
    c->compute_frac[1] = 0.8;
    c->n_accelerators = 1;
    snprintf(c->accelerators[0], sizeof c->accelerators[0], "hand-accel");
    pm_node n = bf16_gemm();
    n.routed = true;
    assert_rel(pm_moe_gemm_curve_frac(c, 256), 0.9, TOL);
    assert_rel(cost(&s, &n).compute_s, 1.34217728e-6 / 0.9, TOL);
    assert_rel(cost(&s, &n).compute_s, 1.4913080888888889e-6, TOL);
    assert_rel(cost(&s, &n).hbm_s, 1e-6, TOL); /* its reads are unchanged */
    assert_rel(cost(&s, &n).total_s, 1.4913080888888889e-6, TOL);
    /* A quarter of the way (128 sqrt 2 = 181.02 tokens): 0.95. Clamped: 1 below 128, 0.8 above
     * 512. */
    assert_rel(pm_moe_gemm_curve_frac(c, 128.0 * sqrt(2.0)), 0.95, TOL);
    assert_rel(pm_moe_gemm_curve_frac(c, 16), 1.0, TOL);
    assert_rel(pm_moe_gemm_curve_frac(c, 65536), 0.8, TOL);
    n.m = 4096;
    assert_rel(cost(&s, &n).compute_s, 1.34217728e-6 / 0.8, TOL);
    n.m = 256;
    /* With the kernel's figure beside it (0.5): both divide, 1.34217728e-6 / (0.5 x 0.9). */
    s.runtime.moe_gemm_efficiency_frac = 0.5;
    assert_rel(cost(&s, &n).compute_s, 2.982616177777778e-6, TOL);
    s.runtime.moe_gemm_efficiency_frac = 0.0;
    /* A dense MatMul keeps the dense GEMM's compute. */
    n.routed = false;
    assert_rel(cost(&s, &n).compute_s, 1.34217728e-6, TOL);
    n.routed = true;
    /* Another accelerator than the table names: off (the dense GEMM's), and said. */
    snprintf(c->accelerators[0], sizeof c->accelerators[0], "h100-sxm");
    assert_rel(cost(&s, &n).compute_s, 1.34217728e-6, TOL);
    assert_null(pm_moe_gemm_curve_of(&s));
    assert_true(pm_moe_gemm_curve_off(&s));
    /* Without a runtime the table is not read. */
    snprintf(c->accelerators[0], sizeof c->accelerators[0], "hand-accel");
    s.runtime.present = false;
    assert_rel(cost(&s, &n).compute_s, 1.34217728e-6, TOL);
}

static void test_allreduce_node_costs_its_algorithm(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    pm_node n = node(PM_NODE_ALLREDUCE);
    n.comm_bytes = 1e6;
    /* one-shot on the full mesh: 1e-5 + 1e6 / 1e11 = 2e-5 s */
    pm_op_cost c = cost(&s, &n);
    assert_rel(c.comm_s, 2e-5, TOL);
    assert_rel(c.total_s, 2e-5, TOL);
    /* an algorithm the topology cannot run is reported */
    s.cluster.topology = PM_TOPO_RING;
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_add_node(g, &n, NULL), PM_OK);
    assert_int_equal(pm_op_cost_compute(&s, g, 0, &c, NULL), PM_ERR_INCONSISTENT);
    assert_int_equal(pm_op_cost_compute(&s, g, 1, &c, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_op_cost_compute(NULL, g, 0, &c, NULL), PM_ERR_INVALID_ARG);
    pm_graph_free(g);
}

static void test_tiling_bound_raises_prefill_gemm_traffic(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    /* A prefill GEMM m = 4096, k = n = 1024, int8 (e = 1):
     *   compulsory = activations (m k + m n) + weights (k n) = 8388608 + 1048576 = 9437184
     *   flop = 2 m n k = 8589934592 -> 8.589934592e-6 s at 1e15. */
    pm_node n = node(PM_NODE_MATMUL);
    n.m = 4096;
    n.k = 1024;
    n.n = 1024;
    n.flop = 2.0 * 4096 * 1024 * 1024;
    n.act_bytes = 4096.0 * 1024 + 4096.0 * 1024;
    n.weight_bytes = 1024.0 * 1024;
    /* L2 = 64 KiB: tiled = 2 m n k e / sqrt(C/e) = 8589934592 / 256 = 33554432 bytes,
     * above the compulsory traffic, so HBM moves 33554432 bytes: 3.3554432e-5 s. */
    s.accel.l2_capacity_bytes = 65536;
    pm_op_cost c = cost(&s, &n);
    assert_rel(c.hbm_bytes, 33554432.0, TOL);
    assert_rel(c.hbm_s, 3.3554432e-5, TOL);
    assert_rel(c.total_s, 3.3554432e-5, TOL);
    /* L2 = 1 MiB: tiled = 8589934592 / 1024 = 8388608 < compulsory: compulsory only. */
    s.accel.l2_capacity_bytes = 1048576;
    c = cost(&s, &n);
    assert_rel(c.hbm_bytes, 9437184.0, TOL);
    assert_rel(c.total_s, 9.437184e-6, TOL);
    /* bf16 (e = 2), bytes doubled, L2 = 128 KiB: tiled = 2 m n k 2 / sqrt(65536)
     * = 17179869184 / 256 = 67108864 bytes. */
    n.dtype = PM_DTYPE_BF16;
    n.act_bytes *= 2;
    n.weight_bytes *= 2;
    s.accel.l2_capacity_bytes = 131072;
    c = cost(&s, &n);
    assert_rel(c.hbm_bytes, 67108864.0, TOL);
    /* Decode GEMMs (m = batch) never reach the bound: the graph's QKV at 64 KiB L2:
     * tiled = 2 * 2 * 768 * 1024 / 256 = 12288 < compulsory 786432 + 2 * (1024 + 768). */
    s.accel.l2_capacity_bytes = 65536;
    s.cluster.devices = 2;
    s.cluster.algorithm = PM_AR_AUTO;
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 10, 1, g, NULL), PM_OK);
    assert_int_equal(pm_op_cost_compute(&s, g, 2, &c, NULL), PM_OK);
    assert_rel(c.hbm_bytes, 786432.0 + 2.0 * (1024 + 768), TOL);
    pm_graph_free(g);
}

/* A fused node: the O projection of a decode step fused with its allreduce.
 * F = 1e9 flop (1e-6 s), W = 4e6 bytes (4e-6 s), allreduce of 4e5 bytes. */
static pm_node fused_node(int chunks)
{
    pm_node n = node(PM_NODE_FUSED_MATMUL_ALLREDUCE);
    n.flop = 1e9;
    n.weight_bytes = 4e6;
    n.comm_bytes = 4e5;
    n.chunks = chunks;
    return n;
}

static void test_fused_one_chunk_equals_matmul_plus_allreduce(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.accel.kernel_launch_s = 1e-6;
    s.accel.chunk_half_efficiency_bytes = 1e6;
    pm_node f = fused_node(1);
    pm_op_cost c = cost(&s, &f);
    /* max(1e-6, 4e-6) + (1e-5 + 4e5/1e11 = 1.4e-5) + launch 1e-6 = 1.9e-5 s */
    assert_rel(c.total_s, 1.9e-5, TOL);
    assert_int_equal(c.chunks, 1);
    assert_rel(c.comm_s, 1.4e-5, TOL);
    /* ... which is the MatMul and the AllReduce run one after the other */
    pm_node m = f;
    m.kind = PM_NODE_MATMUL;
    m.comm_bytes = 0;
    pm_node a = node(PM_NODE_ALLREDUCE);
    a.comm_bytes = 4e5;
    assert_rel(c.total_s, cost(&s, &m).total_s + cost(&s, &a).total_s, TOL);
}

static void test_fused_chunked_pipeline_formula(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.accel.chunk_half_efficiency_bytes = 1e6;
    pm_node f = fused_node(4);
    /* k = 4 chunks of x = 4e6 / 4 = 1e6 bytes; Hockney efficiency relative to the whole:
     *   eff = (x/(x+n_half)) / (X/(X+n_half)) = (1/2) / (4/5) = 0.625
     *   memory per chunk  = 4e-6 / 4 / 0.625 = 1.6e-6 s
     *   compute per chunk = 1e-6 / 4 = 2.5e-7 s        -> t_gemm = 1.6e-6 s
     *   allreduce per chunk of 1e5 bytes: 1e-5 + 1e5/1e11 = 1.1e-5 s = t_ar
     *   pipeline: t_gemm + (k-1) max(t_gemm, t_ar) + t_ar = 1.6e-6 + 3 * 1.1e-5 + 1.1e-5
     *           = 4.56e-5 s */
    pm_op_cost c = cost(&s, &f);
    assert_int_equal(c.chunks, 4);
    assert_rel(c.total_s, 4.56e-5, TOL);
    assert_rel(c.comm_s, 4.0 * 1.1e-5, TOL);
    /* k = 2: x = 2e6, eff = (2/3)/(4/5) = 5/6; memory 2e-6 / (5/6) = 2.4e-6 s;
     * t_ar = 1e-5 + 2e5/1e11 = 1.2e-5; total = 2.4e-6 + 1.2e-5 + 1.2e-5 = 2.64e-5 s */
    f.chunks = 2;
    assert_rel(cost(&s, &f).total_s, 2.64e-5, TOL);
    /* chunks = 0: the best of 1..16. Here latency dominates, so one chunk wins:
     * max(1e-6, 4e-6) + 1.4e-5 = 1.8e-5 s */
    f.chunks = 0;
    c = cost(&s, &f);
    assert_int_equal(c.chunks, 1);
    assert_rel(c.total_s, 1.8e-5, TOL);
    for (int k = 1; k <= 16; k++) {
        f.chunks = k;
        assert_true(c.total_s <= cost(&s, &f).total_s);
    }
}

static void test_fused_kernel_has_its_own_latency(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.accel.chunk_half_efficiency_bytes = 1e6;
    s.cluster.fused_latency_s = 2e-6; /* device-initiated; the standalone allreduce keeps 1e-5 */
    pm_node f = fused_node(4);
    /* As in the pipeline test but with alpha 2e-6: t_ar = 2e-6 + 1e-6 = 3e-6 s per chunk,
     * t_gemm = 1.6e-6 s: 1.6e-6 + 3 * 3e-6 + 3e-6 = 1.36e-5 s */
    pm_op_cost c = cost(&s, &f);
    assert_rel(c.total_s, 1.36e-5, TOL);
    assert_rel(c.comm_s, 4.0 * 3e-6, TOL);
    /* The standalone allreduce node is unchanged: 1e-5 + 4e5/1e11 = 1.4e-5 s */
    pm_node a = node(PM_NODE_ALLREDUCE);
    a.comm_bytes = 4e5;
    assert_rel(cost(&s, &a).total_s, 1.4e-5, TOL);
}

static void test_fused_chunking_wins_for_large_gemms(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.cluster.link_latency_s = 0.0;
    /* No latency and no chunk penalty (n_half = 0): F = 0, W = 4e6 bytes (4e-6 s), message
     * 4e5 bytes (4e-6 s one-shot). k chunks: 4e-6/k + (k-1) 4e-6/k + 4e-6/k = (k+1) 4e-6/k,
     * decreasing in k: the best of 1..16 is 16 chunks, 17/16 * 4e-6 = 4.25e-6 s. */
    pm_node f = fused_node(0);
    f.flop = 0;
    pm_op_cost c = cost(&s, &f);
    assert_int_equal(c.chunks, 16);
    assert_rel(c.total_s, 4.25e-6, TOL);
}

/* The chunk search stops early where a lower bound of every larger count reaches the best time
 * (cost.c): over latencies, chunk penalties, GEMM sizes, messages, device counts and
 * topologies its choice is the first minimum of all 16 counts tried one by one, to the bit. */
static void test_fused_search_equals_trying_every_count(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    const double lat[] = {0.0, 1e-7, 2e-6, 1e-5, 1e-4};
    const double half[] = {0.0, 1e4, 1e6, 1e8};
    const double flop[] = {0.0, 1e8, 1e9, 1e12};
    const double comm[] = {1e3, 4e5, 1e7, 1e9};
    const int devices[] = {1, 2, 8, 64};
    const pm_topology topo[] = {PM_TOPO_RING, PM_TOPO_FULL_MESH, PM_TOPO_SWITCH};
    int cases = 0, chunked = 0;
    for (size_t a = 0; a < (sizeof lat / sizeof lat[0]); a++)
        for (size_t b = 0; b < (sizeof half / sizeof half[0]); b++)
            for (size_t c = 0; c < (sizeof flop / sizeof flop[0]); c++)
                for (size_t d = 0; d < (sizeof comm / sizeof comm[0]); d++)
                    for (size_t e = 0; e < (sizeof devices / sizeof devices[0]); e++)
                        for (size_t t = 0; t < (sizeof topo / sizeof topo[0]); t++) {
                            s.cluster.link_latency_s = lat[a];
                            s.accel.chunk_half_efficiency_bytes = half[b];
                            s.cluster.devices = devices[e];
                            s.cluster.topology = topo[t];
                            s.cluster.algorithm = PM_AR_AUTO;
                            pm_node f = fused_node(0);
                            f.flop = flop[c];
                            f.comm_bytes = comm[d];
                            const pm_op_cost got = cost(&s, &f);
                            int best_k = 1;
                            double best = INFINITY;
                            for (int k = 1; k <= 16; k++) {
                                f.chunks = k;
                                const double tk = cost(&s, &f).total_s;
                                if (tk < best) {
                                    best = tk;
                                    best_k = k;
                                }
                            }
                            assert_int_equal(got.chunks, best_k);
                            assert_memory_equal(&got.total_s, &best, sizeof best);
                            cases++;
                            chunked += best_k > 1;
                        }
    assert_int_equal(cases, 5 * 4 * 4 * 4 * 4 * 3);
    assert_true(chunked > 100 && chunked < cases - 100); /* both outcomes are exercised */
}

/* A scenario built by hand with a zero HBM bandwidth gives an infinite time: an error, never
 * PM_OK with it. A malformed node is refused with its field named. */
static void test_cost_non_finite_is_an_error(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.accel.hbm_bandwidth_bytes_per_s = 0.0;
    pm_graph *g = pm_graph_alloc();
    pm_node n = node(PM_NODE_MATMUL);
    n.weight_bytes = 1e6;
    assert_int_equal(pm_graph_add_node(g, &n, NULL), PM_OK);
    pm_op_cost c;
    pm_error err;
    assert_int_equal(pm_op_cost_compute(&s, g, 0, &c, &err), PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "not finite"));
    s = hand_scenario();
    g->nodes[0].kind = (pm_node_kind)40; /* written past the API, as a caller could */
    assert_int_equal(pm_op_cost_compute(&s, g, 0, &c, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "$.nodes[0].op");
    pm_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compute_bound_matmul),
        cmocka_unit_test(test_memory_bound_matmul),
        cmocka_unit_test(test_strided_kv_reads),
        cmocka_unit_test(test_strided_kv_follows_the_shard),
        cmocka_unit_test(test_prefetched_bytes_read_at_l2_bandwidth),
        cmocka_unit_test(test_launch_overhead_added),
        cmocka_unit_test(test_allreduce_node_costs_its_algorithm),
        cmocka_unit_test(test_tiling_bound_raises_prefill_gemm_traffic),
        cmocka_unit_test(test_fused_one_chunk_equals_matmul_plus_allreduce),
        cmocka_unit_test(test_fused_chunked_pipeline_formula),
        cmocka_unit_test(test_fused_kernel_has_its_own_latency),
        cmocka_unit_test(test_fused_chunking_wins_for_large_gemms),
        cmocka_unit_test(test_fused_search_equals_trying_every_count),
        cmocka_unit_test(test_cost_non_finite_is_an_error),
        cmocka_unit_test(test_runtime_adds_step_launch_and_allreduce_overheads),
        cmocka_unit_test(test_attention_latency_and_strided_gate),
        cmocka_unit_test(test_attention_compute_at_its_own_efficiency),
        cmocka_unit_test(test_gemm_waves_knee_latency_and_dequant),
        cmocka_unit_test(test_moe_gemm_efficiency_slows_routed_experts_only),
        cmocka_unit_test(test_moe_gemm_compute_table_by_tokens_per_expert),
        cmocka_unit_test(test_paged_attention_slows_the_kv_reads_of_the_models_it_serves),
        cmocka_unit_test(test_paged_attention_of_block_sparse_layers_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
