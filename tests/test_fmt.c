/*
 * test_fmt.c - the tool's fast "%.9g" (src/cli/fmt.c) against snprintf, byte for byte: values
 * spread over every magnitude and sign, integers, powers of ten and their neighbours, the
 * rounding boundaries of nine digits (where the fast path must defer), and the model's own
 * outputs; then the tables' numbers, sizes and counts of bytes (fmt_table, fmt_size,
 * fmt_bytes) against strings written by hand.
 */
#include <stdint.h>
#include <stdlib.h>

#include "testutil.h"
#include "../src/cli/fmt.h"

static void check(double v)
{
    char fast[FMT_G9_MAX], ref[FMT_G9_MAX];
    const int n = fmt_g9(v, fast);
    snprintf(ref, sizeof ref, "%.9g", v);
    if (strcmp(fast, ref) != 0 || n != (int)strlen(ref))
        fail_msg("%.17g: fast '%s' (%d), printf '%s'", v, fast, n, ref);
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static void test_matches_printf(void **state)
{
    (void)state;
    const double special[] = {0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1e-5, 1e-4, 9.99999999e-5,
                              123456789.0, 999999999.0, 999999999.5, 1e9, 1e9 - 1, 1e9 + 1,
                              0.000123456789, 1.5e-300, 2.5e300, NAN, INFINITY, -INFINITY,
                              1.0 / 3.0, 2.0 / 3.0, 100.0, 1e22, 1e23, 1e-22, 1e-23, 4.5,
                              0.000099999999995, 12345.6789012345, 5e-324};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        check(special[i]);
    for (int e = -30; e <= 30; e++) {
        const double p = pow(10.0, e);
        check(p);
        check(nextafter(p, 0.0));
        check(nextafter(p, INFINITY));
        check(p * 0.5);
        check(-p * 1.5);
    }
    /* Nine-digit ties and their neighbours: d.dddddddd5 x 10^e */
    uint64_t s = 0x1234567887654321ULL;
    for (int i = 0; i < 20000; i++) {
        const double d = (double)(100000000 + next(&s) % 900000000) + 0.5;
        const int e = (int)(next(&s) % 40) - 20;
        const double v = d * pow(10.0, e - 8);
        check(v);
        check(nextafter(v, 0.0));
        check(nextafter(v, INFINITY));
    }
    /* Random magnitudes, mantissas and signs. */
    for (int i = 0; i < 2000000; i++) {
        const double mant = (double)(next(&s) >> 11) / 9007199254740992.0;
        const int e = (int)(next(&s) % 80) - 40;
        double v = (0.1 + mant) * pow(10.0, e);
        if (next(&s) & 1)
            v = -v;
        check(v);
    }
    /* Random bit patterns: every double, finite or not. */
    for (int i = 0; i < 500000; i++) {
        uint64_t bits = next(&s);
        double v;
        memcpy(&v, &bits, sizeof v);
        check(v);
    }
}

static void test_matches_printf_on_model_outputs(void **state)
{
    (void)state;
    pm_scenario sc = pm_test_load("llama70b", NULL, 0);
    for (int b = 1; b <= 256; b *= 2) {
        pm_scenario t = sc;
        t.provenance = NULL;
        t.workload.batch = b;
        pm_estimate e;
        assert_int_equal(pm_estimate_compute(&t, &e, NULL), PM_OK);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            check(e.modes[m].request_s);
            check(e.modes[m].tpot_s);
            check(e.modes[m].tokens_per_s);
        }
        check(e.speedup_preserve_vs_serial);
        check(e.speedup_preserve_vs_fused);
    }
    pm_scenario_release(&sc);
}

/* The table's numbers: fixed decimals where they keep three significant digits, else four
 * significant digits, never a small value printed as zero. */
static void test_table_numbers_keep_their_digits(void **state)
{
    (void)state;
    static const struct {
        double v;
        int decimals;
        const char *want;
    } cases[] = {
        {126.19784, 4, "126.1978"}, {0.0123, 4, "0.0123"},   {0.00123, 4, "0.00123"},
        {3.456e-5, 4, "3.456e-05"}, {-0.001, 4, "-0.001"},   {0.0, 4, "0.0000"},
        {916.5777, 2, "916.58"},    {1.0, 2, "1.00"},        {0.5, 2, "0.5"},
        {0.00244, 2, "0.00244"},    {24530.44, 1, "24530.4"}, {0.07, 1, "0.07"},
        {INFINITY, 4, "inf"},       {NAN, 2, "nan"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[FMT_G9_MAX];
        const int n = fmt_table(cases[i].v, cases[i].decimals, out);
        if (strcmp(out, cases[i].want) != 0 || n != (int)strlen(cases[i].want))
            fail_msg("fmt_table(%g, %d): '%s' (%d), want '%s'", cases[i].v, cases[i].decimals,
                     out, n, cases[i].want);
    }
}

/* The header's sizes: one decimal from 1 GiB up (and at 0), three significant digits below. */
static void test_sizes_keep_their_digits(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {16.4375, "16.4"}, {2.5, "2.5"},      {64.0, "64.0"},  {0.0, "0.0"},   {0.97, "1.0"},
        {0.9, "0.9"},      {0.0234, "0.0234"}, {1.5e-5, "1.5e-05"}, {-0.25, "-0.25"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[FMT_G9_MAX];
        const int n = fmt_size(cases[i].v, out);
        if (strcmp(out, cases[i].want) != 0 || n != (int)strlen(cases[i].want))
            fail_msg("fmt_size(%g): '%s' (%d), want '%s'", cases[i].v, out, n, cases[i].want);
    }
}

/* A count of bytes in the unit its magnitude asks: a 4-byte receive is "4 B", not "0.0 KiB";
 * 16384 B = 16 x 1024 is "16.0 KiB"; 20971520 B = 20 x 2^20 is "20.0 MiB"; 1023.96 KiB (1048535
 * B, past 1023.95) rounds to 1024.0, so it is "1.0 MiB"; 1023.9 KiB (1048473.6 B) stays KiB; 1.5
 * x 2^30 B is "1.5 GiB"; a fraction of a byte (a mean over routed experts) keeps a decimal. */
static void test_bytes_in_the_unit_of_their_magnitude(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {4.0, "4 B"},          {0.0, "0 B"},         {1023.0, "1023 B"},
        {2.5, "2.5 B"},        {1024.0, "1.0 KiB"},  {16384.0, "16.0 KiB"},
        {1048473.6, "1023.9 KiB"}, {1048535.0, "1.0 MiB"}, {20971520.0, "20.0 MiB"},
        {52428800.0, "50.0 MiB"},  {1610612736.0, "1.5 GiB"}, {-4.0, "-4 B"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[FMT_G9_MAX];
        const int n = fmt_bytes(cases[i].v, out);
        if (strcmp(out, cases[i].want) != 0 || n != (int)strlen(cases[i].want))
            fail_msg("fmt_bytes(%g): '%s' (%d), want '%s'", cases[i].v, out, n, cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_numbers_keep_their_digits),
        cmocka_unit_test(test_sizes_keep_their_digits),
        cmocka_unit_test(test_bytes_in_the_unit_of_their_magnitude),
        cmocka_unit_test(test_matches_printf),
        cmocka_unit_test(test_matches_printf_on_model_outputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
