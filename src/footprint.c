/*
 * footprint.c - what the busiest device holds: one layer's attention and MLP weights, the LM
 * head's rows, the embedding, and the KV cache per position and at a context length. The one
 * home of the per-device weight and KV rules; the graph builder's MatMul and Attention nodes
 * carry the same bytes operation by operation (tests/test_graph.c checks they agree).
 */
#include <string.h>

#include "internal.h"

pm_status pm_footprint_compute(const pm_scenario *s, const pm_shard *shard, int64_t context_len,
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
    const double ew = pm_dtype_bytes(wl->weight_dtype), ekv = pm_dtype_bytes(wl->kv_dtype);
    const double d = md->head_dim, h = md->hidden;
    memset(out, 0, sizeof *out);
    out->qkv_weight_bytes = h * (shard->q_heads + 2.0 * shard->kv_heads) * d * ew;
    out->attn_weight_bytes = out->qkv_weight_bytes + shard->q_heads * d * h * ew;
    out->mlp_weight_bytes = (md->gated_mlp ? 3.0 : 2.0) * h * shard->mlp_cols * ew;
    out->layer_weight_bytes = out->attn_weight_bytes + out->mlp_weight_bytes;
    out->lm_head_bytes = shard->vocab_cols * h * ew;
    out->embedding_bytes = md->tied_embeddings ? 0.0 : (double)md->vocab * h * ew;
    out->weight_bytes = md->layers * out->layer_weight_bytes + out->lm_head_bytes +
                        out->embedding_bytes;
    out->kv_bytes_per_token = 2.0 * wl->batch * shard->kv_heads * d * ekv;
    out->kv_bytes = md->layers * out->kv_bytes_per_token * (double)context_len;
    return PM_OK;
}
