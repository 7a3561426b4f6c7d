/* dns_upstream.c: the servers allowed names are resolved with, and asking
 * them.  vigil asks from its own network namespace (the host's), never
 * from the sandbox's: a plain UDP query per server, in order, from a
 * fresh connected socket (a random source port the kernel picks, and only
 * that server's datagrams reach it), a random id, and a reply taken only
 * if it is the reply to this very question (dns_wire.c). */
#include "net/dns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "net/dns_int.h"

static bool add_addr(struct vg_dns_upstream *u, const char *ip, uint16_t port)
{
    struct sockaddr_storage *ss = &u->addr[u->n];
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (u->n == VG_DNS_MAX_UPSTREAM)
        return false;
    if (inet_pton(AF_INET, ip, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        u->len[u->n++] = sizeof *in;
        return true;
    }
    if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        u->len[u->n++] = sizeof *in6;
        return true;
    }
    return false;
}

int vg_dns_upstream_parse(struct vg_dns_upstream *u, const char *text, struct vg_err *err)
{
    char ip[64];
    const char *port_at = NULL;
    uint64_t port = VG_DNS_PORT;
    memset(u, 0, sizeof *u);
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (close && (close[1] == 0 || close[1] == ':') && (size_t)(close - text) < sizeof ip) {
            snprintf(ip, sizeof ip, "%.*s", (int)(close - text - 1), text + 1);
            port_at = close[1] ? close + 2 : NULL;
        } else {
            ip[0] = 0;
        }
    } else {
        const char *colon = strchr(text, ':');
        bool v4 = colon && !strchr(colon + 1, ':');   /* more colons: a bare IPv6 address */
        snprintf(ip, sizeof ip, "%.*s", v4 ? (int)(colon - text) : (int)strlen(text), text);
        port_at = v4 ? colon + 1 : NULL;
    }
    if ((port_at && (!vg_parse_u64(port_at, &port) || port == 0 || port > 65535)) ||
        !add_addr(u, ip, (uint16_t)port)) {
        vg_errf(err, "--dns-upstream %s: expected IP or IP:PORT ([IPv6]:PORT)", text);
        return -1;
    }
    return 0;
}

int vg_dns_upstream_from_file(struct vg_dns_upstream *u, const char *path, struct vg_err *err)
{
    memset(u, 0, sizeof *u);
    FILE *f = fopen(path, "re");
    if (!f) {
        vg_errf(err, "%s: %s (vigil's resolver needs an upstream; pass --dns-upstream)", path,
                strerror(errno));
        return -1;
    }
    char line[512], ip[64];
    while (fgets(line, sizeof line, f))
        if (sscanf(line, " nameserver %63s", ip) == 1)
            (void)add_addr(u, ip, VG_DNS_PORT); /* a scoped fe80::1%eth0 is skipped */
    fclose(f);
    if (!u->n) {
        vg_errf(err, "%s names no nameserver vigil can use (pass --dns-upstream)", path);
        return -1;
    }
    return 0;
}

/* One server: true with a when it answered the question in time. */
static bool ask_one(const struct sockaddr_storage *ss, socklen_t len, const struct vg_dns_query *q,
                    struct vg_dns_answer *a, int timeout_ms, int stop_fd)
{
    uint16_t id;
    uint8_t msg[VG_DNS_UDP_MAX], reply[VG_DNS_UDP_MAX];
    if (getrandom(&id, sizeof id, 0) != sizeof id)
        return false;
    size_t n = vg_dns_build_query(msg, sizeof msg, q, id);
    int fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    bool ok = false;
    if (n && connect(fd, (const struct sockaddr *)ss, len) == 0 && send(fd, msg, n, 0) == (ssize_t)n) {
        uint64_t deadline = vg_now_mono_ns() + (uint64_t)timeout_ms * 1000000u;
        for (;;) {
            uint64_t now = vg_now_mono_ns();
            struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};
            if (now >= deadline || poll(p, 2, (int)((deadline - now) / 1000000u) + 1) <= 0 ||
                p[1].revents)
                break;
            ssize_t got = recv(fd, reply, sizeof reply, MSG_DONTWAIT);
            if (got < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (got < 0)
                break; /* ICMP unreachable: nobody there */
            if (vg_dns_parse_reply(reply, (size_t)got, id, q, a)) {
                ok = true;
                break;
            }
        }
    }
    close(fd);
    return ok;
}

bool vg_dns_ask_upstream(const struct vg_dns_upstream *u, const struct vg_dns_query *q,
                         struct vg_dns_answer *a, int stop_fd)
{
    for (unsigned i = 0; i < u->n; i++)
        if (ask_one(&u->addr[i], u->len[i], q, a, VG_DNS_UPSTREAM_TIMEOUT_MS, stop_fd))
            return true;
    return false;
}
