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
 * The report starts with the CPU model (/proc/cpuinfo): speed figures mean nothing without it.
 *
 * Counting mode, for instruction counts (scripts/bench-instructions.sh runs it under
 * valgrind --tool=callgrind, once with N iterations and once with 0, and divides the difference
 * by N, so that loading and start-up cancel out):
 *
 *   pm-bench --count FIGURE --iterations N [--scenario NAME] [--seq N] [--layers N]
 *            [--axis SPEC] [--data-dir DIR]
 *
 * FIGURE is one of
 *   step        pm_step_model_decode_time (PRESERVE, context 16383, prepared once)
 *   step_cold   pm_decode_step_time (PRESERVE, context 16383)
 *   e2e         pm_estimate_compute of the scenario (default llama70b; --seq and --layers
 *               override its sequence length and layer count)
 *   sweep       one pm_sweep_run over --axis SPEC on the calling thread (one iteration is the
 *               whole sweep: divide by its points for a per-point figure)
 *   search_hw   one pm_search_run of the scenario's deployment at 64 sequences and a chunk
 *               budget of 2048 over the hardware points of --axis SPEC (given twice: two
 *               hardware axes, the first's points slowest in the space), one thread: a
 *               hardware point of a compiled served point (issue 46 item 3), per point
 * It prints the points per iteration and the wall time per iteration in ns (meaningless under
 * valgrind; the script takes the times from a native run).
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

static const char *cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return buf;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(buf, n, "%s", colon + 1 + (colon[1] == ' '));
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    }
    fclose(f);
    return buf;
}

typedef struct count_opts {
    const char *figure, *scenario, *axis, *axis2, *data_dir;
    long iterations, seq, layers;
} count_opts;

/* The counting mode (see the top of the file). */
static int count_mode(const count_opts *c)
{
    pm_load_opts lo = {c->data_dir, NULL, 0};
    pm_scenario s;
    pm_error err;
    if (pm_scenario_load(c->scenario, &lo, &s, &err) != PM_OK)
        return fail(c->scenario, &err);
    if (c->seq > 0)
        s.workload.seq_len = c->seq;
    if (c->layers > 0)
        s.model.layers = (int)c->layers;
    size_t points = 1;
    double acc = 0.0, t0 = now();
    if (strcmp(c->figure, "step") == 0) {
        pm_step_model *sm;
        if (pm_step_model_new(&s, PM_MODE_PRESERVE, &sm, &err) != PM_OK)
            return fail("pm_step_model_new", &err);
        t0 = now();
        for (long i = 0; i < c->iterations; i++)
            acc += pm_step_model_decode_time(sm, 16383 - (i & 1));
        pm_step_model_free(sm);
    } else if (strcmp(c->figure, "step_cold") == 0) {
        for (long i = 0; i < c->iterations; i++) {
            double t;
            if (pm_decode_step_time(&s, PM_MODE_PRESERVE, 16383, &t, &err) != PM_OK)
                return fail("pm_decode_step_time", &err);
            acc += t;
        }
    } else if (strcmp(c->figure, "e2e") == 0) {
        pm_estimate e;
        for (long i = 0; i < c->iterations; i++) {
            if (pm_estimate_compute(&s, &e, &err) != PM_OK)
                return fail("pm_estimate_compute", &err);
            acc += e.modes[PM_MODE_PRESERVE].request_s;
        }
    } else if (strcmp(c->figure, "serve") == 0) {
        /* One point of a served workload, all three modes: the prompt and output of the
         * scenario, 64 sequences in flight, 2048 tokens a step, chunked prefill. */
        const pm_serve_workload w = {pm_workload_prompt_tokens(&s.workload),
                                     pm_workload_decode_steps(&s.workload), 64, 2048,
                                     PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0, {{0}}};
        pm_serve_result r;
        for (long i = 0; i < c->iterations; i++) {
            if (pm_serve_compute(&s, &w, &r, &err) != PM_OK)
                return fail("pm_serve_compute", &err);
            acc += r.modes[PM_MODE_PRESERVE].tokens_per_s_per_device;
        }
    } else if (strcmp(c->figure, "search_hw") == 0 && c->axis) {
        /* A search of one deployment (the scenario's), one chunk budget (2048) and one
         * concurrency (64) over the hardware points of --axis, exhaustive, on one thread: the
         * first point compiles the served point, the others re-cost it (issue 46 item 3). */
        pm_search_spec sp;
        memset(&sp, 0, sizeof sp);
        sp.workload = (pm_serve_workload){pm_workload_prompt_tokens(&s.workload),
                                          pm_workload_decode_steps(&s.workload), 64, 2048,
                                          PM_SERVE_DECODE_FIRST, 0, 0, PM_SERVE_STAGGERED, 0, 0,
                                          {{0}}};
        sp.tp[0] = s.cluster.devices;
        sp.n_tp = 1;
        sp.concurrency[0] = 64;
        sp.n_concurrency = 1;
        sp.chunk[0] = 2048;
        sp.n_chunk = 1;
        sp.hw[0] = axis(c->axis);
        sp.n_hw = 1;
        if (c->axis2) {
            sp.hw[1] = axis(c->axis2);
            sp.n_hw = 2;
        }
        sp.exhaustive = true;
        sp.threads = 1;
        points = sp.hw[0].n_values * (c->axis2 ? sp.hw[1].n_values : 1);
        t0 = now();
        for (long i = 0; i < c->iterations; i++) {
            pm_search_result r;
            if (pm_search_run(&s, &sp, &r, &err) != PM_OK)
                return fail("pm_search_run", &err);
            acc += r.evaluated;
            pm_search_result_free(&r);
        }
        for (int a = 0; a < sp.n_hw; a++)
            pm_axis_release(&sp.hw[a]);
    } else if (strcmp(c->figure, "sweep") == 0 && c->axis) {
        pm_axis a = axis(c->axis);
        pm_sweep_opts so = {.threads = 1};
        points = a.n_values;
        t0 = now();
        for (long i = 0; i < c->iterations; i++) {
            best b = {0};
            if (pm_sweep_run(&s, &a, 1, &so, consume, &b, &err) != PM_OK)
                return fail("pm_sweep_run", &err);
            acc += b.density;
        }
        pm_axis_release(&a);
    } else {
        fprintf(stderr, "pm-bench: --count: expected step, step_cold, e2e, serve, sweep or "
                        "search_hw (with --axis)\n");
        return 2;
    }
    const double dt = now() - t0;
    sink = acc;
    printf("points %zu\nns_per_iteration %.1f\n", points,
           c->iterations > 0 ? dt / (double)c->iterations * 1e9 : 0.0);
    pm_scenario_release(&s);
    return 0;
}

/* The default mode's figures. */
typedef struct figures {
    double step_ns, step_cold_ns, e2e[2], sweep_pps, grid_s, rss;
    size_t grid_points, grid_invalid;
} figures;

/* One decode step, prepared and cold; v holds reps samples. */
static int time_steps(const pm_scenario *s, bool quick, int reps, double *v, figures *f)
{
    pm_error err;
    pm_step_model *sm;
    if (pm_step_model_new(s, PM_MODE_PRESERVE, &sm, &err) != PM_OK)
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
    f->step_ns = median(v, reps);
    pm_step_model_free(sm);
    for (int r = -1; r < reps; r++) {
        double t0 = now(), acc = 0.0, t;
        for (int i = 0; i < inner_step / 4; i++) {
            pm_decode_step_time(s, PM_MODE_PRESERVE, 16383, &t, NULL);
            acc += t;
        }
        sink = acc;
        if (r >= 0)
            v[r] = (now() - t0) / (inner_step / 4) * 1e9;
    }
    f->step_cold_ns = median(v, reps);
    return 0;
}

/* End to end at 16K and 64K. */
static int time_e2e(const pm_scenario *s, bool quick, int reps, double *v, figures *f)
{
    pm_error err;
    const int64_t seqs[2] = {16384, 65536};
    const int inner_e2e = quick ? 200 : 20000;
    for (int k = 0; k < 2; k++) {
        pm_scenario t = *s;
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
        f->e2e[k] = median(v, reps);
    }
    return 0;
}

/* A 1,000-point l2 sweep, then the million-point grid: 25 L2 sizes x 10 link bandwidths x 8
 * batches x 500 sequence lengths (quick: 25 x 10 x 4 x 10). */
static int time_sweeps(const pm_scenario *s, bool quick, int threads, double *v, figures *f)
{
    pm_error err;
    pm_axis l2 = axis("l2=1MiB:1000MiB:1MiB");
    pm_sweep_opts so = {.threads = threads};
    const int sweep_reps = quick ? 3 : 11;
    for (int r = -1; r < sweep_reps; r++) {
        best b = {0};
        double t0 = now();
        if (pm_sweep_run(s, &l2, 1, &so, consume, &b, &err) != PM_OK)
            return fail("pm_sweep_run", &err);
        if (r >= 0)
            v[r] = (double)b.points / (now() - t0);
    }
    f->sweep_pps = median(v, sweep_reps);
    pm_axis_release(&l2);
    pm_axis grid[4] = {axis("l2=8MiB:200MiB:8MiB"), axis("link_bw=100Gbps:1000Gbps:100Gbps"),
                       axis(quick ? "batch=1,4,16,64" : "batch=1:128:x2"),
                       axis(quick ? "seq=1k:10k:1k" : "seq=256:128000:256")};
    f->grid_points = pm_sweep_size(grid, 4);
    const int grid_reps = quick ? 1 : 3;
    for (int r = 0; r < grid_reps; r++) {
        best b = {0};
        double t0 = now();
        if (pm_sweep_run(s, grid, 4, &so, consume, &b, &err) != PM_OK)
            return fail("pm_sweep_run", &err);
        v[r] = now() - t0;
        f->grid_invalid = b.invalid;
    }
    f->grid_s = median(v, grid_reps);
    for (int a = 0; a < 4; a++)
        pm_axis_release(&grid[a]);
    return 0;
}

static void print_figures(const figures *f, bool json, bool quick)
{
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    const double pps = (double)f->grid_points / f->grid_s;
    if (json) {
        printf("{\n  \"tool\": \"pm-bench %s\",\n  \"quick\": %s,\n", pm_version(),
               quick ? "true" : "false");
        printf("  \"cpu\": \"%s\",\n", cpu);
        printf("  \"decode_step_ns\": %.1f,\n  \"decode_step_cold_ns\": %.1f,\n", f->step_ns,
               f->step_cold_ns);
        printf("  \"e2e_ns_16k\": %.1f,\n  \"e2e_ns_64k\": %.1f,\n", f->e2e[0], f->e2e[1]);
        printf("  \"e2e_64k_over_16k\": %.3f,\n", f->e2e[1] / f->e2e[0]);
        printf("  \"sweep_points_per_s\": %.0f,\n", f->sweep_pps);
        printf("  \"grid_points\": %zu,\n  \"grid_invalid_points\": %zu,\n", f->grid_points,
               f->grid_invalid);
        printf("  \"grid_s\": %.3f,\n  \"grid_points_per_s\": %.0f,\n", f->grid_s, pps);
        printf("  \"peak_rss_bytes\": %.0f\n}\n", f->rss);
    } else {
        printf("pm-bench %s%s (medians)\n", pm_version(), quick ? " --quick" : "");
        printf("CPU                         %s\n", cpu);
        printf("decode step (prepared)      %10.1f ns\n", f->step_ns);
        printf("decode step (cold)          %10.1f ns\n", f->step_cold_ns);
        printf("end to end, 16K             %10.1f ns\n", f->e2e[0]);
        printf("end to end, 64K             %10.1f ns  (%.2fx the 16K case)\n", f->e2e[1],
               f->e2e[1] / f->e2e[0]);
        printf("1,000-point l2 sweep        %10.0f points/s\n", f->sweep_pps);
        printf("grid of %zu points      %10.3f s  (%.0f points/s, %zu invalid)\n",
               f->grid_points, f->grid_s, pps, f->grid_invalid);
        printf("peak RSS                    %10.1f MiB\n", f->rss / 1048576.0);
    }
}

/* The default mode: every figure of the top of the file, on Llama3-70B. */
static int figures_mode(const char *data_dir, bool json, bool quick, int threads)
{
    pm_load_opts lo = {data_dir, NULL, 0};
    pm_scenario s;
    pm_error err;
    if (pm_scenario_load("llama70b", &lo, &s, &err) != PM_OK)
        return fail("llama70b", &err);
    const int reps = quick ? 5 : 31;
    double *v = malloc((size_t)reps * sizeof *v);
    figures f = {0};
    int rc = 0;
    if (!v) {
        fprintf(stderr, "pm-bench: out of memory\n");
        rc = 1;
    }
    if (rc == 0)
        rc = time_steps(&s, quick, reps, v, &f);
    if (rc == 0)
        rc = time_e2e(&s, quick, reps, v, &f);
    if (rc == 0)
        rc = time_sweeps(&s, quick, threads, v, &f);
    pm_scenario_release(&s);
    free(v);
    if (rc != 0)
        return rc;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    f.rss = (double)ru.ru_maxrss * 1024.0;
    print_figures(&f, json, quick);
    return 0;
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
                                         {"count", required_argument, NULL, 'c'},
                                         {"iterations", required_argument, NULL, 'n'},
                                         {"scenario", required_argument, NULL, 's'},
                                         {"seq", required_argument, NULL, 'S'},
                                         {"layers", required_argument, NULL, 'L'},
                                         {"axis", required_argument, NULL, 'a'},
                                         {NULL, 0, NULL, 0}};
    count_opts co = {.scenario = "llama70b", .iterations = 1};
    int o;
    while ((o = getopt_long(argc, argv, "f:qt:d:hc:n:s:S:L:a:", opts, NULL)) != -1) {
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
        case 'c': co.figure = optarg; break;
        case 'n': co.iterations = atol(optarg); break;
        case 's': co.scenario = optarg; break;
        case 'S': co.seq = atol(optarg); break;
        case 'L': co.layers = atol(optarg); break;
        case 'a': *(co.axis ? &co.axis2 : &co.axis) = optarg; break;
        case 'h':
            printf("Usage: pm-bench [--format text|json] [--quick] [--threads N] [--data-dir DIR]\n"
                   "       pm-bench --count step|step_cold|e2e|serve|sweep --iterations N "
                   "[--scenario NAME] [--seq N] [--layers N] [--axis SPEC [--axis SPEC]]\n");
            return 0;
        default: return 2;
        }
    }
    gsl_set_error_handler_off();
    if (co.figure) {
        co.data_dir = data_dir;
        return count_mode(&co);
    }
    return figures_mode(data_dir, json, quick, threads);
}
