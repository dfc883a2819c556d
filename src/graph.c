/*
 * graph.c - the per-device computation graph as a container: nodes and edges, their kinds' and
 * roles' names, and the checks every pass relies on (pm_node_fault, pm_graph_check). The graph
 * is plain data: the builder (build.c) fills it, the insertion pass, the scheduler and the
 * printers operate on it, and other tools may hand the library their own graph (graph_io.c).
 *
 * May call: alloc.c, error.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const node_kind_names[PM_NODE_KIND_COUNT] = {
    "Embedding", "RMSNorm", "MatMul", "RoPE", "SelfAttention", "Elementwise", "AllReduce",
    "Prefetch", "FusedMatMulAllReduce", "AllToAll", "ReduceScatter", "AllGather", "Recv"};

const char *pm_node_kind_name(pm_node_kind k)
{
    return (int)k >= 0 && k < PM_NODE_KIND_COUNT ? node_kind_names[k] : "?";
}

const char *const *pm_node_kind_names(size_t *count)
{
    *count = PM_ARRAY_LEN(node_kind_names);
    return node_kind_names;
}

static const char *const node_role_names[PM_ROLE_COUNT] = {
    "none", "embedding", "attn_norm", "qkv", "rope", "attention", "o", "attn_allreduce",
    "mlp_norm", "gate", "up", "activation", "down", "mlp_allreduce", "final_norm", "lm_head",
    "q_up", "k_up", "v_up", "router", "dispatch", "expert_gate", "expert_up",
    "expert_activation", "expert_down", "combine", "shared_gate", "shared_up",
    "shared_activation", "shared_down", "attn_reduce_scatter", "mlp_reduce_scatter",
    "attn_all_gather", "mlp_all_gather", "head_all_gather", "moe_topk", "moe_align",
    "moe_sum", "act_quant", "stage_recv"};

const char *pm_node_role_name(pm_node_role r)
{
    return (int)r >= 0 && r < PM_ROLE_COUNT ? node_role_names[r] : "?";
}

pm_graph *pm_graph_alloc(void)
{
    return pm_calloc(1, sizeof(pm_graph));
}

void pm_graph_free(pm_graph *g)
{
    if (!g)
        return;
    pm_free(g->nodes);
    pm_free(g->edges);
    pm_free(g);
}

void pm_graph_clear(pm_graph *g)
{
    g->n_nodes = 0;
    g->n_edges = 0;
}

pm_status pm_graph_reserve(pm_graph *g, size_t nodes, size_t edges)
{
    if (nodes > g->cap_nodes) {
        pm_node *nn = pm_realloc(g->nodes, nodes * sizeof *nn);
        if (!nn)
            return PM_ERR_NOMEM;
        g->nodes = nn;
        g->cap_nodes = nodes;
    }
    if (edges > g->cap_edges) {
        pm_edge *ne = pm_realloc(g->edges, edges * sizeof *ne);
        if (!ne)
            return PM_ERR_NOMEM;
        g->edges = ne;
        g->cap_edges = edges;
    }
    return PM_OK;
}

static bool finite_nonneg(double x) { return x >= 0 && x < INFINITY; }

static bool index_ok(int i) { return i >= -1 && i < PM_MAX_GRAPH_NODES; }

const char *pm_node_fault(const pm_node *n)
{
    if ((int)n->kind < 0 || n->kind >= PM_NODE_KIND_COUNT)
        return "op";
    if ((int)n->role < 0 || n->role >= PM_ROLE_COUNT)
        return "role";
    if (n->stream != PM_STREAM_MAIN && n->stream != PM_STREAM_PREFETCH)
        return "stream";
    if ((int)n->dtype < 0 || n->dtype >= PM_DTYPE_COUNT)
        return "dtype";
    if (!index_ok(n->prefetch))
        return "prefetch";
    if (!index_ok(n->consumer))
        return "consumer";
    if (!index_ok(n->trigger))
        return "trigger";
    if (!index_ok(n->overflow))
        return "overflow";
    if (n->chunks < 0)
        return "chunks";
    const struct {
        const char *name;
        double v;
    } q[] = {{"flop", n->flop},         {"act_bytes", n->act_bytes},
             {"weight_bytes", n->weight_bytes}, {"kv_bytes", n->kv_bytes},
             {"l2_bytes", n->l2_bytes}, {"comm_bytes", n->comm_bytes},
             {"m", n->m},               {"k", n->k},
             {"n", n->n},               {"window_bytes", n->window_bytes}};
    for (size_t i = 0; i < PM_ARRAY_LEN(q); i++)
        if (!finite_nonneg(q[i].v))
            return q[i].name;
    return NULL;
}

pm_status pm_graph_check(const pm_graph *g, pm_error *err)
{
    if (!g || (g->n_nodes && !g->nodes) || (g->n_edges && !g->edges) ||
        g->n_nodes > PM_MAX_GRAPH_NODES || g->n_edges > PM_MAX_GRAPH_EDGES)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "not a graph (NULL or too large)");
    const long n = (long)g->n_nodes;
    char path[64];
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *nd = &g->nodes[i];
        const char *bad = pm_node_fault(nd);
        const bool main = nd->stream == PM_STREAM_MAIN;
        if (!bad && nd->prefetch >= n)
            bad = "prefetch";
        if (!bad && nd->prefetch >= 0 && g->nodes[nd->prefetch].kind != PM_NODE_PREFETCH)
            bad = "prefetch";
        if (!bad && (nd->consumer >= n ||
                     (nd->consumer >= 0 && g->nodes[nd->consumer].stream != PM_STREAM_MAIN)))
            bad = "consumer";
        if (!bad && (nd->trigger >= n ||
                     (nd->trigger >= 0 &&
                      !pm_kind_is_collective(g->nodes[nd->trigger].kind) &&
                      g->nodes[nd->trigger].kind != PM_NODE_FUSED_MATMUL_ALLREDUCE)))
            bad = "trigger";
        if (!bad && nd->overflow >= n)
            bad = "overflow";
        if (!bad && nd->kind == PM_NODE_PREFETCH && main)
            bad = "stream";
        if (bad) {
            snprintf(path, sizeof path, "$.nodes[%zu].%s", i, bad);
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, path,
                           "node \"%.32s\": %s is out of range or names the wrong kind of node",
                           nd->name, bad);
        }
    }
    for (size_t e = 0; e < g->n_edges; e++) {
        const pm_edge *ed = &g->edges[e];
        if (ed->from < 0 || ed->from >= n || ed->to < 0 || ed->to >= n ||
            (ed->kind != PM_EDGE_DATA && ed->kind != PM_EDGE_TRIGGER)) {
            snprintf(path, sizeof path, "$.edges[%zu]", e);
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, path,
                           "edge %d -> %d (%d nodes): an index out of range or a bad kind",
                           ed->from, ed->to, (int)n);
        }
    }
    return PM_OK;
}

pm_status pm_graph_add_node(pm_graph *g, const pm_node *node, int *index_out)
{
    if (!g || !node || g->n_nodes >= PM_MAX_GRAPH_NODES || pm_node_fault(node))
        return PM_ERR_INVALID_ARG;
    if (g->n_nodes == g->cap_nodes) {
        pm_status st = pm_graph_reserve(g, g->cap_nodes ? g->cap_nodes * 2 : 64, g->cap_edges);
        if (st != PM_OK)
            return st;
    }
    g->nodes[g->n_nodes] = *node;
    if (index_out)
        *index_out = (int)g->n_nodes;
    g->n_nodes++;
    return PM_OK;
}

pm_status pm_graph_add_edge(pm_graph *g, int from, int to, pm_edge_kind kind)
{
    if (!g || from < 0 || to < 0 || (size_t)from >= g->n_nodes || (size_t)to >= g->n_nodes ||
        (kind != PM_EDGE_DATA && kind != PM_EDGE_TRIGGER) || g->n_edges >= PM_MAX_GRAPH_EDGES)
        return PM_ERR_INVALID_ARG;
    if (g->n_edges == g->cap_edges) {
        pm_status st = pm_graph_reserve(g, g->cap_nodes, g->cap_edges ? g->cap_edges * 2 : 64);
        if (st != PM_OK)
            return st;
    }
    g->edges[g->n_edges++] = (pm_edge){from, to, kind};
    return PM_OK;
}
