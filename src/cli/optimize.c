/*
 * optimize.c - --optimize AXIS[=LO:HI]: per mode, the value of one design axis that maximises
 * tokens/s/mm2, tokens/s per dollar or tokens per joule (--objective; a continuous axis by the
 * library's log-grid bracket refined with GSL's Brent minimiser, the counts pp, dp and split by
 * evaluating every value).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output.h"

/* "lo" or "hi" where the best is that end of the range and the objective still rises toward
 * it, else "". */
static const char *edge_name(int edge)
{
    return edge < 0 ? "lo" : edge > 0 ? "hi" : "";
}

/* The CSV: the command, the search, one row per mode. */
static void write_csv(const cli *c, pm_axis_kind kind, double lo, double hi,
                      const pm_optimum *opt, bool fits)
{
    printf("# preserve-model %s --config ", pm_version());
    fput_comment_text(stdout, c->config);
    printf(" --optimize ");
    fput_comment_text(stdout, c->optimize);
    putchar('\n');
    print_sets(stdout, c);
    if (opt->exhaustive)
        printf("# searched %s in [%.6g, %.6g]: every value, ties to the smaller value (within a "
               "relative %g); %d evaluations, %d refused\n",
               pm_axis_column(kind), lo, hi, opt->tie_rel_tol, opt->evaluations, opt->skipped);
    else
        printf("# searched %s in [%.6g, %.6g]: %d-point log grid (1 %% steps at most), then "
               "Brent (GSL) to 1e-3; %d evaluations\n",
               pm_axis_column(kind), pm_axis_display_value(kind, lo),
               pm_axis_display_value(kind, hi), pm_optimize_grid_points(lo, hi),
               opt->evaluations);
    if (c->objective != PM_OBJECTIVE_MM2)
        printf("# objective %s: the value maximising %s\n", pm_objective_name(c->objective),
               pm_objective_column(c->objective));
    if (!fits && !opt->exhaustive)
        printf("# fits_hbm 0: the weights and KV cache per device exceed the usable HBM at every "
               "point searched\n");
    printf("mode,best_%s,%s,bracket_lo,bracket_hi,brent_iterations,at_edge%s\n",
           pm_axis_column(kind), pm_objective_column(c->objective),
           opt->exhaustive ? ",ties,fits_hbm" : "");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        printf("%s,%.6g,%.6g,%.6g,%.6g,%d,%s", pm_mode_name((pm_mode)m),
               pm_axis_display_value(kind, opt->best_value[m]), opt->best_density[m],
               pm_axis_display_value(kind, opt->bracket_lo[m]),
               pm_axis_display_value(kind, opt->bracket_hi[m]), opt->iterations[m],
               edge_name(opt->at_edge[m]));
        if (opt->exhaustive)
            printf(",%d,%d", opt->ties[m], opt->fits_hbm[m] ? 1 : 0);
        putchar('\n');
    }
}

/* A count axis's own keys (docs/output-format.md): the tie, the values refused. */
static void write_json_count(const pm_optimum *opt)
{
    printf(",\n  \"tie_rel_tol\": ");
    fput_json_number(stdout, opt->tie_rel_tol);
    printf(",\n  \"skipped\": %d,\n  \"first_skipped\": ", opt->skipped);
    if (opt->skipped) {
        printf("{\"value\": ");
        fput_json_number(stdout, opt->first_skipped);
        printf(", \"error\": ");
        fput_json_string(stdout, opt->first_skipped_error);
        printf("}");
    } else {
        printf("null");
    }
}

/* The JSON: the search and an object per mode (keys in docs/output-format.md). */
static void write_json(const cli *c, pm_axis_kind kind, double lo, double hi,
                       const pm_optimum *opt, bool fits)
{
    printf("{\n  \"tool\": \"preserve-model %s\",\n  \"config\": ", pm_version());
    fput_json_string(stdout, c->config);
    printf(",\n  \"axis\": \"%s\",\n  \"column\": \"%s\",\n  \"objective\": \"%s\",\n"
           "  \"objective_column\": \"%s\",\n  \"lo\": ",
           pm_axis_name(kind), pm_axis_column(kind), pm_objective_name(c->objective),
           pm_objective_column(c->objective));
    fput_json_number(stdout, pm_axis_display_value(kind, lo));
    printf(",\n  \"hi\": ");
    fput_json_number(stdout, pm_axis_display_value(kind, hi));
    printf(",\n  \"evaluations\": %d,\n  \"fits_hbm\": %s", opt->evaluations,
           fits ? "true" : "false");
    if (opt->exhaustive)
        write_json_count(opt);
    printf(",\n  \"modes\": {");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        printf("%s\n    \"%s\": {\"best\": ", m ? "," : "", pm_mode_name((pm_mode)m));
        fput_json_number(stdout, pm_axis_display_value(kind, opt->best_value[m]));
        printf(", \"objective\": ");
        fput_json_number(stdout, opt->best_density[m]);
        printf(", \"bracket_lo\": ");
        fput_json_number(stdout, pm_axis_display_value(kind, opt->bracket_lo[m]));
        printf(", \"bracket_hi\": ");
        fput_json_number(stdout, pm_axis_display_value(kind, opt->bracket_hi[m]));
        printf(", \"brent_iterations\": %d, \"at_edge\": ", opt->iterations[m]);
        if (opt->at_edge[m])
            printf("\"%s\"", edge_name(opt->at_edge[m]));
        else
            printf("null");
        if (opt->exhaustive)
            printf(", \"ties\": %d, \"fits_hbm\": %s", opt->ties[m],
                   opt->fits_hbm[m] ? "true" : "false");
        putchar('}');
    }
    printf("\n  }\n}\n");
}

int cmd_optimize(const cli *c)
{
    pm_axis_kind kind = PM_AXIS_L2;
    double lo = 0.0, hi = 0.0;
    pm_error perr;
    if (c->objective_given && c->search_objective == PM_SEARCH_PER_DEVICE)
        return usage_error("--objective device: optimize maximises a density of the chip, mm2, "
                           "usd or joule (tokens/s per device is search's)");
    if (pm_optimize_spec_parse(c->optimize, &kind, &lo, &hi, &perr) != PM_OK)
        return usage_pm_error("--optimize", &perr);
    int rc;
    pm_scenario s;
    rc = load(c, &s);
    if (rc)
        return rc;
    pm_optimum opt;
    pm_estimate e;
    pm_error err;
    const bool count = pm_axis_is_count(kind);
    if ((count ? pm_optimize_count(&s, kind, c->objective, lo, hi, PM_OPTIMIZE_TIE_REL_TOL,
                                   &opt, &err)
               : pm_optimize_axis_for(&s, kind, c->objective, lo, hi,
                                      pm_optimize_grid_points(lo, hi), 1e-3, 100, &opt,
                                      &err)) != PM_OK ||
        (!count && pm_estimate_compute(&s, &e, &err) != PM_OK)) {
        pm_scenario_release(&s);
        return config_error(&err);
    }
    /* The continuous axes (L2, bandwidths, compute) change neither the weights, the KV cache
     * nor the HBM: the scenario's fit is every point's. A count's (pp, split) is each best's,
     * warned of by pm_optimum_warning. */
    bool fits = true;
    for (int m = 0; count && m < PM_MODE_COUNT; m++)
        fits = fits && opt.fits_hbm[m];
    if (count) {
        lo = opt.lo, hi = opt.hi;
    } else {
        warn_estimate(&s, &e);
        fits = e.fits_hbm;
    }
    /* A best at the range's end, or a die over the reticle, is said (pm_optimum_warning). */
    char note[512];
    for (size_t i = 0; pm_optimum_warning(&s, kind, c->objective, &opt, i, note, sizeof note); i++)
        fprintf(stderr, "warning: %s\n", note);
    if (c->format == FMT_JSON)
        write_json(c, kind, lo, hi, &opt, fits);
    else
        write_csv(c, kind, lo, hi, &opt, fits);
    pm_scenario_release(&s);
    return 0;
}
