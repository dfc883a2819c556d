/*
 * runtime.c - the serving runtime as a component of its own (DESIGN.md section 13): the times
 * the runtime adds to a step and what its kernels reach, used by cost.c (so the graph path and
 * the fast evaluator, which both cost nodes there, add them identically) and footprint.c (the
 * HBM it leaves). Its file is read by read_runtime.c.
 *
 * What a runtime adds, each serial with the device's work (an engine without asynchronous
 * scheduling prepares step n + 1 after step n's tokens are back on the host):
 *   - per step: step_overhead + batch x sequence_overhead (+ multi_device_overhead when the
 *     step runs on more than one device: the RPC to the worker processes), charged to the
 *     step's first node, the embedding, so that it precedes the step's first kernel;
 *   - per kernel: kernel_launch (CUDA graphs replay kernels a few us apart; eager launches
 *     cost the host's launch path per kernel), replacing the accelerator's;
 *   - per allreduce: allreduce_overhead, the collective library's start-up beyond the
 *     cluster's alpha-beta time (NCCL launched from the host; a custom allreduce kernel's
 *     launch, as any kernel's), and
 *     the algorithm when the runtime fixes it (`allreduce`: NCCL's ring for the small decode
 *     messages of a stack without a custom allreduce); the loader (data.c) puts it in the
 *     cluster, so every path uses it.
 * And what its own kernels reach where they are not the accelerator's measured ones: the
 * decode-attention kernel's KV read efficiency (`attention_hbm_efficiency_frac`), which
 * replaces the accelerator's in the roofline (cost.c's context, so both paths use it); and its
 * routed-expert GEMM kernel (`moe_gemm_efficiency_frac`): vLLM's fused-MoE Triton kernel, one
 * launch over every expert the step reads, with one tile configuration for all of their shapes,
 * runs below the dense cuBLAS GEMM the accelerator presets calibrate (vLLM's own benchmark of
 * it on H20: 1.3x to 2.5x slower than an optimised grouped kernel, validation-gpu.md section 4
 * #33); the routed experts' compute and memory times are divided by it. And that kernel's
 * compute rate by tokens per expert (`moe_gemm_compute_efficiency`, pm_moe_gemm_curve): vLLM's
 * tuned fused-MoE kernel on H100 reaches 0.86-0.87 of the dense GEMM model where it is
 * compute-bound (256-384 tokens per expert, vLLM PR #24700's benchmark_moe.py); a table of
 * points interpolated linearly in log(tokens per expert), clamped at its ends, applied to the
 * routed GEMMs' compute time only, and only on the accelerators the table names (its evidence):
 * elsewhere 1, and data.c's warnings say so. And the share of the
 * HBM it leaves to the weights and the KV cache (`hbm_usable_frac`, e.g. vLLM's
 * gpu_memory_utilization): the footprint check's capacity (estimate.c). And where it decodes
 * with a PagedAttention-style kernel (`paged_attention`: vLLM 0.2 for every model; vLLM 0.4-0.6
 * where its attention-backend selector falls back from FlashAttention to XFormers, whose decode
 * is that kernel: a model with a sliding window in every layer, or an fp8 KV cache): one thread
 * block per query head, the KV reads at `paged_attention_efficiency_frac` of the efficiency the
 * scenario uses otherwise (FlashInfer's measurement: GQA decode at batch 64 3x faster than
 * vLLM's PagedAttention, validation-gpu.md section 6 #14). And how it caches a multi-head
 * latent attention model (`mla_kv_cache`): the latent, or keys and values expanded per head
 * (vLLM before 0.7.1), which is not modelled; and the KV cache types it has (`kv_dtypes`):
 * pm_scenario_check refuses an MLA model under the first, and another kv_dtype.
 * And whether it routes a MoE layer with kernels of their own (issue 47; `moe_align_fixed`,
 * `moe_align_per_slot`): vLLM's fused-MoE path runs topk_softmax over the router's scores,
 * moe_align_block_size (the token slots sorted by expert, padded to the GEMM's block: one
 * thread block whose time grows with the slots, SGLang PR #5086's benchmark of vLLM's kernel)
 * and moe_sum (each token's k outputs summed before the allreduce); build.c puts them in the
 * layer template, cost.c costs the top-k and the sum as memory-bound kernels and the align as
 * its measured line (pm_moe_align_s) plus the launch.
 * And whether it quantises each fp8 linear's input in a kernel of its own (issue 47;
 * `fp8_activation_quant`): vLLM's fp8 linear method (Fp8LinearMethod, apply_fp8_linear) calls
 * scaled_fp8_quant on the 16-bit input before the fp8 GEMM, a memory-bound pass (read 16-bit,
 * write fp8 and a scale per row); with fp8 weights and activations (pm_fp8_act_quant) build.c
 * puts one such node before each fp8 linear, costed as any elementwise kernel.
 *
 * May call: model.c.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

double pm_launch_s(const pm_scenario *s)
{
    return s->runtime.present ? s->runtime.kernel_launch_s : s->accel.kernel_launch_s;
}

/* A runtime's optional fraction (0: not given) where the scenario has a runtime, else
 * otherwise. */
static double runtime_frac(const pm_scenario *s, double frac, double otherwise)
{
    return s->runtime.present && frac > 0 ? frac : otherwise;
}

double pm_attention_hbm_frac(const pm_scenario *s)
{
    return runtime_frac(s, s->runtime.attention_hbm_efficiency_frac,
                        s->accel.attention_hbm_efficiency_frac);
}

const char *pm_scenario_attention_fallback(const pm_scenario *s)
{
    if (!s)
        return NULL;
    const pm_model *m = &s->model;
    if (m->sliding_window > 0 && !m->chunked_attention && pm_model_local_layers(m) == m->layers)
        return "a sliding window in every layer";
    if (s->workload.kv_dtype == PM_DTYPE_FP8)
        return "an fp8 KV cache";
    return NULL;
}

bool pm_scenario_paged_layer(const pm_scenario *s)
{
    if (!s)
        return false;
    const pm_runtime *r = &s->runtime;
    return r->present && r->paged_attention == PM_PAGED_FALLBACK && s->model.sparse_block > 0 &&
           !pm_scenario_attention_fallback(s);
}

double pm_scenario_paged_attention_frac(const pm_scenario *s)
{
    if (!s)
        return 1.0;
    const pm_runtime *r = &s->runtime;
    if (!r->present || r->paged_attention == PM_PAGED_NONE)
        return 1.0;
    return r->paged_attention == PM_PAGED_ALL || pm_scenario_attention_fallback(s)
               ? r->paged_attention_efficiency_frac
               : 1.0;
}

double pm_moe_gemm_frac(const pm_scenario *s)
{
    return runtime_frac(s, s->runtime.moe_gemm_efficiency_frac, 1.0);
}

double pm_moe_gemm_curve_frac(const pm_moe_gemm_curve *c, double tokens_per_expert)
{
    const int n = c->n_points;
    if (n < 1)
        return 1.0;
    if (!(tokens_per_expert > c->tokens_per_expert[0]))
        return c->compute_frac[0];
    if (tokens_per_expert >= c->tokens_per_expert[n - 1])
        return c->compute_frac[n - 1];
    int i = 1;
    while (c->tokens_per_expert[i] < tokens_per_expert)
        i++;
    const double x0 = log(c->tokens_per_expert[i - 1]), x1 = log(c->tokens_per_expert[i]);
    const double f0 = c->compute_frac[i - 1], f1 = c->compute_frac[i];
    return f0 + (f1 - f0) * (log(tokens_per_expert) - x0) / (x1 - x0);
}

/* Whether the table names the accelerator. */
static bool curve_covers(const pm_moe_gemm_curve *c, const char *accelerator)
{
    for (int i = 0; i < c->n_accelerators; i++)
        if (strcmp(c->accelerators[i], accelerator) == 0)
            return true;
    return false;
}

const pm_moe_gemm_curve *pm_moe_gemm_curve_of(const pm_scenario *s)
{
    const pm_moe_gemm_curve *c = &s->runtime.moe_gemm_compute;
    return s->runtime.present && c->n_points > 0 && curve_covers(c, s->accel.name) ? c : NULL;
}

bool pm_moe_gemm_curve_off(const pm_scenario *s)
{
    const pm_moe_gemm_curve *c = &s->runtime.moe_gemm_compute;
    return s->runtime.present && c->n_points > 0 && !curve_covers(c, s->accel.name);
}

bool pm_moe_routing_ops(const pm_scenario *s)
{
    return s->runtime.present && s->runtime.moe_routing_kernels;
}

double pm_moe_align_s(const pm_scenario *s, double slots)
{
    if (!pm_moe_routing_ops(s))
        return 0.0;
    return s->runtime.moe_align_fixed_s + slots * s->runtime.moe_align_per_slot_s;
}

bool pm_fp8_act_quant(const pm_scenario *s)
{
    const pm_workload *w = &s->workload;
    return s->runtime.present && s->runtime.fp8_activation_quant &&
           w->weight_dtype == PM_DTYPE_FP8 && w->act_dtype == PM_DTYPE_FP8;
}

double pm_hbm_usable_bytes(const pm_scenario *s)
{
    return runtime_frac(s, s->runtime.hbm_usable_frac, 1.0) * s->accel.hbm_capacity_bytes;
}

double pm_runtime_step_s(const pm_scenario *s)
{
    const pm_runtime *r = &s->runtime;
    if (!r->present)
        return 0.0;
    return r->step_overhead_s + (double)s->workload.batch * r->sequence_overhead_s +
           (s->cluster.devices > 1 ? r->multi_device_overhead_s : 0.0);
}

double pm_runtime_allreduce_s(const pm_scenario *s)
{
    return s->runtime.present ? s->runtime.allreduce_overhead_s : 0.0;
}
