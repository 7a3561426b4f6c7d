/* stack_bounce: what a candidate could notice of the notify engine's
 * bounce (a refused call answered ERESTARTNOINTR once, so that it stops
 * at a ptrace stop and comes back with a native stack).
 *
 * THREADS threads each open a denied file and an allowed one ROUNDS
 * times, while a timer signals the process every millisecond; its handler
 * (no SA_RESTART) opens the denied file too, so a handler's call often
 * lands between a bounce and its restart, or before vigil has received a
 * call's notification.  Every denied open must fail with the refusal's
 * errno and every allowed one open: never EINTR (no open of a plain file
 * fails so), never the kernel's internal 513.  Then, in one
 * thread with the timer off, an O_CREAT|O_EXCL open of a new file: under
 * --stacks an allowed call is bounced too, and must happen once (a second
 * run of it would say EEXIST).
 *
 * argv: NEWFILE THREADS ROUNDS (the denied file is fixed: a file named on
 * vigil's command line is readable).  Prints "denied=N allowed=N bad=N
 * first_bad=ERRNO" (-1: a denied file opened) and the
 * O_EXCL open's outcome ("excl=ok" or "excl=ERRNO"). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define TIMER_US 1000
#define ALLOWED "/etc/hostname"
#define DENIED "/var/lib/dpkg/status" /* exists; the test's policy grants nothing in /var */

static const char *denied = DENIED;
static int rounds;
static atomic_long denied_opens, allowed_opens, bad;
static atomic_int first_bad_errno;

static void try_denied(void)
{
    int fd = open(denied, O_RDONLY);
    int e = errno;
    atomic_fetch_add(&denied_opens, 1);
    if (fd >= 0 || (e != EACCES && e != ENOENT && e != EPERM)) {
        atomic_fetch_add(&bad, 1);
        atomic_store(&first_bad_errno, fd >= 0 ? -1 : e);
        if (fd >= 0)
            close(fd);
    }
}

static void try_allowed(void)
{
    int fd = open(ALLOWED, O_RDONLY);
    atomic_fetch_add(&allowed_opens, 1);
    if (fd < 0) {
        atomic_fetch_add(&bad, 1);
        atomic_store(&first_bad_errno, errno);
        return;
    }
    close(fd);
}

static void on_alarm(int sig)
{
    (void)sig;
    int saved = errno;
    try_denied();
    errno = saved;
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        try_denied();
        try_allowed();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: stack_bounce NEWFILE THREADS ROUNDS\n");
        return 2;
    }
    int threads = atoi(argv[2]);
    rounds = atoi(argv[3]);
    struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    struct itimerval it = {{0, TIMER_US}, {0, TIMER_US}};
    if (sigaction(SIGALRM, &sa, NULL) < 0 || setitimer(ITIMER_REAL, &it, NULL) < 0) {
        perror("timer");
        return 2;
    }
    pthread_t th[64];
    if (threads < 1 || threads > 64)
        return 2;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&th[i], NULL, worker, NULL) != 0)
            return 2;
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_IGN);
    printf("denied=%ld allowed=%ld bad=%ld first_bad=%d\n", atomic_load(&denied_opens),
           atomic_load(&allowed_opens), atomic_load(&bad), atomic_load(&first_bad_errno));
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
        printf("excl=ok\n");
        close(fd);
    } else {
        printf("excl=%s\n", strerrorname_np(errno));
    }
    return 0;
}
