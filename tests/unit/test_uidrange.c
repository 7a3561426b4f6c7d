/* test_uidrange.c: launcher/uidrange.c, the host uids vigil serve and
 * vigil batch --uid-range hand out one per live run: the ranges accepted
 * and refused (with the flag and the text in the message), and that no
 * uid is handed twice while taken, every one comes back, and a full range
 * says so. */
#include "launcher/uidrange.h"
#include "tests/unit/check.h"

struct bad {
    const char *text, *words;
};

static const struct bad bad[] = {
    {"", "expected FIRST-LAST"},           {"2000", "expected FIRST-LAST"},
    {"2000-1999", "expected FIRST-LAST"},  {"999-2000", "from 1000 up"},
    {"2000-3000x", "expected FIRST-LAST"}, {"-5-10", "expected FIRST-LAST"},
    {"2000-4294967295", "expected FIRST-LAST"}, /* (uid_t)-1 is "no change" */
    {"100000-165536", "at most 65536 uids"},
};

static void refused(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vg_uid_range r;
        struct vg_err err = {0};
        CHECK(vg_uid_range_parse(&r, bad[i].text, "--uid-range", &err) < 0);
        CHECK(strstr(err.msg, bad[i].words) && strstr(err.msg, "--uid-range"));
        CHECK(r.busy == NULL && vg_uid_range_size(&r) == 0);
    }
}

static void handed_once(void)
{
    struct vg_uid_range r;
    struct vg_err err = {0};
    CHECK(vg_uid_range_parse(&r, "200000-200002", "--uid-range", &err) == 0);
    CHECK(vg_uid_range_size(&r) == 3);
    uid_t a = vg_uid_range_take(&r), b = vg_uid_range_take(&r), c = vg_uid_range_take(&r);
    CHECK(a != b && b != c && a != c);
    CHECK(a >= 200000 && a <= 200002 && b >= 200000 && b <= 200002 && c <= 200002);
    CHECK(vg_uid_range_take(&r) == VG_UIDS_NONE);
    vg_uid_range_give(&r, b);
    vg_uid_range_give(&r, 12345);           /* not the range's: nothing */
    CHECK(vg_uid_range_take(&r) == b);
    CHECK(vg_uid_range_take(&r) == VG_UIDS_NONE);
    vg_uid_range_free(&r);
    CHECK(vg_uid_range_size(&r) == 0 && vg_uid_range_take(&r) == 0); /* no range: 0 */
    CHECK(vg_uid_range_parse(&r, "4294967294-4294967294", "x", &err) == 0);
    CHECK(vg_uid_range_take(&r) == 4294967294u && vg_uid_range_take(&r) == VG_UIDS_NONE);
    vg_uid_range_free(&r);
}

int main(void)
{
    refused();
    handed_once();
    return check_done();
}
