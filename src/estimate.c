/*
 * estimate.c - end-to-end time of a request in the three modes (DESIGN.md section 8).
 *
 * One step is scheduled on a graph of at most three decoder layers: the first layer has no
 * allreduce before it, and from the second on every layer repeats exactly (at the start of each
 * O projection the prefetch stream is idle), so the time of an L-layer step is the three-layer
 * makespan plus (L - 3) periods measured between the O projections of layers 1 and 2. The cost
 * of a step therefore does not grow with the number of layers.
 *
 * A request is the prefill plus one decode step per generated token, the context growing from
 * the prompt length to seq_len - 1. Within a range of contexts where the insertion decisions do
 * not change, the step time is a convex piecewise-linear function of the context (sums and
 * maxima of linear terms), so its sum over the integers is found exactly by splitting at the
 * intersections of the end slopes; ranges are split where the decisions change (found by
 * bisection, since the KV cache only grows). The number of evaluations depends on the number of
 * kinks, not on the sequence length.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const mode_names[PM_MODE_COUNT] = {"serial", "fused", "preserve"};

const char *pm_mode_name(pm_mode m)
{
    return (int)m >= 0 && m < PM_MODE_COUNT ? mode_names[m] : "?";
}

#define BUILD_LAYERS 3
#define EVAL_BUDGET 4096

typedef struct workspace {
    pm_graph base, ins;
    pm_op_cost *costs;
    pm_slot *slots;
    size_t cap;
    int evals;
} workspace;

static void ws_free(workspace *w)
{
    pm_free(w->base.nodes);
    pm_free(w->base.edges);
    pm_free(w->ins.nodes);
    pm_free(w->ins.edges);
    pm_free(w->costs);
    pm_free(w->slots);
}

static int find_o_node(const pm_graph *g, int layer)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *n = &g->nodes[i];
        if (n->layer == layer && n->stream == PM_STREAM_MAIN &&
            (n->kind == PM_NODE_MATMUL || n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE) &&
            n->name[0] == 'L' && strstr(n->name, ".O") != NULL)
            return (int)i;
    }
    return -1;
}

typedef struct step_info {
    double time_s;
    int signature;       /* prefetch nodes inserted: changes when decisions change */
    int chunks;          /* fused: chunks of the first fused node */
} step_info;

static pm_status step(const pm_scenario *s, pm_mode mode, pm_phase phase, int64_t ctx,
                      workspace *w, step_info *out, pm_error *err)
{
    w->evals++;
    const int L = s->model.layers;
    const int built = L < BUILD_LAYERS ? L : BUILD_LAYERS;
    pm_status st = pm_graph_build_ex(s, phase, ctx, built, mode == PM_MODE_FUSED, &w->base, err);
    if (st != PM_OK)
        return st;
    const pm_graph *g = &w->base;
    if (mode == PM_MODE_PRESERVE) {
        st = pm_insert_prefetch(&w->base, s->accel.l2_capacity_bytes * s->accel.l2_usable_frac,
                                &w->ins, err);
        if (st != PM_OK)
            return st;
        g = &w->ins;
    }
    if (g->n_nodes > w->cap) {
        size_t cap = g->n_nodes * 2;
        pm_op_cost *c = pm_realloc(w->costs, cap * sizeof *c);
        if (c)
            w->costs = c;
        pm_slot *sl = pm_realloc(w->slots, cap * sizeof *sl);
        if (sl)
            w->slots = sl;
        if (!c || !sl)
            return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
        w->cap = cap;
    }
    out->chunks = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if ((st = pm_op_cost_compute(s, g, i, &w->costs[i], err)) != PM_OK)
            return st;
        if (g->nodes[i].kind == PM_NODE_FUSED_MATMUL_ALLREDUCE && out->chunks == 0)
            out->chunks = w->costs[i].chunks;
    }
    pm_schedule sched;
    if ((st = pm_schedule_run(s, g, w->costs, w->slots, &sched, err)) !=
        PM_OK)
        return st;
    double t = sched.makespan_s;
    if (L > BUILD_LAYERS) {
        const int a = find_o_node(g, 1), b = find_o_node(g, 2);
        if (a < 0 || b < 0)
            return pm_fail(err, PM_ERR_INCONSISTENT, NULL, NULL, "layer markers not found");
        t += (double)(L - BUILD_LAYERS) * (w->slots[b].start_s - w->slots[a].start_s);
    }
    out->time_s = t;
    out->signature = (int)(g->n_nodes - w->base.n_nodes);
    return PM_OK;
}

pm_status pm_graph_build_mode(const pm_scenario *s, pm_mode mode, pm_phase phase,
                              int64_t context_len, int layers, pm_graph *g, pm_error *err)
{
    if (!s || !g || (int)mode < 0 || mode >= PM_MODE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_graph_build_mode");
    if (mode != PM_MODE_PRESERVE)
        return pm_graph_build_ex(s, phase, context_len, layers, mode == PM_MODE_FUSED, g, err);
    pm_graph base = {0};
    pm_status st = pm_graph_build_ex(s, phase, context_len, layers, false, &base, err);
    if (st == PM_OK)
        st = pm_insert_prefetch(&base, s->accel.l2_capacity_bytes * s->accel.l2_usable_frac, g,
                                err);
    pm_free(base.nodes);
    pm_free(base.edges);
    return st;
}

pm_status pm_step_time_graph(const pm_scenario *s, pm_mode mode, pm_phase phase, int64_t ctx,
                             double *time_s, int *signature, pm_error *err)
{
    workspace w = {0};
    step_info si = {0};
    pm_status st = step(s, mode, phase, ctx, &w, &si, err);
    ws_free(&w);
    if (st == PM_OK) {
        *time_s = si.time_s;
        if (signature)
            *signature = si.signature;
    }
    return st;
}

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
} summer;

static double eval_t(summer *sm, int64_t c)
{
    for (int i = 0; i < MEMO; i++)
        if (sm->memo_c[i] == c)
            return sm->memo_t[i];
    double t = 0.0;
    if (sm->st == PM_OK)
        sm->st = pm_step_plan_eval(sm->plan, sm->preserve, c, &t, NULL);
    sm->evals++;
    sm->memo_c[sm->memo_next] = c;
    sm->memo_t[sm->memo_next] = t;
    sm->memo_next = (sm->memo_next + 1) % MEMO;
    return t;
}

static unsigned sig_at(const summer *sm, int64_t c)
{
    return sm->preserve ? pm_step_plan_signature(sm->plan, c) : 0u;
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

static double sum_range(summer *sm, int64_t a, int64_t b, int depth)
{
    if (sm->st != PM_OK || a > b)
        return 0.0;
    const unsigned sa = sig_at(sm, a), sb = sig_at(sm, b);
    if (sa == sb || depth > 40)
        return sum_linear_region(sm, a, b, 0);
    int64_t lo = a, hi = b; /* sig(lo) == sa, sig(hi) != sa */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (sig_at(sm, mid) == sa)
            lo = mid;
        else
            hi = mid;
    }
    return sum_linear_region(sm, a, lo, 0) + sum_range(sm, hi, b, depth + 1);
}

pm_status pm_decode_step_time(const pm_scenario *s, pm_mode mode, int64_t context_len,
                              double *time_s, pm_error *err)
{
    if (!s || !time_s || (int)mode < 0 || mode >= PM_MODE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_decode_step_time");
    pm_status st = pm_scenario_check(s, err);
    if (st != PM_OK)
        return st;
    pm_step_plan plan;
    st = pm_step_plan_build(s, PM_PHASE_DECODE, context_len, mode == PM_MODE_FUSED,
                            mode == PM_MODE_PRESERVE, &plan, err);
    if (st != PM_OK)
        return st;
    st = pm_step_plan_eval(&plan, mode == PM_MODE_PRESERVE, context_len, time_s, NULL);
    if (st == PM_OK && !(*time_s > 0 && *time_s < INFINITY))
        st = PM_ERR_RANGE;
    if (st == PM_ERR_RANGE)
        return pm_fail(err, st, NULL, NULL, "the step time is not finite and positive: a "
                                           "bandwidth, peak, latency or size is too small or "
                                           "too large for double precision");
    if (st != PM_OK)
        return pm_fail(err, st, NULL, NULL, "the schedule of a step is inconsistent");
    return PM_OK;
}

pm_status pm_estimate_compute(const pm_scenario *s, pm_estimate *out, pm_error *err)
{
    if (!s || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL scenario or output");
    memset(out, 0, sizeof *out);
    pm_status st = pm_scenario_check(s, err);
    if (st != PM_OK)
        return st;
    if ((st = pm_shard_compute(s, &out->shard, err)) != PM_OK)
        return st;
    const pm_workload *wl = &s->workload;
    const int64_t sp = (int64_t)llround((double)wl->seq_len * wl->prefill_frac);
    const int64_t last = wl->seq_len - 1;
    out->prefill_tokens = sp;
    out->decode_steps = wl->seq_len - sp;
    /* Plans: decode and prefill, unfused (serial and PRESERVE) and fused. */
    pm_step_plan *plans = pm_malloc(4 * sizeof *plans);
    if (!plans)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    pm_step_plan *dec = &plans[0], *dec_f = &plans[1], *pre = &plans[2], *pre_f = &plans[3];
    if ((st = pm_step_plan_build(s, PM_PHASE_DECODE, sp, false, true, dec, err)) != PM_OK ||
        (st = pm_step_plan_build(s, PM_PHASE_PREFILL, sp, false, true, pre, err)) != PM_OK) {
        pm_free(plans);
        return st;
    }
    pm_step_plan_fuse(dec, dec_f);
    pm_step_plan_fuse(pre, pre_f);
    const double msg = (double)wl->batch * s->model.hidden * pm_dtype_bytes(pm_allreduce_dtype(wl));
    for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++) {
        pm_mode_result *r = &out->modes[m];
        const bool fused = m == PM_MODE_FUSED, preserve = m == PM_MODE_PRESERVE;
        /* Without HBM sharing and with waiting consumers a step is sums and maxima of linear
         * functions of the context: convex. The fluid sharing model multiplies terms, and a
         * streaming consumer's end takes a minimum; there the midpoint is checked. */
        const bool convex = !s->options.hbm_sharing &&
                            s->accel.prefetch_consumer == PM_CONSUMER_WAIT;
        summer sm = {fused ? dec_f : dec, preserve, convex, PM_OK, 0, {0}, {0},
                     0};
        for (int i = 0; i < MEMO; i++)
            sm.memo_c[i] = -1;
        if ((st = pm_step_plan_eval(fused ? pre_f : pre, preserve, sp, &r->prefill_s, NULL)) !=
            PM_OK)
            break;
        r->tpot_s = eval_t(&sm, last);
        r->fused_chunks = fused ? dec_f->chunks : 0;
        r->decode_s = sum_range(&sm, sp, last, 0);
        if ((st = sm.st) != PM_OK)
            break;
        r->request_s = r->prefill_s + r->decode_s;
        r->tpot_mean_s = r->decode_s / (double)out->decode_steps;
        r->tokens_per_s = (double)wl->batch * (double)out->decode_steps / r->request_s;
        r->allreduce_decode_s = pm_ar_model_time(&dec->ar, msg, &r->allreduce);
    }
    pm_free(plans);
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
    const pm_mode_result *M = out->modes;
    out->speedup_preserve_vs_serial = M[PM_MODE_SERIAL].request_s / M[PM_MODE_PRESERVE].request_s;
    out->speedup_preserve_vs_fused = M[PM_MODE_FUSED].request_s / M[PM_MODE_PRESERVE].request_s;
    out->speedup_fused_vs_serial = M[PM_MODE_SERIAL].request_s / M[PM_MODE_FUSED].request_s;

    /* Footprint and where the KV cache stops fitting the attention window. */
    const pm_model *md = &s->model;
    const pm_shard *sh = &out->shard;
    const double ew = pm_dtype_bytes(wl->weight_dtype), ekv = pm_dtype_bytes(wl->kv_dtype);
    const double d = md->head_dim, h = md->hidden;
    const double w_qkv = h * (sh->q_heads + 2.0 * sh->kv_heads) * d * ew;
    const double w_layer = w_qkv + sh->q_heads * d * h * ew +
                           (md->gated_mlp ? 3.0 : 2.0) * h * sh->mlp_cols * ew;
    out->weight_bytes_per_device = md->layers * w_layer + sh->vocab_cols * h * ew +
                                   (md->tied_embeddings ? 0.0 : (double)md->vocab * h * ew);
    const double kv_per_token = 2.0 * wl->batch * sh->kv_heads * d * ekv;
    out->kv_bytes_per_device = md->layers * kv_per_token * (double)wl->seq_len;
    out->fits_hbm = out->weight_bytes_per_device + out->kv_bytes_per_device <=
                    s->accel.hbm_capacity_bytes;
    const double cap = s->accel.l2_capacity_bytes * s->accel.l2_usable_frac;
    out->l2_window_bytes = cap;
    if (s->cluster.devices <= 1 || !(w_qkv < cap))
        out->kv_spill_context = 0;
    else
        out->kv_spill_context = (int64_t)ceil((cap - w_qkv) / kv_per_token);
    return PM_OK;
}

struct pm_step_model {
    pm_scenario s;
    pm_mode mode;
    pm_step_plan plan;
};

pm_status pm_step_model_new(const pm_scenario *s, pm_mode mode, pm_step_model **out,
                            pm_error *err)
{
    if (!s || !out || (int)mode < 0 || mode >= PM_MODE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_step_model_new");
    *out = NULL;
    pm_status st = pm_scenario_check(s, err);
    if (st != PM_OK)
        return st;
    pm_step_model *m = pm_malloc(sizeof *m);
    if (!m)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    m->s = *s;
    m->s.provenance = NULL; /* not needed to evaluate, and owned by the caller */
    m->mode = mode;
    /* The plan points at the model's own copy of the scenario. */
    st = pm_step_plan_build(&m->s, PM_PHASE_DECODE, 0, mode == PM_MODE_FUSED,
                            mode == PM_MODE_PRESERVE, &m->plan, err);
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

void pm_step_model_free(pm_step_model *m)
{
    pm_free(m);
}
