/*
 * read_spec.c - pm_read_speculation: a scenario's "speculative" block (issue 45) into
 * pm_speculation: the drafted tokens, their acceptance (one rate, or an array of one per
 * drafted position), the method ("draft_model" or "mtp"), the MTP layers, and the source of
 * the rates. The draft model itself is resolved by data.c like any model component; what the
 * fields mean together is check.c's (pm_spec_check).
 *
 * May call: error.c, json.c, text.c.
 */
#include <stdlib.h>
#include <string.h>

#include "read.h"

/* [0, 1): an acceptance rate (1 would accept every draft forever). */
static const pm_range ACCEPT_RANGE = {0.0, 1.0, false, true};

/* "acceptance" as a string of rates separated by commas ("0.8,0.6": an override's or the
 * tool's --spec-accept, which cannot write an array). */
static pm_status read_acceptance_list(pm_obj *o, const char *text, pm_speculation *out)
{
    pm_obj_declare(o, "acceptance", PM_DIM_NONE);
    int n = 0;
    for (const char *p = text;; n++) {
        char *end;
        const double a = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\0'))
            return pm_obj_fail(o, "acceptance", PM_ERR_TYPE,
                               "expected a rate in [0, 1), an array of them, or rates separated "
                               "by commas (got \"%s\")",
                               text);
        if (n >= PM_MAX_SPEC_TOKENS)
            return pm_obj_fail(o, "acceptance", PM_ERR_RANGE, "more than %d rates",
                               PM_MAX_SPEC_TOKENS);
        if (!(a >= 0.0 && a < 1.0))
            return pm_obj_fail(o, "acceptance", PM_ERR_RANGE,
                               "position %d: a rate must be in [0, 1) (got %g)", n + 1, a);
        out->acceptance[n] = a;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    out->n_acceptance = n + 1;
    return PM_OK;
}

/* "acceptance": a number, or an array of 1 .. PM_MAX_SPEC_TOKENS numbers (required: with
 * drafted tokens; none read: n_acceptance 0). */
static pm_status read_acceptance(pm_obj *o, bool required, pm_speculation *out)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o->json, "acceptance");
    if (cJSON_IsString(a))
        return read_acceptance_list(o, a->valuestring, out);
    if (!cJSON_IsArray(a)) {
        const pm_status st = pm_obj_number(o, "acceptance", required, ACCEPT_RANGE,
                                           &out->acceptance[0]);
        out->n_acceptance = st == PM_OK && a ? 1 : 0;
        return st;
    }
    pm_obj_declare(o, "acceptance", PM_DIM_NONE);
    const int n = cJSON_GetArraySize(a);
    if (n < 1 || n > PM_MAX_SPEC_TOKENS)
        return pm_obj_fail(o, "acceptance", PM_ERR_RANGE,
                           "expected 1 to %d rates, one per drafted position (got %d)",
                           PM_MAX_SPEC_TOKENS, n);
    int i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e))
            return pm_obj_fail(o, "acceptance", PM_ERR_TYPE,
                               "position %d: expected a number in [0, 1) (got %s)", i + 1,
                               pm_json_type_name(e));
        if (!(e->valuedouble >= 0.0 && e->valuedouble < 1.0))
            return pm_obj_fail(o, "acceptance", PM_ERR_RANGE,
                               "position %d: a rate must be in [0, 1) (got %g)", i + 1,
                               e->valuedouble);
        out->acceptance[i] = e->valuedouble;
    }
    out->n_acceptance = n;
    return PM_OK;
}

pm_status pm_read_speculation(pm_obj *o, pm_speculation *out)
{
    static const char *const methods[PM_SPEC_METHOD_COUNT] = {"draft_model", "mtp"};
    memset(out, 0, sizeof *out);
    pm_obj_declare(o, "draft_model", PM_DIM_NONE); /* data.c resolves it */
    long k = 0, layers = 0;
    int method = PM_SPEC_DRAFT_MODEL;
    const char *source = NULL;
    pm_status st = pm_obj_int(o, "draft_tokens", true, 0, PM_MAX_SPEC_TOKENS, &k);
    /* draft_tokens 0 turns speculation off (--spec-tokens 0 on a scenario with or without a
     * block): the other keys are then optional, and checked where given. */
    const bool on = k > 0;
    if (st == PM_OK)
        st = read_acceptance(o, on, out);
    if (st == PM_OK)
        st = pm_obj_enum(o, "method", on, methods, PM_SPEC_METHOD_COUNT, &method);
    if (st == PM_OK)
        st = pm_obj_int(o, "mtp_layers", on && method == PM_SPEC_MTP, 1, 64, &layers);
    if (st == PM_OK)
        st = pm_obj_string(o, "source", on, &source);
    if (st == PM_OK)
        st = pm_obj_finish(o);
    if (st != PM_OK)
        return st;
    if (method == PM_SPEC_MTP && cJSON_GetObjectItemCaseSensitive(o->json, "draft_model"))
        return pm_obj_fail(o, "draft_model", PM_ERR_INCONSISTENT,
                           "given with method \"mtp\": MTP heads draft with the target's "
                           "own layers");
    if (method == PM_SPEC_DRAFT_MODEL && layers > 0)
        return pm_obj_fail(o, "mtp_layers", PM_ERR_INCONSISTENT,
                           "given with method \"draft_model\": only MTP heads have layers");
    if (on && method == PM_SPEC_DRAFT_MODEL &&
        !cJSON_GetObjectItemCaseSensitive(o->json, "draft_model"))
        return pm_obj_fail(o, "draft_model", PM_ERR_MISSING,
                           "missing: method \"draft_model\" needs the draft model (a name, a "
                           "path or an object)");
    out->draft_tokens = (int)k;
    out->method = (pm_spec_method)method;
    out->mtp_layers = (int)layers;
    pm_strlcpy(out->source, source ? source : "", sizeof out->source);
    return PM_OK;
}
