/* opener.c: the supervisor's side of the opener (see opener.h). */
#include "tracer/notify/opener.h"
#include "tracer/notify/cmsg.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int send_req(int sock, enum vg_open_how_kind how, const char *path, uint32_t flags,
                    uint32_t mode)
{
    struct vg_open_req q;
    size_t plen = strlen(path);
    if (plen >= sizeof q.path)
        return -ENAMETOOLONG;
    q.how = how;
    q.flags = flags;
    q.mode = mode;
    memcpy(q.path, path, plen + 1);
    size_t len = offsetof(struct vg_open_req, path) + plen + 1;
    return send(sock, &q, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -EPIPE;
}

/* The reply, and the fd that comes with it (or -1). */
static int recv_rep(int sock, struct vg_open_rep *r, int *fd)
{
    bool got;
    *fd = -1;
    ssize_t n = vg_recv_cmsg(sock, r, sizeof *r, SCM_RIGHTS, fd, sizeof *fd, &got);
    if (n < (ssize_t)offsetof(struct vg_open_rep, real) + 1) {
        if (got)
            close(*fd);
        *fd = -1;
        return -EPIPE;
    }
    ((char *)r)[n - 1] = 0; /* the opener sends real with its NUL; make sure */
    return 0;
}

int vg_opener_open(int sock, enum vg_open_how_kind how, const char *path, uint32_t flags,
                   uint32_t mode, char *real, size_t n)
{
    struct vg_open_rep r;
    int fd, rc = send_req(sock, how, path, flags, mode);
    if (rc < 0 || (rc = recv_rep(sock, &r, &fd)) < 0)
        return rc;
    if (r.err) {
        if (fd >= 0)
            close(fd);
        return r.err > 0 ? -r.err : -EIO;
    }
    if (fd < 0)
        return -EPIPE; /* a success without a file is not one */
    if (real && n) {
        strncpy(real, r.real, n - 1);
        real[n - 1] = 0;
    }
    return fd;
}
