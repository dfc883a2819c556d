/*
 * collective.c - alpha-beta models of one allreduce of n bytes over p devices with per-link
 * bandwidth B and per-step start-up latency alpha (DESIGN.md section 5):
 *
 *   ring         2(p-1) (alpha + n/(pB))
 *   oneshot      alpha + n/B            on a full mesh (p-1 dedicated links read in parallel)
 *                alpha + (p-1) n/B      on a switch (one port per device)
 *   twoshot      2 (alpha + n/(pB))     on a full mesh
 *                2 (alpha + (p-1)n/(pB)) on a switch
 *   tree         2 ceil(log2 p) (alpha + n/B)
 *   hierarchical intra-node reduce-scatter + inter-node ring allreduce + intra-node all-gather
 *
 * Decode messages are small, so alpha dominates: it is a first-class input.
 */
#include <math.h>

#include "internal.h"

static double ring_time(int p, double n, double bw, double alpha)
{
    if (p <= 1)
        return 0.0;
    return 2.0 * (p - 1) * (alpha + n / (p * bw));
}

static double algo_time(const pm_cluster *c, pm_allreduce_algo a, double n)
{
    const int p = c->devices;
    const double bw = c->link_bandwidth_bytes_per_s, alpha = c->link_latency_s;
    const bool mesh = c->topology == PM_TOPO_FULL_MESH;
    switch (a) {
    case PM_AR_RING: return ring_time(p, n, bw, alpha);
    case PM_AR_ONESHOT: return alpha + (mesh ? n / bw : (p - 1) * n / bw);
    case PM_AR_TWOSHOT: return 2.0 * (alpha + (mesh ? n / (p * bw) : (p - 1) * n / (p * bw)));
    case PM_AR_TREE: return 2.0 * ceil(log2((double)p)) * (alpha + n / bw);
    case PM_AR_HIERARCHICAL: {
        const int q = c->devices_per_node, nodes = p / q;
        const double phase = (q - 1) * (c->link_latency_s + n / ((double)q * bw));
        return 2.0 * phase + ring_time(nodes, n / q, c->inter_node_bandwidth_bytes_per_s,
                                       c->inter_node_latency_s);
    }
    case PM_AR_AUTO: break;
    }
    return INFINITY;
}

pm_status pm_allreduce_time(const pm_cluster *c, pm_allreduce_algo algo, double message_bytes,
                            double *time_s, pm_allreduce_algo *used, pm_error *err)
{
    if (!c || !time_s)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL cluster or output");
    if (!(message_bytes >= 0) || !isfinite(message_bytes))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "message size must be finite and >= 0");
    if (c->devices < 1 || (c->topology == PM_TOPO_HIERARCHICAL &&
                           (c->devices_per_node < 1 || c->devices % c->devices_per_node)))
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster", "bad device counts");
    pm_allreduce_algo cands[4];
    int n = 0;
    if (algo != PM_AR_AUTO) {
        bool ok = c->topology == PM_TOPO_RING           ? algo == PM_AR_RING
                  : c->topology == PM_TOPO_HIERARCHICAL ? algo == PM_AR_HIERARCHICAL
                                                        : algo != PM_AR_HIERARCHICAL;
        if (!ok || (int)algo < 0 || algo > PM_AR_HIERARCHICAL)
            return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.allreduce",
                           "algorithm \"%s\" cannot run on topology \"%s\"",
                           pm_allreduce_algo_name(algo), pm_topology_name(c->topology));
        cands[n++] = algo;
    } else if (c->topology == PM_TOPO_RING) {
        cands[n++] = PM_AR_RING;
    } else if (c->topology == PM_TOPO_HIERARCHICAL) {
        cands[n++] = PM_AR_HIERARCHICAL;
    } else {
        cands[n++] = PM_AR_ONESHOT;
        cands[n++] = PM_AR_TWOSHOT;
        cands[n++] = PM_AR_RING;
        cands[n++] = PM_AR_TREE;
    }
    double best = INFINITY;
    pm_allreduce_algo best_a = cands[0];
    for (int i = 0; i < n; i++) {
        double t = algo_time(c, cands[i], message_bytes);
        if (t < best) {
            best = t;
            best_a = cands[i];
        }
    }
    if (c->devices == 1 || !(message_bytes > 0))
        best = 0.0;
    *time_s = best;
    if (used)
        *used = best_a;
    return PM_OK;
}
