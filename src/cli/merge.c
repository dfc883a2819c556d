/*
 * merge.c - `preserve-model merge FILE...`: joins the CSVs of --shard K/N runs into the CSV a
 * single run gives (the header once, then the rows in shard order), after checking that the
 * shards come from one sweep, that each is there exactly once and that each is whole.
 *
 * A shard (sweep_cmd.c) writes, after the single run's header, the line
 *   # shard K/N: rows A to B of T; inputs fnv1a64 H
 * (H: a digest of the resolved inputs and of the grid) and, after its rows,
 *   # shard K/N end: R rows, fnv1a64 D
 * (D: a digest of the rows' bytes). merge reads each file twice, line by line (no file is held
 * in memory): once to check it, once to copy its rows; a mismatch names the file and the line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "merge.h"
#include "output.h"

typedef struct shard {
    const char *path;
    size_t k, n, first, last, total;
    uint64_t inputs;
    char *head;       /* the lines before the shard line */
    size_t head_len;
} shard;

uint64_t fnv1a64(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t scenario_digest(const pm_scenario *s)
{
    uint64_t h = FNV1A64_INIT;
    const char *names[] = {s->name, s->model.name, s->accel.name};
    for (size_t i = 0; i < 3; i++)
        h = fnv1a64(h, names[i], strlen(names[i]) + 1);
    for (size_t i = 0; i < pm_scenario_param_count(s); i++) {
        const pm_param_info *p = pm_scenario_param(s, i);
        h = fnv1a64(h, p->path, strlen(p->path) + 1);
        h = fnv1a64(h, p->unit_si, strlen(p->unit_si) + 1);
        h = fnv1a64(h, &p->value_si, sizeof p->value_si);
        if (p->value_text) /* a choice made by name */
            h = fnv1a64(h, p->value_text, strlen(p->value_text) + 1);
    }
    return h;
}

void print_resolved(FILE *f, const cli *c, const pm_scenario *s)
{
    fputs("# resolved: model ", f);
    fput_comment_text(f, s->model.name);
    fputs(", accelerator ", f);
    fput_comment_text(f, s->accel.name);
    fputs(", cluster ", f);
    fput_comment_text(f, s->cluster.name);
    fprintf(f, " x %d, batch %d, seq_len %lld; %zu inputs fnv1a64 %016" PRIx64 " (as '%s resolve' "
               "lists them)\n# data directory ",
            s->cluster.devices, s->workload.batch, (long long)s->workload.seq_len,
            pm_scenario_param_count(s), scenario_digest(s), prog);
    fput_comment_text(f, c->data_dir ? c->data_dir : pm_default_data_dir());
    fputc('\n', f);
}

/* Fields of one CSV line (RFC 4180 quoting); -1 when a quote is left open. */
static long csv_fields(const char *line, size_t len)
{
    long fields = 1;
    bool quoted = false;
    for (size_t i = 0; i < len; i++) {
        if (line[i] == '"')
            quoted = !quoted;
        else if (line[i] == ',' && !quoted)
            fields++;
    }
    return quoted ? -1 : fields;
}

static int bad(const shard *s, size_t line, const char *what)
{
    if (line)
        fprintf(stderr, "%s: merge: %s:%zu: %s\n", prog, s->path, line, what);
    else
        fprintf(stderr, "%s: merge: %s: %s\n", prog, s->path, what);
    return EXIT_CONFIG;
}

/* Opens a shard: a regular file of at most MERGE_MAX_FILE_BYTES. NULL, said on stderr. */
static FILE *open_shard(const shard *s)
{
    FILE *f = fopen(s->path, "rb");
    if (!f) {
        fprintf(stderr, "%s: merge: cannot read %s: %s\n", prog, s->path, strerror(errno));
        return NULL;
    }
    struct stat st;
    const char *why = NULL;
    char msg[128];
    if (fstat(fileno(f), &st) != 0) {
        snprintf(msg, sizeof msg, "cannot read: %s", strerror(errno));
        why = msg;
    } else if (!S_ISREG(st.st_mode)) {
        why = "not a regular file (a shard is the CSV file of a --shard run)";
    } else if ((uintmax_t)st.st_size > MERGE_MAX_FILE_BYTES) {
        snprintf(msg, sizeof msg, "%jd bytes, more than the %llu a shard may hold",
                 (intmax_t)st.st_size, (unsigned long long)MERGE_MAX_FILE_BYTES);
        why = msg;
    }
    if (why) {
        bad(s, 0, why);
        fclose(f);
        return NULL;
    }
    return f;
}

/* The '# shard K/N: rows A to B of T; inputs fnv1a64 H' line of s at line no: read into s on
 * the first pass, checked unchanged on the second (merging). Returns 0 or bad()'s code. */
static int shard_line(shard *s, size_t no, const char *line, bool merging)
{
    size_t k, n, a, b, t;
    uint64_t h;
    int used = 0;
    if (sscanf(line, "# shard %zu/%zu: rows %zu to %zu of %zu; inputs fnv1a64 %16" SCNx64 "%n",
               &k, &n, &a, &b, &t, &h, &used) != 6 ||
        line[used] != '\n' || k < 1 || k > n)
        return bad(s, no, "a malformed '# shard K/N' line");
    if (merging)
        return k != s->k || n != s->n || a != s->first || h != s->inputs
                   ? bad(s, no, "the file changed while it was merged")
                   : 0;
    s->k = k, s->n = n, s->first = a, s->last = b, s->total = t, s->inputs = h;
    size_t first, last;
    pm_sweep_slice(t, k - 1, n, &first, &last);
    if (a != first + 1 || b != last)
        return bad(s, no, "rows A to B are not shard K/N's slice of the T rows");
    return 0;
}

/* The '# shard K/N end: R rows, fnv1a64 D' line of s at line no: R and D into *rows and
 * *digest. Returns 0 or bad()'s code. */
static int end_line(shard *s, size_t no, const char *line, size_t *rows, uint64_t *digest)
{
    size_t k, n, r = 0;
    uint64_t d = 0;
    int used = 0;
    int rc = 0;
    if (sscanf(line, "# shard %zu/%zu end: %zu rows, fnv1a64 %16" SCNx64 "%n", &k, &n, &r, &d,
               &used) != 4 ||
        line[used] != '\n')
        rc = bad(s, no, "a comment among the rows (expected the '# shard K/N end' line)");
    else if (k != s->k || n != s->n)
        rc = bad(s, no, "the end line names another shard");
    *rows = r;
    *digest = d;
    return rc;
}

/* Reads one shard through: its header (kept in s on the first pass), its shard line, rows and
 * end line, every rule checked; with out, copies the rows to it. 0 or EXIT_CONFIG, said. */
static int scan_shard(shard *s, FILE *out)
{
    FILE *f = open_shard(s);
    if (!f)
        return EXIT_CONFIG;
    char *line = NULL;
    size_t cap = 0, no = 0, rows = 0, head_len = 0, end_rows = 0;
    long fields = 0;
    bool in_rows = false, ended = false;
    uint64_t digest = FNV1A64_INIT, end_digest = 0;
    int rc = 0;
    char *head = NULL;
    ssize_t got;
    char msg[200];
    errno = 0;
    while (rc == 0 && (got = getline(&line, &cap, f)) > 0) {
        const size_t len = (size_t)got;
        no++;
        if (strlen(line) != len)
            rc = bad(s, no, "a NUL byte (not a CSV file)");
        else if (line[len - 1] != '\n')
            rc = bad(s, no, "the last line is cut (no line end): the shard is incomplete");
        else if (ended)
            rc = bad(s, no, "a line after the shard's end line");
        else if (strncmp(line, "# preserve-model search shard ", 30) == 0)
            rc = bad(s, no, "a search's shard: merge joins a sweep's; join a search's shards "
                            "with its own options, `preserve-model search [OPTIONS] SHARD...`");
        else if (!in_rows && strncmp(line, "# shard ", 8) == 0) {
            rc = shard_line(s, no, line, out != NULL);
            in_rows = true;
            if (rc == 0 && fields <= 0)
                rc = bad(s, no, "no column header before the shard line");
        } else if (!in_rows) {
            if (line[0] != '#') {
                if (fields > 0)
                    rc = bad(s, no, "a row before any '# shard K/N' line (was it written with "
                                    "--shard?)");
                fields = csv_fields(line, len - 1);
                if (fields < 0)
                    rc = bad(s, no, "an open quote in the column header");
            }
            if (rc == 0 && !out) {
                char *nh = realloc(head, head_len + len + 1);
                if (!nh)
                    rc = out_of_memory();
                else {
                    head = nh;
                    memcpy(head + head_len, line, len + 1);
                    head_len += len;
                }
            }
        } else if (line[0] == '#') {
            rc = end_line(s, no, line, &end_rows, &end_digest);
            ended = true;
        } else {
            const long nf = csv_fields(line, len - 1);
            if (nf != fields) {
                snprintf(msg, sizeof msg, "%ld fields, the header has %ld", nf, fields);
                rc = bad(s, no, nf < 0 ? "an open quote in the row" : msg);
            }
            digest = fnv1a64(digest, line, len);
            rows++;
            if (rc == 0 && out && fwrite(line, 1, len, out) != len) {
                stdout_failed(errno);
                rc = EXIT_CONFIG;
            }
        }
    }
    if (rc == 0 && ferror(f))
        rc = bad(s, 0, strerror(errno ? errno : EIO));
    else if (rc == 0 && !in_rows)
        rc = bad(s, 0, "no '# shard K/N' line (was it written with --shard?)");
    else if (rc == 0 && !ended)
        rc = bad(s, no, "no '# shard K/N end' line: the shard is incomplete");
    else if (rc == 0 && (rows != end_rows || rows != s->last + 1 - s->first)) {
        snprintf(msg, sizeof msg, "%zu rows, but the shard line says %zu and the end line %zu",
                 rows, s->last + 1 - s->first, end_rows);
        rc = bad(s, no, msg);
    } else if (rc == 0 && digest != end_digest)
        rc = bad(s, no, "the rows differ from those the shard wrote (their digest differs)");
    free(line);
    fclose(f);
    if (!out && rc == 0) {
        s->head = head;
        s->head_len = head_len;
    } else {
        free(head);
    }
    return rc;
}

int merge_run(int argc, char **argv, FILE *out)
{
    if (argc < 1)
        return usage_error("merge: give the shard files (the CSVs of --shard K/N runs)");
    shard *sf = calloc((size_t)argc, sizeof *sf);
    if (!sf)
        return out_of_memory();
    int rc = 0;
    for (int i = 0; i < argc && rc == 0; i++) {
        shard *s = &sf[i];
        s->path = argv[i];
        rc = scan_shard(s, NULL);
        if (rc)
            break;
        const shard *s0 = &sf[0];
        if (s->n != s0->n) {
            fprintf(stderr, "%s: merge: %s is shard %zu/%zu but %s is of %zu shards\n", prog,
                    s->path, s->k, s->n, s0->path, s0->n);
            rc = EXIT_CONFIG;
        } else if (s->total != s0->total || s->inputs != s0->inputs || s->head_len != s0->head_len ||
                 memcmp(s->head, s0->head, s->head_len) != 0) {
            fprintf(stderr, "%s: merge: %s and %s come from different sweeps (their %s differ)\n",
                    prog, s->path, s0->path,
                    s->inputs != s0->inputs ? "resolved inputs or grids"
                    : s->total != s0->total ? "row totals"
                                            : "headers");
            rc = EXIT_CONFIG;
        }
    }
    /* Every shard exactly once, then the rows in shard order. */
    const size_t n = sf[0].n;
    shard **order = rc == 0 ? calloc(n + 1, sizeof *order) : NULL;
    if (rc == 0 && !order)
        rc = out_of_memory();
    for (int i = 0; i < argc && rc == 0; i++) {
        if (order[sf[i].k]) {
            fprintf(stderr, "%s: merge: shard %zu/%zu given twice (%s and %s)\n", prog, sf[i].k, n,
                    order[sf[i].k]->path, sf[i].path);
            rc = EXIT_CONFIG;
        }
        order[sf[i].k] = &sf[i];
    }
    for (size_t k = 1; k <= n && rc == 0; k++)
        if (!order[k]) {
            fprintf(stderr, "%s: merge: shard %zu/%zu is missing\n", prog, k, n);
            rc = EXIT_CONFIG;
        }
    if (rc == 0 && fwrite(sf[0].head, 1, sf[0].head_len, out) != sf[0].head_len) {
        stdout_failed(errno);
        rc = EXIT_CONFIG;
    }
    for (size_t k = 1; k <= n && rc == 0; k++)
        rc = scan_shard(order[k], out);
    free(order);
    for (int i = 0; i < argc; i++)
        free(sf[i].head);
    free(sf);
    return rc;
}

int cmd_merge(int argc, char **argv)
{
    return merge_run(argc, argv, stdout);
}
