/* test_canon.c: canonicalization inside a sandbox root.  A fake root in a
 * temp dir holds directories, absolute and relative symlinks, loops, and
 * links that try to climb out of it; every result must be the path as seen
 * from inside, and nothing may resolve through the host's filesystem.
 * Also: the cwd/fd readers, including a process behind pivot_root in its
 * own mount namespace and one in a chroot. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "tracer/canon.h"
#include "util/util.h"
#include "tests/unit/check.h"

static char tmpdir[] = "/tmp/test_canon.XXXXXX";
static int root_fd;

static void mk(const char *rel, bool dir)
{
    char *p = vg_xasprintf("%s/%s", tmpdir, rel);
    int r = dir ? mkdir(p, 0755) : close(open(p, O_CREAT | O_WRONLY, 0644));
    if (r < 0) {
        perror(p);
        exit(2);
    }
    free(p);
}

static void ln(const char *target, const char *rel)
{
    char *p = vg_xasprintf("%s/%s", tmpdir, rel);
    if (symlink(target, p) < 0) {
        perror(p);
        exit(2);
    }
    free(p);
}

static void build_root(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        exit(2);
    }
    mk("a", true);
    mk("a/b", true);
    mk("a/b/file", false);
    mk("etc", true);
    mk("etc/passwd", false);
    mk("proc", true);
    ln("/a/b", "abs");                     /* absolute */
    ln("a/b", "rel");                      /* relative */
    ln("../etc", "a/up");                  /* relative with .. */
    ln("loop2", "loop1");
    ln("loop1", "loop2");
    ln("/../../../etc/passwd", "escape");  /* absolute, climbing */
    ln("../../../../etc", "a/escape2");    /* relative, climbing */
    ln("/a/newfile", "dangling");
    ln("/a", "proc/self");                 /* not a procfs: an ordinary link */
    ln("/../../../../bin/ls", "hostbin");  /* /bin is a symlink on the host only */
    ln("b/file", "a/chain1");
    ln("chain1", "a/chain2");
    root_fd = open(tmpdir, O_PATH | O_DIRECTORY);
    if (root_fd < 0) {
        perror(tmpdir);
        exit(2);
    }
}

/* canon(base, path, follow) equals want (NULL: fails with errno want_errno). */
static void expect(const char *base, const char *path, bool follow,
                   const char *want, int want_errno)
{
    errno = 0;
    char *got = vg_canon(root_fd, base, path, follow);
    bool ok = want ? (got && strcmp(got, want) == 0) : (got == NULL && errno == want_errno);
    if (!check(ok, path, __FILE__, __LINE__))
        fprintf(stderr, "  vg_canon(%s, %s, %d) = %s (errno %d), want %s\n",
                base ? base : "NULL", path, follow, got ? got : "NULL", errno,
                want ? want : "NULL");
    free(got);
}

static void test_lexical(void)
{
    expect("/", "/", true, "/", 0);
    expect("/", "//a///b//", true, "/a/b", 0);
    expect("/", "/a/./b/.", true, "/a/b", 0);
    expect("/", "/a/b/file", true, "/a/b/file", 0);
    expect("/", "/../../etc/passwd", true, "/etc/passwd", 0);
    expect("/", "/..", true, "/", 0);
    expect("/a", "", true, "/a", 0);
    expect("/a", "b/file", true, "/a/b/file", 0);
    expect("/a/b", "../../abs/file", true, "/a/b/file", 0);
    expect("/a/b", "../../../../..", true, "/", 0);
}

static void test_symlinks(void)
{
    expect("/", "/abs/file", true, "/a/b/file", 0);
    expect("/", "/rel/file", true, "/a/b/file", 0);
    expect("/", "/a/up/passwd", true, "/etc/passwd", 0);
    expect("/", "/abs", true, "/a/b", 0);
    expect("/", "/abs", false, "/abs", 0);
    expect("/", "/abs/", false, "/a/b", 0);        /* trailing slash follows */
    expect("/", "/abs/..", true, "/a", 0);         /* .. after the link target */
    expect("/", "/a/chain2", true, "/a/b/file", 0);
    expect("/", "/a/chain2", false, "/a/chain2", 0);
    expect("/a", "chain2", true, "/a/b/file", 0);
}

static void test_escapes(void)
{
    expect("/", "/escape", true, "/etc/passwd", 0);
    expect("/", "/escape", false, "/escape", 0);
    expect("/", "/escape/..", true, "/etc", 0);
    expect("/", "/a/escape2/passwd", true, "/etc/passwd", 0);
    expect("/a/b", "../../../../../../etc/passwd", true, "/etc/passwd", 0);
    /* Through the host, /bin/ls would become /usr/bin/ls. */
    expect("/", "/hostbin", true, "/bin/ls", 0);
}

static void test_missing_loops_proc(void)
{
    expect("/", "/loop1", true, NULL, ELOOP);
    expect("/", "/loop1/x", false, NULL, ELOOP);
    expect("/", "/loop1", false, "/loop1", 0);
    expect("/", "/dangling", true, "/a/newfile", 0);
    expect("/", "/dangling", false, "/dangling", 0);
    expect("/", "/a/missing/x/../y/./z/", true, "/a/missing/y/z", 0);
    expect("/", "/a/b/file/x", true, "/a/b/file/x", 0);  /* ENOTDIR: lexical */
    /* This root's "proc" is a plain directory, so nothing in it is magic. */
    expect("/", "/proc/self/root/etc", true, "/a/root/etc", 0);
    expect("/", "/proc/self/../1/cwd", true, "/1/cwd", 0);
    expect("/proc/7", "cwd/x", true, "/proc/7/cwd/x", 0);
    char *longp = vg_xmalloc(3 * PATH_MAX);
    memset(longp, 'a', 3 * PATH_MAX - 1);
    longp[3 * PATH_MAX - 1] = '\0';
    for (int i = 100; i < 3 * PATH_MAX - 1; i += 100)
        longp[i] = '/';
    expect("/", longp, true, NULL, ENAMETOOLONG);
    free(longp);
}

/* The real procfs, with this process as the caller: magic links resolve
 * to what they name, ".." after them climbs physically, later links are
 * followed, and what has no name is unresolvable. */
static int host_root;
static struct vg_canon_ctx self_cx;

static void expect_self(const char *path, bool follow, const char *want)
{
    char *got = vg_canon_at(&self_cx, "/", path, follow);
    bool ok = got && (want ? strcmp(got, want) == 0
                           : strncmp(got, VG_CANON_UNRESOLVED, strlen(VG_CANON_UNRESOLVED)) == 0);
    if (!check(ok, path, __FILE__, __LINE__))
        fprintf(stderr, "  vg_canon_at(%s, %d) = %s, want %s\n", path, follow,
                got ? got : "NULL", want ? want : VG_CANON_UNRESOLVED "...");
    free(got);
}

static void expect_selff(const char *want, bool follow, const char *fmt, int a, int b)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, fmt, a, b);
    expect_self(path, follow, want);
}

static void test_magic_links(void)
{
    char cwd[PATH_MAX], buf[PATH_MAX];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    host_root = open("/", O_PATH | O_DIRECTORY);
    self_cx = (struct vg_canon_ctx){.root_fd = host_root, .nspid = getpid(),
                                    .nstid = (int32_t)syscall(VG_NR_gettid)};
    int pid = getpid(), dfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
    expect_self("/proc/self/cwd", true, cwd);
    expect_self("/proc/thread-self/cwd", true, cwd);
    expect_self("/proc/self/root/etc/../etc/passwd", true, "/etc/passwd");
    snprintf(buf, sizeof buf, "%s/a/b/file", tmpdir);
    expect_selff(buf, true, "/proc/self/fd/%d/a/b/file", dfd, 0);
    expect_selff(buf, true, "/proc/%d/fd/%d/rel/file", pid, dfd);   /* a later link */
    expect_selff(buf, true, "/dev/fd/%d/a/chain2", dfd, 0);         /* /dev/fd -> /proc/self/fd */
    expect_selff("/tmp/x", true, "/proc/self/fd/%d/../x", dfd, 0);  /* physical .. */
    snprintf(buf, sizeof buf, "/proc/%d/status", pid);
    expect_self("/proc/self/status", true, buf);
    expect_self("/proc/self/../self/status", true, buf);
    expect_self("/proc/cpuinfo", true, "/proc/cpuinfo");
    expect_self("/proc/sys/kernel/nosuch/x", true, "/proc/sys/kernel/nosuch/x"); /* ENOENT */
    expect_self("/proc/self/nosuch", true, NULL);                   /* a task's: may appear */
    expect_self("/proc/self", false, "/proc/self");                 /* the link itself */
    snprintf(buf, sizeof buf, "/proc/%d/fd/%d", pid, dfd);
    expect_selff(buf, false, "/proc/self/fd/%d", dfd, 0);
    /* No name in the sandbox view: refused, whatever the rest says. */
    int p[2];
    CHECK(pipe(p) == 0);
    expect_selff(NULL, true, "/proc/self/fd/%d", p[0], 0);
    expect_selff(NULL, true, "/proc/self/fd/%d/../../etc/passwd", p[0], 0);
    char tmpf[] = "/tmp/test_canon_del.XXXXXX";
    int del = mkstemp(tmpf);
    CHECK(del >= 0 && unlink(tmpf) == 0);
    expect_selff(NULL, true, "/proc/self/fd/%d", del, 0);
    expect_self("/proc/999999999/cwd/etc/passwd", true, NULL);      /* no such pid */
    expect_self("/proc/self/fd/99999/x", true, NULL);               /* no such fd */
    self_cx.nspid = self_cx.nstid = 0;                              /* caller unknown */
    expect_self("/proc/self/status", true, NULL);
    expect_self("/proc/thread-self/cwd", true, NULL);
    close(p[0]);
    close(p[1]);
    close(del);
    close(dfd);
    close(host_root);
}

static void test_proc_readers(void)
{
    char cwd[PATH_MAX];
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    char *got = vg_canon_cwd(getpid());
    CHECK(got && strcmp(got, cwd) == 0);
    free(got);
    int fd = open(tmpdir, O_RDONLY | O_DIRECTORY);
    got = vg_canon_fd(getpid(), fd);
    CHECK(got && strcmp(got, tmpdir) == 0);
    free(got);
    close(fd);
    errno = 0;
    CHECK(vg_canon_fd(getpid(), 9999) == NULL && errno == ENOENT);
}

/* Run setup() in a child, then read its cwd from here.  Returns the
 * result, or NULL when the child could not set up (no privilege). */
static char *cwd_of_child(int (*setup)(void))
{
    int p[2];
    if (pipe(p) < 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        char ok = setup() == 0 ? 'y' : 'n';
        if (write(p[1], &ok, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(p[1]);
    char ok = 'n';
    if (read(p[0], &ok, 1) != 1)
        ok = 'n';
    close(p[0]);
    char *cwd = ok == 'y' ? vg_canon_cwd(pid) : NULL;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return cwd;
}

/* Become root of a new user namespace (when not privileged already). */
static int own_userns(int extra)
{
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER | extra) < 0)
        return -1;
    char *maps[][2] = {
        { "/proc/self/setgroups", vg_xstrdup("deny") },
        { "/proc/self/uid_map", vg_xasprintf("0 %d 1", (int)uid) },
        { "/proc/self/gid_map", vg_xasprintf("0 %d 1", (int)gid) },
    };
    for (int i = 0; i < 3; i++) {
        int fd = open(maps[i][0], O_WRONLY);
        if (fd < 0 || write(fd, maps[i][1], strlen(maps[i][1])) < 0)
            return -1;
        close(fd);
    }
    return 0;
}

/* What vigil's launcher does: own mount namespace, a tmpfs as the new root. */
static int setup_pivot(void)
{
    char *newroot = vg_xasprintf("%s/newroot", tmpdir);
    if (unshare(CLONE_NEWNS) < 0 && own_userns(CLONE_NEWNS) < 0)
        return -1;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("tmpfs", newroot, "tmpfs", 0, NULL) < 0)
        return -1;
    char *work = vg_xasprintf("%s/tmp", newroot), *old = vg_xasprintf("%s/old", newroot);
    if (mkdir(work, 0755) < 0 || mkdir(old, 0755) < 0 ||
        syscall(VG_NR_pivot_root, newroot, old) < 0 || umount2("/old", MNT_DETACH) < 0)
        return -1;
    return chdir("/tmp");
}

/* A chroot into a directory the reader can reach: the text comes with the
 * chroot directory in front and must be stripped. */
static int setup_chroot(void)
{
    if (chroot(tmpdir) < 0 && (own_userns(0) < 0 || chroot(tmpdir) < 0))
        return -1;
    return chdir("/a/b");
}

static void test_sandbox_view(void)
{
    mk("newroot", true);
    char *cwd = cwd_of_child(setup_pivot);
    if (cwd == NULL)
        printf("skipped: pivot_root test (no namespaces here)\n");
    else
        CHECK(strcmp(cwd, "/tmp") == 0);
    free(cwd);
    cwd = cwd_of_child(setup_chroot);
    if (cwd == NULL)
        printf("skipped: chroot test (no privilege)\n");
    else
        CHECK(strcmp(cwd, "/a/b") == 0);
    free(cwd);
}

int main(void)
{
    build_root();
    test_lexical();
    test_symlinks();
    test_escapes();
    test_missing_loops_proc();
    test_magic_links();
    test_proc_readers();
    test_sandbox_view();
    check_rmtree(tmpdir);
    close(root_fd);
    return check_done();
}
