/*
 * fuzz_common.h - what every libFuzzer harness shares: the oracle that turns a silently wrong
 * answer into a crash. A parser may reject any input, but a rejection must be a well-formed
 * error (status recorded in err, a message, no "nan" or "inf" that the input did not spell), and
 * whatever it accepts must evaluate to finite, positive times: a NaN or a negative request time
 * is as much a bug as a segfault, it is only quieter.
 *
 * Harnesses are built with clang -fsanitize=fuzzer,address,undefined by scripts/fuzz.sh; they
 * include src/internal.h to reach the in-memory readers. The bundled data directory is
 * pm_default_data_dir() (PRESERVE_MODEL_DATA, else the one compiled in).
 */
#ifndef PM_FUZZ_COMMON_H
#define PM_FUZZ_COMMON_H

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Fails the run with a message: libFuzzer saves the input as a crash artifact. */
#define FZ_ASSERT(cond, ...)                                                                   \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz oracle failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* A NUL-terminated copy of the input (free()). */
static inline char *fz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Case-insensitive search of needle in the first n bytes of hay (which may hold NULs). */
static inline bool fz_contains_ci(const void *hay, size_t n, const char *needle)
{
    const unsigned char *h = hay;
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++) {
        size_t k = 0;
        while (k < m && tolower(h[i + k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == m)
            return true;
    }
    return false;
}

/* Whether text holds "nan" or "inf" (any case, "infinity" too, a minus sign allowed) as a word
 * of its own, the way printf writes a non-finite double: "mi300x-infinity-fabric" is a name,
 * "(got -nan)" a bug. */
static inline bool fz_has_nonfinite_word(const char *text)
{
    for (const char *p = text; *p; p++) {
        /* A name character before it, or a hyphen joining it to one, makes it part of a name. */
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        if (p > text + 1 && p[-1] == '-' &&
            (isalnum((unsigned char)p[-2]) || p[-2] == '_' || p[-2] == '-'))
            continue;
        size_t m = 0;
        if (strncasecmp(p, "infinity", 8) == 0)
            m = 8;
        else if (strncasecmp(p, "nan", 3) == 0 || strncasecmp(p, "inf", 3) == 0)
            m = 3;
        if (m && !isalnum((unsigned char)p[m]) && p[m] != '_' && p[m] != '-')
            return true;
    }
    return false;
}

/* A rejection must be a complete error: the status recorded, a message, and no "nan" or "inf"
 * in the text unless the input spelled it (a key named "nan" is echoed back legitimately). */
static inline void fz_check_error(pm_status st, const pm_error *err, const void *input,
                                  size_t size)
{
    FZ_ASSERT(st != PM_OK, "not an error");
    FZ_ASSERT((int)st > 0 && st <= PM_ERR_VALUE, "status %d out of the documented set", (int)st);
    FZ_ASSERT(err->status == st, "returned %s, err->status %s", pm_status_name(st),
              pm_status_name(err->status));
    FZ_ASSERT(err->message[0] != '\0', "empty message for %s", pm_status_name(st));
    /* No harness injects allocation failures, and no input here is large enough to exhaust
     * memory: NOMEM would be a parser misreading its input (say, cJSON refusing text that the
     * syntax check let through). */
    FZ_ASSERT(st != PM_ERR_NOMEM, "PM_ERR_NOMEM without an allocation failure: %s",
              err->message);
    char text[1200];
    pm_error_format(err, text, sizeof text);
    bool input_says = fz_contains_ci(input, size, "nan") || fz_contains_ci(input, size, "inf");
    FZ_ASSERT(input_says || !fz_has_nonfinite_word(text), "a non-finite number in the message: %s",
              text);
}

/* An error about an input file must say where: the file (or "--set ..."), and the JSON path or
 * the line and column, except for what concerns the whole file (unreadable, empty, not JSON). */
static inline void fz_check_located(pm_status st, const pm_error *err)
{
    char text[1200];
    pm_error_format(err, text, sizeof text);
    FZ_ASSERT(err->file[0] != '\0', "%s names no file: %s", pm_status_name(st), text);
    FZ_ASSERT(err->path[0] != '\0' || err->line > 0 || st == PM_ERR_IO ||
                  st == PM_ERR_NOT_FOUND || st == PM_ERR_SYNTAX,
              "%s names no JSON path or position: %s", pm_status_name(st), text);
}

static inline bool fz_pos(double x) { return isfinite(x) && x > 0; }
static inline bool fz_nonneg(double x) { return isfinite(x) && x >= 0; }

/* Every number of an estimate must be finite, and every time and rate positive. */
static inline void fz_check_estimate(const pm_scenario *s, const pm_estimate *e)
{
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const pm_mode_result *r = &e->modes[m];
        const char *mn = pm_mode_name((pm_mode)m);
        FZ_ASSERT(fz_pos(r->request_s), "%s request_s %g", mn, r->request_s);
        FZ_ASSERT(fz_pos(r->prefill_s), "%s prefill_s %g", mn, r->prefill_s);
        FZ_ASSERT(fz_pos(r->decode_s), "%s decode_s %g", mn, r->decode_s);
        FZ_ASSERT(fz_pos(r->tpot_s), "%s tpot_s %g", mn, r->tpot_s);
        FZ_ASSERT(fz_pos(r->tpot_mean_s), "%s tpot_mean_s %g", mn, r->tpot_mean_s);
        FZ_ASSERT(fz_pos(r->tokens_per_s), "%s tokens_per_s %g", mn, r->tokens_per_s);
        FZ_ASSERT(fz_nonneg(r->allreduce_decode_s), "%s allreduce_decode_s %g", mn,
                  r->allreduce_decode_s);
        FZ_ASSERT(s->cluster.devices > 1 || r->allreduce_decode_s <= 0.0,
                  "%s: an allreduce of %g s on one device", mn, r->allreduce_decode_s);
    }
    FZ_ASSERT(fz_pos(e->speedup_preserve_vs_serial), "speedup %g", e->speedup_preserve_vs_serial);
    FZ_ASSERT(fz_pos(e->speedup_preserve_vs_fused), "speedup %g", e->speedup_preserve_vs_fused);
    FZ_ASSERT(fz_pos(e->speedup_fused_vs_serial), "speedup %g", e->speedup_fused_vs_serial);
    FZ_ASSERT(e->prefill_tokens >= 1 && e->decode_steps >= 1 &&
                  e->prefill_tokens + e->decode_steps == s->workload.seq_len,
              "prefill %lld + decode %lld != seq_len %lld", (long long)e->prefill_tokens,
              (long long)e->decode_steps, (long long)s->workload.seq_len);
    /* -1: every layer is windowed and its window always fits (the header's contract). */
    FZ_ASSERT(e->kv_spill_context >= -1, "kv_spill_context %lld", (long long)e->kv_spill_context);
    FZ_ASSERT(fz_pos(e->l2_window_bytes), "l2_window_bytes %g", e->l2_window_bytes);
    FZ_ASSERT(fz_pos(e->weight_bytes_per_device), "weight bytes %g", e->weight_bytes_per_device);
    FZ_ASSERT(fz_pos(e->kv_bytes_per_device), "kv bytes %g", e->kv_bytes_per_device);
    FZ_ASSERT(fz_pos(e->shard.q_heads) && fz_pos(e->shard.kv_heads) &&
                  fz_pos(e->shard.mlp_cols) && fz_pos(e->shard.vocab_cols),
              "shard %g %g %g %g", e->shard.q_heads, e->shard.kv_heads, e->shard.mlp_cols,
              e->shard.vocab_cols);
}

/* Checks a scenario the way a caller would: pm_scenario_check, then pm_estimate_compute. Both
 * may refuse (with a proper error); what the estimate returns must pass the oracle. */
static inline void fz_evaluate(const pm_scenario *s, const void *input, size_t size)
{
    pm_error err;
    pm_status st = pm_scenario_check(s, &err);
    if (st != PM_OK) {
        fz_check_error(st, &err, input, size);
        return;
    }
    pm_estimate e;
    st = pm_estimate_compute(s, &e, &err);
    if (st != PM_OK) {
        /* A scenario that passed pm_scenario_check is only refused for what the check cannot
         * see; running out of memory is not among the inputs a fuzzer controls. */
        fz_check_error(st, &err, input, size);
        FZ_ASSERT(st != PM_ERR_NOMEM && st != PM_ERR_INVALID_ARG,
                  "estimate of a checked scenario: %s: %s", pm_status_name(st), err.message);
        return;
    }
    fz_check_estimate(s, &e);
}

/* The bundled default scenario, loaded once: the harnesses of one component replace that
 * component and keep the rest. */
static inline const pm_scenario *fz_base(void)
{
    static pm_scenario base;
    static bool loaded;
    if (!loaded) {
        pm_error err;
        if (pm_scenario_load("llama70b", NULL, &base, &err) != PM_OK) {
            char text[1200];
            pm_error_format(&err, text, sizeof text);
            fprintf(stderr, "cannot load the bundled llama70b scenario (data dir %s): %s\n",
                    pm_default_data_dir(), text);
            abort();
        }
        loaded = true;
    }
    return &base;
}

/* Sends stderr to /dev/null (on) or back (off): the CLI's messages are its product in the
 * harnesses that call it, not the fuzzer's output. An oracle asserts with stderr back. */
static inline void fz_quiet(bool on)
{
    static int saved = -1, null = -1;
    fflush(stderr);
    if (on && saved < 0) {
        saved = dup(2);
        null = null >= 0 ? null : open("/dev/null", O_WRONLY);
        dup2(null, 2);
    } else if (!on && saved >= 0) {
        dup2(saved, 2);
        close(saved);
        saved = -1;
    }
}

/* Writes the input to this process's scratch file and returns its path. The loaders that only
 * read files (scenario resolution, pm_file_validate) are fuzzed through it. name is the file
 * name inside a per-process directory, e.g. "config.json". */
static inline const char *fz_write_file(const char *name, const uint8_t *data, size_t size)
{
    static char dir[256];
    static char path[512];
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/pm-fuzz-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            abort();
        }
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    /* A new file each time: truncating one makes ext4 (auto_da_alloc) flush it at close, which
     * costs milliseconds per execution. */
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror(path);
        abort();
    }
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) {
            perror("write");
            abort();
        }
        off += (size_t)w;
    }
    close(fd);
    return path;
}

#endif
