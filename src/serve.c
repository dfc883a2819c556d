/*
 * serve.c - served workloads: continuous batching's steps, where prefill chunks run beside
 * decode tokens (pm_mixed_step_time, on the fast path: a plan of the step's own template,
 * PRESERVE's decisions over its own windows), and a served workload's steady state
 * (pm_serve_compute): the step rule (decode-first with chunked prefill, or prefill-first)
 * counted in steps, each kind of step timed once per mode, then TTFT, TPOT, end-to-end latency
 * and throughput per device, per user, per mm2, per dollar and per joule, and whether the
 * sequences' cache fits the HBM.
 *
 * May call: alloc.c, area.c, check.c, die_cost.c, energy.c, error.c, footprint.c, insert.c,
 * pipeline.c, plan.c, runtime.c, speculate.c, step.c, step_plan.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The scenario a mixed step runs under: s with its batch the sequences the step schedules (its
 * decode tokens' and its chunks' prompts, rounded, at least 1), which the runtime's per-step
 * host work counts (runtime.c): a scheduler at concurrency 256 prepares 256 sequences a step,
 * whatever batch the scenario's static estimate names. t holds the copy; s itself when no
 * runtime work depends on the batch (nothing else reads it). */
static double step_sequences(const pm_mixed_step *m)
{
    double n = m->decode_sequences;
    for (int i = 0; i < m->n_chunks && i < PM_MAX_STEP_CHUNKS; i++)
        n += m->chunks[i].count;
    return n;
}

static const pm_scenario *step_scenario(const pm_scenario *s, const pm_mixed_step *m,
                                        pm_scenario *t)
{
    if (!s->runtime.present || !(s->runtime.sequence_overhead_s > 0.0))
        return s;
    const double n = step_sequences(m);
    *t = *s;
    t->provenance = NULL;
    t->workload.batch = n < 1.5 ? 1 : n >= PM_MAX_BATCH ? PM_MAX_BATCH : (int)llround(n);
    return t;
}

static pm_status staged_step_time(const pm_scenario *s, pm_mode mode, const pm_mixed_step *m,
                                  double *time_s, pm_error *err);

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
    if (pm_cluster_pp(&s->cluster) > 1)
        return staged_step_time(s, mode, m, time_s, err);
    pm_scenario copy;
    const pm_scenario *t = step_scenario(s, m, &copy);
    pm_step_plan plan;
    st = pm_step_plan_build(t, &step, mode == PM_MODE_FUSED, mode == PM_MODE_PRESERVE, &plan,
                            err);
    if (st != PM_OK)
        return st;
    return pm_step_plan_time(&plan, mode == PM_MODE_PRESERVE, step.context, time_s, err);
}

const char *pm_serve_rule_name(pm_serve_rule r)
{
    static const char *const names[PM_SERVE_RULE_COUNT] = {"decode_first", "prefill_first"};
    return (int)r >= 0 && r < PM_SERVE_RULE_COUNT ? names[r] : "?";
}

const char *pm_serve_arrival_name(pm_serve_arrival a)
{
    static const char *const names[PM_SERVE_ARRIVAL_COUNT] = {"staggered", "wave"};
    return (int)a >= 0 && a < PM_SERVE_ARRIVAL_COUNT ? names[a] : "?";
}

/* ---------------------------------------------------------------- the steady state in steps */

/* The steady state counted in steps, before any step is timed: up to two kinds of step, each a
 * mixed step with its share of a cycle (steps of that kind per cycle), the requests a cycle
 * ends, and how the first token's time is made of the step times. */
#define SERVE_KINDS (PM_MAX_LENGTH_CLASSES + 2)

typedef struct serve_plan {
    double weight[SERVE_KINDS]; /* steps of each kind per cycle (0: the kind is absent) */
    double requests;    /* requests ended per cycle */
    /* TTFT = the sum of ttft_steps[k] x t(kind k), or, with ttft_by_little, what Little's law
     * leaves once every later token took one step of kind 0 */
    double ttft_steps[SERVE_KINDS];
    bool ttft_by_little;
    /* The longest gap a decoding sequence sees: slow_steps[k] steps of each kind k, and the
     * longest step of the kinds slow_max_of marks (a gap that holds one step of whichever of
     * them runs: the classes' prefill steps) */
    double slow_steps[SERVE_KINDS];
    bool slow_max_of[SERVE_KINDS];
    double osl_mean;    /* output tokens per request (0: the workload's output_tokens) */
    double held;        /* positions a sequence in flight holds on average (0: memory_of's
                           rule for one length) */
    double decoding, prefilling, prefill_steps, mixed_frac, chunk_tokens;
    bool budget_bound;
    /* Speculative decoding (spec_plan): decode steps per output token after the first (1 / E)
     * and the tokens a decoding sequence puts in a step (k + 1); 1 and 1 without. */
    double per_token, verify;
    /* The kinds of step, last: only those a plan gives a weight or TTFT steps are set and read
     * (plan_init zeroes what comes before them). */
    pm_mixed_step kind[SERVE_KINDS];
} serve_plan;

/* An empty plan: every field before the kinds zeroed (the kinds are written as they are
 * planned; zeroing them all costs a served point about 2 % more work). */
static void plan_init(serve_plan *p)
{
    memset(p, 0, offsetof(serve_plan, kind));
}

/* Decoding sequences' mean context: a request decodes at input .. input + output - 2. */
static int64_t decode_context(const pm_serve_workload *w)
{
    return w->input_tokens + llround((double)(w->output_tokens - 2) / 2.0);
}

/* A chunk group of `count` prompts' chunks of t tokens at the mean offset of a prompt's chunks
 * of t ((input - t) / 2: exact for the linear pair and cache counts), `finishing` of them the
 * last. */
static pm_step_chunk chunk_in(int64_t input_tokens, double count, double t, double finishing)
{
    const int64_t tokens = llround(t) < 1 ? 1 : llround(t);
    const int64_t offset = llround((double)(input_tokens - tokens) / 2.0);
    return (pm_step_chunk){count, tokens, offset < 0 ? 0 : offset, finishing};
}

static pm_step_chunk chunk_of(const pm_serve_workload *w, double count, double t,
                              double finishing)
{
    return chunk_in(w->input_tokens, count, t, finishing);
}

/* Decode-first with the budget binding: every step full, prompts queue for it. */
static void decode_first_bound(const pm_serve_workload *w, serve_plan *p)
{
    const double isl = (double)w->input_tokens, osl = (double)w->output_tokens;
    const double B = (double)w->chunk_budget, N = w->concurrency;
    const double D = (osl - 1.0) * p->per_token, v = p->verify; /* a request's decode steps */
    const double r = B / (isl + D * v); /* requests per step: r (isl + D v) = B */
    const double g = r * D, room = B - g * v;
    const double t = room < isl ? room : isl;
    /* room / t prompts hold a chunk, r finish: equal where a prompt fits (room = r isl), and
     * held to it where the two roundings differ by an ulp. */
    const double count = room / t < r ? r : room / t;
    p->kind[0] = (pm_mixed_step){g, decode_context(w), 1, {chunk_of(w, count, t, r)}, 0};
    p->weight[0] = 1.0;
    p->slow_steps[0] = 1.0;
    p->requests = r;
    p->ttft_by_little = true;
    p->decoding = g;
    p->prefilling = N - g;
    p->prefill_steps = (N - g) / r;
    p->mixed_frac = 1.0;
    p->chunk_tokens = room;
    p->budget_bound = true;
}

/* Steps a prompt's prefill spans when `room` tokens of each step are left to it. */
static double prefill_span(const pm_serve_workload *w, double room)
{
    return ceil((double)w->input_tokens / room);
}

static void decode_first(const pm_serve_workload *w, serve_plan *p)
{
    const double isl = (double)w->input_tokens, osl = (double)w->output_tokens;
    const double B = (double)w->chunk_budget, N = w->concurrency;
    const double D = (osl - 1.0) * p->per_token, v = p->verify; /* a request's decode steps */
    /* One prompt in prefill at a time: the others decode beside its chunks. */
    const double room1 = B - (N - 1.0) * v;
    const double T1 = room1 > 0 ? prefill_span(w, room1) : INFINITY;
    const double n1 = room1 > 0 ? N * T1 / (T1 + D) : INFINITY;
    if (n1 <= 1.0) {
        const int64_t ctx = decode_context(w);
        p->kind[0] = (pm_mixed_step){N - 1.0, ctx, 1, {chunk_of(w, 1.0, isl / T1, 1.0 / T1)}, 0};
        p->kind[1] = (pm_mixed_step){.decode_sequences = N, .decode_context = ctx};
        p->weight[0] = n1;
        p->weight[1] = 1.0 - n1;
        p->requests = n1 / T1;
        p->ttft_steps[0] = T1;
        p->slow_steps[N > 1.0 ? 0 : 1] = 1.0;
        p->decoding = N - n1;
        p->prefilling = n1;
        p->prefill_steps = T1;
        p->mixed_frac = n1;
        p->chunk_tokens = isl / T1;
        return;
    }
    /* Several prompts in prefill: every step carries chunks. r requests per step solve
     * r (T(r) + D) = N, T(r) = ceil(isl / (B - r D v)), which grows with r. */
    double lo = 0.0, hi = N / (1.0 + D);
    if (D > 0.0 && B / (D * v) < hi)
        hi = B / (D * v);
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
        const double r = 0.5 * (lo + hi), room = B - r * D * v;
        if (room > 0 && r * (prefill_span(w, room) + D) <= N)
            lo = r;
        else
            hi = r;
    }
    const double r = lo, g = r * D, room = B - g * v;
    const double T = prefill_span(w, room > 0 ? room : 1.0), n = N - g;
    if (!(room > 0) || r * isl > room || r <= 0) {
        decode_first_bound(w, p);
        return;
    }
    p->kind[0] = (pm_mixed_step){g, decode_context(w), 1, {chunk_of(w, n, isl / T, r)}, 0};
    p->weight[0] = 1.0;
    p->slow_steps[0] = 1.0;
    p->requests = r;
    p->ttft_steps[0] = T;
    p->decoding = g;
    p->prefilling = n;
    p->prefill_steps = T;
    p->mixed_frac = 1.0;
    p->chunk_tokens = n * isl / T;
}

/* Prefill-first: each decode step of N tokens is followed by the prefill steps of the requests
 * it ended, k whole prompts a step (as many as ended, up to the budget's). */
static void prefill_first(const pm_serve_workload *w, serve_plan *p)
{
    const double isl = (double)w->input_tokens, osl = (double)w->output_tokens;
    const double N = w->concurrency, K = floor((double)w->chunk_budget / isl);
    if (osl < 2.0) { /* nothing to decode: prefill steps of k prompts */
        const double k = N < K ? N : K;
        p->kind[1] = (pm_mixed_step){0, 0, 1, {chunk_of(w, k, isl, k)}, 0};
        p->weight[1] = 1.0;
        p->requests = k;
        p->ttft_by_little = true;
        p->slow_steps[1] = 1.0;
        p->prefilling = N;
        p->prefill_steps = 1.0;
        p->mixed_frac = 1.0;
        p->chunk_tokens = k * isl;
        return;
    }
    const double ended = N / ((osl - 1.0) * p->per_token); /* requests a decode step ends */
    const double k = ended < 1.0 ? 1.0 : ended > K ? K : ended;
    p->kind[0] = (pm_mixed_step){.decode_sequences = N, .decode_context = decode_context(w)};
    p->kind[1] = (pm_mixed_step){0, 0, 1, {chunk_of(w, k, isl, k)}, 0};
    p->weight[0] = 1.0;
    p->weight[1] = ended / k;
    p->requests = ended;
    p->ttft_steps[1] = 1.0;
    p->slow_steps[0] = 1.0;
    p->slow_steps[1] = N > 1.0 ? ceil(ended / k) : 0.0;
    p->decoding = N;
    p->prefilling = 0.0;
    p->prefill_steps = 1.0;
    p->mixed_frac = p->weight[1] / (1.0 + p->weight[1]);
    p->chunk_tokens = k * isl;
}

/* Prefill-first in a wave: the clients send together (a benchmark's closed loop at fixed
 * lengths: every request ends in the same step, so the next ones arrive together). The N
 * prompts prefill whole, k = floor(budget / input) a step (kind 1; the last step the remaining
 * ones, kind 2), decoding paused, then the N sequences decode output - 1 steps together (kind
 * 0). A prompt's first token comes at the end of its prefill step: the mean TTFT is the mean
 * of those ends; every request ends with the cycle. */
static void prefill_first_wave(const pm_serve_workload *w, serve_plan *p)
{
    const double isl = (double)w->input_tokens, osl = (double)w->output_tokens;
    const double N = w->concurrency, K = floor((double)w->chunk_budget / isl);
    const double k = N < K ? N : K;
    const double G = ceil(N / k - 1e-12), rest = N - (G - 1.0) * k;
    const double D = (osl - 1.0) * p->per_token; /* a request's decode steps */
    if (osl > 1.0)
        p->kind[0] = (pm_mixed_step){.decode_sequences = N, .decode_context = decode_context(w)};
    p->kind[1] = (pm_mixed_step){0, 0, 1, {chunk_of(w, k, isl, k)}, 0};
    p->kind[2] = (pm_mixed_step){0, 0, 1, {chunk_of(w, rest, isl, rest)}, 0};
    p->weight[0] = D;
    p->weight[1] = G - 1.0;
    p->weight[2] = 1.0;
    p->requests = N;
    /* k prompts end at steps 1 .. G - 1 (j full steps each), the rest at G - 1 full and the
     * last. */
    p->ttft_steps[1] = (k * (G - 1.0) * G / 2.0 + rest * (G - 1.0)) / N;
    p->ttft_steps[2] = rest / N;
    /* The first step's prompts wait for the others' prefill before their second token. */
    p->slow_steps[0] = 1.0;
    p->slow_steps[1] = G > 1.0 ? G - 2.0 : 0.0;
    p->slow_steps[2] = G > 1.0 ? 1.0 : 0.0;
    p->decoding = N * D / (G + D);
    p->prefilling = N - p->decoding;
    p->prefill_steps = G;
    p->mixed_frac = G / (G + D);
    p->chunk_tokens = k * isl;
}

/* A distribution of lengths as the rules use it: each class's probability (its share
 * normalised), prompt and output, the means of the prompt, the output and the decode steps
 * ((output - 1) x per_token: 1, or 1 / E with speculation), and the decoding sequences' mean
 * context: a class's decode steps run at input .. input + output - 2, each step a sequence of
 * class i decodes weighs p_i (O_i - 1). */
typedef struct mix {
    double pr[PM_MAX_LENGTH_CLASSES], in[PM_MAX_LENGTH_CLASSES], out[PM_MAX_LENGTH_CLASSES];
    double e_in, e_out, e_dec;
    int64_t ctx;
} mix;

static void mix_of(const pm_serve_workload *w, double per_token, mix *m)
{
    double share = 0.0, ctx_sum = 0.0;
    for (int i = 0; i < w->n_classes; i++)
        share += w->classes[i].share;
    m->e_in = m->e_out = m->e_dec = 0.0;
    for (int i = 0; i < w->n_classes; i++) {
        const double pr = w->classes[i].share / share;
        const double in = (double)w->classes[i].input_tokens;
        const double out = (double)w->classes[i].output_tokens;
        m->pr[i] = pr;
        m->in[i] = in;
        m->out[i] = out;
        m->e_in += pr * in;
        m->e_out += pr * out;
        m->e_dec += pr * (out - 1.0) * per_token;
        ctx_sum += pr * (out - 1.0) * per_token * (in + (out - 2.0) / 2.0);
    }
    m->ctx = m->e_dec > 0 ? llround(ctx_sum / m->e_dec) : 0;
}

/* The slowest gap of decode-first over a distribution: the longest step that carries decode
 * tokens (each kind of step follows any other). */
static void slow_of_decoding(serve_plan *p)
{
    for (int k = 0; k < SERVE_KINDS; k++)
        p->slow_max_of[k] = p->weight[k] > 0 && p->kind[k].decode_sequences > 0;
}

/* Decode-first over a distribution of lengths (classes i of share p_i, prompt I_i, output
 * O_i), the single-length rules with each class's prompts in their own chunk groups: decoding
 * sequences at the mean context of every class's decode steps (exact for attention without a
 * window, linear in the context), a class's chunks at the mean offset of its chunks. With at
 * most one prompt in prefill at a time a class's prompt spans T_i = ceil(I_i / (budget - N +
 * 1)) steps beside N - 1 decode tokens (a kind of step per class), r = N / sum p_i (T_i + O_i -
 * 1) requests a step, a share r p_i T_i of the steps carries class i's chunk; beyond, every
 * step carries each class's chunks, r solving r sum p_i (T_i(r) + O_i - 1) = N, and where the
 * prompts' tokens exceed what the decode tokens leave, the budget binds. TTFT is the requests'
 * mean, TPOT the mean gap (e2e - TTFT) / (mean output - 1), the slowest gap the longest step
 * carrying decode tokens. */
static void decode_first_mix(const pm_serve_workload *w, serve_plan *p)
{
    mix m;
    mix_of(w, p->per_token, &m);
    const int K = w->n_classes;
    const double *pr = m.pr, *in = m.in, *out = m.out;
    const double e_in = m.e_in, e_out = m.e_out, e_dec = m.e_dec;
    const int64_t ctx = m.ctx;
    const double B = (double)w->chunk_budget, N = w->concurrency, v = p->verify;
    p->osl_mean = e_out;
    double T[PM_MAX_LENGTH_CLASSES], L = 0.0, n1 = INFINITY;
    const double room1 = B - (N - 1.0) * v;
    if (room1 > 0) {
        double tsum = 0.0;
        for (int i = 0; i < K; i++) {
            T[i] = ceil(in[i] / room1);
            L += pr[i] * (T[i] + (out[i] - 1.0) * p->per_token);
            tsum += pr[i] * T[i];
        }
        n1 = N / L * tsum;
    }
    double held_dec = 0.0, held_pre = 0.0; /* positions held, per step's worth of requests */
    if (n1 <= 1.0) {
        const double r = N / L;
        for (int i = 0; i < K; i++) {
            p->kind[i] = (pm_mixed_step){N - 1.0, ctx, 1,
                                         {chunk_in(w->classes[i].input_tokens, 1.0,
                                                   in[i] / T[i], 1.0 / T[i])}, 0};
            p->weight[i] = r * pr[i] * T[i];
            p->ttft_steps[i] = pr[i] * T[i];
        }
        p->kind[K] = (pm_mixed_step){.decode_sequences = N, .decode_context = ctx};
        p->weight[K] = 1.0 - n1;
        p->requests = r;
        p->decoding = N - n1;
        p->prefilling = n1;
        p->prefill_steps = n1 / r;
        p->mixed_frac = n1;
        p->chunk_tokens = 0.0;
        for (int i = 0; i < K; i++) {
            p->chunk_tokens += pr[i] * T[i] * in[i] / T[i];
            held_dec += r * pr[i] * (out[i] - 1.0) * p->per_token * (in[i] + (out[i] - 1.0) / 2.0);
            held_pre += r * pr[i] * T[i] * in[i] / 2.0;
        }
        p->chunk_tokens /= n1 / r;
        p->held = (held_dec + held_pre) / N;
        slow_of_decoding(p);
        return;
    }
    /* Every step carries chunks: r requests a step, T_i(r) growing with r. */
    const double hi_n = N / (1.0 + e_dec);
    double lo = 0.0, hi = e_dec > 0 && B / (e_dec * v) < hi_n ? B / (e_dec * v) : hi_n;
    for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
        const double r = 0.5 * (lo + hi), room = B - r * e_dec * v;
        double need = 0.0;
        for (int i = 0; i < K && room > 0; i++)
            need += pr[i] * (ceil(in[i] / room) + (out[i] - 1.0) * p->per_token);
        if (room > 0 && r * need <= N)
            lo = r;
        else
            hi = r;
    }
    double r = lo, g = r * e_dec, room = B - g * v;
    const bool bound = !(room > 0) || r * e_in > room || r <= 0;
    if (bound) { /* every step full: r (e_in + e_dec v) = B, prompts queue */
        r = B / (e_in + e_dec * v);
        g = r * e_dec;
        room = B - g * v;
    }
    double prefilling = 0.0;
    p->kind[0] = (pm_mixed_step){0};
    for (int i = 0; i < K; i++) {
        const double t = bound ? (room < in[i] ? room : in[i]) : in[i] / ceil(in[i] / room);
        /* f = r p_i finish a step; f x a prompt's steps (>= 1) hold a chunk: never fewer */
        const double f = r * pr[i], count = f * (bound ? in[i] / t : ceil(in[i] / room));
        p->kind[0].chunks[i] = chunk_in(w->classes[i].input_tokens, count, t, f);
        prefilling += count;
        held_dec += f * (out[i] - 1.0) * p->per_token * (in[i] + (out[i] - 1.0) / 2.0);
        held_pre += count * in[i] / 2.0;
    }
    p->kind[0].decode_sequences = g;
    p->kind[0].decode_context = ctx;
    p->kind[0].n_chunks = K; /* its chunks 0 .. K - 1 set above */
    p->weight[0] = 1.0;
    p->requests = r;
    p->decoding = g;
    p->prefilling = bound ? N - g : prefilling;
    p->prefill_steps = p->prefilling / r;
    p->mixed_frac = 1.0;
    p->chunk_tokens = r * e_in;
    p->budget_bound = bound;
    p->ttft_by_little = bound; /* else each prompt's T_i steps of this kind */
    for (int i = 0; i < K && !bound; i++)
        p->ttft_steps[0] += pr[i] * ceil(in[i] / room);
    /* Bound: the prompts that wait count as half their prompt, as the single length's do. */
    p->held = bound ? (held_dec + (N - g) * e_in / 2.0) / N
                    : (held_dec + held_pre) / (g + prefilling);
    slow_of_decoding(p);
}

/* Prefill-first over a distribution of lengths (classes i of share p_i, prompt I_i, output
 * O_i), the single-length rule with a mix of prompts: each decode step of the N sequences ends
 * r = N / sum p_i (O_i - 1) / E requests (E tokens a step with speculation, else 1), whose
 * prompts are prefilled whole before the next decode step, k = min(max(r, 1), floor(budget /
 * E[I])) prompts a step. With k = 1 a prefill step
 * holds one prompt, of class i for a share p_i of them (a kind of step per class; the slowest
 * gap a decoding sequence sees holds the longest of them); beyond, each prefill step holds k
 * p_i prompts of each class (one kind). The sequences in flight all decode; each holds,
 * averaged over its decode steps, I_i + (O_i - 1) / 2 positions. Every class outputs more than
 * one token (check_classes), or none does: then only prefill steps of k prompts run. */
static void prefill_first_mix(const pm_serve_workload *w, serve_plan *p)
{
    mix m;
    mix_of(w, p->per_token, &m);
    const int K = w->n_classes;
    const double N = w->concurrency, cap = floor((double)w->chunk_budget / m.e_in);
    p->osl_mean = m.e_out;
    p->prefill_steps = 1.0;
    if (!(m.e_dec > 0)) { /* nothing to decode */
        const double k = N < cap ? N : cap;
        for (int i = 0; i < K; i++)
            p->kind[0].chunks[i] = chunk_in(w->classes[i].input_tokens, k * m.pr[i], m.in[i],
                                            k * m.pr[i]);
        p->kind[0].n_chunks = K;
        p->weight[0] = 1.0;
        p->requests = k;
        p->ttft_by_little = true;
        p->slow_steps[0] = 1.0;
        p->prefilling = N;
        p->mixed_frac = 1.0;
        p->chunk_tokens = k * m.e_in;
        p->held = m.e_in / 2.0;
        return;
    }
    const double r = N / m.e_dec, k = r < 1.0 ? 1.0 : r > cap ? cap : r;
    double held = 0.0, weight = 0.0;
    for (int i = 0; i < K; i++) {
        held += m.pr[i] * (m.out[i] - 1.0) * (m.in[i] + (m.out[i] - 1.0) / 2.0);
        weight += m.pr[i] * (m.out[i] - 1.0);
    }
    p->held = held / weight;
    p->kind[K] = (pm_mixed_step){.decode_sequences = N, .decode_context = m.ctx};
    p->weight[K] = 1.0;
    p->slow_steps[K] = 1.0;
    p->requests = r;
    p->decoding = N;
    p->chunk_tokens = k * m.e_in;
    if (r <= 1.0) { /* k = 1, one prompt a prefill step: a kind per class */
        for (int i = 0; i < K; i++) {
            p->kind[i] = (pm_mixed_step){0, 0, 1,
                                         {chunk_in(w->classes[i].input_tokens, 1.0, m.in[i],
                                                   1.0)}, 0};
            p->weight[i] = r * m.pr[i];
            p->ttft_steps[i] = m.pr[i];
            p->slow_max_of[i] = N > 1.0;
        }
        p->mixed_frac = r / (1.0 + r);
        return;
    }
    p->kind[0] = (pm_mixed_step){0};
    for (int i = 0; i < K; i++)
        p->kind[0].chunks[i] = chunk_in(w->classes[i].input_tokens, k * m.pr[i], m.in[i],
                                        k * m.pr[i]);
    p->kind[0].n_chunks = K;
    p->weight[0] = r / k;
    p->ttft_steps[0] = 1.0;
    p->slow_steps[0] = ceil(r / k);
    p->mixed_frac = p->weight[0] / (1.0 + p->weight[0]);
}

/* ---------------------------------------------------------------- pipeline stages */

/* s's pipeline plan for a served step (plan.c's rules and refusals; micro-batches are the
 * step's own, so the scenario's batch does not bound them). */
static pm_status serve_pipeline(const pm_scenario *s, pm_pipeline *pl, pm_error *err)
{
    pm_scenario c = *s;
    c.provenance = NULL;
    if (c.workload.batch < c.cluster.micro_batches)
        c.workload.batch = c.cluster.micro_batches;
    return pm_pipeline_plan(&c, pl, err);
}

/* (internal.h) */
bool pm_serve_wave_spreads(const pm_serve_workload *w, int64_t chunk_budget, double concurrency)
{
    /* Under decode-first a wave whose prompts need more than one step spreads into groups (the
     * first prompts decode while the others prefill); one that fits a step is prefill-first's. */
    return w->arrival == PM_SERVE_WAVE && w->rule != PM_SERVE_PREFILL_FIRST &&
           !((double)w->input_tokens * concurrency <= (double)chunk_budget);
}

double pm_serve_micro_batches(const pm_scenario *s, double sequences)
{
    const int given = s->cluster.micro_batches > 0 ? s->cluster.micro_batches
                                                   : pm_cluster_pp(&s->cluster);
    const double whole = floor(sequences + 1e-9);
    return whole < 1.0 ? 1.0 : whole < given ? whole : (double)given;
}

/* What step m, one of M micro-batches in flight, sends through each boundary (its tokens) and
 * returns to the first stage (its sampled tokens: decode tokens and finishing prompts). */
static pm_pipeline_step pipe_step(const pm_mixed_step *m, double M)
{
    const double per_seq =
        m->decode_tokens_per_sequence > 1 ? (double)m->decode_tokens_per_sequence : 1.0;
    pm_pipeline_step ps = {M, m->decode_sequences * per_seq, m->decode_sequences};
    for (int i = 0; i < m->n_chunks; i++) {
        ps.tokens += m->chunks[i].count * (double)m->chunks[i].tokens;
        ps.returned += m->chunks[i].finishing;
    }
    return ps;
}

/* ---------------------------------------------------------------- timing the steps */

/* One kind of step in every mode, as the estimate times its steps: one plan of the unfused
 * graph with its prefetches (serial reads it without them, PRESERVE with them) and the fused
 * plan derived from it (pm_step_plan_fuse); t[mode] its time, tr[mode] what it moves when
 * energy is asked (tr not NULL). like: a plan of the same scenario whose roofline terms serve
 * (NULL: computed); p and f receive the plans. Over pipeline stages m is one of M
 * micro-batches in flight and the time the period between its steps (pm_pipeline_step_time).
 * slot (NULL: none) is the kind's compiled template (pm_serve_compiled): the plan is costed
 * from it when it holds one, else built and its template kept there; p, built from the slot
 * again at a later point, keeps PRESERVE's decisions and traffic sum from the point before
 * (pm_step_plan_modes). */
static pm_status time_kind(const pm_scenario *s, const pm_step_plan *like,
                           const pm_mixed_step *m, double M, pm_template **slot,
                           pm_step_plan *p, pm_step_plan *f, double t[PM_MODE_COUNT],
                           pm_traffic tr[PM_MODE_COUNT], pm_error *err)
{
    const bool staged = pm_cluster_pp(&s->cluster) > 1;
    pm_pipeline pl;
    pm_pipeline_step ps = {0};
    pm_status st;
    if (staged && (st = serve_pipeline(s, &pl, err)) != PM_OK)
        return st;
    if (staged) /* one stage (the hot path) sends nothing */
        ps = pipe_step(m, M);
    pm_step step;
    st = pm_step_mixed(s, m, &step, err);
    if (st == PM_OK && slot && *slot)
        st = pm_step_plan_build_from(s, like, &step, *slot, true, p, err);
    else if (st == PM_OK && slot) /* compiled: its template is costed again at next points */
        st = pm_step_plan_compile(s, like, &step, true, p, err);
    else if (st == PM_OK)
        st = pm_step_plan_build_like(s, like, &step, false, true, p, err);
    if (st != PM_OK)
        return st;
    pm_step_plan_count(p);
    pm_step_plan_fuse(p, f);
    if (slot && !*slot) { /* kept with its rows, counts and fused layers */
        if (!(*slot = pm_malloc(sizeof **slot)))
            return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
        **slot = p->tmpl;
        p->from = *slot; /* the next point's build_from copies nothing */
    }
    if (!staged) /* PRESERVE's decisions taken once for its time and traffic, kept in p */
        return pm_step_plan_modes(p, f, step.context, t, tr, err);
    const pm_step_plan *of[PM_MODE_COUNT] = {p, f, p};
    for (int mode = 0; mode < PM_MODE_COUNT; mode++) {
        const bool preserve = mode == PM_MODE_PRESERVE;
        st = pm_pipeline_step_time(s, &pl, &ps, of[mode], p, preserve, step.context, &t[mode],
                                   tr ? &tr[mode] : NULL, NULL);
        if (st != PM_OK)
            return pm_fail(err, st, NULL, NULL,
                           "a pipeline stage's time is not finite, or its schedule is "
                           "inconsistent");
    }
    return PM_OK;
}

/* m's step timed alone in every mode with M micro-batches like it in flight (time_kind in
 * plans of its own). */
static pm_status kind_times(const pm_scenario *s, const pm_mixed_step *m, double M,
                            double t[PM_MODE_COUNT], pm_error *err)
{
    pm_step_plan *plans = pm_malloc(2 * sizeof *plans);
    if (!plans)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    const pm_status st = time_kind(s, NULL, m, M, NULL, &plans[0], &plans[1], t, NULL, err);
    pm_free(plans);
    return st;
}

/* pm_mixed_step_time over pipeline stages: the period between two of m's steps with M
 * micro-batches like it in flight (pm_serve_micro_batches of its sequences), in mode. */
static pm_status staged_step_time(const pm_scenario *s, pm_mode mode, const pm_mixed_step *m,
                                  double *time_s, pm_error *err)
{
    double t[PM_MODE_COUNT];
    const pm_status st = kind_times(s, m, pm_serve_micro_batches(s, 1e9), t, err);
    if (st == PM_OK)
        *time_s = t[mode];
    return st;
}

pm_status pm_serve_step_times(const pm_scenario *s, const pm_mixed_step *m, double M,
                              double t[PM_MODE_COUNT], pm_error *err)
{
    pm_scenario copy;
    const pm_status st = pm_scenario_check(s, err);
    return st != PM_OK ? st : kind_times(step_scenario(s, m, &copy), m, M, t, err);
}

/* What the accelerator adds to every mode: die area, device price, static power. */
typedef struct serve_figures {
    double die_mm2, device_usd, p_static;
    bool energy;
} serve_figures;

/* The figures of accelerator a: its area found once and lent to the price and the static
 * power (pm_device_cost_at, pm_static_power_at: their refusals, in the same order); checked:
 * a's area and energy blocks passed their checks already (they read nothing else: only the
 * arithmetic is done again); dies (may be NULL) the dies' yields kept from the last
 * accelerator. */
static pm_status figures_of(const pm_accelerator *a, bool checked, pm_die_memo *dies,
                            serve_figures *f, pm_error *err)
{
    *f = (serve_figures){0};
    pm_status st = PM_OK;
    pm_area area;
    const pm_area *found = NULL;
    if (a->area.present) {
        if (checked)
            pm_area_of(a, &area);
        else if ((st = pm_area_compute(a, &area, err)) != PM_OK)
            return st;
        f->die_mm2 = area.die_mm2;
        found = &area;
    }
    if (a->cost.present) {
        pm_device_cost c;
        if ((st = pm_device_cost_at(a, found, dies, &c, err)) != PM_OK)
            return st;
        f->device_usd = c.device_usd;
    }
    f->energy = a->energy.present;
    if (f->energy && checked)
        f->p_static = pm_static_power_of(a, found);
    else if (f->energy)
        st = pm_static_power_at(a, found, &f->p_static, err);
    return st;
}

/* The fields of the accelerator that figures_of reads (its name only in a refusal, which is
 * not kept): two accelerators equal in them, bit for bit, have the same figures. */
typedef struct figures_key {
    double l2_capacity_bytes, hbm_capacity_bytes, peak_flop_per_s[PM_DTYPE_COUNT];
    pm_area_params area;
    pm_cost_params cost;
    pm_energy_params energy;
} figures_key;

/* The figures, kept with the accelerator's fields they were found from (kept: found once),
 * and the dies' yields (an L2 axis moves the compute die's area only). */
typedef struct figures_memo {
    bool kept;
    figures_key key;
    serve_figures f;
    pm_die_memo dies;
} figures_memo;

/* figures_of through memo: the kept figures where a's fields are the key's bit for bit (the
 * L2 capacity, which an L2 axis moves at every point, compared first), else found and kept. */
static pm_status figures_memoised(const pm_accelerator *a, figures_memo *memo, serve_figures *f,
                                  pm_error *err)
{
    figures_key *k = &memo->key;
    /* The blocks whose checks read nothing but themselves: the same, they passed them. */
    const bool checked = memo->kept && memcmp(&k->area, &a->area, sizeof k->area) == 0 &&
                         memcmp(&k->cost, &a->cost, sizeof k->cost) == 0 &&
                         memcmp(&k->energy, &a->energy, sizeof k->energy) == 0;
    if (checked &&
        memcmp(&k->l2_capacity_bytes, &a->l2_capacity_bytes, sizeof(double)) == 0 &&
        memcmp(&k->hbm_capacity_bytes, &a->hbm_capacity_bytes, sizeof(double)) == 0 &&
        memcmp(k->peak_flop_per_s, a->peak_flop_per_s, sizeof k->peak_flop_per_s) == 0) {
        *f = memo->f;
        return PM_OK;
    }
    memo->kept = false;
    const pm_status st = figures_of(a, checked, &memo->dies, f, err);
    if (st != PM_OK)
        return st;
    k->l2_capacity_bytes = a->l2_capacity_bytes;
    k->hbm_capacity_bytes = a->hbm_capacity_bytes;
    memcpy(k->peak_flop_per_s, a->peak_flop_per_s, sizeof k->peak_flop_per_s);
    if (!checked) {
        memcpy(&k->area, &a->area, sizeof k->area);
        memcpy(&k->cost, &a->cost, sizeof k->cost);
        memcpy(&k->energy, &a->energy, sizeof k->energy);
    }
    memo->f = *f;
    memo->kept = true;
    return PM_OK;
}

/* The kinds of step a plan times (a weight or TTFT steps), rising, into kinds; their count.
 * The others' times are 0 and their counts finite and >= 0, so each of their terms in a sum
 * of counts x times is +0 and leaves the sum as it is: the figures are summed over these. */
static int timed_kinds(const serve_plan *p, int kinds[SERVE_KINDS])
{
    int n = 0;
    for (int k = 0; k < SERVE_KINDS; k++)
        if (p->weight[k] > 0 || p->ttft_steps[k] > 0)
            kinds[n++] = k;
    return n;
}

/* The mode's figures from its step times t[k] (and traffic tr[k] when energy) of the n timed
 * kinds (timed_kinds; t and tr are read at them only). */
static void mode_figures(const pm_scenario *s, const pm_serve_workload *w, const serve_plan *p,
                         const int *kinds, int n, const serve_figures *f, const double *t,
                         const pm_traffic *tr, pm_serve_mode *r)
{
    const double osl = p->osl_mean > 0 ? p->osl_mean : (double)w->output_tokens;
    const double devices = s->cluster.devices * pm_cluster_pp(&s->cluster);
    double cycle = 0.0, ttft = 0.0, slow = 0.0, slow_max = 0.0;
    for (int i = 0; i < n; i++) {
        const int k = kinds[i];
        cycle += p->weight[k] * t[k];
        ttft += p->ttft_steps[k] * t[k];
        slow += p->slow_steps[k] * t[k];
        if (p->slow_max_of[k] && p->weight[k] > 0 && t[k] > slow_max)
            slow_max = t[k];
    }
    slow += slow_max;
    for (int i = 0; i < n; i++)
        if (p->weight[kinds[i]] > 0)
            *(p->kind[kinds[i]].n_chunks > 0 ? &r->mixed_step_s : &r->decode_step_s) =
                t[kinds[i]];
    r->requests_per_s = p->requests / cycle;
    r->e2e_s = w->concurrency / r->requests_per_s;
    if (p->ttft_by_little)
        r->ttft_s = r->e2e_s - (osl - 1.0) * p->per_token * t[0]; /* later tokens: kind 0 */
    else
        r->ttft_s = ttft;
    r->tpot_s = osl > 1.0 ? (r->e2e_s - r->ttft_s) / (osl - 1.0) : 0.0;
    r->tpot_max_s = osl > 1.0 ? slow : 0.0;
    r->tokens_per_s = r->requests_per_s * osl;
    r->tokens_per_s_per_device = r->tokens_per_s / devices;
    r->tokens_per_s_per_user = osl > 1.0 ? 1.0 / r->tpot_s : 1.0 / r->e2e_s;
    r->meets_limits = (!(w->ttft_limit_s > 0) || r->ttft_s <= w->ttft_limit_s) &&
                      (!(w->tpot_limit_s > 0) || r->tpot_s <= w->tpot_limit_s);
    r->goodput_tokens_per_s_per_device = r->meets_limits ? r->tokens_per_s_per_device : 0.0;
    r->tokens_per_s_per_mm2 = f->die_mm2 > 0 ? r->tokens_per_s_per_device / f->die_mm2 : 0.0;
    r->tokens_per_s_per_usd =
        f->device_usd > 0 ? r->tokens_per_s_per_device / f->device_usd : 0.0;
    if (f->energy) {
        double joules = 0.0; /* one device's, per cycle */
        for (int i = 0; i < n; i++) {
            const int k = kinds[i];
            if (!(p->weight[k] > 0))
                continue;
            pm_energy e;
            pm_energy_of(&s->accel, f->p_static, &tr[k], t[k], &e);
            joules += p->weight[k] * e.total_J;
        }
        r->energy_per_token_J = devices * joules / (p->requests * osl);
        r->tokens_per_J = r->energy_per_token_J > 0 ? 1.0 / r->energy_per_token_J : 0.0;
    }
}

/* ---------------------------------------------------------------- speculative decoding */

/* Speculation's counts (speculate.c): a request decodes in (output - 1) / E steps, each
 * decoding sequence putting k + 1 tokens in a step (and in the chunk budget). */
static void spec_plan(const pm_scenario *s, serve_plan *p)
{
    p->per_token = pm_spec_steps_per_token(s);
    p->verify = (double)pm_spec_verify_tokens(s);
}

/* The planned kinds' decode tokens become verify steps (speculate.c's rule). */
static void spec_kinds(const pm_scenario *s, serve_plan *p)
{
    for (int k = 0; k < SERVE_KINDS; k++)
        if (p->weight[k] > 0 || p->ttft_steps[k] > 0)
            pm_spec_verify_step(s, &p->kind[k]);
}

/* A kind's sums, which the draft's steps add to (speculate.c's pm_spec_draft_time). */
typedef struct draft_sums {
    double *t;
    pm_traffic *tr; /* NULL: no energy block */
    pm_step_plan *plans;
} draft_sums;

/* Adds count draft steps m of the draft's scenario d to the sums ctx, each timed as the
 * target's steps. */
static pm_status add_draft_step(void *ctx, const pm_scenario *d, const pm_mixed_step *m,
                                double count, pm_error *err)
{
    const draft_sums *a = ctx;
    pm_scenario copy;
    double td[PM_MODE_COUNT];
    pm_traffic trd[PM_MODE_COUNT];
    pm_status st = time_kind(step_scenario(d, m, &copy), NULL, m, 1.0, NULL, &a->plans[0],
                             &a->plans[1], td, a->tr ? trd : NULL, err);
    for (int mode = 0; mode < PM_MODE_COUNT && st == PM_OK; mode++) {
        a->t[mode] += count * td[mode];
        if (a->tr)
            pm_traffic_add(&a->tr[mode], &trd[mode], count);
    }
    return st;
}

/* The draft's share of served step m added to its times t (and traffic tr when not NULL). */
static pm_status spec_draft_time(const pm_scenario *s, const pm_mixed_step *m,
                                 double t[PM_MODE_COUNT], pm_traffic tr[PM_MODE_COUNT],
                                 pm_error *err)
{
    pm_step_plan *plans = pm_malloc(2 * sizeof *plans);
    if (!plans)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    draft_sums sums = {t, tr, plans};
    const pm_status st = pm_spec_draft_time(s, m, add_draft_step, &sums, err);
    pm_free(plans);
    return st;
}

/* ---------------------------------------------------------------- the served workload */

#define SERVE_MAX_TOKENS ((int64_t)1 << 40)

/* A distribution of lengths: its classes, and the rules it is modelled under. */
static pm_status check_classes(const pm_serve_workload *w, pm_error *err)
{
    if (w->n_classes < 0 || w->n_classes > PM_MAX_LENGTH_CLASSES)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "a distribution of lengths holds 0 to %d classes (got %d)",
                       PM_MAX_LENGTH_CLASSES, w->n_classes);
    for (int i = 0; i < w->n_classes; i++) {
        const pm_length_class *c = &w->classes[i];
        if (c->input_tokens < 1 || c->input_tokens > SERVE_MAX_TOKENS || c->output_tokens < 1 ||
            c->output_tokens > SERVE_MAX_TOKENS || !(c->share > 0 && c->share <= 1e12))
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                           "length class %d: input and output tokens must be in [1, 2^40] and "
                           "the share > 0 (got %lld, %lld, %g)",
                           i, (long long)c->input_tokens, (long long)c->output_tokens, c->share);
    }
    if (w->n_classes > 0 && w->arrival != PM_SERVE_STAGGERED)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, NULL,
                       "a distribution of lengths is modelled with staggered requests only (a "
                       "wave is a benchmark's clients at one length; got %s)",
                       pm_serve_arrival_name(w->arrival));
    if (w->n_classes == 0 || w->rule != PM_SERVE_PREFILL_FIRST)
        return PM_OK;
    int single = -1, longer = -1; /* a class that outputs one token, one that outputs more */
    for (int i = 0; i < w->n_classes; i++) {
        const pm_length_class *c = &w->classes[i];
        if (c->input_tokens > w->chunk_budget)
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                           "prefill-first runs whole prompts: the chunk budget (%lld tokens) "
                           "must hold every class's prompt (class %d: %lld)",
                           (long long)w->chunk_budget, i, (long long)c->input_tokens);
        *(c->output_tokens == 1 ? &single : &longer) = i;
    }
    if (single >= 0 && longer >= 0)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, NULL,
                       "prefill-first over classes that output one token (class %d) beside "
                       "classes that decode (class %d) is not modelled: such a request's client "
                       "waits a decode step it does not decode in",
                       single, longer);
    return PM_OK;
}

/* What every workload is checked for, whatever its lengths. */
static pm_status check_common(const pm_serve_workload *w, pm_error *err)
{
    if (!(w->request_rate_per_s >= 0 && w->request_rate_per_s <= 1e12))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "the request rate must be in [0, 1e12] requests/s (0: a closed loop; got "
                       "%g)",
                       w->request_rate_per_s);
    if (w->request_rate_per_s > 0 && w->arrival == PM_SERVE_WAVE)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "a wave is a closed loop's (its clients send when their last request "
                       "ends): not at a request rate");
    if (!(w->request_rate_per_s > 0) && !(w->concurrency >= 1 && w->concurrency <= 1e9))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "concurrency must be in [1, 1e9] sequences (got %g)", w->concurrency);
    if (w->chunk_budget < 1 || w->chunk_budget > SERVE_MAX_TOKENS)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "the chunk budget must be in [1, 2^40] tokens per step (got %lld)",
                       (long long)w->chunk_budget);
    if ((int)w->rule < 0 || w->rule >= PM_SERVE_RULE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "unknown scheduling rule %d",
                       (int)w->rule);
    if ((int)w->arrival < 0 || w->arrival >= PM_SERVE_ARRIVAL_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "unknown arrival pattern %d",
                       (int)w->arrival);
    if (!(w->ttft_limit_s >= 0 && w->ttft_limit_s < INFINITY && w->tpot_limit_s >= 0 &&
          w->tpot_limit_s < INFINITY))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "latency limits must be finite and >= 0 (0: none)");
    return PM_OK;
}

bool pm_serve_workload_warning(const pm_scenario *s, const pm_serve_workload *w, char *note,
                               size_t n)
{
    const int trained = s && w ? s->model.max_position_embeddings : 0;
    if (trained < 1)
        return false;
    int64_t in = w->input_tokens, out = w->output_tokens;
    for (int i = 0; i < w->n_classes && i < PM_MAX_LENGTH_CLASSES; i++)
        if (i == 0 || w->classes[i].input_tokens + w->classes[i].output_tokens > in + out) {
            in = w->classes[i].input_tokens;
            out = w->classes[i].output_tokens;
        }
    if (in + out <= trained)
        return false;
    if (note && n)
        snprintf(note, n, "a request of %lld + %lld tokens%s exceeds the model's "
                 "max_position_embeddings %d (model %s)",
                 (long long)in, (long long)out, w->n_classes > 0 ? " (the longest class)" : "",
                 trained, s->model.name);
    return true;
}

static pm_status check_workload(const pm_serve_workload *w, pm_error *err)
{
    pm_status st = check_common(w, err);
    if (st == PM_OK)
        st = check_classes(w, err);
    if (st != PM_OK || w->n_classes > 0)
        return st;
    if (w->input_tokens < 1 || w->input_tokens > SERVE_MAX_TOKENS || w->output_tokens < 1 ||
        w->output_tokens > SERVE_MAX_TOKENS)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "input and output tokens must be in [1, 2^40] (got %lld and %lld)",
                       (long long)w->input_tokens, (long long)w->output_tokens);
    if (pm_serve_wave_spreads(w, w->chunk_budget, w->concurrency))
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, NULL,
                       "a wave of requests under decode-first is modelled only when the chunk "
                       "budget (%lld tokens) holds every prompt (%g x %lld): beyond, the prompts "
                       "that finish their prefill decode while the others prefill and the wave "
                       "spreads into groups, which is not modelled (prefill-first is)",
                       (long long)w->chunk_budget, w->concurrency, (long long)w->input_tokens);
    if (w->rule == PM_SERVE_PREFILL_FIRST && w->chunk_budget < w->input_tokens)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "prefill-first runs whole prompts: the chunk budget (%lld tokens) must "
                       "hold the prompt (%lld)",
                       (long long)w->chunk_budget, (long long)w->input_tokens);
    return PM_OK;
}

/* Over pipeline stages a device holds its stage's layers and their cache (pm_footprint_stage):
 * fp becomes the stage's whose weights and cache per sequence take the most room (one
 * sequence's cache at the concurrency's mean is bounded by the room its stage leaves). */
static pm_status stage_memory(const pm_scenario *s, pm_footprint *fp, pm_error *err)
{
    pm_pipeline pl;
    const pm_status st = serve_pipeline(s, &pl, err);
    if (st != PM_OK)
        return st;
    const double usable = pm_hbm_usable_bytes(s);
    double best_w = 0.0, best_kv = 0.0, fewest = INFINITY;
    for (int i = 0; i < pl.stages; i++) {
        double w, kv;
        pm_footprint_stage(s, fp, &pl, i, &w, &kv);
        const double room = kv > 0 ? (usable - w) / kv : (usable >= w ? INFINITY : -INFINITY);
        if (room < fewest || i == 0) {
            fewest = room;
            best_w = w;
            best_kv = kv;
        }
    }
    fp->weight_bytes = best_w;
    fp->kv_bytes = best_kv;
    return PM_OK;
}

/* The cache the sequences in flight hold: decoding ones input + (output - 1) / 2 positions on
 * average, those in prefill half their prompt; each sequence's at that mean. Into fp: one
 * sequence's footprint, the draft's beside (footprint.c and speculate.c read no hardware, so a
 * compiled point keeps it). How many of them a device holds: memory_of and fitting. */
static pm_status sequence_footprint(const pm_scenario *s, double held, pm_footprint *fp,
                                    pm_error *err);

static pm_status footprint_of(const pm_scenario *s, const pm_serve_workload *w,
                              const serve_plan *p, pm_footprint *fp, pm_error *err)
{
    const double isl = (double)w->input_tokens, osl = (double)w->output_tokens;
    double held = p->held > 0 ? p->held
                              : (p->decoding * (isl + (osl - 1.0) / 2.0) +
                                 p->prefilling * isl / 2.0) /
                                    (p->decoding + p->prefilling);
    /* A verify step writes its k drafted positions too: a decoding sequence holds k more. */
    held += (p->verify - 1.0) * p->decoding / (p->decoding + p->prefilling);
    return sequence_footprint(s, held, fp, err);
}

/* One sequence's footprint at `held` positions (rounded), the draft's beside: the weights per
 * device and the cache of one whole sequence on the device that holds it. Under data-parallel
 * attention that is a step of one sequence on each rank (a batch of the ranks): footprint.c
 * counts the busiest rank's share of the batch (pm_plan_rank_sequences), and a batch of 1
 * would be 1 / ranks of a sequence under ideal sharding. The weights do not depend on it. */
static pm_status sequence_footprint(const pm_scenario *s, double held, pm_footprint *fp,
                                    pm_error *err)
{
    pm_scenario one = *s;
    one.provenance = NULL;
    one.workload.batch = pm_plan_attn_ranks(s);
    double draft_w, draft_kv; /* the draft's beside (0 without speculation) */
    pm_status st = pm_footprint_compute(&one, NULL, llround(held), fp, err);
    if (st == PM_OK)
        st = pm_footprint_draft(&one, llround(held), &draft_w, &draft_kv, err);
    if (st != PM_OK)
        return st;
    fp->weight_bytes += draft_w;
    fp->kv_bytes += draft_kv;
    return PM_OK;
}

/* The most sequences in flight whose cache (fp's, each) fits `usable` bytes beside fp's
 * weights: those of which the busiest device holds (pm_plan_rank_sequences, as memory_of
 * counts them) at most room / kv. From the count an even split over the attention ranks would
 * fit down to the first the rule admits: with whole sequences floor(room / kv) x ranks, at
 * most ranks - 1 steps down; without data-parallel attention floor(room / kv). */
static double fitting(const pm_scenario *s, double usable, const pm_footprint *fp)
{
    const double room = usable - fp->weight_bytes;
    if (room <= 0)
        return 0.0;
    if (!(fp->kv_bytes > 0))
        return 1e9;
    const double per_device = room / fp->kv_bytes;
    double n = floor(per_device * pm_plan_attn_ranks(s));
    while (n > 0 && pm_plan_rank_sequences(s, n) > per_device)
        n -= 1.0;
    return n;
}

/* The memory figures from one sequence's footprint fp (footprint_of). */
static pm_status memory_of(const pm_scenario *s, const pm_serve_workload *w, pm_footprint fp,
                           pm_serve_result *out, pm_error *err)
{
    pm_status st;
    if (pm_cluster_pp(&s->cluster) > 1 && (st = stage_memory(s, &fp, err)) != PM_OK)
        return st;
    out->weight_bytes_per_device = fp.weight_bytes;
    /* The sequences whose cache the busiest device holds: all of them, or under data-parallel
     * attention its rank's, ceil(concurrency / ranks) (plan.c's rule, the static estimate's:
     * `run --batch 65` over 8 ranks holds 9 sequences' cache on a device). */
    out->kv_bytes_per_device = pm_plan_rank_sequences(s, w->concurrency) * fp.kv_bytes;
    out->hbm_usable_bytes_per_device = pm_hbm_usable_bytes(s);
    out->fits_hbm = fp.weight_bytes + out->kv_bytes_per_device <= out->hbm_usable_bytes_per_device;
    out->max_concurrency = fitting(s, out->hbm_usable_bytes_per_device, &fp);
    return PM_OK;
}

pm_status pm_serve_max_sequences(const pm_scenario *s, int64_t positions, double *max_sequences,
                                 double *weight_bytes, pm_error *err)
{
    pm_footprint fp;
    pm_status st = sequence_footprint(s, (double)positions, &fp, err);
    if (st == PM_OK && pm_cluster_pp(&s->cluster) > 1)
        st = stage_memory(s, &fp, err);
    if (st != PM_OK)
        return st;
    *max_sequences = fitting(s, pm_hbm_usable_bytes(s), &fp);
    if (weight_bytes)
        *weight_bytes = fp.weight_bytes;
    return PM_OK;
}

/* The hardware a compiled point may move (pm_serve_compute_compiled's contract: every other
 * field of the scenario is the one it was compiled at) but the L2 capacity: the accelerator's
 * peaks and its L2 and HBM bandwidths, the cluster's links. Doubles only: compared with
 * memcmp, bit for bit. */
typedef struct hw_key {
    double peak[PM_DTYPE_COUNT], l2_bw, hbm_bw;
    double link_bw, link_s, allreduce_frac, fused_s, inter_bw, inter_s, a2a_s, a2a_frac;
} hw_key;

static void hw_key_of(const pm_scenario *s, hw_key *k)
{
    const pm_accelerator *a = &s->accel;
    const pm_cluster *c = &s->cluster;
    memcpy(k->peak, a->peak_flop_per_s, sizeof k->peak);
    k->l2_bw = a->l2_bandwidth_bytes_per_s;
    k->hbm_bw = a->hbm_bandwidth_bytes_per_s;
    k->link_bw = c->link_bandwidth_bytes_per_s;
    k->link_s = c->link_latency_s;
    k->allreduce_frac = c->allreduce_efficiency_frac;
    k->fused_s = c->fused_latency_s;
    k->inter_bw = c->inter_node_bandwidth_bytes_per_s;
    k->inter_s = c->inter_node_latency_s;
    k->a2a_s = c->a2a_latency_s;
    k->a2a_frac = c->a2a_efficiency_frac;
}

/* The steps' times and traffic of a compiled point (each mode's, each kind's), kept with the
 * hardware they were found at (issue 46 item 3): hw_key's fields, which must be the same bit
 * for bit at a point they serve. Over the L2 capacity they hold from the capacity they were
 * found at (or the lowest they were found again at) upwards while each kind's window capacity
 * takes the same decisions (pm_step_plan_l2_hold: (cap_lo, cap_hi], each kind's range met).
 * Kept only where every kind is past its tiling kink, without pipeline stages (a stage's
 * bubbles read the capacity too) or speculation (the draft's own plans are not compiled). The
 * key is a point whose steps were timed, so it passed serve()'s checks: at a point that differs
 * from it only in the L2 capacity serve() checks the capacity's rules alone
 * (pm_scenario_check_l2). */
typedef struct steps_memo {
    bool keyed, kept; /* key holds the last point's hardware; the steps are kept */
    hw_key key;
    double l2;        /* the lowest L2 capacity they hold from */
    double cap_lo, cap_hi;
    double t[PM_MODE_COUNT][SERVE_KINDS];
    pm_traffic tr[PM_MODE_COUNT][SERVE_KINDS]; /* read at the kinds timed, with energy */
} steps_memo;

/* What a closed-loop point keeps when compiled (pm_serve_compiled), beside its templates: the
 * step rule's counts and micro-batches in flight, the kinds of step they time and one
 * sequence's footprint, none of which reads the hardware, the room its plans are built in,
 * the accelerator's figures of the last point (figures_memoised) and its steps' times
 * (steps_memo). Served uncompiled, the same is computed for the one point and released. */
struct pm_serve_kept {
    serve_plan p;
    double M;
    int kinds[SERVE_KINDS], n_kinds;
    pm_footprint fp;
    figures_memo figures;
    steps_memo steps;
    pm_step_plan plans[3];
};

/* The step rule's counts of the closed loop at w->concurrency into k->p, its micro-batches in
 * flight into k->M, one sequence's footprint into k->fp; k's figures memo and plans' rooms new. */
static pm_status closed_plan(const pm_scenario *s, const pm_serve_workload *w,
                             struct pm_serve_kept *k, pm_error *err)
{
    /* Over pipeline stages M micro-batches are in flight, each its own scheduler's steps over
     * concurrency / M sequences under the whole chunk budget (vLLM's virtual engines): the
     * plan is one micro-batch's, its requests M times over per period. */
    serve_plan *p = &k->p;
    k->M = pm_cluster_pp(&s->cluster) > 1 ? pm_serve_micro_batches(s, w->concurrency) : 1.0;
    pm_serve_workload share = *w;
    share.concurrency = w->concurrency / k->M;
    plan_init(p);
    spec_plan(s, p);
    if (w->n_classes > 0 && w->rule == PM_SERVE_PREFILL_FIRST)
        prefill_first_mix(&share, p);
    else if (w->n_classes > 0)
        decode_first_mix(&share, p);
    else if (w->arrival == PM_SERVE_WAVE)
        prefill_first_wave(&share, p);
    else if (w->rule == PM_SERVE_DECODE_FIRST)
        decode_first(&share, p);
    else
        prefill_first(&share, p);
    spec_kinds(s, p);
    p->requests *= k->M;
    k->n_kinds = timed_kinds(p, k->kinds);
    k->figures.kept = false;
    k->figures.dies.kept[0] = k->figures.dies.kept[1] = false;
    k->steps.keyed = k->steps.kept = false;
    memset(k->steps.t, 0, sizeof k->steps.t); /* the kinds not timed: 0 */
    for (size_t i = 0; i < sizeof k->plans / sizeof k->plans[0]; i++)
        k->plans[i].from = NULL; /* a new room (pm_step_plan_build_from) */
    return footprint_of(s, w, p, &k->fp, err);
}

void pm_serve_compiled_release(pm_serve_compiled *c)
{
    if (!c)
        return;
    for (int k = 0; k < PM_SERVE_STEP_KINDS; k++) {
        pm_free(c->tmpl[k]);
        c->tmpl[k] = NULL;
    }
    pm_free(c->kept);
    c->kept = NULL;
    c->ready = false;
}

/* Whether s's hardware is m's key's but the L2 capacity (steps_memo), bit for bit. */
static bool same_but_l2(const steps_memo *m, const pm_scenario *s)
{
    hw_key k;
    hw_key_of(s, &k);
    return m->keyed && memcmp(&k, &m->key, sizeof k) == 0;
}

/* Whether m's steps serve s, whose hardware is m's key's but the L2 capacity: the capacity at
 * least the lowest they hold from and its window capacity in their range. */
static bool steps_held(const steps_memo *m, const pm_scenario *s)
{
    const double cap = pm_accelerator_l2_window_bytes(&s->accel);
    return m->kept && s->accel.l2_capacity_bytes >= m->l2 &&
           m->cap_lo < cap && cap <= m->cap_hi;
}

/* Each timed kind's step in every mode into kept's steps_memo (its traffic too with energy),
 * built in kept's room (c, not NULL: compiled, each kind's template kept in c, and s's hardware
 * the memo's key); the memo kept where the steps hold over L2 capacities (steps_memo's rule)
 * and again (the point before had the same hardware but the L2 capacity: on another axis no
 * point would be served from it, and finding the range costs a look at every GEMM), else not. */
static pm_status time_kinds(const pm_scenario *s, struct pm_serve_kept *kept,
                            pm_serve_compiled *c, bool energy, bool again, pm_error *err)
{
    const serve_plan *p = &kept->p;
    steps_memo *sm = &kept->steps;
    pm_step_plan *plans = kept->plans;
    const pm_step_plan *like = NULL;
    pm_scenario copies[SERVE_KINDS];
    const pm_scenario *ks[SERVE_KINDS]; /* each kind's: its host work counts its sequences */
    for (int i = 0; i < kept->n_kinds; i++)
        ks[kept->kinds[i]] = step_scenario(s, &p->kind[kept->kinds[i]], &copies[kept->kinds[i]]);
    bool hold = again && pm_cluster_pp(&s->cluster) <= 1 && !pm_spec_active(s);
    double lo = -INFINITY, hi = INFINITY;
    pm_status st = PM_OK;
    sm->kept = false;
    for (int i = 0; i < kept->n_kinds && st == PM_OK; i++) {
        const int k = kept->kinds[i];
        /* The first plan built lends its roofline terms to the others. */
        pm_step_plan *into = like ? &plans[1] : &plans[0];
        double tk[PM_MODE_COUNT];
        pm_traffic trk[PM_MODE_COUNT];
        st = time_kind(ks[k], like, &p->kind[k], kept->M, c ? &c->tmpl[k] : NULL, into,
                       &plans[2], tk, energy ? trk : NULL, err);
        if (st == PM_OK && pm_spec_active(s))
            st = spec_draft_time(s, &p->kind[k], tk, energy ? trk : NULL, err);
        double a, b;
        if (st == PM_OK && hold && (hold = pm_step_plan_l2_hold(into, &a, &b))) {
            lo = a > lo ? a : lo;
            hi = b < hi ? b : hi;
        }
        for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++) {
            sm->t[m][k] = tk[m];
            if (energy)
                sm->tr[m][k] = trk[m];
        }
        if (!like)
            like = &plans[0];
    }
    if (c && !again) {
        hw_key_of(s, &sm->key);
        sm->keyed = true;
    }
    if (st == PM_OK && hold) {
        sm->l2 = s->accel.l2_capacity_bytes;
        sm->cap_lo = lo;
        sm->cap_hi = hi;
        sm->kept = true;
    }
    return st;
}

/* The closed loop at w->concurrency (checked) into out, which the caller zeroed. c (NULL:
 * none): the point compiled, its templates costed at s's hardware and its counts and footprint
 * read back when ready, else kept (pm_serve_compute_compiled); again: c ready and s's hardware
 * its steps' memo's key's but the L2 capacity (same_but_l2, found once by serve()). */
static pm_status serve_closed(const pm_scenario *s, const pm_serve_workload *w,
                              pm_serve_compiled *c, bool again, pm_serve_result *out,
                              pm_error *err)
{
    _Static_assert(SERVE_KINDS <= PM_SERVE_STEP_KINDS, "a compiled point holds every kind");
    if (c && !c->ready)
        pm_serve_compiled_release(c); /* a compilation that failed half way */
    struct pm_serve_kept *kept = c && c->ready ? c->kept : pm_malloc(sizeof *kept);
    if (!kept)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    pm_status st = c && c->ready ? PM_OK : closed_plan(s, w, kept, err);
    const serve_plan *p = &kept->p;
    const double M = kept->M;
    serve_figures f;
    if (st == PM_OK && (st = figures_memoised(&s->accel, &kept->figures, &f, err)) == PM_OK)
        st = memory_of(s, w, kept->fp, out, err);
    steps_memo *sm = &kept->steps;
    if (st == PM_OK && !(again && steps_held(sm, s)))
        st = time_kinds(s, kept, c, f.energy, again, err);
    for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++) {
        pm_serve_mode *x = &out->modes[m];
        mode_figures(s, w, p, kept->kinds, kept->n_kinds, &f, sm->t[m], sm->tr[m], x);
        if (!out->fits_hbm) { /* no such deployment: nothing within the limits (search prunes
                                 it; serve showed its goodput) */
            x->meets_limits = false;
            x->goodput_tokens_per_s_per_device = 0.0;
        }
    }
    if (st == PM_OK) {
        out->decode_sequences = M * p->decoding;
        out->prefilling = M * p->prefilling;
        out->prefill_steps = p->prefill_steps;
        out->mixed_step_frac = p->mixed_frac;
        out->prefill_tokens_per_mixed_step = p->chunk_tokens;
        out->budget_bound = p->budget_bound;
        out->die_mm2 = f.die_mm2;
        for (int m = 0; m < PM_MODE_COUNT; m++)
            out->modes[m].in_flight = w->concurrency;
    }
    if (c && st == PM_OK && !c->ready) {
        c->kept = kept;
        c->ready = true;
    } else if (!(c && c->ready)) {
        pm_free(kept);
    }
    return st;
}

/* ---------------------------------------------------------------- an open loop */

/* serve_closed, uncompiled, into out zeroed first. */
static pm_status serve_closed_zeroed(const pm_scenario *s, const pm_serve_workload *w,
                                     pm_serve_result *out, pm_error *err)
{
    memset(out, 0, sizeof *out);
    return serve_closed(s, w, NULL, false, out, err);
}

/* Mode m at a request rate at most what the closed loop `one` serves (its requests/s): the
 * requests run as there, and the devices idle the time the rate leaves, 1 / rate - 1 / (one's
 * requests/s) a request, their static power counted over it. Below what one sequence in flight
 * serves `one` is concurrency 1 (every request runs alone); at a step of the throughput (a
 * closed loop just below it serves less than the rate) it is the concurrency at the step. */
static void underloaded(const pm_scenario *s, const pm_serve_workload *w, const pm_serve_mode *one,
                        pm_serve_mode *x)
{
    const double rate = w->request_rate_per_s;
    const double osl = one->tokens_per_s / one->requests_per_s; /* per request, on average */
    const double scale = rate / one->requests_per_s; /* <= 1 */
    *x = *one;
    x->requests_per_s = rate;
    x->tokens_per_s = one->tokens_per_s * scale;
    x->tokens_per_s_per_device = one->tokens_per_s_per_device * scale;
    x->goodput_tokens_per_s_per_device = one->goodput_tokens_per_s_per_device * scale;
    x->tokens_per_s_per_mm2 = one->tokens_per_s_per_mm2 * scale;
    x->tokens_per_s_per_usd = one->tokens_per_s_per_usd * scale;
    x->in_flight = rate * one->e2e_s;
    if (one->energy_per_token_J > 0) {
        double p_static = 0.0;
        if (pm_static_power(&s->accel, &p_static, NULL) == PM_OK) {
            const double idle = 1.0 / rate - 1.0 / one->requests_per_s; /* a request, >= 0 */
            x->energy_per_token_J +=
                s->cluster.devices * pm_cluster_pp(&s->cluster) * p_static * idle / osl;
            x->tokens_per_J = 1.0 / x->energy_per_token_J;
        }
    }
}

/* Mode m beyond its capacity: the most it serves (at the concurrency cap), latencies NaN. */
static void saturated(const pm_serve_mode *at_cap, double cap, pm_serve_mode *x)
{
    *x = *at_cap;
    x->ttft_s = x->tpot_s = x->tpot_max_s = x->e2e_s = NAN;
    x->tokens_per_s_per_user = NAN;
    x->goodput_tokens_per_s_per_device = 0.0;
    x->meets_limits = false;
    x->in_flight = cap;
    x->saturated = true;
}

/* The most sequences the HBM holds depends on what they hold (prompts in prefill hold part of
 * theirs, queued ones half): the fixed point of the cap and its closed loop's own, a few rounds
 * from `from` (one sequence's cap), within [1, hi]. c: the closed loop's workload (its
 * concurrency moved); *at_cap the closed loop at the cap. */
static pm_status cap_point(const pm_scenario *s, pm_serve_workload *c, double from, double hi,
                           double *cap, pm_serve_result *at_cap, pm_error *err)
{
    double x = from;
    for (int k = 0;; k++) {
        x = x < 1.0 ? 1.0 : x > hi ? hi : x;
        c->concurrency = x;
        const pm_status st = serve_closed_zeroed(s, c, at_cap, err);
        if (st != PM_OK)
            return st;
        if (fabs(at_cap->max_concurrency - x) < 1.0 || k == 7)
            break;
        x = at_cap->max_concurrency;
    }
    *cap = x;
    return PM_OK;
}

pm_status pm_serve_max_in_flight(const pm_scenario *s, const pm_serve_workload *w, double *cap,
                                 pm_error *err)
{
    if (!s || !w || !cap)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "bad argument to pm_serve_max_in_flight");
    /* One sequence a replica, checked as served; then a replica's fixed point (serve_open's),
     * dp times. */
    const int dp = pm_cluster_dp(&s->cluster);
    pm_serve_workload c = *w;
    c.request_rate_per_s = 0.0;
    c.concurrency = dp;
    pm_serve_result one, at_cap;
    pm_status st = pm_serve_compute(s, &c, &one, err);
    if (st != PM_OK)
        return st;
    if (!(one.max_concurrency / dp >= 1.0)) { /* not one sequence a replica: no fixed point */
        *cap = one.max_concurrency;
        return PM_OK;
    }
    pm_scenario replica = *s;
    replica.provenance = NULL;
    replica.cluster.data_parallel = 1;
    st = cap_point(&replica, &c, one.max_concurrency / dp, INFINITY, cap, &at_cap, err);
    *cap *= dp;
    return st;
}

/* The open loop at w->request_rate_per_s: per mode, the smallest concurrency whose closed-loop
 * throughput reaches the rate (the fluid steady state: Little's law, no queueing variance; the
 * sequences in flight grow from none while the devices serve less than arrives). The
 * throughput need not rise with the concurrency (a GEMM's last wave of tiles, the steps' mix),
 * so the concurrencies from 1 to the most the HBM holds (at most 1e6) are scanned upwards on a
 * grid of OPEN_GRID steps, and the first step that reaches the rate bisected; where the
 * throughput jumps over the rate there, the devices idle the time the rate leaves
 * (underloaded at the step). Below 1 the requests run alone (underloaded); where no
 * concurrency up to the cap serves the rate the mode is saturated (the cap's figures). The
 * shared counts and memory are the serial mode's. */
#define OPEN_GRID 1.01

static pm_status serve_open(const pm_scenario *s, const pm_serve_workload *w,
                            pm_serve_result *out, pm_error *err)
{
    const double rate = w->request_rate_per_s;
    pm_serve_workload c = *w;
    c.request_rate_per_s = 0.0;
    c.concurrency = 1.0;
    pm_serve_result one, at;
    pm_status st = serve_closed_zeroed(s, &c, &one, err);
    if (st != PM_OK)
        return st;
    double cap;
    pm_serve_result at_cap; /* the closed loop at the cap: a saturated mode's figures */
    if ((st = cap_point(s, &c, one.max_concurrency, 1e6, &cap, &at_cap, err)) != PM_OK)
        return st;
    /* Each mode's bracket: lo serves less than the rate, hi (where found) at least the rate. */
    enum { SCANNING, UNDER_ONE, FOUND } state[PM_MODE_COUNT];
    double lo[PM_MODE_COUNT], hi[PM_MODE_COUNT];
    int open = 0;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        lo[m] = hi[m] = 1.0;
        state[m] = rate <= one.modes[m].requests_per_s ? UNDER_ONE : SCANNING;
        open += state[m] == SCANNING;
    }
    for (double x = 1.0; open > 0 && x < cap;) {
        const double next = x * OPEN_GRID < cap ? x * OPEN_GRID : cap;
        c.concurrency = next;
        if ((st = serve_closed_zeroed(s, &c, &at, err)) != PM_OK)
            return st;
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            if (state[m] != SCANNING)
                continue;
            if (at.modes[m].requests_per_s >= rate) {
                hi[m] = next;
                state[m] = FOUND;
                open--;
            } else {
                lo[m] = next;
            }
        }
        x = next;
    }
    pm_serve_mode res[PM_MODE_COUNT];
    for (int m = PM_MODE_COUNT - 1; m >= 0; m--) { /* serial last: its counts are kept */
        if (state[m] == UNDER_ONE) {
            underloaded(s, w, &one.modes[m], &res[m]);
            *out = one;
            continue;
        }
        if (state[m] == SCANNING) {
            saturated(&at_cap.modes[m], cap, &res[m]);
            *out = at_cap;
            continue;
        }
        double a = lo[m], b = hi[m];
        while (b - a > 1e-9 * b) {
            c.concurrency = sqrt(a * b);
            if ((st = serve_closed_zeroed(s, &c, &at, err)) != PM_OK)
                return st;
            *(at.modes[m].requests_per_s >= rate ? &b : &a) = c.concurrency;
        }
        c.concurrency = b;
        if ((st = serve_closed_zeroed(s, &c, out, err)) != PM_OK)
            return st;
        underloaded(s, w, &out->modes[m], &res[m]);
    }
    for (int m = 0; m < PM_MODE_COUNT; m++)
        out->modes[m] = res[m];
    out->request_rate_per_s = rate;
    return PM_OK;
}

/* Data-parallel replicas serve independent shares of the load: each replica is the scenario's
 * tensor-parallel group at concurrency / dp sequences (or request rate / dp); the per-device,
 * per-user and per-request figures are one replica's, the totals (requests and tokens per
 * second, sequences in flight, the most that fit) dp times them. */
static pm_status serve_replicas(const pm_scenario *s, const pm_serve_workload *w,
                                pm_serve_compiled *c, bool again, pm_serve_result *out,
                                pm_error *err)
{
    const int dp = pm_cluster_dp(&s->cluster);
    if (!(w->request_rate_per_s > 0) && w->concurrency < dp)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "a served workload of %d data-parallel replicas needs at least one "
                       "sequence in flight on each (got a concurrency of %g)",
                       dp, w->concurrency);
    pm_scenario one = *s;
    one.provenance = NULL;
    one.cluster.data_parallel = 1;
    pm_serve_workload share = *w;
    share.concurrency = w->concurrency / dp;
    share.request_rate_per_s = w->request_rate_per_s / dp;
    const pm_status st = share.request_rate_per_s > 0
                             ? serve_open(&one, &share, out, err)
                             : serve_closed(&one, &share, c, again, out, err);
    if (st != PM_OK)
        return st;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        out->modes[m].requests_per_s *= dp;
        out->modes[m].tokens_per_s *= dp;
        out->modes[m].in_flight *= dp;
    }
    out->max_concurrency *= dp;
    out->request_rate_per_s = w->request_rate_per_s;
    return PM_OK;
}

/* pm_serve_compute, its closed loop compiled into c (NULL: not). */
static pm_status serve(const pm_scenario *s, const pm_serve_workload *w, pm_serve_compiled *c,
                       pm_serve_result *out, pm_error *err)
{
    if (!s || !w || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_serve_compute");
    memset(out, 0, sizeof *out);
    /* A compiled point was checked whole where it was compiled; at another hardware point
     * only the rules that read the hardware can refuse (the placement reads none). */
    const bool compiled = c && c->ready;
    const bool again = compiled && same_but_l2(&c->kept->steps, s);
    pm_status st = check_workload(w, err);
    /* The steps' memo's key passed these checks (steps_memo): where only the L2 capacity moved
     * since, only its rules can refuse. */
    if (st == PM_OK && again)
        st = pm_scenario_check_l2(s, err);
    else if (st == PM_OK)
        st = compiled ? pm_scenario_check_hardware(s, err) : pm_scenario_check(s, err);
    if (st == PM_OK && !compiled && pm_cluster_pp(&s->cluster) > 1) {
        pm_pipeline pl; /* its refusals before any step */
        st = serve_pipeline(s, &pl, err);
    }
    if (st != PM_OK)
        return st;
    if (pm_cluster_dp(&s->cluster) > 1)
        return serve_replicas(s, w, c, again, out, err);
    return w->request_rate_per_s > 0 ? serve_open(s, w, out, err)
                                     : serve_closed(s, w, c, again, out, err);
}

pm_status pm_serve_compute(const pm_scenario *s, const pm_serve_workload *w,
                           pm_serve_result *out, pm_error *err)
{
    return serve(s, w, NULL, out, err);
}

pm_status pm_serve_compute_compiled(const pm_scenario *s, const pm_serve_workload *w,
                                    pm_serve_compiled *c, pm_serve_result *out, pm_error *err)
{
    return serve(s, w, c, out, err);
}
