/* util.h: small helpers shared by every layer: error messages, checked
 * allocation, a growable string buffer, size/duration parsing. */
#ifndef VG_UTIL_H
#define VG_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define VG_VERSION "0.1.0"
#define VG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* An error travels up as a one-line message; the CLI prints it once. */
struct vg_err {
    char msg[512];
};
void vg_errf(struct vg_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Allocation failure is not a recoverable condition for a supervisor:
 * these abort with a message instead of returning NULL. */
void *vg_xmalloc(size_t n);
void *vg_xcalloc(size_t n, size_t size);
void *vg_xrealloc(void *p, size_t n);
char *vg_xstrdup(const char *s);
char *vg_xstrndup(const char *s, size_t n);
char *vg_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The value of one hex digit (either case), or -1. */
int vg_hex_digit(char c);

/* Growable byte buffer, always NUL-terminated. */
struct vg_buf {
    char *data;
    size_t len, cap;
};
void vg_buf_put(struct vg_buf *b, const void *p, size_t n);
void vg_buf_puts(struct vg_buf *b, const char *s);
void vg_buf_printf(struct vg_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void vg_buf_free(struct vg_buf *b);

/* "512M", "1G", "64k", "1024" -> bytes.  Returns false on junk or overflow. */
bool vg_parse_size(const char *s, uint64_t *out);
/* "60s", "500ms", "2m", "1h", "1.5s", "60" (seconds) -> milliseconds. */
bool vg_parse_duration(const char *s, uint64_t *out_ms);
/* plain non-negative decimal integer */
bool vg_parse_u64(const char *s, uint64_t *out);

/* Open path for reading only if it is a regular file: a FIFO, a device or
 * a socket given where vigil reads a file (a policy, an include, a task
 * file, a log) would block it forever or never end.  The open itself
 * cannot block (O_NONBLOCK, cleared after the check).  -1 with err set
 * ("PATH: not a regular file"). */
int vg_open_regular(const char *path, struct vg_err *err);
/* Read a whole regular file (at most max bytes) into a NUL-terminated buffer. */
char *vg_read_file(const char *path, size_t max, size_t *len, struct vg_err *err);

/* Write all of buf, retrying on EINTR/short writes.  -1 with errno on error. */
int vg_write_all(int fd, const void *buf, size_t n);

/* FNV-1a of a NUL-terminated string, for the string-keyed hash tables. */
uint64_t vg_hash_str(const char *s);

/* Open /dev/null on whichever of fds 0, 1, 2 the caller closed, so that
 * no file vigil opens later (the log) becomes stdout or stderr and takes
 * the candidate's output.  -1 with errno if it cannot. */
int vg_std_fds(void);

uint64_t vg_now_mono_ns(void);
uint64_t vg_now_wall_ns(void);
/* CLOCK_REALTIME ns from now, as the absolute time pthread's timed waits
 * take. */
struct timespec vg_realtime_in(long ns);

#endif
