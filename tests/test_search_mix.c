/*
 * test_search_mix.c - the search over a weighted mix (pm_search_mix_run): one member is its own
 * search point by point and over the whole axis; two members join by the shares' weighted
 * harmonic mean, computed here from each member's own search at the point; the shares are
 * normalised; a member that meets none of its limits leaves the point without a mix and is
 * named; pipeline stages in the members' space (one member is its own search with the same pp
 * list, row for row; stages that win for one member of two); disaggregated deployments in the
 * members' space (one member is its own search --disagg, layout and all; a disaggregated best for
 * one member of two and a co-located one for the other, joined as the shares say); the refusals.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "testutil.h"

static pm_scenario load(const char *name)
{
    pm_scenario s = pm_test_load(name, NULL, 0);
    pm_scenario_release(&s);
    return s;
}

/* A small space: tp 1 and 2, two chunk budgets, four concurrencies, decode-first, the given
 * lengths. */
static pm_search_spec space(int64_t input, int64_t output)
{
    pm_search_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.workload.input_tokens = input;
    sp.workload.output_tokens = output;
    sp.workload.concurrency = 1;
    sp.workload.chunk_budget = 1;
    sp.tp[0] = 1;
    sp.tp[1] = 2;
    sp.n_tp = 2;
    sp.chunk[0] = 512;
    sp.chunk[1] = 2048;
    sp.n_chunk = 2;
    const double conc[] = {1, 4, 16, 64};
    for (int i = 0; i < 4; i++)
        sp.concurrency[i] = conc[i];
    sp.n_concurrency = 4;
    sp.threads = 1;
    return sp;
}

/* The L2 capacities of the mix's one axis (bytes). */
static double l2_values[] = {16.0 * 1048576, 96.0 * 1048576, 192.0 * 1048576};

static pm_axis l2_axis(void)
{
    return (pm_axis){.kind = PM_AXIS_L2, .values = l2_values, .n_values = 3};
}

/* Member sp of s searched alone at L2 capacity v (its one hardware point). */
static pm_search_result alone_at(const pm_scenario *s, const pm_search_spec *sp, double v)
{
    pm_search_spec one = *sp;
    one.hw[0] = (pm_axis){.kind = PM_AXIS_L2, .values = &v, .n_values = 1};
    one.n_hw = 1;
    pm_search_result r;
    pm_error err;
    if (pm_search_run(s, &one, &r, &err) != PM_OK)
        fail_msg("pm_search_run: %s", err.message);
    return r;
}

/* Member sp of s searched alone at L2 capacity v: its best objective in mode m (NaN: none). */
static double alone(const pm_scenario *s, const pm_search_spec *sp, double v, int m)
{
    pm_search_result r = alone_at(s, sp, v);
    const double o = r.found[m] ? r.best[m].objective : NAN;
    pm_search_result_free(&r);
    return o;
}

static pm_search_mix_result run(const pm_search_mix *mix)
{
    pm_search_mix_result r;
    pm_error err;
    if (pm_search_mix_run(mix, &r, &err) != PM_OK)
        fail_msg("pm_search_mix_run: %s", err.message);
    return r;
}

/* One member with share 1 is its own search: at each point the member's best, and the mix's
 * best point that of the search over the whole axis. */
static void test_one_member(void **state)
{
    (void)state;
    const pm_scenario s = load("llama8b");
    pm_search_mix *mix = calloc(1, sizeof *mix);
    assert_non_null(mix);
    mix->member[0] = (pm_search_member){.scenario = &s, .spec = space(2048, 256), .share = 1.0};
    mix->n_members = 1;
    mix->hw[0] = l2_axis();
    mix->n_hw = 1;
    pm_search_mix_result r = run(mix);
    assert_int_equal(r.n_points, 3);
    for (size_t p = 0; p < 3; p++) {
        assert_rel(r.points[p].hw[0], l2_values[p], 0.0);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            assert_true(r.points[p].found[m]);
            assert_int_equal(r.points[p].missing[m], -1);
            const double o = alone(&s, &mix->member[0].spec, l2_values[p], m);
            assert_rel(r.points[p].objective[m], o, 0.0);
            assert_rel(r.members[p * PM_MODE_COUNT + (size_t)m].objective, o, 0.0);
        }
    }
    pm_search_spec whole = mix->member[0].spec;
    whole.hw[0] = l2_axis();
    whole.n_hw = 1;
    pm_search_result w;
    pm_error err;
    assert_int_equal(pm_search_run(&s, &whole, &w, &err), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(r.found[m]);
        assert_rel(r.points[r.best[m]].objective[m], w.best[m].objective, 0.0);
    }
    pm_search_result_free(&w);
    pm_search_mix_result_free(&r);
    free(mix);
}

/* Two models (Llama-3-8B on long prompts, Mistral-7B on short ones) on the 910B, shares 1 and
 * 3: at each point the mix is 1 / (0.25 / o_A + 0.75 / o_B), o_A and o_B each member's own
 * search there. By hand, o_A = 100 and o_B = 300 tokens/s per device would give
 * 1 / (0.0025 + 0.0025) = 200: a quarter of the tokens at 100 take as many devices as three
 * quarters at 300. Shares 2 and 6 give the same answer to the bit. */
static void test_harmonic_mean(void **state)
{
    (void)state;
    const pm_scenario a = load("llama8b"), b = load("mistral7b");
    pm_search_mix *mix = calloc(1, sizeof *mix);
    assert_non_null(mix);
    mix->member[0] = (pm_search_member){.scenario = &a, .spec = space(4096, 128), .share = 1.0};
    mix->member[1] = (pm_search_member){.scenario = &b, .spec = space(512, 512), .share = 3.0};
    mix->n_members = 2;
    mix->hw[0] = l2_axis();
    mix->n_hw = 1;
    pm_search_mix_result r = run(mix);
    size_t best[PM_MODE_COUNT] = {0};
    double top[PM_MODE_COUNT] = {0};
    for (size_t p = 0; p < 3; p++)
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            const double oa = alone(&a, &mix->member[0].spec, l2_values[p], m);
            const double ob = alone(&b, &mix->member[1].spec, l2_values[p], m);
            const double want = 1.0 / (0.25 / oa + 0.75 / ob);
            assert_true(r.points[p].found[m]);
            assert_rel(r.points[p].objective[m], want, 1e-12);
            /* lies between the two, nearer the larger share's */
            assert_true(r.points[p].objective[m] >= fmin(oa, ob) &&
                        r.points[p].objective[m] <= fmax(oa, ob));
            if (r.points[p].objective[m] > top[m]) {
                top[m] = r.points[p].objective[m];
                best[m] = p;
            }
        }
    for (int m = 0; m < PM_MODE_COUNT; m++)
        assert_int_equal(r.best[m], best[m]);
    mix->member[0].share = 2.0;
    mix->member[1].share = 6.0;
    pm_search_mix_result q = run(mix);
    for (size_t p = 0; p < 3; p++)
        for (int m = 0; m < PM_MODE_COUNT; m++)
            assert_rel(q.points[p].objective[m], r.points[p].objective[m], 0.0);
    pm_search_mix_result_free(&q);
    pm_search_mix_result_free(&r);
    free(mix);
}

/* A member's best at a TP over which its model does not split evenly is said, naming the
 * member (a single search's rule, pm_search_uneven_warning): Llama-3-8B's 32 query heads and
 * 8 KV heads over 3 devices leave 11 and 3 on the busiest; Mistral-7B's the same. Over TP 2,
 * nothing. */
static void test_warns_uneven_member(void **state)
{
    (void)state;
    const pm_scenario a = load("llama8b"), b = load("mistral7b");
    pm_search_mix *mix = calloc(1, sizeof *mix);
    assert_non_null(mix);
    for (int uneven = 0; uneven < 2; uneven++) {
        mix->member[0] = (pm_search_member){.scenario = &a, .spec = space(512, 128), .share = 1};
        mix->member[1] = (pm_search_member){.scenario = &b, .spec = space(512, 128), .share = 1};
        for (int i = 0; i < 2; i++) {
            mix->member[i].spec.tp[0] = uneven ? 3 : 2;
            mix->member[i].spec.n_tp = 1;
        }
        mix->n_members = 2;
        mix->hw[0] = l2_axis();
        mix->n_hw = 1;
        pm_search_mix_result r = run(mix);
        char note[512];
        size_t k = 0;
        while (pm_search_mix_warning(mix, &r, k, note, sizeof note)) {
            assert_non_null(strstr(note, "does not split evenly"));
            assert_non_null(strstr(note, k % 2 ? "member 2 (" : "member 1 (llama3-8b)"));
            assert_non_null(strstr(note, "11 query heads, 3 KV heads"));
            k++;
        }
        assert_int_equal(k, uneven ? 2 * PM_MODE_COUNT : 0);
        pm_search_mix_result_free(&r);
    }
    free(mix);
}

/* A member whose TPOT limit nothing meets leaves every point without a mix, and is named. */
static void test_member_short(void **state)
{
    (void)state;
    const pm_scenario a = load("llama8b"), b = load("mistral7b");
    pm_search_mix *mix = calloc(1, sizeof *mix);
    assert_non_null(mix);
    mix->member[0] = (pm_search_member){.scenario = &a, .spec = space(1024, 128), .share = 1.0};
    mix->member[1] = (pm_search_member){.scenario = &b, .spec = space(1024, 128), .share = 1.0};
    mix->member[1].spec.tpot_limit_s = 1e-6; /* no step is a microsecond */
    mix->n_members = 2;
    pm_search_mix_result r = run(mix);
    assert_int_equal(r.n_points, 1);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_false(r.found[m]);
        assert_false(r.points[0].found[m]);
        assert_int_equal(r.points[0].missing[m], 1);
        assert_true(isnan(r.points[0].objective[m]));
    }
    pm_search_mix_result_free(&r);
    free(mix);
}

/* The space of pipeline stages: Llama-3-70B-class members on H100s (nvlink4-nvswitch, one
 * 8-GPU node), TP 4 x PP 1 or 2 filling a budget of 8 devices (DP 2 or 1), one chunk budget,
 * three concurrencies, TPOT <= 100 ms, prompts of 2048 tokens and 256 out. */
static pm_search_spec stage_space(void)
{
    pm_search_spec sp = space(2048, 256);
    sp.tp[0] = 4;
    sp.n_tp = 1;
    sp.pp[0] = 1;
    sp.pp[1] = 2;
    sp.n_pp = 2;
    sp.device_budget = 8;
    sp.chunk[0] = 2048;
    sp.n_chunk = 1;
    const double conc[] = {16, 64, 256};
    for (int i = 0; i < 3; i++)
        sp.concurrency[i] = conc[i];
    sp.n_concurrency = 3;
    sp.tpot_limit_s = 0.100;
    return sp;
}

/* Candidate a is candidate b: the deployment (tp, pp, ep, dp), chunk, concurrency, place,
 * objective and every figure. */
static void same_candidate(const pm_search_candidate *a, const pm_search_candidate *b)
{
    assert_int_equal(a->tp, b->tp);
    assert_int_equal(a->pp, b->pp);
    assert_int_equal(a->ep, b->ep);
    assert_int_equal(a->dp, b->dp);
    assert_int_equal(a->chunk, b->chunk);
    assert_int_equal(a->group, b->group);
    assert_rel(a->concurrency, b->concurrency, 0.0);
    assert_rel(a->objective, b->objective, 0.0);
    assert_memory_equal(&a->figures.ttft_s, &b->figures.ttft_s,
                        offsetof(pm_serve_mode, meets_limits));
}

/* One member at share 1 with a pp list is that member's search with the same pp list, row for
 * row: at each L2 point the mix's member row is the search's best candidate per mode (its
 * stages, replicas, chunk, concurrency, figures) and what binds it, and the mix's objective its
 * objective. Llama-3-70B at TP 4 x PP 2 (DP 1) holds 256 sequences within 100 ms where TP 4 x
 * PP 1 (DP 2) stops at 64 (the next concurrency misses TPOT), so the rows have pp 2. */
static void test_one_member_stages(void **state)
{
    (void)state;
    const pm_scenario s = load("llama70b-h100");
    pm_search_mix *mix = calloc(1, sizeof *mix);
    assert_non_null(mix);
    mix->member[0] = (pm_search_member){.scenario = &s, .spec = stage_space(), .share = 1.0};
    mix->n_members = 1;
    static double l2[] = {16.0 * 1048576, 96.0 * 1048576};
    mix->hw[0] = (pm_axis){.kind = PM_AXIS_L2, .values = l2, .n_values = 2};
    mix->n_hw = 1;
    pm_search_mix_result r = run(mix);
    assert_int_equal(r.n_points, 2);
    int stages2 = 0;
    for (size_t p = 0; p < 2; p++) {
        pm_search_result w = alone_at(&s, &mix->member[0].spec, l2[p]);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            assert_true(w.found[m] && r.points[p].found[m]);
            const pm_search_candidate *k = &r.members[p * PM_MODE_COUNT + (size_t)m];
            same_candidate(k, &w.best[m]);
            assert_int_equal(r.binds[p * PM_MODE_COUNT + (size_t)m], w.binds[m]);
            assert_rel(r.points[p].objective[m], w.best[m].objective, 0.0);
            stages2 += k->pp == 2;
        }
        pm_search_result_free(&w);
    }
    assert_int_equal(stages2, 2 * PM_MODE_COUNT); /* pp 2 wins at both points, every mode */
    pm_search_mix_result_free(&r);
    free(mix);
}

/* Two members on H100s where stages win for one: Llama-3-70B (share 1) is best at TP 4 x PP 2
 * (as above), Llama-3-8B (share 3) at TP 4 x PP 1 x DP 2 (its cache fits one stage; two
 * stages' replica serves no more sequences on twice the devices). The mix is 1 / (0.25 / o_70B
 * + 0.75 / o_8B), each o the member's own search with the pp list; searched with pp {1} only,
 * Llama-3-8B's best is unchanged, Llama-3-70B's falls to its PP 1 best, and so does the mix. */
static void test_stages_win_for_one_member(void **state)
{
    (void)state;
    const char *ov[] = {"accelerator=h100-sxm", "cluster=nvlink4-nvswitch"};
    pm_scenario a = load("llama70b-h100"), b = pm_test_load("llama8b", ov, 2);
    pm_scenario_release(&b);
    pm_search_mix *mix = calloc(1, sizeof *mix);
    assert_non_null(mix);
    mix->member[0] = (pm_search_member){.scenario = &a, .spec = stage_space(), .share = 1.0};
    mix->member[1] = (pm_search_member){.scenario = &b, .spec = stage_space(), .share = 3.0};
    mix->n_members = 2;
    static double l2[] = {50.0 * 1048576}; /* the H100's own */
    mix->hw[0] = (pm_axis){.kind = PM_AXIS_L2, .values = l2, .n_values = 1};
    mix->n_hw = 1;
    pm_search_mix_result r = run(mix);
    pm_search_result ra = alone_at(&a, &mix->member[0].spec, l2[0]);
    pm_search_result rb = alone_at(&b, &mix->member[1].spec, l2[0]);
    mix->member[0].spec.n_pp = 1; /* pp {1} */
    mix->member[1].spec.n_pp = 1;
    pm_search_mix_result one = run(mix);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_search_candidate *ka = &r.members[(size_t)m];
        const pm_search_candidate *kb = &r.members[PM_MODE_COUNT + (size_t)m];
        same_candidate(ka, &ra.best[m]);
        same_candidate(kb, &rb.best[m]);
        assert_int_equal(ka->pp, 2);
        assert_int_equal(ka->dp, 1); /* 8 / (4 x 2) */
        assert_int_equal(kb->pp, 1);
        assert_int_equal(kb->dp, 2); /* 8 / 4 */
        const double want = 1.0 / (0.25 / ra.best[m].objective + 0.75 / rb.best[m].objective);
        assert_rel(r.points[0].objective[m], want, 1e-12);
        /* without stages: the 8B's row unchanged, the 70B's a PP 1 row of less objective */
        const pm_search_candidate *ua = &one.members[(size_t)m];
        same_candidate(&one.members[PM_MODE_COUNT + (size_t)m], kb);
        assert_int_equal(ua->pp, 1);
        assert_true(ua->objective < ka->objective);
        assert_true(one.points[0].objective[m] < r.points[0].objective[m]);
    }
    pm_search_result_free(&ra);
    pm_search_result_free(&rb);
    pm_search_mix_result_free(&one);
    pm_search_mix_result_free(&r);
    free(mix);
}

/* ---------------------------------------------------------------- disaggregated */

/* Llama-3-70B on H100 nodes joined by NDR InfiniBand (the pools' link: the cluster's inter-node
 * link), 16 devices, TP 4 or 8, chunk 2048, concurrencies 8 to 128, prompts of input tokens and
 * output out, disaggregated deployments in the space (a prefill instance loaded at most 0.9):
 * test_search.c's disaggregated space. */
static pm_search_spec disagg_space(int64_t input, int64_t output)
{
    pm_search_spec sp = space(input, output);
    sp.tp[0] = 4;
    sp.tp[1] = 8;
    sp.chunk[0] = 2048;
    sp.n_chunk = 1;
    const double conc[] = {8, 16, 32, 64, 128};
    for (int i = 0; i < 5; i++)
        sp.concurrency[i] = conc[i];
    sp.n_concurrency = 5;
    sp.device_budget = 16;
    sp.disagg = true;
    sp.disagg_link.layer_streamed = true;
    sp.disagg_max_load_frac = 0.9;
    return sp;
}

/* Candidate a is candidate b, and has b's layout: its pools (all 0: co-located). */
static void same_layout(const pm_search_candidate *a, const pm_search_candidate *b)
{
    same_candidate(a, b);
    assert_int_equal(a->prefill_instances, b->prefill_instances);
    assert_int_equal(a->prefill_tp, b->prefill_tp);
    assert_int_equal(a->decode_instances, b->decode_instances);
    assert_int_equal(a->decode_tp, b->decode_tp);
}

/* One member at share 1 searched with disagg is its own search --disagg: 8192-token prompts,
 * 256 out, TPOT <= 20 ms (test_search.c: a co-located step carrying a 2048-token chunk misses
 * it, the disaggregated deployment wins in every mode). At each L2 point (16 MiB and the
 * H100's 50 MiB) the member's row is the search's best, pools and all, and what binds it; the
 * mix's objective is its objective; the mix's best point is the search's over the whole axis,
 * with its layout. */
static void test_one_member_disagg(void **state)
{
    (void)state;
    const char *ov[] = {"cluster=hgx-h100-ib-ndr"};
    pm_scenario s = pm_test_load("llama70b-h100", ov, 1);
    pm_scenario_release(&s);
    pm_search_mix *mix = calloc(1, sizeof *mix);
    assert_non_null(mix);
    mix->member[0] =
        (pm_search_member){.scenario = &s, .spec = disagg_space(8192, 256), .share = 1.0};
    mix->member[0].spec.tpot_limit_s = 0.020;
    mix->n_members = 1;
    static double l2[] = {16.0 * 1048576, 50.0 * 1048576};
    mix->hw[0] = (pm_axis){.kind = PM_AXIS_L2, .values = l2, .n_values = 2};
    mix->n_hw = 1;
    pm_search_mix_result r = run(mix);
    assert_int_equal(r.n_points, 2);
    for (size_t p = 0; p < 2; p++) {
        pm_search_result w = alone_at(&s, &mix->member[0].spec, l2[p]);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            assert_true(w.found[m] && r.points[p].found[m]);
            const pm_search_candidate *k = &r.members[p * PM_MODE_COUNT + (size_t)m];
            same_layout(k, &w.best[m]);
            assert_true(k->prefill_instances > 0); /* disaggregated */
            assert_int_equal(r.binds[p * PM_MODE_COUNT + (size_t)m], w.binds[m]);
            /* the mix's 1 / (1 / o): two roundings, a few units in the last place */
            assert_rel(r.points[p].objective[m], w.best[m].objective, 1e-15);
        }
        pm_search_result_free(&w);
    }
    pm_search_spec whole = mix->member[0].spec;
    whole.hw[0] = mix->hw[0];
    whole.n_hw = 1;
    pm_search_result w;
    pm_error err;
    assert_int_equal(pm_search_run(&s, &whole, &w, &err), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(r.found[m]);
        assert_rel(r.points[r.best[m]].objective[m], w.best[m].objective, 1e-15);
        assert_rel(r.points[r.best[m]].hw[0], w.best[m].hw[0], 0.0);
        const pm_search_candidate *k = &r.members[r.best[m] * PM_MODE_COUNT + (size_t)m];
        assert_int_equal(k->prefill_instances, w.best[m].prefill_instances);
        assert_int_equal(k->decode_instances, w.best[m].decode_instances);
    }
    pm_search_result_free(&w);
    pm_search_mix_result_free(&r);
    free(mix);
}

/* Two members of Llama-3-70B on the same 16 H100s: A (share 1) on 8192-token prompts, 256 out,
 * TPOT <= 20 ms, whose best is disaggregated in every mode; B (share 3) on 2048 in and out
 * without a limit, whose best is co-located (test_search.c: the pools' fixed counts leave one
 * idle part of the time). The mix is 1 / (0.25 / o_A + 0.75 / o_B), o_A and o_B each member's
 * own search --disagg: by hand, o_A = 100 and o_B = 300 would give 200. Without --disagg, B's row
 * is unchanged and A's is co-located: the mix falls, or no point serves A. */
static void test_disagg_for_one_member(void **state)
{
    (void)state;
    const char *ov[] = {"cluster=hgx-h100-ib-ndr"};
    pm_scenario s = pm_test_load("llama70b-h100", ov, 1);
    pm_scenario_release(&s);
    pm_search_mix *mix = calloc(1, sizeof *mix);
    assert_non_null(mix);
    mix->member[0] =
        (pm_search_member){.scenario = &s, .spec = disagg_space(8192, 256), .share = 1.0};
    mix->member[0].spec.tpot_limit_s = 0.020;
    mix->member[1] =
        (pm_search_member){.scenario = &s, .spec = disagg_space(2048, 2048), .share = 3.0};
    mix->n_members = 2;
    pm_search_mix_result r = run(mix);
    assert_int_equal(r.n_points, 1);
    pm_search_result ra, rb;
    pm_error err;
    assert_int_equal(pm_search_run(&s, &mix->member[0].spec, &ra, &err), PM_OK);
    assert_int_equal(pm_search_run(&s, &mix->member[1].spec, &rb, &err), PM_OK);
    mix->member[0].spec.disagg = false;
    mix->member[1].spec.disagg = false;
    pm_search_mix_result plain = run(mix);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_search_candidate *ka = &r.members[(size_t)m];
        const pm_search_candidate *kb = &r.members[PM_MODE_COUNT + (size_t)m];
        same_layout(ka, &ra.best[m]);
        same_layout(kb, &rb.best[m]);
        assert_true(ka->prefill_instances > 0 && ka->decode_instances > 0);
        assert_int_equal(ka->tp, 0);
        assert_int_equal(ka->dp, 1);
        assert_int_equal(kb->prefill_instances, 0);
        assert_int_equal(kb->dp * kb->tp, 16);
        const double want = 1.0 / (0.25 / ra.best[m].objective + 0.75 / rb.best[m].objective);
        assert_true(r.found[m]);
        assert_rel(r.points[0].objective[m], want, 1e-12);
        same_candidate(&plain.members[PM_MODE_COUNT + (size_t)m], kb);
        assert_true(!plain.points[0].found[m] ||
                    plain.points[0].objective[m] < r.points[0].objective[m]);
        if (plain.points[0].found[m])
            assert_int_equal(plain.members[(size_t)m].prefill_instances, 0);
    }
    pm_search_result_free(&ra);
    pm_search_result_free(&rb);
    pm_search_mix_result_free(&plain);
    pm_search_mix_result_free(&r);
    free(mix);
}

static void refused(const pm_search_mix *mix, pm_status want, const char *words)
{
    pm_search_mix_result r;
    pm_error err;
    assert_int_equal(pm_search_mix_run(mix, &r, &err), want);
    if (!strstr(err.message, words))
        fail_msg("expected '%s' in: %s", words, err.message);
    assert_null(r.points);
}

static void test_refusals(void **state)
{
    (void)state;
    const pm_scenario a = load("llama8b"), h = load("llama70b-h100");
    pm_search_mix *mix = calloc(1, sizeof *mix);
    assert_non_null(mix);
    refused(mix, PM_ERR_INVALID_ARG, "1 to 8 members");
    mix->member[0] = (pm_search_member){.scenario = &a, .spec = space(1024, 128), .share = 0.0};
    mix->n_members = 1;
    refused(mix, PM_ERR_INVALID_ARG, "member 1 needs a finite share > 0");
    mix->member[0].share = 1.0;
    mix->member[0].spec.n_hw = 1;
    mix->member[0].spec.hw[0] = l2_axis();
    refused(mix, PM_ERR_INVALID_ARG, "hardware axes of its own");
    mix->member[0].spec.n_hw = 0;
    mix->member[0].spec.objective = PM_SEARCH_PER_MM2;
    refused(mix, PM_ERR_INVALID_ARG, "another objective");
    mix->member[0].spec.objective = PM_SEARCH_PER_DEVICE;
    mix->member[1] = (pm_search_member){.scenario = &h, .spec = space(1024, 128), .share = 1.0};
    mix->n_members = 2;
    refused(mix, PM_ERR_UNSUPPORTED, "one chip design");
    /* Two shares of 1e308 sum to inf: each share / inf was 0 and the objective 1 / 0 = inf. */
    mix->member[1].scenario = &a;
    mix->member[0].share = mix->member[1].share = 1e308;
    refused(mix, PM_ERR_INVALID_ARG, "the shares sum to inf");
    mix->member[0].share = mix->member[1].share = 1.0;
    mix->member[1].scenario = &h;
    /* a member's own search's error names the member */
    mix->member[1].scenario = &a;
    mix->member[1].spec.n_chunk = 0;
    refused(mix, PM_ERR_INVALID_ARG, "member 2 (");
    /* so does its disaggregated search's: no device budget to split */
    mix->member[1].spec = space(1024, 128);
    mix->member[1].spec.disagg = true;
    refused(mix, PM_ERR_INVALID_ARG, "member 2 (");
    refused(mix, PM_ERR_INVALID_ARG, "split a device budget");
    free(mix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_member),
        cmocka_unit_test(test_harmonic_mean),
        cmocka_unit_test(test_warns_uneven_member),
        cmocka_unit_test(test_member_short),
        cmocka_unit_test(test_one_member_stages),
        cmocka_unit_test(test_stages_win_for_one_member),
        cmocka_unit_test(test_one_member_disagg),
        cmocka_unit_test(test_disagg_for_one_member),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
