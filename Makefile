# SPDX-License-Identifier: MIT
# proctor: build, test, install. `make`, `make check`, `make asan`, `make coverage`, `make fuzz`,
# `make bench`, `make demo`, `make lint` (clang-format, cppcheck, clang-tidy), `make lint-tests`,
# `make mutants`, `make test-container`.

CC       ?= cc
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
DATADIR  ?= $(PREFIX)/share
DESTDIR  ?=
BUILD    ?= build
SANITIZE ?=
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
PKGS     := jansson libcrypto libcap-ng

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wformat-nonliteral -Wswitch-default -Wvla
BASE_CPPFLAGS := -std=c11 -D_GNU_SOURCE

# Hardening, on by default (tests/e2e/hardening.bats checks the installed binaries):
#   -fstack-protector-strong   canaries in every function with an array or an address-taken local
#   -fPIE / -pie               position-independent executables, so ASLR moves the code too
#   -Wl,-z,relro,-z,now        full RELRO: every symbol bound at startup, GOT read-only after it
#   -Wl,-z,noexecstack         say so explicitly: no object may ask for an executable stack
#   -ftrivial-auto-var-init=zero  a local read before it is written is 0, never stack garbage
#   -D_FORTIFY_SOURCE=3        bounds-checked libc calls (__memcpy_chk, ...), with sizes known
#                              only at run time too (gcc 12); release only: it conflicts with ASan
#   -fno-strict-overflow       signed overflow wraps (implies -fwrapv and -fwrapv-pointer), so the
#                              compiler cannot delete a length or offset check written as
#                              `a + b < a` on the grounds that overflow is undefined; release
#                              only, because with -fwrapv UBSan stops reporting signed overflow.
# The sanitized build initialises locals with a pattern instead of zero, so a use before
# initialisation changes behaviour under test rather than being hidden by a convenient 0.
HARDEN_COMMON := -fstack-protector-strong -fPIE
HARDEN_LD     := -pie -Wl,-z,relro,-z,now -Wl,-z,noexecstack
ifeq ($(SANITIZE),)
  OPT      ?= -O2 -g
  HARDEN   := $(HARDEN_COMMON) -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3 -ftrivial-auto-var-init=zero \
              -fno-strict-overflow
  SAN      :=
else ifeq ($(SANITIZE),fuzzer)
  # `make fuzz`: clang's libFuzzer instruments every object; only the harness links its main.
  OPT      ?= -O1 -g -fno-omit-frame-pointer
  HARDEN   :=
  SAN      := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
else
  OPT      ?= -O1 -g -fno-omit-frame-pointer
  HARDEN   := $(HARDEN_COMMON) -U_FORTIFY_SOURCE -ftrivial-auto-var-init=pattern
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
# libcrypto and libcap-ng are dlopen'ed on first use (src/lib/dynlib.c: by lib/hash.c to hash
# bundles, by priv/drop.c to drop privileges): their headers come from pkg-config, but nothing
# links them, so `proctor guard hook`, exec'd before every tool call, maps neither
# (tests/e2e/hardening.bats "light:"). Unit tests, fuzz harnesses and benches load them the same way.
PKG_LIBS   := $(shell pkg-config --libs jansson) -ldl
CMOCKA_LIBS := $(shell pkg-config --libs cmocka)

ALL_CFLAGS  := $(BASE_CPPFLAGS) $(HARDEN) $(OPT) $(WARN) $(SAN) $(PKG_CFLAGS) $(CFLAGS)
ALL_LDFLAGS := $(SAN) -Wl,--as-needed $(LDFLAGS)
LINK_LDFLAGS := $(ALL_LDFLAGS) $(HARDEN_LD)

# The shim is exec'd on every agent call: static (no dynamic loader work) where the C library
# and jansson allow it, never under sanitizers. Static-PIE (glibc's rcrt1.o, gcc >= 8) keeps
# ASLR and full RELRO for it: the binary relocates itself at startup, with no loader and no
# DT_NEEDED. Where the toolchain has no static-PIE, the shim is plain -static: then it is not
# PIE (ET_EXEC, fixed addresses) and has no RELRO/BIND_NOW (nothing is bound at run time), but
# keeps canaries, FORTIFY and a non-executable stack; hardening.bats expects exactly that.
JANSSON_A := $(firstword $(wildcard /usr/lib/*/libjansson.a /usr/lib/libjansson.a))
STATIC_PIE := $(shell printf 'int main(void){return 0;}' | $(CC) -x c - -static-pie -o /dev/null \
                2>/dev/null && echo yes)
ifeq ($(SANITIZE)$(if $(JANSSON_A),,no),)
  ifeq ($(STATIC_PIE),yes)
    SHIM_LDFLAGS := -static-pie -Wl,-z,relro,-z,now -Wl,-z,noexecstack
  else
    SHIM_LDFLAGS := -static -no-pie -Wl,-z,noexecstack
  endif
else
  SHIM_LDFLAGS := $(HARDEN_LD)
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
LIBFUZZERS := $(patsubst tests/fuzz/%.c,$(BUILD)/libfuzzer/%,$(FUZZ_SRC))
BENCHES := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

.PHONY: all check unit e2e asan coverage fuzz fuzz-build bench demo install uninstall clean weverything wev-clang \
	lint-tests mutants test-container
# Keep every object (make would delete test objects as intermediates and print it after the
# tests, so the summary line would no longer be the last one).
.SECONDARY:
all: $(PROCTOR) $(SHIM)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(PROCTOR): $(call obj,src/proctor.c $(CLI_SRC) $(CORE_SRC))
	$(CC) $(LINK_LDFLAGS) $^ -o $@ $(PKG_LIBS) -lm

$(SHIM): $(call obj,$(SHIM_SRC))
	$(CC) $(ALL_LDFLAGS) $(SHIM_LDFLAGS) $^ -o $@ -ljansson

$(BUILD)/tests/%: $(call obj,tests/unit/%.c $(CORE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(LINK_LDFLAGS) $^ -o $@ $(PKG_LIBS) $(CMOCKA_LIBS) -lm

$(BUILD)/fuzz/%: $(call obj,tests/fuzz/%.c tests/fuzz/replay_main.c $(CORE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(LINK_LDFLAGS) $^ -o $@ $(PKG_LIBS) -lm

# The same harnesses linked with libFuzzer's main instead of replay_main.c (make fuzz).
$(BUILD)/libfuzzer/%: $(call obj,tests/fuzz/%.c $(CORE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer $^ -o $@ $(PKG_LIBS) -lm

$(BUILD)/bench/%: $(call obj,bench/%.c $(CORE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(LINK_LDFLAGS) $^ -o $@ $(PKG_LIBS) -lm -lpthread

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

# The whole suite on a gcc --coverage build in build-cov, then line and branch coverage of src/
# per directory; fails under COVERAGE_MIN percent of lines (scripts/coverage.sh).
COVERAGE_MIN ?= 85
coverage:
	@BUILD=build-cov COVERAGE_MIN=$(COVERAGE_MIN) MAKE="$(MAKE)" sh scripts/coverage.sh

# A second compile of every source with clang -Weverything -Werror (syntax only, no link), minus
# the warnings below, each for the reason above it. Real findings are fixed in the code.
CLANG ?= clang
# Struct padding is layout information, not a defect.
WEV_OFF := -Wno-padded
# C99 and C11 allow declarations after statements; the code declares variables at first use.
WEV_OFF += -Wno-declaration-after-statement
# The comma operator is deliberate here: `return *ret_why = msg, -EINVAL;`, `p++, len--`.
WEV_OFF += -Wno-comma
# Casts that drop const hand read-only data to APIs typed without const (execve's argv, jansson's
# iteration, bsearch keys, borrowed token strings); nothing writes through them.
WEV_OFF += -Wno-cast-qual
# Contradicts -Wswitch-default (STYLE.md): every switch keeps a default for out-of-range values.
WEV_OFF += -Wno-covered-switch-default
# A switch with a default handles the other values on purpose; -Wswitch still flags the rest.
WEV_OFF += -Wno-switch-enum
# glibc defines siginfo_t's fields as macros that name themselves (si_pid -> _sifields..si_pid).
WEV_OFF += -Wno-disabled-macro-expansion
# Converting a function's integer result to double (for printing a ratio) is what is meant.
WEV_OFF += -Wno-bad-function-cast
# Sequential consistency is the safe default for atomics (bench/ only); the warning is about speed.
WEV_OFF += -Wno-atomic-implicit-seq-cst
# clang >= 16 only: flags all pointer arithmetic (a C++ hardening mode); unknown to older clang.
WEV_OFF += -Wno-unknown-warning-option -Wno-unsafe-buffer-usage
WEV_SRC := $(sort $(wildcard src/*.c src/*/*.c) $(UNIT_SRC) $(FUZZ_SRC) tests/fuzz/replay_main.c $(BENCH_SRC))

weverything: $(patsubst %.c,$(BUILD)/weverything/%.ok,$(WEV_SRC))

wev-clang:
	@command -v $(CLANG) >/dev/null || { echo "make weverything: $(CLANG) not found; as root: sh scripts/deps.sh" >&2; exit 1; }

$(BUILD)/weverything/%.ok: %.c | wev-clang
	@mkdir -p $(dir $@)
	$(CLANG) $(BASE_CPPFLAGS) -fsyntax-only -Weverything -Werror $(WEV_OFF) $(PKG_CFLAGS) \
		$(shell pkg-config --cflags cmocka) -MMD -MP -MF $(@:.ok=.d) -MT $@ $<
	@touch $@

# ---- make lint: static analysis and formatting, configured at the top of the tree ----
# clang-format --dry-run -Werror: every C file and header is formatted as .clang-format says
#   (`make format` rewrites them in place);
# cppcheck --enable=warning,performance,portability over src/, tests/, bench/ and scripts/, as
#   C11 with the build's defines; it does not read system headers, so jansson's foreach macros
#   come from scripts/cppcheck-jansson.cfg and `noreturn` is spelled out for it;
# clang-tidy with .clang-tidy (bugprone-*, cert-*, clang-analyzer-*, minus the few documented
#   there) on every .c file with the build's flags, one job per file.
# Any finding fails. A false positive is suppressed where it occurs, with the reason beside it:
# /* NOLINTNEXTLINE(check): why */ or /* cppcheck-suppress id ; why */. The jobs run LINT_JOBS at
# a time (make -jN overrides): about 75 s on a 2-core machine, nearly all of it clang-tidy.
LINT_JOBS ?= 2
LINT_C := $(sort $(wildcard src/*.c src/*/*.c tests/unit/*.c tests/fuzz/*.c bench/*.c scripts/*.c))
LINT_H := $(sort $(wildcard src/*.h src/*/*.h tests/unit/*.h tests/fuzz/*.h bench/*.h))
TIDY_FLAGS := $(BASE_CPPFLAGS) $(PKG_CFLAGS) $(shell pkg-config --cflags cmocka)
# scripts/coverage_flush.c is compiled by scripts/coverage.sh with the path of a .gcda file.
$(BUILD)/lint/scripts/coverage_flush.c.tidy: TIDY_FLAGS += -DCOVERAGE_PROBE='"/dev/null"'
CPPCHECK_FLAGS := --enable=warning,performance,portability --std=c11 --platform=unix64 \
	--library=scripts/cppcheck-jansson.cfg -D_GNU_SOURCE '-Dnoreturn=__attribute__((noreturn))' \
	-DCOVERAGE_PROBE='"/dev/null"' -Isrc --suppress=missingIncludeSystem --inline-suppr \
	--error-exitcode=1 --quiet --template='{file}:{line}:{column}: {severity}: {message} [{id}]'

.PHONY: lint lint-tools lint-run lint-format lint-cppcheck format lint-force

lint: lint-tools
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(LINT_JOBS)) -O lint-run
	@echo "lint: clean ($(words $(LINT_C) $(LINT_H)) files formatted, cppcheck and clang-tidy found nothing)"

# As root, scripts/deps.sh installs a missing tool; otherwise it prints the command to run.
lint-tools:
	@command -v clang-format >/dev/null && command -v clang-tidy >/dev/null && command -v cppcheck >/dev/null \
		|| sh scripts/deps.sh lint

lint-run: lint-format lint-cppcheck $(patsubst %,$(BUILD)/lint/%.tidy,$(LINT_C))

lint-format:
	@clang-format --dry-run -Werror $(LINT_C) $(LINT_H)

lint-cppcheck:
	@cppcheck $(CPPCHECK_FLAGS) $(LINT_C)

# Always run (lint-force): clang-tidy cannot list the headers a file read, so a stamp would go
# stale. The log is shown only when the file has findings.
$(BUILD)/lint/%.tidy: % lint-force
	@mkdir -p $(dir $@)
	@clang-tidy --quiet $< -- $(TIDY_FLAGS) >$@.log 2>&1 || \
		{ grep -v '^[0-9]* warnings\? generated\.$$' $@.log; exit 1; }

lint-force:

format:
	@clang-format -i $(LINT_C) $(LINT_H)

# Every harness under clang -fsanitize=fuzzer,address,undefined for FUZZ_SECONDS each, over a
# copy of its corpus (scripts/fuzz.sh); non-zero on any crash, the crasher kept in build-fuzz/.
fuzz:
	@sh scripts/deps.sh fuzz
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang SANITIZE=fuzzer fuzz-build
	@FUZZ_JOBS=$(FUZZ_JOBS) nice -n 10 sh scripts/fuzz.sh build-fuzz $(FUZZ_SECONDS)

fuzz-build: $(LIBFUZZERS)

bench: all $(BENCHES)
	@BUILD=$(BUILD) sh bench/run.sh

demo: all
	@BUILD=$(BUILD) sh examples/demo.sh

# proctor as the PID 1 of a real container shaped like a Kubernetes "baseline" pod, no daemon:
# a debootstrap'ed rootfs (cached in /var/cache/proctor-test), Debian's runc, the containers-common
# seccomp profile (tests/container/run.sh). As root it first installs runc, debootstrap and that
# profile (scripts/deps.sh container); it skips with the reason when not root or when runc cannot
# start a container here. The last line is "test-container: N passed, N failed".
test-container: all
	@if [ "$$(id -u)" -eq 0 ]; then sh scripts/deps.sh container >&2; fi
	@BUILD=$(BUILD) bash tests/container/run.sh

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
	rm -rf build build-asan build-cov build-fuzz

-include $(shell find $(BUILD)/obj $(BUILD)/weverything -name '*.d' 2>/dev/null)
