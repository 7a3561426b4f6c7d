/* bench_cgroup_attach.c: what moving a process into a fresh cgroup costs
 * on this kernel, apart from vigil: the write of a child's pid to a new
 * group's cgroup.procs, as vigil's launcher does for the sandbox's pid 1
 * (launcher/cgroup.c).  That write takes cgroup_threadgroup_rwsem for
 * writing, which waits for an RCU grace period unless some hierarchy is
 * mounted with favordynmods (bench/README.md, "The cgroup move").
 * Usage: bench_cgroup_attach PARENT_GROUP_DIR [ROUNDS]; run as root.  The
 * group it makes (PARENT/vigil-attach-PID) is removed each round. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_ROUNDS 20
/* Apart, so that each round starts from the rwsem's resting state. */
#define PAUSE_US 50000
#define MS_PER_S 1e3
#define NS_PER_MS 1e6

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * MS_PER_S + (double)t.tv_nsec / NS_PER_MS;
}

/* One move of a paused child into a fresh group: its ms, or < 0. */
static double one_move(const char *parent)
{
    char dir[4096], procs[4200], pid[32];
    snprintf(dir, sizeof dir, "%s/vigil-attach-%d", parent, (int)getpid());
    snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
    if (mkdir(dir, 0755) < 0) {
        perror(dir);
        return -1;
    }
    double ms = -1;
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    int fd = child > 0 ? open(procs, O_WRONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        int n = snprintf(pid, sizeof pid, "%d", (int)child);
        double t0 = now_ms();
        if (write(fd, pid, (size_t)n) == n)
            ms = now_ms() - t0;
        else
            perror(procs);
        close(fd);
    }
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
    if (rmdir(dir) < 0)
        perror(dir);
    return ms;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PARENT_GROUP_DIR [ROUNDS]\n", argv[0]);
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : DEFAULT_ROUNDS;
    double sum = 0, max = 0;
    for (int i = 0; i < rounds; i++) {
        double ms = one_move(argv[1]);
        if (ms < 0)
            return 1;
        sum += ms;
        max = ms > max ? ms : max;
        usleep(PAUSE_US);
    }
    printf("cgroup move into %s: mean %.3f ms, max %.3f ms (%d rounds)\n", argv[1],
           rounds ? sum / rounds : 0, max, rounds);
    return 0;
}
