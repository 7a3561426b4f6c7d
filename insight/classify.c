/* classify.c: which category of the intent summary a syscall record
 * counts in, and which records are noise (summary.h), by the tables
 * below: data, not conditions.  `vigil learn` asks the same questions
 * (learn.c), so what the summary calls noise never becomes a rule. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "core/syscalls.h"
#include "insight/summary.h"
#include "net/dns.h"

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


/* The sockets of the C library's own name service: glibc connects to
 * nscd before every lookup of a host, user or group, whatever the
 * program asked; the sandbox has no /run or /var, so it finds nothing. */
static const char *const libc_sockets[] = {"/var/run/nscd/socket", "/run/nscd/socket"};

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

static bool is_net(enum vg_class c)
{
    return c == VG_CLASS_CONNECT || c == VG_CLASS_SEND || c == VG_CLASS_BIND;
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
int vg_sum_category(const struct vg_sum_places *pl, const struct vg_syscall_ev *e,
                    struct vg_buf *what)
{
    const char *workdir = pl->workdir;
    const char *path = e->args.resolved;
    bool file = e->cls == VG_CLASS_READ || e->cls == VG_CLASS_WRITE || e->cls == VG_CLASS_EXEC;
    if (file && (vg_sum_is_secret(path) || vg_sum_is_secret(e->args.resolved2))) {
        vg_buf_puts(what, path ? path : e->args.resolved2);
        return VG_SUM_SECRETS;
    }
    if (e->cls == VG_CLASS_EXEC)
        return VG_SUM_EXEC;
    if (is_net(e->cls)) {
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


static bool under(const char *path, const char *tree)
{
    size_t n = strlen(tree);
    return !strncmp(path, tree, n) && (path[n] == 0 || path[n] == '/');
}

const char *vg_sum_scratch_tree(const struct vg_sum_places *pl, const char *path)
{
    for (size_t i = 0; path && i < pl->nscratch; i++)
        if (under(path, pl->scratch[i]))
            return pl->scratch[i];
    return NULL;
}

static bool is_libc_socket(const struct vg_args *a)
{
    bool unix_sock = (a->family && !strcmp(a->family, "unix")) ||
                     (a->proto && !strcmp(a->proto, "unix"));
    for (size_t i = 0; unix_sock && a->addr && i < VG_ARRAY_LEN(libc_sockets); i++)
        if (!strcmp(a->addr, libc_sockets[i]))
            return true;
    return false;
}

/* The resolver the sandbox's resolv.conf names (net/dns.h), whatever the
 * protocol: glibc retries a truncated answer over TCP. */
static bool is_resolver(const struct vg_args *a)
{
    return a->addr && a->port == VG_DNS_PORT && !strcmp(a->addr, VG_DNS_ADDR);
}

enum vg_sum_noise vg_sum_noise_of(const struct vg_sum_places *pl, const struct vg_syscall_ev *e)
{
    const struct vg_args *a = &e->args;
    if (is_net(e->cls))
        return is_resolver(a) ? VG_NOISE_RESOLVER : is_libc_socket(a) ? VG_NOISE_NSCD
                                                                       : VG_NOISE_NONE;
    bool file = e->cls == VG_CLASS_READ || e->cls == VG_CLASS_WRITE || e->cls == VG_CLASS_EXEC;
    if (!file || vg_sum_is_secret(a->resolved) || vg_sum_is_secret(a->resolved2))
        return VG_NOISE_NONE; /* a secret looked for is intent, found or not */
    if (e->probe)
        return VG_NOISE_PROBE;
    /* a program run from /tmp is judged as any program: only files are scratch */
    if (e->cls != VG_CLASS_EXEC && vg_sum_scratch_tree(pl, a->resolved) &&
        (!a->resolved2 || vg_sum_scratch_tree(pl, a->resolved2)))
        return VG_NOISE_SCRATCH;
    return VG_NOISE_NONE;
}

void vg_sum_places_set(struct vg_sum_places *pl, const struct vg_header *h)
{
    vg_sum_places_free(pl);
    pl->workdir = h->cwd ? vg_xstrdup(h->cwd) : NULL;
    /* A log older than the key has none: nothing is scratch, as then. */
    uint32_t n = h->nscratch;
    const char *const *trees = h->scratch;
    pl->scratch = vg_xrealloc(NULL, (n ? n : 1) * sizeof *pl->scratch);
    for (uint32_t i = 0; i < n; i++)
        if (trees[i] && trees[i][0] == '/' && trees[i][1]) /* "/" would make all scratch */
            pl->scratch[pl->nscratch++] = vg_xstrdup(trees[i]);
}

void vg_sum_places_free(struct vg_sum_places *pl)
{
    for (size_t i = 0; i < pl->nscratch; i++)
        free(pl->scratch[i]);
    free(pl->scratch);
    free(pl->workdir);
    memset(pl, 0, sizeof *pl);
}
