/* test_image_spec.c: image/spec.c as tables: the specs that parse and what
 * they give, and the ones refused with the error (FILE:LINE: problem) a
 * person would need to fix them; and how a spec argument is found. */
#include <stdlib.h>

#include "image/spec.h"
#include "tests/unit/check.h"

static void test_a_full_spec(void)
{
    const char *text = "# a spec\n"
                       "suite bookworm   # the codename\n"
                       "mirror file:///srv/debs trusted\n"
                       "variant apt\n"
                       "packages python3 python3-pytest\n"
                       "\n"
                       "packages gcc:amd64 make=4.3-4.1 libc6-dev\n"
                       "add files/x.py /opt//x.py\n"
                       "add run.sh /usr/local/bin/run\n";
    struct vg_spec s;
    struct vg_err err;
    if (!CHECK(vg_spec_parse("a.spec", text, strlen(text), &s, &err) == 0)) {
        fprintf(stderr, "  %s\n", err.msg);
        return;
    }
    CHECK_STR(s.suite, "bookworm");
    CHECK_STR(s.mirror, "file:///srv/debs");
    CHECK(s.trusted);
    CHECK_STR(s.variant, "apt");
    CHECK(s.npackages == 5);
    if (s.npackages == 5) {
        CHECK_STR(s.packages[0], "python3");
        CHECK_STR(s.packages[3], "make=4.3-4.1");
    }
    CHECK(s.nadds == 2);
    if (s.nadds == 2) {
        CHECK_STR(s.adds[0].src, "files/x.py");
        CHECK_STR(s.adds[0].dst, "opt/x.py");
        CHECK(s.adds[0].line == 8);
        CHECK_STR(s.adds[1].dst, "usr/local/bin/run");
    }
    vg_spec_free(&s);
}

static void test_defaults(void)
{
    const char *text = "suite bookworm";
    struct vg_spec s;
    struct vg_err err;
    CHECK(vg_spec_parse("b.spec", text, strlen(text), &s, &err) == 0);
    CHECK_STR(s.mirror, VG_SPEC_DEFAULT_MIRROR);
    CHECK_STR(s.variant, VG_SPEC_DEFAULT_VARIANT);
    CHECK(!s.trusted && s.npackages == 0 && s.nadds == 0);
    vg_spec_free(&s);
}

/* Each refused with exactly this message. */
static const struct {
    const char *text, *msg;
} bad[] = {
    {"", "x.spec:1: no 'suite' line (e.g. suite bookworm)"},
    {"# only a comment\n", "x.spec:1: no 'suite' line (e.g. suite bookworm)"},
    {"suite bookworm\nsuit bookworm\n",
     "x.spec:2: unknown keyword 'suit' (suite, mirror, variant, packages, add)"},
    {"suite bookworm\nsuite trixie\n", "x.spec:2: a second 'suite' line (line 1 set it)"},
    {"suite\n", "x.spec:1: 'suite' takes one name"},
    {"suite Bookworm\n", "x.spec:1: suite 'Bookworm': not a Debian suite name (bookworm, stable, ...)"},
    {"suite bookworm\nmirror ftp://x/debian\n",
     "x.spec:2: mirror 'ftp://x/debian': not an http://, https:// or file:/// URL"},
    {"suite bookworm\nmirror http://x/[trusted=yes]\n",
     "x.spec:2: mirror 'http://x/[trusted=yes]': not an http://, https:// or file:/// URL"},
    {"suite bookworm\nmirror http://x/ unsigned\n",
     "x.spec:2: after the mirror's URL only 'trusted' (apt checks no signature)"},
    {"suite bookworm\nvariant tiny\n",
     "x.spec:2: variant 'tiny': not one of essential, apt, required, minbase, buildd, "
     "important, standard, extract"},
    {"suite bookworm\npackages\n", "x.spec:2: 'packages' takes one or more package names"},
    {"suite bookworm\npackages --download-only\n",
     "x.spec:2: '--download-only': not a Debian package name (lowercase letters, digits, "
     "+ - .; NAME=VERSION pins a version)"},
    {"suite bookworm\npackages a,b\n",
     "x.spec:2: 'a,b': not a Debian package name (lowercase letters, digits, + - .; "
     "NAME=VERSION pins a version)"},
    {"suite bookworm\npackages make=\n",
     "x.spec:2: 'make=': not a Debian package name (lowercase letters, digits, + - .; "
     "NAME=VERSION pins a version)"},
    {"suite bookworm\npackages gcc make\npackages gcc\n", "x.spec:3: package gcc is listed twice"},
    {"suite bookworm\nadd x\n",
     "x.spec:2: 'add' takes SRC (beside the spec) and DST (an absolute path in the image)"},
    {"suite bookworm\nadd /etc/passwd /x\n",
     "x.spec:2: add: source /etc/passwd must be relative to the spec's directory"},
    {"suite bookworm\nadd ../secret /x\n",
     "x.spec:2: add: source ../secret must not hold a \".\" or \"..\" component"},
    {"suite bookworm\nadd x opt/x\n", "x.spec:2: add: destination opt/x must be an absolute path in the image"},
    {"suite bookworm\nadd x /opt/../etc/x\n",
     "x.spec:2: add: destination /opt/../etc/x must not hold a \".\" or \"..\" component"},
    {"suite bookworm\nadd x /\n", "x.spec:2: add: destination / names the root, not a file"},
    {"suite bookworm\nadd x /opt/x\nadd y /opt//x\n", "x.spec:3: add: /opt/x is added twice (line 2)"},
};

static void test_refused(void)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(bad); i++) {
        struct vg_spec s;
        struct vg_err err = {{0}};
        int rc = vg_spec_parse("x.spec", bad[i].text, strlen(bad[i].text), &s, &err);
        if (!CHECK(rc < 0) || !CHECK_STR(err.msg, bad[i].msg))
            fprintf(stderr, "  %s\n  got: %s\n", bad[i].text, err.msg);
        CHECK(s.suite == NULL && s.npackages == 0); /* nothing half-made is left */
        vg_spec_free(&s);
    }
}

static void test_bytes(void)
{
    struct vg_spec s;
    struct vg_err err;
    const char nul[] = "suite bookworm\npackages a\0b\n";
    CHECK(vg_spec_parse("x.spec", nul, sizeof nul - 1, &s, &err) < 0);
    CHECK_STR(err.msg, "x.spec:2: NUL byte in the spec");
    size_t big = VG_SPEC_MAX_BYTES + 1;
    char *text = vg_xmalloc(big);
    memset(text, '#', big);
    CHECK(vg_spec_parse("x.spec", text, big, &s, &err) < 0);
    CHECK_STR(err.msg, "x.spec:1: larger than 65536 bytes: not a spec");
    free(text);
    /* CRLF lines and tabs are blanks */
    const char *crlf = "suite\tbookworm\r\npackages  make\r\n";
    CHECK(vg_spec_parse("x.spec", crlf, strlen(crlf), &s, &err) == 0 && s.npackages == 1 &&
          !strcmp(s.packages[0], "make"));
    vg_spec_free(&s);
}

static void test_find(void)
{
    struct vg_err err;
    char *p = vg_spec_find("./mine.spec", &err);
    CHECK_STR(p, "./mine.spec"); /* a path is taken as given */
    free(p);
    p = vg_spec_find("x.spec", &err);
    CHECK_STR(p, "x.spec");
    free(p);
    char dir[] = "/tmp/vigil-test-spec-XXXXXX";
    if (!CHECK(mkdtemp(dir) != NULL))
        return;
    char *file = vg_xasprintf("%s/tiny.spec", dir);
    FILE *f = fopen(file, "w");
    CHECK(f && fputs("suite bookworm\n", f) >= 0 && fclose(f) == 0);
    setenv("VIGIL_SPEC_DIR", dir, 1);
    p = vg_spec_find("tiny", &err);
    CHECK_STR(p, file);
    free(p);
    CHECK(vg_spec_find("nosuch", &err) == NULL);
    CHECK(strstr(err.msg, "spec 'nosuch': no such file, and no shipped spec of that name (") &&
          strstr(err.msg, "tiny"));
    unsetenv("VIGIL_SPEC_DIR");
    free(file);
    check_rmtree(dir);
}

int main(void)
{
    test_a_full_spec();
    test_defaults();
    test_refused();
    test_bytes();
    test_find();
    return check_done();
}
