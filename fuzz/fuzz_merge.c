/*
 * fuzz_merge.c - `preserve-model merge` (src/cli/merge.c, compiled in): the input is cut at
 * lines "=====" into at most 4 shard files, which merge_run reads. Whatever it is given, merge
 * either refuses (exit 1 or 2, nothing but the header and whole rows written) or writes the
 * merged CSV, which must then hold no shard line, only whole lines, exactly the data rows of
 * the files given, and one header.
 */
#define _GNU_SOURCE /* memmem */
#include "fuzz_common.h"

#include "merge.h"

#define MAX_FILES 4

/* Lines of text that are rows: not comments, not the column header (the first non-comment
 * line of a file). */
static size_t data_rows(const char *text, size_t n)
{
    size_t rows = 0;
    bool header_seen = false;
    for (size_t i = 0; i < n;) {
        const char *eol = memchr(text + i, '\n', n - i);
        const size_t len = eol ? (size_t)(eol - (text + i)) + 1 : n - i;
        if (text[i] != '#') {
            if (header_seen)
                rows++;
            header_seen = true;
        }
        i += len;
    }
    return rows;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char sep[] = "\n=====\n";
    char names[MAX_FILES][32];
    char *paths[MAX_FILES];
    int n = 0;
    size_t in_rows = 0;
    for (size_t at = 0; n < MAX_FILES;) {
        const uint8_t *next = at < size ? memmem(data + at, size - at, sep, sizeof sep - 1) : NULL;
        const size_t len = next ? (size_t)(next - (data + at)) + 1 : size - at;
        snprintf(names[n], sizeof names[n], "shard%d.csv", n);
        paths[n] = strdup(fz_write_file(names[n], data + at, len));
        in_rows += data_rows((const char *)data + at, len);
        n++;
        if (!next)
            break;
        at += len + sizeof sep - 2;
    }
    char *out = NULL;
    size_t out_len = 0;
    FILE *f = open_memstream(&out, &out_len);
    FZ_ASSERT(f, "open_memstream");
    fz_quiet(true);
    const int rc = merge_run(n, paths, f);
    fz_quiet(false);
    fclose(f);
    FZ_ASSERT(rc == 0 || rc == 1 || rc == 2, "exit status %d", rc);
    for (size_t i = 0; i < out_len;) {
        const char *eol = memchr(out + i, '\n', out_len - i);
        FZ_ASSERT(eol, "a cut line in the output at byte %zu", i);
        FZ_ASSERT(strncmp(out + i, "# shard ", 8) != 0, "a shard line in the output");
        i = (size_t)(eol - out) + 1;
    }
    if (rc == 0)
        FZ_ASSERT(data_rows(out, out_len) == in_rows, "merged %zu rows of %zu",
                  data_rows(out, out_len), in_rows);
    free(out);
    for (int i = 0; i < n; i++)
        free(paths[i]);
    return 0;
}
