/* manifest.c: an image's manifest.json (docs/IMAGES.md, "The store"; a
 * build's "build" object, "Build"), and the atomic file writes the store
 * makes (a temporary name in the same directory, then rename: a reader
 * sees the old file or the new). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/build_int.h"
#include "util/json.h"

#define FILE_MODE (S_IRUSR | S_IWUSR | S_IRGRP | S_IROTH)

static void str_field(struct vg_json *j, const char *key, const char *value)
{
    vg_json_key(j, key);
    vg_json_str(j, value);
}

/* A build's "build": its spec (text and SHA-256), the files its add lines
 * put in, what made it, and every installed package. */
static void build_json(struct vg_json *j, const struct vg_build_info *bi)
{
    vg_json_obj_begin(j);
    vg_json_key(j, "spec");
    vg_json_obj_begin(j);
    str_field(j, "path", bi->spec_path);
    char *d = vg_xasprintf("sha256:%s", bi->spec_sha);
    str_field(j, "sha256", d);
    free(d);
    str_field(j, "text", bi->spec_text);
    vg_json_obj_end(j);
    vg_json_key(j, "added");
    vg_json_arr_begin(j);
    for (size_t i = 0; i < bi->spec->nadds; i++) {
        vg_json_obj_begin(j);
        char *dst = vg_xasprintf("/%s", bi->spec->adds[i].dst);
        str_field(j, "path", dst);
        free(dst);
        str_field(j, "source", bi->spec->adds[i].src);
        d = vg_xasprintf("sha256:%s", bi->add_sha[i]);
        str_field(j, "sha256", d);
        free(d);
        vg_json_obj_end(j);
    }
    vg_json_arr_end(j);
    str_field(j, "tool", bi->tool);
    str_field(j, "mode", bi->mode);
    vg_json_key(j, "source_date_epoch");
    vg_json_int(j, VG_BUILD_EPOCH);
    vg_json_key(j, "packages");
    vg_json_arr_begin(j);
    for (size_t i = 0; i < bi->npackages; i++) {
        vg_json_obj_begin(j);
        str_field(j, "name", bi->packages[i].name);
        str_field(j, "architecture", bi->packages[i].arch);
        str_field(j, "version", bi->packages[i].version);
        vg_json_obj_end(j);
    }
    vg_json_arr_end(j);
    vg_json_obj_end(j);
}

void vg_manifest_text(const struct vg_manifest *m, struct vg_buf *b)
{
    struct vg_json j;
    vg_json_init(&j, b, true);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "digest");
    char *d = vg_xasprintf("sha256:%s", m->hex);
    vg_json_str(&j, d);
    free(d);
    vg_json_key(&j, "names");
    vg_json_arr_begin(&j);
    if (m->names)
        vg_json_str(&j, m->names);
    vg_json_arr_end(&j);
    vg_json_key(&j, "source");
    vg_json_str(&j, m->source);
    vg_json_key(&j, "created");
    vg_json_str(&j, m->created);
    vg_json_key(&j, "entries");
    vg_json_uint(&j, m->r->sum.entries);
    vg_json_key(&j, "bytes");
    vg_json_uint(&j, m->r->sum.bytes);
    vg_json_key(&j, "skipped_special_files");
    vg_json_uint(&j, m->r->skipped);
    vg_json_key(&j, "setid_bits_stripped");
    vg_json_uint(&j, m->r->stripped);
    if (m->build) {
        vg_json_key(&j, "build");
        build_json(&j, m->build);
        vg_json_obj_end(&j);
        vg_buf_puts(b, "\n");
        return;
    }
    vg_json_key(&j, "layers");
    vg_json_arr_begin(&j);
    for (size_t i = 0; i < m->nlayers; i++) {
        const struct vg_layer *l = &m->layers[i];
        if (l->sha[0]) {
            char *s = vg_xasprintf("sha256:%s", l->sha);
            vg_json_str(&j, s);
            free(s);
        } else
            vg_json_str(&j, l->member ? l->member : l->file);
    }
    vg_json_arr_end(&j);
    vg_json_obj_end(&j);
    vg_buf_puts(b, "\n");
}

int vg_store_write_file(int dirfd, const char *name, const char *text, size_t len,
                        struct vg_err *err)
{
    char *tmp = vg_xasprintf(".%s.%d.tmp", name, (int)getpid());
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, FILE_MODE);
    int rc = fd < 0 ? -1 : vg_write_all(fd, text, len);
    if (fd >= 0 && close(fd) < 0)
        rc = -1;
    if (rc == 0)
        rc = renameat(dirfd, tmp, dirfd, name);
    if (rc < 0) {
        vg_errf(err, "write %s: %m", name);
        if (fd >= 0)
            unlinkat(dirfd, tmp, 0);
    }
    free(tmp);
    return rc;
}
