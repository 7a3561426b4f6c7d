/* schema.h (internal to event/): the record layout as data.  One table per
 * record type says, for every on-disk key, where its value lives in the
 * struct, what type it has and when it is left out.  The writer (msgpack),
 * the JSON output and the decoder all walk these tables, so a key added
 * here is written, printed and read back without touching anything else. */
#ifndef VG_EVENT_SCHEMA_H
#define VG_EVENT_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/event.h"

struct vg_enum {
    const char *const *names;
    unsigned n;
};
extern const struct vg_enum vg_enum_rec_type, vg_enum_class, vg_enum_decision,
    vg_enum_proc_kind, vg_enum_svc_kind;
const char *vg_enum_name(const struct vg_enum *e, int v);
int vg_enum_lookup(const struct vg_enum *e, const char *s, size_t len);

enum vg_fkind {
    VG_F_U64, VG_F_U32, VG_F_I64, VG_F_I32,
    VG_F_BOOL,    /* written only when true */
    VG_F_STR,     /* const char *, written when non-NULL */
    VG_F_STRV,    /* const char *const *, uint32 count at off_n; when count > 0 */
    VG_F_ENUM,    /* an enum (int) written as its name */
    VG_F_MAP,     /* nested map of fields of the same struct (sub->fields use
                     offsets relative to base + off) */
    VG_F_STRUCTV, /* array of structs (pointer at off, count at off_n) */
    VG_F_KVMAP,   /* struct vg_kv array written as a {name: value} map */
};

enum vg_omit {
    VG_OM_NEVER, /* always written */
    VG_OM_ZERO,  /* left out when 0 */
    VG_OM_NEG,   /* left out when negative (-1 = none) */
    VG_OM_NIL,   /* VG_F_MAP: written as nil (not left out) when absent */
};

struct vg_schema;

struct vg_field {
    const char *key;
    size_t klen;                      /* strlen(key), for fast lookups */
    enum vg_fkind kind;
    size_t off;
    size_t off_n;
    enum vg_omit omit;
    int64_t def;                      /* decoded value when absent */
    bool (*when)(const void *base);   /* extra condition to be present */
    const struct vg_schema *sub;      /* MAP, STRUCTV */
    const struct vg_enum *en;         /* ENUM */
};

struct vg_schema {
    const struct vg_field *f;
    size_t n;
    size_t size; /* element size for STRUCTV */
};

/* Schema of a record type; base is &rec->u.  has_seq: the struct starts
 * with uint64 seq, ts_ns (every record but the header). */
const struct vg_schema *vg_schema_of(enum vg_rec_type t);
bool vg_rec_has_seq(enum vg_rec_type t);

/* Presence of a field in base under its omission rules. */
bool vg_field_present(const struct vg_field *f, const void *base);
/* Number of map entries a (sub)schema produces. */
uint32_t vg_schema_count(const struct vg_schema *s, const void *base);
/* Set every field with a non-zero default (recursing into maps). */
void vg_schema_defaults(const struct vg_schema *s, void *base);

/* A sink for a structured value: msgpack or JSON. */
struct vg_sink {
    void (*map)(void *ctx, uint32_t n);
    void (*map_end)(void *ctx);
    void (*arr)(void *ctx, uint32_t n);
    void (*arr_end)(void *ctx);
    void (*key)(void *ctx, const char *k);
    void (*str)(void *ctx, const char *s);
    void (*u64)(void *ctx, uint64_t v);
    void (*i64)(void *ctx, int64_t v);
    void (*boolean)(void *ctx, bool v);
    void (*nil)(void *ctx);
};
/* Emit the record as one map: type, seq (the given one), ts, then every
 * present field in table order. */
void vg_schema_emit(const struct vg_record *r, uint64_t seq,
                    const struct vg_sink *s, void *ctx);
/* The same, but the map is left open for extra more entries, which the
 * caller emits after the record's own and then closes it (map_end): the
 * writer's chain value and signature, JSON's hex of them. */
void vg_schema_emit_open(const struct vg_record *r, uint64_t seq, uint32_t extra,
                         const struct vg_sink *s, void *ctx);

/* Typed access to a field at base + off. */
#define VG_AT(base, off, T) ((T *)(void *)((char *)(base) + (off)))
#define VG_CAT(base, off, T) ((T const *)(const void *)((const char *)(base) + (off)))
#endif
