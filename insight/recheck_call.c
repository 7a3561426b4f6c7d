/* recheck_call.c: a syscall record made the call it was (recheck_int.h).
 * The record holds what the decoders read from the candidate (the
 * resolved paths, the address, the image), so the call is made again from
 * it field by field, as tracer/decode*.c fill struct vg_call; nothing is
 * read from anywhere else. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/un.h>

#include "core/syscalls.h"
#include "insight/recheck_int.h"

/* The reasons the decoders give for a call they could not judge
 * (tracer/decode_impl.h, decode_net.c, core/cmsg.c): refused in every
 * mode and by every policy, so they are the record's, unchanged. */
static const char *const undecidable_prefix[] = {"unreadable:", "undecidable:", "refused:"};

static bool undecidable(const struct vg_syscall_ev *e)
{
    if (e->rule.file || !e->rule.text)
        return false;
    for (size_t i = 0; i < VG_ARRAY_LEN(undecidable_prefix); i++)
        if (!strncmp(e->rule.text, undecidable_prefix[i], strlen(undecidable_prefix[i])))
            return true;
    return false;
}

static bool inet_of(int af, const char *addr, int32_t port, struct sockaddr_storage *ss,
                    socklen_t *len)
{
    uint16_t p = htons((uint16_t)(port > 0 ? port : 0));
    if (af == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        in->sin_family = AF_INET;
        in->sin_port = p;
        *len = sizeof *in;
        return addr && inet_pton(AF_INET, addr, &in->sin_addr) == 1;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = p;
    *len = sizeof *in6;
    return addr && inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1;
}

/* A unix address as decode_net.c's describe_unix leaves it: the
 * canonical path when it fits in sun_path (else the path as given), an
 * abstract name ("@name") with its leading NUL, or none (autobind). */
static bool unix_of(const char *addr, const char *raw, struct sockaddr_storage *ss,
                    socklen_t *len)
{
    struct sockaddr_un *un = (struct sockaddr_un *)ss;
    size_t off = offsetof(struct sockaddr_un, sun_path);
    un->sun_family = AF_UNIX;
    if (!addr || !addr[0]) {
        *len = sizeof un->sun_family;
        return true;
    }
    if (addr[0] == '@') {
        size_t n = strnlen(addr + 1, sizeof un->sun_path - 1);
        memcpy(un->sun_path + 1, addr + 1, n);
        *len = (socklen_t)(off + 1 + n);
        return true;
    }
    const char *p = strlen(addr) < sizeof un->sun_path ? addr : raw;
    if (!p || strlen(p) >= sizeof un->sun_path)
        return false;
    memcpy(un->sun_path, p, strlen(p) + 1);
    *len = (socklen_t)(off + strlen(p) + 1);
    return true;
}

bool vg_recheck_sockaddr(const char *family, const char *addr, int32_t port, const char *raw,
                         struct sockaddr_storage *ss, socklen_t *len)
{
    memset(ss, 0, sizeof *ss);
    *len = 0;
    if (!family)
        return false;
    if (!strcmp(family, "inet"))
        return inet_of(AF_INET, addr, port, ss, len);
    if (!strcmp(family, "inet6"))
        return inet_of(AF_INET6, addr, port, ss, len);
    if (!strcmp(family, "unix"))
        return unix_of(addr, raw, ss, len);
    if (strcmp(family, "unspec"))
        return false;
    if (addr) /* a send or bind reads AF_UNSPEC as AF_INET: judged as one */
        return inet_of(AF_INET, addr, port, ss, len);
    /* a connect with AF_UNSPEC dissolves an association: no rule is about it */
    ss->ss_family = AF_UNSPEC;
    *len = sizeof(struct sockaddr_in);
    return true;
}

/* A pathname unix socket is a file: the policy and the unjudgeable check
 * see its canonical path (decode_net.c sets check_path to it). */
static bool unix_path(const char *family, const char *addr)
{
    return family && !strcmp(family, "unix") && addr && addr[0] && addr[0] != '@';
}

/* sendmmsg: every destination, each judged again (the decider writes each
 * one's decision, so they are copies). */
static void dests_of(const struct vg_syscall_ev *e, struct vg_call *c)
{
    const struct vg_args *a = &e->args;
    c->dests = vg_arena_alloc(&c->arena, a->ndests * sizeof *c->dests);
    c->dest_sa = vg_arena_alloc(&c->arena, a->ndests * sizeof *c->dest_sa);
    for (uint32_t i = 0; i < a->ndests; i++) {
        const struct vg_dest *d = &a->dests[i];
        c->dests[i] = *d;
        if (!vg_recheck_sockaddr(d->family, d->addr, d->port, NULL, &c->dest_sa[i].sa,
                                 &c->dest_sa[i].len))
            c->dest_sa[i].len = 0;
    }
    c->ndests = a->ndests;
    c->args.dests = c->dests;
}

static void net_of(const struct vg_syscall_ev *e, struct vg_call *c)
{
    const struct vg_args *a = &e->args;
    c->proto = a->proto;
    if (a->ndests)
        dests_of(e, c);
    c->has_sa = vg_recheck_sockaddr(a->family, a->addr, a->port, a->path, &c->sa, &c->salen);
    if (unix_path(a->family, a->addr))
        c->check_path = a->addr;
}

void vg_recheck_call_of(const struct vg_syscall_ev *e, struct vg_call *c)
{
    memset(c, 0, sizeof *c);
    c->nr = e->nr;
    c->ent = vg_sys_lookup(e->nr);
    c->name = c->ent ? c->ent->name : e->name;
    c->cls = c->check_cls2 = e->cls;
    c->args = e->args;
    c->deny_errno = c->ent ? c->ent->deny_errno : ENOSYS;
    /* a send with MSG_FASTOPEN connects, and is refused as a connect */
    if (c->ent && c->ent->cls == VG_CLASS_SEND && e->cls == VG_CLASS_CONNECT)
        c->deny_errno = ECONNREFUSED;
    if (undecidable(e)) {
        c->undecidable = e->rule.text;
        c->deny_errno = e->err;
    }
    if (e->args.argv_unreadable && e->err)
        c->deny_errno = e->err; /* E2BIG or EFAULT, as the kernel said */
    c->missing = e->probe;
    if (c->ent && (c->ent->flags & VG_SF_NET)) {
        net_of(e, c);
        return;
    }
    c->check_path = e->args.resolved;
    c->check_path2 = e->args.resolved2;
}
