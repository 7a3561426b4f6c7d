/* outputs.c: the files a run writes for its caller (the log, the result)
 * are checked before anything runs, so that vigil never writes over what
 * the run reads or what the candidate can reach:
 *   - each follows the rule of util/outfile.h (a new file renamed into
 *     place; an existing one replaced only if empty or vigil's own);
 *   - -o and --result are not the same file;
 *   - neither is an input: the policy, a file named on the command line,
 *     an --artifact, a bind source;
 *   - neither lies inside a tree the candidate can write (a host
 *     --workdir or --keep dir, a --bind-rw or policy rw bind): the
 *     candidate could delete or rewrite its own record.
 * A refusal is one line and exit 125, with nothing created. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run/result.h"
#include "run/run_int.h"
#include "util/escape.h"
#include "util/statedir.h"

static const struct vg_outfile_kind log_kind = {
    .what = "-o", .signature = "\xa4type\xa6header", .siglen = 12, .within = 16,
};
static const struct vg_outfile_kind result_kind = {
    .what = "--result", .signature = "\"vigil_version\"", .siglen = 15, .within = 256,
};

/* An output as checked: as given, and where it would be. */
struct out {
    const char *what, *path;
    char *loc;
    struct stat st;
    bool exists;
};

static bool inside(const char *loc, const char *tree)
{
    size_t n = strlen(tree);
    return !strncmp(loc, tree, n) && (loc[n] == '/' || !loc[n] || !strcmp(tree, "/"));
}

/* Is the input `path` (named as `as`) the same file as the output? */
static int not_input(const struct out *o, const char *path, const char *as, struct vg_err *err)
{
    struct stat st;
    if (!o->exists || !path || stat(path, &st) < 0)
        return 0;
    if (st.st_dev != o->st.st_dev || st.st_ino != o->st.st_ino)
        return 0;
    vg_errf(err, "%s %s is %s (%s): vigil never writes over what the run reads", o->what,
            o->path, as, path);
    return -1;
}

static int not_an_input(const struct run *r, const struct out *o, struct vg_err *err)
{
    const struct vg_run_opts *op = r->o;
    if (not_input(o, op->policy_path, "the policy", err) < 0)
        return -1;
    for (int i = 0; i < op->argc; i++)
        if (not_input(o, op->argv[i], "a file named on the command line", err) < 0)
            return -1;
    for (unsigned i = 0; i < op->nartifacts; i++)
        if (not_input(o, op->artifacts[i], "an --artifact", err) < 0)
            return -1;
    for (unsigned i = 0; i < r->plan.nops; i++) {
        const struct vg_op *b = &r->plan.ops[i];
        if ((b->kind == VG_OP_BIND_RO || b->kind == VG_OP_BIND_RW) &&
            not_input(o, b->src, "a bind source", err) < 0)
            return -1;
    }
    return 0;
}

/* Every host tree the candidate can write is a writable bind in the plan
 * (the host workdir is one too). */
static int not_writable_by_candidate(const struct run *r, const struct out *o, struct vg_err *err)
{
    for (unsigned i = 0; i < r->plan.nops; i++) {
        const struct vg_op *b = &r->plan.ops[i];
        if (b->kind == VG_OP_BIND_RW && inside(o->loc, b->src)) {
            vg_errf(err, "%s %s is inside %s, which the candidate can write; put it elsewhere",
                    o->what, o->path, b->src);
            return -1;
        }
    }
    return 0;
}

static int locate(struct out *o, const char *what, const char *path, struct vg_err *err)
{
    *o = (struct out){.what = what, .path = path};
    o->loc = vg_outfile_location(path);
    if (!o->loc) {
        vg_errf(err, "%s %s: %s", what, path,
                errno == EISDIR ? "names a directory, not a file" : strerror(errno));
        return -1;
    }
    o->exists = stat(o->loc, &o->st) == 0;
    return 0;
}

/* One output on its own: where it is, not an input, not reachable. */
static int check_one(struct run *r, struct out *o, const char *what, const char *path)
{
    if (locate(o, what, path, &r->err) < 0)
        return -1;
    return not_an_input(r, o, &r->err) < 0 || not_writable_by_candidate(r, o, &r->err) < 0
           ? -1 : 0;
}

static bool same_file(const struct out *a, const struct out *b)
{
    return !strcmp(a->loc, b->loc) || (a->exists && b->exists && a->st.st_dev == b->st.st_dev &&
                                       a->st.st_ino == b->st.st_ino);
}

static int choose_log_path(struct run *r)
{
    if (r->o->log_path) {
        r->log_path = vg_xstrdup(r->o->log_path);
        return 0;
    }
    char *dir = vg_state_dir(true, "run log", "", &r->err);
    if (!dir)
        return -1;
    /* Room for this run's log among the ones kept.  A log that could not
     * be removed is no reason to refuse the run: it is reported. */
    if (vg_state_prune(dir, VG_STATE_KEEP_LOGS - 1) < 0)
        vg_say(stderr, "vigil: warning: could not remove old logs in %s: %s", dir,
               strerror(errno));
    r->log_path = vg_state_log_name(dir);
    free(dir);
    return 0;
}

static int reserve_result(struct run *r)
{
    if (!r->o->result_path)
        return 0;
    return vg_outfile_reserve(&r->result_out, r->o->result_path, &result_kind, &r->err);
}

/* The result first: when it is the one refused, not even an error record
 * may go there; when only the log is, the error record still does. */
int vg_run_outputs(struct run *r)
{
    struct out log = {0}, res = {0};
    int rc = -1;
    if (r->o->result_path &&
        (check_one(r, &res, "--result", r->o->result_path) < 0 || reserve_result(r) < 0)) {
        r->result_refused = true;
        goto out;
    }
    if (choose_log_path(r) < 0 || check_one(r, &log, "-o", r->log_path) < 0)
        goto out;
    if (r->o->result_path && same_file(&log, &res)) {
        vg_errf(&r->err, "-o %s and --result %s are the same file: give two", log.path, res.path);
        r->result_refused = true;
        goto out;
    }
    if (vg_outfile_reserve(&r->log_out, r->log_path, &log_kind, &r->err) < 0)
        goto out;
    r->log_fd = fcntl(r->log_out.fd, F_DUPFD_CLOEXEC, 0);
    r->log = vg_log_from_fd(r->log_out.fd, r->log_path);
    r->log_out.fd = -1; /* the log owns it now */
    vg_log_cap(r->log, r->limits.v[VG_LIM_LOG]); /* the supervisor ends the run at it */
    rc = 0;
out:
    free(log.loc);
    free(res.loc);
    return rc;
}

void vg_run_error_result(const struct vg_run_opts *o, const char *msg)
{
    if (!o->result_path)
        return;
    /* Best effort, silently: the caller has printed the one line that
     * matters, and a --result vigil may not write was refused already. */
    struct vg_outfile f;
    struct vg_err err;
    if (vg_outfile_reserve(&f, o->result_path, &result_kind, &err) == 0)
        vg_result_write_error(&f, o, msg, &err);
    vg_outfile_discard(&f);
}

int vg_run_log_commit(struct run *r)
{
    return vg_outfile_commit(&r->log_out, &r->err);
}

void vg_run_outputs_discard(struct run *r)
{
    vg_outfile_discard(&r->log_out);
    vg_outfile_discard(&r->result_out);
}
