/*
 * plan.c - the parallel plan: which devices hold which heads, KV heads, MLP columns, vocabulary
 * rows and experts. Today a tensor-parallel group of cluster.devices (Megatron: heads and
 * columns split, the busiest device modelled when a split is uneven, or an ideal fractional
 * split) with expert parallelism over cluster.expert_parallel ranks inside it; pm_shard is the
 * plan's one struct, read by the builder (build.c), the footprint and the estimate. Each
 * tensor-parallel group is one pipeline stage of a replica, and the deployment data_parallel
 * replicas (issue 44): pm_pipeline_plan splits the layers over the stages, places the stages on
 * the nodes (a stage's group inside a node first, stages packed into nodes in order, each
 * replica from a fresh node when it spans several) and says which boundaries cross nodes.
 * With cluster.attention_data_parallel the group's attention is data parallel instead: each
 * device its own sequences (pm_plan_rank_sequences), its weights whole, the experts one rank a
 * device or tensor parallel over the group, a dense layer's MLP tensor parallel over the group.
 *
 * May call: error.c, model.c.
 */
#include <limits.h>
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

pm_status pm_plan_check_attention_dp(const pm_scenario *s, pm_error *err)
{
    const pm_cluster *c = &s->cluster;
    const pm_model *m = &s->model;
    if (!c->attention_data_parallel)
        return PM_OK;
    const char *key = "$.cluster.attention_data_parallel";
    if (m->experts < 1 || pm_model_moe_layers(m) == 0)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, key,
                       "data-parallel attention with expert-parallel MLPs needs a "
                       "mixture-of-experts model (%s has no MoE layer): a dense model's MLPs "
                       "have no experts to split",
                       m->name);
    if (c->devices < 2)
        return pm_fail(err, PM_ERR_RANGE, NULL, key,
                       "needs a group of at least 2 devices to split the sequences over (got "
                       "%d)",
                       c->devices);
    if (pm_cluster_ep(c) != c->devices && pm_cluster_ep(c) != 1)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.expert_parallel",
                       "with attention_data_parallel the experts are either one expert-parallel "
                       "rank a device (expert_parallel = devices, %d) or tensor parallel over "
                       "the group (expert_parallel 1); got %d, which is not modelled",
                       c->devices, pm_cluster_ep(c));
    if (c->sequence_parallel)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, key,
                       "data-parallel attention with sequence parallelism is not modelled");
    if (pm_cluster_pp(c) > 1)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, key,
                       "data-parallel attention over %d pipeline stages is not modelled (the "
                       "stage evaluator's micro-batches are not split over attention ranks)",
                       pm_cluster_pp(c));
    return PM_OK;
}

int pm_plan_attn_ranks(const pm_scenario *s)
{
    return s->cluster.attention_data_parallel && s->cluster.devices > 1 ? s->cluster.devices
                                                                        : 1;
}

double pm_plan_rank_sequences(const pm_scenario *s, double sequences)
{
    const int r = pm_plan_attn_ranks(s);
    if (r <= 1)
        return sequences;
    if (s->options.sharding == PM_SHARDING_IDEAL)
        return sequences / r;
    /* Whole sequences: the busiest rank's ceil(n / r); a mean below one (a served step's
     * fractional count) lands on one rank whole, so that rank holds n. */
    const double busiest = ceil(sequences / r);
    return busiest < sequences ? busiest : sequences;
}

/* Data-parallel attention: every non-expert weight whole on every device; the experts each
 * whole on its rank (ep = devices) or tensor parallel over the group (ep 1: every expert's
 * columns split, the shared experts' too; moe_shard's split), the two checked by
 * pm_plan_check_attention_dp; a dense layer's MLP tensor parallel over the group (SGLang's FULL
 * mode: the ranks' tokens gathered for it), its columns split as a tensor-parallel group's. */
static void attention_dp_shard(const pm_scenario *s, pm_shard *out)
{
    const pm_model *m = &s->model;
    const double p = s->cluster.devices;
    out->attn_dp = s->cluster.devices;
    out->q_heads = m->heads;
    out->kv_heads = m->kv_lora_rank > 0 ? 1.0 : m->kv_heads;
    out->kv_replicated = false;
    out->mlp_cols = s->options.sharding == PM_SHARDING_IDEAL ? m->intermediate / p
                                                             : ceil(m->intermediate / p);
    out->uneven = pm_model_moe_layers(m) != m->layers && m->intermediate % s->cluster.devices != 0;
    out->vocab_cols = m->vocab;
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
    if (st != PM_OK || (st = pm_plan_check_attention_dp(s, err)) != PM_OK)
        return st;
    out->attn_dp = 1;
    if (s->cluster.attention_data_parallel) {
        attention_dp_shard(s, out);
        return PM_OK;
    }
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

int pm_cluster_pp(const pm_cluster *c)
{
    return c->pipeline_parallel > 1 ? c->pipeline_parallel : 1;
}

int pm_cluster_dp(const pm_cluster *c)
{
    return c->data_parallel > 1 ? c->data_parallel : 1;
}

int pm_cluster_total_devices(const pm_cluster *c)
{
    const double n = (double)c->devices * pm_cluster_pp(c) * pm_cluster_dp(c);
    return n <= (double)INT_MAX ? (int)n : INT_MAX;
}

int pm_cluster_node_devices(const pm_cluster *c)
{
    if (c->topology == PM_TOPO_HIERARCHICAL && c->devices_per_node > 0)
        return c->devices_per_node;
    return c->max_devices > 0 ? c->max_devices : c->devices;
}

void pm_pipeline_stage_layers(const pm_cluster *c, int layers, int *out)
{
    const int pp = pm_cluster_pp(c);
    if (pp > 1 && c->stage_layers[0] > 0) {
        for (int i = 0; i < pp; i++)
            out[i] = c->stage_layers[i];
        return;
    }
    for (int i = 0; i < pp; i++)
        out[i] = layers / pp + (i < layers % pp ? 1 : 0);
}

void pm_pipeline_split_last(pm_cluster *c, int layers, int last)
{
    const int pp = pm_cluster_pp(c), rest = layers - last;
    for (int i = 0; i < pp - 1; i++)
        c->stage_layers[i] = rest / (pp - 1) + (i < rest % (pp - 1) ? 1 : 0);
    c->stage_layers[pp - 1] = last;
    if (pp < PM_MAX_STAGES)
        c->stage_layers[pp] = 0;
}

/* Whether every layer of m is of one class (attention and MLP): the stage evaluator
 * (step_plan.c's pm_step_plan_stage_eval) counts a stage's layers as copies of one. */
static bool one_layer_class(const pm_model *m)
{
    const int local = pm_model_local_layers(m), moe = pm_model_moe_layers(m);
    return (local == 0 || local == m->layers) && (moe == 0 || moe == m->layers);
}

/* The plan's counts in range: stages, replicas, nodes, and the devices they make. */
static pm_status check_plan_counts(const pm_cluster *c, pm_error *err)
{
    if (c->pipeline_parallel < 0 || c->pipeline_parallel > PM_MAX_STAGES)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.pipeline_parallel",
                       "must be in [1, %d], or 0 for 1 (got %d)", PM_MAX_STAGES,
                       c->pipeline_parallel);
    if (c->data_parallel < 0 || c->data_parallel > PM_MAX_DEVICES)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.data_parallel",
                       "must be in [1, %d], or 0 for 1 (got %d)", PM_MAX_DEVICES,
                       c->data_parallel);
    if (c->nodes < 0)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.nodes",
                       "must be >= 1, or 0 for as many as the plan needs (got %d)", c->nodes);
    const int pp = pm_cluster_pp(c), dp = pm_cluster_dp(c), tp = c->devices;
    if ((double)tp * pp * dp > PM_MAX_DEVICES)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.data_parallel",
                       "TP x PP x DP must be at most %d devices (got %d x %d x %d)",
                       PM_MAX_DEVICES, tp, pp, dp);
    return PM_OK;
}

/* The stages' layers: at least one each, pipeline_layers (when given) one count per stage
 * summing to the model's, one class of layer over several stages; each stage's first layer and
 * count into out. */
static pm_status plan_stage_layers(const pm_cluster *c, const pm_model *m, pm_pipeline *out,
                                   pm_error *err)
{
    const int pp = out->stages;
    if (pp > m->layers)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.pipeline_parallel",
                       "%d stages exceed the model's %d layers (each stage holds at least one)",
                       pp, m->layers);
    if (pp == 1 && c->stage_layers[0] > 0 && c->stage_layers[0] != m->layers)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.pipeline_layers",
                       "one stage holds all %d layers (got %d)", m->layers, c->stage_layers[0]);
    if (pp > 1 && c->stage_layers[0] > 0) {
        long sum = 0;
        int given = 0;
        for (int i = 0; i < PM_MAX_STAGES && c->stage_layers[i] > 0; i++, given++)
            sum += c->stage_layers[i];
        if (given != pp || sum != m->layers)
            return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.pipeline_layers",
                           "must give the layers of each of the %d stages, each >= 1, summing "
                           "to the model's %d layers (got %d stages, %ld layers)",
                           pp, m->layers, given, sum);
    }
    if (pp > 1 && !one_layer_class(m))
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.cluster.pipeline_parallel",
                       "pipeline stages over a model whose layers are of several classes "
                       "(%s: %d windowed and %d MoE layers of %d) are not modelled: the stage "
                       "evaluator counts one class of layer",
                       m->name, pm_model_local_layers(m), pm_model_moe_layers(m), m->layers);
    pm_pipeline_stage_layers(c, m->layers, out->layers);
    for (int i = 0, first = 0; i < pp; i++) {
        out->first[i] = first;
        first += out->layers[i];
    }
    return PM_OK;
}

/* Micro-batches: as many as the stages (vLLM's virtual engines, aiconfigurator's M = PP)
 * unless given, the batch split evenly, the largest micro-batch costed (ceil). */
static pm_status plan_micro_batches(const pm_cluster *c, int batch, pm_pipeline *out,
                                    pm_error *err)
{
    const int pp = out->stages, b = batch;
    if (c->micro_batches < 0 || c->micro_batches > b)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.micro_batches",
                       "must be in [1, batch = %d], or 0 for min(stages, batch) (got %d)", b,
                       c->micro_batches);
    if (c->micro_batches > 1 && pp == 1)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.micro_batches",
                       "%d micro-batches need pipeline stages (pipeline_parallel is 1: one "
                       "stage runs the batch as one step)",
                       c->micro_batches);
    out->micro_batches = c->micro_batches > 0 ? c->micro_batches : pp < b ? pp : b;
    out->micro_batch = (b + out->micro_batches - 1) / out->micro_batches;
    return PM_OK;
}

/* Placement: the nodes the replicas take and which stage boundaries cross nodes (into out),
 * refused when they cross without an inter-node link or need more nodes than the cluster's. */
static pm_status plan_placement(const pm_cluster *c, pm_pipeline *out, pm_error *err)
{
    const int pp = out->stages, dp = out->replicas, tp = c->devices;
    const int node = pm_cluster_node_devices(c);
    int nodes;
    if (tp > node) { /* a stage spans tp / node nodes: every boundary crosses nodes */
        for (int i = 0; i < pp; i++)
            out->inter_node[i] = pp > 1;
        nodes = dp * pp * ((tp + node - 1) / node);
    } else {
        const int k = node / tp; /* stages per node */
        if (pp <= k) {
            const int per_node = k / pp; /* whole replicas per node */
            nodes = (dp + per_node - 1) / per_node;
        } else {
            for (int i = 0; i + 1 < pp; i++)
                out->inter_node[i] = (i + 1) % k == 0;
            out->inter_node[pp - 1] = true; /* the returned token: last node to first */
            nodes = dp * ((pp + k - 1) / k);
        }
    }
    out->nodes = nodes;
    bool crosses = false;
    for (int i = 0; i < pp; i++)
        crosses = crosses || out->inter_node[i];
    if (crosses && !(c->inter_node_bandwidth_bytes_per_s > 0))
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.inter_node_bandwidth_Gbps",
                       "%d stages of %d devices need %d-device nodes joined by an inter-node "
                       "link, which cluster %s does not give (inter_node_bandwidth_Gbps, "
                       "inter_node_latency_us; e.g. hgx-h100-ib-ndr)",
                       pp, tp, node, c->name[0] ? c->name : "(inline)");
    if (c->nodes > 0 && nodes > c->nodes)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.nodes",
                       "the plan TP %d x PP %d x DP %d needs %d nodes of %d devices; the "
                       "cluster has %d",
                       tp, pp, dp, nodes, node, c->nodes);
    return PM_OK;
}

pm_status pm_pipeline_plan(const pm_scenario *s, pm_pipeline *out, pm_error *err)
{
    const pm_cluster *c = &s->cluster;
    memset(out, 0, sizeof *out);
    pm_status st = check_plan_counts(c, err);
    if (st != PM_OK)
        return st;
    out->stages = pm_cluster_pp(c);
    out->replicas = pm_cluster_dp(c);
    if ((st = plan_stage_layers(c, &s->model, out, err)) != PM_OK ||
        (st = plan_micro_batches(c, s->workload.batch, out, err)) != PM_OK)
        return st;
    return plan_placement(c, out, err);
}

void pm_pipeline_micro_scenario(const pm_scenario *s, const pm_pipeline *pl, pm_scenario *mb)
{
    *mb = *s;
    mb->provenance = NULL;
    mb->workload.batch = pl->micro_batch;
    if (mb->workload.distinct_sequences > pl->micro_batch)
        mb->workload.distinct_sequences = pl->micro_batch;
}

double pm_stage_recv_bytes(const pm_pipeline *pl, int i, double act_bytes, double tokens,
                           double returned, bool *inter)
{
    const int P = pl->stages;
    *inter = P > 1 && pl->inter_node[(i + P - 1) % P];
    if (P == 1)
        return 0.0;
    return i > 0 ? tokens * act_bytes : returned * PM_TOKEN_ID_BYTES;
}

pm_status pm_plan_refuse_stages(const pm_scenario *s, const char *what, pm_error *err)
{
    if (pm_cluster_pp(&s->cluster) > 1)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.cluster.pipeline_parallel",
                       "%s of a plan of %d pipeline stages is not modelled (the estimate, "
                       "`run`, is): use pipeline_parallel 1",
                       what, pm_cluster_pp(&s->cluster));
    return PM_OK;
}

pm_status pm_plan_refuse_replicas(const pm_scenario *s, const char *what, pm_error *err)
{
    if (pm_cluster_dp(&s->cluster) > 1)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.cluster.data_parallel",
                       "%s of %d data-parallel replicas is not modelled (its totals would be "
                       "one replica's; the estimate, `run`, scales them): use data_parallel 1",
                       what, pm_cluster_dp(&s->cluster));
    return PM_OK;
}

pm_status pm_plan_refuse_attention_dp(const pm_scenario *s, const char *what, pm_error *err)
{
    if (pm_plan_attn_ranks(s) > 1)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.cluster.attention_data_parallel",
                       "%s under data-parallel attention is not modelled (the pools' KV "
                       "transfer takes a tensor-parallel group's KV split; the estimate, "
                       "`run`, and `serve` are): use attention_data_parallel false",
                       what);
    return PM_OK;
}
