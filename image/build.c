/* build.c: `vigil image build SPEC --name NAME` (docs/IMAGES.md, "Build"):
 * the spec parsed, then in a fresh directory of the store's tmp/
 * (build-PID-XXXXXX: rootfs/ and work/, mmdebstrap's TMPDIR and log)
 * mmdebstrap's tree applied with an import's rules, tidied of what makes
 * builds differ, the fixed files and the spec's own added, the package
 * list taken, the tree hashed and committed as an import is.  Any error
 * removes the directory; a build killed outright leaves it to the next
 * import's or build's sweep. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/build.h"
#include "image/build_int.h"
#include "util/sha256.h"

#define ROOTFS "rootfs"
#define DIR_MODE (S_IRWXU | S_IRGRP | S_IXGRP | S_IROTH | S_IXOTH)
#define SOURCE_PREFIX "build:"

struct job {
    struct vg_store s;
    char *tmp;                  /* its directory's name in tmp/ */
    int tfd, workfd, logfd;
    char *spec_path, *spec_dir, *text;
    size_t len;
    struct vg_spec spec;
    struct vg_build b;
    char (*add_sha)[VG_IMAGE_HEX];
    struct vg_package *packages;
    size_t npackages;
    struct vg_debs debs;
};

static int read_spec(struct job *j, const char *arg, struct vg_err *err)
{
    char *found = vg_spec_find(arg, err);
    if (!found)
        return -1;
    /* one byte over the cap: the parser then says the spec is too big;
     * its errors name the spec as it was given */
    j->text = vg_read_file(found, VG_SPEC_MAX_BYTES + 1, &j->len, err);
    int rc = j->text ? vg_spec_parse(found, j->text, j->len, &j->spec, err) : -1;
    if (rc == 0 && !(j->spec_path = realpath(found, NULL))) {
        vg_errf(err, "spec %s: %m", found);
        rc = -1;
    }
    free(found);
    if (rc < 0)
        return -1;
    char *copy = vg_xstrdup(j->spec_path);
    j->spec_dir = vg_xstrdup(dirname(copy));
    free(copy);
    j->add_sha = vg_xcalloc(j->spec.nadds ? j->spec.nadds : 1, sizeof *j->add_sha);
    return 0;
}

/* rootfs/ and work/ (with its log) in the build's directory. */
static int make_dirs(struct job *j, struct vg_err *err)
{
    const char *bad = NULL;
    if (mkdirat(j->tfd, ROOTFS, DIR_MODE) < 0)
        bad = ROOTFS;
    else if ((j->b.rootfd = vg_image_openat(j->tfd, ROOTFS, O_RDONLY | O_DIRECTORY, 0)) < 0)
        bad = ROOTFS;
    else if (mkdirat(j->tfd, VG_BUILD_WORK, S_IRWXU) < 0 ||
             (j->workfd = vg_image_openat(j->tfd, VG_BUILD_WORK, O_RDONLY | O_DIRECTORY, 0)) < 0)
        bad = VG_BUILD_WORK;
    else if ((j->logfd = openat(j->workfd, VG_BUILD_LOG,
                                O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                                S_IRUSR | S_IWUSR)) < 0)
        bad = VG_BUILD_WORK "/" VG_BUILD_LOG;
    if (bad)
        vg_errf(err, "%s/tmp/%s/%s: %m", j->s.dir, j->tmp, bad);
    return bad ? -1 : 0;
}

/* The tree: mmdebstrap's, tidied, the overlay on it, modes set, hashed. */
static int make_tree(struct job *j, struct vg_build_result *r, struct vg_err *err)
{
    char *workdir = vg_xasprintf("%s/tmp/%s/" VG_BUILD_WORK, j->s.dir, j->tmp);
    j->debs = (struct vg_debs){.spec = &j->spec, .workdir = workdir, .logfd = j->logfd};
    int rc = vg_mmdebstrap(&j->debs, &j->b, err);
    free(workdir);
    if (rc == 0)
        rc = vg_build_tidy(&j->b, err);
    if (rc == 0)
        rc = vg_build_overlay(&j->b, &j->spec, j->spec_path, j->spec_dir, j->add_sha, err);
    if (rc == 0)
        rc = vg_build_finish(&j->b, err);
    /* before the digest: the digest is of the tree exactly as stored */
    if (rc == 0)
        rc = vg_build_packages(j->b.rootfd, j->logfd, &j->packages, &j->npackages, err);
    if (rc == 0 && vg_image_digest(j->b.rootfd, &r->r.sum, err) < 0) {
        struct vg_err why = *err;
        vg_errf(err, "digest of the tree: %s", why.msg);
        rc = -1;
    }
    r->r.skipped = j->b.skipped;
    r->r.stripped = j->b.stripped;
    r->packages = j->npackages;
    snprintf(r->mode, sizeof r->mode, "%s", j->debs.mode);
    return rc;
}

static int commit(struct job *j, const char *name, struct vg_build_result *r,
                  struct vg_err *err)
{
    close(j->logfd);
    close(j->workfd);
    j->logfd = j->workfd = -1;
    if (vg_image_remove_at(j->tfd, VG_BUILD_WORK, err) < 0)
        return -1;
    struct vg_build_info bi = {.spec_path = j->spec_path, .spec_text = j->text,
                               .spec = &j->spec, .add_sha = j->add_sha,
                               .packages = j->packages, .npackages = j->npackages,
                               .mode = j->debs.mode, .tool = j->debs.tool};
    vg_sha256_buf(j->text, j->len, bi.spec_sha);
    char *source = vg_xasprintf(SOURCE_PREFIX "%s", j->spec_path);
    struct vg_manifest m = {.source = source, .r = &r->r, .build = &bi};
    int rc = vg_store_commit(&j->s, j->tmp, j->tfd, name, &m, &r->r.existed, err);
    free(source);
    return rc;
}

static int run_build(struct job *j, const char *name, struct vg_build_result *r,
                     struct vg_err *err)
{
    if (vg_store_open(&j->s, true, err) < 0)
        return -1;
    vg_store_sweep(&j->s);
    if (vg_store_tmpdir(&j->s, "build", &j->tmp, &j->tfd, err) < 0)
        return -1;
    int rc = make_dirs(j, err);
    if (rc == 0)
        rc = make_tree(j, r, err);
    if (j->b.rootfd >= 0)
        close(j->b.rootfd);
    j->b.rootfd = -1;
    if (rc == 0)
        rc = commit(j, name, r, err);
    struct vg_err why;
    if (rc < 0 && !r->r.existed && vg_store_tmpdir_remove(&j->s, j->tmp, &why) < 0) {
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n, " (and %s/tmp/%s stays: %s)", j->s.dir,
                 j->tmp, why.msg);
    }
    return rc;
}

int vg_image_build(const char *arg, const char *name, struct vg_build_result *r,
                   struct vg_err *err)
{
    *r = (struct vg_build_result){0};
    if (!vg_image_name_ok(name, err))
        return -1;
    struct job j = {.s = {.fd = -1, .lockfd = -1}, .tfd = -1, .workfd = -1, .logfd = -1,
                    .b = {.rootfd = -1}};
    int rc = read_spec(&j, arg, err);
    if (rc == 0)
        rc = run_build(&j, name, r, err);
    r->spec = j.spec_path;
    const int fds[] = {j.logfd, j.workfd, j.tfd};
    for (size_t k = 0; k < VG_ARRAY_LEN(fds); k++)
        if (fds[k] >= 0)
            close(fds[k]);
    vg_build_free(&j.b);
    vg_packages_free(j.packages, j.npackages);
    vg_spec_free(&j.spec);
    free(j.add_sha);
    free(j.text);
    free(j.spec_dir);
    free(j.tmp);
    vg_store_close(&j.s);
    return rc;
}

void vg_build_result_free(struct vg_build_result *r)
{
    free(r->spec);
    r->spec = NULL;
}
