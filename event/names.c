/* names.c: the on-disk names of the event enumerations (event.h), both
 * ways.  The tables are also used by the schema (schema.c) so that the
 * writer, the decoder and the JSON output can never disagree on a name. */
#include <string.h>

#include "event/event.h"
#include "event/schema.h"

static const char *const rec_type_names[VG_REC_NTYPES] = {
    "header", "syscall", "proc", "note", "trailer", "dns", "service",
};
static const char *const class_names[VG_CLASS_NCLASSES] = {
    "read", "write", "exec", "connect", "bind", "send", "system",
};
static const char *const decision_names[VG_DEC_NDECISIONS] = {
    "allow", "deny", "kill", "would-deny", "would-kill",
};
static const char *const proc_kind_names[VG_PROC_NKINDS] = {
    "start", "exec", "exit",
};
static const char *const svc_kind_names[VG_SVC_NKINDS] = {
    "start", "stop", "accepted", "refused", "prepared", "assigned",
    "started", "finished", "cancelled", "lost", "destroyed", "deleted",
};

const struct vg_enum vg_enum_rec_type = {rec_type_names, VG_REC_NTYPES};
const struct vg_enum vg_enum_class = {class_names, VG_CLASS_NCLASSES};
const struct vg_enum vg_enum_decision = {decision_names, VG_DEC_NDECISIONS};
const struct vg_enum vg_enum_proc_kind = {proc_kind_names, VG_PROC_NKINDS};
const struct vg_enum vg_enum_svc_kind = {svc_kind_names, VG_SVC_NKINDS};

/* Out-of-range values get a name that no reader accepts, so a bad value
 * shows up as an error instead of silently becoming another value. */
const char *vg_enum_name(const struct vg_enum *e, int v)
{
    return v >= 0 && (unsigned)v < e->n ? e->names[v] : "?";
}

int vg_enum_lookup(const struct vg_enum *e, const char *s, size_t len)
{
    for (unsigned i = 0; i < e->n; i++)
        if (strlen(e->names[i]) == len && !memcmp(e->names[i], s, len))
            return (int)i;
    return -1;
}

const char *vg_rec_type_name(enum vg_rec_type t) { return vg_enum_name(&vg_enum_rec_type, (int)t); }
const char *vg_class_name(enum vg_class c) { return vg_enum_name(&vg_enum_class, (int)c); }
const char *vg_decision_name(enum vg_decision d) { return vg_enum_name(&vg_enum_decision, (int)d); }
const char *vg_proc_kind_name(enum vg_proc_kind k) { return vg_enum_name(&vg_enum_proc_kind, (int)k); }
const char *vg_svc_kind_name(enum vg_svc_kind k) { return vg_enum_name(&vg_enum_svc_kind, (int)k); }

static int from_name(const struct vg_enum *e, const char *s)
{
    return s ? vg_enum_lookup(e, s, strlen(s)) : -1;
}

int vg_rec_type_from_name(const char *s) { return from_name(&vg_enum_rec_type, s); }
int vg_class_from_name(const char *s) { return from_name(&vg_enum_class, s); }
int vg_decision_from_name(const char *s) { return from_name(&vg_enum_decision, s); }
int vg_proc_kind_from_name(const char *s) { return from_name(&vg_enum_proc_kind, s); }
int vg_svc_kind_from_name(const char *s) { return from_name(&vg_enum_svc_kind, s); }
