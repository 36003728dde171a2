#!/bin/sh
# SPDX-License-Identifier: MIT
# make coverage: build proctor with gcc --coverage into $BUILD, run the whole suite (make check)
# against it, then report line and branch coverage of src/ per directory and in total with
# gcovr, and fail when line coverage is under $COVERAGE_MIN percent.
#
# proctor runs parts of itself as other users (mockd as 2100, the worker, the shim and `proctor
# identity` as 2000): libgcov, at their exit, merges their counts into the same .gcda files
# beside the objects. Those files are created here, empty (libgcov treats an empty file as a
# new one) and mode 0666, before the suite runs, so a process of any uid can update them; the
# directories stay root's 0755. libgcov writes only from its atexit handler, so
# scripts/coverage_flush.c, linked in with --wrap, also writes before _exit() and execve().
# What stays uncounted: code run inside a Landlock domain that does not cover the build
# directory (the worker after its drop, and what the agent execs: the shim, the guard hook),
# whose writes Landlock refuses, and processes ended by SIGKILL.
set -u
BUILD=${BUILD:-build-cov}
COVERAGE_MIN=${COVERAGE_MIN:-85}
MAKE=${MAKE:-make}
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1

if ! command -v gcovr >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ]; then
		sh scripts/deps.sh >&2 || exit 1
	else
		echo "coverage: gcovr missing; run as root: sudo sh scripts/deps.sh" >&2
		exit 1
	fi
fi

# -Og, not -O0: _FORTIFY_SOURCE needs an optimising build, and -Og keeps lines and branches
# close to the source. -fprofile-update=atomic: bundle hashing runs threads, and counters they
# bump at once without it come out inconsistent (gcov then prints "branch 1 taken -1", which
# gcovr cannot parse).
mkdir -p "$BUILD/obj" || exit 1
probe=$TOP/$BUILD/obj/src/lib/util.gcda
flush=$BUILD/coverage_flush.o
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -DCOVERAGE_PROBE="\"$probe\"" -c scripts/coverage_flush.c \
	-o "$flush" || exit 1
ldflags="--coverage -Wl,--wrap=_exit,--wrap=execve $flush"
mk() { $MAKE --no-print-directory BUILD="$BUILD" OPT="-Og -g" CFLAGS="--coverage -fprofile-update=atomic" LDFLAGS="$ldflags" "$@"; }
targets=$(for f in tests/unit/test_*.c tests/fuzz/fuzz_*.c; do
	n=$(basename "$f" .c)
	case $f in tests/unit/*) echo "$BUILD/tests/$n" ;; *) echo "$BUILD/fuzz/$n" ;; esac
done)
# Relinked every time: make does not track LDFLAGS.
rm -f "$BUILD/proctor" "$BUILD/proctor-shim" "$BUILD"/tests/test_* "$BUILD"/fuzz/fuzz_*
# shellcheck disable=SC2086
mk -j2 all $targets || exit 1

# Reset the counts of any previous run, then lay out a writable .gcda for every object.
find "$BUILD/obj" -name '*.gcda' -delete
find "$BUILD/obj" -name '*.gcno' | while read -r gcno; do
	gcda=${gcno%.gcno}.gcda
	: >"$gcda" && chmod 0666 "$gcda"
done

mk check
suite=$?

# Per-file summary from gcovr, then the sum per directory of src/ (the shim on its own line).
# One gcovr process, under a deadline: gcovr 5.2 with -j waits forever when a worker fails to
# parse a file (seen in CI). A line it cannot parse is reported on stderr and skipped.
json=$BUILD/coverage.json
timeout -k 10 ${COVERAGE_GCOVR_TIMEOUT:-600} gcovr -r "$TOP" --object-directory "$BUILD/obj" \
	--filter 'src/' --gcov-ignore-parse-errors --json-summary "$json" --json-summary-pretty \
	>/dev/null || { echo "coverage: gcovr failed or timed out" >&2; exit 1; }
python3 - "$json" "$COVERAGE_MIN" <<'EOF'
import json, sys
data = json.load(open(sys.argv[1]))
minimum = float(sys.argv[2])
dirs = {}
def group(path):
    if path == "src/shim.c":
        return "shim"
    parts = path.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else path
for f in data["files"]:
    d = dirs.setdefault(group(f["filename"]), [0, 0, 0, 0])
    d[0] += f["line_covered"]; d[1] += f["line_total"]
    d[2] += f["branch_covered"]; d[3] += f["branch_total"]
def pct(a, b):
    return 100.0 * a / b if b else 100.0
print("%-16s %16s %18s" % ("coverage", "lines", "branches"))
total = [0, 0, 0, 0]
for name in sorted(dirs):
    d = dirs[name]
    total = [t + x for t, x in zip(total, d)]
    print("%-16s %6.1f%% %4d/%-5d %6.1f%% %5d/%-5d" % (name, pct(d[0], d[1]), d[0], d[1],
          pct(d[2], d[3]), d[2], d[3]))
lines = pct(total[0], total[1])
print("%-16s %6.1f%% %4d/%-5d %6.1f%% %5d/%-5d" % ("total", lines, total[0], total[1],
      pct(total[2], total[3]), total[2], total[3]))
if lines < minimum:
    print("coverage: lines %.1f%% under the %.0f%% gate (COVERAGE_MIN)" % (lines, minimum))
    sys.exit(1)
EOF
gate=$?
[ "$suite" -eq 0 ] || echo "coverage: the suite failed under the coverage build"
[ "$suite" -eq 0 ] && [ "$gate" -eq 0 ]
