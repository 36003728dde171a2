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

@test "bundle build: a large file (copied by the kernel) that grows or shrinks between walk and copy is caught" {
	head -c 300000 /dev/urandom >"$P/skills/big.md"
	for change in "echo grown >>'$P/skills/big.md'" "truncate -s 200000 '$P/skills/big.md'"; do
		printf '#!/bin/sh\n%s\n' "$change" >"$T/hook"
		chmod +x "$T/hook"
		PROCTOR_BUNDLE_TEST_HOOK="$T/hook" run "$PROCTOR" bundle build "$P" "$B"
		[ "$status" -eq 1 ]
		echo "$output" | grep -qF "skills/big.md: changed between the walk and the copy"
		[ ! -e "$B" ] && [ ! -e "$B.manifest.json" ]
	done
	# Unchanged, it stages with the source's bytes and their hash (sha256sum's).
	run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 0 ]
	cmp "$P/skills/big.md" "$B/skills/big.md"
	sum=$(sha256sum "$P/skills/big.md" | cut -d' ' -f1)
	grep -qF "\"skills/big.md\": \"$sum\"" "$B.manifest.json"
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

@test "bundle build: with several copiers, a file changed in a later share is caught and nothing is left" {
	mkdir -p "$P/skills/many"
	(cd "$P/skills/many" && seq -f 'f%03g.md' 1 300 | xargs touch)
	for f in "$P"/skills/many/f*.md; do echo "$f" >"$f"; done
	printf '#!/bin/sh\necho tampered >>"%s/skills/many/f290.md"\n' "$P" >"$T/hook"
	chmod +x "$T/hook"
	PROCTOR_BUNDLE_TEST_HOOK="$T/hook" run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "skills/many/f290.md: changed between the walk and the copy"
	[ ! -e "$B" ] && [ ! -e "$B.manifest.json" ]
	run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 0 ]
	echo "$output" | grep -qF "$B: 307 files, 1 symlinks"
	run "$PROCTOR" bundle verify "$B"
	[ "$status" -eq 0 ]
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

# ---- issue 12: the agent (uid 2000) attacks the build ----------------------------------------

as2000() { setpriv --reuid 2000 --regid 2000 --clear-groups "$@"; }
need_root_2000() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
}

# A manifest in the format before "executable" existed, written independently of proctor: the
# digest is sha256 of the compact, key-sorted {"files","symlinks"} (proctor-bundle(1)).
old_manifest() { # old_manifest DIR > DIR.manifest.json
	python3 - "$1" <<'PY'
import hashlib, json, os, sys
root = sys.argv[1]
files, links = {}, {}
for d, dirs, names in os.walk(root):
    for n in dirs + names:
        p = os.path.join(d, n)
        rel = os.path.relpath(p, root)
        if os.path.islink(p):
            links[rel] = os.readlink(p)
        elif os.path.isfile(p):
            files[rel] = hashlib.sha256(open(p, "rb").read()).hexdigest()
body = {"files": files, "symlinks": links}
text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
body["digest"] = hashlib.sha256(text.encode()).hexdigest()
body["source"] = "handmade"
print(json.dumps(body, indent=2, sort_keys=True))
PY
}

# skills/e goes through skills/x/1/.../16/z, a directory while e is checked; the agent then swaps
# it for z.l, a link to skills (each link alone is inside skills). Staged, e is /etc/passwd.
# skills/p holds 3,000 empty files so that the walk, between opening skills/etc (the agent's cue)
# and reaching z, gives the agent's process time to wake up.
race_tree() { # race_tree SRC: prints the directory holding z and z.l
	local d=skills/x e=x z=..
	for i in $(seq 1 16); do d=$d/$i; e=$e/$i; z=$z/..; done
	mkdir -p "$1/$d/z" "$1/skills/etc"
	ln -s "$z" "$1/$d/z.l"
	e=$e/z; for i in $(seq 1 18); do e=$e/..; done
	echo decoy >"$1/skills/etc/passwd"
	ln -s "$e/etc/passwd" "$1/skills/e"
	mkdir "$1/skills/p" && (cd "$1/skills/p" && seq -f 'f%04g' 1 3000 | xargs touch)
	echo "$1/$d"
}

@test "bundle build: a directory swapped for a link mid-walk by uid 2000 cannot make a link out of the bundle" {
	need_root_2000
	[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3 for uid 2000"
	S=$T/race
	D=$(race_tree "$S")
	chown -R 2000:2000 "$S"
	as2000 /usr/bin/python3 "$BATS_TEST_DIRNAME/bundle_swap.py" "$S/skills/etc" "$D/z" "$D/z.l" >"$T/armed" &
	for _ in $(seq 1 100); do [ -s "$T/armed" ] && break; sleep 0.05; done
	[ "$(cat "$T/armed")" = armed ]
	run "$PROCTOR" bundle build "$S" "$B"
	wait
	[ -L "$D/z" ] # the swap happened while the walk ran
	[ "$status" -eq 1 ]
	# "escapes the bundle" when the agent won the race (z swapped before the walk reached it),
	# "broken" when it woke too late; either way the staged tree is what was checked.
	echo "$output" | grep -qE '^unsafe symlink: skills/e \((escapes the bundle|broken)\)$'
	[ ! -e "$B" ] && [ ! -e "$B.manifest.json" ]
}

@test "bundle verify: a symlink that escapes the staged tree is refused, even with a consistent manifest" {
	mkdir -p "$B"
	D=$(race_tree "$B")
	rm -r "$D/z" && mv "$D/z.l" "$D/z" # the tree the race above would have staged
	[ "$(realpath "$B/skills/e")" = /etc/passwd ]
	old_manifest "$B" >"$B.manifest.json"
	find "$B" -type d -exec chmod 555 {} + ; find "$B" -type f -exec chmod 444 {} +
	run "$PROCTOR" bundle verify "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "unsafe symlink: skills/e (escapes the bundle)"
	echo "$output" | grep -qF "0 missing, 0 undeclared, 0 changed, 1 symlink, 0 mode"
}

@test "bundle verify: a manifest from before \"executable\" still verifies" {
	mkdir -p "$B/skills/a"
	echo text >"$B/skills/a/SKILL.md"
	ln -s SKILL.md "$B/skills/a/link.md"
	old_manifest "$B" >"$B.manifest.json"
	find "$B" -type d -exec chmod 555 {} + ; find "$B" -type f -exec chmod 444 {} +
	run "$PROCTOR" bundle verify "$B"
	[ "$status" -eq 0 ]
	[ "$output" = "$B: clean (1 files, 1 symlinks)" ]
}

@test "bundle build: a sparse 15 TiB file from uid 2000 is refused before a byte of it is read" {
	need_root_2000
	chown -R 2000:2000 "$P"
	as2000 truncate -s 15T "$P/skills/debug/references/huge.md"
	run timeout 20 "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "skills/debug/references/huge.md: 16492674416640 bytes, over the file size limit of 104857600 (--max-file-size)"
	echo "$output" | grep -qF "nothing staged (over a limit"
	[ ! -e "$B" ] && [ ! -e "$B.manifest.json" ]
	run timeout 20 "$PROCTOR" bundle manifest "$P"
	[ "$status" -eq 1 ]
}

@test "bundle build: size, total, count and depth limits have flags; bad values name the flag" {
	run "$PROCTOR" bundle build "$P" "$B" --max-file-size 20
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF ".claude-plugin/plugin.json: 42 bytes, over the file size limit of 20 (--max-file-size)"
	run "$PROCTOR" bundle build "$P" "$B" --max-total-size 100
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "the files add up to more than the total size limit of 100 bytes (--max-total-size)"
	run "$PROCTOR" bundle build "$P" "$B" --max-files 4
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "more than 4 entries (files, symlinks and directories; --max-files)"
	run "$PROCTOR" bundle build "$P" "$B" --max-depth 2
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "skills/debug/references: nested deeper than 2 directories (--max-depth)"
	[ ! -e "$B" ]
	run "$PROCTOR" bundle build "$P" "$B" --max-file-size 1K --max-total-size 1M --max-files 20 --max-depth 3
	[ "$status" -eq 0 ]
	run "$PROCTOR" bundle build "$P" "$T/b2" --max-file-size 12Q
	[ "$status" -eq 2 ]
	echo "$output" | grep -qF -- "--max-file-size: '12Q' is not a size"
	run "$PROCTOR" bundle build "$P" "$T/b2" --max-depth 65
	[ "$status" -eq 2 ]
	echo "$output" | grep -qF -- "--max-depth: '65' is not a number from 1 to 64"
}

@test "bundle build: a hard link made by uid 2000 is refused" {
	need_root_2000
	chown -R 2000:2000 "$P"
	as2000 ln "$P/tests/expected.txt" "$P/skills/debug/notes.md" # the answer key, under another name
	run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "skills/debug/notes.md: hard-linked file (2 links) is not allowed"
	[ ! -e "$B" ]
}

@test "bundle: names with newlines and escape sequences from uid 2000 are escaped in every message" {
	need_root_2000
	chown -R 2000:2000 "$P"
	as2000 touch "$P/skills/debug/check_"$'\e]0;owned\a\nOK'".py"
	as2000 ln -s $'\e[2J' "$P/commands/clear"
	run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 1 ]
	[ "$output" = "$(printf '%s\n' \
		"skills/debug/check_\\x1b]0;owned\\x07\\nOK.py: hidden grading material is not allowed (matches 'check_*.py')" \
		'commands/clear: broken symlink (-> \x1b[2J)' \
		"proctor bundle build: $B: nothing staged")" ]
	rm -f "$P/commands/clear" "$P/skills/debug/check_"*
	"$PROCTOR" bundle build "$P" "$B" >/dev/null
	chmod u+w "$B/agents"
	touch "$B/agents/"$'\e[31mred\n'
	chmod u-w "$B/agents"
	run "$PROCTOR" bundle verify "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qxF 'undeclared: agents/\x1b[31mred\n'
	case $output in *$'\e'*) false ;; esac
}

@test "bundle build: executables stay executable (0555, listed in the manifest); empty directories are not staged" {
	chmod 0755 "$P/skills/debug/scripts/run.sh"
	mkdir "$P/skills/debug/empty"
	run "$PROCTOR" bundle build "$P" "$B"
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$B/skills/debug/scripts/run.sh")" = 555 ]
	[ "$(stat -c %a "$B/skills/debug/SKILL.md")" = 444 ]
	[ "$("$B/skills/debug/scripts/run.sh")" = run ]
	[ ! -e "$B/skills/debug/empty" ]
	[ "$(tr -d '\n' <"$B.manifest.json" | json_get 'd[0]["executable"]')" = "['skills/debug/scripts/run.sh']" ]
	run "$PROCTOR" bundle verify "$B"
	[ "$status" -eq 0 ]
	chmod 0444 "$B/skills/debug/scripts/run.sh"
	run "$PROCTOR" bundle verify "$B"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "mode drift: skills/debug/scripts/run.sh (not 0555)"
}
