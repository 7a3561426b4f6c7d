/* engine.h: what the kernel engine's BPF side (lsm/engine.bpf.c) and its
 * loader share besides the trie (lsm/trie_maps.h): the settings and the
 * record of one decision.  Plain fixed-size types only, as in probe.h. */
#ifndef VIGIL_LSM_ENGINE_H
#define VIGIL_LSM_ENGINE_H
#include "lsm/trie_maps.h"

/* bpf_d_path's buffer: PATH_MAX, the NUL included. */
#define ENGINE_PATH_BUF (VG_LSM_PATH_MAX + 1)

/* The settings array map's one entry: whose opens are decided (a cgroup
 * id; 0: nobody's) and each class's default. */
struct engine_settings {
    unsigned long long cgroup_id;
    struct vg_lsm_defaults def;
};

/* One decision, reserved in the ring buffer before the hook returns: no
 * room to record it, and the call is refused. */
struct engine_record {
    unsigned long long cgroup_id;
    unsigned int pid;
    unsigned int cls;       /* 0 read, 1 write, 2 exec (trie_maps.h) */
    unsigned int action;    /* enum vg_action */
    unsigned int rule;      /* the rule's index in the policy, VG_LSM_NONE: the default */
    int path_len;           /* bpf_d_path's result: the length with its NUL, or -errno */
    int ret;                /* what the hook returned */
    char path[ENGINE_PATH_BUF];
};
#endif
