/* artifacts.c: the files named on the command line.  They are what is
 * under test: hashed into the result and the log header, made visible in
 * the sandbox (plan.c), and readable whatever the policy says (verdict.c).
 * Files in hidden directories and the system's own programs are not taken
 * in just because an argument names them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tracer/run_int.h"
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

/* Hash --artifact files, or every argument naming a regular file that is
 * neither hidden nor part of the system (/bin/true, /usr/bin/python3 are
 * not what is under test, are visible anyway, and hashing a 6 MB
 * interpreter would double the start-up time).  Each is resolved once:
 * the plan binds host path -> sandbox path, the verdict allows the sandbox
 * path, the result names the argument as given. */
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
        if (!abs || (!explicit && (hidden_component(abs) || vg_plan_is_system_path(abs)))) {
            free(abs);
            continue;
        }
        char hex[65];
        if (vg_sha256_file(a, hex, &r->err) < 0) {
            free(abs);
            return -1;
        }
        r->artifacts[k].path = vg_xstrdup(a);
        r->artifacts[k].sha256 = vg_xstrdup(hex);
        r->artifact_hosts[k] = abs;
        /* A relative name is looked up from the candidate's cwd. */
        char *joined = a[0] == '/' ? vg_xstrdup(a) : vg_xasprintf("%s/%s", r->workdir, a);
        r->artifact_paths[k] = vg_path_normalize(joined);
        free(joined);
        if (i == 0 && !explicit)
            r->command_path = vg_xstrdup(r->artifact_paths[k]);
        k++;
    }
    r->nartifacts = k;
    return 0;
}
