/* run.c: one `vigil run`, start to finish.  Everything is prepared and
 * checked before the sandbox exists (policy, limits, workdir, artifacts,
 * log, filters), so that bad input fails early and leaves nothing behind;
 * then the sandbox starts, the engine supervises it, and the ending is
 * recorded in the log's trailer and the result record. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "event/writer.h"
#include "tracer/engine.h"
#include "tracer/supervisor.h"
#include "launcher/filter.h"
#include "launcher/hostuid.h"
#include "run/iothread.h"
#include "launcher/landlock.h"
#include "launcher/limits.h"
#include "launcher/plan.h"
#include "run/result.h"
#include "launcher/sandbox.h"
#include "launcher/scratch.h"
#include "run/run_int.h"
#include "util/escape.h"

static int fail(struct run *r, int code)
{
    vg_say(stderr, "vigil: %s", r->err.msg);
    return code;
}

void vg_run_warn(struct run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg;
    if (vasprintf(&msg, fmt, ap) < 0)
        abort(); /* as vg_xasprintf: no memory is no run */
    va_end(ap);
    vg_say(stderr, "vigil: warning: %s", msg);
    r->warnings = vg_xrealloc(r->warnings, (r->nwarnings + 1) * sizeof *r->warnings);
    r->warnings[r->nwarnings++] = msg;
}

static int load_policy(struct run *r)
{
    if (r->o->policy_path) {
        r->policy_file = vg_policy_find(r->o->policy_path, &r->err);
        if (!r->policy_file)
            return -1;
        r->pol = vg_policy_load(r->policy_file, &r->err);
        r->policy_name = r->policy_file;
    } else {
        r->pol = vg_policy_parse("default.policy", vg_default_policy_text, &r->err);
        r->policy_name = "(builtin) default.policy";
    }
    if (!r->pol || vg_run_image(r) < 0)
        return -1;
    vg_limits_defaults(&r->limits);
    vg_limits_merge(&r->limits, vg_policy_limits(r->pol));
    vg_limits_merge(&r->limits, &r->o->limits); /* flags win */
    return 0;
}

static char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && h[0] == '/')
        return vg_xstrdup(h);
    struct passwd *pw = getpwuid(getuid());
    return vg_xstrdup(pw && pw->pw_dir ? pw->pw_dir : "/");
}

/* Is dir the home directory or one of its ancestors?  Mounting it
 * writable would hand the candidate ~/.ssh and the rest. */
static bool exposes_home(const char *dir, const char *home)
{
    char *h = realpath(home, NULL);
    if (!h)
        return false;
    size_t n = strlen(dir);
    bool bad = !strcmp(dir, "/") || (!strncmp(h, dir, n) && (h[n] == '/' || h[n] == 0));
    free(h);
    return bad;
}

static int prepare_workdir(struct run *r, const char *home)
{
    uid_t uid;
    gid_t gid;
    vg_host_ids(r->o, &uid, &gid);
    if (r->o->workdir) {
        r->workdir = realpath(r->o->workdir, NULL);
        struct stat st;
        if (!r->workdir || stat(r->workdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
            vg_errf(&r->err, "--workdir %s: %s", r->o->workdir,
                    r->workdir ? "not a directory" : strerror(errno));
            return -1;
        }
        /* As root the candidate is another host user: say so if it cannot write
         * to the directory it was given as its working directory. */
        bool writable = (st.st_mode & 0002) || (st.st_uid == uid && (st.st_mode & 0200)) ||
                        (st.st_gid == gid && (st.st_mode & 0020));
        if (geteuid() == 0 && !writable)
            vg_run_warn(r, "--workdir %s is not writable by the sandbox's user (host uid %u): "
                           "the candidate can read it but not write to it",
                        r->workdir, (unsigned)uid);
        if (exposes_home(r->workdir, home)) {
            vg_errf(&r->err, "--workdir %s would expose the home directory %s to the candidate; "
                             "use a directory of its own", r->o->workdir, home);
            return -1;
        }
        return 0;
    }
    if (!r->o->keep) {
        /* Nothing has to outlive the run: the sandbox's own /tmp holds it,
         * and the host sees no directory come and go. */
        r->workdir = vg_xstrdup(VG_PRIVATE_WORKDIR);
        r->plan.private_workdir = true;
        return 0;
    }
    r->workdir = vg_scratch_create(uid, gid, &r->err);
    r->own_workdir = r->workdir != NULL;
    return r->workdir ? 0 : -1;
}

/* Where a bind shows its source (the same path unless it names one). */
static const char *bind_dst(const struct vg_bind *b)
{
    return b->dst ? b->dst : b->src;
}

/* Landlock's grants for the command's own files, from the from'th file
 * named on the command line on: the command may run, and each be read.
 * A held run adds them once the request names them (hold_release). */
static void landlock_command(struct run *r, unsigned from)
{
    vg_landlock_plan_exec_file(&r->plan.landlock, r->command_path);
    for (unsigned i = from; i < r->nartifacts; i++)
        vg_landlock_plan_read(&r->plan.landlock, r->artifact_paths[i], false);
}

/* A whole-run CPU time no cgroup counts is held per process (launcher/
 * limits.h): looser, and the result says so. */
static void warn_cputotal(struct run *r)
{
    uint64_t s;
    if (r->enf.how[VG_LIM_CPUTOTAL] != VG_MECH_RLIMIT ||
        !vg_enforce_rlimit(&r->enf, &r->limits, RLIMIT_CPU, &s))
        return;
    vg_run_warn(r, "limit cputotal: no cgroup counts the run's CPU time here (--no-cgroups, "
                   "or a caller who may make none): held by RLIMIT_CPU per process instead "
                   "(%llus each), so a run of N processes may use up to N times it",
                (unsigned long long)s);
}

static int build_sandbox(struct run *r)
{
    struct vg_enforce_in how = {.pid = getpid(), .host_workdir = !r->plan.private_workdir,
                                .cgroups = !r->o->no_cgroups};
    if (vg_enforce_setup(&r->enf, &r->limits, &how, &r->err) < 0)
        return -1;
    warn_cputotal(r);
    r->plan.limits = r->limits;
    r->plan.enforce = &r->enf;
    r->plan.artifact_host = r->artifact_hosts;
    r->plan.artifact_dst = r->artifact_paths;
    r->plan.nartifacts = r->nartifacts;
    if (vg_plan_build(&r->plan, r->o, r->pol, r->workdir, &r->err) < 0 ||
        (r->plan.net.egress && vg_egress_check(&r->err) < 0))
        return -1;
    int abi = vg_landlock_abi();
    if (abi <= 0 && !r->o->allow_no_landlock) {
        vg_errf(&r->err, "Landlock is not available on this kernel (needs CONFIG_SECURITY_LANDLOCK "
                         "and 'landlock' in the lsm= boot parameter); pass --allow-degraded to run "
                         "without it");
        return -1;
    }
    if (abi > 0) {
        r->plan.landlock_abi = abi;
        if (vg_policy_landlock_plan(r->pol, abi, &r->plan.landlock) < 0) {
            vg_errf(&r->err, "cannot express the policy for Landlock");
            return -1;
        }
        landlock_command(r, 0);
        for (unsigned i = 0; i < r->o->nbinds; i++)
            vg_landlock_plan_read(&r->plan.landlock, bind_dst(&r->o->binds[i]), true);
        for (uint32_t i = 0; i < vg_policy_nbinds(r->pol); i++)
            vg_landlock_plan_read(&r->plan.landlock, bind_dst(vg_policy_bind(r->pol, i)), true);
    }
    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        r->audit.cls[c] = vg_policy_audits(r->pol, c);
    r->audit.lookups = vg_policy_audits_lookups(r->pol);
    int rc = vg_filter_candidate(&r->audit, r->engine->baseline, r->engine->notify,
                                 &r->cand_bpf, &r->err);
    scmp_filter_ctx init = rc == 0 ? vg_filter_init(&r->err) : NULL;
    rc = init && vg_filter_export(init, &r->init_bpf, &r->err) == 0 ? 0 : -1;
    if (init)
        seccomp_release(init);
    return rc;
}

/* The notify engine (the default, and --engine notify) runs only where
 * the kernel has what it needs (see tracer/notify/probe.h); otherwise
 * ptrace, and the note says why. */
static void choose_engine(struct run *r)
{
    r->engine = &vg_engine_ptrace;
    if (r->o->engine == VG_ENGINE_PTRACE)
        return;
    vg_notify_probe(&r->notify);
    if (vg_notify_describe(&r->notify, r->engine_note, sizeof r->engine_note))
        r->engine = &vg_engine_notify;
    else if (r->o->engine == VG_ENGINE_NOTIFY) /* asked for: say so, even with -q */
        vg_say(stderr, "vigil: %s", r->engine_note);
}

/* --cpuset LIST, or a CPU bandwidth no cgroup holds: keep vigil (and so
 * the sandbox it starts) on those CPUs.  With one CPU an audited call
 * needs no cross-CPU wake-up. */
static int restrict_cpus(struct run *r)
{
    cpu_set_t want;
    bool pin;
    if (vg_enforce_cpus(&r->enf, &r->limits, r->o->cpuset, &want, &pin, &r->err) < 0)
        return -1;
    if (pin && sched_setaffinity(0, sizeof want, &want) < 0) {
        vg_errf(&r->err, "sched_setaffinity: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static void block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static void measure(struct vg_ending *end, uint64_t start_mono)
{
    struct rusage ru;
    end->wall_s = (double)(vg_now_mono_ns() - start_mono) / 1e9;
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
        end->cpu_user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
        end->cpu_sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
        end->peak_rss = (uint64_t)ru.ru_maxrss * 1024;
    }
}

static void summary(const struct run *r, const struct vg_engine_ctx *ctx,
                    const struct vg_ending *end)
{
    if (r->o->quiet) {
        /* -q drops the summary, never the reason a run failed.  A log
         * whose name the user did not choose is not named either: it is
         * the latest, which `vigil log` and `vigil view` open without FILE,
         * and the result record names it. */
        if (end->error[0])
            vg_say(stderr, "vigil: %s", end->error);
        return;
    }
    uint64_t allowed = 0, refused = 0;
    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        for (int d = 0; d < VG_DEC_NDECISIONS; d++)
            *(d == VG_DEC_ALLOW ? &allowed : &refused) += ctx->out.counts[c][d];
    vg_say(stderr, "vigil: %s, exit %d, %.2fs; %llu allowed, %llu %s; log %s%s%s",
           end->status, end->exit_code, end->wall_s, (unsigned long long)allowed,
           (unsigned long long)refused,
           r->o->mode == VG_MODE_DRY_RUN ? "refused or would be" : "refused", r->log_path,
           r->o->result_path ? "; result " : "", r->o->result_path ? r->o->result_path : "");
    if (end->error[0])
        vg_say(stderr, "vigil: %s", end->error);
}

/* vigil's resolver: where it asks, known before anything starts.  No
 * upstream (the host names none) is no failure: allowed names then get
 * SERVFAIL, and a run that allows none never notices. */
static int prepare_dns(struct run *r)
{
    struct vg_err ignored;
    if (!r->plan.dns)
        return 0;
    if (r->o->dns_upstream)
        return vg_dns_upstream_parse(&r->dns_upstream, r->o->dns_upstream, &r->err);
    (void)vg_dns_upstream_from_file(&r->dns_upstream, "/etc/resolv.conf", &ignored);
    return 0;
}

/* Serve the socket vg_sandbox_start bound; the thread owns it from here. */
static int start_dns(struct run *r, struct vg_sandbox *sb, struct vg_dns_server **out)
{
    if (sb->dns_fd < 0)
        return 0;
    struct vg_dns_config cfg = {
        .fd = sb->dns_fd, .pol = r->pol, .log = r->log, .table = &r->dns_table,
        .upstream = &r->dns_upstream, .dry_run = r->o->mode == VG_MODE_DRY_RUN,
        .start_mono_ns = r->start_mono, .bill_self = vg_cgroup_bill_self,
    };
    sb->dns_fd = -1;
    *out = vg_dns_start(&cfg, &r->err);
    return *out ? 0 : -1;
}

/* The result's summary, read back from the finished log through the fd
 * kept since it was created (never by its name, which others could swap).
 * Reading the log once at the end costs nothing per call, and gives the
 * result exactly what `vigil log --summary` says of the same log. */
static bool read_summary(const struct run *r, struct vg_summary *s)
{
    char path[64];
    struct vg_err err;
    if (r->log_fd < 0)
        return false;
    snprintf(path, sizeof path, "/proc/self/fd/%d", r->log_fd);
    if (vg_summary_of_log(path, s, &err) >= 0)
        return true;
    vg_summary_free(s);
    return false;
}

/* The log and the result, checked and reserved, and the log's header:
 * what names the command and where it is recorded. */
static int command_outputs(struct run *r)
{
    return vg_run_outputs(r) < 0 || vg_run_header(r) < 0 ? -1 : 0;
}

/* pasta ended while the sandbox was held (its pidfd is readable once it
 * has exited, reaped or not): a run started now would have no way out
 * from its first instruction, so the daemon had better take another. */
static int held_way_out(struct run *r, const struct vg_sandbox *sb)
{
    struct pollfd pf = {.fd = sb->egress.pidfd, .events = POLLIN};
    if (!r->plan.net.egress || sb->egress.pidfd < 0 || poll(&pf, 1, 0) != 1)
        return 0;
    vg_errf(&r->err, "--hold: pasta, the sandbox's way out, ended while it was held: the "
                     "prepared sandbox is destroyed unused");
    return -1;
}

/* A held sandbox, built: wait for the request, then do what a run that
 * had its command from the start did before its sandbox: the files the
 * command names, their Landlock grants, the outputs and the header.  The
 * run's clock starts at the request, so its log and result read as a
 * cold run's. */
static int hold_request(struct run *r, const struct vg_sandbox *sb)
{
    if (vg_hold_request(r, sb->init_pid) < 0 || held_way_out(r, sb) < 0)
        return -1;
    r->start_wall = vg_now_wall_ns();
    r->start_mono = vg_now_mono_ns();
    unsigned from = r->nartifacts;
    if (vg_run_command_artifacts(r) < 0)
        return -1;
    if (r->plan.landlock_abi > 0)
        landlock_command(r, from);
    return command_outputs(r);
}

/* Then, once the log, the output thread and the resolver are there (as
 * in a cold run when the candidate is forked), pid 1 gets the rest of the
 * plan and forks the candidate: nothing but the engine is left for it to
 * wait for. */
static int hold_go(struct run *r, struct vg_sandbox *sb)
{
    if (vg_sandbox_go(sb, &r->plan, r->held.fds[0], &r->err) < 0)
        return -1;
    close(r->held.fds[0]); /* pid 1 has it */
    r->held.fds[0] = -1;
    return 0;
}

static int supervise(struct run *r, struct vg_ending *end)
{
    struct vg_sandbox sb = {.out_fd = -1, .err_fd = -1, .report_fd = -1, .listener_chan = -1,
                            .dns_fd = -1, .hold = r->o->hold};
    struct vg_dns_server *dns = NULL;
    struct vg_io io = {0};
    const struct vg_engine *engine = r->engine;
    sb.notify = engine->notify;
    sb.filter_flags = vg_notify_filter_flags(&r->notify);
    /* the plan's, known before anything starts (a held run's request waits
     * for none of it) */
    const char *immutable[16], *masked[64];
    unsigned nimmutable = vg_plan_immutable(&r->plan, immutable, VG_ARRAY_LEN(immutable));
    unsigned nmasked = vg_plan_masked(&r->plan, masked, VG_ARRAY_LEN(masked));
    block_signals();
    if (vg_sandbox_start(&r->plan, &r->cand_bpf, &r->init_bpf, vg_sup_attach, &sb,
                         &r->err) < 0)
        return -1;
    if (sb.hold && hold_request(r, &sb) < 0) {
        vg_sandbox_abort(&sb);
        return -1;
    }
    struct vg_engine_ctx ctx = {
        .opts = r->o, .pol = r->pol, .limits = &r->limits, .log = r->log,
        .start_mono_ns = r->start_mono,
        .artifacts = (const char *const *)r->artifact_paths, .nartifacts = r->nartifacts,
        .command_path = r->command_path,
        .audited = r->audit.cls,
        .audit = &r->audit,
        .dns = r->plan.dns ? &r->dns_table : NULL,
        .net = &r->plan.net,
    };
    ctx.nimmutable = nimmutable;
    ctx.immutable = immutable;
    ctx.nmasked = nmasked;
    ctx.masked = masked;
    ctx.init_pid = sb.init_pid;
    struct vg_io_caps caps = {
        .timeout_ms = r->limits.v[VG_LIM_TIME], .output = r->limits.v[VG_LIM_OUTPUT],
        .tail = r->o->tail_set ? r->o->tail : VG_TAIL_DEFAULT, .forward = !r->o->no_forward,
        .out_to = sb.hold ? r->held.fds[1] : STDOUT_FILENO,
        .err_to = sb.hold ? r->held.fds[2] : STDERR_FILENO,
        .host_workdir = r->plan.private_workdir ? NULL : r->workdir,
        .disk = r->enf.how[VG_LIM_DISK] == VG_MECH_NONE ? 0 : r->limits.v[VG_LIM_DISK],
        .cg = &r->enf.cg, .ncpus = vg_enforce_ncpus(&r->enf, &r->limits),
        .cputotal_ms = r->enf.how[VG_LIM_CPUTOTAL] == VG_MECH_RLIMIT ? 0
                                                                     : r->limits.v[VG_LIM_CPUTOTAL],
    };
    /* The log takes its name only now: a run that never started leaves
     * nothing where -o pointed, and an older log there is kept. */
    ctx.listener_chan = sb.listener_chan;
    ctx.notify_wait_killable = r->notify.wait_killable;
    if (vg_run_log_commit(r) < 0 || vg_io_start(&io, &sb, &caps, &r->err) < 0 ||
        start_dns(r, &sb, &dns) < 0 || (sb.hold && hold_go(r, &sb) < 0)) {
        kill(sb.init_pid, SIGKILL);
        vg_dns_stop(dns);
        engine->supervise(&ctx); /* reap */
        vg_egress_stop(&sb.egress);
        vg_sandbox_close(&sb);
        vg_io_free(&io);
        return -1;
    }
    engine->supervise(&ctx);
    vg_dns_stop(dns); /* before the trailer: no record after it */
    vg_egress_stop(&sb.egress);
    char netnote[300];
    if (vg_egress_note(&sb.egress, r->start_mono, netnote, sizeof netnote))
        vg_run_note(r, "network", netnote);
    vg_io_finish(&io);
    /* the notify engine's socket; out/err/report belong to io now */
    if (sb.listener_chan >= 0)
        close(sb.listener_chan);
    measure(end, r->start_mono);
    struct vg_cg_usage use;
    vg_cgroup_read(&r->enf.cg, &use);
    vg_ending_decide(end, &ctx.out, &io, &r->limits, &use);
    vg_run_trailer(r, &ctx, end);
    if (vg_log_close(r->log) < 0 && strcmp(end->status, "error")) {
        end->status = "error";
        end->exit_code = VG_EXIT_SETUP;
        snprintf(end->error, sizeof end->error, "log %s: %s", r->log_path, vg_log_error(r->log));
    }
    r->log = NULL;
    if (r->o->result_path) {
        struct vg_summary sum;
        bool have_sum = read_summary(r, &sum);
        struct vg_result_in in = {
            .opts = r->o, .limits = &r->limits, .enforce = &r->enf, .artifacts = r->artifacts,
            .nartifacts = r->nartifacts, .policy_path = r->policy_name,
            .policy_sha256 = vg_policy_sha256(r->pol), .log_path = r->log_path,
            .image_name = r->image_ref,
            .image_digest = r->image_digest[0] ? r->image_digest : NULL,
            .workdir = r->workdir, .workdir_kept = r->o->workdir != NULL || r->o->keep,
            .start_wall_ns = r->start_wall, .landlock_abi = r->plan.landlock_abi,
            .engine = engine->name, .engine_note = r->engine_note,
            .outcome = &ctx.out, .io = &io, .end = end,
            .warnings = r->warnings, .nwarnings = r->nwarnings,
            .summary = have_sum ? &sum : NULL, .seal = &r->seal,
        };
        if (vg_result_write(&r->result_out, &in, &r->err) < 0) {
            vg_say(stderr, "vigil: %s", r->err.msg);
            end->exit_code = VG_EXIT_SETUP;
        }
        if (have_sum)
            vg_summary_free(&sum);
    }
    summary(r, &ctx, end);
    vg_io_free(&io);
    return 0;
}

static void cleanup(struct run *r)
{
    vg_selfhash_wait(&r->selfhash);  /* a run that failed before its trailer */
    vg_sigkey_wipe(&r->sign_key);
    if (r->log_fd >= 0)
        close(r->log_fd);
    vg_enforce_undo(&r->enf);
    if (r->log)
        vg_log_close(r->log);
    if (r->own_workdir && !r->o->keep)
        vg_scratch_remove(r->workdir);
    else if (r->own_workdir)
        vg_say(stderr, "vigil: kept the working directory %s", r->workdir);
    for (unsigned i = 0; i < r->nartifacts; i++) {
        free((char *)r->artifacts[i].path);
        free((char *)r->artifacts[i].sha256);
        free(r->artifact_paths[i]);
        free(r->artifact_hosts[i]);
    }
    free(r->artifacts);
    free(r->artifact_paths);
    free(r->artifact_hosts);
    free(r->command_path);
    free(r->policy_file);
    for (unsigned i = 0; i < r->nwarnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    free(r->workdir);
    free(r->log_path);
    vg_run_outputs_discard(r);
    vg_bpf_free(&r->cand_bpf);
    vg_bpf_free(&r->init_bpf);
    vg_plan_free(&r->plan);
    vg_dns_table_free(&r->dns_table);
    vg_policy_free(r->pol);
    vg_run_image_free(r); /* after the policy and the plan, which point into it */
    vg_hold_free(&r->held);
}

int vg_run(struct vg_run_opts *o)
{
    struct run r = {.o = o, .log_out = {.fd = -1}, .log_fd = -1, .result_out = {.fd = -1},
                    .held = {.fds = {-1, -1, -1}}};
    r.start_wall = vg_now_wall_ns();
    r.start_mono = vg_now_mono_ns();
    vg_dns_table_init(&r.dns_table);
    int code = VG_EXIT_SETUP;
    struct vg_places places = {.tmp = "/tmp"};
    char *home = home_dir();
    places.home = home;
    /* vigil's own hash, for a signed seal, made while the sandbox is set up */
    if (o->sign_key)
        vg_selfhash_start(&r.selfhash);
    /* a key that cannot sign is found out before anything runs */
    struct vg_err kerr;
    if (o->sign_key && vg_sigkey_load(o->sign_key, &r.sign_key, &kerr) < 0)
        vg_errf(&r.err, "--sign-key %s", kerr.msg);
    if (!r.err.msg[0] && o->host_uid)
        (void)vg_host_uid_check(o->host_uid, &r.err);
    if (r.err.msg[0] || (o->hold && vg_hold_check(&r) < 0) || load_policy(&r) < 0 ||
        prepare_workdir(&r, home) < 0)
        goto out;
    places.work = r.workdir;
    choose_engine(&r);
    /* Every run's network namespace has vigil's resolver: names are what
     * it hands out, nothing is resolved ahead. */
    if (vg_policy_compile_run(r.pol, &places, o->binds, o->nbinds, &r.err) < 0 ||
        vg_run_artifacts(&r) < 0 || build_sandbox(&r) < 0 || prepare_dns(&r) < 0 ||
        restrict_cpus(&r) < 0 || (!o->hold && command_outputs(&r) < 0))
        goto out;
    struct vg_ending end = {0};
    if (supervise(&r, &end) < 0)
        goto out;
    code = end.exit_code;
    r.err.msg[0] = 0;
out:
    if (r.err.msg[0]) {
        /* The sandbox never ran: the log (only a header) is dropped with
         * the rest in cleanup; the message is the whole story, and the
         * result record tells it too. */
        fail(&r, code);
        vg_outfile_discard(&r.result_out);
        if (!r.result_refused)
            vg_run_error_result(o, r.err.msg);
    }
    cleanup(&r);
    free(home);
    return code;
}
