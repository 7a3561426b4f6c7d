/* reader.c: sequential reading of a run log with read(2), a window of the
 * file at a time.  A record that is not complete yet stays in the window;
 * at end of file it makes the status TRUNCATED, and a follower calling
 * vg_reader_next again later simply reads on from where the file ended.
 * Records of a type this build does not know are skipped (newer logs stay
 * readable); anything else that does not decode stops the reader. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event/reader.h"

#define CHUNK (64u * 1024)

struct vg_reader {
    int fd;
    uint8_t *buf;
    size_t cap, start, end;  /* unread bytes are buf[start..end) */
    uint64_t base;           /* file offset of buf[0] */
    enum vg_mp_status status;
    bool dead;
    char err[600];
};

struct vg_reader *vg_reader_open(const char *path, struct vg_err *err)
{
    int fd = vg_open_regular(path, err);   /* a FIFO would block the reader */
    if (fd < 0)
        return NULL;
    struct vg_reader *r = vg_xcalloc(1, sizeof *r);
    r->fd = fd;
    r->cap = CHUNK;
    r->buf = vg_xmalloc(r->cap);
    return r;
}

/* Make room (move the unread bytes to the front, grow when the window is
 * all one unfinished record) and fill the window as far as the file goes.
 * Returns bytes added, 0 at end of file, -1 on a read error. */
static ssize_t fill(struct vg_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->base += r->start;
        r->end -= r->start;
        r->start = 0;
    }
    if (r->end == r->cap) {
        r->cap *= 2;
        r->buf = vg_xrealloc(r->buf, r->cap);
    }
    size_t added = 0;
    while (r->end < r->cap) {
        ssize_t n = read(r->fd, r->buf + r->end, r->cap - r->end);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(r->err, sizeof r->err, "read: %s", strerror(errno));
            return -1;
        }
        if (n == 0)
            break;
        r->end += (size_t)n;
        added += (size_t)n;
    }
    return (ssize_t)added;
}

static int stop(struct vg_reader *r, const char *why)
{
    if (why != r->err)
        snprintf(r->err, sizeof r->err, "%s", why);
    r->status = VG_MP_CORRUPT;
    r->dead = true;
    return -1;
}

int vg_reader_next(struct vg_reader *r, struct vg_decoded *out)
{
    memset(out, 0, sizeof *out);
    while (!r->dead) {
        size_t n;
        const char *why = "not msgpack";
        enum vg_mp_status st = vg_mp_check(r->buf + r->start, r->end - r->start, &n, &why);
        if (st == VG_MP_CORRUPT)
            return stop(r, why);
        if (st == VG_MP_TRUNCATED) {
            ssize_t added = fill(r);
            if (added < 0)
                return stop(r, r->err);
            if (added == 0) {
                r->status = r->end > r->start ? VG_MP_TRUNCATED : VG_MP_OK;
                if (r->status == VG_MP_TRUNCATED)
                    snprintf(r->err, sizeof r->err, "incomplete record (%zu bytes)", r->end - r->start);
                return 0;
            }
            continue;
        }
        struct vg_err err;
        int rc = vg_record_decode(r->buf + r->start, n, out, &err);
        if (rc < 0 && !out->unknown_type)
            return stop(r, err.msg);
        r->start += n;
        if (rc == 0) {
            r->status = VG_MP_OK;
            return 1;
        }
    }
    return -1;
}

enum vg_mp_status vg_reader_status(const struct vg_reader *r) { return r->status; }

uint64_t vg_reader_offset(const struct vg_reader *r) { return r->base + r->start; }
const char *vg_reader_error(const struct vg_reader *r) { return r->err; }

void vg_reader_close(struct vg_reader *r)
{
    if (!r)
        return;
    close(r->fd);
    free(r->buf);
    free(r);
}
