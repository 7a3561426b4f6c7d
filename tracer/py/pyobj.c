/* pyobj.c: the few kinds of Python object a stack walk reads from the
 * tracee: str (file and function names), bytes (a code object's location
 * table) and the location table itself.  Sizes come from the candidate's
 * memory: each is capped before anything is read. */
#include <stdlib.h>
#include <string.h>

#include "tracer/py/py_int.h"

#define TABLE_MAX (64u << 10)   /* location table bytes read; a longer one is cut */
#define STR_HEAD_MAX 128u       /* bytes of a str object's header read */
#define ELLIPSIS "..."

/* PyASCIIObject.state bits (3.11-3.13): interned:2, kind:3, compact:1, ascii:1 */
#define STATE_KIND(s) (((s) >> 2) & 7u)
#define STATE_COMPACT(s) (((s) >> 5) & 1u)
#define STATE_ASCII(s) (((s) >> 6) & 1u)
/* a lone surrogate U+DC80..U+DCFF is a byte os.fsdecode could not decode
 * (surrogateescape): written back as that byte, as the kernel saw it */
#define ESCAPED_LO 0xdc80u
#define ESCAPED_HI 0xdcffu

static size_t put_utf8(char *o, uint32_t c)
{
    if (c >= ESCAPED_LO && c <= ESCAPED_HI) {
        o[0] = (char)(c - 0xdc00u);
        return 1;
    }
    if ((c >= 0xd800u && c <= 0xdfffu) || c > 0x10ffffu)
        c = '?';     /* any other surrogate, or no code point: not UTF-8 */
    if (c < 0x80u) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800u) {
        o[0] = (char)(0xc0u | (c >> 6));
        o[1] = (char)(0x80u | (c & 0x3fu));
        return 2;
    }
    if (c < 0x10000u) {
        o[0] = (char)(0xe0u | (c >> 12));
        o[1] = (char)(0x80u | ((c >> 6) & 0x3fu));
        o[2] = (char)(0x80u | (c & 0x3fu));
        return 3;
    }
    o[0] = (char)(0xf0u | (c >> 18));
    o[1] = (char)(0x80u | ((c >> 12) & 0x3fu));
    o[2] = (char)(0x80u | ((c >> 6) & 0x3fu));
    o[3] = (char)(0x80u | (c & 0x3fu));
    return 4;
}

static uint32_t char_at(const uint8_t *d, unsigned kind, size_t i)
{
    uint16_t u16;
    uint32_t u32;
    switch (kind) {
    case 1: return d[i];
    case 2: memcpy(&u16, d + 2 * i, 2); return u16;
    default: memcpy(&u32, d + 4 * i, 4); return u32;
    }
}

char *vg_py_read_str(struct vg_pyreader *rd, const struct vg_pyoffsets *o, uint64_t addr,
                     size_t max, struct vg_arena *a)
{
    uint8_t head[STR_HEAD_MAX];
    if (!vg_py_ptr_ok(addr) || o->str_compact_size > sizeof head ||
        o->str_length + 8 > sizeof head || o->str_state + 4 > sizeof head ||
        vg_py_read(rd, addr, head, o->str_compact_size) < 0)
        return NULL;
    int64_t len;
    uint32_t state;
    memcpy(&len, head + o->str_length, sizeof len);
    memcpy(&state, head + o->str_state, sizeof state);
    unsigned kind = STATE_KIND(state);
    if (len < 0 || !STATE_COMPACT(state) || (kind != 1 && kind != 2 && kind != 4))
        return NULL;
    bool cut = (uint64_t)len > max;
    size_t n = cut ? max : (size_t)len;
    uint64_t data = addr + (STATE_ASCII(state) ? o->str_ascii_size : o->str_compact_size);
    uint8_t *raw = malloc(n * kind + 1);
    char *out = malloc(n * 4 + sizeof ELLIPSIS);   /* UTF-8: at most 4 bytes a character */
    if (!raw || !out || vg_py_read(rd, data, raw, n * kind) < 0) {
        free(raw);
        free(out);
        return NULL;
    }
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = char_at(raw, kind, i);
        w += put_utf8(out + w, c ? c : '?');  /* a NUL would end the C string */
    }
    free(raw);
    if (cut) {
        memcpy(out + w, ELLIPSIS, sizeof ELLIPSIS - 1);
        w += sizeof ELLIPSIS - 1;
    }
    out[w] = '\0';
    char *kept = vg_arena_strdup(a, out);
    free(out);
    return kept;
}

/* ---- location table (Objects/locations.md of CPython 3.11+) ---- */

enum {
    LOC_SHORT_MAX = 9,   /* 0-9: short form, same line */
    LOC_ONE_LINE0 = 10,  /* 10-12: one-line form, line delta 0-2 */
    LOC_ONE_LINE2 = 12,
    LOC_NO_COLUMNS = 13, /* line delta as a signed varint */
    LOC_LONG = 14,       /* line delta as a signed varint, then more */
    LOC_NONE = 15,       /* no location */
};

/* Only the first byte of an entry has the top bit set. */
#define ENTRY_START 0x80u
#define VARINT_MORE 0x40u
#define VARINT_BITS 6u
#define VARINT_MASK 0x3fu
#define CODE_UNIT 2      /* bytes of one instruction unit */

static uint64_t varint(const uint8_t *t, size_t n, size_t *i)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (*i < n && shift < 64) {
        uint8_t b = t[(*i)++];
        v |= (uint64_t)(b & VARINT_MASK) << shift;
        shift += VARINT_BITS;
        if (!(b & VARINT_MORE))
            break;
    }
    return v;
}

static int64_t svarint(const uint8_t *t, size_t n, size_t *i)
{
    uint64_t u = varint(t, n, i);
    return (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
}

int32_t vg_py_addr2line(const uint8_t *t, size_t n, int32_t firstline, int64_t addr)
{
    if (addr < 0)
        return firstline;  /* the frame has not run an instruction yet */
    int64_t line = firstline, start = 0;
    size_t i = 0;
    while (i < n) {
        uint8_t b = t[i++];
        if (!(b & ENTRY_START))
            return 0;      /* not an entry's first byte: a corrupt table */
        unsigned code = (b >> 3) & 15u;
        int64_t end = start + (int64_t)((b & 7u) + 1) * CODE_UNIT;
        if (code == LOC_NO_COLUMNS || code == LOC_LONG)
            line += svarint(t, n, &i);
        else if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2)
            line += code - LOC_ONE_LINE0;
        if (addr < end)
            return code == LOC_NONE || line < 0 || line > INT32_MAX ? 0 : (int32_t)line;
        start = end;
        while (i < n && !(t[i] & ENTRY_START))
            i++;
    }
    return 0;
}

int32_t vg_py_code_line(struct vg_pyreader *rd, const struct vg_pyoffsets *o, uint64_t table,
                        int32_t firstline, int64_t addr)
{
    uint8_t head[64];
    int64_t size;
    if (!vg_py_ptr_ok(table) || o->bytes_size + 8 > sizeof head || o->bytes_data > sizeof head ||
        vg_py_read(rd, table, head, o->bytes_data) < 0)
        return 0;
    memcpy(&size, head + o->bytes_size, sizeof size);
    if (size <= 0)
        return addr < 0 ? firstline : 0;
    size_t n = (uint64_t)size > TABLE_MAX ? TABLE_MAX : (size_t)size;
    uint8_t *t = malloc(n);
    int32_t line = 0;
    if (t && vg_py_read(rd, table + o->bytes_data, t, n) == 0)
        line = vg_py_addr2line(t, n, firstline, addr);
    free(t);
    return line;
}
