/* generalize.c: see generalize.h.  The rules are the table below, tried
 * in order: the first whose prefix the path lies in decides. */
#include "insight/generalize.h"

#include <stdlib.h>
#include <string.h>

#include "policy/glob.h"

enum how {
    G_VAR,       /* the place's variable and everything below: $WORK/ ** */
    G_TREE1,     /* the prefix's next component and below: /usr/lib/ ** */
    G_PREFIX,    /* the prefix and everything below: /etc/ ** */
    G_PARENT,    /* the file's directory and below */
    G_EXACT,     /* the path itself */
};

/* Which place a G_VAR row stands for. */
enum place { P_NONE, P_WORK, P_TMP, P_HOME };

struct row {
    unsigned classes;   /* bit (1 << vg_class) */
    enum place place;   /* G_VAR: the place (prefix unused) */
    const char *prefix; /* else: a literal directory, "/" for the root's own entries */
    enum how how;
};

#define R (1u << VG_CLASS_READ)
#define W (1u << VG_CLASS_WRITE)
#define X (1u << VG_CLASS_EXEC)

/* Order matters: $WORK may lie in $TMP or in the home directory. */
static const struct row rows[] = {
    {R | W, P_WORK, NULL, G_VAR},
    {R | W, P_TMP, NULL, G_VAR},
    {R | W, P_HOME, NULL, G_VAR},
    {X, P_NONE, "/", G_EXACT},          /* a program is named exactly */
    {R, P_NONE, "/usr/local", G_TREE1}, /* /usr/local/lib/ ** */
    {R, P_NONE, "/usr", G_TREE1},       /* /usr/lib/ **, /usr/share/ ** */
    {R, P_NONE, "/etc", G_PREFIX},
    {R, P_NONE, "/proc", G_PREFIX},
    {R, P_NONE, "/sys", G_PARENT},
    {R | W, P_NONE, "/dev", G_EXACT},
    {W, P_NONE, "/", G_EXACT},          /* writes elsewhere: only what was written */
    {R, P_NONE, "/", G_PARENT},
};

static bool under(const char *path, const char *dir, size_t *n)
{
    *n = strlen(dir);
    if (*n == 1 && dir[0] == '/')
        *n = 0;
    return !strncmp(path, dir, *n) && (path[*n] == '/' || path[*n] == '\0');
}

static const char *place_of(const struct vg_places *pl, enum place p, const char **var)
{
    static const char *const vars[] = {[P_WORK] = "$WORK", [P_TMP] = "$TMP", [P_HOME] = "~"};
    const char *dirs[] = {[P_WORK] = pl ? pl->work : NULL, [P_TMP] = pl ? pl->tmp : NULL,
                          [P_HOME] = pl ? pl->home : NULL};
    *var = vars[p];
    return dirs[p];
}

/* path[0..n) as a literal directory, then everything below it. */
static void put_tree(const char *path, size_t n, struct vg_buf *out)
{
    char *dir = vg_xstrndup(path, n);
    vg_glob_put_literal(out, dir);
    vg_buf_puts(out, "/**");
    free(dir);
}

/* The file's directory and below.  A top-level entry of "/" ("/", "/bin",
 * the merged-/usr links) is named exactly: "/ **" would be everything. */
static void put_parent(const char *path, struct vg_buf *out)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        vg_glob_put_literal(out, path);
    else
        put_tree(path, (size_t)(slash - path), out);
}

/* The prefix's next component and below (the prefix, or a file right in
 * it, exactly). */
static void put_tree1(const char *path, size_t n, struct vg_buf *out)
{
    const char *next = path[n] == '/' ? strchr(path + n + 1, '/') : NULL;
    if (!next)
        vg_glob_put_literal(out, path);
    else
        put_tree(path, (size_t)(next - path), out);
}

static bool apply(const struct row *r, const char *path, const struct vg_places *pl,
                  struct vg_buf *out)
{
    size_t n;
    if (r->how == G_VAR) {
        const char *var, *dir = place_of(pl, r->place, &var);
        if (!dir || !dir[0] || !under(path, dir, &n) || n == 0)
            return false;
        vg_buf_printf(out, "%s/**", var);
        return true;
    }
    if (!under(path, r->prefix, &n))
        return false;
    switch (r->how) {
    case G_TREE1: put_tree1(path, n, out); break;
    case G_PREFIX: put_tree(r->prefix, strlen(r->prefix), out); break;
    case G_PARENT: put_parent(path, out); break;
    default: vg_glob_put_literal(out, path); break;
    }
    return true;
}

void vg_generalize(enum vg_class cls, const char *path, const struct vg_places *places,
                   bool exact, struct vg_buf *out)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(rows); i++) {
        if (!(rows[i].classes & (1u << cls)) || (exact && rows[i].how != G_VAR))
            continue;
        if (apply(&rows[i], path, places, out))
            return;
    }
    vg_glob_put_literal(out, path);
}

void vg_generalize_file(const char *path, const struct vg_places *places, struct vg_buf *out)
{
    static const enum place order[] = {P_WORK, P_TMP, P_HOME}; /* as the rows above */
    for (size_t i = 0; i < VG_ARRAY_LEN(order); i++) {
        size_t n;
        const char *var, *dir = place_of(places, order[i], &var);
        if (dir && dir[0] && under(path, dir, &n) && n > 0 && path[n]) {
            vg_buf_puts(out, var);
            vg_glob_put_literal(out, path + n);
            return;
        }
    }
    vg_glob_put_literal(out, path);
}
