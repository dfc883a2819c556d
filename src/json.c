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
    char why[128];
    if (stat(path, &st) != 0)
        return pm_fail(err, PM_ERR_IO, path, NULL, "cannot open: %s",
                       pm_errno_text(errno, why, sizeof why));
    if (!S_ISREG(st.st_mode))
        return pm_fail(err, PM_ERR_IO, path, NULL, "not a regular file");
    FILE *f = fopen(path, "rb");
    if (!f)
        return pm_fail(err, PM_ERR_IO, path, NULL, "cannot open: %s",
                       pm_errno_text(errno, why, sizeof why));
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = pm_malloc(cap);
    if (!buf) {
        fclose(f);
        return pm_fail(err, PM_ERR_NOMEM, path, NULL, "out of memory reading the file");
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = pm_realloc(buf, cap * 2);
            if (!nb) {
                pm_free(buf);
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
        pm_free(buf);
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

/* ---------------------------------------------------------------- syntax */

/* Deeper nesting than any input format needs; also bounds the recursion of check_tree. */
#define MAX_DEPTH 64
/* cJSON copies a number into a 64-byte buffer and silently stops at 63 characters. */
#define MAX_NUMBER_CHARS 63

/* A syntax error found by check_syntax: where, what, and PM_ERR_SYNTAX or PM_ERR_RANGE. */
typedef struct syntax_error {
    size_t off;
    const char *what;
    pm_status status;
} syntax_error;

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The code unit of "\uXXXX" at t[i] (t[i] == '\\'), or -1 when the four hex digits are not
 * there. */
static long utf16_at(const char *t, size_t len, size_t i)
{
    if (i + 6 > len || t[i] != '\\' || t[i + 1] != 'u')
        return -1;
    long v = 0;
    for (size_t k = 2; k < 6; k++) {
        int d = hex_digit(t[i + k]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Length (2..4) of the well-formed UTF-8 sequence at t[i] (a byte >= 0x80), or 0: no overlong
 * forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_sequence(const char *t, size_t len, size_t i)
{
    const unsigned char *u = (const unsigned char *)t + i;
    size_t avail = len - i, n;
    unsigned lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
    if (u[0] >= 0xC2 && u[0] <= 0xDF)
        n = 2;
    else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
        n = 3;
        if (u[0] == 0xE0)
            lo = 0xA0;
        else if (u[0] == 0xED)
            hi = 0x9F;
    } else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
        n = 4;
        if (u[0] == 0xF0)
            lo = 0x90;
        else if (u[0] == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (avail < n || u[1] < lo || u[1] > hi)
        return 0;
    for (size_t k = 2; k < n; k++)
        if (u[k] < 0x80 || u[k] > 0xBF)
            return 0;
    return n;
}

/* Scans the string whose opening quote is at t[*i]; on success *i is past the closing quote. */
static bool scan_string(const char *t, size_t len, size_t *i, syntax_error *e)
{
    size_t k = *i + 1;
    while (k < len) {
        unsigned char c = (unsigned char)t[k];
        if (c == '"') {
            *i = k + 1;
            return true;
        }
        if (c < 0x20) {
            *e = (syntax_error){k, "JSON syntax error: a control character in a string (write it "
                                   "as an escape such as \\n)",
                                PM_ERR_SYNTAX};
            return false;
        }
        if (c >= 0x80) {
            size_t n = utf8_sequence(t, len, k);
            if (!n) {
                *e = (syntax_error){k, "JSON syntax error: invalid UTF-8 in a string",
                                    PM_ERR_SYNTAX};
                return false;
            }
            k += n;
            continue;
        }
        if (c != '\\') {
            k++;
            continue;
        }
        if (k + 1 >= len)
            break;
        if (strchr("\"\\/bfnrt", t[k + 1]) && t[k + 1] != '\0') {
            k += 2;
            continue;
        }
        long u = utf16_at(t, len, k);
        if (t[k + 1] != 'u' || u < 0) {
            *e = (syntax_error){k, "JSON syntax error: invalid escape in a string (expected \\\", "
                                   "\\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\u and four hex digits)",
                                PM_ERR_SYNTAX};
            return false;
        }
        /* C strings end at a NUL: "model\u0000x" would silently read as "model". */
        if (u == 0) {
            *e = (syntax_error){k, "JSON syntax error: \\u0000 (a NUL character) in a string",
                                PM_ERR_SYNTAX};
            return false;
        }
        if (u >= 0xDC00 && u <= 0xDFFF) {
            *e = (syntax_error){k, "JSON syntax error: a UTF-16 low surrogate without a high one "
                                   "before it",
                                PM_ERR_SYNTAX};
            return false;
        }
        if (u >= 0xD800 && u <= 0xDBFF) {
            long lo = utf16_at(t, len, k + 6);
            if (lo < 0xDC00 || lo > 0xDFFF) {
                *e = (syntax_error){k, "JSON syntax error: a UTF-16 high surrogate without a low "
                                       "one after it",
                                    PM_ERR_SYNTAX};
                return false;
            }
            k += 12;
            continue;
        }
        k += 6;
    }
    *e = (syntax_error){*i, "JSON syntax error (unexpected end of input inside a string)",
                        PM_ERR_SYNTAX};
    return false;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Scans a number (RFC 8259 grammar) at t[*i]. */
static bool scan_number(const char *t, size_t len, size_t *i, syntax_error *e)
{
    size_t k = *i;
    if (k < len && t[k] == '-')
        k++;
    if (k < len && t[k] == '0')
        k++;
    else if (k < len && is_digit(t[k]))
        while (k < len && is_digit(t[k]))
            k++;
    else
        goto bad;
    if (k < len && t[k] == '.') {
        k++;
        if (!(k < len && is_digit(t[k])))
            goto bad;
        while (k < len && is_digit(t[k]))
            k++;
    }
    if (k < len && (t[k] == 'e' || t[k] == 'E')) {
        k++;
        if (k < len && (t[k] == '+' || t[k] == '-'))
            k++;
        if (!(k < len && is_digit(t[k])))
            goto bad;
        while (k < len && is_digit(t[k]))
            k++;
    }
    if (k - *i > MAX_NUMBER_CHARS) {
        *e = (syntax_error){*i, "number longer than 63 characters", PM_ERR_RANGE};
        return false;
    }
    *i = k;
    return true;
bad:
    *e = (syntax_error){k < len ? k : *i,
                        k < len ? "JSON syntax error: malformed number"
                                : "JSON syntax error (unexpected end of input inside a number)",
                        PM_ERR_SYNTAX};
    return false;
}

/*
 * Checks that text is one well-formed JSON value (RFC 8259: strict numbers, UTF-8 strings with
 * valid escapes) nested at most MAX_DEPTH deep, without allocating. The parser runs cJSON only on
 * text that passed, so that every syntax error gets an exact line and column and a cJSON failure
 * can only mean that memory ran out. It also rejects what cJSON would silently misread: \u0000,
 * numbers longer than its buffer, invalid UTF-8. Iterative: the stack is MAX_DEPTH bytes.
 */
static bool check_syntax(const char *t, size_t len, syntax_error *e)
{
    enum { VALUE, FIRST_VALUE, KEY, FIRST_KEY, AFTER } state = VALUE;
    char stack[MAX_DEPTH];
    size_t depth = 0, i = 0;
    /* A UTF-8 byte-order mark, as some editors write. cJSON skips it only when more than one
     * byte follows (no object is shorter than "{}"), so the check does the same. */
    if (len > 4 && memcmp(t, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    for (;;) {
        while (i < len && is_ws(t[i]))
            i++;
        if (state == AFTER && depth == 0)
            break;
        if (i >= len) {
            *e = (syntax_error){len ? len - 1 : 0, "JSON syntax error (unexpected end of input)",
                                PM_ERR_SYNTAX};
            return false;
        }
        char c = t[i];
        switch (state) {
        case FIRST_VALUE:
            if (c == ']') {
                i++;
                depth--;
                state = AFTER;
                break;
            }
            /* fall through */
        case VALUE:
            if (c == '{' || c == '[') {
                if (depth == MAX_DEPTH) {
                    *e = (syntax_error){i, "JSON nested deeper than 64 levels", PM_ERR_RANGE};
                    return false;
                }
                stack[depth++] = c;
                i++;
                state = c == '{' ? FIRST_KEY : FIRST_VALUE;
            } else if (c == '"') {
                if (!scan_string(t, len, &i, e))
                    return false;
                state = AFTER;
            } else if (c == '-' || is_digit(c)) {
                if (!scan_number(t, len, &i, e))
                    return false;
                state = AFTER;
            } else if (len - i >= 4 && (memcmp(t + i, "true", 4) == 0 ||
                                        memcmp(t + i, "null", 4) == 0)) {
                i += 4;
                state = AFTER;
            } else if (len - i >= 5 && memcmp(t + i, "false", 5) == 0) {
                i += 5;
                state = AFTER;
            } else {
                *e = (syntax_error){i, "JSON syntax error: expected a value", PM_ERR_SYNTAX};
                return false;
            }
            break;
        case FIRST_KEY:
            if (c == '}') {
                i++;
                depth--;
                state = AFTER;
                break;
            }
            /* fall through */
        case KEY:
            if (c != '"') {
                *e = (syntax_error){i, "JSON syntax error: expected a key in double quotes",
                                    PM_ERR_SYNTAX};
                return false;
            }
            if (!scan_string(t, len, &i, e))
                return false;
            while (i < len && is_ws(t[i]))
                i++;
            if (i >= len || t[i] != ':') {
                *e = (syntax_error){i < len ? i : len - 1,
                                    i < len ? "JSON syntax error: expected ':' after the key"
                                            : "JSON syntax error (unexpected end of input)",
                                    PM_ERR_SYNTAX};
                return false;
            }
            i++;
            state = VALUE;
            break;
        case AFTER: {
            char close = stack[depth - 1] == '{' ? '}' : ']';
            if (c == ',') {
                i++;
                state = stack[depth - 1] == '{' ? KEY : VALUE;
            } else if (c == close) {
                i++;
                depth--;
            } else {
                *e = (syntax_error){i, close == '}' ? "JSON syntax error: expected ',' or '}'"
                                                    : "JSON syntax error: expected ',' or ']'",
                                    PM_ERR_SYNTAX};
                return false;
            }
            break;
        }
        }
    }
    if (i < len) {
        *e = (syntax_error){i, "JSON syntax error: text after the end of the value",
                            PM_ERR_SYNTAX};
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------- the tree */

typedef struct key_pos {
    const cJSON *item;
    size_t pos; /* place in the object, so that equal keys sort in document order */
} key_pos;

static int cmp_key_pos(const void *a, const void *b)
{
    const key_pos *x = a, *y = b;
    int c = strcmp(x->item->string, y->item->string);
    if (c)
        return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The first member of object item (in document order) whose key repeats an earlier one, or
 * NULL. Sorting keeps a file with 100000 keys from taking quadratic time; small objects, the
 * common case, are scanned without allocating. *nomem is set when the sort array cannot be had. */
static const cJSON *first_duplicate(const cJSON *item, bool *nomem)
{
    size_t n = 0;
    for (const cJSON *c = item->child; c; c = c->next)
        n++;
    if (n <= 32) {
        for (const cJSON *c = item->child; c; c = c->next)
            for (const cJSON *d = item->child; d != c; d = d->next)
                if (strcmp(d->string, c->string) == 0)
                    return c;
        return NULL;
    }
    key_pos *keys = pm_malloc(n * sizeof *keys);
    if (!keys) {
        *nomem = true;
        return NULL;
    }
    size_t k = 0;
    for (const cJSON *c = item->child; c; c = c->next, k++)
        keys[k] = (key_pos){c, k};
    qsort(keys, n, sizeof *keys, cmp_key_pos);
    /* In each run of equal keys the second entry is the key's first repetition; the earliest
     * of those is what a scan in document order would have found. */
    const key_pos *dup = NULL;
    for (size_t a = 1; a < n; a++)
        if (strcmp(keys[a - 1].item->string, keys[a].item->string) == 0 &&
            (a < 2 || strcmp(keys[a - 2].item->string, keys[a].item->string) != 0) &&
            (!dup || keys[a].pos < dup->pos))
            dup = &keys[a];
    const cJSON *found = dup ? dup->item : NULL;
    pm_free(keys);
    return found;
}

/* Duplicate keys and non-finite numbers (1e999) anywhere in the tree. The syntax check has
 * bounded the depth, and so this recursion. */
static pm_status check_tree(const cJSON *item, const char *file, const char *path,
                            pm_error *err)
{
    if (cJSON_IsNumber(item) && !isfinite(item->valuedouble))
        return pm_fail(err, PM_ERR_RANGE, file, path, "number out of range (not finite)");
    if (!cJSON_IsObject(item) && !cJSON_IsArray(item))
        return PM_OK;
    char sub[256];
    if (cJSON_IsObject(item)) {
        bool nomem = false;
        const cJSON *dup = first_duplicate(item, &nomem);
        if (nomem)
            return pm_fail(err, PM_ERR_NOMEM, file, path, "out of memory checking the keys");
        if (dup) {
            path_append_key(sub, sizeof sub, path, dup->string);
            return pm_fail(err, PM_ERR_DUPLICATE_KEY, file, sub, "duplicate key \"%s\"",
                           dup->string);
        }
    }
    size_t idx = 0;
    for (const cJSON *c = item->child; c; c = c->next, idx++) {
        if (cJSON_IsObject(item))
            path_append_key(sub, sizeof sub, path, c->string);
        else
            snprintf(sub, sizeof sub, "%s[%zu]", path, idx);
        pm_status st = check_tree(c, file, sub, err);
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
    while (i < len && is_ws(text[i]))
        i++;
    if (i == len)
        return pm_fail(err, PM_ERR_SYNTAX, file, NULL, "empty file (expected a JSON object)");
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        pm_status st = pm_fail(err, PM_ERR_SYNTAX, file, NULL,
                               "NUL byte in the file (not JSON text)");
        set_position(err, text, (size_t)(nul - text));
        return st;
    }
    syntax_error e = {0, NULL, PM_OK};
    if (!check_syntax(text, len, &e)) {
        pm_status st = pm_fail(err, e.status, file, NULL, "%s", e.what);
        set_position(err, text, e.off);
        return st;
    }
    /* The text is well-formed, so cJSON can only fail for want of memory. */
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, NULL, false);
    if (!root)
        return pm_fail(err, PM_ERR_NOMEM, file, NULL, "out of memory parsing the JSON text");
    pm_status st = check_tree(root, file, "$", err);
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
    pm_free(text);
    return st;
}

/* ---------------------------------------------------------------- provenance */

static char *keep_string(pm_provenance *p, const char *s)
{
    if (!s)
        s = "";
    if (p->n_strings == p->cap_strings) {
        size_t cap = p->cap_strings ? p->cap_strings * 2 : 64;
        char **ns = pm_realloc(p->strings, cap * sizeof *ns);
        if (!ns)
            return NULL;
        p->strings = ns;
        p->cap_strings = cap;
    }
    size_t len = strlen(s);
    char *copy = pm_malloc(len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, len + 1);
    p->strings[p->n_strings++] = copy;
    return copy;
}

pm_status pm_provenance_add(pm_provenance *p, const char *path, const char *file, double value,
                            const char *unit_si, const char *source)
{
    return pm_provenance_add_origin(p, path, file, value, unit_si, source, "given");
}

pm_status pm_provenance_add_origin(pm_provenance *p, const char *path, const char *file,
                                   double value, const char *unit_si, const char *source,
                                   const char *origin)
{
    if (!p)
        return PM_OK;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        pm_param_info *ni = pm_realloc(p->items, cap * sizeof *ni);
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
    it->origin = origin;
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
        pm_free(p->strings[i]);
    pm_free(p->strings);
    pm_free(p->items);
    pm_free(p);
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
    return pm_obj_record(o, key, v, unit, source, "given");
}

pm_status pm_obj_record(pm_obj *o, const char *key, double v, const char *unit,
                        const char *source, const char *origin)
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

pm_status pm_obj_string(pm_obj *o, const char *key, bool required, const char **out)
{
    pm_obj_declare(o, key, PM_DIM_NONE);
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o->json, key);
    if (!it) {
        if (required)
            return obj_fail(o, key, PM_ERR_MISSING, "missing required key \"%s\" (a string)", key);
        return PM_OK;
    }
    if (cJSON_IsObject(it)) { /* a sourced choice: {"value": string, "source": string} */
        const char *source;
        pm_status st = unwrap_sourced(o, key, it, "string", &it, &source);
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
    size_t plen = strlen(probe);
    int limit = plen > 9 ? (int)(plen / 3) : 2;
    return o->n_known && best <= limit ? (int)bi : -1;
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
