/* result.c: see result.h. */
#include "run/result.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/hostuid.h"
#include "launcher/limits.h"
#include "launcher/sandbox.h"
#include "util/json.h"

static bool was_hit(const struct vg_ending *end, enum vg_limit l);

#define MS_PER_S 1000u
#define NS_PER_S 1e9
/* A SIGKILL whose CPU time reached the rlimit, give or take this, is the
 * rlimit's (its hard limit's SIGKILL, a second after SIGXCPU). */
#define RLIMIT_CPU_SLACK_S 0.05

static void hit(struct vg_ending *end, enum vg_limit l)
{
    if (!was_hit(end, l))
        end->hits[end->nhits++] = vg_limit_name(l);
}

/* Allocation failures show up as messages, not signals, in most runtimes:
 * with an address-space limit, running into it reads like this. */
static const char *const oom_signs[] = {
    "MemoryError", "Cannot allocate memory", "out of memory", "std::bad_alloc",
    "JavaScript heap out of memory", "Out of memory", "memory exhausted", "Fatal process OOM",
    NULL,
};
/* Under RLIMIT_AS a thread's stack and its malloc arena are address space
 * too: a thread that cannot start while the processes are below their cap
 * ran out of it. */
static const char *const thread_signs[] = {"can't start new thread", "pthread_create", NULL};

static bool stderr_says(const struct vg_io *io, const char *const *signs)
{
    size_t n;
    char *tail = vg_capture_tail(&io->err, &n);
    bool found = false;
    for (size_t i = 0; signs[i] && !found; i++)
        found = memmem(tail, n, signs[i], strlen(signs[i])) != NULL;
    free(tail);
    return found;
}

static bool was_hit(const struct vg_ending *end, enum vg_limit l)
{
    for (unsigned i = 0; i < end->nhits; i++)
        if (!strcmp(end->hits[i], vg_limit_name(l)))
            return true;
    return false;
}

static bool out_of_memory(const struct vg_ending *end, const struct vg_io *io,
                          const struct vg_cg_usage *use)
{
    /* A cgroup's OOM kill may hit any process of the sandbox, and the
     * candidate may survive it: a hit whatever the status. */
    if (use->oom_kills)
        return true;
    if (!strcmp(end->status, "ok"))
        return false;
    return stderr_says(io, oom_signs) ||
           (!use->have_memory && !was_hit(end, VG_LIM_PROCS) && stderr_says(io, thread_signs));
}

/* RLIMIT_CPU's SIGXCPU (or the SIGKILL a second later): limit cpu, or
 * cputotal where that rlimit held it (no cgroup counted the run's CPU
 * time, and its value, in whole seconds, was the lower).  A run the CPU
 * watch stopped was a cputotal hit already. */
static void cpu_hits(struct vg_ending *end, const struct vg_io *io, const struct vg_limits *lim)
{
    double cpu = end->cpu_user_s + end->cpu_sys_s;
    uint64_t total_s = (lim->v[VG_LIM_CPUTOTAL] + MS_PER_S - 1) / MS_PER_S;
    bool total_by_rlimit = lim->v[VG_LIM_CPUTOTAL] && io->cpu.budget_ns == 0 &&
                           total_s <= lim->v[VG_LIM_CPU];
    uint64_t per = total_by_rlimit ? total_s : lim->v[VG_LIM_CPU];
    if (atomic_load(&io->cpu_over))
        return;
    if (end->signal == SIGXCPU || (end->signal == SIGKILL && cpu + RLIMIT_CPU_SLACK_S >= (double)per))
        hit(end, total_by_rlimit ? VG_LIM_CPUTOTAL : VG_LIM_CPU);
}

static void candidate_ending(struct vg_ending *end, const struct vg_outcome *out,
                             const struct vg_io *io, const struct vg_limits *lim,
                             const struct vg_cg_usage *use)
{
    int st = out->cand_status;
    if (WIFEXITED(st)) {
        end->cand_code = WEXITSTATUS(st);
        end->exit_code = end->cand_code;
        end->status = end->cand_code == 0 ? "ok" : "nonzero";
    } else {
        end->signal = WTERMSIG(st);
        end->exit_code = 128 + end->signal;
        end->status = "signal";
    }
    cpu_hits(end, io, lim);
    if (end->signal == SIGXFSZ || out->fsize_signals)
        hit(end, VG_LIM_FSIZE);
    if (out_of_memory(end, io, use))
        hit(end, VG_LIM_MEMORY);
    if (end->nhits && strcmp(end->status, "ok")) {
        end->status = "limit";
        end->limit = end->hits[0];
    }
}

void vg_ending_decide(struct vg_ending *end, const struct vg_outcome *out,
                      const struct vg_io *io, const struct vg_limits *lim,
                      const struct vg_cg_usage *use)
{
    end->cand_code = -1;
    if (use->have_memory)
        end->peak_rss = use->peak_memory; /* the whole sandbox, not its largest process */
    /* The whole sandbox too: getrusage sees only the processes vigil's
     * children waited for, not those killed with the sandbox. */
    if (use->have_cpu) {
        end->cpu_user_s = (double)use->cpu_user_ns / NS_PER_S;
        end->cpu_sys_s = (double)use->cpu_sys_ns / NS_PER_S;
    }
    if (io->usage.disk_over)
        hit(end, VG_LIM_DISK);
    if (atomic_load(&io->cpu_over))
        hit(end, VG_LIM_CPUTOTAL);
    for (int l = 0; l < VG_LIM_COUNT; l++)
        if (out->limit_seen[l]) /* EMFILE, EFBIG seen by the engine */
            hit(end, (enum vg_limit)l);
    if (io->usage.tmpfs_full)
        hit(end, VG_LIM_TMPFS);
    if (io->out.total > io->out.limit || io->err.total > io->err.limit)
        hit(end, VG_LIM_OUTPUT);
    /* pids.events counts the forks refused at pids.max; RLIMIT_NPROC
     * refuses the fork that would exceed it, so there reaching the cap
     * (less the one that failed) is the sign it was hit. */
    if (use->have_pids ? use->pids_refused > 0 : out->max_tasks + 1 + out->own_procs >= lim->v[VG_LIM_PROCS])
        hit(end, VG_LIM_PROCS);
    if (out->log_failed) {
        end->status = "error";
        end->exit_code = VG_EXIT_SETUP;
        snprintf(end->error, sizeof end->error, "run stopped: the log cannot be written: %s",
                 out->log_error);
    } else if (io->have_report) {
        end->status = "error";
        end->exit_code = io->report.code;
        snprintf(end->error, sizeof end->error, "%s", io->report.msg);
    } else if (atomic_load(&io->interrupted)) {
        int sig = atomic_load(&io->interrupted);
        end->status = "error";
        end->exit_code = 128 + sig;
        snprintf(end->error, sizeof end->error, "interrupted by %s", strsignal(sig));
    } else if (atomic_load(&io->timed_out)) {
        end->status = "timeout";
        end->exit_code = 124;
        end->signal = SIGKILL;
        hit(end, VG_LIM_TIME);
        end->limit = vg_limit_name(VG_LIM_TIME);
    } else if (out->limit_ended) { /* a cap the supervisor holds: it killed the sandbox */
        end->status = "limit";
        end->signal = SIGKILL;
        end->exit_code = 128 + SIGKILL;
        end->limit = vg_limit_name(out->limit_end);
    } else if (out->policy_kill) {
        end->status = "killed";
        end->signal = SIGKILL;
        end->exit_code = 128 + SIGKILL;
        snprintf(end->error, sizeof end->error, "%s", out->kill_reason);
    } else if (out->cand_done) {
        candidate_ending(end, out, io, lim, use);
    } else {
        end->status = "error";
        end->exit_code = VG_EXIT_SETUP;
        snprintf(end->error, sizeof end->error, "the sandbox ended before the candidate started");
    }
}

static void stream(struct vg_json *j, const char *key, const struct vg_capture *c)
{
    size_t n;
    char *tail = vg_capture_tail(c, &n);
    vg_json_key(j, key);
    vg_json_obj_begin(j);
    vg_json_key(j, "bytes");
    vg_json_uint(j, c->total);
    vg_json_key(j, "truncated");
    vg_json_bool(j, c->total > c->limit);
    vg_json_key(j, "forwarded");
    vg_json_uint(j, c->forwarded);
    vg_json_key(j, "tail");
    vg_json_strn(j, tail, n);
    vg_json_obj_end(j);
    free(tail);
}

static void strings(struct vg_json *j, const char *key, char *const *v, int n)
{
    vg_json_key(j, key);
    vg_json_arr_begin(j);
    for (int i = 0; i < n; i++)
        vg_json_str(j, v[i]);
    vg_json_arr_end(j);
}

static void limits(struct vg_json *j, const struct vg_limits *l, const struct vg_enforce *e,
                   const struct vg_ending *end)
{
    vg_json_key(j, "limits");
    vg_json_obj_begin(j);
    for (int i = 0; i < VG_LIM_COUNT; i++) {
        vg_json_key(j, vg_limit_name(i));
        vg_json_obj_begin(j);
        vg_json_key(j, "value");
        if (l->v[i]) vg_json_uint(j, l->v[i]); else vg_json_null(j);
        vg_json_key(j, "unit");
        vg_json_str(j, vg_limit_unit(i));
        vg_json_key(j, "enforced_by");
        vg_json_str(j, vg_limit_mech_name(e->how[i]));
        vg_json_key(j, "hit");
        vg_json_bool(j, was_hit(end, i));
        vg_json_obj_end(j);
    }
    vg_json_obj_end(j);
}

static void counts(struct vg_json *j, const struct vg_outcome *o)
{
    uint64_t allowed = 0, refused = 0;
    vg_json_key(j, "counts");
    vg_json_obj_begin(j);
    for (int c = 0; c < VG_CLASS_NCLASSES; c++) {
        vg_json_key(j, vg_class_name(c));
        vg_json_obj_begin(j);
        for (int d = 0; d < VG_DEC_NDECISIONS; d++) {
            vg_json_key(j, vg_decision_name(d));
            vg_json_uint(j, o->counts[c][d]);
            if (d == VG_DEC_ALLOW)
                allowed += o->counts[c][d];
            else
                refused += o->counts[c][d];
        }
        vg_json_obj_end(j);
    }
    vg_json_obj_end(j);
    vg_json_key(j, "allowed");
    vg_json_uint(j, allowed);
    vg_json_key(j, "denied");
    vg_json_uint(j, refused);
    vg_json_key(j, "processes");
    vg_json_uint(j, o->procs);
}

/* The log's seal (docs/RUN.md): null when the trailer was not written. */
static void seal(struct vg_json *j, const struct vg_result_seal *s)
{
    vg_json_key(j, "seal");
    if (!s || !s->sealed) {
        vg_json_null(j);
        return;
    }
    vg_json_obj_begin(j);
    vg_json_key(j, "chain"); vg_json_str(j, s->chain);
    vg_json_key(j, "head"); vg_json_str(j, s->head);
    vg_json_key(j, "records"); vg_json_uint(j, s->records);
    vg_json_key(j, "vigil_build_id");
    vg_json_str(j, s->vigil_build_id[0] ? s->vigil_build_id : NULL);
    vg_json_key(j, "vigil_sha256"); vg_json_str(j, s->vigil_sha256[0] ? s->vigil_sha256 : NULL);
    vg_json_key(j, "signed"); vg_json_bool(j, s->signed_log);
    vg_json_key(j, "key"); vg_json_str(j, s->signed_log ? s->key : NULL);
    vg_json_key(j, "sig"); vg_json_str(j, s->signed_log ? s->sig : NULL);
    vg_json_obj_end(j);
}

static void iso_time(uint64_t ns, char *buf, size_t n)
{
    time_t t = (time_t)(ns / 1000000000ull);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void body(struct vg_json *j, const struct vg_result_in *in)
{
    const struct vg_ending *e = in->end;
    char when[64];
    iso_time(in->start_wall_ns, when, sizeof when);
    vg_json_obj_begin(j);
    vg_json_key(j, "format"); vg_json_int(j, 1);
    vg_json_key(j, "vigil_version"); vg_json_str(j, VG_VERSION);
    vg_json_key(j, "task_id"); vg_json_str(j, in->opts->task_id);
    strings(j, "argv", in->opts->argv, in->opts->argc);
    vg_json_key(j, "artifacts");
    vg_json_arr_begin(j);
    for (unsigned i = 0; i < in->nartifacts; i++) {
        vg_json_obj_begin(j);
        vg_json_key(j, "path"); vg_json_str(j, in->artifacts[i].path);
        vg_json_key(j, "sha256"); vg_json_str(j, in->artifacts[i].sha256);
        vg_json_obj_end(j);
    }
    vg_json_arr_end(j);
    vg_json_key(j, "status"); vg_json_str(j, e->status);
    vg_json_key(j, "limit"); vg_json_str(j, e->limit);
    vg_json_key(j, "exit_code"); vg_json_int(j, e->exit_code);
    vg_json_key(j, "candidate_exit_code");
    if (e->cand_code >= 0) vg_json_int(j, e->cand_code); else vg_json_null(j);
    vg_json_key(j, "signal");
    if (e->signal) vg_json_int(j, e->signal); else vg_json_null(j);
    vg_json_key(j, "error"); vg_json_str(j, e->error[0] ? e->error : NULL);
    vg_json_key(j, "wall_s"); vg_json_double(j, e->wall_s);
    vg_json_key(j, "cpu_s"); vg_json_double(j, e->cpu_user_s + e->cpu_sys_s);
    vg_json_key(j, "cpu_user_s"); vg_json_double(j, e->cpu_user_s);
    vg_json_key(j, "cpu_sys_s"); vg_json_double(j, e->cpu_sys_s);
    vg_json_key(j, "peak_memory_bytes"); vg_json_uint(j, e->peak_rss);
    stream(j, "stdout", &in->io->out);
    stream(j, "stderr", &in->io->err);
    limits(j, in->limits, in->enforce, e);
    vg_json_key(j, "limits_hit");
    vg_json_arr_begin(j);
    for (unsigned i = 0; i < e->nhits; i++)
        vg_json_str(j, e->hits[i]);
    vg_json_arr_end(j);
    strings(j, "warnings", in->warnings, (int)in->nwarnings);
    vg_json_key(j, "mode");
    vg_json_str(j, in->opts->mode == VG_MODE_DRY_RUN ? "dry-run" : "enforce");
    vg_json_key(j, "engine"); vg_json_str(j, in->engine);
    vg_json_key(j, "engine_note");
    if (in->engine_note && in->engine_note[0]) vg_json_str(j, in->engine_note); else vg_json_null(j);
    vg_json_key(j, "cpuset"); vg_json_str(j, in->opts->cpuset);
    uid_t uid;
    gid_t gid;
    vg_host_ids(in->opts, &uid, &gid);
    vg_json_key(j, "host_uid"); vg_json_uint(j, uid);
    vg_json_key(j, "landlock_abi"); vg_json_int(j, in->landlock_abi);
    vg_json_key(j, "policy");
    vg_json_obj_begin(j);
    vg_json_key(j, "path"); vg_json_str(j, in->policy_path);
    vg_json_key(j, "sha256"); vg_json_str(j, in->policy_sha256);
    vg_json_obj_end(j);
    vg_json_key(j, "image");
    if (in->image_digest) {
        vg_json_obj_begin(j);
        vg_json_key(j, "name"); vg_json_str(j, in->image_name);
        vg_json_key(j, "digest"); vg_json_str(j, in->image_digest);
        vg_json_obj_end(j);
    } else {
        vg_json_null(j);
    }
    counts(j, in->outcome);
    vg_json_key(j, "summary");
    if (in->summary)
        vg_summary_json(in->summary, j);
    else
        vg_json_null(j);
    vg_json_key(j, "log"); vg_json_str(j, in->log_path);
    seal(j, in->seal);
    vg_json_key(j, "workdir"); vg_json_str(j, in->workdir);
    vg_json_key(j, "workdir_kept"); vg_json_bool(j, in->workdir_kept);
    vg_json_key(j, "start_time"); vg_json_str(j, when);
    vg_json_key(j, "start_unix_ns"); vg_json_uint(j, in->start_wall_ns);
    vg_json_obj_end(j);
}

/* Write the finished document into the reserved file and rename it into
 * place.  A failed write or close is a failed record: nothing is renamed. */
static int write_doc(struct vg_outfile *f, struct vg_buf *b, struct vg_err *err)
{
    int r = vg_write_all(f->fd, b->data, b->len);
    int saved = errno;
    int c = close(f->fd);
    f->fd = -1;
    if (r < 0 || c < 0) {
        vg_errf(err, "write result %s: %s", f->path, strerror(r < 0 ? saved : errno));
        return -1;
    }
    return vg_outfile_commit(f, err);
}

int vg_result_write(struct vg_outfile *f, const struct vg_result_in *in, struct vg_err *err)
{
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, true);
    body(&j, in);
    vg_buf_puts(&b, "\n");
    int r = write_doc(f, &b, err);
    vg_buf_free(&b);
    return r;
}

/* A run that failed before it could run: the same keys a harness reads
 * first (status, exit_code, error), so that it needs no special case. */
int vg_result_write_error(struct vg_outfile *f, const struct vg_run_opts *o, const char *msg,
                          struct vg_err *err)
{
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, true);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "format"); vg_json_int(&j, 1);
    vg_json_key(&j, "vigil_version"); vg_json_str(&j, VG_VERSION);
    vg_json_key(&j, "task_id"); vg_json_str(&j, o->task_id);
    strings(&j, "argv", o->argv, o->argc);
    vg_json_key(&j, "status"); vg_json_str(&j, "error");
    vg_json_key(&j, "limit"); vg_json_null(&j);
    vg_json_key(&j, "exit_code"); vg_json_int(&j, VG_EXIT_SETUP);
    vg_json_key(&j, "candidate_exit_code"); vg_json_null(&j);
    vg_json_key(&j, "signal"); vg_json_null(&j);
    vg_json_key(&j, "error"); vg_json_str(&j, msg);
    vg_json_key(&j, "limits_hit"); vg_json_arr_begin(&j); vg_json_arr_end(&j);
    vg_json_key(&j, "log"); vg_json_null(&j);
    vg_json_obj_end(&j);
    vg_buf_puts(&b, "\n");
    int r = write_doc(f, &b, err);
    vg_buf_free(&b);
    return r;
}
