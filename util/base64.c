/* base64.c: see base64.h. */
#include "util/base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

long vg_b64_decode(const char *p, size_t n, uint8_t *out, size_t cap)
{
    uint32_t acc = 0;
    unsigned bits = 0, pad = 0;
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\n' || c == '\r')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        int v = b64_value(c);
        if (v < 0 || pad)
            return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (len == cap)
                return -1;
            out[len++] = (uint8_t)(acc >> bits);
        }
    }
    /* what is left must be padding of a whole last group */
    if (pad > 2 || (bits + pad * 6) % 8 || (acc & ((1u << bits) - 1)))
        return -1;
    return (long)len;
}

void vg_b64_encode(struct vg_buf *b, const uint8_t *p, size_t n)
{
    char q[4];
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        q[0] = alphabet[v >> 18 & 63];
        q[1] = alphabet[v >> 12 & 63];
        q[2] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        q[3] = i + 2 < n ? alphabet[v & 63] : '=';
        vg_buf_put(b, q, sizeof q);
    }
}
