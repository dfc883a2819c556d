/*
 * preserve-model - the command-line tool. It uses only the public header: everything it
 * computes comes from libpreserve_model, and it adds only argument parsing and formatting.
 * Data goes to stdout, diagnostics to stderr. Exit codes: 0 success, 1 a model or config error
 * (with the library's message), 2 a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <unistd.h>

#include "cli.h"

const char *prog = "preserve-model";

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: %s [COMMAND] [OPTIONS]\n"
            "\n"
            "Analytical model of tensor-parallel LLM inference with PRESERVE prefetching\n"
            "(weights and KV cache prefetched from HBM into L2 during allreduces).\n"
            "\n"
            "Commands:\n"
            "  run (default)        time per request, per decode step and tokens/s in the three\n"
            "                       modes serial, fused (GEMM+allreduce) and preserve\n"
            "  explain              per allreduce: what is prefetched, how many bytes, why it stops\n"
            "  graph                the per-device graph after insertion (--format json|dot)\n"
            "  footprint            per-device attention/MLP memory vs device count, beside the\n"
            "                       bundled accelerators' L2 sizes (the paper's Fig 2)\n"
            "  resolve              every resolved input in SI units with its source\n"
            "  validate [PATH...]   check config files (default: every shipped data file)\n"
            "  list KIND            bundled models|accelerators|clusters|workloads|scenarios\n"
            "  merge FILE...        join the CSVs of --shard K/N runs into the single-run CSV\n"
            "  timeline             the two-stream schedule of one decode layer (--plot FILE\n"
            "                       draws it as a Gantt chart; otherwise CSV)\n"
            "\n"
            "Options:\n"
            "  -c, --config REF       scenario name or path (default: llama70b)\n"
            "  -s, --set PATH=VALUE   override any field, e.g. workload.batch=8,\n"
            "                         accelerator.l2_capacity_MB=104 (repeatable)\n"
            "      --model REF        shortcut for --set model=REF\n"
            "      --accelerator REF  shortcut for --set accelerator=REF\n"
            "      --devices N        tensor-parallel degree (cluster.devices)\n"
            "      --batch N          workload.batch\n"
            "      --seq N            total sequence length, accepts 16k, 32Ki (workload.seq_len)\n"
            "  -f, --format FMT       table (default), json, csv; graph: json or dot\n"
            "      --context N        context length for explain/graph (default: seq_len - 1)\n"
            "      --phase P          decode (default) or prefill, for explain/graph\n"
            "      --mode M           serial, fused or preserve (graph; default preserve)\n"
            "      --layers N         layers in the printed graph (default 2)\n"
            "      --devices-list L   device counts for footprint (default 1,2,4,8,16)\n"
            "      --data-dir DIR     bundled data directory (default: %s)\n"
            "      --sweep AXIS[=R]   sweep l2, l2_bw, compute, hbm_bw, link_bw, devices, batch or\n"
            "                         seq; R is START:STOP:STEP (units ok: 8MiB:256MiB:8MiB; STEP\n"
            "                         xF is geometric) or a list 1,4,16; up to 4 times for a grid\n"
            "      --optimize AXIS[=LO:HI]  the value maximising tokens/s/mm2 per mode\n"
            "      --plot FILE        draw the sweep with gnuplot (.png, .svg or .pdf); with\n"
            "                         timeline: the two-stream schedule of one layer\n"
            "      --shard K/N        evaluate only the K-th of N slices of the sweep (1 <= K <= N)\n"
            "      --threads N        sweep threads (default: every CPU)\n"
            "  -h, --help             this help\n"
            "  -V, --version          the version\n"
            "\n"
            "Allreduce models (n bytes, p devices, link bandwidth B, start-up latency a):\n"
            "  ring 2(p-1)(a + n/(pB)); oneshot a + n/B (mesh) or a + (p-1)n/B (switch);\n"
            "  twoshot 2(a + n/(pB)) (mesh); tree 2 ceil(log2 p)(a + n/B);\n"
            "  hierarchical: intra-node reduce-scatter + inter-node ring + intra all-gather;\n"
            "  auto: the fastest the topology allows.\n",
            prog, pm_default_data_dir());
}

int usage_error(const char *fmt_, ...)
{
    fprintf(stderr, "%s: ", prog);
    va_list ap;
    va_start(ap, fmt_);
    vfprintf(stderr, fmt_, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", prog);
    return EXIT_USAGE;
}

int config_error(const pm_error *err)
{
    char buf[1200];
    pm_error_format(err, buf, sizeof buf);
    fprintf(stderr, "%s: error: %s\n", prog, buf);
    return EXIT_CONFIG;
}

/* Parses an integer option value ("8", "16k", "32Ki") in [lo, hi]. */
static bool parse_count(const char *opt, const char *text, double lo, double hi, int64_t *out)
{
    double v;
    pm_error err;
    if (pm_quantity_parse(text, PM_DIM_NONE, &v, &err) != PM_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, opt, err.message);
        return false;
    }
    if (!(v >= lo && v <= hi) || fabs(v - floor(v)) > 0.0) {
        fprintf(stderr, "%s: %s: expected an integer in [%.0f, %.0f] (got '%s')\n", prog, opt, lo,
                hi, text);
        return false;
    }
    *out = (int64_t)v;
    return true;
}

/* Adds the override "key=value", or "key=number" when value is NULL. */
static bool add_set(cli *c, const char *key, const char *value, int64_t n)
{
    if (c->n_sets >= MAX_SETS) {
        fprintf(stderr, "%s: too many overrides (at most %d)\n", prog, MAX_SETS);
        return false;
    }
    char *dst = c->owned[c->n_sets];
    int len;
    if (!key)
        len = snprintf(dst, sizeof c->owned[0], "%s", value);
    else if (value)
        len = snprintf(dst, sizeof c->owned[0], "%s=%s", key, value);
    else
        len = snprintf(dst, sizeof c->owned[0], "%s=%lld", key, (long long)n);
    if (len < 0 || (size_t)len >= sizeof c->owned[0]) {
        fprintf(stderr, "%s: an override is longer than %zu bytes: '%.40s...'\n", prog,
                sizeof c->owned[0] - 1, dst);
        return false;
    }
    c->sets[c->n_sets] = dst;
    c->n_sets++;
    return true;
}

static pm_load_opts load_opts(const cli *c)
{
    pm_load_opts o = {c->data_dir, c->sets, c->n_sets};
    return o;
}

int load(const cli *c, pm_scenario *s)
{
    pm_load_opts o = load_opts(c);
    pm_error err;
    if (pm_scenario_load(c->config, &o, s, &err) != PM_OK)
        return config_error(&err);
    /* What-ifs beyond the trained context stay possible, but not silently. */
    const int max_pos = s->model.max_position_embeddings;
    if (max_pos > 0 && s->workload.seq_len > max_pos)
        fprintf(stderr,
                "warning: sequence length %lld exceeds the model's max_position_embeddings %d\n",
                (long long)s->workload.seq_len, max_pos);
    for (size_t i = 0; i < pm_scenario_param_count(s); i++) {
        const pm_param_info *p = pm_scenario_param(s, i);
        if (strcmp(p->origin, "ignored") == 0 && strstr(p->source, "not recognised"))
            fprintf(stderr, "warning: %s: %s: key not recognised, assumed not to change cost\n",
                    p->file, p->path);
    }
    return 0;
}

/* ---------------------------------------------------------------- run */

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
    else if (e->kv_spill_context < 0)
        fprintf(f, "# L2 prefetch window %.0f MiB; the %d-token attention window's KV cache fits "
                   "it at every context\n",
                e->l2_window_bytes / MIB, s->model.sliding_window);
    else
        fprintf(f, "# L2 prefetch window %.0f MiB; the KV cache is never prefetched%s\n",
                e->l2_window_bytes / MIB, s->cluster.devices <= 1 ? " (one device: no allreduce)" : "");
}

static int cmd_run(const cli *c)
{
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    pm_estimate e;
    pm_error err;
    if (pm_estimate_compute(&s, &e, &err) != PM_OK) {
        pm_scenario_free(&s);
        return config_error(&err);
    }
    if (c->format == FMT_CSV) {
        printf("# preserve-model %s run --config %s\n", pm_version(), c->config);
        for (size_t i = 0; i < c->n_sets; i++)
            printf("# --set %s\n", c->sets[i]);
        printf("scenario,model,accelerator,devices,batch,seq_len,kv_heads_per_device");
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            const char *mn = pm_mode_name((pm_mode)m);
            printf(",%s_request_s,%s_prefill_s,%s_decode_s,%s_tpot_s,%s_tokens_per_s", mn, mn, mn,
                   mn, mn);
        }
        printf(",speedup_preserve_vs_serial,speedup_preserve_vs_fused,speedup_fused_vs_serial\n");
        printf("%s,%s,%s,%d,%d,%lld,%.6g", s.name, s.model.name, s.accel.name, s.cluster.devices,
               s.workload.batch, (long long)s.workload.seq_len, e.shard.kv_heads);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            const pm_mode_result *r = &e.modes[m];
            printf(",%.9g,%.9g,%.9g,%.9g,%.9g", r->request_s, r->prefill_s, r->decode_s,
                   r->tpot_s, r->tokens_per_s);
        }
        printf(",%.6g,%.6g,%.6g\n", e.speedup_preserve_vs_serial, e.speedup_preserve_vs_fused,
               e.speedup_fused_vs_serial);
    } else if (c->format == FMT_JSON) {
        printf("{\n  \"tool\": \"preserve-model %s\",\n  \"scenario\": \"%s\",\n", pm_version(),
               s.name);
        printf("  \"inputs\": {\"model\": \"%s\", \"accelerator\": \"%s\", \"devices\": %d, "
               "\"batch\": %d, \"seq_len\": %lld, \"prefill_tokens\": %lld, \"decode_steps\": "
               "%lld},\n",
               s.model.name, s.accel.name, s.cluster.devices, s.workload.batch,
               (long long)s.workload.seq_len, (long long)e.prefill_tokens,
               (long long)e.decode_steps);
        printf("  \"tpot_context_len\": %lld,\n", (long long)(s.workload.seq_len - 1));
        printf("  \"modes\": {\n");
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            const pm_mode_result *r = &e.modes[m];
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
               e.speedup_preserve_vs_serial, e.speedup_preserve_vs_fused,
               e.speedup_fused_vs_serial);
        printf("  \"shard\": {\"q_heads\": %.6g, \"kv_heads\": %.6g, \"kv_replicated\": %s, "
               "\"uneven\": %s},\n",
               e.shard.q_heads, e.shard.kv_heads, e.shard.kv_replicated ? "true" : "false",
               e.shard.uneven ? "true" : "false");
        printf("  \"memory\": {\"weight_bytes_per_device\": %.6g, \"kv_bytes_per_device\": %.6g, "
               "\"fits_hbm\": %s, \"l2_window_bytes\": %.6g, \"kv_spill_context\": %lld}\n}\n",
               e.weight_bytes_per_device, e.kv_bytes_per_device, e.fits_hbm ? "true" : "false",
               e.l2_window_bytes, (long long)e.kv_spill_context);
    } else {
        describe(&s, &e, stdout);
        printf("\n%-9s %12s %12s %12s %14s %14s %12s  %s\n", "mode", "request_s", "prefill_s",
               "decode_s", "tpot_ms", "tpot_mean_ms", "tokens/s", "allreduce");
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            const pm_mode_result *r = &e.modes[m];
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
               (long long)(s.workload.seq_len - 1));
        printf("speedup: preserve vs serial %.3fx, preserve vs fused %.3fx, fused vs serial %.3fx\n",
               e.speedup_preserve_vs_serial, e.speedup_preserve_vs_fused,
               e.speedup_fused_vs_serial);
    }
    pm_scenario_free(&s);
    return 0;
}

/* ---------------------------------------------------------------- graph / explain */

static int build_graph(const cli *c, const pm_scenario *s, pm_graph *g, int layers)
{
    pm_error err;
    int64_t ctx = c->context >= 0 ? c->context : s->workload.seq_len - 1;
    if (c->phase == PM_PHASE_PREFILL && c->context < 0)
        ctx = (int64_t)llround((double)s->workload.seq_len * s->workload.prefill_frac);
    pm_graph *base = pm_graph_alloc();
    if (!base) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return EXIT_CONFIG;
    }
    pm_status st = pm_graph_build(s, c->phase, ctx, layers, base, &err);
    if (st == PM_OK)
        st = pm_insert_prefetch(base, s->accel.l2_capacity_bytes * s->accel.l2_usable_frac, g,
                                &err);
    pm_graph_free(base);
    return st == PM_OK ? 0 : config_error(&err);
}

static int cmd_graph(const cli *c)
{
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    pm_graph *g = pm_graph_alloc();
    pm_error err;
    int64_t ctx = c->context >= 0 ? c->context : s.workload.seq_len - 1;
    if (c->phase == PM_PHASE_PREFILL && c->context < 0)
        ctx = (int64_t)llround((double)s.workload.seq_len * s.workload.prefill_frac);
    if (!g) {
        rc = EXIT_CONFIG;
    } else if (c->mode == PM_MODE_PRESERVE) {
        rc = build_graph(c, &s, g, c->layers);
    } else if (pm_graph_build(&s, c->phase, ctx, c->layers, g, &err) != PM_OK) {
        rc = config_error(&err);
    }
    if (!rc && c->mode == PM_MODE_FUSED)
        fprintf(stderr, "%s: note: the fused mode's graph is the serial graph with O/Down "
                        "MatMuls merged into their allreduces; printing the serial graph\n",
                prog);
    char *text = NULL;
    if (!rc) {
        pm_status st = c->format == FMT_DOT ? pm_graph_to_dot(g, &text, &err)
                                            : pm_graph_to_json(g, &text, &err);
        if (st != PM_OK)
            rc = config_error(&err);
        else
            fputs(text, stdout);
    }
    free(text);
    pm_graph_free(g);
    pm_scenario_free(&s);
    return rc;
}

static const char *short_name(const pm_node *n)
{
    const char *dot = strchr(n->name, '.');
    return dot ? dot + 1 : n->name;
}

static int cmd_explain(const cli *c)
{
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    pm_graph *g = pm_graph_alloc();
    int layers = s.model.layers < 2 ? s.model.layers : 2;
    rc = g ? build_graph(c, &s, g, layers) : EXIT_CONFIG;
    pm_schedule sched = {0};
    pm_error err;
    if (!rc && pm_schedule_compute(&s, g, &sched, &err) != PM_OK)
        rc = config_error(&err);
    if (!rc) {
        const double cap = s.accel.l2_capacity_bytes * s.accel.l2_usable_frac;
        int64_t ctx = c->context >= 0 ? c->context : s.workload.seq_len - 1;
        printf("%s, %s, context %lld: L2 capacity for prefetching %.0f MiB (%s)\n", s.name,
               c->phase == PM_PHASE_DECODE ? "decode step" : "prefill",
               (long long)(c->phase == PM_PHASE_DECODE ? ctx
                                                       : (int64_t)llround((double)s.workload.seq_len *
                                                                          s.workload.prefill_frac)),
               cap / MIB, s.accel.name);
        printf("Layers 0 and 1 shown; every later layer repeats layer 1.\n\n");
        int windows = 0;
        for (size_t i = 0; i < g->n_nodes; i++) {
            const pm_node *n = &g->nodes[i];
            if (n->kind != PM_NODE_ALLREDUCE)
                continue;
            windows++;
            const double ar_s = sched.slots[i].end_s - sched.slots[i].start_s;
            printf("during %s (%.1f KiB, %.1f us):", n->name, n->comm_bytes / 1024.0, ar_s * 1e6);
            double pf_end = sched.slots[i].start_s;
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
                pf_end = sched.slots[j].end_s;
                count++;
            }
            if (!count)
                printf(" nothing prefetched");
            printf(" = %.1f MiB < %.0f MiB\n", n->window_bytes / MIB, cap / MIB);
            if (n->overflow >= 0) {
                const pm_node *o = &g->nodes[n->overflow];
                double m = o->kind == PM_NODE_ATTENTION ? o->kv_bytes : o->weight_bytes;
                printf("  stopped at %s: %s %.1f MiB would make %.1f MiB >= %.0f MiB\n", o->name,
                       o->kind == PM_NODE_ATTENTION ? "KV" : "weights", m / MIB,
                       (n->window_bytes + m) / MIB, cap / MIB);
            } else {
                printf("  window ended at the next allreduce (or the end of the graph)\n");
            }
            if (count) {
                const double pf_s = pf_end - sched.slots[i].start_s;
                printf("  prefetch stream busy %.1f us vs allreduce %.1f us: %s\n", pf_s * 1e6,
                       ar_s * 1e6,
                       pf_s > ar_s ? "the prefetch outlasts the allreduce"
                                   : "fully hidden behind the allreduce");
            }
        }
        if (!windows)
            printf("no allreduce in the graph (one device): nothing can be prefetched\n");
    }
    pm_schedule_release(&sched);
    pm_graph_free(g);
    pm_scenario_free(&s);
    return rc;
}

/* ---------------------------------------------------------------- footprint */

static int cmd_footprint(const cli *c)
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
    const int64_t ctx = s.workload.seq_len;
    printf("# preserve-model %s footprint: %s, batch %d, context %lld, weights %s, KV %s\n",
           pm_version(), s.model.name, w->batch, (long long)ctx, pm_dtype_name(w->weight_dtype),
           pm_dtype_name(w->kv_dtype));
    printf("# per layer and device; KV heads are replicated when devices exceed KV heads\n");
    const int local = pm_model_local_layers(&s.model);
    if (local > 0)
        printf("# %d of %d layers attend through a %d-token window: kv is a global layer's, "
               "kv_local a local layer's\n",
               local, s.model.layers, s.model.sliding_window);
    if (c->format == FMT_TABLE)
        printf("%8s %14s %14s %16s %14s %14s\n", "devices", "attn_W_MiB", "kv_MiB",
               "attn_W+kv_MiB", "mlp_W_MiB", "kv_local_MiB");
    else
        printf("devices,attn_weights_MiB,kv_MiB,attn_weights_plus_kv_MiB,mlp_weights_MiB,"
               "kv_local_MiB\n");
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
        pm_footprint f;
        if (pm_footprint_compute(&t, &sh, ctx, &f, NULL) != PM_OK)
            continue;
        const double attn = f.attn_weight_bytes / MIB;
        /* The largest layer's KV cache: a global layer's, or the window's when all are local. */
        const double kv = (local < s.model.layers ? f.kv_bytes_global_layer
                                                  : f.kv_bytes_local_layer) / MIB;
        const double mlp = f.mlp_weight_bytes / MIB, kv_local = f.kv_bytes_local_layer / MIB;
        if (c->format == FMT_TABLE)
            printf("%8d %14.2f %14.2f %16.2f %14.2f %14.2f%s\n", devs[i], attn, kv, attn + kv,
                   mlp, kv_local, ok ? "" : "  (more devices than heads: ideal split)");
        else
            printf("%d,%.6g,%.6g,%.6g,%.6g,%.6g\n", devs[i], attn, kv, attn + kv, mlp, kv_local);
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

/* ---------------------------------------------------------------- resolve / validate / list */

static int cmd_resolve(const cli *c)
{
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    printf("# preserve-model %s: scenario %s resolved to SI units\n", pm_version(), s.name);
    printf("path,value_si,unit_si,origin,file,source\n");
    for (size_t i = 0; i < pm_scenario_param_count(&s); i++) {
        const pm_param_info *p = pm_scenario_param(&s, i);
        printf("%s,%.9g,%s,%s,%s,\"", p->path, p->value_si, p->unit_si, p->origin, p->file);
        for (const char *q = p->source; *q; q++)
            fputs(*q == '"' ? "\"\"" : (char[2]){*q, 0}, stdout);
        printf("\"\n");
    }
    pm_scenario_free(&s);
    return 0;
}

static int validate_one(const cli *c, const char *path, int *bad)
{
    pm_load_opts o = load_opts(c);
    pm_error err;
    pm_file_kind kind;
    if (pm_file_validate(path, &o, &kind, &err) != PM_OK) {
        config_error(&err);
        (*bad)++;
        return 1;
    }
    printf("ok  %-12s %s\n", pm_file_kind_name(kind), path);
    return 0;
}

static int cmd_validate(const cli *c, int argc, char **argv)
{
    int bad = 0, total = 0;
    if (argc > 0) {
        for (int i = 0; i < argc; i++, total++)
            validate_one(c, argv[i], &bad);
    } else {
        const char *dd = c->data_dir ? c->data_dir : pm_default_data_dir();
        for (int k = 0; k < PM_KIND_GRAPH; k++) {
            char **names = NULL;
            size_t n = 0;
            pm_error err;
            if (pm_data_list(dd, (pm_file_kind)k, &names, &n, &err) != PM_OK)
                continue; /* a kind with no directory ships no files */
            for (size_t i = 0; i < n; i++, total++) {
                static const char *const dirs[] = {"models", "accelerators", "clusters",
                                                   "workloads", "scenarios"};
                char path[1024];
                snprintf(path, sizeof path, "%s/%s/%s.json", dd, dirs[k], names[i]);
                validate_one(c, path, &bad);
            }
            pm_names_free(names, n);
        }
    }
    printf("%d files checked, %d invalid\n", total, bad);
    return bad ? EXIT_CONFIG : 0;
}

static int cmd_list(const cli *c, int argc, char **argv)
{
    static const char *const kinds[] = {"models", "accelerators", "clusters", "workloads",
                                        "scenarios"};
    if (argc != 1)
        return usage_error("list needs one of %s", "models, accelerators, clusters, workloads, scenarios");
    for (int k = 0; k < 5; k++) {
        if (strcmp(argv[0], kinds[k]) != 0)
            continue;
        char **names = NULL;
        size_t n = 0;
        pm_error err;
        if (pm_data_list(c->data_dir, (pm_file_kind)k, &names, &n, &err) != PM_OK)
            return config_error(&err);
        for (size_t i = 0; i < n; i++)
            printf("%s\n", names[i]);
        pm_names_free(names, n);
        return 0;
    }
    return usage_error("unknown list '%s' (expected models, accelerators, clusters, workloads or scenarios)",
                       argv[0]);
}


/* ---------------------------------------------------------------- main */

enum {
    OPT_MODEL = 256, OPT_ACCEL, OPT_DEVICES, OPT_BATCH, OPT_SEQ, OPT_CONTEXT, OPT_PHASE,
    OPT_MODE, OPT_LAYERS, OPT_DEVLIST, OPT_DATADIR, OPT_SWEEP, OPT_OPTIMIZE, OPT_PLOT, OPT_SHARD,
    OPT_THREADS
};

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},   {"set", required_argument, NULL, 's'},
        {"format", required_argument, NULL, 'f'},   {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},        {"model", required_argument, NULL, OPT_MODEL},
        {"accelerator", required_argument, NULL, OPT_ACCEL},
        {"devices", required_argument, NULL, OPT_DEVICES},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"seq", required_argument, NULL, OPT_SEQ},
        {"context", required_argument, NULL, OPT_CONTEXT},
        {"phase", required_argument, NULL, OPT_PHASE},
        {"mode", required_argument, NULL, OPT_MODE},
        {"layers", required_argument, NULL, OPT_LAYERS},
        {"devices-list", required_argument, NULL, OPT_DEVLIST},
        {"data-dir", required_argument, NULL, OPT_DATADIR},
        {"sweep", required_argument, NULL, OPT_SWEEP},
        {"optimize", required_argument, NULL, OPT_OPTIMIZE},
        {"plot", required_argument, NULL, OPT_PLOT},
        {"shard", required_argument, NULL, OPT_SHARD},
        {"threads", required_argument, NULL, OPT_THREADS},
        {NULL, 0, NULL, 0}};
    static cli c;
    gsl_set_error_handler_off();
    c.config = "llama70b";
    c.context = -1;
    c.layers = 2;
    c.mode = PM_MODE_PRESERVE;
    int opt;
    int64_t v;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":c:s:f:hV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c': c.config = optarg; break;
        case 's':
            if (!strchr(optarg, '=') || optarg[0] == '=')
                return usage_error("--set: expected PATH=VALUE (got '%s')", optarg);
            if (!add_set(&c, NULL, optarg, 0))
                return EXIT_USAGE;
            break;
        case 'f':
            c.format_given = true;
            if (strcmp(optarg, "table") == 0)
                c.format = FMT_TABLE;
            else if (strcmp(optarg, "json") == 0)
                c.format = FMT_JSON;
            else if (strcmp(optarg, "csv") == 0)
                c.format = FMT_CSV;
            else if (strcmp(optarg, "dot") == 0)
                c.format = FMT_DOT;
            else
                return usage_error("--format: expected table, json, csv or dot (got '%s')", optarg);
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("preserve-model %s\n", pm_version()); return 0;
        case OPT_MODEL:
            if (!add_set(&c, "model", optarg, 0))
                return EXIT_USAGE;
            break;
        case OPT_ACCEL:
            if (!add_set(&c, "accelerator", optarg, 0))
                return EXIT_USAGE;
            break;
        case OPT_DEVICES:
            if (!parse_count("--devices", optarg, 1, 1 << 20, &v) ||
                !add_set(&c, "cluster.devices", NULL, v))
                return EXIT_USAGE;
            break;
        case OPT_BATCH:
            if (!parse_count("--batch", optarg, 1, 1 << 24, &v) ||
                !add_set(&c, "workload.batch", NULL, v))
                return EXIT_USAGE;
            break;
        case OPT_SEQ:
            if (!parse_count("--seq", optarg, 2, 4294967296.0, &v) ||
                !add_set(&c, "workload.seq_len", NULL, v))
                return EXIT_USAGE;
            break;
        case OPT_CONTEXT:
            if (!parse_count("--context", optarg, 0, 4294967296.0, &c.context))
                return EXIT_USAGE;
            break;
        case OPT_LAYERS:
            if (!parse_count("--layers", optarg, 1, 1 << 20, &v))
                return EXIT_USAGE;
            c.layers = (int)v;
            break;
        case OPT_PHASE:
            if (strcmp(optarg, "decode") == 0)
                c.phase = PM_PHASE_DECODE;
            else if (strcmp(optarg, "prefill") == 0)
                c.phase = PM_PHASE_PREFILL;
            else
                return usage_error("--phase: expected decode or prefill (got '%s')", optarg);
            break;
        case OPT_MODE: {
            bool ok = false;
            for (int m = 0; m < PM_MODE_COUNT; m++)
                if (strcmp(optarg, pm_mode_name((pm_mode)m)) == 0) {
                    c.mode = (pm_mode)m;
                    ok = true;
                }
            if (!ok)
                return usage_error("--mode: expected serial, fused or preserve (got '%s')", optarg);
            break;
        }
        case OPT_DEVLIST: c.devices_list = optarg; break;
        case OPT_DATADIR: c.data_dir = optarg; break;
        case OPT_SWEEP:
            if (c.n_sweeps >= PM_SWEEP_MAX_AXES)
                return usage_error("--sweep: at most %d axes", PM_SWEEP_MAX_AXES);
            c.sweeps[c.n_sweeps++] = optarg;
            break;
        case OPT_OPTIMIZE: c.optimize = optarg; break;
        case OPT_PLOT: c.plot = optarg; break;
        case OPT_SHARD: c.shard = optarg; break;
        case OPT_THREADS:
            if (!parse_count("--threads", optarg, 0, 256, &v))
                return EXIT_USAGE;
            c.threads = (int)v;
            break;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    const char *cmd = optind < argc ? argv[optind++] : "run";
    int rest = argc - optind;
    char **args = argv + optind;
    if (strcmp(cmd, "validate") == 0)
        return cmd_validate(&c, rest, args);
    if (strcmp(cmd, "list") == 0)
        return cmd_list(&c, rest, args);
    if (strcmp(cmd, "merge") == 0)
        return cmd_merge(rest, args);
    if (rest > 0)
        return usage_error("unexpected argument '%s'", args[0]);
    if (strcmp(cmd, "run") == 0 && c.optimize)
        return cmd_optimize(&c);
    if (c.shard && (strcmp(cmd, "run") != 0 || c.n_sweeps == 0))
        return usage_error("--shard: only with --sweep");
    if (strcmp(cmd, "run") == 0 && c.n_sweeps > 0) {
        if (!c.format_given)
            c.format = FMT_CSV;
        if (c.format != FMT_CSV && c.format != FMT_JSON)
            return usage_error("--sweep: --format must be csv or json");
        return cmd_sweep(&c);
    }
    if (strcmp(cmd, "run") == 0) {
        if (c.format == FMT_DOT)
            return usage_error("run: --format must be table, json or csv");
        return cmd_run(&c);
    }
    if (strcmp(cmd, "graph") == 0) {
        if (!c.format_given)
            c.format = FMT_JSON;
        if (c.format != FMT_JSON && c.format != FMT_DOT)
            return usage_error("graph: --format must be json or dot");
        return cmd_graph(&c);
    }
    if (strcmp(cmd, "explain") == 0)
        return cmd_explain(&c);
    if (strcmp(cmd, "timeline") == 0)
        return cmd_timeline(&c);
    if (strcmp(cmd, "footprint") == 0)
        return cmd_footprint(&c);
    if (strcmp(cmd, "resolve") == 0)
        return cmd_resolve(&c);
    return usage_error("unknown command '%s'", cmd);
}
