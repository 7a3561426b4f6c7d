/* probe.bpf.c: the smallest BPF LSM program the kernel engine needs to
 * exist: at file_open, for tasks of one cgroup only, record the opened path
 * in a ring buffer and refuse paths under one prefix.  It proves, on a given
 * kernel, that BPF LSM programs attach, that bpf_d_path works from
 * file_open and that a refusal reaches the caller as an errno. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "lsm/probe.h"

/* vmlinux.h has no macros: the one errno the program returns. */
#define PROBE_EPERM 1
/* Ring buffer size: the kernel wants a power of two multiple of the page
 * size; 256 KiB holds 63 records, more than the probe's few opens. */
#define PROBE_RING_BYTES (256 * 1024)

char LICENSE[] SEC("license") = "GPL";

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct probe_config);
} probe_settings SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, PROBE_RING_BYTES);
} events SEC(".maps");

/* Does path (len bytes with its NUL, as bpf_d_path counts) start with the
 * rule's prefix?  A bounded loop the verifier can walk. */
static bool under_prefix(const struct probe_rule *rule, const char *path, int len)
{
    if (rule->len == 0 || rule->len > PROBE_PREFIX_MAX || (int)rule->len >= len)
        return false;
    for (unsigned int i = 0; i < PROBE_PREFIX_MAX; i++) {
        if (i >= rule->len)
            return true;
        if (path[i] != rule->prefix[i])
            return false;
    }
    return true;
}

SEC("lsm/file_open")
int BPF_PROG(probe_file_open, struct file *file)
{
    __u32 zero = 0;
    struct probe_config *cfg = bpf_map_lookup_elem(&probe_settings, &zero);
    if (!cfg || cfg->cgroup_id == 0 || bpf_get_current_cgroup_id() != cfg->cgroup_id)
        return 0;

    struct probe_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
    /* No room to record: refuse, as vigil does when it cannot log first. */
    if (!e)
        return -PROBE_EPERM;
    e->cgroup_id = cfg->cgroup_id;
    e->pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
    /* f_path is const in newer kernels' types; bpf_d_path only reads it. */
    e->path_len = bpf_d_path((struct path *)&file->f_path, e->path, sizeof(e->path));
    e->verdict = 0;
    if (e->path_len <= 0)
        e->path[0] = '\0';
    else if (under_prefix(&cfg->deny, e->path, e->path_len))
        e->verdict = -PROBE_EPERM;
    int verdict = e->verdict;
    bpf_ringbuf_submit(e, 0);
    return verdict;
}
