/* cmsg.h: receive one message that may carry one control message of a
 * known type (SCM_RIGHTS: an fd; SCM_CREDENTIALS: the sender), and judge
 * the control data of a send (both engines' decoders and the notify
 * engine's own copy). */
#ifndef VG_CMSG_H
#define VG_CMSG_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* recvmsg into buf (n bytes), MSG_CMSG_CLOEXEC.  When a control message of
 * type (SOL_SOCKET level) with exactly dlen bytes came, copies it to data
 * and sets *got.  Returns the byte count, or -1 (also when control data
 * was cut off: an fd may have been lost). */
ssize_t vg_recv_cmsg(int sock, void *buf, size_t n, int type, void *data, size_t dlen, bool *got);

/* The control data of a send (len bytes, as the kernel will walk it):
 * 0 when nothing in it changes where the packet goes or puts IP options
 * in it; -EPERM with *why (a static text for the record) for a routing
 * header, hop-by-hop or destination options (IPv6) or IP options (IPv4:
 * source routes); -EINVAL when a header is malformed (the kernel fails
 * such a send, so nothing of it is judged after the bad header). */
int vg_cmsg_refused(const void *control, size_t len, const char **why);
#endif
