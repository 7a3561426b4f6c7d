/* attack_paths_threads.h: what the attack_paths_* candidates share: run a
 * worker in n threads at once and wait for them all. */
#ifndef ATTACK_PATHS_THREADS_H
#define ATTACK_PATHS_THREADS_H
#include <pthread.h>
#include <stdlib.h>

/* Each worker gets its index as its argument; exits 2 if one cannot start. */
static inline void run_threads(int n, void *(*worker)(void *))
{
    pthread_t th[16];
    if (n > 16)
        exit(2);
    for (long i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
            exit(2);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}
#endif
