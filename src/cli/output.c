/*
 * output.c - the writers' shared machinery (output.h). Escaping is done here once, so no
 * command formats a name from a data file by hand; files are made complete before they get
 * their name; stdout is checked once, when the command has returned, because every command
 * writes through it and a full disk shows only at the flush. The program name of every
 * diagnostic, and the out-of-memory one, are here too: the writers report with them, and every
 * other file of the tool sits above this one.
 *
 * May call: the public API only (the bottom of the tool).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

const char *prog = "preserve-model";

int out_of_memory(void)
{
    fprintf(stderr, "%s: out of memory\n", prog);
    return EXIT_CONFIG;
}

bool sbuf_append(sbuf *b, const char *src, size_t n)
{
    if (b->cap - b->len <= n) {
        const size_t cap = b->cap * 2 + n + 4096;
        char *nb = realloc(b->buf, cap);
        if (!nb)
            return false;
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, src, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return true;
}

bool sbuf_printf(sbuf *b, const char *fmt_, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt_);
        const int n = b->buf ? vsnprintf(b->buf + b->len, b->cap - b->len, fmt_, ap) : 0;
        va_end(ap);
        if (n < 0)
            return false;
        if (b->buf && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return true;
        }
        const size_t cap = b->cap * 2 + (size_t)n + 4096;
        char *nb = realloc(b->buf, cap);
        if (!nb)
            return false;
        b->buf = nb;
        b->cap = cap;
    }
}

bool sbuf_json_string(sbuf *b, const char *s)
{
    bool ok = sbuf_append(b, "\"", 1);
    for (const unsigned char *q = (const unsigned char *)s; *q && ok; q++) {
        if (*q == '"' || *q == '\\')
            ok = sbuf_printf(b, "\\%c", *q);
        else if (*q < 0x20 || *q == 0x7f)
            ok = sbuf_printf(b, "\\u%04x", *q);
        else
            ok = sbuf_append(b, (const char *)q, 1);
    }
    return ok && sbuf_append(b, "\"", 1);
}

bool sbuf_json_number(sbuf *b, double v)
{
    char t[PM_JSON_NUMBER_MAX];
    const int n = pm_json_number(v, t, sizeof t);
    return sbuf_append(b, t, (size_t)n);
}

bool sbuf_csv_field(sbuf *b, const char *s, bool always_quote)
{
    if (!always_quote && !strpbrk(s, ",\"\r\n"))
        return sbuf_append(b, s, strlen(s));
    bool ok = sbuf_append(b, "\"", 1);
    for (const char *q = s; *q && ok; q++)
        ok = sbuf_append(b, q, 1) && (*q != '"' || sbuf_append(b, "\"", 1));
    return ok && sbuf_append(b, "\"", 1);
}

void sbuf_free(sbuf *b)
{
    free(b->buf);
    *b = (sbuf){0};
}

char *str_printf(const char *fmt_, ...)
{
    va_list ap;
    va_start(ap, fmt_);
    const int n = vsnprintf(NULL, 0, fmt_, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) {
        va_start(ap, fmt_);
        vsnprintf(s, (size_t)n + 1, fmt_, ap);
        va_end(ap);
    }
    return s;
}

static int stdout_errno;

void stdout_failed(int errnum)
{
    if (!stdout_errno)
        stdout_errno = errnum;
}

/* Set when an escaped string could not be made: finish_output then fails the command, which
 * has written an incomplete output. */
static bool escape_failed;

static void fput_sbuf(FILE *f, sbuf *b, bool ok)
{
    if (ok) {
        if (fwrite(b->buf, 1, b->len, f) != b->len && f == stdout)
            stdout_failed(errno);
    } else
        escape_failed = true;
    sbuf_free(b);
}

void fput_json_string(FILE *f, const char *s)
{
    sbuf b = {0};
    fput_sbuf(f, &b, sbuf_json_string(&b, s));
}

void fput_json_number(FILE *f, double v)
{
    char t[PM_JSON_NUMBER_MAX];
    pm_json_number(v, t, sizeof t);
    if (fputs(t, f) == EOF && f == stdout)
        stdout_failed(errno);
}

void fput_json_speculation(FILE *f, const pm_speculation *sp)
{
    if (sp->draft_tokens > 0) {
        fprintf(f, "{\"method\": \"%s\", \"draft_tokens\": %d, \"tokens_per_step\": ",
                pm_spec_method_name(sp->method), sp->draft_tokens);
        fput_json_number(f, pm_spec_expected_tokens(sp));
        fputc('}', f);
    } else {
        fputs("null", f);
    }
}

void fput_csv_field(FILE *f, const char *s, bool always_quote)
{
    sbuf b = {0};
    fput_sbuf(f, &b, sbuf_csv_field(&b, s, always_quote));
}

void fput_comment_text(FILE *f, const char *s)
{
    for (const char *q = s; *q; q++)
        if (*q == '\n' || *q == '\r')
            fputs(*q == '\n' ? "\\n" : "\\r", f);
        else
            fputc(*q, f);
}

int tmp_create(char *template_)
{
    const int fd = mkstemp(template_);
    if (fd >= 0) {
        /* mkstemp makes the file private; give it the mode fopen would have. */
        const mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask);
    }
    return fd;
}

bool out_file_open(out_file *o, const char *path)
{
    *o = (out_file){0};
    o->path = str_printf("%s", path);
    o->tmp = str_printf("%s.tmpXXXXXX", path);
    if (!o->path || !o->tmp) {
        out_file_abort(o);
        out_of_memory();
        return false;
    }
    const int fd = tmp_create(o->tmp);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        out_file_abort(o);
        return false;
    }
    o->f = fdopen(fd, "w");
    if (!o->f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        close(fd);
        out_file_abort(o);
        return false;
    }
    return true;
}

int out_file_commit(out_file *o)
{
    errno = 0;
    const bool written = fflush(o->f) == 0 && !ferror(o->f);
    const int werr = errno;
    const bool closed = fclose(o->f) == 0;
    o->f = NULL;
    const int cerr = errno;
    if (!written || !closed || rename(o->tmp, o->path) != 0) {
        const int e = !written ? werr : !closed ? cerr : errno;
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, o->path,
                e ? strerror(e) : "a write failed");
        out_file_abort(o);
        return EXIT_CONFIG;
    }
    free(o->tmp);
    o->tmp = NULL;
    out_file_abort(o);
    return 0;
}

void out_file_abort(out_file *o)
{
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    *o = (out_file){0};
}

int finish_output(int rc)
{
    errno = 0;
    const bool written = fflush(stdout) == 0 && !ferror(stdout);
    const int werr = stdout_errno ? stdout_errno : errno;
    const bool closed = fclose(stdout) == 0;
    const int e = !written ? werr : errno;
    if (escape_failed) {
        fprintf(stderr, "%s: out of memory writing the output\n", prog);
        rc = rc ? rc : EXIT_CONFIG;
    } else if (!written || !closed) {
        fprintf(stderr, "%s: cannot write stdout: %s\n", prog, e ? strerror(e) : "a write failed");
        rc = rc ? rc : EXIT_CONFIG;
    }
    if (fflush(stderr) != 0 || ferror(stderr))
        rc = rc ? rc : EXIT_CONFIG;
    return rc;
}
