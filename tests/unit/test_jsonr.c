/* test_jsonr.c: util/jsonr.c's reading of escaped NULs: refused by
 * default (a NUL would cut the C string a value becomes), read as U+FFFD
 * with VG_JV_NUL_AS_FFFD (vigil serve reading a result whose output tail
 * holds one), and what the flag does not change. */
#include "util/jsonr.h"
#include "tests/unit/check.h"

static void nul_refused(void)
{
    static const char text[] = "{\"tail\": \"a\\u0000b\", \"status\": \"ok\"}";
    struct vg_err err = {0};
    CHECK(vg_jv_parse(text, sizeof text - 1, &err) == NULL);
    CHECK(strstr(err.msg, "NUL in string") && strstr(err.msg, "byte "));
}

static void nul_as_replacement(void)
{
    static const char text[] = "{\"tail\": \"a\\u0000b\\\\u0000\", \"status\": \"ok\"}";
    struct vg_err err = {0};
    struct vg_jv *v = vg_jv_parse_flags(text, sizeof text - 1, VG_JV_NUL_AS_FFFD, &err);
    CHECK(v != NULL);
    if (!v)
        return;
    /* the escaped backslash before "u0000" stays text */
    CHECK_STR(vg_jv_str(v, "tail"), "a\xef\xbf\xbd" "b\\u0000");
    CHECK_STR(vg_jv_str(v, "status"), "ok");
    vg_jv_free(v);
}

static void other_errors_kept(void)
{
    static const char lone[] = "\"\\udc00\"", raw[] = "\"a\x01\"";
    struct vg_err err = {0};
    CHECK(vg_jv_parse_flags(lone, sizeof lone - 1, VG_JV_NUL_AS_FFFD, &err) == NULL);
    CHECK(strstr(err.msg, "unpaired surrogate") != NULL);
    CHECK(vg_jv_parse_flags(raw, sizeof raw - 1, VG_JV_NUL_AS_FFFD, &err) == NULL);
}

int main(void)
{
    nul_refused();
    nul_as_replacement();
    other_errors_kept();
    return check_done();
}
