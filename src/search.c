/*
 * search.c - the search under latency limits (pm_search_run): over a space of deployments
 * (tensor-parallel degree, pipeline stages, expert-parallel ranks, data-parallel replicas that fill
 * a device budget), chunk budgets, hardware points (one or two sweep axes) and concurrencies, each
 * candidate's served steady state (pm_serve_compute, every mode at once), kept when it meets the
 * TTFT, TPOT and per-user limits; the best candidate per mode by an objective (tokens/s per device,
 * per mm2, per dollar or per joule), what binds it, and the Pareto front of the objective against
 * tokens/s per user. A "group" is one deployment at one chunk budget and hardware point; its
 * concurrencies are scanned upwards and, unless the search is exhaustive, cut where no larger
 * concurrency can meet the limits (the pruning rules: pm_search_run's comment). Groups run on
 * worker threads and are merged in their order, so the answer does not depend on the thread count.
 * A shard evaluates one slice of the groups (pm_sweep_slice's); pm_search_merge adds the shards'
 * results in order into the whole search's: the best per mode is the first in the space's order
 * among equals, and the fronts are a function of the set of candidates (ties broken by the space's
 * order, so that the front keeps the best), so merging is exact.
 * With spec->disagg, disaggregated deployments join the space after the co-located groups: each
 * split of the budget into a prefill pool and a decode pool (instances x TP each) at each EP and
 * hardware point is one group, its concurrencies (per decode instance) served by disagg.c's
 * pm_disagg_compute with the instance counts fixed, classified, pruned and settled as a
 * co-located group's are; search.c only maps the space onto the pools' scenarios and the
 * pools' figures onto a candidate's.
 *
 * pm_search_warning says where the answer's chip cannot be built: a hardware axis whose values
 * grow the die past the reticle, and a mode's best at such a point (the search is over the
 * modelled objective, buildable or not, as the sweep's and the optimum's are); and, per mm2 or
 * per dollar, where a mode's best took bandwidth that moves no area or price as free.
 *
 * May call: alloc.c, check.c, disagg.c, error.c, estimate.c, plan.c, serve.c, sweep.c,
 * sweep_run.c.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* One group's outcome per mode: its best candidate, what stops it, its own front. */
typedef struct group_mode {
    bool found;
    pm_search_candidate best;     /* the best where it is not front[0] */
    const pm_search_candidate *best_at; /* the best: &best or front (the same candidate) */
    pm_search_bound binds;
    pm_search_candidate *front;
    size_t n_front;
} group_mode;

typedef struct group {
    group_mode modes[PM_MODE_COUNT];
    size_t evaluated, pruned, outside;
    bool invalid;        /* the deployment cannot run (the scenario check's error) */
    pm_status status;    /* a failure of the search itself (out of memory) */
    char error[240];
} group;

/* A split of the budget into pools: prefill np x TP ptp, decode nd x TP dtp devices. */
typedef struct split {
    int ptp, np, dtp, nd;
} split;

typedef struct search {
    const pm_scenario *base;
    const pm_search_spec *spec;
    size_t n_colo;        /* the co-located groups; the disaggregated ones follow */
    split *splits;        /* spec->disagg: the budget's splits, in the space's order */
    size_t n_splits;
    pm_disagg_workload dw; /* the disaggregated workload but its counts and concurrency */
    int tp[PM_SEARCH_MAX_VALUES], pp[PM_SEARCH_MAX_VALUES], ep[PM_SEARCH_MAX_VALUES];
    int n_tp, n_pp, n_ep;
    double conc[PM_SEARCH_MAX_VALUES]; /* ascending */
    size_t n_groups, hw_points, next, done;
    size_t first, last; /* the slice of the groups evaluated (a shard's) */
    group *groups;      /* groups first .. last - 1 */
    struct front_block *blocks; /* the groups' fronts (front_room), freed with the groups */
    pthread_mutex_t mu;
    bool threaded; /* workers run on threads: mu taken (one worker alone takes no lock) */
    bool l2_first; /* the L2 capacity (the first of two hardware axes) walked fastest */
} search;

/* Room for the groups' fronts, taken in order out of blocks (no allocation per group). */
typedef struct front_block {
    struct front_block *next;
    size_t used, cap;
    pm_search_candidate c[];
} front_block;
#define FRONT_BLOCK 256 /* candidates a block holds (about 60 KiB) */

static const char *const bound_names[PM_BOUND_COUNT] = {
    "none", "ttft", "tpot", "tokens_per_user", "hbm", "chunk_budget", "objective_peak",
    "space_edge"};
static const char *const objective_names[PM_SEARCH_OBJECTIVE_COUNT] = {"device", "mm2", "usd",
                                                                        "joule"};

const char *pm_search_bound_name(pm_search_bound b)
{
    return (int)b >= 0 && b < PM_BOUND_COUNT ? bound_names[b] : "?";
}

const char *pm_search_objective_name(pm_search_objective o)
{
    return (int)o >= 0 && o < PM_SEARCH_OBJECTIVE_COUNT ? objective_names[o] : "?";
}

/* The objective's value of a mode's figures (NaN where the accelerator lacks its data). */
static double objective_of(pm_search_objective o, const pm_serve_mode *x)
{
    double v = x->tokens_per_s_per_device;
    if (o == PM_SEARCH_PER_MM2)
        v = x->tokens_per_s_per_mm2;
    else if (o == PM_SEARCH_PER_USD)
        v = x->tokens_per_s_per_usd;
    else if (o == PM_SEARCH_PER_JOULE)
        v = x->tokens_per_J;
    return v > 0.0 ? v : NAN;
}

/* The first limit a mode's steady state x misses, in the order the HBM (fits: the cache fits),
 * TPOT, the per-user floor, TTFT; PM_BOUND_NONE when it meets them all. */
static pm_search_bound misses(const pm_search_spec *sp, bool fits, const pm_serve_mode *x)
{
    if (!fits)
        return PM_BOUND_HBM;
    if (sp->tpot_limit_s > 0.0 && !(x->tpot_s <= sp->tpot_limit_s))
        return PM_BOUND_TPOT;
    if (sp->min_tokens_per_s_per_user > 0.0 &&
        !(x->tokens_per_s_per_user >= sp->min_tokens_per_s_per_user))
        return PM_BOUND_USER_RATE;
    if (sp->ttft_limit_s > 0.0 && !(x->ttft_s <= sp->ttft_limit_s))
        return PM_BOUND_TTFT;
    return PM_BOUND_NONE;
}

/* Group g's coordinates: the deployment, chunk and hardware point, last dimension fastest
 * (tp, pp, ep, chunk, hw0, hw1). A replica is tp x pp devices. A disaggregated group's: its
 * split, ep and hardware point. */
static void group_coords(const search *se, size_t g, pm_search_candidate *c)
{
    const pm_search_spec *sp = se->spec;
    memset(c, 0, sizeof *c);
    c->group = g;
    size_t rest = g < se->n_colo ? g : g - se->n_colo;
    for (int a = sp->n_hw - 1; a >= 0; a--) {
        c->hw[a] = sp->hw[a].values[rest % sp->hw[a].n_values];
        rest /= sp->hw[a].n_values;
    }
    if (g >= se->n_colo) {
        c->ep = se->ep[rest % (size_t)se->n_ep];
        const split *x = &se->splits[rest / (size_t)se->n_ep];
        c->prefill_tp = x->ptp;
        c->prefill_instances = x->np;
        c->decode_tp = x->dtp;
        c->decode_instances = x->nd;
        c->pp = c->dp = 1;
        return;
    }
    c->chunk = sp->chunk[rest % (size_t)sp->n_chunk];
    rest /= (size_t)sp->n_chunk;
    c->ep = se->ep[rest % (size_t)se->n_ep];
    rest /= (size_t)se->n_ep;
    c->pp = se->pp[rest % (size_t)se->n_pp];
    c->tp = se->tp[rest / (size_t)se->n_pp];
    c->dp = sp->device_budget > 0 ? sp->device_budget / (c->tp * c->pp) : 1;
}

/* Whether the deployment's replicas can be placed (plan.c's pm_pipeline_plan over all dp of
 * them: stages that cross nodes need the inter-node link, the nodes the cluster has); t is one
 * replica's scenario. PM_OK or the plan's refusal. */
static pm_status group_placement(const pm_scenario *t, int dp, pm_error *err)
{
    pm_scenario all = *t;
    all.cluster.data_parallel = dp;
    if (all.workload.batch < all.cluster.micro_batches) /* serve's: a micro-batch a sequence */
        all.workload.batch = all.cluster.micro_batches;
    pm_pipeline pl;
    return pm_pipeline_plan(&all, &pl, err);
}

/* The scenario of one replica (or pool instance) of tp x pp devices with ep ranks (0: the
 * scenario's), at the base's hardware; PM_OK or the setter's error. */
static pm_status deployment_scenario(const search *se, int tp, int pp, int ep_rank,
                                     pm_scenario *t, pm_error *err)
{
    *t = *se->base;
    t->provenance = NULL;
    pm_status st = pm_scenario_set_axis(t, PM_AXIS_DEVICES, tp, err);
    if (st == PM_OK && pp > 1)
        st = pm_scenario_set_axis(t, PM_AXIS_PP, pp, err);
    /* Data-parallel attention makes every device an EP rank: without a list, EP follows TP. */
    const int ep = ep_rank > 0 ? ep_rank : t->cluster.attention_data_parallel ? tp : 0;
    if (st == PM_OK && ep > 0)
        st = pm_scenario_set_axis(t, PM_AXIS_EP, ep, err);
    return st;
}

/* A deployment's scenario t moved to candidate c's hardware point: the hardware axes' fields
 * taken again from the base (the deployment's axes set none of them; the compute axis scales
 * the peaks it finds), then set; PM_OK or the setter's error. */
static pm_status hardware_point(const search *se, const pm_search_candidate *c, pm_scenario *t,
                                pm_error *err)
{
    const pm_search_spec *sp = se->spec;
    pm_status st = PM_OK;
    for (int a = 0; a < sp->n_hw && st == PM_OK; a++) {
        pm_scenario_axis_copy(t, se->base, sp->hw[a].kind);
        st = pm_scenario_set_axis(t, sp->hw[a].kind, c->hw[a], err);
    }
    return st;
}

/* The scenario of one replica (or pool instance) of tp x pp devices with ep ranks (0: the
 * scenario's) at candidate c's hardware point; PM_OK or the setter's error. */
static pm_status replica_scenario(const search *se, int tp, int pp, int ep_rank,
                                  const pm_search_candidate *c, pm_scenario *t, pm_error *err)
{
    const pm_status st = deployment_scenario(se, tp, pp, ep_rank, t, err);
    return st == PM_OK ? hardware_point(se, c, t, err) : st;
}

/* Whether candidate c's replicas divide the device budget; PM_OK or PM_ERR_RANGE. */
static pm_status budget_divided(const search *se, const pm_search_candidate *c, pm_error *err)
{
    const pm_search_spec *sp = se->spec;
    if (sp->device_budget > 0 && sp->device_budget % (c->tp * c->pp) != 0)
        return c->pp == 1
                   ? pm_fail(err, PM_ERR_RANGE, "$.cluster.devices", NULL,
                             "tensor-parallel degree %d does not divide the budget of %d "
                             "devices",
                             c->tp, sp->device_budget)
                   : pm_fail(err, PM_ERR_RANGE, "$.cluster.pipeline_parallel", NULL,
                             "a replica of TP %d x PP %d = %d devices does not divide the "
                             "budget of %d devices",
                             c->tp, c->pp, c->tp * c->pp, sp->device_budget);
    return PM_OK;
}

/* -1, 1 or 0 as x is before, after or level with y when ordered by falling value. */
static int falling(double x, double y)
{
    return x > y ? -1 : x < y ? 1 : 0;
}

/* Sorts by falling per-user rate (ties: falling objective, then the space's order, so that the
 * order is total and the front a function of the set of candidates whatever order they come
 * in, keeping the first of equals as the best does), then keeps the points no other beats on
 * both: the Pareto front, returned in rising per-user rate. Returns the count. */
static int by_user_desc(const void *a, const void *b)
{
    const pm_search_candidate *x = a, *y = b;
    int c = falling(x->figures.tokens_per_s_per_user, y->figures.tokens_per_s_per_user);
    if (c == 0)
        c = falling(x->objective, y->objective);
    if (c == 0 && x->group != y->group)
        c = x->group < y->group ? -1 : 1;
    return c != 0 ? c : -falling(x->concurrency, y->concurrency);
}

/* Whether a is a better best than b: more objective, or as much and more tokens/s per user
 * (so that the best is on the front, which keeps the faster of equal objectives: pools limited
 * by their prefill instances tie on the objective at every decode concurrency); the earlier in
 * the space's order otherwise. */
static bool better(const pm_search_candidate *a, const pm_search_candidate *b)
{
    int c = falling(a->objective, b->objective);
    if (c == 0)
        c = falling(a->figures.tokens_per_s_per_user, b->figures.tokens_per_s_per_user);
    return c < 0;
}

/* Whether c[0..n) has a NaN in a key of by_user_desc, which then orders no pair with it. */
static bool unordered(const pm_search_candidate *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(c[i].figures.tokens_per_s_per_user) || isnan(c[i].objective))
            return true;
    return false;
}

/* The front's filter over c[0..n) in by_user_desc's order: the points whose objective beats
 * every one before them, kept in place and reversed into rising per-user rate; their count. */
static size_t keep_front(pm_search_candidate *c, size_t n)
{
    size_t k = 0;
    double best = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (c[i].objective > best) {
            best = c[i].objective;
            if (k != i)
                c[k] = c[i];
            k++;
        }
    for (size_t i = 0; i < k / 2; i++) {
        pm_search_candidate t = c[i];
        c[i] = c[k - 1 - i];
        c[k - 1 - i] = t;
    }
    return k;
}

/* (internal.h) Sorted by insertion: a group's candidates come by rising concurrency, mostly
 * already in the order (per-user rate falls with concurrency), and by_user_desc is a total
 * order on them (equal keys only for the same candidate twice), so the order is qsort's.
 * With a NaN key the order is not total: qsort's then, as ever. */
size_t pm_search_pareto(pm_search_candidate *c, size_t n)
{
    if (n == 1) /* keep_front's filter of one: kept unless its objective is NaN or -inf */
        return c[0].objective > -INFINITY ? 1 : 0;
    if (unordered(c, n)) {
        qsort(c, n, sizeof *c, by_user_desc);
        return keep_front(c, n);
    }
    for (size_t i = 1; i < n; i++) {
        if (by_user_desc(&c[i - 1], &c[i]) <= 0)
            continue;
        const pm_search_candidate x = c[i];
        size_t j = i;
        for (; j > 0 && by_user_desc(&c[j - 1], &x) > 0; j--)
            c[j] = c[j - 1];
        c[j] = x;
    }
    return keep_front(c, n);
}

/* Whether front f[0..n) is in rising per-user rate as keep_front leaves it (by_user_desc's
 * order reversed), with no NaN key. */
static bool front_sorted(const pm_search_candidate *f, size_t n)
{
    if (n == 1) /* a group's front at one concurrency: in order unless a key is NaN */
        return !isnan(f[0].figures.tokens_per_s_per_user) && !isnan(f[0].objective);
    for (size_t i = 0; i + 1 < n; i++)
        if (!(by_user_desc(&f[i + 1], &f[i]) < 0))
            return false;
    return !unordered(f, n);
}

/* Whether front f[0..n) is in order (front_sorted) and filtered as keep_front and merge_fronts
 * leave a front: each objective beats every one after it, and the last beats -inf. */
static bool front_proper(const pm_search_candidate *f, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (!(f[i].objective > f[i + 1].objective))
            return false;
    return front_sorted(f, n) && (n == 0 || f[n - 1].objective > -INFINITY);
}

/* The first i in [0, n] whose a[i] comes before x in by_user_desc's order (a in rising per-user
 * rate: every one from there on does). */
static size_t first_before(const pm_search_candidate *a, size_t n, const pm_search_candidate *x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (by_user_desc(&a[mid], x) < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Whether best beats the objective of every point of b[0..nb) (no NaN: front_sorted). */
static bool beaten(const pm_search_candidate *b, size_t nb, double best)
{
    for (size_t i = 0; i < nb; i++)
        if (b[i].objective > best)
            return false;
    return true;
}

/* The front of a[0..na) and b[0..nb), two fronts in rising per-user rate (front_sorted), into
 * a (room for na + nb): merged from their ends in by_user_desc's order, filtered as keep_front
 * filters (a point a front dropped is dropped from the union: the point that beat it still
 * comes before it), written from a's end down, then moved to its start. Returns the count.
 * Where a is proper (front_proper), what the filter does to a's points above and below b's
 * is known without visiting them: those before b's first (a[hi..na)) are all kept, and those
 * after b's last (a[0..lo)) lose a run from their top (the ones the objective so far beats)
 * and keep the rest, in place; only a[lo..hi) and b are merged point by point. */
static size_t merge_fronts(pm_search_candidate *a, size_t na, const pm_search_candidate *b,
                           size_t nb, bool proper)
{
    size_t hi = na, lo = 0;
    double best = -INFINITY;
    if (proper && nb > 0) {
        hi = first_before(a, na, &b[nb - 1]);
        lo = first_before(a, hi, &b[0]);
        if (hi < na) {
            best = a[hi].objective;
            if (beaten(b, nb, best))
                return na; /* every point of b dropped, a's kept as they are */
            memmove(a + hi + nb, a + hi, (na - hi) * sizeof *a); /* written, as the loop would */
        }
    }
    size_t ia = hi, ib = nb, w = hi + nb; /* a[w..na + nb) written */
    while (ia > lo || ib > 0) {
        const bool from_a = ib == 0 || (ia > lo && by_user_desc(&a[ia - 1], &b[ib - 1]) < 0);
        const pm_search_candidate *x = from_a ? &a[--ia] : &b[--ib];
        if (!(x->objective > best))
            continue;
        best = x->objective;
        if (--w != ia || !from_a) /* w >= ia: the write never passes an unread point of a */
            a[w] = *x;
    }
    size_t keep = lo; /* a[0..lo), proper: its objectives rise downwards */
    while (keep > 0 && !(a[keep - 1].objective > best))
        keep--;
    const size_t k = keep + na + nb - w;
    if (w > keep)
        memmove(a + keep, a + w, (na + nb - w) * sizeof *a);
    return k;
}

/* What stops a group's best at mode m: the next concurrency's miss, the objective's own peak
 * when the next one meets the limits, or the space's edge when it is the last. */
static pm_search_bound binding(const pm_search_bound *miss, int n, int best)
{
    if (best + 1 >= n)
        return PM_BOUND_SPACE;
    return miss[best + 1] == PM_BOUND_NONE ? PM_BOUND_PEAK : miss[best + 1];
}

/* The bound that ends a group's scan after a point (the pruning): the HBM once the cache no
 * longer fits (it grows with the sequences in flight); NONE to go on. A missed TPOT limit or
 * per-user floor does not end it: TPOT can fall as the concurrency rises (a GEMM's last wave
 * of tiles filled, a step whose budget the decode tokens take: Llama-3-70B on 8 H100s
 * speculating 2 tokens misses 25 ms at 128 sequences and meets it at 256), so a cut there
 * lost the best (tests/test_search.c's test_speculation_searched). */
static pm_search_bound cut_after(bool fits)
{
    return fits ? PM_BOUND_NONE : PM_BOUND_HBM;
}

/* Group g cannot run: its deployment's error kept, with the key it names (the first invalid
 * group's is reported: "$.cluster.expert_parallel: must divide devices", the scenario's EP
 * under a --tp-list it does not divide). */
static void set_invalid(group *g, const pm_error *err)
{
    g->invalid = true;
    snprintf(g->error, sizeof g->error, "%s%s%s", err->path, err->path[0] ? ": " : "",
             err->message);
    if (err->status == PM_ERR_NOMEM)
        g->status = PM_ERR_NOMEM;
}

/* Concurrency i's candidates in every mode from its steady state's modes x (fits: the cache
 * fits); their misses in miss. */
static void classify(const pm_search_spec *sp, const pm_search_candidate *at, bool fits,
                     const pm_serve_mode *x, pm_search_candidate *cand, pm_search_bound *miss)
{
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        cand[m] = *at;
        cand[m].mode = (pm_mode)m;
        cand[m].figures = x[m];
        cand[m].objective = objective_of(sp->objective, &x[m]);
        cand[m].fails = miss[m] = misses(sp, fits, &x[m]);
    }
}

/* se's lock, taken only where workers run on threads (a lone worker shares nothing). */
static void lock(search *se)
{
    if (se->threaded)
        pthread_mutex_lock(&se->mu);
}

static void unlock(search *se)
{
    if (se->threaded)
        pthread_mutex_unlock(&se->mu);
}

/* Room for n candidates out of the worker's block *cur (a new block, linked into se's list
 * under its lock, when it has no room); NULL without memory. The last room taken may be given
 * back in part (settle_group). */
static pm_search_candidate *front_room(search *se, front_block **cur, size_t n)
{
    front_block *b = *cur;
    if (!b || b->cap - b->used < n) {
        const size_t cap = n > FRONT_BLOCK ? n : FRONT_BLOCK;
        if (!(b = pm_malloc(sizeof *b + cap * sizeof b->c[0])))
            return NULL;
        b->used = 0;
        b->cap = cap;
        lock(se);
        b->next = se->blocks;
        se->blocks = b;
        unlock(se);
        *cur = b;
    }
    b->used += n;
    return b->c + b->used - n;
}

/* Group g's best, binding limit and Pareto front per mode from its candidates (cand[i][m]),
 * miss[i][m] the limit each missed; the fronts in the worker's block *cur. */
static pm_status settle_group(search *se, front_block **cur, group *g, int n,
                              pm_search_candidate (*cand)[PM_MODE_COUNT],
                              pm_search_bound (*miss)[PM_MODE_COUNT])
{
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        group_mode *gm = &g->modes[m];
        pm_search_bound col[PM_SEARCH_MAX_VALUES];
        int best = -1, meet = 0;
        for (int i = 0; i < n; i++) {
            col[i] = miss[i][m];
            if (col[i] != PM_BOUND_NONE || isnan(cand[i][m].objective))
                continue;
            meet++;
            if (best < 0 || better(&cand[i][m], &cand[best][m]))
                best = i;
        }
        if (best < 0)
            continue;
        gm->found = true;
        gm->binds = binding(col, n, best);
        if (!(gm->front = front_room(se, cur, (size_t)meet)))
            return PM_ERR_NOMEM;
        for (int i = 0; i < n; i++)
            if (col[i] == PM_BOUND_NONE && !isnan(cand[i][m].objective))
                gm->front[gm->n_front++] = cand[i][m];
        gm->n_front = pm_search_pareto(gm->front, gm->n_front);
        (*cur)->used -= (size_t)meet - gm->n_front; /* the room the front did not keep */
        /* The best is on the front, first in order (the most objective), unless a NaN rate
         * left the order to qsort: kept apart then. (group, concurrency) names a candidate. */
        const pm_search_candidate *b = &cand[best][m];
        if (gm->n_front > 0 && gm->front[0].group == b->group &&
            !(fabs(gm->front[0].concurrency - b->concurrency) > 0.0))
            gm->best_at = gm->front;
        else {
            gm->best = *b;
            gm->best_at = &gm->best;
        }
    }
    return PM_OK;
}

/* A worker's state. Its compiled points (issue 46 item 3): one per concurrency of the
 * deployment and chunk budget `key` (a group's index over the hardware points), compiled at
 * the first hardware point the worker serves and costed again at the next ones (the groups of
 * a key differ only in their hardware point, the last dimension). The key's scenario, made
 * once (deployment_scenario, its status and error), moved from point to point
 * (hardware_point), and its placement (group_placement, which reads no hardware), found at
 * the key's first point that reaches it. The block its groups' fronts are taken from. */
typedef struct worker_state {
    size_t key;
    bool has_key;
    pm_serve_compiled *at; /* [n_concurrency]; NULL: served uncompiled */
    pm_scenario scn;
    pm_status scn_st, place_st;
    bool placed;
    pm_error scn_err, place_err;
    front_block *block;
} worker_state;

/* ws's state for colocated group gi (whose coordinates are c): the compiled points released,
 * the deployment's scenario made again, when gi is another deployment or chunk budget. */
static void worker_key(const search *se, worker_state *ws, size_t gi,
                       const pm_search_candidate *c)
{
    const size_t key = gi / se->hw_points;
    if (ws->has_key && ws->key == key)
        return;
    for (int n = 0; ws->at && n < se->spec->n_concurrency; n++)
        pm_serve_compiled_release(&ws->at[n]);
    ws->key = key;
    ws->has_key = true;
    ws->placed = false;
    ws->scn_st = deployment_scenario(se, c->tp, c->pp, c->ep, &ws->scn, &ws->scn_err);
}

/* The scenario of colocated group gi at candidate c's coordinates into *t (ws's, moved to
 * c's hardware point): group_scenario's rules in its order (the budget, the deployment's and
 * the hardware's axes, the placement); PM_OK or the first refusal, in err. */
static pm_status group_scenario(const search *se, worker_state *ws, size_t gi,
                                const pm_search_candidate *c, const pm_scenario **t,
                                const pm_error **err, pm_error *own)
{
    *err = own;
    pm_status st = budget_divided(se, c, own);
    if (st != PM_OK)
        return st;
    worker_key(se, ws, gi, c);
    if (ws->scn_st != PM_OK) {
        *err = &ws->scn_err;
        return ws->scn_st;
    }
    if ((st = hardware_point(se, c, &ws->scn, own)) != PM_OK)
        return st;
    if (!ws->placed) {
        ws->place_st = group_placement(&ws->scn, c->dp, &ws->place_err);
        ws->placed = true;
    }
    *err = &ws->place_err;
    *t = &ws->scn;
    return ws->place_st;
}

/* Whether a decode-first point at chunk budget `chunk` and concurrency c lies outside what is
 * served (pm_serve_compute's rules; the larger concurrencies too): a budget at or below the
 * concurrency leaves no room for a prompt; a wave's prompts beyond one step (input x c above
 * the budget) spread into groups, which is not modelled. */
static bool outside_space(const pm_serve_workload *w, int64_t chunk, double c)
{
    return w->rule == PM_SERVE_DECODE_FIRST &&
           ((double)chunk <= c || pm_serve_wave_spreads(w, chunk, c));
}

/* Evaluates group gi: its concurrencies upwards, cut where the pruning allows (not in an
 * exhaustive search). A point outside what is served (outside_space) and the larger
 * concurrencies are outside the space in either search, counted apart. cp: the worker's
 * compiled points. */
static void eval_group(search *se, size_t gi, worker_state *ws)
{
    const pm_search_spec *sp = se->spec;
    group *g = &se->groups[gi - se->first];
    pm_search_candidate at, cand[PM_SEARCH_MAX_VALUES][PM_MODE_COUNT];
    pm_search_bound miss[PM_SEARCH_MAX_VALUES][PM_MODE_COUNT];
    const pm_scenario *t = NULL;
    const pm_error *refusal;
    pm_error err;
    group_coords(se, gi, &at);
    if (group_scenario(se, ws, gi, &at, &t, &refusal, &err) != PM_OK) {
        set_invalid(g, refusal);
        return;
    }
    at.ep = pm_cluster_ep(&t->cluster);
    pm_serve_compiled *compiled = ws->at;
    pm_serve_workload w = sp->workload;
    w.chunk_budget = at.chunk;
    pm_search_bound cut = PM_BOUND_NONE;
    int n = 0;
    for (; n < sp->n_concurrency; n++) {
        at.concurrency = se->conc[n];
        if (outside_space(&sp->workload, at.chunk, at.concurrency))
            cut = PM_BOUND_BUDGET;
        if (cut != PM_BOUND_NONE) {
            for (int m = 0; m < PM_MODE_COUNT; m++)
                miss[n][m] = cut;
            g->pruned += cut != PM_BOUND_BUDGET;
            g->outside += cut == PM_BOUND_BUDGET;
            continue;
        }
        w.concurrency = at.concurrency;
        pm_serve_result r;
        if ((compiled ? pm_serve_compute_compiled(t, &w, &compiled[n], &r, &err)
                      : pm_serve_compute(t, &w, &r, &err)) != PM_OK) {
            set_invalid(g, &err);
            return;
        }
        g->evaluated++;
        classify(sp, &at, r.fits_hbm, r.modes, cand[n], miss[n]);
        if (!sp->exhaustive)
            cut = cut_after(r.fits_hbm);
    }
    g->status = settle_group(se, &ws->block, g, n, cand, miss);
}

/* A disaggregated mode's figures as a candidate's: the whole deployment's (dp 1). Every gap
 * between two tokens is a decode step, so the longest is TPOT; in flight: the decode pool's
 * sequences. */
static pm_serve_mode disagg_figures(const pm_disagg_mode *d)
{
    return (pm_serve_mode){
        .ttft_s = d->ttft_s, .tpot_s = d->tpot_s, .tpot_max_s = d->tpot_s, .e2e_s = d->e2e_s,
        .decode_step_s = d->decode_step_s, .requests_per_s = d->requests_per_s,
        .tokens_per_s = d->tokens_per_s, .tokens_per_s_per_device = d->tokens_per_s_per_device,
        .tokens_per_s_per_user = d->tokens_per_s_per_user,
        .goodput_tokens_per_s_per_device = d->goodput_tokens_per_s_per_device,
        .meets_limits = d->meets_limits, .tokens_per_s_per_mm2 = d->tokens_per_s_per_mm2,
        .tokens_per_s_per_usd = d->tokens_per_s_per_usd,
        .energy_per_token_J = d->energy_per_token_J, .tokens_per_J = d->tokens_per_J,
        .in_flight = d->decode_in_flight * d->decode_instances, .saturated = d->saturated};
}

/* pm_disagg_compute's refusals that say a pool's HBM does not hold the weights and its
 * sequences (documented paths): at this concurrency and every larger one, the HBM binds. */
static bool hbm_refusal(const pm_error *err)
{
    static const char *const paths[] = {"decode_concurrency",
                                        "prefill.accelerator.hbm_capacity_GiB",
                                        "decode.accelerator.hbm_capacity_GiB"};
    for (size_t i = 0; err->status == PM_ERR_INCONSISTENT && i < PM_ARRAY_LEN(paths); i++)
        if (strcmp(err->path, paths[i]) == 0)
            return true;
    return false;
}

/* Evaluates disaggregated group gi: its pools' scenarios, then its decode concurrencies upwards
 * with pm_disagg_compute, cut as eval_group cuts. */
static void eval_disagg_group(search *se, size_t gi, worker_state *ws)
{
    const pm_search_spec *sp = se->spec;
    group *g = &se->groups[gi - se->first];
    pm_search_candidate at, cand[PM_SEARCH_MAX_VALUES][PM_MODE_COUNT];
    pm_search_bound miss[PM_SEARCH_MAX_VALUES][PM_MODE_COUNT];
    pm_scenario pool[2];
    pm_error err;
    group_coords(se, gi, &at);
    if (replica_scenario(se, at.prefill_tp, 1, at.ep, &at, &pool[0], &err) != PM_OK ||
        replica_scenario(se, at.decode_tp, 1, at.ep, &at, &pool[1], &err) != PM_OK) {
        set_invalid(g, &err);
        return;
    }
    at.ep = pm_cluster_ep(&pool[1].cluster);
    pm_disagg_workload w = se->dw;
    w.prefill_instances = at.prefill_instances;
    w.decode_instances = at.decode_instances;
    pm_search_bound cut = PM_BOUND_NONE;
    int n = 0;
    for (; n < sp->n_concurrency; n++) {
        at.concurrency = se->conc[n];
        if (cut != PM_BOUND_NONE) {
            for (int m = 0; m < PM_MODE_COUNT; m++)
                miss[n][m] = cut;
            g->pruned++;
            continue;
        }
        w.decode_concurrency = at.concurrency;
        pm_disagg_result r;
        pm_serve_mode x[PM_MODE_COUNT] = {{0}};
        const pm_status st = pm_disagg_compute(&pool[0], &pool[1], &w, &r, &err);
        if (st != PM_OK && !hbm_refusal(&err)) {
            set_invalid(g, &err);
            return;
        }
        for (int m = 0; st == PM_OK && m < PM_MODE_COUNT; m++)
            x[m] = disagg_figures(&r.modes[m]);
        g->evaluated++;
        classify(sp, &at, st == PM_OK, x, cand[n], miss[n]);
        if (!sp->exhaustive)
            cut = cut_after(st == PM_OK);
    }
    g->status = settle_group(se, &ws->block, g, n, cand, miss);
}

/* The group the w-th step of the walk over groups first .. last - 1 evaluates: the groups'
 * order, but where the L2 capacity is the first of two hardware axes, a deployment's hardware
 * points whole inside the slice are walked with the capacity fastest. A compiled point serves
 * the capacities above its last one from its steps' memo (serve.c), and only where nothing
 * but the capacity moved since: walked the other way, every point moves the second axis and
 * is costed whole. The answer is the same in either order (each group's is its own, merged
 * in the groups' order). */
static size_t walk_group(const search *se, size_t w)
{
    const size_t hw = se->hw_points, k0 = w - w % hw;
    if (!se->l2_first || w >= se->n_colo || k0 < se->first || k0 + hw > se->last)
        return w;
    const size_t n0 = se->spec->hw[0].n_values, n1 = se->spec->hw[1].n_values;
    const size_t o = w - k0;
    return k0 + (o % n0) * n1 + o / n0;
}

static void *worker(void *arg)
{
    search *se = arg;
    const int nc = se->spec->n_concurrency;
    /* Without memory for them, every point is served from its scenario (the same answer). */
    worker_state state = {.at = pm_calloc((size_t)nc, sizeof *state.at)}, *ws = &state;
    for (;;) {
        lock(se);
        const size_t w = se->next++;
        unlock(se);
        if (w >= se->last)
            break;
        const size_t gi = walk_group(se, w);
        if (gi < se->n_colo)
            eval_group(se, gi, ws);
        else
            eval_disagg_group(se, gi, ws);
        lock(se);
        se->done++;
        if (se->spec->progress)
            se->spec->progress(se->done, se->last - se->first, se->spec->progress_user);
        unlock(se);
    }
    for (int n = 0; ws->at && n < nc; n++)
        pm_serve_compiled_release(&ws->at[n]);
    pm_free(ws->at);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A list of counts: 1 .. PM_SEARCH_MAX_VALUES values, each in [lo, hi]. */
static bool counts_ok(const int *v, int n, int lo, int hi)
{
    if (n < 1 || n > PM_SEARCH_MAX_VALUES)
        return false;
    for (int i = 0; i < n; i++)
        if (v[i] < lo || v[i] > hi)
            return false;
    return true;
}

/* The first of the space's lists that gives a value twice ("tp", ...), or NULL: a point
 * counted twice (--tp-list 3,3: two deployments "could not run"; a concurrency twice: the
 * space and its counts larger than asked). */
static const char *repeated_list(const pm_search_spec *sp)
{
    for (int i = 0; i < PM_SEARCH_MAX_VALUES; i++)
        for (int j = 0; j < i; j++) {
            if (i < sp->n_tp && sp->tp[i] == sp->tp[j])
                return "tp";
            if (i < sp->n_pp && sp->pp[i] == sp->pp[j])
                return "pp";
            if (i < sp->n_ep && sp->ep[i] == sp->ep[j])
                return "ep";
            if (i < sp->n_chunk && sp->chunk[i] == sp->chunk[j])
                return "chunk";
            if (i < sp->n_concurrency && !(sp->concurrency[i] < sp->concurrency[j]) &&
                !(sp->concurrency[i] > sp->concurrency[j]))
                return "concurrency";
        }
    return NULL;
}

/* The space's dimensions: each list within its bounds, the hardware axes continuous and
 * distinct, no value twice, a closed loop. */
static pm_status check_space(const pm_search_spec *sp, pm_error *err)
{
    bool ok = (sp->n_tp == 0 || counts_ok(sp->tp, sp->n_tp, 1, PM_MAX_DEVICES)) &&
              (sp->n_pp == 0 || counts_ok(sp->pp, sp->n_pp, 1, PM_MAX_STAGES)) &&
              (sp->n_ep == 0 || counts_ok(sp->ep, sp->n_ep, 1, PM_MAX_DEVICES)) &&
              sp->n_concurrency >= 1 && sp->n_concurrency <= PM_SEARCH_MAX_VALUES &&
              sp->n_chunk >= 1 && sp->n_chunk <= PM_SEARCH_MAX_VALUES && sp->n_hw >= 0 &&
              sp->n_hw <= PM_SEARCH_MAX_HW && sp->device_budget >= 0 &&
              sp->device_budget <= PM_MAX_DEVICES && sp->threads >= 0 &&
              sp->threads <= PM_SWEEP_MAX_THREADS &&
              (sp->shard_count == 0 ? sp->shard_index == 0 : sp->shard_index < sp->shard_count);
    for (int i = 0; ok && i < sp->n_concurrency; i++)
        ok = sp->concurrency[i] >= 1.0 && sp->concurrency[i] <= 1e9;
    for (int i = 0; ok && i < sp->n_chunk; i++)
        ok = sp->chunk[i] >= 1;
    if (!ok)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "search: each list of the space needs 1 to %d values in range "
                       "(concurrency >= 1, chunk >= 1, tp and ep 1 to %d, pp 1 to %d), at "
                       "most %d hardware axes, a budget of 0 to %d devices, 0 to %d threads, "
                       "a shard index below the shard count",
                       PM_SEARCH_MAX_VALUES, PM_MAX_DEVICES, PM_MAX_STAGES, PM_SEARCH_MAX_HW,
                       PM_MAX_DEVICES, PM_SWEEP_MAX_THREADS);
    const char *twice = repeated_list(sp);
    if (twice)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "search: the %s list gives a value twice (each value once)", twice);
    for (int a = 0; a < sp->n_hw; a++) {
        const pm_axis *x = &sp->hw[a];
        if ((int)x->kind < 0 || x->kind >= PM_AXIS_COUNT || !x->values || x->n_values == 0)
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "search: hardware axis %d is "
                           "not parsed", a + 1);
        if (pm_axis_is_count(x->kind) || (a == 1 && sp->hw[0].kind == x->kind))
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                           "search: hardware axis %s: %s", pm_axis_name(x->kind),
                           pm_axis_is_count(x->kind)
                               ? "the deployment is searched by tp, pp, ep and the device "
                                 "budget; "
                                 "a hardware axis is l2, l2_bw, compute, hbm_bw or link_bw"
                               : "given twice");
    }
    if (fabs(sp->workload.request_rate_per_s) > 0.0)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "search: the space is closed loops over concurrencies; "
                       "request_rate_per_s must be 0");
    /* A NaN or negative limit compares false and would read as "none": refused. */
    const double lim[] = {sp->ttft_limit_s, sp->tpot_limit_s, sp->min_tokens_per_s_per_user};
    static const char *const lim_name[] = {"ttft_limit_s", "tpot_limit_s",
                                           "min_tokens_per_s_per_user"};
    for (int i = 0; i < 3; i++)
        if (!(lim[i] >= 0 && lim[i] < INFINITY))
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, lim_name[i],
                           "search: a limit must be finite and >= 0 (0: none; got %g)", lim[i]);
    return PM_OK;
}

/* What the objective needs of the accelerator, and a deployment the search can spread. */
static pm_status check_base(const pm_scenario *s, const pm_search_spec *sp, pm_error *err)
{
    static const char *const block[PM_SEARCH_OBJECTIVE_COUNT] = {NULL, "area", "cost", "energy"};
    static const char *const need[PM_SEARCH_OBJECTIVE_COUNT] = {
        NULL, "$.accelerator.area", "$.accelerator.cost", "$.accelerator.energy"};
    const bool has[PM_SEARCH_OBJECTIVE_COUNT] = {true, s->accel.area.present,
                                                 s->accel.cost.present, s->accel.energy.present};
    if ((int)sp->objective < 0 || sp->objective >= PM_SEARCH_OBJECTIVE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "search: objective %d is not one",
                       (int)sp->objective);
    if (!has[sp->objective])
        return pm_fail(err, PM_ERR_MISSING, NULL, need[sp->objective],
                       "search: the %s objective needs the accelerator's %s block, and "
                       "accelerator \"%s\" has none",
                       objective_names[sp->objective], block[sp->objective], s->accel.name);
    if (pm_cluster_pp(&s->cluster) != 1 || pm_cluster_dp(&s->cluster) != 1)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL,
                       pm_cluster_pp(&s->cluster) != 1 ? "$.cluster.pipeline_parallel"
                                                       : "$.cluster.data_parallel",
                       "search: the search itself gives the deployments their pipeline "
                       "stages (its pp list, `--pp-list`) and fills the device budget with "
                       "data-parallel replicas: give a scenario of one stage and one replica");
    /* Every hardware point the chip's axes make must be one the model is defined for: one
     * that is not fails at every candidate ("could not run", the answer without it). An axis
     * moves its fields monotonically (the compute axis scales the peaks) and each range is an
     * interval, so an axis's least and greatest values stand for all of its values: two checks
     * an axis, not one a point (a candidate's cost stays its own). */
    for (int a = 0; a < sp->n_hw; a++) {
        const pm_axis *x = &sp->hw[a];
        size_t ends[2] = {0, 0};
        for (size_t i = 1; i < x->n_values; i++) {
            if (x->values[i] < x->values[ends[0]])
                ends[0] = i;
            if (x->values[i] > x->values[ends[1]])
                ends[1] = i;
        }
        for (int e = 0; e < 2; e++) {
            const double v = x->values[ends[e]];
            pm_scenario t = *s;
            t.provenance = NULL;
            if (pm_scenario_set_axis(&t, x->kind, v, err) == PM_OK &&
                pm_scenario_check_hardware(&t, err) == PM_OK)
                continue;
            if (err) {
                char why[sizeof err->message];
                snprintf(why, sizeof why, "%s", err->message);
                snprintf(err->message, sizeof err->message,
                         "search: hardware axis %s's value %g (%g in its column's unit): %s",
                         pm_axis_name(x->kind), v, pm_axis_display_value(x->kind, v), why);
            }
            return err ? err->status : PM_ERR_RANGE;
        }
    }
    return PM_OK;
}

/* The disaggregated workload of the space (each group's counts and concurrency its own): the
 * served workload's lengths, the limits, the link (the cluster's inter-node one when the spec
 * gives none) and the load cap, checked by disagg.c's rules; what a disaggregated deployment
 * does not model refused, naming the key. */
static pm_status disagg_workload(const pm_scenario *s, const pm_search_spec *sp,
                                 pm_disagg_workload *w, pm_error *err)
{
    const pm_serve_workload *sw = &sp->workload;
    if (sp->device_budget < 1 || sp->device_budget > PM_DISAGG_MAX_INSTANCES)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "device_budget",
                       "search: disaggregated deployments split a device budget of 1 to %d "
                       "devices into pools (got %d): give one (`--budget`)",
                       PM_DISAGG_MAX_INSTANCES, sp->device_budget);
    if (sw->n_classes > 1 || sw->arrival == PM_SERVE_WAVE)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL,
                       sw->n_classes > 1 ? "workload.classes" : "workload.arrival",
                       "search: a disaggregated deployment (pm_disagg_compute) serves a "
                       "staggered population of one prompt and output length; %s is not "
                       "modelled there: search it without disaggregation",
                       sw->n_classes > 1 ? "a distribution of lengths" : "a wave");
    if (s->cluster.attention_data_parallel)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.cluster.attention_data_parallel",
                       "search: a disaggregated pool under data-parallel attention is not "
                       "modelled (its KV transfer takes a tensor-parallel group's split): use "
                       "attention_data_parallel false, or search without disaggregation");
    /* One class is one length (its share the whole). */
    const bool one = sw->n_classes == 1;
    *w = (pm_disagg_workload){.input_tokens = one ? sw->classes[0].input_tokens
                                                  : sw->input_tokens,
                              .output_tokens = one ? sw->classes[0].output_tokens
                                                   : sw->output_tokens,
                              .prefill_instances = 1,
                              .decode_instances = 1,
                              .max_instances = 1,
                              .prefill_max_load_frac = sp->disagg_max_load_frac,
                              .ttft_limit_s = sp->ttft_limit_s,
                              .tpot_limit_s = sp->tpot_limit_s,
                              .link = sp->disagg_link};
    const double bw = w->link.bandwidth_bytes_per_s;
    if (!isnan(bw) && !(fabs(bw) > 0.0)) { /* not given: disagg's default link, one rule */
        w->link.bandwidth_bytes_per_s = w->link.latency_s = NAN;
        pm_disagg_workload_defaults(s, w);
    }
    return pm_disagg_workload_check(w, err);
}

/* The splits of budget into a prefill pool of np x TP p and a decode pool of nd x TP d devices
 * (p, d from the tp list; np, nd >= 1), by p, then d, then rising np, into out (when not
 * NULL); returns their count. */
static size_t budget_splits(const search *se, int budget, split *out)
{
    size_t n = 0;
    for (int i = 0; i < se->n_tp; i++)
        for (int j = 0; j < se->n_tp; j++)
            for (int np = 1; np * se->tp[i] < budget; np++) {
                const int rest = budget - np * se->tp[i];
                if (rest % se->tp[j] != 0)
                    continue;
                if (out)
                    out[n] = (split){se->tp[i], np, se->tp[j], rest / se->tp[j]};
                n++;
            }
    return n;
}

/* The search's lists: the tensor-parallel degrees (without a list 1, 2, 4... up to a node
 * and the budget), the pipeline stages (without a list 1), the expert-parallel ranks (the
 * scenario's own without a list: ep 0 leaves it as it is), the concurrencies ascending. */
static pm_status prepare(search *se, const pm_scenario *s, const pm_search_spec *sp)
{
    se->n_tp = sp->n_tp;
    if (sp->n_tp > 0)
        memcpy(se->tp, sp->tp, (size_t)sp->n_tp * sizeof se->tp[0]);
    const int top = pm_cluster_node_devices(&s->cluster);
    for (int t = 1; sp->n_tp == 0 && t <= top && se->n_tp < PM_SEARCH_MAX_VALUES &&
                    (sp->device_budget == 0 || t <= sp->device_budget);
         t *= 2)
        se->tp[se->n_tp++] = t;
    se->n_pp = sp->n_pp > 0 ? sp->n_pp : 1;
    for (int i = 0; i < se->n_pp; i++)
        se->pp[i] = sp->n_pp > 0 ? sp->pp[i] : 1;
    se->n_ep = sp->n_ep > 0 ? sp->n_ep : 1;
    for (int i = 0; i < se->n_ep; i++)
        se->ep[i] = sp->n_ep > 0 ? sp->ep[i] : 0;
    memcpy(se->conc, sp->concurrency, (size_t)sp->n_concurrency * sizeof se->conc[0]);
    qsort(se->conc, (size_t)sp->n_concurrency, sizeof se->conc[0], cmp_double);
    se->hw_points = 1;
    for (int a = 0; a < sp->n_hw; a++)
        se->hw_points *= sp->hw[a].n_values;
    se->n_colo = (size_t)se->n_tp * (size_t)se->n_pp * (size_t)se->n_ep * (size_t)sp->n_chunk *
                 se->hw_points;
    if (sp->disagg) {
        se->n_splits = budget_splits(se, sp->device_budget, NULL);
        se->splits = pm_malloc((se->n_splits > 0 ? se->n_splits : 1) * sizeof *se->splits);
        if (!se->splits)
            return PM_ERR_NOMEM;
        budget_splits(se, sp->device_budget, se->splits);
    }
    se->n_groups = se->n_colo + se->n_splits * (size_t)se->n_ep * se->hw_points;
    se->l2_first = sp->n_hw == 2 && sp->hw[0].kind == PM_AXIS_L2;
    se->first = 0;
    se->last = se->n_groups;
    if (sp->shard_count > 0)
        pm_sweep_slice(se->n_groups, sp->shard_index, sp->shard_count, &se->first, &se->last);
    se->next = se->first;
    return PM_OK;
}

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > PM_SWEEP_MAX_THREADS ? PM_SWEEP_MAX_THREADS : (int)n;
}

/* Runs every group on the threads the spec asks for. */
static pm_status run_groups(search *se)
{
    int threads = se->spec->threads > 0 ? se->spec->threads : online_cpus();
    if ((size_t)threads > se->last - se->first)
        threads = (int)(se->last - se->first);
    pthread_t th[PM_SWEEP_MAX_THREADS];
    int started = 0;
    pthread_mutex_init(&se->mu, NULL);
    se->threaded = threads > 1;
    for (; threads > 1 && started < threads; started++)
        if (pthread_create(&th[started], NULL, worker, se) != 0)
            break;
    if (started == 0) {
        se->threaded = false; /* no thread started: this one alone */
        worker(se);
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&se->mu);
    return PM_OK;
}

/* A result's front in one mode while parts are merged into it: the candidates its room holds
 * (grown by doubling), and whether it is in order (front_sorted) and proper (front_proper),
 * kept from merge to merge instead of read again: a merge leaves a front both or neither. */
typedef struct front_acc {
    size_t cap;
    bool sorted, proper;
    const pm_search_candidate *best; /* the best so far where out's is not it yet (NULL: it
                                        is): copied once the parts are merged (kept_best) */
} front_acc;

/* The result's best in mode m: acc's where it is kept apart, else out's. */
static const pm_search_candidate *best_so_far(const pm_search_result *out, int m,
                                              const front_acc *acc)
{
    return acc->best ? acc->best : &out->best[m];
}

/* acc's best copied into out's mode m (the parts it points into still held). */
static void kept_best(pm_search_result *out, int m, front_acc *acc)
{
    if (acc->best)
        out->best[m] = *acc->best;
    acc->best = NULL;
}

/* A later part's mode m (its best, what binds it, its front) added to the result: the best
 * kept unless the part's is better (the earlier among equals), the fronts joined (merged when
 * both are in order, else sorted again). acc: out->front[m]'s. */
static pm_status merge_mode(pm_search_result *out, int m, const pm_search_candidate *best,
                            pm_search_bound binds, const pm_search_candidate *front,
                            size_t n_front, front_acc *acc)
{
    size_t *cap = &acc->cap;
    if (!out->found[m] || better(best, best_so_far(out, m, acc))) {
        out->found[m] = true;
        acc->best = best; /* copied by kept_best: a best beaten later is never copied */
        out->binds[m] = binds;
    }
    const size_t n = out->n_front[m], need = n + n_front;
    if (need > *cap) {
        const size_t room = need > 2 * *cap ? need : 2 * *cap;
        pm_search_candidate *f = pm_realloc(out->front[m], room * sizeof *f);
        if (!f)
            return PM_ERR_NOMEM;
        out->front[m] = f;
        *cap = room;
    }
    pm_search_candidate *f = out->front[m];
    if (acc->sorted && front_sorted(front, n_front)) {
        out->n_front[m] = merge_fronts(f, n, front, n_front, acc->proper);
        acc->proper = true;
        return PM_OK;
    }
    memcpy(f + n, front, n_front * sizeof *f);
    out->n_front[m] = pm_search_pareto(f, need);
    acc->sorted = acc->proper = front_sorted(f, out->n_front[m]); /* keep_front filtered it */
    return PM_OK;
}

/* Group g's outcome added to the result, in group order; acc: merge_mode's per mode. */
static pm_status merge_group(const group *g, pm_search_result *out, front_acc *acc)
{
    out->evaluated += g->evaluated;
    out->pruned += g->pruned;
    out->outside += g->outside;
    if (g->invalid && out->invalid_plans++ == 0)
        snprintf(out->first_invalid, sizeof out->first_invalid, "%s", g->error);
    pm_status st = PM_OK;
    for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++) {
        const group_mode *gm = &g->modes[m];
        if (gm->found)
            st = merge_mode(out, m, gm->best_at, gm->binds, gm->front, gm->n_front, &acc[m]);
    }
    return st;
}

pm_status pm_search_merge(pm_search_result *into, const pm_search_result *part, pm_error *err)
{
    if (!into || !part)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_search_merge");
    const bool first = into->groups == 0;
    if (!first && (part->groups != into->groups || part->first_group != into->last_group))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "search merge: a part of groups %zu to %zu of %zu does not follow "
                       "groups %zu to %zu of %zu",
                       part->first_group + 1, part->last_group, part->groups,
                       into->first_group + 1, into->last_group, into->groups);
    pm_search_result r = *into; /* into's fronts are kept until the merge succeeds */
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        front_acc acc = {into->n_front[m] + part->n_front[m] + 1,
                         front_sorted(into->front[m], into->n_front[m]),
                         front_proper(into->front[m], into->n_front[m]), NULL};
        r.front[m] = pm_malloc(acc.cap * sizeof *r.front[m]);
        if (!r.front[m]) {
            for (int k = 0; k < m; k++)
                pm_free(r.front[k]);
            return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "search merge: out of memory");
        }
        if (into->n_front[m] > 0) /* an empty front may be NULL */
            memcpy(r.front[m], into->front[m], into->n_front[m] * sizeof *r.front[m]);
        if (part->found[m] && merge_mode(&r, m, &part->best[m], part->binds[m], part->front[m],
                                         part->n_front[m], &acc) != PM_OK) {
            for (int k = 0; k <= m; k++)
                pm_free(r.front[k]);
            return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "search merge: out of memory");
        }
        kept_best(&r, m, &acc);
    }
    if (part->invalid_plans > 0 && r.invalid_plans == 0)
        snprintf(r.first_invalid, sizeof r.first_invalid, "%s", part->first_invalid);
    r.invalid_plans += part->invalid_plans;
    r.candidates += part->candidates;
    r.evaluated += part->evaluated;
    r.pruned += part->pruned;
    r.outside += part->outside;
    r.groups = part->groups;
    r.first_group = first ? part->first_group : into->first_group;
    r.last_group = part->last_group;
    pm_search_result_free(into);
    *into = r;
    return PM_OK;
}

static void free_groups(search *se)
{
    while (se->blocks) {
        front_block *next = se->blocks->next;
        pm_free(se->blocks);
        se->blocks = next;
    }
    pm_free(se->groups);
    pm_free(se->splits);
}

/* n groups with nothing found yet (what merge_group reads; a group's best, bound and error
 * are written before they are read). */
static group *new_groups(size_t n)
{
    group *g = pm_malloc((n > 0 ? n : 1) * sizeof *g);
    for (size_t i = 0; g && i < n; i++) {
        g[i].evaluated = g[i].pruned = g[i].outside = 0;
        g[i].invalid = false;
        g[i].status = PM_OK;
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            g[i].modes[m].found = false;
            g[i].modes[m].front = NULL;
            g[i].modes[m].n_front = 0;
        }
    }
    return g;
}

pm_status pm_search_run(const pm_scenario *s, const pm_search_spec *spec,
                        pm_search_result *out, pm_error *err)
{
    if (!s || !spec || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_search_run");
    memset(out, 0, sizeof *out);
    pm_status st = check_space(spec, err);
    if (st == PM_OK)
        st = check_base(s, spec, err);
    if (st != PM_OK)
        return st;
    search se = {.base = s, .spec = spec};
    if (spec->disagg && (st = disagg_workload(s, spec, &se.dw, err)) != PM_OK)
        return st;
    if (prepare(&se, s, spec) != PM_OK)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "search: out of memory");
    const size_t n = se.last - se.first;
    out->candidates = n * (size_t)spec->n_concurrency;
    out->groups = se.n_groups;
    out->first_group = se.first;
    out->last_group = se.last;
    se.groups = new_groups(n);
    if (!se.groups) {
        pm_free(se.splits);
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "search: out of memory");
    }
    run_groups(&se);
    front_acc acc[PM_MODE_COUNT];
    for (int m = 0; m < PM_MODE_COUNT; m++)
        acc[m] = (front_acc){0, true, true, NULL}; /* no front yet */
    for (size_t i = 0; i < n && st == PM_OK; i++) {
        st = se.groups[i].status;
        if (st == PM_OK)
            st = merge_group(&se.groups[i], out, acc);
    }
    for (int m = 0; m < PM_MODE_COUNT; m++)
        kept_best(out, m, &acc[m]); /* before the groups they point into are freed */
    free_groups(&se);
    if (st != PM_OK) {
        pm_search_result_free(out);
        return pm_fail(err, st, NULL, NULL, "search: out of memory");
    }
    return PM_OK;
}

void pm_search_result_free(pm_search_result *r)
{
    if (!r)
        return;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        pm_free(r->front[m]);
        r->front[m] = NULL;
        r->n_front[m] = 0;
    }
}

/* (internal.h) */
bool pm_search_chip_warning(const pm_scenario *s, const pm_axis *axes, int n_hw,
                            pm_search_objective objective,
                            const double *const best_hw[PM_MODE_COUNT], size_t i, char *note,
                            size_t n)
{
    if (!s || !axes || n_hw < 0 || n_hw > PM_SEARCH_MAX_HW)
        return false;
    char *out = note && n > 0 ? note : NULL;
    /* The axes' own (a die over the reticle at some of their values: the sweep's rule). */
    size_t k = 0; /* the warnings before the one looked at */
    while (pm_sweep_axes_warning(s, axes, (size_t)n_hw, k, NULL, 0))
        k++;
    if (i < k)
        return pm_sweep_axes_warning(s, axes, (size_t)n_hw, i, out, n);
    pm_axis_kind kinds[PM_SEARCH_MAX_HW];
    for (int a = 0; a < n_hw; a++)
        kinds[a] = axes[a].kind;
    for (int m = 0; m < PM_MODE_COUNT && n_hw > 0; m++)
        if (best_hw[m] && pm_best_over_reticle(s, (pm_mode)m, kinds, best_hw[m], n_hw,
                                               k == i ? out : NULL, n) &&
            k++ == i)
            return true;
    /* Per mm2 or per dollar, a best with more bandwidth than the chip's took it for free. */
    const bool priced = objective == PM_SEARCH_PER_MM2 || objective == PM_SEARCH_PER_USD;
    for (int m = 0; priced && m < PM_MODE_COUNT && n_hw > 0; m++)
        if (best_hw[m] && pm_best_free_bandwidth(s, (pm_mode)m, kinds, best_hw[m], n_hw,
                                                 k == i ? out : NULL, n) &&
            k++ == i)
            return true;
    return false;
}

/* Whether a replica (or a pool) of TP tp, EP ep splits s's model unevenly (pm_shard.uneven:
 * the busiest device's share is modelled, as run and serve warn of a scenario's own split); the
 * warning, opened by label, into note (may be NULL). */
static bool split_uneven(const pm_scenario *s, const char *label, const char *what, int tp,
                         int ep, char *note, size_t n)
{
    pm_scenario t = *s;
    t.provenance = NULL;
    pm_shard sh;
    if (tp < 1 || pm_scenario_set_axis(&t, PM_AXIS_DEVICES, tp, NULL) != PM_OK ||
        (ep > 1 && pm_scenario_set_axis(&t, PM_AXIS_EP, ep, NULL) != PM_OK) ||
        pm_shard_compute(&t, &sh, NULL) != PM_OK || !sh.uneven)
        return false;
    char eps[32] = "";
    if (ep > 1)
        snprintf(eps, sizeof eps, " with %d EP ranks", ep);
    if (note)
        snprintf(note, n,
                 "%s: the best's %s is TP %d%s, over which model %s does not split evenly (%d "
                 "query heads, %d KV heads, MLP width %d): the busiest device's share is "
                 "modelled (%g query heads, %g KV heads); engines that split evenly (vLLM, "
                 "TensorRT-LLM) refuse it",
                 label, what, tp, eps, s->model.name, s->model.heads, s->model.kv_heads,
                 s->model.intermediate, sh.q_heads, sh.kv_heads);
    return true;
}

/* (internal.h) */
bool pm_search_uneven_warning(const pm_scenario *s, const char *label,
                              const pm_search_candidate *c, size_t i, char *note, size_t n)
{
    static const char *const what[3] = {"replica", "prefill pool", "decode pool"};
    const int tps[3] = {c->tp, c->prefill_tp, c->decode_tp};
    size_t k = 0;
    for (int j = 0; j < 3; j++)
        if (split_uneven(s, label, what[j], tps[j], c->ep, k == i ? note : NULL, n) && k++ == i)
            return true;
    return false;
}

bool pm_search_warning(const pm_scenario *s, const pm_search_spec *sp,
                       const pm_search_result *r, size_t i, char *note, size_t n)
{
    if (!s || !sp || !r)
        return false;
    const double *best_hw[PM_MODE_COUNT];
    for (int m = 0; m < PM_MODE_COUNT; m++)
        best_hw[m] = r->found[m] ? r->best[m].hw : NULL;
    size_t k = 0; /* the chip's warnings, then each mode's best at an uneven split */
    while (pm_search_chip_warning(s, sp->hw, sp->n_hw, sp->objective, best_hw, k, NULL, 0))
        k++;
    if (i < k)
        return pm_search_chip_warning(s, sp->hw, sp->n_hw, sp->objective, best_hw, i, note, n);
    for (int m = 0; m < PM_MODE_COUNT; m++)
        for (size_t j = 0; r->found[m] && pm_search_uneven_warning(s, pm_mode_name((pm_mode)m),
                                                                    &r->best[m], j, NULL, 0);
             j++)
            if (k++ == i)
                return pm_search_uneven_warning(s, pm_mode_name((pm_mode)m), &r->best[m], j,
                                                note, n);
    return false;
}

size_t pm_search_layout(const pm_search_candidate *k, char *buf, size_t n)
{
    const int w = k->prefill_instances > 0
                      ? snprintf(buf, n, "P%dxTP%d+D%dxTP%d", k->prefill_instances,
                                 k->prefill_tp, k->decode_instances, k->decode_tp)
                      : snprintf(buf, n, "colocated");
    return w > 0 ? (size_t)w : 0;
}
