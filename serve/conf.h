/* conf.h: `vigil serve`'s config file: who may submit, by uid (the unix
 * socket's peer) or by bearer token (TCP), and each one's quotas.  The
 * format is in docs/SERVE.md ("The config file"). */
#ifndef VG_SERVE_CONF_H
#define VG_SERVE_CONF_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "serve/quota.h"
#include "util/util.h"

struct vg_serve_user {
    char *name;
    uid_t uid;
    struct vg_quota quota;     /* the defaults, with this user's own over them */
    bool has_token;
    char token_sha256[65];     /* hex of sha256(token): the file never holds a token */
};

struct vg_serve_conf {
    struct vg_quota defaults;  /* the flags', then the file's `quota` line over them */
    struct vg_serve_user *users;
    size_t nusers;
};

/* Reads path (NULL: none) over c->defaults, which the caller has set.
 * -1 with err "FILE:LINE: what is wrong". */
int vg_serve_conf_load(struct vg_serve_conf *c, const char *path, struct vg_err *err);
void vg_serve_conf_free(struct vg_serve_conf *c);
/* The user with this uid, or NULL (a local user without a line of its own:
 * the defaults apply). */
const struct vg_serve_user *vg_serve_conf_by_uid(const struct vg_serve_conf *c, uid_t uid);
/* The user whose token this is, or NULL.  Compares every user's hash in
 * constant time, so the answer's timing says nothing of near misses. */
const struct vg_serve_user *vg_serve_conf_by_token(const struct vg_serve_conf *c,
                                                   const char *token);
#endif
