/*
 * graph_cmd.c - `graph` prints the per-device graph one mode runs (JSON or DOT); `explain` walks
 * the preserve graph's collectives (allreduces and MoE all-to-alls) and says what each
 * prefetches, how many bytes (for routed experts, how many experts), and why the window stops
 * where it does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output.h"

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
    else if (fputs(text, stdout) == EOF)
        stdout_failed(errno);
    free(text);
    view_close(&v);
    return rc;
}

static const char *short_name(const pm_node *n)
{
    const char *dot = strchr(n->name, '.');
    return dot ? dot + 1 : n->name;
}

static bool is_collective(const pm_node *n)
{
    return n->kind == PM_NODE_ALLREDUCE || n->kind == PM_NODE_ALLTOALL;
}

/* "KV cache", "routed experts (5.5 experts)" or "weights" for a prefetch's consumer. */
static void what_of(const pm_scenario *s, const pm_node *cn, char *buf, size_t n)
{
    if (cn->kind == PM_NODE_ATTENTION) {
        snprintf(buf, n, "KV cache");
        return;
    }
    if (cn->routed && cn->k * cn->n > 0 && s->model.experts > 0) {
        /* The node's weights are experts x k x (n / experts): n = experts x columns. */
        pm_footprint fp;
        pm_error e;
        double count = 0;
        if (pm_footprint_compute(s, NULL, 0, &fp, &e) == PM_OK)
            count = fp.experts_read_per_step;
        snprintf(buf, n, "weights of %.2f routed experts", count);
        return;
    }
    snprintf(buf, n, "weights");
}

/* What the prefetches triggered by collective i of g carry and why its window stops. */
static void explain_window(const pm_scenario *s, const pm_graph *g, const pm_schedule *sched,
                           size_t i, double cap)
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
        char what[64];
        what_of(s, cn, what, sizeof what);
        printf("%s prefetch %s%s%s %.1f MiB", count ? "," : "",
               cn->kind == PM_NODE_ATTENTION ? "" : short_name(cn),
               cn->kind == PM_NODE_ATTENTION ? "" : " ", what,
               (p->weight_bytes + p->kv_bytes) / MIB);
        pf_end = sched->slots[j].end_s;
        count++;
    }
    if (!count)
        printf(" nothing prefetched");
    printf(" = %.1f MiB < %.0f MiB\n", n->window_bytes / MIB, cap / MIB);
    if (n->overflow >= 0 && g->nodes[n->overflow].routed && n->kind != PM_NODE_ALLTOALL) {
        printf("  stopped at %s: routed experts are known only after the router runs, so only "
               "the dispatch all-to-all may prefetch them\n",
               g->nodes[n->overflow].name);
    } else if (n->overflow >= 0) {
        const pm_node *o = &g->nodes[n->overflow];
        double m = o->kind == PM_NODE_ATTENTION ? o->kv_bytes : o->weight_bytes;
        printf("  stopped at %s: %s %.1f MiB would make %.1f MiB >= %.0f MiB\n", o->name,
               o->kind == PM_NODE_ATTENTION ? "KV" : "weights", m / MIB,
               (n->window_bytes + m) / MIB, cap / MIB);
    } else {
        printf("  window ended at the next collective (or the end of the graph)\n");
    }
    if (count) {
        const double pf_s = pf_end - sched->slots[i].start_s;
        const char *what = n->kind == PM_NODE_ALLTOALL ? "all-to-all" : "allreduce";
        printf("  prefetch stream busy %.1f us vs %s %.1f us: %s the %s\n", pf_s * 1e6, what,
               ar_s * 1e6, pf_s > ar_s ? "the prefetch outlasts" : "fully hidden behind", what);
    }
}

int cmd_explain(const cli *c)
{
    view v;
    /* Layers 0 and 1, or, when the first MoE layer comes later, up to the one after it. */
    int shown = 2;
    pm_scenario probe;
    int rc = load(c, &probe);
    if (rc)
        return rc;
    if (probe.model.experts > 0 && probe.model.moe_first_layer > 0)
        shown = probe.model.moe_first_layer + 2;
    pm_scenario_release(&probe);
    rc = view_open(c, PM_MODE_PRESERVE, shown, true, &v);
    if (rc)
        return rc;
    const pm_scenario *s = &v.s;
    const double cap = pm_accelerator_l2_window_bytes(&s->accel);
    /* The context the graph was built at (--context, else the phase's default). */
    const int64_t ctx = v.context;
    printf("%s, %s, context %lld: L2 capacity for prefetching %.0f MiB (%s)\n", s->name,
           c->phase == PM_PHASE_DECODE ? "decode step" : "prefill", (long long)ctx, cap / MIB,
           s->accel.name);
    if (shown == 2)
        printf("Layers 0 and 1 shown; every later layer repeats layer 1.\n\n");
    else
        printf("Layers 0 to %d shown (the dense layers, then MoE layers).\n\n", shown - 1);
    int windows = 0;
    for (size_t i = 0; i < v.g->n_nodes; i++) {
        if (!is_collective(&v.g->nodes[i]))
            continue;
        windows++;
        explain_window(s, v.g, &v.sched, i, cap);
    }
    if (!windows)
        printf("no collective in the graph (one device): nothing can be prefetched\n");
    view_close(&v);
    return 0;
}
