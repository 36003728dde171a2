#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo: one task evaluated inside the whole cage. proctor run stages
# examples/troubleshoot/task.json (a broken project, a mocked uip CLI, a plugin with a skill, a
# private answer key), runs its scripted agent as an unprivileged uid under Landlock, tears
# everything down and prints the report; then the agent's own account of its honest work and of
# every cheating attempt, each of which must have failed.
set -eu
BUILD=${BUILD:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "$TOP/$BUILD" && pwd)

if [ "$(id -u)" -ne 0 ]; then
	echo "make demo runs 'proctor run', which needs root: it creates the agent's and mockd's" >&2
	echo "identities (uids 2000 and 2100), drops to them and tears them down. Try: sudo make demo" >&2
	exit 1
fi
W=$(mktemp -d /tmp/proctor-demo-XXXXXX)
chmod 0755 "$W" # the agent's uid must be able to reach its workspace below it
trap 'rm -rf "$W"' EXIT

set +e
"$B/proctor" run "$TOP/examples/troubleshoot/task.json" --out "$W/run"
rc=$?
set -e
echo
echo "== the agent's account (logs/events.jsonl), checked against what proctor recorded"
python3 - "$W/run" <<'PY'
import json, sys
run = sys.argv[1]
steps, attempts = [], []
for line in open(run + "/logs/events.jsonl"):
    e = json.loads(line)
    try:
        ev = json.loads(e.get("text", ""))
    except ValueError:
        continue
    if "step" in ev:
        steps.append(ev)
    elif "attempt" in ev:
        attempts.append(ev)
for s in steps:
    print("  %-4s %-16s %s" % ("ok" if s.get("ok") else "FAIL", s["step"], str(s.get("detail", ""))[:90]))
print()
held = 0
for a in attempts:
    blocked = a.get("blocked")
    held += blocked is not False
    print("  %-8s %-26s %-12s %s" % ("blocked" if blocked else ("killed" if blocked is None else "GOT IN"),
                                   a["attempt"], a.get("how", ""), str(a.get("target", ""))[:60]))
r = json.load(open(run + "/result.json"))
print("\n%d honest steps, %d cheating attempts, %d stopped; status %s, %d survivors after teardown"
      % (len(steps), len(attempts), held, r["status"], len(r["teardown"]["survivors"])))
ws = run + "/workspace/DIAGNOSIS.md"
print("DIAGNOSIS.md written by the agent: %s" % ("yes" if open(ws).read().strip() else "empty"))
PY
exit $rc
