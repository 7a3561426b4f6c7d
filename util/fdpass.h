/* fdpass.h: one message and at most one fd (SCM_RIGHTS) over a unix
 * socket: the resolver's socket from the child that made it in the
 * sandbox's network namespace (net/dns_sock.c), a held sandbox's stdin to
 * its pid 1 (launcher/late.c). */
#ifndef VG_FDPASS_H
#define VG_FDPASS_H
#include <stddef.h>
#include <sys/types.h>

/* Send the len bytes of buf as one message, with fd (none when fd < 0).
 * What sendmsg returns (no SIGPIPE: -1 with EPIPE). */
ssize_t vg_fd_send(int sock, const void *buf, size_t len, int fd);
/* Receive len bytes into buf and exactly one fd with them (made
 * close-on-exec): the fd, or -1 on EOF, an error, a short message, or
 * other than one fd (any that came are closed). */
int vg_fd_recv(int sock, void *buf, size_t len);
#endif
