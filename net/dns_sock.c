/* dns_sock.c: the resolver's socket, made inside the sandbox's network
 * namespace.  A socket belongs to the namespace it was created in, so the
 * sandbox's pid 1, which is there (and holds the capabilities over it)
 * from its first instruction, binds it as soon as its loopback is up and
 * hands the fd to the supervisor over SCM_RIGHTS, before the candidate
 * exists.  The supervisor then serves the socket from the host's side and
 * asks upstream from its own namespace.  (A short child of the supervisor
 * joining the namespaces did this before: a fork and a wait per run.) */
#include "net/dns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/fdpass.h"

int vg_dns_bind(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(VG_DNS_PORT)};
    if (inet_pton(AF_INET, VG_DNS_ADDR, &sa.sin_addr) != 1 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno ? errno : EINVAL;
        close(fd);
        return -e;
    }
    return fd;
}

int vg_dns_socket_send(int chan, int fd)
{
    int code = fd < 0 ? -fd : 0;
    ssize_t n = vg_fd_send(chan, &code, sizeof code, fd);
    if (fd >= 0)
        close(fd);
    return n == (ssize_t)sizeof code ? 0 : -1;
}

int vg_dns_socket_recv(int chan, struct vg_err *err)
{
    int code = EPROTO;
    int fd = vg_fd_recv(chan, &code, sizeof code);
    if (fd < 0)
        vg_errf(err, "resolver: cannot bind %s:%d in the sandbox's network namespace: %s",
                VG_DNS_ADDR, VG_DNS_PORT, strerror(code ? code : EPROTO));
    return fd;
}
