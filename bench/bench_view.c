/* bench_view.c: how fast the viewer's model opens and filters a big log.
 *   bench_view [LOG]
 * Without LOG, writes a 1,000,000-record log with genlog (next to this
 * binary) into a temporary directory first.  Prints one line per
 * measurement: wall time, and for opening the peak memory against the file
 * size. */
#include <errno.h>
#include <libgen.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "viewer/view_filter.h"
#include "viewer/model.h"
#include "viewer/report.h"

#define DEFAULT_RECORDS "1000000"

extern char **environ;

static double ms_since(uint64_t t0)
{
    return (double)(vg_now_mono_ns() - t0) / 1e6;
}

/* Peak resident memory in kB, from /proc/self/status. */
static long peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static int generate(const char *self, const char *out)
{
    char *copy = vg_xstrdup(self);
    char *gen = vg_xasprintf("%s/genlog", dirname(copy));
    free(copy);
    char *argv[] = {gen, (char *)out, DEFAULT_RECORDS, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, gen, NULL, NULL, argv, environ);
    int st = 0;
    if (rc == 0 && waitpid(pid, &st, 0) < 0)
        rc = errno;
    if (rc || !WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "bench_view: cannot run %s: %s\n", gen, rc ? strerror(rc) : "failed");
        free(gen);
        return -1;
    }
    free(gen);
    return 0;
}

static void time_filter(struct vw_model *m, const char *what, struct vw_filter *f)
{
    struct vw_rows rows = {0};
    uint64_t t0 = vg_now_mono_ns();
    vw_rows_rebuild(&rows, m, f);
    printf("filter %-22s %9.1f ms  %zu rows\n", what, ms_since(t0), rows.n);
    vw_rows_free(&rows);
}

static void time_search(struct vw_model *m, const struct vw_rows *all, const char *needle)
{
    uint64_t t0 = vg_now_mono_ns();
    long row = vw_find_text(m, all, all->n, 0, 1, needle);
    printf("search %-22s %9.1f ms  row %ld\n", needle, ms_since(t0), row);
}

static void time_decode(struct vw_model *m)
{
    struct vw_lines lines = {0};
    uint64_t t0 = vg_now_mono_ns();
    size_t k = 0;
    for (size_t i = 0; i < m->n; i += m->n / 1000 + 1, k++) {
        struct vg_err err;
        const struct vg_record *r = vw_model_record(m, i, &err);
        if (r)
            vw_report_record(r, &lines);
        vw_lines_clear(&lines);
    }
    printf("detail %-22s %9.3f ms  per record (%zu records)\n", "decode+format",
           ms_since(t0) / (double)(k ? k : 1), k);
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/bench_view.XXXXXX";
    char *path = argc > 1 ? vg_xstrdup(argv[1]) : NULL;
    if (!path) {
        if (!mkdtemp(dir)) {
            perror("bench_view: mkdtemp");
            return 1;
        }
        path = vg_xasprintf("%s/big.log", dir);
        uint64_t t0 = vg_now_mono_ns();
        if (generate(argv[0], path) < 0)
            return 1;
        printf("generate %s records: %.0f ms\n", DEFAULT_RECORDS, ms_since(t0));
    }
    struct stat st;
    if (stat(path, &st) < 0) {
        fprintf(stderr, "bench_view: %s: %s\n", path, strerror(errno));
        return 1;
    }
    long rss0 = peak_rss_kb();
    struct vg_err err = {{0}};
    uint64_t t0 = vg_now_mono_ns();
    struct vw_model *m = vw_model_open(path, false, &err);
    if (!m) {
        fprintf(stderr, "bench_view: %s\n", err.msg);
        return 1;
    }
    double open_ms = ms_since(t0);
    long rss = peak_rss_kb();
    printf("open   %-22s %9.1f ms  %zu records, %.1f MiB file, peak +%.1f MiB (%.2fx file)\n",
           "index+decode", open_ms, m->n, st.st_size / 1048576.0, (rss - rss0) / 1024.0,
           (rss - rss0) * 1024.0 / (double)(st.st_size ? st.st_size : 1));

    struct vw_filter f = {.cls = -1};
    time_filter(m, "none", &f);
    f.decisions = VW_REFUSED_MASK;
    time_filter(m, "denials", &f);
    f = (struct vw_filter){.cls = VG_CLASS_CONNECT};
    time_filter(m, "class=connect", &f);
    f = (struct vw_filter){.cls = -1, .proc = 1, .pid = 1};
    time_filter(m, "process 1", &f);
    f = (struct vw_filter){.cls = -1, .text = "id_rsa"};
    time_filter(m, "text=id_rsa", &f);
    f = (struct vw_filter){.cls = -1, .text = "NoSuchThing"};
    time_filter(m, "text=NoSuchThing", &f);

    struct vw_rows all = {0};
    f = (struct vw_filter){.cls = -1};
    vw_rows_rebuild(&all, m, &f);
    time_search(m, &all, "example.com");
    time_search(m, &all, "no such text anywhere");
    t0 = vg_now_mono_ns();
    long row = vw_find_refused(m, &all, all.n, all.n / 2, 1);
    printf("next   %-22s %9.3f ms  row %ld\n", "denial", ms_since(t0), row);
    time_decode(m);
    vw_rows_free(&all);
    vw_model_close(m);
    if (argc <= 1) {
        unlink(path);
        rmdir(dir);
    }
    free(path);
    return 0;
}
