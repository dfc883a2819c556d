/*
 * plan.c - the parallel plan: which devices hold which heads, KV heads, MLP columns, vocabulary
 * rows and experts. Today a tensor-parallel group of cluster.devices (Megatron: heads and
 * columns split, the busiest device modelled when a split is uneven, or an ideal fractional
 * split) with expert parallelism over cluster.expert_parallel ranks inside it; pm_shard is the
 * plan's one struct, read by the builder (build.c), the footprint and the estimate. Pipeline
 * stages and data-parallel replicas land here next (docs/architecture.md).
 *
 * May call: error.c, model.c.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

pm_status pm_plan_check_ep(const pm_scenario *s, pm_error *err)
{
    const pm_model *m = &s->model;
    const int p = s->cluster.devices, ep = pm_cluster_ep(&s->cluster);
    if (s->cluster.expert_parallel < 0)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.expert_parallel",
                       "must be >= 1, or 0 for 1 (got %d)", s->cluster.expert_parallel);
    if (ep > 1 && m->experts < 1)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.expert_parallel",
                       "expert parallelism (%d ranks) needs a mixture-of-experts model (%s has "
                       "no experts)",
                       ep, m->name);
    if (ep > 1 && pm_model_moe_layers(m) == 0)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.expert_parallel",
                       "expert parallelism (%d ranks) needs a layer with experts (none of %s's "
                       "%d layers has any: the first MoE layer, %d, or the MoE period leaves "
                       "every one dense)",
                       ep, m->name, m->layers, m->moe_first_layer);
    if (p % ep != 0)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.expert_parallel",
                       "must divide devices (got %d ranks, %d devices)", ep, p);
    if (m->experts > 0 && m->experts % ep != 0)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.expert_parallel",
                       "must divide the model's %d routed experts (got %d ranks)", m->experts,
                       ep);
    return PM_OK;
}

/* The MoE split: routed experts over the EP ranks, each expert's matrices over a rank's
 * devices; shared experts tensor parallel over every device without EP, whole on every device
 * with it (their output is added where the token lives, no reduction needed). */
static pm_status moe_shard(const pm_scenario *s, pm_shard *out, pm_error *err)
{
    const pm_model *m = &s->model;
    const int p = s->cluster.devices, ep = pm_cluster_ep(&s->cluster);
    out->ep = 1;
    out->moe_tp = p;
    pm_status st = pm_plan_check_ep(s, err);
    if (st != PM_OK || m->experts < 1)
        return st;
    const bool ideal = s->options.sharding == PM_SHARDING_IDEAL;
    const int tp = p / ep;
    out->ep = ep;
    out->moe_tp = tp;
    out->experts_local = (double)m->experts / ep;
    out->expert_cols = ideal ? (double)m->expert_intermediate / tp
                             : ceil((double)m->expert_intermediate / tp);
    const double shared = (double)m->shared_experts * m->shared_intermediate;
    out->shared_cols = ep > 1 ? shared : ideal ? shared / p : ceil(shared / p);
    return PM_OK;
}

pm_status pm_shard_compute(const pm_scenario *s, pm_shard *out, pm_error *err)
{
    if (!s || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL scenario or output");
    const pm_model *m = &s->model;
    const int p = s->cluster.devices;
    memset(out, 0, sizeof *out);
    if (p < 1)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.devices", "must be >= 1");
    pm_status st = moe_shard(s, out, err);
    if (st != PM_OK)
        return st;
    if (s->options.sharding == PM_SHARDING_IDEAL) {
        out->q_heads = (double)m->heads / p;
        out->kv_heads = (double)m->kv_heads / p;
        out->mlp_cols = (double)m->intermediate / p;
        out->vocab_cols = (double)m->vocab / p;
        if (m->kv_lora_rank > 0) {
            out->kv_heads = 1.0; /* the MLA latent is shared by every head: not split */
            out->kv_replicated = p > 1;
        }
        return PM_OK;
    }
    if (p > m->heads)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.devices",
                       "%d devices exceed the model's %d attention heads: use fewer devices or "
                       "\"sharding\": \"ideal\"",
                       p, m->heads);
    out->q_heads = (m->heads + p - 1) / p;
    if (p >= m->kv_heads) {
        out->kv_heads = 1;
        out->kv_replicated = p > m->kv_heads;
        /* Replication needs each KV head's query group to stay on devices holding it. */
        out->uneven = p % m->kv_heads != 0;
    } else {
        out->kv_heads = (m->kv_heads + p - 1) / p;
        out->uneven = m->kv_heads % p != 0;
    }
    if (m->kv_lora_rank > 0) {
        /* MLA: one latent per position, shared by every head, so every rank holds it whole. */
        out->kv_heads = 1;
        out->kv_replicated = p > 1;
        out->uneven = false;
    }
    out->uneven = out->uneven || m->heads % p != 0 || m->intermediate % p != 0 ||
                  (m->experts > 0 && m->expert_intermediate % out->moe_tp != 0);
    out->mlp_cols = ceil((double)m->intermediate / p);
    out->vocab_cols = ceil((double)m->vocab / p);
    return PM_OK;
}

int pm_cluster_ep(const pm_cluster *c)
{
    return c && c->expert_parallel > 1 ? c->expert_parallel : 1;
}
