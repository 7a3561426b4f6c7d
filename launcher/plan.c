/* plan.c: compute the sandbox's setup operations in the parent.  Nothing
 * here touches the system beyond reading (lstat/readlink of the host's
 * system dirs); the child executes the list (setup.c). */
#include "launcher/plan.h"
#include "launcher/hostuid.h"

#include "net/dns.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What programs need, read-only: the host's trees, or an image's in
 * their place (p->trees), and the secret-bearing files under /etc hidden
 * even though /etc is visible: one list, which the policy also resolves
 * its rules in (policy/ro_trees.c).  Symlinks among the trees (merged
 * /usr: /bin -> usr/bin) are recreated as symlinks so canonical paths
 * inside are the trees' own canonical paths. */
static const struct vg_trees *trees_of(const struct vg_plan *p)
{
    return p->trees ? p->trees : &vg_system_trees;
}

static const char *const dev_nodes[] = {
    "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
};

static const struct { const char *link, *target; } dev_links[] = {
    {"/dev/fd", "/proc/self/fd"},
    {"/dev/stdin", "/proc/self/fd/0"},
    {"/dev/stdout", "/proc/self/fd/1"},
    {"/dev/stderr", "/proc/self/fd/2"},
    {"/dev/ptmx", "pts/ptmx"},
};

void vg_plan_add(struct vg_plan *p, enum vg_op_kind k, const char *src,
                 const char *dst, uint64_t size, unsigned mode, bool optional)
{
    if (p->nops == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 32;
        p->ops = vg_xrealloc(p->ops, p->cap * sizeof *p->ops);
    }
    p->ops[p->nops++] = (struct vg_op){
        .kind = k,
        .src = src ? vg_xstrdup(src) : NULL,
        .dst = dst ? vg_xstrdup(dst) : NULL,
        .size = size,
        .mode = mode,
        .optional = optional,
    };
}

void vg_plan_add_seal(struct vg_plan *p, const char *dir)
{
    p->seal = vg_xrealloc(p->seal, (p->nseal + 1) * sizeof *p->seal);
    p->seal[p->nseal++] = vg_xstrdup(dir);
}

/* Made where an image lacks them (add_made_files); NULL text: the
 * resolver's resolv.conf. */
static const struct {
    const char *path, *text;
} made_files[] = {
    {VG_SANDBOX_RESOLV_CONF, NULL},
    {"/etc/hosts", "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n"},
};

/* Where made_files[i] must be made on this image (malloc'd), or NULL
 * when it need not be (the image has it; resolv.conf without the
 * resolver): its directory resolved in the image's trees, so that an
 * image whose /etc is a link (etc -> /usr/etc) gets it where /etc is. */
static char *made_path(const struct vg_plan *p, size_t i)
{
    const char *path = made_files[i].path, *slash = strrchr(path, '/');
    if ((!p->dns && !strcmp(path, VG_SANDBOX_RESOLV_CONF)) || vg_plan_image_has(p->trees, path))
        return NULL;
    char *dir = vg_xstrndup(path, (size_t)(slash - path)), *res = NULL;
    char *at = vg_trees_resolve(p->trees, dir, &res) == VG_WALK_FOUND
                   ? vg_xasprintf("%s%s", strcmp(res, "/") ? res : "", slash)
                   : vg_xstrdup(path);
    free(res);
    free(dir);
    return at;
}

/* Is dst under a file the trees hide (a masked secret)? */
static bool hidden_path(const struct vg_plan *p, const char *dst)
{
    const struct vg_trees *t = trees_of(p);
    for (unsigned i = 0; i < t->nhidden; i++)
        if (vg_path_under(dst, t->hidden[i]))
            return true;
    return false;
}

static void add_wanted(const char ***v, unsigned *n, const char *path)
{
    *v = vg_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = path;
}

/* Where the run mounts something outside the sandbox's own trees: the
 * host workdir, the binds' destinations, the files named on the command
 * line that are bound at their paths.  On an image these may need room
 * made in its read-only trees (plan_image.c). */
static void add_image_trees(struct vg_plan *p, const struct vg_run_opts *o,
                            const struct vg_policy *pol, const char *workdir)
{
    const char **v = NULL;
    unsigned n = 0;
    if (!p->private_workdir)
        add_wanted(&v, &n, workdir);
    for (unsigned i = 0; i < o->nbinds; i++)
        add_wanted(&v, &n, o->binds[i].dst ? o->binds[i].dst : o->binds[i].src);
    for (unsigned i = 0; pol && i < vg_policy_nbinds(pol); i++) {
        const struct vg_bind *b = vg_policy_bind(pol, i);
        add_wanted(&v, &n, b->dst ? b->dst : b->src);
    }
    for (unsigned i = 0; i < p->nartifacts; i++)
        if (!vg_plan_in_own_tree(p->artifact_dst[i]) && !hidden_path(p, p->artifact_dst[i]))
            add_wanted(&v, &n, p->artifact_dst[i]);
    char *made[VG_ARRAY_LEN(made_files)] = {0};
    for (size_t i = 0; i < VG_ARRAY_LEN(made_files); i++)
        if ((made[i] = made_path(p, i)))
            add_wanted(&v, &n, made[i]);
    vg_plan_add_image_trees(p, v, n);
    free(v);
    for (size_t i = 0; i < VG_ARRAY_LEN(made_files); i++)
        free(made[i]);
}

/* The files an image may lack that a run needs (a docker image has none
 * of them: the container runtime makes them), made on the skeleton of the
 * image's /etc: vigil's resolv.conf, and a hosts that names localhost
 * (else glibc asks the resolver for it). */
static void add_made_files(struct vg_plan *p)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(made_files); i++) {
        const char *text = made_files[i].text ? made_files[i].text : VG_DNS_RESOLV_CONF;
        char *at = made_path(p, i);
        if (at)
            vg_plan_add(p, VG_OP_FILE, text, at, 0, 0444, false);
        free(at);
    }
}

void vg_plan_add_shown(struct vg_plan *p, const char *host, const char *dst, bool files)
{
    struct stat st;
    if (lstat(host, &st) < 0)
        return;
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(host, target, sizeof target - 1);
        if (n > 0) {
            target[n] = 0;
            vg_plan_add(p, VG_OP_SYMLINK, target, dst, 0, 0, false);
        }
    } else if (S_ISDIR(st.st_mode) || (files && S_ISREG(st.st_mode))) {
        vg_plan_add(p, VG_OP_BIND_RO, host, dst, 0, 0, true);
    }
}

static void add_system_dirs(struct vg_plan *p, const struct vg_run_opts *o,
                            const struct vg_policy *pol, const char *workdir)
{
    const struct vg_trees *t = trees_of(p);
    if (t->root)
        add_image_trees(p, o, pol, workdir);
    for (unsigned i = 0; !t->root && i < t->ndirs; i++)
        vg_plan_add_shown(p, t->dirs[i], t->dirs[i], false);
    if (t->root) {
        vg_plan_add_image_masks(p);
        return;
    }
    for (unsigned i = 0; i < t->nhidden; i++)
        vg_plan_add(p, VG_OP_MASK, NULL, t->hidden[i], 0, 0, true);
}

static void add_proc_dev_tmp(struct vg_plan *p)
{
    vg_plan_add(p, VG_OP_PROC, NULL, "/proc", 0, 0, false);
    /* The kernel knobs stay visible (programs read them) but not writable. */
    vg_plan_add(p, VG_OP_REMOUNT_RO, NULL, "/proc/sys", 0, 0, true);
    vg_plan_add(p, VG_OP_REMOUNT_RO, NULL, "/proc/sysrq-trigger", 0, 0, true);

    vg_plan_add(p, VG_OP_TMPFS, NULL, "/dev", 256 * 1024, 0755, false);
    for (size_t i = 0; i < VG_ARRAY_LEN(dev_nodes); i++)
        vg_plan_add(p, VG_OP_BIND_DEV, dev_nodes[i], dev_nodes[i], 0, 0,
                    strcmp(dev_nodes[i], "/dev/tty") == 0);
    /* A devpts instance of its own, so programs that open ptys (pty,
     * script, test suites) work, and none of the host's terminals is
     * reachable; /dev/ptmx is the link to its pts/ptmx just below. */
    vg_plan_add(p, VG_OP_DEVPTS, NULL, "/dev/pts", 0, 0, false);
    for (size_t i = 0; i < VG_ARRAY_LEN(dev_links); i++)
        vg_plan_add(p, VG_OP_SYMLINK, dev_links[i].target, dev_links[i].link, 0, 0, false);
    uint64_t tmpfs = p->limits.v[VG_LIM_TMPFS];
    vg_plan_add(p, VG_OP_TMPFS, NULL, "/dev/shm", tmpfs, 01777, false);
    vg_plan_add(p, VG_OP_TMPFS, NULL, "/tmp", tmpfs, 01777, false);
}

bool vg_plan_is_system_path(const struct vg_trees *t, const char *path)
{
    for (unsigned i = 0; i < t->ndirs; i++)
        if (vg_path_under(path, t->dirs[i]))
            return true;
    return false;
}

/* On an image, a place in its trees shows the file anyway only where the
 * image has something there: a host file named at a path the image lacks
 * (/var/tmp/job/in.txt, the image having /var but no /var/tmp) is bound
 * read-only on room made for it (plan_image.c), as on the host's trees,
 * not left out of the sandbox. */
bool vg_plan_shows_anyway(const struct vg_trees *t, const char *abs, const char *dst)
{
    return vg_plan_is_system_path(&vg_system_trees, abs) ||
           (t && t->root && vg_plan_is_system_path(t, dst) && vg_plan_image_has(t, dst));
}

static int add_binds(struct vg_plan *p, const struct vg_bind *b, unsigned n,
                     struct vg_err *err)
{
    for (unsigned i = 0; i < n; i++) {
        char *src = realpath(b[i].src, NULL);
        if (!src) {
            vg_errf(err, "bind source '%s': %s", b[i].src, strerror(errno));
            return -1;
        }
        const char *dst = b[i].dst ? b[i].dst : b[i].src;
        if (dst[0] != '/') {
            vg_errf(err, "bind destination '%s' must be an absolute path", dst);
            free(src);
            return -1;
        }
        vg_plan_add(p, b[i].rw ? VG_OP_BIND_RW : VG_OP_BIND_RO, src, dst, 0, 0, false);
        free(src);
    }
    return 0;
}

/* The sandbox's own writable trees: tmpfs mounts of its own, nothing of
 * the host's.  The default workdir lives in the first. */
static const char *const own_trees[] = {"/tmp", "/dev/shm"};

static bool under(const char *path, const char *tree)
{
    size_t n = strlen(tree);
    return !strncmp(path, tree, n) && (path[n] == '/' || path[n] == 0);
}

bool vg_plan_in_own_tree(const char *path)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(own_trees); i++)
        if (under(path, own_trees[i]))
            return true;
    return false;
}

/* Is a host tree bound writable into tree (the workdir, whose writes are
 * the candidate's job, aside)? */
static bool holds_host_writable(const struct vg_plan *p, const char *tree)
{
    for (unsigned i = 0; i < p->nops; i++) {
        const struct vg_op *op = &p->ops[i];
        if (op->kind == VG_OP_BIND_RW && (under(op->dst, tree) || under(tree, op->dst)) &&
            !(p->cwd && under(op->dst, p->cwd)))
            return true;
    }
    return false;
}

uint32_t vg_plan_scratch(const struct vg_plan *p, const char **out, uint32_t max)
{
    uint32_t n = 0;
    for (size_t i = 0; i < VG_ARRAY_LEN(own_trees) && n < max; i++)
        if (!holds_host_writable(p, own_trees[i]))
            out[n++] = own_trees[i];
    return n;
}

/* Is the host file abs already visible, writable, at dst: inside a host
 * tree bound writable at its own path (a host workdir, --bind-rw D)?
 * Then binding it read-only on top would only break a candidate that
 * rewrites it (gcc -o prog, run twice). */
static bool visible_writable(const struct vg_plan *p, const char *abs, const char *dst)
{
    if (strcmp(abs, dst))
        return false;
    for (unsigned i = 0; i < p->nops; i++) {
        const struct vg_op *op = &p->ops[i];
        if (op->kind == VG_OP_BIND_RW && !strcmp(op->src, op->dst) && under(abs, op->src))
            return true;
    }
    return false;
}

static bool planned(const struct vg_plan *p, const char *dst)
{
    for (unsigned i = 0; i < p->nops; i++)
        if ((p->ops[i].kind == VG_OP_BIND_RO || p->ops[i].kind == VG_OP_COPY) &&
            !strcmp(p->ops[i].dst, dst))
            return true;
    return false;
}

/* One rule for the files named on the command line: each is shown once;
 * the system's own and those already visible through a writable bind as
 * they are; in the sandbox's own trees as a private copy (a bind there
 * would put a read-only file into the candidate's writable /tmp);
 * elsewhere bound read-only at its path. */
/* On an image, a file named on the command line (an --artifact: the
 * others the image shows were never taken in, run/artifacts.c) is bound
 * at its path whatever the image has there: the host's /usr is not shown,
 * and the result's hash must be of what the candidate sees.  Never over a
 * masked secret. */
bool vg_plan_artifact_missing(const struct vg_plan *p, const char *abs, const char *dst)
{
    bool image = p->trees && p->trees->root;
    return !((!image && vg_plan_is_system_path(&vg_system_trees, abs)) || hidden_path(p, dst) ||
             visible_writable(p, abs, dst) || planned(p, dst));
}

static void add_artifacts(struct vg_plan *p)
{
    for (unsigned i = 0; i < p->nartifacts; i++) {
        const char *abs = p->artifact_host[i], *dst = p->artifact_dst[i];
        struct stat st;
        if (!vg_plan_artifact_missing(p, abs, dst))
            continue;
        if (!vg_plan_in_own_tree(dst))
            vg_plan_add(p, VG_OP_BIND_RO, abs, dst, 0, 0, false);
        else if (stat(abs, &st) == 0) /* gone since it was hashed: nothing to show */
            vg_plan_add(p, VG_OP_COPY, abs, dst, 0, st.st_mode & 0777, false);
    }
}

static void env_add(char ***envp, unsigned *n, const char *name, const char *value)
{
    size_t len = strlen(name);
    for (unsigned i = 0; i < *n; i++)
        if (!strncmp((*envp)[i], name, len) && (*envp)[i][len] == '=') {
            free((*envp)[i]);
            (*envp)[i] = vg_xasprintf("%s=%s", name, value);
            return;
        }
    *envp = vg_xrealloc(*envp, (*n + 2) * sizeof **envp);
    (*envp)[(*n)++] = vg_xasprintf("%s=%s", name, value);
    (*envp)[*n] = NULL;
}

void vg_plan_set_env(struct vg_plan *p, const char *name, const char *value)
{
    unsigned n = 0;
    while (p->envp[n])
        n++;
    env_add(&p->envp, &n, name, value);
}

/* The candidate's environment: a small allowlist, then what the policy
 * and the command line add.  Nothing else of the caller's environment
 * (tokens, keys) crosses over. */
static void build_env(struct vg_plan *p, const struct vg_run_opts *o,
                      const struct vg_policy *pol)
{
    extern char **environ;
    char **env = vg_xcalloc(1, sizeof *env);
    unsigned n = 0;
    env_add(&env, &n, "PATH", "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin");
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        size_t len = (size_t)(eq - *e);
        bool pass = (len == 4 && !strncmp(*e, "LANG", 4)) ||
                    (len > 3 && !strncmp(*e, "LC_", 3)) ||
                    (len == 4 && !strncmp(*e, "TERM", 4)) ||
                    (len == 2 && !strncmp(*e, "TZ", 2));
        if (pass) {
            char *name = vg_xstrndup(*e, len);
            env_add(&env, &n, name, eq + 1);
            free(name);
        }
    }
    env_add(&env, &n, "HOME", p->cwd);
    env_add(&env, &n, "TMPDIR", "/tmp");
    env_add(&env, &n, "USER", "sandbox");
    env_add(&env, &n, "LOGNAME", "sandbox");
    env_add(&env, &n, "PWD", p->cwd);
    for (unsigned i = 0; pol && i < vg_policy_nenv(pol); i++) {
        const struct vg_env *v = vg_policy_env(pol, i);
        const char *val = v->value ? v->value : getenv(v->name);
        if (val)
            env_add(&env, &n, v->name, val);
    }
    for (unsigned i = 0; i < o->nenv; i++) {
        const char *val = o->env[i].value ? o->env[i].value : getenv(o->env[i].name);
        if (val)
            env_add(&env, &n, o->env[i].name, val);
    }
    p->envp = env;
}

/* The image's trees are bound read-only, so nothing can be made in them:
 * a workdir or bind placed there needs the image to have that path
 * already.  Said before anything starts, naming the path. */
static int check_image_mount_points(const struct vg_plan *p, struct vg_err *err)
{
    const struct vg_trees *t = trees_of(p);
    if (!t->root)
        return 0;
    for (unsigned i = 0; i < p->nops; i++) {
        const struct vg_op *op = &p->ops[i];
        bool makes = op->kind == VG_OP_BIND_RO || op->kind == VG_OP_BIND_RW ||
                     op->kind == VG_OP_DIR || op->kind == VG_OP_WORKDIR;
        bool room = false; /* made on a skeleton (plan_image.c) */
        for (unsigned k = 0; k < p->nseal && !room; k++)
            room = vg_path_under(op->dst, p->seal[k]) && strcmp(op->dst, p->seal[k]);
        if (!makes || room || !vg_plan_is_system_path(t, op->dst))
            continue;
        if (!vg_plan_image_has(t, op->dst)) {
            vg_errf(err, "%s: the image has no such path, and its trees are read-only, so "
                         "nothing can be mounted there (use a path outside the image's "
                         "top-level directories, such as one under /tmp)", op->dst);
            return -1;
        }
    }
    return 0;
}

int vg_plan_build(struct vg_plan *p, const struct vg_run_opts *o,
                  const struct vg_policy *pol, const char *workdir,
                  struct vg_err *err)
{
    p->cwd = vg_xstrdup(workdir);
    p->hostname = vg_xstrdup("vigil");
    p->argv = o->argv;
    p->argv_area = o->argv_area;
    p->argv_area_len = o->argv_area_len;
    p->root_caller = geteuid() == 0;
    vg_host_ids(o, &p->outside_uid, &p->outside_gid);
    p->userns_owner = p->root_caller ? o->host_uid : 0;
    p->dns = true; /* every run has its own netns, and vigil's resolver in it */

    if (vg_net_plan_build(&p->net, pol, err) < 0)
        return -1;
    add_system_dirs(p, o, pol, workdir);
    add_proc_dev_tmp(p);
    if (p->private_workdir) {
        vg_plan_add(p, VG_OP_WORKDIR, NULL, workdir, 0, 0755, false);
    } else {
        vg_plan_add(p, VG_OP_DIR, NULL, workdir, 0, 0755, false);
        vg_plan_add(p, VG_OP_BIND_RW, workdir, workdir, 0, 0, false);
    }
    if (pol) {
        unsigned nb = vg_policy_nbinds(pol);
        struct vg_bind *b = vg_xcalloc(nb ? nb : 1, sizeof *b);
        for (unsigned i = 0; i < nb; i++)
            b[i] = *vg_policy_bind(pol, i);
        int r = add_binds(p, b, nb, err);
        free(b);
        if (r < 0)
            return -1;
    }
    if (add_binds(p, o->binds, o->nbinds, err) < 0)
        return -1;
    add_artifacts(p);
    if (check_image_mount_points(p, err) < 0)
        return -1;
    /* Names go to vigil's resolver (net/dns.h), whatever the host uses. */
    bool image = p->trees && p->trees->root;
    if (image)
        add_made_files(p);
    if (p->dns && (!image || vg_plan_image_has(p->trees, VG_SANDBOX_RESOLV_CONF)))
        vg_plan_add(p, VG_OP_FILE, VG_DNS_RESOLV_CONF, VG_SANDBOX_RESOLV_CONF, 0, 0444, true);
    for (unsigned i = 0; i < p->nseal; i++)
        vg_plan_add(p, VG_OP_SEAL, NULL, p->seal[i], 0, 0, false);
    vg_plan_add(p, VG_OP_REMOUNT_RO, NULL, "/", 0, 0, false);
    build_env(p, o, pol);
    return 0;
}

void vg_plan_free(struct vg_plan *p)
{
    for (unsigned i = 0; i < p->nops; i++) {
        free(p->ops[i].src);
        free(p->ops[i].dst);
    }
    free(p->ops);
    for (unsigned i = 0; i < p->nseal; i++)
        free(p->seal[i]);
    free(p->seal);
    if (p->envp)
        for (char **e = p->envp; *e; e++)
            free(*e);
    free(p->envp);
    free(p->cwd);
    free(p->hostname);
    vg_landlock_plan_free(&p->landlock);
    vg_net_plan_free(&p->net);
    memset(p, 0, sizeof *p);
}

static bool is_top_level(const char *path)
{
    return path[0] == '/' && path[1] && !strchr(path + 1, '/');
}

static bool has_writable_inside(const struct vg_plan *p, const char *top)
{
    size_t l = strlen(top);
    for (unsigned i = 0; i < p->nops; i++) {
        const struct vg_op *op = &p->ops[i];
        bool writable = op->kind == VG_OP_BIND_RW || op->kind == VG_OP_TMPFS ||
                        op->kind == VG_OP_BIND_DEV || op->kind == VG_OP_PROC ||
                        op->kind == VG_OP_DEVPTS;
        if (writable && !strncmp(op->dst, top, l) && (op->dst[l] == '/' || !op->dst[l]))
            return true;
    }
    return false;
}

unsigned vg_plan_masked(const struct vg_plan *p, const char **out, unsigned max)
{
    unsigned n = 0;
    struct stat st;
    for (unsigned i = 0; i < p->nops && n < max; i++) {
        if (p->ops[i].kind != VG_OP_MASK)
            continue;
        const struct vg_trees *t = trees_of(p);
        if (t->root ? vg_plan_image_has(t, p->ops[i].dst) : lstat(p->ops[i].dst, &st) == 0)
            out[n++] = p->ops[i].dst;
    }
    return n;
}

unsigned vg_plan_immutable(const struct vg_plan *p, const char **out, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < p->nops && n < max; i++) {
        const struct vg_op *op = &p->ops[i];
        if ((op->kind == VG_OP_BIND_RO || op->kind == VG_OP_SYMLINK) && is_top_level(op->dst) &&
            !has_writable_inside(p, op->dst))
            out[n++] = op->dst;
    }
    return n;
}
