/*
 * read_fields.c - the field rules every reader shares: a quantity read in its unit and checked
 * against the magnitudes the model is defined for (units.c), integers and their HuggingFace
 * aliases, a value recorded as defaulted, the first of several spellings present.
 *
 * May call: json.c, units.c.
 */
#include <math.h>
#include <string.h>

#include "read.h"

/* The number written under key c: plain, or the "value" of a sourced number. */
static double written_value(const cJSON *c)
{
    if (cJSON_IsObject(c))
        c = cJSON_GetObjectItemCaseSensitive(c, "value");
    return cJSON_IsNumber(c) ? c->valuedouble : NAN;
}

/* pm_obj_quantity, then the magnitude check, failing at the key the value was written under
 * and in its unit, so that "5e-324 GBps" is answered in GBps. The written value is checked too:
 * 5e-324 us is 0 s once converted, but nobody writes a zero that way. */
pm_status pm_read_quantity(pm_obj *o, const char *base, pm_dimension dim, bool required,
                           pm_range r, double *out)
{
    double v = -INFINITY; /* every range used here excludes it: still there means "absent" */
    pm_status st = pm_obj_quantity(o, base, dim, required, r, &v);
    if (st != PM_OK || (isinf(v) && v < 0))
        return st;
    double lo, hi;
    const bool bounded = pm_magnitude_range(dim, &lo, &hi);
    for (const cJSON *c = o->json->child; bounded && c; c = c->next) {
        char b[128];
        const char *unit = NULL;
        double f = 1.0;
        if (!pm_unit_split_key(c->string, b, sizeof b, &unit) || strcmp(b, base) != 0 ||
            !pm_unit_lookup(unit, &f, NULL))
            continue;
        double written = written_value(c);
        if (pm_magnitude_ok(v, dim) && (fabs(v) > 0.0 || !(fabs(written) > 0.0)))
            break;
        return pm_obj_fail(o, c->string, PM_ERR_RANGE,
                           "must be %sin [%g, %g] %s, the range the model is defined for "
                           "(got %g)",
                           r.lo_open ? "" : "0 or ", lo / f, hi / f, unit, written);
    }
    *out = v;
    return PM_OK;
}

pm_status pm_read_int(pm_obj *o, const char *key, bool required, long lo, long hi, int *out)
{
    long v = *out;
    pm_status st = pm_obj_int(o, key, required, lo, hi, &v);
    if (st == PM_OK)
        *out = (int)v;
    return st;
}

/* HuggingFace spells some fields differently per family: try the aliases in order. */
pm_status pm_read_int_alias(pm_obj *o, const char *const *keys, size_t n, bool required, int *out)
{
    for (size_t i = 0; i < n; i++)
        pm_obj_declare(o, keys[i], PM_DIM_NONE);
    const char *key = NULL;
    pm_status st = pm_first_alias(o, keys, n, &key);
    if (st != PM_OK)
        return st;
    if (key)
        return pm_read_int(o, key, true, 1, PM_MAX_MODEL_DIM, out);
    if (required)
        return pm_read_int(o, keys[0], true, 1, PM_MAX_MODEL_DIM, out);
    return PM_OK;
}

bool pm_in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n && s; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

const char *pm_json_string(const cJSON *obj, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* Records a value the model uses that the file did not give. */
pm_status pm_read_note(pm_obj *o, const char *key, double v, const char *origin,
                       const char *why)
{
    return pm_obj_record(o, key, v, "1", why, origin);
}

/* An optional quantity: read into *out when the file gives it (under any unit), else *out is
 * left as it is (0: the fallback the struct documents) and the value that stands in for it,
 * dflt in unit_si, is recorded as defaulted under key (the documented spelling) with why. */
pm_status pm_read_optional_quantity(pm_obj *o, const char *base, pm_dimension dim, pm_range r,
                                    double *out, const char *key, double dflt,
                                    const char *unit_si, const char *why)
{
    double v = -INFINITY; /* quantity leaves it when the key is absent */
    pm_status st = pm_read_quantity(o, base, dim, false, r, &v);
    if (st != PM_OK)
        return st;
    if (!(isinf(v) && v < 0)) {
        *out = v;
        return PM_OK;
    }
    return pm_obj_record(o, key, dflt, unit_si, why, "defaulted");
}

/* The first of keys present (not null) in o, or NULL. */
const char *pm_first_present(const pm_obj *o, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(o->json, keys[i]);
        if (it && !cJSON_IsNull(it))
            return keys[i];
    }
    return NULL;
}

pm_status pm_first_alias(pm_obj *o, const char *const *keys, size_t n, const char **first_out)
{
    const cJSON *first = NULL;
    const char *first_key = NULL;
    for (size_t i = 0; i < n; i++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(o->json, keys[i]);
        if (!it || cJSON_IsNull(it))
            continue;
        if (!first) {
            first = it;
            first_key = keys[i];
            continue;
        }
        if (cJSON_Compare(first, it, true))
            continue;
        /* Named at the one an override wrote, where one did (else the later name). */
        const char *at = pm_obj_key_overridden(o, first_key) ? first_key : keys[i];
        if (cJSON_IsNumber(first) && cJSON_IsNumber(it))
            return pm_obj_fail(o, at, PM_ERR_INCONSISTENT,
                               "\"%s\" and \"%s\" are two names of one setting and disagree "
                               "(%g against %g): give one, or the same value",
                               first_key, keys[i], first->valuedouble, it->valuedouble);
        return pm_obj_fail(o, at, PM_ERR_INCONSISTENT,
                           "\"%s\" and \"%s\" are two names of one setting and disagree (a %s "
                           "against a %s): give one, or the same value",
                           first_key, keys[i], pm_json_type_name(first), pm_json_type_name(it));
    }
    *first_out = first_key;
    return PM_OK;
}
