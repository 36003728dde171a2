#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# checksec for the installed binaries (the Makefile's hardening flags took effect: PIE, full
# RELRO, no executable stack, canaries, FORTIFY), and proof that the shim and the guard hook stay
# light: the shim is static with no libcrypto or libcap-ng in it, proctor links neither, and the
# hook never loads them (proctor dlopens libcrypto only to hash bundles and libcap-ng only to drop
# privileges; a drop that cannot load it fails).
#
# Under SANITIZE (make asan) FORTIFY is off (it conflicts with ASan) and the shim is linked
# dynamically (the sanitizer runtimes are shared libraries); the tests expect exactly that.

bats_require_minimum_version 1.5.0
load helpers

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup_file() {
	command -v readelf >/dev/null || return 0
	DEST=$(mktemp -d /tmp/proctor-harden-XXXXXX)
	# Installs the binaries under test as they are (-o: never rebuilt from the sources), so
	# that make mutants, which runs this file on a mutation's binaries, checks those.
	make -s -C "$TOP" install BUILD="$PROCTOR_BUILD" SANITIZE="${SANITIZE:-}" DESTDIR="$DEST" \
		PREFIX=/usr -o "$PROCTOR_BUILD/proctor" -o "$PROCTOR_BUILD/proctor-shim" >/dev/null
	export DEST
}

teardown_file() {
	if [ -n "${DEST:-}" ]; then rm -rf "$DEST"; fi
}

setup() {
	command -v readelf >/dev/null || skip "readelf (binutils) not installed: scripts/deps.sh installs it"
	P=$DEST/usr/bin/proctor
	S=$DEST/usr/bin/proctor-shim
	[ -x "$P" ] && [ -x "$S" ]
	setup_tmp
}
teardown() { teardown_tmp; }

elf_type() { LC_ALL=C readelf -hW "$1" | sed -n 's/^ *Type: *\([A-Z_]*\).*/\1/p'; }
# segment NAME FILE: the flags of program header NAME ("RW", "RWE", "R"), empty if none. The
# flags are the columns between the memory size and the alignment ("R E" is two columns).
segment() { LC_ALL=C readelf -lW "$2" | awk -v n="$1" '$1 == n { f = ""; for (i = 7; i < NF; i++) f = f $i; print f }'; }
needed() { LC_ALL=C readelf -dW "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
bind_now() { LC_ALL=C readelf -dW "$1" | grep -qE '\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW|\(BIND_NOW\)'; }
symbols() { LC_ALL=C readelf -sW "$1" | awk '{ print $8 }' | sed 's/@.*//' | sort -u; }
undefined() { LC_ALL=C readelf -sW --dyn-syms "$1" | awk '$7 == "UND" { print $8 }' | sed 's/@.*//' | sort -u; }
# fortify_level FILE: the FORTIFY level glibc applied to the build (__USE_FORTIFY_LEVEL), from
# the string src/lib/util.c keeps in the binary.
fortify_level() { grep -a -o 'proctor-fortify-level=[0-9]*' "$1" | sed 's/.*=//' | sort -u; }
# drop_self ARGS...: proctor drop to the caller's own identity (no other uid is involved), which
# loads libcap-ng in drop_prepare(); as root it runs CMD, otherwise it fails at setgroups.
drop_self() { "$P" drop --allow-root-target --uid "$(id -u)" --gid "$(id -g)" --clear-groups "$@"; }
# loaded FILE NAME: the path of the library NAME from the LD_DEBUG=libs trace in FILE.
loaded() { sed -n 's/.*calling init: \(.*\/'"$2"'[^/ ]*\)$/\1/p' "$1" | head -n 1; }

@test "hardening: proctor is PIE with full RELRO, a non-executable stack, canaries and FORTIFY" {
	[ "$(elf_type "$P")" = DYN ]
	LC_ALL=C readelf -dW "$P" | grep -q '(FLAGS_1).*PIE'
	[ "$(segment GNU_RELRO "$P")" = R ]
	bind_now "$P"
	[ "$(segment GNU_STACK "$P")" = RW ]
	undefined "$P" | grep -qx __stack_chk_fail
	if [ -z "${SANITIZE:-}" ]; then
		undefined "$P" | grep -qE '^__[a-z0-9_]+_chk$'
		[ "$(fortify_level "$P")" = 3 ] # the _chk imports alone would not tell 3 from 2
	else
		[ "$(fortify_level "$P")" = 0 ]
		run ! grep -qE '^__[a-z0-9_]+_chk$' <(undefined "$P" | grep -v __stack_chk_fail)
	fi
}

@test "hardening: proctor-shim is static-PIE with full RELRO, a non-executable stack, canaries and FORTIFY" {
	[ "$(segment GNU_STACK "$S")" = RW ]
	[ "$(elf_type "$S")" = DYN ]
	[ "$(segment GNU_RELRO "$S")" = R ]
	bind_now "$S"
	if [ -n "${SANITIZE:-}" ]; then
		[ -n "$(segment INTERP "$S")" ] # sanitized: dynamic, like proctor
		undefined "$S" | grep -qx __stack_chk_fail
		return 0
	fi
	# Static: no loader, nothing needed, relocated by itself at startup (-static-pie; the
	# Makefile falls back to -static only on a toolchain without it, which Debian 12 has).
	[ -z "$(segment INTERP "$S")" ]
	[ -z "$(needed "$S")" ]
	LC_ALL=C readelf -dW "$S" | grep -q '(FLAGS_1).*PIE'
	# Linked in, so defined here rather than imported.
	symbols "$S" | grep -qx __stack_chk_fail
	symbols "$S" | grep -qE '^__(snprintf|vsnprintf|memcpy|fprintf|printf|read)_chk$'
	[ "$(fortify_level "$S")" = 3 ]
}

@test "hardening: every compilation unit of ours was built with the hardening flags (DWARF producer)" {
	# Ours are the C11 units (-std=c11); a sanitized link also carries gcc's C++ libasan_preinit.o.
	prod=$(LC_ALL=C readelf --debug-dump=info "$P" "$S" 2>/dev/null | sed -n 's/.*DW_AT_producer.*: \(GNU C11 .*\)/\1/p' | sort -u)
	[ -n "$prod" ] || skip "no DWARF from gcc (built without -g or with another compiler)"
	while read -r line; do
		[[ " $line " == *" -fstack-protector-strong "* ]]
		[[ " $line " == *" -fPIE "* ]]
		if [ -z "${SANITIZE:-}" ]; then
			[[ " $line " == *" -ftrivial-auto-var-init=zero "* ]]
			[[ " $line " == *" -fno-strict-overflow "* ]]
		else
			[[ " $line " == *" -ftrivial-auto-var-init=pattern "* ]]
		fi
	done <<<"$prod"
}

@test "light: proctor-shim has no libcrypto or libcap-ng, and needs no shared library at all" {
	run needed "$S"
	[ "$status" -eq 0 ]
	if [ -z "${SANITIZE:-}" ]; then
		[ -z "$output" ]
	fi
	run ! grep -E '^lib(crypto|ssl|cap-ng)' <<<"$output"
	# Static: what it contains is in its symbol table and strings, not in DT_NEEDED.
	run ! grep -E '^(EVP_|OPENSSL_|CRYPTO_|SSL_|SHA256|capng_)' <(symbols "$S")
	run ! grep -aqE 'libcrypto\.so|libcap-ng\.so|OpenSSL [0-9]' "$S"
	# The checks can fail: proctor names both libraries (to dlopen them), and the libcap-ng that a
	# drop loads exports the capng_ functions.
	grep -aq 'libcrypto\.so' "$P"
	grep -aq 'libcap-ng\.so' "$P"
	LD_DEBUG=libs drop_self -- /bin/true 2>"$T/libs" </dev/null >/dev/null || true
	lib=$(loaded "$T/libs" libcap-ng)
	[ -n "$lib" ]
	symbols "$lib" | grep -qx capng_apply
}

# hook_traced HARNESS MARKER PAYLOAD: one hook call under LD_DEBUG=libs, the trace in $T/libs;
# checks that the trace works (the loader reports libjansson) and names neither library.
hook_traced() {
	printf '%s' "$3" | LD_DEBUG=libs "$P" guard hook --harness "$1" "$2" >"$T/out" 2>"$T/libs" || true
	grep -q 'libjansson' "$T/libs"
	run ! grep -E 'libcrypto|libcap-ng' "$T/libs"
}

@test "light: proctor links neither libcrypto nor libcap-ng; the guard hook (claude-code, codex) loads neither" {
	run needed "$P"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^libc\.so'
	echo "$output" | grep -q '^libjansson'
	run ! grep -E 'libcrypto|libssl|libcap' <<<"$output"

	W=$T/ws
	mkdir -p "$W"
	W=$(cd "$W" && pwd -P)
	"$P" guard install --harness claude-code --root "$W" --denial-log "$T/denials.jsonl" >/dev/null
	M=$W/.claude/skills/.proctor-guard.json
	head='{"session_id":"s","cwd":"'"$W"'","hook_event_name":"PreToolUse",'
	# Denied, allowed, denied (network), allowed, and unparseable (denied: fails closed).
	for input in '"tool_name":"Write","tool_input":{"file_path":"/etc/passwd","content":"x"}}' \
		'"tool_name":"Bash","tool_input":{"command":"echo ok > out.txt"}}' \
		'"tool_name":"Bash","tool_input":{"command":"git push origin main"}}' \
		'"tool_name":"Read","tool_input":{"file_path":"/etc/hostname"}}' \
		'"tool_name":"Bash","tool_input":'; do
		hook_traced claude-code "$M" "$head$input"
	done
	[ "$(wc -l <"$T/denials.jsonl")" -eq 3 ] # the decisions really ran
	# An absent marker: the hook fails closed without loading anything more either.
	hook_traced claude-code "$T/absent.json" "$head"'"tool_name":"Bash","tool_input":{"command":"ls"}}'
	grep -q '"permissionDecision":"deny"' "$T/out"

	"$P" guard install --harness codex --root "$W" >/dev/null
	CM=$W/.agents/skills/.proctor-guard.json
	patch='{"command":["apply_patch","*** Begin Patch\n*** Add File: /etc/evil\n+x\n*** End Patch"]}'
	hook_traced codex "$CM" "$head"'"tool_name":"apply_patch","tool_input":'"$patch}"
	grep -q '"decision":"block"' "$T/out"
	hook_traced codex "$CM" "$head"'"tool_name":"Bash","tool_input":{"command":"git push"}}'
	grep -q '"decision":"block"' "$T/out"
	hook_traced codex "$CM" "$head"'"tool_name":"Bash","tool_input":{"command":"ls -l"}}'
	[ ! -s "$T/out" ]
}

@test "light: the same trace sees libcap-ng when proctor drops privileges, libcrypto when it hashes" {
	LD_DEBUG=libs drop_self -- /bin/true 2>"$T/libs" </dev/null >/dev/null || true
	grep -q 'libcap-ng\.so' "$T/libs"
	run ! grep -q libcrypto "$T/libs"

	mkdir -p "$T/plugin/skills/s"
	echo hi >"$T/plugin/skills/s/SKILL.md"
	LD_DEBUG=libs "$P" bundle manifest "$T/plugin" >/dev/null 2>"$T/libs"
	grep -q 'libcrypto\.so' "$T/libs"
	run ! grep -q libcap-ng "$T/libs"
}

@test "light: a drop that cannot load libcap-ng fails, and the command never runs" {
	mkdir "$T/lib"
	# Not a library at all, then a real library without the capng_ functions (jansson's).
	echo 'not an ELF object' >"$T/lib/libcap-ng.so.0"
	run -127 env LD_LIBRARY_PATH="$T/lib" "$P" drop --allow-root-target --uid "$(id -u)" --gid "$(id -g)" \
		--clear-groups -- /bin/sh -c "touch '$T/ran'"
	[[ "$output" == *"load libcap-ng.so.0"*"Can not access a needed shared library"* ]]
	[ ! -e "$T/ran" ]

	LD_DEBUG=libs "$P" guard hook --harness claude-code "$T/absent.json" </dev/null >/dev/null 2>"$T/libs" || true
	cp "$(loaded "$T/libs" libjansson)" "$T/lib/libcap-ng.so.0"
	run -127 env LD_LIBRARY_PATH="$T/lib" "$P" drop --allow-root-target --uid "$(id -u)" --gid "$(id -g)" \
		--clear-groups -- /bin/sh -c "touch '$T/ran'"
	[[ "$output" == *"load libcap-ng.so.0"*"Accessing a corrupted shared library"* ]]
	[ ! -e "$T/ran" ]
}
