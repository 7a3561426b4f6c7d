/* test_decide_engines.c: both engines reach the same call and the same
 * verdict for the same system call.  The engines share the decoder and the
 * decider (vg_decode_call, then vg_decide_call); what differs is where the
 * number and arguments come from and how the candidate's memory may be
 * read (tracer/mem.h):
 *   ptrace  a seccomp stop: PTRACE_GET_SYSCALL_INFO, the thread ptrace-stopped;
 *   notify  a user notification: struct seccomp_data, the thread blocked in
 *           its call, not ptrace-stopped;
 *   SIGSYS  the baseline's trap, either engine: the registers
 *           (vg_sup_regs_call, stops.c).
 * Two children forked from one parent make the very same calls (same
 * addresses, same fds, same cwd): one under a RET_TRACE filter, one under a
 * RET_USER_NOTIF filter.  Each call is decoded (the thread as both engines
 * give it to the decoder: vg_sup_tracee) and decided (vg_decide_call) from
 * each, the registers are read at the ptrace stop too, and all must agree.  Every
 * call is then refused, so none of them runs. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "policy/dns_table.h"
#include "tracer/decode.h"
#include "tracer/supervisor.h"
#include "tracer/views.h"
#include "tests/unit/check.h"
#include "tests/unit/policy_text.h"

enum { DIRFD = 50, TCPFD = 51, UDPFD = 52, MAX_CASES = 48, NOT_A_ROW = 400 };
#define CHILD_SECONDS 60 /* a child left waiting (the parent failed) ends */
#define REFUSED_WITH EPERM /* how every call is refused once compared */
#define BAD_POINTER 8      /* never mapped */

/* ---- the calls, set up before fork: the same in both children ---- */

static char tmpdir[] = "/tmp/test_decide_engines.XXXXXX";
static struct stat statbuf;
static char byte = 'x';
static const char *const argv_true[] = {"true", "-x", NULL};
static const char *const envp[] = {"HOME=/root", "SECRET=1", NULL};
static struct sockaddr_in lo9, ten80, any0, resolver;
static struct sockaddr_un unix_path;
static struct iovec iov = {&byte, 1};
static struct msghdr msg = {.msg_name = &lo9, .msg_namelen = sizeof lo9, .msg_iov = &iov,
                            .msg_iovlen = 1};

struct raw_call {
    const char *what;
    int nr;
    uint64_t a[6];
    const char *rule_file; /* the verdict's rule's file, when the case says */
};
static struct raw_call cases[MAX_CASES];
static unsigned ncases;

#define P(x) ((uint64_t)(uintptr_t)(x))

static void add(const char *what, int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
                uint64_t a4)
{
    if (ncases == MAX_CASES) {
        fprintf(stderr, "too many cases\n");
        exit(2);
    }
    cases[ncases++] = (struct raw_call){what, nr, {a0, a1, a2, a3, a4, 0}, NULL};
}

static void set_addrs(void)
{
    lo9 = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(9)};
    ten80 = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(80)};
    any0 = (struct sockaddr_in){.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &lo9.sin_addr);
    inet_pton(AF_INET, "10.0.0.1", &ten80.sin_addr);
    resolver = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(53)};
    inet_pton(AF_INET, "127.0.0.53", &resolver.sin_addr);
    unix_path.sun_family = AF_UNIX;
    snprintf(unix_path.sun_path, sizeof unix_path.sun_path, "/tmp/x.sock");
}

static void set_cases(void)
{
    const uint64_t cwd = (uint64_t)AT_FDCWD;
    add("openat relative", VG_NR_openat, cwd, P("sub/file"), O_RDONLY, 0, 0);
    add("openat on a dirfd", VG_NR_openat, DIRFD, P("file"), O_RDONLY, 0, 0);
    add("openat to create", VG_NR_openat, cwd, P("new.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644, 0);
    add("open absolute", VG_NR_open, P("/etc/passwd"), O_RDONLY, 0, 0, 0);
    add("through /proc/self/cwd", VG_NR_openat, cwd, P("/proc/self/cwd/sub/file"), O_RDONLY, 0, 0);
    add("through /proc/self/fd/N", VG_NR_openat, cwd, P("/proc/self/fd/50/file"), O_RDONLY, 0, 0);
    add("a missing file", VG_NR_openat, cwd, P("missing/x"), O_RDONLY, 0, 0);
    add("an unreadable path", VG_NR_openat, cwd, BAD_POINTER, O_RDONLY, 0, 0);
    add("a bad dirfd", VG_NR_openat, 77, P("x"), O_RDONLY, 0, 0);
    add("rename a file", VG_NR_rename, P("sub/file"), P("sub/moved"), 0, 0, 0);
    add("renameat2 a tree", VG_NR_renameat2, cwd, P("sub"), cwd, P("sub2"), 1 /* NOREPLACE */);
    add("linkat", VG_NR_linkat, cwd, P("sub/file"), DIRFD, P("hard"), 0);
    add("unlink outside", VG_NR_unlink, P("/etc/passwd"), 0, 0, 0, 0);
    add("mkdir", VG_NR_mkdir, P("newdir"), 0755, 0, 0, 0);
    add("symlinkat", VG_NR_symlinkat, P("target"), cwd, P("lnk"), 0, 0);
    add("chmod", VG_NR_chmod, P("sub/file"), 0600, 0, 0, 0);
    add("newfstatat a path", VG_NR_newfstatat, cwd, P("sub/file"), P(&statbuf), 0, 0);
    add("newfstatat an fd", VG_NR_newfstatat, DIRFD, P(""), P(&statbuf), AT_EMPTY_PATH, 0);
    add("execve", VG_NR_execve, P("/bin/true"), P(argv_true), P(envp), 0, 0);
    add("execve of nothing", VG_NR_execve, P("/nonexistent"), P(argv_true), P(envp), 0, 0);
    add("execve, argv unreadable", VG_NR_execve, P("/bin/true"), BAD_POINTER, P(envp), 0, 0);
    add("connect allowed", VG_NR_connect, TCPFD, P(&lo9), sizeof lo9, 0, 0);
    cases[ncases - 1].rule_file = "t.policy";
    add("connect refused", VG_NR_connect, TCPFD, P(&ten80), sizeof ten80, 0, 0);
    add("connect a unix path", VG_NR_connect, TCPFD, P(&unix_path), sizeof unix_path, 0, 0);
    add("sendto an address", VG_NR_sendto, UDPFD, P(&byte), 1, 0, P(&lo9));
    cases[ncases - 1].a[5] = sizeof lo9;
    add("sendto, no address", VG_NR_sendto, UDPFD, P(&byte), 1, 0, 0);
    add("sendto vigil's resolver", VG_NR_sendto, UDPFD, P(&byte), 1, 0, P(&resolver));
    cases[ncases - 1].a[5] = sizeof resolver;
    cases[ncases - 1].rule_file = "(vigil)";
    add("sendmsg", VG_NR_sendmsg, UDPFD, P(&msg), 0, 0, 0);
    add("bind", VG_NR_bind, UDPFD, P(&any0), sizeof any0, 0, 0);
    add("baseline ptrace", VG_NR_ptrace, PTRACE_TRACEME, 0, 0, 0, 0);
    add("baseline mount", VG_NR_mount, P("none"), P("/mnt"), P("tmpfs"), 0, 0);
    add("a number without a row", NOT_A_ROW, 1, 2, 3, 4, 5);
}

/* ---- the children ---- */

/* Every case's number goes to the supervisor with action; nothing else. */
static int install_filter(uint32_t action, unsigned flags)
{
    struct sock_filter f[2 * MAX_CASES + 4];
    unsigned n = 0;
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (unsigned i = 0; i < ncases; i++) {
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)cases[i].nr, 0, 1);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action);
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        _exit(3);
    return (int)syscall(VG_NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static void make_calls(void)
{
    alarm(CHILD_SECONDS);
    for (unsigned i = 0; i < ncases; i++)
        syscall(cases[i].nr, cases[i].a[0], cases[i].a[1], cases[i].a[2], cases[i].a[3],
                cases[i].a[4], cases[i].a[5]);
    _exit(0);
}

static pid_t start_traced(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        raise(SIGSTOP);
        if (install_filter(SECCOMP_RET_TRACE, 0) < 0)
            _exit(3);
        make_calls();
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) ||
        ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL) < 0 ||
        ptrace(PTRACE_CONT, pid, 0, 0) < 0) {
        fprintf(stderr, "traced child did not start\n");
        exit(2);
    }
    return pid;
}

/* The listener fd of the notified child, as the supervisor's: the child
 * closes its own once the parent has it, so that its calls fail rather
 * than wait should the parent be gone. */
static pid_t start_notified(int *listener)
{
    int p[2], go[2];
    if (pipe(p) < 0 || pipe(go) < 0)
        exit(2);
    pid_t pid = fork();
    if (pid == 0) {
        char byte_in;
        int fd = install_filter(SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER);
        if (write(p[1], &fd, sizeof fd) != sizeof fd || fd < 0 ||
            read(go[0], &byte_in, 1) != 1)
            _exit(3);
        close(fd);
        make_calls();
    }
    int fd = -1;
    close(p[1]);
    close(go[0]);
    int pidfd = pid < 0 ? -1 : (int)syscall(VG_NR_pidfd_open, pid, 0);
    bool ok = read(p[0], &fd, sizeof fd) == sizeof fd && fd >= 0 && pidfd >= 0;
    close(p[0]);
    *listener = ok ? (int)syscall(VG_NR_pidfd_getfd, pidfd, fd, 0) : -1;
    if (*listener >= 0 && write(go[1], "g", 1) != 1) {
        close(*listener);
        *listener = -1;
    }
    close(go[1]);
    if (pidfd >= 0)
        close(pidfd);
    if (*listener < 0) {
        fprintf(stderr, "notified child did not start\n");
        exit(2);
    }
    return pid;
}

/* ---- one call from each engine ---- */

struct seen {
    int nr;
    uint64_t a[6];
    struct vg_call call;
    struct vg_call_verdict v;
};

static struct vg_engine_ctx ctx;
static struct vg_sup sup = {.ctx = &ctx, .root_fd = -1};

/* A thread of the sandbox, as the task table knows it (one namespace here). */
static struct vg_task task_of(pid_t tid, pid_t pid)
{
    return (struct vg_task){.tid = tid, .tgid = pid, .nspid = pid, .nstid = tid};
}

static void decode_decide(struct vg_tracee *tr, struct seen *s)
{
    vg_decode_call(tr, s->nr, s->a, &s->call);
    vg_decide_call(sup.ctx, &s->call, sup.root_fd, &s->v);
}

/* The ptrace engine's stop (ptrace_engine.c), and the same call from the
 * registers as at a SIGSYS (stops.c); then refused, as refuse() does. */
static bool from_ptrace(pid_t pid, struct seen *s, struct seen *regs_seen)
{
    int st;
    struct __ptrace_syscall_info info;
    struct user_regs_struct regs;
    if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) ||
        (st >> 8) != (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8)) ||
        ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof info, &info) <= 0 ||
        info.op != PTRACE_SYSCALL_INFO_SECCOMP || ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
        return false;
    s->nr = (int)info.seccomp.nr;
    memcpy(s->a, info.seccomp.args, sizeof s->a);
    vg_sup_regs_call(&regs, &regs_seen->nr, regs_seen->a);
    struct vg_task t = task_of(pid, pid);
    struct vg_tracee tr;
    vg_sup_tracee(&sup, &t, true, &tr);
    decode_decide(&tr, s);
    decode_decide(&tr, regs_seen);
    regs.orig_rax = (unsigned long long)-1;
    regs.rax = (unsigned long long)-REFUSED_WITH;
    return ptrace(PTRACE_SETREGS, pid, 0, &regs) == 0 && ptrace(PTRACE_CONT, pid, 0, 0) == 0;
}

/* The notify engine's notification (notify_call.c); then refused. */
static bool from_notify(int listener, pid_t pid, struct seen *s)
{
    struct seccomp_notif req;
    memset(&req, 0, sizeof req);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        return false;
    s->nr = req.data.nr;
    memcpy(s->a, req.data.args, sizeof s->a);
    struct vg_task t = task_of((pid_t)req.pid, pid);
    struct vg_tracee tr;
    vg_sup_tracee(&sup, &t, false, &tr);
    decode_decide(&tr, s);
    struct seccomp_notif_resp resp = {.id = req.id, .error = -REFUSED_WITH};
    return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0;
}

/* ---- agreement ---- */

static bool same_strv(const char *const *a, const char *const *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!streq(a[i], b[i]))
            return false;
    return true;
}

/* What the decider and the record read of a call. */
static bool same_call(const struct vg_call *a, const struct vg_call *b)
{
    const struct vg_args *x = &a->args, *y = &b->args;
    return a->nr == b->nr && a->ent == b->ent && streq(a->name, b->name) && a->cls == b->cls &&
           streq(a->check_path, b->check_path) && a->check_cls2 == b->check_cls2 &&
           streq(a->check_path2, b->check_path2) && a->has_sa == b->has_sa &&
           a->salen == b->salen && !memcmp(&a->sa, &b->sa, a->salen) &&
           streq(a->proto, b->proto) && a->sock_ino == b->sock_ino &&
           a->sock_type == b->sock_type && a->ndests == b->ndests &&
           streq(a->undecidable, b->undecidable) && a->deny_errno == b->deny_errno &&
           a->on_open_fd == b->on_open_fd && a->missing == b->missing &&
           streq(x->path, y->path) && streq(x->resolved, y->resolved) &&
           streq(x->path2, y->path2) && streq(x->resolved2, y->resolved2) &&
           x->flags == y->flags && x->mode == y->mode && x->nflags == y->nflags &&
           same_strv(x->flag_names, y->flag_names, x->nflags) && streq(x->family, y->family) &&
           streq(x->addr, y->addr) && x->port == y->port && streq(x->exe, y->exe) &&
           x->argc == y->argc && same_strv(x->argv, y->argv, x->argc) &&
           x->nenv == y->nenv && same_strv(x->env_names, y->env_names, x->nenv) &&
           x->argv_unreadable == y->argv_unreadable && x->masked == y->masked;
}

/* A policy's rule is the very value parsed, whichever engine asked;
 * vigil's own reasons are equal texts. */
static bool same_rule(const struct vg_call_verdict *a, const struct vg_call_verdict *b)
{
    bool own = a->rule == &a->own || b->rule == &b->own;
    if (!own || !a->rule || !b->rule)
        return a->rule == b->rule;
    return streq(a->rule->file, b->rule->file) && a->rule->line == b->rule->line &&
           streq(a->rule->text, b->rule->text);
}

static bool same_verdict(const struct vg_call_verdict *a, const struct vg_call_verdict *b)
{
    return a->record == b->record && a->decision == b->decision && a->refuse == b->refuse &&
           a->kill == b->kill && a->err == b->err && same_rule(a, b) && a->probe == b->probe;
}

static void compare(const struct raw_call *want, struct seen *pt, struct seen *regs,
                    struct seen *nt)
{
    bool raw = pt->nr == want->nr && nt->nr == want->nr && regs->nr == want->nr &&
               !memcmp(pt->a, want->a, sizeof pt->a) && !memcmp(nt->a, want->a, sizeof nt->a) &&
               !memcmp(regs->a, want->a, sizeof regs->a);
    if (!check(raw, want->what, __FILE__, __LINE__))
        fprintf(stderr, "  the engines saw different numbers or arguments\n");
    if (!check(same_call(&pt->call, &nt->call) && same_call(&pt->call, &regs->call), want->what,
               __FILE__, __LINE__))
        fprintf(stderr, "  decoded differently: %s / %s\n", pt->call.check_path ? pt->call.check_path : "-",
                nt->call.check_path ? nt->call.check_path : "-");
    /* the rule outlives the call that decided (a verdict is used after) */
    if (want->rule_file && !check(pt->v.rule && streq(pt->v.rule->file, want->rule_file),
                                  want->what, __FILE__, __LINE__))
        fprintf(stderr, "  decided by %s\n", pt->v.rule ? pt->v.rule->file : "nothing");
    if (!check(same_verdict(&pt->v, &nt->v) && same_verdict(&pt->v, &regs->v), want->what,
               __FILE__, __LINE__))
        fprintf(stderr, "  decided differently: %d (%s) / %d (%s)\n", pt->v.decision,
                pt->v.rule ? pt->v.rule->text : "-", nt->v.decision,
                nt->v.rule ? nt->v.rule->text : "-");
}

/* The comparison must not be vacuous: some calls allowed, some refused. */
static void count(const struct seen *s, unsigned *allowed, unsigned *refused)
{
    if (s->v.record && s->v.decision == VG_DEC_ALLOW)
        (*allowed)++;
    if (s->v.refuse)
        (*refused)++;
}

static void test_engines_agree(void)
{
    int listener;
    pid_t traced = start_traced(), notified = start_notified(&listener);
    unsigned allowed = 0, refused = 0;
    for (unsigned i = 0; i < ncases; i++) {
        struct seen pt = {0}, regs = {0}, nt = {0};
        bool got = from_ptrace(traced, &pt, &regs) && from_notify(listener, notified, &nt);
        if (!check(got, cases[i].what, __FILE__, __LINE__)) {
            fprintf(stderr, "  no stop or notification for it\n");
            break;
        }
        compare(&cases[i], &pt, &regs, &nt);
        count(&pt, &allowed, &refused);
        vg_call_free(&pt.call);
        vg_call_free(&regs.call);
        vg_call_free(&nt.call);
    }
    CHECK(allowed >= 5 && refused >= 5);
    close(listener);
    kill(traced, SIGKILL);
    kill(notified, SIGKILL);
    waitpid(traced, NULL, 0);
    waitpid(notified, NULL, 0);
}

/* ---- the run around them ---- */

static void make_tree(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/sub", tmpdir);
    if (chdir(tmpdir) < 0 || mkdir("sub", 0755) < 0)
        exit(2);
    int f = open("sub/file", O_CREAT | O_WRONLY, 0644);
    int d = open("sub", O_RDONLY | O_DIRECTORY);
    int t = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);
    if (f < 0 || d < 0 || t < 0 || u < 0 || dup2(d, DIRFD) < 0 || dup2(t, TCPFD) < 0 ||
        dup2(u, UDPFD) < 0)
        exit(2);
    close(f), close(d), close(t), close(u);
}

int main(void)
{
    if (!mkdtemp(tmpdir))
        return 2;
    make_tree();
    set_addrs();
    set_cases();
    char text[1024];
    snprintf(text, sizeof text,
             "version 1\ndefault deny\nallow read /etc/** %s/**\nallow write %s/**\n"
             "allow exec /usr/bin/true\nallow connect tcp 127.0.0.1:9\nallow send udp *:9\n",
             tmpdir, tmpdir);
    struct vg_policy *p = pol(text);
    bool audited[VG_CLASS_NCLASSES];
    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        audited[c] = true;
    struct vg_run_opts opts = {0};
    struct vg_dns_table names; /* a run with vigil's resolver */
    vg_dns_table_init(&names);
    ctx = (struct vg_engine_ctx){.opts = &opts, .pol = p, .audited = audited, .dns = &names};
    sup.root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    test_engines_agree();
    close(sup.root_fd);
    vg_policy_free(p);
    vg_dns_table_free(&names);
    check_rmtree(tmpdir);
    return check_done();
}
