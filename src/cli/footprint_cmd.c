/*
 * footprint_cmd.c - `preserve-model footprint`: the per-device memory of one layer's attention
 * (weights and KV cache) and MLP (weights) against the device count, beside the L2 sizes of the
 * bundled accelerators (the paper's Fig 2).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output.h"

/* --devices-list (default 1,2,4,8,16), as many counts as it holds (devs: free()); -1, said on
 * stderr, when one is not a device count or an item is empty. */
static int parse_devices(const cli *c, int **devs)
{
    const char *list = c->devices_list ? c->devices_list : "1,2,4,8,16";
    size_t n = 1;
    for (const char *q = list; *q; q++)
        n += *q == ',';
    *devs = calloc(n, sizeof **devs);
    if (!*devs || n > INT_MAX) {
        out_of_memory();
        return -1;
    }
    int nd = 0;
    for (const char *p = list;; nd++) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *tok = str_printf("%.*s", (int)(len < 64 ? len : 64), p);
        int64_t v;
        const bool ok = tok && len > 0 && len < 64 &&
                        parse_count("--devices-list", tok, 1, PM_MAX_DEVICES, &v);
        if (!tok)
            out_of_memory();
        else if (len == 0)
            fprintf(stderr, "%s: --devices-list: empty item %d in '%s'\n", prog, nd + 1, list);
        else if (len >= 64)
            fprintf(stderr, "%s: --devices-list: item %d is longer than 63 characters\n", prog,
                    nd + 1);
        free(tok);
        if (!ok)
            return -1;
        (*devs)[nd] = (int)v;
        if (!comma)
            return nd + 1;
        p = comma + 1;
    }
}

/* A row as a JSON object (keys in docs/output-format.md), bytes exact. */
static void write_row_json(const pm_footprint_row *r, int devices, bool moe, bool first)
{
    printf("%s    {\"devices\": %d", first ? "" : ",\n", devices);
    const char *keys[] = {"attn_weight_bytes", "kv_bytes", "attn_weight_plus_kv_bytes",
                          "mlp_weight_bytes", "kv_local_bytes"};
    const double vals[] = {r->attn_weight_bytes, r->kv_bytes, r->attn_weight_bytes + r->kv_bytes,
                           r->mlp_weight_bytes, r->kv_local_bytes};
    for (int k = 0; k < 5; k++) {
        printf(", \"%s\": ", keys[k]);
        fput_json_number(stdout, vals[k]);
    }
    if (moe) {
        printf(", \"expert_parallel\": %d, \"moe_weight_bytes\": ", r->expert_parallel);
        fput_json_number(stdout, r->moe_weight_bytes);
        printf(", \"moe_read_bytes\": ");
        fput_json_number(stdout, r->moe_read_bytes);
        printf(", \"experts_read_per_step\": ");
        fput_json_number(stdout, r->experts_read_per_step);
    }
    printf(", \"ideal_split\": %s}", r->ideal_split ? "true" : "false");
}

static void write_row(const cli *c, const pm_scenario *s, int devices, int ep, int64_t ctx,
                      bool first)
{
    pm_footprint_row r; /* its ep was checked by check_ep_rows */
    pm_footprint_row_compute(s, devices, ep, ctx, &r, NULL);
    const bool moe = s->model.experts > 0;
    const double attn = r.attn_weight_bytes / MIB, kv = r.kv_bytes / MIB,
                 mlp = r.mlp_weight_bytes / MIB, kv_local = r.kv_local_bytes / MIB;
    const double moe_w = r.moe_weight_bytes / MIB, moe_read = r.moe_read_bytes / MIB;
    const char *note = r.ideal_split ? "  (more devices than heads: ideal split)" : "";
    if (c->format == FMT_JSON)
        write_row_json(&r, devices, moe, first);
    else if (moe && c->format == FMT_TABLE)
        printf("%8d %14.2f %14.2f %16.2f %14.2f %14.2f %6d %14.2f %14.2f %10.3g%s\n", devices,
               attn, kv, attn + kv, mlp, kv_local, r.expert_parallel, moe_w, moe_read,
               r.experts_read_per_step, note);
    else if (moe)
        printf("%d,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%.6g,%.6g,%.6g\n", devices, attn, kv, attn + kv,
               mlp, kv_local, r.expert_parallel, moe_w, moe_read, r.experts_read_per_step);
    else if (c->format == FMT_TABLE)
        printf("%8d %14.2f %14.2f %16.2f %14.2f %14.2f%s\n", devices, attn, kv, attn + kv, mlp,
               kv_local, note);
    else
        printf("%d,%.6g,%.6g,%.6g,%.6g,%.6g\n", devices, attn, kv, attn + kv, mlp, kv_local);
}

/* The bundled accelerators' L2 beside it: as comments, or the JSON's "l2" array. */
static void write_l2_sizes(const cli *c)
{
    char **names = NULL;
    size_t n = 0;
    pm_error err;
    const bool json = c->format == FMT_JSON;
    if (pm_data_list(c->data_dir, PM_KIND_ACCELERATOR, &names, &n, &err) != PM_OK)
        n = 0;
    printf(json ? ",\n  \"l2\": [" : "\n# on-chip L2 / last-level SRAM of the bundled accelerators\n");
    int shown = 0;
    for (size_t i = 0; i < n; i++) {
        pm_accelerator a;
        pm_load_opts o = {c->data_dir, NULL, 0};
        if (pm_accelerator_load(names[i], &o, &a, NULL) != PM_OK)
            continue;
        if (json) {
            printf("%s{\"accelerator\": ", shown++ ? ", " : "");
            fput_json_string(stdout, a.name);
            printf(", \"l2_capacity_bytes\": ");
            fput_json_number(stdout, a.l2_capacity_bytes);
            printf("}");
        } else {
            printf("# %-16s %8.1f MiB\n", a.name, a.l2_capacity_bytes / MIB);
        }
    }
    if (json)
        printf("]\n}\n");
    pm_names_free(names, n);
}

/* footprint --format json: what the table's comment lines say, the rows and the L2 sizes. */
static void write_json(const cli *c, const pm_scenario *s, const int *devs, int nd, int ep,
                       int64_t ctx)
{
    const pm_workload *w = &s->workload;
    printf("{\n  \"tool\": \"preserve-model %s\",\n  \"scenario\": ", pm_version());
    fput_json_string(stdout, s->name);
    printf(",\n  \"model\": ");
    fput_json_string(stdout, s->model.name);
    printf(",\n  \"batch\": %d,\n  \"context\": %lld,\n  \"weight_dtype\": \"%s\",\n"
           "  \"kv_dtype\": \"%s\",\n  \"layers\": %d,\n  \"local_layers\": %d,\n"
           "  \"sliding_window\": %d,\n  \"blocksparse_block_size\": %d,\n"
           "  \"experts\": %d,\n  \"moe_layers\": %d,\n  \"rows\": [\n",
           w->batch, (long long)ctx, pm_dtype_name(w->weight_dtype), pm_dtype_name(w->kv_dtype),
           s->model.layers, pm_model_local_layers(&s->model), s->model.sliding_window,
           s->model.sparse_block,
           s->model.experts, s->model.experts > 0 ? pm_model_moe_layers(&s->model) : 0);
    for (int i = 0; i < nd; i++)
        write_row(c, s, devs[i], ep, ctx, i == 0);
    printf("\n  ]");
    write_l2_sizes(c);
}

/* The overrides of the device count and the expert-parallel degree (--devices, --ep, --set
 * cluster.devices=, --set cluster.expert_parallel=): the rows' device counts are --devices-list's,
 * so a device count would change nothing and is refused; an expert-parallel degree is every
 * row's, kept out of the load (the scenario's own device count does not bound it) and checked
 * at each row. kept receives the other overrides; 0 or EXIT_USAGE, said on stderr. */
static int take_parallel(const cli *c, const char **kept, size_t *n_kept, int *ep)
{
    static const char dev_key[] = "cluster.devices=", ep_key[] = "cluster.expert_parallel=";
    *n_kept = 0;
    *ep = 0;
    for (size_t i = 0; i < c->n_sets; i++) {
        const char *o = c->sets[i];
        if (strncmp(o, dev_key, sizeof dev_key - 1) == 0)
            return usage_error("footprint: --set %s (or --devices) would change nothing: the "
                               "rows' device counts are --devices-list's",
                               o);
        int64_t v;
        if (strncmp(o, ep_key, sizeof ep_key - 1) != 0) {
            kept[(*n_kept)++] = o;
            continue;
        }
        if (!parse_count("--ep", o + sizeof ep_key - 1, 0, PM_MAX_DEVICES, &v))
            return EXIT_USAGE;
        *ep = v > 1 ? (int)v : 1;
    }
    return 0;
}

/* An expert-parallel degree given (ep > 0) is checked at every row as the plan checks it: a MoE
 * model, dividing the row's devices and the experts. 0 or EXIT_CONFIG, said on stderr. */
static int check_ep_rows(const pm_scenario *s, const int *devs, int nd, int ep)
{
    for (int i = 0; ep > 0 && i < nd; i++) {
        pm_footprint_row r;
        pm_error err;
        if (pm_footprint_row_compute(s, devs[i], ep, s->workload.seq_len, &r, &err) != PM_OK) {
            fprintf(stderr, "%s: error: footprint --ep %d at %d device%s (--devices-list): %s: "
                    "%s\n",
                    prog, ep, devs[i], devs[i] == 1 ? "" : "s", err.path, err.message);
            return EXIT_CONFIG;
        }
    }
    return 0;
}

int cmd_footprint(const cli *c)
{
    const char *kept[MAX_SETS];
    size_t n_kept = 0;
    int ep = 0;
    int rc = take_parallel(c, kept, &n_kept, &ep);
    if (rc)
        return rc;
    pm_scenario s;
    const pm_load_opts o = {c->data_dir, kept, n_kept};
    if ((rc = load_with(c, &o, &s)) != 0)
        return rc;
    int *devs = NULL;
    const int nd = parse_devices(c, &devs);
    if (nd < 0 || (rc = check_ep_rows(&s, devs, nd, ep)) != 0) {
        free(devs);
        pm_scenario_release(&s);
        return nd < 0 ? EXIT_USAGE : rc;
    }
    const pm_workload *w = &s.workload;
    const int64_t ctx = w->seq_len; /* the whole sequence cached: the largest KV cache */
    if (c->format == FMT_JSON) {
        write_json(c, &s, devs, nd, ep, ctx);
        free(devs);
        pm_scenario_release(&s);
        return 0;
    }
    printf("# preserve-model %s footprint: ", pm_version());
    fput_comment_text(stdout, s.model.name);
    printf(", batch %d, context %lld, weights %s, KV %s\n", w->batch, (long long)ctx,
           pm_dtype_name(w->weight_dtype), pm_dtype_name(w->kv_dtype));
    printf("# per layer and device; KV heads are replicated when devices exceed KV heads\n");
    const int local = pm_model_local_layers(&s.model);
    if (local > 0 && s.model.sparse_block > 0)
        printf("# %d of %d layers attend block-sparsely (blocks of %d positions: the last %d "
               "whole, 1 in %d before them); every layer's cache holds every position\n",
               local, s.model.layers, s.model.sparse_block, s.model.sparse_local_blocks,
               s.model.sparse_vert_stride);
    else if (local > 0 && local < s.model.layers)
        printf("# %d of %d layers attend through a %d-token window: kv is a global layer's, "
               "kv_local a local layer's\n",
               local, s.model.layers, s.model.sliding_window);
    else if (local > 0)
        printf("# every layer attends through a %d-token window: kv holds the window\n",
               s.model.sliding_window);
    const bool moe = s.model.experts > 0;
    if (moe)
        printf("# MoE: %d experts (top-%d) + %d shared in %d of %d layers; mlp_W is a dense "
               "layer's; moe_W one MoE layer's experts, shared experts and router, moe_read what "
               "a decode step reads of them at batch %d (experts_read distinct experts on the "
               "busiest device), with experts over ep ranks\n",
               s.model.experts, s.model.experts_per_token, s.model.shared_experts,
               pm_model_moe_layers(&s.model), s.model.layers, w->batch);
    if (c->format == FMT_TABLE)
        printf("%8s %14s %14s %16s %14s %14s%s\n", "devices", "attn_W_MiB", "kv_MiB",
               "attn_W+kv_MiB", "mlp_W_MiB", "kv_local_MiB",
               moe ? "     ep      moe_W_MiB   moe_read_MiB experts_read" : "");
    else
        printf("devices,attn_weights_MiB,kv_MiB,attn_weights_plus_kv_MiB,mlp_weights_MiB,"
               "kv_local_MiB%s\n",
               moe ? ",expert_parallel,moe_weights_MiB,moe_read_MiB,experts_read_per_step" : "");
    for (int i = 0; i < nd; i++)
        write_row(c, &s, devs[i], ep, ctx, i == 0);
    write_l2_sizes(c);
    free(devs);
    pm_scenario_release(&s);
    return 0;
}
