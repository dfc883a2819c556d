/*
 * workload.c - the token counts derived from a workload, each with one home: the prompt and
 * decode token counts and the context a single-step view shows by default. Every caller (the
 * consistency check, the estimate, the views of the CLI) asks here instead of restating the
 * rule. (The datatypes a workload implies are in dtype.c.)
 *
 * May call: nothing of the library (the public structs only).
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
