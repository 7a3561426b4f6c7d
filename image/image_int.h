/* image_int.h: what the files of image/ share and nothing else uses:
 * entry names, the never-follow file operations, the digest walk, the
 * layers and their streams, the store. */
#ifndef VG_IMAGE_INT_H
#define VG_IMAGE_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "image/image.h"
#include "util/util.h"

/* The most an image may hold.  Toolchain images are 0.1-2 GiB unpacked
 * (python:3.12 ~1 GiB); the caps are there so that a hostile or broken
 * layer (a gzip bomb, a header claiming a huge file) ends the import with
 * an error instead of filling the disk of a machine running thousands of
 * candidates. */
#define VG_IMAGE_MAX_TOTAL (4ULL << 30)   /* bytes of file contents, all layers */
#define VG_IMAGE_MAX_FILE (2ULL << 30)    /* one file */
#define VG_IMAGE_MAX_ENTRIES 1000000u     /* entries of one layer, and of the tree */
/* Deeper than any real tree; bounds the recursion of the walks.  An
 * entry's path has at most this many components (entry.c), so the
 * digest walk never meets a deeper directory. */
#define VG_IMAGE_MAX_DEPTH 256
/* Levels the store itself puts above a tree's entries when it removes
 * one (tmp/rm-PID-XXXXXX, image, rootfs): the removal's own depth bound
 * must reach every tree an import let in, or a failed import or an `rm`
 * leaves it in tmp/ for good. */
#define VG_IMAGE_STORE_LEVELS 3
#define VG_IMAGE_REMOVE_DEPTH (VG_IMAGE_MAX_DEPTH + VG_IMAGE_STORE_LEVELS)
/* How much of an entry's name a message shows (a name may be 4 KiB: the
 * reason after it must still fit on the line). */
#define VG_IMAGE_SHOW_NAME 200
/* A path in the tree, as the kernel bounds one. */
#define VG_IMAGE_PATH_MAX 4096
/* Permission bits kept in the store: the setuid and setgid bits go. */
#define VG_IMAGE_SETID 06000
#define VG_IMAGE_PERM 07777
/* Directories being built stay open to their owner until the last layer
 * is in (a 0555 directory of the image must still take files). */
#define VG_IMAGE_BUILD_DIR 0700
/* A directory a layer needs but does not list. */
#define VG_IMAGE_IMPLICIT_DIR 0755
/* How much of a file is copied or hashed at a time. */
#define VG_IMAGE_BUF 65536

/* ---- entry.c: names ---- */

/* A layer entry's name made relative and canonical into out: "./" and
 * "//" and a trailing "/" go; "" is the root.  -1 with err (no location:
 * the caller adds it) for a "..", an absolute path, or one too long. */
int vg_image_entry_path(const char *name, char *out, size_t cap, struct vg_err *err);
/* "sha256:" and 64 lowercase hex digits, or the digits alone: the hex
 * into hex.  Only these ever become file names in the store. */
bool vg_image_digest_text(const char *s, char hex[VG_IMAGE_HEX]);

/* ---- beneath.c: file operations that never leave the tree ---- */

/* openat2(dirfd, path, flags) resolving beneath dirfd and through no
 * symlink at all ("" is dirfd itself).  -1 with errno (ELOOP: a symlink
 * on the way, EXDEV: ".." or an absolute path). */
int vg_image_openat(int dirfd, const char *path, int flags, mode_t mode);
/* A regular file rel beneath the directory dir, opened for reading
 * through no symlink at all (an OCI layout's own files: a symlink could
 * make a host file part of the image) and without blocking on a FIFO.
 * -1 with err. */
int vg_image_open_file_beneath(const char *dir, const char *rel, struct vg_err *err);
/* Remove name in dirfd, the whole tree when it is a directory, never
 * following a symlink; directories are opened to their owner first.
 * name is one entry of dirfd: "." and ".." are refused. */
int vg_image_remove_at(int dirfd, const char *name, struct vg_err *err);
/* Remove everything in the directory dirfd, which stays. */
int vg_image_empty_dir(int dirfd, struct vg_err *err);

/* ---- digest.c ---- */

/* The record of one entry (docs/IMAGES.md) appended to b: type 'f', 'd'
 * or 'l'; detail is "SIZE SHA256" for a file, the target for a link. */
void vg_image_record(struct vg_buf *b, char type, mode_t mode, const char *path,
                     const char *detail);
/* The digest of the tree under rootfd (not of rootfd's own mode). */
int vg_image_digest(int rootfd, struct vg_image_sum *sum, struct vg_err *err);

/* ---- layer.c: one layer applied to a tree ---- */

struct vg_dirmode;
struct vg_build {
    int rootfd;
    uint64_t total;            /* bytes of file contents written, all layers */
    size_t skipped, stripped;
    struct vg_dirmode *modes;  /* directories' modes, applied at the end */
    size_t nmodes, capmodes;
};
struct archive;
/* Pass 1: the whiteouts of a layer, collected (not applied: its digest is
 * not checked yet).  Pass 2: whiteouts applied, then the entries. */
struct vg_whiteouts {
    char **paths;   /* the victim; for an opaque marker, the directory */
    bool *opaque;
    size_t n, cap;
};
int vg_layer_scan(struct archive *a, const char *what, struct vg_whiteouts *w,
                  struct vg_err *err);
int vg_layer_whiteout(struct vg_build *b, const struct vg_whiteouts *w, const char *what,
                      struct vg_err *err);
int vg_layer_apply(struct vg_build *b, struct archive *a, const char *what,
                   struct vg_err *err);
void vg_whiteouts_free(struct vg_whiteouts *w);
/* A regular file of vigil's own at path, made as an entry of a layer is
 * (parents beneath the root through no symlink, missing ones made, what
 * was there removed): its fd, open for writing, mode 0600 until the
 * caller sets it; or -1 with err. */
int vg_build_create(struct vg_build *b, const char *path, struct vg_err *err);
/* The directories' own modes, deepest first, then the build state freed. */
int vg_build_finish(struct vg_build *b, struct vg_err *err);
void vg_build_free(struct vg_build *b);

/* ---- stream.c: where one layer's bytes come from ---- */

struct vg_layer {
    char *file;        /* the file holding it: an OCI blob, or the tarball */
    char *layout;      /* an OCI blob's layout: file is then beneath it */
    char *member;      /* NULL: the file is the layer; else its member there */
    char sha[VG_IMAGE_HEX]; /* expected SHA-256 of its bytes; "" unknown */
    int64_t size;      /* expected size, -1 unknown */
    char what[96];     /* "layer 2 of 3 (sha256:0123456789ab)", for messages */
};
struct vg_layer_stream;
/* The layer's tar (gzip, zstd or plain) as a libarchive reader. */
struct vg_layer_stream *vg_layer_open(const struct vg_layer *l, struct archive **a,
                                      struct vg_err *err);
/* Reads what is left, checks the digest and size, frees.  0 or -1. */
int vg_layer_close(struct vg_layer_stream *s, bool check, struct vg_err *err);
void vg_layers_free(struct vg_layer *l, size_t n);

/* ---- oci.c, docker.c: a source's layers, lowest first ---- */

int vg_oci_layers(const char *dir, struct vg_layer **l, size_t *n, char **source,
                  struct vg_err *err);
int vg_docker_layers(const char *tarball, struct vg_layer **l, size_t *n,
                     struct vg_err *err);

/* ---- store.c ---- */

/* $STATE/images, open (docs/IMAGES.md, "The store"). */
struct vg_store {
    char *dir;
    int fd, lockfd;
};
int vg_store_open(struct vg_store *s, bool create, struct vg_err *err);
void vg_store_close(struct vg_store *s);
/* Hold the store's lock (flock) while names and images change. */
int vg_store_lock(struct vg_store *s, struct vg_err *err);
/* A fresh directory in tmp/: its name (malloc'd) and an fd. */
int vg_store_tmpdir(struct vg_store *s, const char *kind, char **name, int *fd,
                    struct vg_err *err);
/* Remove what imports and removals that died (SIGKILL: no cleanup ran)
 * left in tmp/: an entry vigil named whose pid no longer exists. */
void vg_store_sweep(struct vg_store *s);
/* Remove tmp/NAME, said on err if it cannot go. */
int vg_store_tmpdir_remove(struct vg_store *s, const char *name, struct vg_err *err);
/* A name, "sha256:HEX", HEX, or a unique prefix of 12+ digits -> hex. */
int vg_store_resolve(struct vg_store *s, const char *ref, char hex[VG_IMAGE_HEX],
                     struct vg_err *err);
/* Point name at hex (atomically) and rewrite the names of both images'
 * manifests.  The lock must be held. */
int vg_store_name(struct vg_store *s, const char *name, const char *hex, struct vg_err *err);
/* The names pointing at hex, comma-separated (malloc'd, NULL for none). */
char *vg_store_names_of(struct vg_store *s, const char *hex);
/* Rewrite sha256/HEX/manifest.json's "names" from the index. */
int vg_store_sync_names(struct vg_store *s, const char *hex, struct vg_err *err);

/* ---- manifest.c ---- */

struct vg_build_info;
struct vg_manifest {
    const char *hex, *names, *source, *created;
    const struct vg_import_result *r;
    const struct vg_layer *layers;       /* an import's */
    size_t nlayers;
    const struct vg_build_info *build;   /* a build's (build_int.h), else NULL */
};
/* manifest.json's text. */
void vg_manifest_text(const struct vg_manifest *m, struct vg_buf *b);

/* ---- commit.c ---- */

/* The finished directory tmp/TMP (fd tfd, holding rootfs) into the store:
 * m (hex, names and created filled in here, from m->r and name) written
 * as its manifest.json, the directory renamed to sha256/HEX, name pointed
 * at it.  *existed when that content was stored already (the directory
 * is then removed). */
int vg_store_commit(struct vg_store *s, const char *tmp, int tfd, const char *name,
                    struct vg_manifest *m, bool *existed, struct vg_err *err);
/* Write text as dirfd/name, atomically (a temporary name, then rename). */
int vg_store_write_file(int dirfd, const char *name, const char *text, size_t len,
                        struct vg_err *err);
#endif
