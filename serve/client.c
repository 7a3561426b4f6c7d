/* client.c: a small HTTP/1.1 client for vigil serve's API (client.h).
 * It speaks only what the daemon answers: a status line, headers, and a
 * body of Content-Length bytes, chunked, or up to the close. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "serve/client.h"

#define READ_CHUNK 65536

int vg_client_parse(struct vg_client *c, const char *server, struct vg_err *err)
{
    memset(c, 0, sizeof *c);
    if (!strncmp(server, "unix:", 5) && server[5]) {
        c->path = vg_xstrdup(server + 5);
        return 0;
    }
    const char *hp = !strncmp(server, "http://", 7) ? server + 7
                     : !strncmp(server, "tcp:", 4)  ? server + 4
                                                    : NULL;
    const char *colon = hp ? strrchr(hp, ':') : NULL;
    if (!hp || !colon || colon == hp || !colon[1])
        return vg_errf(err, "--server %s: expected unix:PATH or http://HOST:PORT", server), -1;
    c->tcp = true;
    c->host = vg_xstrndup(hp, (size_t)(colon - hp));
    c->port = vg_xstrdup(colon + 1);
    size_t n = strlen(c->port);
    if (n && c->port[n - 1] == '/')
        c->port[n - 1] = '\0';
    return 0;
}

void vg_client_free(struct vg_client *c)
{
    free(c->path);
    free(c->host);
    free(c->port);
    memset(c, 0, sizeof *c);
}

static int dial(const struct vg_client *c, struct vg_err *err)
{
    if (!c->tcp) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(c->path) >= sizeof sa.sun_path)
            return vg_errf(err, "unix:%s: path too long", c->path), -1;
        memcpy(sa.sun_path, c->path, strlen(c->path));
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            vg_errf(err, "unix:%s: %s (is vigil serve running?)", c->path, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        return fd;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    int g = getaddrinfo(c->host, c->port, &hints, &ai);
    if (g)
        return vg_errf(err, "%s:%s: %s", c->host, c->port, gai_strerror(g)), -1;
    int fd = -1;
    for (struct addrinfo *p = ai; p && fd < 0; p = p->ai_next) {
        fd = socket(p->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, p->ai_addr, p->ai_addrlen) < 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        vg_errf(err, "%s:%s: %s (is vigil serve running?)", c->host, c->port, strerror(errno));
    return fd;
}

/* The value of header name in the head (NUL-terminated lines), or NULL. */
static const char *header(const char *head, const char *name)
{
    size_t n = strlen(name);
    for (const char *l = strstr(head, "\r\n"); l && l[2]; l = strstr(l + 2, "\r\n")) {
        const char *s = l + 2;
        if (!strncasecmp(s, name, n) && s[n] == ':') {
            s += n + 1;
            while (*s == ' ')
                s++;
            return s;
        }
    }
    return NULL;
}

/* Decodes a chunked body in place; false on junk. */
static bool unchunk(struct vg_buf *b)
{
    size_t r = 0, w = 0;
    for (;;) {
        char *end;
        unsigned long long n = strtoull(b->data + r, &end, 16);
        char *crlf = strstr(end, "\r\n");
        if (end == b->data + r || !crlf)
            return false;
        r = (size_t)(crlf - b->data) + 2;
        if (n == 0)
            break;
        if (n > b->len - r)
            return false;
        memmove(b->data + w, b->data + r, n);
        w += n;
        r += n + 2;
        if (r > b->len)
            return false;
    }
    b->len = w;
    b->data[w] = '\0';
    return true;
}

static int parse_answer(struct vg_buf *raw, struct vg_answer *a, struct vg_err *err)
{
    char *split = raw->data ? strstr(raw->data, "\r\n\r\n") : NULL;
    int status;
    if (!split || sscanf(raw->data, "HTTP/1.%*d %d", &status) != 1)
        return vg_errf(err, "the server's answer is not HTTP"), -1;
    *split = '\0';
    const char *te = header(raw->data, "Transfer-Encoding");
    const char *ra = header(raw->data, "Retry-After");
    a->status = status;
    a->retry_after = ra ? strtoull(ra, NULL, 10) : 0;
    size_t off = (size_t)(split - raw->data) + 4;
    vg_buf_put(&a->body, raw->data + off, raw->len - off);
    if (te && !strncasecmp(te, "chunked", 7) && !unchunk(&a->body))
        return vg_errf(err, "the server's chunked answer is broken"), -1;
    const char *cl = header(raw->data, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) != a->body.len)
        return vg_errf(err, "the server's answer was cut off"), -1;
    return 0;
}

int vg_client_call(const struct vg_client *c, const char *method, const char *path,
                   const char *body, size_t len, struct vg_answer *a, struct vg_err *err)
{
    memset(a, 0, sizeof *a);
    int fd = dial(c, err);
    if (fd < 0)
        return -1;
    struct vg_buf req = {0}, raw = {0};
    vg_buf_printf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, path,
                  c->tcp ? c->host : "localhost");
    if (c->token)
        vg_buf_printf(&req, "Authorization: Bearer %s\r\n", c->token);
    if (body)
        vg_buf_printf(&req, "Content-Type: application/json\r\nContent-Length: %zu\r\n", len);
    vg_buf_puts(&req, "\r\n");
    int rc = vg_write_all(fd, req.data, req.len) < 0 || (body && vg_write_all(fd, body, len) < 0)
                 ? -1
                 : 0;
    if (rc < 0)
        vg_errf(err, "sending the request: %s", strerror(errno));
    char chunk[READ_CHUNK];
    for (ssize_t n; rc == 0 && (n = read(fd, chunk, sizeof chunk)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || raw.len + (size_t)n > VG_CLIENT_MAX_ANSWER)
            rc = (vg_errf(err, "reading the answer: %s", n < 0 ? strerror(errno) : "too big"), -1);
        else
            vg_buf_put(&raw, chunk, (size_t)n);
    }
    close(fd);
    if (rc == 0)
        rc = parse_answer(&raw, a, err);
    vg_buf_free(&req);
    vg_buf_free(&raw);
    if (rc < 0)
        vg_answer_free(a);
    return rc;
}

void vg_answer_free(struct vg_answer *a)
{
    vg_buf_free(&a->body);
}
