/*
 * testutil.h - helpers shared by the cmocka suites: a relative-tolerance comparison for model
 * numbers (cmocka 1.1.5's assert_float_equal works in float with an absolute epsilon, which is
 * useless for seconds and bytes), and a minimal scenario built by hand.
 */
#ifndef PM_TESTUTIL_H
#define PM_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "preserve_model.h"

/* Fails, printing expected, actual and the relative error, unless |a - e| <= rel * |e|
 * (or both are 0). */
#define assert_rel(actual, expected, rel) \
    pm_assert_rel((actual), (expected), (rel), #actual, __FILE__, __LINE__)

static inline void pm_assert_rel(double a, double e, double rel, const char *what,
                                 const char *file, int line)
{
    double err = fabs(e) > 0 ? fabs(a - e) / fabs(e) : fabs(a);
    if (!(err <= rel)) {
        print_error("%s: expected %.17g, got %.17g (relative error %.3g > %.3g)\n", what, e, a,
                    err, rel);
        _fail(file, line);
    }
}

/* The data directory of the source tree (meson passes it). */
#ifndef PM_TEST_DATA_DIR
#define PM_TEST_DATA_DIR "data"
#endif
#ifndef PM_TEST_CONFIG_DIR
#define PM_TEST_CONFIG_DIR "tests/configs"
#endif

/* Loads a bundled scenario (with optional overrides) or fails the test with the message. */
static inline pm_scenario pm_test_load(const char *name, const char *const *ov, size_t n_ov)
{
    pm_scenario s;
    pm_error err;
    const pm_load_opts opts = {PM_TEST_DATA_DIR, ov, n_ov};
    pm_status st = pm_scenario_load(name, &opts, &s, &err);
    if (st != PM_OK)
        fail_msg("pm_scenario_load(%s): %s: %s", name, pm_status_name(st), err.message);
    return s;
}

#endif
