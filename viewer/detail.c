/* detail.c: vw_report_record, every field of one record as labelled lines.
 * Empty fields (NULL strings, -1 numbers) are left out, as they are on disk. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "viewer/report.h"

#define LABEL "%-12s"

static void str(struct vw_lines *o, const char *label, const char *v)
{
    if (v)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%s", label, v);
}

static void strv(struct vw_lines *o, const char *label, const char *const *v, uint32_t n)
{
    if (!n)
        return;
    struct vg_buf b = {0};
    for (uint32_t i = 0; i < n; i++)
        vg_buf_printf(&b, "%s%s", i ? " " : "", v[i] ? v[i] : "");
    str(o, label, b.data);
    vg_buf_free(&b);
}

/* An argv the log kept only part of: what the whole was. */
static void argv_full(struct vw_lines *o, const struct vg_argv_full *f)
{
    if (f->sha256)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%u arguments, %" PRIu64 " bytes (argv above is cut)",
                     "argv whole", f->argc, f->bytes);
    str(o, "argv sha256", f->sha256);
}

/* Multi-line text (rule text, policy) with the label on the first line. */
static void text(struct vw_lines *o, enum vw_style st, const char *label, const char *v)
{
    if (!v)
        return;
    const char *p = v;
    do {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        vw_lines_add(o, st, 0, LABEL "%.*s", p == v ? label : "", len, p);
        p = nl ? nl + 1 : NULL;
    } while (p && *p);
}

static void head(struct vw_lines *o, uint64_t seq, uint64_t ts, const char *what, const char *name)
{
    vw_lines_add(o, VW_ST_HEAD, 0, "%s %s   seq %" PRIu64 "   +%.6fs", what, name, seq, ts / 1e9);
}

static void errno_line(struct vw_lines *o, int32_t e)
{
    if (!e)
        return;
    const char *name = strerrorname_np(e);
    vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%s (%d): %s", "errno", name ? name : "?", e,
                 strerror(e));
}

static void args(struct vw_lines *o, const struct vg_args *a)
{
    str(o, "path", a->path);
    str(o, "resolved", a->resolved);
    if (a->masked)
        str(o, "masked", "yes: vigil shows it empty (a secret of the host)");
    str(o, "path2", a->path2);
    str(o, "resolved2", a->resolved2);
    if (a->flags >= 0 || a->nflags) {
        struct vg_buf b = {0};
        if (a->flags >= 0)
            vg_buf_printf(&b, "0x%" PRIx64 " ", (uint64_t)a->flags);
        for (uint32_t i = 0; i < a->nflags; i++)
            vg_buf_printf(&b, "%s%s", i ? "|" : "", a->flag_names[i] ? a->flag_names[i] : "?");
        str(o, "flags", b.data);
        vg_buf_free(&b);
    }
    if (a->mode >= 0)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "0%" PRIo64, "mode", (uint64_t)a->mode);
    str(o, "family", a->family);
    str(o, "proto", a->proto);
    str(o, "address", a->addr);
    str(o, "host", a->host);
    if (a->port >= 0)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%d", "port", a->port);
    for (uint32_t i = 0; i < a->ndests; i++) {  /* sendmmsg: each destination */
        const struct vg_dest *d = &a->dests[i];
        vw_lines_add(o, vw_decision_style(d->decision), 0, LABEL "%s port %d, %u msg: %s",
                     i ? "" : "destinations", d->addr ? d->addr : "?", d->port, d->msgs,
                     vg_decision_name(d->decision));
    }
    str(o, "exe", a->exe);
    strv(o, "argv", a->argv, a->argc);
    argv_full(o, &a->argv_full);
    if (a->argv_unreadable)
        vw_lines_add(o, VW_ST_DENY, 0, LABEL "%s", "argv", "could not be read whole: refused");
    strv(o, "env names", a->env_names, a->nenv);
}

static void stack(struct vw_lines *o, const struct vg_frame *f, uint32_t n)
{
    vw_lines_add(o, VW_ST_HEAD, 0, "stack (%u frame%s)", n, n == 1 ? "" : "s");
    for (uint32_t i = 0; i < n; i++) {
        char sym[512] = "?";
        if (f[i].symbol)
            snprintf(sym, sizeof sym, "%s+0x%" PRIx64, f[i].symbol, f[i].offset);
        vw_lines_add(o, VW_ST_NORMAL, 0, "  #%-2u 0x%016" PRIx64 "  %s  %s", i, f[i].pc,
                     f[i].module ? f[i].module : "?", sym);
    }
}

/* The Python stack, innermost first; ">" marks the frame `vigil log`
 * names (vg_py_user_frame). */
static void py_stack(struct vw_lines *o, const struct vg_syscall_ev *s)
{
    if (!s->npy)
        return;
    const struct vg_pyframe *user = vg_py_user_frame(s->py, s->npy);
    vw_lines_add(o, VW_ST_HEAD, 0, "python stack (%u frame%s%s)", s->npy, s->npy == 1 ? "" : "s",
                 s->py_trunc ? ", cut: more frames outside" : "");
    for (uint32_t i = 0; i < s->npy; i++) {
        const struct vg_pyframe *f = &s->py[i];
        vw_lines_add(o, f == user ? VW_ST_HEAD : VW_ST_NORMAL, 0, " %c %-2u %s:%d  in %s",
                     f == user ? '>' : ' ', i, f->file ? f->file : "?", f->line,
                     f->func ? f->func : "?");
    }
}

static void syscall_rec(const struct vg_syscall_ev *s, struct vw_lines *o)
{
    head(o, s->seq, s->ts_ns, "syscall", s->name ? s->name : "?");
    vw_lines_add(o, vw_decision_style(s->decision), 0, LABEL "%s", "decision",
                 vg_decision_name(s->decision));
    vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%s   (syscall nr %d)", "class",
                 vg_class_name(s->cls), s->nr);
    errno_line(o, s->err);
    if (s->installed) {
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%s", "returned",
                     "a new fd for the file vigil opened (installed as the call was answered)");
    } else if (s->carried) { /* carried out by vigil: what the candidate got back */
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%" PRId64 "   (carried out by vigil)", "returned",
                     s->ret);
        errno_line(o, s->ret_errno);
    }
    if (s->rule.file)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%s:%u", "rule at", s->rule.file, s->rule.line);
    else
        str(o, "rule at", "(none: default or baseline)");
    text(o, VW_ST_HEAD, "rule", s->rule.text);
    vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "pid %d tid %d   host pid %d tid %d   identity %" PRIu64,
                 "process", s->pid, s->tid, s->hpid, s->htid, s->proc);
    args(o, &s->args);
    py_stack(o, s);
    stack(o, s->stack, s->nstack);
}

static void proc_rec(const struct vg_proc_ev *p, struct vw_lines *o)
{
    head(o, p->seq, p->ts_ns, "proc", vg_proc_kind_name(p->kind));
    vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "pid %d   host pid %d   identity %" PRIu64, "process",
                 p->pid, p->hpid, p->proc);
    if (p->kind == VG_PROC_START) {
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "ppid %d   identity %" PRIu64, "parent", p->ppid,
                     p->parent);
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "0x%" PRIx64 "%s", "clone flags", p->clone_flags,
                     p->thread ? "   (a thread)" : "");
    }
    str(o, "exe", p->exe);
    strv(o, "argv", p->argv, p->argc);
    argv_full(o, &p->argv_full);
    if (p->kind == VG_PROC_EXIT) {
        if (p->signal)
            vw_lines_add(o, VW_ST_DENY, 0, LABEL "killed by signal %d (%s)%s", "exit",
                         p->signal, sigabbrev_np(p->signal) ? sigabbrev_np(p->signal) : "?",
                         p->core ? ", core dumped" : "");
        else
            vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "code %d", "exit", p->exit_code);
    }
}

static void note_rec(const struct vg_note_ev *n, struct vw_lines *o)
{
    head(o, n->seq, n->ts_ns, "note", n->what ? n->what : "?");
    vw_lines_add(o, VW_ST_WARN, 0, LABEL "%s", "detail", n->detail ? n->detail : "");
    if (n->pid)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%d", "pid", n->pid);
}

static void dns_rec(const struct vg_dns_ev *d, struct vw_lines *o)
{
    head(o, d->seq, d->ts_ns, "dns", d->qtype ? d->qtype : "?");
    str(o, "name", d->name && d->name[0] ? d->name : ".");
    vw_lines_add(o, vw_decision_style(d->decision), 0, LABEL "%s", "decision",
                 vg_decision_name(d->decision));
    if (d->rule.file)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%s:%u", "rule at", d->rule.file, d->rule.line);
    text(o, VW_ST_HEAD, "rule", d->rule.text);
    str(o, "answer", d->rcode);
    strv(o, "addresses", d->answers, d->nanswers);
    str(o, "process", "(not known: a UDP datagram does not say)");
}

void vw_utc(uint64_t ns, char *out, size_t n)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    snprintf(out, n, "?");
    if (gmtime_r(&t, &tm))
        strftime(out, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void header_rec(const struct vg_header *h, struct vw_lines *o)
{
    vw_lines_add(o, VW_ST_HEAD, 0, "header   format %u   vigil %s", h->format,
                 h->vigil_version ? h->vigil_version : "?");
    char when[64];
    vw_utc(h->start_wall_ns, when, sizeof when);
    vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%s   (monotonic %" PRIu64 " ns)", "started", when,
                 h->start_mono_ns);
    if (h->log_kind)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%s (vigil serve: one record per step of a run)",
                     "log", h->log_kind);
    str(o, "kernel", h->kernel);
    strv(o, "command", h->argv, h->argc);
    str(o, "cwd", h->cwd);
    str(o, "task id", h->task_id);
    str(o, "mode", h->mode);
    str(o, "engine", h->engine);
    str(o, "policy", h->policy_path);
    str(o, "sha256", h->policy_sha256);
    str(o, "image", h->image_name);
    str(o, "image digest", h->image_digest);
    for (uint32_t i = 0; i < h->nlimits; i++)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%s = %" PRIu64 " (%s)", i ? "" : "limits",
                     h->limits[i].name, h->limits[i].value,
                     h->limits[i].enforced_by ? h->limits[i].enforced_by : "?");
    for (uint32_t i = 0; i < h->nartifacts; i++)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%s  sha256 %s", i ? "" : "artifacts",
                     h->artifacts[i].path, h->artifacts[i].sha256);
    for (uint32_t i = 0; i < h->nresolved; i++)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%s -> %s", i ? "" : "resolved",
                     h->resolved[i].name, h->resolved[i].value);
    text(o, VW_ST_DIM, "policy text", h->policy_text);
}

static void trailer_rec(const struct vg_trailer *t, struct vw_lines *o)
{
    head(o, t->seq, t->ts_ns, "trailer", t->status ? t->status : "?");
    vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%d   signal %d", "exit code", t->exit_code,
                 t->signal);
    str(o, "limit", t->limit);
    vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%.3fs", "elapsed", t->elapsed_ns / 1e9);
    vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%" PRIu64, "events", t->events);
    for (uint32_t i = 0; i < t->ncounts; i++)
        vw_lines_add(o, vw_decision_style(t->counts[i].decision), 0, LABEL "%-8s %-10s %" PRIu64,
                     i ? "" : "counts", vg_class_name(t->counts[i].cls),
                     vg_decision_name(t->counts[i].decision), t->counts[i].n);
}

/* A step of vigil serve: who, which run, what happened to it. */
static void service_rec(const struct vg_svc_ev *e, struct vw_lines *o)
{
    head(o, e->seq, e->ts_ns, "service", vg_svc_kind_name(e->kind));
    char when[64];
    vw_utc(e->wall_ns, when, sizeof when);
    str(o, "when", when);
    str(o, "user", e->user);
    if (e->uid >= 0)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%" PRId64, "uid", e->uid);
    else
        str(o, "uid", "(the daemon's own event)");
    str(o, "run", e->run);
    str(o, "sandbox", e->slot ? e->slot : e->kind == VG_SVC_ASSIGNED ? "(cold start)" : NULL);
    if (e->host_uid)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%" PRIu64, "host uid", e->host_uid);
    if (e->pid)
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%d", "vigil pid", e->pid);
    if (e->quota)
        vw_lines_add(o, VW_ST_DENY, 0, LABEL "%s   retry after %" PRIu64 "s", "quota", e->quota,
                     e->retry_after_s);
    if (e->kind == VG_SVC_FINISHED) {
        str(o, "status", e->status ? e->status : "?");
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%d", "exit code", e->exit_code);
        vw_lines_add(o, VW_ST_NORMAL, 0, LABEL "%.3fs   wall %.3fs", "cpu", e->cpu_ns / 1e9,
                     e->elapsed_ns / 1e9);
    }
    text(o, e->kind == VG_SVC_REFUSED ? VW_ST_DENY : VW_ST_NORMAL, "reason", e->reason);
}

void vw_report_record(const struct vg_record *r, struct vw_lines *out)
{
    switch (r->type) {
    case VG_REC_HEADER: header_rec(&r->u.header, out); break;
    case VG_REC_SYSCALL: syscall_rec(&r->u.sys, out); break;
    case VG_REC_PROC: proc_rec(&r->u.proc, out); break;
    case VG_REC_NOTE: note_rec(&r->u.note, out); break;
    case VG_REC_TRAILER: trailer_rec(&r->u.trailer, out); break;
    case VG_REC_DNS: dns_rec(&r->u.dns, out); break;
    case VG_REC_SERVICE: service_rec(&r->u.svc, out); break;
    default: vw_lines_add(out, VW_ST_WARN, 0, "record of unknown type %d", (int)r->type); break;
    }
}
