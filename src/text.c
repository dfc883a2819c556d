/*
 * text.c - a growing string for the library's text writers (the graph's DOT, the run report's
 * JSON): printf-style appends that record an allocation failure once and ignore the rest, so a
 * writer checks one flag at the end; and JSON string literals with every character escaped that
 * JSON requires (a model name holding a quote still gives valid JSON).
 *
 * May call: alloc.c.
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

void pm_sb_printf(pm_sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
        char *np = pm_realloc(b->p, cap);
        if (!np) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
}

void pm_sb_json_string(pm_sbuf *b, const char *s)
{
    pm_sb_printf(b, "\"");
    for (const unsigned char *q = (const unsigned char *)s; *q && !b->failed; q++) {
        if (*q == '"' || *q == '\\')
            pm_sb_printf(b, "\\%c", *q);
        else if (*q < 0x20)
            pm_sb_printf(b, "\\u%04x", *q);
        else
            pm_sb_printf(b, "%c", *q);
    }
    pm_sb_printf(b, "\"");
}
