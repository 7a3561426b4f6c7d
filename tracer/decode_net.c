/* decode_net.c: connect, bind, sendto, sendmsg, sendmmsg and the socket()
 * calls the baseline refuses.  The socket address is copied out of the
 * tracee as the kernel would (at most sizeof(struct sockaddr_storage)) and
 * described for the log; the protocol comes from the socket itself. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tracer/decode_impl.h"

/* Where the address is and how long: 0 and -1 when unreadable, addr 0
 * when the call names no address. */
static int locate_sa(struct vg_tracee *t, struct vg_call *c, uint64_t *addr,
                     uint64_t *len)
{
    const struct vg_argpos *p = &c->ent->pos;
    *addr = 0;
    *len = 0;
    if (p->sa_from == VG_SA_ARGS) {
        *addr = vg_arg(c, p->addr);
        *len = (uint32_t)vg_arg(c, p->addrlen);
        return 0;
    }
    /* sendmmsg: only the first message's address is read; later messages
     * in the same call may name other addresses and are not checked here
     * (the whole call is decided on the first one). */
    if (p->sa_from == VG_SA_MMSGHDR && c->a[2] == 0)
        return 0;            /* vlen 0: nothing is sent */
    struct msghdr m;         /* also the head of struct mmsghdr */
    if (vg_tracee_read(t, c->a[1], &m, sizeof(m)) < 0)
        return -1;
    *addr = (uint64_t)(uintptr_t)m.msg_name;
    *len = m.msg_namelen;
    return 0;
}

/* The socket's protocol, asked of a duplicate of the tracee's fd. */
static const char *socket_proto(struct vg_tracee *t, int fd, const char *fallback)
{
    int dup = vg_tracee_dup_fd(t, fd);
    if (dup < 0)
        return fallback;
    int domain = 0, type = 0;
    socklen_t l1 = sizeof(domain), l2 = sizeof(type);
    int r1 = getsockopt(dup, SOL_SOCKET, SO_DOMAIN, &domain, &l1);
    int r2 = getsockopt(dup, SOL_SOCKET, SO_TYPE, &type, &l2);
    close(dup);
    if (r1 < 0 || r2 < 0)
        return fallback;
    if (domain == AF_UNIX)
        return "unix";
    if (type == SOCK_STREAM)
        return "tcp";
    if (type == SOCK_DGRAM)
        return "udp";
    return "raw";
}

static void describe_inet(struct vg_call *c)
{
    char buf[INET6_ADDRSTRLEN];
    const void *ip;
    int port;
    if (c->sa.ss_family == AF_INET && c->salen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&c->sa;
        ip = &in->sin_addr;
        port = ntohs(in->sin_port);
    } else if (c->sa.ss_family == AF_INET6 && c->salen >= 24) {
        /* 24: the RFC 2133 sockaddr_in6 without scope id, still accepted. */
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&c->sa;
        ip = &in6->sin6_addr;
        port = ntohs(in6->sin6_port);
    } else {
        return;              /* too short: the kernel fails EINVAL */
    }
    if (inet_ntop(c->sa.ss_family, ip, buf, sizeof(buf)) == NULL)
        return;
    c->args.addr = vg_arena_strdup(&c->arena, buf);
    c->args.port = port;
}

/* Abstract names ("\0name") are shown as "@name", NULs inside as '@'. */
static const char *abstract_name(struct vg_call *c, const char *p, size_t n)
{
    char *s = vg_arena_alloc(&c->arena, n + 1);
    for (size_t i = 0; i < n; i++)
        s[i] = p[i] ? p[i] : '@';
    s[n] = '\0';
    return s;
}

/* A pathname socket is a file: resolve it like one (connect follows
 * symlinks) and, when it fits, put the canonical path into sa so that the
 * policy judges the real name. */
static void describe_unix(struct vg_tracee *t, struct vg_call *c)
{
    struct sockaddr_un *un = (struct sockaddr_un *)&c->sa;
    size_t off = offsetof(struct sockaddr_un, sun_path);
    size_t n = c->salen > off ? c->salen - off : 0;
    if (n > sizeof(un->sun_path))
        n = sizeof(un->sun_path);
    if (n == 0) {
        c->args.addr = "";   /* unnamed: autobind */
        return;
    }
    if (un->sun_path[0] == '\0') {
        c->args.addr = abstract_name(c, un->sun_path, n);
        return;
    }
    char raw[sizeof(un->sun_path) + 1];
    memcpy(raw, un->sun_path, n);
    raw[n] = '\0';
    c->args.path = vg_arena_strdup(&c->arena, raw);
    const char *real = vg_resolve_at(t, c, AT_FDCWD, c->args.path, true);
    c->args.addr = c->check_path = real;
    size_t rl = strlen(real);
    if (real[0] == '/' && rl < sizeof(un->sun_path)) {
        memset(un->sun_path, 0, sizeof(un->sun_path));
        memcpy(un->sun_path, real, rl);
        c->salen = (socklen_t)(off + rl + 1);
    }
}

int vg_dec_net(struct vg_tracee *t, struct vg_call *c)
{
    uint64_t addr, len;
    int fd = (int)c->a[0];
    const char *fallback = c->cls == VG_CLASS_SEND ? "udp" : "tcp";
    if (locate_sa(t, c, &addr, &len) < 0)
        goto unreadable;
    /* The kernel drops a zero-length address; shorter than a family
     * cannot name anything. */
    if (addr == 0 || len < sizeof(sa_family_t)) {
        c->proto = c->args.proto = socket_proto(t, fd, fallback);
        return 0;
    }
    if (len > sizeof(c->sa))
        len = sizeof(c->sa);
    if (vg_tracee_read(t, addr, &c->sa, len) < 0)
        goto unreadable;
    c->salen = (socklen_t)len;
    c->has_sa = true;
    c->args.family = vg_family_name(c->sa.ss_family);
    if (c->sa.ss_family == AF_UNIX) {
        c->proto = c->args.proto = "unix";
        describe_unix(t, c);
        return 0;
    }
    c->proto = c->args.proto = socket_proto(t, fd, fallback);
    describe_inet(c);
    return 0;
unreadable:
    c->args.addr = VG_UNREADABLE;
    c->proto = c->args.proto = fallback;
    return -1;
}

/* socket() of a family the baseline refuses (netlink, packet, ...). */
int vg_dec_socket(struct vg_tracee *t, struct vg_call *c)
{
    (void)t;
    int af = (int)c->a[0];
    vg_set_flags(c, (uint64_t)af, VG_FL_FAMILY);
    c->args.family = vg_family_name(af);
    return 0;
}
