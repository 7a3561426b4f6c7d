/* tasks.c: see tasks.h. */
#include "tracer/tasks.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

void vg_tasks_init(struct vg_tasks *ts)
{
    ts->cap = 256;
    ts->n = 0;
    ts->slots = vg_xcalloc(ts->cap, sizeof *ts->slots);
    ts->next_proc = 1;
}

void vg_tasks_free(struct vg_tasks *ts)
{
    free(ts->slots);
    ts->slots = NULL;
    ts->cap = ts->n = 0;
}

static size_t slot_of(const struct vg_tasks *ts, pid_t tid)
{
    return ((size_t)tid * 2654435761u) & (ts->cap - 1);
}

struct vg_task *vg_tasks_get(struct vg_tasks *ts, pid_t tid)
{
    if (tid <= 0)
        return NULL; /* 0 marks a free slot: it must never match one */
    for (size_t i = slot_of(ts, tid), k = 0; k < ts->cap; i = (i + 1) & (ts->cap - 1), k++) {
        if (ts->slots[i].tid == tid)
            return &ts->slots[i];
        if (ts->slots[i].tid == 0)
            return NULL;
    }
    return NULL;
}

/* The free slot tid's probe chain reaches; NULL when there is none (the
 * table is never more than half full, but a probe must end anyway). */
static struct vg_task *free_slot(struct vg_tasks *ts, pid_t tid)
{
    for (size_t i = slot_of(ts, tid), k = 0; k < ts->cap; i = (i + 1) & (ts->cap - 1), k++)
        if (!ts->slots[i].tid)
            return &ts->slots[i];
    return NULL;
}

static void grow(struct vg_tasks *ts)
{
    struct vg_task *old = ts->slots;
    size_t oldcap = ts->cap;
    ts->cap *= 2;
    ts->slots = vg_xcalloc(ts->cap, sizeof *ts->slots);
    ts->n = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].tid) {
            *free_slot(ts, old[i].tid) = old[i]; /* twice the room: always one */
            ts->n++;
        }
    free(old);
}

struct vg_task *vg_tasks_add(struct vg_tasks *ts, pid_t tid)
{
    if (tid <= 0)
        return NULL;
    struct vg_task *t = vg_tasks_get(ts, tid);
    if (t)
        return t;
    if ((ts->n + 1) * 2 > ts->cap)
        grow(ts);
    t = free_slot(ts, tid);
    if (!t)
        return NULL;
    *t = (struct vg_task){.tid = tid, .tgid = tid};
    ts->n++;
    return t;
}

/* Backward-shift deletion keeps every probe chain unbroken. */
void vg_tasks_del(struct vg_tasks *ts, pid_t tid)
{
    struct vg_task *t = vg_tasks_get(ts, tid);
    if (!t)
        return;
    size_t i = (size_t)(t - ts->slots);
    ts->slots[i].tid = 0;
    ts->n--;
    /* Re-place every entry of the rest of the chain (at most cap - 1). */
    for (size_t j = (i + 1) & (ts->cap - 1), k = 1; k < ts->cap && ts->slots[j].tid;
         j = (j + 1) & (ts->cap - 1), k++) {
        struct vg_task moved = ts->slots[j];
        ts->slots[j].tid = 0;
        *free_slot(ts, moved.tid) = moved; /* j itself is free now */
    }
}

uint64_t vg_tasks_new_proc(struct vg_tasks *ts)
{
    return ts->next_proc++;
}

/* The last number on a "Key:\t1\t2" line of /proc/TID/status. */
static long last_field(const char *status, const char *key)
{
    const char *p = strstr(status, key);
    if (!p)
        return 0;
    p += strlen(key);
    long v = 0;
    while (*p && *p != '\n') {
        while (*p == '\t' || *p == ' ')
            p++;
        if (*p < '0' || *p > '9')
            break;
        v = strtol(p, (char **)&p, 10);
    }
    return v;
}

bool vg_task_identify(struct vg_tasks *ts, struct vg_task *t)
{
    (void)ts;
    if (t->identified)
        return true;
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return false;
    buf[n] = 0;
    t->identified = true;
    long tgid = last_field(buf, "\nTgid:");
    t->tgid = tgid > 0 ? (pid_t)tgid : t->tid;
    /* NStgid/NSpid list the ids from the outermost namespace inward: the
     * last one is what the candidate sees. */
    t->nspid = (int32_t)last_field(buf, "\nNStgid:");
    t->nstid = (int32_t)last_field(buf, "\nNSpid:");
    t->is_thread = t->tgid != t->tid;
    if (!t->ptid)
        t->ptid = (pid_t)last_field(buf, "\nPPid:");
    return true;
}
