/* report_log.c: what vigil report takes from a candidate's log, the two
 * things its summary lacks: the programs the run executed (exec proc
 * records: the real executable) and, for every refusal, the candidate's
 * own source line (the summary's frame rule, insight/source.h) with the
 * text of that line.
 *
 * The text is read from the task's work dir, which the candidate could
 * write: so only a file directly in it (its frame names the header's cwd
 * and one name more), opened through no symlink, without blocking, a
 * regular file of bounded size.  What it says is what the file says now
 * (a candidate that rewrote its script shows the new line), shown escaped
 * like every string from outside. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event/reader.h"
#include "insight/report_int.h"
#include "insight/source.h"

/* Larger source files are not read for their lines. */
#define MAX_SOURCE_FILE (4u << 20)
/* A line's text is cut there (a minified script has one long line). */
#define MAX_LINE_TEXT 160
#define CUT_MARK "..."
/* Files of one candidate kept read: its script and a module or two. */
#define MAX_FILES 8

struct src_file {
    char *name;          /* in the work dir */
    char *text;          /* NULL: not readable */
    size_t len;
};

struct log_state {
    struct vg_rep_logfacts *f;
    const char *workdir;
    char *cwd;           /* the header's: the work dir as the sandbox saw it */
    struct src_file files[MAX_FILES];
    size_t nfiles;
};

/* The file's name in the work dir, when the frame's file lies directly in
 * it; NULL otherwise. */
static const char *name_in_workdir(const struct log_state *s, const char *file)
{
    size_t n = s->cwd ? strlen(s->cwd) : 0;
    const char *name = file[0] != '/' ? file
                       : n && !strncmp(file, s->cwd, n) && file[n] == '/' ? file + n + 1
                                                                          : NULL;
    if (!name || !name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return NULL;
    return name;
}

/* The whole file, or NULL when it is not a regular file vigil may read. */
static char *read_source(const char *workdir, const char *name, size_t *len)
{
    int dfd = open(workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return NULL;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    close(dfd);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *text = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= MAX_SOURCE_FILE) {
        text = vg_xmalloc((size_t)st.st_size + 1);
        ssize_t got;
        size_t have = 0;
        /* it may change as it is read: up to what it held at fstat */
        while (have < (size_t)st.st_size &&
               (got = read(fd, text + have, (size_t)st.st_size - have)) > 0)
            have += (size_t)got;
        text[have] = 0;
        *len = have;
    }
    close(fd);
    return text;
}

static const struct src_file *source_file(struct log_state *s, const char *name)
{
    for (size_t i = 0; i < s->nfiles; i++)
        if (!strcmp(s->files[i].name, name))
            return &s->files[i];
    if (s->nfiles == MAX_FILES)
        return NULL;
    struct src_file *f = &s->files[s->nfiles++];
    f->name = vg_xstrdup(name);
    f->text = read_source(s->workdir, name, &f->len);
    return f;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Line `line` (1-based) of the file, trimmed, appended to out; false when
 * there is no such line or it is blank. */
static bool line_text(const struct src_file *f, int32_t line, struct vg_buf *out)
{
    if (!f || !f->text || line < 1)
        return false;
    const char *p = f->text, *end = f->text + f->len;
    for (int32_t k = 1; k < line; k++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return false;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end;
    while (p < e && blank(*p))
        p++;
    while (e > p && blank(e[-1]))
        e--;
    if (p == e)
        return false;
    size_t n = (size_t)(e - p);
    vg_buf_put(out, p, n > MAX_LINE_TEXT ? MAX_LINE_TEXT : n);
    if (n > MAX_LINE_TEXT)
        vg_buf_puts(out, CUT_MARK);
    return true;
}

static void add_refusal(struct log_state *s, const struct vg_syscall_ev *e)
{
    const struct vg_pyframe *fr = vg_sum_source_frame(e);
    if (!fr) {
        s->f->no_source++;
        return;
    }
    struct vg_buf place = {0}, key = {0};
    vg_sum_source(e, &place);
    const char *name = name_in_workdir(s, fr->file);
    vg_buf_put(&key, &(char){VG_REP_SRC_TEXT}, 1);
    if (!name || !line_text(source_file(s, name), fr->line, &key)) {
        key.len = 0;
        vg_buf_put(&key, &(char){VG_REP_SRC_PLACE}, 1);
        vg_buf_put(&key, place.data, place.len);
    }
    struct vg_tally_ent *t = vg_tally_add(&s->f->sources, key.data, 0, 1);
    t->decisions |= 1u << e->decision;
    if (!t->extra) {
        t->extra = place.data; /* taken */
        place.data = NULL;
    }
    vg_buf_free(&place);
    vg_buf_free(&key);
}

static void add_record(struct log_state *s, const struct vg_record *r)
{
    if (r->type == VG_REC_HEADER && !s->cwd && r->u.header.cwd)
        s->cwd = vg_xstrdup(r->u.header.cwd);
    else if (r->type == VG_REC_PROC && r->u.proc.kind == VG_PROC_EXEC && r->u.proc.exe)
        vg_tally_add(&s->f->programs, r->u.proc.exe, 0, 1);
    else if (r->type == VG_REC_SYSCALL && r->u.sys.decision != VG_DEC_ALLOW)
        add_refusal(s, &r->u.sys);
}

int vg_rep_log_read(const char *path, const char *workdir, struct vg_rep_logfacts *f,
                    struct vg_err *err)
{
    memset(f, 0, sizeof *f);
    struct vg_reader *rd = vg_reader_open(path, err);
    if (!rd)
        return -1;
    struct log_state s = {.f = f, .workdir = workdir};
    struct vg_decoded d;
    bool trailer = false, headless = false;
    uint64_t n = 0;
    int rc;
    while (!headless && (rc = vg_reader_next(rd, &d)) > 0) {
        headless = n++ == 0 && d.rec.type != VG_REC_HEADER;
        if (!headless) {
            trailer |= d.rec.type == VG_REC_TRAILER;
            add_record(&s, &d.rec);
        }
        vg_decoded_free(&d);
    }
    int done = 0;
    if (headless || (rc < 0 && n == 0)) {
        vg_errf(err, "%s: not a vigil log (%s)", path,
                headless ? "no header" : vg_reader_error(rd));
        done = -1;
    } else if (rc < 0 || !trailer || vg_reader_status(rd) == VG_MP_TRUNCATED) {
        vg_errf(err, "%s: %s at byte %llu (%s): counted up to there", path,
                rc < 0 ? "corrupt" : "truncated", (unsigned long long)vg_reader_offset(rd),
                rc < 0 ? vg_reader_error(rd) : "no trailer");
        done = 1;
    }
    vg_reader_close(rd);
    for (size_t i = 0; i < s.nfiles; i++) {
        free(s.files[i].name);
        free(s.files[i].text);
    }
    free(s.cwd);
    if (done < 0)
        vg_rep_logfacts_free(f);
    return done;
}

void vg_rep_logfacts_free(struct vg_rep_logfacts *f)
{
    vg_tally_free(&f->programs);
    vg_tally_free(&f->sources);
    f->no_source = 0;
}
