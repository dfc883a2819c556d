/*
 * run.c - `preserve-model run`, the default command: the estimate of one scenario in the three
 * modes (serial, fused, preserve), as a table with the inputs it used, as JSON or as one CSV row.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static void describe(const pm_scenario *s, const pm_estimate *e, FILE *f)
{
    const pm_workload *w = &s->workload;
    fprintf(f, "# preserve-model %s, scenario %s\n", pm_version(), s->name);
    fprintf(f, "# model %s on %s x %d (%s, %.1f GB/s per link, %.2f us start-up)\n",
            s->model.name, s->accel.name, s->cluster.devices,
            pm_topology_name(s->cluster.topology), s->cluster.link_bandwidth_bytes_per_s / 1e9,
            s->cluster.link_latency_s * 1e6);
    fprintf(f, "# batch %d, sequence %lld = %lld prompt + %lld decode steps; weights %s, KV %s, "
               "activations %s, allreduce %s\n",
            w->batch, (long long)w->seq_len, (long long)e->prefill_tokens,
            (long long)e->decode_steps, pm_dtype_name(w->weight_dtype),
            pm_dtype_name(w->kv_dtype), pm_dtype_name(w->act_dtype),
            pm_dtype_name(pm_allreduce_dtype(w)));
    fprintf(f, "# prefetch consumers: %s\n",
            s->accel.prefetch_consumer == PM_CONSUMER_STREAM
                ? "stream (read what has arrived, never wait longer than their own reads)"
                : "wait for their prefetch's end (the paper's events)");
    fprintf(f, "# per device: %.4g query heads, %.4g KV heads%s%s, %.1f GiB weights + %.1f GiB KV%s\n",
            e->shard.q_heads, e->shard.kv_heads,
            e->shard.kv_replicated ? " (replicated)" : "",
            e->shard.kv_heads > 1.0 + 1e-9 ? " (strided KV reads)" : " (contiguous KV reads)",
            e->weight_bytes_per_device / (MIB * 1024), e->kv_bytes_per_device / (MIB * 1024),
            e->fits_hbm ? "" : "  ** exceeds HBM capacity **");
    if (e->kv_spill_context > 0)
        fprintf(f, "# L2 prefetch window %.0f MiB; the KV cache stops fitting it at context %lld\n",
                e->l2_window_bytes / MIB, (long long)e->kv_spill_context);
    else
        fprintf(f, "# L2 prefetch window %.0f MiB; the KV cache is never prefetched%s\n",
                e->l2_window_bytes / MIB, s->cluster.devices <= 1 ? " (one device: no allreduce)" : "");
}

/* One CSV row, under the command and its overrides. */
static void write_csv(const cli *c, const pm_scenario *s, const pm_estimate *e)
{
    printf("# preserve-model %s run --config %s\n", pm_version(), c->config);
    print_sets(stdout, c);
    printf("scenario,model,accelerator,devices,batch,seq_len,kv_heads_per_device");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const char *mn = pm_mode_name((pm_mode)m);
        printf(",%s_request_s,%s_prefill_s,%s_decode_s,%s_tpot_s,%s_tokens_per_s", mn, mn, mn,
               mn, mn);
    }
    printf(",speedup_preserve_vs_serial,speedup_preserve_vs_fused,speedup_fused_vs_serial\n");
    printf("%s,%s,%s,%d,%d,%lld,%.6g", s->name, s->model.name, s->accel.name, s->cluster.devices,
           s->workload.batch, (long long)s->workload.seq_len, e->shard.kv_heads);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_mode_result *r = &e->modes[m];
        printf(",%.9g,%.9g,%.9g,%.9g,%.9g", r->request_s, r->prefill_s, r->decode_s,
               r->tpot_s, r->tokens_per_s);
    }
    printf(",%.6g,%.6g,%.6g\n", e->speedup_preserve_vs_serial, e->speedup_preserve_vs_fused,
           e->speedup_fused_vs_serial);
}

static void write_json(const pm_scenario *s, const pm_estimate *e)
{
    printf("{\n  \"tool\": \"preserve-model %s\",\n  \"scenario\": \"%s\",\n", pm_version(),
           s->name);
    printf("  \"inputs\": {\"model\": \"%s\", \"accelerator\": \"%s\", \"devices\": %d, "
           "\"batch\": %d, \"seq_len\": %lld, \"prefill_tokens\": %lld, \"decode_steps\": "
           "%lld},\n",
           s->model.name, s->accel.name, s->cluster.devices, s->workload.batch,
           (long long)s->workload.seq_len, (long long)e->prefill_tokens,
           (long long)e->decode_steps);
    printf("  \"tpot_context_len\": %lld,\n",
           (long long)pm_default_context(&s->workload, PM_PHASE_DECODE));
    printf("  \"modes\": {\n");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_mode_result *r = &e->modes[m];
        printf("    \"%s\": {\"request_s\": %.9g, \"prefill_s\": %.9g, \"decode_s\": %.9g, "
               "\"tpot_s\": %.9g, \"tpot_mean_s\": %.9g, \"tokens_per_s\": %.9g, "
               "\"allreduce_algorithm\": \"%s\", \"allreduce_decode_s\": %.9g",
               pm_mode_name((pm_mode)m), r->request_s, r->prefill_s, r->decode_s, r->tpot_s,
               r->tpot_mean_s, r->tokens_per_s, pm_allreduce_algo_name(r->allreduce),
               r->allreduce_decode_s);
        if (m == PM_MODE_FUSED)
            printf(", \"fused_chunks\": %d", r->fused_chunks);
        printf("}%s\n", m + 1 < PM_MODE_COUNT ? "," : "");
    }
    printf("  },\n  \"speedup\": {\"preserve_vs_serial\": %.6g, \"preserve_vs_fused\": %.6g, "
           "\"fused_vs_serial\": %.6g},\n",
           e->speedup_preserve_vs_serial, e->speedup_preserve_vs_fused,
           e->speedup_fused_vs_serial);
    printf("  \"shard\": {\"q_heads\": %.6g, \"kv_heads\": %.6g, \"kv_replicated\": %s, "
           "\"uneven\": %s},\n",
           e->shard.q_heads, e->shard.kv_heads, e->shard.kv_replicated ? "true" : "false",
           e->shard.uneven ? "true" : "false");
    printf("  \"memory\": {\"weight_bytes_per_device\": %.6g, \"kv_bytes_per_device\": %.6g, "
           "\"fits_hbm\": %s, \"l2_window_bytes\": %.6g, \"kv_spill_context\": %lld}\n}\n",
           e->weight_bytes_per_device, e->kv_bytes_per_device, e->fits_hbm ? "true" : "false",
           e->l2_window_bytes, (long long)e->kv_spill_context);
}

/* The inputs, then one line per mode. */
static void write_table(const pm_scenario *s, const pm_estimate *e)
{
    describe(s, e, stdout);
    printf("\n%-9s %12s %12s %12s %14s %14s %12s  %s\n", "mode", "request_s", "prefill_s",
           "decode_s", "tpot_ms", "tpot_mean_ms", "tokens/s", "allreduce");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_mode_result *r = &e->modes[m];
        char ar[64];
        snprintf(ar, sizeof ar, "%s %.1f us", pm_allreduce_algo_name(r->allreduce),
                 r->allreduce_decode_s * 1e6);
        if (m == PM_MODE_FUSED)
            snprintf(ar + strlen(ar), sizeof ar - strlen(ar), ", %d chunks",
                     r->fused_chunks);
        printf("%-9s %12.4f %12.4f %12.4f %14.4f %14.4f %12.2f  %s\n",
               pm_mode_name((pm_mode)m), r->request_s, r->prefill_s, r->decode_s,
               r->tpot_s * 1e3, r->tpot_mean_s * 1e3, r->tokens_per_s, ar);
    }
    printf("\n(tpot_ms: one decode step at the final context length %lld; tpot_mean_ms: "
           "mean over all decode steps)\n",
           (long long)pm_default_context(&s->workload, PM_PHASE_DECODE));
    printf("speedup: preserve vs serial %.3fx, preserve vs fused %.3fx, fused vs serial %.3fx\n",
           e->speedup_preserve_vs_serial, e->speedup_preserve_vs_fused,
           e->speedup_fused_vs_serial);
}

int cmd_run(const cli *c)
{
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    pm_estimate e;
    pm_error err;
    if (pm_estimate_compute(&s, &e, &err) != PM_OK) {
        pm_scenario_release(&s);
        return config_error(&err);
    }
    if (c->format == FMT_CSV)
        write_csv(c, &s, &e);
    else if (c->format == FMT_JSON)
        write_json(&s, &e);
    else
        write_table(&s, &e);
    pm_scenario_release(&s);
    return 0;
}
