/* tidy.c: what a build removes from the tree mmdebstrap made, because it
 * would make two builds of the same spec, with the same package versions,
 * differ (docs/IMAGES.md, "Build").  Two builds in a row give the same
 * tar (mmdebstrap, SOURCE_DATE_EPOCH set, cleans these itself); the list
 * is vigil's own so that the digest does not rest on one version's
 * clean-up, and covers what changes with the day or the mirror's state.
 * Removed as whiteouts are (layer.c): beneath the root, through no
 * symlink; what is absent is skipped. */
#include "image/build_int.h"

static const struct {
    const char *path;
    bool empty;  /* the directory stays, empty; else the entry goes */
} removed[] = {
    /* the mirror's indexes as they were that day: they change with every
     * push of the mirror, when no installed package does */
    {"var/lib/apt/lists", true},
    /* the downloaded .debs, and apt's binary caches of those indexes */
    {"var/cache/apt", true},
    /* logs of the build itself: dates, durations, the host's terminal */
    {"var/log/dpkg.log", false},
    {"var/log/alternatives.log", false},
    {"var/log/apt/history.log", false},
    {"var/log/apt/term.log", false},
    {"var/log/apt/eipp.log.xz", false},
    /* ldconfig's cache of the libraries' inode numbers and times */
    {"var/cache/ldconfig/aux-cache", false},
    /* a random id made at install (etc/machine-id is emptied: overlay.c) */
    {"var/lib/dbus/machine-id", false},
    /* what the packages' scripts left while they ran */
    {"tmp", true},
    {"run", true},
};

int vg_build_tidy(struct vg_build *b, struct vg_err *err)
{
    struct vg_whiteouts w = {0};
    w.n = w.cap = VG_ARRAY_LEN(removed);
    w.paths = vg_xmalloc(w.n * sizeof *w.paths);
    w.opaque = vg_xmalloc(w.n * sizeof *w.opaque);
    for (size_t i = 0; i < w.n; i++) {
        w.paths[i] = vg_xstrdup(removed[i].path);
        w.opaque[i] = removed[i].empty;
    }
    int rc = vg_layer_whiteout(b, &w, "the build's clean-up", err);
    vg_whiteouts_free(&w);
    return rc;
}
