/*
 * optimum.c - the optimum search of throughput density (tokens/s per mm2, per dollar, per
 * joule) along one axis: a continuous axis by a log-spaced grid that brackets the best point of
 * a piecewise objective, then GSL's Brent minimiser inside the bracket (pm_maximize_log,
 * pm_optimize_axis_for); a count, pp, dp or split, by every value, the refused ones skipped,
 * ties to the smaller value (pm_optimize_count); the `optimize` command's input
 * (pm_optimize_spec_parse) and warnings (pm_optimum_warning). The axes themselves (their
 * names, ranges and values on a scenario) are sweep.c's.
 *
 * May call: accelerator.c, alloc.c, area.c, error.c, estimate.c, plan.c, sweep.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_min.h>

#include "internal.h"

static const char *const objective_names[PM_OBJECTIVE_COUNT] = {"mm2", "usd", "joule"};
static const char *const objective_columns[PM_OBJECTIVE_COUNT] = {
    "density_tokens_per_s_per_mm2", "tokens_per_s_per_usd", "tokens_per_J"};

const char *pm_objective_name(pm_objective o)
{
    return (int)o >= 0 && o < PM_OBJECTIVE_COUNT ? objective_names[o] : "?";
}

const char *pm_objective_column(pm_objective o)
{
    return (int)o >= 0 && o < PM_OBJECTIVE_COUNT ? objective_columns[o] : "?";
}

typedef struct objective {
    pm_scenario s;
    pm_axis_kind kind;
    pm_objective obj;
    pm_mode mode;
    pm_status st;
    pm_error *err;
    int *evals;
} objective;

/* The objective goal of mode m in e, the estimate of t, whose die is die_mm2. */
static double objective_of(const pm_scenario *t, const pm_estimate *e, pm_objective goal,
                           pm_mode m, double die_mm2)
{
    switch (goal) {
    case PM_OBJECTIVE_USD: return e->modes[m].tokens_per_s_per_usd;
    case PM_OBJECTIVE_JOULE: return e->modes[m].tokens_per_J;
    default: return pm_density(e, m, pm_cluster_total_devices(&t->cluster), die_mm2);
    }
}

static double density_at(objective *o, double v)
{
    if (o->st != PM_OK)
        return NAN;
    (*o->evals)++;
    pm_scenario t = o->s;
    pm_estimate e;
    pm_area a;
    if ((o->st = pm_scenario_set_axis(&t, o->kind, v, o->err)) != PM_OK ||
        (o->st = pm_estimate_compute(&t, &e, o->err)) != PM_OK ||
        (o->st = pm_area_compute(&t.accel, &a, o->err)) != PM_OK)
        return NAN;
    return objective_of(&t, &e, o->obj, o->mode, a.die_mm2);
}

static double density_fn(double v, void *user)
{
    return density_at(user, v);
}

typedef struct log_objective {
    pm_objective_fn f;
    void *user;
    bool failed;
    double lo, hi; /* the interval: exp(log(x)) may land an ulp outside it */
} log_objective;

/* x = exp(lx) inside [o->lo, o->hi]: exp(log(1000)) is 999.9999999999998, which a bound of
 * the model's range (hbm_bw=1e3Bps) refuses; the interval is inclusive at both ends. */
static double from_log(const log_objective *o, double lx)
{
    const double x = exp(lx);
    return x < o->lo ? o->lo : x > o->hi ? o->hi : x;
}

/* GSL minimises: the objective is -f as a function of log(x). */
static double neg_log(double x, void *p)
{
    log_objective *lo = p;
    const double v = lo->failed ? NAN : lo->f(from_log(lo, x), lo->user);
    if (isnan(v))
        lo->failed = true;
    return lo->failed ? 0.0 : -v;
}

pm_status pm_maximize_log(pm_objective_fn f, void *user, double lo, double hi, int grid_points,
                          double rel_tol, int max_iter, pm_maximum *out)
{
    memset(out, 0, sizeof *out);
    log_objective o = {f, user, false, lo, hi};
    const double llo = log(lo), lhi = log(hi), dx = (lhi - llo) / (grid_points - 1);
    double *d = pm_malloc((size_t)grid_points * sizeof *d);
    if (!d)
        return PM_ERR_NOMEM;
    int best = 0;
    double best_d = -INFINITY;
    for (int i = 0; i < grid_points; i++) {
        d[i] = -neg_log(llo + i * dx, &o);
        out->evaluations++;
        if (o.failed) {
            pm_free(d);
            return PM_ERR_CANCELLED;
        }
        if (d[i] > best_d) {
            best_d = d[i];
            best = i;
        }
    }
    if (best == 0 && d[0] > d[1])
        out->edge = -1;
    else if (best == grid_points - 1 && d[best] > d[best - 1])
        out->edge = 1;
    double xb = llo + best * dx, xl = xb - dx, xh = xb + dx;
    out->best_x = from_log(&o, xb);
    out->best_f = best_d;
    out->lo = from_log(&o, xl);
    out->hi = from_log(&o, xh);
    /* Refine inside the bracket when the best grid point is interior and strictly better than
     * its neighbours (what Brent needs); at an edge the optimum is the edge. GSL's error
     * handler stays the host's business (the CLI turns it off); every call below is made with
     * its preconditions checked and its status tested. */
    pm_status st = PM_OK;
    if (best > 0 && best < grid_points - 1 && d[best] > d[best - 1] && d[best] > d[best + 1]) {
        gsl_min_fminimizer *fm = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
        gsl_function F = {neg_log, &o};
        if (!fm) {
            st = PM_ERR_NOMEM;
        } else if (gsl_min_fminimizer_set_with_values(fm, &F, xb, -d[best], xl, -d[best - 1], xh,
                                                      -d[best + 1]) == GSL_SUCCESS) {
            int it = 0, status = GSL_CONTINUE;
            while (status == GSL_CONTINUE && it < max_iter && !o.failed) {
                it++;
                out->evaluations++;
                if (gsl_min_fminimizer_iterate(fm) != GSL_SUCCESS)
                    break;
                status = gsl_min_test_interval(gsl_min_fminimizer_x_lower(fm),
                                               gsl_min_fminimizer_x_upper(fm), rel_tol, 0.0);
            }
            if (o.failed) {
                st = PM_ERR_CANCELLED;
            } else {
                const double fmv = -gsl_min_fminimizer_f_minimum(fm);
                if (fmv >= best_d) {
                    out->best_x = from_log(&o, gsl_min_fminimizer_x_minimum(fm));
                    out->best_f = fmv;
                }
                out->lo = from_log(&o, gsl_min_fminimizer_x_lower(fm));
                out->hi = from_log(&o, gsl_min_fminimizer_x_upper(fm));
                out->iterations = it;
            }
        }
        gsl_min_fminimizer_free(fm);
    }
    pm_free(d);
    return st;
}

int pm_optimize_grid_points(double lo, double hi)
{
    if (!(lo > 0) || !(hi > lo) || !isfinite(hi))
        return 33;
    const double n = ceil(log(hi / lo) / log1p(0.01)) + 1.0;
    return n < 33 ? 33 : n > 4001 ? 4001 : (int)n;
}

/* What objective goal needs of s's accelerator: the "cost" object (usd), the "energy" object
 * (joule) and its area (*a, every objective: the density's divisor). */
static pm_status objective_needs(const pm_scenario *s, pm_objective goal, pm_area *a,
                                 pm_error *err)
{
    if (goal == PM_OBJECTIVE_USD && !s->accel.cost.present)
        return pm_fail(err, PM_ERR_MISSING, NULL, "$.accelerator.cost",
                       "the usd objective needs the accelerator's \"cost\" object, and "
                       "accelerator \"%s\" has none",
                       s->accel.name);
    if (goal == PM_OBJECTIVE_JOULE && !s->accel.energy.present)
        return pm_fail(err, PM_ERR_MISSING, NULL, "$.accelerator.energy",
                       "the joule objective needs the accelerator's \"energy\" object, and "
                       "accelerator \"%s\" has none",
                       s->accel.name);
    return pm_area_compute(&s->accel, a, err);
}

pm_status pm_optimize_axis(const pm_scenario *s, pm_axis_kind kind, double lo, double hi,
                           int grid_points, double rel_tol, int max_iter, pm_optimum *out,
                           pm_error *err)
{
    return pm_optimize_axis_for(s, kind, PM_OBJECTIVE_MM2, lo, hi, grid_points, rel_tol,
                                max_iter, out, err);
}

pm_status pm_optimize_axis_for(const pm_scenario *s, pm_axis_kind kind, pm_objective goal,
                               double lo, double hi, int grid_points, double rel_tol,
                               int max_iter, pm_optimum *out, pm_error *err)
{
    if (!s || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "optimize: %s is NULL",
                       !s ? "the scenario" : "out");
    if ((int)kind < 0 || kind >= PM_AXIS_COUNT || pm_axis_is_count(kind))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "optimize searches a continuous axis (l2, l2_bw, compute, hbm_bw, "
                       "link_bw), not %s (pm_optimize_count searches pp, dp and split)",
                       pm_axis_name(kind));
    if ((int)goal < 0 || goal >= PM_OBJECTIVE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "optimize: objective %d is not one",
                       (int)goal);
    if (!(lo > 0) || !(hi > lo) || grid_points < 3 || !(rel_tol > 0) || max_iter < 1)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "optimize needs 0 < lo < hi, >= 3 grid points, rel_tol > 0 and "
                       "max_iter >= 1 (got lo %g, hi %g, %d points, rel_tol %g, max_iter %d)",
                       lo, hi, grid_points, rel_tol, max_iter);
    memset(out, 0, sizeof *out);
    pm_area a;
    pm_status st = objective_needs(s, goal, &a, err);
    for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++) {
        int evals = 0;
        objective o = {*s, kind, goal, (pm_mode)m, PM_OK, err, &evals};
        pm_maximum r;
        st = pm_maximize_log(density_fn, &o, lo, hi, grid_points, rel_tol, max_iter, &r);
        out->evaluations += evals;
        if (st == PM_ERR_CANCELLED)
            st = o.st; /* the evaluation's own error, already in err */
        else if (st == PM_ERR_NOMEM)
            st = pm_fail(err, st, NULL, NULL, "out of memory");
        if (st != PM_OK)
            break;
        out->best_value[m] = r.best_x;
        out->best_density[m] = r.best_f;
        out->bracket_lo[m] = r.lo;
        out->bracket_hi[m] = r.hi;
        out->iterations[m] = r.iterations;
        out->at_edge[m] = r.edge;
    }
    return st;
}

/* ------------------------------------------------------------ optimum of a count axis */

/* Whether pm_optimize_count searches axis k. */
static bool count_searched(pm_axis_kind k)
{
    return k == PM_AXIS_PP || k == PM_AXIS_DP || k == PM_AXIS_SPLIT;
}

/* The largest value count axis k takes in s (the smallest is 1): pp a layer per stage at
 * least; split the last stage's layers with one left to each other stage; dp the replicas of
 * the most devices a plan may have. */
static double count_domain_hi(const pm_scenario *s, pm_axis_kind k)
{
    const double L = s->model.layers, pp = pm_cluster_pp(&s->cluster);
    if (k == PM_AXIS_PP)
        return L < PM_MAX_STAGES ? L : PM_MAX_STAGES;
    if (k == PM_AXIS_SPLIT)
        return L - (pp - 1) > 1 ? L - (pp - 1) : 1;
    const double dp = floor((double)PM_MAX_DEVICES / ((double)s->cluster.devices * pp));
    return dp > 1 ? dp : 1;
}

/* Value v of count axis kind evaluated: each mode's objective into f[0..PM_MODE_COUNT), the
 * fit into *fits; else the refusal, in err. */
static pm_status count_eval(const pm_scenario *s, pm_axis_kind kind, pm_objective goal, double v,
                            double die_mm2, double *f, bool *fits, pm_error *err)
{
    pm_scenario t = *s;
    pm_estimate e;
    pm_status st = pm_scenario_set_axis(&t, kind, v, err);
    if (st == PM_OK)
        st = pm_estimate_compute(&t, &e, err);
    for (int m = 0; st == PM_OK && m < PM_MODE_COUNT; m++) {
        f[m] = objective_of(&t, &e, goal, (pm_mode)m, die_mm2);
        if (!isfinite(f[m]))
            st = pm_fail(err, PM_ERR_RANGE, NULL, NULL, "%s %.0f: the %s of %s is %g",
                         pm_axis_name(kind), v, pm_objective_column(goal),
                         pm_mode_name((pm_mode)m), f[m]);
    }
    *fits = st == PM_OK && e.fits_hbm;
    return st;
}

/* Per mode, the best of the n values' objectives (f[i * PM_MODE_COUNT + m], where ok[i]): the
 * smallest value within tie_rel_tol x the largest (ties go to the smaller value), the other
 * values of the tie, and the edge: a best better than every other value at an end of the range
 * beyond which the axis goes on (up to domain_hi). */
static void count_best(const double *f, const bool *ok, const bool *fits, size_t n,
                       double domain_hi, pm_optimum *out)
{
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double top = -INFINITY;
        size_t valid = 0, best = n;
        for (size_t i = 0; i < n; i++) {
            valid += ok[i];
            if (ok[i] && f[i * PM_MODE_COUNT + m] > top)
                top = f[i * PM_MODE_COUNT + m];
        }
        const double band = top - out->tie_rel_tol * fabs(top);
        for (size_t i = 0; i < n; i++) {
            if (!ok[i] || !(f[i * PM_MODE_COUNT + m] >= band))
                continue;
            if (best == n)
                best = i;
            else
                out->ties[m]++;
        }
        const double v = out->lo + (double)best;
        out->best_value[m] = out->bracket_lo[m] = out->bracket_hi[m] = v;
        out->best_density[m] = f[best * PM_MODE_COUNT + m];
        out->fits_hbm[m] = fits[best];
        if (out->ties[m] == 0 && valid > 1)
            out->at_edge[m] = best == 0 && out->lo > 1               ? -1
                              : best == n - 1 && out->hi < domain_hi ? 1
                                                                     : 0;
    }
}

pm_status pm_optimize_count(const pm_scenario *s, pm_axis_kind kind, pm_objective goal,
                            double lo, double hi, double tie_rel_tol, pm_optimum *out,
                            pm_error *err)
{
    if (!s || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "optimize: %s is NULL",
                       !s ? "the scenario" : "out");
    if ((int)kind < 0 || kind >= PM_AXIS_COUNT || !count_searched(kind))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "pm_optimize_count searches a count axis (pp, dp or split), not %s",
                       pm_axis_name(kind));
    if ((int)goal < 0 || goal >= PM_OBJECTIVE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "optimize: objective %d is not one",
                       (int)goal);
    const bool own = !(fabs(lo) > 0) && !(fabs(hi) > 0);
    if (!(tie_rel_tol >= 0 && tie_rel_tol < 1) ||
        (!own && !(lo >= 1 && hi >= lo && hi <= pm_axis_count_max(kind) &&
                   !(fabs(lo - round(lo)) > 0) && !(fabs(hi - round(hi)) > 0))))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "optimize %s needs integers 1 <= lo <= hi <= %.0f (or 0 and 0: the "
                       "axis's own range) and 0 <= tie_rel_tol < 1 (got lo %g, hi %g, "
                       "tie_rel_tol %g)",
                       pm_axis_name(kind), pm_axis_count_max(kind), lo, hi, tie_rel_tol);
    *out = (pm_optimum){.exhaustive = true, .tie_rel_tol = tie_rel_tol};
    pm_area a;
    pm_status st = objective_needs(s, goal, &a, err);
    if (st != PM_OK)
        return st;
    const double domain_hi = count_domain_hi(s, kind);
    double dlo, dhi;
    pm_axis_default_range(kind, &dlo, &dhi);
    if (own) /* dp: the sweep's default, its densities being flat */
        lo = 1, hi = kind == PM_AXIS_DP && domain_hi > dhi ? dhi : domain_hi;
    out->lo = lo;
    out->hi = hi;
    const size_t n = (size_t)(hi - lo) + 1;
    double *f = pm_malloc(n * PM_MODE_COUNT * sizeof *f);
    bool *ok = pm_malloc(n * sizeof *ok), *fits = pm_malloc(n * sizeof *fits);
    pm_error first = {.status = PM_OK};
    for (size_t i = 0; f && ok && fits && i < n && st == PM_OK; i++) {
        pm_error e2;
        const double v = lo + (double)i;
        out->evaluations++;
        st = count_eval(s, kind, goal, v, a.die_mm2, f + i * PM_MODE_COUNT, &fits[i], &e2);
        ok[i] = st == PM_OK;
        if (st == PM_ERR_NOMEM)
            break;
        if (st != PM_OK && out->skipped++ == 0) {
            first = e2;
            out->first_skipped = v;
            pm_error_format(&e2, out->first_skipped_error, sizeof out->first_skipped_error);
        }
        st = PM_OK;
    }
    if (!f || !ok || !fits || st == PM_ERR_NOMEM)
        st = pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    else if ((size_t)out->skipped == n)
        st = pm_fail(err, first.status, first.file, first.path,
                     "every %s in [%.0f, %.0f] was refused; the first (%.0f): %s",
                     pm_axis_name(kind), lo, hi, lo, first.message);
    else
        count_best(f, ok, fits, n, domain_hi, out);
    pm_free(f);
    pm_free(ok);
    pm_free(fits);
    return st;
}

pm_status pm_optimize_spec_parse(const char *spec, pm_axis_kind *kind, double *lo, double *hi,
                                 pm_error *err)
{
    if (!spec || !kind || !lo || !hi)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL specification or output");
    const char *eq = strchr(spec, '=');
    const char *colon = eq ? strchr(eq + 1, ':') : NULL;
    if (eq && (!colon || strchr(colon + 1, ':')))
        return pm_fail(err, PM_ERR_VALUE, NULL, NULL, "expected AXIS or AXIS=LO:HI (got '%s')",
                       spec);
    const size_t name_len = eq ? (size_t)(eq - spec) : strlen(spec);
    /* The axes the search takes: the continuous ones and the counts pm_optimize_count
     * searches, named before anything is parsed. */
    char names[128] = "";
    const char *cont[PM_AXIS_COUNT];
    size_t n_cont = 0;
    int found = -1;
    for (int k = 0; k < PM_AXIS_COUNT; k++) {
        const char *n = pm_axis_name((pm_axis_kind)k);
        if (strlen(n) == name_len && strncmp(spec, n, name_len) == 0)
            found = k;
        if (!pm_axis_is_count((pm_axis_kind)k) || count_searched((pm_axis_kind)k)) {
            cont[n_cont++] = n;
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     names[0] ? ", " : "", n);
        }
    }
    if (found < 0) {
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)(name_len < 63 ? name_len : 63), spec);
        const char *near = pm_suggest(word, cont, n_cont);
        return pm_fail(err, PM_ERR_VALUE, NULL, NULL, "unknown axis \"%.*s\" (%s%s%sexpected %s)",
                       (int)name_len, spec, near ? "did you mean \"" : "", near ? near : "",
                       near ? "\"? " : "", names);
    }
    const bool count = pm_axis_is_count((pm_axis_kind)found);
    if (count && !count_searched((pm_axis_kind)found))
        return pm_fail(err, PM_ERR_VALUE, NULL, NULL,
                       "%s is a count the optimum search does not take (it takes %s); compare "
                       "its values with a sweep of %s",
                       pm_axis_name((pm_axis_kind)found), names, pm_axis_name((pm_axis_kind)found));
    if (!eq) { /* the axis's default sweep range; a count's own range in the scenario */
        *kind = (pm_axis_kind)found;
        pm_axis_default_range(*kind, lo, hi);
        if (count)
            *lo = *hi = 0.0;
        return PM_OK;
    }
    /* LO and HI each read as the axis reads one value: bare in its unit, or with a unit. */
    char part[2][128];
    const size_t lo_len = (size_t)(colon - eq - 1);
    if (lo_len >= sizeof part[0] || strlen(colon + 1) >= sizeof part[1])
        return pm_fail(err, PM_ERR_RANGE, NULL, NULL, "range part too long in '%s'", spec);
    snprintf(part[0], sizeof part[0], "%.*s", (int)lo_len, eq + 1);
    snprintf(part[1], sizeof part[1], "%s", colon + 1);
    pm_error e2;
    if (pm_axis_value_parse(part[0], (pm_axis_kind)found, spec, lo, &e2) != PM_OK ||
        pm_axis_value_parse(part[1], (pm_axis_kind)found, spec, hi, &e2) != PM_OK)
        return pm_fail(err, e2.status, NULL, NULL, "%s", e2.message);
    if (!(*hi > *lo))
        return pm_fail(err, PM_ERR_RANGE, NULL, NULL, "HI must be greater than LO (got '%s')",
                       spec);
    *kind = (pm_axis_kind)found;
    return PM_OK;
}

/* Warning i of a count axis's search (pm_optimum_warning's after the others): the ties, the
 * values skipped, a best that does not fit the HBM. */
static bool count_warning(pm_axis_kind kind, pm_objective goal, const pm_optimum *opt, size_t i,
                          char *note, size_t n)
{
    const char *col = pm_axis_column(kind);
    size_t k = 0;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        if (opt->ties[m] > 0 && k++ == i) {
            if (note)
                snprintf(note, n,
                         "%s: %d values of %s in [%.0f, %.0f] give the best %s within a "
                         "relative %g%s: the smallest, %.0f, is reported (ties go to the "
                         "smaller value)",
                         pm_mode_name((pm_mode)m), opt->ties[m] + 1, col, opt->lo, opt->hi,
                         pm_objective_column(goal), opt->tie_rel_tol,
                         kind == PM_AXIS_DP ? " (replicas multiply tokens/s, devices, dollars "
                                              "and joules alike: the objective is flat in dp)"
                                            : "",
                         opt->best_value[m]);
            return true;
        }
    if (opt->skipped > 0 && k++ == i) {
        if (note)
            snprintf(note, n, "%d of the %d values of %s in [%.0f, %.0f] were refused and "
                              "skipped; the first, %.0f: %s",
                     opt->skipped, opt->evaluations, col, opt->lo, opt->hi, opt->first_skipped,
                     opt->first_skipped_error);
        return true;
    }
    for (int m = 0; m < PM_MODE_COUNT; m++)
        if (!opt->fits_hbm[m] && k++ == i) {
            if (note)
                snprintf(note, n,
                         "%s: at the best %s (%.0f) the weights and KV cache per device exceed "
                         "the usable HBM: the times are of memory the device does not have",
                         pm_mode_name((pm_mode)m), col, opt->best_value[m]);
            return true;
        }
    return false;
}

bool pm_optimum_warning(const pm_scenario *s, pm_axis_kind kind, pm_objective goal,
                        const pm_optimum *opt, size_t i, char *note, size_t n)
{
    if (!s || !opt || (int)kind < 0 || kind >= PM_AXIS_COUNT)
        return false;
    size_t k = 0;
    const bool priced = goal == PM_OBJECTIVE_MM2 || goal == PM_OBJECTIVE_USD;
    /* A best at the range's end where the objective still rises is the range's, not the
     * axis's: said, never left to be read as the optimum (a bandwidth taken as free rises
     * along its axis for ever: said below instead, a wider range being no answer). */
    for (int m = 0; m < PM_MODE_COUNT; m++)
        if (opt->at_edge[m] &&
            !(priced && pm_best_free_bandwidth(s, (pm_mode)m, &kind, &opt->best_value[m], 1,
                                               NULL, 0)) &&
            k++ == i) {
            if (note)
                snprintf(note, n,
                         "%s: the best %s is the range's %s end (%.6g) and %s still rises "
                         "toward it: the optimum may lie beyond; widen the range (%s=LO:HI)",
                         pm_mode_name((pm_mode)m), pm_axis_column(kind),
                         opt->at_edge[m] < 0 ? "lower" : "upper",
                         pm_axis_display_value(kind, opt->best_value[m]),
                         pm_objective_column(goal), pm_axis_name(kind));
            return true;
        }
    /* A best that is a die no reticle can print (issue 41): the search itself is over the
     * modelled objective, buildable or not. Only l2 and compute change the die. */
    for (int m = 0; (kind == PM_AXIS_L2 || kind == PM_AXIS_COMPUTE) && m < PM_MODE_COUNT; m++)
        if (pm_best_over_reticle(s, (pm_mode)m, &kind, &opt->best_value[m], 1,
                                 k == i ? note : NULL, n) &&
            k++ == i)
            return true;
    /* Per mm2 or per dollar, a best with more bandwidth than the chip's took it for free. */
    for (int m = 0; priced && m < PM_MODE_COUNT; m++)
        if (pm_best_free_bandwidth(s, (pm_mode)m, &kind, &opt->best_value[m], 1,
                                   k == i ? note : NULL, n) &&
            k++ == i)
            return true;
    return opt->exhaustive && count_warning(kind, goal, opt, i - k, note, n);
}
