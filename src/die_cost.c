/*
 * die_cost.c - the dollar cost of one device (DESIGN.md section 14): a good die costs the wafer
 * price over the good dies of a wafer (gross dies per wafer x yield, the ttm-cas model), plus
 * the HBM it carries and its package. The die is the area model's (area.c), so a larger L2
 * costs dollars as well as mm2. The coefficients are data (the accelerator's "cost" object,
 * each number sourced); the yield model is a choice among the three the literature uses. A
 * multi-die package (area.c's compute and I/O dies) pays for each die yielded alone: a defect
 * then scraps one chiplet, not the whole device (ttm-cas's dies_per_package).
 *
 * May call: area.c, error.c.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

#define PI 3.14159265358979323846

static const char *const yield_names[PM_YIELD_COUNT] = {"negative_binomial", "murphy",
                                                        "poisson"};

const char *pm_yield_model_name(pm_yield_model m)
{
    return (int)m >= 0 && m < PM_YIELD_COUNT ? yield_names[m] : "?";
}

const char *const *pm_yield_model_names(size_t *count)
{
    *count = PM_ARRAY_LEN(yield_names);
    return yield_names;
}

double pm_dies_per_wafer(double wafer_diameter_mm, double die_mm2)
{
    if (!(wafer_diameter_mm > 0) || !(die_mm2 > 0) || !isfinite(wafer_diameter_mm) ||
        !isfinite(die_mm2))
        return 0.0;
    const double d = wafer_diameter_mm, r = d / 2.0;
    const double dpw = PI * r * r / die_mm2 - PI * d / sqrt(2.0 * die_mm2);
    return dpw > 0 ? dpw : 0.0;
}

double pm_die_yield(pm_yield_model model, double die_mm2, double d0_per_mm2, double alpha)
{
    if (!(die_mm2 >= 0) || !(d0_per_mm2 >= 0) || !isfinite(die_mm2) || !isfinite(d0_per_mm2))
        return NAN;
    const double ad = die_mm2 * d0_per_mm2;
    switch (model) {
    case PM_YIELD_NEGATIVE_BINOMIAL:
        if (!(alpha > 0) || !isfinite(alpha))
            return NAN;
        return pow(1.0 + ad / alpha, -alpha);
    case PM_YIELD_MURPHY: {
        if (!(ad > 0))
            return 1.0; /* the limit of (1 - e^-x) / x at 0 */
        const double f = -expm1(-ad) / ad;
        return f * f;
    }
    case PM_YIELD_POISSON: return exp(-ad);
    case PM_YIELD_COUNT: break;
    }
    return NAN;
}

/* The wafer holds no whole die of mm2: name the largest part of that die (usually an L2 grown
 * in a what-if). */
static pm_status no_whole_die(pm_error *err, const pm_accelerator *a, const pm_area *area,
                              bool io_die, double mm2, double dpw)
{
    const pm_area_params *p = &a->area;
    const bool l2_io = p->io_holds >= PM_IO_LINKS_HBM_L2, hbm_io = p->io_holds >= PM_IO_LINKS_HBM;
    /* Each block's share of this die: 0 where it is on the other kind. */
    const int n = io_die ? area->io_dies : area->compute_dies;
    const double parts[] = {io_die ? 0 : area->compute_mm2,
                            l2_io == io_die || area->io_dies == 0 ? area->l2_mm2 : 0,
                            hbm_io == io_die || area->io_dies == 0 ? area->hbm_phy_mm2 : 0,
                            io_die || area->io_dies == 0 ? area->link_phy_mm2 : 0,
                            io_die ? area->io_other_mm2 : area->other_mm2};
    static const char *const names[] = {"the compute", "the L2 (l2_capacity)", "the HBM PHYs",
                                        "the link PHYs", "the rest"};
    size_t big = 0;
    for (size_t i = 1; i < PM_ARRAY_LEN(parts); i++)
        if (parts[i] > parts[big])
            big = i;
    return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.cost.wafer_diameter_mm",
                   "a %g mm wafer holds no whole %s of %g mm2 (got %g dies per wafer): the die "
                   "area model gives %s %.4g mm2 of it, so there is no die cost",
                   a->cost.wafer_diameter_mm, io_die ? "I/O die" : "die", mm2, dpw, names[big],
                   parts[big] / n);
}

pm_status pm_device_cost_compute(const pm_accelerator *a, pm_device_cost *out, pm_error *err)
{
    if (!a || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL accelerator or output");
    return pm_device_cost_at(a, NULL, NULL, out, err);
}

/* Whether x and y are the same double, bit for bit. */
static bool same_bits(double x, double y)
{
    return memcmp(&x, &y, sizeof x) == 0;
}

/* Whether memo's dies were found under the fields of k that pm_dies_per_wafer and pm_die_yield
 * read. */
static bool same_wafer(const pm_die_memo *memo, const pm_cost_params *k)
{
    return same_bits(memo->wafer_diameter_mm, k->wafer_diameter_mm) &&
           memo->yield_model == k->yield_model &&
           same_bits(memo->defect_density_per_mm2, k->defect_density_per_mm2) &&
           same_bits(memo->io_defect_density_per_mm2, k->io_defect_density_per_mm2) &&
           same_bits(memo->yield_alpha, k->yield_alpha);
}

/* Die kind i's dies per wafer and yield at mm2 under k: memo's (NULL: none) when it holds them
 * for the same area and the same fields of k, bit for bit, else found and kept there. */
static void die_on_wafer(const pm_cost_params *k, double mm2, size_t i, pm_die_memo *memo,
                         double *dpw, double *y)
{
    if (memo && memo->kept[i] && same_bits(memo->mm2[i], mm2) && same_wafer(memo, k)) {
        *dpw = memo->dpw[i];
        *y = memo->yield[i];
        return;
    }
    *dpw = pm_dies_per_wafer(k->wafer_diameter_mm, mm2);
    /* The I/O dies at their own node's defect density where it is given. */
    const double d0 = i == 1 && k->io_defect_density_per_mm2 > 0 ? k->io_defect_density_per_mm2
                                                                  : k->defect_density_per_mm2;
    *y = pm_die_yield(k->yield_model, mm2, d0, k->yield_alpha);
    if (!memo)
        return;
    if (!(memo->kept[0] || memo->kept[1]) || !same_wafer(memo, k)) {
        memo->kept[0] = memo->kept[1] = false; /* the other kind's: under another wafer */
        memo->wafer_diameter_mm = k->wafer_diameter_mm;
        memo->yield_model = k->yield_model;
        memo->defect_density_per_mm2 = k->defect_density_per_mm2;
        memo->io_defect_density_per_mm2 = k->io_defect_density_per_mm2;
        memo->yield_alpha = k->yield_alpha;
    }
    memo->kept[i] = true;
    memo->mm2[i] = mm2;
    memo->dpw[i] = *dpw;
    memo->yield[i] = *y;
}

/* (internal.h) */
pm_status pm_device_cost_at(const pm_accelerator *a, const pm_area *given, pm_die_memo *memo,
                            pm_device_cost *out, pm_error *err)
{
    *out = (pm_device_cost){0};
    const pm_cost_params *k = &a->cost;
    if (!k->present)
        return pm_block_missing(err, a, "cost");
    pm_area found;
    const pm_area *ar = given;
    if (!ar) {
        const pm_status st = pm_area_compute(a, &found, err);
        if (st != PM_OK)
            return st;
        ar = &found;
    }
    if (!(k->wafer_usd > 0) || !isfinite(k->wafer_usd) || !(k->io_wafer_usd >= 0) ||
        !isfinite(k->io_wafer_usd) || !(k->io_defect_density_per_mm2 >= 0) ||
        !isfinite(k->io_defect_density_per_mm2) || !(k->hbm_usd_per_byte >= 0) ||
        !isfinite(k->hbm_usd_per_byte) || !(k->package_usd >= 0) || !isfinite(k->package_usd))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.cost",
                       "the wafer price must be finite and > 0, the HBM and package prices "
                       "and the I/O dies' defect density finite and >= 0");
    /* Each kind of die on its own wafer, yielded alone: a defect scraps one die. */
    struct {
        int count;
        double mm2, dpw, yield;
    } kinds[2] = {{ar->compute_dies, ar->compute_die_mm2, 0, 0},
                  {ar->io_dies, ar->io_die_mm2, 0, 0}};
    double usd = 0.0;
    for (size_t i = 0; i < PM_ARRAY_LEN(kinds); i++) {
        if (kinds[i].count < 1)
            continue;
        const double mm2 = kinds[i].mm2;
        double dpw, y;
        die_on_wafer(k, mm2, i, memo, &dpw, &y);
        if (!(dpw >= 1.0))
            return no_whole_die(err, a, ar, i == 1, mm2, dpw);
        if (!(y > 0 && y <= 1.0))
            return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.cost",
                           "the yield of a %g mm2 die is not in (0, 1] (got %g): check "
                           "defect_density and yield_alpha",
                           mm2, y);
        kinds[i].dpw = dpw;
        kinds[i].yield = y;
        /* The I/O dies on their own node's wafer where it is given. */
        const double wafer = i == 1 && k->io_wafer_usd > 0 ? k->io_wafer_usd : k->wafer_usd;
        usd += kinds[i].count * wafer / (dpw * y);
    }
    out->die_mm2 = ar->die_mm2;
    out->dies_per_package = pm_dies_per_package(ar);
    out->dies_per_wafer = kinds[0].dpw;
    out->yield_frac = kinds[0].yield;
    out->io_dies_per_wafer = kinds[1].dpw;
    out->io_yield_frac = kinds[1].yield;
    out->die_usd = usd;
    out->hbm_usd = k->hbm_usd_per_byte * a->hbm_capacity_bytes;
    out->package_usd = k->package_usd;
    out->device_usd = out->die_usd + out->hbm_usd + out->package_usd;
    return PM_OK;
}
