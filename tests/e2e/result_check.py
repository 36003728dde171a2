#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# result_check.py: validate a run's result.json against doc/RESULT.md (the contract), and read
# a run's events. Used by tests/e2e/run.bats.
#
#   result_check.py RESULT.json [--status S] [--exit-code N]
#       every key present with the right type, status in the list, exit code consistent with the
#       status (and equal to N when given); prints each problem and exits 1, else prints "ok".
#   result_check.py events RUN_DIR
#       the agent's stdout lines from RUN_DIR/logs/events.jsonl, one compact JSON object a line
#       (exits 1 if a line is not a JSON object: a split or merged line shows up here).
import json
import os
import re
import sys

STATUSES = ("completed", "timeout", "agent_failed", "isolation_failed", "teardown_failed",
            "config_error")
# The exit codes each status allows (doc/RESULT.md, "Exit codes" and "Status").
EXIT_FOR = {"completed": {0}, "timeout": {0}, "agent_failed": {0}, "isolation_failed": {3, 4},
            "teardown_failed": {3}, "config_error": {4}}
PHASES = ("validate", "stage", "bundles", "mockd", "guard", "worker", "agent", "teardown", "total")
LAYERS = ("uid", "groups", "capabilities", "no_new_privs", "landlock", "landlock_scope",
          "pid_namespace", "private_proc", "no_tty", "non_dumpable", "mockd_identity",
          "fixtures_private", "guard")
OPTIONAL_LAYERS = ("landlock_scope", "pid_namespace", "private_proc")  # "absent" with a reason
TURN_STATUSES = ("completed", "failed", "turn_timeout", "agent_crashed", "config_error")
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
OUTCOMES = ("exact", "normalized", "subset", "passthrough", "cached", "default", "unmocked",
            "budget", "rejected", "unknown_tool", "bad_request", "busy", "client_gone", "error")

problems = []


def bad(path, msg):
    problems.append("%s: %s" % (path, msg))


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def want(obj, key, kinds, path, nullable=False):
    """obj[key] must exist and be one of kinds (a tuple of: int, str, bool, list, dict)."""
    p = path + "." + key if path else key
    if not isinstance(obj, dict) or key not in obj:
        bad(p, "missing")
        return None
    v = obj[key]
    if v is None:
        if not nullable:
            bad(p, "null")
        return None
    ok = any(is_int(v) if k is int else isinstance(v, k) for k in kinds)
    if not ok:
        bad(p, "expected %s, got %s" % ("/".join(k.__name__ for k in kinds), type(v).__name__))
        return None
    return v


def check_agent(a, status):
    if a is None:
        return
    early = status in ("config_error", "isolation_failed")  # the agent may never have started
    want(a, "kind", (str,), "agent", nullable=status == "config_error")
    argv = want(a, "argv", (list,), "agent", nullable=early)
    if argv is not None and not all(isinstance(x, str) for x in argv):
        bad("agent.argv", "not a list of strings")
    ran = status not in ("config_error",)
    want(a, "descriptor", (str,), "agent", nullable=True)
    want(a, "session_id", (str,), "agent", nullable=True)
    code = want(a, "exit_code", (int,), "agent", nullable=True)
    sig = want(a, "signal", (int, str), "agent", nullable=True)
    want(a, "events", (int,), "agent")
    want(a, "events_lost", (int,), "agent")
    want(a, "stderr_bytes", (int,), "agent")
    timed_out = want(a, "timed_out", (bool,), "agent")
    for i, t in enumerate(want(a, "turns", (list,), "agent") or []):
        p = "agent.turns[%d]" % i
        want(t, "turn", (int,), p)
        st = want(t, "status", (str,), p)
        if st is not None and st not in TURN_STATUSES:
            bad(p + ".status", "unknown turn status %r" % st)
        want(t, "exit_code", (int,), p, nullable=True)
        want(t, "signal", (int, str), p, nullable=True)
        want(t, "session_id", (str,), p, nullable=True)
        want(t, "usage", (dict,), p, nullable=True)
        want(t, "error", (str,), p, nullable=True)
        msg = want(t, "message", (str,), p, nullable=True)
        if st in ("turn_timeout", "agent_crashed", "config_error") and msg is None:
            bad(p + ".message", "null for the error status %s" % st)
        want(t, "lines", (int,), p)
        recognised = want(t, "recognised", (int,), p)
        lines = t.get("lines")
        if is_int(recognised) and is_int(lines) and recognised > lines:
            bad(p + ".recognised", "%d events recognised of %d lines" % (recognised, lines))
        want(t, "duration_ms", (int,), p)
        discarded = want(t, "discarded", (bool,), p)
        if discarded is True and st != "turn_timeout":
            bad(p + ".discarded", "true for a turn whose status is %s" % st)
    if status == "completed" and (code != 0 or sig is not None):
        bad("agent", "completed needs exit_code 0 and no signal, got %r/%r" % (code, sig))
    # A command agent fails by its exit status; a JSON-lines agent also by reporting a failed
    # turn, or by exiting without its end-of-turn event, both possibly with exit status 0.
    turns = a.get("turns") if isinstance(a.get("turns"), list) else []
    said = any(isinstance(t, dict) and t.get("status") in ("failed", "agent_crashed") for t in turns)
    if status == "agent_failed" and code == 0 and sig is None and not said:
        bad("agent", "agent_failed with exit_code 0, no signal and no failed or crashed turn")
    if status == "timeout" and timed_out is not True:
        bad("agent.timed_out", "status timeout but timed_out is %r" % timed_out)
    if status != "timeout" and timed_out is True and status in ("completed", "agent_failed"):
        bad("agent.timed_out", "true but status is %s" % status)
    if not ran and a.get("exit_code") is not None:
        bad("agent.exit_code", "the agent never ran")


def check_identity(ident, status):
    if ident is None:
        return
    for k in ("slot", "agent_uid", "agent_gid", "mockd_uid", "rpc_gid"):
        want(ident, k, (int,), "identity")
    # null until the worker has proved its identity (it may never start)
    want(ident, "verified", (dict, str), "identity",
         nullable=status in ("config_error", "isolation_failed"))


def check_isolation(iso, status, r):
    if iso is None:
        return
    # A run that stopped before the worker started has no record of the layers it never set up.
    early = status in ("config_error", "isolation_failed")
    # Layers of a feature the task does not use.
    unused = {"mockd_identity": r.get("mocks") is None, "guard": r.get("guard") is None}
    for layer in LAYERS:
        if early and layer not in iso:
            continue
        entry = want(iso, layer, (dict,), "isolation")
        if entry is None:
            continue
        state = want(entry, "state", (str,), "isolation." + layer)
        want(entry, "detail", (str,), "isolation." + layer)
        if state not in ("enforced", "absent", "failed", None):
            bad("isolation.%s.state" % layer, "unknown state %r" % state)
        if status in ("completed", "timeout", "agent_failed", "teardown_failed"):
            # landlock may be absent only by the operator's choice, which its detail records
            accepted = layer == "landlock" and entry.get("detail", "").startswith("accepted by --allow-no-landlock")
            optional = layer in OPTIONAL_LAYERS or unused.get(layer) or accepted
            if state == "failed" or (state == "absent" and not optional):
                bad("isolation.%s" % layer, "%s in a run that went on" % state)
    for layer in iso:
        if layer not in LAYERS:
            bad("isolation." + layer, "not a layer of doc/RESULT.md")


def check_lists(r):
    for i, b in enumerate(want(r, "bundles", (list,), "") or []):
        p = "bundles[%d]" % i
        for k, kinds in (("source", (str,)), ("path", (str,)), ("digest", (str,)),
                         ("files", (int,)), ("verified_after", (bool,))):
            want(b, k, kinds, p)
    for i, pr in enumerate(want(r, "private", (list,), "") or []):
        p = "private[%d]" % i
        want(pr, "path", (str,), p)
        digest = want(pr, "sha256", (str,), p)
        if digest is not None and not re.fullmatch(r"[0-9a-f]{64}", digest):
            bad(p + ".sha256", "not a SHA-256 hex digest")
        leaked = want(pr, "leaked_into", (list,), p)
        if leaked is not None and not all(isinstance(x, str) for x in leaked):
            bad(p + ".leaked_into", "not a list of strings")
        want(pr, "scan_complete", (bool,), p)


def check_mocks(m):
    if m is None:
        return
    want(m, "journal", (str,), "mocks")
    calls = want(m, "calls", (int,), "mocks")
    want(m, "unparsed_lines", (int,), "mocks")
    total = 0
    for tool, outcomes in (want(m, "by_tool", (dict,), "mocks") or {}).items():
        if not isinstance(outcomes, dict):
            bad("mocks.by_tool." + tool, "not an object")
            continue
        for o, n in outcomes.items():
            if o not in OUTCOMES:
                bad("mocks.by_tool.%s.%s" % (tool, o), "unknown outcome")
            if not is_int(n):
                bad("mocks.by_tool.%s.%s" % (tool, o), "not an integer")
            else:
                total += n
    if calls is not None and total != calls:
        bad("mocks.calls", "%d, but by_tool adds up to %d" % (calls, total))


def check_guard(g):
    if g is None:
        return
    want(g, "harness", (str,), "guard")
    want(g, "marker", (str,), "guard")
    want(g, "settings", (str,), "guard")
    want(g, "denials", (int,), "guard")
    if want(g, "denials_verified", (bool,), "guard") is not False:
        bad("guard.denials_verified", "must be false: the agent can write the denial log")
    want(g, "disarmed", (bool,), "guard")


def check_teardown(t, status):
    if t is None:
        return
    ran = status != "config_error"
    method = want(t, "method", (str,), "teardown", nullable=not ran)
    if method is not None and method not in ("pid_namespace+uid_sweep", "uid_sweep"):
        bad("teardown.method", "unknown method %r" % method)
    want(t, "left_behind", (int,), "teardown", nullable=True)
    survivors = want(t, "survivors", (list,), "teardown")
    # mockd's exit status, or "signal N" when a signal ended it
    mx = want(t, "mockd_exit", (int, str), "teardown", nullable=True)
    if isinstance(mx, str) and not re.fullmatch(r"signal \d+", mx):
        bad("teardown.mockd_exit", "%r is neither an exit status nor \"signal N\"" % mx)
    want(t, "socket_removed", (bool,), "teardown", nullable=True)
    errors = want(t, "errors", (list,), "teardown")
    if errors is not None and not all(isinstance(e, str) for e in errors):
        bad("teardown.errors", "not a list of strings")
    if survivors and status != "teardown_failed":
        bad("teardown.survivors", "survivors %r but status %s" % (survivors, status))


def check(r, want_status, want_exit):
    if not isinstance(r, dict):
        bad("result.json", "not an object")
        return
    if r.get("version") != 1 or not is_int(r.get("version")):
        bad("version", "must be 1")
    status = want(r, "status", (str,), "")
    if status not in STATUSES:
        bad("status", "%r is not one of %s" % (status, ", ".join(STATUSES)))
        status = None
    want(r, "task_id", (str,), "", nullable=True)
    want(r, "task_file", (str,), "")
    run_dir = want(r, "run_dir", (str,), "")
    if run_dir is not None and not os.path.isabs(run_dir):
        bad("run_dir", "not absolute")
    reason = want(r, "reason", (str,), "", nullable=True)
    if status == "completed" and reason is not None:
        bad("reason", "must be null for completed")
    if status not in (None, "completed") and not reason:
        bad("reason", "missing for status %s" % status)
    code = want(r, "exit_code", (int,), "")
    if status and code is not None and code not in EXIT_FOR[status]:
        bad("exit_code", "%d is not allowed with status %s" % (code, status))
    for k in ("started_at", "finished_at"):
        t = want(r, k, (str,), "")
        if t is not None and not TIME_RE.match(t):
            bad(k, "%r is not RFC 3339 UTC with milliseconds" % t)
    durations = want(r, "durations_ms", (dict,), "")
    for ph in PHASES:
        d = want(durations or {}, ph, (int,), "durations_ms") if durations is not None else None
        if d is not None and d < 0:
            bad("durations_ms." + ph, "negative")
    check_agent(want(r, "agent", (dict,), ""), status)
    check_identity(want(r, "identity", (dict,), "", nullable=True), status)
    check_isolation(want(r, "isolation", (dict,), ""), status, r)
    check_lists(r)
    check_mocks(want(r, "mocks", (dict,), "", nullable=True))
    check_guard(want(r, "guard", (dict,), "", nullable=True))
    check_teardown(want(r, "teardown", (dict,), ""), status)
    suite = want(r, "suite", (dict,), "", nullable=True)
    if suite is not None:
        want(suite, "path", (str,), "suite")
        idx, n = want(suite, "index", (int,), "suite"), want(suite, "tasks", (int,), "suite")
        if idx is not None and n is not None and not 0 <= idx < n:
            bad("suite.index", "%r is not below suite.tasks %r" % (idx, n))
        if want(suite, "index_from", (str,), "suite") not in ("--index", "JOB_COMPLETION_INDEX",
                                                              "SLURM_ARRAY_TASK_ID"):
            bad("suite.index_from", "not --index or a scheduler variable")
    if want_status is not None and status != want_status:
        bad("status", "%r, expected %r (reason: %r)" % (status, want_status, reason))
    if want_exit is not None and code != want_exit:
        bad("exit_code", "%r, expected %d" % (code, want_exit))


def events(run_dir):
    """The agent's stdout lines, from RUN/logs/events.jsonl: one record per line,
    {"seq","stream":"stdout","text","truncated","ts"}, seq counting from 1, each text one
    whole line of the agent's stdout (here: a JSON object, as the test agents print)."""
    rc = 0
    seq = 0

    def fail(n, msg):
        nonlocal rc
        print("events.jsonl:%d: %s" % (n, msg), file=sys.stderr)
        rc = 1

    with open(os.path.join(run_dir, "logs", "events.jsonl"), "rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                rec = json.loads(raw)
            except ValueError as e:
                fail(n, "not JSON (%s): %.80r" % (e, raw))
                continue
            if not isinstance(rec, dict) or rec.get("stream") != "stdout" \
                    or not isinstance(rec.get("text"), str):
                fail(n, "not a stdout record: %.80r" % raw)
                continue
            seq += 1
            if rec.get("seq") != seq:
                fail(n, "seq %r, expected %d" % (rec.get("seq"), seq))
            if rec.get("truncated") is not False:
                fail(n, "truncated is %r" % rec.get("truncated"))
            if not isinstance(rec.get("ts"), str) or not TIME_RE.match(rec["ts"]):
                fail(n, "ts %r is not RFC 3339 UTC with milliseconds" % rec.get("ts"))
            try:
                ev = json.loads(rec["text"])
            except ValueError as e:
                fail(n, "the agent's line is not JSON (%s): %.80r" % (e, rec["text"]))
                continue
            if not isinstance(ev, dict):
                fail(n, "the agent's line is not an object")
                continue
            print(json.dumps(ev, separators=(",", ":")))
    return rc


def main(argv):
    if len(argv) == 3 and argv[1] == "events":
        return events(argv[2])
    if len(argv) < 2 or argv[1].startswith("-"):
        print("usage: result_check.py RESULT.json [--status S] [--exit-code N]\n"
              "       result_check.py events RUN_DIR", file=sys.stderr)
        return 2
    want_status = want_exit = None
    args = argv[2:]
    while args:
        if args[0] == "--status" and len(args) > 1:
            want_status = args[1]
        elif args[0] == "--exit-code" and len(args) > 1:
            want_exit = int(args[1])
        else:
            print("result_check.py: unknown argument %r" % args[0], file=sys.stderr)
            return 2
        args = args[2:]
    try:
        with open(argv[1], "rb") as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        print("%s: %s" % (argv[1], e))
        return 1
    check(r, want_status, want_exit)
    for p in problems:
        print("%s: %s" % (argv[1], p))
    if not problems:
        print("ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
