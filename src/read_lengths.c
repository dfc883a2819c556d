/*
 * read_lengths.c - pm_lengths_read: a lengths file (data/lengths/, kind "lengths"), a served
 * workload's distribution of request lengths as data: its "classes", each a prompt
 * ("input_tokens"), an output ("output_tokens") and a share of the requests ("share", > 0; the
 * served workload normalises the shares), at most PM_MAX_LENGTH_CLASSES of them, and the
 * "source" the classes were drawn from (scripts/length-classes.py derives them from a trace).
 *
 * May call: error.c, json.c, text.c.
 */
#include <stdio.h>
#include <string.h>

#include "read.h"

/* Tokens a class's prompt or output may hold: the served workload's own bound (serve.c). */
#define LENGTHS_MAX_TOKENS 1099511627776L /* 2^40 */

static const pm_range SHARE_RANGE = {0.0, 1e12, true, false};

/* Element i of "classes" into c. */
static pm_status read_class(pm_obj *o, const cJSON *e, int i, pm_length_class *c)
{
    pm_obj k;
    pm_status st = pm_obj_element(o, "classes", i, e,
                                  "with input_tokens, output_tokens and share", &k);
    if (st != PM_OK)
        return st;
    long in = 0, out = 0;
    double share = 0.0;
    st = pm_obj_int(&k, "input_tokens", true, 1, LENGTHS_MAX_TOKENS, &in);
    if (st == PM_OK)
        st = pm_obj_int(&k, "output_tokens", true, 1, LENGTHS_MAX_TOKENS, &out);
    if (st == PM_OK)
        st = pm_obj_number(&k, "share", true, SHARE_RANGE, &share);
    if (st == PM_OK)
        st = pm_obj_finish(&k);
    if (st == PM_OK)
        *c = (pm_length_class){in, out, share};
    return st;
}

pm_status pm_lengths_read(pm_obj *o, pm_lengths *l)
{
    memset(l, 0, sizeof *l);
    const char *kind = NULL, *src = NULL;
    pm_status st = pm_obj_string(o, "kind", false, &kind);
    if (st != PM_OK)
        return st;
    if (kind && strcmp(kind, "lengths") != 0)
        return pm_obj_fail(o, "kind", PM_ERR_VALUE, "expected \"lengths\" here (got \"%s\")",
                           kind);
    if ((st = pm_obj_name(o, "name", true, l->name, sizeof l->name)) != PM_OK ||
        (st = pm_obj_string(o, "source", true, &src)) != PM_OK)
        return st;
    if (strlen(src) >= sizeof l->source)
        return pm_obj_fail(o, "source", PM_ERR_RANGE, "longer than %zu bytes",
                           sizeof l->source - 1);
    pm_strlcpy(l->source, src, sizeof l->source);
    pm_obj_declare(o, "description", PM_DIM_NONE);
    pm_obj_declare(o, "classes", PM_DIM_NONE);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o->json, "classes");
    if (!a)
        return pm_obj_fail(o, "classes", PM_ERR_MISSING,
                           "missing: an array of 1 to %d classes {input_tokens, output_tokens, "
                           "share}",
                           PM_MAX_LENGTH_CLASSES);
    const int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    if (n < 0)
        return pm_obj_fail(o, "classes", PM_ERR_TYPE, "expected an array of classes (got %s)",
                           pm_json_type_name(a));
    if (n < 1 || n > PM_MAX_LENGTH_CLASSES)
        return pm_obj_fail(o, "classes", PM_ERR_RANGE, "expected 1 to %d classes (got %d)",
                           PM_MAX_LENGTH_CLASSES, n);
    int i = 0;
    for (const cJSON *e = a->child; e && st == PM_OK; e = e->next, i++)
        st = read_class(o, e, i, &l->classes[i]);
    if (st != PM_OK)
        return st;
    l->n_classes = n;
    return pm_obj_finish(o);
}
