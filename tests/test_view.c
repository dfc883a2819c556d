/*
 * test_view.c - the views (src/view.c): explain's windows and the timeline's bars on the hand
 * scenario of testutil.h, whose bytes are worked out here from its dimensions, and the layers
 * explain shows for models whose layer classes alternate or start dense (bundled models). The
 * tool's and the Python module's outputs are these rows printed (tests/test_cli.sh,
 * python/tests).
 *
 * The hand scenario on 2 devices, int8, decode at context 100 (batch 2): per device 4 of the 8
 * query heads and 1 of the 2 KV heads (head_dim 128), half of the 4096 MLP columns and of the
 * 8192 vocabulary rows:
 *   QKV   1024 x (4 x 128 + 2 x 1 x 128) = 786432 bytes     O     512 x 1024 = 524288
 *   Gate, Up, Down  1024 x 2048 = 2097152 each               LM head  1024 x 4096 = 4194304
 *   KV cache  2 sequences x 100 tokens x 1 head x 128 x (K, V) = 51200 bytes
 *   an allreduce's message  2 sequences x 1024 x 1 byte = 2048 bytes
 */
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#include "testutil.h"

#define MIB 1048576.0

static const char *name_of(const pm_graph *g, int i)
{
    return g->nodes[i].name;
}

/* Window w's prefetch k. */
static const pm_explain_prefetch *prefetch(const pm_explain *e, const pm_explain_window *w,
                                           size_t k)
{
    assert_true(k < w->n_prefetches);
    return &e->prefetches[w->first_prefetch + k];
}

static void test_explain_windows_hold_what_fits_the_l2(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    pm_explain e;
    pm_error err;
    assert_int_equal(pm_explain_compute(&s, PM_PHASE_DECODE, 100, &e, &err), PM_OK);
    assert_int_equal(e.layers_shown, 2); /* every layer alike: layers 0 and 1 */
    assert_int_equal(e.repeat_from, 1);
    assert_int_equal(e.repeat_period, 1);
    assert_rel(e.l2_window_bytes, 8 * MIB, 0.0);
    assert_rel(e.experts_read_per_step, 0.0, 0.0);
    /* one allreduce after attention and one after the MLP per layer */
    assert_int_equal(e.n_windows, 4);
    const char *const collectives[] = {"L0.AR.attn", "L0.AR.mlp", "L1.AR.attn", "L1.AR.mlp"};
    /* the prefetches each window holds, and their bytes (the header's sums) */
    const char *const consumers[4][3] = {{"L0.Gate", "L0.Up", "L0.Down"},
                                         {"L1.QKV", "L1.Attention", "L1.O"},
                                         {"L1.Gate", "L1.Up", "L1.Down"},
                                         {"LMHead"}};
    const double bytes[4][3] = {{2097152, 2097152, 2097152},
                                {786432, 51200, 524288},
                                {2097152, 2097152, 2097152},
                                {4194304}};
    const size_t counts[] = {3, 3, 3, 1};
    size_t total = 0;
    for (size_t i = 0; i < 4; i++) {
        const pm_explain_window *w = &e.windows[i];
        assert_string_equal(name_of(e.graph, w->collective), collectives[i]);
        assert_int_equal(w->kind, PM_NODE_ALLREDUCE);
        assert_rel(w->comm_bytes, 2048, 0.0);
        assert_int_equal(w->first_prefetch, total);
        assert_int_equal(w->n_prefetches, counts[i]);
        double sum = 0;
        for (size_t k = 0; k < counts[i]; k++) {
            const pm_explain_prefetch *p = prefetch(&e, w, k);
            assert_string_equal(name_of(e.graph, p->consumer), consumers[i][k]);
            assert_int_equal(e.graph->nodes[p->node].kind, PM_NODE_PREFETCH);
            assert_int_equal(e.graph->nodes[p->node].trigger, w->collective);
            assert_int_equal(p->what, i == 1 && k == 1 ? PM_PREFETCH_KV_CACHE
                                                       : PM_PREFETCH_WEIGHTS);
            assert_rel(p->bytes, bytes[i][k], 0.0);
            sum += bytes[i][k];
        }
        total += counts[i];
        /* everything fits 8 MiB: every window ends at the next collective (or the graph's end) */
        assert_rel(w->window_bytes, sum, 0.0);
        assert_int_equal(w->stopped_at, -1);
        assert_rel(w->stopped_bytes, 0.0, 0.0);
        assert_false(w->stopped_routed);
        /* The prefetches run back to back from the collective's start at the HBM's 1e12 B/s
         * (efficiency 1, nothing else on the prefetch stream), so busy = bytes / 1e12; the
         * allreduce on a full mesh of two is its latency plus the message over a link:
         * 1e-5 + 2048 / 1e11 s. Within 1e-12: the schedule adds the same terms. */
        assert_rel(w->prefetch_busy_s, sum / 1e12, 1e-12);
        assert_rel(w->collective_s, 1e-5 + 2048 / 1e11, 1e-12);
        assert_true(w->hidden);
    }
    assert_int_equal(e.n_prefetches, total);
    pm_explain_release(&e);
    assert_null(e.graph);
    assert_null(e.windows);
}

static void test_explain_window_stops_at_the_capacity(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    s.accel.l2_capacity_bytes = 5 * MIB; /* Gate and Up fit (4 MiB); Down would make 6 */
    s.accel.hbm_bandwidth_bytes_per_s = 1e11; /* 4 MiB then take 42 us, the allreduce 10 */
    pm_explain e;
    assert_int_equal(pm_explain_compute(&s, PM_PHASE_DECODE, 100, &e, NULL), PM_OK);
    const pm_explain_window *w = &e.windows[0];
    assert_int_equal(w->n_prefetches, 2);
    assert_rel(w->window_bytes, 4 * MIB, 0.0);
    assert_string_equal(name_of(e.graph, w->stopped_at), "L0.Down");
    assert_rel(w->stopped_bytes, 2 * MIB, 0.0);
    assert_false(w->stopped_routed);
    assert_rel(w->prefetch_busy_s, 4 * MIB / 1e11, 1e-12);
    assert_false(w->hidden);
    /* the LM head's 4 MiB still fit under the last allreduce */
    assert_int_equal(e.windows[3].n_prefetches, 1);
    assert_int_equal(e.windows[3].stopped_at, -1);
    pm_explain_release(&e);
}

static void test_explain_on_one_device_has_no_window(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(1);
    pm_explain e;
    assert_int_equal(pm_explain_compute(&s, PM_PHASE_DECODE, 100, &e, NULL), PM_OK);
    assert_int_equal(e.n_windows, 0);
    assert_null(e.windows);
    assert_int_equal(e.n_prefetches, 0);
    assert_non_null(e.graph);
    pm_explain_release(&e);
}

/* The layers shown: layer classes that alternate (Gemma 2's local and global attention, period
 * 2) or dense layers before the MoE ones (DeepSeek-V3's first three); where routed experts
 * may be prefetched. */
static void test_explain_shows_every_class_of_layer(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("gemma2-9b", NULL, 0);
    pm_explain e;
    pm_error err;
    assert_int_equal(pm_explain_compute(&s, PM_PHASE_DECODE, 1000, &e, &err), PM_OK);
    assert_int_equal(e.repeat_from, 1);
    assert_int_equal(e.repeat_period, 2);
    assert_int_equal(e.layers_shown, 4); /* 0, then 1 + 2 layers and the one they repeat into */
    pm_explain_release(&e);
    pm_scenario_release(&s);

    s = pm_test_load("deepseek-v3-h200", NULL, 0);
    assert_int_equal(s.model.moe_first_layer, 3);
    assert_int_equal(pm_explain_compute(&s, PM_PHASE_DECODE, 1000, &e, &err), PM_OK);
    assert_int_equal(e.repeat_from, 3);
    assert_int_equal(e.repeat_period, 1);
    assert_int_equal(e.layers_shown, 5);
    assert_true(e.experts_read_per_step > 0 && e.experts_read_per_step <= s.model.experts);
    /* the routed experts are prefetched under the dispatch all-to-all only */
    bool routed_prefetch = false;
    for (size_t i = 0; i < e.n_windows; i++) {
        const pm_explain_window *w = &e.windows[i];
        for (size_t k = 0; k < w->n_prefetches; k++)
            if (prefetch(&e, w, k)->what == PM_PREFETCH_ROUTED_EXPERTS) {
                routed_prefetch = true;
                assert_int_equal(w->kind, PM_NODE_ALLTOALL);
                assert_true(e.graph->nodes[prefetch(&e, w, k)->consumer].routed);
            }
    }
    assert_true(routed_prefetch);
    pm_explain_release(&e);
    pm_scenario_release(&s);

    /* Mixtral over tensor parallelism (no all-to-all): the attention allreduce's window stops
     * at the routed experts, which it may not prefetch */
    s = pm_test_load("mixtral8x7b", NULL, 0);
    assert_int_equal(pm_explain_compute(&s, PM_PHASE_DECODE, 1000, &e, &err), PM_OK);
    const pm_explain_window *w = &e.windows[0];
    assert_string_equal(name_of(e.graph, w->collective), "L0.AR.attn");
    assert_true(w->stopped_routed);
    assert_string_equal(name_of(e.graph, w->stopped_at), "L0.ExpertGate");
    assert_rel(w->stopped_bytes, e.graph->nodes[w->stopped_at].weight_bytes, 0.0);
    pm_explain_release(&e);
    pm_scenario_release(&s);
}

static void test_views_reject_bad_arguments(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    pm_explain e;
    pm_timeline t;
    pm_error err;
    assert_int_equal(pm_explain_compute(NULL, PM_PHASE_DECODE, 100, &e, &err),
                     PM_ERR_INVALID_ARG);
    assert_null(e.graph);
    assert_int_equal(pm_explain_compute(&s, PM_PHASE_DECODE, -1, &e, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_explain_compute(&s, PM_PHASE_DECODE, 100, NULL, &err),
                     PM_ERR_INVALID_ARG);
    assert_int_equal(pm_timeline_compute(&s, PM_MODE_COUNT, PM_PHASE_DECODE, 100, &t, &err),
                     PM_ERR_INVALID_ARG);
    assert_null(t.graph);
    assert_int_equal(pm_timeline_compute(&s, PM_MODE_SERIAL, PM_PHASE_DECODE, -1, &t, &err),
                     PM_ERR_INVALID_ARG);
    /* a scenario the graph refuses: its error, and nothing to release */
    s.cluster.devices = 16; /* 8 query heads do not split over 16 devices (Megatron sharding) */
    assert_int_equal(pm_explain_compute(&s, PM_PHASE_DECODE, 100, &e, &err),
                     PM_ERR_INCONSISTENT);
    assert_null(e.graph);
    assert_int_equal(pm_timeline_compute(&s, PM_MODE_SERIAL, PM_PHASE_DECODE, 100, &t, &err),
                     PM_ERR_INCONSISTENT);
    assert_null(t.ops);
    pm_explain_release(NULL);
    pm_timeline_release(NULL);
    assert_string_equal(pm_prefetch_what_name(PM_PREFETCH_KV_CACHE), "kv_cache");
    assert_string_equal(pm_prefetch_what_name(PM_PREFETCH_WHAT_COUNT), "?");
    assert_string_equal(pm_collective_kind_name(PM_NODE_ALLTOALL), "all_to_all");
    assert_string_equal(pm_collective_kind_name(PM_NODE_MATMUL), "?");
    assert_string_equal(pm_lane_name(PM_LANE_COLLECTIVE), "collective");
    assert_string_equal(pm_lane_name(PM_LANE_COUNT), "?");
}

/* Serial: layer 1's twelve operations back to back from its start, nothing else. */
static void test_timeline_serial_is_one_layer_back_to_back(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    s.model.layers = 3;
    pm_timeline t;
    pm_error err;
    assert_int_equal(pm_timeline_compute(&s, PM_MODE_SERIAL, PM_PHASE_DECODE, 100, &t, &err),
                     PM_OK);
    assert_int_equal(t.mode, PM_MODE_SERIAL);
    assert_int_equal(t.layer, 1);
    assert_int_equal(t.n_ops, 12);
    assert_string_equal(name_of(t.graph, t.ops[0].node), "L1.norm1");
    assert_string_equal(name_of(t.graph, t.ops[11].node), "L1.AR.mlp");
    assert_rel(t.ops[0].start_s, 0.0, 0.0);
    for (size_t k = 0; k < t.n_ops; k++) {
        const pm_timeline_op *op = &t.ops[k];
        const pm_node *n = &t.graph->nodes[op->node];
        assert_int_equal(n->layer, 1);
        assert_int_equal(op->lane, n->kind == PM_NODE_ALLREDUCE ? PM_LANE_COLLECTIVE
                                                                : PM_LANE_COMPUTE);
        if (k > 0)
            assert_rel(op->start_s, t.ops[k - 1].end_s, 1e-12);
    }
    assert_rel(t.ops[11].end_s, t.layer_s, 1e-12);
    /* bytes: an allreduce's message, an operation's weights and activations (QKV: its
     * weights, 2 x 1024 in and 2 x 768 out) */
    assert_rel(t.ops[5].bytes, 2048, 0.0);
    assert_rel(t.ops[1].bytes, 786432 + 2 * 1024 + 2 * 768, 0.0);
    pm_timeline_release(&t);
    assert_null(t.graph);
}

/* Preserve: the MLP's weights prefetched under layer 1's attention allreduce, on the prefetch
 * lane, starting with it; the next layer's attention prefetched under the MLP's allreduce. */
static void test_timeline_preserve_has_the_prefetch_lane(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    s.model.layers = 3;
    pm_timeline t;
    assert_int_equal(pm_timeline_compute(&s, PM_MODE_PRESERVE, PM_PHASE_DECODE, 100, &t, NULL),
                     PM_OK);
    int prefetches = 0;
    double ar_start = -1;
    for (size_t k = 0; k < t.n_ops; k++) {
        const pm_timeline_op *op = &t.ops[k];
        const pm_node *n = &t.graph->nodes[op->node];
        if (strcmp(n->name, "L1.AR.attn") == 0)
            ar_start = op->start_s;
        if (op->lane != PM_LANE_PREFETCH)
            continue;
        prefetches++;
        if (strcmp(n->name, "PF.L1.Gate") == 0) {
            assert_rel(op->start_s, ar_start, 0.0);
            assert_rel(op->bytes, 2097152, 0.0);
            assert_rel(op->end_s - op->start_s, 2097152 / 1e12, 1e-9);
        }
    }
    assert_true(ar_start > 0);
    assert_int_equal(prefetches, 6); /* Gate, Up, Down; layer 2's QKV, KV cache and O */
    pm_timeline_release(&t);
}

/* A model of two layers shows its last; DeepSeek-V3 the layer after its first MoE layer. */
static void test_timeline_layer_shown(void **state)
{
    (void)state;
    pm_scenario s = pm_test_hand_scenario(2);
    pm_timeline t;
    assert_int_equal(pm_timeline_compute(&s, PM_MODE_SERIAL, PM_PHASE_DECODE, 100, &t, NULL),
                     PM_OK);
    assert_int_equal(t.layer, 1);
    /* the last layer runs to the schedule's end: the final norm and the LM head too */
    assert_string_equal(name_of(t.graph, t.ops[t.n_ops - 1].node), "LMHead");
    assert_rel(t.ops[t.n_ops - 1].end_s, t.layer_s, 1e-12);
    pm_timeline_release(&t);

    s = pm_test_load("deepseek-v3-h200", NULL, 0);
    assert_int_equal(pm_timeline_compute(&s, PM_MODE_PRESERVE, PM_PHASE_DECODE, 1000, &t, NULL),
                     PM_OK);
    assert_int_equal(t.layer, 4);
    bool all_to_all = false;
    for (size_t k = 0; k < t.n_ops; k++)
        all_to_all |= t.graph->nodes[t.ops[k].node].kind == PM_NODE_ALLTOALL;
    assert_true(all_to_all);
    pm_timeline_release(&t);
    pm_scenario_release(&s);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_explain_windows_hold_what_fits_the_l2),
        cmocka_unit_test(test_explain_window_stops_at_the_capacity),
        cmocka_unit_test(test_explain_on_one_device_has_no_window),
        cmocka_unit_test(test_explain_shows_every_class_of_layer),
        cmocka_unit_test(test_views_reject_bad_arguments),
        cmocka_unit_test(test_timeline_serial_is_one_layer_back_to_back),
        cmocka_unit_test(test_timeline_preserve_has_the_prefetch_lane),
        cmocka_unit_test(test_timeline_layer_shown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
