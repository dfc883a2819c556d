/*
 * testutil.h - helpers shared by the cmocka suites: a relative-tolerance comparison for model
 * numbers (cmocka 1.1.5's assert_float_equal works in float with an absolute epsilon, which is
 * useless for seconds and bytes), and a minimal scenario built by hand.
 */
#ifndef PM_TESTUTIL_H
#define PM_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "preserve_model.h"

/* Fails, printing expected, actual and the relative error, unless |a - e| <= rel * |e|
 * (or both are 0). */
#define assert_rel(actual, expected, rel) \
    pm_assert_rel((actual), (expected), (rel), #actual, __FILE__, __LINE__)

static inline void pm_assert_rel(double a, double e, double rel, const char *what,
                                 const char *file, int line)
{
    double err = fabs(e) > 0 ? fabs(a - e) / fabs(e) : fabs(a);
    if (!(err <= rel)) {
        print_error("%s: expected %.17g, got %.17g (relative error %.3g > %.3g)\n", what, e, a,
                    err, rel);
        _fail(file, line);
    }
}

/* The data directory of the source tree (meson passes it). */
#ifndef PM_TEST_DATA_DIR
#define PM_TEST_DATA_DIR "data"
#endif
#ifndef PM_TEST_CONFIG_DIR
#define PM_TEST_CONFIG_DIR "tests/configs"
#endif

/* Loads a bundled scenario (with optional overrides) or fails the test with the message. */
static inline pm_scenario pm_test_load(const char *name, const char *const *ov, size_t n_ov)
{
    pm_scenario s;
    pm_error err;
    const pm_load_opts opts = {PM_TEST_DATA_DIR, ov, n_ov};
    pm_status st = pm_scenario_load(name, &opts, &s, &err);
    if (st != PM_OK)
        fail_msg("pm_scenario_load(%s): %s: %s", name, pm_status_name(st), err.message);
    return s;
}

/* Speculative decoding (issue 45): k drafted tokens at one acceptance rate a, the target's MTP
 * heads (one layer; the model given one where it has none, a what-if). */
static inline void pm_test_speculate(pm_scenario *s, int k, double a)
{
    if (s->model.mtp_layers < 1)
        s->model.mtp_layers = 1;
    memset(&s->spec, 0, sizeof s->spec);
    s->spec.draft_tokens = k;
    s->spec.n_acceptance = 1;
    s->spec.acceptance[0] = a;
    s->spec.method = PM_SPEC_MTP;
    s->spec.mtp_layers = 1;
}

/* test_graph.c's hand scenario: hidden 1024, 8 heads, 2 KV heads, head_dim 128, intermediate
 * 4096, vocab 8192, gated MLP, 2 layers, int8 everywhere, batch 2, sequence 600 (half prompt),
 * 8 MiB of L2, a full mesh of `devices`: the numbers test_graph.c and test_architectures.c
 * work out by hand. */
static inline pm_scenario pm_test_hand_scenario(int devices)
{
    pm_scenario s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "hand");
    pm_model *m = &s.model;
    snprintf(m->name, sizeof m->name, "hand-model");
    m->layers = 2;
    m->hidden = 1024;
    m->heads = 8;
    m->kv_heads = 2;
    m->head_dim = 128;
    m->intermediate = 4096;
    m->vocab = 8192;
    m->gated_mlp = true;
    pm_accelerator *a = &s.accel;
    snprintf(a->name, sizeof a->name, "hand-accel");
    a->peak_flop_per_s[PM_DTYPE_INT8] = 1e15;
    a->compute_efficiency_frac = 1.0;
    a->hbm_capacity_bytes = 64e9;
    a->hbm_bandwidth_bytes_per_s = 1e12;
    a->hbm_efficiency_frac = 1.0;
    a->l2_capacity_bytes = 8.0 * 1048576.0;
    a->l2_bandwidth_bytes_per_s = 4e12;
    a->l2_usable_frac = 1.0;
    a->kv_strided_efficiency_frac = 0.5;
    pm_cluster *c = &s.cluster;
    c->devices = devices;
    c->topology = PM_TOPO_FULL_MESH;
    c->algorithm = PM_AR_AUTO;
    c->link_bandwidth_bytes_per_s = 1e11;
    c->link_latency_s = 1e-5;
    pm_workload *w = &s.workload;
    w->batch = 2;
    w->seq_len = 600;
    w->prefill_frac = 0.5;
    w->weight_dtype = w->kv_dtype = w->act_dtype = PM_DTYPE_INT8;
    return s;
}

#ifdef PM_INTERNAL_H
/* Fails unless the fast path (pm_decode_step_time) and the graph path (pm_step_time_graph) give
 * the same decode step time, within 1e-12 (they sum the same terms in another order), in every
 * mode at each of the n contexts. Needs src/internal.h included first. */
static inline void pm_test_fast_matches_graph(const pm_scenario *s, const int64_t *ctxs,
                                              size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            double fast, ref;
            pm_error err;
            if (pm_decode_step_time(s, (pm_mode)m, ctxs[i], &fast, &err) != PM_OK)
                fail_msg("pm_decode_step_time: %s", err.message);
            if (pm_step_time_graph(s, (pm_mode)m, PM_PHASE_DECODE, ctxs[i], &ref, NULL, &err) !=
                PM_OK)
                fail_msg("pm_step_time_graph: %s", err.message);
            if (!(fabs(fast - ref) <= 1e-12 * ref))
                fail_msg("%s: %s at context %lld: fast %.17g, graph %.17g", s->model.name,
                         pm_mode_name((pm_mode)m), (long long)ctxs[i], fast, ref);
        }
}

/* The closed-form decode sums of pm_estimate_compute (serial, fused, and PRESERVE where nothing
 * is prefetched) against the graph path's step times at every decode context, added in long
 * double: within PM_CLOSED_FORM_REL_TOL (the header's contract). Returns the largest relative
 * difference seen. */
static inline double pm_test_closed_form_matches_graph(const pm_scenario *s)
{
    pm_estimate e;
    pm_error err;
    if (pm_estimate_compute(s, &e, &err) != PM_OK)
        fail_msg("pm_estimate_compute: %s", err.message);
    double worst = 0.0;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        if (m == PM_MODE_PRESERVE && s->cluster.devices > 1)
            continue; /* prefetches: summed by evaluations, not in closed form */
        long double sum = 0.0L;
        for (int64_t c = e.prefill_tokens; c < s->workload.seq_len; c++) {
            double t;
            if (pm_step_time_graph(s, (pm_mode)m, PM_PHASE_DECODE, c, &t, NULL, &err) != PM_OK)
                fail_msg("pm_step_time_graph: %s", err.message);
            sum += t;
        }
        const double ref = (double)sum, got = e.modes[m].decode_s;
        const double rel = fabs(got - ref) / ref;
        if (!(rel <= PM_CLOSED_FORM_REL_TOL))
            fail_msg("%s: %s decode sum %.17g, graph path's steps %.17g (relative %.3g)",
                     s->model.name, pm_mode_name((pm_mode)m), got, ref, rel);
        worst = rel > worst ? rel : worst;
    }
    return worst;
}
#endif

#endif
