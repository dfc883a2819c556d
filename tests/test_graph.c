/*
 * test_graph.c - Megatron sharding and the per-device decode/prefill graphs (DESIGN.md
 * section 3), checked node by node against bytes and flops worked out by hand; the JSON
 * round trip, the DOT printer and the graph reader's rejections.
 *
 * The hand scenario: hidden 1024, 8 heads, 2 KV heads, head_dim 128, intermediate 4096,
 * vocab 8192, gated MLP, 2 layers, int8 everywhere, p = 2 devices, batch 2. On one device:
 * q_loc = 4 query heads, kv_loc = 1 KV head, 2048 MLP columns, 4096 vocabulary rows.
 */
#include <stdlib.h>

#include "testutil.h"
#include "internal.h"

/* The step of s's batch at phase and context (pm_step_of), asserted valid. */
static pm_step pm_test_step(const pm_scenario *s, pm_phase phase, int64_t context)
{
    pm_step step;
    assert_int_equal(pm_step_of(s, phase, context, &step, NULL), PM_OK);
    return step;
}

/* Byte and flop counts are products of small integers, exact in a double: the only slack
 * needed is for the few operations the library may order differently (ulps). */
#define EXACT 1e-12


static pm_shard shard_of(const pm_scenario *s)
{
    pm_shard sh;
    pm_error err;
    pm_status st = pm_shard_compute(s, &sh, &err);
    if (st != PM_OK)
        fail_msg("pm_shard_compute: %s", err.message);
    return sh;
}

/* ---------------------------------------------------------------- sharding */

static void test_shard_llama_like_on_4_devices(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(4);
    s.model.heads = 64;
    s.model.kv_heads = 8;
    s.model.hidden = 8192;
    s.model.intermediate = 28672;
    s.model.vocab = 128256;
    pm_shard sh = shard_of(&s);
    assert_rel(sh.q_heads, 16.0, 0.0);  /* 64 / 4 */
    assert_rel(sh.kv_heads, 2.0, 0.0);  /* 8 / 4 */
    assert_false(sh.kv_replicated);
    assert_false(sh.uneven);
    assert_rel(sh.mlp_cols, 7168.0, 0.0);    /* 28672 / 4 */
    assert_rel(sh.vocab_cols, 32064.0, 0.0); /* 128256 / 4 */
}

static void test_shard_llama_like_on_16_devices_replicates_kv(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(16);
    s.model.heads = 64;
    s.model.kv_heads = 8;
    s.model.intermediate = 28672;
    pm_shard sh = shard_of(&s);
    assert_rel(sh.q_heads, 4.0, 0.0);  /* 64 / 16 */
    assert_rel(sh.kv_heads, 1.0, 0.0); /* 8 KV heads < 16 devices: one replicated head */
    assert_true(sh.kv_replicated);
    assert_false(sh.uneven);
    assert_rel(sh.mlp_cols, 1792.0, 0.0); /* 28672 / 16 */
}

static void test_shard_ten_kv_heads_on_4_devices_is_uneven(void **state)
{
    (void)state;
    /* Phi-3-medium: 40 heads, 10 KV heads, 4 devices: 10 query heads each, but the KV heads
     * split 3/3/2/2 and the busiest device holds 3. */
    pm_scenario s = pm_test_hand_scenario(4);
    s.model.heads = 40;
    s.model.kv_heads = 10;
    s.model.hidden = 5120;
    s.model.intermediate = 17920;
    pm_shard sh = shard_of(&s);
    assert_rel(sh.q_heads, 10.0, 0.0);
    assert_rel(sh.kv_heads, 3.0, 0.0);
    assert_false(sh.kv_replicated);
    assert_true(sh.uneven);
}

static void test_shard_devices_beyond_heads(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(16); /* 8 heads, 16 devices */
    pm_shard sh;
    pm_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(pm_shard_compute(&s, &sh, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "$.cluster.devices");
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 10, 0, g, NULL), PM_ERR_INCONSISTENT);
    /* Idealized sharding divides everything evenly with fractional heads. */
    s.options.sharding = PM_SHARDING_IDEAL;
    sh = shard_of(&s);
    assert_rel(sh.q_heads, 0.5, 0.0);    /* 8 / 16 */
    assert_rel(sh.kv_heads, 0.125, 0.0); /* 2 / 16 */
    assert_rel(sh.mlp_cols, 256.0, 0.0); /* 4096 / 16 */
    assert_rel(sh.vocab_cols, 512.0, 0.0);
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 10, 0, g, NULL), PM_OK);
    /* The QKV weights follow the fractional heads: 1024 * (0.5 + 2 * 0.125) * 128 bytes */
    assert_string_equal(g->nodes[2].name, "L0.QKV");
    assert_rel(g->nodes[2].weight_bytes, 1024.0 * 0.75 * 128.0, EXACT);
    /* 0.125 KV heads per device: no strided access */
    assert_false(g->nodes[4].kv_strided);
    pm_graph_free(g);
}

/* ---------------------------------------------------------------- decode graph */

static const char *const layer_names[] = {"norm1", "QKV", "RoPE", "Attention", "O", "AR.attn",
                                          "norm2", "Gate", "Up", "SiLUxMul", "Down", "AR.mlp"};
static const pm_node_kind layer_kinds[] = {
    PM_NODE_NORM, PM_NODE_MATMUL,    PM_NODE_ROPE,   PM_NODE_ATTENTION,
    PM_NODE_MATMUL, PM_NODE_ALLREDUCE, PM_NODE_NORM, PM_NODE_MATMUL,
    PM_NODE_MATMUL, PM_NODE_ELEMENTWISE, PM_NODE_MATMUL, PM_NODE_ALLREDUCE};

static void test_decode_graph_node_list(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 100, 0, g, NULL), PM_OK);
    /* Embedding + 2 layers x 12 + FinalNorm + LMHead = 27 nodes, a chain of 26 data edges */
    assert_int_equal(g->n_nodes, 27);
    assert_string_equal(g->nodes[0].name, "Embedding");
    assert_int_equal(g->nodes[0].kind, PM_NODE_EMBEDDING);
    for (int l = 0; l < 2; l++)
        for (int j = 0; j < 12; j++) {
            const pm_node *n = &g->nodes[1 + 12 * l + j];
            char want[32];
            snprintf(want, sizeof want, "L%d.%s", l, layer_names[j]);
            assert_string_equal(n->name, want);
            assert_int_equal(n->kind, layer_kinds[j]);
            assert_int_equal(n->layer, l);
        }
    assert_string_equal(g->nodes[25].name, "FinalNorm");
    assert_string_equal(g->nodes[26].name, "LMHead");
    assert_int_equal(g->nodes[26].kind, PM_NODE_MATMUL);
    assert_int_equal(g->n_edges, 26);
    for (size_t i = 0; i < g->n_nodes; i++) {
        assert_int_equal(g->nodes[i].stream, PM_STREAM_MAIN);
        assert_int_equal(g->nodes[i].prefetch, -1);
        assert_rel(g->nodes[i].l2_bytes, 0.0, 0.0);
    }
    for (size_t e = 0; e < g->n_edges; e++) {
        assert_int_equal(g->edges[e].from, (int)e);
        assert_int_equal(g->edges[e].to, (int)e + 1);
        assert_int_equal(g->edges[e].kind, PM_EDGE_DATA);
    }
    /* The layer count argument builds a prefix. */
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 100, 1, g, NULL), PM_OK);
    assert_int_equal(g->n_nodes, 15);
    pm_graph_free(g);
}

/* Sequence parallelism on 4 devices, batch 2 (padded to 4 rows, one per rank): each allreduce
 * becomes a reduce-scatter (int8: the hand scenario sets no wider reduction type) and the norms
 * after it run on one row;
 * an all-gather of the int8 activations precedes the QKV, the MLP and the LM head. */
static void test_sequence_parallel_graph_by_hand(void **state)
{
    (void)state;
    static const char *const names[] = {"norm1", "AG.attn", "QKV", "RoPE", "Attention", "O",
                                        "RS.attn", "norm2", "AG.mlp", "Gate", "Up", "SiLUxMul",
                                        "Down", "RS.mlp"};
    pm_scenario s = pm_test_hand_scenario(4);
    s.cluster.sequence_parallel = true;
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 100, 1, g, NULL), PM_OK);
    /* Embedding + 14 + FinalNorm + AG.head + LMHead */
    assert_int_equal(g->n_nodes, 18);
    for (int j = 0; j < 14; j++) {
        char want[32];
        snprintf(want, sizeof want, "L0.%s", names[j]);
        assert_string_equal(g->nodes[1 + j].name, want);
    }
    assert_string_equal(g->nodes[16].name, "AG.head");
    assert_int_equal(g->nodes[16].kind, PM_NODE_ALL_GATHER);
    assert_int_equal(g->nodes[16].role, PM_ROLE_HEAD_ALL_GATHER);
    assert_int_equal(g->nodes[7].kind, PM_NODE_REDUCE_SCATTER);
    assert_int_equal(g->nodes[7].role, PM_ROLE_ATTN_REDUCE_SCATTER);
    /* ceil(2 / 4) = 1 row per rank, 4 rows in all: 4 x 1024 x 1 B each. */
    assert_rel(g->nodes[2].comm_bytes, 4096.0, 0.0);
    assert_rel(g->nodes[7].comm_bytes, 4096.0, 0.0);
    assert_rel(g->nodes[16].comm_bytes, 4096.0, 0.0);
    /* A norm on one row: 5 x 1024 flop, 2 x 1024 bytes (was 2 rows). */
    assert_rel(g->nodes[1].flop, 5120.0, 0.0);
    assert_rel(g->nodes[8].act_bytes, 2048.0, 0.0);
    assert_rel(g->nodes[15].act_bytes, 2048.0, 0.0);
    /* The GEMMs still run on the step's 2 rows. */
    assert_rel(g->nodes[3].m, 2.0, 0.0);
    pm_graph_free(g);
}

/* The serial decode step with sequence parallelism, from the step without it by hand: the
 * same GEMMs and attention, each layer's two allreduces replaced by two reduce-scatters and two
 * all-gathers, the three norms of a 2-layer model halved, one more all-gather before the LM
 * head. On the full mesh of 4 (alpha 1e-5 s, B 1e11 B/s), auto:
 *   allreduce of 2 x 1024 x 1 B = 2048 B: oneshot alpha + n/B = 1e-5 + 2.048e-8
 *   reduce-scatter and all-gather of 4 padded rows, 4096 B: alpha + n/(pB) = 1e-5 + 1.024e-8
 *   a norm, memory-bound at 1e12 B/s: 4096 B -> 4.096e-9 s, on one row 2.048e-9 s. */
static void test_sequence_parallel_step_time_by_hand(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(4);
    double off = 0.0, on = 0.0;
    assert_int_equal(pm_decode_step_time(&s, PM_MODE_SERIAL, 300, &off, NULL), PM_OK);
    s.cluster.sequence_parallel = true;
    assert_int_equal(pm_decode_step_time(&s, PM_MODE_SERIAL, 300, &on, NULL), PM_OK);
    const double ar = 1e-5 + 2.048e-8, rs = 1e-5 + 1.024e-8, ag = rs;
    const double norm_saved = 4.096e-9 - 2.048e-9;
    const double delta = 2.0 * (2.0 * rs + 2.0 * ag - 2.0 * ar) + ag - 5.0 * norm_saved;
    /* Sums of a few dozen terms near 1e-5 s: rounding ~1e-20 s against a step of ~1e-4 s. */
    assert_rel(on, off + delta, 1e-12);
    /* The fused baseline fuses allreduces only: under sequence parallelism it is serial. */
    double fused = 0.0;
    assert_int_equal(pm_decode_step_time(&s, PM_MODE_FUSED, 300, &fused, NULL), PM_OK);
    assert_rel(fused, on, 1e-12);
}

static void test_decode_graph_bytes_and_flops(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    pm_graph *g = pm_graph_alloc();
    const double b = 2, ctx = 100, h = 1024, d = 128, q = 4, kv = 1, I = 2048, V = 4096;
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, (int64_t)ctx, 0, g, NULL), PM_OK);
    const pm_node *qkv = &g->nodes[2], *att = &g->nodes[4], *o = &g->nodes[5],
                  *ar1 = &g->nodes[6], *gate = &g->nodes[8], *up = &g->nodes[9],
                  *down = &g->nodes[11], *ar2 = &g->nodes[12], *head = &g->nodes[26];
    /* QKV: hidden * (q + 2 kv) * head_dim * 1 byte = 1024 * 6 * 128 = 786432 bytes */
    assert_rel(qkv->weight_bytes, 786432.0, EXACT);
    assert_rel(qkv->weight_bytes, h * (q + 2 * kv) * d, EXACT);
    /* 2 m k n = 2 * 2 * 1024 * 768 = 3145728 flop; GEMM shape m=b, k=hidden, n=768 */
    assert_rel(qkv->flop, 3145728.0, EXACT);
    assert_rel(qkv->m, b, 0.0);
    assert_rel(qkv->k, h, 0.0);
    assert_rel(qkv->n, (q + 2 * kv) * d, 0.0);
    assert_rel(qkv->kv_bytes, 0.0, 0.0);
    /* Attention reads K and V: 2 * b * ctx * kv * d * 1 byte = 2 * 2 * 100 * 1 * 128 = 51200 */
    assert_rel(att->kv_bytes, 51200.0, EXACT);
    assert_rel(att->weight_bytes, 0.0, 0.0);
    assert_false(att->kv_strided); /* one KV head per device: contiguous */
    /* QK^T and PV: 4 flop per query head, cached position and head-dim element
     * (4 * 2 * 4 * 100 * 128 = 409600), plus the softmax's 5 flop per score
     * (5 * 2 * 4 * 100 = 4000): 413600. */
    assert_rel(att->flop, 4 * b * q * ctx * d + 5 * b * q * ctx, EXACT);
    assert_rel(att->flop, 413600.0, EXACT);
    /* O: (q * d) x hidden = 512 * 1024 = 524288 bytes */
    assert_rel(o->weight_bytes, 524288.0, EXACT);
    assert_rel(o->flop, 2 * b * 512 * 1024, EXACT);
    /* Gate, Up, Down: hidden x intermediate/p = 1024 * 2048 = 2097152 bytes each */
    assert_rel(gate->weight_bytes, 2097152.0, EXACT);
    assert_rel(up->weight_bytes, 2097152.0, EXACT);
    assert_rel(down->weight_bytes, h * I, EXACT);
    assert_rel(down->k, I, 0.0);
    assert_rel(down->n, h, 0.0);
    /* Allreduce message: b * hidden * act_bytes = 2 * 1024 * 1 = 2048 bytes */
    assert_rel(ar1->comm_bytes, 2048.0, EXACT);
    assert_rel(ar2->comm_bytes, 2048.0, EXACT);
    /* LM head: vocab/p * hidden = 4096 * 1024 = 4194304 bytes */
    assert_rel(head->weight_bytes, V * h, EXACT);
    assert_rel(head->weight_bytes, 4194304.0, EXACT);
    assert_rel(head->flop, 2 * b * h * V, EXACT);
    pm_graph_free(g);
}

static void test_decode_graph_strided_kv_with_two_heads(void **state)
{
    (void)state;
    /* One device holds both KV heads: its KV reads are strided. */
    pm_scenario s = pm_test_hand_scenario(1);
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 100, 0, g, NULL), PM_OK);
    const pm_node *att = &g->nodes[4];
    assert_string_equal(att->name, "L0.Attention");
    assert_true(att->kv_strided);
    /* 2 * b * ctx * kv * d = 2 * 2 * 100 * 2 * 128 = 102400 */
    assert_rel(att->kv_bytes, 102400.0, EXACT);
    pm_graph_free(g);
}

static void test_no_allreduce_on_one_device(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(1);
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 100, 0, g, NULL), PM_OK);
    /* 27 nodes minus the 4 allreduces */
    assert_int_equal(g->n_nodes, 23);
    for (size_t i = 0; i < g->n_nodes; i++) {
        assert_int_not_equal(g->nodes[i].kind, PM_NODE_ALLREDUCE);
        assert_int_not_equal(g->nodes[i].kind, PM_NODE_FUSED_MATMUL_ALLREDUCE);
    }
    /* The fused variant has nothing to fuse either. */
    const pm_step step = pm_test_step(&s, PM_PHASE_DECODE, 100);
    assert_int_equal(pm_graph_build_ex(&s, &step, 0, true, g, NULL), PM_OK);
    assert_int_equal(g->n_nodes, 23);
    for (size_t i = 0; i < g->n_nodes; i++)
        assert_int_not_equal(g->nodes[i].kind, PM_NODE_FUSED_MATMUL_ALLREDUCE);
    pm_graph_free(g);
}

static void test_fused_graph_replaces_o_and_down(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    pm_graph *g = pm_graph_alloc();
    const pm_step step = pm_test_step(&s, PM_PHASE_DECODE, 100);
    assert_int_equal(pm_graph_build_ex(&s, &step, 0, true, g, NULL), PM_OK);
    /* Each layer loses its two separate allreduces: 1 + 2 * 10 + 2 = 23 nodes */
    assert_int_equal(g->n_nodes, 23);
    int fused = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *n = &g->nodes[i];
        assert_int_not_equal(n->kind, PM_NODE_ALLREDUCE);
        if (n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE) {
            fused++;
            assert_rel(n->comm_bytes, 2048.0, EXACT);
        }
    }
    assert_int_equal(fused, 4);
    pm_graph_free(g);
}

/* The allreduce payload: batch 2 x hidden 1024 x 1 byte (int8 activations) = 2048 bytes; with
 * "allreduce_dtype": "fp16" (W8A8: partial sums dequantised before the sum) 4096 bytes, in
 * the plain allreduces and in the fused nodes alike; the activations' own traffic unchanged. */
static void test_allreduce_dtype_sets_the_payload(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    s.workload.allreduce_dtype_given = true;
    s.workload.allreduce_dtype = PM_DTYPE_FP16;
    for (int fused = 0; fused < 2; fused++) {
        pm_graph *g = pm_graph_alloc();
        const pm_step step = pm_test_step(&s, PM_PHASE_DECODE, 100);
        assert_int_equal(pm_graph_build_ex(&s, &step, 0, fused, g, NULL), PM_OK);
        int n_ar = 0;
        for (size_t i = 0; i < g->n_nodes; i++) {
            const pm_node *n = &g->nodes[i];
            if (n->kind == PM_NODE_ALLREDUCE || n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE) {
                assert_rel(n->comm_bytes, 4096.0, EXACT);
                n_ar++;
            }
            if (n->kind == PM_NODE_ALLREDUCE)
                assert_int_equal(n->dtype, PM_DTYPE_FP16);
        }
        assert_int_equal(n_ar, 4);
        pm_graph_free(g);
    }
}

static void test_prefill_graph(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    pm_graph *g = pm_graph_alloc();
    const double b = 2, sp = 64, h = 1024, d = 128, q = 4;
    assert_int_equal(pm_graph_build(&s, PM_PHASE_PREFILL, (int64_t)sp, 0, g, NULL), PM_OK);
    assert_int_equal(g->n_nodes, 27);
    const pm_node *qkv = &g->nodes[2], *att = &g->nodes[4], *ar = &g->nodes[6],
                  *head = &g->nodes[26];
    /* m = b * s_prefill = 128 rows */
    assert_rel(qkv->m, b * sp, 0.0);
    assert_rel(qkv->flop, 2 * 128.0 * 1024 * 768, EXACT);
    /* weights are read once, whatever m */
    assert_rel(qkv->weight_bytes, 786432.0, EXACT);
    /* Causal attention: half the s x s scores of full attention.
     * Full: 4 b q s^2 d + 5 b q s^2 = 4*2*4*4096*128 + 5*2*4*4096 = 16777216 + 163840;
     * causal: half, 8470528 flop. */
    assert_rel(att->flop, 0.5 * (4 * b * q * sp * sp * d + 5 * b * q * sp * sp), EXACT);
    assert_rel(att->flop, 8470528.0, EXACT);
    /* the prompt's own K and V are not a cache read */
    assert_rel(att->kv_bytes, 0.0, 0.0);
    /* allreduce of b * s_prefill * hidden activations: 2 * 64 * 1024 = 131072 bytes */
    assert_rel(ar->comm_bytes, b * sp * h, EXACT);
    /* The LM head computes logits for the last position only: m = b */
    assert_rel(head->m, b, 0.0);
    assert_rel(head->flop, 2 * b * h * 4096, EXACT);
    pm_graph_free(g);
}

static void test_build_rejects_bad_arguments(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(NULL, PM_PHASE_DECODE, 10, 0, g, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 10, 0, NULL, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_graph_build(&s, (pm_phase)7, 10, 0, g, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_graph_build(&s, PM_PHASE_PREFILL, 0, 0, g, NULL), PM_ERR_RANGE);
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, -1, 0, g, NULL), PM_ERR_RANGE);
    pm_graph_free(g);
}

/* ---------------------------------------------------------------- JSON and DOT */

static void assert_same_graph(const pm_graph *a, const pm_graph *b)
{
    assert_int_equal(a->n_nodes, b->n_nodes);
    assert_int_equal(a->n_edges, b->n_edges);
    for (size_t i = 0; i < a->n_nodes; i++) {
        const pm_node *x = &a->nodes[i], *y = &b->nodes[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->layer, y->layer);
        assert_int_equal(x->stream, y->stream);
        assert_int_equal(x->dtype, y->dtype);
        /* cJSON prints numbers with 17 significant digits: they read back exactly */
        assert_rel(y->flop, x->flop, 0.0);
        assert_rel(y->act_bytes, x->act_bytes, 0.0);
        assert_rel(y->weight_bytes, x->weight_bytes, 0.0);
        assert_rel(y->kv_bytes, x->kv_bytes, 0.0);
        assert_int_equal(x->kv_strided, y->kv_strided);
        assert_rel(y->l2_bytes, x->l2_bytes, 0.0);
        assert_rel(y->comm_bytes, x->comm_bytes, 0.0);
        assert_rel(y->m, x->m, 0.0);
        assert_rel(y->k, x->k, 0.0);
        assert_rel(y->n, x->n, 0.0);
        assert_int_equal(x->prefetch, y->prefetch);
        assert_int_equal(x->consumer, y->consumer);
        assert_int_equal(x->trigger, y->trigger);
        assert_rel(y->window_bytes, x->window_bytes, 0.0);
        assert_int_equal(x->overflow, y->overflow);
    }
    for (size_t e = 0; e < a->n_edges; e++) {
        assert_int_equal(a->edges[e].from, b->edges[e].from);
        assert_int_equal(a->edges[e].to, b->edges[e].to);
        assert_int_equal(a->edges[e].kind, b->edges[e].kind);
    }
}

static void test_json_round_trip(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    pm_graph *g = pm_graph_alloc(), *ins = pm_graph_alloc(), *back = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 100, 0, g, NULL), PM_OK);
    /* With prefetch nodes, so that streams, triggers, consumers and windows travel too. */
    assert_int_equal(pm_insert_prefetch(g, 2.0 * 1048576.0, ins, NULL), PM_OK);
    assert_true(ins->n_nodes > g->n_nodes);
    char *text = NULL;
    pm_error err;
    assert_int_equal(pm_graph_to_json(ins, &text, &err), PM_OK);
    assert_non_null(text);
    pm_status st = pm_graph_from_json(text, strlen(text), "mem.json", back, &err);
    if (st != PM_OK)
        fail_msg("pm_graph_from_json: %s: %s", err.path, err.message);
    assert_same_graph(ins, back);
    free(text);
    /* and the plain graph, including the prefill GEMM shapes */
    assert_int_equal(pm_graph_build(&s, PM_PHASE_PREFILL, 64, 0, g, NULL), PM_OK);
    assert_int_equal(pm_graph_to_json(g, &text, NULL), PM_OK);
    assert_int_equal(pm_graph_from_json(text, strlen(text), NULL, back, NULL), PM_OK);
    assert_same_graph(g, back);
    free(text);
    pm_graph_free(g);
    pm_graph_free(ins);
    pm_graph_free(back);
}

/* cJSON prints 15 digits when they come within a relative epsilon of the value, which loses
 * the last bit of numbers like these (found by fuzz/fuzz_graph.c): the graph's JSON must carry
 * every double exactly. */
static void test_json_round_trip_is_exact_to_the_bit(void **state)
{
    (void)state;
    static const double values[] = {6.288888888888889e+50, 0.1, 1.0 / 3.0, 5e-324,
                                    1.7976931348623157e308, 123456789012345678.0};
    pm_graph *g = pm_graph_alloc(), *back = pm_graph_alloc();
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        pm_node n = {0};
        n.kind = PM_NODE_MATMUL;
        snprintf(n.name, sizeof n.name, "N%zu", i);
        n.prefetch = n.consumer = n.trigger = n.overflow = -1;
        n.flop = values[i];
        n.weight_bytes = values[i];
        n.act_bytes = values[i];
        n.m = values[i];
        n.k = 1.0 + values[i];
        n.n = 2.0;
        assert_int_equal(pm_graph_add_node(g, &n, NULL), PM_OK);
    }
    char *text = NULL;
    pm_error err;
    assert_int_equal(pm_graph_to_json(g, &text, &err), PM_OK);
    pm_status st = pm_graph_from_json(text, strlen(text), "mem.json", back, &err);
    if (st != PM_OK)
        fail_msg("pm_graph_from_json: %s: %s\n%s", err.path, err.message, text);
    assert_int_equal(back->n_nodes, g->n_nodes);
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *a = &g->nodes[i], *b = &back->nodes[i];
        if (memcmp(&a->flop, &b->flop, sizeof a->flop) != 0 ||
            memcmp(&a->weight_bytes, &b->weight_bytes, sizeof a->weight_bytes) != 0 ||
            memcmp(&a->act_bytes, &b->act_bytes, sizeof a->act_bytes) != 0 ||
            memcmp(&a->m, &b->m, sizeof a->m) != 0 || memcmp(&a->k, &b->k, sizeof a->k) != 0)
            fail_msg("node %zu: wrote %.17g, read back %.17g", i, a->weight_bytes,
                     b->weight_bytes);
    }
    free(text);
    pm_graph_free(g);
    pm_graph_free(back);
}

static void test_dot_contains_nodes(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    pm_graph *g = pm_graph_alloc(), *ins = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 100, 0, g, NULL), PM_OK);
    assert_int_equal(pm_insert_prefetch(g, 2.0 * 1048576.0, ins, NULL), PM_OK);
    char *dot = NULL;
    assert_int_equal(pm_graph_to_dot(ins, &dot, NULL), PM_OK);
    assert_non_null(strstr(dot, "digraph"));
    for (size_t i = 0; i < ins->n_nodes; i++)
        assert_non_null(strstr(dot, ins->nodes[i].name));
    assert_non_null(strstr(dot, "n0 -> n1"));
    assert_non_null(strstr(dot, "dashed")); /* trigger edges */
    free(dot);
    pm_graph_free(g);
    pm_graph_free(ins);
}

/* A name with a quote, a backslash and a line break stays inside its DOT label. */
static void test_dot_escapes_labels(void **state)
{
    (void)state;
    pm_graph *g = pm_graph_alloc();
    pm_node n = {.kind = PM_NODE_MATMUL, .layer = 0, .prefetch = -1, .consumer = -1,
                 .trigger = -1, .overflow = -1, .weight_bytes = 1048576.0};
    strcpy(n.name, "a\"b\\l\nc\x01");
    assert_int_equal(pm_graph_add_node(g, &n, NULL), PM_OK);
    char *dot = NULL;
    assert_int_equal(pm_graph_to_dot(g, &dot, NULL), PM_OK);
    assert_non_null(strstr(dot, "[label=\"a\\\"b\\\\l\\nc\\nMatMul 1.00 MiB\"]"));
    /* Outside the escapes, every quote of the label line is one of its two delimiters. */
    const char *line = strstr(dot, "  n0 [");
    int quotes = 0;
    for (const char *q = line; *q && *q != '\n'; q++)
        quotes += *q == '"' && q[-1] != '\\';
    assert_int_equal(quotes, 2);
    free(dot);
    pm_graph_free(g);
}

static void expect_reject(const char *text, pm_status want, const char *path_prefix)
{
    pm_graph *g = pm_graph_alloc();
    pm_error err;
    memset(&err, 0, sizeof err);
    pm_status st = pm_graph_from_json(text, strlen(text), "bad.json", g, &err);
    if (st != want)
        fail_msg("expected %s, got %s (%s: %s)", pm_status_name(want), pm_status_name(st),
                 err.path, err.message);
    assert_int_equal(err.status, want);
    assert_string_equal(err.file, "bad.json");
    if (strncmp(err.path, path_prefix, strlen(path_prefix)) != 0)
        fail_msg("path \"%s\" does not start with \"%s\"", err.path, path_prefix);
    assert_int_equal(g->n_nodes, 0); /* a rejected graph is left empty */
    pm_graph_free(g);
}

static void test_from_json_rejects_bad_graphs(void **state)
{
    (void)state;
    /* a prefetch with no trigger */
    expect_reject("{\"kind\":\"graph\",\"nodes\":["
                  "{\"name\":\"AR\",\"op\":\"AllReduce\",\"comm_bytes\":10},"
                  "{\"name\":\"PF\",\"op\":\"Prefetch\",\"stream\":\"prefetch\","
                  "\"weight_bytes\":5,\"consumer\":2},"
                  "{\"name\":\"W\",\"op\":\"MatMul\",\"weight_bytes\":5,\"prefetch\":1}],"
                  "\"edges\":[{\"from\":0,\"to\":2}]}",
                  PM_ERR_INCONSISTENT, "$.nodes[1]");
    /* a prefetch triggered by a node that is no collective (the scheduler would refuse it;
     * the fuzzer found a graph that loaded and then did not schedule) */
    expect_reject("{\"kind\":\"graph\",\"nodes\":["
                  "{\"name\":\"E\",\"op\":\"MatMul\",\"weight_bytes\":10},"
                  "{\"name\":\"PF\",\"op\":\"Prefetch\",\"stream\":\"prefetch\","
                  "\"weight_bytes\":5,\"consumer\":2,\"trigger\":0},"
                  "{\"name\":\"W\",\"op\":\"MatMul\",\"weight_bytes\":5,\"prefetch\":1}],"
                  "\"edges\":[{\"from\":0,\"to\":2}]}",
                  PM_ERR_INCONSISTENT, "$.nodes[1].trigger");
    /* an unknown op */
    expect_reject("{\"kind\":\"graph\",\"nodes\":[{\"name\":\"X\",\"op\":\"Conv2D\"}]}",
                  PM_ERR_VALUE, "$.nodes[0]");
    /* an unknown key in a node */
    expect_reject("{\"kind\":\"graph\",\"nodes\":[{\"name\":\"X\",\"op\":\"MatMul\","
                  "\"weigth_bytes\":3}]}",
                  PM_ERR_UNKNOWN_KEY, "$.nodes[0]");
    /* a data edge going backwards */
    expect_reject("{\"kind\":\"graph\",\"nodes\":[{\"name\":\"A\",\"op\":\"MatMul\"},"
                  "{\"name\":\"B\",\"op\":\"MatMul\"}],\"edges\":[{\"from\":1,\"to\":0}]}",
                  PM_ERR_INCONSISTENT, "$.edges[0]");
    /* an edge to a node that does not exist */
    expect_reject("{\"kind\":\"graph\",\"nodes\":[{\"name\":\"A\",\"op\":\"MatMul\"}],"
                  "\"edges\":[{\"from\":0,\"to\":5}]}",
                  PM_ERR_RANGE, "$.edges[0]");
    /* no nodes */
    expect_reject("{\"kind\":\"graph\"}", PM_ERR_MISSING, "$.nodes");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shard_llama_like_on_4_devices),
        cmocka_unit_test(test_shard_llama_like_on_16_devices_replicates_kv),
        cmocka_unit_test(test_shard_ten_kv_heads_on_4_devices_is_uneven),
        cmocka_unit_test(test_shard_devices_beyond_heads),
        cmocka_unit_test(test_decode_graph_node_list),
        cmocka_unit_test(test_decode_graph_bytes_and_flops),
        cmocka_unit_test(test_sequence_parallel_graph_by_hand),
        cmocka_unit_test(test_sequence_parallel_step_time_by_hand),
        cmocka_unit_test(test_decode_graph_strided_kv_with_two_heads),
        cmocka_unit_test(test_no_allreduce_on_one_device),
        cmocka_unit_test(test_fused_graph_replaces_o_and_down),
        cmocka_unit_test(test_allreduce_dtype_sets_the_payload),
        cmocka_unit_test(test_prefill_graph),
        cmocka_unit_test(test_build_rejects_bad_arguments),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_round_trip_is_exact_to_the_bit),
        cmocka_unit_test(test_dot_contains_nodes),
        cmocka_unit_test(test_dot_escapes_labels),
        cmocka_unit_test(test_from_json_rejects_bad_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
