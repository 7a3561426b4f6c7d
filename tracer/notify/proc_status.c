/* proc_status.c: what the notify engine reads of a caller in its /proc status
 * (as vigil, in the host's /proc): its umask, which vigil's crew threads,
 * with a umask of 0 of their own, apply to each mode they create; and
 * whether a signal it catches waits for it (a blocked call vigil carries
 * out then ends as the kernel's own would). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/notify/notify_int.h"

/* The text after key ("\nUmask:") in /proc/TID/status, read into buf,
 * or NULL. */
static const char *status_field(pid_t tid, const char *key, char *buf, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd < 0 ? -1 : read(fd, buf, n - 1);
    if (fd >= 0)
        close(fd);
    if (got <= 0)
        return NULL;
    buf[got] = 0;
    const char *p = strstr(buf, key);
    return p ? p + strlen(key) : NULL;
}

int vg_nt_caller_umask(pid_t tid, mode_t *mask)
{
    char buf[VG_NT_STATUS_MAX];
    const char *u = status_field(tid, "\nUmask:", buf, sizeof buf);
    if (!u)
        return -1;
    *mask = (mode_t)strtoul(u, NULL, 8);
    return 0;
}

/* The hex mask after key in the status text, 0 when absent. */
static uint64_t mask_of(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtoull(p + strlen(key), NULL, 16) : 0;
}

/* The decimal number after key in the status text, -1 when absent. */
static long count_of(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

bool vg_nt_caller_signalled(pid_t tid)
{
    char buf[VG_NT_STATUS_MAX];
    /* "Name:" opens the text; the masks follow, each after a newline */
    const char *text = status_field(tid, "Name:", buf, sizeof buf);
    if (!text)
        return false; /* gone: its call ends without us */
    /* A signal for the whole process goes to its main thread when that
     * thread does not block it (the kernel's complete_signal tries it
     * first; a thread waiting here is not running and has nothing else
     * pending, else SigPnd would say so), and otherwise to another: it
     * counts for the caller when the caller is the process's only thread
     * or its main one. */
    uint64_t pending = mask_of(text, "\nSigPnd:");
    if (count_of(text, "\nThreads:") == 1 || count_of(text, "\nTgid:") == (long)tid)
        pending |= mask_of(text, "\nShdPnd:");
    return (pending & ~mask_of(text, "\nSigBlk:") & mask_of(text, "\nSigCgt:")) != 0;
}
