/* peakrss.c: run a command and append its peak RSS to a file.
 *   peakrss OUTFILE COMMAND [ARGS...]
 * Appends one line, ru_maxrss in KiB from wait4(): the largest RSS of the
 * command's process and of every descendant it waited for.  A launcher of
 * its own because ru_maxrss also counts the memory a child had before its
 * exec: spawned from Python it would report Python's 14 MiB.  Built static,
 * so the few pages it has before exec stay far below what is measured.
 * Exits with the command's status. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: peakrss OUTFILE COMMAND [ARGS...]\n");
        return 2;
    }
    pid_t pid = vfork();
    if (pid < 0) {
        perror("peakrss: vfork");
        return 2;
    }
    if (pid == 0) {
        execv(argv[2], argv + 2);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("peakrss: wait4");
        return 2;
    }
    FILE *f = fopen(argv[1], "a");
    if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f) != 0) {
        perror(argv[1]);
        return 2;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
