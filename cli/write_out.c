/* write_out.c: see write_out.h. */
#include "cli/write_out.h"

int vg_write_out(const char *path, const struct vg_outfile_kind *k, const struct vg_buf *b,
                 struct vg_err *err)
{
    struct vg_outfile f = {.fd = -1};
    int rc = vg_outfile_reserve(&f, path, k, err);
    if (rc == 0 && vg_write_all(f.fd, b->data, b->len) < 0) {
        vg_errf(err, "write %s: %m", path);
        rc = -1;
    }
    if (rc == 0)
        rc = vg_outfile_commit(&f, err);
    vg_outfile_discard(&f);
    return rc;
}
