/*
 * provenance.c - the provenance list: for every number a scenario resolved, its JSON path, the
 * file it was written in, its SI value and unit (or, for a choice made by name, the name), and
 * the source the file cites for it. The
 * object reader (json.c) records into it; the list owns copies of all its strings.
 *
 * May call: alloc.c.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

static char *keep_string(pm_provenance *p, const char *s)
{
    if (!s)
        s = "";
    if (p->n_strings == p->cap_strings) {
        size_t cap = p->cap_strings ? p->cap_strings * 2 : 64;
        char **ns = pm_realloc(p->strings, cap * sizeof *ns);
        if (!ns)
            return NULL;
        p->strings = ns;
        p->cap_strings = cap;
    }
    size_t len = strlen(s);
    char *copy = pm_malloc(len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, len + 1);
    p->strings[p->n_strings++] = copy;
    return copy;
}

pm_status pm_provenance_add(pm_provenance *p, const char *path, const char *file, double value,
                            const char *unit_si, const char *source)
{
    return pm_provenance_add_origin(p, path, file, value, unit_si, source, "given");
}

pm_status pm_provenance_add_origin(pm_provenance *p, const char *path, const char *file,
                                   double value, const char *unit_si, const char *source,
                                   const char *origin)
{
    if (!p)
        return PM_OK;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        pm_param_info *ni = pm_realloc(p->items, cap * sizeof *ni);
        if (!ni)
            return PM_ERR_NOMEM;
        p->items = ni;
        p->cap = cap;
    }
    pm_param_info *it = &p->items[p->n];
    it->path = keep_string(p, path);
    it->file = keep_string(p, file);
    it->source = keep_string(p, source);
    it->unit_si = unit_si;
    it->value_si = value;
    it->origin = origin;
    it->value_text = NULL;
    if (!it->path || !it->file || !it->source)
        return PM_ERR_NOMEM;
    p->n++;
    return PM_OK;
}

pm_status pm_provenance_add_text(pm_provenance *p, const char *path, const char *file,
                                 const char *text, const char *source)
{
    if (!p)
        return PM_OK;
    pm_status st = pm_provenance_add_origin(p, path, file, NAN, "", source, "given");
    if (st != PM_OK)
        return st;
    pm_param_info *it = &p->items[p->n - 1];
    if (!(it->value_text = keep_string(p, text))) {
        p->n--;
        return PM_ERR_NOMEM;
    }
    return PM_OK;
}

void pm_provenance_free(pm_provenance *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_strings; i++)
        pm_free(p->strings[i]);
    pm_free(p->strings);
    pm_free(p->items);
    pm_free(p);
}
