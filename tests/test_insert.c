/*
 * test_insert.c - the paper's Algorithm 1 (DESIGN.md section 6) on graphs built by hand, where
 * every window's running sum can be read off the node list, and on a built decode graph.
 *
 * Hand graphs are chains (node i -> node i+1, data edges) written as a list of
 * (kind, prefetchable bytes). Capacities are round numbers of bytes.
 */
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

typedef struct spec {
    pm_node_kind kind;
    double bytes; /* weight bytes of a MatMul, KV bytes of an Attention, act bytes otherwise */
} spec;

static pm_graph *chain(const spec *sp, size_t n)
{
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    for (size_t i = 0; i < n; i++) {
        pm_node nd;
        memset(&nd, 0, sizeof nd);
        nd.kind = sp[i].kind;
        snprintf(nd.name, sizeof nd.name, "n%zu", i);
        nd.layer = 0;
        nd.stream = PM_STREAM_MAIN;
        nd.prefetch = nd.consumer = nd.trigger = nd.overflow = -1;
        switch (sp[i].kind) {
        case PM_NODE_MATMUL: nd.weight_bytes = sp[i].bytes; nd.act_bytes = 7; break;
        case PM_NODE_ATTENTION: nd.kv_bytes = sp[i].bytes; nd.act_bytes = 11; break;
        case PM_NODE_ALLREDUCE: nd.comm_bytes = sp[i].bytes; break;
        default: nd.act_bytes = sp[i].bytes; break;
        }
        assert_int_equal(pm_graph_add_node(g, &nd, NULL), PM_OK);
        if (i > 0)
            assert_int_equal(pm_graph_add_edge(g, (int)i - 1, (int)i, PM_EDGE_DATA), PM_OK);
    }
    return g;
}

static pm_graph *insert(const pm_graph *in, double cap)
{
    pm_graph *out = pm_graph_alloc();
    pm_error err;
    pm_status st = pm_insert_prefetch(in, cap, out, &err);
    if (st != PM_OK)
        fail_msg("pm_insert_prefetch: %s", err.message);
    return out;
}

static int find(const pm_graph *g, const char *name)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0)
            return (int)i;
    fail_msg("node %s not found", name);
    return -1;
}

static int count_prefetch(const pm_graph *g)
{
    int c = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        c += g->nodes[i].kind == PM_NODE_PREFETCH;
    return c;
}

/* Checks that the consumer named `name` is served by a prefetch triggered by `trigger`, with
 * its links both ways and its edges. */
static void assert_prefetched_by(const pm_graph *g, const char *name, const char *trigger)
{
    const int c = find(g, name), t = find(g, trigger);
    const pm_node *cons = &g->nodes[c];
    assert_true(cons->prefetch >= 0);
    const pm_node *pf = &g->nodes[cons->prefetch];
    assert_int_equal(pf->kind, PM_NODE_PREFETCH);
    assert_int_equal(pf->stream, PM_STREAM_PREFETCH);
    assert_int_equal(pf->consumer, c);
    assert_int_equal(pf->trigger, t);
    const double m = pm_node_prefetchable_bytes(cons);
    assert_rel(pf->weight_bytes + pf->kv_bytes, m, 0.0);
    assert_rel(cons->l2_bytes, m, 0.0);
    /* a trigger edge from the communication node and a data edge to the consumer */
    bool trig = false, data = false;
    for (size_t e = 0; e < g->n_edges; e++) {
        const pm_edge *ed = &g->edges[e];
        trig = trig || (ed->from == t && ed->to == cons->prefetch && ed->kind == PM_EDGE_TRIGGER);
        data = data || (ed->from == cons->prefetch && ed->to == c && ed->kind == PM_EDGE_DATA);
    }
    assert_true(trig);
    assert_true(data);
    /* program order: trigger, then prefetch, then consumer */
    assert_true(t < cons->prefetch && cons->prefetch < c);
}

static void assert_not_prefetched(const pm_graph *g, const char *name)
{
    const pm_node *n = &g->nodes[find(g, name)];
    assert_int_equal(n->prefetch, -1);
    assert_rel(n->l2_bytes, 0.0, 0.0);
}

/* ---------------------------------------------------------------- */

static void test_insert_sum_equal_to_capacity_does_not_insert(void **state)
{
    (void)state;
    /* cap 100: AR, W 30 (sum 30 < 100: in), W 40 (70 < 100: in), Att 30 (100, not < 100: out,
     * and the window stops there). */
    const spec sp[] = {{PM_NODE_ALLREDUCE, 8}, {PM_NODE_MATMUL, 30}, {PM_NODE_MATMUL, 40},
                       {PM_NODE_ATTENTION, 30}};
    pm_graph *in = chain(sp, 4);
    pm_graph *out = insert(in, 100.0);
    assert_int_equal(count_prefetch(out), 2);
    assert_prefetched_by(out, "n1", "n0");
    assert_prefetched_by(out, "n2", "n0");
    assert_not_prefetched(out, "n3");
    const pm_node *ar = &out->nodes[find(out, "n0")];
    assert_rel(ar->window_bytes, 70.0, 0.0);
    assert_int_equal(ar->overflow, find(out, "n3"));
    /* One byte more and the attention's KV fits: 100 < 101. */
    pm_graph *out2 = insert(in, 101.0);
    assert_int_equal(count_prefetch(out2), 3);
    assert_prefetched_by(out2, "n3", "n0");
    assert_rel(out2->nodes[find(out2, "n0")].window_bytes, 100.0, 0.0);
    assert_int_equal(out2->nodes[find(out2, "n0")].overflow, -1);
    pm_graph_free(in);
    pm_graph_free(out);
    pm_graph_free(out2);
}

static void test_insert_stops_at_first_overflow(void **state)
{
    (void)state;
    /* cap 100: W 60 in (60), W 50 would make 110: overflow, stop. W 10 after it would fit
     * (70 < 100) but is not visited. */
    const spec sp[] = {{PM_NODE_ALLREDUCE, 8}, {PM_NODE_MATMUL, 60}, {PM_NODE_MATMUL, 50},
                       {PM_NODE_MATMUL, 10}, {PM_NODE_ATTENTION, 1}};
    pm_graph *in = chain(sp, 5);
    pm_graph *out = insert(in, 100.0);
    assert_int_equal(count_prefetch(out), 1);
    assert_prefetched_by(out, "n1", "n0");
    assert_not_prefetched(out, "n2");
    assert_not_prefetched(out, "n3");
    assert_not_prefetched(out, "n4");
    assert_rel(out->nodes[find(out, "n0")].window_bytes, 60.0, 0.0);
    assert_int_equal(out->nodes[find(out, "n0")].overflow, find(out, "n2"));
    pm_graph_free(in);
    pm_graph_free(out);
}

static void test_insert_each_comm_node_has_its_own_budget(void **state)
{
    (void)state;
    /* cap 100: each window holds 60 + 30 = 90 < 100. A shared budget would refuse the
     * second window entirely (90 + 60 >= 100). */
    const spec sp[] = {{PM_NODE_ALLREDUCE, 8}, {PM_NODE_MATMUL, 60}, {PM_NODE_MATMUL, 30},
                       {PM_NODE_ALLREDUCE, 8}, {PM_NODE_MATMUL, 60}, {PM_NODE_ATTENTION, 30}};
    pm_graph *in = chain(sp, 6);
    pm_graph *out = insert(in, 100.0);
    assert_int_equal(count_prefetch(out), 4);
    assert_prefetched_by(out, "n1", "n0");
    assert_prefetched_by(out, "n2", "n0");
    assert_prefetched_by(out, "n4", "n3");
    assert_prefetched_by(out, "n5", "n3");
    assert_rel(out->nodes[find(out, "n0")].window_bytes, 90.0, 0.0);
    assert_rel(out->nodes[find(out, "n3")].window_bytes, 90.0, 0.0);
    assert_int_equal(out->nodes[find(out, "n0")].overflow, -1);
    pm_graph_free(in);
    pm_graph_free(out);
}

static void test_insert_window_ends_at_next_comm_node(void **state)
{
    (void)state;
    /* cap 1000 holds everything, yet the first allreduce prefetches only up to the second
     * one; nodes before the first allreduce are never prefetched. */
    const spec sp[] = {{PM_NODE_MATMUL, 10},   {PM_NODE_ALLREDUCE, 8}, {PM_NODE_NORM, 5},
                       {PM_NODE_MATMUL, 20},   {PM_NODE_ALLREDUCE, 8}, {PM_NODE_MATMUL, 30},
                       {PM_NODE_ELEMENTWISE, 4}};
    pm_graph *in = chain(sp, 7);
    pm_graph *out = insert(in, 1000.0);
    assert_int_equal(count_prefetch(out), 2);
    assert_not_prefetched(out, "n0");
    assert_prefetched_by(out, "n3", "n1");
    assert_prefetched_by(out, "n5", "n4");
    assert_not_prefetched(out, "n2"); /* a norm has no weights */
    assert_rel(out->nodes[find(out, "n1")].window_bytes, 20.0, 0.0);
    assert_rel(out->nodes[find(out, "n4")].window_bytes, 30.0, 0.0);
    assert_int_equal(out->nodes[find(out, "n1")].overflow, -1);
    pm_graph_free(in);
    pm_graph_free(out);
}

static void test_insert_counts_kv_of_attention(void **state)
{
    (void)state;
    const spec sp[] = {{PM_NODE_ALLREDUCE, 8}, {PM_NODE_ROPE, 100}, {PM_NODE_ATTENTION, 50}};
    pm_graph *in = chain(sp, 3);
    pm_graph *out = insert(in, 1000.0);
    assert_int_equal(count_prefetch(out), 1);
    assert_prefetched_by(out, "n2", "n0");
    const pm_node *att = &out->nodes[find(out, "n2")];
    const pm_node *pf = &out->nodes[att->prefetch];
    assert_rel(pf->kv_bytes, 50.0, 0.0);
    assert_rel(pf->weight_bytes, 0.0, 0.0);
    assert_rel(att->l2_bytes, 50.0, 0.0);
    /* M(n): weights of a MatMul, KV of an Attention, nothing else */
    assert_rel(pm_node_prefetchable_bytes(&in->nodes[1]), 0.0, 0.0);
    assert_rel(pm_node_prefetchable_bytes(&in->nodes[2]), 50.0, 0.0);
    assert_rel(pm_node_prefetchable_bytes(&in->nodes[0]), 0.0, 0.0);
    pm_graph_free(in);
    pm_graph_free(out);
}

/* The consumers that collective `name` of g prefetches for, as "QKV,Attention,O". */
static void consumers_of(const pm_graph *g, const char *name, char *out, size_t cap)
{
    out[0] = '\0';
    int c = -1;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0)
            c = (int)i;
    assert_true(c >= 0);
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *p = &g->nodes[i];
        if (p->kind != PM_NODE_PREFETCH || p->trigger != c)
            continue;
        const char *n = g->nodes[p->consumer].name;
        const char *dot = strchr(n, '.');
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? "," : "",
                 dot ? dot + 1 : n);
    }
}

/* Sequence parallelism (issue 44): Algorithm 1 over the reduce-scatters and all-gathers. On
 * the hand scenario (4 devices, 64 MiB: everything fits; per device QKV 0.5 MiB, KV 150 KiB,
 * O 0.25 MiB, Gate, Up and Down 1 MiB each, LM head 2 MiB) a reduce-scatter's window runs
 * through the norm and the all-gather after it to the next collective: RS.attn holds the MLP,
 * RS.mlp the next layer's QKV, KV and O (after the last layer the LM head); those all-gathers
 * open no window (0 bytes). The first layer's all-gather, which no reduce-scatter precedes,
 * opens its own. PRESERVE then beats the serial step. */
static void test_insert_windows_of_sequence_parallelism(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(4);
    s.cluster.sequence_parallel = true;
    s.accel.l2_capacity_bytes = 64.0 * 1048576.0;
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build_mode(&s, PM_MODE_PRESERVE, PM_PHASE_DECODE, 300, 2, g, NULL),
                     PM_OK);
    char got[128];
    static const char *const windows[][2] = {
        {"L0.AG.attn", "QKV,Attention,O"}, {"L0.RS.attn", "Gate,Up,Down"}, {"L0.AG.mlp", ""},
        {"L0.RS.mlp", "QKV,Attention,O"},  {"L1.AG.attn", ""}, {"L1.RS.attn", "Gate,Up,Down"},
        {"L1.AG.mlp", ""},                 {"L1.RS.mlp", "LMHead"}, {"AG.head", ""}};
    for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++) {
        consumers_of(g, windows[i][0], got, sizeof got);
        assert_string_equal(got, windows[i][1]);
    }
    /* The windows' sums, by hand: 0.5 MiB + 153,600 B + 0.25 MiB; 3 MiB; 2 MiB. */
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *n = &g->nodes[i];
        if (strcmp(n->name, "L0.RS.mlp") == 0)
            assert_rel(n->window_bytes, 0.75 * 1048576.0 + 153600.0, 1e-15);
        if (strcmp(n->name, "L0.RS.attn") == 0)
            assert_rel(n->window_bytes, 3.0 * 1048576.0, 1e-15);
        if (strcmp(n->name, "L1.RS.mlp") == 0)
            assert_rel(n->window_bytes, 2.0 * 1048576.0, 1e-15);
        if (n->kind == PM_NODE_ALL_GATHER && strcmp(n->name, "L0.AG.attn") != 0)
            assert_rel(n->window_bytes, 0.0, 0.0);
    }
    pm_graph_free(g);
    double serial = 0.0, preserve = 0.0;
    assert_int_equal(pm_decode_step_time(&s, PM_MODE_SERIAL, 300, &serial, NULL), PM_OK);
    assert_int_equal(pm_decode_step_time(&s, PM_MODE_PRESERVE, 300, &preserve, NULL), PM_OK);
    assert_true(preserve < serial);
}

static void test_insert_capacity_zero_inserts_nothing(void **state)
{
    (void)state;
    const spec sp[] = {{PM_NODE_ALLREDUCE, 8}, {PM_NODE_MATMUL, 1}, {PM_NODE_ATTENTION, 1}};
    pm_graph *in = chain(sp, 3);
    pm_graph *out = insert(in, 0.0);
    assert_int_equal(out->n_nodes, in->n_nodes);
    assert_int_equal(out->n_edges, in->n_edges);
    assert_int_equal(count_prefetch(out), 0);
    assert_rel(out->nodes[0].window_bytes, 0.0, 0.0);
    assert_int_equal(out->nodes[0].overflow, 1);
    /* A node's bytes equal to the capacity: 1 < 1 is false. */
    pm_graph *out1 = insert(in, 1.0);
    assert_int_equal(count_prefetch(out1), 0);
    pm_graph_free(in);
    pm_graph_free(out);
    pm_graph_free(out1);
}

static void test_insert_leaves_input_unchanged_and_rejects_bad_args(void **state)
{
    (void)state;
    const spec sp[] = {{PM_NODE_ALLREDUCE, 8}, {PM_NODE_MATMUL, 1}};
    pm_graph *in = chain(sp, 2);
    pm_graph *out = insert(in, 10.0);
    assert_int_equal(in->n_nodes, 2);
    assert_int_equal(in->nodes[1].prefetch, -1);
    assert_rel(in->nodes[1].l2_bytes, 0.0, 0.0);
    assert_int_equal(pm_insert_prefetch(in, -1.0, out, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_insert_prefetch(in, NAN, out, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_insert_prefetch(in, 1.0, in, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_insert_prefetch(NULL, 1.0, out, NULL), PM_ERR_INVALID_ARG);
    pm_graph_free(in);
    pm_graph_free(out);
}

/* The built decode graph (hidden 1024, 8 heads, 2 KV heads, head_dim 128, intermediate 4096,
 * vocab 8192, gated, 2 layers, int8, p = 2, batch 2, context 100):
 *   QKV 786432, KV 51200, O 524288, Gate = Up = Down 2097152, LMHead 4194304 bytes. */
static void test_insert_on_built_decode_graph(void **state)
{
    (void)state;
    pm_scenario s;
    memset(&s, 0, sizeof s);
    s.model = (pm_model){.layers = 2, .hidden = 1024, .heads = 8, .kv_heads = 2,
                         .head_dim = 128, .intermediate = 4096, .vocab = 8192,
                         .gated_mlp = true};
    s.cluster.devices = 2;
    s.cluster.topology = PM_TOPO_FULL_MESH;
    s.cluster.link_bandwidth_bytes_per_s = 1e11;
    s.workload.batch = 2;
    s.workload.seq_len = 600;
    s.workload.prefill_frac = 0.5;
    pm_graph *g = pm_graph_alloc();
    assert_int_equal(pm_graph_build(&s, PM_PHASE_DECODE, 100, 0, g, NULL), PM_OK);
    /* cap = 2 MiB = 2097152:
     *   L0.AR.attn: Gate 2097152, not < 2097152: nothing (overflow Gate).
     *   L0.AR.mlp:  QKV 786432, + KV 51200 = 837632, + O 524288 = 1361920 < cap; the
     *               window ends at L1.AR.attn (no overflow).  3 prefetches.
     *   L1.AR.attn: Gate overflows.
     *   L1.AR.mlp:  FinalNorm (no bytes), LMHead 4194304: overflow. */
    pm_graph *out = insert(g, 2097152.0);
    assert_int_equal(count_prefetch(out), 3);
    assert_prefetched_by(out, "L1.QKV", "L0.AR.mlp");
    assert_prefetched_by(out, "L1.Attention", "L0.AR.mlp");
    assert_prefetched_by(out, "L1.O", "L0.AR.mlp");
    const pm_node *w0 = &out->nodes[find(out, "L0.AR.attn")];
    const pm_node *w1 = &out->nodes[find(out, "L0.AR.mlp")];
    const pm_node *w3 = &out->nodes[find(out, "L1.AR.mlp")];
    assert_rel(w0->window_bytes, 0.0, 0.0);
    assert_int_equal(w0->overflow, find(out, "L0.Gate"));
    assert_rel(w1->window_bytes, 786432.0 + 51200.0 + 524288.0, 0.0);
    assert_int_equal(w1->overflow, -1);
    assert_int_equal(w3->overflow, find(out, "LMHead"));
    assert_not_prefetched(out, "L0.QKV"); /* no allreduce before the first layer */
    assert_not_prefetched(out, "L1.Down");
    /* The prefetch nodes carry the consumers' bytes. */
    const pm_node *att = &out->nodes[find(out, "L1.Attention")];
    assert_rel(out->nodes[att->prefetch].kv_bytes, 51200.0, 0.0);
    /* 8 MiB: every window holds what it sees up to the next allreduce.
     *   L0.AR.attn: Gate + Up + Down = 6291456 < 8388608
     *   L0.AR.mlp:  1361920; L1.AR.attn: 6291456; L1.AR.mlp: LMHead 4194304.
     * 3 + 3 + 3 + 1 = 10 prefetches. */
    pm_graph *big = insert(g, 8388608.0);
    assert_int_equal(count_prefetch(big), 10);
    assert_rel(big->nodes[find(big, "L0.AR.attn")].window_bytes, 6291456.0, 0.0);
    assert_prefetched_by(big, "LMHead", "L1.AR.mlp");
    assert_int_equal(big->n_nodes, g->n_nodes + 10);
    /* every input edge survives, plus one trigger and one data edge per prefetch */
    assert_int_equal(big->n_edges, g->n_edges + 20);
    pm_graph_free(g);
    pm_graph_free(out);
    pm_graph_free(big);
}

/* The public entry points check what the header says: a malformed node is refused by
 * pm_graph_add_node; index fields that point outside the finished graph (or at the wrong kind
 * of node) are refused by pm_graph_check, which pm_insert_prefetch and pm_schedule_compute run
 * first, with the node and field named. Before these checks such graphs read out of bounds. */
static void test_hand_built_graphs_are_checked(void **state)
{
    (void)state;
    const spec sp[] = {{PM_NODE_ALLREDUCE, 64}, {PM_NODE_MATMUL, 100}, {PM_NODE_MATMUL, 100}};
    pm_graph *g = chain(sp, 3);
    pm_node bad;
    memset(&bad, 0, sizeof bad);
    bad.prefetch = bad.consumer = bad.trigger = bad.overflow = -1;
    pm_node t = bad;
    t.kind = (pm_node_kind)77;
    assert_int_equal(pm_graph_add_node(g, &t, NULL), PM_ERR_INVALID_ARG);
    t = bad;
    t.trigger = -2;
    assert_int_equal(pm_graph_add_node(g, &t, NULL), PM_ERR_INVALID_ARG);
    t = bad;
    t.weight_bytes = -1.0;
    assert_int_equal(pm_graph_add_node(g, &t, NULL), PM_ERR_INVALID_ARG);
    t = bad;
    t.flop = NAN;
    assert_int_equal(pm_graph_add_node(g, &t, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_graph_add_edge(g, 0, 3, PM_EDGE_DATA), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_graph_add_edge(g, 0, 1, (pm_edge_kind)5), PM_ERR_INVALID_ARG);
    assert_int_equal(g->n_nodes, 3);
    assert_int_equal(pm_graph_check(g, NULL), PM_OK);

    /* A forward index is accepted node by node, and checked on the whole graph. */
    pm_error err;
    g->nodes[1].prefetch = 1000;
    pm_graph *out = pm_graph_alloc();
    assert_int_equal(pm_insert_prefetch(g, 1e6, out, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "$.nodes[1].prefetch");
    /* An index in range but of the wrong kind: a consumer's prefetch must be a PREFETCH. */
    g->nodes[1].prefetch = 2;
    assert_int_equal(pm_graph_check(g, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "$.nodes[1].prefetch");
    g->nodes[1].prefetch = -1;
    g->nodes[2].trigger = 1; /* a MatMul cannot trigger */
    assert_int_equal(pm_graph_check(g, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "$.nodes[2].trigger");
    g->nodes[2].trigger = -1;
    g->edges[0].to = 99;
    pm_scenario s;
    memset(&s, 0, sizeof s);
    pm_schedule sched;
    assert_int_equal(pm_schedule_compute(&s, g, &sched, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "$.edges[0]");
    g->edges[0].to = 1;
    assert_int_equal(pm_insert_prefetch(g, 1e6, out, &err), PM_OK);
    pm_graph_free(out);
    pm_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_sum_equal_to_capacity_does_not_insert),
        cmocka_unit_test(test_insert_stops_at_first_overflow),
        cmocka_unit_test(test_insert_each_comm_node_has_its_own_budget),
        cmocka_unit_test(test_insert_window_ends_at_next_comm_node),
        cmocka_unit_test(test_insert_counts_kv_of_attention),
        cmocka_unit_test(test_insert_capacity_zero_inserts_nothing),
        cmocka_unit_test(test_insert_windows_of_sequence_parallelism),
        cmocka_unit_test(test_insert_leaves_input_unchanged_and_rejects_bad_args),
        cmocka_unit_test(test_insert_on_built_decode_graph),
        cmocka_unit_test(test_hand_built_graphs_are_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
