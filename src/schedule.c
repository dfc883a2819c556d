/*
 * schedule.c - the two-stream schedule (DESIGN.md section 7). The main stream runs its nodes in
 * program order; a prefetch node starts when its trigger (a communication node) starts and the
 * previous prefetch has ended, and streams from HBM back to back; a consumer waits for its
 * prefetch's end event, or, with PM_CONSUMER_STREAM, starts when the main stream reaches it and
 * ends at max(its start + its cost from L2, min(its prefetch's end, its start + its cost from
 * HBM)): the lines already in L2 are hits, the others arrive with the prefetch or through the
 * consumer's own misses, whichever is sooner. When its cost from L2 exceeds its cost from HBM
 * (an L2 slower than HBM) it reads HBM and ends at start + its cost from HBM
 * (pm_stream_consumer_cost), so a prefetch never makes a streaming consumer slower than its own
 * reads; with sharing, such a consumer running beside a prefetch reads L2 where that is the
 * faster at its share of HBM and its data has arrived. By default the two streams do not
 * interfere (the paper's model). With hbm_sharing, the streams share HBM bandwidth max-min
 * fairly while they overlap: a main-stream operation that needs a fraction u of the bandwidth
 * (its HBM time over its unconstrained duration) keeps it when u <= 1/2 and the prefetch gets
 * the rest, 1 - u; otherwise each gets half, the main operation's HBM time doubling (its bound max(compute, hbm + l2) becomes
 * 2 hbm + l2; what its time holds beyond the bound, a GEMM's knee, a fixed latency and the
 * launch, stays, so sharing never makes it faster). The loop below advances from one completion
 * to the next, progressing each running operation at the rate its current share allows, so both
 * cases are one mechanism. The consumer semantics' names live here too.
 *
 * May call: alloc.c, cost.c, error.c, graph.c.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "internal.h"

/* The consumer semantics' names, as the accelerator files spell them. */
static const char *const consumer_names[] = {"wait", "stream"};

const char *pm_prefetch_consumer_name(pm_prefetch_consumer c)
{
    return (int)c >= 0 && (size_t)c < PM_ARRAY_LEN(consumer_names) ? consumer_names[c] : "?";
}

const char *const *pm_prefetch_consumer_names(size_t *count)
{
    *count = PM_ARRAY_LEN(consumer_names);
    return consumer_names;
}

/* The state of pm_sim_run between two completions. */
typedef struct sim {
    const pm_sim_op *mo, *po;
    size_t n_main, n_pf;
    pm_slot *ms, *ps;
    size_t mi, pj; /* next operation of each stream */
    int main_op, pf_op;
    double main_left, pf_left; /* fraction of the operation still to do */
    /* A streaming consumer whose own work is done but whose prefetch is not: it ends when the
     * prefetch does or at main_deadline (its start plus its cost from HBM: by then its own
     * misses have fetched the rest), whichever comes first. */
    bool main_tail;
    double main_deadline;
    double t, main_busy, pf_busy, comm;
} sim;

/* Starts whatever can start at s->t. */
static void sim_start(sim *s)
{
    const pm_sim_op *mo = s->mo, *po = s->po;
    if (s->main_op < 0 && s->mi < s->n_main &&
        !(mo[s->mi].wait >= 0 && !mo[s->mi].hbm && !(s->ps[mo[s->mi].wait].end_s >= 0))) {
        s->main_op = (int)s->mi++;
        s->ms[s->main_op].start_s = s->t;
        s->main_left = 1.0;
        s->main_tail = false;
    }
    /* The next prefetch starts once its trigger has; one whose streaming consumer has
     * already finished (ended early, never started) is skipped. */
    while (s->pf_op < 0 && s->pj < s->n_pf &&
           !(po[s->pj].wait >= 0 && !(s->ms[po[s->pj].wait].start_s >= 0))) {
        if (s->ps[s->pj].end_s >= 0) {
            s->ps[s->pj].start_s = s->ps[s->pj].end_s = s->t;
            s->pj++;
            continue;
        }
        s->pf_op = (int)s->pj++;
        s->ps[s->pf_op].start_s = s->t;
        s->pf_left = 1.0;
    }
}

/* The durations *dm and *dp that the running main operation cm and prefetch cp (either may be
 * NULL) would take at their current shares of HBM. */
static void sim_durations(const pm_op_cost *cm, const pm_op_cost *cp, bool hbm_sharing,
                          double *dm, double *dp)
{
    *dm = cm ? cm->total_s : INFINITY;
    *dp = cp ? cp->total_s : INFINITY;
    if (hbm_sharing && cm && cp && cm->hbm_s > 0 && cm->comm_s <= 0) {
        /* The operation reads HBM during its roofline's time t0 alone, at u of the bandwidth;
         * the rest of its time (the launch, a GEMM's knee, an attention's fixed latency) leaves
         * the whole of it to the prefetch. The prefetch's share is its average over the
         * operation: a 5 us launch of a 64 KB norm no longer halves it for 5 us. */
        const double mem = cm->hbm_s + cm->l2_s;
        const double t0 = cm->compute_s > mem ? cm->compute_s : mem;
        const double rest = cm->total_s > t0 ? cm->total_s - t0 : 0.0;
        const double u = t0 > 0 ? cm->hbm_s / t0 : 0.0;
        if (u <= 0.5) {
            /* (t0 (1 - u) + rest) / total = 1 - hbm / total */
            *dp = pm_op_time_shared(cp, (t0 * (1.0 - u) + rest) / (t0 + rest));
        } else {
            /* Its HBM reads at half the bandwidth: the roofline's bound t0 grows to
             * max(compute, 2 hbm + l2) = 2 hbm + l2 (u > 1/2), the rest as it was; the
             * prefetch has half over the first, all of it over the rest. */
            const double t1 = 2.0 * cm->hbm_s + cm->l2_s;
            *dm = cm->total_s + (t1 - t0);
            *dp = pm_op_time_shared(cp, (0.5 * t1 + rest) / (t1 + rest));
        }
    }
}

/* Advances the running main operation by dt (rm: the time it had left, dm: its duration). */
static void sim_advance_main(sim *s, double rm, double dt, double dm)
{
    const pm_sim_op *mo = s->mo;
    s->main_busy += dt;
    if (mo[s->main_op].is_comm)
        s->comm += dt;
    const int w = mo[s->main_op].wait;
    const bool data_in = w < 0 || s->ps[w].end_s >= 0;
    bool done = false;
    if (s->main_tail) {
        done = rm <= dt || data_in;
    } else if (rm <= dt) {
        done = true;
        if (!data_in && mo[s->main_op].hbm) {
            s->main_deadline = s->ms[s->main_op].start_s + mo[s->main_op].hbm->total_s;
            if (s->main_deadline > s->t) {
                s->main_tail = true;
                done = false;
            }
        }
    } else {
        s->main_left -= dt / dm;
    }
    if (done) {
        s->ms[s->main_op].end_s = s->t;
        if (!data_in) {
            /* Finished before its prefetch (its own misses fetched the rest): the prefetch
             * ends here; the rest of it would be L2 hits. */
            s->ps[w].end_s = s->t;
            if (s->pf_op == w)
                s->pf_op = -1;
        }
        s->main_op = -1;
        s->main_tail = false;
    }
}

pm_status pm_sim_run(const pm_sim_op *mo, size_t n_main, const pm_sim_op *po, size_t n_pf,
                     bool hbm_sharing, pm_slot *ms, pm_slot *ps, pm_schedule *totals)
{
    for (size_t i = 0; i < n_main; i++)
        ms[i] = (pm_slot){-1.0, -1.0};
    for (size_t i = 0; i < n_pf; i++)
        ps[i] = (pm_slot){-1.0, -1.0};
    sim s = {mo, po, n_main, n_pf, ms, ps, 0, 0, -1, -1, 0.0, 0.0, false, 0.0,
             0.0, 0.0, 0.0, 0.0};
    for (;;) {
        sim_start(&s);
        if (s.main_op < 0 && s.pf_op < 0) {
            if (s.mi >= n_main && s.pj >= n_pf)
                break;
            return PM_ERR_INCONSISTENT; /* a consumer waits for a prefetch that cannot start */
        }
        const pm_op_cost *cm = s.main_op >= 0 && !s.main_tail ? mo[s.main_op].cost : NULL;
        const pm_op_cost *cp = s.pf_op >= 0 ? po[s.pf_op].cost : NULL;
        double dm, dp;
        sim_durations(cm, cp, hbm_sharing, &dm, &dp);
        if (cm && cp && hbm_sharing && mo[s.main_op].l2 &&
            (mo[s.main_op].wait < 0 || ps[mo[s.main_op].wait].end_s >= 0)) {
            /* A streaming consumer reading HBM beside a prefetch, its data arrived: its L2
             * read where that is the faster at its share (never slower than its own reads). */
            double dm2, dp2;
            sim_durations(mo[s.main_op].l2, cp, true, &dm2, &dp2);
            if (dm2 < dm) {
                cm = mo[s.main_op].l2;
                dm = dm2;
                dp = dp2;
            }
        }
        double rm = cm ? s.main_left * dm : INFINITY;
        if (s.main_op >= 0 && s.main_tail)
            rm = s.main_deadline > s.t ? s.main_deadline - s.t : 0.0;
        const double rp = cp ? s.pf_left * dp : INFINITY;
        const double dt = rm < rp ? rm : rp;
        if (!(dt >= 0.0 && dt < INFINITY))
            return PM_ERR_RANGE; /* an infinite or NaN duration: would never finish */
        s.t += dt;
        if (cp) {
            s.pf_busy += dt;
            if (rp <= dt) {
                ps[s.pf_op].end_s = s.t;
                s.pf_op = -1;
            } else {
                s.pf_left -= dt / dp;
            }
        }
        if (s.main_op >= 0)
            sim_advance_main(&s, rm, dt, dm);
    }
    totals->makespan_s = s.t;
    totals->main_busy_s = s.main_busy;
    totals->prefetch_busy_s = s.pf_busy;
    totals->comm_s = s.comm;
    return PM_OK;
}

pm_status pm_schedule_run(const pm_scenario *s, const pm_graph *g, const pm_op_cost *costs,
                          pm_slot *slots, pm_schedule *sched, pm_error *err)
{
    /* Splits the graph into its two streams (program order) and maps the waits. */
    const size_t n = g->n_nodes, n1 = n ? n : 1;
    const bool stream = s->accel.prefetch_consumer == PM_CONSUMER_STREAM;
    pm_sim_op *ops = pm_calloc(n1, sizeof *ops);
    int *pos = pm_calloc(n1, sizeof *pos); /* node -> index within its stream */
    pm_slot *tmp = pm_calloc(n1, sizeof *tmp);
    pm_op_cost *hbm = stream ? pm_calloc(n1, sizeof *hbm) : NULL; /* consumers from HBM */
    pm_status st = PM_OK;
    if (!ops || !pos || !tmp || (stream && !hbm)) {
        st = pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory scheduling");
        goto out;
    }
    size_t n_main = 0, n_pf = 0;
    for (size_t i = 0; i < n; i++)
        pos[i] = g->nodes[i].stream == PM_STREAM_MAIN ? (int)n_main++ : (int)n_pf++;
    const char *who = "?";
    pm_cost_ctx k;
    pm_cost_ctx_init(s, &k);
    /* Main ops first, then prefetch ops, in one array. */
    for (size_t i = 0; i < n; i++) {
        const pm_node *nd = &g->nodes[i];
        const bool main = nd->stream == PM_STREAM_MAIN;
        const int dep = main ? nd->prefetch : nd->trigger;
        pm_sim_op *op = &ops[main ? (size_t)pos[i] : n_main + (size_t)pos[i]];
        op->cost = &costs[i];
        op->is_comm = pm_kind_is_collective(nd->kind);
        op->wait = -1;
        if (stream && main && dep >= 0 && nd->l2_bytes > 0) {
            pm_node plain = *nd;
            plain.l2_bytes = 0.0;
            pm_op_cost_node(&k, NULL, &plain, &hbm[i]);
            *op = pm_stream_consumer_op(&costs[i], &hbm[i], -1, op->is_comm);
        }
        if (dep < 0 || (size_t)dep >= n)
            continue;
        if ((g->nodes[dep].stream == PM_STREAM_MAIN) != main)
            op->wait = pos[dep];
        else if ((size_t)dep >= i && st == PM_OK) {
            st = PM_ERR_INCONSISTENT; /* waits on a later node of its own stream */
            who = nd->name;
        }
        /* else: an earlier node of its own stream has started and ended already */
    }
    pm_schedule tot = {0};
    if (st == PM_OK)
        st = pm_sim_run(ops, n_main, ops + n_main, n_pf, s->options.hbm_sharing, tmp, tmp + n_main,
                        &tot);
    if (st == PM_ERR_RANGE) {
        st = pm_fail(err, st, NULL, NULL,
                     "an operation's time is not finite (a bandwidth or peak too small for "
                     "double precision?)");
    } else if (st != PM_OK) {
        /* Name the first main node that never started. */
        if (who[0] == '?')
            for (size_t i = 0; i < n; i++)
                if (g->nodes[i].stream == PM_STREAM_MAIN && !(tmp[pos[i]].start_s >= 0)) {
                    who = g->nodes[i].name;
                    break;
                }
        st = pm_fail(err, PM_ERR_INCONSISTENT, NULL, NULL,
                     "the schedule is stuck: node \"%s\" waits for a prefetch that can never "
                     "start (its trigger comes after it)",
                     who);
    } else {
        for (size_t i = 0; i < n; i++)
            slots[i] = tmp[g->nodes[i].stream == PM_STREAM_MAIN ? (size_t)pos[i]
                                                                : n_main + (size_t)pos[i]];
        *sched = tot;
        sched->slots = slots;
        sched->n_slots = n;
    }
out:
    pm_free(ops);
    pm_free(pos);
    pm_free(tmp);
    pm_free(hbm);
    return st;
}

pm_status pm_schedule_compute(const pm_scenario *s, const pm_graph *g, pm_schedule *sched,
                              pm_error *err)
{
    if (!s || !g || !sched)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_schedule_compute");
    *sched = (pm_schedule){0};
    pm_status ck = pm_graph_check(g, err);
    if (ck != PM_OK)
        return ck;
    const size_t n = g->n_nodes;
    pm_op_cost *costs = pm_malloc((n ? n : 1) * sizeof *costs);
    pm_slot *slots = pm_malloc((n ? n : 1) * sizeof *slots);
    if (!costs || !slots) {
        pm_free(costs);
        pm_free(slots);
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory scheduling");
    }
    pm_status st = PM_OK;
    for (size_t i = 0; i < n && st == PM_OK; i++)
        st = pm_op_cost_compute(s, g, i, &costs[i], err);
    if (st == PM_OK)
        st = pm_schedule_run(s, g, costs, slots, sched, err);
    pm_free(costs);
    if (st != PM_OK) {
        pm_free(slots);
        *sched = (pm_schedule){0};
    }
    return st;
}

void pm_schedule_release(pm_schedule *sched)
{
    if (!sched)
        return;
    pm_free(sched->slots);
    *sched = (pm_schedule){0};
}
