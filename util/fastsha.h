/* fastsha.h: SHA-256 through libcrypto's own assembly (SHA-NI, or AVX2
 * where the CPU lacks it), for what is hashed often or in bulk: the log's
 * chain (every record, event/chain.h) and vigil's own binary (the seal).
 * util/sha256.c stays the portable one the rest uses.  Digests are raw
 * bytes; util/sha256.h has the hex form. */
#ifndef VG_FASTSHA_H
#define VG_FASTSHA_H
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

#define VG_SHA256_LEN 32

/* out := SHA-256(a || b), the two parts as one message (b may be NULL
 * when nb is 0). */
void vg_fastsha2(const void *a, size_t na, const void *b, size_t nb,
                 uint8_t out[VG_SHA256_LEN]);
/* SHA-256 of everything fd reads from its offset to the end, read
 * through buf[0..cap) (the caller's: this allocates nothing, for a thread
 * that must not); -1 with err set (naming what) when a read fails. */
int vg_fastsha_fd(int fd, const char *what, void *buf, size_t cap, uint8_t out[VG_SHA256_LEN],
                  struct vg_err *err);
/* 2n lowercase hex digits and a NUL into hex (2n+1 bytes). */
void vg_hex(const uint8_t *p, size_t n, char *hex);
/* The reverse: exactly 2n hex digits (either case) in s, then its end.
 * false when s is anything else. */
bool vg_unhex(const char *s, uint8_t *out, size_t n);
#endif
