/* run_opts.h: the options of one `vigil run`, gathered from the command
 * line and the policy before anything is created, then passed down by
 * pointer.  The sandbox (plan.c) and the engines (tracer/engine.h) read
 * them, so they live here, below both; run/run.h runs them. */
#ifndef VG_RUN_OPTS_H
#define VG_RUN_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "util/util.h"

/* The candidate runs as this uid/gid inside the sandbox. */
#define VG_SANDBOX_UID 1000
#define VG_SANDBOX_GID 1000
/* When vigil runs as root, the candidate is this host uid/gid unless
 * --host-uid gives one (never 0: RLIMIT_NPROC does not bind a process
 * whose real uid is host root). */
#define VG_HOST_NOBODY 65534

enum vg_mode { VG_MODE_ENFORCE, VG_MODE_DRY_RUN };
/* --engine: how audited calls reach the supervisor (tracer/engine.h). */
enum vg_engine_kind {
    VG_ENGINE_DEFAULT,  /* notify where the kernel has it, else ptrace (with a note) */
    VG_ENGINE_PTRACE,
    VG_ENGINE_NOTIFY,
};
/* --py-frames: which records get the caller's Python stack (tracer/py/). */
enum vg_py_frames { VG_PYF_REFUSED, VG_PYF_ALL, VG_PYF_OFF };

struct vg_run_opts {
    char **argv;               /* the command, NULL-terminated */
    int argc;
    const char *policy_path;   /* NULL: the built-in default policy */
    const char *image;         /* --image NAME|DIGEST; NULL: the policy's `image`, else the host's trees */
    const char *log_path;      /* -o; NULL: a generated name in the state dir */
    const char *result_path;   /* --result */
    const char *task_id;
    const char *sign_key;      /* --sign-key: ed25519 private key (PEM) that signs the seal */
    const char *workdir;       /* --workdir; NULL: /tmp/work in the sandbox (a host scratch dir with --keep) */
    bool keep;                 /* keep the scratch dir */
    enum vg_mode mode;
    bool stacks_all;           /* --stacks: a stack on every audited call */
    enum vg_py_frames py_frames; /* --py-frames (default: refused calls) */
    bool quiet;                /* -q: no summary line on stderr */
    bool allow_no_landlock;    /* --allow-degraded: run without missing features */
    uint64_t tail;             /* --tail: bytes of each stream kept for the result */
    bool tail_set;
    bool no_forward;           /* --no-forward: capture only, pass nothing on */
    bool no_cgroups;           /* --no-cgroups: rlimits only */
    uint32_t host_uid;         /* --host-uid: the candidate's host uid and gid (root
                                * only, launcher/hostuid.h); 0: VG_HOST_NOBODY */
    const char *cpuset;        /* --cpuset LIST: sandbox and supervisor on these CPUs */
    const char *dns_upstream;  /* --dns-upstream IP[:PORT]: where vigil's resolver asks */
    enum vg_engine_kind engine; /* --engine; notify falls back to ptrace when the kernel lacks it */
    struct vg_limits limits;   /* flags; merged over the policy's */
    /* --bind / --bind-rw */
    struct vg_bind *binds;
    unsigned nbinds;
    /* --env NAME or NAME=VALUE */
    struct vg_env *env;
    unsigned nenv;
    /* --artifact; when none, every argument naming a regular file */
    const char **artifacts;
    unsigned nartifacts;
    /* --hold FD: build the sandbox before the command is known, say
     * "ready" on the socket FD and take the command from it (run/hold.c,
     * docs/RUN.md "Prepared runs: --hold") */
    unsigned hold_fd;
    bool hold;
    /* vigil's own command line in memory: the sandbox's pid 1 is a copy of
     * vigil, and /proc/1/cmdline would show the candidate our log and
     * result paths and task id; pid 1 blanks it. */
    char *argv_area;
    size_t argv_area_len;
};
#endif
