/* recv_cmsg.h: receive one message that may carry one control message of a
 * known type (SCM_RIGHTS: an fd; SCM_CREDENTIALS: the sender).  Which
 * control data of a send is refused is a decision: core/cmsg.h. */
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
#endif
