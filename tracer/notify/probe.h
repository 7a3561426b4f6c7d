/* probe.h: what this kernel offers the notify engine, checked once at the
 * start of a run (in a short-lived thread: a listener can only be had by
 * installing a filter, and a filter is for the life of the thread). */
#ifndef VG_NOTIFY_PROBE_H
#define VG_NOTIFY_PROBE_H
#include <stdbool.h>
#include <stddef.h>

/* Not in every installed linux/seccomp.h yet (Linux 6.6). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

struct vg_notify_features {
    bool listener;      /* SECCOMP_FILTER_FLAG_NEW_LISTENER (5.0): required */
    bool addfd_send;    /* SECCOMP_IOCTL_NOTIF_ADDFD + ADDFD_FLAG_SEND (5.14): required */
    bool wait_killable; /* SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19) */
    bool sync_wakeup;   /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6) */
};

/* Fill f.  Never fails: a probe that cannot run reports nothing available. */
void vg_notify_probe(struct vg_notify_features *f);

/* "notify (sync wake-up, killable wait)" or, when a required feature is
 * missing, the reason the run falls back ("...: no ADDFD_FLAG_SEND").
 * Returns whether the notify engine can run. */
bool vg_notify_describe(const struct vg_notify_features *f, char *buf, size_t n);

/* The filter flags to install the candidate's filter with. */
unsigned long vg_notify_filter_flags(const struct vg_notify_features *f);
#endif
