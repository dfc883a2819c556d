/*
 * test_architectures.c - the dense architectures beyond Llama (issue 14), each against numbers
 * worked out by hand in the test: multi-query attention and the KV-head keys of each family,
 * parallel attention and MLP blocks (one allreduce per layer, Algorithm 1's window across both
 * branches), biases, the vocabulary-parallel embedding, attention windows per layer class; and
 * the real config.json files, which either load with those numbers or are refused naming the
 * key that is not modelled.
 *
 * The hand scenario is test_graph.c's: hidden 1024, 8 heads, 2 KV heads, head_dim 128,
 * intermediate 4096, vocab 8192, gated MLP, 2 layers, int8 everywhere, batch 2; on each of
 * p = 2 devices 4 query heads, 1 KV head, 2048 MLP columns, 4096 vocabulary rows.
 */
#include <stdlib.h>

#include "internal.h"
#include "testutil.h"

#define HF_DIR PM_TEST_CONFIG_DIR "/hf"

/* Byte and flop counts are products of small integers, exact in a double. */
#define EXACT 1e-12

static const pm_load_opts g_opts = {PM_TEST_DATA_DIR, NULL, 0};

/* The hand scenario with 64 MiB of L2. */
static pm_scenario hand_scenario(int devices)
{
    pm_scenario s = pm_test_hand_scenario(devices);
    s.accel.l2_capacity_bytes = 64.0 * 1048576.0;
    return s;
}

static pm_graph *build(const pm_scenario *s, int64_t ctx)
{
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    pm_error err;
    pm_status st = pm_graph_build(s, PM_PHASE_DECODE, ctx, 0, g, &err);
    if (st != PM_OK)
        fail_msg("pm_graph_build: %s", err.message);
    return g;
}

static int count_kind(const pm_graph *g, pm_node_kind kind)
{
    int n = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        n += g->nodes[i].kind == kind;
    return n;
}

static const pm_node *find_role(const pm_graph *g, int layer, pm_node_role role)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].layer == layer && g->nodes[i].role == role)
            return &g->nodes[i];
    fail_msg("no node of role %s in layer %d", pm_node_role_name(role), layer);
    return NULL;
}

/* The estimate's decode time in each mode against the sum of every decode step, one by one. */
static void check_decode_sum_is_every_step(const pm_scenario *s, const pm_estimate *e)
{
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        pm_step_model *sm;
        assert_int_equal(pm_step_model_new(s, (pm_mode)m, &sm, NULL), PM_OK);
        double sum = 0.0;
        for (int64_t c = e->prefill_tokens; c < s->workload.seq_len; c++)
            sum += pm_step_model_decode_time(sm, c);
        pm_step_model_free(sm);
        assert_rel(e->modes[m].decode_s, sum, 1e-12);
    }
}

/* ---------------------------------------------------------------- parallel blocks */

static void test_parallel_block_has_one_allreduce_per_layer(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario(2);
    s.model.parallel_block = true;
    pm_graph *g = build(&s, 100);
    /* Per layer: norm, QKV, RoPE, Attention, O, Gate, Up, SiLUxMul, Down, AllReduce = 10;
     * plus the embedding, the final norm and the LM head. */
    assert_int_equal(g->n_nodes, 1 + 2 * 10 + 2);
    assert_int_equal(count_kind(g, PM_NODE_ALLREDUCE), 2);
    assert_int_equal(count_kind(g, PM_NODE_NORM), 2 + 1);
    for (int l = 0; l < 2; l++) {
        const pm_node *ar = find_role(g, l, PM_ROLE_MLP_ALLREDUCE);
        assert_rel(ar->comm_bytes, 2.0 * 1024, 0.0); /* batch x hidden x 1 byte */
        /* The allreduce follows Down and sums both branches: O is a plain MatMul. */
        const pm_node *o = find_role(g, l, PM_ROLE_O);
        assert_int_equal(o->kind, PM_NODE_MATMUL);
        assert_rel(o->weight_bytes, 4.0 * 128 * 1024, 0.0);
    }
    pm_graph_free(g);
    /* The sequential layer has two. */
    s.model.parallel_block = false;
    g = build(&s, 100);
    assert_int_equal(count_kind(g, PM_NODE_ALLREDUCE), 4);
    pm_graph_free(g);
}

static void test_parallel_block_window_spans_both_branches(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario(2);
    s.model.parallel_block = true;
    pm_graph *g = build(&s, 100), *ins = pm_graph_alloc();
    assert_int_equal(pm_insert_prefetch(g, 64.0 * 1048576.0, ins, NULL), PM_OK);
    /* Under layer 0's allreduce: layer 1's QKV (1024 x 768), Attention (2 x 100 x 1 x 128 x 2
     * = 51,200 KV bytes), O (512 x 1024), Gate, Up (1024 x 2048 each), Down (2048 x 1024);
     * under layer 1's: the LM head (1024 x 4096). 7 prefetches, all below 64 MiB. */
    int pf_layer1 = 0, pf_head = 0;
    for (size_t i = 0; i < ins->n_nodes; i++) {
        const pm_node *n = &ins->nodes[i];
        if (n->kind != PM_NODE_PREFETCH)
            continue;
        const pm_node *c = &ins->nodes[n->consumer];
        pf_layer1 += c->layer == 1;
        pf_head += c->role == PM_ROLE_LM_HEAD;
    }
    assert_int_equal(pf_layer1, 6);
    assert_int_equal(pf_head, 1);
    const pm_node *ar0 = find_role(ins, 0, PM_ROLE_MLP_ALLREDUCE);
    const double window = 1024.0 * 768 + 51200 + 512.0 * 1024 + 3.0 * 1024 * 2048;
    assert_rel(ar0->window_bytes, window, EXACT);
    pm_graph_free(ins);
    pm_graph_free(g);
}

static void test_parallel_block_fast_path_matches_graph_path(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario(2);
    s.model.parallel_block = true;
    s.model.layers = 5;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double fast, ref;
        assert_int_equal(pm_decode_step_time(&s, (pm_mode)m, 300, &fast, NULL), PM_OK);
        assert_int_equal(pm_step_time_graph(&s, (pm_mode)m, PM_PHASE_DECODE, 300, &ref, NULL,
                                            NULL),
                         PM_OK);
        assert_rel(fast, ref, 1e-12);
    }
}

/* ---------------------------------------------------------------- biases */

static void test_biases_add_one_element_per_output_column(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario(2);
    s.workload.act_dtype = PM_DTYPE_FP16; /* biases are in the activations' type: 2 bytes */
    s.accel.peak_flop_per_s[PM_DTYPE_FP16] = 1e15;
    pm_graph *g = build(&s, 100);
    const double qkv_plain = find_role(g, 0, PM_ROLE_QKV)->weight_bytes;
    const double qkv_flop = find_role(g, 0, PM_ROLE_QKV)->flop;
    pm_graph_free(g);
    s.model.qkv_bias = s.model.o_bias = s.model.mlp_bias = true;
    g = build(&s, 100);
    /* QKV: (4 + 2) heads x 128 = 768 columns; O and Down: 1024 (whole on each device); Gate
     * and Up: 2048 columns each. */
    assert_rel(find_role(g, 0, PM_ROLE_QKV)->weight_bytes, qkv_plain + 768.0 * 2, 0.0);
    assert_rel(find_role(g, 0, PM_ROLE_QKV)->flop, qkv_flop + 2.0 * 768, 0.0);
    assert_rel(find_role(g, 0, PM_ROLE_O)->weight_bytes, 512.0 * 1024 + 1024.0 * 2, 0.0);
    assert_rel(find_role(g, 0, PM_ROLE_GATE)->weight_bytes, 1024.0 * 2048 + 2048.0 * 2, 0.0);
    assert_rel(find_role(g, 0, PM_ROLE_UP)->weight_bytes, 1024.0 * 2048 + 2048.0 * 2, 0.0);
    assert_rel(find_role(g, 0, PM_ROLE_DOWN)->weight_bytes, 2048.0 * 1024 + 1024.0 * 2, 0.0);
    pm_graph_free(g);
    /* The footprint holds the same bytes. */
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 0, &f, NULL), PM_OK);
    const double attn = 1024.0 * 768 + 768 * 2 + 512.0 * 1024 + 1024 * 2;
    const double mlp = 3.0 * 1024 * 2048 + (2.0 * 2048 + 1024) * 2;
    assert_rel(f.attn_weight_bytes, attn, 0.0);
    assert_rel(f.mlp_weight_bytes, mlp, 0.0);
}

/* ---------------------------------------------------------------- embedding */

static void test_embedding_is_vocabulary_parallel(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario(2);
    s.model.tied_embeddings = false;
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 0, &f, NULL), PM_OK);
    /* 8192 rows over 2 devices: 4096 x 1024 bytes each, like the LM head. */
    assert_rel(f.embedding_bytes, 4096.0 * 1024, 0.0);
    assert_rel(f.lm_head_bytes, 4096.0 * 1024, 0.0);
    s.model.tied_embeddings = true;
    assert_int_equal(pm_footprint_compute(&s, NULL, 0, &f, NULL), PM_OK);
    assert_rel(f.embedding_bytes, 0.0, 0.0);
}

/* ---------------------------------------------------------------- windows */

/* The hand model with 4 layers and a 64-token window on layers 0 and 2 (period 2, Gemma-2's
 * alternation). */
static pm_scenario windowed(int layers, int window, int period, uint64_t mask)
{
    pm_scenario s = hand_scenario(2);
    s.model.layers = layers;
    s.model.sliding_window = window;
    s.model.window_period = period;
    s.model.local_mask = mask;
    return s;
}

static void test_window_caps_the_kv_read_of_local_layers(void **state)
{
    (void)state;
    pm_scenario s = windowed(4, 64, 2, 0x1);
    assert_true(pm_model_layer_is_local(&s.model, 0));
    assert_false(pm_model_layer_is_local(&s.model, 1));
    assert_true(pm_model_layer_is_local(&s.model, 2));
    assert_int_equal(pm_model_local_layers(&s.model), 2);
    pm_graph *g = build(&s, 100);
    /* Decode at context 100, batch 2, one KV head of 128 per device, int8: a global layer
     * reads 2 x 2 x 100 x 128 = 51,200 bytes, a local one 2 x 2 x 64 x 128 = 32,768. */
    for (int l = 0; l < 4; l++) {
        const pm_node *a = find_role(g, l, PM_ROLE_ATTENTION);
        const double c = l % 2 == 0 ? 64.0 : 100.0;
        assert_rel(a->kv_bytes, 2.0 * 2 * c * 128, 0.0);
        assert_rel(a->flop, 4.0 * 2 * 4 * c * 128 + 5.0 * 2 * 4 * c, 0.0);
    }
    pm_graph_free(g);
    /* Below the window both classes read the whole context. */
    g = build(&s, 50);
    assert_rel(find_role(g, 0, PM_ROLE_ATTENTION)->kv_bytes, 2.0 * 2 * 50 * 128, 0.0);
    pm_graph_free(g);
}

static void test_window_bounds_prefill_attention_pairs(void **state)
{
    (void)state;
    pm_scenario s = windowed(2, 64, 2, 0x1);
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_PREFILL, 300, 0, g, NULL), PM_OK);
    /* 300 prompt tokens: 300^2 / 2 = 45,000 query-key pairs in the global layer; with the
     * window 64^2 / 2 + (300 - 64) x 64 = 2,048 + 15,104 = 17,152 in the local one. */
    const double global = 45000.0, local = 17152.0;
    assert_rel(find_role(g, 0, PM_ROLE_ATTENTION)->flop,
               4.0 * 2 * 4 * local * 128 + 5.0 * 2 * 4 * local, 0.0);
    assert_rel(find_role(g, 1, PM_ROLE_ATTENTION)->flop,
               4.0 * 2 * 4 * global * 128 + 5.0 * 2 * 4 * global, 0.0);
    pm_graph_free(g);
}

static void test_footprint_holds_the_window_in_local_layers(void **state)
{
    (void)state;
    pm_scenario s = windowed(4, 64, 2, 0x1);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 1000, &f, NULL), PM_OK);
    assert_int_equal(f.local_layers, 2);
    assert_rel(f.kv_bytes_per_token, 2.0 * 2 * 128, 0.0);
    assert_rel(f.kv_bytes_global_layer, 512.0 * 1000, 0.0);
    assert_rel(f.kv_bytes_local_layer, 512.0 * 64, 0.0);
    assert_rel(f.kv_bytes, 2 * 512.0 * 1000 + 2 * 512.0 * 64, 0.0);
    /* Every layer local (Mistral): the cache stops growing at the window. */
    s.model.local_mask = 0;
    assert_int_equal(pm_footprint_compute(&s, NULL, 1000, &f, NULL), PM_OK);
    assert_int_equal(f.local_layers, 4);
    assert_rel(f.kv_bytes, 4 * 512.0 * 64, 0.0);
}

/* The fast path (one template, a period per class) against the graph of every layer. */
static void check_fast_matches_graph(const pm_scenario *s, const int64_t *ctxs, size_t n)
{
    pm_test_fast_matches_graph(s, ctxs, n);
}

/* Window patterns: alternating, 2 of 3 local, every layer local; sequential and parallel
 * blocks. */
typedef struct window_case {
    int layers, period;
    uint64_t mask;
    bool parallel;
} window_case;
static const window_case window_cases[] = {{5, 2, 0x1, false}, {7, 3, 0x3, false},
                                           {4, 1, 0x1, false}, {6, 2, 0x2, true},
                                           {5, 6, 0x1f, false}};

static void test_window_patterns_fast_path_matches_graph_path(void **state)
{
    (void)state;
    static const int64_t ctxs[] = {0, 30, 63, 64, 65, 300, 5000};
    /* Small L2 (the KV stops fitting at some contexts) and large; alternating, 2 of 3 local,
     * every layer local; sequential and parallel blocks. */
    const window_case *cases = window_cases;
    for (size_t c = 0; c < PM_ARRAY_LEN(window_cases); c++)
        for (int big = 0; big < 2; big++) {
            pm_scenario s = windowed(cases[c].layers, 64, cases[c].period, cases[c].mask);
            s.model.parallel_block = cases[c].parallel;
            s.accel.l2_capacity_bytes = big ? 64.0 * 1048576.0 : 1.5 * 1048576.0;
            check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
        }
}

static void test_window_estimate_sums_every_decode_step(void **state)
{
    (void)state;
    /* The decode sum is split at the window (linear on each side): it must equal the sum of
     * every step, 300 of them here, with the window (200) inside the decode range. */
    pm_scenario s = windowed(5, 200, 2, 0x1);
    s.accel.l2_capacity_bytes = 2.5 * 1048576.0;
    pm_estimate e;
    pm_error err;
    assert_int_equal(pm_estimate_compute(&s, &e, &err), PM_OK);
    check_decode_sum_is_every_step(&s, &e);
}

static void test_window_closed_form_sums_match_graph_path(void **state)
{
    (void)state;
    /* The closed-form serial and fused sums against the graph path's steps, with the window
     * (200) inside the decode range 300..599 and beyond it (the window 64 below the prompt),
     * and with chunked attention (chunks of 64: the sum restarts at each), over the patterns of
     * test_window_patterns_fast_path_matches_graph_path, small and large L2. */
    const window_case *cases = window_cases;
    static const int windows[] = {200, 64, 400};
    double worst = 0.0;
    for (size_t c = 0; c < PM_ARRAY_LEN(window_cases); c++)
        for (size_t wi = 0; wi < PM_ARRAY_LEN(windows); wi++)
            for (int variant = 0; variant < 4; variant++) {
                pm_scenario s = windowed(cases[c].layers, windows[wi], cases[c].period,
                                         cases[c].mask);
                s.model.parallel_block = cases[c].parallel;
                s.model.chunked_attention = variant & 2;
                s.accel.l2_capacity_bytes = variant & 1 ? 64.0 * 1048576.0 : 1.5 * 1048576.0;
                const double w = pm_test_closed_form_matches_graph(&s);
                worst = w > worst ? w : worst;
            }
    print_message("closed-form decode sums (windows): largest relative difference %.3g\n",
                  worst);
}

static void test_window_that_fits_l2_never_spills(void **state)
{
    (void)state;
    /* Every layer local, window 64: QKV 1024 x 768 = 786,432 bytes plus 64 positions of 512
     * bytes fit 8 MiB at any context. */
    pm_scenario s = windowed(4, 64, 1, 0x1);
    s.accel.l2_capacity_bytes = 8.0 * 1048576.0;
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_int_equal(e.kv_spill_context, -1);
    /* With a global layer it spills where the full context does:
     * ceil((8 MiB - 786,432) / 512) = 14,848. */
    s.model.window_period = 2;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_int_equal(e.kv_spill_context, 14848);
}

/* ---------------------------------------------------------------- chunked attention */

static void test_chunked_attention_reads_its_own_chunk(void **state)
{
    (void)state;
    /* Chunks of 64 on layers 0 and 2 (Llama-4 style: the others global). */
    pm_scenario s = windowed(4, 64, 2, 0x1);
    s.model.chunked_attention = true;
    pm_graph *g = build(&s, 100);
    /* At context 100 the query is in the chunk starting at 64: it reads 100 mod 64 = 36
     * positions; a global layer all 100. */
    assert_rel(find_role(g, 0, PM_ROLE_ATTENTION)->kv_bytes, 2.0 * 2 * 36 * 128, 0.0);
    assert_rel(find_role(g, 1, PM_ROLE_ATTENTION)->kv_bytes, 2.0 * 2 * 100 * 128, 0.0);
    pm_graph_free(g);
    /* Prefill of 300: 4 whole chunks of 64^2 / 2 = 2,048 pairs and 44^2 / 2 = 968. */
    g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_PREFILL, 300, 0, g, NULL), PM_OK);
    const double pairs = 4 * 2048.0 + 968.0;
    assert_rel(find_role(g, 0, PM_ROLE_ATTENTION)->flop,
               4.0 * 2 * 4 * pairs * 128 + 5.0 * 2 * 4 * pairs, 0.0);
    pm_graph_free(g);
    /* The cache holds a chunk at most. */
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 1000, &f, NULL), PM_OK);
    assert_rel(f.kv_bytes_local_layer, 512.0 * 64, 0.0);
    assert_rel(f.kv_bytes, 2 * 512.0 * 1000 + 2 * 512.0 * 64, 0.0);
}

static void test_chunked_attention_fast_path_and_estimate(void **state)
{
    (void)state;
    static const int64_t ctxs[] = {0, 63, 64, 65, 127, 128, 300, 5000};
    for (int big = 0; big < 2; big++) {
        pm_scenario s = windowed(5, 64, 4, 0x7);
        s.model.chunked_attention = true;
        s.accel.l2_capacity_bytes = big ? 64.0 * 1048576.0 : 1.5 * 1048576.0;
        check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
    }
    /* The decode sum restarts at every chunk (300 steps over 5 chunks of 64): it must equal
     * the sum of every step. */
    pm_scenario s = windowed(5, 64, 4, 0x7);
    s.model.chunked_attention = true;
    s.accel.l2_capacity_bytes = 2.5 * 1048576.0;
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    check_decode_sum_is_every_step(&s, &e);
}

/* ---------------------------------------------------------------- block-sparse attention */

/* The hand model with 4 layers, layers 0 and 2 block-sparse (Phi-3-small's pattern at a small
 * scale): blocks of 16 positions, the last 4 whole (W = 64), one in 8 beyond. 8 heads: head h's
 * vertical blocks are shifted by h x max(1, 8 / 8) = h blocks. */
static pm_scenario sparse(int layers, int period, uint64_t mask)
{
    pm_scenario s = hand_scenario(2);
    s.model.layers = layers;
    s.model.sparse_block = 16;
    s.model.sparse_local_blocks = 4;
    s.model.sparse_vert_stride = 8;
    s.model.window_period = period;
    s.model.local_mask = mask;
    return s;
}

static void test_blocksparse_reads_local_blocks_and_a_share_beyond(void **state)
{
    (void)state;
    pm_scenario s = sparse(4, 2, 0x1);
    assert_true(pm_model_layer_is_local(&s.model, 0));
    assert_false(pm_model_layer_is_local(&s.model, 1));
    assert_int_equal(pm_model_local_layers(&s.model), 2);
    pm_graph *g = build(&s, 320);
    /* Context 320 on 2 devices: 4 query heads share the device's KV head. Each query head
     * scores W + (320 - 64) / 8 = 96 positions; its 4 heads' vertical blocks are 4 different
     * ones of every 8, so the KV head's cache is read at 64 + 256 x 4 / 8 = 192 positions:
     * 2 (K, V) x batch 2 x 192 x 128 = 98,304 bytes; a dense layer reads all 320. */
    const pm_node *a = find_role(g, 0, PM_ROLE_ATTENTION);
    assert_rel(a->kv_bytes, 2.0 * 2 * 192 * 128, 0.0);
    assert_rel(a->flop, 4.0 * 2 * 4 * 96 * 128 + 5.0 * 2 * 4 * 96, 0.0);
    a = find_role(g, 1, PM_ROLE_ATTENTION);
    assert_rel(a->kv_bytes, 2.0 * 2 * 320 * 128, 0.0);
    assert_rel(a->flop, 4.0 * 2 * 4 * 320 * 128 + 5.0 * 2 * 4 * 320, 0.0);
    pm_graph_free(g);
    /* Within the local blocks every position is read. */
    g = build(&s, 50);
    assert_rel(find_role(g, 0, PM_ROLE_ATTENTION)->kv_bytes, 2.0 * 2 * 50 * 128, 0.0);
    pm_graph_free(g);
    /* A homogeneous pattern: every head reads the same block in 8: 64 + 32 = 96 positions. */
    s.model.sparse_homo_head = true;
    g = build(&s, 320);
    assert_rel(find_role(g, 0, PM_ROLE_ATTENTION)->kv_bytes, 2.0 * 2 * 96 * 128, 0.0);
    pm_graph_free(g);
    /* 4 devices: 2 query heads per device and the KV head replicated; their union is 2 blocks
     * in 8: 64 + 64 = 128 positions. */
    s = sparse(4, 2, 0x1);
    s.cluster.devices = 4;
    g = build(&s, 320);
    assert_rel(find_role(g, 0, PM_ROLE_ATTENTION)->kv_bytes, 2.0 * 2 * 128 * 128, 0.0);
    pm_graph_free(g);
    /* Fewer heads than the stride (2 heads, multi-query, 1 device): step 8 / 2 = 4, so head 1
     * reads blocks 3, 11, ... and head 0 blocks 7, 15, ...: 2 in 8, 64 + 64 = 128 positions. */
    s = sparse(4, 2, 0x1);
    s.cluster.devices = 1;
    s.model.heads = 2;
    s.model.kv_heads = 1;
    s.model.hidden = 256;
    g = build(&s, 320);
    assert_rel(find_role(g, 0, PM_ROLE_ATTENTION)->kv_bytes, 2.0 * 2 * 128 * 128, 0.0);
    pm_graph_free(g);
}

static void test_blocksparse_prefill_pairs_and_footprint(void **state)
{
    (void)state;
    pm_scenario s = sparse(2, 2, 0x1);
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_PREFILL, 300, 0, g, NULL), PM_OK);
    /* 300 prompt tokens, per query head: the first 64 queries 64^2 / 2 = 2,048 pairs, the
     * other 236 the 64 local positions (15,104) and one in 8 of those before
     * (236^2 / 16 = 3,481): 20,633; the dense layer 45,000. */
    const double sp = 2048.0 + 15104.0 + 3481.0, dense = 45000.0;
    assert_rel(find_role(g, 0, PM_ROLE_ATTENTION)->flop,
               4.0 * 2 * 4 * sp * 128 + 5.0 * 2 * 4 * sp, 0.0);
    assert_rel(find_role(g, 1, PM_ROLE_ATTENTION)->flop,
               4.0 * 2 * 4 * dense * 128 + 5.0 * 2 * 4 * dense, 0.0);
    pm_graph_free(g);
    /* The cache holds every position in every layer. */
    pm_footprint f;
    s = sparse(4, 2, 0x1);
    assert_int_equal(pm_footprint_compute(&s, NULL, 1000, &f, NULL), PM_OK);
    assert_int_equal(f.local_layers, 2);
    assert_rel(f.kv_bytes_local_layer, 512.0 * 1000, 0.0);
    assert_rel(f.kv_bytes, 4 * 512.0 * 1000, 0.0);
}

static void test_blocksparse_fast_path_sums_and_spill(void **state)
{
    (void)state;
    static const int64_t ctxs[] = {0, 30, 63, 64, 65, 300, 5000};
    for (size_t c = 0; c < PM_ARRAY_LEN(window_cases); c++)
        for (int big = 0; big < 2; big++) {
            pm_scenario s = sparse(window_cases[c].layers, window_cases[c].period,
                                   window_cases[c].mask);
            s.model.parallel_block = window_cases[c].parallel;
            s.accel.l2_capacity_bytes = big ? 64.0 * 1048576.0 : 1.5 * 1048576.0;
            check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
            const double w = pm_test_closed_form_matches_graph(&s);
            assert_true(w < 1e-9);
            /* Under a runtime that decodes the block-sparse layers with its PagedAttention
             * kernel (their nodes kv_paged, the others not) the two paths still agree. */
            s.runtime.present = true;
            s.runtime.paged_attention = PM_PAGED_FALLBACK;
            s.runtime.paged_attention_efficiency_frac = 0.5;
            check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
            assert_true(pm_test_closed_form_matches_graph(&s) < 1e-9);
        }
    /* The decode sum, split where the share starts (W = 400 here, inside the decode range
     * 300..599), equals the sum of every step in each mode. */
    pm_scenario s = sparse(5, 2, 0x1);
    s.model.sparse_local_blocks = 25; /* W = 400 */
    s.accel.l2_capacity_bytes = 2.5 * 1048576.0;
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_true(e.prefill_tokens < 400 && s.workload.seq_len > 400);
    check_decode_sum_is_every_step(&s, &e);
    /* Every layer block-sparse, 8 MiB of L2: QKV 786,432 bytes leave room for
     * (8 MiB - 786,432) / 512 = 14,848 positions; past W = 64 the KV head's cache is read at
     * half the positions: it spills at 64 + (14,848 - 64) x 2 = 29,632. */
    s = sparse(4, 1, 0x1);
    s.accel.l2_capacity_bytes = 8.0 * 1048576.0;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_int_equal(e.kv_spill_context, 29632);
    /* A hand-built model with a window too is refused. */
    s.model.sliding_window = 128;
    pm_error err;
    assert_int_equal(pm_scenario_check(&s, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.model.blocksparse_block_size");
}

/* Phi-3-small as bundled, in the Table 1 setting (4 devices, batch 4, int8): its even layers
 * block-sparse (blocks of 64, 16 local = 1024 positions, 1 in 8 beyond), biases on every
 * projection; the paper's scenario makes every layer dense. */
static void test_bundled_phi3_small_blocksparse_by_hand(void **state)
{
    (void)state;
    const char *ov[] = {"model=phi3-small"};
    pm_scenario s = pm_test_load("phi3-small", ov, 1);
    const pm_model *m = &s.model;
    assert_int_equal(m->sparse_block, 64);
    assert_int_equal(m->sparse_local_blocks, 16);
    assert_int_equal(m->sparse_vert_stride, 8);
    assert_false(m->sparse_homo_head);
    assert_int_equal(pm_model_local_layers(m), 16);
    assert_true(pm_model_layer_is_local(m, 0));
    assert_false(pm_model_layer_is_local(m, 1));
    assert_true(m->qkv_bias && m->o_bias && m->mlp_bias);
    /* Decode at 16,384: 8 query heads and 2 KV heads per device, 4 heads per KV head with
     * 4 different vertical blocks of 8: 1024 + 15,360 / 2 = 8,704 positions of K and V, each
     * query head scoring 1024 + 15,360 / 8 = 2,944. */
    pm_graph *g = build(&s, 16384);
    const pm_node *a = find_role(g, 0, PM_ROLE_ATTENTION);
    assert_rel(a->kv_bytes, 2.0 * 4 * 8704 * 2 * 128, 0.0);
    assert_rel(a->flop, 4.0 * 4 * 8 * 2944 * 128 + 5.0 * 4 * 8 * 2944, 0.0);
    assert_rel(find_role(g, 1, PM_ROLE_ATTENTION)->kv_bytes, 2.0 * 4 * 16384 * 2 * 128, 0.0);
    pm_graph_free(g);
    pm_scenario_release(&s);
    s = pm_test_load("phi3-small", NULL, 0);
    assert_int_equal(s.model.sparse_block, 0);
    assert_int_equal(pm_model_local_layers(&s.model), 0);
    pm_scenario_release(&s);
    /* The published config.json (model_type phi3small) loads as the bundled file: its
     * attention_bias false is not what the family builds (biases on every projection), and it
     * gives the same estimate. */
    const char *hf[] = {"model=" PM_TEST_CONFIG_DIR "/hf-families/phi3-small-8k-config.json"};
    pm_scenario na = pm_test_load("phi3-small", ov, 1), b = pm_test_load("phi3-small", hf, 1);
    assert_int_equal(b.model.sparse_block, 64);
    assert_int_equal(b.model.sparse_local_blocks, 16);
    assert_int_equal(b.model.sparse_vert_stride, 8);
    assert_int_equal(b.model.window_period, 2);
    assert_true(b.model.qkv_bias && b.model.o_bias && b.model.mlp_bias && b.model.tied_embeddings);
    pm_estimate ea, eb;
    assert_int_equal(pm_estimate_compute(&na, &ea, NULL), PM_OK);
    assert_int_equal(pm_estimate_compute(&b, &eb, NULL), PM_OK);
    for (int md = 0; md < PM_MODE_COUNT; md++)
        assert_rel(eb.modes[md].request_s, ea.modes[md].request_s, 0.0);
    pm_scenario_release(&na);
    pm_scenario_release(&b);
}

/* ---------------------------------------------------------------- MLA */

/* DeepSeek-V3's attention (hidden 7168, 128 heads, q_lora 1536, kv_lora 512, nope 128, rope 64,
 * v 128) over a dense MLP of 18432 (its first three layers), bf16, batch 1, 8 devices: 16
 * heads per device. */
static pm_scenario mla_scenario(int devices)
{
    pm_scenario s = hand_scenario(devices);
    pm_model *m = &s.model;
    m->layers = 3;
    m->hidden = 7168;
    m->heads = 128;
    m->kv_heads = 128;
    m->head_dim = 192;
    m->intermediate = 18432;
    m->vocab = 129280;
    m->kv_lora_rank = 512;
    m->q_lora_rank = 1536;
    m->qk_nope_head_dim = 128;
    m->qk_rope_head_dim = 64;
    m->v_head_dim = 128;
    s.workload.batch = 1;
    s.workload.weight_dtype = s.workload.kv_dtype = s.workload.act_dtype = PM_DTYPE_BF16;
    s.accel.peak_flop_per_s[PM_DTYPE_BF16] = 1e15;
    return s;
}

static void test_mla_weights_and_latent_cache_by_hand(void **state)
{
    (void)state;
    pm_scenario s = mla_scenario(8);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 4096, &f, NULL), PM_OK);
    /* Elements per device: the down-projections q_a + kv_a, whole on every rank,
     * 7168 x (1536 + 512 + 64) = 15,138,816; q_b 1536 x 16 x 192 = 4,718,592; the key and
     * value up-projections 16 x 128 x 512 = 1,048,576 each; O 16 x 128 x 7168 = 14,680,064.
     * (All 8 ranks: q_a 11,010,048 + kv_a 4,128,768 + (q_b 37,748,736 + kv_b 16,777,216 +
     * o 117,440,512) / 8: DeepSeek-V3's 187.1 M attention parameters per layer.) */
    const double before_core = 15138816.0 + 4718592 + 1048576;
    assert_rel(f.qkv_weight_bytes, 2.0 * before_core, 0.0);
    assert_rel(f.attn_weight_bytes, 2.0 * (before_core + 1048576 + 14680064), 0.0);
    assert_rel(f.attn_weight_bytes, 2.0 * 36634624, 0.0);
    /* The latent: (512 + 64) x 2 bytes per position and layer, on every rank. */
    assert_rel(f.kv_bytes_per_token, 1152.0, 0.0);
    assert_rel(f.kv_bytes, 3 * 1152.0 * 4096, 0.0);
    pm_shard sh;
    assert_int_equal(pm_shard_compute(&s, &sh, NULL), PM_OK);
    assert_rel(sh.q_heads, 16.0, 0.0);
    assert_rel(sh.kv_heads, 1.0, 0.0);
    assert_true(sh.kv_replicated);
    /* Tensor parallelism does not shrink it (unlike GQA). */
    pm_scenario one = mla_scenario(1);
    pm_footprint f1;
    assert_int_equal(pm_footprint_compute(&one, NULL, 4096, &f1, NULL), PM_OK);
    assert_rel(f1.kv_bytes_per_token, f.kv_bytes_per_token, 0.0);
}

static void test_mla_decode_runs_the_absorbed_form(void **state)
{
    (void)state;
    pm_scenario s = mla_scenario(8);
    pm_graph *g = build(&s, 1000);
    /* Per layer: norm, QKV_A, Q_B, K_UP, RoPE, Attention, V_UP, O, AR, norm, Gate, Up,
     * SiLUxMul, Down, AR. */
    assert_int_equal(g->n_nodes, 1 + 3 * 15 + 2);
    const pm_node *a = find_role(g, 0, PM_ROLE_ATTENTION);
    /* Scores over the latent and its rope part, output in the latent: 2 x 16 x (2 x 512 + 64)
     * = 34,816 flop per position, plus 5 x 16 for the softmax; 1000 positions of 1152 bytes,
     * contiguous. */
    assert_rel(a->flop, (34816.0 + 80.0) * 1000, 0.0);
    assert_rel(a->kv_bytes, 1152.0 * 1000, 0.0);
    assert_false(a->kv_strided);
    /* The absorbed key up-projection: q_nope (16 x 128) times W_UK, 2 x 16 x 128 x 512 flop. */
    const pm_node *k = find_role(g, 0, PM_ROLE_K_UP);
    assert_rel(k->flop, 2.0 * 16 * 128 * 512, 0.0);
    assert_rel(k->weight_bytes, 2.0 * 16 * 128 * 512, 0.0);
    const pm_node *v = find_role(g, 0, PM_ROLE_V_UP);
    assert_true(v > a); /* after the core in decode */
    assert_rel(v->flop, 2.0 * 16 * 512 * 128, 0.0);
    assert_rel(find_role(g, 0, PM_ROLE_O)->weight_bytes, 2.0 * 16 * 128 * 7168, 0.0);
    pm_graph_free(g);
}

static void test_mla_fast_path_matches_graph_path(void **state)
{
    (void)state;
    static const int64_t ctxs[] = {0, 100, 4096, 20000};
    for (int q_lora = 0; q_lora < 2; q_lora++)
        for (int big = 0; big < 2; big++) {
            pm_scenario s = mla_scenario(8);
            s.model.layers = 5;
            s.model.q_lora_rank = q_lora ? 1536 : 0;
            s.accel.l2_capacity_bytes = big ? 256.0 * 1048576.0 : 40.0 * 1048576.0;
            check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
            /* ...and with a window on every other layer. */
            s.model.sliding_window = 2048;
            s.model.window_period = 2;
            s.model.local_mask = 0x1;
            check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
        }
}

/* ---------------------------------------------------------------- real configs */

/* Falcon-7B (tiiuae/falcon-7b's config.json): 71 heads of 64, one KV head (multi_query; its
 * num_kv_heads 71 counts only with new_decoder_architecture), parallel attention and MLP,
 * intermediate 4 x 4544, no biases, tied embeddings. */
static void test_falcon7b_is_multi_query_and_parallel(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    assert_int_equal(pm_model_load(HF_DIR "/falcon-7b-config.json", &g_opts, &m, &err), PM_OK);
    assert_int_equal(m.layers, 32);
    assert_int_equal(m.hidden, 4544);
    assert_int_equal(m.heads, 71);
    assert_int_equal(m.kv_heads, 1);
    assert_int_equal(m.head_dim, 64);
    assert_int_equal(m.intermediate, 18176);
    assert_false(m.gated_mlp);
    assert_true(m.parallel_block);
    assert_false(m.qkv_bias || m.o_bias || m.mlp_bias);
    assert_true(m.tied_embeddings);

    /* On 4 devices with int8 weights and KV, batch 4: 18 query heads (ceil 71/4), the KV head
     * replicated, 4544 MLP columns, 16256 vocabulary rows. */
    pm_scenario s = pm_test_load("llama8b", NULL, 0);
    s.model = m;
    assert_int_equal(s.cluster.devices, 4);
    assert_int_equal(s.workload.batch, 4);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 16384, &f, NULL), PM_OK);
    const double qkv = 4544.0 * (18 + 2) * 64; /* 5,816,320 */
    const double o = 18.0 * 64 * 4544;         /* 5,234,688 */
    const double mlp = 2.0 * 4544 * 4544;      /* up and down: 41,295,872 */
    const double lm_head = 16256.0 * 4544;     /* 73,867,264; the embedding is tied to it */
    assert_rel(f.qkv_weight_bytes, qkv, 0.0);
    assert_rel(f.attn_weight_bytes, qkv + o, 0.0);
    assert_rel(f.mlp_weight_bytes, mlp, 0.0);
    assert_rel(f.weight_bytes, 32 * (qkv + o + mlp) + lm_head, 1e-15);
    assert_rel(f.weight_bytes, 1748967424.0, 1e-15);
    /* One KV head of 64: 2 x 4 x 64 bytes per position and layer (71 heads would be 18x). */
    assert_rel(f.kv_bytes_per_token, 512.0, 0.0);
    assert_rel(f.kv_bytes, 32 * 512.0 * 16384, 0.0);
    pm_graph *g = build(&s, 1000);
    assert_int_equal(count_kind(g, PM_NODE_ALLREDUCE), 32); /* one per layer */
    pm_graph_free(g);
    pm_scenario_release(&s);
}

/* The 13B GPT-style model of the FasterTransformer validation rows (data/models/gpt-13b-ft.json:
 * 40 layers, hidden 5120, 40 heads of 128, MLP 20480 with GELU, vocab 50272, biases
 * everywhere, tied embeddings) on 2 A100s in fp16, batch 1. */
static void test_bundled_gpt_13b_ft_by_hand(void **state)
{
    (void)state;
    static const char *const sets[] = {
        "model=gpt-13b-ft",          "accelerator=a100-sxm-40gb", "cluster=nvlink3-nvswitch",
        "cluster.devices=2",         "workload.batch=1",          "workload.weight_dtype=fp16",
        "workload.act_dtype=fp16",   "workload.kv_dtype=fp16"};
    pm_scenario s = pm_test_load("llama8b", sets, sizeof sets / sizeof sets[0]);
    assert_false(s.model.gated_mlp);
    assert_true(s.model.qkv_bias && s.model.o_bias && s.model.mlp_bias);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 512, &f, NULL), PM_OK);
    /* Per device, 2 bytes a weight: 20 heads. QKV 5120 x 3 x 20 x 128 = 39,321,600 weights
     * (78,643,200 bytes) + 7680 bias = 78,658,560; O 2560 x 5120 = 13,107,200 weights
     * (26,214,400 bytes) + a whole 5120 bias = 26,224,640; up 5120 x 10240 and down 10240 x
     * 5120 = 104,857,600 weights (209,715,200 bytes) + 10240 + 5120 bias = 209,745,920. */
    const double attn = 78658560.0 + 26224640.0; /* 104,883,200 */
    const double mlp = 209745920.0;
    /* The tied LM head: 50272 / 2 = 25136 rows x 5120 x 2 = 257,392,640; no embedding. */
    const double lm_head = 25136.0 * 5120 * 2;
    assert_rel(f.attn_weight_bytes, attn, EXACT);
    assert_rel(f.mlp_weight_bytes, mlp, EXACT);
    assert_rel(f.weight_bytes, 40 * (attn + mlp) + lm_head, EXACT);
    assert_rel(f.weight_bytes, 12842557440.0, EXACT); /* 25.7 GB over both: "13B" in fp16 */
    /* K and V of 20 heads of 128 in fp16, per position and layer: 10,240 bytes. */
    assert_rel(f.kv_bytes_per_token, 2.0 * 20 * 128 * 2, EXACT);
    pm_scenario_release(&s);
}

/* Gemma-2-9B as bundled, in its scenario (4 devices, batch 4, int8, 8192 tokens): 4 query
 * heads and 2 KV heads of 256 per device, 21 local layers (4096 positions) and 21 global. */
static void test_bundled_gemma2_by_hand(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("gemma2-9b", NULL, 0);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 8192, &f, NULL), PM_OK);
    assert_int_equal(f.local_layers, 21);
    const double qkv = 3584.0 * (4 + 2 * 2) * 256, o = 4.0 * 256 * 3584;
    assert_rel(f.attn_weight_bytes, qkv + o, 0.0);         /* 11,010,048 */
    assert_rel(f.mlp_weight_bytes, 3.0 * 3584 * 3584, 0.0); /* 14336 / 4 columns */
    assert_rel(f.kv_bytes_per_token, 2.0 * 4 * 2 * 256, 0.0);
    assert_rel(f.kv_bytes, 21 * 4096.0 * 8192 + 21 * 4096.0 * 4096, 0.0); /* 1008 MiB */
    /* A hand-built scenario with a bad MLA is refused, not modelled. */
    s.model.kv_lora_rank = 512;
    pm_error err;
    assert_int_equal(pm_scenario_check(&s, &err), PM_ERR_RANGE);
    assert_string_equal(err.path, "$.model.kv_lora_rank");
    pm_scenario_release(&s);
}

/* Phi-3-medium as bundled (its 2047-token window on every layer) in the Table 1 setting
 * (4 devices, batch 4, int8, 16384 tokens): 10 KV heads over 4 devices, 3 on the busiest. */
static void test_bundled_phi3_medium_window_by_hand(void **state)
{
    (void)state;
    const char *ov[] = {"model=phi3-medium"};
    pm_scenario s = pm_test_load("phi3-medium", ov, 1);
    assert_int_equal(s.model.sliding_window, 2047);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 16384, &f, NULL), PM_OK);
    assert_int_equal(f.local_layers, 40);
    assert_rel(f.kv_bytes_per_token, 2.0 * 4 * 3 * 128, 0.0);  /* 3072 */
    assert_rel(f.kv_bytes, 40 * 3072.0 * 2047, 0.0);            /* 251,535,360 */
    pm_scenario_release(&s);
    /* The paper's scenario leaves the window out (full attention, EXPERIMENTS.md). */
    s = pm_test_load("phi3-medium", NULL, 0);
    assert_int_equal(s.model.sliding_window, 0);
    pm_scenario_release(&s);
}

/* Llama-3.1-405B on 8 H200s in bf16: 16 query heads and 1 KV head per device, 6656 MLP
 * columns, 16032 vocabulary rows for the LM head and (untied) the embedding. */
static void test_bundled_llama405b_by_hand(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama405b-h200", NULL, 0);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 4096, &f, NULL), PM_OK);
    const double qkv = 16384.0 * (16 + 2) * 128 * 2; /* 75,497,472 */
    const double o = 16.0 * 128 * 16384 * 2;        /* 67,108,864 */
    const double mlp = 3.0 * 16384 * 6656 * 2;      /* 654,311,424 */
    const double rows = 16032.0 * 16384 * 2;        /* 525,336,576 */
    assert_rel(f.weight_bytes, 126 * (qkv + o + mlp) + 2 * rows, 1e-15);
    assert_rel(f.weight_bytes, 101462310912.0, 1e-15); /* 94.5 GiB */
    assert_rel(f.kv_bytes_per_token, 2.0 * 1 * 1 * 128 * 2, 0.0);
    pm_scenario_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_block_has_one_allreduce_per_layer),
        cmocka_unit_test(test_parallel_block_window_spans_both_branches),
        cmocka_unit_test(test_parallel_block_fast_path_matches_graph_path),
        cmocka_unit_test(test_biases_add_one_element_per_output_column),
        cmocka_unit_test(test_embedding_is_vocabulary_parallel),
        cmocka_unit_test(test_window_caps_the_kv_read_of_local_layers),
        cmocka_unit_test(test_window_bounds_prefill_attention_pairs),
        cmocka_unit_test(test_footprint_holds_the_window_in_local_layers),
        cmocka_unit_test(test_window_patterns_fast_path_matches_graph_path),
        cmocka_unit_test(test_window_estimate_sums_every_decode_step),
        cmocka_unit_test(test_window_closed_form_sums_match_graph_path),
        cmocka_unit_test(test_window_that_fits_l2_never_spills),
        cmocka_unit_test(test_chunked_attention_reads_its_own_chunk),
        cmocka_unit_test(test_chunked_attention_fast_path_and_estimate),
        cmocka_unit_test(test_blocksparse_reads_local_blocks_and_a_share_beyond),
        cmocka_unit_test(test_blocksparse_prefill_pairs_and_footprint),
        cmocka_unit_test(test_blocksparse_fast_path_sums_and_spill),
        cmocka_unit_test(test_bundled_phi3_small_blocksparse_by_hand),
        cmocka_unit_test(test_mla_weights_and_latent_cache_by_hand),
        cmocka_unit_test(test_mla_decode_runs_the_absorbed_form),
        cmocka_unit_test(test_mla_fast_path_matches_graph_path),
        cmocka_unit_test(test_falcon7b_is_multi_query_and_parallel),
        cmocka_unit_test(test_bundled_gpt_13b_ft_by_hand),
        cmocka_unit_test(test_bundled_gemma2_by_hand),
        cmocka_unit_test(test_bundled_phi3_medium_window_by_hand),
        cmocka_unit_test(test_bundled_llama405b_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
