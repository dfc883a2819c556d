/*
 * disagg_sweep.c - co-design of a disaggregated deployment (issue 45): the chip of one pool
 * (its L2, L2 bandwidth, compute or HBM bandwidth) swept with the sweep's own axis rules
 * (pm_scenario_set_axis) while the other pool stays as it is, every point a whole deployment
 * (pm_disagg_compute), and the pool's best point by its own throughput density in PRESERVE:
 * a prefill chip by its prompt tokens/s per mm2, a decode chip by its output tokens/s per mm2 at
 * the stated decode concurrency, among the points that meet the TTFT and TPOT limits (the
 * interactivity). pm_disagg_codesign_warning says where that best is a chip no reticle prints
 * or took bandwidth for free (sweep.c's texts).
 *
 * May call: disagg.c, error.c, sweep.c.
 */
#include <string.h>

#include "internal.h"

const char *pm_disagg_pool_name(pm_disagg_pool pool)
{
    static const char *const names[PM_DISAGG_POOL_COUNT] = {"prefill", "decode"};
    return (int)pool >= 0 && pool < PM_DISAGG_POOL_COUNT ? names[pool] : "?";
}

/* The pool's own density in PRESERVE at a point (0 without one, or where the deployment misses
 * the workload's TTFT or TPOT limit: the interactivity asked for). */
static double pool_density(const pm_disagg_result *r, pm_disagg_pool pool)
{
    const pm_disagg_mode *x = &r->modes[PM_MODE_PRESERVE];
    if (!x->meets_limits)
        return 0.0;
    return pool == PM_DISAGG_PREFILL ? x->prefill_tokens_per_s_per_mm2
                                     : x->decode_tokens_per_s_per_mm2;
}

bool pm_disagg_codesign_axis(pm_axis_kind axis)
{
    return axis == PM_AXIS_L2 || axis == PM_AXIS_L2_BW || axis == PM_AXIS_COMPUTE ||
           axis == PM_AXIS_HBM_BW;
}

pm_status pm_disagg_codesign(const pm_scenario *prefill, const pm_scenario *decode,
                             const pm_disagg_workload *w, pm_disagg_pool pool,
                             pm_axis_kind axis, const double *values, size_t n,
                             pm_disagg_codesign_point *points, int *best, pm_error *err)
{
    if (!prefill || !decode || !w || !values || !points || !best || n == 0 || n > 1u << 20 ||
        (int)pool < 0 || pool >= PM_DISAGG_POOL_COUNT || !pm_disagg_codesign_axis(axis))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "bad argument to pm_disagg_codesign (a pool's chip sweeps l2, l2_bw, "
                       "compute or hbm_bw)");
    /* The pools as given must make a deployment: their errors are the caller's to fix. */
    pm_disagg_result *base = &points[0].result;
    pm_status st = pm_disagg_compute(prefill, decode, w, base, err);
    if (st != PM_OK)
        return st;
    *best = -1;
    double top = 0.0;
    for (size_t i = 0; i < n; i++) {
        pm_scenario t = pool == PM_DISAGG_PREFILL ? *prefill : *decode;
        t.provenance = NULL;
        pm_disagg_codesign_point *p = &points[i];
        memset(p, 0, sizeof *p);
        p->value = values[i];
        p->status = pm_scenario_set_axis(&t, axis, values[i], NULL);
        if (p->status == PM_OK)
            p->status = pool == PM_DISAGG_PREFILL
                            ? pm_disagg_compute(&t, decode, w, &p->result, NULL)
                            : pm_disagg_compute(prefill, &t, w, &p->result, NULL);
        const double d = p->status == PM_OK ? pool_density(&p->result, pool) : 0.0;
        if (d > top) {
            top = d;
            *best = (int)i;
        }
    }
    return PM_OK;
}

bool pm_disagg_codesign_warning(const pm_scenario *chip, pm_axis_kind axis,
                                const pm_disagg_codesign_point *points, size_t n_points,
                                int best, size_t i, char *note, size_t n)
{
    if (!chip || !points || best < 0 || (size_t)best >= n_points)
        return false;
    char *out = note && n > 0 ? note : NULL;
    /* The best is PRESERVE's, by a density per mm2: a die over the reticle there, then a
     * bandwidth above the chip's (free along the axis) are said (the search's texts). */
    const double v = points[best].value;
    size_t k = 0;
    if (pm_best_over_reticle(chip, PM_MODE_PRESERVE, &axis, &v, 1, k == i ? out : NULL, n) &&
        k++ == i)
        return true;
    return pm_best_free_bandwidth(chip, PM_MODE_PRESERVE, &axis, &v, 1, k == i ? out : NULL, n) &&
           k == i;
}
