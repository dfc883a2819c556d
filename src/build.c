/*
 * build.c - the graph builder (DESIGN.md section 3): the per-device decode and prefill graphs
 * of a tensor-parallel (Megatron) decoder under the parallel plan (plan.c), for one step
 * (the phase, the batch, the context), with the fused baseline's GEMM+allreduce nodes when
 * asked; and the layer template the fast evaluator (step_plan.c) costs, made by the same
 * functions so that the two paths cannot disagree on a node.
 *
 * Sequence parallelism (pm_cluster.sequence_parallel, Megatron's): each allreduce becomes a
 * reduce-scatter of the same message (the sum, each rank keeping 1/p of the tokens), the norm
 * after it runs on those ceil(tokens / p) tokens, and an all-gather of the normed tokens
 * precedes the next column-parallel GEMM (the QKV, the MLP's input projections, the LM head).
 * Tokens that do not divide by p are padded to the next multiple: the collectives carry
 * p ceil(tokens / p) rows (NCCL's reduce-scatter and all-gather take equal shares).
 *
 * May call: dtype.c, error.c, graph.c, model.c, moe.c, plan.c, runtime.c, step.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

typedef struct build_ctx {
    pm_graph *g;        /* NULL: nodes go to arr, without names or edges (the fast path) */
    pm_node *arr;
    int n_arr, cap_arr;
    const pm_scenario *s;
    pm_shard sh;
    double rows;        /* tokens per step: b (decode) or b * s_prefill (the step's tokens) */
    double seqs;        /* sequences the step serves (the step's) */
    const pm_step *step; /* the step built (its parts, for a mixed step's attention): the
                            busiest attention rank's under data-parallel attention (rank) */
    pm_step rank;
    double ctx;         /* cached tokens read by attention (decode) */
    pm_phase phase;
    pm_dtype cdt;       /* compute datatype */
    double ew, ekv, ea, er; /* bytes per element (er: the allreduce payload) */
    int prev;           /* last main-stream node */
    bool fused;         /* O and Down fused with the following allreduce */
    bool act_quant;     /* a quant node before each fp8 linear (runtime.c, pm_fp8_act_quant) */
    pm_moe_reads moe;   /* MoE: the expert reads at this step's tokens (moe.c) */
    pm_status st;
    pm_node scratch;
} build_ctx;

static void name_node(const build_ctx *b, pm_node *n, int layer, const char *what)
{
    if (!b->g)
        return; /* the fast path never prints names */
    if (layer >= 0)
        snprintf(n->name, sizeof n->name, "L%d.%s", layer, what);
    else
        snprintf(n->name, sizeof n->name, "%s", what);
}

/* A new main-stream node, zeroed but for its identity, written in place (the fast path builds
 * templates for every evaluation: no copies); node_commit appends it after the previous one.
 * After a failure both work on a scratch node. */
static pm_node *node_new(build_ctx *b, pm_node_kind kind, pm_node_role role, int layer,
                         const char *what)
{
    pm_node *n = &b->scratch;
    if (b->st != PM_OK)
        return n;
    if (!b->g) {
        if (b->n_arr >= b->cap_arr) {
            b->st = PM_ERR_INCONSISTENT;
            return n;
        }
        n = &b->arr[b->n_arr];
    } else {
        pm_graph *g = b->g;
        if (g->n_nodes == g->cap_nodes &&
            (b->st = pm_graph_reserve(g, g->cap_nodes ? g->cap_nodes * 2 : 64, g->cap_edges)) !=
                PM_OK)
            return n;
        n = &g->nodes[g->n_nodes];
    }
    if (b->g) {
        memset(n, 0, sizeof *n);
    } else {
        /* Field by field: memset of a node compiles to "rep stosb", whose start-up costs more
         * than the template's arithmetic on some CPUs. */
        n->name[0] = '\0';
        n->flop = n->act_bytes = n->weight_bytes = n->kv_bytes = n->l2_bytes = 0.0;
        n->comm_bytes = n->m = n->k = n->n = n->window_bytes = 0.0;
        n->kv_strided = n->kv_paged = n->routed = n->inter_node = false;
        n->chunks = 0;
    }
    n->kind = kind;
    n->role = role;
    n->layer = layer;
    n->dtype = b->cdt;
    n->stream = PM_STREAM_MAIN;
    n->prefetch = n->consumer = n->trigger = n->overflow = -1;
    name_node(b, n, layer, what);
    return n;
}

static void node_commit(build_ctx *b)
{
    if (b->st != PM_OK)
        return;
    if (!b->g) {
        b->prev = b->n_arr++;
        return;
    }
    const int idx = (int)b->g->n_nodes++;
    if (b->prev >= 0)
        b->st = pm_graph_add_edge(b->g, b->prev, idx, PM_EDGE_DATA);
    b->prev = idx;
}

/* The linear layers whose input the engine quantises (runtime.c, pm_fp8_act_quant): each
 * projection's, once for a gated MLP's gate and up (one merged linear in the engines), not the
 * router's or the LM head's (left in 16 bits), nor MLA's absorbed per-head K_UP and V_UP
 * (batched 16-bit products in vLLM's MLA). */
static bool act_quant_before(const build_ctx *b, pm_node_role role)
{
    switch (role) {
    case PM_ROLE_QKV: case PM_ROLE_Q_UP: case PM_ROLE_O: case PM_ROLE_GATE: case PM_ROLE_DOWN:
    case PM_ROLE_SHARED_GATE: case PM_ROLE_SHARED_DOWN: case PM_ROLE_EXPERT_GATE:
    case PM_ROLE_EXPERT_DOWN:
        return true;
    case PM_ROLE_UP: case PM_ROLE_SHARED_UP: case PM_ROLE_EXPERT_UP:
        return !b->s->model.gated_mlp;
    default:
        return false;
    }
}

/* The fp8 quantisation of a linear's input (vLLM's scaled_fp8_quant): rows x k 16-bit values
 * read, as many fp8 values and one fp32 scale per row written; 2 flop a value (the row's
 * absolute maximum, the scaling). Memory-bound: cost.c's roofline plus the launch. */
static void add_act_quant(build_ctx *b, pm_node_role role, int layer, double rows, double k)
{
    if (!b->act_quant || !act_quant_before(b, role))
        return;
    pm_node *n = node_new(b, PM_NODE_ELEMENTWISE, PM_ROLE_ACT_QUANT, layer, "Quant.fp8");
    n->flop = 2.0 * rows * k;
    n->act_bytes = rows * k * (pm_dtype_bytes(PM_DTYPE_BF16) + b->ea) + rows * 4.0;
    node_commit(b);
}

static void add_matmul(build_ctx *b, pm_node_role role, int layer, const char *what, double k,
                       double n_cols)
{
    add_act_quant(b, role, layer, b->rows, k);
    pm_node *n = node_new(b, PM_NODE_MATMUL, role, layer, what);
    n->m = b->rows;
    n->k = k;
    n->n = n_cols;
    n->flop = 2.0 * b->rows * k * n_cols;
    n->weight_bytes = k * n_cols * pm_role_weight_bytes(&b->s->workload, role);
    n->act_bytes = (b->rows * k + b->rows * n_cols) * b->ea;
    if (pm_model_role_has_bias(&b->s->model, role)) {
        /* One bias per output column, added to every row; read like the weights. */
        n->flop += b->rows * n_cols;
        n->weight_bytes += n_cols * pm_bias_bytes(&b->s->workload);
    }
    node_commit(b);
}

static void add_vector(build_ctx *b, pm_node_role role, int layer, pm_node_kind kind,
                       const char *what, double elems, double flop_per_elem, double passes)
{
    pm_node *n = node_new(b, kind, role, layer, what);
    n->flop = flop_per_elem * elems;
    n->act_bytes = passes * elems * b->ea;
    node_commit(b);
}

/* Sequence parallelism is on and has a group to split over. */
static bool sp_on(const build_ctx *b)
{
    return b->s->cluster.sequence_parallel && b->s->cluster.devices > 1;
}

/* The tokens of a rank under sequence parallelism (the busiest rank's): ceil(rows / p). */
static double sp_rows(const build_ctx *b, double rows)
{
    return ceil(rows / b->s->cluster.devices);
}

/* The rows a norm runs on: its rank's share of the step's under sequence parallelism. */
static double norm_rows(const build_ctx *b)
{
    return sp_on(b) ? sp_rows(b, b->rows) : b->rows;
}

/* A reduce-scatter or an all-gather over the group of rank_rows tokens of the hidden state a
 * rank (every rank's share padded to rank_rows: NCCL's collectives take equal shares), in
 * dtype. */
static void add_group_collective(build_ctx *b, pm_node_kind kind, pm_node_role role, int layer,
                                 const char *what, double rank_rows, pm_dtype dtype)
{
    pm_node *n = node_new(b, kind, role, layer, what);
    n->dtype = dtype;
    n->comm_bytes = rank_rows * b->s->cluster.devices * b->s->model.hidden *
                    pm_dtype_bytes(dtype);
    node_commit(b);
}

/* A reduce-scatter or an all-gather of rows tokens of the hidden state (padded to a multiple of
 * the ranks), elem_bytes each. */
static void add_sp_collective(build_ctx *b, pm_node_kind kind, pm_node_role role, int layer,
                              const char *what, double rows, pm_dtype dtype)
{
    add_group_collective(b, kind, role, layer, what, sp_rows(b, rows), dtype);
}

/* The all-gather before a column-parallel GEMM under sequence parallelism (nothing without):
 * the normed activations, in their datatype. */
static void add_all_gather(build_ctx *b, pm_node_role role, int layer, const char *what,
                           double rows)
{
    if (sp_on(b))
        add_sp_collective(b, PM_NODE_ALL_GATHER, role, layer, what, rows,
                          b->s->workload.act_dtype);
}

/* The devices the attention's and the dense MLP's outputs are allreduced over: the group, or
 * one under data-parallel attention (each rank computes its own tokens whole; a dense MLP's
 * sums are reduce-scattered instead, add_gathered_mlp). */
static int tp_ranks(const build_ctx *b)
{
    return b->sh.attn_dp > 1 ? 1 : b->s->cluster.devices;
}

static void add_allreduce(build_ctx *b, pm_node_role role, int layer, const char *what)
{
    if (tp_ranks(b) <= 1)
        return;
    pm_node *n = node_new(b, PM_NODE_ALLREDUCE, role, layer, what);
    n->dtype = pm_allreduce_dtype(&b->s->workload);
    n->comm_bytes = b->rows * b->s->model.hidden * b->er;
    node_commit(b);
}

/* The fused baseline's node: a MatMul that pipelines its output into the allreduce of
 * comm_bytes in chunks. */
static void fuse(pm_node *mm, double comm_bytes, int chunks)
{
    mm->kind = PM_NODE_FUSED_MATMUL_ALLREDUCE;
    mm->comm_bytes = comm_bytes;
    mm->chunks = chunks;
}

static void allreduce_after(build_ctx *b, pm_node_role ar_role, int layer, const char *ar);

/* The projection before an allreduce: fused with it in the fused baseline. */
static void add_matmul_allreduce(build_ctx *b, pm_node_role role, pm_node_role ar_role,
                                 int layer, const char *what, const char *ar, double k,
                                 double n_cols)
{
    add_matmul(b, role, layer, what, k, n_cols);
    allreduce_after(b, ar_role, layer, ar);
}

/* The allreduce of the MatMul just added: fused with it in the fused baseline. */
static void allreduce_after(build_ctx *b, pm_node_role ar_role, int layer, const char *ar)
{
    if (sp_on(b)) {
        /* The reduce-scatter in the reduction's datatype; the fused baseline fuses only
         * allreduces, so under sequence parallelism it runs the collectives unfused. */
        const bool attn = ar_role == PM_ROLE_ATTN_ALLREDUCE;
        add_sp_collective(b, PM_NODE_REDUCE_SCATTER,
                          attn ? PM_ROLE_ATTN_REDUCE_SCATTER : PM_ROLE_MLP_REDUCE_SCATTER, layer,
                          attn ? "RS.attn" : "RS.mlp", b->rows,
                          pm_allreduce_dtype(&b->s->workload));
        return;
    }
    if (!b->fused || tp_ranks(b) <= 1 || b->st != PM_OK) {
        add_allreduce(b, ar_role, layer, ar);
        return;
    }
    pm_node *n = b->g ? &b->g->nodes[b->prev] : &b->arr[b->prev];
    fuse(n, b->rows * b->s->model.hidden * b->er, b->s->options.fused_chunks);
    if (!b->g)
        return;
    char full[40];
    snprintf(full, sizeof full, "%s+%s", n->name, ar);
    pm_strlcpy(n->name, full, sizeof n->name);
}

/* A mixed step's attention (pm_mixed_step), in a local or a global layer: each decode token
 * as a decode step's at its context; each chunk of t tokens at offset o scores its queries
 * against the o cached positions within reach and its own causal triangle, pairs(o + t) -
 * pairs(o) query-key pairs per head (pm_causal_pairs: the pairs of the last t queries), reads
 * the cached positions once (a decode step's reads at context o, each KV head's group's), and
 * moves its own queries, keys, values and outputs as a prefill does. */
static void attention_mixed(const build_ctx *b, pm_node *a, bool local)
{
    const pm_model *m = &b->s->model;
    const pm_mixed_step *mx = &b->step->mix;
    const double d = m->head_dim, q = b->sh.q_heads, kv = b->sh.kv_heads;
    double score = 0.0, cached = 0.0, pairs = 0.0, chunk_tokens = 0.0;
    const double g = mx->decode_sequences, Q = b->step->queries;
    if (g > 0) {
        double per_query;
        cached = g * pm_kv_tokens(m, local, q / kv, mx->decode_context, &per_query);
        score = g * (Q * per_query + pm_step_query_triangle(b->step));
    }
    for (int i = 0; i < mx->n_chunks; i++) {
        const pm_step_chunk *c = &mx->chunks[i];
        pairs += c->count * (pm_causal_pairs(m, local, c->offset + c->tokens) -
                             pm_causal_pairs(m, local, c->offset));
        cached += c->count * pm_kv_tokens(m, local, q / kv, c->offset, NULL);
        chunk_tokens += c->count * (double)c->tokens;
    }
    a->flop = 4.0 * q * (score + pairs) * d + 5.0 * q * (score + pairs);
    a->kv_bytes = 2.0 * cached * kv * d * b->ekv;
    a->act_bytes = 2.0 * g * Q * q * d * b->ea + chunk_tokens * (2.0 * q + 2.0 * kv) * d * b->ea;
    a->kv_strided = kv > 1.0 + 1e-9;
    a->kv_paged = local && pm_scenario_paged_layer(b->s);
}

/* A mixed step's multi-head latent attention (vLLM's MLA backend splits the step so): the
 * decode tokens run the absorbed form over the latent cache at their context, as a decode
 * step's; each chunk attends per head over its prompt's positions decompressed (the cached
 * offset's latents, read from the cache, and its own), as a prefill does, pairs(o + t) -
 * pairs(o) query-key pairs per head in nope + rope (scores) and v (values). The decompressed
 * keys and values are read once per head, the chunk's queries and outputs moved as a
 * prefill's. */
static void attention_mixed_mla(const build_ctx *b, pm_node *a, bool local)
{
    const pm_model *m = &b->s->model;
    const pm_mixed_step *mx = &b->step->mix;
    const double q = b->sh.q_heads, kv = b->sh.kv_heads;
    const double r = m->kv_lora_rank, rope = m->qk_rope_head_dim;
    const double nope = m->qk_nope_head_dim, v = m->v_head_dim;
    const double g = mx->decode_sequences, Q = b->step->queries;
    double flop = 0.0, latent = 0.0, act = 0.0;
    if (g > 0) {
        const double c = pm_kv_tokens(m, local, q / kv, mx->decode_context, NULL);
        const double sc = Q * c + pm_step_query_triangle(b->step);
        flop += 2.0 * g * q * (2.0 * r + rope) * sc + 5.0 * g * q * sc;
        latent += g * c;
        act += g * Q * q * (2.0 * r + rope);
    }
    for (int i = 0; i < mx->n_chunks; i++) {
        const pm_step_chunk *ch = &mx->chunks[i];
        const double pairs = ch->count * (pm_causal_pairs(m, local, ch->offset + ch->tokens) -
                                          pm_causal_pairs(m, local, ch->offset));
        flop += 2.0 * q * pairs * (nope + rope + v) + 5.0 * q * pairs;
        latent += ch->count * pm_kv_tokens(m, local, q / kv, ch->offset, NULL);
        act += ch->count * ((double)(ch->offset + ch->tokens) + (double)ch->tokens) * q *
               (nope + rope + v);
    }
    a->flop = flop;
    a->kv_bytes = latent * (r + rope) * b->ekv;
    a->act_bytes = act * b->ea;
    a->kv_strided = false;
}

/* The attention node's work at the build's context length, in a local (windowed) layer or a
 * global one. */
static void attention_fill(const build_ctx *b, pm_node *a, bool local)
{
    const pm_model *m = &b->s->model;
    const double d = m->head_dim, q = b->sh.q_heads, kv = b->sh.kv_heads;
    const double batch = b->seqs;
    if (b->step->mixed && m->kv_lora_rank > 0) {
        attention_mixed_mla(b, a, local);
        return;
    }
    if (b->step->mixed) {
        attention_mixed(b, a, local);
        return;
    }
    if (m->kv_lora_rank > 0) {
        const double r = m->kv_lora_rank, rope = m->qk_rope_head_dim;
        const double nope = m->qk_nope_head_dim, v = m->v_head_dim;
        if (b->phase == PM_PHASE_DECODE) {
            /* Absorbed: scores over the latent and its rope part (2 (r + rope) flop per head
             * and position), the output in the latent space (2 r); the latent is read once
             * for every head, contiguously. */
            const double c = pm_kv_tokens(m, local, q / kv, (int64_t)b->ctx, NULL);
            const double sc = b->step->queries * c + pm_step_query_triangle(b->step);
            a->flop = 2.0 * batch * q * (2.0 * r + rope) * sc + 5.0 * batch * q * sc;
            a->kv_bytes = batch * c * (r + rope) * b->ekv;
            a->act_bytes = batch * b->step->queries * q * (2.0 * r + rope) * b->ea;
            a->kv_strided = false;
        } else {
            /* Per head over the decompressed prompt: scores in nope + rope, values in v. */
            const double pairs = pm_causal_pairs(m, local, (int64_t)b->ctx);
            a->flop = 2.0 * batch * q * pairs * (nope + rope + v) + 5.0 * batch * q * pairs;
            a->act_bytes = b->rows * q * (2.0 * (nope + rope) + 2.0 * v) * b->ea;
        }
        return;
    }
    if (b->phase == PM_PHASE_DECODE) {
        /* QK^T and PV over the cached context (or the window): 4 flop per head, position and
         * head dim over the positions each query head scores; K and V of the positions each KV
         * head's group reads (block-sparse heads of a group read different blocks). */
        double score;
        const double c = pm_kv_tokens(m, local, q / kv, (int64_t)b->ctx, &score);
        /* A verify step's k + 1 queries each score the context, and those drafted before
         * them; the cache is read once. */
        const double Q = b->step->queries, sc = Q * score + pm_step_query_triangle(b->step);
        a->flop = 4.0 * batch * q * sc * d + 5.0 * batch * q * sc;
        a->kv_bytes = 2.0 * batch * c * kv * d * b->ekv;
        a->act_bytes = 2.0 * batch * Q * q * d * b->ea;
        a->kv_strided = kv > 1.0 + 1e-9;
        a->kv_paged = local && pm_scenario_paged_layer(b->s);
    } else {
        /* Causal attention over the prompt: the query-key pairs of the lower triangle (s^2 / 2
         * without a window), 4 d + 5 flop each per head. */
        const double pairs = pm_causal_pairs(m, local, (int64_t)b->ctx);
        a->flop = 4.0 * batch * q * pairs * d + 5.0 * batch * q * pairs;
        a->act_bytes = b->rows * (2.0 * q + 2.0 * kv) * d * b->ea;
    }
}

/* The last node committed (to adjust what add_matmul made). */
static pm_node *last_node(build_ctx *b)
{
    if (b->st != PM_OK || b->prev < 0)
        return &b->scratch;
    return b->g ? &b->g->nodes[b->prev] : &b->arr[b->prev];
}

/* A per-head up-projection of MLA, a batched GEMM over the local heads (weights
 * heads x in x out): its activations are per head. */
static void add_head_matmul(build_ctx *b, pm_node_role role, int layer, const char *what,
                            double in, double out)
{
    const double n = b->sh.q_heads;
    add_matmul(b, role, layer, what, in, n * out);
    last_node(b)->act_bytes = b->rows * n * (in + out) * b->ea;
}

/* add_head_matmul over rows tokens instead of the step's (a mixed step's parts). */
static void add_head_matmul_rows(build_ctx *b, pm_node_role role, int layer, const char *what,
                                 double in, double out, double rows)
{
    const double step_rows = b->rows;
    b->rows = rows;
    add_head_matmul(b, role, layer, what, in, out);
    b->rows = step_rows;
}

/* Multi-head latent attention, up to the attention core's output (per head, v_head_dim).
 * Decode runs the absorbed form: the key up-projection is folded into the query (the query's
 * nope part times W_UK gives a query in the latent space), attention reads the latent cache, and
 * the value up-projection turns the latent output into each head's values. Prefill decompresses
 * the prompt's keys and values (both up-projections before the core) and attends per head. */
static void add_mla_attention(build_ctx *b, int l, bool local)
{
    const pm_model *m = &b->s->model;
    const double h = m->hidden, n = b->sh.q_heads, rows = b->rows;
    const double nope = m->qk_nope_head_dim, rope = m->qk_rope_head_dim, v = m->v_head_dim;
    const double r = m->kv_lora_rank, latent = r + rope;
    if (m->q_lora_rank > 0) {
        /* The query's and the latent's down-projections read the hidden state: one GEMM. */
        add_matmul(b, PM_ROLE_QKV, l, "QKV_A", h, m->q_lora_rank + latent);
        add_matmul(b, PM_ROLE_Q_UP, l, "Q_B", m->q_lora_rank, n * (nope + rope));
    } else {
        add_matmul(b, PM_ROLE_QKV, l, "Q+KV_A", h, n * (nope + rope) + latent);
    }
    const bool decode = b->phase == PM_PHASE_DECODE;
    /* A mixed step: the decode tokens absorbed, the chunks' positions (cached and new)
     * decompressed; W_UK and W_UV are read by each form's kernels. */
    const pm_mixed_step *mx = &b->step->mix;
    double g = 0.0, positions = 0.0;
    if (b->step->mixed) {
        g = mx->decode_sequences;
        for (int i = 0; i < mx->n_chunks; i++)
            positions += mx->chunks[i].count * (double)(mx->chunks[i].offset + mx->chunks[i].tokens);
        if (g > 0)
            add_head_matmul_rows(b, PM_ROLE_K_UP, l, "K_UP.dec", nope, r, g * b->step->queries);
        add_head_matmul_rows(b, PM_ROLE_K_UP, l, "K_UP", r, nope, positions);
        add_head_matmul_rows(b, PM_ROLE_V_UP, l, "V_UP", r, v, positions);
    } else if (decode) {
        add_head_matmul(b, PM_ROLE_K_UP, l, "K_UP", nope, r); /* q_nope x W_UK */
    } else {
        add_head_matmul(b, PM_ROLE_K_UP, l, "K_UP", r, nope); /* the prompt's keys */
        add_head_matmul(b, PM_ROLE_V_UP, l, "V_UP", r, v);    /* the prompt's values */
    }
    pm_node *rp = node_new(b, PM_NODE_ROPE, PM_ROLE_ROPE, l, "RoPE");
    rp->flop = 6.0 * rows * (n + 1.0) * rope;
    /* Rotates the query's and the shared key's rope parts, appends the latent to the cache. */
    rp->act_bytes = 2.0 * rows * (n + 1.0) * rope * b->ea + rows * latent * b->ekv;
    node_commit(b);
    attention_fill(b, node_new(b, PM_NODE_ATTENTION, PM_ROLE_ATTENTION, l, "Attention"), local);
    node_commit(b);
    if (b->step->mixed && g > 0)
        add_head_matmul_rows(b, PM_ROLE_V_UP, l, "V_UP.dec", r, v, g * b->step->queries);
    else if (decode && !b->step->mixed)
        add_head_matmul(b, PM_ROLE_V_UP, l, "V_UP", r, v); /* latent output x W_UV */
}

/* Routed experts' projection: the experts the busiest device reads (their expected count),
 * one GEMM of (token slots / experts) rows each; its weights are known after the router. */
static void add_routed(build_ctx *b, pm_node_role role, int l, const char *what, double k,
                       double n_cols)
{
    const double d = b->moe.experts_read, slots = b->moe.token_slots;
    /* The tokens' input is quantised once before the gather, the experts' outputs per slot. */
    add_act_quant(b, role, l, role == PM_ROLE_EXPERT_DOWN ? slots : b->rows, k);
    pm_node *n = node_new(b, PM_NODE_MATMUL, role, l, what);
    n->m = d > 0 ? slots / d : 0.0;
    n->k = k;
    n->n = d * n_cols;
    n->flop = 2.0 * slots * k * n_cols;
    n->weight_bytes = d * k * n_cols * b->ew;
    n->act_bytes = slots * (k + n_cols) * b->ea;
    n->routed = true;
    if (pm_model_role_has_bias(&b->s->model, role)) {
        n->flop += slots * n_cols;
        n->weight_bytes += d * n_cols * pm_bias_bytes(&b->s->workload);
    }
    node_commit(b);
}

static void add_alltoall(build_ctx *b, pm_node_role role, int l, const char *what, double bytes,
                         pm_dtype dtype)
{
    pm_node *n = node_new(b, PM_NODE_ALLTOALL, role, l, what);
    n->dtype = dtype;
    n->comm_bytes = bytes;
    node_commit(b);
}

/* The names of an MLP's input projections and activation (act NULL: "SiLUxMul" gated, "Act"
 * plain, the dense MLP's). */
typedef struct mlp_names {
    pm_node_role gate, up, act;
    const char *g, *u, *a;
} mlp_names;

typedef void (*matmul_fn)(build_ctx *b, pm_node_role role, int l, const char *what, double k,
                          double n_cols);

/* An MLP up to its down projection: gate (when gated) and up of n_cols columns, made by mm
 * (add_matmul, or add_routed for the routed experts), then the activation over rows x n_cols:
 * SiLU x mul, 6 flop and 3 passes per element, or a plain activation, 8 flop and 2 passes. */
static void add_mlp_in(build_ctx *b, int l, const mlp_names *nm, matmul_fn mm, double n_cols,
                       double rows)
{
    const bool gated = b->s->model.gated_mlp;
    const double h = b->s->model.hidden;
    if (gated)
        mm(b, nm->gate, l, nm->g, h, n_cols);
    mm(b, nm->up, l, nm->u, h, n_cols);
    add_vector(b, nm->act, l, PM_NODE_ELEMENTWISE, nm->a ? nm->a : gated ? "SiLUxMul" : "Act",
               rows * n_cols, gated ? 6.0 : 8.0, gated ? 3.0 : 2.0);
}

/* The engine's routing kernels after the router (runtime.c, pm_moe_routing_ops), vLLM's
 * fused-MoE path: the top-k (topk_softmax) reads each token's scores over every expert and writes
 * its k weights (fp32) and expert ids and slot indices (int32): 4 flop a score (max, exp, sum,
 * divide); the align (moe_align_block_size) reads the rows x k ids and writes the sorted slot
 * ids (int32), its time its measured line (cost.c) over m = the slots it sorts. The permute is
 * the expert GEMM's own gather (its activation reads are the slots'), so no node of its own. */
static void add_moe_routing(build_ctx *b, int l)
{
    const double e = b->s->model.experts, rows = b->rows;
    const double slots = rows * b->s->model.experts_per_token;
    pm_node *t = node_new(b, PM_NODE_ELEMENTWISE, PM_ROLE_MOE_TOPK, l, "MoE.TopK");
    t->flop = 4.0 * rows * e;
    t->act_bytes = rows * e * b->ea + slots * 12.0;
    node_commit(b);
    pm_node *a = node_new(b, PM_NODE_ELEMENTWISE, PM_ROLE_MOE_ALIGN, l, "MoE.Align");
    a->m = slots;
    a->act_bytes = slots * 8.0;
    node_commit(b);
}

/* Un-permute (moe_sum): slots expert outputs of the hidden size read, one per token written,
 * one add per slot element. */
static void add_moe_sum(build_ctx *b, int l, double slots)
{
    const double h = b->s->model.hidden;
    pm_node *n = node_new(b, PM_NODE_ELEMENTWISE, PM_ROLE_MOE_SUM, l, "MoE.Sum");
    n->flop = slots * h;
    n->act_bytes = (slots + b->rows) * h * b->ea;
    node_commit(b);
}

/* Beside data-parallel attention an MLP tensor parallel over the group (SGLang's
 * LayerScatterModes, FULL mode) runs on every rank's tokens: the ranks' normed tokens
 * all-gathered (each rank's share padded to the busiest rank's b->rows), the MLP on the p x
 * b->rows gathered tokens (gather_in returns the rank's rows and sets b->rows), and a
 * reduce-scatter of the partial sums back to the ranks, in the reduction's datatype (unfused in
 * the fused baseline, as under sequence parallelism; scatter_out restores b->rows). */
static double gather_in(build_ctx *b, int l)
{
    const double rank_rows = b->rows;
    add_group_collective(b, PM_NODE_ALL_GATHER, PM_ROLE_MLP_ALL_GATHER, l, "AG.mlp", rank_rows,
                         b->s->workload.act_dtype);
    b->rows = rank_rows * b->s->cluster.devices;
    return rank_rows;
}

static void scatter_out(build_ctx *b, int l, double rank_rows)
{
    b->rows = rank_rows;
    add_group_collective(b, PM_NODE_REDUCE_SCATTER, PM_ROLE_MLP_REDUCE_SCATTER, l, "RS.mlp",
                         rank_rows, pm_allreduce_dtype(&b->s->workload));
}

/* A MoE block after the MLP norm: the shared experts (known before routing: prefetchable under
 * the attention's allreduce), the router, the dispatch, the routed experts (prefetchable only
 * under the dispatch), and the combine; without expert parallelism the experts are tensor
 * parallel and one allreduce sums them, as after a dense MLP, or beside data-parallel attention
 * the block runs on the gathered tokens, as a dense layer's MLP there (gather_in): SGLang's
 * default without --ep. The routed experts' reads and slots are the whole group's tokens either
 * way (b->moe, build_init). */
static void add_moe_block(build_ctx *b, int l)
{
    const pm_model *m = &b->s->model;
    const bool ep = b->sh.ep > 1, gathered = !ep && b->sh.attn_dp > 1;
    const double rank_rows = gathered ? gather_in(b, l) : b->rows;
    const double h = m->hidden, rows = b->rows, ex = b->sh.expert_cols;
    static const mlp_names shared = {PM_ROLE_SHARED_GATE, PM_ROLE_SHARED_UP,
                                     PM_ROLE_SHARED_ACTIVATION, "SharedGate", "SharedUp",
                                     "SharedAct"};
    static const mlp_names routed = {PM_ROLE_EXPERT_GATE, PM_ROLE_EXPERT_UP,
                                     PM_ROLE_EXPERT_ACTIVATION, "ExpertGate", "ExpertUp",
                                     "ExpertAct"};
    if (m->shared_experts > 0) {
        const double sc = b->sh.shared_cols;
        add_mlp_in(b, l, &shared, add_matmul, sc, rows);
        add_matmul(b, PM_ROLE_SHARED_DOWN, l, "SharedDown", sc, h);
    }
    add_matmul(b, PM_ROLE_ROUTER, l, "Router", h, m->experts);
    const bool routing = pm_moe_routing_ops(b->s);
    if (routing)
        add_moe_routing(b, l);
    /* Dispatch in the activations' type; combine in the reduction's (W8A8 sums fp16). */
    const double slots_all = rows * m->experts_per_token * h;
    if (ep)
        add_alltoall(b, PM_ROLE_DISPATCH, l, "A2A.dispatch", slots_all * b->ea,
                     b->s->workload.act_dtype);
    add_mlp_in(b, l, &routed, add_routed, ex, b->moe.token_slots);
    add_routed(b, PM_ROLE_EXPERT_DOWN, l, "ExpertDown", ex, h);
    if (ep)
        add_alltoall(b, PM_ROLE_COMBINE, l, "A2A.combine", slots_all * b->er,
                     pm_allreduce_dtype(&b->s->workload));
    /* Un-permute: each token's k outputs summed, on the expert rank before the allreduce, or
     * on the token's own rank after the combine (all of its k slots back). */
    if (routing)
        add_moe_sum(b, l, ep ? rows * m->experts_per_token : b->moe.token_slots);
    if (gathered)
        scatter_out(b, l, rank_rows);
    else if (!ep)
        allreduce_after(b, PM_ROLE_MLP_ALLREDUCE, l, "AR.mlp");
}

/* A dense layer's MLP beside data-parallel attention: Gate, Up and Down tensor parallel over
 * the group (plan.c's mlp_cols) on the gathered tokens (gather_in). */
static void add_gathered_mlp(build_ctx *b, int l, const mlp_names *nm)
{
    const double rank_rows = gather_in(b, l), h = b->s->model.hidden;
    add_mlp_in(b, l, nm, add_matmul, b->sh.mlp_cols, b->rows);
    add_matmul(b, PM_ROLE_DOWN, l, "Down", b->sh.mlp_cols, h);
    scatter_out(b, l, rank_rows);
}

static void add_layer(build_ctx *b, int l, bool local, bool moe)
{
    const pm_model *m = &b->s->model;
    const double h = m->hidden, d = m->head_dim, q = b->sh.q_heads, kv = b->sh.kv_heads;
    const double rows = b->rows;
    add_vector(b, PM_ROLE_ATTN_NORM, l, PM_NODE_NORM, "norm1", norm_rows(b) * h, 5.0, 2.0);
    add_all_gather(b, PM_ROLE_ATTN_ALL_GATHER, l, "AG.attn", rows);
    /* The attention output's width per head: the value dimension. */
    double o_in = q * d;
    if (m->kv_lora_rank > 0) {
        add_mla_attention(b, l, local);
        o_in = q * m->v_head_dim;
    } else {
        add_matmul(b, PM_ROLE_QKV, l, "QKV", h, (q + 2.0 * kv) * d);
        pm_node *r = node_new(b, PM_NODE_ROPE, PM_ROLE_ROPE, l, "RoPE");
        r->flop = 6.0 * rows * (q + kv) * d;
        /* Reads Q and K, writes them back, appends this step's K and V to the cache. */
        r->act_bytes = 2.0 * rows * (q + kv) * d * b->ea + 2.0 * rows * kv * d * b->ekv;
        node_commit(b);
        attention_fill(b, node_new(b, PM_NODE_ATTENTION, PM_ROLE_ATTENTION, l, "Attention"),
                       local);
        node_commit(b);
    }
    if (m->parallel_block) {
        /* The MLP reads the layer's input too; both outputs are summed by one allreduce. */
        add_matmul(b, PM_ROLE_O, l, "O", o_in, h);
    } else {
        add_matmul_allreduce(b, PM_ROLE_O, PM_ROLE_ATTN_ALLREDUCE, l, "O", "AR.attn", o_in, h);
        add_vector(b, PM_ROLE_MLP_NORM, l, PM_NODE_NORM, "norm2", norm_rows(b) * h, 5.0, 2.0);
        add_all_gather(b, PM_ROLE_MLP_ALL_GATHER, l, "AG.mlp", rows);
    }
    if (moe) {
        add_moe_block(b, l);
        return;
    }
    static const mlp_names dense = {PM_ROLE_GATE, PM_ROLE_UP, PM_ROLE_ACTIVATION, "Gate", "Up",
                                    NULL};
    if (b->sh.attn_dp > 1) {
        add_gathered_mlp(b, l, &dense);
        return;
    }
    add_mlp_in(b, l, &dense, add_matmul, b->sh.mlp_cols, rows);
    add_matmul_allreduce(b, PM_ROLE_DOWN, PM_ROLE_MLP_ALLREDUCE, l, "Down", "AR.mlp", b->sh.mlp_cols, h);
}

pm_status pm_graph_build(const pm_scenario *s, pm_phase phase, int64_t context_len, int layers,
                         pm_graph *g, pm_error *err)
{
    if (!g)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_graph_build");
    pm_step step;
    pm_status st = pm_step_of(s, phase, context_len, &step, err);
    return st != PM_OK ? st : pm_graph_build_ex(s, &step, layers, false, g, err);
}

/* The busiest attention rank's share of step under data-parallel attention (plan.c's
 * pm_plan_rank_sequences, the rule for sequences): a decode or prefill step's sequences; a mixed
 * step's decode sequences, and each chunk group's chunks whole (SGLang's DP ranks each schedule
 * their own requests, a prompt's chunks on the rank that holds it), its finishing prompts in
 * proportion. The busiest rank is taken as the busiest in each part at once (an upper bound
 * where the parts' remainders fall on different ranks). */
static pm_status rank_step(const pm_scenario *s, const pm_step *step, pm_step *out,
                           pm_error *err)
{
    if (!step->mixed) {
        *out = *step;
        out->sequences = pm_plan_rank_sequences(s, step->sequences);
        out->tokens = step->tokens * out->sequences / step->sequences;
        return PM_OK;
    }
    pm_mixed_step m = step->mix;
    m.decode_sequences = pm_plan_rank_sequences(s, m.decode_sequences);
    for (int i = 0; i < m.n_chunks; i++) {
        pm_step_chunk *c = &m.chunks[i];
        const double count = pm_plan_rank_sequences(s, c->count);
        /* In proportion, never above the count (a rounding of finishing == count). */
        const double finishing = c->finishing * (count / c->count);
        c->finishing = finishing < count ? finishing : count;
        c->count = count;
    }
    return pm_step_mixed(s, &m, out, err);
}

/* Fills b for a build of step; the caller sets b->g or b->arr. */
static pm_status build_init(build_ctx *b, const pm_scenario *s, const pm_step *step, bool fused,
                            pm_error *err)
{
    if (!s || !step)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_graph_build");
    b->s = s;
    pm_status st = pm_shard_compute(s, &b->sh, err);
    if (st != PM_OK)
        return st;
    const pm_workload *w = &s->workload;
    b->phase = step->phase;
    b->ctx = (double)step->context;
    b->rows = step->tokens;
    b->seqs = step->sequences;
    b->step = step;
    b->cdt = pm_compute_dtype(w);
    b->ew = pm_weight_elem_bytes(w); /* int4: with its group's scale (dtype.c) */
    b->ekv = pm_dtype_bytes(w->kv_dtype);
    b->ea = pm_dtype_bytes(w->act_dtype);
    b->act_quant = pm_fp8_act_quant(s);
    b->er = pm_dtype_bytes(pm_allreduce_dtype(w));
    b->prev = -1;
    b->fused = fused;
    if (s->model.experts > 0 && (st = pm_moe_reads_compute(s, b->rows, &b->moe, err)) != PM_OK)
        return st;
    if (b->sh.attn_dp > 1) {
        /* Data-parallel attention: everything but the routed experts (whose reads are the
         * whole group's tokens, above) runs on the busiest rank's own step. */
        if ((st = rank_step(s, step, &b->rank, err)) != PM_OK)
            return st;
        b->step = &b->rank;
        b->rows = b->rank.tokens;
        b->seqs = b->rank.sequences;
    }
    return PM_OK;
}

static void add_head(build_ctx *b)
{
    pm_node *e = node_new(b, PM_NODE_EMBEDDING, PM_ROLE_EMBEDDING, -1, "Embedding");
    /* A row gather: data-dependent, so not prefetchable. */
    e->act_bytes = b->rows * b->s->model.hidden *
                   (pm_role_weight_bytes(&b->s->workload, PM_ROLE_EMBEDDING) + b->ea);
    node_commit(b);
}

static void add_tail(build_ctx *b)
{
    const double h = b->s->model.hidden;
    /* Decode computes logits for the new token only (a verify step for each of its queries);
     * prefill for the last prompt position (under sequence parallelism, gathered from the
     * ranks that hold them). */
    const double head_rows =
        b->seqs + pm_step_decode_sequences(b->step) * (b->step->queries - 1.0);
    add_vector(b, PM_ROLE_FINAL_NORM, -1, PM_NODE_NORM, "FinalNorm", norm_rows(b) * h, 5.0, 2.0);
    add_all_gather(b, PM_ROLE_HEAD_ALL_GATHER, -1, "AG.head", head_rows);
    const double saved_rows = b->rows;
    b->rows = head_rows;
    add_matmul(b, PM_ROLE_LM_HEAD, -1, "LMHead", h, b->sh.vocab_cols);
    b->rows = saved_rows;
}

pm_status pm_graph_build_ex(const pm_scenario *s, const pm_step *step, int layers, bool fused,
                            pm_graph *g, pm_error *err)
{
    const int all = s ? s->model.layers : 0;
    const pm_graph_part whole = {0, layers > 0 && layers < all ? layers : all, true, true, 0.0,
                                 false};
    return pm_graph_build_part(s, step, &whole, fused, g, err);
}

pm_status pm_graph_build_part(const pm_scenario *s, const pm_step *step, const pm_graph_part *part,
                              bool fused, pm_graph *g, pm_error *err)
{
    if (!g || !part || part->first < 0 || part->layers < 0 ||
        (s && part->first + part->layers > s->model.layers))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_graph_build");
    build_ctx b = {0};
    b.g = g;
    pm_status st = build_init(&b, s, step, fused, err);
    if (st != PM_OK)
        return st;
    const int L = part->layers;
    pm_graph_clear(g);
    if ((st = pm_graph_reserve(g, (size_t)L * 24 + 9, (size_t)L * 24 + 9)) != PM_OK)
        return pm_fail(err, st, NULL, NULL, "out of memory building the graph");
    if (part->recv_bytes > 0) {
        /* The stage waits on its input: a communication node, whose window PRESERVE fills. */
        pm_node *r = node_new(&b, PM_NODE_RECV, PM_ROLE_STAGE_RECV, -1, "Recv");
        r->dtype = s->workload.act_dtype;
        r->comm_bytes = part->recv_bytes;
        r->inter_node = part->inter_node;
        node_commit(&b);
    }
    if (part->head)
        add_head(&b);
    for (int l = part->first; l < part->first + L; l++)
        add_layer(&b, l, pm_model_layer_is_local(&s->model, l),
                  pm_model_layer_is_moe(&s->model, l));
    if (part->tail)
        add_tail(&b);
    if (b.st != PM_OK)
        return pm_fail(err, b.st, NULL, NULL, "out of memory building the graph");
    return PM_OK;
}

/* The template's extra attention nodes (pm_template), each alone at its context from the
 * build's own set-up (shard, datatypes): the attention rule is attention_fill's, as in every
 * layer. */
static void template_attention(build_ctx *b, pm_template *t)
{
    b->cap_arr = 1;
    if (b->phase == PM_PHASE_DECODE) {
        b->arr = &t->attn_next;
        b->n_arr = 0;
        b->ctx += 1.0;
        attention_fill(b, node_new(b, PM_NODE_ATTENTION, PM_ROLE_ATTENTION, 0, "Attention"),
                       false);
        b->ctx -= 1.0;
    }
    if (pm_model_local_layers(&b->s->model) > 0) {
        b->arr = &t->attn_local;
        b->n_arr = 0;
        attention_fill(b, node_new(b, PM_NODE_ATTENTION, PM_ROLE_ATTENTION, 0, "Attention"),
                       true);
    }
}

pm_status pm_template_build(const pm_scenario *s, const pm_step *step, bool fused, pm_template *t,
                            pm_error *err)
{
    build_ctx b = {0};
    pm_status st = build_init(&b, s, step, fused, err);
    if (st != PM_OK)
        return st;
    b.cap_arr = PM_TEMPLATE_MAX;
    b.arr = t->head;
    add_head(&b);
    t->n_head = b.n_arr;
    b.arr = t->layer;
    b.n_arr = 0;
    b.prev = -1;
    /* The global layer: step_plan.c derives the local one. Under data-parallel attention a
     * model whose every layer is a MoE layer has the MoE layer's as its layer template too
     * (nothing reads a dense layer there); with dense layers the template is the dense
     * layer's, whose MLP gathers the ranks' tokens after norm2 (add_gathered_mlp): its first
     * collective sits before the MoE layer's dispatch, and step_plan.c keys its periods by
     * both layers' MLP classes. */
    add_layer(&b, 0, false,
              b.sh.attn_dp > 1 && pm_model_moe_layers(&s->model) == s->model.layers);
    t->n_layer = b.n_arr;
    t->n_moe = 0;
    if (pm_model_moe_layers(&s->model) > 0) {
        b.arr = t->moe;
        b.n_arr = 0;
        b.prev = -1;
        add_layer(&b, 0, false, true);
        t->n_moe = b.n_arr;
    }
    b.arr = t->tail;
    b.n_arr = 0;
    b.prev = -1;
    add_tail(&b);
    t->n_tail = b.n_arr;
    t->moe_reads = b.moe;
    t->kv_group = b.sh.q_heads / b.sh.kv_heads;
    template_attention(&b, t);
    if (b.st != PM_OK)
        return pm_fail(err, b.st, NULL, NULL, "layer template overflow");
    return PM_OK;
}

void pm_template_fuse_layer(const pm_node *in, int n_in, int chunks, pm_node *out, int *n_out,
                            int *map)
{
    int n = 0;
    for (int i = 0; i < n_in; i++) {
        out[n] = in[i];
        map[i] = n;
        if (in[i].kind == PM_NODE_MATMUL && i + 1 < n_in && in[i + 1].kind == PM_NODE_ALLREDUCE) {
            fuse(&out[n], in[i + 1].comm_bytes, chunks);
            map[++i] = -1;
        }
        n++;
    }
    *n_out = n;
}
