/*
 * fuzz_axis.c - sweep range strings (pm_axis_parse, "--sweep l2=8MiB:256MiB:8MiB"). An accepted
 * axis has 1..max_points finite values, positive ones (0 or 1 on the sp switch), whole numbers
 * on count axes; its first and last value are set on the bundled scenario, which is then
 * evaluated.
 */
#include "fuzz_common.h"

#define MAX_POINTS 100000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = fz_cstr(data, size);
    pm_axis ax;
    pm_error err;
    pm_status st = pm_axis_parse(spec, MAX_POINTS, &ax, &err);
    if (st != PM_OK) {
        fz_check_error(st, &err, data, size);
        FZ_ASSERT(ax.values == NULL && ax.n_values == 0, "a failed parse left values");
        free(spec);
        return 0;
    }
    FZ_ASSERT(ax.n_values >= 1 && ax.n_values <= MAX_POINTS, "%zu values", ax.n_values);
    bool count = pm_axis_is_count(ax.kind);
    for (size_t i = 0; i < ax.n_values; i++) {
        double v = ax.values[i];
        if (ax.kind == PM_AXIS_SP)
            FZ_ASSERT(v == 0.0 || v == 1.0, "switch value %zu is %g", i, v);
        else
            FZ_ASSERT(fz_pos(v), "value %zu is %g", i, v);
        FZ_ASSERT(!count || v == floor(v), "count axis value %zu is %g", i, v);
    }
    size_t picks[2] = {0, ax.n_values - 1};
    for (int k = 0; k < 2; k++) {
        pm_scenario s = *fz_base();
        s.provenance = NULL;
        st = pm_scenario_set_axis(&s, ax.kind, ax.values[picks[k]], &err);
        if (st != PM_OK)
            fz_check_error(st, &err, data, size);
        else
            fz_evaluate(&s, data, size);
    }
    pm_axis_release(&ax);
    free(spec);
    return 0;
}
