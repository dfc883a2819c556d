/*
 * check.c - pm_scenario_check: the consistency of a scenario, each component alone (a model's
 * dimensions, an accelerator's peaks and fractions, a cluster's links) and together (heads and
 * experts against devices, datatypes against the accelerator and the runtime), and the
 * magnitudes the model is defined for (units.c), for scenarios built or changed by hand. Reads
 * only the public structs: every estimate checks its scenario here first. A compiled served
 * point at another hardware point is checked by the rules that read that hardware only
 * (pm_scenario_check_hardware), the same rules in the same order; where only its L2 capacity
 * moved, by those that read the capacity (pm_scenario_check_l2).
 *
 * May call: accelerator.c, collective.c, dtype.c, error.c, plan.c, speculate.c, text.c, units.c,
 * workload.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static bool finite_pos(double x) { return isfinite(x) && x > 0; }
static bool finite_nonneg(double x) { return isfinite(x) && x >= 0; }
static bool frac_ok(double x) { return x > 0 && x <= 1; }

/* Dimensions of the model, alone. */
static pm_status check_model(const pm_model *m, pm_error *err)
{
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->kv_heads < 1 || m->head_dim < 1 ||
        m->intermediate < 1 || m->vocab < 1)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.model",
                       "every model dimension must be >= 1");
    if (m->heads % m->kv_heads != 0)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.model.num_key_value_heads",
                       "must divide num_attention_heads (got %d KV heads, %d attention heads)",
                       m->kv_heads, m->heads);
    if (m->sliding_window < 0 || m->window_period < 0 || m->window_period > 64 ||
        m->max_position_embeddings < 0)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.model.sliding_window",
                       "the window must be >= 0 tokens and its period in [0, 64] layers (got %d "
                       "tokens, period %d)",
                       m->sliding_window, m->window_period);
    if (m->sparse_block < 0 ||
        (m->sparse_block > 0 && (m->sparse_local_blocks < 1 || m->sparse_vert_stride < 1 ||
                                 (double)m->sparse_block * m->sparse_local_blocks >
                                     PM_MAX_MODEL_DIM)))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.model.blocksparse_block_size",
                       "block-sparse attention needs blocks >= 1 position, local blocks and a "
                       "vertical stride >= 1 (got block %d, %d local blocks, stride %d)",
                       m->sparse_block, m->sparse_local_blocks, m->sparse_vert_stride);
    if (m->sparse_block > 0 && (m->sliding_window > 0 || m->kv_lora_rank > 0))
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.model.blocksparse_block_size",
                       "block-sparse attention with %s is not modelled",
                       m->sliding_window > 0 ? "a sliding window" : "latent attention (MLA)");
    if (m->kv_lora_rank < 0 || m->q_lora_rank < 0 || m->qk_rope_head_dim < 0 ||
        (m->kv_lora_rank > 0 && (m->qk_nope_head_dim < 1 || m->v_head_dim < 1)))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.model.kv_lora_rank",
                       "MLA needs qk_nope_head_dim and v_head_dim >= 1 and no negative rank "
                       "(got kv_lora_rank %d, q_lora_rank %d, qk_nope_head_dim %d, "
                       "qk_rope_head_dim %d, v_head_dim %d)",
                       m->kv_lora_rank, m->q_lora_rank, m->qk_nope_head_dim,
                       m->qk_rope_head_dim, m->v_head_dim);
    if (m->experts < 0 || m->experts > PM_MAX_EXPERTS ||
        (m->experts > 0 &&
         (m->experts_per_token < 1 || m->experts_per_token > m->experts ||
          m->expert_intermediate < 1 || m->shared_experts < 0 || m->shared_intermediate < 0 ||
          (m->shared_experts > 0 && m->shared_intermediate < 1) || m->moe_first_layer < 0 ||
          m->moe_period < 0 || m->moe_period > 64 || m->moe_phase < 0 ||
          m->moe_phase >= (m->moe_period > 0 ? m->moe_period : 1))))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.model.num_experts",
                       "a MoE model needs 1 <= num_experts <= %d, 1 <= num_experts_per_tok <= "
                       "num_experts, expert widths >= 1 and a layer period in [1, 64] (got %d "
                       "experts, top-%d, width %d, period %d, phase %d)",
                       PM_MAX_EXPERTS, m->experts, m->experts_per_token,
                       m->expert_intermediate, m->moe_period, m->moe_phase);
    if (m->experts > 0 && m->parallel_block)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.model.num_experts",
                       "experts with parallel attention and MLP blocks are not modelled");
    return PM_OK;
}

/* The accelerator's bandwidths and capacities finite and > 0, its times >= 0 (a rule that
 * reads the hardware a compiled point may change: pm_scenario_check_hardware's too). */
static pm_status accel_capacities(const pm_accelerator *a, pm_error *err)
{
    if (!finite_pos(a->hbm_bandwidth_bytes_per_s) || !finite_pos(a->l2_bandwidth_bytes_per_s) ||
        !finite_pos(a->l2_capacity_bytes) || !finite_pos(a->hbm_capacity_bytes) ||
        !finite_nonneg(a->kernel_launch_s) || !finite_nonneg(a->chunk_half_efficiency_bytes) ||
        !finite_nonneg(a->attention_latency_s) || !finite_nonneg(a->dequant_elem_per_s))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator",
                       "bandwidths and capacities must be finite and > 0, times >= 0");
    return PM_OK;
}

/* Fractions, bandwidths, capacities and times of the accelerator, alone. */
static pm_status check_accelerator(const pm_accelerator *a, pm_error *err)
{
    if (!frac_ok(a->compute_efficiency_frac) || !frac_ok(a->hbm_efficiency_frac) ||
        !frac_ok(a->l2_usable_frac) || !frac_ok(a->kv_strided_efficiency_frac) ||
        !(a->kernel_hbm_efficiency_frac >= 0.0 && a->kernel_hbm_efficiency_frac <= 1.0) ||
        !(a->attention_hbm_efficiency_frac >= 0.0 && a->attention_hbm_efficiency_frac <= 1.0) ||
        !(a->attention_compute_efficiency_frac >= 0.0 &&
          a->attention_compute_efficiency_frac <= 1.0))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator",
                       "efficiency fractions must be in (0, 1]");
    for (int d = 0; d < PM_DTYPE_COUNT; d++)
        if (!(a->compute_efficiency_dtype_frac[d] >= 0.0 &&
              a->compute_efficiency_dtype_frac[d] <= 1.0))
            return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.compute_efficiency_by_dtype",
                           "%s: must be in (0, 1], or 0 for compute_efficiency_frac (got %g)",
                           pm_dtype_name((pm_dtype)d), a->compute_efficiency_dtype_frac[d]);
    const pm_status st = accel_capacities(a, err);
    if (st != PM_OK)
        return st;
    /* The die is the one that runs: one that reaches no HBM would be smaller than any part that
     * holds the model's weights (its density too good by the PHYs' area). */
    if (a->area.present && a->area.hbm_stacks < 1 && a->hbm_capacity_bytes > 0)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.accelerator.area.hbm_stacks",
                       "a die with no HBM PHY reaches none of its %g GiB of HBM: at least 1",
                       a->hbm_capacity_bytes / 1073741824.0);
    if ((int)a->prefetch_consumer < 0 || a->prefetch_consumer > PM_CONSUMER_STREAM)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "$.accelerator.prefetch_consumer",
                       "bad prefetch_consumer value");
    /* The GEMM block built by hand (the reader checks a file's): 0 compute units made every
     * GEMM's time infinite, refused as "not finite" without the key. */
    const pm_gemm_params *g = &a->gemm;
    if (g->present && (g->compute_units < 1 || g->tile_m < 1 || g->tile_n < 1 ||
                       !(g->overlap_loss_frac >= 0 && g->overlap_loss_frac <= 1) ||
                       !finite_nonneg(g->latency_s)))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.gemm",
                       "compute_units, tile_m and tile_n must be >= 1, overlap_loss_frac in "
                       "[0, 1] and latency finite and >= 0 (got %d, %d, %d, %g, %g s)",
                       g->compute_units, g->tile_m, g->tile_n, g->overlap_loss_frac,
                       g->latency_s);
    return PM_OK;
}

/* The cluster's link: bandwidth > 0, latencies >= 0 (a rule that reads the hardware a
 * compiled point may change: pm_scenario_check_hardware's too). */
static pm_status cluster_link(const pm_cluster *c, pm_error *err)
{
    if (!finite_pos(c->link_bandwidth_bytes_per_s) || !finite_nonneg(c->link_latency_s) ||
        !finite_nonneg(c->fused_latency_s))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster",
                       "link bandwidth must be > 0 and latency >= 0");
    return PM_OK;
}

/* The cluster alone: devices, links, the hierarchical parameters, and an algorithm the
 * topology can run. */
static pm_status check_cluster(const pm_cluster *c, pm_error *err)
{
    if (c->devices < 1)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.devices", "must be >= 1 (got %d)",
                       c->devices);
    pm_status st = cluster_link(c, err);
    if (st == PM_OK)
        st = pm_allreduce_efficiency_check(c, err);
    if (st != PM_OK)
        return st;
    if ((int)c->topology < 0 || c->topology > PM_TOPO_HIERARCHICAL || (int)c->algorithm < 0 ||
        c->algorithm > PM_AR_RING_PIPELINED)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "$.cluster", "bad topology or algorithm");
    if (c->topology == PM_TOPO_HIERARCHICAL) {
        if (c->devices_per_node < 1 || c->devices % c->devices_per_node != 0)
            return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.devices_per_node",
                           "must divide devices (got %d per node, %d devices)",
                           c->devices_per_node, c->devices);
        if (!finite_pos(c->inter_node_bandwidth_bytes_per_s) ||
            !finite_nonneg(c->inter_node_latency_s))
            return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster",
                           "inter-node bandwidth must be > 0 and latency >= 0");
    }
    if (!finite_nonneg(c->a2a_latency_s))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.a2a_latency_us",
                       "must be finite and >= 0 (got %g us)", c->a2a_latency_s * 1e6);
    if (!(c->a2a_efficiency_frac >= 0.0 && c->a2a_efficiency_frac <= 1.0)) /* 0 acts as 1 */
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.a2a_efficiency_frac",
                       "must be in (0, 1], or 0 for 1 (got %g)", c->a2a_efficiency_frac);
    return PM_OK;
}

/* An allreduce algorithm the topology can run: the cluster's, or the runtime's when the runtime
 * fixes it (the runtime's allreduce decides the cluster's algorithm, so the error is its key). */
static pm_status check_algorithm(const pm_scenario *s, pm_error *err)
{
    const pm_status st = pm_allreduce_algo_check(s->cluster.topology, s->cluster.algorithm, err);
    if (st != PM_OK && err && s->runtime.present && s->runtime.allreduce_given) {
        pm_strlcpy(err->path, "$.runtime.allreduce", sizeof err->path);
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s (runtime \"%s\" decides the cluster's algorithm)",
                 err->message, s->runtime.name);
        pm_strlcpy(err->message, msg, sizeof err->message);
    }
    return st;
}

/* Which of check_magnitudes' rows are checked: every one, those of the fields a compiled point
 * may change (pm_scenario_check_hardware's), or the L2 capacity's alone (pm_scenario_check_l2's). */
typedef enum mag_rows { ROWS_ALL, ROWS_HARDWARE, ROWS_L2 } mag_rows;

/* The magnitudes the model is defined for. The loaders enforce the same key by key; this
 * catches scenarios built or changed by hand (a sweep point, say). rows: which rows. The rows
 * are a static table of field offsets (in the accelerator, or in the cluster where `cluster`),
 * not a table of values built at every check. */
static pm_status check_magnitudes(const pm_accelerator *a, const pm_cluster *c, mag_rows rows,
                                  pm_error *err)
{
#define ACCEL(f) offsetof(pm_accelerator, f), false
#define CLUSTER(f) offsetof(pm_cluster, f), true
    static const struct {
        const char *path;
        size_t offset;
        bool cluster;
        pm_dimension dim;
        bool hw;
    } q[] = {
        {"$.accelerator.hbm_bandwidth", ACCEL(hbm_bandwidth_bytes_per_s), PM_DIM_BANDWIDTH, true},
        {"$.accelerator.l2_bandwidth", ACCEL(l2_bandwidth_bytes_per_s), PM_DIM_BANDWIDTH, true},
        {"$.accelerator.l2_capacity", ACCEL(l2_capacity_bytes), PM_DIM_BYTES, true},
        {"$.accelerator.hbm_capacity", ACCEL(hbm_capacity_bytes), PM_DIM_BYTES, false},
        {"$.accelerator.kernel_launch", ACCEL(kernel_launch_s), PM_DIM_TIME, false},
        {"$.accelerator.attention_latency", ACCEL(attention_latency_s), PM_DIM_TIME, false},
        {"$.accelerator.chunk_half_efficiency", ACCEL(chunk_half_efficiency_bytes), PM_DIM_BYTES,
         false},
        {"$.accelerator.peak_compute.int8", ACCEL(peak_flop_per_s[PM_DTYPE_INT8]),
         PM_DIM_COMPUTE, true},
        {"$.accelerator.peak_compute.fp8", ACCEL(peak_flop_per_s[PM_DTYPE_FP8]), PM_DIM_COMPUTE,
         true},
        {"$.accelerator.peak_compute.bf16", ACCEL(peak_flop_per_s[PM_DTYPE_BF16]),
         PM_DIM_COMPUTE, true},
        {"$.accelerator.peak_compute.fp16", ACCEL(peak_flop_per_s[PM_DTYPE_FP16]),
         PM_DIM_COMPUTE, true},
        {"$.accelerator.peak_compute.fp32", ACCEL(peak_flop_per_s[PM_DTYPE_FP32]),
         PM_DIM_COMPUTE, true},
        {"$.cluster.link_bandwidth", CLUSTER(link_bandwidth_bytes_per_s), PM_DIM_BANDWIDTH, true},
        {"$.cluster.link_latency", CLUSTER(link_latency_s), PM_DIM_TIME, false},
        {"$.cluster.fused_latency", CLUSTER(fused_latency_s), PM_DIM_TIME, false},
        {"$.cluster.inter_node_bandwidth", CLUSTER(inter_node_bandwidth_bytes_per_s),
         PM_DIM_BANDWIDTH, false},
        {"$.cluster.inter_node_latency", CLUSTER(inter_node_latency_s), PM_DIM_TIME, false},
    };
#undef ACCEL
#undef CLUSTER
    for (size_t i = 0; i < PM_ARRAY_LEN(q); i++) {
        double lo = 0.0, hi = 0.0, v;
        if ((rows == ROWS_HARDWARE && !q[i].hw) ||
            (rows == ROWS_L2 &&
             (q[i].cluster || q[i].offset != offsetof(pm_accelerator, l2_capacity_bytes))))
            continue;
        memcpy(&v, (const char *)(q[i].cluster ? (const void *)c : (const void *)a) + q[i].offset,
               sizeof v);
        if (!pm_magnitude_ok(v, q[i].dim) && pm_magnitude_range(q[i].dim, &lo, &hi)) {
            return pm_fail(err, PM_ERR_RANGE, NULL, q[i].path,
                           "must be %sin [%g, %g] %s, the range the model is defined for "
                           "(got %g)",
                           q[i].dim == PM_DIM_BANDWIDTH || strstr(q[i].path, "capacity")
                               ? ""
                               : "0 or ",
                           lo, hi, pm_unit_si_name(q[i].dim), v);
        }
    }
    return PM_OK;
}

/* int4 is a weight-only format (GPTQ, AWQ: W4A16): 4-bit weights dequantised inside a 16-bit
 * GEMM. Neither 4-bit activations, nor a 4-bit KV cache or allreduce, nor W4A8 is modelled; the
 * group keys describe int4 weights only. */
static pm_status check_int4(const pm_workload *w, pm_error *err)
{
    const struct { pm_dtype d; const char *key, *what; } uses[] = {
        {w->act_dtype, "$.workload.act_dtype", "activations"},
        {w->kv_dtype, "$.workload.kv_dtype", "a KV cache"},
        {pm_allreduce_dtype(w), "$.workload.allreduce_dtype", "an allreduce payload"}};
    for (size_t i = 0; i < PM_ARRAY_LEN(uses); i++)
        if (uses[i].d == PM_DTYPE_INT4)
            return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, uses[i].key,
                           "int4 as %s is not modelled: int4 is a weight-only datatype (GPTQ, "
                           "AWQ) beside 16-bit activations",
                           uses[i].what);
    const bool w4 = w->weight_dtype == PM_DTYPE_INT4;
    if (w4 && w->act_dtype != PM_DTYPE_BF16 && w->act_dtype != PM_DTYPE_FP16)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.workload.act_dtype",
                       "int4 weights with %s activations are not modelled: only W4A16 (bf16 "
                       "or fp16 activations) is",
                       pm_dtype_name(w->act_dtype));
    if (!w4 && (w->weight_group_size != 0 || w->weight_zero_point))
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL,
                       w->weight_group_size != 0 ? "$.workload.weight_group_size"
                                                 : "$.workload.weight_zero_point",
                       "describes int4 weights' groups, but weight_dtype is %s: it would "
                       "change nothing",
                       pm_dtype_name(w->weight_dtype));
    if (w->weight_group_size < 0 || w->weight_group_size > PM_MAX_WEIGHT_GROUP)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.workload.weight_group_size",
                       "must be in [1, %d] (got %d)", PM_MAX_WEIGHT_GROUP,
                       w->weight_group_size);
    return PM_OK;
}

/* The workload alone: sizes, the prompt it leaves, valid datatypes. */
static pm_status check_workload(const pm_workload *w, pm_error *err)
{
    if (w->batch < 1 || w->seq_len < 2 || !(w->prefill_frac > 0 && w->prefill_frac < 1))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.workload",
                       "batch >= 1, seq_len >= 2 and 0 < prefill_frac < 1 are required");
    pm_dtype ds[4] = {w->weight_dtype, w->kv_dtype, w->act_dtype, pm_allreduce_dtype(w)};
    for (int i = 0; i < 4; i++)
        if ((int)ds[i] < 0 || ds[i] >= PM_DTYPE_COUNT)
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "$.workload", "bad datatype");
    /* A W8A8 GEMM multiplies two operands of one 8-bit type: no kernel multiplies fp8 by
     * int8, so the pair would be modelled as a GEMM that does not exist. */
    const bool w8 = w->weight_dtype == PM_DTYPE_INT8 || w->weight_dtype == PM_DTYPE_FP8;
    const bool a8 = w->act_dtype == PM_DTYPE_INT8 || w->act_dtype == PM_DTYPE_FP8;
    if (w8 && a8 && w->weight_dtype != w->act_dtype)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.workload.act_dtype",
                       "%s activations with %s weights: no GEMM multiplies an fp8 operand by "
                       "an int8 one; use one 8-bit type for both (W8A8) or wider activations "
                       "(weight-only quantisation)",
                       pm_dtype_name(w->act_dtype), pm_dtype_name(w->weight_dtype));
    pm_status st = check_int4(w, err);
    if (st != PM_OK)
        return st;
    int64_t prefill = pm_workload_prompt_tokens(w);
    if (prefill < 1 || prefill >= w->seq_len)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.workload.prefill_frac",
                       "leaves %lld prompt tokens of %lld: need at least one prompt token and one "
                       "decode step",
                       (long long)prefill, (long long)w->seq_len);
    return PM_OK;
}

/* The runtime's fields alone (a scenario built by hand: the loader's reader checks a file's):
 * times finite and >= 0, fractions in [0, 1] (0: the default the field names), enums in
 * range, the expert curve's counts within its arrays. */
static pm_status check_runtime(const pm_runtime *r, pm_error *err)
{
    if (!r->present)
        return PM_OK;
    const struct { const char *key; double v; bool frac; } f[] = {
        {"step_overhead_s", r->step_overhead_s, false},
        {"sequence_overhead_s", r->sequence_overhead_s, false},
        {"multi_device_overhead_s", r->multi_device_overhead_s, false},
        {"kernel_launch_s", r->kernel_launch_s, false},
        {"allreduce_overhead_s", r->allreduce_overhead_s, false},
        {"moe_align_fixed_s", r->moe_align_fixed_s, false},
        {"moe_align_per_slot_s", r->moe_align_per_slot_s, false},
        {"attention_hbm_efficiency_frac", r->attention_hbm_efficiency_frac, true},
        {"moe_gemm_efficiency_frac", r->moe_gemm_efficiency_frac, true},
        {"hbm_usable_frac", r->hbm_usable_frac, true},
        {"paged_attention_efficiency_frac", r->paged_attention_efficiency_frac, true},
    };
    char path[96];
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!(f[i].v >= 0 && (f[i].frac ? f[i].v <= 1 : f[i].v < INFINITY))) {
            snprintf(path, sizeof path, "$.runtime.%s", f[i].key);
            return pm_fail(err, PM_ERR_RANGE, NULL, path, "must be %s (got %g)",
                           f[i].frac ? "in [0, 1] (0: the default)" : "finite and >= 0", f[i].v);
        }
    const struct { const char *key; int v, n; } e[] = {
        {"allreduce", r->allreduce_given ? (int)r->allreduce : 0, PM_AR_RING_PIPELINED + 1},
        {"paged_attention", (int)r->paged_attention, PM_PAGED_FALLBACK + 1},
        {"mla_kv_cache", (int)r->mla_kv_cache, PM_MLA_CACHE_PER_HEAD + 1},
        {"expert_parallel", (int)r->expert_parallel, PM_EP_ALLREDUCE + 1},
    };
    for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
        if (e[i].v < 0 || e[i].v >= e[i].n) {
            snprintf(path, sizeof path, "$.runtime.%s", e[i].key);
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, path, "not a value of its enum (got %d)",
                           e[i].v);
        }
    if (r->paged_attention != PM_PAGED_NONE && !(r->paged_attention_efficiency_frac > 0))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.runtime.paged_attention_efficiency_frac",
                       "must be in (0, 1] where paged_attention is not \"none\" (got %g)",
                       r->paged_attention_efficiency_frac);
    const pm_moe_gemm_curve *c = &r->moe_gemm_compute;
    if (c->n_points < 0 || c->n_points > PM_MAX_MOE_GEMM_POINTS || c->n_accelerators < 0 ||
        c->n_accelerators > PM_MAX_MOE_GEMM_ACCELERATORS ||
        (c->n_points > 0 && c->n_accelerators < 1))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.runtime.moe_gemm_compute",
                       "0 to %d points and, with points, 1 to %d accelerators (got %d and %d)",
                       PM_MAX_MOE_GEMM_POINTS, PM_MAX_MOE_GEMM_ACCELERATORS, c->n_points,
                       c->n_accelerators);
    for (int i = 0; i < c->n_points; i++)
        if (!(c->tokens_per_expert[i] > (i ? c->tokens_per_expert[i - 1] : 0.0) &&
              c->tokens_per_expert[i] < INFINITY && c->compute_frac[i] > 0 &&
              c->compute_frac[i] <= 1))
            return pm_fail(err, PM_ERR_RANGE, NULL, "$.runtime.moe_gemm_compute",
                           "point %d: tokens per expert > 0 and increasing, a compute fraction "
                           "in (0, 1] (got %g, %g)",
                           i + 1, c->tokens_per_expert[i], c->compute_frac[i]);
    return PM_OK;
}

static pm_status check_compute_peak(const pm_scenario *s, pm_error *err);

/* The combinations: heads vs devices under the sharding, options, and a peak for the
 * compute datatype. */
static pm_status check_together(const pm_scenario *s, pm_error *err)
{
    const pm_model *m = &s->model;
    const pm_cluster *c = &s->cluster;
    const pm_workload *w = &s->workload;
    const unsigned kv_mask = s->runtime.kv_dtype_mask;
    /* Devices that exchange collectives need a link PHY on the die that pays for it. */
    if (s->accel.area.present && s->accel.area.links < 1 && pm_cluster_total_devices(c) > 1)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.accelerator.area.links",
                       "a die with no link PHY cannot join the cluster's %d devices: at least 1",
                       pm_cluster_total_devices(c));
    if (s->runtime.present && kv_mask != 0 && (int)w->kv_dtype >= 0 &&
        w->kv_dtype < PM_DTYPE_COUNT && !(kv_mask & (1u << w->kv_dtype))) {
        char have[64];
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.workload.kv_dtype",
                       "runtime \"%s\" caches keys and values as %s (its kv_dtypes), not %s",
                       s->runtime.name, pm_dtype_list(kv_mask, have, sizeof have),
                       pm_dtype_name(w->kv_dtype));
    }
    if (s->runtime.present && s->runtime.mla_kv_cache == PM_MLA_CACHE_PER_HEAD &&
        m->kv_lora_rank > 0)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.runtime.mla_kv_cache",
                       "runtime \"%s\" does not cache %s's latent (\"per_head\": that engine "
                       "expands multi-head latent attention's keys and values per head), which "
                       "is not modelled: use a runtime that caches the latent (e.g. vllm-v1)",
                       s->runtime.name, m->name);
    /* (Data-parallel attention splits sequences, not heads: any group size.) */
    if (s->options.sharding != PM_SHARDING_IDEAL && c->devices > m->heads &&
        !c->attention_data_parallel)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.devices",
                       "%d devices exceed the model's %d attention heads: use fewer devices or "
                       "\"sharding\": \"ideal\"",
                       c->devices, m->heads);
    const int ep = pm_cluster_ep(c);
    if (s->runtime.present && ep > 1 && m->experts >= 1 &&
        s->runtime.expert_parallel == PM_EP_ALLREDUCE)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.runtime.expert_parallel",
                       "runtime \"%s\" runs expert parallelism over %d ranks with every "
                       "token on every rank and one allreduce (\"allreduce\": vLLM without "
                       "data-parallel attention), which is not modelled (only all-to-all "
                       "dispatch and combine are): use expert_parallel 1, or no runtime",
                       s->runtime.name, ep);
    const pm_status st = pm_plan_check_ep(s, err);
    if (st != PM_OK)
        return st;
    if (!(w->routing_skew_alpha >= 0.0 && w->routing_skew_alpha <= 16.0))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.workload.routing_skew_alpha",
                       "must be in [0, 16] (got %g)", w->routing_skew_alpha);
    if (w->distinct_sequences < 0 || w->distinct_sequences > w->batch)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.workload.distinct_sequences",
                       "must be in [1, batch = %d] (got %d)", w->batch, w->distinct_sequences);
    if (w->distinct_sequences > 0 && w->distinct_sequences < w->batch && ep > 1)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.workload.distinct_sequences",
                       "%d distinct sequences in a batch of %d under expert parallelism (%d "
                       "ranks): the busiest rank's load of identical tokens is not modelled",
                       w->distinct_sequences, w->batch, ep);
    if (m->experts < 1 && w->routing_skew_alpha > 0.0)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.workload.routing_skew_alpha",
                       "a routing skew (%g) needs a mixture-of-experts model (%s has no "
                       "experts): it would change nothing",
                       w->routing_skew_alpha, m->name);
    if ((int)s->options.sharding < 0 || s->options.sharding > PM_SHARDING_IDEAL)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "$.sharding", "bad sharding value");
    if (s->options.fused_chunks < 0 || s->options.fused_chunks > 1024)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.options.fused_chunks",
                       "must be in [0, 1024] (got %d)", s->options.fused_chunks);
    return check_compute_peak(s, err);
}

/* A peak for the compute datatype (check_together's last rule: the one that reads the
 * accelerator's peaks). */
static pm_status check_compute_peak(const pm_scenario *s, pm_error *err)
{
    const pm_accelerator *a = &s->accel;
    pm_dtype cd = pm_compute_dtype(&s->workload);
    if (!(pm_peak_compute(a, cd) > 0)) {
        unsigned peaks = 0;
        for (int d = 0; d < PM_DTYPE_COUNT; d++)
            if (a->peak_flop_per_s[d] > 0)
                peaks |= 1u << d;
        char have[64];
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.workload.act_dtype",
                       "accelerator \"%s\" has no %s peak (it lists %s): set the workload's "
                       "weight_dtype and act_dtype to one it lists, or choose an accelerator "
                       "that has one",
                       a->name, pm_dtype_name(cd), pm_dtype_list(peaks, have, sizeof have));
    }
    /* Weight-only quantisation (weights narrower than the GEMMs' type: W4A16, W8A16) converts
     * every weight inside the GEMM at dequant_rate (gemm_eff.c); a chip that states none would
     * convert for free, a silently fast answer (int4 on a 910B 34 % faster than at the H100's
     * rate). */
    const pm_dtype wd = s->workload.weight_dtype;
    if (!(a->dequant_elem_per_s > 0) && pm_dtype_bytes(wd) < pm_dtype_bytes(cd))
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.accelerator.dequant_rate",
                       "%s weights in %s GEMMs are converted inside each GEMM at the "
                       "accelerator's dequant_rate_<unit> (weight elements per second, e.g. "
                       "dequant_rate_TOPS), which accelerator \"%s\" does not state: give it, "
                       "or weights of the GEMMs' type",
                       pm_dtype_name(wd), pm_dtype_name(cd), a->name);
    return PM_OK;
}

/* An NVSwitch baseboard or a full mesh joins a fixed number of devices: beyond it the traffic
 * crosses another, slower network the cluster does not describe. Checked last, so that a
 * device count the model cannot split says so first. */
static pm_status check_cluster_size(const pm_cluster *c, pm_error *err)
{
    if (c->max_devices > 0 && c->devices > c->max_devices)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.devices",
                       "cluster %s (%s) joins at most %d devices (its max_devices; got %d): "
                       "more devices need a hierarchical cluster (devices_per_node, "
                       "inter_node_bandwidth), e.g. ascend-multinode",
                       c->name[0] ? c->name : "(inline)", pm_topology_name(c->topology),
                       c->max_devices, c->devices);
    return PM_OK;
}

/* Sequence parallelism splits a dense layer's two allreduces (build.c); the layers whose
 * collectives it would change otherwise are refused, naming the key that asked for it. */
static pm_status check_sequence_parallel(const pm_scenario *s, pm_error *err)
{
    const pm_model *m = &s->model;
    if (!s->cluster.sequence_parallel)
        return PM_OK;
    if (m->experts > 0)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.cluster.sequence_parallel",
                       "sequence parallelism with mixture-of-experts layers (%s has %d "
                       "experts) is not modelled: its dispatch, combine and tensor-parallel "
                       "experts' reduce-scatter are not split by tokens",
                       m->name, m->experts);
    if (m->parallel_block)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.cluster.sequence_parallel",
                       "sequence parallelism with parallel attention and MLP blocks (%s) is "
                       "not modelled",
                       m->name);
    return PM_OK;
}

/* ---- speculative decoding (issue 45): the "speculative" block ---- */

/* The fields of the block alone: counts, rates, the method's own keys. */
static pm_status check_spec_fields(const pm_speculation *sp, pm_error *err)
{
    if (sp->draft_tokens < 0 || sp->draft_tokens > PM_MAX_SPEC_TOKENS)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.speculative.draft_tokens",
                       "must be in [0, %d] (got %d)", PM_MAX_SPEC_TOKENS, sp->draft_tokens);
    if (sp->draft_tokens == 0)
        return PM_OK;
    if (sp->n_acceptance != 1 && sp->n_acceptance != sp->draft_tokens)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.speculative.acceptance",
                       "expected one rate or one per drafted token (%d; got %d)",
                       sp->draft_tokens, sp->n_acceptance);
    for (int i = 0; i < sp->n_acceptance; i++)
        if (!(sp->acceptance[i] >= 0.0 && sp->acceptance[i] < 1.0))
            return pm_fail(err, PM_ERR_RANGE, NULL, "$.speculative.acceptance",
                           "a rate must be in [0, 1) (got %g at position %d): 1 would accept "
                           "every draft forever",
                           sp->acceptance[i], i + 1);
    if ((int)sp->method < 0 || sp->method >= PM_SPEC_METHOD_COUNT)
        return pm_fail(err, PM_ERR_VALUE, NULL, "$.speculative.method",
                       "expected \"draft_model\" or \"mtp\" (got %d)", (int)sp->method);
    if (sp->method == PM_SPEC_MTP && sp->mtp_layers < 1)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.speculative.mtp_layers",
                       "MTP heads need at least one layer (got %d)", sp->mtp_layers);
    if (sp->method == PM_SPEC_DRAFT_MODEL && sp->draft.layers < 1)
        return pm_fail(err, PM_ERR_MISSING, NULL, "$.speculative.draft_model",
                       "method draft_model needs a draft model");
    return PM_OK;
}

/* The draft against the target and the plan: its vocabulary, its sharding, no stages. */
static pm_status check_spec_together(const pm_scenario *s, pm_error *err)
{
    const pm_speculation *sp = &s->spec;
    if (pm_cluster_pp(&s->cluster) > 1)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.speculative",
                       "speculative decoding over pipeline stages is not modelled (%d stages): "
                       "the verify step's micro-batches and the draft's placement are not",
                       pm_cluster_pp(&s->cluster));
    if (s->cluster.sequence_parallel)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.speculative",
                       "speculative decoding with sequence parallelism is not modelled: the "
                       "verify step's tokens over the reduce-scatter and all-gather, and the "
                       "draft's collectives, are not checked together");
    if (sp->method == PM_SPEC_DRAFT_MODEL && sp->draft.vocab != s->model.vocab)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.speculative.draft_model",
                       "the draft model's vocabulary differs from the target's (%d vs %d "
                       "tokens): the target cannot verify its tokens",
                       sp->draft.vocab, s->model.vocab);
    if (sp->method == PM_SPEC_MTP && sp->mtp_layers > s->model.mtp_layers)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.speculative.mtp_layers",
                       "%d MTP layer%s asked of a model with %d (its num_nextn_predict_layers): "
                       "MTP drafts with the checkpoint's own multi-token-prediction layers; a "
                       "model without them drafts with method \"draft_model\" (or is given "
                       "them, a what-if: model.num_nextn_predict_layers)",
                       sp->mtp_layers, sp->mtp_layers == 1 ? "" : "s", s->model.mtp_layers);
    pm_scenario d;
    pm_spec_draft_scenario(s, &d);
    pm_status st = pm_scenario_check(&d, err);
    if (st != PM_OK && err) {
        char inner[sizeof err->message];
        pm_strlcpy(inner, err->message, sizeof inner);
        return pm_fail(err, st, NULL, "$.speculative.draft_model", "the draft: %s: %s",
                       err->path[0] ? err->path : "$", inner);
    }
    return st;
}

pm_status pm_spec_check(const pm_scenario *s, pm_error *err)
{
    pm_status st = check_spec_fields(&s->spec, err);
    if (st != PM_OK || !pm_spec_active(s))
        return st;
    return check_spec_together(s, err);
}

pm_status pm_scenario_check(const pm_scenario *s, pm_error *err)
{
    if (!s)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "scenario is NULL");
    pm_status st;
    if ((st = check_model(&s->model, err)) != PM_OK ||
        (st = check_accelerator(&s->accel, err)) != PM_OK ||
        (st = check_cluster(&s->cluster, err)) != PM_OK ||
        (st = check_algorithm(s, err)) != PM_OK ||
        (st = check_magnitudes(&s->accel, &s->cluster, ROWS_ALL, err)) != PM_OK ||
        (st = check_workload(&s->workload, err)) != PM_OK ||
        (st = check_runtime(&s->runtime, err)) != PM_OK ||
        (st = check_together(s, err)) != PM_OK ||
        (st = check_sequence_parallel(s, err)) != PM_OK ||
        (st = pm_plan_check_attention_dp(s, err)) != PM_OK)
        return st;
    if ((st = check_cluster_size(&s->cluster, err)) != PM_OK)
        return st;
    pm_pipeline pl; /* the stages and replicas, and their placement on the nodes */
    if ((st = pm_pipeline_plan(s, &pl, err)) != PM_OK)
        return st;
    return pm_spec_check(s, err);
}

/* (internal.h) The rules of pm_scenario_check that read a field a compiled point may change
 * (accel_capacities, cluster_link, check_magnitudes' rows of those fields, check_compute_peak),
 * in its order: every other rule reads none of them, so where the scenario differs from one
 * that passed only in those fields the others pass again, and the first of these to fail is
 * pm_scenario_check's first. The draft's check (pm_spec_check) reads the same accelerator,
 * cluster and workload, so its rules on them pass where the target's do. */
pm_status pm_scenario_check_hardware(const pm_scenario *s, pm_error *err)
{
    pm_status st;
    if ((st = accel_capacities(&s->accel, err)) != PM_OK ||
        (st = cluster_link(&s->cluster, err)) != PM_OK ||
        (st = check_magnitudes(&s->accel, &s->cluster, ROWS_HARDWARE, err)) != PM_OK)
        return st;
    return check_compute_peak(s, err);
}

/* (internal.h) pm_scenario_check_hardware's rules that read the L2 capacity, in its order
 * (accel_capacities, whose one refusal names every field it reads, and the capacity's
 * magnitude): where the scenario differs from one that passed it only in that capacity, every
 * other rule passes again and the first of these to fail is its first. */
pm_status pm_scenario_check_l2(const pm_scenario *s, pm_error *err)
{
    const pm_status st = accel_capacities(&s->accel, err);
    return st != PM_OK ? st : check_magnitudes(&s->accel, &s->cluster, ROWS_L2, err);
}
