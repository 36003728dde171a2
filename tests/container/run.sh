#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make test-container: proctor in a real container, no container daemon.
#
# What it proves: `proctor run --suite` as the entrypoint (PID 1) of a container configured like
# a Kubernetes Pod Security "baseline" pod runs the demo task to completion with every layer it
# can have, and refuses (exit 4) where Landlock is missing, as under gVisor.
#
#   1. rootfs.sh: a Debian bookworm minbase root filesystem with proctor's runtime libraries and
#      what the demo agent runs, cached in $PROCTOR_TEST_CACHE (default /var/cache/proctor-test)
#      under a hash of its package list (about 40 s cold, nothing warm); proctor itself is
#      installed into it afresh each run with `make uninstall install DESTDIR=... PREFIX=/usr`.
#   2. config.py: an OCI config.json mirroring the baseline pod: root with only CHOWN
#      DAC_OVERRIDE FOWNER KILL SETGID SETPCAP SETUID, noNewPrivileges (allowPrivilegeEscalation:
#      false), the containers-common default seccomp profile converted by seccomp_oci.py, own
#      pid/mount/ipc/uts/network namespaces, read-only root, /out and /suite bind-mounted.
#   3. Debian's runc runs `proctor run --suite /suite/suite.jsonl --index 0 --out /out`, where
#      the suite's one line is the demo task (examples/troubleshoot, copied). While it runs, the
#      host reads the container's init process from /proc: it must be proctor, PID 1 of the
#      container's pid namespace (NSpid ends in 1), with exactly the baseline capabilities,
#      NoNewPrivs and a seccomp filter. Then check_result.py asserts on result.json, and the host
#      checks nothing is left: no container in `runc list`, no cgroup, no process of the run's uids.
#   4. The same with the Landlock syscalls returning ENOSYS (gVisor emulated by seccomp): exit 4,
#      isolation_failed, a reason naming Landlock.
#
# cgroups: runc needs no special care in this docker container (cgroup v1 with a cgroup2 at
# /sys/fs/cgroup/unified, full capabilities): config.py sets no cgroupsPath and no
# linux.resources, so runc's cgroupfs driver makes a cgroup named after the container id in each
# hierarchy (under the caller's own where it is not the root, e.g. memory here) and removes them
# when the container exits; no --no-pivot needed. Where runc cannot start even /bin/true (a host
# that refuses cgroups, a rootless user), the test skips with runc's error.
#
# Output is TAP, then "test-container: N passed, N failed". Exit 0 when all passed or skipped
# (not root, runc unusable), 1 when any failed. CONTAINER_CAPS=A,B,... replaces the capability
# list (to watch the test fail: CONTAINER_CAPS=CHOWN,DAC_OVERRIDE,FOWNER,KILL,SETGID,SETPCAP).
# KEEP=1 keeps the work directory.
#
# Identities: the container's processes are visible in the host's pid namespace with their real
# uids, and every `proctor run` on the host kills all processes of its uids when it starts and
# ends. So the copied demo task gets ids of its own (agent 3700, mockd 3800, rpc group 3900)
# instead of the default 2000/2100/2200: host runs and bats suites (which hold
# /tmp/proctor-e2e.lock for those ids) and this test cannot sweep each other's processes, and
# the test needs no lock. Inside the container, proctor's sweeps see only its own pid namespace.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$TOP/tests/container
BUILD=${BUILD:-build}
CACHE=${PROCTOR_TEST_CACHE:-/var/cache/proctor-test}
BASELINE=CHOWN,DAC_OVERRIDE,FOWNER,KILL,SETGID,SETPCAP,SETUID
CAPS=${CONTAINER_CAPS:-$BASELINE}
SECCOMP=/usr/share/containers/seccomp.json
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
# What gVisor does to the Landlock calls: ENOSYS (38) for all three.
NO_LANDLOCK=(--errno landlock_create_ruleset=38 --errno landlock_add_rule=38
	--errno landlock_restrict_self=38)

skip() {
	echo "1..0 # SKIP $*"
	echo "test-container: skipped: $*"
	exit 0
}

[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, runc and proctor run all do)"
for t in runc debootstrap python3 flock; do
	command -v "$t" >/dev/null || skip "$t is not installed (as root: sh scripts/deps.sh container)"
done
[ -r "$SECCOMP" ] || skip "$SECCOMP is missing (as root: sh scripts/deps.sh container)"
[ -x "$TOP/$BUILD/proctor" ] || { echo "test-container: $BUILD/proctor is not built (make all)" >&2; exit 1; }

# --- TAP ------------------------------------------------------------------------------------
n=0 passed=0 failed=0
tap() { # tap ok|fail DESCRIPTION [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		passed=$((passed + 1))
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		[ -z "${3:-}" ] || printf '%s\n' "$3" | sed 's/^/#   /'
	fi
}

W=$(mktemp -d /tmp/proctor-container-XXXXXX)
chmod 0755 "$W"
ids=()
cleanup() {
	for id in "${ids[@]}"; do runc delete -f "$id" >/dev/null 2>&1 || true; done
	if [ "$failed" -gt 0 ] || [ -n "${KEEP:-}" ]; then
		echo "# work directory kept: $W"
	else
		rm -rf "$W"
	fi
}
trap cleanup EXIT

# --- the root filesystem, with proctor installed afresh ---------------------------------------
t0=$(date +%s)
rootfs=$(bash "$HERE/rootfs.sh" "$CACHE")
echo "# rootfs $rootfs ready in $(($(date +%s) - t0)) s"

if ! make -C "$TOP" --no-print-directory BUILD="$BUILD" uninstall install DESTDIR="$rootfs" PREFIX=/usr \
	>"$W/install.log" 2>&1; then
	cat "$W/install.log" >&2
	echo "test-container: make install DESTDIR=$rootfs failed" >&2
	exit 1
fi

# --- one container ----------------------------------------------------------------------------
# container NAME [config.py options] -- ARGV...: run ARGV as the container's process with runc,
# bundle and suite in $W/NAME, /out at $W/NAME/out. Sets rc (runc's exit status, which is the
# process's) and writes $W/NAME/init.status: the host's view of the container's init process
# once it is no longer `runc init`.
container() {
	local id=proctor-test-$$-$1 d=$W/$1 opts=() pid
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	mkdir -p "$d/out" "$d/suite"
	chmod 0755 "$d" "$d/out" "$d/suite"
	cp -a "$TOP/examples/troubleshoot" "$d/suite/"
	python3 - "$d/suite/troubleshoot/task.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["identity"] = {"agent_uid": 3700, "agent_gid": 3700, "mockd_uid": 3800, "rpc_gid": 3900, "slots": 1}
json.dump(t, open(sys.argv[1], "w"), indent=1)
PY
	echo '"troubleshoot/task.json"' >"$d/suite/suite.jsonl"
	python3 "$HERE/config.py" --rootfs "$rootfs" --out "$d/out" --suite "$d/suite" --caps "$CAPS" \
		--profile "$SECCOMP" "${opts[@]}" -- "$@" >"$d/config.json"
	ids+=("$id")
	# runc writes the init's host pid to --pid-file once the container exists (still `runc
	# init`, already PID 1 of the new namespace); the same process then execs ARGV[0]. The demo
	# run lasts about half a second, so the poll reads /proc without forking (bash's read).
	timeout -k 10 "$RUN_TIMEOUT" runc run --pid-file "$d/pid" --bundle "$d" "$id" </dev/null >"$d/log" 2>&1 &
	local runner=$! arg0=""
	: >"$d/init.status"
	while kill -0 "$runner" 2>/dev/null; do
		pid=""
		if [ -s "$d/pid" ]; then { read -r pid <"$d/pid"; } 2>/dev/null || true; fi
		if [ -n "$pid" ]; then
			{ IFS= read -r -d '' arg0 <"/proc/$pid/cmdline"; } 2>/dev/null || true
			if [ -n "$arg0" ] && [ "$arg0" != runc ] && [ "$arg0" != /proc/self/exe ]; then
				{
					echo "cmdline: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
					grep -E '^(NSpid|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' "/proc/$pid/status"
				} >"$d/init.status" 2>/dev/null || true
				break
			fi
		fi
		sleep 0.005
	done
	rc=0
	wait "$runner" || rc=$?
}

# Assertions shared by every case: the run's own checks, then what the host sees.
check_result() { # check_result NAME CASE
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) tap ok "$1: ${line#ok }" ;;
		*) tap fail "$1: ${line#not ok }" ;;
		esac
	done < <(python3 "$HERE/check_result.py" "$2" "$W/$1/out/troubleshoot-demo/result.json")
}

# The container's init was proctor, PID 1 of its namespace, with the baseline pod's privileges.
# Bits of CHOWN 0, DAC_OVERRIDE 1, FOWNER 3, KILL 5, SETGID 6, SETUID 7, SETPCAP 8: 0x1eb.
check_init() { # check_init NAME
	local s=$W/$1/init.status
	if grep -q '^cmdline: proctor run --suite /suite/suite.jsonl --index 0 --out /out' "$s" &&
		grep -Eq '^NSpid:.*[[:space:]]1$' "$s"; then
		tap ok "$1: proctor run is the container's PID 1 (host /proc: cmdline and NSpid)"
	else
		tap fail "$1: proctor run is the container's PID 1 (host /proc: cmdline and NSpid)" "$(cat "$s")"
	fi
	if grep -q '^CapBnd:.*00000000000001eb$' "$s" && grep -q '^CapEff:.*00000000000001eb$' "$s" &&
		grep -q '^CapAmb:.*0000000000000000$' "$s" && grep -q '^CapInh:.*0000000000000000$' "$s" &&
		grep -q '^NoNewPrivs:.*1$' "$s" && grep -q '^Seccomp:.*2$' "$s"; then
		tap ok "$1: it ran with only the baseline capabilities, NoNewPrivs and a seccomp filter"
	else
		tap fail "$1: it ran with only the baseline capabilities, NoNewPrivs and a seccomp filter" "$(cat "$s")"
	fi
}

check_exit() { # check_exit NAME EXPECTED
	if [ "$rc" -eq "$2" ]; then
		tap ok "$1: proctor run exited $2"
	else
		tap fail "$1: proctor run exited $2" "exit $rc; the container's output ends:
$(tail -n 15 "$W/$1/log")"
	fi
}

# Nothing left behind: no container in runc's list, no cgroup named after it, no host process
# of the run's uids (3700 and 3800 unless result.json says otherwise).
check_gone() { # check_gone NAME
	local id=proctor-test-$$-$1 uids left cg
	uids=$(python3 -c 'import json,sys
try: i = json.load(open(sys.argv[1]))["identity"] or {}
except Exception: i = {}
print(i.get("agent_uid") or 3700, i.get("mockd_uid") or 3800)' "$W/$1/out/troubleshoot-demo/result.json")
	if runc list -q | grep -qx "$id"; then
		tap fail "$1: no container left (runc list)" "$(runc list)"
	else
		tap ok "$1: no container left (runc list)"
	fi
	cg=$(find /sys/fs/cgroup -maxdepth 4 -type d -name "$id" 2>/dev/null || true)
	if [ -z "$cg" ]; then tap ok "$1: no cgroup left"; else tap fail "$1: no cgroup left" "$cg"; fi
	left=$(for f in /proc/[0-9]*/status; do
		awk -v u="$uids" 'BEGIN { split(u, w, " ") }
			/^Uid:/ { for (i = 2; i <= 5; i++) if ($i == w[1] || $i == w[2]) { print FILENAME; exit } }' "$f" 2>/dev/null
	done)
	if [ -z "$left" ]; then
		tap ok "$1: no host process of uids $uids"
	else
		tap fail "$1: no host process of uids $uids" "$left"
	fi
}

# --- can runc start a container here at all? ---------------------------------------------------
# The probe has no seccomp filter, so a host where runc cannot work skips, while a converted
# profile that runc refuses (or that breaks /bin/true) fails below.
container probe --no-seccomp -- /bin/true
if [ "$rc" -ne 0 ]; then
	skip "runc cannot start a container on this host: $(tail -n 3 "$W/probe/log" | tr '\n' ' ')"
fi
tap ok "proctor installed into the rootfs (make install DESTDIR=... PREFIX=/usr)"
tap ok "runc starts a container here (/bin/true, no seccomp)"
container seccomp -- /bin/true
if [ "$rc" -eq 0 ]; then
	tap ok "runc loads the converted default seccomp profile (/bin/true under it)"
else
	tap fail "runc loads the converted default seccomp profile (/bin/true under it)" "$(tail -n 3 "$W/seccomp/log")"
fi
# What the conversion must have resolved for the baseline capabilities on x86_64.
while IFS= read -r line; do
	case $line in
	"ok "*) tap ok "seccomp: ${line#ok }" ;;
	*) tap fail "seccomp: ${line#not ok }" ;;
	esac
done < <(python3 - "$W/seccomp/config.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["linux"]["seccomp"]
def action(name):
    rules = [r for r in s["syscalls"] if name in r["names"] and not r.get("args")]
    return [(r["action"], r.get("errnoRet")) for r in rules]
checks = [
    ("default action ERRNO with ENOSYS (38)", (s["defaultAction"], s.get("defaultErrnoRet")) == ("SCMP_ACT_ERRNO", 38)),
    ("x86_64 with its x86 and x32 sub-architectures", s.get("architectures") == ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"]),
    ("the Landlock calls allowed", all(action(n) == [("SCMP_ACT_ALLOW", None)] for n in
        ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"))),
    ("arch_prctl allowed (includes arches amd64)", action("arch_prctl") == [("SCMP_ACT_ALLOW", None)]),
    ("chroot, bpf, open_by_handle_at refused with EPERM (their capabilities are not held)",
        all(action(n) == [("SCMP_ACT_ERRNO", 1)] for n in ("chroot", "bpf", "open_by_handle_at"))),
    ("no rule for another architecture (s390_runtime_instr, cacheflush)",
        not action("s390_runtime_instr") and not action("cacheflush")),
]
for desc, ok in checks:
    print(("ok " if ok else "not ok ") + desc)
PY
)

ARGV=(proctor run --suite /suite/suite.jsonl --index 0 --out /out)

# --- 1. a baseline pod: the demo task completes -------------------------------------------------
container baseline -- "${ARGV[@]}"
check_exit baseline 0
check_init baseline
check_result baseline baseline
check_gone baseline

# --- 2. gVisor emulated (Landlock calls return ENOSYS): proctor refuses --------------------------
container no-landlock "${NO_LANDLOCK[@]}" -- "${ARGV[@]}"
check_exit no-landlock 4
check_result no-landlock refused
if grep -q '^proctor run: isolation_failed: .*Landlock' "$W/no-landlock/log"; then
	tap ok "no-landlock: its error message names Landlock"
else
	tap fail "no-landlock: its error message names Landlock" "$(grep '^proctor run:' "$W/no-landlock/log")"
fi
check_gone no-landlock

echo "1..$n"
echo "test-container: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
