/* artifacts.c: the files named on the command line.  They are what is
 * under test: hashed into the result and the log header, made visible in
 * the sandbox (plan.c), and readable whatever the policy says (core/decide.c).
 * Files in hidden directories and the system's own programs are not taken
 * in just because an argument names them; a file that is not shown is
 * named in a warning. */
#include <errno.h>
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

/* Hash --artifact files, or every argument naming a regular file that is
 * neither hidden nor part of the system (/bin/true, /usr/bin/python3 are
 * not what is under test, are visible anyway, and hashing a 6 MB
 * interpreter would double the start-up time).  Each is resolved once:
 * the plan shows host path -> sandbox path, the verdict allows the sandbox
 * path, the result names the argument as given.  A file named twice is
 * taken once. */
int vg_run_artifacts(struct run *r)
{
    struct vg_run_opts *o = r->o;
    bool explicit = o->nartifacts > 0;
    unsigned n = explicit ? o->nartifacts : (unsigned)o->argc;
    r->artifacts = vg_xcalloc(n, sizeof *r->artifacts);
    r->artifact_paths = vg_xcalloc(n, sizeof *r->artifact_paths);
    r->artifact_hosts = vg_xcalloc(n, sizeof *r->artifact_hosts);
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++) {
        const char *a = explicit ? o->artifacts[i] : o->argv[i];
        struct stat st;
        int sr = stat(a, &st);
        if (sr < 0 || !S_ISREG(st.st_mode)) {
            if (!explicit)
                continue;
            vg_errf(&r->err, "--artifact %s: %s", a, sr < 0 ? strerror(errno) : "not a regular file");
            return -1;
        }
        char *abs = realpath(a, NULL);
        char *dst = sandbox_path(r, a);
        const char *why = abs && !explicit ? left_out(r, abs, dst, &st) : NULL;
        if (why)
            vg_run_warn(r, "%s is not shown in the sandbox: %s", a, why);
        if (!abs || why || seen(r, k, dst) || (!explicit && vg_plan_is_system_path(abs))) {
            free(abs);
            free(dst);
            continue;
        }
        char hex[65];
        if (vg_sha256_file(a, hex, &r->err) < 0) {
            free(abs);
            free(dst);
            return -1;
        }
        r->artifacts[k].path = vg_xstrdup(a);
        r->artifacts[k].sha256 = vg_xstrdup(hex);
        r->artifact_hosts[k] = abs;
        r->artifact_paths[k] = dst;
        if (i == 0 && !explicit)
            r->command_path = vg_xstrdup(dst);
        k++;
    }
    r->nartifacts = k;
    return 0;
}
