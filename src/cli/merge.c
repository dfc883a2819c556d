/*
 * merge.c - `preserve-model merge FILE...`: joins the CSVs of --shard K/N runs into the CSV a
 * single run gives (the header once, then the rows in shard order), after checking that the
 * shards come from one sweep and that each is there exactly once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

typedef struct shard_file {
    const char *path;
    char *text;
    size_t k, n;
    const char *body;   /* after the shard line */
    size_t head_len;    /* bytes of header before the shard line */
} shard_file;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *t = malloc(cap);
    size_t got;
    while (t && (got = fread(t + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *nt = realloc(t, cap * 2);
            if (!nt) {
                free(t);
                t = NULL;
                break;
            }
            t = nt;
            cap *= 2;
        }
    }
    fclose(f);
    if (t)
        t[len] = '\0';
    return t;
}

int cmd_merge(int argc, char **argv)
{
    if (argc < 1)
        return usage_error("merge: give the shard files (the CSVs of --shard K/N runs)");
    shard_file *sf = calloc((size_t)argc, sizeof *sf);
    if (!sf)
        return EXIT_CONFIG;
    int rc = 0;
    size_t n = 0;
    for (int i = 0; i < argc && rc == 0; i++) {
        shard_file *f = &sf[i];
        f->path = argv[i];
        f->text = slurp(argv[i]);
        if (!f->text) {
            fprintf(stderr, "%s: merge: cannot read %s: %s\n", prog, argv[i], strerror(errno));
            rc = EXIT_CONFIG;
            break;
        }
        const char *line = strstr(f->text, "# shard ");
        if (!line || (line != f->text && line[-1] != '\n') ||
            sscanf(line, "# shard %zu/%zu:", &f->k, &f->n) != 2 || f->k < 1 || f->k > f->n) {
            fprintf(stderr, "%s: merge: %s: no '# shard K/N' line (was it written with --shard?)\n",
                    prog, argv[i]);
            rc = EXIT_CONFIG;
            break;
        }
        f->head_len = (size_t)(line - f->text);
        const char *eol = strchr(line, '\n');
        f->body = eol ? eol + 1 : line + strlen(line);
        if (i == 0)
            n = f->n;
        if (f->n != n) {
            fprintf(stderr, "%s: merge: %s is shard %zu/%zu but %s is of %zu shards\n", prog,
                    argv[i], f->k, f->n, argv[0], n);
            rc = EXIT_CONFIG;
        } else if (f->head_len != sf[0].head_len ||
                   memcmp(f->text, sf[0].text, f->head_len) != 0) {
            fprintf(stderr, "%s: merge: %s and %s come from different sweeps (their headers "
                            "differ)\n",
                    prog, argv[i], argv[0]);
            rc = EXIT_CONFIG;
        }
    }
    /* Every shard exactly once, then the rows in shard order. */
    const shard_file **order = rc == 0 ? calloc(n + 1, sizeof *order) : NULL;
    if (rc == 0 && !order)
        rc = EXIT_CONFIG;
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
    if (rc == 0) {
        fwrite(sf[0].text, 1, sf[0].head_len, stdout);
        for (size_t k = 1; k <= n; k++)
            fputs(order[k]->body, stdout);
    }
    free(order);
    for (int i = 0; i < argc; i++)
        free(sf[i].text);
    free(sf);
    return rc;
}
