/* bench_decode.c: what decoding costs the supervisor per traced stop.
 *   bench_decode [N]
 * A child stops itself under ptrace; the parent decodes N made-up calls of
 * a few kinds with pointers into the child (set before fork, so the
 * addresses are the same there) and reports microseconds per decode:
 * absolute and relative opens (the common case), a path through symlinks,
 * an exec with a realistic environment, a connect (which also asks the
 * socket for its protocol). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "tracer/decode.h"

static char p_abs[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
static char p_rel[] = "build/tracer/decode.o";
static char p_link[] = "/lib64/ld-linux-x86-64.so.2";
static char a0[] = "python3", a1[] = "-c", a2[] = "print(1)";
static char *argv3[] = { a0, a1, a2, NULL };
static struct sockaddr_in sin;

static double per_call_us(struct vg_tracee *t, int nr, const uint64_t a[6], long n)
{
    uint64_t t0 = vg_now_mono_ns();
    for (long i = 0; i < n; i++) {
        struct vg_call c;
        vg_decode_call(t, nr, a, &c);
        vg_call_free(&c);
    }
    return (double)(vg_now_mono_ns() - t0) / (double)n / 1000.0;
}

#define P(x) ((uint64_t)(uintptr_t)(x))

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    extern char **environ;
    sin.sin_family = AF_INET;
    sin.sin_port = htons(443);
    inet_pton(AF_INET, "93.184.216.34", &sin.sin_addr);
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(socket(AF_INET, SOCK_STREAM, 0), 40) < 0)
            _exit(2);
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        raise(SIGSTOP);
        _exit(0);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
        fprintf(stderr, "bench_decode: child did not stop\n");
        return 1;
    }
    struct vg_tracee t = {.tid = pid, .pid = pid, .root_fd = open("/", O_PATH | O_DIRECTORY),
                          .ptrace_stopped = true};
    const struct { const char *what; int nr; uint64_t a[6]; } cases[] = {
        { "openat absolute", VG_NR_openat, { (uint64_t)AT_FDCWD, P(p_abs), O_RDONLY } },
        { "openat relative", VG_NR_openat, { (uint64_t)AT_FDCWD, P(p_rel), O_RDONLY } },
        { "open via symlinks", VG_NR_open, { P(p_link), O_RDONLY } },
        { "unlink", VG_NR_unlink, { P(p_abs) } },
        { "execve", VG_NR_execve, { P(p_abs), P(argv3), P(environ) } },
        { "connect", VG_NR_connect, { 40, P(&sin), sizeof(sin) } },
        { "ptrace (baseline)", VG_NR_ptrace, { 0 } },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long k = cases[i].nr == VG_NR_execve ? n / 10 : n;
        printf("%-18s %8.2f us per decode\n", cases[i].what,
               per_call_us(&t, cases[i].nr, cases[i].a, k));
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(t.root_fd);
    return 0;
}
