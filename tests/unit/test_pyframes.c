/* test_pyframes.c: the Python stack read from a real interpreter's memory
 * matches what the interpreter itself says.  A python child walks its own
 * frames (sys._getframe: co_filename, co_qualname, f_lineno, innermost
 * first), prints them, then blocks in read(2) on the same line; the test
 * reads the child's stack with vg_py_stack and compares, for the main
 * thread and for a second thread, on Debian's python3.11 and on each
 * other CPython installed (pyenv's 3.12 and 3.13, if present: 3.13 is
 * read through its _Py_DebugOffsets).  Also: the location-table decoder
 * on a hand-made table, a non-Python process has no Python stack, and
 * mangled ELF files and random location tables are read without harm
 * (run under ASan by `make sanitize`). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracer/py/elfsym.h"
#include "tracer/py/py_int.h"
#include "tracer/py/pyframes.h"
#include "util/util.h"
#include "tests/unit/check.h"

/* The child's script: f() -> C.m() -> g(), and g reports its stack (from
 * its own frame outwards) and blocks in read(2) on that same line; with "thread", g runs in a second thread. */
static const char script[] =
    "import os, sys, threading\n"
    "def report(fr):\n"
    "    out = []\n"
    "    while fr: out.append('%s|%s|%d' % (fr.f_code.co_filename, fr.f_code.co_qualname, fr.f_lineno)); fr = fr.f_back\n"
    "    return ('%d;' % threading.get_native_id() + ';'.join(out) + '\\n').encode()\n"
    "def g():\n"
    "    os.write(1, report(sys._getframe())); os.read(0, 1)\n"
    "class C:\n"
    "    def m(self):\n"
    "        g()\n"
    "def f():\n"
    "    C().m()\n"
    "if sys.argv[1] == 'thread':\n"
    "    t = threading.Thread(target=f); t.start(); t.join()\n"
    "else:\n"
    "    f()\n";

struct child {
    pid_t pid;
    int in, out;   /* its stdin (write end), its stdout (read end) */
};

static int start(const char *python, const char *mode, struct child *c)
{
    int pin[2], pout[2];
    if (pipe(pin) < 0 || pipe(pout) < 0)
        return -1;
    c->pid = fork();
    if (c->pid == 0) {
        dup2(pin[0], 0);
        dup2(pout[1], 1);
        execl(python, python, "-c", script, mode, (char *)NULL);
        _exit(127);
    }
    close(pin[0]);
    close(pout[1]);
    c->in = pin[1];
    c->out = pout[0];
    return c->pid > 0 ? 0 : -1;
}

static void stop(struct child *c)
{
    if (write(c->in, "x", 1) != 1)
        kill(c->pid, SIGKILL);
    close(c->in);
    close(c->out);
    waitpid(c->pid, NULL, 0);
}

/* Wait until thread tid of pid is blocked in read(2) (syscall 0). */
static bool blocked_in_read(pid_t pid, long tid)
{
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/%d/task/%ld/syscall", (int)pid, tid);
    for (int i = 0; i < 2000; i++) {
        int fd = open(path, O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (n > 1 && buf[0] == '0' && buf[1] == ' ')
            return true;
        usleep(1000);
    }
    return false;
}

/* Compare the child's own view ("tid;file|func|line;...") with ours. */
static void compare(char *expect, const struct vg_pyframe *f, uint32_t n, const char *python)
{
    char *save = NULL;
    strtok_r(expect, ";\n", &save);
    uint32_t i = 0;
    for (char *tok = strtok_r(NULL, ";\n", &save); tok; tok = strtok_r(NULL, ";\n", &save), i++) {
        char want[1200];
        if (i >= n) {
            fprintf(stderr, "%s: frame %u missing: %s\n", python, i, tok);
            CHECK(i < n);
            return;
        }
        snprintf(want, sizeof want, "%s|%s|%d", f[i].file, f[i].func, f[i].line);
        if (!CHECK_STR(want, tok))
            fprintf(stderr, "%s: frame %u: read %s, interpreter says %s\n", python, i, want, tok);
    }
    CHECK(i == n);
}

static void check_python(const char *python, const char *mode)
{
    if (access(python, X_OK) != 0) {
        printf("skip %s: not installed\n", python);
        return;
    }
    struct child c;
    if (!CHECK(start(python, mode, &c) == 0))
        return;
    char line[16384];
    ssize_t got = 0, r;
    while (got < (ssize_t)sizeof line - 1 && (r = read(c.out, line + got, sizeof line - 1 - got)) > 0) {
        got += r;
        if (memchr(line, '\n', (size_t)got))
            break;
    }
    line[got > 0 ? got : 0] = '\0';
    long tid = strtol(line, NULL, 10);
    if (CHECK(tid > 0) && CHECK(blocked_in_read(c.pid, tid))) {
        struct vg_pyframes *pf = vg_py_new();
        int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct vg_tracee tr = {.tid = (pid_t)tid, .pid = c.pid, .nspid = c.pid,
                               .nstid = (int32_t)tid, .root_fd = root};
        struct vg_pyframe f[VG_PY_STACK_MAX];
        struct vg_arena a = {0};
        bool trunc = true;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        uint32_t n = vg_py_stack(pf, &tr, 1, f, VG_PY_STACK_MAX, &trunc, &a);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        uint32_t n2 = vg_py_stack(pf, &tr, 1, f, VG_PY_STACK_MAX, &trunc, &a);
        struct timespec t2;
        clock_gettime(CLOCK_MONOTONIC, &t2);
        printf("%s %s: %u frames, first read %ld us, cached %ld us\n", python, mode, n,
               ((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec) / 1000,
               ((t2.tv_sec - t1.tv_sec) * 1000000000L + t2.tv_nsec - t1.tv_nsec) / 1000);
        CHECK(n == n2);
        CHECK(!trunc);
        CHECK(n >= 3);
        compare(line, f, n, python);
        /* a cap below the depth keeps the innermost frames and says so */
        n = vg_py_stack(pf, &tr, 1, f, 2, &trunc, &a);
        CHECK(n == 2 && trunc);
        CHECK_STR(n ? f[0].func : NULL, "g");
        vg_arena_free(&a);
        close(root);
        vg_py_free(pf);
    }
    stop(&c);
}

/* A C program (this test's own child, sleeping) is not Python. */
static void check_not_python(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        pause();
        _exit(0);
    }
    usleep(20000);
    struct vg_pyframes *pf = vg_py_new();
    int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct vg_tracee tr = {.tid = pid, .pid = pid, .nspid = pid, .nstid = pid, .root_fd = root};
    struct vg_pyframe f[4];
    struct vg_arena a = {0};
    bool trunc;
    CHECK(vg_py_stack(pf, &tr, 7, f, 4, &trunc, &a) == 0);
    CHECK(vg_py_runtime(pf, &tr, 7) == NULL);
    vg_py_free(pf);
    close(root);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Entries: [short form, 2 units, line +0] [one-line +2, 1 unit]
 * [no-columns, delta -1 as signed varint 3, 3 units] [none, 1 unit]. */
static void check_linetable(void)
{
    const uint8_t t[] = {0x80 | (0 << 3) | 1, 0x00,
                         0x80 | (12 << 3) | 0, 0x01, 0x02,
                         0x80 | (13 << 3) | 2, 0x03,
                         0x80 | (15 << 3) | 0};
    CHECK(vg_py_addr2line(t, sizeof t, 10, -2) == 10);
    CHECK(vg_py_addr2line(t, sizeof t, 10, 0) == 10);
    CHECK(vg_py_addr2line(t, sizeof t, 10, 2) == 10);
    CHECK(vg_py_addr2line(t, sizeof t, 10, 4) == 12);
    CHECK(vg_py_addr2line(t, sizeof t, 10, 6) == 11);
    CHECK(vg_py_addr2line(t, sizeof t, 10, 10) == 11);
    CHECK(vg_py_addr2line(t, sizeof t, 10, 12) == 0);   /* no location */
    CHECK(vg_py_addr2line(t, sizeof t, 10, 14) == 0);   /* past the table */
    const uint8_t bad[] = {0x01, 0x02};
    CHECK(vg_py_addr2line(bad, sizeof bad, 10, 0) == 0);
}

/* Debian's python3.11 with random bytes written over its headers and
 * tables: vg_elf_read must return (ok or not), never crash or hang. */
static void check_mangled_elf(void)
{
    size_t len = 0;
    char *orig = vg_read_file("/usr/bin/python3.11", 64u << 20, &len, NULL);
    if (!CHECK(orig && len > 65536))
        return;
    char path[] = "/tmp/vigil-test-elf-XXXXXX";
    int fd = mkstemp(path);
    if (!CHECK(fd >= 0))
        return;
    unlink(path);
    char *copy = malloc(len);
    srand(12);
    unsigned ok = 0;
    for (int round = 0; round < 200; round++) {
        memcpy(copy, orig, len);
        /* a few random places (tables, section headers), and on odd
         * rounds the ELF header too */
        for (int k = 0; k < 24; k++) {
            size_t at = round % 2 && k < 8 ? (size_t)(rand() % 64) : (size_t)rand() % len;
            copy[at] = (char)rand();
        }
        size_t cut = round % 10 == 0 ? (size_t)rand() % len : len; /* truncated files too */
        if (ftruncate(fd, 0) < 0 || pwrite(fd, copy, cut, 0) != (ssize_t)cut)
            break;
        struct vg_elfinfo info;
        ok += vg_elf_read(fd, &info) == 0;
    }
    printf("mangled ELF: %u of 200 still readable\n", ok);
    struct vg_elfinfo info;
    CHECK(pwrite(fd, orig, len, 0) == (ssize_t)len && vg_elf_read(fd, &info) == 0 &&
          info.sym[VG_PYSYM_RUNTIME] && info.sym[VG_PYSYM_VERSION]);
    close(fd);
    free(copy);
    free(orig);
}

static void check_random_tables(void)
{
    uint8_t t[512];
    srand(34);
    int bad = 0;
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)rand() % sizeof t;
        for (size_t i = 0; i < n; i++)
            t[i] = (uint8_t)rand();
        bad += vg_py_addr2line(t, n, 1, rand() % 2048) < 0;
    }
    CHECK(bad == 0);
}

int main(void)
{
    check_mangled_elf();
    check_random_tables();
    check_linetable();
    check_not_python();
    static const char *const pythons[] = {
        "/usr/bin/python3.11",
        "/root/.pyenv/versions/3.11.7/bin/python3.11",
        "/root/.pyenv/versions/3.12.1/bin/python3.12",
        "/root/.pyenv/versions/3.13.0/bin/python3.13",
    };
    if (!CHECK(access(pythons[0], X_OK) == 0))
        fprintf(stderr, "Debian's python3.11 is required\n");
    for (size_t i = 0; i < VG_ARRAY_LEN(pythons); i++) {
        check_python(pythons[i], "main");
        check_python(pythons[i], "thread");
    }
    return check_done();
}
