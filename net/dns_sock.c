/* dns_sock.c: the resolver's socket, made inside the sandbox's network
 * namespace.  A socket belongs to the namespace it was created in, so a
 * short child of the supervisor joins the sandbox's user namespace (for
 * the capabilities over its network namespace, also when vigil is not
 * root) and network namespace, binds, hands the fd back over SCM_RIGHTS
 * and exits.  The supervisor then serves the socket from the host's side
 * and asks upstream from its own namespace. */
#include "net/dns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "net/net.h"
#include "util/fdpass.h"

/* In the child: the bound socket, or -errno. */
static int bind_inside(pid_t pid)
{
    int pidfd = (int)syscall(VG_NR_pidfd_open, pid, 0);
    if (pidfd < 0)
        return -errno;
    /* One call: both namespaces of that very process (no pid reuse). */
    int r = setns(pidfd, CLONE_NEWUSER | CLONE_NEWNET);
    int e = errno;
    close(pidfd);
    if (r < 0)
        return -e;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    /* pid 1 brings `lo` up too, at the same time: whoever is first, the
     * address is local before the bind.  (A socket bound with IP_FREEBIND
     * while `lo` was still down lost some of its replies.) */
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(VG_DNS_PORT)};
    if (vg_loopback_up() < 0 || inet_pton(AF_INET, VG_DNS_ADDR, &sa.sin_addr) != 1 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/* Child: send the fd, or the errno as one int. */
static _Noreturn void child(int chan, pid_t pid)
{
    /* nothing of vigil's memory is for a debugger in the sandbox */
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    int fd = bind_inside(pid);
    int code = fd < 0 ? -fd : 0;
    _exit(vg_fd_send(chan, &code, sizeof code, fd) == (ssize_t)sizeof code ? 0 : 1);
}

/* Parent: the fd the child sent, or -1 with the errno it sent. */
static int receive(int chan, int *code)
{
    *code = EPROTO;
    return vg_fd_recv(chan, code, sizeof *code);
}

int vg_dns_socket(pid_t pid, struct vg_err *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        vg_errf(err, "resolver: socketpair: %s", strerror(errno));
        return -1;
    }
    pid_t c = fork();
    if (c < 0) {
        vg_errf(err, "resolver: fork: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (c == 0) {
        close(sv[0]);
        child(sv[1], pid);
    }
    close(sv[1]);
    int code, fd = receive(sv[0], &code);
    close(sv[0]);
    int st;
    while (waitpid(c, &st, 0) < 0 && errno == EINTR)
        ;
    if (fd < 0)
        vg_errf(err, "resolver: cannot bind %s:%d in the sandbox's network namespace: %s",
                VG_DNS_ADDR, VG_DNS_PORT, strerror(code ? code : EPROTO));
    return fd;
}
