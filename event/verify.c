/* verify.c: see verify.h.  Each complete msgpack object is one record:
 * its map is walked key by key (only lengths, through vg_mp_skip) to find
 * where its last entries lie, since the chain value must be the map's own
 * last entry (or the one before a trailer's signature) and not bytes that
 * merely look like one at the end of a string; its chain value is
 * recomputed from the bytes before it; the header and the trailer are
 * decoded for what the seal binds.  Records of types this build does not
 * know are chained like any other. */
#include "event/verify.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event/chain.h"
#include "event/reader.h"
#include "util/fastsha.h"

#define CHUNK (256u * 1024)

struct vstate {
    const uint8_t *key;          /* the key asked for, or NULL */
    struct vg_verify *out;
    uint8_t h[VG_CHAIN_LEN];     /* chain value of the last record */
    uint64_t index, offset;      /* the next record: its number, its first byte */
    bool trailer, done;          /* the trailer was seen; a verdict is in */
    bool unchained;              /* the header has no chain: an earlier version's log,
                                  * if no record has one either */
};

static void verdict(struct vstate *s, enum vg_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void verdict(struct vstate *s, enum vg_verdict v, const char *fmt, ...)
{
    s->out->verdict = v;
    s->out->at = s->index;
    s->out->offset = s->offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->out->why, sizeof s->out->why, fmt, ap);
    va_end(ap);
    s->done = true;
}

/* One entry of a map: where its key and value start, and how long the
 * key is (encoding included). */
struct entry {
    size_t key, keylen, val;
};

/* The last two entries of the map p[0..n) (last[1] the last), and how
 * many it has.  false when p is not a map with string keys. */
static bool last_entries(const uint8_t *p, size_t n, struct entry last[2], uint32_t *count)
{
    size_t pos;
    uint64_t items;
    if (n == 0)
        return false;
    if ((p[0] & 0xf0) == 0x80) {
        items = p[0] & 0x0f;
        pos = 1;
    } else if (p[0] == 0xde && n >= 3) {
        items = (uint64_t)p[1] << 8 | p[2];
        pos = 3;
    } else if (p[0] == 0xdf && n >= 5) {
        items = (uint64_t)p[1] << 24 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 8 | p[4];
        pos = 5;
    } else {
        return false;
    }
    memset(last, 0, 2 * sizeof *last);
    for (uint64_t i = 0; i < items; i++) {
        size_t kl, vl;
        uint8_t t = pos < n ? p[pos] : 0;
        bool str = (t >= 0xa0 && t <= 0xbf) || (t >= 0xd9 && t <= 0xdb);
        if (!str || vg_mp_skip(p + pos, n - pos, &kl) != VG_MP_OK ||
            vg_mp_skip(p + pos + kl, n - pos - kl, &vl) != VG_MP_OK)
            return false;
        last[0] = last[1];
        last[1] = (struct entry){.key = pos, .keylen = kl, .val = pos + kl};
        pos += kl + vl;
    }
    *count = (uint32_t)items;
    return pos == n;
}

static bool tail_is(const uint8_t *p, const struct entry *e, const char *bytes, size_t len)
{
    return e->keylen + 2 == len && !memcmp(p + e->key, bytes, len);
}

/* Where the record's chain value starts, and whether a signature follows
 * it; false when it has none where vigil writes it. */
static bool find_chain(const uint8_t *p, size_t n, size_t *at, bool *sig)
{
    struct entry last[2];
    uint32_t count;
    if (!last_entries(p, n, last, &count) || count == 0)
        return false;
    if (n - last[1].key == VG_CHAIN_TAIL &&
        tail_is(p, &last[1], VG_CHAIN_KEY_BYTES, VG_CHAIN_KEY_LEN)) {
        *at = n - VG_CHAIN_LEN;
        *sig = false;
        return true;
    }
    if (count >= 2 && n - last[1].key == VG_SIG_TAIL &&
        tail_is(p, &last[1], VG_SIG_KEY_BYTES, VG_SIG_KEY_LEN) &&
        last[1].key - last[0].key == VG_CHAIN_TAIL &&
        tail_is(p, &last[0], VG_CHAIN_KEY_BYTES, VG_CHAIN_KEY_LEN)) {
        *at = last[1].key - VG_CHAIN_LEN;
        *sig = true;
        return true;
    }
    return false;
}

/* The trailer: the seal's head is the chain before it, its count is
 * right, and its signature (if any) holds for the key it names. */
static void check_trailer(struct vstate *s, const struct vg_record *r)
{
    const struct vg_trailer *t = &r->u.trailer;
    char head[2 * VG_CHAIN_LEN + 1];
    vg_hex(s->h, VG_CHAIN_LEN, head);
    if (!t->seal.head || strcmp(t->seal.head, head)) {
        verdict(s, VG_VERIFY_ALTERED, "the seal's head is not the chain value of the record before it");
        return;
    }
    if (t->events != s->index) {
        verdict(s, VG_VERIFY_ALTERED, "the trailer counts %llu records before it, not %llu",
                (unsigned long long)t->events, (unsigned long long)s->index);
        return;
    }
    if (!r->sealed_sig) {
        if (t->seal.key)
            verdict(s, VG_VERIFY_ALTERED, "the seal names a key but has no signature");
        return;
    }
    uint8_t msg[VG_SEAL_MSG_LEN];
    vg_seal_message(r->chain, msg);
    if (!t->seal.key || !vg_unhex(t->seal.key, s->out->key, VG_PUBKEY_LEN)) {
        verdict(s, VG_VERIFY_ALTERED, "the seal is signed but names no key");
        return;
    }
    if (!vg_sig_good(s->out->key, msg, sizeof msg, r->sig)) {
        verdict(s, VG_VERIFY_ALTERED, "the seal's signature does not match the key it names");
        return;
    }
    s->out->signed_log = true;
}

/* A header as earlier versions wrote it: one that decodes, without a
 * chain value anywhere in it. */
static bool unchained_header(const uint8_t *p, size_t n)
{
    struct vg_decoded d;
    struct vg_err err;
    if (vg_record_decode(p, n, &d, &err) < 0)
        return false;
    bool old = d.rec.type == VG_REC_HEADER && !d.rec.chained;
    vg_decoded_free(&d);
    return old;
}

/* One complete msgpack object p[0..n): the record s->index. */
static void step(struct vstate *s, const uint8_t *p, size_t n)
{
    size_t at;
    bool sig;
    if (s->trailer) {
        verdict(s, VG_VERIFY_ALTERED, "a record after the trailer");
        return;
    }
    bool chained = find_chain(p, n, &at, &sig);
    if (s->unchained) {
        /* an earlier version's log has no chain anywhere; a header without
         * one before records with one is a header changed */
        if (chained || !last_entries(p, n, (struct entry[2]){0}, &(uint32_t){0})) {
            s->index = 0;
            s->offset = 0;
            verdict(s, VG_VERIFY_ALTERED, "the header has no chain value, but what follows it "
                    "is no log of an earlier version");
        }
        s->index++;
        return;
    }
    if (!chained && s->index == 0 && unchained_header(p, n)) {
        s->unchained = true;
        s->index++;
        return;
    }
    if (!chained) {
        verdict(s, VG_VERIFY_ALTERED, "no chain value at the end of the record");
        return;
    }
    uint8_t h[VG_CHAIN_LEN];
    vg_chain_step(s->h, p, at, h);
    if (memcmp(h, p + at, VG_CHAIN_LEN)) {
        verdict(s, VG_VERIFY_ALTERED, "its chain value does not match (the record, or one before it, "
                "was changed, dropped or moved)");
        return;
    }
    struct vg_decoded d;
    struct vg_err err;
    int rc = vg_record_decode(p, n, &d, &err);
    if (rc < 0 && !d.unknown_type) {
        verdict(s, VG_VERIFY_ALTERED, "not a record: %s", err.msg);
        return;
    }
    const struct vg_record *r = &d.rec;
    bool header = rc == 0 && r->type == VG_REC_HEADER;
    if ((s->index == 0) != header)
        verdict(s, VG_VERIFY_ALTERED, s->index ? "a second header" : "the first record is not a header");
    else if (rc == 0 && !header && r->u.sys.seq != s->index)
        verdict(s, VG_VERIFY_ALTERED, "its seq is %llu", (unsigned long long)r->u.sys.seq);
    else if (sig && (rc < 0 || r->type != VG_REC_TRAILER))
        verdict(s, VG_VERIFY_ALTERED, "a signature outside the trailer");
    else if (rc == 0 && r->type == VG_REC_TRAILER)
        check_trailer(s, r);
    if (rc == 0 && r->type == VG_REC_TRAILER)
        s->trailer = true;
    vg_decoded_free(&d);
    if (s->done)
        return;
    memcpy(s->h, h, sizeof h);
    memcpy(s->out->chain, h, sizeof h);
    s->out->records++;
    s->index++;
    s->offset += n;
}

/* Every complete record in p[0..n); returns the bytes used.  At the end
 * of the file (eof), what is left is a record cut off, or not msgpack. */
static size_t feed(struct vstate *s, const uint8_t *p, size_t n, bool eof)
{
    size_t used = 0;
    while (!s->done && used < n) {
        size_t len;
        const char *why = "not msgpack";
        enum vg_mp_status st = vg_mp_check(p + used, n - used, &len, &why);
        if (st == VG_MP_CORRUPT) {
            verdict(s, VG_VERIFY_ALTERED, "not a record: %s", why);
        } else if (st == VG_MP_TRUNCATED) {
            if (!eof)
                break;
            if (s->trailer)
                verdict(s, VG_VERIFY_ALTERED, "bytes after the trailer");
            else {
                verdict(s, VG_VERIFY_TRUNCATED, "cut off");
                s->out->cut = n - used;
            }
        } else {
            step(s, p + used, len);
            if (!s->done)
                used += len;
        }
    }
    return used;
}

/* What is left to say once every byte is in. */
static void finish(struct vstate *s)
{
    if (s->done)
        return;
    if (s->unchained) {
        verdict(s, VG_VERIFY_UNSEALED, "no chain value: a log of an earlier version of vigil");
        return;
    }
    if (!s->trailer) {
        verdict(s, VG_VERIFY_TRUNCATED, "no trailer");
        return;
    }
    if (!s->key) {
        verdict(s, VG_VERIFY_INTACT, "intact");
        return;
    }
    if (!s->out->signed_log)
        verdict(s, VG_VERIFY_UNSIGNED, "the seal is not signed");
    else if (memcmp(s->key, s->out->key, VG_PUBKEY_LEN))
        verdict(s, VG_VERIFY_UNSIGNED, "the seal is signed by another key");
    else
        verdict(s, VG_VERIFY_INTACT, "intact");
    /* the verdict is on the whole log, not on a record */
    s->out->at = s->index ? s->index - 1 : 0;
}

static void start(struct vstate *s, const uint8_t *key, struct vg_verify *out)
{
    memset(out, 0, sizeof *out);
    memset(s, 0, sizeof *s);
    s->key = key;
    s->out = out;
}

void vg_verify_buf(const uint8_t *p, size_t n, const uint8_t *key, struct vg_verify *out)
{
    struct vstate s;
    start(&s, key, out);
    feed(&s, p, n, true);
    finish(&s);
}

int vg_verify_path(const char *path, const uint8_t *key, struct vg_verify *out,
                   struct vg_err *err)
{
    int fd = vg_open_regular(path, err);
    if (fd < 0)
        return -1;
    struct vstate s;
    start(&s, key, out);
    size_t cap = CHUNK, len = 0;
    uint8_t *buf = vg_xmalloc(cap);
    int rc = 0;
    for (bool eof = false; !eof && !s.done;) {
        if (len == cap) {   /* one record larger than the window */
            cap *= 2;
            buf = vg_xrealloc(buf, cap);
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            vg_errf(err, "%s: read: %s", path, strerror(errno));
            rc = -1;
            break;
        }
        eof = got == 0;
        len += (size_t)got;
        size_t used = feed(&s, buf, len, eof);
        memmove(buf, buf + used, len - used);
        len -= used;
    }
    if (rc == 0)
        finish(&s);
    free(buf);
    close(fd);
    return rc;
}
