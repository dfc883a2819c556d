/*
 * data.c - finding and assembling inputs: bundled names vs paths, scenarios that name or inline
 * their components (with "from" inheritance), overrides on the resolved JSON tree, listing
 * and validating the shipped files, and the provenance accessors.
 *
 * May call: alloc.c, area.c, check.c, dtype.c, error.c, graph.c, graph_io.c, json.c,
 * json_syntax.c, location.c, plan.c, provenance.c, read_components.c, read_model.c,
 * read_lengths.c, read_runtime.c, read_spec.c, runtime.c, units.c.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define MAX_ORIGINS 64

static const char *const kind_names[PM_KIND_COUNT] = {
    "model", "accelerator", "cluster", "workload", "scenario", "graph", "runtime", "lengths"};
static const char *const kind_dirs[PM_KIND_COUNT] = {
    "models", "accelerators", "clusters", "workloads", "scenarios", "graphs", "runtimes",
    "lengths"};

const char *pm_file_kind_name(pm_file_kind k)
{
    return (int)k >= 0 && k < PM_KIND_COUNT ? kind_names[k] : "?";
}

const char *pm_kind_dir(pm_file_kind k)
{
    return (int)k >= 0 && k < PM_KIND_COUNT ? kind_dirs[k] : "?";
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* strerror's text in a message's case ("too many levels of symbolic links"); a static buffer:
 * the caller copies it into the error at once. */
static const char *errno_words(int errnum)
{
    static _Thread_local char buf[128];
    pm_errno_text(errnum, buf, sizeof buf);
    buf[0] = (char)tolower((unsigned char)buf[0]);
    return buf;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void pm_names_free(char **names, size_t count)
{
    if (!names)
        return;
    for (size_t i = 0; i < count; i++)
        pm_free(names[i]);
    pm_free(names);
}

pm_status pm_data_list(const char *data_dir, pm_file_kind kind, char ***names_out,
                       size_t *count_out, pm_error *err)
{
    if (!names_out || !count_out || (int)kind < 0 || kind >= PM_KIND_COUNT)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "bad argument to pm_data_list");
    *names_out = NULL;
    *count_out = 0;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", data_dir ? data_dir : pm_default_data_dir(),
             kind_dirs[kind]);
    DIR *d = opendir(dir);
    char why[128];
    if (!d)
        return pm_fail(err, PM_ERR_IO, dir, NULL, "cannot open the data directory: %s%s%s%s",
                       pm_errno_text(errno, why, sizeof why),
                       data_dir ? "" : " (set PRESERVE_MODEL_DATA to the folder that holds ",
                       data_dir ? "" : kind_dirs[kind], data_dir ? "" : "/)");
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ".json"))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = pm_realloc(names, cap * sizeof *nn);
            if (!nn)
                goto nomem;
            names = nn;
        }
        size_t len = strlen(e->d_name) - 5;
        names[n] = pm_malloc(len + 1);
        if (!names[n])
            goto nomem;
        memcpy(names[n], e->d_name, len);
        names[n][len] = '\0';
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    *names_out = names;
    *count_out = n;
    return PM_OK;
nomem:
    closedir(d);
    pm_names_free(names, n);
    return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory listing %s", dir);
}

pm_status pm_resolve_ref(const char *data_dir, pm_file_kind kind, const char *ref, char *out,
                         size_t n, pm_error *err)
{
    if (!ref || !ref[0])
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "empty %s name",
                       pm_file_kind_name(kind));
    bool looks_like_path = strchr(ref, '/') != NULL || ends_with(ref, ".json");
    const size_t ref_len = strlen(ref);
    if (looks_like_path && is_file(ref)) {
        if (ref_len >= n)
            return pm_fail(err, PM_ERR_IO, NULL, NULL,
                           "the %s path \"%.40s...\" is %zu bytes long, more than the %zu "
                           "this reader handles",
                           pm_file_kind_name(kind), ref, ref_len, n - 1);
        pm_strlcpy(out, ref, n);
        return PM_OK;
    }
    struct stat st;
    if (looks_like_path && stat(ref, &st) == 0)
        return pm_fail(err, PM_ERR_IO, NULL, NULL, "\"%s\" is not a regular file", ref);
    /* The real cause when there is something at the path: a symlink loop, a denied directory,
     * a name too long; only a missing file is "no such file". */
    const int why = errno;
    if (looks_like_path && why != ENOENT && why != ENOTDIR)
        return pm_fail(err, PM_ERR_IO, ref, NULL, "%s", errno_words(why));
    if (strchr(ref, '/') != NULL)
        return pm_fail(err, PM_ERR_NOT_FOUND, ref, NULL, "no such file");
    const char *dd = data_dir ? data_dir : pm_default_data_dir();
    /* The bundled file's path must fit out whole: a cut path would name another file. */
    const size_t stem_len = ends_with(ref, ".json") ? ref_len - 5 : ref_len;
    const int w = stem_len < n ? snprintf(out, n, "%s/%s/%.*s.json", dd, kind_dirs[kind],
                                          (int)stem_len, ref)
                               : -1;
    if (w < 0 || (size_t)w >= n)
        return pm_fail(err, PM_ERR_IO, NULL, NULL,
                       "the path of the bundled %s \"%.40s\" under the data folder \"%.40s...\" "
                       "(%zu bytes) is longer than the %zu bytes this reader handles: use a "
                       "shorter data folder (PRESERVE_MODEL_DATA) or name",
                       pm_file_kind_name(kind), ref, dd, strlen(dd), n - 1);
    if (is_file(out))
        return PM_OK;
    /* A bundled file that exists but cannot be used is that, not a missing name. */
    if (stat(out, &st) == 0)
        return pm_fail(err, PM_ERR_IO, out, NULL, "not a regular file");
    if (errno != ENOENT && errno != ENOTDIR)
        return pm_fail(err, PM_ERR_IO, out, NULL, "%s", errno_words(errno));
    char avail[400] = "";
    char **names = NULL;
    size_t count = 0;
    if (pm_data_list(dd, kind, &names, &count, NULL) == PM_OK) {
        for (size_t i = 0; i < count; i++) {
            strncat(avail, i ? ", " : "", sizeof avail - strlen(avail) - 1);
            strncat(avail, names[i], sizeof avail - strlen(avail) - 1);
        }
        pm_names_free(names, count);
    }
    if (!avail[0])
        return pm_fail(err, PM_ERR_NOT_FOUND, NULL, NULL,
                       "no file \"%s\" and no bundled %s of that name (none found in %s: set "
                       "PRESERVE_MODEL_DATA to the folder that holds %s/)",
                       ref, pm_file_kind_name(kind), dd, kind_dirs[kind]);
    return pm_fail(err, PM_ERR_NOT_FOUND, NULL, NULL,
                   "no file \"%s\" and no bundled %s of that name (bundled: %s)", ref,
                   pm_file_kind_name(kind), avail);
}

/* ---------------------------------------------------------------- components */

/* One component of a scenario while it is assembled. */
typedef struct component {
    cJSON *json;         /* owned */
    char file[PM_PATH_BYTES]; /* where its keys come from by default */
    char path[64];       /* "$" in its own file, "$.cluster" inline */
    pm_key_origin origins[MAX_ORIGINS];
    size_t n_origins;
} component;

/* Records that key came from file (at path there), or from owned, a label the origin then owns
 * (freed by component_free). Refused rather than left out when the record is full: a key
 * without its origin would be named as the component's file's in errors and in `resolve`.
 * file is borrowed: the scenario's path, alive while it loads. */
static pm_status add_origin(component *c, const char *key, const char *file, char *owned,
                            const char *path, pm_error *err)
{
    if (c->n_origins >= MAX_ORIGINS) {
        pm_free(owned);
        return pm_fail(err, PM_ERR_UNSUPPORTED, file, path,
                       "more than %d keys of one component are given outside its file (here "
                       "\"%s\"): give them in a file of their own",
                       MAX_ORIGINS, key);
    }
    pm_key_origin *o = &c->origins[c->n_origins++];
    pm_strlcpy(o->key, key, sizeof o->key);
    o->file = owned ? owned : file;
    o->owned = owned;
    pm_strlcpy(o->path, path, sizeof o->path);
    return PM_OK;
}

static void component_free(component *c)
{
    cJSON_Delete(c->json);
    c->json = NULL;
    for (size_t i = 0; i < c->n_origins; i++)
        pm_free(c->origins[i].owned);
    c->n_origins = 0;
}

/* A HuggingFace config.json has no "kind" but some of these keys. */
static bool looks_like_hf(const cJSON *root)
{
    static const char *const keys[] = {"hidden_size", "n_embd", "d_model", "model_type",
                                       "architectures", "transformers_version"};
    for (size_t i = 0; i < PM_ARRAY_LEN(keys); i++)
        if (cJSON_GetObjectItemCaseSensitive(root, keys[i]))
            return true;
    return false;
}

static pm_status check_kind(const cJSON *root, const char *file, pm_file_kind want,
                            pm_error *err)
{
    if (!cJSON_IsObject(root))
        return pm_fail(err, PM_ERR_TYPE, file, "$", "expected a JSON object (got %s)",
                       pm_json_type_name(root));
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "kind");
    if (!k) {
        if (want == PM_KIND_MODEL && looks_like_hf(root))
            return PM_OK; /* a HuggingFace config.json */
        if (looks_like_hf(root))
            return pm_fail(err, PM_ERR_VALUE, file, "$",
                           "a HuggingFace config.json (a model) where a %s file was expected: "
                           "give it as the model (the override model=FILE)",
                           pm_file_kind_name(want));
        return pm_fail(err, PM_ERR_MISSING, file, "$.kind",
                       "missing required key \"kind\" (expected \"%s\")", pm_file_kind_name(want));
    }
    if (!cJSON_IsString(k))
        return pm_fail(err, PM_ERR_TYPE, file, "$.kind", "expected a string (got %s)",
                       pm_json_type_name(k));
    if (strcmp(k->valuestring, kind_names[want]) != 0) {
        /* Where a file of the kind it is goes instead. */
        static const struct {
            const char *kind, *where;
        } goes[] = {{"model", "the override model=FILE"},
                    {"accelerator", "the override accelerator=FILE"},
                    {"cluster", "the override cluster=FILE"},
                    {"workload", "the override workload=FILE"},
                    {"runtime", "the override runtime=FILE"},
                    {"scenario", "the scenario to load, not an override"}};
        const char *where = NULL;
        for (size_t i = 0; i < PM_ARRAY_LEN(goes); i++)
            if (strcmp(k->valuestring, goes[i].kind) == 0)
                where = goes[i].where;
        char hint[96] = "";
        if (where)
            snprintf(hint, sizeof hint, ": give it as the %s (%s)", k->valuestring, where);
        return pm_fail(err, PM_ERR_VALUE, file, "$.kind",
                       "expected a %s file here (got a \"%s\" file)%s", kind_names[want],
                       k->valuestring, hint);
    }
    return PM_OK;
}

/* A relative path that a scenario file names, resolved in that file's folder: into out when
 * sfile is a file (not an override) in a folder and the file there exists. */
static bool beside_scenario(const char *sfile, const char *ref, char *out, size_t n)
{
    const char *slash = sfile ? strrchr(sfile, '/') : NULL;
    if (!slash || ref[0] == '/' || pm_file_is_override(sfile) ||
        !(strchr(ref, '/') || ends_with(ref, ".json")))
        return false;
    const int w = snprintf(out, n, "%.*s/%s", (int)(slash - sfile), sfile, ref);
    return w > 0 && (size_t)w < n && is_file(out);
}

/* The component of kind named ref (a bundled name or a path; a relative path first in the
 * folder of sfile, the scenario file naming it, when not NULL) into c. */
static pm_status load_named(const char *data_dir, pm_file_kind kind, const char *ref,
                            const char *sfile, component *c, pm_error *err)
{
    char path[PM_PATH_BYTES];
    pm_status st = beside_scenario(sfile, ref, path, sizeof path)
                       ? PM_OK
                       : pm_resolve_ref(data_dir, kind, ref, path, sizeof path, err);
    if (st != PM_OK)
        return st;
    if ((st = pm_json_load_file(path, &c->json, err)) != PM_OK)
        return st;
    pm_strlcpy(c->file, path, sizeof c->file);
    pm_strlcpy(c->path, "$", sizeof c->path);
    return check_kind(c->json, path, kind, err);
}

/* Sets obj[key] = item, replacing an existing member in place. cJSON copies the key, which can
 * fail: then item is freed and false returned, rather than the value silently left out. cJSON
 * 1.7.15's replace does not check its copy and reports success with a member whose key is
 * NULL (found by tests/test_alloc.c), so the key is checked here. */
static bool put_item(cJSON *obj, const char *key, cJSON *item)
{
    if (!cJSON_GetObjectItemCaseSensitive(obj, key)) {
        if (cJSON_AddItemToObject(obj, key, item))
            return true;
        cJSON_Delete(item);
        return false;
    }
    if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item)) {
        cJSON_Delete(item);
        return false;
    }
    if (!item->string) {
        cJSON_Delete(cJSON_DetachItemViaPointer(obj, item));
        return false;
    }
    return true;
}

/* Resolves the scenario's key `key` (a name, a path, an inline object, or "from" + overrides)
 * into c. */
static pm_status resolve_component_at(const char *data_dir, cJSON *scenario, const char *sfile,
                                      const char *key, const char *path, pm_file_kind kind,
                                      component *c, pm_error *err);

static pm_status resolve_component(const char *data_dir, cJSON *scenario, const char *sfile,
                                   pm_file_kind kind, component *c, pm_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "$.%s", kind_names[kind]);
    return resolve_component_at(data_dir, scenario, sfile, kind_names[kind], path, kind, c, err);
}

/* The component of kind at parent's key (JSON path `path`): a name, a path, or an object
 * (inline, or "from" a file with keys replaced). */
static pm_status resolve_component_at(const char *data_dir, cJSON *scenario, const char *sfile,
                                      const char *key, const char *path, pm_file_kind kind,
                                      component *c, pm_error *err)
{
    cJSON *it = cJSON_GetObjectItemCaseSensitive(scenario, key);
    if (!it)
        return pm_fail(err, PM_ERR_MISSING, sfile, path,
                       "missing required key \"%s\" (a name, a path or an object)", key);
    if (cJSON_IsString(it)) {
        pm_status st = load_named(data_dir, kind, it->valuestring, sfile, c, err);
        /* A name that resolves to nothing is the scenario's error, at its key. */
        if (st != PM_OK && err && !err->file[0]) {
            pm_strlcpy(err->file, sfile, sizeof err->file);
            pm_strlcpy(err->path, path, sizeof err->path);
        }
        return st;
    }
    if (!cJSON_IsObject(it))
        return pm_fail(err, PM_ERR_TYPE, sfile, path,
                       "expected a name, a path or an object (got %s)", pm_json_type_name(it));
    const cJSON *from = cJSON_GetObjectItemCaseSensitive(it, "from");
    if (!from) {
        c->json = cJSON_Duplicate(it, true);
        if (!c->json)
            return pm_fail(err, PM_ERR_NOMEM, sfile, path, "out of memory");
        pm_strlcpy(c->file, sfile, sizeof c->file);
        pm_strlcpy(c->path, path, sizeof c->path);
        return PM_OK;
    }
    if (!cJSON_IsString(from))
        return pm_fail(err, PM_ERR_TYPE, sfile, path, "\"from\" must name a file (got %s)",
                       pm_json_type_name(from));
    pm_status st = load_named(data_dir, kind, from->valuestring, sfile, c, err);
    if (st != PM_OK) {
        if (err && !err->file[0]) {
            pm_strlcpy(err->file, sfile, sizeof err->file);
            snprintf(err->path, sizeof err->path, "%s.from", path);
        }
        return st;
    }
    for (const cJSON *k = it->child; k; k = k->next) {
        if (strcmp(k->string, "from") == 0)
            continue;
        cJSON *copy = cJSON_Duplicate(k, true);
        if (!copy)
            return pm_fail(err, PM_ERR_NOMEM, sfile, path, "out of memory");
        /* A quantity given in another unit replaces the inherited one. */
        char base[128], b2[128];
        const char *u;
        if (pm_unit_split_key(k->string, base, sizeof base, &u)) {
            for (cJSON *e = c->json->child; e;) {
                cJSON *next = e->next;
                if (pm_unit_split_key(e->string, b2, sizeof b2, &u) && strcmp(base, b2) == 0)
                    cJSON_DeleteItemFromObjectCaseSensitive(c->json, e->string);
                e = next;
            }
        }
        if (!put_item(c->json, k->string, copy))
            return pm_fail(err, PM_ERR_NOMEM, sfile, path, "out of memory");
        if ((st = add_origin(c, k->string, sfile, NULL, path, err)) != PM_OK)
            return st;
    }
    return PM_OK;
}

/* ---------------------------------------------------------------- overrides */

/* Whether the key at the end of jpath is a token count, whose k is 1024 (pm_token_count_parse). */
static bool is_token_key(const char *jpath)
{
    static const char *const keys[] = {"seq_len", "sliding_window", "max_position_embeddings"};
    const char *dot = strrchr(jpath, '.');
    const char *key = dot ? dot + 1 : jpath;
    for (size_t i = 0; i < PM_ARRAY_LEN(keys); i++)
        if (strcmp(key, keys[i]) == 0)
            return true;
    return false;
}

/* Parses the value of "path=value" into *out: a JSON scalar when it is one, a count with a
 * multiplier ("16k" is not the JSON number 16; a token count's k is 1024), else a string. The
 * strict parser tells a value
 * that is not JSON from an allocation failure and from a JSON number out of range (1e999). */
static pm_status override_value(const char *text, const char *label, const char *jpath,
                                cJSON **out, pm_error *err)
{
    *out = NULL;
    cJSON *v = NULL;
    pm_error perr;
    pm_status st = pm_json_parse(text, strlen(text), PM_ERROR_FILE_OVERRIDE, &v, &perr);
    if (st == PM_ERR_NOMEM)
        return pm_fail(err, PM_ERR_NOMEM, PM_ERROR_FILE_OVERRIDE, NULL, "out of memory");
    if (st == PM_ERR_RANGE && perr.line == 0) { /* not a position: a number, not finite */
        char where[300];
        snprintf(where, sizeof where, PM_ERROR_FILE_OVERRIDE " %s", label);
        return pm_fail(err, PM_ERR_RANGE, where, jpath, "%s", perr.message);
    }
    if (st == PM_OK && !cJSON_IsObject(v) && !cJSON_IsArray(v)) {
        *out = v;
        return PM_OK;
    }
    cJSON_Delete(v);
    double x;
    st = is_token_key(jpath) ? pm_token_count_parse(text, &x, &perr)
                             : pm_quantity_parse(text, PM_DIM_NONE, &x, &perr);
    char *end = NULL;
    double lead = strtod(text, &end);
    if (st == PM_ERR_RANGE && end != text && isfinite(lead)) {
        /* A number whose multiplier overflows ("1e308Ki"), not a string. */
        char where[300];
        snprintf(where, sizeof where, PM_ERROR_FILE_OVERRIDE " %s", label);
        return pm_fail(err, PM_ERR_RANGE, where, jpath, "%s", perr.message);
    }
    if (st == PM_OK)
        *out = cJSON_CreateNumber(x);
    else
        *out = cJSON_CreateString(text);
    return *out ? PM_OK : pm_fail(err, PM_ERR_NOMEM, PM_ERROR_FILE_OVERRIDE, NULL, "out of memory");
}

/* Sets obj.<dotted path> = value, creating intermediate objects. */
static pm_status set_path(cJSON *obj, const char *dotted, const char *value, const char *label,
                          component *comp, const char *comp_path, pm_error *err)
{
    char buf[256];
    pm_strlcpy(buf, dotted, sizeof buf);
    char *seg = buf, *dot;
    cJSON *cur = obj;
    while ((dot = strchr(seg, '.')) != NULL) {
        *dot = '\0';
        if (!seg[0])
            return pm_fail(err, PM_ERR_INVALID_ARG, PM_ERROR_FILE_OVERRIDE, NULL,
                           "empty key in \"%s\"", label);
        cJSON *next = cJSON_GetObjectItemCaseSensitive(cur, seg);
        if (!next) {
            next = cJSON_AddObjectToObject(cur, seg);
            if (!next)
                return pm_fail(err, PM_ERR_NOMEM, PM_ERROR_FILE_OVERRIDE, NULL, "out of memory");
        } else if (!cJSON_IsObject(next)) {
            return pm_fail(err, PM_ERR_TYPE, PM_ERROR_FILE_OVERRIDE, NULL,
                           "\"%s\": \"%s\" is %s, not an object", label, seg,
                           pm_json_type_name(next));
        }
        cur = next;
        seg = dot + 1;
    }
    if (!seg[0])
        return pm_fail(err, PM_ERR_INVALID_ARG, PM_ERROR_FILE_OVERRIDE, NULL,
                       "empty key in \"%s\"", label);
    cJSON *v = NULL;
    char jpath[256];
    snprintf(jpath, sizeof jpath, "%s.%s", comp_path, dotted);
    pm_status st = override_value(value, label, jpath, &v, err);
    if (st != PM_OK)
        return st;
    char base[128], b2[128];
    const char *u;
    if (pm_unit_split_key(seg, base, sizeof base, &u)) {
        for (cJSON *e = cur->child; e;) {
            cJSON *next = e->next;
            if (strcmp(e->string, seg) != 0 && pm_unit_split_key(e->string, b2, sizeof b2, &u) &&
                strcmp(base, b2) == 0)
                cJSON_DeleteItemFromObjectCaseSensitive(cur, e->string);
            e = next;
        }
    }
    if (!put_item(cur, seg, v))
        return pm_fail(err, PM_ERR_NOMEM, PM_ERROR_FILE_OVERRIDE, NULL, "out of memory");
    if (comp) { /* a nested key under its dotted name, written in its parent object */
        /* The override names itself, whole. */
        char parent[256];
        const size_t len = strlen(label) + sizeof PM_ERROR_FILE_OVERRIDE " ";
        char *lbl = pm_malloc(len);
        if (!lbl)
            return pm_fail(err, PM_ERR_NOMEM, PM_ERROR_FILE_OVERRIDE, NULL, "out of memory");
        snprintf(lbl, len, PM_ERROR_FILE_OVERRIDE " %s", label);
        const size_t lead = (size_t)(seg - buf); /* "outer." before the last segment */
        if (lead > 0)
            snprintf(parent, sizeof parent, "%s.%.*s", comp_path, (int)(lead - 1), dotted);
        else
            pm_strlcpy(parent, comp_path, sizeof parent);
        return add_origin(comp, dotted, NULL, lbl, parent, err); /* dotted: seg at the top */
    }
    return PM_OK;
}

static pm_status split_override(const char *ov, char *key, size_t n, const char **value,
                                pm_error *err)
{
    const char *eq = strchr(ov, '=');
    if (!eq || eq == ov)
        return pm_fail(err, PM_ERR_INVALID_ARG, PM_ERROR_FILE_OVERRIDE, NULL,
                       "expected key.path=value (got \"%s\")", ov);
    size_t len = (size_t)(eq - ov);
    if (len >= n)
        return pm_fail(err, PM_ERR_INVALID_ARG, PM_ERROR_FILE_OVERRIDE, NULL,
                       "key too long in \"%s\"", ov);
    memcpy(key, ov, len);
    key[len] = '\0';
    *value = eq + 1;
    return PM_OK;
}

/* ---------------------------------------------------------------- readers on components */

typedef pm_status (*reader_fn)(pm_obj *, void *);

static pm_status read_model_v(pm_obj *o, void *out) { return pm_model_read(o, out); }
static pm_status read_accel_v(pm_obj *o, void *out) { return pm_accelerator_read(o, out); }
static pm_status read_cluster_v(pm_obj *o, void *out) { return pm_cluster_read(o, out); }
static pm_status read_workload_v(pm_obj *o, void *out) { return pm_workload_read(o, out); }

static pm_status read_runtime_v(pm_obj *o, void *out) { return pm_runtime_read(o, out); }
static pm_status read_lengths_v(pm_obj *o, void *out) { return pm_lengths_read(o, out); }

/* By kind; the scenario and the graph have readers of their own. */
static const reader_fn readers[PM_KIND_COUNT] = {read_model_v,    read_accel_v, read_cluster_v,
                                                 read_workload_v, NULL,         NULL,
                                                 read_runtime_v,  read_lengths_v};

static pm_status read_component(component *c, pm_file_kind kind, pm_provenance *prov, void *out,
                                pm_error *err)
{
    pm_obj o;
    pm_obj_init(&o, c->json, c->file, c->path, err);
    o.prov = prov;
    /* Recorded paths name the component even when it came from its own file. */
    snprintf(o.prov_root, sizeof o.prov_root, "$.%s", kind_names[kind]);
    o.origins = c->origins;
    o.n_origins = c->n_origins;
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(c->json, "source");
    if (cJSON_IsString(src))
        o.file_source = src->valuestring;
    return readers[kind](&o, out);
}

/* ---------------------------------------------------------------- scenario */

static void components_free(component *cs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        component_free(&cs[i]);
}

static const char *const sharding_names[] = {"megatron", "ideal"};

/* The last of the n_ov overrides that set path ("$.a.b"): the key itself, or with below one
 * under it too (an unknown key only an override made: "foo.bar=1" makes "foo"); -1: none. */
static long override_of(const pm_load_opts *opts, size_t n_ov, const char *path, bool below)
{
    if (strncmp(path, "$.", 2) != 0)
        return -1;
    const size_t n = strlen(path + 2);
    for (size_t i = n_ov; i-- > 0;) {
        char key[256];
        const char *val = NULL;
        if (split_override(opts->overrides[i], key, sizeof key, &val, NULL) == PM_OK &&
            strncmp(path + 2, key, n) == 0 && (key[n] == '\0' || (below && key[n] == '.')))
            return (long)i;
    }
    return -1;
}

/* Names an override as err's place ("override KEY=VALUE"): the last that set err's path or a
 * key below it, when the error names no file yet or always when replace is true (a key only
 * an override wrote); or, sfile not NULL, the last that set err's path itself when the error
 * names the scenario's file sfile (a key of the scenario's own blocks, its "speculative", is
 * recorded as the file's though an override set it: overrides apply over the file). */
static void blame_override(const pm_load_opts *opts, size_t n_ov, const char *sfile,
                           pm_error *err, bool replace)
{
    if (!err)
        return;
    long i = -1;
    if (!err->file[0] || replace)
        i = override_of(opts, n_ov, err->path, true);
    else if (sfile && strcmp(err->file, sfile) == 0)
        i = override_of(opts, n_ov, err->path, false);
    if (i >= 0)
        snprintf(err->file, sizeof err->file, PM_ERROR_FILE_OVERRIDE " %s", opts->overrides[i]);
}

/* Overrides that replace a whole component go first: "model=llama3-8b". */
static pm_status apply_component_overrides(cJSON *root, const pm_load_opts *opts, size_t n_ov,
                                           pm_error *err)
{
    pm_status st;
    for (size_t i = 0; i < n_ov; i++) {
        char key[256];
        const char *val = NULL;
        if ((st = split_override(opts->overrides[i], key, sizeof key, &val, err)) != PM_OK)
            return st;
        if (strchr(key, '.'))
            continue;
        for (int k = 0; k < PM_KIND_COUNT; k++) {
            if (k == PM_KIND_SCENARIO || k == PM_KIND_GRAPH || strcmp(key, kind_names[k]) != 0)
                continue;
            /* A name that resolves to nothing is the override's error, not the scenario's. */
            char path[PM_PATH_BYTES];
            if ((st = pm_resolve_ref(opts->data_dir, (pm_file_kind)k, val, path, sizeof path,
                                     err)) != PM_OK) {
                if (err) {
                    snprintf(err->file, sizeof err->file, PM_ERROR_FILE_OVERRIDE " %s",
                             opts->overrides[i]);
                    snprintf(err->path, sizeof err->path, "$.%s", kind_names[k]); /* = key */
                }
                return st;
            }
            cJSON *name = cJSON_CreateString(val);
            if (!name || !put_item(root, key, name))
                return pm_fail(err, PM_ERR_NOMEM, PM_ERROR_FILE_OVERRIDE, NULL, "out of memory");
        }
    }
    return PM_OK;
}

/* Then the overrides of single keys, in a component ("cluster.devices=4") or in the
 * scenario itself. */
static pm_status apply_key_overrides(cJSON *root, component *comps, const pm_load_opts *opts,
                                     size_t n_ov, pm_error *err)
{
    for (size_t i = 0; i < n_ov; i++) {
        char key[256];
        const char *val = NULL;
        split_override(opts->overrides[i], key, sizeof key, &val, NULL);
        char *dot = strchr(key, '.');
        int target = -1;
        if (dot) {
            *dot = '\0';
            for (int k = 0; k < 4; k++)
                if (strcmp(key, kind_names[k]) == 0)
                    target = k;
            if (strcmp(key, kind_names[PM_KIND_RUNTIME]) == 0) {
                if (!comps[4].json)
                    return pm_fail(err, PM_ERR_MISSING, PM_ERROR_FILE_OVERRIDE, "$.runtime",
                                   "%s: the scenario names no runtime (set runtime=NAME first)",
                                   opts->overrides[i]);
                target = 4; /* the runtime's slot in comps (scenario_from_json) */
            }
            if (target < 0)
                *dot = '.';
        } else {
            bool whole = strcmp(key, kind_names[PM_KIND_RUNTIME]) == 0;
            for (int k = 0; k < 4; k++)
                whole = whole || strcmp(key, kind_names[k]) == 0;
            if (whole)
                continue;
        }
        char cpath[64];
        snprintf(cpath, sizeof cpath, "$.%s",
                 target == 4 ? kind_names[PM_KIND_RUNTIME] : target >= 0 ? kind_names[target] : "");
        pm_status st = target >= 0 ? set_path(comps[target].json, dot + 1, val,
                                              opts->overrides[i], &comps[target], cpath, err)
                                   : set_path(root, key, val, opts->overrides[i], NULL, "$", err);
        if (st != PM_OK)
            return st;
    }
    return PM_OK;
}

/* The scenario's own keys: name, sharding and options. */
static pm_status read_scenario_keys(const cJSON *root, const char *sfile, pm_provenance *prov,
                                    pm_scenario *out, pm_error *err)
{
    pm_obj o;
    pm_obj_init(&o, root, sfile, "$", err);
    o.prov = prov;
    /* A scenario has no "source": its description says why it chose what it did. */
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
    if (cJSON_IsString(desc))
        o.file_source = desc->valuestring;
    for (int k = 0; k < 4; k++)
        pm_obj_declare(&o, kind_names[k], PM_DIM_NONE);
    pm_obj_declare(&o, kind_names[PM_KIND_RUNTIME], PM_DIM_NONE);
    pm_obj_declare(&o, "speculative", PM_DIM_NONE); /* read_speculative's */
    pm_obj_declare(&o, "kind", PM_DIM_NONE);
    pm_obj_declare(&o, "description", PM_DIM_NONE);
    const char *name = NULL;
    int sharding = PM_SHARDING_MEGATRON;
    pm_status st = pm_obj_string(&o, "name", true, &name);
    if (st == PM_OK)
        st = pm_obj_name_fits(&o, "name", name, sizeof out->name);
    if (st == PM_OK)
        st = pm_obj_enum(&o, "sharding", false, sharding_names, 2, &sharding);
    pm_obj opt;
    bool has_opt = false;
    if (st == PM_OK)
        st = pm_obj_child(&o, "options", false, &opt, &has_opt);
    if (st == PM_OK && has_opt) {
        long chunks = 0;
        st = pm_obj_bool(&opt, "hbm_sharing", false, &out->options.hbm_sharing);
        if (st == PM_OK)
            st = pm_obj_int(&opt, "fused_chunks", false, 0, 1024, &chunks);
        if (st == PM_OK)
            st = pm_obj_finish(&opt);
        out->options.fused_chunks = (int)chunks;
    }
    if (st == PM_OK)
        st = pm_obj_finish(&o);
    if (st != PM_OK)
        return st;
    pm_strlcpy(out->name, name, sizeof out->name);
    out->options.sharding = (pm_sharding)sharding;
    return PM_OK;
}

/* The scenario's optional "speculative" block (issue 45): its keys (read_spec.c), and its
 * draft model resolved as the "model" key is (a bundled name, a path, or an object). The draft
 * records no provenance: the target's model owns the $.model paths. */
static pm_status read_speculative(const char *dd, cJSON *root, const char *sfile,
                                  pm_provenance *prov, pm_speculation *out, pm_error *err)
{
    cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "speculative");
    if (!it)
        return PM_OK;
    pm_obj o;
    pm_obj_init(&o, it, sfile, "$.speculative", err);
    o.prov = prov;
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(it, "source");
    if (cJSON_IsString(src))
        o.file_source = src->valuestring; /* the rates' source sources the block */
    if (!cJSON_IsObject(it))
        return pm_fail(err, PM_ERR_TYPE, sfile, "$.speculative", "expected an object (got %s)",
                       pm_json_type_name(it));
    pm_status st = pm_read_speculation(&o, out);
    if (st != PM_OK || !cJSON_GetObjectItemCaseSensitive(it, "draft_model"))
        return st;
    component c;
    memset(&c, 0, sizeof c);
    st = resolve_component_at(dd, it, sfile, "draft_model", "$.speculative.draft_model",
                              PM_KIND_MODEL, &c, err);
    if (st == PM_OK)
        st = read_component(&c, PM_KIND_MODEL, NULL, &out->draft, err);
    component_free(&c);
    return st;
}

static pm_status scenario_from_json(cJSON *root, const char *sfile, const pm_load_opts *opts,
                                    pm_scenario *out, pm_error *err)
{
    const char *dd = opts && opts->data_dir ? opts->data_dir : pm_default_data_dir();
    size_t n_ov = opts ? opts->n_overrides : 0;
    pm_status st = check_kind(root, sfile, PM_KIND_SCENARIO, err);
    if (st != PM_OK)
        return st;
    if ((st = apply_component_overrides(root, opts, n_ov, err)) != PM_OK)
        return st;
    /* The four required components, then the optional runtime in slot 4. */
    component comps[5];
    memset(comps, 0, sizeof comps);
    for (int k = 0; k < 5; k++) {
        const pm_file_kind kind = k < 4 ? (pm_file_kind)k : PM_KIND_RUNTIME;
        if (k == 4 && !cJSON_GetObjectItemCaseSensitive(root, kind_names[kind]))
            break;
        st = resolve_component(dd, root, sfile, kind, &comps[k], err);
        if (st != PM_OK) {
            components_free(comps, 5);
            return st;
        }
    }
    /* A block of the scenario's own that only overrides write (--spec-tokens without the
     * file giving "speculative"): a key missing from it is the overrides' to give. */
    const bool file_spec = cJSON_GetObjectItemCaseSensitive(root, "speculative") != NULL;
    if ((st = apply_key_overrides(root, comps, opts, n_ov, err)) != PM_OK) {
        components_free(comps, 5);
        return st;
    }
    pm_provenance *prov = pm_calloc(1, sizeof *prov);
    if (!prov) {
        components_free(comps, 5);
        return pm_fail(err, PM_ERR_NOMEM, sfile, NULL, "out of memory");
    }
    memset(out, 0, sizeof *out);
    void *targets[5] = {&out->model, &out->accel, &out->cluster, &out->workload, &out->runtime};
    for (int k = 0; k < 5 && st == PM_OK; k++)
        if (comps[k].json)
            st = read_component(&comps[k], k < 4 ? (pm_file_kind)k : PM_KIND_RUNTIME, prov,
                                targets[k], err);
    components_free(comps, 5);
    /* A runtime that fixes the allreduce implementation decides the cluster's algorithm. */
    if (st == PM_OK && out->runtime.present && out->runtime.allreduce_given)
        out->cluster.algorithm = out->runtime.allreduce;
    if (st == PM_OK && (st = read_scenario_keys(root, sfile, prov, out, err)) != PM_OK)
        blame_override(opts, n_ov, NULL, err, true); /* "foo=1": foo is the override's */
    if (st == PM_OK && (st = read_speculative(dd, root, sfile, prov, &out->spec, err)) != PM_OK) {
        blame_override(opts, n_ov, sfile, err, false);
        const long i = override_of(opts, n_ov, "$.speculative", true);
        if (err && st == PM_ERR_MISSING && !file_spec && i >= 0)
            snprintf(err->file, sizeof err->file, PM_ERROR_FILE_OVERRIDE " %s",
                     opts->overrides[i]);
    }
    if (st != PM_OK) {
        pm_provenance_free(prov);
        return st;
    }
    out->provenance = prov;
    st = pm_scenario_check(out, err);
    if (st != PM_OK) {
        /* The check names a path: the file (or override) that gave its value, else the
         * scenario's. A value with no provenance item (a datatype, a name) overridden is
         * named by the last override of that path. */
        for (size_t i = prov->n; err && !err->file[0] && i-- > 0;)
            if (prov->items[i].file && strcmp(prov->items[i].path, err->path) == 0)
                pm_strlcpy(err->file, prov->items[i].file, sizeof err->file);
        blame_override(opts, n_ov, sfile, err, false);
        if (err && !err->file[0])
            pm_strlcpy(err->file, sfile, sizeof err->file);
        pm_provenance_free(prov);
        out->provenance = NULL;
    }
    return st;
}

/* The load options as the header states them: overrides NULL only with a count of 0, and no
 * NULL string among them. */
static pm_status check_opts(const pm_load_opts *opts, pm_error *err)
{
    if (!opts || opts->n_overrides == 0)
        return PM_OK;
    if (!opts->overrides)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                       "pm_load_opts: overrides is NULL with n_overrides %zu",
                       opts->n_overrides);
    for (size_t i = 0; i < opts->n_overrides; i++)
        if (!opts->overrides[i])
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL,
                           "pm_load_opts: override %zu is NULL", i);
    return PM_OK;
}

pm_status pm_scenario_load(const char *ref, const pm_load_opts *opts, pm_scenario *out,
                           pm_error *err)
{
    pm_error_clear(err);
    if (!ref || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL scenario reference or output");
    memset(out, 0, sizeof *out);
    pm_status ck = check_opts(opts, err);
    if (ck != PM_OK)
        return ck;
    char path[PM_PATH_BYTES];
    pm_status st = pm_resolve_ref(opts ? opts->data_dir : NULL, PM_KIND_SCENARIO, ref, path,
                                  sizeof path, err);
    if (st != PM_OK)
        return st;
    cJSON *root = NULL;
    if ((st = pm_json_load_file(path, &root, err)) != PM_OK)
        return st;
    st = scenario_from_json(root, path, opts, out, err);
    cJSON_Delete(root);
    if (st != PM_OK)
        memset(out, 0, sizeof *out); /* nothing half-read for a caller to trust */
    return st;
}

void pm_scenario_release(pm_scenario *s)
{
    if (!s)
        return;
    pm_provenance_free(s->provenance);
    s->provenance = NULL;
}

size_t pm_scenario_param_count(const pm_scenario *s)
{
    return s && s->provenance ? s->provenance->n : 0;
}

const pm_param_info *pm_scenario_param(const pm_scenario *s, size_t i)
{
    if (!s || !s->provenance || i >= s->provenance->n)
        return NULL;
    return &s->provenance->items[i];
}

/* ---------------------------------------------------------------- single components */

static pm_status component_load(pm_file_kind kind, const char *ref, const pm_load_opts *opts,
                                void *out, size_t out_size, pm_error *err)
{
    pm_error_clear(err);
    if (!ref || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL reference or output");
    pm_status ck = check_opts(opts, err);
    if (ck != PM_OK)
        return ck;
    component c;
    memset(&c, 0, sizeof c);
    pm_status st = load_named(opts ? opts->data_dir : NULL, kind, ref, NULL, &c, err);
    for (size_t i = 0; st == PM_OK && opts && i < opts->n_overrides; i++) {
        char key[256];
        const char *val = NULL;
        st = split_override(opts->overrides[i], key, sizeof key, &val, err);
        if (st == PM_OK)
            st = set_path(c.json, key, val, opts->overrides[i], &c, "$", err);
    }
    if (st == PM_OK)
        st = read_component(&c, kind, NULL, out, err);
    component_free(&c);
    if (st != PM_OK)
        memset(out, 0, out_size); /* nothing half-read for a caller to trust */
    return st;
}

pm_status pm_model_load(const char *ref, const pm_load_opts *opts, pm_model *out, pm_error *err)
{
    return component_load(PM_KIND_MODEL, ref, opts, out, sizeof(pm_model), err);
}

pm_status pm_accelerator_load(const char *ref, const pm_load_opts *opts, pm_accelerator *out,
                              pm_error *err)
{
    return component_load(PM_KIND_ACCELERATOR, ref, opts, out, sizeof(pm_accelerator), err);
}

pm_status pm_cluster_load(const char *ref, const pm_load_opts *opts, pm_cluster *out,
                          pm_error *err)
{
    return component_load(PM_KIND_CLUSTER, ref, opts, out, sizeof(pm_cluster), err);
}

pm_status pm_workload_load(const char *ref, const pm_load_opts *opts, pm_workload *out,
                           pm_error *err)
{
    return component_load(PM_KIND_WORKLOAD, ref, opts, out, sizeof(pm_workload), err);
}

pm_status pm_lengths_load(const char *ref, const pm_load_opts *opts, pm_lengths *out,
                          pm_error *err)
{
    return component_load(PM_KIND_LENGTHS, ref, opts, out, sizeof(pm_lengths), err);
}

pm_status pm_file_validate(const char *path, const pm_load_opts *opts, pm_file_kind *kind_out,
                           pm_error *err)
{
    pm_error_clear(err);
    if (!path)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL path");
    pm_status ck = check_opts(opts, err);
    if (ck != PM_OK)
        return ck;
    cJSON *root = NULL;
    pm_status st = pm_json_load_file(path, &root, err);
    if (st != PM_OK)
        return st;
    pm_file_kind kind = PM_KIND_COUNT;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "kind");
    if (!cJSON_IsObject(root)) {
        st = pm_fail(err, PM_ERR_TYPE, path, "$", "expected a JSON object (got %s)",
                     pm_json_type_name(root));
    } else if (cJSON_IsString(k)) {
        for (int i = 0; i < PM_KIND_COUNT; i++)
            if (strcmp(k->valuestring, kind_names[i]) == 0)
                kind = (pm_file_kind)i;
        if (kind == PM_KIND_COUNT)
            st = pm_fail(err, PM_ERR_VALUE, path, "$.kind",
                         "expected one of model, accelerator, cluster, workload, scenario, graph, "
                         "runtime, lengths (got \"%s\")",
                         k->valuestring);
    } else if (k) {
        st = pm_fail(err, PM_ERR_TYPE, path, "$.kind", "expected a string (got %s)",
                     pm_json_type_name(k));
    } else if (looks_like_hf(root)) {
        kind = PM_KIND_MODEL;
    } else {
        st = pm_fail(err, PM_ERR_MISSING, path, "$.kind",
                     "missing required key \"kind\" (model, accelerator, cluster, workload or "
                     "scenario)");
    }
    if (kind_out)
        *kind_out = kind;
    if (st == PM_OK) {
        if (kind == PM_KIND_SCENARIO) {
            pm_scenario s;
            st = scenario_from_json(root, path, opts, &s, err);
            if (st == PM_OK)
                pm_scenario_release(&s);
        } else if (kind == PM_KIND_GRAPH) {
            char *text = cJSON_PrintUnformatted(root);
            pm_graph *g = pm_graph_alloc();
            if (!text || !g)
                st = pm_fail(err, PM_ERR_NOMEM, path, NULL, "out of memory");
            else
                st = pm_graph_from_json(text, strlen(text), path, g, err);
            pm_graph_free(g);
            cJSON_free(text);
        } else {
            component c;
            memset(&c, 0, sizeof c);
            c.json = root;
            pm_strlcpy(c.file, path, sizeof c.file);
            pm_strlcpy(c.path, "$", sizeof c.path);
            union {
                pm_model m;
                pm_accelerator a;
                pm_cluster c;
                pm_workload w;
                pm_runtime r;
                pm_lengths l;
            } tmp;
            st = read_component(&c, kind, NULL, &tmp, err);
        }
    }
    cJSON_Delete(root);
    return st;
}

bool pm_scenario_platform_mismatch(const pm_scenario *s, char *note, size_t n)
{
    if (!s || !s->accel.platform[0] || !s->cluster.platform[0] ||
        strcmp(s->accel.platform, s->cluster.platform) == 0)
        return false;
    if (note && n > 0) {
        const char *own = s->accel.default_cluster;
        snprintf(note, n,
                 "cluster %s is of platform %s, accelerator %s of %s: the links modelled are "
                 "not this accelerator's%s%s%s",
                 s->cluster.name, s->cluster.platform, s->accel.name, s->accel.platform,
                 own[0] ? " (its own cluster: " : "", own, own[0] ? ")" : "");
    }
    return true;
}

/* The weight datatype whose elements the checkpoint's quantization_config stores, or
 * PM_DTYPE_COUNT when none does (4-bit floats, 2 or 3 bits, not sized, or no
 * quantization_config). */
static pm_dtype checkpoint_dtype(const pm_model *m)
{
    for (int d = 0; d < PM_DTYPE_COUNT; d++) {
        const double bits = 8.0 * pm_dtype_bytes((pm_dtype)d);
        if (m->quant_bits < bits || m->quant_bits > bits)
            continue;
        if (bits > 8.0 || (d == PM_DTYPE_FP8) == m->quant_float)
            return (pm_dtype)d; /* 8 bits: integers or floats; wider: the first float type */
    }
    return PM_DTYPE_COUNT;
}

/* The checkpoint's int4 groups against the workload's (both int4): its group size or zero point,
 * where it states them, other than what weight_group_size (128 when 0) and weight_zero_point
 * model. */
static bool int4_groups_warning(const pm_scenario *s, char *note, size_t n)
{
    const pm_model *m = &s->model;
    const pm_workload *wl = &s->workload;
    const int g = pm_weight_group_size(wl);
    const bool group = m->quant_group_size != 0 && m->quant_group_size != g;
    const bool zero =
        m->quant_zero_point != 0 && (m->quant_zero_point > 0) != wl->weight_zero_point;
    if (!group && !zero)
        return false;
    if (!note || n == 0)
        return true;
    char stated[64];
    if (m->quant_group_size < 0)
        snprintf(stated, sizeof stated, "a scale per output channel (group_size -1)");
    else if (m->quant_group_size > 0)
        snprintf(stated, sizeof stated, "a scale per %d input channels", m->quant_group_size);
    else
        snprintf(stated, sizeof stated, "scales");
    snprintf(note, n,
             "model %s: the checkpoint's weights are int4 with %s%s (quantization_config's "
             "quant_method \"%s\"); modelled with a scale per %d%s, the workload's "
             "weight_group_size and weight_zero_point",
             m->name, stated, m->quant_zero_point > 0   ? " and a zero point"
                              : m->quant_zero_point < 0 ? ", symmetric"
                                                        : "",
             m->quant_method, g, wl->weight_zero_point ? " and a zero point" : ", symmetric");
    return true;
}

/* The checkpoint's warning: its quantization_config states weights other than the workload's
 * (by bits and kind), or weights the model has no datatype for. */
static bool checkpoint_warning(const pm_scenario *s, char *note, size_t n)
{
    const pm_model *m = &s->model;
    if (!m->quant_method[0])
        return false;
    const pm_dtype d = checkpoint_dtype(m), w = s->workload.weight_dtype;
    const bool wide = d == PM_DTYPE_BF16 || d == PM_DTYPE_FP16;
    if (d == PM_DTYPE_INT4 && w == PM_DTYPE_INT4)
        return int4_groups_warning(s, note, n);
    if (d == w || (wide && (w == PM_DTYPE_BF16 || w == PM_DTYPE_FP16)))
        return false;
    if (!note || n == 0)
        return true;
    const char *file = "";
    for (size_t i = 0; i < pm_scenario_param_count(s); i++) {
        const pm_param_info *p = pm_scenario_param(s, i);
        const char *tail = strrchr(p->path, '.');
        if (strncmp(p->path, "$.model", 7) == 0 && tail &&
            (strcmp(tail, ".quantization_config") == 0 || strcmp(tail, ".quantization") == 0))
            file = p->file;
    }
    char what[96];
    if (m->quant_bits > 0)
        snprintf(what, sizeof what, "are %g-bit %s", m->quant_bits,
                 m->quant_float ? "floats" : "integers");
    else
        snprintf(what, sizeof what, "are in a format the reader does not size");
    char tail[96] = "";
    if (d != PM_DTYPE_COUNT)
        snprintf(tail, sizeof tail, " (weight_dtype %s models the checkpoint as published)",
                 pm_dtype_name(d));
    else if (m->quant_bits > 0 && m->quant_bits < 8.0)
        snprintf(tail, sizeof tail, ": below 8 bits only int4 integer weights are modelled");
    else if (m->quant_bits > 0)
        snprintf(tail, sizeof tail, ": no datatype here has %g bits", m->quant_bits);
    char by[80];
    if (strcmp(m->quant_method, "mlx") == 0)
        snprintf(by, sizeof by, "mlx's quantization block");
    else
        snprintf(by, sizeof by, "quantization_config's quant_method \"%s\"", m->quant_method);
    snprintf(note, n, "model %s%s%s%s: the checkpoint's weights %s (%s); modelled as %s, the "
             "workload's weight_dtype%s",
             m->name, file[0] ? " (" : "", file, file[0] ? ")" : "", what, by, pm_dtype_name(w),
             tail);
    return true;
}

bool pm_scenario_warning(const pm_scenario *s, size_t i, char *note, size_t n)
{
    return pm_scenario_warning_except(s, 0, i, note, n);
}

bool pm_scenario_warning_except(const pm_scenario *s, unsigned skip, size_t i, char *note,
                                size_t n)
{
    if (!s)
        return false;
    char *out = note && n > 0 ? note : NULL;
    size_t k = 0; /* the warnings before the one looked at */
    if (pm_scenario_platform_mismatch(s, i == k ? out : NULL, n) && k++ == i)
        return true;
    const int max_pos = s->model.max_position_embeddings;
    if (!(skip & PM_WARN_SKIP_SEQ) && max_pos > 0 && s->workload.seq_len > max_pos &&
        k++ == i) {
        if (out)
            snprintf(out, n,
                     "sequence length %lld exceeds the model's max_position_embeddings %d "
                     "(model %s)",
                     (long long)s->workload.seq_len, max_pos, s->model.name);
        return true;
    }
    if (checkpoint_warning(s, i == k ? out : NULL, n) && k++ == i)
        return true;
    pm_shard sh;
    if (!(skip & PM_WARN_SKIP_SPLIT) && pm_shard_compute(s, &sh, NULL) == PM_OK && sh.uneven &&
        k++ == i) {
        char experts[64] = ""; /* a routed expert's columns split over moe_tp devices */
        if (s->model.experts > 0)
            snprintf(experts, sizeof experts, ", expert width %d over %d",
                     s->model.expert_intermediate, sh.moe_tp);
        if (out)
            snprintf(out, n,
                     "model %s does not split evenly over %d devices (%d query heads, %d KV "
                     "heads, MLP width %d%s): the busiest device's share is modelled (%g query "
                     "heads, %g KV heads); engines that split evenly (vLLM, TensorRT-LLM) refuse "
                     "it",
                     s->model.name, s->cluster.devices, s->model.heads, s->model.kv_heads,
                     s->model.intermediate, experts, sh.q_heads, sh.kv_heads);
        return true;
    }
    for (size_t j = 0; j < pm_scenario_param_count(s); j++) {
        const pm_param_info *p = pm_scenario_param(s, j);
        if (strcmp(p->origin, "ignored") != 0 || !strstr(p->source, "not recognised") || k++ != i)
            continue;
        if (out)
            snprintf(out, n, "%s: %s: key not recognised, assumed not to change cost", p->file,
                     p->path);
        return true;
    }
    double per_die = 0.0;
    const char *which;
    if (!(skip & PM_WARN_SKIP_DIE) && pm_die_over_reticle_named(&s->accel, &per_die, &which) &&
        k++ == i) {
        if (out)
            snprintf(out, n,
                     "accelerator %s: its modelled %s is %.0f mm2, over the %.0f mm2 "
                     "reticle: no such die can be built as one piece of silicon (split the "
                     "package with area.compute_dies or area.io_dies, or revisit its area "
                     "coefficients); its area, cost, leakage and densities are of that die",
                     s->accel.name, which, per_die, PM_RETICLE_MM2);
        return true;
    }
    if (s->model.experts > 0 && pm_moe_gemm_curve_off(s) && k++ == i) {
        if (out)
            snprintf(out, n,
                     "runtime %s: its expert GEMMs' compute efficiency by tokens per expert "
                     "(moe_gemm_compute_efficiency) is measured on %s%s, not on accelerator %s: "
                     "off here (the routed experts' GEMMs at moe_gemm_efficiency_frac alone)",
                     s->runtime.name, s->runtime.moe_gemm_compute.accelerators[0],
                     s->runtime.moe_gemm_compute.n_accelerators > 1 ? " and others" : "",
                     s->accel.name);
        return true;
    }
    return false;
}
