/*
 * burst_cmd.c - `serve --burst N,...`: bursts of requests sent at once (pm_burst_compute), as a
 * benchmark at request rate inf sends them: the mean TTFT (waits included), TPOT, makespan and
 * output tokens/s per mode, and what limits the sequences admitted, as a table, CSV or JSON.
 * The prompt and output are the scenario's, as `serve` serves them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "fmt.h"
#include "output.h"

#define BURST_MAX_POINTS 64
#define BURST_DEFAULT_CHUNK 2048
#define MAX_BURST_COLS 40

/* The options serve --burst does not take; 0 or EXIT_USAGE. */
static int check_options(const cli *c)
{
    if (!c->burst)
        return usage_error("--max-running: only with --burst");
    if (c->concurrency || c->rate)
        return usage_error("--burst: the requests are sent at once (no --concurrency or --rate)");
    if (c->given & GIVEN_ARRIVAL)
        return usage_error("--burst: the requests arrive at once (no --arrival)");
    if (c->n_sweeps > 0 || c->plot)
        return usage_error("--burst: no --sweep or --plot (a table, CSV or JSON)");
    if (c->ttft_limit_s > 0 || c->tpot_limit_s > 0)
        return usage_error("--burst: no latency limits (a burst has no goodput)");
    return 0;
}

static void write_header(FILE *f, const cli *c, const pm_scenario *s, const pm_burst_workload *w)
{
    fprintf(f, "# preserve-model %s serve --burst %s --config ", pm_version(), c->burst);
    fput_comment_text(f, c->config);
    fputc('\n', f);
    print_sets_model_on(f, c, s);
    fprintf(f, " x %d", s->cluster.devices);
    if (pm_cluster_pp(&s->cluster) > 1)
        fprintf(f, " in each of %d pipeline stages", pm_cluster_pp(&s->cluster));
    char lengths[96];
    lengths_words(&w->serve, lengths, sizeof lengths);
    fprintf(f, "; %s; %s, %lld tokens a step\n", lengths,
            w->serve.rule == PM_SERVE_DECODE_FIRST ? "decode-first with chunked prefill"
                                                   : "prefill-first (whole prompts)",
            (long long)w->serve.chunk_budget);
    if (w->max_running > 0)
        fprintf(f, "# a burst: every request sent at t = 0; at most %g running sequences per "
                   "scheduler (--max-running) whose cache fits the HBM\n",
                w->max_running);
    else
        fprintf(f, "# a burst: every request sent at t = 0; running sequences limited by the "
                   "HBM (no --max-running)\n");
}

static void write_csv(const cli *c, const pm_scenario *s, const pm_burst_workload *w,
                      const double *n, const pm_burst_result *r, int points)
{
    write_header(stdout, c, s, w);
    const size_t cols = pm_burst_column_count();
    for (size_t k = 0; k < cols; k++)
        printf("%s%s", k ? "," : "", pm_burst_column_name(k));
    putchar('\n');
    for (int i = 0; i < points; i++) {
        double v[MAX_BURST_COLS];
        pm_burst_point_values(n[i], &r[i], v, cols);
        for (size_t k = 0; k < cols; k++) {
            char num[FMT_G9_MAX];
            fmt_csv(v[k], num);
            printf("%s%s", k ? "," : "", num);
        }
        putchar('\n');
    }
}

static void write_json(const double *n, const pm_burst_result *r, int points)
{
    const size_t cols = pm_burst_column_count();
    printf("{\"bursts\": [");
    for (int i = 0; i < points; i++) {
        double v[MAX_BURST_COLS];
        pm_burst_point_values(n[i], &r[i], v, cols);
        printf("%s\n  {", i ? "," : "");
        for (size_t k = 0; k < cols; k++) {
            char num[FMT_G9_MAX];
            fmt_csv(v[k], num);
            printf("%s\"%s\": %s", k ? ", " : "", pm_burst_column_name(k), num);
        }
        printf("}");
    }
    printf("\n]}\n");
}

static void write_table(const cli *c, const pm_scenario *s, const pm_burst_workload *w,
                        const double *n, const pm_burst_result *r, int points)
{
    write_header(stdout, c, s, w);
    printf("\n%9s  %-8s %10s %10s %10s %12s %12s\n", "requests", "mode", "ttft_s", "tpot_ms",
           "e2e_s", "makespan_s", "tokens/s");
    for (int i = 0; i < points; i++)
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            const pm_burst_mode *x = &r[i].modes[m];
            printf("%9.0f  %-8s %10.3f %10.2f %10.3f %12.3f %12.1f\n", n[i],
                   pm_mode_name((pm_mode)m), x->ttft_s, x->tpot_s * 1e3, x->e2e_s,
                   x->makespan_s, x->tokens_per_s);
        }
    for (int i = 0; i < points; i++)
        printf("\n(%.0f requests: %.0f running at once, bound by %s; %g sequences' cache fits "
               "the HBM)",
               n[i], r[i].admitted,
               r[i].hbm_binds ? "the HBM"
               : r[i].max_running > 0 && r[i].admitted >= r[i].max_running ? "--max-running"
                                                                           : "nothing",
               r[i].max_concurrency);
    putchar('\n');
}

int serve_burst(const cli *c)
{
    int rc = check_options(c);
    double n[BURST_MAX_POINTS];
    const int points = rc ? -1
                          : parse_counts("--burst", c->burst, 1, PM_BURST_MAX_REQUESTS,
                                         BURST_MAX_POINTS, n);
    if (points < 0)
        return EXIT_USAGE;
    if (pm_burst_column_count() > MAX_BURST_COLS) { /* a library newer than this tool */
        fprintf(stderr, "%s: the library has %zu burst columns, this tool room for %d\n", prog,
                pm_burst_column_count(), MAX_BURST_COLS);
        return EXIT_CONFIG;
    }
    pm_scenario s;
    if ((rc = load(c, &s)) != 0)
        return rc;
    pm_burst_workload w = {.max_running = c->max_running};
    rc = served_workload(c, &s.workload, c->chunk > 0 ? c->chunk : BURST_DEFAULT_CHUNK,
                         &w.serve);
    if (rc == 0)
        served_workload_warn(&s, &w.serve);
    pm_burst_result *r = rc ? NULL : calloc((size_t)points, sizeof *r);
    if (rc == 0 && !r)
        rc = out_of_memory();
    for (int i = 0; i < points && rc == 0; i++) {
        pm_error err;
        w.requests = (int64_t)n[i];
        if (pm_burst_compute(&s, &w, &r[i], &err) != PM_OK) {
            fprintf(stderr, "%s: serve: a burst of %g requests: %s\n", prog, n[i], err.message);
            rc = err.status == PM_ERR_INVALID_ARG ? EXIT_USAGE : EXIT_CONFIG;
        }
    }
    if (rc == 0 && c->format == FMT_JSON)
        write_json(n, r, points);
    else if (rc == 0 && c->format == FMT_CSV)
        write_csv(c, &s, &w, n, r, points);
    else if (rc == 0)
        write_table(c, &s, &w, n, r, points);
    if (rc == 0 && ferror(stdout))
        stdout_failed(errno);
    free(r);
    pm_scenario_release(&s);
    return rc;
}
