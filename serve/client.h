/* client.h: the client side of vigil serve's API (vigil submit): one
 * HTTP/1.1 request per connection, over a unix socket or TCP. */
#ifndef VG_SERVE_CLIENT_H
#define VG_SERVE_CLIENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* The largest answer a client takes (a log is capped at 64M by default). */
#define VG_CLIENT_MAX_ANSWER (1ull << 30)

struct vg_client {
    bool tcp;
    char *path;          /* unix */
    char *host, *port;   /* tcp */
    const char *token;   /* bearer token for tcp, or NULL */
};

struct vg_answer {
    int status;
    struct vg_buf body;
    uint64_t retry_after;
};

/* "unix:PATH", "http://HOST:PORT" or "tcp:HOST:PORT".  -1 with err. */
int vg_client_parse(struct vg_client *c, const char *server, struct vg_err *err);
void vg_client_free(struct vg_client *c);
/* One request; a->status is the HTTP status.  -1 with err when there is no
 * answer at all (cannot connect, the connection broke, junk). */
int vg_client_call(const struct vg_client *c, const char *method, const char *path,
                   const char *body, size_t len, struct vg_answer *a, struct vg_err *err);
void vg_answer_free(struct vg_answer *a);
#endif
