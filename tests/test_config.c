/*
 * test_config.c - loading the five input kinds and every validation rule of the input layer.
 * Each rule has a passing case and a failing case that checks the status, where the error is
 * reported (file, JSON path, and line:column for syntax errors) and a distinctive part of the
 * message. Small inputs are derived from tests/configs/valid/ by replacing one snippet and
 * written to a temporary directory; the bad-input fixtures under tests/configs/invalid/ are run
 * in one table-driven test.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "internal.h"

#define VALID_DIR PM_TEST_CONFIG_DIR "/valid"
#define INVALID_DIR PM_TEST_CONFIG_DIR "/invalid"
#define HF_DIR PM_TEST_CONFIG_DIR "/hf"

/* Values in the fixtures are decimal literals times an exact power of 2 or 10: the library's
 * one multiplication leaves at most one rounding, so 1e-15 allows that rounding only. */
#define EXACT 1e-15

static char g_tmp[256];
static const pm_load_opts g_opts = {PM_TEST_DATA_DIR, NULL, 0};

/* ---------------------------------------------------------------- helpers */

static int group_setup(void **state)
{
    (void)state;
    snprintf(g_tmp, sizeof g_tmp, "/tmp/pm_test_config_XXXXXX");
    return mkdtemp(g_tmp) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    DIR *d = opendir(g_tmp);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", g_tmp, e->d_name);
        unlink(p);
    }
    closedir(d);
    return rmdir(g_tmp);
}

/* Reads a whole file; the test fails when it cannot. free() the result. */
static char *slurp(const char *path)
{
    char *text = NULL;
    pm_error err;
    if (pm_read_file(path, &text, NULL, &err) != PM_OK) {
        print_error("cannot read %s: %s\n", path, err.message);
        fail();
    }
    return text;
}

/* text with its single occurrence of from replaced by to (from NULL: a copy). free(). */
static char *subst(const char *text, const char *from, const char *to)
{
    if (!from) {
        char *copy = malloc(strlen(text) + 1);
        assert_non_null(copy);
        strcpy(copy, text);
        return copy;
    }
    const char *at = strstr(text, from);
    if (!at || strstr(at + 1, from)) {
        print_error("snippet \"%s\" must occur exactly once in the base text\n", from);
        fail();
    }
    size_t pre = (size_t)(at - text), fl = strlen(from), tl = strlen(to);
    char *out = malloc(strlen(text) - fl + tl + 1);
    assert_non_null(out);
    memcpy(out, text, pre);
    memcpy(out + pre, to, tl);
    strcpy(out + pre + tl, at + fl);
    return out;
}

/* Writes text to <tmp>/<name>; path receives the full path. */
static void write_tmp(const char *name, const char *text, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", g_tmp, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    size_t len = strlen(text);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Writes valid/<fixture> with one snippet replaced into <tmp>/<name>. */
static void variant(const char *fixture, const char *from, const char *to, const char *name,
                    char *path, size_t n)
{
    char src[512];
    snprintf(src, sizeof src, "%s/%s", VALID_DIR, fixture);
    char *base = slurp(src);
    char *text = subst(base, from, to);
    write_tmp(name, text, path, n);
    free(text);
    free(base);
}

/* Writes <HF_DIR>/<fixture> with one snippet (which must be there) replaced into <tmp>/<name>. */
/* The families whose class has a head_dim default of its own: the key is required there. */
static bool own_head_dim(const char *family)
{
    static const char *const own[] = {"gemma", "gemma2",    "gemma3_text", "qwen3",
                                      "qwen3_moe", "glm4_moe", "llama4_text", "gpt_oss"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(family, own[i]) == 0)
            return true;
    return false;
}

static void hf_variant(const char *fixture, const char *from, const char *to, const char *name,
                       char *path, size_t n)
{
    char src[600];
    snprintf(src, sizeof src, "%s/%s", HF_DIR, fixture);
    char *base = slurp(src);
    assert_non_null(strstr(base, from));
    char *text = subst(base, from, to);
    write_tmp(name, text, path, n);
    free(text);
    free(base);
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

/* Checks the status, err->file (NULL: not checked), err->path (NULL: not checked) and that
 * err->message contains msg. */
#define assert_fails(st, err, want, file, path, msg) \
    check_fails((st), (err), (want), (file), (path), (msg), __FILE__, __LINE__)

static void check_fails(pm_status st, const pm_error *err, pm_status want, const char *file,
                        const char *path, const char *msg, const char *src, int line)
{
    char text[1200];
    pm_error_format(err, text, sizeof text);
    if (st != want || err->status != want) {
        print_error("expected %s, got %s (err.status %s): %s\n", pm_status_name(want),
                    pm_status_name(st), pm_status_name(err->status), text);
        _fail(src, line);
    }
    if (file && strcmp(err->file, file) != 0) {
        print_error("err.file: expected \"%s\", got \"%s\" (%s)\n", file, err->file, text);
        _fail(src, line);
    }
    if (path && strcmp(err->path, path) != 0) {
        print_error("err.path: expected \"%s\", got \"%s\" (%s)\n", path, err->path, text);
        _fail(src, line);
    }
    if (msg && !strstr(err->message, msg)) {
        print_error("err.message lacks \"%s\": %s\n", msg, text);
        _fail(src, line);
    }
}

/* Validates a file of any kind with the test data directory. */
static pm_status validate(const char *path, pm_error *err)
{
    return pm_file_validate(path, &g_opts, NULL, err);
}

/* Writes a scenario whose four components are the given JSON texts (names in quotes, paths or
 * objects) plus extra keys, and loads it. On PM_OK the caller frees s. */
static pm_status load_scenario_text(const char *model, const char *accel, const char *cluster,
                                    const char *workload, const char *extra, char *path,
                                    size_t n, pm_scenario *s, pm_error *err)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\n  \"kind\": \"scenario\",\n  \"name\": \"t\",\n  \"model\": %s,\n"
             "  \"accelerator\": %s,\n  \"cluster\": %s,\n  \"workload\": %s%s\n}\n",
             model, accel, cluster, workload, extra ? extra : "");
    write_tmp("scenario.json", text, path, n);
    return pm_scenario_load(path, &g_opts, s, err);
}

/* ---------------------------------------------------------------- loading each kind */

static void test_model_loads_from_native_file(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    assert_ok(pm_model_load(VALID_DIR "/model-tiny-gqa.json", &g_opts, &m, &err), &err);
    assert_string_equal(m.name, "tiny-gqa");
    assert_int_equal(m.layers, 2);
    assert_int_equal(m.hidden, 4096);
    assert_int_equal(m.heads, 32);
    assert_int_equal(m.kv_heads, 8);
    assert_int_equal(m.head_dim, 128); /* default: 4096 / 32 */
    assert_int_equal(m.intermediate, 14336);
    assert_int_equal(m.vocab, 32000);
    assert_true(m.gated_mlp);        /* default true */
    assert_false(m.tied_embeddings); /* default false */
}

static void test_model_reads_optional_keys_and_sourced_numbers(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    assert_ok(pm_model_load(VALID_DIR "/model-sourced-numbers.json", &g_opts, &m, &err), &err);
    assert_int_equal(m.layers, 2); /* {"value": 2, "source": ...} */
    assert_int_equal(m.head_dim, 128);
    assert_false(m.gated_mlp);
    assert_true(m.tied_embeddings);
}

static void test_model_kv_heads_default_to_attention_heads(void **state)
{
    (void)state;
    char path[600];
    variant("model-tiny-gqa.json", "  \"num_key_value_heads\": 8,\n", "", "mha.json", path,
            sizeof path);
    pm_model m;
    pm_error err;
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.kv_heads, 32);
}

static void test_accelerator_loads_and_converts_units(void **state)
{
    (void)state;
    pm_accelerator a;
    pm_error err;
    assert_ok(pm_accelerator_load(VALID_DIR "/accelerator-minimal.json", &g_opts, &a, &err),
              &err);
    assert_string_equal(a.name, "test-npu");
    assert_rel(a.peak_flop_per_s[PM_DTYPE_INT8], 800e12, EXACT);
    assert_rel(a.peak_flop_per_s[PM_DTYPE_BF16], 400e12, EXACT);
    /* Datatypes not listed are unsupported: peak 0. */
    assert_rel(a.peak_flop_per_s[PM_DTYPE_FP8], 0, 0);
    assert_rel(a.peak_flop_per_s[PM_DTYPE_FP16], 0, 0);
    assert_rel(a.peak_flop_per_s[PM_DTYPE_FP32], 0, 0);
    assert_rel(a.compute_efficiency_frac, 0.7, EXACT);
    assert_rel(a.hbm_capacity_bytes, 68719476736.0, EXACT); /* 64 x 2^30 */
    assert_rel(a.hbm_bandwidth_bytes_per_s, 1.6e12, EXACT);
    assert_rel(a.hbm_efficiency_frac, 0.8, EXACT);
    assert_rel(a.l2_capacity_bytes, 201326592.0, EXACT); /* 192 x 2^20 */
    assert_rel(a.l2_bandwidth_bytes_per_s, 5e12, EXACT);
    assert_rel(a.l2_usable_frac, 1.0, 0); /* default */
    assert_rel(a.kv_strided_efficiency_frac, 0.6, EXACT);
    assert_rel(a.kernel_launch_s, 5e-6, EXACT);
    assert_rel(a.chunk_half_efficiency_bytes, 262144.0, EXACT); /* 256 x 1024 */
    assert_false(a.area.present);
}

static void test_accelerator_accepts_any_unit_of_the_right_dimension(void **state)
{
    (void)state;
    pm_accelerator a;
    pm_error err;
    assert_ok(pm_accelerator_load(VALID_DIR "/accelerator-other-units.json", &g_opts, &a, &err),
              &err);
    assert_rel(a.hbm_bandwidth_bytes_per_s, 1.6e12, EXACT); /* 1600 GBps */
    assert_rel(a.l2_capacity_bytes, 104e6, EXACT);          /* 104 MB, decimal */
    assert_rel(a.kernel_launch_s, 5e-6, 1e-12);              /* 5000 ns */
    assert_rel(a.l2_usable_frac, 0.5, 0);
}

static void test_accelerator_reads_area(void **state)
{
    (void)state;
    pm_accelerator a;
    pm_error err;
    assert_ok(pm_accelerator_load(VALID_DIR "/accelerator-with-area.json", &g_opts, &a, &err),
              &err);
    assert_true(a.area.present);
    assert_rel(a.area.process_nm, 7, 0);
    assert_rel(a.area.compute_mm2_per_flop_per_s, 0.3e-12, 1e-12); /* 0.3 mm2 per 1e12 op/s */
    assert_rel(a.area.l2_mm2_per_byte, 1.3 / 1048576.0, EXACT);
    assert_rel(a.area.hbm_phy_mm2_per_stack, 15, 0);
    assert_int_equal(a.area.hbm_stacks, 4);
    assert_rel(a.area.link_phy_mm2_per_link, 1.7, 0);
    assert_int_equal(a.area.links, 7);
    assert_rel(a.area.other_mm2, 116, 0);
    /* The package: a compute die beside an I/O die holding the links and 40 mm2 of its own. */
    assert_int_equal(a.area.compute_dies, 1);
    assert_int_equal(a.area.io_dies, 1);
    assert_int_equal(a.area.io_holds, PM_IO_LINKS);
    assert_rel(a.area.io_other_mm2, 40, 0);
    pm_area ar;
    assert_int_equal(pm_area_compute(&a, &ar, NULL), PM_OK);
    /* 0.3 x 800 + 1.3 x 192 + 15 x 4 + 116 = 665.6 mm2; 1.7 x 7 + 40 = 51.9 mm2. */
    assert_rel(ar.compute_die_mm2, 665.6, 1e-12);
    assert_rel(ar.io_die_mm2, 51.9, 1e-12);
    assert_rel(ar.die_mm2, 717.5, 1e-12);
}

static void test_cluster_loads(void **state)
{
    (void)state;
    pm_cluster c;
    pm_error err;
    assert_ok(pm_cluster_load(VALID_DIR "/cluster-full-mesh.json", &g_opts, &c, &err), &err);
    assert_string_equal(c.name, "test-mesh");
    assert_int_equal(c.devices, 4);
    assert_int_equal(c.topology, PM_TOPO_FULL_MESH);
    assert_int_equal(c.algorithm, PM_AR_AUTO); /* default */
    assert_rel(c.link_bandwidth_bytes_per_s, 50e9, EXACT);
    assert_rel(c.link_latency_s, 2e-6, EXACT);
}

static void test_cluster_converts_bits_per_second(void **state)
{
    (void)state;
    pm_cluster c;
    pm_error err;
    assert_ok(pm_cluster_load(VALID_DIR "/cluster-ring-gbps.json", &g_opts, &c, &err), &err);
    assert_int_equal(c.topology, PM_TOPO_RING);
    assert_int_equal(c.algorithm, PM_AR_RING);
    assert_rel(c.link_bandwidth_bytes_per_s, 50e9, EXACT); /* 400 Gbps / 8 */
}

static void test_hierarchical_cluster_loads(void **state)
{
    (void)state;
    pm_cluster c;
    pm_error err;
    assert_ok(pm_cluster_load(VALID_DIR "/cluster-hierarchical.json", &g_opts, &c, &err), &err);
    assert_int_equal(c.topology, PM_TOPO_HIERARCHICAL);
    assert_int_equal(c.devices, 16);
    assert_int_equal(c.devices_per_node, 8);
    assert_rel(c.inter_node_bandwidth_bytes_per_s, 25e9, EXACT); /* 200 Gbps / 8 */
    assert_rel(c.inter_node_latency_s, 20e-6, EXACT);
}

static void test_workload_loads(void **state)
{
    (void)state;
    pm_workload w;
    pm_error err;
    assert_ok(pm_workload_load(VALID_DIR "/workload-bf16.json", &g_opts, &w, &err), &err);
    assert_int_equal(w.batch, 4);
    assert_int_equal(w.seq_len, 1024);
    assert_rel(w.prefill_frac, 0.5, 0);
    assert_int_equal(w.weight_dtype, PM_DTYPE_BF16);
    assert_int_equal(w.kv_dtype, PM_DTYPE_BF16);
    assert_int_equal(w.act_dtype, PM_DTYPE_BF16);
}

static void test_scenario_resolves_bundled_names(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    assert_ok(pm_scenario_load(VALID_DIR "/scenario-bundled-names.json", &g_opts, &s, &err),
              &err);
    assert_string_equal(s.name, "test-scenario");
    assert_int_equal(s.model.layers, 32); /* llama3-8b */
    assert_int_equal(s.model.kv_heads, 8);
    assert_rel(s.accel.l2_capacity_bytes, 201326592.0, EXACT); /* ascend-910b, 192 MiB */
    assert_int_equal(s.cluster.devices, 8);                     /* hccs-full-mesh */
    assert_int_equal(s.workload.batch, 4);                      /* paper-default */
    assert_int_equal(s.workload.seq_len, 16384);
    assert_int_equal(s.options.sharding, PM_SHARDING_MEGATRON);
    assert_false(s.options.hbm_sharing);
    assert_int_equal(s.options.fused_chunks, 0);
    assert_true(pm_scenario_param_count(&s) > 0);
    pm_scenario_release(&s);
}

static void test_scenario_reads_inline_objects(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    assert_ok(pm_scenario_load(VALID_DIR "/scenario-inline.json", &g_opts, &s, &err), &err);
    assert_int_equal(s.model.layers, 2);
    assert_int_equal(s.model.vocab, 32000);
    assert_int_equal(s.workload.batch, 2);
    assert_int_equal(s.workload.seq_len, 3000);
    pm_scenario_release(&s);
}

static void test_scenario_from_overrides_some_keys(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    assert_ok(pm_scenario_load(VALID_DIR "/scenario-from-overrides.json", &g_opts, &s, &err),
              &err);
    /* l2_capacity_MB replaces the file's l2_capacity_MiB instead of duplicating it. */
    assert_rel(s.accel.l2_capacity_bytes, 104e6, EXACT);
    assert_rel(s.accel.hbm_bandwidth_bytes_per_s, 1.6e12, EXACT); /* inherited */
    assert_int_equal(s.cluster.devices, 4);
    assert_rel(s.cluster.link_bandwidth_bytes_per_s, 56e9, EXACT); /* inherited, 56 GBps */
    assert_int_equal(s.workload.batch, 8);
    assert_int_equal(s.workload.seq_len, 16384); /* inherited */
    pm_scenario_release(&s);
}

static void test_scenario_component_may_be_a_path(void **state)
{
    (void)state;
    char model[600], cluster[600], path[600], mref[700], cref[700];
    variant("model-tiny-gqa.json", NULL, NULL, "model.json", model, sizeof model);
    variant("cluster-full-mesh.json", NULL, NULL, "cluster.json", cluster, sizeof cluster);
    snprintf(mref, sizeof mref, "\"%s\"", model);
    snprintf(cref, sizeof cref, "{\"from\": \"%s\", \"devices\": 8}", cluster);
    pm_scenario s;
    pm_error err;
    assert_ok(load_scenario_text(mref, "\"ascend-910b\"", cref, "\"paper-default\"", NULL, path,
                                 sizeof path, &s, &err),
              &err);
    assert_string_equal(s.model.name, "tiny-gqa");
    assert_int_equal(s.model.vocab, 32000);
    assert_int_equal(s.cluster.devices, 8);
    assert_rel(s.cluster.link_bandwidth_bytes_per_s, 50e9, EXACT);
    pm_scenario_release(&s);
}

static void test_scenario_reads_sharding_and_options(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    assert_ok(pm_scenario_load(VALID_DIR "/scenario-ideal-sharding.json", &g_opts, &s, &err),
              &err);
    assert_int_equal(s.options.sharding, PM_SHARDING_IDEAL);
    assert_true(s.options.hbm_sharing);
    assert_int_equal(s.options.fused_chunks, 4);
    assert_int_equal(s.cluster.devices, 64);
    pm_scenario_release(&s);
}

static void test_file_validate_reports_the_kind(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        pm_file_kind kind;
    } cases[] = {
        {VALID_DIR "/model-tiny-gqa.json", PM_KIND_MODEL},
        {VALID_DIR "/accelerator-minimal.json", PM_KIND_ACCELERATOR},
        {VALID_DIR "/cluster-full-mesh.json", PM_KIND_CLUSTER},
        {VALID_DIR "/workload-bf16.json", PM_KIND_WORKLOAD},
        {VALID_DIR "/scenario-bundled-names.json", PM_KIND_SCENARIO},
        {HF_DIR "/llama3-8b-config.json", PM_KIND_MODEL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pm_file_kind k = PM_KIND_COUNT;
        pm_error err;
        assert_ok(pm_file_validate(cases[i].file, &g_opts, &k, &err), &err);
        assert_int_equal(k, cases[i].kind);
    }
}

/* ---------------------------------------------------------------- JSON syntax */

static void test_json_syntax_error_reports_line_and_column(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    /* Passing: the same object with its value. */
    write_tmp("syntax-ok.json", "{\n  \"kind\": \"workload\",\n  \"batch\": 4\n}\n", path,
              sizeof path);
    cJSON *json = NULL;
    char *text = slurp(path);
    assert_ok(pm_json_parse(text, strlen(text), path, &json, &err), &err);
    cJSON_Delete(json);
    free(text);

    /* The value is missing: the parser stops at the '}' on line 4, column 1. */
    write_tmp("syntax.json", "{\n  \"kind\": \"workload\",\n  \"batch\":\n}\n", path,
              sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_SYNTAX, path, "", "JSON syntax error");
    assert_int_equal(err.line, 4);
    assert_int_equal(err.column, 1);

    /* A missing comma: stops at the '"' of "name", line 3 column 3. */
    write_tmp("syntax2.json", "{\n  \"kind\": \"workload\"\n  \"name\": \"w\"\n}\n", path,
              sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_SYNTAX, path, "", "JSON syntax error");
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 3);

    /* Text after the value: the second '}' on line 4, column 1. */
    write_tmp("syntax3.json", "{\n  \"kind\": \"workload\"\n}\n}\n", path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_SYNTAX, path, "", "after the end");
    assert_int_equal(err.line, 4);
    assert_int_equal(err.column, 1);

    /* The formatted message leads with file:line:column. */
    char buf[1200], want[700];
    pm_error_format(&err, buf, sizeof buf);
    snprintf(want, sizeof want, "%s:4:1: JSON syntax error", path);
    assert_non_null(strstr(buf, want));
}

static void test_json_syntax_error_column_points_at_the_offending_character(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    /* Line 3 is `  "batch": 4,,`: the second comma is column 14 (2 spaces, "batch" in quotes
     * at 3-9, ':' 10, ' ' 11, '4' 12, ',' 13, ',' 14). */
    write_tmp("comma.json", "{\n  \"kind\": \"workload\",\n  \"batch\": 4,,\n}\n", path,
              sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_SYNTAX, path, "", "JSON syntax error");
    assert_int_equal(err.line, 3);
    /* The syntax pass runs before cJSON and points at the character itself. */
    assert_int_equal(err.column, 14);
}

static void test_json_syntax_error_at_end_of_input_says_so(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    /* The text stops inside the object. */
    write_tmp("eof.json", "{\"kind\": \"workload\", \"batch\": 4", path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_SYNTAX, path, "", "end of input");
    assert_int_equal(err.line, 1);
}

static void test_empty_file_is_a_syntax_error(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    write_tmp("empty.json", "", path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_SYNTAX, path, "", "empty file");
    write_tmp("blank.json", "  \n\t\n", path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_SYNTAX, path, "", "empty file");
    /* Passing: one valid object. */
    assert_ok(validate(VALID_DIR "/workload-bf16.json", &err), &err);
}

static void test_non_object_top_level_is_rejected(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    write_tmp("array.json", "[1, 2]\n", path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_TYPE, path, "$", "got an array");
}

/* ---------------------------------------------------------------- keys */

static void test_duplicate_key_is_rejected(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    /* Nested objects too. */
    variant("accelerator-minimal.json", "\"int8_TOPS\": 800,",
            "\"int8_TOPS\": 800,\n    \"int8_TOPS\": 700,", "dup2.json", path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_DUPLICATE_KEY, path,
                 "$.peak_compute.int8_TOPS", "duplicate key \"int8_TOPS\"");
    /* Passing: the same key in two different objects is fine. */
    assert_ok(validate(VALID_DIR "/accelerator-with-area.json", &err), &err);
}

static void test_unknown_key_far_from_every_known_key_has_no_suggestion(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    variant("cluster-full-mesh.json", "\"devices\": 4,", "\"devices\": 4,\n  \"colour\": \"red\",",
            "colour.json", path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_UNKNOWN_KEY, path, "$.colour",
                 "unknown key \"colour\"");
    assert_null(strstr(err.message, "did you mean"));
}

static void test_missing_key_is_rejected(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    /* A quantity: the message names the key with a unit placeholder. */
    variant("accelerator-minimal.json", "  \"hbm_bandwidth_TBps\": 1.6,\n", "", "miss2.json",
            path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_MISSING, path, NULL,
                 "\"hbm_bandwidth_<unit>\"");
    assert_true(strncmp(err.path, "$.hbm_bandwidth_", 16) == 0);
    variant("workload-bf16.json", "  \"kind\": \"workload\",\n", "", "miss3.json", path,
            sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_MISSING, path, "$.kind", "\"kind\"");
    /* Passing: an optional key may be left out (l2_usable_frac defaults to 1). */
    assert_ok(validate(VALID_DIR "/accelerator-minimal.json", &err), &err);
}

/* ---------------------------------------------------------------- ranges */

static void test_accel_rejects_negative_bandwidth(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    variant("accelerator-minimal.json", "\"hbm_bandwidth_TBps\": 1.6",
            "\"hbm_bandwidth_TBps\": -1.6", "neg.json", path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_RANGE, path, "$.hbm_bandwidth_TBps",
                 "must be > 0");
    char buf[1200];
    pm_error_format(&err, buf, sizeof buf);
    assert_non_null(strstr(buf, "$.hbm_bandwidth_TBps: must be > 0"));
}

static void test_accel_prefetch_consumer(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    pm_accelerator a;
    /* Absent: consumers wait for their prefetch (the paper's events). */
    assert_ok(pm_accelerator_load(VALID_DIR "/accelerator-minimal.json", &g_opts, &a, &err),
              &err);
    assert_int_equal(a.prefetch_consumer, PM_CONSUMER_WAIT);
    variant("accelerator-minimal.json", "\"compute_efficiency_frac\": 0.7",
            "\"compute_efficiency_frac\": 0.7, \"prefetch_consumer\": \"stream\"", "pc.json",
            path, sizeof path);
    assert_ok(pm_accelerator_load(path, &g_opts, &a, &err), &err);
    assert_int_equal(a.prefetch_consumer, PM_CONSUMER_STREAM);
    assert_string_equal(pm_prefetch_consumer_name(a.prefetch_consumer), "stream");
    /* A sourced choice, and its errors. */
    variant("accelerator-minimal.json", "\"compute_efficiency_frac\": 0.7",
            "\"compute_efficiency_frac\": 0.7, \"prefetch_consumer\": {\"value\": \"stream\", "
            "\"source\": \"a cache\"}",
            "pc3.json", path, sizeof path);
    assert_ok(pm_accelerator_load(path, &g_opts, &a, &err), &err);
    assert_int_equal(a.prefetch_consumer, PM_CONSUMER_STREAM);
}

static void test_workload_allreduce_dtype(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    pm_workload w;
    /* Absent: the allreduce carries the activation type. */
    assert_ok(pm_workload_load(VALID_DIR "/workload-bf16.json", &g_opts, &w, &err), &err);
    assert_false(w.allreduce_dtype_given);
    variant("workload-bf16.json", "\"kv_dtype\": \"bf16\"",
            "\"kv_dtype\": \"bf16\", \"allreduce_dtype\": \"fp32\"", "ar.json", path,
            sizeof path);
    assert_ok(pm_workload_load(path, &g_opts, &w, &err), &err);
    assert_true(w.allreduce_dtype_given);
    assert_int_equal(w.allreduce_dtype, PM_DTYPE_FP32);
}

static void test_workload_rejects_fractional_batch(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    /* Passing: an integral value written with a decimal point. */
    variant("workload-bf16.json", "\"batch\": 4", "\"batch\": 4.0", "int.json", path,
            sizeof path);
    pm_workload w;
    assert_ok(pm_workload_load(path, &g_opts, &w, &err), &err);
    assert_int_equal(w.batch, 4);
}

static void test_workload_rejects_unknown_dtype(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    /* Passing: every listed datatype. */
    const char *names[] = {"int8", "fp8", "bf16", "fp16", "fp32"};
    for (int d = 0; d < 5; d++) {
        char to[64];
        snprintf(to, sizeof to, "\"kv_dtype\": \"%s\"", names[d]);
        variant("workload-bf16.json", "\"kv_dtype\": \"bf16\"", to, "dt2.json", path, sizeof path);
        pm_workload w;
        assert_ok(pm_workload_load(path, &g_opts, &w, &err), &err);
        assert_int_equal(w.kv_dtype, d);
    }
}

/* ---------------------------------------------------------------- units in keys */

static void test_quantity_key_without_unit_is_rejected(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    variant("accelerator-minimal.json", "\"hbm_bandwidth_TBps\": 1.6", "\"hbm_bandwidth\": 1.6",
            "nounit.json", path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_UNIT, path, "$.hbm_bandwidth",
                 "needs a unit");
    /* The message lists the accepted units. */
    assert_non_null(strstr(err.message, "TBps"));
    /* Passing: another unit of the same dimension. */
    variant("accelerator-minimal.json", "\"hbm_bandwidth_TBps\": 1.6",
            "\"hbm_bandwidth_GBps\": 1600", "gbps.json", path, sizeof path);
    pm_accelerator a;
    assert_ok(pm_accelerator_load(path, &g_opts, &a, &err), &err);
    assert_rel(a.hbm_bandwidth_bytes_per_s, 1.6e12, EXACT);
}

static void test_quantity_with_unit_of_wrong_dimension_is_rejected(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    /* Passing: a bit rate is a bandwidth (12.8 Tbps = 1.6 TB/s). */
    variant("accelerator-minimal.json", "\"hbm_bandwidth_TBps\": 1.6",
            "\"hbm_bandwidth_Tbps\": 12.8", "tbit.json", path, sizeof path);
    pm_accelerator a;
    assert_ok(pm_accelerator_load(path, &g_opts, &a, &err), &err);
    assert_rel(a.hbm_bandwidth_bytes_per_s, 1.6e12, 1e-15);
}

static void test_same_quantity_in_two_units_is_rejected(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    /* Passing: only the decimal one. */
    variant("accelerator-minimal.json", "\"l2_capacity_MiB\": 192", "\"l2_capacity_MB\": 201",
            "once.json", path, sizeof path);
    pm_accelerator a;
    assert_ok(pm_accelerator_load(path, &g_opts, &a, &err), &err);
    assert_rel(a.l2_capacity_bytes, 201e6, EXACT);
}

static void test_accelerator_needs_at_least_one_peak(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    /* Passing: one datatype is enough. */
    variant("accelerator-minimal.json", "{\n    \"int8_TOPS\": 800,\n    \"bf16_TFLOPS\": 400\n  }",
            "{\"fp8_TFLOPS\": 990}", "onepeak.json", path, sizeof path);
    pm_accelerator a;
    assert_ok(pm_accelerator_load(path, &g_opts, &a, &err), &err);
    assert_rel(a.peak_flop_per_s[PM_DTYPE_FP8], 990e12, EXACT);
}

/* ---------------------------------------------------------------- consistency */

static void test_model_needs_head_dim_when_hidden_is_not_a_multiple(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    /* Passing: the same with head_dim given. */
    variant("model-tiny-gqa.json", "\"hidden_size\": 4096",
            "\"hidden_size\": 4100,\n  \"head_dim\": 128", "hd2.json", path, sizeof path);
    pm_model m;
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.head_dim, 128);
}

static void test_scenario_rejects_more_devices_than_heads(void **state)
{
    (void)state;
    char path[600];
    pm_scenario s;
    pm_error err;
    /* llama3-8b has 32 attention heads. */
    pm_status st = load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"",
                                      "{\"from\": \"hccs-full-mesh\", \"devices\": 64}",
                                      "\"paper-default\"", NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_INCONSISTENT, path, "$.cluster.devices",
                 "64 devices exceed the model's 32 attention heads");
    /* Passing: 32 devices, one head each (a what-if mesh of 32: max_devices raised). */
    assert_ok(load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"",
                                 "{\"from\": \"hccs-full-mesh\", \"devices\": 32, "
                                 "\"max_devices\": 32}",
                                 "\"paper-default\"", NULL, path, sizeof path, &s, &err),
              &err);
    pm_scenario_release(&s);
}

/* An 8-GPU NVSwitch baseboard or an 8-NPU HCCS mesh joins 8 devices: 16 on it are refused
 * (they would be modelled at the baseboard's bandwidth), naming the devices and the cluster. */
static void test_scenario_rejects_more_devices_than_the_interconnect_joins(void **state)
{
    (void)state;
    char path[600];
    pm_scenario s;
    pm_error err;
    pm_status st = load_scenario_text("\"llama3-70b\"", "\"ascend-910b\"",
                                      "{\"from\": \"hccs-full-mesh\", \"devices\": 16}",
                                      "\"paper-default\"", NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_INCONSISTENT, path, "$.cluster.devices",
                 "cluster hccs-full-mesh (full_mesh) joins at most 8 devices");
    /* 8 load; a hierarchical cluster of 16 too. */
    assert_ok(load_scenario_text("\"llama3-70b\"", "\"ascend-910b\"",
                                 "{\"from\": \"hccs-full-mesh\", \"devices\": 8}",
                                 "\"paper-default\"", NULL, path, sizeof path, &s, &err),
              &err);
    assert_int_equal(s.cluster.max_devices, 8);
    pm_scenario_release(&s);
    assert_ok(load_scenario_text("\"llama3-70b\"", "\"ascend-910b\"", "\"ascend-multinode\"",
                                 "\"paper-default\"", NULL, path, sizeof path, &s, &err),
              &err);
    assert_int_equal(s.cluster.devices, 16);
    pm_scenario_release(&s);
}

static void test_scenario_accepts_more_devices_than_heads_with_ideal_sharding(void **state)
{
    (void)state;
    char path[600];
    pm_scenario s;
    pm_error err;
    assert_ok(load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"",
                                 "{\"from\": \"hccs-full-mesh\", \"devices\": 64, "
                                 "\"max_devices\": 64}",
                                 "\"paper-default\"", ",\n  \"sharding\": \"ideal\"", path,
                                 sizeof path, &s, &err),
              &err);
    assert_int_equal(s.cluster.devices, 64);
    assert_int_equal(s.options.sharding, PM_SHARDING_IDEAL);
    pm_scenario_release(&s);
    /* An unknown sharding is a value error. */
    pm_status st = load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"",
                                      "\"paper-default\"", ",\n  \"sharding\": \"even\"", path,
                                      sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_VALUE, path, "$.sharding", "expected one of megatron, ideal");
}

static void test_scenario_rejects_dtype_the_accelerator_lacks(void **state)
{
    (void)state;
    char path[600];
    pm_scenario s;
    pm_error err;
    /* ascend-910b lists int8, bf16 and fp16 peaks, no fp32. */
    pm_status st = load_scenario_text(
        "\"llama3-8b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"",
        "{\"from\": \"paper-default\", \"weight_dtype\": \"fp32\", \"kv_dtype\": \"fp32\", "
        "\"act_dtype\": \"fp32\"}",
        NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_UNSUPPORTED, path, "$.workload.act_dtype",
                 "accelerator \"ascend-910b\" has no fp32 peak");
    assert_non_null(strstr(err.message, "int8, bf16, fp16"));
    /* Passing: bf16 is supported. */
    assert_ok(load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"",
                                 "{\"from\": \"paper-default\", \"weight_dtype\": \"bf16\", "
                                 "\"kv_dtype\": \"bf16\", \"act_dtype\": \"bf16\"}",
                                 NULL, path, sizeof path, &s, &err),
              &err);
    pm_scenario_release(&s);
}

static void test_hierarchical_cluster_requires_devices_per_node(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    variant("cluster-hierarchical.json", "  \"inter_node_latency_us\": 20", "  \"x_us\": 20",
            "h2.json", path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_MISSING, path, NULL,
                 "\"inter_node_latency_<unit>\"");
    /* Passing: the complete hierarchical cluster. */
    assert_ok(validate(VALID_DIR "/cluster-hierarchical.json", &err), &err);
}

static void test_devices_per_node_requires_hierarchical_topology(void **state)
{
    (void)state;
    char path[600];
    pm_error err;
    variant("cluster-full-mesh.json", "\"devices\": 4,", "\"devices\": 4,\n  \"devices_per_node\": 2,",
            "dpn.json", path, sizeof path);
    assert_fails(validate(path, &err), &err, PM_ERR_INCONSISTENT, path, "$.devices_per_node",
                 "only meaningful with \"topology\": \"hierarchical\"");
    /* Passing: the flat cluster without it. */
    assert_ok(validate(VALID_DIR "/cluster-full-mesh.json", &err), &err);
}

static void test_scenario_rejects_devices_per_node_not_dividing_devices(void **state)
{
    (void)state;
    char path[600];
    pm_scenario s;
    pm_error err;
    /* ascend-multinode: 16 devices, hierarchical. */
    pm_status st = load_scenario_text(
        "\"llama3-8b\"", "\"ascend-910b\"",
        "{\"from\": \"ascend-multinode\", \"devices_per_node\": 5}", "\"paper-default\"", NULL,
        path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_INCONSISTENT, path, "$.cluster.devices_per_node",
                 "must divide devices (got 5 per node, 16 devices)");
    assert_ok(load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"", "\"ascend-multinode\"",
                                 "\"paper-default\"", NULL, path, sizeof path, &s, &err),
              &err);
    assert_int_equal(s.cluster.devices_per_node, 8);
    pm_scenario_release(&s);
}

static void test_scenario_rejects_allreduce_the_topology_cannot_run(void **state)
{
    (void)state;
    char path[600];
    pm_scenario s;
    pm_error err;
    pm_status st = load_scenario_text(
        "\"llama3-8b\"", "\"ascend-910b\"",
        "{\"from\": \"hccs-full-mesh\", \"topology\": \"ring\", \"allreduce\": \"oneshot\"}",
        "\"paper-default\"", NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_INCONSISTENT, path, "$.cluster.allreduce",
                 "algorithm \"oneshot\" cannot run on topology \"ring\"");
    assert_ok(load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"",
                                 "{\"from\": \"hccs-full-mesh\", \"allreduce\": \"oneshot\"}",
                                 "\"paper-default\"", NULL, path, sizeof path, &s, &err),
              &err);
    assert_int_equal(s.cluster.algorithm, PM_AR_ONESHOT);
    pm_scenario_release(&s);
}

/* A routing skew on a dense model would change nothing: refused, and the scenario check's
 * error names the override that gave the value (not the scenario's file); a MoE model takes it. */
static void test_scenario_check_names_the_override_and_refuses_dense_skew(void **state)
{
    (void)state;
    const char *ov[] = {"workload.routing_skew_alpha=1.2"};
    const pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
    pm_scenario s;
    pm_error err;
    assert_int_equal(pm_scenario_load("llama70b", &opts, &s, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "$.workload.routing_skew_alpha");
    assert_string_equal(err.file, "override workload.routing_skew_alpha=1.2");
    assert_non_null(strstr(err.message, "needs a mixture-of-experts model"));
    assert_ok(pm_scenario_load("mixtral8x7b", &opts, &s, &err), &err);
    assert_rel(s.workload.routing_skew_alpha, 1.2, 0.0);
    pm_scenario_release(&s);
}

static void test_scenario_rejects_mixed_8bit_gemm_operands(void **state)
{
    (void)state;
    /* h100-sxm lists both int8 and fp8 peaks: the pair is refused for the GEMM, not the part.
     * W8A8 of one type and 8-bit weights with wider activations (weight-only) load. */
    static const struct {
        const char *weights, *acts, *message; /* message NULL: loads */
    } cases[] = {
        {"fp8", "int8", "int8 activations with fp8 weights"},
        {"int8", "fp8", "fp8 activations with int8 weights"},
        {"fp8", "fp8", NULL},
        {"fp8", "bf16", NULL},
        {"int8", "fp16", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[600], workload[160];
        pm_scenario s;
        pm_error err;
        snprintf(workload, sizeof workload,
                 "{\"from\": \"paper-default\", \"weight_dtype\": \"%s\", \"act_dtype\": \"%s\"}",
                 cases[i].weights, cases[i].acts);
        pm_status st = load_scenario_text("\"llama3-8b\"", "\"h100-sxm\"", "\"nvlink4-nvswitch\"",
                                          workload, NULL, path, sizeof path, &s, &err);
        if (cases[i].message) {
            assert_fails(st, &err, PM_ERR_UNSUPPORTED, path, "$.workload.act_dtype",
                         cases[i].message);
        } else {
            assert_ok(st, &err);
            pm_scenario_release(&s);
        }
    }
}

static void test_scenario_rejects_prefill_that_leaves_no_prompt(void **state)
{
    (void)state;
    char path[600];
    pm_scenario s;
    pm_error err;
    /* round(2 x 0.1) = 0 prompt tokens. */
    pm_status st = load_scenario_text(
        "\"llama3-8b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"",
        "{\"from\": \"paper-default\", \"seq_len\": 2, \"prefill_frac\": 0.1}", NULL, path,
        sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_INCONSISTENT, path, "$.workload.prefill_frac",
                 "leaves 0 prompt tokens of 2");
    /* Passing: round(2 x 0.5) = 1 prompt token, 1 decode step. */
    assert_ok(load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"",
                                 "{\"from\": \"paper-default\", \"seq_len\": 2, "
                                 "\"prefill_frac\": 0.5}",
                                 NULL, path, sizeof path, &s, &err),
              &err);
    pm_scenario_release(&s);
}

static void test_scenario_options_are_range_checked(void **state)
{
    (void)state;
    char path[600];
    pm_scenario s;
    pm_error err;
    pm_status st = load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"",
                                      "\"paper-default\"",
                                      ",\n  \"options\": {\"fused_chunks\": 2000}", path,
                                      sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_RANGE, path, "$.options.fused_chunks",
                 "must be in [0, 1024] (got 2000)");
    st = load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"",
                            "\"paper-default\"", ",\n  \"options\": {\"hbm_sharng\": true}", path,
                            sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_UNKNOWN_KEY, path, "$.options.hbm_sharng",
                 "did you mean \"hbm_sharing\"?");
    assert_ok(load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"",
                                 "\"paper-default\"", ",\n  \"options\": {\"fused_chunks\": 1024}",
                                 path, sizeof path, &s, &err),
              &err);
    assert_int_equal(s.options.fused_chunks, 1024);
    pm_scenario_release(&s);
}

/* ---------------------------------------------------------------- resolution */

static void test_unknown_bundled_name_lists_the_available_names(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    assert_fails(pm_model_load("llama4-400b", &g_opts, &m, &err), &err, PM_ERR_NOT_FOUND, NULL,
                 NULL, "no file \"llama4-400b\" and no bundled model of that name");
    assert_non_null(strstr(err.message, "llama3-70b, llama3-8b"));
    assert_non_null(strstr(err.message, "qwen2-7b"));
    pm_cluster c;
    assert_fails(pm_cluster_load("nvlink9", &g_opts, &c, &err), &err, PM_ERR_NOT_FOUND, NULL,
                 NULL, "hccs-full-mesh");
    /* Passing: a bundled name, with or without ".json". */
    assert_ok(pm_model_load("llama3-8b", &g_opts, &m, &err), &err);
    assert_int_equal(m.layers, 32);
    assert_ok(pm_model_load("llama3-8b.json", &g_opts, &m, &err), &err);
    assert_int_equal(m.layers, 32);
}

static void test_missing_path_is_not_found(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    assert_fails(pm_model_load("/nonexistent-dir/model.json", &g_opts, &m, &err), &err,
                 PM_ERR_NOT_FOUND, "/nonexistent-dir/model.json", NULL, NULL);
    assert_fails(pm_file_validate("/nonexistent-dir/model.json", &g_opts, NULL, &err), &err,
                 PM_ERR_IO, "/nonexistent-dir/model.json", NULL, "cannot open");
}

static void test_scenario_reports_unknown_component_name_at_its_key(void **state)
{
    (void)state;
    char path[600];
    pm_scenario s;
    pm_error err;
    pm_status st = load_scenario_text("\"llama4-400b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"",
                                      "\"paper-default\"", NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_NOT_FOUND, path, "$.model",
                 "no bundled model of that name (bundled: ");
    st = load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"",
                            "{\"from\": \"nvlink9\", \"devices\": 4}", "\"paper-default\"", NULL,
                            path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_NOT_FOUND, path, "$.cluster.from", "nvlink9");
    st = load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"", "42",
                            NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_TYPE, path, "$.workload",
                 "expected a name, a path or an object (got a number)");
    st = load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"", "\"paper-default\"",
                            "\"paper-default\"", NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_NOT_FOUND, path, "$.cluster", "no bundled cluster");
}

static void test_scenario_component_path_errors_name_that_file(void **state)
{
    (void)state;
    char model[600], path[600], ref[700];
    variant("model-tiny-gqa.json", "\"num_key_value_heads\": 8", "\"num_key_value_heads\": 3",
            "bad-model.json", model, sizeof model);
    snprintf(ref, sizeof ref, "\"%s\"", model);
    pm_scenario s;
    pm_error err;
    pm_status st = load_scenario_text(ref, "\"ascend-910b\"", "\"hccs-full-mesh\"",
                                      "\"paper-default\"", NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_INCONSISTENT, model, "$.num_key_value_heads", "must divide");
    /* A file of another kind where a model is expected. */
    char wl[600];
    variant("workload-bf16.json", NULL, NULL, "wl.json", wl, sizeof wl);
    snprintf(ref, sizeof ref, "\"%s\"", wl);
    st = load_scenario_text(ref, "\"ascend-910b\"", "\"hccs-full-mesh\"", "\"paper-default\"",
                            NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_VALUE, wl, "$.kind", "expected a model file here");
}

static void test_scenario_inline_error_path_is_inside_the_scenario(void **state)
{
    (void)state;
    char path[600];
    pm_scenario s;
    pm_error err;
    pm_status st = load_scenario_text(
        "\"llama3-8b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"",
        "{\"batch\": 0, \"seq_len\": 1024, \"prefill_frac\": 0.5, \"weight_dtype\": \"int8\", "
        "\"kv_dtype\": \"int8\", \"act_dtype\": \"int8\"}",
        NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_RANGE, path, "$.workload.batch", "must be in [1, ");
    st = load_scenario_text(
        "\"llama3-8b\"", "\"ascend-910b\"", "\"hccs-full-mesh\"",
        "{\"batch\": 4, \"btach\": 4, \"seq_len\": 1024, \"prefill_frac\": 0.5, "
        "\"weight_dtype\": \"int8\", \"kv_dtype\": \"int8\", \"act_dtype\": \"int8\"}",
        NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_UNKNOWN_KEY, path, "$.workload.btach",
                 "did you mean \"batch\"?");
}

static void test_scenario_from_override_error_names_the_scenario(void **state)
{
    (void)state;
    char path[600];
    pm_scenario s;
    pm_error err;
    pm_status st = load_scenario_text("\"llama3-8b\"", "\"ascend-910b\"",
                                      "{\"from\": \"hccs-full-mesh\", \"devices\": 0}",
                                      "\"paper-default\"", NULL, path, sizeof path, &s, &err);
    assert_fails(st, &err, PM_ERR_RANGE, NULL, NULL, "must be in [1, ");
    /* The bad value was written in the scenario, so the scenario file is named. */
    assert_true(strncmp(err.file, path, strlen(path)) == 0);
    assert_non_null(strstr(err.path, "devices"));
}

/* ---------------------------------------------------------------- overrides */

static void test_set_override_changes_batch(void **state)
{
    (void)state;
    const char *ov[] = {"workload.batch=8"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
    pm_scenario s;
    pm_error err;
    assert_ok(pm_scenario_load("llama70b", &opts, &s, &err), &err);
    assert_int_equal(s.workload.batch, 8);
    assert_int_equal(s.workload.seq_len, 16384); /* untouched */
    pm_scenario_release(&s);
    /* Passing without the override: the bundled batch 4. */
    assert_ok(pm_scenario_load("llama70b", &g_opts, &s, &err), &err);
    assert_int_equal(s.workload.batch, 4);
    pm_scenario_release(&s);
}

/* A key that shapes a feature the model does not build is refused at the key (session 41's
 * tour: --set model.n_shared_experts=1 on a dense Llama was taken and read by nothing): the
 * experts' keys without an expert count, MLA's without kv_lora_rank, a window pattern without a
 * window. Off values (0, null) pass, as a dense config's "num_experts": null does. */
static void test_feature_keys_without_the_feature_refused(void **state)
{
    (void)state;
    static const char *const on[][2] = {
        {"model.n_shared_experts=1", "$.model.n_shared_experts"},
        {"model.moe_intermediate_size=2048", "$.model.moe_intermediate_size"},
        {"model.num_experts_per_tok=2", "$.model.num_experts_per_tok"},
        {"model.q_lora_rank=1536", "$.model.q_lora_rank"},
        {"model.v_head_dim=128", "$.model.v_head_dim"},
        {"model.sliding_window_pattern=2", "$.model.sliding_window_pattern"},
    };
    pm_scenario s;
    pm_error err;
    for (size_t i = 0; i < PM_ARRAY_LEN(on); i++) {
        const char *ov[] = {on[i][0]};
        pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
        assert_fails(pm_scenario_load("llama70b", &opts, &s, &err), &err, PM_ERR_UNSUPPORTED,
                     NULL, on[i][1], "and this model has none");
    }
    const char *off[] = {"model.n_shared_experts=0"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, off, 1};
    assert_ok(pm_scenario_load("llama70b", &opts, &s, &err), &err);
    pm_scenario_release(&s);
}

/* A speculative block the scenario does not give, written by overrides alone: a key missing
 * from it is named at the overrides (--spec-tokens 2 --spec-accept 0.9 without a method named
 * the scenario's file, which has no "speculative"). */
static void test_speculative_block_of_overrides_names_them(void **state)
{
    (void)state;
    const char *ov[] = {"speculative.draft_tokens=2", "speculative.acceptance=0.9"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 2};
    pm_scenario s;
    pm_error err;
    assert_fails(pm_scenario_load("llama70b-h100", &opts, &s, &err), &err, PM_ERR_MISSING,
                 "override speculative.acceptance=0.9", "$.speculative.method", "\"method\"");
}

/* The runtime (issue 16): absent by default; named with --set runtime=NAME, its numbers in SI
 * (data/runtimes/vllm-2023.json: 843 us, 42.1 us, 6400 us, 9.9 us, 10 us), its allreduce
 * implementation replacing the cluster's; a key inside it with --set runtime.KEY once named,
 * and an error naming the key before. */
static void test_runtime_is_a_component_with_its_allreduce(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    assert_ok(pm_scenario_load("llama70b-h100", &g_opts, &s, &err), &err);
    assert_false(s.runtime.present);
    assert_int_equal(s.cluster.algorithm, PM_AR_AUTO);
    pm_scenario_release(&s);
    const char *ov[] = {"runtime=vllm-2023", "runtime.step_overhead_ms=0.5"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
    assert_ok(pm_scenario_load("llama70b-h100", &opts, &s, &err), &err);
    assert_true(s.runtime.present);
    assert_string_equal(s.runtime.name, "vllm-2023");
    assert_rel(s.runtime.step_overhead_s, 843e-6, 1e-12);
    assert_rel(s.runtime.sequence_overhead_s, 42.1e-6, 1e-12);
    assert_rel(s.runtime.multi_device_overhead_s, 6.4e-3, 1e-12);
    assert_rel(s.runtime.kernel_launch_s, 9.9e-6, 1e-12);
    assert_rel(s.runtime.allreduce_overhead_s, 10e-6, 1e-12);
    assert_int_equal(s.cluster.algorithm, PM_AR_RING);
    pm_scenario_release(&s);
    opts.n_overrides = 2; /* 0.5 ms replaces the file's 843 us */
    assert_ok(pm_scenario_load("llama70b-h100", &opts, &s, &err), &err);
    assert_rel(s.runtime.step_overhead_s, 0.5e-3, 1e-12);
    pm_scenario_release(&s);
    const char *ov2[] = {"runtime.step_overhead_us=1"};
    pm_load_opts opts2 = {PM_TEST_DATA_DIR, ov2, 1};
    assert_fails(pm_scenario_load("llama70b-h100", &opts2, &s, &err), &err, PM_ERR_MISSING,
                 "override", "$.runtime", "names no runtime");
}

/* The H100's fp8 GEMMs sustain 0.70 of their peak, its bf16 ones 0.80 (MAMF searches); an
 * efficiency for a datatype without a peak is refused at its key. */
static void test_compute_efficiency_by_dtype(void **state)
{
    (void)state;
    pm_accelerator a;
    pm_error err;
    assert_ok(pm_accelerator_load("h100-sxm", &g_opts, &a, &err), &err);
    assert_rel(a.compute_efficiency_frac, 0.8, 1e-12);
    assert_rel(a.compute_efficiency_dtype_frac[PM_DTYPE_FP8], 0.7, 1e-12);
    assert_rel(a.compute_efficiency_dtype_frac[PM_DTYPE_BF16], 0.0, 0.0);
    const char *ov[] = {"accelerator.compute_efficiency_by_dtype.fp8_frac=0.6"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
    pm_scenario s;
    assert_ok(pm_scenario_load("llama70b-h100", &opts, &s, &err), &err);
    assert_rel(s.accel.compute_efficiency_dtype_frac[PM_DTYPE_FP8], 0.6, 1e-12);
    pm_scenario_release(&s);
    /* The Ascend 910B lists no fp8 peak. */
    assert_fails(pm_scenario_load("llama8b", &opts, &s, &err), &err, PM_ERR_INCONSISTENT, NULL,
                 "$.accelerator.compute_efficiency_by_dtype.fp8_frac", "no peak");
}

/* A runtime's PagedAttention kernel (data/runtimes/vllm.json: where vLLM 0.4-0.6 falls back to
 * it, at 1/3 of FlashAttention's efficiency; vllm-2023: for every model) comes with its
 * efficiency: the one without the other is refused at the efficiency's key. */
static void test_runtime_paged_attention_and_its_efficiency_come_together(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    const char *ov[] = {"runtime=vllm", "runtime.paged_attention=none",
                        "runtime.paged_attention_efficiency_frac=0.5"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
    assert_ok(pm_scenario_load("llama70b-h100", &opts, &s, &err), &err);
    assert_int_equal(s.runtime.paged_attention, PM_PAGED_FALLBACK);
    assert_rel(s.runtime.paged_attention_efficiency_frac, 0.33, 1e-12);
    pm_scenario_release(&s);
    ov[0] = "runtime=vllm-2023";
    assert_ok(pm_scenario_load("llama70b-h100", &opts, &s, &err), &err);
    assert_int_equal(s.runtime.paged_attention, PM_PAGED_ALL);
    pm_scenario_release(&s);
    /* Turned off with its efficiency left: it would change nothing. */
    opts.n_overrides = 2;
    assert_fails(pm_scenario_load("llama70b-h100", &opts, &s, &err), &err, PM_ERR_VALUE, NULL,
                 "$.paged_attention_efficiency_frac", "change nothing");
    /* vLLM caches keys and values in 16 bits or fp8 (kv_dtypes): the paper's int8 KV cache
     * (scenario llama8b) is refused under it, by the workload's key. */
    opts.n_overrides = 1;
    ov[0] = "runtime=vllm";
    assert_fails(pm_scenario_load("llama8b", &opts, &s, &err), &err, PM_ERR_UNSUPPORTED, NULL,
                 "$.workload.kv_dtype", "not int8");
    /* vllm-v1 has no PagedAttention kernel: turned on without an efficiency, it is missing. */
    const char *ov2[] = {"runtime=vllm-v1", "runtime.paged_attention=all"};
    pm_load_opts opts2 = {PM_TEST_DATA_DIR, ov2, 2};
    assert_fails(pm_scenario_load("llama70b-h100", &opts2, &s, &err), &err, PM_ERR_MISSING,
                 NULL, "$.paged_attention_efficiency_frac", "required with");
    /* vLLM before 0.7.1 caches an MLA model's keys and values per head: not modelled, so
     * DeepSeek-V3 under vllm is refused at the runtime's key, and loads under vllm-v1 (at EP 1:
     * vLLM's expert parallelism is refused, below). */
    const char *ov3[] = {"runtime=vllm", "cluster.expert_parallel=1"};
    pm_load_opts opts3 = {PM_TEST_DATA_DIR, ov3, 2};
    assert_fails(pm_scenario_load("deepseek-v3-h200", &opts3, &s, &err), &err,
                 PM_ERR_UNSUPPORTED, NULL, "$.runtime.mla_kv_cache", "is not modelled");
    ov3[0] = "runtime=vllm-v1";
    assert_ok(pm_scenario_load("deepseek-v3-h200", &opts3, &s, &err), &err);
    assert_int_equal(s.runtime.mla_kv_cache, PM_MLA_CACHE_LATENT);
    assert_int_equal(s.runtime.expert_parallel, PM_EP_ALLREDUCE);
    pm_scenario_release(&s);
    /* vLLM's expert parallelism inside one tensor-parallel group keeps every token on every
     * rank and sums by an allreduce, which is not modelled: Mixtral at EP 2 is refused at the
     * runtime's key, at EP 1 it loads; without a runtime EP 2 is the modelled all-to-all. */
    const char *ov4[] = {"runtime=vllm", "workload.kv_dtype=fp16", "cluster.expert_parallel=2"};
    pm_load_opts opts4 = {PM_TEST_DATA_DIR, ov4, 3};
    assert_fails(pm_scenario_load("mixtral8x7b", &opts4, &s, &err), &err, PM_ERR_UNSUPPORTED,
                 NULL, "$.runtime.expert_parallel", "not modelled");
    ov4[2] = "cluster.expert_parallel=1";
    assert_ok(pm_scenario_load("mixtral8x7b", &opts4, &s, &err), &err);
    pm_scenario_release(&s);
    const char *ov5[] = {"cluster.expert_parallel=2"};
    pm_load_opts opts5 = {PM_TEST_DATA_DIR, ov5, 1};
    assert_ok(pm_scenario_load("mixtral8x7b", &opts5, &s, &err), &err);
    assert_int_equal(s.runtime.expert_parallel, PM_EP_ALL_TO_ALL);
    pm_scenario_release(&s);
    /* A value outside the enumeration names the choices. */
    ov2[1] = "runtime.paged_attention=sometimes";
    assert_fails(pm_scenario_load("llama70b-h100", &opts2, &s, &err), &err, PM_ERR_VALUE, NULL,
                 "$.runtime.paged_attention", "fallback");
}

/* A runtime's expert-GEMM compute table (issue 47, "moe_gemm_compute_efficiency"): read
 * strictly, each refusal at its JSON path: an array that is not one, points whose tokens do not
 * increase, a fraction of 0, unknown keys in the table and in a point, no accelerator. */
static void runtime_table(const char *table, char *path, size_t n)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"kind\": \"runtime\", \"name\": \"t\", \"source\": \"test\",\n"
             " \"step_overhead_us\": 1, \"sequence_overhead_us\": 0, \"kernel_launch_us\": 3,\n"
             " \"moe_gemm_compute_efficiency\": %s}\n",
             table);
    write_tmp("runtime-table.json", text, path, n);
}

static void test_runtime_moe_gemm_compute_table_is_read_strictly(void **state)
{
    (void)state;
    char path[512];
    pm_error err;
    runtime_table("{\"accelerators\": [\"h100-sxm\", \"h200-sxm\"], \"source\": \"s\", "
                  "\"points\": [{\"tokens_per_expert\": 128, \"compute_efficiency_frac\": 1},"
                  " {\"tokens_per_expert\": 512, \"compute_efficiency_frac\": 0.8}]}",
                  path, sizeof path);
    assert_ok(validate(path, &err), &err);
    char rt[600];
    snprintf(rt, sizeof rt, "runtime=%s", path);
    const char *ov[] = {rt};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
    pm_scenario s;
    assert_ok(pm_scenario_load("llama70b-h100", &opts, &s, &err), &err);
    const pm_moe_gemm_curve *c = &s.runtime.moe_gemm_compute;
    assert_int_equal(c->n_points, 2);
    assert_int_equal(c->n_accelerators, 2);
    assert_string_equal(c->accelerators[1], "h200-sxm");
    assert_rel(c->tokens_per_expert[1], 512.0, EXACT);
    assert_rel(c->compute_frac[1], 0.8, EXACT);
    pm_scenario_release(&s);
    static const char *const T = "$.moe_gemm_compute_efficiency";
    char at[128];
    /* Not an array. */
    runtime_table("{\"accelerators\": [\"h100-sxm\"], \"source\": \"s\", \"points\": "
                  "{\"tokens_per_expert\": 128, \"compute_efficiency_frac\": 1}}",
                  path, sizeof path);
    snprintf(at, sizeof at, "%s.points", T);
    assert_fails(validate(path, &err), &err, PM_ERR_TYPE, path, at, "expected an array");
    /* An element not an object. */
    runtime_table("{\"accelerators\": [\"h100-sxm\"], \"source\": \"s\", \"points\": [1]}", path,
                  sizeof path);
    snprintf(at, sizeof at, "%s.points[0]", T);
    assert_fails(validate(path, &err), &err, PM_ERR_TYPE, path, at, "got a number");
    /* Tokens not increasing: 512 then 512. */
    runtime_table("{\"accelerators\": [\"h100-sxm\"], \"source\": \"s\", \"points\": ["
                  "{\"tokens_per_expert\": 512, \"compute_efficiency_frac\": 1},"
                  " {\"tokens_per_expert\": 512, \"compute_efficiency_frac\": 0.8}]}",
                  path, sizeof path);
    snprintf(at, sizeof at, "%s.points[1]", T);
    assert_fails(validate(path, &err), &err, PM_ERR_VALUE, path, at, "expected more than 512");
    /* A fraction of 0 (the range is (0, 1]). */
    runtime_table("{\"accelerators\": [\"h100-sxm\"], \"source\": \"s\", \"points\": ["
                  "{\"tokens_per_expert\": 512, \"compute_efficiency_frac\": 0}]}",
                  path, sizeof path);
    snprintf(at, sizeof at, "%s.points[0].compute_efficiency_frac", T);
    assert_fails(validate(path, &err), &err, PM_ERR_RANGE, path, at, NULL);
    /* An unknown key in a point, and in the table. */
    runtime_table("{\"accelerators\": [\"h100-sxm\"], \"source\": \"s\", \"points\": ["
                  "{\"tokens_per_expert\": 512, \"compute_efficiency_frac\": 1, \"gpu\": 1}]}",
                  path, sizeof path);
    snprintf(at, sizeof at, "%s.points[0].gpu", T);
    assert_fails(validate(path, &err), &err, PM_ERR_UNKNOWN_KEY, path, at, "unknown key");
    runtime_table("{\"accelerators\": [\"h100-sxm\"], \"source\": \"s\", \"interpolation\": "
                  "\"log\", \"points\": [{\"tokens_per_expert\": 512, "
                  "\"compute_efficiency_frac\": 1}]}",
                  path, sizeof path);
    snprintf(at, sizeof at, "%s.interpolation", T);
    assert_fails(validate(path, &err), &err, PM_ERR_UNKNOWN_KEY, path, at, "unknown key");
    /* No accelerator: the table's evidence must say where it applies. */
    runtime_table("{\"accelerators\": [], \"source\": \"s\", \"points\": ["
                  "{\"tokens_per_expert\": 512, \"compute_efficiency_frac\": 1}]}",
                  path, sizeof path);
    snprintf(at, sizeof at, "%s.accelerators", T);
    assert_fails(validate(path, &err), &err, PM_ERR_RANGE, path, at, "got 0");
}

static void test_set_override_in_another_unit_replaces_the_quantity(void **state)
{
    (void)state;
    const char *ov[] = {"accelerator.l2_capacity_MB=104", "cluster.devices=8"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 2};
    pm_scenario s;
    pm_error err;
    assert_ok(pm_scenario_load("llama70b", &opts, &s, &err), &err);
    assert_rel(s.accel.l2_capacity_bytes, 104e6, EXACT); /* not 192 MiB, no duplicate */
    assert_int_equal(s.cluster.devices, 8);
    pm_scenario_release(&s);
}

/* Writes Llama-3.2-1B's published config with `extra` (keys and a trailing comma) added and
 * loads the llama70b scenario (int8 weights) on it with the overrides sets (n of them). */
static pm_status load_llama1b_with(const char *extra, const char *const *sets, size_t n,
                                   pm_scenario *s, pm_error *err)
{
    char *base = slurp(PM_TEST_CONFIG_DIR "/hf-families/llama3.2-1b-config.json");
    char with[512], model[600];
    snprintf(with, sizeof with, "%s \"architectures\"", extra);
    char *text = subst(base, "\"architectures\"", with);
    char path[512];
    write_tmp("quant-config.json", text, path, sizeof path);
    free(text);
    free(base);
    const char *all[8];
    snprintf(model, sizeof model, "model=%s", path);
    all[0] = model;
    for (size_t i = 0; i < n && i < 7; i++)
        all[i + 1] = sets[i];
    pm_load_opts o = {PM_TEST_DATA_DIR, all, n + 1};
    return pm_scenario_load("llama70b", &o, s, err);
}

/* The checkpoint warning of s (the one warning these scenarios may have), or "". */
static const char *checkpoint_note(const pm_scenario *s, char *note, size_t n)
{
    for (size_t i = 0; pm_scenario_warning(s, i, note, n); i++)
        if (strstr(note, "the checkpoint's weights"))
            return note;
    return "";
}

/* A HuggingFace config's quantization_config describes the published checkpoint: its weights'
 * bits and kind are read from transformers' quant_method and keys, the workload's weight_dtype
 * stays what is modelled, and a difference is a warning, never silent. */
static void test_checkpoint_quantization_is_read_and_warned(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    char note[512];
    /* DeepSeek-V3's block-wise fp8 (FineGrainedFP8Config): 8-bit floats, modelled as int8. */
    const char *fp8 = "\"quantization_config\": {\"quant_method\": \"fp8\", \"fmt\": \"e4m3\", "
                      "\"activation_scheme\": \"dynamic\", \"weight_block_size\": [128, 128]},";
    assert_ok(load_llama1b_with(fp8, NULL, 0, &s, &err), &err);
    assert_string_equal(s.model.quant_method, "fp8");
    assert_rel(s.model.quant_bits, 8.0, EXACT);
    assert_true(s.model.quant_float);
    assert_int_equal(s.workload.weight_dtype, PM_DTYPE_INT8);
    checkpoint_note(&s, note, sizeof note);
    assert_non_null(strstr(note, "the checkpoint's weights are 8-bit floats"));
    assert_non_null(strstr(note, "quant_method \"fp8\"); modelled as int8"));
    assert_non_null(strstr(note, "weight_dtype fp8 models the checkpoint as published"));
    assert_non_null(strstr(note, "quant-config.json"));
    pm_scenario_release(&s);
    const char *as_fp8[] = {"workload.weight_dtype=fp8", "workload.act_dtype=fp8",
                            "accelerator=h100-sxm", "cluster=nvlink4-nvswitch"};
    assert_ok(load_llama1b_with(fp8, as_fp8, 4, &s, &err), &err);
    assert_string_equal(checkpoint_note(&s, note, sizeof note), "");
    pm_scenario_release(&s);
    /* Each method as it writes its config, and what is read of it; want: in the warning under
     * the llama70b scenario's int8 weights ("": no warning). */
    static const struct {
        const char *extra, *method;
        double bits;
        bool is_float;
        const char *want;
    } cases[] = {
        /* AWQ at 4 bits: integers, the int4 datatype (session 45i), not the workload's int8. */
        {"\"quantization_config\": {\"quant_method\": \"awq\", \"bits\": 4, \"group_size\": 128, "
         "\"version\": \"gemm\"},",
         "awq", 4, false, "are 4-bit integers (quantization_config's quant_method \"awq\"); "
                          "modelled as int8, the workload's weight_dtype (weight_dtype int4 "
                          "models the checkpoint as published)"},
        /* bitsandbytes 8-bit: integers, the workload's own. */
        {"\"quantization_config\": {\"quant_method\": \"bitsandbytes\", \"load_in_8bit\": true, "
         "\"load_in_4bit\": false},",
         "bitsandbytes", 8, false, ""},
        /* compressed-tensors: one group of 8-bit float weights (its activations' group aside) */
        {"\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"config_groups\": "
         "{\"group_0\": {\"weights\": {\"num_bits\": 8, \"type\": \"float\"}, "
         "\"input_activations\": {\"num_bits\": 8}}, \"group_1\": {\"input_activations\": "
         "{\"num_bits\": 8, \"type\": \"float\"}}}},",
         "compressed-tensors", 8, true, "are 8-bit floats"},
        /* ... and groups of 8-bit floats and 4-bit integers: mixed, not sized, still warned. */
        {"\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"config_groups\": "
         "{\"group_0\": {\"weights\": {\"num_bits\": 8, \"type\": \"float\"}}, \"group_1\": "
         "{\"weights\": {\"num_bits\": 4, \"type\": \"int\"}}}},",
         "compressed-tensors", 0, false, "are in a format the reader does not size"},
        /* NVIDIA ModelOpt's NVFP4: 4-bit floats. */
        {"\"quantization_config\": {\"quant_method\": \"modelopt\", \"quant_algo\": \"NVFP4\"},",
         "modelopt", 4, true, "are 4-bit floats"},
        /* mlx-lm's block, also copied into quantization_config without a quant_method. */
        {"\"quantization\": {\"group_size\": 64, \"bits\": 4}, \"quantization_config\": "
         "{\"group_size\": 64, \"bits\": 4},",
         "mlx", 4, false, "are 4-bit integers (mlx's quantization block)"},
        {"\"quantization\": {\"group_size\": 32, \"bits\": 8, \"mode\": \"affine\"},", "mlx", 8,
         false, ""},
    };
    for (size_t i = 0; i < PM_ARRAY_LEN(cases); i++) {
        assert_ok(load_llama1b_with(cases[i].extra, NULL, 0, &s, &err), &err);
        assert_string_equal(s.model.quant_method, cases[i].method);
        assert_rel(s.model.quant_bits, cases[i].bits, EXACT);
        assert_int_equal(s.model.quant_float, cases[i].is_float);
        const char *got = checkpoint_note(&s, note, sizeof note);
        if (cases[i].want[0] ? !strstr(got, cases[i].want) : got[0] != '\0')
            fail_msg("case %zu (%s): warning \"%s\", want \"%s\"", i, cases[i].method, got,
                     cases[i].want);
        /* the only warning: neither key is taken for an unrecognised one */
        const size_t after = cases[i].want[0] ? 1 : 0;
        assert_false(pm_scenario_warning(&s, after, note, sizeof note));
        pm_scenario_release(&s);
    }
    /* null: not quantised; neither a warning nor an unrecognised key. */
    assert_ok(load_llama1b_with("\"quantization_config\": null,", NULL, 0, &s, &err), &err);
    assert_string_equal(s.model.quant_method, "");
    assert_false(pm_scenario_warning(&s, 0, note, sizeof note));
    pm_scenario_release(&s);
    /* What transformers itself requires is required here: GPTQ's bits, a quant_method. */
    assert_fails(load_llama1b_with("\"quantization_config\": {\"quant_method\": \"gptq\"},", NULL,
                                   0, &s, &err),
                 &err, PM_ERR_MISSING, NULL, "$.quantization_config.bits", "bits");
    assert_fails(load_llama1b_with("\"quantization_config\": {\"bits\": 4},", NULL, 0, &s, &err),
                 &err, PM_ERR_MISSING, NULL, "$.quantization_config.quant_method",
                 "quant_method");
    assert_fails(load_llama1b_with("\"quantization_config\": \"fp8\",", NULL, 0, &s, &err), &err,
                 PM_ERR_TYPE, NULL, "$.quantization_config", "expected an object");
}

/* A relative path in a scenario file is found in that file's folder, whatever the working
 * folder: "model": "beside-model.json" named the working folder's file (none: an error). */
static void test_scenario_paths_are_relative_to_the_scenario(void **state)
{
    (void)state;
    char *model = slurp(PM_TEST_DATA_DIR "/models/llama3-8b.json");
    char mpath[512], spath[512];
    write_tmp("beside-model.json", model, mpath, sizeof mpath);
    free(model);
    write_tmp("beside-scenario.json",
              "{\"kind\": \"scenario\", \"name\": \"s\", \"model\": \"beside-model.json\", "
              "\"accelerator\": \"h100-sxm\", \"cluster\": {\"from\": \"nvlink4-nvswitch\", "
              "\"devices\": 2}, \"workload\": {\"from\": \"./beside-workload.json\"}}",
              spath, sizeof spath);
    char *wl = slurp(PM_TEST_DATA_DIR "/workloads/decode-bf16.json");
    char wpath[512];
    write_tmp("beside-workload.json", wl, wpath, sizeof wpath);
    free(wl);
    pm_scenario s;
    pm_error err;
    assert_ok(pm_scenario_load(spath, &g_opts, &s, &err), &err);
    assert_int_equal(s.model.layers, 32);
    bool beside = false;
    for (size_t i = 0; i < pm_scenario_param_count(&s); i++)
        beside = beside || strcmp(pm_scenario_param(&s, i)->file, mpath) == 0;
    assert_true(beside); /* the model's keys come from the file beside the scenario */
    pm_scenario_release(&s);
}

/* An int4 checkpoint's groups: gptq's and awq's group_size and zero point (gptq's sym, awq's
 * zero_point) are read, and where they differ from the workload's int4 groups (128 input
 * channels a scale by default, symmetric) a warning says so: gptq at 32 with sym false was
 * modelled as 128 symmetric without a word (weights 9 % light on Qwen2.5-32B). */
static void test_checkpoint_int4_groups_are_warned(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    char note[512];
    /* (The 910B states no conversion rate: the H100's, so that int4 weights are modelled.) */
    const char *int4[] = {"workload.weight_dtype=int4", "workload.act_dtype=bf16",
                          "workload.allreduce_dtype=bf16", "workload.weight_zero_point=false",
                          "accelerator.dequant_rate_TOPS=4.18"};
    static const struct {
        const char *extra;
        int group, zero;
        const char *want;
    } cases[] = {
        {"\"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 4, \"group_size\": 32, "
         "\"sym\": false, \"desc_act\": false},",
         32, 1, "weights are int4 with a scale per 32 input channels and a zero point "
                "(quantization_config's quant_method \"gptq\"); modelled with a scale per 128, "
                "symmetric"},
        {"\"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 4, \"group_size\": -1, "
         "\"sym\": true},",
         -1, -1, "a scale per output channel (group_size -1), symmetric"},
        /* as modelled: 128, symmetric */
        {"\"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 4, \"group_size\": 128, "
         "\"sym\": true},",
         128, -1, ""},
        /* awq's zero_point true against the workload's none; its group as modelled */
        {"\"quantization_config\": {\"quant_method\": \"awq\", \"bits\": 4, \"group_size\": 128, "
         "\"zero_point\": true, \"version\": \"gemm\"},",
         128, 1, "a scale per 128 input channels and a zero point"},
        /* neither stated: nothing to compare */
        {"\"quantization_config\": {\"quant_method\": \"awq\", \"bits\": 4},", 0, 0, ""},
    };
    for (size_t i = 0; i < PM_ARRAY_LEN(cases); i++) {
        assert_ok(load_llama1b_with(cases[i].extra, int4, 5, &s, &err), &err);
        assert_int_equal(s.workload.weight_dtype, PM_DTYPE_INT4);
        assert_int_equal(s.model.quant_group_size, cases[i].group);
        assert_int_equal(s.model.quant_zero_point, cases[i].zero);
        const char *got = checkpoint_note(&s, note, sizeof note);
        if (cases[i].want[0] ? !strstr(got, cases[i].want) : got[0] != '\0')
            fail_msg("case %zu: warning \"%s\", want \"%s\"", i, got, cases[i].want);
        pm_scenario_release(&s);
    }
    /* The workload set as the checkpoint is: no warning. */
    const char *as_published[] = {"workload.weight_dtype=int4", "workload.act_dtype=bf16",
                                  "workload.allreduce_dtype=bf16", "workload.weight_group_size=32",
                                  "workload.weight_zero_point=true",
                                  "accelerator.dequant_rate_TOPS=4.18"};
    assert_ok(load_llama1b_with(cases[0].extra, as_published, 6, &s, &err), &err);
    assert_string_equal(checkpoint_note(&s, note, sizeof note), "");
    pm_scenario_release(&s);
}

/* Every warning in one list, in its order: the platform, the trained context, the checkpoint,
 * then each unrecognised key; the list ends, and a NULL note only counts. */
static void test_scenario_warnings_are_listed_in_order(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    char note[512];
    const char *sets[] = {"accelerator=h100-sxm", "workload.seq_len=200000"};
    assert_ok(load_llama1b_with("\"zorblat_mode\": 3, \"quantization_config\": {\"quant_method\": "
                                "\"mxfp4\"},",
                                sets, 2, &s, &err),
              &err);
    const char *want[] = {"cluster hccs-full-mesh is of platform ascend",
                          "sequence length 200000 exceeds the model's max_position_embeddings "
                          "131072",
                          "are 4-bit floats (quantization_config's quant_method \"mxfp4\")",
                          "$.model.zorblat_mode: key not recognised, assumed not to change cost"};
    for (size_t i = 0; i < PM_ARRAY_LEN(want); i++) {
        assert_true(pm_scenario_warning(&s, i, note, sizeof note));
        if (!strstr(note, want[i]))
            fail_msg("warning %zu: \"%s\" lacks \"%s\"", i, note, want[i]);
        assert_true(pm_scenario_warning(&s, i, NULL, 0));
    }
    assert_false(pm_scenario_warning(&s, PM_ARRAY_LEN(want), note, sizeof note));
    pm_scenario_release(&s);
    assert_false(pm_scenario_warning(NULL, 0, note, sizeof note));
    /* Llama3-70B's 64 heads, 8 KV heads and 28672 MLP columns over 3 devices: the busiest holds
     * ceil(64 / 3) = 22 query and ceil(8 / 3) = 3 KV heads, which is what is modelled. Over 4
     * they divide; an ideal split is the hypothetical one and says so itself. */
    const char *three[] = {"cluster.devices=3", "accelerator.l2_capacity_MiB=512"};
    pm_load_opts o3 = {PM_TEST_DATA_DIR, three, 2};
    assert_ok(pm_scenario_load("llama70b", &o3, &s, &err), &err);
    assert_true(pm_scenario_warning(&s, 0, note, sizeof note));
    assert_string_equal(note, "model llama3-70b does not split evenly over 3 devices (64 query "
                              "heads, 8 KV heads, MLP width 28672): the busiest device's share "
                              "is modelled (22 query heads, 3 KV heads); engines that split "
                              "evenly (vLLM, TensorRT-LLM) refuse it");
    /* Then, last, a what-if die over the reticle (issue 41): the 910B's compute die with 512
     * MiB of L2, 0.34185 x 800 + 1.3325 x 512 + 14.9617 x 4 + 76.44 = 1092.0 mm2, is a
     * warning (the file as written, 665.6 mm2, is buildable; over the reticle it is refused). */
    assert_true(pm_scenario_warning(&s, 1, note, sizeof note));
    assert_string_equal(note, "accelerator ascend-910b: its modelled compute die is 1092 mm2, "
                              "over the 858 mm2 reticle: no such die can be built as one piece "
                              "of silicon (split the package with area.compute_dies or "
                              "area.io_dies, or revisit its area coefficients); its area, cost, "
                              "leakage and densities are of that die");
    assert_false(pm_scenario_warning(&s, 2, note, sizeof note));
    pm_scenario_release(&s);
    /* A scenario's inline accelerator derived `from` a file is the same what-if as --set: the
     * H100 with 80 MiB of L2 (883 mm2) is warned of, not refused in the bundled file's name. */
    char path[512];
    write_tmp("inline-accelerator.json",
              "{\"kind\": \"scenario\", \"name\": \"s\", \"model\": \"llama3-70b\", "
              "\"accelerator\": {\"from\": \"h100-sxm\", \"l2_capacity_MiB\": 80}, "
              "\"cluster\": {\"from\": \"nvlink4-nvswitch\", \"devices\": 8}, "
              "\"workload\": \"decode-bf16\"}",
              path, sizeof path);
    assert_ok(pm_scenario_load(path, &g_opts, &s, &err), &err);
    assert_true(pm_scenario_warning(&s, 0, note, sizeof note));
    assert_non_null(strstr(note, "accelerator h100-sxm: its modelled die is 883 mm2, over the "
                                 "858 mm2 reticle"));
    pm_scenario_release(&s);
    const char *ideal[] = {"cluster.devices=3", "sharding=ideal"};
    pm_load_opts oi = {PM_TEST_DATA_DIR, ideal, 2};
    assert_ok(pm_scenario_load("llama70b", &oi, &s, &err), &err);
    assert_false(pm_scenario_warning(&s, 0, note, sizeof note));
    pm_scenario_release(&s);
    assert_ok(pm_scenario_load("llama70b-h100", &g_opts, &s, &err), &err);
    assert_false(pm_scenario_warning(&s, 0, note, sizeof note));
    pm_scenario_release(&s);
}

/* The bundled accelerators and clusters name their platform: the llama70b scenario with the
 * H100 keeps its Ascend HCCS cluster and is flagged, with the H100's own cluster named. */
static void test_platform_mismatch_is_flagged(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    char note[400];
    const char *h100[] = {"accelerator=h100-sxm"};
    pm_load_opts o1 = {PM_TEST_DATA_DIR, h100, 1};
    assert_ok(pm_scenario_load("llama70b", &o1, &s, &err), &err);
    assert_string_equal(s.accel.platform, "nvidia-hopper");
    assert_string_equal(s.accel.default_cluster, "nvlink4-nvswitch");
    assert_string_equal(s.cluster.platform, "ascend");
    assert_true(pm_scenario_platform_mismatch(&s, note, sizeof note));
    assert_non_null(strstr(note, "cluster hccs-full-mesh is of platform ascend"));
    assert_non_null(strstr(note, "its own cluster: nvlink4-nvswitch"));
    assert_true(pm_scenario_platform_mismatch(&s, NULL, 0)); /* no note asked for */
    pm_scenario_release(&s);
    /* Its own cluster, or the scenario as shipped: nothing to flag. */
    const char *own[] = {"accelerator=h100-sxm", "cluster=nvlink4-nvswitch"};
    pm_load_opts o2 = {PM_TEST_DATA_DIR, own, 2};
    assert_ok(pm_scenario_load("llama70b", &o2, &s, &err), &err);
    assert_false(pm_scenario_platform_mismatch(&s, note, sizeof note));
    pm_scenario_release(&s);
    assert_ok(pm_scenario_load("llama70b", &(pm_load_opts){PM_TEST_DATA_DIR, NULL, 0}, &s, &err),
              &err);
    assert_false(pm_scenario_platform_mismatch(&s, note, sizeof note));
    /* A cluster that names no platform is never flagged. */
    s.cluster.platform[0] = '\0';
    snprintf(s.accel.platform, sizeof s.accel.platform, "other");
    assert_false(pm_scenario_platform_mismatch(&s, note, sizeof note));
    pm_scenario_release(&s);
    assert_false(pm_scenario_platform_mismatch(NULL, note, sizeof note));
    /* A platform that is not a string is refused at its key. */
    const char *bad[] = {"accelerator.platform=5"};
    pm_load_opts o3 = {PM_TEST_DATA_DIR, bad, 1};
    assert_int_equal(pm_scenario_load("llama70b", &o3, &s, &err), PM_ERR_TYPE);
    assert_string_equal(err.path, "$.accelerator.platform");
}

static void test_set_override_accepts_count_multipliers(void **state)
{
    (void)state;
    /* A token count with a multiplier: "16k" = 16 x 1024 = 16384, as "16Ki" (a token count's
     * k is 1024, pm_token_count_parse); a batch's k is 1000. */
    const char *ov[] = {"workload.seq_len=16k"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
    pm_scenario s;
    pm_error err;
    assert_ok(pm_scenario_load("llama70b", &opts, &s, &err), &err);
    int64_t seq_len = s.workload.seq_len;
    pm_scenario_release(&s);
    assert_int_equal(seq_len, 16384);
    const char *ov3[] = {"workload.batch=2k"};
    pm_load_opts opts3 = {PM_TEST_DATA_DIR, ov3, 1};
    assert_ok(pm_scenario_load("llama70b", &opts3, &s, &err), &err);
    const int batch = s.workload.batch;
    pm_scenario_release(&s);
    assert_int_equal(batch, 2000);
    const char *ov2[] = {"workload.seq_len=16Ki"};
    pm_load_opts opts2 = {PM_TEST_DATA_DIR, ov2, 1};
    assert_ok(pm_scenario_load("llama70b", &opts2, &s, &err), &err);
    seq_len = s.workload.seq_len;
    pm_scenario_release(&s);
    assert_int_equal(seq_len, 16384);
}

static void test_set_override_with_invalid_value_names_the_override(void **state)
{
    (void)state;
    const char *ov[] = {"workload.batch=0"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
    pm_scenario s;
    pm_error err;
    assert_fails(pm_scenario_load("llama70b", &opts, &s, &err), &err, PM_ERR_RANGE,
                 "override workload.batch=0", NULL, "must be in [1, ");
    assert_non_null(strstr(err.path, "batch"));
    const char *ov2[] = {"workload.batch=4.5"};
    pm_load_opts opts2 = {PM_TEST_DATA_DIR, ov2, 1};
    assert_fails(pm_scenario_load("llama70b", &opts2, &s, &err), &err, PM_ERR_RANGE,
                 "override workload.batch=4.5", NULL, "expected an integer");
    /* An override that breaks consistency is reported at the scenario path. */
    const char *ov3[] = {"cluster.devices=128"};
    pm_load_opts opts3 = {PM_TEST_DATA_DIR, ov3, 1};
    assert_fails(pm_scenario_load("llama70b", &opts3, &s, &err), &err, PM_ERR_INCONSISTENT, NULL,
                 "$.cluster.devices", "128 devices exceed");
    /* An unknown key in an override gets a suggestion too. */
    const char *ov4[] = {"workload.btach=8"};
    pm_load_opts opts4 = {PM_TEST_DATA_DIR, ov4, 1};
    assert_fails(pm_scenario_load("llama70b", &opts4, &s, &err), &err, PM_ERR_UNKNOWN_KEY,
                 "override workload.btach=8", NULL, "did you mean \"batch\"?");
}

/* The library's errors speak of keys, never of the tool's options (issue 48: "--model FILE",
 * "--set KEY=VALUE" reached C and Python users, who have neither): a file of another kind
 * names the key it goes under, an override's origin (an error's file, a resolved input's) is
 * "override KEY=VALUE". */
static void test_messages_name_keys_not_options(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    assert_fails(pm_scenario_load(PM_TEST_DATA_DIR "/models/llama3-8b.json", &g_opts, &s, &err),
                 &err, PM_ERR_VALUE, NULL, "$.kind",
                 "expected a scenario file here (got a \"model\" file): give it as the model "
                 "(the override model=FILE)");
    const char *ov[] = {"accelerator=" PM_TEST_DATA_DIR "/scenarios/llama70b.json"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
    assert_fails(pm_scenario_load("llama70b", &opts, &s, &err), &err, PM_ERR_VALUE, NULL,
                 "$.kind", "give it as the scenario (the scenario to load, not an override)");
    assert_null(strstr(err.message, "--"));
    const char *ov2[] = {"workload.batch=8"};
    pm_load_opts opts2 = {PM_TEST_DATA_DIR, ov2, 1};
    assert_ok(pm_scenario_load("llama70b", &opts2, &s, &err), &err);
    bool found = false;
    for (size_t i = 0; i < pm_scenario_param_count(&s); i++) {
        const pm_param_info *p = pm_scenario_param(&s, i);
        if (strcmp(p->path, "$.workload.batch") == 0) {
            assert_string_equal(p->file, "override workload.batch=8");
            found = true;
        }
    }
    assert_true(found);
    pm_scenario_release(&s);
}

static void test_set_override_without_equals_is_rejected(void **state)
{
    (void)state;
    const char *ov[] = {"workload.batch"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
    pm_scenario s;
    pm_error err;
    assert_fails(pm_scenario_load("llama70b", &opts, &s, &err), &err, PM_ERR_INVALID_ARG,
                 "override", NULL, "expected key.path=value");
}

static void test_set_override_applies_to_component_loads(void **state)
{
    (void)state;
    const char *ov[] = {"batch=2"};
    pm_load_opts opts = {PM_TEST_DATA_DIR, ov, 1};
    pm_workload w;
    pm_error err;
    assert_ok(pm_workload_load("paper-default", &opts, &w, &err), &err);
    assert_int_equal(w.batch, 2);
    const char *bad[] = {"prefill_frac=1"};
    pm_load_opts opts2 = {PM_TEST_DATA_DIR, bad, 1};
    assert_fails(pm_workload_load("paper-default", &opts2, &w, &err), &err, PM_ERR_RANGE,
                 "override prefill_frac=1", "$.prefill_frac", "must be in (0, 1)");
}

/* ---------------------------------------------------------------- HuggingFace configs */

static void check_llama3_8b(const pm_model *m)
{
    assert_int_equal(m->layers, 32);
    assert_int_equal(m->hidden, 4096);
    assert_int_equal(m->heads, 32);
    assert_int_equal(m->kv_heads, 8);
    assert_int_equal(m->head_dim, 128);
    assert_int_equal(m->intermediate, 14336);
    assert_int_equal(m->vocab, 128256);
    assert_true(m->gated_mlp); /* hidden_act silu */
    assert_false(m->tied_embeddings);
}

static void test_hf_llama3_config_loads_as_is(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    assert_ok(pm_model_load(HF_DIR "/llama3-8b-config.json", &g_opts, &m, &err), &err);
    check_llama3_8b(&m);
    /* Llama 3.1: rope_scaling is an object, eos_token_id a list, head_dim explicit. */
    assert_ok(pm_model_load(HF_DIR "/llama3.1-8b-config.json", &g_opts, &m, &err), &err);
    check_llama3_8b(&m);
    assert_ok(pm_file_validate(HF_DIR "/llama3.1-8b-config.json", &g_opts, NULL, &err), &err);
}

static void test_hf_config_is_still_checked_for_duplicates_and_ranges(void **state)
{
    (void)state;
    char path[600], *base = slurp(HF_DIR "/llama3-8b-config.json");
    pm_error err;
    pm_model m;
    char *text = subst(base, "\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5");
    write_tmp("hf-kv.json", text, path, sizeof path);
    free(text);
    assert_fails(pm_model_load(path, &g_opts, &m, &err), &err, PM_ERR_INCONSISTENT, path,
                 "$.num_key_value_heads", "must divide");
    text = subst(base, "\"vocab_size\": 128256", "\"vocab_size\": 128256,\n  \"vocab_size\": 1");
    write_tmp("hf-dup.json", text, path, sizeof path);
    free(text);
    assert_fails(pm_model_load(path, &g_opts, &m, &err), &err, PM_ERR_DUPLICATE_KEY, path,
                 "$.vocab_size", "duplicate key");
    free(base);
}

static void test_hf_gpt2_config_loads_as_is(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    assert_ok(pm_model_load(HF_DIR "/gpt2-config.json", &g_opts, &m, &err), &err);
    assert_int_equal(m.layers, 12);      /* n_layer */
    assert_int_equal(m.hidden, 768);     /* n_embd */
    assert_int_equal(m.heads, 12);       /* n_head */
    assert_int_equal(m.kv_heads, 12);    /* no GQA */
    assert_int_equal(m.head_dim, 64);    /* 768 / 12 */
    assert_int_equal(m.intermediate, 3072); /* n_inner null: 4 x 768 */
    assert_int_equal(m.vocab, 50257);
    assert_false(m.gated_mlp); /* model_type gpt2: up and down only */
    pm_file_kind k = PM_KIND_COUNT;
    assert_ok(pm_file_validate(HF_DIR "/gpt2-config.json", &g_opts, &k, &err), &err);
    assert_int_equal(k, PM_KIND_MODEL);
}

static void test_hf_config_without_tie_key_takes_the_familys_default(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    /* Qwen2Config's tie_word_embeddings defaults to False (transformers' dataclass configs;
     * only the old PretrainedConfig defaulted to True): Qwen2-0.5B's config with the key
     * removed has an LM head of its own. */
    assert_ok(pm_model_load(HF_DIR "/qwen2-0.5b-without-tie-key-config.json", &g_opts, &m, &err),
              &err);
    assert_int_equal(m.layers, 24);
    assert_int_equal(m.hidden, 896);
    assert_int_equal(m.heads, 14);
    assert_int_equal(m.kv_heads, 2);
    assert_int_equal(m.head_dim, 64);
    assert_false(m.tied_embeddings);
    /* One minimal config per family: the defaults of its configuration class. */
    static const struct {
        const char *family;
        bool tied;
    } fams[] = {{"llama", false}, {"mistral", false}, {"qwen3", false}, {"gemma", true},
                {"gemma2", true},  {"gpt2", true},     {"opt", true},    {"bloom", true},
                {"falcon", true},  {"gptj", false},    {"gpt_bigcode", true}, {"starcoder2", true},
                {"cohere", true},  {"phi", false},     {"stablelm", false}};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        char text[512], path[512];
        snprintf(text, sizeof text,
                 "{\"model_type\": \"%s\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
                 "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": "
                 "100%s}",
                 fams[i].family, own_head_dim(fams[i].family) ? ", \"head_dim\": 16" : "");
        write_tmp("family-tie.json", text, path, sizeof path);
        assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
        if (m.tied_embeddings != fams[i].tied)
            fail_msg("model_type %s: tied %d, expected %d", fams[i].family, m.tied_embeddings,
                     fams[i].tied);
    }
    /* A family of remote code whose default was not checked needs the key. */
    char path[512];
    write_tmp("internlm2-no-tie.json",
              "{\"model_type\": \"internlm2\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
              "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100}",
              path, sizeof path);
    assert_int_equal(pm_model_load(path, &g_opts, &m, &err), PM_ERR_MISSING);
    assert_string_equal(err.path, "$.tie_word_embeddings");
}

/* The window a family's configuration class builds when the config leaves its keys out, and
 * which layers it covers: in KV positions held per layer at an 8192-token context. */
static void test_hf_window_defaults_of_the_family(void **state)
{
    (void)state;
    static const struct {
        const char *family, *extra;
        int window, local; /* of 12 layers */
    } cases[] = {
        /* MistralConfig: sliding_window 4096 on every layer. */
        {"mistral", "", 4096, 12},
        /* null is no window. */
        {"mistral", ", \"sliding_window\": null", 0, 0},
        /* Gemma2Config: 4096, even layers local. */
        {"gemma2", "", 4096, 6},
        /* Gemma3TextConfig: 4096, every 6th layer global (layers 5 and 11). */
        {"gemma3_text", "", 4096, 10},
        /* Cohere2Config: 4096, every 4th layer global (3, 7, 11). */
        {"cohere2", "", 4096, 9},
        {"cohere2", ", \"sliding_window\": 512, \"sliding_window_pattern\": 3", 512, 8},
        /* GptOssConfig: 128, even layers local. */
        {"gpt_oss", ", \"num_local_experts\": 4, \"num_experts_per_tok\": 2", 128, 6},
        /* Qwen2Config: 4096, off unless use_sliding_window; then the layers from
         * max_window_layers (28 by default: none of 12) on. */
        {"qwen2", "", 0, 0},
        {"qwen2", ", \"use_sliding_window\": true", 0, 0},
        {"qwen2", ", \"use_sliding_window\": true, \"max_window_layers\": 0", 4096, 12},
        /* Phi3Config, MixtralConfig, Starcoder2Config: None. */
        {"phi3", "", 0, 0},
        {"starcoder2", "", 0, 0},
        {"llama", "", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[768], path[512];
        snprintf(text, sizeof text,
                 "{\"model_type\": \"%s\", \"num_hidden_layers\": 12, \"hidden_size\": 64, "
                 "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": "
                 "100%s%s}",
                 cases[i].family, own_head_dim(cases[i].family) ? ", \"head_dim\": 16" : "",
                 cases[i].extra);
        write_tmp("family-window.json", text, path, sizeof path);
        pm_model m;
        pm_error err;
        assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
        const int local = pm_model_local_layers(&m);
        if (m.sliding_window != cases[i].window || local != cases[i].local)
            fail_msg("case %zu (%s%s): window %d on %d layers, expected %d on %d", i,
                     cases[i].family, cases[i].extra, m.sliding_window, local, cases[i].window,
                     cases[i].local);
    }
    /* Qwen2-MoE with a window: the layers it covers differ between transformers versions. */
    char path[512];
    write_tmp("qwen2moe-window.json",
              "{\"model_type\": \"qwen2_moe\", \"num_hidden_layers\": 12, \"hidden_size\": 64, "
              "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
              "\"num_experts\": 4, \"num_experts_per_tok\": 2, \"use_sliding_window\": true}",
              path, sizeof path);
    pm_model m;
    pm_error err;
    assert_int_equal(pm_model_load(path, &g_opts, &m, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.use_sliding_window");
}

/* Biases the family's modelling code builds whatever its keys say, a null head_dim (derived,
 * as transformers derives it), and Gemma-3's vocabulary default. */
static void test_hf_family_biases_head_dim_and_vocab(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    char path[512];
    /* gpt-oss: attention biases by default, and its experts' always. */
    write_tmp("gptoss-bias.json",
              "{\"model_type\": \"gpt_oss\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
              "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
              "\"num_local_experts\": 4, \"num_experts_per_tok\": 2, \"attention_bias\": false, "
              "\"head_dim\": 16}",
              path, sizeof path);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_false(m.qkv_bias);
    assert_false(m.o_bias);
    assert_true(m.mlp_bias);
    /* GLM-4.5: attention_bias is Q's, K's and V's; o_proj has none. */
    write_tmp("glm-bias.json",
              "{\"model_type\": \"glm4_moe\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
              "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
              "\"n_routed_experts\": 4, \"num_experts_per_tok\": 2, \"attention_bias\": true, "
              "\"moe_intermediate_size\": 32, \"n_shared_experts\": 1, \"head_dim\": 16}",
              path, sizeof path);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_true(m.qkv_bias);
    assert_false(m.o_bias);
    assert_false(m.mlp_bias);
    /* "head_dim": null is hidden / heads in a HuggingFace file, an error in a native one. */
    write_tmp("hd-null.json",
              "{\"model_type\": \"mistral\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
              "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
              "\"head_dim\": null}",
              path, sizeof path);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.head_dim, 16);
    write_tmp("hd-null-native.json",
              "{\"kind\": \"model\", \"name\": \"t\", \"source\": \"test\", "
              "\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
              "\"intermediate_size\": 128, \"vocab_size\": 100, \"head_dim\": null}",
              path, sizeof path);
    assert_int_equal(pm_model_load(path, &g_opts, &m, &err), PM_ERR_TYPE);
    assert_string_equal(err.path, "$.head_dim");
    /* Gemma-3's text_config may leave out its vocabulary (262208); Gemma-2's may not. */
    write_tmp("gemma3-novocab.json",
              "{\"model_type\": \"gemma3\", \"text_config\": {\"model_type\": \"gemma3_text\", "
              "\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
              "\"intermediate_size\": 128, \"head_dim\": 16}}",
              path, sizeof path);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.vocab, 262208);
    assert_true(m.tied_embeddings);
    write_tmp("gemma2-novocab.json",
              "{\"model_type\": \"gemma2\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
              "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"head_dim\": 16}",
              path, sizeof path);
    assert_int_equal(pm_model_load(path, &g_opts, &m, &err), PM_ERR_MISSING);
    assert_string_equal(err.path, "$.vocab_size");
    /* Issue 42: Gemma-2 without head_dim, or with null, was hidden / heads (Gemma-2-9B's
     * 3584 / 16 = 224 where Gemma2Config's default is 256 and a null breaks the model). */
    const char *hds[] = {"", ", \"head_dim\": null"};
    for (int i = 0; i < 2; i++) {
        char text[400];
        snprintf(text, sizeof text,
                 "{\"model_type\": \"gemma2\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
                 "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": "
                 "100%s}",
                 hds[i]);
        write_tmp("gemma2-nohd.json", text, path, sizeof path);
        assert_int_equal(pm_model_load(path, &g_opts, &m, &err), PM_ERR_MISSING);
        assert_string_equal(err.path, "$.head_dim");
        assert_non_null(strstr(err.message, "head_dim is required"));
    }
}

/* The resolved input at path of s with its origin, or NULL. */
static const pm_param_info *param_at(const pm_scenario *s, const char *path)
{
    for (size_t i = 0; i < pm_scenario_param_count(s); i++)
        if (strcmp(pm_scenario_param(s, i)->path, path) == 0)
            return pm_scenario_param(s, i);
    return NULL;
}

static void assert_origin(const pm_scenario *s, const char *path, const char *origin)
{
    const pm_param_info *p = param_at(s, path);
    if (!p) {
        print_error("%s is not among the resolved inputs\n", path);
        fail();
    }
    if (strcmp(p->origin, origin) != 0) {
        print_error("%s: origin \"%s\", expected \"%s\"\n", path, p->origin, origin);
        fail();
    }
}

/* The optional cluster keys a file leaves out are resolved inputs too, at the value that stands
 * in for them: hccs-full-mesh gives link_latency_us 14 and fused_latency_us 11 but no
 * expert_parallel or a2a keys; nvlink4-nvswitch gives link_latency_us 1.5 and
 * a2a_efficiency_frac 0.765 but no fused_latency_us or a2a_latency_us. */
static void test_cluster_resolve_marks_defaulted_optional_keys(void **state)
{
    (void)state;
    pm_scenario s = pm_test_load("llama70b", NULL, 0);
    assert_origin(&s, "$.cluster.fused_latency_us", "given");
    assert_origin(&s, "$.cluster.expert_parallel", "defaulted");
    assert_origin(&s, "$.cluster.a2a_latency_us", "defaulted");
    assert_origin(&s, "$.cluster.a2a_efficiency_frac", "defaulted");
    assert_rel(param_at(&s, "$.cluster.expert_parallel")->value_si, 1.0, 0.0);
    assert_rel(param_at(&s, "$.cluster.a2a_latency_us")->value_si, 14e-6, 1e-12); /* = link */
    assert_rel(param_at(&s, "$.cluster.a2a_efficiency_frac")->value_si, 1.0, 0.0);
    assert_rel(s.cluster.a2a_latency_s, 0.0, 0.0); /* the struct keeps its 0 = fallback */
    assert_rel(s.cluster.a2a_efficiency_frac, 0.0, 0.0);
    pm_scenario_release(&s);
    const char *ovs[] = {"cluster=nvlink4-nvswitch"};
    s = pm_test_load("llama70b", ovs, 1);
    assert_origin(&s, "$.cluster.fused_latency_us", "defaulted");
    assert_rel(param_at(&s, "$.cluster.fused_latency_us")->value_si, 1.5e-6, 1e-12);
    assert_origin(&s, "$.cluster.a2a_latency_us", "defaulted");
    assert_rel(param_at(&s, "$.cluster.a2a_latency_us")->value_si, 1.5e-6, 1e-12);
    assert_origin(&s, "$.cluster.a2a_efficiency_frac", "given");
    assert_rel(param_at(&s, "$.cluster.a2a_efficiency_frac")->value_si, 0.765, 1e-12);
    /* nvlink4-nvswitch gives no allreduce efficiency: its bytes move at the whole link. */
    assert_origin(&s, "$.cluster.allreduce_efficiency_frac", "defaulted");
    assert_rel(param_at(&s, "$.cluster.allreduce_efficiency_frac")->value_si, 1.0, 0.0);
    assert_rel(s.cluster.allreduce_efficiency_frac, 0.0, 0.0);
    pm_scenario_release(&s);
    /* nvlink3-nvswitch gives NCCL's measured 231.58 of its 300 GB/s. */
    const char *a100[] = {"cluster=nvlink3-nvswitch"};
    s = pm_test_load("llama70b", a100, 1);
    assert_origin(&s, "$.cluster.allreduce_efficiency_frac", "given");
    assert_rel(s.cluster.allreduce_efficiency_frac, 0.772, 1e-15);
    pm_scenario_release(&s);
}

/* A scenario with a HuggingFace file as its model. */
static pm_scenario load_with_model(const char *model_path)
{
    char ov[700];
    snprintf(ov, sizeof ov, "model=%s", model_path);
    const char *ovs[] = {ov};
    return pm_test_load("llama8b", ovs, 1);
}

static void test_hf_resolve_marks_given_defaulted_derived_and_ignored(void **state)
{
    (void)state;
    pm_scenario s = load_with_model(HF_DIR "/gpt2-config.json");
    assert_origin(&s, "$.model.n_embd", "given");
    assert_origin(&s, "$.model.num_key_value_heads", "defaulted"); /* multi-head */
    assert_origin(&s, "$.model.head_dim", "derived");              /* 768 / 12 */
    assert_origin(&s, "$.model.intermediate_size", "defaulted");   /* n_inner null */
    assert_origin(&s, "$.model.mlp_gated", "derived");             /* model_type gpt2 */
    assert_origin(&s, "$.model.tie_word_embeddings", "defaulted");
    assert_origin(&s, "$.model.layer_norm_epsilon", "ignored");
    assert_origin(&s, "$.model.summary_type", "ignored");
    assert_origin(&s, "$.model.bos_token_id", "ignored");
    assert_rel(param_at(&s, "$.model.head_dim")->value_si, 64.0, 0.0);
    pm_scenario_release(&s);
    s = load_with_model(HF_DIR "/llama3.1-8b-config.json");
    assert_origin(&s, "$.model.head_dim", "given");
    assert_origin(&s, "$.model.rope_scaling", "ignored");
    assert_origin(&s, "$.model.torch_dtype", "ignored");
    pm_scenario_release(&s);
}

/* The MoE fields of a model, for the comparisons below. */
static void check_moe(const pm_model *m, int experts, int k, int width, int shared,
                      int shared_width, int first, int period, int phase, int moe_layers)
{
    assert_int_equal(m->experts, experts);
    assert_int_equal(m->experts_per_token, k);
    assert_int_equal(m->expert_intermediate, width);
    assert_int_equal(m->shared_experts, shared);
    assert_int_equal(m->shared_intermediate, shared_width);
    assert_int_equal(m->moe_first_layer, first);
    assert_int_equal(m->moe_period, period);
    assert_int_equal(m->moe_phase, phase);
    assert_int_equal(pm_model_moe_layers(m), moe_layers);
}

static void test_hf_moe_configs_are_read_like_the_bundled_models(void **state)
{
    (void)state;
    /* The published configs (shared/reference/moe-attention-energy-cost.md section 1.6) and
     * the bundled native files written from them must give the same model. */
    static const struct {
        const char *hf, *bundled;
        int experts, k, width, shared, shared_width, first, period, phase, moe_layers, dense_w;
    } cases[] = {
        /* Mixtral: every layer MoE, each expert intermediate_size wide. */
        {"mixtral-8x7b-config.json", "mixtral-8x7b", 8, 2, 14336, 0, 0, 0, 1, 0, 32, 14336},
        /* DeepSeek-V3: 3 dense layers of 18432, then 58 MoE layers; one shared expert of
         * moe_intermediate_size. */
        {"deepseek-v3-config.json", "deepseek-v3", 256, 8, 2048, 1, 2048, 3, 1, 0, 58, 18432},
        /* Llama-4 Scout: every layer MoE (step 1: phase 0), one shared expert of
         * intermediate_size (the family's rule); the text model under text_config. */
        {"llama4-scout-config.json", "llama-4-scout", 16, 1, 8192, 1, 8192, 0, 1, 0, 48, 8192},
        /* Mixtral-8x22B: as 8x7B, 56 layers of 8 experts 16384 wide. */
        {"mixtral-8x22b-config.json", "mixtral-8x22b", 8, 2, 16384, 0, 0, 0, 1, 0, 56, 16384},
        /* DBRX: ffn_config's 16 experts of ffn_hidden_size 10752, top-4, every layer MoE. */
        {"dbrx-instruct-config.json", "dbrx-instruct", 16, 4, 10752, 0, 0, 0, 1, 0, 40, 10752},
    };
    for (size_t i = 0; i < PM_ARRAY_LEN(cases); i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", HF_DIR, cases[i].hf);
        pm_model hf, nat;
        pm_error err;
        assert_ok(pm_model_load(path, &g_opts, &hf, &err), &err);
        assert_ok(pm_model_load(cases[i].bundled, &g_opts, &nat, &err), &err);
        check_moe(&hf, cases[i].experts, cases[i].k, cases[i].width, cases[i].shared,
                  cases[i].shared_width, cases[i].first, cases[i].period, cases[i].phase,
                  cases[i].moe_layers);
        check_moe(&nat, cases[i].experts, cases[i].k, cases[i].width, cases[i].shared,
                  cases[i].shared_width, cases[i].first, cases[i].period, cases[i].phase,
                  cases[i].moe_layers);
        assert_int_equal(hf.intermediate, cases[i].dense_w);
        assert_true(hf.gated_mlp && nat.gated_mlp);
        assert_int_equal(hf.layers, nat.layers);
        assert_int_equal(hf.kv_lora_rank, nat.kv_lora_rank);
    }
    /* The bundled Llama-4 gives intermediate_size_mlp for its (absent) dense layers. */
    pm_model m;
    pm_error err;
    assert_ok(pm_model_load("llama-4-scout", &g_opts, &m, &err), &err);
    assert_int_equal(m.intermediate, 16384);
    /* Qwen1.5-MoE-A2.7B (the reference's section 1.6 values): 60 experts of 1408, top-4, one
     * shared expert of shared_expert_intermediate_size 5632, Q/K/V biases (qwen2_moe). */
    assert_ok(pm_model_load(HF_DIR "/qwen1.5-moe-a2.7b-config.json", &g_opts, &m, &err), &err);
    check_moe(&m, 60, 4, 1408, 1, 5632, 0, 1, 0, 24);
    assert_true(m.qkv_bias);
    assert_int_equal(m.sliding_window, 0); /* use_sliding_window false */
    /* Qwen's rule: MoE when (l + 1) % decoder_sparse_step == 0. */
    char *base = slurp(HF_DIR "/mixtral-8x7b-config.json");
    char path[600];
    char *text = subst(base, "\"num_local_experts\": 8",
                       "\"num_experts\": 8, \"decoder_sparse_step\": 2, \"mlp_only_layers\": []");
    write_tmp("hf-qwen-step.json", text, path, sizeof path);
    free(text);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    check_moe(&m, 8, 2, 14336, 0, 0, 0, 2, 1, 16);
    assert_false(pm_model_layer_is_moe(&m, 0));
    assert_true(pm_model_layer_is_moe(&m, 1));
    /* Dense configs write the keys as null or 0: not MoE. */
    free(base);
    base = slurp(HF_DIR "/llama3-8b-config.json");
    text = subst(base, "\"vocab_size\": 128256",
                 "\"vocab_size\": 128256, \"num_experts\": null, \"num_local_experts\": 0");
    write_tmp("hf-dense.json", text, path, sizeof path);
    free(text);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    check_llama3_8b(&m);
    assert_int_equal(m.experts, 0);
    free(base);
}

/* Issue 42: a faithful number or a refusal. Two aliases of one setting that disagree (a stray
 * "num_experts": 8 in DeepSeek-V3 was modelled with 8 experts, 7.2 GiB per device instead of
 * 81), an expert count of 0 or false in a family that builds experts (it became a dense model),
 * and a null kv_lora_rank in a latent-attention family (it became plain multi-head attention)
 * are refused at the key. */
static void test_hf_aliases_counts_and_nulls_refused(void **state)
{
    (void)state;
    static const struct {
        const char *fixture, *from, *to, *path, *msg;
        pm_status st;
    } cases[] = {
        {"deepseek-v3-config.json", "\"n_routed_experts\": 256",
         "\"n_routed_experts\": 256, \"num_experts\": 8", "$.n_routed_experts",
         "\"num_experts\" and \"n_routed_experts\" are two names of one setting and disagree "
         "(8 against 256)", PM_ERR_INCONSISTENT},
        {"mixtral-8x7b-config.json", "\"num_local_experts\": 8",
         "\"num_local_experts\": 8, \"num_experts\": 4", "$.num_local_experts",
         "disagree (4 against 8)", PM_ERR_INCONSISTENT},
        {"mixtral-8x7b-config.json", "\"num_local_experts\": 8", "\"num_local_experts\": 0",
         "$.num_local_experts",
         "model_type \"mixtral\" builds mixture-of-experts layers: the expert count must be at "
         "least 1 (got 0)", PM_ERR_VALUE},
        {"mixtral-8x7b-config.json", "\"num_local_experts\": 8", "\"num_local_experts\": false",
         "$.num_local_experts", "must be at least 1 (got false)", PM_ERR_VALUE},
        {"deepseek-v3-config.json", "\"n_routed_experts\": 256", "\"n_routed_experts\": 0",
         "$.n_routed_experts", "null stands for dense layers", PM_ERR_VALUE},
        {"deepseek-v3-config.json", "\"kv_lora_rank\": 512", "\"kv_lora_rank\": null",
         "$.kv_lora_rank", "kv_lora_rank must be a rank (got null", PM_ERR_VALUE},
        {"llama3-8b-config.json", "\"hidden_size\": 4096", "\"hidden_size\": 4096, \"n_embd\": 4000",
         "$.n_embd", "\"hidden_size\" and \"n_embd\" are two names", PM_ERR_INCONSISTENT},
        /* An absent or null MLP width was 4 x hidden_size = 16384 in every family; LlamaConfig's
         * default is 11008 (Llama-2-7B's) and None breaks the model: required. */
        {"llama3-8b-config.json", "\"intermediate_size\": 14336,", "", "$.intermediate_size",
         "model_type llama: the MLP width is required", PM_ERR_MISSING},
        {"llama3-8b-config.json", "\"intermediate_size\": 14336,", "\"intermediate_size\": null,",
         "$.intermediate_size", "the MLP width is required", PM_ERR_MISSING},
        /* Keys whose class default is one checkpoint's: q_lora_rank (absent: DeepSeek-V3's 1536;
         * it was a full-rank query), the experts' own width and the shared experts (absent:
         * intermediate_size wide, and none). */
        {"../hf-families/internlm2-7b-config.json", "\"bias\": false,", "", "$.bias",
         "model_type \"internlm2\" (remote code): \"bias\" (wqkv's and wo's) is required",
         PM_ERR_MISSING},
        {"deepseek-v3-config.json", "\"q_lora_rank\": 1536,", "", "$.q_lora_rank",
         "q_lora_rank is required (null: a full-rank query projection", PM_ERR_MISSING},
        {"deepseek-v3-config.json", "\"n_shared_experts\": 1,", "", "$.n_shared_experts",
         "model_type \"deepseek_v3\": \"n_shared_experts\" (the shared experts) is required", PM_ERR_MISSING},
        {"qwen1.5-moe-a2.7b-config.json", "\"moe_intermediate_size\": 1408,", "",
         "$.moe_intermediate_size", "(each expert's width) is required", PM_ERR_MISSING},
        {"qwen1.5-moe-a2.7b-config.json", "\"shared_expert_intermediate_size\": 5632,", "",
         "$.shared_expert_intermediate_size", "(the shared expert's width) is required",
         PM_ERR_MISSING},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[600], name[64];
        snprintf(name, sizeof name, "hf-issue42-%zu.json", i);
        hf_variant(cases[i].fixture, cases[i].from, cases[i].to, name, path, sizeof path);
        pm_model m;
        pm_error err;
        check_fails(pm_model_load(path, &g_opts, &m, &err), &err, cases[i].st, NULL,
                    cases[i].path, cases[i].msg, __FILE__, __LINE__);
    }
    /* Falcon without multi_query: FalconConfig's default is true, one KV head (it was one per
     * query head, 71 for Falcon-7B). */
    {
        char fpath[600];
        hf_variant("falcon-7b-config.json", "\"multi_query\": true,", "",
                   "hf-issue42-falcon.json", fpath, sizeof fpath);
        pm_model fm;
        pm_error ferr;
        assert_ok(pm_model_load(fpath, &g_opts, &fm, &ferr), &ferr);
        assert_int_equal(fm.kv_heads, 1);
        /* FalconConfig derives an absent ffn_hidden_size: 4 x 4544 = 18176. */
        assert_int_equal(fm.intermediate, 4 * 4544);
    }
    /* A text_config in a family that is not a multimodal wrapper is not the model. */
    {
        char lpath[600];
        hf_variant("llama3-8b-config.json", "\"hidden_size\": 4096",
                   "\"hidden_size\": 4096, \"text_config\": {\"model_type\": \"llama\", "
                   "\"num_hidden_layers\": 2}",
                   "hf-issue42-text.json", lpath, sizeof lpath);
        pm_model lm;
        pm_error lerr;
        check_fails(pm_model_load(lpath, &g_opts, &lm, &lerr), &lerr, PM_ERR_UNSUPPORTED, NULL,
                    "$.text_config", "model_type \"llama\" is not a multimodal wrapper",
                    __FILE__, __LINE__);
    }
    /* Agreeing aliases, and a dense family's 0, still load. */
    char path[600];
    hf_variant("mixtral-8x7b-config.json", "\"num_local_experts\": 8",
               "\"num_local_experts\": 8, \"num_experts\": 8", "hf-issue42-agree.json", path,
               sizeof path);
    pm_model m;
    pm_error err;
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.experts, 8);
}

static void test_hf_moe_keys_not_modelled_are_refused_naming_the_key(void **state)
{
    (void)state;
    static const struct {
        const char *to, *path, *msg;
        pm_status st;
    } cases[] = {
        /* Dense layers listed one by one: not a pattern the model has. */
        {"\"num_local_experts\": 8, \"mlp_only_layers\": [0, 5]", "$.mlp_only_layers",
         "dense layers listed one by one are not modelled", PM_ERR_UNSUPPORTED},
        /* A list of MoE layers other than the step's. */
        {"\"num_local_experts\": 8, \"moe_layers\": [0, 2]", "$.moe_layers",
         "a list of MoE layers other than every 1-th is not modelled", PM_ERR_UNSUPPORTED},
        /* Two keys setting the period. */
        {"\"num_local_experts\": 8, \"moe_layer_freq\": 2, \"decoder_sparse_step\": 2",
         "$.decoder_sparse_step", "both set the MoE layers", PM_ERR_INCONSISTENT},
        /* Experts without top-k. */
        {"\"num_local_experts\": 8, \"num_experts_per_tk\": 2", "$.num_experts_per_tok",
         "missing required key", PM_ERR_MISSING},
        /* Top-k above the experts. */
        {"\"num_local_experts\": 8, \"num_experts_per_tok\": 9", "$.num_experts_per_tok",
         "", PM_ERR_RANGE},
        /* Another family's layout. */
        {"\"num_local_experts\": 8, \"moe_num_experts\": 8", "$.moe_num_experts",
         "moe_num_experts", PM_ERR_UNSUPPORTED},
    };
    char *base = slurp(HF_DIR "/mixtral-8x7b-config.json");
    /* The fixture's top-k goes so that each case says its own. */
    char *no_k = subst(base, "\"num_experts_per_tok\": 2,", "");
    for (size_t i = 0; i < PM_ARRAY_LEN(cases); i++) {
        char path[600];
        const bool own_k = strstr(cases[i].to, "num_experts_per_t") != NULL;
        char to[256];
        snprintf(to, sizeof to, "%s%s", cases[i].to, own_k ? "" : ", \"num_experts_per_tok\": 2");
        char *text = subst(no_k, "\"num_local_experts\": 8", to);
        write_tmp("hf-moe-bad.json", text, path, sizeof path);
        free(text);
        pm_model m;
        pm_error err;
        assert_fails(pm_model_load(path, &g_opts, &m, &err), &err, cases[i].st, path,
                     cases[i].path, cases[i].msg);
    }
    free(no_k);
    free(base);
}

/* DBRX's config (the published layout, with the PretrainedConfig fields an export wrote into
 * its nested blocks): the model's keys under DBRX's names, the KV heads under attn_config, the
 * MLP and its experts under ffn_config; the same model as the bundled dbrx-instruct. */
static void test_hf_dbrx_nested_configs_are_read(void **state)
{
    (void)state;
    const char *path = HF_DIR "/dbrx-instruct-config.json";
    pm_model hf, nat;
    pm_error err;
    assert_ok(pm_model_load(path, &g_opts, &hf, &err), &err);
    assert_ok(pm_model_load("dbrx-instruct", &g_opts, &nat, &err), &err);
    const pm_model *ms[] = {&hf, &nat};
    for (size_t i = 0; i < 2; i++) {
        const pm_model *m = ms[i];
        /* d_model 6144, n_heads 48, n_layers 40, kv_n_heads 8: 6144 / 48 = 128 per head. */
        assert_int_equal(m->layers, 40);
        assert_int_equal(m->hidden, 6144);
        assert_int_equal(m->heads, 48);
        assert_int_equal(m->kv_heads, 8);
        assert_int_equal(m->head_dim, 128);
        assert_int_equal(m->vocab, 100352);
        assert_int_equal(m->max_position_embeddings, 32768);
        /* Wqkv and out_proj without bias, GLU experts (w1, v1, w2), untied LM head. */
        assert_false(m->qkv_bias || m->o_bias || m->mlp_bias);
        assert_true(m->gated_mlp);
        assert_false(m->tied_embeddings);
        assert_false(m->parallel_block);
    }
    pm_scenario s = load_with_model(path);
    assert_origin(&s, "$.model.attn_config.kv_n_heads", "given");
    assert_origin(&s, "$.model.ffn_config.moe_top_k", "given");
    assert_origin(&s, "$.model.n_layers", "given");
    /* The keys that do not change the cost, each with its reason. */
    static const struct {
        const char *path, *why;
    } ignored[] = {
        {"$.model.attn_config.clip_qkv", "a clamp"},
        {"$.model.attn_config.rope_theta", "position encoding"},
        {"$.model.ffn_config.moe_jitter_eps", "training only"},
        {"$.model.ffn_config.moe_loss_weight", "training only"},
        {"$.model.ffn_config.moe_normalize_expert_weights", "normalisation"},
        {"$.model.ffn_config.ffn_act_fn", "GLUs"},
        {"$.model.ffn_config.tie_word_embeddings", "the model's own key decides"},
        {"$.model.attn_config.top_k", "generation defaults"},
    };
    for (size_t i = 0; i < PM_ARRAY_LEN(ignored); i++) {
        assert_origin(&s, ignored[i].path, "ignored");
        assert_non_null(strstr(param_at(&s, ignored[i].path)->source, ignored[i].why));
    }
    pm_scenario_release(&s);
}

/* Bad or unmodelled nested DBRX keys are refused naming the JSON path inside the block. */
static void test_hf_dbrx_bad_nested_keys_are_refused_naming_the_path(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to, *path, *msg;
        pm_status st;
    } cases[] = {
        /* 7 KV heads do not divide 48 query heads. */
        {"\"kv_n_heads\": 8", "\"kv_n_heads\": 7", "$.attn_config.kv_n_heads",
         "must divide num_attention_heads", PM_ERR_INCONSISTENT},
        /* No KV heads: transformers would default to 1; refused, not guessed. */
        {"\"kv_n_heads\": 8,", "", "$.attn_config.kv_n_heads", "missing required key",
         PM_ERR_MISSING},
        /* Top-4 of 16, not top-17. */
        {"\"moe_top_k\": 4", "\"moe_top_k\": 17", "$.ffn_config.moe_top_k", "",
         PM_ERR_RANGE},
        {"\"moe_num_experts\": 16,", "", "$.ffn_config.moe_num_experts",
         "missing required key", PM_ERR_MISSING},
        {"\"ffn_hidden_size\": 10752", "\"ffn_hidden_size\": 0",
         "$.ffn_config.ffn_hidden_size", "", PM_ERR_RANGE},
        /* A misspelt cost key of the block. */
        {"\"moe_top_k\": 4", "\"moe_top_k\": 4, \"moe_topk\": 4", "$.ffn_config.moe_topk",
         "did you mean \"moe_top_k\"", PM_ERR_UNKNOWN_KEY},
        /* Keys that change the cost in a way not modelled. */
        {"\"kv_n_heads\": 8", "\"kv_n_heads\": 8, \"sliding_window_size\": 4096",
         "$.attn_config.sliding_window_size", "not modelled", PM_ERR_UNSUPPORTED},
        {"\"moe_top_k\": 4", "\"moe_top_k\": 4, \"ffn_type\": \"mptmlp\"",
         "$.ffn_config.ffn_type", "dropless GLU experts", PM_ERR_UNSUPPORTED},
        {"\"moe_top_k\": 4", "\"moe_top_k\": 4, \"mlp_type\": \"mlp\"",
         "$.ffn_config.mlp_type", "dropless GLU experts", PM_ERR_UNSUPPORTED},
        /* The block is not an object. */
        {"\"attn_config\": {", "\"attn_config\": 1, \"attn_config_v0\": {", "$.attn_config",
         "expected an object", PM_ERR_TYPE},
        /* Another family's nested blocks are not DBRX's (MPT's family is refused first). */
        {"\"model_type\": \"dbrx\"", "\"model_type\": \"mixtral\"", "$.attn_config",
         "read only for model_type \"dbrx\"", PM_ERR_UNSUPPORTED},
        {"\"model_type\": \"dbrx\"", "\"model_type\": \"mpt\"", "$.model_type",
         "not one this model represents", PM_ERR_UNSUPPORTED},
    };
    char *base = slurp(HF_DIR "/dbrx-instruct-config.json");
    for (size_t i = 0; i < PM_ARRAY_LEN(cases); i++) {
        char path[600];
        char *text = subst(base, cases[i].from, cases[i].to);
        write_tmp("hf-dbrx-bad.json", text, path, sizeof path);
        free(text);
        pm_model m;
        pm_error err;
        assert_fails(pm_model_load(path, &g_opts, &m, &err), &err, cases[i].st, path,
                     cases[i].path, cases[i].msg);
    }
    /* The accepted spellings of those keys load. */
    char path[600];
    char *text = subst(base, "\"moe_top_k\": 4",
                       "\"moe_top_k\": 4, \"ffn_type\": \"mb_dmoe\", \"mlp_type\": \"glu\"");
    write_tmp("hf-dbrx-ok.json", text, path, sizeof path);
    free(text);
    pm_model m;
    pm_error err;
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.experts, 16);
    free(base);
}

static void test_hf_misspelt_cost_key_suggests_the_key(void **state)
{
    (void)state;
    char *base = slurp(HF_DIR "/llama3-8b-config.json");
    char path[600];
    char *text = subst(base, "\"intermediate_size\"", "\"intermediate_sise\"");
    write_tmp("hf-typo.json", text, path, sizeof path);
    free(text);
    pm_model m;
    pm_error err;
    assert_fails(pm_model_load(path, &g_opts, &m, &err), &err, PM_ERR_UNKNOWN_KEY, path,
                 "$.intermediate_sise", "did you mean \"intermediate_size\"");
    /* A key far from every known one is accepted, listed as not recognised. */
    text = subst(base, "\"use_cache\": true", "\"use_cache\": true, \"zzz_flavour\": 3");
    write_tmp("hf-unknown.json", text, path, sizeof path);
    free(text);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    pm_scenario s = load_with_model(path);
    assert_origin(&s, "$.model.zzz_flavour", "ignored");
    assert_non_null(strstr(param_at(&s, "$.model.zzz_flavour")->source, "not recognised"));
    pm_scenario_release(&s);
    free(base);
}

static void test_hf_text_config_is_unwrapped(void **state)
{
    (void)state;
    /* Llama-4's layout (Scout's chunked keys left out; llama4_text always builds experts). */
    static const char text[] =
        "{\"architectures\": [\"Llama4ForConditionalGeneration\"], \"model_type\": \"llama4\",\n"
        " \"text_config\": {\"head_dim\": 128, \"hidden_act\": \"silu\", \"hidden_size\": 5120,\n"
        "  \"intermediate_size\": 8192, \"model_type\": \"llama4_text\",\n"
        "  \"num_local_experts\": 16, \"num_experts_per_tok\": 1,\n"
        "  \"num_attention_heads\": 40, \"num_hidden_layers\": 48, \"num_key_value_heads\": 8,\n"
        "  \"rope_theta\": 500000.0, \"vocab_size\": 202048, \"tie_word_embeddings\": false},\n"
        " \"vision_config\": {\"hidden_size\": 1408, \"num_hidden_layers\": 34},\n"
        " \"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.51.0\"}\n";
    char path[600];
    write_tmp("hf-wrapped.json", text, path, sizeof path);
    pm_model m;
    pm_error err;
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.layers, 48);
    assert_int_equal(m.hidden, 5120);
    assert_int_equal(m.heads, 40);
    assert_int_equal(m.kv_heads, 8);
    assert_int_equal(m.head_dim, 128);
    assert_int_equal(m.intermediate, 8192);
    assert_int_equal(m.vocab, 202048);
    assert_true(m.gated_mlp);
    assert_false(m.tied_embeddings);
    assert_ok(pm_file_validate(path, &g_opts, NULL, &err), &err);
    pm_scenario s = load_with_model(path);
    assert_origin(&s, "$.model.text_config.hidden_size", "given");
    assert_origin(&s, "$.model.vision_config", "ignored");
    assert_non_null(strstr(param_at(&s, "$.model.vision_config")->source,
                           "the vision tower is not"));
    pm_scenario_release(&s);
}

/* A HuggingFace model from the Llama 3 config as model_type family, with extra keys after
 * vocab_size (a feature key is read only in a family that builds the feature; llama4_text,
 * which always builds experts, gets Scout's 16, top 1). */
static pm_status load_family_with(const char *family, const char *extra, pm_model *m,
                                  pm_error *err, char *path, size_t n)
{
    char *base = slurp(HF_DIR "/llama3-8b-config.json");
    char to[2048], mt[64];
    const bool head_dim = own_head_dim(family) && !strstr(extra, "head_dim");
    snprintf(to, sizeof to, "\"vocab_size\": 128256,\n  %s%s%s",
             strcmp(family, "llama4_text") == 0
                 ? "\"num_local_experts\": 16, \"num_experts_per_tok\": 1, "
                 : "",
             head_dim ? "\"head_dim\": 128, " : "", extra);
    snprintf(mt, sizeof mt, "\"model_type\": \"%s\"", family);
    char *typed = subst(base, "\"model_type\": \"llama\"", mt);
    char *text = subst(typed, "\"vocab_size\": 128256", to);
    write_tmp("hf-extra.json", text, path, n);
    free(text);
    free(typed);
    free(base);
    return pm_model_load(path, &g_opts, m, err);
}

static pm_status load_llama_with(const char *extra, pm_model *m, pm_error *err, char *path,
                                 size_t n)
{
    return load_family_with("llama", extra, m, err, path, n);
}

static void test_hf_sliding_window_of_every_family(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    char path[600];
    /* Mistral, Phi-3: every layer. */
    assert_ok(load_family_with("mistral", "\"sliding_window\": 4096", &m, &err, path, sizeof path),
              &err);
    assert_int_equal(m.sliding_window, 4096);
    assert_int_equal(pm_model_local_layers(&m), 32);
    /* Qwen2: switched off. */
    assert_ok(load_family_with("qwen2", "\"sliding_window\": 4096, \"use_sliding_window\": false",
                               &m, &err, path, sizeof path),
              &err);
    assert_int_equal(pm_model_local_layers(&m), 0);
    /* ...and on from layer 28 of 32: not a repeating pattern, refused. */
    assert_fails(load_family_with("qwen2",
                                  "\"sliding_window\": 4096, \"use_sliding_window\": true, "
                                  "\"max_window_layers\": 28",
                                 &m, &err, path, sizeof path),
                 &err, PM_ERR_UNSUPPORTED, path, "$.max_window_layers", "is not modelled");
    /* Gemma-3's pattern: layers 5, 11, 17, 23, 29 global, 27 of 32 local. */
    assert_ok(load_family_with("gemma3_text", "\"sliding_window\": 1024, \"sliding_window_pattern\": 6",
                               &m, &err, path, sizeof path),
              &err);
    assert_int_equal(m.window_period, 6);
    assert_int_equal(pm_model_local_layers(&m), 27);
    assert_true(pm_model_layer_is_local(&m, 4));
    assert_false(pm_model_layer_is_local(&m, 5));
    /* layer_types: the smallest period is found (3: local, local, global). */
    char lt[1024] = "\"sliding_window\": 512, \"layer_types\": [";
    for (int l = 0; l < 32; l++)
        strcat(lt, l % 3 == 2 ? "\"full_attention\"," : "\"sliding_attention\",");
    lt[strlen(lt) - 1] = ']';
    assert_ok(load_family_with("gemma3_text", lt, &m, &err, path, sizeof path), &err);
    assert_int_equal(m.window_period, 3);
    assert_int_equal(pm_model_local_layers(&m), 22); /* 10 full periods x 2 + layers 30, 31 */
    /* A list of the wrong length. */
    assert_fails(load_family_with("gemma3_text",
                                  "\"sliding_window\": 512, \"layer_types\": [\"full_attention\"]",
                                  &m, &err, path, sizeof path),
                 &err, PM_ERR_INCONSISTENT, path, "$.layer_types", "one type per layer");
    /* Gemma-2's family default: even layers local. */
    char *g2 = slurp(HF_DIR "/llama3-8b-config.json");
    char *text = subst(g2, "\"model_type\": \"llama\"",
                       "\"model_type\": \"gemma2\", \"sliding_window\": 4096, \"head_dim\": 128");
    write_tmp("hf-gemma2.json", text, path, sizeof path);
    free(text);
    free(g2);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.window_period, 2);
    assert_true(pm_model_layer_is_local(&m, 0));
    assert_false(pm_model_layer_is_local(&m, 1));
    assert_int_equal(pm_model_local_layers(&m), 16);
    /* Llama-4's chunked attention: every layer (no_rope_layers all 1), or every 4th global
     * (no_rope_layer_interval, llama4_text's default), or as no_rope_layers says (1 chunked, 0
     * global). */
    char all[512] = "\"attention_chunk_size\": 8192, \"no_rope_layers\": [";
    for (int l = 0; l < 32; l++)
        strcat(all, "1,");
    all[strlen(all) - 1] = ']';
    assert_ok(load_family_with("llama4_text", all, &m, &err, path, sizeof path), &err);
    assert_true(m.chunked_attention);
    assert_int_equal(m.sliding_window, 8192);
    assert_int_equal(pm_model_local_layers(&m), 32);
    assert_ok(load_family_with("llama4_text",
                               "\"attention_chunk_size\": 8192, \"no_rope_layer_interval\": 4",
                               &m, &err, path, sizeof path),
              &err);
    assert_int_equal(m.window_period, 4);
    assert_false(pm_model_layer_is_local(&m, 3));
    assert_int_equal(pm_model_local_layers(&m), 24);
    char nr[512] = "\"attention_chunk_size\": 8192, \"no_rope_layers\": [";
    for (int l = 0; l < 32; l++)
        strcat(nr, l % 2 ? "0," : "1,");
    nr[strlen(nr) - 1] = ']';
    assert_ok(load_family_with("llama4_text", nr, &m, &err, path, sizeof path), &err);
    assert_int_equal(m.window_period, 2);
    assert_int_equal(pm_model_local_layers(&m), 16);
    /* Both a window and chunks: refused (Llama 4 has no sliding window). */
    assert_fails(load_family_with("llama4_text",
                                  "\"attention_chunk_size\": 8192, \"sliding_window\": 4096", &m,
                                  &err, path, sizeof path),
                 &err, PM_ERR_UNSUPPORTED, path, "$.sliding_window",
                 "model_type \"llama4_text\" has no sliding-window attention");
}

static void test_hf_gemma3_wrapper_reads_its_text_model_and_pattern(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    assert_ok(pm_model_load(HF_DIR "/gemma-3-27b-it-config.json", &g_opts, &m, &err), &err);
    assert_int_equal(m.layers, 62);
    assert_int_equal(m.hidden, 5376);
    assert_int_equal(m.head_dim, 128);
    assert_int_equal(m.sliding_window, 1024);
    assert_int_equal(m.window_period, 6); /* gemma3_text's default pattern */
    /* Global at layers 5, 11, ..., 59: 10 of 62. */
    assert_int_equal(pm_model_local_layers(&m), 52);
    assert_true(m.gated_mlp);
    assert_true(m.tied_embeddings);
}

/* A name is refused when its field cannot hold it (a cut name is another name in every output);
 * a HuggingFace file without "name" is named by its checkpoint, the last part of a path that
 * does not fit, or its file (or directory, for a config.json). */
static void test_names_that_do_not_fit_are_refused_not_cut(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    char path[600];
    /* A 75-byte local path: its last part, 40 bytes, names the model. */
    assert_ok(load_llama_with("\"_name_or_path\": "
                              "\"/home/someone/checkpoints/Meta-Llama-3-8B-Instruct-finetune-run42\"",
                              &m, &err, path, sizeof path),
              &err);
    assert_string_equal(m.name, "Meta-Llama-3-8B-Instruct-finetune-run42");
    /* A hub id that fits stays whole; an empty one gives the model_type. */
    assert_ok(load_llama_with("\"_name_or_path\": \"meta-llama/Meta-Llama-3-8B\"", &m, &err, path,
                              sizeof path),
              &err);
    assert_string_equal(m.name, "meta-llama/Meta-Llama-3-8B");
    /* An empty one gives the file's own name (issue 48: "llama", the family, named no
     * checkpoint). */
    assert_ok(load_llama_with("\"_name_or_path\": \"\"", &m, &err, path, sizeof path), &err);
    assert_string_equal(m.name, "hf-extra");
    /* A last part of 64 bytes does not fit 63: refused at the key. */
    char extra[200];
    snprintf(extra, sizeof extra, "\"_name_or_path\": \"/ckpt/%064d\"", 0);
    assert_fails(load_llama_with(extra, &m, &err, path, sizeof path), &err, PM_ERR_VALUE, NULL,
                 "$._name_or_path", "at most 63 bytes (got 64");
    /* An explicit name wins, and is checked the same way. */
    assert_ok(load_llama_with("\"name\": \"my-llama\"", &m, &err, path, sizeof path), &err);
    assert_string_equal(m.name, "my-llama");
    snprintf(extra, sizeof extra, "\"name\": \"%070d\"", 7);
    assert_fails(load_llama_with(extra, &m, &err, path, sizeof path), &err, PM_ERR_VALUE, NULL,
                 "$.name", "at most 63 bytes (got 70");
    /* A graph node's name: 31 bytes. */
    char graph[400];
    snprintf(graph, sizeof graph, "{\"nodes\": [{\"name\": \"%032d\", \"op\": \"RMSNorm\"}]}", 1);
    pm_graph *g = pm_graph_alloc();
    assert_non_null(g);
    assert_fails(pm_graph_from_json(graph, strlen(graph), "g.json", g, &err), &err, PM_ERR_VALUE,
                 "g.json", "$.nodes[0].name", "at most 31 bytes (got 32");
    pm_graph_free(g);
}

static void test_hf_kv_head_keys_of_every_family(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    char path[600];
    /* multi_query with num_key_value_heads given: the key wins. */
    assert_ok(load_llama_with("\"multi_query\": true", &m, &err, path, sizeof path), &err);
    assert_int_equal(m.kv_heads, 8);
    /* GPT-BigCode-style multi_query without a KV-head key: one KV head. */
    char *llama = slurp(HF_DIR "/llama3-8b-config.json");
    char *mq = subst(llama, "\"num_key_value_heads\": 8", "\"multi_query\": true");
    write_tmp("hf-mqa.json", mq, path, sizeof path);
    free(mq);
    free(llama);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.kv_heads, 1);
    char *base = slurp(HF_DIR "/falcon-7b-config.json");
    /* new_decoder_architecture (Falcon-40B/180B): num_kv_heads counts, and the block is
     * parallel. */
    char *text = subst(base, "\"new_decoder_architecture\": false",
                       "\"new_decoder_architecture\": true");
    write_tmp("hf-falcon-new.json", text, path, sizeof path);
    free(text);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.kv_heads, 71);
    assert_true(m.parallel_block);
    free(base);
}

static void test_hf_activation_keys_decide_the_gate(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    char path[600];
    char *base = slurp(HF_DIR "/llama3-8b-config.json");
    /* A family whose MLP the reader does not fix (OLMoE's, like the other MoE families, is
     * told by its activation): SiLU is gated, GELU plain, whichever key names it. */
    static const struct {
        const char *act;
        bool gated;
    } cases[] = {{"\"hidden_act\": \"gelu\"", false},
                 {"\"hidden_activation\": \"silu\"", true},
                 {"\"activation_function\": \"relu\"", false}};
    for (size_t i = 0; i < PM_ARRAY_LEN(cases); i++) {
        char *t1 = subst(base, "\"model_type\": \"llama\"",
                         "\"model_type\": \"olmoe\", \"num_experts\": 64, "
                         "\"num_experts_per_tok\": 8");
        char *t2 = subst(t1, "\"hidden_act\": \"silu\"", cases[i].act);
        write_tmp("hf-act.json", t2, path, sizeof path);
        free(t1);
        free(t2);
        assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
        assert_int_equal(m.gated_mlp, cases[i].gated);
    }
    free(base);
}

/* A family the reader does not know is refused by name, never read as a Llama whose other keys
 * are "not recognised": Jamba's Mamba layers would be modelled as attention. */
static void test_hf_unknown_family_is_refused(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    char path[600];
    char *base = slurp(HF_DIR "/llama3-8b-config.json");
    static const char *const families[] = {"jamba", "qwen3_next", "mamba2", "acme"};
    for (size_t i = 0; i < PM_ARRAY_LEN(families); i++) {
        char with[64];
        snprintf(with, sizeof with, "\"model_type\": \"%s\"", families[i]);
        char *t = subst(base, "\"model_type\": \"llama\"", with);
        write_tmp("hf-family.json", t, path, sizeof path);
        free(t);
        assert_int_equal(pm_model_load(path, &g_opts, &m, &err), PM_ERR_UNSUPPORTED);
        assert_string_equal(err.path, "$.model_type");
        assert_non_null(strstr(err.message, families[i]));
    }
    /* Without model_type the family's defaults are unknown: refused too. */
    char *t = subst(base, "\"model_type\": \"llama\",", "");
    write_tmp("hf-family.json", t, path, sizeof path);
    free(t);
    assert_int_equal(pm_model_load(path, &g_opts, &m, &err), PM_ERR_MISSING);
    assert_string_equal(err.path, "$.model_type");
    free(base);
}

/* Keys written twice under two names (Gemma-2's sliding_window_size, gpt-oss's
 * experts_per_token) load when they agree and are refused when they do not. */
static void test_hf_alias_keys_must_agree(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    char path[600];
    char *base = slurp(HF_DIR "/llama3-8b-config.json");
    char *t = subst(base, "\"vocab_size\": 128256",
                    "\"vocab_size\": 128256, \"sliding_window\": 4096, "
                    "\"sliding_window_size\": 4096, \"original_max_position_embeddings\": 8192");
    char *typed = subst(t, "\"model_type\": \"llama\"", "\"model_type\": \"gemma2\", \"head_dim\": 128");
    free(t);
    t = typed;
    write_tmp("hf-alias.json", t, path, sizeof path);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.sliding_window, 4096);
    char *bad = subst(t, "\"sliding_window_size\": 4096", "\"sliding_window_size\": 2048");
    write_tmp("hf-alias.json", bad, path, sizeof path);
    assert_int_equal(pm_model_load(path, &g_opts, &m, &err), PM_ERR_INCONSISTENT);
    assert_string_equal(err.path, "$.sliding_window_size");
    free(bad);
    free(t);
    free(base);
    /* Phi-3.5-MoE as published: its RoPE and router-noise keys cost nothing; 16 experts of
     * 6400, top 2, in all 32 layers. */
    assert_ok(pm_model_load(HF_DIR "/phi3.5-moe-instruct-config.json", &g_opts, &m, &err), &err);
    assert_int_equal(m.layers, 32);
    assert_int_equal(m.experts, 16);
    assert_int_equal(m.experts_per_token, 2);
    assert_int_equal(m.expert_intermediate, 6400);
    assert_int_equal(m.kv_heads, 8);
    assert_true(m.gated_mlp);
}

/* OPT as published: its MLP width is ffn_dim, and word_embed_proj_dim must be the hidden size
 * (OPT-350M projects 512-wide embeddings to 1024: not modelled, refused). */
static void test_hf_opt_keys(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    char path[600];
    static const char *const opt =
        "{\"model_type\": \"opt\", \"architectures\": [\"OPTForCausalLM\"], "
        "\"hidden_size\": 1024, \"num_attention_heads\": 16, \"num_hidden_layers\": 24, "
        "\"ffn_dim\": 3000, \"vocab_size\": 50272, \"max_position_embeddings\": 2048, "
        "\"do_layer_norm_before\": false, \"enable_bias\": false, "
        "\"word_embed_proj_dim\": 1024}";
    write_tmp("hf-opt.json", opt, path, sizeof path);
    assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
    assert_int_equal(m.intermediate, 3000); /* ffn_dim, not 4 x 1024 */
    assert_false(m.gated_mlp);
    assert_false(m.qkv_bias || m.o_bias || m.mlp_bias); /* enable_bias false */
    char *t = subst(opt, "\"word_embed_proj_dim\": 1024", "\"word_embed_proj_dim\": 512");
    write_tmp("hf-opt.json", t, path, sizeof path);
    free(t);
    assert_int_equal(pm_model_load(path, &g_opts, &m, &err), PM_ERR_UNSUPPORTED);
    assert_string_equal(err.path, "$.word_embed_proj_dim");
}

/* StarCoder2's use_bias turns every projection's bias on (its default) or off. */
static void test_hf_use_bias_sets_every_bias(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    char path[600];
    char *base = slurp(HF_DIR "/llama3-8b-config.json");
    char *t1 = subst(base, "\"model_type\": \"llama\"", "\"model_type\": \"starcoder2\"");
    char *t2 = subst(t1, "\"attention_bias\": false,", "");
    for (int on = 0; on <= 1; on++) {
        char with[64];
        snprintf(with, sizeof with, "\"use_bias\": %s, \"vocab_size\"", on ? "true" : "false");
        char *t = subst(t2, "\"vocab_size\"", with);
        write_tmp("hf-use-bias.json", t, path, sizeof path);
        free(t);
        assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
        assert_int_equal(m.qkv_bias, on);
        assert_int_equal(m.o_bias, on);
        assert_int_equal(m.mlp_bias, on);
    }
    free(t1);
    free(t2);
    free(base);
}

/* Published configs of the families the reader represents, beyond the bundled models
 * (tests/configs/hf-families/, README there): each loads as what its transformers class
 * builds. The values are read off the configs and the families' classes by hand: the defaults
 * they leave out are Falcon's 4 x hidden MLP and tied embeddings, BLOOM's 4 x hidden, Cohere's
 * and StarCoder2's tied embeddings, Gemma-2's alternating 4096-token window, Qwen2.5's window
 * off (use_sliding_window false). */
static void test_hf_family_configs_load_as_published(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        int layers, hidden, heads, kv, head_dim, inter, vocab, experts, k, expert_inter;
        bool gated, parallel, tied;
        int window;
    } cases[] = {
        {"olmoe-1b-7b", 16, 2048, 16, 16, 128, 1024, 50304, 64, 8, 1024, true, false, false, 0},
        {"granite-3.0-3b-moe", 32, 1536, 24, 8, 64, 512, 49155, 40, 8, 512, true, false, true, 0},
        {"glm4.5-air", 46, 4096, 96, 8, 128, 10944, 151552, 128, 8, 1408, true, false, false, 0},
        {"deepseek-v2-lite", 27, 2048, 16, 16, 192, 10944, 102400, 64, 6, 1408, true, false, false,
         0},
        {"deepseek-moe-16b", 28, 2048, 16, 16, 128, 10944, 102400, 64, 6, 1408, true, false, false,
         0},
        {"command-r", 40, 8192, 64, 64, 128, 22528, 256000, 0, 0, 0, true, true, true, 0},
        {"falcon-40b", 60, 8192, 128, 8, 64, 32768, 65024, 0, 0, 0, false, true, true, 0},
        {"gpt-neox-20b", 44, 6144, 64, 64, 96, 24576, 50432, 0, 0, 0, false, true, false, 0},
        {"phi-2", 32, 2560, 32, 32, 80, 10240, 51200, 0, 0, 0, false, true, false, 0},
        {"starcoder2-15b", 40, 6144, 48, 4, 128, 24576, 49152, 0, 0, 0, false, false, true, 4096},
        {"bloom-560m", 24, 1024, 16, 16, 64, 4096, 250880, 0, 0, 0, false, false, true, 0},
        {"qwen2.5-7b", 28, 3584, 28, 4, 128, 18944, 152064, 0, 0, 0, true, false, false, 0},
        {"mistral-nemo", 40, 5120, 32, 8, 128, 14336, 131072, 0, 0, 0, true, false, false, 0},
        {"llama3.2-1b", 16, 2048, 32, 8, 64, 8192, 128256, 0, 0, 0, true, false, true, 0},
        {"internlm2-7b", 32, 4096, 32, 8, 128, 14336, 92544, 0, 0, 0, true, false, false, 0},
        {"olmo2-7b", 32, 4096, 32, 32, 128, 11008, 100352, 0, 0, 0, true, false, false, 0},
        {"gemma2-9b", 42, 3584, 16, 8, 256, 14336, 256000, 0, 0, 0, true, false, true, 4096},
        {"phi3-small-8k", 32, 4096, 32, 8, 128, 14336, 100352, 0, 0, 0, true, false, true, 0},
    };
    for (size_t i = 0; i < PM_ARRAY_LEN(cases); i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/hf-families/%s-config.json", PM_TEST_CONFIG_DIR,
                 cases[i].file);
        pm_model m;
        pm_error err;
        assert_ok(pm_model_load(path, &g_opts, &m, &err), &err);
        const int got[] = {m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.intermediate,
                           m.vocab, m.experts, m.experts_per_token, m.expert_intermediate,
                           m.gated_mlp, m.parallel_block, m.tied_embeddings, m.sliding_window};
        const int want[] = {cases[i].layers, cases[i].hidden, cases[i].heads, cases[i].kv,
                            cases[i].head_dim, cases[i].inter, cases[i].vocab, cases[i].experts,
                            cases[i].k, cases[i].expert_inter, cases[i].gated, cases[i].parallel,
                            cases[i].tied, cases[i].window};
        for (size_t j = 0; j < PM_ARRAY_LEN(got); j++)
            if (got[j] != want[j])
                fail_msg("%s: field %zu is %d, expected %d", cases[i].file, j, got[j], want[j]);
    }
}

/* A key of a feature another family builds is refused in a family that does not build it
 * (transformers' LlamaConfig ignores "num_local_experts": the checkpoint is dense), by the key;
 * set off (null, 0), it passes. A layer type that is not attention is refused everywhere. */
static void test_hf_feature_keys_of_another_family_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *family, *extra, *path, *message; /* message NULL: loads */
    } cases[] = {
        {"llama", "\"num_local_experts\": 8, \"num_experts_per_tok\": 2", "$.num_local_experts",
         "model_type \"llama\" has no mixture-of-experts layers"},
        {"qwen2", "\"moe_intermediate_size\": 1408", "$.moe_intermediate_size",
         "model_type \"qwen2\" has no mixture-of-experts layers"},
        {"llama", "\"sliding_window\": 4096", "$.sliding_window",
         "model_type \"llama\" has no sliding-window attention"},
        {"mistral", "\"attention_chunk_size\": 8192", "$.attention_chunk_size",
         "model_type \"mistral\" has no chunked local attention"},
        {"llama", "\"q_lora_rank\": 1536", "$.q_lora_rank",
         "model_type \"llama\" has no multi-head latent attention"},
        {"phi3", "\"blocksparse_block_size\": 64", "$.blocksparse_block_size",
         "model_type \"phi3\" has no block-sparse attention"},
        {"llama", "\"dense_attention_every_n_layers\": 1", NULL, NULL},
        {"llama", "\"layer_types\": [\"sliding_attention\"]", "$.layer_types",
         "this family's layers are all full attention"},
        {"gemma3_text", "\"sliding_window\": 1024, \"layer_types\": [\"linear_attention\"]",
         "$.layer_types", "layer 0 is \"linear_attention\""},
        {"llama", "\"sliding_window\": null, \"num_experts\": 0, \"kv_lora_rank\": null", NULL,
         NULL},
        {"mixtral", "\"num_local_experts\": 8, \"num_experts_per_tok\": 2", NULL, NULL},
    };
    /* A family that always builds experts, or MLA, without the count or the rank: not modelled
     * dense or with full heads (transformers would take the family's default). */
    static const struct {
        const char *family, *path;
    } missing[] = {{"mixtral", "$.num_experts"}, {"qwen3_moe", "$.num_experts"},
                   {"deepseek_v3", "$.kv_lora_rank"}};
    /* DeepSeek-V2/V3 without the routed expert count: transformers' class builds 64 / 256
     * experts, DeepSeek's remote code dense layers; refused, and null reads dense. */
    {
        pm_model m;
        pm_error err;
        char path[600];
        const char *mla = "\"kv_lora_rank\": 512, \"q_lora_rank\": null, \"qk_nope_head_dim\": 128, "
                          "\"qk_rope_head_dim\": 64, \"v_head_dim\": 128";
        assert_fails(load_family_with("deepseek_v2", mla, &m, &err, path, sizeof path), &err,
                     PM_ERR_MISSING, path, "$.n_routed_experts", "builds 64 routed experts");
        assert_fails(load_family_with("deepseek_v3", mla, &m, &err, path, sizeof path), &err,
                     PM_ERR_MISSING, path, "$.n_routed_experts", "builds 256 routed experts");
        char dense[400];
        snprintf(dense, sizeof dense, "%s, \"n_routed_experts\": null", mla);
        assert_ok(load_family_with("deepseek_v3", dense, &m, &err, path, sizeof path), &err);
        assert_int_equal(m.experts, 0);
    }
    /* StableLM's use_qkv_bias (StableLM 2 sets it): biases on Q, K and V, none on O. */
    {
        pm_model m;
        pm_error err;
        char path[600];
        assert_ok(load_family_with("stablelm", "\"use_qkv_bias\": true", &m, &err, path,
                                   sizeof path),
                  &err);
        assert_true(m.qkv_bias);
        assert_false(m.o_bias || m.mlp_bias);
        assert_ok(load_family_with("stablelm", "\"use_qkv_bias\": false", &m, &err, path,
                                   sizeof path),
                  &err);
        assert_false(m.qkv_bias);
    }
    for (size_t i = 0; i < PM_ARRAY_LEN(missing); i++) {
        pm_model m;
        pm_error err;
        char path[600];
        pm_status st = load_family_with(missing[i].family, "\"max_window_layers\": 0", &m, &err,
                                        path, sizeof path);
        assert_fails(st, &err, PM_ERR_MISSING, path, missing[i].path, "is required");
    }
    for (size_t i = 0; i < PM_ARRAY_LEN(cases); i++) {
        pm_model m;
        pm_error err;
        char path[600];
        pm_status st = load_family_with(cases[i].family, cases[i].extra, &m, &err, path,
                                        sizeof path);
        if (cases[i].message)
            assert_fails(st, &err, PM_ERR_UNSUPPORTED, path, cases[i].path, cases[i].message);
        else
            assert_ok(st, &err);
    }
}

static void test_hf_mla_keys_are_read(void **state)
{
    (void)state;
    pm_model m;
    pm_error err;
    char path[600];
    assert_ok(load_family_with("deepseek_v2", "\"kv_lora_rank\": 512, \"q_lora_rank\": null, "
                              "\"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, "
                              "\"v_head_dim\": 128, \"n_routed_experts\": null",
                              &m, &err, path, sizeof path),
              &err);
    assert_int_equal(m.kv_lora_rank, 512);
    assert_int_equal(m.q_lora_rank, 0);
    assert_int_equal(m.qk_nope_head_dim, 128);
    assert_int_equal(m.qk_rope_head_dim, 64);
    assert_int_equal(m.v_head_dim, 128);
    /* The head dims are required: their defaults differ between families. */
    assert_fails(load_family_with("deepseek_v2", "\"kv_lora_rank\": 512, \"qk_nope_head_dim\": 128, "
                                  "\"q_lora_rank\": null, \"n_routed_experts\": null",
                                  &m, &err, path, sizeof path),
                 &err, PM_ERR_MISSING, path, "$.qk_rope_head_dim", "missing required key");
}

/* ---------------------------------------------------------------- pm_scenario_check */

static void hand_scenario(pm_scenario *s)
{
    memset(s, 0, sizeof *s);
    strcpy(s->name, "hand");
    pm_model *m = &s->model;
    strcpy(m->name, "tiny");
    m->layers = 2;
    m->hidden = 4096;
    m->heads = 32;
    m->kv_heads = 8;
    m->head_dim = 128;
    m->intermediate = 14336;
    m->vocab = 32000;
    m->gated_mlp = true;
    pm_accelerator *a = &s->accel;
    strcpy(a->name, "npu");
    a->peak_flop_per_s[PM_DTYPE_INT8] = 800e12;
    a->peak_flop_per_s[PM_DTYPE_BF16] = 400e12;
    a->compute_efficiency_frac = 0.7;
    a->hbm_capacity_bytes = 64.0 * 1073741824.0;
    a->hbm_bandwidth_bytes_per_s = 1.6e12;
    a->hbm_efficiency_frac = 0.8;
    a->l2_capacity_bytes = 192.0 * 1048576.0;
    a->l2_bandwidth_bytes_per_s = 5e12;
    a->l2_usable_frac = 1.0;
    a->kv_strided_efficiency_frac = 0.6;
    a->kernel_launch_s = 5e-6;
    a->chunk_half_efficiency_bytes = 262144.0;
    pm_cluster *c = &s->cluster;
    strcpy(c->name, "mesh");
    c->devices = 4;
    c->topology = PM_TOPO_FULL_MESH;
    c->algorithm = PM_AR_AUTO;
    c->link_bandwidth_bytes_per_s = 50e9;
    c->link_latency_s = 2e-6;
    c->devices_per_node = 4;
    pm_workload *w = &s->workload;
    w->batch = 4;
    w->seq_len = 1024;
    w->prefill_frac = 0.5;
    w->weight_dtype = w->kv_dtype = w->act_dtype = PM_DTYPE_INT8;
}

static void test_scenario_check_accepts_hand_built_scenario(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    hand_scenario(&s);
    assert_ok(pm_scenario_check(&s, &err), &err);
    assert_int_equal(pm_scenario_check(&s, NULL), PM_OK);
    assert_int_equal(pm_scenario_param_count(&s), 0); /* built by hand: no provenance */
    assert_null(pm_scenario_param(&s, 0));
    pm_scenario_release(&s); /* no provenance: nothing to free, must not crash */
    assert_int_equal(pm_scenario_check(NULL, &err), PM_ERR_INVALID_ARG);
}

static void test_scenario_check_rejects_bad_model(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    hand_scenario(&s);
    s.model.kv_heads = 6;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_INCONSISTENT, "",
                 "$.model.num_key_value_heads", "got 6 KV heads, 32 attention heads");
    hand_scenario(&s);
    s.model.layers = 0;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.model", ">= 1");
}

/* The magnitudes the model is defined for keep every derived time finite and positive; a
 * value beyond them is refused by the loaders at its key and by pm_scenario_check for
 * scenarios built or changed by hand. */
static void test_quantities_beyond_the_modelled_magnitudes_are_rejected(void **state)
{
    (void)state;
    pm_error err;

    pm_scenario s;
    hand_scenario(&s);
    s.accel.l2_capacity_bytes = 1e30;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "",
                 "$.accelerator.l2_capacity", "must be in [1, 1e+18] bytes");
    hand_scenario(&s);
    s.cluster.link_latency_s = 1e-300;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.cluster.link_latency",
                 "must be 0 or in [1e-12, 1000] s");
    hand_scenario(&s);
    s.accel.peak_flop_per_s[PM_DTYPE_FP32] = 1e30;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "",
                 "$.accelerator.peak_compute.fp32", "1e+21");
    hand_scenario(&s);
    s.accel.l2_capacity_bytes = 1e18;
    s.cluster.link_latency_s = 0;
    assert_ok(pm_scenario_check(&s, &err), &err);
}

/* A runtime built by hand is checked as the reader checks a file's: a usable share of 5 gave
 * 343.6 GB of a 64 GiB device, an efficiency of 5 attention faster than the HBM, a negative
 * launch a faster step, and a curve's count past its arrays read beyond them. */
static void test_scenario_check_rejects_bad_runtime(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    hand_scenario(&s);
    s.runtime.present = true;
    assert_ok(pm_scenario_check(&s, &err), &err);
    s.runtime.hbm_usable_frac = 5;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "",
                 "$.runtime.hbm_usable_frac", "in [0, 1]");
    s.runtime.hbm_usable_frac = NAN;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "",
                 "$.runtime.hbm_usable_frac", "in [0, 1]");
    s.runtime.hbm_usable_frac = 0.9;
    s.runtime.attention_hbm_efficiency_frac = 5;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "",
                 "$.runtime.attention_hbm_efficiency_frac", "in [0, 1]");
    s.runtime.attention_hbm_efficiency_frac = 0;
    s.runtime.kernel_launch_s = -10e-6;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "",
                 "$.runtime.kernel_launch_s", "finite and >= 0");
    s.runtime.kernel_launch_s = 0;
    s.runtime.paged_attention = (pm_paged_attention)7;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_INVALID_ARG, "",
                 "$.runtime.paged_attention", "not a value of its enum (got 7)");
    s.runtime.paged_attention = PM_PAGED_ALL;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "",
                 "$.runtime.paged_attention_efficiency_frac", "in (0, 1]");
    s.runtime.paged_attention = PM_PAGED_NONE;
    s.runtime.moe_gemm_compute.n_points = 100;
    s.runtime.moe_gemm_compute.n_accelerators = 100;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "",
                 "$.runtime.moe_gemm_compute", "got 100 and 100");
}

static void test_scenario_check_rejects_bad_accelerator(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    /* A GEMM block built by hand: 0 compute units made every GEMM infinite ("not finite",
     * without the key). */
    hand_scenario(&s);
    s.accel.gemm = (pm_gemm_params){true, 132, 128, 128, 0.1, 2e-6};
    assert_ok(pm_scenario_check(&s, &err), &err);
    s.accel.gemm.compute_units = 0;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.accelerator.gemm",
                 "(got 0, 128, 128, 0.1, 2e-06 s)");
    s.accel.gemm.compute_units = 132;
    s.accel.gemm.latency_s = -1e-6;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.accelerator.gemm",
                 "latency finite and >= 0");
    hand_scenario(&s);
    s.accel.compute_efficiency_frac = 1.5;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.accelerator",
                 "(0, 1]");
    hand_scenario(&s);
    s.accel.hbm_efficiency_frac = NAN;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.accelerator", NULL);
    hand_scenario(&s);
    s.accel.hbm_bandwidth_bytes_per_s = -1.6e12;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.accelerator", "> 0");
    hand_scenario(&s);
    s.accel.l2_bandwidth_bytes_per_s = INFINITY;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.accelerator", "finite");
    hand_scenario(&s);
    s.accel.kernel_launch_s = NAN;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.accelerator", NULL);
}

static void test_scenario_check_rejects_bad_cluster(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    hand_scenario(&s);
    s.cluster.devices = 0;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.cluster.devices",
                 "must be >= 1");
    hand_scenario(&s);
    s.cluster.link_bandwidth_bytes_per_s = NAN;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.cluster", NULL);
    hand_scenario(&s);
    s.cluster.devices = 64;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_INCONSISTENT, "", "$.cluster.devices",
                 "64 devices exceed the model's 32 attention heads");
    s.options.sharding = PM_SHARDING_IDEAL;
    assert_ok(pm_scenario_check(&s, &err), &err);
    hand_scenario(&s);
    s.cluster.topology = PM_TOPO_RING;
    s.cluster.algorithm = PM_AR_ONESHOT;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_INCONSISTENT, "",
                 "$.cluster.allreduce", "cannot run on topology \"ring\"");
    hand_scenario(&s);
    s.cluster.topology = PM_TOPO_HIERARCHICAL;
    s.cluster.devices = 16;
    s.cluster.devices_per_node = 5;
    s.cluster.inter_node_bandwidth_bytes_per_s = 25e9;
    s.cluster.inter_node_latency_s = 20e-6;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_INCONSISTENT, "",
                 "$.cluster.devices_per_node", "must divide devices");
    s.cluster.devices_per_node = 8;
    assert_ok(pm_scenario_check(&s, &err), &err);
    s.cluster.inter_node_bandwidth_bytes_per_s = 0;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.cluster",
                 "inter-node");
    hand_scenario(&s);
    s.cluster.topology = (pm_topology)7;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_INVALID_ARG, "", "$.cluster", NULL);
}

static void test_scenario_check_rejects_bad_workload(void **state)
{
    (void)state;
    pm_scenario s;
    pm_error err;
    hand_scenario(&s);
    s.workload.batch = 0;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.workload", "batch >= 1");
    hand_scenario(&s);
    s.workload.prefill_frac = 1.0;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.workload", NULL);
    hand_scenario(&s);
    s.workload.prefill_frac = NAN;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.workload", NULL);
    hand_scenario(&s);
    s.workload.seq_len = 2;
    s.workload.prefill_frac = 0.1;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_INCONSISTENT, "",
                 "$.workload.prefill_frac", "leaves 0 prompt tokens");
    hand_scenario(&s);
    s.workload.act_dtype = PM_DTYPE_FP32;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_UNSUPPORTED, "",
                 "$.workload.act_dtype", "no fp32 peak");
    hand_scenario(&s);
    s.workload.weight_dtype = PM_DTYPE_BF16; /* bf16 x int8 computes in bf16: supported */
    assert_ok(pm_scenario_check(&s, &err), &err);
    hand_scenario(&s);
    s.workload.kv_dtype = (pm_dtype)9;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_INVALID_ARG, "", "$.workload", NULL);
    hand_scenario(&s);
    s.options.fused_chunks = -1;
    assert_fails(pm_scenario_check(&s, &err), &err, PM_ERR_RANGE, "", "$.options.fused_chunks",
                 NULL);
}

/* ---------------------------------------------------------------- errors */

static void test_status_values_are_pinned(void **state)
{
    (void)state;
    assert_int_equal(PM_OK, 0);
    assert_int_equal(PM_ERR_SYNTAX, 3);
    assert_int_equal(PM_ERR_RANGE, 8);
    assert_int_equal(PM_ERR_NOT_FOUND, 10);
    assert_int_equal(PM_ERR_UNIT, 12);
    assert_int_equal(PM_ERR_VALUE, 14);
    assert_string_equal(pm_status_name(PM_OK), "PM_OK");
    assert_string_equal(pm_status_name(PM_ERR_DUPLICATE_KEY), "PM_ERR_DUPLICATE_KEY");
    assert_string_equal(pm_status_name(PM_ERR_VALUE), "PM_ERR_VALUE");
    assert_non_null(pm_status_name((pm_status)99));
    assert_non_null(pm_status_name((pm_status)-1));
}

static pm_error make_error(const char *file, const char *path, int line, int column,
                          const char *message)
{
    pm_error e;
    memset(&e, 0, sizeof e);
    e.status = PM_ERR_RANGE;
    strcpy(e.file, file);
    strcpy(e.path, path);
    e.line = line;
    e.column = column;
    strcpy(e.message, message);
    return e;
}

static void test_error_format_reads_like_a_compiler(void **state)
{
    (void)state;
    char buf[256];
    pm_error e = make_error("llama.json", "$.num_key_value_heads", 3, 7, "must divide");
    size_t n = pm_error_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "llama.json:3:7: $.num_key_value_heads: must divide");
    assert_int_equal(n, strlen(buf));
    e = make_error("llama.json", "$.batch", 0, 0, "must be >= 1");
    pm_error_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "llama.json: $.batch: must be >= 1");
    e = make_error("", "$.batch", 0, 0, "must be >= 1");
    pm_error_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "$.batch: must be >= 1");
    e = make_error("x.json", "", 2, 5, "JSON syntax error");
    pm_error_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "x.json:2:5: JSON syntax error");
    e = make_error("x.json", "", 0, 0, "empty file");
    pm_error_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "x.json: empty file");
    e = make_error("", "", 0, 0, "NULL argument");
    pm_error_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "NULL argument");
}

static void test_error_format_truncates_like_snprintf(void **state)
{
    (void)state;
    pm_error e = make_error("a.json", "$.x", 0, 0, "bad");
    const char *full = "a.json: $.x: bad";
    char buf[8];
    memset(buf, 'z', sizeof buf);
    size_t n = pm_error_format(&e, buf, sizeof buf);
    assert_int_equal(n, strlen(full));
    assert_string_equal(buf, "a.json:"); /* 7 characters and the NUL */
    assert_int_equal(pm_error_format(&e, NULL, 0), strlen(full));
}

/* A lengths file. The bundled traces' classes keep the traces' means (each class a group's
 * means, so only their rounding to a token and the shares' to 1e-6 move them): the Azure
 * conversation trace's 1154.70 prompt and 211.13 output tokens, the coding trace's 2047.85 and
 * 27.88 (Splitwise's generate_trace.py states them as 1155, 211, 2048, 28). Bad files are
 * refused at their key. */
static void check_lengths_means(const char *name, double in, double out, const char *source)
{
    pm_lengths l;
    pm_error err;
    assert_int_equal(pm_lengths_load(name, NULL, &l, &err), PM_OK);
    assert_int_equal(l.n_classes, 8);
    double share = 0.0, e_in = 0.0, e_out = 0.0;
    for (int i = 0; i < l.n_classes; i++) {
        share += l.classes[i].share;
        e_in += l.classes[i].share * (double)l.classes[i].input_tokens;
        e_out += l.classes[i].share * (double)l.classes[i].output_tokens;
    }
    assert_true(fabs(share - 1.0) < 1e-5);
    assert_true(fabs(e_in / share - in) < 0.501); /* a class rounds to a token: <= 0.5 */
    assert_true(fabs(e_out / share - out) < 0.501);
    assert_non_null(strstr(l.source, source));
}

static void lengths_refused(const char *classes, pm_status want, const char *path)
{
    char text[2048], file[512];
    snprintf(text, sizeof text,
             "{\"kind\": \"lengths\", \"name\": \"t\", \"source\": \"test\", \"classes\": %s}",
             classes);
    write_tmp("lengths.json", text, file, sizeof file);
    pm_lengths l;
    pm_error err;
    assert_int_equal(pm_lengths_load(file, NULL, &l, &err), want);
    if (strcmp(err.path, path) != 0)
        fail_msg("%s: expected the error at %s, got %s (%s)", classes, path, err.path,
                 err.message);
    assert_non_null(strstr(err.file, "lengths.json"));
    assert_int_equal(l.n_classes, 0);
}

static void test_lengths_file(void **state)
{
    (void)state;
    check_lengths_means("azure-conv-2023", 1154.70, 211.13, "AzurePublicDataset");
    check_lengths_means("azure-code-2023", 2047.85, 27.88, "AzurePublicDataset");
    /* SGLang's random lengths: prompts uniform in 1..1000 (mean 500.5), outputs in 0..1000
     * (mean 500), each class an interval's mean rounded half up. */
    check_lengths_means("sglang-random-1000-1000", 500.5, 500.0, "sample_random_requests");
    const char *one = "{\"input_tokens\": 10, \"output_tokens\": 5, \"share\": 1}";
    char nine[1024] = "[";
    for (int i = 0; i < 9; i++)
        snprintf(nine + strlen(nine), sizeof nine - strlen(nine), "%s%s", i ? ", " : "", one);
    strcat(nine, "]");
    lengths_refused(nine, PM_ERR_RANGE, "$.classes");
    lengths_refused("[]", PM_ERR_RANGE, "$.classes");
    lengths_refused("\"1000:100:1\"", PM_ERR_TYPE, "$.classes");
    lengths_refused("[3]", PM_ERR_TYPE, "$.classes[0]");
    lengths_refused("[{\"input_tokens\": 10, \"output_tokens\": 5, \"share\": 1}, "
                    "{\"input_tokens\": 10, \"output_tokens\": 5}]",
                    PM_ERR_MISSING, "$.classes[1].share");
    lengths_refused("[{\"input_tokens\": 0, \"output_tokens\": 5, \"share\": 1}]", PM_ERR_RANGE,
                    "$.classes[0].input_tokens");
    lengths_refused("[{\"input_tokens\": 10, \"output_tokens\": 5, \"share\": 0}]", PM_ERR_RANGE,
                    "$.classes[0].share");
    lengths_refused("[{\"input_tokens\": 10, \"output_tokens\": 5, \"share\": 1, "
                    "\"weight\": 2}]",
                    PM_ERR_UNKNOWN_KEY, "$.classes[0].weight");
    /* A file of another kind, and a lengths file without its source. */
    char file[512];
    write_tmp("lengths-kind.json", "{\"kind\": \"workload\", \"batch\": 1}", file, sizeof file);
    pm_lengths l;
    pm_error err;
    assert_int_equal(pm_lengths_load(file, NULL, &l, &err), PM_ERR_VALUE);
    assert_string_equal(err.path, "$.kind");
    write_tmp("lengths-src.json",
              "{\"kind\": \"lengths\", \"name\": \"t\", \"classes\": [{\"input_tokens\": 1, "
              "\"output_tokens\": 1, \"share\": 1}]}",
              file, sizeof file);
    assert_int_equal(pm_lengths_load(file, NULL, &l, &err), PM_ERR_MISSING);
    assert_string_equal(err.path, "$.source");
    assert_int_equal(pm_lengths_load("no-such-lengths", NULL, &l, &err), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "azure-conv-2023"));
}

static void test_loaders_reject_null_arguments(void **state)
{
    (void)state;
    pm_error err;
    pm_model m;
    pm_scenario s;
    assert_fails(pm_model_load(NULL, &g_opts, &m, &err), &err, PM_ERR_INVALID_ARG, NULL, NULL,
                 NULL);
    assert_fails(pm_scenario_load(NULL, &g_opts, &s, &err), &err, PM_ERR_INVALID_ARG, NULL, NULL,
                 NULL);
    assert_fails(pm_file_validate(NULL, &g_opts, NULL, &err), &err, PM_ERR_INVALID_ARG, NULL,
                 NULL, NULL);
    assert_int_equal(pm_model_load("", &g_opts, &m, NULL), PM_ERR_INVALID_ARG);
}

/* ---------------------------------------------------------------- fixture directories */

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entries of dir whose names do not start with '.' and, when suffix is not NULL, end
 * with it. Free with pm_names_free. */
static char **list_dir(const char *dir, const char *suffix, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        print_error("cannot open %s\n", dir);
        fail();
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.')
            continue;
        if (suffix && (len < strlen(suffix) || strcmp(e->d_name + len - strlen(suffix), suffix)))
            continue;
        char **nn = realloc(names, (n + 1) * sizeof *nn);
        assert_non_null(nn);
        names = nn;
        names[n] = malloc(len + 1);
        assert_non_null(names[n]);
        memcpy(names[n], e->d_name, len + 1);
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_names);
    *count = n;
    return names;
}

static void test_every_invalid_fixture_fails_with_its_expected_message(void **state)
{
    (void)state;
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    size_t n = 0;
    char **cases = list_dir(INVALID_DIR, NULL, &n);
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        char dir[1024], exp_path[1200];
        snprintf(dir, sizeof dir, "%s/%s", INVALID_DIR, cases[i]);
        snprintf(exp_path, sizeof exp_path, "%s/expected.txt", dir);
        /* Line 1: a part of the formatted message; line 2: the status name. */
        char *text_exp = slurp(exp_path);
        char expected[512], status_line[64];
        size_t l1 = strcspn(text_exp, "\r\n");
        pm_strlcpy(expected, text_exp, l1 + 1 < sizeof expected ? l1 + 1 : sizeof expected);
        const char *rest = text_exp + l1;
        rest += strspn(rest, "\r\n");
        size_t l2 = strcspn(rest, "\r\n");
        pm_strlcpy(status_line, rest, l2 + 1 < sizeof status_line ? l2 + 1 : sizeof status_line);
        free(text_exp);
        /* Helper files beside input.json are named relative to the case folder. */
        assert_int_equal(chdir(dir), 0);
        pm_error err;
        memset(&err, 0, sizeof err);
        pm_file_kind kind;
        pm_status st = pm_file_validate("input.json", &g_opts, &kind, &err);
        assert_int_equal(chdir(cwd), 0);
        char text[1200];
        pm_error_format(&err, text, sizeof text);
        if (st == PM_OK) {
            print_error("invalid/%s: validated, but must fail with \"%s\"\n", cases[i], expected);
            failures++;
        } else if (!expected[0] || !strstr(text, expected)) {
            print_error("invalid/%s:\n  got      \"%s\"\n  expected \"%s\" in it\n", cases[i],
                        text, expected);
            failures++;
        } else if (status_line[0] && strcmp(pm_status_name(st), status_line) != 0) {
            print_error("invalid/%s: status %s, expected %s (%s)\n", cases[i],
                        pm_status_name(st), status_line, text);
            failures++;
        } else if (err.status != st) {
            print_error("invalid/%s: returned %s but err.status is %s\n", cases[i],
                        pm_status_name(st), pm_status_name(err.status));
            failures++;
        }
    }
    pm_names_free(cases, n);
    if (n < 20) {
        print_error("only %zu invalid fixtures (expected at least 20)\n", n);
        failures++;
    }
    assert_int_equal(failures, 0);
}

static void test_every_valid_fixture_validates(void **state)
{
    (void)state;
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    size_t n = 0;
    char **files = list_dir(VALID_DIR, ".json", &n);
    int failures = 0;
    assert_int_equal(chdir(VALID_DIR), 0);
    for (size_t i = 0; i < n; i++) {
        pm_error err;
        pm_status st = pm_file_validate(files[i], &g_opts, NULL, &err);
        if (st != PM_OK) {
            char text[1200];
            pm_error_format(&err, text, sizeof text);
            print_error("valid/%s: %s: %s\n", files[i], pm_status_name(st), text);
            failures++;
        }
    }
    assert_int_equal(chdir(cwd), 0);
    pm_names_free(files, n);
    assert_true(n >= 10);
    assert_int_equal(failures, 0);
}

/* ---------------------------------------------------------------- variants
 *
 * One rule a row: a shipped fixture with one substitution, and what validating the variant must
 * give: PM_OK (the passing case beside each failing one), or the status, the JSON path and a
 * substring of the message, with the file checked to be the variant written. Rows keep the
 * name of the rule they check; checks that need more than the status and message stay in the
 * functions above. */

typedef struct variant_case {
    const char *rule;    /* what the row checks */
    const char *fixture; /* under tests/configs/valid/ */
    const char *from, *to;
    pm_status want;
    const char *path, *msg; /* when want != PM_OK */
} variant_case;

static const variant_case variant_cases[] = {
    {"duplicate_key_is_rejected", "workload-bf16.json",
     "\"batch\": 4,",
     "\"batch\": 4,\n  \"batch\": 8,",
     PM_ERR_DUPLICATE_KEY, "$.batch", "duplicate key \"batch\""},
    {"unknown_key_suggests_the_nearest_known_key", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6,",
     "\"hbm_bandwidth_TBps\": 1.6,\n  \"hbm_bandwith_TBps\": 1.6,",
     PM_ERR_UNKNOWN_KEY, "$.hbm_bandwith_TBps", "did you mean \"hbm_bandwidth_TBps\"?"},
    {"unknown_key_suggests_the_nearest_known_key", "workload-bf16.json",
     "\"batch\": 4,",
     "\"batch\": 4,\n  \"btach\": 4,",
     PM_ERR_UNKNOWN_KEY, "$.btach", "did you mean \"batch\"?"},
    {"unknown_key_suggests_the_nearest_known_key", "workload-bf16.json",
     "\"batch\": 4,",
     "\"batch\": 4,\n  \"description\": \"d\",",
     PM_OK, NULL, NULL},
    {"native_model_rejects_huggingface_extra_keys", "model-tiny-gqa.json",
     "\"vocab_size\": 32000",
     "\"vocab_size\": 32000,\n  \"rope_theta\": 500000",
     PM_ERR_UNKNOWN_KEY, "$.rope_theta", "unknown key \"rope_theta\""},
    {"wrong_type_is_rejected", "model-tiny-gqa.json",
     "\"num_hidden_layers\": 2",
     "\"num_hidden_layers\": \"2\"",
     PM_ERR_TYPE, "$.num_hidden_layers", "expected a number (got a string)"},
    {"wrong_type_is_rejected", "workload-bf16.json",
     "\"weight_dtype\": \"bf16\"",
     "\"weight_dtype\": 16",
     PM_ERR_TYPE, "$.weight_dtype", "expected a string (got a number)"},
    {"wrong_type_is_rejected", "model-tiny-gqa.json",
     "\"vocab_size\": 32000",
     "\"vocab_size\": 32000,\n  \"mlp_gated\": 1",
     PM_ERR_TYPE, "$.mlp_gated", "expected true or false"},
    {"wrong_type_is_rejected", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6",
     "\"hbm_bandwidth_TBps\": {\"value\": \"1.6\", \"source\": \"s\"}",
     PM_ERR_TYPE, "$.hbm_bandwidth_TBps", "\"value\" must be a number"},
    {"wrong_type_is_rejected", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6",
     "\"hbm_bandwidth_TBps\": {\"value\": 1.6, \"source\": \"s\"}",
     PM_OK, NULL, NULL},
    {"missing_key_is_rejected", "workload-bf16.json",
     "  \"seq_len\": 1024,\n",
     "",
     PM_ERR_MISSING, "$.seq_len", "missing required key \"seq_len\""},
    {"accel_rejects_negative_bandwidth", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6",
     "\"hbm_bandwidth_TBps\": 0",
     PM_ERR_RANGE, "$.hbm_bandwidth_TBps", "must be > 0"},
    {"accel_rejects_negative_bandwidth", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6",
     "\"hbm_bandwidth_TBps\": 0.001",
     PM_OK, NULL, NULL},
    {"accel_rejects_efficiency_above_one", "accelerator-minimal.json",
     "\"compute_efficiency_frac\": 0.7",
     "\"compute_efficiency_frac\": 1.5",
     PM_ERR_RANGE, "$.compute_efficiency_frac", "must be in (0, 1]"},
    {"accel_rejects_efficiency_above_one", "accelerator-minimal.json",
     "\"hbm_efficiency_frac\": 0.8",
     "\"hbm_efficiency_frac\": 0",
     PM_ERR_RANGE, "$.hbm_efficiency_frac", "must be in (0, 1]"},
    {"accel_rejects_efficiency_above_one", "accelerator-minimal.json",
     "\"compute_efficiency_frac\": 0.7",
     "\"compute_efficiency_frac\": 1",
     PM_OK, NULL, NULL},
    {"accel_prefetch_consumer", "accelerator-minimal.json",
     "\"compute_efficiency_frac\": 0.7",
     "\"compute_efficiency_frac\": 0.7, \"prefetch_consumer\": \"eager\"",
     PM_ERR_VALUE, "$.prefetch_consumer", "expected one of wait, stream (got \"eager\")"},
    {"accel_prefetch_consumer", "accelerator-minimal.json",
     "\"compute_efficiency_frac\": 0.7",
     "\"compute_efficiency_frac\": 0.7, \"prefetch_consumer\": {\"value\": 1}",
     PM_ERR_TYPE, "$.prefetch_consumer", "\"value\" must be a string (got a number)"},
    {"accel_prefetch_consumer", "accelerator-minimal.json",
     "\"compute_efficiency_frac\": 0.7",
     "\"compute_efficiency_frac\": 0.7, \"prefetch_consumer\": {\"source\": \"x\"}",
     PM_ERR_MISSING, "$.prefetch_consumer", "a sourced string needs \"value\""},
    {"accel_prefetch_consumer", "accelerator-minimal.json",
     "\"compute_efficiency_frac\": 0.7",
     "\"compute_efficiency_frac\": 0.7, \"prefetch_consumer\": {\"value\": \"wait\", " "\"why\": \"x\"}",
     PM_ERR_UNKNOWN_KEY, "$.prefetch_consumer", "unknown key \"why\" in a sourced string"},
    {"workload_allreduce_dtype", "workload-bf16.json",
     "\"kv_dtype\": \"bf16\"",
     "\"kv_dtype\": \"bf16\", \"allreduce_dtype\": \"int2\"",
     PM_ERR_VALUE, "$.allreduce_dtype", "expected one of int8, fp8, bf16, fp16, fp32, int4 (got \"int2\")"},
    {"accel_rejects_negative_launch_time", "accelerator-minimal.json",
     "\"kernel_launch_us\": 5",
     "\"kernel_launch_us\": -1",
     PM_ERR_RANGE, "$.kernel_launch_us", "must be >= 0"},
    {"accel_rejects_negative_launch_time", "accelerator-minimal.json",
     "\"kernel_launch_us\": 5",
     "\"kernel_launch_us\": 0",
     PM_OK, NULL, NULL},
    {"workload_rejects_batch_zero", "workload-bf16.json",
     "\"batch\": 4",
     "\"batch\": 0",
     PM_ERR_RANGE, "$.batch", "must be in [1, "},
    {"workload_rejects_batch_zero", "workload-bf16.json",
     "\"seq_len\": 1024",
     "\"seq_len\": 1",
     PM_ERR_RANGE, "$.seq_len", "must be in [2, "},
    {"workload_rejects_batch_zero", "workload-bf16.json",
     "\"batch\": 4",
     "\"batch\": 1",
     PM_OK, NULL, NULL},
    {"non_finite_number_is_rejected", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6",
     "\"hbm_bandwidth_TBps\": 1e999",
     PM_ERR_RANGE, "$.hbm_bandwidth_TBps", "not finite"},
    {"non_finite_number_is_rejected", "workload-bf16.json",
     "\"batch\": 4",
     "\"batch\": -1e999",
     PM_ERR_RANGE, "$.batch", "not finite"},
    {"non_finite_number_is_rejected", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6",
     "\"hbm_bandwidth_TBps\": 1e300",
     PM_ERR_RANGE, "$.hbm_bandwidth_TBps", "1e+300 TBps is not a finite number of bytes/s"},
    {"non_finite_number_is_rejected", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6",
     "\"hbm_bandwidth_TBps\": 1e6",
     PM_OK, NULL, NULL},
    {"workload_rejects_fractional_batch", "workload-bf16.json",
     "\"batch\": 4",
     "\"batch\": 4.5",
     PM_ERR_RANGE, "$.batch", "expected an integer (got 4.5)"},
    {"workload_rejects_fractional_batch", "model-tiny-gqa.json",
     "\"num_hidden_layers\": 2",
     "\"num_hidden_layers\": 1e20",
     PM_ERR_RANGE, "$.num_hidden_layers", "must be in [1, "},
    {"workload_rejects_prefill_frac_zero_and_one", "workload-bf16.json",
     "\"prefill_frac\": 0.5",
     "\"prefill_frac\": 0",
     PM_ERR_RANGE, "$.prefill_frac", "must be in (0, 1) (got 0)"},
    {"workload_rejects_prefill_frac_zero_and_one", "workload-bf16.json",
     "\"prefill_frac\": 0.5",
     "\"prefill_frac\": 1",
     PM_ERR_RANGE, "$.prefill_frac", "must be in (0, 1) (got 1)"},
    {"workload_rejects_prefill_frac_zero_and_one", "workload-bf16.json",
     "\"prefill_frac\": 0.5",
     "\"prefill_frac\": 0.999",
     PM_OK, NULL, NULL},
    {"workload_rejects_unknown_dtype", "workload-bf16.json",
     "\"kv_dtype\": \"bf16\"",
     "\"kv_dtype\": \"fp4\"",
     PM_ERR_VALUE, "$.kv_dtype", "expected one of int8, fp8, bf16, fp16, fp32, int4 (got \"fp4\")"},
    {"quantity_with_unit_of_wrong_dimension_is_rejected", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6",
     "\"hbm_bandwidth_GiB\": 1.6",
     PM_ERR_UNIT, "$.hbm_bandwidth_GiB", "unit \"GiB\" does not measure this quantity"},
    /* An unknown unit is named at its key (was: "missing required key" at one never written). */
    {"quantity_with_unknown_unit_is_named", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6",
     "\"hbm_bandwidth_TiBps\": 1.6",
     PM_ERR_UNIT, "$.hbm_bandwidth_TiBps", "unknown unit \"TiBps\" (units: "},
    {"quantity_with_unit_of_wrong_dimension_is_rejected", "accelerator-minimal.json",
     "\"int8_TOPS\": 800",
     "\"int8_TBps\": 800",
     PM_ERR_UNIT, "$.peak_compute.int8_TBps", "unit \"TBps\" does not measure"},
    {"same_quantity_in_two_units_is_rejected", "accelerator-minimal.json",
     "\"l2_capacity_MiB\": 192,",
     "\"l2_capacity_MiB\": 192,\n  \"l2_capacity_MB\": 201,",
     PM_ERR_DUPLICATE_KEY, "$.l2_capacity_MB", "\"l2_capacity_MiB\" and \"l2_capacity_MB\" give the same quantity twice"},
    {"accelerator_needs_at_least_one_peak", "accelerator-minimal.json",
     "{\n    \"int8_TOPS\": 800,\n    \"bf16_TFLOPS\": 400\n  }",
     "{}",
     PM_ERR_MISSING, "$.peak_compute", "no datatype given"},
    {"model_rejects_kv_heads_not_dividing_heads", "model-tiny-gqa.json",
     "\"num_key_value_heads\": 8",
     "\"num_key_value_heads\": 6",
     PM_ERR_INCONSISTENT, "$.num_key_value_heads", "got 6 KV heads, 32 attention heads"},
    {"model_rejects_kv_heads_not_dividing_heads", "model-tiny-gqa.json",
     "\"num_key_value_heads\": 8",
     "\"num_key_value_heads\": 1",
     PM_OK, NULL, NULL},
    {"model_rejects_kv_heads_not_dividing_heads", "model-tiny-gqa.json",
     "\"num_key_value_heads\": 8",
     "\"num_key_value_heads\": 32",
     PM_OK, NULL, NULL},
    {"model_needs_head_dim_when_hidden_is_not_a_multiple", "model-tiny-gqa.json",
     "\"hidden_size\": 4096",
     "\"hidden_size\": 4100",
     PM_ERR_INCONSISTENT, "$.head_dim", "hidden_size 4100 is not a multiple of num_attention_heads 32"},
    {"hierarchical_cluster_requires_devices_per_node", "cluster-hierarchical.json",
     "  \"devices_per_node\": 8,\n",
     "",
     PM_ERR_MISSING, "$.devices_per_node", "missing required key \"devices_per_node\""},
    {"cluster_rejects_devices_per_node_not_dividing_devices", "cluster-hierarchical.json",
     "\"devices_per_node\": 8",
     "\"devices_per_node\": 5",
     PM_ERR_INCONSISTENT, "$.devices_per_node", "divide"},
    {"quantities_beyond_the_modelled_magnitudes_are_rejected", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6",
     "\"hbm_bandwidth_TBps\": 5e-324",
     PM_ERR_RANGE, "$.hbm_bandwidth_TBps", "must be in [1e-09, 1e+06] TBps"},
    {"quantities_beyond_the_modelled_magnitudes_are_rejected", "accelerator-minimal.json",
     "\"kernel_launch_us\": 5",
     "\"kernel_launch_us\": 5e-324",
     PM_ERR_RANGE, "$.kernel_launch_us", "must be 0 or in [1e-06, 1e+09] us"},
    {"quantities_beyond_the_modelled_magnitudes_are_rejected", "accelerator-minimal.json",
     "\"l2_capacity_MiB\": 192",
     "\"l2_capacity_MiB\": {\"value\": 1e15, \"source\": \"x\"}",
     PM_ERR_RANGE, "$.l2_capacity_MiB", "(got 1e+15)"},
    {"quantities_beyond_the_modelled_magnitudes_are_rejected", "accelerator-minimal.json",
     "\"hbm_bandwidth_TBps\": 1.6",
     "\"hbm_bandwidth_TBps\": 1e-9",
     PM_OK, NULL, NULL},
    {"quantities_beyond_the_modelled_magnitudes_are_rejected", "accelerator-minimal.json",
     "\"kernel_launch_us\": 5",
     "\"kernel_launch_us\": 0",
     PM_OK, NULL, NULL},
};

static void test_variant_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof variant_cases / sizeof variant_cases[0]; i++) {
        const variant_case *c = &variant_cases[i];
        char path[600], name[64];
        pm_error err;
        snprintf(name, sizeof name, "variant%zu.json", i);
        variant(c->fixture, c->from, c->to, name, path, sizeof path);
        const pm_status st = validate(path, &err);
        if (st != c->want)
            print_error("row %zu (%s): %s -> %s\n", i, c->rule, c->from, c->to);
        if (c->want == PM_OK)
            assert_ok(st, &err);
        else
            assert_fails(st, &err, c->want, path, c->path, c->msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variant_table),
        cmocka_unit_test(test_model_loads_from_native_file),
        cmocka_unit_test(test_model_reads_optional_keys_and_sourced_numbers),
        cmocka_unit_test(test_model_kv_heads_default_to_attention_heads),
        cmocka_unit_test(test_accelerator_loads_and_converts_units),
        cmocka_unit_test(test_accelerator_accepts_any_unit_of_the_right_dimension),
        cmocka_unit_test(test_accelerator_reads_area),
        cmocka_unit_test(test_cluster_loads),
        cmocka_unit_test(test_cluster_converts_bits_per_second),
        cmocka_unit_test(test_hierarchical_cluster_loads),
        cmocka_unit_test(test_workload_loads),
        cmocka_unit_test(test_scenario_resolves_bundled_names),
        cmocka_unit_test(test_scenario_reads_inline_objects),
        cmocka_unit_test(test_scenario_from_overrides_some_keys),
        cmocka_unit_test(test_runtime_is_a_component_with_its_allreduce),
        cmocka_unit_test(test_runtime_paged_attention_and_its_efficiency_come_together),
        cmocka_unit_test(test_runtime_moe_gemm_compute_table_is_read_strictly),
        cmocka_unit_test(test_compute_efficiency_by_dtype),
        cmocka_unit_test(test_scenario_component_may_be_a_path),
        cmocka_unit_test(test_scenario_reads_sharding_and_options),
        cmocka_unit_test(test_file_validate_reports_the_kind),
        cmocka_unit_test(test_json_syntax_error_reports_line_and_column),
        cmocka_unit_test(test_json_syntax_error_column_points_at_the_offending_character),
        cmocka_unit_test(test_json_syntax_error_at_end_of_input_says_so),
        cmocka_unit_test(test_empty_file_is_a_syntax_error),
        cmocka_unit_test(test_non_object_top_level_is_rejected),
        cmocka_unit_test(test_duplicate_key_is_rejected),
        cmocka_unit_test(test_unknown_key_far_from_every_known_key_has_no_suggestion),
        cmocka_unit_test(test_missing_key_is_rejected),
        cmocka_unit_test(test_accel_rejects_negative_bandwidth),
        cmocka_unit_test(test_accel_prefetch_consumer),
        cmocka_unit_test(test_workload_allreduce_dtype),
        cmocka_unit_test(test_workload_rejects_fractional_batch),
        cmocka_unit_test(test_workload_rejects_unknown_dtype),
        cmocka_unit_test(test_quantity_key_without_unit_is_rejected),
        cmocka_unit_test(test_quantity_with_unit_of_wrong_dimension_is_rejected),
        cmocka_unit_test(test_same_quantity_in_two_units_is_rejected),
        cmocka_unit_test(test_accelerator_needs_at_least_one_peak),
        cmocka_unit_test(test_model_needs_head_dim_when_hidden_is_not_a_multiple),
        cmocka_unit_test(test_scenario_rejects_more_devices_than_heads),
        cmocka_unit_test(test_scenario_accepts_more_devices_than_heads_with_ideal_sharding),
        cmocka_unit_test(test_scenario_rejects_more_devices_than_the_interconnect_joins),
        cmocka_unit_test(test_scenario_rejects_dtype_the_accelerator_lacks),
        cmocka_unit_test(test_hierarchical_cluster_requires_devices_per_node),
        cmocka_unit_test(test_devices_per_node_requires_hierarchical_topology),
        cmocka_unit_test(test_scenario_rejects_devices_per_node_not_dividing_devices),
        cmocka_unit_test(test_scenario_rejects_allreduce_the_topology_cannot_run),
        cmocka_unit_test(test_scenario_check_names_the_override_and_refuses_dense_skew),
        cmocka_unit_test(test_scenario_rejects_mixed_8bit_gemm_operands),
        cmocka_unit_test(test_scenario_rejects_prefill_that_leaves_no_prompt),
        cmocka_unit_test(test_scenario_options_are_range_checked),
        cmocka_unit_test(test_unknown_bundled_name_lists_the_available_names),
        cmocka_unit_test(test_missing_path_is_not_found),
        cmocka_unit_test(test_scenario_reports_unknown_component_name_at_its_key),
        cmocka_unit_test(test_scenario_component_path_errors_name_that_file),
        cmocka_unit_test(test_scenario_inline_error_path_is_inside_the_scenario),
        cmocka_unit_test(test_scenario_from_override_error_names_the_scenario),
        cmocka_unit_test(test_set_override_changes_batch),
        cmocka_unit_test(test_feature_keys_without_the_feature_refused),
        cmocka_unit_test(test_speculative_block_of_overrides_names_them),
        cmocka_unit_test(test_set_override_in_another_unit_replaces_the_quantity),
        cmocka_unit_test(test_set_override_accepts_count_multipliers),
        cmocka_unit_test(test_platform_mismatch_is_flagged),
        cmocka_unit_test(test_checkpoint_quantization_is_read_and_warned),
        cmocka_unit_test(test_checkpoint_int4_groups_are_warned),
        cmocka_unit_test(test_scenario_paths_are_relative_to_the_scenario),
        cmocka_unit_test(test_scenario_warnings_are_listed_in_order),
        cmocka_unit_test(test_set_override_with_invalid_value_names_the_override),
        cmocka_unit_test(test_messages_name_keys_not_options),
        cmocka_unit_test(test_set_override_without_equals_is_rejected),
        cmocka_unit_test(test_set_override_applies_to_component_loads),
        cmocka_unit_test(test_hf_llama3_config_loads_as_is),
        cmocka_unit_test(test_hf_config_is_still_checked_for_duplicates_and_ranges),
        cmocka_unit_test(test_hf_gpt2_config_loads_as_is),
        cmocka_unit_test(test_hf_config_without_tie_key_takes_the_familys_default),
        cmocka_unit_test(test_hf_window_defaults_of_the_family),
        cmocka_unit_test(test_hf_family_biases_head_dim_and_vocab),
        cmocka_unit_test(test_hf_resolve_marks_given_defaulted_derived_and_ignored),
        cmocka_unit_test(test_cluster_resolve_marks_defaulted_optional_keys),
        cmocka_unit_test(test_hf_moe_configs_are_read_like_the_bundled_models),
        cmocka_unit_test(test_hf_moe_keys_not_modelled_are_refused_naming_the_key),
        cmocka_unit_test(test_hf_aliases_counts_and_nulls_refused),
        cmocka_unit_test(test_hf_dbrx_nested_configs_are_read),
        cmocka_unit_test(test_hf_dbrx_bad_nested_keys_are_refused_naming_the_path),
        cmocka_unit_test(test_hf_misspelt_cost_key_suggests_the_key),
        cmocka_unit_test(test_hf_text_config_is_unwrapped),
        cmocka_unit_test(test_hf_sliding_window_of_every_family),
        cmocka_unit_test(test_hf_gemma3_wrapper_reads_its_text_model_and_pattern),
        cmocka_unit_test(test_names_that_do_not_fit_are_refused_not_cut),
        cmocka_unit_test(test_hf_kv_head_keys_of_every_family),
        cmocka_unit_test(test_hf_activation_keys_decide_the_gate),
        cmocka_unit_test(test_hf_unknown_family_is_refused),
        cmocka_unit_test(test_hf_alias_keys_must_agree),
        cmocka_unit_test(test_hf_use_bias_sets_every_bias),
        cmocka_unit_test(test_hf_opt_keys),
        cmocka_unit_test(test_hf_family_configs_load_as_published),
        cmocka_unit_test(test_hf_feature_keys_of_another_family_are_refused),
        cmocka_unit_test(test_hf_mla_keys_are_read),
        cmocka_unit_test(test_scenario_check_accepts_hand_built_scenario),
        cmocka_unit_test(test_scenario_check_rejects_bad_model),
        cmocka_unit_test(test_quantities_beyond_the_modelled_magnitudes_are_rejected),
        cmocka_unit_test(test_scenario_check_rejects_bad_runtime),
        cmocka_unit_test(test_scenario_check_rejects_bad_accelerator),
        cmocka_unit_test(test_scenario_check_rejects_bad_cluster),
        cmocka_unit_test(test_scenario_check_rejects_bad_workload),
        cmocka_unit_test(test_status_values_are_pinned),
        cmocka_unit_test(test_error_format_reads_like_a_compiler),
        cmocka_unit_test(test_error_format_truncates_like_snprintf),
        cmocka_unit_test(test_lengths_file),
        cmocka_unit_test(test_loaders_reject_null_arguments),
        cmocka_unit_test(test_every_invalid_fixture_fails_with_its_expected_message),
        cmocka_unit_test(test_every_valid_fixture_validates),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
