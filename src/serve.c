/*
 * serve.c - served workloads: steps of continuous batching, where prefill chunks run beside
 * decode tokens (pm_mixed_step_time, on the fast path: a plan of the step's own template,
 * PRESERVE's decisions over its own windows). The steady state of a served workload (TTFT,
 * TPOT, throughput per device and per user over concurrency) lands here next
 * (docs/architecture.md).
 *
 * May call: check.c, error.c, step.c, step_plan.c.
 */
#include <math.h>

#include "internal.h"

pm_status pm_mixed_step_time(const pm_scenario *s, pm_mode mode, const pm_mixed_step *m,
                             double *time_s, pm_error *err)
{
    if (!s || !m || !time_s || (int)mode < 0 || mode >= PM_MODE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_mixed_step_time");
    pm_step step;
    pm_status st = pm_scenario_check(s, err);
    if (st == PM_OK)
        st = pm_step_mixed(s, m, &step, err);
    if (st != PM_OK)
        return st;
    pm_step_plan plan;
    st = pm_step_plan_build(s, &step, mode == PM_MODE_FUSED, mode == PM_MODE_PRESERVE, &plan, err);
    if (st != PM_OK)
        return st;
    st = pm_step_plan_eval(&plan, mode == PM_MODE_PRESERVE, step.context, time_s, NULL);
    if (st == PM_OK && !(*time_s > 0 && *time_s < INFINITY))
        st = PM_ERR_RANGE;
    if (st == PM_ERR_RANGE)
        return pm_fail(err, st, NULL, NULL, "the step time is not finite and positive: a "
                                           "bandwidth, peak, latency or size is too small or "
                                           "too large for double precision");
    if (st != PM_OK)
        return pm_fail(err, st, NULL, NULL, "the schedule of a step is inconsistent");
    return PM_OK;
}
