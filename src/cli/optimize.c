/*
 * optimize.c - --optimize AXIS[=LO:HI]: per mode, the value of one design axis that maximises
 * tokens/s/mm2, tokens/s per dollar or tokens per joule (--objective; the library's log-grid
 * bracket refined with GSL's Brent minimiser).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output.h"

/* The axis and the range of --optimize AXIS[=LO:HI] (the axis's default sweep range without
 * one); 0 or EXIT_USAGE, said on stderr. LO and HI are parsed as the axis parses its values. */
static int parse_spec(const char *spec, pm_axis_kind *kind, double *lo, double *hi)
{
    const char *eq = strchr(spec, '=');
    const char *colon = eq ? strchr(eq + 1, ':') : NULL;
    if (eq && (!colon || strchr(colon + 1, ':')))
        return usage_error("--optimize: expected AXIS or AXIS=LO:HI (got '%s')", spec);
    const int name_len = eq ? (int)(eq - spec) : (int)strlen(spec);
    /* The axes --optimize searches: the continuous ones, named before anything is parsed. */
    char names[128] = "";
    const char *cont[PM_AXIS_COUNT];
    size_t n_cont = 0;
    int found = -1;
    for (int k = 0; k < PM_AXIS_COUNT; k++) {
        const char *n = pm_axis_name((pm_axis_kind)k);
        if ((int)strlen(n) == name_len && strncmp(spec, n, (size_t)name_len) == 0)
            found = k;
        if (!pm_axis_is_count((pm_axis_kind)k)) {
            cont[n_cont++] = n;
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     names[0] ? ", " : "", n);
        }
    }
    if (found < 0) {
        char *word = str_printf("%.*s", name_len, spec);
        const char *near = word ? pm_suggest(word, cont, n_cont) : NULL;
        const int rc = usage_error("--optimize: unknown axis \"%.*s\" (%s%s%sexpected %s)",
                                   name_len, spec, near ? "did you mean \"" : "",
                                   near ? near : "", near ? "\"? " : "", names);
        free(word);
        return rc;
    }
    if (pm_axis_is_count((pm_axis_kind)found))
        return usage_error("--optimize: %s is a count, and --optimize searches a continuous "
                           "axis (%s); compare counts with --sweep %s",
                           pm_axis_name((pm_axis_kind)found), names,
                           pm_axis_name((pm_axis_kind)found));
    /* One axis of LO's value and one of HI's: each is then exactly what was given. */
    char *lo_spec = eq ? str_printf("%.*s", (int)(colon - spec), spec) : str_printf("%s", spec);
    char *hi_spec = eq ? str_printf("%.*s=%s", name_len, spec, colon + 1) : NULL;
    pm_axis ax = {0}, hi_ax = {0};
    pm_error err;
    int rc = 0;
    if (!lo_spec || (eq && !hi_spec))
        rc = out_of_memory();
    else if (pm_axis_parse(lo_spec, 0, &ax, &err) != PM_OK ||
             (hi_spec && pm_axis_parse(hi_spec, 0, &hi_ax, &err) != PM_OK))
        rc = usage_pm_error("--optimize", &err);
    else if (eq && ax.n_values != 1)
        rc = usage_error("--optimize: expected AXIS or AXIS=LO:HI (got '%s')", spec);
    else if (eq && !(hi_ax.values[0] > ax.values[0]))
        rc = usage_error("--optimize: HI must be greater than LO (got '%s')", spec);
    else {
        *kind = ax.kind;
        *lo = ax.values[0];
        *hi = eq ? hi_ax.values[0] : ax.values[ax.n_values - 1];
    }
    pm_axis_release(&ax);
    pm_axis_release(&hi_ax);
    free(lo_spec);
    free(hi_spec);
    return rc;
}

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
    printf("# searched %s in [%.6g, %.6g]: 33-point log grid, then Brent (GSL) to 1e-3; %d evaluations\n",
           pm_axis_column(kind), pm_axis_display_value(kind, lo), pm_axis_display_value(kind, hi),
           opt->evaluations);
    if (c->objective != PM_OBJECTIVE_MM2)
        printf("# objective %s: the value maximising %s\n", pm_objective_name(c->objective),
               pm_objective_column(c->objective));
    if (!fits)
        printf("# fits_hbm 0: the weights and KV cache per device exceed the usable HBM at every "
               "point searched\n");
    printf("mode,best_%s,%s,bracket_lo,bracket_hi,brent_iterations,at_edge\n",
           pm_axis_column(kind), pm_objective_column(c->objective));
    for (int m = 0; m < PM_MODE_COUNT; m++)
        printf("%s,%.6g,%.6g,%.6g,%.6g,%d,%s\n", pm_mode_name((pm_mode)m),
               pm_axis_display_value(kind, opt->best_value[m]), opt->best_density[m],
               pm_axis_display_value(kind, opt->bracket_lo[m]),
               pm_axis_display_value(kind, opt->bracket_hi[m]), opt->iterations[m],
               edge_name(opt->at_edge[m]));
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
    printf(",\n  \"evaluations\": %d,\n  \"fits_hbm\": %s,\n  \"modes\": {", opt->evaluations,
           fits ? "true" : "false");
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
            printf("\"%s\"}", edge_name(opt->at_edge[m]));
        else
            printf("null}");
    }
    printf("\n  }\n}\n");
}

int cmd_optimize(const cli *c)
{
    pm_axis_kind kind = PM_AXIS_L2;
    double lo = 0.0, hi = 0.0;
    int rc = parse_spec(c->optimize, &kind, &lo, &hi);
    if (rc)
        return rc;
    pm_scenario s;
    rc = load(c, &s);
    if (rc)
        return rc;
    pm_optimum opt;
    pm_estimate e;
    pm_error err;
    if (pm_optimize_axis_for(&s, kind, c->objective, lo, hi, 33, 1e-3, 100, &opt, &err) !=
            PM_OK ||
        pm_estimate_compute(&s, &e, &err) != PM_OK) {
        pm_scenario_release(&s);
        return config_error(&err);
    }
    /* The axes searched (L2, bandwidths, compute) change neither the weights, the KV cache
     * nor the HBM: the scenario's fit is every point's. */
    warn_estimate(&s, &e);
    /* A best at the range's end where the objective still rises is the range's, not the
     * axis's: said, never left to be read as the optimum. */
    for (int m = 0; m < PM_MODE_COUNT; m++)
        if (opt.at_edge[m])
            fprintf(stderr,
                    "warning: %s: the best %s is the range's %s end (%.6g) and %s still rises "
                    "toward it: the optimum may lie beyond; widen --optimize %s=LO:HI\n",
                    pm_mode_name((pm_mode)m), pm_axis_column(kind),
                    opt.at_edge[m] < 0 ? "lower" : "upper",
                    pm_axis_display_value(kind, opt.best_value[m]),
                    pm_objective_column(c->objective), pm_axis_name(kind));
    /* A best that is a die no reticle can print is said (issue 41): the search itself is over
     * the modelled densities, buildable or not. */
    const bool sized = kind == PM_AXIS_L2 || kind == PM_AXIS_COMPUTE; /* else the base's */
    for (int m = 0; sized && m < PM_MODE_COUNT; m++) {
        pm_scenario t = s;
        t.provenance = NULL;
        double mm2 = 0.0;
        if (pm_scenario_set_axis(&t, kind, opt.best_value[m], NULL) == PM_OK &&
            pm_die_over_reticle(&t.accel, &mm2))
            fprintf(stderr,
                    "warning: %s: the best %s (%.6g) is a die of %.0f mm2, over the %.0f mm2 "
                    "reticle: it cannot be built as one piece of silicon\n",
                    pm_mode_name((pm_mode)m), pm_axis_column(kind),
                    pm_axis_display_value(kind, opt.best_value[m]), mm2, PM_RETICLE_MM2);
    }
    if (c->format == FMT_JSON)
        write_json(c, kind, lo, hi, &opt, e.fits_hbm);
    else
        write_csv(c, kind, lo, hi, &opt, e.fits_hbm);
    pm_scenario_release(&s);
    return 0;
}
