/*
 * search_mix.c - a search over a weighted mix of models and workloads (pm_search_mix_run,
 * issue 46 item 1): which chip design serves a fleet's mix best. At each point of the mix's
 * hardware axes every member is searched alone (pm_search_run on its own scenario, its spec's
 * deployments (TP, pipeline stages, EP), lengths and limits, with the point as its one
 * hardware value per axis), and the members' best candidates per mode are joined: each member
 * runs on its own best deployment (its count of stages among them; with the spec's disagg a
 * prefill and a decode pool among them: pm_search_run's candidates, the rules its own), so the
 * resources of a token add over the members' shares and the mix's objective is
 *
 *   1 / sum_i (share_i / objective_i)          (shares normalised to sum 1)
 *
 * the shares' weighted harmonic mean (tokens/s per device: devices per token/s add; per mm2
 * and per dollar likewise, the chip being one design; tokens per joule: joules per token
 * add). A point where some member meets none of its limits serves no mix (missing names it).
 * The points run in the axes' order, the last fastest, as pm_search_run orders its groups; the
 * best point of a mode is the first among equals.
 *
 * May call: alloc.c, error.c, estimate.c, search.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The mix's own rules: members, shares, one chip, one objective, axes the members lack. */
static pm_status check_mix(const pm_search_mix *mix, pm_error *err)
{
    if (mix->n_members < 1 || mix->n_members > PM_SEARCH_MAX_MEMBERS || mix->n_hw < 0 ||
        mix->n_hw > PM_SEARCH_MAX_HW)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "search mix: 1 to %d members and at most %d hardware axes (got %d and "
                       "%d)",
                       PM_SEARCH_MAX_MEMBERS, PM_SEARCH_MAX_HW, mix->n_members, mix->n_hw);
    for (int a = 0; a < mix->n_hw; a++)
        if (!mix->hw[a].values || mix->hw[a].n_values == 0)
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                           "search mix: hardware axis %d is not parsed", a + 1);
    for (int i = 0; i < mix->n_members; i++) {
        const pm_search_member *mb = &mix->member[i];
        const char *why = !mb->scenario                         ? "has no scenario"
                          : !(mb->share > 0.0 && isfinite(mb->share))
                              ? "needs a finite share > 0"
                          : mb->spec.n_hw != 0 ? "has hardware axes of its own (the mix's apply)"
                          : mb->spec.shard_count != 0 ? "is a shard (a mix is searched whole)"
                          : mb->spec.objective != mix->objective
                              ? "has another objective than the mix's"
                              : NULL;
        if (why)
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "search mix: member %d %s",
                           i + 1, why);
        const char *chip = mb->scenario->accel.name, *first = mix->member[0].scenario->accel.name;
        if (strcmp(chip, first) != 0)
            return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.accelerator",
                           "search mix: member %d runs on accelerator \"%s\" and member 1 on "
                           "\"%s\": a mix is served by one chip design",
                           i + 1, chip, first);
    }
    /* The shares are relative; their sum divides each (join_point): it must be finite. */
    double total = 0.0;
    for (int i = 0; i < mix->n_members; i++)
        total += mix->member[i].share;
    if (!isfinite(total))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "search mix: the shares sum to %g, beyond a double (they are relative: "
                       "0.6 and 0.4, or 3 and 2, weigh the same)",
                       total);
    return PM_OK;
}

/* Point p's coordinates, the last axis fastest. */
static void point_coords(const pm_search_mix *mix, size_t p, double *hw)
{
    size_t rest = p;
    for (int a = mix->n_hw - 1; a >= 0; a--) {
        hw[a] = mix->hw[a].values[rest % mix->hw[a].n_values];
        rest /= mix->hw[a].n_values;
    }
}

/* Member i searched at point p into the result's slots. */
static pm_status search_member(const pm_search_mix *mix, int i, size_t p, pm_search_spec *sp,
                               pm_search_mix_result *out, pm_error *err)
{
    const pm_search_member *mb = &mix->member[i];
    *sp = mb->spec;
    double v[PM_SEARCH_MAX_HW];
    point_coords(mix, p, v);
    for (int a = 0; a < mix->n_hw; a++)
        sp->hw[a] = (pm_axis){.kind = mix->hw[a].kind, .values = &v[a], .n_values = 1};
    sp->n_hw = mix->n_hw;
    pm_search_result r;
    pm_status st = pm_search_run(mb->scenario, sp, &r, err);
    if (st != PM_OK) {
        char inner[sizeof err->message];
        pm_strlcpy(inner, err->message, sizeof inner);
        snprintf(err->message, sizeof err->message, "search mix: member %d (%s): %s", i + 1,
                 mb->scenario->model.name, inner);
        return st;
    }
    size_t at = (p * (size_t)out->n_members + (size_t)i) * PM_MODE_COUNT;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        out->members[at + (size_t)m] = r.best[m];
        out->binds[at + (size_t)m] = r.found[m] ? r.binds[m] : PM_BOUND_NONE;
        if (!r.found[m] && out->points[p].missing[m] < 0)
            out->points[p].missing[m] = i;
    }
    out->candidates += r.candidates;
    out->evaluated += r.evaluated;
    out->pruned += r.pruned;
    out->outside += r.outside;
    out->invalid_plans += r.invalid_plans;
    pm_search_result_free(&r);
    return PM_OK;
}

/* Point p's mix objective per mode from its members' bests, and the best point so far. */
static void join_point(const pm_search_mix *mix, size_t p, pm_search_mix_result *out)
{
    double total = 0.0;
    for (int i = 0; i < mix->n_members; i++)
        total += mix->member[i].share;
    pm_search_mix_point *pt = &out->points[p];
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        pt->found[m] = pt->missing[m] < 0;
        double per = 0.0; /* resources per token of the mix */
        for (int i = 0; pt->found[m] && i < mix->n_members; i++) {
            size_t at = (p * (size_t)out->n_members + (size_t)i) * PM_MODE_COUNT + (size_t)m;
            per += mix->member[i].share / total / out->members[at].objective;
        }
        pt->objective[m] = pt->found[m] ? 1.0 / per : NAN;
        if (pt->found[m] &&
            (!out->found[m] || pt->objective[m] > out->points[out->best[m]].objective[m])) {
            out->found[m] = true;
            out->best[m] = p;
        }
    }
}

pm_status pm_search_mix_run(const pm_search_mix *mix, pm_search_mix_result *out, pm_error *err)
{
    memset(out, 0, sizeof *out);
    pm_status st = check_mix(mix, err);
    if (st != PM_OK)
        return st;
    size_t n = 1;
    for (int a = 0; a < mix->n_hw; a++)
        n *= mix->hw[a].n_values;
    const size_t slots = n * (size_t)mix->n_members * PM_MODE_COUNT;
    out->n_points = n;
    out->n_members = mix->n_members;
    out->points = pm_calloc(n, sizeof *out->points);
    out->members = pm_calloc(slots, sizeof *out->members);
    out->binds = pm_calloc(slots, sizeof *out->binds);
    pm_search_spec *sp = pm_calloc(1, sizeof *sp);
    if (!out->points || !out->members || !out->binds || !sp) {
        pm_free(sp);
        pm_search_mix_result_free(out);
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "search mix: out of memory");
    }
    for (size_t p = 0; p < n && st == PM_OK; p++) {
        point_coords(mix, p, out->points[p].hw);
        for (int m = 0; m < PM_MODE_COUNT; m++)
            out->points[p].missing[m] = -1;
        for (int i = 0; i < mix->n_members && st == PM_OK; i++)
            st = search_member(mix, i, p, sp, out, err);
        if (st == PM_OK)
            join_point(mix, p, out);
    }
    pm_free(sp);
    if (st != PM_OK)
        pm_search_mix_result_free(out);
    return st;
}

bool pm_search_mix_warning(const pm_search_mix *mix, const pm_search_mix_result *r, size_t i,
                           char *note, size_t n)
{
    if (!mix || !r || mix->n_members < 1 || !mix->member[0].scenario)
        return false;
    /* One chip for every member (pm_search_mix_run refuses others): the first's. */
    const double *best_hw[PM_MODE_COUNT];
    for (int m = 0; m < PM_MODE_COUNT; m++)
        best_hw[m] = r->found[m] && r->best[m] < r->n_points ? r->points[r->best[m]].hw : NULL;
    size_t k = 0; /* the chip's, then each member's best at an uneven split */
    while (pm_search_chip_warning(mix->member[0].scenario, mix->hw, mix->n_hw, mix->objective,
                                  best_hw, k, NULL, 0))
        k++;
    if (i < k)
        return pm_search_chip_warning(mix->member[0].scenario, mix->hw, mix->n_hw,
                                      mix->objective, best_hw, i, note, n);
    for (int m = 0; m < PM_MODE_COUNT; m++)
        for (int a = 0; best_hw[m] && a < r->n_members && a < mix->n_members; a++) {
            const pm_search_candidate *c =
                &r->members[(r->best[m] * (size_t)r->n_members + (size_t)a) * PM_MODE_COUNT +
                            (size_t)m];
            const pm_scenario *s = mix->member[a].scenario;
            char label[96];
            snprintf(label, sizeof label, "%s, member %d (%s)", pm_mode_name((pm_mode)m), a + 1,
                     s->model.name);
            for (size_t j = 0; pm_search_uneven_warning(s, label, c, j, NULL, 0); j++)
                if (k++ == i)
                    return pm_search_uneven_warning(s, label, c, j, note, n);
        }
    return false;
}

void pm_search_mix_result_free(pm_search_mix_result *r)
{
    if (!r)
        return;
    pm_free(r->points);
    pm_free(r->members);
    pm_free(r->binds);
    r->points = NULL;
    r->members = NULL;
    r->binds = NULL;
    r->n_points = 0;
}
