/* forktree.c [DEPTH [WIDTH]]: a tree below the first process: each process
 * at depth < DEPTH (default 3) forks WIDTH (default 2) children and waits
 * for them.  Every process prints "pid PID ppid PPID depth D" (the
 * sandbox's view). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int max_depth = argc > 1 ? atoi(argv[1]) : 3;
    int width = argc > 2 ? atoi(argv[2]) : 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    int depth = 0;
    for (int i = 0; i < width && depth < max_depth; i++) {
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
