/*
 * footprint.c - `preserve-model footprint`: the per-device memory of one layer's attention
 * (weights and KV cache) and MLP (weights) against the device count, beside the L2 sizes of the
 * bundled accelerators (the paper's Fig 2).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

int cmd_footprint(const cli *c)
{
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    int devs[32], nd = 0;
    const char *list = c->devices_list ? c->devices_list : "1,2,4,8,16";
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok && nd < 32; tok = strtok(NULL, ",")) {
        int64_t v;
        if (!parse_count("--devices-list", tok, 1, 1 << 20, &v)) {
            pm_scenario_free(&s);
            return EXIT_USAGE;
        }
        devs[nd++] = (int)v;
    }
    const pm_workload *w = &s.workload;
    const double ew = pm_dtype_bytes(w->weight_dtype), ekv = pm_dtype_bytes(w->kv_dtype);
    const double h = s.model.hidden, d = s.model.head_dim;
    const int64_t ctx = s.workload.seq_len;
    printf("# preserve-model %s footprint: %s, batch %d, context %lld, weights %s, KV %s\n",
           pm_version(), s.model.name, w->batch, (long long)ctx, pm_dtype_name(w->weight_dtype),
           pm_dtype_name(w->kv_dtype));
    printf("# per layer and device; KV heads are replicated when devices exceed KV heads\n");
    if (c->format == FMT_TABLE)
        printf("%8s %14s %14s %16s %14s\n", "devices", "attn_W_MiB", "kv_MiB", "attn_W+kv_MiB",
               "mlp_W_MiB");
    else
        printf("devices,attn_weights_MiB,kv_MiB,attn_weights_plus_kv_MiB,mlp_weights_MiB\n");
    for (int i = 0; i < nd; i++) {
        pm_scenario t = s;
        t.provenance = NULL;
        t.cluster.devices = devs[i];
        pm_shard sh;
        bool ok = pm_shard_compute(&t, &sh, NULL) == PM_OK;
        if (!ok) {
            t.options.sharding = PM_SHARDING_IDEAL;
            pm_shard_compute(&t, &sh, NULL);
            sh.kv_heads = sh.kv_heads < 1 ? 1 : sh.kv_heads; /* a KV head cannot be split */
        }
        const double attn = h * (2.0 * sh.q_heads + 2.0 * sh.kv_heads) * d * ew / MIB;
        const double kv = 2.0 * w->batch * (double)ctx * sh.kv_heads * d * ekv / MIB;
        const double mlp = (s.model.gated_mlp ? 3.0 : 2.0) * h * sh.mlp_cols * ew / MIB;
        if (c->format == FMT_TABLE)
            printf("%8d %14.2f %14.2f %16.2f %14.2f%s\n", devs[i], attn, kv, attn + kv, mlp,
                   ok ? "" : "  (more devices than heads: ideal split)");
        else
            printf("%d,%.6g,%.6g,%.6g,%.6g\n", devs[i], attn, kv, attn + kv, mlp);
    }
    /* The bundled accelerators' L2 beside it. */
    char **names = NULL;
    size_t n = 0;
    pm_error err;
    if (pm_data_list(c->data_dir, PM_KIND_ACCELERATOR, &names, &n, &err) == PM_OK) {
        printf("\n# on-chip L2 / last-level SRAM of the bundled accelerators\n");
        for (size_t i = 0; i < n; i++) {
            pm_accelerator a;
            pm_load_opts o = {c->data_dir, NULL, 0};
            if (pm_accelerator_load(names[i], &o, &a, NULL) == PM_OK)
                printf("# %-16s %8.1f MiB\n", a.name, a.l2_capacity_bytes / MIB);
        }
        pm_names_free(names, n);
    }
    pm_scenario_free(&s);
    return 0;
}
