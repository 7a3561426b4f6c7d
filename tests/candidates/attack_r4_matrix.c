/* attack_r4_matrix.c: opens whose outcome a kernel check decides (DAC as
 * the caller's uid, read-only mounts, O_NOATIME's owner rule, O_DIRECTORY,
 * O_PATH, a directory opened for writing, a terminal, a child's /proc
 * files), one line each: "NAME OK flags=0xF" or "NAME ERRNO".  Run under
 * both engines, the lines must match: under ptrace the kernel opens for
 * the caller, under notify vigil does (tracer/notify/uring.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEPT_FLAGS                                                                            \
    (O_ACCMODE | O_NONBLOCK | O_APPEND | O_NOATIME | O_PATH | O_DIRECTORY | O_SYNC | __O_TMPFILE)

static void try(const char *name, const char *path, int flags)
{
    int fd = open(path, flags);
    if (fd < 0) {
        printf("%s %s\n", name, strerrorname_np(errno));
        return;
    }
    printf("%s OK flags=%#x\n", name, fcntl(fd, F_GETFL) & KEPT_FLAGS);
    close(fd);
}

int main(void)
{
    int fd = open("/tmp/work/own", O_CREAT | O_WRONLY, 0600);
    if (fd < 0 || close(fd) < 0 || chmod("/tmp/work/own", 0600) < 0)
        return 2;
    fd = open("/tmp/work/none", O_CREAT | O_WRONLY, 0000);
    if (fd < 0 || close(fd) < 0)
        return 2;
    if (symlink("own", "/tmp/work/link") < 0)
        return 2;
    try("noatime-not-owner", "/etc/passwd", O_RDONLY | O_NOATIME);
    try("noatime-owner", "/tmp/work/own", O_RDONLY | O_NOATIME);
    try("directory-on-file", "/etc/passwd", O_RDONLY | O_DIRECTORY);
    try("directory-on-dir", "/etc", O_RDONLY | O_DIRECTORY);
    try("mode-000", "/tmp/work/none", O_RDONLY);
    try("mode-000-path", "/tmp/work/none", O_PATH);
    try("readonly-tree-write", "/etc/passwd", O_WRONLY);
    try("readonly-tree-rdwr-usr", "/usr/bin/env", O_RDWR);
    try("dir-for-write", "/tmp/work", O_RDWR);
    try("regular-plain", "/etc/passwd", O_RDONLY);
    try("path-with-rdwr", "/tmp/work/own", O_PATH | O_RDWR); /* open(2) drops O_RDWR */
    try("nofollow-link", "/tmp/work/link", O_RDONLY | O_NOFOLLOW);
    try("trailing-slash-file", "/tmp/work/own/", O_RDONLY);
    try("tmpfile", "/tmp/work", O_TMPFILE | O_RDWR);
    try("append-sync", "/tmp/work/own", O_WRONLY | O_APPEND | O_SYNC);
    try("dev-null", "/dev/null", O_WRONLY);
    try("dev-zero-nonblock", "/dev/zero", O_RDONLY | O_NONBLOCK);
    try("dev-tty", "/dev/tty", O_RDWR);
    try("self-status", "/proc/self/status", O_RDONLY);
    try("self-mem", "/proc/self/mem", O_RDONLY);
    pid_t pid = fork();
    if (pid == 0) {
        pause();
        _exit(0);
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    try("child-mem", path, O_RDONLY);
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    try("child-environ", path, O_RDONLY);
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    try("child-status", path, O_RDONLY);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 0;
}
