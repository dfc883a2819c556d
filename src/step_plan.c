/*
 * step_plan.c - the fast evaluator: one step (step.c: decode or prefill) in one mode, without
 * building a graph. It computes exactly what the graph path computes (reference.c keeps that path as the
 * reference the tests compare against), using three facts:
 *
 *  1. Layers repeat exactly, or in a pattern of two classes (global and local, windowed) that
 *     differ only in their attention node, so one layer's nodes (pm_template) and their costs
 *     are computed once per plan, plus the local attention; in decode only the attention
 *     depends on the context length, linearly in the positions it reads (the window caps them),
 *     so an evaluation recomputes one node per class. A period (from a layer's first
 *     communication to the next layer's) depends only on the class of the next layer: the
 *     nodes from the first communication on hold no attention. So a step is the prefix, one
 *     period per class times its count, and the last layer.
 *  2. The graph is a chain, so Algorithm 1's breadth-first walk of a window is the program
 *     order from a communication node to the next one.
 *  3. When the first communication node of a layer starts, the prefetch stream is idle and
 *     nothing is pending (everything prefetched before it was consumed before it; a streaming
 *     consumer that finishes before its prefetch ends it: the rest would be L2 hits), so a step
 *     is: a prefix without prefetches (the embedding and layer 0 up to its first allreduce),
 *     L - 1 identical periods from one layer's first allreduce to the next layer's, and the
 *     last layer from its first allreduce through the LM head. Each is scheduled on its own.
 *
 * Without HBM sharing the two-stream schedule reduces to a recurrence over the main stream in
 * order (a prefetch starts at max(its trigger's start, the previous prefetch's end); a consumer
 * at max(its predecessor's end, its prefetch's end), or, streaming, at its predecessor's end,
 * ending as schedule.c says); with sharing the segments go through the
 * same event loop as graphs (pm_sim_run).
 *
 * Mixture-of-experts models add a second dimension of classes, the MLP (dense or MoE): the
 * nodes from the first communication on differ between them, so a period depends on the MLP
 * class of its layer and the attention class of the next one (n_pair counts the L - 1 periods
 * of each kind, once per plan); dense models have one MLP class and the pairs are the classes.
 * Beside data-parallel attention the two MLP classes also communicate first at different
 * nodes (a dense layer's all-gather after norm2, a MoE layer's dispatch after its shared
 * experts and router), so the next layer's nodes up to its first communication differ too: a
 * period is keyed by the triple (MLP class of the layer, attention and MLP class of the next),
 * and the next layer's nodes prefetched by the layer's last window (lead) are decided apart
 * from the layer's own windows (pf), whose node indices they would otherwise share.
 *
 * Sequence parallelism (build.c) puts a collective before the attention too: the all-gather
 * before the QKV projection (pre_comm). The periods still start at the first communication
 * after the attention (the reduce-scatter after O), so they keep their shape; the all-gather
 * opens a window inside the attention part, in every layer (the first too, so the prefix is
 * scheduled like a period), and the previous layer's last window stops at it. Behind a
 * reduce-scatter an all-gather opens no window (insert.c): the reduce-scatter triggers the
 * prefetches; with nothing prefetchable between the two, the decisions are the same.
 *
 * This is the path that serves pm_estimate_compute, pm_decode_step_time and pm_step_model; the
 * table of the rules it shares with the graph path is at the top of reference.c.
 *
 * May call: build.c, collective.c, cost.c, energy.c, error.c, insert.c, model.c, schedule.c.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

#define MAXN PM_TEMPLATE_MAX

static bool is_comm(pm_node_kind k)
{
    return k == PM_NODE_ALLREDUCE || k == PM_NODE_FUSED_MATMUL_ALLREDUCE || k == PM_NODE_ALLTOALL ||
           k == PM_NODE_REDUCE_SCATTER || k == PM_NODE_ALL_GATHER;
}

/* The nodes and costs of MLP class m (0 dense, 1 MoE). */
static int n_of_tmpl(const pm_template *t, int m)
{
    return m ? t->n_moe : t->n_layer;
}
static const pm_node *tmpl_of(const pm_step_plan *p, int m)
{
    return m ? p->tmpl.moe : p->tmpl.layer;
}
static int n_of(const pm_step_plan *p, int m)
{
    return n_of_tmpl(&p->tmpl, m);
}
static const pm_step_node *costs_of(const pm_step_plan *p, int m)
{
    return m ? p->moe : p->layer;
}
static const pm_step_traffic *traffic_of(const pm_step_plan *p, int m)
{
    return m ? p->tmpl.counts.moe : p->tmpl.counts.layer;
}

/* What of a plan's node reads the node alone: its prefetchable bytes and its kind's flags. */
static void node_flags(const pm_node *n, pm_step_node *out)
{
    out->bytes = pm_node_prefetchable_bytes(n);
    out->is_ar = pm_kind_is_collective(n->kind);
    out->is_comm = is_comm(n->kind);
    out->is_a2a = n->kind == PM_NODE_ALLTOALL;
    out->is_rs = n->kind == PM_NODE_REDUCE_SCATTER;
    out->is_ag = n->kind == PM_NODE_ALL_GATHER;
    out->routed = n->routed;
}

/* The costs of one node with its roofline row r (cost.c) served from HBM, served from L2 after
 * a prefetch, and of its prefetch. */
static void row_costs(const pm_cost_ctx *k, const pm_ar_model *ar, const pm_ar_model *ar_fused,
                      const pm_node *n, const pm_cost_row *r, bool prefetching,
                      pm_step_node *out)
{
    node_flags(n, out);
    if (prefetching && out->bytes > 0) {
        /* MatMul or attention: plain operations, both variants from one roofline. */
        pm_op_cost_pair_row(k, r, out->bytes, &out->hbm, &out->l2);
        pm_prefetch_cost(k, out->bytes, &out->pf);
    } else {
        pm_op_cost_row(k, n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE ? ar_fused : ar, n, r,
                       &out->hbm);
    }
}

/* Whether two doubles are the same bits (a kept cost's inputs: never a tolerance). */
static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* row_costs of plan p's node n through its row's kept costs (issue 46 item 3): a row whose
 * tiling bytes are 0 at a point of the same pm_cost_hw (the key's gen) has every input of its
 * cost the same as where it was kept (at pm_cost_ctx_unbounded, bit for bit), so its costs are
 * the kept ones; else costed, and kept where nothing is kept at the key's point yet and the
 * key keeps (the key is the last point's pm_cost_hw: pm_cost_key_at; where its tiling bound
 * is on here, costed again at the unbounded L2: on an L2 axis from a small capacity the term
 * changes from point to point and is off past its kink).
 * A row is always costed with the same prefetching (the head's false, the others' p's: in the
 * key). */
static void kept_costs(const pm_step_plan *p, const pm_node *n, pm_cost_row *r,
                       bool prefetching, pm_step_node *out)
{
    const uint64_t gen = p->tmpl.rows.key.gen;
    /* (gen 0: a plan costed once, plan_cost: nothing kept, nothing to keep) */
    const bool keep = gen != 0 && pm_cost_row_keepable(&p->cost, r);
    const bool tiled = keep && pm_cost_row_tiling(&p->cost, r) > 0;
    if (keep && r->kept_gen == gen && !tiled) {
        *out = r->kept;
        return;
    }
    row_costs(&p->cost, &p->ar, &p->ar_fused, n, r, prefetching, out);
    if (!keep || !p->tmpl.rows.key.keep || r->kept_gen == gen)
        return;
    if (tiled) {
        pm_cost_ctx past;
        pm_cost_ctx_unbounded(&p->cost, &past);
        row_costs(&past, &p->ar, &p->ar_fused, n, r, prefetching, &r->kept);
    } else {
        r->kept = *out;
    }
    /* What row_costs does not cost (nothing prefetched), kept as 0: nothing reads it. */
    if (!(prefetching && r->kept.bytes > 0))
        r->kept.l2 = r->kept.pf = (pm_op_cost){0};
    r->kept_gen = gen;
}

/* The cost of fused node n (a MatMul with its allreduce absorbed) of the fused plan f from its
 * MatMul's row r, through the row's kept fused cost as kept_costs: the chunk search's inputs
 * are the roofline (the key's gen, the tiling bound off), the fused model and the chunk
 * half-efficiency (the key's), the node's message and chunk option; kept where the key keeps. */
static void fused_costs(const pm_step_plan *f, const pm_cost_key *key, const pm_node *n,
                        pm_cost_row *r, pm_step_node *out)
{
    const uint64_t gen = key->gen;
    const bool keep = gen != 0 && pm_cost_row_keepable(&f->cost, r); /* (as kept_costs) */
    const bool tiled = keep && pm_cost_row_tiling(&f->cost, r) > 0;
    /* (the kept node's fields are set with fused_gen: read only where it matches, and a row
     * made at gen 0 has none) */
    const bool same_node = keep && r->fused_gen == gen &&
                           same_bits(r->fused_comm_bytes, n->comm_bytes) &&
                           r->fused_chunks == n->chunks;
    if (keep && same_node && !tiled) {
        node_flags(n, out);
        out->hbm = r->fused;
        return;
    }
    row_costs(&f->cost, &f->ar, &f->ar_fused, n, r, false, out);
    if (!keep || !key->keep || same_node)
        return;
    r->fused = out->hbm;
    if (tiled) {
        pm_cost_ctx past;
        pm_step_node c;
        pm_cost_ctx_unbounded(&f->cost, &past);
        row_costs(&past, &f->ar, &f->ar_fused, n, r, false, &c);
        r->fused = c.hbm;
    }
    r->fused_gen = gen;
    r->fused_comm_bytes = n->comm_bytes;
    r->fused_chunks = n->chunks;
}

/* row_costs of a node without a row kept (an attention at another context, a fused node). */
static void node_costs(const pm_cost_ctx *k, const pm_ar_model *ar, const pm_ar_model *ar_fused,
                       const pm_node *n, bool prefetching, pm_step_node *out)
{
    pm_cost_row r;
    pm_cost_row_init(k->s, n, &r);
    row_costs(k, ar, ar_fused, n, &r, prefetching, out);
}

/* The roofline rows of t's nodes (cost.c) at s, unless t has them at s's key already (a
 * compiled template costed at another hardware point: issue 46 item 3). */
static void template_rows(const pm_scenario *s, bool local, pm_template *t)
{
    pm_template_rows *r = &t->rows;
    if (r->ready && pm_cost_key_same(s, &r->key))
        return;
    for (int i = 0; i < t->n_head; i++)
        pm_cost_row_init(s, &t->head[i], &r->head[i]);
    for (int i = 0; i < t->n_layer; i++)
        pm_cost_row_init(s, &t->layer[i], &r->layer[i]);
    for (int i = 0; i < t->n_moe; i++)
        pm_cost_row_init(s, &t->moe[i], &r->moe[i]);
    for (int i = 0; i < t->n_tail; i++)
        pm_cost_row_init(s, &t->tail[i], &r->tail[i]);
    if (local)
        pm_cost_row_init(s, &t->attn_local, &r->attn_local);
    pm_cost_key_init(s, &r->key);
    r->ready = true;
}

/* What of a node's traffic (node_traffic) reads the hardware, into out, whose other fields
 * (node_traffic's at another hardware point of the same nodes) are kept: the HBM and link
 * bytes and, prefetched, what its consumer reads back. Prefetched, as pm_node_traffic counts a
 * consumer with l2_bytes and its prefetch node: the consumer's own HBM bytes and the
 * prefetch's read, the bytes written to L2 and read back (tests/test_energy.c compares the two
 * paths). A streaming consumer whose L2 is slower than its HBM reads HBM
 * (pm_stream_consumer_cost, as the schedule times it): the prefetch still reads HBM and writes
 * L2, and nothing is read back. */
static void node_traffic_hw(const pm_step_plan *p, const pm_node *n, const pm_step_node *c,
                            pm_step_traffic *out)
{
    out->tr.hbm_bytes = out->tr.link_bytes = 0.0;
    pm_node_traffic_hw(p->s, &p->ar, &p->ar_fused, n, &c->hbm, 1.0, &out->tr);
    if (p->prefetching && c->bytes > 0) {
        const bool ignored = p->s->accel.prefetch_consumer == PM_CONSUMER_STREAM &&
                             pm_stream_consumer_cost(&c->l2, &c->hbm) == &c->hbm;
        out->tr_pf.hbm_bytes = (ignored ? c->hbm.hbm_bytes : c->l2.hbm_bytes) + c->pf.hbm_bytes;
        out->tr_pf.link_bytes = out->tr.link_bytes;
        out->tr_pf.l2_read_bytes = out->tr.l2_read_bytes + (ignored ? 0.0 : c->bytes);
    }
}

/* What a node with its costs (node_costs) moves, served from HBM and, when its prefetched
 * variant is costed, prefetched: what reads the node alone, then node_traffic_hw. Only
 * estimates need it: the time path leaves it out. */
static void node_traffic(const pm_step_plan *p, const pm_node *n, const pm_step_node *c,
                         pm_step_traffic *out)
{
    out->tr = out->tr_pf = (pm_traffic){0};
    pm_node_traffic_fixed(n, 1.0, &out->tr);
    if (p->prefetching && c->bytes > 0) {
        out->tr_pf = out->tr;
        out->tr_pf.l2_write_bytes += c->bytes;
    }
    node_traffic_hw(p, n, c, out);
}

/* acc += w t in the fields that read the hardware (node_traffic_hw's; a kept count's others
 * hold). */
static void add_hw(pm_traffic *acc, const pm_traffic *t, double w)
{
    acc->hbm_bytes += w * t->hbm_bytes;
    acc->link_bytes += w * t->link_bytes;
}

/* The start of a plan's plain sum: the head's traffic, or, kept, the sum kept from another
 * hardware point with the head's fields that read the hardware (the others are summed again
 * by add_hw only in those fields). */
static pm_traffic rest_start(bool kept, const pm_traffic *rest, const pm_traffic *head)
{
    if (!kept)
        return *head;
    pm_traffic r = *rest;
    r.hbm_bytes = head->hbm_bytes;
    r.link_bytes = head->link_bytes;
    return r;
}

/* Head, tail and every layer's nodes but the attention, nothing prefetched; kept: from the
 * template's count, only the fields that read the hardware summed again (each field is its own
 * sum, in the same order: the same numbers). */
static void plain_total(pm_step_plan *p, bool kept)
{
    void (*add)(pm_traffic *, const pm_traffic *, double) = kept ? add_hw : pm_traffic_add;
    const pm_template_counts *k = &p->tmpl.counts;
    p->plain_rest_tr = rest_start(kept, &k->rest, &p->head_tr);
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < n_of(p, m) && p->all_mlp[m] > 0; i++)
            if (i != p->attn)
                add(&p->plain_rest_tr, &traffic_of(p, m)[i].tr, p->all_mlp[m]);
    for (int i = 0; i < p->tmpl.n_tail; i++)
        add(&p->plain_rest_tr, &k->tail[i].tr, 1.0);
}

/* The traffic of the nodes of a template counted at another hardware point (kept) is counted
 * again only in its fields that read the hardware (issue 46 item 3). */
void pm_step_plan_count(pm_step_plan *p)
{
    const pm_template *t = &p->tmpl;
    pm_template_counts *k = &p->tmpl.counts;
    const bool kept = k->ready && k->prefetching == p->prefetching;
    if (!kept) /* a template counted anew: PRESERVE's decisions and sum kept are another's */
        p->decided.ready = p->decided.summed = false;
    void (*count)(const pm_step_plan *, const pm_node *, const pm_step_node *,
                  pm_step_traffic *) = kept ? node_traffic_hw : node_traffic;
    p->head_tr = (pm_traffic){0};
    for (int i = 0; i < t->n_head; i++)
        pm_node_traffic(p->s, &p->ar, &p->ar_fused, &t->head[i], &p->head_cost[i], 1.0,
                        &p->head_tr);
    for (int i = 0; i < t->n_layer; i++)
        count(p, &t->layer[i], &p->layer[i], &k->layer[i]);
    for (int i = 0; i < t->n_moe; i++)
        count(p, &t->moe[i], &p->moe[i], &k->moe[i]);
    for (int i = 0; i < t->n_tail; i++)
        count(p, &t->tail[i], &p->tail[i], &k->tail[i]);
    p->attn_tr[0] = p->attn_tr[1] = (pm_step_traffic){{0, 0, 0, 0, {0}}, {0, 0, 0, 0, {0}}};
    if (p->attn >= 0)
        p->attn_tr[0] = k->layer[p->attn];
    if (p->attn >= 0 && p->all_class[1] > 0) {
        count(p, &p->attn_node[1], &p->attn_cost[1], &k->attn_local);
        p->attn_tr[1] = k->attn_local;
    }
    /* What the attention moves is affine in the positions it reads (its KV bytes and flops
     * are), the same in both classes, so its slope, measured one position on, gives it at any
     * context without costing the node. */
    p->attn_dtr = p->attn_dtr_pf = p->attn_dtr_kv = p->attn_dtr_kv_pf = (pm_traffic){0};
    if (p->attn >= 0 && (p->attn_dkv > 0 || p->attn_dflop > 0)) {
        pm_node a = p->attn_node[0];
        a.flop += p->attn_dflop;
        a.kv_bytes += p->attn_dkv;
        pm_step_node one;
        pm_step_traffic one_tr;
        node_costs(&p->cost, &p->ar, &p->ar_fused, &a, p->prefetching, &one);
        node_traffic(p, &a, &one, &one_tr);
        const pm_step_traffic *at0 = &p->attn_tr[0];
        p->attn_dtr = one_tr.tr;
        pm_traffic_add(&p->attn_dtr, &at0->tr, -1.0);
        p->attn_dtr_pf = one_tr.tr_pf;
        pm_traffic_add(&p->attn_dtr_pf, &at0->tr_pf, -1.0);
    }
    /* Block-sparse layers read fewer KV positions than they score: the KV bytes' part of the
     * slope apart (traffic_attention). */
    if (p->attn >= 0 && p->attn_dkv > 0 && p->all_class[1] > 0 && p->s->model.sparse_block > 0) {
        pm_node a = p->attn_node[0];
        pm_step_node one;
        pm_step_traffic one_tr;
        const pm_step_traffic *at0 = &p->attn_tr[0];
        a.kv_bytes += p->attn_dkv;
        node_costs(&p->cost, &p->ar, &p->ar_fused, &a, p->prefetching, &one);
        node_traffic(p, &a, &one, &one_tr);
        p->attn_dtr_kv = one_tr.tr;
        pm_traffic_add(&p->attn_dtr_kv, &at0->tr, -1.0);
        p->attn_dtr_kv_pf = one_tr.tr_pf;
        pm_traffic_add(&p->attn_dtr_kv_pf, &at0->tr_pf, -1.0);
    }
    plain_total(p, kept);
    k->rest = p->plain_rest_tr;
    k->prefetching = p->prefetching;
    k->ready = true;
    p->counted = true;
}

/* The periods of each (MLP class of a layer; attention and MLP class of the next) triple: for
 * a dense model the attention classes of layers 1..L-1; for a MoE model counted layer by layer
 * (once per plan, O(L)), with the layers of each (attention, MLP) class. Where both MLP classes
 * communicate first at the same node, the next layer's nodes before it are the same in both
 * and a period is keyed by its own layer's MLP class twice ([m][c][m]): half the periods to
 * schedule. */
static void count_pairs(pm_step_plan *p)
{
    const pm_model *m = &p->s->model;
    memset(p->n_pair, 0, sizeof p->n_pair);
    memset(p->all_cm, 0, sizeof p->all_cm);
    if (p->tmpl.n_moe == 0) {
        p->all_mlp[0] = p->layers;
        p->all_mlp[1] = 0;
        p->mlp0 = p->mlp_last = 0;
        p->n_pair[0][0][0] = p->n_class[0];
        p->n_pair[0][1][0] = p->n_class[1];
        p->all_cm[0][0] = p->all_class[0];
        p->all_cm[1][0] = p->all_class[1];
        return;
    }
    p->all_mlp[1] = pm_model_moe_layers(m);
    p->all_mlp[0] = p->layers - p->all_mlp[1];
    p->mlp0 = pm_model_layer_is_moe(m, 0);
    p->mlp_last = pm_model_layer_is_moe(m, p->layers - 1);
    p->all_cm[pm_model_layer_is_local(m, 0)][p->mlp0]++;
    const bool alike = p->first_comm == p->moe_first_comm;
    int mlp = p->mlp0;
    for (int l = 0; l + 1 < p->layers; l++) {
        const int next = pm_model_layer_is_moe(m, l + 1), c = pm_model_layer_is_local(m, l + 1);
        p->n_pair[mlp][c][alike ? mlp : next]++;
        p->all_cm[c][next]++;
        mlp = next;
    }
}

/* Where the periods of a layer of MLP class m start: its first communication after the
 * attention. */
static int fc_of(const pm_step_plan *p, int m)
{
    return m ? p->moe_first_comm : p->first_comm;
}

/* The MoE layer's attention part must be the dense layer's, node for node (they come from one
 * builder), up to the first communication of either: the periods rely on it. Where the two
 * first communications differ (a dense layer's MLP beside data-parallel attention gathers its
 * tokens after norm2, a MoE layer dispatches after its router), nothing communicates before
 * the attention (the collective there is sequence parallelism's, which MoE layers refuse). */
static pm_status moe_check(const pm_step_plan *p, pm_error *err)
{
    if (p->tmpl.n_moe == 0)
        return PM_OK;
    const int fd = p->first_comm, fm = p->moe_first_comm;
    const int common = fd < fm ? fd : fm;
    /* No communication at all (one device) is alike too. */
    bool same = (fd == fm || (fm >= 0 && fd >= 0 && p->pre_comm < 0)) &&
                (p->attn < 0 || ((common < 0 || p->attn < common) &&
                                 p->tmpl.moe[p->attn].kind == PM_NODE_ATTENTION));
    for (int i = 0; same && i < common; i++)
        same = p->tmpl.moe[i].kind == p->tmpl.layer[i].kind;
    if (!same)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.model",
                       "the MoE layer's attention part differs from the dense layer's");
    return PM_OK;
}

/* The scenario's roofline terms and allreduce models, from like when it has them (a plan of
 * the same scenario). */
static pm_status plan_models(const pm_scenario *s, const pm_step_plan *like, pm_step_plan *p,
                             pm_error *err)
{
    if (like) {
        p->cost = like->cost; /* of s but for its batch, which only the host work reads */
        p->cost.s = s;
        p->ar = like->ar;
        p->ar_fused = like->ar_fused;
        return PM_OK;
    }
    pm_cost_ctx_init(s, &p->cost);
    pm_status st = pm_allreduce_algo_check(s->cluster.topology, s->cluster.algorithm, err);
    if (st != PM_OK)
        return st;
    pm_ar_model_init(&s->cluster, s->cluster.algorithm, &p->ar);
    pm_ar_model_init_fused(&s->cluster, &p->ar_fused);
    return PM_OK;
}

/* The layer's communication nodes around its attention: first_comm, the first after it (where
 * the periods start; the first of all without attention), and pre_comm, the one before it
 * (sequence parallelism's all-gather), -1 when none. */
static void find_comms(pm_step_plan *p)
{
    p->first_comm = p->pre_comm = p->moe_first_comm = -1;
    for (int i = 0; i < p->tmpl.n_layer; i++) {
        if (!p->layer[i].is_comm)
            continue;
        if (p->attn >= 0 && i < p->attn) {
            if (p->pre_comm < 0)
                p->pre_comm = i;
        } else if (p->first_comm < 0) {
            p->first_comm = i;
        }
    }
    for (int i = p->attn >= 0 ? p->attn : 0; i < p->tmpl.n_moe && p->moe_first_comm < 0; i++)
        if (p->moe[i].is_comm)
            p->moe_first_comm = i;
}

/* Where the previous layer's last window stops in a layer of MLP class m: at its collective
 * before the attention, or at its first communication. */
static int lead_end(const pm_step_plan *p, int m)
{
    return p->pre_comm >= 0 ? p->pre_comm : fc_of(p, m);
}

/* Whether node i before the first communication of a layer of MLP class m is prefetched by
 * its own layer's window (the one opened by pre_comm) rather than by the previous layer's last
 * window. */
static bool own_window(const pm_step_plan *p, int i, int m)
{
    return p->pre_comm >= 0 && i > p->pre_comm && i < fc_of(p, m);
}

pm_status pm_step_plan_build(const pm_scenario *s, const pm_step *step, bool fused,
                             bool prefetching, pm_step_plan *p, pm_error *err)
{
    return pm_step_plan_build_like(s, NULL, step, fused, prefetching, p, err);
}

static pm_status plan_cost(const pm_scenario *s, const pm_step_plan *like, const pm_step *step,
                           bool prefetching, bool keep, pm_step_plan *p, pm_error *err);

/* The plan of step built anew into p, its nodes costed (plan_cost; keep: its rows keep the
 * costs, for a template costed again at other hardware points). */
static pm_status build_new(const pm_scenario *s, const pm_step_plan *like, const pm_step *step,
                           bool fused, bool prefetching, bool keep, pm_step_plan *p,
                           pm_error *err)
{
    p->from = NULL; /* its nodes are rewritten */
    pm_status st = pm_template_build(s, step, fused, &p->tmpl, err);
    if (st != PM_OK)
        return st;
    p->tmpl.rows.ready = p->tmpl.counts.ready = p->tmpl.fused.ready = false; /* new nodes */
    p->decided.ready = p->decided.summed = false;
    return plan_cost(s, like, step, prefetching, keep, p, err);
}

pm_status pm_step_plan_build_like(const pm_scenario *s, const pm_step_plan *like,
                                  const pm_step *step, bool fused, bool prefetching,
                                  pm_step_plan *p, pm_error *err)
{
    return build_new(s, like, step, fused, prefetching, false, p, err);
}

pm_status pm_step_plan_compile(const pm_scenario *s, const pm_step_plan *like,
                               const pm_step *step, bool prefetching, pm_step_plan *p,
                               pm_error *err)
{
    return build_new(s, like, step, false, prefetching, true, p, err);
}

/* The nodes of template `from` that it uses, into `to` (the rest of `to` is left as it is). */
static void template_copy(pm_template *to, const pm_template *from)
{
    memcpy(to->head, from->head, (size_t)from->n_head * sizeof to->head[0]);
    memcpy(to->layer, from->layer, (size_t)from->n_layer * sizeof to->layer[0]);
    memcpy(to->tail, from->tail, (size_t)from->n_tail * sizeof to->tail[0]);
    memcpy(to->moe, from->moe, (size_t)from->n_moe * sizeof to->moe[0]);
    to->n_head = from->n_head;
    to->n_layer = from->n_layer;
    to->n_tail = from->n_tail;
    to->n_moe = from->n_moe;
    to->moe_reads = from->moe_reads;
    to->attn_next = from->attn_next;
    to->attn_local = from->attn_local;
    to->kv_group = from->kv_group;
    const pm_template_rows *fr = &from->rows;
    pm_template_rows *tr = &to->rows;
    tr->ready = fr->ready;
    tr->key = fr->key;
    if (fr->ready) {
        memcpy(tr->head, fr->head, (size_t)from->n_head * sizeof tr->head[0]);
        memcpy(tr->layer, fr->layer, (size_t)from->n_layer * sizeof tr->layer[0]);
        memcpy(tr->tail, fr->tail, (size_t)from->n_tail * sizeof tr->tail[0]);
        memcpy(tr->moe, fr->moe, (size_t)from->n_moe * sizeof tr->moe[0]);
        tr->attn_local = fr->attn_local;
    }
    const pm_template_counts *fc = &from->counts;
    pm_template_counts *tc = &to->counts;
    tc->ready = fc->ready;
    to->fused.ready = from->fused.ready;
    if (from->fused.ready) {
        const pm_template_fused *ff = &from->fused;
        pm_template_fused *tf = &to->fused;
        tf->chunks = ff->chunks;
        tf->counted = ff->counted;
        tf->rest = ff->rest;
        for (int m = 0; m < 2; m++) {
            tf->n[m] = ff->n[m];
            memcpy(tf->layer[m], ff->layer[m], (size_t)ff->n[m] * sizeof tf->layer[m][0]);
            memcpy(tf->map[m], ff->map[m], (size_t)n_of_tmpl(from, m) * sizeof tf->map[m][0]);
        }
    }
    if (!fc->ready)
        return;
    tc->prefetching = fc->prefetching;
    memcpy(tc->layer, fc->layer, (size_t)from->n_layer * sizeof tc->layer[0]);
    memcpy(tc->tail, fc->tail, (size_t)from->n_tail * sizeof tc->tail[0]);
    memcpy(tc->moe, fc->moe, (size_t)from->n_moe * sizeof tc->moe[0]);
    tc->attn_local = fc->attn_local;
    tc->rest = fc->rest;
}

pm_status pm_step_plan_build_from(const pm_scenario *s, const pm_step_plan *like,
                                  const pm_step *step, const pm_template *tmpl,
                                  bool prefetching, pm_step_plan *p, pm_error *err)
{
    if (p->from != tmpl) { /* another template's room: what it kept is the other's */
        template_copy(&p->tmpl, tmpl);
        p->from = tmpl;
        p->decided.ready = p->decided.summed = p->decided.region_ok = false;
    }
    return plan_cost(s, like, step, prefetching, true, p, err);
}

/* The per-hardware part of a plan's build: p->tmpl holds step's template; costs its nodes at
 * s. keep: the rows' key takes this point (pm_cost_key_at), so their costs are served and
 * kept (kept_costs); else the key has no point (gen 0) and every node is costed alone. */
static pm_status plan_cost(const pm_scenario *s, const pm_step_plan *like, const pm_step *step,
                           bool prefetching, bool keep, pm_step_plan *p, pm_error *err)
{
    const pm_template *t = &p->tmpl;
    pm_template_rows *rw = &p->tmpl.rows;
    pm_status st = PM_OK;
    const pm_phase phase = step->phase;
    p->s = s;
    p->ctx0 = step->context;
    p->layers = s->model.layers;
    p->cap = pm_accelerator_l2_window_bytes(&s->accel);
    p->prefetching = prefetching && s->cluster.devices > 1;
    if ((st = plan_models(s, like, p, err)) != PM_OK)
        return st;
    const int local = pm_model_local_layers(&s->model);
    template_rows(s, local > 0, &p->tmpl);
    /* The rows' kept costs serve where what the costs read of the hardware is as they were
     * made at (issue 46 item 3). */
    if (keep) {
        pm_cost_hw hw;
        pm_cost_hw_init(&p->cost, &p->ar, &p->ar_fused, p->prefetching, &hw);
        pm_cost_key_at(&rw->key, &hw);
    }
    p->head_s = 0.0;
    p->counted = false;
    for (int i = 0; i < t->n_head; i++) {
        pm_step_node h;
        kept_costs(p, &t->head[i], &rw->head[i], false, &h);
        p->head_cost[i] = h.hbm;
        p->head_s += p->head_cost[i].total_s;
    }
    p->attn = -1;
    p->chunks = 0;
    for (int i = 0; i < t->n_layer; i++) {
        const pm_node *n = &t->layer[i];
        if (n->kind == PM_NODE_ATTENTION)
            p->attn = i;
        kept_costs(p, n, &rw->layer[i], p->prefetching, &p->layer[i]);
        if (n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE && p->chunks == 0)
            p->chunks = p->layer[i].hbm.chunks;
    }
    p->layer_rest_s = 0.0;
    for (int i = 0; i < t->n_layer; i++)
        if (i != p->attn)
            p->layer_rest_s += p->layer[i].hbm.total_s;
    p->moe_rest_s = 0.0;
    for (int i = 0; i < t->n_moe; i++) {
        const pm_node *n = &t->moe[i];
        kept_costs(p, n, &rw->moe[i], p->prefetching, &p->moe[i]);
        if (i != p->attn)
            p->moe_rest_s += p->moe[i].hbm.total_s;
    }
    find_comms(p);
    if ((st = moe_check(p, err)) != PM_OK)
        return st;
    p->tail_s = 0.0;
    for (int i = 0; i < t->n_tail; i++) {
        kept_costs(p, &t->tail[i], &rw->tail[i], p->prefetching, &p->tail[i]);
        p->tail_s += p->tail[i].hbm.total_s;
    }
    p->attn_dflop = p->attn_dkv = 0.0;
    if (p->attn >= 0 && phase == PM_PHASE_DECODE) {
        p->attn_dflop = t->attn_next.flop - t->layer[p->attn].flop;
        p->attn_dkv = t->attn_next.kv_bytes - t->layer[p->attn].kv_bytes;
    }
    p->class0 = pm_model_layer_is_local(&s->model, 0) ? 1 : 0;
    p->all_class[1] = local;
    p->all_class[0] = p->layers - local;
    p->n_class[0] = p->all_class[0] - (p->class0 == 0);
    p->n_class[1] = p->all_class[1] - (p->class0 == 1);
    if (p->attn >= 0) {
        p->attn_node[0] = t->layer[p->attn];
        p->attn_cost[0] = p->layer[p->attn];
    }
    if (p->attn >= 0 && local > 0) {
        p->attn_node[1] = t->attn_local;
        kept_costs(p, &p->attn_node[1], &rw->attn_local, p->prefetching, &p->attn_cost[1]);
    }
    /* The pairs depend on the model alone: a plan of the same scenario has them (O(L) to
     * count for a MoE model). */
    if (like && (like->tmpl.n_moe > 0) == (t->n_moe > 0) &&
        (like->first_comm == like->moe_first_comm) == (p->first_comm == p->moe_first_comm)) {
        memcpy(p->n_pair, like->n_pair, sizeof p->n_pair);
        memcpy(p->all_cm, like->all_cm, sizeof p->all_cm);
        p->all_mlp[0] = like->all_mlp[0];
        p->all_mlp[1] = like->all_mlp[1];
        p->mlp0 = like->mlp0;
        p->mlp_last = like->mlp_last;
    } else {
        count_pairs(p);
    }
    return PM_OK;
}

/* One MLP class's layer of the fused plan f from u's (m 0 dense, 1 MoE): the nodes
 * pm_template_fuse_layer makes, the fused ones costed (the chunk search) and counted here, the
 * others read from u where they are. Adds their times but the attention's to the class's rest
 * and, counted, their traffic times the class's layers to f->plain_rest_tr, node by node in
 * layer order as plain_total adds a built plan's: the sums are those of the plan built fused. */
static void fuse_class(pm_step_plan *u, int m, bool kept, pm_step_plan *f)
{
    void (*add)(pm_traffic *, const pm_traffic *, double) = kept ? add_hw : pm_traffic_add;
    const pm_node *out = u->tmpl.fused.layer[m];
    const int *map = u->tmpl.fused.map[m];
    const int n_in = n_of(u, m);
    double *rest = m ? &f->moe_rest_s : &f->layer_rest_s;
    *rest = 0.0;
    if (n_in == 0)
        return;
    if (m == 0)
        f->attn = u->attn >= 0 ? map[u->attn] : -1;
    const bool add_tr = f->counted && f->all_mlp[m] > 0;
    for (int i = 0; i < n_in; i++) {
        const int j = map[i];
        if (j < 0)
            continue; /* an allreduce absorbed into the fused node before it */
        const pm_step_node *c = &costs_of(u, m)[i];
        const pm_step_traffic *t = &traffic_of(u, m)[i];
        pm_step_node fc;
        pm_step_traffic ft;
        if (out[j].kind == PM_NODE_FUSED_MATMUL_ALLREDUCE) {
            /* Its MatMul's row serves it: build.c's fuse changes the node's kind and message,
             * which other_cost reads from the node, and the row's knee, which a fused node's
             * cost does not read. */
            pm_cost_row *row = m ? &u->tmpl.rows.moe[i] : &u->tmpl.rows.layer[i];
            fused_costs(f, &u->tmpl.rows.key, &out[j], row, &fc);
            if (f->counted)
                (kept ? node_traffic_hw : node_traffic)(f, &out[j], &fc, &ft);
            if (f->chunks == 0)
                f->chunks = fc.hbm.chunks;
            c = &fc;
            t = &ft;
        }
        if (m == 0 && c->is_comm && f->first_comm < 0)
            f->first_comm = j;
        if (j == f->attn)
            continue;
        *rest += c->hbm.total_s;
        if (add_tr)
            add(&f->plain_rest_tr, &t->tr, f->all_mlp[m]);
    }
}

/* The fused layers of u's template (pm_template_fused), unless it has them at u's option. */
static void template_fused(pm_step_plan *u)
{
    pm_template_fused *fz = &u->tmpl.fused;
    const int chunks = u->s->options.fused_chunks;
    if (fz->ready && fz->chunks == chunks)
        return;
    for (int m = 0; m < 2; m++) {
        fz->n[m] = 0;
        if (n_of(u, m) > 0)
            pm_template_fuse_layer(tmpl_of(u, m), n_of(u, m), chunks, fz->layer[m], &fz->n[m],
                                   fz->map[m]);
    }
    fz->chunks = chunks;
    fz->counted = false;
    fz->ready = true;
}

void pm_step_plan_fuse(pm_step_plan *u, pm_step_plan *f)
{
    template_fused(u);
    f->s = u->s;
    f->cost = u->cost;
    f->ctx0 = u->ctx0;
    f->layers = u->layers;
    f->cap = u->cap;
    f->prefetching = false;
    f->ar = u->ar;
    f->ar_fused = u->ar_fused;
    /* No nodes: what reads them (Algorithm 1, the regions, the traffic of prefetched steps)
     * serves PRESERVE only, which runs unfused. */
    f->tmpl.n_head = f->tmpl.n_layer = f->tmpl.n_tail = f->tmpl.n_moe = 0;
    f->tmpl.kv_group = u->tmpl.kv_group;
    f->head_s = u->head_s;
    f->tail_s = u->tail_s;
    f->attn_dflop = u->attn_dflop;
    f->attn_dkv = u->attn_dkv;
    for (int c = 0; c < 2; c++) {
        f->attn_node[c] = u->attn_node[c];
        f->attn_cost[c] = u->attn_cost[c];
        f->attn_tr[c] = u->attn_tr[c];
        f->n_class[c] = u->n_class[c];
        f->all_class[c] = u->all_class[c];
        f->all_mlp[c] = u->all_mlp[c];
    }
    f->class0 = u->class0;
    f->counted = u->counted;
    f->head_tr = u->head_tr;
    f->attn_dtr = u->attn_dtr;
    f->attn_dtr_pf = u->attn_dtr_pf;
    f->attn_dtr_kv = u->attn_dtr_kv;
    f->attn_dtr_kv_pf = u->attn_dtr_kv_pf;
    memcpy(f->n_pair, u->n_pair, sizeof f->n_pair);
    memcpy(f->all_cm, u->all_cm, sizeof f->all_cm);
    f->mlp0 = u->mlp0;
    f->mlp_last = u->mlp_last;
    f->first_comm = f->moe_first_comm = -1;
    f->chunks = 0;
    /* Counted at another point of u's template (and its counts), the fused plan's traffic is
     * counted again in the fields that read the hardware only, as pm_step_plan_count's. */
    pm_template_fused *fz = &u->tmpl.fused;
    const bool kept = f->counted && fz->counted;
    f->plain_rest_tr = rest_start(kept, &fz->rest, &u->head_tr);
    for (int m = 0; m < 2; m++)
        fuse_class(u, m, kept, f);
    for (int i = 0; f->counted && i < u->tmpl.n_tail; i++)
        (kept ? add_hw : pm_traffic_add)(&f->plain_rest_tr, &u->tmpl.counts.tail[i].tr, 1.0);
    if (f->counted) {
        fz->rest = f->plain_rest_tr;
        fz->counted = true;
    }
}

/* The capacities that answer every comparison of Algorithm 1 as the plan's did: (lo, hi]. */
typedef struct cap_range {
    double lo, hi;
} cap_range;

/* Algorithm 1's test: a window's running sum with the next node's bytes strictly under the
 * capacity. iv (may be NULL) narrows to the capacities that answer it alike: above sum when it
 * passed, at or below sum when it failed (a NaN sum fails at every capacity). */
static bool under_cap(const pm_step_plan *p, double sum, cap_range *iv)
{
    const bool under = sum < p->cap;
    if (iv && under && sum > iv->lo)
        iv->lo = sum;
    if (iv && !under && sum < iv->hi)
        iv->hi = sum;
    return under;
}

/* The room left under the capacity by a comparison that passed with the attention's bytes in
 * its sum (has_a): how much they may grow before it fails. */
static void note_slack(double *slack, bool has_a, double room)
{
    if (slack && has_a && room < *slack)
        *slack = room;
}

/* The window of the layer's collective before its attention (pre_comm): from it to the next
 * communication, as every window (decide's rule), with its slack. */
static void window_before(const pm_step_plan *p, int m, const pm_step_node *L,
                          const double *bytes, bool *pf, double *slack, cap_range *iv)
{
    double sum = 0.0;
    bool has_a = false;
    for (int i = p->pre_comm + 1; i < fc_of(p, m) && !L[i].is_comm; i++) {
        const double b = bytes[i];
        if (!(b > 0))
            continue;
        if (!under_cap(p, sum + b, iv) || (L[i].routed && !L[p->pre_comm].is_a2a))
            return;
        has_a = has_a || i == p->attn;
        note_slack(slack, has_a, p->cap - (sum + b));
        sum += b;
        pf[i] = true;
    }
}

/* The windows of the tail's own collectives (sequence parallelism's all-gather before the LM
 * head), each to the next communication or the end. */
static void tail_windows(const pm_step_plan *p, bool *pft, cap_range *iv)
{
    const int nt = p->tmpl.n_tail;
    for (int j = 0; j < nt; j++) {
        if (!p->tail[j].is_comm)
            continue;
        double sum = 0.0;
        for (int k = j + 1; k < nt && !p->tail[k].is_comm; k++) {
            const double b = p->tail[k].bytes;
            if (!(b > 0))
                continue;
            if (!under_cap(p, sum + b, iv))
                break;
            sum += b;
            pft[k] = true;
        }
    }
}

/* Algorithm 1 over the chain of a layer of MLP class m whose node i has bytes[i] (the
 * attention's at the step's context), followed by a layer of MLP class mn whose node i has
 * next[i]: each window walks from its communication node to the next one and stops at the
 * first node that would reach the capacity, or at a routed expert under a window not opened by
 * an all-to-all (insert.c's rule). pf[] marks the layer's nodes its own windows prefetch (from
 * its first communication on, and behind a collective before its attention), lead[] the next
 * layer's nodes before its first communication that the layer's last window prefetches, pft[]
 * the tail nodes (were the layer the last). Returns a signature of the decisions. slack (may
 * be NULL) receives how far the attention's bytes may grow before a decision changes (the
 * least room of the comparisons whose sums hold them; INFINITY when none does): the bytes only
 * add to sums, so a larger attention only turns prefetches off. iv (may be NULL) narrows to the
 * capacities that take the same decisions (under_cap). */
static unsigned decide(const pm_step_plan *p, int m, int mn, const double *bytes,
                       const double *next, bool *pf, bool *lead, bool *pft, double *slack,
                       cap_range *iv)
{
    if (slack)
        *slack = INFINITY;
    const int n = n_of(p, m), nt = p->tmpl.n_tail, fc = fc_of(p, m), le = lead_end(p, mn);
    memset(pf, 0, (size_t)n * sizeof *pf);
    memset(lead, 0, (size_t)n_of(p, mn) * sizeof *lead);
    memset(pft, 0, (size_t)nt * sizeof *pft);
    if (!p->prefetching || fc < 0 || fc_of(p, mn) < 0)
        return 0;
    const pm_step_node *L = costs_of(p, m);
    if (p->pre_comm >= 0)
        window_before(p, m, L, bytes, pf, slack, iv);
    for (int j = fc; j < n; j++) {
        if (!L[j].is_comm)
            continue;
        double sum = 0.0;
        bool stop = false, has_a = false;
        int i = j + 1;
        for (; i < n && !L[i].is_comm && !stop; i++) {
            const double b = bytes[i];
            if (b > 0) {
                if (!under_cap(p, sum + b, iv) || (L[i].routed && !L[j].is_a2a))
                    stop = true;
                else {
                    has_a = has_a || i == p->attn;
                    note_slack(slack, has_a, p->cap - (sum + b));
                    sum += b;
                    pf[i] = true;
                }
            }
        }
        if (stop || i < n)
            continue; /* the window ended inside the layer */
        /* The layer's last window continues into the next layer... */
        double sum_next = sum;
        bool has_next = has_a;
        for (int k = 0; k < le; k++) {
            const double b = next[k];
            if (b > 0) {
                if (!under_cap(p, sum_next + b, iv))
                    break;
                has_next = has_next || k == p->attn;
                note_slack(slack, has_next, p->cap - (sum_next + b));
                sum_next += b;
                lead[k] = true;
            }
        }
        /* ...and, after the last layer, into the tail, up to its collective (if any: the
         * all-gather before the LM head, whose own window follows). */
        for (int k = 0; k < nt && !p->tail[k].is_comm; k++) {
            const double b = p->tail[k].bytes;
            if (b > 0) {
                if (!under_cap(p, sum + b, iv))
                    break;
                note_slack(slack, has_a, p->cap - (sum + b));
                sum += b;
                pft[k] = true;
            }
        }
    }
    tail_windows(p, pft, iv);
    unsigned sig = 0;
    for (int i = lead_end(p, m); i < n; i++)
        sig = sig * 2u + pf[i];
    for (int i = 0; i < le; i++)
        sig = sig * 2u + lead[i];
    for (int i = 0; i < nt; i++)
        sig = sig * 2u + pft[i];
    return sig;
}

/* The prefetchable bytes of a layer of MLP class m with attention bytes attn_bytes. */
static void layer_bytes(const pm_step_plan *p, int m, double attn_bytes, double *bytes)
{
    const pm_step_node *L = costs_of(p, m);
    for (int i = 0; i < n_of(p, m); i++)
        bytes[i] = L[i].bytes;
    if (p->attn >= 0)
        bytes[p->attn] = attn_bytes;
}

typedef pm_step_seg seg;

static void seg_add(seg *g, const pm_step_node *nd, bool prefetched, int *trigger)
{
    const int k = g->n++;
    g->is_ar[k] = nd->is_ar;
    g->pf[k] = -1;
    g->hbm_cost[k] = &nd->hbm;
    if (prefetched && *trigger >= 0) {
        g->trig[g->n_pf] = *trigger;
        g->pf_cost[g->n_pf] = &nd->pf;
        g->pf[k] = g->n_pf++;
        g->cost[k] = &nd->l2;
    } else {
        g->cost[k] = &nd->hbm;
    }
    g->is_rs[k] = nd->is_rs;
    /* An all-gather after a reduce-scatter opens no window: the reduce-scatter's runs on
     * (insert.c). Nothing prefetchable lies between them in a layer, so the decisions are
     * those of the all-gather's own window; only the trigger moves earlier. */
    if (nd->is_comm && !(nd->is_ag && *trigger >= 0 && g->is_rs[*trigger]))
        *trigger = k;
}

/* The recurrence without HBM sharing (step.c's header) over the ops of g from pos->k on, the
 * arrays holding the starts and prefetch ends of the ops before: stops before op `stop`
 * (returning false; pos then holds the state there), or at the start of op `until` or after
 * the last op (returning true, *out that start or the makespan). */
static bool seg_walk(const seg *g, bool stream, int until, int stop, pm_step_seg_pos *pos,
                     double *op_start, double *pf_end, double *out)
{
    double t = pos->t, pf_free = pos->pf_free;
    int next_pf = pos->next_pf; /* prefetches are placed when their consumer is reached */
    for (int k = pos->k; k < g->n; k++) {
        if (k == stop) {
            *pos = (pm_step_seg_pos){k, next_pf, t, pf_free};
            return false;
        }
        double start = t, pe = 0.0;
        const int w = g->pf[k];
        if (w >= 0) {
            for (; next_pf <= w; next_pf++) {
                const double trig = op_start[g->trig[next_pf]];
                const double s0 = pf_free > trig ? pf_free : trig;
                pf_free = pf_end[next_pf] = s0 + g->pf_cost[next_pf]->total_s;
            }
            pe = pf_end[w];
            if (!stream && pe > start)
                start = pe;
        }
        if (k == until) {
            *out = start;
            return true;
        }
        op_start[k] = start;
        double end = start + (stream && w >= 0
                                  ? pm_stream_consumer_cost(g->cost[k], g->hbm_cost[k])
                                  : g->cost[k])->total_s;
        if (stream && w >= 0) {
            const double own = start + g->hbm_cost[k]->total_s;
            const double data = pe < own ? pe : own;
            if (data > end)
                end = data;
            if (pe > end) /* done before its prefetch: the rest of it would be L2 hits */
                pf_free = pf_end[w] = end;
        }
        t = end;
    }
    /* Every prefetch's consumer is in the segment (seg_add adds them together), so all were
     * placed, and none ends after its consumer. */
    *out = t > pf_free ? t : pf_free;
    return true;
}

/* Start of main op `until` (or, if until < 0, the makespan). at (may be NULL; not with
 * sharing): the state before op k0, which the ops from k0 on do not change (they write past
 * it): kept at the first call, resumed from at the later ones, to the same result. */
static pm_status seg_run(const seg *g, bool sharing, bool stream, int until, double *out,
                         pm_step_seg_state *at, int k0)
{
    if (!sharing) {
        pm_step_seg_pos pos = {0, 0, 0.0, 0.0};
        if (!at) {
            double op_start[2 * MAXN + 1], pf_end[2 * MAXN + 1];
            seg_walk(g, stream, until, -1, &pos, op_start, pf_end, out);
            return PM_OK;
        }
        if (!at->known) {
            at->pos = pos;
            if (seg_walk(g, stream, until, k0, &at->pos, at->op_start, at->pf_end, out))
                return PM_OK; /* `until` comes first: nothing to keep */
            at->known = true;
        }
        /* In place: the walk writes the arrays only from op k0 and prefetch next_pf on, and
         * the kept position is copied. */
        pos = at->pos;
        seg_walk(g, stream, until, -1, &pos, at->op_start, at->pf_end, out);
        return PM_OK;
    }
    pm_sim_op mo[2 * MAXN + 1], po[2 * MAXN + 1];
    pm_slot ms[2 * MAXN + 1], ps[2 * MAXN + 1];
    for (int k = 0; k < g->n; k++)
        mo[k] = stream && g->pf[k] >= 0
                    ? pm_stream_consumer_op(g->cost[k], g->hbm_cost[k], g->pf[k], g->is_ar[k])
                    : (pm_sim_op){g->cost[k], g->pf[k], g->is_ar[k], NULL, NULL};
    for (int k = 0; k < g->n_pf; k++)
        po[k] = (pm_sim_op){g->pf_cost[k], g->trig[k], false, NULL, NULL};
    pm_schedule tot;
    const int n = until >= 0 ? until : g->n;
    pm_status st = pm_sim_run(mo, (size_t)n, po, (size_t)g->n_pf, true, ms, ps, &tot);
    if (st != PM_OK)
        return st;
    if (until >= 0) {
        /* The op `until` starts when its predecessor ends and its prefetch is done. */
        double start = n > 0 ? ms[n - 1].end_s : 0.0;
        if (!stream && g->pf[until] >= 0 && ps[g->pf[until]].end_s > start)
            start = ps[g->pf[until]].end_s;
        *out = start;
    } else {
        *out = tot.makespan_s;
    }
    return PM_OK;
}

/* Whether the plan's PRESERVE step inserts prefetches (a communication to hide them behind);
 * without, PRESERVE's step is the serial one. */
static bool plan_prefetches(const pm_step_plan *p)
{
    return p->prefetching && p->first_comm >= 0;
}

/* The positions a class's attention reads at ctx beyond those at the plan's context: per KV
 * head (*dkv) and per query head (*dscore) (pm_kv_tokens: the window caps them, block-sparse
 * layers read a share of them). */
static void attention_growth(const pm_step_plan *p, int cls, int64_t ctx, double *dkv,
                             double *dscore)
{
    if (cls == 0) { /* a global layer reads and scores every position */
        *dkv = *dscore = (double)ctx - (double)p->ctx0;
        return;
    }
    const pm_model *m = &p->s->model;
    const double g = p->tmpl.kv_group;
    double s, s0;
    const double c = pm_kv_tokens(m, cls == 1, g, ctx, &s);
    const double c0 = pm_kv_tokens(m, cls == 1, g, p->ctx0, &s0);
    *dkv = c - c0;
    *dscore = s - s0;
}

/* The attention node of a class (0 global, 1 local) at ctx (decode) into *a: the plan's node
 * moved along its slopes by the positions it reads beyond the plan's context. Returns false
 * when it reads as many (*a is the plan's node). */
static bool attention_node(const pm_step_plan *p, int cls, int64_t ctx, pm_node *a)
{
    double dk, ds;
    attention_growth(p, cls, ctx, &dk, &ds);
    *a = p->attn_node[cls];
    if (!(fabs(dk) > 0.0) && !(fabs(ds) > 0.0))
        return false;
    a->flop += p->attn_dflop * ds;
    a->kv_bytes += p->attn_dkv * dk;
    return true;
}

/* The attention node of a class (0 global, 1 local) at ctx (decode), into *out; returns out, or
 * the plan's node at ctx0. Attention is linear in the positions it reads, which the window
 * caps: the local node is the global one at min(ctx, window) positions. With variants false
 * only its cost from HBM is filled (serial and fused steps read nothing else). */
static const pm_step_node *attention_at(const pm_step_plan *p, int cls, int64_t ctx,
                                        bool variants, pm_step_node *out)
{
    pm_node a;
    if (!attention_node(p, cls, ctx, &a))
        return &p->attn_cost[cls];
    node_costs(&p->cost, &p->ar, &p->ar_fused, &a, variants && p->prefetching, out);
    return out;
}

/* The period from a layer's first communication to the next layer's: the layer's nodes L of
 * MLP class m from its first communication on (own decisions pf), then the next layer's nodes
 * N (MLP class mn, its attention class's) up to its first communication, prefetched by the
 * layer's last window (lead) or by their own layer's window before the attention (pf_next).
 * Its time is the start of its last op. */
static void period_seg(const pm_step_plan *p, int m, int mn, const pm_step_node *const *L,
                       const bool *pf, const pm_step_node *const *N, const bool *lead,
                       const bool *pf_next, seg *g)
{
    const int fc = fc_of(p, m), fn = fc_of(p, mn);
    g->n = g->n_pf = 0;
    int trig = -1;
    for (int i = fc; i < n_of(p, m); i++)
        seg_add(g, L[i], pf[i], &trig);
    for (int i = 0; i <= fn; i++)
        seg_add(g, N[i], i < fn && (own_window(p, i, mn) ? pf_next[i] : lead[i]), &trig);
}

/* Combines the decisions of the two classes into one signature: the global one alone when
 * there are no local layers (local 0), else mixed by a multiplicative hash (a plan has a few
 * distinct decision sets, so a collision is very unlikely). */
static unsigned class_signature(unsigned global, unsigned local)
{
    return global ^ (local * 2654435761u);
}

/* The signature of the decisions of every (attention class; MLP class of the layer, of the
 * next) triple, sig[c][m][mn]: the dense triples alone for a dense model (as before MoE), the
 * others mixed in otherwise. */
static unsigned pairs_signature(unsigned sig[2][2][2])
{
    unsigned h = class_signature(sig[0][0][0], sig[1][0][0]);
    static const unsigned mix[3] = {0x9E3779B1u, 0x85EBCA77u, 0xC2B2AE3Du};
    for (int k = 1; k < 4; k++)
        h ^= class_signature(sig[0][k >> 1][k & 1], sig[1][k >> 1][k & 1]) * mix[k - 1];
    return h;
}

/* Algorithm 1 for every (attention class c; MLP class m of a layer, mn of the next) triple the
 * plan holds, with each class's attention bytes attn_bytes[c]: pf[c][m] and lead[m][c][mn] as
 * decide fills them, pft for the last layer's classes. Returns the signature of all; slack (may
 * be NULL) the least room, iv (may be NULL) the capacities that take the same decisions. */
static unsigned decide_all(const pm_step_plan *p, const double *attn_bytes,
                           bool pf[2][2][MAXN], bool lead[2][2][2][MAXN], bool *pft,
                           double *slack, cap_range *iv)
{
    unsigned sig[2][2][2] = {{{0, 0}, {0, 0}}, {{0, 0}, {0, 0}}};
    bool pft_any[MAXN];
    const int cl = p->all_class[0] > 0 ? 0 : 1;
    if (slack)
        *slack = INFINITY;
    for (int c = 0; c < 2; c++) {
        if (p->all_class[c] == 0)
            continue;
        for (int m = 0; m < 2; m++) {
            if (p->all_mlp[m] == 0)
                continue;
            double bytes[MAXN];
            layer_bytes(p, m, attn_bytes[c], bytes);
            /* The triples with periods; one call at least, for the layer's own windows. */
            const bool any = p->n_pair[m][c][0] > 0 || p->n_pair[m][c][1] > 0;
            for (int mn = 0; mn < 2; mn++) {
                if (any ? p->n_pair[m][c][mn] == 0 : mn != m)
                    continue;
                double next[MAXN], room = INFINITY;
                layer_bytes(p, mn, attn_bytes[c], next);
                const bool last = m == p->mlp_last && c == cl;
                sig[c][m][mn] = decide(p, m, mn, bytes, next, pf[c][m], lead[m][c][mn],
                                       last ? pft : pft_any, slack ? &room : NULL, iv);
                if (slack && room < *slack)
                    *slack = room;
            }
        }
    }
    return pairs_signature(sig);
}

/* About where the decisions at ctx change next, from the least room they leave under the
 * capacity (decide's slack): found for full attention in every layer, whose bytes then grow
 * by attn_dkv per position; -1 otherwise. */
static int64_t next_change(const pm_step_plan *p, int64_t ctx, double slack)
{
    const bool guess = p->attn >= 0 && p->all_class[1] == 0 && p->attn_dkv > 0;
    if (!guess || !(slack < INFINITY) || !(slack / p->attn_dkv < 4e18))
        return -1;
    return ctx + (int64_t)ceil(slack / p->attn_dkv);
}

/* The attention of each class at ctx into the region's own nodes (the segments point at
 * them), unless they hold it already (a range's first evaluation is at the context the region
 * was made at). */
static void region_attention(pm_step_region *r, int64_t ctx)
{
    const pm_step_plan *p = r->p;
    if (r->attn_ctx == ctx)
        return;
    r->attn_ctx = ctx;
    for (int c = 0; c < 2; c++) {
        if (p->attn < 0 || p->all_class[c] == 0)
            continue;
        const pm_step_node *a = attention_at(p, c, ctx, true, &r->attn[c]);
        if (a != &r->attn[c])
            r->attn[c] = *a;
    }
}

/* Each attention class's prefetchable bytes in r (0 for a class the plan lacks). */
static void region_attn_bytes(const pm_step_region *r, double *attn_bytes)
{
    const pm_step_plan *p = r->p;
    for (int c = 0; c < 2; c++)
        attn_bytes[c] = p->attn >= 0 && p->all_class[c] > 0 ? r->attn[c].bytes : 0.0;
}

/* The prefetchable bytes Algorithm 1 reads in p with each class's attention bytes attn_bytes
 * (decide_all's): each MLP class's layer nodes, the tail's, the attention's. Returns how many. */
static int decided_bytes(const pm_step_plan *p, const double *attn_bytes, double *out)
{
    int n = 0;
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < n_of(p, m); i++)
            out[n++] = costs_of(p, m)[i].bytes;
    for (int i = 0; i < p->tmpl.n_tail; i++)
        out[n++] = p->tail[i].bytes;
    out[n++] = attn_bytes[0];
    out[n++] = attn_bytes[1];
    return n;
}

/* Whether k took its decisions at ctx with the same bytes (nb of them, decided_bytes'). */
static bool same_bytes(const pm_step_decided *k, int64_t ctx, const double *bytes, int nb)
{
    return k->ready && k->ctx == ctx && k->n_bytes == nb &&
           memcmp(k->bytes, bytes, (size_t)nb * sizeof bytes[0]) == 0;
}

/* Whether p's capacity answers Algorithm 1's comparisons as the one k's decisions were taken
 * at. */
static bool same_answers(const pm_step_plan *p, const pm_step_decided *k)
{
    return k->cap_lo < p->cap && p->cap <= k->cap_hi;
}

/* The region's decisions at ctx (its attention bytes attn_bytes) from k when k took them at
 * ctx with the same bytes and a capacity that answers alike; else taken, and kept in k with
 * the capacities that take them (its sum kept too where they are the decisions it was summed
 * with; its region no longer theirs). */
static void decisions_kept(const pm_step_plan *p, int64_t ctx, const double *attn_bytes,
                           pm_step_decided *k, pm_step_region *r)
{
    double bytes[3 * MAXN + 2];
    const int nb = decided_bytes(p, attn_bytes, bytes);
    const bool same = same_bytes(k, ctx, bytes, nb);
    if (same && same_answers(p, k)) {
        r->sig = k->sig;
        memcpy(r->pf, k->pf, sizeof r->pf);
        memcpy(r->lead, k->lead, sizeof r->lead);
        memcpy(r->pft, k->pft, sizeof r->pft);
        return;
    }
    /* decide_all fills the classes the plan holds: the rest stays false, so the arrays compare
     * whole. */
    memset(r->pf, 0, sizeof r->pf);
    memset(r->lead, 0, sizeof r->lead);
    memset(r->pft, 0, sizeof r->pft);
    cap_range iv = {-INFINITY, INFINITY};
    r->sig = decide_all(p, attn_bytes, r->pf, r->lead, r->pft, NULL, &iv);
    k->region_ok = false;
    k->summed = k->summed && same && memcmp(k->pf, r->pf, sizeof r->pf) == 0 &&
                memcmp(k->lead, r->lead, sizeof r->lead) == 0 &&
                memcmp(k->pft, r->pft, sizeof r->pft) == 0;
    k->ready = true;
    k->ctx = ctx;
    k->cap_lo = iv.lo;
    k->cap_hi = iv.hi;
    k->n_bytes = nb;
    memcpy(k->bytes, bytes, (size_t)nb * sizeof bytes[0]);
    k->sig = r->sig;
    memcpy(k->pf, r->pf, sizeof r->pf);
    memcpy(k->lead, r->lead, sizeof r->lead);
    memcpy(k->pft, r->pft, sizeof r->pft);
}

/* pm_step_region_init with the decisions kept in k (NULL: taken here). */
static void region_make(const pm_step_plan *p, int64_t ctx, bool with_next, pm_step_decided *k,
                        pm_step_region *r)
{
    r->p = p;
    r->sig = 0;
    r->next = -1;
    r->attn_ctx = -1;
    r->last_known = false;
    r->prefetches = plan_prefetches(p);
    if (!r->prefetches)
        return;
    region_attention(r, ctx);
    /* L[c][m]: a layer of attention class c and MLP class m. */
    const int cl = p->all_class[0] > 0 ? 0 : 1;
    double attn_bytes[2], slack = INFINITY;
    for (int m = 0; m < 2; m++) {
        if (p->all_mlp[m] == 0)
            continue;
        const pm_step_node *base = costs_of(p, m);
        for (int c = 0; c < 2; c++) {
            if (p->all_class[c] == 0)
                continue;
            for (int i = 0; i < n_of(p, m); i++)
                r->L[c][m][i] = &base[i];
            if (p->attn >= 0)
                r->L[c][m][p->attn] = &r->attn[c];
        }
    }
    region_attn_bytes(r, attn_bytes);
    if (k && !with_next)
        decisions_kept(p, ctx, attn_bytes, k, r);
    else
        r->sig = decide_all(p, attn_bytes, r->pf, r->lead, r->pft, with_next ? &slack : NULL,
                            NULL);
    for (int m = 0; m < 2; m++)
        for (int c = 0; c < 2; c++)
            for (int mn = 0; mn < 2; mn++) {
                if (p->n_pair[m][c][mn] == 0)
                    continue;
                period_seg(p, m, mn, r->L[c][m], r->pf[c][m], r->L[c][mn], r->lead[m][c][mn],
                           r->pf[c][mn], &r->period[m][c][mn]);
                /* The attention comes after the layer's ops from the first communication on
                 * (period_seg's order); without one nothing changes: 0 keeps nothing. */
                r->period_k0[m][c][mn] = p->attn >= 0 ? n_of(p, m) - fc_of(p, m) + p->attn : 0;
                r->period_at[m][c][mn].known = false;
            }
    if (with_next)
        r->next = next_change(p, ctx, slack);
    /* The last layer from its first communication, and the tail. */
    const int ml = p->mlp_last, fc = fc_of(p, ml);
    seg *g = &r->last;
    g->n = g->n_pf = 0;
    int trig = -1;
    for (int i = fc; i < n_of(p, ml); i++)
        seg_add(g, r->L[cl][ml][i], r->pf[cl][ml][i], &trig);
    for (int i = 0; i < p->tmpl.n_tail; i++)
        seg_add(g, &p->tail[i], r->pft[i], &trig);
}

void pm_step_region_init(const pm_step_plan *p, int64_t ctx, bool with_next, pm_step_region *r)
{
    region_make(p, ctx, with_next, NULL, r);
}

/* The prefix when layer 0 has a collective before its attention: the head and layer 0 up to
 * the start of its first communication, scheduled with that collective's window. */
static pm_status prefix_time(const pm_step_region *r, bool sharing, bool stream, double *out)
{
    const pm_step_plan *p = r->p;
    const int c0 = p->class0, m0 = p->mlp0;
    pm_step_node head[MAXN];
    seg g;
    g.n = g.n_pf = 0;
    int trig = -1;
    for (int i = 0; i < p->tmpl.n_head; i++) {
        head[i] = (pm_step_node){0};
        head[i].hbm = p->head_cost[i];
        seg_add(&g, &head[i], false, &trig);
    }
    for (int i = 0; i <= fc_of(p, m0); i++)
        seg_add(&g, r->L[c0][m0][i], own_window(p, i, m0) && r->pf[c0][m0][i], &trig);
    return seg_run(&g, sharing, stream, g.n - 1, out, NULL, 0);
}

/* The PRESERVE step of a compiled region with its attention as costed: the prefix, the
 * periods and the last layer (step.c's header). */
static pm_status region_time(pm_step_region *r, double *time_s)
{
    const pm_step_plan *p = r->p;
    const int fc = fc_of(p, p->mlp0), c0 = p->class0;
    const bool sharing = p->s->options.hbm_sharing;
    const bool stream = p->s->accel.prefetch_consumer == PM_CONSUMER_STREAM;
    /* Prefix: the embedding and layer 0 up to its first communication, nothing prefetched
     * but by a collective before the attention. */
    double prefix = p->head_s;
    pm_status st;
    if (p->pre_comm >= 0) {
        if ((st = prefix_time(r, sharing, stream, &prefix)) != PM_OK)
            return st;
    } else {
        for (int i = 0; i < fc; i++)
            prefix += r->L[c0][p->mlp0][i]->hbm.total_s;
    }
    /* Periods: from a layer's first communication to the next layer's, one per triple of the
     * layer's MLP class and the next layer's attention and MLP classes. */
    double periods = 0.0;
    for (int m = 0; m < 2; m++)
        for (int c = 0; c < 2; c++)
            for (int mn = 0; mn < 2; mn++) {
                if (p->n_pair[m][c][mn] == 0)
                    continue;
                const seg *g = &r->period[m][c][mn];
                double period = 0.0;
                if ((st = seg_run(g, sharing, stream, g->n - 1, &period,
                                  &r->period_at[m][c][mn], r->period_k0[m][c][mn])) != PM_OK)
                    return st;
                periods += p->n_pair[m][c][mn] * period;
            }
    if (!r->last_known) {
        if ((st = seg_run(&r->last, sharing, stream, -1, &r->last_s, NULL, 0)) != PM_OK)
            return st;
        r->last_known = true;
    }
    *time_s = prefix + periods + r->last_s;
    return PM_OK;
}

pm_status pm_step_region_eval(pm_step_region *r, int64_t ctx, double *time_s)
{
    if (!r->prefetches)
        return pm_step_plan_eval(r->p, false, ctx, time_s, NULL);
    region_attention(r, ctx);
    return region_time(r, time_s);
}

pm_status pm_step_plan_eval(const pm_step_plan *p, bool preserve, int64_t ctx, double *time_s,
                            unsigned *signature)
{
    if (signature)
        *signature = 0;
    if (preserve && plan_prefetches(p)) {
        pm_step_region r;
        pm_step_region_init(p, ctx, false, &r);
        if (signature)
            *signature = r.sig;
        return region_time(&r, time_s);
    }
    /* Serial and fused: a sum of node times, the attention's at ctx. */
    const pm_step_node *at[2] = {NULL, NULL};
    pm_step_node attn[2];
    for (int c = 0; c < 2; c++)
        if (p->attn >= 0 && p->all_class[c] > 0)
            at[c] = attention_at(p, c, ctx, false, &attn[c]);
    double t = p->head_s + p->tail_s;
    for (int c = 0; c < 2; c++)
        if (p->all_class[c] > 0 && at[c])
            t += p->all_class[c] * at[c]->hbm.total_s;
    t += p->all_mlp[0] * p->layer_rest_s + p->all_mlp[1] * p->moe_rest_s;
    *time_s = t;
    return PM_OK;
}

bool pm_step_plan_sum(const pm_step_plan *p, bool preserve, int64_t a, int64_t b, double *sum)
{
    if ((preserve && plan_prefetches(p)) || b < a)
        return false;
    const pm_model *m = &p->s->model;
    const int64_t n = b - a + 1;
    /* pm_step_plan_eval's sum of node times, the attention's summed over the range. */
    double t = (double)n * (p->head_s + p->tail_s + p->all_mlp[0] * p->layer_rest_s +
                            p->all_mlp[1] * p->moe_rest_s);
    for (int c = 0; c < 2; c++) {
        if (p->attn < 0 || p->all_class[c] == 0)
            continue;
        /* The positions read must step evenly (affine in the context). */
        if (!pm_kv_tokens_affine(m, c == 1, a, b))
            return false;
        pm_node first, last;
        attention_node(p, c, a, &first);
        attention_node(p, c, b, &last);
        t += p->all_class[c] * pm_op_cost_sum_even(&p->cost, &first, &last, n);
    }
    *sum = t;
    return true;
}

unsigned pm_step_plan_signature(const pm_step_plan *p, int64_t ctx, int64_t *next)
{
    if (next)
        *next = -1;
    if (!plan_prefetches(p))
        return 0;
    /* The next change is found for full attention in every layer: the attention's bytes then
     * grow by attn_dkv per position. */
    const bool guess = next && p->attn >= 0 && p->all_class[1] == 0 && p->attn_dkv > 0;
    double kv[2] = {0.0, 0.0}, slack = INFINITY;
    for (int c = 0; c < 2 && p->attn >= 0; c++) {
        if (p->all_class[c] == 0)
            continue;
        double dk, ds;
        attention_growth(p, c, ctx, &dk, &ds);
        kv[c] = p->attn_node[c].kv_bytes + p->attn_dkv * dk;
    }
    bool pf[2][2][MAXN], lead[2][2][2][MAXN], pft[MAXN];
    const unsigned sig = decide_all(p, kv, pf, lead, pft, guess ? &slack : NULL, NULL);
    if (guess)
        *next = next_change(p, ctx, slack);
    return sig;
}

/* Each class's attention at ctx, from its slope per position read (pm_step_plan_count), and
 * its prefetchable bytes (as attention_at's node has them). */
static void traffic_attention(const pm_step_plan *p, int64_t ctx, pm_step_traffic *at,
                              double *attn_bytes)
{
    for (int c = 0; c < 2; c++) {
        at[c] = (pm_step_traffic){{0, 0, 0, 0, {0}}, {0, 0, 0, 0, {0}}};
        attn_bytes[c] = 0.0;
        if (p->attn < 0 || p->all_class[c] == 0)
            continue;
        double d, ds;
        attention_growth(p, c, ctx, &d, &ds);
        at[c] = p->attn_tr[c];
        /* The whole slope along the positions scored; in block-sparse layers, which read
         * fewer KV positions, its KV bytes' part corrected to the positions read. */
        pm_traffic_add(&at[c].tr, &p->attn_dtr, ds);
        pm_traffic_add(&at[c].tr_pf, &p->attn_dtr_pf, ds);
        if (fabs(ds - d) > 0.0) {
            pm_traffic_add(&at[c].tr, &p->attn_dtr_kv, d - ds);
            pm_traffic_add(&at[c].tr_pf, &p->attn_dtr_kv_pf, d - ds);
        }
        attn_bytes[c] = p->attn_cost[c].bytes + p->attn_dkv * d;
    }
}

/* acc += w t in the fields of a PRESERVE step's sum that read the hardware: add_hw's, and what a
 * prefetch's consumer reads back from L2 (node_traffic_hw: a streaming consumer's choice). */
static void add_hw_read(pm_traffic *acc, const pm_traffic *t, double w)
{
    add_hw(acc, t, w);
    acc->l2_read_bytes += w * t->l2_read_bytes;
}

/* acc += w t for a count of nodes w >= 0: none adds nothing (the traffic is finite, so 0 t adds
 * +0), which is half of the terms below, since a node is prefetched in all or none of its
 * layers of a class. rec (may be NULL) records the term. */
static void add_nodes(pm_step_decided *rec, pm_traffic *acc, const pm_traffic *t, double w)
{
    if (!(w > 0))
        return;
    pm_traffic_add(acc, t, w);
    if (rec) {
        rec->term[rec->n_terms] = t;
        rec->weight[rec->n_terms++] = w;
    }
}

/* The layers of attention class c whose node i (before the first communication of MLP class
 * mn, or of both classes: mn -1) the previous layer's last window prefetches. */
static double lead_count(const pm_step_plan *p, bool lead[2][2][2][MAXN], int c, int mn, int i)
{
    double n = 0.0;
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 2; k++)
            if ((mn < 0 || k == mn) && p->n_pair[m][c][k] > 0 && lead[m][c][k][i])
                n += p->n_pair[m][c][k];
    return n;
}

/* What a PRESERVE step moves with the insertion decisions pf (per attention and MLP class)
 * and pft (the tail), the attention's traffic at; rec (may be NULL) records its terms. */
static void traffic_prefetched(const pm_step_plan *p, const pm_step_traffic *at,
                               bool pf[2][2][MAXN], bool lead[2][2][2][MAXN], const bool *pft,
                               pm_step_decided *rec, pm_traffic *out)
{
    const int nt = p->tmpl.n_tail;
    const int cl = p->all_class[0] > 0 ? 0 : 1;
    /* The nodes before the first communication of both MLP classes. */
    int common = p->all_mlp[0] > 0 ? p->first_comm : p->moe_first_comm;
    if (p->all_mlp[0] > 0 && p->all_mlp[1] > 0 && p->moe_first_comm < common)
        common = p->moe_first_comm;
    *out = p->head_tr;
    if (rec)
        rec->n_terms = 0;
    /* The attention part (before the first communication), per attention class; the nodes are
     * the same in both MLP classes (the dense template's traffic). */
    for (int i = 0; i < common; i++) {
        for (int c = 0; c < 2; c++) {
            if (p->all_class[c] == 0)
                continue;
            const pm_step_traffic *t = i == p->attn ? &at[c] : &p->tmpl.counts.layer[i];
            double prefetched = lead_count(p, lead, c, -1, i);
            /* Behind the layer's own all-gather (dense layers only): in every layer of the
             * class, once. */
            if (own_window(p, i, 0))
                prefetched = pf[c][0][i] ? p->all_class[c] : 0.0;
            add_nodes(rec, out, &t->tr_pf, prefetched);
            add_nodes(rec, out, &t->tr, p->all_class[c] - prefetched);
        }
    }
    /* The nodes of one MLP class before its first communication beyond the common ones (a MoE
     * layer's shared experts and router beside a dense layer that gathers first), per
     * attention class. */
    for (int k = 0; k < 2; k++)
        for (int i = common; p->all_mlp[k] > 0 && i < fc_of(p, k); i++)
            for (int c = 0; c < 2; c++) {
                const double prefetched = lead_count(p, lead, c, k, i);
                add_nodes(rec, out, &traffic_of(p, k)[i].tr_pf, prefetched);
                add_nodes(rec, out, &traffic_of(p, k)[i].tr, p->all_cm[c][k] - prefetched);
            }
    /* The MLP part, per MLP class. */
    for (int k = 0; k < 2; k++) {
        if (p->all_mlp[k] == 0)
            continue;
        const pm_step_traffic *tr = traffic_of(p, k);
        for (int i = fc_of(p, k); i < n_of(p, k); i++) {
            const double prefetched = pf[cl][k][i] ? p->all_mlp[k] : 0.0;
            add_nodes(rec, out, &tr[i].tr_pf, prefetched);
            add_nodes(rec, out, &tr[i].tr, p->all_mlp[k] - prefetched);
        }
    }
    for (int i = 0; i < nt; i++)
        add_nodes(rec, out, pft[i] ? &p->tmpl.counts.tail[i].tr_pf : &p->tmpl.counts.tail[i].tr,
                  1.0);
}

/* What a step without prefetches moves, each class's attention's traffic at. */
static void traffic_plain(const pm_step_plan *p, const pm_step_traffic *at, pm_traffic *out)
{
    *out = p->plain_rest_tr;
    for (int c = 0; c < 2 && p->attn >= 0; c++)
        pm_traffic_add(out, &at[c].tr, p->all_class[c]);
}

void pm_step_plan_traffic(const pm_step_plan *p, bool preserve, int64_t ctx, pm_traffic *out)
{
    pm_step_traffic at[2];
    double attn_bytes[2];
    traffic_attention(p, ctx, at, attn_bytes);
    if (!(preserve && plan_prefetches(p))) {
        traffic_plain(p, at, out);
        return;
    }
    /* As pm_step_plan_eval schedules them: a node before the first communication is
     * prefetched in every layer but the first (no collective precedes it there), by the
     * decisions of the pair (previous layer's MLP class, its own attention class); the nodes
     * from the first communication on (no attention among them) by their MLP class's
     * decisions, in every layer of that class; the tail by the last layer's window. */
    bool pf[2][2][MAXN], lead[2][2][2][MAXN], pft[MAXN];
    decide_all(p, attn_bytes, pf, lead, pft, NULL, NULL);
    traffic_prefetched(p, at, pf, lead, pft, NULL, out);
}

void pm_step_region_traffic(pm_step_region *r, int64_t ctx, pm_traffic *out)
{
    if (!r->prefetches) {
        pm_step_plan_traffic(r->p, false, ctx, out);
        return;
    }
    pm_step_traffic at[2];
    double attn_bytes[2];
    traffic_attention(r->p, ctx, at, attn_bytes);
    traffic_prefetched(r->p, at, r->pf, r->lead, r->pft, NULL, out);
}

/* A step time's status st said in err: a time that is not finite and positive, a schedule
 * that cannot finish. */
static pm_status time_checked(pm_status st, const double *time_s, pm_error *err)
{
    if (st == PM_OK && !(*time_s > 0 && *time_s < INFINITY))
        st = PM_ERR_RANGE;
    if (st == PM_ERR_RANGE)
        return pm_fail(err, st, NULL, NULL, "the step time is not finite and positive: a "
                                           "bandwidth, peak, latency or size is too small or "
                                           "too large for double precision");
    if (st != PM_OK)
        return pm_fail(err, st, NULL, NULL, "the schedule of a step is inconsistent");
    return PM_OK;
}

pm_status pm_step_plan_time(const pm_step_plan *p, bool preserve, int64_t ctx, double *time_s,
                            pm_error *err)
{
    return time_checked(pm_step_plan_eval(p, preserve, ctx, time_s, NULL), time_s, err);
}

/* k's region of p at ctx where its decisions hold there (the same bytes, a capacity that
 * answers alike): made at another hardware point of p's template in this room, its segments
 * point at the room's nodes, costed at this point; its attention is costed again and the
 * schedule's kept states forgotten (they hold times). False where it must be made anew. */
static bool region_kept(const pm_step_plan *p, int64_t ctx, pm_step_decided *k)
{
    pm_step_region *r = &k->region;
    if (!(k->ready && k->region_ok && r->p == p && r->prefetches))
        return false;
    r->attn_ctx = -1;
    region_attention(r, ctx);
    double attn_bytes[2], bytes[3 * MAXN + 2];
    region_attn_bytes(r, attn_bytes);
    const int nb = decided_bytes(p, attn_bytes, bytes);
    if (!same_bytes(k, ctx, bytes, nb) || !same_answers(p, k))
        return false;
    for (int m = 0; m < 2; m++)
        for (int c = 0; c < 2; c++)
            for (int mn = 0; mn < 2; mn++)
                r->period_at[m][c][mn].known = false;
    r->last_known = false;
    return true;
}

/* PRESERVE's step at ctx of a plan that prefetches: its time, and when tr its traffic (each
 * class's attention's at) from the same region, whose decisions p->decided keeps; the sum
 * too, so that at a later point with the same decisions only its fields that read the hardware
 * are summed again (each field is its own sum, in the same order: the same numbers). */
static pm_status preserve_kept(pm_step_plan *p, int64_t ctx, const pm_step_traffic *at,
                               double *time_s, pm_traffic *tr, pm_error *err)
{
    pm_step_decided *k = &p->decided;
    pm_step_region *r = &k->region;
    if (!region_kept(p, ctx, k)) {
        region_make(p, ctx, false, k, r);
        k->region_ok = true;
    }
    const pm_status st = time_checked(region_time(r, time_s), time_s, err);
    if (st != PM_OK || !tr)
        return st;
    k->at[0] = at[0];
    k->at[1] = at[1];
    if (k->summed) { /* the kept terms, in add_hw_read's fields (the others are the sum's) */
        *tr = k->sum;
        tr->hbm_bytes = p->head_tr.hbm_bytes;
        tr->link_bytes = p->head_tr.link_bytes;
        tr->l2_read_bytes = p->head_tr.l2_read_bytes;
        for (int i = 0; i < k->n_terms; i++)
            add_hw_read(tr, k->term[i], k->weight[i]);
        return PM_OK;
    }
    traffic_prefetched(p, k->at, r->pf, r->lead, r->pft, k, tr);
    k->sum = *tr;
    k->summed = true;
    return PM_OK;
}

pm_status pm_step_plan_modes(pm_step_plan *p, const pm_step_plan *f, int64_t ctx,
                             double t[PM_MODE_COUNT], pm_traffic *tr, pm_error *err)
{
    /* The attention's traffic at ctx is the same in the three: f has p's (pm_step_plan_fuse). */
    pm_step_traffic at[2];
    double attn_bytes[2];
    if (tr)
        traffic_attention(p, ctx, at, attn_bytes);
    const pm_step_plan *of[PM_MODE_COUNT] = {p, f, p};
    _Static_assert(PM_MODE_SERIAL == 0 && PM_MODE_FUSED == 1 && PM_MODE_PRESERVE == 2,
                   "of[] in mode order");
    for (int mode = 0; mode < PM_MODE_COUNT; mode++) {
        const bool preserve = mode == PM_MODE_PRESERVE;
        pm_status st;
        if (preserve && plan_prefetches(p)) {
            if ((st = preserve_kept(p, ctx, at, &t[mode], tr ? &tr[mode] : NULL, err)) != PM_OK)
                return st;
            continue;
        }
        if ((st = pm_step_plan_time(of[mode], preserve, ctx, &t[mode], err)) != PM_OK)
            return st;
        if (tr)
            traffic_plain(of[mode], at, &tr[mode]);
    }
    return PM_OK;
}

bool pm_step_plan_l2_hold(const pm_step_plan *p, double *cap_lo, double *cap_hi)
{
    /* Every GEMM of the template: the fused plan's fused nodes are costed from their MatMul's
     * row (fuse_class), an attention at another context is no GEMM. */
    const pm_template_rows *r = &p->tmpl.rows;
    const pm_cost_row *rows[4] = {r->head, r->layer, r->moe, r->tail};
    const int n[4] = {p->tmpl.n_head, p->tmpl.n_layer, p->tmpl.n_moe, p->tmpl.n_tail};
    for (int g = 0; g < 4; g++)
        for (int i = 0; i < n[g]; i++)
            if (pm_cost_row_tiling(&p->cost, &rows[g][i]) > 0)
                return false;
    const bool decided = plan_prefetches(p);
    *cap_lo = decided ? p->decided.cap_lo : -INFINITY;
    *cap_hi = decided ? p->decided.cap_hi : INFINITY;
    return true;
}

/* ---- a pipeline stage (issue 44): some of the layers, with or without the head and the
 * tail, after the receive of its input ---- */

/* The one attention class and MLP class of a plan whose layers are all alike (a stage counts
 * its layers as copies of one; pm_pipeline_plan refuses other models). */
static void stage_classes(const pm_step_plan *p, int *c, int *m)
{
    *c = p->all_class[0] > 0 ? 0 : 1;
    *m = p->all_mlp[0] > 0 ? 0 : 1;
}

/* Algorithm 1 for the receive's window: from the receive, the head's nodes (the embedding's
 * row gather is not prefetchable) and the first layer's nodes up to its first communication,
 * each prefetched while the running sum stays strictly below the capacity. Returns the bytes
 * prefetched; pf[] marks the layer nodes. */
static double recv_decide(const pm_step_plan *p, int m, const pm_step_node *const *L, bool *pf)
{
    double sum = 0.0;
    for (int k = 0; k < fc_of(p, m); k++)
        pf[k] = false;
    for (int k = 0; k < lead_end(p, m); k++) {
        const double b = L[k]->bytes;
        if (!(b > 0))
            continue;
        if (!(sum + b < p->cap))
            break;
        sum += b;
        pf[k] = true;
    }
    return sum;
}

pm_status pm_step_plan_stage_eval(const pm_step_plan *p, bool preserve, int64_t ctx,
                                  const pm_stage_part *part, double *time_s, double *recv_pf_bytes,
                                  double *recv_pf_s)
{
    int c, m;
    stage_classes(p, &c, &m);
    const int n = part->layers;
    if (recv_pf_bytes)
        *recv_pf_bytes = 0.0;
    if (recv_pf_s)
        *recv_pf_s = 0.0;
    if (!(preserve && plan_prefetches(p))) {
        pm_step_node attn;
        const pm_step_node *a = p->attn >= 0 ? attention_at(p, c, ctx, false, &attn) : NULL;
        const double layer = (a ? a->hbm.total_s : 0.0) + (m ? p->moe_rest_s : p->layer_rest_s);
        *time_s = part->recv_s + (part->head ? p->head_s : 0.0) +
                  (part->tail ? p->tail_s : 0.0) + n * layer;
        return PM_OK;
    }
    pm_step_region r;
    pm_step_region_init(p, ctx, false, &r);
    const bool sharing = p->s->options.hbm_sharing;
    const bool stream = p->s->accel.prefetch_consumer == PM_CONSUMER_STREAM;
    const int fc = fc_of(p, m), nl = n_of(p, m);
    const pm_step_node *const *L = r.L[c][m];
    /* The prefix: the receive (a communication node: the window opens with it, gap_s of idle
     * before it ends: the bubble), the head, the first layer up to its first communication.
     * Without a receive nothing precedes the head and nothing is prefetched (the whole model's
     * prefix). */
    seg g;
    g.n = g.n_pf = 0;
    int trig = -1;
    pm_step_node recv = {0}, head[MAXN];
    bool pf[MAXN] = {false};
    const double gap = part->recv_s > 0 ? part->gap_s : 0.0;
    recv.hbm.total_s = part->recv_s + gap;
    recv.is_comm = recv.is_ar = true;
    if (part->recv_s > 0) {
        seg_add(&g, &recv, false, &trig);
        const double b = recv_decide(p, m, L, pf);
        if (recv_pf_bytes)
            *recv_pf_bytes = b;
        for (int i = 0; recv_pf_s && i < fc && i < nl; i++)
            if (pf[i] && !own_window(p, i, m))
                *recv_pf_s += L[i]->pf.total_s;
    }
    for (int i = 0; part->head && i < p->tmpl.n_head; i++) {
        head[i] = (pm_step_node){0};
        head[i].hbm = p->head_cost[i];
        seg_add(&g, &head[i], false, &trig);
    }
    for (int i = 0; i <= fc && i < nl; i++)
        seg_add(&g, L[i], own_window(p, i, m) ? r.pf[c][m][i] : i < fc && pf[i], &trig);
    double prefix = 0.0, periods = 0.0, last = 0.0;
    pm_status st = seg_run(&g, sharing, stream, g.n - 1, &prefix, NULL, 0);
    if (st != PM_OK)
        return st;
    /* The periods between the stage's layers, as in the whole model. */
    if (n > 1) {
        const seg *pg = &r.period[m][c][m];
        if ((st = seg_run(pg, sharing, stream, pg->n - 1, &periods, NULL, 0)) != PM_OK)
            return st;
        periods *= n - 1;
    }
    /* The last layer from its first communication: with the tail (the last stage) as the
     * whole model's last layer; otherwise alone, its own windows' decisions. */
    if (part->tail) {
        st = seg_run(&r.last, sharing, stream, -1, &last, NULL, 0);
    } else {
        seg t;
        t.n = t.n_pf = 0;
        int tr = -1;
        for (int i = fc; i < nl; i++)
            seg_add(&t, L[i], r.pf[c][m][i], &tr);
        st = seg_run(&t, sharing, stream, -1, &last, NULL, 0);
    }
    *time_s = prefix - gap + periods + last;
    return st;
}

void pm_step_plan_stage_traffic(const pm_step_plan *p, const pm_step_plan *u, bool preserve,
                                int64_t ctx, const pm_stage_part *part, pm_traffic *out)
{
    int c, m;
    stage_classes(p, &c, &m);
    const double n = part->layers, L = p->layers;
    pm_step_traffic at[2];
    double attn_bytes[2];
    traffic_attention(p, ctx, at, attn_bytes);
    *out = (pm_traffic){0};
    out->link_bytes = part->recv_bytes; /* the receive: one copy over the link */
    if (part->head)
        pm_traffic_add(out, &p->head_tr, 1.0);
    if (!(preserve && plan_prefetches(p))) {
        /* Every layer's nodes but the attention, nothing prefetched: the plan's total less its
         * head and tail, per layer (a fused plan keeps only the total). */
        pm_traffic rest = p->plain_rest_tr, tail = {0};
        pm_traffic_add(&rest, &p->head_tr, -1.0);
        for (int i = 0; i < u->tmpl.n_tail; i++) /* a fused plan has no tail nodes: u's */
            pm_traffic_add(&tail, &u->tmpl.counts.tail[i].tr, 1.0);
        pm_traffic_add(&rest, &tail, -1.0);
        pm_traffic_add(out, &rest, n / L);
        if (p->attn >= 0)
            pm_traffic_add(out, &at[c].tr, n);
        if (part->tail)
            pm_traffic_add(out, &tail, 1.0);
        return;
    }
    bool pf[MAXN], lead[MAXN], pft[MAXN], rpf[MAXN] = {false};
    double bytes[MAXN];
    layer_bytes(p, m, attn_bytes[c], bytes);
    decide(p, m, m, bytes, bytes, pf, lead, pft, NULL, NULL);
    if (part->recv_s > 0) {
        pm_step_region r;
        pm_step_region_init(p, ctx, false, &r);
        recv_decide(p, m, r.L[c][m], rpf);
    }
    const pm_step_traffic *tr = traffic_of(p, m);
    for (int i = 0; i < n_of(p, m); i++) {
        const pm_step_traffic *t = i == p->attn ? &at[c] : &tr[i];
        /* Before the first communication: the first layer by the receive's window, the others
         * by the previous layer's last window; after it, every layer by its own. */
        const double k = i < fc_of(p, m) && !own_window(p, i, m)
                             ? (lead[i] ? n - 1 : 0.0) + (rpf[i] ? 1.0 : 0.0)
                             : (pf[i] ? n : 0.0);
        add_nodes(NULL, out, &t->tr_pf, k);
        add_nodes(NULL, out, &t->tr, n - k);
    }
    for (int i = 0; part->tail && i < p->tmpl.n_tail; i++)
        add_nodes(NULL, out,
                  pft[i] ? &p->tmpl.counts.tail[i].tr_pf : &p->tmpl.counts.tail[i].tr, 1.0);
}
