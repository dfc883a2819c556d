/*
 * test_alloc_eval.c - allocation failures along the evaluate path: for every N, the N-th
 * allocation (and every one after it) fails, and each call must return PM_ERR_NOMEM, leave its
 * outputs empty and leak nothing (the sanitizer build of CI checks the leaks), until N passes
 * the number of allocations the call makes and it succeeds. The load path is covered by
 * test_alloc.c; the hook is src/alloc.c.
 */
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#include "testutil.h"
#include "internal.h"

static pm_scenario load(const char *name)
{
    return pm_test_load(name, NULL, 0);
}

typedef pm_status (*call_fn)(const pm_scenario *s, void *scratch);

/* Runs f with the N-th allocation failing for N = 1, 2, ... until it succeeds; returns the
 * number of allocations the successful call made. */
static int exhaust(const char *what, call_fn f, const pm_scenario *s, void *scratch)
{
    for (long n = 1; n < 100000; n++) {
        pm_alloc_fail_after(n);
        const long before = pm_alloc_count();
        const pm_status st = f(s, scratch);
        const long made = pm_alloc_count() - before;
        pm_alloc_fail_after(-1);
        if (st == PM_OK) {
            if (made >= n) /* it succeeded although allocation n failed */
                fail_msg("%s: succeeded with allocation %ld of %ld failing", what, n, made);
            return (int)made;
        }
        if (st != PM_ERR_NOMEM)
            fail_msg("%s: allocation %ld failing gave %s, not PM_ERR_NOMEM", what, n,
                     pm_status_name(st));
    }
    fail_msg("%s: never succeeded", what);
    return -1;
}

static pm_status do_estimate(const pm_scenario *s, void *scratch)
{
    pm_estimate *e = scratch;
    return pm_estimate_compute(s, e, NULL);
}

static pm_status do_step(const pm_scenario *s, void *scratch)
{
    (void)scratch;
    double t;
    return pm_decode_step_time(s, PM_MODE_PRESERVE, 1000, &t, NULL);
}

static pm_status do_step_model(const pm_scenario *s, void *scratch)
{
    (void)scratch;
    pm_step_model *m = NULL;
    pm_status st = pm_step_model_new(s, PM_MODE_PRESERVE, &m, NULL);
    if (st != PM_OK)
        assert_null(m);
    pm_step_model_free(m);
    return st;
}

static pm_status do_graph_and_schedule(const pm_scenario *s, void *scratch)
{
    (void)scratch;
    pm_graph *g = pm_graph_alloc();
    if (!g)
        return PM_ERR_NOMEM;
    pm_schedule sc = {0};
    pm_status st = pm_graph_build_mode(s, PM_MODE_PRESERVE, PM_PHASE_DECODE, 1000, 3, g, NULL);
    if (st == PM_OK)
        st = pm_schedule_compute(s, g, &sc, NULL);
    if (st != PM_OK)
        assert_null(sc.slots);
    char *text = NULL;
    if (st == PM_OK)
        st = pm_graph_to_json(g, &text, NULL);
    free(text);
    pm_schedule_release(&sc);
    pm_graph_free(g);
    return st;
}

static pm_status do_views(const pm_scenario *s, void *scratch)
{
    (void)scratch;
    pm_explain e;
    pm_status st = pm_explain_compute(s, PM_PHASE_DECODE, 1000, &e, NULL);
    if (st != PM_OK)
        assert_null(e.graph);
    pm_explain_release(&e);
    pm_timeline t;
    if (st == PM_OK) {
        st = pm_timeline_compute(s, PM_MODE_PRESERVE, PM_PHASE_DECODE, 1000, &t, NULL);
        if (st != PM_OK)
            assert_null(t.graph);
        pm_timeline_release(&t);
    }
    return st;
}

static int count_points(const pm_sweep_point *p, size_t n, void *user)
{
    (void)p;
    *(size_t *)user += n;
    return 0;
}

static pm_status do_sweep(const pm_scenario *s, void *scratch)
{
    (void)scratch;
    pm_axis ax = {0};
    pm_status st = pm_axis_parse("l2=8MiB:64MiB:8MiB", 0, &ax, NULL);
    size_t n = 0;
    pm_sweep_opts o = {.threads = 1, .block_points = 3}; /* the calling thread: the hook is per thread */
    if (st == PM_OK)
        st = pm_sweep_run(s, &ax, 1, &o, count_points, &n, NULL);
    if (st == PM_OK)
        assert_int_equal(n, 8);
    pm_axis_release(&ax);
    return st;
}

static pm_status do_optimize(const pm_scenario *s, void *scratch)
{
    (void)scratch;
    pm_optimum o;
    return pm_optimize_axis(s, PM_AXIS_L2, 8 * 1048576.0, 256 * 1048576.0, 9, 1e-2, 20, &o,
                            NULL);
}

static pm_status do_optimize_count(const pm_scenario *s, void *scratch)
{
    (void)scratch;
    pm_optimum o;
    return pm_optimize_count(s, PM_AXIS_DP, PM_OBJECTIVE_MM2, 1, 2, PM_OPTIMIZE_TIE_REL_TOL, &o,
                             NULL);
}

static void test_evaluate_path_reports_every_failure(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    pm_estimate e;
    assert_true(exhaust("pm_estimate_compute", do_estimate, &s, &e) >= 1);
    assert_true(exhaust("pm_decode_step_time", do_step, &s, NULL) >= 0);
    assert_true(exhaust("pm_step_model_new", do_step_model, &s, NULL) >= 1);
    assert_true(exhaust("graph, insertion, schedule, JSON", do_graph_and_schedule, &s, NULL) >=
                4);
    assert_true(exhaust("pm_explain_compute, pm_timeline_compute", do_views, &s, NULL) >= 6);
    assert_true(exhaust("pm_sweep_run", do_sweep, &s, NULL) >= 2);
    assert_true(exhaust("pm_optimize_axis", do_optimize, &s, NULL) >= 1);
    assert_true(exhaust("pm_optimize_count", do_optimize_count, &s, NULL) >= 3);
    /* and the results after all that are the undisturbed ones */
    pm_estimate again;
    assert_int_equal(pm_estimate_compute(&s, &again, NULL), PM_OK);
    assert_memory_equal(&again, &e, sizeof e);
    pm_scenario_release(&s);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_evaluate_path_reports_every_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
