/*
 * serve_cmd.c - `serve`: a served workload's steady state (pm_serve_compute) over a list of
 * concurrencies, in the three modes: the throughput-interactivity front (tokens/s per device
 * against tokens/s per user) as a table, CSV or JSON, and with --plot FILE the front drawn by
 * plots/serve.gp beside the static estimate's point. The prompt and the output are the
 * scenario's (seq_len x prefill_frac tokens in, its decode steps' tokens out).
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

#define SERVE_MAX_POINTS 256
#define SERVE_MAX_FAMILY 8 /* fronts of one figure: more are not told apart */
#define SERVE_DEFAULT_CHUNK 2048
#define MAX_SERVE_COLS 64

/* The fronts: one per value of the family axis (--sweep AXIS=V1,V2...; one front without it),
 * each over the concurrencies. */
typedef struct served {
    pm_scenario s;
    double conc[SERVE_MAX_POINTS]; /* the concurrencies, or with by_rate the request rates */
    int n;
    bool by_rate;             /* --rate: an open loop at each rate */
    pm_axis fam;              /* kind and values when has_fam */
    bool has_fam;
    int n_fam;                /* fronts (1 without a family) */
    pm_scenario fs[SERVE_MAX_FAMILY];        /* each front's scenario (no provenance) */
    pm_serve_workload w[SERVE_MAX_FAMILY];   /* each front's workload */
    pm_estimate e[SERVE_MAX_FAMILY];         /* the static estimate: its point on each front */
    pm_serve_result r[SERVE_MAX_FAMILY][SERVE_MAX_POINTS];
} served;

/* One item of --rate (parse_list's): a number of requests/s in (0, 1e12]; false said on
 * stderr. */
static bool rate_item(const char *opt, const char *text, void *ctx, double *out)
{
    (void)ctx;
    char *end;
    errno = 0;
    const double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno || !(v > 0 && v <= 1e12)) {
        usage_error("%s: expected request rates in (0, 1e12] requests/s (got '%s')", opt, text);
        return false;
    }
    *out = v;
    return true;
}

/* --concurrency L (or --rate L, rate true) into out (at most SERVE_MAX_POINTS); the count, or
 * -1 said on stderr. */
static int parse_points(const char *list, bool rate, double *out)
{
    if (!list) {
        int n = 0;
        for (double v = 1; v <= 1024; v *= 2)
            out[n++] = v;
        return n;
    }
    return rate ? parse_list("--rate", list, "rates", SERVE_MAX_POINTS, rate_item, NULL, out)
                : parse_counts("--concurrency", list, 1, 1e9, SERVE_MAX_POINTS, out);
}

/* --sweep AXIS=V1,V2... into sv->fam: one axis, at most SERVE_MAX_FAMILY values, not batch
 * (the served sequences are --concurrency); 0 or EXIT_USAGE. */
static int parse_family(const cli *c, served *sv)
{
    sv->n_fam = 1;
    if (c->n_sweeps == 0)
        return 0;
    if (c->n_sweeps > 1)
        return usage_error("--sweep: serve draws a family of fronts along one axis (got %d)",
                           c->n_sweeps);
    pm_error err;
    if (pm_axis_parse(c->sweeps[0], PM_AXIS_MAX_POINTS, &sv->fam, &err) != PM_OK)
        return usage_pm_error(NULL, &err);
    sv->has_fam = true;
    if (sv->fam.kind == PM_AXIS_BATCH)
        return usage_error("--sweep batch: a served workload's sequences are --concurrency");
    sv->n_fam = (int)sv->fam.n_values;
    return 0;
}

/* Loads the scenario and computes every point of every front; 0, or the exit status said on
 * stderr. */
static int compute(const cli *c, served *sv)
{
    if (c->rate && c->concurrency)
        return usage_error("--rate: an open loop at request rates, or --concurrency: a closed "
                           "loop (not both)");
    sv->by_rate = c->rate != NULL;
    if ((sv->n = parse_points(sv->by_rate ? c->rate : c->concurrency, sv->by_rate, sv->conc)) < 0)
        return EXIT_USAGE;
    int rc = parse_family(c, sv);
    /* With a family its warnings are the sweep's over its axis (pm_sweep_warning: a die over
     * the reticle at some of its values...), the scenario's less those the axis replaces. */
    if (rc == 0)
        rc = sv->has_fam ? load_quiet(c, &sv->s) : load(c, &sv->s);
    if (rc != 0)
        return rc;
    pm_error err;
    if (sv->has_fam && pm_axis_fit_scenario(&sv->s, &sv->fam, &err) != PM_OK)
        return config_error(&err);
    char note[512];
    for (size_t i = 0; sv->has_fam && pm_sweep_warning(&sv->s, &sv->fam, 1, i, note, sizeof note);
         i++)
        fprintf(stderr, "warning: %s\n", note);
    if (sv->has_fam && sv->fam.n_values > SERVE_MAX_FAMILY)
        return usage_error("--sweep %s: serve draws at most %d fronts (got %zu values; give "
                           "them, e.g. %s=V1,V2,V3)",
                           c->sweeps[0], SERVE_MAX_FAMILY, sv->fam.n_values,
                           pm_axis_name(sv->fam.kind));
    for (int f = 0; f < sv->n_fam; f++) {
        pm_scenario *t = &sv->fs[f];
        *t = sv->s;
        t->provenance = NULL;
        if (sv->has_fam && pm_scenario_set_axis(t, sv->fam.kind, sv->fam.values[f], &err) != PM_OK)
            return config_error(&err);
        if ((rc = served_workload(c, &t->workload, c->chunk > 0 ? c->chunk : SERVE_DEFAULT_CHUNK,
                                  &sv->w[f])) != 0)
            return rc;
        if (f == 0)
            served_workload_warn(t, &sv->w[f]);
        if (pm_estimate_compute(t, &sv->e[f], &err) != PM_OK)
            return config_error(&err);
        for (int i = 0; i < sv->n; i++) {
            *(sv->by_rate ? &sv->w[f].request_rate_per_s : &sv->w[f].concurrency) = sv->conc[i];
            if (pm_serve_compute(t, &sv->w[f], &sv->r[f][i], &err) != PM_OK) {
                fprintf(stderr, "%s: serve: at %s %g: %s\n", prog,
                        sv->by_rate ? "request rate" : "concurrency", sv->conc[i], err.message);
                return err.status == PM_ERR_INVALID_ARG ? EXIT_USAGE : EXIT_CONFIG;
            }
        }
    }
    return 0;
}

/* Front f's family value in its column's unit (pm_axis_column). */
static double family_value(const served *sv, int f)
{
    return pm_axis_display_value(sv->fam.kind, sv->fam.values[f]);
}

/* The static estimate's point on front f: its batch's tokens/s per device and each sequence's
 * rate. */
static void static_point(const served *sv, int f, int m, double *per_device, double *per_user)
{
    const pm_mode_result *r = &sv->e[f].modes[m];
    *per_device = r->tokens_per_s / pm_cluster_total_devices(&sv->fs[f].cluster);
    *per_user = 1.0 / r->tpot_mean_s;
}

static void write_header(FILE *f, const cli *c, const served *sv)
{
    const pm_serve_workload *w = &sv->w[0];
    fprintf(f, "# preserve-model %s serve --config ", pm_version());
    fput_comment_text(f, c->config);
    fputc('\n', f);
    print_sets_model_on(f, c, &sv->s);
    if (pm_cluster_dp(&sv->s.cluster) > 1)
        fprintf(f, " x %d, %d data-parallel replicas sharing the concurrency",
                sv->s.cluster.devices, pm_cluster_dp(&sv->s.cluster));
    else
        fprintf(f, " x %d", sv->s.cluster.devices);
    if (pm_cluster_pp(&sv->s.cluster) > 1)
        fprintf(f, " in each of %d pipeline stages", pm_cluster_pp(&sv->s.cluster));
    char lengths[96];
    lengths_words(w, lengths, sizeof lengths);
    fprintf(f, "; %s; %s, %lld tokens a step%s\n", lengths,
            w->rule == PM_SERVE_DECODE_FIRST ? "decode-first with chunked prefill"
                                             : "prefill-first (whole prompts)",
            (long long)w->chunk_budget,
            w->arrival == PM_SERVE_WAVE ? "; requests in a wave (sent and ended together)" : "");
    const pm_speculation *sp = &sv->s.spec;
    if (sp->draft_tokens > 0)
        fprintf(f, "# speculative decoding: %s, %d drafted tokens, %.4f tokens per verify step "
                   "(a request decodes in (output - 1) / E steps)\n",
                sp->method == PM_SPEC_MTP ? "MTP heads" : sp->draft.name, sp->draft_tokens,
                pm_spec_expected_tokens(sp));
    if (w->n_classes > 0) {
        fprintf(f, "# lengths (in:out x share):");
        for (int i = 0; i < w->n_classes; i++)
            fprintf(f, " %lld:%lld x %g", (long long)w->classes[i].input_tokens,
                    (long long)w->classes[i].output_tokens, w->classes[i].share);
        fputc('\n', f);
    }
    if (sv->has_fam)
        fprintf(f, "# a front per value of %s (--sweep %s), its column %s\n",
                pm_axis_name(sv->fam.kind), c->sweeps[0], pm_axis_column(sv->fam.kind));
    char note[512]; /* (stderr says them too: a file read later still says them) */
    for (size_t i = 0; sv->has_fam && pm_sweep_warning(&sv->s, &sv->fam, 1, i, note, sizeof note);
         i++) {
        fputs("# warning: ", f);
        fput_comment_text(f, note);
        fputc('\n', f);
    }
}

/* The CSV: with a family, its column (pm_axis_column) first, a front's rows together. */
static void write_csv(FILE *f, const cli *c, const served *sv)
{
    write_header(f, c, sv);
    const size_t n = pm_serve_column_count(); /* at most MAX_SERVE_COLS: cmd_serve checks */
    if (sv->has_fam)
        fprintf(f, "%s,", pm_axis_column(sv->fam.kind));
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%s%s", k ? "," : "", pm_serve_column_name(k));
    fputc('\n', f);
    for (int fm = 0; fm < sv->n_fam; fm++)
        for (int i = 0; i < sv->n; i++) {
            char num[FMT_G9_MAX];
            if (sv->has_fam) {
                fmt_csv(family_value(sv, fm), num);
                fprintf(f, "%s,", num);
            }
            double v[MAX_SERVE_COLS];
            pm_serve_point_values(sv->by_rate ? NAN : sv->conc[i], &sv->r[fm][i], v, n);
            for (size_t k = 0; k < n; k++) {
                fmt_csv(v[k], num);
                fprintf(f, "%s%s", k ? "," : "", num);
            }
            fputc('\n', f);
        }
}

static void write_json_mode(const pm_serve_mode *x)
{
    const struct {
        const char *key;
        double v;
    } kv[] = {{"ttft_s", x->ttft_s},
              {"tpot_s", x->tpot_s},
              {"tpot_max_s", x->tpot_max_s},
              {"e2e_s", x->e2e_s},
              {"mixed_step_s", x->mixed_step_s},
              {"decode_step_s", x->decode_step_s},
              {"requests_per_s", x->requests_per_s},
              {"tokens_per_s_per_device", x->tokens_per_s_per_device},
              {"tokens_per_s_per_user", x->tokens_per_s_per_user},
              {"goodput_tokens_per_s_per_device", x->goodput_tokens_per_s_per_device},
              {"tokens_per_s_per_mm2", x->tokens_per_s_per_mm2},
              {"tokens_per_s_per_usd", x->tokens_per_s_per_usd},
              {"J_per_token", x->energy_per_token_J},
              {"in_flight", x->in_flight}};
    printf("{");
    for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++) {
        printf("%s\"%s\": ", k ? ", " : "", kv[k].key);
        fput_json_number(stdout, kv[k].v);
    }
    printf(", \"meets_limits\": %s, \"saturated\": %s}", x->meets_limits ? "true" : "false",
           x->saturated ? "true" : "false");
}

/* ", \"COLUMN\": value" of front f's family value (nothing without a family). */
static void json_family(const served *sv, int f)
{
    if (!sv->has_fam)
        return;
    printf("\"%s\": ", pm_axis_column(sv->fam.kind));
    fput_json_number(stdout, family_value(sv, f));
    printf(", ");
}

/* The static estimate's points of front f. */
static void json_static(const served *sv, int f)
{
    printf("{");
    json_family(sv, f);
    printf("\"batch\": %d, \"modes\": {", sv->fs[f].workload.batch);
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        double dev, user;
        static_point(sv, f, m, &dev, &user);
        printf("%s\"%s\": {\"tokens_per_s_per_device\": ", m ? ", " : "",
               pm_mode_name((pm_mode)m));
        fput_json_number(stdout, dev);
        printf(", \"tokens_per_s_per_user\": ");
        fput_json_number(stdout, user);
        printf("}");
    }
    printf("}}");
}

static void json_point(const served *sv, int f, int i)
{
    const pm_serve_result *r = &sv->r[f][i];
    printf("\n    {");
    json_family(sv, f);
    printf("\"%s\": ", sv->by_rate ? "request_rate_per_s" : "concurrency");
    fput_json_number(stdout, sv->conc[i]);
    const double v[] = {r->decode_sequences, r->prefilling, r->prefill_steps,
                        r->mixed_step_frac, r->kv_bytes_per_device, r->max_concurrency};
    const char *const names[] = {"decode_sequences", "prefilling", "prefill_steps",
                                 "mixed_step_frac", "kv_bytes_per_device", "max_concurrency"};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        printf(", \"%s\": ", names[k]);
        fput_json_number(stdout, v[k]);
    }
    printf(", \"budget_bound\": %s, \"fits_hbm\": %s", r->budget_bound ? "true" : "false",
           r->fits_hbm ? "true" : "false");
    printf(",\n     \"modes\": {");
    for (int m = 0; m < PM_MODE_COUNT; m++) {
        printf("%s\n      \"%s\": ", m ? "," : "", pm_mode_name((pm_mode)m));
        write_json_mode(&r->modes[m]);
    }
    printf("}}");
}

/* The JSON: with a family, "family" names its axis, "static" is a list (a point per front) and
 * every point carries its front's value. */
static void write_json(const served *sv)
{
    const pm_serve_workload *w = &sv->w[0];
    printf("{\n  \"tool\": \"preserve-model %s\",\n  \"scenario\": ", pm_version());
    fput_json_string(stdout, sv->s.name);
    printf(",\n  \"inputs\": {\"model\": ");
    fput_json_string(stdout, sv->s.model.name);
    printf(", \"accelerator\": ");
    fput_json_string(stdout, sv->s.accel.name);
    printf(", \"devices\": %d, \"input_tokens\": %lld, \"output_tokens\": %lld, "
           "\"chunk_budget\": %lld, \"rule\": \"%s\", \"arrival\": \"%s\", "
           "\"ttft_limit_s\": ",
           sv->s.cluster.devices, (long long)w->input_tokens, (long long)w->output_tokens,
           (long long)w->chunk_budget, pm_serve_rule_name(w->rule),
           pm_serve_arrival_name(w->arrival));
    fput_json_number(stdout, w->ttft_limit_s);
    printf(", \"tpot_limit_s\": ");
    fput_json_number(stdout, w->tpot_limit_s);
    printf(", \"lengths\": [");
    for (int i = 0; i < w->n_classes; i++) {
        printf("%s{\"input_tokens\": %lld, \"output_tokens\": %lld, \"share\": ", i ? ", " : "",
               (long long)w->classes[i].input_tokens, (long long)w->classes[i].output_tokens);
        fput_json_number(stdout, w->classes[i].share);
        printf("}");
    }
    printf("], \"speculative\": ");
    fput_json_speculation(stdout, &sv->s.spec);
    printf("},\n");
    if (sv->has_fam) {
        printf("  \"family\": {\"axis\": \"%s\", \"column\": \"%s\", \"values\": [",
               pm_axis_name(sv->fam.kind), pm_axis_column(sv->fam.kind));
        for (int f = 0; f < sv->n_fam; f++) {
            printf("%s", f ? ", " : "");
            fput_json_number(stdout, family_value(sv, f));
        }
        printf("]},\n  \"static\": [");
        for (int f = 0; f < sv->n_fam; f++) {
            printf("%s\n    ", f ? "," : "");
            json_static(sv, f);
        }
        printf("],\n");
    } else {
        printf("  \"static\": ");
        json_static(sv, 0);
        printf(",\n");
    }
    printf("  \"points\": [");
    for (int f = 0; f < sv->n_fam; f++)
        for (int i = 0; i < sv->n; i++) {
            printf("%s", f || i ? "," : "");
            json_point(sv, f, i);
        }
    printf("\n  ]\n}\n");
}

static void write_table(const cli *c, const served *sv)
{
    write_header(stdout, c, sv);
    for (int f = 0; f < sv->n_fam; f++) {
        if (sv->has_fam) {
            char num[FMT_G9_MAX];
            fmt_csv(family_value(sv, f), num);
            printf("\n%s = %s\n", pm_axis_column(sv->fam.kind), num);
        }
        printf("\n%11s  %-8s %15s %14s %10s %10s %10s%s\n",
               sv->by_rate ? "requests/s" : "concurrency", "mode", "tokens/s/device",
               "tokens/s/user", "ttft_s", "tpot_ms", "e2e_s", sv->by_rate ? "  in_flight" : "");
        for (int i = 0; i < sv->n; i++) {
            const pm_serve_result *r = &sv->r[f][i];
            for (int m = 0; m < PM_MODE_COUNT; m++) {
                const pm_serve_mode *x = &r->modes[m];
                char in_flight[32] = "";
                if (sv->by_rate)
                    snprintf(in_flight, sizeof in_flight, " %10.1f", x->in_flight);
                printf("%11.*f  %-8s %15.1f %14.2f %10.3f %10.2f %10.3f%s%s\n",
                       sv->by_rate ? 3 : 0, sv->conc[i], pm_mode_name((pm_mode)m),
                       x->tokens_per_s_per_device, x->tokens_per_s_per_user, x->ttft_s,
                       x->tpot_s * 1e3, x->e2e_s, in_flight,
                       x->saturated ? "  (saturated: the rate exceeds what it serves)"
                       : m == PM_MODE_COUNT - 1 && !r->fits_hbm ? "  (cache exceeds HBM)"
                       : m == PM_MODE_COUNT - 1 && r->budget_bound ? "  (chunk budget binds)"
                                                                  : "");
            }
        }
        double dev, user;
        static_point(sv, f, PM_MODE_PRESERVE, &dev, &user);
        /* What a sequence holds depends on how many are in flight (a queued prompt holds half
         * its own): the cap is that fixed point, not the first row's figure. */
        double cap = sv->r[f][0].max_concurrency;
        (void)pm_serve_max_in_flight(&sv->fs[f], &sv->w[f], &cap, NULL);
        if (sv->w[f].n_classes > 0)
            printf("\n(at most %.0f sequences' cache fits beside the weights)\n", cap);
        else
            printf("\n(the static estimate, batch %d: preserve %.1f tokens/s per device at %.2f "
                   "tokens/s per user; at most %.0f sequences' cache fits beside the weights)\n",
                   sv->fs[f].workload.batch, dev, user, cap);
    }
}

/* The CSV beside the figure, drawn by plots/serve.gp: one front per mode (and per family
 * value), the static points. */
static int draw(const cli *c, const served *sv)
{
    if (!plot_terminal(c->plot, PLOT_PAGE))
        return plot_usage_error(c->plot);
    out_file csv;
    if (!plot_csv_open(c->plot, &csv))
        return EXIT_CONFIG;
    write_csv(csv.f, c, sv);
    const pm_serve_workload *w = &sv->w[0];
    char *path = str_printf("%s", csv.path);
    char facts[200];
    scenario_facts(&sv->s, facts, sizeof facts);
    if (sv->by_rate) /* on the second line: the first ran off a figure's edge */
        snprintf(facts + strlen(facts), sizeof facts - strlen(facts),
                 "; open loop at the rates labelled");
    char lengths[96];
    lengths_words(w, lengths, sizeof lengths);
    char *title = str_printf("%s on %s x %d: %s, %s, %lld tokens a step%s",
                             sv->s.model.name, sv->s.accel.name, sv->s.cluster.devices, lengths,
                             pm_serve_rule_name(w->rule), (long long)w->chunk_budget,
                             w->arrival == PM_SERVE_WAVE ? ", requests in a wave" : "");
    /* The static points, six numbers a front (per user, per device: serial, fused, preserve),
     * and the family's values as the key shows them. */
    char pts[SERVE_MAX_FAMILY * 6 * 20], labels[SERVE_MAX_FAMILY * 20], fam_title[96] = "";
    size_t np = 0, nl = 0;
    for (int f = 0; f < sv->n_fam; f++) {
        for (int m = 0; m < PM_MODE_COUNT; m++) {
            double dev, user;
            static_point(sv, f, m, &dev, &user);
            np += (size_t)snprintf(pts + np, sizeof pts - np, "%s%.9g %.9g", np ? " " : "", user,
                                   dev);
        }
        if (sv->has_fam) {
            char num[FMT_G9_MAX];
            fmt_csv(family_value(sv, f), num);
            nl += (size_t)snprintf(labels + nl, sizeof labels - nl, "%s%s", nl ? " " : "", num);
        }
    }
    if (nl == 0)
        labels[0] = '\0';
    if (sv->has_fam)
        axis_title(&sv->s, sv->fam.kind, fam_title, sizeof fam_title);
    int rc = !path || !title ? out_of_memory() : 0;
    if (rc == 0)
        rc = out_file_commit(&csv);
    else
        out_file_abort(&csv);
    char batch[16], nfam[16], npts[16], rate[4];
    snprintf(rate, sizeof rate, "%d", sv->by_rate ? 1 : 0);
    /* The static estimate is of the scenario's one prompt and output: not drawn beside a
     * distribution's fronts (batch 0). */
    snprintf(batch, sizeof batch, "%d", w->n_classes > 0 ? 0 : sv->s.workload.batch);
    snprintf(nfam, sizeof nfam, "%d", sv->n_fam);
    snprintf(npts, sizeof npts, "%d", sv->n);
    const plot_var vars[] = {{"ttl", title, false},       {"facts", facts, false},
                             {"batch", batch, true},      {"nfam", nfam, true},
                             {"npts", npts, true},        {"famttl", fam_title, false},
                             {"famlabels", labels, false}, {"spts", pts, false},
                             {"rate", rate, true}};
    if (rc == 0)
        rc = plot_draw("serve.gp", path, c->plot, PLOT_PAGE, vars, sizeof vars / sizeof vars[0]);
    free(path);
    free(title);
    return rc;
}

int cmd_serve(const cli *c)
{
    if (pm_serve_column_count() > MAX_SERVE_COLS) { /* a library newer than this tool */
        fprintf(stderr, "%s: the library has %zu serve columns, this tool room for %d\n", prog,
                pm_serve_column_count(), MAX_SERVE_COLS);
        return EXIT_CONFIG;
    }
    if (c->plot && c->format == FMT_JSON)
        return usage_error("--plot: the figure is drawn from CSV (no --format json)");
    if (c->burst || c->max_running > 0)
        return serve_burst(c);
    served *sv = calloc(1, sizeof *sv);
    if (!sv)
        return out_of_memory();
    int rc = compute(c, sv);
    if (rc == 0 && c->plot)
        rc = draw(c, sv);
    else if (rc == 0 && c->format == FMT_JSON)
        write_json(sv);
    else if (rc == 0 && c->format == FMT_CSV)
        write_csv(stdout, c, sv);
    else if (rc == 0)
        write_table(c, sv);
    if (rc == 0 && ferror(stdout))
        stdout_failed(errno);
    pm_axis_release(&sv->fam);
    pm_scenario_release(&sv->s);
    free(sv);
    return rc;
}
