/* extra.c: see extra.h.  The bytes have passed the reader's validator
 * (vg_mp_check) before they get here; msgpack-c unpacks them once more into
 * a tree only for the records a summary keeps, and every type is checked
 * before it is used. */
#include "insight/extra.h"

#include <msgpack.h>
#include <string.h>

#include "util/util.h"

/* Interpreter-owned code: what a reader of the candidate's source skips. */
static const char *const lib_marks[] = {
    "/site-packages/", "/dist-packages/", "/usr/lib/python", "/usr/local/lib/python", "<frozen ",
};

static bool is_lib_file(const msgpack_object_str *f)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(lib_marks); i++)
        if (memmem(f->ptr, f->size, lib_marks[i], strlen(lib_marks[i])))
            return true;
    return false;
}

static const msgpack_object *map_get(const msgpack_object *m, const char *key)
{
    if (!m || m->type != MSGPACK_OBJECT_MAP)
        return NULL;
    size_t n = strlen(key);
    for (uint32_t i = 0; i < m->via.map.size; i++) {
        const msgpack_object *k = &m->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
            !memcmp(k->via.str.ptr, key, n))
            return &m->via.map.ptr[i].val;
    }
    return NULL;
}

static const msgpack_object_str *str_of(const msgpack_object *o)
{
    return o && (o->type == MSGPACK_OBJECT_STR || o->type == MSGPACK_OBJECT_BIN)
               ? &o->via.str : NULL;
}

static const char *base_of(const msgpack_object_str *s, size_t *n)
{
    const char *slash = memrchr(s->ptr, '/', s->size);
    const char *b = slash ? slash + 1 : s->ptr;
    *n = s->size - (size_t)(b - s->ptr);
    return b;
}

/* One frame as "file:line in func" (the file's last component). */
static bool put_frame(const msgpack_object *fr, struct vg_buf *out)
{
    const msgpack_object_str *file = str_of(map_get(fr, "file"));
    const msgpack_object_str *func = str_of(map_get(fr, "func"));
    const msgpack_object *line = map_get(fr, "line");
    if (!file || is_lib_file(file) || !line || line->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return false;
    size_t bn;
    const char *b = base_of(file, &bn);
    vg_buf_printf(out, "%.*s:%llu", (int)bn, b, (unsigned long long)line->via.u64);
    if (func)
        vg_buf_printf(out, " in %.*s", (int)func->size, func->ptr);
    return true;
}

static bool find_source(const msgpack_object *rec, struct vg_buf *out)
{
    const msgpack_object *py = map_get(rec, "py");
    if (!py || py->type != MSGPACK_OBJECT_ARRAY)
        return false;
    for (uint32_t i = 0; i < py->via.array.size; i++)
        if (put_frame(&py->via.array.ptr[i], out))
            return true;
    return false;
}

static bool find_host(const msgpack_object *rec, struct vg_buf *out)
{
    const msgpack_object_str *h = str_of(map_get(map_get(rec, "args"), "host"));
    if (!h || !h->size)
        return false;
    vg_buf_put(out, h->ptr, h->size);
    return true;
}

static bool with_tree(const uint8_t *rec, size_t len, struct vg_buf *out,
                      bool (*fn)(const msgpack_object *, struct vg_buf *))
{
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    bool ok = msgpack_unpack_next(&u, (const char *)rec, len, &off) == MSGPACK_UNPACK_SUCCESS &&
              fn(&u.data, out);
    msgpack_unpacked_destroy(&u);
    return ok;
}

bool vg_extra_source(const uint8_t *rec, size_t len, struct vg_buf *out)
{
    return with_tree(rec, len, out, find_source);
}

bool vg_extra_host(const uint8_t *rec, size_t len, struct vg_buf *out)
{
    return with_tree(rec, len, out, find_host);
}
