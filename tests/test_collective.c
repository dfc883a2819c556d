/*
 * test_collective.c - the alpha-beta allreduce models of DESIGN.md section 5, each checked
 * against a value worked out by hand from its formula, plus the choice made by "auto", the
 * degenerate cases and a monotonicity property.
 *
 * Unless a test says otherwise: p = 4 devices, B = 1e11 bytes/s per link, alpha = 1e-5 s,
 * n = 1e6 bytes, so n/B = 1e-5 s and n/(pB) = 2.5e-6 s.
 */
#include "testutil.h"

/* Every expected value below is a handful of additions and one division of round numbers:
 * the only error is double rounding, a few ulps, so 1e-12 is ample and still catches any
 * wrong term (the smallest term in these sums is ~1e-3 of the total). */
#define TOL 1e-12

static pm_cluster make_cluster(pm_topology topo, int devices)
{
    pm_cluster c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "hand");
    c.devices = devices;
    c.topology = topo;
    c.algorithm = PM_AR_AUTO;
    c.link_bandwidth_bytes_per_s = 1e11;
    c.link_latency_s = 1e-5;
    return c;
}

static double ar(const pm_cluster *c, pm_allreduce_algo a, double n, pm_allreduce_algo *used)
{
    double t = -1.0;
    pm_error err;
    pm_status st = pm_allreduce_time(c, a, n, &t, used, &err);
    if (st != PM_OK)
        fail_msg("pm_allreduce_time(%s, %g): %s: %s", pm_allreduce_algo_name(a), n,
                 pm_status_name(st), err.message);
    return t;
}

static void test_ring_formula(void **state)
{
    (void)state;
    pm_cluster c = make_cluster(PM_TOPO_FULL_MESH, 4);
    /* 2(p-1)(alpha + n/(pB)) = 6 * (1e-5 + 2.5e-6) = 7.5e-5 s */
    assert_rel(ar(&c, PM_AR_RING, 1e6, NULL), 6.0 * (1e-5 + 2.5e-6), TOL);
    assert_rel(ar(&c, PM_AR_RING, 1e6, NULL), 7.5e-5, TOL);
    /* The ring topology runs the same formula. */
    pm_cluster r = make_cluster(PM_TOPO_RING, 4);
    assert_rel(ar(&r, PM_AR_RING, 1e6, NULL), 7.5e-5, TOL);
    /* p = 8: 14 * (1e-5 + 1e6/8e11 = 1.25e-6) = 14 * 1.125e-5 = 1.575e-4 s */
    pm_cluster r8 = make_cluster(PM_TOPO_RING, 8);
    assert_rel(ar(&r8, PM_AR_RING, 1e6, NULL), 1.575e-4, TOL);
}

static void test_ring_pipelined(void **state)
{
    (void)state;
    pm_cluster r = make_cluster(PM_TOPO_RING, 4);
    /* alpha + 2(p-1) n/(pB) = 1e-5 + 6 * 2.5e-6 = 2.5e-5 s: one start-up, not 2(p-1) */
    assert_rel(ar(&r, PM_AR_RING_PIPELINED, 1e6, NULL), 2.5e-5, TOL);
    /* p = 128: 1e-5 + 254 * 1e6 / 1.28e13 = 1e-5 + 1.984375e-5 s */
    pm_cluster r128 = make_cluster(PM_TOPO_RING, 128);
    assert_rel(ar(&r128, PM_AR_RING_PIPELINED, 1e6, NULL), 2.984375e-5, TOL);
    /* Never chosen by auto (it is the paper's DSE model, not an algorithm of a library). */
    pm_allreduce_algo used;
    ar(&r, PM_AR_AUTO, 1e6, &used);
    assert_int_equal(used, PM_AR_RING);
    /* Not on a hierarchical cluster. */
    pm_cluster h = make_cluster(PM_TOPO_HIERARCHICAL, 8);
    h.devices_per_node = 4;
    h.inter_node_bandwidth_bytes_per_s = 1e10;
    double t;
    assert_int_equal(pm_allreduce_time(&h, PM_AR_RING_PIPELINED, 1e6, &t, NULL, NULL),
                     PM_ERR_INCONSISTENT);
}

static void test_oneshot_full_mesh_and_switch(void **state)
{
    (void)state;
    pm_cluster mesh = make_cluster(PM_TOPO_FULL_MESH, 4);
    /* full mesh: alpha + n/B = 1e-5 + 1e-5 = 2e-5 s (the p-1 peers are read in parallel) */
    assert_rel(ar(&mesh, PM_AR_ONESHOT, 1e6, NULL), 2e-5, TOL);
    pm_cluster sw = make_cluster(PM_TOPO_SWITCH, 4);
    /* switch, one port: alpha + (p-1) n/B = 1e-5 + 3e-5 = 4e-5 s */
    assert_rel(ar(&sw, PM_AR_ONESHOT, 1e6, NULL), 4e-5, TOL);
}

static void test_twoshot_full_mesh_and_switch(void **state)
{
    (void)state;
    pm_cluster mesh = make_cluster(PM_TOPO_FULL_MESH, 4);
    /* full mesh: 2(alpha + n/(pB)) = 2 * (1e-5 + 2.5e-6) = 2.5e-5 s */
    assert_rel(ar(&mesh, PM_AR_TWOSHOT, 1e6, NULL), 2.5e-5, TOL);
    pm_cluster sw = make_cluster(PM_TOPO_SWITCH, 4);
    /* switch: 2(alpha + (p-1) n/(pB)) = 2 * (1e-5 + 7.5e-6) = 3.5e-5 s */
    assert_rel(ar(&sw, PM_AR_TWOSHOT, 1e6, NULL), 3.5e-5, TOL);
}

static void test_tree_non_power_of_two(void **state)
{
    (void)state;
    pm_cluster c4 = make_cluster(PM_TOPO_FULL_MESH, 4);
    /* p = 4: 2 ceil(log2 4) = 4 steps of (1e-5 + 1e-5): 8e-5 s */
    assert_rel(ar(&c4, PM_AR_TREE, 1e6, NULL), 8e-5, TOL);
    /* p = 5 and p = 6: ceil(log2 p) = 3, 6 steps: 1.2e-4 s */
    pm_cluster c5 = make_cluster(PM_TOPO_SWITCH, 5);
    assert_rel(ar(&c5, PM_AR_TREE, 1e6, NULL), 1.2e-4, TOL);
    pm_cluster c6 = make_cluster(PM_TOPO_FULL_MESH, 6);
    assert_rel(ar(&c6, PM_AR_TREE, 1e6, NULL), 1.2e-4, TOL);
    /* p = 3: ceil(log2 3) = 2, 4 steps: 8e-5 s */
    pm_cluster c3 = make_cluster(PM_TOPO_FULL_MESH, 3);
    assert_rel(ar(&c3, PM_AR_TREE, 1e6, NULL), 8e-5, TOL);
}

static void test_hierarchical_two_nodes_of_four(void **state)
{
    (void)state;
    pm_cluster c = make_cluster(PM_TOPO_HIERARCHICAL, 8);
    c.devices_per_node = 4;
    c.inter_node_bandwidth_bytes_per_s = 2.5e10;
    c.inter_node_latency_s = 2e-5;
    /* intra-node reduce-scatter, q = 4: (q-1)(alpha + n/(qB)) = 3 * (1e-5 + 2.5e-6) = 3.75e-5
     * inter-node ring over 2 nodes of n/q = 2.5e5 bytes:
     *   2(2-1)(2e-5 + 2.5e5/(2 * 2.5e10)) = 2 * (2e-5 + 5e-6) = 5e-5
     * intra-node all-gather: 3.75e-5 again.  Total 3.75e-5 + 5e-5 + 3.75e-5 = 1.25e-4 s */
    pm_allreduce_algo used = PM_AR_AUTO;
    assert_rel(ar(&c, PM_AR_HIERARCHICAL, 1e6, NULL), 1.25e-4, TOL);
    assert_rel(ar(&c, PM_AR_AUTO, 1e6, &used), 1.25e-4, TOL);
    assert_int_equal(used, PM_AR_HIERARCHICAL);
    /* Nodes whose devices are a full mesh: each intra-node phase is one step, every device
     * sending its n/q shares over a link each: alpha + n/(qB) = 1e-5 + 2.5e-6 = 1.25e-5, twice,
     * around the same inter-node 5e-5: 7.5e-5 s. */
    c.intra_node_topology = PM_TOPO_FULL_MESH;
    assert_rel(ar(&c, PM_AR_HIERARCHICAL, 1e6, NULL), 7.5e-5, TOL);
    /* Behind a switch, one link per device: alpha + (q-1)n/(qB) = 1e-5 + 7.5e-6, twice: 8.5e-5. */
    c.intra_node_topology = PM_TOPO_SWITCH;
    assert_rel(ar(&c, PM_AR_HIERARCHICAL, 1e6, NULL), 8.5e-5, TOL);
    /* One node of the full mesh: the intra-node phases alone, 2.5e-5 s. */
    c.intra_node_topology = PM_TOPO_FULL_MESH;
    c.devices = 4;
    assert_rel(ar(&c, PM_AR_HIERARCHICAL, 1e6, NULL), 2.5e-5, TOL);
}

static double rs(const pm_cluster *c, pm_allreduce_algo a, double n, pm_allreduce_algo *used)
{
    double t = -1.0, g = -2.0;
    pm_error err;
    pm_status st = pm_reduce_scatter_time(c, a, n, &t, used, &err);
    if (st != PM_OK)
        fail_msg("pm_reduce_scatter_time(%s, %g): %s: %s", pm_allreduce_algo_name(a), n,
                 pm_status_name(st), err.message);
    /* The all-gather is the reduce-scatter reversed: the same time, always. */
    assert_int_equal(pm_all_gather_time(c, a, n, &g, NULL, NULL), PM_OK);
    assert_rel(g, t, 0.0);
    return t;
}

/* Sequence parallelism's halves, each from its formula by hand (pm_reduce_scatter_time's
 * comment), and RS + AG against the allreduce where it is the two of them. */
static void test_reduce_scatter_and_all_gather_by_hand(void **state)
{
    (void)state;
    pm_cluster c = make_cluster(PM_TOPO_FULL_MESH, 4);
    /* ring: (p-1)(alpha + n/(pB)) = 3 * (1e-5 + 2.5e-6) = 3.75e-5 s; RS + AG = the ring
     * allreduce's 7.5e-5 */
    assert_rel(rs(&c, PM_AR_RING, 1e6, NULL), 3.75e-5, TOL);
    assert_rel(2.0 * rs(&c, PM_AR_RING, 1e6, NULL), ar(&c, PM_AR_RING, 1e6, NULL), TOL);
    /* twoshot on the mesh: alpha + n/(pB) = 1.25e-5; twice is the twoshot allreduce's 2.5e-5 */
    assert_rel(rs(&c, PM_AR_TWOSHOT, 1e6, NULL), 1.25e-5, TOL);
    assert_rel(2.0 * rs(&c, PM_AR_TWOSHOT, 1e6, NULL), ar(&c, PM_AR_TWOSHOT, 1e6, NULL), TOL);
    /* oneshot: each rank reads only its shard from every peer, as twoshot's half: 1.25e-5
     * (the one-shot allreduce reads whole messages: alpha + n/B = 2e-5) */
    assert_rel(rs(&c, PM_AR_ONESHOT, 1e6, NULL), 1.25e-5, TOL);
    /* tree, p = 4: recursive halving, ceil(log2 4) alpha + (p-1)n/(pB) = 2e-5 + 7.5e-6 */
    assert_rel(rs(&c, PM_AR_TREE, 1e6, NULL), 2.75e-5, TOL);
    /* auto on the mesh: the fastest of them, 1.25e-5 (oneshot, the first of the ties) */
    pm_allreduce_algo used = PM_AR_AUTO;
    assert_rel(rs(&c, PM_AR_AUTO, 1e6, &used), 1.25e-5, TOL);
    assert_int_equal(used, PM_AR_ONESHOT);
    /* switch: alpha + (p-1)n/(pB) = 1e-5 + 7.5e-6 = 1.75e-5 */
    pm_cluster sw = make_cluster(PM_TOPO_SWITCH, 4);
    assert_rel(rs(&sw, PM_AR_TWOSHOT, 1e6, NULL), 1.75e-5, TOL);
    /* ring_pipelined: alpha + (p-1)n/(pB) = 1e-5 + 7.5e-6 = 1.75e-5 each: RS + AG = 3.5e-5,
     * the pipelined allreduce's 2.5e-5 plus the second start-up */
    pm_cluster r = make_cluster(PM_TOPO_RING, 4);
    assert_rel(rs(&r, PM_AR_RING_PIPELINED, 1e6, NULL), 1.75e-5, TOL);
    assert_rel(2.0 * rs(&r, PM_AR_RING_PIPELINED, 1e6, NULL),
               ar(&r, PM_AR_RING_PIPELINED, 1e6, NULL) + 1e-5, TOL);
    /* hierarchical, two nodes of four on rings (test_hierarchical_two_nodes_of_four): the
     * intra-node reduce-scatter 3.75e-5 + the inter-node ring reduce-scatter of n/q,
     * (2-1)(2e-5 + 2.5e5/(2 * 2.5e10)) = 2.5e-5: 6.25e-5, half the allreduce's 1.25e-4 */
    pm_cluster h = make_cluster(PM_TOPO_HIERARCHICAL, 8);
    h.devices_per_node = 4;
    h.inter_node_bandwidth_bytes_per_s = 2.5e10;
    h.inter_node_latency_s = 2e-5;
    assert_rel(rs(&h, PM_AR_HIERARCHICAL, 1e6, NULL), 6.25e-5, TOL);
    /* One device or nothing to move: no time; an algorithm the topology cannot run: refused. */
    pm_cluster one = make_cluster(PM_TOPO_FULL_MESH, 1);
    assert_rel(rs(&one, PM_AR_AUTO, 1e6, NULL), 0.0, 0.0);
    assert_rel(rs(&c, PM_AR_AUTO, 0.0, NULL), 0.0, 0.0);
    double t;
    assert_int_equal(pm_reduce_scatter_time(&r, PM_AR_ONESHOT, 1e6, &t, NULL, NULL),
                     PM_ERR_INCONSISTENT);
    assert_int_equal(pm_all_gather_time(&c, PM_AR_AUTO, -1.0, &t, NULL, NULL),
                     PM_ERR_INVALID_ARG);
}

static void test_auto_small_message_picks_oneshot(void **state)
{
    (void)state;
    pm_cluster c = make_cluster(PM_TOPO_FULL_MESH, 4);
    /* A decode message, b * hidden * 1 byte = 4 * 8192 = 32768 bytes: alpha dominates.
     * oneshot 1e-5 + 3.2768e-7, twoshot 2e-5 + ..., ring 6e-5 + ..., tree 4e-5 + ... */
    pm_allreduce_algo used = PM_AR_AUTO;
    double t = ar(&c, PM_AR_AUTO, 32768.0, &used);
    assert_int_equal(used, PM_AR_ONESHOT);
    assert_rel(t, 1e-5 + 32768.0 / 1e11, TOL);
}

static void test_auto_crossover_oneshot_twoshot(void **state)
{
    (void)state;
    pm_cluster c = make_cluster(PM_TOPO_FULL_MESH, 4);
    /* oneshot < twoshot  <=>  alpha + n/B < 2 alpha + 2n/(pB)  <=>  n (1 - 2/p)/B < alpha
     *                   <=>  n < alpha B p/(p-2) = 1e-5 * 1e11 * 2 = 2e6 bytes. */
    pm_allreduce_algo used = PM_AR_AUTO;
    double t = ar(&c, PM_AR_AUTO, 1.9e6, &used);
    assert_int_equal(used, PM_AR_ONESHOT);
    assert_rel(t, 1e-5 + 1.9e-5, TOL);
    t = ar(&c, PM_AR_AUTO, 2.1e6, &used);
    assert_int_equal(used, PM_AR_TWOSHOT);
    /* 2 * (1e-5 + 2.1e6/4e11 = 5.25e-6) = 3.05e-5 */
    assert_rel(t, 3.05e-5, TOL);
    /* Large: 1e9 bytes.  oneshot 1e-2 + 1e-5; twoshot 2 (1e-5 + 2.5e-3) = 5.02e-3;
     * ring 6 (1e-5 + 2.5e-3) = 1.506e-2; tree 4 (1e-5 + 1e-2): twoshot wins. */
    t = ar(&c, PM_AR_AUTO, 1e9, &used);
    assert_int_equal(used, PM_AR_TWOSHOT);
    assert_rel(t, 5.02e-3, TOL);
}

static void test_auto_on_switch_and_ring(void **state)
{
    (void)state;
    pm_cluster sw = make_cluster(PM_TOPO_SWITCH, 4);
    pm_allreduce_algo used = PM_AR_AUTO;
    /* Switch, 1e9 bytes: oneshot 1e-5 + 3e-2; twoshot 2 (1e-5 + 7.5e-3) = 1.502e-2;
     * ring 6 (1e-5 + 2.5e-3) = 1.506e-2 (same bandwidth term, more latency); tree 4.004e-2. */
    double t = ar(&sw, PM_AR_AUTO, 1e9, &used);
    assert_int_equal(used, PM_AR_TWOSHOT);
    assert_rel(t, 1.502e-2, TOL);
    /* Switch, small message (1e3 bytes): oneshot 1e-5 + 3e-8 beats twoshot's 2 alpha. */
    t = ar(&sw, PM_AR_AUTO, 1e3, &used);
    assert_int_equal(used, PM_AR_ONESHOT);
    assert_rel(t, 1e-5 + 3e-8, TOL);
    /* A ring topology can only run the ring. */
    pm_cluster r = make_cluster(PM_TOPO_RING, 4);
    t = ar(&r, PM_AR_AUTO, 32768.0, &used);
    assert_int_equal(used, PM_AR_RING);
    assert_rel(t, 6.0 * (1e-5 + 32768.0 / 4e11), TOL);
}

static void test_auto_is_the_minimum(void **state)
{
    (void)state;
    const pm_topology topos[] = {PM_TOPO_FULL_MESH, PM_TOPO_SWITCH};
    const pm_allreduce_algo algos[] = {PM_AR_RING, PM_AR_ONESHOT, PM_AR_TWOSHOT, PM_AR_TREE};
    for (size_t ti = 0; ti < 2; ti++)
        for (int p = 2; p <= 16; p++)
            for (double n = 1e2; n <= 1e10; n *= 10) {
                pm_cluster c = make_cluster(topos[ti], p);
                pm_allreduce_algo used = PM_AR_AUTO;
                double best = ar(&c, PM_AR_AUTO, n, &used);
                double min = INFINITY;
                for (size_t a = 0; a < 4; a++) {
                    double t = ar(&c, algos[a], n, NULL);
                    if (t < min)
                        min = t;
                }
                /* auto returns one of the candidates' values, computed the same way */
                assert_rel(best, min, 0.0);
                assert_rel(ar(&c, used, n, NULL), best, 0.0);
            }
}

static void test_one_device_and_empty_message_take_no_time(void **state)
{
    (void)state;
    pm_cluster c = make_cluster(PM_TOPO_FULL_MESH, 1);
    const pm_allreduce_algo algos[] = {PM_AR_AUTO, PM_AR_RING, PM_AR_ONESHOT, PM_AR_TWOSHOT,
                                       PM_AR_TREE};
    for (size_t a = 0; a < 5; a++)
        assert_rel(ar(&c, algos[a], 1e6, NULL), 0.0, 0.0);
    pm_cluster r = make_cluster(PM_TOPO_RING, 1);
    assert_rel(ar(&r, PM_AR_AUTO, 1e6, NULL), 0.0, 0.0);
    pm_cluster c4 = make_cluster(PM_TOPO_FULL_MESH, 4);
    assert_rel(ar(&c4, PM_AR_AUTO, 0.0, NULL), 0.0, 0.0);
}

static void expect_inconsistent(pm_topology topo, pm_allreduce_algo algo)
{
    pm_cluster c = make_cluster(topo, 8);
    if (topo == PM_TOPO_HIERARCHICAL) {
        c.devices_per_node = 4;
        c.inter_node_bandwidth_bytes_per_s = 1e10;
        c.inter_node_latency_s = 1e-5;
    }
    double t = 0.0;
    pm_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(pm_allreduce_time(&c, algo, 1e6, &t, NULL, &err), PM_ERR_INCONSISTENT);
    assert_int_equal(err.status, PM_ERR_INCONSISTENT);
    assert_non_null(strstr(err.message, pm_allreduce_algo_name(algo)));
}

static void test_algorithm_not_allowed_on_topology(void **state)
{
    (void)state;
    expect_inconsistent(PM_TOPO_RING, PM_AR_ONESHOT);
    expect_inconsistent(PM_TOPO_RING, PM_AR_TWOSHOT);
    expect_inconsistent(PM_TOPO_RING, PM_AR_TREE);
    expect_inconsistent(PM_TOPO_RING, PM_AR_HIERARCHICAL);
    expect_inconsistent(PM_TOPO_FULL_MESH, PM_AR_HIERARCHICAL);
    expect_inconsistent(PM_TOPO_SWITCH, PM_AR_HIERARCHICAL);
    expect_inconsistent(PM_TOPO_HIERARCHICAL, PM_AR_RING);
    expect_inconsistent(PM_TOPO_HIERARCHICAL, PM_AR_ONESHOT);
}

/* The allreduce efficiency scales every algorithm's bytes term, never its start-ups: at
 * eff = 0.8 the bytes move at 0.8e11 bytes/s, so n/(pB) = 1e6 / (4 * 0.8e11) = 3.125e-6 s and
 * n/B = 1.25e-5 s. */
static void test_allreduce_efficiency_scales_the_bytes_term(void **state)
{
    (void)state;
    pm_cluster mesh = make_cluster(PM_TOPO_FULL_MESH, 4);
    mesh.allreduce_efficiency_frac = 0.8;
    /* ring 2(p-1)(alpha + n/(pB)) = 6 * (1e-5 + 3.125e-6) = 7.875e-5 s (7.5e-5 at eff 1) */
    assert_rel(ar(&mesh, PM_AR_RING, 1e6, NULL), 7.875e-5, TOL);
    /* oneshot alpha + n/B = 1e-5 + 1.25e-5 = 2.25e-5 s */
    assert_rel(ar(&mesh, PM_AR_ONESHOT, 1e6, NULL), 2.25e-5, TOL);
    /* tree 4 steps of (alpha + n/B) = 4 * 2.25e-5 = 9e-5 s */
    assert_rel(ar(&mesh, PM_AR_TREE, 1e6, NULL), 9e-5, TOL);
    pm_cluster sw = make_cluster(PM_TOPO_SWITCH, 4);
    sw.allreduce_efficiency_frac = 0.8;
    /* twoshot on a switch 2(alpha + (p-1) n/(pB)) = 2 * (1e-5 + 9.375e-6) = 3.875e-5 s */
    assert_rel(ar(&sw, PM_AR_TWOSHOT, 1e6, NULL), 3.875e-5, TOL);
    /* 0 stands for 1: the formulas of the tests above. */
    mesh.allreduce_efficiency_frac = 0.0;
    assert_rel(ar(&mesh, PM_AR_RING, 1e6, NULL), 7.5e-5, TOL);
    /* Outside [0, 1] (NaN included) it is refused, not turned into a faster link. */
    const double bad[] = {1.5, -0.1, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mesh.allreduce_efficiency_frac = bad[i];
        double t = -1.0;
        pm_error err;
        assert_int_equal(pm_allreduce_time(&mesh, PM_AR_AUTO, 1e6, &t, NULL, &err),
                         PM_ERR_RANGE);
        assert_string_equal(err.path, "$.cluster.allreduce_efficiency");
    }
}

static void test_rejects_null_and_bad_message(void **state)
{
    (void)state;
    pm_cluster c = make_cluster(PM_TOPO_FULL_MESH, 4);
    double t;
    assert_int_equal(pm_allreduce_time(NULL, PM_AR_AUTO, 1e6, &t, NULL, NULL),
                     PM_ERR_INVALID_ARG);
    assert_int_equal(pm_allreduce_time(&c, PM_AR_AUTO, 1e6, NULL, NULL, NULL),
                     PM_ERR_INVALID_ARG);
    assert_int_equal(pm_allreduce_time(&c, PM_AR_AUTO, -1.0, &t, NULL, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_allreduce_time(&c, PM_AR_AUTO, NAN, &t, NULL, NULL), PM_ERR_INVALID_ARG);
}

static void test_rejects_bad_bandwidth_and_enums(void **state)
{
    (void)state;
    pm_cluster c = make_cluster(PM_TOPO_FULL_MESH, 4);
    double t = -1.0;
    pm_error err;
    /* A zero, negative, infinite or NaN bandwidth would give an infinite or NaN time. */
    const double bad_bw[] = {0.0, -1e11, INFINITY, NAN};
    for (size_t i = 0; i < sizeof bad_bw / sizeof bad_bw[0]; i++) {
        c.link_bandwidth_bytes_per_s = bad_bw[i];
        assert_int_equal(pm_allreduce_time(&c, PM_AR_AUTO, 1e6, &t, NULL, &err), PM_ERR_RANGE);
        assert_string_equal(err.path, "$.cluster");
    }
    c = make_cluster(PM_TOPO_FULL_MESH, 4);
    c.link_latency_s = NAN;
    assert_int_equal(pm_allreduce_time(&c, PM_AR_ONESHOT, 1e6, &t, NULL, &err), PM_ERR_RANGE);
    /* Values outside the enums are argument errors, not an infinite time. */
    c = make_cluster((pm_topology)99, 4);
    assert_int_equal(pm_allreduce_time(&c, PM_AR_AUTO, 1e6, &t, NULL, &err), PM_ERR_INVALID_ARG);
    c = make_cluster(PM_TOPO_RING, 4);
    assert_int_equal(pm_allreduce_time(&c, (pm_allreduce_algo)42, 1e6, &t, NULL, &err),
                     PM_ERR_INVALID_ARG);
    /* One device needs no link: any bandwidth is fine, the time is 0. */
    c = make_cluster(PM_TOPO_FULL_MESH, 1);
    c.link_bandwidth_bytes_per_s = 0.0;
    assert_int_equal(pm_allreduce_time(&c, PM_AR_AUTO, 1e6, &t, NULL, &err), PM_OK);
    assert_rel(t, 0.0, 0.0);
}

static void test_more_bandwidth_never_slower(void **state)
{
    (void)state;
    const pm_topology topos[] = {PM_TOPO_RING, PM_TOPO_FULL_MESH, PM_TOPO_SWITCH,
                                 PM_TOPO_HIERARCHICAL};
    const pm_allreduce_algo algos[] = {PM_AR_AUTO, PM_AR_RING, PM_AR_ONESHOT, PM_AR_TWOSHOT,
                                       PM_AR_TREE, PM_AR_HIERARCHICAL};
    for (size_t ti = 0; ti < 4; ti++)
        for (size_t ai = 0; ai < 6; ai++)
            for (int p = 2; p <= 16; p *= 2)
                for (double n = 1e3; n <= 1e9; n *= 100) {
                    pm_cluster c = make_cluster(topos[ti], p);
                    c.devices_per_node = 2;
                    c.inter_node_bandwidth_bytes_per_s = 1e10;
                    c.inter_node_latency_s = 2e-5;
                    double t0;
                    if (pm_allreduce_time(&c, algos[ai], n, &t0, NULL, NULL) != PM_OK)
                        continue; /* not allowed on this topology */
                    assert_true(isfinite(t0) && t0 > 0);
                    pm_cluster faster = c;
                    faster.link_bandwidth_bytes_per_s *= 2.0;
                    faster.inter_node_bandwidth_bytes_per_s *= 2.0;
                    double t1 = ar(&faster, algos[ai], n, NULL);
                    assert_true(t1 <= t0);
                    /* strictly faster: every formula has a bandwidth term */
                    assert_true(t1 < t0);
                    /* and a larger message is never faster */
                    assert_true(ar(&c, algos[ai], 2.0 * n, NULL) >= t0);
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_formula),
        cmocka_unit_test(test_ring_pipelined),
        cmocka_unit_test(test_oneshot_full_mesh_and_switch),
        cmocka_unit_test(test_twoshot_full_mesh_and_switch),
        cmocka_unit_test(test_tree_non_power_of_two),
        cmocka_unit_test(test_hierarchical_two_nodes_of_four),
        cmocka_unit_test(test_reduce_scatter_and_all_gather_by_hand),
        cmocka_unit_test(test_auto_small_message_picks_oneshot),
        cmocka_unit_test(test_auto_crossover_oneshot_twoshot),
        cmocka_unit_test(test_auto_on_switch_and_ring),
        cmocka_unit_test(test_auto_is_the_minimum),
        cmocka_unit_test(test_one_device_and_empty_message_take_no_time),
        cmocka_unit_test(test_algorithm_not_allowed_on_topology),
        cmocka_unit_test(test_allreduce_efficiency_scales_the_bytes_term),
        cmocka_unit_test(test_rejects_null_and_bad_message),
        cmocka_unit_test(test_rejects_bad_bandwidth_and_enums),
        cmocka_unit_test(test_more_bandwidth_never_slower),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
