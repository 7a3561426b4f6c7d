/* attack_exec_swap.c: swap what an exec'd name points at between the
 * check and the exec.  A thread flips the symlink "link" (atomic renames)
 * between an allowed program (argv[1]) and a denied one (argv[2]) while
 * the main thread forks children that exec "link" with argv[3] as the
 * program's first argument, for argv[4] seconds.  When vigil checks the
 * allowed target and the kernel runs the denied one, the exec check must
 * kill the denied program before it runs (it prints VICTIM-RAN first). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attack_exec_util.h"

static const char *targets[2];
static volatile int stop;

static void *flipper(void *arg)
{
    (void)arg;
    for (unsigned i = 0; !stop; i++) {
        unlink("link.tmp");
        if (symlink(targets[i & 1], "link.tmp") == 0)
            rename("link.tmp", "link");
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s ALLOWED DENIED ARG SECONDS\n", argv[0]);
        return 2;
    }
    targets[0] = argv[1];
    targets[1] = argv[2];
    if (symlink(targets[0], "link") < 0)
        perror("symlink");
    pthread_t th;
    if (pthread_create(&th, NULL, flipper, NULL) != 0)
        return 1;
    double until = deadline(argv[4]);
    unsigned tries = 0, refused = 0;
    while (now() < until) {
        pid_t pid = fork();
        if (pid == 0) {
            execl("link", "link", argv[3], (char *)NULL);
            _exit(126);
        }
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) < 0)
            break;
        tries++;
        refused += WIFEXITED(st) && WEXITSTATUS(st) == 126;
    }
    stop = 1;
    pthread_join(th, NULL);
    printf("tries %u refused %u\n", tries, refused);
    return 0;
}
