/*
 * fuzz_writers.c - the writers' escapes with their round-trip oracles (issue 13): a text
 * written as a JSON string (src/cli/output.c) parses back, with cJSON, to the same bytes; as a
 * CSV field, an RFC 4180 reader gives it back; as a node name in pm_graph_to_dot, the label
 * decodes to the name (control characters other than a line break dropped) and no quote ends it
 * early; a double formatted by fmt_g9 is printf's "%.9g" byte for byte.
 */
#include "fuzz_common.h"

#include <cjson/cJSON.h>

#include "fmt.h"
#include "output.h"

/* Reads one RFC 4180 field spanning all of text; NULL when text is not exactly one field. */
static char *csv_read_field(const char *text)
{
    const size_t n = strlen(text);
    char *out = malloc(n + 1);
    FZ_ASSERT(out, "malloc");
    size_t w = 0;
    if (text[0] != '"') {
        if (strpbrk(text, ",\"\r\n")) {
            free(out);
            return NULL;
        }
        memcpy(out, text, n + 1);
        return out;
    }
    size_t i = 1;
    for (;;) {
        if (text[i] == '\0') {
            free(out);
            return NULL; /* the quote never closed */
        }
        if (text[i] == '"') {
            if (text[i + 1] == '"') {
                out[w++] = '"';
                i += 2;
                continue;
            }
            break;
        }
        out[w++] = text[i++];
    }
    if (text[i + 1] != '\0') {
        free(out);
        return NULL; /* text after the closing quote */
    }
    out[w] = '\0';
    return out;
}

static void check_json(const char *text)
{
    sbuf b = {0};
    FZ_ASSERT(sbuf_json_string(&b, text), "out of memory");
    cJSON *j = cJSON_ParseWithLength(b.buf, b.len);
    FZ_ASSERT(j && cJSON_IsString(j), "not a JSON string: %s", b.buf);
    FZ_ASSERT(strcmp(j->valuestring, text) == 0, "'%s' came back as '%s'", text, j->valuestring);
    cJSON_Delete(j);
    sbuf_free(&b);
}

static void check_csv(const char *text, bool always)
{
    sbuf b = {0};
    FZ_ASSERT(sbuf_csv_field(&b, text, always), "out of memory");
    if (!b.buf) /* an empty unquoted field */
        FZ_ASSERT(!always && text[0] == '\0', "nothing written for '%s'", text);
    char *back = csv_read_field(b.buf ? b.buf : "");
    FZ_ASSERT(back, "not one CSV field: %s", b.buf);
    FZ_ASSERT(strcmp(back, text) == 0, "'%s' came back as '%s'", text, back);
    free(back);
    sbuf_free(&b);
}

static void check_dot(const char *text)
{
    pm_node node = {.kind = PM_NODE_MATMUL, .prefetch = -1, .consumer = -1, .trigger = -1,
                    .overflow = -1};
    pm_strlcpy(node.name, text, sizeof node.name);
    pm_graph *g = pm_graph_alloc();
    FZ_ASSERT(g, "out of memory");
    char *dot = NULL;
    if (pm_graph_add_node(g, &node, NULL) == PM_OK && pm_graph_to_dot(g, &dot, NULL) == PM_OK) {
        const char *p = strstr(dot, "[label=\"");
        FZ_ASSERT(p, "no label: %s", dot);
        p += 8;
        char label[256];
        size_t w = 0;
        for (; *p && *p != '"' && w + 1 < sizeof label; p++) {
            if (*p == '\\') {
                p++;
                FZ_ASSERT(*p, "a backslash ends the text");
                label[w++] = *p == 'n' ? '\n' : *p;
            } else {
                label[w++] = *p;
            }
        }
        label[w] = '\0';
        FZ_ASSERT(*p == '"' && strncmp(p, "\"];", 3) == 0, "the label ends early: %s", dot);
        char want[64];
        size_t k = 0;
        for (const unsigned char *q = (const unsigned char *)node.name; *q; q++)
            if (*q == '\n' || (*q >= 0x20 && *q != 0x7f))
                want[k++] = (char)*q;
        want[k] = '\0';
        char expect[128];
        snprintf(expect, sizeof expect, "%s\nMatMul ", want);
        FZ_ASSERT(strncmp(label, expect, strlen(expect)) == 0, "label '%s' for name '%s'", label,
                  node.name);
    }
    free(dot);
    pm_graph_free(g);
}

static void check_g9(const uint8_t *data, size_t size)
{
    double v;
    if (size < sizeof v)
        return;
    memcpy(&v, data, sizeof v);
    char mine[FMT_G9_MAX + 1], libc[64];
    const int n = fmt_g9(v, mine);
    mine[n] = '\0';
    snprintf(libc, sizeof libc, "%.9g", v);
    FZ_ASSERT(strcmp(mine, libc) == 0, "fmt_g9 '%s', printf '%s'", mine, libc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = fz_cstr(data + 1, size - 1);
    switch (data[0] % 4) {
    case 0: check_json(text); break;
    case 1: check_csv(text, data[0] & 4); break;
    case 2: check_dot(text); break;
    default: check_g9(data + 1, size - 1); break;
    }
    free(text);
    return 0;
}
