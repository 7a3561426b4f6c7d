/* cmd_log.c: `vigil log FILE`: print a run log (or vigil serve's service
 * log), one line (or one JSON object) per record, optionally filtered,
 * optionally following a log that is still being written.  Exit 0 for a complete log, 3 when it is
 * truncated (no trailer) or corrupt, 2 for usage errors and files that are
 * not vigil logs. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "event/reader.h"
#include "insight/probes.h"
#include "insight/summary.h"
#include "util/json.h"
#include "util/statedir.h"
#include "util/escape.h"

#define EXIT_TRUNC 3

static const char usage_text[] =
    "usage: vigil log [FILE] [--json] [--deny] [--class CLASS] [--pid PID]\n"
    "       [--follow] [--color auto|always|never] [--all] [--summary]\n"
    "       [--kind KIND] [--run ID] [--user USER]\n"
    "Print a run log (run.msgpack) or vigil serve's service log one record per\n"
    "line; without FILE, the latest log vigil run wrote to its state directory\n"
    "(named on stderr).\n";

static const char usage_tail[] =
    "Exit status: 0 complete log, 3 truncated or corrupt, 2 usage or not a log.\n";

/* What to print.  A filter given on the command line applies to every
 * record, so header and trailer only pass a --class that names them. */
struct log_opts {
    const char *file;
    bool json, deny, follow, color, all, summary;
    bool have_class;
    bool cls[VG_CLASS_NCLASSES];
    bool rtype[VG_REC_NTYPES];   /* --class proc / note / header / trailer */
    bool have_pid;
    int pid;
    int color_when;              /* COLOR_* */
    /* service logs: --kind, --run, --user (a name, or a uid when a number) */
    bool have_kind;
    bool kind[VG_SVC_NKINDS];
    const char *run, *user;
    bool have_uid;
    int64_t uid;
};

enum { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };
static const char *const color_names[] = {
    [COLOR_AUTO] = "auto", [COLOR_ALWAYS] = "always", [COLOR_NEVER] = "never", NULL,
};

static int usage_error(const char *fmt, const char *arg)
{
    /* arg is what the caller typed: escaped with the rest of the line */
    char *what = vg_xasprintf(fmt, arg);
    vg_say(stderr, "vigil log: %s (try 'vigil log --help')", what);
    free(what);
    return 2;
}

/* Each word of a comma list through one(o, word): -1 at the first it
 * does not know, with err naming it as a `what`. */
static int each_word(struct log_opts *o, const char *list, const char *what,
                     bool (*one)(struct log_opts *, const char *), struct vg_err *err)
{
    char *copy = vg_xstrdup(list), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!one(o, t)) {
            vg_errf(err, "unknown %s '%s'", what, t);
            rc = -1;
            break;
        }
    free(copy);
    return rc;
}

static bool add_class(struct log_opts *o, const char *t)
{
    int c = vg_class_from_name(t), rt = vg_rec_type_from_name(t);
    if (c >= 0)
        o->cls[c] = true;
    else if (rt >= 0 && rt != VG_REC_SYSCALL)
        o->rtype[rt] = true;
    else
        return false;
    return o->have_class = true;
}

static int add_classes(void *dst, const char *list, struct vg_err *err)
{
    return each_word(dst, list, "class", add_class, err);
}

static bool add_kind(struct log_opts *o, const char *t)
{
    int k = vg_svc_kind_from_name(t);
    if (k < 0)
        return false;
    o->kind[k] = true;
    return o->have_kind = true;
}

static int add_kinds(void *dst, const char *list, struct vg_err *err)
{
    return each_word(dst, list, "kind", add_kind, err);
}

static int set_pid(void *dst, const char *arg, struct vg_err *err)
{
    struct log_opts *o = dst;
    uint64_t pid;
    if (!vg_parse_u64(arg, &pid) || pid > INT_MAX) {
        vg_errf(err, "--pid wants a process id, not '%s'", arg);
        return -1;
    }
    o->have_pid = true;
    o->pid = (int)pid;
    return 0;
}

#define AT(field) offsetof(struct log_opts, field)

static const struct vg_opt rows[] = {
    {"json", 0, NULL, "JSON Lines, one object per record, keys as on disk",
     .kind = VG_OPT_FLAG, .off = AT(json)},
    {"deny", 0, NULL, "only refusals: calls deny, kill, would-deny, would-kill;\n"
     "names vigil's resolver refused (dns records)",
     .kind = VG_OPT_FLAG, .off = AT(deny)},
    {"class", 0, "CLASS", "only this class (read write exec connect bind send\n"
     "system, or the record types proc note dns header trailer\n"
     "service); repeat it or give a comma list",
     .kind = VG_OPT_CALL, .set = add_classes},
    {"pid", 0, "PID", "only records of this pid (as the candidate sees it)",
     .kind = VG_OPT_CALL, .set = set_pid},
    {"follow", 'f', NULL, "keep reading as the log grows, until its trailer",
     .kind = VG_OPT_FLAG, .off = AT(follow)},
    {"color", 0, "WHEN", "colour decisions: auto (a terminal, NO_COLOR unset),\n"
     "always, never", .def = "auto", .alias = "colour",
     .kind = VG_OPT_CHOICE, .off = AT(color_when), .choices = color_names},
    {"all", 0, NULL, "one line per probe too: the text groups consecutive probes\n"
     "(lookups that found nothing) of one process for one name\n"
     "into one line, \"probed 6 paths for curl: ...\"", .kind = VG_OPT_FLAG, .off = AT(all)},
    {"summary", 0, NULL, "what the candidate tried, by category (secrets and home\n"
     "paths, network and names refused, programs refused,\n"
     "writes and deletions outside the workdir and the\n"
     "sandbox's /tmp), each with a count, the first time,\n"
     "the decisions and the source line when known; PATH\n"
     "probes, the sandbox's scratch, vigil's resolver and nscd\n"
     "are counted apart as noise; with --json one JSON object,\n"
     "the result record's \"summary\"",
     .kind = VG_OPT_FLAG, .off = AT(summary)},
    {"kind", 0, "KIND", "service logs: only events of this kind (start stop accepted\n"
     "refused prepared assigned started finished cancelled lost\n"
     "destroyed deleted); repeat it or give a comma list",
     .kind = VG_OPT_CALL, .set = add_kinds},
    {"run", 0, "ID", "service logs: only the events of this run",
     .kind = VG_OPT_STRING, .off = AT(run)},
    {"user", 0, "USER", "service logs: only the events of this user (a name, or a\n"
     "uid)", .kind = VG_OPT_STRING, .off = AT(user)},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
};

static const struct vg_example examples[] = {
    {"vigil log run.msgpack --deny",
     "only the refused calls, one a line"},
    {"vigil log run.msgpack --summary",
     "what the candidate tried, by category"},
    {"vigil log run.msgpack --json | jq 'select(.type == \"syscall\")'",
     "the records as JSON Lines for a script"},
    {"vigil log service.msgpack --user alice --kind refused",
     "the requests of vigil serve's user alice that were refused"},
};

const struct vg_optcmd vg_log_optcmd = {
    .name = "log", .usage = usage_text, .epilog = usage_tail,
    .rows = rows, .n = VG_ARRAY_LEN(rows),
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

/* 0 to go on, 1 for --help, 2 for a usage error. */
static int parse_args(int argc, char **argv, struct log_opts *o)
{
    struct vg_err err;
    int first, rc = vg_opts_parse(&vg_log_optcmd, argc, argv, o, &first, &err);
    if (rc == VG_OPTS_HELP)
        return 1;
    if (rc < 0)
        return usage_error("%s", err.msg);
    o->color = o->color_when == COLOR_AUTO ? isatty(STDOUT_FILENO) && !getenv("NO_COLOR")
                                           : o->color_when == COLOR_ALWAYS;
    if (first < argc - 1)
        return usage_error("%s", "give exactly one FILE");
    uint64_t uid;
    if (o->user && vg_parse_u64(o->user, &uid) && uid <= INT64_MAX) {
        o->have_uid = true;
        o->uid = (int64_t)uid;
    }
    o->file = first < argc ? argv[first] : NULL; /* NULL: the latest run */
    return 0;
}

static bool is_refusal(enum vg_decision d)
{
    return d == VG_DEC_DENY || d == VG_DEC_KILL || d == VG_DEC_WOULD_DENY || d == VG_DEC_WOULD_KILL;
}

/* A refused call, or a name vigil's resolver refused: the candidate
 * tried to reach it, though no call names it (no address was handed out). */
static bool refused(const struct vg_record *r)
{
    return (r->type == VG_REC_SYSCALL && is_refusal(r->u.sys.decision)) ||
           (r->type == VG_REC_DNS && is_refusal(r->u.dns.decision)) ||
           (r->type == VG_REC_SERVICE && r->u.svc.kind == VG_SVC_REFUSED);
}

/* --kind, --run, --user: only service records can pass them. */
static bool svc_selected(const struct log_opts *o, const struct vg_record *r)
{
    if (!o->have_kind && !o->run && !o->user)
        return true;
    if (r->type != VG_REC_SERVICE)
        return false;
    const struct vg_svc_ev *e = &r->u.svc;
    if (o->have_kind && !o->kind[e->kind])
        return false;
    if (o->run && !(e->run && !strcmp(e->run, o->run)))
        return false;
    return !o->user || (e->user && !strcmp(e->user, o->user)) || (o->have_uid && e->uid == o->uid);
}

static bool selected(const struct log_opts *o, const struct vg_record *r)
{
    bool sys = r->type == VG_REC_SYSCALL;
    if (o->deny && !refused(r))
        return false;
    if (o->have_class && !(sys ? o->cls[r->u.sys.cls] : o->rtype[r->type]))
        return false;
    if (o->have_pid) {
        int pid = sys ? r->u.sys.pid : r->type == VG_REC_PROC ? r->u.proc.pid
                : r->type == VG_REC_NOTE ? r->u.note.pid : -1;
        if (pid != o->pid)
            return false;
    }
    return svc_selected(o, r);
}

/* Print the open group of probes, if any, and close it. */
static void flush_probes(struct vg_probe_group *g)
{
    struct vg_buf b = {0};
    vg_probe_flush(g, &b);
    if (b.len)
        fwrite(b.data, 1, b.len, stdout);
    vg_buf_free(&b);
}

/* One record's line, or (text without --all) its part in a group of
 * probes, which is printed when the group ends. */
static void print_record(const struct log_opts *o, const struct vg_record *r, struct vg_buf *b,
                         struct vg_probe_group *g)
{
    b->len = 0;
    if (o->json) {
        vg_record_json(r, b);
        vg_buf_put(b, "\n", 1);
        fwrite(b->data, 1, b->len, stdout);
        return;
    }
    vg_record_text(r, b, o->color);
    bool group = !o->all && vg_is_probe(r);
    if (!group || !vg_probe_joins(g, r))
        flush_probes(g);
    if (group) {
        vg_probe_add(g, r, b);
        return;
    }
    vg_buf_put(b, "\n", 1);
    fwrite(b->data, 1, b->len, stdout);
}

static void nap(void)
{
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Read and print until the end (or, following, until the trailer).
 * Returns the exit status. */
static int dump(const struct log_opts *o, struct vg_reader *rd)
{
    struct vg_buf line = {0};
    struct vg_probe_group probes = {0};
    struct vg_decoded d;
    uint64_t nrec = 0;
    bool trailer = false, service = false;
    int rc;
    for (;;) {
        rc = vg_reader_next(rd, &d);
        if (rc == 0 && o->follow && !trailer) {
            flush_probes(&probes);
            fflush(stdout);
            nap();
            continue;
        }
        if (rc <= 0)
            break;
        if (nrec++ == 0 && d.rec.type != VG_REC_HEADER) {
            vg_say(stderr, "vigil: %s: not a vigil log (first record is a %s, not a header)",
                   o->file, vg_rec_type_name(d.rec.type));
            vg_decoded_free(&d);
            vg_buf_free(&line);
            return 2;
        }
        if (nrec == 1)
            service = d.rec.u.header.log_kind != NULL;
        trailer = d.rec.type == VG_REC_TRAILER;
        if (selected(o, &d.rec))
            print_record(o, &d.rec, &line, &probes);
        vg_decoded_free(&d);
    }
    flush_probes(&probes);
    vg_probe_free(&probes);
    vg_buf_free(&line);
    if (fflush(stdout) != 0 && errno != EPIPE) {
        vg_say(stderr, "vigil: write: %s", strerror(errno));
        return 1;
    }
    unsigned long long at = (unsigned long long)vg_reader_offset(rd);
    if (rc < 0 && nrec == 0) {
        vg_say(stderr, "vigil: %s: not a vigil log (%s)", o->file, vg_reader_error(rd));
        return 2;
    }
    if (rc < 0) {
        vg_say(stderr, "vigil: %s: corrupt record at byte %llu: %s", o->file, at,
               vg_reader_error(rd));
        return EXIT_TRUNC;
    }
    if (!trailer || vg_reader_status(rd) == VG_MP_TRUNCATED) {
        vg_say(stderr, "vigil: %s: truncated at byte %llu: no trailer (%s)", o->file, at,
               service ? "daemon killed or still running" : "supervisor killed or run still going");
        return EXIT_TRUNC;
    }
    return 0;
}

/* Is path vigil serve's service log?  Its header says so. */
static bool is_service_log(const char *path)
{
    struct vg_err err;
    struct vg_reader *rd = vg_reader_open(path, &err);
    if (!rd)
        return false;   /* the summary names the problem */
    struct vg_decoded d;
    bool svc = false;
    if (vg_reader_next(rd, &d) == 1) {
        svc = d.rec.type == VG_REC_HEADER && d.rec.u.header.log_kind;
        vg_decoded_free(&d);
    }
    vg_reader_close(rd);
    return svc;
}

/* --summary: the whole log, then one summary.  A truncated or corrupt
 * log is summarised up to its last complete record, and says so. */
static int print_summary(const struct log_opts *o)
{
    struct vg_summary s;
    struct vg_err err;
    int done = vg_summary_of_log(o->file, &s, &err);
    if (done < 0) {
        vg_say(stderr, "vigil: %s", err.msg);
        return 2;
    }
    struct vg_buf b = {0};
    if (o->json) {
        struct vg_json j;
        vg_json_init(&j, &b, false);
        vg_summary_json(&s, &j);
        vg_buf_puts(&b, "\n");
    } else {
        vg_summary_text(&s, &b);
    }
    fwrite(b.data, 1, b.len, stdout);
    vg_buf_free(&b);
    vg_summary_free(&s);
    if (fflush(stdout) != 0 && errno != EPIPE)
        return 1;
    if (done)
        vg_say(stderr, "vigil: %s", err.msg);
    return done ? EXIT_TRUNC : 0;
}

int vg_cmd_log(int argc, char **argv)
{
    struct log_opts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc == 1) {
        vg_opts_help(&vg_log_optcmd, stdout);
        return 0;
    }
    if (rc)
        return rc;
    struct vg_err err;
    char *latest = NULL;
    if (!o.file) {
        if (!(o.file = latest = vg_state_latest_log(&err))) {
            vg_say(stderr, "vigil: log: %s", err.msg);
            return 2;
        }
        vg_say(stderr, "vigil: log %s", latest);
    }
    if (o.summary && is_service_log(o.file)) {
        vg_say(stderr, "vigil: %s: a service log: --summary is what a candidate tried, "
               "in a run log", o.file);
        free(latest);
        return 2;
    }
    if (o.summary) {
        rc = print_summary(&o);
        free(latest);
        return rc;
    }
    struct vg_reader *rd = vg_reader_open(o.file, &err);
    if (!rd) {
        vg_say(stderr, "vigil: %s", err.msg);
        free(latest);
        return 2;
    }
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    rc = dump(&o, rd);
    vg_reader_close(rd);
    free(latest);
    return rc;
}
