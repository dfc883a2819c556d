/*
 * json.c - the strict object reader that every loader uses on a parsed tree, so that unknown,
 * missing, mistyped and out-of-range values all get the same compiler-style message (file, JSON
 * path, expectation, value), with "did you mean" for unknown keys; quantities are read as
 * "<base>_<unit>" keys and converted to SI here. Each value read is recorded in the provenance
 * list (provenance.c). The text itself is scanned and parsed in json_syntax.c.
 *
 * May call: error.c, provenance.c, units.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ---------------------------------------------------------------- messages */

const char *pm_json_type_name(const cJSON *item)
{
    if (!item)
        return "nothing";
    if (cJSON_IsString(item))
        return "a string";
    if (cJSON_IsNumber(item))
        return "a number";
    if (cJSON_IsBool(item))
        return "a boolean";
    if (cJSON_IsNull(item))
        return "null";
    if (cJSON_IsArray(item))
        return "an array";
    if (cJSON_IsObject(item))
        return "an object";
    return "an invalid value";
}

/* Paths longer than the buffer are cut: they only serve messages. */
void pm_json_path_key(char *dst, size_t n, const char *base, const char *key)
{
    int w = snprintf(dst, n, "%s.", base);
    if (w >= 0 && (size_t)w < n)
        pm_strlcpy(dst + w, key, n - (size_t)w);
}

/* ---------------------------------------------------------------- object reader */

void pm_obj_init(pm_obj *o, const cJSON *json, const char *file, const char *path,
                 pm_error *err)
{
    memset(o, 0, sizeof *o);
    o->json = json;
    o->file = file ? file : "";
    pm_strlcpy(o->path, path ? path : "$", sizeof o->path);
    o->err = err;
}

void pm_obj_declare(pm_obj *o, const char *key, pm_dimension dim)
{
    for (size_t i = 0; i < o->n_known; i++)
        if (strcmp(o->known[i], key) == 0)
            return;
    if (o->n_known < PM_OBJ_MAX_KEYS) {
        o->known_dim[o->n_known] = dim;
        o->known[o->n_known++] = key;
    }
}

bool pm_obj_has(const pm_obj *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o->json, key) != NULL;
}

/* Where key of o came from: an origin recorded under the key's dotted name within its
 * component (a nested object's keys under "outer.key"), or NULL for o's file. */
static const pm_key_origin *key_origin(const pm_obj *o, const char *key)
{
    const size_t np = strlen(o->origin_prefix);
    for (size_t i = o->n_origins; i-- > 0;) {
        const char *k = o->origins[i].key;
        if (strncmp(k, o->origin_prefix, np) == 0 && strcmp(k + np, key) == 0)
            return &o->origins[i];
    }
    return NULL;
}

/* An origin recorded below key ("key.inner": an override wrote into an object it made), or
 * NULL: an unknown key that only such an override made is the override's. */
static const pm_key_origin *key_origin_below(const pm_obj *o, const char *key)
{
    const size_t np = strlen(o->origin_prefix), nk = strlen(key);
    for (size_t i = o->n_origins; i-- > 0;) {
        const char *k = o->origins[i].key;
        if (strncmp(k, o->origin_prefix, np) == 0 && strncmp(k + np, key, nk) == 0 &&
            k[np + nk] == '.')
            return &o->origins[i];
    }
    return NULL;
}

bool pm_obj_key_overridden(const pm_obj *o, const char *key)
{
    const pm_key_origin *k = key_origin(o, key);
    return k && pm_file_is_override(k->file);
}

bool pm_obj_any_derived(const pm_obj *o)
{
    const size_t np = strlen(o->origin_prefix);
    for (size_t i = 0; i < o->n_origins; i++) {
        const char *f = o->origins[i].file;
        if (strncmp(o->origins[i].key, o->origin_prefix, np) == 0 && f &&
            (pm_file_is_override(f) || !o->file || strcmp(f, o->file) != 0))
            return true;
    }
    return false;
}

static const char *key_file(const pm_obj *o, const char *key)
{
    const pm_key_origin *k = key_origin(o, key);
    return k ? k->file : o->file;
}

pm_status pm_obj_fail(const pm_obj *o, const char *key, pm_status st, const char *fmt, ...)
{
    char path[256];
    const pm_key_origin *origin = key ? key_origin(o, key) : NULL;
    if (!origin && key && st == PM_ERR_UNKNOWN_KEY)
        origin = key_origin_below(o, key);
    char at[sizeof origin->path];
    if (origin) { /* the object key is in: for an origin below it, its path less the levels */
        pm_strlcpy(at, origin->path, sizeof at);
        for (const char *d = strchr(origin->key + strlen(o->origin_prefix), '.');
             d && strcmp(origin->key + strlen(o->origin_prefix), key) != 0; d = strchr(d + 1, '.')) {
            char *last = strrchr(at, '.');
            if (last)
                *last = '\0';
        }
    }
    if (key)
        pm_json_path_key(path, sizeof path, origin ? at : o->path, key);
    else
        pm_strlcpy(path, o->path, sizeof path);
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pm_fail(o->err, st, origin ? origin->file : o->file, path, "%s", msg);
}

#define obj_fail pm_obj_fail

/* The source a provenance entry of key cites: its own (a sourced value), else none for a value
 * from an override (the file's source is not its), else the file's. */
static const char *entry_source(const pm_obj *o, const char *key, const char *source)
{
    if (source && source[0])
        return source;
    const pm_key_origin *k = key_origin(o, key);
    if (k && pm_file_is_override(k->file))
        return "";
    return o->file_source ? o->file_source : "";
}

/* The JSON path a provenance entry of key names (base: scratch). */
static void obj_prov_path(const pm_obj *o, const char *key, char *base, size_t nb, char *path,
                          size_t np)
{
    if (o->prov_root[0])
        snprintf(base, nb, "%s%s", o->prov_root, o->path + 1);
    else
        pm_strlcpy(base, o->path, nb);
    pm_json_path_key(path, np, base, key);
}

static pm_status record(pm_obj *o, const char *key, double v, const char *unit,
                        const char *source)
{
    return pm_obj_record(o, key, v, unit, source, "given");
}

/* A choice made by name: its name in the provenance (pm_param_info.value_text). */
static pm_status record_text(pm_obj *o, const char *key, const char *text, const char *source)
{
    if (!o->prov)
        return PM_OK;
    char path[256], base[256];
    obj_prov_path(o, key, base, sizeof base, path, sizeof path);
    const char *src = entry_source(o, key, source);
    if (pm_provenance_add_text(o->prov, path, key_file(o, key), text, src) != PM_OK)
        return obj_fail(o, key, PM_ERR_NOMEM, "out of memory recording provenance");
    return PM_OK;
}

pm_status pm_obj_record(pm_obj *o, const char *key, double v, const char *unit,
                        const char *source, const char *origin)
{
    if (!o->prov)
        return PM_OK;
    char path[256], base[256];
    obj_prov_path(o, key, base, sizeof base, path, sizeof path);
    const char *src = entry_source(o, key, source);
    if (pm_provenance_add_origin(o->prov, path, key_file(o, key), v, unit, src, origin) != PM_OK)
        return obj_fail(o, key, PM_ERR_NOMEM, "out of memory recording provenance");
    return PM_OK;
}

/* A sourced value {"value": ..., "source": string} (what: "number" or "string", for messages):
 * *val is its value item (of any type: the caller checks), *source its source or NULL. */
static pm_status unwrap_sourced(const pm_obj *o, const char *key, const cJSON *item,
                                const char *what, const cJSON **val, const char **source)
{
    const cJSON *src = NULL;
    *val = NULL;
    for (const cJSON *c = item->child; c; c = c->next) {
        if (strcmp(c->string, "value") == 0)
            *val = c;
        else if (strcmp(c->string, "source") == 0)
            src = c;
        else
            return obj_fail(o, key, PM_ERR_UNKNOWN_KEY,
                            "unknown key \"%s\" in a sourced %s (expected \"value\" and "
                            "\"source\")",
                            c->string, what);
    }
    if (!*val)
        return obj_fail(o, key, PM_ERR_MISSING,
                        "a sourced %s needs \"value\" (got an object without it)", what);
    if (src && !cJSON_IsString(src))
        return obj_fail(o, key, PM_ERR_TYPE, "\"source\" must be a string (got %s)",
                        pm_json_type_name(src));
    *source = src ? src->valuestring : NULL;
    return PM_OK;
}

/* A number, or {"value": number, "source": string}. */
static pm_status read_number(const pm_obj *o, const char *key, const cJSON *item, double *v,
                             const char **source)
{
    *source = NULL;
    if (cJSON_IsNumber(item)) {
        *v = item->valuedouble;
        return PM_OK;
    }
    if (cJSON_IsObject(item)) {
        const cJSON *val;
        pm_status st = unwrap_sourced(o, key, item, "number", &val, source);
        if (st != PM_OK)
            return st;
        if (!cJSON_IsNumber(val))
            return obj_fail(o, key, PM_ERR_TYPE, "\"value\" must be a number (got %s)",
                            pm_json_type_name(val));
        *v = val->valuedouble;
        return PM_OK;
    }
    return obj_fail(o, key, PM_ERR_TYPE, "expected a number (got %s)", pm_json_type_name(item));
}

static bool in_range(double v, pm_range r)
{
    bool lo_ok = r.lo_open ? v > r.lo : v >= r.lo;
    bool hi_ok = r.hi_open ? v < r.hi : v <= r.hi;
    return lo_ok && hi_ok; /* NaN fails both */
}

static void range_text(pm_range r, char *buf, size_t n)
{
    if (isinf(r.hi) && r.hi > 0)
        snprintf(buf, n, "%s %g", r.lo_open ? ">" : ">=", r.lo);
    else
        snprintf(buf, n, "in %c%g, %g%c", r.lo_open ? '(' : '[', r.lo, r.hi,
                 r.hi_open ? ')' : ']');
}

/* pm_obj_string, and the source of a sourced choice ({"value", "source"}) in *source_out (NULL
 * when the string is plain). */
static pm_status obj_string(pm_obj *o, const char *key, bool required, const char **out,
                            const char **source_out)
{
    *source_out = NULL;
    pm_obj_declare(o, key, PM_DIM_NONE);
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o->json, key);
    if (!it) {
        if (required)
            return obj_fail(o, key, PM_ERR_MISSING, "missing required key \"%s\" (a string)", key);
        return PM_OK;
    }
    if (cJSON_IsObject(it)) { /* a sourced choice: {"value": string, "source": string} */
        pm_status st = unwrap_sourced(o, key, it, "string", &it, source_out);
        if (st != PM_OK)
            return st;
        if (!cJSON_IsString(it))
            return obj_fail(o, key, PM_ERR_TYPE, "\"value\" must be a string (got %s)",
                            pm_json_type_name(it));
    }
    if (!cJSON_IsString(it))
        return obj_fail(o, key, PM_ERR_TYPE, "expected a string (got %s)", pm_json_type_name(it));
    *out = it->valuestring;
    return PM_OK;
}

pm_status pm_obj_string(pm_obj *o, const char *key, bool required, const char **out)
{
    const char *source;
    return obj_string(o, key, required, out, &source);
}

pm_status pm_obj_name_fits(pm_obj *o, const char *key, const char *name, size_t n)
{
    const size_t len = strlen(name);
    if (len < n)
        return PM_OK;
    return obj_fail(o, key, PM_ERR_VALUE,
                    "expected a name of at most %zu bytes (got %zu: \"%.24s...\"): a shorter "
                    "one, since a cut name would be another name in every output",
                    n - 1, len, name);
}

pm_status pm_obj_name(pm_obj *o, const char *key, bool required, char *dst, size_t n)
{
    const char *s = NULL;
    pm_status st = pm_obj_string(o, key, required, &s);
    if (st != PM_OK || !s)
        return st;
    if ((st = pm_obj_name_fits(o, key, s, n)) != PM_OK)
        return st;
    memcpy(dst, s, strlen(s) + 1);
    return PM_OK;
}

pm_status pm_obj_bool(pm_obj *o, const char *key, bool required, bool *out)
{
    pm_obj_declare(o, key, PM_DIM_NONE);
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o->json, key);
    if (!it) {
        if (required)
            return obj_fail(o, key, PM_ERR_MISSING, "missing required key \"%s\" (true or false)",
                            key);
        return PM_OK;
    }
    const char *source = NULL;
    if (cJSON_IsObject(it)) { /* a sourced switch: {"value": true or false, "source": string} */
        pm_status st = unwrap_sourced(o, key, it, "switch", &it, &source);
        if (st != PM_OK)
            return st;
    }
    if (!cJSON_IsBool(it))
        return obj_fail(o, key, PM_ERR_TYPE, "expected true or false (got %s)",
                        pm_json_type_name(it));
    *out = cJSON_IsTrue(it);
    return record(o, key, *out ? 1 : 0, "1", source);
}

pm_status pm_obj_int(pm_obj *o, const char *key, bool required, long lo, long hi, long *out)
{
    pm_obj_declare(o, key, PM_DIM_NONE);
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o->json, key);
    if (!it) {
        if (required)
            return obj_fail(o, key, PM_ERR_MISSING, "missing required key \"%s\" (an integer)",
                            key);
        return PM_OK;
    }
    double v;
    const char *src;
    pm_status st = read_number(o, key, it, &v, &src);
    if (st != PM_OK)
        return st;
    if (!(fabs(v - floor(v)) <= 0.0))
        return obj_fail(o, key, PM_ERR_RANGE, "expected an integer (got %g)", v);
    if (!(v >= (double)lo && v <= (double)hi))
        return obj_fail(o, key, PM_ERR_RANGE, "must be in [%ld, %ld] (got %.17g)", lo, hi, v);
    *out = (long)v;
    return record(o, key, v, "1", src);
}

pm_status pm_obj_number(pm_obj *o, const char *key, bool required, pm_range r, double *out)
{
    pm_obj_declare(o, key, PM_DIM_NONE);
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o->json, key);
    if (!it) {
        if (required)
            return obj_fail(o, key, PM_ERR_MISSING, "missing required key \"%s\" (a number)", key);
        return PM_OK;
    }
    double v;
    const char *src;
    pm_status st = read_number(o, key, it, &v, &src);
    if (st != PM_OK)
        return st;
    if (!in_range(v, r)) {
        char rt[96];
        range_text(r, rt, sizeof rt);
        return obj_fail(o, key, PM_ERR_RANGE, "must be %s (got %g)", rt, v);
    }
    *out = v;
    return record(o, key, v, "1", src);
}

pm_status pm_obj_quantity(pm_obj *o, const char *base, pm_dimension dim, bool required,
                          pm_range r, double *out)
{
    pm_obj_declare(o, base, dim);
    const cJSON *found = NULL, *near = NULL; /* near: base_<word> with no unit of that name */
    const char *found_unit = NULL;
    const size_t n_base = strlen(base);
    for (const cJSON *c = o->json->child; c; c = c->next) {
        char b[128];
        const char *unit;
        /* A key whose base is base starts with base and an underscore: the others are passed
         * over before the unit table is searched for their suffixes. */
        if (strncmp(c->string, base, n_base) != 0)
            continue;
        if (c->string[n_base] == '\0')
            return obj_fail(o, c->string, PM_ERR_UNIT,
                            "a quantity needs a unit in its key: write \"%s_<unit>\" with one of %s",
                            base, pm_unit_names(dim));
        if (c->string[n_base] == '_' && !strchr(c->string + n_base + 1, '_') && !near &&
            !(pm_unit_split_key(c->string, b, sizeof b, &unit) && strcmp(b, base) == 0))
            near = c;
        if (c->string[n_base] != '_' ||
            !pm_unit_split_key(c->string, b, sizeof b, &unit) || strcmp(b, base) != 0)
            continue;
        double f;
        pm_dimension d;
        pm_unit_lookup(unit, &f, &d);
        if (d != dim)
            return obj_fail(o, c->string, PM_ERR_UNIT,
                            "unit \"%s\" does not measure this quantity (expected one of %s)", unit,
                            pm_unit_names(dim));
        if (found)
            return obj_fail(o, c->string, PM_ERR_DUPLICATE_KEY,
                            "\"%s\" and \"%s\" give the same quantity twice", found->string,
                            c->string);
        found = c;
        found_unit = unit;
    }
    if (!found && required && near)
        return obj_fail(o, near->string, PM_ERR_UNIT, "unknown unit \"%s\" (units: %s)",
                        near->string + n_base + 1, pm_unit_names(dim));
    if (!found) {
        if (required) {
            /* The path names the key as a file would give it: its one unit ("wafer_usd"), or
             * "<unit>" where there are several (it named the first, "kernel_launch_s", which
             * no file or document writes). */
            char k[160];
            const char *units = pm_unit_names(dim);
            snprintf(k, sizeof k, "%s_%s", base, strchr(units, ',') ? "<unit>" : units);
            return obj_fail(o, k, PM_ERR_MISSING,
                            "missing required key \"%s_<unit>\" (units: %s)", base,
                            pm_unit_names(dim));
        }
        return PM_OK;
    }
    double v, f;
    const char *src;
    pm_status st = read_number(o, found->string, found, &v, &src);
    if (st != PM_OK)
        return st;
    pm_unit_lookup(found_unit, &f, NULL);
    double si = v * f;
    /* 1e308 TBps is a finite JSON number whose SI value is not: an open-ended range would
     * accept the infinity. */
    if (!isfinite(si))
        return obj_fail(o, found->string, PM_ERR_RANGE,
                        "out of range: %g %s is not a finite number of %s", v, found_unit,
                        pm_unit_si_name(dim));
    if (!in_range(si, r)) {
        char rt[96];
        pm_range ru = {r.lo / f, r.hi / f, r.lo_open, r.hi_open};
        range_text(ru, rt, sizeof rt);
        return obj_fail(o, found->string, PM_ERR_RANGE, "must be %s %s (got %g)", rt, found_unit,
                        v);
    }
    *out = si;
    return record(o, found->string, si, pm_unit_si_name(dim), src);
}

pm_status pm_obj_enum(pm_obj *o, const char *key, bool required, const char *const *names,
                      size_t n_names, int *out)
{
    const char *s = NULL, *source;
    pm_status st = obj_string(o, key, required, &s, &source);
    if (st != PM_OK || !s)
        return st;
    for (size_t i = 0; i < n_names; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (int)i;
            return record_text(o, key, names[i], source);
        }
    }
    char list[256] = "";
    for (size_t i = 0; i < n_names; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, names[i], sizeof list - strlen(list) - 1);
    }
    return obj_fail(o, key, PM_ERR_VALUE, "expected one of %s (got \"%s\")", list, s);
}

pm_status pm_obj_element(pm_obj *o, const char *array, int i, const cJSON *e, const char *what,
                         pm_obj *el)
{
    char path[sizeof o->path];
    snprintf(path, sizeof path, "%.200s.%.40s[%d]", o->path, array, i);
    if (!cJSON_IsObject(e))
        return pm_fail(o->err, PM_ERR_TYPE, o->file, path, "expected an object %s (got %s)", what,
                       pm_json_type_name(e));
    pm_obj_init(el, e, o->file, path, o->err);
    el->prov = o->prov;
    el->file_source = o->file_source;
    return PM_OK;
}

pm_status pm_obj_child(pm_obj *o, const char *key, bool required, pm_obj *child, bool *present)
{
    pm_obj_declare(o, key, PM_DIM_NONE);
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o->json, key);
    if (present)
        *present = it != NULL;
    if (!it) {
        if (required)
            return obj_fail(o, key, PM_ERR_MISSING, "missing required key \"%s\" (an object)", key);
        return PM_OK;
    }
    if (!cJSON_IsObject(it))
        return obj_fail(o, key, PM_ERR_TYPE, "expected an object (got %s)", pm_json_type_name(it));
    /* The child's keys default to where the object itself came from, and keep the parent's
     * origins under the prefix "key.". */
    const pm_key_origin *whole = key_origin(o, key);
    char path[256];
    pm_json_path_key(path, sizeof path, whole ? whole->path : o->path, key);
    pm_obj_init(child, it, whole ? whole->file : o->file, path, o->err);
    child->origins = o->origins;
    child->n_origins = o->n_origins;
    const int w = snprintf(child->origin_prefix, sizeof child->origin_prefix, "%s%s.",
                           o->origin_prefix, key);
    if (w < 0 || (size_t)w >= sizeof child->origin_prefix)
        child->n_origins = 0; /* nested too deep to name: its keys are its file's */
    child->prov = o->prov;
    pm_strlcpy(child->prov_root, o->prov_root, sizeof child->prov_root);
    child->file_source = o->file_source;
    return PM_OK;
}

/* The index of the known key nearest to key (comparing bases for quantities) within the "did
 * you mean" distance, or -1. */
static int nearest_known(const pm_obj *o, const char *key)
{
    char b[128];
    const char *unit;
    bool has_unit = pm_unit_split_key(key, b, sizeof b, &unit);
    const char *probe = has_unit ? b : key;
    int best = 1 << 20;
    size_t bi = 0;
    for (size_t i = 0; i < o->n_known; i++) {
        int d = pm_edit_distance(probe, o->known[i]);
        int d2 = pm_edit_distance(key, o->known[i]);
        if (d2 < d)
            d = d2;
        if (d < best) {
            best = d;
            bi = i;
        }
    }
    return o->n_known && best <= pm_suggest_limit(strlen(probe)) ? (int)bi : -1;
}

const char *pm_obj_nearest_known(const pm_obj *o, const char *key)
{
    int i = nearest_known(o, key);
    return i >= 0 ? o->known[i] : NULL;
}

pm_status pm_obj_finish(pm_obj *o)
{
    if (o->lenient)
        return PM_OK;
    for (const cJSON *c = o->json->child; c; c = c->next) {
        bool ok = false;
        char b[128];
        const char *unit;
        bool has_unit = pm_unit_split_key(c->string, b, sizeof b, &unit);
        for (size_t i = 0; i < o->n_known && !ok; i++) {
            if (o->known_dim[i] == PM_DIM_NONE)
                ok = strcmp(o->known[i], c->string) == 0;
            else
                ok = has_unit && strcmp(o->known[i], b) == 0;
        }
        if (ok)
            continue;
        const int bi = nearest_known(o, c->string);
        if (bi >= 0) {
            if (o->known_dim[bi] != PM_DIM_NONE)
                return obj_fail(o, c->string, PM_ERR_UNKNOWN_KEY,
                                "unknown key \"%s\" (did you mean \"%s_%s\"?)", c->string,
                                o->known[bi], has_unit ? unit : "<unit>");
            return obj_fail(o, c->string, PM_ERR_UNKNOWN_KEY,
                            "unknown key \"%s\" (did you mean \"%s\"?)", c->string, o->known[bi]);
        }
        return obj_fail(o, c->string, PM_ERR_UNKNOWN_KEY, "unknown key \"%s\"", c->string);
    }
    return PM_OK;
}
