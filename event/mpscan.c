/* mpscan.c: find where one msgpack object ends, without allocating and
 * without trusting a single length in the input.  This is the gate every
 * byte passes before anything decodes it: container counts are only ever
 * used as loop bounds (each element needs at least one byte, so a huge count
 * simply runs out of bytes), lengths are checked against what is there, and
 * nesting is bounded by an explicit stack instead of recursion. */
#include "event/reader.h"

#include <string.h>

/* What follows a type byte. */
enum head_kind { H_SCALAR, H_ARRAY, H_MAP };

struct head {
    size_t hlen;       /* bytes of the type byte + length field */
    enum head_kind kind;
    uint64_t n;        /* payload bytes (scalar) or element count */
};

static uint64_t be(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* Type bytes 0xc0..0xdf: size of the length field (or fixed payload) and
 * what it describes.  0xc1 is the one byte msgpack never uses. */
static const struct {
    uint8_t lenbytes;  /* big-endian length field that follows */
    uint8_t fixed;     /* fixed payload bytes (numbers, fixext incl. type) */
    uint8_t extra;     /* payload bytes beyond the length (ext type byte) */
    uint8_t kind;      /* enum head_kind */
    uint8_t valid;
} ctab[32] = {
    [0x00] = {0, 0, 0, H_SCALAR, 1},                             /* nil */
    [0x02] = {0, 0, 0, H_SCALAR, 1}, [0x03] = {0, 0, 0, H_SCALAR, 1}, /* bool */
    [0x04] = {1, 0, 0, H_SCALAR, 1}, [0x05] = {2, 0, 0, H_SCALAR, 1}, /* bin */
    [0x06] = {4, 0, 0, H_SCALAR, 1},
    [0x07] = {1, 0, 1, H_SCALAR, 1}, [0x08] = {2, 0, 1, H_SCALAR, 1}, /* ext */
    [0x09] = {4, 0, 1, H_SCALAR, 1},
    [0x0a] = {0, 4, 0, H_SCALAR, 1}, [0x0b] = {0, 8, 0, H_SCALAR, 1}, /* float */
    [0x0c] = {0, 1, 0, H_SCALAR, 1}, [0x0d] = {0, 2, 0, H_SCALAR, 1}, /* uint */
    [0x0e] = {0, 4, 0, H_SCALAR, 1}, [0x0f] = {0, 8, 0, H_SCALAR, 1},
    [0x10] = {0, 1, 0, H_SCALAR, 1}, [0x11] = {0, 2, 0, H_SCALAR, 1}, /* int */
    [0x12] = {0, 4, 0, H_SCALAR, 1}, [0x13] = {0, 8, 0, H_SCALAR, 1},
    [0x14] = {0, 2, 0, H_SCALAR, 1}, [0x15] = {0, 3, 0, H_SCALAR, 1}, /* fixext */
    [0x16] = {0, 5, 0, H_SCALAR, 1}, [0x17] = {0, 9, 0, H_SCALAR, 1},
    [0x18] = {0, 17, 0, H_SCALAR, 1},
    [0x19] = {1, 0, 0, H_SCALAR, 1}, [0x1a] = {2, 0, 0, H_SCALAR, 1}, /* str */
    [0x1b] = {4, 0, 0, H_SCALAR, 1},
    [0x1c] = {2, 0, 0, H_ARRAY, 1}, [0x1d] = {4, 0, 0, H_ARRAY, 1},
    [0x1e] = {2, 0, 0, H_MAP, 1}, [0x1f] = {4, 0, 0, H_MAP, 1},
};

static enum vg_mp_status fail(const char **why, const char *msg)
{
    if (why)
        *why = msg;
    return VG_MP_CORRUPT;
}

static enum vg_mp_status parse_head(const uint8_t *p, size_t len, struct head *h,
                                    const char **why)
{
    if (len == 0)
        return VG_MP_TRUNCATED;
    uint8_t c = p[0];
    h->hlen = 1;
    h->kind = H_SCALAR;
    h->n = 0;
    if (c <= 0x7f || c >= 0xe0)
        return VG_MP_OK;                       /* fixint */
    if (c <= 0x8f) { h->kind = H_MAP; h->n = c & 0x0f; return VG_MP_OK; }
    if (c <= 0x9f) { h->kind = H_ARRAY; h->n = c & 0x0f; return VG_MP_OK; }
    if (c <= 0xbf) { h->n = c & 0x1f; return VG_MP_OK; } /* fixstr */
    unsigned i = c - 0xc0;
    if (!ctab[i].valid)
        return fail(why, "invalid type byte 0xc1");
    if (ctab[i].fixed) {
        h->n = ctab[i].fixed;
        return VG_MP_OK;
    }
    unsigned lb = ctab[i].lenbytes;
    if (len < 1 + (size_t)lb)
        return VG_MP_TRUNCATED;
    h->hlen = 1 + lb;
    h->n = be(p + 1, lb);
    h->kind = ctab[i].kind;
    if (h->kind == H_SCALAR) {
        if (h->n > VG_MP_MAX_BYTES)
            return fail(why, "string or binary longer than 64 MiB");
        h->n += ctab[i].extra;
    } else if (h->n > VG_MP_MAX_ITEMS) {
        return fail(why, "container with more than 16M elements");
    }
    return VG_MP_OK;
}

enum vg_mp_status vg_mp_check(const uint8_t *p, size_t len, size_t *objlen,
                              const char **why)
{
    /* left[d]: elements still to skip at nesting level d (0 = the object) */
    uint64_t left[VG_MP_MAX_DEPTH + 1];
    int d = 0;
    size_t pos = 0;
    left[0] = 1;
    while (d >= 0) {
        if (left[d] == 0) {
            d--;
            continue;
        }
        left[d]--;
        struct head h;
        enum vg_mp_status st = parse_head(p + pos, len - pos, &h, why);
        if (st != VG_MP_OK)
            return st;
        pos += h.hlen;
        if (h.kind == H_SCALAR) {
            if (h.n > len - pos)
                return VG_MP_TRUNCATED;
            pos += (size_t)h.n;
            continue;
        }
        uint64_t items = h.kind == H_MAP ? 2 * h.n : h.n;
        if (items == 0)
            continue;
        if (d >= VG_MP_MAX_DEPTH)
            return fail(why, "nested deeper than 32 levels");
        left[++d] = items;
    }
    if (objlen)
        *objlen = pos;
    return VG_MP_OK;
}

enum vg_mp_status vg_mp_skip(const uint8_t *p, size_t len, size_t *objlen)
{
    return vg_mp_check(p, len, objlen, NULL);
}
