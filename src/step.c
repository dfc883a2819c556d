/*
 * step.c - the step: a description of what one forward pass of the devices serves, taken alike
 * by the graph builder (build.c), the fast evaluator (step_plan.c) and, through the nodes they
 * make, the costs. A step serves the batch's decode tokens, every sequence at the same context,
 * or the batch's prompts prefilled whole (pm_step_of), or, under continuous batching with
 * chunked prefill, prefill chunks at their offsets beside decode tokens (pm_step_mixed, from
 * the public pm_mixed_step); the builder reads the step, never the workload's batch. A
 * speculating scenario's decode step (and a mixed step's decode_tokens_per_sequence) is a
 * verify step: k + 1 query tokens per decoding sequence at its context (issue 45).
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
    /* A speculating scenario's decode step is its verify step. */
    const double queries =
        phase == PM_PHASE_DECODE ? 1.0 + (double)s->spec.draft_tokens : 1.0;
    out->phase = phase;
    out->context = context;
    out->sequences = batch;
    out->tokens = phase == PM_PHASE_DECODE ? batch * queries : batch * (double)context;
    out->mixed = false;
    out->mix.n_chunks = 0;
    out->queries = queries;
    return PM_OK;
}

double pm_step_decode_sequences(const pm_step *step)
{
    if (step->mixed)
        return step->mix.decode_sequences;
    return step->phase == PM_PHASE_DECODE ? step->sequences : 0.0;
}

double pm_step_query_triangle(const pm_step *step)
{
    return step->queries * (step->queries - 1.0) / 2.0;
}

/* The largest count or length a mixed step takes: far beyond any served batch, and small enough
 * that every product the builder forms stays exact in a double. */
#define STEP_MAX_COUNT 1e9
#define STEP_MAX_TOKENS ((int64_t)1 << 40)

pm_status pm_step_mixed(const pm_scenario *s, const pm_mixed_step *m, pm_step *out,
                        pm_error *err)
{
    if (!s || !m || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL scenario or mixed step");
    if (!(m->decode_sequences >= 0 && m->decode_sequences <= STEP_MAX_COUNT) ||
        m->decode_context < 0 || m->decode_context > STEP_MAX_TOKENS)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "a mixed step's decode sequences must be in [0, 1e9] and their context "
                       "in [0, 2^40] (got %g at %lld)",
                       m->decode_sequences, (long long)m->decode_context);
    if (m->decode_tokens_per_sequence < 0 ||
        m->decode_tokens_per_sequence > PM_MAX_SPEC_TOKENS + 1)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "a mixed step's decode tokens per sequence must be in [0, %d] (got %d)",
                       PM_MAX_SPEC_TOKENS + 1, m->decode_tokens_per_sequence);
    if (m->n_chunks < 0 || m->n_chunks > PM_MAX_STEP_CHUNKS)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "a mixed step holds 0 to %d chunk groups (got %d)", PM_MAX_STEP_CHUNKS,
                       m->n_chunks);
    const double queries =
        m->decode_tokens_per_sequence > 1 ? (double)m->decode_tokens_per_sequence : 1.0;
    double tokens = m->decode_sequences * queries, sequences = m->decode_sequences;
    for (int i = 0; i < m->n_chunks; i++) {
        const pm_step_chunk *c = &m->chunks[i];
        if (!(c->count > 0 && c->count <= STEP_MAX_COUNT) || c->tokens < 1 ||
            c->tokens > STEP_MAX_TOKENS || c->offset < 0 || c->offset > STEP_MAX_TOKENS ||
            !(c->finishing >= 0 && c->finishing <= c->count))
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                           "chunk group %d: count must be in (0, 1e9], tokens in [1, 2^40], "
                           "offset in [0, 2^40] and finishing in [0, count] (got %g x %lld at "
                           "%lld, %g finishing)",
                           i, c->count, (long long)c->tokens, (long long)c->offset, c->finishing);
        tokens += c->count * (double)c->tokens;
        sequences += c->finishing;
    }
    if (!(tokens > 0))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "a mixed step of no token");
    if (m->n_chunks == 0) {
        out->phase = PM_PHASE_DECODE;
        out->context = m->decode_context;
        out->sequences = m->decode_sequences;
        out->tokens = tokens;
        out->mixed = false;
        out->mix.n_chunks = 0;
        out->queries = queries;
        return PM_OK;
    }
    out->queries = queries;
    out->phase = PM_PHASE_PREFILL;
    out->context = m->decode_context;
    out->sequences = sequences;
    out->tokens = tokens;
    out->mixed = true;
    out->mix = *m;
    return PM_OK;
}
