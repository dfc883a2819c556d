/*
 * graph_cmd.c - `graph` prints the per-device graph one mode runs (JSON or DOT); `explain` walks
 * the preserve graph's allreduces and says what each prefetches, how many bytes, and why the
 * window stops where it does.
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

/* What one allreduce's window holds: the figures both formats print. */
typedef struct window {
    const pm_node *ar;
    double ar_s;       /* the allreduce's time */
    double pf_s;       /* the prefetch stream's busy time from the allreduce's start */
    int count;         /* prefetches it triggers */
    const pm_node *stop; /* the node that did not fit (NULL: the window ended) */
    double stop_bytes;
} window;

static window window_of(const pm_graph *g, const pm_schedule *sched, size_t i)
{
    window w = {.ar = &g->nodes[i]};
    w.ar_s = sched->slots[i].end_s - sched->slots[i].start_s;
    double pf_end = sched->slots[i].start_s;
    for (size_t j = 0; j < g->n_nodes; j++) {
        const pm_node *p = &g->nodes[j];
        if (p->kind == PM_NODE_PREFETCH && p->trigger == (int)i) {
            pf_end = sched->slots[j].end_s;
            w.count++;
        }
    }
    w.pf_s = pf_end - sched->slots[i].start_s;
    if (w.ar->overflow >= 0) {
        w.stop = &g->nodes[w.ar->overflow];
        w.stop_bytes = w.stop->kind == PM_NODE_ATTENTION ? w.stop->kv_bytes
                                                         : w.stop->weight_bytes;
    }
    return w;
}

/* What the prefetches triggered by allreduce i of g carry and why its window stops. */
static void explain_window(const pm_graph *g, const pm_schedule *sched, size_t i, double cap)
{
    const window w = window_of(g, sched, i);
    const pm_node *n = w.ar;
    printf("during %s (%.1f KiB, %.1f us):", n->name, n->comm_bytes / 1024.0, w.ar_s * 1e6);
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
        count++;
    }
    if (!count)
        printf(" nothing prefetched");
    printf(" = %.1f MiB < %.0f MiB\n", n->window_bytes / MIB, cap / MIB);
    if (w.stop)
        printf("  stopped at %s: %s %.1f MiB would make %.1f MiB >= %.0f MiB\n", w.stop->name,
               w.stop->kind == PM_NODE_ATTENTION ? "KV" : "weights", w.stop_bytes / MIB,
               (n->window_bytes + w.stop_bytes) / MIB, cap / MIB);
    else
        printf("  window ended at the next allreduce (or the end of the graph)\n");
    if (count)
        printf("  prefetch stream busy %.1f us vs allreduce %.1f us: %s\n", w.pf_s * 1e6,
               w.ar_s * 1e6,
               w.pf_s > w.ar_s ? "the prefetch outlasts the allreduce"
                               : "fully hidden behind the allreduce");
}

/* One allreduce's window as a JSON object (keys in docs/output-format.md). */
static void explain_window_json(const pm_graph *g, const pm_schedule *sched, size_t i)
{
    const window w = window_of(g, sched, i);
    printf("    {\"allreduce\": ");
    fput_json_string(stdout, w.ar->name);
    printf(", \"comm_bytes\": ");
    fput_json_number(stdout, w.ar->comm_bytes);
    printf(", \"allreduce_s\": ");
    fput_json_number(stdout, w.ar_s);
    printf(", \"prefetches\": [");
    int count = 0;
    for (size_t j = 0; j < g->n_nodes; j++) {
        const pm_node *p = &g->nodes[j];
        if (p->kind != PM_NODE_PREFETCH || p->trigger != (int)i)
            continue;
        const pm_node *cn = &g->nodes[p->consumer];
        printf("%s{\"consumer\": ", count++ ? ", " : "");
        fput_json_string(stdout, cn->name);
        printf(", \"what\": \"%s\", \"bytes\": ",
               cn->kind == PM_NODE_ATTENTION ? "kv_cache" : "weights");
        fput_json_number(stdout, p->weight_bytes + p->kv_bytes);
        printf("}");
    }
    printf("], \"window_bytes\": ");
    fput_json_number(stdout, w.ar->window_bytes);
    printf(", \"stopped_at\": ");
    if (w.stop) {
        fput_json_string(stdout, w.stop->name);
        printf(", \"stopped_bytes\": ");
        fput_json_number(stdout, w.stop_bytes);
    } else {
        printf("null, \"stopped_bytes\": null");
    }
    printf(", \"prefetch_busy_s\": ");
    fput_json_number(stdout, count ? w.pf_s : 0.0);
    printf(", \"hidden\": %s}", count && w.pf_s > w.ar_s ? "false" : "true");
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
    const bool json = c->format == FMT_JSON;
    if (json) {
        printf("{\"tool\": \"preserve-model %s\", \"scenario\": ", pm_version());
        fput_json_string(stdout, s->name);
        printf(", \"accelerator\": ");
        fput_json_string(stdout, s->accel.name);
        printf(", \"phase\": \"%s\", \"context\": %lld, \"l2_window_bytes\": ",
               c->phase == PM_PHASE_DECODE ? "decode" : "prefill", (long long)ctx);
        fput_json_number(stdout, cap);
        printf(", \"layers_shown\": %d, \"windows\": [\n", v.layers);
    } else {
        printf("%s, %s, context %lld: L2 capacity for prefetching %.0f MiB (%s)\n", s->name,
               c->phase == PM_PHASE_DECODE ? "decode step" : "prefill", (long long)ctx,
               cap / MIB, s->accel.name);
        printf("Layers 0 and 1 shown; every later layer repeats layer 1.\n\n");
    }
    int windows = 0;
    for (size_t i = 0; i < v.g->n_nodes; i++) {
        if (v.g->nodes[i].kind != PM_NODE_ALLREDUCE)
            continue;
        if (json) {
            printf("%s", windows ? ",\n" : "");
            explain_window_json(v.g, &v.sched, i);
        } else {
            explain_window(v.g, &v.sched, i, cap);
        }
        windows++;
    }
    if (json)
        printf("%s]}\n", windows ? "\n" : "");
    else if (!windows)
        printf("no allreduce in the graph (one device): nothing can be prefetched\n");
    view_close(&v);
    return 0;
}
