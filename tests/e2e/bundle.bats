#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# proctor bundle end to end: a realistic plugin tree with decoys, tampering after staging, a
# file swapped during staging, and the agent uid's view of the result.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	setup_tmp
	P=$T/plugin
	mkdir -p "$P/skills/debug/references" "$P/skills/debug/scripts" "$P/commands" "$P/agents" \
		"$P/.claude-plugin" "$P/hooks" "$P/tests"
	echo "# Debugging skill" >"$P/skills/debug/SKILL.md"
	echo "API notes" >"$P/skills/debug/references/api.md"
	printf '#!/bin/sh\necho run\n' >"$P/skills/debug/scripts/run.sh"
	ln -s references/api.md "$P/skills/debug/api.md"
	echo "/fix: fix it" >"$P/commands/fix.md"
	echo "helper agent" >"$P/agents/helper.md"
	echo '{"name":"debug-plugin","version":"1.0.0"}' >"$P/.claude-plugin/plugin.json"
	echo '{"hooks":{}}' >"$P/hooks/hooks.json"
	echo "the answer key" >"$P/tests/expected.txt"  # decoy: top-level tests/ is not allowed
	echo "readme" >"$P/README.md"                   # decoy: not an allowed entry
	B=$T/bundle
}

teardown() {
	[ -d "${B:-}" ] && chmod -R u+w "$B" 2>/dev/null
	teardown_tmp
}

@test "bundle build: only the allowed entries, hashed, read-only, manifest beside the bundle" {
	run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "$B: 7 files, 1 symlinks, digest "
	[ ! -e "$B/tests" ] && [ ! -e "$B/README.md" ] && [ ! -e "$B.manifest.json.tmp" ]
	[ ! -e "$B/$(basename "$B").manifest.json" ] # beside, never inside
	[ "$(readlink "$B/skills/debug/api.md")" = "references/api.md" ]
	[ "$(cat "$B/skills/debug/api.md")" = "API notes" ]
	[ "$(stat -c %a "$B/commands/fix.md")" = "444" ]
	[ "$(stat -c %a "$B/skills/debug")" = "555" ]
	[ "$(stat -c %a "$B")" = "555" ]
	run json_get 'sorted(d[0]["files"]), d[0]["symlinks"], d[0]["source"] == "'"$P"'"' <<<"$(tr -d '\n' <"$B.manifest.json")"
	[ "$output" = "(['.claude-plugin/plugin.json', 'agents/helper.md', 'commands/fix.md', 'hooks/hooks.json', 'skills/debug/SKILL.md', 'skills/debug/references/api.md', 'skills/debug/scripts/run.sh'], {'skills/debug/api.md': 'references/api.md'}, True)" ]
	[ "$(tr -d '\n' <"$B.manifest.json" | json_get 'd[0]["files"]["commands/fix.md"]')" = "$(sha256sum <"$P/commands/fix.md" | cut -d' ' -f1)" ]
	run "$PROCTOR" bundle verify "$B"
	[ "$status" -eq 0 ]
	[ "$output" = "$B: clean (7 files, 1 symlinks)" ]
}

@test "bundle manifest: the same manifest without staging" {
	"$PROCTOR" bundle build "$P" "$B" >/dev/null
	run --separate-stderr "$PROCTOR" bundle manifest "$P"
	[ "$status" -eq 0 ]
	[ "$output" = "$(cat "$B.manifest.json")" ]
}

@test "bundle build: grading material inside an allowed entry fails the build, nothing is left" {
	echo "the fix is ..." >"$P/skills/debug/RESOLUTION.md"
	mkdir "$P/skills/debug/Tests" && echo t >"$P/skills/debug/Tests/t.py"
	echo x >"$P/commands/check_fix.py"
	run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "skills/debug/RESOLUTION.md: hidden grading material is not allowed (matches 'resolution.md')"
	echo "$output" | grep -qF "skills/debug/Tests: hidden grading material is not allowed (matches 'tests/')"
	echo "$output" | grep -qF "commands/check_fix.py: hidden grading material is not allowed (matches 'check_*.py')"
	[ ! -e "$B" ] && [ ! -e "$B.manifest.json" ]
}

@test "bundle build: bad symlinks are refused with the path and the rule" {
	ln -s /etc/passwd "$P/skills/debug/abs"
	ln -s ../../tests/expected.txt "$P/skills/debug/answers"
	ln -s nowhere "$P/agents/broken"
	run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "skills/debug/abs: absolute symlink (-> /etc/passwd)"
	echo "$output" | grep -qF "skills/debug/answers: symlink points outside the allowed entries (-> ../../tests/expected.txt)"
	echo "$output" | grep -qF "agents/broken: broken symlink (-> nowhere)"
	[ ! -e "$B" ]
}

@test "bundle build: a non-empty DEST is refused; an empty one is used" {
	mkdir "$B" && touch "$B/keep"
	run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "$B: exists and is not empty"
	[ -e "$B/keep" ] && [ ! -e "$B.manifest.json" ]
	rm "$B/keep"
	run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 0 ]
}

@test "bundle build: a file swapped between walk and copy is caught, and the bundle removed" {
	# PROCTOR_BUNDLE_TEST_HOOK runs after the walk, before the copy (proctor-bundle(1))
	printf '#!/bin/sh\necho tampered >>"%s/commands/fix.md"\n' "$P" >"$T/hook"
	chmod +x "$T/hook"
	PROCTOR_BUNDLE_TEST_HOOK="$T/hook" run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "commands/fix.md: changed between the walk and the copy"
	[ ! -e "$B" ] && [ ! -e "$B.manifest.json" ]
}

@test "bundle build: a file replaced by a symlink between walk and copy is caught" {
	printf '#!/bin/sh\nrm "%s/agents/helper.md"\nln -s /etc/passwd "%s/agents/helper.md"\n' "$P" "$P" >"$T/hook"
	chmod +x "$T/hook"
	mkdir "$B"
	PROCTOR_BUNDLE_TEST_HOOK="$T/hook" run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "agents/helper.md: changed between the walk and the copy"
	[ -d "$B" ] && [ -z "$(ls -A "$B")" ] # it existed empty: left empty
}

tamper() { # tamper CMD: stage, make writable, run CMD, restore modes; verify must exit 1
	"$PROCTOR" bundle build "$P" "$B" >/dev/null
	chmod -R u+w "$B"
	eval "$1"
	find "$B" -type d -exec chmod 555 {} + ; find "$B" -type f -exec chmod 444 {} +
	eval "${2:-true}"
	run "$PROCTOR" bundle verify "$B"
	[ "$status" -eq 1 ]
}

@test "bundle verify: an appended file is changed" {
	tamper 'echo more >>"$B/commands/fix.md"'
	echo "$output" | grep -qF "changed: commands/fix.md"
	echo "$output" | grep -qF "0 missing, 0 undeclared, 1 changed, 0 symlink, 0 mode"
}

@test "bundle verify: an added file is undeclared" {
	tamper 'echo new >"$B/skills/debug/extra.md"'
	echo "$output" | grep -qF "undeclared: skills/debug/extra.md"
}

@test "bundle verify: a file replaced by a symlink is changed; a removed one is missing" {
	tamper 'rm "$B/agents/helper.md"; ln -s ../commands/fix.md "$B/agents/helper.md"; rm "$B/hooks/hooks.json"'
	echo "$output" | grep -qF "changed: agents/helper.md (a file replaced by a symlink)"
	echo "$output" | grep -qF "missing: hooks/hooks.json"
}

@test "bundle verify: chmod is mode drift; a retargeted symlink is symlink drift" {
	tamper 'ln -sfn scripts/run.sh "$B/skills/debug/api.md"' 'chmod 0644 "$B/commands/fix.md"'
	echo "$output" | grep -qF "mode drift: commands/fix.md (not 0444)"
	echo "$output" | grep -qF "symlink drift: skills/debug/api.md (target changed)"
}

@test "bundle verify: an edited manifest is refused" {
	"$PROCTOR" bundle build "$P" "$B" >/dev/null
	chmod u+w "$B.manifest.json"
	sed -i 's/"commands\/fix.md": "\(.\)/"commands\/fix.md": "0/' "$B.manifest.json"
	run "$PROCTOR" bundle verify "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "the manifest's digest does not match its contents"
}

@test "bundle build: as root, uid 2000 can read every file and write none" {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	"$PROCTOR" bundle build "$P" "$B" >/dev/null
	[ "$(stat -c %u "$B/commands/fix.md")" = 0 ]
	chmod 0755 "$T"
	as2000() { setpriv --reuid 2000 --regid 2000 --clear-groups "$@"; }
	while IFS= read -r f; do
		as2000 cat "$f" >/dev/null
	done < <(find "$B" -type f)
	run as2000 sh -c "echo x >>'$B/commands/fix.md'"
	[ "$status" -ne 0 ]
	run as2000 touch "$B/skills/new"
	[ "$status" -ne 0 ]
	run as2000 rm -f "$B/agents/helper.md"
	[ "$status" -ne 0 ]
	run as2000 sh -c "echo x >>'$B.manifest.json'"
	[ "$status" -ne 0 ]
}
