#!/bin/bash
# SPDX-License-Identifier: MIT
# make bench (part): a suite of BENCH_SUITE_TASKS (100) trivial tasks (agent /bin/true, one mock,
# identity.slots 2) through `proctor run --suite` and GNU parallel -j BENCH_SUITE_JOBS (2), as
# issue 14 asks: tasks per minute, and where each job's wall time went. Per job, parallel's
# --joblog JobRuntime is the whole `proctor run` process (exec to exit); result.json's
# durations_ms.total is the run inside it (validate to result) and durations_ms.agent its agent
# phase (the worker running the agent's turns). Summed over the jobs:
#   agent share   = sum(agent) / sum(JobRuntime)
#   proctor share = 1 - agent share, split into the run's own phases, sum(total - agent), and
#                   the rest of the process, sum(JobRuntime - total): exec, loading the suite,
#                   the task lock and OUT/<id>/ checks, writing result.json, exit.
# Slot use is sum(JobRuntime) / (jobs x wall): how busy parallel kept its job slots.
# Needs root and GNU parallel (scripts/deps.sh); holds /tmp/proctor-e2e.lock (uids 2000-2001).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-build}
B=$(cd "$BUILD" && pwd)
N=${BENCH_SUITE_TASKS:-100}
J=${BENCH_SUITE_JOBS:-2}
. "$HERE/../tests/e2e/real/lib.bash"

echo "== a suite of $N trivial tasks through GNU parallel -j $J (agent /bin/true, one mock)"
if [ "$(id -u)" -ne 0 ]; then
	echo "skipped: needs root"
	exit 0
fi
if ! parallel --version 2>/dev/null | grep -q '^GNU parallel'; then
	echo "skipped: GNU parallel is not installed (scripts/deps.sh installs it)"
	exit 0
fi
W=$(mktemp -d /tmp/proctor-bench-suite-XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 0755 "$W" # the agent's uid must be able to reach its workspace below it
mkdir -p "$W/s/ws" "$W/s/files"
echo "hello" >"$W/s/ws/README"
cat >"$W/s/files/f.json" <<'JSON'
{"version":1,"responses":[{"argv":["or","jobs","list"],"match_mode":"subset","stdout":"[]\n"}]}
JSON
for i in $(seq 0 $((N - 1))); do
	printf '{"version":1,"id":"b%04d","workspace":{"from":"ws"},"agent":{"kind":"command","command":["/bin/true"]},"mocks":[{"tool":"uip","fixture":"files/f.json","max_requests":10,"passthrough_argv_prefixes":[]}],"limits":{"timeout_s":60},"identity":{"slots":%d}}\n' \
		"$i" "$J" >"$W/s/b$(printf %04d "$i").json"
done
real_lock
s=$(date +%s%N)
rc=0
parallel -j "$J" --joblog "$W/joblog" "$B/proctor" run --quiet --suite "$W/s" --index {} --out "$W/out" \
	::: $(seq 0 $((N - 1))) || rc=$?
e=$(date +%s%N)
python3 - "$W/out" "$W/joblog" "$(((e - s) / 1000000))" "$N" "$J" "$rc" <<'PY'
import json, os, sys
out, joblog, wall_ms, n, jobs, rc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
job_ms = 0.0
for line in open(joblog).read().splitlines()[1:]:
    job_ms += float(line.split("\t")[3]) * 1000
total = agent = completed = 0
phases = {}
for d in os.listdir(out):
    if d.startswith("."):
        continue
    r = json.load(open(os.path.join(out, d, "result.json")))
    completed += r["status"] == "completed"
    total += r["durations_ms"]["total"]
    agent += r["durations_ms"]["agent"]
    for k, v in r["durations_ms"].items():
        phases[k] = phases.get(k, 0) + v
print("%d tasks in %.1f s wall = %.0f tasks/min (%d completed, parallel exit %d)"
      % (n, wall_ms / 1000, n * 60000.0 / wall_ms, completed, rc))
print("per job: proctor run process %.1f ms, run (result total) %.1f ms, agent phase %.1f ms (means)"
      % (job_ms / n, total / n, agent / n))
print("run phases (means, ms): " + ", ".join("%s %.1f" % (k, v / n) for k, v in phases.items() if k != "total"))
print("share of job wall time: agent %.1f%%, proctor %.1f%% (run phases %.1f%%, process start/suite/lock/result %.1f%%); slot use %.0f%%"
      % (100 * agent / job_ms, 100 * (job_ms - agent) / job_ms, 100 * (total - agent) / job_ms,
         100 * (job_ms - total) / job_ms, 100 * job_ms / (jobs * wall_ms)))
PY
