/* landlock.c: see landlock.h.  Runs in the sandbox child right before exec;
 * it may allocate (the child is single-threaded after fork) but keeps to
 * plain syscalls. */
#include "launcher/landlock.h"

#include <errno.h>
#include <linux/magic.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "core/syscalls.h"


/* The ruleset attribute as of ABI 4; older kernels are given the prefix
 * they know (the size passed says how much). */
struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
};

struct ll_net_port_attr {
    uint64_t allowed_access;
    uint64_t port;
};

/* Rights each ABI knows; handling an unknown right is EINVAL. */
static uint64_t fs_rights_of_abi(int abi)
{
    uint64_t r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  /* ABI 1 */
    if (abi >= 2)
        r |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        r |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5)
        r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return r;
}

int vg_landlock_abi(void)
{
    long v = syscall(VG_NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return v > 0 ? (int)v : 0;
}

/* Can a path missing below this directory appear during the run?  Not on a
 * read-only mount, and not in procfs or sysfs (the kernel makes their
 * entries, the candidate cannot): there the rule grants nothing. */
static bool can_gain_children(int dirfd)
{
    struct statfs sf;
    if (fstatfs(dirfd, &sf) < 0)
        return false;
    return !(sf.f_flags & ST_RDONLY) && sf.f_type != PROC_SUPER_MAGIC &&
           sf.f_type != SYSFS_MAGIC;
}

/* Open the path, or for a beneath rule whose path does not exist yet
 * ($WORK/out/ and below, before out/ is made) its nearest existing
 * ancestor, the only place Landlock can hold a rule for it.  Only where the
 * missing part can still be created: climbing out of a read-only tree
 * would turn a read rule on /sys/devices/system/cpu and below, in a
 * sandbox without /sys, into a rule on "/": every file readable. */
static int open_rule_path(const struct vg_landlock_rule *r)
{
    char *p = vg_xstrdup(r->path);
    bool climbed = false;
    int fd;
    while ((fd = open(p, O_PATH | O_CLOEXEC)) < 0 && errno == ENOENT && !r->exact) {
        char *slash = strrchr(p, '/');
        if (!slash)
            break;
        if (slash == p)
            slash[1] = 0;
        else
            *slash = 0;
        climbed = true;
    }
    free(p);
    if (fd >= 0 && climbed && !can_gain_children(fd)) {
        close(fd);
        errno = ENOENT;
        return -1;
    }
    return fd;
}

static int add_path_rule(int rfd, const struct vg_landlock_rule *r, uint64_t handled,
                         struct vg_err *err)
{
    struct stat st;
    int fd = open_rule_path(r);
    if (fd < 0) {
        if (errno == ENOENT || errno == EACCES)
            return 0;   /* nothing there to grant */
        vg_errf(err, "landlock: %s: %s", r->path, strerror(errno));
        return -1;
    }
    uint64_t access = r->access & handled;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        access &= VG_LL_FILE_RIGHTS;
    else if (r->exact)
        access &= LANDLOCK_ACCESS_FS_READ_DIR;
    int rc = 0;
    if (access) {
        struct landlock_path_beneath_attr pb = {.allowed_access = access, .parent_fd = fd};
        rc = (int)syscall(VG_NR_landlock_add_rule, rfd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
        if (rc)
            vg_errf(err, "landlock: rule for %s: %s", r->path, strerror(errno));
    }
    close(fd);
    return rc ? -1 : 0;
}

static int add_ports(int rfd, const uint16_t *ports, uint32_t n, uint64_t right,
                     struct vg_err *err)
{
    for (uint32_t i = 0; i < n; i++) {
        struct ll_net_port_attr np = {.allowed_access = right, .port = ports[i]};
        if (syscall(VG_NR_landlock_add_rule, rfd, VG_LANDLOCK_RULE_NET_PORT, &np, 0)) {
            vg_errf(err, "landlock: port rule %u: %s", ports[i], strerror(errno));
            return -1;
        }
    }
    return 0;
}

static int fill_ruleset(int rfd, const struct vg_landlock_plan *plan, uint64_t handled_fs,
                        uint64_t handled_net, struct vg_err *err)
{
    for (uint32_t i = 0; i < plan->nrules; i++)
        if (add_path_rule(rfd, &plan->rules[i], handled_fs, err))
            return -1;
    if ((handled_net & LANDLOCK_ACCESS_NET_CONNECT_TCP) &&
        add_ports(rfd, plan->connect_ports, plan->nconnect_ports,
                  LANDLOCK_ACCESS_NET_CONNECT_TCP, err))
        return -1;
    if ((handled_net & LANDLOCK_ACCESS_NET_BIND_TCP) &&
        add_ports(rfd, plan->bind_ports, plan->nbind_ports, LANDLOCK_ACCESS_NET_BIND_TCP, err))
        return -1;
    return 0;
}

int vg_landlock_apply(const struct vg_landlock_plan *plan, int abi, int *keep, struct vg_err *err)
{
    if (keep)
        *keep = -1;
    struct ll_ruleset_attr attr = {
        .handled_access_fs = plan->handled_fs & fs_rights_of_abi(abi),
        .handled_access_net = abi >= 4 ? plan->handled_net : 0,
    };
    if (abi <= 0 || (!attr.handled_access_fs && !attr.handled_access_net))
        return 0;
    size_t size = abi >= 4 ? sizeof attr : sizeof attr.handled_access_fs;
    int rfd = (int)syscall(VG_NR_landlock_create_ruleset, &attr, size, 0);
    if (rfd < 0) {
        vg_errf(err, "landlock: create ruleset: %s", strerror(errno));
        return -1;
    }
    int rc = fill_ruleset(rfd, plan, attr.handled_access_fs, attr.handled_access_net, err);
    /* restrict_self needs no_new_privs (or CAP_SYS_ADMIN); setting it
     * again is harmless */
    if (!rc && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
        vg_errf(err, "landlock: no_new_privs: %s", strerror(errno));
        rc = -1;
    }
    if (!rc && syscall(VG_NR_landlock_restrict_self, rfd, 0)) {
        vg_errf(err, "landlock: restrict_self: %s", strerror(errno));
        rc = -1;
    }
    if (!rc && keep)
        *keep = rfd; /* O_CLOEXEC (the kernel's): gone at exec */
    else
        close(rfd);
    return rc;
}
