/*
 * graph_cmd.c - `graph` prints the per-device graph one mode runs (JSON or DOT); `explain`
 * prints the library's walk of the preserve graph's collectives (allreduces and MoE
 * all-to-alls, pm_explain_compute): what each prefetches, how many bytes (for routed experts,
 * how many experts), and why the window stops where it does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "fmt.h"
#include "output.h"

int cmd_graph(const cli *c)
{
    view v;
    int rc = view_open(c, c->mode, c->layers, true, &v);
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

/* "KV cache", "weights of 5.50 routed experts" or "weights" for a prefetch's consumer. */
static void what_of(const pm_scenario *s, const pm_explain *e, const pm_node *cn, char *buf,
                    size_t n)
{
    if (cn->kind == PM_NODE_ATTENTION)
        snprintf(buf, n, "KV cache");
    else if (cn->routed && cn->k * cn->n > 0 && s->model.experts > 0)
        snprintf(buf, n, "weights of %.2f routed experts", e->experts_read_per_step);
    else
        snprintf(buf, n, "weights");
}

/* An all-gather that the window of the reduce-scatter before it runs through (insert.c):
 * that window, or NULL. */
static const pm_explain_window *merged_into(const pm_explain *e, const pm_explain_window *w)
{
    if (w->kind != PM_NODE_ALL_GATHER || w == e->windows || w->n_prefetches)
        return NULL;
    const pm_explain_window *prev = w - 1;
    /* It reached the all-gather unless it stopped before it. */
    return prev->kind == PM_NODE_REDUCE_SCATTER &&
                   (prev->stopped_at < 0 || prev->stopped_at > w->collective)
               ? prev
               : NULL;
}

/* What the prefetches of window w carry and why it stops. */
static void explain_window(const pm_scenario *s, const pm_explain *e, const pm_explain_window *w)
{
    const pm_graph *g = e->graph;
    const pm_node *n = &g->nodes[w->collective];
    char comm[FMT_G9_MAX], cap[FMT_G9_MAX], sum[FMT_G9_MAX], b[FMT_G9_MAX];
    fmt_bytes(w->comm_bytes, comm);
    fmt_bytes(e->l2_window_bytes, cap);
    const pm_explain_window *rs = merged_into(e, w);
    if (rs) {
        printf("during %s (%s, %.1f us): no window of its own: the window of %s runs "
               "through it\n",
               n->name, comm, w->collective_s * 1e6, g->nodes[rs->collective].name);
        return;
    }
    printf("during %s (%s, %.1f us):", n->name, comm, w->collective_s * 1e6);
    for (size_t k = 0; k < w->n_prefetches; k++) {
        const pm_explain_prefetch *p = &e->prefetches[w->first_prefetch + k];
        const pm_node *cn = &g->nodes[p->consumer];
        char what[64];
        what_of(s, e, cn, what, sizeof what);
        fmt_bytes(p->bytes, b);
        printf("%s prefetch %s%s%s %s", k ? "," : "",
               cn->kind == PM_NODE_ATTENTION ? "" : short_name(cn),
               cn->kind == PM_NODE_ATTENTION ? "" : " ", what, b);
    }
    if (!w->n_prefetches)
        printf(" nothing prefetched");
    fmt_bytes(w->window_bytes, sum);
    printf(" = %s < %s\n", sum, cap);
    const pm_node *stop = w->stopped_at >= 0 ? &g->nodes[w->stopped_at] : NULL;
    if (w->stopped_routed)
        printf("  stopped at %s: routed experts are known only after the router runs, so only "
               "the dispatch all-to-all may prefetch them\n",
               stop->name);
    else if (stop) {
        fmt_bytes(w->stopped_bytes, b);
        fmt_bytes(w->window_bytes + w->stopped_bytes, sum);
        printf("  stopped at %s: %s %s would make %s >= %s\n", stop->name,
               stop->kind == PM_NODE_ATTENTION ? "KV" : "weights", b, sum, cap);
    } else
        printf("  window ended at the next collective (or the end of the graph)\n");
    if (w->n_prefetches) {
        const char *what = w->kind == PM_NODE_ALLTOALL         ? "all-to-all"
                           : w->kind == PM_NODE_REDUCE_SCATTER ? "reduce-scatter"
                           : w->kind == PM_NODE_ALL_GATHER     ? "all-gather"
                           : w->kind == PM_NODE_RECV           ? "receive"
                                                               : "allreduce";
        printf("  prefetch stream busy %.1f us vs %s %.1f us: %s the %s\n",
               w->prefetch_busy_s * 1e6, what, w->collective_s * 1e6,
               w->hidden ? "fully hidden behind" : "the prefetch outlasts", what);
    }
}

/* One window as a JSON object (keys in docs/output-format.md). */
static void explain_window_json(const pm_explain *e, const pm_explain_window *w)
{
    const pm_graph *g = e->graph;
    printf("    {\"collective\": ");
    fput_json_string(stdout, g->nodes[w->collective].name);
    printf(", \"kind\": \"%s\", \"comm_bytes\": ", pm_collective_kind_name(w->kind));
    fput_json_number(stdout, w->comm_bytes);
    printf(", \"collective_s\": ");
    fput_json_number(stdout, w->collective_s);
    printf(", \"prefetches\": [");
    for (size_t k = 0; k < w->n_prefetches; k++) {
        const pm_explain_prefetch *p = &e->prefetches[w->first_prefetch + k];
        printf("%s{\"consumer\": ", k ? ", " : "");
        fput_json_string(stdout, g->nodes[p->consumer].name);
        printf(", \"what\": \"%s\", \"bytes\": ", pm_prefetch_what_name(p->what));
        fput_json_number(stdout, p->bytes);
        printf("}");
    }
    printf("], \"window_bytes\": ");
    fput_json_number(stdout, w->window_bytes);
    printf(", \"stopped_at\": ");
    if (w->stopped_at >= 0) {
        fput_json_string(stdout, g->nodes[w->stopped_at].name);
        printf(", \"stopped_bytes\": ");
        fput_json_number(stdout, w->stopped_bytes);
    } else {
        printf("null, \"stopped_bytes\": null");
    }
    printf(", \"stopped_routed\": %s, \"prefetch_busy_s\": ", w->stopped_routed ? "true" : "false");
    fput_json_number(stdout, w->prefetch_busy_s);
    printf(", \"hidden\": %s}", w->hidden ? "true" : "false");
}

/* explain's lines on a pipeline stage (its layers are alike: pm_pipeline_plan's rule). */
static void explain_stage_head(const pm_explain *e)
{
    const int f = e->first_layer, n = e->stage_layers, shown = e->layers_shown;
    const bool last = e->stage == e->stages - 1;
    printf("Pipeline stage %d of stages 0 to %d: layers %d to %d%s%s, at one micro-batch. It "
           "waits on its input (Recv%s), a window PRESERVE fills like a collective's.\n",
           e->stage, e->stages - 1, f, f + n - 1, e->stage == 0 ? ", the embedding" : "",
           last ? ", the LM head" : "",
           e->stage == 0 ? ": the sampled tokens' ids from the last stage, in decode; none in "
                           "prefill"
                         : ": the previous stage's hidden states");
    if (shown >= n) {
        printf("Every layer of the stage shown (%d to %d).\n\n", f, f + n - 1);
        return;
    }
    printf("Layers %d and %d shown; every later layer of the stage repeats layer %d.\n", f, f + 1,
           f + 1);
    printf("Layer %d ends the graph shown, so its last window runs into %s, as only the stage's "
           "last layer (%d) does; the other layers' last windows prefetch into the next layer, "
           "as layer %d's do.\n\n",
           f + 1, last ? "the LM head" : "the stage's end (its send to the next stage)", f + n - 1,
           f);
}

/* explain's first lines: the scenario, the phase, the L2 window and the layers shown. */
static void explain_head(const cli *c, const pm_scenario *s, int64_t context, const pm_explain *e)
{
    const double cap = e->l2_window_bytes;
    const int shown = e->layers_shown, start = e->repeat_from, period = e->repeat_period;
    if (c->format == FMT_JSON) {
        printf("{\"tool\": \"preserve-model %s\", \"scenario\": ", pm_version());
        fput_json_string(stdout, s->name);
        printf(", \"accelerator\": ");
        fput_json_string(stdout, s->accel.name);
        printf(", \"phase\": \"%s\", \"context\": %lld, \"l2_window_bytes\": ",
               c->phase == PM_PHASE_DECODE ? "decode" : "prefill", (long long)context);
        fput_json_number(stdout, cap);
        /* The last layer shown ends the graph: its windows are the stage's last layer's. */
        printf(", \"stage\": %d, \"stages\": %d, \"first_layer\": %d, \"stage_layers\": %d",
               e->stage, e->stages, e->first_layer, e->stage_layers);
        printf(", \"layers_shown\": %d, \"last_shown_is_layer\": %d, \"windows\": [\n", shown,
               e->first_layer + e->stage_layers - 1);
        return;
    }
    char capacity[FMT_G9_MAX];
    fmt_bytes(cap, capacity);
    printf("%s, %s, context %lld: L2 capacity for prefetching %s (%s)\n", s->name,
           c->phase == PM_PHASE_DECODE ? "decode step" : "prefill", (long long)context,
           capacity, s->accel.name);
    printf("Prefetch consumers %s (the accelerator's prefetch_consumer); the two streams %s HBM "
           "bandwidth (options.hbm_sharing).\n",
           s->accel.prefetch_consumer == PM_CONSUMER_STREAM
               ? "stream: they read what has arrived and fetch the rest themselves"
               : "wait for their prefetch's end (the paper's events)",
           s->options.hbm_sharing ? "share" : "do not share");
    if (e->stages > 1) {
        explain_stage_head(e);
        return;
    }
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
    pm_scenario s;
    int64_t context;
    int rc = load_step(c, true, &s, &context);
    if (rc)
        return rc;
    pm_explain e;
    pm_error err;
    if (pm_explain_compute_stage(&s, c->phase, context, c->stage, &e, &err) != PM_OK) {
        rc = config_error(&err);
    } else {
        const bool json = c->format == FMT_JSON;
        explain_head(c, &s, context, &e);
        for (size_t i = 0; i < e.n_windows; i++) {
            if (json) {
                printf("%s", i ? ",\n" : "");
                explain_window_json(&e, &e.windows[i]);
            } else {
                explain_window(&s, &e, &e.windows[i]);
            }
        }
        if (json)
            printf("%s]}\n", e.n_windows ? "\n" : "");
        else if (!e.n_windows)
            printf("no collective in the graph (one device): nothing can be prefetched\n");
    }
    pm_explain_release(&e);
    pm_scenario_release(&s);
    return rc;
}
