/* probe.c: see probe.h.  A thread of vigil's sets no_new_privs and
 * installs a filter that allows everything, both for itself alone (no
 * TSYNC: each is a thread's, and ends with it), asks for a listener,
 * tries each ioctl on it and reports one bit per feature.  A thread rather
 * than a child: no copy of vigil's address space, a fifth of the time. */
#include "tracer/notify/probe.h"

#include <errno.h>
#include <pthread.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "core/syscalls.h"

enum { BIT_LISTENER = 1, BIT_ADDFD_SEND = 2, BIT_KILLABLE = 4, BIT_SYNC = 8 };

/* A notification id no notification has: ADDFD answers ENOENT when it
 * understood the request, EINVAL when a flag is unknown. */
#define NO_SUCH_ID (~0ull)

static int install(unsigned long flags)
{
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = 1, .filter = &allow};
    return (int)syscall(VG_NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static void *probe_thread(void *arg)
{
    int *bits = arg;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return NULL;
    int fd = install(SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV);
    if (fd >= 0)
        *bits |= BIT_KILLABLE;
    else if (errno == EINVAL)
        fd = install(SECCOMP_FILTER_FLAG_NEW_LISTENER);
    if (fd < 0)
        return NULL;
    *bits |= BIT_LISTENER;
    struct seccomp_notif_addfd add = {.id = NO_SUCH_ID, .flags = SECCOMP_ADDFD_FLAG_SEND,
                                      .srcfd = (unsigned)fd};
    if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 && errno == ENOENT)
        *bits |= BIT_ADDFD_SEND;
    if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0)
        *bits |= BIT_SYNC;
    close(fd);
    return NULL;
}

void vg_notify_probe(struct vg_notify_features *f)
{
    memset(f, 0, sizeof *f);
    int bits = 0;
    pthread_t th;
    if (pthread_create(&th, NULL, probe_thread, &bits) != 0 || pthread_join(th, NULL) != 0)
        return;
    f->listener = bits & BIT_LISTENER;
    f->addfd_send = bits & BIT_ADDFD_SEND;
    f->wait_killable = bits & BIT_KILLABLE;
    f->sync_wakeup = bits & BIT_SYNC;
}

bool vg_notify_describe(const struct vg_notify_features *f, char *buf, size_t n)
{
    if (!f->listener || !f->addfd_send) {
        snprintf(buf, n, "notify engine unavailable (this kernel lacks %s): ptrace engine used",
                 !f->listener ? "SECCOMP_FILTER_FLAG_NEW_LISTENER"
                              : "SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SEND");
        return false;
    }
    snprintf(buf, n, "notify engine: listener, ADDFD_FLAG_SEND, %s, %s",
             f->wait_killable ? "WAIT_KILLABLE_RECV" : "no WAIT_KILLABLE_RECV",
             f->sync_wakeup ? "FD_SYNC_WAKE_UP" : "no FD_SYNC_WAKE_UP (kernel before 6.6)");
    return true;
}

unsigned long vg_notify_filter_flags(const struct vg_notify_features *f)
{
    return SECCOMP_FILTER_FLAG_NEW_LISTENER |
           (f->wait_killable ? SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV : 0);
}
