/* decode_net.c: connect, bind, listen, sendto, sendmsg, sendmmsg and the
 * socket() calls the baseline refuses.  Each socket address is copied out
 * of the tracee as the kernel copies it and described for the log; the
 * protocol comes from the socket itself (a duplicate of the candidate's
 * fd).  Whatever cannot be read or decoded makes the call undecidable,
 * never address-less: an address-less send goes out undecided. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "tracer/decode_impl.h"
#include "core/cmsg.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

/* The kernel sends at most this many messages of one sendmmsg (it cuts
 * vlen silently), so that is all there is to judge. */
#define VG_UIO_MAXIOV 1024u
/* RFC 2133's sockaddr_in6 without sin6_scope_id, which the kernel takes. */
#define VG_SIN6_LEN_RFC2133 24u
/* The most control data of one message judged (the notify engine's bound
 * on what it copies, notify_msg.h); more is refused. */
#define VG_CONTROL_MAX (1u << 20)

/* What the supervisor learns from the socket the fd names. */
struct sock_view {
    int domain, type, protocol;
    ino_t ino;                      /* which socket it is */
    struct sockaddr_storage local;  /* getsockname, when asked for */
    socklen_t local_len;
};

/* One network call being decoded, with what its socket showed. */
struct net_dec {
    struct vg_tracee *t;
    struct vg_call *c;
    struct sock_view sock;
};

/* Examine the candidate's fd through a duplicate.  -1 (errno set) when it
 * is not an open socket or cannot be duplicated. */
static int examine(struct vg_tracee *t, int fd, bool want_local, struct sock_view *s)
{
    int dup = vg_tracee_dup_fd(t, fd);
    if (dup < 0)
        return -1;
    socklen_t l1 = sizeof(s->domain), l2 = sizeof(s->type), l3 = sizeof(s->protocol);
    int r = getsockopt(dup, SOL_SOCKET, SO_DOMAIN, &s->domain, &l1);
    if (r == 0)
        r = getsockopt(dup, SOL_SOCKET, SO_TYPE, &s->type, &l2);
    if (r == 0)
        r = getsockopt(dup, SOL_SOCKET, SO_PROTOCOL, &s->protocol, &l3);
    struct stat st;
    if (r == 0 && (r = fstat(dup, &st)) == 0)
        s->ino = st.st_ino;
    s->local_len = sizeof(s->local);
    if (r == 0 && want_local)
        r = getsockname(dup, (struct sockaddr *)&s->local, &s->local_len);
    int saved = errno;
    close(dup);
    errno = saved;
    return r;
}

/* The policy's protocol words, by socket type and protocol: an ICMP
 * "ping" socket is a datagram socket but not udp, and no udp rule is
 * about it. */
static const struct {
    int type, protocol;
    const char *name;
} protos[] = {
    {SOCK_STREAM, IPPROTO_TCP, "tcp"},  {SOCK_STREAM, IPPROTO_MPTCP, "tcp"},
    {SOCK_DGRAM, IPPROTO_UDP, "udp"},   {SOCK_DGRAM, IPPROTO_UDPLITE, "udp"},
    {SOCK_DGRAM, IPPROTO_ICMP, "icmp"}, {SOCK_DGRAM, IPPROTO_ICMPV6, "icmp"},
    {SOCK_STREAM, IPPROTO_SCTP, "sctp"}, {SOCK_SEQPACKET, IPPROTO_SCTP, "sctp"},
};

static const char *proto_name(const struct sock_view *s)
{
    if (s->domain == AF_UNIX)
        return "unix";
    for (size_t i = 0; i < VG_ARRAY_LEN(protos); i++)
        if (protos[i].type == s->type && protos[i].protocol == s->protocol)
            return protos[i].name;
    return "raw";
}

static void describe_inet(struct vg_call *c, const struct vg_sockaddr_copy *s,
                          struct vg_dest *d)
{
    char buf[INET6_ADDRSTRLEN];
    const void *ip;
    int af;
    if (s->sa.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&s->sa;
        af = AF_INET6;
        ip = &in6->sin6_addr;
        d->port = ntohs(in6->sin6_port);
    } else {  /* AF_INET, or AF_UNSPEC read as AF_INET */
        const struct sockaddr_in *in = (const struct sockaddr_in *)&s->sa;
        af = AF_INET;
        ip = &in->sin_addr;
        d->port = ntohs(in->sin_port);
    }
    if (inet_ntop(af, ip, buf, sizeof(buf)) != NULL)
        d->addr = vg_arena_strdup(&c->arena, buf);
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
 * symlinks) and, when it fits, put the canonical path into the copy so
 * that the policy judges the real name.  *raw gets the path as given. */
static void describe_unix(struct vg_tracee *t, struct vg_call *c, struct vg_sockaddr_copy *s,
                          struct vg_dest *d, const char **raw)
{
    struct sockaddr_un *un = (struct sockaddr_un *)&s->sa;
    size_t off = offsetof(struct sockaddr_un, sun_path);
    size_t n = s->len > off ? s->len - off : 0;
    if (n > sizeof(un->sun_path))
        n = sizeof(un->sun_path);
    if (n == 0) {
        d->addr = "";   /* unnamed: autobind */
        return;
    }
    if (un->sun_path[0] == '\0') {
        d->addr = abstract_name(c, un->sun_path, n);
        return;
    }
    char text[sizeof(un->sun_path) + 1];
    memcpy(text, un->sun_path, n);
    text[n] = '\0';
    *raw = vg_arena_strdup(&c->arena, text);
    const char *real = vg_resolve_at(t, c, AT_FDCWD, *raw, true);
    d->addr = c->check_path = real;
    size_t rl = strlen(real);
    if (real[0] == '/' && rl < sizeof(un->sun_path)) {
        memset(un->sun_path, 0, sizeof(un->sun_path));
        memcpy(un->sun_path, real, rl);
        s->len = (socklen_t)(off + rl + 1);
    }
}

/* The shortest address the kernel takes for each family it acts on. */
static const struct {
    int family;
    socklen_t min_len;
    const char *name;
} families[] = {
    {AF_INET, sizeof(struct sockaddr_in), "inet"},
    {AF_INET6, VG_SIN6_LEN_RFC2133, "inet6"},
    {AF_UNIX, sizeof(sa_family_t), "unix"},
    /* udp_sendmsg and inet_bind read AF_UNSPEC as AF_INET, so it is
     * judged as one; connect with it dissolves an association. */
    {AF_UNSPEC, sizeof(struct sockaddr_in), "unspec"},
};

/* The socket's own IPv4 address (plain or v4-mapped), INADDR_ANY if none. */
static in_addr_t own_v4(const struct sock_view *sock)
{
    const struct sockaddr_in *in = (const struct sockaddr_in *)&sock->local;
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&sock->local;
    if (sock->local.ss_family == AF_INET)
        return in->sin_addr.s_addr;
    if (sock->local.ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
        return ((const struct in_addr *)&in6->sin6_addr.s6_addr[12])->s_addr;
    return htonl(INADDR_ANY);
}

/* A connect or send to the unspecified address reaches a local one: for
 * IPv4 the socket's own address, else loopback (__ip_route_output_key);
 * for IPv6 loopback, v4-mapped when the socket is (tcp_v6_connect,
 * udpv6_sendmsg).  The copy is rewritten to what is reached, so that a
 * rule about 127.0.0.1 is not passed by writing 0.0.0.0. */
static void reached_address(const struct sock_view *sock, struct vg_sockaddr_copy *s)
{
    in_addr_t own = own_v4(sock);
    in_addr_t v4_reached = own != htonl(INADDR_ANY) ? own : htonl(INADDR_LOOPBACK);
    if (s->sa.ss_family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&s->sa;
        if (in->sin_addr.s_addr == htonl(INADDR_ANY))
            in->sin_addr.s_addr = v4_reached;
        return;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&s->sa;
    struct in_addr *mapped = (struct in_addr *)&in6->sin6_addr.s6_addr[12];
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && mapped->s_addr == htonl(INADDR_ANY)) {
        mapped->s_addr = v4_reached;
    } else if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr)) {
        bool v4 = sock->local.ss_family == AF_INET6 &&
                  IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)&sock->local)->sin6_addr);
        if (v4) {
            in6->sin6_addr.s6_addr[10] = in6->sin6_addr.s6_addr[11] = 0xff;
            mapped->s_addr = htonl(INADDR_LOOPBACK);
        } else {
            in6->sin6_addr = in6addr_loopback;
        }
    }
}

/* An address (or the msghdr naming it) that cannot be read: the kernel
 * may well read it a moment later, so the call is refused, never taken
 * for address-less. */
static int unreadable(struct vg_call *c)
{
    c->args.addr = VG_UNREADABLE;
    return vg_undecidable(c, VG_WHY_UNREADABLE, EFAULT);
}

/* Describe the address copied into s into d.  Returns -1 (the call made
 * undecidable) when it is of a family, or shorter than, the kernel would
 * act on. */
static int describe(struct net_dec *x, struct vg_sockaddr_copy *s, struct vg_dest *d,
                    const char **raw)
{
    struct vg_call *c = x->c;
    *d = (struct vg_dest){.port = -1};
    if (s->sa.ss_family == AF_UNSPEC && c->cls == VG_CLASS_CONNECT) {
        d->family = "unspec";  /* a disconnect: no rule is about it */
        return 0;
    }
    for (size_t i = 0; i < VG_ARRAY_LEN(families); i++) {
        if (families[i].family != s->sa.ss_family)
            continue;
        if (s->len < families[i].min_len)
            return vg_undecidable(c, "undecidable: address too short for its family", EINVAL);
        d->family = families[i].name;
        if (s->sa.ss_family == AF_UNIX) {
            /* Judged by unix rules whatever the socket: on another one
             * the kernel refuses it. */
            c->proto = c->args.proto = "unix";
            describe_unix(x->t, c, s, d, raw);
            return 0;
        }
        if (s->sa.ss_family == AF_UNSPEC)
            s->sa.ss_family = AF_INET;  /* what the kernel reads it as */
        if (c->cls != VG_CLASS_BIND)
            reached_address(&x->sock, s);
        describe_inet(c, s, d);
        return 0;
    }
    char why[80];
    snprintf(why, sizeof(why), "undecidable: address family %d is not decoded",
             (int)s->sa.ss_family);
    return vg_undecidable(c, vg_arena_strdup(&c->arena, why), EAFNOSUPPORT);
}

/* Copy len bytes (at most sockaddr_storage) at addr into s. */
static int copy_addr(struct vg_tracee *t, struct vg_call *c, uint64_t addr, socklen_t len,
                     struct vg_sockaddr_copy *s)
{
    memset(s, 0, sizeof(*s));
    if (vg_tracee_read(t, addr, &s->sa, len) < 0)
        return unreadable(c);
    s->len = len;
    return 0;
}

/* The address the call is judged on (and that its record shows). */
static void set_address(struct vg_call *c, const struct vg_sockaddr_copy *s,
                        const struct vg_dest *d)
{
    c->sa = s->sa;
    c->salen = s->len;
    c->has_sa = true;
    c->args.family = d->family;
    c->args.addr = d->addr;
    c->args.port = d->port;
}

/* The call's one address, at addr. */
static int one_address(struct net_dec *x, uint64_t addr, socklen_t len)
{
    struct vg_sockaddr_copy s;
    struct vg_dest d;
    if (copy_addr(x->t, x->c, addr, len, &s) < 0 || describe(x, &s, &d, &x->c->args.path) < 0)
        return -1;
    set_address(x->c, &s, &d);
    return 0;
}

/* connect, bind, sendto: the address and its length are arguments.  The
 * kernel fails EINVAL on a length over sockaddr_storage (or negative). */
static int from_args(struct net_dec *x)
{
    struct vg_call *c = x->c;
    const struct vg_argpos *p = &c->ent->pos;
    uint64_t addr = vg_arg(c, p->addr);
    uint32_t len = (uint32_t)vg_arg(c, p->addrlen);
    /* A zero length reads nothing: the kernel then sends as if connected. */
    if (addr == 0 || len == 0)
        return 0;
    if (len > sizeof(struct sockaddr_storage))
        return vg_undecidable(c, "undecidable: address longer than sockaddr_storage", EINVAL);
    return one_address(x, addr, len);
}

/* msg_name/msg_namelen of a struct msghdr as the kernel takes them: a
 * NULL name or a zero length is no address, a length over
 * sockaddr_storage is cut to it, a negative one fails EINVAL.  Returns 0
 * with *len 0 for no address, -1 when undecidable. */
static int msg_name(struct vg_call *c, const struct msghdr *m, uint64_t *addr, socklen_t *len)
{
    *addr = (uint64_t)(uintptr_t)m->msg_name;
    *len = 0;
    if (m->msg_name == NULL || m->msg_namelen == 0)
        return 0;
    if ((int)m->msg_namelen < 0)
        return vg_undecidable(c, "undecidable: negative msg_namelen", EINVAL);
    *len = m->msg_namelen < sizeof(struct sockaddr_storage) ? m->msg_namelen
                                                            : sizeof(struct sockaddr_storage);
    return 0;
}

/* A message's control data, read as the kernel will read it: a routing
 * header, IPv6 options or an IPv4 source route (core/cmsg.h)
 * refuse the call in every mode, with or without an address (a send on a
 * connected socket is otherwise not decided: its peer was, at connect). */
static int check_control(struct net_dec *x, const struct msghdr *m)
{
    struct vg_call *c = x->c;
    if (m->msg_control == NULL || m->msg_controllen == 0)
        return 0;
    c->has_control = true;
    if (m->msg_controllen > VG_CONTROL_MAX)
        return vg_undecidable(c, "refused: control data longer than vigil judges", ENOBUFS);
    void *buf = malloc(m->msg_controllen);
    if (!buf)
        return vg_undecidable(c, "undecidable: no memory for the control data", ENOMEM);
    int r = 0;
    const char *why;
    if (vg_tracee_read(x->t, (uint64_t)(uintptr_t)m->msg_control, buf, m->msg_controllen) < 0)
        r = unreadable(c);
    else if ((r = vg_cmsg_refused(buf, m->msg_controllen, &why)) < 0)
        r = vg_undecidable(c, why, -r);
    free(buf);
    return r;
}

static int from_msghdr(struct net_dec *x)
{
    struct msghdr m;
    uint64_t addr;
    socklen_t len;
    if (vg_tracee_read(x->t, x->c->a[1], &m, sizeof(m)) < 0)
        return unreadable(x->c);
    if (msg_name(x->c, &m, &addr, &len) < 0 || (len && one_address(x, addr, len) < 0))
        return -1;
    return check_control(x, &m); /* after the address: the record shows it */
}

/* Index of the destination first given as s, or c->ndests. */
static uint32_t find_dest(const struct vg_call *c, const struct vg_sockaddr_copy *const *given,
                          const struct vg_sockaddr_copy *s)
{
    for (uint32_t i = 0; i < c->ndests; i++)
        if (given[i]->len == s->len && !memcmp(&given[i]->sa, &s->sa, s->len))
            return i;
    return c->ndests;
}

/* One message's destination joins the distinct ones.  given[] points at
 * each destination as the candidate wrote it (dest_sa gets the canonical
 * unix path), so that a repeated one is not resolved again. */
static int add_dest(struct net_dec *x, const struct vg_sockaddr_copy *s,
                    const struct vg_sockaddr_copy **given)
{
    struct vg_call *c = x->c;
    uint32_t i = find_dest(c, given, s);
    if (i < c->ndests) {
        c->dests[i].msgs++;
        return 0;
    }
    given[i] = s;
    c->dest_sa[i] = *s;
    const char *raw = NULL;
    if (describe(x, &c->dest_sa[i], &c->dests[i], &raw) < 0)
        return -1;
    c->dests[i].msgs = 1;
    if (c->ndests++ == 0)
        c->args.path = raw;
    return 0;
}

/* Every message's address, all in one read (sendmmsg's cap is the
 * kernel's IOV_MAX too); len 0 for a message to the connected peer. */
static int read_names(struct net_dec *x, const struct mmsghdr *msgs, uint32_t vlen,
                      struct vg_sockaddr_copy *names)
{
    struct vg_call *c = x->c;
    struct iovec *local = vg_arena_alloc(&c->arena, vlen * sizeof(*local));
    struct iovec *remote = vg_arena_alloc(&c->arena, vlen * sizeof(*remote));
    unsigned n = 0;
    for (uint32_t i = 0; i < vlen; i++) {
        uint64_t addr;
        memset(&names[i], 0, sizeof(names[i]));
        if (msg_name(c, &msgs[i].msg_hdr, &addr, &names[i].len) < 0)
            return -1;
        if (names[i].len == 0)
            continue;
        local[n] = (struct iovec){&names[i].sa, names[i].len};
        remote[n++] = (struct iovec){(void *)(uintptr_t)addr, names[i].len};
    }
    return vg_tracee_readv(x->t, local, remote, n) < 0 ? unreadable(c) : 0;
}

/* sendmmsg: every message's destination, the mmsghdr array read once. */
static int from_mmsghdr(struct net_dec *x)
{
    struct vg_call *c = x->c;
    uint32_t vlen = (uint32_t)c->a[2];
    if (vlen > VG_UIO_MAXIOV)
        vlen = VG_UIO_MAXIOV;
    if (vlen == 0)
        return 0;  /* nothing is sent */
    struct mmsghdr *msgs = vg_arena_alloc(&c->arena, vlen * sizeof(*msgs));
    if (vg_tracee_read(x->t, c->a[1], msgs, vlen * sizeof(*msgs)) < 0)
        return unreadable(c);
    struct vg_sockaddr_copy *names = vg_arena_alloc(&c->arena, vlen * sizeof(*names));
    if (read_names(x, msgs, vlen, names) < 0)
        return -1;
    const struct vg_sockaddr_copy **given = vg_arena_alloc(&c->arena, vlen * sizeof(*given));
    c->dest_sa = vg_arena_alloc(&c->arena, vlen * sizeof(*c->dest_sa));
    c->dests = vg_arena_alloc(&c->arena, vlen * sizeof(*c->dests));
    c->msg_dest = vg_arena_alloc(&c->arena, vlen * sizeof(*c->msg_dest));
    c->nmsgs = vlen;
    for (uint32_t i = 0; i < vlen; i++) {
        c->msg_dest[i] = VG_NO_DEST;
        if (names[i].len && add_dest(x, &names[i], given) < 0)
            return -1;
        if (names[i].len)
            c->msg_dest[i] = find_dest(c, given, &names[i]);
    }
    if (c->ndests) {
        set_address(c, &c->dest_sa[0], &c->dests[0]);
        c->args.dests = c->dests;
        c->args.ndests = c->ndests;
    }
    for (uint32_t i = 0; i < vlen; i++)
        if (check_control(x, &msgs[i].msg_hdr) < 0)
            return -1;
    return 0;
}

int vg_dec_net(struct vg_tracee *t, struct vg_call *c)
{
    const struct vg_argpos *p = &c->ent->pos;
    struct net_dec x = {.t = t, .c = c};
    struct sock_view *sock = &x.sock;
    if (examine(t, (int)c->a[0], true, sock) < 0)
        return vg_undecidable(c, "undecidable: the socket cannot be examined", errno);
    c->proto = c->args.proto = proto_name(sock);
    c->sock_ino = sock->ino;
    c->sock_type = sock->type;
    /* TCP fast open: a send with MSG_FASTOPEN on a stream socket connects
     * to its address (and sends in the SYN): it is a connect. */
    if (p->msgflags && (vg_arg(c, p->msgflags) & MSG_FASTOPEN) && sock->type == SOCK_STREAM &&
        sock->domain != AF_UNIX) {
        c->cls = c->check_cls2 = VG_CLASS_CONNECT;
        c->deny_errno = ECONNREFUSED;
    }
    switch (p->sa_from) {
    case VG_SA_ARGS:
        return from_args(&x);
    case VG_SA_MSGHDR:
        return from_msghdr(&x);
    case VG_SA_MMSGHDR:
        return from_mmsghdr(&x);
    default:
        return 0;
    }
}

/* listen: on an unbound inet socket the kernel binds it to a port of its
 * choosing on the address getsockname shows (the family's wildcard, or
 * the address bound with IP_BIND_ADDRESS_NO_PORT): decided as a bind
 * there, port 0.  A socket with a port was bound by a decided bind; a
 * unix socket must be bound already; neither has anything to decide. */
int vg_dec_listen(struct vg_tracee *t, struct vg_call *c)
{
    struct net_dec x = {.t = t, .c = c};
    const struct sock_view *sock = &x.sock;
    if (examine(t, (int)c->a[0], true, &x.sock) < 0)
        return vg_undecidable(c, "undecidable: the socket cannot be examined", errno);
    c->proto = c->args.proto = proto_name(sock);
    c->sock_ino = sock->ino;
    c->sock_type = sock->type;
    const struct sockaddr_in *in = (const struct sockaddr_in *)&sock->local;
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&sock->local;
    bool v4 = sock->domain == AF_INET && sock->local.ss_family == AF_INET;
    bool v6 = sock->domain == AF_INET6 && sock->local.ss_family == AF_INET6;
    if ((v4 && in->sin_port != 0) || (v6 && in6->sin6_port != 0) || (!v4 && !v6))
        return 0;
    struct vg_sockaddr_copy s = {.sa = sock->local, .len = sock->local_len};
    struct vg_dest d;
    if (describe(&x, &s, &d, &c->args.path) < 0)
        return -1;
    set_address(c, &s, &d);
    return 0;
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
