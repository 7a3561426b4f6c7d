/* pyproc.c: finding the interpreter of a process.  _PyRuntime is a
 * symbol of the python executable (Debian's, linked statically against
 * libpython) or of a shared libpython it maps.  Which files: the
 * executable (by its dev/ino in /proc/PID/maps) and any mapping named
 * libpython*; each is opened inside the sandbox's root (openat2
 * RESOLVE_IN_ROOT, never following a magic link) and accepted only if it
 * is the very inode the process maps.  Its symbols are cached by
 * (dev, ino) for the run; what was found in a process (the runtime
 * address and the version's offsets) is cached by process identity until
 * it execs or exits (vg_py_forget).
 *
 * A process whose executable neither defines _PyRuntime nor asks for
 * libpython is not Python, for good.  One that asks for libpython but
 * has not mapped it yet (its loader is still at work) is asked again at
 * its next recorded call. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "tracer/py/py_int.h"
#include "tracer/py/pyframes.h"
#include "util/util.h"

#define MAPS_LINES_MAX 100000u   /* a process may map a lot; we stop reading there */
#define FILES_MAX 8u             /* ELF files looked at per process and search */
#define LIBPYTHON "libpython"

struct pyfile {              /* one ELF file's symbols */
    dev_t dev;
    ino_t ino;
    struct vg_elfinfo info;
    struct pyfile *next;
};

enum proc_state { PROC_LATER, PROC_PYTHON, PROC_NOT };

struct pyproc {
    uint64_t proc;
    enum proc_state state;
    struct vg_pyrt rt;
    struct pyproc *next;
};

struct vg_pyframes {
    struct pyfile *files;
    struct pyproc *procs;
    struct vg_pyreader reader;
};

struct vg_pyframes *vg_py_new(void)
{
    struct vg_pyframes *pf = vg_xcalloc(1, sizeof(struct vg_pyframes));
    vg_py_reader_init(&pf->reader);
    return pf;
}

struct vg_pyreader *vg_py_reader(struct vg_pyframes *pf)
{
    return &pf->reader;
}

void vg_py_free(struct vg_pyframes *pf)
{
    if (!pf)
        return;
    for (struct pyfile *f = pf->files, *nx; f; f = nx) {
        nx = f->next;
        free(f);
    }
    for (struct pyproc *p = pf->procs, *nx; p; p = nx) {
        nx = p->next;
        free(p);
    }
    vg_py_reader_free(&pf->reader);
    free(pf);
}

void vg_py_forget(struct vg_pyframes *pf, uint64_t proc)
{
    for (struct pyproc **pp = &pf->procs; *pp; pp = &(*pp)->next)
        if ((*pp)->proc == proc) {
            struct pyproc *p = *pp;
            *pp = p->next;
            free(p);
            return;
        }
}

/* One file mapping at offset 0 of the process. */
struct mapping {
    uint64_t start;
    dev_t dev;
    ino_t ino;
    char path[4096];
};

/* The symbols of the file m names, opened in the sandbox and checked to
 * be the inode mapped; cached.  NULL when it cannot be read. */
static const struct vg_elfinfo *file_info(struct vg_pyframes *pf, int root_fd,
                                          const struct mapping *m)
{
    for (struct pyfile *f = pf->files; f; f = f->next)
        if (f->dev == m->dev && f->ino == m->ino)
            return &f->info;
    /* The path is the kernel's (d_path): no symlink in it is followed, so
     * a candidate that swaps a symlink in cannot make vigil open anything
     * else; O_NONBLOCK: a fifo put there does not block vigil. */
    struct open_how how = {.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW,
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS};
    int fd = (int)syscall(VG_NR_openat2, root_fd, m->path, &how, sizeof how);
    if (fd < 0)
        return NULL;
    struct stat st;
    struct pyfile *f = vg_xcalloc(1, sizeof *f);
    f->dev = m->dev;
    f->ino = m->ino;
    /* another file at that path (replaced since it was mapped) is not it:
     * remembered as unreadable, so it is not opened again */
    if (fstat(fd, &st) == 0 && st.st_dev == m->dev && st.st_ino == m->ino)
        vg_elf_read(fd, &f->info);
    close(fd);
    f->next = pf->files;
    pf->files = f;
    return f->info.ok ? &f->info : NULL;
}

static bool parse_line(const char *line, struct mapping *m)
{
    unsigned long long start, end, off, ino;
    unsigned maj, min;
    int pos = 0;
    if (sscanf(line, "%llx-%llx %*4s %llx %x:%x %llu %n", &start, &end, &off, &maj, &min,
               &ino, &pos) != 6 || off != 0 || ino == 0 || line[pos] != '/')
        return false;
    size_t len = strcspn(line + pos, "\n");
    if (len >= sizeof m->path)
        return false;
    m->start = start;
    m->dev = makedev(maj, min);
    m->ino = (ino_t)ino;
    memcpy(m->path, line + pos, len);
    m->path[len] = '\0';
    return true;
}

static bool is_libpython(const char *path)
{
    const char *base = strrchr(path, '/');
    return base && strncmp(base + 1, LIBPYTHON, strlen(LIBPYTHON)) == 0;
}

/* Where _PyRuntime is in the process: bias + the symbol, with the file's
 * other symbols; false when neither the executable nor a libpython has it. */
struct found {
    uint64_t bias;
    const struct vg_elfinfo *info;
    bool exe_needs_lib;
};

static void search_maps(struct vg_pyframes *pf, struct vg_tracee *tr, FILE *maps,
                        const struct stat *exe, struct found *out)
{
    char line[4200];
    struct mapping m;
    bool exe_seen = false;
    unsigned files = 0;
    for (unsigned n = 0; n < MAPS_LINES_MAX && files < FILES_MAX && fgets(line, sizeof line, maps);
         n++) {
        if (!parse_line(line, &m))
            continue;
        bool is_exe = m.dev == exe->st_dev && m.ino == exe->st_ino;
        if ((is_exe && exe_seen) || (!is_exe && !is_libpython(m.path)))
            continue;
        exe_seen |= is_exe;
        files++;
        const struct vg_elfinfo *info = file_info(pf, tr->root_fd, &m);
        if (!info)
            continue;
        if (is_exe)
            out->exe_needs_lib = info->needs_libpython;
        if (info->sym[VG_PYSYM_RUNTIME]) {
            out->bias = m.start - info->link_base;
            out->info = info;
            return;
        }
    }
}

/* The version's offsets, from _Py_DebugOffsets (3.13+) or Py_Version and
 * the static table. */
static bool read_offsets(struct vg_tracee *tr, const struct found *f, struct vg_pyrt *rt)
{
    uint64_t head[2];
    if (vg_tracee_read(tr, rt->runtime, head, sizeof head) < 0)
        return false;
    if (memcmp(head, VG_PY_DEBUG_COOKIE, sizeof head[0]) == 0) {
        uint32_t size = vg_py_debug_size((uint32_t)head[1]);
        if (size == 0)
            return false;
        uint64_t *words = vg_xmalloc(size);
        bool ok = vg_tracee_read(tr, rt->runtime, words, size) == 0 &&
                  vg_py_debug_offsets(words, size / sizeof *words, &rt->off) == 0;
        free(words);
        return ok;
    }
    uint64_t hex = 0;
    const struct vg_pyoffsets *o;
    if (!f->info->sym[VG_PYSYM_VERSION] ||
        vg_tracee_read(tr, f->bias + f->info->sym[VG_PYSYM_VERSION], &hex, sizeof hex) < 0 ||
        !(o = vg_py_static_offsets((uint32_t)hex)))
        return false;
    rt->off = *o;
    rt->off.hexversion = (uint32_t)hex;
    return true;
}

static enum proc_state locate(struct vg_pyframes *pf, struct vg_tracee *tr, struct vg_pyrt *rt)
{
    char path[64];
    struct stat exe;
    snprintf(path, sizeof path, "/proc/%d/exe", (int)tr->pid);
    if (stat(path, &exe) < 0)
        return PROC_NOT;
    snprintf(path, sizeof path, "/proc/%d/maps", (int)tr->pid);
    FILE *maps = fopen(path, "re");
    if (!maps)
        return PROC_NOT;
    struct found f = {0};
    search_maps(pf, tr, maps, &exe, &f);
    fclose(maps);
    if (!f.info)
        return f.exe_needs_lib ? PROC_LATER : PROC_NOT;
    rt->runtime = f.bias + f.info->sym[VG_PYSYM_RUNTIME];
    rt->code_type = f.info->sym[VG_PYSYM_CODE_TYPE] ? f.bias + f.info->sym[VG_PYSYM_CODE_TYPE] : 0;
    return read_offsets(tr, &f, rt) ? PROC_PYTHON : PROC_NOT;
}

const struct vg_pyrt *vg_py_runtime(struct vg_pyframes *pf, struct vg_tracee *tr, uint64_t proc)
{
    struct pyproc *p = pf->procs;
    while (p && p->proc != proc)
        p = p->next;
    if (!p) {
        p = vg_xcalloc(1, sizeof *p);
        p->proc = proc;
        p->state = PROC_LATER;
        p->next = pf->procs;
        pf->procs = p;
    }
    if (p->state == PROC_LATER)
        p->state = locate(pf, tr, &p->rt);
    return p->state == PROC_PYTHON ? &p->rt : NULL;
}
