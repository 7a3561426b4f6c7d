/* genlog.c: write a realistic synthetic run log through the real writer.
 *   genlog OUT N [--seed S] [--truncate]
 * N records in all: a header, N-2 events, a trailer.  The events are a
 * process tree of up to 20 processes (start, exec, exit) and a weighted mix
 * of syscall decisions of every class and decision (stdlib opens, the ssh
 * key refused, /tmp writes, connects to 93.184.216.34:443 refused, curl
 * refused, with stacks on refusals) plus a few notes.  --truncate leaves the
 * trailer out and cuts the last record in half, like a killed supervisor.
 * Same N and seed, same bytes (apart from nothing: no clocks are read). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "event/writer.h"

#define MAXPROC 20

static uint64_t rng_state;
static uint64_t rnd(void) /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static unsigned pick(unsigned n) { return (unsigned)(rnd() % n); }

static const char policy_text[] =
    "version 1\n"
    "# python.policy: what a data-science candidate may do\n"
    "include default.policy\n"
    "read  /usr/lib/python3*/**\n"
    "read  /work/**\n"
    "write /tmp/**\n"
    "write /work/out/**\n"
    "exec  /usr/bin/python3*\n"
    "connect tcp 127.0.0.1:5432\n"
    "bind  udp 127.0.0.1:8080\n"
    "deny  read ~/.ssh/**\n";

static const char *const stdlib[] = {
    "os", "re", "json/__init__", "json/decoder", "collections/__init__", "functools",
    "typing", "pathlib", "subprocess", "socket", "ssl", "encodings/utf_8", "abc",
    "codecs", "io", "stat", "posixpath", "genericpath", "enum", "types", "weakref",
    "datetime", "decimal", "random", "hashlib", "base64", "struct", "tempfile",
};

static const char *const ro_flags[] = {"O_RDONLY", "O_CLOEXEC"};
static const char *const wr_flags[] = {"O_WRONLY", "O_CREAT", "O_TRUNC", "O_CLOEXEC"};
static const char *const curl_argv[] = {"curl", "-s", "-o", "/tmp/x", "https://example.com/payload.sh"};
static const char *const py_argv[] = {"python3", "-c", "import sys; print(sys.version)"};
static const char *const env_names[] = {"PATH", "HOME", "LANG", "PYTHONPATH"};
static const char *const cand_argv[] = {"python3", "solution.py", "--input", "data.csv"};

/* One kind of audited call; fill completes what is specific. */
struct tmpl {
    unsigned weight;
    int nr;
    const char *name;
    enum vg_class cls;
    enum vg_decision dec;
    int err;
    struct vg_rule_src rule; /* file NULL: the default decided */
    void (*fill)(struct vg_args *a, char *scratch, size_t n);
};

static void f_stdlib(struct vg_args *a, char *s, size_t n)
{
    snprintf(s, n, "/usr/lib/python3.11/%s.py", stdlib[pick(VG_ARRAY_LEN(stdlib))]);
    a->path = a->resolved = s;
    a->flag_names = ro_flags;
    a->nflags = 2;
    a->flags = 02000000;
}
static void f_stat(struct vg_args *a, char *s, size_t n)
{
    snprintf(s, n, "/usr/lib/python3.11/__pycache__/%s.cpython-311.pyc", stdlib[pick(VG_ARRAY_LEN(stdlib))]);
    a->path = a->resolved = s;
}
static void f_sshkey(struct vg_args *a, char *s, size_t n)
{
    (void)s; (void)n;
    a->path = "../../home/u/.ssh/id_rsa";
    a->resolved = "/home/u/.ssh/id_rsa";
    a->flag_names = ro_flags;
    a->nflags = 1;
    a->flags = 0;
}
static void f_tmpwrite(struct vg_args *a, char *s, size_t n)
{
    snprintf(s, n, "/tmp/out-%u.txt", pick(1000));
    a->path = a->resolved = s;
    a->flag_names = wr_flags;
    a->nflags = 4;
    a->flags = 01 | 0100 | 01000 | 02000000;
    a->mode = 0644;
}
static void f_oddname(struct vg_args *a, char *s, size_t n)
{
    snprintf(s, n, "/tmp/caf\xe9-%u \"quoted\"\n.txt", pick(10)); /* latin-1, not UTF-8 */
    a->path = a->resolved = s;
    a->flag_names = wr_flags;
    a->nflags = 2;
    a->flags = 0101;
    a->mode = 0600;
}
static void f_tmppath(struct vg_args *a, char *s, size_t n)
{
    snprintf(s, n, "/tmp/out-%u.txt", pick(1000));
    a->path = a->resolved = s;
}
static void f_rename(struct vg_args *a, char *s, size_t n)
{
    snprintf(s, n, "/tmp/out-%u.txt", pick(1000));
    a->path = a->resolved = s;
    a->path2 = a->resolved2 = "/work/out/result.txt";
}
static void f_passwd(struct vg_args *a, char *s, size_t n)
{
    (void)s; (void)n;
    a->path = a->resolved = "/etc/passwd";
    a->flag_names = wr_flags;
    a->nflags = 1;
    a->flags = 01;
}
static void f_curl(struct vg_args *a, char *s, size_t n)
{
    (void)s; (void)n;
    a->path = "curl";
    a->exe = "/usr/bin/curl";
    a->argv = curl_argv;
    a->argc = VG_ARRAY_LEN(curl_argv);
    a->env_names = env_names;
    a->nenv = VG_ARRAY_LEN(env_names);
}
static void f_python(struct vg_args *a, char *s, size_t n)
{
    (void)s; (void)n;
    a->path = a->exe = "/usr/bin/python3.11";
    a->argv = py_argv;
    a->argc = VG_ARRAY_LEN(py_argv);
    a->env_names = env_names;
    a->nenv = 3;
}
static void net(struct vg_args *a, const char *fam, const char *proto, const char *addr, int port)
{
    a->family = fam;
    a->proto = proto;
    a->addr = addr;
    a->port = port;
}
static void f_example(struct vg_args *a, char *s, size_t n) { (void)s; (void)n; net(a, "inet", "tcp", "93.184.216.34", 443); }
static void f_example6(struct vg_args *a, char *s, size_t n) { (void)s; (void)n; net(a, "inet6", "tcp", "2606:2800:220:1:248:1893:25c8:1946", 443); }
static void f_pg(struct vg_args *a, char *s, size_t n) { (void)s; (void)n; net(a, "inet", "tcp", "127.0.0.1", 5432); }
static void f_unix(struct vg_args *a, char *s, size_t n) { (void)s; (void)n; net(a, "unix", "unix", "/run/dbus/system_bus_socket", -1); }
static void f_bind(struct vg_args *a, char *s, size_t n) { (void)s; (void)n; net(a, "inet", "udp", "127.0.0.1", 8080); }
static void f_dns(struct vg_args *a, char *s, size_t n) { (void)s; (void)n; net(a, "inet", "udp", "8.8.8.8", 53); }
static void f_none(struct vg_args *a, char *s, size_t n) { (void)a; (void)s; (void)n; }

#define PP "/work/policies/python.policy"
/* a call's number and name, from the syscall table */
#define SYS(name) VG_NR_##name, #name
static const struct tmpl tmpls[] = {
    {400, SYS(openat), VG_CLASS_READ, VG_DEC_ALLOW, 0, {PP, 4, "read  /usr/lib/python3*/**"}, f_stdlib},
    {100, SYS(newfstatat), VG_CLASS_READ, VG_DEC_ALLOW, 0, {PP, 4, "read  /usr/lib/python3*/**"}, f_stat},
    {20, SYS(openat), VG_CLASS_READ, VG_DEC_DENY, 13, {PP, 11, "deny  read ~/.ssh/**"}, f_sshkey},
    {100, SYS(openat), VG_CLASS_WRITE, VG_DEC_ALLOW, 0, {PP, 6, "write /tmp/**"}, f_tmpwrite},
    {30, SYS(unlink), VG_CLASS_WRITE, VG_DEC_ALLOW, 0, {PP, 6, "write /tmp/**"}, f_tmppath},
    {10, SYS(rename), VG_CLASS_WRITE, VG_DEC_ALLOW, 0, {PP, 7, "write /work/out/**"}, f_rename},
    {10, SYS(openat), VG_CLASS_WRITE, VG_DEC_DENY, 13, {NULL, 0, "default deny"}, f_passwd},
    {5, SYS(openat), VG_CLASS_WRITE, VG_DEC_ALLOW, 0, {PP, 6, "write /tmp/**"}, f_oddname},
    {10, SYS(execve), VG_CLASS_EXEC, VG_DEC_DENY, 13, {NULL, 0, "default deny"}, f_curl},
    {10, SYS(execve), VG_CLASS_EXEC, VG_DEC_ALLOW, 0, {PP, 8, "exec  /usr/bin/python3*"}, f_python},
    {20, SYS(connect), VG_CLASS_CONNECT, VG_DEC_DENY, 13, {NULL, 0, "default deny"}, f_example},
    {5, SYS(connect), VG_CLASS_CONNECT, VG_DEC_WOULD_DENY, 0, {NULL, 0, "default deny"}, f_example6},
    {15, SYS(connect), VG_CLASS_CONNECT, VG_DEC_ALLOW, 0, {PP, 9, "connect tcp 127.0.0.1:5432"}, f_pg},
    {5, SYS(connect), VG_CLASS_CONNECT, VG_DEC_DENY, 13, {NULL, 0, "default deny"}, f_unix},
    {10, SYS(bind), VG_CLASS_BIND, VG_DEC_ALLOW, 0, {PP, 10, "bind  udp 127.0.0.1:8080"}, f_bind},
    {10, SYS(sendto), VG_CLASS_SEND, VG_DEC_WOULD_DENY, 0, {NULL, 0, "default deny"}, f_dns},
    {5, SYS(io_uring_setup), VG_CLASS_SYSTEM, VG_DEC_DENY, 1, {NULL, 0, "baseline: io_uring"}, f_none},
    {2, SYS(ptrace), VG_CLASS_SYSTEM, VG_DEC_KILL, 1, {NULL, 0, "baseline: ptrace"}, f_none},
    {2, SYS(mount), VG_CLASS_SYSTEM, VG_DEC_WOULD_KILL, 0, {NULL, 0, "baseline: mount"}, f_none},
};

static const struct tmpl *pick_tmpl(void)
{
    unsigned total = 0;
    for (size_t i = 0; i < VG_ARRAY_LEN(tmpls); i++)
        total += tmpls[i].weight;
    unsigned r = pick(total);
    for (size_t i = 0; i < VG_ARRAY_LEN(tmpls); i++) {
        if (r < tmpls[i].weight)
            return &tmpls[i];
        r -= tmpls[i].weight;
    }
    return &tmpls[0];
}

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
static const struct { const char *module, *sym; } frames[] = {
    {"/usr/bin/python3.11", "_io_FileIO___init__"},
    {"/usr/bin/python3.11", "_PyEval_EvalFrameDefault"},
    {"/usr/bin/python3.11", "_PyFunction_Vectorcall"},
    {"/usr/bin/python3.11", "PyObject_Call"},
    {"/usr/bin/python3.11", NULL},
    {"/usr/lib/python3.11/lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so", "PySSL_new"},
};

/* The innermost frame is the libc wrapper named like the call. */
static uint32_t fill_stack(struct vg_frame *st, const char *call)
{
    uint32_t n = 3 + pick(6);
    for (uint32_t i = 0; i < n; i++) {
        unsigned f = pick(VG_ARRAY_LEN(frames));
        st[i].module = i ? frames[f].module : LIBC;
        st[i].symbol = i ? frames[f].sym : call;
        st[i].pc = 0x7f3a12000000ull + rnd() % 0x200000;
        st[i].offset = st[i].symbol ? 16 + pick(400) : 0;
    }
    return n;
}

struct gen {
    struct vg_log *log;
    uint64_t ts;
    uint64_t counts[VG_CLASS_NCLASSES][VG_DEC_NDECISIONS];
    int nprocs;
    bool live[MAXPROC];
    uint64_t start_at[MAXPROC], exit_at[MAXPROC];
    int parent[MAXPROC];
};

static void emit(struct gen *g, struct vg_record *r)
{
    if (vg_log_write(g->log, r) < 0) {
        fprintf(stderr, "genlog: %s\n", vg_log_error(g->log));
        exit(1);
    }
}

static uint64_t tick(struct gen *g)
{
    g->ts += 1000 + pick(50000);
    return g->ts;
}

static void syscall_event(struct gen *g, int p)
{
    char scratch[128];
    struct vg_frame stack[8];
    const struct tmpl *t = pick_tmpl();
    struct vg_record r = {.type = VG_REC_SYSCALL};
    struct vg_syscall_ev *e = &r.u.sys;
    e->ts_ns = tick(g);
    e->pid = e->tid = p + 1;
    e->hpid = e->htid = 40000 + p * 7;
    e->proc = (uint64_t)p + 1;
    e->nr = t->nr;
    e->name = t->name;
    e->cls = t->cls;
    e->args.flags = e->args.mode = -1;
    e->args.port = -1;
    t->fill(&e->args, scratch, sizeof scratch);
    e->decision = t->dec;
    e->rule = t->rule;
    e->err = t->err;
    if (t->dec != VG_DEC_ALLOW) {
        e->stack = stack;
        e->nstack = fill_stack(stack, t->name);
    }
    g->counts[t->cls][t->dec]++;
    emit(g, &r);
}

static void proc_event(struct gen *g, int p, enum vg_proc_kind kind)
{
    struct vg_record r = {.type = VG_REC_PROC};
    struct vg_proc_ev *e = &r.u.proc;
    e->ts_ns = tick(g);
    e->kind = kind;
    e->pid = p + 1;
    e->hpid = 40000 + p * 7;
    e->proc = (uint64_t)p + 1;
    if (kind == VG_PROC_START) {
        e->parent = p ? (uint64_t)g->parent[p] + 1 : 0;
        e->ppid = p ? g->parent[p] + 1 : 0;
        e->clone_flags = 0x1200011; /* CLONE_CHILD_SETTID|CLEARTID|SIGCHLD */
        g->live[p] = true;
    } else if (kind == VG_PROC_EXEC) {
        e->exe = "/usr/bin/python3.11";
        e->argv = p ? py_argv : cand_argv;
        e->argc = p ? VG_ARRAY_LEN(py_argv) : VG_ARRAY_LEN(cand_argv);
    } else {
        e->exit_code = p % 7 == 3 ? -1 : p % 5 == 4;
        e->signal = p % 7 == 3 ? 9 : 0;
        g->live[p] = false;
    }
    emit(g, &r);
}

static void note_event(struct gen *g, int p)
{
    struct vg_record r = {.type = VG_REC_NOTE};
    r.u.note.ts_ns = tick(g);
    r.u.note.what = "warning";
    r.u.note.detail = "openat: path longer than 4096 bytes, recorded as (unreadable)";
    r.u.note.pid = p + 1;
    emit(g, &r);
}

/* Process i starts (and execs) in the first half of the run and exits in
 * the last slots, children before their parents. */
static void plan(struct gen *g, uint64_t events)
{
    g->nprocs = events < 3 ? 0 : events / 10 < 1 ? 1 : events / 10 > MAXPROC ? MAXPROC : (int)(events / 10);
    uint64_t step = g->nprocs ? events / 2 / (uint64_t)g->nprocs : 0;
    for (int i = 0; i < g->nprocs; i++) {
        g->start_at[i] = (uint64_t)i * step;
        g->exit_at[i] = events - 1 - 2 * (uint64_t)i;
        g->parent[i] = i ? (int)pick((unsigned)i) : 0;
    }
}

static int live_pick(struct gen *g)
{
    int live[MAXPROC], n = 0;
    for (int i = 0; i < g->nprocs; i++)
        if (g->live[i])
            live[n++] = i;
    return n ? live[pick((unsigned)n)] : 0;
}

static void event_at(struct gen *g, uint64_t k)
{
    for (int i = 0; i < g->nprocs; i++) {
        if (k == g->start_at[i]) { proc_event(g, i, VG_PROC_START); return; }
        if (k == g->start_at[i] + 1) { proc_event(g, i, VG_PROC_EXEC); return; }
        if (k == g->exit_at[i]) { proc_event(g, i, VG_PROC_EXIT); return; }
    }
    if (pick(500) == 0)
        note_event(g, live_pick(g));
    else
        syscall_event(g, live_pick(g));
}

static void header(struct gen *g)
{
    static const struct vg_limit_rec limits[] = {
        {"time", 60000, "supervisor"}, {"cpu", 60, "rlimit"}, {"memory", 512u << 20, "rlimit"},
        {"procs", 64, "rlimit"}, {"files", 256, "rlimit"}, {"tmp", 64u << 20, "tmpfs"},
    };
    static const struct vg_artifact arts[] = {
        {"/work/solution.py", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
    };
    static const struct vg_kv resolved[] = {{"example.com", "93.184.216.34,2606:2800:220:1:248:1893:25c8:1946"}};
    struct vg_record r = {.type = VG_REC_HEADER};
    struct vg_header *h = &r.u.header;
    h->format = VG_FORMAT_VERSION;
    h->vigil_version = VG_VERSION;
    h->start_wall_ns = 1700000000000000000ull;
    h->start_mono_ns = 123456789000ull;
    h->kernel = "6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1";
    h->argv = cand_argv;
    h->argc = VG_ARRAY_LEN(cand_argv);
    h->cwd = "/work";
    h->task_id = "task-0042";
    h->mode = "enforce";
    h->engine = "ptrace";
    h->policy_path = "/work/policies/python.policy";
    h->policy_sha256 = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae";
    h->policy_text = policy_text;
    h->limits = limits;
    h->nlimits = VG_ARRAY_LEN(limits);
    h->artifacts = arts;
    h->nartifacts = VG_ARRAY_LEN(arts);
    h->resolved = resolved;
    h->nresolved = VG_ARRAY_LEN(resolved);
    emit(g, &r);
}

static void trailer(struct gen *g)
{
    struct vg_count counts[VG_CLASS_NCLASSES * VG_DEC_NDECISIONS];
    uint32_t n = 0;
    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        for (int d = 0; d < VG_DEC_NDECISIONS; d++)
            if (g->counts[c][d])
                counts[n++] = (struct vg_count){(enum vg_class)c, (enum vg_decision)d, g->counts[c][d]};
    struct vg_record r = {.type = VG_REC_TRAILER};
    struct vg_trailer *t = &r.u.trailer;
    t->ts_ns = tick(g);
    t->status = "ok";
    t->elapsed_ns = t->ts_ns;
    t->events = vg_log_count(g->log);
    t->counts = counts;
    t->ncounts = n;
    emit(g, &r);
}

static off_t file_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        fprintf(stderr, "genlog: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    return st.st_size;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    uint64_t n = 0, seed = 1;
    bool truncate_ = false, have_n = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--truncate"))
            truncate_ = true;
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc && vg_parse_u64(argv[i + 1], &seed))
            i++;
        else if (!out && argv[i][0] != '-')
            out = argv[i];
        else if (!have_n && vg_parse_u64(argv[i], &n))
            have_n = true;
        else {
            fprintf(stderr, "genlog: bad argument '%s'\nusage: genlog OUT N [--seed S] [--truncate]\n", argv[i]);
            return 2;
        }
    }
    if (!out || !have_n || n < 2) {
        fprintf(stderr, "usage: genlog OUT N [--seed S] [--truncate]   (N >= 2 records)\n");
        return 2;
    }
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    struct vg_err err;
    struct gen g = {0};
    g.log = vg_log_create(out, &err);
    if (!g.log) {
        fprintf(stderr, "genlog: %s\n", err.msg);
        return 1;
    }
    uint64_t events = n - 2;
    plan(&g, events);
    header(&g);
    off_t before = 0;
    for (uint64_t k = 0; k < events; k++) {
        if (truncate_ && k == events - 1)
            before = file_size(out);
        event_at(&g, k);
    }
    if (!truncate_)
        trailer(&g);
    if (vg_log_close(g.log) < 0) {
        fprintf(stderr, "genlog: closing %s failed\n", out);
        return 1;
    }
    if (truncate_) {
        off_t after = file_size(out);
        if (events == 0)
            before = 0;    /* only the header: cut that */
        if (truncate(out, before + (after - before) / 2) < 0) {
            fprintf(stderr, "genlog: truncate %s: %s\n", out, strerror(errno));
            return 1;
        }
    }
    return 0;
}
