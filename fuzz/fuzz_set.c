/*
 * fuzz_set.c - "--set PATH=VALUE" overrides of the bundled llama70b scenario. The input is split
 * at newlines (and NULs) into at most 8 override strings, handed to pm_scenario_load, and an
 * accepted scenario is evaluated.
 */
#include "fuzz_common.h"

#define MAX_SETS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_cstr(data, size);
    for (size_t i = 0; i < size; i++)
        if (text[i] == '\0')
            text[i] = '\n';
    const char *sets[MAX_SETS];
    size_t n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(text, "\n", &save); tok && n < MAX_SETS;
         tok = strtok_r(NULL, "\n", &save))
        sets[n++] = tok;
    pm_load_opts opts = {NULL, sets, n};
    pm_scenario s;
    pm_error err;
    pm_status st = pm_scenario_load("llama70b", &opts, &s, &err);
    if (st != PM_OK) {
        fz_check_error(st, &err, data, size);
        FZ_ASSERT(s.provenance == NULL, "a failed load left provenance");
        /* A bad override is named; anything else is about a bundled file. */
        FZ_ASSERT(err.file[0] != '\0' || st == PM_ERR_INVALID_ARG, "%s names no file: %s",
                  pm_status_name(st), err.message);
    } else {
        fz_evaluate(&s, data, size);
        pm_scenario_release(&s);
    }
    free(text);
    return 0;
}
