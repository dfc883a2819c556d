/*
 * test_spec.c - speculative decoding (issue 45): Leviathan's expected tokens by hand (constant
 * and per position), the verify step's nodes by hand on a small model, the verify step's time
 * on the fast path against the graph path (dense, windowed, MoE, MLA), the estimate's join of
 * the verify and draft steps, speculation switched off giving the plain estimate bit for bit,
 * PRESERVE under the wider allreduce, and what is refused, each naming its key.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

static pm_scenario load(const char *name)
{
    pm_scenario s = pm_test_load(name, NULL, 0);
    pm_scenario_release(&s);
    return s;
}

static const pm_node *node_of(const pm_graph *g, pm_node_role r, int l)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].role == r && g->nodes[i].layer == l)
            return &g->nodes[i];
    return NULL;
}

/* k = 3 at a = 0.6: 1 + 0.6 + 0.36 + 0.216 = 2.176 = (1 - 0.6^4) / (1 - 0.6). */
static void test_expected_tokens_constant(void **state)
{
    (void)state;
    pm_speculation sp = {0};
    sp.draft_tokens = 3;
    sp.n_acceptance = 1;
    sp.acceptance[0] = 0.6;
    /* Tolerance: three products and sums of doubles. */
    assert_rel(pm_spec_expected_tokens(&sp), 2.176, 1e-15);
    assert_rel(pm_spec_expected_tokens(&sp), (1.0 - pow(0.6, 4)) / (1.0 - 0.6), 1e-15);
    sp.draft_tokens = 0;
    assert_rel(pm_spec_expected_tokens(&sp), 1.0, 0.0);
    sp.draft_tokens = 5;
    sp.acceptance[0] = 0.0; /* every draft rejected: the target's own token alone */
    assert_rel(pm_spec_expected_tokens(&sp), 1.0, 0.0);
    sp.acceptance[0] = 1.0;
    assert_true(isnan(pm_spec_expected_tokens(&sp)));
    assert_true(isnan(pm_spec_expected_tokens(NULL)));
}

/* Per position 0.9, 0.5, 0.2: 1 + 0.9 + 0.9 x 0.5 + 0.9 x 0.5 x 0.2 = 2.44. */
static void test_expected_tokens_per_position(void **state)
{
    (void)state;
    pm_speculation sp = {0};
    sp.draft_tokens = 3;
    sp.n_acceptance = 3;
    sp.acceptance[0] = 0.9;
    sp.acceptance[1] = 0.5;
    sp.acceptance[2] = 0.2;
    assert_rel(pm_spec_expected_tokens(&sp), 2.44, 1e-15);
    sp.n_acceptance = 2; /* neither one rate nor one per drafted token */
    assert_true(isnan(pm_spec_expected_tokens(&sp)));
}

/* The hand model (2 devices: 4 query heads, 1 KV head of 128 a device, hidden 1024, int8),
 * batch 2, k = 3 drafted tokens: the verify step at context 100 runs 2 x 4 = 8 tokens. */
static void test_verify_step_nodes_by_hand(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    pm_test_speculate(&s, 3, 0.5);
    pm_step step;
    assert_int_equal(pm_step_of(&s, PM_PHASE_DECODE, 100, &step, NULL), PM_OK);
    assert_rel(step.tokens, 8.0, 0.0);
    assert_rel(step.sequences, 2.0, 0.0);
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    assert_int_equal(pm_graph_build_ex(&s, &step, 0, false, g, NULL), PM_OK);
    const double q = 4, kv = 1, d = 128;
    /* Each sequence's 4 queries score the 100 cached positions, and the drafted ones before
     * them: 0 + 1 + 2 + 3 = 6 more; 406 pairs per head and sequence. */
    const double scored = 2 * (4 * 100 + 6);
    const pm_node *a = node_of(g, PM_ROLE_ATTENTION, 0);
    assert_non_null(a);
    assert_rel(a->flop, 4 * q * scored * d + 5 * q * scored, 1e-15);
    /* The cache is read once per sequence: 2 x 100 positions, K and V of one head. */
    assert_rel(a->kv_bytes, 2 * 2 * 100 * kv * d * 1, 1e-15);
    /* Each of the 8 queries' vector and output move. */
    assert_rel(a->act_bytes, 2 * 8 * q * d, 1e-15);
    const pm_node *qkv = node_of(g, PM_ROLE_QKV, 0);
    assert_rel(qkv->m, 8, 0.0);
    /* The LM head scores every verified position: 8 rows. */
    const pm_node *head = node_of(g, PM_ROLE_LM_HEAD, -1);
    assert_rel(head->m, 8, 0.0);
    /* The allreduce carries the 8 tokens' hidden states. */
    const pm_node *ar = node_of(g, PM_ROLE_ATTN_ALLREDUCE, 0);
    assert_rel(ar->comm_bytes, 8 * 1024 * pm_dtype_bytes(pm_allreduce_dtype(&s.workload)), 0.0);
    pm_graph_free(g);
}

/* The verify step on the fast path equals the graph path, in every mode: dense GQA, sliding
 * windows (gemma2), MoE (mixtral, qwen3) and MLA (DeepSeek-V3). */
static void test_verify_fast_matches_graph(void **state)
{
    (void)state;
    static const char *const names[] = {"llama70b", "gemma2-9b", "mixtral8x7b",
                                        "qwen3-30b-a3b", "deepseek-v3-h200"};
    const int64_t ctxs[] = {1, 700, 4096, 9000};
    for (size_t i = 0; i < PM_ARRAY_LEN(names); i++) {
        pm_scenario s = load(names[i]);
        pm_test_speculate(&s, 3, 0.7);
        pm_test_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
    }
}

/* A mixed step of one token per sequence, given as 1 or left 0, is the plain decode step. */
static void test_one_token_per_sequence_is_decode(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    pm_mixed_step m = {0};
    m.decode_sequences = 4;
    m.decode_context = 5000;
    for (int mode = 0; mode < PM_MODE_COUNT; mode++) {
        double t0, t1, plain;
        m.decode_tokens_per_sequence = 0;
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)mode, &m, &t0, NULL), PM_OK);
        m.decode_tokens_per_sequence = 1;
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)mode, &m, &t1, NULL), PM_OK);
        assert_int_equal(pm_decode_step_time(&s, (pm_mode)mode, 5000, &plain, NULL), PM_OK);
        assert_memory_equal(&t0, &plain, sizeof plain); /* bit for bit */
        assert_memory_equal(&t1, &plain, sizeof plain);
    }
}

/* k = 0 (acceptance 0, any method): the estimate is the plain one, bit for bit. */
static void test_k0_is_plain_bit_for_bit(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    pm_estimate plain, spec;
    assert_int_equal(pm_estimate_compute(&s, &plain, NULL), PM_OK);
    pm_test_speculate(&s, 0, 0.0);
    assert_int_equal(pm_estimate_compute(&s, &spec, NULL), PM_OK);
    assert_memory_equal(&plain, &spec, sizeof plain);
    assert_false(spec.spec.active);
}

/* The estimate joins the steps: per mode tpot_s = (T_verify + k T_draft) / E at the last
 * context, T_verify the scenario's decode step (its verify step) and T_draft the draft's. */
static void test_estimate_joins_verify_and_draft(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    pm_test_speculate(&s, 2, 0.8);
    const double E = 1 + 0.8 + 0.64;
    pm_estimate e;
    pm_error err;
    if (pm_estimate_compute(&s, &e, &err) != PM_OK)
        fail_msg("%s", err.message);
    assert_true(e.spec.active);
    assert_rel(e.spec.tokens_per_step, E, 1e-15);
    pm_scenario d;
    pm_spec_draft_scenario(&s, &d);
    assert_int_equal(d.model.layers, 1);
    const int64_t last = s.workload.seq_len - 1;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double tv, td;
        assert_int_equal(pm_decode_step_time(&s, (pm_mode)m, last, &tv, NULL), PM_OK);
        assert_int_equal(pm_decode_step_time(&d, (pm_mode)m, last, &td, NULL), PM_OK);
        /* Tolerance: the estimate's last step comes from its closed-form evaluations. */
        assert_rel(e.spec.verify_step_s[m], tv, 1e-12);
        assert_rel(e.spec.draft_step_s[m], td, 1e-12);
        assert_rel(e.modes[m].tpot_s, (tv + 2 * td) / E, 1e-12);
        assert_rel(e.modes[m].request_s, e.modes[m].prefill_s + e.modes[m].decode_s, 1e-15);
        assert_true(e.spec.speedup_vs_plain[m] > 1.0); /* 2.44 tokens for 1 step + 2 drafts */
    }
}

/* PRESERVE under the verify step's allreduce: its message is (k + 1) b h fp16 bytes, and
 * PRESERVE still beats the serial verify step. */
static void test_preserve_wider_allreduce(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    pm_test_speculate(&s, 4, 0.7);
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    const double msg = (double)s.workload.batch * 5 * s.model.hidden * 2;
    double want;
    assert_int_equal(pm_allreduce_time(&s.cluster, s.cluster.algorithm, msg, &want, NULL, NULL),
                     PM_OK);
    assert_rel(e.modes[PM_MODE_PRESERVE].allreduce_decode_s, want, 1e-15);
    assert_true(e.spec.verify_step_s[PM_MODE_PRESERVE] < e.spec.verify_step_s[PM_MODE_SERIAL]);
}

/* Each refusal names its key. */
static void expect_refusal(const pm_scenario *s, pm_status st, const char *path)
{
    pm_estimate e;
    pm_error err;
    assert_int_equal(pm_estimate_compute(s, &e, &err), st);
    assert_string_equal(err.path, path);
}

static void test_refusals_name_the_key(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    assert_int_equal(s.model.mtp_layers, 0);
    pm_scenario ds = load("deepseek-v3-mtp"); /* DeepSeek-V3's one MTP module, read */
    assert_int_equal(ds.model.mtp_layers, 1);
    pm_scenario_release(&ds);
    pm_test_speculate(&s, 3, 1.0);
    expect_refusal(&s, PM_ERR_RANGE, "$.speculative.acceptance");
    pm_test_speculate(&s, 3, NAN);
    expect_refusal(&s, PM_ERR_RANGE, "$.speculative.acceptance");
    pm_test_speculate(&s, PM_MAX_SPEC_TOKENS + 1, 0.5);
    expect_refusal(&s, PM_ERR_RANGE, "$.speculative.draft_tokens");
    pm_test_speculate(&s, 3, 0.5);
    s.spec.n_acceptance = 2;
    expect_refusal(&s, PM_ERR_INCONSISTENT, "$.speculative.acceptance");
    pm_test_speculate(&s, 3, 0.5);
    s.spec.mtp_layers = 0;
    expect_refusal(&s, PM_ERR_RANGE, "$.speculative.mtp_layers");
    /* MTP drafts with the checkpoint's own layers: Llama-3-70B has none
     * (num_nextn_predict_layers absent), and one layer does not give two. */
    pm_test_speculate(&s, 3, 0.5);
    s.model.mtp_layers = 0;
    expect_refusal(&s, PM_ERR_INCONSISTENT, "$.speculative.mtp_layers");
    s.model.mtp_layers = 1;
    s.spec.mtp_layers = 2;
    expect_refusal(&s, PM_ERR_INCONSISTENT, "$.speculative.mtp_layers");
    pm_test_speculate(&s, 3, 0.5);
    s.spec.method = PM_SPEC_DRAFT_MODEL; /* without a draft model */
    expect_refusal(&s, PM_ERR_MISSING, "$.speculative.draft_model");
    s.spec.draft = load("llama8b").model;
    s.spec.draft.vocab = 32000;
    expect_refusal(&s, PM_ERR_INCONSISTENT, "$.speculative.draft_model");
    s.spec.draft.vocab = s.model.vocab;
    s.spec.draft.kv_heads = 3; /* 32 heads in groups of 3 */
    expect_refusal(&s, PM_ERR_INCONSISTENT, "$.speculative.draft_model");
    pm_scenario pp = pm_test_load("llama70b", (const char *const[]){"cluster.pipeline_parallel=2"},
                                  1);
    pm_scenario_release(&pp);
    pm_test_speculate(&pp, 3, 0.5);
    expect_refusal(&pp, PM_ERR_UNSUPPORTED, "$.speculative");
}

/* A draft model of the same vocabulary (Llama-3.1-8B drafting for Llama-3-70B): its weights
 * and cache join the footprint, its prefill the request's. */
static void test_draft_model_footprint(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    pm_estimate plain, e, de;
    assert_int_equal(pm_estimate_compute(&s, &plain, NULL), PM_OK);
    pm_test_speculate(&s, 4, 0.7);
    s.spec.method = PM_SPEC_DRAFT_MODEL;
    s.spec.draft = load("llama8b").model;
    pm_error err;
    if (pm_estimate_compute(&s, &e, &err) != PM_OK)
        fail_msg("%s", err.message);
    pm_scenario d;
    pm_spec_draft_scenario(&s, &d);
    assert_int_equal(pm_estimate_compute(&d, &de, NULL), PM_OK);
    assert_rel(e.weight_bytes_per_device, plain.weight_bytes_per_device + de.weight_bytes_per_device,
               1e-15);
    assert_rel(e.kv_bytes_per_device, plain.kv_bytes_per_device + de.kv_bytes_per_device, 1e-15);
    for (int m = 0; m < PM_MODE_COUNT; m++)
        assert_rel(e.modes[m].prefill_s, plain.modes[m].prefill_s + de.modes[m].prefill_s,
                   1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expected_tokens_constant),
        cmocka_unit_test(test_expected_tokens_per_position),
        cmocka_unit_test(test_verify_step_nodes_by_hand),
        cmocka_unit_test(test_verify_fast_matches_graph),
        cmocka_unit_test(test_one_token_per_sequence_is_decode),
        cmocka_unit_test(test_k0_is_plain_bit_for_bit),
        cmocka_unit_test(test_estimate_joins_verify_and_draft),
        cmocka_unit_test(test_preserve_wider_allreduce),
        cmocka_unit_test(test_refusals_name_the_key),
        cmocka_unit_test(test_draft_model_footprint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
