/*
 * read_runtime.c - pm_runtime_read: a serving runtime file (data/runtimes/, kind "runtime")
 * into pm_runtime: its host overheads per step, sequence, kernel and allreduce, its own
 * kernels' efficiencies (decode attention, routed experts and their compute by tokens per
 * expert, PagedAttention), the HBM share it
 * leaves to the weights and the KV cache, the allreduce algorithm it fixes, how it caches MLA
 * and lays out expert parallelism, and the KV cache types it has. What these do is runtime.c's.
 *
 * May call: collective.c, dtype.c, error.c, json.c.
 */
#include <stdio.h>
#include <string.h>

#include "read.h"

static const pm_range TIME_RANGE = {0.0, 1.0, false, false}; /* 0 to 1 s: a host overhead */

/* The PagedAttention kernel and its efficiency come together: a kernel without its figure
 * would be costed at a guess, a figure without the kernel would change nothing. */
static pm_status read_paged_attention(pm_obj *o, pm_runtime *r)
{
    static const char *const names[] = {"none", "all", "fallback"};
    int which = PM_PAGED_NONE;
    pm_status st = pm_obj_enum(o, "paged_attention", false, names, PM_ARRAY_LEN(names), &which);
    if (st == PM_OK)
        st = pm_obj_quantity(o, "paged_attention_efficiency", PM_DIM_FRACTION, false,
                             PM_RANGE_FRACTION, &r->paged_attention_efficiency_frac);
    if (st != PM_OK)
        return st;
    r->paged_attention = (pm_paged_attention)which;
    const bool frac = r->paged_attention_efficiency_frac > 0;
    if (which != PM_PAGED_NONE && !frac)
        return pm_obj_fail(o, "paged_attention_efficiency_frac", PM_ERR_MISSING,
                           "missing: the PagedAttention kernel's efficiency, in (0, 1], is "
                           "required with \"paged_attention\": \"%s\"", names[which]);
    if (which == PM_PAGED_NONE && frac)
        return pm_obj_fail(o, "paged_attention_efficiency_frac", PM_ERR_VALUE,
                           "given without \"paged_attention\" (\"all\" or \"fallback\"): "
                           "it would change nothing");
    return PM_OK;
}

/* The KV cache types the engine has ("kv_dtypes": datatype names separated by spaces). */
static pm_status read_kv_dtypes(pm_obj *o, pm_runtime *r)
{
    const char *list = NULL;
    pm_status st = pm_obj_string(o, "kv_dtypes", false, &list);
    if (st != PM_OK || !list)
        return st;
    size_t n_names;
    const char *const *names = pm_dtype_names(&n_names);
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        const size_t len = strcspn(p, " ");
        if (len == 0)
            break;
        size_t d = 0;
        while (d < n_names && !(strlen(names[d]) == len && strncmp(p, names[d], len) == 0))
            d++;
        if (d == n_names) {
            char all[64];
            return pm_obj_fail(o, "kv_dtypes", PM_ERR_VALUE,
                               "expected datatype names separated by spaces (%s), got \"%.*s\"",
                               pm_dtype_list((1u << n_names) - 1, all, sizeof all), (int)len, p);
        }
        r->kv_dtype_mask |= 1u << d;
        p += len;
    }
    if (r->kv_dtype_mask == 0)
        return pm_obj_fail(o, "kv_dtypes", PM_ERR_VALUE, "names no datatype");
    return PM_OK;
}

/* The MoE routing kernels (issue 47): moe_align_fixed > 0 puts the engine's top-k, align and
 * sum nodes in the layer template; moe_align_per_slot without it would change nothing. */
static pm_status read_moe_routing(pm_obj *o, pm_runtime *r)
{
    pm_status st;
    if ((st = pm_obj_quantity(o, "moe_align_fixed", PM_DIM_TIME, false, TIME_RANGE,
                              &r->moe_align_fixed_s)) ||
        (st = pm_obj_quantity(o, "moe_align_per_slot", PM_DIM_TIME, false, TIME_RANGE,
                              &r->moe_align_per_slot_s)))
        return st;
    r->moe_routing_kernels = r->moe_align_fixed_s > 0;
    if (!r->moe_routing_kernels && r->moe_align_per_slot_s > 0)
        return pm_obj_fail(o, "moe_align_per_slot", PM_ERR_VALUE,
                           "given without a positive \"moe_align_fixed\" (the routing kernels' "
                           "switch): it would change nothing");
    return PM_OK;
}

/* Element i of the expert-GEMM table's "points": {tokens_per_expert, compute_efficiency_frac}. */
static pm_status read_curve_point(pm_obj *c, const cJSON *e, int i, pm_moe_gemm_curve *out)
{
    pm_obj k;
    pm_status st = pm_obj_element(c, "points", i, e,
                                  "{tokens_per_expert, compute_efficiency_frac}", &k);
    if (st != PM_OK)
        return st;
    double *t = &out->tokens_per_expert[i], *f = &out->compute_frac[i];
    st = pm_obj_number(&k, "tokens_per_expert", true, POSITIVE, t);
    if (st == PM_OK)
        st = pm_obj_quantity(&k, "compute_efficiency", PM_DIM_FRACTION, true, PM_RANGE_FRACTION,
                             f);
    if (st == PM_OK)
        st = pm_obj_finish(&k);
    if (st == PM_OK && i > 0 && !(*t > out->tokens_per_expert[i - 1]))
        return pm_fail(c->err, PM_ERR_VALUE, c->file, k.path,
                       "tokens_per_expert must increase from point to point: expected more than "
                       "%g (points[%d]'s), got %g",
                       out->tokens_per_expert[i - 1], i - 1, *t);
    return st;
}

/* An array under key of c, of 1 to max elements: its size into *n, or the failure. */
static pm_status curve_array(pm_obj *c, const char *key, int max, const char *what,
                             const cJSON **a, int *n)
{
    pm_obj_declare(c, key, PM_DIM_NONE);
    *a = cJSON_GetObjectItemCaseSensitive(c->json, key);
    if (!*a)
        return pm_obj_fail(c, key, PM_ERR_MISSING, "missing: an array of 1 to %d %s", max, what);
    if (!cJSON_IsArray(*a))
        return pm_obj_fail(c, key, PM_ERR_TYPE, "expected an array of %s (got %s)", what,
                           pm_json_type_name(*a));
    *n = cJSON_GetArraySize(*a);
    if (*n < 1 || *n > max)
        return pm_obj_fail(c, key, PM_ERR_RANGE, "expected 1 to %d %s (got %d)", max, what, *n);
    return PM_OK;
}

/* The accelerators the table's evidence covers: names (pm_accelerator.name). */
static pm_status read_curve_accelerators(pm_obj *c, pm_moe_gemm_curve *out)
{
    const cJSON *a;
    int n = 0;
    pm_status st = curve_array(c, "accelerators", PM_MAX_MOE_GEMM_ACCELERATORS,
                               "accelerator names", &a, &n);
    int i = 0;
    for (const cJSON *e = a ? a->child : NULL; st == PM_OK && e; e = e->next, i++) {
        const size_t cap = sizeof out->accelerators[i];
        if (!cJSON_IsString(e) || !e->valuestring[0] || strlen(e->valuestring) >= cap)
            return pm_obj_fail(c, "accelerators", PM_ERR_TYPE,
                               "element %d: expected an accelerator's name (a string of 1 to %zu "
                               "bytes), got %s",
                               i, cap - 1, pm_json_type_name(e));
        pm_strlcpy(out->accelerators[i], e->valuestring, cap);
    }
    out->n_accelerators = st == PM_OK ? n : 0;
    return st;
}

/* The routed expert GEMMs' compute efficiency by tokens per expert (issue 47; runtime.c):
 * {"accelerators": [names], "points": [{tokens_per_expert, compute_efficiency_frac}...],
 * "source"}, the points' tokens strictly increasing. */
static pm_status read_moe_gemm_curve(pm_obj *o, pm_moe_gemm_curve *out)
{
    pm_obj c;
    bool present = false;
    pm_status st = pm_obj_child(o, "moe_gemm_compute_efficiency", false, &c, &present);
    if (st != PM_OK || !present)
        return st;
    const char *src = NULL;
    if ((st = pm_obj_string(&c, "source", true, &src)) != PM_OK)
        return st;
    c.file_source = src;
    if ((st = read_curve_accelerators(&c, out)) != PM_OK)
        return st;
    const cJSON *a;
    int n = 0;
    if ((st = curve_array(&c, "points", PM_MAX_MOE_GEMM_POINTS,
                          "points {tokens_per_expert, compute_efficiency_frac}", &a, &n)) != PM_OK)
        return st;
    int i = 0;
    for (const cJSON *e = a->child; st == PM_OK && e; e = e->next, i++)
        st = read_curve_point(&c, e, i, out);
    if (st != PM_OK)
        return st;
    out->n_points = n;
    return pm_obj_finish(&c);
}

pm_status pm_runtime_read(pm_obj *o, pm_runtime *r)
{
    memset(r, 0, sizeof *r);
    pm_status st;
    const char *s = NULL, *src = NULL;
    if ((st = pm_obj_string(o, "kind", false, &s)) != PM_OK)
        return st;
    if (s && strcmp(s, "runtime") != 0)
        return pm_fail(o->err, PM_ERR_VALUE, o->file, "$.kind",
                       "expected \"runtime\" here (got \"%s\")", s);
    if ((st = pm_obj_name(o, "name", true, r->name, sizeof r->name)) != PM_OK ||
        (st = pm_obj_string(o, "source", true, &src)) != PM_OK)
        return st;
    o->file_source = src;
    pm_obj_declare(o, "description", PM_DIM_NONE);
    pm_obj_declare(o, "engine", PM_DIM_NONE);
    if ((st = pm_obj_quantity(o, "step_overhead", PM_DIM_TIME, true, TIME_RANGE,
                              &r->step_overhead_s)) ||
        (st = pm_obj_quantity(o, "sequence_overhead", PM_DIM_TIME, true, TIME_RANGE,
                              &r->sequence_overhead_s)) ||
        (st = pm_obj_quantity(o, "multi_device_overhead", PM_DIM_TIME, false, TIME_RANGE,
                              &r->multi_device_overhead_s)) ||
        (st = pm_obj_quantity(o, "kernel_launch", PM_DIM_TIME, true, TIME_RANGE,
                              &r->kernel_launch_s)) ||
        (st = pm_obj_quantity(o, "allreduce_overhead", PM_DIM_TIME, false, TIME_RANGE,
                              &r->allreduce_overhead_s)) ||
        (st = pm_obj_quantity(o, "attention_hbm_efficiency", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &r->attention_hbm_efficiency_frac)) ||
        (st = pm_obj_quantity(o, "moe_gemm_efficiency", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &r->moe_gemm_efficiency_frac)) ||
        (st = pm_obj_quantity(o, "hbm_usable", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &r->hbm_usable_frac)))
        return st;
    if ((st = read_moe_routing(o, r)) != PM_OK ||
        (st = read_moe_gemm_curve(o, &r->moe_gemm_compute)) != PM_OK ||
        (st = pm_obj_bool(o, "fp8_activation_quant", false, &r->fp8_activation_quant)) != PM_OK)
        return st;
    int algo = PM_AR_AUTO;
    size_t n_algo;
    const char *const *names = pm_allreduce_algo_names(&n_algo);
    r->allreduce_given = pm_obj_has(o, "allreduce");
    if ((st = pm_obj_enum(o, "allreduce", false, names, n_algo, &algo)) != PM_OK)
        return st;
    r->allreduce = (pm_allreduce_algo)algo;
    if ((st = read_paged_attention(o, r)) != PM_OK)
        return st;
    static const char *const mla_names[] = {"latent", "per_head"};
    int mla = PM_MLA_CACHE_LATENT;
    if ((st = pm_obj_enum(o, "mla_kv_cache", false, mla_names, PM_ARRAY_LEN(mla_names), &mla)) !=
        PM_OK)
        return st;
    r->mla_kv_cache = (pm_mla_kv_cache)mla;
    static const char *const ep_names[] = {"all_to_all", "allreduce"};
    int ep = PM_EP_ALL_TO_ALL;
    if ((st = pm_obj_enum(o, "expert_parallel", false, ep_names, PM_ARRAY_LEN(ep_names), &ep)) !=
        PM_OK)
        return st;
    r->expert_parallel = (pm_ep_layout)ep;
    if ((st = read_kv_dtypes(o, r)) != PM_OK)
        return st;
    r->present = true;
    return pm_obj_finish(o);
}
