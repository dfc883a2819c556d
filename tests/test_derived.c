/*
 * test_derived.c - the derived quantities with one home each (workload.c, footprint.c, the L2
 * window in insert.c) and the node roles the graph builder sets: goldens by hand, and checks
 * that every consumer of a rule (the estimate, the graph builder) agrees with its home.
 */
#include "testutil.h"

static void test_prompt_tokens_round_half_away_from_zero(void **state)
{
    (void)state;
    pm_workload w = {0};
    w.seq_len = 16384;
    w.prefill_frac = 2.0 / 3.0; /* 10922.67 */
    assert_int_equal(pm_workload_prompt_tokens(&w), 10923);
    assert_int_equal(pm_workload_decode_steps(&w), 16384 - 10923);
    w.seq_len = 3;
    w.prefill_frac = 0.5; /* 1.5 rounds up */
    assert_int_equal(pm_workload_prompt_tokens(&w), 2);
    assert_int_equal(pm_workload_decode_steps(&w), 1);
}

static void test_default_context_per_phase(void **state)
{
    (void)state;
    pm_workload w = {0};
    w.seq_len = 1000;
    w.prefill_frac = 0.25;
    assert_int_equal(pm_default_context(&w, PM_PHASE_DECODE), 999); /* the last decode step */
    assert_int_equal(pm_default_context(&w, PM_PHASE_PREFILL), 250); /* the whole prompt */
}

static void test_l2_window_is_capacity_times_usable_fraction(void **state)
{
    (void)state;
    pm_accelerator a = {0};
    a.l2_capacity_bytes = 192.0 * 1048576.0;
    a.l2_usable_frac = 0.5;
    assert_rel(pm_accelerator_l2_window_bytes(&a), 96.0 * 1048576.0, 0.0);
}

/* Llama3-70B on 4 devices (Megatron: 16 query heads, 2 KV heads, 7168 MLP columns, 32064
 * vocabulary rows per device), int8 weights and KV cache, batch 4: every byte by hand. */
static void test_footprint_llama70b_by_hand(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b", NULL, 0);
    assert_int_equal(s.cluster.devices, 4);
    assert_int_equal(s.workload.batch, 4);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 16384, &f, NULL), PM_OK);
    const double qkv = 8192.0 * (16 + 2 * 2) * 128;       /* 20,971,520 */
    const double o = 16.0 * 128 * 8192;                  /* 16,777,216 */
    const double mlp = 3.0 * 8192 * 7168;                /* gate, up, down: 176,160,768 */
    const double lm_head = 32064.0 * 8192;               /* 262,668,288 */
    const double embedding = 32064.0 * 8192;             /* untied, vocabulary-parallel like
                                                            the LM head: 262,668,288 */
    assert_rel(f.qkv_weight_bytes, qkv, 0.0);
    assert_rel(f.attn_weight_bytes, qkv + o, 0.0);
    assert_rel(f.mlp_weight_bytes, mlp, 0.0);
    assert_rel(f.layer_weight_bytes, qkv + o + mlp, 0.0);
    assert_rel(f.lm_head_bytes, lm_head, 0.0);
    assert_rel(f.embedding_bytes, embedding, 0.0);
    assert_rel(f.weight_bytes, 80 * (qkv + o + mlp) + lm_head + embedding, 1e-15);
    assert_rel(f.weight_bytes, 17638096896.0, 1e-15); /* 80 x 213,909,504 + 2 x 262,668,288 */
    assert_rel(f.kv_bytes_per_token, 2.0 * 4 * 2 * 128, 0.0); /* K and V, 4 sequences */
    assert_rel(f.kv_bytes, 80 * 2048.0 * 16384, 0.0);          /* 2.5 GiB */

    /* The estimate reports the same bytes, and the spill context from the same window:
     * (192 MiB - 20,971,520) / 2048 = 88064. */
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_rel(e.weight_bytes_per_device, f.weight_bytes, 0.0);
    assert_rel(e.kv_bytes_per_device, f.kv_bytes, 0.0);
    assert_rel(e.l2_window_bytes, pm_accelerator_l2_window_bytes(&s.accel), 0.0);
    assert_int_equal(e.kv_spill_context, 88064);
    assert_int_equal(e.prefill_tokens, pm_workload_prompt_tokens(&s.workload));
    assert_int_equal(e.decode_steps, pm_workload_decode_steps(&s.workload));
    pm_scenario_release(&s);
}

static void test_footprint_takes_a_given_shard(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b", NULL, 0);
    pm_shard sh = {0};
    sh.q_heads = 1;
    sh.kv_heads = 1;
    sh.mlp_cols = 100;
    sh.vocab_cols = 10;
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, &sh, 2, &f, NULL), PM_OK);
    assert_rel(f.qkv_weight_bytes, 8192.0 * 3 * 128, 0.0);
    assert_rel(f.mlp_weight_bytes, 3.0 * 8192 * 100, 0.0);
    assert_rel(f.kv_bytes, 80 * 2.0 * 4 * 1 * 128 * 2, 0.0);
    pm_error err;
    assert_int_equal(pm_footprint_compute(&s, NULL, -1, &f, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_footprint_compute(NULL, NULL, 0, &f, &err), PM_ERR_INVALID_ARG);
    pm_scenario_release(&s);
}

/* The graph's nodes carry the footprint's bytes: one layer's MatMuls sum to the layer's
 * weights, the LM head to its rows, the attention reads the KV cache of its context. */
static void test_graph_nodes_agree_with_footprint(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b", NULL, 0);
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    const int64_t ctx = 5000;
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, ctx, 2, g, NULL), PM_OK);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, ctx, &f, NULL), PM_OK);
    double layer0 = 0, lm = 0, kv0 = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *n = &g->nodes[i];
        if (n->layer == 0 && n->kind == PM_NODE_MATMUL)
            layer0 += n->weight_bytes;
        if (n->role == PM_ROLE_LM_HEAD)
            lm += n->weight_bytes;
        if (n->layer == 0 && n->kind == PM_NODE_ATTENTION)
            kv0 += n->kv_bytes;
    }
    assert_rel(layer0, f.layer_weight_bytes, 1e-15);
    assert_rel(lm, f.lm_head_bytes, 0.0);
    assert_rel(kv0, f.kv_bytes_per_token * (double)ctx, 1e-15);
    pm_graph_free(g);
    pm_scenario_release(&s);
}

/* Roles: every node of a layer has the role its position gives it, in both graph kinds, and the
 * fused node keeps the projection's role. */
static void test_builder_sets_roles(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b", NULL, 0);
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    static const pm_node_role serial[] = {
        PM_ROLE_EMBEDDING, PM_ROLE_ATTN_NORM, PM_ROLE_QKV, PM_ROLE_ROPE, PM_ROLE_ATTENTION,
        PM_ROLE_O, PM_ROLE_ATTN_ALLREDUCE, PM_ROLE_MLP_NORM, PM_ROLE_GATE, PM_ROLE_UP,
        PM_ROLE_ACTIVATION, PM_ROLE_DOWN, PM_ROLE_MLP_ALLREDUCE, PM_ROLE_FINAL_NORM,
        PM_ROLE_LM_HEAD};
    assert_int_equal(pm_graph_build_mode(&s, PM_MODE_SERIAL, PM_PHASE_DECODE, 100, 1, g, NULL),
                     PM_OK);
    assert_int_equal(g->n_nodes, sizeof serial / sizeof serial[0]);
    for (size_t i = 0; i < g->n_nodes; i++)
        assert_int_equal(g->nodes[i].role, serial[i]);
    static const pm_node_role fused[] = {
        PM_ROLE_EMBEDDING, PM_ROLE_ATTN_NORM, PM_ROLE_QKV, PM_ROLE_ROPE, PM_ROLE_ATTENTION,
        PM_ROLE_O, PM_ROLE_MLP_NORM, PM_ROLE_GATE, PM_ROLE_UP, PM_ROLE_ACTIVATION, PM_ROLE_DOWN,
        PM_ROLE_FINAL_NORM, PM_ROLE_LM_HEAD};
    assert_int_equal(pm_graph_build_mode(&s, PM_MODE_FUSED, PM_PHASE_DECODE, 100, 1, g, NULL),
                     PM_OK);
    assert_int_equal(g->n_nodes, sizeof fused / sizeof fused[0]);
    for (size_t i = 0; i < g->n_nodes; i++)
        assert_int_equal(g->nodes[i].role, fused[i]);
    assert_int_equal(g->nodes[5].kind, PM_NODE_FUSED_MATMUL_ALLREDUCE);
    /* Prefetch nodes have no decoder role. */
    assert_int_equal(pm_graph_build_mode(&s, PM_MODE_PRESERVE, PM_PHASE_DECODE, 100, 2, g, NULL),
                     PM_OK);
    int prefetches = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].kind == PM_NODE_PREFETCH) {
            assert_int_equal(g->nodes[i].role, PM_ROLE_NONE);
            prefetches++;
        }
    assert_true(prefetches > 0);
    assert_string_equal(pm_node_role_name(PM_ROLE_O), "o");
    assert_string_equal(pm_node_role_name(PM_ROLE_LM_HEAD), "lm_head");
    assert_string_equal(pm_node_role_name((pm_node_role)99), "?");
    pm_graph_free(g);
    pm_scenario_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prompt_tokens_round_half_away_from_zero),
        cmocka_unit_test(test_default_context_per_phase),
        cmocka_unit_test(test_l2_window_is_capacity_times_usable_fraction),
        cmocka_unit_test(test_footprint_llama70b_by_hand),
        cmocka_unit_test(test_footprint_takes_a_given_shard),
        cmocka_unit_test(test_graph_nodes_agree_with_footprint),
        cmocka_unit_test(test_builder_sets_roles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
