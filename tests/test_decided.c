/*
 * test_decided.c - PRESERVE's decisions and traffic at a hardware point taken once
 * (step_plan.c's pm_step_plan_modes, issue 46 item 3): each mode's time and traffic equal, bit
 * for bit, those of pm_step_plan_time and pm_step_plan_traffic mode by mode; and in a plan's
 * room costed again from its template along the L2 capacity, as serve.c's compiled points are,
 * Algorithm 1's decisions kept within the capacities that take them (pm_step_decided) and the
 * traffic's sum kept with them give the same numbers as a plan built afresh at every point,
 * across capacities where the decisions change.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "internal.h"
#include "testutil.h"

static pm_scenario load(const char *name)
{
    pm_scenario s = pm_test_load(name, NULL, 0);
    pm_scenario_release(&s);
    s.provenance = NULL;
    return s;
}

static void set_l2(pm_scenario *t, double mib)
{
    pm_error err;
    if (pm_scenario_set_axis(t, PM_AXIS_L2, mib * 1048576.0, &err) != PM_OK)
        fail_msg("pm_scenario_set_axis: %s", err.message);
}

/* What a walk along the L2 saw: the points, those whose decisions were kept from the point
 * before (the capacity in the kept range), and the distinct decision signatures. */
typedef struct walk {
    int points, kept;
    unsigned sigs[64];
    int n_sigs;
} walk;

static void note_sig(walk *w, unsigned sig)
{
    for (int i = 0; i < w->n_sigs; i++)
        if (w->sigs[i] == sig)
            return;
    if (w->n_sigs < 64)
        w->sigs[w->n_sigs++] = sig;
}

/* The step of s's scenario in phase at context ctx, at every L2 capacity of mib[0..n): costed
 * from the first point's template in one room (room[0], fused room[1]) and served by
 * pm_step_plan_modes; each point compared, every mode's time and traffic, with a plan built
 * afresh there (room[2], fused room[3]) timed and counted mode by mode. */
static walk walk_l2(const char *name, pm_phase phase, int64_t ctx, const double *mib, int n)
{
    pm_scenario s = load(name);
    pm_step_plan *room = malloc(4 * sizeof *room);
    pm_template *slot = malloc(sizeof *slot);
    assert_non_null(room);
    assert_non_null(slot);
    walk w = {0};
    for (int k = 0; k < n; k++) {
        set_l2(&s, mib[k]);
        pm_step step;
        assert_int_equal(pm_step_of(&s, phase, ctx, &step, NULL), PM_OK);
        if (k == 0) {
            assert_int_equal(pm_step_plan_build(&s, &step, false, true, &room[0], NULL), PM_OK);
        } else {
            assert_int_equal(
                pm_step_plan_build_from(&s, NULL, &step, slot, true, &room[0], NULL), PM_OK);
        }
        pm_step_plan_count(&room[0]);
        pm_step_plan_fuse(&room[0], &room[1]);
        if (k == 0)
            *slot = room[0].tmpl;
        const pm_step_decided *d = &room[0].decided;
        w.kept += d->ready && d->cap_lo < room[0].cap && room[0].cap <= d->cap_hi;
        double t[PM_MODE_COUNT];
        pm_traffic tr[PM_MODE_COUNT];
        assert_int_equal(pm_step_plan_modes(&room[0], &room[1], step.context, t, tr, NULL),
                         PM_OK);

        assert_int_equal(pm_step_plan_build(&s, &step, false, true, &room[2], NULL), PM_OK);
        pm_step_plan_count(&room[2]);
        pm_step_plan_fuse(&room[2], &room[3]);
        const pm_step_plan *of[PM_MODE_COUNT] = {&room[2], &room[3], &room[2]};
        for (int mode = 0; mode < PM_MODE_COUNT; mode++) {
            const bool preserve = mode == PM_MODE_PRESERVE;
            double ref_t;
            pm_traffic ref_tr;
            assert_int_equal(pm_step_plan_time(of[mode], preserve, step.context, &ref_t, NULL),
                             PM_OK);
            pm_step_plan_traffic(of[mode], preserve, step.context, &ref_tr);
            if (memcmp(&ref_t, &t[mode], sizeof ref_t) != 0 ||
                memcmp(&ref_tr, &tr[mode], sizeof ref_tr) != 0)
                fail_msg("%s at %g MiB, mode %d: time %.17g against %.17g, HBM bytes %.17g "
                         "against %.17g (or another field of the traffic)",
                         name, mib[k], mode, t[mode], ref_t, tr[mode].hbm_bytes,
                         ref_tr.hbm_bytes);
        }
        note_sig(&w, pm_step_plan_signature(&room[2], step.context, NULL));
        w.points++;
    }
    free(slot);
    free(room);
    return w;
}

/* Up the L2 in 4 MiB steps, down in 12 MiB steps, and up again: the capacities cross the
 * decisions' changes in both directions and revisit ranges kept before. */
static int l2_grid(double *mib)
{
    int n = 0;
    for (double m = 1.0; m <= 256.0; m += 4.0)
        mib[n++] = m;
    for (double m = 250.0; m >= 2.0; m -= 12.0)
        mib[n++] = m;
    for (double m = 3.0; m <= 200.0; m += 16.0)
        mib[n++] = m;
    return n;
}

/* Llama-3-70B's decode step: the decisions change along the grid (nothing prefetched at 1 MiB,
 * prefetches at 256 MiB: test_compiled.c's grids), are kept at most of its points, and every
 * figure is the fresh plan's. */
static void test_decode_decisions_kept_along_the_l2(void **state)
{
    (void)state;
    double mib[256];
    const int n = l2_grid(mib);
    const walk w = walk_l2("llama70b", PM_PHASE_DECODE, 4096, mib, n);
    assert_int_equal(w.points, n);
    assert_true(w.n_sigs >= 3);
    assert_true(w.kept > n / 2);
    assert_true(w.kept < n);
}

/* The same for a prefill step (its GEMMs' tiling bound reads the L2: the HBM bytes summed
 * again per point differ from the kept sum's) and a MoE model's decode step (both MLP classes'
 * decisions, the lead windows into the next layer's class). */
static void test_prefill_and_moe_decisions_kept(void **state)
{
    (void)state;
    double mib[256];
    const int n = l2_grid(mib);
    walk w = walk_l2("llama70b", PM_PHASE_PREFILL, 2048, mib, n);
    assert_true(w.n_sigs >= 2);
    assert_true(w.kept > 0);
    w = walk_l2("mixtral8x7b", PM_PHASE_DECODE, 2048, mib, n);
    assert_true(w.n_sigs >= 2);
    assert_true(w.kept > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_decisions_kept_along_the_l2),
        cmocka_unit_test(test_prefill_and_moe_decisions_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
