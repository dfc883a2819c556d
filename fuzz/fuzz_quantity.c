/*
 * fuzz_quantity.c - pm_quantity_parse ("192MiB", "1.6 TBps", "16k") and the unit-suffix
 * splitting of keys. The first byte picks the wanted dimension, the rest is the text. An
 * accepted quantity is finite and carries the wanted dimension's unit (or none). The same text as
 * a token count (pm_token_count_parse): finite when accepted, and without a trailing k, K, M or G
 * exactly what pm_quantity_parse reads for a count; with one, 1024 times (k), 1024^2 (M) or
 * 1024^3 (G) the number before it.
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
    double t = 0, q = 0;
    pm_error terr;
    const pm_status ts = pm_token_count_parse(text, &t, &terr);
    const size_t len = strlen(text);
    const char last = len ? text[len - 1] : '\0';
    const bool suffixed = len > 1 && (last == 'k' || last == 'K' || last == 'M' || last == 'G') &&
                          !isalpha((unsigned char)text[len - 2]);
    if (ts != PM_OK) {
        fz_check_error(ts, &terr, data + 1, size - 1);
    } else {
        FZ_ASSERT(isfinite(t), "'%s' read as the token count %g", text, t);
        if (!suffixed) {
            FZ_ASSERT(pm_quantity_parse(text, PM_DIM_NONE, &q, NULL) == PM_OK,
                      "'%s' is a token count but no count", text);
            FZ_ASSERT(!(q < t) && !(q > t), "'%s': token count %g, count %g", text, t, q);
        } else {
            char *num = fz_cstr((const uint8_t *)text, len - 1);
            const double f = last == 'M' ? 1048576.0 : last == 'G' ? 1073741824.0 : 1024.0;
            const double n = strtod(num, NULL);
            FZ_ASSERT(!(n * f < t) && !(n * f > t), "'%s': %g, not %g x %g", text, t, n, f);
            free(num);
        }
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
