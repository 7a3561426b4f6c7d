/* limits.c: default limits, and how each one is enforced. */
#include "tracer/limits.h"

#include <string.h>

void vg_limits_defaults(struct vg_limits *l)
{
    memset(l, 0, sizeof *l);
    l->v[VG_LIM_TIME] = 60 * 1000;          /* ms */
    l->v[VG_LIM_CPU] = 60;                  /* s */
    l->v[VG_LIM_MEMORY] = 1ull << 30;       /* address space */
    l->v[VG_LIM_PROCS] = 128;
    l->v[VG_LIM_FILES] = 256;
    l->v[VG_LIM_FSIZE] = 64ull << 20;
    l->v[VG_LIM_OUTPUT] = 1ull << 20;       /* captured per stream */
    l->v[VG_LIM_TMPFS] = 64ull << 20;
}

void vg_limits_merge(struct vg_limits *dst, const struct vg_limits *src)
{
    for (int i = 0; i < VG_LIM_COUNT; i++)
        if (src->set[i]) {
            dst->v[i] = src->v[i];
            dst->set[i] = true;
        }
}

const char *vg_limit_mechanism(enum vg_limit l)
{
    static const char *const how[VG_LIM_COUNT] = {
        [VG_LIM_TIME] = "supervisor: SIGKILL to the pid namespace",
        [VG_LIM_CPU] = "rlimit RLIMIT_CPU",
        [VG_LIM_MEMORY] = "rlimit RLIMIT_AS",
        [VG_LIM_PROCS] = "rlimit RLIMIT_NPROC in the sandbox's user namespace",
        [VG_LIM_FILES] = "rlimit RLIMIT_NOFILE",
        [VG_LIM_FSIZE] = "rlimit RLIMIT_FSIZE",
        [VG_LIM_OUTPUT] = "supervisor: tail kept per stream",
        [VG_LIM_TMPFS] = "tmpfs size",
    };
    return how[l];
}

const char *vg_limit_unit(enum vg_limit l)
{
    switch (l) {
    case VG_LIM_TIME: return "ms";
    case VG_LIM_CPU: return "s";
    case VG_LIM_PROCS:
    case VG_LIM_FILES: return "count";
    default: return "bytes";
    }
}
