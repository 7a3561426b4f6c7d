/* forktree.c: a tree three levels deep below the first process: each
 * process at depth < 3 forks two children and waits for them.  Every
 * process prints "pid PID ppid PPID depth D" (the sandbox's view). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEPTH 3
#define WIDTH 2

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int depth = 0;
    for (int i = 0; i < WIDTH && depth < DEPTH; i++) {
        pid_t c = fork();
        if (c < 0)
            return 1;
        if (c == 0) {
            depth++;
            i = -1; /* a new process: start its own round of children */
        }
    }
    printf("pid %d ppid %d depth %d\n", getpid(), getppid(), depth);
    while (wait(NULL) > 0)
        ;
    return 0;
}
