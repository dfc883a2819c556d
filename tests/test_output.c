/*
 * test_output.c - the tool's writers' machinery (src/cli/output.c, merge.c's digest): the JSON
 * and CSV escapes by hand, files that appear only when whole, and FNV-1a's published vectors.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "../src/cli/merge.h"
#include "../src/cli/output.h"

static void test_json_string_escapes_quotes_backslashes_and_controls(void **state)
{
    (void)state;
    sbuf b = {0};
    assert_true(sbuf_json_string(&b, "a\"b\\c\n\x01\x7f\xc3\xa9"));
    assert_string_equal(b.buf, "\"a\\\"b\\\\c\\u000a\\u0001\\u007f\xc3\xa9\"");
    sbuf_free(&b);
    assert_true(sbuf_json_string(&b, ""));
    assert_string_equal(b.buf, "\"\"");
    sbuf_free(&b);
}

static void test_csv_field_quotes_only_when_it_must(void **state)
{
    (void)state;
    static const char *const cases[][3] = {
        /* text, as written, as written when always quoted */
        {"plain", "plain", "\"plain\""},
        {"a,b", "\"a,b\"", "\"a,b\""},
        {"say \"hi\"", "\"say \"\"hi\"\"\"", "\"say \"\"hi\"\"\""},
        {"line\nbreak", "\"line\nbreak\"", "\"line\nbreak\""},
        {"cr\r", "\"cr\r\"", "\"cr\r\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int always = 0; always < 2; always++) {
            sbuf b = {0};
            assert_true(sbuf_csv_field(&b, cases[i][0], always));
            assert_string_equal(b.buf, cases[i][1 + always]);
            sbuf_free(&b);
        }
}

/* An output file is invisible until committed, and gone (temporary too) when aborted. */
static void test_out_file_appears_only_when_whole(void **state)
{
    (void)state;
    char dir[] = "/tmp/pm-test-output-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *path = str_printf("%s/out.csv", dir);
    out_file o;
    assert_true(out_file_open(&o, path));
    fputs("a,b\n", o.f);
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0); /* not there while it is written */
    assert_int_equal(out_file_commit(&o), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal((int)st.st_size, 4);
    assert_true(out_file_open(&o, path));
    char *tmp = str_printf("%s", o.tmp);
    fputs("partial", o.f);
    out_file_abort(&o);
    assert_int_not_equal(stat(tmp, &st), 0); /* the temporary file removed */
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal((int)st.st_size, 4); /* the whole file kept */
    unlink(path);
    rmdir(dir);
    free(tmp);
    free(path);
}

/* The FNV-1a 64-bit test vectors of the reference (Fowler, Noll, Vo): "" and "a", "foobar". */
static void test_fnv1a64_matches_the_reference_vectors(void **state)
{
    (void)state;
    assert_true(fnv1a64(FNV1A64_INIT, "", 0) == 0xcbf29ce484222325ull);
    assert_true(fnv1a64(FNV1A64_INIT, "a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(fnv1a64(FNV1A64_INIT, "foobar", 6) == 0x85944171f73967e8ull);
    /* Digesting in pieces is digesting the whole. */
    assert_true(fnv1a64(fnv1a64(FNV1A64_INIT, "foo", 3), "bar", 3) ==
                fnv1a64(FNV1A64_INIT, "foobar", 6));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_string_escapes_quotes_backslashes_and_controls),
        cmocka_unit_test(test_csv_field_quotes_only_when_it_must),
        cmocka_unit_test(test_out_file_appears_only_when_whole),
        cmocka_unit_test(test_fnv1a64_matches_the_reference_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
