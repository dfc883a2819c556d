/*
 * report.c - the shapes of what the tool reports, kept in the library so that every front end
 * (the CLI, the Python module) prints one and the same thing: the run report as JSON
 * (`preserve-model --format json`) and the result columns of a sweep point (the sweep CSV's
 * columns between the axes and "error").
 *
 * May call: alloc.c, area.c, collective.c, data.c, die_cost.c, energy.c, error.c, estimate.c,
 * footprint.c, moe.c, runtime.c, speculate.c, text.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int pm_json_number(double v, char *buf, size_t n)
{
    char t[PM_JSON_NUMBER_MAX];
    int len = 4;
    if (!isfinite(v)) {
        memcpy(t, "null", 5);
    } else {
        /* The fewest digits that read back as v: an integer below 2^53 comes out whole. */
        for (int digits = 15; digits <= 17; digits++) {
            len = snprintf(t, sizeof t, "%.*g", digits, v);
            const double back = strtod(t, NULL);
            if (!(back < v) && !(back > v)) /* read back exactly (no -Wfloat-equal) */
                break;
        }
    }
    if (buf && n > 0)
        snprintf(buf, n, "%s", t);
    return len;
}

/* v as pm_json_number writes it, in the compound literal of the call (one per argument). */
#define NUM(v) num_text((char[PM_JSON_NUMBER_MAX]){0}, (v))
static const char *num_text(char *buf, double v)
{
    pm_json_number(v, buf, PM_JSON_NUMBER_MAX);
    return buf;
}

/* A JSON number, or null when the accelerator has no data for it. */
static void json_num(pm_sbuf *b, const char *key, double v, bool present, const char *sep)
{
    pm_sb_printf(b, "\"%s\": %s%s", key, present ? NUM(v) : "null", sep);
}

/* A mode's energy and dollar figures, after its times. */
static void json_energy(pm_sbuf *b, const pm_estimate *e, const pm_mode_result *r)
{
    pm_sb_printf(b, ", ");
    json_num(b, "J_per_token", r->energy_per_token_J, e->energy_present, ", ");
    json_num(b, "avg_power_W", r->avg_power_W, e->energy_present, ", ");
    json_num(b, "tokens_per_J", r->tokens_per_J, e->energy_present, ", ");
    json_num(b, "tokens_per_s_per_usd", r->tokens_per_s_per_usd, e->cost_present, ", ");
    json_num(b, "prefill_power_W", r->prefill_power_W, e->energy_present, ", ");
    json_num(b, "prefill_clock_frac", r->prefill_clock_frac, e->energy_present, ", ");
    const pm_traffic *t = &r->traffic;
    pm_sb_printf(b,
                 "\"traffic_per_device\": {\"hbm_bytes\": %s, \"l2_write_bytes\": %s, "
                 "\"l2_read_bytes\": %s, \"link_bytes\": %s}, ",
                 NUM(t->hbm_bytes), NUM(t->l2_write_bytes), NUM(t->l2_read_bytes),
                 NUM(t->link_bytes));
    if (e->energy_present)
        pm_sb_printf(b,
                     "\"energy_per_device_J\": {\"hbm\": %s, \"l2\": %s, \"link\": %s, "
                     "\"mac\": %s, \"static\": %s, \"total\": %s}",
                     NUM(r->energy.hbm_J), NUM(r->energy.l2_J), NUM(r->energy.link_J),
                     NUM(r->energy.mac_J), NUM(r->energy.static_J), NUM(r->energy.total_J));
    else
        pm_sb_printf(b, "\"energy_per_device_J\": null");
}

/* The top-level area object: the die's blocks, why it is the size it is, against the reticle. */
static void json_area(pm_sbuf *b, const pm_scenario *s)
{
    pm_area a;
    if (!s->accel.area.present || pm_area_compute(&s->accel, &a, NULL) != PM_OK) {
        pm_sb_printf(b, "  \"area\": null,\n");
        return;
    }
    const double largest = pm_largest_die_mm2(&a);
    pm_sb_printf(b,
                 "  \"area\": {\"compute_mm2\": %s, \"l2_mm2\": %s, \"hbm_phy_mm2\": %s, "
                 "\"link_phy_mm2\": %s, \"other_mm2\": %s, \"io_other_mm2\": %s, "
                 "\"die_mm2\": %s, \"dies_per_package\": %d, \"compute_dies\": %d, "
                 "\"compute_die_mm2\": %s, \"io_dies\": %d, \"io_die_mm2\": %s, "
                 "\"io_holds\": ",
                 NUM(a.compute_mm2), NUM(a.l2_mm2), NUM(a.hbm_phy_mm2), NUM(a.link_phy_mm2),
                 NUM(a.other_mm2), NUM(a.io_other_mm2), NUM(a.die_mm2),
                 pm_dies_per_package(&a), a.compute_dies, NUM(a.compute_die_mm2), a.io_dies,
                 NUM(a.io_die_mm2));
    if (a.io_dies > 0)
        pm_sb_printf(b, "\"%s\"", pm_io_holds_name(s->accel.area.io_holds));
    else
        pm_sb_printf(b, "null");
    pm_sb_printf(b, ", \"largest_die_mm2\": %s, \"reticle_mm2\": %s, \"over_reticle\": %s},\n",
                 NUM(largest), NUM(PM_RETICLE_MM2), largest > PM_RETICLE_MM2 ? "true" : "false");
}

/* The top-level cost and power objects. */
static void json_cost_power(pm_sbuf *b, const pm_scenario *s, const pm_estimate *e)
{
    const pm_device_cost *k = &e->cost;
    if (e->cost_present)
        pm_sb_printf(b,
                     "  \"cost\": {\"die_mm2\": %s, \"dies_per_package\": %d, \"die_usd\": "
                     "%s, \"dies_per_wafer\": %s, \"yield_frac\": %s, \"io_dies_per_wafer\": "
                     "%s, \"io_yield_frac\": %s, \"yield_model\": "
                     "\"%s\", \"hbm_usd\": %s, \"package_usd\": %s, \"device_usd\": "
                     "%s},\n",
                     NUM(k->die_mm2), k->dies_per_package, NUM(k->die_usd),
                     NUM(k->dies_per_wafer), NUM(k->yield_frac), NUM(k->io_dies_per_wafer),
                     NUM(k->io_yield_frac),
                     pm_yield_model_name(s->accel.cost.yield_model), NUM(k->hbm_usd),
                     NUM(k->package_usd), NUM(k->device_usd));
    else
        pm_sb_printf(b, "  \"cost\": null,\n");
    double p_static = 0.0, p_full = 0.0;
    if (e->energy_present && pm_static_power(&s->accel, &p_static, NULL) == PM_OK &&
        pm_full_bandwidth_power(&s->accel, &p_full, NULL) == PM_OK) {
        pm_sb_printf(b, "  \"power\": {\"static_W\": %s, \"full_bandwidth_W\": %s, ",
                     NUM(p_static), NUM(p_full));
        json_num(b, "board_power_W", s->accel.energy.board_power_W,
                 s->accel.energy.board_power_W > 0, "},\n");
    } else {
        pm_sb_printf(b, "  \"power\": null,\n");
    }
}

/* The tool's warnings about s and its estimate e (pm_scenario_warning's, then
 * pm_estimate_warning's), last: a program that reads the report and not stderr still sees
 * them. */
static void json_warnings(pm_sbuf *b, const pm_scenario *s, const pm_estimate *e)
{
    char note[512];
    size_t k = 0;
    pm_sb_printf(b, "  \"warnings\": [");
    for (size_t i = 0; pm_scenario_warning(s, i, note, sizeof note); i++) {
        pm_sb_printf(b, "%s", k++ ? ", " : "");
        pm_sb_json_string(b, note);
    }
    for (size_t i = 0; pm_estimate_warning(s, e, i, note, sizeof note); i++) {
        pm_sb_printf(b, "%s", k++ ? ", " : "");
        pm_sb_json_string(b, note);
    }
    pm_sb_printf(b, "]\n}\n");
}

/* The MoE object (null for a dense model): the expert split, the experts read per step beside
 * the bytes each MoE layer holds and reads. */
static void json_moe(pm_sbuf *b, const pm_scenario *s, const pm_estimate *e)
{
    pm_footprint fp;
    pm_moe_reads r;
    if (s->model.experts < 1 ||
        pm_footprint_compute(s, &e->shard, s->workload.seq_len, &fp, NULL) != PM_OK ||
        pm_moe_reads_compute(s, (double)s->workload.batch * pm_spec_verify_tokens(s), &r,
                             NULL) != PM_OK) {
        pm_sb_printf(b, "  \"moe\": null,\n");
        return;
    }
    pm_sb_printf(b,
                 "  \"moe\": {\"experts\": %d, \"experts_per_token\": %d, \"shared_experts\": "
                 "%d, \"moe_layers\": %d, \"expert_parallel\": %d, \"expert_tensor_parallel\": "
                 "%d, \"experts_per_device\": %s, \"experts_touched_per_step\": %s, "
                 "\"experts_read_per_step\": %s, \"experts_read_upper_bound\": %s, "
                 "\"routing_skew_alpha\": %s, \"expert_weight_bytes\": %s, "
                 "\"moe_weight_bytes_per_layer\": %s, \"moe_read_bytes_per_layer\": %s},\n",
                 s->model.experts, s->model.experts_per_token, s->model.shared_experts,
                 fp.moe_layers, e->shard.ep, e->shard.moe_tp, NUM(e->shard.experts_local),
                 NUM(r.experts_touched), NUM(fp.experts_read_per_step), NUM(r.upper_bound),
                 NUM(s->workload.routing_skew_alpha), NUM(fp.expert_weight_bytes),
                 NUM(fp.moe_weight_bytes), NUM(fp.moe_read_bytes));
}

/* The plan's stages and replicas (issue 44). */
static void json_pipeline(pm_sbuf *b, const pm_estimate *e)
{
    const pm_pipeline_report *p = &e->pipeline;
    pm_sb_printf(b,
                 "  \"pipeline\": {\"stages\": %d, \"replicas\": %d, \"devices_total\": %d, "
                 "\"nodes\": %d, \"micro_batches\": %d, \"micro_batch\": %d, "
                 "\"min_stage_layers\": %d, \"max_stage_layers\": %d, \"inter_node\": %s, "
                 "\"send_decode_s\": %s, \"send_prefill_s\": %s, \"return_s\": %s, "
                 "\"replica_tokens_per_s\": {",
                 p->stages, p->replicas, p->devices_total, p->nodes, p->micro_batches,
                 p->micro_batch, p->min_stage_layers, p->max_stage_layers,
                 p->inter_node ? "true" : "false", NUM(p->send_decode_s), NUM(p->send_prefill_s),
                 NUM(p->return_s));
    for (int m = 0; m < PM_MODE_COUNT; m++)
        pm_sb_printf(b, "%s\"%s\": %s", m ? ", " : "", pm_mode_name((pm_mode)m),
                     NUM(p->replica_tokens_per_s[m]));
    pm_sb_printf(b, "}},\n");
}

/* Speculative decoding (issue 45): only when the scenario speculates, so that every other
 * report stays as it was. */
static void json_speculative(pm_sbuf *b, const pm_scenario *s, const pm_estimate *e)
{
    const pm_spec_report *r = &e->spec;
    if (!r->active)
        return;
    pm_sb_printf(b, "  \"speculative\": {\"method\": \"%s\", \"draft_model\": ",
                 pm_spec_method_name(r->method));
    if (r->method == PM_SPEC_DRAFT_MODEL)
        pm_sb_json_string(b, s->spec.draft.name);
    else
        pm_sb_printf(b, "null");
    pm_sb_printf(b, ", \"mtp_layers\": %d, \"draft_tokens\": %d, \"acceptance\": [",
                 s->spec.mtp_layers, r->draft_tokens);
    for (int i = 0; i < s->spec.n_acceptance; i++)
        pm_sb_printf(b, "%s%s", i ? ", " : "", NUM(s->spec.acceptance[i]));
    pm_sb_printf(b, "], \"tokens_per_step\": %s, \"draft_weight_bytes_per_device\": %s, "
                    "\"draft_kv_bytes_per_device\": %s, \"source\": ",
                 NUM(r->tokens_per_step), NUM(r->draft_weight_bytes_per_device),
                 NUM(r->draft_kv_bytes_per_device));
    pm_sb_json_string(b, s->spec.source);
    pm_sb_printf(b, ",\n    \"modes\": {");
    for (int m = 0; m < PM_MODE_COUNT; m++)
        pm_sb_printf(b,
                     "%s\"%s\": {\"verify_step_s\": %s, \"draft_step_s\": %s, "
                     "\"draft_prefill_s\": %s, \"plain_tpot_mean_s\": %s, "
                     "\"speedup_vs_plain\": %s}",
                     m ? ", " : "", pm_mode_name((pm_mode)m), NUM(r->verify_step_s[m]),
                     NUM(r->draft_step_s[m]), NUM(r->draft_prefill_s[m]),
                     NUM(r->plain_tpot_mean_s[m]), NUM(r->speedup_vs_plain[m]));
    pm_sb_printf(b, "}},\n");
}

/* The per-mode objects. */
static void json_modes(pm_sbuf *b, const pm_estimate *e)
{
    pm_sb_printf(b, "  \"modes\": {\n");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_mode_result *r = &e->modes[m];
        pm_sb_printf(b,
                     "    \"%s\": {\"request_s\": %s, \"prefill_s\": %s, \"decode_s\": %s, "
                     "\"tpot_s\": %s, \"tpot_mean_s\": %s, \"tokens_per_s\": %s, "
                     "\"allreduce_algorithm\": \"%s\", \"allreduce_decode_s\": %s",
                     pm_mode_name((pm_mode)m), NUM(r->request_s), NUM(r->prefill_s),
                     NUM(r->decode_s), NUM(r->tpot_s), NUM(r->tpot_mean_s),
                     NUM(r->tokens_per_s), pm_allreduce_algo_name(r->allreduce),
                     NUM(r->allreduce_decode_s));
        if (m == PM_MODE_FUSED)
            pm_sb_printf(b, ", \"fused_chunks\": %d", r->fused_chunks);
        pm_sb_printf(b,
                     ", \"stage_decode_s\": %s, \"bubble_decode_frac\": %s, "
                     "\"bubble_prefill_frac\": %s, \"recv_prefetch_bytes\": %s",
                     NUM(r->stage_decode_s), NUM(r->bubble_decode_frac),
                     NUM(r->bubble_prefill_frac), NUM(r->recv_prefetch_bytes));
        json_energy(b, e, r);
        pm_sb_printf(b, "}%s\n", m + 1 < PM_MODE_COUNT ? "," : "");
    }
    pm_sb_printf(b, "  },\n");
}

pm_status pm_estimate_to_json(const pm_scenario *s, const pm_estimate *e, char **text_out,
                              pm_error *err)
{
    if (!s || !e || !text_out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL scenario, estimate or output");
    pm_sbuf b = {0};
    pm_sb_printf(&b, "{\n  \"tool\": \"preserve-model %s\",\n  \"scenario\": ", pm_version());
    pm_sb_json_string(&b, s->name);
    pm_sb_printf(&b, ",\n  \"inputs\": {\"model\": ");
    pm_sb_json_string(&b, s->model.name);
    pm_sb_printf(&b, ", \"accelerator\": ");
    pm_sb_json_string(&b, s->accel.name);
    pm_sb_printf(&b, ", \"cluster\": ");
    pm_sb_json_string(&b, s->cluster.name);
    pm_sb_printf(&b, ", \"runtime\": ");
    if (s->runtime.present)
        pm_sb_json_string(&b, s->runtime.name);
    else
        pm_sb_printf(&b, "null");
    pm_sb_printf(&b,
                 ", \"paged_attention_frac\": %s, \"devices\": %d, \"batch\": %d, \"seq_len\": "
                 "%lld, \"prefill_tokens\": %lld, \"decode_steps\": %lld},\n",
                 NUM(pm_scenario_paged_attention_frac(s)), s->cluster.devices, s->workload.batch,
                 (long long)s->workload.seq_len, (long long)e->prefill_tokens,
                 (long long)e->decode_steps);
    pm_sb_printf(&b, "  \"tpot_context_len\": %lld,\n", (long long)(s->workload.seq_len - 1));
    json_pipeline(&b, e);
    json_speculative(&b, s, e);
    json_modes(&b, e);
    pm_sb_printf(&b,
                 "  \"speedup\": {\"preserve_vs_serial\": %s, \"preserve_vs_fused\": %s, "
                 "\"fused_vs_serial\": %s},\n",
                 NUM(e->speedup_preserve_vs_serial), NUM(e->speedup_preserve_vs_fused),
                 NUM(e->speedup_fused_vs_serial));
    pm_sb_printf(&b,
                 "  \"shard\": {\"q_heads\": %s, \"kv_heads\": %s, \"kv_replicated\": %s, "
                 "\"uneven\": %s},\n",
                 NUM(e->shard.q_heads), NUM(e->shard.kv_heads),
                 e->shard.kv_replicated ? "true" : "false", e->shard.uneven ? "true" : "false");
    pm_sb_printf(&b,
                 "  \"memory\": {\"weight_bytes_per_device\": %s, \"kv_bytes_per_device\": %s, "
                 "\"hbm_usable_bytes_per_device\": %s, \"fits_hbm\": %s, "
                 "\"l2_window_bytes\": %s, \"kv_spill_context\": %lld, "
                 "\"allreduces_per_step\": %d},\n",
                 NUM(e->weight_bytes_per_device), NUM(e->kv_bytes_per_device),
                 NUM(e->hbm_usable_bytes_per_device), e->fits_hbm ? "true" : "false", NUM(e->l2_window_bytes),
                 (long long)e->kv_spill_context, e->allreduces_per_step);
    json_moe(&b, s, e);
    json_area(&b, s);
    json_cost_power(&b, s, e);
    json_warnings(&b, s, e);
    if (b.failed) {
        pm_free(b.p);
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory writing the report");
    }
    *text_out = b.p;
    return PM_OK;
}

/* A column's figure exists only with the accelerator's energy (E) or cost (C) coefficients;
 * without them it is NaN. */
enum { ALWAYS, E, C };

/* The columns: their names, what they need, and (pm_sweep_point_values) their values, in one
 * order. New columns go at the end: the plots and scripts read the earlier ones by position. */
static const struct sweep_column {
    const char *name;
    int needs;
} sweep_columns[] = {
    {"serial_request_s", ALWAYS}, {"fused_request_s", ALWAYS}, {"preserve_request_s", ALWAYS},
    {"serial_tpot_s", ALWAYS}, {"fused_tpot_s", ALWAYS}, {"preserve_tpot_s", ALWAYS},
    {"serial_tokens_per_s", ALWAYS}, {"fused_tokens_per_s", ALWAYS},
    {"preserve_tokens_per_s", ALWAYS}, {"speedup_preserve_vs_serial", ALWAYS},
    {"speedup_preserve_vs_fused", ALWAYS}, {"speedup_fused_vs_serial", ALWAYS},
    {"die_mm2", ALWAYS}, {"density_serial_tokens_per_s_per_mm2", ALWAYS},
    {"density_fused_tokens_per_s_per_mm2", ALWAYS},
    {"density_preserve_tokens_per_s_per_mm2", ALWAYS}, {"device_usd", C},
    {"serial_J_per_token", E}, {"fused_J_per_token", E}, {"preserve_J_per_token", E},
    {"serial_avg_power_W", E}, {"fused_avg_power_W", E}, {"preserve_avg_power_W", E},
    {"serial_tokens_per_J", E}, {"fused_tokens_per_J", E}, {"preserve_tokens_per_J", E},
    {"serial_tokens_per_s_per_usd", C}, {"fused_tokens_per_s_per_usd", C},
    {"preserve_tokens_per_s_per_usd", C}, {"experts_read_per_step", ALWAYS},
    /* Memory, communication and the prefill/decode split (the run JSON's figures). */
    {"weight_bytes_per_device", ALWAYS}, {"kv_bytes_per_device", ALWAYS},
    {"fits_hbm", ALWAYS}, {"allreduce_decode_s", ALWAYS}, {"allreduces_per_step", ALWAYS},
    {"allreduce_per_step_s", ALWAYS}, {"serial_prefill_s", ALWAYS},
    {"fused_prefill_s", ALWAYS}, {"preserve_prefill_s", ALWAYS}, {"serial_decode_s", ALWAYS},
    {"fused_decode_s", ALWAYS}, {"preserve_decode_s", ALWAYS},
    /* The package's largest die and whether the reticle can print it (issue 41). */
    {"largest_die_mm2", ALWAYS}, {"over_reticle", ALWAYS},
    /* Why the die is that size: its blocks and its dies (the run JSON's area). */
    {"compute_mm2", ALWAYS}, {"l2_mm2", ALWAYS}, {"hbm_phy_mm2", ALWAYS},
    {"link_phy_mm2", ALWAYS}, {"other_mm2", ALWAYS}, {"io_other_mm2", ALWAYS},
    {"compute_dies", ALWAYS}, {"compute_die_mm2", ALWAYS}, {"io_dies", ALWAYS},
    {"io_die_mm2", ALWAYS}};

size_t pm_sweep_column_count(void) { return PM_ARRAY_LEN(sweep_columns); }

const char *pm_sweep_column_name(size_t i)
{
    return i < PM_ARRAY_LEN(sweep_columns) ? sweep_columns[i].name : NULL;
}

size_t pm_sweep_point_values(const pm_sweep_point *p, double *values, size_t n)
{
    enum { N = PM_ARRAY_LEN(sweep_columns) };
    double v[N];
    for (size_t i = 0; i < N; i++)
        v[i] = NAN;
    if (p && p->status == PM_OK) {
        const pm_estimate *e = &p->estimate;
        const pm_mode_result *r = e->modes;
        const pm_area *a = p->area_present ? &p->area : NULL;
        /* The allreduce is the same in every mode's decode step (pm_mode_result). */
        const double ar = r[PM_MODE_SERIAL].allreduce_decode_s;
        const double ok[N] = {
            r[0].request_s, r[1].request_s, r[2].request_s, r[0].tpot_s, r[1].tpot_s,
            r[2].tpot_s, r[0].tokens_per_s, r[1].tokens_per_s, r[2].tokens_per_s,
            e->speedup_preserve_vs_serial, e->speedup_preserve_vs_fused,
            e->speedup_fused_vs_serial, p->die_mm2, p->density[0], p->density[1],
            p->density[2], e->cost.device_usd, r[0].energy_per_token_J,
            r[1].energy_per_token_J, r[2].energy_per_token_J, r[0].avg_power_W,
            r[1].avg_power_W, r[2].avg_power_W, r[0].tokens_per_J, r[1].tokens_per_J,
            r[2].tokens_per_J, r[0].tokens_per_s_per_usd, r[1].tokens_per_s_per_usd,
            r[2].tokens_per_s_per_usd, e->experts_read_per_step, e->weight_bytes_per_device,
            e->kv_bytes_per_device,
            e->fits_hbm ? 1.0 : 0.0, e->allreduces_per_step > 0 ? ar : 0.0,
            e->allreduces_per_step, e->allreduces_per_step > 0 ? e->allreduces_per_step * ar : 0.0,
            r[0].prefill_s, r[1].prefill_s, r[2].prefill_s, r[0].decode_s, r[1].decode_s,
            r[2].decode_s, p->largest_die_mm2,
            isnan(p->largest_die_mm2) ? NAN : p->largest_die_mm2 > PM_RETICLE_MM2 ? 1.0 : 0.0,
            a ? a->compute_mm2 : NAN, a ? a->l2_mm2 : NAN, a ? a->hbm_phy_mm2 : NAN,
            a ? a->link_phy_mm2 : NAN, a ? a->other_mm2 : NAN, a ? a->io_other_mm2 : NAN,
            a ? a->compute_dies : NAN, a ? a->compute_die_mm2 : NAN, a ? a->io_dies : NAN,
            a ? a->io_die_mm2 : NAN};
        memcpy(v, ok, sizeof v);
        for (size_t i = 0; i < N; i++) {
            const int needs = sweep_columns[i].needs;
            if ((needs == C && !e->cost_present) || (needs == E && !e->energy_present))
                v[i] = NAN;
        }
    }
    if (values)
        memcpy(values, v, (n < N ? n : N) * sizeof *values);
    return N;
}

/* ---------------------------------------------------------------- served workloads */

/* The columns of a served workload's point (the serve command's CSV, the Python module's
 * serve()): the one home of their names and order. */
#define SERVE_MODE_COLUMNS(m)                                                                    \
    m "_tokens_per_s_per_device", m "_tokens_per_s_per_user", m "_ttft_s", m "_tpot_s",          \
        m "_tpot_max_s", m "_e2e_s", m "_requests_per_s", m "_goodput_tokens_per_s_per_device", \
        m "_tokens_per_s_per_mm2", m "_tokens_per_s_per_usd", m "_J_per_token"
_Static_assert(PM_MODE_COUNT == 3, "a column group per mode");
static const char *const serve_columns[] = {
    "concurrency",       SERVE_MODE_COLUMNS("serial"), SERVE_MODE_COLUMNS("fused"),
    SERVE_MODE_COLUMNS("preserve"), "decode_sequences", "prefilling", "prefill_steps",
    "mixed_step_frac",   "budget_bound", "kv_bytes_per_device", "fits_hbm", "max_concurrency",
    "request_rate_per_s", "serial_in_flight", "fused_in_flight", "preserve_in_flight",
    "serial_saturated", "fused_saturated", "preserve_saturated"};
#undef SERVE_MODE_COLUMNS

size_t pm_serve_column_count(void)
{
    return PM_ARRAY_LEN(serve_columns);
}

const char *pm_serve_column_name(size_t i)
{
    return i < PM_ARRAY_LEN(serve_columns) ? serve_columns[i] : NULL;
}

size_t pm_serve_point_values(double concurrency, const pm_serve_result *r, double *values,
                             size_t n)
{
    enum { N = PM_ARRAY_LEN(serve_columns), PER_MODE = 11 };
    double v[N];
    size_t k = 0;
    v[k++] = concurrency;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_serve_mode *x = &r->modes[m];
        /* A figure the accelerator has no data for is NaN, as in the sweeps. */
        const double per[PER_MODE] = {
            x->tokens_per_s_per_device, x->tokens_per_s_per_user, x->ttft_s, x->tpot_s,
            x->tpot_max_s, x->e2e_s, x->requests_per_s, x->goodput_tokens_per_s_per_device,
            x->tokens_per_s_per_mm2 > 0 ? x->tokens_per_s_per_mm2 : NAN,
            x->tokens_per_s_per_usd > 0 ? x->tokens_per_s_per_usd : NAN,
            x->energy_per_token_J > 0 ? x->energy_per_token_J : NAN};
        for (size_t i = 0; i < PER_MODE; i++)
            v[k++] = per[i];
    }
    const double shared[] = {r->decode_sequences, r->prefilling, r->prefill_steps,
                             r->mixed_step_frac, r->budget_bound ? 1.0 : 0.0,
                             r->kv_bytes_per_device, r->fits_hbm ? 1.0 : 0.0,
                             r->max_concurrency};
    for (size_t i = 0; i < PM_ARRAY_LEN(shared); i++)
        v[k++] = shared[i];
    v[k++] = r->request_rate_per_s > 0 ? r->request_rate_per_s : NAN;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        v[k++] = r->modes[m].in_flight;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        v[k++] = r->modes[m].saturated ? 1.0 : 0.0;
    for (size_t i = 0; values && i < n && i < N; i++)
        values[i] = v[i];
    return N;
}

/* ---------------------------------------------------------------- bursts */

/* The columns of a burst (serve --burst's CSV, the Python module's burst()). */
#define BURST_MODE_COLUMNS(m)                                                                    \
    m "_ttft_s", m "_tpot_s", m "_e2e_s", m "_makespan_s", m "_tokens_per_s",                    \
        m "_tokens_per_s_per_device"
static const char *const burst_columns[] = {
    "requests", BURST_MODE_COLUMNS("serial"), BURST_MODE_COLUMNS("fused"),
    BURST_MODE_COLUMNS("preserve"), "admitted", "max_running", "max_concurrency", "hbm_binds",
    "micro_batches", "waves", "steps", "weight_bytes_per_device"};
#undef BURST_MODE_COLUMNS

size_t pm_burst_column_count(void)
{
    return PM_ARRAY_LEN(burst_columns);
}

const char *pm_burst_column_name(size_t i)
{
    return i < PM_ARRAY_LEN(burst_columns) ? burst_columns[i] : NULL;
}

size_t pm_burst_point_values(double requests, const pm_burst_result *r, double *values,
                             size_t n)
{
    enum { N = PM_ARRAY_LEN(burst_columns), PER_MODE = 6 };
    double v[N];
    size_t k = 0;
    v[k++] = requests;
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_burst_mode *x = &r->modes[m];
        const double per[PER_MODE] = {x->ttft_s,     x->tpot_s,       x->e2e_s,
                                      x->makespan_s, x->tokens_per_s, x->tokens_per_s_per_device};
        for (size_t i = 0; i < PER_MODE; i++)
            v[k++] = per[i];
    }
    const double shared[] = {r->admitted,      r->max_running, r->max_concurrency,
                             r->hbm_binds ? 1.0 : 0.0, r->micro_batches, r->waves,
                             (double)r->steps, r->weight_bytes_per_device};
    for (size_t i = 0; i < PM_ARRAY_LEN(shared); i++)
        v[k++] = shared[i];
    for (size_t i = 0; values && i < n && i < N; i++)
        values[i] = v[i];
    return N;
}
