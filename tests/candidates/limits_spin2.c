/* Two threads spinning for argv[1] seconds of wall-clock time: as much CPU
 * as two CPUs give, unless a CPU bandwidth limit holds it back. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double secs;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *spin(void *arg)
{
    (void)arg;
    double end = now() + secs;
    volatile unsigned long n = 0;
    while (now() < end)
        n++;
    return NULL;
}

int main(int argc, char **argv)
{
    secs = argc > 1 ? atof(argv[1]) : 2.0;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, spin, NULL) != 0)
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("spun\n");
    return 0;
}
