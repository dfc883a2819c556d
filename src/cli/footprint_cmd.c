/*
 * footprint_cmd.c - `preserve-model footprint`: the per-device memory of one layer's attention
 * (weights and KV cache) and MLP (weights) against the device count, beside the L2 sizes of the
 * bundled accelerators (the paper's Fig 2).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

#define MAX_DEVICE_COUNTS 32

/* --devices-list (default 1,2,4,8,16): up to MAX_DEVICE_COUNTS counts; -1, said on stderr, when
 * one is not a device count. */
static int parse_devices(const cli *c, int *devs)
{
    const char *list = c->devices_list ? c->devices_list : "1,2,4,8,16";
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    int nd = 0;
    for (char *tok = strtok(buf, ","); tok && nd < MAX_DEVICE_COUNTS; tok = strtok(NULL, ",")) {
        int64_t v;
        if (!parse_count("--devices-list", tok, 1, PM_MAX_DEVICES, &v))
            return -1;
        devs[nd++] = (int)v;
    }
    return nd;
}

/* One row: s on devices devices at context ctx. Beyond the heads Megatron sharding cannot split,
 * the ideal split is shown instead, with whole KV heads. */
static void write_row(const cli *c, const pm_scenario *s, int devices, int64_t ctx)
{
    pm_scenario t = *s;
    t.provenance = NULL;
    t.cluster.devices = devices;
    pm_shard sh;
    const bool ok = pm_shard_compute(&t, &sh, NULL) == PM_OK;
    if (!ok) {
        t.options.sharding = PM_SHARDING_IDEAL;
        pm_shard_compute(&t, &sh, NULL);
        sh.kv_heads = sh.kv_heads < 1 ? 1 : sh.kv_heads; /* a KV head cannot be split */
    }
    pm_footprint fp;
    pm_footprint_compute(&t, &sh, ctx, &fp, NULL);
    const double attn = fp.attn_weight_bytes / MIB;
    /* One layer's: the largest, a global layer's, or the window's when every layer is local. */
    const double kv = (fp.local_layers < s->model.layers ? fp.kv_bytes_global_layer
                                                         : fp.kv_bytes_local_layer) / MIB;
    const double mlp = fp.mlp_weight_bytes / MIB, kv_local = fp.kv_bytes_local_layer / MIB;
    if (c->format == FMT_TABLE)
        printf("%8d %14.2f %14.2f %16.2f %14.2f %14.2f%s\n", devices, attn, kv, attn + kv, mlp,
               kv_local, ok ? "" : "  (more devices than heads: ideal split)");
    else
        printf("%d,%.6g,%.6g,%.6g,%.6g,%.6g\n", devices, attn, kv, attn + kv, mlp, kv_local);
}

/* The bundled accelerators' L2 beside it, as comments. */
static void write_l2_sizes(const cli *c)
{
    char **names = NULL;
    size_t n = 0;
    pm_error err;
    if (pm_data_list(c->data_dir, PM_KIND_ACCELERATOR, &names, &n, &err) != PM_OK)
        return;
    printf("\n# on-chip L2 / last-level SRAM of the bundled accelerators\n");
    for (size_t i = 0; i < n; i++) {
        pm_accelerator a;
        pm_load_opts o = {c->data_dir, NULL, 0};
        if (pm_accelerator_load(names[i], &o, &a, NULL) == PM_OK)
            printf("# %-16s %8.1f MiB\n", a.name, a.l2_capacity_bytes / MIB);
    }
    pm_names_free(names, n);
}

int cmd_footprint(const cli *c)
{
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    int devs[MAX_DEVICE_COUNTS];
    const int nd = parse_devices(c, devs);
    if (nd < 0) {
        pm_scenario_release(&s);
        return EXIT_USAGE;
    }
    const pm_workload *w = &s.workload;
    const int64_t ctx = w->seq_len; /* the whole sequence cached: the largest KV cache */
    printf("# preserve-model %s footprint: %s, batch %d, context %lld, weights %s, KV %s\n",
           pm_version(), s.model.name, w->batch, (long long)ctx, pm_dtype_name(w->weight_dtype),
           pm_dtype_name(w->kv_dtype));
    printf("# per layer and device; KV heads are replicated when devices exceed KV heads\n");
    const int local = pm_model_local_layers(&s.model);
    if (local > 0 && local < s.model.layers)
        printf("# %d of %d layers attend through a %d-token window: kv is a global layer's, "
               "kv_local a local layer's\n",
               local, s.model.layers, s.model.sliding_window);
    else if (local > 0)
        printf("# every layer attends through a %d-token window: kv holds the window\n",
               s.model.sliding_window);
    if (c->format == FMT_TABLE)
        printf("%8s %14s %14s %16s %14s %14s\n", "devices", "attn_W_MiB", "kv_MiB",
               "attn_W+kv_MiB", "mlp_W_MiB", "kv_local_MiB");
    else
        printf("devices,attn_weights_MiB,kv_MiB,attn_weights_plus_kv_MiB,mlp_weights_MiB,"
               "kv_local_MiB\n");
    for (int i = 0; i < nd; i++)
        write_row(c, &s, devs[i], ctx);
    write_l2_sizes(c);
    pm_scenario_release(&s);
    return 0;
}
