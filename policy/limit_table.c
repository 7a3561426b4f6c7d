/* limit_table.c: THE table of limits.  One row per limit says everything the
 * rest of vigil needs to know about it: its name (the policy's `limit`
 * word and the result's key), its `vigil run` flag, how its value is
 * written and kept, its default and accepted range, and what enforces
 * (the cgroup controller, else the fallback mechanism and its rlimit,
 * which launcher/limits.c applies) and reports it.  The policy parser, the command line, `vigil run
 * --help`, the result record and docs/POLICY.md (checked by a test) all
 * read this table; nothing else holds a default or a unit. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "policy/policy.h"

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)
/* The kernel's own ceilings: PID_MAX_LIMIT (less the sandbox's pid 1,
 * which pids.max counts too), and fs.nr_open's default. */
#define PROCS_MAX (4ull * 1024 * 1024 - 1)
#define FILES_MAX (1ull << 20)
/* Below this no interpreter starts, and under the RLIMIT_AS fallback the
 * dynamic loader cannot even map libc: a bare SIGSEGV with no word.  A
 * clear error before the run is better. */
#define MEMORY_MIN (16 * MIB)
/* CPU bandwidth in thousandths: the kernel's smallest quota is 1%. */
#define CPUS_MIN 10
#define CPUS_MAX (4096ull * 1000)
/* A run's end needs room in the log (event/writer.h, VG_LOG_END_RESERVE:
 * 64k) besides its header, which holds the whole policy text: below this
 * a log cap would end runs before they start. */
#define LOG_MIN (1 * MIB)

static const struct vg_limit_row rows[VG_LIM_COUNT] = {
    [VG_LIM_TIME] = {"time", "timeout", VG_LK_MS, 60 * 1000, 1, UINT64_MAX,
                     "wall-clock time of the whole run",
                     "supervisor: a timer, then SIGKILL to the sandbox",
                     "status timeout, limit time, exit 124",
                     .cgroup = VG_CG_NCTRL, .fallback = VG_MECH_SUPERVISOR, .rlimit = -1},
    [VG_LIM_CPU] = {"cpu", "cpu", VG_LK_SECONDS, 30, 1, UINT64_MAX,
                    "CPU time of each process",
                    "RLIMIT_CPU: SIGXCPU at the limit, SIGKILL 1s later",
                    "status limit, limit cpu, exit 152 (SIGXCPU) or 137",
                    .cgroup = VG_CG_NCTRL, .fallback = VG_MECH_RLIMIT, .rlimit = RLIMIT_CPU},
    /* The whole run's CPU time, where `cpu` is each process's: what a
     * quota of CPU-seconds (vigil serve) needs held, whatever the number
     * of processes and threads. */
    [VG_LIM_CPUTOTAL] = {"cputotal", "cpu-total", VG_LK_MS, 0, 1, UINT64_MAX,
                         "CPU time of the whole run (every process and thread of the sandbox)",
                         "supervisor: the run's cgroup CPU time (v1 cpuacct.usage, v2 cpu.stat "
                         "usage_usec) sampled, SIGKILL past it; else RLIMIT_CPU per process set "
                         "to it (rounded up to seconds)",
                         "status limit, limit cputotal, exit 137",
                         .cgroup = VG_CG_CPUACCT, .fallback = VG_MECH_RLIMIT, .rlimit = RLIMIT_CPU},
    [VG_LIM_MEMORY] = {"memory", "memory", VG_LK_SIZE, 1 * GIB, MEMORY_MIN, UINT64_MAX,
                       "the sandbox's memory: resident + swap + tmpfs files",
                       "cgroup (v1 memory.limit_in_bytes + memsw, v2 memory.max + swap.max 0); "
                       "else RLIMIT_AS per process (address space, not memory)",
                       "cgroup OOM kills; under RLIMIT_AS an out-of-memory message",
                       .cgroup = VG_CG_MEMORY, .fallback = VG_MECH_RLIMIT, .rlimit = RLIMIT_AS},
    [VG_LIM_PROCS] = {"procs", "procs", VG_LK_COUNT, 64, 1, PROCS_MAX,
                      "processes and threads",
                      "cgroup pids.max; else RLIMIT_NPROC in the sandbox's user namespace",
                      "pids.events max; under RLIMIT_NPROC the count reaching the cap",
                      .cgroup = VG_CG_PIDS, .fallback = VG_MECH_RLIMIT, .rlimit = RLIMIT_NPROC},
    [VG_LIM_FILES] = {"files", "files", VG_LK_COUNT, 256, 1, FILES_MAX,
                      "open files per process",
                      "RLIMIT_NOFILE",
                      "not detected yet: the program sees EMFILE",
                      .cgroup = VG_CG_NCTRL, .fallback = VG_MECH_RLIMIT, .rlimit = RLIMIT_NOFILE},
    [VG_LIM_FSIZE] = {"fsize", "fsize", VG_LK_SIZE, 64 * MIB, 1, UINT64_MAX,
                      "largest file a process may write",
                      "RLIMIT_FSIZE",
                      "SIGXFSZ: exit 153, or EFBIG when the program ignores it",
                      .cgroup = VG_CG_NCTRL, .fallback = VG_MECH_RLIMIT, .rlimit = RLIMIT_FSIZE},
    [VG_LIM_OUTPUT] = {"output", "output", VG_LK_SIZE, 1 * MIB, 1, UINT64_MAX,
                       "output passed on and kept, per stream",
                       "supervisor: the rest is counted and discarded",
                       "bytes > cap: truncated true",
                       .cgroup = VG_CG_NCTRL, .fallback = VG_MECH_SUPERVISOR, .rlimit = -1},
    [VG_LIM_TMPFS] = {"tmpfs", "tmpfs", VG_LK_SIZE, 64 * MIB, 1, UINT64_MAX,
                      "size of /tmp and of /dev/shm",
                      "tmpfs size=",
                      "supervisor: /tmp seen full (sampled every 250 ms, and at the end)",
                      .cgroup = VG_CG_NCTRL, .fallback = VG_MECH_TMPFS, .rlimit = -1},
    [VG_LIM_DISK] = {"disk", "disk", VG_LK_SIZE, 1 * GIB, 1, UINT64_MAX,
                     "what a run may add to a host --workdir",
                     "supervisor: the workdir measured every second, SIGKILL past it",
                     "status limit, limit disk (overshoot: what a second of writing adds)",
                     .cgroup = VG_CG_NCTRL, .fallback = VG_MECH_SUPERVISOR, .rlimit = -1},
    [VG_LIM_CPUS] = {"cpus", "cpus", VG_LK_CPUS, 0, CPUS_MIN, CPUS_MAX,
                     "CPU bandwidth as docker's --cpus (1.5: 1.5 CPUs)",
                     "cgroup cpu.cfs_quota_us / cpu.max; else pinned to that many CPUs (rounded up)",
                     "never a hit: the sandbox only runs slower",
                     .cgroup = VG_CG_CPU, .fallback = VG_MECH_AFFINITY, .rlimit = -1},
    /* The two caps that end storms (a candidate refused in a loop: `rm -rf
     * "$X"/<all>` with X unset made 180,112 refusals and a 132 MB log in 116 s).
     * Their defaults are far above what a working candidate needs (a few
     * dozen refusals, a few MB of log) and far below a storm's: 1000
     * refusals end that storm within a second (bench/storm.py). */
    [VG_LIM_REFUSALS] = {"refusals", "refusals", VG_LK_COUNT, 1000, 1, UINT64_MAX,
                         "refused calls per run (dry run: would-be refused)",
                         "supervisor: counted where decisions are counted, SIGKILL at the cap",
                         "status limit, limit refusals, exit 137",
                         .cgroup = VG_CG_NCTRL, .fallback = VG_MECH_SUPERVISOR, .rlimit = -1},
    [VG_LIM_LOG] = {"log", "log-size", VG_LK_SIZE, 64 * MIB, LOG_MIN, UINT64_MAX,
                    "size of the run's log",
                    "supervisor: the writer counts bytes; the run ends before a record would "
                    "not fit, the trailer still does",
                    "status limit, limit log, exit 137",
                    .cgroup = VG_CG_NCTRL, .fallback = VG_MECH_SUPERVISOR, .rlimit = -1},
};

static const char *const kind_syntax[] = {
    [VG_LK_MS] = "a duration like 60s, 500ms or 2m",
    [VG_LK_SECONDS] = "a duration like 30s or 2m",
    [VG_LK_SIZE] = "a size like 512M, 64k or 1G",
    [VG_LK_COUNT] = "a whole number",
    [VG_LK_CPUS] = "a number of CPUs like 1, 0.5 or 2.25",
};

static const char *const kind_unit[] = {
    [VG_LK_MS] = "ms", [VG_LK_SECONDS] = "s", [VG_LK_SIZE] = "bytes",
    [VG_LK_COUNT] = "count", [VG_LK_CPUS] = "millicpus",
};

const struct vg_limit_row *vg_limit_row(enum vg_limit l)
{
    return l < VG_LIM_COUNT ? &rows[l] : NULL;
}

const char *vg_limit_name(enum vg_limit l)
{
    return l < VG_LIM_COUNT ? rows[l].name : "?";
}

const char *vg_limit_unit(enum vg_limit l)
{
    return l < VG_LIM_COUNT ? kind_unit[rows[l].kind] : "?";
}

int vg_limit_from_name(const char *name)
{
    for (int l = 0; l < VG_LIM_COUNT; l++)
        if (!strcmp(name, rows[l].name))
            return l;
    return -1;
}

void vg_limit_names(char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (int l = 0; l < VG_LIM_COUNT && n < cap; l++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", l == 0 ? "" : l + 1 == VG_LIM_COUNT ? " or " : ", ",
                              rows[l].name);
}

void vg_limit_syntax(enum vg_limit l, char *buf, size_t cap)
{
    if (l >= VG_LIM_COUNT) {
        snprintf(buf, cap, "?");
        return;
    }
    const struct vg_limit_row *r = &rows[l];
    char lo[32], hi[32];
    vg_limit_format(l, r->min, lo, sizeof lo);
    vg_limit_format(l, r->max, hi, sizeof hi);
    if (r->max == UINT64_MAX && r->min <= 1)
        snprintf(buf, cap, "%s", kind_syntax[r->kind]);
    else if (r->max == UINT64_MAX)
        snprintf(buf, cap, "%s, at least %s", kind_syntax[r->kind], lo);
    else if (r->min <= 1)
        snprintf(buf, cap, "%s, at most %s", kind_syntax[r->kind], hi);
    else
        snprintf(buf, cap, "%s, from %s to %s", kind_syntax[r->kind], lo, hi);
}

/* "1.5" CPUs -> 1500 millicpus: the duration parser reads a bare number
 * as seconds in ms, which is the same arithmetic; a suffix is refused. */
static bool parse_cpus(const char *text, uint64_t *v)
{
    return text[0] && strspn(text, "0123456789.") == strlen(text) && vg_parse_duration(text, v);
}

bool vg_limit_parse(enum vg_limit l, const char *text, uint64_t *out)
{
    uint64_t v = 0;
    bool ok = false;
    if (l >= VG_LIM_COUNT)
        return false;
    switch (rows[l].kind) {
    case VG_LK_MS:
        ok = vg_parse_duration(text, &v);
        break;
    case VG_LK_SECONDS:    /* rlimit granularity: round up, never down */
        ok = vg_parse_duration(text, &v);
        v = (v + 999) / 1000;
        break;
    case VG_LK_SIZE:
        ok = vg_parse_size(text, &v);
        break;
    case VG_LK_COUNT:
        ok = vg_parse_u64(text, &v);
        break;
    case VG_LK_CPUS:
        ok = parse_cpus(text, &v);
        break;
    }
    if (!ok || v < rows[l].min || v > rows[l].max)
        return false;
    *out = v;
    return true;
}

void vg_limit_format(enum vg_limit l, uint64_t v, char *buf, size_t cap)
{
    static const char units[] = "kMGT";
    enum vg_limit_kind k = l < VG_LIM_COUNT ? rows[l].kind : VG_LK_COUNT;
    if (k == VG_LK_MS && v % 1000 == 0)
        k = VG_LK_SECONDS, v /= 1000;
    if (k == VG_LK_MS) {
        snprintf(buf, cap, "%" PRIu64 "ms", v);
    } else if (k == VG_LK_SECONDS) {
        snprintf(buf, cap, "%" PRIu64 "s", v);
    } else if (k == VG_LK_SIZE) {
        int u = -1;
        while (u < 3 && v && v % 1024 == 0)
            v /= 1024, u++;
        snprintf(buf, cap, "%" PRIu64 "%.*s", v, u >= 0 ? 1 : 0, u >= 0 ? &units[u] : "");
    } else if (k == VG_LK_CPUS) {
        char frac[8];
        snprintf(frac, sizeof frac, ".%03u", (unsigned)(v % 1000));
        for (size_t n = strlen(frac); n > 1 && frac[n - 1] == '0'; n--)
            frac[n - 1] = 0;
        snprintf(buf, cap, "%" PRIu64 "%s", v / 1000, frac[1] ? frac : "");
    } else {
        snprintf(buf, cap, "%" PRIu64, v);
    }
}

void vg_limits_defaults(struct vg_limits *l)
{
    memset(l, 0, sizeof *l);
    for (int i = 0; i < VG_LIM_COUNT; i++)
        l->v[i] = rows[i].def;
}

void vg_limits_merge(struct vg_limits *dst, const struct vg_limits *src)
{
    for (int i = 0; i < VG_LIM_COUNT; i++)
        if (src->set[i]) {
            dst->v[i] = src->v[i];
            dst->set[i] = true;
        }
}
