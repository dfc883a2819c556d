/*
 * test_burst.c - a burst of requests sent at once (pm_burst_compute): one wave and two waves
 * of prefill-first worked out by hand from the step times, decode-first's steps followed by
 * hand (the first prompts decoding while the later ones prefill), what limits the sequences
 * admitted, and what is refused.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "testutil.h"

/* A bundled scenario without its provenance (never read here): nothing to release. */
static pm_scenario load(const char *name)
{
    const char *const ov[] = {"runtime=vllm"};
    pm_scenario s = pm_test_load(name, ov, 1);
    pm_scenario_release(&s);
    return s;
}

static pm_burst_workload burst_of(int64_t n, int64_t isl, int64_t osl, int64_t budget,
                                  pm_serve_rule rule, double max_running)
{
    pm_burst_workload w = {0};
    w.requests = n;
    w.max_running = max_running;
    w.serve.input_tokens = isl;
    w.serve.output_tokens = osl;
    w.serve.chunk_budget = budget;
    w.serve.rule = rule;
    return w;
}

static double step_time(const pm_scenario *s, int m, const pm_mixed_step *x)
{
    double t;
    assert_int_equal(pm_mixed_step_time(s, (pm_mode)m, x, &t, NULL), PM_OK);
    return t;
}

/* Prefill-first, 5 requests of 3000 in and 101 out, 2 prompts a step: steps of 2, 2 and 1
 * prompts (t1, t1, t2), then 5 sequences decode 100 steps (td). Prompts end at t1, 2 t1, 2 t1
 * + t2: TTFT (2 t1 + 4 t1 + 2 t1 + t2) / 5; every request ends at E = 2 t1 + t2 + 100 td. With
 * at most 5 running, 10 requests are two such waves, the second started at E: its TTFT adds
 * E, its requests end at 2 E. 7 requests: the second wave's 2 prompts prefill in one step of
 * two (t1) and decode as 2 sequences (td2). */
static void test_prefill_first_waves_by_hand(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    const int64_t isl = 3000, osl = 101;
    pm_mixed_step two = {0}, one = {0}, dec5 = {0}, dec2 = {0};
    two.n_chunks = one.n_chunks = 1;
    two.chunks[0] = (pm_step_chunk){2, isl, 0, 2};
    one.chunks[0] = (pm_step_chunk){1, isl, 0, 1};
    dec5.decode_sequences = 5;
    dec2.decode_sequences = 2;
    dec5.decode_context = dec2.decode_context = isl + 50; /* 3000 + 99 / 2, rounded */
    pm_burst_result r1, r2, r3;
    pm_burst_workload w = burst_of(5, isl, osl, 2 * isl + 100, PM_SERVE_PREFILL_FIRST, 5);
    assert_int_equal(pm_burst_compute(&s, &w, &r1, NULL), PM_OK);
    w.requests = 10;
    assert_int_equal(pm_burst_compute(&s, &w, &r2, NULL), PM_OK);
    w.requests = 7;
    assert_int_equal(pm_burst_compute(&s, &w, &r3, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const double t1 = step_time(&s, m, &two), t2 = step_time(&s, m, &one);
        const double td = step_time(&s, m, &dec5), td2 = step_time(&s, m, &dec2);
        const double E = 2 * t1 + t2 + (osl - 1) * td, ttft = (8 * t1 + t2) / 5;
        const double tpot = (E - ttft) / (osl - 1);
        const pm_burst_mode *a = &r1.modes[m], *b = &r2.modes[m], *c = &r3.modes[m];
        assert_rel(a->ttft_s, ttft, 1e-12);
        assert_rel(a->tpot_s, tpot, 1e-12);
        assert_rel(a->makespan_s, E, 1e-12);
        assert_rel(a->e2e_s, E, 1e-12);
        assert_rel(a->tokens_per_s, 5.0 * osl / E, 1e-12);
        /* Two waves: the mean TTFT over both (ttft, and E + ttft), the makespan 2 E. */
        assert_rel(b->ttft_s, (5 * ttft + 5 * (E + ttft)) / 10, 1e-12);
        assert_rel(b->tpot_s, tpot, 1e-12);
        assert_rel(b->makespan_s, 2 * E, 1e-12);
        assert_rel(b->e2e_s, (5 * E + 5 * 2 * E) / 10, 1e-12);
        assert_rel(b->tokens_per_s_per_device, 10.0 * osl / (2 * E) / s.cluster.devices, 1e-12);
        /* 5 then 2: the second wave E2 = t1 + 100 td2, its TTFT E + t1. */
        const double E2 = t1 + (osl - 1) * td2;
        assert_rel(c->ttft_s, (5 * ttft + 2 * (E + t1)) / 7, 1e-12);
        assert_rel(c->tpot_s, (5 * tpot + 2 * (E2 - t1) / (osl - 1)) / 7, 1e-12);
        assert_rel(c->makespan_s, E + E2, 1e-12);
        assert_true(td > td2);
    }
    assert_rel(r1.admitted, 5, 0.0);
    assert_rel(r1.waves, 1, 0.0);
    assert_rel(r2.waves, 2, 0.0);
    assert_rel(r3.waves, 2, 0.0);
    assert_false(r2.hbm_binds);
}

/* Decode-first, 3 requests of 100 in and 3 out, 150 tokens a step, followed by hand:
 *   step 0: prompt 0 whole (100), prompt 1's first 50;            prompt 0's first token
 *   step 1: 1 decode (ctx 100), prompt 1's last 50 after 50, 99 of prompt 2; prompt 1's
 *   step 2: 2 decode (ctx 101 and 100: 100.5, rounded 101), prompt 2's last 1 after 99;
 *           prompt 2's first token, request 0 ends (its 2 decode steps: steps 1 and 2)
 *   step 3: 2 decode (101 and 100 again: 101), request 1 ends
 *   step 4: 1 decode (ctx 101), request 2 ends. */
static void test_decode_first_steps_by_hand(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_mixed_step k[5] = {{0}};
    k[0].n_chunks = 2;
    k[0].chunks[0] = (pm_step_chunk){1, 100, 0, 1};
    k[0].chunks[1] = (pm_step_chunk){1, 50, 0, 0};
    k[1] = (pm_mixed_step){1, 100, 2, {{1, 50, 50, 1}, {1, 99, 0, 0}}, 0};
    k[2] = (pm_mixed_step){2, 101, 1, {{1, 1, 99, 1}}, 0};
    k[3] = (pm_mixed_step){.decode_sequences = 2, .decode_context = 101};
    k[4] = (pm_mixed_step){.decode_sequences = 1, .decode_context = 101};
    const pm_burst_workload w = burst_of(3, 100, 3, 150, PM_SERVE_DECODE_FIRST, 0);
    pm_burst_result r;
    assert_int_equal(pm_burst_compute(&s, &w, &r, NULL), PM_OK);
    assert_int_equal(r.steps, 5);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double t[5];
        for (int i = 0; i < 5; i++)
            t[i] = step_time(&s, m, &k[i]);
        const double first[3] = {t[0], t[0] + t[1], t[0] + t[1] + t[2]};
        const double end[3] = {first[2], first[2] + t[3], first[2] + t[3] + t[4]};
        double ttft = 0, tpot = 0, e2e = 0;
        for (int i = 0; i < 3; i++) {
            ttft += first[i] / 3;
            tpot += (end[i] - first[i]) / 2 / 3;
            e2e += end[i] / 3;
        }
        const pm_burst_mode *x = &r.modes[m];
        assert_rel(x->ttft_s, ttft, 1e-12);
        assert_rel(x->tpot_s, tpot, 1e-12);
        assert_rel(x->e2e_s, e2e, 1e-12);
        assert_rel(x->makespan_s, end[2], 1e-12);
        assert_rel(x->tokens_per_s, 9.0 / end[2], 1e-12);
    }
}

/* Decode-first with at most 2 running: 3 requests of 100 in and 2 out, 300 tokens a step.
 * Step 0: prompts 0 and 1 whole; step 1: 2 decode (ctx 100), both end; step 2: prompt 2 (its
 * admission waited for a sequence to end); step 3: 1 decode. */
static void test_decode_first_admits_as_sequences_end(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_mixed_step k[4] = {{0}};
    k[0].n_chunks = 1;
    k[0].chunks[0] = (pm_step_chunk){2, 100, 0, 2};
    k[1] = (pm_mixed_step){.decode_sequences = 2, .decode_context = 100};
    k[2].n_chunks = 1;
    k[2].chunks[0] = (pm_step_chunk){1, 100, 0, 1};
    k[3] = (pm_mixed_step){.decode_sequences = 1, .decode_context = 100};
    const pm_burst_workload w = burst_of(3, 100, 2, 300, PM_SERVE_DECODE_FIRST, 2);
    pm_burst_result r;
    assert_int_equal(pm_burst_compute(&s, &w, &r, NULL), PM_OK);
    assert_rel(r.admitted, 2, 0.0);
    assert_false(r.hbm_binds);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double t[4];
        for (int i = 0; i < 4; i++)
            t[i] = step_time(&s, m, &k[i]);
        const double T = t[0] + t[1] + t[2] + t[3];
        assert_rel(r.modes[m].ttft_s, (2 * t[0] + t[0] + t[1] + t[2]) / 3, 1e-12);
        assert_rel(r.modes[m].makespan_s, T, 1e-12);
        assert_rel(r.modes[m].tpot_s, (2 * t[1] + t[3]) / 3, 1e-12);
    }
}

/* The HBM's limit: the sequences whose cache of input + output positions fits; it binds a
 * burst larger than it when the runtime sets none. */
static void test_hbm_limit(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_burst_workload w = burst_of(1000000, 30000, 2, 32768, PM_SERVE_PREFILL_FIRST, 0);
    pm_burst_result r;
    assert_int_equal(pm_burst_compute(&s, &w, &r, NULL), PM_OK);
    /* By hand: the usable HBM less the weights over one sequence's cache of 30002 positions
     * (footprint.c's rule at batch 1). */
    pm_scenario one = s;
    one.workload.batch = 1;
    pm_footprint fp;
    assert_int_equal(pm_footprint_compute(&one, NULL, 30002, &fp, NULL), PM_OK);
    const double fit = floor((pm_hbm_usable_bytes(&s) - fp.weight_bytes) / fp.kv_bytes);
    assert_rel(r.max_concurrency, fit, 0.0);
    assert_rel(r.admitted, fit, 0.0);
    assert_true(r.hbm_binds);
    assert_rel(r.waves, ceil(1000000 / fit), 0.0);
    w.max_running = 4;
    assert_int_equal(pm_burst_compute(&s, &w, &r, NULL), PM_OK);
    assert_rel(r.admitted, 4, 0.0);
    assert_false(r.hbm_binds);
}

static void expect(const pm_scenario *s, const pm_burst_workload *w, pm_status st,
                   const char *path)
{
    pm_error err;
    pm_burst_result r;
    assert_int_equal(pm_burst_compute(s, w, &r, &err), st);
    assert_string_equal(err.path, path);
}

static void test_refused(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_burst_workload w = burst_of(0, 100, 10, 2048, PM_SERVE_DECODE_FIRST, 0);
    expect(&s, &w, PM_ERR_INVALID_ARG, "requests");
    w.requests = 10;
    w.max_running = -1;
    expect(&s, &w, PM_ERR_INVALID_ARG, "max_running");
    /* Whole sequences only: 0.5 admitted none and never ended; 2.5 ran 2 under decode-first
     * and 2.5 under prefill-first. */
    const double parts[] = {0.5, 1e-300, 2.5, NAN};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        w.max_running = parts[i];
        expect(&s, &w, PM_ERR_INVALID_ARG, "max_running");
        w.serve.rule = PM_SERVE_PREFILL_FIRST;
        expect(&s, &w, PM_ERR_INVALID_ARG, "max_running");
        w.serve.rule = PM_SERVE_DECODE_FIRST;
    }
    w.max_running = 0;
    w.serve.n_classes = 2;
    w.serve.classes[0] = (pm_length_class){100, 10, 0.5};
    w.serve.classes[1] = (pm_length_class){200, 10, 0.5};
    expect(&s, &w, PM_ERR_UNSUPPORTED, "serve.n_classes");
    w.serve.n_classes = 0;
    w.serve.chunk_budget = 10; /* not above the 10 running sequences */
    expect(&s, &w, PM_ERR_INVALID_ARG, "serve.chunk_budget");
    w.serve.chunk_budget = 2048;
    pm_scenario t = s;
    pm_test_speculate(&t, 3, 0.6);
    expect(&t, &w, PM_ERR_UNSUPPORTED, "speculative");
    t = s;
    t.cluster.data_parallel = 2;
    expect(&t, &w, PM_ERR_UNSUPPORTED, "cluster.dp");
    /* Prefill-first: a prompt beyond the budget (pm_serve_compute's refusal). */
    w.serve.rule = PM_SERVE_PREFILL_FIRST;
    w.serve.input_tokens = 4096;
    pm_burst_result r;
    assert_int_equal(pm_burst_compute(&s, &w, &r, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_burst_compute(NULL, &w, &r, NULL), PM_ERR_INVALID_ARG);
}

/* The columns: names and values in one order. */
static void test_columns(void **state)
{
    (void)state;
    assert_string_equal(pm_burst_column_name(0), "requests");
    assert_string_equal(pm_burst_column_name(1), "serial_ttft_s");
    assert_null(pm_burst_column_name(pm_burst_column_count()));
    pm_burst_result r = {0};
    r.modes[PM_MODE_PRESERVE].makespan_s = 7;
    r.admitted = 3;
    double v[64];
    assert_int_equal(pm_burst_point_values(9, &r, v, 64), pm_burst_column_count());
    for (size_t i = 0; i < pm_burst_column_count(); i++) {
        const char *n = pm_burst_column_name(i);
        const double want = strcmp(n, "requests") == 0              ? 9
                            : strcmp(n, "preserve_makespan_s") == 0 ? 7
                            : strcmp(n, "admitted") == 0            ? 3
                                                                    : 0;
        assert_rel(v[i], want, 0.0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefill_first_waves_by_hand),
        cmocka_unit_test(test_decode_first_steps_by_hand),
        cmocka_unit_test(test_decode_first_admits_as_sequences_end),
        cmocka_unit_test(test_hbm_limit),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
