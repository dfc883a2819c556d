/*
 * dtype.c - the numeric datatypes: the one table of their names and sizes (which the loaders,
 * the graph reader and the printers all use), and the rules that pick a datatype from a
 * workload: the GEMMs compute in the wider of the weight and activation types, and the
 * allreduce carries allreduce_dtype when given, else the activation type.
 *
 * May call: nothing of the library (the public structs only).
 */
#include <string.h>

#include "internal.h"

static const char *const dtype_names[PM_DTYPE_COUNT] = {"int8", "fp8", "bf16", "fp16", "fp32"};
static const double dtype_bytes[PM_DTYPE_COUNT] = {1, 1, 2, 2, 4};

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
