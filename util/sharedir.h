/* sharedir.h: where vigil's shipped files of one kind are looked for by
 * name (image specs; policy/find.c's policies are found the same way):
 *   $ENV                       the caller's own set
 *   DIR/SUB, DIR/../SUB        where DIR holds the running vigil binary
 *                              (a source checkout: ./vigil, build/vigil)
 *   INSTALLED                  set at build time (PREFIX/share/vigil/SUB)
 * All of these are chosen by the caller or come with the binary: nothing
 * a candidate can write is ever searched. */
#ifndef VG_SHAREDIR_H
#define VG_SHAREDIR_H

#include <stddef.h>

#include "util/util.h"

#define VG_SHARE_NDIRS 4

/* The directories, in order, into dirs (each malloc'd): how many. */
size_t vg_share_dirs(const char *env, const char *sub, const char *installed,
                     char *dirs[VG_SHARE_NDIRS]);
void vg_share_dirs_free(char *dirs[], size_t n);
/* The running vigil binary's path (/proc/self/exe) into buf: the binary a
 * batch's or a daemon's runs use, and where the shipped files are looked
 * for.  false when it cannot be read or does not fit. */
bool vg_self_exe(char *buf, size_t cap);
#endif
