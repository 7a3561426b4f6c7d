/* serve.h: `vigil serve`, a daemon that runs many users' candidates, each
 * under its own `vigil run`, with quotas, a fair queue, a warm pool and a
 * service log (docs/SERVE.md).  cli/cmd_serve.c fills the options. */
#ifndef VG_SERVE_H
#define VG_SERVE_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "serve/quota.h"
#include "util/util.h"

/* At most this many --listen addresses (and sockets from systemd). */
#define VG_SERVE_MAX_LISTEN 8

struct vg_serve_opts {
    const char **listen;        /* "unix:PATH", "tcp:HOST:PORT" */
    unsigned nlisten;
    const char *state;          /* --state DIR */
    const char *config;         /* --config FILE, or NULL */
    unsigned workers;           /* runs at once; 0: the number of CPUs */
    unsigned pool;              /* prepared sandboxes kept ready */
    const char *pool_policy;    /* what they are prepared with */
    const char *uid_range;      /* "FIRST-LAST" */
    uint64_t max_body;          /* bytes of one request */
    const char *quota[VG_Q_COUNT]; /* --quota-*: the defaults' texts */
    const char *vigil;          /* this binary, for the runs */
};

/* Runs the daemon until SIGTERM or SIGINT: 0 after a clean stop, or -1
 * with err when it could not start. */
int vg_serve(const struct vg_serve_opts *o, struct vg_err *err);
#endif
