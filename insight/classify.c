/* classify.c: which category of the intent summary a syscall record
 * counts in (summary.h), by the tables below: data, not conditions. */
#include <fnmatch.h>
#include <string.h>

#include "core/syscalls.h"
#include "insight/summary.h"

/* Secrets and home directories, as the sandbox names them.  Each row is
 * one test on the canonical path; plain string tests, not globs: every
 * file record of a log goes through them. */
enum secret_how {
    S_TREE,        /* the directory and everything below it */
    S_EXACT,       /* the path itself */
    S_COMPONENT,   /* a component of that name anywhere: $WORK/.ssh/id_rsa */
    S_SUFFIX,      /* the path ends so: components, anywhere */
    S_BASE,        /* the last component is exactly this */
    S_BASE_PREFIX, /* the last component starts so */
    S_BASE_SUFFIX, /* the last component ends so */
};

static const struct {
    enum secret_how how;
    const char *s;
} secrets[] = {
    {S_TREE, "/root"}, {S_TREE, "/home"}, {S_TREE, "/etc/sudoers.d"},
    {S_TREE, "/etc/ssl/private"}, {S_TREE, "/run/secrets"}, {S_TREE, "/var/run/secrets"},
    {S_EXACT, "/etc/shadow"}, {S_EXACT, "/etc/shadow-"}, {S_EXACT, "/etc/gshadow"},
    {S_EXACT, "/etc/gshadow-"}, {S_EXACT, "/etc/sudoers"},
    {S_COMPONENT, ".ssh"}, {S_COMPONENT, ".gnupg"}, {S_COMPONENT, ".aws"},
    {S_COMPONENT, ".azure"}, {S_COMPONENT, "gcloud"},
    {S_SUFFIX, "/.kube/config"}, {S_SUFFIX, "/.docker/config.json"},
    {S_BASE, ".netrc"}, {S_BASE, ".git-credentials"}, {S_BASE, ".npmrc"}, {S_BASE, ".pypirc"},
    {S_BASE, ".pgpass"}, {S_BASE, ".env"}, {S_BASE, "environ"}, /* /proc/PID/environ */
    {S_BASE_PREFIX, "id_rsa"}, {S_BASE_PREFIX, "id_ed25519"}, {S_BASE_PREFIX, "id_ecdsa"},
    {S_BASE_PREFIX, "ssh_host_"}, {S_BASE_SUFFIX, "token"}, {S_BASE_SUFFIX, "_token.json"},
};

static bool has_component(const char *path, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(path, name); p; p = strstr(p + 1, name))
        if (p > path && p[-1] == '/' && (p[n] == '/' || p[n] == 0))
            return true;
    return false;
}

static bool secret_row(enum secret_how how, const char *s, const char *path, const char *base)
{
    size_t n = strlen(s), pl = strlen(path), bl = strlen(base);
    switch (how) {
    case S_TREE: return !strncmp(path, s, n) && (path[n] == '/' || path[n] == 0);
    case S_EXACT: return !strcmp(path, s);
    case S_COMPONENT: return has_component(path, s);
    case S_SUFFIX: return pl >= n && !strcmp(path + pl - n, s);
    case S_BASE: return !strcmp(base, s);
    case S_BASE_PREFIX: return !strncmp(base, s, n);
    case S_BASE_SUFFIX: return bl >= n && !strcmp(base + bl - n, s);
    }
    return false;
}

/* Writes nobody needs to review: the sandbox's own devices and ttys. */
static const char *const harmless_write_globs[] = {
    "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts/*", "/dev/stdout", "/dev/stderr",
    "/proc/self/fd/[12]",
};


static bool matches_any(const char *const *globs, size_t n, const char *path)
{
    for (size_t i = 0; path && i < n; i++)
        if (fnmatch(globs[i], path, 0) == 0)
            return true;
    return false;
}

bool vg_sum_is_secret(const char *path)
{
    if (!path || path[0] != '/')
        return false;
    const char *slash = strrchr(path, '/');
    for (size_t i = 0; i < VG_ARRAY_LEN(secrets); i++)
        if (secret_row(secrets[i].how, secrets[i].s, path, slash + 1))
            return true;
    return false;
}

/* Calls that take a name away, as the syscall table says what each call
 * does (rename moves it: a write, not a deletion). */
static bool is_delete(const char *name)
{
    const struct vg_sysent *e = name ? vg_sys_by_name(name) : NULL;
    return e && (e->carry == VG_CARRY_UNLINK || e->carry == VG_CARRY_RMDIR);
}

/* Inside the workdir (or its own name)? */
static bool in_workdir(const char *workdir, const char *path)
{
    if (!workdir || !path)
        return false;
    size_t n = strlen(workdir);
    return !strncmp(path, workdir, n) && (path[n] == 0 || path[n] == '/' || n == 1);
}

static void net_what(const struct vg_args *a, struct vg_buf *b)
{
    bool v6 = a->family && !strcmp(a->family, "inet6");
    vg_buf_printf(b, "%s %s%s%s", a->proto ? a->proto : a->family ? a->family : "?",
                  v6 ? "[" : "", a->addr ? a->addr : "?", v6 ? "]" : "");
    if (a->port >= 0)
        vg_buf_printf(b, ":%d", a->port);
}

/* Which category a record counts in, and under what name; -1: none.
 * (A secret counts as a secret, whatever else it is.) */
int vg_sum_category(const char *workdir, const struct vg_syscall_ev *e, struct vg_buf *what)
{
    const char *path = e->args.resolved;
    bool file = e->cls == VG_CLASS_READ || e->cls == VG_CLASS_WRITE || e->cls == VG_CLASS_EXEC;
    if (file && (vg_sum_is_secret(path) || vg_sum_is_secret(e->args.resolved2))) {
        vg_buf_puts(what, path ? path : e->args.resolved2);
        return VG_SUM_SECRETS;
    }
    if (e->cls == VG_CLASS_EXEC)
        return VG_SUM_EXEC;
    if (e->cls == VG_CLASS_CONNECT || e->cls == VG_CLASS_SEND || e->cls == VG_CLASS_BIND) {
        net_what(&e->args, what);
        return VG_SUM_NETWORK;
    }
    if (e->cls != VG_CLASS_WRITE || !path || path[0] != '/' || in_workdir(workdir, path))
        return -1;
    vg_buf_puts(what, path);
    if (is_delete(e->name))
        return VG_SUM_DELETIONS;
    return matches_any(harmless_write_globs, VG_ARRAY_LEN(harmless_write_globs), path)
               ? -1 : VG_SUM_WRITES;
}

