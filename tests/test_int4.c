/*
 * int4 weight-only quantisation (GPTQ, AWQ; issue 45 item 5): a stored weight's bytes with its
 * group's scale, the footprint and the graph of Qwen2.5-7B GPTQ-Int4 on one A10, a decode step's
 * HBM time against fp16 weights, the dequantisation on the GEMV, and the refusals.
 * Every golden number is worked out by hand in the comments.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#define TOL 1e-12
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Fails with the error's message unless st is PM_OK. */
#define assert_ok(st, err) check_ok((st), (err), __FILE__, __LINE__)
static void check_ok(pm_status st, const pm_error *err, const char *file, int line)
{
    if (st != PM_OK) {
        print_error("%s: %s: %s\n", pm_status_name(st), err->path, err->message);
        _fail(file, line);
    }
}

/* Qwen2.5-7B (28 layers, hidden 3584, 28 heads, 4 KV heads of 128, MLP 18944, vocabulary
 * 152064, untied, QKV biases) on one A10 at batch 1, fp16 activations and KV cache. */
static pm_scenario qwen_a10(const char *weight_dtype)
{
    char wd[64];
    snprintf(wd, sizeof wd, "workload.weight_dtype=%s", weight_dtype);
    const char *ov[] = {"model=qwen2.5-7b-instruct-gptq-int4", "accelerator=a10",
                        "cluster=pcie4-a10", "cluster.devices=1", wd,
                        "workload.act_dtype=fp16", "workload.kv_dtype=fp16", "workload.batch=1"};
    return pm_test_load("llama70b-h100", ov, ARRAY_LEN(ov));
}

/* 0.5 byte a weight plus a 2-byte scale (and a 0.5-byte zero point) per group. */
static void test_weight_elem_bytes(void **state)
{
    (void)state;
    pm_workload w;
    memset(&w, 0, sizeof w);
    w.weight_dtype = PM_DTYPE_INT4;
    w.act_dtype = PM_DTYPE_FP16;
    assert_rel(pm_dtype_bytes(PM_DTYPE_INT4), 0.5, TOL);
    assert_string_equal(pm_dtype_name(PM_DTYPE_INT4), "int4");
    /* Default group 128, symmetric: 0.5 + 2 / 128 = 0.515625. */
    assert_rel(pm_weight_elem_bytes(&w), 0.515625, TOL);
    /* Group 64 with zero points: 0.5 + (2 + 0.5) / 64 = 0.5390625. */
    w.weight_group_size = 64;
    w.weight_zero_point = true;
    assert_rel(pm_weight_elem_bytes(&w), 0.5390625, TOL);
    /* The embedding and LM head: the activations' fp16, 2 bytes. */
    assert_rel(pm_unquantised_weight_bytes(&w), 2.0, TOL);
    /* Other weight types: their own size everywhere (int8: 1). */
    w.weight_dtype = PM_DTYPE_INT8;
    w.weight_group_size = 0;
    w.weight_zero_point = false;
    assert_rel(pm_weight_elem_bytes(&w), 1.0, TOL);
    assert_rel(pm_unquantised_weight_bytes(&w), 1.0, TOL);
    /* The compute type stays the activations' (no int4 GEMM). */
    w.weight_dtype = PM_DTYPE_INT4;
    assert_int_equal(pm_compute_dtype(&w), PM_DTYPE_FP16);
}

/* One layer's linear weights: QKV 3584 x (28 + 2 x 4) x 128 = 3584 x 4608 = 16515072, O 3584 x
 * 3584 = 12845056, MLP 3 x 3584 x 18944 = 203685888: 233046016 weights, at 0.515625 B =
 * 120164352 B, plus the QKV bias 4608 x 2 B = 9216: 120173568 B a layer. The LM head and the
 * embedding: 152064 x 3584 x 2 B = 1089994752 B each. The whole: 28 x 120173568 + 2 x
 * 1089994752 = 3364859904 + 2179989504 = 5544849408 B (fp16: 28 x (233046016 x 2 + 9216) +
 * 2179989504 = 13050834944 + 2179989504 = 15230824448 B). */
static void test_footprint(void **state)
{
    (void)state;
    pm_scenario s = qwen_a10("int4");
    pm_footprint fp;
    pm_error err;
    assert_ok(pm_footprint_compute(&s, NULL, 0, &fp, &err), &err);
    assert_rel(fp.qkv_weight_bytes, 16515072.0 * 0.515625 + 9216.0, TOL);
    assert_rel(fp.layer_weight_bytes, 120173568.0, TOL);
    assert_rel(fp.lm_head_bytes, 1089994752.0, TOL);
    assert_rel(fp.embedding_bytes, 1089994752.0, TOL);
    assert_rel(fp.weight_bytes, 5544849408.0, TOL);
    pm_scenario_release(&s);
    s = qwen_a10("fp16");
    assert_ok(pm_footprint_compute(&s, NULL, 0, &fp, &err), &err);
    assert_rel(fp.weight_bytes, 15230824448.0, TOL);
    pm_scenario_release(&s);
}

/* The per-node graph agrees: a decode step's MatMul weights sum to the footprint less the
 * embedding (a gather, not a MatMul): 5544849408 - 1089994752 = 4454854656 B; fp16:
 * 15230824448 - 1089994752 = 14140829696 B. Returns that sum and the step's HBM time of the
 * MatMuls; qkv_out: the first QKV node's cost. */
static double decode_matmuls(const char *dtype, double *hbm_s, pm_op_cost *qkv_out,
                             double *head_hbm_s)
{
    pm_scenario s = qwen_a10(dtype);
    pm_graph *g = pm_graph_alloc();
    pm_error err;
    assert_ok(pm_graph_build(&s, PM_PHASE_DECODE, 10, 0, g, &err), &err);
    double bytes = 0.0;
    bool first = true;
    *hbm_s = 0.0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].kind != PM_NODE_MATMUL)
            continue;
        pm_op_cost c;
        assert_ok(pm_op_cost_compute(&s, g, i, &c, &err), &err);
        bytes += g->nodes[i].weight_bytes;
        *hbm_s += c.hbm_s;
        if (g->nodes[i].role == PM_ROLE_QKV && first) {
            *qkv_out = c;
            first = false;
        }
        if (g->nodes[i].role == PM_ROLE_LM_HEAD)
            *head_hbm_s = c.hbm_s;
    }
    pm_graph_free(g);
    pm_scenario_release(&s);
    return bytes;
}

static void test_decode_step_against_fp16(void **state)
{
    (void)state;
    double h4, h16, head4, head16;
    pm_op_cost q4, q16;
    assert_rel(decode_matmuls("int4", &h4, &q4, &head4), 4454854656.0, TOL);
    assert_rel(decode_matmuls("fp16", &h16, &q16, &head16), 14140829696.0, TOL);
    /* The A10's effective bandwidth: 0.6e12 x 0.89 = 5.34e11 B/s. The QKV GEMV reads its
     * weights 8524800 B (16515072 x 0.515625 + 9216) and its activations (3584 + 4608) x 2 =
     * 16384 B: 8541184 / 5.34e11 s. */
    assert_rel(q4.hbm_s, 8541184.0 / 5.34e11, 1e-9);
    /* The LM head reads the same fp16 rows either way. */
    assert_rel(head4, head16, TOL);
    /* The step: the linear layers' weights at 0.515625 / 2 = 25.8 % of fp16's, the LM head
     * whole: 4454854656 / 14140829696 = 0.31503 of the weight bytes; the step's activations
     * (A, about 5 MB at batch 1, the same in both) move the HBM-time ratio (4454854656 + A) /
     * (14140829696 + A) by under 0.0003: in [0.3145, 0.3160], far from the 0.258 of the
     * linear layers alone. */
    assert_in_range((long)(1e4 * h4 / h16), 3145, 3160);
    /* The dequantisation (a10 dequant_rate 1.95e12 conversions/s): 16515072 weights, one M tile:
     * 16515072 / 1.95e12 s more compute than fp16's QKV GEMV. */
    assert_rel(q4.compute_s - q16.compute_s, 16515072.0 / 1.95e12, 1e-9);
}

/* A scenario the checks refuse, with the key named. */
static void refused(const char *const *ov, size_t n, const char *path, const char *text)
{
    pm_scenario s;
    pm_error err;
    const pm_load_opts opts = {PM_TEST_DATA_DIR, ov, n};
    pm_status st = pm_scenario_load("llama70b-h100", &opts, &s, &err);
    if (st == PM_OK) {
        pm_scenario_release(&s);
        fail_msg("expected %s to be refused", path);
    }
    assert_non_null(strstr(err.path, path));
    assert_non_null(strstr(err.message, text));
}

static void test_refusals(void **state)
{
    (void)state;
    const char *act[] = {"workload.weight_dtype=int4", "workload.act_dtype=int4"};
    refused(act, 2, "$.workload.act_dtype", "int4 as activations is not modelled");
    const char *kv[] = {"workload.weight_dtype=int4", "workload.kv_dtype=int4"};
    refused(kv, 2, "$.workload.kv_dtype", "int4 as a KV cache is not modelled");
    const char *ar[] = {"workload.weight_dtype=int4", "workload.allreduce_dtype=int4"};
    refused(ar, 2, "$.workload.allreduce_dtype", "int4 as an allreduce payload");
    const char *w4a8[] = {"workload.weight_dtype=int4", "workload.act_dtype=int8"};
    refused(w4a8, 2, "$.workload.act_dtype", "only W4A16");
    const char *group[] = {"workload.weight_dtype=bf16", "workload.weight_group_size=64"};
    refused(group, 2, "$.workload.weight_group_size", "it would change nothing");
    const char *zero[] = {"workload.weight_dtype=fp8", "workload.weight_zero_point=true"};
    refused(zero, 2, "$.workload.weight_zero_point", "it would change nothing");
    /* A chip that states no conversion rate (the 910B; the H100 with its rate at 0) would
     * convert weight-only weights for free: int4 and W8A16 refused at the key. */
    const char *no_rate[] = {"accelerator=ascend-910b", "workload.weight_dtype=int4",
                             "workload.act_dtype=bf16"};
    refused(no_rate, 3, "$.accelerator.dequant_rate",
            "int4 weights in bf16 GEMMs are converted inside each GEMM at the accelerator's "
            "dequant_rate_<unit>");
    const char *w8a16[] = {"accelerator.dequant_rate_TOPS=0", "workload.weight_dtype=int8",
                           "workload.act_dtype=bf16"};
    refused(w8a16, 3, "$.accelerator.dequant_rate", "int8 weights in bf16 GEMMs");
    /* Passing: int4 weights with bf16 activations and a stated group. */
    const char *ok[] = {"workload.weight_dtype=int4", "workload.act_dtype=bf16",
                        "workload.weight_group_size=64", "workload.weight_zero_point=true"};
    pm_scenario s = pm_test_load("llama70b-h100", ok, ARRAY_LEN(ok));
    assert_int_equal(s.workload.weight_group_size, 64);
    assert_true(s.workload.weight_zero_point);
    pm_scenario_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weight_elem_bytes),
        cmocka_unit_test(test_footprint),
        cmocka_unit_test(test_decode_step_against_fp16),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
