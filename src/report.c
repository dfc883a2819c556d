/*
 * report.c - the shapes of what the tool reports, kept in the library so that every front end
 * (the CLI, the Python module) prints one and the same thing: the run report as JSON
 * (`preserve-model --format json`) and the result columns of a sweep point (the sweep CSV's
 * columns between the axes and "error").
 */
#include <math.h>
#include <string.h>

#include "internal.h"

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
    pm_sb_printf(&b,
                 ", \"devices\": %d, \"batch\": %d, \"seq_len\": %lld, \"prefill_tokens\": %lld, "
                 "\"decode_steps\": %lld},\n",
                 s->cluster.devices, s->workload.batch, (long long)s->workload.seq_len,
                 (long long)e->prefill_tokens, (long long)e->decode_steps);
    pm_sb_printf(&b, "  \"tpot_context_len\": %lld,\n", (long long)(s->workload.seq_len - 1));
    pm_sb_printf(&b, "  \"modes\": {\n");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_mode_result *r = &e->modes[m];
        pm_sb_printf(&b,
                     "    \"%s\": {\"request_s\": %.9g, \"prefill_s\": %.9g, \"decode_s\": %.9g, "
                     "\"tpot_s\": %.9g, \"tpot_mean_s\": %.9g, \"tokens_per_s\": %.9g, "
                     "\"allreduce_algorithm\": \"%s\", \"allreduce_decode_s\": %.9g",
                     pm_mode_name((pm_mode)m), r->request_s, r->prefill_s, r->decode_s,
                     r->tpot_s, r->tpot_mean_s, r->tokens_per_s,
                     pm_allreduce_algo_name(r->allreduce), r->allreduce_decode_s);
        if (m == PM_MODE_FUSED)
            pm_sb_printf(&b, ", \"fused_chunks\": %d", r->fused_chunks);
        pm_sb_printf(&b, "}%s\n", m + 1 < PM_MODE_COUNT ? "," : "");
    }
    pm_sb_printf(&b,
                 "  },\n  \"speedup\": {\"preserve_vs_serial\": %.6g, \"preserve_vs_fused\": "
                 "%.6g, \"fused_vs_serial\": %.6g},\n",
                 e->speedup_preserve_vs_serial, e->speedup_preserve_vs_fused,
                 e->speedup_fused_vs_serial);
    pm_sb_printf(&b,
                 "  \"shard\": {\"q_heads\": %.6g, \"kv_heads\": %.6g, \"kv_replicated\": %s, "
                 "\"uneven\": %s},\n",
                 e->shard.q_heads, e->shard.kv_heads, e->shard.kv_replicated ? "true" : "false",
                 e->shard.uneven ? "true" : "false");
    pm_sb_printf(&b,
                 "  \"memory\": {\"weight_bytes_per_device\": %.6g, \"kv_bytes_per_device\": "
                 "%.6g, \"fits_hbm\": %s, \"l2_window_bytes\": %.6g, \"kv_spill_context\": "
                 "%lld}\n}\n",
                 e->weight_bytes_per_device, e->kv_bytes_per_device,
                 e->fits_hbm ? "true" : "false", e->l2_window_bytes,
                 (long long)e->kv_spill_context);
    if (b.failed) {
        pm_free(b.p);
        return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory writing the report");
    }
    *text_out = b.p;
    return PM_OK;
}

static const char *const sweep_columns[] = {
    "serial_request_s", "fused_request_s", "preserve_request_s", "serial_tpot_s",
    "fused_tpot_s", "preserve_tpot_s", "serial_tokens_per_s", "fused_tokens_per_s",
    "preserve_tokens_per_s", "speedup_preserve_vs_serial", "speedup_preserve_vs_fused",
    "speedup_fused_vs_serial", "die_mm2", "density_serial_tokens_per_s_per_mm2",
    "density_fused_tokens_per_s_per_mm2", "density_preserve_tokens_per_s_per_mm2"};

size_t pm_sweep_column_count(void) { return PM_ARRAY_LEN(sweep_columns); }

const char *pm_sweep_column_name(size_t i)
{
    return i < PM_ARRAY_LEN(sweep_columns) ? sweep_columns[i] : NULL;
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
        const double ok[N] = {
            r[0].request_s, r[1].request_s, r[2].request_s, r[0].tpot_s, r[1].tpot_s,
            r[2].tpot_s, r[0].tokens_per_s, r[1].tokens_per_s, r[2].tokens_per_s,
            e->speedup_preserve_vs_serial, e->speedup_preserve_vs_fused,
            e->speedup_fused_vs_serial, p->die_mm2, p->density[0], p->density[1],
            p->density[2]};
        memcpy(v, ok, sizeof v);
    }
    if (values)
        memcpy(values, v, (n < N ? n : N) * sizeof *values);
    return N;
}
