/* conf.c: the config file of `vigil serve` (see conf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/conf.h"
#include "util/sha256.h"

/* A config line is short; a longer one is a mistake, not a policy. */
#define CONF_MAX_BYTES (1u << 20)
#define CONF_MAX_WORDS 64
#define TOKEN_PREFIX "sha256:"

/* Splits line into words at blanks, up to a '#'. */
static unsigned split(char *line, char **w)
{
    unsigned n = 0;
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    for (char *t = strtok(line, " \t\r"); t && n < CONF_MAX_WORDS; t = strtok(NULL, " \t\r"))
        w[n++] = t;
    return n;
}

/* `KEY VALUE ...` pairs from w[i] on, into q. */
static int quota_pairs(struct vg_quota *q, char **w, unsigned i, unsigned n, struct vg_err *err)
{
    for (; i < n; i += 2) {
        int k = vg_quota_from_name(w[i]);
        if (k < 0)
            return vg_errf(err, "unknown quota '%s' (runs, concurrent, cpu, wall or stored)",
                           w[i]), -1;
        if (i + 1 >= n)
            return vg_errf(err, "quota %s: no value", w[i]), -1;
        if (!vg_quota_parse(q, (enum vg_quota_kind)k, w[i + 1], err))
            return -1;
    }
    return 0;
}

static bool is_hex64(const char *s)
{
    size_t n = strlen(s);
    if (n != 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (vg_hex_digit(s[i]) < 0)
            return false;
    return true;
}

/* `user NAME uid N [token sha256:HEX] [quota KEY VALUE ...]` */
static int user_line(struct vg_serve_conf *c, char **w, unsigned n, struct vg_err *err)
{
    if (n < 4 || strcmp(w[2], "uid"))
        return vg_errf(err, "expected 'user NAME uid N [token sha256:HEX] [quota ...]'"), -1;
    uint64_t uid;
    if (!vg_parse_u64(w[3], &uid) || uid >= (uint64_t)(uid_t)-1)
        return vg_errf(err, "user %s: uid '%s' is not a number", w[1], w[3]), -1;
    for (size_t i = 0; i < c->nusers; i++)
        if (c->users[i].uid == (uid_t)uid || !strcmp(c->users[i].name, w[1]))
            return vg_errf(err, "user %s: uid %s or name given twice", w[1], w[3]), -1;
    struct vg_serve_user u = {.uid = (uid_t)uid, .quota = c->defaults};
    unsigned i = 4;
    if (i < n && !strcmp(w[i], "token")) {
        const char *t = i + 1 < n ? w[i + 1] : "";
        if (strncmp(t, TOKEN_PREFIX, strlen(TOKEN_PREFIX)) || !is_hex64(t + strlen(TOKEN_PREFIX)))
            return vg_errf(err, "user %s: token must be sha256:HEX (64 hex digits of the "
                                "token's SHA-256, never the token itself)", w[1]), -1;
        u.has_token = true;
        snprintf(u.token_sha256, sizeof u.token_sha256, "%s", t + strlen(TOKEN_PREFIX));
        for (char *p = u.token_sha256; *p; p++)
            *p = (char)(*p | 0x20); /* lower case, as vg_sha256_buf writes it */
        i += 2;
    }
    if (i < n && strcmp(w[i], "quota"))
        return vg_errf(err, "user %s: unexpected '%s'", w[1], w[i]), -1;
    if (i < n && quota_pairs(&u.quota, w, i + 1, n, err) < 0)
        return -1;
    u.name = vg_xstrdup(w[1]);
    c->users = vg_xrealloc(c->users, (c->nusers + 1) * sizeof *c->users);
    c->users[c->nusers++] = u;
    return 0;
}

static int conf_line(struct vg_serve_conf *c, char *line, bool *users_seen, struct vg_err *err)
{
    char *w[CONF_MAX_WORDS];
    unsigned n = split(line, w);
    if (n == 0)
        return 0;
    if (!strcmp(w[0], "quota")) {
        /* users copy the defaults when their line is read */
        if (*users_seen)
            return vg_errf(err, "a 'quota' line must come before the 'user' lines"), -1;
        return quota_pairs(&c->defaults, w, 1, n, err);
    }
    if (!strcmp(w[0], "user")) {
        *users_seen = true;
        return user_line(c, w, n, err);
    }
    return vg_errf(err, "unknown directive '%s' (quota or user)", w[0]), -1;
}

int vg_serve_conf_load(struct vg_serve_conf *c, const char *path, struct vg_err *err)
{
    c->users = NULL;
    c->nusers = 0;
    if (!path)
        return 0;
    size_t len;
    char *text = vg_read_file(path, CONF_MAX_BYTES, &len, err);
    if (!text)
        return -1;
    if (memchr(text, '\0', len)) {
        free(text);
        return vg_errf(err, "%s: a NUL byte: not a text file", path), -1;
    }
    bool users_seen = false;
    int rc = 0;
    unsigned lineno = 1;
    for (char *line = text, *next; line && rc == 0; line = next, lineno++) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (conf_line(c, line, &users_seen, err) < 0) {
            struct vg_err e = *err;
            vg_errf(err, "%s:%u: %s", path, lineno, e.msg);
            rc = -1;
        }
    }
    free(text);
    if (rc < 0)
        vg_serve_conf_free(c);
    return rc;
}

void vg_serve_conf_free(struct vg_serve_conf *c)
{
    for (size_t i = 0; i < c->nusers; i++)
        free(c->users[i].name);
    free(c->users);
    c->users = NULL;
    c->nusers = 0;
}

const struct vg_serve_user *vg_serve_conf_by_uid(const struct vg_serve_conf *c, uid_t uid)
{
    for (size_t i = 0; i < c->nusers; i++)
        if (c->users[i].uid == uid)
            return &c->users[i];
    return NULL;
}

const struct vg_serve_user *vg_serve_conf_by_token(const struct vg_serve_conf *c,
                                                   const char *token)
{
    char hex[65];
    vg_sha256_buf(token, strlen(token), hex);
    const struct vg_serve_user *found = NULL;
    for (size_t i = 0; i < c->nusers; i++) {
        unsigned diff = !c->users[i].has_token;
        for (size_t k = 0; k < 64; k++)
            diff |= (unsigned char)(hex[k] ^ c->users[i].token_sha256[k]);
        if (diff == 0)
            found = &c->users[i];
    }
    return found;
}
