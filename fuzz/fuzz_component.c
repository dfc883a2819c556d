/*
 * fuzz_component.c - one harness per component reader (model, accelerator, cluster, workload),
 * chosen at compile time with -DFZ_KIND=PM_KIND_MODEL etc. The input is parsed in memory with
 * the strict parser and read with the component's reader; what it accepts replaces that
 * component of the bundled llama70b scenario, which is then checked and evaluated.
 */
#include "fuzz_common.h"

#ifndef FZ_KIND
#error "build with -DFZ_KIND=PM_KIND_MODEL (or ACCELERATOR, CLUSTER, WORKLOAD)"
#endif

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
    default: abort();
    }
    if (st != PM_OK) {
        fz_check_error(st, &err, data, size);
        fz_check_located(st, &err);
    } else {
        /* Every recorded input is a finite SI value. */
        for (size_t i = 0; i < prov->n; i++)
            FZ_ASSERT(isfinite(prov->items[i].value_si) ||
                          (isnan(prov->items[i].value_si) &&
                           strcmp(prov->items[i].origin, "ignored") == 0),
                      "%s recorded as %g", prov->items[i].path, prov->items[i].value_si);
        fz_evaluate(&s, data, size);
    }
    pm_provenance_free(prov);
    cJSON_Delete(root);
    return 0;
}
