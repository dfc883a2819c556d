/*
 * model.c - the model's own description, queried: which layers attend through a window or
 * block-sparsely, which carry a MoE block, which projections carry a bias, and the one home of
 * the window rules (the positions a step reads, a layer's cache holds, a prompt's causal
 * pairs). Questions about pm_model alone (a bias's element width is the workload's activation
 * type); no reader, plan or cost is called from here.
 *
 * May call: dtype.c.
 */
#include <math.h>
#include <stdint.h>

#include "internal.h"

bool pm_model_layer_is_local(const pm_model *m, int layer)
{
    if (!m || (m->sliding_window < 1 && m->sparse_block < 1) || layer < 0)
        return false;
    const int period = m->window_period >= 1 && m->window_period <= 64 ? m->window_period : 1;
    if (m->local_mask == 0)
        return true;
    return (m->local_mask >> (layer % period)) & 1u;
}

int pm_model_local_layers(const pm_model *m)
{
    if (!m || (m->sliding_window < 1 && m->sparse_block < 1))
        return 0;
    const int period = m->window_period >= 1 && m->window_period <= 64 ? m->window_period : 1;
    int per_period = 0, rest = 0;
    for (int i = 0; i < period; i++) {
        const bool local = pm_model_layer_is_local(m, i);
        per_period += local;
        rest += local && i < m->layers % period;
    }
    return (m->layers / period) * per_period + rest;
}

bool pm_model_role_has_bias(const pm_model *m, pm_node_role role)
{
    switch (role) {
    case PM_ROLE_QKV: return m->qkv_bias;
    case PM_ROLE_O: return m->o_bias;
    case PM_ROLE_GATE:
    case PM_ROLE_UP:
    case PM_ROLE_DOWN: return m->mlp_bias;
    default: return false;
    }
}

/* Block-sparse layers: W, the positions the local blocks span, and the shares of the positions
 * beyond them that are read: by one query head (*score, 1 / stride: one block in every stride)
 * and from one KV head's cache serving `group` query heads (the union of their vertical blocks:
 * heads h, h + 1, ... shifted by step blocks each cover min(group, stride / gcd(step, stride))
 * of every stride blocks; one with a homogeneous pattern). Counted at token granularity: the
 * blocks a head reads are their average over where the context ends in its last block. */
static double sparse_shares(const pm_model *m, double group, double *kv)
{
    const int v = m->sparse_vert_stride;
    int step = m->sparse_homo_head ? 0 : v / m->heads;
    if (!m->sparse_homo_head && step < 1)
        step = 1;
    int a = step % v, b = v; /* gcd(step, v), with gcd(0, v) = v */
    while (a > 0) {
        const int r = b % a;
        b = a;
        a = r;
    }
    const double period = (double)(v / b), g = group < 1.0 ? 1.0 : group;
    *kv = (g < period ? g : period) / v;
    return 1.0 / v;
}

static double sparse_span(const pm_model *m)
{
    return (double)m->sparse_block * m->sparse_local_blocks;
}

double pm_kv_tokens(const pm_model *m, bool local, double group, int64_t ctx, double *score)
{
    const double c = (double)ctx;
    double kv = c;
    if (local && m->sparse_block > 0) {
        const double w = sparse_span(m);
        double fkv;
        const double fq = sparse_shares(m, group, &fkv);
        if (c > w) {
            kv = w + fkv * (c - w);
            if (score)
                *score = w + fq * (c - w);
            return kv;
        }
    } else if (local && m->sliding_window > 0) {
        kv = m->chunked_attention ? (double)(ctx % m->sliding_window) /* its own chunk */
             : c < m->sliding_window ? c
                                     : (double)m->sliding_window;
    }
    if (score)
        *score = kv;
    return kv;
}

bool pm_kv_tokens_affine(const pm_model *m, bool local, int64_t a, int64_t b)
{
    const int64_t w = local ? pm_local_kink(m) : 0;
    if (w < 1)
        return true;
    if (m->sparse_block < 1 && m->chunked_attention)
        return a / w == b / w;
    return b <= w || a >= w;
}

int64_t pm_local_kink(const pm_model *m)
{
    if (pm_model_local_layers(m) == 0)
        return 0;
    return m->sparse_block > 0 ? (int64_t)sparse_span(m) : m->sliding_window;
}

double pm_kv_held_tokens(const pm_model *m, bool local, int64_t ctx)
{
    const double c = (double)ctx;
    if (!local || m->sliding_window < 1)
        return c; /* a block-sparse layer's cache holds every position */
    return c < m->sliding_window ? c : (double)m->sliding_window; /* the window, or a chunk */
}

double pm_causal_pairs(const pm_model *m, bool local, int64_t n)
{
    const double sn = (double)n;
    if (local && m->sparse_block > 0 && sn > sparse_span(m)) {
        /* Each query past the local span reads it and 1 / stride of the positions before. */
        const double w = sparse_span(m), far = sn - w;
        double fkv;
        const double fq = sparse_shares(m, 1.0, &fkv);
        return w * w / 2.0 + far * w + fq * far * far / 2.0;
    }
    if (!local || m->sliding_window < 1 || n <= m->sliding_window)
        return sn * sn / 2.0;
    const double w = m->sliding_window;
    if (m->chunked_attention) {
        const double rest = (double)(n % m->sliding_window);
        return (double)(n / m->sliding_window) * w * w / 2.0 + rest * rest / 2.0;
    }
    return w * w / 2.0 + (sn - w) * w;
}

double pm_bias_bytes(const pm_workload *w)
{
    /* Biases are added to the GEMM's output, in the activations' type (int8 GEMMs add them
     * after dequantisation). */
    return pm_dtype_bytes(w->act_dtype);
}

bool pm_model_layer_is_moe(const pm_model *m, int layer)
{
    if (!m || m->experts < 1 || layer < 0 || layer < m->moe_first_layer)
        return false;
    const int period = m->moe_period >= 1 ? m->moe_period : 1;
    return layer % period == m->moe_phase % period;
}

int pm_model_moe_layers(const pm_model *m)
{
    if (!m || m->experts < 1)
        return 0;
    const int period = m->moe_period >= 1 ? m->moe_period : 1;
    const int phase = m->moe_phase % period;
    /* Layers l in [first, layers) with l % period == phase. */
    const int first = m->moe_first_layer > 0 ? m->moe_first_layer : 0;
    if (first >= m->layers)
        return 0;
    const int lo = first + ((phase - first % period) % period + period) % period;
    return lo >= m->layers ? 0 : (m->layers - 1 - lo) / period + 1;
}
