/*
 * test_moe.c - mixture of experts (issue 15), each number worked out by hand in the test: the
 * expected experts a decode step touches, the busiest expert-parallel rank against the
 * Monte-Carlo table of shared/reference/moe-attention-energy-cost.md section 1.3, the bytes per
 * device of the bundled Mixtral (TP4, int8), Mixtral-8x22B and DBRX (the parameter count, TP4 and
 * TP8 in bf16) and DeepSeek-V3 (EP8, fp8), the all-to-all times
 * per topology, the MoE graph (routed experts prefetched only under the dispatch), the fast
 * path against the graph path on generated MoE scenarios, and properties.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

static const pm_load_opts g_opts = {PM_TEST_DATA_DIR, NULL, 0};

/* Byte counts are products of small integers, exact in a double. */
#define EXACT 1e-12

static pm_scenario load(const char *ref, const char *const *sets, size_t n)
{
    pm_load_opts o = g_opts;
    o.overrides = sets;
    o.n_overrides = n;
    pm_scenario s;
    pm_error err;
    if (pm_scenario_load(ref, &o, &s, &err) != PM_OK)
        fail_msg("%s: %s", ref, err.message);
    return s;
}

/* A scenario of model E experts, top-k, ep ranks over `devices` (the hand scenario's). */
static pm_scenario moe_scenario(int devices, int ep, int experts, int k)
{
    pm_scenario s = pm_test_hand_scenario(devices);
    pm_model *m = &s.model;
    m->layers = 4;
    m->experts = experts;
    m->experts_per_token = k;
    m->expert_intermediate = 512;
    s.cluster.expert_parallel = ep;
    s.accel.l2_capacity_bytes = 64.0 * 1048576.0;
    return s;
}

static pm_moe_reads reads(const pm_scenario *s, double tokens)
{
    pm_moe_reads r;
    pm_error err;
    if (pm_moe_reads_compute(s, tokens, &r, &err) != PM_OK)
        fail_msg("pm_moe_reads_compute: %s", err.message);
    return r;
}

/* ---------------------------------------------------------------- expert reads */

static void test_experts_touched_by_hand(void **state)
{
    (void)state;
    /* Mixtral (E 8, k 2): one token touches its 2 experts; 4 tokens 8 (1 - (3/4)^4) =
     * 8 (1 - 81/256) = 8 x 175/256 = 5.46875 (the 5.47); 64 tokens
     * 8 (1 - 0.75^64) = 8 - 8 x 1.00451e-8. */
    pm_scenario s = moe_scenario(4, 1, 8, 2);
    assert_rel(reads(&s, 1).experts_touched, 2.0, 1e-15);
    assert_rel(reads(&s, 4).experts_touched, 5.46875, 1e-15);
    assert_rel(reads(&s, 64).experts_touched, 8.0 - 8.0 * pow(0.75, 64), 1e-15);
    /* One EP rank (tensor-parallel experts): the busiest device reads them all. */
    assert_rel(reads(&s, 4).experts_read, 5.46875, 1e-15);
    assert_rel(reads(&s, 4).token_slots, 8.0, 1e-15); /* 4 tokens x 2 picks */
    assert_rel(reads(&s, 4).upper_bound, 8.0, 0.0);   /* min(8 / 1, 4 x 2) */
    /* DeepSeek-V3 (E 256, k 8) at batch 64: 256 (1 - (31/32)^64) = 222.44 (reference). */
    pm_scenario d = moe_scenario(8, 8, 256, 8);
    /* moe.c computes 1 - (1 - p)^T as -expm1(T log1p(-p)), exact to a few ulps of pow. */
    assert_rel(reads(&d, 64).experts_touched, 256.0 * (1.0 - pow(31.0 / 32.0, 64)), 1e-13);
    assert_rel(reads(&d, 64).experts_touched, 222.44, 1e-4);
    assert_rel(reads(&d, 64).experts_mean, 222.44 / 8, 1e-4);
    assert_rel(reads(&d, 64).token_slots, 64.0 * 8 / 8, 1e-15); /* balanced: T k / ep */
}

/* Identical sequences (workload distinct_sequences, src/moe.c): copies of one prompt route
 * alike, so the reads follow the distinct sequences' tokens while every token keeps its k
 * slots. Mixtral (E 8, k 2), one EP rank, batch 16. */
static void test_identical_sequences_route_alike(void **state)
{
    (void)state;
    pm_scenario s = moe_scenario(4, 1, 8, 2);
    s.workload.batch = 16;
    /* All distinct (0, or 16): 16 tokens touch 8 (1 - 0.75^16) = 7.91983 experts. */
    assert_rel(reads(&s, 16).experts_read, 8.0 * (1.0 - pow(0.75, 16)), 1e-13);
    s.workload.distinct_sequences = 16;
    assert_rel(reads(&s, 16).experts_read, 8.0 * (1.0 - pow(0.75, 16)), 1e-13);
    /* One prompt copied 16 times: a decode step's 16 tokens are 1 draw, its 2 experts; the
     * GEMMs still run 16 x 2 = 32 token slots. */
    s.workload.distinct_sequences = 1;
    assert_rel(reads(&s, 16).experts_read, 2.0, 1e-15);
    assert_rel(reads(&s, 16).token_slots, 32.0, 1e-15);
    /* 4 distinct of 16: 4 draws, 8 (1 - 0.75^4) = 5.46875; a prefill of 16 x 3 tokens is 4 x 3
     * = 12 draws: 8 (1 - 0.75^12) = 7.7466. */
    s.workload.distinct_sequences = 4;
    assert_rel(reads(&s, 16).experts_read, 5.46875, 1e-14);
    assert_rel(reads(&s, 48).experts_read, 8.0 * (1.0 - pow(0.75, 12)), 1e-13);
    assert_rel(reads(&s, 48).token_slots, 96.0, 1e-15);
    /* The scenario check: at most the batch, and not under expert parallelism. */
    pm_error err;
    assert_int_equal(pm_scenario_check(&s, &err), PM_OK);
    s.workload.distinct_sequences = 17;
    assert_int_equal(pm_scenario_check(&s, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "$.workload.distinct_sequences");
    pm_scenario e = moe_scenario(4, 2, 8, 2);
    e.workload.batch = 16;
    e.workload.distinct_sequences = 1;
    assert_int_equal(pm_scenario_check(&e, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.workload.distinct_sequences");
    e.workload.distinct_sequences = 16; /* all distinct: nothing to refuse */
    assert_int_equal(pm_scenario_check(&e, &err), PM_OK);
}

static void test_busiest_rank_matches_the_monte_carlo_table(void **state)
{
    (void)state;
    /* Section 1.3's table (2000 trials each, so about +-1% of noise of its own): the expected
     * maximum over the EP ranks of the distinct local experts. The approximation
     * (independent experts and ranks, moe.c) stays within 2% of every entry. */
    static const struct {
        int experts, k, ep, tokens;
        double mc;
    } rows[] = {
        {8, 2, 8, 1, 1.00},     {8, 2, 8, 4, 1.00},     {8, 2, 8, 16, 1.00},
        {8, 2, 2, 1, 1.44},     {8, 2, 2, 4, 3.26},     {8, 2, 2, 8, 3.91},
        {8, 2, 2, 16, 4.00},    {128, 8, 8, 1, 2.53},   {128, 8, 8, 4, 6.13},
        {128, 8, 8, 16, 12.91}, {128, 8, 8, 32, 15.62}, {128, 8, 8, 64, 16.00},
        {256, 8, 8, 1, 2.55},   {256, 8, 8, 4, 6.60},   {256, 8, 8, 16, 16.72},
        {256, 8, 8, 32, 24.21}, {256, 8, 8, 64, 30.26}, {256, 8, 8, 128, 32.00},
        {256, 8, 32, 1, 1.60},  {256, 8, 32, 4, 3.20},  {256, 8, 32, 16, 6.06},
        {256, 8, 32, 32, 7.57}, {256, 8, 32, 64, 8.00},
    };
    for (size_t i = 0; i < PM_ARRAY_LEN(rows); i++) {
        pm_scenario s = moe_scenario(rows[i].ep, rows[i].ep, rows[i].experts, rows[i].k);
        s.model.heads = s.model.kv_heads = 32;
        const pm_moe_reads r = reads(&s, rows[i].tokens);
        if (!(fabs(r.experts_read - rows[i].mc) <= 0.02 * rows[i].mc))
            fail_msg("E %d k %d ep %d T %d: %.4f, Monte Carlo %.2f", rows[i].experts, rows[i].k,
                     rows[i].ep, rows[i].tokens, r.experts_read, rows[i].mc);
        /* Between the mean and what a rank holds, and below the every-pick-new bound. */
        assert_true(r.experts_read >= r.experts_mean - 1e-12);
        assert_true(r.experts_read <= r.experts_local + 1e-12);
        assert_true(r.experts_read <= r.upper_bound + 1e-12);
    }
}

static void test_routing_skew_concentrates_the_reads(void **state)
{
    (void)state;
    /* alpha 0 is uniform; with skew the popular experts are touched by most batches and the
     * rare ones by few: fewer distinct experts overall, and rank 0 (the popular experts) takes
     * more token slots. */
    pm_scenario s = moe_scenario(8, 8, 256, 8);
    const pm_moe_reads u = reads(&s, 16);
    s.workload.routing_skew_alpha = 1.2;
    const pm_moe_reads k = reads(&s, 16);
    assert_true(k.experts_touched < u.experts_touched);
    assert_true(k.token_slots > u.token_slots);
    /* By hand for two experts, k 1, alpha 1: weights 1 and 1/2, so picks 2/3 and 1/3; two
     * tokens touch expert 0 with 1 - (1/3)^2 = 8/9 and expert 1 with 1 - (2/3)^2 = 5/9. */
    pm_scenario two = moe_scenario(2, 1, 2, 1);
    two.workload.routing_skew_alpha = 1.0;
    assert_rel(reads(&two, 2).experts_touched, 8.0 / 9 + 5.0 / 9, 1e-15);
    /* A token picks k distinct experts, so no chance exceeds 1 and they sum to k. Three
     * experts, k 2, alpha 1: weights 1, 1/2, 1/3 (sum 11/6), k w_0 / sum = 12/11 > 1: expert 0
     * is picked by every token, the other pick split 1/2 : 1/3, 3/5 and 2/5. One token touches
     * 1 + 3/5 + 2/5 = 2; two touch 1 + (1 - (2/5)^2) + (1 - (3/5)^2) = 1 + 21/25 + 16/25. The
     * excess was dropped: 12/11 cut to 1, 6/11 and 4/11, 1.909 experts a token. */
    pm_scenario three = moe_scenario(1, 1, 3, 2);
    three.workload.routing_skew_alpha = 1.0;
    assert_rel(reads(&three, 1).experts_touched, 2.0, 1e-15);
    assert_rel(reads(&three, 2).experts_touched, 1.0 + 21.0 / 25 + 16.0 / 25, 1e-15);
    assert_rel(reads(&three, 1).token_slots, 2.0, 1e-15); /* one rank: every pick */
    /* DeepSeek-V3's 256 experts, 8 a token, at alpha 1.2 (6.971 before): 8. */
    s.workload.routing_skew_alpha = 1.2;
    assert_rel(reads(&s, 1).experts_touched, 8.0, 1e-12);
}

static void test_reads_reject_bad_arguments(void **state)
{
    (void)state;
    pm_scenario s = moe_scenario(4, 1, 8, 2);
    pm_moe_reads r;
    pm_error err;
    assert_int_equal(pm_moe_reads_compute(&s, 0, &r, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_moe_reads_compute(NULL, 1, &r, &err), PM_ERR_INVALID_ARG);
    s.cluster.expert_parallel = 3; /* does not divide 8 experts */
    assert_int_equal(pm_moe_reads_compute(&s, 1, &r, &err), PM_ERR_INVALID_ARG);
    /* A dense model reads no experts. */
    pm_scenario d = pm_test_hand_scenario(2);
    assert_int_equal(pm_moe_reads_compute(&d, 4, &r, &err), PM_OK);
    assert_rel(r.experts_read, 0.0, 0.0);
}

/* ---------------------------------------------------------------- bytes per device */

/* gpt-oss-20b's HuggingFace config (tests/configs/hf/gpt-oss-20b-config.json, as published):
 * a MoE family with its own keys (experts_per_token beside num_experts_per_tok, layer_types
 * alternating a 128-token window with full attention, swiglu_limit) read as what it is. */
static void test_gpt_oss_20b_hf_config_by_hand(void **state)
{
    (void)state;
    static const char *const sets[] = {"model=" PM_TEST_CONFIG_DIR "/hf/gpt-oss-20b-config.json"};
    pm_scenario s = load("llama70b", sets, 1); /* 4x Ascend 910B, int8 weights, batch 4 */
    const pm_model *m = &s.model;
    assert_int_equal(m->layers, 24);
    assert_int_equal(m->experts, 32);
    assert_int_equal(m->experts_per_token, 4);
    assert_int_equal(m->sliding_window, 128);
    assert_int_equal(pm_model_local_layers(m), 12);
    assert_int_equal(pm_model_moe_layers(m), 24);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 0, &f, NULL), PM_OK);
    /* Per device at TP4, one byte a weight: 64 / 4 = 16 query heads and 8 / 4 = 2 KV heads of
     * 64: Q 2880 x 1024 = 2,949,120, K and V 2 x 2880 x 128 = 737,280, O 1024 x 2880 =
     * 2,949,120: attention 6,635,520. Each expert over the 4 devices, 2880 / 4 = 720 columns:
     * 3 x 2880 x 720 = 6,220,800 and its biases (gate_up_proj_bias and down_proj_bias,
     * modeling_gpt_oss.py), 2 x 720 + 2880 = 4,320 of them at 1 byte (the biases' datatype is
     * the workload's int8 activations'): 6,225,120; 32 of them 199,203,840; the router 2880 x
     * 32 = 92,160. 24 layers x about 205,931,520 = 4,942,356,480; the embedding and the untied
     * LM head 201088 / 4 x 2880 = 144,783,360 each: 5,231,923,200 bytes (the attention biases,
     * 4,160 per layer and device, are within the 1e-4). */
    assert_rel(f.expert_weight_bytes, 6225120.0, EXACT);
    assert_rel(f.weight_bytes, 5231923200.0, 1e-4);
    /* Batch 4: 32 (1 - (1 - 4/32)^4) = 32 (1 - 0.586181640625) = 13.2421875 experts. */
    assert_rel(f.experts_read_per_step, 13.2421875, 1e-15);
    pm_scenario_release(&s);
}

static void test_mixtral_int8_tp4_bytes_by_hand(void **state)
{
    (void)state;
    static const char *const sets[] = {"model=mixtral-8x7b"};
    pm_scenario s = load("llama70b", sets, 1); /* 4x Ascend 910B, int8, batch 4 */
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 0, &f, NULL), PM_OK);
    /* Per device at TP4: 8 query heads, 2 KV heads of 128: QKV 4096 x (8 + 4) x 128 =
     * 6,291,456, O 1024 x 4096 = 4,194,304: attention 10,485,760 bytes. Every expert split
     * over the 4 devices, 14336 / 4 = 3584 columns: 3 x 4096 x 3584 = 44,040,192 bytes each,
     * 8 of them 352,321,536; the router 4096 x 8 = 32,768. */
    assert_rel(f.expert_weight_bytes, 44040192.0, EXACT);
    assert_rel(f.moe_weight_bytes, 352321536.0 + 32768.0, EXACT);
    assert_rel(f.moe_layer_weight_bytes, 10485760.0 + 352321536.0 + 32768.0, EXACT);
    /* 32 layers = 11,610,882,048, with the LM head and the embedding (32000 / 4 x 4096 =
     * 32,768,000 each): 11,676,418,048 bytes, the issue's ~11.7 GB. */
    assert_int_equal(f.moe_layers, 32);
    assert_rel(f.weight_bytes, 11676418048.0, EXACT);
    /* Batch 4: 5.47 experts read per step, 5.46875 x 44,040,192 + the router. */
    assert_rel(f.experts_read_per_step, 5.46875, 1e-15);
    assert_rel(f.moe_read_bytes, 5.46875 * 44040192.0 + 32768.0, 1e-15);
    pm_estimate e;
    pm_error err;
    assert_int_equal(pm_estimate_compute(&s, &e, &err), PM_OK);
    assert_rel(e.weight_bytes_per_device, 11676418048.0, EXACT);
    assert_rel(e.experts_read_per_step, 5.46875, 1e-15);
    /* Tensor-parallel experts end with the MLP's allreduce like a dense layer: 2 per layer,
     * 2 x 32 = 64 per decode step. */
    assert_int_equal(e.allreduces_per_step, 64);
    pm_scenario_release(&s);
    /* Batch 1 and 64: 2 and 8 (1 - 0.75^64). */
    static const char *const b1[] = {"model=mixtral-8x7b", "workload.batch=1"};
    s = load("llama70b", b1, 2);
    assert_int_equal(pm_footprint_compute(&s, NULL, 0, &f, NULL), PM_OK);
    assert_rel(f.experts_read_per_step, 2.0, 1e-15);
    pm_scenario_release(&s);
    static const char *const b64[] = {"model=mixtral-8x7b", "workload.batch=64"};
    s = load("llama70b", b64, 2);
    assert_int_equal(pm_footprint_compute(&s, NULL, 0, &f, NULL), PM_OK);
    assert_rel(f.experts_read_per_step, 8.0 - 8.0 * pow(0.75, 64), 1e-15);
    pm_scenario_release(&s);
}

/* The footprint of a bundled model in llama70b-h100 (8x H100, bf16) at `devices` tensor-parallel
 * devices and the weight datatype wd. */
static pm_footprint footprint_of(const char *model, int devices, const char *wd)
{
    char m[64], d[64], w[64];
    snprintf(m, sizeof m, "model=%s", model);
    snprintf(d, sizeof d, "cluster.devices=%d", devices);
    snprintf(w, sizeof w, "workload.weight_dtype=%s", wd);
    const char *const sets[] = {m, d, w};
    pm_scenario s = load("llama70b-h100", sets, 3);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 0, &f, NULL), PM_OK);
    pm_scenario_release(&s);
    return f;
}

/* Mixtral-8x22B (hidden 6144, 48 heads, 8 KV heads of 128, 56 layers, 8 experts of 16384,
 * vocab 32000) and DBRX (the same attention, 40 layers, 16 experts of 10752, vocab 100352). */
static void test_mixtral_8x22b_and_dbrx_bytes_by_hand(void **state)
{
    (void)state;
    /* The parameter count: one device, int8 (one byte a weight). Attention per layer: QKV
     * 6144 x (48 + 2 x 8) x 128 = 50,331,648, O 6144 x 6144 = 37,748,736: 88,080,384 for both.
     * Mixtral-8x22B: an expert 3 x 6144 x 16384 = 301,989,888, 8 of them 2,415,919,104, the
     * router 6144 x 8 = 49,152: a layer 2,504,048,640, x 56 = 140,226,723,840; the embedding
     * and the LM head 2 x 32000 x 6144 = 393,216,000: 140,619,939,840 (the name's 141B). */
    pm_footprint f = footprint_of("mixtral-8x22b", 1, "int8");
    assert_int_equal(f.moe_layers, 56);
    assert_rel(f.expert_weight_bytes, 301989888.0, EXACT);
    assert_rel(f.moe_layer_weight_bytes, 2504048640.0, EXACT);
    assert_rel(f.weight_bytes, 140619939840.0, EXACT);
    /* DBRX: an expert 3 x 6144 x 10752 = 198,180,864 (w1, v1, w2), 16 of them 3,170,893,824,
     * the router 6144 x 16 = 98,304: a layer 3,259,072,512, x 40 = 130,362,900,480; 2 x 100352
     * x 6144 = 1,233,125,376: 131,596,025,856 (the model card's 132B). */
    f = footprint_of("dbrx-instruct", 1, "int8");
    assert_int_equal(f.moe_layers, 40);
    assert_rel(f.expert_weight_bytes, 198180864.0, EXACT);
    assert_rel(f.moe_layer_weight_bytes, 3259072512.0, EXACT);
    assert_rel(f.weight_bytes, 131596025856.0, EXACT);

    /* bf16 (2 bytes) per device, tensor parallel (every expert split, the router whole).
     * TP4: 12 query and 2 KV heads, QKV 6144 x 16 x 128 = 12,582,912, O 1536 x 6144 =
     * 9,437,184: attention 22,020,096 weights. Mixtral-8x22B: 4096 columns an expert, 3 x
     * 6144 x 4096 = 75,497,472, x 8 = 603,979,776, + router 49,152: a layer 626,049,024, x 56
     * = 35,058,745,344, + 2 x 8000 x 6144 = 98,304,000: 35,157,049,344 weights,
     * 70,314,098,688 bytes. */
    f = footprint_of("mixtral-8x22b", 4, "bf16");
    assert_rel(f.expert_weight_bytes, 2 * 75497472.0, EXACT);
    assert_rel(f.moe_layer_weight_bytes, 2 * 626049024.0, EXACT);
    assert_rel(f.weight_bytes, 70314098688.0, EXACT);
    /* TP8: 6 and 1 heads, QKV 6144 x 8 x 128 = 6,291,456, O 768 x 6144 = 4,718,592:
     * 11,010,048; experts 2048 columns, 37,748,736 each, x 8 = 301,989,888; a layer
     * 313,049,088, x 56 = 17,530,748,928, + 2 x 4000 x 6144 = 49,152,000: 17,579,900,928
     * weights, 35,159,801,856 bytes. */
    f = footprint_of("mixtral-8x22b", 8, "bf16");
    assert_rel(f.expert_weight_bytes, 2 * 37748736.0, EXACT);
    assert_rel(f.weight_bytes, 35159801856.0, EXACT);
    /* DBRX TP4: experts 2688 columns, 3 x 6144 x 2688 = 49,545,216, x 16 = 792,723,456, +
     * router 98,304 + attention 22,020,096: a layer 814,841,856, x 40 = 32,593,674,240, + 2 x
     * 25088 x 6144 = 308,281,344: 32,901,955,584 weights, 65,803,911,168 bytes. */
    f = footprint_of("dbrx-instruct", 4, "bf16");
    assert_rel(f.expert_weight_bytes, 2 * 49545216.0, EXACT);
    assert_rel(f.moe_layer_weight_bytes, 2 * 814841856.0, EXACT);
    assert_rel(f.weight_bytes, 65803911168.0, EXACT);
    /* DBRX TP8: experts 1344 columns, 24,772,608, x 16 = 396,361,728; a layer 11,010,048 +
     * 396,361,728 + 98,304 = 407,470,080, x 40 = 16,298,803,200, + 2 x 12544 x 6144 =
     * 154,140,672: 16,452,943,872 weights, 32,905,887,744 bytes. */
    f = footprint_of("dbrx-instruct", 8, "bf16");
    assert_rel(f.expert_weight_bytes, 2 * 24772608.0, EXACT);
    assert_rel(f.weight_bytes, 32905887744.0, EXACT);
}

static void test_deepseek_v3_fp8_ep8_fits_an_h200(void **state)
{
    (void)state;
    pm_scenario s = load("deepseek-v3-h200", NULL, 0);
    assert_int_equal(pm_cluster_ep(&s.cluster), 8);
    assert_int_equal(s.workload.weight_dtype, PM_DTYPE_FP8);
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 0, &f, NULL), PM_OK);
    /* One byte per weight. Attention per device (test_architectures.c's MLA count):
     * 36,634,624 per layer, x 61 = 2,234,712,064. The 3 dense layers: 3 x 7168 x 18432 / 8 =
     * 49,545,216 each, 148,635,648. A MoE layer: 256 / 8 = 32 whole experts of
     * 3 x 7168 x 2048 = 44,040,192 (1,409,286,144), the shared expert whole on every rank
     * (44,040,192) and the router 7168 x 256 = 1,835,008: 1,455,161,344, x 58 =
     * 84,399,357,952. LM head and embedding: 129280 / 8 x 7168 = 115,834,880 each. */
    assert_rel(f.moe_weight_bytes, 1455161344.0, EXACT);
    assert_rel(f.weight_bytes,
               2234712064.0 + 148635648.0 + 84399357952.0 + 2 * 115834880.0, EXACT);
    /* 87.0 GB: fits the H200's 141 GiB with the KV cache. */
    pm_estimate e;
    pm_error err;
    assert_int_equal(pm_estimate_compute(&s, &e, &err), PM_OK);
    assert_true(e.fits_hbm);
    assert_true(e.weight_bytes_per_device < 0.65 * s.accel.hbm_capacity_bytes);
    /* Allreduces per decode step: the 3 dense layers have the attention's and the MLP's (2
     * each), the 58 MoE layers only the attention's (their MLP communicates by all-to-all):
     * 3 x 2 + 58 = 64. */
    assert_int_equal(e.allreduces_per_step, 64);
    /* EP1 (tensor-parallel experts) holds the same experts split 8 ways: the same bytes but
     * for the shared expert (split too: 44,040,192 x 7/8 less per layer). */
    pm_scenario tp = s;
    tp.provenance = NULL;
    tp.cluster.expert_parallel = 1;
    pm_footprint ft;
    assert_int_equal(pm_footprint_compute(&tp, NULL, 0, &ft, NULL), PM_OK);
    assert_rel(ft.moe_weight_bytes, 1455161344.0 - 44040192.0 * 7 / 8, EXACT);
    pm_scenario_release(&s);
}

/* ---------------------------------------------------------------- all-to-all */

static void test_alltoall_times_by_hand(void **state)
{
    (void)state;
    pm_cluster c = {0};
    c.devices = 8;
    c.expert_parallel = 8;
    c.link_bandwidth_bytes_per_s = 100e9;
    c.link_latency_s = 2e-6;
    const double n = 8e6; /* each device holds 8 MB, 1 MB for each rank */
    double t;
    /* Switch: one port sends the 7 MB for the others: 2 us + 7e6 / 100e9 = 72 us. */
    c.topology = PM_TOPO_SWITCH;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 2e-6 + 7e6 / 100e9, 1e-15);
    /* Full mesh: 1 MB over each dedicated link at once: 2 us + 1e6 / 100e9 = 12 us. */
    c.topology = PM_TOPO_FULL_MESH;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 2e-6 + 1e6 / 100e9, 1e-15);
    /* Ring: 7 start-ups, each link carries n (r - 1) / 2 = 28 MB: 14 + 280 us. */
    c.topology = PM_TOPO_RING;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 7 * 2e-6 + 28e6 / 100e9, 1e-15);
    /* Hierarchical, 16 devices in 2 nodes of 8, EP16 (one device per rank): of the 16 shares
     * of 0.5 MB, 7 go to the node's other ranks (3.5 MB over NVLink at 100 GB/s: 35 us) and 8
     * leave it (4 MB over a 25 GB/s NIC: 160 us), at once: the inter-node start-up 5 us +
     * 160 us. The efficiency scales both links: at 0.8, 5 + 200 us. */
    c.topology = PM_TOPO_HIERARCHICAL;
    c.intra_node_topology = PM_TOPO_SWITCH; /* NVLink behind NVSwitch */
    c.devices = 16;
    c.expert_parallel = 16;
    c.devices_per_node = 8;
    c.inter_node_bandwidth_bytes_per_s = 25e9;
    c.inter_node_latency_s = 5e-6;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 5e-6 + 4e6 / 25e9, 1e-15);
    c.a2a_efficiency_frac = 0.8;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 5e-6 + 4e6 / (0.8 * 25e9), 1e-15);
    /* EP8 of 16 devices, 2 devices per rank, 4 ranks a node: of the 8 shares of 1 MB, 3 go
     * to the node's other ranks and 4 leave it: max(3 MB / 80 GB/s, 4 MB / 20 GB/s) = 200 us,
     * + 5 us. */
    c.expert_parallel = 8;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 5e-6 + 4e6 / (0.8 * 25e9), 1e-15);
    /* One rank: nothing to exchange. */
    c.expert_parallel = 1;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 0.0, 0.0);
    assert_int_equal(pm_alltoall_time(NULL, n, &t, NULL), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_alltoall_time(&c, -1, &t, NULL), PM_ERR_INVALID_ARG);
}

/* A hierarchical cluster's node sends its intra-node shares as its devices connect: over a
 * full mesh a link per peer, as the flat full mesh does (it was taken for one shared link, 7x
 * too slow at 8 ranks a node); through a switch or around a ring all on one link. Every time is
 * a few exact sums of round numbers, hence the 1e-15 tolerance. */
static void test_alltoall_hierarchical_node_by_its_topology(void **state)
{
    (void)state;
    pm_cluster c = {0};
    c.topology = PM_TOPO_HIERARCHICAL;
    c.devices = 8;
    c.expert_parallel = 8;
    c.devices_per_node = 8;
    c.link_bandwidth_bytes_per_s = 50e9;
    c.link_latency_s = 2e-6;
    c.inter_node_bandwidth_bytes_per_s = 100e9;
    c.inter_node_latency_s = 5e-6;
    const double n = 8e6; /* 1 MB for each of 8 ranks */
    double t, flat;
    /* EP8 in one node of 8 (ascend-multinode at --devices 8): nothing leaves the node, the
     * intra-node start-up 2 us. Full mesh: 1 MB over each of 7 links at once, 1e6 / 50e9 =
     * 20 us: 22 us, the flat full mesh's. Switch: the 7 MB through one port, 140 us: 142 us,
     * the flat switch's. Ring (one direction): the share for the rank d away goes d hops, so
     * each link carries 1 + 2 + ... + 7 = 28 shares of 1 MB, 560 us, in 7 steps of 2 us:
     * 574 us, the flat ring's (it was costed as the switch's 142). */
    c.intra_node_topology = PM_TOPO_FULL_MESH;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 2e-6 + 1e6 / 50e9, 1e-15);
    pm_cluster f = c;
    f.topology = PM_TOPO_FULL_MESH;
    assert_int_equal(pm_alltoall_time(&f, n, &flat, NULL), PM_OK);
    assert_rel(t, flat, 1e-15);
    c.intra_node_topology = PM_TOPO_SWITCH;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 2e-6 + 7e6 / 50e9, 1e-15);
    f.topology = PM_TOPO_SWITCH;
    assert_int_equal(pm_alltoall_time(&f, n, &flat, NULL), PM_OK);
    assert_rel(t, flat, 1e-15);
    c.intra_node_topology = PM_TOPO_RING;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 7 * 2e-6 + 28e6 / 50e9, 1e-15);
    f.topology = PM_TOPO_RING;
    assert_int_equal(pm_alltoall_time(&f, n, &flat, NULL), PM_OK);
    assert_rel(t, flat, 1e-15);
    /* EP16 over 2 nodes of 8: 16 shares of 0.5 MB, 7 to the node's other ranks, 8 out by the
     * NIC (4 MB / 100 GB/s = 40 us), at once, after the inter-node start-up 5 us. Full mesh:
     * 0.5 MB / 50 GB/s = 10 us inside, the NIC's 40 us the longer: 45 us. Switch: 3.5 MB /
     * 50 GB/s = 70 us inside, the longer: 75 us. */
    c.devices = 16;
    c.expert_parallel = 16;
    c.intra_node_topology = PM_TOPO_FULL_MESH;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 5e-6 + 4e6 / 100e9, 1e-15);
    c.intra_node_topology = PM_TOPO_SWITCH;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 5e-6 + 3.5e6 / 50e9, 1e-15);
    /* Ring: 28 shares of 0.5 MB on each link, 14 MB / 50 GB/s = 280 us, the NIC's 40 us the
     * shorter, in 7 steps of 2 us (14 us, beside the inter-node start-up's 5): 294 us. */
    c.intra_node_topology = PM_TOPO_RING;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 7 * 2e-6 + 14e6 / 50e9, 1e-15);
    /* EP8 over the 16 devices, 2 a rank, 4 ranks a node: 8 shares of 1 MB, 3 inside, 4 out
     * (4 MB / 100 GB/s = 40 us). Full mesh: 1 MB / 50 GB/s = 20 us inside: 5 + 40 = 45 us.
     * Switch: 3 MB / 50 GB/s = 60 us inside: 5 + 60 = 65 us. */
    c.expert_parallel = 8;
    c.intra_node_topology = PM_TOPO_FULL_MESH;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 5e-6 + 4e6 / 100e9, 1e-15);
    c.intra_node_topology = PM_TOPO_SWITCH;
    assert_int_equal(pm_alltoall_time(&c, n, &t, NULL), PM_OK);
    assert_rel(t, 5e-6 + 3e6 / 50e9, 1e-15);
}

static void test_alltoall_calibration_reproduces_deepep(void **state)
{
    (void)state;
    /* DeepEP's normal intranode kernels on H800 (docs/legacy.md @dd758ca, reference section
     * 1.4): 4096 tokens, hidden 7168, top-8, EP8 over NVLink, 153 GB/s dispatch (FP8) and
     * 158 GB/s combine (BF16) against ~160 GB/s of NVLink. The bundled h800-deepep cluster
     * carries that efficiency; DeepEP's "bandwidth" counts a rank's bytes over the time. */
    pm_cluster c;
    pm_error err;
    if (pm_cluster_load("h800-deepep", &g_opts, &c, &err) != PM_OK)
        fail_msg("h800-deepep: %s", err.message);
    c.expert_parallel = 8;
    c.devices = 8;
    c.topology = PM_TOPO_SWITCH;
    const double dispatch = 4096.0 * 8 * 7168; /* fp8: 235 MB */
    double t;
    assert_int_equal(pm_alltoall_time(&c, dispatch, &t, NULL), PM_OK);
    const double gbps = dispatch * 7 / 8 / t / 1e9;
    if (!(fabs(gbps - 153.0) <= 0.05 * 153.0))
        fail_msg("dispatch %.1f GB/s, DeepEP 153 GB/s", gbps);
    assert_int_equal(pm_alltoall_time(&c, 2 * dispatch, &t, NULL), PM_OK);
    const double comb = 2 * dispatch * 7 / 8 / t / 1e9;
    if (!(fabs(comb - 158.0) <= 0.05 * 158.0))
        fail_msg("combine %.1f GB/s, DeepEP 158 GB/s", comb);
}

/* ---------------------------------------------------------------- graph */

static pm_graph *build_mode(const pm_scenario *s, pm_mode mode, int64_t ctx)
{
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    pm_error err;
    if (pm_graph_build_mode(s, mode, PM_PHASE_DECODE, ctx, 0, g, &err) != PM_OK)
        fail_msg("pm_graph_build_mode: %s", err.message);
    return g;
}

static const pm_node *find_role(const pm_graph *g, int layer, pm_node_role role)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].layer == layer && g->nodes[i].role == role)
            return &g->nodes[i];
    return NULL;
}

static void test_moe_graph_by_hand(void **state)
{
    (void)state;
    /* 4 devices, EP2: each rank 4 of 8 experts, each expert's 512 columns over 2 devices
     * (256); batch 2, top-2: 4 token slots, 2 of them on the busiest rank's... (balanced:
     * T k / ep = 2). */
    pm_scenario s = moe_scenario(4, 2, 8, 2);
    s.model.shared_experts = 1;
    s.model.shared_intermediate = 1024;
    pm_graph *g = build_mode(&s, PM_MODE_SERIAL, 100);
    const pm_node *d = find_role(g, 0, PM_ROLE_DISPATCH), *c = find_role(g, 0, PM_ROLE_COMBINE);
    assert_non_null(d);
    assert_non_null(c);
    assert_int_equal(d->kind, PM_NODE_ALLTOALL);
    /* Every device holds the batch's 2 x 2 token slots of 1024 int8 elements: 4096 bytes to
     * dispatch; the combine in the reduction's type (int8 here, no allreduce_dtype). */
    assert_rel(d->comm_bytes, 2.0 * 2 * 1024, EXACT);
    assert_rel(c->comm_bytes, 2.0 * 2 * 1024, EXACT);
    const pm_moe_reads r = reads(&s, 2);
    const pm_node *up = find_role(g, 0, PM_ROLE_EXPERT_UP);
    assert_true(up->routed);
    assert_rel(up->weight_bytes, r.experts_read * 1024 * 256, EXACT);
    assert_rel(up->flop, 2.0 * 2 * 1024 * 256, EXACT); /* 2 slots x 2 x k x n */
    /* The shared expert whole on every device under EP (1024 columns), not routed. */
    const pm_node *sh = find_role(g, 0, PM_ROLE_SHARED_UP);
    assert_false(sh->routed);
    assert_rel(sh->weight_bytes, 1024.0 * 1024, EXACT);
    /* The router: hidden x experts, whole. */
    assert_rel(find_role(g, 0, PM_ROLE_ROUTER)->weight_bytes, 1024.0 * 8, EXACT);
    /* No MLP allreduce with EP: the combine ends the block. */
    assert_null(find_role(g, 0, PM_ROLE_MLP_ALLREDUCE));
    /* The footprint's read bytes are the graph's MoE block weights. */
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 100, &f, NULL), PM_OK);
    double block = 0.0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *n = &g->nodes[i];
        if (n->layer == 0 && n->kind == PM_NODE_MATMUL &&
            (n->routed || n->role == PM_ROLE_ROUTER || n->role == PM_ROLE_SHARED_GATE ||
             n->role == PM_ROLE_SHARED_UP || n->role == PM_ROLE_SHARED_DOWN))
            block += n->weight_bytes;
    }
    assert_rel(block, f.moe_read_bytes, 1e-14);
    pm_graph_free(g);
}

static void test_routed_experts_prefetched_only_under_the_dispatch(void **state)
{
    (void)state;
    pm_scenario s = moe_scenario(4, 2, 8, 2);
    pm_graph *g = build_mode(&s, PM_MODE_PRESERVE, 100);
    int routed_pf = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *p = &g->nodes[i];
        if (p->kind != PM_NODE_PREFETCH || !g->nodes[p->consumer].routed)
            continue;
        routed_pf++;
        assert_int_equal(g->nodes[p->trigger].kind, PM_NODE_ALLTOALL);
        assert_int_equal(g->nodes[p->trigger].role, PM_ROLE_DISPATCH);
    }
    assert_int_equal(routed_pf, 3 * 4); /* gate, up, down in each of the 4 layers */
    pm_graph_free(g);
    /* Without EP no collective follows the router: the attention allreduce's window stops at
     * the first routed expert, which is never prefetched. */
    s.cluster.expert_parallel = 1;
    g = build_mode(&s, PM_MODE_PRESERVE, 100);
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *n = &g->nodes[i];
        if (n->kind == PM_NODE_PREFETCH)
            assert_false(g->nodes[n->consumer].routed);
        if (n->role == PM_ROLE_ATTN_ALLREDUCE) {
            assert_true(n->overflow >= 0);
            assert_true(g->nodes[n->overflow].routed);
        }
    }
    pm_graph_free(g);
}

static void test_moe_graph_json_round_trip(void **state)
{
    (void)state;
    pm_scenario s = moe_scenario(4, 2, 8, 2);
    pm_graph *g = build_mode(&s, PM_MODE_PRESERVE, 100);
    char *text = NULL;
    pm_error err;
    assert_int_equal(pm_graph_to_json(g, &text, &err), PM_OK);
    assert_non_null(strstr(text, "\"op\":\t\"AllToAll\""));
    assert_non_null(strstr(text, "\"routed\":\ttrue"));
    pm_graph *back = pm_graph_alloc();
    if (pm_graph_from_json(text, strlen(text), "moe.json", back, &err) != PM_OK)
        fail_msg("round trip: %s", err.message);
    assert_int_equal(back->n_nodes, g->n_nodes);
    for (size_t i = 0; i < g->n_nodes; i++) {
        assert_int_equal(back->nodes[i].kind, g->nodes[i].kind);
        assert_int_equal(back->nodes[i].routed, g->nodes[i].routed);
        assert_int_equal(back->nodes[i].trigger, g->nodes[i].trigger);
    }
    free(text);
    /* The kind's value and spelling are pinned. */
    assert_int_equal(PM_NODE_ALLTOALL, 9);
    assert_string_equal(pm_node_kind_name(PM_NODE_ALLTOALL), "AllToAll");
    assert_int_equal(PM_ROLE_DISPATCH, 20);
    assert_string_equal(pm_node_role_name(PM_ROLE_COMBINE), "combine");
    assert_int_equal(pm_graph_to_dot(g, &text, &err), PM_OK);
    assert_non_null(strstr(text, "AllToAll"));
    free(text);
    pm_graph_free(back);
    pm_graph_free(g);
}

/* ---------------------------------------------------------------- fast path == graph path */

static void check_fast_matches_graph(const pm_scenario *s, const int64_t *ctxs, size_t n)
{
    pm_test_fast_matches_graph(s, ctxs, n);
}


/* A MoE layer pattern of the hand MoE scenario (4 devices, 8 experts, top 2): layers, the first
 * MoE layer, its period and phase, shared experts (of 768) and EP ranks. */
typedef struct moe_pattern {
    int layers, first, period, phase, shared, ep;
} moe_pattern;

static pm_scenario patterned(const moe_pattern *p)
{
    pm_scenario s = moe_scenario(4, p->ep, 8, 2);
    pm_model *m = &s.model;
    m->layers = p->layers;
    m->moe_first_layer = p->first;
    m->moe_period = p->period;
    m->moe_phase = p->phase;
    m->shared_experts = p->shared;
    m->shared_intermediate = p->shared ? 768 : 0;
    return s;
}

static void test_moe_fast_path_matches_graph_path(void **state)
{
    (void)state;
    static const int64_t ctxs[] = {0, 50, 300, 5000};
    /* Dense layers first, interleaved MoE, shared experts or not, EP or TP experts, small L2
     * (windows stop inside the experts) and large, windows on some layers, both consumer
     * semantics and HBM sharing. */
    static const moe_pattern cases[] = {{4, 0, 1, 0, 0, 1}, {4, 0, 1, 0, 0, 2}, {5, 2, 1, 0, 1, 2},
                                        {6, 0, 2, 1, 1, 1}, {7, 1, 3, 0, 0, 4}, {5, 0, 2, 0, 2, 2}};
    for (size_t c = 0; c < PM_ARRAY_LEN(cases); c++)
        for (int variant = 0; variant < 6; variant++) {
            pm_scenario s = patterned(&cases[c]);
            pm_model *m = &s.model;
            s.accel.l2_capacity_bytes = variant & 1 ? 64.0 * 1048576.0 : 2.5 * 1048576.0;
            if (variant >= 2) {
                m->sliding_window = 100;
                m->window_period = 2;
                m->local_mask = 0x1;
            }
            if (variant >= 4) {
                s.accel.prefetch_consumer = PM_CONSUMER_STREAM;
                s.options.hbm_sharing = variant == 5;
            }
            check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
            if (s.cluster.expert_parallel <= 1) {
                /* One prompt over the batch: both paths read the same experts. */
                s.workload.distinct_sequences = 1;
                check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
            }
        }
}

static void test_bundled_moe_fast_path_matches_graph_path(void **state)
{
    (void)state;
    static const char *const refs[] = {"mixtral8x7b", "qwen3-30b-a3b", "deepseek-v3-h200",
                                       "llama4-scout-h100", "mixtral8x22b-a100", "dbrx-h100"};
    static const int64_t ctxs[] = {100, 4000};
    for (size_t i = 0; i < PM_ARRAY_LEN(refs); i++) {
        pm_scenario s = load(refs[i], NULL, 0);
        check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
        pm_scenario_release(&s);
    }
}

static void test_moe_closed_form_sums_match_graph_path(void **state)
{
    (void)state;
    /* The closed-form serial and fused decode sums (contexts 300..599) against the graph
     * path's steps: dense layers first, interleaved MoE, shared experts, EP or TP experts,
     * windows on some layers. */
    static const moe_pattern cases[] = {{4, 0, 1, 0, 0, 1}, {5, 2, 1, 0, 1, 2}, {7, 1, 3, 0, 0, 4}};
    double worst = 0.0;
    for (size_t c = 0; c < PM_ARRAY_LEN(cases); c++)
        for (int windows = 0; windows < 2; windows++) {
            pm_scenario s = patterned(&cases[c]);
            pm_model *m = &s.model;
            if (windows) {
                m->sliding_window = 400;
                m->window_period = 2;
                m->local_mask = 0x1;
            }
            const double w = pm_test_closed_form_matches_graph(&s);
            worst = w > worst ? w : worst;
        }
    print_message("closed-form decode sums (MoE): largest relative difference %.3g\n", worst);
}

/* ---------------------------------------------------------------- routing kernels (issue 47) */

/* The hand MoE scenario under a runtime that routes with kernels of its own: the align at
 * 10 us fixed and 5 ns per slot, 2 us per launch. */
static pm_scenario routing_scenario(int devices, int ep)
{
    pm_scenario s = moe_scenario(devices, ep, 8, 2);
    s.runtime.present = true;
    s.runtime.kernel_launch_s = 2e-6;
    s.runtime.moe_routing_kernels = true;
    s.runtime.moe_align_fixed_s = 10e-6;
    s.runtime.moe_align_per_slot_s = 5e-9;
    return s;
}

static void test_moe_routing_kernels_by_hand(void **state)
{
    (void)state;
    /* TP experts (4 devices, EP 1): batch 2, hidden 1024, 8 experts, top-2, int8 activations
     * (1 byte). */
    pm_scenario s = routing_scenario(4, 1);
    pm_graph *g = build_mode(&s, PM_MODE_SERIAL, 100);
    const pm_node *t = find_role(g, 0, PM_ROLE_MOE_TOPK), *a = find_role(g, 0, PM_ROLE_MOE_ALIGN),
                  *u = find_role(g, 0, PM_ROLE_MOE_SUM);
    assert_non_null(t);
    assert_non_null(a);
    assert_non_null(u);
    /* Top-k: 2 tokens x 8 scores read (1 byte each) = 16, 2 x 2 slots x 12 bytes written = 48;
     * 4 flop a score: 64. */
    assert_rel(t->act_bytes, 16.0 + 48.0, EXACT);
    assert_rel(t->flop, 64.0, EXACT);
    /* Align: 4 slots, 4 bytes read and 4 written each. */
    assert_rel(a->m, 4.0, EXACT);
    assert_rel(a->act_bytes, 32.0, EXACT);
    /* Sum: 4 slots x 1024 read + 2 tokens x 1024 written = 6144 bytes; 4 x 1024 adds. */
    assert_rel(u->act_bytes, 6144.0, EXACT);
    assert_rel(u->flop, 4096.0, EXACT);
    /* In order: router, top-k, align, the experts, the sum, then the allreduce. */
    assert_true(find_role(g, 0, PM_ROLE_ROUTER) < t && t < a);
    assert_true(a < find_role(g, 0, PM_ROLE_EXPERT_GATE));
    assert_true(find_role(g, 0, PM_ROLE_EXPERT_DOWN) < u && u < find_role(g, 0, PM_ROLE_MLP_ALLREDUCE));
    /* The align's cost: its 32 bytes at the HBM, then 10 us + 4 x 5 ns = 10.02 us and the
     * 2 us launch. */
    pm_cost_ctx k;
    pm_cost_ctx_init(&s, &k);
    pm_op_cost c;
    pm_op_cost_node(&k, NULL, a, &c);
    assert_rel(c.launch_s, 2e-6, EXACT);
    assert_rel(c.total_s - c.hbm_s - c.launch_s, 10.02e-6, 1e-9);
    assert_rel(c.hbm_s, 32.0 / k.bw, 1e-12);
    pm_graph_free(g);
    /* EP 2: the sum reads every one of a token's 2 slots after the combine: 4 x 1024 + 2 x 1024. */
    s = routing_scenario(4, 2);
    g = build_mode(&s, PM_MODE_SERIAL, 100);
    u = find_role(g, 0, PM_ROLE_MOE_SUM);
    assert_true(find_role(g, 0, PM_ROLE_COMBINE) < u);
    assert_rel(u->act_bytes, 6144.0, EXACT);
    pm_graph_free(g);
    /* Off (no runtime, or a runtime without them): none of the three. */
    s = moe_scenario(4, 1, 8, 2);
    g = build_mode(&s, PM_MODE_SERIAL, 100);
    assert_null(find_role(g, 0, PM_ROLE_MOE_TOPK));
    assert_null(find_role(g, 0, PM_ROLE_MOE_ALIGN));
    assert_null(find_role(g, 0, PM_ROLE_MOE_SUM));
    pm_graph_free(g);
    assert_string_equal(pm_node_role_name(PM_ROLE_MOE_ALIGN), "moe_align");
}

static void test_moe_routing_fast_path_matches_graph_path(void **state)
{
    (void)state;
    static const int64_t ctxs[] = {0, 300, 5000};
    static const moe_pattern cases[] = {{4, 0, 1, 0, 0, 1}, {5, 2, 1, 0, 1, 2}, {7, 1, 3, 0, 0, 4}};
    for (size_t c = 0; c < PM_ARRAY_LEN(cases); c++) {
        pm_scenario s = patterned(&cases[c]);
        s.runtime = routing_scenario(4, 1).runtime;
        check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
    }
    /* The bundled runtime: vLLM's align line (runtime data: 12.9 us and 7.54 ns a slot). */
    static const char *const sets[] = {"runtime=vllm"};
    static const char *const refs[] = {"dbrx-h100", "mixtral8x22b-a100"};
    for (size_t i = 0; i < PM_ARRAY_LEN(refs); i++) {
        pm_scenario s = load(refs[i], sets, 1);
        assert_true(s.runtime.moe_routing_kernels);
        /* The expert GEMMs' compute table applies on the H100 (dbrx-h100) only. */
        assert_true((pm_moe_gemm_curve_of(&s) != NULL) == (i == 0));
        assert_rel(s.runtime.moe_align_fixed_s, 12.9e-6, 1e-12);
        assert_rel(s.runtime.moe_align_per_slot_s, 7.54e-9, 1e-12);
        static const int64_t big[] = {100, 4000};
        check_fast_matches_graph(&s, big, PM_ARRAY_LEN(big));
        pm_scenario_release(&s);
    }
}

/* The expert GEMMs' compute table (issue 47, data/runtimes/vllm.json: measured on the H100,
 * tuned): on an A100 it is off, said among the warnings, and every time is what it is without
 * the table; on the H100 (DBRX) the prefill, 2,048 tokens x 4 / 16 = 512 tokens per expert, is
 * compute-bound and slower with it, and both evaluators still agree (above). */
static void test_moe_gemm_compute_table_off_where_not_measured(void **state)
{
    (void)state;
    static const char *const sets[] = {"runtime=vllm", "workload.seq_len=2048",
                                       "workload.prefill_frac=0.99"};
    static const char *const refs[] = {"mixtral8x22b-a100", "dbrx-h100"};
    for (size_t i = 0; i < PM_ARRAY_LEN(refs); i++) {
        pm_scenario s = load(refs[i], sets, PM_ARRAY_LEN(sets));
        const bool h100 = i == 1;
        assert_true(s.runtime.moe_gemm_compute.n_points > 0);
        assert_true((pm_moe_gemm_curve_of(&s) != NULL) == h100);
        bool said = false;
        char note[512];
        for (size_t w = 0; pm_scenario_warning(&s, w, note, sizeof note); w++)
            said = said || strstr(note, "moe_gemm_compute_efficiency") != NULL;
        assert_true(said == !h100);
        pm_estimate on, off;
        assert_int_equal(pm_estimate_compute(&s, &on, NULL), PM_OK);
        s.runtime.moe_gemm_compute.n_points = 0;
        assert_int_equal(pm_estimate_compute(&s, &off, NULL), PM_OK);
        const pm_mode_result *a = &on.modes[PM_MODE_SERIAL], *b = &off.modes[PM_MODE_SERIAL];
        if (h100) {
            assert_true(a->prefill_s > b->prefill_s * 1.01);
        } else {
            assert_true(!(fabs(a->prefill_s - b->prefill_s) > 0.0));
            assert_true(!(fabs(a->decode_s - b->decode_s) > 0.0));
            assert_true(!(fabs(a->request_s - b->request_s) > 0.0));
        }
        pm_scenario_release(&s);
    }
}

/* ---------------------------------------------------------------- fp8 activation quant (issue 47) */

/* The hand MoE scenario with fp8 weights and activations under a runtime that quantises each
 * fp8 linear's input (2 us per launch). */
static pm_scenario fp8_quant_scenario(void)
{
    pm_scenario s = moe_scenario(4, 1, 8, 2);
    s.workload.weight_dtype = s.workload.act_dtype = PM_DTYPE_FP8;
    s.accel.peak_flop_per_s[PM_DTYPE_FP8] = s.accel.peak_flop_per_s[PM_DTYPE_INT8];
    s.runtime.present = true;
    s.runtime.kernel_launch_s = 2e-6;
    s.runtime.fp8_activation_quant = true;
    return s;
}

static int count_role(const pm_graph *g, int layer, pm_node_role role)
{
    int n = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        n += g->nodes[i].layer == layer && g->nodes[i].role == role;
    return n;
}

static void test_fp8_activation_quant_by_hand(void **state)
{
    (void)state;
    pm_scenario s = fp8_quant_scenario();
    pm_graph *g = build_mode(&s, PM_MODE_SERIAL, 100);
    /* Layer 0 (MoE, gated, no shared expert): before QKV, O, the experts' gate (and up: one
     * merged linear) and the experts' down: 4. Not before the router. */
    assert_int_equal(count_role(g, 0, PM_ROLE_ACT_QUANT), 4);
    const pm_node *q = find_role(g, 0, PM_ROLE_ACT_QUANT), *qkv = find_role(g, 0, PM_ROLE_QKV);
    assert_non_null(q);
    assert_true(q + 1 == qkv);
    /* Decode, batch 2, QKV's input 2 x 1024: read 2 bytes a value (16-bit), write 1 (fp8),
     * one 4-byte scale a row: 2 x 1024 x 3 + 2 x 4 = 6152 bytes; 2 flop a value: 4096. */
    assert_rel(q->act_bytes, 6152.0, EXACT);
    assert_rel(q->flop, 4096.0, EXACT);
    /* Its time: memory-bound, 6152 bytes at the HBM, plus the runtime's 2 us launch. */
    pm_cost_ctx k;
    pm_cost_ctx_init(&s, &k);
    pm_op_cost c;
    pm_op_cost_node(&k, NULL, q, &c);
    assert_true(c.compute_s < c.hbm_s);
    assert_rel(c.hbm_s, 6152.0 / k.bw, 1e-12);
    assert_rel(c.total_s, 6152.0 / k.bw + 2e-6, 1e-9);
    pm_graph_free(g);
    static const int64_t ctxs[] = {0, 300};
    check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
    /* Absent without the key, and with it but int8 or 16-bit activations. */
    s.runtime.fp8_activation_quant = false;
    g = build_mode(&s, PM_MODE_SERIAL, 100);
    assert_null(find_role(g, 0, PM_ROLE_ACT_QUANT));
    pm_graph_free(g);
    s = fp8_quant_scenario();
    s.workload.act_dtype = PM_DTYPE_BF16;
    g = build_mode(&s, PM_MODE_SERIAL, 100);
    assert_null(find_role(g, 0, PM_ROLE_ACT_QUANT));
    pm_graph_free(g);
    assert_string_equal(pm_node_role_name(PM_ROLE_ACT_QUANT), "act_quant");
}

static void test_fp8_activation_quant_bundled(void **state)
{
    (void)state;
    /* The bundled vllm runtime carries the key; fp8 Mixtral's graph gets the nodes and the
     * fast path still equals the graph path. */
    static const char *const sets[] = {"runtime=vllm", "workload.weight_dtype=fp8",
                                       "workload.act_dtype=fp8"};
    pm_scenario s = load("mixtral8x22b-a100", sets, 1);
    assert_true(s.runtime.fp8_activation_quant);
    pm_scenario_release(&s);
    s = load("dbrx-h100", sets, 3);
    static const int64_t big[] = {100, 4000};
    check_fast_matches_graph(&s, big, PM_ARRAY_LEN(big));
    pm_scenario_release(&s);
    /* MLA under vllm-v1 with fp8 activations loads (Q_B's input quantised too). */
    static const char *const mla[] = {"runtime=vllm-v1", "workload.act_dtype=fp8",
                                      "cluster.expert_parallel=1"};
    pm_load_opts o = g_opts;
    o.overrides = mla;
    o.n_overrides = 3;
    pm_error err;
    assert_int_equal(pm_scenario_load("deepseek-v3-h200", &o, &s, &err), PM_OK);
    pm_graph *g = build_mode(&s, PM_MODE_SERIAL, 100);
    const pm_node *qb = find_role(g, 5, PM_ROLE_Q_UP);
    assert_non_null(qb);
    assert_int_equal(qb[-1].role, PM_ROLE_ACT_QUANT);
    pm_graph_free(g);
    pm_scenario_release(&s);
}

/* ---------------------------------------------------------------- properties */

static void test_reads_never_exceed_resident_bytes(void **state)
{
    (void)state;
    static const int batches[] = {1, 2, 4, 16, 64, 512, 4096};
    static const int eps[] = {1, 2, 4, 8};
    static const double skews[] = {0.0, 0.8, 2.0};
    for (size_t b = 0; b < PM_ARRAY_LEN(batches); b++)
        for (size_t e = 0; e < PM_ARRAY_LEN(eps); e++)
            for (size_t k = 0; k < PM_ARRAY_LEN(skews); k++) {
                pm_scenario s = moe_scenario(8, eps[e], 64, 4);
                s.model.shared_experts = 1;
                s.model.shared_intermediate = 512;
                s.workload.batch = batches[b];
                s.workload.routing_skew_alpha = skews[k];
                pm_footprint f;
                assert_int_equal(pm_footprint_compute(&s, NULL, 0, &f, NULL), PM_OK);
                assert_true(f.moe_read_bytes <= f.moe_weight_bytes * (1 + 1e-12));
                assert_true(f.experts_read_per_step <= 64.0 / eps[e] + 1e-12);
                const pm_moe_reads r = reads(&s, batches[b]);
                assert_true(r.experts_touched <= 64.0 + 1e-12);
                /* More tokens never touch fewer experts. */
                const pm_moe_reads r2 = reads(&s, 2.0 * batches[b]);
                assert_true(r2.experts_read >= r.experts_read - 1e-12);
            }
}

static void test_more_l2_never_slower_with_streaming_consumers(void **state)
{
    (void)state;
    for (int ep = 1; ep <= 4; ep *= 2) {
        pm_scenario s = moe_scenario(4, ep, 8, 2);
        s.model.shared_experts = 1;
        s.model.shared_intermediate = 768;
        s.accel.prefetch_consumer = PM_CONSUMER_STREAM;
        double prev = INFINITY;
        for (double mib = 0.25; mib <= 256; mib *= 1.5) {
            s.accel.l2_capacity_bytes = mib * 1048576.0;
            double t;
            pm_error err;
            assert_int_equal(pm_decode_step_time(&s, PM_MODE_PRESERVE, 300, &t, &err), PM_OK);
            if (!(t <= prev * (1 + 1e-12)))
                fail_msg("ep %d, L2 %.2f MiB: %.9g s after %.9g s", ep, mib, t, prev);
            prev = t;
        }
    }
}

static void test_expert_parallel_is_validated(void **state)
{
    (void)state;
    pm_error err;
    pm_scenario s = moe_scenario(4, 3, 8, 2); /* 3 does not divide 4 devices */
    assert_int_equal(pm_scenario_check(&s, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "$.cluster.expert_parallel");
    s = moe_scenario(8, 8, 12, 2); /* 8 does not divide 12 experts */
    s.model.heads = s.model.kv_heads = 8;
    assert_int_equal(pm_scenario_check(&s, &err), PM_ERR_INCONSISTENT);
    assert_non_null(strstr(err.message, "12 routed experts"));
    pm_scenario d = pm_test_hand_scenario(2);
    d.cluster.expert_parallel = 2; /* a dense model */
    assert_int_equal(pm_scenario_check(&d, &err), PM_ERR_INCONSISTENT);
    assert_non_null(strstr(err.message, "needs a mixture-of-experts model"));
    s = moe_scenario(4, 2, 8, 2);
    s.model.parallel_block = true;
    assert_int_equal(pm_scenario_check(&s, &err), PM_ERR_UNSUPPORTED);
    /* The cluster file's key. */
    static const char *const sets[] = {"model=mixtral-8x7b", "cluster.expert_parallel=3"};
    pm_load_opts o = g_opts;
    o.overrides = sets;
    o.n_overrides = 2;
    pm_scenario bad;
    assert_int_equal(pm_scenario_load("llama70b", &o, &bad, &err), PM_ERR_INCONSISTENT);
    assert_non_null(strstr(err.path, "expert_parallel"));
}


/* ---------------------------------------------------------------- data-parallel attention */

/* The hand MoE scenario (4 layers, all MoE, 8 experts of 512 columns, top 2, int8) on 4
 * devices with data-parallel attention: every device one attention rank and one EP rank. */
static pm_scenario dp_attention_scenario(int batch)
{
    pm_scenario s = moe_scenario(4, 4, 8, 2);
    s.cluster.attention_data_parallel = true;
    s.workload.batch = batch;
    return s;
}

/* Batch 6 over 4 attention ranks: the busiest holds ceil(6 / 4) = 2 sequences, all 8 query and
 * 2 KV heads (128 wide), every weight but the routed experts whole; the experts read the
 * group's 6 tokens x 2 picks. Decode at context 100. */
static void test_dp_attention_graph_by_hand(void **state)
{
    (void)state;
    pm_scenario s = dp_attention_scenario(6);
    assert_int_equal(pm_scenario_check(&s, NULL), PM_OK);
    pm_shard sh;
    assert_int_equal(pm_shard_compute(&s, &sh, NULL), PM_OK);
    assert_int_equal(sh.attn_dp, 4);
    assert_rel(sh.q_heads, 8.0, 0.0);
    assert_rel(sh.kv_heads, 2.0, 0.0);
    assert_rel(sh.expert_cols, 512.0, 0.0); /* one device per EP rank: each expert whole */
    assert_rel(sh.experts_local, 2.0, 0.0); /* 8 / 4 */
    pm_graph *g = build_mode(&s, PM_MODE_SERIAL, 100);
    /* No allreduce anywhere: each rank computes its own tokens whole. */
    for (size_t i = 0; i < g->n_nodes; i++)
        assert_int_not_equal(g->nodes[i].kind, PM_NODE_ALLREDUCE);
    /* QKV: 2 rows x 1024 x (8 + 2 x 2) x 128 = 1536 columns; 1024 x 1536 int8 weights. */
    const pm_node *qkv = find_role(g, 0, PM_ROLE_QKV);
    assert_rel(qkv->m, 2.0, 0.0);
    assert_rel(qkv->weight_bytes, 1024.0 * 1536, EXACT);
    /* The attention reads its 2 sequences' K and V: 2 x 2 seq x 100 positions x 2 KV heads x
     * 128 x 1 B = 102400 B. */
    assert_rel(find_role(g, 0, PM_ROLE_ATTENTION)->kv_bytes, 102400.0, EXACT);
    /* Dispatch and combine: the rank's 2 tokens x 2 picks x 1024 x 1 B = 4096 B each. */
    const pm_node *d = find_role(g, 0, PM_ROLE_DISPATCH), *c = find_role(g, 0, PM_ROLE_COMBINE);
    assert_int_equal(d->kind, PM_NODE_ALLTOALL);
    assert_rel(d->comm_bytes, 4096.0, EXACT);
    assert_rel(c->comm_bytes, 4096.0, EXACT);
    /* The routed experts: the group's 6 tokens' reads, each expert 1024 x 512. */
    const pm_moe_reads r = reads(&s, 6);
    const pm_node *up = find_role(g, 0, PM_ROLE_EXPERT_UP);
    assert_rel(up->weight_bytes, r.experts_read * 1024 * 512, EXACT);
    assert_rel(up->flop, 2.0 * r.token_slots * 1024 * 512, EXACT);
    /* The router and the LM head on the rank's 2 rows, whole (8192 x 1024). */
    assert_rel(find_role(g, 0, PM_ROLE_ROUTER)->m, 2.0, 0.0);
    const pm_node *head = find_role(g, -1, PM_ROLE_LM_HEAD);
    assert_rel(head->m, 2.0, 0.0);
    assert_rel(head->weight_bytes, 8192.0 * 1024, EXACT);
    pm_graph_free(g);
    /* Memory per device: a layer's attention 1024 x 1536 + 1024 x 1024 = 2621440 B, its 2
     * experts 2 x 3 x 1024 x 512 = 3145728 B, the router 1024 x 8 = 8192 B: 5775360 B x 4
     * layers = 23101440 B; LM head and embedding 8192 x 1024 = 8388608 B each: 39878656 B.
     * KV: 2 sequences x 2 (K, V) x 2 heads x 128 B = 1024 B a position a layer, x 100
     * positions x 4 layers = 409600 B. */
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 100, &f, NULL), PM_OK);
    assert_rel(f.weight_bytes, 39878656.0, EXACT);
    assert_rel(f.kv_bytes_per_token, 1024.0, EXACT);
    assert_rel(f.kv_bytes, 409600.0, EXACT);
    /* The same through the estimate (seq_len 600 here: 600 x 4 x 1024 B of KV). */
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_rel(e.weight_bytes_per_device, 39878656.0, EXACT);
    assert_rel(e.kv_bytes_per_device, 600.0 * 4 * 1024, EXACT);
}

/* The serial decode step by hand against tensor-parallel attention's, at batch 4 (one
 * sequence a rank): the all-to-all of 1 token x 2 picks x 1024 B on the full mesh of 4 is
 * alpha + n / (r B) = 1e-5 + 2048 / 4e11 s, a dispatch and a combine per layer. */
static void test_dp_attention_alltoall_time_by_hand(void **state)
{
    (void)state;
    pm_scenario s = dp_attention_scenario(4);
    pm_graph *g = build_mode(&s, PM_MODE_SERIAL, 100);
    const pm_node *d = find_role(g, 2, PM_ROLE_DISPATCH);
    assert_rel(d->comm_bytes, 2048.0, EXACT);
    double t = 0.0;
    assert_int_equal(pm_alltoall_time(&s.cluster, d->comm_bytes, &t, NULL), PM_OK);
    assert_rel(t, 1e-5 + 2048.0 / 4e11, 1e-12);
    pm_graph_free(g);
}

/* PRESERVE behind the all-to-alls: with no allreduce, the dispatch's window prefetches the
 * routed experts and the combine's the next layer's attention (its QKV) and, past it, the
 * router; the 3 layers after the first each get their QKV from the previous combine. */
static void test_dp_attention_preserve_windows_are_the_alltoalls(void **state)
{
    (void)state;
    pm_scenario s = dp_attention_scenario(4);
    pm_graph *g = build_mode(&s, PM_MODE_PRESERVE, 100);
    int routed_pf = 0, qkv_pf = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *p = &g->nodes[i];
        if (p->kind != PM_NODE_PREFETCH)
            continue;
        const pm_node *t = &g->nodes[p->trigger], *c = &g->nodes[p->consumer];
        assert_int_equal(t->kind, PM_NODE_ALLTOALL);
        if (c->routed) {
            routed_pf++;
            assert_int_equal(t->role, PM_ROLE_DISPATCH);
        }
        if (c->role == PM_ROLE_QKV) {
            qkv_pf++;
            assert_int_equal(t->role, PM_ROLE_COMBINE);
            assert_int_equal(t->layer + 1, c->layer);
        }
    }
    assert_int_equal(routed_pf, 3 * 4); /* gate, up, down in each of the 4 layers */
    assert_int_equal(qkv_pf, 3);
    pm_graph_free(g);
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_true(e.modes[PM_MODE_PRESERVE].decode_s < e.modes[PM_MODE_SERIAL].decode_s);
}

static void test_dp_attention_fast_path_matches_graph_path(void **state)
{
    (void)state;
    static const int64_t ctxs[] = {0, 50, 300, 5000};
    /* Batches the ranks divide and do not, fewer sequences than ranks; shared experts; a
     * small L2 (windows stop inside the experts) and a large one; windowed layers; both
     * consumer semantics and HBM sharing. */
    static const int batches[] = {1, 3, 8};
    for (size_t b = 0; b < PM_ARRAY_LEN(batches); b++)
        for (int variant = 0; variant < 8; variant++) {
            pm_scenario s = dp_attention_scenario(batches[b]);
            s.accel.l2_capacity_bytes = variant & 1 ? 64.0 * 1048576.0 : 2.5 * 1048576.0;
            if (variant & 2) {
                s.model.shared_experts = 1;
                s.model.shared_intermediate = 768;
            }
            if (variant & 4) {
                s.model.sliding_window = 100;
                s.model.window_period = 2;
                s.model.local_mask = 0x1;
                s.accel.prefetch_consumer = PM_CONSUMER_STREAM;
                s.options.hbm_sharing = variant == 7;
            }
            check_fast_matches_graph(&s, ctxs, PM_ARRAY_LEN(ctxs));
        }
    /* The bundled MoE scenarios whose every layer is a MoE layer, each device an EP rank, at
     * batch 1 and at 32 (8 or 4 sequences a rank). */
    static const char *const refs[] = {"qwen3-30b-a3b", "llama4-scout-h100", "mixtral8x7b",
                                       "dbrx-h100"};
    static const char *const eps[] = {"cluster.expert_parallel=4", "cluster.expert_parallel=8",
                                      "cluster.expert_parallel=4", "cluster.expert_parallel=4"};
    static const int64_t big[] = {100, 4000};
    for (size_t i = 0; i < PM_ARRAY_LEN(refs); i++)
        for (int batch = 1; batch <= 32; batch *= 32) {
            const char *sets[] = {"cluster.attention_data_parallel=true", eps[i]};
            pm_scenario s = load(refs[i], sets, 2);
            s.workload.batch = batch;
            check_fast_matches_graph(&s, big, PM_ARRAY_LEN(big));
            pm_scenario_release(&s);
        }
}

/* A served (mixed) step over 4 attention ranks, by hand: 6 decode sequences at context 100, 3
 * prompts' last chunks of 64 tokens (offset 0) and half a prompt's chunk of 32 on average.
 * The busiest rank: ceil(6 / 4) = 2 decode sequences; min(3, ceil(3 / 4)) = 1 whole chunk of
 * 64, its finishing prompts in proportion (3 x 1/3 = 1); min(0.5, ceil(0.5 / 4)) = 0.5 (a mean
 * below one chunk lands whole on one rank): 2 + 64 + 0.5 x 32 = 82 tokens, 2 + 1 = 3 logits.
 * The routed experts read the group's 6 + 3 x 64 + 0.5 x 32 = 214 tokens. */
static void test_dp_attention_mixed_step_by_hand(void **state)
{
    (void)state;
    pm_scenario s = dp_attention_scenario(4);
    pm_mixed_step mx = {0};
    mx.decode_sequences = 6;
    mx.decode_context = 100;
    mx.n_chunks = 2;
    mx.chunks[0] = (pm_step_chunk){3, 64, 0, 3};
    mx.chunks[1] = (pm_step_chunk){0.5, 32, 0, 0};
    pm_step step;
    assert_int_equal(pm_step_mixed(&s, &mx, &step, NULL), PM_OK);
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    assert_int_equal(pm_graph_build_ex(&s, &step, 0, false, g, NULL), PM_OK);
    assert_rel(find_role(g, 0, PM_ROLE_QKV)->m, 82.0, 0.0);
    assert_rel(find_role(g, 0, PM_ROLE_ROUTER)->m, 82.0, 0.0);
    /* Dispatch: the rank's 82 tokens x 2 picks x 1024 x 1 B = 167936 B. */
    assert_rel(find_role(g, 0, PM_ROLE_DISPATCH)->comm_bytes, 167936.0, EXACT);
    const pm_moe_reads r = reads(&s, 214.0);
    assert_rel(find_role(g, 0, PM_ROLE_EXPERT_UP)->flop, 2.0 * r.token_slots * 1024 * 512,
               EXACT);
    /* Attention: the 2 decode sequences score and read 100 positions each (200); the chunks,
     * at offset 0, their own triangles: 64^2 / 2 = 2048 and 0.5 x 32^2 / 2 = 256 pairs: 2504
     * per head, 8 heads of 128: 4 x 8 x 2504 x 128 + 5 x 8 x 2504 = 10356544 flop. K and V of
     * 200 positions x 2 KV heads x 128 x 1 B = 102400 B. */
    const pm_node *a = find_role(g, 0, PM_ROLE_ATTENTION);
    assert_rel(a->flop, 10356544.0, EXACT);
    assert_rel(a->kv_bytes, 102400.0, EXACT);
    assert_rel(find_role(g, -1, PM_ROLE_LM_HEAD)->m, 3.0, 0.0);
    /* 25 last chunks of 16 tokens, all finishing: the busiest rank's ceil(25 / 4) = 7 chunks,
     * 7 finishing prompts (25 x (7 / 25) rounds to 7.000000000000001 in doubles: kept at the
     * count, which pm_step_mixed requires), 7 LM-head rows and 7 x 16 = 112 tokens. */
    pm_mixed_step all = {0};
    all.n_chunks = 1;
    all.chunks[0] = (pm_step_chunk){25, 16, 0, 25};
    assert_int_equal(pm_step_mixed(&s, &all, &step, NULL), PM_OK);
    assert_int_equal(pm_graph_build_ex(&s, &step, 0, false, g, NULL), PM_OK);
    assert_rel(find_role(g, 0, PM_ROLE_QKV)->m, 112.0, 0.0);
    assert_rel(find_role(g, -1, PM_ROLE_LM_HEAD)->m, 7.0, 0.0);
    pm_graph_free(g);
}

/* A dense layer beside data-parallel attention (SGLang's FULL mode): 2 devices, each an
 * attention rank and an EP rank; layer 0 dense, layers 1 to 3 MoE; batch 3, decode at context
 * 100; sums in bf16. The busiest rank holds ceil(3 / 2) = 2 sequences, 2 tokens. */
static void test_dp_attention_dense_layer_by_hand(void **state)
{
    (void)state;
    pm_scenario s = moe_scenario(2, 2, 8, 2);
    s.cluster.attention_data_parallel = true;
    s.workload.batch = 3;
    s.workload.allreduce_dtype = PM_DTYPE_BF16;
    s.workload.allreduce_dtype_given = true;
    s.model.moe_first_layer = 1;
    assert_int_equal(pm_scenario_check(&s, NULL), PM_OK);
    pm_shard sh;
    assert_int_equal(pm_shard_compute(&s, &sh, NULL), PM_OK);
    assert_rel(sh.mlp_cols, 2048.0, 0.0); /* 4096 columns over the 2 devices */
    pm_graph *g = build_mode(&s, PM_MODE_SERIAL, 100);
    /* The all-gather after norm2: 2 ranks x the busiest rank's 2 tokens x 1024 x 1 B (int8
     * activations) = 4096 B. */
    const pm_node *ag = find_role(g, 0, PM_ROLE_MLP_ALL_GATHER);
    assert_non_null(ag);
    assert_int_equal(ag->kind, PM_NODE_ALL_GATHER);
    assert_rel(ag->comm_bytes, 2.0 * 2 * 1024 * 1, EXACT);
    /* Gate, Up and Down on the 2 x 2 = 4 gathered tokens, 2048 columns each: Gate 1024 x 2048
     * int8 weights = 2097152 B, 2 x 4 x 1024 x 2048 = 16777216 flop; Down 2048 x 1024. */
    const pm_node *gate = find_role(g, 0, PM_ROLE_GATE), *down = find_role(g, 0, PM_ROLE_DOWN);
    assert_rel(gate->m, 4.0, 0.0);
    assert_rel(gate->weight_bytes, 2097152.0, EXACT);
    assert_rel(gate->flop, 16777216.0, EXACT);
    assert_rel(down->m, 4.0, 0.0);
    assert_rel(down->k, 2048.0, 0.0);
    assert_rel(down->n, 1024.0, 0.0);
    /* The reduce-scatter back: 2 ranks x 2 tokens x 1024 x 2 B (bf16 sums) = 8192 B. */
    const pm_node *rs = find_role(g, 0, PM_ROLE_MLP_REDUCE_SCATTER);
    assert_non_null(rs);
    assert_int_equal(rs->kind, PM_NODE_REDUCE_SCATTER);
    assert_rel(rs->comm_bytes, 2.0 * 2 * 1024 * 2, EXACT);
    /* The attention on the rank's 2 tokens, no allreduce anywhere; the MoE layers keep their
     * dispatch (2 tokens x 2 picks x 1024 x 1 B = 4096 B) and have no gather. */
    assert_rel(find_role(g, 0, PM_ROLE_QKV)->m, 2.0, 0.0);
    for (size_t i = 0; i < g->n_nodes; i++)
        assert_int_not_equal(g->nodes[i].kind, PM_NODE_ALLREDUCE);
    assert_rel(find_role(g, 1, PM_ROLE_DISPATCH)->comm_bytes, 4096.0, EXACT);
    assert_null(find_role(g, 1, PM_ROLE_MLP_ALL_GATHER));
    assert_null(find_role(g, 1, PM_ROLE_MLP_REDUCE_SCATTER));
    pm_graph_free(g);
    /* Memory: attention 1024 x 1536 + 1024 x 1024 = 2621440 B a layer; the dense MLP 3 x 1024 x
     * 2048 = 6291456 B; a MoE layer's 4 local experts 4 x 3 x 1024 x 512 = 6291456 B and the
     * router 1024 x 8 = 8192 B. 2621440 + 6291456 + 3 x (2621440 + 6291456 + 8192) = 35676160
     * B; LM head and embedding 8192 x 1024 = 8388608 B each: 52453376 B. */
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 100, &f, NULL), PM_OK);
    assert_rel(f.weight_bytes, 52453376.0, EXACT);
    /* Both paths time it in every mode, alike (the fast path's periods keyed by both layers'
     * MLP classes: dense to MoE, MoE to MoE), and the estimate runs. */
    pm_error err;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double t = 0.0, fast = 0.0;
        assert_int_equal(pm_step_time_graph(&s, (pm_mode)m, PM_PHASE_DECODE, 100, &t, NULL, &err),
                         PM_OK);
        assert_int_equal(pm_decode_step_time(&s, (pm_mode)m, 100, &fast, &err), PM_OK);
        assert_true(t > 0.0);
        assert_rel(fast, t, 1e-11);
    }
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, &err), PM_OK);
}

/* The experts tensor parallel beside data-parallel attention (SGLang's default without --ep:
 * the MoE block on the ranks' gathered tokens, as a dense layer's MLP there): 4 devices, EP 1,
 * batch 6, decode at context 100, sums in bf16. The busiest rank holds ceil(6 / 4) = 2
 * sequences. */
static void test_dp_attention_tensor_parallel_experts_by_hand(void **state)
{
    (void)state;
    pm_scenario s = moe_scenario(4, 1, 8, 2);
    s.cluster.attention_data_parallel = true;
    s.workload.batch = 6;
    s.workload.allreduce_dtype = PM_DTYPE_BF16;
    s.workload.allreduce_dtype_given = true;
    assert_int_equal(pm_scenario_check(&s, NULL), PM_OK);
    pm_shard sh;
    assert_int_equal(pm_shard_compute(&s, &sh, NULL), PM_OK);
    assert_int_equal(sh.attn_dp, 4);
    assert_int_equal(sh.ep, 1);
    assert_rel(sh.expert_cols, 128.0, 0.0);  /* 512 columns over the 4 devices */
    assert_rel(sh.experts_local, 8.0, 0.0);  /* every expert on every device */
    pm_graph *g = build_mode(&s, PM_MODE_SERIAL, 100);
    /* No all-to-all and no allreduce: an all-gather of 4 ranks x 2 tokens x 1024 x 1 B (int8
     * activations) = 8192 B before the block, a reduce-scatter of 4 x 2 x 1024 x 2 B (bf16
     * sums) = 16384 B after. */
    for (size_t i = 0; i < g->n_nodes; i++) {
        assert_int_not_equal(g->nodes[i].kind, PM_NODE_ALLREDUCE);
        assert_int_not_equal(g->nodes[i].kind, PM_NODE_ALLTOALL);
    }
    for (int l = 0; l < 4; l++) {
        const pm_node *ag = find_role(g, l, PM_ROLE_MLP_ALL_GATHER);
        const pm_node *rs = find_role(g, l, PM_ROLE_MLP_REDUCE_SCATTER);
        assert_non_null(ag);
        assert_non_null(rs);
        assert_rel(ag->comm_bytes, 8192.0, EXACT);
        assert_rel(rs->comm_bytes, 16384.0, EXACT);
    }
    /* The attention on the rank's 2 tokens; the router on the 4 x 2 = 8 gathered ones. */
    assert_rel(find_role(g, 0, PM_ROLE_QKV)->m, 2.0, 0.0);
    assert_rel(find_role(g, 0, PM_ROLE_ROUTER)->m, 8.0, 0.0);
    /* The routed experts: the group's 6 tokens' reads (EP 1: every expert on the device), each
     * expert's 1024 x 128 slice. */
    const pm_moe_reads r = reads(&s, 6);
    const pm_node *up = find_role(g, 0, PM_ROLE_EXPERT_UP);
    assert_rel(up->weight_bytes, r.experts_read * 1024 * 128, EXACT);
    assert_rel(up->flop, 2.0 * r.token_slots * 1024 * 128, EXACT);
    assert_rel(r.token_slots, 12.0, EXACT); /* 6 tokens x 2 picks */
    pm_graph_free(g);
    /* Memory per device: a layer's attention 1024 x 1536 + 1024 x 1024 = 2621440 B, its 8
     * expert slices 8 x 3 x 1024 x 128 = 3145728 B, the router 8192 B: 5775360 B x 4 =
     * 23101440 B; LM head and embedding 8192 x 1024 = 8388608 B each: 39878656 B. */
    pm_footprint f;
    assert_int_equal(pm_footprint_compute(&s, NULL, 100, &f, NULL), PM_OK);
    assert_rel(f.weight_bytes, 39878656.0, EXACT);
    /* Both paths time it alike in every mode, with a dense first layer and shared experts
     * (tensor parallel: 768 / 4 columns) too, at an L2 whose windows stop inside a layer and
     * one that runs through the next layer's attention. */
    static const int64_t ctxs[] = {0, 100, 3000};
    for (int variant = 0; variant < 4; variant++) {
        pm_scenario v = s;
        v.accel.l2_capacity_bytes = variant & 1 ? 64.0 * 1048576.0 : 2.5 * 1048576.0;
        if (variant & 2) {
            v.model.moe_first_layer = 1;
            v.model.shared_experts = 1;
            v.model.shared_intermediate = 768;
        }
        check_fast_matches_graph(&v, ctxs, PM_ARRAY_LEN(ctxs));
    }
    pm_estimate e;
    assert_int_equal(pm_estimate_compute(&s, &e, NULL), PM_OK);
    assert_true(e.modes[PM_MODE_PRESERVE].decode_s < e.modes[PM_MODE_SERIAL].decode_s);
}

/* What data-parallel attention cannot represent is refused, naming the key. */
static void test_dp_attention_refusals(void **state)
{
    (void)state;
    pm_error err;
    pm_scenario d = pm_test_hand_scenario(2); /* a dense model */
    d.cluster.attention_data_parallel = true;
    assert_int_equal(pm_scenario_check(&d, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.cluster.attention_data_parallel");
    pm_scenario s = dp_attention_scenario(4);
    s.model.moe_first_layer = 1; /* a dense first layer: no refusal (the graph path models it) */
    assert_int_equal(pm_scenario_check(&s, &err), PM_OK);
    s = dp_attention_scenario(4);
    s.cluster.expert_parallel = 2; /* experts over 2 ranks of 2 devices */
    assert_int_equal(pm_scenario_check(&s, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "$.cluster.expert_parallel");
    s = dp_attention_scenario(4);
    s.cluster.pipeline_parallel = 2;
    assert_int_equal(pm_scenario_check(&s, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.cluster.attention_data_parallel");
    /* More devices than heads is no refusal: the ranks split sequences (8 heads, 16 devices,
     * 16 experts). */
    s = dp_attention_scenario(32);
    s.model.experts = 16;
    s.cluster.devices = s.cluster.expert_parallel = 16;
    assert_int_equal(pm_scenario_check(&s, &err), PM_OK);
    /* The JSON key. */
    static const char *const sets[] = {"model=llama3-8b", "cluster.attention_data_parallel=true"};
    pm_load_opts o = g_opts;
    o.overrides = sets;
    o.n_overrides = 2;
    pm_scenario bad;
    assert_int_equal(pm_scenario_load("llama70b", &o, &bad, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.cluster.attention_data_parallel");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_experts_touched_by_hand),
        cmocka_unit_test(test_identical_sequences_route_alike),
        cmocka_unit_test(test_busiest_rank_matches_the_monte_carlo_table),
        cmocka_unit_test(test_routing_skew_concentrates_the_reads),
        cmocka_unit_test(test_reads_reject_bad_arguments),
        cmocka_unit_test(test_mixtral_int8_tp4_bytes_by_hand),
        cmocka_unit_test(test_mixtral_8x22b_and_dbrx_bytes_by_hand),
        cmocka_unit_test(test_deepseek_v3_fp8_ep8_fits_an_h200),
        cmocka_unit_test(test_alltoall_times_by_hand),
        cmocka_unit_test(test_alltoall_hierarchical_node_by_its_topology),
        cmocka_unit_test(test_alltoall_calibration_reproduces_deepep),
        cmocka_unit_test(test_moe_graph_by_hand),
        cmocka_unit_test(test_routed_experts_prefetched_only_under_the_dispatch),
        cmocka_unit_test(test_moe_graph_json_round_trip),
        cmocka_unit_test(test_moe_fast_path_matches_graph_path),
        cmocka_unit_test(test_bundled_moe_fast_path_matches_graph_path),
        cmocka_unit_test(test_moe_closed_form_sums_match_graph_path),
        cmocka_unit_test(test_moe_routing_kernels_by_hand),
        cmocka_unit_test(test_moe_routing_fast_path_matches_graph_path),
        cmocka_unit_test(test_moe_gemm_compute_table_off_where_not_measured),
        cmocka_unit_test(test_fp8_activation_quant_by_hand),
        cmocka_unit_test(test_fp8_activation_quant_bundled),
        cmocka_unit_test(test_reads_never_exceed_resident_bytes),
        cmocka_unit_test(test_more_l2_never_slower_with_streaming_consumers),
        cmocka_unit_test(test_expert_parallel_is_validated),
        cmocka_unit_test(test_dp_attention_graph_by_hand),
        cmocka_unit_test(test_dp_attention_alltoall_time_by_hand),
        cmocka_unit_test(test_dp_attention_preserve_windows_are_the_alltoalls),
        cmocka_unit_test(test_dp_attention_fast_path_matches_graph_path),
        cmocka_unit_test(test_dp_attention_mixed_step_by_hand),
        cmocka_unit_test(test_dp_attention_dense_layer_by_hand),
        cmocka_unit_test(test_dp_attention_tensor_parallel_experts_by_hand),
        cmocka_unit_test(test_dp_attention_refusals),
        cmocka_unit_test(test_gpt_oss_20b_hf_config_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
