/* check.h: the assertion helpers of the C unit tests.  Include once, from
 * the test's own file; each test binary ends with `return check_done();`,
 * which prints "N passed, M failed" and gives the exit status. */
#ifndef VG_TEST_CHECK_H
#define VG_TEST_CHECK_H
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

static inline bool check(bool ok, const char *what, const char *file, int line)
{
    if (ok)
        check_passed++;
    else {
        check_failed++;
        fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what);
    }
    return ok;
}

static inline bool streq(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

#define CHECK(cond) check((cond), #cond, __FILE__, __LINE__)
#define CHECK_STR(a, b) check(streq((a), (b)), #a " == " #b, __FILE__, __LINE__)

static inline int check_done(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}
#endif
