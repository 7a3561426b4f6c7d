/* fuzz_json.c: libFuzzer target for the JSON reader (batch task lines):
 * any bytes give a value or a one-line error, never a crash, a leak or a
 * hang; a value that parses writes back out as JSON that parses again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vg_err err;
    struct vg_jv *v = vg_jv_parse((const char *)data, size, &err);
    if (!v)
        return 0;
    struct vg_buf out = {0};
    struct vg_json j;
    vg_json_init(&j, &out, false);
    vg_jv_write(v, &j);
    struct vg_jv *again = vg_jv_parse(out.data, out.len, &err);
    if (!again)
        abort(); /* what the writer wrote must read back */
    vg_jv_free(again);
    vg_buf_free(&out);
    vg_jv_free(v);
    return 0;
}
