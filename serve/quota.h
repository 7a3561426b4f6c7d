/* quota.h: a user's quotas and what is used of them, as pure functions of
 * (quota, usage, now).  Every run is charged when it is accepted: one run,
 * and the CPU and wall time it is granted (its --cpu-total and --timeout);
 * what it did not use is given back when it ends.  So what a user's runs use
 * in any window never exceeds the quota.  The daemon keeps the usage and
 * persists it (serve/persist.c); nothing here does I/O. */
#ifndef VG_SERVE_QUOTA_H
#define VG_SERVE_QUOTA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* The quotas, in the order a refusal checks them. */
enum vg_quota_kind { VG_Q_CONCURRENT, VG_Q_RUNS, VG_Q_STORED, VG_Q_CPU, VG_Q_WALL, VG_Q_COUNT };

struct vg_quota {
    uint64_t max[VG_Q_COUNT];    /* runs, concurrent: counts; cpu, wall: ms; stored: bytes */
    uint64_t window[VG_Q_COUNT]; /* ms, for runs, cpu and wall (0 for the others) */
};

/* One accepted run's charge, kept until its window has passed. */
struct vg_charge {
    char id[32];
    int64_t t_ms;       /* when it was accepted (wall clock, ms) */
    uint64_t cpu_ms;    /* reserved, then what it used */
    uint64_t wall_ms;
};

struct vg_usage {
    struct vg_charge *c; /* oldest first */
    size_t n, cap;
    unsigned active;     /* runs queued or running */
    uint64_t stored;     /* bytes of stored runs */
};

/* What a new run asks for and what it gets. */
struct vg_grant {
    uint64_t cpu_ms, wall_ms;     /* granted: at most what was asked */
    int refused;                  /* -1, or the enum vg_quota_kind that refused */
    uint64_t retry_s;             /* when a retry can pass (0: not by waiting) */
    char why[160];                /* "quota runs: 50 runs per 10m used" */
};

/* The shortest grant worth running: below it a run is refused rather than
 * started with a budget too small to start an interpreter. */
#define VG_QUOTA_MIN_GRANT_MS 1000

const char *vg_quota_name(enum vg_quota_kind k); /* "runs", ... */
int vg_quota_from_name(const char *name);        /* -1 when unknown */
/* "100/1h" for runs, "10m/1h" for cpu and wall, "4" for concurrent,
 * "1G" for stored: into q; false with err naming what is wrong. */
bool vg_quota_parse(struct vg_quota *q, enum vg_quota_kind k, const char *text,
                    struct vg_err *err);
void vg_quota_format(const struct vg_quota *q, enum vg_quota_kind k, char *buf, size_t cap);

/* Drops charges whose window has passed for every quota. */
void vg_usage_prune(const struct vg_quota *q, struct vg_usage *u, int64_t now_ms);
/* Decides a new run asking cpu_ms/wall_ms: fills g; true when admitted. */
bool vg_quota_admit(const struct vg_quota *q, const struct vg_usage *u, int64_t now_ms,
                    uint64_t want_cpu_ms, uint64_t want_wall_ms, struct vg_grant *g);
/* Records an admitted run (active + 1). */
void vg_usage_charge(struct vg_usage *u, const char *id, int64_t now_ms, const struct vg_grant *g);
/* The run ended (active - 1): its charge becomes what it used (a grant is
 * held by the run's own limits, with the small overshoot of a kill: that is
 * charged too, so later runs get less).  A charge already expired is fine. */
void vg_usage_settle(struct vg_usage *u, const char *id, uint64_t cpu_ms, uint64_t wall_ms);
/* What is used now of quota k (count, ms or bytes). */
uint64_t vg_usage_used(const struct vg_quota *q, const struct vg_usage *u, enum vg_quota_kind k,
                       int64_t now_ms);
void vg_usage_free(struct vg_usage *u);
#endif
