/* ro_trees.c: the host's trees every sandbox shows read-only (the launcher
 * mounts them: launcher/plan.c), what it hides in them, and the one walk
 * that resolves a path lying in them on the host's file system.  The
 * policy resolves its rules' literal paths there once, when it is loaded
 * (policy/resolve.c): nothing in these trees can change during a run, so
 * what a path there names on the host is what it names in the sandbox. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy_int.h"

/* What programs need from the host, read-only.  Symlinks among them
 * (merged /usr: /bin -> usr/bin) are recreated as symlinks, so canonical
 * paths inside the sandbox are the host's canonical paths. */
static const char *const system_dirs[] = {
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
};

/* Secret-bearing files under /etc: hidden even though /etc is visible. */
static const char *const etc_masks[] = {
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
    "/etc/sudoers", "/etc/sudoers.d", "/etc/ssl/private", "/etc/security/opasswd",
    "/etc/krb5.keytab", "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key",
    "/etc/ssh/ssh_host_key", "/etc/libvirt", "/etc/docker", "/etc/NetworkManager/system-connections",
    "/etc/wireguard", "/etc/ipsec.secrets", "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets",
    "/etc/credstore", "/etc/credstore.encrypted",
};

/* Bound over the host's (launcher/plan.c): not the host's object. */
static const char *const sandbox_files[] = {VG_SANDBOX_RESOLV_CONF};

const struct vg_trees vg_system_trees = {
    system_dirs, VG_ARRAY_LEN(system_dirs), etc_masks, VG_ARRAY_LEN(etc_masks),
    sandbox_files, VG_ARRAY_LEN(sandbox_files), NULL,
};

/* An image's top-level entries the sandbox has of its own instead
 * (launcher/plan.c mounts them): never the image's. */
static const char *const sandbox_own_tops[] = {"proc", "dev", "tmp", "sys"};

static bool own_top(const char *name)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(sandbox_own_tops); i++)
        if (!strcmp(name, sandbox_own_tops[i]))
            return true;
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct vg_trees *vg_trees_of_root(const char *rootfs, struct vg_err *err)
{
    DIR *d = opendir(rootfs);
    if (!d) {
        vg_errf(err, "image tree %s: %s", rootfs, strerror(errno));
        return NULL;
    }
    char **dirs = NULL;
    unsigned n = 0;
    struct dirent *e;
    int dfd = dirfd(d);
    while ((e = readdir(d))) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || own_top(e->d_name) ||
            fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !(S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))
            continue; /* a top-level file, if an image has one, is not shown */
        dirs = vg_xrealloc(dirs, (n + 1) * sizeof *dirs);
        dirs[n++] = vg_xasprintf("/%s", e->d_name);
    }
    closedir(d);
    if (n)
        qsort(dirs, n, sizeof *dirs, by_name); /* the plan's order: the same every run */
    struct vg_trees *t = vg_xcalloc(1, sizeof *t);
    *t = vg_system_trees;
    t->dirs = (const char *const *)dirs;
    t->ndirs = n;
    t->root = rootfs;
    return t;
}

void vg_trees_free(struct vg_trees *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < t->ndirs; i++)
        free((char *)t->dirs[i]);
    free((void *)t->dirs);
    free(t);
}

/* The kernel's own bound on symlinks followed in one lookup (ELOOP). */
#define MAX_LINKS 40

bool vg_path_under(const char *path, const char *tree)
{
    size_t n = strlen(tree);
    return !strncmp(path, tree, n) && (path[n] == '/' || path[n] == 0);
}

bool vg_trees_holds(const struct vg_trees *t, const char *path)
{
    bool in = false;
    for (unsigned i = 0; i < t->ndirs && !in; i++)
        in = vg_path_under(path, t->dirs[i]);
    for (unsigned i = 0; i < t->nhidden && in; i++)
        in = !vg_path_under(path, t->hidden[i]);
    for (unsigned i = 0; i < t->nown && in; i++)
        in = !vg_path_under(path, t->own[i]);
    return in;
}

/* A strict ancestor of a tree ("/", or the directories a test's trees lie
 * in): the trees' own places are taken as given, never looked at. */
static bool above_trees(const struct vg_trees *t, const char *path)
{
    for (unsigned i = 0; i < t->ndirs; i++)
        if (strcmp(path, t->dirs[i]) && vg_path_under(t->dirs[i], path[0] ? path : "/"))
            return true;
    return false;
}

/* The walk's state: the resolved part (no symlink in it), and what is
 * left to walk, which a symlink's target is spliced in front of. */
struct walk {
    const char *root;   /* the trees' host directory, "" for "/" */
    char host[2 * PATH_MAX];  /* root + done, for lstat and readlink */
    char done[PATH_MAX];
    size_t dlen;
    char todo[2 * PATH_MAX];
    unsigned links;
};

/* Put the link's target in front of what is left.  An absolute target
 * starts again from "/". */
static enum vg_walk splice_link(struct walk *w, const char *link)
{
    char target[PATH_MAX], left[2 * PATH_MAX];
    ssize_t n = readlink(link, target, sizeof target - 1);  /* link: a host path */
    if (n <= 0 || ++w->links > MAX_LINKS)
        return VG_WALK_AWAY;
    target[n] = 0;
    if ((size_t)snprintf(left, sizeof left, "%s/%s", target, w->todo) >= sizeof left)
        return VG_WALK_AWAY;
    memcpy(w->todo, left, sizeof left);
    if (target[0] == '/') {
        w->dlen = 0;
        w->done[0] = 0;
    }
    return VG_WALK_FOUND;
}

/* One component c (n bytes), already taken off what is left. */
static enum vg_walk step(struct walk *w, const struct vg_trees *t, const char *c, size_t n)
{
    if (vg_path_kind(c, n) == VG_PATH_DOT)
        return VG_WALK_FOUND;
    if (vg_path_kind(c, n) == VG_PATH_DOTDOT) {
        vg_path_pop(w->done, &w->dlen);     /* done has no symlink: lexical is right */
        return VG_WALK_FOUND;
    }
    size_t before = w->dlen;
    if (vg_path_push(w->done, sizeof w->done, &w->dlen, c, n))
        return VG_WALK_AWAY;
    /* never look at anything outside the trees: it could change */
    if (!vg_trees_holds(t, w->done))
        return above_trees(t, w->done) ? VG_WALK_FOUND : VG_WALK_AWAY;
    struct stat st;
    /* An image's trees lie under its rootfs: an absolute link there starts
     * again from the image's "/" (splice), never the host's. */
    if ((size_t)snprintf(w->host, sizeof w->host, "%s%s", w->root, w->done) >= sizeof w->host)
        return VG_WALK_AWAY;
    if (lstat(w->host, &st))
        return errno == ENOENT || errno == ENOTDIR ? VG_WALK_MISSING : VG_WALK_AWAY;
    if (!S_ISLNK(st.st_mode))
        return VG_WALK_FOUND;
    w->dlen = before;
    w->done[before] = 0;
    return splice_link(w, w->host);
}

enum vg_walk vg_trees_resolve(const struct vg_trees *t, const char *path, char **out)
{
    *out = NULL;
    if (path[0] != '/' || !vg_trees_holds(t, path) || strlen(path) >= PATH_MAX)
        return VG_WALK_AWAY;
    struct walk *w = vg_xcalloc(1, sizeof *w);     /* big: keep it off the stack */
    w->root = t->root ? t->root : "";
    strcpy(w->todo, path);
    enum vg_walk r = VG_WALK_FOUND;
    size_t n;
    const char *c;
    while (r == VG_WALK_FOUND && (c = vg_path_comp(w->todo, &n))) {
        char comp[NAME_MAX + 1];
        if (n > NAME_MAX) {
            r = VG_WALK_AWAY;
            break;
        }
        memcpy(comp, c, n);
        comp[n] = 0;
        memmove(w->todo, c + n, strlen(c + n) + 1);
        r = step(w, t, comp, n);
    }
    if (r == VG_WALK_FOUND && !vg_trees_holds(t, w->dlen ? w->done : "/"))
        r = VG_WALK_AWAY;       /* it named something the sandbox has of its own */
    if (r == VG_WALK_FOUND)
        *out = vg_xstrdup(w->dlen ? w->done : "/");
    free(w);
    return r;
}
