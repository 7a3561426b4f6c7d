/* test_path.c: util/path.c, the one place "//", ".", ".." and a trailing
 * slash are given a meaning: the two strengths of normalising side by side
 * on the same inputs, the push/pop/lexical walk canon.c builds on (its
 * limit included) and the component splitter. */
#include <errno.h>

#include "check.h"
#include "util/path.h"
#include "util/util.h"

/* One input, what vg_path_normalize gives and what vg_path_squash gives. */
struct row {
    const char *in, *normalized, *squashed;
};

static const struct row rows[] = {
    {"", "/", ""},
    {"/", "/", "/"},
    {"//", "/", "/"},
    {"///", "/", "/"},
    {"//x", "/x", "/x"},
    {"/x//y///z", "/x/y/z", "/x/y/z"},
    {"/a/", "/a", "/a"},
    {"/a//", "/a", "/a"},
    {"a/", "/a", "a"},
    {"a", "/a", "a"},
    {"a/./b", "/a/b", "a/./b"},
    {"/a/./b/.", "/a/b", "/a/./b/."},
    {"./", "/", "."},
    {".", "/", "."},
    {"/.", "/", "/."},
    {"a/../..", "/", "a/../.."},
    {"/a/b/../c", "/a/c", "/a/b/../c"},
    {"/a/b/../../..", "/", "/a/b/../../.."},
    {"/..", "/", "/.."},
    {"/../a", "/a", "/../a"},
    {"/a/..", "/", "/a/.."},
    {"/a/../", "/", "/a/.."},
    {"/...", "/...", "/..."},         /* names that only look like dots */
    {"/.a/..b/a.", "/.a/..b/a.", "/.a/..b/a."},
    {"@abstract/sock/", "/@abstract/sock", "@abstract/sock"},
    {"/usr/**/", "/usr/**", "/usr/**"},
};

static void test_rows(void)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(rows); i++) {
        char *n = vg_path_normalize(rows[i].in);
        if (!CHECK_STR(n, rows[i].normalized))
            fprintf(stderr, "  normalize(\"%s\") = \"%s\"\n", rows[i].in, n);
        free(n);
        char *s = vg_xstrdup(rows[i].in);
        vg_path_squash(s);
        if (!CHECK_STR(s, rows[i].squashed))
            fprintf(stderr, "  squash(\"%s\") = \"%s\"\n", rows[i].in, s);
        free(s);
    }
}

/* A C path ends at its first NUL: what follows is never read as more of it. */
static void test_nul(void)
{
    static const char embedded[] = "/a/\0/../b";
    char *n = vg_path_normalize(embedded);
    CHECK_STR(n, "/a");
    free(n);
    char s[sizeof embedded];
    memcpy(s, embedded, sizeof embedded);
    vg_path_squash(s);
    CHECK_STR(s, "/a");
    CHECK(memcmp(s + sizeof "/a/", "/../b", sizeof "/../b") == 0); /* untouched */
}

/* Long paths: normalize allocates what it needs; the walk into a fixed
 * buffer refuses, with ENAMETOOLONG, what does not fit with its NUL. */
static void test_long(void)
{
    enum { DEPTH = 3000 };                /* components of "/x", 6000 bytes */
    struct vg_buf b = {0};
    for (int i = 0; i < DEPTH; i++)
        vg_buf_puts(&b, "//x/.");
    char *n = vg_path_normalize(b.data);
    CHECK(strlen(n) == 2 * DEPTH && strncmp(n, "/x/x", 4) == 0);
    free(n);
    vg_buf_puts(&b, "/..");
    n = vg_path_normalize(b.data);
    CHECK(strlen(n) == 2 * (DEPTH - 1));
    free(n);
    vg_buf_free(&b);

    char out[8];                          /* room for "/ab/cd" and its NUL */
    size_t len = 0;
    CHECK(vg_path_lexical(out, sizeof out, &len, "/ab/cd") == 0);
    CHECK_STR(out, "/ab/cd");
    CHECK(len == 6);
    errno = 0;
    CHECK(vg_path_push(out, sizeof out, &len, "e", 1) < 0 && errno == ENAMETOOLONG);
    CHECK_STR(out, "/ab/cd");             /* a refused push changes nothing */
    len = 0;
    out[0] = '\0';
    errno = 0;
    CHECK(vg_path_lexical(out, sizeof out, &len, "/abc/defg") < 0 && errno == ENAMETOOLONG);
    CHECK_STR(out, "/abc");               /* what fitted */
    len = 0;
    out[0] = '\0';
    CHECK(vg_path_lexical(out, sizeof out, &len, "/../de/fgh/..") == 0);
    CHECK_STR(out, "/de");                /* ".." past "/" stays at "/" */
}

/* canon.c's walk: the prefix "" is "/", lexical appends from where it is,
 * pop never climbs above "/". */
static void test_walk(void)
{
    char out[64] = "";
    size_t len = 0;
    vg_path_pop(out, &len);
    CHECK(len == 0 && out[0] == '\0');
    CHECK(vg_path_lexical(out, sizeof out, &len, "usr//lib/./") == 0);
    CHECK_STR(out, "/usr/lib");
    CHECK(vg_path_lexical(out, sizeof out, &len, "/python3/..//x") == 0);
    CHECK_STR(out, "/usr/lib/x");         /* a leading '/' does not reset it */
    CHECK(vg_path_push(out, sizeof out, &len, "..", 2) == 0); /* push takes any name */
    CHECK_STR(out, "/usr/lib/x/..");
    vg_path_pop(out, &len);
    vg_path_pop(out, &len);
    CHECK_STR(out, "/usr/lib");
    CHECK(len == strlen(out));
}

static void test_components(void)
{
    static const char *const want[] = {"a", ".", "..", "bc", "..."};
    const char *path = "//a/./..//bc/.../";
    size_t n, k = 0;
    for (const char *c = vg_path_comp(path, &n); c; c = vg_path_comp(c + n, &n), k++)
        CHECK(k < VG_ARRAY_LEN(want) && n == strlen(want[k]) && !strncmp(c, want[k], n));
    CHECK(k == VG_ARRAY_LEN(want));
    CHECK(vg_path_comp("", &n) == NULL && vg_path_comp("///", &n) == NULL);
    CHECK(vg_path_kind(".", 1) == VG_PATH_DOT);
    CHECK(vg_path_kind("..", 2) == VG_PATH_DOTDOT);
    CHECK(vg_path_kind("...", 3) == VG_PATH_NAME);
    CHECK(vg_path_kind(".a", 2) == VG_PATH_NAME);
    CHECK(vg_path_kind("..x", 2) == VG_PATH_DOTDOT); /* counted: only n bytes */
}

int main(void)
{
    test_rows();
    test_nul();
    test_long();
    test_walk();
    test_components();
    return check_done();
}
