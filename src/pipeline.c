/*
 * pipeline.c - pipeline stages (issue 44): a request's prefill and decode when the layers are
 * split over PP stages of the tensor-parallel group each (plan.c's pm_pipeline), in the three
 * modes. Formulas: reference serving-parallelism.md section 2.
 *
 * The batch is split into M micro-batches in flight (cluster.micro_batches; by default
 * min(PP, batch): vLLM's virtual engines, aiconfigurator's M = PP), each of ceil(batch / M)
 * sequences (the largest one is costed).
 * Stage i's time for one micro-batch, t_i, is its receive (alpha + bytes / B over the link its
 * boundary crosses: the previous stage's activations, micro-batch x hidden x act bytes; the
 * first stage receives the sampled tokens, 4 bytes each, from the last) plus its layers on the
 * fast evaluator (step_plan.c's pm_step_plan_stage_eval): the head on the first stage, the tail
 * on the last. Then
 *
 *   decode step (TPOT)  max(sum_i t_i, M max_i t_i)
 *                       one micro-batch's round trip, or the slowest stage serving all M
 *                       micro-batches; with even stages P t_s for M <= P and M t_s beyond:
 *                       the reference's max(M, P) t_s, the returned token included;
 *   prefill (TTFT)      sum_i t_i + (M - 1) max_i t_i
 *                       GPipe with M micro-batches: the first crosses every stage, the others
 *                       follow at the slowest stage's pace; with even stages (M + P - 1) t_s;
 *                       the first stage receives nothing (the prompt is there);
 *   throughput          batch x decode steps / request time, per replica.
 *
 * PRESERVE prefetches behind the receive too: a stage waiting on its input has its HBM idle,
 * and Algorithm 1 treats the receive as a communication node whose window is the first
 * layer's nodes up to its first collective (its QKV weights, its KV cache, its O weights), under
 * the same L2 capacity; the windows behind the stage's collectives are the whole model's. In a
 * decode step the stage's idle before each micro-batch (the bubble) is that window's too
 * (bubble_times: a lower bound of the gap, so the time is exact or an upper bound).
 *
 * The decode steps are summed over the contexts from the prompt to seq_len - 1 by an adaptive
 * split: a range is taken whole when its step time is one line (both end slopes equal the
 * chord and the midpoint is on it; a convex piecewise-linear function with equal end slopes is
 * linear, and a change of the insertion decisions, a jump, moves the chord off the slopes),
 * else split at the kink the end lines point to, or in the middle; short ranges are added step
 * by step. What the steps move is taken at the same ranges' ends (affine where the decisions
 * hold).
 *
 * May call: alloc.c, collective.c, dtype.c, energy.c, error.c, model.c, plan.c, step.c,
 * step_plan.c, workload.c.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/* Stages with the same part take the same time: the distinct parts and how many stages have
 * each (at most the first, the last, and the layer counts between). */
typedef struct part_set {
    pm_stage_part part[PM_MAX_STAGES];
    int count[PM_MAX_STAGES];
    int n;
} part_set;

static void part_set_add(part_set *ps, const pm_stage_part *p)
{
    for (int i = 0; i < ps->n; i++)
        if (ps->part[i].layers == p->layers && ps->part[i].head == p->head &&
            ps->part[i].tail == p->tail && !(fabs(ps->part[i].recv_s - p->recv_s) > 0.0) &&
            !(fabs(ps->part[i].recv_bytes - p->recv_bytes) > 0.0)) {
            ps->count[i]++;
            return;
        }
    ps->part[ps->n] = *p;
    ps->count[ps->n++] = 1;
}

typedef struct pipe_ctx {
    const pm_pipeline *pl;
    pm_scenario mb;              /* the scenario at one micro-batch: the plans point at it */
    pm_step_plan dec, dec_f, pre, pre_f;
    part_set dec_parts, pre_parts;
    double recv_dec[PM_MAX_STAGES]; /* stage i's receive (the first's: the return) */
    double recv_pre[PM_MAX_STAGES];
} pipe_ctx;

/* One evaluation of a pipelined step: its time, the stages' summed and largest times, what the
 * average device moves (M micro-batches per step), and the largest receive prefetch. */
typedef struct pipe_point {
    double t, sum, max;
    double recv_pf;
    pm_traffic tr;
} pipe_point;

/* Each part's stage time t[i] at ctx, gap[i] of idle given to its receive's window (NULL: none);
 * pf[i] and need[i] (may be NULL) what the receive's window prefetches and the time that takes
 * alone. */
static pm_status stage_times(const pm_step_plan *p, bool preserve, int64_t ctx,
                             const part_set *ps, const double *gap, double *t, double *pf,
                             double *need)
{
    for (int i = 0; i < ps->n; i++) {
        pm_stage_part part = ps->part[i];
        part.gap_s = gap ? gap[i] : 0.0;
        const pm_status st = pm_step_plan_stage_eval(p, preserve, ctx, &part, &t[i],
                                                     pf ? &pf[i] : NULL, need ? &need[i] : NULL);
        if (st != PM_OK)
            return st;
    }
    return PM_OK;
}

/* The decode period of stages summing to sum, the slowest max: max(sum, M max). */
static double period_of(double M, double sum, double max)
{
    return sum > M * max ? sum : M * max;
}

/* The decode period over the parts' times (each counted per stage). */
static double decode_period(double M, const part_set *ps, const double *t)
{
    double sum = 0.0, max = 0.0;
    for (int i = 0; i < ps->n; i++) {
        sum += ps->count[i] * t[i];
        max = t[i] > max ? t[i] : max;
    }
    return period_of(M, sum, max);
}

/* PRESERVE in the decode bubbles (issue 44 item 2). Over a period T = max(sum_j t_j, M max_j
 * t_j) stage i works M t_i and idles T - M t_i: (T - M t_i) / M before each micro-batch
 * arrives, the idle taken as evenly spread. Its HBM is idle then, so the prefetches behind its
 * receive (the first layer's weights and KV up to its first collective, Algorithm 1 under the
 * same L2 capacity: the same bytes) may run in that gap; once the gap reaches need_i - recv_i
 * (the prefetches' time alone less the receive's own) they end before the data does, and more
 * changes nothing. The gaps and the times depend on each other; the gap given is a lower bound
 * of the one the stages leave: the period at every stage's fastest time (each window's
 * prefetches hidden: t_sat) less M times the stage's own time without a gap (t0, its largest),
 * (T(t_sat) - M t0_i) / M, clamped to [0, need_i - recv_i]. The times are then exact where that
 * bound reaches the hiding gap (a decode step with fewer micro-batches in flight than stages:
 * every gap is at least another stage's whole time) and an upper bound otherwise (PRESERVE's
 * gain never overstated). t[] holds the times without a gap and receives the result. */
static pm_status bubble_times(double M, const part_set *ps, const pm_step_plan *p, int64_t ctx,
                              double *t, const double *need)
{
    double hide[PM_MAX_STAGES], sat[PM_MAX_STAGES], gap[PM_MAX_STAGES];
    bool any = false;
    for (int i = 0; i < ps->n; i++) {
        hide[i] = need[i] > ps->part[i].recv_s ? need[i] - ps->part[i].recv_s : 0.0;
        any = any || hide[i] > 0;
    }
    if (!any)
        return PM_OK;
    pm_status st = stage_times(p, true, ctx, ps, hide, sat, NULL, NULL);
    if (st != PM_OK)
        return st;
    const double T = decode_period(M, ps, sat);
    bool partial = false;
    for (int i = 0; i < ps->n; i++) {
        const double g = (T - M * t[i]) / M;
        gap[i] = g > 0 ? (g < hide[i] ? g : hide[i]) : 0.0;
        partial = partial || (gap[i] > 0 && gap[i] < hide[i]);
        if (!(gap[i] < hide[i]))
            t[i] = sat[i];
    }
    if (!partial)
        return PM_OK;
    double part_t[PM_MAX_STAGES];
    if ((st = stage_times(p, true, ctx, ps, gap, part_t, NULL, NULL)) != PM_OK)
        return st;
    for (int i = 0; i < ps->n; i++)
        if (gap[i] > 0 && gap[i] < hide[i])
            t[i] = part_t[i];
    return PM_OK;
}

static pm_status pipe_eval(double M, double P, const part_set *ps, const pm_step_plan *p,
                           const pm_step_plan *u, bool preserve, bool prefill, int64_t ctx,
                           bool traffic, pipe_point *out)
{
    *out = (pipe_point){0};
    double t[PM_MAX_STAGES], pf[PM_MAX_STAGES], need[PM_MAX_STAGES];
    pm_status st = stage_times(p, preserve, ctx, ps, NULL, t, pf, need);
    /* The prefill's bubbles are not windows (GPipe's differ per micro-batch; a prefill's
     * stages are compute-bound). */
    if (st == PM_OK && preserve && !prefill)
        st = bubble_times(M, ps, p, ctx, t, need);
    if (st != PM_OK)
        return st;
    for (int i = 0; i < ps->n; i++) {
        out->sum += ps->count[i] * t[i];
        if (t[i] > out->max)
            out->max = t[i];
        if (pf[i] > out->recv_pf)
            out->recv_pf = pf[i];
        if (traffic) {
            pm_traffic tr;
            pm_step_plan_stage_traffic(p, u, preserve, ctx, &ps->part[i], &tr);
            pm_traffic_add(&out->tr, &tr, M * ps->count[i] / P);
        }
    }
    if (prefill)
        out->t = out->sum + (M - 1.0) * out->max;
    else
        out->t = period_of(M, out->sum, out->max);
    return PM_OK;
}

/* The decode sum of one mode over contexts a..b. */
typedef struct dsum {
    const pipe_ctx *x;
    const pm_step_plan *p, *u;
    bool preserve;
    pm_status st;
    long evals;
    pm_traffic tr;
} dsum;

static double dec_t(dsum *d, int64_t c)
{
    pipe_point pt;
    if (d->st == PM_OK)
        d->st = pipe_eval(d->x->pl->micro_batches, d->x->pl->stages, &d->x->dec_parts, d->p,
                          d->u, d->preserve, false, c, false, &pt);
    d->evals++;
    return d->st == PM_OK ? pt.t : 0.0;
}

static void dec_tr(dsum *d, int64_t c, double w)
{
    pipe_point pt;
    if (d->st == PM_OK)
        d->st = pipe_eval(d->x->pl->micro_batches, d->x->pl->stages, &d->x->dec_parts, d->p,
                          d->u, d->preserve, false, c, true, &pt);
    if (d->st == PM_OK)
        pm_traffic_add(&d->tr, &pt.tr, w);
}

#define DSUM_BUDGET 200000L

static double dsum_range(dsum *d, int64_t a, int64_t b, int depth)
{
    if (d->st != PM_OK || a > b)
        return 0.0;
    if (b - a < 8 || depth > 60 || d->evals > DSUM_BUDGET) {
        double acc = 0.0;
        for (int64_t c = a; c <= b && d->st == PM_OK; c++) {
            acc += dec_t(d, c);
            dec_tr(d, c, 1.0);
        }
        return acc;
    }
    const int64_t m = a + (b - a) / 2;
    const double ta = dec_t(d, a), ta1 = dec_t(d, a + 1), tb1 = dec_t(d, b - 1),
                 tb = dec_t(d, b), tm = dec_t(d, m);
    const double span = (double)(b - a), chord = (tb - ta) / span;
    const double sl = ta1 - ta, sr = tb - tb1;
    const double scale = fabs(ta) + fabs(tb);
    const double tol = 1e-13 * scale;
    const double line_m = ta + chord * (double)(m - a);
    if (fabs(sl - chord) <= tol && fabs(sr - chord) <= tol && fabs(tm - line_m) <= 1e-12 * scale) {
        const double half = (span + 1.0) / 2.0;
        dec_tr(d, a, half);
        dec_tr(d, b, half);
        return (span + 1.0) * (ta + tb) / 2.0;
    }
    int64_t k = m;
    if (fabs(sl - sr) > tol) {
        const double xk = ((tb - sr * (double)b) - (ta - sl * (double)a)) / (sl - sr);
        if (xk >= (double)(a + 1) && xk < (double)(b - 1))
            k = (int64_t)floor(xk);
    }
    return dsum_range(d, a, k, depth + 1) + dsum_range(d, k + 1, b, depth + 1);
}

/* The decode plans' context, as estimate.c's (a windowed model's window, else 1). */
static int64_t plan_ctx0(const pm_model *m)
{
    if (pm_model_local_layers(m) > 0 && !m->chunked_attention && m->sliding_window > 1)
        return m->sliding_window;
    return 1;
}

static pm_status build_plans(pipe_ctx *x, const pm_scenario *s, int64_t sp, pm_error *err)
{
    pm_pipeline_micro_scenario(s, x->pl, &x->mb);
    pm_step step;
    pm_status st;
    if ((st = pm_step_of(&x->mb, PM_PHASE_DECODE, plan_ctx0(&s->model), &step, err)) != PM_OK ||
        (st = pm_step_plan_build(&x->mb, &step, false, true, &x->dec, err)) != PM_OK)
        return st;
    pm_step_plan_count(&x->dec);
    pm_step_plan_fuse(&x->dec, &x->dec_f);
    if ((st = pm_step_of(&x->mb, PM_PHASE_PREFILL, sp, &step, err)) != PM_OK ||
        (st = pm_step_plan_build_like(&x->mb, &x->dec, &step, false, true, &x->pre, err)) !=
            PM_OK)
        return st;
    pm_step_plan_count(&x->pre);
    pm_step_plan_fuse(&x->pre, &x->pre_f);
    return PM_OK;
}

/* The stages' parts: stage i receives its input (plan.c's pm_stage_recv_bytes: tokens' hidden
 * states from the stage before, the first the ids of `returned` tokens from the last) over the
 * link its boundary crosses; recv[i] receives the receive's time. */
static void parts_of(const pm_scenario *s, const pm_pipeline *pl, double tokens, double returned,
                     double *recv, part_set *ps)
{
    const double act = s->model.hidden * pm_dtype_bytes(s->workload.act_dtype);
    ps->n = 0;
    for (int i = 0; i < pl->stages; i++) {
        bool inter;
        const double b = pm_stage_recv_bytes(pl, i, act, tokens, returned, &inter);
        recv[i] = pm_p2p_time(&s->cluster, inter, b);
        const pm_stage_part d = {pl->layers[i], i == 0, i == pl->stages - 1, recv[i], b, 0.0};
        part_set_add(ps, &d);
    }
}

/* The stages' parts, decode and prefill (the first token's return is the first decode step's:
 * a prefill returns nothing). */
static void stage_parts(pipe_ctx *x, const pm_scenario *s, int64_t sp)
{
    const double mb = x->pl->micro_batch;
    parts_of(s, x->pl, mb, mb, x->recv_dec, &x->dec_parts);
    parts_of(s, x->pl, mb * (double)sp, 0.0, x->recv_pre, &x->pre_parts);
}

pm_status pm_pipeline_step_time(const pm_scenario *s, const pm_pipeline *pl,
                                const pm_pipeline_step *m, const pm_step_plan *p,
                                const pm_step_plan *u, bool preserve, int64_t ctx,
                                double *time_s, pm_traffic *tr, double *recv_pf_bytes)
{
    double recv[PM_MAX_STAGES];
    part_set ps;
    parts_of(s, pl, m->tokens, m->returned, recv, &ps);
    pipe_point pt;
    const pm_status st = pipe_eval(m->micro_batches, pl->stages, &ps, p, u, preserve, false, ctx,
                                   tr != NULL, &pt);
    if (st != PM_OK)
        return st;
    *time_s = pt.t;
    if (tr)
        *tr = pt.tr;
    if (recv_pf_bytes)
        *recv_pf_bytes = pt.recv_pf;
    return PM_OK;
}

static void report_plan(const pipe_ctx *x, const pm_scenario *s, pm_pipeline_report *r)
{
    const pm_pipeline *pl = x->pl;
    r->stages = pl->stages;
    r->replicas = pl->replicas;
    r->devices_total = pm_cluster_total_devices(&s->cluster);
    r->nodes = pl->nodes;
    r->micro_batches = pl->micro_batches;
    r->micro_batch = pl->micro_batch;
    r->min_stage_layers = r->max_stage_layers = pl->layers[0];
    for (int i = 0; i < pl->stages; i++) {
        if (pl->layers[i] < r->min_stage_layers)
            r->min_stage_layers = pl->layers[i];
        if (pl->layers[i] > r->max_stage_layers)
            r->max_stage_layers = pl->layers[i];
        r->inter_node = r->inter_node || pl->inter_node[i];
        if (i > 0) { /* the send into stage i */
            if (x->recv_dec[i] > r->send_decode_s)
                r->send_decode_s = x->recv_dec[i];
            if (x->recv_pre[i] > r->send_prefill_s)
                r->send_prefill_s = x->recv_pre[i];
        }
    }
    r->return_s = x->recv_dec[0];
}

pm_status pm_pipeline_estimate(const pm_scenario *s, const pm_pipeline *pl, pm_estimate *out,
                               pm_traffic *tpot_traffic, pm_error *err)
{
    pipe_ctx *x = pm_malloc(sizeof *x);
    if (!x)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    x->pl = pl;
    const pm_workload *wl = &s->workload;
    const int64_t sp = pm_workload_prompt_tokens(wl);
    const int64_t last = pm_default_context(wl, PM_PHASE_DECODE);
    const double steps = (double)pm_workload_decode_steps(wl);
    pm_status st = build_plans(x, s, sp, err);
    if (st != PM_OK) {
        pm_free(x);
        return st;
    }
    stage_parts(x, s, sp);
    report_plan(x, s, &out->pipeline);
    const double M = pl->micro_batches;
    for (int mode = 0; mode < PM_MODE_COUNT && st == PM_OK; mode++) {
        const bool fused = mode == PM_MODE_FUSED, preserve = mode == PM_MODE_PRESERVE;
        const pm_step_plan *dec = fused ? &x->dec_f : &x->dec, *pre = fused ? &x->pre_f : &x->pre;
        pm_mode_result *r = &out->modes[mode];
        pipe_point pp, pt;
        if ((st = pipe_eval(M, pl->stages, &x->pre_parts, pre, &x->pre, preserve, true, sp, true,
                            &pp)) != PM_OK ||
            (st = pipe_eval(M, pl->stages, &x->dec_parts, dec, &x->dec, preserve, false, last,
                            true, &pt)) != PM_OK)
            break;
        r->prefill_s = pp.t;
        r->traffic = pp.tr;
        dsum d = {x, dec, &x->dec, preserve, PM_OK, 0, {0, 0, 0, 0, {0}}};
        r->decode_s = dsum_range(&d, sp, last, 0);
        if ((st = d.st) != PM_OK)
            break;
        pm_traffic_add(&r->traffic, &d.tr, 1.0);
        r->tpot_s = pt.t;
        tpot_traffic[mode] = pt.tr;
        r->request_s = r->prefill_s + r->decode_s;
        r->tpot_mean_s = r->decode_s / steps;
        r->tokens_per_s = (double)wl->batch * steps / r->request_s;
        r->stage_decode_s = pt.max;
        r->bubble_decode_frac = 1.0 - M * (pt.sum / pl->stages) / pt.t;
        r->bubble_prefill_frac = 1.0 - M * (pp.sum / pl->stages) / pp.t;
        r->recv_prefetch_bytes = preserve ? pt.recv_pf : 0.0;
        /* One decode allreduce of a micro-batch, as estimate.c reports it. */
        const double msg = (double)pl->micro_batch * s->model.hidden *
                           pm_dtype_bytes(pm_allreduce_dtype(wl));
        r->fused_chunks = fused ? dec->chunks : 0;
        const int k = fused && r->fused_chunks > 0 ? r->fused_chunks : 1;
        r->allreduce_decode_s = fused ? k * pm_ar_model_time(&dec->ar_fused, msg / k, &r->allreduce)
                                      : pm_ar_model_time(&x->dec.ar, msg, &r->allreduce);
    }
    pm_free(x);
    return st;
}

pm_status pm_pipeline_decode_sum_stepwise(const pm_scenario *s, const pm_pipeline *pl,
                                          pm_mode mode, double *sum, pm_error *err)
{
    pipe_ctx *x = pm_malloc(sizeof *x);
    if (!x)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    x->pl = pl;
    const int64_t sp = pm_workload_prompt_tokens(&s->workload);
    const int64_t last = pm_default_context(&s->workload, PM_PHASE_DECODE);
    pm_status st = build_plans(x, s, sp, err);
    if (st == PM_OK) {
        stage_parts(x, s, sp);
        const pm_step_plan *dec = mode == PM_MODE_FUSED ? &x->dec_f : &x->dec;
        long double acc = 0.0L;
        for (int64_t c = sp; c <= last && st == PM_OK; c++) {
            pipe_point pt;
            st = pipe_eval(pl->micro_batches, pl->stages, &x->dec_parts, dec, &x->dec,
                           mode == PM_MODE_PRESERVE, false, c,
                           false, &pt);
            acc += pt.t;
        }
        *sum = (double)acc;
    }
    pm_free(x);
    return st;
}
