/*
 * dtype.c - the numeric datatypes: the one table of their names and sizes (which the loaders,
 * the graph reader and the printers all use), and the rules that pick a datatype from a
 * workload: the GEMMs compute in the wider of the weight and activation types, and the
 * allreduce carries allreduce_dtype when given, else the activation type; and the bytes of a
 * stored weight under int4 (GPTQ/AWQ) weight-only quantisation.
 *
 * int4 weights (issue 45 item 5): 0.5 byte a weight plus, per group of weight_group_size input
 * channels of one output column, a 16-bit scale and (asymmetric, weight_zero_point) a 4-bit zero
 * point packed like the weights. The group defaults to 128: transformers' GPTQConfig and
 * AutoAWQ's q_group_size default to it, and the published checkpoints state it (Qwen's
 * *-GPTQ-Int4 and gptqmodel's quantize_config.json: "bits": 4, "group_size": 128, "sym": true;
 * llm-compressor's W4A16 recipes: group_size 128, symmetric). Symmetric GPTQ kernels (Marlin,
 * exllama) read no zero points; AWQ's default is asymmetric (zero_point true). The embedding and
 * the LM head stay 16-bit: gptqmodel writes "lm_head": false and llm-compressor's recipes
 * "ignore: [lm_head]" (only Linear layers are targets, so the embedding is never quantised);
 * a MoE router (the gate, a Linear of hidden x experts) is left out by the same tools' MoE
 * recipes and kept here in the activations' type too.
 *
 * May call: nothing of the library (the public structs only).
 */
#include <string.h>

#include "internal.h"

static const char *const dtype_names[PM_DTYPE_COUNT] = {"int8", "fp8", "bf16", "fp16", "fp32",
                                                            "int4"};
static const double dtype_bytes[PM_DTYPE_COUNT] = {1, 1, 2, 2, 4, 0.5};

double pm_dtype_bytes(pm_dtype d)
{
    return (int)d >= 0 && d < PM_DTYPE_COUNT ? dtype_bytes[d] : 0.0;
}

const char *pm_dtype_name(pm_dtype d)
{
    return (int)d >= 0 && d < PM_DTYPE_COUNT ? dtype_names[d] : "?";
}

const char *const *pm_dtype_names(size_t *count)
{
    *count = PM_ARRAY_LEN(dtype_names);
    return dtype_names;
}

const char *pm_dtype_list(unsigned mask, char *buf, size_t n)
{
    if (n == 0)
        return buf;
    buf[0] = '\0';
    for (int d = 0; d < PM_DTYPE_COUNT; d++) {
        if (!(mask & (1u << d)))
            continue;
        strncat(buf, buf[0] ? ", " : "", n - strlen(buf) - 1);
        strncat(buf, dtype_names[d], n - strlen(buf) - 1);
    }
    return buf;
}

pm_dtype pm_compute_dtype(const pm_workload *w)
{
    return pm_dtype_bytes(w->weight_dtype) > pm_dtype_bytes(w->act_dtype) ? w->weight_dtype
                                                                         : w->act_dtype;
}

pm_dtype pm_allreduce_dtype(const pm_workload *w)
{
    return w->allreduce_dtype_given ? w->allreduce_dtype : w->act_dtype;
}

/* GPTQ's and AWQ's default group (transformers GPTQConfig, AutoAWQ q_group_size). */
#define INT4_DEFAULT_GROUP 128

int pm_weight_group_size(const pm_workload *w)
{
    return w->weight_group_size > 0 ? w->weight_group_size : INT4_DEFAULT_GROUP;
}

double pm_weight_elem_bytes(const pm_workload *w)
{
    if (w->weight_dtype != PM_DTYPE_INT4)
        return pm_dtype_bytes(w->weight_dtype);
    const double g = pm_weight_group_size(w);
    const double per_group = 2.0 + (w->weight_zero_point ? 0.5 : 0.0); /* fp16 scale, int4 zero */
    return pm_dtype_bytes(PM_DTYPE_INT4) + per_group / g;
}

double pm_unquantised_weight_bytes(const pm_workload *w)
{
    return pm_dtype_bytes(w->weight_dtype == PM_DTYPE_INT4 ? w->act_dtype : w->weight_dtype);
}

double pm_role_weight_bytes(const pm_workload *w, pm_node_role role)
{
    const bool kept = role == PM_ROLE_EMBEDDING || role == PM_ROLE_LM_HEAD ||
                      role == PM_ROLE_ROUTER;
    return kept ? pm_unquantised_weight_bytes(w) : pm_weight_elem_bytes(w);
}
