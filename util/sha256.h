/* sha256.h: FIPS 180-4 SHA-256, for artifact and policy hashes. */
#ifndef VG_SHA256_H
#define VG_SHA256_H
#include <stddef.h>
#include <stdint.h>
#include "util/util.h"

struct vg_sha256 {
    uint32_t h[8];
    uint64_t len;
    uint8_t block[64];
    size_t fill;
};
void vg_sha256_init(struct vg_sha256 *s);
void vg_sha256_update(struct vg_sha256 *s, const void *data, size_t n);
/* Writes 64 lowercase hex digits and a NUL into hex[65]. */
void vg_sha256_hex(struct vg_sha256 *s, char hex[65]);
void vg_sha256_buf(const void *data, size_t n, char hex[65]);
/* Hash a file's contents; -1 with err set when it cannot be read. */
int vg_sha256_file(const char *path, char hex[65], struct vg_err *err);
#endif
