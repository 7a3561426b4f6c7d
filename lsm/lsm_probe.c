/* lsm_probe.c: load lsm/probe.bpf.c and check, on the running kernel, what the
 * kernel engine (--engine lsm) relies on: a BPF LSM program attaches to
 * file_open, sees only the tasks of one cgroup, records the opened path in
 * a ring buffer, and its refusal reaches open(2) as EPERM.
 *
 * Exit 0: all of it works.  Exit 2, with one line on stderr: BPF LSM
 * programs cannot be loaded or attached here (the engine's fallback reads
 * this).  Exit 1: they load but a check failed.  Exit 3: set-up failed. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "lsm/probe.h"
#include "lsm/probe_cgroup.h"
#include "probe.skel.h"

enum probe_exit { EXIT_PASS = 0, EXIT_CHECK = 1, EXIT_NO_LSM = 2, EXIT_SETUP = 3 };

#define PROG "vigil-lsm-probe"
#define CGROUP_ROOT "/sys/fs/cgroup"
#define LSM_LIST "/sys/kernel/security/lsm"
#define ERR_MAX 512

/* The files the probe opens, in a fresh directory. */
struct probe_files {
    char dir[PATH_MAX];
    char allowed[PATH_MAX];
    char deny_dir[PATH_MAX];
    char denied[PATH_MAX];
};

/* What the ring buffer reader saw. */
struct probe_seen {
    const struct probe_files *files;
    unsigned pid;
    int records;
    bool allowed;   /* the allowed open, verdict 0 */
    bool denied;    /* the denied open, verdict -EPERM */
};

/* snprintf that says whether all of it fit: 0, or -1 (out truncated). */
static int fmt_into(char *out, size_t outlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fmt_into(char *out, size_t outlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, outlen, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < outlen ? 0 : -1;
}

/* An error message for main to print: truncated if it must be. */
#define set_err(err, errlen, ...) ((void)fmt_into((err), (errlen), __VA_ARGS__))

static int libbpf_say(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    (void)level;
    return vfprintf(stderr, fmt, ap);
}

/* The kernel's active LSMs, for the one-line reason when loading fails. */
static void lsm_list(char *out, size_t outlen)
{
    set_err(out, outlen, "unknown (%s unreadable)", LSM_LIST);
    FILE *f = fopen(LSM_LIST, "re");
    if (!f)
        return;
    char line[ERR_MAX];
    if (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        /* Commas around both: "bpf" is matched as a whole name. */
        char padded[ERR_MAX + 2];
        (void)fmt_into(padded, sizeof(padded), ",%s,", line);
        (void)fmt_into(out, outlen, "%s%s", line, strstr(padded, ",bpf,") ? "" : " (no bpf)");
    }
    (void)fclose(f);
}

static int write_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, S_IRUSR | S_IWUSR);
    if (fd < 0)
        return -1;
    return close(fd);
}

static int make_files(struct probe_files *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof(*f));
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    if (fmt_into(f->dir, sizeof(f->dir), "%s/vigil-lsm-probe.XXXXXX", tmp) != 0) {
        set_err(err, errlen, "TMPDIR too long");
        return -1;
    }
    if (!mkdtemp(f->dir)) {
        set_err(err, errlen, "mkdtemp %s: %s", f->dir, strerror(errno));
        return -1;
    }
    if (fmt_into(f->allowed, sizeof(f->allowed), "%s/allowed", f->dir) != 0 ||
        fmt_into(f->deny_dir, sizeof(f->deny_dir), "%s/deny", f->dir) != 0 ||
        fmt_into(f->denied, sizeof(f->denied), "%s/secret", f->deny_dir) != 0) {
        set_err(err, errlen, "TMPDIR too long");
        return -1;
    }
    if (write_file(f->allowed) != 0 || mkdir(f->deny_dir, S_IRWXU) != 0 || write_file(f->denied) != 0) {
        set_err(err, errlen, "make files in %s: %s", f->dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* Remove what make_files made; each step may find nothing to remove. */
static void remove_files(const struct probe_files *f)
{
    (void)unlink(f->denied);
    (void)rmdir(f->deny_dir);
    (void)unlink(f->allowed);
    (void)rmdir(f->dir);
}

static int on_event(void *ctx, void *data, size_t size)
{
    struct probe_seen *seen = ctx;
    const struct probe_event *e = data;
    if (size < sizeof(*e))
        return 0;
    seen->records++;
    if (e->pid != seen->pid || e->path_len <= 0)
        return 0;
    if (strcmp(e->path, seen->files->allowed) == 0 && e->verdict == 0)
        seen->allowed = true;
    if (strcmp(e->path, seen->files->denied) == 0 && e->verdict == -EPERM)
        seen->denied = true;
    return 0;
}

/* Watch cgroup id (0: nobody) with the rule "deny under prefix". */
static int configure(struct probe_bpf *skel, unsigned long long id, const char *prefix)
{
    struct probe_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.cgroup_id = id;
    size_t n = strlen(prefix);
    if (n >= sizeof(cfg.deny.prefix)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(cfg.deny.prefix, prefix, n);
    cfg.deny.len = (unsigned)n;
    unsigned key = 0;
    return bpf_map__update_elem(skel->maps.probe_settings, &key, sizeof(key), &cfg, sizeof(cfg), BPF_ANY);
}

/* The opens under test, between attach and detach: each result is kept,
 * judged after the ring buffer is read. */
struct probe_opens {
    int allowed_errno;  /* 0: opened */
    int denied_errno;   /* 0: opened (wrong) */
};

static int try_open(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    return close(fd) == 0 ? 0 : errno;
}

static int run_checks(struct probe_bpf *skel, const struct probe_files *files, char *err, size_t errlen)
{
    struct probe_cgroup cg;
    if (probe_cgroup_enter(&cg, CGROUP_ROOT, err, errlen) < 0)
        return EXIT_SETUP;
    char prefix[PATH_MAX];
    struct probe_opens got = {0, 0};
    int rc = EXIT_PASS;
    if (fmt_into(prefix, sizeof(prefix), "%s/", files->deny_dir) != 0) {
        set_err(err, errlen, "deny prefix too long");
        rc = EXIT_SETUP;
    } else if (configure(skel, cg.id, prefix) != 0) {
        set_err(err, errlen, "set the config map: %s", strerror(errno));
        rc = EXIT_SETUP;
    } else {
        got.allowed_errno = try_open(files->allowed);
        got.denied_errno = try_open(files->denied);
        if (configure(skel, 0, "") != 0) {
            set_err(err, errlen, "clear the config map: %s", strerror(errno));
            rc = EXIT_SETUP;
        }
    }
    char leave_err[ERR_MAX];
    if (probe_cgroup_leave(&cg, leave_err, sizeof(leave_err)) < 0 && rc == EXIT_PASS) {
        set_err(err, errlen, "%s", leave_err);
        rc = EXIT_SETUP;
    }
    if (rc != EXIT_PASS)
        return rc;

    struct probe_seen seen = {.files = files, .pid = (unsigned)getpid()};
    struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, &seen, NULL);
    if (!rb) {
        set_err(err, errlen, "ring_buffer__new: %s", strerror(errno));
        return EXIT_SETUP;
    }
    int consumed = ring_buffer__consume(rb);
    ring_buffer__free(rb);
    if (consumed < 0) {
        set_err(err, errlen, "ring_buffer__consume: %s", strerror(-consumed));
        return EXIT_SETUP;
    }

    const char *bad = NULL;
    if (got.allowed_errno != 0)
        bad = "the allowed open failed";
    else if (got.denied_errno != EPERM && got.denied_errno != EACCES)
        bad = got.denied_errno == 0 ? "the denied open succeeded" : "the denied open failed, not with EPERM";
    else if (!seen.allowed)
        bad = "the allowed open was not recorded";
    else if (!seen.denied)
        bad = "the denied open was not recorded as refused";
    if (bad) {
        set_err(err, errlen, "%s (allowed: %s; denied: %s; %d records)", bad, strerror(got.allowed_errno),
                 strerror(got.denied_errno), seen.records);
        return EXIT_CHECK;
    }
    printf("%s: PASS: cgroup %llu: allowed open recorded, denied open refused (%s) and recorded; %d records\n",
           PROG, cg.id, strerror(got.denied_errno), seen.records);
    return EXIT_PASS;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: %s [-v]\n"
                "Loads a BPF LSM file_open program and checks that it records and refuses opens.\n"
                "  -v  show libbpf's messages\n"
                "Exit: 0 pass, 1 a check failed, 2 BPF LSM unavailable, 3 set-up failed.\n",
            PROG);
}

int main(int argc, char **argv)
{
    bool verbose = false;
    int opt;
    while ((opt = getopt(argc, argv, "vh")) != -1) {
        if (opt == 'v') {
            verbose = true;
        } else {
            usage(opt == 'h' ? stdout : stderr);
            return opt == 'h' ? EXIT_PASS : EXIT_SETUP;
        }
    }
    /* Quiet unless asked: a kernel without BPF LSM makes libbpf print a
     * page of verifier and attach detail, and the fallback wants one line. */
    libbpf_set_print(verbose ? libbpf_say : NULL);

    char err[ERR_MAX] = "";
    struct probe_bpf *skel = probe_bpf__open_and_load();
    if (!skel) {
        int saved = errno;
        char lsms[ERR_MAX];
        lsm_list(lsms, sizeof(lsms));
        fprintf(stderr, "%s: BPF LSM unavailable: load: %s; active LSMs: %s\n", PROG, strerror(saved), lsms);
        return EXIT_NO_LSM;
    }
    int rc = EXIT_PASS;
    int aerr = probe_bpf__attach(skel);
    if (aerr != 0) {
        char lsms[ERR_MAX];
        lsm_list(lsms, sizeof(lsms));
        fprintf(stderr, "%s: BPF LSM unavailable: attach lsm/file_open: %s; active LSMs: %s\n", PROG,
                strerror(-aerr), lsms);
        rc = EXIT_NO_LSM;
    } else {
        struct probe_files files;
        if (make_files(&files, err, sizeof(err)) != 0)
            rc = EXIT_SETUP;
        else
            rc = run_checks(skel, &files, err, sizeof(err));
        remove_files(&files);
        if (rc != EXIT_PASS)
            fprintf(stderr, "%s: FAIL: %s\n", PROG, err);
    }
    probe_bpf__destroy(skel);
    return rc;
}
