/*
 * energy.c - the energy of a step (DESIGN.md section 14): bytes moved at each level times the
 * energy per byte, MACs times the energy per MAC of their datatype, plus static power times
 * time. The coefficients are data (the accelerator's "energy" object, each sourced).
 *
 * Counting rules, one home for both paths (pm_node_traffic, called by the graph path's
 * pm_graph_traffic and by step_plan.c's plans; pm_node_traffic_hw and pm_node_traffic_fixed are
 * its two parts, what reads the hardware and what reads the node alone, which a compiled plan
 * counts apart):
 *  - HBM: each operation's own HBM bytes as its roofline counts them (activations, weights and
 *    KV not served from L2, the tiling bound's extra traffic), and each prefetch's read.
 *  - L2: a prefetched byte is written into L2 once and read back once by its consumer. Where
 *    the L2 is a hardware cache in front of HBM (a streaming consumer's: the GPUs, the 910B),
 *    every byte an operator moves to or from HBM passes it too, a line filled and read, in
 *    every mode alike: pm_energy_of charges the HBM bytes that are not a prefetch's read (the
 *    traffic's L2 fields count the prefetches' alone). A software-managed L2 (a waiting
 *    consumer's: Gaudi, TPU, the paper's DSE chip) is bypassed by operator streams. The
 *    roofline times no L2 term for the pass-through (a limitation of the time model).
 *  - Links: the bytes a device sends in an allreduce, for the algorithm it runs.
 *  - MACs: flop / 2 of every operation in its compute datatype; an allreduce's additions are
 *    not counted (b x hidden adds per allreduce, negligible beside the GEMMs).
 * PRESERVE moves the same HBM bytes as the serial baseline (the prefetch reads what the
 * consumer would have read); behind a software-managed L2 it adds the L2 write and read of each
 * prefetched byte, behind a hardware cache those bytes pass the L2 in both modes; it saves
 * static energy by shortening the step. Which wins is the energy account of EXPERIMENTS.md.
 *
 * May call: area.c, collective.c, cost.c, error.c.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

void pm_traffic_add(pm_traffic *acc, const pm_traffic *t, double w)
{
    acc->hbm_bytes += w * t->hbm_bytes;
    acc->l2_write_bytes += w * t->l2_write_bytes;
    acc->l2_read_bytes += w * t->l2_read_bytes;
    acc->link_bytes += w * t->link_bytes;
    for (int d = 0; d < PM_DTYPE_COUNT; d++)
        acc->mac[d] += w * t->mac[d];
}

void pm_node_traffic_hw(const pm_scenario *s, const pm_ar_model *ar, const pm_ar_model *ar_fused,
                        const pm_node *n, const pm_op_cost *c, double w, pm_traffic *acc)
{
    switch (n->kind) {
    case PM_NODE_ALLREDUCE: acc->link_bytes += w * pm_ar_link_bytes(&s->cluster, ar, n->comm_bytes); return;
    case PM_NODE_ALLTOALL: acc->link_bytes += w * pm_a2a_link_bytes(&s->cluster, n->comm_bytes); return;
    case PM_NODE_RECV: acc->link_bytes += w * n->comm_bytes; return; /* one copy over the link */
    case PM_NODE_REDUCE_SCATTER:
    case PM_NODE_ALL_GATHER: {
        pm_ar_model rs;
        pm_rs_model_init(&s->cluster, s->cluster.algorithm, &rs);
        acc->link_bytes += w * pm_rs_link_bytes(&s->cluster, &rs, n->comm_bytes);
        return;
    }
    case PM_NODE_FUSED_MATMUL_ALLREDUCE: {
        /* k chunks of n/k bytes: the algorithm is the one each chunk runs. */
        const int k = c->chunks > 0 ? c->chunks : 1;
        acc->link_bytes += w * k * pm_ar_link_bytes(&s->cluster, ar_fused, n->comm_bytes / k);
        break;
    }
    default: break;
    }
    acc->hbm_bytes += w * c->hbm_bytes;
}

void pm_node_traffic_fixed(const pm_node *n, double w, pm_traffic *acc)
{
    switch (n->kind) {
    case PM_NODE_ALLREDUCE:
    case PM_NODE_ALLTOALL:
    case PM_NODE_RECV:
    case PM_NODE_REDUCE_SCATTER:
    case PM_NODE_ALL_GATHER: return;
    case PM_NODE_PREFETCH: acc->l2_write_bytes += w * (n->weight_bytes + n->kv_bytes); return;
    default: break;
    }
    acc->l2_read_bytes += w * n->l2_bytes;
    if ((int)n->dtype >= 0 && n->dtype < PM_DTYPE_COUNT)
        acc->mac[n->dtype] += w * n->flop / 2.0;
}

/* Each part adds to its own fields, so the order of the two does not change a sum. */
void pm_node_traffic(const pm_scenario *s, const pm_ar_model *ar, const pm_ar_model *ar_fused,
                     const pm_node *n, const pm_op_cost *c, double w, pm_traffic *acc)
{
    pm_node_traffic_hw(s, ar, ar_fused, n, c, w, acc);
    pm_node_traffic_fixed(n, w, acc);
}

pm_status pm_graph_traffic(const pm_scenario *s, const pm_graph *g, pm_traffic *out,
                           pm_error *err)
{
    if (!s || !g || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_graph_traffic");
    memset(out, 0, sizeof *out);
    pm_ar_model ar, arf;
    pm_ar_model_init(&s->cluster, s->cluster.algorithm, &ar);
    pm_ar_model_init_fused(&s->cluster, &arf);
    const bool stream = s->accel.prefetch_consumer == PM_CONSUMER_STREAM;
    pm_cost_ctx k;
    pm_cost_ctx_init(s, &k);
    for (size_t i = 0; i < g->n_nodes; i++) {
        pm_op_cost c;
        pm_status st = pm_op_cost_compute(s, g, i, &c, err);
        if (st != PM_OK)
            return st;
        const pm_node *n = &g->nodes[i];
        if (stream && n->stream == PM_STREAM_MAIN && n->prefetch >= 0 && n->l2_bytes > 0) {
            /* A streaming consumer whose L2 is slower than its HBM reads HBM, as the schedule
             * times it (pm_stream_consumer_cost): nothing read back from L2. */
            pm_node plain = *n;
            plain.l2_bytes = 0.0;
            pm_op_cost hbm;
            pm_op_cost_node(&k, NULL, &plain, &hbm);
            if (pm_stream_consumer_cost(&c, &hbm) == &hbm) {
                pm_node_traffic(s, &ar, &arf, &plain, &hbm, 1.0, out);
                continue;
            }
        }
        pm_node_traffic(s, &ar, &arf, n, &c, 1.0, out);
    }
    return PM_OK;
}

static bool coeff_ok(double x)
{
    return x >= 0 && isfinite(x);
}

bool pm_energy_any(const pm_energy_params *e)
{
    bool any = e->hbm_J_per_byte > 0 || e->l2_write_J_per_byte > 0 || e->l2_read_J_per_byte > 0 ||
               e->link_J_per_byte > 0 || e->static_W > 0 || e->leakage_W_per_mm2 > 0;
    for (int d = 0; d < PM_DTYPE_COUNT; d++)
        any = any || e->mac_J[d] > 0;
    return any;
}

pm_status pm_static_power(const pm_accelerator *a, double *power_W, pm_error *err)
{
    if (!a || !power_W)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL accelerator or output");
    return pm_static_power_at(a, NULL, power_W, err);
}

/* (internal.h) */
pm_status pm_static_power_at(const pm_accelerator *a, const pm_area *given, double *power_W,
                             pm_error *err)
{
    *power_W = 0.0;
    const pm_energy_params *e = &a->energy;
    if (!e->present)
        return pm_block_missing(err, a, "energy");
    bool ok = coeff_ok(e->hbm_J_per_byte) && coeff_ok(e->l2_write_J_per_byte) &&
              coeff_ok(e->l2_read_J_per_byte) && coeff_ok(e->link_J_per_byte) &&
              coeff_ok(e->static_W) && coeff_ok(e->leakage_W_per_mm2);
    for (int d = 0; d < PM_DTYPE_COUNT; d++)
        ok = ok && coeff_ok(e->mac_J[d]);
    if (!ok)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.energy",
                       "every energy coefficient must be finite and >= 0");
    if (!pm_energy_any(e))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.energy",
                       "every energy coefficient is 0: nothing would cost energy");
    pm_area area;
    if (e->leakage_W_per_mm2 > 0 && !given) {
        const pm_status st = pm_area_compute(a, &area, err);
        if (st != PM_OK)
            return st;
        given = &area;
    }
    *power_W = pm_static_power_of(a, given);
    return PM_OK;
}

/* (internal.h) */
double pm_static_power_of(const pm_accelerator *a, const pm_area *area)
{
    const pm_energy_params *e = &a->energy;
    const double leak = e->leakage_W_per_mm2 > 0 ? e->leakage_W_per_mm2 * area->die_mm2 : 0.0;
    return e->static_W + leak;
}

pm_status pm_energy_compute(const pm_accelerator *a, const pm_traffic *t, double time_s,
                            pm_energy *out, pm_error *err)
{
    if (!a || !t || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_energy_compute");
    *out = (pm_energy){0};
    if (!(time_s >= 0) || !isfinite(time_s))
        return pm_fail(err, PM_ERR_RANGE, NULL, NULL, "time must be finite and >= 0 (got %g s)",
                       time_s);
    bool moved = coeff_ok(t->hbm_bytes) && coeff_ok(t->l2_write_bytes) &&
                 coeff_ok(t->l2_read_bytes) && coeff_ok(t->link_bytes);
    for (int d = 0; d < PM_DTYPE_COUNT; d++)
        moved = moved && coeff_ok(t->mac[d]);
    if (!moved)
        return pm_fail(err, PM_ERR_RANGE, NULL, NULL,
                       "every byte and MAC count of the traffic must be finite and >= 0");
    double p_static;
    pm_status st = pm_static_power(a, &p_static, err);
    if (st != PM_OK)
        return st;
    pm_energy_of(a, p_static, t, time_s, out);
    return PM_OK;
}

void pm_energy_of(const pm_accelerator *a, double p_static, const pm_traffic *t, double time_s,
                  pm_energy *out)
{
    const pm_energy_params *e = &a->energy;
    out->hbm_J = t->hbm_bytes * e->hbm_J_per_byte;
    out->l2_J = t->l2_write_bytes * e->l2_write_J_per_byte + t->l2_read_bytes * e->l2_read_J_per_byte;
    if (a->prefetch_consumer == PM_CONSUMER_STREAM) {
        /* A hardware cache in front of HBM passes every byte an operator moves to or from HBM
         * (all of the HBM bytes but the prefetches' reads, which are their L2 writes): a line
         * filled and read by the cores, in every mode alike. */
        const double through = t->hbm_bytes - t->l2_write_bytes;
        if (through > 0)
            out->l2_J += through * (e->l2_write_J_per_byte + e->l2_read_J_per_byte);
    }
    out->link_J = t->link_bytes * e->link_J_per_byte;
    out->mac_J = 0.0;
    for (int d = 0; d < PM_DTYPE_COUNT; d++)
        out->mac_J += t->mac[d] * e->mac_J[d];
    out->static_J = p_static * time_s;
    out->total_J = out->hbm_J + out->l2_J + out->link_J + out->mac_J + out->static_J;
}

double pm_power_clock_frac(const pm_energy *e, double time_s, double board_W)
{
    if (!e || !(board_W > 0) || !(time_s > 0) || !(e->total_J / time_s > board_W))
        return 1.0;
    const double p_static = e->static_J / time_s;
    const double p_move = (e->hbm_J + e->l2_J + e->link_J) / time_s;
    const double p_mac = e->mac_J / time_s;
    if (!(p_static < board_W))
        return 0.0;
    /* P(x) rises with x from p_static < board_W at 0 to above it at 1: bisection. */
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < 60; i++) {
        const double x = 0.5 * (lo + hi);
        if (p_static + p_move * x + p_mac * x * x * x > board_W)
            hi = x;
        else
            lo = x;
    }
    return lo;
}

pm_status pm_full_bandwidth_power(const pm_accelerator *a, double *power_W, pm_error *err)
{
    if (!power_W)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL output");
    pm_status st = pm_static_power(a, power_W, err);
    if (st != PM_OK)
        return st;
    const pm_energy_params *e = &a->energy;
    *power_W += a->hbm_bandwidth_bytes_per_s *
                (e->hbm_J_per_byte + e->l2_write_J_per_byte + e->l2_read_J_per_byte);
    return PM_OK;
}
