/* build_int.h: what the files of `vigil image build` share: starting the
 * tools (spawn.c), mmdebstrap (mmdebstrap.c), the clean-up (tidy.c), the
 * files a build adds (overlay.c), the package list (packages.c).  build.c
 * ties them. */
#ifndef VG_IMAGE_BUILD_INT_H
#define VG_IMAGE_BUILD_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "image/image_int.h"
#include "image/spec.h"

/* SOURCE_DATE_EPOCH of every build (2023-06-10, bookworm's release): the
 * time the tools write where they would write now (mmdebstrap's file
 * times, /etc/shadow's last password change).  One fixed value, not the
 * build's time: two builds of a spec must write the same bytes. */
#define VG_BUILD_EPOCH 1686355200
/* How much of a tool's output vigil reads back (dpkg-query's list of a
 * big image is ~100 KiB). */
#define VG_BUILD_CAPTURE_MAX (8u << 20)
/* The build's own directory beside rootfs in tmp/: mmdebstrap's
 * TMPDIR and the tools' log; removed before the commit. */
#define VG_BUILD_WORK "work"
#define VG_BUILD_LOG "build.log"

/* ---- spawn.c: the tools a build runs ---- */

/* name on $PATH as an executable file (malloc'd), or NULL. */
char *vg_tool_find(const char *name);
/* The child runs in mount and pid namespaces of its own, its mounts
 * private: when vigil dies, however, it and everything it started are
 * killed and its mounts (mmdebstrap's /proc, /sys, /dev in its chroot)
 * vanish with them; none ever reaches the host's.  Needs root. */
#define VG_SPAWN_CONTAINED 1u
struct vg_child {
    pid_t pid;
    int out;  /* its stdout, read end */
};
/* Start path with argv and envp: stdin /dev/null, stdout a pipe, stderr
 * errfd, and passfd (if >= 0) as fd 3.  It gets SIGTERM when vigil dies,
 * or, contained, SIGKILL with everything it started. */
int vg_spawn(const char *path, char *const argv[], char *const envp[], int errfd, int passfd,
             unsigned flags, struct vg_child *c, struct vg_err *err);
/* Close its stdout and wait: its exit code, 128+N for signal N, -1. */
int vg_spawn_wait(struct vg_child *c);
/* Stop it (SIGTERM) and wait. */
void vg_spawn_stop(struct vg_child *c);
/* Run it to the end with its stdout into out (at most
 * VG_BUILD_CAPTURE_MAX bytes): its exit code, or -1 with err. */
int vg_spawn_capture(const char *path, char *const argv[], char *const envp[], int errfd,
                     int passfd, struct vg_buf *out, struct vg_err *err);
/* Why a tool failed, from its log (what it wrote from offset from on):
 * its first "E: " line (apt's and mmdebstrap's errors), else its last
 * line, into out. */
void vg_log_reason(int logfd, off_t from, char *out, size_t cap);

/* ---- mmdebstrap.c ---- */

struct vg_debs {
    const struct vg_spec *spec;
    const char *workdir;   /* absolute: TMPDIR for mmdebstrap in root mode */
    int logfd;             /* its stderr */
    char mode[16];         /* set: "root" or "unshare" */
    char tool[64];         /* set: "mmdebstrap 1.3.5" */
};
/* Run mmdebstrap for the spec and apply the tar it writes to the tree of
 * b (the rules of an import: layer.c).  0, or -1 with err: mmdebstrap
 * missing, not usable by this user, or its failure in one line. */
int vg_mmdebstrap(struct vg_debs *d, struct vg_build *b, struct vg_err *err);

/* ---- tidy.c ---- */

/* Remove from the tree what makes two builds of a spec differ, or what
 * the host put there (docs/IMAGES.md, "Build"). */
int vg_build_tidy(struct vg_build *b, struct vg_err *err);

/* ---- overlay.c ---- */

/* The files every build puts in (/etc/resolv.conf, /etc/hosts,
 * /etc/hostname; /etc/machine-id emptied), then the spec's add lines,
 * made as a layer's entries are.  sha gets each added file's SHA-256, in
 * the spec's order; an add line's error names specfile:LINE. */
int vg_build_overlay(struct vg_build *b, const struct vg_spec *s, const char *specfile,
                     const char *specdir, char (*sha)[VG_IMAGE_HEX], struct vg_err *err);

/* ---- packages.c ---- */

struct vg_package {
    char *name, *arch, *version;
};
/* The installed packages of the tree, from dpkg-query with the tree's own
 * database; none for a tree without one (variant extract). */
int vg_build_packages(int rootfd, int logfd, struct vg_package **v, size_t *n,
                      struct vg_err *err);
void vg_packages_free(struct vg_package *v, size_t n);

/* What manifest.json says of a build (its "build" object). */
struct vg_build_info {
    const char *spec_path, *spec_text;
    char spec_sha[VG_IMAGE_HEX];
    const struct vg_spec *spec;
    char (*add_sha)[VG_IMAGE_HEX];
    const struct vg_package *packages;
    size_t npackages;
    const char *mode, *tool;
};
#endif
