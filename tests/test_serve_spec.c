/*
 * test_serve_spec.c - speculative decoding in a served workload (issue 45): speculation off (k
 * = 0) gives the plain served workload bit for bit under every rule and in an open loop; a
 * wave's TTFT, end-to-end latency and TPOT by hand from the verify, draft and chunk steps'
 * times (the verify step's also on the graph path); decode-first's counts by hand when the chunk budget binds (each decoding sequence
 * putting k + 1 tokens in a step, a request decoding in (output - 1) / E steps); PRESERVE
 * under the verify step's wider allreduce; a draft model's weights in the served footprint.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

static pm_serve_result serve(const pm_scenario *s, const pm_serve_workload *w)
{
    pm_serve_result r;
    pm_error err;
    if (pm_serve_compute(s, w, &r, &err) != PM_OK)
        fail_msg("pm_serve_compute: %s", err.message);
    return r;
}

/* k = 0 (acceptance given, MTP named): every rule, a distribution and an open loop exactly as
 * without the block. */
static void test_k0_is_plain_serve(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b-h100", (const char *const[]){"runtime=vllm"}, 1);
    pm_scenario_release(&s); /* plain data from here: no provenance to leak */
    pm_serve_workload w[5] = {
        {3000, 101, 16, 2048, PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}},
        {1000, 101, 256, 512, PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}},
        {3000, 101, 16, 8192, PM_SERVE_PREFILL_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}},
        {3000, 101, 5, 6100, PM_SERVE_PREFILL_FIRST, 0, 0, PM_SERVE_WAVE, 0, 0, {{0}}},
        {3000, 101, 0, 2048, PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 2.0, 0, {{0}}},
    };
    pm_serve_workload mix[2] = {w[0], w[2]}; /* decode-first and prefill-first */
    for (int j = 0; j < 2; j++) {
        mix[j].n_classes = 2;
        mix[j].classes[0] = (pm_length_class){500, 50, 0.5};
        mix[j].classes[1] = (pm_length_class){4000, 300, 0.5};
    }
    for (int i = 0; i < 7; i++) {
        const pm_serve_workload *x = i < 5 ? &w[i] : &mix[i - 5];
        pm_scenario t = s;
        pm_test_speculate(&t, 0, 0.7);
        const pm_serve_result plain = serve(&s, x), spec = serve(&t, x);
        assert_memory_equal(&plain, &spec, sizeof plain);
    }
}

/* A wave of 5 prompts of 3000, 2 a step, then 100 decode steps' worth of tokens, k = 3 at a =
 * 0.6: E = 1 + 0.6 + 0.36 + 0.216 = 2.176 tokens a step, so the sequences decode in D = 100 /
 * 2.176 = 45.96 steps. A step of prompts is the target's step plus the draft's (the MTP layer
 * prefills them too): t1 (two prompts), t2 (one); a decode step is the verify step (4 tokens
 * per sequence) plus the draft's 3 steps: td = T_verify + 3 T_draft. Cycle 2 t1 + t2 + D td,
 * TTFT (8 t1 + t2) / 5 (as the plain wave's), TPOT (cycle - TTFT) / 100: the later prompts'
 * prefill steps, then D steps of td for 100 tokens. */
static void test_wave_by_hand(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b-h100", (const char *const[]){"runtime=vllm"}, 1);
    pm_scenario_release(&s); /* plain data from here: no provenance to leak */
    pm_test_speculate(&s, 3, 0.6);
    pm_scenario d;
    pm_spec_draft_scenario(&s, &d);
    const int64_t isl = 3000, osl = 101;
    const pm_serve_workload w = {isl, osl, 5, 2 * isl + 100, PM_SERVE_PREFILL_FIRST, 0, 0,
                                 PM_SERVE_WAVE, 0, 0, {{0}}};
    const pm_serve_result r = serve(&s, &w);
    const double E = 2.176, D = 100.0 / E;
    pm_mixed_step two = {0}, one = {0}, verify = {0}, draft = {0};
    two.n_chunks = one.n_chunks = 1;
    two.chunks[0] = (pm_step_chunk){2, isl, 0, 2};
    one.chunks[0] = (pm_step_chunk){1, isl, 0, 1};
    draft.decode_sequences = verify.decode_sequences = 5;
    draft.decode_context = verify.decode_context = isl + (osl - 2) / 2 + 1; /* 3049.5 rounded */
    verify.decode_tokens_per_sequence = 4;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double t[4], u[3];
        const pm_mixed_step *steps[3] = {&two, &one, &draft};
        for (int i = 0; i < 3; i++) {
            assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, steps[i], &t[i], NULL), PM_OK);
            assert_int_equal(pm_mixed_step_time(&d, (pm_mode)m, steps[i], &u[i], NULL), PM_OK);
        }
        assert_int_equal(pm_mixed_step_time(&s, (pm_mode)m, &verify, &t[3], NULL), PM_OK);
        /* The verify step on the graph path (build, insert, cost, schedule; the runtime's host
         * work at the step's 5 sequences): the same. */
        pm_scenario at5 = s;
        at5.workload.batch = 5;
        pm_step vstep;
        double graph;
        assert_int_equal(pm_step_mixed(&s, &verify, &vstep, NULL), PM_OK);
        assert_int_equal(pm_step_time_graph_step(&at5, (pm_mode)m, &vstep, &graph, NULL, NULL),
                         PM_OK);
        assert_rel(t[3], graph, 1e-12);
        const double t1 = t[0] + u[0], t2 = t[1] + u[1], td = t[3] + 3.0 * u[2];
        const double cycle = 2 * t1 + t2 + D * td, ttft = (8 * t1 + t2) / 5;
        const pm_serve_mode *x = &r.modes[m];
        assert_rel(x->decode_step_s, td, 1e-12);
        assert_rel(x->ttft_s, ttft, 1e-12);
        assert_rel(x->e2e_s, cycle, 1e-12);
        assert_rel(x->tpot_s, (cycle - ttft) / 100.0, 1e-12);
        assert_rel(x->tokens_per_s_per_device, 5.0 * osl / cycle / s.cluster.devices, 1e-12);
        assert_true(t[3] > t[2]); /* 20 tokens verified against 5 */
    }
}

/* Decode-first at 256 sequences, prompts of 1000, 101 out, 512 tokens a step, k = 3 at a =
 * 0.6 (E = 2.176): a request decodes in D = 100 / 2.176 = 45.956 steps, putting 4 tokens in
 * each, so the budget binds (2.6 requests a step would need 2600 prompt tokens): r (1000 + 4
 * D) = 512 gives r = 512 / 1183.82 = 0.4325 requests a step, g = r D = 19.88 sequences
 * decoding beside (512 - 4 g) prompt tokens; every later token of a request one step of 1 / E:
 * TPOT = t / E, the step t served r requests: e2e = 256 t / r. */
static void test_decode_first_bound_by_hand(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b-h100", (const char *const[]){"runtime=vllm"}, 1);
    pm_scenario_release(&s); /* plain data from here: no provenance to leak */
    pm_test_speculate(&s, 3, 0.6);
    const pm_serve_workload w = {1000, 101, 256, 512, PM_SERVE_DECODE_FIRST, 0, 0,
                                 PM_SERVE_STAGGERED, 0, 0, {{0}}};
    const pm_serve_result r = serve(&s, &w);
    const double E = 2.176, D = 100.0 / E, req = 512.0 / (1000.0 + 4.0 * D), g = req * D;
    assert_true(r.budget_bound);
    assert_rel(r.decode_sequences, g, 1e-12);
    assert_rel(r.prefill_tokens_per_mixed_step, 512.0 - 4.0 * g, 1e-12);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_serve_mode *x = &r.modes[m];
        assert_rel(x->tpot_s, x->mixed_step_s / E, 1e-12);
        assert_rel(x->e2e_s, 256.0 * x->mixed_step_s / req, 1e-12);
    }
}

/* PRESERVE hides the verify step's wider allreduce ((k + 1) tokens a sequence) too, and
 * speculation at a = 0.8 beats plain decoding at low concurrency in every mode. */
static void test_preserve_and_speedup(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b", NULL, 0);
    pm_scenario_release(&s); /* plain data from here: no provenance to leak */
    pm_scenario t = s;
    pm_test_speculate(&t, 3, 0.8);
    const pm_serve_workload w = {2000, 201, 4, 2048, PM_SERVE_DECODE_FIRST, 0, 0,
                                 PM_SERVE_STAGGERED, 0, 0, {{0}}};
    const pm_serve_result plain = serve(&s, &w), spec = serve(&t, &w);
    assert_true(spec.modes[PM_MODE_PRESERVE].tpot_s < spec.modes[PM_MODE_SERIAL].tpot_s);
    for (int m = 0; m < PM_MODE_COUNT; m++)
        assert_true(spec.modes[m].tpot_s < plain.modes[m].tpot_s);
    /* Acceptance 0: one token a step for the verify and draft work, slower than plain. */
    pm_test_speculate(&t, 3, 0.0);
    const pm_serve_result none = serve(&t, &w);
    for (int m = 0; m < PM_MODE_COUNT; m++)
        assert_true(none.modes[m].tpot_s > plain.modes[m].tpot_s);
}

/* A draft model (Llama-3.1-8B for Llama-3-70B) on the same devices: its weights join each
 * device's, its cache each sequence's (more cache than the plain workload's). */
static void test_draft_model_footprint(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b", NULL, 0);
    pm_scenario t = s;
    pm_test_speculate(&t, 4, 0.7);
    t.spec.method = PM_SPEC_DRAFT_MODEL;
    pm_scenario small = pm_test_load("llama8b", NULL, 0);
    t.spec.draft = small.model;
    pm_scenario d;
    pm_spec_draft_scenario(&t, &d);
    pm_footprint fp;
    assert_int_equal(pm_footprint_compute(&d, NULL, 100, &fp, NULL), PM_OK);
    const pm_serve_workload w = {2000, 201, 8, 2048, PM_SERVE_DECODE_FIRST, 0, 0,
                                 PM_SERVE_STAGGERED, 0, 0, {{0}}};
    const pm_serve_result plain = serve(&s, &w), spec = serve(&t, &w);
    assert_rel(spec.weight_bytes_per_device, plain.weight_bytes_per_device + fp.weight_bytes,
               1e-15);
    assert_true(spec.kv_bytes_per_device > plain.kv_bytes_per_device);
    assert_true(spec.max_concurrency < plain.max_concurrency);
    pm_scenario_release(&small);
    pm_scenario_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k0_is_plain_serve),
        cmocka_unit_test(test_wave_by_hand),
        cmocka_unit_test(test_decode_first_bound_by_hand),
        cmocka_unit_test(test_preserve_and_speedup),
        cmocka_unit_test(test_draft_model_footprint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
