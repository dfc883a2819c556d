/*
 * area.c - the die-area model (DESIGN.md section 9): compute area proportional to the
 * int8-equivalent dense peak, L2 SRAM proportional to capacity, HBM and link PHYs per stack and
 * per link, and the rest. The coefficients are data (the accelerator file's "area" object, each
 * sourced), so another process node is another set of numbers, not code.
 *
 * May call: error.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

double pm_int8_equivalent_peak(const pm_accelerator *a)
{
    if (!a)
        return 0.0;
    const double *p = a->peak_flop_per_s;
    const double cands[] = {p[PM_DTYPE_INT8], p[PM_DTYPE_FP8], 2.0 * p[PM_DTYPE_BF16],
                            2.0 * p[PM_DTYPE_FP16], 4.0 * p[PM_DTYPE_FP32]};
    double best = 0.0;
    for (size_t i = 0; i < PM_ARRAY_LEN(cands); i++)
        if (cands[i] > best)
            best = cands[i];
    return best;
}

/* The L2 built per byte enabled; 0 (unset) acts as 1. */
static double l2_spare(const pm_area_params *p)
{
    return p->l2_die_frac < 0 || p->l2_die_frac > 0 || isnan(p->l2_die_frac) ? p->l2_die_frac
                                                                               : 1.0;
}

pm_status pm_block_missing(pm_error *err, const pm_accelerator *a, const char *block)
{
    const bool vowel = strchr("aeiou", block[0]) != NULL;
    char path[64];
    snprintf(path, sizeof path, "$.accelerator.%s", block);
    return pm_fail(err, PM_ERR_MISSING, NULL, path,
                   "accelerator \"%s\" has no %s coefficients (a%s \"%s\" object)", a->name,
                   block, vowel ? "n" : "", block);
}

/* (internal.h) */
pm_status pm_area_check(const pm_accelerator *a, pm_error *err)
{
    if (!a->area.present)
        return pm_block_missing(err, a, "area");
    const pm_area_params *p = &a->area;
    /* A block of the die that exists costs area: a coefficient of 0 (a die of 0 mm2, a density
     * of infinity) is not a design. */
    static const char *const keys[] = {"compute_mm2_per_TOPS", "l2_mm2_per_MiB",
                                       "hbm_phy_mm2_per_stack", "link_phy_mm2_per_link"};
    const double coeffs[] = {p->compute_mm2_per_flop_per_s, p->l2_mm2_per_byte,
                             p->hbm_phy_mm2_per_stack, p->link_phy_mm2_per_link};
    for (size_t i = 0; i < PM_ARRAY_LEN(coeffs); i++)
        if (!(coeffs[i] > 0) || !isfinite(coeffs[i]))
            return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.area",
                           "%s must be finite and > 0 (got %g in SI units)", keys[i], coeffs[i]);
    const double spare = l2_spare(p);
    if (!(spare >= 1.0 && isfinite(spare)))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.area.l2_on_die_frac",
                       "the die's L2 must hold at least the enabled capacity (got %g of it)",
                       p->l2_die_frac);
    if (p->hbm_stacks < 0 || p->links < 0)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.area",
                       "hbm_stacks and links must be >= 0 (got %d and %d)", p->hbm_stacks,
                       p->links);
    if (!(p->other_mm2 >= 0) || !isfinite(p->other_mm2))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.area.other_mm2",
                       "must be finite and >= 0 (got %g)", p->other_mm2);
    if (p->io_dies < 0 || p->compute_dies < 0 || (int)p->io_holds < 0 ||
        p->io_holds >= PM_IO_HOLDS_COUNT || !(p->io_other_mm2 >= 0) || !isfinite(p->io_other_mm2))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.area",
                       "compute_dies, io_dies and io_other_mm2 must be >= 0 and io_holds one "
                       "of the pm_io_holds values");
    if (p->io_dies == 0 && p->io_other_mm2 > 0)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.accelerator.area.io_other_mm2",
                       "%g mm2 of I/O die on a package with no I/O dies (io_dies 0)",
                       p->io_other_mm2);
    if (p->io_dies == 0 && p->compute_on_io)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.accelerator.area.compute_on_io",
                       "compute dies stacked on I/O dies, on a package with none (io_dies 0)");
    return PM_OK;
}

/* (internal.h) */
void pm_area_of(const pm_accelerator *a, pm_area *out)
{
    const pm_area_params *p = &a->area;
    out->compute_mm2 = p->compute_mm2_per_flop_per_s * pm_int8_equivalent_peak(a);
    out->l2_mm2 = p->l2_mm2_per_byte * a->l2_capacity_bytes * l2_spare(p);
    out->hbm_phy_mm2 = p->hbm_phy_mm2_per_stack * p->hbm_stacks;
    out->link_phy_mm2 = p->link_phy_mm2_per_link * p->links;
    out->other_mm2 = p->other_mm2;
    out->io_other_mm2 = p->io_dies > 0 ? p->io_other_mm2 : 0.0;
    out->die_mm2 = out->compute_mm2 + out->l2_mm2 + out->hbm_phy_mm2 + out->link_phy_mm2 +
                   out->other_mm2 + out->io_other_mm2;
    /* The package: the I/O dies hold the links, then the HBM PHYs, then the L2 (the order in
     * which the parts built leave the compute die); the compute dies the rest. */
    double io = 0.0;
    if (p->io_dies > 0) {
        io = out->link_phy_mm2 + out->io_other_mm2;
        if (p->io_holds >= PM_IO_LINKS_HBM)
            io += out->hbm_phy_mm2;
        if (p->io_holds >= PM_IO_LINKS_HBM_L2)
            io += out->l2_mm2;
    }
    /* Stacked, the compute dies sit on the I/O dies: silicon under each of them, the I/O dies
     * built to it where their blocks are smaller (MI300X: two XCDs on each IOD). */
    const double compute = out->die_mm2 - io;
    if (p->io_dies > 0 && p->compute_on_io && io < compute) {
        out->io_other_mm2 += compute - io;
        out->die_mm2 += compute - io;
        io = compute;
    }
    out->compute_dies = p->compute_dies > 1 ? p->compute_dies : 1;
    out->io_dies = p->io_dies;
    out->compute_die_mm2 = compute / out->compute_dies;
    out->io_die_mm2 = p->io_dies > 0 ? io / p->io_dies : 0.0;
}

pm_status pm_area_compute(const pm_accelerator *a, pm_area *out, pm_error *err)
{
    if (!a || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL accelerator or output");
    *out = (pm_area){0};
    const pm_status st = pm_area_check(a, err);
    if (st == PM_OK)
        pm_area_of(a, out);
    return st;
}

static const char *const holds_names[PM_IO_HOLDS_COUNT] = {"links", "links_and_hbm_phy",
                                                           "links_hbm_phy_and_l2"};

const char *pm_io_holds_name(pm_io_holds h)
{
    return (int)h >= 0 && h < PM_IO_HOLDS_COUNT ? holds_names[h] : "?";
}

const char *const *pm_io_holds_names(size_t *count)
{
    *count = PM_ARRAY_LEN(holds_names);
    return holds_names;
}

int pm_dies_per_package(const pm_area *area)
{
    return area->compute_dies + area->io_dies;
}

double pm_largest_die_mm2(const pm_area *area)
{
    return area->io_die_mm2 > area->compute_die_mm2 ? area->io_die_mm2 : area->compute_die_mm2;
}

const char *pm_largest_die_name(const pm_area *area)
{
    if (area->io_dies > 0 && area->io_die_mm2 > area->compute_die_mm2)
        return "I/O die";
    return area->compute_dies > 1 || area->io_dies > 0 ? "compute die" : "die";
}

bool pm_die_over_reticle_named(const pm_accelerator *a, double *per_die_mm2, const char **name)
{
    pm_area area;
    double per_die = 0.0;
    const char *which = "die";
    if (a && a->area.present && pm_area_compute(a, &area, NULL) == PM_OK) {
        per_die = pm_largest_die_mm2(&area);
        which = pm_largest_die_name(&area);
    }
    if (per_die_mm2)
        *per_die_mm2 = per_die;
    if (name)
        *name = which;
    return per_die > PM_RETICLE_MM2;
}

bool pm_die_over_reticle(const pm_accelerator *a, double *per_die_mm2)
{
    return pm_die_over_reticle_named(a, per_die_mm2, NULL);
}

double pm_density(const pm_estimate *e, pm_mode mode, int devices, double die_mm2)
{
    if (!e || (int)mode < 0 || mode >= PM_MODE_COUNT || devices < 1 || !(die_mm2 > 0))
        return 0.0;
    return e->modes[mode].tokens_per_s / ((double)devices * die_mm2);
}
