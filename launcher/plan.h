/* plan.h: the sandbox as a list of setup operations.
 *
 * Like bubblewrap, the parent turns options and policy into a flat list of
 * operations (plan.c), and the child executes them in order in the new
 * namespaces with one linear function (setup.c).  Reading the list is
 * reading what the candidate will see. */
#ifndef VG_PLAN_H
#define VG_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "launcher/limits.h"
#include "net/net.h"
#include "launcher/run_opts.h"
#include "util/util.h"

enum vg_op_kind {
    VG_OP_TMPFS,     /* dst: fresh tmpfs (size, mode) */
    VG_OP_BIND_RO,   /* src (host) -> dst, read-only, nosuid, nodev */
    VG_OP_BIND_RW,   /* src (host) -> dst, writable, nosuid, nodev */
    VG_OP_COPY,      /* src (host file) -> dst in the sandbox's own tmpfs: a private
                      * copy owned by the sandbox user, permission bits (mode) kept */
    VG_OP_BIND_DEV,  /* src device node -> dst (keeps dev, read-write) */
    VG_OP_MASK,      /* dst exists in a read-only bind: hide it (empty file / empty dir) */
    VG_OP_PROC,      /* dst: procfs of the new pid namespace */
    VG_OP_SYMLINK,   /* dst -> src (link text) */
    VG_OP_DIR,       /* mkdir -p dst (mode) */
    VG_OP_WORKDIR,   /* mkdir -p dst (mode), owned by the sandbox user */
    VG_OP_REMOUNT_RO,/* make dst read-only (recursively) once it is populated */
    VG_OP_DEVPTS,    /* dst: a devpts instance of the sandbox's own */
    VG_OP_FILE,      /* src is TEXT (not a path): a file of vigil's own with it, bound
                      * read-only over dst, itself not followed if a symlink
                      * (optional: skipped when dst does not exist; else dst is
                      * made first if missing: on an image's skeleton) */
    VG_OP_SEAL       /* the mount at dst (a skeleton's tmpfs) read-only, not the
                      * mounts on it */
};

struct vg_op {
    enum vg_op_kind kind;
    char *src;
    char *dst;
    uint64_t size;
    unsigned mode;
    bool optional;   /* a missing source is skipped, not an error */
};

struct vg_plan {
    struct vg_op *ops;
    unsigned nops, cap;

    char **argv;          /* candidate command */
    char **envp;          /* final, scrubbed environment */
    char *cwd;            /* candidate's cwd inside the sandbox */
    char *hostname;
    struct vg_net_plan net; /* the netns is always the sandbox's own; egress, filter */
    bool dns;             /* vigil's resolver answers in it (net/dns.h) */
    struct vg_limits limits;
    const struct vg_enforce *enforce; /* each limit's mechanism, the cgroups to join */
    /* The read-only system trees: vg_system_trees (the host's), or an
     * image's (vg_trees_of_root: trees->root is its rootfs, bound in their
     * place).  Set by the caller before vg_plan_build; NULL: the host's. */
    const struct vg_trees *trees;
    char **seal;          /* skeletons of an image's trees, sealed last (plan_image.c) */
    unsigned nseal;
    uid_t outside_uid;    /* host uid the sandbox uid maps to */
    gid_t outside_gid;
    uid_t userns_owner;   /* --host-uid: the sandbox's user namespace is created by
                           * it (launcher/hostuid.h); 0: by vigil */
    bool root_caller;     /* vigil runs as host root */
    bool private_workdir; /* the workdir lives only in the sandbox's /tmp */
    /* Files named on the command line: host path -> sandbox path (set by
     * the caller before vg_plan_build). */
    char *const *artifact_host;
    char *const *artifact_dst;
    unsigned nartifacts;
    char *argv_area;      /* see vg_run_opts */
    size_t argv_area_len;
    /* Landlock: the kernel-enforced subset of the policy. */
    int landlock_abi;
    struct vg_landlock_plan landlock;
};

void vg_plan_add(struct vg_plan *p, enum vg_op_kind k, const char *src,
                 const char *dst, uint64_t size, unsigned mode, bool optional);
/* The workdir when nothing of it has to outlive the run: a directory of the
 * sandbox's own /tmp, so no host directory is created or removed. */
#define VG_PRIVATE_WORKDIR "/tmp/work"

/* plan_image.c: the image's trees (p->trees) in the host's place, each
 * read-only; the directories along the wanted paths (sandbox paths the
 * run mounts something at) that the image lacks made skeletons. */
void vg_plan_add_image_trees(struct vg_plan *p, const char *const *wanted, unsigned nwanted);
/* Does the image (t->root) have path, resolved as the sandbox will? */
bool vg_plan_image_has(const struct vg_trees *t, const char *path);
/* The hidden files at their resolved places in the image (plan_image.c). */
void vg_plan_add_image_masks(struct vg_plan *p);
/* Show the host path host at dst as it is: a symlink recreated, a directory
 * (or with files, a regular file) bound read-only; nothing else. */
void vg_plan_add_shown(struct vg_plan *p, const char *host, const char *dst, bool files);
/* Seal dir once everything is mounted (VG_OP_SEAL at the end). */
void vg_plan_add_seal(struct vg_plan *p, const char *dir);

/* Build the full plan.  workdir is the host path of the workdir, or
 * VG_PRIVATE_WORKDIR with p->private_workdir set. */
int vg_plan_build(struct vg_plan *p, const struct vg_run_opts *o,
                  const struct vg_policy *pol, const char *workdir,
                  struct vg_err *err);
void vg_plan_free(struct vg_plan *p);
/* The paths the plan masks (VG_OP_MASK) that exist: the candidate sees an
 * empty file or directory there, and the log says so (args.masked). */
unsigned vg_plan_masked(const struct vg_plan *p, const char **out, unsigned max);
/* Top-level trees of the sandbox that nothing can change during the run
 * (read-only system binds and the root's own symlinks, with no writable
 * mount inside them).  Fills at most max pointers into the plan. */
unsigned vg_plan_immutable(const struct vg_plan *p, const char **out, unsigned max);

/* Is this path (canonical) inside the read-only system trees t (/usr,
 * /etc, /bin, ...), which the sandbox shows anyway? */
bool vg_plan_is_system_path(const struct vg_trees *t, const char *path);
/* Is the file named on the command line (host path abs, shown at dst)
 * one the sandbox shows anyway: the host system's own, or, on an image,
 * at a place the image's trees hold (the image's file is what is there)? */
bool vg_plan_shows_anyway(const struct vg_trees *t, const char *abs, const char *dst);
/* Would the file named on the command line (host path abs, shown at dst)
 * need a mount of its own that the plan does not have (it is neither the
 * system's, nor masked, nor visible through a writable bind at its path,
 * nor shown already)?  A held sandbox (vigil run --hold), whose mounts
 * are made before the command is known, refuses such a file. */
bool vg_plan_artifact_missing(const struct vg_plan *p, const char *abs, const char *dst);
/* Set NAME=VALUE in the plan's environment (the last one given wins, as
 * --env's do): a held run's request adds its own. */
void vg_plan_set_env(struct vg_plan *p, const char *name, const char *value);
/* Is this sandbox path inside a tree the sandbox has of its own (its
 * /tmp, /dev/shm, and so the default workdir)?  A file named on the
 * command line is copied there, never bound over it. */
bool vg_plan_in_own_tree(const char *path);
/* The sandbox's own trees that hold nothing of the host's writable (no
 * --bind-rw or policy bind into them, the workdir aside): what the log's
 * header calls `scratch`, where no write reaches the host.  At most max
 * into out (the table's strings); how many. */
uint32_t vg_plan_scratch(const struct vg_plan *p, const char **out, uint32_t max);

/* Runs in the child, inside the new user+mount namespaces: builds the new
 * root and pivots into it.  -1 with err set on the first failing step. */
int vg_setup_execute(const struct vg_plan *p, struct vg_err *err);
#endif
