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

/* Does the path have a component starting with '.' (other than . and ..)?
 * ~/.ssh/id_rsa, ~/.aws/credentials, .env: such files are never taken
 * into the sandbox just because an argument names them. */
static bool hidden_component(const char *path)
{
    char *abs = realpath(path, NULL);
    bool hidden = false;
    for (const char *p = abs ? abs : path; p && *p; p++)
        if (*p == '.' && (p == (abs ? abs : path) || p[-1] == '/') && p[1] && p[1] != '/' &&
            !(p[1] == '.' && (p[2] == '/' || !p[2])))
            hidden = true;
    free(abs);
    return hidden;
}

/* /bin/true, /usr/bin/python3: the system's programs are not what is
 * under test, are visible anyway, and hashing a 6 MB interpreter would
 * double the start-up time. */
static bool is_system_file(const char *path)
{
    char *abs = realpath(path, NULL);
    bool sys = abs && vg_plan_is_system_path(abs);
    free(abs);
    return sys;
}

/* --artifact, or every argument naming a regular file that is neither
 * hidden nor part of the system. */
int vg_run_artifacts(struct run *r)
{
    struct vg_run_opts *o = r->o;
    bool explicit = o->nartifacts > 0;
    unsigned n = explicit ? o->nartifacts : (unsigned)o->argc;
    r->artifacts = vg_xcalloc(n, sizeof *r->artifacts);
    r->artifact_paths = vg_xcalloc(n, sizeof *r->artifact_paths);
    const char **named = vg_xcalloc(n, sizeof *named);
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++) {
        const char *a = explicit ? o->artifacts[i] : o->argv[i];
        struct stat st;
        if (!explicit && (hidden_component(a) || is_system_file(a)))
            continue;
        if (stat(a, &st) < 0 || !S_ISREG(st.st_mode)) {
            if (explicit) {
                vg_errf(&r->err, "--artifact %s: %s", a,
                        errno ? strerror(errno) : "not a regular file");
                free(named);
                return -1;
            }
            continue;
        }
        char hex[65];
        if (vg_sha256_file(a, hex, &r->err) < 0) {
            free(named);
            return -1;
        }
        r->artifacts[k].path = vg_xstrdup(a);
        r->artifacts[k].sha256 = vg_xstrdup(hex);
        char *joined = a[0] == '/' ? vg_xstrdup(a) : vg_xasprintf("%s/%s", r->workdir, a);
        r->artifact_paths[k] = vg_path_normalize(joined);
        free(joined);
        if (i == 0 && !explicit)
            r->command_path = vg_xstrdup(r->artifact_paths[k]);
        named[k++] = a;
    }
    r->nartifacts = k;
    /* What is hashed is what gets bound into the sandbox. */
    o->artifacts = named;
    o->nartifacts = k;
    return 0;
}

