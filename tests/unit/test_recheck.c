/* test_recheck.c: `vigil recheck` without a sandbox.  A syscall record is
 * made the call it was (recheck_call.c: row, class, the paths and the
 * address the policy is asked about, the errno a refusal takes, the
 * reasons no policy changes); the log's facts about files answer the
 * decider's questions (recheck_fs.c: what was found, made, removed); and a
 * whole log written here is decided again under a policy (recheck.c:
 * changes, the exec check, names, the verdict, what cannot be known). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "event/writer.h"
#include "insight/recheck.h"
#include "insight/recheck_int.h"
#include "policy/policy.h"
#include "tests/unit/check.h"

#define WORK "/tmp/work"
#define ECONN ECONNREFUSED

static struct vg_syscall_ev ev(const char *name, enum vg_class cls, const char *resolved)
{
    const struct vg_sysent *e = vg_sys_by_name(name);
    return (struct vg_syscall_ev){
        .nr = e ? e->nr : -1, .name = name, .cls = cls, .decision = VG_DEC_ALLOW,
        .rule = {.text = "default allow"},
        .args = {.resolved = resolved, .flags = -1, .mode = -1, .port = -1},
    };
}

static void test_paths(void)
{
    struct vg_syscall_ev e = ev("openat", VG_CLASS_READ, "/etc/hostname");
    e.probe = true;
    struct vg_call c;
    vg_recheck_call_of(&e, &c);
    CHECK(c.ent && c.ent->nr == e.nr);
    CHECK(c.cls == VG_CLASS_READ && c.check_cls2 == VG_CLASS_READ);
    CHECK_STR(c.check_path, "/etc/hostname");
    CHECK(!c.check_path2 && c.missing && !c.undecidable && c.deny_errno == EACCES);
    vg_call_free(&c);

    e = ev("rename", VG_CLASS_WRITE, WORK "/a");
    e.args.resolved2 = WORK "/b";
    vg_recheck_call_of(&e, &c);
    CHECK_STR(c.check_path, WORK "/a");
    CHECK_STR(c.check_path2, WORK "/b");
    CHECK(c.check_cls2 == VG_CLASS_WRITE && !c.missing);
    vg_call_free(&c);

    /* symlink's second path is the link's text, never judged */
    e = ev("symlink", VG_CLASS_WRITE, WORK "/l");
    e.args.path2 = "/etc/passwd";
    vg_recheck_call_of(&e, &c);
    CHECK(!c.check_path2);
    vg_call_free(&c);

    /* an exec is judged on its image */
    e = ev("execve", VG_CLASS_EXEC, "/usr/bin/python3");
    e.args.exe = "/usr/bin/python3.11";
    vg_recheck_call_of(&e, &c);
    CHECK_STR(c.args.exe, "/usr/bin/python3.11");
    vg_call_free(&c);
}

/* Reasons the record gives that no policy changes, and errnos it keeps. */
static void test_reasons(void)
{
    struct vg_syscall_ev e = ev("connect", VG_CLASS_CONNECT, NULL);
    e.decision = VG_DEC_DENY;
    e.rule = (struct vg_rule_src){.text = "unreadable: an argument could not be read"};
    e.err = EFAULT;
    struct vg_call c;
    vg_recheck_call_of(&e, &c);
    CHECK_STR(c.undecidable, e.rule.text);
    CHECK(c.deny_errno == EFAULT);
    vg_call_free(&c);

    e.rule = (struct vg_rule_src){.text = "default deny"};
    vg_recheck_call_of(&e, &c);
    CHECK(!c.undecidable && c.deny_errno == ECONN);
    vg_call_free(&c);

    /* a send with MSG_FASTOPEN is a connect, refused as one */
    e = ev("sendto", VG_CLASS_CONNECT, NULL);
    vg_recheck_call_of(&e, &c);
    CHECK(c.deny_errno == ECONN);
    vg_call_free(&c);

    e = ev("execve", VG_CLASS_EXEC, "/bin/x");
    e.args.argv_unreadable = true;
    e.err = E2BIG;
    e.decision = VG_DEC_DENY;
    vg_recheck_call_of(&e, &c);
    CHECK(c.deny_errno == E2BIG && c.args.argv_unreadable);
    vg_call_free(&c);

    /* a number no row has: the baseline's ENOSYS */
    e = ev("syscall_999", VG_CLASS_SYSTEM, NULL);
    e.nr = 999;
    vg_recheck_call_of(&e, &c);
    CHECK(!c.ent && c.deny_errno == ENOSYS);
    vg_call_free(&c);
}

static void test_addresses(void)
{
    struct vg_syscall_ev e = ev("connect", VG_CLASS_CONNECT, NULL);
    e.args.family = "inet";
    e.args.proto = "tcp";
    e.args.addr = "10.1.2.3";
    e.args.port = 443;
    struct vg_call c;
    vg_recheck_call_of(&e, &c);
    const struct sockaddr_in *in = (const struct sockaddr_in *)&c.sa;
    CHECK(c.has_sa && c.salen == sizeof *in && in->sin_family == AF_INET);
    CHECK(ntohs(in->sin_port) == 443 && in->sin_addr.s_addr == inet_addr("10.1.2.3"));
    CHECK_STR(c.proto, "tcp");
    CHECK(!c.check_path);
    vg_call_free(&c);

    e.args.family = "inet6";
    e.args.addr = "::1";
    vg_recheck_call_of(&e, &c);
    CHECK(c.has_sa && c.sa.ss_family == AF_INET6 && c.salen == sizeof(struct sockaddr_in6));
    vg_call_free(&c);

    /* a pathname unix socket is a file; an abstract one is not */
    e.args.family = "unix";
    e.args.proto = "unix";
    e.args.addr = "/run/x.sock";
    vg_recheck_call_of(&e, &c);
    const struct sockaddr_un *un = (const struct sockaddr_un *)&c.sa;
    CHECK(c.has_sa && un->sun_family == AF_UNIX);
    CHECK_STR(un->sun_path, "/run/x.sock");
    CHECK_STR(c.check_path, "/run/x.sock");
    vg_call_free(&c);
    e.args.addr = "@abs";
    vg_recheck_call_of(&e, &c);
    CHECK(c.has_sa && un->sun_path[0] == 0 && !memcmp(un->sun_path + 1, "abs", 3));
    CHECK(!c.check_path);
    vg_call_free(&c);

    /* a connect with AF_UNSPEC names no address; a send with it is inet */
    struct sockaddr_storage ss;
    socklen_t len;
    CHECK(vg_recheck_sockaddr("unspec", NULL, -1, NULL, &ss, &len) && ss.ss_family == AF_UNSPEC);
    CHECK(vg_recheck_sockaddr("unspec", "1.2.3.4", 9, NULL, &ss, &len) && ss.ss_family == AF_INET);
    CHECK(!vg_recheck_sockaddr("inet", "(unreadable)", 1, NULL, &ss, &len));
    CHECK(!vg_recheck_sockaddr(NULL, "1.2.3.4", 1, NULL, &ss, &len));

    /* sendmmsg: every destination, copied for the decider to judge */
    struct vg_dest d[2] = {{.family = "inet", .addr = "10.0.0.1", .port = 53, .msgs = 2},
                           {.family = "inet", .addr = "10.0.0.2", .port = 99, .msgs = 1}};
    e = ev("sendmmsg", VG_CLASS_SEND, NULL);
    e.args.family = "inet";
    e.args.proto = "udp";
    e.args.addr = "10.0.0.1";
    e.args.port = 53;
    e.args.dests = d;
    e.args.ndests = 2;
    vg_recheck_call_of(&e, &c);
    CHECK(c.ndests == 2 && c.dests != d && c.args.dests == c.dests);
    in = (const struct sockaddr_in *)&c.dest_sa[1].sa;
    CHECK(c.dest_sa[1].len == sizeof *in && ntohs(in->sin_port) == 99);
    vg_call_free(&c);
}

static void test_facts(void)
{
    struct vg_recheck_fs fs;
    vg_recheck_fs_init(&fs, WORK);
    CHECK(vg_recheck_fs_fact(&fs, WORK) == VG_FACT_DIR);
    CHECK(vg_recheck_fs_fact(&fs, "/tmp") == VG_FACT_DIR);
    CHECK(vg_recheck_fs_fact(&fs, "/etc/passwd") == VG_FACT_UNKNOWN);

    /* a read that found its object; a probe that did not */
    struct vg_syscall_ev e = ev("openat", VG_CLASS_READ, "/etc/passwd");
    vg_recheck_fs_before(&fs, &e);
    vg_recheck_fs_after(&fs, &e);
    CHECK(vg_recheck_fs_fact(&fs, "/etc/passwd") != VG_FACT_UNKNOWN);
    CHECK(vg_recheck_fs_fact(&fs, "/etc") == VG_FACT_DIR);
    e = ev("openat", VG_CLASS_READ, "/etc/nope");
    e.probe = true;
    vg_recheck_fs_before(&fs, &e);
    vg_recheck_fs_after(&fs, &e);
    CHECK(vg_recheck_fs_fact(&fs, "/etc/nope") == VG_FACT_MISSING);

    /* made and removed, as carried-out calls say; then a removal above */
    e = ev("mkdir", VG_CLASS_WRITE, WORK "/d");
    e.carried = true;
    vg_recheck_fs_before(&fs, &e);
    vg_recheck_fs_after(&fs, &e);
    CHECK(vg_recheck_fs_fact(&fs, WORK "/d") == VG_FACT_DIR);
    e = ev("openat", VG_CLASS_WRITE, WORK "/d/f");
    e.args.flags = O_WRONLY | O_CREAT;
    e.carried = e.installed = true;
    vg_recheck_fs_before(&fs, &e);
    vg_recheck_fs_after(&fs, &e);
    CHECK(vg_recheck_fs_fact(&fs, WORK "/d/f") == VG_FACT_FILE);
    e = ev("rename", VG_CLASS_WRITE, WORK "/d/f");
    e.args.resolved2 = WORK "/g";
    e.carried = true;
    vg_recheck_fs_before(&fs, &e);
    vg_recheck_fs_after(&fs, &e);
    CHECK(vg_recheck_fs_fact(&fs, WORK "/d/f") == VG_FACT_MISSING);
    CHECK(vg_recheck_fs_fact(&fs, WORK "/g") == VG_FACT_FILE);
    e = ev("rmdir", VG_CLASS_WRITE, WORK "/d");
    e.carried = true;
    vg_recheck_fs_before(&fs, &e);
    vg_recheck_fs_after(&fs, &e);
    CHECK(vg_recheck_fs_fact(&fs, WORK "/d/f") == VG_FACT_MISSING);

    /* a call that failed tells what was there before it; the ptrace
     * engine's records carry no outcome, and tell nothing */
    e = ev("mkdir", VG_CLASS_WRITE, "/var/x");
    e.carried = true;
    e.ret = -1;
    e.ret_errno = EEXIST;
    vg_recheck_fs_before(&fs, &e);
    vg_recheck_fs_after(&fs, &e);
    CHECK(vg_recheck_fs_fact(&fs, "/var/x") == VG_FACT_DIR);
    e = ev("unlink", VG_CLASS_WRITE, "/var/y");
    vg_recheck_fs_before(&fs, &e);
    vg_recheck_fs_after(&fs, &e);
    CHECK(vg_recheck_fs_fact(&fs, "/var/y") == VG_FACT_UNKNOWN);
    vg_recheck_fs_free(&fs);
}

static struct vg_policy *policy(const char *text)
{
    struct vg_err err;
    struct vg_places places = {.home = "/home/u", .work = WORK, .tmp = "/tmp"};
    struct vg_policy *p = vg_policy_parse("new.policy", text, &err);
    if (!p || vg_policy_compile(p, &places, &err) < 0) {
        fprintf(stderr, "policy: %s\n", err.msg);
        exit(2);
    }
    return p;
}

/* The reconstructed call, decided with the log's facts. */
static void decide(const struct vg_policy *p, struct vg_recheck_fs *fs,
                   const struct vg_syscall_ev *e, bool dry, struct vg_call_verdict *v)
{
    bool audited[VG_CLASS_NCLASSES];
    for (int i = 0; i < VG_CLASS_NCLASSES; i++)
        audited[i] = vg_policy_audits(p, (enum vg_class)i);
    struct vg_fs_view view = vg_recheck_fs_view(fs);
    struct vg_decide_ctx d = {.pol = p, .dry_run = dry, .audited = audited, .fs = &view};
    struct vg_call c;
    vg_recheck_fs_before(fs, e);
    vg_recheck_call_of(e, &c);
    vg_decide(&d, &c, v);
    vg_recheck_fs_after(fs, e);
    vg_call_free(&c);
}

static void test_decisions(void)
{
    struct vg_policy *p = policy("version 1\ndefault allow\n"
                                 "deny read /etc/shadow /etc/nope\n"        /* 3 */
                                 "kill write /var/**\n"                     /* 4 */
                                 "deny write $WORK/keep/**\n");             /* 5 */
    struct vg_recheck_fs fs;
    vg_recheck_fs_init(&fs, WORK);
    struct vg_call_verdict v;
    struct vg_syscall_ev e = ev("openat", VG_CLASS_READ, "/etc/shadow");
    decide(p, &fs, &e, false, &v);
    CHECK(v.decision == VG_DEC_DENY && v.err == EACCES && v.rule->line == 3);
    decide(p, &fs, &e, true, &v);
    CHECK(v.decision == VG_DEC_WOULD_DENY && !v.refuse);
    /* a refused probe fails as a missing file does */
    e = ev("openat", VG_CLASS_READ, "/etc/nope");
    e.probe = true;
    decide(p, &fs, &e, false, &v);
    CHECK(v.decision == VG_DEC_DENY && v.err == ENOENT && v.probe);

    /* a kill rule's mkdir of a directory the log shows exists: EEXIST */
    e = ev("mkdir", VG_CLASS_WRITE, "/var");
    decide(p, &fs, &e, false, &v);
    CHECK(v.decision == VG_DEC_KILL); /* nothing says /var is there */
    e = ev("openat", VG_CLASS_READ, "/var/lib/dpkg/status");
    decide(p, &fs, &e, false, &v);
    e = ev("mkdir", VG_CLASS_WRITE, "/var");
    decide(p, &fs, &e, false, &v);
    CHECK(v.decision == VG_DEC_DENY && v.err == EEXIST);

    /* a write refused where its directory is missing: ENOENT */
    e = ev("openat", VG_CLASS_WRITE, WORK "/keep/a");
    e.decision = VG_DEC_DENY;
    e.err = ENOENT;
    decide(p, &fs, &e, false, &v);
    CHECK(v.decision == VG_DEC_DENY && v.err == ENOENT && v.rule->line == 5);
    vg_recheck_fs_free(&fs);
    vg_policy_free(p);
}

/* ---- a whole log ---- */

static char dir[] = "/tmp/test_recheck.XXXXXX";

static void put(struct vg_log *log, struct vg_record r)
{
    if (vg_log_write(log, &r) < 0)
        exit(2);
}

static struct vg_record call(struct vg_syscall_ev e, uint64_t ts, int pid)
{
    e.ts_ns = ts;
    e.pid = e.tid = pid;
    return (struct vg_record){.type = VG_REC_SYSCALL, .u.sys = e};
}

/* A dry run under "default allow": a read, a secret probed, a connect, a
 * name, a program run, then its exit. */
static void write_log(const char *path, bool trailer)
{
    struct vg_err err;
    struct vg_log *log = vg_log_create(path, &err);
    if (!log)
        exit(2);
    const char *argv[] = {"python3", "cand.py"};
    put(log, (struct vg_record){.type = VG_REC_HEADER,
                                .u.header = {.format = VG_FORMAT_VERSION, .vigil_version = "t",
                                             .argv = argv, .argc = 2, .cwd = WORK,
                                             .mode = "dry-run", .engine = "notify",
                                             .policy_path = "old.policy",
                                             .policy_sha256 = "0", .policy_text = ""}});
    put(log, call(ev("openat", VG_CLASS_READ, "/etc/hostname"), 10, 2));
    struct vg_syscall_ev e = ev("openat", VG_CLASS_READ, "/home/u/.ssh/id_rsa");
    e.probe = true;
    struct vg_pyframe py[] = {{.file = WORK "/cand.py", .func = "<module>", .line = 3}};
    e.py = py;
    e.npy = 1;
    put(log, call(e, 20, 2));
    const char *answers[] = {"10.9.8.7"};
    put(log, (struct vg_record){.type = VG_REC_DNS,
                                .u.dns = {.ts_ns = 25, .name = "pypi.org", .qtype = "A",
                                          .proto = "udp", .decision = VG_DEC_WOULD_DENY,
                                          .rule = {.text = "no allow rule names this host"},
                                          .rcode = "NOERROR", .answers = answers,
                                          .nanswers = 1}});
    e = ev("connect", VG_CLASS_CONNECT, NULL);
    e.args.family = "inet";
    e.args.proto = "tcp";
    e.args.addr = "10.9.8.7";
    e.args.port = 443;
    e.args.host = "pypi.org";
    put(log, call(e, 30, 2));
    e = ev("execve", VG_CLASS_EXEC, "/usr/bin/curl");
    e.args.exe = "/usr/bin/curl";
    put(log, call(e, 40, 3));
    put(log, (struct vg_record){.type = VG_REC_PROC,
                                .u.proc = {.ts_ns = 41, .kind = VG_PROC_EXEC, .pid = 3,
                                           .exe = "/usr/bin/curl"}});
    if (trailer)
        put(log, (struct vg_record){.type = VG_REC_TRAILER,
                                    .u.trailer = {.ts_ns = 50, .status = "ok"}});
    if (vg_log_close(log) < 0)
        exit(2);
}

static char *write_policy(const char *name, const char *text)
{
    char *path = vg_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        exit(2);
    return path;
}

static const struct vg_recheck_change *change_at(const struct vg_recheck_run *r, uint64_t ts,
                                                 enum vg_recheck_kind kind)
{
    for (size_t i = 0; i < r->nchanges; i++)
        if (r->changes[i].ts_ns == ts && r->changes[i].kind == kind)
            return &r->changes[i];
    return NULL;
}

static void test_log(void)
{
    if (!mkdtemp(dir))
        exit(2);
    char *log = vg_xasprintf("%s/run.msgpack", dir);
    write_log(log, true);
    char *pol = write_policy("new.policy", "version 1\ndefault allow\n"
                                           "deny read ~/**\n"                       /* 3 */
                                           "allow connect tcp pypi.org:443\n"       /* 4 */
                                           "deny connect tcp *:*\n"                 /* 5 */
                                           "kill exec /usr/bin/curl\n");            /* 6 */
    struct vg_recheck_opts o = {.policy = pol, .home = "/home/u"};
    struct vg_recheck_run r;
    struct vg_err err;
    CHECK(vg_recheck_policy_check(&o, &err) == 0);
    CHECK(vg_recheck_log(&o, log, &r, &err) == 0);
    CHECK(r.dry_run && !r.truncated && r.decided == 6);
    /* /etc/hostname: unchanged, no change listed */
    CHECK(!change_at(&r, 10, VG_RK_CALL));
    const struct vg_recheck_change *c = change_at(&r, 20, VG_RK_CALL);
    CHECK(c && c->old_dec == VG_DEC_ALLOW && c->new_dec == VG_DEC_WOULD_DENY && c->probe);
    CHECK(c && c->new_rule.line == 3 && streq(c->source, "cand.py:3 in <module>"));
    /* the name is one an allow rule names now; the address it was
     * handed out for matches that rule */
    c = change_at(&r, 25, VG_RK_NAME);
    CHECK(c && c->old_dec == VG_DEC_WOULD_DENY && c->new_dec == VG_DEC_ALLOW);
    CHECK(!change_at(&r, 30, VG_RK_CALL));
    c = change_at(&r, 40, VG_RK_CALL);
    CHECK(c && c->new_dec == VG_DEC_WOULD_KILL && c->new_rule.line == 6);
    c = change_at(&r, 41, VG_RK_EXEC_CHECK);
    CHECK(c && c->new_dec == VG_DEC_WOULD_KILL);
    CHECK(r.killed && r.kill_seq == 5 && !vg_recheck_passes(&r));
    CHECK(r.first_refused_seq == 5); /* the probe at 2 fails ENOENT either way */
    CHECK(r.refused == 1 && r.refused_probes == 1 && r.to_refused == 3 && r.to_allowed == 1);
    struct vg_buf b = {0};
    vg_recheck_verdict(&r, &b);
    CHECK(b.data && strstr(b.data, "would be killed at +0.000 (exec /usr/bin/curl"));
    vg_buf_free(&b);
    vg_recheck_json(&r, &b);
    CHECK(b.data && strstr(b.data, "\"kind\":\"exec-check\"") && strstr(b.data, "\"passes\":false"));
    vg_buf_free(&b);
    vg_recheck_run_free(&r);

    /* the old policy is not at hand, and the log was cut: both said */
    write_log(log, false);
    CHECK(vg_recheck_log(&o, log, &r, &err) == 0);
    CHECK(r.truncated && r.nunknown >= 1);
    bool said = false;
    for (size_t i = 0; i < r.nunknown; i++)
        said |= strstr(r.unknown[i], "no trailer") != NULL;
    CHECK(said);
    vg_recheck_run_free(&r);

    /* what is not a log is an error naming it */
    char *none = vg_xasprintf("%s/none.msgpack", dir);
    CHECK(vg_recheck_log(&o, none, &r, &err) < 0 && strstr(err.msg, "none.msgpack"));
    vg_recheck_run_free(&r);
    char *bad = write_policy("bad.policy", "version 1\nallow read\n");
    o.policy = bad;
    CHECK(vg_recheck_policy_check(&o, &err) < 0 && strstr(err.msg, "bad.policy:2"));
    free(none);
    free(bad);
    free(pol);
    free(log);
    check_rmtree(dir);
}

int main(void)
{
    test_paths();
    test_reasons();
    test_addresses();
    test_facts();
    test_decisions();
    test_log();
    return check_done();
}
