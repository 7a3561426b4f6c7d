/* cmsg.h: which control data of a send vigil refuses, judged where it is
 * decided: by the decoder on the candidate's data (both engines: the call
 * is then undecidable, refused with the reason), and again by the notify
 * engine on the copy it sends (another thread may have rewritten it). */
#ifndef VG_CORE_CMSG_H
#define VG_CORE_CMSG_H
#include <stddef.h>

/* The control data of a send (len bytes, as the kernel will walk it):
 * 0 when nothing in it changes where the packet goes or puts IP options
 * in it; -EPERM with *why (a static text for the record) for a routing
 * header, hop-by-hop or destination options (IPv6) or IP options (IPv4:
 * source routes); -EINVAL when a header is malformed (the kernel fails
 * such a send, so nothing of it is judged after the bad header). */
int vg_cmsg_refused(const void *control, size_t len, const char **why);
#endif
