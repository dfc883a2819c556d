/*
 * graph_cmd.c - `graph` prints the per-device graph one mode runs (JSON or DOT); `explain` walks
 * the preserve graph's allreduces and says what each prefetches, how many bytes, and why the
 * window stops where it does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

int cmd_graph(const cli *c)
{
    view v;
    int rc = view_open(c, c->mode, c->layers, false, &v);
    if (rc)
        return rc;
    char *text = NULL;
    pm_error err;
    pm_status st = c->format == FMT_DOT ? pm_graph_to_dot(v.g, &text, &err)
                                        : pm_graph_to_json(v.g, &text, &err);
    if (st != PM_OK)
        rc = config_error(&err);
    else
        fputs(text, stdout);
    free(text);
    view_close(&v);
    return rc;
}

static const char *short_name(const pm_node *n)
{
    const char *dot = strchr(n->name, '.');
    return dot ? dot + 1 : n->name;
}

/* What the prefetches triggered by allreduce i of g carry and why its window stops. */
static void explain_window(const pm_graph *g, const pm_schedule *sched, size_t i, double cap)
{
    const pm_node *n = &g->nodes[i];
    const double ar_s = sched->slots[i].end_s - sched->slots[i].start_s;
    printf("during %s (%.1f KiB, %.1f us):", n->name, n->comm_bytes / 1024.0, ar_s * 1e6);
    double pf_end = sched->slots[i].start_s;
    int count = 0;
    for (size_t j = 0; j < g->n_nodes; j++) {
        const pm_node *p = &g->nodes[j];
        if (p->kind != PM_NODE_PREFETCH || p->trigger != (int)i)
            continue;
        const pm_node *cn = &g->nodes[p->consumer];
        printf("%s prefetch %s %s %.1f MiB", count ? "," : "",
               cn->kind == PM_NODE_ATTENTION ? "KV" : short_name(cn),
               cn->kind == PM_NODE_ATTENTION ? "cache" : "weights",
               (p->weight_bytes + p->kv_bytes) / MIB);
        pf_end = sched->slots[j].end_s;
        count++;
    }
    if (!count)
        printf(" nothing prefetched");
    printf(" = %.1f MiB < %.0f MiB\n", n->window_bytes / MIB, cap / MIB);
    if (n->overflow >= 0) {
        const pm_node *o = &g->nodes[n->overflow];
        double m = o->kind == PM_NODE_ATTENTION ? o->kv_bytes : o->weight_bytes;
        printf("  stopped at %s: %s %.1f MiB would make %.1f MiB >= %.0f MiB\n", o->name,
               o->kind == PM_NODE_ATTENTION ? "KV" : "weights", m / MIB,
               (n->window_bytes + m) / MIB, cap / MIB);
    } else {
        printf("  window ended at the next allreduce (or the end of the graph)\n");
    }
    if (count) {
        const double pf_s = pf_end - sched->slots[i].start_s;
        printf("  prefetch stream busy %.1f us vs allreduce %.1f us: %s\n", pf_s * 1e6,
               ar_s * 1e6,
               pf_s > ar_s ? "the prefetch outlasts the allreduce"
                           : "fully hidden behind the allreduce");
    }
}

int cmd_explain(const cli *c)
{
    view v;
    int rc = view_open(c, PM_MODE_PRESERVE, 2, true, &v);
    if (rc)
        return rc;
    const pm_scenario *s = &v.s;
    const double cap = pm_accelerator_l2_window_bytes(&s->accel);
    /* The context the graph was built at (--context, else the phase's default). */
    const int64_t ctx = v.context;
    printf("%s, %s, context %lld: L2 capacity for prefetching %.0f MiB (%s)\n", s->name,
           c->phase == PM_PHASE_DECODE ? "decode step" : "prefill", (long long)ctx, cap / MIB,
           s->accel.name);
    printf("Layers 0 and 1 shown; every later layer repeats layer 1.\n\n");
    int windows = 0;
    for (size_t i = 0; i < v.g->n_nodes; i++) {
        if (v.g->nodes[i].kind != PM_NODE_ALLREDUCE)
            continue;
        windows++;
        explain_window(v.g, &v.sched, i, cap);
    }
    if (!windows)
        printf("no allreduce in the graph (one device): nothing can be prefetched\n");
    view_close(&v);
    return 0;
}
