/*
 * pm-bench - the project's speed and memory figures (never checked by timed tests: machines
 * are shared and noisy). Each figure is the median of repeated runs after a warm-up:
 *
 *   decode_step_ns        one decode-step time from a prepared pm_step_model (Llama3-70B,
 *                         PRESERVE, context 16383)
 *   decode_step_cold_ns   the same through pm_decode_step_time (checks and prepares each call)
 *   e2e_ns_16k, e2e_ns_64k  one pm_estimate_compute (prefill plus every decode step, the three
 *                         modes) of Llama3-70B at sequence 16K and 64K
 *   sweep_points_per_s    a 1,000-point --sweep l2 through pm_sweep_run (all threads)
 *   grid_points           the million-point grid l2 x link_bw x batch x seq
 *   grid_s, grid_points_per_s  its wall time on all threads, streamed (bounded memory)
 *   peak_rss_bytes        the process's peak resident memory at the end
 *
 * Usage: pm-bench [--format text|json] [--quick] [--threads N] [--data-dir DIR]
 * --quick shrinks repeats and the grid (10,000 points) so the test suite can check it runs.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#include "preserve_model.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Volatile sink so the compiler keeps the work. */
static volatile double sink;

typedef struct best {
    double density;
    size_t points, invalid;
} best;

static int consume(const pm_sweep_point *p, size_t n, void *user)
{
    best *b = user;
    for (size_t i = 0; i < n; i++) {
        if (p[i].status != PM_OK) {
            b->invalid++;
            continue;
        }
        if (p[i].density[PM_MODE_PRESERVE] > b->density)
            b->density = p[i].density[PM_MODE_PRESERVE];
    }
    b->points += n;
    return 0;
}

static int fail(const char *what, const pm_error *err)
{
    char buf[1200];
    pm_error_format(err, buf, sizeof buf);
    fprintf(stderr, "pm-bench: %s: %s\n", what, buf);
    return 1;
}

static pm_axis axis(const char *spec)
{
    pm_axis a = {0};
    pm_error err;
    if (pm_axis_parse(spec, 0, &a, &err) != PM_OK) {
        fail(spec, &err);
        exit(1);
    }
    return a;
}

int main(int argc, char **argv)
{
    bool json = false, quick = false;
    int threads = 0;
    const char *data_dir = NULL;
    static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                         {"quick", no_argument, NULL, 'q'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"data-dir", required_argument, NULL, 'd'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "f:qt:d:h", opts, NULL)) != -1) {
        switch (o) {
        case 'f':
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0) {
                fprintf(stderr, "pm-bench: --format: expected text or json\n");
                return 2;
            }
            json = strcmp(optarg, "json") == 0;
            break;
        case 'q': quick = true; break;
        case 't': threads = atoi(optarg); break;
        case 'd': data_dir = optarg; break;
        case 'h':
            printf("Usage: pm-bench [--format text|json] [--quick] [--threads N] [--data-dir DIR]\n");
            return 0;
        default: return 2;
        }
    }
    gsl_set_error_handler_off();
    pm_load_opts lo = {data_dir, NULL, 0};
    pm_scenario s;
    pm_error err;
    if (pm_scenario_load("llama70b", &lo, &s, &err) != PM_OK)
        return fail("llama70b", &err);
    const int reps = quick ? 5 : 31;
    double *v = malloc((size_t)reps * sizeof *v);

    /* One decode step, prepared and cold. */
    pm_step_model *sm;
    if (pm_step_model_new(&s, PM_MODE_PRESERVE, &sm, &err) != PM_OK)
        return fail("pm_step_model_new", &err);
    const int inner_step = quick ? 2000 : 200000;
    for (int r = -1; r < reps; r++) {
        double t0 = now(), acc = 0.0;
        for (int i = 0; i < inner_step; i++)
            acc += pm_step_model_decode_time(sm, 16383 - (i & 1));
        sink = acc;
        if (r >= 0)
            v[r] = (now() - t0) / inner_step * 1e9;
    }
    const double step_ns = median(v, reps);
    pm_step_model_free(sm);
    for (int r = -1; r < reps; r++) {
        double t0 = now(), acc = 0.0, t;
        for (int i = 0; i < inner_step / 4; i++) {
            pm_decode_step_time(&s, PM_MODE_PRESERVE, 16383, &t, NULL);
            acc += t;
        }
        sink = acc;
        if (r >= 0)
            v[r] = (now() - t0) / (inner_step / 4) * 1e9;
    }
    const double step_cold_ns = median(v, reps);

    /* End to end at 16K and 64K. */
    double e2e[2];
    const int64_t seqs[2] = {16384, 65536};
    const int inner_e2e = quick ? 200 : 20000;
    for (int k = 0; k < 2; k++) {
        pm_scenario t = s;
        t.workload.seq_len = seqs[k];
        pm_estimate e;
        for (int r = -1; r < reps; r++) {
            double t0 = now();
            for (int i = 0; i < inner_e2e; i++) {
                if (pm_estimate_compute(&t, &e, &err) != PM_OK)
                    return fail("pm_estimate_compute", &err);
                sink = e.modes[PM_MODE_PRESERVE].request_s;
            }
            if (r >= 0)
                v[r] = (now() - t0) / inner_e2e * 1e9;
        }
        e2e[k] = median(v, reps);
    }

    /* A 1,000-point l2 sweep. */
    pm_axis l2 = axis("l2=1MiB:1000MiB:1MiB");
    pm_sweep_opts so = {.threads = threads};
    const int sweep_reps = quick ? 3 : 11;
    for (int r = -1; r < sweep_reps; r++) {
        best b = {0};
        double t0 = now();
        if (pm_sweep_run(&s, &l2, 1, &so, consume, &b, &err) != PM_OK)
            return fail("pm_sweep_run", &err);
        if (r >= 0)
            v[r] = (double)b.points / (now() - t0);
    }
    const double sweep_pps = median(v, sweep_reps);
    pm_axis_release(&l2);

    /* The million-point grid: 25 L2 sizes x 10 link bandwidths x 8 batches x 500 sequence
     * lengths (quick: 25 x 10 x 4 x 10). */
    pm_axis grid[4] = {axis("l2=8MiB:200MiB:8MiB"), axis("link_bw=100Gbps:1000Gbps:100Gbps"),
                       axis(quick ? "batch=1,4,16,64" : "batch=1:128:x2"),
                       axis(quick ? "seq=1k:10k:1k" : "seq=256:128000:256")};
    const size_t grid_points = pm_sweep_size(grid, 4);
    const int grid_reps = quick ? 1 : 3;
    best gb = {0};
    for (int r = 0; r < grid_reps; r++) {
        best b = {0};
        double t0 = now();
        if (pm_sweep_run(&s, grid, 4, &so, consume, &b, &err) != PM_OK)
            return fail("pm_sweep_run", &err);
        v[r] = now() - t0;
        gb = b;
    }
    const double grid_s = median(v, grid_reps);
    for (int a = 0; a < 4; a++)
        pm_axis_release(&grid[a]);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double rss = (double)ru.ru_maxrss * 1024.0;
    pm_scenario_release(&s);
    free(v);

    if (json) {
        printf("{\n  \"tool\": \"pm-bench %s\",\n  \"quick\": %s,\n", pm_version(),
               quick ? "true" : "false");
        printf("  \"decode_step_ns\": %.1f,\n  \"decode_step_cold_ns\": %.1f,\n", step_ns,
               step_cold_ns);
        printf("  \"e2e_ns_16k\": %.1f,\n  \"e2e_ns_64k\": %.1f,\n", e2e[0], e2e[1]);
        printf("  \"e2e_64k_over_16k\": %.3f,\n", e2e[1] / e2e[0]);
        printf("  \"sweep_points_per_s\": %.0f,\n", sweep_pps);
        printf("  \"grid_points\": %zu,\n  \"grid_invalid_points\": %zu,\n", grid_points,
               gb.invalid);
        printf("  \"grid_s\": %.3f,\n  \"grid_points_per_s\": %.0f,\n", grid_s,
               (double)grid_points / grid_s);
        printf("  \"peak_rss_bytes\": %.0f\n}\n", rss);
    } else {
        printf("pm-bench %s%s (medians)\n", pm_version(), quick ? " --quick" : "");
        printf("decode step (prepared)      %10.1f ns\n", step_ns);
        printf("decode step (cold)          %10.1f ns\n", step_cold_ns);
        printf("end to end, 16K             %10.1f ns\n", e2e[0]);
        printf("end to end, 64K             %10.1f ns  (%.2fx the 16K case)\n", e2e[1],
               e2e[1] / e2e[0]);
        printf("1,000-point l2 sweep        %10.0f points/s\n", sweep_pps);
        printf("grid of %zu points      %10.3f s  (%.0f points/s, %zu invalid)\n", grid_points,
               grid_s, (double)grid_points / grid_s, gb.invalid);
        printf("peak RSS                    %10.1f MiB\n", rss / 1048576.0);
    }
    return 0;
}
