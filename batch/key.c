/* key.c: a task's key, the SHA-256 of everything that decides what its run
 * does, so that a task is known done only by a result of exactly this run
 * (results.c): the command (argv, or the code, its language and the
 * command that runs it), the bytes of every input and their names in the
 * work dir, the stdin bytes, the policy's text with its includes expanded
 * (policy/: the hash the log header has), the limits, env and dry-run
 * flags, the image's digest (null on the host's trees: the slot was there
 * before images were, so keys of tasks without one did not change) and
 * vigil's version.  A name is found once, when the batch starts, and each
 * run gets the digest (--image sha256:HEX): a name moved to another image
 * mid-batch changes nothing of what this batch runs.  It is the hash of
 * one compact JSON document of those, made here and nowhere else.
 *
 * Relative paths (inputs, stdin files, a task's `policy`, -p) are the
 * batch's cwd's, the directory the user typed the command in: each run
 * works in a directory of its own, so they are made absolute here, and
 * every one is checked before anything runs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch/batch.h"
#include "image/image.h"
#include "policy/policy.h"
#include "util/json.h"
#include "util/sha256.h"

/* The key document's layout; a new member is a new number, so that no old
 * key can equal a new one by chance of layout. */
#define KEY_FORMAT 1
#define BUILTIN_POLICY "default.policy"

/* Policies by the argument that names them: 10,000 tasks name a handful. */
struct pol_entry {
    char *arg;               /* NULL: the built-in default */
    char *file;              /* absolute; NULL for the built-in default */
    char sha256[65];
    char *image;             /* its `image`, or NULL */
};

/* Images by the reference that names them, found once. */
struct img_entry {
    char *ref;
    char digest[80];         /* "sha256:HEX" */
};

struct pol_cache {
    struct pol_entry *e;
    unsigned n;
    struct img_entry *img;
    unsigned nimg;
};

static void cache_free(struct pol_cache *c)
{
    for (unsigned i = 0; i < c->n; i++) {
        free(c->e[i].arg);
        free(c->e[i].file);
        free(c->e[i].image);
    }
    free(c->e);
    for (unsigned i = 0; i < c->nimg; i++)
        free(c->img[i].ref);
    free(c->img);
}

static const char *image_of(struct pol_cache *c, const char *ref, struct vg_err *err)
{
    for (unsigned i = 0; i < c->nimg; i++)
        if (!strcmp(c->img[i].ref, ref))
            return c->img[i].digest;
    struct vg_image_ref found;
    struct vg_err why;
    if (vg_image_find(ref, &found, &why) < 0) {
        vg_errf(err, "image %s: %s", ref, why.msg);
        return NULL;
    }
    c->img = vg_xrealloc(c->img, (c->nimg + 1) * sizeof *c->img);
    struct img_entry *e = &c->img[c->nimg++];
    e->ref = vg_xstrdup(ref);
    snprintf(e->digest, sizeof e->digest, "sha256:%s", found.hex);
    vg_image_ref_free(&found);
    return e->digest;
}

static bool same_arg(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Parses the policy (so a bad one, or a missing include, fails now) and
 * keeps its absolute path and its hash. */
static const struct pol_entry *policy_of(struct pol_cache *c, const char *arg, struct vg_err *err)
{
    for (unsigned i = 0; i < c->n; i++)
        if (same_arg(c->e[i].arg, arg))
            return &c->e[i];
    struct pol_entry e = {.arg = arg ? vg_xstrdup(arg) : NULL};
    struct vg_policy *p = NULL;
    if (!arg) {
        p = vg_policy_parse(BUILTIN_POLICY, vg_default_policy_text, err);
    } else {
        char *found = vg_policy_find(arg, err);
        if (found && !(e.file = realpath(found, NULL)))
            vg_errf(err, "policy '%s': %s", arg, strerror(errno));
        free(found);
        p = e.file ? vg_policy_load(e.file, err) : NULL;
    }
    if (!p) {
        free(e.arg);
        free(e.file);
        return NULL;
    }
    memcpy(e.sha256, vg_policy_sha256(p), sizeof e.sha256);
    const char *img = vg_policy_image(p, NULL, NULL);
    e.image = img ? vg_xstrdup(img) : NULL;
    vg_policy_free(p);
    c->e = vg_xrealloc(c->e, (c->n + 1) * sizeof *c->e);
    c->e[c->n] = e;
    return &c->e[c->n++];
}

/* A task's file is a regular file; hashed when the task is keyed. */
static int check_file(struct vg_batch_file *f, const char *what, bool hash, struct vg_err *err)
{
    struct stat st;
    struct vg_err e;
    const char *why = stat(f->path, &st) < 0 ? strerror(errno)
                      : !S_ISREG(st.st_mode)  ? "not a regular file"
                                              : NULL;
    if (!why && hash && vg_sha256_file(f->path, f->sha256, &e) < 0)
        why = e.msg;
    if (why) {
        vg_errf(err, "%s '%s': %s", what, f->path, why);
        return -1;
    }
    f->size = (uint64_t)st.st_size;
    return 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Two inputs copied to one name, or onto the code's file, would fail the
 * run half-way: say so now. */
static int check_names(const struct vg_batch_task *t, struct vg_err *err)
{
    for (unsigned i = 0; i < t->ninputs; i++) {
        const char *name = base_name(t->inputs[i].path);
        if (t->code && !strcmp(name, t->lang->file)) {
            vg_errf(err, "input '%s' would overwrite the code's %s", t->inputs[i].path, name);
            return -1;
        }
        for (unsigned k = 0; k < i; k++)
            if (!strcmp(name, base_name(t->inputs[k].path))) {
                vg_errf(err, "inputs '%s' and '%s' have one name in the work dir",
                        t->inputs[k].path, t->inputs[i].path);
                return -1;
            }
    }
    return 0;
}

static void stdin_hash(const struct vg_batch_task *t, uint64_t *size, char hex[65])
{
    if (t->stdin_file) {
        *size = t->stdin_file->size;
        memcpy(hex, t->stdin_file->sha256, 65);
        return;
    }
    *size = strlen(t->stdin_text);
    vg_sha256_buf(t->stdin_text, *size, hex);
}

static void file_json(struct vg_json *j, const char *name_key, const char *name, uint64_t size,
                      const char *sha256)
{
    vg_json_obj_begin(j);
    if (name) {
        vg_json_key(j, name_key);
        vg_json_str(j, name);
    }
    vg_json_key(j, "size");
    vg_json_uint(j, size);
    vg_json_key(j, "sha256");
    vg_json_str(j, sha256);
    vg_json_obj_end(j);
}

static void stdin_json(const struct vg_batch_task *t, struct vg_json *j, bool with_path)
{
    if (!t->stdin_text && !t->stdin_file) {
        vg_json_null(j);
        return;
    }
    uint64_t size;
    char hex[65];
    stdin_hash(t, &size, hex);
    file_json(j, "path", with_path && t->stdin_file ? t->stdin_file->path : NULL, size, hex);
}

static void strings_json(struct vg_json *j, const char *const *v)
{
    vg_json_arr_begin(j);
    for (; *v; v++)
        vg_json_str(j, *v);
    vg_json_arr_end(j);
}

static void make_key(struct vg_batch_task *t, const char *policy_sha256)
{
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "format");
    vg_json_uint(&j, KEY_FORMAT);
    vg_json_key(&j, "vigil");
    vg_json_str(&j, VG_VERSION);
    vg_json_key(&j, "image");
    if (t->image_digest)
        vg_json_str(&j, t->image_digest);
    else
        vg_json_null(&j);
    vg_json_key(&j, "argv");
    strings_json(&j, t->argv ? (const char *const *)t->argv : t->lang->argv);
    vg_json_key(&j, "code");
    if (t->code) {
        char hex[65];
        vg_sha256_buf(t->code, strlen(t->code), hex);
        file_json(&j, "file", t->lang->file, strlen(t->code), hex);
    } else {
        vg_json_null(&j);
    }
    vg_json_key(&j, "inputs"); /* by the name the run sees: where they came from is not the run */
    vg_json_arr_begin(&j);
    for (unsigned i = 0; i < t->ninputs; i++)
        file_json(&j, "name", base_name(t->inputs[i].path), t->inputs[i].size,
                  t->inputs[i].sha256);
    vg_json_arr_end(&j);
    vg_json_key(&j, "stdin");
    stdin_json(t, &j, false);
    vg_json_key(&j, "policy");
    vg_json_str(&j, policy_sha256);
    vg_json_key(&j, "flags"); /* limits, env, dry run: in the task's order */
    vg_json_arr_begin(&j);
    for (unsigned i = 0; i < t->nflags; i++)
        vg_json_str(&j, t->flags[i]);
    vg_json_arr_end(&j);
    vg_json_obj_end(&j);
    vg_sha256_buf(b.data, b.len, t->key);
    vg_buf_free(&b);
}

static int check_task(const struct vg_batch_opts *o, struct vg_batch_task *t, bool keyed,
                      struct pol_cache *pols, struct vg_err *err)
{
    if (check_names(t, err) < 0)
        return -1;
    for (unsigned i = 0; i < t->ninputs; i++)
        if (check_file(&t->inputs[i], "input", keyed, err) < 0)
            return -1;
    if (t->stdin_file && check_file(t->stdin_file, "stdin", keyed, err) < 0)
        return -1;
    const struct pol_entry *pol = policy_of(pols, t->policy ? t->policy : o->policy, err);
    if (!pol)
        return -1;
    free(t->policy_file);
    t->policy_file = pol->file ? vg_xstrdup(pol->file) : NULL;
    const char *ref = t->image ? t->image : o->image ? o->image : pol->image;
    const char *digest = ref ? image_of(pols, ref, err) : NULL;
    if (ref && !digest)
        return -1;
    free(t->image_digest);
    t->image_digest = digest ? vg_xstrdup(digest) : NULL;
    if (keyed)
        make_key(t, pol->sha256);
    return 0;
}

int vg_batch_check(const struct vg_batch_opts *o, struct vg_batch_tasks *ts, struct vg_err *err)
{
    struct pol_cache pols = {0};
    int rc = 0;
    for (unsigned i = 0; i < ts->n && rc == 0; i++) {
        struct vg_batch_task *t = &ts->t[i];
        bool keyed = o->merge || o->nshards <= 1 || vg_batch_shard(t, o->nshards) == o->shard;
        struct vg_err e;
        if ((rc = check_task(o, t, keyed, &pols, &e)) < 0)
            vg_errf(err, "%s:%u: task '%s': %s", o->tasks_path, t->line, t->id, e.msg);
    }
    cache_free(&pols);
    return rc;
}

void vg_batch_key_members(const struct vg_batch_task *t, struct vg_json *j)
{
    vg_json_key(j, "key");
    vg_json_str(j, t->key);
    vg_json_key(j, "inputs");
    vg_json_arr_begin(j);
    for (unsigned i = 0; i < t->ninputs; i++)
        file_json(j, "path", t->inputs[i].path, t->inputs[i].size, t->inputs[i].sha256);
    vg_json_arr_end(j);
    vg_json_key(j, "stdin");
    stdin_json(t, j, true);
}
