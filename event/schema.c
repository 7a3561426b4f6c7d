/* schema.c: the on-disk layout of every record as tables (see schema.h and
 * docs/FORMAT.md), and the walk that emits a record through a sink. */
#include "event/schema.h"

#include <stddef.h>

#define FLD(k, kd, T, m, ...) \
    {.key = (k), .klen = sizeof(k) - 1, .kind = (kd), .off = offsetof(T, m), __VA_ARGS__}
#define NFLD(T, m) .off_n = offsetof(T, m)
#define SCHEMA(name, T, tbl) \
    static const struct vg_schema name = {tbl, VG_ARRAY_LEN_(tbl), sizeof(T)}
#define VG_ARRAY_LEN_(a) (sizeof(a) / sizeof((a)[0]))

/* ---- conditions ---- */
static bool has_symbol(const void *b) { return ((const struct vg_frame *)b)->symbol != NULL; }
static bool has_rule(const void *b) { return ((const struct vg_syscall_ev *)b)->rule.file != NULL; }
static bool no_rule(const void *b) { return !has_rule(b); }
static bool dns_has_rule(const void *b) { return ((const struct vg_dns_ev *)b)->rule.file != NULL; }
static bool dns_no_rule(const void *b) { return !dns_has_rule(b); }
static bool has_ret(const void *b)
{
    const struct vg_syscall_ev *e = b;
    return e->carried && !e->installed;
}
static bool is_start(const void *b) { return ((const struct vg_proc_ev *)b)->kind == VG_PROC_START; }
static bool is_exit(const void *b) { return ((const struct vg_proc_ev *)b)->kind == VG_PROC_EXIT; }
static bool svc_finished(const void *b) { return ((const struct vg_svc_ev *)b)->kind == VG_SVC_FINISHED; }
static bool svc_quota(const void *b) { return ((const struct vg_svc_ev *)b)->quota != NULL; }

/* ---- nested structures ---- */
static const struct vg_field dest_f[] = {
    FLD(VG_K_FAMILY, VG_F_STR, struct vg_dest, family),
    FLD(VG_K_ADDR, VG_F_STR, struct vg_dest, addr),
    FLD(VG_K_HOST, VG_F_STR, struct vg_dest, host),
    FLD(VG_K_PORT, VG_F_I32, struct vg_dest, port, .omit = VG_OM_NEG, .def = -1),
    FLD(VG_K_MSGS, VG_F_U32, struct vg_dest, msgs),
    FLD(VG_K_DECISION, VG_F_ENUM, struct vg_dest, decision, .en = &vg_enum_decision),
};
SCHEMA(dest_s, struct vg_dest, dest_f);

/* Present (as a map) only when argv was cut: every field is then set. */
static const struct vg_field argv_full_f[] = {
    FLD(VG_K_ARGC, VG_F_U32, struct vg_argv_full, argc, .omit = VG_OM_ZERO),
    FLD(VG_K_BYTES, VG_F_U64, struct vg_argv_full, bytes, .omit = VG_OM_ZERO),
    FLD(VG_K_SHA256, VG_F_STR, struct vg_argv_full, sha256),
};
SCHEMA(argv_full_s, struct vg_argv_full, argv_full_f);

static const struct vg_field args_f[] = {
    FLD(VG_K_PATH, VG_F_STR, struct vg_args, path),
    FLD(VG_K_RESOLVED, VG_F_STR, struct vg_args, resolved),
    FLD(VG_K_PATH2, VG_F_STR, struct vg_args, path2),
    FLD(VG_K_RESOLVED2, VG_F_STR, struct vg_args, resolved2),
    FLD(VG_K_MASKED, VG_F_BOOL, struct vg_args, masked),
    FLD(VG_K_FLAGS, VG_F_STRV, struct vg_args, flag_names, NFLD(struct vg_args, nflags)),
    FLD(VG_K_FLAGS_RAW, VG_F_I64, struct vg_args, flags, .omit = VG_OM_NEG, .def = -1),
    FLD(VG_K_MODE, VG_F_I64, struct vg_args, mode, .omit = VG_OM_NEG, .def = -1),
    FLD(VG_K_FAMILY, VG_F_STR, struct vg_args, family),
    FLD(VG_K_PROTO, VG_F_STR, struct vg_args, proto),
    FLD(VG_K_ADDR, VG_F_STR, struct vg_args, addr),
    FLD(VG_K_HOST, VG_F_STR, struct vg_args, host),
    FLD(VG_K_PORT, VG_F_I32, struct vg_args, port, .omit = VG_OM_NEG, .def = -1),
    FLD(VG_K_DESTS, VG_F_STRUCTV, struct vg_args, dests, NFLD(struct vg_args, ndests), .sub = &dest_s),
    FLD(VG_K_EXE, VG_F_STR, struct vg_args, exe),
    FLD(VG_K_ARGV, VG_F_STRV, struct vg_args, argv, NFLD(struct vg_args, argc)),
    FLD(VG_K_ARGV_FULL, VG_F_MAP, struct vg_args, argv_full, .sub = &argv_full_s),
    FLD(VG_K_ARGV_UNREADABLE, VG_F_BOOL, struct vg_args, argv_unreadable),
    FLD(VG_K_ENV_NAMES, VG_F_STRV, struct vg_args, env_names, NFLD(struct vg_args, nenv)),
};
SCHEMA(args_s, struct vg_args, args_f);

/* The rule lives flat in the syscall struct; on disk it is one map. */
static const struct vg_field rule_f[] = {
    FLD(VG_K_FILE, VG_F_STR, struct vg_syscall_ev, rule.file),
    FLD(VG_K_LINE, VG_F_U32, struct vg_syscall_ev, rule.line),
    FLD(VG_K_TEXT, VG_F_STR, struct vg_syscall_ev, rule.text),
};
SCHEMA(rule_s, struct vg_syscall_ev, rule_f);

static const struct vg_field frame_f[] = {
    FLD(VG_K_PC, VG_F_U64, struct vg_frame, pc),
    FLD(VG_K_MODULE, VG_F_STR, struct vg_frame, module),
    FLD(VG_K_SYM, VG_F_STR, struct vg_frame, symbol),
    FLD(VG_K_OFF, VG_F_U64, struct vg_frame, offset, .when = has_symbol),
};
SCHEMA(frame_s, struct vg_frame, frame_f);

static const struct vg_field pyframe_f[] = {
    FLD(VG_K_FILE, VG_F_STR, struct vg_pyframe, file),
    FLD(VG_K_FUNC, VG_F_STR, struct vg_pyframe, func),
    FLD(VG_K_LINE, VG_F_I32, struct vg_pyframe, line),
};
SCHEMA(pyframe_s, struct vg_pyframe, pyframe_f);

static const struct vg_field policy_f[] = {
    FLD(VG_K_PATH, VG_F_STR, struct vg_header, policy_path),
    FLD(VG_K_SHA256, VG_F_STR, struct vg_header, policy_sha256),
    FLD(VG_K_TEXT, VG_F_STR, struct vg_header, policy_text),
};
SCHEMA(policy_s, struct vg_header, policy_f);

static const struct vg_field image_f[] = {
    FLD(VG_K_NAME, VG_F_STR, struct vg_header, image_name),
    FLD(VG_K_DIGEST, VG_F_STR, struct vg_header, image_digest),
};
SCHEMA(image_s, struct vg_header, image_f);

static const struct vg_field limit_f[] = {
    FLD(VG_K_NAME, VG_F_STR, struct vg_limit_rec, name),
    FLD(VG_K_VALUE, VG_F_U64, struct vg_limit_rec, value),
    FLD(VG_K_ENFORCED_BY, VG_F_STR, struct vg_limit_rec, enforced_by),
};
SCHEMA(limit_s, struct vg_limit_rec, limit_f);

static const struct vg_field artifact_f[] = {
    FLD(VG_K_PATH, VG_F_STR, struct vg_artifact, path),
    FLD(VG_K_SHA256, VG_F_STR, struct vg_artifact, sha256),
};
SCHEMA(artifact_s, struct vg_artifact, artifact_f);

static const struct vg_field count_f[] = {
    FLD(VG_K_CLASS, VG_F_ENUM, struct vg_count, cls, .en = &vg_enum_class),
    FLD(VG_K_DECISION, VG_F_ENUM, struct vg_count, decision, .en = &vg_enum_decision),
    FLD(VG_K_N, VG_F_U64, struct vg_count, n),
};
SCHEMA(count_s, struct vg_count, count_f);

/* ---- records ---- */
static const struct vg_field header_f[] = {
    FLD(VG_K_FORMAT, VG_F_U32, struct vg_header, format),
    FLD(VG_K_VIGIL, VG_F_STR, struct vg_header, vigil_version),
    FLD(VG_K_START_WALL, VG_F_U64, struct vg_header, start_wall_ns),
    FLD(VG_K_START_MONO, VG_F_U64, struct vg_header, start_mono_ns),
    FLD(VG_K_KERNEL, VG_F_STR, struct vg_header, kernel),
    FLD(VG_K_ARGV, VG_F_STRV, struct vg_header, argv, NFLD(struct vg_header, argc)),
    FLD(VG_K_CWD, VG_F_STR, struct vg_header, cwd),
    FLD(VG_K_HOST_UID, VG_F_U32, struct vg_header, host_uid, .omit = VG_OM_ZERO),
    FLD(VG_K_TASK_ID, VG_F_STR, struct vg_header, task_id),
    FLD(VG_K_MODE, VG_F_STR, struct vg_header, mode),
    FLD(VG_K_ENGINE, VG_F_STR, struct vg_header, engine),
    FLD(VG_K_ENGINE_NOTE, VG_F_STR, struct vg_header, engine_note),
    {.key = VG_K_POLICY, .klen = sizeof VG_K_POLICY - 1, .kind = VG_F_MAP, .off = 0, .sub = &policy_s},
    FLD(VG_K_LIMITS, VG_F_STRUCTV, struct vg_header, limits,
        NFLD(struct vg_header, nlimits), .sub = &limit_s),
    FLD(VG_K_ARTIFACTS, VG_F_STRUCTV, struct vg_header, artifacts,
        NFLD(struct vg_header, nartifacts), .sub = &artifact_s),
    FLD(VG_K_RESOLVED, VG_F_KVMAP, struct vg_header, resolved, NFLD(struct vg_header, nresolved)),
    FLD(VG_K_SCRATCH, VG_F_STRV, struct vg_header, scratch, NFLD(struct vg_header, nscratch)),
    {.key = VG_K_IMAGE, .klen = sizeof VG_K_IMAGE - 1, .kind = VG_F_MAP, .off = 0, .sub = &image_s},
    FLD(VG_K_LOG, VG_F_STR, struct vg_header, log_kind),
};
SCHEMA(header_s, struct vg_header, header_f);

static const struct vg_field syscall_f[] = {
    FLD(VG_K_PID, VG_F_I32, struct vg_syscall_ev, pid),
    FLD(VG_K_TID, VG_F_I32, struct vg_syscall_ev, tid),
    FLD(VG_K_HPID, VG_F_I32, struct vg_syscall_ev, hpid),
    FLD(VG_K_HTID, VG_F_I32, struct vg_syscall_ev, htid),
    FLD(VG_K_PROC, VG_F_U64, struct vg_syscall_ev, proc),
    FLD(VG_K_NR, VG_F_I32, struct vg_syscall_ev, nr),
    FLD(VG_K_NAME, VG_F_STR, struct vg_syscall_ev, name),
    FLD(VG_K_CLASS, VG_F_ENUM, struct vg_syscall_ev, cls, .en = &vg_enum_class),
    FLD(VG_K_ARGS, VG_F_MAP, struct vg_syscall_ev, args, .sub = &args_s),
    FLD(VG_K_DECISION, VG_F_ENUM, struct vg_syscall_ev, decision, .en = &vg_enum_decision),
    {.key = VG_K_RULE, .klen = sizeof VG_K_RULE - 1, .kind = VG_F_MAP, .off = 0, .omit = VG_OM_NIL, .when = has_rule,
     .sub = &rule_s},
    FLD(VG_K_DEFAULT, VG_F_STR, struct vg_syscall_ev, rule.text, .when = no_rule),
    FLD(VG_K_ERRNO, VG_F_I32, struct vg_syscall_ev, err, .omit = VG_OM_ZERO),
    FLD(VG_K_STACK, VG_F_STRUCTV, struct vg_syscall_ev, stack,
        NFLD(struct vg_syscall_ev, nstack), .sub = &frame_s),
    FLD(VG_K_PY, VG_F_STRUCTV, struct vg_syscall_ev, py,
        NFLD(struct vg_syscall_ev, npy), .sub = &pyframe_s),
    FLD(VG_K_PY_TRUNC, VG_F_BOOL, struct vg_syscall_ev, py_trunc),
    FLD(VG_K_PROBE, VG_F_BOOL, struct vg_syscall_ev, probe),
    FLD(VG_K_CARRIED, VG_F_BOOL, struct vg_syscall_ev, carried),
    FLD(VG_K_INSTALLED, VG_F_BOOL, struct vg_syscall_ev, installed),
    FLD(VG_K_RET, VG_F_I64, struct vg_syscall_ev, ret, .when = has_ret),
    FLD(VG_K_RET_ERRNO, VG_F_I32, struct vg_syscall_ev, ret_errno, .omit = VG_OM_ZERO),
};
SCHEMA(syscall_s, struct vg_syscall_ev, syscall_f);

static const struct vg_field proc_f[] = {
    FLD(VG_K_KIND, VG_F_ENUM, struct vg_proc_ev, kind, .en = &vg_enum_proc_kind),
    FLD(VG_K_PID, VG_F_I32, struct vg_proc_ev, pid),
    FLD(VG_K_HPID, VG_F_I32, struct vg_proc_ev, hpid),
    FLD(VG_K_PROC, VG_F_U64, struct vg_proc_ev, proc),
    FLD(VG_K_PARENT, VG_F_U64, struct vg_proc_ev, parent, .when = is_start),
    FLD(VG_K_PPID, VG_F_I32, struct vg_proc_ev, ppid, .when = is_start),
    FLD(VG_K_CLONE_FLAGS, VG_F_U64, struct vg_proc_ev, clone_flags, .when = is_start),
    FLD(VG_K_THREAD, VG_F_BOOL, struct vg_proc_ev, thread),
    FLD(VG_K_EXE, VG_F_STR, struct vg_proc_ev, exe),
    FLD(VG_K_ARGV, VG_F_STRV, struct vg_proc_ev, argv, NFLD(struct vg_proc_ev, argc)),
    FLD(VG_K_ARGV_FULL, VG_F_MAP, struct vg_proc_ev, argv_full, .sub = &argv_full_s),
    FLD(VG_K_CODE, VG_F_I32, struct vg_proc_ev, exit_code, .when = is_exit),
    FLD(VG_K_SIGNAL, VG_F_I32, struct vg_proc_ev, signal, .omit = VG_OM_ZERO),
    FLD(VG_K_CORE, VG_F_BOOL, struct vg_proc_ev, core),
};
SCHEMA(proc_s, struct vg_proc_ev, proc_f);

static const struct vg_field note_f[] = {
    FLD(VG_K_WHAT, VG_F_STR, struct vg_note_ev, what),
    FLD(VG_K_DETAIL, VG_F_STR, struct vg_note_ev, detail),
    FLD(VG_K_PID, VG_F_I32, struct vg_note_ev, pid, .omit = VG_OM_ZERO),
};
SCHEMA(note_s, struct vg_note_ev, note_f);

static const struct vg_field seal_f[] = {
    FLD(VG_K_HEAD, VG_F_STR, struct vg_seal, head),
    FLD(VG_K_VIGIL_BUILD_ID, VG_F_STR, struct vg_seal, vigil_build_id),
    FLD(VG_K_VIGIL_SHA256, VG_F_STR, struct vg_seal, vigil_sha256),
    FLD(VG_K_POLICY_SHA256, VG_F_STR, struct vg_seal, policy_sha256),
    FLD(VG_K_IMAGE_DIGEST, VG_F_STR, struct vg_seal, image_digest),
    FLD(VG_K_ARTIFACTS, VG_F_STRUCTV, struct vg_seal, artifacts,
        NFLD(struct vg_seal, nartifacts), .sub = &artifact_s),
    FLD(VG_K_ENGINE, VG_F_STR, struct vg_seal, engine),
    FLD(VG_K_KERNEL, VG_F_STR, struct vg_seal, kernel),
    FLD(VG_K_START_WALL, VG_F_U64, struct vg_seal, start_wall_ns, .omit = VG_OM_ZERO),
    FLD(VG_K_END_WALL, VG_F_U64, struct vg_seal, end_wall_ns, .omit = VG_OM_ZERO),
    FLD(VG_K_KEY, VG_F_STR, struct vg_seal, key),
};
SCHEMA(seal_s, struct vg_seal, seal_f);

static const struct vg_field trailer_f[] = {
    FLD(VG_K_STATUS, VG_F_STR, struct vg_trailer, status),
    FLD(VG_K_EXIT_CODE, VG_F_I32, struct vg_trailer, exit_code),
    FLD(VG_K_SIGNAL, VG_F_I32, struct vg_trailer, signal, .omit = VG_OM_ZERO),
    FLD(VG_K_LIMIT, VG_F_STR, struct vg_trailer, limit),
    FLD(VG_K_ELAPSED, VG_F_U64, struct vg_trailer, elapsed_ns),
    FLD(VG_K_EVENTS, VG_F_U64, struct vg_trailer, events),
    FLD(VG_K_COUNTS, VG_F_STRUCTV, struct vg_trailer, counts,
        NFLD(struct vg_trailer, ncounts), .sub = &count_s),
    FLD(VG_K_SEAL, VG_F_MAP, struct vg_trailer, seal, .sub = &seal_s),
};
SCHEMA(trailer_s, struct vg_trailer, trailer_f);

/* The dns record's rule is the syscall record's: one map, or "default". */
static const struct vg_field dns_rule_f[] = {
    FLD(VG_K_FILE, VG_F_STR, struct vg_dns_ev, rule.file),
    FLD(VG_K_LINE, VG_F_U32, struct vg_dns_ev, rule.line),
    FLD(VG_K_TEXT, VG_F_STR, struct vg_dns_ev, rule.text),
};
SCHEMA(dns_rule_s, struct vg_dns_ev, dns_rule_f);

static const struct vg_field dns_f[] = {
    FLD(VG_K_NAME, VG_F_STR, struct vg_dns_ev, name),
    FLD(VG_K_QTYPE, VG_F_STR, struct vg_dns_ev, qtype),
    FLD(VG_K_PROTO, VG_F_STR, struct vg_dns_ev, proto),
    FLD(VG_K_DECISION, VG_F_ENUM, struct vg_dns_ev, decision, .en = &vg_enum_decision),
    {.key = VG_K_RULE, .klen = sizeof VG_K_RULE - 1, .kind = VG_F_MAP, .off = 0, .omit = VG_OM_NIL,
     .when = dns_has_rule, .sub = &dns_rule_s},
    FLD(VG_K_DEFAULT, VG_F_STR, struct vg_dns_ev, rule.text, .when = dns_no_rule),
    FLD(VG_K_RCODE, VG_F_STR, struct vg_dns_ev, rcode),
    FLD(VG_K_ANSWERS, VG_F_STRV, struct vg_dns_ev, answers, NFLD(struct vg_dns_ev, nanswers)),
};
SCHEMA(dns_s, struct vg_dns_ev, dns_f);

/* A step of vigil serve.  Only what the kind has is written: a finished
 * run's exit code, CPU and wall time even when 0, a refusal's retry time
 * with its quota; 0 and NULL elsewhere are left out. */
static const struct vg_field svc_f[] = {
    FLD(VG_K_KIND, VG_F_ENUM, struct vg_svc_ev, kind, .en = &vg_enum_svc_kind),
    FLD(VG_K_WALL, VG_F_U64, struct vg_svc_ev, wall_ns),
    FLD(VG_K_UID, VG_F_I64, struct vg_svc_ev, uid, .omit = VG_OM_NEG, .def = -1),
    FLD(VG_K_USER, VG_F_STR, struct vg_svc_ev, user),
    FLD(VG_K_RUN, VG_F_STR, struct vg_svc_ev, run),
    FLD(VG_K_SLOT, VG_F_STR, struct vg_svc_ev, slot),
    FLD(VG_K_QUOTA, VG_F_STR, struct vg_svc_ev, quota),
    FLD(VG_K_RETRY_AFTER, VG_F_U64, struct vg_svc_ev, retry_after_s, .when = svc_quota),
    FLD(VG_K_REASON, VG_F_STR, struct vg_svc_ev, reason),
    FLD(VG_K_STATUS, VG_F_STR, struct vg_svc_ev, status),
    FLD(VG_K_EXIT_CODE, VG_F_I32, struct vg_svc_ev, exit_code, .when = svc_finished),
    FLD(VG_K_CPU, VG_F_U64, struct vg_svc_ev, cpu_ns, .when = svc_finished),
    FLD(VG_K_ELAPSED, VG_F_U64, struct vg_svc_ev, elapsed_ns, .when = svc_finished),
    FLD(VG_K_HOST_UID, VG_F_U64, struct vg_svc_ev, host_uid, .omit = VG_OM_ZERO),
    FLD(VG_K_PID, VG_F_I32, struct vg_svc_ev, pid, .omit = VG_OM_ZERO),
};
SCHEMA(svc_s, struct vg_svc_ev, svc_f);

static const struct vg_schema *const rec_schemas[VG_REC_NTYPES] = {
    [VG_REC_HEADER] = &header_s, [VG_REC_SYSCALL] = &syscall_s, [VG_REC_PROC] = &proc_s,
    [VG_REC_NOTE] = &note_s, [VG_REC_TRAILER] = &trailer_s,
    [VG_REC_DNS] = &dns_s, [VG_REC_SERVICE] = &svc_s,
};

/* Every struct but the header starts with seq and ts_ns; the emitter and
 * the decoder rely on that, so check it here once. */
_Static_assert(offsetof(struct vg_syscall_ev, ts_ns) == 8 && offsetof(struct vg_proc_ev, ts_ns) == 8 &&
               offsetof(struct vg_note_ev, ts_ns) == 8 && offsetof(struct vg_trailer, ts_ns) == 8 &&
               offsetof(struct vg_dns_ev, ts_ns) == 8 && offsetof(struct vg_svc_ev, ts_ns) == 8,
               "records start with seq, ts_ns");
_Static_assert(sizeof(enum vg_class) == sizeof(int) && sizeof(enum vg_decision) == sizeof(int) &&
               sizeof(enum vg_proc_kind) == sizeof(int) && sizeof(enum vg_svc_kind) == sizeof(int),
               "enums are stored as int");

const struct vg_schema *vg_schema_of(enum vg_rec_type t)
{
    return (unsigned)t < VG_REC_NTYPES ? rec_schemas[t] : NULL;
}

bool vg_rec_has_seq(enum vg_rec_type t) { return t != VG_REC_HEADER; }

static bool map_has_content(const struct vg_field *f, const void *base)
{
    if (f->when && !f->when(base))
        return false;
    return vg_schema_count(f->sub, (const char *)base + f->off) > 0;
}

bool vg_field_present(const struct vg_field *f, const void *base)
{
    if (f->kind == VG_F_MAP)
        return f->omit == VG_OM_NIL || map_has_content(f, base);
    if (f->when && !f->when(base))
        return false;
    int64_t v;
    switch (f->kind) {
    case VG_F_STR: return *VG_CAT(base, f->off, const char *) != NULL;
    case VG_F_STRV: case VG_F_STRUCTV: case VG_F_KVMAP:
        return *VG_CAT(base, f->off_n, uint32_t) > 0 && *VG_CAT(base, f->off, const void *) != NULL;
    case VG_F_BOOL: return *VG_CAT(base, f->off, bool);
    case VG_F_ENUM: return true;
    case VG_F_U64: v = *VG_CAT(base, f->off, uint64_t) != 0; break;
    case VG_F_U32: v = *VG_CAT(base, f->off, uint32_t) != 0; break;
    case VG_F_I64: v = *VG_CAT(base, f->off, int64_t); break;
    case VG_F_I32: v = *VG_CAT(base, f->off, int32_t); break;
    default: return false;
    }
    switch (f->omit) {
    case VG_OM_ZERO: return v != 0;
    case VG_OM_NEG: return v >= 0;
    default: return true;
    }
}

uint32_t vg_schema_count(const struct vg_schema *s, const void *base)
{
    uint32_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += vg_field_present(&s->f[i], base);
    return n;
}

void vg_schema_defaults(const struct vg_schema *s, void *base)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct vg_field *f = &s->f[i];
        if (f->kind == VG_F_MAP)
            vg_schema_defaults(f->sub, (char *)base + f->off);
        else if (f->def && f->kind == VG_F_I64)
            *VG_AT(base, f->off, int64_t) = f->def;
        else if (f->def && f->kind == VG_F_I32)
            *VG_AT(base, f->off, int32_t) = (int32_t)f->def;
    }
}

static void emit_fields(const struct vg_schema *s, const void *base,
                        const struct vg_sink *k, void *ctx);

static void emit_structv(const struct vg_field *f, const void *base,
                         const struct vg_sink *k, void *ctx)
{
    uint32_t n = *VG_CAT(base, f->off_n, uint32_t);
    const char *elems = *VG_CAT(base, f->off, const char *);
    k->arr(ctx, n);
    for (uint32_t i = 0; i < n; i++) {
        const void *e = elems + (size_t)i * f->sub->size;
        k->map(ctx, vg_schema_count(f->sub, e));
        emit_fields(f->sub, e, k, ctx);
        k->map_end(ctx);
    }
    k->arr_end(ctx);
}

static void emit_value(const struct vg_field *f, const void *base,
                       const struct vg_sink *k, void *ctx)
{
    switch (f->kind) {
    case VG_F_U64: k->u64(ctx, *VG_CAT(base, f->off, uint64_t)); break;
    case VG_F_U32: k->u64(ctx, *VG_CAT(base, f->off, uint32_t)); break;
    case VG_F_I64: k->i64(ctx, *VG_CAT(base, f->off, int64_t)); break;
    case VG_F_I32: k->i64(ctx, *VG_CAT(base, f->off, int32_t)); break;
    case VG_F_BOOL: k->boolean(ctx, *VG_CAT(base, f->off, bool)); break;
    case VG_F_STR: k->str(ctx, *VG_CAT(base, f->off, const char *)); break;
    case VG_F_ENUM: k->str(ctx, vg_enum_name(f->en, *VG_CAT(base, f->off, int))); break;
    case VG_F_STRV: {
        uint32_t n = *VG_CAT(base, f->off_n, uint32_t);
        const char *const *v = *VG_CAT(base, f->off, const char *const *);
        k->arr(ctx, n);
        for (uint32_t i = 0; i < n; i++)
            k->str(ctx, v[i] ? v[i] : "");
        k->arr_end(ctx);
        break;
    }
    case VG_F_KVMAP: {
        uint32_t n = *VG_CAT(base, f->off_n, uint32_t);
        const struct vg_kv *kv = *VG_CAT(base, f->off, const struct vg_kv *);
        k->map(ctx, n);
        for (uint32_t i = 0; i < n; i++) {
            k->key(ctx, kv[i].name ? kv[i].name : "");
            k->str(ctx, kv[i].value ? kv[i].value : "");
        }
        k->map_end(ctx);
        break;
    }
    case VG_F_STRUCTV: emit_structv(f, base, k, ctx); break;
    case VG_F_MAP:
        if (!map_has_content(f, base)) {
            k->nil(ctx);
            break;
        }
        base = (const char *)base + f->off;
        k->map(ctx, vg_schema_count(f->sub, base));
        emit_fields(f->sub, base, k, ctx);
        k->map_end(ctx);
        break;
    }
}

static void emit_fields(const struct vg_schema *s, const void *base,
                        const struct vg_sink *k, void *ctx)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct vg_field *f = &s->f[i];
        if (!vg_field_present(f, base))
            continue;
        k->key(ctx, f->key);
        emit_value(f, base, k, ctx);
    }
}

void vg_schema_emit(const struct vg_record *r, uint64_t seq,
                    const struct vg_sink *k, void *ctx)
{
    vg_schema_emit_open(r, seq, 0, k, ctx);
    k->map_end(ctx);
}

void vg_schema_emit_open(const struct vg_record *r, uint64_t seq, uint32_t extra,
                         const struct vg_sink *k, void *ctx)
{
    const struct vg_schema *s = vg_schema_of(r->type);
    const void *base = &r->u;
    uint64_t ts = vg_rec_has_seq(r->type) ? *VG_CAT(base, 8, uint64_t) : 0;
    k->map(ctx, 3 + extra + (s ? vg_schema_count(s, base) : 0));
    k->key(ctx, VG_K_TYPE);
    k->str(ctx, vg_enum_name(&vg_enum_rec_type, (int)r->type));
    k->key(ctx, VG_K_SEQ);
    k->u64(ctx, seq);
    k->key(ctx, VG_K_TS);
    k->u64(ctx, ts);
    if (s)
        emit_fields(s, base, k, ctx);
}
