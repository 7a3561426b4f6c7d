/* elfsym.h: what vigil needs from an ELF file to find a CPython runtime in
 * a process that maps it: the value of a few named symbols, the address
 * the file's first segment is linked at (to turn a mapping's start into
 * the load bias), and whether the file asks for libpython (a python
 * binary linked against a shared libpython).  The file may be the
 * candidate's own, crafted to mislead: every offset, size and count is
 * checked against the file and bounded, and a file that does not add up
 * is simply "not a Python binary". */
#ifndef VG_PY_ELFSYM_H
#define VG_PY_ELFSYM_H

#include <stdbool.h>
#include <stdint.h>

/* The symbols looked up, in this order (vg_elf_symnames). */
enum vg_pysym {
    VG_PYSYM_RUNTIME,   /* _PyRuntime: the interpreter's global state */
    VG_PYSYM_VERSION,   /* Py_Version: PY_VERSION_HEX (3.11+) */
    VG_PYSYM_CODE_TYPE, /* PyCode_Type: every code object's ob_type */
    VG_PYSYM_N,
};

struct vg_elfinfo {
    bool ok;                   /* a 64-bit x86_64 ELF whose headers add up */
    uint64_t link_base;        /* page-aligned p_vaddr - p_offset of the first PT_LOAD */
    uint64_t sym[VG_PYSYM_N];  /* st_value of each defined symbol, 0 when absent */
    bool needs_libpython;      /* a DT_NEEDED entry starts with "libpython" */
};

/* Fill *out from the ELF file open at fd (read with pread, never mapped:
 * a file truncated meanwhile cannot fault vigil).  Returns 0, or -1 when
 * the file is not an ELF vigil can read (out->ok false). */
int vg_elf_read(int fd, struct vg_elfinfo *out);
#endif
