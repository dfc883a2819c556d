/*
 * schedule.c - the two-stream schedule (DESIGN.md section 7). The main stream runs its nodes in
 * program order; a prefetch node starts when its trigger (a communication node) starts and the
 * previous prefetch has ended, and streams from HBM back to back; a consumer waits for its
 * prefetch's end event. By default the two streams do not interfere (the paper's model). With
 * hbm_sharing, the streams share HBM bandwidth max-min fairly while they overlap: a main-stream
 * operation that needs a fraction u of the bandwidth (its HBM time over its unconstrained
 * duration) keeps it when u <= 1/2 and the prefetch gets the rest, 1 - u; otherwise each gets
 * half, the main operation stretching by u / (1/2). The loop below advances from one completion
 * to the next, progressing each running operation at the rate its current share allows, so both
 * cases are one mechanism.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

pm_status pm_schedule_run(const pm_graph *g, const pm_op_cost *costs, bool hbm_sharing,
                          pm_slot *slots, pm_schedule *sched, pm_error *err)
{
    const size_t n = g->n_nodes;
    for (size_t i = 0; i < n; i++)
        slots[i] = (pm_slot){-1.0, -1.0};
    size_t mi = 0, pj = 0; /* next candidates (scanning program order per stream) */
    int main_op = -1, pf_op = -1;
    double main_left = 0.0, pf_left = 0.0; /* fraction of the operation still to do */
    double t = 0.0, main_busy = 0.0, pf_busy = 0.0, comm = 0.0;
    for (;;) {
        /* Start whatever can start now. */
        while (main_op < 0 && mi < n) {
            const pm_node *nd = &g->nodes[mi];
            if (nd->stream != PM_STREAM_MAIN) {
                mi++;
                continue;
            }
            if (nd->prefetch >= 0 && !(slots[nd->prefetch].end_s >= 0))
                break; /* waits for its prefetch's event */
            main_op = (int)mi++;
            slots[main_op].start_s = t;
            main_left = 1.0;
        }
        while (pf_op < 0 && pj < n) {
            const pm_node *nd = &g->nodes[pj];
            if (nd->stream != PM_STREAM_PREFETCH) {
                pj++;
                continue;
            }
            if (nd->trigger >= 0 && !(slots[nd->trigger].start_s >= 0))
                break; /* its communication node has not started */
            pf_op = (int)pj++;
            slots[pf_op].start_s = t;
            pf_left = 1.0;
        }
        if (main_op < 0 && pf_op < 0) {
            if (mi >= n && pj >= n)
                break;
            return pm_fail(err, PM_ERR_INCONSISTENT, NULL, NULL,
                           "the schedule is stuck: node \"%s\" waits for a prefetch that can "
                           "never start (its trigger comes after it)",
                           mi < n ? g->nodes[mi].name : g->nodes[pj].name);
        }
        double dm = main_op >= 0 ? costs[main_op].total_s : INFINITY;
        double dp = pf_op >= 0 ? costs[pf_op].total_s : INFINITY;
        if (hbm_sharing && main_op >= 0 && pf_op >= 0 && costs[main_op].hbm_s > 0 &&
            costs[main_op].comm_s <= 0) {
            const pm_op_cost *c = &costs[main_op];
            const double mem = c->hbm_s + c->l2_s;
            const double t0 = c->compute_s > mem ? c->compute_s : mem;
            const double u = t0 > 0 ? c->hbm_s / t0 : 0.0;
            if (u <= 0.5) {
                dp = pm_op_time_shared(&costs[pf_op], 1.0 - u);
            } else {
                dm = c->launch_s + t0 * (u / 0.5);
                dp = pm_op_time_shared(&costs[pf_op], 0.5);
            }
        }
        const double rm = main_op >= 0 ? main_left * dm : INFINITY;
        const double rp = pf_op >= 0 ? pf_left * dp : INFINITY;
        const double dt = rm < rp ? rm : rp;
        t += dt;
        if (main_op >= 0) {
            main_busy += dt;
            if (g->nodes[main_op].kind == PM_NODE_ALLREDUCE)
                comm += dt;
            if (rm <= dt) {
                slots[main_op].end_s = t;
                main_op = -1;
            } else {
                main_left -= dt / dm;
            }
        }
        if (pf_op >= 0) {
            pf_busy += dt;
            if (rp <= dt) {
                slots[pf_op].end_s = t;
                pf_op = -1;
            } else {
                pf_left -= dt / dp;
            }
        }
    }
    sched->slots = slots;
    sched->n_slots = n;
    sched->makespan_s = t;
    sched->main_busy_s = main_busy;
    sched->prefetch_busy_s = pf_busy;
    sched->comm_s = comm;
    return PM_OK;
}

pm_status pm_schedule_compute(const pm_scenario *s, const pm_graph *g, pm_schedule *sched,
                              pm_error *err)
{
    if (!s || !g || !sched)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_schedule_compute");
    *sched = (pm_schedule){0};
    const size_t n = g->n_nodes;
    pm_op_cost *costs = malloc((n ? n : 1) * sizeof *costs);
    pm_slot *slots = malloc((n ? n : 1) * sizeof *slots);
    if (!costs || !slots) {
        free(costs);
        free(slots);
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory scheduling");
    }
    pm_status st = PM_OK;
    for (size_t i = 0; i < n && st == PM_OK; i++)
        st = pm_op_cost_compute(s, g, i, &costs[i], err);
    if (st == PM_OK)
        st = pm_schedule_run(g, costs, s->options.hbm_sharing, slots, sched, err);
    free(costs);
    if (st != PM_OK) {
        free(slots);
        *sched = (pm_schedule){0};
    }
    return st;
}

void pm_schedule_release(pm_schedule *sched)
{
    if (!sched)
        return;
    free(sched->slots);
    *sched = (pm_schedule){0};
}
