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

# 100,000 small events, three runs each, as plain lines (agent kind "command": each line kept as
# text) and as JSON lines (a descriptor with framing json_lines: each line kept as its object).
echo "== 100,000 events through the worker into events.jsonl; median of 3"
cat >"$W/flood.sh" <<'SH'
#!/bin/sh
exec /usr/bin/python3 -c '
import sys
w = sys.stdout.write
for i in range(100000):
    w("{\"type\":\"assistant\",\"n\":%d,\"text\":\"event %d of a steady stream\"}\n" % (i, i))
if sys.argv[1] == "json":
    w("{\"type\":\"result\"}\n")
' "$1"
SH
chmod 0755 "$W/flood.sh"
mkdir -p "$W/agents"
cat >"$W/agents/flood-json.json" <<'JSON'
{"version":1,"name":"flood-json","description":"the bench's JSON-lines flood","argv":["{task_command}"],
 "prompt":"stdin","events":{"framing":"json_lines","end":{"type":"result"}}}
JSON
for kind in lines json; do
	agent=command
	[ "$kind" = json ] && agent=flood-json
	cat >"$W/flood-$kind.json" <<JSON
{"version":1,"id":"flood","agent":{"kind":"$agent","command":["./flood.sh","$kind"]},"limits":{"timeout_s":120}}
JSON
	for i in 1 2 3; do
		rm -rf "$W/flood"
		"$B/proctor" run "$W/flood-$kind.json" --agents "$W/agents" --out "$W/flood" --quiet
		python3 - "$W/flood" "$kind" >>"$W/flood-$kind.out" <<'PY'
import json, sys
run, kind = sys.argv[1], sys.argv[2]
r = json.load(open(run + "/result.json"))
n, ok = 0, r["agent"]["events_lost"] == 0
for line in open(run + "/logs/events.jsonl"):
    e = json.loads(line)
    n += 1
    ev = e["event"] if kind == "json" else json.loads(e["text"])
    ok &= e["seq"] == n and (ev.get("n") == n - 1 or (n == 100001 and ev["type"] == "result"))
want = 100001 if kind == "json" else 100000
print("%d %d %s" % (r["durations_ms"]["agent"], n, "yes" if ok and n == want else "NO"))
PY
	done
	sort -n "$W/flood-$kind.out" | awk -v kind="$kind" '{v[NR]=$1; n=$2; if ($3 != "yes") bad=1}
		END{m=v[2]; printf "%-10s %d events, all in order with seq, none lost: %s; agent phase median %d ms = %.0f events/s (runs %d-%d ms; goal > 100,000/s)\n",
		kind == "json" ? "JSON lines" : "lines", n, bad ? "NO" : "yes", m, n / (m / 1000.0), v[1], v[3]}'
done
