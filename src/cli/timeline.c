/*
 * timeline.c - `preserve-model timeline`: the two-stream schedule of one decoder layer, so a
 * reviewer sees what overlaps what. It schedules a three-layer graph of the chosen mode (layer
 * 0 has no allreduce before it; from layer 1 on every layer repeats) and prints every node that
 * overlaps layer 1, from the start of its first node to the start of layer 2's, with times
 * relative to that start: prefetches issued under layer 0's last allreduce begin before it.
 * With --plot FILE it draws them with plots/timeline.gp (lanes: compute, allreduce, prefetch);
 * the CSV is written beside the figure.
 */
#include <stdio.h>

#include "commands.h"
#include "plot.h"

static int lane_of(const pm_node *n)
{
    if (n->stream == PM_STREAM_PREFETCH)
        return 2;
    return n->kind == PM_NODE_ALLREDUCE || n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE ? 1 : 0;
}

static const char *const lane_names[] = {"compute", "allreduce", "prefetch"};

/* First main-stream node of a layer, or -1. */
static int first_of_layer(const pm_graph *g, int layer)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].layer == layer && g->nodes[i].stream == PM_STREAM_MAIN)
            return (int)i;
    return -1;
}

static void write_csv(FILE *f, const cli *c, const pm_scenario *s, const pm_graph *g,
                      const pm_schedule *sc, double t0, double t1, int64_t ctx)
{
    fprintf(f, "# preserve-model %s timeline --config %s --mode %s --phase %s --context %lld\n",
            pm_version(), c->config, pm_mode_name(c->mode),
            c->phase == PM_PHASE_DECODE ? "decode" : "prefill", (long long)ctx);
    print_sets(f, c);
    fprintf(f, "# %s on %s x %d; one layer lasts %.3f us\n", s->model.name, s->accel.name,
            s->cluster.devices, (t1 - t0) * 1e6);
    fprintf(f, "lane_index,lane,node,kind,start_us,end_us,bytes\n");
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *n = &g->nodes[i];
        const pm_slot *sl = &sc->slots[i];
        if (!(sl->end_s > t0 && sl->start_s < t1))
            continue;
        const double bytes = n->kind == PM_NODE_ALLREDUCE ? n->comm_bytes
                             : n->stream == PM_STREAM_PREFETCH ? n->weight_bytes + n->kv_bytes
                                                               : n->weight_bytes + n->kv_bytes +
                                                                     n->act_bytes;
        const int lane = lane_of(n);
        fprintf(f, "%d,%s,%s,%s,%.6f,%.6f,%.0f\n", lane, lane_names[lane], n->name,
                pm_node_kind_name(n->kind), (sl->start_s - t0) * 1e6, (sl->end_s - t0) * 1e6,
                bytes);
    }
}

/* Writes the CSV beside the figure and draws it with plots/timeline.gp. */
static int draw(const cli *c, const view *v, double t0, double t1)
{
    if (!plot_terminal(c->plot, true))
        return plot_usage_error(c->plot);
    char csv[1100];
    FILE *f = plot_csv_open(c->plot, csv, sizeof csv);
    if (!f)
        return EXIT_CONFIG;
    write_csv(f, c, &v->s, v->g, &v->sched, t0, t1, v->context);
    fclose(f);
    char title[256], t_end[64];
    snprintf(title, sizeof title, "%s, %s x %d, batch %d, context %lld: %s, one layer %.1f us",
             v->s.model.name, v->s.accel.name, v->s.cluster.devices, v->s.workload.batch,
             (long long)v->context, pm_mode_name(c->mode), (t1 - t0) * 1e6);
    snprintf(t_end, sizeof t_end, "%.6f", (t1 - t0) * 1e6);
    const plot_var vars[] = {{"ttl", title, false}, {"t_end", t_end, true}};
    return plot_draw("timeline.gp", csv, c->plot, true, vars, 2);
}

int cmd_timeline(const cli *c)
{
    view v;
    int rc = view_open(c, c->mode, 3, true, &v);
    if (rc)
        return rc;
    /* The layer shown: layer 1 when there are three, else the last. */
    const int shown = v.layers >= 2 ? 1 : 0;
    const int a = first_of_layer(v.g, shown), b = first_of_layer(v.g, shown + 1);
    const double t0 = a >= 0 ? v.sched.slots[a].start_s : 0.0;
    const double t1 = b >= 0 ? v.sched.slots[b].start_s : v.sched.makespan_s;
    if (c->plot)
        rc = draw(c, &v, t0, t1);
    else
        write_csv(stdout, c, &v.s, v.g, &v.sched, t0, t1, v.context);
    view_close(&v);
    return rc;
}
