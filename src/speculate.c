/*
 * speculate.c - speculative decoding's description (issue 45): the expected tokens a verify
 * step emits (Leviathan et al., ICML'23), and
 * the scenario its draft steps run under (a draft model, or the target's MTP layers); check.c
 * checks the block (pm_spec_check). The
 * verify step itself is a step of k + 1 query tokens per sequence (step.c); the estimate
 * (estimate.c) and the served workload (serve.c, disagg.c's decode pool) combine the two:
 * t per output token = (T_verify + k T_draft) / E. The rules of a served step live here too
 * (pm_spec_verify_step, pm_spec_draft_time): its decode tokens become verify tokens, and the
 * draft's steps beside it, each timed by the caller's evaluator.
 *
 * May call: error.c, model.c, text.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *pm_spec_method_name(pm_spec_method m)
{
    static const char *const names[PM_SPEC_METHOD_COUNT] = {"draft_model", "mtp"};
    return (int)m >= 0 && m < PM_SPEC_METHOD_COUNT ? names[m] : "?";
}

bool pm_spec_active(const pm_scenario *s)
{
    return s->spec.draft_tokens > 0;
}

pm_status pm_spec_refuse(const pm_scenario *s, const char *what, pm_error *err)
{
    if (!pm_spec_active(s))
        return PM_OK;
    return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.speculative",
                   "%s with speculative decoding is not modelled yet (its steps would be verify "
                   "steps advancing E tokens beside draft steps): the static estimate (run) "
                   "models it",
                   what);
}

/* The acceptance of drafted position i (1-based) of sp. */
static double accept_at(const pm_speculation *sp, int i)
{
    return sp->n_acceptance == 1 ? sp->acceptance[0] : sp->acceptance[i - 1];
}

double pm_spec_expected_tokens(const pm_speculation *sp)
{
    if (!sp || sp->draft_tokens < 0 || sp->draft_tokens > PM_MAX_SPEC_TOKENS)
        return NAN;
    if (sp->draft_tokens == 0)
        return 1.0;
    if (sp->n_acceptance != 1 && sp->n_acceptance != sp->draft_tokens)
        return NAN;
    /* 1 + sum_j prod_{i <= j} a_i: the chain of accepted drafts, then the target's own token. */
    double e = 1.0, run = 1.0;
    for (int j = 1; j <= sp->draft_tokens; j++) {
        const double a = accept_at(sp, j);
        if (!(a >= 0.0 && a < 1.0))
            return NAN;
        run *= a;
        e += run;
    }
    return e;
}

/* The target's MTP layers as a model: mtp_layers decoder layers of the target's last layer's
 * class (DeepSeek-V3's MTP module is a MoE layer), with the target's embedding and LM head
 * (shared: their weights are counted once, by the target). Not modelled: the module's eh_proj
 * (the embedding and hidden state concatenated, hidden x 2 hidden: 103 M parameters on
 * DeepSeek-V3, whole on every device) and its two norms; README's "not modelled" says what
 * that leaves out. */
static void mtp_model(const pm_model *target, int layers, pm_model *out)
{
    *out = *target;
    out->layers = layers;
    if (target->experts > 0 && pm_model_layer_is_moe(target, target->layers - 1)) {
        out->moe_first_layer = 0;
        out->moe_period = 1;
        out->moe_phase = 0;
    } else if (target->experts > 0) {
        out->experts = 0; /* a dense last layer: its heads are dense too */
        out->experts_per_token = out->expert_intermediate = 0;
        out->shared_experts = out->shared_intermediate = 0;
        out->moe_first_layer = out->moe_period = out->moe_phase = 0;
    }
    snprintf(out->name, sizeof out->name, "%.50s MTP", target->name);
}

void pm_spec_draft_scenario(const pm_scenario *s, pm_scenario *draft)
{
    *draft = *s;
    draft->provenance = NULL;
    memset(&draft->spec, 0, sizeof draft->spec);
    if (s->spec.method == PM_SPEC_MTP)
        mtp_model(&s->model, s->spec.mtp_layers, &draft->model);
    else
        draft->model = s->spec.draft;
}

double pm_spec_steps_per_token(const pm_scenario *s)
{
    return pm_spec_active(s) ? 1.0 / pm_spec_expected_tokens(&s->spec) : 1.0;
}

int pm_spec_verify_tokens(const pm_scenario *s)
{
    return pm_spec_active(s) ? s->spec.draft_tokens + 1 : 1;
}

void pm_spec_draft_steps(const pm_scenario *s, const pm_mixed_step *m, pm_mixed_step *first,
                         pm_mixed_step *rest, double *rest_count)
{
    *first = *m;
    first->decode_tokens_per_sequence = 0;
    *rest = (pm_mixed_step){.decode_sequences = m->decode_sequences,
                            .decode_context = m->decode_context};
    *rest_count = m->decode_sequences > 0 && s->spec.draft_tokens > 1
                      ? (double)(s->spec.draft_tokens - 1)
                      : 0.0;
}

pm_status pm_spec_draft_failed(pm_status st, pm_error *err)
{
    if (st == PM_OK || !err)
        return st;
    char inner[sizeof err->message];
    pm_strlcpy(inner, err->message, sizeof inner);
    return pm_fail(err, st, NULL, "$.speculative", "the draft steps: %s", inner);
}

void pm_spec_verify_step(const pm_scenario *s, pm_mixed_step *m)
{
    if (pm_spec_active(s) && m->decode_sequences > 0)
        m->decode_tokens_per_sequence = pm_spec_verify_tokens(s);
}

pm_status pm_spec_draft_time(const pm_scenario *s, const pm_mixed_step *m,
                             pm_spec_step_adder add, void *ctx, pm_error *err)
{
    if (!pm_spec_active(s))
        return PM_OK;
    pm_scenario d;
    pm_spec_draft_scenario(s, &d);
    pm_mixed_step step[2];
    double count[2] = {1.0, 0.0};
    pm_spec_draft_steps(s, m, &step[0], &step[1], &count[1]);
    pm_status st = PM_OK;
    for (int i = 0; i < 2 && st == PM_OK; i++)
        if (count[i] > 0)
            st = add(ctx, &d, &step[i], count[i], err);
    return pm_spec_draft_failed(st, err);
}
