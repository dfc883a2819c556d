/*
 * test_alloc.c - allocation failures. For every N from 1 until a call succeeds, the N-th
 * allocation (and every one after it) is made to fail, and the call must return PM_ERR_NOMEM,
 * say so in err, and leave its output empty; the leak check of the sanitizer build (and
 * valgrind) then proves that each of those failed calls freed what it had taken. A second pass
 * fails only the N-th allocation and lets the rest succeed: the call must then either report
 * PM_ERR_NOMEM or produce exactly the result of an undisturbed call, so that a caller that drops
 * a failed allocation and carries on (an override silently lost) is caught too.
 *
 * cJSON allocates through the same hooks here (cJSON_InitHooks is process-global, so only a
 * test may set it; the library never does), which makes its own failures count as well.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "testutil.h"

#include "internal.h"

/* No load of a bundled file needs anywhere near this many allocations: a loop that reaches it
 * means the call never succeeds and the test is wrong. */
#define MAX_ALLOCATIONS 100000

static const char *const overrides[] = {"workload.batch=8", "accelerator.l2_capacity_MB=104",
                                        "model=llama3-8b", "cluster.devices=8",
                                        "options.hbm_sharing=true"};

static bool all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

/* A failed call: PM_ERR_NOMEM, recorded in err with a message. */
static void check_nomem(pm_status st, const pm_error *err, const char *what, long n)
{
    if (st != PM_ERR_NOMEM || err->status != PM_ERR_NOMEM || !err->message[0]) {
        char text[1200];
        pm_error_format(err, text, sizeof text);
        print_error("%s with allocation %ld failing: returned %s (err %s: \"%s\"), expected "
                    "PM_ERR_NOMEM\n",
                    what, n, pm_status_name(st), pm_status_name(err->status), text);
        fail();
    }
}

/* Both scenarios hold the same values, provenance included. */
static void check_same_scenario(const pm_scenario *a, const pm_scenario *b, long n)
{
    if (memcmp(&a->model, &b->model, sizeof a->model) != 0 ||
        memcmp(&a->accel, &b->accel, sizeof a->accel) != 0 ||
        memcmp(&a->cluster, &b->cluster, sizeof a->cluster) != 0 ||
        memcmp(&a->workload, &b->workload, sizeof a->workload) != 0 ||
        memcmp(&a->options, &b->options, sizeof a->options) != 0 ||
        strcmp(a->name, b->name) != 0) {
        print_error("allocation %ld failed once, the load succeeded, and the scenario differs "
                    "from an undisturbed load (model %s vs %s, batch %d vs %d)\n",
                    n, a->model.name, b->model.name, a->workload.batch, b->workload.batch);
        fail();
    }
    size_t count = pm_scenario_param_count(a);
    assert_int_equal(count, pm_scenario_param_count(b));
    for (size_t i = 0; i < count; i++) {
        const pm_param_info *p = pm_scenario_param(a, i), *q = pm_scenario_param(b, i);
        assert_string_equal(p->path, q->path);
        assert_string_equal(p->file, q->file);
        assert_string_equal(p->source, q->source);
        assert_true(memcmp(&p->value_si, &q->value_si, sizeof p->value_si) == 0);
    }
}

/* Loads the bundled llama70b scenario with the overrides, the n-th allocation failing (and,
 * unless once, every one after it). Returns the status; *used receives the allocations tried. */
static pm_status load_failing(long n, bool once, pm_scenario *s, pm_error *err, long *used)
{
    pm_load_opts opts = {PM_TEST_DATA_DIR, overrides, PM_ARRAY_LEN(overrides)};
    memset(s, 0x5A, sizeof *s); /* garbage in: a failed load must leave zeros */
    memset(err, 0, sizeof *err);
    long before = pm_alloc_count();
    if (once)
        pm_alloc_fail_once(n);
    else
        pm_alloc_fail_after(n);
    pm_status st = pm_scenario_load("llama70b", &opts, s, err);
    pm_alloc_fail_after(-1);
    *used = pm_alloc_count() - before;
    return st;
}

static void test_scenario_load_reports_every_allocation_failure(void **state)
{
    (void)state;
    pm_scenario ref, s;
    pm_error err;
    long total = 0;
    assert_int_equal(load_failing(-1, false, &ref, &err, &total), PM_OK);
    /* The load allocates (files, the JSON trees, provenance): otherwise this tests nothing. */
    assert_true(total > 20);
    long n;
    for (n = 1; n <= MAX_ALLOCATIONS; n++) {
        long used;
        pm_status st = load_failing(n, false, &s, &err, &used);
        if (st == PM_OK) {
            /* It only succeeds once the failing allocation is never reached. */
            assert_true(used < n);
            check_same_scenario(&s, &ref, n);
            pm_scenario_release(&s);
            break;
        }
        check_nomem(st, &err, "pm_scenario_load", n);
        assert_true(used >= n);
        if (!all_zero(&s, sizeof s)) {
            print_error("allocation %ld failing: the failed load left data in its output\n", n);
            fail();
        }
    }
    assert_int_equal(n, total + 1);
    pm_scenario_release(&ref);
}

static void test_scenario_load_never_drops_a_failed_allocation(void **state)
{
    (void)state;
    pm_scenario ref, s;
    pm_error err;
    long total = 0, used;
    assert_int_equal(load_failing(-1, false, &ref, &err, &total), PM_OK);
    for (long n = 1; n <= total; n++) {
        pm_status st = load_failing(n, true, &s, &err, &used);
        if (st == PM_OK) {
            check_same_scenario(&s, &ref, n);
            pm_scenario_release(&s);
        } else {
            check_nomem(st, &err, "pm_scenario_load (one failure)", n);
            assert_true(all_zero(&s, sizeof s));
        }
    }
    pm_scenario_release(&ref);
}

/* A graph of llama70b (one layer, after insertion) as JSON text, built without injection. */
static char *graph_text(void)
{
    pm_scenario s;
    pm_error err;
    assert_int_equal(pm_scenario_load("llama70b", &(pm_load_opts){PM_TEST_DATA_DIR, NULL, 0}, &s,
                                      &err),
                     PM_OK);
    pm_graph *g = pm_graph_alloc(), *ins = pm_graph_alloc();
    assert_non_null(g);
    assert_non_null(ins);
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 4096, 1, g, &err), PM_OK);
    assert_int_equal(pm_insert_prefetch(g, 192.0 * 1024 * 1024, ins, &err), PM_OK);
    char *text = NULL;
    assert_int_equal(pm_graph_to_json(ins, &text, &err), PM_OK);
    pm_graph_free(g);
    pm_graph_free(ins);
    pm_scenario_release(&s);
    return text;
}

static void test_graph_from_json_reports_every_allocation_failure(void **state)
{
    (void)state;
    char *text = graph_text();
    pm_graph *ref = pm_graph_alloc();
    assert_non_null(ref);
    pm_error err;
    assert_int_equal(pm_graph_from_json(text, strlen(text), "g.json", ref, &err), PM_OK);
    assert_true(ref->n_nodes > 10);
    long n;
    for (n = 1; n <= MAX_ALLOCATIONS; n++) {
        pm_graph *g = pm_graph_alloc();
        assert_non_null(g);
        long before = pm_alloc_count();
        pm_alloc_fail_after(n);
        pm_status st = pm_graph_from_json(text, strlen(text), "g.json", g, &err);
        pm_alloc_fail_after(-1);
        long used = pm_alloc_count() - before;
        if (st == PM_OK) {
            assert_true(used < n);
            assert_int_equal(g->n_nodes, ref->n_nodes);
            assert_int_equal(g->n_edges, ref->n_edges);
            assert_true(memcmp(g->nodes, ref->nodes, g->n_nodes * sizeof *g->nodes) == 0);
            pm_graph_free(g);
            break;
        }
        check_nomem(st, &err, "pm_graph_from_json", n);
        assert_int_equal(g->n_nodes, 0);
        assert_int_equal(g->n_edges, 0);
        pm_graph_free(g);
    }
    assert_true(n > 1 && n <= MAX_ALLOCATIONS);
    pm_graph_free(ref);
    free(text);
}

static void test_graph_to_json_reports_every_allocation_failure(void **state)
{
    (void)state;
    char *text = graph_text();
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    pm_error err;
    assert_int_equal(pm_graph_from_json(text, strlen(text), "g.json", g, &err), PM_OK);
    long n;
    for (n = 1; n <= MAX_ALLOCATIONS; n++) {
        char *out = (char *)&n; /* not NULL: a failure must reset it */
        pm_alloc_fail_after(n);
        pm_status st = pm_graph_to_json(g, &out, &err);
        pm_alloc_fail_after(-1);
        if (st == PM_OK) {
            assert_string_equal(out, text);
            free(out);
            break;
        }
        check_nomem(st, &err, "pm_graph_to_json", n);
        assert_null(out);
    }
    assert_true(n > 1 && n <= MAX_ALLOCATIONS);
    /* One failure at a time: the text is complete or the call fails, never a partial graph. */
    for (long k = 1; k < n; k++) {
        char *out = NULL;
        pm_alloc_fail_once(k);
        pm_status st = pm_graph_to_json(g, &out, &err);
        pm_alloc_fail_after(-1);
        if (st == PM_OK) {
            if (strcmp(out, text) != 0) {
                print_error("allocation %ld failed once and pm_graph_to_json returned PM_OK "
                            "with different text\n",
                            k);
                fail();
            }
            free(out);
        } else {
            check_nomem(st, &err, "pm_graph_to_json (one failure)", k);
            assert_null(out);
        }
    }
    pm_graph_free(g);
    free(text);
}

/* pm_file_validate on path, failing each allocation in turn until it succeeds. */
static void validate_failing_each_allocation(const char *path, pm_file_kind want)
{
    pm_load_opts opts = {PM_TEST_DATA_DIR, NULL, 0};
    pm_error err;
    pm_file_kind kind;
    if (pm_file_validate(path, &opts, &kind, &err) != PM_OK) {
        print_error("%s does not validate: %s\n", path, err.message);
        fail();
    }
    assert_int_equal(kind, want);
    long n;
    for (n = 1; n <= MAX_ALLOCATIONS; n++) {
        long before = pm_alloc_count();
        pm_alloc_fail_after(n);
        pm_status st = pm_file_validate(path, &opts, &kind, &err);
        pm_alloc_fail_after(-1);
        long used = pm_alloc_count() - before;
        if (st == PM_OK) {
            assert_true(used < n);
            break;
        }
        char what[700];
        snprintf(what, sizeof what, "pm_file_validate(%s)", path);
        check_nomem(st, &err, what, n);
    }
    if (n <= 1 || n > MAX_ALLOCATIONS) {
        print_error("%s: validation needed %ld allocations\n", path, n - 1);
        fail();
    }
}

static void test_file_validate_reports_every_allocation_failure(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/llama70b.json", PM_TEST_DATA_DIR);
    validate_failing_each_allocation(path, PM_KIND_SCENARIO);
    snprintf(path, sizeof path, "%s/accelerators/ascend-910b.json", PM_TEST_DATA_DIR);
    validate_failing_each_allocation(path, PM_KIND_ACCELERATOR);
    snprintf(path, sizeof path, "%s/clusters/ascend-multinode.json", PM_TEST_DATA_DIR);
    validate_failing_each_allocation(path, PM_KIND_CLUSTER);
    snprintf(path, sizeof path, "%s/hf/llama3-8b-config.json", PM_TEST_CONFIG_DIR);
    validate_failing_each_allocation(path, PM_KIND_MODEL);
    snprintf(path, sizeof path, "%s/valid/scenario-from-overrides.json", PM_TEST_CONFIG_DIR);
    validate_failing_each_allocation(path, PM_KIND_SCENARIO);

    /* A graph file: the graph reader runs on the re-printed tree. */
    char *text = graph_text();
    char dir[] = "/tmp/pm_test_alloc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/graph.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
    validate_failing_each_allocation(path, PM_KIND_GRAPH);
    unlink(path);
    rmdir(dir);
}

static void test_data_list_reports_every_allocation_failure(void **state)
{
    (void)state;
    long n;
    for (n = 1; n <= MAX_ALLOCATIONS; n++) {
        char **names = (char **)&n;
        size_t count = 99;
        pm_error err;
        pm_alloc_fail_after(n);
        pm_status st = pm_data_list(PM_TEST_DATA_DIR, PM_KIND_MODEL, &names, &count, &err);
        pm_alloc_fail_after(-1);
        if (st == PM_OK) {
            assert_true(count >= 6);
            pm_names_free(names, count);
            break;
        }
        check_nomem(st, &err, "pm_data_list", n);
        assert_null(names);
        assert_int_equal(count, 0);
    }
    assert_true(n > 1 && n <= MAX_ALLOCATIONS);
}

static void test_injection_hook_counts_and_fails_as_documented(void **state)
{
    (void)state;
    long before = pm_alloc_count();
    pm_alloc_fail_after(2);
    void *a = pm_malloc(8);
    void *b = pm_malloc(8);
    void *c = pm_calloc(1, 8);
    pm_alloc_fail_after(-1);
    assert_non_null(a);
    assert_null(b); /* the second from now */
    assert_null(c); /* and every one after it */
    assert_int_equal(pm_alloc_count() - before, 3);
    /* A failed realloc keeps the block. */
    pm_alloc_fail_after(1);
    void *r = pm_realloc(a, 64);
    pm_alloc_fail_after(-1);
    assert_null(r);
    memset(a, 1, 8);
    /* Once: only the n-th fails. */
    pm_alloc_fail_once(1);
    char *s1 = pm_strdup("x");
    char *s2 = pm_strdup("y");
    pm_alloc_fail_after(-1);
    assert_null(s1);
    assert_non_null(s2);
    assert_string_equal(s2, "y");
    pm_free(s2);
    pm_free(a);
    /* Off: everything succeeds. */
    void *d = pm_malloc(8);
    assert_non_null(d);
    pm_free(d);
}

int main(void)
{
    /* cJSON's own allocations are injected too; the library itself never sets the hooks. */
    cJSON_Hooks hooks = {pm_malloc, pm_free};
    cJSON_InitHooks(&hooks);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_injection_hook_counts_and_fails_as_documented),
        cmocka_unit_test(test_scenario_load_reports_every_allocation_failure),
        cmocka_unit_test(test_scenario_load_never_drops_a_failed_allocation),
        cmocka_unit_test(test_graph_from_json_reports_every_allocation_failure),
        cmocka_unit_test(test_graph_to_json_reports_every_allocation_failure),
        cmocka_unit_test(test_file_validate_reports_every_allocation_failure),
        cmocka_unit_test(test_data_list_reports_every_allocation_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
