/*
 * json.c - strict JSON: reading files, parsing with line:column errors, rejecting duplicate keys
 * and non-finite numbers, and the object reader that every loader uses so that unknown, missing,
 * mistyped and out-of-range values all get the same compiler-style message. Also holds the
 * provenance list (where each resolved number came from).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

/* ---------------------------------------------------------------- files */

pm_status pm_read_file(const char *path, char **text, size_t *len, pm_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return pm_fail(err, PM_ERR_IO, path, NULL, "cannot open: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return pm_fail(err, PM_ERR_IO, path, NULL, "not a regular file");
    FILE *f = fopen(path, "rb");
    if (!f)
        return pm_fail(err, PM_ERR_IO, path, NULL, "cannot open: %s", strerror(errno));
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return pm_fail(err, PM_ERR_NOMEM, path, NULL, "out of memory reading the file");
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return pm_fail(err, PM_ERR_NOMEM, path, NULL, "out of memory reading the file");
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return pm_fail(err, PM_ERR_IO, path, NULL, "read error");
    }
    buf[n] = '\0';
    *text = buf;
    if (len)
        *len = n;
    return PM_OK;
}

/* ---------------------------------------------------------------- parsing */

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
static void path_append_key(char *dst, size_t n, const char *base, const char *key)
{
    int w = snprintf(dst, n, "%s.", base);
    if (w >= 0 && (size_t)w < n)
        pm_strlcpy(dst + w, key, n - (size_t)w);
}

/* Duplicate keys and non-finite numbers (1e999) anywhere in the tree. */
static pm_status check_tree(const cJSON *item, const char *file, const char *path, int depth,
                            pm_error *err)
{
    if (depth > 64)
        return pm_fail(err, PM_ERR_RANGE, file, path, "JSON nested deeper than 64 levels");
    if (cJSON_IsNumber(item) && !isfinite(item->valuedouble))
        return pm_fail(err, PM_ERR_RANGE, file, path, "number out of range (not finite)");
    if (!cJSON_IsObject(item) && !cJSON_IsArray(item))
        return PM_OK;
    char sub[256];
    int idx = 0;
    for (const cJSON *c = item->child; c; c = c->next, idx++) {
        if (cJSON_IsObject(item)) {
            for (const cJSON *d = item->child; d != c; d = d->next) {
                if (strcmp(d->string, c->string) == 0) {
                    path_append_key(sub, sizeof sub, path, c->string);
                    return pm_fail(err, PM_ERR_DUPLICATE_KEY, file, sub,
                                   "duplicate key \"%s\"", c->string);
                }
            }
            path_append_key(sub, sizeof sub, path, c->string);
        } else {
            snprintf(sub, sizeof sub, "%s[%d]", path, idx);
        }
        pm_status st = check_tree(c, file, sub, depth + 1, err);
        if (st != PM_OK)
            return st;
    }
    return PM_OK;
}

/* 1-based line and column of byte offset off. */
static void set_position(pm_error *err, const char *text, size_t off)
{
    if (!err)
        return;
    int line = 1, col = 1;
    for (size_t k = 0; k < off; k++) {
        if (text[k] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    err->line = line;
    err->column = col;
}

pm_status pm_json_parse(const char *text, size_t len, const char *file, cJSON **out,
                        pm_error *err)
{
    *out = NULL;
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
        i++;
    if (i == len)
        return pm_fail(err, PM_ERR_SYNTAX, file, NULL, "empty file (expected a JSON object)");
    if (memchr(text, '\0', len))
        return pm_fail(err, PM_ERR_SYNTAX, file, NULL, "NUL byte in the file (not JSON text)");
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!root) {
        size_t off = end && end >= text ? (size_t)(end - text) : 0;
        if (off > len)
            off = len;
        /* cJSON stops at the last character when the input ends early. */
        bool at_end = true;
        for (size_t k = off + 1; k < len; k++)
            if (!(text[k] == ' ' || text[k] == '\n' || text[k] == '\r' || text[k] == '\t'))
                at_end = false;
        pm_status st = pm_fail(err, PM_ERR_SYNTAX, file, NULL, "JSON syntax error %s",
                               at_end ? "(unexpected end of input)" : "near here");
        set_position(err, text, off);
        return st;
    }
    /* Anything but whitespace after the value is an error too. */
    if (end) {
        const char *p = end;
        while (p < text + len && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
            p++;
        if (p < text + len) {
            cJSON_Delete(root);
            pm_status st = pm_fail(err, PM_ERR_SYNTAX, file, NULL,
                                   "JSON syntax error: text after the end of the value");
            set_position(err, text, (size_t)(p - text));
            return st;
        }
    }
    pm_status st = check_tree(root, file, "$", 0, err);
    if (st != PM_OK) {
        cJSON_Delete(root);
        return st;
    }
    *out = root;
    return PM_OK;
}

pm_status pm_json_load_file(const char *path, cJSON **out, pm_error *err)
{
    char *text = NULL;
    size_t len = 0;
    pm_status st = pm_read_file(path, &text, &len, err);
    if (st != PM_OK)
        return st;
    st = pm_json_parse(text, len, path, out, err);
    free(text);
    return st;
}

/* ---------------------------------------------------------------- provenance */

static char *keep_string(pm_provenance *p, const char *s)
{
    if (!s)
        s = "";
    if (p->n_strings == p->cap_strings) {
        size_t cap = p->cap_strings ? p->cap_strings * 2 : 64;
        char **ns = realloc(p->strings, cap * sizeof *ns);
        if (!ns)
            return NULL;
        p->strings = ns;
        p->cap_strings = cap;
    }
    size_t len = strlen(s);
    char *copy = malloc(len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, len + 1);
    p->strings[p->n_strings++] = copy;
    return copy;
}

pm_status pm_provenance_add(pm_provenance *p, const char *path, const char *file, double value,
                            const char *unit_si, const char *source)
{
    if (!p)
        return PM_OK;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        pm_param_info *ni = realloc(p->items, cap * sizeof *ni);
        if (!ni)
            return PM_ERR_NOMEM;
        p->items = ni;
        p->cap = cap;
    }
    pm_param_info *it = &p->items[p->n];
    it->path = keep_string(p, path);
    it->file = keep_string(p, file);
    it->source = keep_string(p, source);
    it->unit_si = unit_si;
    it->value_si = value;
    if (!it->path || !it->file || !it->source)
        return PM_ERR_NOMEM;
    p->n++;
    return PM_OK;
}

void pm_provenance_free(pm_provenance *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_strings; i++)
        free(p->strings[i]);
    free(p->strings);
    free(p->items);
    free(p);
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

static const pm_key_origin *key_origin(const pm_obj *o, const char *key)
{
    for (size_t i = o->n_origins; i-- > 0;)
        if (strcmp(o->origins[i].key, key) == 0)
            return &o->origins[i];
    return NULL;
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
    if (key)
        path_append_key(path, sizeof path, origin ? origin->path : o->path, key);
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

static pm_status record(pm_obj *o, const char *key, double v, const char *unit,
                        const char *source)
{
    if (!o->prov)
        return PM_OK;
    char path[256], base[256];
    if (o->prov_root[0])
        snprintf(base, sizeof base, "%s%s", o->prov_root, o->path + 1);
    else
        pm_strlcpy(base, o->path, sizeof base);
    path_append_key(path, sizeof path, base, key);
    const char *src = source && source[0] ? source : (o->file_source ? o->file_source : "");
    if (pm_provenance_add(o->prov, path, key_file(o, key), v, unit, src) != PM_OK)
        return obj_fail(o, key, PM_ERR_NOMEM, "out of memory recording provenance");
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
        const cJSON *val = NULL, *src = NULL;
        for (const cJSON *c = item->child; c; c = c->next) {
            if (strcmp(c->string, "value") == 0)
                val = c;
            else if (strcmp(c->string, "source") == 0)
                src = c;
            else
                return obj_fail(o, key, PM_ERR_UNKNOWN_KEY,
                                "unknown key \"%s\" in a sourced number (expected \"value\" and "
                                "\"source\")",
                                c->string);
        }
        if (!val)
            return obj_fail(o, key, PM_ERR_MISSING,
                            "a sourced number needs \"value\" (got an object without it)");
        if (!cJSON_IsNumber(val))
            return obj_fail(o, key, PM_ERR_TYPE, "\"value\" must be a number (got %s)",
                            pm_json_type_name(val));
        if (src && !cJSON_IsString(src))
            return obj_fail(o, key, PM_ERR_TYPE, "\"source\" must be a string (got %s)",
                            pm_json_type_name(src));
        *v = val->valuedouble;
        *source = src ? src->valuestring : NULL;
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

pm_status pm_obj_string(pm_obj *o, const char *key, bool required, const char **out)
{
    pm_obj_declare(o, key, PM_DIM_NONE);
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o->json, key);
    if (!it) {
        if (required)
            return obj_fail(o, key, PM_ERR_MISSING, "missing required key \"%s\" (a string)", key);
        return PM_OK;
    }
    if (!cJSON_IsString(it))
        return obj_fail(o, key, PM_ERR_TYPE, "expected a string (got %s)", pm_json_type_name(it));
    *out = it->valuestring;
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
    if (!cJSON_IsBool(it))
        return obj_fail(o, key, PM_ERR_TYPE, "expected true or false (got %s)",
                        pm_json_type_name(it));
    *out = cJSON_IsTrue(it);
    return PM_OK;
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
    const cJSON *found = NULL;
    const char *found_unit = NULL;
    for (const cJSON *c = o->json->child; c; c = c->next) {
        char b[128];
        const char *unit;
        if (strcmp(c->string, base) == 0)
            return obj_fail(o, c->string, PM_ERR_UNIT,
                            "a quantity needs a unit in its key: write \"%s_<unit>\" with one of %s",
                            base, pm_unit_names(dim));
        if (!pm_unit_split_key(c->string, b, sizeof b, &unit) || strcmp(b, base) != 0)
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
    if (!found) {
        if (required) {
            char k[160];
            const char *first = pm_unit_names(dim);
            char u[16] = "";
            size_t i = 0;
            while (first[i] && first[i] != ',' && i < sizeof u - 1) {
                u[i] = first[i];
                i++;
            }
            u[i] = '\0';
            snprintf(k, sizeof k, "%s_%s", base, u);
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
    const char *s = NULL;
    pm_status st = pm_obj_string(o, key, required, &s);
    if (st != PM_OK || !s)
        return st;
    for (size_t i = 0; i < n_names; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (int)i;
            return PM_OK;
        }
    }
    char list[256] = "";
    for (size_t i = 0; i < n_names; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, names[i], sizeof list - strlen(list) - 1);
    }
    return obj_fail(o, key, PM_ERR_VALUE, "expected one of %s (got \"%s\")", list, s);
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
    char path[256];
    path_append_key(path, sizeof path, o->path, key);
    pm_obj_init(child, it, o->file, path, o->err);
    child->prov = o->prov;
    pm_strlcpy(child->prov_root, o->prov_root, sizeof child->prov_root);
    child->file_source = o->file_source;
    return PM_OK;
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
        /* Suggest the nearest known key, comparing bases for quantities. */
        const char *probe = has_unit ? b : c->string;
        int best = 1 << 20;
        size_t bi = 0;
        for (size_t i = 0; i < o->n_known; i++) {
            int d = pm_edit_distance(probe, o->known[i]);
            int d2 = pm_edit_distance(c->string, o->known[i]);
            if (d2 < d)
                d = d2;
            if (d < best) {
                best = d;
                bi = i;
            }
        }
        size_t plen = strlen(probe);
        int limit = plen > 9 ? (int)(plen / 3) : 2;
        if (o->n_known && best <= limit) {
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
