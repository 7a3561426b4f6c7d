/* crew_ident.c: the candidate's identity, read from the host's /proc
 * and taken by one thread of the supervisor (see crew.h).
 *
 * The identity is read once, when the candidate hands its listener over:
 * it is locked down then (launcher/sandbox.c lock_down) and can never
 * change its ids again (no capabilities, no_new_privs: no set-id exec).
 * Everything here acts on the calling thread only: Linux keeps
 * credentials, no_new_privs, the Landlock domain and (after
 * unshare(CLONE_FS)) umask, root and cwd per thread; glibc's set*id
 * wrappers would broadcast to every thread, so the raw calls are used. */
#include "tracer/notify/crew.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/syscalls.h"


#define STATUS_MAX 4096

/* The numbers after "\nKey:" in a /proc status text; how many, or -1. */
static int status_ids(const char *text, const char *key, unsigned long *v, int max)
{
    char k[32];
    snprintf(k, sizeof k, "\n%s:", key);
    const char *p = strstr(text, k);
    if (!p)
        return -1;
    p += strlen(k);
    int n = 0;
    for (;;) {
        char *end;
        p += strspn(p, " \t");
        if (*p == '\n' || !*p)
            return n;
        if (n == max)
            return -1; /* more than we can hold: not taken half */
        errno = 0;
        v[n] = strtoul(p, &end, 10);
        if (end == p || errno)
            return -1;
        n++;
        p = end;
    }
}

static int read_status(pid_t pid, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    int e = errno;
    close(fd);
    if (n <= 0) {
        errno = n < 0 ? e : EIO;
        return -1;
    }
    buf[n] = 0;
    return 0;
}

int vg_ident_read(pid_t pid, struct vg_ident *id)
{
    char buf[STATUS_MAX];
    unsigned long u[4], g[4], gr[VG_IDENT_MAXGROUPS];
    if (read_status(pid, buf, sizeof buf) < 0)
        return -1;
    int nu = status_ids(buf, "Uid", u, 4), ng = status_ids(buf, "Gid", g, 4);
    int ngr = status_ids(buf, "Groups", gr, VG_IDENT_MAXGROUPS);
    if (nu < 3 || ng < 3 || ngr < 0) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        id->uid[i] = (uid_t)u[i];
        id->gid[i] = (gid_t)g[i];
    }
    id->ngroups = ngr;
    for (int i = 0; i < ngr; i++)
        id->groups[i] = (gid_t)gr[i];
    return 0;
}

static int cmp_gid(const void *a, const void *b)
{
    gid_t x = *(const gid_t *)a, y = *(const gid_t *)b;
    return (x > y) - (x < y);
}

/* Does this thread already have exactly these groups?  (An unprivileged
 * supervisor cannot call setgroups, and need not: the candidate inherited
 * its groups.) */
static bool same_groups(const struct vg_ident *id)
{
    gid_t have[VG_IDENT_MAXGROUPS], want[VG_IDENT_MAXGROUPS];
    int n = getgroups(VG_IDENT_MAXGROUPS, have);
    if (n != id->ngroups)
        return false;
    memcpy(want, id->groups, (size_t)n * sizeof *want);
    qsort(have, (size_t)n, sizeof *have, cmp_gid);
    qsort(want, (size_t)n, sizeof *want, cmp_gid);
    return memcmp(have, want, (size_t)n * sizeof *want) == 0;
}

static int set_ids(const struct vg_ident *id)
{
    if (!same_groups(id) && syscall(VG_NR_setgroups, (size_t)id->ngroups, id->groups) < 0)
        return -1;
    if (syscall(VG_NR_setresgid, id->gid[0], id->gid[1], id->gid[2]) < 0)
        return -1;
    return (int)syscall(VG_NR_setresuid, id->uid[0], id->uid[1], id->uid[2]);
}

/* No capability in any set of this thread (setresuid away from 0 already
 * clears the permitted and effective sets; this says it for every case). */
static int drop_caps(void)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2] = {{0}};
    return (int)syscall(VG_NR_capset, &h, d);
}

/* What the kernel now says of this thread: the candidate's ids and no
 * effective or permitted capability. */
static bool took(const struct vg_ident *id)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2];
    uid_t r, e, s;
    gid_t gr, ge, gs;
    if (syscall(VG_NR_capget, &h, d) < 0 || d[0].effective || d[1].effective || d[0].permitted ||
        d[1].permitted)
        return false;
    return getresuid(&r, &e, &s) == 0 && getresgid(&gr, &ge, &gs) == 0 && r == id->uid[0] &&
           e == id->uid[1] && s == id->uid[2] && gr == id->gid[0] && ge == id->gid[1] &&
           gs == id->gid[2] && same_groups(id);
}

int vg_ident_take(const struct vg_ident *id, int ruleset, char *why, size_t n)
{
    const char *step = NULL;
    if (unshare(CLONE_FS) < 0)
        step = "unshare(CLONE_FS)";
    else if ((void)umask(0), set_ids(id) < 0)
        step = "set the candidate's ids";
    else if (drop_caps() < 0)
        step = "drop capabilities";
    else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        step = "no_new_privs";
    else if (ruleset >= 0 && syscall(VG_NR_landlock_restrict_self, ruleset, 0) < 0)
        step = "landlock_restrict_self";
    if (step) {
        snprintf(why, n, "notify engine: a crew thread cannot become the candidate (%s): %s",
                 step, strerror(errno));
        return -1;
    }
    if (!took(id)) {
        snprintf(why, n, "notify engine: a crew thread is not the candidate after taking "
                         "its identity");
        return -1;
    }
    return 0;
}
