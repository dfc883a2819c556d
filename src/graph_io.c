/*
 * graph_io.c - the graph as text: JSON (nodes and edges, readable back with
 * pm_graph_from_json so other tools can hand the library their own graph) and Graphviz DOT
 * (main stream in one column, prefetches beside it, trigger edges dashed).
 *
 * May call: alloc.c, dtype.c, error.c, graph.c, json.c, json_syntax.c, text.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const edge_names[] = {"data", "trigger"};
static const char *const stream_names[] = {"main", "prefetch"};

/* Adds a double that reads back bit for bit. cJSON prints 15 significant digits whenever they
 * come within a relative DBL_EPSILON of the value, which can lose the last bit (6.288...e+50
 * came back one unit in the last place off, found by fuzz/fuzz_graph.c); here the shortest of
 * 15, 16 and 17 digits that parses back exactly is written. Not-a-number and infinities, which
 * JSON cannot hold, are written as null, as cJSON does. */
static bool add_double(cJSON *o, const char *key, double v)
{
    if (!isfinite(v))
        return cJSON_AddNullToObject(o, key) != NULL;
    char buf[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        double back = strtod(buf, NULL);
        if (memcmp(&back, &v, sizeof v) == 0)
            break;
    }
    /* JSON's decimal point is '.', whatever the locale of the host program says. */
    for (char *p = buf; *p; p++)
        if (!strchr("0123456789+-eE", *p))
            *p = '.';
    return cJSON_AddRawToObject(o, key, buf) != NULL;
}

/* The node as a JSON object, or NULL when an allocation failed: every member is checked, so
 * that a failure never leaves a node silently missing a field. */
static cJSON *node_json(const pm_node *n)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    bool ok = cJSON_AddStringToObject(o, "name", n->name) &&
              cJSON_AddStringToObject(o, "op", pm_node_kind_name(n->kind)) &&
              cJSON_AddNumberToObject(o, "layer", n->layer) &&
              cJSON_AddStringToObject(o, "stream", stream_names[n->stream == PM_STREAM_PREFETCH]) &&
              cJSON_AddStringToObject(o, "dtype", pm_dtype_name(n->dtype)) &&
              add_double(o, "flop", n->flop) &&
              add_double(o, "act_bytes", n->act_bytes) &&
              add_double(o, "weight_bytes", n->weight_bytes) &&
              add_double(o, "kv_bytes", n->kv_bytes) &&
              cJSON_AddBoolToObject(o, "kv_strided", n->kv_strided) &&
              add_double(o, "l2_bytes", n->l2_bytes) &&
              add_double(o, "comm_bytes", n->comm_bytes);
    if (ok && n->m > 0)
        ok = add_double(o, "m", n->m) && add_double(o, "k", n->k) && add_double(o, "n", n->n);
    if (ok && n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE)
        ok = cJSON_AddNumberToObject(o, "chunks", n->chunks) != NULL;
    if (ok && n->routed)
        ok = cJSON_AddBoolToObject(o, "routed", true) != NULL;
    if (ok && n->kv_paged)
        ok = cJSON_AddBoolToObject(o, "kv_paged", true) != NULL;
    if (ok && n->inter_node)
        ok = cJSON_AddBoolToObject(o, "inter_node", true) != NULL;
    if (ok && n->prefetch >= 0)
        ok = cJSON_AddNumberToObject(o, "prefetch", n->prefetch) != NULL;
    if (ok && n->consumer >= 0)
        ok = cJSON_AddNumberToObject(o, "consumer", n->consumer) != NULL;
    if (ok && n->trigger >= 0)
        ok = cJSON_AddNumberToObject(o, "trigger", n->trigger) != NULL;
    if (ok && (pm_kind_is_collective(n->kind) || n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE)) {
        ok = add_double(o, "window_bytes", n->window_bytes);
        if (ok && n->overflow >= 0)
            ok = cJSON_AddNumberToObject(o, "overflow", n->overflow) != NULL;
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

pm_status pm_graph_to_json(const pm_graph *g, char **text_out, pm_error *err)
{
    if (!g || !text_out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL graph or output");
    *text_out = NULL;
    cJSON *root = cJSON_CreateObject();
    cJSON *nodes = root ? cJSON_AddArrayToObject(root, "nodes") : NULL;
    cJSON *edges = root ? cJSON_AddArrayToObject(root, "edges") : NULL;
    bool ok = root && cJSON_AddStringToObject(root, "kind", "graph") && nodes && edges;
    for (size_t i = 0; ok && i < g->n_nodes; i++) {
        cJSON *o = node_json(&g->nodes[i]);
        ok = o && cJSON_AddItemToArray(nodes, o);
        if (o && !ok)
            cJSON_Delete(o);
    }
    for (size_t i = 0; ok && i < g->n_edges; i++) {
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(edges, e);
        if (e && !ok)
            cJSON_Delete(e);
        if (ok)
            ok = cJSON_AddNumberToObject(e, "from", g->edges[i].from) &&
                 cJSON_AddNumberToObject(e, "to", g->edges[i].to) &&
                 cJSON_AddStringToObject(e, "kind",
                                         edge_names[g->edges[i].kind == PM_EDGE_TRIGGER]);
    }
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory writing the graph");
    /* cJSON allocates through its hooks (a test may set them): hand back our own copy, a
     * malloc block as documented. */
    size_t len = strlen(text);
    char *copy = pm_malloc(len + 2);
    if (!copy) {
        cJSON_free(text);
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory writing the graph");
    }
    memcpy(copy, text, len);
    copy[len] = '\n';
    copy[len + 1] = '\0';
    cJSON_free(text);
    *text_out = copy;
    return PM_OK;
}

static double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

/* Appends text for a DOT quoted string: a quote and a backslash escaped (\" and \\, so that no
 * name ends the string or becomes a label escape such as \l), a line break as DOT's \n, and any
 * other control character dropped (DOT has no escape for it). */
static void sb_dot_text(pm_sbuf *b, const char *text)
{
    for (const unsigned char *q = (const unsigned char *)text; *q; q++) {
        if (*q == '"' || *q == '\\')
            pm_sb_printf(b, "\\%c", *q);
        else if (*q == '\n')
            pm_sb_printf(b, "\\n");
        else if (*q >= 0x20 && *q != 0x7f)
            pm_sb_printf(b, "%c", *q);
    }
}

pm_status pm_graph_to_dot(const pm_graph *g, char **text_out, pm_error *err)
{
    if (!g || !text_out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL graph or output");
    pm_sbuf b = {0};
    pm_sb_printf(&b, "digraph preserve {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n");
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *n = &g->nodes[i];
        const char *style = n->kind == PM_NODE_PREFETCH   ? ", style=filled, fillcolor=\"#cfe8ff\""
                            : n->kind == PM_NODE_ALLREDUCE ? ", style=filled, fillcolor=\"#ffd9b3\""
                            : n->kind == PM_NODE_ALLTOALL  ? ", style=filled, fillcolor=\"#d9f2d0\""
                            : pm_kind_is_collective(n->kind) ? ", style=filled, fillcolor=\"#f2d0e6\""
                            : n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE
                                ? ", style=filled, fillcolor=\"#ffe9b3\""
                                : "";
        double bytes = n->weight_bytes + n->kv_bytes;
        if (pm_kind_is_collective(n->kind))
            bytes = n->comm_bytes;
        pm_sb_printf(&b, "  n%zu [label=\"", i);
        sb_dot_text(&b, n->name);
        pm_sb_printf(&b, "\\n%s %.2f MiB%s\"%s];\n", pm_node_kind_name(n->kind), mib(bytes),
                     n->l2_bytes > 0 ? " (L2)" : "", style);
    }
    for (size_t i = 0; i < g->n_edges; i++) {
        const pm_edge *e = &g->edges[i];
        pm_sb_printf(&b, "  n%d -> n%d%s;\n", e->from, e->to,
                  e->kind == PM_EDGE_TRIGGER ? " [style=dashed, label=\"start\"]" : "");
    }
    pm_sb_printf(&b, "}\n");
    if (b.failed) {
        pm_free(b.p);
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory writing the graph");
    }
    *text_out = b.p;
    return PM_OK;
}

/* ---------------------------------------------------------------- reading */

static pm_status read_index(pm_obj *o, const char *key, size_t n, int *out)
{
    long v = -1;
    pm_status st = pm_obj_int(o, key, false, -1, (long)n - 1, &v);
    *out = (int)v;
    return st;
}

/* The top level: an object of kind "graph" with an array "nodes" and an optional array
 * "edges". */
static pm_status read_top(const cJSON *root, const char *f, pm_error *err, const cJSON **nodes,
                          const cJSON **edges)
{
    pm_obj o;
    pm_obj_init(&o, root, f, "$", err);
    const char *kind = NULL;
    pm_obj_declare(&o, "nodes", PM_DIM_NONE);
    pm_obj_declare(&o, "edges", PM_DIM_NONE);
    pm_obj_declare(&o, "name", PM_DIM_NONE);
    pm_obj_declare(&o, "description", PM_DIM_NONE);
    if (!cJSON_IsObject(root))
        return pm_fail(err, PM_ERR_TYPE, f, "$", "expected a JSON object (got %s)",
                       pm_json_type_name(root));
    pm_status st;
    if ((st = pm_obj_string(&o, "kind", false, &kind)) != PM_OK)
        return st;
    if (kind && strcmp(kind, "graph") != 0)
        return pm_fail(err, PM_ERR_VALUE, f, "$.kind", "expected \"graph\" (got \"%s\")", kind);
    if ((st = pm_obj_finish(&o)) != PM_OK)
        return st;
    *nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    *edges = cJSON_GetObjectItemCaseSensitive(root, "edges");
    if (!cJSON_IsArray(*nodes))
        return pm_fail(err, *nodes ? PM_ERR_TYPE : PM_ERR_MISSING, f, "$.nodes",
                       "expected an array of nodes (got %s)", pm_json_type_name(*nodes));
    if (*edges && !cJSON_IsArray(*edges))
        return pm_fail(err, PM_ERR_TYPE, f, "$.edges", "expected an array (got %s)",
                       pm_json_type_name(*edges));
    return PM_OK;
}

/* Element i of the array $.<array> ("nodes" or "edges"): an object, opened for reading into o
 * (o->path is its JSON path). */
static pm_status open_element(const cJSON *it, const char *f, const char *array, size_t i,
                              pm_error *err, pm_obj *o)
{
    char path[64];
    snprintf(path, sizeof path, "$.%s[%zu]", array, i);
    if (!cJSON_IsObject(it))
        return pm_fail(err, PM_ERR_TYPE, f, path, "expected an object (got %s)",
                       pm_json_type_name(it));
    pm_obj_init(o, it, f, path, err);
    return PM_OK;
}

/* Node i of n_nodes, added to g. */
static pm_status read_node(const cJSON *it, size_t i, size_t n_nodes, const char *f, pm_graph *g,
                           pm_error *err)
{
    size_t n_kinds, n_dtypes;
    const char *const *kinds = pm_node_kind_names(&n_kinds);
    const char *const *dtypes = pm_dtype_names(&n_dtypes);
    const pm_range nonneg = {0.0, INFINITY, false, false};
    pm_obj no;
    pm_status st = open_element(it, f, "nodes", i, err, &no);
    if (st != PM_OK)
        return st;
    pm_node n = {0};
    n.prefetch = n.consumer = n.trigger = n.overflow = -1;
    int kd = 0, dt = 0, stream = 0;
    long layer = -1;
    if ((st = pm_obj_name(&no, "name", true, n.name, sizeof n.name)) ||
        (st = pm_obj_enum(&no, "op", true, kinds, n_kinds, &kd)) ||
        (st = pm_obj_int(&no, "layer", false, -1, 1L << 20, &layer)) ||
        (st = pm_obj_enum(&no, "stream", false, stream_names, 2, &stream)) ||
        (st = pm_obj_enum(&no, "dtype", false, dtypes, n_dtypes, &dt)) ||
        (st = pm_obj_number(&no, "flop", false, nonneg, &n.flop)) ||
        (st = pm_obj_number(&no, "act_bytes", false, nonneg, &n.act_bytes)) ||
        (st = pm_obj_number(&no, "weight_bytes", false, nonneg, &n.weight_bytes)) ||
        (st = pm_obj_number(&no, "kv_bytes", false, nonneg, &n.kv_bytes)) ||
        (st = pm_obj_bool(&no, "kv_strided", false, &n.kv_strided)) ||
        (st = pm_obj_bool(&no, "routed", false, &n.routed)) ||
        (st = pm_obj_bool(&no, "kv_paged", false, &n.kv_paged)) ||
        (st = pm_obj_bool(&no, "inter_node", false, &n.inter_node)) ||
        (st = pm_obj_number(&no, "l2_bytes", false, nonneg, &n.l2_bytes)) ||
        (st = pm_obj_number(&no, "comm_bytes", false, nonneg, &n.comm_bytes)) ||
        (st = pm_obj_number(&no, "m", false, nonneg, &n.m)) ||
        (st = pm_obj_number(&no, "k", false, nonneg, &n.k)) ||
        (st = pm_obj_number(&no, "n", false, nonneg, &n.n)) ||
        (st = pm_obj_number(&no, "window_bytes", false, nonneg, &n.window_bytes)) ||
        (st = read_index(&no, "prefetch", n_nodes, &n.prefetch)) ||
        (st = read_index(&no, "consumer", n_nodes, &n.consumer)) ||
        (st = read_index(&no, "trigger", n_nodes, &n.trigger)) ||
        (st = read_index(&no, "overflow", n_nodes, &n.overflow)))
        return st;
    long chunks = 0;
    if ((st = pm_obj_int(&no, "chunks", false, 0, 1024, &chunks)) != PM_OK ||
        (st = pm_obj_finish(&no)) != PM_OK)
        return st;
    n.chunks = (int)chunks;
    n.kind = (pm_node_kind)kd;
    n.dtype = (pm_dtype)dt;
    n.layer = (int)layer;
    n.stream = stream;
    if (n.l2_bytes > n.weight_bytes + n.kv_bytes)
        return pm_fail(err, PM_ERR_INCONSISTENT, f, no.path,
                       "l2_bytes %g exceeds the node's weight and KV bytes %g", n.l2_bytes,
                       n.weight_bytes + n.kv_bytes);
    if ((n.kind == PM_NODE_PREFETCH) != (stream == PM_STREAM_PREFETCH))
        return pm_fail(err, PM_ERR_INCONSISTENT, f, no.path,
                       "Prefetch nodes, and only they, run on the prefetch stream");
    if ((st = pm_graph_add_node(g, &n, NULL)) != PM_OK)
        pm_fail(err, st, f, no.path, "out of memory");
    return st;
}

/* Edge i between two of the n_nodes nodes, added to g. */
static pm_status read_edge(const cJSON *it, size_t i, size_t n_nodes, const char *f, pm_graph *g,
                           pm_error *err)
{
    pm_obj eo;
    pm_status st = open_element(it, f, "edges", i, err, &eo);
    if (st != PM_OK)
        return st;
    long from = 0, to = 0;
    int ek = 0;
    if ((st = pm_obj_int(&eo, "from", true, 0, (long)n_nodes - 1, &from)) ||
        (st = pm_obj_int(&eo, "to", true, 0, (long)n_nodes - 1, &to)) ||
        (st = pm_obj_enum(&eo, "kind", false, edge_names, 2, &ek)) ||
        (st = pm_obj_finish(&eo)))
        return st;
    if (ek == PM_EDGE_DATA && from >= to)
        return pm_fail(err, PM_ERR_INCONSISTENT, f, eo.path,
                       "data edges must go forward in program order (got %ld -> %ld)", from, to);
    if ((st = pm_graph_add_edge(g, (int)from, (int)to, (pm_edge_kind)ek)) != PM_OK)
        pm_fail(err, st, f, eo.path, "out of memory");
    return st;
}

/* Cross-references must agree, or the scheduler could wait forever. */
static pm_status check_references(const pm_graph *g, const char *f, pm_error *err)
{
    for (size_t k = 0; k < g->n_nodes; k++) {
        const pm_node *n = &g->nodes[k];
        char path[64];
        snprintf(path, sizeof path, "$.nodes[%zu]", k);
        if (n->kind == PM_NODE_PREFETCH &&
            (n->trigger < 0 || (size_t)n->trigger >= k || n->consumer <= (int)k))
            return pm_fail(err, PM_ERR_INCONSISTENT, f, path,
                           "a Prefetch node needs a \"trigger\" before it and a \"consumer\" "
                           "after it");
        if (n->prefetch >= 0 && (g->nodes[n->prefetch].kind != PM_NODE_PREFETCH ||
                                 (size_t)n->prefetch >= k))
            return pm_fail(err, PM_ERR_INCONSISTENT, f, path,
                           "\"prefetch\" must name an earlier Prefetch node");
    }
    /* The rest of what the scheduler requires (pm_graph_check: a trigger is a collective, a
     * consumer on the main stream, ...), said as a load error of the file. */
    pm_error ck;
    if (pm_graph_check(g, &ck) != PM_OK)
        return pm_fail(err, PM_ERR_INCONSISTENT, f, ck.path, "%s", ck.message);
    return PM_OK;
}

pm_status pm_graph_from_json(const char *text, size_t len, const char *file, pm_graph *g,
                             pm_error *err)
{
    if (!text || !g)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL text or graph");
    const char *f = file ? file : "<graph>";
    cJSON *root = NULL;
    pm_status st = pm_json_parse(text, len, f, &root, err);
    if (st != PM_OK)
        return st;
    pm_graph_clear(g);
    const cJSON *nodes = NULL, *edges = NULL;
    if ((st = read_top(root, f, err, &nodes, &edges)) != PM_OK)
        goto out;
    const size_t n_nodes = (size_t)cJSON_GetArraySize(nodes);
    const size_t n_edges = edges ? (size_t)cJSON_GetArraySize(edges) : 0;
    if (n_nodes > PM_MAX_GRAPH_NODES || n_edges > PM_MAX_GRAPH_EDGES) {
        st = pm_fail(err, PM_ERR_RANGE, f, n_nodes > PM_MAX_GRAPH_NODES ? "$.nodes" : "$.edges",
                     "%zu nodes and %zu edges: a graph may have at most %d nodes and %d edges",
                     n_nodes, n_edges, PM_MAX_GRAPH_NODES, PM_MAX_GRAPH_EDGES);
        goto out;
    }
    size_t i = 0;
    for (const cJSON *it = nodes->child; it; it = it->next, i++)
        if ((st = read_node(it, i, n_nodes, f, g, err)) != PM_OK)
            goto out;
    i = 0;
    for (const cJSON *it = edges ? edges->child : NULL; it; it = it->next, i++)
        if ((st = read_edge(it, i, n_nodes, f, g, err)) != PM_OK)
            goto out;
    st = check_references(g, f, err);
out:
    cJSON_Delete(root);
    if (st != PM_OK)
        pm_graph_clear(g);
    return st;
}
