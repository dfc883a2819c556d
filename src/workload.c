/*
 * workload.c - the quantities derived from a workload, each with one home: the prompt and
 * decode token counts, the context a single-step view shows by default, and the allreduce
 * payload type. Every caller (the consistency check, the estimate, the views of the CLI) asks
 * here instead of restating the rule.
 */
#include <math.h>

#include "internal.h"

int64_t pm_workload_prompt_tokens(const pm_workload *w)
{
    return (int64_t)llround((double)w->seq_len * w->prefill_frac);
}

int64_t pm_workload_decode_steps(const pm_workload *w)
{
    return w->seq_len - pm_workload_prompt_tokens(w);
}

int64_t pm_default_context(const pm_workload *w, pm_phase phase)
{
    return phase == PM_PHASE_PREFILL ? pm_workload_prompt_tokens(w) : w->seq_len - 1;
}

pm_dtype pm_allreduce_dtype(const pm_workload *w)
{
    return w->allreduce_dtype_given ? w->allreduce_dtype : w->act_dtype;
}
