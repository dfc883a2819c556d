/*
 * fuzz_scenario.c - a whole file through the public entry points: pm_file_validate (any kind,
 * told by "kind") and, for scenarios, pm_scenario_load with the bundled data directory, so that
 * name resolution, inline components, "from" inheritance and the scenario's own keys are all
 * reached. The two must agree: a scenario file that validates must load, and the reverse.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write_file("scenario.json", data, size);
    pm_error err;
    pm_file_kind kind = PM_KIND_COUNT;
    pm_status vst = pm_file_validate(path, NULL, &kind, &err);
    if (vst != PM_OK) {
        fz_check_error(vst, &err, data, size);
        fz_check_located(vst, &err);
    }
    else
        FZ_ASSERT((int)kind >= 0 && kind < PM_KIND_COUNT, "validated with kind %d", (int)kind);
    pm_scenario s;
    pm_status st = pm_scenario_load(path, NULL, &s, &err);
    if (st != PM_OK) {
        fz_check_error(st, &err, data, size);
        fz_check_located(st, &err);
        static const pm_scenario zero;
        FZ_ASSERT(memcmp(&s, &zero, sizeof s) == 0, "a failed load left data in its output");
        FZ_ASSERT(!(vst == PM_OK && kind == PM_KIND_SCENARIO),
                  "validates as a scenario but does not load: %s", err.message);
        return 0;
    }
    FZ_ASSERT(vst == PM_OK && kind == PM_KIND_SCENARIO,
              "loads as a scenario but validation says %s (kind %s)", pm_status_name(vst),
              pm_file_kind_name(kind));
    for (size_t i = 0; i < pm_scenario_param_count(&s); i++) {
        const pm_param_info *p = pm_scenario_param(&s, i);
        /* NaN only for an ignored key whose value is not a number, or a choice made by name
         * (its value_text; the header's contract). */
        FZ_ASSERT(p && (isfinite(p->value_si) ||
                        (isnan(p->value_si) && (strcmp(p->origin, "ignored") == 0 ||
                                                (p->value_text && p->value_text[0])))),
                  "parameter %zu (%s) not finite", i, p ? p->path : "?");
    }
    fz_evaluate(&s, data, size);
    pm_scenario_release(&s);
    return 0;
}
