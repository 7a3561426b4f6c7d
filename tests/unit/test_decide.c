/* test_decide.c: the decider (core/decide.h) as a table: policy x call x
 * what the files and the network look like (faked views) -> decision,
 * errno and rule.  No sandbox, no tracee: every guarantee the decider
 * makes is a row here.  Then every decoded row of the syscall table gets
 * an allowed and a refused call (the baseline's rows: refused in every
 * mode), the DNS names and the exec check. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "core/decide.h"
#include "policy/dns_table.h"
#include "tests/unit/check.h"
#include "tests/unit/policy_text.h"

#define RENAME_EXCHANGE_FLAG 2 /* linux/fs.h */
#define MAX_NODES 64
#define MAX_DESTS 4

/* ---- the policy every row uses unless it brings its own ---- */


/* Line numbers matter: rows name the rule that decides by its line. */
static const char std_policy[] =
    "version 1\n"                                              /* 1 */
    "default deny\n"                                           /* 2 */
    "deny read $WORK/data/private/** /proc/*/environ\n"        /* 3 */
    "kill read ~/.aws/**\n"                                    /* 4 */
    "allow read /usr/** /etc/** $WORK/** /proc/** $TMP/**\n"   /* 5 */
    "allow write $WORK/** $TMP/**\n"                           /* 6 */
    "kill write /etc/shadow\n"                                 /* 7 */
    "allow exec /usr/bin/python3 /usr/bin/{ls,cat} /usr/lib/[a-c]?.so\n" /* 8 */
    "kill exec /usr/bin/nc\n"                                  /* 9 */
    "allow connect tcp 127.0.0.1:8000 tcp pypi.org:443 unix /run/x.sock\n" /* 10 */
    "kill connect tcp 169.254.169.254:*\n"                     /* 11 */
    "allow connect udp 224.0.0.251:5353\n"                     /* 12 */
    "allow send udp 10.0.0.0/8:53 udp *:9999\n"                /* 13 */
    "allow bind tcp 127.0.0.1:* unix @abs*\n";                 /* 14 */

/* ---- the faked world ---- */

/* "d:/path" a directory, "f:/path" a file (inode: its place in the
 * list); "!" alone: every look fails (EIO), nothing is known. */
static const char std_fs[] =
    "d:/work/cand d:/work/cand/data d:/work/cand/data/private f:/work/cand/data/private/key "
    "f:/work/cand/a.py f:/work/cand/data/x.csv d:/etc f:/etc/passwd f:/etc/shadow d:/usr "
    "d:/usr/bin f:/usr/bin/python3 f:/usr/bin/curl f:/usr/bin/nc f:/usr/bin/ls d:/home/u "
    "d:/home/u/.ssh f:/home/u/.ssh/id_rsa d:/home/u/.aws f:/home/u/.aws/credentials "
    "f:/home/u/cand.py f:/home/u/a.out d:/tmp d:/proc d:/proc/1 f:/proc/1/environ "
    "f:/proc/1/status d:/run f:/run/x.sock";

struct fake_fs {
    bool unknown;
    unsigned n;
    struct {
        char path[64];
        bool dir;
    } node[MAX_NODES];
};

static void fake_fs_load(struct fake_fs *fs, const char *spec)
{
    memset(fs, 0, sizeof *fs);
    if (!strcmp(spec, "!")) {
        fs->unknown = true;
        return;
    }
    char buf[sizeof std_fs];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save, *w = strtok_r(buf, " ", &save); w && fs->n < MAX_NODES;
         w = strtok_r(NULL, " ", &save)) {
        fs->node[fs->n].dir = w[0] == 'd';
        snprintf(fs->node[fs->n].path, sizeof fs->node[fs->n].path, "%s", w + 2);
        fs->n++;
    }
}

static int fake_stat(void *arg, const char *path, bool follow, struct vg_fs_node *out)
{
    const struct fake_fs *fs = arg;
    (void)follow; /* the fake world has no symlinks */
    if (fs->unknown)
        return EIO;
    for (unsigned i = 0; i < fs->n; i++)
        if (!strcmp(fs->node[i].path, path)) {
            *out = (struct vg_fs_node){.dir = fs->node[i].dir, .dev = 1, .ino = i + 1,
                                       .ctime = {.tv_sec = 1}};
            return 0;
        }
    return ENOENT;
}

/* Multicast and the limited broadcast, as net/hostaddr.c knows them. */
static bool fake_special(void *arg, const struct vg_ip *ip)
{
    (void)arg;
    static const uint8_t multicast_lo = 224, multicast_hi = 239, all = 255;
    return !ip->v6 && ((ip->a[0] >= multicast_lo && ip->a[0] <= multicast_hi) ||
                       (ip->a[0] == all && ip->a[1] == all && ip->a[2] == all && ip->a[3] == all));
}

static const char *fake_name_of(void *arg, const struct vg_ip *ip, struct vg_arena *a)
{
    char name[VG_DNS_NAME_MAX + 1];
    return vg_dns_table_name(arg, ip, name, sizeof name) ? vg_arena_strdup(a, name) : NULL;
}

/* ---- calls ---- */

/* "tcp 127.0.0.1:80", "udp [::1]:53", "unix /run/x.sock", "unix @name" */
static bool parse_addr(const char *spec, const char **proto, struct sockaddr_storage *ss,
                       socklen_t *len)
{
    static const char *const protos[] = {"tcp", "udp", "unix"};
    char buf[128];
    snprintf(buf, sizeof buf, "%s", spec);
    char *sp = strchr(buf, ' ');
    if (!sp)
        return false;
    *sp = 0;
    const char *addr = sp + 1;
    *proto = NULL;
    for (size_t i = 0; i < VG_ARRAY_LEN(protos); i++)
        if (!strcmp(buf, protos[i]))
            *proto = protos[i];
    memset(ss, 0, sizeof *ss);
    if (*proto && !strcmp(*proto, "unix")) {
        struct sockaddr_un *un = (struct sockaddr_un *)ss;
        un->sun_family = AF_UNIX;
        bool abstract = addr[0] == '@';
        memcpy(un->sun_path + abstract, addr + abstract, strlen(addr + abstract));
        un->sun_path[0] = abstract ? 0 : un->sun_path[0];
        *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(addr) + !abstract);
        return true;
    }
    char *colon = strrchr(sp + 1, ':');
    if (!*proto || !colon)
        return false;
    *colon = 0;
    uint16_t port = (uint16_t)atoi(colon + 1);
    if (addr[0] == '[') {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
        char host[64];
        snprintf(host, sizeof host, "%.*s", (int)strlen(addr) - 2, addr + 1);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        *len = sizeof *in6;
        return inet_pton(AF_INET6, host, &in6->sin6_addr) == 1;
    }
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    *len = sizeof *in;
    return inet_pton(AF_INET, addr, &in->sin_addr) == 1;
}

#define AS(c) (VG_CLASS_##c + 1) /* a row's class, when not the table row's own */

/* One case.  What is not said is the common case: the standard policy and
 * files, every class audited, enforcing, a run with a resolver. */
struct row {
    const char *what;
    const char *pol;
    int nr;
    int cls;                  /* AS(...): the class the decoder gave (open's flags) */
    const char *path, *path2;
    int64_t flags;            /* 0: none */
    const char *addr;         /* one address: "PROTO ADDRESS" */
    const char *dests[MAX_DESTS]; /* sendmmsg: its destinations */
    const char *undecidable;
    int deny_errno;           /* 0: the table row's */
    bool on_fd, missing, no_sa, argv_bad;
    const char *fs;           /* the files (fake_fs_load); NULL: std_fs */
    bool dry, unaudited, no_resolver;
    const char *names;        /* "NAME=IP ...": what the resolver handed out */
    const char *artifact, *command;
    bool command_seen;        /* the candidate's first exec is past ... */
    const char *command_was;  /* ... and the command was this file then (NULL: unknown) */
    const char *masked;
    /* what must come out */
    enum vg_decision want;
    int err;                  /* for refusals; 0: the call's deny errno */
    const char *rule;         /* ":N" the policy's line N, else a part of rule_text */
    bool no_record, probe, is_masked;
    const char *host;         /* args.host */
    int dest_at;              /* sendmmsg: which destination decided (+1) */
};

struct world {
    struct vg_policy *pol;
    struct fake_fs fs;
    struct vg_fs_view fs_view;
    struct vg_dns_table names;
    struct vg_resolver res;
    struct vg_net_view net;
    bool audited[VG_CLASS_NCLASSES];
    struct vg_command_id cmd;
    const char *artifacts[1], *masked[1];
    struct vg_decide_ctx d;
};

static void add_names(struct vg_dns_table *t, const char *spec)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec ? spec : "");
    for (char *save, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(w, '=');
        struct vg_ip ip = {.prefix = 32};
        if (!eq || inet_pton(AF_INET, eq + 1, ip.a) != 1) {
            fprintf(stderr, "bad name spec %s\n", w);
            exit(2);
        }
        *eq = 0;
        CHECK(vg_dns_table_add(t, w, &ip, 1));
    }
}

static void world_open(struct world *w, const struct row *r)
{
    memset(w, 0, sizeof *w);
    w->pol = pol(r->pol ? r->pol : std_policy);
    fake_fs_load(&w->fs, r->fs ? r->fs : std_fs);
    w->fs_view = (struct vg_fs_view){.stat = fake_stat, .arg = &w->fs};
    vg_dns_table_init(&w->names);
    add_names(&w->names, r->names);
    static const struct vg_rule_src resolver_rule = {
        .file = "(vigil)", .text = "allow send udp 127.0.0.53:53: vigil's resolver"};
    w->res = (struct vg_resolver){
        .addr = {.family = AF_INET, .port = 53, .ip = {.a = {127, 0, 0, 53}, .prefix = 32}},
        .rule = &resolver_rule};
    w->net = (struct vg_net_view){.special = fake_special, .name_of = fake_name_of,
                                  .arg = &w->names, .names = &w->names, .resolver = &w->res};
    if (r->no_resolver)
        w->net = (struct vg_net_view){.special = fake_special};
    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        w->audited[c] = !r->unaudited;
    w->cmd.seen = r->command_seen;
    struct vg_fs_node was;
    if (r->command_was && fake_stat(&w->fs, r->command_was, true, &was) == 0) {
        w->cmd.known = true;
        w->cmd.node = was;
    }
    w->artifacts[0] = r->artifact;
    w->masked[0] = r->masked;
    w->d = (struct vg_decide_ctx){
        .pol = w->pol, .dry_run = r->dry, .audited = w->audited,
        .artifacts = w->artifacts, .nartifacts = r->artifact ? 1 : 0,
        .command_path = r->command, .command_id = &w->cmd,
        .masked = w->masked, .nmasked = r->masked ? 1 : 0, .fs = &w->fs_view, .net = &w->net};
}

static void world_close(struct world *w)
{
    vg_dns_table_free(&w->names);
    vg_policy_free(w->pol);
}

static void set_dests(struct vg_call *c, const struct row *r)
{
    uint32_t n = 0;
    while (n < MAX_DESTS && r->dests[n])
        n++;
    if (!n)
        return;
    c->dest_sa = vg_arena_alloc(&c->arena, n * sizeof *c->dest_sa);
    c->dests = vg_arena_alloc(&c->arena, n * sizeof *c->dests);
    for (uint32_t i = 0; i < n; i++) {
        const char *proto;
        CHECK(parse_addr(r->dests[i], &proto, &c->dest_sa[i].sa, &c->dest_sa[i].len));
        c->proto = proto;
        c->dests[i] = (struct vg_dest){.family = "inet", .addr = r->dests[i], .port = -1};
    }
    c->ndests = n;
    c->has_sa = true;
    c->sa = c->dest_sa[0].sa;
    c->salen = c->dest_sa[0].len;
}

/* The call as a decoder would have left it (tracer/decode.c). */
static void make_call(const struct row *r, struct vg_call *c)
{
    memset(c, 0, sizeof *c);
    c->nr = r->nr;
    c->ent = vg_sys_lookup(r->nr);
    c->name = c->ent ? c->ent->name : "syscall_unknown";
    c->cls = r->cls ? (enum vg_class)(r->cls - 1) : c->ent ? c->ent->cls : VG_CLASS_SYSTEM;
    c->check_cls2 = c->cls;
    c->deny_errno = r->deny_errno ? r->deny_errno : c->ent ? c->ent->deny_errno : ENOSYS;
    c->args.flags = r->flags ? r->flags : -1;
    c->args.mode = c->args.port = -1;
    c->check_path = c->args.resolved = r->path;
    c->check_path2 = c->args.resolved2 = r->path2;
    if (c->cls == VG_CLASS_EXEC)
        c->args.exe = r->path;
    c->args.argv_unreadable = r->argv_bad;
    c->undecidable = r->undecidable;
    c->on_open_fd = r->on_fd;
    c->missing = r->missing;
    const char *proto = NULL;
    if (r->addr) {
        CHECK(parse_addr(r->addr, &proto, &c->sa, &c->salen));
        c->has_sa = !r->no_sa;
        c->proto = proto;
        if (!strcmp(proto, "unix") && r->addr[5] == '/')
            c->check_path = r->addr + 5; /* a pathname socket: the decoder's canonical path */
    }
    set_dests(c, r);
}

static bool rule_is(const struct vg_call_verdict *v, const char *rule)
{
    if (!rule)
        return true;
    if (!v->rule)
        return false;
    if (rule[0] == ':')
        return streq(v->rule->file, "t.policy") && v->rule->line == (uint32_t)atoi(rule + 1);
    return v->rule->text && strstr(v->rule->text, rule);
}

static bool refuses(enum vg_decision d)
{
    return d == VG_DEC_DENY || d == VG_DEC_KILL;
}

static void check_row(const struct row *r)
{
    struct world w;
    world_open(&w, r);
    struct vg_call c;
    make_call(r, &c);
    struct vg_call_verdict v;
    vg_decide(&w.d, &c, &v);
    int err = refuses(r->want) ? (r->err ? r->err : c.deny_errno) : 0;
    bool ok = v.record == !r->no_record && v.decision == r->want &&
              v.refuse == refuses(r->want) && v.kill == (r->want == VG_DEC_KILL) && v.err == err &&
              rule_is(&v, r->rule) && v.probe == r->probe && c.args.masked == r->is_masked &&
              streq(c.args.host, r->host) &&
              (!r->dest_at || streq(c.args.addr, c.dests[r->dest_at - 1].addr));
    if (!check(ok, r->what, __FILE__, __LINE__))
        fprintf(stderr, "  got record %d decision %d refuse %d kill %d err %d rule %s:%u \"%s\" "
                "probe %d masked %d host %s\n", v.record, v.decision, v.refuse, v.kill, v.err,
                v.rule && v.rule->file ? v.rule->file : "-", v.rule ? v.rule->line : 0,
                v.rule && v.rule->text ? v.rule->text : "-",
                v.probe, c.args.masked, c.args.host ? c.args.host : "-");
    vg_call_free(&c);
    world_close(&w);
}

#define ALLOW VG_DEC_ALLOW
#define DENY VG_DEC_DENY
#define KILL VG_DEC_KILL
#define WDENY VG_DEC_WOULD_DENY
#define WKILL VG_DEC_WOULD_KILL
#define NR(n) VG_NR_##n

static const struct row rows[] = {
    /* files: every action, defaults, globs */
    {"read allowed by a ** rule", .nr = NR(openat), .path = "/etc/passwd", .want = ALLOW, .rule = ":5"},
    {"read denied by a rule before the allow", .nr = NR(openat), .path = "/work/cand/data/private/key",
     .want = DENY, .err = EACCES, .rule = ":3"},
    {"read of a kill tree (~)", .nr = NR(openat), .path = "/home/u/.aws/credentials", .want = KILL,
     .err = EACCES, .rule = ":4"},
    {"read: no rule, the default", .nr = NR(openat), .path = "/home/u/.ssh/id_rsa", .want = DENY,
     .rule = "default deny"},
    {"read of a missing file: ENOENT, a probe", .nr = NR(openat), .path = "/home/u/nothing",
     .missing = true, .want = DENY, .err = ENOENT, .rule = "default deny", .probe = true},
    {"read allowed of a missing file: a probe", .nr = NR(openat), .path = "/work/cand/nothing",
     .missing = true, .want = ALLOW, .probe = true},
    {"read refused, nothing known of the file: EACCES", .nr = NR(openat), .path = "/home/u/x",
     .fs = "!", .want = DENY, .err = EACCES},
    {"write allowed ($WORK)", .nr = NR(openat), .cls = AS(WRITE), .path = "/work/cand/new.txt", .want = ALLOW,
     .rule = ":6"},
    {"write allowed ($TMP)", .nr = NR(mkdir), .path = "/tmp/d", .want = ALLOW, .rule = ":6"},
    {"write denied, parent there: EACCES", .nr = NR(openat), .cls = AS(WRITE), .path = "/etc/new",
     .want = DENY, .err = EACCES},
    {"write denied, parent missing: ENOENT, no probe", .nr = NR(openat), .cls = AS(WRITE),
     .path = "/nowhere/new", .missing = true, .want = DENY, .err = ENOENT},
    {"write to a kill rule", .nr = NR(unlink), .path = "/etc/shadow", .want = KILL, .rule = ":7"},
    /* a kill rule and mkdir: `mkdir -p` makes every ancestor, which
     * changes nothing where it exists (the kernel's EEXIST) */
    {"mkdir of a directory that exists under a kill rule: EEXIST", .nr = NR(mkdir),
     .pol = "version 1\nkill write /home/**\n", .path = "/home/u", .want = DENY, .err = EEXIST,
     .rule = ":2"},
    {"mkdirat, the same", .nr = NR(mkdirat), .pol = "version 1\nkill write /home/**\n",
     .path = "/home/u/.ssh", .want = DENY, .err = EEXIST, .rule = ":2"},
    {"mkdir of a new directory under a kill rule: killed", .nr = NR(mkdir),
     .pol = "version 1\nkill write /home/**\n", .path = "/home/u/new", .want = KILL, .rule = ":2"},
    {"mkdir over an existing file is no harmless mkdir either way: EEXIST", .nr = NR(mkdir),
     .pol = "version 1\nkill write /home/**\n", .path = "/home/u/cand.py", .want = DENY,
     .err = EEXIST, .rule = ":2"},
    {"rmdir of a directory that exists under a kill rule: killed", .nr = NR(rmdir),
     .pol = "version 1\nkill write /home/**\n", .path = "/home/u/.aws", .want = KILL, .rule = ":2"},
    {"exec allowed", .nr = NR(execve), .path = "/usr/bin/python3", .want = ALLOW, .rule = ":8"},
    {"exec allowed by {a,b}", .nr = NR(execve), .path = "/usr/bin/cat", .want = ALLOW, .rule = ":8"},
    {"exec allowed by [set]?", .nr = NR(execve), .path = "/usr/lib/b1.so", .want = ALLOW, .rule = ":8"},
    {"exec: [set] does not match", .nr = NR(execve), .path = "/usr/lib/d1.so", .want = DENY,
     .err = ENOENT},
    {"exec: ? is one character", .nr = NR(execve), .path = "/usr/lib/a12.so", .want = DENY,
     .err = ENOENT},
    {"exec denied by the default", .nr = NR(execve), .path = "/usr/bin/curl", .want = DENY,
     .rule = "default deny"},
    {"exec kill rule", .nr = NR(execveat), .path = "/usr/bin/nc", .want = KILL, .rule = ":9"},
    {"exec of a missing program: ENOENT (PATH search)", .nr = NR(execve), .path = "/usr/local/bin/x",
     .missing = true, .want = DENY, .err = ENOENT, .probe = true},
    {"a default allow policy", .pol = "version 1\ndefault allow\n", .nr = NR(openat),
     .path = "/home/u/.ssh/id_rsa", .want = ALLOW, .rule = "default allow"},
    {"a default kill for one class", .pol = "version 1\ndefault kill exec\ndefault allow\n",
     .nr = NR(execve), .path = "/usr/bin/ls", .want = KILL, .rule = "default kill"},
    {"a class nobody audits: nothing to decide", .nr = NR(openat), .path = "/home/u/.ssh/id_rsa",
     .unaudited = true, .want = ALLOW, .no_record = true},
    /* /proc: the decoder resolved the magic links; what it could not name is refused */
    {"/proc/PID/environ: a * rule", .nr = NR(openat), .path = "/proc/1/environ", .want = DENY,
     .rule = ":3"},
    {"/proc/PID/status", .nr = NR(openat), .path = "/proc/1/status", .want = ALLOW, .rule = ":5"},
    {"a magic link to a pipe", .nr = NR(openat), .path = "(unresolvable: pipe:[1234])", .want = DENY,
     .err = EACCES, .rule = "unresolvable path"},
    {"unresolvable, even in a dry run", .nr = NR(openat), .path = "(unresolvable: socket:[9])",
     .dry = true, .want = DENY, .err = EACCES, .rule = "unresolvable path"},
    {"a bad dirfd: EBADF", .nr = NR(openat), .path = "(bad fd 7)", .want = DENY, .err = EBADF},
    {"a loop: ELOOP", .nr = NR(stat), .path = "(too many links)", .want = DENY, .err = ELOOP},
    {"a name too long", .nr = NR(openat), .path = "(name too long)", .want = DENY, .err = ENAMETOOLONG},
    {"a directory the caller cannot search: EACCES", .nr = NR(unlink),
     .path = "(unresolvable: /work/cand/x: Permission denied)", .want = DENY, .err = EACCES},
    {"a second path unresolvable", .nr = NR(rename), .path = "/work/cand/a.py", .path2 = "(bad fd 3)",
     .want = DENY, .err = EBADF},
    {"an unreadable argument: undecidable, in every mode", .nr = NR(openat), .path = "(unreadable)",
     .undecidable = "unreadable: an argument could not be read", .deny_errno = EFAULT, .dry = true,
     .want = DENY, .err = EFAULT, .rule = "unreadable"},
    {"an fd's lookup: decided at open", .nr = NR(newfstatat), .path = "/etc/passwd", .on_fd = true,
     .want = ALLOW, .no_record = true},
    {"a masked path: decided as usual, marked", .nr = NR(openat), .path = "/work/cand/data/x.csv",
     .masked = "/work/cand/data", .want = ALLOW, .is_masked = true},
    {"the mask is a tree, not a prefix", .nr = NR(openat), .path = "/work/cand/database",
     .masked = "/work/cand/data", .want = ALLOW},
    /* renames and links: the new names; is_tree asks the view */
    {"rename a file within $WORK", .nr = NR(rename), .path = "/work/cand/a.py", .path2 = "/work/cand/b.py",
     .want = ALLOW},
    {"rename a tree a rule splits", .nr = NR(renameat2), .path = "/work/cand/data", .path2 = "/work/cand/data2",
     .want = DENY, .rule = "more leniently"},
    {"the same name, a file: nothing to split", .nr = NR(renameat2), .path = "/work/cand/data",
     .path2 = "/work/cand/data2", .fs = "f:/work/cand/data", .want = ALLOW},
    {"the same name, nothing known: a tree", .nr = NR(renameat), .path = "/work/cand/data",
     .path2 = "/work/cand/data2", .fs = "!", .want = DENY, .err = EACCES, .rule = "more leniently"},
    {"rename out of a denied tree", .nr = NR(rename), .path = "/work/cand/data/private/key",
     .path2 = "/work/cand/key", .want = DENY, .rule = "more leniently"},
    {"rename into a stricter place", .nr = NR(rename), .path = "/work/cand/a.py",
     .path2 = "/work/cand/data/private/a.py", .want = ALLOW},
    {"RENAME_EXCHANGE: both ways", .nr = NR(renameat2), .path = "/work/cand/a.py",
     .path2 = "/work/cand/data/private/key", .flags = RENAME_EXCHANGE_FLAG, .want = DENY,
     .rule = "more leniently"},
    {"rename to where writes are denied", .nr = NR(rename), .path = "/work/cand/a.py", .path2 = "/etc/a.py",
     .want = DENY, .rule = "default deny"},
    {"link within $WORK", .nr = NR(link), .path = "/work/cand/a.py", .path2 = "/work/cand/b.py", .want = ALLOW},
    {"link a secret to a lenient name", .nr = NR(linkat), .path = "/work/cand/data/private/key",
     .path2 = "/work/cand/k", .want = DENY, .rule = "more leniently"},
    {"a refused rename in a dry run", .nr = NR(rename), .path = "/work/cand/data/private/key",
     .path2 = "/work/cand/key", .dry = true, .want = WDENY, .rule = "more leniently"},
    /* the files named on the command line */
    {"an artifact is readable", .nr = NR(openat), .path = "/home/u/cand.py",
     .artifact = "/home/u/cand.py", .want = ALLOW, .rule = "command line"},
    {"an artifact is not writable", .nr = NR(openat), .cls = AS(WRITE), .path = "/home/u/cand.py",
     .artifact = "/home/u/cand.py", .want = DENY, .rule = "default deny"},
    {"the command, at vigil's own first exec", .nr = NR(execve), .path = "/home/u/a.out",
     .command = "/home/u/a.out", .want = ALLOW, .rule = "command line"},
    {"the command again, the very file", .nr = NR(execve), .path = "/home/u/a.out",
     .command = "/home/u/a.out", .command_seen = true, .command_was = "/home/u/a.out",
     .want = ALLOW, .rule = "command line"},
    {"the command's path, another file now", .nr = NR(execve), .path = "/home/u/a.out",
     .command = "/home/u/a.out", .command_seen = true, .command_was = "/home/u/cand.py",
     .want = DENY, .rule = "default deny"},
    {"the command, its first exec was not it", .nr = NR(execve), .path = "/home/u/a.out",
     .command = "/home/u/a.out", .command_seen = true, .want = DENY},
    /* exec arguments */
    {"argv too long: E2BIG in every mode", .nr = NR(execve), .path = "/usr/bin/python3",
     .argv_bad = true, .deny_errno = E2BIG, .dry = true, .want = DENY, .err = E2BIG,
     .rule = "too long"},
    {"argv unreadable: EFAULT", .nr = NR(execve), .path = "/usr/bin/python3", .argv_bad = true,
     .deny_errno = EFAULT, .want = DENY, .err = EFAULT, .rule = "unreadable"},
    /* the network: addresses */
    {"connect to a rule's address", .nr = NR(connect), .addr = "tcp 127.0.0.1:8000", .want = ALLOW,
     .rule = ":10"},
    {"connect to another port", .nr = NR(connect), .addr = "tcp 127.0.0.1:8001", .want = DENY,
     .err = ECONNREFUSED, .rule = "default deny"},
    {"connect: udp is not tcp", .nr = NR(connect), .addr = "udp 127.0.0.1:8000", .want = DENY},
    {"connect to a kill network", .nr = NR(connect), .addr = "tcp 169.254.169.254:80", .want = KILL,
     .rule = ":11"},
    {"a v4-mapped address matches the v4 rule", .nr = NR(connect),
     .addr = "tcp [::ffff:127.0.0.1]:8000", .want = ALLOW, .rule = ":10"},
    {"::1 is not 127.0.0.1", .nr = NR(connect), .addr = "tcp [::1]:8000", .want = DENY},
    {"a unix socket path", .nr = NR(connect), .addr = "unix /run/x.sock", .want = ALLOW, .rule = ":10"},
    {"another unix socket", .nr = NR(connect), .addr = "unix /run/y.sock", .want = DENY},
    {"bind an abstract socket (glob)", .nr = NR(bind), .addr = "unix @abs1", .want = ALLOW,
     .rule = ":14"},
    {"bind loopback, any port", .nr = NR(bind), .addr = "tcp 127.0.0.1:5000", .want = ALLOW,
     .rule = ":14"},
    {"bind every address", .nr = NR(bind), .addr = "tcp 0.0.0.0:5000", .want = DENY},
    {"send to a network", .nr = NR(sendto), .addr = "udp 10.1.2.3:53", .want = ALLOW, .rule = ":13"},
    {"send elsewhere", .nr = NR(sendto), .addr = "udp 8.8.8.8:53", .want = DENY},
    {"send on a connected socket: decided at connect", .nr = NR(sendto), .addr = "udp 8.8.8.8:53",
     .no_sa = true, .want = ALLOW, .no_record = true},
    {"a refused connect in a dry run", .nr = NR(connect), .addr = "tcp 10.9.9.9:80", .dry = true,
     .want = WDENY},
    {"a kill in a dry run", .nr = NR(connect), .addr = "tcp 169.254.169.254:80", .dry = true,
     .want = WKILL, .rule = ":11"},
    /* multicast and broadcast: only a rule naming the address exactly */
    {"multicast named exactly", .nr = NR(connect), .addr = "udp 224.0.0.251:5353", .want = ALLOW,
     .rule = ":12"},
    {"multicast under a wide rule", .nr = NR(sendto), .addr = "udp 224.0.0.1:9999", .want = DENY,
     .rule = "multicast"},
    {"the limited broadcast under a wide rule", .nr = NR(sendto), .addr = "udp 255.255.255.255:9999",
     .want = DENY, .rule = "broadcast"},
    {"the same port, one host: the wide rule", .nr = NR(sendto), .addr = "udp 192.0.2.1:9999",
     .want = ALLOW, .rule = ":13"},
    /* vigil's resolver, host names */
    {"the resolver is always reachable", .nr = NR(sendto), .addr = "udp 127.0.0.53:53",
     .want = ALLOW, .rule = "resolver"},
    {"no resolver in this run: the policy decides", .nr = NR(sendto), .addr = "udp 127.0.0.53:53",
     .no_resolver = true, .want = DENY, .rule = "default deny"},
    {"the resolver's address over tcp is not it", .nr = NR(connect), .addr = "tcp 127.0.0.53:53",
     .want = DENY},
    {"a host-name rule matches an address handed out for the name", .nr = NR(connect),
     .addr = "tcp 151.101.0.223:443", .names = "pypi.org=151.101.0.223", .want = ALLOW,
     .rule = ":10", .host = "pypi.org"},
    {"an address not handed out matches no host rule", .nr = NR(connect),
     .addr = "tcp 151.101.0.223:443", .want = DENY},
    {"handed out for another name", .nr = NR(connect), .addr = "tcp 151.101.0.223:443",
     .names = "evil.org=151.101.0.223", .want = DENY, .host = "evil.org"},
    {"no resolver: no names", .nr = NR(connect), .addr = "tcp 151.101.0.223:443",
     .names = "pypi.org=151.101.0.223", .no_resolver = true, .want = DENY},
    /* sendmmsg: every destination, the strictest decides */
    {"sendmmsg, every destination allowed", .nr = NR(sendmmsg),
     .dests = {"udp 10.1.1.1:53", "udp 10.2.2.2:53"}, .want = ALLOW, .dest_at = 1},
    {"sendmmsg, one destination refused refuses the call", .nr = NR(sendmmsg),
     .dests = {"udp 10.1.1.1:53", "udp 8.8.8.8:53", "udp 10.3.3.3:53"}, .want = DENY,
     .dest_at = 2},
    {"sendmmsg, a kill outranks a deny", .nr = NR(sendmmsg),
     .pol = "version 1\nkill send udp 9.9.9.9:*\n",
     .dests = {"udp 8.8.8.8:53", "udp 9.9.9.9:53"}, .want = KILL, .dest_at = 2},
    /* the baseline and the unknown */
    {"a baseline call", .nr = NR(ptrace), .want = DENY, .rule = "baseline: ptrace"},
    {"a baseline call in a dry run", .nr = NR(mount), .dry = true, .want = DENY,
     .rule = "baseline: mount"},
    {"the baseline under default allow", .pol = "version 1\ndefault allow\n", .nr = NR(bpf),
     .want = DENY, .rule = "baseline"},
    {"a number with no row: ENOSYS", .nr = 1000, .want = DENY, .err = ENOSYS, .rule = "baseline"},
};

/* ---- every decoded row of the syscall table ---- */

/* An allowed and a refused call for a row, by what the row is. */
struct by_class {
    enum vg_class cls;
    const char *allow_path, *deny_path;
    const char *allow_addr, *deny_addr;
};

static const struct by_class by_class[] = {
    {VG_CLASS_READ, "/work/cand/a.py", "/work/cand/data/private/key", NULL, NULL},
    {VG_CLASS_WRITE, "/work/cand/a.py", "/etc/passwd", NULL, NULL},
    {VG_CLASS_EXEC, "/usr/bin/python3", "/usr/bin/curl", NULL, NULL},
    {VG_CLASS_CONNECT, NULL, NULL, "tcp 127.0.0.1:8000", "tcp 10.9.9.9:80"},
    {VG_CLASS_BIND, NULL, NULL, "tcp 127.0.0.1:5000", "tcp 0.0.0.0:5000"},
    {VG_CLASS_SEND, NULL, NULL, "udp 10.1.2.3:53", "udp 8.8.8.8:53"},
};

static const struct by_class *class_case(enum vg_class cls)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(by_class); i++)
        if (by_class[i].cls == cls)
            return &by_class[i];
    return NULL;
}

/* A row for table entry e, allowed or not. */
static bool table_row(const struct vg_sysent *e, bool allow, bool dry, struct row *r)
{
    *r = (struct row){.what = e->name, .nr = e->nr, .dry = dry};
    if (e->flags & VG_SF_BASELINE) {
        /* never allowed: refused in every mode */
        r->want = DENY;
        r->rule = "baseline";
        return !allow;
    }
    const struct by_class *k = class_case(e->cls);
    if (!k)
        return false;
    r->path = allow ? k->allow_path : k->deny_path;
    r->addr = allow ? k->allow_addr : k->deny_addr;
    /* the second name of a two-path row: in the same place */
    if (e->pos.path2 && r->path)
        r->path2 = allow ? "/work/cand/b.py" : "/etc/x";
    r->want = allow ? ALLOW : dry ? WDENY : DENY;
    return true;
}

static void test_every_table_row(void)
{
    unsigned rows_done = 0;
    for (unsigned i = 0; i < vg_sys_count; i++) {
        const struct vg_sysent *e = &vg_sys_table[i];
        unsigned cases = 0;
        for (int allow = 0; allow < 2; allow++)
            for (int dry = 0; dry < 2; dry++) {
                struct row r;
                if (!table_row(e, allow, dry, &r))
                    continue;
                check_row(&r);
                cases++;
            }
        /* at least one allow and one deny; a baseline row two refusals */
        if (!check(cases >= 2, e->name, __FILE__, __LINE__))
            fprintf(stderr, "  no cases for %s (class %d)\n", e->name, e->cls);
        rows_done++;
    }
    CHECK(rows_done == vg_sys_count && rows_done > 0);
}

/* ---- DNS names ---- */

static const struct {
    const char *name;
    bool dry;
    enum vg_decision want;
    const char *rule;
} names[] = {
    {"pypi.org", false, ALLOW, ":10"},
    {"files.pypi.org", false, DENY, "no allow rule names this host"},
    {"example.org", false, DENY, "no allow rule names this host"},
    {"example.org", true, WDENY, "no allow rule names this host"},
    {NULL, false, DENY, "malformed query"},
    {NULL, true, DENY, "malformed query"},
};

static void test_names(void)
{
    struct vg_policy *p = pol(std_policy);
    for (size_t i = 0; i < VG_ARRAY_LEN(names); i++) {
        struct vg_decide_ctx d = {.pol = p, .dry_run = names[i].dry};
        struct vg_call_verdict v;
        vg_decide_name(&d, names[i].name, &v);
        if (!CHECK(v.decision == names[i].want && v.refuse == (names[i].want == DENY) &&
                   rule_is(&v, names[i].rule)))
            fprintf(stderr, "  name %s: decision %d rule %s\n", names[i].name, v.decision,
                    v.rule ? v.rule->text : "-");
    }
    vg_policy_free(p);
}

/* ---- the exec check ---- */

static const struct {
    const char *what;
    const char *exe;          /* NULL: /proc/PID/exe could not be read */
    const char *as;           /* the file it is (its node); NULL: exe */
    bool command_seen, dry, unaudited;
    enum vg_decision want;
    bool no_record;
} images[] = {
    {"an allowed image", "/usr/bin/python3", NULL, false, false, false, ALLOW, false},
    {"a #! interpreter not allowed", "/usr/bin/curl", NULL, false, false, false, KILL, false},
    {"a deny rule kills too: the exec happened", "/usr/bin/curl", NULL, false, false, false, KILL, false},
    {"a dry run: would-kill", "/usr/bin/curl", NULL, false, true, false, WKILL, false},
    {"unreadable: killed in every mode", NULL, NULL, false, true, false, KILL, false},
    {"exec not audited", "/usr/bin/curl", NULL, false, false, true, ALLOW, true},
    {"the command file itself", "/home/u/a.out", NULL, true, false, false, ALLOW, false},
    {"the command's path, another file", "/home/u/a.out", "/home/u/cand.py", true, false, false,
     KILL, false},
};

static void test_exec_image(void)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(images); i++) {
        struct row r = {.command = "/home/u/a.out", .command_seen = images[i].command_seen,
                        .command_was = "/home/u/a.out", .dry = images[i].dry,
                        .unaudited = images[i].unaudited};
        struct world w;
        world_open(&w, &r);
        struct vg_fs_node node;
        const char *as = images[i].as ? images[i].as : images[i].exe;
        bool found = as && fake_stat(&w.fs, as, true, &node) == 0;
        struct vg_exec_image img = {.exe = images[i].exe, .node = found ? &node : NULL};
        struct vg_call_verdict v;
        vg_decide_exec(&w.d, &img, &v);
        CHECK(!v.refuse);
        if (!check(v.decision == images[i].want && v.record == !images[i].no_record &&
                       v.kill == (images[i].want == KILL),
                   images[i].what, __FILE__, __LINE__))
            fprintf(stderr, "  got decision %d record %d kill %d\n", v.decision, v.record, v.kill);
        world_close(&w);
    }
}

/* A rule's identity is the value the parser made: the verdict points at
 * it, it is not a copy. */
static void test_rule_identity(void)
{
    const struct row r = {"identity", .nr = NR(openat), .path = "/etc/passwd"};
    struct world w;
    world_open(&w, &r);
    struct vg_call c;
    make_call(&r, &c);
    struct vg_call_verdict v;
    vg_decide(&w.d, &c, &v);
    struct vg_verdict pv = vg_policy_decide_path(w.pol, VG_CLASS_READ, "/etc/passwd");
    CHECK(pv.rule && v.rule == pv.rule);
    vg_call_free(&c);
    world_close(&w);
}

int main(void)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(rows); i++)
        check_row(&rows[i]);
    test_every_table_row();
    test_names();
    test_exec_image();
    test_rule_identity();
    return check_done();
}
