/*
 * test_disagg.c - disaggregated prefill and decode (pm_disagg_compute, pm_kv_transfer_time,
 * pm_disagg_codesign): the KV bytes of a request for grouped-query and latent attention and
 * the transfer's times (whole, layer-streamed, shared) worked out by hand, the instance ratio
 * against its definition, the property that an ideal link and equal pools decode no slower
 * than the co-located deployment, and what is refused (with the key named).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

static pm_scenario load(const char *name, const char *const *ov, size_t n)
{
    pm_scenario s = pm_test_load(name, ov, n);
    pm_scenario_release(&s);
    return s;
}

static pm_disagg_workload workload(int64_t isl, int64_t osl)
{
    pm_disagg_workload w = {0};
    w.input_tokens = isl;
    w.output_tokens = osl;
    w.max_instances = 64;
    w.prefill_max_load_frac = 0.9;
    w.link = (pm_disagg_link){25e9, 50e-6, false};
    return w;
}

/* Llama-3-70B (80 layers, 8 KV heads of 128) in bf16: 80 x 2 x 8 x 128 x 2 bytes = 327,680
 * bytes a position, 327.68 MB for 1000 positions; each of the 8 H100s sends an eighth. */
static void test_kv_bytes_of_a_gqa_request(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b-h100", NULL, 0);
    pm_disagg_workload w = workload(1000, 100);
    w.decode_concurrency = 8;
    pm_disagg_result r;
    assert_int_equal(pm_disagg_compute(&s, &s, &w, &r, NULL), PM_OK);
    assert_rel(r.kv_bytes_per_request, 80.0 * 2 * 8 * 128 * 2 * 1000, 1e-12);
    assert_rel(r.transfer_bytes_per_device, 80.0 * 2 * 8 * 128 * 2 * 1000 / 8, 1e-12);
}

/* DeepSeek-V3's latent cache (61 layers, kv_lora_rank 512 + rope 64, bf16): 61 x 576 x 2 =
 * 70,272 bytes a position whatever the split, 70.272 MB for 1000 positions. */
static void test_kv_bytes_of_an_mla_request(void **state)
{
    (void)state;
    const pm_scenario s = load("deepseek-v3-h200", NULL, 0);
    assert_int_equal(s.model.kv_lora_rank, 512);
    assert_int_equal(s.model.qk_rope_head_dim, 64);
    pm_disagg_workload w = workload(1000, 100);
    w.decode_concurrency = 4;
    pm_disagg_result r;
    pm_error err;
    assert_int_equal(pm_disagg_compute(&s, &s, &w, &r, &err), PM_OK);
    assert_rel(r.kv_bytes_per_request, 61.0 * 576 * 2 * 1000, 1e-12);
}

/* 1e8 bytes over 25 GB/s with alpha 50 us alone: 50 us + 4 ms. */
static void test_transfer_whole_alone(void **state)
{
    (void)state;
    pm_kv_transfer t = {1e8, 25e9, 50e-6, 0.0, 0.5, 80, false};
    double c;
    assert_rel(pm_kv_transfer_time(&t, &c), 4.05e-3, 1e-12);
    assert_rel(c, 1.0, 0.0);
    /* 100 requests/s: the link 40 % busy, 100 x 50e-6 / 0.6 < 1 transfer in flight: alone. */
    t.rate_per_s = 100.0;
    assert_rel(pm_kv_transfer_time(&t, &c), 4.05e-3, 1e-12);
}

/* Shared: alpha 10 ms, 200 requests/s of 1e8 bytes on 25 GB/s (80 % busy): c = 200 x 0.01 /
 * 0.2 = 10 in flight, X = 1e8 x 10 / 25e9 = 40 ms, whole 50 ms. Layer-streamed over 80 layers
 * behind a 0.5 s prefill: one layer's share exposed, 10 ms + 0.5 ms; behind a 10 ms prefill
 * the link is the bottleneck: 10 ms + 40 ms - 10 ms x 79/80 = 40.125 ms. At 250 requests/s the
 * link is full: no finite time. */
static void test_transfer_shared_and_streamed(void **state)
{
    (void)state;
    pm_kv_transfer t = {1e8, 25e9, 10e-3, 200.0, 0.5, 80, false};
    double c;
    assert_rel(pm_kv_transfer_time(&t, &c), 0.05, 1e-12);
    assert_rel(c, 10.0, 1e-12);
    t.layer_streamed = true;
    assert_rel(pm_kv_transfer_time(&t, NULL), 0.0105, 1e-12);
    t.prefill_s = 0.01;
    assert_rel(pm_kv_transfer_time(&t, NULL), 0.040125, 1e-12);
    t.rate_per_s = 250.0;
    assert_true(isinf(pm_kv_transfer_time(&t, &c)));
}

/* The deployment's transfer and TTFT from their parts (M/D/1 at the prefill instances' load). */
static void test_ttft_is_prefill_queue_and_transfer(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b-h100", NULL, 0);
    pm_disagg_workload w = workload(2048, 256);
    w.decode_concurrency = 32;
    w.request_rate_per_s = 1.0;
    pm_disagg_result r;
    assert_int_equal(pm_disagg_compute(&s, &s, &w, &r, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_disagg_mode *x = &r.modes[m];
        const double lambda = 1.0 / x->prefill_instances, D = x->prefill_s;
        assert_rel(x->prefill_load_frac, lambda * D, 1e-12);
        assert_rel(x->queue_s, lambda * D * D / (2.0 * (1.0 - lambda * D)), 1e-12);
        /* 2048 x 327,680 / 8 bytes each device, alone on its link (whole). */
        assert_rel(x->transfer_s, 50e-6 + 2048.0 * 327680 / 8 / 25e9, 1e-9);
        assert_rel(x->ttft_s, x->prefill_s + x->queue_s + x->transfer_s, 1e-12);
        assert_rel(x->requests_per_s, 1.0, 0.0);
        /* The decode instances hold what Little's law gives at their share of the rate:
         * n = lambda_d (output - 1) t(n), below the full load of 32. */
        const double lambda_d = 1.0 / x->decode_instances;
        assert_rel(x->decode_in_flight, lambda_d * 255.0 * x->tpot_s, 1e-6);
        assert_true(x->decode_in_flight < 32.0);
    }
}

/* The defaults one rule gives the CLI and the module: the prefill scenario's prompt and decode
 * steps where 0, its cluster's inter-node link where the link is NaN (NDR: 400 Gb/s = 50 GB/s,
 * 10 us), else inference-sim's 25 GB/s and 50 us; what is given is kept. */
static void test_workload_defaults(void **state)
{
    (void)state;
    const char *const ndr[] = {"cluster=hgx-h100-ib-ndr"};
    const pm_scenario plain = load("llama70b-h100", NULL, 0), nic = load("llama70b-h100", ndr, 1);
    pm_disagg_workload w = workload(0, 0);
    w.link = (pm_disagg_link){NAN, NAN, true};
    pm_disagg_workload_defaults(&plain, &w);
    assert_int_equal(w.input_tokens, pm_workload_prompt_tokens(&plain.workload));
    assert_int_equal(w.output_tokens, pm_workload_decode_steps(&plain.workload));
    assert_rel(w.link.bandwidth_bytes_per_s, 25e9, 0.0);
    assert_rel(w.link.latency_s, 50e-6, 0.0);
    w = workload(100, 7);
    w.link = (pm_disagg_link){NAN, 2e-6, false};
    pm_disagg_workload_defaults(&nic, &w);
    assert_int_equal(w.input_tokens, 100);
    assert_int_equal(w.output_tokens, 7);
    assert_rel(w.link.bandwidth_bytes_per_s, 50e9, 1e-15);
    assert_rel(w.link.latency_s, 2e-6, 0.0);
    w.link.latency_s = NAN;
    pm_disagg_workload_defaults(&nic, &w);
    assert_rel(w.link.latency_s, 10e-6, 1e-15);
}

/* Rate matching against its definition: at a target rate the fewest instances of each pool
 * (ceil(rate / R)); without one, the counts up to the bound maximising min(x R_p, y R_d) /
 * (x g_p + y g_d), checked by trying them all. */
static void test_rate_matching_ratio(void **state)
{
    (void)state;
    const char *const ov[] = {"workload=decode-bf16"};
    const pm_scenario p = load("llama70b-h100", NULL, 0);
    const pm_scenario d = load("llama70b", ov, 1);
    pm_disagg_workload w = workload(2048, 512);
    w.decode_concurrency = 64;
    w.max_instances = 24;
    pm_disagg_result r;
    assert_int_equal(pm_disagg_compute(&p, &d, &w, &r, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_disagg_mode *x = &r.modes[m];
        const double Rp = x->prefill_requests_per_s, Rd = x->decode_requests_per_s;
        assert_rel(Rp, 0.9 / x->prefill_s, 1e-12);
        double best = 0.0;
        for (int i = 1; i <= 24; i++)
            for (int j = 1; j <= 24; j++) {
                const double v = fmin(i * Rp, j * Rd) / (i * 8.0 + j * 4.0);
                best = v > best ? v : best;
            }
        assert_rel(x->requests_per_s / x->devices, best, 1e-12);
        assert_rel(x->devices, x->prefill_instances * 8.0 + x->decode_instances * 4.0, 0.0);
    }
    w.request_rate_per_s = 3.0;
    assert_int_equal(pm_disagg_compute(&p, &d, &w, &r, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_disagg_mode *x = &r.modes[m];
        assert_int_equal(x->prefill_instances, (int)ceil(3.0 / x->prefill_requests_per_s));
        assert_int_equal(x->decode_instances, (int)ceil(3.0 / x->decode_requests_per_s));
        assert_false(x->saturated);
    }
    /* Two sequences a decode instance: one serves far fewer requests/s than a prefill
     * instance, more than 24 of them would match one, so the ratio is held to the bound (one
     * prefill instance, 24 decode instances: the brute force above); a ratio outside it (24
     * prefill instances, one decode instance) serves a 24th as much per device. */
    w.request_rate_per_s = 0.0;
    w.decode_concurrency = 2;
    assert_int_equal(pm_disagg_compute(&p, &d, &w, &r, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_disagg_mode *x = &r.modes[m];
        const double Rp = x->prefill_requests_per_s, Rd = x->decode_requests_per_s;
        assert_true(Rp > 24.0 * Rd);
        assert_int_equal(x->prefill_instances, 1);
        assert_int_equal(x->decode_instances, 24);
        assert_rel(x->requests_per_s / x->devices, 24.0 * Rd / (8.0 + 24.0 * 4.0), 1e-12);
    }
    /* A link slower than the prefill: 2048 x 327,680 / 8 = 83,886,080 bytes a device at 0.5
     * GB/s carry 5.96 requests/s, fewer than a prefill instance's 0.9 / D (about 10), so a
     * prefill instance serves 0.9 of the link's and its transfers keep up (finite TTFT). */
    w.decode_concurrency = 64;
    w.link.bandwidth_bytes_per_s = 0.5e9;
    assert_int_equal(pm_disagg_compute(&p, &d, &w, &r, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_disagg_mode *x = &r.modes[m];
        assert_true(0.5e9 / 83886080.0 < 1.0 / x->prefill_s);
        assert_rel(x->prefill_requests_per_s, 0.9 * 0.5e9 / 83886080.0, 1e-12);
        assert_false(x->saturated);
        assert_true(isfinite(x->ttft_s));
        assert_true(x->requests_per_s / x->prefill_instances <=
                    0.9 * 0.5e9 / 83886080.0 * (1 + 1e-12));
    }
    w.link.bandwidth_bytes_per_s = 25e9;
    /* Beyond what 24 instances of a pool serve: saturated, latencies NaN. */
    w.request_rate_per_s = 1e4;
    assert_int_equal(pm_disagg_compute(&p, &d, &w, &r, NULL), PM_OK);
    assert_true(r.modes[PM_MODE_PRESERVE].saturated);
    assert_true(isnan(r.modes[PM_MODE_PRESERVE].ttft_s));
}

/* With an ideal link and the same scenario in both pools, the deployment decodes no slower
 * than the co-located one on the same devices at the same sequences in flight per instance
 * (one prefill and one decode instance against two co-located instances, each at concurrency
 * N): the co-located steps carry the prompts' chunks too. The transfer costs nothing. (At the
 * same request rate instead, a lightly loaded deployment can decode a little slower: its decode
 * instance holds all the sequences the two co-located instances share.) */
static void test_ideal_link_equal_pools_no_slower_than_colocated(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b-h100", NULL, 0);
    pm_disagg_workload w = workload(2048, 256);
    w.link = (pm_disagg_link){INFINITY, 0.0, true};
    w.prefill_instances = 1;
    w.decode_instances = 1;
    const double conc[] = {1.0, 8.0, 64.0};
    for (size_t k = 0; k < 3; k++) {
        w.decode_concurrency = conc[k];
        pm_disagg_result r;
        assert_int_equal(pm_disagg_compute(&s, &s, &w, &r, NULL), PM_OK);
        pm_serve_workload sw = {2048, 256, conc[k], 2048, PM_SERVE_DECODE_FIRST, 0, 0,
                                PM_SERVE_STAGGERED, 0.0, 0, {{0}}};
        pm_serve_result co;
        assert_int_equal(pm_serve_compute(&s, &sw, &co, NULL), PM_OK);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            assert_false(r.modes[m].saturated);
            assert_rel(r.modes[m].transfer_s, 0.0, 0.0);
            assert_rel(r.modes[m].devices, 16.0, 0.0);
            assert_true(r.modes[m].tpot_s <= co.modes[m].tpot_s);
        }
    }
}

/* Refusals name the key: pools of different models, a pool whose HBM does not hold the model,
 * a decode concurrency above what the HBM holds, KV datatypes that differ. */
/* The co-located deployment beside a disaggregated one (pm_disagg_colocated): pm_serve_compute
 * of the workload's lengths and limits at the concurrency, decode-first, staggered, the chunk
 * given (0: 2048), raised to concurrency + 1 when it holds no prompt token beside the step's
 * decodes; its figures NaN where there is no deployment or its cache does not fit. */
static void test_colocated_is_the_served_deployment(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b-h100", NULL, 0);
    pm_disagg_workload w = workload(2048, 256);
    w.tpot_limit_s = 0.05;
    const int64_t chunks[][2] = {{0, 2048}, {512, 512}, {8, 17}, {17, 17}};
    for (size_t i = 0; i < PM_ARRAY_LEN(chunks); i++) {
        pm_serve_result co, want;
        assert_int_equal(pm_disagg_colocated(&s, &w, 16, chunks[i][0], &co, NULL), PM_OK);
        const pm_serve_workload sw = {2048, 256, 16, chunks[i][1], PM_SERVE_DECODE_FIRST, 0.0,
                                      0.05, PM_SERVE_STAGGERED, 0.0, 0, {{0}}};
        assert_int_equal(pm_serve_compute(&s, &sw, &want, NULL), PM_OK);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            double v[PM_DISAGG_COLOCATED_FIELDS];
            pm_disagg_colocated_values(&co, (pm_mode)m, v);
            const pm_serve_mode *x = &want.modes[m];
            const double expect[] = {x->tokens_per_s_per_device, x->tokens_per_s_per_user,
                                     x->tokens_per_s_per_mm2, x->ttft_s, x->tpot_s};
            assert_memory_equal(v, expect, sizeof expect);
        }
    }
    assert_string_equal(pm_disagg_colocated_field_name(0), "tokens_per_s_per_device");
    assert_null(pm_disagg_colocated_field_name(PM_DISAGG_COLOCATED_FIELDS));
    double v[PM_DISAGG_COLOCATED_FIELDS];
    pm_disagg_colocated_values(NULL, PM_MODE_PRESERVE, v);
    for (int k = 0; k < PM_DISAGG_COLOCATED_FIELDS; k++)
        assert_true(isnan(v[k]));
    pm_serve_result co;
    pm_error err;
    assert_int_equal(pm_disagg_colocated(&s, &w, 16, -1, &co, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "chunk");
    co.fits_hbm = false; /* a cache past the HBM: no deployment */
    pm_disagg_colocated_values(&co, PM_MODE_SERIAL, v);
    assert_true(isnan(v[0]));
}

static void test_refusals_name_the_key(void **state)
{
    (void)state;
    const pm_scenario big = load("llama70b-h100", NULL, 0);
    const pm_scenario small = load("llama8b", NULL, 0);
    pm_disagg_workload w = workload(1024, 128);
    pm_disagg_result r;
    pm_error err;
    assert_int_equal(pm_disagg_compute(&big, &small, &w, &r, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "decode.model");
    const char *const tiny[] = {"cluster.devices=1"};
    const pm_scenario one = load("llama70b-h100", tiny, 1);
    assert_int_equal(pm_disagg_compute(&one, &big, &w, &r, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "prefill.accelerator.hbm_capacity_GiB");
    assert_int_equal(pm_disagg_compute(&big, &one, &w, &r, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "decode.accelerator.hbm_capacity_GiB");
    w.decode_concurrency = 1e8;
    assert_int_equal(pm_disagg_compute(&big, &big, &w, &r, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "decode_concurrency");
    const char *const int8[] = {"workload=paper-default"};
    const pm_scenario q = load("llama70b-h100", int8, 1);
    w.decode_concurrency = 0;
    assert_int_equal(pm_disagg_compute(&big, &q, &w, &r, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "decode.workload.kv_dtype");
    w.output_tokens = 1;
    assert_int_equal(pm_disagg_compute(&big, &big, &w, &r, &err), PM_ERR_INVALID_ARG);
    w.output_tokens = 128;
    w.link.bandwidth_bytes_per_s = 0;
    assert_int_equal(pm_disagg_compute(&big, &big, &w, &r, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "link.bandwidth_bytes_per_s");
}

/* Co-design: each point is the deployment with that pool's L2 changed (the other pool's
 * figures unchanged), and the best is the point of the most preserve density of the pool. */
static void test_codesign_best_is_the_pools_densest(void **state)
{
    (void)state;
    const char *const ov[] = {"workload=decode-bf16"};
    const pm_scenario p = load("llama70b-h100", NULL, 0);
    const pm_scenario d = load("llama70b", ov, 1);
    pm_disagg_workload w = workload(2048, 512);
    w.decode_concurrency = 64;
    const double l2[] = {8.0 * 1048576, 32.0 * 1048576, 128.0 * 1048576};
    pm_disagg_codesign_point pts[3];
    for (int pool = 0; pool < PM_DISAGG_POOL_COUNT; pool++) {
        int best = -2;
        assert_int_equal(pm_disagg_codesign(&p, &d, &w, (pm_disagg_pool)pool, PM_AXIS_L2, l2, 3,
                                            pts, &best, NULL),
                         PM_OK);
        assert_in_range(best, 0, 2);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(pts[i].status, PM_OK);
            const pm_disagg_mode *x = &pts[i].result.modes[PM_MODE_PRESERVE];
            const pm_disagg_mode *b = &pts[best].result.modes[PM_MODE_PRESERVE];
            const double v = pool ? x->decode_tokens_per_s_per_mm2 : x->prefill_tokens_per_s_per_mm2;
            const double bv = pool ? b->decode_tokens_per_s_per_mm2 : b->prefill_tokens_per_s_per_mm2;
            assert_true(v <= bv);
            /* The other pool's chip is untouched: its die is the same at every point. */
            assert_rel(pool ? pts[i].result.prefill_die_mm2 : pts[i].result.decode_die_mm2,
                       pool ? pts[0].result.prefill_die_mm2 : pts[0].result.decode_die_mm2, 0.0);
        }
        /* A larger L2 makes a larger die of the swept pool. */
        assert_true((pool ? pts[2].result.decode_die_mm2 : pts[2].result.prefill_die_mm2) >
                    (pool ? pts[0].result.decode_die_mm2 : pts[0].result.prefill_die_mm2));
    }
    int best;
    assert_int_equal(pm_disagg_codesign(&p, &d, &w, PM_DISAGG_PREFILL, PM_AXIS_DEVICES, l2, 3,
                                        pts, &best, NULL),
                     PM_ERR_INVALID_ARG);
}

/* ---------------------------------------------------------------- speculative decoding */

/* Both pools speculate with one MTP layer drafting k = 2 at acceptance 0.5 (Llama-3-70B given
 * one, a what-if: its checkpoint has none). */
static const char *const mtp2[] = {"speculative.draft_tokens=2", "speculative.acceptance=0.5",
                                   "speculative.method=mtp", "speculative.mtp_layers=1",
                                   "speculative.source=test", "model.num_nextn_predict_layers=1"};

/* k = 0 (the block present, nothing drafted) is today's deployment bit for bit: every figure
 * of every mode, the cache, the fit. */
static void test_spec_k0_is_plain_disagg(void **state)
{
    (void)state;
    const char *const k0[] = {"speculative.draft_tokens=0", "speculative.acceptance=0.5",
                              "speculative.method=mtp", "speculative.mtp_layers=1",
                              "speculative.source=test", "model.num_nextn_predict_layers=1"};
    const pm_scenario plain = load("llama70b-h100", NULL, 0);
    const pm_scenario zero = load("llama70b-h100", k0, 6);
    pm_disagg_workload w = workload(1024, 129);
    const double rates[] = {0.0, 0.5};
    for (int i = 0; i < 2; i++) {
        w.request_rate_per_s = rates[i];
        pm_disagg_result a, b;
        assert_int_equal(pm_disagg_compute(&plain, &plain, &w, &a, NULL), PM_OK);
        assert_int_equal(pm_disagg_compute(&zero, &zero, &w, &b, NULL), PM_OK);
        /* every column (doubles: no padding to compare) and the fields beside them */
        double va[256], vb[256];
        const size_t n = pm_disagg_point_values(&a, va, 256);
        assert_int_equal(pm_disagg_point_values(&b, vb, 256), n);
        assert_memory_equal(va, vb, n * sizeof va[0]);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            assert_memory_equal(&a.modes[m].decode_step_s, &b.modes[m].decode_step_s,
                                sizeof(double));
            assert_memory_equal(&a.modes[m].decode_requests_per_s,
                                &b.modes[m].decode_requests_per_s, sizeof(double));
        }
    }
}

/* The hand golden: E = 1 + 0.5 + 0.5^2 = 1.75 tokens a verify step. A decode step at N = 16
 * sequences is the target's verify step (3 query tokens a sequence) plus the draft's: its
 * first forward and k - 1 = 1 more step, each of 16 sequences on the MTP layer (the target's
 * layer class, one layer): T = t_verify + 2 t_mtp. A request's 128 decode tokens take
 * 128 / 1.75 = 73.14 steps: one decode instance serves 16 / (73.14 T) requests/s and TPOT is
 * T / 1.75. The cache sent: (80 + 1 MTP) layers x 2 x 8 KV heads x 128 x 2 bytes = 331,776
 * bytes a position; 1024 positions. */
static void test_spec_decode_pool_golden(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b-h100", mtp2, 6);
    pm_disagg_workload w = workload(1024, 129);
    w.decode_concurrency = 16;
    w.prefill_instances = 8; /* the decode instance binds */
    w.decode_instances = 1;
    pm_disagg_result r;
    pm_error err;
    assert_int_equal(pm_disagg_compute(&s, &s, &w, &r, &err), PM_OK);
    assert_rel(r.kv_bytes_per_request, 81.0 * 2 * 8 * 128 * 2 * 1024, 1e-12);
    pm_scenario plain = s, mtp = s;
    memset(&plain.spec, 0, sizeof plain.spec);
    memset(&mtp.spec, 0, sizeof mtp.spec);
    mtp.model.layers = 1;
    /* The mean decode context: 1024 + (129 - 2) / 2 = 1087.5, rounded half away: 1088. */
    const pm_mixed_step verify = {.decode_sequences = 16, .decode_context = 1088,
                                  .decode_tokens_per_sequence = 3};
    const pm_mixed_step draft = {.decode_sequences = 16, .decode_context = 1088};
    const double E = 1.75, steps = 128.0 / E;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double tv, td;
        assert_int_equal(pm_mixed_step_time(&plain, (pm_mode)m, &verify, &tv, NULL), PM_OK);
        assert_int_equal(pm_mixed_step_time(&mtp, (pm_mode)m, &draft, &td, NULL), PM_OK);
        const double T = tv + 2.0 * td;
        const pm_disagg_mode *x = &r.modes[m];
        assert_rel(x->decode_step_s, T, 1e-12);
        assert_rel(x->tpot_s, T / E, 1e-12);
        assert_rel(x->decode_requests_per_s, 16.0 / (steps * T), 1e-12);
        assert_true(x->prefill_instances * x->prefill_requests_per_s > x->decode_requests_per_s);
        assert_rel(x->requests_per_s, x->decode_requests_per_s, 1e-12);
        assert_rel(x->tokens_per_s_per_device, x->requests_per_s * 129.0 / (9 * 8), 1e-12);
        assert_rel(x->e2e_s, x->ttft_s + 128.0 * T / E, 1e-12);
    }
}

/* Speculation widens the step but emits E tokens a step: at acceptance 0.9 and k = 2 the
 * decode pool's tokens per step (2.71) outrun the step's growth, so TPOT falls; the draft's
 * cache and weights leave the decode HBM room for fewer sequences. */
static void test_spec_decode_pool_properties(void **state)
{
    (void)state;
    const char *const hi[] = {"speculative.draft_tokens=2", "speculative.acceptance=0.9",
                              "speculative.method=mtp", "speculative.mtp_layers=1",
                              "speculative.source=test", "model.num_nextn_predict_layers=1"};
    const pm_scenario plain = load("llama70b-h100", NULL, 0);
    const pm_scenario sp = load("llama70b-h100", hi, 6);
    pm_disagg_workload w = workload(1024, 129);
    pm_disagg_result a, b;
    assert_int_equal(pm_disagg_compute(&plain, &plain, &w, &a, NULL), PM_OK);
    assert_int_equal(pm_disagg_compute(&sp, &sp, &w, &b, NULL), PM_OK);
    assert_true(b.decode_max_concurrency < a.decode_max_concurrency);
    w.decode_concurrency = 16;
    assert_int_equal(pm_disagg_compute(&plain, &plain, &w, &a, NULL), PM_OK);
    assert_int_equal(pm_disagg_compute(&sp, &sp, &w, &b, NULL), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(b.modes[m].decode_step_s > a.modes[m].decode_step_s);
        assert_true(b.modes[m].tpot_s < a.modes[m].tpot_s);
        /* the prefill pool computes the draft's cache of the prompt too */
        assert_true(b.modes[m].prefill_s > a.modes[m].prefill_s);
    }
}

/* What cannot be represented is refused at the key: a decode pool speculating beside a prefill
 * pool that does not (who computes the draft's cache of the prompt?), and pools drafting with
 * different drafts. */
static void test_spec_refusals(void **state)
{
    (void)state;
    const pm_scenario plain = load("llama70b-h100", NULL, 0);
    const pm_scenario sp = load("llama70b-h100", mtp2, 6);
    const char *const two[] = {"speculative.draft_tokens=2", "speculative.acceptance=0.5",
                               "speculative.method=mtp", "speculative.mtp_layers=2",
                               "speculative.source=test", "model.num_nextn_predict_layers=2"};
    const pm_scenario sp2 = load("llama70b-h100", two, 6);
    pm_disagg_workload w = workload(1024, 129);
    pm_disagg_result r;
    pm_error err;
    assert_int_equal(pm_disagg_compute(&plain, &sp, &w, &r, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "prefill.speculative");
    assert_int_equal(pm_disagg_compute(&sp, &plain, &w, &r, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "prefill.speculative");
    assert_int_equal(pm_disagg_compute(&sp2, &sp, &w, &r, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "prefill.speculative");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kv_bytes_of_a_gqa_request),
        cmocka_unit_test(test_kv_bytes_of_an_mla_request),
        cmocka_unit_test(test_transfer_whole_alone),
        cmocka_unit_test(test_transfer_shared_and_streamed),
        cmocka_unit_test(test_ttft_is_prefill_queue_and_transfer),
        cmocka_unit_test(test_workload_defaults),
        cmocka_unit_test(test_rate_matching_ratio),
        cmocka_unit_test(test_ideal_link_equal_pools_no_slower_than_colocated),
        cmocka_unit_test(test_colocated_is_the_served_deployment),
        cmocka_unit_test(test_refusals_name_the_key),
        cmocka_unit_test(test_codesign_best_is_the_pools_densest),
        cmocka_unit_test(test_spec_k0_is_plain_disagg),
        cmocka_unit_test(test_spec_decode_pool_golden),
        cmocka_unit_test(test_spec_decode_pool_properties),
        cmocka_unit_test(test_spec_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
