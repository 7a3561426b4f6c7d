/* attack_exec_util.h: what the exec attack candidates share: a clock (the
 * races run for a given number of seconds) and a file copy. */
#ifndef ATTACK_EXEC_UTIL_H
#define ATTACK_EXEC_UTIL_H
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The time the race stops, from a SECONDS argument. */
static inline double deadline(const char *seconds)
{
    return now() + atof(seconds);
}

/* Copy src to dst (mode 0755); -1 on error. */
static inline int copy(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    char buf[65536];
    ssize_t n = 0;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            n = -1;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) < 0)
        n = -1;
    return in < 0 || out < 0 || n < 0 ? -1 : 0;
}
#endif
