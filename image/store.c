/* store.c: the image store, $STATE/images (STATE as util/statedir.c
 * finds it for logs): sha256/HEX/{rootfs,manifest.json} for each image,
 * names/NAME holding "sha256:HEX" for each name, tmp/ for imports and
 * removals under way (renamed in or out whole, so an image is either all
 * there or absent), and .lock.  Every path below the store is opened
 * relative to its fd without following a symlink. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image_int.h"
#include "util/jsonr.h"
#include "util/statedir.h"

#define STORE_DIR "images"
#define LOCK_FILE ".lock"
#define NAME_FILE_MAX 128
#define SHORT_MIN 12 /* digits of a prefix given for a digest, as ls shows */
#define MANIFEST "manifest.json"
#define MANIFEST_MAX (1u << 20)
#define TMP_TEMPLATE "XXXXXX" /* mkdtemp's */
#define TMP_RANDOM (sizeof TMP_TEMPLATE - 1)

static const char *const subdirs[] = {"sha256", "names", "tmp"};

static int mkdir_open(int dirfd, const char *name, bool create)
{
    if (create && mkdirat(dirfd, name, S_IRWXU) < 0 && errno != EEXIST)
        return -1;
    return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int vg_store_open(struct vg_store *s, bool create, struct vg_err *err)
{
    *s = (struct vg_store){.fd = -1, .lockfd = -1};
    char *state = vg_state_dir(create, "image store", "vigil image import", err);
    if (!state)
        return -1;
    s->dir = vg_xasprintf("%s/" STORE_DIR, state);
    int sfd = open(state, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    free(state);
    s->fd = sfd < 0 ? -1 : mkdir_open(sfd, STORE_DIR, create);
    if (sfd >= 0)
        close(sfd);
    for (size_t i = 0; s->fd >= 0 && create && i < VG_ARRAY_LEN(subdirs); i++) {
        int fd = mkdir_open(s->fd, subdirs[i], true);
        if (fd < 0)
            break;
        close(fd);
        if (i + 1 == VG_ARRAY_LEN(subdirs))
            s->lockfd = openat(s->fd, LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                               S_IRUSR | S_IWUSR);
    }
    if (s->fd < 0 || (create && s->lockfd < 0)) {
        vg_errf(err, errno == ENOENT && !create ? "no image store at %s yet (vigil image import)"
                                                : "image store %s: %m", s->dir);
        vg_store_close(s);
        return -1;
    }
    return 0;
}

void vg_store_close(struct vg_store *s)
{
    if (s->fd >= 0)
        close(s->fd);
    if (s->lockfd >= 0)
        close(s->lockfd);
    free(s->dir);
    *s = (struct vg_store){.fd = -1, .lockfd = -1};
}

int vg_store_lock(struct vg_store *s, struct vg_err *err)
{
    if (s->lockfd < 0)
        s->lockfd = openat(s->fd, LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                           S_IRUSR | S_IWUSR);
    if (s->lockfd < 0 || flock(s->lockfd, LOCK_EX) < 0) {
        vg_errf(err, "lock %s/" LOCK_FILE ": %m", s->dir);
        return -1;
    }
    return 0;
}

int vg_store_tmpdir(struct vg_store *s, const char *kind, char **name, int *fd,
                    struct vg_err *err)
{
    char *tmpl = vg_xasprintf("%s/tmp/%s-%d-" TMP_TEMPLATE, s->dir, kind, (int)getpid());
    if (!mkdtemp(tmpl)) {
        vg_errf(err, "%s: %m", tmpl);
        free(tmpl);
        return -1;
    }
    *name = vg_xstrdup(tmpl + strlen(s->dir) + strlen("/tmp/"));
    free(tmpl);
    char *rel = vg_xasprintf("tmp/%s", *name);
    *fd = vg_image_openat(s->fd, rel, O_RDONLY | O_DIRECTORY, 0);
    free(rel);
    if (*fd < 0) {
        vg_errf(err, "%s/tmp/%s: %m", s->dir, *name);
        free(*name);
        return -1;
    }
    return 0;
}

/* The pid in a tmp/ entry's name (KIND-PID-XXXXXX, vg_store_tmpdir), or 0
 * when the name is not one vigil gave. */
static pid_t tmp_owner(const char *name)
{
    static const char *const kinds[] = {"import-", "rm-", "build-"};
    for (size_t i = 0; i < VG_ARRAY_LEN(kinds); i++) {
        size_t k = strlen(kinds[i]);
        if (strncmp(name, kinds[i], k))
            continue;
        char *end;
        long pid = strtol(name + k, &end, 10);
        return pid > 0 && *end == '-' && strlen(end + 1) == TMP_RANDOM ? (pid_t)pid : 0;
    }
    return 0;
}

void vg_store_sweep(struct vg_store *s)
{
    int tfd = vg_image_openat(s->fd, "tmp", O_RDONLY | O_DIRECTORY, 0);
    DIR *d = tfd >= 0 ? fdopendir(tfd) : NULL;
    if (!d) {
        if (tfd >= 0)
            close(tfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t pid = tmp_owner(e->d_name);
        struct vg_err why;
        /* only a dead owner's: a live pid (perhaps reused) keeps its dir */
        if (pid && kill(pid, 0) < 0 && errno == ESRCH)
            (void)vg_image_remove_at(dirfd(d), e->d_name, &why); /* best effort: tried again next time */
    }
    closedir(d);
}

int vg_store_tmpdir_remove(struct vg_store *s, const char *name, struct vg_err *err)
{
    int tfd = vg_image_openat(s->fd, "tmp", O_RDONLY | O_DIRECTORY, 0);
    if (tfd < 0) {
        vg_errf(err, "%s/tmp: %m", s->dir);
        return -1;
    }
    int rc = vg_image_remove_at(tfd, name, err);
    close(tfd);
    return rc;
}

/* names/NAME's digest into hex; 1 when there is no such name. */
static int read_name(struct vg_store *s, const char *name, char hex[VG_IMAGE_HEX])
{
    char *rel = vg_xasprintf("names/%s", name);
    int fd = vg_image_openat(s->fd, rel, O_RDONLY, 0);
    free(rel);
    if (fd < 0)
        return 1;
    char buf[NAME_FILE_MAX];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 1;
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return vg_image_digest_text(buf, hex) ? 0 : 1;
}

static bool image_exists(struct vg_store *s, const char *hex)
{
    char *rel = vg_xasprintf("sha256/%s", hex);
    int fd = vg_image_openat(s->fd, rel, O_PATH | O_DIRECTORY, 0);
    free(rel);
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

/* The one stored image whose digest starts with prefix. */
static int by_prefix(struct vg_store *s, const char *prefix, char hex[VG_IMAGE_HEX],
                     struct vg_err *err)
{
    int fd = vg_image_openat(s->fd, "sha256", O_RDONLY | O_DIRECTORY, 0);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        vg_errf(err, "no image %s in %s", prefix, s->dir);
        return -1;
    }
    size_t found = 0, n = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, n) && strlen(e->d_name) == VG_IMAGE_HEX - 1 &&
            found++ == 0)
            memcpy(hex, e->d_name, VG_IMAGE_HEX);
    closedir(d);
    if (found != 1)
        vg_errf(err, found ? "%s: %zu images start with it: give more digits"
                           : "no image %s in the store", prefix, found);
    return found == 1 ? 0 : -1;
}

int vg_store_resolve(struct vg_store *s, const char *ref, char hex[VG_IMAGE_HEX],
                     struct vg_err *err)
{
    struct vg_err why;
    if (vg_image_name_ok(ref, &why) && read_name(s, ref, hex) == 0)
        return 0;
    if (vg_image_digest_text(ref, hex)) {
        if (image_exists(s, hex))
            return 0;
        vg_errf(err, "no image sha256:%s in the store", hex);
        return -1;
    }
    const char *p = !strncmp(ref, "sha256:", 7) ? ref + 7 : ref;
    if (strlen(p) >= SHORT_MIN && strspn(p, "0123456789abcdef") == strlen(p))
        return by_prefix(s, p, hex, err);
    vg_errf(err, "no image named %s in the store", ref);
    return -1;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *vg_store_names_of(struct vg_store *s, const char *hex)
{
    int fd = vg_image_openat(s->fd, "names", O_RDONLY | O_DIRECTORY, 0);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    char h[VG_IMAGE_HEX];
    struct vg_err why;
    while ((e = readdir(d)))
        if (vg_image_name_ok(e->d_name, &why) && read_name(s, e->d_name, h) == 0 &&
            !strcmp(h, hex)) {
            if (n == cap)
                v = vg_xrealloc(v, (cap = cap ? 2 * cap : 8) * sizeof *v);
            v[n++] = vg_xstrdup(e->d_name);
        }
    closedir(d);
    if (n) /* readdir's order is the file system's: say them sorted */
        qsort(v, n, sizeof *v, by_str);
    struct vg_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        vg_buf_printf(&b, "%s%s", i ? "," : "", v[i]);
        free(v[i]);
    }
    free(v);
    return b.data;
}

/* Write manifest.json again with the index's names for hex. */
int vg_store_sync_names(struct vg_store *s, const char *hex, struct vg_err *err)
{
    char *rel = vg_xasprintf("sha256/%s", hex);
    int dfd = vg_image_openat(s->fd, rel, O_RDONLY | O_DIRECTORY, 0);
    free(rel);
    if (dfd < 0)
        return 0; /* the image went: nothing to say */
    int fd = vg_image_openat(dfd, MANIFEST, O_RDONLY, 0);
    char *text = NULL;
    ssize_t n = 0;
    if (fd >= 0) {
        text = vg_xmalloc(MANIFEST_MAX + 1);
        n = read(fd, text, MANIFEST_MAX);
        close(fd);
    }
    struct vg_jv *v = n > 0 ? vg_jv_parse(text, (size_t)n, err) : NULL;
    free(text);
    int rc = -1;
    if (v && v->type == VG_JOBJ) {
        char *names = vg_store_names_of(s, hex);
        struct vg_buf out = {0};
        struct vg_json j;
        vg_json_init(&j, &out, true);
        vg_json_obj_begin(&j);
        for (size_t i = 0; i < v->n; i++) {
            vg_json_key(&j, v->keys[i]);
            if (strcmp(v->keys[i], "names")) {
                vg_jv_write(&v->items[i], &j);
                continue;
            }
            vg_json_arr_begin(&j);
            for (char *save = NULL, *w = names ? strtok_r(names, ",", &save) : NULL; w;
                 w = strtok_r(NULL, ",", &save))
                vg_json_str(&j, w);
            vg_json_arr_end(&j);
        }
        vg_json_obj_end(&j);
        vg_buf_puts(&out, "\n");
        rc = vg_store_write_file(dfd, MANIFEST, out.data, out.len, err);
        vg_buf_free(&out);
        free(names);
    } else
        vg_errf(err, "%s/sha256/%s/" MANIFEST ": unreadable", s->dir, hex);
    vg_jv_free(v);
    close(dfd);
    return rc;
}

int vg_store_name(struct vg_store *s, const char *name, const char *hex, struct vg_err *err)
{
    char old[VG_IMAGE_HEX];
    bool had = read_name(s, name, old) == 0;
    int nfd = vg_image_openat(s->fd, "names", O_RDONLY | O_DIRECTORY, 0);
    if (nfd < 0) {
        vg_errf(err, "%s/names: %m", s->dir);
        return -1;
    }
    char *line = vg_xasprintf("sha256:%s\n", hex);
    int rc = vg_store_write_file(nfd, name, line, strlen(line), err);
    free(line);
    close(nfd);
    if (rc == 0)
        rc = vg_store_sync_names(s, hex, err);
    if (rc == 0 && had && strcmp(old, hex))
        rc = vg_store_sync_names(s, old, err);
    return rc;
}
