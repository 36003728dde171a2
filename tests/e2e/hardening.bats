#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# checksec for the installed binaries (the Makefile's hardening flags took effect: PIE, full
# RELRO, no executable stack, canaries, FORTIFY), and proof that the shim and the guard hook stay
# light: the shim is static with no libcrypto or libcap-ng in it, and the hook never loads
# libcrypto (proctor dlopens it only to hash bundles).
#
# Under SANITIZE (make asan) FORTIFY is off (it conflicts with ASan) and the shim is linked
# dynamically (the sanitizer runtimes are shared libraries); the tests expect exactly that.

bats_require_minimum_version 1.5.0
load helpers

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup_file() {
	command -v readelf >/dev/null || return 0
	DEST=$(mktemp -d /tmp/proctor-harden-XXXXXX)
	make -s -C "$TOP" install BUILD="$(basename "$PROCTOR_BUILD")" SANITIZE="${SANITIZE:-}" \
		DESTDIR="$DEST" PREFIX=/usr >/dev/null
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

@test "hardening: proctor is PIE with full RELRO, a non-executable stack, canaries and FORTIFY" {
	[ "$(elf_type "$P")" = DYN ]
	LC_ALL=C readelf -dW "$P" | grep -q '(FLAGS_1).*PIE'
	[ "$(segment GNU_RELRO "$P")" = R ]
	bind_now "$P"
	[ "$(segment GNU_STACK "$P")" = RW ]
	undefined "$P" | grep -qx __stack_chk_fail
	if [ -z "${SANITIZE:-}" ]; then
		undefined "$P" | grep -qE '^__[a-z0-9_]+_chk$'
	else
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
	# The checks can fail: proctor itself does carry capng_ symbols.
	undefined "$P" | grep -q '^capng_'
}

@test "light: proctor does not link libcrypto; the guard hook never loads it, bundle hashing does" {
	run needed "$P"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^libc\.so'
	run ! grep -q libcrypto <<<"$output"

	W=$T/ws
	mkdir -p "$W"
	M=$W/.claude/skills/.proctor-guard.json
	"$P" guard install --harness claude-code --root "$W" --denial-log "$T/denials.jsonl" >/dev/null
	for input in '{"tool_name":"Write","tool_input":{"file_path":"/etc/passwd","content":"x"}}' \
		'{"tool_name":"Bash","tool_input":{"command":"echo ok > out.txt"}}' \
		'{"tool_name":"Bash","tool_input":{"command":"git push origin main"}}'; do
		payload='{"session_id":"s","cwd":"'"$W"'","hook_event_name":"PreToolUse",'"${input#\{}"
		printf '%s' "$payload" | LD_DEBUG=libs "$P" guard hook --harness claude-code "$M" >"$T/out" 2>"$T/libs"
		# The trace works (the loader reports the libraries it maps) and names no libcrypto.
		grep -q 'libjansson' "$T/libs"
		run ! grep -q libcrypto "$T/libs"
	done
	[ "$(wc -l <"$T/denials.jsonl")" -eq 2 ] # the decisions really ran

	# The same trace sees libcrypto when proctor hashes: the check above can fail.
	mkdir -p "$T/plugin/skills/s"
	echo hi >"$T/plugin/skills/s/SKILL.md"
	LD_DEBUG=libs "$P" bundle manifest "$T/plugin" >/dev/null 2>"$T/libs"
	grep -q 'libcrypto\.so' "$T/libs"
}
