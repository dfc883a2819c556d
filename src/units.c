/*
 * units.c - the one table that converts datasheet units to SI base units. JSON keys carry
 * their unit as a suffix ("hbm_bandwidth_TBps"); nothing else in the library knows a prefix.
 * Decimal prefixes are powers of 1000 and binary ones (Ki, Mi, Gi, Ti) powers of 1024.
 *
 * May call: alloc.c, error.c.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct unit_row {
    const char *name;
    pm_dimension dim;
    double to_si;
} unit_row;

#define KI 1024.0
#define MI (1024.0 * 1024.0)
#define GI (1024.0 * 1024.0 * 1024.0)
#define TI (1024.0 * 1024.0 * 1024.0 * 1024.0)

/* Sorted by strcmp (byte order: upper case before "_" before lower case) for bsearch;
 * tests/test_units.c looks every unit of every dimension up, which fails if a row is out of
 * order. */
static const unit_row units[] = {
    {"B", PM_DIM_BYTES, 1.0},
    {"Bps", PM_DIM_BANDWIDTH, 1.0},
    {"FLOPS", PM_DIM_COMPUTE, 1.0},
    {"GB", PM_DIM_BYTES, 1e9},
    {"GBps", PM_DIM_BANDWIDTH, 1e9},
    {"GFLOPS", PM_DIM_COMPUTE, 1e9},
    {"GOPS", PM_DIM_COMPUTE, 1e9},
    {"Gbps", PM_DIM_BANDWIDTH, 1e9 / 8},
    {"GiB", PM_DIM_BYTES, GI},
    {"GiBps", PM_DIM_BANDWIDTH, GI},
    {"J", PM_DIM_ENERGY, 1.0},
    {"KB", PM_DIM_BYTES, 1e3},
    {"KBps", PM_DIM_BANDWIDTH, 1e3},
    {"KiB", PM_DIM_BYTES, KI},
    {"MB", PM_DIM_BYTES, 1e6},
    {"MBps", PM_DIM_BANDWIDTH, 1e6},
    {"Mbps", PM_DIM_BANDWIDTH, 1e6 / 8},
    {"MiB", PM_DIM_BYTES, MI},
    {"OPS", PM_DIM_COMPUTE, 1.0},
    {"PFLOPS", PM_DIM_COMPUTE, 1e15},
    {"POPS", PM_DIM_COMPUTE, 1e15},
    {"TB", PM_DIM_BYTES, 1e12},
    {"TBps", PM_DIM_BANDWIDTH, 1e12},
    {"TFLOPS", PM_DIM_COMPUTE, 1e12},
    {"TOPS", PM_DIM_COMPUTE, 1e12},
    {"Tbps", PM_DIM_BANDWIDTH, 1e12 / 8},
    {"TiB", PM_DIM_BYTES, TI},
    {"W", PM_DIM_POWER, 1.0},
    {"W_per_mm2", PM_DIM_POWER_PER_AREA, 1.0},
    {"frac", PM_DIM_FRACTION, 1.0},
    {"kW", PM_DIM_POWER, 1e3},
    {"mm", PM_DIM_LENGTH_MM, 1.0},
    {"mm2", PM_DIM_AREA, 1.0},
    {"mm2_per_MB", PM_DIM_AREA_PER_BYTE, 1e-6},
    {"mm2_per_MiB", PM_DIM_AREA_PER_BYTE, 1.0 / MI},
    {"mm2_per_TFLOPS", PM_DIM_AREA_PER_COMPUTE, 1e-12},
    {"mm2_per_TOPS", PM_DIM_AREA_PER_COMPUTE, 1e-12},
    {"mm2_per_link", PM_DIM_AREA_PER_ITEM, 1.0},
    {"mm2_per_stack", PM_DIM_AREA_PER_ITEM, 1.0},
    {"ms", PM_DIM_TIME, 1e-3},
    {"nJ", PM_DIM_ENERGY, 1e-9},
    {"nm", PM_DIM_LENGTH, 1.0},
    {"ns", PM_DIM_TIME, 1e-9},
    {"pJ", PM_DIM_ENERGY, 1e-12},
    {"pJ_per_bit", PM_DIM_ENERGY_PER_BYTE, 8e-12},
    {"pJ_per_byte", PM_DIM_ENERGY_PER_BYTE, 1e-12},
    {"per_cm2", PM_DIM_PER_AREA, 1e-2},
    {"per_mm2", PM_DIM_PER_AREA, 1.0},
    {"s", PM_DIM_TIME, 1.0},
    {"us", PM_DIM_TIME, 1e-6},
    {"usd", PM_DIM_MONEY, 1.0},
    {"usd_per_GB", PM_DIM_MONEY_PER_BYTE, 1e-9},
    {"usd_per_GiB", PM_DIM_MONEY_PER_BYTE, 1.0 / GI},
};

bool pm_unit_lookup(const char *unit, double *to_si, pm_dimension *dim)
{
    if (!unit)
        return false;
    size_t lo = 0, hi = PM_ARRAY_LEN(units); /* binary search of the sorted table */
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(units[mid].name, unit);
        if (c == 0) {
            if (to_si)
                *to_si = units[mid].to_si;
            if (dim)
                *dim = units[mid].dim;
            return true;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

const char *pm_unit_names(pm_dimension dim)
{
    switch (dim) {
    case PM_DIM_BYTES: return "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";
    case PM_DIM_BANDWIDTH: return "Bps, KBps, MBps, GBps, TBps, GiBps, Mbps, Gbps, Tbps";
    case PM_DIM_TIME: return "s, ms, us, ns";
    case PM_DIM_COMPUTE: return "FLOPS, GFLOPS, TFLOPS, PFLOPS, OPS, GOPS, TOPS, POPS";
    case PM_DIM_AREA: return "mm2";
    case PM_DIM_AREA_PER_COMPUTE: return "mm2_per_TOPS, mm2_per_TFLOPS";
    case PM_DIM_AREA_PER_BYTE: return "mm2_per_MiB, mm2_per_MB";
    case PM_DIM_AREA_PER_ITEM: return "mm2_per_stack, mm2_per_link";
    case PM_DIM_LENGTH: return "nm";
    case PM_DIM_FRACTION: return "frac";
    case PM_DIM_ENERGY: return "pJ, nJ, J";
    case PM_DIM_ENERGY_PER_BYTE: return "pJ_per_bit, pJ_per_byte";
    case PM_DIM_POWER: return "W, kW";
    case PM_DIM_POWER_PER_AREA: return "W_per_mm2";
    case PM_DIM_MONEY: return "usd";
    case PM_DIM_MONEY_PER_BYTE: return "usd_per_GB, usd_per_GiB";
    case PM_DIM_PER_AREA: return "per_cm2, per_mm2";
    case PM_DIM_LENGTH_MM: return "mm";
    case PM_DIM_NONE: break;
    }
    return "(none)";
}

const char *pm_unit_si_name(pm_dimension dim)
{
    switch (dim) {
    case PM_DIM_BYTES: return "bytes";
    case PM_DIM_BANDWIDTH: return "bytes/s";
    case PM_DIM_TIME: return "s";
    case PM_DIM_COMPUTE: return "flop/s";
    case PM_DIM_AREA: return "mm2";
    case PM_DIM_AREA_PER_COMPUTE: return "mm2/(flop/s)";
    case PM_DIM_AREA_PER_BYTE: return "mm2/byte";
    case PM_DIM_AREA_PER_ITEM: return "mm2/item";
    case PM_DIM_LENGTH: return "nm";
    case PM_DIM_ENERGY: return "J";
    case PM_DIM_ENERGY_PER_BYTE: return "J/byte";
    case PM_DIM_POWER: return "W";
    case PM_DIM_POWER_PER_AREA: return "W/mm2";
    case PM_DIM_MONEY: return "usd";
    case PM_DIM_MONEY_PER_BYTE: return "usd/byte";
    case PM_DIM_PER_AREA: return "1/mm2";
    case PM_DIM_LENGTH_MM: return "mm";
    case PM_DIM_FRACTION:
    case PM_DIM_NONE: break;
    }
    return "1";
}

bool pm_unit_split_key(const char *key, char *base, size_t n, const char **unit)
{
    /* The longest suffix after an underscore that is a unit wins ("l2_mm2_per_MiB" -> l2). */
    for (const char *p = key; *p; p++) {
        if (*p != '_' || p == key)
            continue;
        if (pm_unit_lookup(p + 1, NULL, NULL)) {
            size_t len = (size_t)(p - key);
            if (base) {
                if (len >= n)
                    len = n - 1;
                memcpy(base, key, len);
                base[len] = '\0';
            }
            if (unit)
                *unit = p + 1;
            return true;
        }
    }
    return false;
}

pm_status pm_quantity_parse(const char *text, pm_dimension want, double *out, pm_error *err)
{
    if (!text || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL argument");
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v))
        return pm_fail(err, PM_ERR_RANGE, NULL, NULL, "expected a finite number, got '%s'", text);
    /* strtod flags both overflow and results too small for a normal double (5e-324). */
    if (errno == ERANGE)
        return pm_fail(err, PM_ERR_RANGE, NULL, NULL, "'%s' is out of the range of a double",
                       text);
    while (*end && isspace((unsigned char)*end))
        end++;
    if (!*end) {
        *out = v;
        return PM_OK;
    }
    if (want == PM_DIM_NONE || want == PM_DIM_FRACTION) {
        static const struct { const char *s; double f; } mult[] = {
            {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9},
            {"Ki", KI}, {"Mi", MI}, {"Gi", GI},
        };
        for (size_t i = 0; i < PM_ARRAY_LEN(mult); i++) {
            if (strcmp(end, mult[i].s) == 0) {
                /* "1e308Ki" is a finite number times a finite factor, and still infinite. */
                if (!isfinite(v * mult[i].f))
                    return pm_fail(err, PM_ERR_RANGE, NULL, NULL, "'%s' overflows", text);
                *out = v * mult[i].f;
                return PM_OK;
            }
        }
        return pm_fail(err, PM_ERR_UNIT, NULL, NULL,
                       "unknown multiplier '%s' in '%s' (expected k, M, G, Ki, Mi or Gi)", end,
                       text);
    }
    double f;
    pm_dimension d;
    if (!pm_unit_lookup(end, &f, &d) || d != want)
        return pm_fail(err, PM_ERR_UNIT, NULL, NULL, "unknown unit '%s' in '%s' (expected one of %s)",
                       end, text, pm_unit_names(want));
    if (!isfinite(v * f))
        return pm_fail(err, PM_ERR_RANGE, NULL, NULL, "'%s' overflows", text);
    *out = v * f;
    return PM_OK;
}

pm_status pm_token_count_parse(const char *text, double *out, pm_error *err)
{
    if (!text || !out)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "NULL argument");
    /* "16k" is read as "16Ki": a decimal multiplier of a token count is the binary one. */
    const size_t len = strlen(text);
    const char last = len > 1 ? text[len - 1] : '\0';
    if ((last == 'k' || last == 'K' || last == 'M' || last == 'G') &&
        !isalpha((unsigned char)text[len - 2])) {
        char *bin = pm_malloc(len + 2);
        if (!bin)
            return pm_fail(err, PM_ERR_NOMEM, NULL, NULL, "out of memory");
        memcpy(bin, text, len - 1);
        bin[len - 1] = last == 'k' ? 'K' : last;
        bin[len] = 'i';
        bin[len + 1] = '\0';
        pm_status st = pm_quantity_parse(bin, PM_DIM_NONE, out, err);
        pm_free(bin);
        if (st == PM_ERR_RANGE)
            return pm_fail(err, st, NULL, NULL, "'%s' is out of range", text);
        if (st != PM_OK)
            return pm_fail(err, st, NULL, NULL,
                           "expected a token count such as 4096, 16k or 1M (k = 1024), got '%s'",
                           text);
        return PM_OK;
    }
    return pm_quantity_parse(text, PM_DIM_NONE, out, err);
}

/*
 * The magnitudes the model is defined for, per dimension, in SI. They lie far outside any real
 * part (a kilobyte per second to an exabyte per second, a megaflop to a zettaflop per second),
 * and they exist so that every number the model derives stays a finite, positive double: times
 * are bytes / bandwidth and flop / peak summed over up to 2^62 layer-steps, so a denormal
 * bandwidth (5e-324 GBps) makes a time infinite, an infinite launch cost makes a speedup NaN, and
 * a bandwidth of 1e300 makes a time underflow to zero. Zero stays allowed where a key's own range
 * allows it (a launch cost of 0); every other value must lie in [lo, hi].
 */
typedef struct magnitude {
    pm_dimension dim;
    double lo, hi;
} magnitude;

static const magnitude magnitudes[] = {
    {PM_DIM_BYTES, 1.0, 1e18},                /* 1 B .. 1 EB */
    {PM_DIM_BANDWIDTH, 1e3, 1e18},            /* 1 kB/s .. 1 EB/s */
    {PM_DIM_TIME, 1e-12, 1e3},                /* 1 ps .. 1000 s */
    {PM_DIM_COMPUTE, 1e6, 1e21},              /* 1 Mflop/s .. 1 Zflop/s */
    {PM_DIM_AREA, 1e-6, 1e6},                 /* mm2 */
    {PM_DIM_AREA_PER_COMPUTE, 1e-30, 1e-6},   /* mm2 per flop/s: 1e-18 .. 1e6 mm2 per TOPS */
    {PM_DIM_AREA_PER_BYTE, 1e-30, 1.0},       /* mm2 per byte */
    {PM_DIM_AREA_PER_ITEM, 1e-6, 1e6},        /* mm2 per stack or link */
    {PM_DIM_LENGTH, 1e-3, 1e6},               /* process node, nm */
    {PM_DIM_ENERGY, 1e-18, 1e-6},             /* 1 aJ .. 1 uJ per operation */
    {PM_DIM_ENERGY_PER_BYTE, 1e-18, 1e-6},    /* 1 aJ .. 1 uJ per byte */
    {PM_DIM_POWER, 1e-3, 1e6},                /* 1 mW .. 1 MW */
    {PM_DIM_POWER_PER_AREA, 1e-9, 1e3},       /* W per mm2 */
    {PM_DIM_MONEY, 1e-3, 1e9},                /* usd */
    {PM_DIM_MONEY_PER_BYTE, 1e-18, 1e-3},     /* 1e-9 .. 1e6 usd per GB */
    {PM_DIM_PER_AREA, 1e-12, 1.0},            /* defects per mm2 */
    {PM_DIM_LENGTH_MM, 1.0, 1e4},             /* wafer diameter, mm */
};

bool pm_magnitude_range(pm_dimension dim, double *lo, double *hi)
{
    for (size_t i = 0; i < PM_ARRAY_LEN(magnitudes); i++)
        if (magnitudes[i].dim == dim) {
            *lo = magnitudes[i].lo;
            *hi = magnitudes[i].hi;
            return true;
        }
    return false; /* fractions and counts have their own ranges */
}

bool pm_magnitude_ok(double x, pm_dimension dim)
{
    double lo, hi;
    if (!pm_magnitude_range(dim, &lo, &hi))
        return isfinite(x);
    return (x >= lo && x <= hi) || fabs(x) <= 0.0;
}
