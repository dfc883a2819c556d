/*
 * error.c - status names, error filling and formatting, and the small string helpers every
 * module uses. Errors are caller-owned fixed buffers: nothing here allocates.
 *
 * May call: nothing of the library (the public structs only).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

bool pm_file_is_override(const char *file)
{
    const size_t n = sizeof PM_ERROR_FILE_OVERRIDE - 1;
    return file && strncmp(file, PM_ERROR_FILE_OVERRIDE, n) == 0 &&
           (file[n] == '\0' || file[n] == ' ');
}

const char *pm_status_name(pm_status status)
{
    static const char *const names[] = {
        "PM_OK",          "PM_ERR_NOMEM",         "PM_ERR_IO",           "PM_ERR_SYNTAX",
        "PM_ERR_TYPE",    "PM_ERR_MISSING",       "PM_ERR_UNKNOWN_KEY",  "PM_ERR_DUPLICATE_KEY",
        "PM_ERR_RANGE",   "PM_ERR_INCONSISTENT",  "PM_ERR_NOT_FOUND",    "PM_ERR_INVALID_ARG",
        "PM_ERR_UNIT",    "PM_ERR_UNSUPPORTED",   "PM_ERR_VALUE",         "PM_ERR_CANCELLED",
    };
    if ((int)status < 0 || (size_t)status >= PM_ARRAY_LEN(names))
        return "PM_ERR_UNKNOWN_STATUS";
    return names[status];
}

const char *pm_version(void) { return PM_VERSION_STRING; }

void pm_strlcpy(char *dst, const char *src, size_t n)
{
    if (n == 0)
        return;
    size_t len = src ? strlen(src) : 0;
    if (len >= n) {
        len = n - 1;
        /* Cut only between characters: never leave the lead bytes of a UTF-8 sequence without
         * its continuation bytes (10xxxxxx), which would make the copy invalid UTF-8. */
        while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
            len--;
    }
    if (len)
        memcpy(dst, src, len);
    dst[len] = '\0';
}

void pm_error_clear(pm_error *err)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
}

pm_status pm_fail(pm_error *err, pm_status status, const char *file, const char *path,
                  const char *fmt, ...)
{
    if (!err)
        return status;
    err->status = status;
    pm_strlcpy(err->file, file ? file : "", sizeof err->file);
    pm_strlcpy(err->path, path ? path : "", sizeof err->path);
    err->line = 0;
    err->column = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

size_t pm_error_format(const pm_error *err, char *buf, size_t size)
{
    if (!err)
        return 0;
    /* One snprintf, so that the length is the whole text's (a file of any length included). */
    const char *sep = err->path[0] ? ": " : "";
    int n;
    if (err->file[0] && err->line > 0)
        n = snprintf(buf, size, "%s:%d:%d: %s%s%s", err->file, err->line, err->column, err->path,
                     sep, err->message);
    else if (err->file[0])
        n = snprintf(buf, size, "%s: %s%s%s", err->file, err->path, sep, err->message);
    else
        n = snprintf(buf, size, "%s%s%s", err->path, sep, err->message);
    return n < 0 ? 0 : (size_t)n;
}

int pm_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 255;
    int prev[65], cur[65];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            int best = prev[j - 1] + cost;
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            cur[j] = best;
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb] > 255 ? 255 : prev[lb];
}

int pm_suggest_limit(size_t len) { return len > 9 ? (int)(len / 3) : 2; }

const char *pm_suggest(const char *word, const char *const *names, size_t n)
{
    if (!word || !names)
        return NULL;
    int best = 1 << 20;
    const char *near = NULL;
    for (size_t i = 0; i < n; i++) {
        const int d = names[i] ? pm_edit_distance(word, names[i]) : 1 << 20;
        if (d < best) {
            best = d;
            near = names[i];
        }
    }
    return near && best <= pm_suggest_limit(strlen(word)) ? near : NULL;
}

const char *pm_errno_text(int errnum, char *buf, size_t n)
{
    /* The XSI strerror_r (_POSIX_C_SOURCE 200809L): strerror may share one buffer between
     * threads, and the library promises reentrancy. */
    if (strerror_r(errnum, buf, n) != 0)
        snprintf(buf, n, "error %d", errnum);
    return buf;
}
