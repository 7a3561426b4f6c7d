/* attack_exec_replace_race.c: swap the command's directory for one
 * holding a denied program, between vigil's check of an exec and the
 * kernel's.  Run as sub/attack_exec_replace_race in a writable workdir,
 * with VICTIM ARG SECONDS: a thread exchanges "sub" and "alt" (whose file
 * of the same name is a copy of VICTIM) with renameat2(RENAME_EXCHANGE)
 * while the main thread forks children that exec the command's path with
 * ARG, for SECONDS.  Run with one argument it is the command re-executed:
 * it says so and exits.  The denied program must never run: refused at
 * the call when the check sees it, killed at the exec event when only the
 * kernel does. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attack_exec_util.h"

#define CMD "sub/attack_exec_replace_race"

static volatile int stop;

static void *exchanger(void *arg)
{
    (void)arg;
    while (!stop)
        renameat2(AT_FDCWD, "sub", AT_FDCWD, "alt", RENAME_EXCHANGE);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc == 2) {
        printf("the command itself ran again\n");
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: %s VICTIM ARG SECONDS\n", argv[0]);
        return 2;
    }
    if ((mkdir("alt", 0755) < 0) || copy(argv[1], "alt/attack_exec_replace_race") < 0) {
        perror("alt");
        return 3;
    }
    pthread_t th;
    if (pthread_create(&th, NULL, exchanger, NULL) != 0)
        return 1;
    double until = deadline(argv[3]);
    unsigned tries = 0, ran = 0;
    while (now() < until) {
        pid_t pid = fork();
        if (pid == 0) {
            execl(CMD, CMD, argv[2], (char *)NULL);
            _exit(126);
        }
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) < 0)
            break;
        tries++;
        ran += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    stop = 1;
    pthread_join(th, NULL);
    printf("tries %u ran %u\n", tries, ran);
    return 0;
}
