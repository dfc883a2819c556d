/*
 * optimize.c - --optimize AXIS[=LO:HI]: per mode, the value of one design axis that maximises
 * tokens/s/mm2, tokens/s per dollar or tokens per joule (--objective; the library's log-grid
 * bracket refined with GSL's Brent minimiser).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

int cmd_optimize(const cli *c)
{
    char spec[256];
    snprintf(spec, sizeof spec, "%s", c->optimize);
    pm_axis ax;
    pm_error err;
    /* The range defaults to the axis's default sweep range. */
    char *eq = strchr(spec, '=');
    char axis_only[64];
    snprintf(axis_only, sizeof axis_only, "%.*s", eq ? (int)(eq - spec) : (int)strlen(spec), spec);
    char full[300];
    if (eq)
        snprintf(full, sizeof full, "%s=%s:x2", axis_only, eq + 1);
    else
        snprintf(full, sizeof full, "%s", axis_only);
    if (pm_axis_parse(full, 0, &ax, &err) != PM_OK)
        return usage_pm_error("--optimize", &err);
    double lo = ax.values[0], hi = ax.values[ax.n_values - 1];
    if (eq) { /* LO:HI exactly, not the last geometric point */
        char *colon = strchr(eq + 1, ':');
        if (!colon || strchr(colon + 1, ':')) {
            pm_axis_release(&ax);
            return usage_error("--optimize: expected AXIS or AXIS=LO:HI (got '%s')", c->optimize);
        }
        pm_axis hi_ax;
        char hs[300];
        snprintf(hs, sizeof hs, "%s=%s", axis_only, colon + 1);
        if (pm_axis_parse(hs, 0, &hi_ax, &err) == PM_OK) {
            hi = hi_ax.values[0];
            pm_axis_release(&hi_ax);
        }
    }
    pm_axis_kind kind = ax.kind;
    pm_axis_release(&ax);
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    pm_optimum opt;
    if (pm_optimize_axis_for(&s, kind, c->objective, lo, hi, 33, 1e-3, 100, &opt, &err) !=
        PM_OK) {
        pm_scenario_release(&s);
        return config_error(&err);
    }
    printf("# preserve-model %s --config %s --optimize %s\n", pm_version(), c->config, c->optimize);
    print_sets(stdout, c);
    printf("# searched %s in [%.6g, %.6g]: 33-point log grid, then Brent (GSL) to 1e-3; %d evaluations\n",
           pm_axis_column(kind), pm_axis_display_value(kind, lo), pm_axis_display_value(kind, hi),
           opt.evaluations);
    if (c->objective != PM_OBJECTIVE_MM2)
        printf("# objective %s: the value maximising %s\n", pm_objective_name(c->objective),
               pm_objective_column(c->objective));
    printf("mode,best_%s,%s,bracket_lo,bracket_hi,brent_iterations\n", pm_axis_column(kind),
           pm_objective_column(c->objective));
    for (int m = 0; m < PM_MODE_COUNT; m++)
        printf("%s,%.6g,%.6g,%.6g,%.6g,%d\n", pm_mode_name((pm_mode)m),
               pm_axis_display_value(kind, opt.best_value[m]), opt.best_density[m],
               pm_axis_display_value(kind, opt.bracket_lo[m]),
               pm_axis_display_value(kind, opt.bracket_hi[m]), opt.iterations[m]);
    pm_scenario_release(&s);
    return 0;
}
