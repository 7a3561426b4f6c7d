/* attack_exec_replace.c: replace the command file vigil checked.  Run as
 * DIR/sub/attack_exec_replace in a writable workdir: it moves its own
 * directory aside (the command's read-only bind moves with it), puts the
 * denied program argv[1] at the command's path, and execs that path with
 * argv[2] as the program's first argument.  vigil must judge the file
 * that runs, not the name it was given: the replacement is killed before
 * it runs (it prints VICTIM-RAN first thing). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attack_exec_util.h"

/* Make path name a copy of victim, by whatever the sandbox lets through. */
static int replace(const char *path, const char *victim)
{
    if (rename("sub", "sub-old") == 0 && mkdir("sub", 0755) == 0)
        return copy(victim, path);
    fprintf(stderr, "rename sub: %s\n", strerror(errno));
    if (copy(victim, "new") == 0 && rename("new", path) == 0)
        return 0;
    fprintf(stderr, "rename over: %s\n", strerror(errno));
    return copy(victim, path);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "again")) {
        printf("the command itself ran again\n");
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: %s VICTIM ARG\n", argv[0]);
        return 2;
    }
    /* The command re-executing itself unchanged is allowed. */
    pid_t pid = fork();
    if (pid == 0) {
        execl("sub/attack_exec_replace", "sub/attack_exec_replace", "again", (char *)NULL);
        _exit(126);
    }
    int st;
    waitpid(pid, &st, 0);
    if (replace("sub/attack_exec_replace", argv[1]) < 0) {
        fprintf(stderr, "could not replace the command: %s\n", strerror(errno));
        return 3;
    }
    printf("replaced\n");
    fflush(stdout);
    execl("sub/attack_exec_replace", "sub/attack_exec_replace", argv[2], (char *)NULL);
    printf("exec failed: %s\n", strerror(errno));
    return 4;
}
