/* fuzz_reader.c: libFuzzer target for everything that reads a run log.
 * The input is treated as a log: records are found with vg_mp_check and
 * decoded with vg_record_decode one after another, as the reader does; what
 * decodes is rendered as text, summary and JSON, then written back through
 * the writer and decoded again: the JSON must not change (the writer, the
 * decoder and the JSON output share one schema, so any drift is a bug).
 * The same bytes also go through the file reader (vg_reader) via a memfd. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "event/reader.h"
#include "event/writer.h"

/* One scratch memfd for the whole run (syscalls are most of the cost). */
static int scratch_fd(void)
{
    static int fd = -1;
    if (fd < 0)
        fd = memfd_create("rt", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
        abort();
    return fd;
}

static void roundtrip(struct vg_record *rec, struct vg_buf *a, struct vg_buf *b)
{
    int fd = scratch_fd();
    struct vg_log *log = vg_log_from_fd(dup(fd), "rt");
    if (vg_log_write(log, rec) == 0) {
        a->len = 0;
        vg_record_json(rec, a);    /* after the write: the writer set seq */
        off_t n = lseek(fd, 0, SEEK_END);
        uint8_t *p = malloc((size_t)n);
        struct vg_decoded d;
        struct vg_err err;
        size_t len;
        if (!p || pread(fd, p, (size_t)n, 0) != n)
            abort();
        if (vg_mp_skip(p, (size_t)n, &len) != VG_MP_OK || len != (size_t)n ||
            vg_record_decode(p, len, &d, &err) < 0) {
            fprintf(stderr, "re-decode failed: %s\n", err.msg);
            abort();
        }
        b->len = 0;
        vg_record_json(&d.rec, b);
        if (strcmp(a->data, b->data)) {
            fprintf(stderr, "round trip changed the record:\n%s\n%s\n", a->data, b->data);
            abort();
        }
        vg_decoded_free(&d);
        free(p);
    }
    vg_log_close(log);
}

static void scan(const uint8_t *data, size_t size)
{
    struct vg_buf t = {0}, a = {0}, b = {0};
    size_t off = 0, n;
    while (off < size) {
        const char *why = NULL;
        enum vg_mp_status st = vg_mp_check(data + off, size - off, &n, &why);
        if (st == VG_MP_CORRUPT && !why)
            abort();                 /* corrupt always says why */
        if (st != VG_MP_OK)
            break;
        if (n == 0 || n > size - off)
            abort();
        struct vg_decoded d;
        struct vg_err err;
        if (vg_record_decode(data + off, n, &d, &err) == 0) {
            t.len = 0;
            vg_record_text(&d.rec, &t, true);
            vg_record_summary(&d.rec, &t);
            roundtrip(&d.rec, &a, &b);
            vg_decoded_free(&d);
        }
        off += n;
    }
    vg_buf_free(&t);
    vg_buf_free(&a);
    vg_buf_free(&b);
}

static void read_file(const uint8_t *data, size_t size)
{
    int fd = scratch_fd();
    if (vg_write_all(fd, data, size) < 0)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct vg_err err;
    struct vg_reader *r = vg_reader_open(path, &err);
    if (r) {
        struct vg_decoded d;
        while (vg_reader_next(r, &d) == 1)
            vg_decoded_free(&d);
        if (vg_reader_offset(r) > size)
            abort();
        vg_reader_close(r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    scan(data, size);
    read_file(data, size);
    return 0;
}
