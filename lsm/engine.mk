# engine.mk: the kernel engine's file_open program (lsm/engine.bpf.c) and
# its check (build/lsm/engine_check: a policy's trie into the maps, opens,
# each record against the user-space deciders), a fragment beside lsm.mk;
# alone: make -f lsm/engine.mk lsm-engine.  Its guest test:
# tests/guest/lsm_engine.sh.

# The top Makefile includes lsm.mk first; alone, this file brings it.
ifndef LSM_OUT
include lsm/lsm.mk
endif

# The policy's parser and compiler come from their sources: the check is
# built apart from the binary, as the probe is.
ENGINE_HOSTSRC := lsm/engine_check.c lsm/lsm_compile.c lsm/probe_cgroup.c \
                  $(wildcard util/*.c) $(wildcard policy/*.c)
ENGINE_HDRS    := lsm/engine.h lsm/trie_maps.h lsm/glob_step.h lsm/lsm_compile.h lsm/probe_cgroup.h
# util/'s SHA-256 (the policy's digest)
ENGINE_LIBS    := $(or $(shell pkg-config --libs libcrypto 2>/dev/null),-lcrypto)

.PHONY: lsm-engine
lsm-engine: $(LSM_OUT)/engine_check

$(LSM_OUT)/engine.bpf.o: lsm/engine.bpf.c lsm/engine.h lsm/trie_maps.h lsm/glob_step.h $(LSM_OUT)/vmlinux.h
	$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

$(LSM_OUT)/engine.skel.h: $(LSM_OUT)/engine.bpf.o
	$(BPFTOOL) gen skeleton $< name engine_bpf > $@.tmp
	mv $@.tmp $@

# The default policy compiled in, as the binary has it (policy/ refers to it).
$(LSM_OUT)/default_policy.c: policies/default.policy scripts/embed.sh
	@mkdir -p $(@D)
	./scripts/embed.sh vg_default_policy_text $< > $@

$(LSM_OUT)/engine_check: $(ENGINE_HOSTSRC) $(ENGINE_HDRS) $(LSM_OUT)/engine.skel.h $(LSM_OUT)/default_policy.c
	$(CC) $(CFLAGS) $(LSM_CFLAGS) $(LDFLAGS) $(ENGINE_HOSTSRC) $(LSM_OUT)/default_policy.c -o $@ $(LSM_LDLIBS) $(ENGINE_LIBS)
