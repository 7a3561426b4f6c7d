/* test_decode.c: decoding calls from a real stopped tracee.  A child sets
 * up strings, argv/envp arrays, socket addresses and fds in its own memory
 * (after fork, so the parent's copy differs), stops itself under ptrace,
 * and the parent decodes made-up calls whose pointers point into the child. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "tracer/decode.h"
#include "util/util.h"
#include "tests/unit/check.h"


enum { DIRFD = 50, TCPFD = 51, UDPFD = 52, BOUNDFD = 53, TCP6FD = 54, NARGS = 300, NMSGS = 1030 };

/* Filled by the child after fork: the parent's copy stays zero. */
static struct {
    char rel[64], upfile[64], newf[64], lnk[64], target[64], dst[64], chk[64];
    char big[5000];
    char *argv[4], *envp[4];
    char *many[NARGS + 1];
    char a0[8], a1[8], a2[32], e0[32], e1[32];
    struct sockaddr_in in;
    struct sockaddr_in6 in6;
    struct sockaddr_un un, abs;
    struct msghdr msg;
    struct sockaddr_in in9, unspec, odd, any;
    struct sockaddr_in6 any6;
    struct mmsghdr mm[NMSGS]; /* to in and in9, and past the kernel's cap to hole */
    struct { uint64_t flags, mode, resolve; } how;
    char *edge;          /* a path ending right before an unmapped page */
    char *hole;          /* an unmapped address */
} m;

static char tmpdir[] = "/tmp/test_decode.XXXXXX";

static void child_setup(void)
{
    if (chdir(tmpdir) < 0 || mkdir("sub", 0755) < 0)
        _exit(2);
    close(open("sub/file", O_CREAT | O_WRONLY, 0644));
    if (symlink("sub/file", "lnk") < 0)
        _exit(2);
    int d = open("sub", O_RDONLY | O_DIRECTORY);
    int t = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET6, SOCK_DGRAM, 0);
    if (d < 0 || t < 0 || u < 0 || dup2(d, DIRFD) < 0 || dup2(t, TCPFD) < 0 || dup2(u, UDPFD) < 0)
        _exit(2);
    strcpy(m.rel, "sub/file");
    strcpy(m.upfile, "/../../file");
    strcpy(m.newf, "new.txt");
    strcpy(m.lnk, "lnk");
    strcpy(m.target, "target-text");
    strcpy(m.dst, "sub/moved");
    strcpy(m.chk, "file");
    memset(m.big, 'x', sizeof(m.big) - 1);
    strcpy(m.a0, "sh"), strcpy(m.a1, "-c"), strcpy(m.a2, "echo hi");
    strcpy(m.e0, "HOME=/home/me"), strcpy(m.e1, "SECRET_TOKEN=hunter2");
    m.argv[0] = m.a0, m.argv[1] = m.a1, m.argv[2] = m.a2;
    m.envp[0] = m.e0, m.envp[1] = m.e1;
    for (int i = 0; i < NARGS; i++)
        m.many[i] = i == 1 ? m.big : m.a0;
    m.in.sin_family = AF_INET;
    m.in.sin_port = htons(8080);
    inet_pton(AF_INET, "127.0.0.1", &m.in.sin_addr);
    m.in6.sin6_family = AF_INET6;
    m.in6.sin6_port = htons(53);
    inet_pton(AF_INET6, "::1", &m.in6.sin6_addr);
    m.un.sun_family = AF_UNIX;
    strcpy(m.un.sun_path, "sub/../sock");
    m.abs.sun_family = AF_UNIX;
    memcpy(m.abs.sun_path, "\0vigil-test", 11);
    m.msg.msg_name = &m.in;
    m.msg.msg_namelen = sizeof(m.in);
    m.in9 = m.unspec = m.odd = m.any = m.in;
    m.any.sin_addr.s_addr = htonl(INADDR_ANY);
    m.any6 = m.in6;
    m.any6.sin6_addr = in6addr_any;
    m.in9.sin_port = htons(9);
    m.unspec.sin_family = AF_UNSPEC;
    m.odd.sin_family = AF_NETLINK;
    for (int i = 0; i < NMSGS; i++) {
        m.mm[i].msg_hdr.msg_name = i % 2 ? &m.in9 : &m.in;
        m.mm[i].msg_hdr.msg_namelen = sizeof(m.in);
    }
    struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int b = socket(AF_INET, SOCK_STREAM, 0);
    int t6 = socket(AF_INET6, SOCK_STREAM, 0);
    if (b < 0 || bind(b, (struct sockaddr *)&lo, sizeof(lo)) < 0 || dup2(b, BOUNDFD) < 0 ||
        t6 < 0 || dup2(t6, TCP6FD) < 0)
        _exit(2);
    m.how.flags = O_RDONLY;
    m.how.resolve = 0x10;                 /* RESOLVE_IN_ROOT */
    char *pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED || munmap(pages + 4096, 4096) < 0)
        _exit(2);
    m.edge = pages + 4096 - 6;
    memcpy(m.edge, "/edge", 6);
    m.hole = pages + 4096;
    for (int i = 1024; i < NMSGS; i++)
        m.mm[i].msg_hdr.msg_name = m.hole;
}

static void child_body(void)
{
    child_setup();
    raise(SIGSTOP);
}

static pid_t start_child(void)
{
    return check_traced_child(child_body);
}

static struct vg_tracee tr;
static char *tmp(const char *rel) { return vg_xasprintf("%s/%s", tmpdir, rel); }

static int decode(struct vg_call *c, int nr, uint64_t a0, uint64_t a1, uint64_t a2,
                  uint64_t a3, uint64_t a4, uint64_t a5)
{
    const uint64_t a[6] = { a0, a1, a2, a3, a4, a5 };
    return vg_decode_call(&tr, nr, a, c);
}
#define P(x) ((uint64_t)(uintptr_t)(x))

/* A pointer the child stored after fork (the parent's copy is NULL). */
static uint64_t child_ptr(char **where)
{
    uint64_t v = 0;
    CHECK(vg_tracee_read(&tr, P(where), &v, sizeof(v)) == 0 && v != 0);
    return v;
}

static bool has_name(const struct vg_call *c, const char *name)
{
    for (uint32_t i = 0; i < c->args.nflags; i++)
        if (streq(c->args.flag_names[i], name))
            return true;
    return false;
}

static void check_resolved(const struct vg_call *c, const char *rel)
{
    char *want = tmp(rel);
    if (!CHECK_STR(c->args.resolved, want))
        fprintf(stderr, "  got %s want %s\n", c->args.resolved, want);
    CHECK_STR(c->check_path, want);
    free(want);
}

static void test_open(void)
{
    struct vg_call c;
    CHECK(decode(&c, VG_NR_openat, (uint64_t)AT_FDCWD, P(m.rel), O_RDONLY, 0, 0, 0) == 0);
    CHECK(c.cls == VG_CLASS_READ && c.args.mode == -1 && c.deny_errno == EACCES);
    CHECK_STR(c.name, "openat");
    CHECK_STR(c.args.path, "sub/file");
    check_resolved(&c, "sub/file");
    CHECK(c.args.nflags == 1 && has_name(&c, "O_RDONLY"));
    vg_call_free(&c);

    decode(&c, VG_NR_openat, (uint64_t)AT_FDCWD, P(m.newf), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644, 0, 0);
    CHECK(c.cls == VG_CLASS_WRITE && c.args.mode == 0644);
    CHECK(c.args.nflags == 4 && has_name(&c, "O_WRONLY") && has_name(&c, "O_CREAT") &&
          has_name(&c, "O_TRUNC") && has_name(&c, "O_CLOEXEC"));
    check_resolved(&c, "new.txt");
    vg_call_free(&c);

    decode(&c, VG_NR_openat, DIRFD, P(m.chk), O_RDONLY | 0x40000000, 0, 0, 0);
    check_resolved(&c, "sub/file");
    CHECK(c.args.nflags == 2 && has_name(&c, "0x40000000"));
    vg_call_free(&c);

    decode(&c, VG_NR_open, P(m.lnk), O_RDONLY, 0, 0, 0, 0);
    check_resolved(&c, "sub/file");            /* followed */
    vg_call_free(&c);
    decode(&c, VG_NR_open, P(m.lnk), O_RDONLY | O_NOFOLLOW, 0, 0, 0, 0);
    check_resolved(&c, "lnk");
    vg_call_free(&c);
    decode(&c, VG_NR_open, P(m.lnk), O_WRONLY | O_CREAT | O_EXCL, 0600, 0, 0, 0);
    check_resolved(&c, "lnk");                 /* O_EXCL does not follow */
    vg_call_free(&c);
    decode(&c, VG_NR_open, P(m.rel), O_TMPFILE | O_RDWR, 0600, 0, 0, 0);
    CHECK(c.cls == VG_CLASS_WRITE && has_name(&c, "O_TMPFILE") && !has_name(&c, "O_DIRECTORY"));
    vg_call_free(&c);

    decode(&c, VG_NR_creat, P(m.newf), 0600, 0, 0, 0, 0);
    CHECK(c.cls == VG_CLASS_WRITE && c.args.mode == 0600 && has_name(&c, "O_CREAT") &&
          has_name(&c, "O_TRUNC") && has_name(&c, "O_WRONLY"));
    vg_call_free(&c);

    /* openat2 RESOLVE_IN_ROOT: ".." and "/" stay below the dirfd. */
    decode(&c, VG_NR_openat2, DIRFD, P(m.chk), P(&m.how), sizeof(m.how), 0, 0);
    check_resolved(&c, "sub/file");
    CHECK(c.cls == VG_CLASS_READ && has_name(&c, "RESOLVE_IN_ROOT"));
    vg_call_free(&c);
    decode(&c, VG_NR_openat2, DIRFD, P(m.upfile), P(&m.how), sizeof(m.how), 0, 0);
    check_resolved(&c, "sub/file");
    vg_call_free(&c);
    decode(&c, VG_NR_openat, DIRFD, P(m.upfile), O_RDONLY, 0, 0, 0);
    CHECK_STR(c.check_path, "/file");          /* without it, "/" is the root */
    vg_call_free(&c);
}

static void test_paths(void)
{
    struct vg_call c;
    decode(&c, VG_NR_unlinkat, DIRFD, P(m.chk), AT_REMOVEDIR, 0, 0, 0);
    CHECK(c.cls == VG_CLASS_WRITE && c.args.flags == AT_REMOVEDIR && has_name(&c, "AT_REMOVEDIR"));
    check_resolved(&c, "sub/file");
    vg_call_free(&c);

    decode(&c, VG_NR_unlink, P(m.lnk), 0, 0, 0, 0, 0);
    check_resolved(&c, "lnk");                 /* not followed */
    vg_call_free(&c);

    decode(&c, VG_NR_renameat2, (uint64_t)AT_FDCWD, P(m.rel), (uint64_t)AT_FDCWD, P(m.dst), 1, 0);
    check_resolved(&c, "sub/file");
    char *d = tmp("sub/moved");
    CHECK_STR(c.check_path2, d);
    CHECK(c.check_cls2 == VG_CLASS_WRITE && has_name(&c, "RENAME_NOREPLACE"));
    free(d);
    vg_call_free(&c);

    decode(&c, VG_NR_symlink, P(m.target), P(m.newf), 0, 0, 0, 0);
    check_resolved(&c, "new.txt");
    CHECK_STR(c.args.path2, "target-text");
    CHECK(c.check_path2 == NULL);
    vg_call_free(&c);

    decode(&c, VG_NR_fchmod, DIRFD, 0600, 0, 0, 0, 0);
    check_resolved(&c, "sub");
    CHECK(c.args.mode == 0600 && c.deny_errno == EPERM);
    vg_call_free(&c);

    decode(&c, VG_NR_linkat, (uint64_t)AT_FDCWD, P(m.lnk), DIRFD, P(m.target), AT_SYMLINK_FOLLOW, 0);
    check_resolved(&c, "sub/file");
    d = tmp("sub/target-text");
    if (!CHECK_STR(c.check_path2, d))
        fprintf(stderr, "  got %s\n", c.check_path2);
    free(d);
    vg_call_free(&c);

    decode(&c, VG_NR_fchownat, DIRFD, P(""), 0, 0, AT_EMPTY_PATH, 0);
    check_resolved(&c, "sub");                 /* "" + AT_EMPTY_PATH: the fd */
    vg_call_free(&c);

    decode(&c, VG_NR_fchmodat2, (uint64_t)AT_FDCWD, P(m.lnk), 0644, AT_SYMLINK_NOFOLLOW, 0, 0);
    check_resolved(&c, "lnk");
    vg_call_free(&c);

    CHECK(decode(&c, VG_NR_chmod, child_ptr(&m.edge), 0644, 0, 0, 0, 0) == 0);
    CHECK_STR(c.args.path, "/edge");
    vg_call_free(&c);
    CHECK(decode(&c, VG_NR_chmod, child_ptr(&m.hole), 0644, 0, 0, 0, 0) == -1);
    CHECK_STR(c.args.path, "(unreadable)");
    CHECK_STR(c.check_path, "(unreadable)");
    vg_call_free(&c);
    CHECK(decode(&c, VG_NR_openat, 77, P(m.rel), 0, 0, 0, 0) == 0);
    CHECK_STR(c.check_path, "(bad fd 77)");
    vg_call_free(&c);
}

/* Is needle anywhere in the bytes the arena handed out (one chunk)? */
static bool arena_has(const struct vg_arena *a, const char *needle)
{
    return a->n == 1 && memmem(a->chunks[0], a->used, needle, strlen(needle)) != NULL;
}

static void test_exec(void)
{
    struct vg_call c;
    char *sh = realpath("/bin/sh", NULL);
    decode(&c, VG_NR_execve, P("/bin/sh"), P(m.argv), P(m.envp), 0, 0, 0);
    CHECK(c.cls == VG_CLASS_EXEC);
    CHECK_STR(c.args.path, "/bin/sh");
    CHECK_STR(c.args.exe, sh);
    CHECK(c.args.argc == 3 && streq(c.args.argv[0], "sh") && streq(c.args.argv[2], "echo hi"));
    CHECK(c.args.nenv == 2 && streq(c.args.env_names[0], "HOME") &&
          streq(c.args.env_names[1], "SECRET_TOKEN"));
    CHECK(c.arena.n == 1 && !arena_has(&c.arena, "hunter2") && !arena_has(&c.arena, "/home/me"));
    vg_call_free(&c);
    free(sh);

    /* Every argument, whole: 300 of them, one of 4999 bytes. */
    decode(&c, VG_NR_execve, P("/bin/sh"), P(m.many), 0, 0, 0, 0);
    CHECK(c.args.argc == NARGS && streq(c.args.argv[NARGS - 1], "sh"));
    CHECK(strlen(c.args.argv[1]) == sizeof m.big - 1 && !c.args.argv_full.sha256);
    CHECK(c.args.nenv == 0 && !c.args.argv_unreadable);
    vg_call_free(&c);

    /* An argv that cannot be read whole is marked and fails EFAULT. */
    CHECK(decode(&c, VG_NR_execve, P("/bin/sh"), child_ptr(&m.hole), 0, 0, 0, 0) == -1);
    CHECK(c.args.argv_unreadable && c.deny_errno == EFAULT);
    vg_call_free(&c);

    decode(&c, VG_NR_execveat, DIRFD, P(""), P(m.argv), P(m.envp), AT_EMPTY_PATH, 0);
    CHECK(has_name(&c, "AT_EMPTY_PATH"));
    char *d = tmp("sub");
    CHECK_STR(c.args.exe, d);
    free(d);
    vg_call_free(&c);
}

static void test_net(void)
{
    struct vg_call c;
    decode(&c, VG_NR_connect, TCPFD, P(&m.in), sizeof(m.in), 0, 0, 0);
    CHECK(c.cls == VG_CLASS_CONNECT && c.has_sa && c.salen == sizeof(m.in));
    CHECK_STR(c.args.family, "inet");
    CHECK_STR(c.args.addr, "127.0.0.1");
    CHECK(c.args.port == 8080 && c.deny_errno == ECONNREFUSED);
    CHECK_STR(c.proto, "tcp");
    CHECK_STR(c.args.proto, "tcp");
    vg_call_free(&c);

    decode(&c, VG_NR_sendto, UDPFD, 0, 0, 0, P(&m.in6), sizeof(m.in6));
    CHECK(c.cls == VG_CLASS_SEND && c.has_sa && c.args.port == 53);
    CHECK_STR(c.args.family, "inet6");
    CHECK_STR(c.args.addr, "::1");
    CHECK_STR(c.proto, "udp");
    vg_call_free(&c);

    decode(&c, VG_NR_sendto, UDPFD, 0, 0, 0, 0, 0);
    CHECK(c.cls == VG_CLASS_SEND && !c.has_sa && c.args.addr == NULL);
    vg_call_free(&c);
    CHECK(decode(&c, VG_NR_sendto, UDPFD, 0, 0, 0, child_ptr(&m.hole), 16) == -1);
    CHECK(!c.has_sa && c.undecidable && c.deny_errno == EFAULT);
    vg_call_free(&c);

    decode(&c, VG_NR_sendmsg, UDPFD, P(&m.msg), 0, 0, 0, 0);
    CHECK(c.has_sa && streq(c.args.addr, "127.0.0.1") && c.args.port == 8080);
    vg_call_free(&c);
    decode(&c, VG_NR_sendmmsg, UDPFD, P(&m.msg), 1, 0, 0, 0);
    CHECK(c.has_sa && streq(c.args.addr, "127.0.0.1"));
    vg_call_free(&c);

    decode(&c, VG_NR_connect, TCPFD, P(&m.un), sizeof(m.un), 0, 0, 0);
    char *sock = tmp("sock");
    CHECK_STR(c.args.family, "unix");
    CHECK_STR(c.args.addr, sock);
    CHECK_STR(c.proto, "unix");
    CHECK_STR(((struct sockaddr_un *)&c.sa)->sun_path, sock);
    free(sock);
    vg_call_free(&c);

    decode(&c, VG_NR_bind, TCPFD, P(&m.abs), offsetof(struct sockaddr_un, sun_path) + 11, 0, 0, 0);
    CHECK(c.cls == VG_CLASS_BIND && c.has_sa);
    CHECK_STR(c.args.addr, "@vigil-test");
    vg_call_free(&c);
}

/* What the kernel acts on, and nothing undecided: every sendmmsg message
 * up to its cap, listen's autobind, fast open, odd lengths and families. */
static void test_net_attacks(void)
{
    struct vg_call c;
    CHECK(decode(&c, VG_NR_sendmmsg, UDPFD, P(&m.mm), NMSGS, 0, 0, 0) == 0);
    CHECK(c.has_sa && c.ndests == 2 && c.args.ndests == 2 && !c.undecidable);
    CHECK(c.dests[0].port == 8080 && c.dests[0].msgs == 512);
    CHECK(c.dests[1].port == 9 && c.dests[1].msgs == 512);
    vg_call_free(&c);
    CHECK(decode(&c, VG_NR_sendmmsg, UDPFD, P(&m.mm[1020]), 8, 0, 0, 0) == -1);
    CHECK(c.undecidable && c.deny_errno == EFAULT && streq(c.args.addr, "(unreadable)"));
    vg_call_free(&c);

    CHECK(decode(&c, VG_NR_listen, TCPFD, 8, 0, 0, 0, 0) == 0);
    CHECK(c.cls == VG_CLASS_BIND && c.has_sa && c.args.port == 0);
    CHECK_STR(c.args.addr, "0.0.0.0");
    CHECK_STR(c.proto, "tcp");
    vg_call_free(&c);
    CHECK(decode(&c, VG_NR_listen, TCP6FD, 8, 0, 0, 0, 0) == 0 && c.has_sa);
    CHECK(streq(c.args.addr, "::") && streq(c.args.family, "inet6") && c.args.port == 0);
    vg_call_free(&c);
    CHECK(decode(&c, VG_NR_listen, BOUNDFD, 8, 0, 0, 0, 0) == 0 && !c.has_sa);
    vg_call_free(&c);
    CHECK(decode(&c, VG_NR_listen, 999, 8, 0, 0, 0, 0) == -1);
    CHECK(c.undecidable && c.deny_errno == EBADF);
    vg_call_free(&c);

    decode(&c, VG_NR_sendto, TCPFD, 0, 0, MSG_FASTOPEN, P(&m.in9), sizeof(m.in9));
    CHECK(c.cls == VG_CLASS_CONNECT && c.args.port == 9 && c.deny_errno == ECONNREFUSED);
    vg_call_free(&c);
    decode(&c, VG_NR_sendto, UDPFD, 0, 0, MSG_FASTOPEN, P(&m.in9), sizeof(m.in9));
    CHECK(c.cls == VG_CLASS_SEND);
    vg_call_free(&c);

    CHECK(decode(&c, VG_NR_sendto, UDPFD, 0, 0, 0, P(&m.in), 4000) == -1);
    CHECK(c.undecidable && c.deny_errno == EINVAL);
    vg_call_free(&c);
    CHECK(decode(&c, VG_NR_sendto, UDPFD, 0, 0, 0, P(&m.in), 8) == -1);
    CHECK(c.undecidable && c.deny_errno == EINVAL);
    vg_call_free(&c);
    CHECK(decode(&c, VG_NR_sendto, UDPFD, 0, 0, 0, P(&m.odd), sizeof(m.odd)) == -1);
    CHECK(c.undecidable && c.deny_errno == EAFNOSUPPORT);
    vg_call_free(&c);
    CHECK(decode(&c, VG_NR_sendto, UDPFD, 0, 0, 0, P(&m.unspec), sizeof(m.unspec)) == 0);
    CHECK(c.has_sa && c.sa.ss_family == AF_INET && c.args.port == 8080);
    CHECK_STR(c.args.family, "unspec");
    vg_call_free(&c);
    /* the unspecified address reaches loopback, or the socket's own */
    decode(&c, VG_NR_connect, TCPFD, P(&m.any), sizeof(m.any), 0, 0, 0);
    CHECK_STR(c.args.addr, "127.0.0.1");
    vg_call_free(&c);
    decode(&c, VG_NR_sendto, UDPFD, 0, 0, 0, P(&m.any6), sizeof(m.any6));
    CHECK_STR(c.args.addr, "::1");
    vg_call_free(&c);
    decode(&c, VG_NR_bind, TCPFD, P(&m.any), sizeof(m.any), 0, 0, 0);
    CHECK_STR(c.args.addr, "0.0.0.0");
    vg_call_free(&c);
    CHECK(decode(&c, VG_NR_connect, TCPFD, P(&m.unspec), sizeof(sa_family_t), 0, 0, 0) == 0);
    CHECK(c.has_sa && c.sa.ss_family == AF_UNSPEC);
    vg_call_free(&c);
}

static void test_system(void)
{
    struct vg_call c;
    decode(&c, VG_NR_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0, 0);
    CHECK(c.cls == VG_CLASS_SYSTEM && c.args.nflags == 2 && has_name(&c, "CLONE_NEWNS") &&
          has_name(&c, "CLONE_NEWUSER"));
    vg_call_free(&c);
    decode(&c, VG_NR_socket, AF_NETLINK, SOCK_RAW, 0, 0, 0, 0);
    CHECK(c.deny_errno == EAFNOSUPPORT && has_name(&c, "AF_NETLINK"));
    CHECK_STR(c.args.family, "netlink");
    vg_call_free(&c);
    decode(&c, VG_NR_ioctl, 0, 0x5412, 0, 0, 0, 0);
    CHECK(c.args.nflags == 1 && has_name(&c, "TIOCSTI"));
    vg_call_free(&c);
    decode(&c, VG_NR_ptrace, 0, 0, 0, 0, 0, 0);
    CHECK(c.cls == VG_CLASS_SYSTEM && c.args.flags == -1 && c.check_path == NULL);
    vg_call_free(&c);
    CHECK(decode(&c, 9999, 0, 0, 0, 0, 0, 0) == 0);
    CHECK(c.ent == NULL && c.cls == VG_CLASS_SYSTEM && c.deny_errno == ENOSYS);
    CHECK_STR(c.name, "syscall_9999");
    vg_call_free(&c);
}

static void test_arena(void)
{
    struct vg_arena a = { .n = 0 };
    char *s = vg_arena_strdup(&a, "abc");
    void *big = vg_arena_alloc(&a, 100000);
    memset(big, 1, 100000);
    CHECK(streq(s, "abc") && ((uintptr_t)big % 16) == 0 && a.n == 2);
    vg_arena_free(&a);
    CHECK(a.n == 0);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    pid_t pid = start_child();
    tr.tid = tr.pid = pid;
    tr.root_fd = open("/", O_PATH | O_DIRECTORY);
    test_open();
    test_paths();
    test_exec();
    test_net();
    test_net_attacks();
    test_system();
    test_arena();
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(tr.root_fd);
    check_rmtree(tmpdir);
    return check_done();
}
