/* attack_exec_flip.c: make execve's argv unreadable to vigil but readable
 * to the kernel.  The pointer array sits alone in a page that a thread
 * flips between PROT_NONE and PROT_READ; the main thread vforks children
 * (which share the memory, flips included) that exec argv[1] with
 * argv[2]/m-N as its first argument, for ENOUGH_TRIES rounds that both
 * ran and failed, or argv[3] seconds at most.  An exec whose
 * argv vigil could not read must be refused (EFAULT), never released: the
 * program would create m-N, an argument the log never showed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attack_exec_util.h"

#define PAGE 4096
#define ENOUGH_TRIES 600 /* about 4 s of rounds on a quiet machine */

static char **vec;
static volatile int stop;
/* Held by the flipper for each NONE/RW pair: while the main thread holds
 * it, the page is writable. */
static pthread_mutex_t flip = PTHREAD_MUTEX_INITIALIZER;

static void *flipper(void *arg)
{
    (void)arg;
    while (!stop) {
        pthread_mutex_lock(&flip);
        mprotect(vec, PAGE, PROT_NONE);
        mprotect(vec, PAGE, PROT_READ | PROT_WRITE);
        pthread_mutex_unlock(&flip);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s PROGRAM DIR SECONDS\n", argv[0]);
        return 2;
    }
    vec = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *strs = malloc(PAGE);
    if (vec == MAP_FAILED || !strs)
        return 1;
    pthread_t th;
    if (pthread_create(&th, NULL, flipper, NULL) != 0)
        return 1;
    double until = deadline(argv[3]);
    unsigned tries = 0, ran = 0, efault = 0;
    char *envp[] = {NULL};
    /* Until the time is up, or sooner once the race has been both lost
     * and won often enough: a loaded machine gives this loop few rounds a
     * second, so the time is a cap, not the length of the attack. */
    while (now() < until && !(tries >= ENOUGH_TRIES && ran && efault)) {
        snprintf(strs, PAGE, "%s/m-%u", argv[2], tries);
        pthread_mutex_lock(&flip);
        vec[0] = argv[1];
        vec[1] = strs;
        vec[2] = NULL;
        pthread_mutex_unlock(&flip);
        pid_t pid = vfork();
        if (pid == 0) {
            execve(argv[1], vec, envp);
            _exit(100);
        }
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) < 0)
            break;
        tries++;
        ran += WIFEXITED(st) && WEXITSTATUS(st) == 0;
        efault += WIFEXITED(st) && WEXITSTATUS(st) == 100;
    }
    stop = 1;
    pthread_join(th, NULL);
    printf("tries %u ran %u failed %u\n", tries, ran, efault);
    return 0;
}
