/* test_tasks.c: the task table stays consistent whatever it is asked: tid
 * 0 (a failed PTRACE_GETEVENTMSG leaves it) never matches a free slot or
 * removes anything, the count follows adds and deletes, every entry stays
 * reachable through growth and backward-shift deletion, and probes end. */
#include "tests/unit/check.h"
#include "tracer/tasks.h"

enum { MANY = 5000 };

static bool all_reachable(struct vg_tasks *ts, int from, int to)
{
    for (int tid = from; tid < to; tid++) {
        struct vg_task *t = vg_tasks_get(ts, tid);
        if (!t || t->tid != tid)
            return false;
    }
    return true;
}

int main(void)
{
    struct vg_tasks ts;
    vg_tasks_init(&ts);
    CHECK(vg_tasks_get(&ts, 0) == NULL && vg_tasks_add(&ts, 0) == NULL);
    CHECK(vg_tasks_add(&ts, 7) != NULL && ts.n == 1);
    vg_tasks_del(&ts, 0);
    CHECK(ts.n == 1 && vg_tasks_get(&ts, 7) != NULL);
    vg_tasks_del(&ts, 7);
    CHECK(ts.n == 0 && vg_tasks_get(&ts, 7) == NULL);

    /* Grow far past the first capacity, delete every other one. */
    for (int tid = 1; tid <= MANY; tid++)
        vg_tasks_add(&ts, tid)->nspid = tid;
    CHECK(ts.n == MANY && all_reachable(&ts, 1, MANY + 1));
    for (int tid = 2; tid <= MANY; tid += 2)
        vg_tasks_del(&ts, tid);
    CHECK(ts.n == MANY / 2);
    bool odd_kept = true;
    for (int tid = 1; tid <= MANY; tid++)
        odd_kept &= (vg_tasks_get(&ts, tid) != NULL) == (tid % 2 == 1) &&
                    (tid % 2 == 0 || vg_tasks_get(&ts, tid)->nspid == tid);
    CHECK(odd_kept);
    for (int tid = 1; tid <= MANY; tid += 2)
        vg_tasks_del(&ts, tid);
    CHECK(ts.n == 0 && vg_tasks_get(&ts, 1) == NULL);
    vg_tasks_free(&ts);
    return check_done();
}
