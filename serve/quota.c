/* quota.c: admission against a user's quotas (see quota.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/quota.h"

static const char *const names[VG_Q_COUNT] = {
    [VG_Q_CONCURRENT] = "concurrent", [VG_Q_RUNS] = "runs", [VG_Q_STORED] = "stored",
    [VG_Q_CPU] = "cpu",               [VG_Q_WALL] = "wall",
};

const char *vg_quota_name(enum vg_quota_kind k)
{
    return k < VG_Q_COUNT ? names[k] : "?";
}

int vg_quota_from_name(const char *name)
{
    for (int k = 0; k < VG_Q_COUNT; k++)
        if (!strcmp(names[k], name))
            return k;
    return -1;
}

static bool windowed(enum vg_quota_kind k)
{
    return k == VG_Q_RUNS || k == VG_Q_CPU || k == VG_Q_WALL;
}

bool vg_quota_parse(struct vg_quota *q, enum vg_quota_kind k, const char *text,
                    struct vg_err *err)
{
    const char *slash = strchr(text, '/');
    char *amount = slash ? vg_xstrndup(text, (size_t)(slash - text)) : vg_xstrdup(text);
    uint64_t v = 0, w = 0;
    bool ok;
    if (k == VG_Q_CPU || k == VG_Q_WALL)
        ok = vg_parse_duration(amount, &v);
    else if (k == VG_Q_STORED)
        ok = vg_parse_size(amount, &v);
    else
        ok = vg_parse_u64(amount, &v);
    free(amount);
    if (ok && windowed(k))
        ok = slash && vg_parse_duration(slash + 1, &w) && w > 0;
    else if (ok)
        ok = !slash;
    if (!ok) {
        static const char *const shape[VG_Q_COUNT] = {
            [VG_Q_CONCURRENT] = "a count (4)", [VG_Q_RUNS] = "COUNT/WINDOW (100/1h)",
            [VG_Q_STORED] = "a size (1G)", [VG_Q_CPU] = "DURATION/WINDOW (10m/1h)",
            [VG_Q_WALL] = "DURATION/WINDOW (1h/1h)",
        };
        vg_errf(err, "quota %s: '%s' is not %s", names[k], text, shape[k]);
        return false;
    }
    q->max[k] = v;
    q->window[k] = w;
    return true;
}

static void format_ms(uint64_t ms, char *buf, size_t cap)
{
    if (ms % 3600000 == 0)
        snprintf(buf, cap, "%" PRIu64 "h", ms / 3600000);
    else if (ms % 60000 == 0)
        snprintf(buf, cap, "%" PRIu64 "m", ms / 60000);
    else if (ms % 1000 == 0)
        snprintf(buf, cap, "%" PRIu64 "s", ms / 1000);
    else
        snprintf(buf, cap, "%" PRIu64 "ms", ms);
}

void vg_quota_format(const struct vg_quota *q, enum vg_quota_kind k, char *buf, size_t cap)
{
    char amount[32], win[32];
    if (k == VG_Q_CPU || k == VG_Q_WALL)
        format_ms(q->max[k], amount, sizeof amount);
    else
        snprintf(amount, sizeof amount, "%" PRIu64, q->max[k]);
    if (!windowed(k)) {
        snprintf(buf, cap, "%s", amount);
        return;
    }
    format_ms(q->window[k], win, sizeof win);
    snprintf(buf, cap, "%s/%s", amount, win);
}

/* The charge's share of quota k. */
static uint64_t share(const struct vg_charge *c, enum vg_quota_kind k)
{
    return k == VG_Q_RUNS ? 1 : k == VG_Q_CPU ? c->cpu_ms : c->wall_ms;
}

static bool in_window(const struct vg_quota *q, enum vg_quota_kind k, const struct vg_charge *c,
                      int64_t now_ms)
{
    return c->t_ms + (int64_t)q->window[k] > now_ms;
}

uint64_t vg_usage_used(const struct vg_quota *q, const struct vg_usage *u, enum vg_quota_kind k,
                       int64_t now_ms)
{
    if (k == VG_Q_CONCURRENT)
        return u->active;
    if (k == VG_Q_STORED)
        return u->stored;
    uint64_t sum = 0;
    for (size_t i = 0; i < u->n; i++)
        if (in_window(q, k, &u->c[i], now_ms))
            sum += share(&u->c[i], k);
    return sum;
}

void vg_usage_prune(const struct vg_quota *q, struct vg_usage *u, int64_t now_ms)
{
    size_t keep = 0;
    for (size_t i = 0; i < u->n; i++) {
        bool live = false;
        for (int k = 0; k < VG_Q_COUNT; k++)
            live |= windowed(k) && in_window(q, k, &u->c[i], now_ms);
        if (live)
            u->c[keep++] = u->c[i];
    }
    u->n = keep;
}

/* Seconds until the charges of quota k have dropped by at least `drop`:
 * the oldest expire first.  0 when waiting cannot do it. */
static uint64_t retry_after(const struct vg_quota *q, const struct vg_usage *u,
                            enum vg_quota_kind k, int64_t now_ms, uint64_t drop)
{
    uint64_t freed = 0;
    for (size_t i = 0; i < u->n; i++) {
        const struct vg_charge *c = &u->c[i];
        if (!in_window(q, k, c, now_ms))
            continue;
        freed += share(c, k);
        if (freed >= drop) {
            int64_t ms = c->t_ms + (int64_t)q->window[k] - now_ms;
            return (uint64_t)(ms + 999) / 1000;
        }
    }
    return 0;
}

static bool refuse(struct vg_grant *g, enum vg_quota_kind k, uint64_t retry_s, const char *what)
{
    g->refused = (int)k;
    g->retry_s = retry_s;
    snprintf(g->why, sizeof g->why, "quota %s: %s", names[k], what);
    return false;
}

/* A timed quota grants min(want, left); below the minimum it refuses. */
static bool grant_time(const struct vg_quota *q, const struct vg_usage *u, enum vg_quota_kind k,
                       int64_t now_ms, uint64_t want, uint64_t *out, struct vg_grant *g)
{
    uint64_t used = vg_usage_used(q, u, k, now_ms);
    uint64_t left = used < q->max[k] ? q->max[k] - used : 0;
    uint64_t need = want < VG_QUOTA_MIN_GRANT_MS ? want : VG_QUOTA_MIN_GRANT_MS;
    if (left < need || left == 0) {
        char lim[48], what[128];
        vg_quota_format(q, k, lim, sizeof lim);
        snprintf(what, sizeof what, "%s used (%" PRIu64 " ms left, a run needs %" PRIu64 ")",
                 lim, left, need);
        return refuse(g, k, retry_after(q, u, k, now_ms, need - left), what);
    }
    *out = want < left ? want : left;
    return true;
}

bool vg_quota_admit(const struct vg_quota *q, const struct vg_usage *u, int64_t now_ms,
                    uint64_t want_cpu_ms, uint64_t want_wall_ms, struct vg_grant *g)
{
    memset(g, 0, sizeof *g);
    g->refused = -1;
    char lim[48], what[128];
    if (u->active >= q->max[VG_Q_CONCURRENT]) {
        snprintf(what, sizeof what, "%u runs queued or running, at most %" PRIu64, u->active,
                 q->max[VG_Q_CONCURRENT]);
        return refuse(g, VG_Q_CONCURRENT, 1, what);
    }
    uint64_t runs = vg_usage_used(q, u, VG_Q_RUNS, now_ms);
    if (runs >= q->max[VG_Q_RUNS]) {
        vg_quota_format(q, VG_Q_RUNS, lim, sizeof lim);
        snprintf(what, sizeof what, "%s used", lim);
        return refuse(g, VG_Q_RUNS, retry_after(q, u, VG_Q_RUNS, now_ms, runs - q->max[VG_Q_RUNS] + 1),
                      what);
    }
    if (u->stored >= q->max[VG_Q_STORED]) {
        snprintf(what, sizeof what, "%" PRIu64 " bytes stored, at most %" PRIu64
                 " (delete runs to make room)", u->stored, q->max[VG_Q_STORED]);
        return refuse(g, VG_Q_STORED, 0, what);
    }
    return grant_time(q, u, VG_Q_CPU, now_ms, want_cpu_ms, &g->cpu_ms, g) &&
           grant_time(q, u, VG_Q_WALL, now_ms, want_wall_ms, &g->wall_ms, g);
}

void vg_usage_charge(struct vg_usage *u, const char *id, int64_t now_ms, const struct vg_grant *g)
{
    if (u->n == u->cap) {
        u->cap = u->cap ? 2 * u->cap : 16;
        u->c = vg_xrealloc(u->c, u->cap * sizeof *u->c);
    }
    struct vg_charge *c = &u->c[u->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id);
    c->t_ms = now_ms;
    c->cpu_ms = g->cpu_ms;
    c->wall_ms = g->wall_ms;
    u->active++;
}

void vg_usage_settle(struct vg_usage *u, const char *id, uint64_t cpu_ms, uint64_t wall_ms)
{
    if (u->active)
        u->active--;
    for (size_t i = 0; i < u->n; i++) {
        struct vg_charge *c = &u->c[i];
        if (strcmp(c->id, id))
            continue;
        c->cpu_ms = cpu_ms;
        c->wall_ms = wall_ms;
        return;
    }
}

void vg_usage_free(struct vg_usage *u)
{
    free(u->c);
    memset(u, 0, sizeof *u);
}
