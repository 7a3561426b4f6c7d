/* recheck_task.c: the C candidate of tests/test_recheck.py: the same
 * attempts as recheck_task.py (a system file, a secret probed, a directory
 * and files made, renamed and removed in the workdir, a connection to the
 * sandbox's loopback on port argv[1], a program run), each made whatever
 * the one before it was answered. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void said(const char *what, int rc)
{
    printf("%s %s\n", what, rc < 0 ? strerror(errno) : "ok");
}

static int opened(const char *path, int flags)
{
    int fd = open(path, flags, 0644);
    if (fd >= 0)
        close(fd);
    return fd;
}

static int connected(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = s < 0 ? -1 : connect(s, (struct sockaddr *)&a, sizeof a);
    if (s >= 0)
        close(s);
    return rc;
}

static int ran(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    return pid < 0 || waitpid(pid, &st, 0) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    said("hostname", opened("/etc/hostname", O_RDONLY));
    said("key", opened("/root/.ssh/id_rsa", O_RDONLY));
    said("mkdir", mkdir("out", 0755));
    said("write", opened("out/a.txt", O_WRONLY | O_CREAT | O_TRUNC));
    said("rename", rename("out/a.txt", "out/b.txt"));
    said("unlink", unlink("out/b.txt"));
    said("connect", connected(argc > 1 ? atoi(argv[1]) : 1));
    char *cat[] = {"/usr/bin/cat", "/etc/hostname", NULL};
    said("cat", ran(cat));
    printf("done\n");
    return 0;
}
