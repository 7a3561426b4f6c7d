/* listen.h: the daemon's listening sockets: made from --listen addresses,
 * or handed over by systemd (socket activation: LISTEN_PID, LISTEN_FDS). */
#ifndef VG_SERVE_LISTEN_H
#define VG_SERVE_LISTEN_H
#include <stdbool.h>

#include "util/util.h"

struct vg_listener {
    int fd;
    bool tcp;
    char *unix_path;   /* a unix socket vigil made (removed at exit), or NULL */
    char *name;        /* as said: "unix:PATH", "tcp:HOST:PORT", "systemd fd 3" */
};

/* "unix:PATH" or "tcp:HOST:PORT" -> a listening socket.  -1 with err. */
int vg_listen_open(const char *addr, struct vg_listener *l, struct vg_err *err);
/* The sockets systemd passed (0 when none), at most max. */
int vg_listen_systemd(struct vg_listener *l, unsigned max, struct vg_err *err);
void vg_listen_close(struct vg_listener *l);
#endif
