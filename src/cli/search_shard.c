/*
 * search_shard.c - the shard files of `search --shard K/N` and their merge (`search FILE...`):
 * a shard writes its slice's result (pm_search_run with the spec's shard_index and
 * shard_count) exactly, every number as a C99 hexadecimal float; the merge reads the shards of
 * one search, checks that they come from the same inputs and space (a digest), that each is
 * there once and whole, and adds them in order with pm_search_merge: the answer of the
 * unsharded search, which the command then prints in any format. The format:
 *
 *   # preserve-model search shard K/N (format 3): groups A to B of G; inputs fnv1a64 H
 *   space CANDIDATES EVALUATED PRUNED INVALID
 *   invalid TEXT                    (the first invalid deployment's error, when INVALID > 0)
 *   mode M FOUND BINDS FRONT        (per mode M 0 1 2; FOUND 0 or 1, BINDS a bound's number)
 *   best CANDIDATE                  (when FOUND)
 *   front CANDIDATE                 (FRONT lines)
 *   # search shard K/N end
 *
 * CANDIDATE: tp pp ep dp chunk mode fails group prefill_tp prefill_instances decode_tp
 * decode_instances hw0 hw1 concurrency objective, then the pm_serve_mode figures in the struct's
 * order (its two flags as 0 or 1). Format 2 added pp (the pipeline stages), format 3 the pools
 * of a disaggregated candidate (0 0 0 0: co-located); a file of format 1 (its first line
 * without "(format N)") or 2 is refused with a message saying so.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "merge.h"
#include "output.h"
#include "search_shard.h"

/* The shard files' format: 2 since the candidates carry their pipeline stages, 3 since they
 * carry a disaggregated deployment's pools, 4 since the space counts the points not served. */
#define SHARD_FORMAT 4

/* The digest of what a shard's answer depends on: the resolved scenario and the spec's
 * workload, space, limits and objective (not its threads or shard). */
uint64_t search_inputs_digest(const pm_scenario *s, const pm_search_spec *sp)
{
    uint64_t h = scenario_digest(s);
    const pm_serve_workload *w = &sp->workload;
    const double v[] = {(double)w->input_tokens, (double)w->output_tokens, w->rule, w->arrival,
                        w->n_classes, sp->device_budget, sp->n_tp, sp->n_pp, sp->n_ep,
                        sp->n_concurrency,
                        sp->n_chunk, sp->n_hw, sp->ttft_limit_s, sp->tpot_limit_s,
                        sp->min_tokens_per_s_per_user, sp->objective, sp->exhaustive,
                        sp->disagg, sp->disagg_link.bandwidth_bytes_per_s,
                        sp->disagg_link.latency_s, sp->disagg_link.layer_streamed,
                        sp->disagg_max_load_frac};
    h = fnv1a64(h, v, sizeof v);
    for (int i = 0; i < w->n_classes && i < PM_MAX_LENGTH_CLASSES; i++) {
        const double c[] = {(double)w->classes[i].input_tokens,
                            (double)w->classes[i].output_tokens, w->classes[i].share};
        h = fnv1a64(h, c, sizeof c);
    }
    h = fnv1a64(h, sp->tp, (size_t)sp->n_tp * sizeof sp->tp[0]);
    h = fnv1a64(h, sp->pp, (size_t)sp->n_pp * sizeof sp->pp[0]);
    h = fnv1a64(h, sp->ep, (size_t)sp->n_ep * sizeof sp->ep[0]);
    h = fnv1a64(h, sp->concurrency, (size_t)sp->n_concurrency * sizeof sp->concurrency[0]);
    h = fnv1a64(h, sp->chunk, (size_t)sp->n_chunk * sizeof sp->chunk[0]);
    for (int a = 0; a < sp->n_hw; a++) {
        const int kind = sp->hw[a].kind;
        h = fnv1a64(h, &kind, sizeof kind);
        h = fnv1a64(h, sp->hw[a].values, sp->hw[a].n_values * sizeof sp->hw[a].values[0]);
    }
    return h;
}

#define SERVE_MODE_NUMBERS 18

/* A mode's figures as numbers, in the struct's order, and back. */
static void figures_out(const pm_serve_mode *x, double *v)
{
    const double w[SERVE_MODE_NUMBERS] = {
        x->ttft_s, x->tpot_s, x->tpot_max_s, x->e2e_s, x->mixed_step_s, x->decode_step_s,
        x->requests_per_s, x->tokens_per_s, x->tokens_per_s_per_device,
        x->tokens_per_s_per_user, x->goodput_tokens_per_s_per_device, x->meets_limits,
        x->tokens_per_s_per_mm2, x->tokens_per_s_per_usd, x->energy_per_token_J,
        x->tokens_per_J, x->in_flight, x->saturated};
    memcpy(v, w, sizeof w);
}

static void figures_in(const double *v, pm_serve_mode *x)
{
    double *const to[SERVE_MODE_NUMBERS] = {
        &x->ttft_s, &x->tpot_s, &x->tpot_max_s, &x->e2e_s, &x->mixed_step_s, &x->decode_step_s,
        &x->requests_per_s, &x->tokens_per_s, &x->tokens_per_s_per_device,
        &x->tokens_per_s_per_user, &x->goodput_tokens_per_s_per_device, NULL,
        &x->tokens_per_s_per_mm2, &x->tokens_per_s_per_usd, &x->energy_per_token_J,
        &x->tokens_per_J, &x->in_flight, NULL};
    for (int i = 0; i < SERVE_MODE_NUMBERS; i++)
        if (to[i])
            *to[i] = v[i];
    x->meets_limits = v[11] > 0.5;
    x->saturated = v[17] > 0.5;
}

static void put_candidate(FILE *f, const char *tag, const pm_search_candidate *k)
{
    fprintf(f, "%s %d %d %d %d %lld %d %d %zu %d %d %d %d %a %a %a %a", tag, k->tp, k->pp, k->ep,
            k->dp, (long long)k->chunk, (int)k->mode, (int)k->fails, k->group, k->prefill_tp,
            k->prefill_instances, k->decode_tp, k->decode_instances, k->hw[0], k->hw[1],
            k->concurrency, k->objective);
    double v[SERVE_MODE_NUMBERS];
    figures_out(&k->figures, v);
    for (int i = 0; i < SERVE_MODE_NUMBERS; i++)
        fprintf(f, " %a", v[i]);
    fputc('\n', f);
}

void search_shard_write(FILE *f, size_t k, size_t n, uint64_t inputs, const pm_search_result *r)
{
    fprintf(f, "# preserve-model search shard %zu/%zu (format %d): groups %zu to %zu of %zu; "
               "inputs fnv1a64 %016" PRIx64 "\n",
            k, n, SHARD_FORMAT, r->first_group + 1, r->last_group, r->groups, inputs);
    fprintf(f, "space %zu %zu %zu %zu %zu\n", r->candidates, r->evaluated, r->pruned,
            r->invalid_plans, r->outside);
    if (r->invalid_plans > 0) {
        fputs("invalid ", f);
        for (const char *p = r->first_invalid; *p; p++)
            fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
        fputc('\n', f);
    }
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        fprintf(f, "mode %d %d %d %zu\n", m, r->found[m] ? 1 : 0, (int)r->binds[m],
                r->n_front[m]);
        if (r->found[m])
            put_candidate(f, "best", &r->best[m]);
        for (size_t i = 0; i < r->n_front[m]; i++)
            put_candidate(f, "front", &r->front[m][i]);
    }
    fprintf(f, "# search shard %zu/%zu end\n", k, n);
}

/* ---------------------------------------------------------------- reading */

typedef struct reader {
    const char *path;
    FILE *f;
    size_t no;
    char *line;
    size_t cap;
} reader;

static int bad(const reader *rd, const char *what)
{
    fprintf(stderr, "%s: search merge: %s, line %zu: %s\n", prog, rd->path, rd->no, what);
    return EXIT_CONFIG;
}

/* The next line without its end; false at the end of the file. */
static bool next_line(reader *rd)
{
    const ssize_t n = getline(&rd->line, &rd->cap, rd->f);
    if (n < 0)
        return false;
    rd->no++;
    if (n > 0 && rd->line[n - 1] == '\n')
        rd->line[n - 1] = '\0';
    return true;
}

static bool get_candidate(const char *text, const char *tag, pm_search_candidate *k)
{
    const size_t t = strlen(tag);
    if (strncmp(text, tag, t) != 0 || text[t] != ' ')
        return false;
    memset(k, 0, sizeof *k);
    long long chunk;
    int mode, fails, used = 0;
    if (sscanf(text + t, " %d %d %d %d %lld %d %d %zu %d %d %d %d%n", &k->tp, &k->pp, &k->ep,
               &k->dp, &chunk, &mode, &fails, &k->group, &k->prefill_tp, &k->prefill_instances,
               &k->decode_tp, &k->decode_instances, &used) != 12 ||
        mode < 0 || mode >= PM_MODE_COUNT || fails < 0 || fails >= PM_BOUND_COUNT)
        return false;
    k->chunk = chunk;
    k->mode = (pm_mode)mode;
    k->fails = (pm_search_bound)fails;
    const char *p = text + t + used;
    double v[4 + SERVE_MODE_NUMBERS];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char *end;
        errno = 0;
        v[i] = strtod(p, &end);
        if (end == p || errno == ERANGE)
            return false;
        p = end;
    }
    if (*p)
        return false;
    k->hw[0] = v[0];
    k->hw[1] = v[1];
    k->concurrency = v[2];
    k->objective = v[3];
    figures_in(v + 4, &k->figures);
    return true;
}

/* A mode's lines into r. */
static int read_mode(reader *rd, int m, pm_search_result *r)
{
    int mm, found, binds;
    size_t n;
    if (!next_line(rd) || sscanf(rd->line, "mode %d %d %d %zu", &mm, &found, &binds, &n) != 4 ||
        mm != m || found < 0 || found > 1 || binds < 0 || binds >= PM_BOUND_COUNT ||
        n > (size_t)1 << 24)
        return bad(rd, "expected 'mode M FOUND BINDS FRONT' for the next mode");
    r->found[m] = found;
    r->binds[m] = (pm_search_bound)binds;
    if (found && (!next_line(rd) || !get_candidate(rd->line, "best", &r->best[m])))
        return bad(rd, "expected a 'best' candidate line");
    r->front[m] = calloc(n + 1, sizeof *r->front[m]);
    if (!r->front[m])
        return out_of_memory();
    for (r->n_front[m] = 0; r->n_front[m] < n; r->n_front[m]++)
        if (!next_line(rd) || !get_candidate(rd->line, "front", &r->front[m][r->n_front[m]]))
            return bad(rd, "expected a 'front' candidate line");
    return 0;
}

/* The body of a shard after its first line into r (its fronts malloc'ed: free them). */
static int read_body(reader *rd, size_t k, size_t n, pm_search_result *r)
{
    if (!next_line(rd) || sscanf(rd->line, "space %zu %zu %zu %zu %zu", &r->candidates,
                                 &r->evaluated, &r->pruned, &r->invalid_plans,
                                 &r->outside) != 5)
        return bad(rd, "expected 'space CANDIDATES EVALUATED PRUNED INVALID NOT_SERVED'");
    if (r->invalid_plans > 0) {
        if (!next_line(rd) || strncmp(rd->line, "invalid ", 8) != 0)
            return bad(rd, "expected the 'invalid' line");
        snprintf(r->first_invalid, sizeof r->first_invalid, "%s", rd->line + 8);
    }
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        const int rc = read_mode(rd, m, r);
        if (rc)
            return rc;
    }
    size_t kk, nn;
    int used = 0;
    if (!next_line(rd) ||
        sscanf(rd->line, "# search shard %zu/%zu end%n", &kk, &nn, &used) != 2 || kk != k ||
        nn != n || rd->line[used] != '\0')
        return bad(rd, "expected the '# search shard K/N end' line (is the shard whole?)");
    if (next_line(rd))
        return bad(rd, "a line after the end line");
    return 0;
}

/* Reads shard file path: its K/N and result (the caller frees r's fronts). */
static int read_shard(const char *path, uint64_t inputs, size_t *k, size_t *n,
                      pm_search_result *r)
{
    reader rd = {.path = path};
    memset(r, 0, sizeof *r);
    rd.f = fopen(path, "r");
    if (!rd.f) {
        fprintf(stderr, "%s: search merge: %s: %s\n", prog, path, strerror(errno));
        return EXIT_CONFIG;
    }
    uint64_t h;
    size_t a = 0, b = 0;
    int rc = 0, format = 0, old = 0;
    const bool first = next_line(&rd);
    if (first && sscanf(rd.line, "# preserve-model search shard %zu/%zu: groups%n", k, n, &old) ==
                     2 &&
        old > 0)
        rc = bad(&rd, "a shard file of format 1, written before the search had pipeline stages "
                      "(its candidates carry no pp): write the shards again with this version");
    else if (!first ||
             sscanf(rd.line,
                    "# preserve-model search shard %zu/%zu (format %d): groups %zu to %zu of "
                    "%zu; inputs fnv1a64 %16" SCNx64,
                    k, n, &format, &a, &b, &r->groups, &h) != 7 ||
             *k < 1 || *k > *n || a < 1 || b < a - 1 || b > r->groups)
        rc = bad(&rd, "not a shard of search (its first line is not '# preserve-model search "
                      "shard K/N (format 4): ...')");
    else if (format == 2)
        rc = bad(&rd, "a shard file of format 2, written before the search had disaggregated "
                      "candidates (its candidates carry no pools): write the shards again with "
                      "this version");
    else if (format != SHARD_FORMAT)
        rc = bad(&rd, "a shard file of another format than this version's 4 (format 4 counts "
                      "the points not served): write the shards again with this version");
    else if (h != inputs)
        rc = bad(&rd, "a shard of another search (its inputs' digest differs: give merge the "
                      "shards' own options)");
    r->first_group = a - 1;
    r->last_group = b;
    if (rc == 0)
        rc = read_body(&rd, *k, *n, r);
    free(rd.line);
    fclose(rd.f);
    return rc;
}

int search_shard_merge(int n_files, char **paths, uint64_t inputs, pm_search_result *out)
{
    memset(out, 0, sizeof *out);
    pm_search_result *parts = calloc((size_t)n_files, sizeof *parts);
    size_t *ks = calloc((size_t)n_files, sizeof *ks), count = 0;
    int rc = parts && ks ? 0 : out_of_memory();
    for (int i = 0; i < n_files && rc == 0; i++) {
        size_t k, n;
        if ((rc = read_shard(paths[i], inputs, &k, &n, &parts[i])) != 0)
            break;
        if (i > 0 && n != count)
            rc = usage_error("search merge: %s is shard %zu/%zu, the others of %zu", paths[i], k,
                             n, count);
        count = n;
        ks[i] = k;
    }
    if (rc == 0 && (size_t)n_files != count)
        rc = usage_error("search merge: %d files for %zu shards (each once)", n_files, count);
    /* In shard order: shard k is the file that says so. */
    for (size_t k = 1; rc == 0 && k <= count; k++) {
        int at = -1;
        for (int i = 0; i < n_files; i++)
            if (ks[i] == k)
                at = at < 0 ? i : -2;
        if (at < 0)
            rc = usage_error("search merge: shard %zu/%zu is %s", k, count,
                             at == -1 ? "missing" : "given twice");
        pm_error err;
        if (rc == 0 && pm_search_merge(out, &parts[at], &err) != PM_OK)
            rc = config_error(&err);
    }
    for (int i = 0; parts && i < n_files; i++)
        for (int m = 0; m < PM_MODE_COUNT; m++)
            free(parts[i].front[m]); /* read_mode's */
    free(parts);
    free(ks);
    if (rc != 0)
        pm_search_result_free(out);
    return rc;
}
