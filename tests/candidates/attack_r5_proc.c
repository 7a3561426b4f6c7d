/* attack_r5_proc.c WORK: reach WORK/keep (denied to read) through the
 * /proc spellings whose magic links the supervisor resolves with its own
 * rights (vigil is root, outside the sandbox's Landlock).  The test put a
 * token in WORK/keep/f (its bytes, its user.vigil xattr), WORK/keep/l (a
 * symlink whose text is the token) and made WORK/open/f, WORK/open/d/.
 * One line per case:
 *   NAME ok TEXT     the call worked; TEXT is what it gave (printable)
 *   NAME E<errno>    it failed
 * Cases starting with "c-" read a file's bytes, "r-" readlink, "x-" an
 * xattr value, "l-" an xattr list; the test judges by the token only, and
 * compares a few with the bare kernel's answer. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static char work[2048];

static void show(const char *name, ssize_t n, const char *buf)
{
    if (n < 0) {
        printf("%s E%d\n", name, errno);
        return;
    }
    char text[256];
    size_t k = 0;
    for (ssize_t i = 0; i < n && k < sizeof text - 1; i++)
        text[k++] = buf[i] >= 0x21 && buf[i] < 0x7f ? buf[i] : '.';
    text[k] = 0;
    printf("%s ok %s\n", name, text);
}

/* What an open gave (fd, or -1 with errno): its first bytes, then closed. */
static void show_fd(const char *name, int fd)
{
    char buf[256];
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
    int e = errno;
    if (fd >= 0)
        close(fd);
    errno = e;
    show(name, n, buf);
}

static void content(const char *name, int dirfd, const char *path)
{
    show_fd(name, openat(dirfd, path, O_RDONLY | O_CLOEXEC));
}

static void link_text(const char *name, int dirfd, const char *path)
{
    char buf[256];
    show(name, readlinkat(dirfd, path, buf, sizeof buf), buf);
}

static void xattr(const char *name, const char *path, bool follow)
{
    char buf[256];
    ssize_t n = follow ? getxattr(path, "user.vigil", buf, sizeof buf)
                       : lgetxattr(path, "user.vigil", buf, sizeof buf);
    show(name, n, buf);
}

static void xlist(const char *name, const char *path, bool follow)
{
    char buf[1024];
    show(name, follow ? listxattr(path, buf, sizeof buf) : llistxattr(path, buf, sizeof buf), buf);
}

static void openat2_case(const char *name, int dirfd, const char *path, uint64_t resolve)
{
    struct open_how how = {.flags = O_RDONLY | O_CLOEXEC, .resolve = resolve};
    show_fd(name, (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how));
}

static void w_show(const char *tag, const char *op, long r)
{
    printf("w-%s-%s %s\n", tag, op, r < 0 ? "E" : "ok");
}

/* WORK spelt W: read keep/f's bytes (c-), xattr value (x-, lx-: no
 * follow), xattr names (l-), keep/l's text (r-); change ro/, which the
 * policy does not let the candidate write (w-: judged by the test on the
 * host) */
static void through(const char *tag, const char *w)
{
    char p[4096], q[4096], name[128];
    snprintf(p, sizeof p, "%s/keep/f", w);
    snprintf(name, sizeof name, "c-%s", tag);
    content(name, AT_FDCWD, p);
    snprintf(name, sizeof name, "x-%s", tag);
    xattr(name, p, true);
    snprintf(name, sizeof name, "lx-%s", tag);
    xattr(name, p, false);
    snprintf(name, sizeof name, "l-%s", tag);
    xlist(name, p, true);
    snprintf(p, sizeof p, "%s/keep/l", w);
    snprintf(name, sizeof name, "r-%s", tag);
    link_text(name, AT_FDCWD, p);

    snprintf(p, sizeof p, "%s/ro/f", w);
    w_show(tag, "truncate", truncate(p, 1));
    w_show(tag, "chmod", chmod(p, 0777));
    w_show(tag, "setxattr", setxattr(p, "user.r5", "x", 1, 0));
    w_show(tag, "removexattr", removexattr(p, "user.vigil"));
    w_show(tag, "utimes", utimes(p, NULL));
    int fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
    w_show(tag, "append", fd < 0 ? -1 : write(fd, "W", 1));
    if (fd >= 0)
        close(fd);
    snprintf(q, sizeof q, "%s/open/from-ro-%s", w, tag);
    w_show(tag, "rename-out", rename(p, q));
    w_show(tag, "link-out", link(p, q));
    snprintf(p, sizeof p, "%s/ro/g", w);
    w_show(tag, "unlink", unlink(p));
    snprintf(p, sizeof p, "%s/ro/d", w);
    w_show(tag, "rmdir", rmdir(p));
    snprintf(p, sizeof p, "%s/ro/new-%s", w, tag);
    w_show(tag, "mkdir", mkdir(p, 0755));
    w_show(tag, "symlink", symlink("x", p));
    fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    w_show(tag, "create", fd);
    if (fd >= 0)
        close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    snprintf(work, sizeof work, "%s", argv[1]);
    if (chdir(work) < 0)
        return 3;
    setvbuf(stdout, NULL, _IOLBF, 0);
    char p[4096];

    /* the direct spellings: the supervisor must refuse them all */
    through("plain", work);
    snprintf(p, sizeof p, "/proc/self/root%s", work);
    through("self-root", p);
    snprintf(p, sizeof p, "/proc/thread-self/root%s", work);
    through("thread-self-root", p);
    through("self-cwd", "/proc/self/cwd");
    through("thread-self-cwd", "/proc/thread-self/cwd");
    snprintf(p, sizeof p, "/proc/%d/task/%d/cwd", getpid(), (int)gettid());
    through("task-cwd", p);
    snprintf(p, sizeof p, "/proc/%d/root%s", getpid(), work);
    through("pid-root", p);

    /* a directory fd of the allowed tree, and ".." out of it */
    int open_dir = open("open", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    snprintf(p, sizeof p, "/proc/self/fd/%d/..", open_dir);
    through("fd-dotdot", p);
    /* up past / (where ".." stays) and back down through the caller's cwd */
    int k = snprintf(p, sizeof p, "/proc/self/fd/%d", open_dir);
    for (int i = 0; i < 40; i++)
        k += snprintf(p + k, sizeof p - (size_t)k, "/..");
    snprintf(p + k, sizeof p - (size_t)k, "/proc/self/cwd");
    through("fd-dotdot-cwd", p);

    /* vigil's init, pid 1: its root, its cwd (the kernel refuses the
     * candidate its magic links; the supervisor may read them) */
    snprintf(p, sizeof p, "/proc/1/root%s", work);
    through("init-root", p);
    snprintf(p, sizeof p, "/proc/1/cwd%s", work);
    through("init-cwd", p);
    for (int fd = 0; fd < 20; fd++) {
        char name[64];
        snprintf(p, sizeof p, "/proc/1/fd/%d", fd);
        snprintf(name, sizeof name, "c-init-fd%d", fd);
        content(name, AT_FDCWD, p);
        snprintf(name, sizeof name, "r-init-fd%d", fd);
        link_text(name, AT_FDCWD, p);
    }

    /* a child that sits in keep/ (chdir is not audited here): its cwd */
    int go[2], back[2];
    if (pipe(go) < 0 || pipe(back) < 0)
        return 4;
    pid_t kid = fork();
    if (kid == 0) {
        if (chdir("keep") < 0)
            _exit(1);
        char c;
        (void)!write(back[1], "x", 1);
        (void)!read(go[0], &c, 1); /* until the parent is done */
        _exit(0);
    }
    char c;
    (void)!read(back[0], &c, 1);
    snprintf(p, sizeof p, "/proc/%d/cwd/..", (int)kid);
    through("child-cwd-keep", p);
    snprintf(p, sizeof p, "/proc/%d/root%s", (int)kid, work);
    through("child-root", p);
    (void)!write(go[1], "x", 1);
    waitpid(kid, NULL, 0);

    /* this thread itself in keep/: thread-self/cwd is then keep */
    if (chdir("keep") == 0) {
        through("cwd-in-keep", "/proc/thread-self/cwd/..");
        if (chdir(work) < 0)
            return 5;
    }

    /* a directory fd taken in the allowed tree, the directory then moved
     * into keep/ and the token moved into it (each rename is one the
     * policy allows: into a stricter place, and within keep/): the fd's
     * link now names keep/d */
    if (mkdir("open/d", 0755) < 0 && errno != EEXIST)
        return 6;
    int moved = open("open/d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    printf("moved-dir %s\n", rename("open/d", "keep/d") == 0 ? "ok" : "E");
    printf("moved-f %s\n", rename("keep/f", "keep/d/f") == 0 ? "ok" : "E");
    printf("moved-l %s\n", rename("keep/l", "keep/d/l") == 0 ? "ok" : "E");
    content("c-moved-at", moved, "f");
    link_text("r-moved-at", moved, "l");
    snprintf(p, sizeof p, "/proc/self/fd/%d/f", moved);
    content("c-moved-proc", AT_FDCWD, p);
    xattr("x-moved-proc", p, true);
    xlist("l-moved-proc", p, true);
    snprintf(p, sizeof p, "/proc/self/fd/%d/l", moved);
    link_text("r-moved-proc", AT_FDCWD, p);
    if (fchdir(moved) == 0) {
        content("c-moved-cwd", AT_FDCWD, "/proc/self/cwd/f");
        if (chdir(work) < 0)
            return 7;
    }
    (void)!rename("keep/d/f", "keep/f");
    (void)!rename("keep/d/l", "keep/l");

    /* openat2: RESOLVE_IN_ROOT at a directory of the allowed tree (".."
     * clamps there), through /proc/self (magic links refused in a scoped
     * lookup), and NO_MAGICLINKS */
    openat2_case("c-o2-inroot-dotdot", open_dir, "../keep/f", RESOLVE_IN_ROOT);
    int selfdir = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    snprintf(p, sizeof p, "root%s/keep/f", work);
    openat2_case("c-o2-inroot-proc", selfdir, p, RESOLVE_IN_ROOT);
    snprintf(p, sizeof p, "cwd/keep/f");
    openat2_case("c-o2-inroot-proc-cwd", selfdir, p, RESOLVE_IN_ROOT);
    snprintf(p, sizeof p, "/proc/self/root%s/keep/f", work);
    openat2_case("c-o2-nomagic", AT_FDCWD, p, RESOLVE_NO_MAGICLINKS);
    openat2_case("c-o2-plain", AT_FDCWD, p, 0);

    /* map_files: the kernel wants CAP_CHECKPOINT_RESTORE in the initial
     * user namespace to look one up; the supervisor has it */
    FILE *maps = fopen("/proc/self/maps", "re");
    char line[512], range[128] = "";
    while (maps && fgets(line, sizeof line, maps))
        if (strstr(line, "attack_r5_proc")) {
            sscanf(line, "%127s", range);
            break;
        }
    if (maps)
        fclose(maps);
    snprintf(p, sizeof p, "/proc/self/map_files/%s", range);
    link_text("r-map-files", AT_FDCWD, p);
    content("c-map-files", AT_FDCWD, p);
    printf("done\n");
    return 0;
}
