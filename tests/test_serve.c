/*
 * test_serve.c - steps of continuous batching with chunked prefill (pm_mixed_step): the mixed
 * step's attention and GEMM rows worked out by hand, the degenerate steps against the decode
 * and prefill steps they are, the fast path against the graph path on bundled scenarios in
 * every mode, and what is refused. A compiled point refuses a bad hardware point as
 * pm_serve_compute does (its check is the hardware's rules only), and its kept area, price and
 * static power follow the L2.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "testutil.h"

/* A bundled scenario without its provenance (these tests never read it): nothing to release. */
static pm_scenario load(const char *name)
{
    pm_scenario s = pm_test_load(name, NULL, 0);
    pm_scenario_release(&s);
    return s;
}

/* The node of role r in layer l of g (the first), or NULL. */
static const pm_node *node_of(const pm_graph *g, pm_node_role r, int l)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].role == r && g->nodes[i].layer == l)
            return &g->nodes[i];
    return NULL;
}

/* Decode 3 sequences at context 100 beside 2 prompts' chunks of 50 tokens after 30 cached
 * (their last) and 1 prompt's first chunk of 20 tokens. */
static pm_mixed_step hand_mix(void)
{
    pm_mixed_step m = {0};
    m.decode_sequences = 3;
    m.decode_context = 100;
    m.n_chunks = 2;
    m.chunks[0] = (pm_step_chunk){2, 50, 30, 2};
    m.chunks[1] = (pm_step_chunk){1, 20, 0, 0};
    return m;
}

static void test_hand_mixed_graph(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    const pm_mixed_step mix = hand_mix();
    pm_step step;
    assert_int_equal(pm_step_mixed(&s, &mix, &step, NULL), PM_OK);
    /* Tokens: 3 decode + 2 x 50 + 20 = 123; sequences with a token out: 3 + 2 (last chunks). */
    assert_true(step.mixed);
    assert_rel(step.tokens, 123.0, 0.0);
    assert_rel(step.sequences, 5.0, 0.0);
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    assert_int_equal(pm_graph_build_ex(&s, &step, 0, false, g, NULL), PM_OK);
    /* Two devices: 4 query heads and 1 KV head each, head dim 128, int8 (1 byte). */
    const double q = 4, kv = 1, d = 128;
    const pm_node *a = node_of(g, PM_ROLE_ATTENTION, 0);
    assert_non_null(a);
    /* Positions scored: decode 3 x 100 = 300; chunks 2 x (80^2 - 30^2) / 2 = 5500 and
     * 1 x 20^2 / 2 = 200 query-key pairs per head: 6000 in all. */
    const double scored = 300 + 5500 + 200;
    assert_rel(a->flop, 4 * q * scored * d + 5 * q * scored, 1e-15);
    /* Cached positions read: 3 x 100 (decode) + 2 x 30 (the chunks' prefix) + 0 = 360, K and
     * V of one KV head. */
    assert_rel(a->kv_bytes, 2 * 360 * kv * d * 1, 1e-15);
    /* Moved: the decode tokens' query and output (2 q d each), the chunks' 120 tokens' Q, K, V
     * and output ((2 q + 2 kv) d each). */
    assert_rel(a->act_bytes, 2 * 3 * q * d + 120 * (2 * q + 2 * kv) * d, 1e-15);
    assert_false(a->kv_strided); /* one KV head per device */
    /* The GEMMs run over all 123 tokens; the LM head over the 5 sequences that emit a token. */
    const pm_node *qkv = node_of(g, PM_ROLE_QKV, 0);
    assert_non_null(qkv);
    assert_rel(qkv->m, 123, 0.0);
    const pm_node *head = node_of(g, PM_ROLE_LM_HEAD, -1);
    assert_non_null(head);
    assert_rel(head->m, 5, 0.0);
    /* The allreduce carries every token's hidden state. */
    const pm_node *ar = node_of(g, PM_ROLE_ATTN_ALLREDUCE, 0);
    assert_non_null(ar);
    assert_rel(ar->comm_bytes, 123 * 1024 * pm_dtype_bytes(pm_allreduce_dtype(&s.workload)),
               1e-15);
    pm_graph_free(g);
}

/* Multi-head latent attention in a mixed step (DeepSeek-V3, TP 8: 16 query heads a device,
 * latent rank 512, rope 64, nope 128, v 128): the decode tokens absorbed, the chunks' positions
 * decompressed, each as its own step would. */
static void test_hand_mixed_mla(void **state)
{
    (void)state;
    pm_scenario s = load("deepseek-v3-h200");
    const pm_mixed_step mix = hand_mix();
    pm_step step;
    assert_int_equal(pm_step_mixed(&s, &mix, &step, NULL), PM_OK);
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    assert_int_equal(pm_graph_build_ex(&s, &step, 0, false, g, NULL), PM_OK);
    const double q = 16, r = 512, rope = 64, nope = 128, v = 128;
    const double ekv = pm_dtype_bytes(s.workload.kv_dtype), ea = pm_dtype_bytes(s.workload.act_dtype);
    /* Layer 0, in order: the decode tokens' query into the latent space (3 rows, nope -> r per
     * head), the chunks' 2 x 80 + 20 = 180 positions' keys and values decompressed (r -> nope,
     * r -> v), the attention, the decode tokens' latent output into values (r -> v). */
    const char *const want[] = {"L0.K_UP.dec", "L0.K_UP", "L0.V_UP", "L0.RoPE", "L0.Attention",
                                "L0.V_UP.dec"};
    size_t at = 0;
    while (at < g->n_nodes && strcmp(g->nodes[at].name, "L0.K_UP.dec") != 0)
        at++;
    assert_true(at + PM_ARRAY_LEN(want) <= g->n_nodes);
    for (size_t i = 0; i < PM_ARRAY_LEN(want); i++)
        assert_string_equal(g->nodes[at + i].name, want[i]);
    const pm_node *kd = &g->nodes[at], *ku = &g->nodes[at + 1], *vu = &g->nodes[at + 2];
    const pm_node *a = &g->nodes[at + 4], *vd = &g->nodes[at + 5];
    assert_rel(kd->flop, 2 * 3 * q * nope * r, 1e-15);
    assert_rel(ku->flop, 2 * 180 * q * r * nope, 1e-15);
    assert_rel(vu->flop, 2 * 180 * q * r * v, 1e-15);
    assert_rel(vd->flop, 2 * 3 * q * r * v, 1e-15);
    /* W_UK and W_UV are read by both forms' kernels. */
    assert_rel(kd->weight_bytes, ku->weight_bytes, 1e-15);
    assert_rel(vd->weight_bytes, vu->weight_bytes, 1e-15);
    /* Attention: decode 3 x 100 positions absorbed (2 (2 r + rope) + 5 flop per head and
     * position); the chunks' 5500 + 200 query-key pairs per head decompressed (2 (nope + rope
     * + v) + 5 each). */
    assert_rel(a->flop, 3 * 100 * q * (2 * (2 * r + rope) + 5) + 5700 * q * (2 * (nope + rope + v) + 5),
               1e-15);
    /* The latent cache read: 3 x 100 decode positions and the chunks' 2 x 30 cached ones. */
    assert_rel(a->kv_bytes, 360 * (r + rope) * ekv, 1e-15);
    /* Moved: the decode tokens' latent query and output; the chunks' decompressed keys and
     * values (2 x 80 + 20 positions) and their 120 tokens' queries and outputs. */
    assert_rel(a->act_bytes, (3 * q * (2 * r + rope) + (180 + 120) * q * (nope + rope + v)) * ea,
               1e-15);
    pm_graph_free(g);
}

/* The chunks of one prompt split differently score the same pairs: (o, t1 + t2) against
 * (o, t1) then (o + t1, t2), with and without a window. */
static void test_chunk_pairs_telescope(void **state)
{
    (void)state;
    for (int window = 0; window <= 64; window += 64) {
        pm_scenario s = pm_test_hand_scenario(2);
        s.model.sliding_window = window;
        pm_mixed_step one = {0}, two = {0};
        one.n_chunks = 1;
        one.chunks[0] = (pm_step_chunk){1, 150, 40, 1};
        two.n_chunks = 2;
        two.chunks[0] = (pm_step_chunk){1, 100, 40, 0};
        two.chunks[1] = (pm_step_chunk){1, 50, 140, 1};
        double flop[2];
        const pm_mixed_step *ms[2] = {&one, &two};
        for (int k = 0; k < 2; k++) {
            pm_step step;
            assert_int_equal(pm_step_mixed(&s, ms[k], &step, NULL), PM_OK);
            pm_graph *g = pm_graph_alloc();
            assert_int_equal(pm_graph_build_ex(&s, &step, 0, false, g, NULL), PM_OK);
            flop[k] = node_of(g, PM_ROLE_ATTENTION, 0)->flop;
            pm_graph_free(g);
        }
        assert_rel(flop[1], flop[0], 1e-12);
    }
    /* Without a window the pairs are (190^2 - 40^2) / 2 = 17250 per head. */
    pm_scenario s = pm_test_hand_scenario(2);
    pm_mixed_step one = {0};
    one.n_chunks = 1;
    one.chunks[0] = (pm_step_chunk){1, 150, 40, 1};
    pm_step step;
    assert_int_equal(pm_step_mixed(&s, &one, &step, NULL), PM_OK);
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build_ex(&s, &step, 0, false, g, NULL), PM_OK);
    assert_rel(node_of(g, PM_ROLE_ATTENTION, 0)->flop, 4.0 * 4 * 17250 * 128 + 5.0 * 4 * 17250,
               1e-15);
    pm_graph_free(g);
}

static const char *const scenarios[] = {"llama70b",      "llama70b-h100", "mixtral8x7b",
                                        "gemma2-9b",     "llama8b",       "falcon7b",
                                        "qwen3-30b-a3b", "deepseek-v3-h200"};

/* The bundled scenarios whose every layer is a MoE layer under data-parallel attention (each
 * device its own sequences, one EP rank a device). */
static const char *const dp_scenarios[] = {"qwen3-30b-a3b", "llama4-scout-h100"};
static pm_scenario load_dp(const char *name)
{
    pm_scenario s = load(name);
    s.cluster.attention_data_parallel = true;
    s.cluster.expert_parallel = s.cluster.devices;
    assert_int_equal(pm_scenario_check(&s, NULL), PM_OK);
    return s;
}

/* The scenario k of the list of both: scenarios[], then dp_scenarios[] under data-parallel
 * attention. */
static pm_scenario load_any(size_t k)
{
    return k < PM_ARRAY_LEN(scenarios) ? load(scenarios[k])
                                       : load_dp(dp_scenarios[k - PM_ARRAY_LEN(scenarios)]);
}
#define N_ANY (PM_ARRAY_LEN(scenarios) + PM_ARRAY_LEN(dp_scenarios))

/* A mixed step without chunks is the decode step of its sequences: the same time, bit for bit,
 * as pm_decode_step_time at a batch of that many sequences (under data-parallel attention both
 * are the busiest rank's share of them). */
static void test_decode_only_is_decode_step(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_ANY; k++) {
        pm_scenario s = load_any(k);
        pm_mixed_step m = {0};
        m.decode_sequences = s.workload.batch;
        m.decode_context = 3000;
        for (int mode = 0; mode < PM_MODE_COUNT; mode++) {
            double mixed, decode;
            assert_int_equal(pm_mixed_step_time(&s, (pm_mode)mode, &m, &mixed, NULL), PM_OK);
            assert_int_equal(pm_decode_step_time(&s, (pm_mode)mode, 3000, &decode, NULL), PM_OK);
            assert_rel(mixed, decode, 0.0);
        }
    }
}

/* Whole prompts as one chunk each (offset 0, last) are the prefill step of the batch (under
 * data-parallel attention both the busiest rank's ceil(batch / ranks) prompts). */
static void test_whole_prompts_are_prefill(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_ANY; k++) {
        pm_scenario s = load_any(k);
        pm_mixed_step m = {0};
        m.n_chunks = 1;
        m.chunks[0] = (pm_step_chunk){s.workload.batch, 2000, 0, s.workload.batch};
        for (int mode = 0; mode < PM_MODE_COUNT; mode++) {
            double mixed, prefill;
            pm_error err;
            assert_int_equal(pm_mixed_step_time(&s, (pm_mode)mode, &m, &mixed, NULL), PM_OK);
            if (pm_step_time_graph(&s, (pm_mode)mode, PM_PHASE_PREFILL, 2000, &prefill, NULL,
                                   &err) != PM_OK)
                fail_msg("%s: %s", s.model.name, err.message);
            assert_rel(mixed, prefill, 1e-12);
        }
    }
}

/* The fast path (pm_mixed_step_time) against the graph path (build, insert, cost, schedule) on
 * mixed steps of every bundled kind: dense, MoE, windowed layers, multi-query. */
static void test_fast_matches_graph(void **state)
{
    (void)state;
    const pm_mixed_step mixes[] = {
        {4, 1000, 1, {{1, 512, 0, 0}}, 0},
        {16, 8000, 2, {{1, 256, 4096, 1}, {2, 128, 0, 0}}, 0},
        {1, 50, 1, {{3, 2048, 6000, 3}}, 0},
        {0.5, 20000, 1, {{1, 1, 0, 1}}, 0},
        /* Speculative decoding's verify steps (issue 45): alone, and beside a chunk. */
        {16, 8000, 0, {{0, 0, 0, 0}}, 4},
        {4, 1000, 1, {{1, 512, 0, 0}}, 3},
    };
    for (size_t k = 0; k < N_ANY; k++) {
        pm_scenario s = load_any(k);
        for (size_t i = 0; i < PM_ARRAY_LEN(mixes); i++) {
            pm_step step;
            assert_int_equal(pm_step_mixed(&s, &mixes[i], &step, NULL), PM_OK);
            for (int mode = 0; mode < PM_MODE_COUNT; mode++) {
                double fast, ref;
                pm_error err;
                if (pm_mixed_step_time(&s, (pm_mode)mode, &mixes[i], &fast, &err) != PM_OK)
                    fail_msg("%s: %s", s.model.name, err.message);
                if (pm_step_time_graph_step(&s, (pm_mode)mode, &step, &ref, NULL, &err) != PM_OK)
                    fail_msg("%s: %s", s.model.name, err.message);
                if (!(fabs(fast - ref) <= 1e-12 * ref))
                    fail_msg("%s, mix %zu, %s: fast %.17g, graph %.17g", s.model.name, i,
                             pm_mode_name((pm_mode)mode), fast, ref);
            }
        }
    }
}

/* The runtime's host work counts the sequences the step schedules: 64 decode tokens beside one
 * prompt's chunk are 65 sequences, 64 x 42.1 us more host work than a step of the scenario's
 * batch of 1 would say (vllm's sequence_overhead_us), in every mode, on both paths. */
static void test_host_work_counts_the_step(void **state)
{
    (void)state;
    const char *const ov[] = {"runtime=vllm", "workload.batch=1"};
    pm_scenario s = pm_test_load("llama70b-h100", ov, 2);
    pm_scenario at65 = s, at1 = s;
    at65.workload.batch = 65;
    pm_mixed_step m = {0};
    m.decode_sequences = 64;
    m.decode_context = 2000;
    m.n_chunks = 1;
    m.chunks[0] = (pm_step_chunk){1, 256, 512, 1};
    pm_step step;
    assert_int_equal(pm_step_mixed(&s, &m, &step, NULL), PM_OK);
    for (int mode = 0; mode < PM_MODE_COUNT; mode++) {
        double fast, ref65, ref1;
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)mode, &m, &fast, NULL), PM_OK);
        assert_int_equal(pm_step_time_graph_step(&at65, (pm_mode)mode, &step, &ref65, NULL, NULL),
                         PM_OK);
        assert_int_equal(pm_step_time_graph_step(&at1, (pm_mode)mode, &step, &ref1, NULL, NULL),
                         PM_OK);
        assert_rel(fast, ref65, 1e-12);
        assert_rel(fast - ref1, 64 * 42.1e-6, 1e-9);
    }
    pm_scenario_release(&s);
}

/* Chunked prefill's point: a chunk beside the decode tokens costs less than its own step, and
 * more tokens never make a step faster. */
static void test_mixing_is_cheaper_and_monotone(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_mixed_step dec = {0}, chunk = {0}, both = {0};
    dec.decode_sequences = both.decode_sequences = 32;
    dec.decode_context = both.decode_context = 4000;
    chunk.n_chunks = both.n_chunks = 1;
    chunk.chunks[0] = both.chunks[0] = (pm_step_chunk){1, 256, 1024, 0};
    for (int mode = 0; mode < PM_MODE_COUNT; mode++) {
        double t_dec, t_chunk, t_both;
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)mode, &dec, &t_dec, NULL), PM_OK);
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)mode, &chunk, &t_chunk, NULL), PM_OK);
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)mode, &both, &t_both, NULL), PM_OK);
        assert_true(t_both < t_dec + t_chunk); /* the weights are read once for both */
        assert_true(t_both >= t_dec && t_both >= t_chunk);
        double prev = 0.0;
        for (int64_t t = 64; t <= 2048; t *= 2) {
            both.chunks[0].tokens = t;
            double time;
            assert_int_equal(pm_mixed_step_time(&s, (pm_mode)mode, &both, &time, NULL), PM_OK);
            assert_true(time >= prev);
            prev = time;
        }
        both.chunks[0].tokens = 256;
    }
}

static void test_refused(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    pm_error err;
    double t;
    pm_mixed_step m = hand_mix();
    assert_int_equal(pm_mixed_step_time(NULL, PM_MODE_SERIAL, &m, &t, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_mixed_step_time(&s, PM_MODE_COUNT, &m, &t, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_mixed_step_time(&s, PM_MODE_SERIAL, NULL, &t, &err), PM_ERR_INVALID_ARG);
    pm_mixed_step bad = m;
    bad.n_chunks = PM_MAX_STEP_CHUNKS + 1;
    assert_int_equal(pm_mixed_step_time(&s, PM_MODE_SERIAL, &bad, &t, &err), PM_ERR_INVALID_ARG);
    bad = m;
    bad.chunks[1].tokens = 0;
    assert_int_equal(pm_mixed_step_time(&s, PM_MODE_SERIAL, &bad, &t, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "chunk group 1"));
    bad = m;
    bad.chunks[0].count = NAN;
    assert_int_equal(pm_mixed_step_time(&s, PM_MODE_SERIAL, &bad, &t, &err), PM_ERR_INVALID_ARG);
    bad = m;
    bad.decode_sequences = -1;
    assert_int_equal(pm_mixed_step_time(&s, PM_MODE_SERIAL, &bad, &t, &err), PM_ERR_INVALID_ARG);
    pm_mixed_step none = {0};
    assert_int_equal(pm_mixed_step_time(&s, PM_MODE_SERIAL, &none, &t, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "no token"));
}

/* ---------------------------------------------------------------- served workloads */

static pm_serve_result serve(const pm_scenario *s, int64_t isl, int64_t osl, double n,
                             int64_t budget, pm_serve_rule rule)
{
    const pm_serve_workload w = {isl, osl, n, budget, rule, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    pm_serve_result r;
    pm_error err;
    if (pm_serve_compute(s, &w, &r, &err) != PM_OK)
        fail_msg("pm_serve_compute(%s, N %g): %s", s->model.name, n, err.message);
    return r;
}

/* At concurrency 1 a served workload is the static estimate at batch 1: its TTFT the prefill,
 * bit for bit, and its end-to-end time the request's. The served steady state costs the decode
 * steps at their mean context, input + (output - 2) / 2 = 2048 + 127.5, rounded to 2048 + 128:
 * half a position of every step's cache, within 1e-5 of summing the steps one by one. */
static void test_concurrency_one_is_the_static_estimate(void **state)
{
    (void)state;
    for (size_t k = 0; k < PM_ARRAY_LEN(scenarios); k++) {
        pm_scenario s = load(scenarios[k]);
        const int64_t isl = 2048, osl = 257;
        s.workload.batch = 1;
        s.workload.seq_len = isl + osl - 1; /* the estimate's decode steps: osl - 1 */
        s.workload.prefill_frac = (double)isl / (double)s.workload.seq_len;
        pm_estimate e;
        assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
        assert_int_equal(e.prefill_tokens, isl);
        for (int rule = 0; rule < PM_SERVE_RULE_COUNT; rule++) {
            const pm_serve_result r = serve(&s, isl, osl, 1, isl, (pm_serve_rule)rule);
            for (int m = 0; m < PM_MODE_COUNT; m++) {
                assert_rel(r.modes[m].ttft_s, e.modes[m].prefill_s, 1e-12);
                assert_rel(r.modes[m].e2e_s, e.modes[m].request_s, 1e-5);
                assert_rel(r.modes[m].tpot_s, e.modes[m].tpot_mean_s, 1e-5);
            }
        }
    }
}

/* A wave at the scenario's batch with a budget that holds every prompt is the static estimate
 * at that batch: one prefill step of the batch's prompts (TTFT bit for bit), then the batch's
 * decode steps (the request within 1e-5, the decode steps at their mean context). */
static void test_wave_is_the_static_batch(void **state)
{
    (void)state;
    for (size_t k = 0; k < PM_ARRAY_LEN(scenarios); k++) {
        pm_scenario s = load(scenarios[k]);
        const int64_t isl = 1024, osl = 130; /* decode contexts 1024 .. 1152, mean 1088 */
        s.workload.batch = 8;
        s.workload.seq_len = isl + osl - 1;
        s.workload.prefill_frac = (double)isl / (double)s.workload.seq_len;
        pm_estimate e;
        assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
        const pm_serve_workload w = {isl, osl, 8, 8 * isl, PM_SERVE_PREFILL_FIRST, 0, 0,
                                     PM_SERVE_WAVE, 0, 0, {{0}}};
        pm_serve_result r;
        assert_int_equal(pm_serve_compute(&s, &w, &r, NULL), PM_OK);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            assert_rel(r.modes[m].ttft_s, e.modes[m].prefill_s, 1e-12);
            assert_rel(r.modes[m].e2e_s, e.modes[m].request_s, 1e-5);
        }
    }
}

/* A wave of 5 prompts, 2 a step (the budget holds two): steps of 2, 2 and 1 prompts, then 5
 * sequences decode. Prompts end at t1, 2 t1 and 2 t1 + t2: TTFT (2 t1 + 2 x 2 t1 + 2 t1 + t2) /
 * 5; every request ends with the cycle 2 t1 + t2 + (osl - 1) td; the first step's prompts wait
 * t1 + t2 + td for their second token. */
static void test_wave_by_hand(void **state)
{
    (void)state;
    const char *const ov[] = {"runtime=vllm"};
    pm_scenario s = pm_test_load("llama70b-h100", ov, 1);
    const int64_t isl = 3000, osl = 101;
    const pm_serve_workload w = {isl, osl, 5, 2 * isl + 100, PM_SERVE_PREFILL_FIRST, 0, 0,
                                 PM_SERVE_WAVE, 0, 0, {{0}}};
    pm_serve_result r;
    assert_int_equal(pm_serve_compute(&s, &w, &r, NULL), PM_OK);
    pm_mixed_step two = {0}, one = {0}, dec = {0};
    two.n_chunks = one.n_chunks = 1;
    two.chunks[0] = (pm_step_chunk){2, isl, 0, 2};
    one.chunks[0] = (pm_step_chunk){1, isl, 0, 1};
    dec.decode_sequences = 5;
    dec.decode_context = isl + (osl - 2) / 2 + 1; /* 3000 + 49.5, rounded */
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double t1, t2, td;
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &two, &t1, NULL), PM_OK);
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &one, &t2, NULL), PM_OK);
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &dec, &td, NULL), PM_OK);
        const double cycle = 2 * t1 + t2 + (osl - 1) * td, ttft = (8 * t1 + t2) / 5;
        const pm_serve_mode *x = &r.modes[m];
        assert_rel(x->ttft_s, ttft, 1e-12);
        assert_rel(x->e2e_s, cycle, 1e-12);
        assert_rel(x->tpot_s, (cycle - ttft) / (osl - 1), 1e-12);
        assert_rel(x->tpot_max_s, t1 + t2 + td, 1e-12);
        assert_rel(x->tokens_per_s_per_device, 5.0 * osl / cycle / s.cluster.devices, 1e-12);
        assert_true(t1 > t2 && t2 > td);
    }
    assert_rel(r.prefill_steps, 3, 0.0);
    /* The staggered prefill-first steady state prefills the prompts as they end (one a step
     * here): its first token comes sooner than the wave's. */
    pm_serve_workload st = w;
    st.arrival = PM_SERVE_STAGGERED;
    pm_serve_result rs;
    assert_int_equal(pm_serve_compute(&s, &st, &rs, NULL), PM_OK);
    assert_true(rs.modes[PM_MODE_SERIAL].ttft_s < r.modes[PM_MODE_SERIAL].ttft_s);
    /* Under decode-first a wave of more than a step's prompts spreads into groups: refused;
     * one the budget holds is prefill-first's. */
    pm_serve_workload df = w;
    df.rule = PM_SERVE_DECODE_FIRST;
    pm_error err;
    assert_int_equal(pm_serve_compute(&s, &df, &rs, &err), PM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "holds every prompt"));
    df.chunk_budget = 5 * isl;
    pm_serve_workload pf = df;
    pf.rule = PM_SERVE_PREFILL_FIRST;
    pm_serve_result rd, rp;
    assert_int_equal(pm_serve_compute(&s, &df, &rd, &err), PM_OK);
    assert_int_equal(pm_serve_compute(&s, &pf, &rp, &err), PM_OK);
    assert_rel(rd.modes[PM_MODE_PRESERVE].e2e_s, rp.modes[PM_MODE_PRESERVE].e2e_s, 0.0);
    assert_rel(rd.modes[PM_MODE_PRESERVE].ttft_s, rp.modes[PM_MODE_PRESERVE].ttft_s, 0.0);
    df.arrival = (pm_serve_arrival)7;
    assert_int_equal(pm_serve_compute(&s, &df, &rs, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(pm_serve_arrival_name(PM_SERVE_WAVE), "wave");
    assert_string_equal(pm_serve_arrival_name((pm_serve_arrival)7), "?");
    pm_scenario_release(&s);
}

/* An open loop at a request rate: the rate a closed loop of 24 sequences serves gives back 24
 * sequences in flight and the closed loop's figures; half the rate one sequence serves runs
 * every request alone (its latencies), the devices idle between requests (static power over
 * the idle time, by hand); a rate beyond the most the HBM's sequences serve is saturated. */
static void test_request_rate(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    const int64_t isl = 2048, osl = 512;
    pm_serve_workload w = {isl, osl, 24, 2048, PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    pm_serve_result closed, open, one;
    assert_int_equal(pm_serve_compute(&s, &w, &closed, NULL), PM_OK);
    w.concurrency = 1;
    assert_int_equal(pm_serve_compute(&s, &w, &one, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        pm_serve_workload o = w;
        o.request_rate_per_s = closed.modes[m].requests_per_s;
        assert_int_equal(pm_serve_compute(&s, &o, &open, NULL), PM_OK);
        const pm_serve_mode *x = &open.modes[m], *c = &closed.modes[m];
        assert_rel(x->in_flight, 24, 1e-6);
        assert_rel(x->ttft_s, c->ttft_s, 1e-6);
        assert_rel(x->tpot_s, c->tpot_s, 1e-6);
        assert_rel(x->requests_per_s, c->requests_per_s, 1e-6);
        assert_false(x->saturated);
        assert_rel(open.request_rate_per_s, c->requests_per_s, 0.0);
        /* Half what one sequence serves. */
        o.request_rate_per_s = one.modes[m].requests_per_s / 2;
        assert_int_equal(pm_serve_compute(&s, &o, &open, NULL), PM_OK);
        x = &open.modes[m];
        const pm_serve_mode *u = &one.modes[m];
        assert_rel(x->ttft_s, u->ttft_s, 0.0);
        assert_rel(x->e2e_s, u->e2e_s, 0.0);
        assert_rel(x->in_flight, 0.5, 1e-12);
        assert_rel(x->tokens_per_s_per_device, u->tokens_per_s_per_device / 2, 1e-12);
        double p_static;
        assert_int_equal(pm_static_power(&s.accel, &p_static, NULL), PM_OK);
        /* Idle per request: 1 / rate - e2e = e2e. */
        assert_rel(x->energy_per_token_J,
                   u->energy_per_token_J + s.cluster.devices * p_static * u->e2e_s / osl, 1e-12);
    }
    /* Beyond what the HBM's sequences serve. */
    w.request_rate_per_s = 1e6;
    assert_int_equal(pm_serve_compute(&s, &w, &open, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(open.modes[m].saturated);
        assert_true(isnan(open.modes[m].ttft_s));
        /* At the most sequences whose cache fits: the cap's own closed loop says so. */
        assert_true(fabs(open.modes[m].in_flight - open.max_concurrency) < 1.0 + 1e-9);
        assert_true(open.kv_bytes_per_device + open.weight_bytes_per_device <=
                    open.hbm_usable_bytes_per_device * (1 + 2.0 / open.max_concurrency));
        assert_true(open.modes[m].requests_per_s < 1e6);
    }
    /* A wave is a closed loop's. */
    w.arrival = PM_SERVE_WAVE;
    w.rule = PM_SERVE_PREFILL_FIRST;
    pm_error err;
    assert_int_equal(pm_serve_compute(&s, &w, &open, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "closed loop"));
    w.arrival = PM_SERVE_STAGGERED;
    w.request_rate_per_s = -1;
    assert_int_equal(pm_serve_compute(&s, &w, &open, &err), PM_ERR_INVALID_ARG);
}

/* An open loop where the closed loop's throughput falls with the concurrency (Llama-3-70B on
 * 8 H100s, 2048 in and out: 510 sequences serve more than the 542 the HBM holds, whose steps
 * run another wave of GEMM tiles): a rate between the two is served, not saturated, at the
 * smallest concurrency that serves it: exactly the rate, Little's law (in flight = rate x e2e),
 * and a concurrency 2 % below serves less. */
static void test_request_rate_where_throughput_falls(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_serve_workload w = {2048, 2048, 510, 2048, PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    pm_serve_result at_peak, open, below;
    assert_int_equal(pm_serve_compute(&s, &w, &at_peak, NULL), PM_OK);
    w.request_rate_per_s = 1e6; /* saturated: the cap's closed loop */
    pm_serve_result cap;
    assert_int_equal(pm_serve_compute(&s, &w, &cap, NULL), PM_OK);
    const int m = PM_MODE_SERIAL;
    assert_true(cap.modes[m].in_flight > 510);
    assert_true(at_peak.modes[m].requests_per_s > cap.modes[m].requests_per_s * 1.005);
    const double rate = (at_peak.modes[m].requests_per_s + cap.modes[m].requests_per_s) / 2;
    w.request_rate_per_s = rate;
    assert_int_equal(pm_serve_compute(&s, &w, &open, NULL), PM_OK);
    const pm_serve_mode *x = &open.modes[m];
    assert_false(x->saturated);
    assert_rel(x->requests_per_s, rate, 1e-9);
    assert_rel(x->tokens_per_s_per_device, rate * 2048 / 8, 1e-9);
    assert_rel(x->in_flight, rate * x->e2e_s, 1e-9);
    assert_true(x->in_flight <= 510);
    w.request_rate_per_s = 0;
    w.concurrency = x->in_flight / 1.02;
    assert_int_equal(pm_serve_compute(&s, &w, &below, NULL), PM_OK);
    assert_true(below.modes[m].requests_per_s < rate);
    pm_scenario_release(&s);
}

/* A distribution of one length split over two classes is that length: every figure within
 * 1e-9 at concurrencies in both regimes and where the budget binds (the decode context 1024 +
 * 128 is a whole position, so the classes' mean is the same step). */
static void same_as_one_class(const pm_scenario *s, pm_serve_rule rule, double n,
                              int64_t budget)
{
    pm_serve_workload one = {1024, 258, n, budget, rule, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    pm_serve_workload two = one;
    two.n_classes = 2;
    two.classes[0] = (pm_length_class){1024, 258, 0.3};
    two.classes[1] = (pm_length_class){1024, 258, 0.7};
    pm_serve_result a, c;
    assert_int_equal(pm_serve_compute(s, &one, &a, NULL), PM_OK);
    assert_int_equal(pm_serve_compute(s, &two, &c, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_rel(c.modes[m].ttft_s, a.modes[m].ttft_s, 1e-9);
        assert_rel(c.modes[m].tpot_s, a.modes[m].tpot_s, 1e-9);
        assert_rel(c.modes[m].e2e_s, a.modes[m].e2e_s, 1e-9);
        assert_rel(c.modes[m].tokens_per_s_per_device, a.modes[m].tokens_per_s_per_device, 1e-9);
        assert_rel(c.modes[m].tpot_max_s, a.modes[m].tpot_max_s, 1e-9);
    }
    assert_rel(c.kv_bytes_per_device, a.kv_bytes_per_device, 1e-9);
    assert_true(c.budget_bound == a.budget_bound);
}

static void test_lengths_of_one_class(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    /* Prefill-first at a budget of 2048 holds 2 prompts a step; a decode step ends N / 257
     * requests: below one prompt a step at N = 1 .. 64, between one and two at 300, capped at
     * two at 1000. Prefill-first runs whole prompts: not at a budget of 512. */
    const double conc[] = {1, 4, 16, 64, 300, 1000};
    for (size_t i = 0; i < PM_ARRAY_LEN(conc); i++) {
        same_as_one_class(&s, PM_SERVE_DECODE_FIRST, conc[i], 2048);
        same_as_one_class(&s, PM_SERVE_DECODE_FIRST, conc[i], 512);
        same_as_one_class(&s, PM_SERVE_PREFILL_FIRST, conc[i], 2048);
    }
}

/* One client over two classes (a quarter 4000 in and 100 out, the rest 500 in and 600 out):
 * a class's prompt is one step of its chunk (the budget holds it), then its decode steps, all
 * at the classes' mean decode context. By hand from the steps' own times. */
static void test_lengths_by_hand(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_serve_workload w = {1, 1, 1, 8192, PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 2,
                           {{4000, 100, 0.25}, {500, 600, 0.75}}};
    pm_serve_result r;
    assert_int_equal(pm_serve_compute(&s, &w, &r, NULL), PM_OK);
    /* Mean decode context: (0.25 x 99 x (4000 + 49) + 0.75 x 599 x (500 + 299)) / (0.25 x 99
     * + 0.75 x 599), rounded. */
    const double ctx = (0.25 * 99 * 4049 + 0.75 * 599 * 799) / (0.25 * 99 + 0.75 * 599);
    pm_mixed_step a = {0}, b = {0}, d = {0};
    a.n_chunks = b.n_chunks = 1;
    a.chunks[0] = (pm_step_chunk){1, 4000, 0, 1};
    b.chunks[0] = (pm_step_chunk){1, 500, 0, 1};
    d.decode_sequences = 1;
    d.decode_context = llround(ctx);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double ta, tb, td;
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &a, &ta, NULL), PM_OK);
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &b, &tb, NULL), PM_OK);
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &d, &td, NULL), PM_OK);
        const double e2e = 0.25 * (ta + 99 * td) + 0.75 * (tb + 599 * td);
        const double ttft = 0.25 * ta + 0.75 * tb;
        const pm_serve_mode *x = &r.modes[m];
        assert_rel(x->ttft_s, ttft, 1e-12);
        assert_rel(x->e2e_s, e2e, 1e-12);
        assert_rel(x->tpot_s, (e2e - ttft) / (0.25 * 100 + 0.75 * 600 - 1), 1e-12);
        assert_rel(x->tokens_per_s, (0.25 * 100 + 0.75 * 600) / e2e, 1e-12);
        assert_rel(x->tpot_max_s, td, 1e-12); /* one client: no chunk beside its decode */
    }
    /* Refused: a wave; prefill-first with a prompt beyond the budget, or with a class of one
     * output token beside decoding ones; too many classes; a share of 0. */
    pm_error err;
    w.arrival = PM_SERVE_WAVE;
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "staggered requests only"));
    w.arrival = PM_SERVE_STAGGERED;
    w.rule = PM_SERVE_PREFILL_FIRST;
    w.chunk_budget = 2048;
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "class 0: 4000"));
    w.chunk_budget = 8192;
    w.classes[0].output_tokens = 1;
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "one token (class 0)"));
    w.classes[0].output_tokens = 100;
    w.rule = PM_SERVE_DECODE_FIRST;
    w.n_classes = PM_MAX_LENGTH_CLASSES + 1;
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_ERR_INVALID_ARG);
    w.n_classes = 2;
    w.classes[1].share = 0;
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "length class 1"));
}

/* Prefill-first over two classes (half 100 in and 11 out, half 300 in and 31 out), budget
 * 1000, by hand from the steps' own times. A sequence of either class decodes 10 or 30 steps:
 * 20 on average, so a decode step of N sequences ends N / 20 requests, at the mean decode
 * context (0.5 x 10 x (100 + 4.5) + 0.5 x 30 x (300 + 14.5)) / 20 = 262. */
static void test_lengths_prefill_first_by_hand(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_serve_workload w = {1, 1, 4, 1000, PM_SERVE_PREFILL_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 2,
                           {{100, 11, 0.5}, {300, 31, 0.5}}};
    pm_serve_result r4, r100;
    assert_int_equal(pm_serve_compute(&s, &w, &r4, NULL), PM_OK);
    w.concurrency = 100;
    assert_int_equal(pm_serve_compute(&s, &w, &r100, NULL), PM_OK);
    /* N = 4: 0.2 requests a decode step, each prompt a prefill step of its own (one of class a
     * or of class b, half each). N = 100: 5 requests a decode step, the budget holds
     * floor(1000 / 200) = 5 prompts: one prefill step of 2.5 of each class after every decode
     * step. */
    pm_mixed_step a = {0}, b = {0}, d4 = {0}, d100 = {0}, mixed = {0};
    a.n_chunks = b.n_chunks = 1;
    a.chunks[0] = (pm_step_chunk){1, 100, 0, 1};
    b.chunks[0] = (pm_step_chunk){1, 300, 0, 1};
    d4.decode_sequences = 4;
    d4.decode_context = d100.decode_context = 262;
    d100.decode_sequences = 100;
    mixed.n_chunks = 2;
    mixed.chunks[0] = (pm_step_chunk){2.5, 100, 0, 2.5};
    mixed.chunks[1] = (pm_step_chunk){2.5, 300, 0, 2.5};
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double ta, tb, td4, td100, tm;
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &a, &ta, NULL), PM_OK);
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &b, &tb, NULL), PM_OK);
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &d4, &td4, NULL), PM_OK);
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &d100, &td100, NULL), PM_OK);
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &mixed, &tm, NULL), PM_OK);
        /* N = 4: a cycle of one decode step and 0.2 prefill steps, half of each class. Mean
         * output 21 tokens; TTFT a prefill step of the request's class; the slowest gap a
         * decode step and the longer prefill step. */
        const double rps4 = 0.2 / (td4 + 0.2 * (0.5 * ta + 0.5 * tb));
        const pm_serve_mode *x = &r4.modes[m];
        assert_rel(x->requests_per_s, rps4, 1e-12);
        assert_rel(x->tokens_per_s, 21.0 * rps4, 1e-12);
        assert_rel(x->ttft_s, 0.5 * ta + 0.5 * tb, 1e-12);
        assert_rel(x->e2e_s, 4.0 / rps4, 1e-12);
        assert_rel(x->tpot_s, (4.0 / rps4 - (0.5 * ta + 0.5 * tb)) / 20.0, 1e-12);
        assert_rel(x->tpot_max_s, td4 + (ta > tb ? ta : tb), 1e-12);
        /* N = 100: a decode step and one prefill step of five prompts. */
        const double rps100 = 5.0 / (td100 + tm);
        x = &r100.modes[m];
        assert_rel(x->requests_per_s, rps100, 1e-12);
        assert_rel(x->ttft_s, tm, 1e-12);
        assert_rel(x->tpot_s, (100.0 / rps100 - tm) / 20.0, 1e-12);
        assert_rel(x->tpot_max_s, td100 + tm, 1e-12);
    }
    /* Every sequence in flight decodes, holding on average over its decode steps
     * (0.5 x 10 x (100 + 5) + 0.5 x 30 x (300 + 15)) / 20 = 262.5 positions. */
    assert_rel(r4.decode_sequences, 4.0, 0.0);
    assert_rel(r4.prefilling, 0.0, 0.0);
    pm_scenario one = s;
    one.workload.batch = 1;
    pm_footprint fp;
    assert_int_equal(pm_footprint_compute(&one, NULL, 263, &fp, NULL), PM_OK);
    assert_rel(r4.kv_bytes_per_device, 4.0 * fp.kv_bytes, 1e-12);
}

/* The step counts by hand (they do not depend on any step time). */
static void test_steady_state_counts(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    /* Decode-first, 4 sequences, prompts of 1000 under a budget of 2048: 2045 tokens left to
     * one prompt beside 3 decode tokens, so a prompt takes T = 1 step; a request lives T + 100
     * steps, so a share n = 4 x 1 / 101 of the steps carries a prompt. */
    pm_serve_result r = serve(&s, 1000, 101, 4, 2048, PM_SERVE_DECODE_FIRST);
    assert_rel(r.prefill_steps, 1.0, 0.0);
    assert_rel(r.mixed_step_frac, 4.0 / 101.0, 1e-15);
    assert_rel(r.prefilling, 4.0 / 101.0, 1e-15);
    assert_rel(r.decode_sequences, 4.0 - 4.0 / 101.0, 1e-15);
    assert_false(r.budget_bound);
    /* 64 sequences, budget 512: one prompt at a time would take ceil(1000 / 449) = 3 steps and
     * cover 64 x 3 / 103 > 1 of the steps, and r (T + 100) = 64 needs r x 1000 > 512 - 100 r
     * tokens a step: the budget binds, r = 512 / 1100 requests a step, 100 r decoding. */
    r = serve(&s, 1000, 101, 64, 512, PM_SERVE_DECODE_FIRST);
    assert_true(r.budget_bound);
    assert_rel(r.decode_sequences, 512.0 * 100.0 / 1100.0, 1e-12);
    assert_rel(r.prefilling, 64.0 - 512.0 * 100.0 / 1100.0, 1e-12);
    assert_rel(r.prefill_tokens_per_mixed_step, 512.0 - 512.0 * 100.0 / 1100.0, 1e-12);
    /* Every token after the first takes one full step. */
    for (int m = 0; m < PM_MODE_COUNT; m++)
        assert_rel(r.modes[m].tpot_s, r.modes[m].mixed_step_s, 1e-12);
    /* Prefill-first, 64 sequences, 100 decode steps each: a decode step ends 0.64 requests,
     * prefilled one a step: 0.64 prefill steps per decode step. */
    r = serve(&s, 1000, 101, 64, 2048, PM_SERVE_PREFILL_FIRST);
    assert_rel(r.decode_sequences, 64.0, 0.0);
    assert_rel(r.mixed_step_frac, 0.64 / 1.64, 1e-15);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_serve_mode *x = &r.modes[m];
        /* A cycle: one decode step and 0.64 prefill steps end 0.64 requests. */
        assert_rel(x->requests_per_s, 0.64 / (x->decode_step_s + 0.64 * x->mixed_step_s), 1e-12);
        assert_rel(x->ttft_s, x->mixed_step_s, 0.0);
    }
}

/* Little's law, and the fronts' shape: more sequences never raise the rate each user sees, nor
 * (while the cache fits) lower the throughput per device in serial and fused mode. PRESERVE's
 * may fall: Algorithm 1 prefetches a node whole or not at all, and once one step's decode KV
 * outgrows the L2 window its attention is no longer prefetched (llama70b on the 910B: 515
 * tokens/s per device at 256 sequences, 471 at 512, where serial rises from 460 to 471). */
static void test_served_properties(void **state)
{
    (void)state;
    static const char *const names[] = {"llama70b", "llama70b-h100", "mixtral8x7b", "gemma2-9b"};
    for (size_t k = 0; k < PM_ARRAY_LEN(names); k++) {
        pm_scenario s = load(names[k]);
        for (int rule = 0; rule < PM_SERVE_RULE_COUNT; rule++) {
            double prev_tput[PM_MODE_COUNT] = {0}, prev_user[PM_MODE_COUNT];
            for (int m = 0; m < PM_MODE_COUNT; m++)
                prev_user[m] = INFINITY;
            for (double n = 1; n <= 1024; n *= 2) {
                const pm_serve_result r = serve(&s, 1024, 256, n, 2048, (pm_serve_rule)rule);
                if (!r.fits_hbm)
                    break;
                for (int m = 0; m < PM_MODE_COUNT; m++) {
                    const pm_serve_mode *x = &r.modes[m];
                    assert_rel(x->requests_per_s * x->e2e_s, n, 1e-12);
                    assert_rel(x->e2e_s, x->ttft_s + 255.0 * x->tpot_s, 1e-12);
                    if (m != PM_MODE_PRESERVE &&
                        x->tokens_per_s_per_device < prev_tput[m] * (1 - 1e-12))
                        fail_msg("%s, %s, %s: throughput falls at N %g", names[k],
                                 pm_serve_rule_name((pm_serve_rule)rule),
                                 pm_mode_name((pm_mode)m), n);
                    if (x->tokens_per_s_per_user > prev_user[m] * (1 + 1e-12))
                        fail_msg("%s, %s, %s: the user's rate rises at N %g", names[k],
                                 pm_serve_rule_name((pm_serve_rule)rule),
                                 pm_mode_name((pm_mode)m), n);
                    prev_tput[m] = x->tokens_per_s_per_device;
                    prev_user[m] = x->tokens_per_s_per_user;
                    assert_true(x->tpot_max_s >= x->tpot_s * (1 - 1e-12));
                }
            }
        }
    }
}

/* With streaming consumers (the 910B's) a larger L2 never makes a served PRESERVE slower. */
static void test_more_l2_never_slower_streaming(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    assert_int_equal(s.accel.prefetch_consumer, PM_CONSUMER_STREAM);
    double prev = 0.0;
    for (double mib = 16; mib <= 512; mib *= 2) {
        s.accel.l2_capacity_bytes = mib * 1048576.0;
        const pm_serve_result r = serve(&s, 4096, 512, 16, 2048, PM_SERVE_DECODE_FIRST);
        const double t = r.modes[PM_MODE_PRESERVE].tokens_per_s_per_device;
        assert_true(t >= prev * (1 - 1e-12));
        prev = t;
    }
}

/* The cache: at the concurrency it reports as the most that fits, it fits, one more does not. */
static void test_served_memory(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_serve_result r = serve(&s, 8192, 1024, 1, 16384, PM_SERVE_PREFILL_FIRST);
    const double most = r.max_concurrency;
    assert_true(most > 1);
    r = serve(&s, 8192, 1024, most, 16384, PM_SERVE_PREFILL_FIRST);
    assert_true(r.fits_hbm);
    r = serve(&s, 8192, 1024, most + 1, 16384, PM_SERVE_PREFILL_FIRST);
    assert_false(r.fits_hbm);
    /* A deployment that cannot hold its sequences serves nothing within the limits (there are
     * none here: it showed its whole throughput as goodput). */
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(r.modes[m].tokens_per_s_per_device > 0);
        assert_false(r.modes[m].meets_limits);
        assert_false(r.modes[m].goodput_tokens_per_s_per_device > 0.0);
    }
    /* Prefill-first: every sequence decodes, each holding 8192 + 1023 / 2 positions on
     * average: the cache is that many positions of K and V, 80 layers, 1 KV head per device of
     * 8 (128 wide, fp8 or as the workload says). */
    pm_footprint one;
    s.workload.batch = 1;
    assert_int_equal(pm_footprint_compute(&s, NULL, 8704, &one, NULL), PM_OK);
    assert_rel(r.kv_bytes_per_device, (most + 1) * one.kv_bytes, 1e-12);
}

/* Data-parallel attention: each of the 8 ranks holds its own sequences' cache, the busiest
 * ceil(n / 8) of n (plan.c's rule, the static estimate's), beside the weights, whole on every
 * rank but the experts. DeepSeek-V3 in fp8 on 8 H200s, prefill-first, prompts of 2048 and 2048
 * out: every sequence decodes, holding 2048 + 2047 / 2 = 3071.5 positions, rounded to 3072.
 * MLA's cache per position: the latent and the rope key, (512 + 64) x 2 B (bf16) x 61 layers
 * = 70,272 B; one sequence 70,272 x 3072 = 215,875,584 B.
 * Weights per device (test_moe.c's counts, the attention and the LM head whole): the MLA
 * attention 7168 x 1536 + 7168 x 576 + 1536 x 128 x 192 + 512 x 128 x 256 + 128 x 128 x 7168
 * = 187,105,280 a layer, x 61 = 11,413,422,080; the 3 dense MLPs tensor parallel over the 8,
 * 3 x 49,545,216 = 148,635,648; 58 MoE layers of 1,455,161,344 = 84,399,357,952; the LM head
 * and the embedding 129280 x 7168 = 926,679,040 each: 97,814,773,760 B (91.10 GiB). Room:
 * 141 GiB = 151,397,597,184 less those, 53,582,823,424 B, 248.21 sequences a rank: 248 whole
 * ones, 8 x 248 = 1984 in flight (1985 puts 249 on one rank). Before the rule the cache of all
 * 64 counted on each device: 248 in flight, 13,816,037,376 B at 64. */
static void test_served_memory_dp_attention_by_hand(void **state)
{
    (void)state;
    pm_scenario s = load("deepseek-v3-h200");
    s.cluster.attention_data_parallel = true;
    const double one = 70272.0 * 3072.0, weights = 97814773760.0;
    pm_serve_result r = serve(&s, 2048, 2048, 64, 2048, PM_SERVE_PREFILL_FIRST);
    assert_rel(r.decode_sequences, 64.0, 0.0);
    assert_rel(r.weight_bytes_per_device, weights, 1e-15);
    assert_rel(r.hbm_usable_bytes_per_device, 141.0 * 1073741824.0, 0.0);
    assert_rel(r.kv_bytes_per_device, 8 * one, 1e-15); /* 1,727,004,672 */
    assert_rel(r.max_concurrency, 1984.0, 0.0);
    /* 65: the busiest rank holds 9 (run --batch 65 says 9 of the 65 too). */
    r = serve(&s, 2048, 2048, 65, 2048, PM_SERVE_PREFILL_FIRST);
    assert_rel(r.kv_bytes_per_device, 9 * one, 1e-15); /* 1,942,880,256 */
    r = serve(&s, 2048, 2048, 1984, 2048, PM_SERVE_PREFILL_FIRST);
    assert_true(r.fits_hbm);
    assert_rel(r.kv_bytes_per_device, 248 * one, 1e-15);
    r = serve(&s, 2048, 2048, 1985, 2048, PM_SERVE_PREFILL_FIRST);
    assert_false(r.fits_hbm);
    /* A burst's admission (pm_serve_max_sequences): whole sequences of 4096 positions,
     * 70,272 x 4096 = 287,834,112 B, 186.16 a rank: 8 x 186 = 1488. */
    double most, w;
    assert_int_equal(pm_serve_max_sequences(&s, 4096, &most, &w, NULL), PM_OK);
    assert_rel(most, 8 * 186.0, 0.0);
    assert_rel(w, weights, 1e-15);
    /* Ideal sharding splits the sequences evenly: 65 / 8 of one on each device, and
     * floor(8 x 248.21) = 1985 in flight (the split counted once: a footprint at batch 1 is
     * already an eighth of a sequence's cache under it). */
    s.options.sharding = PM_SHARDING_IDEAL;
    r = serve(&s, 2048, 2048, 65, 2048, PM_SERVE_PREFILL_FIRST);
    assert_rel(r.kv_bytes_per_device, 65.0 / 8.0 * one, 1e-15);
    assert_rel(r.max_concurrency, 1985.0, 0.0);
}

static void test_served_refused(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_serve_result r;
    pm_error err;
    pm_serve_workload w = {4096, 256, 8, 2048, PM_SERVE_PREFILL_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "must hold the prompt"));
    w = (pm_serve_workload){4096, 256, 0.5, 2048, PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_ERR_INVALID_ARG);
    w = (pm_serve_workload){0, 256, 8, 2048, PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_ERR_INVALID_ARG);
    w = (pm_serve_workload){4096, 256, 8, 2048, (pm_serve_rule)7, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_ERR_INVALID_ARG);
    w = (pm_serve_workload){4096, 256, 8, 2048, PM_SERVE_DECODE_FIRST, -1, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_serve_compute(NULL, &w, &r, &err), PM_ERR_INVALID_ARG);
    /* Limits: goodput is the throughput where both hold, else 0. */
    w = (pm_serve_workload){4096, 256, 8, 2048, PM_SERVE_DECODE_FIRST, 1e-6, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_OK);
    assert_false(r.modes[0].meets_limits);
    assert_rel(r.modes[0].goodput_tokens_per_s_per_device, 0.0, 0.0);
    w.ttft_limit_s = 100;
    assert_int_equal(pm_serve_compute(&s, &w, &r, &err), PM_OK);
    assert_true(r.modes[0].meets_limits);
    assert_rel(r.modes[0].goodput_tokens_per_s_per_device, r.modes[0].tokens_per_s_per_device,
               0.0);
}

/* A compiled point served at a hardware point the check refuses (checked there by the rules
 * that read the hardware only, pm_scenario_check_hardware) refuses it as pm_serve_compute does:
 * the same status, key and message, for a value of each such rule (an L2 axis value beyond the
 * magnitudes the model is defined for, a compute axis value likewise, an HBM bandwidth of NaN,
 * a link bandwidth of 0, no peak for the compute datatype); and at a good point after them it
 * answers as pm_serve_compute, bit for bit. Were the hardware not checked there, the compiled
 * point would serve the bad points (PM_OK). */
static void test_compiled_refuses_as_served(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b");
    pm_serve_workload w = {pm_workload_prompt_tokens(&s.workload),
                           pm_workload_decode_steps(&s.workload), 16, 512,
                           PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    pm_serve_compiled c;
    memset(&c, 0, sizeof c);
    pm_serve_result ref, got;
    pm_error e_ref, e_got;
    assert_int_equal(pm_serve_compute_compiled(&s, &w, &c, &got, &e_got), PM_OK);
    assert_true(c.ready);
    const pm_dtype cd = pm_compute_dtype(&s.workload);
    /* 0, 6 and 7 move the L2 capacity alone: served through its own rules
     * (pm_scenario_check_l2), the refusals must still be pm_serve_compute's. */
    for (int i = 0; i < 8; i++) {
        pm_scenario t = s;
        pm_error err;
        if (i == 0)
            assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_L2, 1e30, &err), PM_OK);
        else if (i == 6)
            t.accel.l2_capacity_bytes = 0.0;
        else if (i == 7)
            t.accel.l2_capacity_bytes = NAN;
        else if (i == 1)
            assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_COMPUTE, 1e40, &err), PM_OK);
        else if (i == 2)
            t.accel.hbm_bandwidth_bytes_per_s = NAN;
        else if (i == 3)
            t.cluster.link_bandwidth_bytes_per_s = 0.0;
        else if (i == 4)
            t.accel.peak_flop_per_s[cd] = 0.0;
        else if (i == 5)
            t.accel.l2_bandwidth_bytes_per_s = -1.0;
        const pm_status st = pm_serve_compute(&t, &w, &ref, &e_ref);
        assert_int_not_equal(st, PM_OK);
        assert_int_equal(pm_serve_compute_compiled(&t, &w, &c, &got, &e_got), st);
        assert_string_equal(e_got.path, e_ref.path);
        assert_string_equal(e_got.message, e_ref.message);
    }
    pm_scenario t = s;
    pm_error err;
    assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_L2, 64.0 * 1048576.0, &err), PM_OK);
    assert_int_equal(pm_serve_compute(&t, &w, &ref, &e_ref), PM_OK);
    assert_int_equal(pm_serve_compute_compiled(&t, &w, &c, &got, &e_got), PM_OK);
    assert_memory_equal(&ref, &got, sizeof ref);
    pm_serve_compiled_release(&c);
}

/* A compiled point keeps the area, price and static power of the accelerator it last served
 * (figures_memoised): served at an L2 capacity, then at a second, then at the first again with
 * another HBM bandwidth (which those figures do not read: kept), each answer is
 * pm_serve_compute's bit for bit, and the figures follow the L2 (its area: more L2, more mm2
 * and fewer tokens/s per mm2). A memo keyed on less than the L2 would answer the second point
 * with the first's mm2. */
static void test_compiled_figures_follow_the_l2(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b");
    assert_true(s.accel.area.present && s.accel.cost.present && s.accel.energy.present);
    pm_serve_workload w = {pm_workload_prompt_tokens(&s.workload),
                           pm_workload_decode_steps(&s.workload), 16, 512,
                           PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
    pm_serve_compiled c;
    memset(&c, 0, sizeof c);
    const double l2_mib[] = {32, 96, 32};
    const double hbm_x[] = {1, 1, 0.5};
    pm_serve_result got[3];
    for (int i = 0; i < 3; i++) {
        pm_scenario t = s;
        pm_error err;
        assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_L2, l2_mib[i] * 1048576.0, &err), PM_OK);
        assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_HBM_BW,
                                              s.accel.hbm_bandwidth_bytes_per_s * hbm_x[i], &err),
                         PM_OK);
        pm_serve_result ref;
        assert_int_equal(pm_serve_compute(&t, &w, &ref, &err), PM_OK);
        assert_int_equal(pm_serve_compute_compiled(&t, &w, &c, &got[i], &err), PM_OK);
        assert_memory_equal(&ref, &got[i], sizeof ref);
    }
    assert_true(got[1].die_mm2 > got[0].die_mm2);
    assert_memory_equal(&got[2].die_mm2, &got[0].die_mm2, sizeof(double));
    pm_serve_compiled_release(&c);
}

/* Data-parallel replicas: 4 replicas at 32 sequences in flight are each the scenario's group
 * at 8 (closed loop), and at 2 requests/s each at 0.5 (open loop): per-device, per-user and
 * latency figures are one replica's, the totals 4 times them. Fewer sequences than replicas
 * are refused. */
static void test_served_replicas(void **state)
{
    (void)state;
    pm_scenario one = load("llama70b-h100"), four = one;
    four.cluster.data_parallel = 4;
    pm_error err;
    for (int rate = 0; rate < 2; rate++) {
        pm_serve_workload w4 = {2048, 256, 32, 2048, PM_SERVE_DECODE_FIRST, 0, 0,
                                PM_SERVE_STAGGERED, rate ? 2.0 : 0.0, 0, {{0}}};
        pm_serve_workload w1 = w4;
        w1.concurrency = 8;
        w1.request_rate_per_s = rate ? 0.5 : 0.0;
        pm_serve_result r4, r1;
        assert_int_equal(pm_serve_compute(&four, &w4, &r4, &err), PM_OK);
        assert_int_equal(pm_serve_compute(&one, &w1, &r1, &err), PM_OK);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            const pm_serve_mode *a = &r4.modes[m], *b = &r1.modes[m];
            assert_rel(a->tokens_per_s_per_device, b->tokens_per_s_per_device, 0);
            assert_rel(a->tokens_per_s_per_user, b->tokens_per_s_per_user, 0);
            assert_rel(a->ttft_s, b->ttft_s, 0);
            assert_rel(a->energy_per_token_J, b->energy_per_token_J, 0);
            assert_rel(a->tokens_per_s, 4 * b->tokens_per_s, 0);
            assert_rel(a->requests_per_s, 4 * b->requests_per_s, 0);
            assert_rel(a->in_flight, 4 * b->in_flight, 0);
        }
        assert_rel(r4.max_concurrency, 4 * r1.max_concurrency, 0);
        assert_rel(r4.kv_bytes_per_device, r1.kv_bytes_per_device, 0);
        assert_rel(r4.request_rate_per_s, w4.request_rate_per_s, 0);
    }
    pm_serve_workload w = {2048, 256, 3, 2048, PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED,
                           0, 0, {{0}}};
    pm_serve_result r;
    assert_int_equal(pm_serve_compute(&four, &w, &r, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "at least one sequence in flight on each"));
}

/* The most in flight whose cache fits is a fixed point: what a sequence holds depends on how
 * many are in flight (a queued prompt holds half its own), so at the cap the closed loop's own
 * max_concurrency is the cap (within a sequence), whatever concurrency w names; with 4 replicas
 * it is 4 times one's. Chunks of 512 tokens, 2048-token prompts: the budget binds from a few
 * hundred sequences and the queue grows, so the cap read at 256 in flight (543 sequences)
 * lies well below the fixed point. */
static void test_max_in_flight_is_a_fixed_point(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100"), four = s;
    four.cluster.data_parallel = 4;
    pm_serve_workload w = {2048, 2048, 256, 512, PM_SERVE_DECODE_FIRST, 0, 0,
                           PM_SERVE_STAGGERED, 0, 0, {{0}}};
    pm_error err;
    pm_serve_result at256, at_cap;
    double cap, cap_other, cap4;
    assert_int_equal(pm_serve_compute(&s, &w, &at256, &err), PM_OK);
    assert_int_equal(pm_serve_max_in_flight(&s, &w, &cap, &err), PM_OK);
    w.concurrency = 7;
    assert_int_equal(pm_serve_max_in_flight(&s, &w, &cap_other, &err), PM_OK);
    assert_rel(cap_other, cap, 0);
    w.concurrency = cap;
    assert_int_equal(pm_serve_compute(&s, &w, &at_cap, &err), PM_OK);
    assert_true(fabs(at_cap.max_concurrency - cap) <= 1.0); /* a floor: two neighbours */
    assert_true(at_cap.fits_hbm);
    assert_true(cap > at256.max_concurrency + 100);
    w.concurrency = 8;
    assert_int_equal(pm_serve_max_in_flight(&four, &w, &cap4, &err), PM_OK);
    assert_rel(cap4, 4 * cap, 1e-12);
    /* Not clamped to the open loop's scan: one-token requests fit 1.67 million (their cache a
     * few KiB each), a fixed point past 1e6 as any other. */
    w = (pm_serve_workload){1, 1, 1, 512, PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0,
                            {{0}}};
    assert_int_equal(pm_serve_max_in_flight(&s, &w, &cap, &err), PM_OK);
    assert_true(cap > 1e6);
    w.concurrency = cap;
    assert_int_equal(pm_serve_compute(&s, &w, &at_cap, &err), PM_OK);
    assert_true(fabs(at_cap.max_concurrency - cap) <= 1.0);
    /* One H100 does not hold Llama-3-70B's 131 GiB of bf16 weights beside nothing: no
     * sequence fits, 0 (not the scan's floor of one). */
    s.cluster.devices = 1;
    assert_int_equal(pm_serve_max_in_flight(&s, &w, &cap, &err), PM_OK);
    assert_rel(cap, 0.0, 0.0);
}

/* A served request past the trained context is warned of, as the scenario's sequence is:
 * Falcon-7B states 2048 positions; 1500 in + 1000 out is 2500 tokens, 1000 + 1000 is 2000;
 * with classes the longest one is named; a model that states none is never warned of. */
static void test_served_lengths_past_the_trained_context(void **state)
{
    (void)state;
    pm_scenario s = load("falcon7b");
    assert_int_equal(s.model.max_position_embeddings, 2048);
    pm_serve_workload w = {.input_tokens = 1000, .output_tokens = 1000};
    char note[256] = "";
    assert_false(pm_serve_workload_warning(&s, &w, note, sizeof note));
    w.output_tokens = 1048; /* 2048: the last position the model was trained for */
    assert_false(pm_serve_workload_warning(&s, &w, note, sizeof note));
    w.output_tokens = 1049;
    assert_true(pm_serve_workload_warning(&s, &w, note, sizeof note));
    assert_non_null(strstr(note, "1000 + 1049 tokens exceeds the model's max_position_embeddings "
                                 "2048"));
    w.n_classes = 3; /* input and output unused: the classes' longest, 1500 + 1000 */
    w.classes[0] = (pm_length_class){500, 100, 0.5};
    w.classes[1] = (pm_length_class){1500, 1000, 0.25};
    w.classes[2] = (pm_length_class){1800, 200, 0.25};
    assert_true(pm_serve_workload_warning(&s, &w, note, sizeof note));
    assert_non_null(strstr(note, "1500 + 1000 tokens (the longest class)"));
    w.classes[1].output_tokens = 100;
    assert_false(pm_serve_workload_warning(&s, &w, NULL, 0));
    w.classes[1].output_tokens = 1000;
    s.model.max_position_embeddings = 0;
    assert_false(pm_serve_workload_warning(&s, &w, note, sizeof note));
}

/* Every concurrency of a range serves (session 41's tour: 33 of 601 refused, "finishing in [0,
 * count]"): a prompt's chunk group counts r p_i (I_i / t) prompts with r p_i of them finishing,
 * equal where a prompt fits one step, and the product rounded one way and the quotient the
 * other left the finishing an ulp above the count. The same over the single length's budget-
 * bound step and an open loop past the capacity (a saturated row, not a refusal). */
static void test_every_concurrency_serves(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_serve_workload w = {1024, 258, 1, 2048, PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED,
                           0, 0, {{0}}};
    pm_serve_workload two = w;
    two.n_classes = 2;
    two.classes[0] = (pm_length_class){500, 50, 0.2};
    two.classes[1] = (pm_length_class){2000, 1000, 0.8};
    pm_serve_result r;
    pm_error err;
    for (int n = 100; n <= 700; n++) {
        w.concurrency = two.concurrency = n;
        if (pm_serve_compute(&s, &two, &r, &err) != PM_OK)
            fail_msg("two classes at concurrency %d: %s", n, err.message);
        if (pm_serve_compute(&s, &w, &r, &err) != PM_OK)
            fail_msg("one length at concurrency %d: %s", n, err.message);
    }
    two.classes[0] = (pm_length_class){1000, 100, 0.5};
    two.classes[1] = (pm_length_class){3000, 300, 0.5};
    const double rates[] = {10.2, 12, 15, 20};
    for (size_t i = 0; i < PM_ARRAY_LEN(rates); i++) {
        two.request_rate_per_s = rates[i];
        if (pm_serve_compute(&s, &two, &r, &err) != PM_OK)
            fail_msg("rate %g: %s", rates[i], err.message);
    }
    pm_scenario_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_served_replicas),
        cmocka_unit_test(test_hand_mixed_graph),
        cmocka_unit_test(test_hand_mixed_mla),
        cmocka_unit_test(test_chunk_pairs_telescope),
        cmocka_unit_test(test_decode_only_is_decode_step),
        cmocka_unit_test(test_whole_prompts_are_prefill),
        cmocka_unit_test(test_fast_matches_graph),
        cmocka_unit_test(test_host_work_counts_the_step),
        cmocka_unit_test(test_mixing_is_cheaper_and_monotone),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_concurrency_one_is_the_static_estimate),
        cmocka_unit_test(test_wave_is_the_static_batch),
        cmocka_unit_test(test_wave_by_hand),
        cmocka_unit_test(test_request_rate),
        cmocka_unit_test(test_request_rate_where_throughput_falls),
        cmocka_unit_test(test_lengths_of_one_class),
        cmocka_unit_test(test_lengths_by_hand),
        cmocka_unit_test(test_lengths_prefill_first_by_hand),
        cmocka_unit_test(test_steady_state_counts),
        cmocka_unit_test(test_served_properties),
        cmocka_unit_test(test_more_l2_never_slower_streaming),
        cmocka_unit_test(test_served_memory),
        cmocka_unit_test(test_served_memory_dp_attention_by_hand),
        cmocka_unit_test(test_served_refused),
        cmocka_unit_test(test_compiled_refuses_as_served),
        cmocka_unit_test(test_max_in_flight_is_a_fixed_point),
        cmocka_unit_test(test_compiled_figures_follow_the_l2),
        cmocka_unit_test(test_served_lengths_past_the_trained_context),
        cmocka_unit_test(test_every_concurrency_serves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
