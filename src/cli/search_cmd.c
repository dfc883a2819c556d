/*
 * search_cmd.c - `search`: the best deployment per mode under latency limits (pm_search_run): the
 * space from --tp-list, --pp-list, --ep-list, --budget, --chunks, --concurrency and up to two
 * hardware --sweep axes, the limits --ttft-limit, --tpot-limit and --min-user-rate, the
 * --objective, and with --disagg the splits of the budget into a prefill and a decode pool (a
 * `layout` column); each mode's best with the limit that binds it as a table or JSON, the Pareto
 * fronts as CSV, and with --plot FILE the fronts drawn by plots/search.gp. With --shard K/N it writes the
 * shard file of its slice of the groups; given shard files (`search [options] FILE...`) it merges
 * them into the unsharded answer (search_shard.c) and prints that.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "fmt.h"
#include "output.h"
#include "plot.h"
#include "search_shard.h"

/* A list option of the space: counts in [1, hi], at most PM_SEARCH_MAX_VALUES. */
static int counts(const char *opt, const char *list, double hi, double *v)
{
    return parse_counts(opt, list, 1, hi, PM_SEARCH_MAX_VALUES, v);
}

/* --tp-list, --pp-list, --ep-list, --chunks and --concurrency into the spec (their defaults
 * without them: the library's for tp, pp and ep). */
static int space_lists(const cli *c, pm_search_spec *sp)
{
    double v[PM_SEARCH_MAX_VALUES];
    if (c->tp_list && (sp->n_tp = counts("--tp-list", c->tp_list, PM_MAX_DEVICES, v)) < 0)
        return EXIT_USAGE;
    for (int i = 0; i < sp->n_tp; i++)
        sp->tp[i] = (int)v[i];
    if (c->pp_list && (sp->n_pp = counts("--pp-list", c->pp_list, PM_MAX_STAGES, v)) < 0)
        return EXIT_USAGE;
    for (int i = 0; i < sp->n_pp; i++)
        sp->pp[i] = (int)v[i];
    if (c->ep_list && (sp->n_ep = counts("--ep-list", c->ep_list, PM_MAX_DEVICES, v)) < 0)
        return EXIT_USAGE;
    for (int i = 0; i < sp->n_ep; i++)
        sp->ep[i] = (int)v[i];
    static const double chunks[] = {512, 1024, 2048, 4096, 8192};
    sp->n_chunk = 5;
    if (c->chunks && (sp->n_chunk = counts("--chunks", c->chunks, (double)PM_MAX_SEQ_LEN, v)) < 0)
        return EXIT_USAGE;
    for (int i = 0; i < sp->n_chunk; i++)
        sp->chunk[i] = (int64_t)(c->chunks ? v[i] : chunks[i]);
    sp->n_concurrency = 0;
    if (!c->concurrency)
        for (double x = 1; x <= 1024; x *= 2)
            sp->concurrency[sp->n_concurrency++] = x;
    else if ((sp->n_concurrency = counts("--concurrency", c->concurrency, 1e9,
                                         sp->concurrency)) < 0)
        return EXIT_USAGE;
    return 0;
}

/* The hardware axes of --sweep (at most two, continuous). */
static int space_hw(const cli *c, const pm_scenario *s, pm_search_spec *sp)
{
    if (c->n_sweeps > PM_SEARCH_MAX_HW)
        return usage_error("--sweep: search crosses at most %d hardware axes (got %d)",
                           PM_SEARCH_MAX_HW, c->n_sweeps);
    for (int a = 0; a < c->n_sweeps; a++) {
        pm_error err;
        if (pm_axis_parse(c->sweeps[a], PM_AXIS_MAX_POINTS, &sp->hw[a], &err) != PM_OK)
            return usage_pm_error(NULL, &err);
        sp->n_hw = a + 1;
        if (pm_axis_is_count(sp->hw[a].kind))
            return usage_error("--sweep %s: the deployment is searched by --tp-list, "
                               "--pp-list, --ep-list and --budget; a hardware axis is l2, "
                               "l2_bw, compute, hbm_bw or link_bw",
                               c->sweeps[a]);
        if (pm_axis_fit_scenario(s, &sp->hw[a], &err) != PM_OK)
            return config_error(&err);
    }
    return 0;
}

/* "\rsearch: N of M groups" on a terminal's stderr, every twentieth. */
static void progress(size_t done, size_t total, void *user)
{
    (void)user;
    if (total >= 40 && (done % (total / 20) == 0 || done == total))
        fprintf(stderr, "\r%s: search: %zu of %zu groups%s", prog, done, total,
                done == total ? "\n" : "");
}

/* The spec of the command line over scenario s; 0 or the exit status said on stderr. */
int search_make_spec(const cli *c, const pm_scenario *s, pm_search_spec *sp)
{
    if (served_workload(c, &s->workload, 1, &sp->workload) != 0)
        return EXIT_USAGE;
    served_workload_warn(s, &sp->workload);
    sp->device_budget = c->budget;
    sp->ttft_limit_s = c->ttft_limit_s;
    sp->tpot_limit_s = c->tpot_limit_s;
    sp->min_tokens_per_s_per_user = c->min_user_rate;
    sp->objective = c->search_objective;
    sp->exhaustive = c->exhaustive;
    sp->disagg = c->disagg; /* over the cluster's inter-node link, layer-streamed */
    sp->disagg_link.layer_streamed = true;
    sp->disagg_max_load_frac = CLI_DISAGG_MAX_LOAD_FRAC;
    sp->threads = c->threads;
    sp->progress = isatty(STDERR_FILENO) ? progress : NULL;
    int rc = space_lists(c, sp);
    if (rc == 0)
        rc = space_hw(c, s, sp);
    return rc;
}

/* The objective's column, with its unit. */
const char *search_objective_column(pm_search_objective o)
{
    static const char *const cols[PM_SEARCH_OBJECTIVE_COUNT] = {
        "tokens_per_s_per_device", "tokens_per_s_per_mm2", "tokens_per_s_per_usd",
        "tokens_per_J"};
    return cols[o];
}

const char *budget_words(int budget, char *buf, size_t n)
{
    if (budget > 0)
        snprintf(buf, n, "%d devices", budget);
    else
        snprintf(buf, n, "no device budget (a candidate is one tensor-parallel group)");
    return buf;
}

const char *outside_words(const pm_search_spec *sp)
{
    if (sp->workload.rule != PM_SERVE_DECODE_FIRST)
        return "";
    return sp->workload.arrival == PM_SERVE_WAVE
               ? " (decode-first: a chunk budget at or below the concurrency, or a wave whose "
                 "prompts it does not hold in one step)"
               : " (decode-first: a chunk budget at or below the concurrency leaves no room "
                 "for a prompt)";
}

void search_disagg_note(FILE *f, const pm_search_spec *sp, const pm_scenario *s)
{
    if (!sp->disagg)
        return;
    fprintf(f, "# disaggregated deployments too (layout P<x>xTP<p>+D<y>xTP<d>: x prefill and "
            "y decode instances; concurrency per decode instance; its figures the whole "
            "deployment's, dp 1), prefill load at most %g, ",
            sp->disagg_max_load_frac);
    pm_disagg_workload w = {.link = sp->disagg_link};
    if (!(sp->disagg_link.bandwidth_bytes_per_s > 0) && s) { /* the library's default, said */
        w.link.bandwidth_bytes_per_s = w.link.latency_s = NAN;
        pm_disagg_workload_defaults(s, &w);
    }
    if (w.link.bandwidth_bytes_per_s > 0)
        fprintf(f, "KV over %g GB/s and %g us a transfer%s\n",
                w.link.bandwidth_bytes_per_s / 1e9, w.link.latency_s * 1e6,
                sp->disagg_link.bandwidth_bytes_per_s > 0 ? ""
                : s->cluster.inter_node_bandwidth_bytes_per_s > 0
                    ? " (the cluster's inter-node link)"
                    : " (inference-sim's: the cluster has no inter-node link)");
    else
        fprintf(f, "KV over each member's cluster's inter-node link (none: inference-sim's 25 "
                "GB/s and 50 us)\n");
}

static void write_header(FILE *f, const cli *c, const pm_scenario *s, const pm_search_spec *sp,
                         const pm_search_result *r)
{
    fprintf(f, "# preserve-model %s search --config ", pm_version());
    fput_comment_text(f, c->config);
    fputc('\n', f);
    print_sets_model_on(f, c, s);
    char lengths[96];
    lengths_words(&sp->workload, lengths, sizeof lengths);
    char budget[96];
    fprintf(f, "; %s; %s; %s%s\n", budget_words(c->budget, budget, sizeof budget), lengths,
            pm_serve_rule_name(sp->workload.rule),
            sp->workload.arrival == PM_SERVE_WAVE ? ", a wave" : "");
    fprintf(f, "# limits (0: none): TTFT %g s, TPOT %g s, %g tokens/s per user; objective %s "
            "(%s)\n",
            sp->ttft_limit_s, sp->tpot_limit_s, sp->min_tokens_per_s_per_user,
            pm_search_objective_name(sp->objective), search_objective_column(sp->objective));
    search_disagg_note(f, sp, s);
    fprintf(f, "# space: %zu points x %d modes; %zu evaluated, %zu pruned%s, %zu not served%s; "
            "%zu deployments could not run%s%s\n",
            r->candidates, PM_MODE_COUNT, r->evaluated, r->pruned,
            sp->exhaustive ? " (exhaustive)" : "", r->outside, outside_words(sp), r->invalid_plans,
            r->invalid_plans ? ", the first: " : "", r->invalid_plans ? r->first_invalid : "");
    /* Where the answer's chip cannot be built (stderr says it too: a file read later still
     * says it). */
    char note[512];
    for (size_t i = 0; pm_search_warning(s, sp, r, i, note, sizeof note); i++) {
        fputs("# warning: ", f);
        fput_comment_text(f, note);
        fputc('\n', f);
    }
}

/* A candidate's numbers in the CSV's order after mode (see write_csv's header). */
static void csv_row(FILE *f, const pm_search_spec *sp, const pm_search_candidate *k, bool best)
{
    const pm_serve_mode *x = &k->figures;
    fprintf(f, "%s", pm_mode_name(k->mode));
    if (sp->disagg) {
        char layout[96];
        pm_search_layout(k, layout, sizeof layout);
        fprintf(f, ",%s", layout);
    }
    fprintf(f, ",%d,%d,%d,%d,%lld", k->tp, k->pp, k->ep, k->dp, (long long)k->chunk);
    const double v[] = {k->concurrency, x->ttft_s, x->tpot_s, x->tokens_per_s_per_user,
                        x->tokens_per_s_per_device, x->tokens_per_s * k->dp,
                        x->tokens_per_s_per_mm2, x->tokens_per_s_per_usd, x->tokens_per_J,
                        k->objective};
    char num[FMT_G9_MAX];
    for (int a = 0; a < sp->n_hw; a++) {
        fmt_csv(pm_axis_display_value(sp->hw[a].kind, k->hw[a]), num);
        fprintf(f, ",%s", num);
    }
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        fmt_csv(v[i], num);
        fprintf(f, ",%s", num);
    }
    fprintf(f, ",%d\n", best ? 1 : 0);
}

/* The same point of the space in the same mode. */
static bool same(const pm_search_candidate *a, const pm_search_candidate *b)
{
    bool eq = a->mode == b->mode && a->tp == b->tp && a->pp == b->pp && a->ep == b->ep &&
              a->chunk == b->chunk && a->prefill_tp == b->prefill_tp &&
              a->prefill_instances == b->prefill_instances && a->decode_tp == b->decode_tp &&
              a->decode_instances == b->decode_instances &&
              !(a->concurrency < b->concurrency || a->concurrency > b->concurrency);
    for (int i = 0; i < PM_SEARCH_MAX_HW; i++)
        eq = eq && !(a->hw[i] < b->hw[i] || a->hw[i] > b->hw[i]);
    return eq;
}

/* The CSV: every mode's Pareto front, by rising tokens/s per user; best 1 on the mode's best. */
static void write_csv(FILE *f, const cli *c, const pm_scenario *s, const pm_search_spec *sp,
                      const pm_search_result *r)
{
    write_header(f, c, s, sp, r);
    fprintf(f, "mode%s,tp,pp,ep,dp,chunk", sp->disagg ? ",layout" : "");
    for (int a = 0; a < sp->n_hw; a++)
        fprintf(f, ",%s", pm_axis_column(sp->hw[a].kind));
    fprintf(f, ",concurrency,ttft_s,tpot_s,tokens_per_s_per_user,tokens_per_s_per_device,"
               "tokens_per_s_deployment,tokens_per_s_per_mm2,tokens_per_s_per_usd,"
               "tokens_per_J,objective,best\n");
    for (int m = 0; m < PM_MODE_COUNT; m++)
        for (size_t i = 0; i < r->n_front[m]; i++)
            csv_row(f, sp, &r->front[m][i], r->found[m] && same(&r->front[m][i], &r->best[m]));
}

void search_hw_words(const pm_axis *axes, int n_hw, const double *hw, char *t, size_t n)
{
    size_t w = 0;
    t[0] = '\0';
    for (int a = 0; a < n_hw && w < n; a++)
        w += (size_t)snprintf(t + w, n - w, "%s%s %g", a ? ", " : " at ",
                              pm_axis_column(axes[a].kind),
                              pm_axis_display_value(axes[a].kind, hw[a]));
}

static void write_table(const cli *c, const pm_scenario *s, const pm_search_spec *sp,
                        const pm_search_result *r)
{
    write_header(stdout, c, s, sp, r);
    printf("\n%-9s %5s %3s %5s %4s %6s %6s %9s %9s %11s %12s %14s  %s%s\n", "mode", "tp", "pp",
           "dp", "ep", "chunk", "conc", "TTFT_s", "TPOT_ms", "tok/s/user", "tok/s/device",
           "objective", "what stops it serving more", sp->disagg ? "; layout" : "");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        if (!r->found[m]) {
            /* Nothing served: no limit was missed (every point outside what is served, or no
             * deployment ran). */
            if (r->evaluated == 0)
                printf("%-9s no candidate was served: %zu points not served%s, %zu deployments "
                       "could not run\n",
                       pm_mode_name((pm_mode)m), r->outside, outside_words(sp), r->invalid_plans);
            else
                printf("%-9s nothing meets the limits\n", pm_mode_name((pm_mode)m));
            continue;
        }
        const pm_search_candidate *k = &r->best[m];
        const pm_serve_mode *x = &k->figures;
        char hw[160];
        search_hw_words(sp->hw, sp->n_hw, k->hw, hw, sizeof hw);
        char layout[96] = "";
        if (sp->disagg) {
            layout[0] = ';';
            layout[1] = ' ';
            pm_search_layout(k, layout + 2, sizeof layout - 2);
        }
        printf("%-9s %5d %3d %5d %4d %6lld %6g %9.3f %9.2f %11.2f %12.1f %14.6g  %s%s%s\n",
               pm_mode_name((pm_mode)m), k->tp, k->pp, k->dp, k->ep, (long long)k->chunk,
               k->concurrency, x->ttft_s, 1e3 * x->tpot_s, x->tokens_per_s_per_user,
               x->tokens_per_s_per_device, k->objective, pm_search_bound_name(r->binds[m]), hw,
               layout);
    }
    printf("\n(conc: sequences in flight a replica, dp x conc in all: `serve --dp` takes the "
           "total; the objective is %s; the Pareto fronts: --format csv)\n",
           search_objective_column(sp->objective));
}

void search_json_layout(const pm_search_candidate *k)
{
    char layout[96];
    pm_search_layout(k, layout, sizeof layout);
    printf("\"layout\": \"%s\", \"prefill_tp\": %d, \"prefill_instances\": %d, "
           "\"decode_tp\": %d, \"decode_instances\": %d, ",
           layout, k->prefill_tp, k->prefill_instances, k->decode_tp, k->decode_instances);
}

static void json_candidate(const pm_search_spec *sp, const pm_search_candidate *k)
{
    const pm_serve_mode *x = &k->figures;
    printf("{");
    if (sp->disagg)
        search_json_layout(k);
    printf("\"tp\": %d, \"pp\": %d, \"ep\": %d, \"dp\": %d, \"chunk\": %lld, "
           "\"concurrency\": ",
           k->tp, k->pp, k->ep, k->dp, (long long)k->chunk);
    fput_json_number(stdout, k->concurrency);
    for (int a = 0; a < sp->n_hw; a++) {
        printf(", \"%s\": ", pm_axis_column(sp->hw[a].kind));
        fput_json_number(stdout, pm_axis_display_value(sp->hw[a].kind, k->hw[a]));
    }
    const struct {
        const char *key;
        double v;
    } kv[] = {{"ttft_s", x->ttft_s},
              {"tpot_s", x->tpot_s},
              {"tokens_per_s_per_user", x->tokens_per_s_per_user},
              {"tokens_per_s_per_device", x->tokens_per_s_per_device},
              {"tokens_per_s_deployment", x->tokens_per_s * k->dp},
              {"tokens_per_s_per_mm2", x->tokens_per_s_per_mm2},
              {"tokens_per_s_per_usd", x->tokens_per_s_per_usd},
              {"tokens_per_J", x->tokens_per_J},
              {"objective", k->objective}};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
        printf(", \"%s\": ", kv[i].key);
        fput_json_number(stdout, kv[i].v);
    }
    printf("}");
}

static void write_json(const pm_scenario *s, const pm_search_spec *sp,
                       const pm_search_result *r)
{
    printf("{\n  \"objective\": \"%s\",\n  \"objective_column\": \"%s\",\n  \"limits\": "
           "{\"ttft_s\": ",
           pm_search_objective_name(sp->objective), search_objective_column(sp->objective));
    fput_json_number(stdout, sp->ttft_limit_s);
    printf(", \"tpot_s\": ");
    fput_json_number(stdout, sp->tpot_limit_s);
    printf(", \"tokens_per_s_per_user\": ");
    fput_json_number(stdout, sp->min_tokens_per_s_per_user);
    printf("},\n  \"space\": {\"points\": %zu, \"evaluated\": %zu, \"pruned\": %zu, "
           "\"not_served\": %zu, \"exhaustive\": %s, \"invalid_deployments\": %zu, "
           "\"first_invalid\": ",
           r->candidates, r->evaluated, r->pruned, r->outside, sp->exhaustive ? "true" : "false",
           r->invalid_plans);
    fput_json_string(stdout, r->invalid_plans ? r->first_invalid : "");
    printf("},\n  \"warnings\": [");
    char note[512];
    for (size_t i = 0; pm_search_warning(s, sp, r, i, note, sizeof note); i++) {
        printf("%s", i ? ", " : "");
        fput_json_string(stdout, note);
    }
    printf("],\n  \"modes\": {");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        printf("%s\n    \"%s\": {\"found\": %s", m ? "," : "", pm_mode_name((pm_mode)m),
               r->found[m] ? "true" : "false");
        if (r->found[m]) {
            printf(", \"binds\": \"%s\", \"best\": ", pm_search_bound_name(r->binds[m]));
            json_candidate(sp, &r->best[m]);
        }
        printf(", \"front\": [");
        for (size_t i = 0; i < r->n_front[m]; i++) {
            printf("%s\n      ", i ? "," : "");
            json_candidate(sp, &r->front[m][i]);
        }
        printf("]}");
    }
    printf("\n  }\n}\n");
}

void search_limits_words(const pm_search_spec *sp, char *t, size_t n)
{
    size_t w = 0;
    t[0] = '\0';
    if (sp->ttft_limit_s > 0)
        w += (size_t)snprintf(t + w, n - w, "; TTFT <= %g s", sp->ttft_limit_s);
    if (sp->tpot_limit_s > 0 && w < n)
        w += (size_t)snprintf(t + w, n - w, "; TPOT <= %g ms", 1e3 * sp->tpot_limit_s);
    if (sp->min_tokens_per_s_per_user > 0 && w < n)
        snprintf(t + w, n - w, "; >= %g tokens/s per user", sp->min_tokens_per_s_per_user);
    if (!t[0])
        snprintf(t, n, "; no latency limit");
}

/* The CSV beside the figure, drawn by plots/search.gp. */
static int draw(const cli *c, const pm_scenario *s, const pm_search_spec *sp,
                const pm_search_result *r)
{
    if (!plot_terminal(c->plot, PLOT_PAGE))
        return plot_usage_error(c->plot);
    out_file csv;
    if (!plot_csv_open(c->plot, &csv))
        return EXIT_CONFIG;
    write_csv(csv.f, c, s, sp, r);
    char *path = str_printf("%s", csv.path);
    char facts[160];
    scenario_facts(s, facts, sizeof facts);
    char limits[96];
    search_limits_words(sp, limits, sizeof limits);
    char lengths[96];
    lengths_words(&sp->workload, lengths, sizeof lengths);
    char *title = str_printf("%s on %s, %d devices: %s%s", s->model.name, s->accel.name,
                             c->budget ? c->budget : s->cluster.devices, lengths, limits);
    char hw[64] = ""; /* the CSV's hardware columns, which the best's label names */
    for (int a = 0; a < sp->n_hw; a++)
        snprintf(hw + strlen(hw), sizeof hw - strlen(hw), "%s%s", a ? " " : "",
                 pm_axis_column(sp->hw[a].kind));
    /* Without PRESERVE the best is another candidate (deployment, hardware point or
     * concurrency): both labelled, each named by its mode. */
    const pm_search_candidate *bs = &r->best[PM_MODE_SERIAL], *bp = &r->best[PM_MODE_PRESERVE];
    const bool apart = r->found[PM_MODE_SERIAL] && r->found[PM_MODE_PRESERVE] &&
                       (bs->group != bp->group || bs->concurrency < bp->concurrency ||
                        bs->concurrency > bp->concurrency);
    int rc = !path || !title ? out_of_memory() : 0;
    if (rc == 0)
        rc = out_file_commit(&csv);
    else
        out_file_abort(&csv);
    const plot_var vars[] = {{"ttl", title, false},
                             {"facts", facts, false},
                             {"ylab", search_objective_column(sp->objective), false},
                             {"disagg", sp->disagg ? "1" : "0", true},
                             {"hw", hw, false},
                             {"apart", apart ? "1" : "0", true}};
    if (rc == 0)
        rc = plot_draw("search.gp", path, c->plot, PLOT_PAGE, vars, sizeof vars / sizeof vars[0]);
    free(path);
    free(title);
    return rc;
}

/* --shard K/N into the spec (0 0 without it); 0 or EXIT_USAGE. */
static int shard_of(const cli *c, pm_search_spec *sp)
{
    if (!c->shard)
        return 0;
    size_t k, n;
    if (!parse_shard(c->shard, &k, &n))
        return usage_error("--shard: expected K/N in decimal with 1 <= K <= N <= %d (got '%s')",
                           SHARD_MAX, c->shard);
    if (c->plot || c->format_given)
        return usage_error("--shard: a shard writes its shard file; give --format or --plot to "
                           "the merge ('%s search [the same options] SHARD...')",
                           prog);
    sp->shard_index = k - 1;
    sp->shard_count = n;
    return 0;
}

/* The search (or with files the merge of its shards) into r. */
static int answer(const cli *c, const pm_scenario *s, pm_search_spec *sp, int n_files,
                  char **files, pm_search_result *r)
{
    if (n_files > 0) {
        if (c->shard)
            return usage_error("--shard: a merge takes the shard files, not a slice");
        return search_shard_merge(n_files, files, search_inputs_digest(s, sp), r);
    }
    int rc = shard_of(c, sp);
    pm_error err;
    if (rc == 0 && pm_search_run(s, sp, r, &err) != PM_OK)
        rc = err.status == PM_ERR_INVALID_ARG ? usage_pm_error(NULL, &err) : config_error(&err);
    if (rc == 0 && c->shard)
        search_shard_write(stdout, sp->shard_index + 1, sp->shard_count,
                           search_inputs_digest(s, sp), r);
    return rc;
}

int search_refuse_devices(const cli *c)
{
    /* Each candidate sets its own tensor-parallel degree: a device count given for the
     * scenario would bound nothing (the search ran TP 8 under --devices 4); and its own
     * sequences (--batch 64 gave the same answer, its header saying the batch). */
    for (size_t i = 0; i < c->n_sets; i++)
        if (strncmp(c->sets[i], "cluster.devices=", 16) == 0)
            return usage_error("--set %s (--devices): search gives each candidate its "
                               "tensor-parallel degree (--tp-list; default 1, 2, 4... up to a "
                               "node) and the deployment its devices (--budget)",
                               c->sets[i]);
        else if (strncmp(c->sets[i], "workload.batch=", 15) == 0) /* it changed nothing */
            return usage_error("--set %s (--batch): search serves each candidate's "
                               "--concurrency sequences; the static batch is not used",
                               c->sets[i]);
    return 0;
}

int cmd_search(const cli *c, int n_files, char **files)
{
    if (c->plot && c->format == FMT_JSON)
        return usage_error("--plot: the figure is drawn from CSV (no --format json)");
    if (search_refuse_devices(c))
        return EXIT_USAGE;
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    pm_search_spec *sp = calloc(1, sizeof *sp);
    pm_search_result r = {0};
    rc = sp ? search_make_spec(c, &s, sp) : out_of_memory();
    if (rc == 0)
        rc = answer(c, &s, sp, n_files, files, &r);
    char note[512];
    for (size_t i = 0; rc == 0 && !c->shard && pm_search_warning(&s, sp, &r, i, note, sizeof note);
         i++)
        fprintf(stderr, "warning: %s\n", note);
    if (rc == 0 && c->shard)
        ; /* written */
    else if (rc == 0 && c->plot)
        rc = draw(c, &s, sp, &r);
    else if (rc == 0 && c->format == FMT_JSON)
        write_json(&s, sp, &r);
    else if (rc == 0 && c->format == FMT_CSV)
        write_csv(stdout, c, &s, sp, &r);
    else if (rc == 0)
        write_table(c, &s, sp, &r);
    if (rc == 0 && ferror(stdout))
        stdout_failed(errno);
    pm_search_result_free(&r);
    for (int a = 0; sp && a < sp->n_hw; a++)
        pm_axis_release(&sp->hw[a]);
    free(sp);
    pm_scenario_release(&s);
    return rc;
}
