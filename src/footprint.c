/*
 * footprint.c - what the busiest device holds: one layer's attention and MLP weights, the LM
 * head's rows, the embedding, and the KV cache per position and at a context length. The one
 * home of the per-device weight and KV rules; the graph builder's MatMul and Attention nodes
 * carry the same bytes operation by operation (tests/test_graph.c checks they agree). A
 * pipeline stage holds its own layers and KV cache (pm_footprint_stage).
 *
 * May call: dtype.c, error.c, model.c, moe.c, plan.c, runtime.c, speculate.c.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

pm_status pm_footprint_compute(const pm_scenario *s, const pm_shard *shard, int64_t context_len,
                               pm_footprint *out, pm_error *err)
{
    return pm_footprint_compute_reads(s, shard, context_len, NULL, out, err);
}

pm_status pm_footprint_draft(const pm_scenario *s, int64_t context_len, double *weight_bytes,
                             double *kv_bytes, pm_error *err)
{
    *weight_bytes = *kv_bytes = 0.0;
    if (!pm_spec_active(s))
        return PM_OK;
    pm_scenario d;
    pm_spec_draft_scenario(s, &d);
    pm_footprint fp;
    pm_status st = pm_footprint_compute(&d, NULL, context_len, &fp, err);
    if (st != PM_OK)
        return st;
    *weight_bytes = fp.weight_bytes;
    *kv_bytes = fp.kv_bytes;
    if (s->spec.method == PM_SPEC_MTP) { /* the footprint of 2n layers less that of n */
        pm_footprint twice;
        d.model.layers *= 2;
        if ((st = pm_footprint_compute(&d, NULL, context_len, &twice, err)) != PM_OK)
            return st;
        *weight_bytes = twice.weight_bytes - fp.weight_bytes;
    }
    return PM_OK;
}

/* The MoE layers of a footprint whose dense parts out holds: the local routed experts, the
 * shared experts and the router (whole on every device) in place of the dense MLP; one expert
 * as the graph's routed nodes count it (a bias per output column, as in the dense MLP). The
 * experts read are a decode step's: reads where given (the estimate's decode plans), else at
 * its tokens (a speculating scenario's verify step, k + 1 a sequence). */
static pm_status moe_footprint(const pm_scenario *s, const pm_shard *shard,
                               const pm_moe_reads *reads, pm_footprint *out, pm_error *err)
{
    const pm_model *md = &s->model;
    const pm_workload *wl = &s->workload;
    const double ew = pm_weight_elem_bytes(wl), eu = pm_unquantised_weight_bytes(wl);
    const double h = md->hidden, eb = pm_bias_bytes(wl);
    const double mlp_in = md->gated_mlp ? 2.0 : 1.0;
    const double ex = shard->expert_cols, sc = shard->shared_cols;
    const bool bias = pm_model_role_has_bias(md, PM_ROLE_DOWN);
    const double shared =
        (mlp_in + 1.0) * h * sc * ew + (bias && sc > 0 ? (mlp_in * sc + h) * eb : 0.0);
    const double router = h * md->experts * eu;
    pm_moe_reads r;
    if (reads) {
        r = *reads;
    } else {
        const pm_status st =
            pm_moe_reads_compute(s, (double)wl->batch * pm_spec_verify_tokens(s), &r, err);
        if (st != PM_OK)
            return st;
    }
    out->moe_layers = pm_model_moe_layers(md);
    out->expert_weight_bytes =
        (mlp_in + 1.0) * h * ex * ew + (bias ? (mlp_in * ex + h) * eb : 0.0);
    out->moe_weight_bytes = shard->experts_local * out->expert_weight_bytes + shared + router;
    out->moe_layer_weight_bytes = out->attn_weight_bytes + out->moe_weight_bytes;
    out->experts_read_per_step = r.experts_read;
    out->moe_read_bytes = r.experts_read * out->expert_weight_bytes + shared + router;
    out->weight_bytes = (md->layers - out->moe_layers) * out->layer_weight_bytes +
                        out->moe_layers * out->moe_layer_weight_bytes + out->lm_head_bytes +
                        out->embedding_bytes;
    return PM_OK;
}

pm_status pm_footprint_compute_reads(const pm_scenario *s, const pm_shard *shard,
                                     int64_t context_len, const pm_moe_reads *reads,
                                     pm_footprint *out, pm_error *err)
{
    if (!s || !out || context_len < 0)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "bad argument to pm_footprint_compute");
    pm_shard own;
    if (!shard) {
        pm_status st = pm_shard_compute(s, &own, err);
        if (st != PM_OK)
            return st;
        shard = &own;
    }
    const pm_model *md = &s->model;
    const pm_workload *wl = &s->workload;
    /* ew: a linear layer's weight (int4: with its group's scale); eu: the embedding's, the LM
     * head's and the router's, which int4 checkpoints keep 16-bit (dtype.c). */
    const double ew = pm_weight_elem_bytes(wl), eu = pm_unquantised_weight_bytes(wl);
    const double ekv = pm_dtype_bytes(wl->kv_dtype);
    const double d = md->head_dim, h = md->hidden;
    memset(out, 0, sizeof *out);
    const double qkv_cols = (shard->q_heads + 2.0 * shard->kv_heads) * d;
    const double mlp_in = md->gated_mlp ? 2.0 : 1.0; /* gate and up, or up */
    /* Biases: one element per output column of a projection; O and Down are row-parallel, so
     * their bias (h) is whole on every device. */
    const double eb = pm_bias_bytes(wl);
    const double qkv_bias = pm_model_role_has_bias(md, PM_ROLE_QKV) ? qkv_cols * eb : 0.0;
    const double o_bias = pm_model_role_has_bias(md, PM_ROLE_O) ? h * eb : 0.0;
    const double mlp_bias = pm_model_role_has_bias(md, PM_ROLE_DOWN)
                                ? (mlp_in * shard->mlp_cols + h) * eb
                                : 0.0;
    out->qkv_weight_bytes = h * qkv_cols * ew + qkv_bias;
    out->attn_weight_bytes = out->qkv_weight_bytes + shard->q_heads * d * h * ew + o_bias;
    /* The sequences whose KV the busiest device holds: its attention rank's own under
     * data-parallel attention (plan.c), every one otherwise. */
    const double seqs = pm_plan_rank_sequences(s, wl->batch);
    out->kv_bytes_per_token = 2.0 * seqs * shard->kv_heads * d * ekv;
    if (md->kv_lora_rank > 0) {
        /* MLA: the down-projections (whole on every rank), the query's up-projection, the key
         * up-projection (what precedes the attention core in decode), then the value
         * up-projection and O; one latent per position. */
        const double n = shard->q_heads, r = md->kv_lora_rank, rope = md->qk_rope_head_dim;
        const double nope = md->qk_nope_head_dim, v = md->v_head_dim;
        const double q_cols = n * (nope + rope);
        const double down = md->q_lora_rank > 0 ? h * (md->q_lora_rank + r + rope) +
                                                      md->q_lora_rank * q_cols
                                                : h * (q_cols + r + rope);
        const double qkv_node_cols = md->q_lora_rank > 0 ? md->q_lora_rank + r + rope
                                                         : q_cols + r + rope;
        const double mla_bias =
            pm_model_role_has_bias(md, PM_ROLE_QKV) ? qkv_node_cols * eb : 0.0;
        out->qkv_weight_bytes = (down + n * nope * r) * ew + mla_bias;
        out->attn_weight_bytes = out->qkv_weight_bytes + (n * r * v + n * v * h) * ew + o_bias;
        out->kv_bytes_per_token = seqs * (r + rope) * ekv;
    }
    out->mlp_weight_bytes = (mlp_in + 1.0) * h * shard->mlp_cols * ew + mlp_bias;
    out->layer_weight_bytes = out->attn_weight_bytes + out->mlp_weight_bytes;
    out->lm_head_bytes = shard->vocab_cols * h * eu;
    /* The embedding is vocabulary-parallel like the LM head (Megatron's and vLLM's
     * VocabParallelEmbedding): each device holds its rows. */
    /* A learned position embedding (GPT-2, OPT) is whole on every device (vLLM's nn.Embedding). */
    out->embedding_bytes = (md->tied_embeddings ? 0.0 : shard->vocab_cols * h * eu) +
                           (double)md->learned_positions * h * eu;
    out->weight_bytes = md->layers * out->layer_weight_bytes + out->lm_head_bytes +
                        out->embedding_bytes;
    if (md->experts > 0) {
        const pm_status st = moe_footprint(s, shard, reads, out, err);
        if (st != PM_OK)
            return st;
    }
    out->local_layers = pm_model_local_layers(md);
    out->kv_bytes_global_layer =
        out->kv_bytes_per_token * pm_kv_held_tokens(md, false, context_len);
    out->kv_bytes_local_layer =
        out->local_layers ? out->kv_bytes_per_token * pm_kv_held_tokens(md, true, context_len)
                          : 0.0;
    out->kv_bytes = (md->layers - out->local_layers) * out->kv_bytes_global_layer +
                    out->local_layers * out->kv_bytes_local_layer;
    return PM_OK;
}

bool pm_footprint_fits_hbm(const pm_scenario *s, const pm_footprint *fp)
{
    return fp->weight_bytes + fp->kv_bytes <= pm_hbm_usable_bytes(s);
}

/* Whether the footprint at context c fits, and what it needs (weights and KV, bytes). */
static pm_status need_at(const pm_scenario *s, const pm_shard *shard, const pm_moe_reads *reads,
                         int64_t c, bool *fits, double *need, pm_error *err)
{
    pm_footprint fp;
    const pm_status st = pm_footprint_compute_reads(s, shard, c, reads, &fp, err);
    if (st == PM_OK) {
        *fits = pm_footprint_fits_hbm(s, &fp);
        if (need)
            *need = fp.weight_bytes + fp.kv_bytes;
    }
    return st;
}

/* Tests context c and narrows the bracket: *lo = c when it fits, *hi = c when not. */
static pm_status probe(const pm_scenario *s, const pm_shard *shard, const pm_moe_reads *reads,
                       int64_t c, int64_t *lo, int64_t *hi, bool *fits, pm_error *err)
{
    const pm_status st = need_at(s, shard, reads, c, fits, NULL, err);
    if (st == PM_OK)
        *(*fits ? lo : hi) = c;
    return st;
}

pm_status pm_footprint_max_context(const pm_scenario *s, const pm_shard *shard,
                                   const pm_moe_reads *reads, int64_t *out, pm_error *err)
{
    /* The footprint does not shrink as the context grows: each class of layer holds
     * min(context, window) positions or all of them, so it is affine in the context on each
     * side of the window. A guess from the affine piece the answer lies on, then a search from
     * it (doubling steps, then bisection) with the footprint rule itself deciding: exact
     * whatever the guess's rounding, in a handful of footprints. */
    pm_status st;
    bool fits;
    double need0, need1;
    if ((st = need_at(s, shard, reads, 0, &fits, &need0, err)) != PM_OK)
        return st;
    if (!fits) {
        *out = -1;
        return PM_OK;
    }
    if ((st = need_at(s, shard, reads, INT64_MAX, &fits, NULL, err)) != PM_OK)
        return st;
    if (fits) {
        *out = INT64_MAX; /* every layer's cache stops at its window */
        return PM_OK;
    }
    const pm_model *m = &s->model;
    const int64_t w = pm_model_local_layers(m) > 0 && m->sliding_window > 0 ? m->sliding_window
                                                                            : 0;
    const double usable = pm_hbm_usable_bytes(s);
    int64_t a = 0; /* the start of the affine piece */
    double need_a = need0;
    if (w > 0) {
        double need_w;
        if ((st = need_at(s, shard, reads, w, &fits, &need_w, err)) != PM_OK)
            return st;
        if (fits) {
            a = w;
            need_a = need_w;
        }
    }
    if ((st = need_at(s, shard, reads, a + 1, &fits, &need1, err)) != PM_OK)
        return st;
    const double slope = need1 - need_a, steps = slope > 0 ? floor((usable - need_a) / slope) : 0;
    int64_t g = a + (steps > 0 && steps < 9e18 - (double)a ? (int64_t)steps : 0);
    /* lo fits, hi does not: from the guess, steps of 1, 2, 4, ... towards the edge until one
     * crosses it, then bisection between the last two. */
    int64_t lo = 0, hi = INT64_MAX;
    if ((st = probe(s, shard, reads, g, &lo, &hi, &fits, err)) != PM_OK)
        return st;
    for (int64_t step = 1; step <= INT64_MAX / 4; step *= 2) {
        const bool room = step < hi - lo;
        const int64_t c = fits ? (room ? lo + step : hi) : (room ? hi - step : lo);
        bool f;
        if (c <= lo || c >= hi)
            break;
        if ((st = probe(s, shard, reads, c, &lo, &hi, &f, err)) != PM_OK)
            return st;
        if (f != fits)
            break; /* crossed */
    }
    while (hi - lo > 1)
        if ((st = probe(s, shard, reads, lo + (hi - lo) / 2, &lo, &hi, &fits, err)) != PM_OK)
            return st;
    *out = lo;
    return PM_OK;
}

/* s on devices devices: the expert-parallel degree ep when one was given (> 0), else experts
 * over every device when the scenario uses expert parallelism and the experts divide, else
 * tensor-parallel experts. */
static pm_scenario on_devices(const pm_scenario *s, int devices, int ep)
{
    pm_scenario t = *s;
    t.provenance = NULL;
    t.cluster.devices = devices;
    const bool moe = s->model.experts > 0;
    t.cluster.expert_parallel =
        ep > 0 ? ep
               : moe && pm_cluster_ep(&s->cluster) > 1 && s->model.experts % devices == 0 ? devices
                                                                                           : 1;
    /* Data-parallel attention needs every device an expert rank or the experts tensor parallel
     * over the group (plan.c): off where neither holds. */
    t.cluster.attention_data_parallel =
        s->cluster.attention_data_parallel && devices > 1 &&
        (t.cluster.expert_parallel == devices || t.cluster.expert_parallel <= 1);
    return t;
}

pm_status pm_footprint_row_compute(const pm_scenario *s, int devices, int ep,
                                   int64_t context_len, pm_footprint_row *out, pm_error *err)
{
    if (!s || !out || devices < 1 || devices > PM_MAX_DEVICES || ep < 0 || context_len < 0)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "NULL scenario or output, or a device count, EP degree or context out "
                       "of range");
    *out = (pm_footprint_row){0};
    pm_scenario t = on_devices(s, devices, ep);
    pm_shard sh;
    if (ep > 0) { /* a degree given is checked as the plan checks it (the heads have their
                     fallback below) */
        pm_scenario c = t;
        c.options.sharding = PM_SHARDING_IDEAL;
        const pm_status st = pm_shard_compute(&c, &sh, err);
        if (st != PM_OK)
            return st;
    }
    const bool ok = pm_shard_compute(&t, &sh, NULL) == PM_OK;
    if (!ok) {
        t.options.sharding = PM_SHARDING_IDEAL;
        pm_shard_compute(&t, &sh, NULL);
        sh.kv_heads = sh.kv_heads < 1 ? 1 : sh.kv_heads; /* a KV head cannot be split */
    }
    pm_footprint fp;
    const pm_status st = pm_footprint_compute(&t, &sh, context_len, &fp, err);
    if (st != PM_OK)
        return st;
    out->devices = devices;
    out->expert_parallel = pm_cluster_ep(&t.cluster);
    out->attn_weight_bytes = fp.attn_weight_bytes;
    out->kv_bytes = fp.local_layers < s->model.layers ? fp.kv_bytes_global_layer
                                                      : fp.kv_bytes_local_layer;
    out->mlp_weight_bytes = fp.mlp_weight_bytes;
    out->kv_local_bytes = fp.kv_bytes_local_layer;
    out->moe_weight_bytes = fp.moe_weight_bytes;
    out->moe_read_bytes = fp.moe_read_bytes;
    out->experts_read_per_step = fp.experts_read_per_step;
    out->ideal_split = !ok;
    return PM_OK;
}

void pm_footprint_stage(const pm_scenario *s, const pm_footprint *fp, const pm_pipeline *pl,
                        int i, double *weights, double *kv)
{
    const pm_model *m = &s->model;
    const int n = pl->layers[i];
    /* Stages hold one class of layer (pm_pipeline_plan refuses others). */
    const double layer = fp->moe_layers == m->layers && fp->moe_layers > 0
                             ? fp->moe_layer_weight_bytes
                             : fp->layer_weight_bytes;
    const double kv_layer = fp->local_layers == m->layers && fp->local_layers > 0
                                ? fp->kv_bytes_local_layer
                                : fp->kv_bytes_global_layer;
    double w = n * layer;
    if (i == 0) {
        w += fp->embedding_bytes;
        /* Tied embeddings: the first stage keeps its own copy of the rows the last one's LM
         * head holds (vLLM's first and last stages each load the matrix). */
        if (m->tied_embeddings && pl->stages > 1)
            w += fp->lm_head_bytes;
    }
    if (i == pl->stages - 1)
        w += fp->lm_head_bytes;
    *weights = w;
    *kv = n * kv_layer;
}
