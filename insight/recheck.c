/* recheck.c: see recheck.h.  One pass over a log: each syscall record is
 * made the call it was (recheck_call.c) and decided by vg_decide with
 * views that answer from the log (recheck_fs.c for the files, the log's
 * own dns records for the names vigil's resolver handed out); each image
 * a proc record names goes through the exec check, each name through
 * vigil's resolver's decision.  What differs from the recorded decision is
 * a change; the new decisions are counted as the supervisor counts them
 * (the refusals cap), and the first kill is where an enforcing run would
 * end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/reader.h"
#include "insight/recheck_int.h"
#include "insight/source.h"
#include "net/net.h"

/* core/decide.c's rule for multicast, broadcast and the host's anycast
 * addresses: which of the host's own are such, only the run's network
 * plan knew; its records say so. */
#define SPECIAL_RULE_FILE "(vigil)"
#define SPECIAL_RULE_TEXT "multicast, broadcast"
/* tracer/lifecycle.c's exec check notes. */
#define EXEC_CHECK_MARK "exec check:"
#define REPLACED_MARK "(not the command file vigil checked: replaced)"
/* tracer/supervisor.c's note when the refusals cap ends a run. */
#define REFUSALS_MARK "refusals:"
#define MALFORMED_QUERY "malformed query"   /* core/decide.c's, for a query it cannot read */
#define ANSWERS_MAX 64   /* addresses of one answer noted; vigil's resolver hands out fewer */
#define NS_PER_S 1000000000ull
#define NS_PER_MS 1000000ull

static const struct vg_rule_src not_audited = {
    .text = "not audited: the new policy lets it run unrecorded",
};
static const struct vg_rule_src image_ran = {.text = "the exec check let it run"};

/* ---- the new decision, counted ---- */

static bool allowed(enum vg_decision d)
{
    return d == VG_DEC_ALLOW;
}

static bool kills(enum vg_decision d)
{
    return d == VG_DEC_KILL || d == VG_DEC_WOULD_KILL;
}

/* What the refusals cap counts (tracer/supervisor.c's is_refusal). */
static bool cap_counts(enum vg_decision d)
{
    return d == VG_DEC_DENY || d == VG_DEC_WOULD_DENY || d == VG_DEC_WOULD_KILL;
}

static void copy_rule(struct vg_recheck_rule *to, const struct vg_rule_src *r)
{
    to->file = r && r->file ? vg_xstrdup(r->file) : NULL;
    to->line = r ? r->line : 0;
    to->text = vg_xstrdup(r && r->text ? r->text : "?");
}

/* What a change is about, as text (escaped only when shown). */
struct about {
    enum vg_recheck_kind kind;
    uint64_t seq, ts_ns;
    int32_t pid;
    enum vg_class cls;
    const char *name;
    char *target;           /* owned until handed to a change */
    bool probe;
    const struct vg_syscall_ev *call; /* for the source line; NULL otherwise */
};

static void seconds(struct vg_buf *b, uint64_t ns)
{
    vg_buf_printf(b, "+%llu.%03llu", (unsigned long long)(ns / NS_PER_S),
                  (unsigned long long)(ns % NS_PER_S / NS_PER_MS));
}

/* The first kill: an enforcing run under the new policy ends there. */
static void note_kill(struct vg_recheck_run *run, const struct about *a,
                      const struct vg_call_verdict *v)
{
    if (run->killed)
        return;
    run->killed = true;
    run->kill_seq = a->seq;
    struct vg_buf b = {0};
    seconds(&b, a->ts_ns);
    vg_buf_printf(&b, " (%s %s", a->kind == VG_RK_NAME ? "dns" : vg_class_name(a->cls),
                  a->target);
    if (v->rule && v->rule->file)
        vg_buf_printf(&b, ", %s:%u", v->rule->file, v->rule->line);
    else if (v->rule && v->rule->text)
        vg_buf_printf(&b, ", %s", v->rule->text);
    vg_buf_puts(&b, ")");
    run->kill_what = b.data;
}

static void count(struct vg_recheck *R, const struct about *a, const struct vg_call_verdict *v)
{
    struct vg_recheck_run *run = R->run;
    enum vg_decision d = v->decision;
    run->decided++;
    if (!allowed(d) && (kills(d) || !a->probe) && !run->first_refused_seq)
        run->first_refused_seq = a->seq;
    if (kills(d))
        note_kill(run, a, v);
    else if (!allowed(d) && a->kind == VG_RK_NAME)
        run->names_refused++;
    else if (!allowed(d)) {
        run->refused++;
        run->refused_probes += a->probe;
    }
    if (a->kind == VG_RK_NAME || !cap_counts(d))
        return;
    R->refusals++;
    /* the supervisor looks at the cap after a call's record, not an image's */
    if (a->kind == VG_RK_CALL && run->cap && R->refusals >= run->cap && !run->cap_seq) {
        run->cap_seq = a->seq;
        run->cap_ts_ns = a->ts_ns;
    }
}

/* A probe refused or allowed ends the same way: the candidate gets
 * ENOENT (core/decide.c refuses a missing object with it). */
static bool same_answer(const struct about *a, enum vg_decision was, enum vg_decision now)
{
    return a->probe && !kills(was) && !kills(now);
}

static void add_change(struct vg_recheck *R, struct about *a, enum vg_decision was,
                       const struct vg_rule_src *was_rule, const struct vg_call_verdict *v)
{
    struct vg_recheck_run *run = R->run;
    if (run->nchanges == run->cap_changes) {
        run->cap_changes = run->cap_changes ? 2 * run->cap_changes : 16;
        run->changes = vg_xrealloc(run->changes, run->cap_changes * sizeof *run->changes);
    }
    struct vg_recheck_change *c = &run->changes[run->nchanges++];
    *c = (struct vg_recheck_change){
        .kind = a->kind, .seq = a->seq, .ts_ns = a->ts_ns, .pid = a->pid, .cls = a->cls,
        .name = vg_xstrdup(a->name ? a->name : "?"), .target = a->target, .probe = a->probe,
        .old_dec = was, .new_dec = v->decision, .new_errno = v->err,
    };
    a->target = NULL;
    copy_rule(&c->old_rule, was_rule);
    copy_rule(&c->new_rule, v->rule);
    struct vg_buf src = {0};
    if (a->call && vg_sum_source(a->call, &src))
        c->source = src.data;
    if (allowed(was) && !allowed(v->decision))
        run->to_refused++;
    else if (!allowed(was) && allowed(v->decision))
        run->to_allowed++;
    if (!run->dry_run && !run->diverges_seq && !same_answer(a, was, v->decision)) {
        /* the candidate got the old answer, and went on from it */
        run->diverges_seq = a->seq;
        struct vg_buf when = {0};
        seconds(&when, a->ts_ns);
        vg_recheck_unknown(run, "from %s on (record %llu) the log shows what the candidate did "
                           "after the old answer; what it would do after the new one is not "
                           "in it", when.data, (unsigned long long)a->seq);
        vg_buf_free(&when);
    }
}

/* Decided again: counted, and a change when it differs. */
static void judged(struct vg_recheck *R, struct about *a, enum vg_decision was,
                   const struct vg_rule_src *was_rule, const struct vg_call_verdict *v)
{
    count(R, a, v);
    if (was != v->decision)
        add_change(R, a, was, was_rule, v);
    free(a->target);
    a->target = NULL;
}

/* ---- syscall records ---- */

/* Multicast, the limited broadcast (net/hostaddr.c), and what the run's
 * plan knew of the host: the record was refused for being one. */
static bool special_of(void *arg, const struct vg_ip *ip)
{
    const struct vg_syscall_ev *e = arg;
    return vg_net_special(NULL, ip) ||
           (e->rule.file && !strcmp(e->rule.file, SPECIAL_RULE_FILE) && e->rule.text &&
            !strncmp(e->rule.text, SPECIAL_RULE_TEXT, strlen(SPECIAL_RULE_TEXT)));
}

static void base_ctx(const struct vg_recheck *R, struct vg_decide_ctx *d)
{
    *d = (struct vg_decide_ctx){.pol = R->pol, .dry_run = R->run->dry_run,
                                .audited = R->audit.cls};
}

static void decide_call(struct vg_recheck *R, const struct vg_syscall_ev *e, struct vg_call *c,
                        struct vg_call_verdict *v)
{
    if (c->ent && !(c->ent->flags & VG_SF_BASELINE) && !vg_sys_row_traced(c->ent, &R->audit)) {
        /* the filter would not stop it: it runs, undecided */
        *v = (struct vg_call_verdict){.decision = VG_DEC_ALLOW, .rule = &not_audited};
        return;
    }
    struct vg_decide_ctx d;
    base_ctx(R, &d);
    /* A file named on the command line is one whatever the policy: the
     * record's rule says which calls were on it (the artifact rule comes
     * before any policy, core/decide.c). */
    bool named = e->rule.file && !strcmp(e->rule.file, VG_RECHECK_CMDLINE_FILE);
    const char *artifact[] = {e->args.resolved};
    if (named && e->cls == VG_CLASS_READ && e->args.resolved) {
        d.artifacts = artifact;
        d.nartifacts = 1;
    }
    if (named && e->cls == VG_CLASS_EXEC)
        d.command_path = e->args.exe ? e->args.exe : e->args.resolved;
    struct vg_fs_view fs = vg_recheck_fs_view(&R->fs);
    struct vg_net_view net = {.special = special_of, .arg = (void *)e, .names = &R->names,
                              .resolver = &R->resolver};
    d.fs = &fs;
    d.net = &net;
    vg_decide(&d, c, v);
    if (!v->record)
        *v = (struct vg_call_verdict){.decision = VG_DEC_ALLOW, .rule = &not_audited};
}

/* ADDR:PORT ([ADDR]:PORT for v6), "unix PATH", with the host vigil's
 * resolver named it by. */
static char *net_target(const struct vg_args *a)
{
    bool v6 = a->family && !strcmp(a->family, "inet6");
    struct vg_buf b = {0};
    vg_buf_printf(&b, "%s ", a->proto ? a->proto : a->family ? a->family : "?");
    vg_buf_printf(&b, "%s%s%s", v6 ? "[" : "", a->addr ? a->addr : "?", v6 ? "]" : "");
    if (a->port >= 0)
        vg_buf_printf(&b, ":%d", a->port);
    if (a->host)
        vg_buf_printf(&b, " (%s)", a->host);
    return b.data;
}

static char *call_target(const struct vg_syscall_ev *e)
{
    const struct vg_args *a = &e->args;
    if (e->cls == VG_CLASS_CONNECT || e->cls == VG_CLASS_BIND || e->cls == VG_CLASS_SEND)
        return net_target(a);
    const char *p = e->cls == VG_CLASS_EXEC && a->exe ? a->exe : a->resolved;
    if (a->resolved2)
        return vg_xasprintf("%s -> %s", p ? p : "?", a->resolved2);
    return vg_xstrdup(p ? p : a->path ? a->path : "");
}

static void on_call(struct vg_recheck *R, const struct vg_syscall_ev *e)
{
    R->seen[e->cls] = true;
    vg_recheck_fs_before(&R->fs, e);
    struct vg_call c;
    vg_recheck_call_of(e, &c);
    struct vg_call_verdict v;
    decide_call(R, e, &c, &v);
    vg_recheck_fs_after(&R->fs, e);
    struct about a = {.kind = VG_RK_CALL, .seq = e->seq, .ts_ns = e->ts_ns, .pid = e->pid,
                      .cls = e->cls, .name = e->name, .target = call_target(e),
                      .probe = e->probe, .call = e};
    judged(R, &a, e->decision, &e->rule, &v);
    vg_call_free(&c);
}

/* ---- the exec check ---- */

/* The image the last proc record named, decided now that the record after
 * it said what the run's check did (was; replaced: the command file was
 * not the one vigil checked, so it is judged as any other program). */
static void image_done(struct vg_recheck *R, enum vg_decision was, const char *why,
                       bool replaced)
{
    struct vg_recheck_image *im = &R->image;
    if (!im->pending)
        return;
    im->pending = false;
    struct vg_decide_ctx d;
    base_ctx(R, &d);
    d.command_path = replaced ? NULL : R->command; /* its identity is the run's: it held */
    struct vg_exec_image img = {.exe = im->exe};
    struct vg_call_verdict v;
    vg_decide_exec(&d, &img, &v);
    if (!v.record)
        v = (struct vg_call_verdict){.decision = VG_DEC_ALLOW, .rule = &not_audited};
    struct vg_rule_src was_rule = why ? (struct vg_rule_src){.text = why} : image_ran;
    struct about a = {.kind = VG_RK_EXEC_CHECK, .seq = im->seq, .ts_ns = im->ts_ns,
                      .pid = im->pid, .cls = VG_CLASS_EXEC, .name = "exec check",
                      .target = im->exe};
    im->exe = NULL;
    judged(R, &a, was, &was_rule, &v);
}

static void on_proc(struct vg_recheck *R, const struct vg_proc_ev *p)
{
    image_done(R, VG_DEC_ALLOW, NULL, false);
    if (p->kind != VG_PROC_EXEC || !p->exe)
        return; /* an image nobody could read never ran */
    R->image = (struct vg_recheck_image){.pending = true, .seq = p->seq, .ts_ns = p->ts_ns,
                                         .pid = p->pid, .exe = vg_xstrdup(p->exe)};
    R->exec_seen = true;
}

static void on_note(struct vg_recheck *R, const struct vg_note_ev *n)
{
    bool check = n->what && n->detail && !strncmp(n->detail, EXEC_CHECK_MARK,
                                                  strlen(EXEC_CHECK_MARK));
    if (check && R->image.pending && n->pid == R->image.pid) {
        enum vg_decision was = !strcmp(n->what, "kill") ? VG_DEC_KILL : VG_DEC_WOULD_KILL;
        image_done(R, was, n->detail, strstr(n->detail, REPLACED_MARK) != NULL);
        return;
    }
    image_done(R, VG_DEC_ALLOW, NULL, false);
    if (n->what && !strcmp(n->what, "limit") && n->detail &&
        !strncmp(n->detail, REFUSALS_MARK, strlen(REFUSALS_MARK)))
        R->ended_by_cap = true;
}

/* ---- names asked of vigil's resolver ---- */

/* The addresses handed out, for the host-name rules of the calls after
 * it: a name the new policy refuses is answered only in a dry run. */
static void note_answers(struct vg_recheck *R, const struct vg_dns_ev *e)
{
    struct vg_ip ip[ANSWERS_MAX];
    unsigned n = 0;
    for (uint32_t i = 0; i < e->nanswers && n < VG_ARRAY_LEN(ip); i++) {
        struct vg_sockaddr_copy s;
        bool v6 = e->answers[i] && strchr(e->answers[i], ':');
        struct vg_sockaddr a;
        if (vg_recheck_sockaddr(v6 ? "inet6" : "inet", e->answers[i], 0, NULL, &s.sa, &s.len) &&
            vg_sockaddr_reduce((const struct sockaddr *)&s.sa, s.len, &a))
            ip[n++] = a.ip;
    }
    if (n && e->name)
        vg_dns_table_add(&R->names, e->name, ip, n); /* full: the run's resolver said SERVFAIL */
}

static void on_name(struct vg_recheck *R, const struct vg_dns_ev *e)
{
    bool malformed = !e->rule.file && e->rule.text && !strcmp(e->rule.text, MALFORMED_QUERY);
    struct vg_decide_ctx d;
    base_ctx(R, &d);
    struct vg_call_verdict v;
    vg_decide_name(&d, malformed ? NULL : e->name, &v);
    if (allowed(v.decision) || R->run->dry_run)
        note_answers(R, e);
    struct about a = {.kind = VG_RK_NAME, .seq = e->seq, .ts_ns = e->ts_ns, .cls = VG_CLASS_CONNECT,
                      .name = e->qtype, .target = vg_xstrdup(e->name ? e->name : "")};
    judged(R, &a, e->decision, &e->rule, &v);
}

/* ---- the log ---- */

/* Where the log is: what a run that ended early ended after. */
static void mark(struct vg_recheck *R, uint64_t seq, uint64_t ts_ns)
{
    R->last_seq = seq;
    R->last_ts_ns = ts_ns;
}

static void mark_record(struct vg_recheck *R, const struct vg_record *r)
{
    R->nrecords++;
    switch (r->type) {
    case VG_REC_SYSCALL: mark(R, r->u.sys.seq, r->u.sys.ts_ns); break;
    case VG_REC_PROC: mark(R, r->u.proc.seq, r->u.proc.ts_ns); break;
    case VG_REC_NOTE: mark(R, r->u.note.seq, r->u.note.ts_ns); break;
    case VG_REC_DNS: mark(R, r->u.dns.seq, r->u.dns.ts_ns); break;
    default: break; /* the header is the start; the trailer is no event of the candidate's */
    }
}

static int on_record(struct vg_recheck *R, const struct vg_record *r, struct vg_err *err)
{
    switch (r->type) {
    case VG_REC_HEADER:
        if (R->pol) { /* one run, one header: a second one is not this log's */
            vg_errf(err, "%s: a second header (the file's record %llu)", R->run->log,
                    (unsigned long long)R->nrecords);
            return -1;
        }
        return vg_recheck_setup(R, &r->u.header, err);
    case VG_REC_SYSCALL:
        image_done(R, VG_DEC_ALLOW, NULL, false);
        on_call(R, &r->u.sys);
        break;
    case VG_REC_PROC:
        on_proc(R, &r->u.proc);
        break;
    case VG_REC_NOTE:
        on_note(R, &r->u.note);
        break;
    case VG_REC_DNS: /* from the resolver's thread: it may come between an image and its note */
        on_name(R, &r->u.dns);
        break;
    case VG_REC_TRAILER:
        image_done(R, VG_DEC_ALLOW, NULL, false);
        R->run->status = vg_xstrdup(r->u.trailer.status ? r->u.trailer.status : "?");
        break;
    default:
        break;
    }
    return 0;
}

/* The run ended before the candidate did (a kill, the refusals cap, the
 * supervisor gone): past that point the log holds nothing, and a run
 * under the new policy that does not end there would go on. */
static void ended_early(struct vg_recheck *R)
{
    struct vg_recheck_run *run = R->run;
    const char *why = run->truncated ? "the log has no trailer (the supervisor was killed, or "
                                       "the run is still going)"
                      : R->ended_by_cap ? "the run's refusals cap ended it"
                      : run->status && !strcmp(run->status, "killed") ? "a kill ended the run"
                                                                      : NULL;
    if (!why || (run->killed && !run->dry_run) || run->cap_seq)
        return; /* the new policy ends it too, no later */
    struct vg_buf when = {0};
    seconds(&when, R->last_ts_ns);
    vg_recheck_unknown(run, "%s after record %llu (%s): what the candidate would have done next "
                       "under the new policy is not in the log", why,
                       (unsigned long long)R->last_seq, when.data);
    vg_buf_free(&when);
}

static int read_log(struct vg_recheck *R, const char *log, struct vg_err *err)
{
    struct vg_reader *rd = vg_reader_open(log, err);
    if (!rd)
        return -1;
    struct vg_decoded d;
    int rc, n = 0, bad = 0;
    while (!bad && (rc = vg_reader_next(rd, &d)) > 0) {
        if (n++ == 0 && d.rec.type != VG_REC_HEADER) {
            vg_errf(err, "%s: not a vigil log (first record is a %s, not a header)", log,
                    vg_rec_type_name(d.rec.type));
            bad = 1;
        } else {
            mark_record(R, &d.rec);
            bad = on_record(R, &d.rec, err) < 0;
        }
        vg_decoded_free(&d);
    }
    uint64_t at = vg_reader_offset(rd);
    if (!bad && n == 0) {
        vg_errf(err, "%s: not a vigil log (%s)", log, vg_reader_error(rd));
        bad = 1;
    } else if (!bad && rc < 0) {
        vg_errf(err, "%s: corrupt record at byte %llu: %s", log, (unsigned long long)at,
                vg_reader_error(rd));
        bad = 1;
    }
    if (!bad) {
        image_done(R, VG_DEC_ALLOW, NULL, false);
        R->run->truncated = !R->run->status || vg_reader_status(rd) == VG_MP_TRUNCATED;
        ended_early(R);
        vg_recheck_setup_end(R);
    }
    vg_reader_close(rd);
    return bad ? -1 : 0;
}

int vg_recheck_log(const struct vg_recheck_opts *o, const char *log, struct vg_recheck_run *run,
                   struct vg_err *err)
{
    memset(run, 0, sizeof *run);
    run->log = vg_xstrdup(log);
    struct vg_recheck R = {.o = o, .run = run};
    vg_dns_table_init(&R.names);
    int rc = read_log(&R, log, err);
    vg_recheck_teardown(&R);
    vg_dns_table_free(&R.names);
    return rc;
}

int vg_recheck_policy_check(const struct vg_recheck_opts *o, struct vg_err *err)
{
    struct vg_policy *p = vg_policy_load(o->policy, err);
    vg_policy_free(p);
    return p ? 0 : -1;
}

bool vg_recheck_changed(const struct vg_recheck_run *run)
{
    return run->nchanges > 0;
}

bool vg_recheck_passes(const struct vg_recheck_run *run)
{
    return !run->killed && !run->cap_seq && run->refused == run->refused_probes &&
           !run->names_refused;
}

static void rule_free(struct vg_recheck_rule *r)
{
    free(r->file);
    free(r->text);
}

void vg_recheck_run_free(struct vg_recheck_run *run)
{
    for (size_t i = 0; i < run->nchanges; i++) {
        struct vg_recheck_change *c = &run->changes[i];
        free(c->name);
        free(c->target);
        free(c->source);
        rule_free(&c->old_rule);
        rule_free(&c->new_rule);
    }
    free(run->changes);
    for (size_t i = 0; i < run->nunknown; i++)
        free(run->unknown[i]);
    free(run->unknown);
    free(run->log);
    free(run->task_id);
    free(run->old_policy);
    free(run->status);
    free(run->kill_what);
    memset(run, 0, sizeof *run);
}
