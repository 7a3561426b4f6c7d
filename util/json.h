/* json.h: a tiny streaming JSON writer (result records, `vigil log --json`).
 * Commas are tracked per nesting level so callers just emit keys/values. */
#ifndef VG_JSON_H
#define VG_JSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/util.h"

struct vg_json {
    struct vg_buf *out;
    int depth;
    bool need_comma[64];
    bool after_key;
    bool pretty;
};
void vg_json_init(struct vg_json *j, struct vg_buf *out, bool pretty);
void vg_json_obj_begin(struct vg_json *j);
void vg_json_obj_end(struct vg_json *j);
void vg_json_arr_begin(struct vg_json *j);
void vg_json_arr_end(struct vg_json *j);
void vg_json_key(struct vg_json *j, const char *key);
void vg_json_str(struct vg_json *j, const char *s);           /* NULL -> null */
void vg_json_strn(struct vg_json *j, const char *s, size_t n); /* bytes, escaped */
void vg_json_int(struct vg_json *j, int64_t v);
void vg_json_uint(struct vg_json *j, uint64_t v);
void vg_json_double(struct vg_json *j, double v);
/* A number already in JSON's syntax (as vg_jv_parse keeps it), as is. */
void vg_json_number_text(struct vg_json *j, const char *text);
void vg_json_bool(struct vg_json *j, bool v);
void vg_json_null(struct vg_json *j);
#endif
