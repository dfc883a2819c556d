/*
 * cost.c - the roofline cost of one operation (DESIGN.md section 4):
 *
 *   t = max(F / (P_peak * eta), sum over sources of bytes / BW) + t_launch
 *
 * with HBM and L2 as separate sources; eta is the GEMMs' efficiency, an attention kernel's own
 * where the accelerator gives one (attention_compute_efficiency_frac: FlashAttention-class
 * kernels reach less of the peak than GEMMs). The attention kernel's KV reads are strided when a
 * device holds more than one KV head and then reach only kv_strided_efficiency of the HBM
 * bandwidth; the prefetch engine streams in bulk and does not suffer this. Prefetched bytes are
 * read at the L2 bandwidth, not for free. GEMMs whose operands do not fit on chip pay the
 * tiling bound 2 m n k e / sqrt(C / e) of off-chip traffic, which is what makes a larger L2
 * help the baseline in prefill. The fused baseline pipelines its GEMM and allreduce in k chunks
 * whose transfers lose efficiency as x / (x + n_half). The accelerator's peak per datatype and
 * its achievable bulk HBM bandwidth are accelerator.c's.
 *
 * A node's terms that read no hardware (its flops, bytes, the tiling bound's numerator
 * 2 m n k e, the peak's and the KV bandwidth's indices) and gemm_eff.c's wave fraction and
 * dequantisation time (which read only the accelerator's GEMM fields, pm_cost_key) are kept as
 * a row (pm_cost_row): step_plan.c makes a template's rows once and a compiled template keeps
 * them, so a node at another hardware point is costed from its row alone, in the same
 * operations in the same order as from the node (bit for bit). A row also keeps its node's costs
 * (issue 46 item 3): what a plan's node costs read of the hardware beyond the tiling bound is a
 * handful of numbers (pm_cost_hw: the peaks, bandwidths, fixed times, allreduce models), so where
 * two points' are the same, bit for bit, a node whose tiling bytes are 0 at both costs the same;
 * the rows keep the costs at the L2 past every tiling kink (pm_cost_ctx_unbounded) and the key
 * the pm_cost_hw they were made at (pm_cost_key.at, numbered gen); step_plan.c serves them.
 *
 * May call: accelerator.c, collective.c, dtype.c, error.c, gemm_eff.c, graph.c, runtime.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

typedef struct roof {
    double compute_s, hbm_s, l2_s, hbm_bytes;
} roof;

/* The terms of a node that do not depend on what is served from L2. */
typedef struct roof_in {
    double compute_s;
    double tiling_bytes; /* off-chip traffic beyond the compulsory bytes (tiling bound) */
    double bw, kv_bw, l2_bw;
} roof_in;

/* An element's bytes of datatype d (1 for a datatype without). */
static double elem_bytes(pm_dtype d)
{
    const double b = pm_dtype_bytes(d);
    return b > 0 ? b : 1.0;
}

void pm_cost_ctx_init(const pm_scenario *s, pm_cost_ctx *k)
{
    const pm_accelerator *a = &s->accel;
    k->s = s;
    for (int d = 0; d < PM_DTYPE_COUNT; d++) {
        const double eff = a->compute_efficiency_dtype_frac[d] > 0
                               ? a->compute_efficiency_dtype_frac[d]
                               : a->compute_efficiency_frac;
        const double att_eff = a->attention_compute_efficiency_frac > 0
                                   ? a->attention_compute_efficiency_frac
                                   : eff;
        const double peak = pm_peak_compute(a, (pm_dtype)d);
        k->peak[d] = peak * eff;
        k->att_peak[d] = peak * att_eff;
        const double e = elem_bytes((pm_dtype)d);
        k->elem[d] = e;
        k->tile_root[d] = sqrt(a->l2_capacity_bytes / e);
    }
    /* Operators read HBM at their own efficiency; the prefetcher's bulk streams at
     * hbm_efficiency_frac (pm_prefetch_cost). */
    k->bw = a->kernel_hbm_efficiency_frac > 0
                ? a->hbm_bandwidth_bytes_per_s * a->kernel_hbm_efficiency_frac
                : pm_effective_hbm_bw(a);
    /* The attention kernel's KV reads: at its own measured efficiency where the runtime (its
     * own kernel) or the accelerator gives one (the GPU presets: the slope of their
     * decode-attention points), slower where the runtime decodes the model with its
     * PagedAttention kernel (runtime.c), times the strided penalty where it reads more than one
     * KV head with strides (the paper's NPU). */
    const double att = pm_attention_hbm_frac(s);
    const double kv_base = (att > 0 ? a->hbm_bandwidth_bytes_per_s * att : k->bw) *
                           pm_scenario_paged_attention_frac(s);
    const double paged = s->runtime.present && s->runtime.paged_attention_efficiency_frac > 0
                             ? s->runtime.paged_attention_efficiency_frac
                             : 1.0;
    k->kv_bw[0] = kv_base;
    k->kv_bw[1] = kv_base * a->kv_strided_efficiency_frac;
    k->kv_bw[2] = k->kv_bw[0] * paged;
    k->kv_bw[3] = k->kv_bw[1] * paged;
    k->l2_bw = a->l2_bandwidth_bytes_per_s;
    k->pf_bw = pm_effective_hbm_bw(a);
    k->launch_s = pm_launch_s(s);
    k->moe_frac = pm_moe_gemm_frac(s);
    k->moe_curve = pm_moe_gemm_curve_of(s);
}

/* The accelerator's GEMM fields a row reads (pm_cost_key.v). */
static void key_values(const pm_scenario *s, double v[5])
{
    const pm_accelerator *a = &s->accel;
    v[0] = a->gemm.present ? 1.0 : 0.0;
    v[1] = a->gemm.compute_units;
    v[2] = a->gemm.tile_m;
    v[3] = a->gemm.tile_n;
    v[4] = a->dequant_elem_per_s;
}

void pm_cost_key_init(const pm_scenario *s, pm_cost_key *key)
{
    memset(key, 0, sizeof *key); /* no hardware point yet (gen 0) */
    key_values(s, key->v);
}

bool pm_cost_key_same(const pm_scenario *s, const pm_cost_key *key)
{
    double v[5];
    key_values(s, v);
    return memcmp(v, key->v, sizeof v) == 0;
}

/* An allreduce model's fields into v[14] (those past its candidates 0: never read). */
static void hw_model(const pm_ar_model *m, double *v)
{
    memset(v, 0, 14 * sizeof *v);
    v[0] = m->n;
    v[1] = m->single_device;
    for (int i = 0; i < m->n && i < 4; i++) {
        v[2 + 3 * i] = m->algo[i];
        v[3 + 3 * i] = m->fixed[i];
        v[4 + 3 * i] = m->per_byte[i];
    }
}

/* Every term of k that a row's cost reads but the tiling roots (pm_cost_row_tiling reads them),
 * what plain_cost, fixed_s, row_cost and other_cost read of the scenario for a kind that may be
 * kept (pm_cost_row_keepable), the allreduce models and the prefetching flag. */
void pm_cost_hw_init(const pm_cost_ctx *k, const pm_ar_model *ar, const pm_ar_model *ar_fused,
                     bool prefetching, pm_cost_hw *h)
{
    const pm_scenario *s = k->s;
    memcpy(h->peak, k->peak, sizeof h->peak);
    memcpy(h->att_peak, k->att_peak, sizeof h->att_peak);
    memcpy(h->kv_bw, k->kv_bw, sizeof h->kv_bw);
    h->bw = k->bw;
    h->l2_bw = k->l2_bw;
    h->pf_bw = k->pf_bw;
    h->launch_s = k->launch_s;
    h->moe_frac = k->moe_frac;
    h->moe_curve = k->moe_curve ? 1.0 : 0.0;
    h->gemm_present = s->accel.gemm.present ? 1.0 : 0.0;
    h->gemm_overlap_loss_frac = s->accel.gemm.overlap_loss_frac;
    h->gemm_latency_s = s->accel.gemm.latency_s;
    h->attention_latency_s = s->accel.attention_latency_s;
    h->host_s = pm_runtime_step_s(s);
    h->allreduce_s = pm_runtime_allreduce_s(s);
    h->chunk_half_bytes = s->accel.chunk_half_efficiency_bytes;
    h->prefetching = prefetching ? 1.0 : 0.0;
    hw_model(ar, h->ar);
    hw_model(ar_fused, h->ar_fused);
}

void pm_cost_key_at(pm_cost_key *key, const pm_cost_hw *h)
{
    /* Kept at the rows' first point, and again at the second point in a row of another
     * pm_cost_hw: the points after it that move only the L2 capacity (a search walks a
     * deployment's capacities fastest) are served, and an axis that moves the pm_cost_hw at
     * every point keeps nothing (keeping costs a copy a row). The rows and key travel
     * together (a compiled template, pm_serve_compiled, keeps those made at its first point,
     * which a room that takes it again copies whole): a row's kept_gen is always its own
     * key's. */
    if (key->gen == 0) {
        key->at = *h;
        key->gen = 1;
        key->keep = true;
    } else if (memcmp(&key->at, h, sizeof *h) != 0) {
        key->at = *h;
        key->gen++;
        key->keep = false;
    } else {
        key->keep = true;
    }
}

void pm_cost_ctx_unbounded(const pm_cost_ctx *k, pm_cost_ctx *out)
{
    *out = *k;
    /* tile / inf = 0: tiling_bytes's comparison fails and it returns 0, as past the kink. */
    for (int d = 0; d < PM_DTYPE_COUNT; d++)
        out->tile_root[d] = INFINITY;
}

bool pm_cost_row_keepable(const pm_cost_ctx *k, const pm_cost_row *r)
{
    /* The expert compute table's fraction reads the row's tokens per expert from a table of
     * the scenario's: a grouped GEMM under one is costed again at every point. */
    return r->keepable && !(r->grouped && k->moe_curve);
}


/* The hardware-free part of roof_prepare, plain_cost and fixed_s, and the GEMM rules at s's
 * accelerator (its key): the node's terms are then those of the row alone. */
void pm_cost_row_init(const pm_scenario *s, const pm_node *n, pm_cost_row *r)
{
    const bool dt = (int)n->dtype >= 0 && n->dtype < PM_DTYPE_COUNT;
    const bool gemm = n->kind == PM_NODE_MATMUL || n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE;
    /* The coefficients, and no kept costs (their fields are read only where a gen matches): a
     * row made per node on the graph path does not clear them. */
    r->tile_bytes = r->dequant_s = r->align_s = 0.0;
    r->kept_gen = r->fused_gen = 0;
    r->flop = n->flop;
    r->act_bytes = n->act_bytes;
    r->weight_bytes = n->weight_bytes;
    r->kv_bytes = n->kv_bytes;
    r->l2_bytes = n->l2_bytes;
    r->compulsory_bytes = n->act_bytes + n->weight_bytes;
    r->dtype = dt ? (int)n->dtype : -1;
    r->kv_bw = (n->kv_strided ? 1 : 0) + (n->kv_paged ? 2 : 0);
    r->attention = n->kind == PM_NODE_ATTENTION;
    r->gemm = gemm && n->m > 0;
    r->knee = n->kind == PM_NODE_MATMUL;
    r->grouped = gemm && n->routed;
    r->expert_rows = r->grouped ? n->m : 0.0;
    r->embedding = n->kind == PM_NODE_EMBEDDING;
    /* A GEMM without a datatype reads the L2 capacity itself (roof_prepare's root). */
    r->keepable = !(n->kind == PM_NODE_REDUCE_SCATTER || n->kind == PM_NODE_ALL_GATHER ||
                    n->kind == PM_NODE_ALLTOALL || n->kind == PM_NODE_RECV || (r->gemm && !dt));
    r->wave_frac = 1.0;
    if (r->gemm) {
        /* The last wave of output tiles leaves compute units idle (gemm_eff.c). */
        r->wave_frac = pm_gemm_wave_frac(&s->accel, n->m, n->n);
        /* Weight-only quantisation converts the weights on the vector units (gemm_eff.c). */
        r->dequant_s = pm_gemm_dequant_s(s, n);
        /* The tiling bound's numerator, in the order roof_prepare divides it by the root. */
        r->tile_bytes = 2.0 * n->m * n->n * n->k * (dt ? elem_bytes(n->dtype) : 1.0);
    }
    /* A MoE align kernel's time beyond its roofline (runtime.c: one thread block, not bandwidth-
     * bound): the engine's measured line over its slots. */
    if (n->role == PM_ROLE_MOE_ALIGN)
        r->align_s = pm_moe_align_s(s, n->m);
}

/* The tiling bound's bytes beyond the compulsory ones (a GEMM with m > 0). */
static inline double tiling_bytes(const pm_cost_ctx *k, const pm_cost_row *r)
{
    /* Past C* = e (tile / compulsory)^2 of L2 the tiling bound is below the compulsory bytes
     * and adds nothing. */
    const double root =
        r->dtype >= 0 ? k->tile_root[r->dtype] : sqrt(k->s->accel.l2_capacity_bytes);
    const double tiled = r->tile_bytes / root;
    return tiled > r->compulsory_bytes ? tiled - r->compulsory_bytes : 0.0;
}

double pm_cost_row_tiling(const pm_cost_ctx *k, const pm_cost_row *r)
{
    return r->gemm ? tiling_bytes(k, r) : 0.0;
}

static inline roof_in roof_prepare(const pm_cost_ctx *k, const pm_cost_row *r)
{
    roof_in ri = {0};
    /* An attention kernel's products run at its own efficiency (the accelerator's
     * attention_compute_efficiency_frac), the GEMMs' where the accelerator gives none. */
    const double peak = r->dtype < 0    ? 0.0
                        : r->attention ? k->att_peak[r->dtype]
                                       : k->peak[r->dtype];
    ri.compute_s = r->flop > 0 && peak > 0 ? r->flop / peak : 0.0;
    if (r->gemm) {
        ri.compute_s /= r->wave_frac;
        ri.compute_s += r->dequant_s;
        ri.tiling_bytes = tiling_bytes(k, r);
    }
    ri.bw = k->bw;
    ri.kv_bw = k->kv_bw[r->kv_bw];
    ri.l2_bw = k->l2_bw;
    if (r->grouped && k->moe_frac < 1.0) {
        /* The engine's grouped-expert kernel (runtime.c): slower at both compute and reads. */
        ri.compute_s /= k->moe_frac;
        ri.bw *= k->moe_frac;
        ri.l2_bw *= k->moe_frac;
    }
    /* Its compute rate by the node's tokens per expert (m: the slots over the experts read),
     * where the runtime's table covers the accelerator (runtime.c); its reads are unchanged. */
    if (r->grouped && k->moe_curve)
        ri.compute_s /= pm_moe_gemm_curve_frac(k->moe_curve, r->expert_rows);
    return ri;
}

static inline roof roof_at(const roof_in *ri, const pm_cost_row *n, double l2)
{
    roof r = {0};
    r.compute_s = ri->compute_s;
    double weight_hbm = n->weight_bytes, kv_hbm = n->kv_bytes;
    /* What was prefetched is served from L2: weights first for a MatMul, KV for attention. */
    if (n->attention) {
        double from = l2 < kv_hbm ? l2 : kv_hbm;
        kv_hbm -= from;
    } else {
        double from = l2 < weight_hbm ? l2 : weight_hbm;
        weight_hbm -= from;
    }
    const double hbm = n->act_bytes + weight_hbm + ri->tiling_bytes;
    r.hbm_s = hbm / ri->bw + (kv_hbm > 0 ? kv_hbm / ri->kv_bw : 0.0);
    r.hbm_bytes = hbm + kv_hbm;
    r.l2_s = l2 > 0 ? l2 / ri->l2_bw : 0.0;
    return r;
}

/* A MoE align kernel's time beyond its roofline (the row's), and an attention kernel's fixed
 * time beyond its roofline (the accelerator's attention_latency; 0 on the paper's NPU): in
 * decode its effective bandwidth kv / (t0 + kv / BW) rises with batch x context towards BW, as
 * the GPU kernels of data/validation/gpu.csv (section 6) do. */
static double fixed_s(const pm_scenario *s, const pm_cost_row *r)
{
    return r->attention ? s->accel.attention_latency_s : r->align_s;
}

static inline void plain_cost(const pm_cost_ctx *k, const pm_cost_row *n, const roof *r,
                              pm_op_cost *out)
{
    const pm_scenario *s = k->s;
    *out = (pm_op_cost){0};
    out->compute_s = r->compute_s;
    out->hbm_s = r->hbm_s;
    out->l2_s = r->l2_s;
    out->hbm_bytes = r->hbm_bytes;
    out->launch_s = k->launch_s;
    const double mem = r->hbm_s + r->l2_s;
    /* A MatMul's knee and fixed time follow its shape (gemm_eff.c). */
    const double t = n->knee ? pm_gemm_time(&s->accel, r->compute_s, mem)
                             : (r->compute_s > mem ? r->compute_s : mem);
    out->total_s = t + fixed_s(s, n) + out->launch_s;
}

void pm_op_cost_pair_row(const pm_cost_ctx *k, const pm_cost_row *r, double l2_bytes,
                         pm_op_cost *hbm, pm_op_cost *l2)
{
    const roof_in ri = roof_prepare(k, r);
    const roof a = roof_at(&ri, r, r->l2_bytes), b = roof_at(&ri, r, l2_bytes);
    plain_cost(k, r, &a, hbm);
    plain_cost(k, r, &b, l2);
}

void pm_op_cost_pair(const pm_cost_ctx *k, const pm_node *n, double l2_bytes, pm_op_cost *hbm,
                     pm_op_cost *l2)
{
    pm_cost_row r;
    pm_cost_row_init(k->s, n, &r);
    pm_op_cost_pair_row(k, &r, l2_bytes, hbm, l2);
}

/* The sum over i = 0..n-1 of the line through f0 (i = 0) and f1 (i = n - 1), over i0..i1. */
static double line_sum(double f0, double f1, int64_t n, int64_t i0, int64_t i1)
{
    if (i1 < i0)
        return 0.0;
    const double slope = n > 1 ? (f1 - f0) / (double)(n - 1) : 0.0;
    return (double)(i1 - i0 + 1) * (f0 + slope * ((double)i0 + (double)i1) / 2.0);
}

double pm_op_cost_sum_even(const pm_cost_ctx *k, const pm_node *first, const pm_node *last,
                           int64_t n)
{
    if (n < 1)
        return 0.0;
    /* plain_cost's time, max(compute, memory) + fixed + launch, with both terms affine in i. */
    pm_cost_row ra, rb;
    pm_cost_row_init(k->s, first, &ra);
    pm_cost_row_init(k->s, last, &rb);
    const roof_in fa = roof_prepare(k, &ra), fb = roof_prepare(k, &rb);
    const roof a = roof_at(&fa, &ra, ra.l2_bytes), b = roof_at(&fb, &rb, rb.l2_bytes);
    const double u0 = a.compute_s, u1 = b.compute_s;
    const double v0 = a.hbm_s + a.l2_s, v1 = b.hbm_s + b.l2_s;
    const double g0 = u0 - v0, g1 = u1 - v1; /* compute's lead: affine, one sign change at most */
    double sum;
    if (g0 >= 0 && g1 >= 0) {
        sum = line_sum(u0, u1, n, 0, n - 1);
    } else if (g0 <= 0 && g1 <= 0) {
        sum = line_sum(v0, v1, n, 0, n - 1);
    } else {
        /* The lead changes sign at x in (0, n - 1): up to floor(x) the first end's term leads. */
        int64_t kx = (int64_t)floor(g0 / (g0 - g1) * (double)(n - 1));
        kx = kx < 0 ? 0 : kx > n - 2 ? n - 2 : kx;
        sum = g0 > 0 ? line_sum(u0, u1, n, 0, kx) + line_sum(v0, v1, n, kx + 1, n - 1)
                     : line_sum(v0, v1, n, 0, kx) + line_sum(u0, u1, n, kx + 1, n - 1);
    }
    return sum + (double)n * (fixed_s(k->s, &ra) + k->launch_s);
}

/* The chunk-independent terms of a fused node. */
typedef struct fused_terms {
    double compute_s, hbm_s, comm_bytes;
    double grow;     /* n_half / (X + n_half): see fused_time; 0 when chunking costs nothing */
    double base;     /* X / (X + n_half) */
} fused_terms;

static fused_terms fused_init(const pm_scenario *s, const pm_node *n, const roof *r)
{
    const double whole = n->act_bytes + n->weight_bytes, h = s->accel.chunk_half_efficiency_bytes;
    fused_terms f = {r->compute_s, r->hbm_s, n->comm_bytes, 0.0, 1.0};
    if (h > 0 && whole > 0) {
        f.grow = h / (whole + h);
        f.base = whole / (whole + h);
    }
    return f;
}

/* k chunks: each moves x = X/k bytes at the relative efficiency (x/(x+h)) / (X/(X+h)) =
 * (X+h)/(X+kh), so its memory time is hbm/k / eff = hbm/k x (X+kh)/(X+h) = hbm/k x
 * (base + k grow). The chunks pipeline: GEMM of the first, then k-1 stages of the slower of
 * GEMM and allreduce, then the last allreduce. */
static double fused_time(const pm_ar_model *arm, const fused_terms *f, int k, double *ar_s,
                         double *bound)
{
    const double inv_k = 1.0 / k;
    const double mem = f->hbm_s * inv_k * (f->base + k * f->grow);
    const double comp = f->compute_s * inv_k;
    const double tg = comp > mem ? comp : mem;
    const double tar = pm_ar_model_time(arm, f->comm_bytes * inv_k, NULL);
    *ar_s = tar * k;
    const double stage = tg > tar ? tg : tar;
    /* A lower bound of this and every larger k's time: the time is at least k stages, and k tg
     * = max(compute, hbm (base + k grow)) and k tar = min over algorithms of (k fixed +
     * per_byte bytes) never fall as k grows. */
    *bound = k * stage;
    return tg + (k - 1) * stage + tar;
}

void pm_prefetch_cost(const pm_cost_ctx *k, double bytes, pm_op_cost *out)
{
    /* A bulk HBM -> L2 stream: contiguous, at the achievable HBM bandwidth. */
    *out = (pm_op_cost){0};
    out->hbm_bytes = bytes;
    out->hbm_s = bytes / k->pf_bw;
    out->launch_s = k->launch_s;
    out->total_s = out->hbm_s + out->launch_s;
}

/* A fused GEMM + allreduce node with its row: the chunk count given, or the best of 1 to 16. */
static void fused_cost(const pm_cost_ctx *cx, const pm_ar_model *ar, const pm_node *n,
                       const pm_cost_row *row, pm_op_cost *out)
{
    const roof_in ri = roof_prepare(cx, row);
    const roof r = roof_at(&ri, row, row->l2_bytes);
    const fused_terms f = fused_init(cx->s, n, &r);
    int best_k = n->chunks > 0 ? n->chunks : 1;
    double tar = 0.0, bound;
    double best = fused_time(ar, &f, best_k, &tar, &bound);
    /* The search stops where the bound of every larger k reaches the best time (with a
     * margin for rounding far above it): the same choice as trying all 16. */
    for (int k = 2; n->chunks <= 0 && k <= 16 && bound * (1.0 - 1e-9) < best; k++) {
        double ar_k;
        double t = fused_time(ar, &f, k, &ar_k, &bound);
        if (t < best) {
            best = t;
            best_k = k;
            tar = ar_k;
        }
    }
    out->compute_s = r.compute_s;
    out->hbm_s = r.hbm_s;
    out->hbm_bytes = r.hbm_bytes;
    out->comm_s = tar;
    out->launch_s = cx->launch_s;
    out->chunks = best_k;
    out->total_s = best + cx->launch_s;
}

/* Whether a node of kind k is costed by its roofline alone (other_cost costs the rest). */
static bool plain_kind(pm_node_kind k)
{
    return !(pm_kind_is_collective(k) || k == PM_NODE_PREFETCH ||
             k == PM_NODE_FUSED_MATMUL_ALLREDUCE);
}

/* The cost of a node that is not a plain operation (a collective, a receive, a prefetch, a
 * fused GEMM + allreduce, whose row is row or, NULL, made here). */
static void other_cost(const pm_cost_ctx *k, const pm_ar_model *ar, const pm_node *n,
                       const pm_cost_row *row, pm_op_cost *out)
{
    const pm_scenario *s = k->s;
    *out = (pm_op_cost){0};
    pm_ar_model local;
    if (!ar && n->kind == PM_NODE_ALLREDUCE) {
        pm_ar_model_init(&s->cluster, s->cluster.algorithm, &local);
        ar = &local;
    } else if (!ar && n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE) {
        pm_ar_model_init_fused(&s->cluster, &local);
        ar = &local;
    }
    switch (n->kind) {
    case PM_NODE_ALLREDUCE: {
        /* The runtime's collective library adds its start-up (runtime.c). */
        const double t = pm_ar_model_time(ar, n->comm_bytes, NULL) + pm_runtime_allreduce_s(s);
        out->comm_s = t;
        out->total_s = t;
        return;
    }
    case PM_NODE_REDUCE_SCATTER:
    case PM_NODE_ALL_GATHER: {
        /* Sequence parallelism's halves: each a collective call of its own, with the
         * runtime's start-up. */
        pm_ar_model rs;
        pm_rs_model_init(&s->cluster, s->cluster.algorithm, &rs);
        const double t = pm_ar_model_time(&rs, n->comm_bytes, NULL) + pm_runtime_allreduce_s(s);
        out->comm_s = t;
        out->total_s = t;
        return;
    }
    case PM_NODE_RECV: {
        /* A send between stages over the link its boundary crosses (collective.c). */
        const double t = pm_p2p_time(&s->cluster, n->inter_node, n->comm_bytes);
        out->comm_s = t;
        out->total_s = t;
        return;
    }
    case PM_NODE_PREFETCH:
        pm_prefetch_cost(k, n->weight_bytes + n->kv_bytes, out);
        return;
    case PM_NODE_ALLTOALL: {
        pm_a2a_model a2a;
        pm_a2a_model_init(&s->cluster, &a2a);
        const double t = pm_a2a_model_time(&a2a, n->comm_bytes);
        out->comm_s = t;
        out->total_s = t;
        return;
    }
    case PM_NODE_FUSED_MATMUL_ALLREDUCE: {
        pm_cost_row own;
        if (!row) {
            pm_cost_row_init(s, n, &own);
            row = &own;
        }
        fused_cost(k, ar, n, row, out);
        return;
    }
    default: return; /* plain_kind */
    }
}

/* A plain operation from its row: the roofline, and the step's host work before the
 * embedding (runtime.c). */
static void row_cost(const pm_cost_ctx *k, const pm_cost_row *row, pm_op_cost *out)
{
    const roof_in ri = roof_prepare(k, row);
    const roof r = roof_at(&ri, row, row->l2_bytes);
    plain_cost(k, row, &r, out);
    if (row->embedding) {
        /* The runtime's host work of the step precedes its first kernel (runtime.c). */
        const double host = pm_runtime_step_s(k->s);
        out->launch_s += host;
        out->total_s += host;
    }
}

void pm_op_cost_row(const pm_cost_ctx *k, const pm_ar_model *ar, const pm_node *n,
                    const pm_cost_row *r, pm_op_cost *out)
{
    if (plain_kind(n->kind))
        row_cost(k, r, out);
    else
        other_cost(k, ar, n, r, out);
}

void pm_op_cost_node(const pm_cost_ctx *k, const pm_ar_model *ar, const pm_node *n,
                     pm_op_cost *out)
{
    if (!plain_kind(n->kind)) {
        other_cost(k, ar, n, NULL, out);
        return;
    }
    pm_cost_row r;
    pm_cost_row_init(k->s, n, &r);
    row_cost(k, &r, out);
}

pm_status pm_op_cost_compute(const pm_scenario *s, const pm_graph *g, size_t i, pm_op_cost *out,
                             pm_error *err)
{
    if (!s || !g || !out || i >= g->n_nodes || !g->nodes)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_op_cost_compute");
    const pm_node *n = &g->nodes[i];
    const char *bad = pm_node_fault(n);
    if (bad) {
        char path[64];
        snprintf(path, sizeof path, "$.nodes[%zu].%s", i, bad);
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, path, "node \"%.32s\": bad %s", n->name,
                       bad);
    }
    if (n->kind == PM_NODE_ALLREDUCE || n->kind == PM_NODE_FUSED_MATMUL_ALLREDUCE ||
        n->kind == PM_NODE_REDUCE_SCATTER || n->kind == PM_NODE_ALL_GATHER) {
        /* Reports a cluster the collective cannot run on. */
        double t;
        pm_status st = pm_allreduce_time(&s->cluster, s->cluster.algorithm, n->comm_bytes, &t,
                                         NULL, err);
        if (st != PM_OK)
            return st;
    }
    pm_cost_ctx k;
    pm_cost_ctx_init(s, &k);
    pm_op_cost_node(&k, NULL, n, out);
    if (!(out->total_s >= 0 && out->total_s < INFINITY))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator",
                       "node \"%.32s\": its time is not finite (a bandwidth, peak or latency is "
                       "zero, negative or too small)", n->name);
    return PM_OK;
}

double pm_op_time_shared(const pm_op_cost *c, double share)
{
    /* Only prefetches run at a reduced share of HBM (schedule.c stretches main-stream ops
     * itself): their time is the HBM stream plus the launch. */
    return share < 1.0 ? c->hbm_s / share + c->launch_s : c->total_s;
}
