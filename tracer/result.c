/* result.c: see result.h. */
#include "tracer/result.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracer/limits.h"
#include "tracer/sandbox.h"
#include "util/json.h"

static void hit(struct vg_ending *end, enum vg_limit l)
{
    for (unsigned i = 0; i < end->nhits; i++)
        if (!strcmp(end->hits[i], vg_limit_name(l)))
            return;
    end->hits[end->nhits++] = vg_limit_name(l);
}

/* Allocation failures show up as messages, not signals, in most runtimes:
 * with an address-space limit, running into it reads like this. */
static bool looks_out_of_memory(const struct vg_io *io)
{
    static const char *const signs[] = {
        "MemoryError", "Cannot allocate memory", "out of memory", "std::bad_alloc",
        "JavaScript heap out of memory", "Out of memory", "memory exhausted",
    };
    size_t n;
    char *tail = vg_capture_tail(&io->err, &n);
    bool found = false;
    for (size_t i = 0; i < VG_ARRAY_LEN(signs) && !found; i++)
        found = memmem(tail, n, signs[i], strlen(signs[i])) != NULL;
    free(tail);
    return found;
}

static void candidate_ending(struct vg_ending *end, const struct vg_outcome *out,
                             const struct vg_io *io, const struct vg_limits *lim)
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
    double cpu = end->cpu_user_s + end->cpu_sys_s;
    if (end->signal == SIGXCPU || (end->signal == SIGKILL && cpu + 0.05 >= (double)lim->v[VG_LIM_CPU]))
        hit(end, VG_LIM_CPU);
    if (end->signal == SIGXFSZ)
        hit(end, VG_LIM_FSIZE);
    if (strcmp(end->status, "ok") && looks_out_of_memory(io))
        hit(end, VG_LIM_MEMORY);
    if (end->nhits && strcmp(end->status, "ok")) {
        end->status = "limit";
        end->limit = end->hits[0];
    }
}

void vg_ending_decide(struct vg_ending *end, const struct vg_outcome *out,
                      const struct vg_io *io, const struct vg_limits *lim)
{
    end->cand_code = -1;
    if (io->out.total > io->out.cap || io->err.total > io->err.cap)
        hit(end, VG_LIM_OUTPUT);
    /* RLIMIT_NPROC refuses the fork that would exceed it, so reaching the
     * cap (less the one that failed) is the sign it was hit. */
    if (out->max_tasks + 1 + out->own_procs >= lim->v[VG_LIM_PROCS])
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
    } else if (out->policy_kill) {
        end->status = "killed";
        end->signal = SIGKILL;
        end->exit_code = 128 + SIGKILL;
        snprintf(end->error, sizeof end->error, "%s", out->kill_reason);
    } else if (out->cand_done) {
        candidate_ending(end, out, io, lim);
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
    vg_json_bool(j, c->total > c->cap);
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

static void limits(struct vg_json *j, const struct vg_limits *l, const struct vg_ending *end)
{
    vg_json_key(j, "limits");
    vg_json_obj_begin(j);
    for (int i = 0; i < VG_LIM_COUNT; i++) {
        vg_json_key(j, vg_limit_name(i));
        vg_json_obj_begin(j);
        vg_json_key(j, "value");
        vg_json_uint(j, l->v[i]);
        vg_json_key(j, "unit");
        vg_json_str(j, vg_limit_unit(i));
        vg_json_key(j, "enforced_by");
        vg_json_str(j, vg_limit_mechanism(i));
        bool was_hit = false;
        for (unsigned k = 0; k < end->nhits; k++)
            was_hit |= !strcmp(end->hits[k], vg_limit_name(i));
        vg_json_key(j, "hit");
        vg_json_bool(j, was_hit);
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
    limits(j, in->limits, e);
    vg_json_key(j, "limits_hit");
    vg_json_arr_begin(j);
    for (unsigned i = 0; i < e->nhits; i++)
        vg_json_str(j, e->hits[i]);
    vg_json_arr_end(j);
    vg_json_key(j, "mode");
    vg_json_str(j, in->opts->mode == VG_MODE_DRY_RUN ? "dry-run" : "enforce");
    vg_json_key(j, "engine"); vg_json_str(j, in->engine);
    vg_json_key(j, "engine_note");
    if (in->engine_note && in->engine_note[0]) vg_json_str(j, in->engine_note); else vg_json_null(j);
    vg_json_key(j, "cpus");
    if (in->opts->cpus) vg_json_uint(j, in->opts->cpus); else vg_json_null(j);
    vg_json_key(j, "landlock_abi"); vg_json_int(j, in->landlock_abi);
    vg_json_key(j, "policy");
    vg_json_obj_begin(j);
    vg_json_key(j, "path"); vg_json_str(j, in->policy_path);
    vg_json_key(j, "sha256"); vg_json_str(j, in->policy_sha256);
    vg_json_obj_end(j);
    counts(j, in->outcome);
    vg_json_key(j, "log"); vg_json_str(j, in->log_path);
    vg_json_key(j, "workdir"); vg_json_str(j, in->workdir);
    vg_json_key(j, "workdir_kept"); vg_json_bool(j, in->workdir_kept);
    vg_json_key(j, "start_time"); vg_json_str(j, when);
    vg_json_key(j, "start_unix_ns"); vg_json_uint(j, in->start_wall_ns);
    vg_json_obj_end(j);
}

int vg_result_write(const char *path, const struct vg_result_in *in, struct vg_err *err)
{
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, true);
    body(&j, in);
    vg_buf_puts(&b, "\n");
    char *tmp = vg_xasprintf("%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int r = -1;
    bool written = fd >= 0 && vg_write_all(fd, b.data, b.len) == 0;
    int saved = errno;
    /* close even after a failed write; a failed close is a failed write */
    if (fd >= 0 && close(fd) < 0 && written) {
        written = false;
        saved = errno;
    }
    if (!written) {
        vg_errf(err, "write result %s: %s", path, strerror(saved));
        if (fd >= 0)
            unlink(tmp);
    } else if (rename(tmp, path) < 0) {
        vg_errf(err, "write result %s: %s", path, strerror(errno));
        unlink(tmp);
    } else {
        r = 0;
    }
    free(tmp);
    vg_buf_free(&b);
    return r;
}
