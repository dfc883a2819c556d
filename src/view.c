/*
 * view.c - the views: a scheduled graph of a few layers and what a reader is shown of it.
 * `explain` (pm_explain_compute) walks the preserve graph's collectives (allreduces and MoE
 * all-to-alls) and says what each prefetches, how many bytes, and why its window stops where it
 * does; `timeline` (pm_timeline_compute) gives the bars of one decoder layer's two-stream
 * schedule, so that a reviewer sees what overlaps what. The rows are the library's so that the
 * tool, the Python module and a C program report the same ones; the tool only prints them.
 *
 * Both schedule only as many layers as the view needs: from the second layer on every layer of
 * a class (local or global attention, dense or MoE) repeats exactly, so the first layers of
 * each class stand for all of them (reference.c says why).
 *
 * A pipeline stage's views (the _stage functions) are the same over pm_graph_build_stage's graph:
 * the receive's window is explain's first, and the layers count from the stage's first.
 *
 * May call: alloc.c, error.c, footprint.c, graph.c, insert.c, model.c, plan.c, reference.c,
 * schedule.c.
 */
#include <string.h>

#include "internal.h"

const char *pm_prefetch_what_name(pm_prefetch_what what)
{
    static const char *const names[] = {"weights", "kv_cache", "routed_experts"};
    return (int)what >= 0 && what < PM_PREFETCH_WHAT_COUNT ? names[what] : "?";
}

const char *pm_collective_kind_name(pm_node_kind kind)
{
    return kind == PM_NODE_ALLREDUCE        ? "allreduce"
           : kind == PM_NODE_ALLTOALL       ? "all_to_all"
           : kind == PM_NODE_REDUCE_SCATTER ? "reduce_scatter"
           : kind == PM_NODE_ALL_GATHER     ? "all_gather"
           : kind == PM_NODE_RECV           ? "receive"
                                            : "?";
}

const char *pm_lane_name(pm_lane lane)
{
    static const char *const names[] = {"compute", "collective", "prefetch"};
    return (int)lane >= 0 && lane < PM_LANE_COUNT ? names[lane] : "?";
}

/* A view's pipeline stage: the plan's stages, the stage's first layer and its layers. */
typedef struct stage_info {
    int stages, first, layers;
} stage_info;

/* The graph of mode with `layers` layers of pipeline stage `stage` at context_len, scheduled:
 * *g and *sched are the caller's to free, also after an error. *si receives the stage. */
static pm_status scheduled(const pm_scenario *s, pm_mode mode, pm_phase phase,
                           int64_t context_len, int stage, int layers, pm_graph **g,
                           pm_schedule *sched, stage_info *si, pm_error *err)
{
    *si = (stage_info){1, 0, s->model.layers};
    if (pm_cluster_pp(&s->cluster) > 1) {
        pm_pipeline pl;
        const pm_status st = pm_pipeline_plan(s, &pl, err);
        if (st != PM_OK)
            return st;
        si->stages = pl.stages;
        if (stage >= 0 && stage < pl.stages)
            *si = (stage_info){pl.stages, pl.first[stage], pl.layers[stage]};
    }
    *g = pm_graph_alloc();
    if (!*g)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    const pm_status st =
        pm_graph_build_stage(s, mode, phase, context_len, stage, layers, *g, err);
    return st != PM_OK ? st : pm_schedule_compute(s, *g, sched, err);
}

/* ---------------------------------------------------------------- explain */

/* The layers explain shows: from layer `start` (1, or the first MoE layer) on, the layer
 * classes (local or global attention, dense or MoE) repeat with a period *period (the
 * smallest, at most 64); windows then repeat too. Layers 0 to start + period are shown, so
 * that every class of layer has a window into the next; 2 when every layer is alike. */
static int explain_layers(const pm_model *m, int *start, int *period)
{
    *start = m->experts > 0 && m->moe_first_layer > 1 ? m->moe_first_layer : 1;
    *period = 1;
    for (int p = 1; p <= 64; p++) {
        bool same = true;
        for (int l = *start; l + p < m->layers && same; l++)
            same = pm_model_layer_is_local(m, l) == pm_model_layer_is_local(m, l + p) &&
                   pm_model_layer_is_moe(m, l) == pm_model_layer_is_moe(m, l + p);
        if (same) {
            *period = p;
            break;
        }
    }
    const bool alike = *start == 1 && *period == 1 &&
                       pm_model_layer_is_local(m, 0) == pm_model_layer_is_local(m, 1) &&
                       pm_model_layer_is_moe(m, 0) == pm_model_layer_is_moe(m, 1);
    const int shown = alike ? 2 : *start + *period + 1;
    return shown < m->layers ? shown : m->layers;
}

static bool is_collective(const pm_node *n)
{
    return pm_kind_is_collective(n->kind);
}

/* Collective i's window: its prefetches appended to e->prefetches (room for them was made). */
static pm_explain_window window_of(pm_explain *e, size_t i)
{
    const pm_graph *g = e->graph;
    const pm_slot *slots = e->schedule.slots;
    const pm_node *n = &g->nodes[i];
    pm_explain_window w = {.collective = (int)i,
                           .kind = n->kind,
                           .comm_bytes = n->comm_bytes,
                           .collective_s = slots[i].end_s - slots[i].start_s,
                           .first_prefetch = e->n_prefetches,
                           .window_bytes = n->window_bytes,
                           .stopped_at = n->overflow};
    double pf_end = slots[i].start_s;
    for (size_t j = 0; j < g->n_nodes; j++) {
        const pm_node *p = &g->nodes[j];
        if (p->kind != PM_NODE_PREFETCH || p->trigger != (int)i)
            continue;
        const pm_node *cn = &g->nodes[p->consumer];
        e->prefetches[e->n_prefetches++] = (pm_explain_prefetch){
            .node = (int)j,
            .consumer = p->consumer,
            .what = cn->kind == PM_NODE_ATTENTION ? PM_PREFETCH_KV_CACHE
                    : cn->routed                  ? PM_PREFETCH_ROUTED_EXPERTS
                                                  : PM_PREFETCH_WEIGHTS,
            .bytes = p->weight_bytes + p->kv_bytes};
        pf_end = slots[j].end_s;
        w.n_prefetches++;
    }
    const double pf_s = pf_end - slots[i].start_s;
    w.prefetch_busy_s = w.n_prefetches ? pf_s : 0.0;
    w.hidden = !(w.n_prefetches && pf_s > w.collective_s);
    if (n->overflow >= 0) {
        const pm_node *stop = &g->nodes[n->overflow];
        w.stopped_bytes = stop->kind == PM_NODE_ATTENTION ? stop->kv_bytes : stop->weight_bytes;
        w.stopped_routed = stop->routed && n->kind != PM_NODE_ALLTOALL;
    }
    return w;
}

/* The windows of e's scheduled graph, every collective's in graph order. */
static pm_status explain_windows(pm_explain *e, pm_error *err)
{
    const pm_graph *g = e->graph;
    size_t windows = 0, prefetches = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        windows += is_collective(&g->nodes[i]);
        prefetches += g->nodes[i].kind == PM_NODE_PREFETCH;
    }
    if (windows) {
        e->windows = pm_calloc(windows, sizeof *e->windows);
        e->prefetches = prefetches ? pm_calloc(prefetches, sizeof *e->prefetches) : NULL;
        if (!e->windows || (prefetches && !e->prefetches))
            return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        if (is_collective(&g->nodes[i]))
            e->windows[e->n_windows++] = window_of(e, i);
    return PM_OK;
}

pm_status pm_explain_compute(const pm_scenario *s, pm_phase phase, int64_t context_len,
                             pm_explain *out, pm_error *err)
{
    return pm_explain_compute_stage(s, phase, context_len, 0, out, err);
}

pm_status pm_explain_compute_stage(const pm_scenario *s, pm_phase phase, int64_t context_len,
                                   int stage, pm_explain *out, pm_error *err)
{
    if (out)
        *out = (pm_explain){0};
    if (!s || !out || context_len < 0)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "NULL scenario or output, or a negative context");
    out->layers_shown = explain_layers(&s->model, &out->repeat_from, &out->repeat_period);
    out->l2_window_bytes = pm_accelerator_l2_window_bytes(&s->accel);
    if (s->model.experts > 0) { /* the footprint's rule of the experts a step reads */
        pm_footprint fp;
        if (pm_footprint_compute(s, NULL, 0, &fp, NULL) == PM_OK)
            out->experts_read_per_step = fp.experts_read_per_step;
    }
    out->stage = stage;
    stage_info si;
    pm_status st = scheduled(s, PM_MODE_PRESERVE, phase, context_len, stage, out->layers_shown,
                             &out->graph, &out->schedule, &si, err);
    out->stages = si.stages;
    out->first_layer = si.first;
    out->stage_layers = si.layers;
    /* A stage may hold fewer layers than asked: the graph has those. */
    if (si.layers < out->layers_shown)
        out->layers_shown = si.layers;
    if (st == PM_OK)
        st = explain_windows(out, err);
    if (st != PM_OK)
        pm_explain_release(out);
    return st;
}

void pm_explain_release(pm_explain *e)
{
    if (!e)
        return;
    pm_graph_free(e->graph);
    pm_schedule_release(&e->schedule);
    pm_free(e->windows);
    pm_free(e->prefetches);
    *e = (pm_explain){0};
}

/* ---------------------------------------------------------------- timeline */

static pm_lane lane_of(const pm_node *n)
{
    if (n->stream == PM_STREAM_PREFETCH)
        return PM_LANE_PREFETCH;
    return pm_kind_is_collective(n->kind) || n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE
               ? PM_LANE_COLLECTIVE
               : PM_LANE_COMPUTE;
}

/* What a bar's bytes are: a collective's payload, a prefetch's weights and KV, an operation's
 * weights, KV and activations. */
static double bytes_of(const pm_node *n)
{
    return pm_kind_is_collective(n->kind) ? n->comm_bytes
           : n->stream == PM_STREAM_PREFETCH ? n->weight_bytes + n->kv_bytes
                                             : n->weight_bytes + n->kv_bytes + n->act_bytes;
}

/* First main-stream node of a layer, or -1. */
static int first_of_layer(const pm_graph *g, int layer)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].layer == layer && g->nodes[i].stream == PM_STREAM_MAIN)
            return (int)i;
    return -1;
}

/* Whether a node's slot overlaps the layer [t0, t1). */
static bool in_layer(const pm_slot *sl, double t0, double t1)
{
    return sl->end_s > t0 && sl->start_s < t1;
}

/* The bars of t's scheduled graph of `layers` layers: every node that overlaps the layer shown,
 * the second (or the one after the first MoE layer, first_moe) when there is one. */
static pm_status timeline_ops(pm_timeline *t, int layers, int first_moe, pm_error *err)
{
    const pm_graph *g = t->graph;
    const pm_slot *slots = t->schedule.slots;
    /* A stage that waits on its input shows its first layer from the receive on: the
     * receive's window, what PRESERVE prefetches while the stage waits. */
    const bool recv = g->n_nodes > 0 && g->nodes[0].kind == PM_NODE_RECV;
    t->layer = t->first_layer +
               (recv ? 0 : layers >= 2 + first_moe ? 1 + first_moe : layers - 1);
    const int a = recv ? 0 : first_of_layer(g, t->layer), b = first_of_layer(g, t->layer + 1);
    const double t0 = a >= 0 ? slots[a].start_s : 0.0;
    const double t1 = b >= 0 ? slots[b].start_s : t->schedule.makespan_s;
    t->layer_s = t1 - t0;
    size_t n = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        n += in_layer(&slots[i], t0, t1);
    t->ops = n ? pm_calloc(n, sizeof *t->ops) : NULL;
    if (n && !t->ops)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (!in_layer(&slots[i], t0, t1))
            continue;
        t->ops[t->n_ops++] = (pm_timeline_op){.node = (int)i,
                                              .lane = lane_of(&g->nodes[i]),
                                              .start_s = slots[i].start_s - t0,
                                              .end_s = slots[i].end_s - t0,
                                              .bytes = bytes_of(&g->nodes[i])};
    }
    return PM_OK;
}

pm_status pm_timeline_compute(const pm_scenario *s, pm_mode mode, pm_phase phase,
                              int64_t context_len, pm_timeline *out, pm_error *err)
{
    return pm_timeline_compute_stage(s, mode, phase, context_len, 0, out, err);
}

pm_status pm_timeline_compute_stage(const pm_scenario *s, pm_mode mode, pm_phase phase,
                                    int64_t context_len, int stage, pm_timeline *out,
                                    pm_error *err)
{
    if (out)
        *out = (pm_timeline){0};
    if (!s || !out || (int)mode < 0 || mode >= PM_MODE_COUNT || context_len < 0)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "NULL scenario or output, a mode out of range, or a negative context");
    out->mode = mode;
    /* Three layers: layer 0 has no collective before it, layer 1 stands for its class. A MoE
     * model whose first layers are dense (DeepSeek-V3) shows the layer after its first MoE
     * layer, so that the all-to-alls appear. */
    const int first = s->model.experts > 0 ? s->model.moe_first_layer : 0;
    const int layers = 3 + first < s->model.layers ? 3 + first : s->model.layers;
    out->stage = stage;
    stage_info si;
    pm_status st = scheduled(s, mode, phase, context_len, stage, layers, &out->graph,
                             &out->schedule, &si, err);
    out->stages = si.stages;
    out->first_layer = si.first;
    out->stage_layers = si.layers;
    if (st == PM_OK)
        st = timeline_ops(out, si.layers < layers ? si.layers : layers, first, err);
    if (st != PM_OK)
        pm_timeline_release(out);
    return st;
}

void pm_timeline_release(pm_timeline *t)
{
    if (!t)
        return;
    pm_graph_free(t->graph);
    pm_schedule_release(&t->schedule);
    pm_free(t->ops);
    *t = (pm_timeline){0};
}
