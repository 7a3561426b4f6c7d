/* pyread.c: reads of the tracee's memory for one stack walk, through a
 * small page cache.  A walk reads a few dozen small pieces (frames, code
 * objects, strings) that mostly sit on the same few pages: one
 * process_vm_readv per page instead of one per piece is what makes a
 * deep stack affordable (bench/pyframes.py).  The cache holds for one
 * walk only (vg_py_reader_reset): the stopped thread's frames hold still
 * meanwhile, and nothing read is trusted anyway. */
#include <stdlib.h>
#include <string.h>

#include "tracer/py/py_int.h"
#include "util/util.h"

void vg_py_reader_init(struct vg_pyreader *r)
{
    *r = (struct vg_pyreader){.data = vg_xmalloc((size_t)VG_PY_PAGES * VG_PY_PAGE)};
}

void vg_py_reader_free(struct vg_pyreader *r)
{
    free(r->data);
    r->data = NULL;
}

void vg_py_reader_reset(struct vg_pyreader *r, struct vg_tracee *tr)
{
    r->tr = tr;
    r->n = r->next = 0;
}

/* The cached copy of the page at base, read now if need be; NULL when it
 * cannot be read whole. */
static const uint8_t *page(struct vg_pyreader *r, uint64_t base)
{
    for (unsigned i = 0; i < r->n; i++)
        if (r->page[i] == base)
            return r->data + (size_t)i * VG_PY_PAGE;
    unsigned slot = r->n < VG_PY_PAGES ? r->n++ : r->next;
    r->next = (slot + 1) % VG_PY_PAGES;
    uint8_t *d = r->data + (size_t)slot * VG_PY_PAGE;
    if (vg_tracee_read(r->tr, base, d, VG_PY_PAGE) < 0) {
        r->page[slot] = 1;   /* no page starts there: the slot is free again */
        return NULL;
    }
    r->page[slot] = base;
    return d;
}

int vg_py_read(struct vg_pyreader *r, uint64_t addr, void *buf, size_t n)
{
    if (addr >= VG_PY_USER_TOP || n > VG_PY_USER_TOP - addr)
        return -1;
    size_t got = 0;
    while (got < n) {
        uint64_t at = addr + got, base = at & ~(uint64_t)(VG_PY_PAGE - 1);
        size_t in = VG_PY_PAGE - (size_t)(at - base), want = n - got < in ? n - got : in;
        const uint8_t *p = page(r, base);
        if (!p)
            return -1;
        memcpy((uint8_t *)buf + got, p + (at - base), want);
        got += want;
    }
    return 0;
}
