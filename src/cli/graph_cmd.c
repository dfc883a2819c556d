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
    int rc = view_open(c, c->mode, c->layers, false, true, &v);
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

/* What one collective's window holds: the figures both formats print. */
typedef struct window {
    const pm_node *ar;   /* the collective */
    double ar_s;         /* its time */
    double pf_s;         /* the prefetch stream's busy time from the collective's start */
    int count;           /* prefetches it triggers */
    const pm_node *stop; /* the node that did not fit (NULL: the window ended) */
    double stop_bytes;
    bool stop_routed;    /* stopped at routed experts, which only the dispatch may prefetch */
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
        w.stop_routed = w.stop->routed && w.ar->kind != PM_NODE_ALLTOALL;
    }
    return w;
}

/* What the prefetches triggered by collective i of g carry and why its window stops. */
static void explain_window(const pm_scenario *s, const pm_graph *g, const pm_schedule *sched,
                           size_t i, double cap)
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
        char what[64];
        what_of(s, cn, what, sizeof what);
        printf("%s prefetch %s%s%s %.1f MiB", count ? "," : "",
               cn->kind == PM_NODE_ATTENTION ? "" : short_name(cn),
               cn->kind == PM_NODE_ATTENTION ? "" : " ", what,
               (p->weight_bytes + p->kv_bytes) / MIB);
        count++;
    }
    if (!count)
        printf(" nothing prefetched");
    printf(" = %.1f MiB < %.0f MiB\n", n->window_bytes / MIB, cap / MIB);
    if (w.stop_routed)
        printf("  stopped at %s: routed experts are known only after the router runs, so only "
               "the dispatch all-to-all may prefetch them\n",
               w.stop->name);
    else if (w.stop)
        printf("  stopped at %s: %s %.1f MiB would make %.1f MiB >= %.0f MiB\n", w.stop->name,
               w.stop->kind == PM_NODE_ATTENTION ? "KV" : "weights", w.stop_bytes / MIB,
               (n->window_bytes + w.stop_bytes) / MIB, cap / MIB);
    else
        printf("  window ended at the next collective (or the end of the graph)\n");
    if (count) {
        const char *what = n->kind == PM_NODE_ALLTOALL ? "all-to-all" : "allreduce";
        printf("  prefetch stream busy %.1f us vs %s %.1f us: %s the %s\n", w.pf_s * 1e6, what,
               w.ar_s * 1e6, w.pf_s > w.ar_s ? "the prefetch outlasts" : "fully hidden behind",
               what);
    }
}

/* One collective's window as a JSON object (keys in docs/output-format.md). */
static void explain_window_json(const pm_graph *g, const pm_schedule *sched, size_t i)
{
    const window w = window_of(g, sched, i);
    printf("    {\"collective\": ");
    fput_json_string(stdout, w.ar->name);
    printf(", \"kind\": \"%s\", \"comm_bytes\": ",
           w.ar->kind == PM_NODE_ALLTOALL ? "all_to_all" : "allreduce");
    fput_json_number(stdout, w.ar->comm_bytes);
    printf(", \"collective_s\": ");
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
               cn->kind == PM_NODE_ATTENTION ? "kv_cache"
               : cn->routed                  ? "routed_experts"
                                             : "weights");
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
    printf(", \"stopped_routed\": %s, \"prefetch_busy_s\": ", w.stop_routed ? "true" : "false");
    fput_json_number(stdout, w.count ? w.pf_s : 0.0);
    printf(", \"hidden\": %s}", w.count && w.pf_s > w.ar_s ? "false" : "true");
}

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

/* explain's first lines: the scenario, the phase, the L2 window and the layers shown. */
static void explain_head(const cli *c, const view *v, double cap, int shown, int start,
                         int period)
{
    const pm_scenario *s = &v->s;
    if (c->format == FMT_JSON) {
        printf("{\"tool\": \"preserve-model %s\", \"scenario\": ", pm_version());
        fput_json_string(stdout, s->name);
        printf(", \"accelerator\": ");
        fput_json_string(stdout, s->accel.name);
        printf(", \"phase\": \"%s\", \"context\": %lld, \"l2_window_bytes\": ",
               c->phase == PM_PHASE_DECODE ? "decode" : "prefill", (long long)v->context);
        fput_json_number(stdout, cap);
        /* The last layer shown ends the graph: its windows are the model's last layer's. */
        printf(", \"layers_shown\": %d, \"last_shown_is_layer\": %d, \"windows\": [\n",
               v->layers, s->model.layers - 1);
        return;
    }
    printf("%s, %s, context %lld: L2 capacity for prefetching %.0f MiB (%s)\n", s->name,
           c->phase == PM_PHASE_DECODE ? "decode step" : "prefill", (long long)v->context,
           cap / MIB, s->accel.name);
    printf("Prefetch consumers %s (the accelerator's prefetch_consumer); the two streams %s HBM "
           "bandwidth (options.hbm_sharing).\n",
           s->accel.prefetch_consumer == PM_CONSUMER_STREAM
               ? "stream: they read what has arrived and fetch the rest themselves"
               : "wait for their prefetch's end (the paper's events)",
           s->options.hbm_sharing ? "share" : "do not share");
    if (shown >= s->model.layers) {
        printf("Every layer shown (0 to %d).\n\n", shown - 1);
        return;
    }
    if (period == 1 && start == 1)
        printf("Layers 0 and 1 shown; every later layer repeats layer 1.\n");
    else if (period == 1)
        printf("Layers 0 to %d shown (the dense layers, then MoE layers); every later layer "
               "repeats layer %d.\n",
               shown - 1, start);
    else {
        const int local = pm_model_local_layers(&s->model), moe = pm_model_moe_layers(&s->model);
        const bool mixed_attn = local > 0 && local < s->model.layers;
        const bool mixed_mlp = moe > 0 && moe < s->model.layers;
        printf("Layers 0 to %d shown; from layer %d on, every layer repeats the one %d before "
               "it (%s%s%s).\n",
               shown - 1, start, period, mixed_attn ? "local and global attention" : "",
               mixed_attn && mixed_mlp ? ", " : "", mixed_mlp ? "dense and MoE layers" : "");
    }
    /* The graph shown ends after layer shown - 1: its last window runs into the LM head, as
     * only the model's last layer's does. */
    printf("Layer %d ends the graph shown, so its last window runs into the LM head, as only the "
           "model's last layer (%d) does; the other layers' last windows prefetch into the next "
           "layer, as %s do.\n\n",
           shown - 1, s->model.layers - 1, shown == 2 ? "layer 0's" : "those of the layers before");
}

int cmd_explain(const cli *c)
{
    view v;
    /* Layers 0 and 1, or enough for every class of layer (explain_layers). */
    pm_scenario probe;
    int rc = load_quiet(c, &probe); /* view_open loads it again, with its warnings */
    if (rc)
        return rc;
    int start, period;
    const int shown = explain_layers(&probe.model, &start, &period);
    pm_scenario_release(&probe);
    rc = view_open(c, PM_MODE_PRESERVE, shown, true, true, &v);
    if (rc)
        return rc;
    const pm_scenario *s = &v.s;
    const double cap = pm_accelerator_l2_window_bytes(&s->accel);
    const bool json = c->format == FMT_JSON;
    explain_head(c, &v, cap, shown, start, period);
    int windows = 0;
    for (size_t i = 0; i < v.g->n_nodes; i++) {
        if (!is_collective(&v.g->nodes[i]))
            continue;
        if (json) {
            printf("%s", windows ? ",\n" : "");
            explain_window_json(v.g, &v.sched, i);
        } else {
            explain_window(s, v.g, &v.sched, i, cap);
        }
        windows++;
    }
    if (json)
        printf("%s]}\n", windows ? "\n" : "");
    else if (!windows)
        printf("no collective in the graph (one device): nothing can be prefetched\n");
    view_close(&v);
    return 0;
}
