/* notify_own_listener.c PATH: install a seccomp filter of our own that
 * sends openat to a listener of our own (a forked child answers CONTINUE
 * to everything), then open PATH and print what it holds.  Such a filter
 * outranks a supervisor's RET_TRACE, so without a refusal the open never
 * reaches vigil at all.  Prints "seccomp refused: ..." when the filter
 * cannot be installed, "READ: ..." or "open failed ..." otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog p = {4, f};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    int fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &p);
    if (fd < 0) { printf("seccomp refused: %s\n", strerror(errno)); return 0; }
    pid_t c = fork();
    if (c == 0) {
        for (;;) {
            struct seccomp_notif req = {0}; struct seccomp_notif_resp resp = {0};
            if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) _exit(0);
            resp.id = req.id; resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
            ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
        }
    }
    int s = openat(AT_FDCWD, argv[1], O_RDONLY);
    char buf[100] = {0};
    if (s >= 0 && read(s, buf, sizeof buf - 1) >= 0)
        printf("READ: %s\n", buf);
    else
        printf("open failed %s\n", strerror(errno));
    kill(c, 9);
    return 0;
}
