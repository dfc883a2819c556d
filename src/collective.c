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
 *   ring_pipelined  alpha + 2(p-1) n/(pB): one start-up, the ring's bandwidth term (the
 *                paper's design-space model, "start-up latency + bytes / link bandwidth" on a
 *                ring; also aiconfigurator's and llm-analysis's form); never chosen by auto
 *
 * B is the link bandwidth times the cluster's allreduce_efficiency_frac (the bus bandwidth a
 * large allreduce measures, over the link's). Decode messages are small, so alpha dominates: it
 * is a first-class input. This file also owns
 * the topologies' and algorithms' names and the rule of which algorithm a topology can run
 * (pm_allreduce_algo_allowed), which the cluster check in check.c applies.
 *
 * Sequence parallelism splits each allreduce into its two halves, a reduce-scatter and an
 * all-gather, each with its own start-up (pm_rs_model_init; the rule per algorithm is
 * pm_reduce_scatter_time's comment in the public header): where the allreduce is itself a
 * reduce-scatter followed by an all-gather (ring, twoshot, hierarchical) the halves sum to it
 * exactly; one-shot and tree allreduces move whole messages, which the halves do not.
 *
 * May call: error.c, plan.c.
 */
#include <math.h>

#include "internal.h"

static const char *const topo_names[] = {"ring", "full_mesh", "switch", "hierarchical"};
static const char *const algo_names[] = {"auto", "ring", "oneshot", "twoshot", "tree",
                                         "hierarchical", "ring_pipelined"};

const char *pm_topology_name(pm_topology t)
{
    return (int)t >= 0 && (size_t)t < PM_ARRAY_LEN(topo_names) ? topo_names[t] : "?";
}

const char *pm_allreduce_algo_name(pm_allreduce_algo a)
{
    return (int)a >= 0 && (size_t)a < PM_ARRAY_LEN(algo_names) ? algo_names[a] : "?";
}

const char *const *pm_topology_names(size_t *count)
{
    *count = PM_ARRAY_LEN(topo_names);
    return topo_names;
}

const char *const *pm_allreduce_algo_names(size_t *count)
{
    *count = PM_ARRAY_LEN(algo_names);
    return algo_names;
}

/* Every algorithm's time is affine in the message size: t(n) = fixed + per_byte * n. */
typedef struct affine {
    double fixed, per_byte;
} affine;

/* The shares a device's busiest link carries when the device sends one to each of the other
 * q - 1 devices of its group: over a full mesh each goes over a link of its own (1); behind a
 * switch all go through the device's one port, and in a ring node's phases over its one link
 * to the next device (q - 1). The one rule for every collective that sends to its peers at
 * once: one-shot, two-shot, the hierarchical allreduce's intra-node phases, the all-to-all over
 * a mesh or a switch (a2a_group; around a ring a share goes on past its first hop). */
static double link_shares(pm_topology t, int q)
{
    return q <= 1 ? 0.0 : t == PM_TOPO_FULL_MESH ? 1.0 : q - 1.0;
}

static affine ring_coeffs(int p, double bw, double alpha)
{
    if (p <= 1)
        return (affine){0.0, 0.0};
    return (affine){2.0 * (p - 1) * alpha, 2.0 * (p - 1) / (p * bw)};
}

static affine algo_coeffs(const pm_cluster *c, pm_allreduce_algo a)
{
    const int p = c->devices;
    /* The bytes move at the share of the link an allreduce reaches (its measured bus
     * bandwidth); across nodes at the inter-node bandwidth as given. */
    const double eff = c->allreduce_efficiency_frac > 0 ? c->allreduce_efficiency_frac : 1.0;
    const double bw = c->link_bandwidth_bytes_per_s * eff, alpha = c->link_latency_s;
    const double shares = link_shares(c->topology, p);
    switch (a) {
    case PM_AR_RING: return ring_coeffs(p, bw, alpha);
    case PM_AR_ONESHOT: return (affine){alpha, shares / bw};
    case PM_AR_TWOSHOT: return (affine){2.0 * alpha, 2.0 * shares / (p * bw)};
    case PM_AR_TREE: {
        const double steps = 2.0 * ceil(log2((double)p));
        return (affine){steps * alpha, steps / bw};
    }
    case PM_AR_HIERARCHICAL: {
        /* Intra-node reduce-scatter and all-gather around an inter-node ring of n/q bytes.
         * The intra-node phases step around a ring (q - 1 steps each), or, over a full mesh
         * or a switch, take one step each: every device sends its n/q shares to the others at
         * once, over a link each (a mesh) or its one link (a switch). */
        const int q = c->devices_per_node, nodes = p / q;
        const affine ring = ring_coeffs(nodes, c->inter_node_bandwidth_bytes_per_s,
                                        c->inter_node_latency_s);
        const pm_topology in = c->intra_node_topology;
        const double steps = q <= 1 ? 0.0 : in == PM_TOPO_RING ? q - 1.0 : 1.0;
        return (affine){2.0 * steps * alpha + ring.fixed,
                        2.0 * link_shares(in, q) / ((double)q * bw) + ring.per_byte / q};
    }
    case PM_AR_RING_PIPELINED:
        /* One start-up for the whole collective (the steps are pipelined), the ring's bytes. */
        return p <= 1 ? (affine){0.0, 0.0} : (affine){alpha, 2.0 * (p - 1) / (p * bw)};
    case PM_AR_AUTO: break;
    }
    return (affine){INFINITY, 0.0};
}

bool pm_allreduce_algo_allowed(pm_topology topology, pm_allreduce_algo algo)
{
    if ((int)algo < 0 || algo > PM_AR_RING_PIPELINED)
        return false;
    switch (topology) {
    case PM_TOPO_RING:
        return algo == PM_AR_AUTO || algo == PM_AR_RING || algo == PM_AR_RING_PIPELINED;
    case PM_TOPO_HIERARCHICAL: return algo == PM_AR_AUTO || algo == PM_AR_HIERARCHICAL;
    case PM_TOPO_FULL_MESH:
    case PM_TOPO_SWITCH: return algo != PM_AR_HIERARCHICAL;
    }
    return false; /* not a topology */
}

pm_status pm_allreduce_algo_check(pm_topology topology, pm_allreduce_algo algo, pm_error *err)
{
    if ((int)topology < 0 || topology > PM_TOPO_HIERARCHICAL || (int)algo < 0 ||
        algo > PM_AR_RING_PIPELINED)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "$.cluster", "bad topology or algorithm");
    if (!pm_allreduce_algo_allowed(topology, algo))
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.allreduce",
                       "algorithm \"%s\" cannot run on topology \"%s\"",
                       pm_allreduce_algo_name(algo), pm_topology_name(topology));
    return PM_OK;
}

/* Candidate algorithms for a requested one on the cluster's topology; 0 when it cannot run. */
static int candidates(const pm_cluster *c, pm_allreduce_algo algo, pm_allreduce_algo *cands)
{
    int n = 0;
    if (algo != PM_AR_AUTO) {
        if (!pm_allreduce_algo_allowed(c->topology, algo))
            return 0;
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
    return n;
}

/* The reduce-scatter's (and the all-gather's) time with algorithm a: see the comment of
 * pm_reduce_scatter_time in the public header. */
static affine rs_coeffs(const pm_cluster *c, pm_allreduce_algo a)
{
    const int p = c->devices;
    const double eff = c->allreduce_efficiency_frac > 0 ? c->allreduce_efficiency_frac : 1.0;
    const double bw = c->link_bandwidth_bytes_per_s * eff, alpha = c->link_latency_s;
    if (p <= 1)
        return (affine){0.0, 0.0};
    switch (a) {
    case PM_AR_RING: return (affine){(p - 1) * alpha, (p - 1) / (p * bw)};
    case PM_AR_ONESHOT:
    case PM_AR_TWOSHOT: return (affine){alpha, link_shares(c->topology, p) / (p * bw)};
    case PM_AR_TREE: return (affine){ceil(log2((double)p)) * alpha, (p - 1.0) / (p * bw)};
    case PM_AR_HIERARCHICAL: {
        /* Half of each phase of the hierarchical allreduce: the intra-node reduce-scatter, then
         * the inter-node ring's reduce-scatter of n/q. */
        const affine ar = algo_coeffs(c, PM_AR_HIERARCHICAL);
        return (affine){ar.fixed / 2.0, ar.per_byte / 2.0};
    }
    case PM_AR_RING_PIPELINED: return (affine){alpha, (p - 1.0) / (p * bw)};
    case PM_AR_AUTO: break;
    }
    return (affine){INFINITY, 0.0};
}

typedef affine (*coeffs_fn)(const pm_cluster *c, pm_allreduce_algo a);

static void model_init(const pm_cluster *c, pm_allreduce_algo algo, coeffs_fn coeffs,
                       pm_ar_model *m)
{
    pm_allreduce_algo cands[4];
    const int n = candidates(c, algo, cands);
    m->single_device = c->devices == 1;
    m->n = 0;
    for (int i = 0; i < n; i++) {
        const affine f = coeffs(c, cands[i]);
        /* A candidate no faster in either term than an earlier one is never picked (for n >= 0
         * bytes its time is no less, and ties go to the earlier): left out, the same algorithm
         * and time come out of pm_ar_model_time, in fewer steps (it runs per chunk count of
         * every fused node). */
        bool dominated = false;
        for (int j = 0; j < m->n && !dominated; j++)
            dominated = m->fixed[j] <= f.fixed && m->per_byte[j] <= f.per_byte;
        if (dominated)
            continue;
        m->algo[m->n] = cands[i];
        m->fixed[m->n] = f.fixed;
        m->per_byte[m->n] = f.per_byte;
        m->n++;
    }
}

void pm_ar_model_init(const pm_cluster *c, pm_allreduce_algo algo, pm_ar_model *m)
{
    model_init(c, algo, algo_coeffs, m);
}

void pm_rs_model_init(const pm_cluster *c, pm_allreduce_algo algo, pm_ar_model *m)
{
    model_init(c, algo, rs_coeffs, m);
}

void pm_ar_model_init_fused(const pm_cluster *c, pm_ar_model *m)
{
    pm_cluster f = *c;
    if (c->fused_latency_s > 0)
        f.link_latency_s = c->fused_latency_s;
    pm_ar_model_init(&f, c->algorithm, m);
}

double pm_ar_model_time(const pm_ar_model *m, double bytes, pm_allreduce_algo *used)
{
    double best = INFINITY;
    int bi = 0;
    for (int i = 0; i < m->n; i++) {
        const double t = m->fixed[i] + m->per_byte[i] * bytes;
        if (t < best) {
            best = t;
            bi = i;
        }
    }
    if (used && m->n > 0)
        *used = m->algo[bi];
    return m->single_device || !(bytes > 0) ? 0.0 : best;
}

/* The bytes one device sends in one allreduce of n bytes with the algorithm the model m picks
 * for n: the data each algorithm's bandwidth term moves, per device. */
double pm_ar_link_bytes(const pm_cluster *c, const pm_ar_model *m, double n)
{
    pm_allreduce_algo used = PM_AR_AUTO;
    if (m->single_device || m->n == 0 || !(n > 0))
        return 0.0;
    pm_ar_model_time(m, n, &used);
    const double p = c->devices;
    switch (used) {
    case PM_AR_RING:
    case PM_AR_RING_PIPELINED:
    case PM_AR_TWOSHOT: return 2.0 * (p - 1.0) / p * n;
    case PM_AR_ONESHOT: return (p - 1.0) * n;
    case PM_AR_TREE: return 2.0 * ceil(log2(p)) * n;
    case PM_AR_HIERARCHICAL: {
        const double q = c->devices_per_node, nodes = p / q;
        return 2.0 * (q - 1.0) / q * n + 2.0 * (nodes - 1.0) / nodes * (n / q);
    }
    case PM_AR_AUTO: break;
    }
    return 0.0;
}

pm_status pm_allreduce_efficiency_check(const pm_cluster *c, pm_error *err)
{
    if (!(c->allreduce_efficiency_frac >= 0.0 && c->allreduce_efficiency_frac <= 1.0))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.allreduce_efficiency",
                       "must be in (0, 1] (0 acts as 1; got %g)", c->allreduce_efficiency_frac);
    return PM_OK;
}

/* The bytes one device sends in one reduce-scatter (or all-gather) of n bytes with the
 * algorithm m (pm_rs_model_init) picks: half of the allreduce's where it is RS + AG; (p-1)/p n
 * for the direct and the recursive-halving forms. */
double pm_rs_link_bytes(const pm_cluster *c, const pm_ar_model *m, double n)
{
    pm_allreduce_algo used = PM_AR_AUTO;
    if (m->single_device || m->n == 0 || !(n > 0))
        return 0.0;
    pm_ar_model_time(m, n, &used);
    const double p = c->devices;
    if (used == PM_AR_HIERARCHICAL) {
        const double q = c->devices_per_node, nodes = p / q;
        return (q - 1.0) / q * n + (nodes - 1.0) / nodes * (n / q);
    }
    return (p - 1.0) / p * n;
}

/* The checks of a collective's arguments and cluster, shared by the allreduce and its
 * halves. */
static pm_status collective_check(const pm_cluster *c, pm_allreduce_algo algo,
                                  double message_bytes, const double *time_s, pm_error *err)
{
    if (!c || !time_s)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL cluster or output");
    if (!(message_bytes >= 0) || !isfinite(message_bytes))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "message size must be finite and >= 0");
    pm_status st = pm_allreduce_algo_check(c->topology, algo, err);
    if (st != PM_OK)
        return st;
    if (c->devices < 1 || (c->topology == PM_TOPO_HIERARCHICAL &&
                           (c->devices_per_node < 1 || c->devices % c->devices_per_node)))
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster", "bad device counts");
    const bool hier = c->topology == PM_TOPO_HIERARCHICAL;
    if (c->devices > 1 &&
        (!(c->link_bandwidth_bytes_per_s > 0 && c->link_bandwidth_bytes_per_s < INFINITY) ||
         !(c->link_latency_s >= 0 && c->link_latency_s < INFINITY) ||
         (hier && (!(c->inter_node_bandwidth_bytes_per_s > 0 &&
                     c->inter_node_bandwidth_bytes_per_s < INFINITY) ||
                   !(c->inter_node_latency_s >= 0 && c->inter_node_latency_s < INFINITY)))))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster",
                       "link bandwidths must be finite and > 0 and latencies finite and >= 0");
    return pm_allreduce_efficiency_check(c, err);
}

static pm_status collective_time(const pm_cluster *c, pm_allreduce_algo algo, coeffs_fn coeffs,
                                 const char *what, double message_bytes, double *time_s,
                                 pm_allreduce_algo *used, pm_error *err)
{
    pm_status st = collective_check(c, algo, message_bytes, time_s, err);
    if (st != PM_OK)
        return st;
    pm_ar_model m;
    model_init(c, algo, coeffs, &m);
    const double t = pm_ar_model_time(&m, message_bytes, used);
    if (!(t >= 0 && t < INFINITY))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster",
                       "the %s time of %g bytes is not finite", what, message_bytes);
    *time_s = t;
    return PM_OK;
}

pm_status pm_allreduce_time(const pm_cluster *c, pm_allreduce_algo algo, double message_bytes,
                            double *time_s, pm_allreduce_algo *used, pm_error *err)
{
    return collective_time(c, algo, algo_coeffs, "allreduce", message_bytes, time_s, used, err);
}

pm_status pm_reduce_scatter_time(const pm_cluster *c, pm_allreduce_algo algo,
                                 double message_bytes, double *time_s, pm_allreduce_algo *used,
                                 pm_error *err)
{
    return collective_time(c, algo, rs_coeffs, "reduce-scatter", message_bytes, time_s, used,
                           err);
}

pm_status pm_all_gather_time(const pm_cluster *c, pm_allreduce_algo algo, double message_bytes,
                             double *time_s, pm_allreduce_algo *used, pm_error *err)
{
    return collective_time(c, algo, rs_coeffs, "all-gather", message_bytes, time_s, used, err);
}

/* ---------------------------------------------------------------- all-to-all (MoE) */

/* The all-to-all among q ranks of r (q <= r; all r over a flat topology, a node's over a
 * hierarchical one), each rank sending a share of n / r to each of the others, as the ranks
 * connect: its start-ups and its busiest link's bytes per byte of n. Over a full mesh or behind
 * a switch one step, the q - 1 shares over a link each or through the one port (link_shares);
 * around a ring (one direction) the share for the rank d away goes d hops, so each link
 * carries sum_d d = q (q - 1) / 2 shares, in q - 1 steps. */
static affine a2a_group(pm_topology t, int q, int r, double bw, double alpha)
{
    if (q <= 1)
        return (affine){0.0, 0.0};
    if (t == PM_TOPO_RING)
        return (affine){(q - 1) * alpha, q * (q - 1.0) / (2.0 * r * bw)};
    return (affine){alpha, link_shares(t, q) / (r * bw)};
}

void pm_a2a_model_init(const pm_cluster *c, pm_a2a_model *m)
{
    const int r = pm_cluster_ep(c);
    m->ranks = r;
    m->fixed = m->per_byte = 0.0;
    if (r <= 1)
        return;
    const double eff = c->a2a_efficiency_frac > 0 ? c->a2a_efficiency_frac : 1.0;
    const double bw = c->link_bandwidth_bytes_per_s * eff;
    const double alpha = c->a2a_latency_s > 0 ? c->a2a_latency_s : c->link_latency_s;
    if (c->topology != PM_TOPO_HIERARCHICAL) {
        const affine g = a2a_group(c->topology, r, r, bw, alpha);
        m->fixed = g.fixed;
        m->per_byte = g.per_byte;
        return;
    }
    /* q ranks share a node (a rank's devices / devices per node); the intra-node and the
     * inter-node shares go over different links at the same time: inside the node as its
     * devices connect (a2a_group), the r - q for other nodes all out by the device's NIC, the
     * longer of the two. */
    const int tp = c->devices / r > 0 ? c->devices / r : 1;
    int q = c->devices_per_node > tp ? c->devices_per_node / tp : 1;
    if (q > r)
        q = r;
    const double bw_inter = c->inter_node_bandwidth_bytes_per_s * eff;
    const affine intra = a2a_group(c->intra_node_topology, q, r, bw, alpha);
    const double inter = (double)(r - q) / (r * bw_inter);
    const double inter_s =
        r > q ? (c->a2a_latency_s > 0 ? c->a2a_latency_s : c->inter_node_latency_s) : 0.0;
    m->per_byte = intra.per_byte > inter ? intra.per_byte : inter;
    m->fixed = intra.fixed > inter_s ? intra.fixed : inter_s;
}

double pm_a2a_model_time(const pm_a2a_model *m, double bytes)
{
    return m->ranks <= 1 || !(bytes > 0) ? 0.0 : m->fixed + m->per_byte * bytes;
}

double pm_a2a_link_bytes(const pm_cluster *c, double n)
{
    const int r = pm_cluster_ep(c);
    return r <= 1 || !(n > 0) ? 0.0 : n * (r - 1.0) / r;
}

pm_status pm_alltoall_time(const pm_cluster *c, double message_bytes, double *time_s,
                           pm_error *err)
{
    if (!c || !time_s || !(message_bytes >= 0) || !isfinite(message_bytes) ||
        (int)c->topology < 0 || c->topology > PM_TOPO_HIERARCHICAL)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_alltoall_time");
    pm_a2a_model m;
    pm_a2a_model_init(c, &m);
    *time_s = pm_a2a_model_time(&m, message_bytes);
    if (!(*time_s >= 0 && *time_s < INFINITY))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster",
                       "the all-to-all time of %g bytes is not finite", message_bytes);
    return PM_OK;
}

/* A send between pipeline stages (issue 44): alpha + bytes / B over the link of the level it
 * crosses, the inter-node link's (NIC) between nodes, the device link's inside one
 * (aiconfigurator's P2P, GenZ's message pass: reference serving-parallelism.md section 2). One
 * message, one hop: no collective algorithm, no efficiency factor. */
double pm_p2p_time(const pm_cluster *c, bool inter_node, double bytes)
{
    if (!(bytes > 0))
        return 0.0;
    if (inter_node)
        return c->inter_node_latency_s + bytes / c->inter_node_bandwidth_bytes_per_s;
    return c->link_latency_s + bytes / c->link_bandwidth_bytes_per_s;
}

/* ---------------------------------------------------------------- disaggregated KV transfer */

/* A request's KV cache from a prefill device to a decode instance (issue 45; reference
 * serving-parallelism.md section 4): alpha + bytes / B, inference-sim's pd_events.go, with B
 * shared among the transfers in flight on the link. At lambda transfers per second each of b
 * bytes, c = lambda (alpha + b c / B) transfers are in flight (Little's law over the shared
 * link), c = lambda alpha / (1 - lambda b / B), at least 1: X = b max(1, c) / B. Whole, the
 * transfer starts when the prefill of D seconds ends and exposes alpha + X; layer-streamed
 * (LLMServingSim), layer k's share leaves when the prefill has computed it (k D / L), so the
 * link ends at max(D + X / L, D / L + X) and exposes alpha + max(X / L, X - D (L - 1) / L).
 * INFINITY when the link cannot carry lambda b bytes/s. */
double pm_kv_transfer_time(const pm_kv_transfer *t, double *in_flight)
{
    const double load = t->rate_per_s * t->bytes / t->bandwidth_bytes_per_s;
    if (in_flight)
        *in_flight = INFINITY;
    if (!(load < 1.0))
        return INFINITY;
    double c = t->rate_per_s * t->latency_s / (1.0 - load);
    c = c > 1.0 ? c : 1.0;
    if (in_flight)
        *in_flight = c;
    const double x = t->bytes * c / t->bandwidth_bytes_per_s;
    if (!t->layer_streamed || t->layers < 2)
        return t->latency_s + x;
    const double L = t->layers, one = x / L, tail = x - t->prefill_s * (L - 1.0) / L;
    return t->latency_s + (one > tail ? one : tail);
}
