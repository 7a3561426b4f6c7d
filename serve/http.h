/* http.h: the API over HTTP, with GNU libmicrohttpd: one MHD daemon per
 * listening socket.  Who asks is the kernel's word on a unix socket
 * (SO_PEERCRED) and a configured token's on TCP; nothing is answered
 * before that is known. */
#ifndef VG_SERVE_HTTP_H
#define VG_SERVE_HTTP_H
#include <stdbool.h>

#include "serve/state.h"

/* Connections a user may hold open at once on a unix socket, and the
 * daemon in all: a user who opens thousands cannot shut the others out. */
#define VG_HTTP_MAX_CONN_PER_USER 64
#define VG_HTTP_MAX_CONN 4096
/* An idle connection (a slow client) is closed after this. */
#define VG_HTTP_IDLE_S 30
#define VG_HTTP_THREADS 4

struct vg_http;
/* Serves fd (listening; the daemon's from now on). tcp: token users only. */
struct vg_http *vg_http_start(struct vg_serve *d, int fd, bool tcp, struct vg_err *err);
/* Stops accepting; connections in progress finish. */
void vg_http_quiesce(struct vg_http *h);
void vg_http_stop(struct vg_http *h);
/* Wakes a connection suspended in a wait (thread-safe). */
void vg_http_resume(void *conn);
#endif
