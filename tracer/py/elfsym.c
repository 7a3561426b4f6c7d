/* elfsym.c: symbols, link base and DT_NEEDED of an ELF file (elfsym.h).
 * Sections are read with pread into bounded buffers; the static symbol
 * table (.symtab) is searched when the dynamic one (.dynsym) lacks a name
 * (a python binary built without exporting its symbols). */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer/py/elfsym.h"

/* Limits on what is read from a file that may be crafted: CPython's
 * tables are a few hundred KiB even with a full .symtab. */
#define ELF_MAX_SECTIONS 4096u
#define ELF_MAX_PHDRS 512u
#define ELF_MAX_TABLE (32u << 20)
#define ELF_PAGE 4096u
#define LIBPYTHON "libpython"

static const char *const symnames[VG_PYSYM_N] = {
    [VG_PYSYM_RUNTIME] = "_PyRuntime",
    [VG_PYSYM_VERSION] = "Py_Version",
    [VG_PYSYM_CODE_TYPE] = "PyCode_Type",
};

struct elf_file {
    int fd;
    uint64_t size;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh;   /* eh.e_shnum of them, or NULL */
};

static int read_at(const struct elf_file *f, uint64_t off, void *buf, uint64_t n)
{
    if (off > f->size || n > f->size - off)
        return -1;
    uint64_t got = 0;
    while (got < n) {
        ssize_t r = pread(f->fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            return -1;  /* error, or the file shrank */
        }
        got += (uint64_t)r;
    }
    return 0;
}

/* The contents of section i, or NULL (too large, out of the file). */
static void *section(const struct elf_file *f, unsigned i, uint64_t *len)
{
    if (i == 0 || i >= f->eh.e_shnum)
        return NULL;
    const Elf64_Shdr *s = &f->sh[i];
    if (s->sh_type == SHT_NOBITS || s->sh_size == 0 || s->sh_size > ELF_MAX_TABLE)
        return NULL;
    char *buf = malloc(s->sh_size + 1);
    if (!buf)
        return NULL;
    if (read_at(f, s->sh_offset, buf, s->sh_size) < 0) {
        free(buf);
        return NULL;
    }
    buf[s->sh_size] = '\0'; /* a string table's last string ends inside */
    *len = s->sh_size;
    return buf;
}

static bool header_ok(const Elf64_Ehdr *h)
{
    return memcmp(h->e_ident, ELFMAG, SELFMAG) == 0 && h->e_ident[EI_CLASS] == ELFCLASS64 &&
           h->e_ident[EI_DATA] == ELFDATA2LSB && h->e_machine == EM_X86_64 &&
           (h->e_type == ET_EXEC || h->e_type == ET_DYN);
}

static int read_link_base(const struct elf_file *f, struct vg_elfinfo *out)
{
    if (f->eh.e_phentsize != sizeof(Elf64_Phdr) || f->eh.e_phnum == 0 ||
        f->eh.e_phnum > ELF_MAX_PHDRS)
        return -1;
    Elf64_Phdr ph[ELF_MAX_PHDRS];
    if (read_at(f, f->eh.e_phoff, ph, (uint64_t)f->eh.e_phnum * sizeof ph[0]) < 0)
        return -1;
    for (unsigned i = 0; i < f->eh.e_phnum; i++)
        if (ph[i].p_type == PT_LOAD) {
            /* the mapping of file offset 0 starts at this address + bias */
            out->link_base = (ph[i].p_vaddr - ph[i].p_offset) & ~(uint64_t)(ELF_PAGE - 1);
            return 0;
        }
    return -1;
}

/* A table section (symbols, dynamic entries) with the string table its
 * sh_link names. */
struct linked {
    void *ent;
    uint64_t n;          /* entries */
    char *strs;
    uint64_t nstr;       /* bytes of strs */
};

static bool load_linked(const struct elf_file *f, unsigned i, size_t entsize, struct linked *l)
{
    uint64_t len = 0;
    *l = (struct linked){0};
    l->ent = section(f, i, &len);
    l->strs = l->ent ? section(f, f->sh[i].sh_link, &l->nstr) : NULL;
    l->n = len / entsize;
    return l->ent && l->strs;
}

static void free_linked(struct linked *l)
{
    free(l->ent);
    free(l->strs);
}

/* Look up the names still missing in one symbol table. */
static void search_symtab(const struct elf_file *f, unsigned i, struct vg_elfinfo *out)
{
    struct linked l;
    if (load_linked(f, i, sizeof(Elf64_Sym), &l))
        for (uint64_t k = 0; k < l.n; k++) {
            const Elf64_Sym *s = (const Elf64_Sym *)l.ent + k;
            if (s->st_shndx == SHN_UNDEF || s->st_name >= l.nstr || s->st_value == 0)
                continue;
            for (unsigned w = 0; w < VG_PYSYM_N; w++)
                if (!out->sym[w] && strcmp(l.strs + s->st_name, symnames[w]) == 0)
                    out->sym[w] = s->st_value;
        }
    free_linked(&l);
}

static void search_needed(const struct elf_file *f, unsigned i, struct vg_elfinfo *out)
{
    struct linked l;
    if (load_linked(f, i, sizeof(Elf64_Dyn), &l))
        for (uint64_t k = 0; k < l.n; k++) {
            const Elf64_Dyn *d = (const Elf64_Dyn *)l.ent + k;
            if (d->d_tag == DT_NULL)
                break;
            if (d->d_tag == DT_NEEDED && d->d_un.d_val < l.nstr &&
                strncmp(l.strs + d->d_un.d_val, LIBPYTHON, strlen(LIBPYTHON)) == 0)
                out->needs_libpython = true;
        }
    free_linked(&l);
}

static int read_sections(struct elf_file *f)
{
    if (f->eh.e_shnum == 0 || f->eh.e_shnum > ELF_MAX_SECTIONS ||
        f->eh.e_shentsize != sizeof(Elf64_Shdr))
        return -1;
    f->sh = calloc(f->eh.e_shnum, sizeof(Elf64_Shdr));
    if (!f->sh)
        return -1;
    return read_at(f, f->eh.e_shoff, f->sh, (uint64_t)f->eh.e_shnum * sizeof(Elf64_Shdr));
}

static int first_of(const struct elf_file *f, uint32_t type)
{
    for (unsigned i = 1; i < f->eh.e_shnum; i++)
        if (f->sh[i].sh_type == type)
            return (int)i;
    return -1;
}

int vg_elf_read(int fd, struct vg_elfinfo *out)
{
    *out = (struct vg_elfinfo){0};
    struct elf_file f = {.fd = fd};
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return -1;
    f.size = (uint64_t)st.st_size;
    int rc = -1;
    if (read_at(&f, 0, &f.eh, sizeof f.eh) < 0 || !header_ok(&f.eh) ||
        read_link_base(&f, out) < 0 || read_sections(&f) < 0)
        goto out;
    /* .dynsym first: it is what a stripped distribution binary keeps.  A
     * real ELF has one section of each type; a crafted one with thousands
     * gets only its first read (what vigil reads stays bounded). */
    int dynsym = first_of(&f, SHT_DYNSYM), symtab = first_of(&f, SHT_SYMTAB);
    int dynamic = first_of(&f, SHT_DYNAMIC);
    if (dynsym > 0)
        search_symtab(&f, (unsigned)dynsym, out);
    if (symtab > 0)
        search_symtab(&f, (unsigned)symtab, out);
    if (dynamic > 0)
        search_needed(&f, (unsigned)dynamic, out);
    out->ok = true;
    rc = 0;
out:
    free(f.sh);
    return rc;
}
