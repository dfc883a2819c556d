/*
 * reference.c - the graph path: the graphs each mode runs (pm_graph_build_mode) and the time of
 * one step computed on them, the reference the fast path (step_plan.c, which serves every estimate)
 * is tested against (tests/test_estimate.c, tests/test_properties.c).
 *
 * One step is scheduled on a graph of at most three decoder layers: the first layer has no
 * allreduce before it, and from the second on every layer repeats exactly (at the start of each
 * O projection the prefetch stream is idle), so the time of an L-layer step is the three-layer
 * makespan plus (L - 3) periods measured between the O projections of layers 1 and 2 (found by
 * the role the builder gives them). The cost of a step therefore does not grow with the number
 * of layers, except for models whose local (windowed) and global layers alternate in a
 * pattern: those are built whole.
 *
 * The twin rules, each written once per path (a change to one needs the same change to the
 * other, and the property tests catch a difference):
 *
 *   rule                       graph path (reference)          fast path (estimates)
 *   the prefetch window        insert.c, pm_insert_prefetch    step_plan.c, walk of the chain
 *                              (Algorithm 1, breadth first)    from a communication node
 *   the two-stream schedule    schedule.c, pm_schedule_run     step_plan.c, the segment
 *                              (events, any graph)             recurrence (pm_sim_run when
 *                                                              HBM is shared)
 *   layers beyond the third    this file: (L - 3) O-to-O       step_plan.c: L - 1 periods
 *                              periods (all layers built when  from a first allreduce, one
 *                              local and global or dense and   per (MLP class, next
 *                              MoE ones alternate)             attention class) pair
 *   routed experts' windows    insert.c, visit_window          step_plan.c, decide (only an
 *                                                              all-to-all's window)
 *   the MoE block              build.c, add_moe_block          the same template
 *   the window per layer       build.c, attention_fill         step_plan.c, attention_at
 *                                                              (both from model.c's rule)
 *   the fused baseline         build.c, builder with fused     build.c,
 *                                                              pm_template_fuse_layer
 *
 * A pipeline stage's graph (pm_graph_build_stage) is the same builder over the stage's layers,
 * after its receive (a communication node: insert.c fills its window as any collective's), at
 * one micro-batch; pm_stage_time_graph is the reference of step_plan.c's
 * pm_step_plan_stage_eval.
 *
 * May call: alloc.c, build.c, cost.c, dtype.c, error.c, insert.c, model.c, plan.c, schedule.c,
 * step.c.
 */
#include <string.h>

#include "internal.h"

#define BUILD_LAYERS 3

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

/* The O projection of a layer (the builder marks it; fused or not): the layer marker. */
static int find_o_node(const pm_graph *g, int layer)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *n = &g->nodes[i];
        if (n->layer == layer && n->role == PM_ROLE_O)
            return (int)i;
    }
    return -1;
}

typedef struct step_info {
    double time_s;
    double recv_pf_s;    /* the prefetches the receive (node 0) triggers: their time alone */
    int signature;       /* prefetch nodes inserted: changes when decisions change */
    int chunks;          /* fused: chunks of the first fused node */
} step_info;

/* The step of part's layers (the whole model, or a pipeline stage's); a stage's receive is given
 * gap_s of idle before it ends (a pipeline bubble: its window's prefetches may run in it), which
 * the time does not count. */
static pm_status step(const pm_scenario *s, pm_mode mode, const pm_step *at,
                      const pm_graph_part *part, double gap_s, workspace *w, step_info *out,
                      pm_error *err)
{
    w->evals++;
    const int L = part->layers;
    /* Local and global layers in a pattern do not repeat exactly: the reference builds them
     * all (its cost grows with the layers; the fast path's does not). */
    const int local = pm_model_local_layers(&s->model);
    const int moe = pm_model_moe_layers(&s->model);
    const int ML = s->model.layers;
    const bool mixed = (local > 0 && local < ML) || (moe > 0 && moe < ML);
    pm_graph_part built_part = *part;
    built_part.layers = mixed || L < BUILD_LAYERS ? L : BUILD_LAYERS;
    const int built = built_part.layers;
    pm_status st = pm_graph_build_part(s, at, &built_part, mode == PM_MODE_FUSED, &w->base, err);
    if (st != PM_OK)
        return st;
    const pm_graph *g = &w->base;
    if (mode == PM_MODE_PRESERVE) {
        st = pm_insert_prefetch(&w->base, pm_accelerator_l2_window_bytes(&s->accel),
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
    out->recv_pf_s = 0.0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if ((st = pm_op_cost_compute(s, g, i, &w->costs[i], err)) != PM_OK)
            return st;
        if (g->nodes[i].kind == PM_NODE_FUSED_MATMUL_ALLREDUCE && out->chunks == 0)
            out->chunks = w->costs[i].chunks;
        if (g->nodes[i].kind == PM_NODE_PREFETCH && g->nodes[i].trigger == 0)
            out->recv_pf_s += w->costs[i].total_s;
    }
    const bool waits = gap_s > 0 && g->n_nodes > 0 && g->nodes[0].kind == PM_NODE_RECV;
    if (waits) {
        w->costs[0].comm_s += gap_s;
        w->costs[0].total_s += gap_s;
    }
    pm_schedule sched;
    if ((st = pm_schedule_run(s, g, w->costs, w->slots, &sched, err)) !=
        PM_OK)
        return st;
    double t = sched.makespan_s;
    if (built < L) {
        const int a = find_o_node(g, part->first + 1), b = find_o_node(g, part->first + 2);
        if (a < 0 || b < 0)
            return pm_fail(err, PM_ERR_INCONSISTENT, NULL, NULL, "layer markers not found");
        t += (double)(L - BUILD_LAYERS) * (w->slots[b].start_s - w->slots[a].start_s);
    }
    out->time_s = waits ? t - gap_s : t;
    out->signature = (int)(g->n_nodes - w->base.n_nodes);
    return PM_OK;
}

/* The graph of part's layers that mode runs: plain, fused, or plain after the insertion. */
static pm_status build_mode_part(const pm_scenario *s, pm_mode mode, const pm_step *step,
                                 const pm_graph_part *part, pm_graph *g, pm_error *err)
{
    if (mode != PM_MODE_PRESERVE)
        return pm_graph_build_part(s, step, part, mode == PM_MODE_FUSED, g, err);
    pm_graph base = {0};
    pm_status st = pm_graph_build_part(s, step, part, false, &base, err);
    if (st == PM_OK)
        st = pm_insert_prefetch(&base, pm_accelerator_l2_window_bytes(&s->accel), g, err);
    pm_free(base.nodes);
    pm_free(base.edges);
    return st;
}

pm_status pm_graph_build_mode(const pm_scenario *s, pm_mode mode, pm_phase phase,
                              int64_t context_len, int layers, pm_graph *g, pm_error *err)
{
    if (!s || !g || (int)mode < 0 || mode >= PM_MODE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_graph_build_mode");
    pm_step step;
    pm_status st = pm_plan_refuse_stages(s, "the graph", err);
    if (st == PM_OK)
        st = pm_step_of(s, phase, context_len, &step, err);
    if (st != PM_OK)
        return st;
    const int L = layers <= 0 || layers > s->model.layers ? s->model.layers : layers;
    const pm_graph_part whole = {0, L, true, true, 0.0, false};
    return build_mode_part(s, mode, &step, &whole, g, err);
}

/* Stage `stage` of s's pipeline plan at one micro-batch: *mb the micro-batch's scenario (plan.c's
 * rule), *at its step at ctx, *part the stage's layers and receive. */
static pm_status stage_setup(const pm_scenario *s, pm_phase phase, int64_t ctx, int stage,
                             pm_scenario *mb, pm_step *at, pm_graph_part *part, pm_error *err)
{
    pm_pipeline pl;
    pm_status st = pm_pipeline_plan(s, &pl, err);
    if (st != PM_OK)
        return st;
    if (stage < 0 || stage >= pl.stages)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.pipeline_parallel",
                       "stage %d: the plan has %d stage%s (0 to %d)", stage, pl.stages,
                       pl.stages == 1 ? "" : "s", pl.stages - 1);
    pm_pipeline_micro_scenario(s, &pl, mb);
    if ((st = pm_step_of(mb, phase, ctx, at, err)) != PM_OK)
        return st;
    const double act = s->model.hidden * pm_dtype_bytes(s->workload.act_dtype);
    const double returned = phase == PM_PHASE_DECODE ? at->sequences : 0.0;
    part->first = pl.first[stage];
    part->layers = pl.layers[stage];
    part->head = stage == 0;
    part->tail = stage == pl.stages - 1;
    part->recv_bytes =
        pm_stage_recv_bytes(&pl, stage, act, at->tokens, returned, &part->inter_node);
    return PM_OK;
}

pm_status pm_graph_build_stage(const pm_scenario *s, pm_mode mode, pm_phase phase,
                               int64_t context_len, int stage, int layers, pm_graph *g,
                               pm_error *err)
{
    if (!s || !g || (int)mode < 0 || mode >= PM_MODE_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "bad argument to pm_graph_build_stage");
    if (pm_cluster_pp(&s->cluster) == 1 && stage == 0) /* the whole model, as it is */
        return pm_graph_build_mode(s, mode, phase, context_len, layers, g, err);
    pm_scenario mb;
    pm_step at;
    pm_graph_part part;
    pm_status st = stage_setup(s, phase, context_len, stage, &mb, &at, &part, err);
    if (st != PM_OK)
        return st;
    if (layers > 0 && layers < part.layers)
        part.layers = layers;
    return build_mode_part(&mb, mode, &at, &part, g, err);
}

pm_status pm_stage_time_graph(const pm_scenario *s, pm_mode mode, pm_phase phase, int64_t ctx,
                              int stage, double gap_s, double *time_s, double *recv_pf_s,
                              pm_error *err)
{
    pm_scenario mb;
    pm_step at;
    pm_graph_part part;
    pm_status st = stage_setup(s, phase, ctx, stage, &mb, &at, &part, err);
    if (st != PM_OK)
        return st;
    workspace w = {0};
    step_info si = {0};
    st = step(&mb, mode, &at, &part, gap_s, &w, &si, err);
    ws_free(&w);
    if (st == PM_OK)
        *time_s = si.time_s;
    if (st == PM_OK && recv_pf_s)
        *recv_pf_s = si.recv_pf_s;
    return st;
}

pm_status pm_step_time_graph(const pm_scenario *s, pm_mode mode, pm_phase phase, int64_t ctx,
                             double *time_s, int *signature, pm_error *err)
{
    pm_step at;
    pm_status st = pm_step_of(s, phase, ctx, &at, err);
    return st != PM_OK ? st : pm_step_time_graph_step(s, mode, &at, time_s, signature, err);
}

pm_status pm_step_time_graph_step(const pm_scenario *s, pm_mode mode, const pm_step *at,
                                  double *time_s, int *signature, pm_error *err)
{
    workspace w = {0};
    step_info si = {0};
    const pm_graph_part whole = {0, s->model.layers, true, true, 0.0, false};
    pm_status st = step(s, mode, at, &whole, 0.0, &w, &si, err);
    ws_free(&w);
    if (st == PM_OK) {
        *time_s = si.time_s;
        if (signature)
            *signature = si.signature;
    }
    return st;
}

