/* check.h: the assertion helpers of the C unit tests.  Include once, from
 * the test's own file; each test binary ends with `return check_done();`,
 * which prints "N passed, M failed" and gives the exit status. */
#ifndef VG_TEST_CHECK_H
#define VG_TEST_CHECK_H
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Fork a child that asks to be traced, runs body (which must stop itself,
 * e.g. raise(SIGSTOP)) and exits; return its pid once it is stopped. */
static inline pid_t check_traced_child(void (*body)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        body();
        _exit(0);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
        fprintf(stderr, "child did not stop\n");
        exit(2);
    }
    return pid;
}

/* Remove a test's temporary tree (best effort, said on stderr). */
static inline void check_rmtree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
}

static inline int check_done(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}
#endif
