/* util.c: see util.h. */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

void vg_errf(struct vg_err *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

static void oom(void)
{
    static const char m[] = "vigil: out of memory\n";
    (void)!write(2, m, sizeof m - 1);
    abort();
}

void *vg_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *vg_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *vg_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        oom();
    return p;
}

char *vg_xstrdup(const char *s)
{
    return vg_xstrndup(s, strlen(s));
}

char *vg_xstrndup(const char *s, size_t n)
{
    char *p = vg_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *vg_xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0)
        oom();
    return s;
}

static void buf_grow(struct vg_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->data = vg_xrealloc(b->data, cap);
    b->cap = cap;
}

void vg_buf_put(struct vg_buf *b, const void *p, size_t n)
{
    buf_grow(b, n);
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

void vg_buf_puts(struct vg_buf *b, const char *s)
{
    vg_buf_put(b, s, strlen(s));
}

void vg_buf_printf(struct vg_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        vg_buf_put(b, small, (size_t)n);
        return;
    }
    buf_grow(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void vg_buf_free(struct vg_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

bool vg_parse_u64(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

/* Parse "<number><suffix>" where number may have a fraction. */
static bool parse_scaled(const char *s, double *num, const char **suffix)
{
    if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0)
        return false;
    *num = v;
    *suffix = end;
    return true;
}

bool vg_parse_size(const char *s, uint64_t *out)
{
    double v;
    const char *suf;
    if (!parse_scaled(s, &v, &suf))
        return false;
    double mul = 1;
    switch (*suf) {
    case 0: break;
    case 'k': case 'K': mul = 1024.0; suf++; break;
    case 'm': case 'M': mul = 1024.0 * 1024; suf++; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; suf++; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; suf++; break;
    default: return false;
    }
    if (*suf == 'i' && mul > 1)
        suf++;
    if ((*suf == 'B' || *suf == 'b') && suf[1] == 0)
        suf++;
    if (*suf)
        return false;
    double r = v * mul;
    if (r >= 18446744073709551615.0)
        return false;
    *out = (uint64_t)r;
    return true;
}

bool vg_parse_duration(const char *s, uint64_t *out_ms)
{
    double v;
    const char *suf;
    if (!parse_scaled(s, &v, &suf))
        return false;
    double mul;
    if (!*suf || !strcmp(suf, "s"))
        mul = 1000;
    else if (!strcmp(suf, "ms"))
        mul = 1;
    else if (!strcmp(suf, "m") || !strcmp(suf, "min"))
        mul = 60000;
    else if (!strcmp(suf, "h"))
        mul = 3600000;
    else
        return false;
    double r = v * mul;
    if (r >= 1e15)
        return false;
    *out_ms = (uint64_t)(r + 0.5);
    return true;
}

int vg_open_regular(const char *path, struct vg_err *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        vg_errf(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        vg_errf(err, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        vg_errf(err, "%s: %s", path, S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
        close(fd);
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        vg_errf(err, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

char *vg_read_file(const char *path, size_t max, size_t *len, struct vg_err *err)
{
    int fd = vg_open_regular(path, err);
    if (fd < 0)
        return NULL;
    struct vg_buf b = {0};
    char tmp[8192];
    for (;;) {
        ssize_t n = read(fd, tmp, sizeof tmp);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            vg_errf(err, "%s: %s", path, strerror(errno));
            close(fd);
            vg_buf_free(&b);
            return NULL;
        }
        if (n == 0)
            break;
        if (b.len + (size_t)n > max) {
            vg_errf(err, "%s: larger than %zu bytes", path, max);
            close(fd);
            vg_buf_free(&b);
            return NULL;
        }
        vg_buf_put(&b, tmp, (size_t)n);
    }
    close(fd);
    if (!b.data)
        vg_buf_put(&b, "", 0);
    if (len)
        *len = b.len;
    return b.data;
}

int vg_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t vg_now_mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
uint64_t vg_now_wall_ns(void) { return clock_ns(CLOCK_REALTIME); }

struct timespec vg_realtime_in(long ns)
{
    const long per_s = 1000000000L;
    uint64_t at = vg_now_wall_ns() + (uint64_t)ns;
    return (struct timespec){.tv_sec = (time_t)(at / (uint64_t)per_s),
                             .tv_nsec = (long)(at % (uint64_t)per_s)};
}

uint64_t vg_hash_str(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

int vg_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        /* The lowest free descriptor is this one: 0..fd-1 are open. */
        int n = open("/dev/null", O_RDWR | O_NOCTTY);
        if (n < 0)
            return -1;
        if (n != fd) {
            close(n);
            errno = EBADF;
            return -1;
        }
    }
    return 0;
}

int vg_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
