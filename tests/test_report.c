/*
 * test_report.c - the library's report shapes: pm_estimate_to_json against what the tool
 * prints for `--config X --format json` (byte for byte, for scenarios that differ in model,
 * accelerator, devices and allreduce), its escaping of names (a quote in a model name still
 * gives JSON that parses back to the name), its errors; and the sweep's result columns.
 *
 * Usage: test_report PATH/TO/preserve-model (meson passes the build's tool).
 */
#include <stdlib.h>

#include "testutil.h"
#include "internal.h"

static const char *tool;

/* The report of the bundled scenario name with overrides (may be NULL), from the library. */
static char *library_report(const char *name, const char *const *sets, size_t n_sets)
{
    pm_load_opts o = {PM_TEST_DATA_DIR, sets, n_sets};
    pm_scenario s;
    pm_error err;
    pm_status st = pm_scenario_load(name, &o, &s, &err);
    if (st != PM_OK)
        fail_msg("load %s: %s", name, err.message);
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, &err), PM_OK);
    char *text = NULL;
    assert_int_equal(pm_estimate_to_json(&s, &e, &text, &err), PM_OK);
    pm_scenario_release(&s);
    return text;
}

/* What the tool prints for `--config name --format json [ARGS]` (args a shell fragment). */
static char *tool_report(const char *name, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "PRESERVE_MODEL_DATA='%s' '%s' --config %s --format json %s",
             PM_TEST_DATA_DIR, tool, name, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    size_t n;
    while ((n = fread(out + len, 1, cap - 1 - len, p)) > 0)
        len += n;
    out[len] = '\0';
    assert_int_equal(pclose(p), 0);
    return out;
}

static void test_report_is_the_tools_json_byte_for_byte(void **state)
{
    (void)state;
    static const struct {
        const char *scenario, *args, *set[2];
    } cases[] = {
        {"llama70b", "", {NULL, NULL}},
        {"llama8b", "--devices 8", {"cluster.devices=8", NULL}},
        {"qwen2-7b", "--batch 16 --seq 4096", {"workload.batch=16", "workload.seq_len=4096"}},
        {"paper-dse", "", {NULL, NULL}},
        {"llama70b-h100", "--set accelerator.l2_capacity_MiB=104",
         {"accelerator.l2_capacity_MiB=104", NULL}},
    };
    for (size_t i = 0; i < PM_ARRAY_LEN(cases); i++) {
        size_t n_sets = cases[i].set[1] ? 2 : cases[i].set[0] ? 1 : 0;
        char *lib = library_report(cases[i].scenario, cases[i].set, n_sets);
        char *cli = tool_report(cases[i].scenario, cases[i].args);
        if (strcmp(lib, cli) != 0)
            fail_msg("%s %s: the library's report differs from the tool's:\n%s\n---\n%s",
                     cases[i].scenario, cases[i].args, lib, cli);
        free(lib);
        free(cli);
    }
}

static void test_report_escapes_names(void **state)
{
    (void)state;
    pm_load_opts o = {PM_TEST_DATA_DIR, NULL, 0};
    pm_scenario s;
    assert_int_equal(pm_scenario_load("llama70b", &o, &s, NULL), PM_OK);
    snprintf(s.model.name, sizeof s.model.name, "say \"hi\"\\\n\tnow");
    snprintf(s.name, sizeof s.name, "a\x01z");
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    char *text = NULL;
    assert_int_equal(pm_estimate_to_json(&s, &e, &text, NULL), PM_OK);
    cJSON *j = cJSON_Parse(text);
    if (!j)
        fail_msg("not JSON:\n%s", text);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "inputs"), "model")->valuestring,
                        "say \"hi\"\\\n\tnow");
    assert_string_equal(cJSON_GetObjectItem(j, "scenario")->valuestring, "a\x01z");
    assert_non_null(strstr(text, "\"a\\u0001z\""));
    cJSON_Delete(j);
    free(text);
    pm_scenario_release(&s);
}

/* An all-zero scenario and estimate: enough for the argument checks and the writer. */
static const pm_scenario zero_scenario;
static const pm_estimate zero_estimate;

static void test_report_rejects_null_arguments(void **state)
{
    (void)state;
    char *text = NULL;
    pm_error err;
    assert_int_equal(pm_estimate_to_json(NULL, &zero_estimate, &text, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(err.status, PM_ERR_INVALID_ARG);
    assert_int_equal(pm_estimate_to_json(&zero_scenario, NULL, &text, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_estimate_to_json(&zero_scenario, &zero_estimate, NULL, NULL),
                     PM_ERR_INVALID_ARG);
    assert_null(text);
}

static void test_report_reports_allocation_failure(void **state)
{
    (void)state;
    char *text = NULL;
    pm_error err;
    pm_alloc_fail_after(1);
    pm_status st = pm_estimate_to_json(&zero_scenario, &zero_estimate, &text, &err);
    pm_alloc_fail_after(-1);
    assert_int_equal(st, PM_ERR_NOMEM);
    assert_int_equal(err.status, PM_ERR_NOMEM);
    assert_null(text);
}

static void test_sweep_columns_name_the_point_values(void **state)
{
    (void)state;
    const size_t n = pm_sweep_column_count();
    assert_int_equal(n, 54);
    assert_string_equal(pm_sweep_column_name(0), "serial_request_s");
    assert_string_equal(pm_sweep_column_name(9), "speedup_preserve_vs_serial");
    assert_string_equal(pm_sweep_column_name(15), "density_preserve_tokens_per_s_per_mm2");
    assert_string_equal(pm_sweep_column_name(16), "device_usd");
    assert_string_equal(pm_sweep_column_name(17), "serial_J_per_token");
    assert_string_equal(pm_sweep_column_name(28), "preserve_tokens_per_s_per_usd");
    assert_string_equal(pm_sweep_column_name(29), "experts_read_per_step");
    assert_string_equal(pm_sweep_column_name(30), "weight_bytes_per_device");
    assert_string_equal(pm_sweep_column_name(31), "kv_bytes_per_device");
    assert_string_equal(pm_sweep_column_name(32), "fits_hbm");
    assert_string_equal(pm_sweep_column_name(35), "allreduce_per_step_s");
    assert_string_equal(pm_sweep_column_name(36), "serial_prefill_s");
    assert_string_equal(pm_sweep_column_name(41), "preserve_decode_s");
    assert_string_equal(pm_sweep_column_name(42), "largest_die_mm2");
    assert_string_equal(pm_sweep_column_name(43), "over_reticle");
    assert_string_equal(pm_sweep_column_name(44), "compute_mm2");
    assert_string_equal(pm_sweep_column_name(53), "io_die_mm2");
    assert_null(pm_sweep_column_name(54));

    pm_sweep_point p;
    memset(&p, 0, sizeof p);
    p.status = PM_OK;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        p.estimate.modes[m].request_s = 10.0 + m;
        p.estimate.modes[m].tpot_s = 20.0 + m;
        p.estimate.modes[m].tokens_per_s = 30.0 + m;
        p.density[m] = 50.0 + m;
    }
    p.estimate.speedup_preserve_vs_serial = 40;
    p.estimate.speedup_preserve_vs_fused = 41;
    p.estimate.speedup_fused_vs_serial = 42;
    p.die_mm2 = 45;
    p.largest_die_mm2 = 900; /* over the 858 mm2 reticle */
    p.estimate.experts_read_per_step = 5.5;
    double v[55];
    v[54] = -1;
    assert_int_equal(pm_sweep_point_values(&p, v, 55), n);
    const double want[16] = {10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42, 45, 50, 51, 52};
    for (size_t i = 0; i < 16; i++)
        assert_rel(v[i], want[i], 0); /* copied, not computed: exact */
    for (size_t i = 16; i < 29; i++)
        assert_true(isnan(v[i]));     /* no energy or cost data in the estimate */
    assert_rel(v[29], 5.5, 0);        /* the MoE reads: always there */
    assert_rel(v[54], -1, 0);         /* nothing written past the columns */
    for (size_t i = 30; i < 44; i++)  /* memory and the split need neither */
        assert_false(isnan(v[i]));
    for (size_t i = 44; i < n; i++)   /* no area in the point: no blocks */
        assert_true(isnan(v[i]));
    p.estimate.energy_present = p.estimate.cost_present = true;
    p.estimate.cost.device_usd = 1000;
    p.estimate.modes[PM_MODE_PRESERVE].tokens_per_J = 0.25;
    p.estimate.weight_bytes_per_device = 70552387584.0;
    p.estimate.kv_bytes_per_device = 3;
    p.estimate.fits_hbm = true;
    p.estimate.allreduces_per_step = 160;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        p.estimate.modes[m].allreduce_decode_s = 0.5; /* the same in every mode */
        p.estimate.modes[m].prefill_s = 60.0 + m;
        p.estimate.modes[m].decode_s = 70.0 + m;
    }
    assert_int_equal(pm_sweep_point_values(&p, v, 55), n);
    /* weights, KV, fits, one allreduce, 160 of them, 160 x 0.5 = 80 s, prefill, decode */
    const double mem[12] = {70552387584.0, 3, 1, 0.5, 160, 80, 60, 61, 62, 70, 71, 72};
    for (size_t i = 0; i < 12; i++)
        assert_rel(v[30 + i], mem[i], 0);
    assert_rel(v[16], 1000, 0);
    assert_rel(v[25], 0.25, 0);
    assert_rel(v[42], 900, 0); /* the largest die, and over the reticle */
    assert_rel(v[43], 1, 0);
    p.largest_die_mm2 = NAN;   /* no area data: neither is known */
    pm_sweep_point_values(&p, v, 55);
    assert_true(isnan(v[42]) && isnan(v[43]));
    p.largest_die_mm2 = 858;   /* at the reticle: printable */
    pm_sweep_point_values(&p, v, 55);
    assert_rel(v[43], 0, 0);
    /* The package's blocks and dies, copied from the point's area. */
    p.area_present = true;
    p.area = (pm_area){.compute_mm2 = 1, .l2_mm2 = 2, .hbm_phy_mm2 = 3, .link_phy_mm2 = 4,
                       .other_mm2 = 5, .io_other_mm2 = 6, .compute_dies = 7,
                       .compute_die_mm2 = 8, .io_dies = 9, .io_die_mm2 = 10};
    pm_sweep_point_values(&p, v, 55);
    for (size_t i = 0; i < 10; i++)
        assert_rel(v[44 + i], 1.0 + (double)i, 0);

    p.status = PM_ERR_INCONSISTENT;
    assert_int_equal(pm_sweep_point_values(&p, v, 3), n);
    assert_true(isnan(v[0]) && isnan(v[2]));
    assert_rel(v[3], 20, 0); /* only the 3 asked for */
    assert_int_equal(pm_sweep_point_values(NULL, NULL, 0), n);
}

/* pm_json_number: integers whole, the fewest digits that read back, null for what is not finite. */
static void test_json_numbers_are_exact(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {2684354560.0, "2684354560"},             /* a byte count: every digit */
        {17638096896.0, "17638096896"},           /* %.6g wrote 1.76381e+10 */
        {9007199254740992.0, "9007199254740992"}, /* 2^53, 16 digits */
        {0.1, "0.1"},                             /* 15 digits read back: no 0.10000000000000001 */
        {1.5e-5, "1.5e-05"},
        {0.0, "0"},
        {(double)NAN, "null"},
        {(double)INFINITY, "null"},
        {-(double)INFINITY, "null"},
    };
    char buf[PM_JSON_NUMBER_MAX];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int n = pm_json_number(cases[i].v, buf, sizeof buf);
        assert_string_equal(buf, cases[i].text);
        assert_int_equal(n, (int)strlen(cases[i].text));
    }
    /* A double that needs all 17 digits reads back exactly: 0.1 + 0.2 is not 0.3. */
    const double third = 0.1 + 0.2;
    pm_json_number(third, buf, sizeof buf);
    const double back = strtod(buf, NULL);
    assert_memory_equal(&back, &third, sizeof back); /* the same bits */
    assert_string_equal(buf, "0.30000000000000004");
    /* The length of the whole text, whatever the room; NUL-terminated within it. */
    assert_int_equal(pm_json_number(2684354560.0, NULL, 0), 10);
    assert_int_equal(pm_json_number(2684354560.0, buf, 4), 10);
    assert_string_equal(buf, "268");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/preserve-model\n", argv[0]);
        return 2;
    }
    tool = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_is_the_tools_json_byte_for_byte),
        cmocka_unit_test(test_report_escapes_names),
        cmocka_unit_test(test_report_rejects_null_arguments),
        cmocka_unit_test(test_report_reports_allocation_failure),
        cmocka_unit_test(test_sweep_columns_name_the_point_values),
        cmocka_unit_test(test_json_numbers_are_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
