/* record_decode.c: one validated msgpack object -> struct vg_record, driven by the
 * same schema tables the writer uses.  Every string and array of the record
 * is copied into one arena owned by the vg_decoded, so a record outlives the
 * buffer it was read from and is released with one call.  The input has
 * normally passed vg_mp_skip; the cursor still checks every bound, so a
 * careless caller gets an error, not an overread. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "event/reader.h"
#include "event/schema.h"

/* ---- arena: a list of blocks, newest first ---- */
struct ablock {
    struct ablock *next;
    size_t cap, used;
    max_align_t data[];
};

static void *arena_alloc(void **list, size_t n, size_t hint)
{
    struct ablock *b = *list;
    n = (n + 7) & ~(size_t)7;
    if (!b || b->cap - b->used < n) {
        size_t cap = b ? b->cap * 2 : hint;
        if (cap < n)
            cap = n;
        struct ablock *nb = vg_xmalloc(sizeof *nb + cap);
        nb->next = b;
        nb->cap = cap;
        nb->used = 0;
        *list = b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

void vg_decoded_free(struct vg_decoded *d)
{
    struct ablock *b = d->priv;
    while (b) {
        struct ablock *next = b->next;
        free(b);
        b = next;
    }
    d->priv = NULL;
}

/* ---- cursor over msgpack bytes ---- */
struct dctx {
    const uint8_t *p, *end;
    void **arena;
    size_t hint;             /* first arena block size */
    struct vg_err *err;
    const char *path[4];     /* keys leading to the current field */
    int depth;
};

static const char *type_desc(uint8_t c)
{
    if (c <= 0x7f || c >= 0xe0 || (c >= 0xcc && c <= 0xd3)) return "an integer";
    if (c <= 0x8f || c == 0xde || c == 0xdf) return "a map";
    if (c <= 0x9f || c == 0xdc || c == 0xdd) return "an array";
    if (c <= 0xbf || (c >= 0xd9 && c <= 0xdb)) return "a string";
    if (c == 0xc0) return "nil";
    if (c == 0xc2 || c == 0xc3) return "a boolean";
    if (c >= 0xc4 && c <= 0xc6) return "binary";
    if (c == 0xca || c == 0xcb) return "a float";
    return "an extension";
}

static int field_err(struct dctx *c, const char *what)
{
    char path[160] = "";
    size_t len = 0;
    for (int i = 0; i < c->depth && len < sizeof path; i++)
        len += (size_t)snprintf(path + len, sizeof path - len, "%s%s", i ? "." : "", c->path[i]);
    if (c->p < c->end && !strncmp(what, "expected", 8))
        vg_errf(c->err, "field '%s': %s, got %s", path, what, type_desc(*c->p));
    else
        vg_errf(c->err, "field '%s': %s", path, what);
    return -1;
}

static int need(struct dctx *c, size_t n)
{
    if ((size_t)(c->end - c->p) < n) {
        vg_errf(c->err, "record ends in the middle of a value");
        return -1;
    }
    return 0;
}

static uint64_t be(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* Read a length/number field of n bytes after the type byte. */
static int rd_be(struct dctx *c, unsigned n, uint64_t *v)
{
    if (need(c, 1 + (size_t)n) < 0)
        return -1;
    *v = be(c->p + 1, n);
    c->p += 1 + n;
    return 0;
}

/* Any integer encoding; *neg tells how to read *v. */
static int rd_integer(struct dctx *c, uint64_t *v, bool *neg)
{
    if (need(c, 1) < 0)
        return -1;
    uint8_t t = *c->p;
    *neg = false;
    if (t <= 0x7f || t >= 0xe0) {
        *v = t <= 0x7f ? t : (uint64_t)(int64_t)(int8_t)t;
        *neg = t >= 0xe0;
        c->p++;
        return 0;
    }
    if (t >= 0xcc && t <= 0xcf)
        return rd_be(c, 1u << (t - 0xcc), v);
    if (t >= 0xd0 && t <= 0xd3) {
        unsigned n = 1u << (t - 0xd0);
        if (rd_be(c, n, v) < 0)
            return -1;
        if (n < 8 && (*v >> (8 * n - 1)))        /* sign-extend */
            *v |= ~(uint64_t)0 << (8 * n);
        *neg = (int64_t)*v < 0;
        return 0;
    }
    return field_err(c, "expected an integer");
}

static int rd_uint(struct dctx *c, uint64_t *v, uint64_t max)
{
    bool neg;
    if (rd_integer(c, v, &neg) < 0)
        return -1;
    if (neg || *v > max)
        return field_err(c, "integer out of range");
    return 0;
}

static int rd_int(struct dctx *c, int64_t *v, int64_t min, int64_t max)
{
    uint64_t u;
    bool neg;
    if (rd_integer(c, &u, &neg) < 0)
        return -1;
    if (!neg && u > (uint64_t)INT64_MAX)
        return field_err(c, "integer out of range");
    *v = (int64_t)u;
    if (*v < min || *v > max)
        return field_err(c, "integer out of range");
    return 0;
}

/* A str, or a bin (how the writer stores strings that are not UTF-8). */
static int rd_strref(struct dctx *c, const uint8_t **s, size_t *n)
{
    if (need(c, 1) < 0)
        return -1;
    uint8_t t = *c->p;
    uint64_t len;
    if (t >= 0xa0 && t <= 0xbf) {
        len = t & 0x1f;
        c->p++;
    } else if (t >= 0xd9 && t <= 0xdb) {
        if (rd_be(c, 1u << (t - 0xd9), &len) < 0)
            return -1;
    } else if (t >= 0xc4 && t <= 0xc6) {
        if (rd_be(c, 1u << (t - 0xc4), &len) < 0)
            return -1;
    } else {
        return field_err(c, "expected a string");
    }
    if ((uint64_t)(c->end - c->p) < len)
        return need(c, SIZE_MAX);
    *s = c->p;
    *n = (size_t)len;
    c->p += len;
    return 0;
}

static int rd_container(struct dctx *c, bool map, uint32_t *n)
{
    if (need(c, 1) < 0)
        return -1;
    uint8_t t = *c->p, fix = map ? 0x80 : 0x90, w16 = map ? 0xde : 0xdc;
    uint64_t v;
    if ((t & 0xf0) == fix) {
        *n = t & 0x0f;
        c->p++;
        return 0;
    }
    if (t == w16 || t == w16 + 1) {
        if (rd_be(c, t == w16 ? 2 : 4, &v) < 0)
            return -1;
        /* every element takes at least one byte: never trust more */
        if (v > (uint64_t)(c->end - c->p))
            return need(c, SIZE_MAX);
        *n = (uint32_t)v;
        return 0;
    }
    return field_err(c, map ? "expected a map" : "expected an array");
}

static int skip_value(struct dctx *c)
{
    size_t n;
    if (vg_mp_skip(c->p, (size_t)(c->end - c->p), &n) != VG_MP_OK) {
        vg_errf(c->err, "malformed value");
        return -1;
    }
    c->p += n;
    return 0;
}

static const char *copy_str(struct dctx *c, const uint8_t *s, size_t n)
{
    char *d = arena_alloc(c->arena, n + 1, c->hint);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

static int rd_str(struct dctx *c, const char **out)
{
    const uint8_t *s;
    size_t n;
    if (rd_strref(c, &s, &n) < 0)
        return -1;
    *out = copy_str(c, s, n);
    return 0;
}

/* ---- schema-driven decoding ---- */
static int decode_map(struct dctx *c, const struct vg_schema *s, void *base, uint32_t n);

static int decode_strv(struct dctx *c, const struct vg_field *f, void *base)
{
    uint32_t n;
    if (rd_container(c, false, &n) < 0)
        return -1;
    const char **v = arena_alloc(c->arena, (size_t)n * sizeof *v + 1, c->hint);
    for (uint32_t i = 0; i < n; i++)
        if (rd_str(c, &v[i]) < 0)
            return -1;
    *VG_AT(base, f->off, const char **) = v;
    *VG_AT(base, f->off_n, uint32_t) = n;
    return 0;
}

static int decode_structv(struct dctx *c, const struct vg_field *f, void *base)
{
    uint32_t n, m;
    if (rd_container(c, false, &n) < 0)
        return -1;
    char *v = arena_alloc(c->arena, (size_t)n * f->sub->size + 1, c->hint);
    memset(v, 0, (size_t)n * f->sub->size);
    for (uint32_t i = 0; i < n; i++) {
        void *e = v + (size_t)i * f->sub->size;
        vg_schema_defaults(f->sub, e);
        if (rd_container(c, true, &m) < 0 || decode_map(c, f->sub, e, m) < 0)
            return -1;
    }
    *VG_AT(base, f->off, void *) = v;
    *VG_AT(base, f->off_n, uint32_t) = n;
    return 0;
}

static int decode_kvmap(struct dctx *c, const struct vg_field *f, void *base)
{
    uint32_t n;
    if (rd_container(c, true, &n) < 0)
        return -1;
    struct vg_kv *kv = arena_alloc(c->arena, (size_t)n * sizeof *kv + 1, c->hint);
    for (uint32_t i = 0; i < n; i++)
        if (rd_str(c, &kv[i].name) < 0 || rd_str(c, &kv[i].value) < 0)
            return -1;
    *VG_AT(base, f->off, struct vg_kv *) = kv;
    *VG_AT(base, f->off_n, uint32_t) = n;
    return 0;
}

static int decode_enum(struct dctx *c, const struct vg_field *f, void *base)
{
    const uint8_t *s;
    size_t n;
    if (rd_strref(c, &s, &n) < 0)
        return -1;
    int v = vg_enum_lookup(f->en, (const char *)s, n);
    if (v < 0)
        return field_err(c, "unknown value");
    *VG_AT(base, f->off, int) = v;
    return 0;
}

static int decode_field(struct dctx *c, const struct vg_field *f, void *base)
{
    uint64_t u;
    int64_t i;
    uint32_t n;
    if (c->p < c->end && *c->p == 0xc0) { /* nil: the field is unset */
        c->p++;
        return 0;
    }
    switch (f->kind) {
    case VG_F_U64:
        return rd_uint(c, VG_AT(base, f->off, uint64_t), UINT64_MAX);
    case VG_F_U32:
        if (rd_uint(c, &u, UINT32_MAX) < 0)
            return -1;
        *VG_AT(base, f->off, uint32_t) = (uint32_t)u;
        return 0;
    case VG_F_I64:
        return rd_int(c, VG_AT(base, f->off, int64_t), INT64_MIN, INT64_MAX);
    case VG_F_I32:
        if (rd_int(c, &i, INT32_MIN, INT32_MAX) < 0)
            return -1;
        *VG_AT(base, f->off, int32_t) = (int32_t)i;
        return 0;
    case VG_F_BOOL:
        if (*c->p != 0xc2 && *c->p != 0xc3)
            return field_err(c, "expected a boolean");
        *VG_AT(base, f->off, bool) = *c->p++ == 0xc3;
        return 0;
    case VG_F_STR: return rd_str(c, VG_AT(base, f->off, const char *));
    case VG_F_ENUM: return decode_enum(c, f, base);
    case VG_F_STRV: return decode_strv(c, f, base);
    case VG_F_STRUCTV: return decode_structv(c, f, base);
    case VG_F_KVMAP: return decode_kvmap(c, f, base);
    case VG_F_MAP:
        if (rd_container(c, true, &n) < 0)
            return -1;
        return decode_map(c, f->sub, (char *)base + f->off, n);
    }
    return -1;
}

/* Find the field for a key.  The writer emits keys in table order, so the
 * field after the previous match is tried first. */
static const struct vg_field *lookup(const struct vg_schema *s, const uint8_t *k,
                                     size_t n, size_t *hint)
{
    for (size_t j = 0; j < s->n; j++) {
        size_t i = (*hint + j) % s->n;
        if (s->f[i].klen == n && !memcmp(s->f[i].key, k, n)) {
            *hint = i + 1;
            return &s->f[i];
        }
    }
    return NULL;
}

static int rd_key(struct dctx *c, const uint8_t **k, size_t *n)
{
    if (c->p < c->end && ((*c->p >= 0xa0 && *c->p <= 0xbf) || (*c->p >= 0xd9 && *c->p <= 0xdb)))
        return rd_strref(c, k, n);
    vg_errf(c->err, "a map key is not a string");
    return -1;
}

static int decode_map(struct dctx *c, const struct vg_schema *s, void *base, uint32_t n)
{
    size_t hint = 0;
    if (c->depth >= (int)VG_ARRAY_LEN(c->path))
        return field_err(c, "nested too deep");
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *k;
        size_t kn;
        if (rd_key(c, &k, &kn) < 0)
            return -1;
        const struct vg_field *f = lookup(s, k, kn, &hint);
        if (!f) {                      /* a newer writer's key: ignore */
            if (skip_value(c) < 0)
                return -1;
            continue;
        }
        c->path[c->depth++] = f->key;
        int rc = decode_field(c, f, base);
        c->depth--;
        if (rc < 0)
            return -1;
    }
    return 0;
}

static bool key_is(const uint8_t *k, size_t n, const char *name)
{
    return strlen(name) == n && !memcmp(k, name, n);
}

/* Pass 1: the record type, wherever "type" is in the map. */
static int find_type(struct dctx c, uint32_t n, struct vg_decoded *out)
{
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *k, *s;
        size_t kn, sn;
        if (rd_key(&c, &k, &kn) < 0)
            return -1;
        if (!key_is(k, kn, VG_K_TYPE)) {
            if (skip_value(&c) < 0)
                return -1;
            continue;
        }
        c.path[0] = VG_K_TYPE;
        c.depth = 1;
        if (rd_strref(&c, &s, &sn) < 0)
            return -1;
        int t = vg_enum_lookup(&vg_enum_rec_type, (const char *)s, sn);
        if (t < 0) {
            out->unknown_type = true;
            vg_errf(c.err, "unknown record type '%.*s'", (int)(sn > 40 ? 40 : sn), (const char *)s);
        }
        return t;
    }
    vg_errf(c.err, "record has no \"type\"");
    return -1;
}

/* A bin of exactly n bytes (the chain value, the seal's signature). */
static int rd_bin_exact(struct dctx *c, uint8_t *out, size_t n)
{
    uint64_t len;
    if (need(c, 1) < 0)
        return -1;
    uint8_t t = *c->p;
    if (t < 0xc4 || t > 0xc6)
        return field_err(c, "expected binary");
    if (rd_be(c, 1u << (t - 0xc4), &len) < 0)
        return -1;
    if (len != n)
        return field_err(c, n == VG_CHAIN_LEN ? "expected 32 bytes" : "expected 64 bytes");
    if (need(c, n) < 0)
        return -1;
    memcpy(out, c->p, n);
    c->p += n;
    return 0;
}

/* Pass 2: every key; seq and ts go to the struct head when it has one. */
static int decode_record(struct dctx *c, uint32_t n, struct vg_record *r)
{
    const struct vg_schema *s = vg_schema_of(r->type);
    void *base = &r->u;
    size_t hint = 0;
    vg_schema_defaults(s, base);
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *k;
        size_t kn;
        uint64_t v;
        if (rd_key(c, &k, &kn) < 0)
            return -1;
        bool seq = key_is(k, kn, VG_K_SEQ), ts = key_is(k, kn, VG_K_TS);
        bool chain = key_is(k, kn, VG_K_CHAIN), sig = key_is(k, kn, VG_K_SIG);
        const char *name = seq ? VG_K_SEQ : ts ? VG_K_TS : chain ? VG_K_CHAIN : sig ? VG_K_SIG : NULL;
        bool type = key_is(k, kn, VG_K_TYPE);   /* read in pass 1 */
        const struct vg_field *f = name || type ? NULL : lookup(s, k, kn, &hint);
        c->path[0] = name ? name : f ? f->key : "";
        c->depth = 1;
        int rc;
        if (chain) {             /* outside the schema: event/chain.h */
            rc = rd_bin_exact(c, r->chain, VG_CHAIN_LEN);
            r->chained = rc == 0;
        } else if (sig) {
            rc = rd_bin_exact(c, r->sig, VG_SIG_LEN);
            r->sealed_sig = rc == 0;
        } else if (name) {
            rc = rd_uint(c, &v, UINT64_MAX);
            if (rc == 0 && vg_rec_has_seq(r->type))
                *VG_AT(base, ts ? 8 : 0, uint64_t) = v;
        } else if (f) {
            rc = decode_field(c, f, base);
        } else {
            rc = skip_value(c);        /* "type", or a key from a newer writer */
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

int vg_record_decode(const uint8_t *p, size_t len, struct vg_decoded *out,
                     struct vg_err *err)
{
    memset(out, 0, sizeof *out);
    struct dctx c = {.p = p, .end = p + len, .arena = &out->priv, .err = err,
                     .hint = len + len / 2 + 256};
    uint32_t n;
    if (len == 0 || !((*p & 0xf0) == 0x80 || *p == 0xde || *p == 0xdf)) {
        vg_errf(err, "record is %s, not a map", len ? type_desc(*p) : "empty");
        return -1;
    }
    int t;
    if (rd_container(&c, true, &n) < 0 || (t = find_type(c, n, out)) < 0)
        goto fail;
    out->rec.type = (enum vg_rec_type)t;
    if (decode_record(&c, n, &out->rec) < 0)
        goto fail;
    if (c.p != c.end) {
        vg_errf(err, "%zu bytes after the record", (size_t)(c.end - c.p));
        goto fail;
    }
    return 0;
fail:
    vg_decoded_free(out);
    memset(&out->rec, 0, sizeof out->rec);
    return -1;
}
