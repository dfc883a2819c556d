/*
 * estimate.c - end-to-end time of a request in the three modes (DESIGN.md section 8), on the
 * fast path: pm_estimate_compute, pm_decode_step_time and pm_step_model evaluate steps with the
 * step plans of step_plan.c; the graph path (reference.c) is the reference the tests compare them
 * against, and serves no estimate.
 *
 * A request is the prefill plus one decode step per generated token, the context growing from
 * the prompt length to seq_len - 1. Within a range of contexts where the insertion decisions do
 * not change, the step time is a piecewise-linear function of the context (sums and maxima of
 * linear terms, convex with waiting consumers and no HBM sharing), so its sum over the integers
 * is found exactly by splitting at the intersections of the end slopes; ranges are split where
 * the decisions change (found by bisection, since the KV cache only grows). The number of
 * evaluations depends on the number of kinks, not on the sequence length.
 *
 * With pipeline stages (issue 44) the request is pipeline.c's (micro-batches, sends, bubbles);
 * data-parallel replicas multiply the throughput and leave the latencies, and every per-device
 * figure divides by all the devices (pm_cluster_total_devices).
 *
 * With speculative decoding (issue 45) the decode steps are verify steps (step.c) and the
 * draft's steps (speculate.c's draft scenario, estimated alike) join them: each context's
 * steps weigh 1 / E and k / E.
 *
 * May call: alloc.c, check.c, collective.c, die_cost.c, dtype.c, energy.c, error.c, footprint.c,
 * insert.c, model.c, pipeline.c, plan.c, runtime.c, speculate.c, step.c, step_plan.c, text.c,
 * workload.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const mode_names[PM_MODE_COUNT] = {"serial", "fused", "preserve"};

const char *pm_mode_name(pm_mode m)
{
    return (int)m >= 0 && m < PM_MODE_COUNT ? mode_names[m] : "?";
}

#define EVAL_BUDGET 4096

/* Sum of T(c) over integers c in [a, b] for one mode, on the fast path. */
#define MEMO 8
typedef struct summer {
    const pm_step_plan *plan;
    bool preserve;
    bool convex; /* steps are convex in the context: equal end slopes prove linearity */
    pm_status st;
    int evals;
    int64_t memo_c[MEMO];
    double memo_t[MEMO];
    int memo_next;
    pm_traffic traffic; /* the sum of what the steps move, region by region */
    int64_t end_c;      /* the last region's end, and what its step moves */
    pm_traffic end_t;
    int64_t sig_c;          /* the last range's end, and its signature */
    unsigned sig;
    bool in_region;         /* PRESERVE, summing a range with one set of decisions: */
    pm_step_region *region; /* their compiled step serves its evaluations */
    pm_step_region *spare;  /* the next range's, made at spare_c by the bracket (or -1) */
    int64_t spare_c;
    pm_step_region regions[2];
} summer;

static double eval_t(summer *sm, int64_t c)
{
    for (int i = 0; i < MEMO; i++)
        if (sm->memo_c[i] == c)
            return sm->memo_t[i];
    double t = 0.0;
    if (sm->st == PM_OK)
        sm->st = sm->in_region ? pm_step_region_eval(sm->region, c, &t)
                               : pm_step_plan_eval(sm->plan, sm->preserve, c, &t, NULL);
    sm->evals++;
    sm->memo_c[sm->memo_next] = c;
    sm->memo_t[sm->memo_next] = t;
    sm->memo_next = (sm->memo_next + 1) % MEMO;
    return t;
}

static unsigned sig_at(const summer *sm, int64_t c)
{
    return sm->preserve ? pm_step_plan_signature(sm->plan, c, NULL) : 0u;
}

/* The signature at a range's end b, kept: the range after a change ends there too. */
static unsigned sig_end(summer *sm, int64_t b)
{
    if (b != sm->sig_c) {
        sm->sig_c = b;
        sm->sig = sig_at(sm, b);
    }
    return sm->sig;
}

static double sum_linear_region(summer *sm, int64_t a, int64_t b, int depth)
{
    if (sm->st != PM_OK)
        return 0.0;
    if (b - a < 6) {
        double acc = 0.0;
        for (int64_t c = a; c <= b; c++)
            acc += eval_t(sm, c);
        return acc;
    }
    const double ta = eval_t(sm, a), ta1 = eval_t(sm, a + 1);
    const double tb1 = eval_t(sm, b - 1), tb = eval_t(sm, b);
    const double sl = ta1 - ta, sr = tb - tb1;
    const double scale = fabs(ta) + fabs(tb);
    const double tol = 1e-13 * scale + 1e-9 * (fabs(sl) + fabs(sr));
    const double trapezoid = (double)(b - a + 1) * (ta + tb) / 2.0;
    if (fabs(sl - sr) <= tol && sm->convex)
        return trapezoid;
    if (fabs(sl - sr) <= tol) {
        const int64_t m = a + (b - a) / 2;
        const double tm = eval_t(sm, m);
        const double lin = ta + (tb - ta) * (double)(m - a) / (double)(b - a);
        if (fabs(tm - lin) <= 1e-12 * scale)
            return trapezoid;
    }
    if (depth > 60 || sm->evals > EVAL_BUDGET)
        return trapezoid; /* not reached for convex piecewise-linear steps */
    int64_t k = a + (b - a) / 2;
    if (fabs(sl - sr) > tol) {
        /* The two end lines meet at the kink of a convex piecewise-linear function. */
        const double x = ((tb - sr * (double)b) - (ta - sl * (double)a)) / (sl - sr);
        if (x >= (double)(a + 1) && x < (double)(b - 1))
            k = (int64_t)floor(x);
    }
    return sum_linear_region(sm, a, k, depth + 1) + sum_linear_region(sm, k + 1, b, depth + 1);
}

/* One range of contexts with the same insertion decisions: what a step moves is affine in the
 * context there (the KV bytes grow linearly; which bytes are prefetched does not change), so
 * the trapezoid of its ends is its exact sum; the time may have kinks, found by
 * sum_linear_region. For PRESERVE the caller made sm->region at a: its decisions hold from a
 * to b (their signatures agree at both ends). */
static double sum_region(summer *sm, int64_t a, int64_t b)
{
    pm_traffic ta, tb;
    if (sm->preserve) {
        pm_step_region_traffic(sm->region, a, &ta);
        pm_step_region_traffic(sm->region, b, &tb);
    } else {
        pm_step_plan_traffic(sm->plan, false, a, &ta);
        pm_step_plan_traffic(sm->plan, false, b, &tb);
    }
    const double half = (double)(b - a + 1) / 2.0;
    pm_traffic_add(&sm->traffic, &ta, half);
    pm_traffic_add(&sm->traffic, &tb, half);
    sm->end_c = b;
    sm->end_t = tb;
    /* Serial and fused steps (and PRESERVE's without prefetches) are sums of node times: their
     * sum is closed-form (pm_step_plan_sum). */
    double sum;
    if (pm_step_plan_sum(sm->plan, sm->preserve, a, b, &sum))
        return sum;
    sm->in_region = sm->preserve;
    sum = sum_linear_region(sm, a, b, 0);
    sm->in_region = false;
    return sum;
}

static double sum_range(summer *sm, int64_t a, int64_t b, int depth)
{
    if (sm->st != PM_OK || a > b)
        return 0.0;
    /* The region at a: its signature is a's, and it serves the sum from a when b has it too. */
    unsigned sa = 0u;
    if (sm->preserve) {
        if (sm->spare_c == a) { /* the previous range's bracket made it */
            pm_step_region *t = sm->region;
            sm->region = sm->spare;
            sm->spare = t;
            sm->spare_c = -1;
        } else {
            pm_step_region_init(sm->plan, a, true, sm->region);
        }
        sa = sm->region->sig;
    }
    const unsigned sb = sig_end(sm, b);
    if (sa == sb || depth > 40)
        return sum_region(sm, a, b);
    const int64_t next = sm->preserve ? sm->region->next : -1;
    int64_t lo = a, hi = b; /* sig(lo) == sa, sig(hi) != sa */
    /* The decisions only change one way as the cache grows, so the last context with sa is
     * unique: the two contexts around where the signature says they change next narrow the
     * bracket (to those two when it is right), and the bisection finds that context from it.
     * The region made at the guess serves the next range when the guess is right. */
    for (int64_t g = next - 1; next > a && g <= next; g++) {
        if (g <= lo || g >= hi)
            continue;
        unsigned sg;
        if (g == next) {
            pm_step_region_init(sm->plan, g, true, sm->spare);
            sm->spare_c = g;
            sg = sm->spare->sig;
        } else {
            sg = sig_at(sm, g);
        }
        if (sg == sa)
            lo = g;
        else
            hi = g;
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (sig_at(sm, mid) == sa)
            lo = mid;
        else
            hi = mid;
    }
    return sum_region(sm, a, lo) + sum_range(sm, hi, b, depth + 1);
}

/* A step model's decode time is read as a token's time, and its longest context as what fits:
 * a speculating scenario's decode step is its verify step (TPOT is the verify and draft steps
 * over the tokens a step yields: the estimate's), and its memory holds the draft too. what is
 * refused, naming the key. (pm_decode_step_time gives the verify step, as documented.) */
static pm_status refuse_speculation(const pm_scenario *s, const char *what, pm_error *err)
{
    if (pm_spec_active(s))
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.speculative",
                       "%s of a speculating scenario is not modelled: a decode step verifies "
                       "several tokens beside the draft's steps, and TPOT is the estimate's "
                       "(pm_estimate_compute, `run`); leave the \"speculative\" block out",
                       what);
    return PM_OK;
}

/* The checked scenario's plan of one decode step at context_len in one mode. */
static pm_status decode_plan(const pm_scenario *s, pm_mode mode, int64_t context_len,
                             pm_step_plan *plan, pm_error *err)
{
    pm_step step;
    pm_status st = pm_scenario_check(s, err);
    if (st == PM_OK)
        st = pm_plan_refuse_stages(s, "one step's time", err);
    if (st == PM_OK)
        st = pm_step_of(s, PM_PHASE_DECODE, context_len, &step, err);
    if (st != PM_OK)
        return st;
    return pm_step_plan_build(s, &step, mode == PM_MODE_FUSED, mode == PM_MODE_PRESERVE, plan,
                              err);
}

/* The decode steps from context a to b. A window caps the local layers' attention at
 * min(context, window), and block-sparse layers read a share of the positions beyond their
 * local blocks: the step is linear on each side of that kink, so the two sides are summed
 * apart. Chunked attention restarts at every chunk: each chunk is summed apart (the cost grows
 * with the chunks the request crosses, not with its tokens). */
static double sum_decode(summer *sm, const pm_model *m, int64_t a, int64_t b)
{
    const int64_t w = pm_local_kink(m);
    if (w < 1)
        return sum_range(sm, a, b, 0);
    if (!m->chunked_attention || m->sparse_block > 0) {
        if (w >= a && w < b)
            return sum_range(sm, a, w, 0) + sum_range(sm, w + 1, b, 0);
        return sum_range(sm, a, b, 0);
    }
    double acc = 0.0;
    const int evals = sm->evals;
    for (int64_t lo = a; lo <= b && sm->st == PM_OK;) {
        const int64_t end = (lo / w + 1) * w - 1; /* the last context of lo's chunk */
        const int64_t hi = end < b ? end : b;
        sm->evals = 0; /* the evaluation budget is per chunk: each is summed exactly */
        acc += sum_range(sm, lo, hi, 0);
        lo = hi + 1;
    }
    sm->evals += evals;
    return acc;
}

pm_status pm_decode_step_time(const pm_scenario *s, pm_mode mode, int64_t context_len,
                              double *time_s, pm_error *err)
{
    if (!s || !time_s || (int)mode < 0 || mode >= PM_MODE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_decode_step_time");
    pm_step_plan plan;
    pm_status st = decode_plan(s, mode, context_len, &plan, err);
    if (st != PM_OK)
        return st;
    return pm_step_plan_time(&plan, mode == PM_MODE_PRESERVE, context_len, time_s, err);
}

/* What an estimate builds before it evaluates. The decode plans are built at a context that
 * does not depend on the sequence length (decode_ctx0), so that a sweep can keep them: a decode
 * evaluation costs the attention at its own context from its slope, which is exact for the
 * integer-valued flop and byte counts (tests/test_sweep_run.c checks a sweep's points against
 * pm_estimate_compute bit for bit). A sweep keeps one cache per block: when the next point
 * differs from the last only in the sequence length the decode plans are reused, and the
 * accelerator's area and dollar figures whenever the accelerator is unchanged. */

/* The decode plans' context: the window with sliding-window layers (their attention then reads
 * the window at every later context, and the plan's node serves it without costing), else 1.
 * Never a context where a layer reads no position (0, or a whole number of chunks): the
 * attention's prefetched traffic would then be counted without its constant part. */
static int64_t decode_ctx0(const pm_model *m)
{
    if (pm_model_local_layers(m) > 0 && !m->chunked_attention && m->sliding_window > 1)
        return m->sliding_window;
    return 1;
}

struct pm_estimate_cache {
    bool valid;
    int decode_builds, accel_builds; /* how often each part was built (for the tests) */
    pm_scenario key;  /* the scenario the plans were built for, seq_len 0, no provenance */
    pm_scenario scen; /* the same with the current seq_len: the plans point at it */
    pm_step_plan dec, dec_f, pre, pre_f;
    bool accel_valid; /* the accelerator's per-device figures below, for accel_key */
    pm_accelerator accel_key;
    pm_device_cost cost;
    double p_static;
};

pm_estimate_cache *pm_estimate_cache_new(void)
{
    pm_estimate_cache *c = pm_malloc(sizeof *c);
    if (c) {
        c->valid = false;
        c->accel_valid = false;
        c->decode_builds = c->accel_builds = 0;
    }
    return c;
}

void pm_estimate_cache_builds(const pm_estimate_cache *c, int *decode, int *accel)
{
    *decode = c->decode_builds;
    *accel = c->accel_builds;
}

void pm_estimate_cache_free(pm_estimate_cache *c)
{
    pm_free(c);
}

/* The accelerator's dollar figures and static power (when it has the coefficients), from c
 * when c holds them for the same accelerator; failures are not kept (they fill err). */
static pm_status accel_figures(pm_estimate_cache *c, const pm_accelerator *a, pm_error *err)
{
    if (c->accel_valid && memcmp(a, &c->accel_key, sizeof *a) == 0)
        return PM_OK;
    c->accel_valid = false;
    c->accel_builds++;
    c->p_static = 0.0;
    pm_status st;
    if (a->cost.present && (st = pm_device_cost_compute(a, &c->cost, err)) != PM_OK)
        return st;
    if (a->energy.present && (st = pm_static_power(a, &c->p_static, err)) != PM_OK)
        return st;
    c->accel_key = *a;
    c->accel_valid = true;
    return PM_OK;
}

/* The energy and per-dollar figures of every mode, from the traffic and times already in out,
 * when the accelerator has the coefficients. */
static pm_status energy_and_cost(const pm_scenario *s, pm_estimate_cache *c,
                                 const pm_traffic *tpot_traffic, pm_estimate *out, pm_error *err)
{
    const pm_accelerator *a = &s->accel;
    /* One replica's devices and tokens (the replicas' ratios are the same). */
    const double devices = s->cluster.devices * pm_cluster_pp(&s->cluster);
    const double tokens = (double)s->workload.batch * (double)out->decode_steps;
    out->energy_present = a->energy.present;
    out->cost_present = a->cost.present;
    pm_status st = accel_figures(c, a, err);
    if (st != PM_OK)
        return st;
    if (out->cost_present)
        out->cost = c->cost;
    const double p_static = c->p_static;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        pm_mode_result *r = &out->modes[m];
        if (out->cost_present)
            r->tokens_per_s_per_usd = r->tokens_per_s / (devices * out->cost.device_usd);
        if (!out->energy_present)
            continue;
        pm_energy tpot; /* the times are finite and positive: checked above */
        pm_energy_of(a, p_static, &r->traffic, r->request_s, &r->energy);
        pm_energy_of(a, p_static, &tpot_traffic[m], r->tpot_s, &tpot);
        r->tpot_energy_J = tpot.total_J;
        r->energy_per_token_J = devices * r->energy.total_J / tokens;
        r->avg_power_W = r->energy.total_J / r->request_s;
        r->tokens_per_J = r->energy_per_token_J > 0 ? 1.0 / r->energy_per_token_J : 0.0;
        /* The prefill alone: its power, and the clock the board power allows it. */
        pm_energy pre;
        pm_energy_of(a, p_static, &r->prefill_traffic, r->prefill_s, &pre);
        const bool kept = pre.total_J > pre.static_J; /* the prefill's traffic was kept */
        r->prefill_power_W = kept ? pre.total_J / r->prefill_s : 0.0;
        r->prefill_clock_frac =
            kept ? pm_power_clock_frac(&pre, r->prefill_s, a->energy.board_power_W) : 1.0;
    }
    return PM_OK;
}

pm_status pm_decode_step_traffic(const pm_scenario *s, pm_mode mode, int64_t context_len,
                                 pm_traffic *out, pm_error *err)
{
    if (!s || !out || (int)mode < 0 || mode >= PM_MODE_COUNT || context_len < 0)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "bad argument to pm_decode_step_traffic");
    memset(out, 0, sizeof *out);
    pm_step_plan plan;
    pm_status st = decode_plan(s, mode, context_len, &plan, err);
    if (st != PM_OK)
        return st;
    pm_step_plan_count(&plan);
    pm_step_plan_traffic(&plan, mode == PM_MODE_PRESERVE, context_len, out);
    return PM_OK;
}

/* The allreduces of one decode step of a plan: its head's and tail's, and each layer's (a dense
 * layer has the template layer's communication, a MoE layer the MoE template's; only the
 * attention differs between the layers of a class). */
static int count_allreduces(const pm_node *nodes, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += nodes[i].kind == PM_NODE_ALLREDUCE;
    return k;
}

static int step_allreduces(const pm_step_plan *p, const pm_model *m)
{
    const pm_template *t = &p->tmpl;
    const int moe = t->n_moe > 0 ? pm_model_moe_layers(m) : 0;
    return count_allreduces(t->head, t->n_head) + count_allreduces(t->tail, t->n_tail) +
           (m->layers - moe) * count_allreduces(t->layer, t->n_layer) +
           moe * count_allreduces(t->moe, t->n_moe);
}

/* The decode plans for s, reused when c holds them for s up to the sequence length; the
 * prefill plans, built for s. The plans point at c->scen. */
static pm_status cache_plans(pm_estimate_cache *c, const pm_scenario *s, int64_t sp,
                             pm_error *err)
{
    pm_scenario key = *s;
    key.workload.seq_len = 0;
    key.provenance = NULL;
    c->scen = *s;
    c->scen.provenance = NULL;
    pm_step step;
    pm_status st;
    if (!c->valid || memcmp(&key, &c->key, sizeof key) != 0) {
        c->valid = false;
        c->key = key;
        c->decode_builds++;
        if ((st = pm_step_of(&c->scen, PM_PHASE_DECODE, decode_ctx0(&s->model), &step, err)) !=
                PM_OK ||
            (st = pm_step_plan_build(&c->scen, &step, false, true, &c->dec, err)) != PM_OK)
            return st;
        pm_step_plan_count(&c->dec);
        pm_step_plan_fuse(&c->dec, &c->dec_f);
        c->valid = true;
    }
    /* The decode plans' scenario up to the sequence length: their roofline terms serve. */
    if ((st = pm_step_of(&c->scen, PM_PHASE_PREFILL, sp, &step, err)) != PM_OK ||
        (st = pm_step_plan_build_like(&c->scen, &c->dec, &step, false, true, &c->pre, err)) !=
            PM_OK)
        return st;
    pm_step_plan_count(&c->pre);
    pm_step_plan_fuse(&c->pre, &c->pre_f);
    return PM_OK;
}

/* One mode's prefill, decode sum and traffic into r and *tpot_tr. */
static pm_status estimate_mode(const pm_scenario *s, const pm_estimate_cache *c, pm_mode m,
                               int64_t sp, int64_t last, double steps, double weight,
                               pm_mode_result *r, pm_traffic *tpot_tr)
{
    const bool fused = m == PM_MODE_FUSED, preserve = m == PM_MODE_PRESERVE;
    const pm_step_plan *dec = fused ? &c->dec_f : &c->dec, *pre = fused ? &c->pre_f : &c->pre;
    const pm_workload *wl = &s->workload;
    /* Without HBM sharing and with waiting consumers a step is sums and maxima of linear
     * functions of the context: convex. The fluid sharing model multiplies terms, and a
     * streaming consumer's end takes a minimum; there the midpoint is checked. Without
     * prefetches (serial, fused) neither applies: a step is a sum of node times, the attention's
     * a maximum of linear terms. */
    const bool convex = !preserve || (!s->options.hbm_sharing &&
                                      s->accel.prefetch_consumer == PM_CONSUMER_WAIT);
    summer sm;
    sm.plan = dec;
    sm.preserve = preserve;
    sm.convex = convex;
    sm.st = PM_OK;
    sm.evals = sm.memo_next = 0;
    sm.traffic = sm.end_t = (pm_traffic){0};
    sm.end_c = sm.sig_c = -1;
    sm.sig = 0u;
    sm.in_region = false;
    sm.region = &sm.regions[0];
    sm.spare = &sm.regions[1];
    sm.spare_c = -1;
    for (int i = 0; i < MEMO; i++)
        sm.memo_c[i] = -1;
    /* The prefill: for PRESERVE one region's decisions serve its time and its traffic. */
    pm_status st;
    if (preserve) {
        pm_step_region_init(pre, sp, false, sm.region);
        st = pm_step_region_eval(sm.region, sp, &r->prefill_s);
        pm_step_region_traffic(sm.region, sp, &r->traffic);
    } else {
        st = pm_step_plan_eval(pre, false, sp, &r->prefill_s, NULL);
        pm_step_plan_traffic(pre, false, sp, &r->traffic);
    }
    if (st != PM_OK)
        return st;
    r->prefill_traffic = r->traffic;
    r->fused_chunks = fused ? dec->chunks : 0;
    /* weight: the share of the contexts that run a step (1; 1 / E for verify steps). */
    r->decode_s = weight * sum_decode(&sm, &s->model, sp, last);
    /* The last step, from the sum's evaluations when it is among them (a region's evaluation
     * is the step's, tests/test_estimate.c): PRESERVE's then needs no region of its own. */
    r->tpot_s = eval_t(&sm, last);
    if ((st = sm.st) != PM_OK)
        return st;
    r->request_s = r->prefill_s + r->decode_s;
    r->tpot_mean_s = r->decode_s / steps;
    r->tokens_per_s = (double)wl->batch * steps / r->request_s;
    const double msg = (double)wl->batch * (1.0 + (double)s->spec.draft_tokens) *
                       s->model.hidden * pm_dtype_bytes(pm_allreduce_dtype(wl));
    /* Fused: the fused kernel's own communication of the message, over its chunks, at its own
     * start-up (fused_latency_us), not the separate allreduce it replaces. */
    const int k = fused && r->fused_chunks > 0 ? r->fused_chunks : 1;
    r->allreduce_decode_s =
        fused ? k * pm_ar_model_time(&dec->ar_fused, msg / k, &r->allreduce)
              : pm_ar_model_time(&c->dec.ar, msg, &r->allreduce);
    pm_traffic_add(&r->traffic, &sm.traffic, weight);
    if (sm.end_c == last)
        *tpot_tr = sm.end_t;
    else
        pm_step_plan_traffic(dec, preserve, last, tpot_tr);
    return PM_OK;
}

/* The footprint, and where the KV cache stops fitting the attention window. The expert reads
 * at the batch's tokens are the decode plans' (a decode step's tokens are the batch). Over
 * pipeline stages (pl) a step reads one micro-batch's KV cache: the spill is its. */
static pm_status footprint_and_spill(const pm_scenario *s, const pm_estimate_cache *c,
                                     const pm_pipeline *pl, pm_estimate *out, pm_error *err)
{
    const pm_workload *wl = &s->workload;
    pm_status st;
    pm_footprint fp;
    const pm_moe_reads *reads = s->model.experts > 0 ? &c->dec.tmpl.moe_reads : NULL;
    if ((st = pm_footprint_compute_reads(s, &out->shard, wl->seq_len, reads, &fp, err)) != PM_OK)
        return st;
    out->weight_bytes_per_device = fp.weight_bytes;
    out->experts_read_per_step = fp.experts_read_per_step;
    out->kv_bytes_per_device = fp.kv_bytes;
    out->hbm_usable_bytes_per_device = pm_hbm_usable_bytes(s);
    out->fits_hbm = pm_footprint_fits_hbm(s, &fp);
    if (pl->stages > 1) {
        pm_scenario mb;
        pm_pipeline_micro_scenario(s, pl, &mb);
        if ((st = pm_footprint_compute_reads(&mb, &out->shard, wl->seq_len, reads, &fp, err)) !=
            PM_OK)
            return st;
    }
    const double cap = pm_accelerator_l2_window_bytes(&s->accel);
    out->l2_window_bytes = cap;
    if (s->cluster.devices <= 1 || !(fp.qkv_weight_bytes < cap)) {
        out->kv_spill_context = 0;
    } else {
        out->kv_spill_context = (int64_t)ceil((cap - fp.qkv_weight_bytes) / fp.kv_bytes_per_token);
        /* Local layers read at most the window: with no global layer the cache may never
         * outgrow the prefetch window. Block-sparse layers read the positions of their local
         * blocks and a share of the others: the context where that many positions do not fit. */
        const pm_model *m = &s->model;
        const double fit = (double)out->kv_spill_context;
        const int64_t w = fp.local_layers == m->layers ? pm_local_kink(m) : 0;
        if (w > 0 && fit > (double)w && m->sparse_block < 1) {
            out->kv_spill_context = -1;
        } else if (w > 0 && fit > (double)w) {
            /* Past W a step reads `share` more positions per context. */
            const double g = out->shard.q_heads / out->shard.kv_heads;
            const double share = pm_kv_tokens(m, true, g, w + 1, NULL) - (double)w;
            const double at = ceil((double)w + (fit - (double)w) / share);
            out->kv_spill_context = at < 9e18 ? (int64_t)at : -1;
        }
    }
    return PM_OK;
}

pm_status pm_estimate_compute(const pm_scenario *s, pm_estimate *out, pm_error *err)
{
    if (!s || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL scenario or output");
    memset(out, 0, sizeof *out);
    pm_estimate_cache *c = pm_estimate_cache_new();
    if (!c)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    const pm_status st = pm_estimate_compute_cached(s, c, out, err);
    pm_estimate_cache_free(c);
    return st;
}

static void one_stage_report(const pm_scenario *s, const pm_pipeline *pl, pm_estimate *out);
static pm_status stage_footprint(const pm_scenario *s, const pm_estimate_cache *c,
                                 const pm_pipeline *pl, pm_estimate *out, pm_error *err);

/* The request's steps in every mode into out (before the energy, the speedups and the memory),
 * each decode context's step counted `weight` times, and the last step's traffic. */
static pm_status estimate_steps(const pm_scenario *s, pm_estimate_cache *c, double weight,
                                pm_estimate *out, pm_traffic *tpot_traffic, pm_error *err)
{
    memset(out, 0, sizeof *out);
    pm_status st = pm_scenario_check(s, err);
    if (st != PM_OK)
        return st;
    if ((st = pm_shard_compute(s, &out->shard, err)) != PM_OK)
        return st;
    const pm_workload *wl = &s->workload;
    const int64_t sp = pm_workload_prompt_tokens(wl);
    const int64_t last = pm_default_context(wl, PM_PHASE_DECODE);
    out->prefill_tokens = sp;
    out->decode_steps = pm_workload_decode_steps(wl);
    /* Plans: decode and prefill, unfused (serial and PRESERVE) and fused. */
    if ((st = cache_plans(c, s, sp, err)) != PM_OK)
        return st;
    out->allreduces_per_step = step_allreduces(&c->dec, &s->model);
    pm_pipeline pl;
    if ((st = pm_pipeline_plan(s, &pl, err)) != PM_OK)
        return st;
    if (pl.stages > 1) {
        st = pm_pipeline_estimate(s, &pl, out, tpot_traffic, err);
        if (st != PM_OK && st != PM_ERR_RANGE)
            return st;
    }
    for (int m = 0; m < PM_MODE_COUNT && st == PM_OK && pl.stages == 1; m++)
        st = estimate_mode(s, c, (pm_mode)m, sp, last, (double)out->decode_steps, weight,
                           &out->modes[m], &tpot_traffic[m]);
    if (pl.stages == 1)
        one_stage_report(s, &pl, out);
    if (st == PM_ERR_RANGE)
        return pm_fail(err, st, NULL, "$.accelerator",
                       "an operation's time is not finite: a bandwidth, peak or latency is too "
                       "small or too large for double precision");
    if (st != PM_OK)
        return pm_fail(err, st, NULL, NULL, "the schedule of a step is inconsistent");
    /* A silently wrong number is worse than an error: every time must be finite and > 0. */
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_mode_result *r = &out->modes[m];
        if (!(r->request_s > 0 && r->request_s < INFINITY && r->prefill_s > 0 &&
              r->decode_s > 0 && r->tpot_s > 0 && r->tpot_s < INFINITY &&
              r->tokens_per_s > 0 && r->tokens_per_s < INFINITY))
            return pm_fail(err, PM_ERR_RANGE, NULL, NULL,
                           "the %s estimate is not finite and positive (request %g s, prefill %g "
                           "s): a bandwidth, peak, latency or size is too small or too large "
                           "for double precision",
                           pm_mode_name((pm_mode)m), r->request_s, r->prefill_s);
    }
    return PM_OK;
}

/* ---------------------------------------------------------------- speculative decoding */

/* The draft's steps: its prefill and each context's draft steps, k / E of them per token. */
static pm_status draft_steps(const pm_scenario *s, double weight, pm_estimate *de,
                             pm_traffic *dtr, pm_error *err)
{
    pm_scenario d;
    pm_spec_draft_scenario(s, &d);
    pm_estimate_cache *dc = pm_estimate_cache_new();
    if (!dc)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    pm_status st = estimate_steps(&d, dc, weight, de, dtr, err);
    pm_estimate_cache_free(dc);
    return pm_spec_draft_failed(st, err);
}

/* The same scenario's mean decode step without speculation (the speedup's reference). */
static pm_status plain_tpot(const pm_scenario *s, pm_estimate *pe, pm_error *err)
{
    pm_scenario plain = *s;
    plain.provenance = NULL;
    memset(&plain.spec, 0, sizeof plain.spec);
    pm_traffic tr[PM_MODE_COUNT];
    pm_estimate_cache *pc = pm_estimate_cache_new();
    if (!pc)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    pm_status st = estimate_steps(&plain, pc, 1.0, pe, tr, err);
    pm_estimate_cache_free(pc);
    return st;
}

/* One mode of the target's verify steps r (weighted 1 / E) joined with the draft's dr
 * (weighted k / E): t per token = (T_verify + k T_draft) / E. */
static void spec_join(double k, double E, double steps, double batch, pm_mode_result *r,
                      const pm_mode_result *dr, pm_traffic *tr, const pm_traffic *dtr)
{
    r->prefill_s += dr->prefill_s;
    r->decode_s += dr->decode_s;
    r->request_s = r->prefill_s + r->decode_s;
    r->tpot_s = (r->tpot_s + k * dr->tpot_s) / E;
    r->stage_decode_s = r->tpot_s; /* one stage: its step is the token's */
    r->tpot_mean_s = r->decode_s / steps;
    r->tokens_per_s = batch * steps / r->request_s;
    pm_traffic_add(&r->traffic, &dr->traffic, 1.0);
    pm_traffic_add(&r->prefill_traffic, &dr->prefill_traffic, 1.0);
    pm_traffic t = {0};
    pm_traffic_add(&t, tr, 1.0 / E);
    pm_traffic_add(&t, dtr, k / E);
    *tr = t;
}

/* A speculating scenario's steps: the verify steps (the scenario's decode steps, k + 1 tokens
 * per sequence), the draft's, joined per mode; the plain decode for the speedup. */
static pm_status estimate_speculative(const pm_scenario *s, pm_estimate_cache *c,
                                      pm_estimate *out, pm_traffic *tpot_tr, pm_error *err)
{
    pm_status st = pm_scenario_check(s, err);
    if (st != PM_OK)
        return st;
    const double k = s->spec.draft_tokens, E = pm_spec_expected_tokens(&s->spec);
    pm_estimate *aux = pm_calloc(2, sizeof *aux); /* the draft's, the plain one's */
    if (!aux)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    pm_traffic dtr[PM_MODE_COUNT];
    st = draft_steps(s, k / E, &aux[0], dtr, err);
    if (st == PM_OK)
        st = plain_tpot(s, &aux[1], err);
    if (st == PM_OK)
        st = estimate_steps(s, c, 1.0 / E, out, tpot_tr, err);
    pm_spec_report *sr = &out->spec;
    for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++) {
        pm_mode_result *r = &out->modes[m];
        sr->verify_step_s[m] = r->tpot_s;
        sr->draft_step_s[m] = aux[0].modes[m].tpot_s;
        sr->draft_prefill_s[m] = aux[0].modes[m].prefill_s;
        spec_join(k, E, (double)out->decode_steps, (double)s->workload.batch, r,
                  &aux[0].modes[m], &tpot_tr[m], &dtr[m]);
        sr->plain_tpot_mean_s[m] = aux[1].modes[m].tpot_mean_s;
        sr->speedup_vs_plain[m] = sr->plain_tpot_mean_s[m] / r->tpot_mean_s;
    }
    sr->active = st == PM_OK;
    sr->method = s->spec.method;
    sr->draft_tokens = s->spec.draft_tokens;
    sr->tokens_per_step = E;
    pm_free(aux);
    return st;
}

/* The draft's weights and cache beside the target's (footprint.c's rule). */
static pm_status spec_footprint(const pm_scenario *s, pm_estimate *out, pm_error *err)
{
    double weights, kv;
    pm_status st = pm_footprint_draft(s, s->workload.seq_len, &weights, &kv, err);
    if (st != PM_OK)
        return st;
    out->spec.draft_weight_bytes_per_device = weights;
    out->spec.draft_kv_bytes_per_device = kv;
    out->weight_bytes_per_device += weights;
    out->kv_bytes_per_device += kv;
    out->fits_hbm = out->weight_bytes_per_device + out->kv_bytes_per_device <=
                    out->hbm_usable_bytes_per_device;
    return PM_OK;
}

pm_status pm_estimate_compute_cached(const pm_scenario *s, pm_estimate_cache *c,
                                     pm_estimate *out, pm_error *err)
{
    pm_traffic tpot_traffic[PM_MODE_COUNT];
    pm_status st = PM_OK;
    if (pm_spec_active(s))
        st = estimate_speculative(s, c, out, tpot_traffic, err);
    else
        st = estimate_steps(s, c, 1.0, out, tpot_traffic, err);
    if (st != PM_OK)
        return st;
    pm_pipeline pl;
    if ((st = pm_pipeline_plan(s, &pl, err)) != PM_OK)
        return st;
    if ((st = energy_and_cost(s, c, tpot_traffic, out, err)) != PM_OK)
        return st;
    const pm_mode_result *M = out->modes;
    out->speedup_preserve_vs_serial = M[PM_MODE_SERIAL].request_s / M[PM_MODE_PRESERVE].request_s;
    out->speedup_preserve_vs_fused = M[PM_MODE_FUSED].request_s / M[PM_MODE_PRESERVE].request_s;
    out->speedup_fused_vs_serial = M[PM_MODE_SERIAL].request_s / M[PM_MODE_FUSED].request_s;
    /* Replicas: each serves its own batch; the latencies are one replica's. */
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        out->pipeline.replica_tokens_per_s[m] = out->modes[m].tokens_per_s;
        out->modes[m].tokens_per_s *= pl.replicas;
    }
    if ((st = footprint_and_spill(s, c, &pl, out, err)) != PM_OK)
        return st;
    if (pm_spec_active(s) && (st = spec_footprint(s, out, err)) != PM_OK)
        return st;
    return pl.stages > 1 ? stage_footprint(s, c, &pl, out, err) : PM_OK;
}

/* The report of a plan of one stage: no send, no bubble. */
static void one_stage_report(const pm_scenario *s, const pm_pipeline *pl, pm_estimate *out)
{
    pm_pipeline_report *r = &out->pipeline;
    r->stages = 1;
    r->replicas = pl->replicas;
    r->devices_total = pm_cluster_total_devices(&s->cluster);
    r->nodes = pl->nodes;
    r->micro_batches = 1;
    r->micro_batch = s->workload.batch;
    r->min_stage_layers = r->max_stage_layers = s->model.layers;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        out->modes[m].stage_decode_s = out->modes[m].tpot_s;
}

/* A pipelined plan's memory: the busiest stage's weights and KV cache (its layers', the
 * embedding on the first, the LM head on the last), at the final context. */
static pm_status stage_footprint(const pm_scenario *s, const pm_estimate_cache *c,
                                 const pm_pipeline *pl, pm_estimate *out, pm_error *err)
{
    pm_footprint fp;
    const pm_moe_reads *reads = s->model.experts > 0 ? &c->dec.tmpl.moe_reads : NULL;
    pm_status st = pm_footprint_compute_reads(s, &out->shard, s->workload.seq_len, reads, &fp, err);
    if (st != PM_OK)
        return st;
    double best = -1.0;
    for (int i = 0; i < pl->stages; i++) {
        double w, kv;
        pm_footprint_stage(s, &fp, pl, i, &w, &kv);
        if (w + kv > best) {
            best = w + kv;
            out->weight_bytes_per_device = w;
            out->kv_bytes_per_device = kv;
        }
    }
    out->fits_hbm = best <= out->hbm_usable_bytes_per_device;
    return PM_OK;
}

/* The warning of weights and KV cache beyond the usable HBM; at, when not NULL, the context of
 * one step (else the request's). */
static void hbm_note(double weights, double kv, double usable, const int64_t *at, char *note,
                     size_t n)
{
    if (!note || n == 0)
        return;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    char where[48] = "";
    if (at)
        snprintf(where, sizeof where, " at context %lld", (long long)*at);
    snprintf(note, n,
             "the weights and KV cache per device%s (%.3g GiB + %.3g GiB) exceed its %.3g GiB of "
             "usable HBM: the times are of memory the device does not have (fewer sequences or "
             "tokens, or more devices, fit)",
             where, weights / gib, kv / gib, usable / gib);
}

/* The modes whose average power per device exceeds the board power, as "serial 803 W, ..."
 * into text; false when none does (or the part has no energy figures or board power). */
static bool power_note(const pm_scenario *s, const pm_estimate *e, char *note, size_t n)
{
    const double board_W = s->accel.energy.board_power_W;
    char modes[160] = "";
    size_t len = 0;
    for (int m = 0; m < PM_MODE_COUNT && e->energy_present && board_W > 0; m++)
        if (e->modes[m].avg_power_W > board_W && len < sizeof modes)
            len += (size_t)snprintf(modes + len, sizeof modes - len, "%s%s %.0f W",
                                    len ? ", " : "", pm_mode_name((pm_mode)m),
                                    e->modes[m].avg_power_W);
    if (!len)
        return false;
    if (note && n)
        snprintf(note, n,
                 "the average power per device (%s) exceeds %s's board power %.0f W: the "
                 "energies are upper bounds (45 nm MAC energies, docs/data-format.md) and a "
                 "real part would lower its clocks, so its times too are optimistic",
                 modes, s->accel.name, board_W);
    return true;
}

/* The modes whose prefill alone draws more than the board power (issue 47), with the clock
 * fraction that would meet it, as "serial 733 W at 0.97 of the clock, ..." into text; false
 * when none does. */
static bool prefill_power_note(const pm_scenario *s, const pm_estimate *e, char *note, size_t n)
{
    char modes[200] = "";
    size_t len = 0;
    for (int m = 0; m < PM_MODE_COUNT && e->energy_present; m++) {
        const pm_mode_result *r = &e->modes[m];
        if (r->prefill_clock_frac < 1.0 && len < sizeof modes && r->prefill_clock_frac > 0)
            len += (size_t)snprintf(modes + len, sizeof modes - len,
                                    "%s%s %.0f W, clock %.3g of nominal", len ? "; " : "",
                                    pm_mode_name((pm_mode)m), r->prefill_power_W,
                                    r->prefill_clock_frac);
        else if (r->prefill_clock_frac < 1.0 && len < sizeof modes) /* no clock meets it */
            len += (size_t)snprintf(modes + len, sizeof modes - len,
                                    "%s%s %.0f W, no clock: the static power alone exceeds it",
                                    len ? "; " : "", pm_mode_name((pm_mode)m),
                                    r->prefill_power_W);
    }
    if (!len)
        return false;
    if (note && n)
        snprintf(note, n,
                 "the prefill's average power per device (%s) exceeds %s's board power %.0f W: "
                 "held to it, the part lowers its clock to that share (the MACs' power ~ f^3, "
                 "the bytes' ~ f) and a compute-bound prefill takes up to its inverse as long; "
                 "not applied to the times (the MAC energies are 45 nm upper bounds)",
                 modes, s->accel.name, s->accel.energy.board_power_W);
    return true;
}

bool pm_estimate_warning(const pm_scenario *s, const pm_estimate *e, size_t i, char *note,
                         size_t n)
{
    if (!s || !e)
        return false;
    if (!e->fits_hbm) {
        if (i == 0) {
            hbm_note(e->weight_bytes_per_device, e->kv_bytes_per_device,
                     e->hbm_usable_bytes_per_device, NULL, note, n);
            return true;
        }
        i--;
    }
    if (power_note(s, e, note, n)) {
        if (i == 0)
            return true;
        i--;
    }
    return i == 0 && prefill_power_note(s, e, note, n);
}

bool pm_context_warning(const pm_scenario *s, int64_t context_len, size_t i, char *note,
                        size_t n)
{
    if (!s || context_len < 0)
        return false;
    pm_footprint fp;
    if (pm_footprint_compute(s, NULL, context_len, &fp, NULL) == PM_OK &&
        !pm_footprint_fits_hbm(s, &fp)) {
        if (i == 0) {
            hbm_note(fp.weight_bytes, fp.kv_bytes, pm_hbm_usable_bytes(s), &context_len, note,
                     n);
            return true;
        }
        i--;
    }
    /* The step's own context beyond the trained one (the scenario's sequence length has its
     * warning, pm_scenario_warning's). */
    const int trained = s->model.max_position_embeddings;
    if (i > 0 || trained < 1 || context_len < trained)
        return false;
    if (note && n)
        snprintf(note, n, "context %lld (the step's position %lld) exceeds the model's "
                 "max_position_embeddings %d",
                 (long long)context_len, (long long)context_len + 1, trained);
    return true;
}

struct pm_step_model {
    pm_scenario s;
    pm_mode mode;
    int64_t max_context; /* pm_footprint_max_context */
    pm_step_plan plan;
};

pm_status pm_step_model_new(const pm_scenario *s, pm_mode mode, pm_step_model **out,
                            pm_error *err)
{
    if (!s || !out || (int)mode < 0 || mode >= PM_MODE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_step_model_new");
    *out = NULL;
    pm_status st = pm_scenario_check(s, err);
    if (st == PM_OK)
        st = pm_plan_refuse_stages(s, "a step model", err);
    if (st == PM_OK)
        st = refuse_speculation(s, "a step model", err);
    if (st != PM_OK)
        return st;
    pm_step_model *m = pm_malloc(sizeof *m);
    if (!m)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    m->s = *s;
    m->s.provenance = NULL; /* not needed to evaluate, and owned by the caller */
    m->mode = mode;
    /* The plan points at the model's own copy of the scenario. */
    pm_step step;
    st = pm_step_of(&m->s, PM_PHASE_DECODE, 0, &step, err);
    if (st == PM_OK)
        st = pm_step_plan_build(&m->s, &step, mode == PM_MODE_FUSED, mode == PM_MODE_PRESERVE,
                                &m->plan, err);
    pm_shard shard;
    if (st == PM_OK)
        st = pm_shard_compute(&m->s, &shard, err);
    if (st == PM_OK)
        st = pm_footprint_max_context(&m->s, &shard,
                                      m->s.model.experts > 0 ? &m->plan.tmpl.moe_reads : NULL,
                                      &m->max_context, err);
    if (st != PM_OK) {
        pm_free(m);
        return st;
    }
    *out = m;
    return PM_OK;
}

double pm_step_model_decode_time(const pm_step_model *m, int64_t context_len)
{
    double t = NAN;
    if (!m || context_len < 0 ||
        pm_step_plan_eval(&m->plan, m->mode == PM_MODE_PRESERVE, context_len, &t, NULL) != PM_OK)
        return NAN;
    return t;
}

int64_t pm_step_model_max_context(const pm_step_model *m)
{
    return m ? m->max_context : -1;
}

void pm_step_model_free(pm_step_model *m)
{
    pm_free(m);
}
