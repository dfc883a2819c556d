/*
 * moe.c - the mixture-of-experts routing: how many distinct experts a step's tokens touch,
 * over all devices and on the busiest expert-parallel rank
 * (shared/reference/moe-attention-energy-cost.md section 1.3). Which layers are MoE layers is
 * model.c's, the expert-parallel ranks plan.c's.
 *
 * Under top-k routing each token picks k distinct experts out of E; an expert i with chance
 * pi_i per token (k / E when routing is uniform, min(1, k w_i) under the power-law skew) is
 * touched by T independent tokens with probability p_i = 1 - (1 - pi_i)^T, so the expected
 * number of distinct experts is sum_i p_i = E (1 - (1 - k/E)^T) when uniform. A step lasts as
 * long as its slowest device, so what sets the expert reads is the busiest rank's count, which
 * has no closed form. The approximation used, deterministic and cheap (O(E x E/ep) once per
 * plan): a rank's count is the sum of its experts' indicators taken as independent (binomial
 * when uniform, Poisson binomial under skew), the ranks taken as independent of each other,
 * and the expectation of their maximum is sum_d (1 - prod_r F_r(d - 1)). Two errors cancel:
 * one token's picks are negatively correlated within a rank and across ranks. Checked against
 * the Monte-Carlo table of the reference (2000 trials) in tests/test_moe.c: within 2%, except
 * where a rank holds a single expert and the picks spread deterministically (Mixtral at EP8:
 * the two picks of one token always reach two ranks), which the pigeonhole floor ceil(k / ep)
 * fixes exactly.
 *
 * May call: error.c, plan.c.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/* Each expert's chance to be picked by one token (pi_i) under the skew, in popularity order:
 * k w_i / sum w, with w_i = (i + 1)^-alpha, except that no chance exceeds 1. A token picks k
 * distinct experts, so the chances sum to k: the chance the most popular experts cannot take
 * (k w_i / sum w > 1) goes to the others in proportion to their weights (water-filling: the
 * first m capped at 1, the rest (k - m) w_i / sum_{j >= m} w_j, m the fewest that leaves no
 * other above 1). It was cut off: DeepSeek-V3 at alpha 1.2 read 6.97 of its 8 experts a token. */
static void pick_chances(int E, int k, double alpha, double *pi)
{
    if (!(alpha > 0)) {
        for (int i = 0; i < E; i++)
            pi[i] = (double)k / E;
        return;
    }
    double tail = 0.0; /* sum of the weights from m on */
    for (int i = 0; i < E; i++)
        tail += pi[i] = pow(i + 1.0, -alpha);
    int m = 0; /* the weights fall with i: the capped are a prefix */
    while (m < k && m < E && (k - m) * pi[m] > tail) {
        tail -= pi[m];
        m++;
    }
    for (int i = 0; i < E; i++)
        pi[i] = i < m ? 1.0 : (k - m) * pi[i] / tail;
}

/* The CDF of the number of indicators set among n with probabilities p[0..n), independent
 * (a Poisson binomial, by the usual O(n^2) recurrence), into cdf[0..n]. */
static void poisson_binomial_cdf(const double *restrict p, int n, double *restrict pmf,
                                 double *restrict cdf)
{
    /* Every indicator surely set (a prefill's many tokens touch every expert): the recurrence
     * below would move the mass up one count per indicator, exactly, to all n. */
    bool all = true;
    for (int i = 0; i < n && all; i++)
        all = p[i] >= 1.0;
    if (all) {
        for (int j = 0; j <= n; j++)
            pmf[j] = cdf[j] = j < n ? 0.0 : 1.0;
        return;
    }
    pmf[0] = 1.0;
    for (int i = 0; i < n; i++) {
        const double on = p[i], off = 1.0 - on; /* locals: pmf cannot change them */
        pmf[i + 1] = 0.0;
        for (int j = i + 1; j >= 1; j--)
            pmf[j] = pmf[j] * off + pmf[j - 1] * on;
        pmf[0] *= off;
    }
    double acc = 0.0;
    for (int j = 0; j <= n; j++) {
        acc += pmf[j];
        cdf[j] = acc < 1.0 ? acc : 1.0;
    }
}

pm_status pm_moe_reads_compute(const pm_scenario *s, double tokens, pm_moe_reads *out,
                               pm_error *err)
{
    if (!s || !out || !(tokens > 0) || !(tokens < INFINITY))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "bad argument to pm_moe_reads_compute");
    memset(out, 0, sizeof *out);
    const pm_model *m = &s->model;
    if (m->experts < 1)
        return PM_OK;
    const int E = m->experts, k = m->experts_per_token, ep = pm_cluster_ep(&s->cluster);
    if (E > PM_MAX_EXPERTS || k < 1 || k > E || E % ep != 0)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "$.model.num_experts",
                       "%d experts, top-%d, %d expert-parallel ranks: not a valid MoE split",
                       E, k, ep);
    const int El = E / ep;
    /* Copies of a sequence route alike: the draws are the distinct sequences' tokens; every
     * token still takes its k slots (token_slots below). */
    const pm_workload *w = &s->workload;
    const double slot_tokens = tokens;
    if (w->distinct_sequences > 0 && w->distinct_sequences < w->batch)
        tokens *= (double)w->distinct_sequences / (double)w->batch;
    double pi[PM_MAX_EXPERTS], p[PM_MAX_EXPERTS];
    pick_chances(E, k, s->workload.routing_skew_alpha, pi);
    double touched = 0.0, slots = 0.0;
    const bool uniform = !(s->workload.routing_skew_alpha > 0);
    /* Uniform routing gives every expert the same chance: one evaluation serves all, and
     * every rank's sums below are the same terms in the same order, so the first rank's serve
     * (only its chances are filled in). */
    const double p0 = !uniform ? 0.0 : pi[0] >= 1.0 ? 1.0 : -expm1(tokens * log1p(-pi[0]));
    if (uniform) {
        for (int i = 0; i < El; i++)
            p[i] = p0;
        for (int i = 0; i < E; i++)
            touched += p0;
    } else {
        for (int i = 0; i < E; i++) {
            p[i] = pi[i] >= 1.0 ? 1.0 : -expm1(tokens * log1p(-pi[i]));
            touched += p[i];
        }
    }
    for (int r = 0; r < (uniform ? 1 : ep); r++) {
        double sl = 0.0;
        for (int i = r * El; i < (r + 1) * El; i++)
            sl += pi[i];
        if (sl > slots)
            slots = sl;
    }
    out->experts_touched = touched;
    out->experts_local = El;
    out->experts_mean = touched / ep;
    out->token_slots = slot_tokens * slots;
    out->upper_bound = El < tokens * k ? El : tokens * k;
    if (ep == 1) {
        out->experts_read = touched; /* one rank: its count's expectation */
        return PM_OK;
    }
    /* prod_r F_r(d), accumulated rank by rank (uniform: every rank alike, one power). */
    double prod[PM_MAX_EXPERTS + 1], pmf[PM_MAX_EXPERTS + 1], cdf[PM_MAX_EXPERTS + 1];
    for (int d = 0; d <= El; d++)
        prod[d] = 1.0;
    for (int r = 0; r < (uniform ? 1 : ep); r++) {
        poisson_binomial_cdf(&p[r * El], El, pmf, cdf);
        /* The CDF reaches 1 (clamped): pow(1, ep) is 1; below the counts a rank surely
         * exceeds (a prefill) it is 0: pow(0, ep) is 0. */
        for (int d = 0; d <= El; d++)
            prod[d] *= uniform && cdf[d] < 1.0 && cdf[d] > 0.0 ? pow(cdf[d], ep) : cdf[d];
    }
    double emax = 0.0;
    for (int d = 1; d <= El; d++)
        emax += 1.0 - prod[d - 1];
    /* A token's k distinct picks put ceil(k / ep) on some rank (capped by what a rank holds). */
    double floor_d = tokens >= 1.0 ? ceil((double)k / ep) : 0.0;
    if (floor_d > El)
        floor_d = El;
    out->experts_read = emax > floor_d ? emax : floor_d;
    return PM_OK;
}
