/*
 * fuzz_hf.c - a HuggingFace config.json through the public model loader: the input is written to
 * a file named config.json and loaded with pm_model_load, which must tell a HuggingFace file
 * (no "kind", HuggingFace keys) from a native one. An accepted model replaces the model of the
 * bundled llama70b scenario, which is then checked and evaluated.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const pm_scenario *base = fz_base();
    const char *path = fz_write_file("config.json", data, size);
    pm_scenario s = *base;
    s.provenance = NULL;
    pm_error err;
    pm_status st = pm_model_load(path, NULL, &s.model, &err);
    if (st != PM_OK) {
        fz_check_error(st, &err, data, size);
        fz_check_located(st, &err);
        FZ_ASSERT(strcmp(err.file, path) == 0, "the error names \"%s\", not the file", err.file);
        return 0;
    }
    fz_evaluate(&s, data, size);
    return 0;
}
