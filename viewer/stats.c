/* stats.c: see stats.h. */
#include "viewer/stats.h"

#include <stdio.h>
#include <string.h>

#include "util/util.h"
#include "viewer/lines.h"

/* "connect tcp 93.184.216.34:443", "[::1]:53" for inet6, the path for unix. */
static void destination(const struct vg_syscall_ev *s, struct vg_buf *b)
{
    const struct vg_args *a = &s->args;
    vg_buf_printf(b, "%s %s ", vg_class_name(s->cls), a->proto ? a->proto : a->family);
    bool v6 = a->family && !strcmp(a->family, "inet6");
    vg_buf_printf(b, v6 ? "[%s]" : "%s", a->addr);
    if (a->port >= 0)
        vg_buf_printf(b, ":%d", a->port);
}

static void add_syscall(struct vw_stats *s, const struct vg_syscall_ev *e)
{
    if ((unsigned)e->cls < VG_CLASS_NCLASSES && (unsigned)e->decision < VG_DEC_NDECISIONS)
        s->counts[e->cls][e->decision]++;
    int refused = vw_refused(e->decision);
    const char *path = e->args.resolved ? e->args.resolved : e->args.path;
    if (refused && path && !e->args.addr)
        vw_strtab_add(&s->denied_paths, path, 1);
    if (e->args.addr && (e->args.proto || e->args.family)) {
        struct vg_buf b = {0};
        destination(e, &b);
        vw_strtab_add(&s->destinations, b.data, refused);
        vg_buf_free(&b);
    }
}

void vw_stats_add(struct vw_stats *s, const struct vg_record *r)
{
    if ((unsigned)r->type < VG_REC_NTYPES)
        s->types[r->type]++;
    if (r->type == VG_REC_SYSCALL) {
        add_syscall(s, &r->u.sys);
    } else if (r->type == VG_REC_PROC && r->u.proc.kind == VG_PROC_EXEC) {
        vw_strtab_add(&s->programs, r->u.proc.exe ? r->u.proc.exe : "?", 0);
    } else if (r->type == VG_REC_SERVICE && (unsigned)r->u.svc.kind < VG_SVC_NKINDS) {
        s->svc_kinds[r->u.svc.kind]++;
    } else if (r->type == VG_REC_NOTE) {
        char line[512];
        snprintf(line, sizeof line, "%s: %s", r->u.note.what ? r->u.note.what : "note",
                 r->u.note.detail ? r->u.note.detail : "");
        vw_strtab_add(&s->notes, line, 0);
    }
}

void vw_stats_free(struct vw_stats *s)
{
    vw_strtab_free(&s->denied_paths);
    vw_strtab_free(&s->destinations);
    vw_strtab_free(&s->programs);
    vw_strtab_free(&s->notes);
    memset(s, 0, sizeof *s);
}
