/* api.h: the API's handlers (docs/SERVE.md "The API, version 1"), apart
 * from HTTP: a request comes in as (who, method, path, query, body) and
 * leaves as (status, JSON body or a file, headers).  serve/http.c is the
 * only caller; serve/routes.c says which handler takes which path. */
#ifndef VG_SERVE_API_H
#define VG_SERVE_API_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "serve/state.h"

#define VG_API_VERSION 1
/* GET /v1/runs/ID?wait=S waits at most this long. */
#define VG_API_MAX_WAIT_S 600

struct vg_api_req {
    uid_t uid;               /* who asks: the socket peer's uid or the token's user's */
    const char *user;        /* the token user's name, or NULL */
    const char *method;
    const char *id;          /* {id} of the path, or NULL */
    const char *rest;        /* {path} of .../files/{path}, or NULL */
    const char *wait;        /* ?wait=, or NULL */
    const char *body;
    size_t body_len;
    bool resumed;            /* a waiting request woken: answer now */
};

struct vg_api_resp {
    int status;
    char *body;              /* malloc'd JSON, or NULL with fd */
    size_t len;
    const char *type;        /* Content-Type */
    int fd;                  /* a file to send (its size: fd_size), or -1 */
    uint64_t fd_size;
    uint64_t retry_after;    /* 429: the Retry-After header */
    struct vg_srun *wait_on; /* set: suspend until it ends or wait_deadline_ms */
    int64_t wait_deadline_ms;
};

typedef void vg_api_fn(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a);

/* One row per route; `{id}` is one path component, `{path}` the rest. */
struct vg_route {
    const char *method;
    const char *pattern;
    vg_api_fn *fn;
    bool locked;             /* the caller takes the daemon's lock around fn */
};
extern const struct vg_route vg_routes[];
extern const size_t vg_nroutes;
/* The row for method and path (id/rest filled in), or NULL; *path_known
 * says whether another method would have matched (405 rather than 404). */
const struct vg_route *vg_route_find(const char *method, const char *path, char **id,
                                     char **rest, bool *path_known);

/* The handlers (serve/api.c, serve/api_runs.c). */
vg_api_fn vg_api_version, vg_api_submit, vg_api_list, vg_api_get, vg_api_result, vg_api_log,
    vg_api_stdout, vg_api_stderr, vg_api_file, vg_api_cancel, vg_api_delete, vg_api_quota;
/* An error answer: {"error": msg}. */
void vg_api_error(struct vg_api_resp *a, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif
