/*
 * burst.c - a burst of requests (pm_burst_compute): N requests of one length sent at once, as a
 * serving benchmark at request rate inf sends them, served as a transient and not a steady
 * state. The engine admits up to R sequences (its max running sequences, the caches the HBM
 * holds), serves them, admits more as they end; the run ends with the last. Prefill-first is
 * served in waves of R, each serve.c's wave; decode-first (chunked prefill) is followed step
 * by step, each step timed by serve.c as a served step is.
 *
 * May call: alloc.c, error.c, plan.c, serve.c, speculate.c.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/* One mode's sums over a micro-batch's requests, in seconds. */
typedef struct burst_sums {
    double ttft, tpot, e2e, makespan;
} burst_sums;

/* ---------------------------------------------------------------- prefill-first: waves */

/* Waves of at most R requests, each pm_serve_compute's wave at its size: every request of a
 * wave ends with it (one length), so the next wave starts when it ends. */
static pm_status prefill_first_waves(const pm_scenario *s, const pm_burst_workload *w, double R,
                                     burst_sums *sum, pm_error *err)
{
    const double N = (double)w->requests, osl = (double)w->serve.output_tokens;
    const double waves = ceil(N / R - 1e-12), last = N - (waves - 1.0) * R;
    pm_serve_workload v = w->serve;
    v.arrival = PM_SERVE_WAVE;
    v.request_rate_per_s = 0.0;
    v.ttft_limit_s = v.tpot_limit_s = 0.0;
    pm_serve_result full, tail;
    v.concurrency = R;
    pm_status st = pm_serve_compute(s, &v, &full, err);
    v.concurrency = last;
    if (st == PM_OK)
        st = last < R ? pm_serve_compute(s, &v, &tail, err) : PM_OK;
    if (st != PM_OK)
        return st;
    if (!(last < R))
        tail = full;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_serve_mode *f = &full.modes[m], *t = &tail.modes[m];
        const double before = (waves - 1.0) * f->e2e_s; /* the earlier waves' makespans */
        /* Wave j (0 .. waves - 2) of R requests starts at j x e2e_full. */
        const double starts = R * f->e2e_s * (waves - 1.0) * (waves - 2.0) / 2.0;
        sum[m].ttft = R * (waves - 1.0) * f->ttft_s + starts + last * (before + t->ttft_s);
        sum[m].e2e = R * (waves - 1.0) * f->e2e_s + starts + last * (before + t->e2e_s);
        sum[m].tpot = osl > 1.0 ? R * (waves - 1.0) * f->tpot_s + last * t->tpot_s : 0.0;
        sum[m].makespan = before + t->e2e_s;
    }
    return PM_OK;
}

/* ---------------------------------------------------------------- decode-first: the steps */

/* A run of steps of one shape: a step with chunks alone, or consecutive steps of decode tokens
 * alone at one count, timed once at their mean context (ctx_sum / steps). */
typedef struct segment {
    pm_mixed_step m;
    int64_t steps;
    double ctx_sum;
} segment;

/* A micro-batch's scheduler followed step by step: n requests, at most r running. A request's
 * first token ends a step with chunks (a segment of one step), its end is a step within a
 * segment (end_seg, end_pos). */
typedef struct sim {
    int64_t n, r, I, D, B;
    segment *seg;
    int64_t n_seg, cap_seg;
    int64_t *first_seg, *end_seg, *end_pos, *decode_start;
} sim;

static void sim_release(sim *x)
{
    pm_free(x->seg);
    pm_free(x->first_seg);
    pm_free(x->end_seg);
    pm_free(x->end_pos);
    pm_free(x->decode_start);
}

/* Room for one more segment; false when memory runs out. */
static bool sim_grow(sim *x)
{
    if (x->n_seg < x->cap_seg)
        return true;
    const int64_t cap = x->cap_seg ? 2 * x->cap_seg : 256;
    segment *g = pm_malloc((size_t)cap * sizeof *g);
    if (!g)
        return false;
    if (x->n_seg)
        memcpy(g, x->seg, (size_t)x->n_seg * sizeof *g);
    pm_free(x->seg);
    x->seg = g;
    x->cap_seg = cap;
    return true;
}

/* Adds a chunk of `tokens` at `offset` to m, merged with the last group when alike. */
static void add_chunk(pm_mixed_step *m, int64_t tokens, int64_t offset, bool finishing)
{
    pm_step_chunk *c = m->n_chunks ? &m->chunks[m->n_chunks - 1] : NULL;
    if (c && c->tokens == tokens && c->offset == offset) {
        c->count += 1.0;
        c->finishing += finishing ? 1.0 : 0.0;
        return;
    }
    m->chunks[m->n_chunks++] = (pm_step_chunk){1.0, tokens, offset, finishing ? 1.0 : 0.0};
}

/* Step k's prompt chunks into m: the prompts admitted and not prefilled, in order, filling
 * `room` tokens (*pre the first not prefilled, *rem its tokens left). At most three groups: the
 * rest of a prompt begun before, whole prompts, the start of one. */
static void fill_chunks(sim *x, int64_t k, int64_t adm, int64_t room, int64_t *pre,
                        int64_t *rem, pm_mixed_step *m)
{
    while (room > 0 && *pre < adm) {
        const int64_t t = *rem < room ? *rem : room;
        add_chunk(m, t, x->I - *rem, t == *rem);
        room -= t;
        *rem -= t;
        if (*rem > 0)
            break;
        x->decode_start[*pre] = k + 1;
        (*pre)++;
        *rem = x->I;
    }
}

/* Step k into its segment: a step with chunks its own, decode tokens alone merged into the
 * last segment when it is of the same count. The segment's index of the step and its step
 * within it into *seg_i and *pos. */
static void place_step(sim *x, const pm_mixed_step *m, double ctx, int64_t *seg_i, int64_t *pos)
{
    segment *last = x->n_seg ? &x->seg[x->n_seg - 1] : NULL;
    if (m->n_chunks == 0 && last && last->m.n_chunks == 0 &&
        !(fabs(last->m.decode_sequences - m->decode_sequences) > 0.0)) {
        *seg_i = x->n_seg - 1;
        *pos = last->steps++;
        last->ctx_sum += ctx;
        return;
    }
    x->seg[x->n_seg] = (segment){*m, 1, ctx};
    *seg_i = x->n_seg++;
    *pos = 0;
}

/* The steps of decode-first with chunked prefill: every step the decode tokens first (the
 * requests prefilled and not ended, [fin, pre)), then the prompts in order; requests admitted
 * in order while fewer than r run. All have one length, so they end in the order they began. */
static pm_status sim_run(sim *x, pm_error *err)
{
    int64_t adm = 0, fin = 0, pre = 0, rem = x->I, k = 0;
    double start_sum = 0.0; /* decode_start over [fin, pre) */
    for (; fin < x->n; k++) {
        while (adm - fin < x->r && adm < x->n)
            adm++;
        const int64_t d = pre - fin, pre_before = pre;
        pm_mixed_step m = {0};
        m.decode_sequences = (double)d;
        const double ctx = d > 0 ? (double)(x->I + k) - start_sum / (double)d : 0.0;
        if (!sim_grow(x))
            return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
        fill_chunks(x, k, adm, x->B - d, &pre, &rem, &m);
        for (int64_t i = pre_before; i < pre; i++)
            start_sum += (double)x->decode_start[i];
        int64_t seg_i, pos;
        place_step(x, &m, ctx, &seg_i, &pos);
        for (int64_t i = pre_before; i < pre; i++)
            x->first_seg[i] = seg_i; /* its first token: this step's end */
        while (fin < pre && x->decode_start[fin] + x->D - 1 <= k) {
            x->end_seg[fin] = seg_i;
            x->end_pos[fin] = pos;
            start_sum -= (double)x->decode_start[fin];
            fin++;
        }
    }
    return PM_OK;
}

/* The simulated steps timed (pm_serve_step_times, M micro-batches in flight) and the
 * requests' sums in every mode. */
static pm_status sim_time(const pm_scenario *s, sim *x, double M, burst_sums *sum,
                          pm_error *err)
{
    double *t = pm_malloc((size_t)x->n_seg * PM_MODE_COUNT * sizeof *t);
    double *start = pm_malloc((size_t)(x->n_seg + 1) * PM_MODE_COUNT * sizeof *start);
    pm_status st = t && start ? PM_OK : pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++)
        start[m] = 0.0;
    for (int64_t g = 0; g < x->n_seg && st == PM_OK; g++) {
        segment *sg = &x->seg[g];
        if (sg->m.decode_sequences > 0)
            sg->m.decode_context = llround(sg->ctx_sum / (double)sg->steps);
        st = pm_serve_step_times(s, &sg->m, M, &t[g * PM_MODE_COUNT], err);
        for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++)
            start[(g + 1) * PM_MODE_COUNT + m] =
                start[g * PM_MODE_COUNT + m] + (double)sg->steps * t[g * PM_MODE_COUNT + m];
    }
    const double out = (double)x->D + 1.0;
    for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++) {
        sum[m] = (burst_sums){0};
        for (int64_t i = 0; i < x->n; i++) {
            const int64_t a = x->first_seg[i], b = x->end_seg[i];
            const double first = start[a * PM_MODE_COUNT + m] + t[a * PM_MODE_COUNT + m];
            const double end = start[b * PM_MODE_COUNT + m] +
                               (double)(x->end_pos[i] + 1) * t[b * PM_MODE_COUNT + m];
            sum[m].ttft += first;
            sum[m].e2e += end;
            sum[m].tpot += out > 1.0 ? (end - first) / (out - 1.0) : 0.0;
            sum[m].makespan = end > sum[m].makespan ? end : sum[m].makespan;
        }
    }
    pm_free(t);
    pm_free(start);
    return st;
}

/* One micro-batch's scheduler over n requests, at most r running: its sums and steps. */
static pm_status decode_first_batch(const pm_scenario *s, const pm_burst_workload *w, int64_t n,
                                    int64_t r, double M, burst_sums *sum, int64_t *steps,
                                    pm_error *err)
{
    sim x = {0};
    x.n = n;
    x.r = r;
    x.I = w->serve.input_tokens;
    x.D = w->serve.output_tokens - 1;
    x.B = w->serve.chunk_budget;
    const size_t bytes = (size_t)n * sizeof(int64_t);
    x.first_seg = pm_malloc(bytes);
    x.end_seg = pm_malloc(bytes);
    x.end_pos = pm_malloc(bytes);
    x.decode_start = pm_malloc(bytes);
    pm_status st = x.first_seg && x.end_seg && x.end_pos && x.decode_start
                       ? sim_run(&x, err)
                       : pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    if (st == PM_OK)
        st = sim_time(s, &x, M, sum, err);
    *steps = 0;
    for (int64_t g = 0; g < x.n_seg; g++)
        *steps += x.seg[g].steps;
    sim_release(&x);
    return st;
}

/* Decode-first: the requests split evenly over the M micro-batches (q or q + 1 each), each
 * micro-batch's scheduler followed at its size. */
static pm_status decode_first_burst(const pm_scenario *s, const pm_burst_workload *w, double M,
                                    int64_t r, burst_sums *sum, int64_t *steps, pm_error *err)
{
    const int64_t Mi = (int64_t)M, q = w->requests / Mi, extra = w->requests % Mi;
    const int64_t sizes[2] = {q + 1, q}, counts[2] = {extra, Mi - extra};
    pm_status st = PM_OK;
    *steps = 0;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        sum[m] = (burst_sums){0};
    for (int j = 0; j < 2 && st == PM_OK; j++) {
        if (counts[j] == 0 || sizes[j] == 0)
            continue;
        burst_sums one[PM_MODE_COUNT];
        int64_t n_steps;
        st = decode_first_batch(s, w, sizes[j], r, M, one, &n_steps, err);
        for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++) {
            sum[m].ttft += (double)counts[j] * one[m].ttft;
            sum[m].tpot += (double)counts[j] * one[m].tpot;
            sum[m].e2e += (double)counts[j] * one[m].e2e;
            if (one[m].makespan > sum[m].makespan)
                sum[m].makespan = one[m].makespan;
        }
        if (n_steps > *steps)
            *steps = n_steps;
    }
    return st;
}

/* ---------------------------------------------------------------- the burst */

static pm_status check_burst(const pm_scenario *s, const pm_burst_workload *w, pm_error *err)
{
    const pm_serve_workload *v = &w->serve;
    if (!(w->requests >= 1 && w->requests <= PM_BURST_MAX_REQUESTS))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "requests",
                       "a burst holds 1 .. %d requests (got %lld)", PM_BURST_MAX_REQUESTS,
                       (long long)w->requests);
    /* Whole sequences: a fraction below 1 admitted none (the steps never ended), one above
     * ran the whole part in one mode and the fraction in the other. */
    const double mr = w->max_running;
    if (!((mr >= 0 && mr <= 0) || (mr >= 1 && mr <= 1e9 && !(mr - floor(mr) > 0))))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "max_running",
                       "expected 0 (none) or a whole number of running sequences in [1, 1e9] "
                       "(got %g)",
                       w->max_running);
    if (v->n_classes != 0)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "serve.n_classes",
                       "a burst is modelled at one length (got %d length classes)",
                       v->n_classes);
    if (!(v->input_tokens >= 1 && v->output_tokens >= 1 && v->chunk_budget >= 1) ||
        (int)v->rule < 0 || v->rule >= PM_SERVE_RULE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "serve",
                       "a burst needs input and output tokens, a chunk budget >= 1 and a rule");
    if (pm_cluster_dp(&s->cluster) > 1)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "cluster.dp",
                       "a burst over %d data-parallel replicas is not modelled (one replica)",
                       pm_cluster_dp(&s->cluster));
    if (v->rule == PM_SERVE_DECODE_FIRST && pm_spec_active(s))
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "speculative",
                       "a burst under decode-first with speculative decoding is not modelled "
                       "(prefill-first is)");
    return PM_OK;
}

/* R per micro-batch: the runtime's limit and the HBM's over M micro-batches, at most the
 * micro-batch's requests; which binds into out. */
static pm_status admission(const pm_scenario *s, const pm_burst_workload *w, double M,
                           double *r_mb, pm_burst_result *out, pm_error *err)
{
    const pm_serve_workload *v = &w->serve;
    pm_status st = pm_serve_max_sequences(s, v->input_tokens + v->output_tokens,
                                          &out->max_concurrency, &out->weight_bytes_per_device,
                                          err);
    if (st != PM_OK)
        return st;
    const double hbm = floor(out->max_concurrency / M);
    if (!(hbm >= 1))
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "hbm",
                       "no sequence's cache of %lld positions fits the usable HBM beside the "
                       "weights in each of %g micro-batches (at most %g sequences fit)",
                       (long long)(v->input_tokens + v->output_tokens), M,
                       out->max_concurrency);
    const double runtime = w->max_running > 0 ? w->max_running : INFINITY;
    const double per = ceil((double)w->requests / M - 1e-12);
    *r_mb = hbm < runtime ? hbm : runtime;
    out->hbm_binds = hbm < runtime && hbm < per;
    if (*r_mb > per)
        *r_mb = per;
    out->max_running = w->max_running > 0 ? w->max_running * M : 0.0;
    out->micro_batches = M;
    if (v->rule == PM_SERVE_DECODE_FIRST && !((double)v->chunk_budget > *r_mb))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "serve.chunk_budget",
                       "decode-first needs a chunk budget above the running sequences (got "
                       "%lld tokens, %g sequences)",
                       (long long)v->chunk_budget, *r_mb);
    return PM_OK;
}

pm_status pm_burst_compute(const pm_scenario *s, const pm_burst_workload *w,
                           pm_burst_result *out, pm_error *err)
{
    if (!s || !w || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_burst_compute");
    memset(out, 0, sizeof *out);
    pm_burst_workload one;
    if (w->serve.n_classes == 1) {
        /* A distribution of one class is its one length (its share, whatever it is, is 1). */
        one = *w;
        one.serve.input_tokens = w->serve.classes[0].input_tokens;
        one.serve.output_tokens = w->serve.classes[0].output_tokens;
        one.serve.n_classes = 0;
        w = &one;
    }
    pm_status st = check_burst(s, w, err);
    const double N = (double)w->requests;
    const double M = pm_cluster_pp(&s->cluster) > 1 ? pm_serve_micro_batches(s, N) : 1.0;
    double r_mb = 0.0;
    if (st == PM_OK)
        st = admission(s, w, M, &r_mb, out, err);
    burst_sums sum[PM_MODE_COUNT];
    if (st == PM_OK && w->serve.rule == PM_SERVE_PREFILL_FIRST) {
        out->admitted = r_mb * M < N ? r_mb * M : N;
        out->waves = ceil(N / out->admitted - 1e-12);
        st = prefill_first_waves(s, w, out->admitted, sum, err);
    } else if (st == PM_OK) {
        const int64_t Mi = (int64_t)M, q = w->requests / Mi, extra = w->requests % Mi;
        const double r = r_mb;
        out->admitted = (double)extra * fmin(r, (double)(q + 1)) +
                        (double)(Mi - extra) * fmin(r, (double)q);
        out->waves = N / out->admitted;
        st = decode_first_burst(s, w, M, (int64_t)r, sum, &out->steps, err);
    }
    if (st != PM_OK) {
        memset(out, 0, sizeof *out);
        return st;
    }
    const double osl = (double)w->serve.output_tokens;
    const double devices = s->cluster.devices * pm_cluster_pp(&s->cluster);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        pm_burst_mode *x = &out->modes[m];
        x->ttft_s = sum[m].ttft / N;
        x->tpot_s = sum[m].tpot / N;
        x->e2e_s = sum[m].e2e / N;
        x->makespan_s = sum[m].makespan;
        x->tokens_per_s = N * osl / x->makespan_s;
        x->tokens_per_s_per_device = x->tokens_per_s / devices;
    }
    return PM_OK;
}

