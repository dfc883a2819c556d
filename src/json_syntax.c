/*
 * json_syntax.c - strict JSON text: reading a file, scanning it against RFC 8259 without
 * allocating so that every syntax error gets a line and column, then parsing it with cJSON and
 * rejecting what the grammar allows but the inputs must not hold (duplicate keys, numbers that
 * are not finite). The object reader (json.c) works on the trees this file returns.
 *
 * May call: alloc.c, error.c, json.c.
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
    if (st.st_size > PM_MAX_INPUT_FILE_BYTES)
        return pm_fail(err, PM_ERR_IO, path, NULL,
                       "%lld bytes: input files are limited to %d bytes (64 MiB)",
                       (long long)st.st_size, PM_MAX_INPUT_FILE_BYTES);
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
        if (n > PM_MAX_INPUT_FILE_BYTES) { /* grew while being read */
            pm_free(buf);
            fclose(f);
            return pm_fail(err, PM_ERR_IO, path, NULL,
                           "more than %d bytes: input files are limited to 64 MiB",
                           PM_MAX_INPUT_FILE_BYTES);
        }
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

/* Scans a value that is not an object or an array (a string, a number, true, false or null)
 * at t[*i], a non-space byte; on success *i is past it. */
static bool scan_scalar(const char *t, size_t len, size_t *i, syntax_error *e)
{
    const char c = t[*i];
    if (c == '"')
        return scan_string(t, len, i, e);
    if (c == '-' || is_digit(c))
        return scan_number(t, len, i, e);
    if (len - *i >= 4 && (memcmp(t + *i, "true", 4) == 0 || memcmp(t + *i, "null", 4) == 0)) {
        *i += 4;
        return true;
    }
    if (len - *i >= 5 && memcmp(t + *i, "false", 5) == 0) {
        *i += 5;
        return true;
    }
    *e = (syntax_error){*i, "JSON syntax error: expected a value", PM_ERR_SYNTAX};
    return false;
}

/* Scans an object member's key and the ':' after it, at t[*i], a non-space byte; on success *i
 * is past the ':'. */
static bool scan_key(const char *t, size_t len, size_t *i, syntax_error *e)
{
    if (t[*i] != '"') {
        *e = (syntax_error){*i, "JSON syntax error: expected a key in double quotes",
                            PM_ERR_SYNTAX};
        return false;
    }
    if (!scan_string(t, len, i, e))
        return false;
    size_t k = *i;
    while (k < len && is_ws(t[k]))
        k++;
    if (k >= len || t[k] != ':') {
        *e = (syntax_error){k < len ? k : len - 1,
                            k < len ? "JSON syntax error: expected ':' after the key"
                                    : "JSON syntax error (unexpected end of input)",
                            PM_ERR_SYNTAX};
        return false;
    }
    *i = k + 1;
    return true;
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
            } else {
                if (!scan_scalar(t, len, &i, e))
                    return false;
                state = AFTER;
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
            if (!scan_key(t, len, &i, e))
                return false;
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
            pm_json_path_key(sub, sizeof sub, path, dup->string);
            return pm_fail(err, PM_ERR_DUPLICATE_KEY, file, sub, "duplicate key \"%s\"",
                           dup->string);
        }
    }
    size_t idx = 0;
    for (const cJSON *c = item->child; c; c = c->next, idx++) {
        if (cJSON_IsObject(item))
            pm_json_path_key(sub, sizeof sub, path, c->string);
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
    /* Errors and provenance name the file whole, or not at all. */
    if (path && strlen(path) >= PM_PATH_BYTES)
        return pm_fail(err, PM_ERR_IO, NULL, NULL,
                       "the path \"%.40s...\" is %zu bytes long, more than the %d this reader "
                       "handles: a shorter path (a link, or the file's folder as the current "
                       "one)",
                       path, strlen(path), PM_PATH_BYTES - 1);
    char *text = NULL;
    size_t len = 0;
    pm_status st = pm_read_file(path, &text, &len, err);
    if (st != PM_OK)
        return st;
    st = pm_json_parse(text, len, path, out, err);
    pm_free(text);
    return st;
}
