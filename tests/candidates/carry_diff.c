/* carry_diff.c: the edge cases of every call the notify engine carries
 * out (opens, the file-changing calls, readlink and the xattr calls), in
 * the current directory, which must be empty.  One line per case:
 *   NAME r=RESULT e=ERRNO [m=MODE o=OWNER s=SIZE t=MTIME]
 * RESULT: 0, "fd" for a new descriptor, or the number; ERRNO's name or -;
 * then the state of the object the case changes, when it has one (OWNER
 * "self" for the caller's own ids).  Run bare and under vigil, the lines
 * must be the same (tests/test_carry_diff.py). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

#define BAD_FD 999 /* never open here */
#define CLOSED_FD 500 /* open once, closed */
#define T1 1000000000L /* timestamps set by the cases */
#define T2 1100000000L

static int closed_fd, pipe_fd, sock_fd, path_fd, link_path_fd, file_fd, dir_fd, rdonly_fd;

/* The state of path (not followed), or "" when it has none. */
static const char *state(const char *path)
{
    static char buf[128];
    struct stat st;
    if (!path || lstat(path, &st) < 0)
        return "";
    const char *own = st.st_uid == getuid() && st.st_gid == getgid() ? "self" : "other";
    snprintf(buf, sizeof buf, " m=%04o o=%s%s%s s=%lld t=%lld.%09ld", (unsigned)(st.st_mode & 07777),
             own, st.st_uid == getuid() ? "" : "/u", st.st_gid == getgid() ? "" : "/g",
             S_ISREG(st.st_mode) ? (long long)st.st_size : 0LL,
             (long long)st.st_mtim.tv_sec >= T1 - 1 && st.st_mtim.tv_sec <= T2 + 1
                 ? (long long)st.st_mtim.tv_sec : 0LL,
             st.st_mtim.tv_sec >= T1 - 1 && st.st_mtim.tv_sec <= T2 + 1 ? st.st_mtim.tv_nsec : 0L);
    return buf;
}

static void say(const char *name, long r, int e, bool is_fd, const char *path)
{
    char res[32];
    if (r >= 0 && is_fd)
        snprintf(res, sizeof res, "fd");
    else
        snprintf(res, sizeof res, "%ld", r < 0 ? -1L : r);
    printf("%s r=%s e=%s%s\n", name, res, r < 0 ? strerrorname_np(e) : "-", state(path));
    if (r >= 0 && is_fd)
        close((int)r);
}

/* A case: the call, then what it left at path (NULL: nothing to show). */
#define CASE(name, path, call)                                                                \
    do {                                                                                      \
        errno = 0;                                                                            \
        long r_ = (long)(call);                                                               \
        say(name, r_, errno, false, path);                                                    \
    } while (0)
#define OPEN_CASE(name, path, call)                                                           \
    do {                                                                                      \
        errno = 0;                                                                            \
        long r_ = (long)(call);                                                               \
        say(name, r_, errno, true, path);                                                     \
    } while (0)

static int mkfile(const char *p)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "hello\n", 6) != 6) {
        perror(p);
        exit(1);
    }
    close(fd);
    return chmod(p, 0644);
}

static void setup(void)
{
    umask(022);
    mkfile("f");
    mkfile("g");
    if (mkdir("d", 0755) < 0 || mkdir("full", 0755) < 0 || symlink("f", "l") < 0 ||
        symlink("d", "dl") < 0 || symlink("nothing", "broken") < 0 || symlink("loop2", "loop1") < 0 ||
        symlink("loop1", "loop2") < 0)
        exit(1);
    mkfile("full/x");
    int p[2], s[2];
    if (pipe(p) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, s) < 0)
        exit(1);
    pipe_fd = p[0];
    sock_fd = s[0];
    /* a number no later open takes (the lowest free one is taken) */
    closed_fd = dup2(p[1], CLOSED_FD);
    close(closed_fd);
    path_fd = open("f", O_PATH);
    link_path_fd = open("l", O_PATH | O_NOFOLLOW);
    file_fd = open("g", O_RDWR);
    rdonly_fd = open("g", O_RDONLY);
    dir_fd = open("d", O_RDONLY | O_DIRECTORY);
    if (path_fd < 0 || link_path_fd < 0 || file_fd < 0 || dir_fd < 0 || rdonly_fd < 0)
        exit(1);
}

static void modes(void)
{
    static const mode_t masks[] = {0, 077, 022};
    for (size_t i = 0; i < sizeof masks / sizeof *masks; i++) {
        char n[64], p[64];
        umask(masks[i]);
        snprintf(p, sizeof p, "c%zu", i);
        snprintf(n, sizeof n, "umask%03o.open", (unsigned)masks[i]);
        OPEN_CASE(n, p, open(p, O_WRONLY | O_CREAT, 0666));
        snprintf(p, sizeof p, "k%zu", i);
        snprintf(n, sizeof n, "umask%03o.mkdir", (unsigned)masks[i]);
        CASE(n, p, mkdir(p, 0777));
        snprintf(p, sizeof p, "n%zu", i);
        snprintf(n, sizeof n, "umask%03o.mknod", (unsigned)masks[i]);
        CASE(n, p, mknod(p, S_IFIFO | 0666, 0));
        snprintf(p, sizeof p, "r%zu", i);
        snprintf(n, sizeof n, "umask%03o.creat", (unsigned)masks[i]);
        OPEN_CASE(n, p, creat(p, 0777));
    }
    /* a mkdir under one umask, then an open under another */
    umask(022);
    CASE("umask.mkdir022", "k9", mkdir("k9", 0777));
    umask(0);
    OPEN_CASE("umask.then000.open", "c9", open("c9", O_WRONLY | O_CREAT, 0666));
    CASE("umask.then000.mkdir", "k8", mkdir("k8", 0777));
    umask(022);
    CASE("mode.setgid.mkdir", "k7", mkdir("k7", 02755));
    CASE("mode.sticky.mkdir", "k6", mkdir("k6", 01777));
}

static void on_fds(void)
{
    const struct {
        const char *what;
        int fd;
    } fds[] = {{"bad", BAD_FD}, {"closed", -2}, {"pipe", -3}, {"sock", -4}, {"opath", -5},
               {"rdonly", -6}, {"dir", -7}, {"neg", -1}};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++) {
        int fd = fds[i].fd;
        switch (fd) {
        case -2: fd = closed_fd; break;
        case -3: fd = pipe_fd; break;
        case -4: fd = sock_fd; break;
        case -5: fd = path_fd; break;
        case -6: fd = rdonly_fd; break;
        case -7: fd = dir_fd; break;
        default: break;
        }
        char n[64];
        const char *shown = fds[i].fd == -5 || fds[i].fd == -6 ? "f" : NULL;
        snprintf(n, sizeof n, "fchmod.%s", fds[i].what);
        CASE(n, shown, fchmod(fd, 0600));
        snprintf(n, sizeof n, "fchown.%s", fds[i].what);
        CASE(n, shown, fchown(fd, (uid_t)-1, (gid_t)-1));
        snprintf(n, sizeof n, "ftruncate.%s", fds[i].what);
        CASE(n, shown, ftruncate(fd, 3));
        snprintf(n, sizeof n, "futimens.%s", fds[i].what);
        CASE(n, shown, futimens(fd, (struct timespec[2]){{T1, 5}, {T1, 7}}));
        snprintf(n, sizeof n, "fsetxattr.%s", fds[i].what);
        CASE(n, shown, fsetxattr(fd, "user.a", "v", 1, 0));
        char buf[64];
        snprintf(n, sizeof n, "fgetxattr.%s", fds[i].what);
        CASE(n, NULL, fgetxattr(fd, "user.a", buf, sizeof buf));
        snprintf(n, sizeof n, "flistxattr.%s", fds[i].what);
        CASE(n, NULL, flistxattr(fd, buf, sizeof buf));
        snprintf(n, sizeof n, "fremovexattr.%s", fds[i].what);
        CASE(n, NULL, fremovexattr(fd, "user.a"));
        snprintf(n, sizeof n, "fchmodat.dirfd.%s", fds[i].what);
        CASE(n, NULL, fchmodat(fd, "x", 0600, 0));
        snprintf(n, sizeof n, "mkdirat.dirfd.%s", fds[i].what);
        CASE(n, NULL, mkdirat(fd, "x", 0700));
        snprintf(n, sizeof n, "unlinkat.dirfd.%s", fds[i].what);
        CASE(n, NULL, unlinkat(fd, "x", 0));
        snprintf(n, sizeof n, "fchownat.empty.%s", fds[i].what);
        CASE(n, shown, fchownat(fd, "", (uid_t)-1, getgid(), AT_EMPTY_PATH));
        snprintf(n, sizeof n, "utimensat.null.%s", fds[i].what);
        CASE(n, shown, syscall(SYS_utimensat, fd, NULL, (struct timespec[2]){{T1, 1}, {T1, 2}}, 0));
        snprintf(n, sizeof n, "readlinkat.empty.%s", fds[i].what);
        CASE(n, NULL, readlinkat(fd, "", buf, sizeof buf));
    }
    CASE("fchmod.file", "g", fchmod(file_fd, 0640));
    CASE("fchown.file.self", "g", fchown(file_fd, getuid(), getgid()));
    CASE("fchown.file.root", "g", fchown(file_fd, 0, 0));
    CASE("ftruncate.file", "g", ftruncate(file_fd, 2));
    CASE("ftruncate.file.neg", "g", ftruncate(file_fd, -1));
    CASE("futimens.file", "g", futimens(file_fd, (struct timespec[2]){{T2, 1}, {T2, 2}}));
    char buf[8];
    CASE("readlinkat.empty.linkfd", NULL, readlinkat(link_path_fd, "", buf, sizeof buf));
    CASE("fchownat.empty.linkfd", "l", fchownat(link_path_fd, "", (uid_t)-1, getgid(), AT_EMPTY_PATH));
}

static void on_paths(void)
{
    char buf[64];
    CASE("chmod.file", "f", chmod("f", 0600));
    CASE("chmod.symlink", "f", chmod("l", 0640));
    CASE("chmod.broken", NULL, chmod("broken", 0640));
    CASE("chmod.loop", NULL, chmod("loop1", 0640));
    CASE("chmod.enoent", NULL, chmod("none", 0640));
    CASE("chmod.notdir", NULL, chmod("f/x", 0640));
    CASE("chmod.trailing", NULL, chmod("f/", 0640));
    CASE("fchmodat.nofollow.file", "f", syscall(SYS_fchmodat2, AT_FDCWD, "f", 0644, AT_SYMLINK_NOFOLLOW));
    CASE("fchmodat.nofollow.link", "l", syscall(SYS_fchmodat2, AT_FDCWD, "l", 0600, AT_SYMLINK_NOFOLLOW));
    CASE("fchmodat.badflags", NULL, syscall(SYS_fchmodat2, AT_FDCWD, "f", 0644, 0x8));
    CASE("lchmod.glibc", "l", fchmodat(AT_FDCWD, "l", 0600, AT_SYMLINK_NOFOLLOW));
    CASE("chown.self", "f", chown("f", getuid(), getgid()));
    CASE("chown.root", "f", chown("f", 0, (gid_t)-1));
    CASE("chown.symlink", "f", chown("l", (uid_t)-1, getgid()));
    CASE("lchown.symlink", "l", lchown("l", (uid_t)-1, getgid()));
    CASE("lchown.broken", "broken", lchown("broken", (uid_t)-1, getgid()));
    CASE("chown.broken", NULL, chown("broken", (uid_t)-1, getgid()));
    CASE("truncate.file", "f", truncate("f", 4));
    CASE("truncate.symlink", "f", truncate("l", 3));
    CASE("truncate.dir", "d", truncate("d", 0));
    CASE("truncate.loop", NULL, truncate("loop1", 0));
    CASE("truncate.neg", "f", truncate("f", -1));
    struct timespec ts[2] = {{T1, 100}, {T1, 200}};
    CASE("utimensat.file", "f", utimensat(AT_FDCWD, "f", ts, 0));
    CASE("utimensat.symlink", "f", utimensat(AT_FDCWD, "l", (struct timespec[2]){{T2, 3}, {T2, 4}}, 0));
    CASE("utimensat.nofollow", "l", utimensat(AT_FDCWD, "l", ts, AT_SYMLINK_NOFOLLOW));
    CASE("utimensat.nofollow.broken", "broken", utimensat(AT_FDCWD, "broken", ts, AT_SYMLINK_NOFOLLOW));
    CASE("utimensat.broken", NULL, utimensat(AT_FDCWD, "broken", ts, 0));
    CASE("utimensat.omit", "f", utimensat(AT_FDCWD, "f", (struct timespec[2]){{0, UTIME_OMIT}, {0, UTIME_OMIT}}, 0));
    CASE("utimensat.badnsec", "f", utimensat(AT_FDCWD, "f", (struct timespec[2]){{T1, 2000000000L}, {T1, 0}}, 0));
    CASE("utimensat.emptypath", "f", utimensat(path_fd, "", ts, AT_EMPTY_PATH));
    CASE("utimensat.emptynoflag", NULL, utimensat(AT_FDCWD, "", ts, 0));
    CASE("utimes.file", "f", utimes("f", (struct timeval[2]){{T2, 5}, {T2, 6}}));
    CASE("utimes.badusec", "f", utimes("f", (struct timeval[2]){{T2, 2000000}, {T2, 6}}));
    CASE("utime.file", "f", utime("f", &(struct utimbuf){T1, T1}));
    CASE("mkdir.eexist", NULL, mkdir("d", 0755));
    CASE("mkdir.symlink", NULL, mkdir("l", 0755));
    CASE("mkdir.broken", NULL, mkdir("broken", 0755));
    CASE("mkdir.enoent", NULL, mkdir("none/x", 0755));
    CASE("mkdir.notdir", NULL, mkdir("f/x", 0755));
    CASE("mkdir.trailing", "t1", mkdir("t1/", 0755));
    CASE("mknod.eexist", NULL, mknod("f", S_IFIFO | 0644, 0));
    CASE("mknod.reg", "m1", mknod("m1", S_IFREG | 0600, 0));
    CASE("mknod.chr", NULL, mknod("m2", S_IFCHR | 0600, makedev(1, 3)));
    CASE("symlink.eexist", NULL, symlink("x", "f"));
    CASE("symlink.enoent", NULL, symlink("x", "none/x"));
    CASE("symlink.new", "s1", symlink("f", "s1"));
    CASE("readlink.file", NULL, readlink("f", buf, sizeof buf));
    CASE("readlink.enoent", NULL, readlink("none", buf, sizeof buf));
    CASE("readlink.link", NULL, readlink("l", buf, sizeof buf));
    CASE("readlink.short", NULL, readlink("broken", buf, 3));
    CASE("readlink.zero", NULL, readlink("l", buf, 0));
    CASE("readlink.dirlink", NULL, readlink("dl/", buf, sizeof buf));
    CASE("unlink.dir", NULL, unlink("d"));
    CASE("unlink.enoent", NULL, unlink("none"));
    CASE("unlink.symlink", "f", unlink("s1"));
    CASE("unlink.trailing", NULL, unlink("g/"));
    CASE("unlinkat.removedir.file", NULL, unlinkat(AT_FDCWD, "g", AT_REMOVEDIR));
    CASE("unlinkat.badflags", NULL, unlinkat(AT_FDCWD, "g", 0x1));
    CASE("rmdir.full", NULL, rmdir("full"));
    CASE("rmdir.file", NULL, rmdir("f"));
    CASE("rmdir.dot", NULL, rmdir("d/."));
    CASE("rmdir.symlink", NULL, rmdir("dl"));
    CASE("rmdir.enoent", NULL, rmdir("none"));
    CASE("rmdir.symlink.slash", "d", rmdir("dl/"));
    CASE("unlink.symlink.slash", "d", unlink("dl/"));
    CASE("rename.symlink.slash", "d", rename("dl/", "x"));
    CASE("mkdir.broken.slash", NULL, mkdir("broken/", 0755));
    CASE("rmdir.dotdot", NULL, rmdir("d/.."));
    CASE("mkdir.dot", NULL, mkdir("d/.", 0755));
    CASE("rename.enoent", NULL, rename("none", "x"));
    CASE("rename.file.over.dir", NULL, rename("g", "d"));
    CASE("rename.dir.over.file", NULL, rename("d", "g"));
    CASE("rename.dir.over.full", NULL, rename("d", "full"));
    CASE("rename.into.self", NULL, rename("d", "d/x"));
    CASE("rename.noreplace", NULL, renameat2(AT_FDCWD, "g", AT_FDCWD, "f", RENAME_NOREPLACE));
    CASE("rename.exchange", "g", renameat2(AT_FDCWD, "g", AT_FDCWD, "f", RENAME_EXCHANGE));
    CASE("rename.exchange.enoent", NULL, renameat2(AT_FDCWD, "g", AT_FDCWD, "none", RENAME_EXCHANGE));
    CASE("rename.badflags", NULL, renameat2(AT_FDCWD, "g", AT_FDCWD, "f", RENAME_EXCHANGE | RENAME_NOREPLACE));
    CASE("rename.symlink", "l2", rename("l", "l2"));
    CASE("rename.back", "l", rename("l2", "l"));
    CASE("link.eexist", NULL, link("f", "g"));
    CASE("link.dir", NULL, link("d", "d2"));
    CASE("link.enoent", NULL, link("none", "x"));
    CASE("link.symlink", "h1", link("l", "h1"));
    CASE("linkat.follow", "h2", linkat(AT_FDCWD, "l", AT_FDCWD, "h2", AT_SYMLINK_FOLLOW));
    CASE("linkat.badflags", NULL, linkat(AT_FDCWD, "f", AT_FDCWD, "h3", 0x1));
}

static void xattrs(void)
{
    char buf[64], small[2];
    CASE("setxattr.file", NULL, setxattr("f", "user.a", "value", 5, 0));
    CASE("setxattr.create.exists", NULL, setxattr("f", "user.a", "v", 1, XATTR_CREATE));
    CASE("setxattr.replace.missing", NULL, setxattr("f", "user.b", "v", 1, XATTR_REPLACE));
    CASE("setxattr.badflags", NULL, setxattr("f", "user.b", "v", 1, 0x8));
    CASE("setxattr.empty.name", NULL, setxattr("f", "", "v", 1, 0));
    CASE("setxattr.badns", NULL, setxattr("f", "nons.a", "v", 1, 0));
    CASE("setxattr.trusted", NULL, setxattr("f", "trusted.a", "v", 1, 0));
    CASE("setxattr.dir", NULL, setxattr("d", "user.a", "v", 1, 0));
    CASE("setxattr.symlink", NULL, setxattr("l", "user.c", "v", 1, 0));
    CASE("setxattr.zero", NULL, setxattr("f", "user.z", "", 0, 0));
    CASE("lsetxattr.symlink", NULL, lsetxattr("l", "user.a", "v", 1, 0));
    CASE("getxattr.file", NULL, getxattr("f", "user.a", buf, sizeof buf));
    CASE("getxattr.size", NULL, getxattr("f", "user.a", NULL, 0));
    CASE("getxattr.small", NULL, getxattr("f", "user.a", small, sizeof small));
    CASE("getxattr.missing", NULL, getxattr("f", "user.none", buf, sizeof buf));
    CASE("getxattr.symlink", NULL, getxattr("l", "user.c", buf, sizeof buf));
    CASE("getxattr.enoent", NULL, getxattr("none", "user.a", buf, sizeof buf));
    CASE("lgetxattr.symlink", NULL, lgetxattr("l", "user.a", buf, sizeof buf));
    CASE("lgetxattr.file", NULL, lgetxattr("f", "user.a", buf, sizeof buf));
    CASE("listxattr.file", NULL, listxattr("f", buf, sizeof buf));
    CASE("listxattr.size", NULL, listxattr("f", NULL, 0));
    CASE("listxattr.small", NULL, listxattr("f", small, sizeof small));
    CASE("llistxattr.symlink", NULL, llistxattr("l", buf, sizeof buf));
    CASE("listxattr.broken", NULL, listxattr("broken", buf, sizeof buf));
    CASE("removexattr.missing", NULL, removexattr("f", "user.none"));
    CASE("removexattr.file", NULL, removexattr("f", "user.a"));
    CASE("lremovexattr.symlink", NULL, lremovexattr("l", "user.a"));
    CASE("fsetxattr.file", NULL, fsetxattr(file_fd, "user.q", "v", 1, 0));
    CASE("fgetxattr.file", NULL, fgetxattr(file_fd, "user.q", buf, sizeof buf));
}

static void opens(void)
{
    OPEN_CASE("open.nofollow.symlink", NULL, open("l", O_RDONLY | O_NOFOLLOW));
    OPEN_CASE("open.nofollow.opath", NULL, open("l", O_PATH | O_NOFOLLOW));
    OPEN_CASE("open.loop", NULL, open("loop1", O_RDONLY));
    OPEN_CASE("open.trailing.file", NULL, open("f/", O_RDONLY));
    OPEN_CASE("open.dir.write", NULL, open("d", O_WRONLY));
    OPEN_CASE("open.directory.file", NULL, open("f", O_RDONLY | O_DIRECTORY));
    OPEN_CASE("open.excl.exists", NULL, open("f", O_WRONLY | O_CREAT | O_EXCL, 0600));
    OPEN_CASE("open.excl.symlink", NULL, open("broken", O_WRONLY | O_CREAT | O_EXCL, 0600));
    OPEN_CASE("open.creat.broken", "nothing", open("broken", O_WRONLY | O_CREAT, 0600));
    OPEN_CASE("open.trunc", "f", open("f", O_WRONLY | O_TRUNC));
    OPEN_CASE("open.enoent", NULL, open("none", O_RDONLY));
    OPEN_CASE("open.notdir", NULL, open("f/x", O_RDONLY));
    OPEN_CASE("open.empty", NULL, open("", O_RDONLY));
    OPEN_CASE("openat.badfd", NULL, openat(BAD_FD, "f", O_RDONLY));
    OPEN_CASE("openat.filefd", NULL, openat(file_fd, "f", O_RDONLY));
    OPEN_CASE("open.tmpfile", NULL, open(".", O_TMPFILE | O_RDWR, 0600));
    OPEN_CASE("open.creat.dir", NULL, open("d", O_WRONLY | O_CREAT, 0600));
    OPEN_CASE("creat.dirslash", NULL, open("newdir/", O_WRONLY | O_CREAT, 0600));
}

int main(void)
{
    setup();
    modes();
    on_fds();
    on_paths();
    xattrs();
    opens();
    return 0;
}
