/* fastsha.c: see fastsha.h.  The low-level SHA256_* calls, deprecated in
 * OpenSSL 3 in favour of EVP, are used on purpose: they run the same
 * assembly with no set-up, while EVP's first digest costs every run about
 * half a millisecond of provider initialisation (measured here, 2-vCPU
 * EPYC), and linking EVP at all adds OpenSSL's 16k relocations to every
 * start.  A static libcrypto then brings in only the SHA-256 objects. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "util/fastsha.h"

#include <errno.h>
#include <openssl/sha.h>
#include <string.h>
#include <unistd.h>

_Static_assert(SHA256_DIGEST_LENGTH == VG_SHA256_LEN, "SHA-256 is 32 bytes");

void vg_fastsha2(const void *a, size_t na, const void *b, size_t nb, uint8_t out[VG_SHA256_LEN])
{
    SHA256_CTX c;
    SHA256_Init(&c);
    SHA256_Update(&c, a, na);
    if (nb)
        SHA256_Update(&c, b, nb);
    SHA256_Final(out, &c);
}

int vg_fastsha_fd(int fd, const char *what, void *buf, size_t cap, uint8_t out[VG_SHA256_LEN],
                  struct vg_err *err)
{
    SHA256_CTX c;
    SHA256_Init(&c);
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, buf, cap);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            vg_errf(err, "read %s: %s", what, strerror(errno));
            rc = -1;
            break;
        }
        if (n == 0)
            break;
        SHA256_Update(&c, buf, (size_t)n);
    }
    SHA256_Final(out, &c);
    return rc;
}

void vg_hex(const uint8_t *p, size_t n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[p[i] >> 4];
        hex[2 * i + 1] = digits[p[i] & 0xf];
    }
    hex[2 * n] = 0;
}

bool vg_unhex(const char *s, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int hi = vg_hex_digit(s[2 * i]), lo = hi < 0 ? -1 : vg_hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return s[2 * n] == 0;
}
