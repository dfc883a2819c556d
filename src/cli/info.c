/*
 * info.c - the commands about the inputs rather than the model: `resolve` (every resolved input
 * in SI units with its source), `validate` (config files checked) and `list` (bundled names).
 */
#include <inttypes.h>
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "merge.h"
#include "options.h"
#include "output.h"

/* resolve --format json: the inputs as an array of objects, the CSV's columns as keys. */
static void resolve_json(const cli *c, const pm_scenario *s)
{
    printf("{\n  \"tool\": \"preserve-model %s\",\n  \"scenario\": ", pm_version());
    fput_json_string(stdout, s->name);
    printf(",\n  \"inputs_fnv1a64\": \"%016" PRIx64 "\",\n  \"data_dir\": ", scenario_digest(s));
    fput_json_string(stdout, c->data_dir ? c->data_dir : pm_default_data_dir());
    printf(",\n  \"params\": [");
    for (size_t i = 0; i < pm_scenario_param_count(s); i++) {
        const pm_param_info *p = pm_scenario_param(s, i);
        printf("%s\n    {\"path\": ", i ? "," : "");
        fput_json_string(stdout, p->path);
        printf(", \"value_si\": ");
        fput_json_number(stdout, p->value_si); /* null: an ignored key that is no number */
        if (p->value_text) { /* a choice made by name */
            printf(", \"value_text\": ");
            fput_json_string(stdout, p->value_text);
        }
        char set[PATH_MAX + 128]; /* an override's whole label */
        const char *keys[] = {"unit_si", "origin", "file", "source"};
        const char *vals[] = {p->unit_si, p->origin, file_in_cli_words(p->file, set, sizeof set),
                              p->source};
        for (int k = 0; k < 4; k++) {
            printf(", \"%s\": ", keys[k]);
            fput_json_string(stdout, vals[k]);
        }
        printf("}");
    }
    printf("\n  ]\n}\n");
}

int cmd_resolve(const cli *c)
{
    pm_scenario s;
    int rc = load(c, &s);
    if (rc)
        return rc;
    if (c->format == FMT_JSON) {
        resolve_json(c, &s);
        pm_scenario_release(&s);
        return 0;
    }
    printf("# preserve-model %s: scenario %s resolved to SI units\n", pm_version(), s.name);
    print_resolved(stdout, c, &s);
    printf("path,value_si,unit_si,origin,file,source\n");
    for (size_t i = 0; i < pm_scenario_param_count(&s); i++) {
        const pm_param_info *p = pm_scenario_param(&s, i);
        fput_csv_field(stdout, p->path, false);
        if (p->value_text) { /* a choice made by name */
            putchar(',');
            fput_csv_field(stdout, p->value_text, false);
            putchar(',');
        } else if (isnan(p->value_si)) /* an ignored key whose value is not a number */
            fputs(",,", stdout);
        else
            printf(",%.9g,", p->value_si);
        fput_csv_field(stdout, p->unit_si, false);
        putchar(',');
        fput_csv_field(stdout, p->origin, false);
        putchar(',');
        char set[PATH_MAX + 128]; /* an override's whole label */
        fput_csv_field(stdout, file_in_cli_words(p->file, set, sizeof set), false);
        putchar(',');
        fput_csv_field(stdout, p->source, true); /* always quoted, as it always was */
        putchar('\n');
    }
    pm_scenario_release(&s);
    return 0;
}

static int validate_one(const cli *c, const char *path, int *bad)
{
    pm_load_opts o = load_opts(c);
    pm_error err;
    pm_file_kind kind;
    if (pm_file_validate(path, &o, &kind, &err) != PM_OK) {
        config_error(&err);
        (*bad)++;
        return 1;
    }
    /* The listing outgrows stdout's buffer: a write that fails mid-way keeps its errno for
     * finish_output (errno is gone by the final flush); so does the last line below. */
    errno = 0;
    if (printf("ok  %-12s %s\n", pm_file_kind_name(kind), path) < 0 || ferror(stdout))
        stdout_failed(errno);
    /* A scenario that is valid may still not be what was meant: its warnings, as a run gives
     * them (the other kinds are warned about in the scenario that uses them). */
    pm_scenario s;
    if (kind == PM_KIND_SCENARIO && pm_scenario_load(path, &o, &s, &err) == PM_OK) {
        char note[512];
        for (size_t i = 0; pm_scenario_warning(&s, i, note, sizeof note); i++)
            if (printf("    warning: %s\n", note) < 0 || ferror(stdout))
                stdout_failed(errno);
        pm_scenario_release(&s);
    }
    /* A model's own warnings (its unrecognised keys, its checkpoint's format) are found in a
     * scenario that uses it: the one of --config with the model replaced; those that name the
     * file are the model's (the rest are the scenario's). A model that scenario cannot run
     * (too few heads for its devices) is valid still and gives none. */
    char set[PATH_MAX + 8];
    const char *sets[MAX_SETS + 1];
    if (kind == PM_KIND_MODEL && c->n_sets < MAX_SETS &&
        snprintf(set, sizeof set, "model=%s", path) < (int)sizeof set) {
        for (size_t i = 0; i < c->n_sets; i++)
            sets[i] = c->sets[i];
        sets[c->n_sets] = set;
        pm_load_opts mo = {c->data_dir, sets, c->n_sets + 1};
        if (pm_scenario_load(c->config, &mo, &s, &err) == PM_OK) {
            char note[512];
            for (size_t i = 0; pm_scenario_warning(&s, i, note, sizeof note); i++)
                if (strstr(note, path) &&
                    (printf("    warning (run in scenario %s): %s\n", s.name, note) < 0 ||
                     ferror(stdout)))
                    stdout_failed(errno);
            pm_scenario_release(&s);
        }
    }
    return 0;
}

int cmd_validate(const cli *c, int argc, char **argv)
{
    int bad = 0, total = 0;
    if (argc > 0) {
        for (int i = 0; i < argc; i++, total++)
            validate_one(c, argv[i], &bad);
    } else {
        const char *dd = c->data_dir ? c->data_dir : pm_default_data_dir();
        struct stat st;
        if (stat(dd, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "%s: validate: the data directory %s %s (give --data-dir or "
                    "PRESERVE_MODEL_DATA, or the files to check)\n", prog, dd,
                    stat(dd, &st) != 0 ? "does not exist" : "is not a directory");
            return EXIT_CONFIG;
        }
        static const char *const dirs[] = {"models",    "accelerators", "clusters", "workloads",
                                           "scenarios", NULL,           "runtimes", "lengths"};
        for (int k = 0; k < PM_KIND_COUNT; k++) {
            char **names = NULL;
            size_t n = 0;
            pm_error err;
            if (!dirs[k] || pm_data_list(dd, (pm_file_kind)k, &names, &n, &err) != PM_OK)
                continue; /* graphs are not shipped; a kind with no directory ships no files */
            for (size_t i = 0; i < n; i++, total++) {
                char *path = str_printf("%s/%s/%s.json", dd, dirs[k], names[i]);
                if (!path) {
                    pm_names_free(names, n);
                    return out_of_memory();
                }
                validate_one(c, path, &bad);
                free(path);
            }
            pm_names_free(names, n);
        }
        if (total == 0) {
            fprintf(stderr, "%s: validate: no data files under %s (expected models/, "
                    "accelerators/, clusters/, workloads/, scenarios/, runtimes/ or lengths/ "
                    "with .json files)\n", prog, dd);
            return EXIT_CONFIG;
        }
    }
    errno = 0;
    if (printf("%d files checked, %d invalid\n", total, bad) < 0 || ferror(stdout))
        stdout_failed(errno);
    return bad ? EXIT_CONFIG : 0;
}

int cmd_list(const cli *c, int argc, char **argv)
{
    static const char *const kinds[] = {"models",    "accelerators", "clusters", "workloads",
                                        "scenarios", "",             "runtimes", "lengths"};
    if (argc != 1)
        return usage_error("list needs one of %s", "models, accelerators, clusters, workloads, "
                                                   "scenarios, runtimes, lengths");
    for (int k = 0; k < PM_KIND_COUNT; k++) {
        /* The singular ("model") names the kind too. */
        const size_t len = kinds[k][0] ? strlen(kinds[k]) - 1 : 0;
        if (!kinds[k][0] || (strcmp(argv[0], kinds[k]) != 0 &&
                             !(strlen(argv[0]) == len && strncmp(argv[0], kinds[k], len) == 0)))
            continue;
        char **names = NULL;
        size_t n = 0;
        pm_error err;
        if (pm_data_list(c->data_dir, (pm_file_kind)k, &names, &n, &err) != PM_OK)
            return config_error(&err);
        if (c->format == FMT_JSON)
            printf("{\"kind\": \"%s\", \"names\": [", kinds[k]);
        for (size_t i = 0; i < n; i++) {
            if (c->format == FMT_JSON) {
                fputs(i ? ", " : "", stdout);
                fput_json_string(stdout, names[i]);
            } else {
                printf("%s\n", names[i]);
            }
        }
        if (c->format == FMT_JSON)
            printf("]}\n");
        pm_names_free(names, n);
        return 0;
    }
    const char *const names[] = {"models",    "accelerators", "clusters", "workloads",
                                 "scenarios", "runtimes",     "lengths"};
    char hint[96];
    return usage_error("unknown list '%s' (expected models, accelerators, clusters, workloads, "
                       "scenarios, runtimes or lengths)%s",
                       argv[0], cli_suggest(argv[0], names, 7, "", hint, sizeof hint));
}
