/*
 * gemm_eff.c - the GEMM efficiency as a function of the shape (issue 16), measured against the
 * GEMM points of data/validation/gpu.csv (section 5) before it was modelled:
 *
 *  - wave quantisation: an M x N GEMM has T = ceil(M / tile_m) ceil(N / tile_n) output tiles,
 *    run in ceil(T / U) waves on U compute units, each a whole tile's work however much of it
 *    the shape fills, so the compute time is the ideal one divided by
 *    M N / (U ceil(T / U) tile_m tile_n), at the M tile (tile_m or half of it) that wastes
 *    least (a 4096 x 2112 fp8 GEMM on H100, 128 x 128 tiles: 544
 *    tiles, 5 waves of 132, 80 %; DeepGEMM measures 51 % of peak there against 72 % at
 *    4096 x 7168); the time is then a staircase in M and N, never falling as they grow; with
 *    fewer tiles than units the kernels split K over the idle units (split-K, stream-K: the
 *    128 x 2112 decode shapes reach 352 TFLOPS, not the 17 / 132 a single wave would give), 1;
 *  - the knee between memory- and compute-bound: around M = 64-256, where the two times meet,
 *    the kernels are slower than max(compute, memory) (vidur A100 up projection, M = 128:
 *    157 us against max(105, 105) us), because the software pipeline does not hide all of the
 *    shorter phase: t = max(c, m) + overlap_loss x min(c, m);
 *  - a fixed time per GEMM (prologue, first loads, epilogue): the memory-bound GEMVs lie on a line
 *    t = t0 + bytes / BW (vidur A100 M = 1: 58.7 MB in 41 us, 100.7 MB in 65 us).
 *
 *  - weight-only quantisation (int8, fp8 or int4 weights, wider activations): the weights are read
 *    narrow but multiplied wide, so every weight element is converted (and scaled) on the vector
 *    units, once per M tile of the kernel: k n ceil(m / tile_m) / dequant_rate more compute
 *    time. A decode GEMV then becomes bound by the conversion rather than by HBM when the
 *    rate is below twice the HBM bandwidth in elements (no point of the validation set measures
 *    a weight-only GEMM: the rate is the accelerator's conversion throughput).
 *
 * cost.c applies these to every MatMul node, so the graph path and the fast evaluator agree;
 * the accelerator's "gemm" object is read by read_components.c.
 *
 * May call: dtype.c.
 */
#include <math.h>

#include "internal.h"

/* The slots' work (in output elements) an M x N GEMM takes with M tiles of tm rows: U whole
 * tiles a wave, a tile the shape fills in part costing a whole one; with fewer tiles than
 * units the kernels split K over the idle units (split-K, stream-K), the shape's own work. */
static double slots_work(const pm_gemm_params *g, double m, double n, double tm)
{
    const double tiles = ceil(m / tm) * ceil(n / g->tile_n);
    if (tiles < g->compute_units)
        return m * n;
    return ceil(tiles / g->compute_units) * g->compute_units * tm * g->tile_n;
}

double pm_gemm_wave_frac(const pm_accelerator *a, double m, double n)
{
    const pm_gemm_params *g = &a->gemm;
    if (!g->present || !(m >= 1) || !(n >= 1))
        return 1.0;
    /* The kernel's M tile: the accelerator's or half of it, whichever wastes least (cuBLAS's
     * heuristics pick among CUTLASS-style configurations of 128- and 64-row tiles for these
     * shapes; smaller tiles run the tensor cores below their rate, which the model does not
     * have, so they are not offered): the busy fraction is the shape's work over the fewer
     * slots' work. Each candidate's work is a staircase that never falls as M or N grows, so
     * their least never does either (one tile alone with its padding uncharged made a
     * 385-token step faster than a 384-token one). */
    const double half = g->tile_m / 2 >= 1 ? slots_work(g, m, n, g->tile_m / 2) : INFINITY;
    const double whole = slots_work(g, m, n, g->tile_m);
    return m * n / (half < whole ? half : whole);
}

double pm_gemm_dequant_s(const pm_scenario *s, const pm_node *n)
{
    const pm_accelerator *a = &s->accel;
    /* The layers a quantised checkpoint keeps wide (int4's LM head, router) convert nothing. */
    if (!(a->dequant_elem_per_s > 0) || !(n->m >= 1) ||
        !(pm_role_weight_bytes(&s->workload, n->role) < pm_dtype_bytes(n->dtype)))
        return 0.0;
    /* Each M tile of the kernel converts its own copy of the weights it multiplies. */
    const double m_tiles = a->gemm.present ? ceil(n->m / a->gemm.tile_m) : 1.0;
    return n->k * n->n * m_tiles / a->dequant_elem_per_s;
}

double pm_gemm_time(const pm_accelerator *a, double compute_s, double mem_s)
{
    const double hi = compute_s > mem_s ? compute_s : mem_s;
    if (!a->gemm.present)
        return hi;
    const double lo = compute_s > mem_s ? mem_s : compute_s;
    return hi + a->gemm.overlap_loss_frac * lo + a->gemm.latency_s;
}
