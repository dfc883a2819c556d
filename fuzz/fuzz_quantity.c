/*
 * fuzz_quantity.c - pm_quantity_parse ("192MiB", "1.6 TBps", "16k") and the unit-suffix
 * splitting of keys. The first byte picks the wanted dimension, the rest is the text. An
 * accepted quantity is finite and carries the wanted dimension's unit (or none).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    pm_dimension want = (pm_dimension)(data[0] % (PM_DIM_FRACTION + 1));
    char *text = fz_cstr(data + 1, size - 1);
    double v = 0;
    pm_error err;
    pm_status st = pm_quantity_parse(text, want, &v, &err);
    if (st != PM_OK) {
        fz_check_error(st, &err, data + 1, size - 1);
        FZ_ASSERT(st == PM_ERR_RANGE || st == PM_ERR_UNIT, "status %s", pm_status_name(st));
    } else {
        FZ_ASSERT(isfinite(v), "'%s' parsed as %g", text, v);
    }
    /* The same text as a JSON key: the split must be a prefix plus a known unit. */
    char base[128];
    const char *unit = NULL;
    if (pm_unit_split_key(text, base, sizeof base, &unit)) {
        double f = 0;
        pm_dimension d;
        FZ_ASSERT(unit && pm_unit_lookup(unit, &f, &d), "split off an unknown unit");
        FZ_ASSERT(fz_pos(f), "unit %s has factor %g", unit, f);
        FZ_ASSERT(strlen(base) < sizeof base, "base not terminated");
    }
    free(text);
    return 0;
}
