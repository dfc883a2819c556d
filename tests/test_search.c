/*
 * test_search.c - the search under latency limits (pm_search_run): its best per mode against a
 * brute force written here (every point served by pm_serve_compute, the limits applied by hand),
 * its Pareto front against the same points, the pruned search against the exhaustive one over
 * spaces where each bound cuts (the HBM, TPOT, the per-user floor, the chunk budget), the same
 * answer on one thread and on four, the replicas of a budget, and the refusals. Pipeline stages
 * in the space: a pp list of {1} is the search without one, a candidate of stages is the steady
 * state `serve --pp` computes for its scenario, the pruning stays lossless over PP 1, 2 and 4,
 * and plans that cannot be placed are counted as invalid with the plan's reason.
 * Disaggregated deployments in the space (spec.disagg): the best per mode against a brute force
 * over both layouts written here (the co-located points by pm_serve_compute, the budget's
 * splits listed by hand and each served by pm_disagg_compute), winning where long prompts make
 * the co-located mixed steps miss a TPOT limit and losing without it; the pruning and the
 * shards with them; the refusals naming the key. The fronts without a sort of every candidate:
 * pm_search_pareto and pm_search_merge against a qsort written here on random candidates, and
 * a deployment's scenario moved from hardware point to point served as pm_serve_compute serves
 * each point.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "internal.h"
#include "testutil.h"

/* A bundled scenario without its provenance (pm_scenario_release frees only that and sets it
 * NULL: the rest is a value, which the search reads; nothing is left to release). */
static pm_scenario load(const char *name)
{
    pm_scenario s = pm_test_load(name, NULL, 0);
    pm_scenario_release(&s);
    return s;
}

/* A space over tp, chunks and concurrencies, the scenario's lengths, decode-first. */
static pm_search_spec space(const pm_scenario *s, const int *tp, int n_tp, const int64_t *chunk,
                            int n_chunk, const double *conc, int n_conc)
{
    pm_search_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.workload.input_tokens = pm_workload_prompt_tokens(&s->workload);
    sp.workload.output_tokens = pm_workload_decode_steps(&s->workload);
    sp.workload.concurrency = 1;
    sp.workload.chunk_budget = 1;
    for (int i = 0; i < n_tp; i++)
        sp.tp[i] = tp[i];
    sp.n_tp = n_tp;
    for (int i = 0; i < n_chunk; i++)
        sp.chunk[i] = chunk[i];
    sp.n_chunk = n_chunk;
    for (int i = 0; i < n_conc; i++)
        sp.concurrency[i] = conc[i];
    sp.n_concurrency = n_conc;
    return sp;
}

static pm_search_result run(const pm_scenario *s, const pm_search_spec *sp)
{
    pm_search_result r;
    pm_error err;
    const pm_status st = pm_search_run(s, sp, &r, &err);
    if (st != PM_OK)
        fail_msg("pm_search_run: %s: %s", pm_status_name(st), err.message);
    return r;
}

/* Scenario s's steady state under sp's workload at one chunk budget and concurrency. */
static pm_serve_result serve_at(const pm_scenario *s, const pm_search_spec *sp, int64_t chunk,
                                double conc)
{
    pm_serve_workload w = sp->workload;
    w.chunk_budget = chunk;
    w.concurrency = conc;
    pm_serve_result r;
    pm_error err;
    if (pm_serve_compute(s, &w, &r, &err) != PM_OK)
        fail_msg("pm_serve_compute: %s", err.message);
    return r;
}

/* One point of the brute force: feasible (the limits by hand) and its figures. */
typedef struct brute {
    int tp;
    int64_t chunk;
    double conc;
    bool feasible[PM_MODE_COUNT];
    pm_serve_mode x[PM_MODE_COUNT];
} brute;

/* Every point of sp's space (ep and hardware axes not used) served and judged here. */
static size_t brute_force(const pm_scenario *base, const pm_search_spec *sp, brute *out)
{
    size_t n = 0;
    for (int t = 0; t < sp->n_tp; t++)
        for (int k = 0; k < sp->n_chunk; k++)
            for (int i = 0; i < sp->n_concurrency; i++) {
                if ((double)sp->chunk[k] <= sp->concurrency[i])
                    continue; /* decode-first: no room for a prompt */
                pm_scenario s = *base;
                s.cluster.devices = sp->tp[t];
                pm_serve_workload w = sp->workload;
                w.chunk_budget = sp->chunk[k];
                w.concurrency = sp->concurrency[i];
                pm_serve_result r;
                pm_error err;
                if (pm_serve_compute(&s, &w, &r, &err) != PM_OK)
                    continue;
                brute *b = &out[n++];
                memset(b, 0, sizeof *b);
                b->tp = sp->tp[t];
                b->chunk = sp->chunk[k];
                b->conc = sp->concurrency[i];
                for (int m = 0; m < PM_MODE_COUNT; m++) {
                    b->x[m] = r.modes[m];
                    b->feasible[m] = r.fits_hbm &&
                                     (!(sp->tpot_limit_s > 0) || r.modes[m].tpot_s <= sp->tpot_limit_s) &&
                                     (!(sp->ttft_limit_s > 0) || r.modes[m].ttft_s <= sp->ttft_limit_s) &&
                                     (!(sp->min_tokens_per_s_per_user > 0) ||
                                      r.modes[m].tokens_per_s_per_user >= sp->min_tokens_per_s_per_user);
                }
            }
    return n;
}

/* The search's best per mode is the brute force's, value and place; the result, to free. */
static pm_search_result best_is_brute_force(const pm_scenario *s, const pm_search_spec *sp)
{
    pm_search_result r = run(s, sp);
    brute b[64];
    const size_t n = brute_force(s, sp, b);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        /* The search's rule: the most objective, among equals the most tokens/s per user,
         * then the first in the space's order. */
        int best = -1;
        for (size_t i = 0; i < n; i++) {
            if (!b[i].feasible[m])
                continue;
            const double o = b[i].x[m].tokens_per_s_per_device,
                         u = b[i].x[m].tokens_per_s_per_user;
            if (best < 0 || o > b[best].x[m].tokens_per_s_per_device ||
                (!(o < b[best].x[m].tokens_per_s_per_device) &&
                 u > b[best].x[m].tokens_per_s_per_user))
                best = (int)i;
        }
        assert_true(best >= 0);
        assert_true(r.found[m]);
        assert_int_equal(r.best[m].tp, b[best].tp);
        assert_int_equal(r.best[m].chunk, b[best].chunk);
        assert_rel(r.best[m].concurrency, b[best].conc, 0);
        assert_rel(r.best[m].objective, b[best].x[m].tokens_per_s_per_device, 0);
        assert_int_equal(r.best[m].dp, 1);
        assert_int_equal(r.best[m].fails, PM_BOUND_NONE);
    }
    return r;
}

/* Llama-3-70B on H100s: TP 2, 4, 8 (TP 2 does not fit), chunks 512 and 2048, concurrency 1 to
 * 512, TPOT <= 30 ms and TTFT <= 1 s: the best per mode is the brute force's, value and
 * place, and what stops it is the next concurrency's miss. */
static void test_best_is_brute_force(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    const int tp[] = {2, 4, 8};
    const int64_t chunk[] = {512, 2048};
    const double conc[] = {1, 4, 16, 64, 128, 256, 512};
    pm_search_spec sp = space(&s, tp, 3, chunk, 2, conc, 7);
    sp.tpot_limit_s = 0.030;
    sp.ttft_limit_s = 1.0;
    pm_search_result r = best_is_brute_force(&s, &sp);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        /* The next concurrency of its deployment misses TPOT (throughput rises with
         * concurrency, so the best is the last one within the limits). */
        assert_int_equal(r.binds[m], PM_BOUND_TPOT);
    }
    pm_search_result_free(&r);
}

/* The front: every point meets the limits, none is beaten on both axes by a feasible point
 * of the brute force, and every feasible point is matched or beaten by a front point. */
static void test_front_is_pareto(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    const int tp[] = {4, 8};
    const int64_t chunk[] = {256, 1024, 4096};
    const double conc[] = {1, 2, 8, 32, 96, 200};
    pm_search_spec sp = space(&s, tp, 2, chunk, 3, conc, 6);
    sp.tpot_limit_s = 0.040;
    pm_search_result r = run(&s, &sp);
    brute b[64];
    const size_t n = brute_force(&s, &sp, b);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(r.n_front[m] >= 2);
        for (size_t f = 0; f < r.n_front[m]; f++) {
            const pm_search_candidate *k = &r.front[m][f];
            assert_true(k->figures.tpot_s <= sp.tpot_limit_s);
            if (f > 0) /* rising per-user rate, falling objective */
                assert_true(k->figures.tokens_per_s_per_user >
                                r.front[m][f - 1].figures.tokens_per_s_per_user &&
                            k->objective < r.front[m][f - 1].objective);
            for (size_t i = 0; i < n; i++)
                assert_false(b[i].feasible[m] &&
                             b[i].x[m].tokens_per_s_per_user > k->figures.tokens_per_s_per_user &&
                             b[i].x[m].tokens_per_s_per_device > k->objective);
        }
        for (size_t i = 0; i < n; i++) {
            if (!b[i].feasible[m])
                continue;
            bool covered = false;
            for (size_t f = 0; f < r.n_front[m] && !covered; f++)
                covered = r.front[m][f].figures.tokens_per_s_per_user >=
                              b[i].x[m].tokens_per_s_per_user &&
                          r.front[m][f].objective >= b[i].x[m].tokens_per_s_per_device;
            assert_true(covered);
        }
    }
    pm_search_result_free(&r);
}

static void assert_same_answer(const pm_search_result *a, const pm_search_result *b)
{
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_int_equal(a->found[m], b->found[m]);
        if (a->found[m]) {
            assert_int_equal(a->best[m].tp, b->best[m].tp);
            assert_int_equal(a->best[m].pp, b->best[m].pp);
            assert_int_equal(a->best[m].ep, b->best[m].ep);
            assert_int_equal(a->best[m].chunk, b->best[m].chunk);
            assert_int_equal(a->best[m].prefill_instances, b->best[m].prefill_instances);
            assert_int_equal(a->best[m].prefill_tp, b->best[m].prefill_tp);
            assert_int_equal(a->best[m].decode_instances, b->best[m].decode_instances);
            assert_int_equal(a->best[m].decode_tp, b->best[m].decode_tp);
            assert_rel(a->best[m].concurrency, b->best[m].concurrency, 0);
            assert_rel(a->best[m].hw[0], b->best[m].hw[0], 0);
            assert_rel(a->best[m].objective, b->best[m].objective, 0);
            assert_int_equal(a->binds[m], b->binds[m]);
        }
        assert_int_equal(a->n_front[m], b->n_front[m]);
        for (size_t f = 0; f < a->n_front[m]; f++) {
            assert_rel(a->front[m][f].objective, b->front[m][f].objective, 0);
            assert_rel(a->front[m][f].figures.tokens_per_s_per_user,
                       b->front[m][f].figures.tokens_per_s_per_user, 0);
        }
    }
}

/* The pruned search against the exhaustive one: the same bests, binds and fronts, fewer
 * evaluations. The spaces: Llama-3-70B on the 910B at a long context (the HBM binds) with two
 * L2 sizes, a per-user floor and an mm2 objective; Mixtral on the 910B over ep with a TPOT
 * limit that one mode meets where another misses; each on one thread, then on four. */
static void check_pruning(const pm_scenario *s, pm_search_spec *sp)
{
    sp->exhaustive = true;
    sp->threads = 1;
    pm_search_result ex = run(s, sp);
    sp->exhaustive = false;
    sp->threads = 4;
    pm_search_result pr = run(s, sp);
    assert_same_answer(&ex, &pr);
    assert_int_equal(ex.pruned, 0);
    assert_true(pr.pruned > 0);
    assert_true(pr.evaluated + pr.pruned == ex.evaluated);
    pm_search_result_free(&ex);
    pm_search_result_free(&pr);
}

static void test_pruning_is_lossless(void **state)
{
    (void)state;
    const char *ov[] = {"workload.seq_len=32768"};
    pm_scenario s = pm_test_load("llama70b", ov, 1);
    pm_scenario_release(&s);
    const int tp[] = {4, 8, 16};
    const int64_t chunk[] = {1024, 8192};
    const double conc[] = {1, 2, 4, 8, 16, 32, 64, 128};
    pm_search_spec sp = space(&s, tp, 3, chunk, 2, conc, 8);
    sp.min_tokens_per_s_per_user = 20;
    sp.objective = PM_SEARCH_PER_MM2;
    pm_error err;
    assert_int_equal(pm_axis_parse("l2=96MiB,384MiB", 0, &sp.hw[0], &err), PM_OK);
    sp.n_hw = 1;
    check_pruning(&s, &sp);
    pm_axis_release(&sp.hw[0]);

    pm_scenario x = load("mixtral8x7b");
    const int tpx[] = {4, 8};
    const int64_t chunkx[] = {512, 2048};
    const double concx[] = {1, 8, 32, 48, 56, 60, 64, 128, 256, 1024};
    sp = space(&x, tpx, 2, chunkx, 2, concx, 10);
    sp.ep[0] = 1;
    sp.ep[1] = 4;
    sp.n_ep = 2;
    /* 13 ms: at TP 8, EP 4, chunk 512 and 56 sequences serial and fused miss it and PRESERVE
     * does not (13.2, 13.1 and 11.1 ms): a cut on one mode's miss would lose PRESERVE's best
     * at 60. */
    sp.tpot_limit_s = 0.013;
    check_pruning(&x, &sp);
}

/* Speculative decoding searched (one MTP layer drafting 2 tokens at acceptance 0.7, a served
 * workload's verify steps): the best per mode is the brute force's over pm_serve_compute with
 * the same speculation, and the pruned search is the exhaustive one. */
static void test_speculation_searched(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    pm_test_speculate(&s, 2, 0.7);
    const int tp[] = {4, 8};
    const int64_t chunk[] = {512, 2048};
    const double conc[] = {1, 4, 16, 64, 128, 256, 1024, 4096};
    pm_search_spec sp = space(&s, tp, 2, chunk, 2, conc, 8);
    sp.tpot_limit_s = 0.025;
    pm_search_result r = best_is_brute_force(&s, &sp);
    pm_search_result_free(&r);
    check_pruning(&s, &sp);
}

/* A budget of 32 devices: TP 8 runs 4 replicas, each serving the concurrency; TP 3 does not
 * divide it and is counted as a deployment that cannot run, with its reason. */
static void test_budget_replicas(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    const int tp[] = {3, 8};
    const int64_t chunk[] = {2048};
    const double conc[] = {16};
    pm_search_spec sp = space(&s, tp, 2, chunk, 1, conc, 1);
    sp.device_budget = 32;
    pm_search_result r = run(&s, &sp);
    assert_int_equal(r.invalid_plans, 1);
    assert_non_null(strstr(r.first_invalid, "does not divide"));
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(r.found[m]);
        assert_int_equal(r.best[m].tp, 8);
        assert_int_equal(r.best[m].dp, 4);
        assert_int_equal(r.binds[m], PM_BOUND_SPACE);
    }
    /* One replica's steady state: the scenario's own at TP 8 and concurrency 16. */
    const pm_serve_result one = serve_at(&s, &sp, 2048, 16);
    assert_rel(r.best[PM_MODE_PRESERVE].figures.tokens_per_s_per_device,
               one.modes[PM_MODE_PRESERVE].tokens_per_s_per_device, 0);
    pm_search_result_free(&r);
}

static void test_refusals(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    const int tp[] = {8};
    const int64_t chunk[] = {2048};
    const double conc[] = {16};
    pm_search_spec sp = space(&s, tp, 1, chunk, 1, conc, 1);
    pm_search_result r;
    pm_error err;
    sp.workload.request_rate_per_s = 2;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    sp.workload.request_rate_per_s = 0;
    assert_int_equal(pm_axis_parse("devices=1,2", 0, &sp.hw[0], &err), PM_OK);
    sp.n_hw = 1;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "hardware axis"));
    pm_axis_release(&sp.hw[0]);
    /* A hardware point outside the model's range failed every candidate at it ("could not
     * run", exit 0, the answer without it): refused up front naming the axis and its value. */
    assert_int_equal(pm_axis_parse("hbm_bw=3TBps,1e9TBps", 0, &sp.hw[0], &err), PM_OK);
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_RANGE);
    assert_string_equal(err.path, "$.accelerator.hbm_bandwidth");
    assert_non_null(strstr(err.message, "hardware axis hbm_bw's value 1e+21 (1e+09 in its "
                                        "column's unit): must be in [1000, 1e+18] bytes/s"));
    pm_axis_release(&sp.hw[0]);
    sp.n_hw = 0;
    /* A value twice in a list was a point counted twice. */
    sp.tp[1] = 8;
    sp.n_tp = 2;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "the tp list gives a value twice"));
    sp.n_tp = 1;
    sp.concurrency[1] = 16;
    sp.n_concurrency = 2;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "the concurrency list gives a value twice"));
    sp.n_concurrency = 0;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    sp.n_concurrency = 1;
    /* A NaN or negative limit compared false and read as "none": the unlimited best. */
    sp.tpot_limit_s = NAN;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "tpot_limit_s");
    sp.tpot_limit_s = 0;
    sp.ttft_limit_s = -1;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "ttft_limit_s");
    sp.ttft_limit_s = 0;
    sp.min_tokens_per_s_per_user = INFINITY;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "min_tokens_per_s_per_user");
    sp.min_tokens_per_s_per_user = 0;
    pm_scenario t = s;
    t.accel.cost.present = false;
    sp.objective = PM_SEARCH_PER_USD;
    assert_int_equal(pm_search_run(&t, &sp, &r, &err), PM_ERR_MISSING);
    assert_string_equal(err.path, "$.accelerator.cost");
    sp.objective = PM_SEARCH_PER_DEVICE;
    t = s;
    t.cluster.data_parallel = 2;
    assert_int_equal(pm_search_run(&t, &sp, &r, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.cluster.data_parallel");
    t = s;
    t.cluster.pipeline_parallel = 2; /* the search's pp list gives the stages */
    assert_int_equal(pm_search_run(&t, &sp, &r, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.cluster.pipeline_parallel");
    assert_non_null(strstr(err.message, "pp list"));
    sp.pp[0] = 0; /* a list of stages out of range */
    sp.n_pp = 1;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    sp.pp[0] = PM_MAX_STAGES + 1;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    sp.n_pp = 0;
    assert_string_equal(pm_search_bound_name(PM_BOUND_TPOT), "tpot");
    assert_string_equal(pm_search_objective_name(PM_SEARCH_PER_JOULE), "joule");
    assert_string_equal(pm_search_bound_name(PM_BOUND_COUNT), "?");
}

/* Two candidates are the same point with the same figures (the whole struct but padding). */
static void assert_same_candidate(const pm_search_candidate *a, const pm_search_candidate *b)
{
    assert_int_equal(a->tp, b->tp);
    assert_int_equal(a->pp, b->pp);
    assert_int_equal(a->ep, b->ep);
    assert_int_equal(a->dp, b->dp);
    assert_int_equal(a->chunk, b->chunk);
    assert_int_equal(a->mode, b->mode);
    assert_int_equal(a->fails, b->fails);
    assert_int_equal(a->group, b->group);
    assert_int_equal(a->prefill_tp, b->prefill_tp);
    assert_int_equal(a->prefill_instances, b->prefill_instances);
    assert_int_equal(a->decode_tp, b->decode_tp);
    assert_int_equal(a->decode_instances, b->decode_instances);
    assert_rel(a->concurrency, b->concurrency, 0);
    assert_rel(a->hw[0], b->hw[0], 0);
    assert_rel(a->hw[1], b->hw[1], 0);
    assert_rel(a->objective, b->objective, 0);
    assert_memory_equal(&a->figures.ttft_s, &b->figures.ttft_s,
                        offsetof(pm_serve_mode, meets_limits));
}

/* Two results are the same search's: the counts, and per mode (each found) the best, what
 * binds it and the front, candidate for candidate. */
static void assert_same_search(const pm_search_result *a, const pm_search_result *b)
{
    assert_int_equal(a->candidates, b->candidates);
    assert_int_equal(a->evaluated, b->evaluated);
    assert_int_equal(a->pruned, b->pruned);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_int_equal(a->found[m], b->found[m]);
        assert_true(b->found[m]);
        assert_same_candidate(&a->best[m], &b->best[m]);
        assert_int_equal(a->binds[m], b->binds[m]);
        assert_int_equal(a->n_front[m], b->n_front[m]);
        for (size_t f = 0; f < b->n_front[m]; f++)
            assert_same_candidate(&a->front[m][f], &b->front[m][f]);
    }
}

/* The shards of a search, merged in order (pm_search_merge), are the whole search: the same
 * counts, bests (in place and value), binds and fronts point by point; for 1, 2, 3 and 7
 * shards of 3 x 2 x 2 = 12 groups (7 leaves some shards 1 group, none empty), on Mixtral
 * with a link-bandwidth axis listed falling: TP 1 moves nothing over links, so its points at
 * 400 and 100 GB/s tie exactly; the front keeps the first in the space's order (400), as the
 * best does, so each mode's best is on its front. A shard out of order is refused. */
static void test_shards_merge(void **state)
{
    (void)state;
    pm_scenario x = load("mixtral8x7b");
    const int tp[] = {1, 2, 4};
    const int64_t chunk[] = {512, 2048};
    const double conc[] = {1, 8, 32, 56, 64, 128, 256};
    pm_search_spec sp = space(&x, tp, 3, chunk, 2, conc, 7);
    sp.ep[0] = 1;
    sp.n_ep = 1;
    sp.tpot_limit_s = 0.02;
    pm_error err;
    assert_int_equal(pm_axis_parse("link_bw=400GBps,100GBps", 0, &sp.hw[0], &err), PM_OK);
    sp.n_hw = 1;
    sp.threads = 2;
    pm_search_result whole = run(&x, &sp);
    assert_int_equal(whole.groups, 12);
    size_t tp1 = 0;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        bool best_on_front = false;
        for (size_t f = 0; f < whole.n_front[m]; f++) {
            const pm_search_candidate *k = &whole.front[m][f];
            best_on_front = best_on_front || (k->group == whole.best[m].group &&
                                              !(k->concurrency < whole.best[m].concurrency) &&
                                              !(k->concurrency > whole.best[m].concurrency));
            if (k->tp == 1) {
                tp1++;
                assert_rel(k->hw[0], 400e9, 0);
            }
        }
        assert_true(best_on_front);
    }
    assert_true(tp1 > 0);
    const size_t counts[] = {1, 2, 3, 7};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        pm_search_result merged;
        memset(&merged, 0, sizeof merged);
        for (size_t k = 0; k < counts[c]; k++) {
            sp.shard_index = k;
            sp.shard_count = counts[c];
            pm_search_result part = run(&x, &sp);
            assert_true(part.last_group > part.first_group);
            assert_int_equal(pm_search_merge(&merged, &part, &err), PM_OK);
            if (k == 0 && counts[c] > 1) /* the first again does not follow it */
                assert_int_equal(pm_search_merge(&merged, &part, &err), PM_ERR_INVALID_ARG);
            pm_search_result_free(&part);
        }
        assert_same_search(&merged, &whole);
        assert_int_equal(merged.first_group, 0);
        assert_int_equal(merged.last_group, 12);
        pm_search_result_free(&merged);
    }
    sp.shard_index = 3;
    sp.shard_count = 3;
    pm_search_result r;
    assert_int_equal(pm_search_run(&x, &sp, &r, &err), PM_ERR_INVALID_ARG);
    pm_axis_release(&sp.hw[0]);
    pm_search_result_free(&whole);
}

/* The front's rule, written here: by falling tokens/s per user, ties by falling objective,
 * then by rising group, then by rising concurrency. */
static int front_order(const void *a, const void *b)
{
    const pm_search_candidate *x = a, *y = b;
    const double ux = x->figures.tokens_per_s_per_user, uy = y->figures.tokens_per_s_per_user;
    if (ux > uy || ux < uy)
        return ux > uy ? -1 : 1;
    if (x->objective > y->objective || x->objective < y->objective)
        return x->objective > y->objective ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->concurrency < y->concurrency ? -1 : x->concurrency > y->concurrency;
}

/* The front of c[0..n) by the sort: sorted by front_order, each point kept whose objective
 * beats every one before it, reversed (rising per-user rate); its count. */
static size_t front_by_sort(pm_search_candidate *c, size_t n)
{
    qsort(c, n, sizeof *c, front_order);
    size_t k = 0;
    double best = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (c[i].objective > best) {
            best = c[i].objective;
            c[k++] = c[i];
        }
    for (size_t i = 0; i < k / 2; i++) {
        const pm_search_candidate t = c[i];
        c[i] = c[k - 1 - i];
        c[k - 1 - i] = t;
    }
    return k;
}

/* A small generator of its own (the sequence is the test's, whatever the C library). */
static uint64_t next_random(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

/* n candidates of groups 0 .. groups - 1 at distinct concurrencies within a group, their
 * per-user rates and objectives drawn from a few values (many ties); a NaN rate now and then
 * when nan. */
static void random_candidates(uint64_t *x, pm_search_candidate *c, size_t n, size_t groups,
                              bool nan)
{
    for (size_t i = 0; i < n; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].group = next_random(x) % groups;
        c[i].concurrency = (double)(i + 1); /* distinct: (group, concurrency) names a point */
        c[i].figures.tokens_per_s_per_user = (double)(next_random(x) % 6);
        c[i].objective = 0.5 * (double)(1 + next_random(x) % 5);
        if (nan && next_random(x) % 7 == 0)
            c[i].figures.tokens_per_s_per_user = NAN;
    }
}

/* pm_search_pareto (sorted by insertion, no qsort) against the sort on random candidates:
 * the same front, the same order, the same ties, candidate for candidate; with NaN rates too
 * (then both are qsort's). */
static void test_front_is_the_sort(void **state)
{
    (void)state;
    uint64_t x = 46;
    pm_search_candidate a[64], b[64];
    size_t kept = 0;
    for (int trial = 0; trial < 500; trial++) {
        const size_t n = 1 + next_random(&x) % 64;
        random_candidates(&x, a, n, 1 + next_random(&x) % 4, trial % 5 == 4);
        if (trial % 3 == 0) /* mostly in the order already, as a group's candidates come */
            qsort(a, n, sizeof a[0], front_order);
        memcpy(b, a, n * sizeof a[0]);
        const size_t want = front_by_sort(a, n);
        assert_int_equal(pm_search_pareto(b, n), want);
        assert_memory_equal(a, b, want * sizeof a[0]);
        kept += want > 1;
    }
    assert_true(kept > 100);
}

/* pm_search_merge joins the parts' fronts by merging them (no sort): the fronts of random
 * candidates split into parts by group, each part's front by the sort, merged part by part,
 * are the front of all of them by the sort, candidate for candidate. A part whose front is out
 * of order is sorted again: the same front. */
static void test_merged_front_is_the_sort(void **state)
{
    (void)state;
    uint64_t x = 47;
    enum { N = 96, PARTS = 6 };
    pm_search_candidate all[N], want[N], front[PARTS][N];
    for (int trial = 0; trial < 200; trial++) {
        const size_t n = 1 + next_random(&x) % N;
        random_candidates(&x, all, n, PARTS, false);
        memcpy(want, all, n * sizeof all[0]);
        const size_t n_want = front_by_sort(want, n);
        pm_search_result merged;
        memset(&merged, 0, sizeof merged);
        for (size_t p = 0; p < PARTS; p++) {
            pm_search_result part;
            memset(&part, 0, sizeof part);
            size_t k = 0;
            for (size_t i = 0; i < n; i++)
                if (all[i].group == p)
                    front[p][k++] = all[i];
            k = front_by_sort(front[p], k);
            if (trial % 4 == 3 && k > 1) { /* out of order: sorted again */
                const pm_search_candidate t = front[p][0];
                front[p][0] = front[p][k - 1];
                front[p][k - 1] = t;
            }
            part.groups = PARTS;
            part.first_group = p;
            part.last_group = p + 1;
            part.found[0] = k > 0;
            if (k > 0)
                part.best[0] = front[p][0];
            part.front[0] = front[p];
            part.n_front[0] = k;
            pm_error err;
            assert_int_equal(pm_search_merge(&merged, &part, &err), PM_OK);
        }
        assert_int_equal(merged.n_front[0], n_want);
        assert_memory_equal(merged.front[0], want, n_want * sizeof want[0]);
        pm_search_result_free(&merged);
    }
}

/* A front grown one small part at a time (as a search merges its groups, one to three
 * candidates each) keeps the front of all candidates so far after every merge, candidate for
 * candidate: the merge passes over the front's points above and below the part's without
 * visiting them (merge_fronts on a proper front), and those points must still be the sort's.
 * The objective falls as the per-user rate rises, so the front is long and a part lands at its
 * top, its bottom, inside it, or nowhere; ties (equal rates, equal objectives) come often. */
static void test_front_grown_part_by_part_is_the_sort(void **state)
{
    (void)state;
    uint64_t x = 48;
    enum { PARTS = 150, MAX = 3 };
    pm_search_candidate all[PARTS * MAX], want[PARTS * MAX], part_front[MAX];
    size_t longest = 0, dropped = 0;
    for (int trial = 0; trial < 20; trial++) {
        pm_search_result merged;
        memset(&merged, 0, sizeof merged);
        size_t n = 0;
        for (size_t p = 0; p < PARTS; p++) {
            const size_t k = 1 + next_random(&x) % MAX;
            for (size_t i = 0; i < k; i++) {
                pm_search_candidate *c = &part_front[i];
                memset(c, 0, sizeof *c);
                c->group = p;
                c->concurrency = (double)(i + 1);
                const double user = (double)(next_random(&x) % 400);
                c->figures.tokens_per_s_per_user = user;
                c->objective = 1000.0 - 2.0 * user + (double)(next_random(&x) % 40);
                all[n++] = *c;
            }
            const size_t kf = front_by_sort(part_front, k);
            pm_search_result part;
            memset(&part, 0, sizeof part);
            part.groups = PARTS;
            part.first_group = p;
            part.last_group = p + 1;
            part.found[0] = true;
            part.best[0] = part_front[0];
            part.front[0] = part_front;
            part.n_front[0] = kf;
            const size_t before = merged.n_front[0];
            pm_error err;
            assert_int_equal(pm_search_merge(&merged, &part, &err), PM_OK);
            memcpy(want, all, n * sizeof all[0]);
            const size_t n_want = front_by_sort(want, n);
            assert_int_equal(merged.n_front[0], n_want);
            assert_memory_equal(merged.front[0], want, n_want * sizeof want[0]);
            if (n_want > longest)
                longest = n_want;
            dropped += n_want < before + kf;
        }
        pm_search_result_free(&merged);
    }
    assert_true(longest > 20); /* the fronts are long: the parts land inside them */
    assert_true(dropped > 100); /* and often drop points of the front (or are dropped) */
}

/* A search over a compute axis and an L2 axis (a deployment's scenario is moved from point to
 * point: the compute axis scales the peaks it finds, so they are taken again from the base
 * first) gives each candidate the figures of pm_serve_compute at its own point. */
static void test_points_moved_are_served(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    const int tp[] = {4, 8};
    const int64_t chunk[] = {512};
    const double conc[] = {8, 32};
    pm_search_spec sp = space(&s, tp, 2, chunk, 1, conc, 2);
    sp.exhaustive = true;
    sp.threads = 1;
    pm_error err;
    assert_int_equal(pm_axis_parse("compute=200TFLOPS,400TFLOPS,100TFLOPS", 0, &sp.hw[0], &err),
                     PM_OK);
    assert_int_equal(pm_axis_parse("l2=8MiB,96MiB", 0, &sp.hw[1], &err), PM_OK);
    sp.n_hw = 2;
    pm_search_result r = run(&s, &sp);
    size_t checked = 0;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        for (size_t f = 0; f < r.n_front[m]; f++) {
            const pm_search_candidate *k = &r.front[m][f];
            pm_scenario t = s;
            t.cluster.devices = k->tp;
            assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_COMPUTE, k->hw[0], &err), PM_OK);
            assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_L2, k->hw[1], &err), PM_OK);
            const pm_serve_result x = serve_at(&t, &sp, k->chunk, k->concurrency);
            assert_memory_equal(&x.modes[m], &k->figures, sizeof k->figures);
            checked++;
        }
    assert_true(checked >= 3);
    pm_axis_release(&sp.hw[0]);
    pm_axis_release(&sp.hw[1]);
    pm_search_result_free(&r);
}

/* Whether candidate a of a search over hardware axes (l2, x) is candidate b of the same space
 * searched over (x, l2): the same deployment, point and figures, the axes' values swapped. */
static bool same_swapped(const pm_search_candidate *a, const pm_search_candidate *b)
{
    return a->tp == b->tp && a->chunk == b->chunk &&
           memcmp(&a->concurrency, &b->concurrency, sizeof a->concurrency) == 0 &&
           memcmp(&a->hw[0], &b->hw[1], sizeof a->hw[0]) == 0 &&
           memcmp(&a->hw[1], &b->hw[0], sizeof a->hw[1]) == 0 &&
           memcmp(&a->figures, &b->figures, sizeof a->figures) == 0;
}

/* Where the L2 capacity is the first of two hardware axes, a deployment's points are walked
 * with the capacity fastest (search.c walk_group: the compiled point's steps' memo serves the
 * capacities above its last one only where nothing else moved). The walk changes nothing but
 * the order: every candidate is evaluated once, the answer is the search's over the axes
 * given the other way round (whose natural order walks the capacity fastest already), on one
 * thread, on two, and in shards that cut a deployment's points (walked in order there). */
static void test_l2_walked_fastest(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    const int tp[] = {4, 8};
    const int64_t chunk[] = {512};
    const double conc[] = {8, 32};
    pm_search_spec a = space(&s, tp, 2, chunk, 1, conc, 2), b;
    a.exhaustive = true;
    a.threads = 1;
    pm_error err;
    assert_int_equal(pm_axis_parse("l2=8MiB,16MiB,32MiB,96MiB", 0, &a.hw[0], &err), PM_OK);
    assert_int_equal(pm_axis_parse("hbm_bw=2TBps,3TBps,1.5TBps", 0, &a.hw[1], &err), PM_OK);
    a.n_hw = 2;
    b = a;
    b.hw[0] = a.hw[1];
    b.hw[1] = a.hw[0];
    pm_search_result ra = run(&s, &a), rb = run(&s, &b);
    assert_int_equal(ra.groups, 2 * 4 * 3);
    assert_int_equal(ra.evaluated, 2 * 4 * 3 * 2);
    size_t seen = 0;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(ra.found[m] && rb.found[m]);
        assert_true(same_swapped(&ra.best[m], &rb.best[m]));
        assert_int_equal(ra.n_front[m], rb.n_front[m]);
        for (size_t f = 0; f < ra.n_front[m]; f++) {
            bool found = false;
            for (size_t g = 0; g < rb.n_front[m] && !found; g++)
                found = same_swapped(&ra.front[m][f], &rb.front[m][g]);
            assert_true(found);
            seen++;
        }
    }
    assert_true(seen >= 3);
    /* On two threads, and in 5 shards merged (slices of 4 or 5 groups: blocks of 12 cut). */
    pm_search_spec c = a;
    c.threads = 2;
    pm_search_result rc = run(&s, &c);
    c.threads = 1;
    pm_search_result merged;
    memset(&merged, 0, sizeof merged);
    for (size_t k = 0; k < 5; k++) {
        c.shard_index = k;
        c.shard_count = 5;
        pm_search_result part = run(&s, &c);
        assert_int_equal(pm_search_merge(&merged, &part, &err), PM_OK);
        pm_search_result_free(&part);
    }
    const pm_search_result *other[] = {&rc, &merged};
    for (size_t o = 0; o < 2; o++) {
        assert_int_equal(other[o]->evaluated, ra.evaluated);
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            assert_memory_equal(&other[o]->best[m], &ra.best[m], sizeof ra.best[m]);
            assert_int_equal(other[o]->n_front[m], ra.n_front[m]);
            assert_memory_equal(other[o]->front[m], ra.front[m],
                                ra.n_front[m] * sizeof ra.front[m][0]);
        }
    }
    pm_axis_release(&a.hw[0]);
    pm_axis_release(&a.hw[1]);
    pm_search_result_free(&ra);
    pm_search_result_free(&rb);
    pm_search_result_free(&rc);
    pm_search_result_free(&merged);
}

/* A pp list of {1} is the search without a pp list, candidate for candidate (the same
 * groups, the same order, every figure; each candidate of one stage), and without a list
 * every candidate says pp 1: the search of one stage is today's. */
/* Whether a and b are the same number (-Wfloat-equal: no ==). */
static bool level(double a, double b)
{
    return !(a < b) && !(a > b);
}

/* The number of pm_search_warning's warnings, the i-th text into note. */
static size_t warnings(const pm_scenario *s, const pm_search_spec *sp, const pm_search_result *r,
                       char note[][512])
{
    size_t i = 0;
    while (i < 4 && pm_search_warning(s, sp, r, i, note[i], 512))
        i++;
    return i;
}

/* The warnings' space: TP 8 (4 replicas of the 32 devices), chunk 512, 16 and 64 sequences. */
static pm_search_spec tp8_space(const pm_scenario *s)
{
    static const int tp[] = {8};
    static const int64_t chunk[] = {512};
    static const double conc[] = {16, 64};
    return space(s, tp, 1, chunk, 1, conc, 2);
}

/* Where the answer's chip cannot be built, the search says so (pm_search_warning): the 910B's
 * compute die grows with its L2 and passes the reticle between its 192 and 384 MiB (checked by
 * the area model at each value), so the L2 axis {8, 384} MiB has 1 of its 2 values over, and
 * PRESERVE's best per device is at 384 MiB (its window holds more: the search's answer,
 * checked before the warning is), serial's and fused's at 8 MiB (L2 buys them nothing per
 * device: the first of equals). Per mm2 every best is at 8 MiB: the axis's warning alone. An
 * axis of buildable dies warns of nothing. */
static void test_warns_unbuildable_chip(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    pm_search_spec sp = tp8_space(&s);
    pm_error err;
    assert_int_equal(pm_axis_parse("l2=8MiB,384MiB", 0, &sp.hw[0], &err), PM_OK);
    sp.n_hw = 1;
    pm_scenario t = s;
    t.provenance = NULL;
    double mm2 = 0.0;
    assert_false(pm_die_over_reticle(&s.accel, &mm2)); /* the scenario's 192 MiB... */
    assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_L2, 8.0 * 1048576.0, &err), PM_OK);
    assert_false(pm_die_over_reticle(&t.accel, &mm2)); /* ... and 8 MiB print */
    assert_int_equal(pm_scenario_set_axis(&t, PM_AXIS_L2, 384.0 * 1048576.0, &err), PM_OK);
    assert_true(pm_die_over_reticle(&t.accel, &mm2)); /* 384 MiB does not */
    char big[32];
    snprintf(big, sizeof big, "%.0f mm2", mm2);

    pm_search_result r;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_OK);
    assert_true(r.found[PM_MODE_PRESERVE] && r.found[PM_MODE_SERIAL] && r.found[PM_MODE_FUSED]);
    assert_true(level(r.best[PM_MODE_PRESERVE].hw[0], 384.0 * 1048576.0));
    assert_true(level(r.best[PM_MODE_SERIAL].hw[0], 8.0 * 1048576.0));
    assert_true(level(r.best[PM_MODE_FUSED].hw[0], 8.0 * 1048576.0));
    char note[4][512];
    assert_int_equal(warnings(&s, &sp, &r, note), 2);
    assert_non_null(strstr(note[0], "over the 858 mm2 reticle at 1 of the l2 axis's 2 values "
                                    "(from l2_capacity_MiB 384: "));
    assert_non_null(strstr(note[0], big));
    assert_non_null(strstr(note[1], "preserve: the best is at l2_capacity_MiB 384, where the "
                                    "modelled compute die is "));
    assert_non_null(strstr(note[1], big));
    assert_false(pm_search_warning(&s, &sp, &r, 2, NULL, 0));
    pm_search_result_free(&r);

    sp.objective = PM_SEARCH_PER_MM2;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(r.found[m]);
        assert_true(level(r.best[m].hw[0], 8.0 * 1048576.0));
    }
    assert_int_equal(warnings(&s, &sp, &r, note), 1);
    pm_search_result_free(&r);
    pm_axis_release(&sp.hw[0]);

    assert_int_equal(pm_axis_parse("l2=8MiB,96MiB", 0, &sp.hw[0], &err), PM_OK);
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_OK);
    assert_int_equal(warnings(&s, &sp, &r, note), 0);
    pm_search_result_free(&r);
    pm_axis_release(&sp.hw[0]);
}

/* Per mm2 or per dollar, a best with more HBM or L2 bandwidth than the chip's took it for free
 * (the bandwidth axes move no die area and no price): said per mode; not per device, not at
 * the chip's own bandwidth or below it. */
/* A best at a TP over which the model does not split evenly is said (run and serve warn of a
 * scenario's own split; the search named such a best without a word): Llama-3-70B's 64 query
 * heads, 8 KV heads and MLP width 28672 over 3 devices leave 22 and 3 on the busiest; over 4,
 * none. */
static void test_warns_uneven_best(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    const int64_t chunk[] = {2048};
    const double conc[] = {4, 16};
    char note[512];
    for (int uneven = 0; uneven < 2; uneven++) {
        const int tp[] = {uneven ? 3 : 4};
        pm_search_spec sp = space(&s, tp, 1, chunk, 1, conc, 2);
        pm_search_result r;
        assert_int_equal(pm_search_run(&s, &sp, &r, NULL), PM_OK);
        size_t k = 0;
        while (pm_search_warning(&s, &sp, &r, k, note, sizeof note)) {
            assert_non_null(strstr(note, "does not split evenly"));
            assert_non_null(strstr(note, "TP 3"));
            assert_non_null(strstr(note, "22 query heads, 3 KV heads"));
            k++;
        }
        assert_int_equal(k, uneven ? PM_MODE_COUNT : 0);
        pm_search_result_free(&r);
    }
}

static void test_warns_free_bandwidth(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b");
    pm_search_spec sp = tp8_space(&s);
    pm_error err;
    /* The 910B: 1.6 TB/s of HBM over 4 PHY sites (data/accelerators/ascend-910b.json). */
    assert_true(level(s.accel.hbm_bandwidth_bytes_per_s, 1.6e12));
    assert_int_equal(s.accel.area.hbm_stacks, 4);
    assert_int_equal(pm_axis_parse("hbm_bw=1TBps,4TBps", 0, &sp.hw[0], &err), PM_OK);
    sp.n_hw = 1;
    sp.objective = PM_SEARCH_PER_MM2;
    pm_search_result r;
    char note[4][512];
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_OK);
    for (int m = 0; m < PM_MODE_COUNT; m++) { /* the same die, faster: 4 TB/s wins */
        assert_true(r.found[m]);
        assert_true(level(r.best[m].hw[0], 4e12));
    }
    assert_int_equal(warnings(&s, &sp, &r, note), 3);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        char head[64];
        snprintf(head, sizeof head, "%s: the best is at hbm_bandwidth_TBps 4, above the chip's "
                 "1.6,", pm_mode_name((pm_mode)m));
        assert_non_null(strstr(note[m], head));
        assert_non_null(strstr(note[m], "the die keeps its 4 HBM PHY sites"));
        assert_non_null(strstr(note[m], "took that bandwidth as free"));
    }
    pm_search_result_free(&r);
    sp.objective = PM_SEARCH_PER_USD;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_OK);
    assert_int_equal(warnings(&s, &sp, &r, note), 3);
    pm_search_result_free(&r);
    /* Per device (or joule) no area or price is read: nothing to say. */
    sp.objective = PM_SEARCH_PER_DEVICE;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_OK);
    assert_true(level(r.best[PM_MODE_PRESERVE].hw[0], 4e12));
    assert_int_equal(warnings(&s, &sp, &r, note), 0);
    pm_search_result_free(&r);
    pm_axis_release(&sp.hw[0]);
    /* At the chip's own bandwidth or below it the die is priced as built. */
    sp.objective = PM_SEARCH_PER_MM2;
    assert_int_equal(pm_axis_parse("hbm_bw=1TBps,1.6TBps", 0, &sp.hw[0], &err), PM_OK);
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_OK);
    assert_true(level(r.best[PM_MODE_PRESERVE].hw[0], 1.6e12));
    assert_int_equal(warnings(&s, &sp, &r, note), 0);
    pm_search_result_free(&r);
    pm_axis_release(&sp.hw[0]);
    /* The L2's bandwidth, the second of two axes: named, with what its area follows. */
    assert_int_equal(pm_axis_parse("l2=96MiB", 0, &sp.hw[0], &err), PM_OK);
    char spec[64];
    snprintf(spec, sizeof spec, "l2_bw=%.17gTBps", 2.0 * s.accel.l2_bandwidth_bytes_per_s / 1e12);
    assert_int_equal(pm_axis_parse(spec, 0, &sp.hw[1], &err), PM_OK);
    sp.n_hw = 2;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_OK);
    assert_int_equal(warnings(&s, &sp, &r, note), 3);
    assert_non_null(strstr(note[2], "preserve: the best is at l2_bandwidth_TBps "));
    assert_non_null(strstr(note[2], "the L2's area follows its capacity alone"));
    pm_search_result_free(&r);
    pm_axis_release(&sp.hw[0]);
    pm_axis_release(&sp.hw[1]);
}

static void test_pp_one_is_default(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    const int tp[] = {4, 8};
    const int64_t chunk[] = {512, 2048};
    const double conc[] = {1, 4, 16, 64, 256};
    pm_search_spec sp = space(&s, tp, 2, chunk, 2, conc, 5);
    sp.tpot_limit_s = 0.030;
    sp.device_budget = 16;
    pm_search_result none = run(&s, &sp);
    sp.pp[0] = 1;
    sp.n_pp = 1;
    pm_search_result one = run(&s, &sp);
    assert_int_equal(none.groups, 4); /* tp x chunk: pp adds no dimension */
    assert_int_equal(one.groups, none.groups);
    assert_int_equal(one.invalid_plans, 0);
    assert_same_search(&one, &none);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_int_equal(none.best[m].pp, 1);
        assert_int_equal(none.best[m].dp, 16 / none.best[m].tp);
    }
    pm_search_result_free(&none);
    pm_search_result_free(&one);
}

/* The golden: a candidate of two stages is the steady state of `serve --pp 2` (pm_serve_compute
 * of the scenario with cluster.pipeline_parallel 2) at its concurrency, in each mode, figure
 * for figure. Llama-3-70B on H100s, TP 4 x PP 2 = 8 devices (one node: the stage boundary
 * stays on NVLink), a budget of 32 devices: 32 / (4 x 2) = 4 replicas. Then TP 8 x PP 2
 * needs two 8-GPU nodes joined by a link nvlink4-nvswitch does not describe, and TP 4 x PP 3
 * (12 devices) does not divide 32: both counted as invalid plans, the first with the plan's
 * reason. */
static void test_stages_are_served(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    const int tp[] = {4};
    const int64_t chunk[] = {2048};
    const double conc[] = {16};
    pm_search_spec sp = space(&s, tp, 1, chunk, 1, conc, 1);
    sp.pp[0] = 2;
    sp.n_pp = 1;
    sp.device_budget = 32;
    pm_search_result r = run(&s, &sp);
    pm_scenario t = s;
    t.cluster.devices = 4;
    t.cluster.pipeline_parallel = 2;
    const pm_serve_result one = serve_at(&t, &sp, 2048, 16);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(r.found[m]);
        const pm_search_candidate *k = &r.best[m];
        assert_int_equal(k->tp, 4);
        assert_int_equal(k->pp, 2);
        assert_int_equal(k->dp, 4); /* 32 / (4 x 2) */
        assert_rel(k->concurrency, 16, 0);
        assert_memory_equal(&k->figures.ttft_s, &one.modes[m].ttft_s,
                            offsetof(pm_serve_mode, meets_limits));
        assert_rel(k->objective, one.modes[m].tokens_per_s_per_device, 0);
    }
    /* Per device: a replica's rate over its 4 x 2 devices. */
    assert_rel(r.best[PM_MODE_SERIAL].figures.tokens_per_s_per_device,
               one.modes[PM_MODE_SERIAL].tokens_per_s / 8.0, 1e-12);
    pm_search_result_free(&r);

    const int tp8[] = {8, 4};
    sp = space(&s, tp8, 2, chunk, 1, conc, 1);
    const int pp[] = {2, 3};
    memcpy(sp.pp, pp, sizeof pp);
    sp.n_pp = 2;
    sp.device_budget = 32;
    r = run(&s, &sp);
    assert_int_equal(r.groups, 4); /* (8, 2) (8, 3) (4, 2) (4, 3) */
    assert_int_equal(r.invalid_plans, 3);
    assert_non_null(strstr(r.first_invalid, "inter_node_bandwidth_Gbps"));
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        assert_true(r.found[m]);
        assert_int_equal(r.best[m].tp, 4);
        assert_int_equal(r.best[m].pp, 2);
        assert_int_equal(r.best[m].group, 2);
    }
    pm_search_result_free(&r);
}

/* The hardware points of a deployment of stages re-use its served points' compiled templates
 * (costed again at each point): every front candidate at either L2 size is pm_serve_compute's
 * steady state of its own scenario (TP 4 x PP 2 at that L2), figure for figure. */
static void test_stages_compiled_points(void **state)
{
    (void)state;
    pm_scenario s = load("llama70b-h100");
    const int tp[] = {4};
    const int64_t chunk[] = {2048};
    const double conc[] = {4, 16, 64};
    pm_search_spec sp = space(&s, tp, 1, chunk, 1, conc, 3);
    sp.pp[0] = 2;
    sp.n_pp = 1;
    sp.threads = 1;
    sp.exhaustive = true;
    pm_error err;
    assert_int_equal(pm_axis_parse("l2=25MiB,100MiB", 0, &sp.hw[0], &err), PM_OK);
    sp.n_hw = 1;
    pm_search_result r = run(&s, &sp);
    pm_axis_release(&sp.hw[0]);
    size_t at_second = 0;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        for (size_t f = 0; f < r.n_front[m]; f++) {
            const pm_search_candidate *k = &r.front[m][f];
            pm_scenario t = s;
            t.cluster.devices = 4;
            t.cluster.pipeline_parallel = 2;
            t.accel.l2_capacity_bytes = k->hw[0];
            at_second += k->hw[0] > 50.0 * 1048576;
            const pm_serve_result one = serve_at(&t, &sp, 2048, k->concurrency);
            assert_memory_equal(&k->figures.ttft_s, &one.modes[m].ttft_s,
                                offsetof(pm_serve_mode, meets_limits));
        }
    assert_true(at_second > 0); /* points costed from the compiled templates were checked */
    pm_search_result_free(&r);
}

/* Pruning over stages: Llama-3-70B on HGX H100 nodes joined by InfiniBand (the stages of TP 8
 * cross nodes), TP 4 and 8 x PP 1, 2 and 4 under a TPOT limit with a TTFT limit, concurrency
 * 1 to 256: the pruned search is the exhaustive one on one thread and on four, and the best
 * per mode is found. */
static void test_pruning_with_stages(void **state)
{
    (void)state;
    const char *ov[] = {"cluster=hgx-h100-ib-ndr"};
    pm_scenario s = pm_test_load("llama70b-h100", ov, 1);
    pm_scenario_release(&s);
    const int tp[] = {4, 8};
    const int64_t chunk[] = {2048};
    const double conc[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096};
    pm_search_spec sp = space(&s, tp, 2, chunk, 1, conc, 11);
    const int pp[] = {1, 2, 4};
    memcpy(sp.pp, pp, sizeof pp);
    sp.n_pp = 3;
    sp.tpot_limit_s = 0.030;
    sp.ttft_limit_s = 2.0;
    check_pruning(&s, &sp);
    pm_search_result r = run(&s, &sp);
    assert_int_equal(r.groups, 6);
    assert_int_equal(r.invalid_plans, 0);
    for (int m = 0; m < PM_MODE_COUNT; m++)
        assert_true(r.found[m]);
    pm_search_result_free(&r);
}

/* Why PRESERVE equals serial for Llama-3.1-405B at TP 8 on H200s, with or without stages:
 * Algorithm 1 fills a window with whole weights while their sum stays below the L2, and the
 * first weight after every window (each allreduce, and a stage's receive) is larger than the
 * H200's 50 MiB. Per device at TP 8 in bf16: QKV = 16384 x (128 + 2 x 8) x 128 x 2 B / 8 =
 * 75497472 B = 72 MiB; Gate = 16384 x 53248 x 2 B / 8 = 218103808 B = 208 MiB. So at 50 MiB
 * nothing is prefetched (PRESERVE's best is serial's, TPOT for TPOT, at TP 8 x PP 4); at
 * 96 MiB the window after the MLP's allreduce (and after a stage's receive) holds QKV and the
 * first KV, and PRESERVE's TPOT falls below serial's: not a bug, the L2 is too small. */
static void test_preserve_needs_a_window_405b(void **state)
{
    (void)state;
    const char *ov[] = {"cluster=hgx-h100-ib-ndr"};
    pm_scenario s = pm_test_load("llama405b-h200", ov, 1);
    pm_scenario_release(&s);
    assert_rel(s.accel.l2_capacity_bytes, 50.0 * 1048576, 0);
    const int tp[] = {8};
    const int64_t chunk[] = {512};
    const double conc[] = {32};
    pm_search_spec sp = space(&s, tp, 1, chunk, 1, conc, 1);
    sp.pp[0] = 4;
    sp.n_pp = 1;
    sp.device_budget = 32;
    pm_search_result r = run(&s, &sp);
    assert_int_equal(r.invalid_plans, 0);
    assert_true(r.found[PM_MODE_SERIAL] && r.found[PM_MODE_PRESERVE]);
    assert_int_equal(r.best[PM_MODE_PRESERVE].pp, 4);
    /* The same steps: PRESERVE's schedule sums the same terms along its own path (the
     * windows' recurrence with nothing prefetched), so they agree to rounding (1e-12). */
    const pm_search_candidate *pr = &r.best[PM_MODE_PRESERVE], *se = &r.best[PM_MODE_SERIAL];
    assert_rel(pr->concurrency, se->concurrency, 0);
    assert_rel(pr->figures.tpot_s, se->figures.tpot_s, 1e-12);
    assert_rel(pr->figures.ttft_s, se->figures.ttft_s, 1e-12);
    assert_rel(pr->objective, se->objective, 1e-12);
    pm_search_result_free(&r);
    pm_scenario t = s; /* 96 MiB: QKV (72 MiB) and the first KV (2 MiB) fit a window */
    t.cluster.pipeline_parallel = 4;
    t.accel.l2_capacity_bytes = 96.0 * 1048576;
    const pm_serve_result one = serve_at(&t, &sp, 512, 32);
    assert_true(one.modes[PM_MODE_PRESERVE].tpot_s < 0.99 * one.modes[PM_MODE_SERIAL].tpot_s);
}

/* ---------------------------------------------------------------- disaggregated */

/* Llama-3-70B on H100 nodes joined by NDR InfiniBand (the link between the pools: the cluster's
 * inter-node link), 16 devices, TP 4 or 8, chunk 2048, prompts of input tokens and output out;
 * disaggregated deployments in the space, a prefill instance loaded at most 0.9. */
static pm_search_spec disagg_space(pm_scenario *s, int64_t input, int64_t output)
{
    const char *ov[] = {"cluster=hgx-h100-ib-ndr"};
    *s = pm_test_load("llama70b-h100", ov, 1);
    pm_scenario_release(s);
    const int tp[] = {4, 8};
    const int64_t chunk[] = {2048};
    const double conc[] = {8, 16, 32, 64, 128};
    pm_search_spec sp = space(s, tp, 2, chunk, 1, conc, 5);
    sp.workload.input_tokens = input;
    sp.workload.output_tokens = output;
    sp.device_budget = 16;
    sp.disagg = true;
    sp.disagg_link.layer_streamed = true;
    sp.disagg_max_load_frac = 0.9;
    return sp;
}

/* The splits of 16 devices over TP 4 and 8, by hand: prefill x TP p + decode y TP d. */
static const int splits16[][4] = {{1, 4, 3, 4}, {2, 4, 2, 4}, {3, 4, 1, 4},
                                  {2, 4, 1, 8}, {1, 8, 2, 4}, {1, 8, 1, 8}};

/* One disaggregated point by hand: pm_disagg_compute of pools of TP p and d, x and y instances
 * fixed, conc sequences per decode instance; false where a pool's HBM does not hold it. */
static bool disagg_at(const pm_scenario *s, const pm_search_spec *sp, const int *split,
                      double conc, pm_disagg_result *r)
{
    pm_scenario p = *s, d = *s;
    p.cluster.devices = split[1];
    d.cluster.devices = split[3];
    pm_disagg_workload w = {
        .input_tokens = sp->workload.input_tokens, .output_tokens = sp->workload.output_tokens,
        .decode_concurrency = conc, .prefill_instances = split[0],
        .decode_instances = split[2], .max_instances = 1, .prefill_max_load_frac = 0.9,
        .ttft_limit_s = sp->ttft_limit_s, .tpot_limit_s = sp->tpot_limit_s,
        .link = {s->cluster.inter_node_bandwidth_bytes_per_s, s->cluster.inter_node_latency_s,
                 true}};
    if (!(w.link.bandwidth_bytes_per_s > 0)) /* one node: inference-sim's link, disagg's */
        w.link = (pm_disagg_link){25e9, 50e-6, true};
    pm_error err;
    const pm_status st = pm_disagg_compute(&p, &d, &w, r, &err);
    if (st != PM_OK && st != PM_ERR_INCONSISTENT)
        fail_msg("pm_disagg_compute: %s", err.message);
    return st == PM_OK;
}

/* Whether a point of objective obj and per-user rate user beats the best so far: more objective,
 * or as much and more tokens/s per user (pools limited by their prefill instances tie on the
 * objective at every decode concurrency: the search keeps the faster, the one on the front). */
static bool beats(double obj, double user, double best, double best_user)
{
    return obj > best || (!(obj < best) && user > best_user);
}

/* The search's best per mode is the brute force's over both layouts (co-located: TP 4 x DP 4
 * and TP 8 x DP 2 at each concurrency; disaggregated: each split of splits16 at each decode
 * concurrency), value and place; disagg_wins says which layout it must be. The best's figures
 * are pm_disagg_compute's or pm_serve_compute's own. */
static void check_disagg_best(const pm_scenario *s, const pm_search_spec *sp, bool disagg_wins)
{
    pm_search_result r = run(s, sp);
    assert_int_equal(r.groups, 2 + 6);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double best = -1, user = 0, ttft = 0, tpot = 0, conc = 0;
        int split = -1, tp = 0;
        for (int i = 0; i < sp->n_concurrency; i++) {
            const double c = sp->concurrency[i];
            for (int t = 0; t < 2; t++) {
                pm_scenario x = *s;
                x.cluster.devices = sp->tp[t];
                const pm_serve_result a = serve_at(&x, sp, 2048, c);
                const pm_serve_mode *f = &a.modes[m];
                if (a.fits_hbm && (!(sp->tpot_limit_s > 0) || f->tpot_s <= sp->tpot_limit_s) &&
                    beats(f->tokens_per_s_per_device, f->tokens_per_s_per_user, best, user)) {
                    best = f->tokens_per_s_per_device;
                    user = f->tokens_per_s_per_user;
                    ttft = f->ttft_s, tpot = f->tpot_s, conc = c, split = -1, tp = sp->tp[t];
                }
            }
            for (int k = 0; k < 6; k++) {
                pm_disagg_result d;
                if (!disagg_at(s, sp, splits16[k], c, &d))
                    continue;
                const pm_disagg_mode *f = &d.modes[m];
                if ((!(sp->tpot_limit_s > 0) || f->tpot_s <= sp->tpot_limit_s) &&
                    beats(f->tokens_per_s_per_device, f->tokens_per_s_per_user, best, user)) {
                    best = f->tokens_per_s_per_device;
                    user = f->tokens_per_s_per_user;
                    ttft = f->ttft_s, tpot = f->tpot_s, conc = c, split = k, tp = 0;
                }
            }
        }
        assert_true(r.found[m]);
        const pm_search_candidate *b = &r.best[m];
        assert_rel(b->objective, best, 0);
        assert_rel(b->figures.ttft_s, ttft, 0);
        assert_rel(b->figures.tpot_s, tpot, 0);
        assert_rel(b->concurrency, conc, 0);
        assert_int_equal(b->tp, tp);
        assert_int_equal(split >= 0, disagg_wins);
        assert_int_equal(b->prefill_instances, split >= 0 ? splits16[split][0] : 0);
        assert_int_equal(b->prefill_tp, split >= 0 ? splits16[split][1] : 0);
        assert_int_equal(b->decode_instances, split >= 0 ? splits16[split][2] : 0);
        assert_int_equal(b->decode_tp, split >= 0 ? splits16[split][3] : 0);
        assert_int_equal(b->dp, split >= 0 ? 1 : 16 / tp);
    }
    pm_search_result_free(&r);
}

/* 8192-token prompts, 256 out, TPOT <= 20 ms: a co-located step that carries a 2048-token
 * chunk of a prompt takes longer than the limit at every concurrency but the smallest, where a
 * decode-only step of the decode pool meets it: the disaggregated deployment wins in every
 * mode. 2048 in and out without a limit: the prompts are a small share of the work and the
 * co-located TP 4 replicas use every device for both, the pools' rate matching at fixed counts
 * leaves one pool idle part of the time: co-located wins. */
static void test_disagg_best_is_brute_force(void **state)
{
    (void)state;
    pm_scenario s;
    pm_search_spec sp = disagg_space(&s, 8192, 256);
    sp.tpot_limit_s = 0.020;
    check_disagg_best(&s, &sp, true);
    sp = disagg_space(&s, 2048, 2048);
    check_disagg_best(&s, &sp, false);
}

static void disagg_row_check(const pm_scenario *sc, pm_search_spec *spp);

/* A disaggregated candidate's row is pm_disagg_compute's for the same pools, figure by figure:
 * each mode's best of the space where the pools win (8192 in, 256 out, TPOT <= 20 ms). Over
 * the NDR nodes' link, and on one NVSwitch baseboard, which has none: inference-sim's 25 GB/s and 50 us,
 * as disagg's (the search refused it). */
static void test_disagg_row_is_disagg_compute(void **state)
{
    (void)state;
    for (int one_node = 0; one_node < 2; one_node++) {
        pm_scenario s;
        pm_search_spec sp = disagg_space(&s, 8192, 256);
        if (one_node) {
            const char *ov[] = {"cluster=nvlink4-nvswitch"};
            s = pm_test_load("llama70b-h100", ov, 1);
            pm_scenario_release(&s);
            assert_false(s.cluster.inter_node_bandwidth_bytes_per_s > 0);
        }
        disagg_row_check(&s, &sp);
    }
    char buf[64];
    pm_search_candidate k = {0};
    assert_int_equal(pm_search_layout(&k, buf, sizeof buf), strlen("colocated"));
    assert_string_equal(buf, "colocated");
    k.prefill_instances = 2, k.prefill_tp = 4, k.decode_instances = 1, k.decode_tp = 8;
    assert_int_equal(pm_search_layout(&k, buf, 5), strlen("P2xTP4+D1xTP8"));
    assert_string_equal(buf, "P2xT");
    pm_search_layout(&k, buf, sizeof buf);
    assert_string_equal(buf, "P2xTP4+D1xTP8");
}

static void disagg_row_check(const pm_scenario *sc, pm_search_spec *spp)
{
    pm_scenario s = *sc;
    pm_search_spec sp = *spp;
    sp.tpot_limit_s = 0.020;
    pm_search_result r = run(&s, &sp);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_search_candidate *k = &r.best[m];
        assert_true(k->prefill_instances > 0);
        const int split[4] = {k->prefill_instances, k->prefill_tp, k->decode_instances,
                              k->decode_tp};
        pm_disagg_result d;
        assert_true(disagg_at(&s, &sp, split, k->concurrency, &d));
        const pm_disagg_mode *f = &d.modes[m];
        const pm_serve_mode *x = &k->figures;
        assert_rel(x->ttft_s, f->ttft_s, 0);
        assert_rel(x->tpot_s, f->tpot_s, 0);
        assert_rel(x->tpot_max_s, f->tpot_s, 0); /* every gap a decode step */
        assert_rel(x->e2e_s, f->e2e_s, 0);
        assert_rel(x->decode_step_s, f->decode_step_s, 0);
        assert_rel(x->requests_per_s, f->requests_per_s, 0);
        assert_rel(x->tokens_per_s, f->tokens_per_s, 0);
        assert_rel(x->tokens_per_s_per_device, f->tokens_per_s_per_device, 0);
        assert_rel(x->tokens_per_s_per_user, f->tokens_per_s_per_user, 0);
        assert_rel(x->tokens_per_s_per_mm2, f->tokens_per_s_per_mm2, 0);
        assert_rel(x->tokens_per_J, f->tokens_per_J, 0);
        assert_rel(x->in_flight, f->decode_in_flight * f->decode_instances, 0);
        /* Its devices are the budget's: x p + y d = 16, the figures the whole deployment's. */
        assert_rel(f->devices, 16, 0);
        assert_rel(x->tokens_per_s / x->tokens_per_s_per_device, 16, 1e-12);
        assert_int_equal(k->dp, 1);
        assert_int_equal(k->chunk, 0);
        bool on_front = false; /* the best among equal objectives is the faster: on the front */
        for (size_t i = 0; i < r.n_front[m]; i++)
            on_front = on_front || (r.front[m][i].group == k->group &&
                                    !(r.front[m][i].concurrency < k->concurrency) &&
                                    !(r.front[m][i].concurrency > k->concurrency));
        assert_true(on_front);
    }
    pm_search_result_free(&r);
}

/* With disaggregated candidates the pruned search is the exhaustive one (the HBM and TPOT cut
 * the decode concurrencies of a split), and three shards merged are the whole search. */
static void test_disagg_pruning_and_shards(void **state)
{
    (void)state;
    pm_scenario s;
    pm_search_spec sp = disagg_space(&s, 8192, 256);
    const double conc[] = {8, 16, 32, 64, 128, 256, 512};
    memcpy(sp.concurrency, conc, sizeof conc);
    sp.n_concurrency = 7;
    sp.tpot_limit_s = 0.030;
    check_pruning(&s, &sp);
    sp.threads = 2;
    pm_search_result whole = run(&s, &sp), merged;
    memset(&merged, 0, sizeof merged);
    pm_error err;
    for (size_t k = 0; k < 3; k++) {
        sp.shard_index = k;
        sp.shard_count = 3;
        pm_search_result part = run(&s, &sp);
        assert_int_equal(pm_search_merge(&merged, &part, &err), PM_OK);
        pm_search_result_free(&part);
    }
    assert_same_search(&merged, &whole);
    pm_search_result_free(&merged);
    pm_search_result_free(&whole);
}

/* What a disaggregated deployment does not model is refused, naming the key. */
static void test_disagg_refusals(void **state)
{
    (void)state;
    pm_scenario s;
    pm_search_spec sp = disagg_space(&s, 2048, 256);
    pm_search_result r;
    pm_error err;
    sp.device_budget = 0;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "device_budget");
    sp.device_budget = 16;
    sp.workload.output_tokens = 1; /* the first token is the prefill pool's */
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "input_tokens");
    sp.workload.output_tokens = 256;
    sp.disagg_max_load_frac = 0;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_INVALID_ARG);
    assert_string_equal(err.path, "prefill_max_load_frac");
    sp.disagg_max_load_frac = 0.9;
    sp.workload.n_classes = 2;
    sp.workload.classes[0] = (pm_length_class){2048, 256, 0.5};
    sp.workload.classes[1] = (pm_length_class){512, 512, 0.5};
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "workload.classes");
    sp.workload.n_classes = 0;
    sp.workload.arrival = PM_SERVE_WAVE;
    assert_int_equal(pm_search_run(&s, &sp, &r, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "workload.arrival");
    sp.workload.arrival = PM_SERVE_STAGGERED;
    pm_scenario t = s;
    t.cluster.attention_data_parallel = true;
    assert_int_equal(pm_search_run(&t, &sp, &r, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.cluster.attention_data_parallel");
    /* One NVSwitch node, no link between nodes: disagg's default link (it was refused; the
     * rows by hand in test_disagg_row_is_disagg_compute), or the one given. */
    t = load("llama70b-h100");
    assert_int_equal(pm_search_run(&t, &sp, &r, &err), PM_OK);
    pm_search_result_free(&r);
    sp.disagg_link.bandwidth_bytes_per_s = 50e9;
    assert_int_equal(pm_search_run(&t, &sp, &r, &err), PM_OK);
    pm_search_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_best_is_brute_force),
        cmocka_unit_test(test_front_is_pareto),
        cmocka_unit_test(test_pruning_is_lossless),
        cmocka_unit_test(test_speculation_searched),
        cmocka_unit_test(test_budget_replicas),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_shards_merge),
        cmocka_unit_test(test_pp_one_is_default),
        cmocka_unit_test(test_stages_are_served),
        cmocka_unit_test(test_stages_compiled_points),
        cmocka_unit_test(test_pruning_with_stages),
        cmocka_unit_test(test_preserve_needs_a_window_405b),
        cmocka_unit_test(test_disagg_best_is_brute_force),
        cmocka_unit_test(test_disagg_row_is_disagg_compute),
        cmocka_unit_test(test_disagg_pruning_and_shards),
        cmocka_unit_test(test_disagg_refusals),
        cmocka_unit_test(test_front_is_the_sort),
        cmocka_unit_test(test_merged_front_is_the_sort),
        cmocka_unit_test(test_front_grown_part_by_part_is_the_sort),
        cmocka_unit_test(test_points_moved_are_served),
        cmocka_unit_test(test_l2_walked_fastest),
        cmocka_unit_test(test_warns_unbuildable_chip),
        cmocka_unit_test(test_warns_free_bandwidth),
        cmocka_unit_test(test_warns_uneven_best),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
