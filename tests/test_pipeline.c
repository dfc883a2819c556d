/*
 * test_pipeline.c - pipeline stages and data-parallel replicas (issue 44): a stage's time, the
 * send, the bubbles and the memory per device against hand calculations; one stage through the
 * pipeline path against the estimate's own path for every bundled scenario; replicas multiply
 * the throughput and leave the latencies; the plans the model cannot represent are refused at
 * their key; the optimum over pp, dp and split (pm_optimize_count) against sweeps of the same
 * values, its refusals skipped and dp's tie.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

static const char *const bundled[] = {
    "dbrx-h100", "deepseek-v3-h200", "falcon7b", "gemma2-9b", "gemma3-27b", "llama4-scout-h100",
    "llama405b-h200", "llama70b-h100", "llama70b", "llama8b", "mistral7b", "mixtral8x22b-a100",
    "mixtral8x7b", "paper-dse", "phi3-medium", "phi3-small", "qwen2-72b", "qwen2-7b",
    "qwen3-30b-a3b"};

/* The pipeline path with one stage is the whole model's step with no send: its prefill and
 * last step equal the estimate's to rounding (the same terms added in another order), its
 * decode sum (an adaptive split of the contexts) the closed-form or region sums of the
 * estimate within PM_CLOSED_FORM_REL_TOL. Models of several layer classes have no stage path
 * (refused with more than one stage) and are skipped. */
static void test_one_stage_path_equals_estimate(void **state)
{
    (void)state;
    int checked = 0;
    for (size_t i = 0; i < sizeof bundled / sizeof *bundled; i++) {
        pm_scenario s = pm_test_load(bundled[i], NULL, 0);
        const pm_model *m = &s.model;
        const int local = pm_model_local_layers(m), moe = pm_model_moe_layers(m);
        if (!((local == 0 || local == m->layers) && (moe == 0 || moe == m->layers))) {
            pm_scenario_release(&s);
            continue;
        }
        pm_estimate e, p;
        pm_pipeline pl;
        pm_traffic tpot[PM_MODE_COUNT];
        pm_error err;
        assert_int_equal(pm_estimate_compute(&s, &e, &err), PM_OK);
        assert_int_equal(pm_pipeline_plan(&s, &pl, &err), PM_OK);
        assert_int_equal(pl.stages, 1);
        memset(&p, 0, sizeof p);
        if (pm_pipeline_estimate(&s, &pl, &p, tpot, &err) != PM_OK)
            fail_msg("%s: %s", bundled[i], err.message);
        for (int k = 0; k < PM_MODE_COUNT; k++) {
            assert_rel(p.modes[k].prefill_s, e.modes[k].prefill_s, 1e-13);
            assert_rel(p.modes[k].tpot_s, e.modes[k].tpot_s, 1e-13);
            assert_rel(p.modes[k].decode_s, e.modes[k].decode_s, PM_CLOSED_FORM_REL_TOL);
            assert_rel(p.modes[k].traffic.hbm_bytes, e.modes[k].traffic.hbm_bytes, 1e-9);
            assert_true(fabs(p.modes[k].bubble_decode_frac) < 1e-12);
        }
        checked++;
        pm_scenario_release(&s);
    }
    assert_true(checked >= 10);
}

/* The same with sequence parallelism, for the dense single-class models: the stage path's
 * prefix holds the first layer's all-gather and its window (step_plan.c's pre_comm), as the
 * whole model's does. */
static void test_one_stage_path_equals_estimate_with_sequence_parallel(void **state)
{
    (void)state;
    int checked = 0;
    for (size_t i = 0; i < sizeof bundled / sizeof *bundled; i++) {
        pm_scenario s = pm_test_load(bundled[i], NULL, 0);
        const pm_model *m = &s.model;
        const int local = pm_model_local_layers(m);
        if (m->experts > 0 || m->parallel_block || !(local == 0 || local == m->layers)) {
            pm_scenario_release(&s);
            continue;
        }
        s.cluster.sequence_parallel = true;
        pm_estimate e, p;
        pm_pipeline pl;
        pm_traffic tpot[PM_MODE_COUNT];
        pm_error err;
        assert_int_equal(pm_estimate_compute(&s, &e, &err), PM_OK);
        assert_int_equal(pm_pipeline_plan(&s, &pl, &err), PM_OK);
        memset(&p, 0, sizeof p);
        if (pm_pipeline_estimate(&s, &pl, &p, tpot, &err) != PM_OK)
            fail_msg("%s: %s", bundled[i], err.message);
        for (int k = 0; k < PM_MODE_COUNT; k++) {
            assert_rel(p.modes[k].prefill_s, e.modes[k].prefill_s, 1e-13);
            assert_rel(p.modes[k].tpot_s, e.modes[k].tpot_s, 1e-13);
            assert_rel(p.modes[k].decode_s, e.modes[k].decode_s, PM_CLOSED_FORM_REL_TOL);
            assert_rel(p.modes[k].traffic.hbm_bytes, e.modes[k].traffic.hbm_bytes, 1e-9);
        }
        checked++;
        pm_scenario_release(&s);
    }
    assert_true(checked >= 5);
}

/* PP = 1 and DP = 1 written out are the default: bit for bit (the estimate's own path). */
static void test_explicit_one_stage_is_the_default(void **state)
{
    (void)state;
    static const char *const ov[] = {"cluster.pipeline_parallel=1", "cluster.data_parallel=1"};
    for (size_t i = 0; i < sizeof bundled / sizeof *bundled; i++) {
        pm_scenario a = pm_test_load(bundled[i], NULL, 0), b = pm_test_load(bundled[i], ov, 2);
        pm_estimate ea, eb;
        assert_int_equal(pm_estimate_compute(&a, &ea, NULL), PM_OK);
        assert_int_equal(pm_estimate_compute(&b, &eb, NULL), PM_OK);
        for (int k = 0; k < PM_MODE_COUNT; k++) {
            assert_memory_equal(&ea.modes[k], &eb.modes[k], sizeof ea.modes[k]);
            assert_rel(ea.modes[k].stage_decode_s, ea.modes[k].tpot_s, 0.0);
        }
        assert_int_equal(ea.pipeline.devices_total, a.cluster.devices);
        pm_scenario_release(&a);
        pm_scenario_release(&b);
    }
}

/* The hand scenario (test_graph.c's: int8, hidden 1024, 8 heads, 2 KV heads, 4096 MLP, vocab
 * 8192, batch 2, 600 tokens half prompt) with 4 layers on TP 2 x PP 2, every stage its own
 * node: the sends, the stages and the steps worked out from the one-stage plan's head, tail
 * and layer (the fast evaluator the stages reuse, tested elsewhere against the graph). */
static pm_scenario hand_pp(int layers)
{
    pm_scenario s = pm_test_hand_scenario(2);
    s.model.layers = layers;
    s.cluster.pipeline_parallel = 2;
    s.cluster.inter_node_bandwidth_bytes_per_s = 25e9; /* 200 Gb/s */
    s.cluster.inter_node_latency_s = 5e-6;
    return s;
}

static void test_hand_stage_send_and_bubble(void **state)
{
    (void)state;
    pm_scenario s = hand_pp(4);
    pm_error err;
    pm_estimate e;
    if (pm_estimate_compute(&s, &e, &err) != PM_OK)
        fail_msg("%s", err.message);
    /* M = min(PP 2, batch 2) = 2 micro-batches of 1 sequence; a node holds the 2 devices of a
     * stage, so both boundaries cross nodes. */
    assert_int_equal(e.pipeline.micro_batches, 2);
    assert_int_equal(e.pipeline.micro_batch, 1);
    assert_int_equal(e.pipeline.nodes, 2);
    assert_int_equal(e.pipeline.devices_total, 4);
    assert_true(e.pipeline.inter_node);
    const double send = 5e-6 + 1.0 * 1024 * 1 / 25e9;       /* one token's int8 activations */
    const double ret = 5e-6 + 1.0 * 4 / 25e9;                /* one int32 token id */
    const double send_pre = 5e-6 + 1.0 * 300 * 1024 / 25e9; /* the 300-token prompt's */
    assert_rel(e.pipeline.send_decode_s, send, 1e-15);
    assert_rel(e.pipeline.return_s, ret, 1e-15);
    assert_rel(e.pipeline.send_prefill_s, send_pre, 1e-15);
    /* The pieces at one sequence: head, tail and one layer of the whole model's plan. */
    pm_scenario one = s;
    one.workload.batch = 1;
    one.cluster.pipeline_parallel = 1;
    const int64_t last = 599, sp = 300;
    for (int phase = 0; phase < 2; phase++) {
        pm_step step;
        pm_step_plan plan;
        const int64_t ctx = phase ? sp : last;
        assert_int_equal(pm_step_of(&one, phase ? PM_PHASE_PREFILL : PM_PHASE_DECODE, ctx, &step,
                                    NULL),
                         PM_OK);
        assert_int_equal(pm_step_plan_build(&one, &step, false, false, &plan, NULL), PM_OK);
        double whole;
        assert_int_equal(pm_step_plan_eval(&plan, false, ctx, &whole, NULL), PM_OK);
        const double layer = (whole - plan.head_s - plan.tail_s) / 4.0;
        const pm_mode_result *r = &e.modes[PM_MODE_SERIAL];
        if (!phase) {
            /* Decode: stage 0 receives the returned token, stage 1 the activations. */
            const double t0 = ret + plan.head_s + 2 * layer, t1 = send + 2 * layer + plan.tail_s;
            const double mx = t0 > t1 ? t0 : t1;
            const double tpot = (t0 + t1) > 2 * mx ? t0 + t1 : 2 * mx; /* max(sum, M max) */
            assert_rel(r->stage_decode_s, mx, 1e-12);
            assert_rel(r->tpot_s, tpot, 1e-12);
            assert_rel(r->bubble_decode_frac, 1.0 - 2.0 * ((t0 + t1) / 2.0) / tpot, 1e-9);
        } else {
            /* Prefill (GPipe): the first stage receives nothing; sum + (M - 1) max. */
            const double t0 = plan.head_s + 2 * layer, t1 = send_pre + 2 * layer + plan.tail_s;
            const double mx = t0 > t1 ? t0 : t1;
            const double ttft = t0 + t1 + 1.0 * mx;
            assert_rel(r->prefill_s, ttft, 1e-12);
            assert_rel(r->bubble_prefill_frac, 1.0 - (t0 + t1) / ttft, 1e-9);
        }
    }
    /* Throughput: the batch's tokens over the request. */
    const pm_mode_result *r = &e.modes[PM_MODE_SERIAL];
    assert_rel(r->tokens_per_s, 2.0 * 300 / r->request_s, 1e-15);
    pm_scenario_release(&s);
}

/* PRESERVE fills the receive's window: the first layer's QKV weights (1024 x 768 int8 = 768
 * KiB) and more fit the 8 MiB window, and its step is no slower than the serial one. */
static void test_preserve_prefetches_behind_the_receive(void **state)
{
    (void)state;
    pm_scenario s = hand_pp(4);
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    const pm_mode_result *p = &e.modes[PM_MODE_PRESERVE], *q = &e.modes[PM_MODE_SERIAL];
    assert_true(p->recv_prefetch_bytes >= 1024.0 * 768);
    assert_true(p->recv_prefetch_bytes < s.accel.l2_capacity_bytes); /* the L2 invariant */
    assert_false(fabs(q->recv_prefetch_bytes) > 0.0);
    assert_true(p->tpot_s <= q->tpot_s);
    assert_true(p->request_s <= q->request_s);
    pm_scenario_release(&s);
}

/* Memory per device of an uneven split: 5 layers, the even split 3 + 2 (the remainder on the
 * first stage), by hand at TP 2: a layer is QKV 1024 x (4 + 2) x 128 + O 512 x 1024 + MLP 3 x
 * 1024 x 2048 = 7,602,176 bytes (int8); the embedding and the LM head 4096 x 1024 = 4,194,304
 * each; the KV cache 2 (K, V) x 2 sequences x 1 head x 128 x 600 positions = 307,200 a layer. */
/* Under sequence parallelism the first layer's all-gather follows its norm: the receive's
 * window meets only the embedding's row gather and that norm, neither prefetchable, so it
 * prefetches nothing; the all-gather's own window takes the QKV, KV and O instead, and the step
 * stays no slower than serial. */
static void test_sequence_parallel_receive_window_ends_at_the_all_gather(void **state)
{
    (void)state;
    pm_scenario s = hand_pp(4);
    s.cluster.sequence_parallel = true;
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    const pm_mode_result *p = &e.modes[PM_MODE_PRESERVE], *q = &e.modes[PM_MODE_SERIAL];
    assert_false(fabs(p->recv_prefetch_bytes) > 0.0);
    assert_true(p->tpot_s < q->tpot_s);
    assert_true(p->request_s < q->request_s);
    pm_scenario_release(&s);
}

static void test_hand_memory_of_an_uneven_split(void **state)
{
    (void)state;
    pm_scenario s = hand_pp(5);
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    const double layer = 1024.0 * 768 + 512.0 * 1024 + 3.0 * 1024 * 2048;
    assert_rel(layer, 7602176.0, 0.0);
    assert_int_equal(e.pipeline.max_stage_layers, 3);
    assert_int_equal(e.pipeline.min_stage_layers, 2);
    assert_rel(e.weight_bytes_per_device, 3 * layer + 4194304.0, 1e-15);
    assert_rel(e.kv_bytes_per_device, 3 * 307200.0, 1e-15);
    /* Given the other way round, the last stage is the busiest. */
    s.cluster.stage_layers[0] = 1;
    s.cluster.stage_layers[1] = 4;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_rel(e.weight_bytes_per_device, 4 * layer + 4194304.0, 1e-15);
    assert_rel(e.kv_bytes_per_device, 4 * 307200.0, 1e-15);
    pm_scenario_release(&s);
}

/* Replicas: the throughput times DP exactly, the latencies and the per-device dollar figure
 * unchanged, the device count times DP. */
static void test_replicas_scale_throughput_not_latency(void **state)
{
    (void)state;
    static const char *const ov[] = {"cluster.data_parallel=8"};
    static const char *const ov2[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=4",
                                      "cluster.data_parallel=3"};
    static const char *const ov1[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=4"};
    pm_scenario a = pm_test_load("llama70b-h100", NULL, 0), b = pm_test_load("llama70b-h100", ov, 1);
    pm_scenario c = pm_test_load("llama405b-h200", ov1, 2), d = pm_test_load("llama405b-h200", ov2, 3);
    pm_estimate ea, eb, ec, ed;
    assert_int_equal(pm_estimate_compute(&a, &ea, NULL), PM_OK);
    assert_int_equal(pm_estimate_compute(&b, &eb, NULL), PM_OK);
    assert_int_equal(pm_estimate_compute(&c, &ec, NULL), PM_OK);
    assert_int_equal(pm_estimate_compute(&d, &ed, NULL), PM_OK);
    for (int k = 0; k < PM_MODE_COUNT; k++) {
        assert_rel(eb.modes[k].tpot_s, ea.modes[k].tpot_s, 0.0);
        assert_rel(eb.modes[k].prefill_s, ea.modes[k].prefill_s, 0.0);
        assert_rel(eb.modes[k].tokens_per_s, 8.0 * ea.modes[k].tokens_per_s, 0.0);
        assert_rel(eb.modes[k].tokens_per_s_per_usd, ea.modes[k].tokens_per_s_per_usd, 0.0);
        assert_rel(eb.modes[k].energy_per_token_J, ea.modes[k].energy_per_token_J, 0.0);
        assert_rel(ed.modes[k].tpot_s, ec.modes[k].tpot_s, 0.0);
        assert_rel(ed.modes[k].tokens_per_s, 3.0 * ec.modes[k].tokens_per_s, 0.0);
    }
    assert_int_equal(eb.pipeline.devices_total, 64);
    assert_int_equal(ed.pipeline.devices_total, 96);
    assert_int_equal(ed.pipeline.nodes, 12);
    assert_int_equal(pm_cluster_total_devices(&d.cluster), 96);
    pm_scenario_release(&a);
    pm_scenario_release(&b);
    pm_scenario_release(&c);
    pm_scenario_release(&d);
}

/* Stages add sends and bubbles, never take time away from a batch of one: the one-sequence
 * TPOT over 4 stages is the single group's plus the four sends (three activations and the
 * returned token), within the rounding of the regrouped sum. */
static void test_batch_of_one_pays_the_sends(void **state)
{
    (void)state;
    static const char *const ov[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=4"};
    static const char *const ov0[] = {"cluster=hgx-h100-ib-ndr"};
    pm_scenario a = pm_test_load("llama405b-h200", ov0, 1), b = pm_test_load("llama405b-h200", ov, 2);
    pm_estimate ea, eb;
    assert_int_equal(pm_estimate_compute(&a, &ea, NULL), PM_OK);
    assert_int_equal(pm_estimate_compute(&b, &eb, NULL), PM_OK);
    assert_int_equal(eb.pipeline.micro_batches, 1);
    const double act = 16384.0 * 2; /* hidden x bf16 */
    const double sends = 3 * (10e-6 + act / 50e9) + (10e-6 + 4.0 / 50e9);
    assert_rel(eb.modes[PM_MODE_SERIAL].tpot_s, ea.modes[PM_MODE_SERIAL].tpot_s + sends, 1e-12);
    pm_scenario_release(&a);
    pm_scenario_release(&b);
}

/* The adaptive decode sum over the stages against the steps added one by one, in every mode,
 * where PRESERVE's decisions change along the decode (the KV cache outgrows the window:
 * llama70b-h100 at 64 sequences, whose cache stops fitting at a few hundred positions) and
 * where they do not: within PM_CLOSED_FORM_REL_TOL. */
static void test_decode_sum_matches_steps(void **state)
{
    (void)state;
    static const char *const a[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=2",
                                    "workload.batch=64", "workload.seq_len=3000"};
    static const char *const b[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=3",
                                    "cluster.pipeline_layers=30,20,30", "workload.batch=5"};
    static const char *const c[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=4",
                                    "workload.batch=16", "accelerator.l2_capacity_MiB=256"};
    struct {
        const char *name;
        const char *const *ov;
        size_t n;
    } cases[] = {{"llama70b-h100", a, 4}, {"llama70b-h100", b, 4}, {"llama405b-h200", c, 4},
                 {"mixtral8x7b", a, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pm_scenario s = pm_test_load(cases[i].name, cases[i].ov, cases[i].n);
        pm_estimate e;
        pm_pipeline pl;
        pm_error err;
        if (pm_estimate_compute(&s, &e, &err) != PM_OK)
            fail_msg("%s: %s", cases[i].name, err.message);
        assert_int_equal(pm_pipeline_plan(&s, &pl, &err), PM_OK);
        assert_true(pl.stages > 1);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            double sum;
            assert_int_equal(pm_pipeline_decode_sum_stepwise(&s, &pl, (pm_mode)m, &sum, &err),
                             PM_OK);
            assert_rel(e.modes[m].decode_s, sum, PM_CLOSED_FORM_REL_TOL);
        }
        pm_scenario_release(&s);
    }
}

/* More micro-batches never lower the throughput until the stages are full (M = PP): below it
 * a step is one micro-batch's round trip over the stages, shorter for a smaller micro-batch;
 * beyond it the slowest stage serves every micro-batch, each reading its weights again. The
 * default is M = PP. Even stages (80 layers over 4), every mode. */
static void test_more_micro_batches_until_the_stages_are_full(void **state)
{
    (void)state;
    char mb[64];
    const char *ov[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=4",
                        "workload.batch=64", mb};
    double prev[PM_MODE_COUNT] = {0, 0, 0}, full[PM_MODE_COUNT] = {0, 0, 0};
    for (int m = 1; m <= 4; m++) {
        snprintf(mb, sizeof mb, "cluster.micro_batches=%d", m);
        pm_scenario s = pm_test_load("llama70b-h100", ov, 4);
        pm_estimate e;
        assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
        assert_int_equal(e.pipeline.micro_batches, m);
        for (int k = 0; k < PM_MODE_COUNT; k++) {
            assert_true(e.modes[k].tokens_per_s >= prev[k]);
            prev[k] = full[k] = e.modes[k].tokens_per_s;
        }
        pm_scenario_release(&s);
    }
    pm_scenario s = pm_test_load("llama70b-h100", ov, 3);
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_int_equal(e.pipeline.micro_batches, 4);
    for (int k = 0; k < PM_MODE_COUNT; k++)
        assert_rel(e.modes[k].tokens_per_s, full[k], 0.0);
    pm_scenario_release(&s);
}

static void expect_refusal(const char *name, const char *const *ov, size_t n, pm_status want,
                           const char *path)
{
    pm_scenario s;
    pm_error err;
    const pm_load_opts opts = {PM_TEST_DATA_DIR, ov, n};
    pm_status st = pm_scenario_load(name, &opts, &s, &err);
    if (st == PM_OK) {
        pm_estimate e;
        st = pm_estimate_compute(&s, &e, &err);
        pm_scenario_release(&s);
    }
    if (st != want || strcmp(err.path, path) != 0)
        fail_msg("%s: expected %s at %s, got %s at %s: %s", name, pm_status_name(want), path,
                 pm_status_name(st), err.path, err.message);
}

static void test_refusals_name_the_key(void **state)
{
    (void)state;
    static const char *const too_many[] = {"cluster=hgx-h100-ib-ndr",
                                           "cluster.pipeline_parallel=100"};
    expect_refusal("llama8b", too_many, 2, PM_ERR_INCONSISTENT, "$.cluster.pipeline_parallel");
    static const char *const sum[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=2",
                                      "cluster.pipeline_layers=16,15"};
    expect_refusal("llama8b", sum, 3, PM_ERR_INCONSISTENT, "$.cluster.pipeline_layers");
    static const char *const bad[] = {"cluster.pipeline_layers=16,x"};
    expect_refusal("llama8b", bad, 1, PM_ERR_VALUE, "$.cluster.pipeline_layers");
    static const char *const mixed[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=2"};
    expect_refusal("gemma2-9b", mixed, 2, PM_ERR_UNSUPPORTED, "$.cluster.pipeline_parallel");
    static const char *const no_link[] = {"cluster.pipeline_parallel=2"};
    expect_refusal("llama70b-h100", no_link, 1, PM_ERR_INCONSISTENT,
                   "$.cluster.inter_node_bandwidth_Gbps");
    static const char *const nodes[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=4",
                                        "cluster.nodes=2"};
    expect_refusal("llama405b-h200", nodes, 3, PM_ERR_INCONSISTENT, "$.cluster.nodes");
    static const char *const mb1[] = {"cluster.micro_batches=2"};
    expect_refusal("llama8b", mb1, 1, PM_ERR_INCONSISTENT, "$.cluster.micro_batches");
    static const char *const mb2[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=2",
                                      "cluster.micro_batches=2", "workload.batch=1"};
    expect_refusal("llama8b", mb2, 4, PM_ERR_RANGE, "$.cluster.micro_batches");
    /* One step's time is modelled for one stage only. */
    static const char *const pp[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=2"};
    pm_scenario s = pm_test_load("llama8b", pp, 2);
    double t;
    pm_error err;
    assert_int_equal(pm_decode_step_time(&s, PM_MODE_SERIAL, 100, &t, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.cluster.pipeline_parallel");
    pm_scenario_release(&s);
}

/* ---- a served workload over pipeline stages (serve.c) ---- */

/* The one-stage pieces of mixed step m on the hand scenario (at PP 1, serial): its head, its
 * tail and one of its 4 layers, as test_hand_stage_send_and_bubble takes them. */
static void served_pieces(const pm_scenario *pp, const pm_mixed_step *m, double *head,
                          double *tail, double *layer)
{
    pm_scenario one = *pp;
    one.cluster.pipeline_parallel = 1;
    one.cluster.micro_batches = 0;
    pm_step step;
    pm_step_plan plan;
    assert_int_equal(pm_step_mixed(&one, m, &step, NULL), PM_OK);
    assert_int_equal(pm_step_plan_build(&one, &step, false, false, &plan, NULL), PM_OK);
    double whole;
    assert_int_equal(pm_step_plan_eval(&plan, false, step.context, &whole, NULL), PM_OK);
    *head = plan.head_s;
    *tail = plan.tail_s;
    *layer = (whole - plan.head_s - plan.tail_s) / 4.0;
}

/* A mixed step over 2 stages by hand (hand_pp: 4 layers, 2 + 2, both boundaries across nodes
 * at 5 us + bytes / 25 GB/s, int8 activations of 1024). One micro-batch in flight: the step is
 * its round trip, the whole step plus the send and the returned token. Two in flight (the
 * default, one per stage): stage 0 receives the sampled ids and runs the head and 2 layers,
 * stage 1 receives the activations and runs 2 layers and the tail; the period between a
 * micro-batch's steps is max(t0 + t1, 2 max(t0, t1)). */
/* The graph path of each stage (reference.c's pm_stage_time_graph: the stage's receive, a
 * communication node, before its layers) composed as pipeline.c composes the fast path's
 * stages: decode max(sum t_i, M max t_i), prefill sum t_i + (M - 1) max t_i, in every mode, for
 * the hand model over 2 stages (4 layers: built whole) and Llama-3.1-405B over 4 stages of TP 8
 * on InfiniBand nodes (126 layers: 3 built, the rest by the period). */
static void stages_graph_equal_fast(pm_scenario *s, int64_t last, int64_t sp)
{
    pm_estimate e;
    pm_error err;
    if (pm_estimate_compute(s, &e, &err) != PM_OK)
        fail_msg("%s", err.message);
    const double M = e.pipeline.micro_batches;
    for (int mode = 0; mode < PM_MODE_COUNT; mode++) {
        double sum[2] = {0, 0}, mx[2] = {0, 0};
        for (int st = 0; st < e.pipeline.stages; st++)
            for (int ph = 0; ph < 2; ph++) {
                double t;
                if (pm_stage_time_graph(s, (pm_mode)mode, ph ? PM_PHASE_PREFILL : PM_PHASE_DECODE,
                                        ph ? sp : last, st, 0.0, &t, NULL, &err) != PM_OK)
                    fail_msg("%s", err.message);
                sum[ph] += t;
                mx[ph] = t > mx[ph] ? t : mx[ph];
            }
        const pm_mode_result *r = &e.modes[mode];
        assert_rel(r->stage_decode_s, mx[0], 1e-9);
        assert_rel(r->tpot_s, sum[0] > M * mx[0] ? sum[0] : M * mx[0], 1e-9);
        assert_rel(r->prefill_s, sum[1] + (M - 1.0) * mx[1], 1e-9);
    }
}

static void test_stage_graphs_equal_the_fast_path(void **state)
{
    (void)state;
    pm_scenario s = hand_pp(4);
    stages_graph_equal_fast(&s, 599, 300);
    pm_scenario_release(&s);
    static const char *const set[] = {"cluster=hgx-h100-ib-ndr", "cluster.pipeline_parallel=4",
                                      "cluster.devices=8"};
    s = pm_test_load("llama405b-h200", set, 3);
    stages_graph_equal_fast(&s, s.workload.seq_len - 1, pm_workload_prompt_tokens(&s.workload));
    pm_scenario_release(&s);
}

/* PRESERVE in the decode bubbles (issue 44 item 2): one micro-batch in flight over 4 stages of
 * Llama-3.1-405B (TP 2 each, batch 8, a 1 GiB L2). Each stage idles while the 3 others work,
 * far longer than its receive's window needs, so its time is the one with that window's
 * prefetches (the first layer's QKV, KV and O, under the capacity) hidden whole: the graph
 * path's with any longer gap (1 s here, not counted), and the step (TPOT) their sum. Without the
 * gap those prefetches run past the receive's 2 us into the first layer, and the step is
 * longer; serial has no window and no change. */
static void test_preserve_in_the_decode_bubbles(void **state)
{
    (void)state;
    static const char *const set[] = {"cluster.pipeline_parallel=4", "cluster.devices=2",
                                      "cluster.micro_batches=1", "workload.batch=8",
                                      "accelerator.l2_capacity_MiB=1024"};
    pm_scenario s = pm_test_load("llama405b-h200", set, 5);
    pm_estimate e;
    pm_error err;
    if (pm_estimate_compute(&s, &e, &err) != PM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(e.pipeline.micro_batches, 1);
    const int64_t last = s.workload.seq_len - 1;
    double with_gap = 0.0, without = 0.0, serial = 0.0;
    for (int st = 0; st < 4; st++) {
        double tg, t0, need, ts;
        if (pm_stage_time_graph(&s, PM_MODE_PRESERVE, PM_PHASE_DECODE, last, st, 1.0, &tg, NULL,
                                &err) != PM_OK ||
            pm_stage_time_graph(&s, PM_MODE_PRESERVE, PM_PHASE_DECODE, last, st, 0.0, &t0, &need,
                                &err) != PM_OK ||
            pm_stage_time_graph(&s, PM_MODE_SERIAL, PM_PHASE_DECODE, last, st, 1.0, &ts, NULL,
                                &err) != PM_OK)
            fail_msg("%s", err.message);
        assert_true(need > 1e-5); /* the window's prefetches take longer than the receive */
        assert_true(tg < t0);
        with_gap += tg;
        without += t0;
        serial += ts;
    }
    assert_rel(e.modes[PM_MODE_PRESERVE].tpot_s, with_gap, 1e-9);
    assert_true(without - with_gap > 4 * 1e-5); /* more than 10 us a stage */
    assert_rel(e.modes[PM_MODE_SERIAL].tpot_s, serial, 1e-9);
    pm_scenario_release(&s);
}

/* A stage's graph: the receive opens it (a communication node over the link its boundary
 * crosses, its window filled by PRESERVE), the first stage holds the embedding, the last the
 * LM head; the stages' layers are the plan's (4 layers over 2 stages: 0-1 and 2-3). */
static void test_stage_graph_shape(void **state)
{
    (void)state;
    pm_scenario s = hand_pp(4);
    pm_graph g = {0};
    pm_error err;
    for (int st = 0; st < 2; st++) {
        if (pm_graph_build_stage(&s, PM_MODE_PRESERVE, PM_PHASE_DECODE, 599, st, 0, &g, &err) !=
            PM_OK)
            fail_msg("%s", err.message);
        const pm_node *r = &g.nodes[0];
        assert_int_equal(r->kind, PM_NODE_RECV);
        assert_true(r->inter_node); /* a node holds one stage's 2 devices */
        /* Stage 0 receives one int32 id, stage 1 one token's int8 activations (hidden 1024). */
        assert_rel(r->comm_bytes, st == 0 ? 4.0 : 1024.0, 1e-15);
        assert_true(r->window_bytes > 0 && r->window_bytes < s.accel.l2_capacity_bytes);
        bool head = false, tail = false;
        int lo = 99, hi = -1;
        for (size_t i = 0; i < g.n_nodes; i++) {
            head = head || g.nodes[i].role == PM_ROLE_EMBEDDING;
            tail = tail || g.nodes[i].role == PM_ROLE_LM_HEAD;
            if (g.nodes[i].layer >= 0 && g.nodes[i].stream == PM_STREAM_MAIN) {
                lo = g.nodes[i].layer < lo ? g.nodes[i].layer : lo;
                hi = g.nodes[i].layer > hi ? g.nodes[i].layer : hi;
            }
        }
        assert_int_equal(head, st == 0);
        assert_int_equal(tail, st == 1);
        assert_int_equal(lo, 2 * st);
        assert_int_equal(hi, 2 * st + 1);
    }
    /* The first stage's prefill receives nothing: the prompt is there. */
    assert_int_equal(pm_graph_build_stage(&s, PM_MODE_SERIAL, PM_PHASE_PREFILL, 300, 0, 0, &g,
                                          NULL),
                     PM_OK);
    assert_int_equal(g.nodes[0].kind, PM_NODE_EMBEDDING);
    assert_int_equal(pm_graph_build_stage(&s, PM_MODE_SERIAL, PM_PHASE_DECODE, 599, 2, 0, &g,
                                          &err),
                     PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "the plan has 2 stages"));
    pm_free(g.nodes);
    pm_free(g.edges);
    pm_scenario_release(&s);
}

/* The split axis: the last stage's layers, the others the even split of the rest (10 layers over
 * 3 stages with 2 on the last: 4, 4, 2; with 3: 4, 3, 3), equal to the same split given as
 * pipeline_layers; read back; refused without stages or beyond L - (PP - 1); its default range
 * is 1 to the even share, ceil(10 / 3) = 4. */
static void test_split_axis(void **state)
{
    (void)state;
    pm_scenario s = hand_pp(10);
    s.cluster.pipeline_parallel = 3;
    s.workload.batch = 3;
    pm_error err;
    double v;
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_SPLIT, 2, &err), PM_OK);
    assert_int_equal(s.cluster.stage_layers[0], 4);
    assert_int_equal(s.cluster.stage_layers[1], 4);
    assert_int_equal(s.cluster.stage_layers[2], 2);
    assert_true(pm_scenario_axis_value(&s, PM_AXIS_SPLIT, &v) && !(fabs(v - 2.0) > 0.0));
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_SPLIT, 3, &err), PM_OK);
    assert_int_equal(s.cluster.stage_layers[0], 4);
    assert_int_equal(s.cluster.stage_layers[1], 3);
    assert_int_equal(s.cluster.stage_layers[2], 3);
    pm_estimate a, b;
    assert_int_equal(pm_estimate_compute(&s, &a, NULL), PM_OK);
    pm_scenario t = hand_pp(10);
    t.cluster.pipeline_parallel = 3;
    t.workload.batch = 3;
    t.cluster.stage_layers[0] = 4;
    t.cluster.stage_layers[1] = 3;
    t.cluster.stage_layers[2] = 3;
    assert_int_equal(pm_estimate_compute(&t, &b, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++)
        assert_true(!(fabs(a.modes[m].tpot_s - b.modes[m].tpot_s) > 0.0) &&
                    !(fabs(a.modes[m].request_s - b.modes[m].request_s) > 0.0));
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_SPLIT, 9, &err), PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "holds at most 8 of the 10 layers"));
    pm_axis ax;
    assert_int_equal(pm_axis_parse("split", 0, &ax, &err), PM_OK);
    assert_int_equal(pm_axis_fit_scenario(&s, &ax, &err), PM_OK);
    assert_int_equal((int)ax.n_values, 4);
    assert_true(!(fabs(ax.values[0] - 1.0) > 0.0) && !(fabs(ax.values[3] - 4.0) > 0.0));
    pm_axis_release(&ax);
    s.cluster.pipeline_parallel = 1;
    assert_int_equal(pm_scenario_set_axis(&s, PM_AXIS_SPLIT, 2, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.cluster.pipeline_parallel");
    assert_false(pm_scenario_axis_value(&s, PM_AXIS_SPLIT, &v));
    pm_scenario_release(&s);
    pm_scenario_release(&t);
}

static void test_served_step_over_two_stages_by_hand(void **state)
{
    (void)state;
    pm_scenario s = hand_pp(4);
    pm_mixed_step m = {0};
    m.decode_sequences = 1;
    m.decode_context = 449;
    double head, tail, layer, t;
    served_pieces(&s, &m, &head, &tail, &layer);
    const double send1 = 5e-6 + 1.0 * 1024 / 25e9; /* one token's activations */
    const double ret1 = 5e-6 + 4.0 / 25e9;          /* one int32 id */
    s.cluster.micro_batches = 1;
    assert_int_equal(pm_mixed_step_time(&s, PM_MODE_SERIAL, &m, &t, NULL), PM_OK);
    assert_rel(t, head + 4 * layer + tail + send1 + ret1, 1e-12);
    /* A decode token beside a finishing 100-token chunk at offset 200: 101 tokens cross each
     * boundary, 2 ids return. */
    m.n_chunks = 1;
    m.chunks[0] = (pm_step_chunk){1.0, 100, 200, 1.0};
    served_pieces(&s, &m, &head, &tail, &layer);
    s.cluster.micro_batches = 0;
    assert_int_equal(pm_mixed_step_time(&s, PM_MODE_SERIAL, &m, &t, NULL), PM_OK);
    const double send = 5e-6 + 101.0 * 1024 / 25e9, ret = 5e-6 + 2.0 * 4 / 25e9;
    const double t0 = ret + head + 2 * layer, t1 = send + 2 * layer + tail;
    const double mx = t0 > t1 ? t0 : t1;
    assert_rel(t, t0 + t1 > 2 * mx ? t0 + t1 : 2 * mx, 1e-12);
    pm_scenario_release(&s);
}

/* The served workload over 2 stages at concurrency 2: two micro-batches, each one sequence's
 * scheduler (decode-first; 300 in, 300 out, so decode steps at context 300 + 149 = 449). The
 * decode step is the hand period of test_served_step_over_two_stages_by_hand; the requests of
 * both micro-batches count, per device over TP 2 x PP 2; a device holds its stage: 2 layers of
 * 7,602,176 bytes and the embedding (or the LM head) of 4,194,304 (test_hand_memory_...). */
static void test_served_workload_over_two_stages(void **state)
{
    (void)state;
    pm_scenario s = hand_pp(4);
    const pm_serve_workload w = {300, 300, 2, 4096, PM_SERVE_DECODE_FIRST, 0, 0,
                                 PM_SERVE_STAGGERED, 0, 0, {{0}}};
    pm_serve_result r;
    pm_error err;
    if (pm_serve_compute(&s, &w, &r, &err) != PM_OK)
        fail_msg("%s", err.message);
    pm_mixed_step m = {0};
    m.decode_sequences = 1;
    m.decode_context = 449;
    double head, tail, layer;
    served_pieces(&s, &m, &head, &tail, &layer);
    const double send = 5e-6 + 1.0 * 1024 / 25e9, ret = 5e-6 + 4.0 / 25e9;
    const double t0 = ret + head + 2 * layer, t1 = send + 2 * layer + tail;
    const double mx = t0 > t1 ? t0 : t1;
    const pm_serve_mode *q = &r.modes[PM_MODE_SERIAL];
    assert_rel(q->decode_step_s, t0 + t1 > 2 * mx ? t0 + t1 : 2 * mx, 1e-12);
    assert_rel(q->tokens_per_s, q->requests_per_s * 300, 1e-12);
    assert_rel(q->tokens_per_s_per_device, q->tokens_per_s / 4.0, 1e-12);
    assert_rel(q->e2e_s, 2.0 / q->requests_per_s, 1e-12); /* Little's law over both */
    assert_rel(r.weight_bytes_per_device, 2 * 7602176.0 + 4194304.0, 1e-12);
    /* Both micro-batches' sequences are counted: decoding or in their prefill, 2 in all. */
    assert_rel(r.decode_sequences + r.prefilling, 2.0, 1e-12);
    pm_scenario_release(&s);
}

/* PRESERVE behind the receives of a served step: stage 1's wait on the activations is a window
 * that takes the first layer's QKV weights (1024 x 768 int8) and more, so the served decode step
 * is faster than serial's. */
static void test_served_preserve_prefetches_behind_the_receive(void **state)
{
    (void)state;
    pm_scenario s = hand_pp(4);
    const pm_serve_workload w = {300, 300, 2, 4096, PM_SERVE_DECODE_FIRST, 0, 0,
                                 PM_SERVE_STAGGERED, 0, 0, {{0}}};
    pm_serve_result r;
    assert_int_equal(pm_serve_compute(&s, &w, &r, NULL), PM_OK);
    assert_true(r.modes[PM_MODE_PRESERVE].decode_step_s < r.modes[PM_MODE_SERIAL].decode_step_s);
    pm_mixed_step m = {0};
    m.decode_sequences = 1;
    m.decode_context = 449;
    pm_step step;
    pm_step_plan plan;
    pm_pipeline pl;
    assert_int_equal(pm_pipeline_plan(&s, &pl, NULL), PM_OK);
    assert_int_equal(pm_step_mixed(&s, &m, &step, NULL), PM_OK);
    assert_int_equal(pm_step_plan_build(&s, &step, false, true, &plan, NULL), PM_OK);
    pm_step_plan_count(&plan);
    const pm_pipeline_step ps = {2.0, 1.0, 1.0};
    double t, pf;
    assert_int_equal(pm_pipeline_step_time(&s, &pl, &ps, &plan, &plan, true, 449, &t, NULL, &pf),
                     PM_OK);
    assert_true(pf >= 1024.0 * 768);
    assert_true(pf < s.accel.l2_capacity_bytes);
    assert_rel(t, r.modes[PM_MODE_PRESERVE].decode_step_s, 1e-12);
    pm_scenario_release(&s);
}

/* One stage named or not is today's served workload, bit for bit. */
static void test_served_one_stage_is_the_default(void **state)
{
    (void)state;
    static const char *const ov[] = {"cluster.pipeline_parallel=1"};
    pm_scenario a = pm_test_load("llama70b-h100", NULL, 0), b = pm_test_load("llama70b-h100", ov, 1);
    const pm_serve_workload w = {1024, 256, 16, 2048, PM_SERVE_DECODE_FIRST, 0, 0,
                                 PM_SERVE_STAGGERED, 0, 0, {{0}}};
    pm_serve_result ra, rb;
    assert_int_equal(pm_serve_compute(&a, &w, &ra, NULL), PM_OK);
    assert_int_equal(pm_serve_compute(&b, &w, &rb, NULL), PM_OK);
    assert_memory_equal(&ra, &rb, sizeof ra);
    pm_scenario_release(&a);
    pm_scenario_release(&b);
}

/* ------------------------------------------------ the optimum over pp, dp and split */

/* hand_pp with a die: the area coefficients of test_sweep.c's hand accelerator (0.5 mm2 per
 * TOPS, 2.5 mm2 per MiB of L2, 4 HBM PHYs of 15 mm2, 7 link PHYs of 2 mm2, 100 mm2 of the
 * rest), so that the density has a divisor. */
static pm_scenario hand_pp_area(int layers)
{
    pm_scenario s = hand_pp(layers);
    pm_area_params *a = &s.accel.area;
    a->present = true;
    a->compute_mm2_per_flop_per_s = 0.5e-12;
    a->l2_mm2_per_byte = 2.5 / 1048576.0;
    a->hbm_phy_mm2_per_stack = 15.0;
    a->hbm_stacks = 4;
    a->link_phy_mm2_per_link = 2.0;
    a->links = 7;
    a->other_mm2 = 100.0;
    return s;
}

typedef struct argmax {
    double value[PM_MODE_COUNT], density[PM_MODE_COUNT];
    size_t valid;
} argmax;

/* The sweep's first largest density per mode (pm_sweep_run's points in order: the smaller
 * value wins a tie, as the optimum's rule says). */
static int argmax_fn(const pm_sweep_point *pts, size_t n, void *user)
{
    argmax *a = user;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].status != PM_OK)
            continue;
        for (int m = 0; m < PM_MODE_COUNT; m++)
            if (a->valid == 0 || pts[i].density[m] > a->density[m]) {
                a->density[m] = pts[i].density[m];
                a->value[m] = pts[i].axis_value[0];
            }
        a->valid++;
    }
    return 0;
}

static argmax sweep_argmax(const pm_scenario *s, const char *spec)
{
    pm_axis ax;
    argmax a = {{0}, {0}, 0};
    pm_sweep_opts o = {.threads = 1};
    assert_int_equal(pm_axis_parse(spec, 0, &ax, NULL), PM_OK);
    assert_int_equal(pm_sweep_run(s, &ax, 1, &o, argmax_fn, &a, NULL), PM_OK);
    pm_axis_release(&ax);
    return a;
}

/* pp over 1..4 on the 4-layer hand model: a decode step at batch 2 reads every weight once
 * whatever the stages (the stages split the layers, the M = min(PP, 2) micro-batches each read
 * their stage's), so more stages add devices and sends but at most M = 2 micro-batches of
 * overlap; PP = 1 keeps the density, and the search equals the sweep's argmax of the same
 * values. */
static void test_pp_optimum_is_the_sweeps_argmax(void **state)
{
    (void)state;
    pm_scenario s = hand_pp_area(4);
    s.cluster.pipeline_parallel = 1;
    pm_optimum o;
    pm_error err;
    if (pm_optimize_count(&s, PM_AXIS_PP, PM_OBJECTIVE_MM2, 0, 0, PM_OPTIMIZE_TIE_REL_TOL, &o,
                          &err) != PM_OK)
        fail_msg("%s", err.message);
    assert_true(o.exhaustive);
    assert_true(!(fabs(o.lo - 1.0) > 0.0) && !(fabs(o.hi - 4.0) > 0.0)); /* 1 to the layers */
    assert_int_equal(o.evaluations, 4);
    assert_int_equal(o.skipped, 0);
    const argmax a = sweep_argmax(&s, "pp=1:4:1");
    assert_int_equal((int)a.valid, 4);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(!(fabs(o.best_value[m] - 1.0) > 0.0));
        assert_true(!(fabs(o.best_value[m] - a.value[m]) > 0.0));
        assert_rel(o.best_density[m], a.density[m], 0.0); /* the same evaluation */
        assert_true(!(fabs(o.bracket_lo[m] - o.best_value[m]) > 0.0) &&
                    !(fabs(o.bracket_hi[m] - o.best_value[m]) > 0.0));
        assert_int_equal(o.iterations[m], 0);
        assert_int_equal(o.ties[m], 0);
        assert_int_equal(o.at_edge[m], 0); /* 1 is the axis's own end */
        assert_true(o.fits_hbm[m]);
    }
    /* pp 2..4: the best is the range's lower end, and the axis goes on below it. */
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_PP, PM_OBJECTIVE_MM2, 2, 4,
                                       PM_OPTIMIZE_TIE_REL_TOL, &o, NULL),
                     PM_OK);
    const argmax b = sweep_argmax(&s, "pp=2:4:1");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(!(fabs(o.best_value[m] - b.value[m]) > 0.0));
        assert_int_equal(o.at_edge[m], !(fabs(b.value[m] - 2.0) > 0.0) ? -1 : 0);
    }
    char note[512];
    assert_true(pm_optimum_warning(&s, PM_AXIS_PP, PM_OBJECTIVE_MM2, &o, 0, note, sizeof note));
    pm_scenario_release(&s);
}

/* Values the scenario refuses are skipped and counted, the first with its error: stages of
 * 2 devices on nodes of 2 with no inter-node link (every PP > 1), a split the stages cannot
 * hold; every value refused is the first refusal's error. */
static void test_count_optimum_skips_refusals(void **state)
{
    (void)state;
    pm_scenario s = hand_pp_area(4);
    s.cluster.pipeline_parallel = 1;
    s.cluster.inter_node_bandwidth_bytes_per_s = 0.0;
    pm_optimum o;
    pm_error err;
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_PP, PM_OBJECTIVE_MM2, 1, 3,
                                       PM_OPTIMIZE_TIE_REL_TOL, &o, &err),
                     PM_OK);
    assert_int_equal(o.evaluations, 3);
    assert_int_equal(o.skipped, 2);
    assert_true(!(fabs(o.first_skipped - 2.0) > 0.0));
    assert_non_null(strstr(o.first_skipped_error, "$.cluster.inter_node_bandwidth_Gbps: 2 stages"));
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(!(fabs(o.best_value[m] - 1.0) > 0.0));
        assert_int_equal(o.at_edge[m], 0); /* one value valid: no edge to speak of */
    }
    char note[512];
    size_t w = 0;
    while (pm_optimum_warning(&s, PM_AXIS_PP, PM_OBJECTIVE_MM2, &o, w, note, sizeof note))
        w++;
    assert_int_equal((int)w, 1);
    assert_non_null(strstr(note, "2 of the 3 values of pipeline_parallel in [1, 3] were refused "
                                 "and skipped; the first, 2: $.cluster.inter_node_bandwidth_Gbps"));
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_PP, PM_OBJECTIVE_MM2, 2, 3,
                                       PM_OPTIMIZE_TIE_REL_TOL, &o, &err),
                     PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "$.cluster.inter_node_bandwidth_Gbps");
    assert_non_null(strstr(err.message, "every pp in [2, 3] was refused; the first (2): 2 stages"));
    /* split over 4 layers on 2 stages: the last holds at most 3. */
    s = hand_pp_area(4);
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_SPLIT, PM_OBJECTIVE_MM2, 1, 5,
                                       PM_OPTIMIZE_TIE_REL_TOL, &o, &err),
                     PM_OK);
    assert_int_equal(o.skipped, 2);
    assert_true(!(fabs(o.first_skipped - 4.0) > 0.0));
    assert_non_null(strstr(o.first_skipped_error, "holds at most 3 of the 4 layers"));
    /* Arguments: an axis it does not search, a range that is not of counts. */
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_BATCH, PM_OBJECTIVE_MM2, 0, 0, 0.0, &o, &err),
                     PM_ERR_INVALID_ARG);
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_PP, PM_OBJECTIVE_MM2, 1.5, 3, 0.0, &o, &err),
                     PM_ERR_INVALID_ARG);
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_PP, PM_OBJECTIVE_MM2, 3, 2, 0.0, &o, &err),
                     PM_ERR_INVALID_ARG);
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_PP, PM_OBJECTIVE_MM2, 1, 2, 1.0, &o, &err),
                     PM_ERR_INVALID_ARG);
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_PP, PM_OBJECTIVE_USD, 1, 2, 0.0, &o, &err),
                     PM_ERR_MISSING);
    assert_string_equal(err.path, "$.accelerator.cost");
    pm_scenario_release(&s);
}

/* Replicas multiply tokens/s and devices alike: every dp's density is the same (to a few ulps
 * of the two products), so the search says a tie and reports the smallest, dp 1, rather than
 * the one a rounding favours. */
static void test_dp_optimum_is_a_tie(void **state)
{
    (void)state;
    pm_scenario s = hand_pp_area(4);
    pm_optimum o;
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_DP, PM_OBJECTIVE_MM2, 1, 4,
                                       PM_OPTIMIZE_TIE_REL_TOL, &o, NULL),
                     PM_OK);
    pm_estimate e;
    pm_area a;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_int_equal(pm_area_compute(&s.accel, &a, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(!(fabs(o.best_value[m] - 1.0) > 0.0));
        assert_int_equal(o.ties[m], 3);
        assert_int_equal(o.at_edge[m], 0);
        /* dp 1's own density: tokens/s over 2 x 2 devices of the die. */
        assert_rel(o.best_density[m], e.modes[m].tokens_per_s / (4.0 * a.die_mm2), 1e-15);
    }
    char note[512];
    assert_true(pm_optimum_warning(&s, PM_AXIS_DP, PM_OBJECTIVE_MM2, &o, 0, note, sizeof note));
    assert_non_null(strstr(note, "serial: 4 values of data_parallel in [1, 4] give the best "
                                 "density_tokens_per_s_per_mm2 within a relative 1e-09"));
    assert_non_null(strstr(note, "the smallest, 1, is reported (ties go to the smaller value)"));
    /* dp bare: the dp sweep's default range, 1 to 8. */
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_DP, PM_OBJECTIVE_MM2, 0, 0,
                                       PM_OPTIMIZE_TIE_REL_TOL, &o, NULL),
                     PM_OK);
    assert_true(!(fabs(o.lo - 1.0) > 0.0) && !(fabs(o.hi - 8.0) > 0.0));
    assert_int_equal(o.ties[PM_MODE_PRESERVE], 7);
    pm_scenario_release(&s);
}

/* The split over 10 layers on 3 stages: its own range is 1..8 (a layer left to each other
 * stage), the optimum the argmax of a split sweep; an explicit range ending at the best is
 * marked at that edge. */
static void test_split_optimum_is_the_split_sweeps_argmax(void **state)
{
    (void)state;
    pm_scenario s = hand_pp_area(10);
    s.cluster.pipeline_parallel = 3;
    s.workload.batch = 3;
    pm_optimum o;
    pm_error err;
    if (pm_optimize_count(&s, PM_AXIS_SPLIT, PM_OBJECTIVE_MM2, 0, 0, PM_OPTIMIZE_TIE_REL_TOL,
                          &o, &err) != PM_OK)
        fail_msg("%s", err.message);
    assert_true(!(fabs(o.lo - 1.0) > 0.0) && !(fabs(o.hi - 8.0) > 0.0));
    assert_int_equal(o.skipped, 0);
    const argmax a = sweep_argmax(&s, "split=1:8:1");
    const double b = a.value[PM_MODE_PRESERVE];
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(!(fabs(o.best_value[m] - a.value[m]) > 0.0));
        assert_rel(o.best_density[m], a.density[m], 0.0);
    }
    /* The LM head weighs on the last stage: its best share is inside the range. */
    assert_true(b > 1.0 && b < 8.0);
    assert_int_equal(o.at_edge[PM_MODE_PRESERVE], 0);
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_SPLIT, PM_OBJECTIVE_MM2, 1, b,
                                       PM_OPTIMIZE_TIE_REL_TOL, &o, NULL),
                     PM_OK);
    assert_int_equal(o.at_edge[PM_MODE_PRESERVE], 1);
    assert_int_equal(pm_optimize_count(&s, PM_AXIS_SPLIT, PM_OBJECTIVE_MM2, b, 8,
                                       PM_OPTIMIZE_TIE_REL_TOL, &o, NULL),
                     PM_OK);
    assert_int_equal(o.at_edge[PM_MODE_PRESERVE], -1);
    pm_scenario_release(&s);
}

/* The spec: pp, dp and split bare give 0 and 0 (their own range in the scenario), with a
 * range their counts; the other counts are refused, naming what the search takes. */
static void test_optimize_spec_takes_pp_dp_split(void **state)
{
    (void)state;
    pm_axis_kind k;
    double lo, hi;
    pm_error err;
    assert_int_equal(pm_optimize_spec_parse("pp", &k, &lo, &hi, &err), PM_OK);
    assert_int_equal(k, PM_AXIS_PP);
    assert_true(!(fabs(lo) > 0.0) && !(fabs(hi) > 0.0));
    assert_int_equal(pm_optimize_spec_parse("split=1:20", &k, &lo, &hi, &err), PM_OK);
    assert_int_equal(k, PM_AXIS_SPLIT);
    assert_true(!(fabs(lo - 1.0) > 0.0) && !(fabs(hi - 20.0) > 0.0));
    assert_int_equal(pm_optimize_spec_parse("dp=1:2.5", &k, &lo, &hi, &err), PM_ERR_RANGE);
    assert_non_null(strstr(err.message, "dp takes integers"));
    assert_int_equal(pm_optimize_spec_parse("batch", &k, &lo, &hi, &err), PM_ERR_VALUE);
    assert_non_null(strstr(err.message, "batch is a count the optimum search does not take (it "
                                        "takes l2, l2_bw, compute, hbm_bw, link_bw, pp, dp, "
                                        "split)"));
    assert_int_equal(pm_optimize_spec_parse("spilt", &k, &lo, &hi, &err), PM_ERR_VALUE);
    assert_non_null(strstr(err.message, "did you mean \"split\""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_stage_path_equals_estimate),
        cmocka_unit_test(test_explicit_one_stage_is_the_default),
        cmocka_unit_test(test_hand_stage_send_and_bubble),
        cmocka_unit_test(test_preserve_prefetches_behind_the_receive),
        cmocka_unit_test(test_one_stage_path_equals_estimate_with_sequence_parallel),
        cmocka_unit_test(test_sequence_parallel_receive_window_ends_at_the_all_gather),
        cmocka_unit_test(test_hand_memory_of_an_uneven_split),
        cmocka_unit_test(test_replicas_scale_throughput_not_latency),
        cmocka_unit_test(test_batch_of_one_pays_the_sends),
        cmocka_unit_test(test_decode_sum_matches_steps),
        cmocka_unit_test(test_more_micro_batches_until_the_stages_are_full),
        cmocka_unit_test(test_refusals_name_the_key),
        cmocka_unit_test(test_served_step_over_two_stages_by_hand),
        cmocka_unit_test(test_served_workload_over_two_stages),
        cmocka_unit_test(test_served_preserve_prefetches_behind_the_receive),
        cmocka_unit_test(test_served_one_stage_is_the_default),
        cmocka_unit_test(test_stage_graphs_equal_the_fast_path),
        cmocka_unit_test(test_preserve_in_the_decode_bubbles),
        cmocka_unit_test(test_stage_graph_shape),
        cmocka_unit_test(test_split_axis),
        cmocka_unit_test(test_pp_optimum_is_the_sweeps_argmax),
        cmocka_unit_test(test_count_optimum_skips_refusals),
        cmocka_unit_test(test_dp_optimum_is_a_tie),
        cmocka_unit_test(test_split_optimum_is_the_split_sweeps_argmax),
        cmocka_unit_test(test_optimize_spec_takes_pp_dp_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
