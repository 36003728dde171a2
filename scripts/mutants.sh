#!/bin/sh
# SPDX-License-Identifier: MIT
# mutants.sh: mutation testing. Each mutation in tests/mutants.txt is one exact text substitution
# in one file; it is applied to a scratch copy of the tree (never to this tree), which is rebuilt,
# and the suites named for it are run. A mutation that every one of its suites passes SURVIVED:
# the tests cannot tell the broken code from the real one. Exit 0 when none survived, 1 when
# some did, 2 when a mutation is malformed (its text not found exactly once, or it does not build)
# or the unmutated tree fails a suite.
# Usage: scripts/mutants.sh [NAME...]   (default: every mutation in the list)
#        scripts/mutants.sh --check      (only check that each mutation applies, exactly once)
# Environment: MUTANTS=FILE (the list), MUTANTS_KEEP=1 (keep the scratch tree),
# MUTANTS_BASELINE=0 (skip running the suites on the unmutated tree first), MUTANTS_JOBS (make -j).
# Each mutation is built and its unit suites run first; the bats suites of those still alive run
# afterwards against that mutation's own binaries, under /tmp/proctor-e2e.lock (they share uids
# 2000/2100 with other trees): taken for each mutation's suites, or with MUTANTS_LOCK=once held
# for that whole phase (a few minutes, like one make check) when the lock is busy.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIST=${MUTANTS:-$TOP/tests/mutants.txt}
JOBS=${MUTANTS_JOBS:-2}
LOCK=/tmp/proctor-e2e.lock
SUITE_TIMEOUT=900

# The list's parser and the substitution, in one place: python3 is already a test dependency.
mut() {
	python3 - "$LIST" "$@" <<-'PY'
	import sys

	def unescape(s):
	    out, i = [], 0
	    while i < len(s):
	        c = s[i]
	        if c == "\\" and i + 1 < len(s):
	            n = s[i + 1]
	            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(n, "\\" + n))
	            i += 2
	            continue
	        out.append(c)
	        i += 1
	    return "".join(out)

	def load(path):
	    muts, cur = [], None
	    for no, raw in enumerate(open(path, encoding="utf-8"), 1):
	        line = raw.rstrip("\n")
	        if not line.strip() or line.lstrip().startswith("#"):
	            continue
	        if line.startswith("[") and line.endswith("]"):
	            cur = {"name": line[1:-1], "line": no, "suites": []}
	            muts.append(cur)
	            continue
	        key, sep, val = line.partition(": ")
	        if cur is None or not sep or key not in ("file", "from", "to", "unit", "e2e", "why"):
	            sys.exit("%s:%d: expected [name], file:, from:, to:, unit:, e2e: or why:" % (path, no))
	        if key in ("unit", "e2e"):
	            cur["suites"].append(key + " " + val)
	        else:
	            cur[key] = unescape(val) if key in ("from", "to") else val
	    names = set()
	    for m in muts:
	        for k in ("file", "from", "to"):
	            if k not in m:
	                sys.exit("%s:%d: [%s] has no %s:" % (path, m["line"], m["name"], k))
	        if not m["suites"]:
	            sys.exit("%s:%d: [%s] names no suite (unit: or e2e:)" % (path, m["line"], m["name"]))
	        if m["name"] in names:
	            sys.exit("%s:%d: [%s] listed twice" % (path, m["line"], m["name"]))
	        names.add(m["name"])
	    return {m["name"]: m for m in muts}, [m["name"] for m in muts]

	muts, order = load(sys.argv[1])
	cmd, args = sys.argv[2], sys.argv[3:]
	if cmd == "names":
	    print("\n".join(order))
	elif cmd == "check":
	    bad = 0
	    for n in order:
	        m = muts[n]
	        try:
	            k = open(args[0] + "/" + m["file"], encoding="utf-8").read().count(m["from"])
	        except OSError as e:
	            k = "unreadable: %s" % e
	        if k != 1:
	            print("[%s] %s: the original text occurs %s times, not once" % (n, m["file"], k))
	            bad = 1
	    print("mutants: %d mutations in %s, %s" % (len(order), sys.argv[1], "some do not apply" if bad else "each applies exactly once"))
	    sys.exit(bad)
	elif cmd == "suites":
	    sel = args or order
	    seen = []
	    for n in sel:
	        for s in muts[n]["suites"]:
	            if s not in seen:
	                seen.append(s)
	    print("\n".join(seen))
	else:
	    m = muts.get(args[0])
	    if m is None:
	        sys.exit("no mutation named %s" % args[0])
	    if cmd == "suites-of":
	        print("\n".join(m["suites"]))
	    elif cmd == "file":
	        print(m["file"])
	    elif cmd == "apply":
	        path = args[1] + "/" + m["file"]
	        text = open(path, encoding="utf-8").read()
	        n = text.count(m["from"])
	        if n != 1:
	            sys.exit("[%s] %s: the original text occurs %d times, not once:\n%s" % (m["name"], m["file"], n, m["from"]))
	        open(path, "w", encoding="utf-8").write(text.replace(m["from"], m["to"]))
	    else:
	        sys.exit("unknown command " + cmd)
	PY
}

# run_suite BUILD "unit test_x" | "e2e file.bats [FILTER]": 0 when the suite passed. The caller
# holds the e2e lock for an e2e suite (fd 9, closed for the suite itself).
run_suite() {
	bdir=$1 kind=${2%% *} rest=${2#* }
	log=$SCRATCH/.mutants/suite.log
	case $kind in
	unit)
		CMOCKA_MESSAGE_OUTPUT=TAP timeout $SUITE_TIMEOUT "$SCRATCH/build/tests/$rest" >"$log" 2>&1
		;;
	e2e)
		file=${rest%% *}
		filter=
		[ "$file" != "$rest" ] && filter=${rest#* }
		PROCTOR_BUILD=$bdir timeout $SUITE_TIMEOUT bats --tap ${filter:+-f "$filter"} \
			"$SCRATCH/tests/e2e/$file" >"$log" 2>&1 9>&-
		;;
	*)
		echo "unknown suite kind: $2" >"$log"
		return 1
		;;
	esac
}

lock() { flock 9; }
unlock() { flock -u 9; }

# build DIR UNIT...: the binaries and the unit tests named (test_x).
build() {
	dir=$1
	shift
	targets="all"
	for u in "$@"; do
		targets="$targets build/tests/$u"
	done
	# shellcheck disable=SC2086
	make -C "$dir" -j"$JOBS" --no-print-directory BUILD=build $targets >"$dir/.mutants/build.log" 2>&1
}

# run_suites BUILD FILE KIND: run each suite of KIND (unit, e2e) listed in FILE; print the first
# that failed.
run_suites() {
	while IFS= read -r s; do
		case $s in "$3 "*) ;; *) continue ;; esac
		if ! run_suite "$1" "$s" </dev/null; then
			echo "$s"
			return 1
		fi
	done <"$2"
	return 0
}

if [ "${1:-}" = "--check" ]; then
	mut check "$TOP" || exit 2
	exit 0
fi
names=$(mut names) || exit 2
if [ $# -gt 0 ]; then
	for n in "$@"; do
		echo "$names" | grep -qxF -- "$n" || { echo "mutants: no mutation named $n in $LIST" >&2; exit 2; }
	done
	names=$(printf '%s\n' "$@")
fi

SCRATCH=$(mktemp -d /tmp/proctor-mutants-XXXXXX) || exit 2
chmod 0755 "$SCRATCH" # the e2e suites run the binaries as other uids
if [ "${MUTANTS_KEEP:-0}" != 1 ]; then
	trap 'rm -rf "$SCRATCH"' EXIT
fi
trap 'exit 130' INT TERM
# The tree as it is now (uncommitted changes included), with its build directory so that each
# mutation recompiles one file.
tar -C "$TOP" --exclude=./.git --exclude=./build-asan -cf - . | tar -C "$SCRATCH" -xf - || exit 2
mkdir -p "$SCRATCH/.mutants"
echo "mutants: scratch tree $SCRATCH"

# shellcheck disable=SC2086
mut suites $names >"$SCRATCH/.mutants/suites" || exit 2
units=$(sed -n 's/^unit //p' "$SCRATCH/.mutants/suites" | tr '\n' ' ')
# shellcheck disable=SC2086
if ! build "$SCRATCH" $units; then
	echo "mutants: the unmutated tree does not build:" >&2
	tail -n 30 "$SCRATCH/.mutants/build.log" >&2
	exit 2
fi
exec 9>>"$LOCK" || exit 2
baseline_failed() {
	echo "mutants: the unmutated tree fails $1; fix that first:" >&2
	grep -v '^ok ' "$SCRATCH/.mutants/suite.log" | head -n 40 >&2
	exit 2
}
if [ "${MUTANTS_BASELINE:-1}" != 0 ]; then
	echo "mutants: baseline: $(wc -l <"$SCRATCH/.mutants/suites") suites on the unmutated tree"
	if ! failed=$(run_suites "$SCRATCH/build" "$SCRATCH/.mutants/suites" unit); then
		baseline_failed "$failed"
	fi
	# The bats half of the baseline runs with phase 2, under the same hold of the lock.
	cp "$SCRATCH/build/proctor" "$SCRATCH/build/proctor-shim" "$SCRATCH/.mutants/"
fi

# Phase 1, without the lock: apply, build, run the unit suites; keep the binaries of each mutation
# the unit suites did not kill and that names e2e suites. Phase 2 runs those under the lock.
total=0 killed=0 survived="" broken="" pending=""
for n in $names; do
	total=$((total + 1))
	file=$(mut file "$n") || exit 2
	cp -p "$SCRATCH/$file" "$SCRATCH/.mutants/orig"
	mkdir -p "$SCRATCH/.mutants/m/$n"
	mut suites-of "$n" >"$SCRATCH/.mutants/m/$n/suites" || exit 2
	if ! mut apply "$n" "$SCRATCH"; then
		broken="$broken $n"
		echo "BROKEN    $n: the original text is not in $file exactly once"
		continue
	fi
	units=$(sed -n 's/^unit //p' "$SCRATCH/.mutants/m/$n/suites" | tr '\n' ' ')
	# shellcheck disable=SC2086
	if ! build "$SCRATCH" $units; then
		broken="$broken $n"
		echo "BROKEN    $n: does not build"
		grep -m 5 'error' "$SCRATCH/.mutants/build.log" | sed 's/^/          /'
	elif ! by=$(run_suites "$SCRATCH/build" "$SCRATCH/.mutants/m/$n/suites" unit); then
		killed=$((killed + 1))
		echo "killed    $n (by $by)"
	elif grep -q '^e2e ' "$SCRATCH/.mutants/m/$n/suites"; then
		cp "$SCRATCH/build/proctor" "$SCRATCH/build/proctor-shim" "$SCRATCH/.mutants/m/$n/"
		pending="$pending $n"
	else
		survived="$survived $n"
		echo "SURVIVED  $n ($file: $(tr '\n' ',' <"$SCRATCH/.mutants/m/$n/suites" | sed 's/,$//') all passed)"
	fi
	# Restore with a new mtime, so that make rebuilds the file for the next mutation.
	cp "$SCRATCH/.mutants/orig" "$SCRATCH/$file"
	touch "$SCRATCH/$file"
done

# Phase 2: the bats suites, against each mutation's own binaries. MUTANTS_LOCK=each (default)
# takes the lock for each mutation's suites; MUTANTS_LOCK=once holds it for the whole phase.
[ "${MUTANTS_LOCK:-each}" = once ] && [ -n "$pending" ] && lock
if [ "${MUTANTS_BASELINE:-1}" != 0 ] && [ -n "$pending" ]; then
	[ "${MUTANTS_LOCK:-each}" = once ] || lock
	failed=$(run_suites "$SCRATCH/.mutants" "$SCRATCH/.mutants/suites" e2e) || baseline_failed "$failed"
	[ "${MUTANTS_LOCK:-each}" = once ] || unlock
fi
for n in $pending; do
	[ "${MUTANTS_LOCK:-each}" = once ] || lock
	start=$(date +%s)
	if by=$(run_suites "$SCRATCH/.mutants/m/$n" "$SCRATCH/.mutants/m/$n/suites" e2e); then
		survived="$survived $n"
		echo "SURVIVED  $n ($(mut file "$n"): $(tr '\n' ',' <"$SCRATCH/.mutants/m/$n/suites" | sed 's/,$//') all passed, $(($(date +%s) - start)) s)"
	else
		killed=$((killed + 1))
		echo "killed    $n (by $by, $(($(date +%s) - start)) s)"
	fi
	[ "${MUTANTS_LOCK:-each}" = once ] || unlock
done
unlock

nsurv=$(echo $survived | wc -w)
nbroken=$(echo $broken | wc -w)
echo "mutants: $total mutations: $killed killed, $nsurv survived, $nbroken broken"
[ -n "$survived" ] && echo "survivors:$survived"
[ -n "$broken" ] && echo "broken:$broken"
[ "$nbroken" -eq 0 ] || exit 2
[ "$nsurv" -eq 0 ] || exit 1
exit 0
