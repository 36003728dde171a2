#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Evaluate a Python expression over one run of real_agents.bats and exit 0 when it is true.

usage: q.py T EXPR [--print]

Names in EXPR: r (RUN/result.json), ev (the agents' events: the "event" of each line of
RUN/logs/events.jsonl; a line that is not such an object is an error), evt(n) (those of turn n),
results() (every tool_result block Claude Code reported, as dicts), calls (mockd's journal),
log (the model server's request log), denials (RUN/logs/guard-denials.jsonl), outputs() (every
function_call_output and custom_tool_call_output (apply_patch) Codex sent the model, as strings). With --print, print EXPR's value.
On a false value, print EXPR and a short view of the run to stderr (bats shows it).
"""

import json
import sys

MAX_FILE_BYTES = 64 << 20


def jsonl(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(MAX_FILE_BYTES)
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def main():
    t, expr = sys.argv[1], sys.argv[2]
    run = t + "/run"
    try:
        with open(run + "/result.json", encoding="utf-8") as f:
            r = json.load(f)
    except FileNotFoundError:
        r = None
    lines = jsonl(run + "/logs/events.jsonl")
    for n, line in enumerate(lines):
        if not isinstance(line, dict) or not isinstance(line.get("event"), dict):
            sys.exit("events.jsonl line %d is not an agent JSON event" % (n + 1))
    ev = [line["event"] for line in lines]
    calls = jsonl(run + "/logs/calls.jsonl")
    log = jsonl(t + "/model.jsonl")
    denials = jsonl(run + "/logs/guard-denials.jsonl")

    def evt(n):
        return [line["event"] for line in lines if line.get("turn") == n]

    def results(events=None):
        return [c for e in (ev if events is None else events) if e.get("type") == "user"
                for c in e["message"]["content"]
                if isinstance(c, dict) and c.get("type") == "tool_result"]

    def outputs(records=None):
        out = []
        for rec in (log if records is None else records):
            body = rec.get("body") or {}
            for item in body.get("input") or []:
                if isinstance(item, dict) and item.get("type") in ("function_call_output",
                                                                   "custom_tool_call_output"):
                    out.append(str(item.get("output")))
        return out

    names = dict(r=r, ev=ev, evt=evt, results=results, calls=calls, log=log,
                 denials=denials, outputs=outputs, json=json)
    value = eval(expr, names)  # the expression is the test's own text
    if "--print" in sys.argv[3:]:
        print(value)
        return 0
    if value:
        return 0
    print("FALSE: " + expr, file=sys.stderr)
    if r is not None:
        print("status=%s reason=%s" % (r.get("status"), r.get("reason")), file=sys.stderr)
        for turn in (r.get("agent") or {}).get("turns") or []:
            print("turn %s: %s %s" % (turn.get("turn"), turn.get("status"), turn.get("error")),
                  file=sys.stderr)
    for rec in log[-3:]:
        print("model: " + json.dumps(rec)[:400], file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
