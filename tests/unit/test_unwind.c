/* test_unwind.c: the native stack of a stopped tracee.  A child calls
 * vg_test_mid_function -> vg_test_leaf_function, which stops itself under
 * ptrace; the unwound stack must name both functions in that order, with
 * this test binary as their module.  Also measures the cost of an unwind. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracer/unwind.h"
#include "util/util.h"
#include "tests/unit/check.h"

/* volatile sink and noinline: the calls must stay real calls, not be
 * inlined or turned into tail jumps, at any optimization level. */
static volatile int sink;

__attribute__((noinline)) void vg_test_leaf_function(void)
{
    raise(SIGSTOP);
    sink++;
}

__attribute__((noinline)) void vg_test_mid_function(void)
{
    vg_test_leaf_function();
    sink++;
}

static pid_t start_child(void)
{
    return check_traced_child(vg_test_mid_function);
}

static int find(const struct vg_frame *f, unsigned n, const char *sym)
{
    for (unsigned i = 0; i < n; i++)
        if (f[i].symbol && strcmp(f[i].symbol, sym) == 0)
            return (int)i;
    return -1;
}

static void test_stack(struct vg_unwinder *u, pid_t pid)
{
    struct vg_frame frames[VG_STACK_MAX];
    struct vg_arena arena = { .n = 0 };
    unsigned n = vg_unwind(u, pid, pid, frames, VG_STACK_MAX, &arena);
    int leaf = find(frames, n, "vg_test_leaf_function");
    int mid = find(frames, n, "vg_test_mid_function");
    CHECK(n >= 3);
    CHECK(leaf >= 0 && mid == leaf + 1);
    CHECK(find(frames, n, "main") > mid);
    char self[4096];
    ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[l > 0 ? l : 0] = '\0';
    if (leaf >= 0) {
        CHECK_STR(frames[leaf].module, self);
        CHECK(frames[leaf].offset > 0 && frames[leaf].pc != 0);
    }
    if (check_failed)
        for (unsigned i = 0; i < n; i++)
            fprintf(stderr, "  #%u %#llx %s+%llu %s\n", i, (unsigned long long)frames[i].pc,
                    frames[i].symbol ? frames[i].symbol : "?",
                    (unsigned long long)frames[i].offset,
                    frames[i].module ? frames[i].module : "?");
    CHECK(vg_unwind(u, pid, pid, frames, 2, &arena) == 2);   /* depth cap */
    vg_arena_free(&arena);
}

static void measure(struct vg_unwinder *u, pid_t pid)
{
    enum { N = 200 };
    struct vg_frame frames[VG_STACK_MAX];
    uint64_t t0 = vg_now_mono_ns();
    unsigned total = 0;
    for (int i = 0; i < N; i++) {
        struct vg_arena arena = { .n = 0 };
        total += vg_unwind(u, pid, pid, frames, VG_STACK_MAX, &arena);
        vg_arena_free(&arena);
    }
    uint64_t dt = vg_now_mono_ns() - t0;
    printf("unwind: %.1f us per stack of %u frames (warm caches)\n",
           (double)dt / N / 1000.0, total / N);
    CHECK(total > 0);
}

int main(void)
{
    pid_t pid = start_child();
    struct vg_unwinder *u = vg_unwinder_new();
    CHECK(u != NULL);
    uint64_t t0 = vg_now_mono_ns();
    test_stack(u, pid);
    printf("unwind: %.1f us for the first stack (cold caches)\n",
           (double)(vg_now_mono_ns() - t0) / 1000.0);
    measure(u, pid);
    vg_unwinder_forget(u, pid);
    test_stack(u, pid);         /* still works after the caches are dropped */
    vg_unwinder_free(u);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return check_done();
}
