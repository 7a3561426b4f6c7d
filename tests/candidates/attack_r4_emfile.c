/* attack_r4_emfile.c: opens at the open-files limit while other threads
 * free and take the last free slots (dup/close).  vigil opens the file
 * and installs it as it answers (ADDFD_FLAG_SEND), after writing a record
 * that says "installed": the log must still account for every open the
 * candidate saw work and every EMFILE it got.
 * argv[1]: seconds.  Prints "ok=N emfile=M other=K". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define LIMIT 24
#define CHURNERS 2
#define FREE 3 /* slots left free */
#define HOLD 2 /* the opener keeps this many for a while */

static atomic_bool stop;

static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        int d = dup(0);
        if (d >= 0)
            close(d);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2;
    struct rlimit rl = {LIMIT, LIMIT};
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 2;
    /* fill all but a few slots, so the churners and the opener fight over them */
    for (int i = 0; i < LIMIT - 3 - FREE; i++)
        if (dup(0) < 0)
            break;
    pthread_t th[CHURNERS];
    for (int i = 0; i < CHURNERS; i++)
        if (pthread_create(&th[i], NULL, churn, NULL))
            return 2;
    long ok = 0, emfile = 0, other = 0;
    int held[HOLD];
    int nheld = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        int fd = open("/etc/passwd", O_RDONLY);
        if (fd >= 0) {
            ok++;
            if (nheld < HOLD)
                held[nheld++] = fd; /* take slots for a while */
            else {
                for (int i = 0; i < nheld; i++)
                    close(held[i]);
                nheld = 0;
                close(fd);
            }
        } else if (errno == EMFILE)
            emfile++;
        else
            other++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 < secs);
    atomic_store(&stop, true);
    for (int i = 0; i < CHURNERS; i++)
        pthread_join(th[i], NULL);
    printf("ok=%ld emfile=%ld other=%ld\n", ok, emfile, other);
    return 0;
}
