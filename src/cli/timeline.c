/*
 * timeline.c - `preserve-model timeline`: the two-stream schedule of one decoder layer, so a
 * reviewer sees what overlaps what. The library schedules a three-layer graph of the chosen mode
 * (pm_timeline_compute: layer 0 has no allreduce before it; layer 1 stands for every layer of
 * its class, local or global attention, dense or MoE, which the header names with their count)
 * and gives every node that overlaps layer 1, from the start of its first node to the start of
 * layer 2's, with times relative to that start: prefetches issued under layer 0's last
 * allreduce begin before it. This file prints them.
 * With --plot FILE it draws them with plots/timeline.gp (lanes: compute, collective, prefetch);
 * the CSV is written beside the figure. --compare shows serial above preserve: the CSV is the two
 * modes' CSVs one after the other, two blank lines between them (gnuplot's data blocks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output.h"
#include "plot.h"

/* One mode's layer as shown: the library's timeline, and the scenario and context it is of. */
typedef struct shown {
    const pm_scenario *s;
    int64_t context;
    pm_timeline tl;
} shown;

/* One mode's layer as a JSON object (keys in docs/output-format.md); times in seconds from the
 * layer's start. */
static void write_json_mode(const shown *sh, bool first)
{
    const pm_timeline *tl = &sh->tl;
    printf("%s    {\"mode\": \"%s\", \"stage\": %d, \"stages\": %d, \"layer\": %d, \"layer_s\": ",
           first ? "" : ",\n", pm_mode_name(tl->mode), tl->stage, tl->stages, tl->layer);
    fput_json_number(stdout, tl->layer_s);
    printf(", \"ops\": [");
    for (size_t k = 0; k < tl->n_ops; k++) {
        const pm_timeline_op *op = &tl->ops[k];
        const pm_node *n = &tl->graph->nodes[op->node];
        printf("%s\n      {\"lane_index\": %d, \"lane\": \"%s\", \"node\": ", k ? "," : "",
               (int)op->lane, pm_lane_name(op->lane));
        fput_json_string(stdout, n->name);
        printf(", \"kind\": \"%s\", \"start_s\": ", pm_node_kind_name(n->kind));
        fput_json_number(stdout, op->start_s);
        printf(", \"end_s\": ");
        fput_json_number(stdout, op->end_s);
        printf(", \"bytes\": ");
        fput_json_number(stdout, op->bytes);
        printf("}");
    }
    printf("\n    ]}");
}

static void write_json(const cli *c, const shown *sh, int n)
{
    const pm_scenario *s = sh[0].s;
    printf("{\n  \"tool\": \"preserve-model %s\",\n  \"scenario\": ", pm_version());
    fput_json_string(stdout, s->name);
    printf(",\n  \"model\": ");
    fput_json_string(stdout, s->model.name);
    printf(",\n  \"accelerator\": ");
    fput_json_string(stdout, s->accel.name);
    printf(",\n  \"devices\": %d,\n  \"phase\": \"%s\",\n  \"context\": %lld,\n"
           "  \"modes\": [\n",
           s->cluster.devices, c->phase == PM_PHASE_DECODE ? "decode" : "prefill",
           (long long)sh[0].context);
    for (int i = 0; i < n; i++)
        write_json_mode(&sh[i], i == 0);
    printf("\n  ]\n}\n");
}

static void write_csv(FILE *f, const cli *c, const shown *sh)
{
    const pm_scenario *s = sh->s;
    const pm_timeline *tl = &sh->tl;
    fprintf(f, "# preserve-model %s timeline --config ", pm_version());
    fput_comment_text(f, c->config);
    fprintf(f, " --mode %s --phase %s --context %lld", pm_mode_name(tl->mode),
            c->phase == PM_PHASE_DECODE ? "decode" : "prefill", (long long)sh->context);
    if (tl->stages > 1)
        fprintf(f, " --stage %d", tl->stage);
    fputc('\n', f);
    print_sets_model_on(f, c, s);
    const pm_model *m = &s->model;
    const int local = pm_model_local_layers(m), moe = pm_model_moe_layers(m);
    if ((local > 0 && local < m->layers) || (moe > 0 && moe < m->layers)) {
        /* Layers of two classes: say which the layer shown is (1, or the one after the first
         * MoE layer: pm_timeline's layer), and how many are like it. */
        const int at = tl->layer;
        const bool local_at = pm_model_layer_is_local(m, at);
        const bool moe_at = pm_model_layer_is_moe(m, at);
        int like = 0;
        for (int l = 0; l < m->layers; l++)
            like += pm_model_layer_is_local(m, l) == local_at &&
                    pm_model_layer_is_moe(m, l) == moe_at;
        const char *local_kind = m->sparse_block > 0     ? "block-sparse attention"
                                 : m->chunked_attention ? "chunked attention"
                                                        : "local attention";
        const char *attn = local == 0 || local == m->layers ? ""
                           : local_at                       ? local_kind
                           : m->sparse_block > 0            ? "dense attention"
                                                            : "global attention";
        fprintf(f, " x %d; layer %d (%s%s%s: %d of %d layers are like it) lasts %.3f us\n",
                s->cluster.devices, at, attn, attn[0] && moe > 0 && moe < m->layers ? ", " : "",
                moe > 0 && moe < m->layers ? (moe_at ? "MoE" : "dense MLP") : "", like, m->layers,
                tl->layer_s * 1e6);
    } else if (tl->stages > 1) {
        fprintf(f, " x %d; pipeline stage %d of 0 to %d (layers %d to %d, one micro-batch): %s "
                   "layer %d last%s %.3f us\n",
                s->cluster.devices, tl->stage, tl->stages - 1, tl->first_layer,
                tl->first_layer + tl->stage_layers - 1,
                tl->layer == tl->first_layer ? "its receive and" : "its", tl->layer,
                tl->layer == tl->first_layer ? "" : "s", tl->layer_s * 1e6);
    } else {
        fprintf(f, " x %d; one layer lasts %.3f us\n", s->cluster.devices, tl->layer_s * 1e6);
    }
    fprintf(f, "lane_index,lane,node,kind,start_us,end_us,bytes\n");
    for (size_t k = 0; k < tl->n_ops; k++) {
        const pm_timeline_op *op = &tl->ops[k];
        const pm_node *n = &tl->graph->nodes[op->node];
        fprintf(f, "%d,%s,", (int)op->lane, pm_lane_name(op->lane));
        fput_csv_field(f, n->name, false);
        fprintf(f, ",%s,%.6f,%.6f,%.0f\n", pm_node_kind_name(n->kind), op->start_s * 1e6,
                op->end_s * 1e6, op->bytes);
    }
}

/* Widens [lo, hi] (us from the layer's start) to every node of the shown layer. */
static void widen_span(const shown *sh, double *lo, double *hi)
{
    for (size_t k = 0; k < sh->tl.n_ops; k++) {
        const double a = sh->tl.ops[k].start_s * 1e6, b = sh->tl.ops[k].end_s * 1e6;
        *lo = a < *lo ? a : *lo;
        *hi = b > *hi ? b : *hi;
    }
}

/* Writes the CSV beside the figure and draws it with plots/timeline.gp: one panel per mode, on
 * one time axis that holds every bar. */
static int draw(const cli *c, const shown *sh, int n)
{
    const plot_shape shape = n > 1 ? PLOT_WIDE_TALL : PLOT_WIDE;
    if (!plot_terminal(c->plot, shape))
        return plot_usage_error(c->plot);
    out_file csv;
    if (!plot_csv_open(c->plot, &csv))
        return EXIT_CONFIG;
    double lo = 0, hi = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0)
            fputs("\n\n", csv.f);
        write_csv(csv.f, c, &sh[i]);
        widen_span(&sh[i], &lo, &hi);
    }
    const pm_scenario *s = sh[0].s;
    char *path = str_printf("%s", csv.path);
    char facts[160];
    scenario_facts(s, facts, sizeof facts);
    char *title = str_printf("%s, %s x %d, batch %d, %s at context %lld", s->model.name,
                             s->accel.name, s->cluster.devices, s->workload.batch,
                             c->phase == PM_PHASE_DECODE ? "decode step" : "prefill",
                             (long long)sh[0].context);
    int rc = !path || !title ? out_of_memory() : 0;
    if (rc == 0)
        rc = out_file_commit(&csv);
    else
        out_file_abort(&csv);
    char prefix[16], panel[2][128], t_end[2][64], x_lo[64], x_hi[64], panels[8];
    for (int i = 0; i < 2; i++) {
        const shown *p = &sh[i < n ? i : 0];
        snprintf(panel[i], sizeof panel[i], "%s: one layer %.1f us", pm_mode_name(p->tl.mode),
                 p->tl.layer_s * 1e6);
        snprintf(t_end[i], sizeof t_end[i], "%.6f", p->tl.layer_s * 1e6);
    }
    /* The layer's own nodes are named "L<k>.": the labels leave that out. */
    snprintf(prefix, sizeof prefix, "L%d.", sh[0].tl.layer);
    const double pad = (hi - lo) * 0.02;
    snprintf(x_lo, sizeof x_lo, "%.6f", lo - pad);
    snprintf(x_hi, sizeof x_hi, "%.6f", hi + pad);
    snprintf(panels, sizeof panels, "%d", n);
    const plot_var vars[] = {{"ttl", title, false},        {"facts", facts, false},        {"panels", panels, true},
                             {"xmin", x_lo, true},         {"xmax", x_hi, true},
                             {"prefix", prefix, false},    {"ttl0", panel[0], false},
                             {"t_end0", t_end[0], true},   {"ttl1", panel[1], false},
                             {"t_end1", t_end[1], true}};
    if (rc == 0)
        rc = plot_draw("timeline.gp", path, c->plot, shape, vars, sizeof vars / sizeof vars[0]);
    free(path);
    free(title);
    return rc;
}

int cmd_timeline(const cli *c)
{
    if (c->plot && c->format == FMT_JSON)
        return usage_error("--plot: the figure is drawn from CSV (no --format json)");
    pm_scenario s;
    int64_t context;
    int rc = load_step(c, true, &s, &context);
    if (rc)
        return rc;
    const pm_mode modes[2] = {c->compare ? PM_MODE_SERIAL : c->mode, PM_MODE_PRESERVE};
    const int n = c->compare ? 2 : 1;
    shown sh[2];
    int opened = 0;
    for (; rc == 0 && opened < n; opened++) {
        sh[opened] = (shown){.s = &s, .context = context};
        pm_error err;
        if (pm_timeline_compute_stage(&s, modes[opened], c->phase, context, c->stage,
                                      &sh[opened].tl, &err) !=
            PM_OK)
            rc = config_error(&err);
    }
    if (rc == 0 && c->plot) {
        rc = draw(c, sh, n);
    } else if (rc == 0 && c->format == FMT_JSON) {
        write_json(c, sh, n);
    } else if (rc == 0) {
        for (int i = 0; i < n; i++) {
            if (i > 0)
                fputs("\n\n", stdout);
            write_csv(stdout, c, &sh[i]);
        }
    }
    for (int i = 0; i < opened; i++)
        pm_timeline_release(&sh[i].tl);
    pm_scenario_release(&s);
    return rc;
}
