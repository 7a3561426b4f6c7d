/* http.c: libmicrohttpd glue (http.h).  A request is read whole (up to
 * --max-body), its caller identified, then routed (serve/routes.c) to a
 * handler of serve/api*.c, under the daemon's lock where the row says so.
 * A GET that waits for a run is suspended, not parked on a thread: the
 * main loop resumes it when the run ends or its time is up. */
#include <dlfcn.h>
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve/api.h"
#include "serve/http.h"

#define HTTP_BAD 400
#define HTTP_UNAUTHORIZED 401
#define HTTP_NOT_FOUND 404
#define HTTP_METHOD 405
#define HTTP_TOO_BIG 413
#define HTTP_TOO_MANY 429
#define HEADER_MEMORY (64 * 1024)
#define BEARER "Bearer "

/* libmicrohttpd is opened only by `vigil serve` (dlopen): linked, it and
 * the nine libraries of its TLS would be mapped into every `vigil run`,
 * whose start-up is what a pool is measured against.  The table is filled
 * once (pthread_once) and only read after. */
#define MHD_LIBRARY "libmicrohttpd.so.12"
static struct {
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
    __typeof__(MHD_quiesce_daemon) *quiesce_daemon;
    __typeof__(MHD_resume_connection) *resume_connection;
    __typeof__(MHD_suspend_connection) *suspend_connection;
    __typeof__(MHD_get_connection_info) *get_connection_info;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
    __typeof__(MHD_create_response_from_fd64) *create_response_from_fd64;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_destroy_response) *destroy_response;
} mhd;
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static const char *mhd_missing;

static void mhd_load(void)
{
    void *h = dlopen(MHD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        mhd_missing = MHD_LIBRARY;
        return;
    }
#define SYM(name, field)                                  \
    if (!(*(void **)&mhd.field = dlsym(h, #name)) && !mhd_missing) \
        mhd_missing = #name;
    SYM(MHD_start_daemon, start_daemon)
    SYM(MHD_stop_daemon, stop_daemon)
    SYM(MHD_quiesce_daemon, quiesce_daemon)
    SYM(MHD_resume_connection, resume_connection)
    SYM(MHD_suspend_connection, suspend_connection)
    SYM(MHD_get_connection_info, get_connection_info)
    SYM(MHD_lookup_connection_value, lookup_connection_value)
    SYM(MHD_create_response_from_fd64, create_response_from_fd64)
    SYM(MHD_create_response_from_buffer, create_response_from_buffer)
    SYM(MHD_add_response_header, add_response_header)
    SYM(MHD_queue_response, queue_response)
    SYM(MHD_destroy_response, destroy_response)
#undef SYM
}

struct vg_http {
    struct vg_serve *d;
    bool tcp;
    struct MHD_Daemon *mhd;
    pthread_mutex_t count_lock;   /* open connections per uid (unix) */
    struct peer_count { uid_t uid; unsigned n; } *counts;
    size_t ncounts;
};

/* One request's state across MHD's calls. */
struct conn {
    struct vg_buf body;
    bool too_big;
    bool resumed;
    struct vg_swaiter *w;
    struct vg_srun *wrun;
};

/* The peer's uid on a unix socket. */
static bool peer_uid(struct MHD_Connection *c, uid_t *uid)
{
    const union MHD_ConnectionInfo *i = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (!i || getsockopt(i->connect_fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
        return false;
    *uid = cr.uid;
    return true;
}

static void count_peer(struct vg_http *h, uid_t uid, int delta, unsigned *now)
{
    pthread_mutex_lock(&h->count_lock);
    size_t i = 0;
    while (i < h->ncounts && h->counts[i].uid != uid)
        i++;
    if (i == h->ncounts) {
        h->counts = vg_xrealloc(h->counts, (h->ncounts + 1) * sizeof *h->counts);
        h->counts[h->ncounts++] = (struct peer_count){uid, 0};
    }
    h->counts[i].n = (unsigned)((int)h->counts[i].n + delta);
    *now = h->counts[i].n;
    pthread_mutex_unlock(&h->count_lock);
}

/* MHD_OPTION_NOTIFY_CONNECTION: a user past its share of connections is
 * cut off at once (shutdown: MHD sees the end and closes it). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct vg_http *h = cls;
    uid_t uid;
    unsigned n;
    if (h->tcp)
        return;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        if (!peer_uid(c, &uid))
            return;
        uid_t *keep = vg_xmalloc(sizeof *keep);
        *keep = uid;
        *socket_context = keep;
        count_peer(h, uid, 1, &n);
        const union MHD_ConnectionInfo *i =
            mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (n > VG_HTTP_MAX_CONN_PER_USER && i)
            shutdown(i->connect_fd, SHUT_RDWR);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        uid_t *keep = *socket_context;
        count_peer(h, *keep, -1, &n);
        free(keep);
        *socket_context = NULL;
    }
}

static enum MHD_Result send_answer(struct MHD_Connection *c, struct vg_api_resp *a)
{
    struct MHD_Response *r;
    if (a->fd >= 0) {
        r = mhd.create_response_from_fd64(a->fd_size, a->fd); /* MHD closes it */
    } else {
        if (!a->body)
            vg_api_error(a, 500, "no answer");
        r = mhd.create_response_from_buffer(a->len, a->body, MHD_RESPMEM_MUST_FREE);
    }
    if (!r) {
        if (a->fd >= 0)
            close(a->fd);
        else
            free(a->body);
        return MHD_NO;
    }
    mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            a->type ? a->type : "application/json");
    if (a->retry_after) {
        char s[24];
        snprintf(s, sizeof s, "%llu", (unsigned long long)a->retry_after);
        mhd.add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, s);
    }
    if (a->status == HTTP_UNAUTHORIZED)
        mhd.add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    enum MHD_Result ret = mhd.queue_response(c, (unsigned)a->status, r);
    mhd.destroy_response(r);
    return ret;
}

static enum MHD_Result error_answer(struct MHD_Connection *c, int status, const char *msg)
{
    struct vg_api_resp a = {.fd = -1};
    vg_api_error(&a, status, "%s", msg);
    return send_answer(c, &a);
}

/* Who asks: 0, or -1 with the answer already sent. */
static int identify(struct vg_http *h, struct MHD_Connection *c, struct vg_api_req *q)
{
    if (!h->tcp) {
        if (peer_uid(c, &q->uid))
            return 0;
        error_answer(c, HTTP_UNAUTHORIZED, "cannot tell who you are (SO_PEERCRED)");
        return -1;
    }
    const char *auth = mhd.lookup_connection_value(c, MHD_HEADER_KIND,
                                                   MHD_HTTP_HEADER_AUTHORIZATION);
    const struct vg_serve_user *u =
        auth && !strncmp(auth, BEARER, strlen(BEARER))
            ? vg_serve_conf_by_token(&h->d->conf, auth + strlen(BEARER))
            : NULL;
    if (!u) {
        error_answer(c, HTTP_UNAUTHORIZED,
                     auth ? "unknown token" : "no 'Authorization: Bearer TOKEN'");
        return -1;
    }
    q->uid = u->uid;
    q->user = u->name;
    return 0;
}

/* Suspends c until a->wait_on ends (or its deadline): under the lock. */
static void park(struct conn *k, struct MHD_Connection *c, struct vg_api_resp *a)
{
    struct vg_swaiter *w = vg_xcalloc(1, sizeof *w);
    w->conn = c;
    w->deadline_ms = a->wait_deadline_ms;
    w->next = a->wait_on->waiters;
    a->wait_on->waiters = w;
    k->w = w;
    k->wrun = a->wait_on;
    mhd.suspend_connection(c);
}

static enum MHD_Result dispatch(struct vg_http *h, struct MHD_Connection *c, struct conn *k,
                                const char *url, const char *method)
{
    struct vg_api_req q = {.method = method, .resumed = k->resumed};
    if (identify(h, c, &q) < 0)
        return MHD_YES;
    if (k->too_big)
        return error_answer(c, HTTP_TOO_BIG, "the request is larger than --max-body");
    char *id = NULL, *rest = NULL;
    bool known;
    const struct vg_route *rt = vg_route_find(method, url, &id, &rest, &known);
    if (!rt)
        return error_answer(c, known ? HTTP_METHOD : HTTP_NOT_FOUND,
                            known ? "method not allowed here" : "no such path (the API is /v1/...)");
    q.id = id;
    q.rest = rest;
    q.wait = mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "wait");
    q.body = k->body.data ? k->body.data : "";
    q.body_len = k->body.len;
    struct vg_api_resp a = {.fd = -1};
    if (rt->locked)
        pthread_mutex_lock(&h->d->lock);
    rt->fn(h->d, &q, &a);
    bool waits = a.wait_on != NULL;
    if (waits)
        park(k, c, &a);
    if (rt->locked)
        pthread_mutex_unlock(&h->d->lock);
    free(id);
    free(rest);
    return waits ? MHD_YES : send_answer(c, &a);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **ctx)
{
    (void)version;
    struct vg_http *h = cls;
    struct conn *k = *ctx;
    if (!k) {
        *ctx = vg_xcalloc(1, sizeof(struct conn));
        /* a body that says it is too big is refused before it is read */
        const char *cl = mhd.lookup_connection_value(c, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
        uint64_t n;
        if (cl && vg_parse_u64(cl, &n) && n > h->d->o->max_body)
            return error_answer(c, HTTP_TOO_BIG, "the request is larger than --max-body");
        return MHD_YES;
    }
    if (*upload_size) {
        if (k->body.len + *upload_size > h->d->o->max_body)
            k->too_big = true; /* read on and drop it, then say so */
        else
            vg_buf_put(&k->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (k->w) {
        k->resumed = true;
        k->w = NULL; /* answered now; the record goes at completion */
    }
    return dispatch(h, c, k, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **ctx,
                         enum MHD_RequestTerminationCode why)
{
    (void)c, (void)why;
    struct vg_http *h = cls;
    struct conn *k = *ctx;
    if (!k)
        return;
    if (k->wrun) {
        pthread_mutex_lock(&h->d->lock);
        for (struct vg_swaiter **p = &k->wrun->waiters; *p; p = &(*p)->next)
            if ((*p)->conn == c) {
                struct vg_swaiter *w = *p;
                *p = w->next;
                free(w);
                break;
            }
        pthread_mutex_unlock(&h->d->lock);
    }
    vg_buf_free(&k->body);
    free(k);
    *ctx = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls, (void)fmt, (void)ap; /* MHD's own chatter (a client gone) is not ours to show */
}

struct vg_http *vg_http_start(struct vg_serve *d, int fd, bool tcp, struct vg_err *err)
{
    pthread_once(&mhd_once, mhd_load);
    if (mhd_missing)
        return vg_errf(err, "cannot load %s (%s): install Debian's libmicrohttpd12",
                       MHD_LIBRARY, mhd_missing), NULL;
    struct vg_http *h = vg_xcalloc(1, sizeof *h);
    h->d = d;
    h->tcp = tcp;
    pthread_mutex_init(&h->count_lock, NULL);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    h->mhd = mhd.start_daemon(
        flags, 0, NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)VG_HTTP_THREADS, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)VG_HTTP_MAX_CONN, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)VG_HTTP_IDLE_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HEADER_MEMORY,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION,
        on_connection, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    if (!h->mhd) {
        vg_errf(err, "cannot serve HTTP on fd %d (libmicrohttpd refused it)", fd);
        pthread_mutex_destroy(&h->count_lock);
        free(h);
        return NULL;
    }
    return h;
}

void vg_http_quiesce(struct vg_http *h)
{
    int fd = mhd.quiesce_daemon(h->mhd);
    if (fd >= 0)
        close(fd);
}

void vg_http_stop(struct vg_http *h)
{
    if (!h)
        return;
    mhd.stop_daemon(h->mhd);
    pthread_mutex_destroy(&h->count_lock);
    free(h->counts);
    free(h);
}

void vg_http_resume(void *conn)
{
    mhd.resume_connection(conn);
}
