/* dns_server.c: the thread that answers the sandbox's resolver socket.
 * For each query, in this order: decide the name (the policy's host-name
 * rules, by the one decider: core/decide.h), ask upstream if it is allowed (or in a dry run), note the
 * addresses in the run's table, write the record, and only then answer:
 * an address the candidate holds is always one the log and the rules know.
 * A query that cannot be recorded (the log is dead) gets no answer. */
#include "net/dns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/decide.h"
#include "event/writer.h"
#include "net/dns_int.h"

struct vg_dns_server {
    struct vg_dns_config cfg;
    int stop_fd;        /* eventfd: vg_dns_stop says "done" */
    pthread_t thread;
    uint64_t queries;
};

/* What one query came to: the name's verdict (core/decide.h), then the
 * answer. */
struct outcome {
    struct vg_call_verdict v;
    struct vg_dns_answer ans;
    char addrs[VG_DNS_MAX_ANSWERS][INET6_ADDRSTRLEN];
    const char *addrv[VG_DNS_MAX_ANSWERS];
};

static void resolve(const struct vg_dns_server *s, const struct vg_dns_query *q, struct outcome *o)
{
    bool addr = q->qclass == VG_DNS_C_IN && (q->qtype == VG_DNS_T_A || q->qtype == VG_DNS_T_AAAA);
    if (!addr) {
        o->ans.rcode = VG_DNS_NOERROR; /* no address records of that type here */
        return;
    }
    if (!vg_dns_ask_upstream(s->cfg.upstream, q, &o->ans, s->stop_fd)) {
        o->ans.rcode = VG_DNS_SERVFAIL;
        o->ans.n = 0;
        return;
    }
    if (!vg_dns_table_add(s->cfg.table, q->name, o->ans.ip, o->ans.n)) {
        /* an address no rule could account for is not handed out */
        o->ans.rcode = VG_DNS_SERVFAIL;
        o->ans.n = 0;
    }
}

static void decide(const struct vg_dns_server *s, const struct vg_dns_query *q,
                   enum vg_dns_parsed parsed, struct outcome *o)
{
    memset(o, 0, sizeof *o);
    struct vg_decide_ctx d = {.pol = s->cfg.pol, .dry_run = s->cfg.dry_run};
    vg_decide_name(&d, parsed == VG_DNSQ_OK ? q->name : NULL, &o->v);
    if (parsed != VG_DNSQ_OK) {
        o->ans.rcode = VG_DNS_FORMERR;
        return;
    }
    if (o->v.refuse) {
        /* NXDOMAIN, not REFUSED: glibc takes REFUSED as "ask the next
         * server", waits out its timeouts (5 s, twice) and then fails with
         * a temporary error a program may retry forever.  Upstream never
         * hears of the name; the record says it was a refusal. */
        o->ans.rcode = VG_DNS_NXDOMAIN;
        return;
    }
    resolve(s, q, o);
}

static int record(const struct vg_dns_server *s, const struct vg_dns_query *q, struct outcome *o)
{
    char tbuf[16];
    for (unsigned i = 0; i < o->ans.n; i++) {
        inet_ntop(o->ans.ip[i].v6 ? AF_INET6 : AF_INET, o->ans.ip[i].a, o->addrs[i],
                  sizeof o->addrs[i]);
        o->addrv[i] = o->addrs[i];
    }
    struct vg_record r = {.type = VG_REC_DNS};
    struct vg_dns_ev *e = &r.u.dns;
    e->ts_ns = vg_now_mono_ns() - s->cfg.start_mono_ns;
    e->name = q->name;
    e->qtype = vg_dns_type_name(q->qtype, tbuf, sizeof tbuf);
    e->proto = "udp";
    e->decision = o->v.decision;
    e->rule = *o->v.rule;
    e->rcode = vg_dns_rcode_name(o->ans.rcode);
    e->answers = o->addrv;
    e->nanswers = o->ans.n;
    return vg_log_write(s->cfg.log, &r);
}

static void serve_one(struct vg_dns_server *s)
{
    uint8_t msg[VG_DNS_UDP_MAX + 1], out[VG_DNS_UDP_MAX];
    struct sockaddr_storage from;
    socklen_t flen = sizeof from;
    ssize_t n = recvfrom(s->cfg.fd, msg, sizeof msg, 0, (struct sockaddr *)&from, &flen);
    if (n < 0)
        return;
    struct vg_dns_query q;
    enum vg_dns_parsed parsed = vg_dns_parse_query(msg, (size_t)n, &q);
    if (parsed == VG_DNSQ_DROP)
        return;
    s->queries++;
    struct outcome o;
    decide(s, &q, parsed, &o);
    if (record(s, &q, &o) < 0)
        return; /* not on record: not answered */
    size_t len = vg_dns_build_reply(out, sizeof out, &q, o.ans.rcode, o.ans.ip, o.ans.n,
                                    o.ans.ttl);
    if (len)
        (void)sendto(s->cfg.fd, out, len, MSG_DONTWAIT, (struct sockaddr *)&from, flen);
}

static void *server_main(void *arg)
{
    struct vg_dns_server *s = arg;
    /* The run's quota pays for its queries (a thread leaves at its end). */
    if (s->cfg.bill_self)
        (void)s->cfg.bill_self();
    for (;;) {
        struct pollfd p[2] = {{.fd = s->cfg.fd, .events = POLLIN}, {.fd = s->stop_fd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        if (p[0].revents & POLLIN)
            serve_one(s);
        else if (p[0].revents)
            break;
    }
    return NULL;
}

struct vg_dns_server *vg_dns_start(const struct vg_dns_config *cfg, struct vg_err *err)
{
    struct vg_dns_server *s = vg_xcalloc(1, sizeof *s);
    s->cfg = *cfg;
    vg_log_shared(cfg->log);
    s->stop_fd = eventfd(0, EFD_CLOEXEC);
    int e = s->stop_fd < 0 ? errno : pthread_create(&s->thread, NULL, server_main, s);
    if (e) {
        vg_errf(err, "resolver: cannot start its thread: %s", strerror(e));
        if (s->stop_fd >= 0)
            close(s->stop_fd);
        close(cfg->fd);
        free(s);
        return NULL;
    }
    return s;
}

uint64_t vg_dns_stop(struct vg_dns_server *s)
{
    if (!s)
        return 0;
    uint64_t one = 1;
    if (write(s->stop_fd, &one, sizeof one) != sizeof one)
        abort(); /* an eventfd write cannot fail here; a thread left running could */
    pthread_join(s->thread, NULL);
    uint64_t n = s->queries;
    close(s->stop_fd);
    close(s->cfg.fd);
    free(s);
    return n;
}
