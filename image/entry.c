/* entry.c: the names an image brings: a layer entry's path, made
 * canonical or refused, a --name, a digest.  No file system here: this
 * is the text half of the path safety (beneath.c is the other). */
#include <string.h>

#include "image/image_int.h"
#include "util/path.h"

#define NAME_MAX_LEN 128
#define DIGEST_PREFIX "sha256:"
#define HEX_DIGITS 64

int vg_image_entry_path(const char *name, char *out, size_t cap, struct vg_err *err)
{
    if (name[0] == '/') {
        /* tar strips a leading '/' by default; an image that keeps one
         * means the host's root, which vigil never writes */
        vg_errf(err, "absolute path refused");
        return -1;
    }
    size_t len = 0, n, depth = 0;
    out[0] = '\0';
    for (const char *c = vg_path_comp(name, &n); c; c = vg_path_comp(c + n, &n)) {
        enum vg_path_kind k = vg_path_kind(c, n);
        if (k == VG_PATH_DOT)
            continue;
        /* the cap of docs/IMAGES.md, enforced here on every name: a tree
         * deeper than the walks and removals go could be neither hashed
         * nor removed again (it stayed in tmp/) */
        if (++depth > VG_IMAGE_MAX_DEPTH) {
            vg_errf(err, "deeper than %d directories", VG_IMAGE_MAX_DEPTH);
            return -1;
        }
        if (k == VG_PATH_DOTDOT) {
            /* even a ".." that stays inside ("a/../b") is refused: no
             * honest layer writes one, and refusing all of them leaves
             * nothing to get wrong */
            vg_errf(err, "\"..\" in the path refused");
            return -1;
        }
        if (len + (len > 0) + n + 1 > cap) {
            vg_errf(err, "path longer than %zu bytes", cap - 1);
            return -1;
        }
        if (len)
            out[len++] = '/';
        memcpy(out + len, c, n);
        len += n;
        out[len] = '\0';
    }
    return 0;
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("._:@+-", c);
}

bool vg_image_name_ok(const char *name, struct vg_err *err)
{
    size_t n = strlen(name);
    if (n == 0 || n > NAME_MAX_LEN) {
        vg_errf(err, "image name must be 1 to %d characters", NAME_MAX_LEN);
        return false;
    }
    if (name[0] == '.' || name[0] == '-') {
        vg_errf(err, "image name '%s' must not start with '%c'", name, name[0]);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if (!name_char(name[i])) {
            vg_errf(err, "image name '%s': only letters, digits and . _ : @ + - (no '/')",
                    name);
            return false;
        }
    return true;
}

bool vg_image_digest_text(const char *s, char hex[VG_IMAGE_HEX])
{
    if (!strncmp(s, DIGEST_PREFIX, strlen(DIGEST_PREFIX)))
        s += strlen(DIGEST_PREFIX);
    if (strlen(s) != HEX_DIGITS || strspn(s, "0123456789abcdef") != HEX_DIGITS)
        return false;
    memcpy(hex, s, VG_IMAGE_HEX);
    return true;
}
