/*
 * serve.c - served workloads: continuous batching's steps, where prefill chunks run beside
 * decode tokens (pm_mixed_step_time, on the fast path: a plan of the step's own template,
 * PRESERVE's decisions over its own windows), and a served workload's steady state
 * (pm_serve_compute): the step rule (decode-first with chunked prefill, or prefill-first)
 * counted in steps, each kind of step timed once per mode, then TTFT, TPOT, end-to-end latency
 * and throughput per device, per user, per mm2, per dollar and per joule, and whether the
 * sequences' cache fits the HBM.
 *
 * May call: alloc.c, area.c, check.c, die_cost.c, energy.c, error.c, footprint.c, plan.c,
 * runtime.c, step.c, step_plan.c.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/* The scenario a mixed step runs under: s with its batch the sequences the step schedules (its
 * decode tokens' and its chunks' prompts, rounded, at least 1), which the runtime's per-step
 * host work counts (runtime.c): a scheduler at concurrency 256 prepares 256 sequences a step,
 * whatever batch the scenario's static estimate names. */
static void step_scenario(const pm_scenario *s, const pm_mixed_step *m, pm_scenario *t)
{
    double n = m->decode_sequences;
    for (int i = 0; i < m->n_chunks && i < PM_MAX_STEP_CHUNKS; i++)
        n += m->chunks[i].count;
    *t = *s;
    t->provenance = NULL;
    t->workload.batch = n < 1.5 ? 1 : n >= PM_MAX_BATCH ? PM_MAX_BATCH : (int)llround(n);
}

pm_status pm_mixed_step_time(const pm_scenario *s, pm_mode mode, const pm_mixed_step *m,
                             double *time_s, pm_error *err)
{
    if (!s || !m || !time_s || (int)mode < 0 || mode >= PM_MODE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_mixed_step_time");
    pm_step step;
    pm_status st = pm_scenario_check(s, err);
    if (st == PM_OK)
        st = pm_plan_refuse_stages(s, "a mixed step's time", err);
    if (st == PM_OK)
        st = pm_step_mixed(s, m, &step, err);
    if (st != PM_OK)
        return st;
    pm_scenario t;
    step_scenario(s, m, &t);
    pm_step_plan plan;
    st = pm_step_plan_build(&t, &step, mode == PM_MODE_FUSED, mode == PM_MODE_PRESERVE, &plan,
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
#define SERVE_KINDS 3

typedef struct serve_plan {
    pm_mixed_step kind[SERVE_KINDS];
    double weight[SERVE_KINDS]; /* steps of each kind per cycle (0: the kind is absent) */
    double requests;    /* requests ended per cycle */
    /* TTFT = the sum of ttft_steps[k] x t(kind k), or, with ttft_by_little, what Little's law
     * leaves once every later token took one step of kind 0 */
    double ttft_steps[SERVE_KINDS];
    bool ttft_by_little;
    double slow_steps[SERVE_KINDS]; /* the longest gap a decoding sequence sees, in steps */
    double decoding, prefilling, prefill_steps, mixed_frac, chunk_tokens;
    bool budget_bound;
} serve_plan;

/* Decoding sequences' mean context: a request decodes at input .. input + output - 2. */
static int64_t decode_context(const pm_serve_workload *w)
{
    return w->input_tokens + llround((double)(w->output_tokens - 2) / 2.0);
}

/* A chunk group of `count` prompts' chunks of t tokens at the mean offset of a prompt's chunks
 * of t ((input - t) / 2: exact for the linear pair and cache counts), `finishing` of them the
 * last. */
static pm_step_chunk chunk_of(const pm_serve_workload *w, double count, double t,
                              double finishing)
{
    const int64_t tokens = llround(t) < 1 ? 1 : llround(t);
    const int64_t offset = llround((double)(w->input_tokens - tokens) / 2.0);
    return (pm_step_chunk){count, tokens, offset < 0 ? 0 : offset, finishing};
}

/* Decode-first with the budget binding: every step full, prompts queue for it. */
static void decode_first_bound(const pm_serve_workload *w, serve_plan *p)
{
    const double isl = (double)w->input_tokens, osl = (double)w->output_tokens;
    const double B = (double)w->chunk_budget, N = w->concurrency;
    const double r = B / (isl + osl - 1.0); /* requests per step: r (isl + osl - 1) = B */
    const double g = r * (osl - 1.0), room = B - g;
    const double t = room < isl ? room : isl;
    p->kind[0] = (pm_mixed_step){g, decode_context(w), 1, {chunk_of(w, room / t, t, r)}};
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
    /* One prompt in prefill at a time: the others decode beside its chunks. */
    const double room1 = B - (N - 1.0);
    const double T1 = room1 > 0 ? prefill_span(w, room1) : INFINITY;
    const double n1 = room1 > 0 ? N * T1 / (T1 + osl - 1.0) : INFINITY;
    if (n1 <= 1.0) {
        const int64_t ctx = decode_context(w);
        p->kind[0] = (pm_mixed_step){N - 1.0, ctx, 1, {chunk_of(w, 1.0, isl / T1, 1.0 / T1)}};
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
     * r (T(r) + osl - 1) = N, T(r) = ceil(isl / (B - r (osl - 1))), which grows with r. */
    double lo = 0.0, hi = N / osl;
    if (osl > 1.0 && B / (osl - 1.0) < hi)
        hi = B / (osl - 1.0);
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
        const double r = 0.5 * (lo + hi), room = B - r * (osl - 1.0);
        if (room > 0 && r * (prefill_span(w, room) + osl - 1.0) <= N)
            lo = r;
        else
            hi = r;
    }
    const double r = lo, g = r * (osl - 1.0), room = B - g;
    const double T = prefill_span(w, room > 0 ? room : 1.0), n = N - g;
    if (!(room > 0) || r * isl > room || r <= 0) {
        decode_first_bound(w, p);
        return;
    }
    p->kind[0] = (pm_mixed_step){g, decode_context(w), 1, {chunk_of(w, n, isl / T, r)}};
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
        p->kind[1] = (pm_mixed_step){0, 0, 1, {chunk_of(w, k, isl, k)}};
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
    const double ended = N / (osl - 1.0); /* requests a decode step ends */
    const double k = ended < 1.0 ? 1.0 : ended > K ? K : ended;
    p->kind[0] = (pm_mixed_step){.decode_sequences = N, .decode_context = decode_context(w)};
    p->kind[1] = (pm_mixed_step){0, 0, 1, {chunk_of(w, k, isl, k)}};
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
    if (osl > 1.0)
        p->kind[0] = (pm_mixed_step){.decode_sequences = N, .decode_context = decode_context(w)};
    p->kind[1] = (pm_mixed_step){0, 0, 1, {chunk_of(w, k, isl, k)}};
    p->kind[2] = (pm_mixed_step){0, 0, 1, {chunk_of(w, rest, isl, rest)}};
    p->weight[0] = osl - 1.0;
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
    p->decoding = N * (osl - 1.0) / (G + osl - 1.0);
    p->prefilling = N - p->decoding;
    p->prefill_steps = G;
    p->mixed_frac = G / (G + osl - 1.0);
    p->chunk_tokens = k * isl;
}

/* ---------------------------------------------------------------- timing the steps */

/* One kind of step in one mode: its time, and what it moves when energy is asked (tr not
 * NULL). like: a plan of the same scenario whose roofline terms serve (NULL: computed). */
static pm_status time_kind(const pm_scenario *s, const pm_step_plan *like,
                           const pm_mixed_step *m, pm_mode mode, pm_step_plan *p, double *t,
                           pm_traffic *tr, pm_error *err)
{
    pm_step step;
    pm_status st = pm_step_mixed(s, m, &step, err);
    if (st == PM_OK)
        st = pm_step_plan_build_like(s, like, &step, mode == PM_MODE_FUSED,
                                     mode == PM_MODE_PRESERVE, p, err);
    if (st != PM_OK)
        return st;
    const bool preserve = mode == PM_MODE_PRESERVE;
    if ((st = pm_step_plan_time(p, preserve, step.context, t, err)) != PM_OK)
        return st;
    if (tr) {
        pm_step_plan_count(p);
        pm_step_plan_traffic(p, preserve, step.context, tr);
    }
    return PM_OK;
}

/* What the accelerator adds to every mode: die area, device price, static power. */
typedef struct serve_figures {
    double die_mm2, device_usd, p_static;
    bool energy;
} serve_figures;

static pm_status figures_of(const pm_accelerator *a, serve_figures *f, pm_error *err)
{
    *f = (serve_figures){0};
    pm_status st = PM_OK;
    if (a->area.present) {
        pm_area area;
        if ((st = pm_area_compute(a, &area, err)) != PM_OK)
            return st;
        f->die_mm2 = area.die_mm2;
    }
    if (a->cost.present) {
        pm_device_cost c;
        if ((st = pm_device_cost_compute(a, &c, err)) != PM_OK)
            return st;
        f->device_usd = c.device_usd;
    }
    f->energy = a->energy.present;
    if (f->energy)
        st = pm_static_power(a, &f->p_static, err);
    return st;
}

/* The mode's figures from its step times t[k] (and traffic tr[k] when energy). */
static void mode_figures(const pm_scenario *s, const pm_serve_workload *w, const serve_plan *p,
                         const serve_figures *f, const double *t, const pm_traffic *tr,
                         pm_serve_mode *r)
{
    const double osl = (double)w->output_tokens, devices = s->cluster.devices;
    double cycle = 0.0, ttft = 0.0, slow = 0.0;
    for (int k = 0; k < SERVE_KINDS; k++) {
        cycle += p->weight[k] * t[k];
        ttft += p->ttft_steps[k] * t[k];
        slow += p->slow_steps[k] * t[k];
    }
    for (int k = 0; k < SERVE_KINDS; k++)
        if (p->weight[k] > 0)
            *(p->kind[k].n_chunks > 0 ? &r->mixed_step_s : &r->decode_step_s) = t[k];
    r->requests_per_s = p->requests / cycle;
    r->e2e_s = w->concurrency / r->requests_per_s;
    if (p->ttft_by_little)
        r->ttft_s = r->e2e_s - (osl - 1.0) * t[0]; /* every later token: one step of kind 0 */
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
        for (int k = 0; k < SERVE_KINDS; k++) {
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

/* ---------------------------------------------------------------- the served workload */

#define SERVE_MAX_TOKENS ((int64_t)1 << 40)

static pm_status check_workload(const pm_serve_workload *w, pm_error *err)
{
    if (w->input_tokens < 1 || w->input_tokens > SERVE_MAX_TOKENS || w->output_tokens < 1 ||
        w->output_tokens > SERVE_MAX_TOKENS)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "input and output tokens must be in [1, 2^40] (got %lld and %lld)",
                       (long long)w->input_tokens, (long long)w->output_tokens);
    if (!(w->concurrency >= 1 && w->concurrency <= 1e9))
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
    /* Under decode-first a wave whose prompts need more than one step spreads into groups (the
     * first prompts decode while the others prefill); one that fits a step is prefill-first's. */
    if (w->arrival == PM_SERVE_WAVE && w->rule != PM_SERVE_PREFILL_FIRST &&
        !((double)w->input_tokens * w->concurrency <= (double)w->chunk_budget))
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
    if (!(w->ttft_limit_s >= 0 && w->ttft_limit_s < INFINITY && w->tpot_limit_s >= 0 &&
          w->tpot_limit_s < INFINITY))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "latency limits must be finite and >= 0 (0: none)");
    return PM_OK;
}

/* The cache the sequences in flight hold: decoding ones input + (output - 1) / 2 positions on
 * average, those in prefill half their prompt; each sequence's at that mean. */
static pm_status memory_of(const pm_scenario *s, const pm_serve_workload *w, const serve_plan *p,
                           pm_serve_result *out, pm_error *err)
{
    const double isl = (double)w->input_tokens, osl = (double)w->output_tokens;
    const double held = (p->decoding * (isl + (osl - 1.0) / 2.0) + p->prefilling * isl / 2.0) /
                        (p->decoding + p->prefilling);
    pm_scenario one = *s;
    one.provenance = NULL;
    one.workload.batch = 1;
    pm_footprint fp;
    pm_status st = pm_footprint_compute(&one, NULL, llround(held), &fp, err);
    if (st != PM_OK)
        return st;
    out->weight_bytes_per_device = fp.weight_bytes;
    out->kv_bytes_per_device = w->concurrency * fp.kv_bytes;
    out->hbm_usable_bytes_per_device = pm_hbm_usable_bytes(s);
    out->fits_hbm = fp.weight_bytes + out->kv_bytes_per_device <= out->hbm_usable_bytes_per_device;
    const double room = out->hbm_usable_bytes_per_device - fp.weight_bytes;
    out->max_concurrency = room <= 0 ? 0.0 : fp.kv_bytes > 0 ? floor(room / fp.kv_bytes) : 1e9;
    return PM_OK;
}

pm_status pm_serve_compute(const pm_scenario *s, const pm_serve_workload *w,
                           pm_serve_result *out, pm_error *err)
{
    if (!s || !w || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_serve_compute");
    memset(out, 0, sizeof *out);
    pm_status st = check_workload(w, err);
    if (st == PM_OK)
        st = pm_scenario_check(s, err);
    if (st == PM_OK)
        st = pm_plan_refuse_stages(s, "a served workload", err);
    if (st == PM_OK)
        st = pm_plan_refuse_replicas(s, "a served workload", err);
    if (st != PM_OK)
        return st;
    serve_plan p = {0};
    if (w->arrival == PM_SERVE_WAVE)
        prefill_first_wave(w, &p);
    else if (w->rule == PM_SERVE_DECODE_FIRST)
        decode_first(w, &p);
    else
        prefill_first(w, &p);
    serve_figures f;
    if ((st = figures_of(&s->accel, &f, err)) != PM_OK ||
        (st = memory_of(s, w, &p, out, err)) != PM_OK)
        return st;
    pm_step_plan *plans = pm_malloc(2 * sizeof *plans);
    if (!plans)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    const pm_step_plan *like = NULL;
    pm_scenario ks[SERVE_KINDS]; /* each kind's scenario: its host work counts its sequences */
    for (int k = 0; k < SERVE_KINDS; k++)
        if (p.weight[k] > 0 || p.ttft_steps[k] > 0)
            step_scenario(s, &p.kind[k], &ks[k]);
    for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++) {
        double t[SERVE_KINDS] = {0.0};
        pm_traffic tr[SERVE_KINDS] = {{0}};
        for (int k = 0; k < SERVE_KINDS && st == PM_OK; k++) {
            if (!(p.weight[k] > 0) && !(p.ttft_steps[k] > 0))
                continue;
            /* The first plan built lends its roofline terms to the others. */
            pm_step_plan *into = like ? &plans[1] : &plans[0];
            st = time_kind(&ks[k], like, &p.kind[k], (pm_mode)m, into, &t[k], f.energy ? &tr[k] : NULL,
                           err);
            if (!like)
                like = &plans[0];
        }
        if (st == PM_OK)
            mode_figures(s, w, &p, &f, t, tr, &out->modes[m]);
    }
    pm_free(plans);
    if (st != PM_OK)
        return st;
    out->decode_sequences = p.decoding;
    out->prefilling = p.prefilling;
    out->prefill_steps = p.prefill_steps;
    out->mixed_step_frac = p.mixed_frac;
    out->prefill_tokens_per_mixed_step = p.chunk_tokens;
    out->budget_bound = p.budget_bound;
    out->die_mm2 = f.die_mm2;
    return PM_OK;
}
