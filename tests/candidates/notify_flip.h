/* notify_flip.h: what the notify_*_flip candidates share: a second thread
 * flipping the call's argument while the main thread makes the call for
 * SECONDS, and the tally of what the calls did. */
#ifndef NOTIFY_FLIP_H
#define NOTIFY_FLIP_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

enum flip_result { FLIP_OK, FLIP_REFUSED, FLIP_OTHER };

struct flip_tally {
    long tries, ok, refused, other;
};

/* The flipper runs until this is set. */
static atomic_bool flip_done;

static inline double flip_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* attempt() once after another for secs, with flipper running; exits 1
 * when the thread cannot start. */
static inline struct flip_tally flip_run(void *(*flipper)(void *), enum flip_result (*attempt)(void),
                                         double secs)
{
    struct flip_tally t = {0, 0, 0, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, flipper, NULL) != 0)
        exit(1);
    for (double until = flip_now() + secs; flip_now() < until; t.tries++) {
        enum flip_result r = attempt();
        if (r == FLIP_OK)
            t.ok++;
        else if (r == FLIP_REFUSED)
            t.refused++;
        else
            t.other++;
    }
    atomic_store(&flip_done, true);
    pthread_join(th, NULL);
    return t;
}
#endif
