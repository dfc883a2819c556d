/*
 * test_units.c - the unit table (every row against a factor computed by hand), splitting JSON
 * keys at their unit suffix, and parsing quantities with units ("192MiB", "1.6 TBps", "16k").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "internal.h"

/* The factors are exact binary fractions or one rounding of a decimal literal, so the library
 * and the hand values below agree to the last bit or one ulp; 1e-15 allows that ulp only. */
#define EXACT 1e-15

typedef struct unit_case {
    const char *name;
    pm_dimension dim;
    double to_si; /* written out by hand */
} unit_case;

/* Every row of docs/data-format.md's table, with its factor to SI worked out by hand:
 * decimal prefixes are powers of 1000, binary ones powers of 1024, bits are 1/8 byte. */
static const unit_case unit_cases[] = {
    {"B", PM_DIM_BYTES, 1.0},
    {"KB", PM_DIM_BYTES, 1000.0},
    {"MB", PM_DIM_BYTES, 1000000.0},
    {"GB", PM_DIM_BYTES, 1000000000.0},
    {"TB", PM_DIM_BYTES, 1000000000000.0},
    {"KiB", PM_DIM_BYTES, 1024.0},
    {"MiB", PM_DIM_BYTES, 1048576.0},
    {"GiB", PM_DIM_BYTES, 1073741824.0},
    {"TiB", PM_DIM_BYTES, 1099511627776.0},
    {"Bps", PM_DIM_BANDWIDTH, 1.0},
    {"KBps", PM_DIM_BANDWIDTH, 1000.0},
    {"MBps", PM_DIM_BANDWIDTH, 1000000.0},
    {"GBps", PM_DIM_BANDWIDTH, 1000000000.0},
    {"TBps", PM_DIM_BANDWIDTH, 1000000000000.0},
    {"GiBps", PM_DIM_BANDWIDTH, 1073741824.0},
    {"Mbps", PM_DIM_BANDWIDTH, 125000.0},         /* 1e6 bits/s / 8 */
    {"Gbps", PM_DIM_BANDWIDTH, 125000000.0},      /* 1e9 / 8 */
    {"Tbps", PM_DIM_BANDWIDTH, 125000000000.0},   /* 1e12 / 8 */
    {"s", PM_DIM_TIME, 1.0},
    {"ms", PM_DIM_TIME, 0.001},
    {"us", PM_DIM_TIME, 0.000001},
    {"ns", PM_DIM_TIME, 0.000000001},
    {"FLOPS", PM_DIM_COMPUTE, 1.0},
    {"GFLOPS", PM_DIM_COMPUTE, 1e9},
    {"TFLOPS", PM_DIM_COMPUTE, 1e12},
    {"PFLOPS", PM_DIM_COMPUTE, 1e15},
    {"OPS", PM_DIM_COMPUTE, 1.0},
    {"GOPS", PM_DIM_COMPUTE, 1e9},
    {"TOPS", PM_DIM_COMPUTE, 1e12},
    {"POPS", PM_DIM_COMPUTE, 1e15},
    {"mm2", PM_DIM_AREA, 1.0},
    {"mm2_per_TOPS", PM_DIM_AREA_PER_COMPUTE, 1e-12},
    {"mm2_per_TFLOPS", PM_DIM_AREA_PER_COMPUTE, 1e-12},
    {"mm2_per_MiB", PM_DIM_AREA_PER_BYTE, 9.5367431640625e-07}, /* 1 / 1048576, exact */
    {"mm2_per_MB", PM_DIM_AREA_PER_BYTE, 1e-6},
    {"mm2_per_stack", PM_DIM_AREA_PER_ITEM, 1.0},
    {"mm2_per_link", PM_DIM_AREA_PER_ITEM, 1.0},
    {"nm", PM_DIM_LENGTH, 1.0},
    {"frac", PM_DIM_FRACTION, 1.0},
};

static void test_every_unit_row_converts_to_si(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof unit_cases / sizeof unit_cases[0]; i++) {
        const unit_case *u = &unit_cases[i];
        double f = -1;
        pm_dimension d = PM_DIM_NONE;
        if (!pm_unit_lookup(u->name, &f, &d)) {
            print_error("unit \"%s\" is not in the table\n", u->name);
            fail();
        }
        if (d != u->dim) {
            print_error("unit \"%s\": dimension %d, expected %d\n", u->name, (int)d, (int)u->dim);
            fail();
        }
        assert_rel(f, u->to_si, EXACT);
    }
}

/* The table is searched by bisection: a row out of order is not found. Every unit that the
 * messages list for every dimension (pm_unit_names) must be found with that dimension, and a
 * name between two rows must not. */
static void test_every_listed_unit_is_found_with_its_dimension(void **state)
{
    (void)state;
    int found = 0;
    for (int dim = PM_DIM_NONE + 1; dim <= PM_DIM_LENGTH_MM; dim++) {
        char list[256];
        snprintf(list, sizeof list, "%s", pm_unit_names((pm_dimension)dim));
        for (char *name = strtok(list, ", "); name; name = strtok(NULL, ", ")) {
            double f = 0.0;
            pm_dimension d = PM_DIM_NONE;
            if (!pm_unit_lookup(name, &f, &d) || d != (pm_dimension)dim || !(f > 0)) {
                print_error("unit \"%s\" of dimension %d not found\n", name, dim);
                fail();
            }
            found++;
        }
    }
    assert_int_equal(found, 53); /* the table's rows: 9 + 9 + 4 + 8 + 1 + 2 + 2 + 2 + 1 + 1 +
                                    3 + 2 + 2 + 1 + 1 + 2 + 2 + 1 */
    const char *between[] = {"A", "Ba", "GBpt", "mm2_per_M", "usd_per_GiBx", "zz", ""};
    for (size_t i = 0; i < PM_ARRAY_LEN(between); i++)
        assert_false(pm_unit_lookup(between[i], NULL, NULL));
}

static void test_decimal_and_binary_prefixes_differ(void **state)
{
    (void)state;
    double mb = 0, mib = 0, gb = 0, gib = 0;
    assert_true(pm_unit_lookup("MB", &mb, NULL));
    assert_true(pm_unit_lookup("MiB", &mib, NULL));
    assert_true(pm_unit_lookup("GB", &gb, NULL));
    assert_true(pm_unit_lookup("GiB", &gib, NULL));
    assert_rel(mb, 1e6, EXACT);
    assert_rel(mib, 1048576.0, EXACT);
    /* 1 GiB / 1 GB = 1.073741824 exactly. */
    assert_rel(gib / gb, 1.073741824, EXACT);
}

static void test_bits_per_second_are_an_eighth_of_bytes(void **state)
{
    (void)state;
    double gbps = 0, gBps = 0;
    assert_true(pm_unit_lookup("Gbps", &gbps, NULL));
    assert_true(pm_unit_lookup("GBps", &gBps, NULL));
    assert_rel(gbps * 8, gBps, EXACT);
}

static void test_unit_lookup_rejects_unknown_units(void **state)
{
    (void)state;
    double f = 42;
    pm_dimension d = PM_DIM_AREA;
    /* Unit names are case sensitive: "mb" would be millibits, "Mb" megabits. */
    const char *bad[] = {"mb", "MIB", "", "parsec", "Mb", "kb", "sec", "mm2_per_GiB"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (pm_unit_lookup(bad[i], &f, &d)) {
            print_error("\"%s\" should not be a unit\n", bad[i]);
            fail();
        }
    }
    assert_false(pm_unit_lookup(NULL, &f, &d));
    /* Outputs untouched on failure. */
    assert_rel(f, 42, 0);
    assert_int_equal(d, PM_DIM_AREA);
}

static void test_unit_lookup_accepts_null_outputs(void **state)
{
    (void)state;
    assert_true(pm_unit_lookup("MiB", NULL, NULL));
}

/* ---------------------------------------------------------------- split key */

static void check_split(const char *key, const char *want_base, const char *want_unit)
{
    char base[64] = "unchanged";
    const char *unit = NULL;
    bool ok = pm_unit_split_key(key, base, sizeof base, &unit);
    if (!ok) {
        print_error("\"%s\" should split into \"%s\" + \"%s\"\n", key, want_base, want_unit);
        fail();
    }
    assert_string_equal(base, want_base);
    assert_non_null(unit);
    assert_string_equal(unit, want_unit);
}

static void test_split_key_takes_the_unit_suffix(void **state)
{
    (void)state;
    check_split("l2_capacity_MiB", "l2_capacity", "MiB");
    check_split("hbm_bandwidth_TBps", "hbm_bandwidth", "TBps");
    check_split("link_latency_us", "link_latency", "us");
    check_split("inter_node_bandwidth_Gbps", "inter_node_bandwidth", "Gbps");
    check_split("hbm_capacity_GiB", "hbm_capacity", "GiB");
    check_split("int8_TOPS", "int8", "TOPS");
    check_split("compute_efficiency_frac", "compute_efficiency", "frac");
    check_split("process_nm", "process", "nm");
}

static void test_split_key_prefers_the_longest_unit(void **state)
{
    (void)state;
    /* "MiB" alone is a unit too; the longest suffix that is a unit wins. */
    check_split("l2_mm2_per_MiB", "l2", "mm2_per_MiB");
    check_split("compute_mm2_per_TOPS", "compute", "mm2_per_TOPS");
    check_split("hbm_phy_mm2_per_stack", "hbm_phy", "mm2_per_stack");
    check_split("link_phy_mm2_per_link", "link_phy", "mm2_per_link");
    check_split("other_mm2", "other", "mm2");
}

static void test_split_key_rejects_keys_without_units(void **state)
{
    (void)state;
    const char *plain[] = {"num_hidden_layers", "batch", "seq_len", "vocab_size",
                           "num_key_value_heads", "hbm_stacks", "MiB", "_MiB",
                           "l2_capacity_mib", "weight_dtype", ""};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        char base[64];
        const char *unit = NULL;
        if (pm_unit_split_key(plain[i], base, sizeof base, &unit)) {
            print_error("\"%s\" should have no unit (got \"%s\")\n", plain[i], unit);
            fail();
        }
    }
}

/* A copy that must be cut is cut between UTF-8 characters: "\xc3\xa9" (e acute) and
 * "\xe2\x82\xac" (euro) are never split. */
static void test_strlcpy_cuts_at_character_boundaries(void **state)
{
    (void)state;
    char dst[4];
    pm_strlcpy(dst, "ab\xc3\xa9", sizeof dst); /* 4 bytes into 3: the e acute would be split */
    assert_string_equal(dst, "ab");
    pm_strlcpy(dst, "a\xc3\xa9x", sizeof dst); /* fits exactly: kept */
    assert_string_equal(dst, "a\xc3\xa9");
    pm_strlcpy(dst, "\xe2\x82\xac", sizeof dst); /* 3 bytes fit in 4 */
    assert_string_equal(dst, "\xe2\x82\xac");
    pm_strlcpy(dst, "a\xe2\x82\xac", sizeof dst); /* cut inside the euro: dropped whole */
    assert_string_equal(dst, "a");
    pm_strlcpy(dst, "abcdef", sizeof dst); /* ASCII: cut at n - 1 as before */
    assert_string_equal(dst, "abc");
    pm_strlcpy(dst, NULL, sizeof dst);
    assert_string_equal(dst, "");
}

static void test_split_key_truncates_the_base_to_the_buffer(void **state)
{
    (void)state;
    char base[5];
    memset(base, 'x', sizeof base);
    const char *unit = NULL;
    assert_true(pm_unit_split_key("hbm_bandwidth_TBps", base, sizeof base, &unit));
    assert_string_equal(base, "hbm_");
    assert_string_equal(unit, "TBps");
    /* base and unit may be NULL. */
    assert_true(pm_unit_split_key("l2_capacity_MiB", NULL, 0, NULL));
}

/* ---------------------------------------------------------------- quantities */

static void check_quantity(const char *text, pm_dimension want, double expected)
{
    double v = -1;
    pm_error err;
    memset(&err, 0, sizeof err);
    pm_status st = pm_quantity_parse(text, want, &v, &err);
    if (st != PM_OK) {
        print_error("\"%s\": %s: %s\n", text, pm_status_name(st), err.message);
        fail();
    }
    assert_rel(v, expected, EXACT);
}

static void check_quantity_fails(const char *text, pm_dimension want, pm_status status,
                                 const char *msg_part)
{
    double v = 12345;
    pm_error err;
    memset(&err, 0, sizeof err);
    pm_status st = pm_quantity_parse(text, want, &v, &err);
    if (st != status) {
        print_error("\"%s\": expected %s, got %s (%s)\n", text, pm_status_name(status),
                    pm_status_name(st), err.message);
        fail();
    }
    assert_int_equal(err.status, status);
    if (msg_part && !strstr(err.message, msg_part)) {
        print_error("\"%s\": message \"%s\" lacks \"%s\"\n", text, err.message, msg_part);
        fail();
    }
    /* err may be NULL. */
    assert_int_equal(pm_quantity_parse(text, want, &v, NULL), status);
}

static void test_quantity_parses_binary_bytes(void **state)
{
    (void)state;
    check_quantity("192MiB", PM_DIM_BYTES, 201326592.0); /* 192 x 1048576 */
    check_quantity("64 GiB", PM_DIM_BYTES, 68719476736.0);
    check_quantity("256KiB", PM_DIM_BYTES, 262144.0);
}

static void test_quantity_parses_decimal_units(void **state)
{
    (void)state;
    check_quantity("1.6 TBps", PM_DIM_BANDWIDTH, 1.6e12);
    check_quantity("104MB", PM_DIM_BYTES, 104e6);
    check_quantity("100 Gbps", PM_DIM_BANDWIDTH, 12.5e9); /* 100e9 / 8 */
    check_quantity("5 us", PM_DIM_TIME, 5e-6);
    check_quantity("800 TOPS", PM_DIM_COMPUTE, 8e14);
}

static void test_quantity_without_unit_is_taken_as_si(void **state)
{
    (void)state;
    check_quantity("42", PM_DIM_BYTES, 42);
    check_quantity("  7  ", PM_DIM_NONE, 7);
}

static void test_quantity_count_multipliers(void **state)
{
    (void)state;
    check_quantity("16k", PM_DIM_NONE, 16000.0);
    check_quantity("16K", PM_DIM_NONE, 16000.0);
    check_quantity("2M", PM_DIM_NONE, 2e6);
    check_quantity("1G", PM_DIM_NONE, 1e9);
    check_quantity("32Ki", PM_DIM_NONE, 32768.0);
    check_quantity("1.5Ki", PM_DIM_NONE, 1536.0);
    check_quantity("2Mi", PM_DIM_NONE, 2097152.0);
    check_quantity("1Gi", PM_DIM_NONE, 1073741824.0);
}

static void test_quantity_rejects_text_that_is_not_a_number(void **state)
{
    (void)state;
    check_quantity_fails("abc", PM_DIM_NONE, PM_ERR_RANGE, "abc");
    check_quantity_fails("", PM_DIM_BYTES, PM_ERR_RANGE, NULL);
    check_quantity_fails("MiB", PM_DIM_BYTES, PM_ERR_RANGE, "MiB");
}

static void test_quantity_rejects_non_finite_numbers(void **state)
{
    (void)state;
    check_quantity_fails("1e999", PM_DIM_NONE, PM_ERR_RANGE, "1e999");
    check_quantity_fails("nan", PM_DIM_NONE, PM_ERR_RANGE, "nan");
    check_quantity_fails("NaN MiB", PM_DIM_BYTES, PM_ERR_RANGE, NULL);
    check_quantity_fails("inf", PM_DIM_BANDWIDTH, PM_ERR_RANGE, NULL);
    check_quantity_fails("-infinity", PM_DIM_NONE, PM_ERR_RANGE, NULL);
}

static void test_quantity_rejects_overflow_after_conversion(void **state)
{
    (void)state;
    /* 1e300 is finite, 1e300 x 1e12 is not. */
    check_quantity_fails("1e300 TB", PM_DIM_BYTES, PM_ERR_RANGE, NULL);
}

static void test_quantity_rejects_overflow_after_a_count_multiplier(void **state)
{
    (void)state;
    /* 1e308 is finite, 1e308 x 1024 is not; *out must stay untouched. */
    check_quantity_fails("1e308Ki", PM_DIM_NONE, PM_ERR_RANGE, "overflows");
    check_quantity_fails("1e306k", PM_DIM_NONE, PM_ERR_RANGE, "overflows");
    /* Passing: the largest that fits. */
    check_quantity("1e305k", PM_DIM_NONE, 1e308);
}

static void test_quantity_rejects_numbers_below_a_normal_double(void **state)
{
    (void)state;
    /* strtod flags a denormal result: no quantity is meant to be written that way. */
    check_quantity_fails("5e-324", PM_DIM_NONE, PM_ERR_RANGE, "out of the range of a double");
    check_quantity_fails("1e-310 GBps", PM_DIM_BANDWIDTH, PM_ERR_RANGE, "1e-310");
    /* Passing: the smallest normal double. */
    check_quantity("2.2250738585072014e-308", PM_DIM_NONE, 2.2250738585072014e-308);
}

static void test_quantity_rejects_unknown_units(void **state)
{
    (void)state;
    check_quantity_fails("5 parsecs", PM_DIM_TIME, PM_ERR_UNIT, "parsecs");
    check_quantity_fails("5 parsecs", PM_DIM_NONE, PM_ERR_UNIT, "parsecs");
    check_quantity_fails("16 kB", PM_DIM_BYTES, PM_ERR_UNIT, "kB");
    check_quantity_fails("16k", PM_DIM_BYTES, PM_ERR_UNIT, NULL);
}

static void test_quantity_rejects_a_unit_of_another_dimension(void **state)
{
    (void)state;
    /* A bandwidth where bytes are wanted; the message lists the byte units. */
    check_quantity_fails("1.6 TBps", PM_DIM_BYTES, PM_ERR_UNIT, "MiB");
    check_quantity_fails("192MiB", PM_DIM_BANDWIDTH, PM_ERR_UNIT, "TBps");
    check_quantity_fails("5 us", PM_DIM_COMPUTE, PM_ERR_UNIT, NULL);
    check_quantity_fails("3 MiB", PM_DIM_NONE, PM_ERR_UNIT, NULL);
}

static void test_quantity_rejects_null_arguments(void **state)
{
    (void)state;
    double v;
    pm_error err;
    assert_int_equal(pm_quantity_parse(NULL, PM_DIM_BYTES, &v, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(err.status, PM_ERR_INVALID_ARG);
    assert_int_equal(pm_quantity_parse("1MiB", PM_DIM_BYTES, NULL, &err), PM_ERR_INVALID_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_unit_row_converts_to_si),
        cmocka_unit_test(test_decimal_and_binary_prefixes_differ),
        cmocka_unit_test(test_bits_per_second_are_an_eighth_of_bytes),
        cmocka_unit_test(test_unit_lookup_rejects_unknown_units),
        cmocka_unit_test(test_every_listed_unit_is_found_with_its_dimension),
        cmocka_unit_test(test_unit_lookup_accepts_null_outputs),
        cmocka_unit_test(test_split_key_takes_the_unit_suffix),
        cmocka_unit_test(test_split_key_prefers_the_longest_unit),
        cmocka_unit_test(test_split_key_rejects_keys_without_units),
        cmocka_unit_test(test_split_key_truncates_the_base_to_the_buffer),
        cmocka_unit_test(test_strlcpy_cuts_at_character_boundaries),
        cmocka_unit_test(test_quantity_parses_binary_bytes),
        cmocka_unit_test(test_quantity_parses_decimal_units),
        cmocka_unit_test(test_quantity_without_unit_is_taken_as_si),
        cmocka_unit_test(test_quantity_count_multipliers),
        cmocka_unit_test(test_quantity_rejects_text_that_is_not_a_number),
        cmocka_unit_test(test_quantity_rejects_non_finite_numbers),
        cmocka_unit_test(test_quantity_rejects_overflow_after_conversion),
        cmocka_unit_test(test_quantity_rejects_overflow_after_a_count_multiplier),
        cmocka_unit_test(test_quantity_rejects_numbers_below_a_normal_double),
        cmocka_unit_test(test_quantity_rejects_unknown_units),
        cmocka_unit_test(test_quantity_rejects_a_unit_of_another_dimension),
        cmocka_unit_test(test_quantity_rejects_null_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
