/* event.h: THE event schema.  Every record vigil writes to a run log, and
 * every record the log reader and the viewer decode, is one of the structs
 * below.  docs/FORMAT.md describes the same thing for people and for other
 * msgpack readers; keep the two in step and bump VG_FORMAT_VERSION on any
 * incompatible change.
 *
 * On disk a log is a plain msgpack stream: one map per record, string keys
 * (the VG_K_* names below), the first record a header, the last (on a clean
 * end) a trailer, which carries the seal; every record ends with its chain
 * value.  Strings in the structs are NUL-terminated; byte strings
 * that may hold NULs (none so far) would need a length. */
#ifndef VG_EVENT_H
#define VG_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#define VG_FORMAT_VERSION 1

/* ---- enumerations, each with a stable lowercase name on disk ---- */

enum vg_rec_type {
    VG_REC_HEADER,  /* "header"  */
    VG_REC_SYSCALL, /* "syscall": one decision on one audited call */
    VG_REC_PROC,    /* "proc":    process lifecycle */
    VG_REC_NOTE,    /* "note":    limit hit, timeout, warnings, errors */
    VG_REC_TRAILER, /* "trailer" */
    VG_REC_DNS,     /* "dns":     one query to vigil's resolver (net/dns.h) */
    VG_REC_SERVICE, /* "service": one step of `vigil serve` (serve/svclog.h) */
    VG_REC_NTYPES
};

/* What kind of access an audited call is.  Matches the policy classes. */
enum vg_class {
    VG_CLASS_READ,    /* "read"    open for reading, stat-free reads */
    VG_CLASS_WRITE,   /* "write"   anything that changes the filesystem */
    VG_CLASS_EXEC,    /* "exec"    */
    VG_CLASS_CONNECT, /* "connect" */
    VG_CLASS_BIND,    /* "bind"    */
    VG_CLASS_SEND,    /* "send"    datagram to an explicit address */
    VG_CLASS_SYSTEM,  /* "system"  refused by the baseline (io_uring, ptrace, mount, ...) */
    VG_CLASS_NCLASSES
};

enum vg_decision {
    VG_DEC_ALLOW,      /* "allow" */
    VG_DEC_DENY,       /* "deny"       refused with an errno */
    VG_DEC_KILL,       /* "kill"       the whole sandbox was ended */
    VG_DEC_WOULD_DENY, /* "would-deny" dry run: would have been refused */
    VG_DEC_WOULD_KILL, /* "would-kill" dry run: would have ended the sandbox */
    VG_DEC_NDECISIONS
};

enum vg_proc_kind {
    VG_PROC_START,  /* "start"  new process or thread (fork/vfork/clone) */
    VG_PROC_EXEC,   /* "exec"   successful execve: new image */
    VG_PROC_EXIT,   /* "exit"   exit code or killing signal */
    VG_PROC_NKINDS
};

/* One step of `vigil serve` in its service log (serve/svclog.h says who
 * writes which; docs/FORMAT.md, "The service log").  Here, with the other
 * enumerations of the schema, so that the log's reader and writer share
 * one list of names (event/names.c). */
enum vg_svc_kind {
    VG_SVC_START,      /* "start"     the daemon started (reason: its version and listen addresses) */
    VG_SVC_STOP,       /* "stop"      the daemon stops (reason: why) */
    VG_SVC_ACCEPTED,   /* "accepted"  a request was accepted: a run id exists, queued */
    VG_SVC_REFUSED,    /* "refused"   a request was refused (quota: which, retry_after_s; or reason) */
    VG_SVC_PREPARED,   /* "prepared"  a pool sandbox is ready (slot) */
    VG_SVC_ASSIGNED,   /* "assigned"  a run got a sandbox (slot, or NULL: a cold start), host_uid */
    VG_SVC_STARTED,    /* "started"   the run's candidate was started (pid of the run's vigil) */
    VG_SVC_FINISHED,   /* "finished"  the run ended (exit_code, status, cpu_s, wall_s) */
    VG_SVC_CANCELLED,  /* "cancelled" the user cancelled it (reason) */
    VG_SVC_LOST,       /* "lost"      found unfinished after a daemon restart (reason) */
    VG_SVC_DESTROYED,  /* "destroyed" its sandbox is gone: nothing of it is left (slot) */
    VG_SVC_DELETED,    /* "deleted"   the user deleted a stored run */
    VG_SVC_NKINDS
};

const char *vg_rec_type_name(enum vg_rec_type t);
const char *vg_class_name(enum vg_class c);
const char *vg_decision_name(enum vg_decision d);
const char *vg_proc_kind_name(enum vg_proc_kind k);
/* Reverse lookups: -1 when the name is unknown. */
int vg_rec_type_from_name(const char *s);
int vg_class_from_name(const char *s);
int vg_decision_from_name(const char *s);
int vg_proc_kind_from_name(const char *s);
const char *vg_svc_kind_name(enum vg_svc_kind k);
int vg_svc_kind_from_name(const char *s);

/* ---- records ---- */

struct vg_kv {           /* a name/value pair (limits, artifacts) */
    const char *name;
    const char *value;
};

struct vg_limit_rec {    /* one limit in force */
    const char *name;    /* "time", "cpu", "memory", "procs", "files", ... */
    uint64_t value;      /* ms for time, seconds for cpu, bytes or count otherwise */
    const char *enforced_by; /* "rlimit", "supervisor", "tmpfs", "cgroup", ... */
};

struct vg_artifact {
    const char *path;
    const char *sha256;  /* 64 hex digits */
};

struct vg_header {
    uint32_t format;          /* VG_FORMAT_VERSION */
    const char *vigil_version;
    uint64_t start_wall_ns;   /* CLOCK_REALTIME at start */
    uint64_t start_mono_ns;   /* CLOCK_MONOTONIC at start; record ts are relative */
    const char *kernel;       /* uname -r -v */
    const char *const *argv;  /* the candidate's command */
    uint32_t argc;
    const char *cwd;          /* the candidate's working directory (sandbox view) */
    uint32_t host_uid;        /* the candidate's host uid and gid (vigil run --host-uid,
                               * 65534 under root, else the caller's); 0: none written */
    const char *task_id;      /* --task-id, or NULL */
    const char *mode;         /* "enforce" or "dry-run" */
    const char *engine;       /* "ptrace" or "notify" */
    const char *policy_path;  /* as given, or "(builtin) default.policy" */
    const char *policy_sha256;
    const char *policy_text;  /* full text, includes expanded in order */
    const struct vg_limit_rec *limits;
    uint32_t nlimits;
    const struct vg_artifact *artifacts;
    uint32_t nartifacts;
    const struct vg_kv *resolved; /* host names in the policy -> addresses */
    uint32_t nresolved;
    const char *engine_note;  /* --engine notify: its kernel features, or why it fell back */
    const char *const *scratch; /* the sandbox's own writable trees (private tmpfs), or none */
    uint32_t nscratch;
    const char *image_name;   /* vigil run --image: as given (a name or a digest), or NULL */
    const char *image_digest; /* "sha256:HEX" of its tree (docs/IMAGES.md), or NULL */
    const char *log_kind;     /* "service": vigil serve's service log; NULL: a run log */
};

struct vg_frame {
    uint64_t pc;
    const char *module;   /* mapped file the pc lies in, or NULL */
    const char *symbol;   /* function name, or NULL */
    uint64_t offset;      /* pc - symbol start (when symbol) */
};

/* One Python frame of a CPython caller (tracer/py/). */
struct vg_pyframe {
    const char *file;     /* co_filename */
    const char *func;     /* co_qualname */
    int32_t line;         /* 0 when the interpreter has no line for it */
};
/* The frame shown as "from FILE:LINE in FUNC": the innermost one outside
 * the standard library and installed packages (event/pyframe.c says the
 * rule), else the innermost; NULL when n is 0. */
const struct vg_pyframe *vg_py_user_frame(const struct vg_pyframe *f, uint32_t n);

/* sendmmsg: one distinct destination of the call's messages, and how it
 * was judged (the call as a whole takes the strictest decision). */
struct vg_dest {
    const char *family;     /* "inet", "inet6", "unix", "unspec" */
    const char *addr;       /* numeric address text, unix path */
    const char *host;       /* the name vigil's resolver handed addr out for */
    int32_t port;           /* -1 when none */
    uint32_t msgs;          /* how many of the call's messages go there */
    enum vg_decision decision;
};

/* An exec record's argv when it was too long to keep whole (see
 * tracer/argv_rec.h): the record's argv is then the kept prefix (its last
 * element may itself be a prefix) and this says what the whole was.  All
 * zero / NULL when argv is whole. */
struct vg_argv_full {
    uint32_t argc;          /* every argument */
    uint64_t bytes;         /* their bytes, each counted with its NUL */
    const char *sha256;     /* of the arguments, each followed by a NUL */
};

/* Decoded arguments.  Which fields are set depends on the syscall; unset
 * strings are NULL and are not written. */
struct vg_args {
    const char *path;       /* as the candidate gave it */
    const char *resolved;   /* absolute, canonical, as the sandbox sees it */
    const char *path2;      /* second path: rename/link target, symlink name */
    const char *resolved2;
    bool masked;            /* resolved lies in a secret vigil shows empty */
    int64_t flags;          /* open flags, *at flags, ...; -1 when none */
    const char *const *flag_names; /* e.g. {"O_WRONLY","O_CREAT"} */
    uint32_t nflags;
    int64_t mode;           /* -1 when none */
    /* network */
    const char *family;     /* "inet", "inet6", "unix", or NULL */
    const char *proto;      /* "tcp", "udp", "unix" */
    const char *addr;       /* numeric address text, unix path */
    const char *host;       /* the name vigil's resolver handed addr out for */
    int32_t port;           /* -1 when none */
    const struct vg_dest *dests; /* sendmmsg: every distinct destination */
    uint32_t ndests;
    /* exec */
    const char *exe;        /* resolved executable */
    const char *const *argv;
    uint32_t argc;
    struct vg_argv_full argv_full; /* set when argv was cut for the log */
    bool argv_unreadable;   /* argv/envp could not be read whole: refused */
    const char *const *env_names; /* names only: values never reach the log */
    uint32_t nenv;
};

/* A rule's identity: where it is and what it says.  One value from the
 * policy's parser (policy/parse.c) through the decider's verdict
 * (core/decide.h) to the record on disk (event/schema.c): each holds this
 * struct, never its parts copied apart. */
struct vg_rule_src {
    const char *file;   /* path of the policy file it came from, NULL: a default */
    uint32_t line;
    const char *text;   /* the rule's text, comments and spaces trimmed */
};

struct vg_syscall_ev {
    uint64_t seq;        /* 0 for the header, then 1, 2, ... across all records */
    uint64_t ts_ns;      /* since start_mono_ns */
    int32_t pid, tid;    /* as the candidate sees them (pid namespace) */
    int32_t hpid, htid;  /* as the host sees them */
    uint64_t proc;       /* process identity: never reused within a run */
    int32_t nr;          /* syscall number (x86_64) */
    const char *name;    /* "openat" */
    enum vg_class cls;
    struct vg_args args;
    enum vg_decision decision;
    struct vg_rule_src rule; /* file NULL: decided by the default (or the
                              * baseline); text "default deny" ... */
    int32_t err;         /* errno the call was made to fail with, 0 if none */
    const struct vg_frame *stack;
    uint32_t nstack;
    const struct vg_pyframe *py; /* innermost first */
    uint32_t npy;
    bool py_trunc;       /* the Python stack had more frames than kept */
    bool probe;          /* a read/exec lookup of something that does not exist */
    /* The outcome, for a call the engine carried out itself (notify): what
     * the kernel returned, as the candidate sees it (an fd, a byte count,
     * 0), or -1 with ret_errno.  carried false: no outcome known.
     * installed: an open that worked, whose file the kernel installs in
     * the candidate as the call is answered, after this record: its fd
     * number is not known here (ret is not written). */
    bool carried;
    bool installed;
    int64_t ret;
    int32_t ret_errno;
};

struct vg_proc_ev {
    uint64_t seq, ts_ns;
    enum vg_proc_kind kind;
    int32_t pid, hpid;
    uint64_t proc;        /* identity of this process */
    uint64_t parent;      /* identity of the parent (start), 0 if none */
    int32_t ppid;         /* parent as the candidate sees it */
    uint64_t clone_flags; /* start */
    bool thread;          /* start: a thread, not a process */
    const char *exe;      /* exec: the real executable (/proc/PID/exe) */
    const char *const *argv; /* exec */
    uint32_t argc;
    struct vg_argv_full argv_full; /* exec: set when argv was cut */
    int32_t exit_code;    /* exit: -1 when killed by a signal */
    int32_t signal;       /* exit: killing signal, 0 if none */
    bool core;
};

struct vg_note_ev {
    uint64_t seq, ts_ns;
    const char *what;     /* "timeout", "limit", "error", "warning", "kill" */
    const char *detail;   /* free text, one line */
    int32_t pid;          /* related process, 0 if none */
};

struct vg_count {
    enum vg_class cls;
    enum vg_decision decision;
    uint64_t n;
};

/* The seal (docs/FORMAT.md, "The chain and the seal"): what the trailer
 * binds the chain's head to.  Hex strings, so that JSON shows them as they
 * are.  head and key are filled in by the writer (event/writer.h), which
 * holds the chain and the signing key; the run fills in the rest. */
struct vg_seal {
    const char *head;          /* chain value of the record before the trailer */
    const char *vigil_build_id; /* the GNU build id of the vigil binary that wrote the log */
    const char *vigil_sha256;  /* and its SHA-256 (signed logs) */
    const char *policy_sha256; /* the header's policy.sha256 (includes expanded) */
    const char *image_digest;  /* "sha256:HEX" of the image, NULL on the host's trees */
    const struct vg_artifact *artifacts; /* the candidate's files and their hashes */
    uint32_t nartifacts;
    const char *engine, *kernel;
    uint64_t start_wall_ns, end_wall_ns; /* CLOCK_REALTIME at the start and at the seal */
    const char *key;           /* ed25519 public key (64 hex digits) when signed */
};

struct vg_trailer {
    uint64_t seq, ts_ns;
    const char *status;    /* "ok","nonzero","signal","timeout","limit","error" */
    int32_t exit_code;     /* vigil's exit code */
    int32_t signal;
    const char *limit;     /* which limit, with status "limit" */
    uint64_t elapsed_ns;
    uint64_t events;       /* records written before the trailer */
    const struct vg_count *counts; /* only non-zero cells */
    uint32_t ncounts;
    struct vg_seal seal;   /* all NULL/0 in logs of earlier versions */
};

/* A query to vigil's resolver.  No pid: a UDP datagram does not say
 * which process sent it. */
struct vg_dns_ev {
    uint64_t seq, ts_ns;
    const char *name;       /* the name asked, lower case, no final dot */
    const char *qtype;      /* "A", "AAAA", ..., "TYPE<n>" */
    const char *proto;      /* "udp" */
    enum vg_decision decision;
    struct vg_rule_src rule; /* file NULL: no rule names the host (or it is malformed) */
    const char *rcode;      /* the answer's: "NOERROR", "NXDOMAIN", "REFUSED", "SERVFAIL", "FORMERR" */
    const char *const *answers; /* the addresses handed out, numeric */
    uint32_t nanswers;
};

/* One step of `vigil serve` (docs/FORMAT.md, "The service log").  Times
 * are integers, as everywhere in the log: the API's seconds (serve/svclog.h)
 * become ns here. */
struct vg_svc_ev {
    uint64_t seq, ts_ns;
    enum vg_svc_kind kind;
    uint64_t wall_ns;       /* CLOCK_REALTIME when it was written: the daemon runs for weeks */
    int64_t uid;            /* the user's, -1: the daemon's own event */
    const char *user;       /* the user's name, or NULL */
    const char *run;        /* run id, or NULL */
    const char *slot;       /* pool sandbox id, or NULL */
    const char *quota;      /* refused by this quota, or NULL */
    uint64_t retry_after_s; /* with quota: when to retry, seconds */
    const char *reason;     /* one line, or NULL */
    const char *status;     /* finished: the run's result status, or NULL */
    int32_t exit_code;      /* finished */
    uint64_t cpu_ns, elapsed_ns; /* finished: CPU and wall time the run took */
    uint64_t host_uid;      /* assigned: the candidate's host uid, 0: none */
    int32_t pid;            /* started: the run's vigil, 0: none */
};

#define VG_CHAIN_LEN 32 /* a chain value: SHA-256 */
#define VG_SIG_LEN 64   /* an ed25519 signature */

/* A decoded record of any type. */
struct vg_record {
    enum vg_rec_type type;
    union {
        struct vg_header header;
        struct vg_syscall_ev sys;
        struct vg_proc_ev proc;
        struct vg_note_ev note;
        struct vg_trailer trailer;
        struct vg_dns_ev dns;
        struct vg_svc_ev svc;
    } u;
    /* Outside the schema: the writer appends them after every other key
     * (docs/FORMAT.md, "The chain and the seal"), the decoder reads them
     * back, JSON shows them in hex.  chained: the record had a chain
     * value (every record of this version; none of earlier ones). */
    bool chained, sealed_sig;
    uint8_t chain[VG_CHAIN_LEN];
    uint8_t sig[VG_SIG_LEN];   /* a signed trailer's signature */
    /* The writer's: what a trailer's seal.head and seal.key point to, so
     * that they live as long as the record does. */
    char head_hex[2 * VG_CHAIN_LEN + 1], key_hex[2 * VG_CHAIN_LEN + 1];
};

/* ---- on-disk key names (msgpack map keys) ----
 * docs/FORMAT.md lists which record carries which key; event/schema.c is
 * the one table that maps them to the struct fields above. */
#define VG_K_TYPE "type"
#define VG_K_SEQ "seq"
#define VG_K_TS "ts"
/* header */
#define VG_K_FORMAT "format"
#define VG_K_VIGIL "vigil"
#define VG_K_START_WALL "start_wall"
#define VG_K_START_MONO "start_mono"
#define VG_K_KERNEL "kernel"
#define VG_K_ARGV "argv"
#define VG_K_CWD "cwd"
#define VG_K_TASK_ID "task_id"
#define VG_K_MODE "mode"
#define VG_K_ENGINE "engine"
#define VG_K_ENGINE_NOTE "engine_note"
#define VG_K_SCRATCH "scratch"
#define VG_K_IMAGE "image"
#define VG_K_DIGEST "digest"
#define VG_K_POLICY "policy"       /* {"path","sha256","text"} */
#define VG_K_PATH "path"
#define VG_K_SHA256 "sha256"
#define VG_K_TEXT "text"
#define VG_K_LIMITS "limits"       /* [{"name","value","enforced_by"}] */
#define VG_K_NAME "name"
#define VG_K_VALUE "value"
#define VG_K_ENFORCED_BY "enforced_by"
#define VG_K_ARTIFACTS "artifacts" /* [{"path","sha256"}] */
#define VG_K_RESOLVED "resolved"   /* header: {host: addrs}; args: path */
/* syscall */
#define VG_K_PID "pid"
#define VG_K_TID "tid"
#define VG_K_HPID "hpid"
#define VG_K_HTID "htid"
#define VG_K_PROC "proc"
#define VG_K_NR "nr"
#define VG_K_CLASS "class"
#define VG_K_ARGS "args"
#define VG_K_PATH2 "path2"
#define VG_K_RESOLVED2 "resolved2"
#define VG_K_FLAGS "flags"         /* array of names */
#define VG_K_FLAGS_RAW "flags_raw"
#define VG_K_FAMILY "family"
#define VG_K_PROTO "proto"
#define VG_K_ADDR "addr"
#define VG_K_PORT "port"
#define VG_K_HOST "host"           /* args: the resolver's name for addr */
#define VG_K_DESTS "dests"         /* [{"family","addr","port","msgs","decision"}] */
#define VG_K_MSGS "msgs"
#define VG_K_MASKED "masked"
#define VG_K_EXE "exe"
#define VG_K_ARGV_FULL "argv_full"   /* {"argc","bytes","sha256"} when argv was cut */
#define VG_K_ARGC "argc"
#define VG_K_BYTES "bytes"
#define VG_K_ARGV_UNREADABLE "argv_unreadable"
#define VG_K_ENV_NAMES "env_names"
#define VG_K_DECISION "decision"
#define VG_K_RULE "rule"           /* {"file","line","text"}, nil: the default decided */
#define VG_K_FILE "file"
#define VG_K_LINE "line"
#define VG_K_DEFAULT "default"     /* rule.text when no rule file decided */
#define VG_K_ERRNO "errno"
#define VG_K_CARRIED "carried"     /* the engine carried the call out: ret is known */
#define VG_K_RET "ret"
#define VG_K_INSTALLED "installed" /* an open's file, installed as the call is answered */
#define VG_K_RET_ERRNO "ret_errno"
#define VG_K_STACK "stack"         /* [{"pc","module","sym","off"}] */
#define VG_K_PC "pc"
#define VG_K_MODULE "module"
#define VG_K_SYM "sym"
#define VG_K_OFF "off"
#define VG_K_PY "py"               /* [{"file","func","line"}] innermost first */
#define VG_K_FUNC "func"
#define VG_K_PY_TRUNC "py_trunc"
#define VG_K_PROBE "probe"         /* true: a lookup that found nothing */
/* proc */
#define VG_K_KIND "kind"
#define VG_K_PARENT "parent"
#define VG_K_PPID "ppid"
#define VG_K_CLONE_FLAGS "clone_flags"
#define VG_K_THREAD "thread"
#define VG_K_CODE "code"
#define VG_K_SIGNAL "signal"
#define VG_K_CORE "core"
/* note */
#define VG_K_WHAT "what"
#define VG_K_DETAIL "detail"
/* trailer */
#define VG_K_STATUS "status"
#define VG_K_EXIT_CODE "exit_code"
#define VG_K_LIMIT "limit"
#define VG_K_ELAPSED "elapsed"
#define VG_K_EVENTS "events"
#define VG_K_COUNTS "counts"       /* [{"class","decision","n"}] */
#define VG_K_N "n"
#define VG_K_SEAL "seal"         /* {"head","vigil_sha256",...}: docs/FORMAT.md */
#define VG_K_HEAD "head"
#define VG_K_VIGIL_BUILD_ID "vigil_build_id"
#define VG_K_VIGIL_SHA256 "vigil_sha256"
#define VG_K_POLICY_SHA256 "policy_sha256"
#define VG_K_IMAGE_DIGEST "image_digest"
#define VG_K_END_WALL "end_wall"
#define VG_K_KEY "key"
/* every record: its chain value; a signed trailer: the signature after it */
#define VG_K_CHAIN "chain"
#define VG_K_SIG "sig"
/* dns */
#define VG_K_QTYPE "qtype"
#define VG_K_RCODE "rcode"
#define VG_K_ANSWERS "answers"
/* header of a service log; service records (also kind, pid, status,
 * exit_code, elapsed) */
#define VG_K_LOG "log"
#define VG_K_WALL "wall"
#define VG_K_UID "uid"
#define VG_K_USER "user"
#define VG_K_RUN "run"
#define VG_K_SLOT "slot"
#define VG_K_QUOTA "quota"
#define VG_K_RETRY_AFTER "retry_after"
#define VG_K_REASON "reason"
#define VG_K_CPU "cpu"
#define VG_K_HOST_UID "host_uid"

#endif
