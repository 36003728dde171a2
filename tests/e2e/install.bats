#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# make install lays out the binaries and man pages; the man pages render cleanly; --help works.

load helpers

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup() { setup_tmp; }
teardown() { teardown_tmp; }

@test "install: make install puts binaries and man pages under DESTDIR/PREFIX" {
	run make -s -C "$TOP" install BUILD="$(basename "$PROCTOR_BUILD")" SANITIZE="${SANITIZE:-}" DESTDIR="$T/dest" PREFIX=/usr
	[ "$status" -eq 0 ]
	[ -x "$T/dest/usr/bin/proctor" ]
	[ -x "$T/dest/usr/bin/proctor-shim" ]
	[ -f "$T/dest/usr/share/man/man1/proctor.1" ]
	[ -f "$T/dest/usr/share/man/man1/proctor-mockd.1" ]
	[ -f "$T/dest/usr/share/man/man1/proctor-fixtures.1" ]
	for m in proctor-run proctor-report proctor-bundle proctor-drop proctor-identity proctor-reap proctor-doctor proctor-guard; do
		[ -f "$T/dest/usr/share/man/man1/$m.1" ]
	done
	run "$T/dest/usr/bin/proctor" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "proctor "* ]]
}

@test "install: man pages render without warnings and carry the required sections" {
	command -v groff >/dev/null || skip "groff not installed"
	for m in "$TOP"/doc/*.1; do
		run env LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$m"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		for s in NAME SYNOPSIS DESCRIPTION OPTIONS FILES "EXIT STATUS" EXAMPLES; do
			grep -q "^\.SH \"\?$s" "$m"
		done
	done
}

@test "install: proctor and every command answer --help" {
	run "$PROCTOR" --help
	[ "$status" -eq 0 ]
	echo "$output" | grep -q mockd
	run "$PROCTOR" mockd --help
	[ "$status" -eq 0 ]
	run "$PROCTOR" mock-client --help
	[ "$status" -eq 0 ]
	for cmd in run report drop identity reap doctor guard; do
		run "$PROCTOR" $cmd --help
		[ "$status" -eq 0 ]
		[ "${#lines[@]}" -le 40 ]
	done
	for sub in "" build verify manifest; do
		run "$PROCTOR" bundle $sub --help
		[ "$status" -eq 0 ]
	done
	for sub in "" check sort replay coverage record; do
		run "$PROCTOR" fixtures $sub --help
		[ "$status" -eq 0 ]
		[ "${#lines[@]}" -le 40 ]
	done
}
