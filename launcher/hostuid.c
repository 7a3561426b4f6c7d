/* hostuid.c: see hostuid.h. */
#include "launcher/hostuid.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/syscalls.h"

/* A task's status file is a few hundred bytes; its Groups line at most
 * NGROUPS_MAX (65536) numbers, which the read stops short of: a status
 * cut there has its Uid and Gid lines still (they come first). */
#define STATUS_MAX (64 * 1024)
#define NO_CHANGE ((long)-1)

int vg_host_uid_parse(const char *text, uint32_t *uid, struct vg_err *err)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!text[0] || !strchr("0123456789", text[0]) || *end || errno) {
        vg_errf(err, "--host-uid '%s' is not a number", text);
        return -1;
    }
    if (v == 0) {
        vg_errf(err, "--host-uid 0 is root: give an unprivileged uid of %u or more, one no "
                     "account or process of the host has", VG_HOST_UID_MIN);
        return -1;
    }
    if (v < VG_HOST_UID_MIN || v > VG_HOST_UID_MAX) {
        vg_errf(err, "--host-uid %llu is outside %u..%u (below %u: the system's own users)",
                v, VG_HOST_UID_MIN, VG_HOST_UID_MAX, VG_HOST_UID_MIN);
        return -1;
    }
    *uid = (uint32_t)v;
    return 0;
}

/* Does this line ("Uid:\t0\t0\t0\t0", "Groups:\t4 27") hold id? */
static bool line_has(const char *text, const char *key, uint32_t id)
{
    const char *l = strstr(text, key);
    if (!l)
        return false;
    l += strlen(key);
    while (*l && *l != '\n') {
        char *end;
        unsigned long long v = strtoull(l, &end, 10);
        if (end == l)
            return false;
        if (v == id)
            return true;
        l = end;
    }
    return false;
}

/* Is id one of this task's uids, gids or groups?  A task gone meanwhile
 * has none. */
static bool task_uses(const char *path, uint32_t id)
{
    struct vg_err ignored;
    char *text = vg_read_file(path, STATUS_MAX, NULL, &ignored);
    bool used = text && (line_has(text, "\nUid:", id) || line_has(text, "\nGid:", id) ||
                         line_has(text, "\nGroups:", id));
    free(text);
    return used;
}

/* The first task of pid (its threads may have credentials of their own)
 * that uses id; 0: none. */
static pid_t process_uses(const char *pid, uint32_t id)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%s/task", pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        char path[sizeof dir + sizeof e->d_name + sizeof "/status"];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "%s/%s/status", dir, e->d_name);
        if (task_uses(path, id))
            found = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return found;
}

/* The host's first task that has id as a uid, gid or group; 0: none,
 * -1: /proc cannot be read (nothing can be said, so the uid is refused). */
static pid_t host_task_with(uint32_t id)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)))
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
            found = process_uses(e->d_name, id);
    closedir(d);
    return found;
}

int vg_host_uid_check(uint32_t uid, struct vg_err *err)
{
    if (geteuid() != 0) {
        vg_errf(err, "--host-uid %" PRIu32 " needs vigil to run as root (an unprivileged "
                     "caller's candidate is the caller itself)", uid);
        return -1;
    }
    struct passwd *pw = getpwuid((uid_t)uid);
    struct group *gr = pw ? NULL : getgrgid((gid_t)uid);
    if (pw || gr) {
        vg_errf(err, "--host-uid %" PRIu32 " is the %s %s's: the candidate would own its "
                     "files; give a number no account of the host has", uid,
                pw ? "user" : "group", pw ? pw->pw_name : gr->gr_name);
        return -1;
    }
    pid_t t = host_task_with(uid);
    if (t != 0) {
        if (t < 0)
            vg_errf(err, "--host-uid %" PRIu32 ": cannot read /proc to see that no process "
                         "runs as it: %s", uid, strerror(errno));
        else
            vg_errf(err, "--host-uid %" PRIu32 " is in use by process %d of the host (as a "
                         "uid, gid or group): each run needs one no process has", uid, (int)t);
        return -1;
    }
    return 0;
}

void vg_host_ids(const struct vg_run_opts *o, uid_t *uid, gid_t *gid)
{
    if (geteuid() != 0) {
        *uid = geteuid();
        *gid = getegid();
        return;
    }
    *uid = o->host_uid ? (uid_t)o->host_uid : VG_HOST_NOBODY;
    *gid = o->host_uid ? (gid_t)o->host_uid : VG_HOST_NOBODY;
}

/* The raw call (as a fork: no new stack), born in cgroup_fd's group when
 * it is >= 0. */
static pid_t raw_clone(unsigned long flags, int cgroup_fd)
{
    if (cgroup_fd < 0)
        return (pid_t)syscall(VG_NR_clone, flags, NULL, NULL, NULL, NULL);
    struct clone_args a = {.flags = (flags & ~(unsigned long)CSIGNAL) | CLONE_INTO_CGROUP,
                           .exit_signal = flags & CSIGNAL, .cgroup = (uint64_t)cgroup_fd};
    return (pid_t)syscall(VG_NR_clone3, &a, sizeof a);
}

pid_t vg_clone_owned(unsigned long flags, uid_t owner, int cgroup_fd)
{
    if (!owner)
        return raw_clone(flags, cgroup_fd);
    /* A change of effective uid makes the process undumpable and clears
     * its parent-death signal: put both back, so that vigil is seen as it
     * was before and still dies with whoever started it (vigil serve and
     * vigil batch count on that: a runner killed must take its runs).
     * Dumpable before the clone too: the child is born with vigil's flag,
     * and an undumpable pid 1 keeps its /proc/PID/ns from pasta, which
     * enters the namespace as its owner, without capabilities of the
     * host's (real and saved uid 0 keep others off vigil meanwhile). */
    int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), pdeath = 0;
    pid_t parent = getppid();
    if (dumpable < 0 || prctl(PR_GET_PDEATHSIG, &pdeath, 0, 0, 0) < 0 ||
        syscall(VG_NR_setresuid, NO_CHANGE, (long)owner, NO_CHANGE) < 0)
        return -1;
    pid_t pid = prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0) < 0
                    ? -1 : raw_clone(flags, cgroup_fd);
    if (pid == 0)
        return 0;
    int saved = errno;
    /* Real and saved uid stayed 0, so this cannot be refused; if it were,
     * this thread would go on without its privileges: stop here. */
    if (syscall(VG_NR_setresuid, NO_CHANGE, 0L, NO_CHANGE) < 0 ||
        prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0) < 0) {
        perror("vigil: take back uid 0 after the sandbox's clone");
        abort();
    }
    /* the parent may have died while the signal was off: then it is due now */
    if (pdeath && (prctl(PR_SET_PDEATHSIG, pdeath, 0, 0, 0) < 0 || getppid() != parent))
        kill(getpid(), pdeath);
    errno = saved;
    return pid;
}

int vg_host_uid_child(uid_t owner)
{
    if (!owner)
        return 0;
    /* The raw call: this child of a raw clone shares libc's idea of
     * vigil's threads, which libc's setresuid would try to signal.  The
     * change makes it undumpable, which a plain clone's child is not (and
     * pasta could then not open its /proc/PID/ns): put back the flag it
     * was born with. */
    int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    if (dumpable < 0 || syscall(VG_NR_setresuid, 0L, 0L, 0L) < 0)
        return -1;
    return prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
}
