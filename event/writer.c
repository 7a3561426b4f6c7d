/* writer.c: see writer.h.  Records are packed with msgpack-c into one
 * reused buffer (the packer's write callback appends to a vg_buf, which
 * aborts rather than fails on OOM, so packing itself cannot fail), their
 * chain value appended (event/chain.h: the hash of the bytes packed so
 * far) and then written with a single vg_write_all, so a record is never
 * on disk without it.  After the first failed write the log is dead: a gap
 * in the middle of a decision stream would be worse than a clean stop, and
 * the caller is told once why. */
#include "event/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event/chain.h"
#include "event/schema.h"
#include "util/fastsha.h"
#include "util/utf8.h"

struct vg_log {
    int fd;
    char *name;
    bool dead;
    char err[256];
    uint64_t count;
    struct vg_buf buf;
    msgpack_packer pk;
    /* The engine and vigil's resolver (net/dns_server.c) write from two
     * threads: one record at a time, seq in the order they reach the file. */
    pthread_mutex_t lock;
    bool shared;        /* vg_log_shared: ts made to never decrease */
    uint64_t last_ts;
    uint64_t bytes;     /* written so far */
    uint64_t room;      /* vg_log_cap: bytes for records before the run's end; 0: no cap */
    uint8_t chain[VG_CHAIN_LEN]; /* the last record's chain value (all zero before the first) */
    const struct vg_sigkey *key; /* vg_log_sign: signs the trailer; NULL: none */
    char key_hex[2 * VG_PUBKEY_LEN + 1];
};

static int buf_write(void *data, const char *p, size_t n)
{
    vg_buf_put(data, p, n);
    return 0;
}

struct vg_log *vg_log_from_fd(int fd, const char *name)
{
    struct vg_log *log = vg_xcalloc(1, sizeof *log);
    log->fd = fd;
    log->name = vg_xstrdup(name ? name : "log");
    msgpack_packer_init(&log->pk, &log->buf, buf_write);
    pthread_mutex_init(&log->lock, NULL);
    return log;
}

/* Only a regular file is ever opened (and only then truncated): lstat
 * first so that no device is even opened (opening some has effects),
 * O_NOFOLLOW and fstat against a swap in between. */
struct vg_log *vg_log_create(const char *path, struct vg_err *err)
{
    struct stat before, st;
    bool existed = lstat(path, &before) == 0;
    if (existed && !S_ISREG(before.st_mode)) {
        vg_errf(err, "create %s: exists and is not a regular file", path);
        return NULL;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
    if (fd < 0) {
        vg_errf(err, "create %s: %s", path, strerror(errno));
        return NULL;
    }
    bool same = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                (!existed || (st.st_dev == before.st_dev && st.st_ino == before.st_ino));
    if (!same || ftruncate(fd, 0) < 0) {
        vg_errf(err, "create %s: %s", path, same ? strerror(errno) : "replaced while opening");
        close(fd);
        return NULL;
    }
    return vg_log_from_fd(fd, path);
}

/* ---- the msgpack sink ---- */
static void mp_map(void *c, uint32_t n) { msgpack_pack_map(&((struct vg_log *)c)->pk, n); }
static void mp_arr(void *c, uint32_t n) { msgpack_pack_array(&((struct vg_log *)c)->pk, n); }
static void mp_end(void *c) { (void)c; }

/* Strings that are not valid UTF-8 (a path a candidate made up) go out as
 * bin, so that strict readers (Python's raw=False) still read the log and
 * the exact bytes survive; vigil's reader takes either. */
static void mp_str(void *c, const char *s)
{
    msgpack_packer *pk = &((struct vg_log *)c)->pk;
    size_t n = strlen(s);
    if (vg_utf8_valid(s, n)) {
        msgpack_pack_str(pk, n);
        msgpack_pack_str_body(pk, s, n);
    } else {
        msgpack_pack_bin(pk, n);
        msgpack_pack_bin_body(pk, s, n);
    }
}

static void mp_u64(void *c, uint64_t v) { msgpack_pack_uint64(&((struct vg_log *)c)->pk, v); }
static void mp_i64(void *c, int64_t v) { msgpack_pack_int64(&((struct vg_log *)c)->pk, v); }
static void mp_nil(void *c) { msgpack_pack_nil(&((struct vg_log *)c)->pk); }

static void mp_bool(void *c, bool v)
{
    msgpack_packer *pk = &((struct vg_log *)c)->pk;
    if (v)
        msgpack_pack_true(pk);
    else
        msgpack_pack_false(pk);
}

static const struct vg_sink mp_sink = {
    .map = mp_map, .map_end = mp_end, .arr = mp_arr, .arr_end = mp_end,
    .key = mp_str, .str = mp_str, .u64 = mp_u64, .i64 = mp_i64,
    .boolean = mp_bool, .nil = mp_nil,
};

static int log_write(struct vg_log *log, struct vg_record *rec)
{
    if (log->dead)
        return -1;
    if ((unsigned)rec->type >= VG_REC_NTYPES) {  /* a caller bug: stop loudly */
        snprintf(log->err, sizeof log->err, "write %s: invalid record type %d", log->name,
                 (int)rec->type);
        log->dead = true;
        return -1;
    }
    uint64_t seq = log->count;
    if (vg_rec_has_seq(rec->type)) {
        uint64_t *ts = VG_AT(&rec->u, 8, uint64_t);
        *VG_AT(&rec->u, 0, uint64_t) = seq;
        if (log->shared && *ts < log->last_ts)
            *ts = log->last_ts; /* taken before another thread's record got in */
        log->last_ts = *ts;
    }
    bool sign = rec->type == VG_REC_TRAILER && log->key;
    if (rec->type == VG_REC_TRAILER) {
        /* what the seal binds: the chain so far, and the key that signs */
        vg_hex(log->chain, VG_CHAIN_LEN, rec->head_hex);
        rec->u.trailer.seal.head = rec->head_hex;
        snprintf(rec->key_hex, sizeof rec->key_hex, "%s", sign ? log->key_hex : "");
        rec->u.trailer.seal.key = sign ? rec->key_hex : NULL;
    }
    log->buf.len = 0;
    vg_schema_emit_open(rec, seq, sign ? 2 : 1, &mp_sink, log);
    mp_str(log, VG_K_CHAIN);
    msgpack_pack_bin(&log->pk, VG_CHAIN_LEN);
    vg_chain_step(log->chain, (const uint8_t *)log->buf.data, log->buf.len, rec->chain);
    msgpack_pack_bin_body(&log->pk, rec->chain, VG_CHAIN_LEN);
    rec->chained = true;
    rec->sealed_sig = sign;
    if (sign) {
        uint8_t msg[VG_SEAL_MSG_LEN];
        vg_seal_message(rec->chain, msg);
        vg_sigkey_sign(log->key, msg, sizeof msg, rec->sig);
        mp_str(log, VG_K_SIG);
        msgpack_pack_bin(&log->pk, VG_SIG_LEN);
        msgpack_pack_bin_body(&log->pk, rec->sig, VG_SIG_LEN);
    }
    if (vg_write_all(log->fd, log->buf.data, log->buf.len) < 0) {
        snprintf(log->err, sizeof log->err, "write %s: %s", log->name, strerror(errno));
        log->dead = true;
        return -1;
    }
    log->count++;
    log->bytes += log->buf.len;
    memcpy(log->chain, rec->chain, VG_CHAIN_LEN);
    return 0;
}

int vg_log_write(struct vg_log *log, struct vg_record *rec)
{
    pthread_mutex_lock(&log->lock);
    int rc = log_write(log, rec);
    pthread_mutex_unlock(&log->lock);
    return rc;
}

void vg_log_sign(struct vg_log *log, const struct vg_sigkey *key)
{
    pthread_mutex_lock(&log->lock);
    log->key = key;
    if (key)
        vg_hex(key->pub, VG_PUBKEY_LEN, log->key_hex);
    pthread_mutex_unlock(&log->lock);
}

void vg_log_shared(struct vg_log *log)
{
    pthread_mutex_lock(&log->lock);
    log->shared = true;
    pthread_mutex_unlock(&log->lock);
}

void vg_log_cap(struct vg_log *log, uint64_t cap)
{
    pthread_mutex_lock(&log->lock);
    log->room = cap > VG_LOG_END_RESERVE ? cap - VG_LOG_END_RESERVE : 1;
    pthread_mutex_unlock(&log->lock);
}

bool vg_log_full(struct vg_log *log)
{
    pthread_mutex_lock(&log->lock);
    bool full = log->room && log->bytes >= log->room;
    pthread_mutex_unlock(&log->lock);
    return full;
}

uint64_t vg_log_bytes(struct vg_log *log)
{
    pthread_mutex_lock(&log->lock);
    uint64_t n = log->bytes;
    pthread_mutex_unlock(&log->lock);
    return n;
}

const char *vg_log_error(const struct vg_log *log) { return log->err; }
uint64_t vg_log_count(const struct vg_log *log) { return log->count; }

int vg_log_close(struct vg_log *log)
{
    if (!log)
        return 0;
    int rc = log->dead ? -1 : 0;
    if (close(log->fd) < 0)
        rc = -1;
    vg_buf_free(&log->buf);
    pthread_mutex_destroy(&log->lock);
    free(log->name);
    free(log);
    return rc;
}
