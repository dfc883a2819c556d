/*
 * step.c - the step: a description of what one forward pass of the devices serves, taken alike
 * by the graph builder (build.c), the fast evaluator (step_plan.c) and, through the nodes they
 * make, the costs. Today a step serves one kind of work: the batch's decode tokens, every
 * sequence at the same context, or the batch's prompts prefilled whole. Mixed steps (prefill
 * chunks at their offsets beside decode tokens) extend this struct and pm_step_of's rules
 * (docs/architecture.md); the builder reads the step, never the workload's batch directly.
 *
 * May call: error.c.
 */
#include "internal.h"

pm_status pm_step_of(const pm_scenario *s, pm_phase phase, int64_t context, pm_step *out,
                     pm_error *err)
{
    if (!s || !out || (phase != PM_PHASE_DECODE && phase != PM_PHASE_PREFILL))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_graph_build");
    if (context < (phase == PM_PHASE_PREFILL ? 1 : 0))
        return pm_fail(err, PM_ERR_RANGE, NULL, NULL, "context length must be >= %d (got %lld)",
                       phase == PM_PHASE_PREFILL ? 1 : 0, (long long)context);
    const double batch = (double)s->workload.batch;
    out->phase = phase;
    out->context = context;
    out->sequences = batch;
    out->tokens = phase == PM_PHASE_DECODE ? batch : batch * (double)context;
    return PM_OK;
}
