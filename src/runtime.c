/*
 * runtime.c - the serving runtime as a component of its own (DESIGN.md section 13): the file
 * reader for data/runtimes/ and the times the runtime adds to a step, used by cost.c (so the
 * graph path and the fast evaluator, which both cost nodes there, add them identically).
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
 * #33); the routed experts' compute and memory times are divided by it. And the share of the
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
 */
#include <math.h>
#include <string.h>

#include "internal.h"

static const pm_range TIME_RANGE = {0.0, 1.0, false, false}; /* 0 to 1 s: a host overhead */

/* The PagedAttention kernel and its efficiency come together: a kernel without its figure
 * would be costed at a guess, a figure without the kernel would change nothing. */
static pm_status read_paged_attention(pm_obj *o, pm_runtime *r)
{
    static const char *const names[] = {"none", "all", "fallback"};
    int which = PM_PAGED_NONE;
    pm_status st = pm_obj_enum(o, "paged_attention", false, names, PM_ARRAY_LEN(names), &which);
    if (st == PM_OK)
        st = pm_obj_quantity(o, "paged_attention_efficiency", PM_DIM_FRACTION, false,
                             PM_RANGE_FRACTION, &r->paged_attention_efficiency_frac);
    if (st != PM_OK)
        return st;
    r->paged_attention = (pm_paged_attention)which;
    const bool frac = r->paged_attention_efficiency_frac > 0;
    if (which != PM_PAGED_NONE && !frac)
        return pm_obj_fail(o, "paged_attention_efficiency_frac", PM_ERR_MISSING,
                           "missing: the PagedAttention kernel's efficiency, in (0, 1], is "
                           "required with \"paged_attention\": \"%s\"", names[which]);
    if (which == PM_PAGED_NONE && frac)
        return pm_obj_fail(o, "paged_attention_efficiency_frac", PM_ERR_VALUE,
                           "given without \"paged_attention\" (\"all\" or \"fallback\"): "
                           "it would change nothing");
    return PM_OK;
}

/* The KV cache types the engine has ("kv_dtypes": datatype names separated by spaces). */
static pm_status read_kv_dtypes(pm_obj *o, pm_runtime *r)
{
    const char *list = NULL;
    pm_status st = pm_obj_string(o, "kv_dtypes", false, &list);
    if (st != PM_OK || !list)
        return st;
    size_t n_names;
    const char *const *names = pm_dtype_names(&n_names);
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        const size_t len = strcspn(p, " ");
        if (len == 0)
            break;
        size_t d = 0;
        while (d < n_names && !(strlen(names[d]) == len && strncmp(p, names[d], len) == 0))
            d++;
        if (d == n_names) {
            char all[64];
            return pm_obj_fail(o, "kv_dtypes", PM_ERR_VALUE,
                               "expected datatype names separated by spaces (%s), got \"%.*s\"",
                               pm_dtype_list((1u << n_names) - 1, all, sizeof all), (int)len, p);
        }
        r->kv_dtype_mask |= 1u << d;
        p += len;
    }
    if (r->kv_dtype_mask == 0)
        return pm_obj_fail(o, "kv_dtypes", PM_ERR_VALUE, "names no datatype");
    return PM_OK;
}

pm_status pm_runtime_read(pm_obj *o, pm_runtime *r)
{
    memset(r, 0, sizeof *r);
    pm_status st;
    const char *s = NULL, *src = NULL;
    if ((st = pm_obj_string(o, "kind", false, &s)) != PM_OK)
        return st;
    if (s && strcmp(s, "runtime") != 0)
        return pm_fail(o->err, PM_ERR_VALUE, o->file, "$.kind",
                       "expected \"runtime\" here (got \"%s\")", s);
    if ((st = pm_obj_name(o, "name", true, r->name, sizeof r->name)) != PM_OK ||
        (st = pm_obj_string(o, "source", true, &src)) != PM_OK)
        return st;
    o->file_source = src;
    pm_obj_declare(o, "description", PM_DIM_NONE);
    pm_obj_declare(o, "engine", PM_DIM_NONE);
    if ((st = pm_obj_quantity(o, "step_overhead", PM_DIM_TIME, true, TIME_RANGE,
                              &r->step_overhead_s)) ||
        (st = pm_obj_quantity(o, "sequence_overhead", PM_DIM_TIME, true, TIME_RANGE,
                              &r->sequence_overhead_s)) ||
        (st = pm_obj_quantity(o, "multi_device_overhead", PM_DIM_TIME, false, TIME_RANGE,
                              &r->multi_device_overhead_s)) ||
        (st = pm_obj_quantity(o, "kernel_launch", PM_DIM_TIME, true, TIME_RANGE,
                              &r->kernel_launch_s)) ||
        (st = pm_obj_quantity(o, "allreduce_overhead", PM_DIM_TIME, false, TIME_RANGE,
                              &r->allreduce_overhead_s)) ||
        (st = pm_obj_quantity(o, "attention_hbm_efficiency", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &r->attention_hbm_efficiency_frac)) ||
        (st = pm_obj_quantity(o, "moe_gemm_efficiency", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &r->moe_gemm_efficiency_frac)) ||
        (st = pm_obj_quantity(o, "hbm_usable", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &r->hbm_usable_frac)))
        return st;
    int algo = PM_AR_AUTO;
    size_t n_algo;
    const char *const *names = pm_allreduce_algo_names(&n_algo);
    r->allreduce_given = pm_obj_has(o, "allreduce");
    if ((st = pm_obj_enum(o, "allreduce", false, names, n_algo, &algo)) != PM_OK)
        return st;
    r->allreduce = (pm_allreduce_algo)algo;
    if ((st = read_paged_attention(o, r)) != PM_OK)
        return st;
    static const char *const mla_names[] = {"latent", "per_head"};
    int mla = PM_MLA_CACHE_LATENT;
    if ((st = pm_obj_enum(o, "mla_kv_cache", false, mla_names, PM_ARRAY_LEN(mla_names), &mla)) !=
        PM_OK)
        return st;
    r->mla_kv_cache = (pm_mla_kv_cache)mla;
    static const char *const ep_names[] = {"all_to_all", "allreduce"};
    int ep = PM_EP_ALL_TO_ALL;
    if ((st = pm_obj_enum(o, "expert_parallel", false, ep_names, PM_ARRAY_LEN(ep_names), &ep)) !=
        PM_OK)
        return st;
    r->expert_parallel = (pm_ep_layout)ep;
    if ((st = read_kv_dtypes(o, r)) != PM_OK)
        return st;
    r->present = true;
    return pm_obj_finish(o);
}

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
