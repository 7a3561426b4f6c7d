/* bench_reader.c: how fast a run log is read back.
 *   bench_reader [FILE]
 * Without FILE, makes a 1M-record log with the genlog next to this binary.
 * Reports records/s and MB/s for: scanning record boundaries (what the
 * viewer's indexer does on an mmap), scanning + decoding, the file reader
 * (vg_reader), and decoding + formatting text lines (`vigil log`). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event/reader.h"

enum stage { SCAN, DECODE, TEXT };
static const char *const stage_name[] = {"scan", "decode", "text"};

static double now(void) { return (double)vg_now_mono_ns() / 1e9; }

static void report(const char *what, uint64_t n, size_t bytes, double secs)
{
    printf("%-8s %9llu records %7.3f s %8.2f M records/s %8.1f MB/s\n", what,
           (unsigned long long)n, secs, (double)n / secs / 1e6, (double)bytes / secs / 1e6);
}

/* One pass over an in-memory log. */
static uint64_t pass(const uint8_t *p, size_t len, enum stage st)
{
    struct vg_buf line = {0};
    size_t off = 0, n;
    uint64_t count = 0;
    while (off < len && vg_mp_skip(p + off, len - off, &n) == VG_MP_OK) {
        if (st != SCAN) {
            struct vg_decoded d;
            struct vg_err err;
            if (vg_record_decode(p + off, n, &d, &err) < 0) {
                fprintf(stderr, "bench_reader: byte %zu: %s\n", off, err.msg);
                exit(1);
            }
            if (st == TEXT) {
                line.len = 0;
                vg_record_text(&d.rec, &line, false);
            }
            vg_decoded_free(&d);
        }
        off += n;
        count++;
    }
    vg_buf_free(&line);
    return count;
}

static uint64_t read_file(const char *path)
{
    struct vg_err err;
    struct vg_reader *r = vg_reader_open(path, &err);
    if (!r) {
        fprintf(stderr, "bench_reader: %s\n", err.msg);
        exit(1);
    }
    struct vg_decoded d;
    uint64_t n = 0;
    while (vg_reader_next(r, &d) == 1) {
        vg_decoded_free(&d);
        n++;
    }
    vg_reader_close(r);
    return n;
}

/* Make a log with ./genlog (beside this binary) when none was given. */
static char *make_log(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0)
        return NULL;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    char *path = vg_xasprintf("/tmp/bench_reader.%d.msgpack", (int)getpid());
    char *cmd = vg_xasprintf("'%s/genlog' '%s' 1000000 --seed 1", self, path);
    int rc = system(cmd);
    free(cmd);
    if (rc != 0) {
        free(path);
        return NULL;
    }
    return path;
}

int main(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: bench_reader [FILE]\n");
        return 2;
    }
    char *made = argc == 2 ? NULL : make_log();
    const char *path = argc == 2 ? argv[1] : made;
    if (!path) {
        fprintf(stderr, "bench_reader: could not make a log with genlog\n");
        return 1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
        fprintf(stderr, "bench_reader: %s: cannot read (or empty)\n", path);
        return 1;
    }
    size_t len = (size_t)st.st_size;
    const uint8_t *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        perror("bench_reader: mmap");
        return 1;
    }
    printf("%s: %.1f MB\n", path, (double)len / 1e6);
    pass(p, len, SCAN); /* warm the page cache */
    for (int s = SCAN; s <= TEXT; s++) {
        double t0 = now();
        uint64_t n = pass(p, len, (enum stage)s);
        report(stage_name[s], n, len, now() - t0);
    }
    double t0 = now();
    uint64_t n = read_file(path);
    report("reader", n, len, now() - t0);
    munmap((void *)p, len);
    if (made) {
        unlink(made);
        free(made);
    }
    return 0;
}
