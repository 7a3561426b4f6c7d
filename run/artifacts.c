/* artifacts.c: the files named on the command line.  They are what is
 * under test: hashed into the result and the log header, made visible in
 * the sandbox (plan.c), and readable whatever the policy says (core/decide.c).
 * Files in hidden directories and the system's own programs are not taken
 * in just because an argument names them; a file that is not shown is
 * named in a warning. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "launcher/limits.h"
#include "run/run_int.h"
#include "util/path.h"
#include "util/sha256.h"

/* Does the canonical path have a component starting with '.'?
 * ~/.ssh/id_rsa, ~/.aws/credentials, .env: such files are never taken into
 * the sandbox just because an argument names them. */
static bool hidden_component(const char *abs)
{
    for (const char *p = strstr(abs, "/."); p; p = strstr(p + 1, "/."))
        if (p[2] && p[2] != '/')
            return true; /* realpath left no "." or ".." components */
    return false;
}

/* Where the candidate sees argument a: an absolute name as it is, a
 * relative one from the candidate's cwd. */
static char *sandbox_path(const struct run *r, const char *a)
{
    char *joined = a[0] == '/' ? vg_xstrdup(a) : vg_xasprintf("%s/%s", r->workdir, a);
    char *p = vg_path_normalize(joined);
    free(joined);
    return p;
}

static bool seen(const struct run *r, unsigned k, const char *dst)
{
    for (unsigned i = 0; i < k; i++)
        if (!strcmp(r->artifact_paths[i], dst))
            return true;
    return false;
}

/* Is a file named on the command line one the sandbox will not show?
 * Then say so (once per argument): the candidate alone would only say
 * "No such file or directory".  NULL: it is taken in. */
static const char *left_out(const struct run *r, const char *abs, const char *dst,
                            const struct stat *st)
{
    if (hidden_component(abs))
        return "it is in a hidden directory, which vigil never takes in by itself "
               "(name it with --artifact to show it)";
    if (vg_plan_in_own_tree(dst) && (uint64_t)st->st_size > r->limits.v[VG_LIM_TMPFS])
        return "it would be copied into the sandbox's own /tmp, and it is larger than --tmpfs";
    return NULL;
}

/* Take in one file named on the command line: an --artifact (explicit:
 * it must be a regular file, and is taken even when hidden or part of the
 * system) or an argument (argv[0] when command).  0, or -1 with r->err. */
static int take_one(struct run *r, const char *a, bool explicit, bool command)
{
    struct stat st;
    int sr = stat(a, &st);
    if (sr < 0 || !S_ISREG(st.st_mode)) {
        if (!explicit)
            return 0;
        vg_errf(&r->err, "--artifact %s: %s", a, sr < 0 ? strerror(errno) : "not a regular file");
        return -1;
    }
    char *abs = realpath(a, NULL);
    char *dst = sandbox_path(r, a);
    const char *why = abs && !explicit ? left_out(r, abs, dst, &st) : NULL;
    if (why)
        vg_run_warn(r, "%s is not shown in the sandbox: %s", a, why);
    bool twice = abs && !why && seen(r, r->nartifacts, dst);
    if (command && twice) /* an --artifact already took the command in */
        r->command_path = vg_xstrdup(dst);
    if (!abs || why || twice || (!explicit && vg_plan_shows_anyway(r->plan.trees, abs, dst))) {
        free(abs);
        free(dst);
        return 0;
    }
    char hex[65];
    if (vg_sha256_file(a, hex, &r->err) < 0) {
        free(abs);
        free(dst);
        return -1;
    }
    unsigned k = r->nartifacts++;
    r->artifacts[k].path = vg_xstrdup(a);
    r->artifacts[k].sha256 = vg_xstrdup(hex);
    r->artifact_hosts[k] = abs;
    r->artifact_paths[k] = dst;
    if (command)
        r->command_path = vg_xstrdup(dst);
    return 0;
}

/* Hash the --artifact files and every argument naming a regular file that
 * is neither hidden nor part of the system (/bin/true, /usr/bin/python3
 * are not what is under test, are visible anyway, and hashing a 6 MB
 * interpreter would double the start-up time).  --artifact adds to the
 * arguments, never replaces them: `--artifact /abs/cand.py -- python3
 * cand.py` still shows cand.py in the workdir.  Each is resolved once:
 * the plan shows host path -> sandbox path, the verdict allows the sandbox
 * path, the result names the file as given.  A file named twice at one
 * sandbox path is taken once. */
static void room_for(struct run *r, unsigned more)
{
    size_t n = (size_t)r->nartifacts + more + 1;
    r->artifacts = vg_xrealloc(r->artifacts, n * sizeof *r->artifacts);
    r->artifact_paths = vg_xrealloc(r->artifact_paths, n * sizeof *r->artifact_paths);
    r->artifact_hosts = vg_xrealloc(r->artifact_hosts, n * sizeof *r->artifact_hosts);
}

static int take_command(struct run *r)
{
    room_for(r, (unsigned)r->o->argc);
    for (int i = 0; i < r->o->argc; i++)
        if (take_one(r, r->o->argv[i], false, i == 0) < 0)
            return -1;
    return 0;
}

int vg_run_artifacts(struct run *r)
{
    struct vg_run_opts *o = r->o;
    r->nartifacts = 0;
    room_for(r, o->nartifacts);
    for (unsigned i = 0; i < o->nartifacts; i++)
        if (take_one(r, o->artifacts[i], true, false) < 0)
            return -1;
    return take_command(r);
}

/* The plan's pointers follow the arrays, which grew; what it mounted
 * stays what it had. */
int vg_run_command_artifacts(struct run *r)
{
    unsigned from = r->nartifacts;
    if (take_command(r) < 0)
        return -1;
    r->plan.artifact_host = r->artifact_hosts;
    r->plan.artifact_dst = r->artifact_paths;
    for (unsigned k = from; k < r->nartifacts; k++)
        if (vg_plan_artifact_missing(&r->plan, r->artifact_hosts[k], r->artifact_paths[k])) {
            vg_errf(&r->err, "--hold: %s is not in the held sandbox (neither in the workdir "
                    "nor in the system's trees, and its mounts were made before the request): "
                    "put it in --workdir, or name it with --artifact when preparing",
                    r->artifacts[k].path);
            return -1;
        }
    return 0;
}
