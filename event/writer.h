/* writer.h: append records to a run log.  Each record is encoded whole and
 * written with one write(2) before vg_log_write returns, so a decision is
 * on disk (in the page cache) before the supervisor releases the call, and
 * a supervisor killed at any moment leaves a log whose every complete record
 * is readable. */
#ifndef VG_WRITER_H
#define VG_WRITER_H
#include "event/event.h"
#include "event/sigkey.h"
#include "util/util.h"

struct vg_log;

/* Create path, or truncate it if it is a regular file (never a device,
 * fifo or symlink).  For tools and tests: `vigil run` writes its log
 * through util/outfile.h, which never opens an existing file for writing.
 * NULL with err set on failure. */
struct vg_log *vg_log_create(const char *path, struct vg_err *err);
/* Use an already open fd (tests, pipes).  The log owns fd afterwards. */
struct vg_log *vg_log_from_fd(int fd, const char *name);
/* Assigns the next sequence number to the record (header gets 0), encodes
 * it, appends its chain value (event/chain.h; also left in rec->chain) and
 * writes it.  A trailer's seal gets its head and key here (kept in rec
 * itself), and with a key (vg_log_sign) its signature (rec->sig); the
 * caller fills in the rest of the seal.  Returns 0, or -1 when the write failed: the log is then
 * dead (every later write fails too) and vg_log_error says why. */
int vg_log_write(struct vg_log *log, struct vg_record *rec);
/* Sign the trailer with key (which must outlive the log); NULL: unsigned. */
void vg_log_sign(struct vg_log *log, const struct vg_sigkey *key);
/* Records will come from more than one thread (vigil's resolver's, besides
 * the engine's; every write takes a lock): a record whose ts was taken
 * before another thread's record got in is written with that record's ts,
 * so that ts never decreases in the file. */
void vg_log_shared(struct vg_log *log);
/* The log's size cap (`limit log`).  Records are never refused for it:
 * a record that makes the log reach cap - VG_LOG_END_RESERVE is written
 * whole, and vg_log_full says from then on that the run must end; the
 * reserve is the room the end takes (the limit note, the exits of the
 * candidate's processes, the notes on how it ended, the trailer: a few
 * hundred bytes each).  cap 0: none. */
#define VG_LOG_END_RESERVE (64u * 1024)
void vg_log_cap(struct vg_log *log, uint64_t cap);
bool vg_log_full(struct vg_log *log);
uint64_t vg_log_bytes(struct vg_log *log); /* written so far */
const char *vg_log_error(const struct vg_log *log);
uint64_t vg_log_count(const struct vg_log *log); /* records written */
/* Close; -1 if any write or the close failed. */
int vg_log_close(struct vg_log *log);
#endif
