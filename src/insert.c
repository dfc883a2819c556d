/*
 * insert.c - the paper's Algorithm 1. For each communication node, visit its successors
 * breadth-first (along data edges) until the next communication node; each MatMul (weights) or
 * SelfAttention (KV cache, without the position being appended) adds M(n) to the window's sum,
 * and while the sum stays strictly below the capacity C a prefetch node is inserted on the
 * prefetch stream, triggered by the communication node's start. At the first node that would
 * reach C, the pass stops visiting for that communication node. Each window has its own budget:
 * everything prefetched under one allreduce is consumed before the next one starts.
 *
 * Generalised to mixture-of-experts layers (DESIGN.md section 12): every collective, allreduce
 * or all-to-all, is a communication node, with the same strict invariant. A prefetch may fetch
 * only what is known when its collective starts: a routed expert's weights (pm_node.routed)
 * are known once the router has run, so only a window opened by an all-to-all (the dispatch,
 * which follows the router) may prefetch them; a window opened by an allreduce stops at a
 * routed node, which is recorded as its overflow (explain says why).
 *
 * Sequence parallelism (issue 44): a reduce-scatter's window runs through the all-gather that
 * follows it instead of ending there, when nothing prefetchable lies between them (sequence
 * parallelism's pair: only a norm between, the all-gather carrying its output). The weights
 * and KV behind it are known when the reduce-scatter starts, so the prefetch stream need not
 * idle under the reduce-scatter. The all-gather a window runs through opens none of its own
 * (pm_node.window_bytes 0): the reduce-scatter's bytes stay in L2 until their consumers after
 * it, so the pair has one budget under the same strict invariant. An all-gather no such window
 * reaches (the first layer's, after the embedding) opens its own, and so does one with
 * prefetchable work before it: beside data-parallel attention a dense layer's reduce-scatter
 * after Down and the next layer's all-gather after norm2 have the whole attention between
 * them, two collectives of their own (step_plan.c keys its periods so).
 *
 * May call: alloc.c, error.c, graph.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool is_comm(pm_node_kind k)
{
    return pm_kind_is_collective(k) || k == PM_NODE_FUSED_MATMUL_ALLREDUCE;
}

double pm_accelerator_l2_window_bytes(const pm_accelerator *a)
{
    return a->l2_capacity_bytes * a->l2_usable_frac;
}

double pm_node_prefetchable_bytes(const pm_node *n)
{
    if (n->stream != PM_STREAM_MAIN)
        return 0.0;
    if (n->kind == PM_NODE_MATMUL)
        return n->weight_bytes;
    if (n->kind == PM_NODE_ATTENTION)
        return n->kv_bytes;
    return 0.0;
}

/* Per input node: the communication node that prefetches it, or -1. */
typedef struct plan {
    int *trigger_of;   /* per input node */
    int *overflow_of;  /* per communication node: first node that did not fit */
    double *window;    /* per communication node: bytes prefetched */
    int *queue;
    int *seen;         /* per node: 1 + the communication node whose window visited it */
    char *merged;      /* per node: an all-gather a reduce-scatter's window runs through */
} plan;

/* Whether the window of communication node c runs through communication node v. */
static bool runs_through(const pm_graph *in, size_t c, int v)
{
    return in->nodes[c].kind == PM_NODE_REDUCE_SCATTER && in->nodes[v].kind == PM_NODE_ALL_GATHER;
}

static pm_status visit_window(const pm_graph *in, size_t c, double cap, const size_t *first_edge,
                              const int *succ, plan *pl)
{
    size_t head = 0, tail = 0;
    /* Visited marks carry the window's stamp, so nothing is cleared between windows: the pass
     * costs the nodes and edges the windows visit, linear in the graph for a chain. */
    const int stamp = (int)c + 1;
    double sum = 0.0;
    bool passed = false; /* a prefetchable node visited: no all-gather is run through after it */
    pl->queue[tail++] = (int)c;
    pl->seen[c] = stamp;
    while (head < tail) {
        int u = pl->queue[head++];
        for (size_t e = first_edge[u]; e < first_edge[u + 1]; e++) {
            int v = succ[e];
            if (pl->seen[v] == stamp)
                continue;
            pl->seen[v] = stamp;
            const pm_node *nv = &in->nodes[v];
            if (nv->stream != PM_STREAM_MAIN)
                continue;
            if (is_comm(nv->kind)) {
                if (!runs_through(in, c, v) || passed)
                    continue; /* the window ends at the next communication node */
                pl->merged[v] = 1;
                pl->queue[tail++] = v;
                continue;
            }
            double m = pm_node_prefetchable_bytes(nv);
            passed = passed || m > 0;
            if (m > 0 && pl->trigger_of[v] < 0) {
                if (!(sum + m < cap) || (nv->routed && in->nodes[c].kind != PM_NODE_ALLTOALL)) {
                    pl->overflow_of[c] = v;
                    pl->window[c] = sum;
                    return PM_OK;
                }
                sum += m;
                pl->trigger_of[v] = (int)c;
            }
            pl->queue[tail++] = v;
        }
    }
    pl->window[c] = sum;
    return PM_OK;
}

/* Successor lists of the data edges, compressed, in edge order: the successors of node u are
 * succ[first_edge[u] .. first_edge[u + 1]). first_edge (n + 1 entries) comes zeroed. */
static pm_status build_successors(const pm_graph *in, size_t *first_edge, int *succ)
{
    const size_t n = in->n_nodes;
    for (size_t e = 0; e < in->n_edges; e++)
        if (in->edges[e].kind == PM_EDGE_DATA)
            first_edge[in->edges[e].from + 1]++;
    for (size_t i = 0; i < n; i++)
        first_edge[i + 1] += first_edge[i];
    size_t *fill = pm_calloc(n, sizeof *fill);
    if (!fill)
        return PM_ERR_NOMEM;
    for (size_t e = 0; e < in->n_edges; e++) {
        const pm_edge *ed = &in->edges[e];
        if (ed->kind == PM_EDGE_DATA)
            succ[first_edge[ed->from] + fill[ed->from]++] = ed->to;
    }
    pm_free(fill);
    return PM_OK;
}

/* Algorithm 1 over every communication node's window; returns the prefetches to insert. */
static size_t plan_windows(const pm_graph *in, double cap, const size_t *first_edge,
                           const int *succ, plan *pl)
{
    const size_t n = in->n_nodes;
    for (size_t i = 0; i < n; i++) {
        pl->trigger_of[i] = -1;
        pl->overflow_of[i] = -1;
    }
    size_t n_prefetch = 0;
    for (size_t i = 0; i < n; i++)
        if (in->nodes[i].stream == PM_STREAM_MAIN && is_comm(in->nodes[i].kind) &&
            !pl->merged[i])
            visit_window(in, i, cap, first_edge, succ, pl);
    for (size_t i = 0; i < n; i++)
        n_prefetch += pl->trigger_of[i] >= 0;
    return n_prefetch;
}

/* The nodes in their new order: every prefetch node right after its trigger, so that a trigger
 * precedes its prefetches and a prefetch its consumer. map[i] receives the output index of
 * input node i, fresh[j] is set for the prefetch nodes added. Index fields still hold input
 * indices. */
static void emit_nodes(const pm_graph *in, const plan *pl, int *map, char *fresh, pm_graph *out)
{
    const size_t n = in->n_nodes;
    /* The prefetched nodes grouped by trigger, in node order within a group (a counting sort
     * into `order`), so emitting them costs one pass. The arrays are borrowed: queue holds
     * `order`, seen the group bounds. */
    int *order = pl->queue, *first = pl->seen;
    for (size_t i = 0; i < n; i++)
        first[i] = 0;
    for (size_t v = 0; v < n; v++)
        if (pl->trigger_of[v] >= 0)
            first[pl->trigger_of[v]]++;
    int acc = 0;
    for (size_t i = 0; i < n; i++) {
        const int k = first[i];
        first[i] = acc;
        acc += k;
    }
    for (size_t v = 0; v < n; v++)
        if (pl->trigger_of[v] >= 0)
            order[first[pl->trigger_of[v]]++] = (int)v;
    /* first[c] now holds the end of group c, which is where group c + 1 starts. */
    for (size_t i = 0; i < n; i++) {
        map[i] = (int)out->n_nodes;
        out->nodes[out->n_nodes++] = in->nodes[i];
        if (!(in->nodes[i].stream == PM_STREAM_MAIN && is_comm(in->nodes[i].kind)))
            continue;
        pm_node *c = &out->nodes[map[i]];
        c->window_bytes = pl->window[i];
        c->overflow = pl->overflow_of[i]; /* remapped below */
        for (int k = i > 0 ? first[i - 1] : 0; k < first[i]; k++) {
            const size_t v = (size_t)order[k];
            pm_node p = {0};
            p.kind = PM_NODE_PREFETCH;
            p.stream = PM_STREAM_PREFETCH;
            p.layer = in->nodes[v].layer;
            p.dtype = in->nodes[v].dtype;
            /* A label only (consumer links the two): cut between UTF-8 characters if long. */
            char label[sizeof p.name + 8];
            snprintf(label, sizeof label, "PF.%s", in->nodes[v].name);
            pm_strlcpy(p.name, label, sizeof p.name);
            p.weight_bytes = in->nodes[v].weight_bytes;
            p.kv_bytes = in->nodes[v].kv_bytes;
            p.prefetch = -1;
            p.consumer = (int)v; /* remapped below */
            p.trigger = (int)i; /* remapped below */
            p.overflow = -1;
            fresh[out->n_nodes] = 1;
            out->nodes[out->n_nodes++] = p;
        }
    }
}

/* Every index field still holds input indices: remap them all, then link consumers. */
static void link_nodes(const int *map, pm_graph *out)
{
    for (size_t i = 0; i < out->n_nodes; i++) {
        pm_node *nd = &out->nodes[i];
        if (nd->prefetch >= 0)
            nd->prefetch = map[nd->prefetch];
        if (nd->consumer >= 0)
            nd->consumer = map[nd->consumer];
        if (nd->trigger >= 0)
            nd->trigger = map[nd->trigger];
        if (nd->overflow >= 0)
            nd->overflow = map[nd->overflow];
    }
    for (size_t i = 0; i < out->n_nodes; i++) {
        const pm_node *nd = &out->nodes[i];
        if (nd->kind == PM_NODE_PREFETCH && nd->consumer >= 0 && out->nodes[nd->consumer].prefetch < 0) {
            pm_node *cons = &out->nodes[nd->consumer];
            cons->prefetch = (int)i;
            cons->l2_bytes = pm_node_prefetchable_bytes(cons);
        }
    }
}

/* The input's edges, remapped, then each new prefetch's trigger and data edges. */
static void emit_edges(const pm_graph *in, const int *map, const char *fresh, pm_graph *out)
{
    for (size_t e = 0; e < in->n_edges; e++) {
        pm_edge ed = in->edges[e];
        out->edges[out->n_edges++] = (pm_edge){map[ed.from], map[ed.to], ed.kind};
    }
    for (size_t i = 0; i < out->n_nodes; i++) {
        const pm_node *nd = &out->nodes[i];
        if (nd->kind != PM_NODE_PREFETCH || nd->trigger < 0 || !fresh[i])
            continue;
        out->edges[out->n_edges++] = (pm_edge){nd->trigger, (int)i, PM_EDGE_TRIGGER};
        out->edges[out->n_edges++] = (pm_edge){(int)i, nd->consumer, PM_EDGE_DATA};
    }
}

pm_status pm_insert_prefetch(const pm_graph *in, double capacity_bytes, pm_graph *out,
                             pm_error *err)
{
    if (!in || !out || in == out || !(capacity_bytes >= 0))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_insert_prefetch");
    pm_status ck = pm_graph_check(in, err);
    if (ck != PM_OK)
        return ck;
    if (in->n_nodes + in->n_nodes > PM_MAX_GRAPH_NODES)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "%zu nodes: the graph with its prefetches could exceed %d nodes",
                       in->n_nodes, PM_MAX_GRAPH_NODES);
    const size_t n = in->n_nodes;
    pm_graph_clear(out);
    if (n == 0)
        return PM_OK;
    pm_status st = PM_ERR_NOMEM;
    plan pl = {0};
    char *fresh = NULL;
    size_t *first_edge = pm_calloc(n + 1, sizeof *first_edge);
    int *succ = pm_malloc((in->n_edges + 1) * sizeof *succ);
    int *map = pm_malloc(n * sizeof *map);
    pl.trigger_of = pm_malloc(n * sizeof *pl.trigger_of);
    pl.overflow_of = pm_malloc(n * sizeof *pl.overflow_of);
    pl.window = pm_calloc(n, sizeof *pl.window);
    pl.queue = pm_malloc(n * sizeof *pl.queue);
    pl.seen = pm_calloc(n, sizeof *pl.seen); /* no stamp yet: every window sees 0 */
    pl.merged = pm_calloc(n, sizeof *pl.merged);
    if (!first_edge || !succ || !map || !pl.trigger_of || !pl.overflow_of || !pl.window ||
        !pl.queue || !pl.seen || !pl.merged)
        goto done;
    if (build_successors(in, first_edge, succ) != PM_OK)
        goto done;
    const size_t n_prefetch = plan_windows(in, capacity_bytes, first_edge, succ, &pl);
    if ((st = pm_graph_reserve(out, n + n_prefetch, in->n_edges + 2 * n_prefetch)) != PM_OK)
        goto done;
    st = PM_ERR_NOMEM;
    fresh = pm_calloc(n + n_prefetch, 1);
    if (!fresh)
        goto done;
    emit_nodes(in, &pl, map, fresh, out);
    link_nodes(map, out);
    emit_edges(in, map, fresh, out);
    st = PM_OK;
done:
    pm_free(first_edge);
    pm_free(succ);
    pm_free(map);
    pm_free(pl.trigger_of);
    pm_free(pl.overflow_of);
    pm_free(pl.window);
    pm_free(pl.merged);
    pm_free(pl.queue);
    pm_free(pl.seen);
    pm_free(fresh);
    if (st != PM_OK) {
        pm_graph_clear(out);
        return pm_fail(err, st, NULL, NULL, "out of memory in the insertion pass");
    }
    return PM_OK;
}
