/* utf8.c: strict UTF-8 check (no overlongs, no surrogates, <= U+10FFFF),
 * the same rule Python applies when it decodes a msgpack str. */
#include "util/utf8.h"

#include <stdint.h>

/* Minimum code point for a sequence of length 2, 3, 4 (overlong check). */
static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};

static unsigned seq_len(unsigned char c)
{
    if (c < 0x80) return 1;
    if (c >= 0xf0 && c <= 0xf4) return 4;
    if (c >= 0xe0) return c <= 0xef ? 3 : 0;
    if (c >= 0xc2) return 2;
    return 0;
}

size_t vg_utf8_prefix(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (p[i] < 0x80) { /* the common case: ASCII paths */
            i++;
            continue;
        }
        unsigned l = seq_len(p[i]);
        if (l == 0 || l > n - i)
            return i;
        uint32_t cp = p[i] & (0x7fu >> l);
        for (unsigned k = 1; k < l; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return i;
            cp = cp << 6 | (p[i + k] & 0x3fu);
        }
        if (cp < min_cp[l] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return i;
        i += l;
    }
    return n;
}

bool vg_utf8_valid(const char *s, size_t n)
{
    return vg_utf8_prefix(s, n) == n;
}
