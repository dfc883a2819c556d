/*
 * test_schedule.c - the two-stream schedule (DESIGN.md section 7) on small graphs whose
 * timelines are worked out by hand in the comments, with and without HBM sharing.
 *
 * Hand accelerator: no compute time (flop 0), HBM 1e12 bytes/s, L2 4e12 bytes/s, launch 0.
 * So a node reading X bytes from HBM takes X/1e12 s, from L2 X/4e12 s. Cluster: 2 devices,
 * full mesh, one-shot allreduce, 1e11 bytes/s links, alpha 1e-6 s: an allreduce of 2e5
 * bytes takes 1e-6 + 2e-6 = 3e-6 s. Times below are in microseconds.
 */
#include <stdlib.h>

#include "internal.h"
#include "testutil.h"

/* Start and end times are sums of a dozen terms of a few microseconds each: a few ulps of
 * rounding. 1e-12 relative is ample, and any misplaced 0.5 us term breaks it by 1e-2. */
#define TOL 1e-12
#define US 1e-6

/* testutil.h's hand scenario on 2 devices, with the one-shot allreduce the comment above
 * works out by hand. */
static pm_scenario hand_scenario(void)
{
    pm_scenario s = pm_test_hand_scenario(2);
    s.cluster.algorithm = PM_AR_ONESHOT;
    s.cluster.link_latency_s = 1e-6;
    return s;
}

typedef struct spec {
    const char *name;
    pm_node_kind kind;
    double bytes;
} spec;

static pm_graph *chain(const spec *sp, size_t n)
{
    pm_graph *g = pm_graph_alloc();
    for (size_t i = 0; i < n; i++) {
        pm_node nd;
        memset(&nd, 0, sizeof nd);
        nd.kind = sp[i].kind;
        snprintf(nd.name, sizeof nd.name, "%s", sp[i].name);
        nd.stream = PM_STREAM_MAIN;
        nd.prefetch = nd.consumer = nd.trigger = nd.overflow = -1;
        switch (sp[i].kind) {
        case PM_NODE_MATMUL: nd.weight_bytes = sp[i].bytes; break;
        case PM_NODE_ATTENTION: nd.kv_bytes = sp[i].bytes; break;
        case PM_NODE_ALLREDUCE: nd.comm_bytes = sp[i].bytes; break;
        default: nd.act_bytes = sp[i].bytes; break;
        }
        assert_int_equal(pm_graph_add_node(g, &nd, NULL), PM_OK);
        if (i > 0)
            assert_int_equal(pm_graph_add_edge(g, (int)i - 1, (int)i, PM_EDGE_DATA), PM_OK);
    }
    return g;
}

static int find(const pm_graph *g, const char *name)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0)
            return (int)i;
    fail_msg("node %s not found", name);
    return -1;
}

static void assert_slot(const pm_graph *g, const pm_schedule *sc, const char *name, double start,
                        double end)
{
    const int i = find(g, name);
    assert_rel(sc->slots[i].start_s, start, TOL);
    assert_rel(sc->slots[i].end_s, end, TOL);
}

static pm_schedule schedule(const pm_scenario *s, const pm_graph *g)
{
    pm_schedule sc;
    pm_error err;
    pm_status st = pm_schedule_compute(s, g, &sc, &err);
    if (st != PM_OK)
        fail_msg("pm_schedule_compute: %s", err.message);
    assert_int_equal(sc.n_slots, g->n_nodes);
    return sc;
}

/* Two layers, each reduced to what matters:
 *   E       norm, 1e6 bytes of activations      1 us
 *   L0.W    MatMul, 2e6 bytes of weights         2 us from HBM
 *   L0.AR   allreduce of 2e5 bytes               3 us
 *   L1.W    MatMul, 2e6 bytes                    2 us HBM, 0.5 us from L2
 *   L1.Att  Attention, 2e6 bytes of KV           2 us HBM, 0.5 us from L2
 *   L1.AR   allreduce                            3 us
 *   Head    MatMul, 4e6 bytes                    4 us HBM, 1 us from L2 */
static const spec two_layers[] = {
    {"E", PM_NODE_NORM, 1e6},          {"L0.W", PM_NODE_MATMUL, 2e6},
    {"L0.AR", PM_NODE_ALLREDUCE, 2e5}, {"L1.W", PM_NODE_MATMUL, 2e6},
    {"L1.Att", PM_NODE_ATTENTION, 2e6}, {"L1.AR", PM_NODE_ALLREDUCE, 2e5},
    {"Head", PM_NODE_MATMUL, 4e6}};

static void test_serial_schedule_is_the_sum_of_op_times(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    pm_graph *g = chain(two_layers, 7);
    pm_schedule sc = schedule(&s, g);
    /* one stream, back to back: 1 + 2 + 3 + 2 + 2 + 3 + 4 = 17 us */
    assert_slot(g, &sc, "E", 0, 1 * US);
    assert_slot(g, &sc, "L0.W", 1 * US, 3 * US);
    assert_slot(g, &sc, "L0.AR", 3 * US, 6 * US);
    assert_slot(g, &sc, "L1.W", 6 * US, 8 * US);
    assert_slot(g, &sc, "L1.Att", 8 * US, 10 * US);
    assert_slot(g, &sc, "L1.AR", 10 * US, 13 * US);
    assert_slot(g, &sc, "Head", 13 * US, 17 * US);
    assert_rel(sc.makespan_s, 17 * US, TOL);
    assert_rel(sc.main_busy_s, 17 * US, TOL);
    assert_rel(sc.prefetch_busy_s, 0.0, 0.0);
    assert_rel(sc.comm_s, 6 * US, TOL);
    pm_schedule_release(&sc);
    assert_null(sc.slots);
    pm_graph_free(g);
}

static void test_two_layer_preserve_timeline(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    pm_graph *in = chain(two_layers, 7), *g = pm_graph_alloc();
    /* Capacity 1e7: L0.AR prefetches L1.W and L1.Att (4e6 < 1e7), L1.AR prefetches Head. */
    assert_int_equal(pm_insert_prefetch(in, 1e7, g, NULL), PM_OK);
    assert_int_equal(g->n_nodes, 10);
    pm_schedule sc = schedule(&s, g);
    /* Main stream                         Prefetch stream
     *   E       0   - 1
     *   L0.W    1   - 3
     *   L0.AR   3   - 6                   PF(L1.W)   3 - 5   (starts with its allreduce)
     *                                     PF(L1.Att) 5 - 7   (back to back)
     *   L1.W    6   - 6.5   (its prefetch ended at 5; 2e6 bytes from L2)
     *   L1.Att  7   - 7.5   (waits for PF(L1.Att) to end at 7)
     *   L1.AR   7.5 - 10.5                PF(Head)   7.5 - 11.5
     *   Head    11.5 - 12.5 (waits for its prefetch)
     * Layer 1 takes, from one allreduce's start to the next:
     *   AR + max(0, prefetch - AR) + the last consumer's L2 read
     *   = 3 + max(0, 4 - 3) + 0.5 = 4.5 us. */
    assert_slot(g, &sc, "E", 0, 1 * US);
    assert_slot(g, &sc, "L0.W", 1 * US, 3 * US);
    assert_slot(g, &sc, "L0.AR", 3 * US, 6 * US);
    assert_slot(g, &sc, "PF.L1.W", 3 * US, 5 * US);
    assert_slot(g, &sc, "PF.L1.Att", 5 * US, 7 * US);
    assert_slot(g, &sc, "L1.W", 6 * US, 6.5 * US);
    assert_slot(g, &sc, "L1.Att", 7 * US, 7.5 * US);
    assert_slot(g, &sc, "L1.AR", 7.5 * US, 10.5 * US);
    assert_slot(g, &sc, "PF.Head", 7.5 * US, 11.5 * US);
    assert_slot(g, &sc, "Head", 11.5 * US, 12.5 * US);
    assert_rel(sc.makespan_s, 12.5 * US, TOL);
    const double layer = sc.slots[find(g, "L1.AR")].start_s - sc.slots[find(g, "L0.AR")].start_s;
    assert_rel(layer, (3 + (4 - 3) + 0.5) * US, TOL);
    /* main stream: 1 + 2 + 3 + 0.5 + 0.5 + 3 + 1 = 11 us of work; prefetch 2 + 2 + 4 = 8 */
    assert_rel(sc.main_busy_s, 11 * US, TOL);
    assert_rel(sc.prefetch_busy_s, 8 * US, TOL);
    assert_rel(sc.comm_s, 6 * US, TOL);
    /* the main stream keeps program order */
    double prev_end = 0.0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].stream != PM_STREAM_MAIN)
            continue;
        assert_true(sc.slots[i].start_s >= prev_end);
        prev_end = sc.slots[i].end_s;
    }
    pm_schedule_release(&sc);
    pm_graph_free(in);
    pm_graph_free(g);
}

static void test_allreduce_longer_than_prefetch_hides_it(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.cluster.link_latency_s = 5e-6; /* allreduce 5 + 2 = 7 us */
    pm_graph *in = chain(two_layers, 7), *g = pm_graph_alloc();
    assert_int_equal(pm_insert_prefetch(in, 1e7, g, NULL), PM_OK);
    pm_schedule sc = schedule(&s, g);
    /* E 0-1, L0.W 1-3, L0.AR 3-10; PF(L1.W) 3-5, PF(L1.Att) 5-7 (hidden under the AR);
     * L1.W 10-10.5, L1.Att 10.5-11, L1.AR 11-18; PF(Head) 11-15; Head 18-19.
     * Layer 1 = AR + max(0, 4 - 7) + 0.5 + 0.5 = 8 us. */
    assert_slot(g, &sc, "L1.W", 10 * US, 10.5 * US);
    assert_slot(g, &sc, "L1.Att", 10.5 * US, 11 * US);
    assert_slot(g, &sc, "PF.Head", 11 * US, 15 * US);
    assert_slot(g, &sc, "Head", 18 * US, 19 * US);
    const double layer = sc.slots[find(g, "L1.AR")].start_s - sc.slots[find(g, "L0.AR")].start_s;
    assert_rel(layer, 8 * US, TOL);
    assert_rel(sc.makespan_s, 19 * US, TOL);
    pm_schedule_release(&sc);
    pm_graph_free(in);
    pm_graph_free(g);
}

/* AR (1 us, no HBM traffic), N: a norm reading 2e6 bytes (2 us alone), C: a MatMul of 2e6
 * weight bytes, prefetched under AR (2 us on the prefetch stream, 0.5 us from L2). */
static const spec sharing[] = {{"AR", PM_NODE_ALLREDUCE, 1e5},
                               {"N", PM_NODE_NORM, 2e6},
                               {"C", PM_NODE_MATMUL, 2e6}};

static void test_hbm_sharing_splits_bandwidth(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.cluster.link_latency_s = 0.0; /* AR: 1e5 / 1e11 = 1 us */
    pm_graph *in = chain(sharing, 3), *g = pm_graph_alloc();
    assert_int_equal(pm_insert_prefetch(in, 1e7, g, NULL), PM_OK);
    assert_int_equal(g->n_nodes, 4);
    /* Without sharing (the paper's model):
     *   AR 0-1; PF(C) 0-2; N 1-3; C waits for PF (2) and for N (3): 3-3.5. */
    pm_schedule sc = schedule(&s, g);
    assert_slot(g, &sc, "PF.C", 0, 2 * US);
    assert_slot(g, &sc, "N", 1 * US, 3 * US);
    assert_slot(g, &sc, "C", 3 * US, 3.5 * US);
    assert_rel(sc.makespan_s, 3.5 * US, TOL);
    pm_schedule_release(&sc);
    /* With sharing, 50/50 while both read HBM:
     *   0-1: AR (no HBM) beside PF(C) at full rate: PF moves 1e6 of its 2e6 bytes.
     *   1-3: N and PF share: 5e11 bytes/s each. PF's last 1e6 bytes take 2 us: PF ends at 3;
     *        N has moved 1e6 of its 2e6 bytes.
     *   3-4: N alone at full rate: its last 1e6 bytes take 1 us.
     *   C: 4-4.5 from L2.
     * Check: after AR, 3e6 bytes cross HBM at 1e12 bytes/s in 3 us: 1 + 3 = 4. */
    s.options.hbm_sharing = true;
    sc = schedule(&s, g);
    assert_slot(g, &sc, "AR", 0, 1 * US);
    assert_slot(g, &sc, "PF.C", 0, 3 * US);
    assert_slot(g, &sc, "N", 1 * US, 4 * US);
    assert_slot(g, &sc, "C", 4 * US, 4.5 * US);
    assert_rel(sc.makespan_s, 4.5 * US, TOL);
    pm_schedule_release(&sc);
    pm_graph_free(in);
    pm_graph_free(g);
}

/* A shared main operation keeps what its time holds beyond its roofline (here 1 us of fixed
 * latency, an attention kernel's or a GEMM knee's): only its HBM reads slow down, and over
 * that fixed time the prefetch has the whole bandwidth. On the event loop directly: AR (1 us,
 * no HBM) triggers P (2 us of HBM alone); M (2 us of HBM + 1 us fixed = 3 us alone, u = 2 / 2
 * = 1) follows AR.
 *   0-1: AR beside P at full rate: P has 1 us of full-rate work left.
 *   1-8/3: M's roofline at half the bandwidth, 2 x 2 = 4 us, and its 1 us fixed: M's shared
 *        duration 3 + (4 - 2) = 5 us; P's share over it (0.5 x 4 + 1) / 5 = 0.6, P's duration
 *        2 / 0.6 = 10/3 us: its last half takes 5/3 us, P ends at 8/3; M moves (5/3) / 5 = 1/3
 *        of itself.
 *   8/3-14/3: M alone (3 us) does its last 2/3: 2 us. M ends at 14/3 (alone it would end at
 *        4; stretched from its roofline alone, 2 x 2 us, it ended at 4.5, its fixed time lost;
 *        with P at half the bandwidth over M's fixed time too, at 4.8). */
static void test_hbm_sharing_keeps_fixed_time(void **state)
{
    (void)state;
    const pm_op_cost ar = {.comm_s = 1 * US, .total_s = 1 * US};
    const pm_op_cost m = {.hbm_s = 2 * US, .total_s = 3 * US};
    const pm_op_cost p = {.hbm_s = 2 * US, .total_s = 2 * US};
    const pm_sim_op mo[] = {{&ar, -1, true, NULL, NULL}, {&m, -1, false, NULL, NULL}};
    const pm_sim_op po[] = {{&p, 0, false, NULL, NULL}};
    pm_slot ms[2], ps[1];
    pm_schedule tot;
    assert_int_equal(pm_sim_run(mo, 2, po, 1, true, ms, ps, &tot), PM_OK);
    assert_rel(ps[0].end_s, 8.0 / 3.0 * US, TOL);
    assert_rel(ms[1].start_s, 1 * US, TOL);
    assert_rel(ms[1].end_s, 14.0 / 3.0 * US, TOL);
    assert_int_equal(pm_sim_run(mo, 2, po, 1, false, ms, ps, &tot), PM_OK);
    assert_rel(ms[1].end_s, 4 * US, TOL);
    /* A launch-bound norm: 0.05 us of HBM in 5 us (4.95 of launch) beside P2 (4 us of HBM).
     *   0-1: AR beside P2 at full rate: 3 us of it left.
     *   from 1: N at 5 + (2 x 0.05 - 0.05) = 5.05 us; P2's share (0.5 x 0.1 + 4.95) / 5.05
     *        = 5 / 5.05, its duration 4.04 us: its last 3/4 take 3.03 us, P2 ends at 4.03; N
     *        moves 3.03 / 5.05 = 0.6 of itself, its last 0.4 alone (2 us): N ends at 6.03.
     * (Half the bandwidth for the whole 5.05 us, as before, ended P2 at 6.525 and N at 6.05.) */
    const pm_op_cost n = {.hbm_s = 0.05 * US, .total_s = 5 * US};
    const pm_op_cost p2 = {.hbm_s = 4 * US, .total_s = 4 * US};
    const pm_sim_op mo2[] = {{&ar, -1, true, NULL, NULL}, {&n, -1, false, NULL, NULL}};
    const pm_sim_op po2[] = {{&p2, 0, false, NULL, NULL}};
    assert_int_equal(pm_sim_run(mo2, 2, po2, 1, true, ms, ps, &tot), PM_OK);
    assert_rel(ps[0].end_s, 4.03 * US, TOL);
    assert_rel(ms[1].end_s, 6.03 * US, TOL);
}

/* A streaming consumer whose L2 is slower than its HBM reads HBM (pm_stream_consumer_cost);
 * beside a prefetch, sharing HBM, its L2 read is the faster once its data has arrived, and it
 * reads L2, leaving HBM to the prefetch. AR (1 us) triggers P1 (C's, 0.5 us) then P2 (the next
 * consumer's, 4 us); C reads 2 us from HBM or 2.2 us from L2.
 *   0-0.5: AR beside P1; 0.5-1: AR beside P2 (3.5 us of it left).
 *   1: C starts, P1 has ended. From HBM beside P2 (u = 1): C 2 + (2 x 2 - 2) = 4 us, P2 at
 *      half the bandwidth; from L2 (no HBM): 2.2 us, P2 at full rate. C reads L2: 1-3.2; P2
 *      ends at 1 + 3.5 = 4.5. (Reading HBM, C ended at 5 and P2 at 6.5.) */
static void test_hbm_sharing_streaming_consumer_reads_l2(void **state)
{
    (void)state;
    const pm_op_cost ar = {.comm_s = 1 * US, .total_s = 1 * US};
    const pm_op_cost c_hbm = {.hbm_s = 2 * US, .total_s = 2 * US};
    const pm_op_cost c_l2 = {.l2_s = 2.2 * US, .total_s = 2.2 * US};
    const pm_op_cost p1 = {.hbm_s = 0.5 * US, .total_s = 0.5 * US};
    const pm_op_cost p2 = {.hbm_s = 4 * US, .total_s = 4 * US};
    const pm_sim_op mo[] = {{&ar, -1, true, NULL, NULL}, {&c_hbm, 0, false, &c_hbm, &c_l2}};
    const pm_sim_op po[] = {{&p1, 0, false, NULL, NULL}, {&p2, 0, false, NULL, NULL}};
    pm_slot ms[2], ps[2];
    pm_schedule tot;
    assert_int_equal(pm_sim_run(mo, 2, po, 2, true, ms, ps, &tot), PM_OK);
    assert_rel(ps[0].end_s, 0.5 * US, TOL);
    assert_rel(ms[1].start_s, 1 * US, TOL);
    assert_rel(ms[1].end_s, 3.2 * US, TOL);
    assert_rel(ps[1].end_s, 4.5 * US, TOL);
    assert_rel(tot.makespan_s, 4.5 * US, TOL);
}

/* DESIGN.md section 7 taken literally: a consumer waits for its whole prefetch, then reads
 * L2. When the prefetch outlasts the allreduce by more than the L2 read saves, PRESERVE loses
 * to the serial schedule. Here the allreduce takes 1 us, the MatMul's 4e6 bytes take 4 us from
 * HBM and, with the L2 at 2e12 bytes/s, 2 us from L2:
 *   serial:   AR 0-1, C 1-5                         -> 5 us
 *   preserve: AR 0-1, PF 0-4, C waits, C 4-6        -> 6 us = AR + (4 - 1) + 2
 * (Break-even is an L2 read as long as the allreduce.) */
static void test_prefetch_longer_than_allreduce_costs_its_l2_read(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.cluster.link_latency_s = 0.0;
    s.accel.l2_bandwidth_bytes_per_s = 2e12;
    const spec sp[] = {{"AR", PM_NODE_ALLREDUCE, 1e5}, {"C", PM_NODE_MATMUL, 4e6}};
    pm_graph *in = chain(sp, 2), *g = pm_graph_alloc();
    pm_schedule sc = schedule(&s, in);
    assert_rel(sc.makespan_s, 5 * US, TOL);
    pm_schedule_release(&sc);
    assert_int_equal(pm_insert_prefetch(in, 1e7, g, NULL), PM_OK);
    sc = schedule(&s, g);
    assert_slot(g, &sc, "PF.C", 0, 4 * US);
    assert_slot(g, &sc, "C", 4 * US, 6 * US);
    assert_rel(sc.makespan_s, (1 + (4 - 1) + 2) * US, TOL);
    pm_schedule_release(&sc);
    pm_graph_free(in);
    pm_graph_free(g);
}

/* The same graph with streaming consumers (PM_CONSUMER_STREAM): C starts when the allreduce
 * ends (1 us), reads what has arrived at L2 speed (its own work: 2 us, to 3 us), and its last
 * byte arrives with the prefetch at 4 us, before its own misses would have fetched the rest
 * (1 + 4 = 5 us). Makespan 4 us: faster than serial (5) and than waiting (6). */
static void test_streaming_consumer_ends_with_its_prefetch(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.cluster.link_latency_s = 0.0;
    s.accel.l2_bandwidth_bytes_per_s = 2e12;
    s.accel.prefetch_consumer = PM_CONSUMER_STREAM;
    const spec sp[] = {{"AR", PM_NODE_ALLREDUCE, 1e5}, {"C", PM_NODE_MATMUL, 4e6}};
    pm_graph *in = chain(sp, 2), *g = pm_graph_alloc();
    assert_int_equal(pm_insert_prefetch(in, 1e7, g, NULL), PM_OK);
    pm_schedule sc = schedule(&s, g);
    assert_slot(g, &sc, "AR", 0, 1 * US);
    assert_slot(g, &sc, "PF.C", 0, 4 * US);
    assert_slot(g, &sc, "C", 1 * US, 4 * US);
    assert_rel(sc.makespan_s, 4 * US, TOL);
    pm_schedule_release(&sc);
    pm_graph_free(in);
    pm_graph_free(g);
}

/* A prefetcher slower than the operators' own reads (bulk 0.5 x 1e12, kernels 1e12 B/s), so
 * the consumers' misses win and each prefetch is cut at its consumer's end:
 *   AR   1e5 bytes: 1 us                         [0, 1]
 *   PF.A 4e6 bytes at 0.5e12: would end at 8     [0, 5]  cut when A ends
 *   A    starts at 1, own work from L2 1 us, own misses done at 1 + 4 = 5 < 8   [1, 5]
 *   PF.B 1e6 bytes: 2 us from 5, would end at 7  [5, 6]  cut when B ends
 *   B    starts at 5, 0.25 us from L2, own misses at 5 + 1 = 6 < 7              [5, 6]
 * Makespan 6 us: the serial time (1 + 4 + 1), never more. */
static void test_streaming_consumer_misses_beat_a_slow_prefetch(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.cluster.link_latency_s = 0.0;
    s.accel.hbm_efficiency_frac = 0.5;
    s.accel.kernel_hbm_efficiency_frac = 1.0;
    s.accel.prefetch_consumer = PM_CONSUMER_STREAM;
    const spec sp[] = {{"AR", PM_NODE_ALLREDUCE, 1e5}, {"A", PM_NODE_MATMUL, 4e6},
                       {"B", PM_NODE_MATMUL, 1e6}};
    pm_graph *in = chain(sp, 3), *g = pm_graph_alloc();
    pm_schedule sc = schedule(&s, in);
    assert_rel(sc.makespan_s, 6 * US, TOL);
    pm_schedule_release(&sc);
    assert_int_equal(pm_insert_prefetch(in, 1e7, g, NULL), PM_OK);
    sc = schedule(&s, g);
    assert_slot(g, &sc, "AR", 0, 1 * US);
    assert_slot(g, &sc, "PF.A", 0, 5 * US);
    assert_slot(g, &sc, "A", 1 * US, 5 * US);
    assert_slot(g, &sc, "PF.B", 5 * US, 6 * US);
    assert_slot(g, &sc, "B", 5 * US, 6 * US);
    assert_rel(sc.makespan_s, 6 * US, TOL);
    pm_schedule_release(&sc);
    pm_graph_free(in);
    pm_graph_free(g);
}

static void test_no_prefetch_makespan_is_sum_on_built_graph(void **state)
{
    (void)state;
    pm_scenario s = hand_scenario();
    s.cluster.algorithm = PM_AR_AUTO;
    s.accel.kernel_launch_s = 1e-6;
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 300, 0, g, NULL), PM_OK);
    double sum = 0.0, comm = 0.0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        pm_op_cost c;
        assert_int_equal(pm_op_cost_compute(&s, g, i, &c, NULL), PM_OK);
        sum += c.total_s;
        if (g->nodes[i].kind == PM_NODE_ALLREDUCE)
            comm += c.total_s;
    }
    pm_schedule sc = schedule(&s, g);
    /* the same terms summed in the same order, up to the schedule's own accumulation */
    assert_rel(sc.makespan_s, sum, 1e-12);
    assert_rel(sc.comm_s, comm, 1e-12);
    /* hbm_sharing changes nothing when nothing overlaps */
    s.options.hbm_sharing = true;
    pm_schedule sc2 = schedule(&s, g);
    assert_rel(sc2.makespan_s, sum, 1e-12);
    pm_schedule_release(&sc);
    pm_schedule_release(&sc2);
    pm_graph_free(g);
}

static void test_stuck_schedule_is_reported(void **state)
{
    (void)state;
    /* C waits for a prefetch whose trigger (AR) comes after C on the main stream. */
    pm_scenario s = hand_scenario();
    pm_graph *g = pm_graph_alloc();
    pm_node c, pf, ar;
    memset(&c, 0, sizeof c);
    c.kind = PM_NODE_MATMUL;
    snprintf(c.name, sizeof c.name, "C");
    c.weight_bytes = 10;
    c.l2_bytes = 10;
    c.prefetch = 1;
    c.consumer = c.trigger = c.overflow = -1;
    pf = c;
    pf.kind = PM_NODE_PREFETCH;
    pf.stream = PM_STREAM_PREFETCH;
    snprintf(pf.name, sizeof pf.name, "PF");
    pf.l2_bytes = 0;
    pf.prefetch = -1;
    pf.consumer = 0;
    pf.trigger = 2;
    ar = c;
    ar.kind = PM_NODE_ALLREDUCE;
    snprintf(ar.name, sizeof ar.name, "AR");
    ar.weight_bytes = ar.l2_bytes = 0;
    ar.comm_bytes = 100;
    ar.prefetch = -1;
    assert_int_equal(pm_graph_add_node(g, &c, NULL), PM_OK);
    assert_int_equal(pm_graph_add_node(g, &pf, NULL), PM_OK);
    assert_int_equal(pm_graph_add_node(g, &ar, NULL), PM_OK);
    pm_schedule sc;
    pm_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(pm_schedule_compute(&s, g, &sc, &err), PM_ERR_INCONSISTENT);
    assert_non_null(strstr(err.message, "\"C\""));
    assert_null(sc.slots);
    assert_int_equal(pm_schedule_compute(NULL, g, &sc, NULL), PM_ERR_INVALID_ARG);
    pm_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serial_schedule_is_the_sum_of_op_times),
        cmocka_unit_test(test_two_layer_preserve_timeline),
        cmocka_unit_test(test_allreduce_longer_than_prefetch_hides_it),
        cmocka_unit_test(test_hbm_sharing_splits_bandwidth),
        cmocka_unit_test(test_hbm_sharing_keeps_fixed_time),
        cmocka_unit_test(test_hbm_sharing_streaming_consumer_reads_l2),
        cmocka_unit_test(test_prefetch_longer_than_allreduce_costs_its_l2_read),
        cmocka_unit_test(test_streaming_consumer_ends_with_its_prefetch),
        cmocka_unit_test(test_streaming_consumer_misses_beat_a_slow_prefetch),
        cmocka_unit_test(test_no_prefetch_makespan_is_sum_on_built_graph),
        cmocka_unit_test(test_stuck_schedule_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
