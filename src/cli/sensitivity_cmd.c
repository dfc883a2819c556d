/*
 * sensitivity_cmd.c - `preserve-model sensitivity`: whether a PRESERVE verdict depends on an
 * assumption. The scenario's estimate under each prefetch-consumer semantics (wait: the paper's
 * events; stream: a hardware-managed cache) with and without HBM sharing between the two
 * streams, side by side: PRESERVE's tokens/s and its speedup over serial and fused. Serial and
 * fused do not prefetch, so only PRESERVE moves; the row the scenario itself uses is marked.
 */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "output.h"

/* One assumption set and its estimate. */
typedef struct sens_row {
    pm_prefetch_consumer consumer;
    bool sharing;
    pm_estimate e;
} sens_row;

int cmd_sensitivity(const cli *c)
{
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    sens_row rows[4];
    pm_error err;
    for (int i = 0; i < 4; i++) {
        pm_scenario t = s;
        rows[i].consumer = i < 2 ? PM_CONSUMER_WAIT : PM_CONSUMER_STREAM;
        rows[i].sharing = i % 2 == 1;
        t.accel.prefetch_consumer = rows[i].consumer;
        t.options.hbm_sharing = rows[i].sharing;
        if (pm_estimate_compute(&t, &rows[i].e, &err) != PM_OK) {
            pm_scenario_release(&s);
            return config_error(&err);
        }
    }
    const bool json = c->format == FMT_JSON, csv = c->format == FMT_CSV;
    if (json) {
        printf("{\n  \"tool\": \"preserve-model %s\",\n  \"scenario\": ", pm_version());
        fput_json_string(stdout, s.name);
        printf(",\n  \"rows\": [\n");
    } else if (csv) {
        printf("# preserve-model %s sensitivity: scenario ", pm_version());
        fput_comment_text(stdout, s.name);
        printf("\nprefetch_consumer,hbm_sharing,scenario_default,preserve_tokens_per_s,"
               "speedup_preserve_vs_serial,speedup_preserve_vs_fused\n");
    } else {
        printf("# preserve-model %s sensitivity: scenario ", pm_version());
        fput_comment_text(stdout, s.name);
        printf(" (%s on %s x %d): PRESERVE under each assumption (serial and fused do not "
               "prefetch: %.2f and %.2f tokens/s)\n",
               s.model.name, s.accel.name, s.cluster.devices, rows[0].e.modes[0].tokens_per_s,
               rows[0].e.modes[1].tokens_per_s);
        printf("%-8s %-12s %14s %18s %17s\n", "consumer", "hbm_sharing", "preserve_tok/s",
               "vs_serial", "vs_fused");
    }
    for (int i = 0; i < 4; i++) {
        const sens_row *r = &rows[i];
        const bool own = r->consumer == s.accel.prefetch_consumer &&
                         r->sharing == s.options.hbm_sharing;
        const char *name = pm_prefetch_consumer_name(r->consumer);
        const double tps = r->e.modes[PM_MODE_PRESERVE].tokens_per_s;
        if (json) {
            printf("    {\"prefetch_consumer\": \"%s\", \"hbm_sharing\": %s, "
                   "\"scenario_default\": %s, \"preserve_tokens_per_s\": ",
                   name, r->sharing ? "true" : "false", own ? "true" : "false");
            fput_json_number(stdout, tps);
            printf(", \"speedup_preserve_vs_serial\": ");
            fput_json_number(stdout, r->e.speedup_preserve_vs_serial);
            printf(", \"speedup_preserve_vs_fused\": ");
            fput_json_number(stdout, r->e.speedup_preserve_vs_fused);
            printf("}%s\n", i < 3 ? "," : "");
        } else if (csv) {
            printf("%s,%d,%d,%.9g,%.9g,%.9g\n", name, r->sharing, own, tps,
                   r->e.speedup_preserve_vs_serial, r->e.speedup_preserve_vs_fused);
        } else {
            printf("%-8s %-12s %14.2f %17.3fx %16.3fx%s\n", name, r->sharing ? "on" : "off", tps,
                   r->e.speedup_preserve_vs_serial, r->e.speedup_preserve_vs_fused,
                   own ? "  (the scenario's)" : "");
        }
    }
    if (json)
        printf("  ]\n}\n");
    pm_scenario_release(&s);
    return 0;
}
