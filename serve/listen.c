/* listen.c: listening sockets (listen.h). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "serve/listen.h"

#define BACKLOG 1024
/* Every local user may connect: who they are is SO_PEERCRED's to say. */
#define SOCKET_MODE 0666
#define SD_LISTEN_FDS_START 3

/* A socket at path that nobody listens on is a dead daemon's: it may go.
 * Anything else there (a file, a live socket) is not vigil's to touch. */
static int clear_stale(const char *path, struct vg_err *err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : (vg_errf(err, "%s: %s", path, strerror(errno)), -1);
    if (!S_ISSOCK(st.st_mode))
        return vg_errf(err, "%s: exists and is not a socket", path), -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int live = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    int why = errno;
    if (fd >= 0)
        close(fd);
    if (live || why != ECONNREFUSED)
        return vg_errf(err, "%s: a daemon is listening there already", path), -1;
    return unlink(path) < 0 ? (vg_errf(err, "%s: %s", path, strerror(errno)), -1) : 0;
}

static int open_unix(const char *path, struct vg_listener *l, struct vg_err *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (!*path || strlen(path) >= sizeof sa.sun_path)
        return vg_errf(err, "unix:%s: a socket path is 1 to %zu bytes", path,
                       sizeof sa.sun_path - 1), -1;
    if (clear_stale(path, err) < 0)
        return -1;
    memcpy(sa.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        vg_errf(err, "unix:%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    l->unix_path = vg_xstrdup(path); /* made: ours to remove */
    if (chmod(path, SOCKET_MODE) < 0 || listen(fd, BACKLOG) < 0) {
        vg_errf(err, "unix:%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    l->fd = fd;
    return 0;
}

static int open_tcp(const char *hostport, struct vg_listener *l, struct vg_err *err)
{
    const char *colon = strrchr(hostport, ':');
    if (!colon || colon == hostport || !colon[1])
        return vg_errf(err, "tcp:%s: expected tcp:HOST:PORT", hostport), -1;
    char *host = vg_xstrndup(hostport, (size_t)(colon - hostport));
    if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [::1] */
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
                    *ai = NULL;
    int g = getaddrinfo(host, colon + 1, &hints, &ai);
    free(host);
    if (g)
        return vg_errf(err, "tcp:%s: %s", hostport, gai_strerror(g)), -1;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    int rc = fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
                     bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, BACKLOG) < 0
                 ? -1
                 : 0;
    if (rc < 0) {
        vg_errf(err, "tcp:%s: %s", hostport, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    freeaddrinfo(ai);
    l->fd = rc < 0 ? -1 : fd;
    l->tcp = true;
    return rc;
}

int vg_listen_open(const char *addr, struct vg_listener *l, struct vg_err *err)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    int rc;
    if (!strncmp(addr, "unix:", 5))
        rc = open_unix(addr + 5, l, err);
    else if (!strncmp(addr, "tcp:", 4))
        rc = open_tcp(addr + 4, l, err);
    else
        rc = (vg_errf(err, "--listen %s: expected unix:PATH or tcp:HOST:PORT", addr), -1);
    if (rc < 0) {
        vg_listen_close(l);
        return -1;
    }
    l->name = vg_xstrdup(addr);
    return 0;
}

int vg_listen_systemd(struct vg_listener *l, unsigned max, struct vg_err *err)
{
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    uint64_t p, n;
    if (!pid || !fds || !vg_parse_u64(pid, &p) || p != (uint64_t)getpid() || !vg_parse_u64(fds, &n))
        return 0;
    if (n > max)
        return vg_errf(err, "systemd passed %llu sockets, at most %u", (unsigned long long)n,
                       max), -1;
    for (unsigned i = 0; i < n; i++) {
        int fd = SD_LISTEN_FDS_START + (int)i;
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ||
            fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
            return vg_errf(err, "systemd's fd %d: %s", fd, strerror(errno)), -1;
        l[i] = (struct vg_listener){.fd = fd, .tcp = ss.ss_family != AF_UNIX,
                                    .name = vg_xasprintf("systemd fd %d", fd)};
    }
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    return (int)n;
}

void vg_listen_close(struct vg_listener *l)
{
    if (l->fd >= 0)
        close(l->fd);
    if (l->unix_path)
        unlink(l->unix_path);
    free(l->unix_path);
    free(l->name);
    memset(l, 0, sizeof *l);
    l->fd = -1;
}
