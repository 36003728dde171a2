#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench (part): the overhead of `proctor run` around an agent that is /bin/true, with one
# mock and one bundle: the whole cage set up, checked and torn down. Needs root.
set -eu
BUILD=${BUILD:-build}
B=$(cd "$BUILD" && pwd)
N=${BENCH_RUNS:-21}
if [ "$(id -u)" -ne 0 ]; then
	echo "== proctor run overhead: skipped (needs root)"
	exit 0
fi
W=$(mktemp -d /tmp/proctor-bench-run-XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 0755 "$W" # the agent's uid must be able to reach its workspace below it
mkdir -p "$W/ws" "$W/plugin/skills/s"
echo "# skill" >"$W/plugin/skills/s/SKILL.md"
echo "hello" >"$W/ws/README"
cat >"$W/f.json" <<'JSON'
{"version":1,"responses":[{"argv":["or","jobs","list"],"match_mode":"subset","stdout":"[]\n"}]}
JSON
cat >"$W/task.json" <<'JSON'
{"version":1,"id":"bench","workspace":{"from":"ws"},
 "agent":{"kind":"command","command":["/bin/true"],"plugins":[{"path":"plugin"}]},
 "mocks":[{"tool":"uip","fixture":"f.json","max_requests":10,"passthrough_argv_prefixes":[]}],
 "guard":{"harness":"claude-code"},"limits":{"timeout_s":30}}
JSON
echo "== proctor run overhead: agent /bin/true, one mock, one bundle, guard; median of $N"
i=0
while [ "$i" -lt "$N" ]; do
	s=$(date +%s%N)
	"$B/proctor" run "$W/task.json" --out "$W/run-$i" --quiet
	e=$(date +%s%N)
	echo $(((e - s) / 1000)) >>"$W/times"
	rm -rf "$W/run-$i"
	i=$((i + 1))
done
sort -n "$W/times" | awk '{v[NR]=$1} END{printf "proctor run: median %.1f ms, min %.1f ms, max %.1f ms (goal median < 100 ms)\n", v[int((NR+1)/2)]/1000, v[1]/1000, v[NR]/1000}'

echo "== 100,000 events through the worker into events.jsonl"
cat >"$W/flood.sh" <<'SH'
#!/bin/sh
exec /usr/bin/python3 -c '
import sys
w = sys.stdout.write
for i in range(100000):
    w("{\"type\":\"assistant\",\"n\":%d,\"text\":\"event %d of a steady stream\"}\n" % (i, i))
'
SH
cat >"$W/flood.json" <<'JSON'
{"version":1,"id":"flood","agent":{"kind":"command","command":["./flood.sh"]},"limits":{"timeout_s":120}}
JSON
rm -rf "$W/flood"
s=$(date +%s%N)
"$B/proctor" run "$W/flood.json" --out "$W/flood" --quiet
e=$(date +%s%N)
python3 - "$W/flood" "$(( (e - s) / 1000 ))" <<'PY'
import json, sys
run, us = sys.argv[1], int(sys.argv[2])
r = json.load(open(run + "/result.json"))
n, seqs, ok = 0, [], True
for line in open(run + "/logs/events.jsonl"):
    e = json.loads(line)
    n += 1
    ok &= json.loads(e["text"])["n"] == n - 1
agent_ms = r["durations_ms"]["agent"]
print("events %d (seq and content in order: %s), agent phase %d ms = %.0f events/s, whole run %.0f ms (goal > 100,000/s, none lost or split)"
      % (n, "yes" if ok and n == 100000 else "NO", agent_ms, n / (agent_ms / 1000.0), us / 1000.0))
PY
