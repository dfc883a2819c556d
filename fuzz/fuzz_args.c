/*
 * fuzz_args.c - the CLI's own argument parsers (src/cli/common.c, compiled in): the first byte
 * picks one, the rest is the option's text. Oracles: parse_count accepts only decimal text
 * and returns an integer in its bounds (digits only: exactly their value); parse_shard accepts
 * only "K/N" in digits with 1 <= K <= N <= SHARD_MAX, and K and N read back from the text; a
 * --sweep list accepted by pm_axis_parse has one value per comma-separated item and no empty
 * item; add_set keeps an override byte for byte or refuses it.
 */
#include "fuzz_common.h"

#include "cli.h"

/* The value of a text of digits only, or -1 when it is not (or exceeds 2^53). */
static double digits_value(const char *t)
{
    if (!*t)
        return -1;
    double v = 0;
    for (; *t; t++) {
        if (*t < '0' || *t > '9' || v > 9e15)
            return -1;
        v = v * 10 + (*t - '0');
    }
    return v;
}

static void check_count(const char *text)
{
    static const double bounds[][2] = {{1, 1048576}, {0, 4294967296.0}, {1, 16777216}, {0, 256}};
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
        int64_t v = -7;
        fz_quiet(true);
        const bool ok = parse_count("--fuzz", text, bounds[b][0], bounds[b][1], &v);
        fz_quiet(false);
        if (!ok)
            continue;
        FZ_ASSERT((text[0] >= '0' && text[0] <= '9') || text[0] == '.', "accepted '%s'", text);
        FZ_ASSERT(!(text[0] == '0' && (text[1] == 'x' || text[1] == 'X')), "hex '%s'", text);
        FZ_ASSERT((double)v >= bounds[b][0] && (double)v <= bounds[b][1], "%lld out of bounds",
                  (long long)v);
        const double d = digits_value(text);
        FZ_ASSERT(d < 0 || (double)v == d, "'%s' read as %lld", text, (long long)v);
    }
}

static void check_shard(const char *text)
{
    size_t k = 0, n = 0;
    if (!parse_shard(text, &k, &n))
        return;
    FZ_ASSERT(k >= 1 && k <= n && n <= SHARD_MAX, "'%s' gave %zu/%zu", text, k, n);
    const char *slash = strchr(text, '/');
    FZ_ASSERT(slash, "no slash in accepted '%s'", text);
    /* K as its own string, however long (leading zeros are decimal too). */
    char *kpart = strndup(text, (size_t)(slash - text));
    FZ_ASSERT(kpart, "strndup");
    FZ_ASSERT(digits_value(kpart) == (double)k && digits_value(slash + 1) == (double)n,
              "'%s' read as %zu/%zu", text, k, n);
    free(kpart);
}

static void check_list(const char *text)
{
    char *spec = malloc(strlen(text) + 8);
    FZ_ASSERT(spec, "malloc");
    sprintf(spec, "batch=%s", text);
    pm_axis ax;
    pm_error err;
    const bool is_list = !strchr(text, ':') && text[0];
    if (pm_axis_parse(spec, 100000, &ax, &err) == PM_OK) {
        if (is_list) {
            size_t items = 1;
            for (const char *q = text; *q; q++)
                items += *q == ',';
            FZ_ASSERT(ax.n_values == items, "%zu values from %zu items of '%s'", ax.n_values,
                      items, text);
            FZ_ASSERT(!strstr(text, ",,") && text[0] != ',' && text[strlen(text) - 1] != ',',
                      "an empty item accepted in '%s'", text);
        }
        pm_axis_release(&ax);
    } else {
        fz_check_error(err.status, &err, text, strlen(text));
    }
    free(spec);
}

static void check_set(const char *text)
{
    static cli c;
    cli_init(&c);
    fz_quiet(true);
    const bool ok = add_set(&c, NULL, text, 0);
    fz_quiet(false);
    if (!ok)
        return;
    FZ_ASSERT(c.n_sets == 1 && strcmp(c.sets[0], text) == 0, "override '%s' kept as '%s'", text,
              c.sets[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = fz_cstr(data + 1, size - 1);
    switch (data[0] % 4) {
    case 0: check_count(text); break;
    case 1: check_shard(text); break;
    case 2: check_list(text); break;
    default: check_set(text); break;
    }
    free(text);
    return 0;
}
