/* format.c: records for people (one strace-like line) and for programs (one
 * JSON object with exactly the keys and values that are on disk, since the
 * JSON comes from the same schema walk as the msgpack writer). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "event/reader.h"
#include "event/schema.h"
#include "util/escape.h"
#include "util/fastsha.h"
#include "util/json.h"

/* ---- JSON ---- */
static void js_map(void *c, uint32_t n) { (void)n; vg_json_obj_begin(c); }
static void js_map_end(void *c) { vg_json_obj_end(c); }
static void js_arr(void *c, uint32_t n) { (void)n; vg_json_arr_begin(c); }
static void js_arr_end(void *c) { vg_json_arr_end(c); }
static void js_key(void *c, const char *k) { vg_json_key(c, k); }
static void js_str(void *c, const char *s) { vg_json_str(c, s); }
static void js_u64(void *c, uint64_t v) { vg_json_uint(c, v); }
static void js_i64(void *c, int64_t v) { vg_json_int(c, v); }
static void js_bool(void *c, bool v) { vg_json_bool(c, v); }
static void js_nil(void *c) { vg_json_null(c); }

static const struct vg_sink json_sink = {
    .map = js_map, .map_end = js_map_end, .arr = js_arr, .arr_end = js_arr_end,
    .key = js_key, .str = js_str, .u64 = js_u64, .i64 = js_i64,
    .boolean = js_bool, .nil = js_nil,
};

/* The chain value and signature are bin on disk: in JSON, hex. */
static void js_hex(struct vg_json *j, const char *key, const uint8_t *p, size_t n)
{
    char hex[2 * VG_SIG_LEN + 1];
    vg_hex(p, n, hex);
    vg_json_key(j, key);
    vg_json_str(j, hex);
}

void vg_record_json(const struct vg_record *r, struct vg_buf *out)
{
    struct vg_json j;
    vg_json_init(&j, out, false);
    uint64_t seq = vg_rec_has_seq(r->type) ? *VG_CAT(&r->u, 0, uint64_t) : 0;
    vg_schema_emit_open(r, seq, (uint32_t)r->chained + r->sealed_sig, &json_sink, &j);
    if (r->chained)
        js_hex(&j, VG_K_CHAIN, r->chain, VG_CHAIN_LEN);
    if (r->sealed_sig)
        js_hex(&j, VG_K_SIG, r->sig, VG_SIG_LEN);
    json_sink.map_end(&j);
}

/* ---- text ---- */
#define PLAIN_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-@:,"
enum { C_NONE, C_GREEN, C_RED, C_YELLOW };
static const char *const ansi[] = {"", "\033[32m", "\033[31m", "\033[33m"};
static const int decision_color[VG_DEC_NDECISIONS] = {
    [VG_DEC_ALLOW] = C_GREEN, [VG_DEC_DENY] = C_RED, [VG_DEC_KILL] = C_RED,
    [VG_DEC_WOULD_DENY] = C_YELLOW, [VG_DEC_WOULD_KILL] = C_YELLOW,
};

static void put_colored(struct vg_buf *b, const char *s, int color, bool on)
{
    if (on && color != C_NONE)
        vg_buf_printf(b, "%s%s\033[0m", ansi[color], s);
    else
        vg_buf_puts(b, s);
}

/* Every string from a log goes out escaped (util/escape.h, the field
 * form), so a made-up name (or a corrupt log) can neither break the line
 * nor send escape sequences to the terminal. */
static void put_escaped(struct vg_buf *b, const char *s)
{
    vg_esc_puts(b, s, VG_ESC_FIELD);
}

static void put_quoted(struct vg_buf *b, const char *s)
{
    vg_buf_puts(b, "\"");
    put_escaped(b, s);
    vg_buf_puts(b, "\"");
}

/* prefix, then s escaped ("?" when NULL) */
static void put_word(struct vg_buf *b, const char *prefix, const char *s)
{
    vg_buf_puts(b, prefix);
    put_escaped(b, s ? s : "?");
}

static void put_strv(struct vg_buf *b, const char *const *v, uint32_t n)
{
    vg_buf_puts(b, "[");
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            vg_buf_puts(b, ",");
        put_quoted(b, v[i] ? v[i] : "");
    }
    vg_buf_puts(b, "]");
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s && s[1] ? s + 1 : p;
}

static void put_path(struct vg_buf *b, const char *path, const char *resolved)
{
    if (path)
        put_quoted(b, path);
    if (resolved && (!path || strcmp(path, resolved))) {
        vg_buf_puts(b, path ? " (" : "(");
        put_quoted(b, resolved);
        vg_buf_puts(b, ")");
    }
}

/* " /usr/bin/curl ["curl","-o","x"]": the program bare when it is a plain
 * path (as strace users expect), quoted when it has anything odd in it. */
/* argv was cut for the log: say what the whole was, so nothing is left
 * out silently. */
static void put_argv_full(struct vg_buf *b, const struct vg_argv_full *full)
{
    if (full->sha256)
        vg_buf_printf(b, " (cut: %u arguments, %llu bytes, sha256 %s)", full->argc,
                      (unsigned long long)full->bytes, full->sha256);
}

static void put_exe_argv(struct vg_buf *b, const char *exe, const char *const *argv, uint32_t argc,
                         const struct vg_argv_full *full)
{
    if (exe) {
        vg_buf_puts(b, " ");
        if (exe[0] && !exe[strspn(exe, PLAIN_CHARS)])
            vg_buf_puts(b, exe);
        else
            put_quoted(b, exe);
    }
    if (argc) {
        vg_buf_puts(b, " ");
        put_strv(b, argv, argc);
    }
    put_argv_full(b, full);
}

/* ADDR:PORT, [ADDR]:PORT for IPv6; the port left out when -1. */
static void put_hostport(struct vg_buf *b, const char *prefix, const char *family,
                         const char *addr, int32_t port)
{
    bool v6 = family && !strcmp(family, "inet6") && port >= 0;
    vg_buf_puts(b, prefix);
    put_word(b, v6 ? "[" : "", addr);
    vg_buf_puts(b, v6 ? "]" : "");
    if (port >= 0)
        vg_buf_printf(b, ":%d", port);
}

/* An address vigil's resolver handed out: "pypi.org(10.1.2.3):443". */
static void put_named(struct vg_buf *b, const struct vg_args *a)
{
    bool v6 = a->family && !strcmp(a->family, "inet6");
    put_word(b, " ", a->host);
    put_word(b, v6 ? "([" : "(", a->addr);
    vg_buf_puts(b, v6 ? "])" : ")");
    if (a->port >= 0)
        vg_buf_printf(b, ":%d", a->port);
}

/* sendmmsg: its destinations and their decisions, the first few of them. */
#define VG_FMT_MAX_DESTS 8
static void put_dests(struct vg_buf *b, const struct vg_args *a)
{
    uint32_t shown = a->ndests < VG_FMT_MAX_DESTS ? a->ndests : VG_FMT_MAX_DESTS;
    for (uint32_t i = 0; i < shown; i++) {
        const struct vg_dest *d = &a->dests[i];
        vg_buf_puts(b, i ? ", " : " dests[");
        if (d->host)
            put_word(b, "", d->host), vg_buf_puts(b, "=");
        put_hostport(b, "", d->family, d->addr, d->port);
        vg_buf_printf(b, " x%u %s", d->msgs, vg_decision_name(d->decision));
    }
    if (a->ndests > shown)
        vg_buf_printf(b, ", +%u more", a->ndests - shown);
    if (shown)
        vg_buf_puts(b, "]");
}

static void put_args(struct vg_buf *b, const struct vg_args *a)
{
    if (a->exe || (a->argv && a->argc))
        put_exe_argv(b, a->exe, a->argv, a->argc, &a->argv_full);
    if (a->argv_unreadable)
        vg_buf_puts(b, " (argv unreadable)");
    else if (a->path || a->resolved) {
        vg_buf_puts(b, " ");
        put_path(b, a->path, a->resolved);
        if (a->masked)
            vg_buf_puts(b, " (masked: shown empty)");
    }
    if (a->path2 || a->resolved2) {
        vg_buf_puts(b, " to ");
        put_path(b, a->path2, a->resolved2);
    }
    for (uint32_t i = 0; i < a->nflags; i++)
        put_word(b, i ? "|" : " ", a->flag_names[i]);
    if (!a->nflags && a->flags >= 0)
        vg_buf_printf(b, " 0x%llx", (unsigned long long)a->flags);
    if (a->mode >= 0)
        vg_buf_printf(b, " 0%llo", (unsigned long long)a->mode);
    if (a->proto || a->addr) {
        put_word(b, " ", a->proto ? a->proto : a->family);
        if (a->addr && a->host)
            put_named(b, a);
        else if (a->addr)
            put_hostport(b, " ", a->family, a->addr, a->port);
        else if (a->port >= 0)
            vg_buf_printf(b, ":%d", a->port);
    }
    put_dests(b, a);
}

static void put_errno(struct vg_buf *b, int err)
{
    const char *name = err > 0 ? strerrorname_np(err) : NULL;
    if (name)
        vg_buf_printf(b, " %s", name);
    else if (err)
        vg_buf_printf(b, " errno %d", err);
}

/* " from cand.py:14 in fetch_binary": the candidate's line (the file's
 * base name; --json and the viewer have the whole stack). */
static void put_py_origin(struct vg_buf *b, const struct vg_syscall_ev *e)
{
    const struct vg_pyframe *f = vg_py_user_frame(e->py, e->npy);
    if (!f)
        return;
    put_word(b, " from ", f->file ? base_name(f->file) : NULL);
    vg_buf_printf(b, ":%d", f->line);
    put_word(b, " in ", f->func);
}

/* " -> allow (file.policy:3)"; without a rule file, " (what)". */
static void put_decided(struct vg_buf *b, enum vg_decision dec, const struct vg_rule_src *rule,
                        const char *what, bool color)
{
    vg_buf_puts(b, " -> ");
    int d = (unsigned)dec < VG_DEC_NDECISIONS ? decision_color[dec] : C_NONE;
    put_colored(b, vg_decision_name(dec), d, color);
    if (rule->file) {
        put_word(b, " (", base_name(rule->file));
        vg_buf_printf(b, ":%u)", rule->line);
    } else {
        put_word(b, " (", what);
        vg_buf_puts(b, ")");
    }
}

static void summary_syscall(const struct vg_syscall_ev *e, struct vg_buf *b, bool color)
{
    put_word(b, "", e->name);
    put_args(b, &e->args);
    put_decided(b, e->decision, &e->rule, "default", color);
    put_errno(b, e->err);
    if (e->installed) { /* an open vigil carried out: its file, a new fd */
        vg_buf_puts(b, " = new fd");
    } else if (e->carried) { /* carried out by vigil: what the candidate got back */
        vg_buf_printf(b, " = %lld", (long long)e->ret);
        put_errno(b, e->ret_errno);
    }
    if (e->probe)
        vg_buf_puts(b, " [probe]");
    put_py_origin(b, e);
}

/* "A pypi.org -> allow (net.policy:3) NOERROR 10.1.2.3,10.1.2.4" */
static void summary_dns(const struct vg_dns_ev *e, struct vg_buf *b, bool color)
{
    put_word(b, "", e->qtype);
    put_word(b, " ", e->name && e->name[0] ? e->name : ".");
    put_decided(b, e->decision, &e->rule, e->rule.text, color);
    put_word(b, " ", e->rcode);
    for (uint32_t i = 0; i < e->nanswers; i++)
        put_word(b, i ? "," : " ", e->answers[i]);
}

static void put_signal(struct vg_buf *b, int sig)
{
    const char *n = sig > 0 ? sigabbrev_np(sig) : NULL;
    if (n)
        vg_buf_printf(b, "SIG%s", n);
    else
        vg_buf_printf(b, "%d", sig);
}

static void summary_proc(const struct vg_proc_ev *e, struct vg_buf *b)
{
    vg_buf_printf(b, "%s %d", vg_proc_kind_name(e->kind), e->pid);
    switch (e->kind) {
    case VG_PROC_START:
        vg_buf_printf(b, " parent %d (%s)", e->ppid,
                      e->thread ? "thread" : (e->clone_flags & 0x4000u) ? "vfork" : "fork");
        break;
    case VG_PROC_EXEC:
        put_exe_argv(b, e->exe, e->argv, e->argc, &e->argv_full);
        break;
    case VG_PROC_EXIT:
        if (e->signal) {
            vg_buf_puts(b, " signal ");
            put_signal(b, e->signal);
            if (e->core)
                vg_buf_puts(b, " (core dumped)");
        } else {
            vg_buf_printf(b, " code %d", e->exit_code);
        }
        break;
    default:
        break;
    }
}

static void put_seconds(struct vg_buf *b, uint64_t ns)
{
    vg_buf_printf(b, "%llu.%06llu", (unsigned long long)(ns / 1000000000u),
                  (unsigned long long)(ns % 1000000000u / 1000u));
}

/* "UTC date and time, to the ms": when a daemon's event happened. */
static void put_wall(struct vg_buf *b, uint64_t ns)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    char when[32] = "?";
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    vg_buf_printf(b, "%s.%03lluZ", when, (unsigned long long)(ns % 1000000000u / 1000000u));
}

static void summary_header(const struct vg_header *h, struct vg_buf *b)
{
    put_word(b, "vigil ", h->vigil_version);
    vg_buf_printf(b, " format %u", h->format);
    if (h->log_kind) {   /* vigil serve's log: no candidate, no policy */
        put_word(b, " ", h->log_kind);
        vg_buf_puts(b, " log started ");
        put_wall(b, h->start_wall_ns);
        if (h->kernel)
            put_word(b, " kernel ", h->kernel);
        return;
    }
    put_word(b, " ", h->engine);
    put_word(b, " ", h->mode);
    if (h->policy_path)
        put_word(b, " policy ", h->policy_path);
    if (h->policy_sha256) {
        char sha[13];
        snprintf(sha, sizeof sha, "%s", h->policy_sha256);
        put_word(b, " (sha256 ", sha);
        vg_buf_puts(b, ")");
    }
    if (h->image_digest) {
        char sha[sizeof "sha256:" + 12];
        snprintf(sha, sizeof sha, "%s", h->image_digest);
        put_word(b, " image ", h->image_name ? h->image_name : "?");
        put_word(b, " (", sha);
        vg_buf_puts(b, ")");
    }
    if (h->task_id)
        put_word(b, " task ", h->task_id);
    if (h->cwd) {
        vg_buf_puts(b, " cwd ");
        put_quoted(b, h->cwd);
    }
    if (h->engine_note) {
        vg_buf_puts(b, " engine_note ");
        put_quoted(b, h->engine_note);
    }
    vg_buf_puts(b, " cmd ");
    put_strv(b, h->argv, h->argc);
}

static void summary_trailer(const struct vg_trailer *t, struct vg_buf *b)
{
    put_word(b, "", t->status);
    vg_buf_printf(b, " exit %d", t->exit_code);
    if (t->signal) {
        vg_buf_puts(b, " signal ");
        put_signal(b, t->signal);
    }
    if (t->limit)
        put_word(b, " limit ", t->limit);
    vg_buf_puts(b, " elapsed ");
    put_seconds(b, t->elapsed_ns);
    vg_buf_printf(b, "s events %llu", (unsigned long long)t->events);
    /* per-decision totals: what a reader wants to know at a glance */
    uint64_t per[VG_DEC_NDECISIONS] = {0};
    for (uint32_t i = 0; i < t->ncounts; i++)
        if ((unsigned)t->counts[i].decision < VG_DEC_NDECISIONS)
            per[t->counts[i].decision] += t->counts[i].n;
    for (int d = 0; d < VG_DEC_NDECISIONS; d++)
        if (per[d])
            vg_buf_printf(b, " %s %llu", vg_decision_name(d), (unsigned long long)per[d]);
    /* whether the seal holds is vigil verify's to say: here only that
     * there is one, and by which key (its first 16 digits) it is signed */
    if (t->seal.head)
        vg_buf_puts(b, " sealed");
    if (t->seal.key) {
        char key[17];
        snprintf(key, sizeof key, "%s", t->seal.key);
        put_word(b, " signed ", key);
    }
}

/* A name from the service log (a run id, a slot): bare when it is plain,
 * quoted when anything in it could be read as another word. */
static void put_token(struct vg_buf *b, const char *prefix, const char *s)
{
    vg_buf_puts(b, prefix);
    if (s[0] && !s[strspn(s, PLAIN_CHARS)])
        vg_buf_puts(b, s);
    else
        put_quoted(b, s);
}

/* "finished user \"alice\" uid 1000 run r12 status ok exit 0 cpu ..."
 * (kind: with its name first, as the viewer's list shows it). */
static void summary_svc(const struct vg_svc_ev *e, struct vg_buf *b, bool kind)
{
    size_t start = b->len;
    if (kind)
        vg_buf_puts(b, vg_svc_kind_name(e->kind));
    if (e->user)
        put_token(b, " user ", e->user);
    if (e->uid >= 0)
        vg_buf_printf(b, " uid %lld", (long long)e->uid);
    if (e->run)
        put_token(b, " run ", e->run);
    if (e->slot)
        put_token(b, " slot ", e->slot);
    else if (e->kind == VG_SVC_ASSIGNED)
        vg_buf_puts(b, " cold start");
    if (e->host_uid)
        vg_buf_printf(b, " host uid %llu", (unsigned long long)e->host_uid);
    if (e->pid)
        vg_buf_printf(b, " pid %d", e->pid);
    if (e->quota) {
        put_token(b, " quota ", e->quota);
        vg_buf_printf(b, " retry after %llus", (unsigned long long)e->retry_after_s);
    }
    if (e->kind == VG_SVC_FINISHED) {
        put_token(b, " status ", e->status ? e->status : "?");
        vg_buf_printf(b, " exit %d cpu ", e->exit_code);
        put_seconds(b, e->cpu_ns);
        vg_buf_puts(b, "s wall ");
        put_seconds(b, e->elapsed_ns);
        vg_buf_puts(b, "s");
    }
    if (e->reason) {   /* after what it is about, if anything */
        vg_buf_puts(b, b->len > start + strlen(vg_svc_kind_name(e->kind)) * kind ? ": " : " ");
        put_escaped(b, e->reason);
    }
}

static void summary(const struct vg_record *r, struct vg_buf *b, bool color)
{
    switch (r->type) {
    case VG_REC_HEADER: summary_header(&r->u.header, b); break;
    case VG_REC_SYSCALL: summary_syscall(&r->u.sys, b, color); break;
    case VG_REC_PROC: summary_proc(&r->u.proc, b); break;
    case VG_REC_NOTE:
        put_word(b, "", r->u.note.what);
        if (r->u.note.detail)
            put_word(b, " ", r->u.note.detail);
        break;
    case VG_REC_TRAILER: summary_trailer(&r->u.trailer, b); break;
    case VG_REC_DNS: summary_dns(&r->u.dns, b, color); break;
    case VG_REC_SERVICE: summary_svc(&r->u.svc, b, true); break;
    default: vg_buf_puts(b, "?"); break;
    }
}

void vg_record_summary(const struct vg_record *r, struct vg_buf *out)
{
    summary(r, out, false);
}

/* The pid column: the candidate's pid for events that have one. */
static int rec_pid(const struct vg_record *r)
{
    switch (r->type) {
    case VG_REC_SYSCALL: return r->u.sys.pid;
    case VG_REC_PROC: return r->u.proc.pid;
    case VG_REC_NOTE: return r->u.note.pid;
    default: return 0;
    }
}

/* A service record's line: the time since the daemon started, the date
 * and time it happened, then what. */
static void text_svc(const struct vg_svc_ev *e, struct vg_buf *out)
{
    vg_buf_puts(out, " ");
    put_wall(out, e->wall_ns);
    vg_buf_printf(out, " %-9s", vg_svc_kind_name(e->kind));
    summary_svc(e, out, false);
}

void vg_record_text(const struct vg_record *r, struct vg_buf *out, bool color)
{
    uint64_t ts = vg_rec_has_seq(r->type) ? *VG_CAT(&r->u, 8, uint64_t) : 0;
    vg_buf_puts(out, "+");
    put_seconds(out, ts);
    if (r->type == VG_REC_SERVICE) {
        text_svc(&r->u.svc, out);
        return;
    }
    int pid = rec_pid(r);
    if (pid)
        vg_buf_printf(out, " [%d]", pid);
    const char *col = r->type == VG_REC_SYSCALL ? vg_class_name(r->u.sys.cls)
                                                : vg_rec_type_name(r->type);
    vg_buf_printf(out, " %-7s ", col);
    summary(r, out, color);
}

void vg_text_escaped(struct vg_buf *out, const char *s)
{
    put_escaped(out, s ? s : "?");
}
