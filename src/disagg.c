/*
 * disagg.c - a disaggregated deployment (issue 45; reference serving-parallelism.md section 4):
 * a prefill pool and a decode pool, each its own scenario (chip, plan, runtime) and instance
 * count, joined by the link that carries each request's KV cache (collective.c's
 * pm_kv_transfer_time). A prefill instance serves whole prompts one at a time and queues them
 * as an M/D/1 server (DistServe, OSDI'24); a decode instance runs decode-only steps. Both
 * steps are pm_mixed_step_time's (serve.c), so every mode (serial, fused, PRESERVE) is
 * computed side by side; the KV bytes of a request are footprint.c's. The pools' rates are
 * matched (the fewest instances for a target rate, or the ratio of the most throughput per
 * device), and the whole deployment's throughput per device, mm2, dollar and joule reported.
 * When the pools speculate (speculate.c), a decode step is a verify step of k + 1 tokens per
 * sequence plus the draft's steps, a request decodes in (output - 1) / E of them, and the
 * prefill pool computes the draft's cache of the prompt beside the target's and sends both.
 *
 * May call: alloc.c, area.c, check.c, collective.c, die_cost.c, dtype.c, energy.c, error.c,
 * footprint.c, plan.c, runtime.c, serve.c, speculate.c, step.c, step_plan.c, workload.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* What a pool's chip adds: die area, device price, static power; and its devices. */
typedef struct pool {
    const pm_scenario *s;
    const char *name; /* "prefill", "decode" */
    int devices;
    double die_mm2, device_usd, p_static_W;
    bool energy;
} pool;

/* Prefixes err's message with the pool's name (a pool's own error says which pool). */
static pm_status in_pool(const char *name, pm_status st, pm_error *err)
{
    if (st != PM_OK && err) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s pool: %s", name, err->message);
        memcpy(err->message, msg, sizeof msg);
    }
    return st;
}

static pm_status pool_init(const pm_scenario *s, const char *name, pool *p, pm_error *err)
{
    *p = (pool){.s = s, .name = name, .devices = s->cluster.devices};
    pm_status st = pm_scenario_check(s, err);
    if (st == PM_OK)
        st = pm_plan_refuse_stages(s, "a disaggregated pool", err);
    if (st == PM_OK)
        st = pm_plan_refuse_replicas(s, "a disaggregated pool", err);
    if (st == PM_OK)
        st = pm_plan_refuse_attention_dp(s, "a disaggregated pool", err);
    if (st == PM_OK && s->accel.area.present) {
        pm_area a;
        if ((st = pm_area_compute(&s->accel, &a, err)) == PM_OK)
            p->die_mm2 = a.die_mm2;
    }
    if (st == PM_OK && s->accel.cost.present) {
        pm_device_cost c;
        if ((st = pm_device_cost_compute(&s->accel, &c, err)) == PM_OK)
            p->device_usd = c.device_usd;
    }
    p->energy = s->accel.energy.present;
    if (st == PM_OK && p->energy)
        st = pm_static_power(&s->accel, &p->p_static_W, err);
    return in_pool(name, st, err);
}

/* The pools speculate alike or not at all: the prefill pool computes the draft's cache of the
 * prompt (a decode pool prefilling its own draft, or a prefill pool's draft work thrown away, is
 * not modelled). The acceptance and the drafted tokens are the decode pool's. */
static pm_status same_draft(const pm_scenario *a, const pm_scenario *b, pm_error *err)
{
    const pm_speculation *x = &a->spec, *y = &b->spec;
    const bool on = pm_spec_active(a), alike = on == pm_spec_active(b);
    if (alike && (!on || (x->method == y->method &&
                          (x->method == PM_SPEC_MTP
                               ? x->mtp_layers == y->mtp_layers
                               : strcmp(x->draft.name, y->draft.name) == 0 &&
                                     x->draft.layers == y->draft.layers &&
                                     x->draft.hidden == y->draft.hidden))))
        return PM_OK;
    return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "prefill.speculative",
                   "the pools of a disaggregated deployment speculate alike (the prefill pool "
                   "computes the draft's cache of the prompt and sends it with the target's): "
                   "give the prefill scenario the decode scenario's speculative block (prefill: "
                   "%s, decode: %s)",
                   on ? pm_spec_method_name(x->method) : "none",
                   pm_spec_active(b) ? pm_spec_method_name(y->method) : "none");
}

/* The pools serve one model with one KV datatype: the cache one computes, the other reads. */
static pm_status check_same(const pm_scenario *a, const pm_scenario *b, pm_error *err)
{
    const pm_model *x = &a->model, *y = &b->model;
    const bool same = strcmp(x->name, y->name) == 0 && x->layers == y->layers &&
                      x->hidden == y->hidden && x->heads == y->heads &&
                      x->kv_heads == y->kv_heads && x->head_dim == y->head_dim &&
                      x->intermediate == y->intermediate && x->vocab == y->vocab &&
                      x->kv_lora_rank == y->kv_lora_rank && x->experts == y->experts;
    if (!same)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "decode.model",
                       "the pools of a disaggregated deployment serve one model (prefill: %s, "
                       "decode: %s)",
                       x->name, y->name);
    if (a->workload.kv_dtype != b->workload.kv_dtype)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "decode.workload.kv_dtype",
                       "the decode pool reads the cache the prefill pool writes: their KV "
                       "datatypes must agree (prefill %s, decode %s)",
                       pm_dtype_name(a->workload.kv_dtype), pm_dtype_name(b->workload.kv_dtype));
    return same_draft(a, b, err);
}

void pm_disagg_workload_defaults(const pm_scenario *prefill, pm_disagg_workload *w)
{
    if (!prefill || !w)
        return; /* nothing to fill, or nothing to fill it from */
    if (w->input_tokens == 0)
        w->input_tokens = pm_workload_prompt_tokens(&prefill->workload);
    if (w->output_tokens == 0) {
        const int64_t d = pm_workload_decode_steps(&prefill->workload);
        w->output_tokens = d < 2 ? 2 : d;
    }
    const pm_cluster *c = &prefill->cluster;
    const bool nic = c->inter_node_bandwidth_bytes_per_s > 0;
    if (isnan(w->link.bandwidth_bytes_per_s))
        w->link.bandwidth_bytes_per_s =
            nic ? c->inter_node_bandwidth_bytes_per_s : PM_DISAGG_LINK_BYTES_PER_S;
    if (isnan(w->link.latency_s))
        w->link.latency_s = nic ? c->inter_node_latency_s : PM_DISAGG_LINK_LATENCY_S;
}

bool pm_disagg_workload_warning(const pm_scenario *prefill, const pm_disagg_workload *w,
                                char *note, size_t n)
{
    if (!prefill || !w)
        return false;
    const pm_serve_workload sw = {.input_tokens = w->input_tokens,
                                  .output_tokens = w->output_tokens};
    return pm_serve_workload_warning(prefill, &sw, note, n);
}

pm_status pm_disagg_workload_check(const pm_disagg_workload *w, pm_error *err)
{
    const int64_t max_tokens = (int64_t)1 << 40;
    if (w->input_tokens < 1 || w->input_tokens > max_tokens || w->output_tokens < 2 ||
        w->output_tokens > max_tokens)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "input_tokens",
                       "input tokens must be in [1, 2^40] and output tokens in [2, 2^40] (got "
                       "%lld and %lld)",
                       (long long)w->input_tokens, (long long)w->output_tokens);
    const double c = w->decode_concurrency;
    if (!(c >= 0 && c <= 1e9) || (c > 0 && c < 1))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "decode_concurrency",
                       "must be 0 (the HBM's most) or in [1, 1e9] (got %g)",
                       w->decode_concurrency);
    if (!(w->request_rate_per_s >= 0 && w->request_rate_per_s <= 1e12))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "request_rate_per_s",
                       "must be in [0, 1e12] (got %g)", w->request_rate_per_s);
    const bool fixed = w->prefill_instances > 0 || w->decode_instances > 0;
    if (fixed && !(w->prefill_instances >= 1 && w->decode_instances >= 1 &&
                   w->prefill_instances <= PM_DISAGG_MAX_INSTANCES &&
                   w->decode_instances <= PM_DISAGG_MAX_INSTANCES))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "prefill_instances",
                       "fixed instance counts are both in [1, %d] (got %d and %d)",
                       PM_DISAGG_MAX_INSTANCES, w->prefill_instances, w->decode_instances);
    if (!fixed && !(w->max_instances >= 1 && w->max_instances <= PM_DISAGG_MAX_INSTANCES))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "max_instances",
                       "must be in [1, %d] (got %d)", PM_DISAGG_MAX_INSTANCES, w->max_instances);
    if (!(w->prefill_max_load_frac > 0 && w->prefill_max_load_frac <= 1))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "prefill_max_load_frac",
                       "must be in (0, 1] (got %g)", w->prefill_max_load_frac);
    if (!(w->ttft_limit_s >= 0 && w->ttft_limit_s < INFINITY && w->tpot_limit_s >= 0 &&
          w->tpot_limit_s < INFINITY))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "ttft_limit_s",
                       "latency limits must be finite and >= 0 (0: none)");
    if (!(w->link.bandwidth_bytes_per_s > 0) || !(w->link.latency_s >= 0 &&
                                                  w->link.latency_s < INFINITY))
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "link.bandwidth_bytes_per_s",
                       "the link between the pools needs a bandwidth > 0 and a finite latency "
                       ">= 0 (got %g B/s, %g s)",
                       w->link.bandwidth_bytes_per_s, w->link.latency_s);
    return PM_OK;
}

/* ---------------------------------------------------------------- memory */

/* The whole model's cache of one prompt: footprint.c's rule over a split that holds every KV
 * head once (MLA's latent is one per position whatever the split); the draft's cache of the
 * prompt added when s speculates (its own model's heads, or the MTP layers'). */
static pm_status request_kv_bytes(const pm_scenario *s, int64_t isl, double *bytes,
                                  pm_error *err)
{
    if (pm_spec_active(s)) {
        pm_scenario d;
        double target = 0.0, draft = 0.0;
        pm_spec_draft_scenario(s, &d);
        pm_scenario plain = *s;
        plain.provenance = NULL;
        memset(&plain.spec, 0, sizeof plain.spec);
        pm_status st = request_kv_bytes(&plain, isl, &target, err);
        if (st == PM_OK)
            st = pm_spec_draft_failed(request_kv_bytes(&d, isl, &draft, err), err);
        *bytes = target + draft;
        return st;
    }
    pm_scenario one = *s;
    one.provenance = NULL;
    one.workload.batch = 1;
    pm_shard whole;
    pm_status st = pm_shard_compute(&one, &whole, err);
    if (st != PM_OK)
        return st;
    whole.q_heads = s->model.heads;
    whole.kv_heads = s->model.kv_heads;
    pm_footprint fp;
    st = pm_footprint_compute(&one, &whole, isl, &fp, err);
    *bytes = st == PM_OK ? fp.kv_bytes : 0.0;
    return st;
}

/* The prefill pool holds the weights and one prompt; the decode pool's most sequences at their
 * mean held positions (input + (output - 1) / 2), and the concurrency it runs at. Both by
 * serve's rule of what fits (pm_serve_max_sequences: the draft's beside, the tightest stage,
 * the attention ranks' shares), not one of their own. */
static pm_status pools_fit(const pool *pp, const pool *dp, const pm_disagg_workload *w,
                           pm_disagg_result *out, pm_error *err)
{
    double prompts, weights;
    pm_status st = pm_serve_max_sequences(pp->s, w->input_tokens, &prompts, &weights, err);
    if (st != PM_OK)
        return in_pool("prefill", st, err);
    if (!(prompts >= 1))
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "prefill.accelerator.hbm_capacity_GiB",
                       "the prefill pool's HBM (%.4g GB usable per device) does not hold the "
                       "weights (%.4g GB) and one prompt of %lld tokens",
                       pm_hbm_usable_bytes(pp->s) / 1e9, weights / 1e9,
                       (long long)w->input_tokens);
    /* A verify step writes its k drafted positions too: a sequence holds k more. */
    const int64_t held = w->input_tokens + (w->output_tokens - 1) / 2 +
                         (pm_spec_verify_tokens(dp->s) - 1);
    if ((st = pm_serve_max_sequences(dp->s, held, &out->decode_max_concurrency, NULL, err)) !=
        PM_OK)
        return in_pool("decode", st, err);
    if (out->decode_max_concurrency < 1)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "decode.accelerator.hbm_capacity_GiB",
                       "the decode pool's HBM (%.4g GB usable per device) does not hold the "
                       "weights and one sequence of %lld positions",
                       pm_hbm_usable_bytes(dp->s) / 1e9, (long long)held);
    if (w->decode_concurrency > out->decode_max_concurrency)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "decode_concurrency",
                       "the decode pool's HBM holds %g sequences of %lld positions (asked %g)",
                       out->decode_max_concurrency, (long long)held, w->decode_concurrency);
    out->decode_concurrency =
        w->decode_concurrency > 0 ? w->decode_concurrency : out->decode_max_concurrency;
    return PM_OK;
}

/* ---------------------------------------------------------------- the steps */

/* One step of scenario s (the pool's, or its draft's) on pool p's instance in every mode: its
 * time, and (with an energy block) the joules of the instance (all its devices) it takes. */
static pm_status step_all(const pool *p, const pm_scenario *s, const pm_mixed_step *m,
                          double t[PM_MODE_COUNT], double joules[PM_MODE_COUNT], pm_error *err)
{
    pm_status st = PM_OK;
    for (int mode = 0; mode < PM_MODE_COUNT && st == PM_OK; mode++) {
        joules[mode] = 0.0;
        st = pm_mixed_step_time(s, (pm_mode)mode, m, &t[mode], err);
    }
    if (st != PM_OK || !p->energy)
        return st;
    pm_step step;
    if ((st = pm_step_mixed(s, m, &step, err)) != PM_OK)
        return st;
    pm_step_plan *plans = pm_malloc(2 * sizeof *plans);
    if (!plans)
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
    st = pm_step_plan_build(s, &step, false, true, &plans[0], err);
    if (st == PM_OK) {
        pm_step_plan_count(&plans[0]);
        pm_step_plan_fuse(&plans[0], &plans[1]);
        const pm_step_plan *of[PM_MODE_COUNT] = {&plans[0], &plans[1], &plans[0]};
        for (int mode = 0; mode < PM_MODE_COUNT; mode++) {
            pm_traffic tr;
            pm_energy e;
            pm_step_plan_traffic(of[mode], mode == PM_MODE_PRESERVE, step.context, &tr);
            pm_energy_of(&s->accel, p->p_static_W, &tr, t[mode], &e);
            joules[mode] = p->devices * e.total_J;
        }
    }
    pm_free(plans);
    return st;
}

/* The sums of a pool's step (one mode's time, or every mode's times and joules) that the
 * draft's steps add to. */
typedef struct draft_sums {
    const pool *p;
    int mode; /* PM_MODE_COUNT: every mode, with joules */
    double *t, *J;
} draft_sums;

static pm_status add_draft_step(void *ctx, const pm_scenario *d, const pm_mixed_step *m,
                                double count, pm_error *err)
{
    const draft_sums *a = ctx;
    double t[PM_MODE_COUNT], J[PM_MODE_COUNT];
    if (a->mode < PM_MODE_COUNT) {
        pm_status st = pm_mixed_step_time(d, (pm_mode)a->mode, m, &t[0], err);
        a->t[0] += count * t[0];
        return st;
    }
    pm_status st = step_all(a->p, d, m, t, J, err);
    for (int mode = 0; mode < PM_MODE_COUNT && st == PM_OK; mode++) {
        a->t[mode] += count * t[mode];
        a->J[mode] += count * J[mode];
    }
    return st;
}

/* A served step m of pool p: its decode tokens verify steps and the draft's steps beside when
 * the pool speculates (speculate.c's rules), in every mode (mode PM_MODE_COUNT: t and J hold
 * every mode's) or in one (t[0]; J not read). Errors name the pool. */
static pm_status pool_step(const pool *p, int mode, const pm_mixed_step *m, double *t,
                           double *J, pm_error *err)
{
    pm_mixed_step v = *m;
    pm_spec_verify_step(p->s, &v);
    pm_status st = mode < PM_MODE_COUNT ? pm_mixed_step_time(p->s, (pm_mode)mode, &v, t, err)
                                        : step_all(p, p->s, &v, t, J, err);
    draft_sums sums = {p, mode, t, J};
    if (st == PM_OK)
        st = pm_spec_draft_time(p->s, &v, add_draft_step, &sums, err);
    return in_pool(p->name, st, err);
}

/* Decoding sequences' mean context: a request decodes at input .. input + output - 2. */
static pm_mixed_step decode_step(const pm_disagg_workload *w, double n)
{
    const int64_t ctx = w->input_tokens + llround((double)(w->output_tokens - 2) / 2.0);
    return (pm_mixed_step){.decode_sequences = n, .decode_context = ctx};
}

/* A request's decode steps on pool dp: (output - 1) / E (E = 1 without speculation). */
static double decode_steps(const pool *dp, const pm_disagg_workload *w)
{
    return (double)(w->output_tokens - 1) * pm_spec_steps_per_token(dp->s);
}

/* The sequences n a decode instance holds when it is offered lambda requests/s in mode m:
 * n = lambda steps t(n) (steps: decode_steps), by bisection between 1 and its full load N (t
 * grows with n). */
static pm_status decode_load(const pool *dp, const pm_disagg_workload *w, pm_mode m,
                             double lambda, double N, double *n, pm_error *err)
{
    const double steps = decode_steps(dp, w);
    double lo = 1.0, hi = N, t = 0.0;
    pm_mixed_step st_lo = decode_step(w, 1.0);
    pm_status st = pool_step(dp, m, &st_lo, &t, NULL, err);
    if (st != PM_OK || lambda * steps * t <= 1.0) {
        *n = lambda * steps * t; /* below one sequence: alone, idle between requests */
        return st;
    }
    while (hi - lo > 1e-9 * hi) {
        const double mid = 0.5 * (lo + hi);
        pm_mixed_step s = decode_step(w, mid);
        if ((st = pool_step(dp, m, &s, &t, NULL, err)) != PM_OK)
            return st;
        *(lambda * steps * t > mid ? &lo : &hi) = mid;
    }
    *n = hi;
    return PM_OK;
}

/* ---------------------------------------------------------------- rate matching */

/* The instance counts: fixed, the fewest serving the target rate, or the ratio of the most
 * requests/s per device (min(x Rp, y Rd) / (x gp + y gd), x, y <= max_instances; the fewest
 * devices among equals). Returns false when the target needs more than max_instances. */
static bool match_rates(const pm_disagg_workload *w, double Rp, double Rd, int gp, int gd,
                        int *x, int *y)
{
    if (w->prefill_instances > 0) {
        *x = w->prefill_instances;
        *y = w->decode_instances;
        return true;
    }
    const double rate = w->request_rate_per_s, M = w->max_instances;
    if (rate > 0) {
        const double nx = ceil(rate / Rp - 1e-12), ny = ceil(rate / Rd - 1e-12);
        *x = (int)(nx < 1 ? 1 : nx > M ? M : nx);
        *y = (int)(ny < 1 ? 1 : ny > M ? M : ny);
        return nx <= M && ny <= M;
    }
    double best = -1.0;
    for (int i = 1; i <= w->max_instances; i++) {
        /* For x = i the best y is about i Rp / Rd: try its neighbours only, held to [1, M] (a
         * decode instance far slower than a prefill instance: one prefill instance, M decode
         * instances; far faster: one decode instance). */
        const double yy = floor(i * Rp / Rd);
        for (double jj = yy; jj <= yy + 1.0; jj++) {
            const double j = jj < 1 ? 1 : jj > M ? M : jj;
            const double r = fmin(i * Rp, j * Rd), v = r / (i * gp + j * gd);
            if (v > best * (1.0 + 1e-12)) {
                best = v;
                *x = i;
                *y = (int)j;
            }
        }
    }
    return true;
}

/* ---------------------------------------------------------------- one mode */

/* What one mode's pools give before the deployment is put together. */
typedef struct pool_times {
    double D, prefill_J;          /* a prompt's prefill, and its joules */
    double t_full, decode_full_J; /* a decode step at full load, and its joules */
} pool_times;

static void mode_rates(const pool *pp, const pool *dp, const pm_disagg_workload *w,
                       const pm_disagg_result *r, const pool_times *pt, pm_disagg_mode *x)
{
    const double N = r->decode_concurrency, steps = decode_steps(dp, w);
    x->prefill_s = pt->D;
    /* A prefill instance serves at most its load cap of prompts, and its KV link at most the
     * same share of what it carries (its queue of transfers grows without bound at a load of 1:
     * pm_kv_transfer_time), so the instance counts are matched on the slower. */
    const double link = w->link.bandwidth_bytes_per_s / r->transfer_bytes_per_device;
    x->prefill_requests_per_s = w->prefill_max_load_frac * fmin(1.0 / pt->D, link);
    x->decode_requests_per_s = N / (steps * pt->t_full);
    if (pp->die_mm2 > 0)
        x->prefill_tokens_per_s_per_mm2 =
            x->prefill_requests_per_s * (double)w->input_tokens / (pp->devices * pp->die_mm2);
    if (dp->die_mm2 > 0)
        x->decode_tokens_per_s_per_mm2 =
            N / (pm_spec_steps_per_token(dp->s) * pt->t_full) / (dp->devices * dp->die_mm2);
}

/* The deployment's TTFT: the M/D/1 wait and the transfer at the prefill instances' rate. */
static void mode_ttft(const pool *pp, const pm_disagg_workload *w, const pm_disagg_result *r,
                      pm_disagg_mode *x)
{
    const double lambda = x->requests_per_s / x->prefill_instances, D = x->prefill_s;
    const double rho = lambda * D;
    x->prefill_load_frac = rho;
    x->queue_s = rho < 1.0 ? rho * D / (2.0 * (1.0 - rho)) : INFINITY;
    const pm_kv_transfer t = {r->transfer_bytes_per_device, w->link.bandwidth_bytes_per_s,
                              w->link.latency_s, lambda, D, pp->s->model.layers,
                              w->link.layer_streamed};
    x->transfer_s = pm_kv_transfer_time(&t, NULL);
    x->ttft_s = D + x->queue_s + x->transfer_s;
    if (!(x->ttft_s < INFINITY))
        x->saturated = true;
}

/* Throughput per device, mm2, dollar and joule of both pools, and the limits. */
static void mode_density(const pool *pp, const pool *dp, const pm_disagg_workload *w,
                         const pool_times *pt, double decode_J, pm_disagg_mode *x)
{
    const double xp = x->prefill_instances, yd = x->decode_instances;
    const double osl = (double)w->output_tokens;
    x->devices = xp * pp->devices + yd * dp->devices;
    x->tokens_per_s = x->requests_per_s * osl;
    x->tokens_per_s_per_device = x->tokens_per_s / x->devices;
    x->tokens_per_s_per_user = 1.0 / x->tpot_s;
    const double mm2 = xp * pp->devices * pp->die_mm2 + yd * dp->devices * dp->die_mm2;
    if (pp->die_mm2 > 0 && dp->die_mm2 > 0)
        x->tokens_per_s_per_mm2 = x->tokens_per_s / mm2;
    const double usd = xp * pp->devices * pp->device_usd + yd * dp->devices * dp->device_usd;
    if (pp->device_usd > 0 && dp->device_usd > 0)
        x->tokens_per_s_per_usd = x->tokens_per_s / usd;
    if (pp->energy && dp->energy && x->decode_in_flight > 0) {
        /* A request: its prefill, and its share of its decode steps (alone, below one
         * sequence in flight, every step its own). */
        const double sharing = x->decode_in_flight > 1.0 ? x->decode_in_flight : 1.0;
        x->energy_per_token_J = (pt->prefill_J + decode_steps(dp, w) * decode_J / sharing) / osl;
        x->tokens_per_J = 1.0 / x->energy_per_token_J;
    }
    x->meets_limits = !x->saturated &&
                      (!(w->ttft_limit_s > 0) || x->ttft_s <= w->ttft_limit_s) &&
                      (!(w->tpot_limit_s > 0) || x->tpot_s <= w->tpot_limit_s);
    x->goodput_tokens_per_s_per_device = x->meets_limits ? x->tokens_per_s_per_device : 0.0;
    if (x->saturated) {
        x->ttft_s = x->tpot_s = x->e2e_s = x->queue_s = x->transfer_s = NAN;
        x->tokens_per_s_per_user = NAN;
    }
}

static pm_status mode_of(const pool *pp, const pool *dp, const pm_disagg_workload *w,
                         pm_mode m, const pm_disagg_result *r, const pool_times *pt,
                         pm_disagg_mode *x, pm_error *err)
{
    *x = (pm_disagg_mode){0};
    mode_rates(pp, dp, w, r, pt, x);
    const bool served = match_rates(w, x->prefill_requests_per_s, x->decode_requests_per_s,
                                    pp->devices, dp->devices, &x->prefill_instances,
                                    &x->decode_instances);
    const double most = fmin(x->prefill_instances * x->prefill_requests_per_s,
                             x->decode_instances * x->decode_requests_per_s);
    const double rate = w->request_rate_per_s;
    x->saturated = !served || (rate > 0 && rate > most * (1.0 + 1e-12));
    x->requests_per_s = rate > 0 && !x->saturated ? rate : most;
    const double lambda_d = x->requests_per_s / x->decode_instances;
    double decode_J = pt->decode_full_J;
    x->decode_step_s = pt->t_full;
    x->decode_in_flight = r->decode_concurrency;
    if (lambda_d < x->decode_requests_per_s * (1.0 - 1e-12)) {
        pm_status st = decode_load(dp, w, m, lambda_d, r->decode_concurrency,
                                   &x->decode_in_flight, err);
        pm_mixed_step s = decode_step(w, x->decode_in_flight < 1 ? 1.0 : x->decode_in_flight);
        double t[PM_MODE_COUNT], J[PM_MODE_COUNT];
        if (st == PM_OK)
            st = pool_step(dp, PM_MODE_COUNT, &s, t, J, err);
        if (st != PM_OK)
            return st;
        x->decode_step_s = t[m];
        decode_J = J[m];
    }
    x->tpot_s = x->decode_step_s * pm_spec_steps_per_token(dp->s); /* a step emits E tokens */
    mode_ttft(pp, w, r, x);
    x->e2e_s = x->ttft_s + (double)(w->output_tokens - 1) * x->tpot_s;
    mode_density(pp, dp, w, pt, decode_J, x);
    return PM_OK;
}

pm_status pm_disagg_compute(const pm_scenario *prefill, const pm_scenario *decode,
                            const pm_disagg_workload *w, pm_disagg_result *out, pm_error *err)
{
    if (!prefill || !decode || !w || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_disagg_compute");
    memset(out, 0, sizeof *out);
    pool pp, dp;
    pm_status st = pm_disagg_workload_check(w, err);
    if (st == PM_OK)
        st = pool_init(prefill, "prefill", &pp, err);
    if (st == PM_OK)
        st = pool_init(decode, "decode", &dp, err);
    if (st == PM_OK)
        st = check_same(prefill, decode, err);
    if (st == PM_OK)
        st = pools_fit(&pp, &dp, w, out, err);
    if (st == PM_OK)
        st = request_kv_bytes(prefill, w->input_tokens, &out->kv_bytes_per_request, err);
    if (st != PM_OK)
        return st;
    out->transfer_bytes_per_device = out->kv_bytes_per_request / pp.devices;
    out->prefill_devices = pp.devices;
    out->decode_devices = dp.devices;
    out->prefill_die_mm2 = pp.die_mm2;
    out->decode_die_mm2 = dp.die_mm2;
    const pm_mixed_step whole = {.n_chunks = 1, .chunks = {{1.0, w->input_tokens, 0, 1.0}}};
    const pm_mixed_step full = decode_step(w, out->decode_concurrency);
    double D[PM_MODE_COUNT], DJ[PM_MODE_COUNT], T[PM_MODE_COUNT], TJ[PM_MODE_COUNT];
    if ((st = pool_step(&pp, PM_MODE_COUNT, &whole, D, DJ, err)) != PM_OK ||
        (st = pool_step(&dp, PM_MODE_COUNT, &full, T, TJ, err)) != PM_OK)
        return st;
    for (int m = 0; m < PM_MODE_COUNT && st == PM_OK; m++) {
        const pool_times pt = {D[m], DJ[m], T[m], TJ[m]};
        st = mode_of(&pp, &dp, w, (pm_mode)m, out, &pt, &out->modes[m], err);
    }
    return st;
}

/* ---------------------------------------------------------------- columns */

#define DISAGG_MODE_COLUMNS(m)                                                                 \
    m "_ttft_s", m "_tpot_s", m "_e2e_s", m "_prefill_s", m "_queue_s", m "_transfer_s",      \
        m "_decode_in_flight", m "_prefill_instances", m "_decode_instances", m "_devices",     \
        m "_prefill_load_frac", m "_requests_per_s", m "_tokens_per_s_per_device",             \
        m "_tokens_per_s_per_user", m "_tokens_per_s_per_mm2", m "_tokens_per_s_per_usd",      \
        m "_energy_per_token_J", m "_goodput_tokens_per_s_per_device",                         \
        m "_prefill_tokens_per_s_per_mm2", m "_decode_tokens_per_s_per_mm2", m "_saturated"

static const char *const disagg_columns[] = {
    "kv_bytes_per_request", "transfer_bytes_per_device", "decode_concurrency",
    "decode_max_concurrency", "prefill_devices", "decode_devices", "prefill_die_mm2",
    "decode_die_mm2", DISAGG_MODE_COLUMNS("serial"), DISAGG_MODE_COLUMNS("fused"),
    DISAGG_MODE_COLUMNS("preserve")};
#undef DISAGG_MODE_COLUMNS

size_t pm_disagg_column_count(void)
{
    return PM_ARRAY_LEN(disagg_columns);
}

const char *pm_disagg_column_name(size_t i)
{
    return i < PM_ARRAY_LEN(disagg_columns) ? disagg_columns[i] : NULL;
}

/* x when above 0, else NaN: a figure without data (no area, cost or energy block). */
static double or_nan(double x)
{
    return x > 0 ? x : NAN;
}

size_t pm_disagg_point_values(const pm_disagg_result *r, double *values, size_t n)
{
    enum { N = PM_ARRAY_LEN(disagg_columns), PER_MODE = 21 };
    double v[N];
    size_t k = 0;
    const double shared[] = {r->kv_bytes_per_request, r->transfer_bytes_per_device,
                             r->decode_concurrency,  r->decode_max_concurrency,
                             r->prefill_devices,     r->decode_devices,
                             or_nan(r->prefill_die_mm2), or_nan(r->decode_die_mm2)};
    for (size_t i = 0; i < PM_ARRAY_LEN(shared); i++)
        v[k++] = shared[i];
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_disagg_mode *x = &r->modes[m];
        const double per[PER_MODE] = {
            x->ttft_s, x->tpot_s, x->e2e_s, x->prefill_s, x->queue_s, x->transfer_s,
            x->decode_in_flight, x->prefill_instances, x->decode_instances, x->devices,
            x->prefill_load_frac, x->requests_per_s, x->tokens_per_s_per_device,
            x->tokens_per_s_per_user, or_nan(x->tokens_per_s_per_mm2),
            or_nan(x->tokens_per_s_per_usd), or_nan(x->energy_per_token_J),
            x->goodput_tokens_per_s_per_device, or_nan(x->prefill_tokens_per_s_per_mm2),
            or_nan(x->decode_tokens_per_s_per_mm2), x->saturated ? 1.0 : 0.0};
        for (size_t i = 0; i < PER_MODE; i++)
            v[k++] = per[i];
    }
    for (size_t i = 0; values && i < n && i < N; i++)
        values[i] = v[i];
    return N;
}

pm_status pm_disagg_colocated(const pm_scenario *s, const pm_disagg_workload *w,
                              double concurrency, int64_t chunk, pm_serve_result *out,
                              pm_error *err)
{
    if (!s || !w || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL argument");
    if (chunk < 0)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "chunk",
                       "must be 0 (the default, %d) or a count of tokens (got %lld)",
                       PM_DISAGG_COLOCATED_CHUNK, (long long)chunk);
    pm_serve_workload sw = {w->input_tokens, w->output_tokens, concurrency,
                            chunk > 0 ? chunk : PM_DISAGG_COLOCATED_CHUNK, PM_SERVE_DECODE_FIRST,
                            w->ttft_limit_s, w->tpot_limit_s, PM_SERVE_STAGGERED, 0.0, 0,
                            {{0}}};
    if (concurrency >= 0 && (double)sw.chunk_budget <= concurrency) /* a prompt token a step */
        sw.chunk_budget = (int64_t)concurrency + 1;
    return pm_serve_compute(s, &sw, out, err);
}

static const char *const colocated_fields[PM_DISAGG_COLOCATED_FIELDS] = {
    "tokens_per_s_per_device", "tokens_per_s_per_user", "tokens_per_s_per_mm2", "ttft_s",
    "tpot_s"};

const char *pm_disagg_colocated_field_name(size_t k)
{
    return k < PM_DISAGG_COLOCATED_FIELDS ? colocated_fields[k] : NULL;
}

void pm_disagg_colocated_values(const pm_serve_result *r, pm_mode m, double *v)
{
    if (!v)
        return;
    const bool ok = r && r->fits_hbm && (unsigned)m < PM_MODE_COUNT;
    const pm_serve_mode *x = ok ? &r->modes[m] : NULL;
    v[0] = ok ? x->tokens_per_s_per_device : NAN;
    v[1] = ok ? x->tokens_per_s_per_user : NAN;
    v[2] = ok && x->tokens_per_s_per_mm2 > 0 ? x->tokens_per_s_per_mm2 : NAN;
    v[3] = ok ? x->ttft_s : NAN;
    v[4] = ok ? x->tpot_s : NAN;
}
