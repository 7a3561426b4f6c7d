/* attack_exec_clock.h: the race candidates' clock (they run for a given
 * number of seconds). */
#ifndef ATTACK_EXEC_CLOCK_H
#define ATTACK_EXEC_CLOCK_H
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The time the race stops, from a SECONDS argument. */
static double deadline(const char *seconds)
{
    return now() + atof(seconds);
}
#endif
