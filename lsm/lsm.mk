# lsm.mk: the kernel engine's BPF LSM probe (build/lsm/probe), a make
# fragment the top Makefile includes; alone: make -f lsm/lsm.mk lsm-probe.
#
# The BPF side is compiled once for any kernel: libbpf CO-RE relocates its
# field offsets at load time, so vmlinux.h may come from any BTF with the
# types it uses (struct file, struct path).  The default is the build
# machine's own kernel; LSM_BTF=build/guest/vmlinux takes the test guest's
# (tests/guest/run-guest.sh --kernel extracts it).

BUILD       ?= build
CC          ?= cc
CFLAGS      ?= -O2 -g
BPF_CLANG   ?= clang
BPFTOOL     ?= $(firstword $(wildcard /usr/sbin/bpftool) bpftool)
LSM_BTF     ?= /sys/kernel/btf/vmlinux
LSM_OUT     := $(BUILD)/lsm
LSM_CFLAGS  := -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I. -I$(LSM_OUT) $(shell pkg-config --cflags libbpf 2>/dev/null)
LSM_LDLIBS  := $(or $(shell pkg-config --libs libbpf 2>/dev/null),-lbpf)
# -g: BTF for the program itself, which CO-RE and the skeleton need.
BPF_CFLAGS  := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -I. -I$(LSM_OUT)
LSM_HOSTSRC := lsm/lsm_probe.c lsm/probe_cgroup.c

.PHONY: lsm-probe lsm-deps lsm-clean

lsm-probe: $(LSM_OUT)/probe

# Only the missing packages are installed (the project's own script);
# none missing, apt is not run.
lsm-deps:
	@sh scripts/install-deps.sh lsm

$(LSM_OUT)/vmlinux.h: $(LSM_BTF)
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file $< format c > $@.tmp
	mv $@.tmp $@

$(LSM_OUT)/probe.bpf.o: lsm/probe.bpf.c lsm/probe.h $(LSM_OUT)/vmlinux.h
	$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

$(LSM_OUT)/probe.skel.h: $(LSM_OUT)/probe.bpf.o
	$(BPFTOOL) gen skeleton $< name probe_bpf > $@.tmp
	mv $@.tmp $@

$(LSM_OUT)/probe: $(LSM_HOSTSRC) lsm/probe.h lsm/probe_cgroup.h $(LSM_OUT)/probe.skel.h
	$(CC) $(CFLAGS) $(LSM_CFLAGS) $(LDFLAGS) $(LSM_HOSTSRC) -o $@ $(LSM_LDLIBS)

lsm-clean:
	rm -rf $(LSM_OUT)
