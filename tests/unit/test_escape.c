/* test_escape.c: util/escape.c, the one way vigil shows a name from
 * outside, and the JSON writer's handling of what a terminal acts on. */
#include <wctype.h>

#include "check.h"
#include "util/escape.h"
#include "util/json.h"

/* Every hostile byte kind a candidate can put in a name. */
static const char hostile[] = "a\x1b]0;t\x07\x1b[2J\nvigil: ok\n\xe2\x80\xae\xff\x7f\xc2\x9b\x9b\"\\\tz";

static bool plain_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            return false;
    return true;
}

static void test_forms(void)
{
    struct vg_buf b = {0};
    vg_esc_puts(&b, hostile, VG_ESC_FIELD);
    CHECK_STR(b.data, "a\\x1b]0;t\\x07\\x1b[2J\\nvigil: ok\\n\\xe2\\x80\\xae\\xff\\x7f\\xc2\\x9b\\x9b"
                      "\\\"\\\\\\tz");
    CHECK(plain_ascii(b.data));
    b.len = 0;
    vg_esc_puts(&b, hostile, VG_ESC_TEXT); /* quotes and backslashes as they are */
    CHECK(strstr(b.data, "\\x9b\"\\\\tz") != NULL && plain_ascii(b.data));
    b.len = 0;
    vg_esc_puts(&b, NULL, VG_ESC_FIELD);
    CHECK_STR(b.data, "?");
    b.len = 0;
    vg_esc_put(&b, "a\0b", 3, VG_ESC_FIELD); /* a NUL inside a counted string */
    CHECK_STR(b.data, "a\\x00b");
    vg_buf_free(&b);
    char *d = vg_esc_dup("");
    CHECK_STR(d, "");
    free(d);
}

static void test_say(void)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    vg_say(f, "vigil: %s: %d", hostile, 7);
    fclose(f);
    /* one line, plain ASCII, ending with vigil's own newline */
    CHECK(n > 0 && out[n - 1] == '\n' && memchr(out, '\n', n) == out + n - 1);
    out[n - 1] = 0;
    CHECK(plain_ascii(out) && strstr(out, ": 7") != NULL);
    free(out);
}

static void test_json(void)
{
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_json_str(&j, "\xc2\x9b|\xe2\x80\xae|\xe2\x80\xa8|\xe2\x81\xa6|\xc3\xa9|\x1b");
    CHECK_STR(b.data, "\"\\u009b|\\u202e|\\u2028|\\u2066|\xc3\xa9|\\u001b\"");
    vg_buf_free(&b);
}

static void test_viewer_predicate(void)
{
    CHECK(vg_esc_wchar_shown(L'a', 1));
    CHECK(vg_esc_wchar_shown(0xe9, 1));
    CHECK(!vg_esc_wchar_shown(0x202e, 0));
    CHECK(!vg_esc_wchar_shown(0x202e, 1)); /* whatever width a locale says */
    CHECK(!vg_esc_wchar_shown(0x9b, 1));
    CHECK(!vg_esc_wchar_shown(0x1b, -1));
    CHECK(!vg_esc_wchar_shown(0x7f, 1));
    CHECK(!vg_esc_wchar_shown(0x200b, 0)); /* zero width space */
    CHECK(vg_esc_cp_unsafe(0x2029) && vg_esc_cp_unsafe(0x80) && !vg_esc_cp_unsafe(0xa0));
}

int main(void)
{
    test_forms();
    test_say();
    test_json();
    test_viewer_predicate();
    return check_done();
}
