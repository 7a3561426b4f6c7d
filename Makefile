# vigil: one binary, one folder per layer.  Sources are picked up by
# wildcard so that adding a file to a layer needs no edit here.

CC      ?= cc
PKGS    := libseccomp libunwind-ptrace libunwind-generic msgpack ncursesw
BUILD   ?= build
SAN     ?=
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I. $(SAN)
CFLAGS  += $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libseccomp, msgpack-c and ncurses are linked statically: fewer libraries
# to map and relocate at every start, ~0.4 MB less resident per run.
# libunwind stays shared (its static archive is not position-independent).
STATIC  := libseccomp msgpack ncursesw
SHARED  := libunwind-ptrace libunwind-generic
LDLIBS  += -Wl,-Bstatic $(shell pkg-config --libs --static $(STATIC) 2>/dev/null) -Wl,-Bdynamic
LDLIBS  += $(shell pkg-config --libs $(SHARED) 2>/dev/null) -lm -lpthread
LDFLAGS += $(SAN)

# Where `make install` puts things; DESTDIR for staged installs (packages).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR  ?= $(DATADIR)/man
POLDIR  := $(DATADIR)/vigil/policies
# The installed binary finds shipped policies by name (-p python) here.
CFLAGS  += -DVG_POLICY_DIR='"$(POLDIR)"'

# Quiet by default: one line per file; V=1 shows every command.
V ?= 0
ifeq ($(V),0)
Q = @
say = @printf '  %-6s %s\n' $(1) $(2);
else
Q =
say =
endif

LAYERS  := util event policy tracer viewer cli
SRCS    := $(foreach d,$(LAYERS),$(wildcard $(d)/*.c))
OBJS    := $(SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/default_policy.o
LIBOBJS := $(filter-out $(BUILD)/cli/main.o,$(OBJS))
UNITS   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
BENCHES := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))

.PHONY: all deps test-deps demo test unit sanitize fuzz bench clean

all: vigil

deps:
	@./scripts/install-deps.sh build
test-deps:
	@./scripts/install-deps.sh test

vigil: $(BUILD)/vigil
	@cp $< $@.tmp && mv -f $@.tmp $@

$(BUILD)/vigil: $(OBJS)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c $(wildcard */*.h)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -c -o $@ $<

# The default policy is compiled into the binary so that `vigil run` works
# from any directory without an install step.
$(BUILD)/gen/default_policy.c: policies/default.policy scripts/embed.sh
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)./scripts/embed.sh vg_default_policy_text $< > $@

$(BUILD)/gen/default_policy.o: $(BUILD)/gen/default_policy.c
	$(call say,CC,$<)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIBOBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(LIBOBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

unit: $(UNITS)

demo: deps
	@$(MAKE) --no-print-directory vigil
	@./examples/demo.sh

test: test-deps
	@$(MAKE) --no-print-directory vigil unit
	@./tests/run.sh

# Same tests, with the supervisor and the unit tests built under ASan+UBSan.
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
