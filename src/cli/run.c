/*
 * run.c - `preserve-model run`, the default command: the estimate of one scenario in the three
 * modes (serial, fused, preserve), as a table with the inputs it used, as JSON (the library's
 * pm_estimate_to_json) or as one CSV row.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "fmt.h"
#include "output.h"

/* The MoE split and the experts a decode step reads (nothing for a dense model). */
static void describe_moe(const pm_scenario *s, const pm_estimate *e, FILE *f)
{
    const pm_model *m = &s->model;
    pm_footprint fp;
    pm_moe_reads r;
    /* A speculating scenario's decode step is its verify step: k + 1 tokens a sequence. */
    const int verify = 1 + s->spec.draft_tokens;
    char tokens[48] = "";
    if (verify > 1)
        snprintf(tokens, sizeof tokens, " x %d tokens a verify step", verify);
    if (m->experts < 1 || pm_footprint_compute(s, &e->shard, 0, &fp, NULL) != PM_OK ||
        pm_moe_reads_compute(s, (double)s->workload.batch * verify, &r, NULL) != PM_OK)
        return;
    fprintf(f, "# MoE: %d experts (top-%d) + %d shared in %d of %d layers; EP %d x %d devices "
               "per expert; per device %.4g experts (%.2f GiB per layer), %.3g read per step at "
               "batch %d%s (%.3g touched over all devices, %.2f GiB read per layer); %.2f GiB of "
               "weights per device\n",
            m->experts, m->experts_per_token, m->shared_experts, fp.moe_layers, m->layers,
            e->shard.ep, e->shard.moe_tp, e->shard.experts_local,
            fp.moe_weight_bytes / (MIB * 1024), fp.experts_read_per_step, s->workload.batch,
            tokens, r.experts_touched, fp.moe_read_bytes / (MIB * 1024),
            e->weight_bytes_per_device / (MIB * 1024));
    const int distinct = s->workload.distinct_sequences;
    if (distinct > 0 && distinct < s->workload.batch)
        fprintf(f, "# MoE: %d distinct sequence%s in the batch of %d: the copies route alike "
                   "(the reads follow %d token%s per decode step)\n",
                distinct, distinct == 1 ? "" : "s", s->workload.batch, distinct,
                distinct == 1 ? "" : "s");
    if (e->shard.ep > 1)
        fprintf(f, "# MoE: dispatch and combine are all-to-alls; the fused mode fuses the "
                   "GEMM+allreduce pairs only (no fused GEMM+all-to-all: not applicable)\n");
}


/* How the attention kernel reads a device's KV heads: strided only where the accelerator
 * charges for it (kv_strided_efficiency_frac below 1, the paper's NPU); the GPU presets read
 * several KV heads at full bandwidth. */
static const char *kv_reads(const pm_scenario *s, const pm_estimate *e, char *buf, size_t n)
{
    const double frac = s->accel.kv_strided_efficiency_frac;
    if (e->shard.kv_heads <= 1.0 + 1e-9)
        return " (contiguous KV reads)";
    if (frac >= 1.0)
        return " (KV reads at full bandwidth: no strided penalty)";
    snprintf(buf, n, " (strided KV reads at %.3g %% of the HBM bandwidth)", frac * 100.0);
    return buf;
}

/* The serving runtime's overheads and kernels, as the roofline applies them to this scenario
 * (nothing without a runtime). */
static void describe_runtime(const pm_scenario *s, FILE *f)
{
    const pm_runtime *r = &s->runtime;
    if (!r->present)
        return;
    fprintf(f, "# runtime %s: %.4g us per step + %.4g us per sequence", r->name,
            r->step_overhead_s * 1e6, r->sequence_overhead_s * 1e6);
    if (r->multi_device_overhead_s > 0)
        fprintf(f, " (+ %.4g us at more than one device)", r->multi_device_overhead_s * 1e6);
    fprintf(f, ", %.3g us per kernel, %.3g us per allreduce%s%s", r->kernel_launch_s * 1e6,
            r->allreduce_overhead_s * 1e6, r->allreduce_given ? ", allreduce " : "",
            r->allreduce_given ? pm_allreduce_algo_name(r->allreduce) : "");
    if (r->attention_hbm_efficiency_frac > 0)
        fprintf(f, "; its decode attention at %.3g %% of the HBM bandwidth",
                r->attention_hbm_efficiency_frac * 100.0);
    const double paged = pm_scenario_paged_attention_frac(s);
    if (paged < 1.0)
        fprintf(f, "; decode attention by its PagedAttention kernel (%s), KV reads at %.3g %% of "
                   "the efficiency otherwise used",
                r->paged_attention == PM_PAGED_ALL ? "every model"
                                                   : pm_scenario_attention_fallback(s),
                paged * 100.0);
    else if (pm_scenario_paged_layer(s))
        fprintf(f, "; the block-sparse layers' decode attention by its PagedAttention kernel, KV "
                   "reads at %.3g %% of the efficiency otherwise used",
                r->paged_attention_efficiency_frac * 100.0);
    if (s->model.experts > 0 && r->moe_gemm_efficiency_frac > 0)
        fprintf(f, "; routed experts at %.3g %% of a dense GEMM", r->moe_gemm_efficiency_frac * 100.0);
    if (s->model.experts > 0 && r->moe_routing_kernels)
        fprintf(f, "; routing kernels of their own (top-k, align at %.3g us + %.3g ns a slot, sum)",
                r->moe_align_fixed_s * 1e6, r->moe_align_per_slot_s * 1e9);
    if (r->hbm_usable_frac > 0)
        fprintf(f, "; %.3g %% of the HBM for weights and KV", r->hbm_usable_frac * 100.0);
    fputc('\n', f);
}

/* The plan's stages and replicas (issue 44), when there is more than one of either. */
static void describe_pipeline(const pm_estimate *e, FILE *f)
{
    const pm_pipeline_report *p = &e->pipeline;
    if (p->stages < 2 && p->replicas < 2)
        return;
    fprintf(f, "# plan: %d stage%s x %d replica%s = %d devices on %d node%s", p->stages,
            p->stages == 1 ? "" : "s", p->replicas, p->replicas == 1 ? "" : "s", p->devices_total,
            p->nodes, p->nodes == 1 ? "" : "s");
    if (p->stages > 1)
        fprintf(f, "; %d-%d layers a stage; %d micro-batch%s of %d in flight; sends %.3g us "
                   "decode, %.3g us prefill, token return %.3g us (%s)",
                p->min_stage_layers, p->max_stage_layers, p->micro_batches,
                p->micro_batches == 1 ? "" : "es", p->micro_batch, p->send_decode_s * 1e6,
                p->send_prefill_s * 1e6, p->return_s * 1e6,
                p->inter_node ? "across nodes" : "inside a node");
    fputc('\n', f);
}

/* Sequence parallelism is on and has collectives to replace the allreduces with. */
static bool describes_sequence_parallel(const pm_scenario *s)
{
    return s->cluster.sequence_parallel && s->cluster.devices > 1;
}

/* Sequence parallelism (issue 44), when it is on: what replaces the allreduces. */
static void describe_sequence_parallel(const pm_scenario *s, FILE *f)
{
    if (!describes_sequence_parallel(s))
        return;
    fprintf(f, "# sequence parallel: each allreduce is a reduce-scatter and an all-gather (the "
               "allreduce column: the allreduce they replace; `explain` shows their windows), "
               "the norms on 1/%d of the tokens; the fused baseline fuses none of them (it is "
               "serial)\n",
            s->cluster.devices);
}

/* Data-parallel attention (issue 44), when it is on: who holds which sequences. */
static void describe_attention_dp(const pm_scenario *s, const pm_estimate *e, FILE *f)
{
    if (e->shard.attn_dp <= 1)
        return;
    const int b = s->workload.batch, r = e->shard.attn_dp;
    fprintf(f, "# attention data parallel over %d ranks: each holds %d of the %d sequences "
               "and their KV, the attention and LM head whole (no allreduce); ",
            r, (b + r - 1) / r, b);
    if (e->shard.ep > 1)
        fprintf(f, "the experts on %d ranks, one a device, the dispatch and combine carrying "
                   "each rank's own tokens%s\n",
                e->shard.ep,
                pm_model_moe_layers(&s->model) < s->model.layers
                    ? "; a dense layer's MLP tensor parallel on the gathered tokens"
                    : "");
    else
        fprintf(f, "the MLPs (experts and dense) tensor parallel over the %d devices on the "
                   "ranks' gathered tokens (an all-gather before, a reduce-scatter after)\n",
                r);
}

static void describe(const pm_scenario *s, const pm_estimate *e, FILE *f)
{
    char kv[80];
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
    fprintf(f, "# prefetch consumers: %s%s\n",
            s->accel.prefetch_consumer == PM_CONSUMER_STREAM
                ? "stream (read what has arrived, never wait longer than their own reads)"
                : "wait for their prefetch's end (the paper's events)",
            s->options.hbm_sharing ? "; the streams share HBM bandwidth (options.hbm_sharing)"
                                   : "");
    /* What the usable HBM leaves beyond weights and KV holds the engine's activations and
     * workspace, which the model does not count: a small rest is where a real engine holds
     * fewer sequences at once than the batch (README, "What is not modelled"). */
    const double gib = MIB * 1024;
    const bool one_q = !(e->shard.q_heads < 1 || e->shard.q_heads > 1);
    const bool one_kv = !(e->shard.kv_heads < 1 || e->shard.kv_heads > 1);
    char wt[FMT_G9_MAX], kvt[FMT_G9_MAX], use[FMT_G9_MAX], left[FMT_G9_MAX];
    fmt_size(e->weight_bytes_per_device / gib, wt);
    fmt_size(e->kv_bytes_per_device / gib, kvt);
    fmt_size(e->hbm_usable_bytes_per_device / gib, use);
    fprintf(f, "# per device: %.4g query head%s, %.4g KV head%s%s%s, %s GiB weights + %s GiB "
               "KV of %s GiB usable",
            e->shard.q_heads, one_q ? "" : "s", e->shard.kv_heads, one_kv ? "" : "s",
            e->shard.kv_replicated ? " (replicated)" : "", kv_reads(s, e, kv, sizeof kv), wt, kvt,
            use);
    if (e->fits_hbm) {
        fmt_size((e->hbm_usable_bytes_per_device - e->weight_bytes_per_device -
                  e->kv_bytes_per_device) / gib, left);
        fprintf(f, " (%s GiB left)\n", left);
    } else {
        fputs("  ** exceeds HBM capacity **\n", f);
    }
    describe_moe(s, e, f);
    describe_runtime(s, f);
    describe_pipeline(e, f);
    describe_sequence_parallel(s, f);
    describe_attention_dp(s, e, f);
    if (e->kv_spill_context > 0)
        fprintf(f, "# L2 prefetch window %.0f MiB; the KV cache stops fitting it at context %lld\n",
                e->l2_window_bytes / MIB, (long long)e->kv_spill_context);
    else if (e->kv_spill_context < 0)
        fprintf(f, "# L2 prefetch window %.0f MiB; the %d-token attention window's KV cache fits "
                   "it at every context\n",
                e->l2_window_bytes / MIB, s->model.sliding_window);
    else
        fprintf(f, "# L2 prefetch window %.0f MiB; the KV cache is never prefetched%s\n",
                e->l2_window_bytes / MIB, s->cluster.devices <= 1 ? " (one device: no allreduce)" : "");
}

/* One CSV row, under the command and its overrides: the scenario's columns, then the sweep's
 * result columns in the sweep's order and format (pm_sweep_point_of, pm_sweep_point_values),
 * so that a run and a sweep point read alike; NaN where the accelerator has no data. */
static void write_csv(const cli *c, const pm_scenario *s, const pm_estimate *e)
{
    printf("# preserve-model %s run --config ", pm_version());
    fput_comment_text(stdout, c->config);
    putchar('\n');
    print_sets(stdout, c);
    printf("scenario,model,accelerator,devices,pipeline_parallel,data_parallel,batch,seq_len,"
           "kv_heads_per_device");
    const size_t n = pm_sweep_column_count();
    for (size_t i = 0; i < n; i++)
        printf(",%s", pm_sweep_column_name(i));
    putchar('\n');
    const char *names[] = {s->name, s->model.name, s->accel.name};
    for (int i = 0; i < 3; i++) {
        fput_csv_field(stdout, names[i], false);
        putchar(',');
    }
    printf("%d,%d,%d,%d,%lld,%.6g", s->cluster.devices, pm_cluster_pp(&s->cluster),
           pm_cluster_dp(&s->cluster), s->workload.batch,
           (long long)s->workload.seq_len, e->shard.kv_heads);
    pm_sweep_point pt;
    pm_sweep_point_of(s, e, &pt);
    double v[64];
    pm_sweep_point_values(&pt, v, n < 64 ? n : 64);
    for (size_t i = 0; i < n && i < 64; i++) {
        char num[FMT_G9_MAX + 1];
        num[fmt_csv(v[i], num)] = '\0';
        printf(",%s", num);
    }
    putchar('\n');
}

/* The headline energy and dollar figures, after the time table. */
static void write_energy_cost(const pm_scenario *s, const pm_estimate *e)
{
    if (!e->energy_present && !e->cost_present) {
        printf("(accelerator %s has no energy or cost coefficients)\n", s->accel.name);
        return;
    }
    printf("\n%-9s %12s %12s %12s %14s %14s\n", "mode", "J/token", "avg_W/dev", "tokens/J",
           "static_J/dev", "L2_J/dev");
    for (int m = 0; m < PM_MODE_COUNT && e->energy_present; m++) {
        const pm_mode_result *r = &e->modes[m];
        char v[5][FMT_G9_MAX];
        fmt_table(r->energy_per_token_J, 4, v[0]);
        fmt_table(r->avg_power_W, 1, v[1]);
        fmt_table(r->tokens_per_J, 4, v[2]);
        fmt_table(r->energy.static_J, 1, v[3]);
        fmt_table(r->energy.l2_J, 1, v[4]);
        printf("%-9s %12s %12s %12s %14s %14s\n", pm_mode_name((pm_mode)m), v[0], v[1], v[2],
               v[3], v[4]);
    }
    /* Beyond the board power the energies are not physical: pm_estimate_warning says so (on
     * stderr, and in the JSON report's warnings). */
    if (!e->energy_present)
        printf("(no energy coefficients: an \"energy\" object in accelerator %s)\n",
               s->accel.name);
    pm_area a;
    if (s->accel.area.present && pm_area_compute(&s->accel, &a, NULL) == PM_OK) {
        double per_die = 0.0;
        const bool over = pm_die_over_reticle(&s->accel, &per_die);
        char note[64] = "";
        if (over)
            snprintf(note, sizeof note, " (over the %.0f mm2 reticle)", PM_RETICLE_MM2);
        char io[48] = "";
        if (a.io_dies > 0)
            snprintf(io, sizeof io, " + I/O other %.1f", a.io_other_mm2);
        printf("die %.1f mm2 = compute %.1f + L2 %.1f + HBM PHY %.1f + link PHY %.1f + other "
               "%.1f%s%s\n",
               a.die_mm2, a.compute_mm2, a.l2_mm2, a.hbm_phy_mm2, a.link_phy_mm2, a.other_mm2,
               io, a.io_dies > 0 || a.compute_dies > 1 ? "" : note);
        if (a.io_dies > 0 || a.compute_dies > 1) {
            char iodies[96] = "";
            if (a.io_dies > 0)
                snprintf(iodies, sizeof iodies, " + %d I/O die%s of %.1f mm2 (%s)", a.io_dies,
                         a.io_dies > 1 ? "s" : "", a.io_die_mm2,
                         pm_io_holds_name(s->accel.area.io_holds));
            printf("package: %d compute die%s of %.1f mm2%s%s\n", a.compute_dies,
                   a.compute_dies > 1 ? "s" : "", a.compute_die_mm2, iodies, note);
        }
    }
    if (e->cost_present) {
        const pm_device_cost *k = &e->cost;
        char dies[160];
        if (k->io_dies_per_wafer > 0)
            snprintf(dies, sizeof dies,
                     "%.1f mm2 in %d dies; compute die %.1f/wafer, yield %.1f%%; I/O die "
                     "%.1f/wafer, yield %.1f%%",
                     k->die_mm2, k->dies_per_package, k->dies_per_wafer, k->yield_frac * 100,
                     k->io_dies_per_wafer, k->io_yield_frac * 100);
        else if (k->dies_per_package > 1)
            snprintf(dies, sizeof dies, "%.1f mm2 in %d dies, %.1f dies/wafer, yield %.1f%%",
                     k->die_mm2, k->dies_per_package, k->dies_per_wafer, k->yield_frac * 100);
        else
            snprintf(dies, sizeof dies, "%.1f mm2, %.1f dies/wafer, yield %.1f%%", k->die_mm2,
                     k->dies_per_wafer, k->yield_frac * 100);
        printf("cost per device: $%.0f = die $%.0f (%s) + HBM $%.0f + package $%.0f\n",
               k->device_usd, k->die_usd, dies, k->hbm_usd, k->package_usd);
        printf("tokens/s per $ of devices: serial %.4g, fused %.4g, preserve %.4g\n",
               e->modes[0].tokens_per_s_per_usd, e->modes[1].tokens_per_s_per_usd,
               e->modes[2].tokens_per_s_per_usd);
    } else {
        printf("(no cost coefficients: a \"cost\" object in accelerator %s)\n", s->accel.name);
    }
}

/* The inputs, then one line per mode. */
/* Speculative decoding (issue 45): the tokens a verify step emits, each mode's verify and draft
 * steps at the last context, and the speedup over plain decoding. */
static void print_speculative(const pm_scenario *s, const pm_estimate *e)
{
    const pm_spec_report *r = &e->spec;
    if (!r->active)
        return;
    printf("\nspeculative: %s, %d drafted tokens, %.4f tokens per verify step",
           r->method == PM_SPEC_MTP ? "MTP heads" : s->spec.draft.name, r->draft_tokens,
           r->tokens_per_step);
    if (r->method == PM_SPEC_MTP)
        printf(" (%d layer%s)", s->spec.mtp_layers, s->spec.mtp_layers == 1 ? "" : "s");
    printf("\n%-9s %12s %12s %17s %12s\n", "mode", "verify_ms", "draft_ms", "plain_tpot_ms",
           "speedup");
    for (int m = 0; m < PM_MODE_COUNT; m++)
        printf("%-9s %12.4f %12.4f %17.4f %11.3fx\n", pm_mode_name((pm_mode)m),
               r->verify_step_s[m] * 1e3, r->draft_step_s[m] * 1e3,
               r->plain_tpot_mean_s[m] * 1e3, r->speedup_vs_plain[m]);
    printf("(tpot_ms above: (verify + %d draft) / %.4f at the final context; speedup: plain "
           "tpot_mean over speculative)\n",
           r->draft_tokens, r->tokens_per_step);
}

static void write_table(const pm_scenario *s, const pm_estimate *e)
{
    describe(s, e, stdout);
    printf("\n%-9s %12s %12s %12s %14s %14s %12s  %s\n", "mode", "request_s", "prefill_s",
           "decode_s", "tpot_ms", "tpot_mean_ms", "tokens/s", "allreduce");
    /* "none" where a decode step has no allreduce (one device, data-parallel attention);
     * under sequence parallelism the column is the allreduce its collectives replace */
    const bool has_allreduce = e->allreduces_per_step > 0 || describes_sequence_parallel(s);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_mode_result *r = &e->modes[m];
        char ar[64] = "none";
        if (has_allreduce)
            snprintf(ar, sizeof ar, "%s %.1f us", pm_allreduce_algo_name(r->allreduce),
                     r->allreduce_decode_s * 1e6);
        if (m == PM_MODE_FUSED && has_allreduce)
            snprintf(ar + strlen(ar), sizeof ar - strlen(ar), ", %d chunk%s",
                     r->fused_chunks, r->fused_chunks == 1 ? "" : "s");
        char v[6][FMT_G9_MAX];
        fmt_table(r->request_s, 4, v[0]);
        fmt_table(r->prefill_s, 4, v[1]);
        fmt_table(r->decode_s, 4, v[2]);
        fmt_table(r->tpot_s * 1e3, 4, v[3]);
        fmt_table(r->tpot_mean_s * 1e3, 4, v[4]);
        fmt_table(r->tokens_per_s, 2, v[5]);
        printf("%-9s %12s %12s %12s %14s %14s %12s  %s\n", pm_mode_name((pm_mode)m), v[0],
               v[1], v[2], v[3], v[4], v[5], ar);
    }
    printf("\n(tpot_ms: one decode step at the final context length %lld; tpot_mean_ms: "
           "mean over all decode steps)\n",
           (long long)pm_default_context(&s->workload, PM_PHASE_DECODE));
    printf("speedup: preserve vs serial %.3fx, preserve vs fused %.3fx, fused vs serial %.3fx\n",
           e->speedup_preserve_vs_serial, e->speedup_preserve_vs_fused,
           e->speedup_fused_vs_serial);
    print_speculative(s, e);
    if (e->pipeline.stages > 1) {
        printf("\n%-9s %14s %14s %15s %18s\n", "mode", "stage_ms", "bubble_decode",
               "bubble_prefill", "recv_prefetch_MiB");
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            const pm_mode_result *r = &e->modes[m];
            printf("%-9s %14.4f %13.1f%% %14.1f%% %18.3f\n", pm_mode_name((pm_mode)m),
                   r->stage_decode_s * 1e3, r->bubble_decode_frac * 100.0,
                   r->bubble_prefill_frac * 100.0, r->recv_prefetch_bytes / MIB);
        }
        printf("(stage_ms: the slowest stage for one micro-batch at the final context, its "
               "receive included; recv_prefetch: preserve's prefetch behind a stage's receive)\n");
    }
    write_energy_cost(s, e);
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
    warn_estimate(&s, &e);
    if (c->format == FMT_CSV) {
        write_csv(c, &s, &e);
    } else if (c->format == FMT_JSON) {
        /* The library's report, the one the Python module gives (its strings escaped). */
        char *text = NULL;
        if (pm_estimate_to_json(&s, &e, &text, &err) != PM_OK)
            rc = config_error(&err);
        else if (fputs(text, stdout) == EOF)
            stdout_failed(errno);
        free(text);
    } else {
        write_table(&s, &e);
    }
    pm_scenario_release(&s);
    return rc;
}
