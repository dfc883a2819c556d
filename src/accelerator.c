/*
 * accelerator.c - the accelerator's description, queried: its dense peak per datatype and the
 * HBM bandwidth a bulk stream achieves. The roofline (cost.c), the checks (check.c) and the
 * energy and area models read them here, so that each is read one way.
 *
 * May call: nothing of the library (the public structs only).
 */
#include "internal.h"

double pm_peak_compute(const pm_accelerator *a, pm_dtype d)
{
    return (int)d >= 0 && d < PM_DTYPE_COUNT ? a->peak_flop_per_s[d] : 0.0;
}

double pm_effective_hbm_bw(const pm_accelerator *a)
{
    return a->hbm_bandwidth_bytes_per_s * a->hbm_efficiency_frac;
}
