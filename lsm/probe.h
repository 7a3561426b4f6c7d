/* probe.h: what the BPF side (probe.bpf.c) and the loader (probe.c) share:
 * the ring buffer record and the deny rule's layout.  Plain fixed-size
 * types only, so that the BPF target and the host agree on every offset. */
#ifndef VIGIL_LSM_PROBE_H
#define VIGIL_LSM_PROBE_H

/* PATH_MAX: bpf_d_path writes at most this much, the NUL included. */
#define PROBE_PATH_MAX 4096
/* The deny prefix is compared byte by byte in a bounded loop, which the
 * verifier walks once per iteration: keep it short. */
#define PROBE_PREFIX_MAX 128

/* One record per file_open decided for a task of the watched cgroup. */
struct probe_event {
    unsigned long long cgroup_id;
    unsigned int pid;
    int verdict;          /* 0 allowed, else the -errno returned */
    int path_len;         /* bpf_d_path's result: length with NUL, or -errno */
    char path[PROBE_PATH_MAX];
};

/* The one deny rule: refuse opens whose path starts with prefix[0..len). */
struct probe_rule {
    unsigned int len;
    char prefix[PROBE_PREFIX_MAX];
};

/* The loader's settings, one entry of an array map: which cgroup is
 * watched (0: none, the program records and denies nothing) and its rule. */
struct probe_config {
    unsigned long long cgroup_id;
    struct probe_rule deny;
};

#endif
