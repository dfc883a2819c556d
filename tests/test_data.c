/*
 * test_data.c - the shipped data files: every one validates, every number in the accelerator
 * and cluster files carries its own source, the paper's six models have the architectures of
 * their HuggingFace config.json (as quoted in the reference notes, section 6), and the numbers
 * the paper's results hinge on (Ascend 910B L2 and HBM) come out in SI as worked out by hand, and
 * the values one preset copies from another (the H200 from the H100, vLLM on ROCm from vLLM) equal
 * their originals.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "testutil.h"

#include "internal.h"

/* Hand values are decimal literals times exact powers of 2 or 10: one rounding at most. */
#define EXACT 1e-15

static const pm_load_opts g_opts = {PM_TEST_DATA_DIR, NULL, 0};

static const pm_file_kind data_kinds[] = {PM_KIND_MODEL, PM_KIND_ACCELERATOR, PM_KIND_CLUSTER,
                                          PM_KIND_WORKLOAD, PM_KIND_SCENARIO};

static void data_path(pm_file_kind kind, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s/%s.json", PM_TEST_DATA_DIR, pm_kind_dir(kind), name);
}

static void list_kind(pm_file_kind kind, char ***names, size_t *count)
{
    pm_error err;
    pm_status st = pm_data_list(PM_TEST_DATA_DIR, kind, names, count, &err);
    if (st != PM_OK) {
        print_error("pm_data_list(%s): %s: %s\n", pm_file_kind_name(kind), pm_status_name(st),
                    err.message);
        fail();
    }
}

static cJSON *load_json(const char *path)
{
    cJSON *json = NULL;
    pm_error err;
    if (pm_json_load_file(path, &json, &err) != PM_OK) {
        print_error("%s: %s\n", path, err.message);
        fail();
    }
    return json;
}

#define assert_ok(st, err) check_ok((st), (err), __FILE__, __LINE__)

static void check_ok(pm_status st, const pm_error *err, const char *file, int line)
{
    if (st != PM_OK) {
        char text[1200];
        pm_error_format(err, text, sizeof text);
        print_error("expected PM_OK, got %s: %s\n", pm_status_name(st), text);
        _fail(file, line);
    }
}

/* ---------------------------------------------------------------- every file validates */

static void test_every_shipped_file_validates(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t k = 0; k < sizeof data_kinds / sizeof data_kinds[0]; k++) {
        char **names = NULL;
        size_t n = 0;
        list_kind(data_kinds[k], &names, &n);
        if (n == 0) {
            print_error("no shipped %s files\n", pm_file_kind_name(data_kinds[k]));
            failures++;
        }
        for (size_t i = 0; i < n; i++) {
            char path[1024];
            data_path(data_kinds[k], names[i], path, sizeof path);
            pm_error err;
            pm_file_kind kind = PM_KIND_COUNT;
            pm_status st = pm_file_validate(path, &g_opts, &kind, &err);
            if (st != PM_OK) {
                char text[1200];
                pm_error_format(&err, text, sizeof text);
                print_error("%s: %s\n", pm_status_name(st), text);
                failures++;
            } else if (kind != data_kinds[k]) {
                print_error("%s: a \"%s\" file under %s/\n", path, pm_file_kind_name(kind),
                            pm_kind_dir(data_kinds[k]));
                failures++;
            }
        }
        pm_names_free(names, n);
    }
    assert_int_equal(failures, 0);
}

static void test_every_bundled_scenario_loads_by_name(void **state)
{
    (void)state;
    char **names = NULL;
    size_t n = 0;
    list_kind(PM_KIND_SCENARIO, &names, &n);
    assert_true(n >= 1);
    for (size_t i = 0; i < n; i++) {
        pm_scenario s;
        pm_error err;
        assert_ok(pm_scenario_load(names[i], &g_opts, &s, &err), &err);
        assert_ok(pm_scenario_check(&s, &err), &err);
        pm_scenario_release(&s);
    }
    pm_names_free(names, n);
}

static void test_data_list_is_sorted_and_names_the_paper_models(void **state)
{
    (void)state;
    char **names = NULL;
    size_t n = 0;
    list_kind(PM_KIND_MODEL, &names, &n);
    for (size_t i = 1; i < n; i++)
        assert_true(strcmp(names[i - 1], names[i]) < 0);
    const char *paper[] = {"llama3-8b", "llama3-70b", "qwen2-7b",
                           "qwen2-72b", "phi3-small", "phi3-medium"};
    for (size_t p = 0; p < sizeof paper / sizeof paper[0]; p++) {
        bool found = false;
        for (size_t i = 0; i < n; i++)
            found = found || strcmp(names[i], paper[p]) == 0;
        if (!found) {
            print_error("model \"%s\" is not shipped\n", paper[p]);
            fail();
        }
    }
    pm_names_free(names, n);
}

static void test_data_list_reports_a_missing_directory(void **state)
{
    (void)state;
    char **names = (char **)1;
    size_t n = 7;
    pm_error err;
    assert_int_equal(pm_data_list("/nonexistent-pm-data", PM_KIND_MODEL, &names, &n, &err),
                     PM_ERR_IO);
    assert_int_equal(err.status, PM_ERR_IO);
    assert_non_null(strstr(err.file, "/nonexistent-pm-data/models"));
    assert_int_equal(pm_data_list(PM_TEST_DATA_DIR, PM_KIND_MODEL, NULL, &n, &err),
                     PM_ERR_INVALID_ARG);
    assert_int_equal(pm_data_list(PM_TEST_DATA_DIR, (pm_file_kind)42, &names, &n, &err),
                     PM_ERR_INVALID_ARG);
}

/* Inside the build tree (this test is built there) the library reads the source's data/ and
 * plots/; PRESERVE_MODEL_DATA and PRESERVE_MODEL_PLOTS override them. */
static void test_default_dirs_in_the_build_tree_are_the_sources(void **state)
{
    (void)state;
    const char *saved = getenv("PRESERVE_MODEL_DATA");
    char keep[1024] = "";
    if (saved)
        snprintf(keep, sizeof keep, "%s", saved);
    assert_int_equal(unsetenv("PRESERVE_MODEL_DATA"), 0);
    assert_int_equal(unsetenv("PRESERVE_MODEL_PLOTS"), 0);
    char want[PATH_MAX], got[PATH_MAX];
    assert_non_null(realpath(PM_TEST_DATA_DIR, want));
    assert_non_null(realpath(pm_default_data_dir(), got));
    assert_string_equal(got, want);
    char plots[PATH_MAX];
    snprintf(plots, sizeof plots, "%s/../plots", PM_TEST_DATA_DIR);
    assert_non_null(realpath(plots, want));
    assert_non_null(realpath(pm_default_plots_dir(), got));
    assert_string_equal(got, want);
    assert_int_equal(setenv("PRESERVE_MODEL_PLOTS", "/some/plots", 1), 0);
    assert_string_equal(pm_default_plots_dir(), "/some/plots");
    assert_int_equal(unsetenv("PRESERVE_MODEL_PLOTS"), 0);
    if (saved)
        assert_int_equal(setenv("PRESERVE_MODEL_DATA", keep, 1), 0);
}

/* A data folder whose bundled paths do not fit the resolver's 1024-byte buffer is refused with
 * an error saying so, not looked up under a cut path (which would name another file): 1100
 * bytes of folder + "/scenarios/llama70b.json" (24) > 1023; the component of a scenario given
 * as a path meets the same limit at "/models/llama3-70b.json". */
static void test_long_data_dir_is_a_clear_error(void **state)
{
    (void)state;
    char dir[1101];
    memset(dir, 'd', sizeof dir - 1);
    dir[0] = '/';
    dir[sizeof dir - 1] = '\0';
    pm_load_opts o = {dir, NULL, 0};
    pm_scenario s;
    pm_error err;
    assert_int_equal(pm_scenario_load("llama70b", &o, &s, &err), PM_ERR_IO);
    assert_non_null(strstr(err.message, "bundled scenario \"llama70b\""));
    assert_non_null(strstr(err.message, "(1100 bytes) is longer than the 1023 bytes"));
    assert_int_equal(pm_scenario_load(PM_TEST_DATA_DIR "/scenarios/llama70b.json", &o, &s, &err),
                     PM_ERR_IO);
    assert_non_null(strstr(err.message, "bundled model \"llama3-70b\""));
    assert_string_equal(err.path, "$.model");
    /* 999 bytes + 24 = 1023 fit: then the file system answers (its own name limit), not the
     * length check. */
    dir[999] = '\0';
    assert_int_equal(pm_scenario_load("llama70b", &o, &s, &err), PM_ERR_IO);
    assert_null(strstr(err.message, "longer than"));
}

/* Where no data is found, the message names the variable that points the library at it. */
static void test_missing_data_names_the_variable(void **state)
{
    (void)state;
    pm_load_opts o = {"/nonexistent", NULL, 0};
    pm_scenario s;
    pm_error err;
    assert_int_equal(pm_scenario_load("llama70b", &o, &s, &err), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "none found in /nonexistent: set PRESERVE_MODEL_DATA"));
    const char *saved = getenv("PRESERVE_MODEL_DATA");
    char keep[1024] = "";
    if (saved)
        snprintf(keep, sizeof keep, "%s", saved);
    assert_int_equal(setenv("PRESERVE_MODEL_DATA", "/nonexistent", 1), 0);
    char **names = NULL;
    size_t n = 0;
    assert_int_equal(pm_data_list(NULL, PM_KIND_MODEL, &names, &n, &err), PM_ERR_IO);
    assert_string_equal(err.file, "/nonexistent/models");
    assert_non_null(strstr(err.message, "set PRESERVE_MODEL_DATA to the folder that holds models/"));
    /* a directory the caller named is not the variable's business */
    assert_int_equal(pm_data_list("/nonexistent", PM_KIND_MODEL, &names, &n, &err), PM_ERR_IO);
    assert_null(strstr(err.message, "PRESERVE_MODEL_DATA"));
    if (saved)
        assert_int_equal(setenv("PRESERVE_MODEL_DATA", keep, 1), 0);
    else
        assert_int_equal(unsetenv("PRESERVE_MODEL_DATA"), 0);
}

static void test_default_data_dir_follows_the_environment(void **state)
{
    (void)state;
    assert_non_null(pm_default_data_dir());
    assert_int_equal(setenv("PRESERVE_MODEL_DATA", "/some/where", 1), 0);
    assert_string_equal(pm_default_data_dir(), "/some/where");
    assert_int_equal(unsetenv("PRESERVE_MODEL_DATA"), 0);
    assert_non_null(pm_default_data_dir());
}

/* ---------------------------------------------------------------- sources */

/* Counts in *bad every numeric leaf of item that is not the "value" of a
 * {"value": number, "source": non-empty string} object, printing each when verbose. */
static void walk_sources(const cJSON *item, const char *file, const char *path, bool verbose,
                         int *bad)
{
    if (cJSON_IsNumber(item)) {
        if (verbose)
            print_error("%s: %s: number %g has no source (write {\"value\": ..., \"source\": ...})\n",
                    file, path, item->valuedouble);
        (*bad)++;
        return;
    }
    if (cJSON_IsArray(item)) {
        int i = 0;
        for (const cJSON *c = item->child; c; c = c->next, i++) {
            char sub[512];
            snprintf(sub, sizeof sub, "%s[%d]", path, i);
            walk_sources(c, file, sub, verbose, bad);
        }
        return;
    }
    if (!cJSON_IsObject(item))
        return;
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(item, "value");
    if (value) {
        const cJSON *source = cJSON_GetObjectItemCaseSensitive(item, "source");
        /* A sourced number, a sourced choice ({"value": "stream", "source": ...}) or a sourced
         * switch ({"value": true, "source": ...}). */
        if (!(cJSON_IsNumber(value) || cJSON_IsString(value) || cJSON_IsBool(value)) ||
            !cJSON_IsString(source) ||
            !source->valuestring[0] || cJSON_GetArraySize(item) != 2) {
            if (verbose)
                print_error("%s: %s: a sourced value needs exactly a numeric, string or "
                            "boolean \"value\" and a non-empty \"source\"\n",
                        file, path);
            (*bad)++;
        }
        return;
    }
    for (const cJSON *c = item->child; c; c = c->next) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s.%s", path, c->string);
        walk_sources(c, file, sub, verbose, bad);
    }
}

static void test_every_number_in_accelerator_and_cluster_files_has_a_source(void **state)
{
    (void)state;
    const pm_file_kind kinds[] = {PM_KIND_ACCELERATOR, PM_KIND_CLUSTER};
    int bad = 0;
    size_t files = 0;
    for (size_t k = 0; k < 2; k++) {
        char **names = NULL;
        size_t n = 0;
        list_kind(kinds[k], &names, &n);
        for (size_t i = 0; i < n; i++) {
            char path[1024];
            data_path(kinds[k], names[i], path, sizeof path);
            cJSON *json = load_json(path);
            walk_sources(json, path, "$", true, &bad);
            cJSON_Delete(json);
            files++;
        }
        pm_names_free(names, n);
    }
    assert_true(files >= 2);
    assert_int_equal(bad, 0);
}

static void test_walk_sources_catches_an_unsourced_number(void **state)
{
    (void)state;
    /* The check above must be able to fail: a bare number and an empty source are caught. */
    cJSON *json = cJSON_Parse("{\"a_GBps\": {\"value\": 1, \"source\": \"s\"}, \"b_us\": 2, "
                              "\"c\": {\"d_MiB\": {\"value\": 3, \"source\": \"\"}}}");
    assert_non_null(json);
    int bad = 0;
    walk_sources(json, "inline", "$", false, &bad);
    assert_int_equal(bad, 2);
    cJSON_Delete(json);
}

/*
 * The values one preset takes from another (a die's second memory configuration, an engine's
 * port to another platform), each stated in its source as a copy: they must stay equal, so a
 * recalibration of the original that forgets the copy fails here instead of drifting silently.
 */
typedef struct {
    pm_file_kind kind;
    const char *copy, *original;
    const char *keys[20]; /* dotted paths to {"value": ...} objects; NULL-terminated */
} preset_copy;

static const preset_copy g_copies[] = {
    /* The H200 is the H100's GH100 die with more and faster HBM: its kernels and the values
     * calibrate-gpu.sh fits for the H100, and its L2 (the H100 SXM takes the H200's measured
     * plateau: its end and its bandwidth). */
    {PM_KIND_ACCELERATOR, "h200-sxm", "h100-sxm",
     {"peak_compute.bf16_TFLOPS", "peak_compute.fp16_TFLOPS", "peak_compute.fp8_TFLOPS",
      "peak_compute.int8_TOPS", "compute_efficiency_frac", "compute_efficiency_by_dtype.fp8_frac",
      "attention_hbm_efficiency_frac", "attention_compute_efficiency_frac",
      "attention_latency_us", "dequant_rate_TOPS", "gemm.compute_units", "gemm.tile_m",
      "gemm.tile_n", "gemm.overlap_loss_frac", "gemm.latency_us", "kernel_launch_us",
      "l2_usable_frac", "l2_bandwidth_TBps", NULL}},
    /* The A100 40 GB is the 80 GB part's GA100 die with HBM2: one platform in calibrate-gpu.sh. */
    {PM_KIND_ACCELERATOR, "a100-sxm-40gb", "a100-sxm-80gb",
     {"peak_compute.bf16_TFLOPS", "peak_compute.fp16_TFLOPS", "peak_compute.int8_TOPS",
      "compute_efficiency_frac", "attention_hbm_efficiency_frac",
      "attention_compute_efficiency_frac", "attention_latency_us", "dequant_rate_TOPS",
      "gemm.compute_units", "gemm.tile_m", "gemm.tile_n", "gemm.overlap_loss_frac",
      "gemm.latency_us", "kernel_launch_us", "l2_usable_frac", NULL}},
    /* The A10 (GA102, issue 45 item 5) borrows the A100's kernel figures, each marked an
     * assumption in its source: the same Ampere SM generation and kernels, none measured on it. */
    {PM_KIND_ACCELERATOR, "a10", "a100-sxm-80gb",
     {"compute_efficiency_frac", "attention_compute_efficiency_frac", "attention_latency_us",
      "l2_usable_frac", "gemm.tile_m", "gemm.tile_n", "gemm.overlap_loss_frac", "gemm.latency_us",
      "kernel_launch_us", "chunk_half_efficiency_KiB", NULL}},
    /* vLLM on ROCm: vLLM's host costs (vidur's measurements) and kernels' figures. */
    {PM_KIND_RUNTIME, "vllm-rocm", "vllm",
     {"step_overhead_us", "sequence_overhead_us", "kernel_launch_us", "multi_device_overhead_us",
      "hbm_usable_frac", "paged_attention_efficiency_frac", NULL}},
    /* vLLM of early 2024 (issue 47): the same engine and kernels, NCCL's allreduce. */
    {PM_KIND_RUNTIME, "vllm-2024q1", "vllm",
     {"step_overhead_us", "sequence_overhead_us", "kernel_launch_us", "multi_device_overhead_us",
      "hbm_usable_frac", "paged_attention_efficiency_frac", "moe_gemm_efficiency_frac",
      "moe_align_fixed_us", "moe_align_per_slot_ns", NULL}},
    /* SGLang (issue 47): the same kernel and allreduce launches (its expert kernel keeps vLLM's
     * figure from before vLLM's routing kernels became nodes: it has none). */
    {PM_KIND_RUNTIME, "sglang", "vllm",
     {"kernel_launch_us", "allreduce_overhead_us", NULL}},
    {PM_KIND_RUNTIME, "vllm-v1", "vllm",
     {"step_overhead_us", "sequence_overhead_us", "hbm_usable_frac", NULL}},
    {PM_KIND_RUNTIME, "vllm-2023", "vllm",
     {"step_overhead_us", "sequence_overhead_us", "hbm_usable_frac",
      "paged_attention_efficiency_frac", NULL}},
    {PM_KIND_RUNTIME, "optimum-habana", "vllm", {"step_overhead_us", "sequence_overhead_us", NULL}},
};

/* The "value" at a dotted path, or NULL. */
static cJSON *value_at(const cJSON *json, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *o = json;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
        o = cJSON_GetObjectItemCaseSensitive(o, k);
    return o ? cJSON_GetObjectItemCaseSensitive(o, "value") : NULL;
}

/* Counts the keys of c whose values differ (or are missing) between its two files. */
static int copy_mismatches(const preset_copy *c, cJSON *copy, cJSON *orig)
{
    int bad = 0;
    for (int i = 0; c->keys[i]; i++) {
        const cJSON *a = value_at(copy, c->keys[i]), *b = value_at(orig, c->keys[i]);
        /* cJSON_IsNumber(NULL) is false: a missing value is NaN, which equals nothing. */
        const double va = cJSON_IsNumber(a) ? a->valuedouble : NAN;
        const double vb = cJSON_IsNumber(b) ? b->valuedouble : NAN;
        if (!(va <= vb && va >= vb)) {
            print_error("%s/%s: %s is %g, not %s's %g\n", pm_kind_dir(c->kind), c->copy,
                        c->keys[i], va, c->original, vb);
            bad++;
        }
    }
    return bad;
}

static cJSON *load_preset(pm_file_kind kind, const char *name)
{
    char path[1024];
    data_path(kind, name, path, sizeof path);
    return load_json(path);
}

static void test_copied_preset_values_equal_their_originals(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof g_copies / sizeof g_copies[0]; i++) {
        cJSON *copy = load_preset(g_copies[i].kind, g_copies[i].copy);
        cJSON *orig = load_preset(g_copies[i].kind, g_copies[i].original);
        bad += copy_mismatches(&g_copies[i], copy, orig);
        cJSON_Delete(copy);
        cJSON_Delete(orig);
    }
    assert_int_equal(bad, 0);
}

static void test_copy_check_catches_a_drifted_value(void **state)
{
    (void)state;
    /* The check above must be able to fail: the A100 40 GB with its attention line moved. */
    cJSON *copy = load_preset(PM_KIND_ACCELERATOR, "a100-sxm-40gb");
    cJSON *orig = load_preset(PM_KIND_ACCELERATOR, "a100-sxm-80gb");
    cJSON *v = value_at(copy, "attention_latency_us");
    assert_non_null(v);
    cJSON_SetNumberValue(v, v->valuedouble + 1.0);
    assert_int_equal(copy_mismatches(&g_copies[1], copy, orig), 1);
    cJSON_Delete(copy);
    cJSON_Delete(orig);
}

/* vllm-2024q1 copies vllm's expert GEMMs' compute table (issue 47: the same kernel and tuned
 * files), key for key; a drifted point is caught. */
static void test_vllm_2024q1_copies_the_expert_compute_table(void **state)
{
    (void)state;
    cJSON *copy = load_preset(PM_KIND_RUNTIME, "vllm-2024q1");
    cJSON *orig = load_preset(PM_KIND_RUNTIME, "vllm");
    cJSON *a = cJSON_GetObjectItemCaseSensitive(copy, "moe_gemm_compute_efficiency");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(orig, "moe_gemm_compute_efficiency");
    assert_non_null(a);
    assert_non_null(b);
    assert_true(cJSON_Compare(a, b, true));
    cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(a, "points"), 0);
    cJSON *f = cJSON_GetObjectItemCaseSensitive(pt, "compute_efficiency_frac");
    assert_non_null(f);
    cJSON_SetNumberValue(f, f->valuedouble + 0.01);
    assert_false(cJSON_Compare(a, b, true));
    cJSON_Delete(copy);
    cJSON_Delete(orig);
}

static void test_model_accelerator_and_cluster_files_have_a_source(void **state)
{
    (void)state;
    const pm_file_kind kinds[] = {PM_KIND_MODEL, PM_KIND_ACCELERATOR, PM_KIND_CLUSTER};
    int bad = 0;
    for (size_t k = 0; k < 3; k++) {
        char **names = NULL;
        size_t n = 0;
        list_kind(kinds[k], &names, &n);
        for (size_t i = 0; i < n; i++) {
            char path[1024];
            data_path(kinds[k], names[i], path, sizeof path);
            cJSON *json = load_json(path);
            const cJSON *src = cJSON_GetObjectItemCaseSensitive(json, "source");
            if (!cJSON_IsString(src) || !src->valuestring[0]) {
                print_error("%s: no non-empty top-level \"source\"\n", path);
                bad++;
            }
            cJSON_Delete(json);
        }
        pm_names_free(names, n);
    }
    assert_int_equal(bad, 0);
}

/* ---------------------------------------------------------------- the paper's models */

typedef struct model_ref {
    const char *name;
    int hidden, layers, heads, kv_heads, head_dim, intermediate, vocab;
    bool qkv_bias, o_bias, mlp_bias; /* from each family's modelling code */
} model_ref;

/* /work/shared/reference/hardware-and-models.md section 6, copied by hand from the table
 * (which quotes each model's HuggingFace config.json). */
static const model_ref paper_models[] = {
    {"llama3-8b", 4096, 32, 32, 8, 128, 14336, 128256, false, false, false},
    {"llama3-70b", 8192, 80, 64, 8, 128, 28672, 128256, false, false, false},
    /* Qwen2Attention: q, k and v projections with bias=True, o_proj without. */
    {"qwen2-7b", 3584, 28, 28, 4, 128, 18944, 152064, true, false, false},
    {"qwen2-72b", 8192, 80, 64, 8, 128, 29568, 152064, true, false, false},
    /* Phi-3-small: every projection an nn.Linear with its default bias. */
    {"phi3-small", 4096, 32, 32, 8, 128, 14336, 100352, true, true, true},
    {"phi3-medium", 5120, 40, 40, 10, 128, 17920, 32064, false, false, false},
};

static void test_paper_models_match_their_configs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof paper_models / sizeof paper_models[0]; i++) {
        const model_ref *r = &paper_models[i];
        pm_model m;
        pm_error err;
        assert_ok(pm_model_load(r->name, &g_opts, &m, &err), &err);
        if (m.hidden != r->hidden || m.layers != r->layers || m.heads != r->heads ||
            m.kv_heads != r->kv_heads || m.head_dim != r->head_dim ||
            m.intermediate != r->intermediate || m.vocab != r->vocab || !m.gated_mlp ||
            m.qkv_bias != r->qkv_bias || m.o_bias != r->o_bias || m.mlp_bias != r->mlp_bias) {
            print_error("%s: got hidden %d layers %d heads %d kv %d head_dim %d inter %d vocab "
                        "%d gated %d\n",
                        r->name, m.hidden, m.layers, m.heads, m.kv_heads, m.head_dim,
                        m.intermediate, m.vocab, (int)m.gated_mlp);
            fail();
        }
    }
}

static void test_llama3_70b_has_8_kv_heads_and_28672_intermediate(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    assert_ok(pm_model_load("llama3-70b", &g_opts, &m, &err), &err);
    assert_int_equal(m.kv_heads, 8);
    assert_int_equal(m.intermediate, 28672);
    assert_int_equal(m.heads, 64);
    /* 64 heads x 128 = 8192 = hidden. */
    assert_int_equal(m.heads * m.head_dim, m.hidden);
}

/* ---------------------------------------------------------------- key numbers */

static void test_ascend_910b_l2_is_192_mib_and_hbm_1_6_tbps(void **state)
{
    (void)state;
    pm_accelerator a;
    pm_error err;
    assert_ok(pm_accelerator_load("ascend-910b", &g_opts, &a, &err), &err);
    assert_rel(a.l2_capacity_bytes, 201326592.0, EXACT);         /* 192 x 1048576 */
    assert_rel(a.hbm_bandwidth_bytes_per_s, 1.6e12, EXACT);      /* 1.6 TB/s, decimal */
    assert_rel(a.hbm_capacity_bytes, 68719476736.0, EXACT);      /* 64 GiB */
    assert_rel(a.peak_flop_per_s[PM_DTYPE_INT8], 800e12, EXACT); /* 800 TOPS */
    assert_rel(a.peak_flop_per_s[PM_DTYPE_BF16], 353.9e12, EXACT);
    assert_rel(a.peak_flop_per_s[PM_DTYPE_FP32], 0, 0);          /* no fp32 peak given */
    assert_rel(a.kernel_launch_s, 5e-6, EXACT);
    assert_rel(a.chunk_half_efficiency_bytes, 262144.0, EXACT);  /* 256 KiB */
    assert_int_equal(a.prefetch_consumer, PM_CONSUMER_STREAM);    /* a sourced choice */
    assert_true(a.area.present);
    assert_int_equal(a.area.links, 7);
}

static void test_paper_platform_cluster_and_workload(void **state)
{
    (void)state;
    pm_cluster c;
    pm_workload w;
    pm_error err;
    assert_ok(pm_cluster_load("hccs-full-mesh", &g_opts, &c, &err), &err);
    assert_int_equal(c.devices, 8);
    assert_int_equal(c.topology, PM_TOPO_FULL_MESH);
    assert_rel(c.link_bandwidth_bytes_per_s, 56e9, EXACT); /* 56 GBps */
    assert_rel(c.link_latency_s, 14e-6, EXACT);   /* 14 us, calibrated */
    assert_rel(c.fused_latency_s, 11e-6, EXACT);  /* fused_latency_us 11, calibrated */
    assert_ok(pm_workload_load("paper-default", &g_opts, &w, &err), &err);
    assert_int_equal(w.batch, 4);
    assert_int_equal(w.seq_len, 16384);
    assert_rel(w.prefill_frac, 2.0 / 3.0, 1e-15);
    assert_int_equal(w.weight_dtype, PM_DTYPE_INT8);
    assert_int_equal(w.kv_dtype, PM_DTYPE_INT8);
    assert_int_equal(w.act_dtype, PM_DTYPE_INT8);
    assert_true(w.allreduce_dtype_given); /* W8A8: the allreduce sums fp16 */
    assert_int_equal(w.allreduce_dtype, PM_DTYPE_FP16);
}

static void test_bundled_llama70b_scenario_resolves(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    /* No llama70b.json in the working directory: the bundled scenario is meant. */
    assert_ok(pm_scenario_load("llama70b.json", &g_opts, &s, &err), &err);
    assert_string_equal(s.name, "llama70b");
    assert_int_equal(s.cluster.devices, 4); /* "from": "hccs-full-mesh", "devices": 4 */
    assert_rel(s.cluster.link_bandwidth_bytes_per_s, 56e9, EXACT);
    assert_int_equal(s.workload.batch, 4);
    assert_int_equal(s.workload.seq_len, 16384);
    assert_int_equal(s.model.layers, 80);
    assert_int_equal(s.model.kv_heads, 8);
    assert_string_equal(s.accel.name, "ascend-910b");
    assert_rel(s.accel.l2_capacity_bytes, 201326592.0, EXACT);
    assert_int_equal(s.options.sharding, PM_SHARDING_MEGATRON);
    pm_scenario_release(&s);
}

/* ---------------------------------------------------------------- provenance */

static void test_every_scenario_param_has_a_source(void **state)
{
    (void)state;
    char **names = NULL;
    size_t n = 0;
    list_kind(PM_KIND_SCENARIO, &names, &n);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        pm_scenario s;
        pm_error err;
        assert_ok(pm_scenario_load(names[i], &g_opts, &s, &err), &err);
        size_t count = pm_scenario_param_count(&s);
        if (count == 0) {
            print_error("scenario %s: no params recorded\n", names[i]);
            bad++;
        }
        for (size_t j = 0; j < count; j++) {
            const pm_param_info *p = pm_scenario_param(&s, j);
            assert_non_null(p);
            assert_non_null(p->path);
            assert_non_null(p->file);
            assert_non_null(p->unit_si);
            assert_true(p->path[0] == '$');
            assert_true(p->file[0] != '\0');
            /* A number, or a choice made by name. */
            assert_true(isfinite(p->value_si) || (p->value_text && p->value_text[0]));
            if (!p->source || !p->source[0]) {
                print_error("scenario %s: %s (from %s) has no source\n", names[i], p->path,
                            p->file);
                bad++;
            }
        }
        assert_null(pm_scenario_param(&s, count));
        pm_scenario_release(&s);
    }
    pm_names_free(names, n);
    assert_int_equal(bad, 0);
}

static void test_scenario_param_paths_name_the_component(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    assert_ok(pm_scenario_load("llama70b", &g_opts, &s, &err), &err);
    /* pm_param_info.path is documented as "$.accelerator.hbm_bandwidth_TBps": the path within
     * the scenario, so that a model's and an accelerator's keys cannot be confused. */
    const pm_param_info *found = NULL;
    for (size_t j = 0; j < pm_scenario_param_count(&s); j++) {
        const pm_param_info *p = pm_scenario_param(&s, j);
        if (strcmp(p->path, "$.accelerator.hbm_bandwidth_TBps") == 0)
            found = p;
    }
    if (!found) {
        print_error("no param with path \"$.accelerator.hbm_bandwidth_TBps\"; paths are:\n");
        for (size_t j = 0; j < pm_scenario_param_count(&s) && j < 12; j++)
            print_error("  %s\n", pm_scenario_param(&s, j)->path);
        pm_scenario_release(&s);
        fail();
    }
    assert_rel(found->value_si, 1.6e12, EXACT);
    assert_string_equal(found->unit_si, "bytes/s");
    assert_non_null(strstr(found->file, "ascend-910b.json"));
    assert_non_null(strstr(found->source, "1.6 TB/s"));
    pm_scenario_release(&s);
}

static void test_scenario_params_record_si_values(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    assert_ok(pm_scenario_load("llama70b", &g_opts, &s, &err), &err);
    /* Whatever the path prefix, the L2 capacity is recorded once, in bytes, with its source. */
    int seen = 0;
    for (size_t j = 0; j < pm_scenario_param_count(&s); j++) {
        const pm_param_info *p = pm_scenario_param(&s, j);
        size_t len = strlen(p->path);
        if (len >= 15 && strcmp(p->path + len - 15, "l2_capacity_MiB") == 0) {
            seen++;
            assert_rel(p->value_si, 201326592.0, EXACT);
            assert_string_equal(p->unit_si, "bytes");
            assert_non_null(strstr(p->source, "192"));
        }
    }
    assert_int_equal(seen, 1);
    pm_scenario_release(&s);
}

/* NULL overrides with a count, or a NULL string among them, are argument errors (they crashed). */
static void test_load_opts_null_overrides_with_a_count(void **state)
{
    (void)state;
    pm_scenario s;
    pm_model m;
    pm_error err;
    pm_load_opts o = {PM_TEST_DATA_DIR, NULL, 3};
    assert_int_equal(pm_scenario_load("llama70b", &o, &s, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "overrides is NULL with n_overrides 3"));
    assert_int_equal(pm_model_load("llama3-8b", &o, &m, &err), PM_ERR_INVALID_ARG);
    assert_int_equal(pm_file_validate(PM_TEST_DATA_DIR "/models/llama3-8b.json", &o, NULL, &err),
                     PM_ERR_INVALID_ARG);
    const char *const ov[] = {"workload.batch=8", NULL};
    pm_load_opts o2 = {PM_TEST_DATA_DIR, ov, 2};
    assert_int_equal(pm_scenario_load("llama70b", &o2, &s, &err), PM_ERR_INVALID_ARG);
    assert_non_null(strstr(err.message, "override 1 is NULL"));
    /* NULL with a count of 0 is no overrides. */
    pm_load_opts o3 = {PM_TEST_DATA_DIR, NULL, 0};
    assert_int_equal(pm_scenario_load("llama70b", &o3, &s, &err), PM_OK);
    pm_scenario_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_shipped_file_validates),
        cmocka_unit_test(test_every_bundled_scenario_loads_by_name),
        cmocka_unit_test(test_data_list_is_sorted_and_names_the_paper_models),
        cmocka_unit_test(test_data_list_reports_a_missing_directory),
        cmocka_unit_test(test_default_dirs_in_the_build_tree_are_the_sources),
        cmocka_unit_test(test_missing_data_names_the_variable),
        cmocka_unit_test(test_default_data_dir_follows_the_environment),
        cmocka_unit_test(test_every_number_in_accelerator_and_cluster_files_has_a_source),
        cmocka_unit_test(test_walk_sources_catches_an_unsourced_number),
        cmocka_unit_test(test_model_accelerator_and_cluster_files_have_a_source),
        cmocka_unit_test(test_copied_preset_values_equal_their_originals),
        cmocka_unit_test(test_copy_check_catches_a_drifted_value),
        cmocka_unit_test(test_vllm_2024q1_copies_the_expert_compute_table),
        cmocka_unit_test(test_paper_models_match_their_configs),
        cmocka_unit_test(test_llama3_70b_has_8_kv_heads_and_28672_intermediate),
        cmocka_unit_test(test_ascend_910b_l2_is_192_mib_and_hbm_1_6_tbps),
        cmocka_unit_test(test_paper_platform_cluster_and_workload),
        cmocka_unit_test(test_bundled_llama70b_scenario_resolves),
        cmocka_unit_test(test_every_scenario_param_has_a_source),
        cmocka_unit_test(test_scenario_param_paths_name_the_component),
        cmocka_unit_test(test_scenario_params_record_si_values),
        cmocka_unit_test(test_load_opts_null_overrides_with_a_count),
        cmocka_unit_test(test_long_data_dir_is_a_clear_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
