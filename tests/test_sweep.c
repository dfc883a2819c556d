/*
 * test_sweep.c - the area model by hand, axis parsing (ranges, units, geometric steps, lists and
 * every kind of bad range), and setting axes on a scenario.
 */
#include <gsl/gsl_errno.h>

#include "testutil.h"

static void test_area_sums_the_sourced_coefficients(void **state)
{
    (void)state;
    pm_accelerator a = {0};
    a.peak_flop_per_s[PM_DTYPE_INT8] = 800e12;
    a.peak_flop_per_s[PM_DTYPE_BF16] = 354e12; /* 2 x 354 = 708 < 800: int8 sets the peak */
    a.l2_capacity_bytes = 192.0 * 1048576.0;
    a.area.present = true;
    a.area.compute_mm2_per_flop_per_s = 0.5e-12;     /* 0.5 mm2 per TOPS */
    a.area.l2_mm2_per_byte = 2.5 / 1048576.0;        /* 2.5 mm2 per MiB */
    a.area.hbm_phy_mm2_per_stack = 15.0;
    a.area.hbm_stacks = 4;
    a.area.link_phy_mm2_per_link = 2.0;
    a.area.links = 7;
    a.area.other_mm2 = 100.0;
    pm_area ar;
    assert_int_equal(pm_area_compute(&a, &ar, NULL), PM_OK);
    /* 0.5 x 800 = 400; 2.5 x 192 = 480; 15 x 4 = 60; 2 x 7 = 14; + 100 = 1054 mm2. Tolerance:
     * a few ulps of the unit conversions. */
    assert_rel(ar.compute_mm2, 400.0, 1e-12);
    assert_rel(ar.l2_mm2, 480.0, 1e-12);
    assert_rel(ar.die_mm2, 1054.0, 1e-12);
    a.peak_flop_per_s[PM_DTYPE_BF16] = 500e12; /* now 2 x 500 = 1000 TOPS int8-equivalent */
    assert_rel(pm_int8_equivalent_peak(&a), 1000e12, 1e-15);
}

/* Compute dies stacked on I/O dies (compute_on_io, MI300X's XCDs on its IODs): each I/O die is
 * at least the compute it carries. The same package as above in 4 compute dies over 2 I/O dies
 * holding the links, HBM PHYs and L2: compute 400 + other 100 = 500 mm2, 125 a compute die; the
 * I/O dies' blocks 14 + 60 + 480 + 20 = 574 > 500 stand (287 each). With the L2 at 32 MiB
 * (80 mm2) they are 14 + 60 + 80 + 20 = 174 < 500: built to 500 (250 each, their rest
 * 20 + 326 = 346), the package 1000 mm2, where side by side it is 674. */
static void test_area_io_dies_carry_the_stacked_compute(void **state)
{
    (void)state;
    pm_accelerator a = {0};
    a.peak_flop_per_s[PM_DTYPE_INT8] = 800e12;
    a.l2_capacity_bytes = 192.0 * 1048576.0;
    a.area = (pm_area_params){.present = true, .compute_mm2_per_flop_per_s = 0.5e-12,
                              .l2_mm2_per_byte = 2.5 / 1048576.0, .hbm_phy_mm2_per_stack = 15.0,
                              .hbm_stacks = 4, .link_phy_mm2_per_link = 2.0, .links = 7,
                              .other_mm2 = 100.0, .compute_dies = 4, .io_dies = 2,
                              .io_holds = PM_IO_LINKS_HBM_L2, .io_other_mm2 = 20.0,
                              .compute_on_io = true};
    pm_area ar;
    assert_int_equal(pm_area_compute(&a, &ar, NULL), PM_OK);
    assert_rel(ar.compute_die_mm2, 125.0, 1e-12);
    assert_rel(ar.io_die_mm2, 287.0, 1e-12);
    assert_rel(ar.io_other_mm2, 20.0, 1e-12);
    assert_rel(ar.die_mm2, 1074.0, 1e-12);
    a.l2_capacity_bytes = 32.0 * 1048576.0;
    assert_int_equal(pm_area_compute(&a, &ar, NULL), PM_OK);
    assert_rel(ar.compute_die_mm2, 125.0, 1e-12);
    assert_rel(ar.io_die_mm2, 250.0, 1e-12);
    assert_rel(ar.io_other_mm2, 346.0, 1e-12);
    assert_rel(ar.die_mm2, 1000.0, 1e-12);
    a.area.compute_on_io = false;
    assert_int_equal(pm_area_compute(&a, &ar, NULL), PM_OK);
    assert_rel(ar.io_die_mm2, 87.0, 1e-12);
    assert_rel(ar.die_mm2, 674.0, 1e-12);
    /* Stacked on I/O dies a package does not have: refused at the key. */
    a.area.compute_on_io = true;
    a.area.io_dies = 0;
    a.area.io_other_mm2 = 0.0;
    pm_error err;
    assert_int_equal(pm_area_compute(&a, &ar, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "$.accelerator.area.compute_on_io");
}

static void test_area_requires_coefficients(void **state)
{
    (void)state;
    pm_accelerator a = {0};
    pm_area ar;
    pm_error err;
    assert_int_equal(pm_area_compute(&a, &ar, &err), PM_ERR_MISSING);
    assert_string_equal(err.path, "$.accelerator.area");
}

static void test_density_divides_by_devices_and_die(void **state)
{
    (void)state;
    pm_estimate e = {0};
    e.modes[PM_MODE_PRESERVE].tokens_per_s = 1000.0;
    assert_rel(pm_density(&e, PM_MODE_PRESERVE, 4, 500.0), 0.5, 1e-15);
    assert_true(pm_density(&e, PM_MODE_PRESERVE, 0, 500.0) <= 0.0);
}

static void test_axis_ranges_units_steps_and_lists(void **state)
{
    (void)state;
    pm_axis ax;
    assert_int_equal(pm_axis_parse("l2=8MiB:256MiB:8MiB", 0, &ax, NULL), PM_OK);
    assert_int_equal(ax.kind, PM_AXIS_L2);
    assert_int_equal(ax.n_values, 32); /* 8, 16, ..., 256 */
    assert_rel(ax.values[31], 256.0 * 1048576.0, 1e-15);
    pm_axis_release(&ax);
    /* A bare number is in the column's unit (MiB for l2). */
    assert_int_equal(pm_axis_parse("l2=8:24:8", 0, &ax, NULL), PM_OK);
    assert_int_equal(ax.n_values, 3);
    assert_rel(ax.values[2], 24.0 * 1048576.0, 1e-15);
    pm_axis_release(&ax);
    /* Spaces around a bare number keep it bare: "2 " is 2 MiB, not 2 bytes. */
    assert_int_equal(pm_axis_parse("l2=1,2 ", 0, &ax, NULL), PM_OK);
    assert_int_equal(ax.n_values, 2);
    assert_rel(ax.values[1], 2.0 * 1048576.0, 1e-15);
    pm_axis_release(&ax);
    assert_int_equal(pm_axis_parse("l2=8:24: 8 ", 0, &ax, NULL), PM_OK);
    assert_int_equal(ax.n_values, 3);
    pm_axis_release(&ax);
    assert_int_equal(pm_axis_parse("seq=2k:64k:x2", 0, &ax, NULL), PM_OK);
    assert_int_equal(ax.n_values, 6); /* tokens, k = 1024: 2048, 4096, ..., 65536 */
    assert_rel(ax.values[5], 65536.0, 1e-15);
    pm_axis_release(&ax);
    assert_int_equal(pm_axis_parse("batch=1,4,16", 0, &ax, NULL), PM_OK);
    assert_int_equal(ax.n_values, 3);
    assert_rel(ax.values[2], 16.0, 0.0);
    pm_axis_release(&ax);
    assert_int_equal(pm_axis_parse("link_bw=200Gbps:1000Gbps:400Gbps", 0, &ax, NULL), PM_OK);
    assert_int_equal(ax.n_values, 3);
    assert_rel(ax.values[1], 600e9 / 8, 1e-15);
    /* shown in GB/s, the cluster files' unit: 600 Gbit/s = 75 GB/s */
    assert_rel(pm_axis_display_value(PM_AXIS_LINK_BW, ax.values[1]), 75.0, 1e-12);
    pm_axis_release(&ax);
    assert_int_equal(pm_axis_parse("l2", 0, &ax, NULL), PM_OK); /* the default range */
    assert_true(ax.n_values >= 3);
    pm_axis_release(&ax);
}

static void check_bad(const char *spec, pm_status want, const char *text)
{
    pm_axis ax;
    pm_error err;
    pm_status st = pm_axis_parse(spec, 0, &ax, &err);
    if (st != want || !strstr(err.message, text)) {
        print_error("%s: got %s '%s', want %s containing '%s'\n", spec, pm_status_name(st),
                    err.message, pm_status_name(want), text);
        fail();
    }
    assert_string_equal(err.path, spec);
    assert_null(ax.values);
}

static void test_axis_rejects_bad_ranges(void **state)
{
    (void)state;
    check_bad("l2=", PM_ERR_RANGE, "empty");
    check_bad("l2=256MiB:8MiB:8MiB", PM_ERR_RANGE, "reversed");
    check_bad("l2=8MiB:256MiB:0", PM_ERR_RANGE, "step must be finite and > 0");
    /* A step whose SI value overflows (1e308 Gbit/s) would make every point NaN. */
    check_bad("link_bw=100Gbps:1600Gbps:1e308", PM_ERR_RANGE, "step must be finite and > 0");
    check_bad("l2=8MiB:256MiB:x1", PM_ERR_RANGE, "geometric");
    check_bad("l2=8MiB:256MiB", PM_ERR_RANGE, "START:STOP:STEP");
    check_bad("frobnicate=1,2", PM_ERR_VALUE, "unknown axis");
    /* Every axis is listed, the last one too (the list once lacked ep). */
    check_bad("frobnicate=1,2", PM_ERR_VALUE,
              "expected l2, l2_bw, compute, hbm_bw, link_bw, devices, batch, seq, ep, pp, dp, sp "
              "or split)");
    check_bad("l2=8GBps:16GBps:1GBps", PM_ERR_UNIT, "unknown unit");
    check_bad("batch=1.5,2", PM_ERR_RANGE, "integers");
    check_bad("hbm_bw=-1,2", PM_ERR_RANGE, "> 0");
    check_bad("batch=1,,2", PM_ERR_RANGE, "empty item 2 in the list");
    check_bad("batch=1,2,", PM_ERR_RANGE, "empty item 3 in the list");
    check_bad("batch=,1", PM_ERR_RANGE, "empty item 1 in the list");
    /* A count's increment is whole (batch 1.5 was rounded to 2 and its row printed twice). */
    check_bad("batch=1:4:0.5", PM_ERR_RANGE, "the step must be a whole number (got '0.5')");
    check_bad("dp=1:3:0.5", PM_ERR_RANGE, "dp takes integers");
    pm_axis ax;
    pm_error err;
    assert_int_equal(pm_axis_parse("batch=1:1000:1", 10, &ax, &err), PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "more than 10 points"));
    /* 0 is the library's limit, and a range past it is refused before its values are held
     * (1e12 batches, 6.9e9 geometric L2 sizes: gigabytes before). */
    assert_int_equal(pm_axis_parse("batch=1:1e12:1", 0, &ax, &err), PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "more than 10000000 points (1e+12 in the range)"));
    assert_int_equal(pm_axis_parse("l2=1:1e300:x1.0000001", 0, &ax, &err), PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "more than 10000000 points"));
    /* A step below the range's precision has no count to print (the message said "inf"). */
    assert_int_equal(pm_axis_parse("l2=9:15:3e-320", 0, &ax, &err), PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "more than 10000000 points (the step is too small"));
    /* A step below lo's precision: one point, STOP (lo + step was lo, within STOP's tolerance,
     * for ten million pushes and a refusal). */
    assert_int_equal(pm_axis_parse("l2=1e30:1e30:1", 0, &ax, &err), PM_OK);
    assert_int_equal((int)ax.n_values, 1);
    assert_rel(ax.values[0], 1e30 * 1048576.0, 1e-15); /* MiB, the L2's unit */
    pm_axis_release(&ax);
    assert_int_equal(pm_axis_parse("batch=1e17:1e17:1", 0, &ax, &err), PM_OK);
    assert_int_equal((int)ax.n_values, 1);
    pm_axis_release(&ax);
    assert_int_equal(pm_axis_parse("batch=1:11:1", 11, &ax, &err), PM_OK); /* exactly */
    assert_int_equal((int)ax.n_values, 11);
    pm_axis_release(&ax);
    /* A geometric range of a count: each rounded value once. 1.3^i = 1, 1.3, 1.69, 2.197,
     * 2.856, 3.713, 4.827, 6.275, 8.157, 10.604, 13.786 (17.922 > 16) round to 1, 1, 2, 2, 3,
     * 4, 5, 6, 8, 11, 14. */
    assert_int_equal(pm_axis_parse("batch=1:16:x1.3", 0, &ax, &err), PM_OK);
    const double want[] = {1, 2, 3, 4, 5, 6, 8, 11, 14};
    const size_t n_want = sizeof want / sizeof want[0];
    assert_int_equal(ax.n_values, n_want);
    for (size_t i = 0; i < n_want; i++)
        assert_memory_equal(&ax.values[i], &want[i], sizeof want[i]);
    pm_axis_release(&ax);
}

/* A list is read whole: 600 items (2,399 characters, beyond any line buffer) keep their last. */
static void test_axis_list_is_never_cut(void **state)
{
    (void)state;
    char spec[4096] = "batch=";
    for (int i = 0; i < 599; i++)
        strcat(spec, "1,");
    strcat(spec, "7");
    pm_axis ax;
    pm_error err;
    assert_int_equal(pm_axis_parse(spec, 1000, &ax, &err), PM_OK);
    assert_int_equal(ax.n_values, 600);
    assert_int_equal((int)ax.values[599], 7); /* a count axis holds whole numbers */
    pm_axis_release(&ax);
    char item[200] = "batch=1,";
    memset(item + 8, '1', 150);
    item[158] = '\0';
    assert_int_equal(pm_axis_parse(item, 1000, &ax, &err), PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "list item 2 is longer than 127 characters"));
}

static void test_set_axis_changes_the_scenario(void **state)
{
    (void)state;
    pm_scenario s = {0};
    s.workload.act_dtype = PM_DTYPE_INT8;
    s.workload.weight_dtype = PM_DTYPE_INT8;
    s.accel.peak_flop_per_s[PM_DTYPE_INT8] = 800e12;
    s.accel.peak_flop_per_s[PM_DTYPE_BF16] = 400e12;
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_COMPUTE, 1600e12, NULL), PM_OK);
    /* Every peak scales with the compute datatype's: 800 -> 1600, 400 -> 800. */
    assert_rel(s.accel.peak_flop_per_s[PM_DTYPE_BF16], 800e12, 1e-15);
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_DEVICES, 8, NULL), PM_OK);
    assert_int_equal(s.cluster.devices, 8);
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_BATCH, 2.5, NULL), PM_ERR_RANGE);
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_L2, NAN, NULL), PM_ERR_RANGE);
    /* Counts stay within the loaders' bounds, where the int fields cannot overflow: devices
     * 2^20, batch 2^24. */
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_DEVICES, 1048576, NULL), PM_OK);
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_DEVICES, 1048577, NULL), PM_ERR_RANGE);
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_DEVICES, 3e9, NULL), PM_ERR_RANGE);
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_BATCH, 16777217, NULL), PM_ERR_RANGE);
    assert_int_equal(s.cluster.devices, 1048576);
}

/* The sp axis is a switch (issue 44 item 5): its default range is off then on, it takes 0
 * and 1 only, it turns the cluster's sequence parallelism off and on, and a sweep's point on
 * it is the estimate of the scenario with sequence_parallel set (compared with --sp's). */
static void test_sp_axis_is_a_switch(void **state)
{
    (void)state;
    pm_axis a;
    pm_error err;
    assert_int_equal(pm_axis_parse("sp", 0, &a, &err), PM_OK);
    assert_int_equal(a.n_values, 2);
    assert_rel(a.values[0], 0.0, 0.0);
    assert_rel(a.values[1], 1.0, 0.0);
    assert_true(pm_axis_is_count(a.kind));
    assert_string_equal(pm_axis_column(a.kind), "sequence_parallel");
    pm_axis_release(&a);
    assert_int_equal(pm_axis_parse("sp=1,0", 0, &a, &err), PM_OK);
    assert_int_equal(a.n_values, 2);
    pm_axis_release(&a);
    assert_int_equal(pm_axis_parse("sp=2", 0, &a, &err), PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "sp is a switch"));
    assert_int_equal(pm_axis_parse("sp=0.5", 0, &a, &err), PM_ERR_RANGE);
    pm_scenario s = pm_test_load("llama70b", NULL, 0);
    pm_scenario on = s;
    on.cluster.sequence_parallel = true;
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_SP, 1.0, &err), PM_OK);
    assert_true(s.cluster.sequence_parallel);
    double v;
    assert_true(pm_scenario_axis_value(&s, PM_AXIS_SP, &v));
    assert_rel(v, 1.0, 0.0);
    pm_estimate e1, e2;
    assert_int_equal(pm_estimate_compute(&s, &e1, &err), PM_OK);
    assert_int_equal(pm_estimate_compute(&on, &e2, &err), PM_OK);
    assert_rel(e1.modes[PM_MODE_PRESERVE].tpot_s, e2.modes[PM_MODE_PRESERVE].tpot_s, 0.0);
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_SP, 0.0, &err), PM_OK);
    assert_false(s.cluster.sequence_parallel);
    assert_true(pm_scenario_axis_value(&s, PM_AXIS_SP, &v));
    assert_rel(v, 0.0, 0.0);
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_SP, 3.0, &err), PM_ERR_RANGE);
    pm_scenario_release(&s);
}

static void test_optimum_is_at_least_the_best_grid_point(void **state)
{
    (void)state;
    pm_scenario s;
    pm_load_opts o = {PM_TEST_DATA_DIR, NULL, 0};
    assert_int_equal(pm_scenario_load("llama8b", &o, &s, NULL), PM_OK);
    pm_optimum opt;
    assert_int_equal(pm_optimize_axis(&s, PM_AXIS_HBM_BW, 0.5e12, 8e12, 9, 1e-3, 50, &opt, NULL),
                     PM_OK);
    /* Compare with an independent evaluation at a few points: none may beat the optimum. */
    const double probes[] = {0.5e12, 1e12, 2e12, 4e12, 8e12};
    pm_area a;
    assert_int_equal(pm_area_compute(&s.accel, &a, NULL), PM_OK);
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        pm_scenario t = s;
        pm_estimate e;
        assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_HBM_BW, probes[i], NULL), PM_OK);
        assert_int_equal(pm_estimate_compute(&t, &e, NULL), PM_OK);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            double d = pm_density(&e, (pm_mode)m, t.cluster.devices, a.die_mm2);
            assert_true(d <= opt.best_density[m] * (1 + 1e-12));
        }
    }
    for (int m = 0; m < PM_MODE_COUNT; m++)
        assert_true(opt.bracket_lo[m] <= opt.best_value[m] && opt.best_value[m] <= opt.bracket_hi[m]);
    pm_scenario_release(&s);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_area_sums_the_sourced_coefficients),
        cmocka_unit_test(test_area_io_dies_carry_the_stacked_compute),
        cmocka_unit_test(test_area_requires_coefficients),
        cmocka_unit_test(test_density_divides_by_devices_and_die),
        cmocka_unit_test(test_axis_ranges_units_steps_and_lists),
        cmocka_unit_test(test_axis_rejects_bad_ranges),
        cmocka_unit_test(test_axis_list_is_never_cut),
        cmocka_unit_test(test_set_axis_changes_the_scenario),
        cmocka_unit_test(test_sp_axis_is_a_switch),
        cmocka_unit_test(test_optimum_is_at_least_the_best_grid_point),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
