/* base64.h: standard base64 (RFC 4648, '+' '/' and '=' padding): PEM keys,
 * and the bytes of a file or a stdin in a `vigil serve` request. */
#ifndef VG_BASE64_H
#define VG_BASE64_H
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* Strict: line breaks allowed, '=' only at the end, no stray bits.  The
 * number of bytes into out (at most cap), or -1. */
long vg_b64_decode(const char *p, size_t n, uint8_t *out, size_t cap);
/* The most bytes n characters of base64 can hold. */
#define VG_B64_MAX_DECODED(n) ((n) / 4 * 3 + 3)
/* Appends the base64 of p[0..n) to b (no line breaks). */
void vg_b64_encode(struct vg_buf *b, const uint8_t *p, size_t n);
#endif
