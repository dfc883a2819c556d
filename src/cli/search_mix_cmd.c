/*
 * search_mix_cmd.c - `search --mix`: the chip that serves a weighted mix of models and
 * workloads best (pm_search_mix_run). Each member, SCENARIO[@LENGTHS][=SHARE], is loaded with
 * the command line's overrides and searched under the command line's space and limits
 * (search_cmd.c's spec, its own lengths; --pp-list puts stages in each member's space, --disagg
 * its disaggregated deployments); the --sweep axes are the mix's. The table gives each mode's
 * best hardware point, its mix objective and each member's best deployment (tp, pp, dp, ep,
 * chunk; with --disagg its layout) there; the CSV one row per point and mode (with --disagg an
 * m<i>_layout column per member); the JSON both (with --disagg each member's layout and pools,
 * as search's candidates); --plot draws the mix's objective and each member's (preserve) along
 * the first axis with plots/search_mix.gp.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "fmt.h"
#include "output.h"
#include "plot.h"

/* A member as the command line names it. */
typedef struct member_arg {
    char scenario[256];
    char lengths[256]; /* "" : the command line's --lengths or the scenario's own */
    double share;
} member_arg;

/* One member "SCENARIO[@LENGTHS][=SHARE]" into a; 0 or EXIT_USAGE. */
static int parse_member(const char *item, member_arg *a)
{
    char buf[600];
    if (strlen(item) >= sizeof buf || !item[0])
        return usage_error("--mix: '%s' is not SCENARIO[@LENGTHS][=SHARE]", item);
    strcpy(buf, item);
    a->share = 1.0;
    char *eq = strrchr(buf, '=');
    if (eq) {
        *eq = '\0';
        errno = 0;
        char *end;
        a->share = strtod(eq + 1, &end);
        if (end == eq + 1 || *end || errno || !(a->share > 0.0 && isfinite(a->share)))
            return usage_error("--mix: member '%s': a share must be a number > 0 (got '%s')",
                               item, eq + 1);
    }
    char *at = strchr(buf, '@');
    a->lengths[0] = '\0';
    if (at) {
        *at = '\0';
        /* IN:OUT is one class: the lengths option's IN:OUT:SHARE with share 1 */
        const bool one_class = strchr(at + 1, ':') != NULL;
        if (!at[1] || strchr(at + 1, ':') != strrchr(at + 1, ':') ||
            snprintf(a->lengths, sizeof a->lengths, "%s%s", at + 1, one_class ? ":1" : "") >=
                (int)sizeof a->lengths)
            return usage_error("--mix: member '%s': LENGTHS is a lengths file's name or path, "
                               "or IN:OUT",
                               item);
    }
    if (!buf[0] || snprintf(a->scenario, sizeof a->scenario, "%s", buf) >=
                       (int)sizeof a->scenario)
        return usage_error("--mix: member '%s' names no scenario", item);
    return 0;
}

/* --mix's members; their count, or -1 said on stderr. */
static int parse_members(const char *list, member_arg *a)
{
    int n = 0;
    const char *p = list;
    while (true) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (n == PM_SEARCH_MAX_MEMBERS) {
            usage_error("--mix: at most %d members", PM_SEARCH_MAX_MEMBERS);
            return -1;
        }
        char item[600];
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
        if (parse_member(item, &a[n]) != 0)
            return -1;
        n++;
        if (!comma)
            return n;
        p = comma + 1;
    }
}

typedef struct mix_run {
    member_arg arg[PM_SEARCH_MAX_MEMBERS];
    pm_scenario s[PM_SEARCH_MAX_MEMBERS];
    int loaded;
    pm_search_mix mix;
    pm_search_mix_result r;
} mix_run;

/* Each member loaded and its spec made; the first member's axes become the mix's. */
static int make_mix(const cli *c, mix_run *x)
{
    int n = parse_members(c->mix, x->arg);
    if (n < 0)
        return EXIT_USAGE;
    for (int i = 0; i < n; i++) {
        cli m = *c;
        m.config = x->arg[i].scenario;
        if (x->arg[i].lengths[0])
            m.lengths = x->arg[i].lengths;
        int rc = load(&m, &x->s[i]);
        if (rc)
            return rc;
        x->loaded = i + 1;
        pm_search_member *mb = &x->mix.member[i];
        mb->scenario = &x->s[i];
        mb->share = x->arg[i].share;
        rc = search_make_spec(&m, &x->s[i], &mb->spec);
        for (int a = 0; a < mb->spec.n_hw; a++) {
            if (i == 0 && rc == 0)
                x->mix.hw[a] = mb->spec.hw[a]; /* the mix owns them now */
            else
                pm_axis_release(&mb->spec.hw[a]);
        }
        if (i == 0 && rc == 0)
            x->mix.n_hw = mb->spec.n_hw;
        mb->spec.n_hw = 0;
        if (rc)
            return rc;
        mb->spec.progress = NULL;
    }
    x->mix.n_members = n;
    x->mix.objective = c->search_objective;
    return 0;
}

static const pm_search_candidate *member_best(const pm_search_mix_result *r, size_t p, int i,
                                              int m)
{
    return &r->members[(p * (size_t)r->n_members + (size_t)i) * PM_MODE_COUNT + (size_t)m];
}

static pm_search_bound member_binds(const pm_search_mix_result *r, size_t p, int i, int m)
{
    return r->binds[(p * (size_t)r->n_members + (size_t)i) * PM_MODE_COUNT + (size_t)m];
}

static void write_header(FILE *f, const cli *c, const mix_run *x)
{
    const pm_search_mix *mix = &x->mix;
    const pm_search_spec *sp = &mix->member[0].spec;
    fprintf(f, "# preserve-model %s search --mix ", pm_version());
    fput_comment_text(f, c->mix);
    fputc('\n', f);
    print_sets(f, c);
    fprintf(f, "# a mix on ");
    fput_comment_text(f, x->s[0].accel.name);
    fprintf(f, " of %d members (shares of the output tokens, each member on its own best "
               "deployment):\n",
            mix->n_members);
    for (int i = 0; i < mix->n_members; i++) {
        char lengths[96];
        lengths_words(&mix->member[i].spec.workload, lengths, sizeof lengths);
        fprintf(f, "#   %d. ", i + 1);
        fput_comment_text(f, x->arg[i].scenario);
        fprintf(f, ": ");
        fput_comment_text(f, x->s[i].model.name);
        fprintf(f, ", %s, share %g\n", lengths, mix->member[i].share);
    }
    char budget[96];
    fprintf(f, "# limits (0: none): TTFT %g s, TPOT %g s, %g tokens/s per user; %s; "
               "objective %s (%s)\n",
            sp->ttft_limit_s, sp->tpot_limit_s, sp->min_tokens_per_s_per_user,
            budget_words(c->budget, budget, sizeof budget),
            pm_search_objective_name(mix->objective), search_objective_column(mix->objective));
    search_disagg_note(f, sp, NULL);
    fprintf(f, "# space: %zu hardware points x %d members; %zu candidates x %d modes, %zu "
               "evaluated, %zu pruned, %zu not served%s; %zu deployments could not run\n",
            x->r.n_points, mix->n_members, x->r.candidates, PM_MODE_COUNT, x->r.evaluated,
            x->r.pruned, x->r.outside, outside_words(sp), x->r.invalid_plans);
    char note[512]; /* where the chip cannot be built (stderr says it too) */
    for (size_t i = 0; pm_search_mix_warning(mix, &x->r, i, note, sizeof note); i++) {
        fputs("# warning: ", f);
        fput_comment_text(f, note);
        fputc('\n', f);
    }
}

static void write_table(const cli *c, const mix_run *x)
{
    const pm_search_mix_result *r = &x->r;
    write_header(stdout, c, x);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        if (!r->found[m]) {
            printf("\n%s: no hardware point serves every member within its limits\n",
                   pm_mode_name((pm_mode)m));
            continue;
        }
        const pm_search_mix_point *pt = &r->points[r->best[m]];
        char hw[160];
        search_hw_words(x->mix.hw, x->mix.n_hw, pt->hw, hw, sizeof hw);
        printf("\n%s: the mix's %s %.6g%s\n", pm_mode_name((pm_mode)m),
               search_objective_column(x->mix.objective), pt->objective[m], hw);
        const bool disagg = x->mix.member[0].spec.disagg;
        printf("  %-22s %4s %3s %4s %4s %6s %6s %9s %9s %12s %14s  %s%s\n", "member", "tp", "pp",
               "dp", "ep", "chunk", "conc", "TTFT_s", "TPOT_ms", "tok/s/device", "objective",
               "what stops it serving more", disagg ? "; layout" : "");
        for (int i = 0; i < x->mix.n_members; i++) {
            const pm_search_candidate *k = member_best(r, r->best[m], i, m);
            char name[23];
            snprintf(name, sizeof name, "%d. %s", i + 1, x->arg[i].scenario);
            char layout[96] = "";
            if (disagg) {
                layout[0] = ';';
                layout[1] = ' ';
                pm_search_layout(k, layout + 2, sizeof layout - 2);
            }
            printf("  %-22s %4d %3d %4d %4d %6lld %6g %9.3f %9.2f %12.1f %14.6g  %s%s\n", name,
                   k->tp, k->pp, k->dp, k->ep, (long long)k->chunk, k->concurrency,
                   k->figures.ttft_s,
                   1e3 * k->figures.tpot_s, k->figures.tokens_per_s_per_device, k->objective,
                   pm_search_bound_name(member_binds(r, r->best[m], i, m)), layout);
        }
    }
    printf("\n(the mix's objective: 1 / sum of share / member's objective; every point: "
           "--format csv)\n");
}

static void write_csv(FILE *f, const cli *c, const mix_run *x)
{
    const pm_search_mix *mix = &x->mix;
    const pm_search_mix_result *r = &x->r;
    write_header(f, c, x);
    fprintf(f, "mode");
    for (int a = 0; a < mix->n_hw; a++)
        fprintf(f, ",%s", pm_axis_column(mix->hw[a].kind));
    fprintf(f, ",mix_objective,found,missing_member,best");
    const bool disagg = mix->member[0].spec.disagg;
    for (int i = 1; i <= mix->n_members; i++) {
        if (disagg)
            fprintf(f, ",m%d_layout", i);
        fprintf(f, ",m%d_tp,m%d_pp,m%d_ep,m%d_dp,m%d_chunk,m%d_concurrency,m%d_ttft_s,"
                   "m%d_tpot_s,m%d_tokens_per_s_per_device,m%d_objective,m%d_binds",
                i, i, i, i, i, i, i, i, i, i, i);
    }
    fputc('\n', f);
    char num[FMT_G9_MAX];
    for (int m = 0; m < PM_MODE_COUNT; m++)
        for (size_t p = 0; p < r->n_points; p++) {
            const pm_search_mix_point *pt = &r->points[p];
            fprintf(f, "%s", pm_mode_name((pm_mode)m));
            for (int a = 0; a < mix->n_hw; a++) {
                fmt_csv(pm_axis_display_value(mix->hw[a].kind, pt->hw[a]), num);
                fprintf(f, ",%s", num);
            }
            fmt_csv(pt->objective[m], num);
            fprintf(f, ",%s,%d,%d,%d", num, pt->found[m] ? 1 : 0, pt->missing[m] + 1,
                    r->found[m] && r->best[m] == p ? 1 : 0);
            for (int i = 0; i < mix->n_members; i++) {
                const pm_search_candidate *k = member_best(r, p, i, m);
                const bool ok = k->objective > 0.0; /* the member found one here */
                const double v[] = {k->concurrency, k->figures.ttft_s, k->figures.tpot_s,
                                    k->figures.tokens_per_s_per_device, k->objective};
                char layout[96] = "none";
                if (disagg && ok)
                    pm_search_layout(k, layout, sizeof layout);
                if (disagg)
                    fprintf(f, ",%s", layout);
                fprintf(f, ",%d,%d,%d,%d,%lld", k->tp, k->pp, k->ep, k->dp,
                        (long long)k->chunk);
                for (size_t j = 0; j < sizeof v / sizeof v[0]; j++) {
                    fmt_csv(ok ? v[j] : NAN, num);
                    fprintf(f, ",%s", num);
                }
                fprintf(f, ",%s", pm_search_bound_name(member_binds(r, p, i, m)));
            }
            fputc('\n', f);
        }
}

static void write_json(const mix_run *x)
{
    const pm_search_mix *mix = &x->mix;
    const pm_search_mix_result *r = &x->r;
    printf("{\n  \"objective\": \"%s\",\n  \"objective_column\": \"%s\",\n  \"members\": [",
           pm_search_objective_name(mix->objective), search_objective_column(mix->objective));
    for (int i = 0; i < mix->n_members; i++) {
        printf("%s\n    {\"scenario\": ", i ? "," : "");
        fput_json_string(stdout, x->arg[i].scenario);
        printf(", \"model\": ");
        fput_json_string(stdout, x->s[i].model.name);
        printf(", \"share\": ");
        fput_json_number(stdout, mix->member[i].share);
        printf("}");
    }
    printf("\n  ],\n  \"space\": {\"points\": %zu, \"candidates\": %zu, \"evaluated\": %zu, "
           "\"pruned\": %zu, \"not_served\": %zu, \"invalid_deployments\": %zu},\n"
           "  \"warnings\": [",
           r->n_points, r->candidates, r->evaluated, r->pruned, r->outside, r->invalid_plans);
    char note[512];
    for (size_t i = 0; pm_search_mix_warning(mix, r, i, note, sizeof note); i++) {
        printf("%s", i ? ", " : "");
        fput_json_string(stdout, note);
    }
    printf("],\n  \"modes\": {");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        printf("%s\n    \"%s\": {\"found\": %s, \"points\": [", m ? "," : "",
               pm_mode_name((pm_mode)m), r->found[m] ? "true" : "false");
        for (size_t p = 0; p < r->n_points; p++) {
            const pm_search_mix_point *pt = &r->points[p];
            printf("%s\n      {", p ? "," : "");
            for (int a = 0; a < mix->n_hw; a++) {
                printf("\"%s\": ", pm_axis_column(mix->hw[a].kind));
                fput_json_number(stdout, pm_axis_display_value(mix->hw[a].kind, pt->hw[a]));
                printf(", ");
            }
            printf("\"best\": %s, \"found\": %s, \"mix_objective\": ",
                   r->found[m] && r->best[m] == p ? "true" : "false",
                   pt->found[m] ? "true" : "false");
            fput_json_number(stdout, pt->objective[m]);
            printf(", \"missing_member\": %d, \"members\": [", pt->missing[m] + 1);
            for (int i = 0; pt->found[m] && i < mix->n_members; i++) {
                const pm_search_candidate *k = member_best(r, p, i, m);
                printf("%s{", i ? ", " : "");
                if (mix->member[i].spec.disagg)
                    search_json_layout(k);
                printf("\"tp\": %d, \"pp\": %d, \"ep\": %d, \"dp\": %d, \"chunk\": %lld, "
                       "\"concurrency\": ",
                       k->tp, k->pp, k->ep, k->dp, (long long)k->chunk);
                fput_json_number(stdout, k->concurrency);
                printf(", \"tpot_s\": ");
                fput_json_number(stdout, k->figures.tpot_s);
                printf(", \"ttft_s\": ");
                fput_json_number(stdout, k->figures.ttft_s);
                printf(", \"objective\": ");
                fput_json_number(stdout, k->objective);
                printf(", \"binds\": \"%s\"}", pm_search_bound_name(member_binds(r, p, i, m)));
            }
            printf("]}");
        }
        printf("]}");
    }
    printf("\n  }\n}\n");
}

/* The CSV beside the figure, drawn by plots/search_mix.gp along the first axis. */
static int draw(const cli *c, const mix_run *x)
{
    if (x->mix.n_hw != 1)
        return usage_error("--plot: a mix's figure is drawn along one hardware axis "
                           "(give one --sweep)");
    if (!plot_terminal(c->plot, PLOT_PAGE))
        return plot_usage_error(c->plot);
    out_file csv;
    if (!plot_csv_open(c->plot, &csv))
        return EXIT_CONFIG;
    write_csv(csv.f, c, x);
    char *path = str_printf("%s", csv.path);
    char names[PM_SEARCH_MAX_MEMBERS * 520] = ""; /* scenario@lengths and a space each */
    size_t w = 0;
    for (int i = 0; i < x->mix.n_members && w < sizeof names; i++) {
        /* A member's lengths name it beside its scenario (two members may share one) where
         * they are a word (gnuplot's word() splits the list at spaces). */
        const char *len = x->arg[i].lengths;
        const bool named = len[0] && !strpbrk(len, " \t");
        w += (size_t)snprintf(names + w, sizeof names - w, "%s%s%s%s", i ? " " : "",
                              x->arg[i].scenario, named ? "@" : "", named ? len : "");
    }
    char members[8];
    snprintf(members, sizeof members, "%d", x->mix.n_members);
    const pm_search_spec *sp = &x->mix.member[0].spec;
    char limits[96];
    search_limits_words(sp, limits, sizeof limits);
    char *title = str_printf("a mix of %d workloads on %s, %d devices%s", x->mix.n_members,
                             x->s[0].accel.name, c->budget ? c->budget : x->s[0].cluster.devices,
                             limits);
    int rc = !path || !title ? out_of_memory() : 0;
    if (rc == 0)
        rc = out_file_commit(&csv);
    else
        out_file_abort(&csv);
    const plot_var vars[] = {{"ttl", title, false},
                             {"names", names, false},
                             {"members", members, true},
                             {"xcol", pm_axis_column(x->mix.hw[0].kind), false},
                             {"ylab", search_objective_column(x->mix.objective), false},
                             {"disagg", sp->disagg ? "1" : "0", true}};
    if (rc == 0)
        rc = plot_draw("search_mix.gp", path, c->plot, PLOT_PAGE, vars,
                       sizeof vars / sizeof vars[0]);
    free(path);
    free(title);
    return rc;
}

int cmd_search_mix(const cli *c, int n_files)
{
    if (n_files > 0 || c->shard)
        return usage_error("--mix: a mix is searched whole (no --shard, no shard files)");
    if (c->plot && c->format == FMT_JSON)
        return usage_error("--plot: the figure is drawn from CSV (no --format json)");
    if (search_refuse_devices(c))
        return EXIT_USAGE;
    if (c->given & GIVEN_CONFIG)
        return usage_error("--mix: the members name their scenarios (no --config)");
    mix_run *x = calloc(1, sizeof *x);
    if (!x)
        return out_of_memory();
    int rc = make_mix(c, x);
    pm_error err;
    if (rc == 0 && pm_search_mix_run(&x->mix, &x->r, &err) != PM_OK)
        rc = err.status == PM_ERR_INVALID_ARG ? usage_pm_error(NULL, &err) : config_error(&err);
    char note[512];
    for (size_t i = 0; rc == 0 && pm_search_mix_warning(&x->mix, &x->r, i, note, sizeof note);
         i++)
        fprintf(stderr, "warning: %s\n", note);
    if (rc == 0 && c->plot)
        rc = draw(c, x);
    else if (rc == 0 && c->format == FMT_JSON)
        write_json(x);
    else if (rc == 0 && c->format == FMT_CSV)
        write_csv(stdout, c, x);
    else if (rc == 0)
        write_table(c, x);
    if (rc == 0 && ferror(stdout))
        stdout_failed(errno);
    pm_search_mix_result_free(&x->r);
    for (int a = 0; a < x->mix.n_hw; a++)
        pm_axis_release(&x->mix.hw[a]);
    for (int i = 0; i < x->loaded; i++)
        pm_scenario_release(&x->s[i]);
    free(x);
    return rc;
}
