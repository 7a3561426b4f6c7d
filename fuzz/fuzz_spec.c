/* fuzz_spec.c: libFuzzer target for the image build spec parser
 * (image/spec.c): any bytes must give either a spec or one line
 * "FILE:LINE: problem", never a crash, a leak or a hang; a spec that
 * parses has a suite, a mirror and a variant, and only words its checks
 * let through. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Has path a ".." component?  ("<...." is a name of its own, not one.) */
static int dotdot(const char *path)
{
    for (const char *c = path; c; c = strchr(c, '/')) {
        c += *c == '/';
        if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == 0))
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vg_spec s;
    struct vg_err err;
    if (vg_spec_parse("fuzz.spec", (const char *)data, size, &s, &err) == 0) {
        if (!s.suite || !s.mirror || !s.variant)
            abort();
        for (size_t i = 0; i < s.npackages; i++)
            if (s.packages[i][0] == '-' || strchr(s.packages[i], ','))
                abort(); /* would reach mmdebstrap as an option or a list */
        for (size_t i = 0; i < s.nadds; i++)
            if (s.adds[i].dst[0] == '/' || dotdot(s.adds[i].src))
                abort();
    } else if (strncmp(err.msg, "fuzz.spec:", strlen("fuzz.spec:")) || strchr(err.msg, '\n'))
        abort(); /* the one-line error names the file and line */
    vg_spec_free(&s);
    return 0;
}
