# SPDX-License-Identifier: MIT
# proctor: build, test, install. `make`, `make check`, `make asan`, `make bench`, `make demo`,
# `make lint-tests`, `make mutants`.

CC       ?= cc
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
DATADIR  ?= $(PREFIX)/share
DESTDIR  ?=
BUILD    ?= build
SANITIZE ?=
PKGS     := jansson libcrypto libcap-ng

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wformat-nonliteral -Wswitch-default -Wvla
BASE_CPPFLAGS := -std=c11 -D_GNU_SOURCE
ifeq ($(SANITIZE),)
  OPT      ?= -O2 -g
  HARDEN   := -D_FORTIFY_SOURCE=2
  SAN      :=
else
  OPT      ?= -O1 -g -fno-omit-frame-pointer
  HARDEN   :=
  SAN      := -fsanitize=address,undefined -fno-sanitize-recover=all
endif

# Dependencies: checked with pkg-config; as root, scripts/deps.sh installs what is missing.
DEPS_MISSING := $(shell pkg-config --exists $(PKGS) cmocka 2>/dev/null && command -v bats >/dev/null \
                  && command -v mandoc >/dev/null \
                  && command -v python3 >/dev/null || echo yes)
ifeq ($(DEPS_MISSING),yes)
  ifeq ($(shell id -u),0)
    $(info proctor: missing build dependencies; running scripts/deps.sh)
    DEPS_RUN := $(shell sh scripts/deps.sh >&2 && echo ok)
    ifneq ($(DEPS_RUN),ok)
      $(error scripts/deps.sh failed)
    endif
  else
    $(error missing build dependencies; run as root: sudo sh scripts/deps.sh)
  endif
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
# libcrypto is dlopen'ed by src/lib/hash.c on first use (headers from pkg-config, no link).
PKG_LIBS   := $(shell pkg-config --libs jansson libcap-ng) -ldl
CMOCKA_LIBS := $(shell pkg-config --libs cmocka)

ALL_CFLAGS  := $(BASE_CPPFLAGS) $(HARDEN) $(OPT) $(WARN) $(SAN) $(PKG_CFLAGS) $(CFLAGS)
ALL_LDFLAGS := $(SAN) -Wl,--as-needed $(LDFLAGS)

# The shim is exec'd on every agent call: static (no dynamic loader work) where the C library
# and jansson allow it, never under sanitizers.
JANSSON_A := $(firstword $(wildcard /usr/lib/*/libjansson.a /usr/lib/libjansson.a))
ifeq ($(SANITIZE)$(if $(JANSSON_A),,no),)
  SHIM_LDFLAGS := -static
else
  SHIM_LDFLAGS :=
endif

LIB_SRC  := $(wildcard src/lib/*.c)
MOCK_SRC := $(wildcard src/mock/*.c) $(wildcard src/bundle/*.c) $(wildcard src/priv/*.c) $(wildcard src/guard/*.c) \
            $(wildcard src/agent/*.c) \
            $(wildcard src/run/*.c)
CLI_SRC  := $(wildcard src/cli/*.c)
CORE_SRC := $(LIB_SRC) $(MOCK_SRC)
SHIM_SRC := src/shim.c src/lib/buf.c src/lib/diag.c src/lib/fd.c src/lib/json.c src/lib/path.c \
            src/lib/util.c src/mock/protocol.c src/mock/client.c src/cli/mock_client.c
UNIT_SRC := $(wildcard tests/unit/test_*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
BENCH_SRC := $(wildcard bench/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

PROCTOR := $(BUILD)/proctor
SHIM    := $(BUILD)/proctor-shim
UNITS   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
FUZZERS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
BENCHES := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

.PHONY: all check unit e2e asan bench demo install uninstall clean lint-tests mutants
# Keep every object (make would delete test objects as intermediates and print it after the
# tests, so the summary line would no longer be the last one).
.SECONDARY:
all: $(PROCTOR) $(SHIM)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(PROCTOR): $(call obj,src/proctor.c $(CLI_SRC) $(CORE_SRC))
	$(CC) $(ALL_LDFLAGS) $^ -o $@ $(PKG_LIBS) -lm

$(SHIM): $(call obj,$(SHIM_SRC))
	$(CC) $(ALL_LDFLAGS) $(SHIM_LDFLAGS) $^ -o $@ -ljansson

$(BUILD)/tests/%: $(call obj,tests/unit/%.c $(CORE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) $^ -o $@ $(PKG_LIBS) $(CMOCKA_LIBS) -lm

$(BUILD)/fuzz/%: $(call obj,tests/fuzz/%.c tests/fuzz/replay_main.c $(CORE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) $^ -o $@ $(PKG_LIBS) -lm

$(BUILD)/bench/%: $(call obj,bench/%.c $(CORE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) $^ -o $@ $(PKG_LIBS) -lm -lpthread

# The one test command (README): every suite, then one line "N passed, N failed, N skipped".
check: all $(UNITS) $(FUZZERS)
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) sh tests/run.sh

# Tests that can fail: no bats assertion that set -e ignores; every mutation in tests/mutants.txt
# still applies (make mutants runs them: MUTANTS_ONLY="name ..." for a few).
lint-tests:
	@sh scripts/lint-bats.sh
	@sh scripts/mutants.sh --check

mutants: all
	@sh scripts/mutants.sh $(MUTANTS_ONLY)

asan:
	@$(MAKE) --no-print-directory BUILD=build-asan SANITIZE=1 check

bench: all $(BENCHES)
	@BUILD=$(BUILD) sh bench/run.sh

demo: all
	@BUILD=$(BUILD) sh examples/demo.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DATADIR)/proctor/agents
	install -m 0755 $(PROCTOR) $(SHIM) $(DESTDIR)$(BINDIR)/
	install -m 0644 doc/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 agents/*.json $(DESTDIR)$(DATADIR)/proctor/agents/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/proctor $(DESTDIR)$(BINDIR)/proctor-shim
	cd doc && for m in *.1; do rm -f $(DESTDIR)$(MANDIR)/man1/$$m; done
	rm -rf $(DESTDIR)$(DATADIR)/proctor/agents

clean:
	rm -rf build build-asan

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
