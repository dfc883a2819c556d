/*
 * estimate.c - the smallest use of libpreserve_model: load a bundled scenario by name (or a
 * scenario file by path) and print the request time of the three execution modes and the
 * speedup of PRESERVE. Uses only the public header.
 *
 *   example-estimate [scenario]      (default "llama70b")
 *
 * Bundled data is found in the installed data directory, or where PRESERVE_MODEL_DATA points.
 */
#include <stdio.h>

#include "preserve_model.h"

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "llama70b";
    pm_scenario s;
    pm_error err;
    if (pm_scenario_load(name, NULL, &s, &err) != PM_OK) {
        char msg[1024];
        pm_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "example-estimate: %s\n", msg);
        return 1;
    }
    /* What the estimate may not be of what was meant (the library never prints: it lists). */
    char note[512];
    for (size_t i = 0; pm_scenario_warning(&s, i, note, sizeof note); i++)
        fprintf(stderr, "example-estimate: warning: %s\n", note);
    pm_estimate e;
    if (pm_estimate_compute(&s, &e, &err) != PM_OK) {
        char msg[1024];
        pm_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "example-estimate: %s\n", msg);
        pm_scenario_release(&s);
        return 1;
    }
    printf("scenario %s: %s on %d x %s, batch %d, sequence %lld\n", name, s.model.name,
           s.cluster.devices, s.accel.name, s.workload.batch, (long long)s.workload.seq_len);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_mode_result *r = &e.modes[m];
        printf("  %-9s request %10.4f s  (prefill %8.4f s, decode %10.4f s, %8.2f tokens/s)\n",
               pm_mode_name((pm_mode)m), r->request_s, r->prefill_s, r->decode_s,
               r->tokens_per_s);
    }
    printf("  speedup preserve vs serial %.3fx, vs fused %.3fx\n", e.speedup_preserve_vs_serial,
           e.speedup_preserve_vs_fused);
    pm_scenario_release(&s);
    return 0;
}
