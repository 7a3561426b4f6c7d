# vigil: one binary, one folder per layer.  Sources are picked up by
# wildcard so that adding a file to a layer needs no edit here.

CC      ?= cc
PKGS    := libseccomp libunwind-ptrace libunwind-generic msgpack ncursesw libarchive libsodium libcrypto
BUILD   ?= build
SAN     ?=
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I. $(SAN)
CFLAGS  += $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libseccomp, msgpack-c and ncurses are linked statically: fewer libraries
# to map and relocate at every start, ~0.4 MB less resident per run.
# libunwind stays shared (its static archive is not position-independent).
# libarchive (vigil image's tar and gzip/zstd reader) is static too, with
# only the two libraries its tar reader and our filters need: shared, it
# mapped 13 more libraries (libxml2, ICU, libstdc++...) into every run.
# libsodium (the seal's ed25519) and libcrypto (the log chain's SHA-256:
# its assembly, without EVP) are static too: only the objects used are
# linked, a few hundred kB, where shared libcrypto alone costs every start
# more than a millisecond of loading (event/sigkey.c, util/fastsha.c).
# LINK=shared links them all dynamically (distribution packages: one copy
# of each library on the system, updated with it).
LINK    ?= static
STATIC  := libseccomp msgpack ncursesw libsodium libcrypto
SHARED  := libunwind-ptrace libunwind-generic
ARCHIVE := -larchive -lz -lzstd
ifeq ($(LINK),shared)
SHARED  += $(STATIC) libarchive
STATIC  :=
ARCHIVE :=
endif
ifneq ($(STATIC),)
LDLIBS  += -Wl,-Bstatic $(shell pkg-config --libs --static $(STATIC) 2>/dev/null) $(ARCHIVE) -Wl,-Bdynamic
endif
LDLIBS  += $(shell pkg-config --libs $(SHARED) 2>/dev/null) -lm -lpthread
LDFLAGS += $(SAN)

# Where `make install` puts things; DESTDIR for staged installs (packages).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR  ?= $(DATADIR)/man
POLDIR  := $(DATADIR)/vigil/policies
SPECDIR := $(DATADIR)/vigil/specs
# Debian's python3 looks in /usr/lib/python3/dist-packages and
# /usr/local/lib/python3.X/dist-packages.
PYTHON  ?= $(firstword $(wildcard /usr/bin/python3) python3)
PYVER   := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
# The Python package's files (py.typed: it has type annotations, PEP 561).
PYMODS  := $(notdir $(wildcard python/vigil/*.py))
PYFILES := $(PYMODS) py.typed
PYDIR   ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYVER)/dist-packages)

# Quiet by default: one line per file; V=1 shows every command.
V ?= 0
ifeq ($(V),0)
Q = @
say = @printf '  %-6s %s\n' $(1) $(2);
else
Q =
say =
endif

LAYERS  := util event policy core image net launcher tracer tracer/ptrace tracer/notify tracer/py insight run viewer batch serve cli
SRCS    := $(foreach d,$(LAYERS),$(wildcard $(d)/*.c))
OBJS    := $(SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/default_policy.o
LIBOBJS := $(filter-out $(BUILD)/cli/main.o,$(OBJS))
UNITS   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
BENCHES := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))

MAN1    := vigil vigil-run vigil-check vigil-log vigil-view vigil-batch vigil-learn vigil-recheck vigil-report vigil-image vigil-verify vigil-serve vigil-submit
MAN5    := vigil-policy vigil-log
MAN7    := vigil-security vigil-running
MANS    := $(MAN1:%=$(BUILD)/man/%.1) $(MAN5:%=$(BUILD)/man/%.5) $(MAN7:%=$(BUILD)/man/%.7)

.PHONY: all deps test-deps demo test soak test-image test-hold unit sanitize fuzz bench clean man install uninstall FORCE

all: vigil man $(BUILD)/vigil.bash

deps:
	@./scripts/install-deps.sh build
test-deps:
	@./scripts/install-deps.sh test

vigil: $(BUILD)/vigil
	@cp $< $@.tmp && mv -f $@.tmp $@

$(BUILD)/vigil: $(OBJS)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Each object depends on the headers it really includes: the compiler
# writes them to a .d file beside it (-MMD), with an empty rule for each
# header (-MP) so that removing or renaming one does not stop the build.
# An object without its .d (built before this rule) is built again.
DEPFLAGS = -MMD -MP
DEPS    := $(filter-out $(BUILD)/gen/%,$(OBJS:.o=.d))

$(BUILD)/%.o: %.c $(BUILD)/%.d
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(DEPFLAGS) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The installed binary finds shipped policies by name (-p python) in
# POLDIR, so the one file that knows it is rebuilt when PREFIX changes.
$(BUILD)/gen/poldir: FORCE
	@mkdir -p $(dir $@)
	@echo '$(POLDIR)' | cmp -s - $@ || echo '$(POLDIR)' > $@
$(BUILD)/policy/find.o: CPPFLAGS += -DVG_POLICY_DIR='"$(POLDIR)"'
$(BUILD)/policy/find.o: $(BUILD)/gen/poldir
# The same for the shipped image specs (vigil image build python).
$(BUILD)/gen/specdir: FORCE
	@mkdir -p $(dir $@)
	@echo '$(SPECDIR)' | cmp -s - $@ || echo '$(SPECDIR)' > $@
$(BUILD)/image/spec_find.o: CPPFLAGS += -DVG_SPEC_DIR='"$(SPECDIR)"'
$(BUILD)/image/spec_find.o: $(BUILD)/gen/specdir

# The default policy is compiled into the binary so that `vigil run` works
# from any directory without an install step.
$(BUILD)/gen/default_policy.c: policies/default.policy scripts/embed.sh
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)./scripts/embed.sh vg_default_policy_text $< > $@

$(BUILD)/gen/default_policy.o: $(BUILD)/gen/default_policy.c
	$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(DEPS):
-include $(DEPS)

# (the test's source and the layers' objects: a test may list other files
# it depends on, below, which are not linked)
$(BUILD)/tests/%: tests/unit/%.c $(LIBOBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBOBJS) $(LDLIBS)

# The kernel engine's differential test includes its compiler's source
# (lsm/ is built apart from the binary): rebuilt when that changes.
$(BUILD)/tests/test_lsm_compile: lsm/lsm_compile.c lsm/lsm_compile.h lsm/trie_maps.h lsm/glob_step.h

$(BUILD)/bench/%: bench/%.c $(LIBOBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The bench programs are built with the unit tests so that a change to a
# struct they fill cannot leave them broken until the next make bench.
unit: $(UNITS) $(BENCHES)

# Manual pages, generated from what they describe (scripts/man.py): the
# subcommands' --help text and docs/*.md, so they cannot drift.
man: $(MANS)
$(BUILD)/man/vigil.1: $(BUILD)/vigil scripts/man.py
	@mkdir -p $(dir $@)
	$(call say,MAN,$@)$(BUILD)/vigil --help | scripts/man.py help vigil 1 \
	    "run untrusted code in a sandbox, decide and record every attempt" > $@
$(BUILD)/man/vigil-%.1: $(BUILD)/vigil scripts/man.py
	@mkdir -p $(dir $@)
	$(call say,MAN,$@)$(BUILD)/vigil $* --help | scripts/man.py help vigil-$* 1 \
	    "$$($(BUILD)/vigil --help | awk '$$1 == "$*" { $$1 = ""; sub(/^ +/, ""); print }')" > $@
$(BUILD)/man/vigil-policy.5: docs/POLICY.md scripts/man.py
	@mkdir -p $(dir $@)
	$(call say,MAN,$@)scripts/man.py doc vigil-policy 5 "the vigil policy language" < $< > $@
$(BUILD)/man/vigil-log.5: docs/FORMAT.md scripts/man.py
	@mkdir -p $(dir $@)
	$(call say,MAN,$@)scripts/man.py doc vigil-log 5 "the vigil run log format" < $< > $@
# The bash completion, made from the option rows (cli/completion.c).
$(BUILD)/vigil.bash: $(BUILD)/vigil
	$(call say,GEN,$@)$(BUILD)/vigil completion bash > $@.tmp && mv -f $@.tmp $@
$(BUILD)/man/vigil-running.7: docs/RUN.md scripts/man.py
	@mkdir -p $(dir $@)
	$(call say,MAN,$@)scripts/man.py doc vigil-running 7 "running candidates: engines, workdir, limits, network, results, batches" < $< > $@
$(BUILD)/man/vigil-security.7: docs/SECURITY.md scripts/man.py
	@mkdir -p $(dir $@)
	$(call say,MAN,$@)scripts/man.py doc vigil-security 7 "what vigil guarantees, and its limits" < $< > $@

# PREFIX=/usr DESTDIR=stage for packages.  Only the files listed here are
# installed, and uninstall removes only those, and the directories install
# had to create (listed in $(DIRLIST) as it makes them; scripts/mkdirs.sh).
DOCDIR  ?= $(DATADIR)/doc/vigil
DIRLIST := $(DATADIR)/vigil/installed-dirs
DOCS    := README.md $(wildcard docs/*.md)
COMPDIR ?= $(DATADIR)/bash-completion/completions
INSTALL_DIRS := $(BINDIR) $(POLDIR) $(SPECDIR) $(MANDIR)/man1 $(MANDIR)/man5 $(MANDIR)/man7 \
    $(PYDIR)/vigil $(DOCDIR) $(COMPDIR)
install: $(BUILD)/vigil man $(BUILD)/vigil.bash
	@mkdir -p $(BUILD) && rm -f $(BUILD)/installed-dirs.new && \
	    ./scripts/mkdirs.sh $(BUILD)/installed-dirs.new "$(DESTDIR)" $(INSTALL_DIRS)
	install -m 755 $(BUILD)/vigil $(DESTDIR)$(BINDIR)/vigil
	install -m 644 policies/*.policy $(DESTDIR)$(POLDIR)/
	install -m 644 specs/*.spec $(DESTDIR)$(SPECDIR)/
	install -m 644 $(MAN1:%=$(BUILD)/man/%.1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(MAN5:%=$(BUILD)/man/%.5) $(DESTDIR)$(MANDIR)/man5/
	install -m 644 $(MAN7:%=$(BUILD)/man/%.7) $(DESTDIR)$(MANDIR)/man7/
	install -m 644 $(PYFILES:%=python/vigil/%) $(DESTDIR)$(PYDIR)/vigil/
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	install -m 644 $(BUILD)/vigil.bash $(DESTDIR)$(COMPDIR)/vigil
	@# an earlier install's list is kept: those directories are still ours
	@touch $(BUILD)/installed-dirs.new && touch $(DESTDIR)$(DIRLIST) && cat $(BUILD)/installed-dirs.new >> $(DESTDIR)$(DIRLIST) && \
	    rm -f $(BUILD)/installed-dirs.new

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/vigil $(patsubst policies/%,$(DESTDIR)$(POLDIR)/%,$(wildcard policies/*.policy))
	rm -f $(patsubst specs/%,$(DESTDIR)$(SPECDIR)/%,$(wildcard specs/*.spec))
	rm -f $(MAN1:%=$(DESTDIR)$(MANDIR)/man1/%.1) $(MAN5:%=$(DESTDIR)$(MANDIR)/man5/%.5) \
	    $(MAN7:%=$(DESTDIR)$(MANDIR)/man7/%.7)
	rm -f $(PYFILES:%=$(DESTDIR)$(PYDIR)/vigil/%)
	rm -f $(PYMODS:%.py=$(DESTDIR)$(PYDIR)/vigil/__pycache__/%.*.pyc)
	-rmdir $(DESTDIR)$(PYDIR)/vigil/__pycache__ 2>/dev/null
	rm -f $(patsubst %,$(DESTDIR)$(DOCDIR)/%,$(notdir $(DOCS)))
	rm -f $(DESTDIR)$(COMPDIR)/vigil
	@# the directories install created, children first, each only if empty
	@if [ -f $(DESTDIR)$(DIRLIST) ]; then \
	    sort -r $(DESTDIR)$(DIRLIST) > $(BUILD)/installed-dirs.rm && rm -f $(DESTDIR)$(DIRLIST) && \
	    while read -r d; do rmdir "$(DESTDIR)$$d" 2>/dev/null || true; done < $(BUILD)/installed-dirs.rm; \
	    rm -f $(BUILD)/installed-dirs.rm; fi

demo: deps
	@$(MAKE) --no-print-directory vigil
	@./examples/demo.sh

# The two tiers (tests/conftest.py): make test, the unit and end-to-end
# mechanism tests in two workers; make soak, the long race loops, timing
# and throughput, and the long whole-system runs, one at a time.
# Each prints its slowest tests, so that a tier's time in CI is seen where
# it goes (the budgets: docs/HACKING.md, "Test tiers").
test: test-deps
	@$(MAKE) --no-print-directory vigil unit
	@./tests/run.sh --durations=15

soak: test-deps
	@$(MAKE) --no-print-directory vigil unit
	@JOBS=1 ./tests/run.sh -m soak --durations=30

# The layer-1 and layer-2 attack tests again with every vigil run on an
# image root (VIGIL_TEST_IMAGE: tests/helpers.py; the image is
# tests/image_tree.py's test root, imported once per caller), two workers.
IMAGE_TESTS := tests/test_kernel_layer.py tests/test_run_isolation.py \
    $(filter-out tests/test_attack_image.py,$(sort $(wildcard tests/test_attack_*.py))) \
    tests/test_carry_proc.py tests/test_carry_continue.py
test-image: test-deps
	@$(MAKE) --no-print-directory vigil
	@VIGIL_TEST_IMAGE=1 JOBS=2 ./tests/run.sh $(IMAGE_TESTS)

# The same attack tests with every vigil run through a prepared sandbox
# (vigil run --hold, as vigil serve's pool runs one: VIGIL_TEST_HOLD,
# tests/hold_driver.py), two workers.  Not in .ci/run.
test-hold: test-deps
	@$(MAKE) --no-print-directory vigil
	@VIGIL_TEST_HOLD=1 JOBS=2 ./tests/run.sh $(IMAGE_TESTS)

# Tests in a qemu guest booting Debian's own kernel (tests/guest/run-guest.sh),
# for what this host's kernel cannot show: the kernel engine's BPF LSM probe
# (issue 27, lsm/lsm.mk; on this host it must load or say in one line that
# BPF LSM is refused, exit 2) and its file_open program, each record held
# against the user-space deciders (lsm/engine.mk, tests/guest/lsm_engine.sh),
# and a run on cgroup v2 alone, as a stock Debian 12 host has it
# (tests/guest/cgroup_v2.sh).  Part of .ci/run: two boots, under a minute
# under qemu's software CPU.
include lsm/lsm.mk
include lsm/engine.mk
.PHONY: test-lsm
test-lsm:
	@sh scripts/install-deps.sh lsm
	@$(MAKE) --no-print-directory vigil lsm-probe lsm-engine
	@rc=0; $(BUILD)/lsm/probe || rc=$$?; [ $$rc = 0 ] || [ $$rc = 2 ]
	@tests/guest/run-guest.sh --quiet --with $(BUILD)/lsm/probe sh -c '$(BUILD)/lsm/probe && sh tests/guest/cgroup_v2.sh'
	@tests/guest/run-guest.sh --quiet --with $(abspath $(BUILD))/lsm/engine_check tests/guest/lsm_engine.sh $(BUILD)/lsm/engine_check

# make test's tests, with the supervisor and the unit tests built under ASan+UBSan.
sanitize: test-deps
	@$(MAKE) --no-print-directory BUILD=build-san SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" build-san/vigil unit
	@VIGIL=$(CURDIR)/build-san/vigil UNIT_DIR=$(CURDIR)/build-san/tests ./tests/run.sh

fuzz:
	@./scripts/install-deps.sh fuzz
	@./fuzz/run.sh $(FUZZ_SECONDS)

bench: vigil $(BENCHES)
	@./scripts/install-deps.sh bench
	@./bench/run.sh

clean:
	rm -rf build build-san build-fuzz vigil
