/* spin_threads.c: argv[1] threads (4 by default) spinning until killed:
 * a run's CPU time grows argv[1] times as fast as one process's would. */
#include <pthread.h>
#include <stdlib.h>

static void *spin(void *arg)
{
    volatile unsigned long n = 0;
    for (;;)
        n++;
    return arg;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    for (int i = 1; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, spin, NULL) != 0)
            return 1;
    }
    spin(NULL);
    return 0;
}
