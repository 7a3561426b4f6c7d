/* request.c: a submitted run, parsed, checked and written (request.h).
 * Everything a user sends is hostile until checked here: paths are
 * relative with no '.', '..' or empty component and are made with
 * O_NOFOLLOW|O_EXCL under the run's own directory; a policy may not bind
 * host paths nor include files (the daemon is root: it would read them);
 * env entries are NAME=VALUE (a bare NAME would pass the daemon's own). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "serve/request.h"
#include "util/base64.h"
#include "util/jsonr.h"

static int bad(struct vg_err *err, const char *member, const char *what)
{
    vg_errf(err, "%s: %s", member, what);
    return -1;
}

static int str_array(const struct vg_jv *v, const char *member, unsigned max, char ***out,
                     unsigned *n, struct vg_err *err)
{
    if (v->type != VG_JARR)
        return bad(err, member, "not an array of strings");
    if (v->n > max)
        return vg_errf(err, "%s: more than %u entries", member, max), -1;
    char **a = vg_xcalloc(v->n + 1, sizeof *a);
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i].type != VG_JSTR) {
            vg_argv_free(a);
            return vg_errf(err, "%s[%zu]: not a string", member, i), -1;
        }
        a[i] = vg_xstrdup(v->items[i].s);
    }
    *out = a;
    *n = (unsigned)v->n;
    return 0;
}

/* A file's path: relative, each component a plain name. */
static bool good_path(const char *p)
{
    size_t len = strlen(p), depth = 0;
    if (!len || len > VG_SREQ_MAX_PATH || p[0] == '/')
        return false;
    for (const char *c = p; *c;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (++depth > VG_SREQ_MAX_DEPTH)
            return false;
        c += n + (e ? 1 : 0);
        if (e && !*c)
            return false; /* a trailing slash names no file */
    }
    return true;
}

/* text or base64 member of obj into data/len. */
static int bytes_of(const struct vg_jv *obj, const char *text_key, const char *b64_key,
                    const char *member, uint8_t **data, size_t *len, struct vg_err *err)
{
    const struct vg_jv *t = vg_jv_get(obj, text_key), *b = vg_jv_get(obj, b64_key);
    if (t && b)
        return vg_errf(err, "%s: both %s and %s", member, text_key, b64_key), -1;
    if (t && t->type == VG_JSTR) {
        *len = strlen(t->s);
        *data = (uint8_t *)vg_xstrndup(t->s, *len);
        return 0;
    }
    if (b && b->type == VG_JSTR) {
        size_t n = strlen(b->s);
        uint8_t *out = vg_xmalloc(VG_B64_MAX_DECODED(n) + 1);
        long got = vg_b64_decode(b->s, n, out, VG_B64_MAX_DECODED(n));
        if (got < 0) {
            free(out);
            return vg_errf(err, "%s.%s: not base64", member, b64_key), -1;
        }
        *data = out;
        *len = (size_t)got;
        return 0;
    }
    return vg_errf(err, "%s: needs %s or %s, a string", member, text_key, b64_key), -1;
}

static int parse_files(struct vg_sreq *q, const struct vg_jv *v, struct vg_err *err)
{
    if (v->type != VG_JARR)
        return bad(err, "files", "not an array of {path, text|base64}");
    if (v->n > VG_SREQ_MAX_FILES)
        return vg_errf(err, "files: more than %d", VG_SREQ_MAX_FILES), -1;
    q->files = vg_xcalloc(v->n ? v->n : 1, sizeof *q->files);
    for (size_t i = 0; i < v->n; i++) {
        const struct vg_jv *f = &v->items[i];
        char member[32];
        snprintf(member, sizeof member, "files[%zu]", i);
        if (f->type != VG_JOBJ)
            return bad(err, member, "not an object");
        for (size_t k = 0; k < f->n; k++)
            if (strcmp(f->keys[k], "path") && strcmp(f->keys[k], "text") &&
                strcmp(f->keys[k], "base64") && strcmp(f->keys[k], "executable"))
                return vg_errf(err, "%s: unknown member '%s'", member, f->keys[k]), -1;
        const char *path = vg_jv_str(f, "path");
        if (!path || !good_path(path))
            return vg_errf(err, "%s.path: must be a relative path whose components are "
                                "names (not empty, '.' or '..')", member), -1;
        for (unsigned k = 0; k < q->nfiles; k++)
            if (!strcmp(q->files[k].path, path))
                return vg_errf(err, "%s.path: '%s' given twice", member, path), -1;
        struct vg_sfile *sf = &q->files[q->nfiles];
        if (bytes_of(f, "text", "base64", member, &sf->data, &sf->len, err) < 0)
            return -1;
        const struct vg_jv *x = vg_jv_get(f, "executable");
        if (x && x->type != VG_JBOOL) {
            free(sf->data);
            sf->data = NULL;
            return vg_errf(err, "%s.executable: not true or false", member), -1;
        }
        sf->executable = x && x->b;
        sf->path = vg_xstrdup(path);
        q->nfiles++;
    }
    return 0;
}

static int parse_limits(struct vg_sreq *q, const struct vg_jv *v, struct vg_err *err)
{
    if (v->type != VG_JOBJ)
        return bad(err, "limits", "not an object of NAME: \"VALUE\"");
    for (size_t i = 0; i < v->n; i++) {
        int l = vg_limit_from_name(v->keys[i]);
        if (l < 0) {
            char names[256];
            vg_limit_names(names, sizeof names);
            return vg_errf(err, "limits: unknown limit '%s' (%s)", v->keys[i], names), -1;
        }
        const struct vg_jv *val = &v->items[i];
        const char *text = val->type == VG_JSTR || val->type == VG_JNUM ? val->s : NULL;
        if (!text || !vg_limit_parse((enum vg_limit)l, text, &q->limit_v[l])) {
            char syntax[128];
            vg_limit_syntax((enum vg_limit)l, syntax, sizeof syntax);
            return vg_errf(err, "limits.%s: not %s", v->keys[i], syntax), -1;
        }
        free(q->limit[l]);
        q->limit[l] = vg_xstrdup(text);
    }
    return 0;
}

static int parse_env(struct vg_sreq *q, const struct vg_jv *v, struct vg_err *err)
{
    if (v->type != VG_JOBJ)
        return bad(err, "env", "not an object of NAME: \"VALUE\"");
    if (v->n > VG_SREQ_MAX_ENV)
        return vg_errf(err, "env: more than %d", VG_SREQ_MAX_ENV), -1;
    q->env = vg_xcalloc(v->n + 1, sizeof *q->env);
    for (size_t i = 0; i < v->n; i++) {
        const char *k = v->keys[i];
        bool ok = *k && !strchr(k, '=') && v->items[i].type == VG_JSTR;
        for (const char *c = k; ok && *c; c++)
            ok = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || *c == '_' ||
                 (c > k && *c >= '0' && *c <= '9');
        if (!ok)
            return vg_errf(err, "env: '%s' must be a NAME ([A-Za-z_][A-Za-z0-9_]*) with a "
                                "string value", k), -1;
        q->env[q->nenv++] = vg_xasprintf("%s=%s", k, v->items[i].s);
    }
    return 0;
}

/* A policy a user sends: no `bind` and no `include` but of a shipped
 * policy (the parser's own rules, policy/parse.c, so that no spelling of
 * either gets past: a check of its own here missed "include\r/etc/shadow"),
 * nor a shipped one that binds. */
static int member(struct vg_sreq *q, const char *key, const struct vg_jv *v, struct vg_err *err)
{
    if (!strcmp(key, "argv")) {
        if (str_array(v, "argv", VG_SREQ_MAX_ARGS, &q->argv, &q->argc, err) < 0)
            return -1;
        return q->argc ? 0 : bad(err, "argv", "empty: what should run?");
    }
    if (!strcmp(key, "files"))
        return parse_files(q, v, err);
    if (!strcmp(key, "limits"))
        return parse_limits(q, v, err);
    if (!strcmp(key, "env"))
        return parse_env(q, v, err);
    if (!strcmp(key, "dry_run")) {
        if (v->type != VG_JBOOL)
            return bad(err, key, "not true or false");
        q->dry_run = v->b;
        return 0;
    }
    char **slot = !strcmp(key, "policy")        ? &q->policy
                  : !strcmp(key, "policy_text") ? &q->policy_text
                  : !strcmp(key, "image")       ? &q->image
                  : !strcmp(key, "task_id")     ? &q->task_id
                                                : NULL;
    if (slot) {
        if (v->type != VG_JSTR || !*v->s)
            return bad(err, key, "not a non-empty string");
        *slot = vg_xstrdup(v->s);
        return 0;
    }
    return vg_errf(err, "unknown member '%s'", key), -1;
}

static int parse_stdin(struct vg_sreq *q, const struct vg_jv *root, struct vg_err *err)
{
    if (!vg_jv_get(root, "stdin") && !vg_jv_get(root, "stdin_base64"))
        return 0;
    return bytes_of(root, "stdin", "stdin_base64", "stdin", &q->stdin_data, &q->stdin_len, err);
}

/* The run's policy, parsed once at acceptance so that a bad one is a 400
 * and not a failed run: it parses, its network rules make a plan, and one
 * sent as text binds no host path. */
static int check_policy(const struct vg_sreq *q, struct vg_err *err)
{
    struct vg_policy *p = NULL;
    if (q->policy_text) {
        p = vg_policy_parse_untrusted("policy_text", q->policy_text, err);
    } else if (q->policy) {
        char *path = vg_policy_find_shipped(q->policy);
        p = vg_policy_load(path, err);
        free(path);
    } else {
        p = vg_policy_parse("default.policy", vg_default_policy_text, err);
    }
    if (!p)
        return -1;
    uint32_t nb = q->policy_text ? vg_policy_nbinds(p) : 0;
    struct vg_net_plan plan = {0};
    int rc = vg_net_plan_build(&plan, p, err);
    vg_net_plan_free(&plan);
    vg_policy_free(p);
    if (rc == 0 && nb)
        return vg_errf(err, "policy_text: a policy sent to vigil serve may not bind host paths "
                            "(an included policy binds %u)", nb), -1;
    return rc;
}

static int check_whole(struct vg_sreq *q, struct vg_err *err)
{
    if (!q->argv)
        return bad(err, "argv", "missing: what should run?");
    if (q->policy && q->policy_text)
        return vg_errf(err, "policy and policy_text: give one"), -1;
    if (q->policy) {
        char *path = vg_policy_find_shipped(q->policy);
        if (!path)
            return vg_errf(err, "policy: no shipped policy '%s' (vigil check --list)",
                           q->policy), -1;
        free(path);
    }
    return check_policy(q, err);
}

int vg_sreq_parse(struct vg_sreq *q, const char *body, size_t len, struct vg_err *err)
{
    memset(q, 0, sizeof *q);
    struct vg_jv *root = vg_jv_parse(body, len, err);
    if (!root)
        return -1;
    int rc = root->type == VG_JOBJ ? 0 : bad(err, "request", "not a JSON object");
    for (size_t i = 0; rc == 0 && i < root->n; i++)
        for (size_t j = 0; rc == 0 && j < i; j++)
            if (!strcmp(root->keys[i], root->keys[j]))
                rc = (vg_errf(err, "member '%s' given twice", root->keys[i]), -1);
    for (size_t i = 0; rc == 0 && i < root->n; i++)
        if (strcmp(root->keys[i], "stdin") && strcmp(root->keys[i], "stdin_base64"))
            rc = member(q, root->keys[i], &root->items[i], err);
    if (rc == 0)
        rc = parse_stdin(q, root, err);
    if (rc == 0)
        rc = check_whole(q, err);
    vg_jv_free(root);
    if (rc < 0)
        vg_sreq_free(q);
    return rc;
}

void vg_argv_free(char **v)
{
    for (char **a = v; a && *a; a++)
        free(*a);
    free(v);
}

void vg_sreq_free(struct vg_sreq *q)
{
    vg_argv_free(q->argv);
    for (unsigned i = 0; i < q->nfiles; i++) {
        free(q->files[i].path);
        free(q->files[i].data);
    }
    free(q->files);
    free(q->stdin_data);
    free(q->policy);
    free(q->policy_text);
    for (int l = 0; l < VG_LIM_COUNT; l++)
        free(q->limit[l]);
    free(q->image);
    vg_argv_free(q->env);
    free(q->task_id);
    memset(q, 0, sizeof *q);
}
