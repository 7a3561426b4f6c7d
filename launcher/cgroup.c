/* cgroup.c: see cgroup.h.
 *
 * vigil only ever creates, writes the limit files of, and removes groups
 * it made itself (mkdir refuses a name that exists: such a group is not
 * ours and is left alone).  Where vigil's own group is found:
 * /proc/self/cgroup gives the path in each hierarchy, /proc/self/mountinfo
 * where that hierarchy is mounted. */
#include "launcher/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/syscalls.h"

/* The kernel's CFS period, and the smallest quota it accepts. */
#define CPU_PERIOD_US 100000
#define CPU_QUOTA_MIN_US 1000
/* An emptied group can take a moment to be removable (the last tasks
 * are still being released): up to 5 s. */
#define RMDIR_TRIES 500
#define RMDIR_PAUSE_NS (10 * 1000 * 1000)
#define INFO_MAX (1 << 20)
/* The reaper's two pipe ends, moved above stdin/out/err. */
#define REAPER_IN 3
#define REAPER_OUT 4
/* cgroup v1 charges socket buffers to a group only once its TCP limit is
 * set, and then to a counter of their own, apart from memory.limit_in_bytes:
 * the run's sockets may hold this share of its memory limit besides, plus
 * the one buffer per socket the kernel always admits (docs/SECURITY.md,
 * "What the run pays for"; v2 charges them to memory.max). */
#define TCP_SHARE_DIV 4

/* The run's cpu group, which vigil's per-run threads and pasta join so
 * that the run's CPU quota pays for their work too (vg_cgroup_bill_self):
 * the `tasks` files of that group and of vigil's own group, open while
 * the run lasts.  Process-wide because those threads start deep in the
 * engines and the resolver; a vigil process makes one run. */
static int bill_tasks = -1, home_tasks = -1;

static const char *const ctrl_names[VG_CG_NCTRL] = {
    [VG_CG_MEMORY] = "memory", [VG_CG_PIDS] = "pids", [VG_CG_CPU] = "cpu",
    [VG_CG_CPUACCT] = "cpuacct",
};
/* Where a group counts its CPU time: v1 cpuacct.usage (ns), v2 cpu.stat's
 * usage_usec (every v2 group has it, whatever controllers it has). */
#define CPUACCT_V1 "cpuacct.usage"
#define CPUSTAT_V2 "cpu.stat"
#define CPUSTAT_KEY "usage_usec"
#define CPUACCT_USER_V1 "cpuacct.usage_user"
#define CPUSTAT_USER_KEY "user_usec"
#define NS_PER_US 1000u

/* Is word one of the words of list, separated by sep ("cpu" is not
 * "cpuset")? */
static bool has_word_sep(const char *list, const char *word, char sep)
{
    size_t n = strlen(word);
    for (const char *p = list; p; p = strchr(p, sep)) {
        p += *p == sep;
        if (!strncmp(p, word, n) && (p[n] == sep || p[n] == 0 || p[n] == '\n'))
            return true;
    }
    return false;
}

static bool has_word(const char *list, const char *word)
{
    return has_word_sep(list, word, ',');
}

/* vigil's own path in the hierarchy holding ctrl (NULL: the v2 one). */
static char *own_path(const char *ctrl)
{
    struct vg_err err;
    char *text = vg_read_file("/proc/self/cgroup", INFO_MAX, NULL, &err);
    char *found = NULL, *save = NULL;
    for (char *l = text ? strtok_r(text, "\n", &save) : NULL; l && !found;
         l = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = 0;
        bool v2 = !strcmp(l, "0:");
        if (ctrl ? has_word(c1 + 1, ctrl) : v2)
            found = vg_xstrdup(c2 + 1);
    }
    free(text);
    return found;
}

/* The directory of pathname `own` in the hierarchy mounted with fstype
 * (and, for v1, the controller among its options); NULL if not mounted
 * where we can see it. */
static char *hierarchy_dir(const char *fstype, const char *ctrl, const char *own)
{
    struct vg_err err;
    char *text = vg_read_file("/proc/self/mountinfo", INFO_MAX, NULL, &err);
    char *found = NULL, *save = NULL;
    for (char *l = text ? strtok_r(text, "\n", &save) : NULL; l && !found;
         l = strtok_r(NULL, "\n", &save)) {
        char root[4096], mnt[4096], type[64], opts[1024];
        const char *dash = strstr(l, " - ");
        if (!dash || strchr(l, '\\') ||
            sscanf(l, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
            sscanf(dash + 3, "%63s %*s %1023s", type, opts) != 2)
            continue;
        if (strcmp(type, fstype) || (ctrl && !has_word(opts, ctrl)))
            continue;
        size_t n = strcmp(root, "/") ? strlen(root) : 0;
        if (strncmp(own, root, n) || (own[n] != '/' && own[n] != 0))
            continue;   /* our group is outside what this mount shows */
        found = vg_xasprintf("%s%s", mnt, own + n);
    }
    free(text);
    return found;
}

static int put(const char *dir, const char *file, const char *text)
{
    char *path = vg_xasprintf("%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return -1;
    int r = vg_write_all(fd, text, strlen(text));
    if (close(fd) < 0)
        r = -1;
    return r;
}

static int put_u64(const char *dir, const char *file, uint64_t v)
{
    char s[32];
    snprintf(s, sizeof s, "%" PRIu64, v);
    return put(dir, file, s);
}

static bool exists(const char *dir, const char *file)
{
    char *path = vg_xasprintf("%s/%s", dir, file);
    bool ok = access(path, F_OK) == 0;
    free(path);
    return ok;
}

/* The value after `key ` in a keyed file (memory.events, pids.events,
 * memory.oom_control), or in a one-number file when key is NULL. */
static bool get(const char *dir, const char *file, const char *key, uint64_t *v)
{
    struct vg_err err;
    char *path = vg_xasprintf("%s/%s", dir, file);
    char *text = vg_read_file(path, INFO_MAX, NULL, &err);
    free(path);
    bool ok = false;
    size_t n = key ? strlen(key) : 0;
    for (char *l = text; l && *l && !ok; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!key)
            ok = sscanf(l, "%" SCNu64, v) == 1;
        else if (!strncmp(l, key, n) && l[n] == ' ')
            ok = sscanf(l + n + 1, "%" SCNu64, v) == 1;
    free(text);
    return ok;
}

/* Write the limit ctrl enforces into the group dir; -1 if the kernel
 * refuses any part of it (then the controller is not used at all). */
static int write_limit(struct vg_cgroup *cg, enum vg_cg_ctrl c, const char *dir, int version,
                       const struct vg_limits *l)
{
    uint64_t mem = l->v[VG_LIM_MEMORY];
    /* pid 1 of the sandbox is vigil's, not the candidate's: one more. */
    uint64_t pids = l->v[VG_LIM_PROCS] + 1;
    uint64_t quota = l->v[VG_LIM_CPUS] * CPU_PERIOD_US / 1000;
    char cpu_max[64];
    switch (c) {
    case VG_CG_MEMORY:
        if (version == 2)   /* no swap at all: resident plus swap <= max */
            return put_u64(dir, "memory.max", mem) < 0 ? -1 :
                   exists(dir, "memory.swap.max") ? put(dir, "memory.swap.max", "0") : 0;
        if (put_u64(dir, "memory.limit_in_bytes", mem) < 0)
            return -1;
        /* Before anything joins: a socket made earlier is never charged.
         * A kernel without the file charges no socket anywhere in v1, and
         * the rlimit would not either: the group is still the better one. */
        if (exists(dir, "memory.kmem.tcp.limit_in_bytes") &&
            put_u64(dir, "memory.kmem.tcp.limit_in_bytes", mem / TCP_SHARE_DIV) < 0)
            return -1;
        /* memsw exists only with swap accounting; it must not be below
         * limit_in_bytes, which is why it comes second. */
        cg->memsw = exists(dir, "memory.memsw.limit_in_bytes");
        return cg->memsw ? put_u64(dir, "memory.memsw.limit_in_bytes", mem) : 0;
    case VG_CG_PIDS:
        return put_u64(dir, "pids.max", pids);
    case VG_CG_CPUACCT:   /* nothing to write: only read (vg_cgroup_cpu_*) */
        return exists(dir, version == 2 ? CPUSTAT_V2 : CPUACCT_V1) ? 0 : -1;
    case VG_CG_CPU:
        if (quota < CPU_QUOTA_MIN_US)
            return -1;
        if (version == 2) {
            snprintf(cpu_max, sizeof cpu_max, "%" PRIu64 " %d", quota, CPU_PERIOD_US);
            return put(dir, "cpu.max", cpu_max);
        }
        return put_u64(dir, "cpu.cfs_period_us", CPU_PERIOD_US) < 0 ? -1 :
               put_u64(dir, "cpu.cfs_quota_us", quota);
    default:
        return -1;
    }
}

/* The directory this controller's group goes in: v1 first (where the
 * controller is bound to v1, v2 cannot have it), then a v2 subtree. */
static char *parent_dir(enum vg_cg_ctrl c, int *version)
{
    char *own = own_path(ctrl_names[c]);
    char *dir = own ? hierarchy_dir("cgroup", ctrl_names[c], own) : NULL;
    *version = 1;
    if (!dir) {
        free(own);
        own = own_path(NULL);
        dir = own ? hierarchy_dir("cgroup2", NULL, own) : NULL;
        *version = 2;
    }
    free(own);
    return dir;
}

/* v2: the child sees a controller only if the parent hands it down. */
static bool v2_available(const char *parent, const char *child, const char *ctrl)
{
    struct vg_err err;
    char *path = vg_xasprintf("%s/cgroup.controllers", child);
    char *text = vg_read_file(path, INFO_MAX, NULL, &err);
    free(path);
    bool ok = text && has_word_sep(text, ctrl, ' ');
    free(text);
    if (ok)
        return true;
    char *plus = vg_xasprintf("+%s", ctrl);
    ok = put(parent, "cgroup.subtree_control", plus) == 0;
    free(plus);
    return ok;
}

/* Is dir already one of ours (co-mounted v1 controllers, or v2)? */
static bool already_ours(const struct vg_cgroup *cg, const char *dir)
{
    for (int c = 0; c < VG_CG_NCTRL; c++)
        if (cg->dir[c] && !strcmp(cg->dir[c], dir))
            return true;
    return false;
}

static void remove_dir(struct vg_cgroup *cg, enum vg_cg_ctrl c)
{
    char *dir = cg->dir[c];
    cg->dir[c] = NULL;
    if (!dir || already_ours(cg, dir)) {
        free(dir);  /* shared with another controller: removed with it */
        return;
    }
    struct timespec pause = {0, RMDIR_PAUSE_NS};
    int tries = 0;
    while (rmdir(dir) < 0 && errno == EBUSY && ++tries < RMDIR_TRIES)
        nanosleep(&pause, NULL);
    if (access(dir, F_OK) == 0)
        fprintf(stderr, "vigil: warning: cannot remove the cgroup %s: %s\n", dir, strerror(errno));
    free(dir);
}

/* Where each controller's group would go (parent_dir + "/vigil-PID"),
 * worked out before anything is made, so that the reaper knows them. */
struct plan {
    char *dir[VG_CG_NCTRL];   /* NULL: controller not wanted, or no place */
    char *parent[VG_CG_NCTRL];
    int version[VG_CG_NCTRL];
};

static void plan_one(struct plan *p, enum vg_cg_ctrl c, pid_t pid)
{
    p->parent[c] = parent_dir(c, &p->version[c]);
    if (p->parent[c] && access(p->parent[c], W_OK) < 0) {   /* no reaper for nothing */
        free(p->parent[c]);
        p->parent[c] = NULL;
    }
    if (p->parent[c])
        p->dir[c] = vg_xasprintf("%s/vigil-%d", p->parent[c], (int)pid);
}

static void plan_free(struct plan *p)
{
    for (int c = 0; c < VG_CG_NCTRL; c++) {
        free(p->dir[c]);
        free(p->parent[c]);
    }
}

static void create_one(struct vg_cgroup *cg, enum vg_cg_ctrl c, const struct vg_limits *l,
                       const struct plan *p)
{
    if (!p->dir[c])
        return;
    char *dir = vg_xstrdup(p->dir[c]);
    bool shared = already_ours(cg, dir);
    if (!shared && mkdir(dir, 0755) < 0) {
        free(dir);  /* not allowed, or not ours: fall back */
        return;
    }
    cg->dir[c] = dir;
    cg->version[c] = p->version[c];
    /* v2 counts CPU time in every group: no controller to hand down */
    bool needs_ctrl = p->version[c] == 2 && c != VG_CG_CPUACCT;
    if ((needs_ctrl && !v2_available(p->parent[c], dir, ctrl_names[c])) ||
        write_limit(cg, c, dir, p->version[c], l) < 0)
        remove_dir(cg, c);
}

static void remove_all(struct vg_cgroup *cg)
{
    for (int c = 0; c < VG_CG_NCTRL; c++)
        remove_dir(cg, c);
}

/* In the reaper, started before any group exists: note which of the
 * planned groups exist already (not vigil's: never touched), say so
 * (vigil creates the groups only then, so a SIGKILL at any moment cannot
 * leave one no reaper knows), wait until vigil is gone (EOF: it closed its
 * end, or it died, even by SIGKILL, and the kernel closed it; the
 * sandbox's pid 1, a copy of vigil, holds it too, so the groups are empty
 * by then), remove the planned groups that appeared since, and leave.  A
 * grandchild of vigil, so that vigil's engine, which waits for any child,
 * never sees it. */
static _Noreturn void reaper_main(struct plan *p, int in, int out)
{
    char c;
    signal(SIGINT, SIG_IGN);    /* a ^C to vigil's process group must not */
    signal(SIGTERM, SIG_IGN);   /* leave the groups behind */
    signal(SIGHUP, SIG_IGN);
    /* Hold nothing of vigil's but the two pipes and stderr (for the
     * warning): a caller reading vigil's stdout to EOF must not wait for
     * us. */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    int high_in = fcntl(in, F_DUPFD_CLOEXEC, REAPER_OUT + 1);  /* out of dup2's way */
    int high_out = fcntl(out, F_DUPFD_CLOEXEC, REAPER_OUT + 1);
    if (null < 0 || high_in < 0 || high_out < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
        dup2(high_in, REAPER_IN) < 0 || dup2(high_out, REAPER_OUT) < 0 ||
        syscall(VG_NR_close_range, REAPER_OUT + 1, ~0u, 0) < 0)
        _exit(1);   /* no ready sign: vigil makes no group */
    struct vg_cgroup mine = {0};
    for (int k = 0; k < VG_CG_NCTRL; k++)
        if (p->dir[k] && access(p->dir[k], F_OK) < 0 && errno == ENOENT && !already_ours(&mine, p->dir[k]))
            mine.dir[k] = vg_xstrdup(p->dir[k]);
    if (write(REAPER_OUT, "r", 1) != 1)
        _exit(1);
    while (read(REAPER_IN, &c, 1) < 0 && errno == EINTR)
        ;
    for (int k = 0; k < VG_CG_NCTRL; k++)   /* only what vigil may have made */
        if (mine.dir[k] && access(mine.dir[k], F_OK) < 0) {
            free(mine.dir[k]);
            mine.dir[k] = NULL;
        }
    remove_all(&mine);
    _exit(0);       /* closes REAPER_OUT: vigil's sign that we are done */
}

/* The reaper, before any group: true once it has said it is ready. */
static bool start_reaper(struct vg_cgroup *cg, struct plan *p)
{
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) < 0)
        return false;
    if (pipe2(from, O_CLOEXEC) < 0) {
        close(to[0]);
        close(to[1]);
        return false;
    }
    fflush(NULL);
    pid_t mid = fork();
    if (mid == 0) {
        if (fork() == 0) {
            close(to[1]);
            close(from[0]);
            reaper_main(p, to[0], from[1]);
        }
        _exit(0);
    }
    close(to[0]);
    close(from[1]);
    if (mid > 0)
        while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
            ;
    char ready;
    ssize_t n = -1;
    if (mid > 0)
        while ((n = read(from[0], &ready, 1)) < 0 && errno == EINTR)
            ;
    cg->reaper = n == 1;
    cg->to_reaper = to[1];
    cg->from_reaper = from[0];
    if (!cg->reaper) {
        close(to[1]);
        close(from[0]);
    }
    return cg->reaper;
}

static void close_bill(void)
{
    if (bill_tasks >= 0)
        close(bill_tasks);
    if (home_tasks >= 0)
        close(home_tasks);
    bill_tasks = home_tasks = -1;
}

/* Move the calling thread into the group whose tasks file fd is.  Each
 * move takes the kernel's cgroup_threadgroup_rwsem for writing (median
 * 0.05 ms, up to 12 ms when it waits for an RCU grace period: bench/),
 * so a thread is moved only when it is not there already. */
static __thread bool in_bill;

static int move_self(int fd, bool billed)
{
    char s[32];
    if (fd < 0 || in_bill == billed)
        return 0;
    int n = snprintf(s, sizeof s, "%d", (int)gettid());
    if (write(fd, s, (size_t)n) != n)
        return -1;
    in_bill = billed;
    return 0;
}

/* vigil's threads may join the run's cpu group only where the group is
 * cgroup v1's (v2 moves a thread alone only within a threaded subtree,
 * which the sandbox's domain group is not) and holds no other controller
 * of the run: a thread counted by pids.max would take a process from the
 * candidate, and one in the memory group would make vigil a choice of its
 * OOM killer.  vigil's own group is where they come back to. */
static void open_bill(const struct vg_cgroup *cg)
{
    const char *dir = cg->dir[VG_CG_CPU];
    if (!dir || cg->version[VG_CG_CPU] != 1 || (cg->dir[VG_CG_MEMORY] &&
        !strcmp(dir, cg->dir[VG_CG_MEMORY])) || (cg->dir[VG_CG_PIDS] &&
        !strcmp(dir, cg->dir[VG_CG_PIDS])))
        return;
    int version;
    char *home = parent_dir(VG_CG_CPU, &version);
    char *bill = vg_xasprintf("%s/tasks", dir), *back = home ? vg_xasprintf("%s/tasks", home)
                                                              : NULL;
    bill_tasks = open(bill, O_WRONLY | O_CLOEXEC);
    home_tasks = back && version == 1 ? open(back, O_WRONLY | O_CLOEXEC) : -1;
    if (bill_tasks < 0 || home_tasks < 0)
        close_bill();   /* never joined without the way back */
    free(bill);
    free(back);
    free(home);
}

bool vg_cgroup_billed(void)
{
    return bill_tasks >= 0;
}

int vg_cgroup_bill_self(void)
{
    return move_self(bill_tasks, true);
}

int vg_cgroup_unbill_self(void)
{
    return move_self(home_tasks, false);
}

/* The reaper exists before the first group does: vigil killed at any
 * moment leaves none (tests/test_run_leftovers.py).  Without a reaper no
 * group is made (the limits fall back to rlimits). */
void vg_cgroup_create(struct vg_cgroup *cg, const struct vg_limits *l, pid_t pid)
{
    memset(cg, 0, sizeof *cg);
    struct plan p = {0};
    plan_one(&p, VG_CG_MEMORY, pid);
    plan_one(&p, VG_CG_PIDS, pid);
    if (l->v[VG_LIM_CPUS])
        plan_one(&p, VG_CG_CPU, pid);
    if (l->v[VG_LIM_CPUTOTAL])
        plan_one(&p, VG_CG_CPUACCT, pid);
    bool any = false;
    for (int c = 0; c < VG_CG_NCTRL; c++)
        any |= p.dir[c] != NULL;
    if (any && start_reaper(cg, &p)) {
        create_one(cg, VG_CG_MEMORY, l, &p);
        create_one(cg, VG_CG_PIDS, l, &p);
        if (l->v[VG_LIM_CPUS]) {
            create_one(cg, VG_CG_CPU, l, &p);
            open_bill(cg);
        }
        if (l->v[VG_LIM_CPUTOTAL])
            create_one(cg, VG_CG_CPUACCT, l, &p);
    }
    plan_free(&p);
}

int vg_cgroup_v2_open(const struct vg_cgroup *cg)
{
    for (int c = 0; c < VG_CG_NCTRL; c++)
        if (cg->dir[c] && cg->version[c] == 2)   /* one v2 group holds them all */
            return open(cg->dir[c], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return -1;
}

int vg_cgroup_join(const struct vg_cgroup *cg, pid_t pid, bool born_in_v2, struct vg_err *err)
{
    char s[32];
    snprintf(s, sizeof s, "%d", (int)pid);
    for (int c = 0; c < VG_CG_NCTRL; c++)
        if (cg->dir[c] && !(born_in_v2 && cg->version[c] == 2) &&
            put(cg->dir[c], "cgroup.procs", s) < 0) {
            vg_errf(err, "join the cgroup %s: %s", cg->dir[c], strerror(errno));
            return -1;
        }
    return 0;
}

/* The whole sandbox's CPU time, user part and the rest (the kernel's
 * split may not add up to its total exactly: the total is the exact one). */
static void read_cpu(const struct vg_cgroup *cg, struct vg_cg_usage *u)
{
    const char *dir = cg->dir[VG_CG_CPUACCT];
    uint64_t total, user;
    if (!dir)
        return;
    if (cg->version[VG_CG_CPUACCT] == 2) {
        u->have_cpu = get(dir, CPUSTAT_V2, CPUSTAT_KEY, &total) &&
                      get(dir, CPUSTAT_V2, CPUSTAT_USER_KEY, &user);
        total *= NS_PER_US;
        user *= NS_PER_US;
    } else {
        u->have_cpu = get(dir, CPUACCT_V1, NULL, &total) && get(dir, CPUACCT_USER_V1, NULL, &user);
    }
    if (!u->have_cpu)
        return;
    u->cpu_user_ns = user < total ? user : total;
    u->cpu_sys_ns = total - u->cpu_user_ns;
}

void vg_cgroup_read(const struct vg_cgroup *cg, struct vg_cg_usage *u)
{
    memset(u, 0, sizeof *u);
    const char *mem = cg->dir[VG_CG_MEMORY], *pids = cg->dir[VG_CG_PIDS];
    if (mem && cg->version[VG_CG_MEMORY] == 2) {
        u->have_memory = get(mem, "memory.peak", NULL, &u->peak_memory) &&
                         get(mem, "memory.events", "oom_kill", &u->oom_kills);
    } else if (mem) {
        u->have_memory = get(mem, cg->memsw ? "memory.memsw.max_usage_in_bytes"
                                            : "memory.max_usage_in_bytes", NULL, &u->peak_memory) &&
                         get(mem, "memory.oom_control", "oom_kill", &u->oom_kills);
    }
    if (pids)
        u->have_pids = get(pids, "pids.events", "max", &u->pids_refused);
    read_cpu(cg, u);
}

int vg_cgroup_cpu_open(const struct vg_cgroup *cg)
{
    const char *dir = cg->dir[VG_CG_CPUACCT];
    if (!dir)
        return -1;
    char *path = vg_xasprintf("%s/%s", dir, cg->version[VG_CG_CPUACCT] == 2 ? CPUSTAT_V2
                                                                            : CPUACCT_V1);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    return fd;
}

bool vg_cgroup_cpu_ns(const struct vg_cgroup *cg, int fd, uint64_t *ns)
{
    char text[512];
    /* the kernel makes the text anew for every read from offset 0 */
    ssize_t n = fd >= 0 ? pread(fd, text, sizeof text - 1, 0) : -1;
    if (n <= 0)
        return false;
    text[n] = 0;
    if (cg->version[VG_CG_CPUACCT] != 2)
        return sscanf(text, "%" SCNu64, ns) == 1;
    const char *at = strstr(text, CPUSTAT_KEY " ");
    uint64_t us;
    if (!at || (at != text && at[-1] != '\n') ||
        sscanf(at + sizeof CPUSTAT_KEY, "%" SCNu64, &us) != 1)
        return false;
    *ns = us * NS_PER_US;
    return true;
}

void vg_cgroup_remove(struct vg_cgroup *cg)
{
    /* The caller leaves the run's group first, whatever path it came by:
     * a group with a task in it cannot be removed. */
    (void)vg_cgroup_unbill_self();
    close_bill();
    remove_all(cg);
    if (!cg->reaper)
        return;
    /* Let the reaper go and wait until it has: it finds nothing left. */
    char c;
    close(cg->to_reaper);
    while (read(cg->from_reaper, &c, 1) < 0 && errno == EINTR)
        ;
    close(cg->from_reaper);
    cg->reaper = false;
}
