/*
 * fuzz_component.c - one harness per component reader (model, accelerator, cluster, workload,
 * runtime), chosen at compile time with -DFZ_KIND=PM_KIND_MODEL etc. The input is parsed in
 * memory with the strict parser and read with the component's reader; what it accepts replaces
 * that component of the bundled llama70b scenario, which is then checked and evaluated.
 *
 * A runtime is added to the scenario the way the loader does (data.c: a runtime that fixes the
 * allreduce sets the cluster's algorithm), and checked against pm_runtime's contract
 * (include/preserve_model.h): present, a name, every overhead a finite time in [0, 1] s (the
 * reader's range), an algorithm only when the file gave one.
 */
#include "fuzz_common.h"

#ifndef FZ_KIND
#error "build with -DFZ_KIND=PM_KIND_MODEL (or ACCELERATOR, CLUSTER, WORKLOAD, RUNTIME)"
#endif

/* pm_runtime's contract for a runtime the reader accepted; adds it to s as the loader does. */
static void fz_check_runtime(pm_scenario *s, const cJSON *root)
{
    const pm_runtime *r = &s->runtime;
    FZ_ASSERT(r->present, "an accepted runtime is not present");
    FZ_ASSERT(r->name[0] != '\0' && memchr(r->name, '\0', sizeof r->name) != NULL,
              "runtime name \"%.*s\"", (int)sizeof r->name, r->name);
    const double t[] = {r->step_overhead_s, r->sequence_overhead_s, r->multi_device_overhead_s,
                        r->kernel_launch_s, r->allreduce_overhead_s};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        FZ_ASSERT(isfinite(t[i]) && t[i] >= 0.0 && t[i] <= 1.0, "runtime overhead %zu = %g s",
                  i, t[i]);
    const bool has = cJSON_GetObjectItemCaseSensitive(root, "allreduce") != NULL;
    FZ_ASSERT(r->allreduce_given == has, "allreduce_given %d for a file %s an allreduce",
              (int)r->allreduce_given, has ? "with" : "without");
    FZ_ASSERT(r->allreduce_given || r->allreduce == PM_AR_AUTO,
              "algorithm %d without an allreduce key", (int)r->allreduce);
    size_t n_algo;
    (void)pm_allreduce_algo_names(&n_algo);
    FZ_ASSERT((size_t)r->allreduce < n_algo, "algorithm %d of %zu", (int)r->allreduce, n_algo);
    if (r->allreduce_given)
        s->cluster.algorithm = r->allreduce;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const pm_scenario *base = fz_base();
    cJSON *root = NULL;
    pm_error err;
    memset(&err, 0, sizeof err);
    pm_status st = pm_json_parse((const char *)data, size, "fuzz.json", &root, &err);
    if (st != PM_OK) {
        FZ_ASSERT(root == NULL, "a failed parse left a tree");
        fz_check_error(st, &err, data, size);
        fz_check_located(st, &err);
        return 0;
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return 0;
    }
    pm_scenario s = *base;
    s.provenance = NULL;
    pm_provenance *prov = calloc(1, sizeof *prov);
    if (!prov)
        abort();
    pm_obj o;
    pm_obj_init(&o, root, "fuzz.json", "$", &err);
    o.prov = prov;
    switch (FZ_KIND) {
    case PM_KIND_MODEL: st = pm_model_read(&o, &s.model); break;
    case PM_KIND_ACCELERATOR: st = pm_accelerator_read(&o, &s.accel); break;
    case PM_KIND_CLUSTER: st = pm_cluster_read(&o, &s.cluster); break;
    case PM_KIND_WORKLOAD: st = pm_workload_read(&o, &s.workload); break;
    case PM_KIND_RUNTIME: st = pm_runtime_read(&o, &s.runtime); break;
    default: abort();
    }
    if (st != PM_OK) {
        fz_check_error(st, &err, data, size);
        fz_check_located(st, &err);
    } else {
        /* Every recorded input is a finite SI value, or a choice made by name. */
        for (size_t i = 0; i < prov->n; i++)
            FZ_ASSERT(isfinite(prov->items[i].value_si) ||
                          (isnan(prov->items[i].value_si) &&
                           (strcmp(prov->items[i].origin, "ignored") == 0 ||
                            (prov->items[i].value_text && prov->items[i].value_text[0]))),
                      "%s recorded as %g", prov->items[i].path, prov->items[i].value_si);
        if (FZ_KIND == PM_KIND_RUNTIME)
            fz_check_runtime(&s, root);
        fz_evaluate(&s, data, size);
    }
    pm_provenance_free(prov);
    cJSON_Delete(root);
    return 0;
}
