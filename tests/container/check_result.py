#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_result.py CASE RESULT.json: make test-container's assertions on one result.json.

Prints one line per assertion, "ok DESCRIPTION" or "not ok DESCRIPTION: what was found"; run.sh
turns them into TAP. CASE is what the run was expected to do:
  baseline    in a baseline pod: completed, every required layer enforced, pid_namespace absent
              (no CAP_SYS_ADMIN: teardown sweeps by uid), nothing left behind
  refused     Landlock calls return ENOSYS (gVisor): isolation_failed, exit 4, naming Landlock
  allowed     the same with --allow-no-landlock: completed, the landlock layer recorded absent
"""
import json
import sys

# Layers every run must have enforced in a baseline pod (doc/RESULT.md: all but landlock_scope,
# pid_namespace and private_proc are required; landlock is checked per case).
REQUIRED = ["uid", "groups", "capabilities", "no_new_privs", "no_tty", "non_dumpable",
            "mockd_identity", "fixtures_private", "guard"]

results = []


def check(desc, cond, found=""):
    results.append((bool(cond), desc, found))


def main():
    case, path = sys.argv[1], sys.argv[2]
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        print("not ok %s: result.json readable: %s" % (case, e))
        return
    iso = r.get("isolation") or {}

    def state(layer):
        return (iso.get(layer) or {}).get("state")

    def detail(layer):
        return (iso.get(layer) or {}).get("detail") or ""

    suite = r.get("suite") or {}
    check("suite index 0 chosen by --index", suite.get("index") == 0 and suite.get("index_from") == "--index",
          json.dumps(suite))
    if case in ("baseline", "allowed"):
        check("status completed, exit_code 0", r.get("status") == "completed" and r.get("exit_code") == 0,
              "%s %s: %s" % (r.get("status"), r.get("exit_code"), r.get("reason")))
        for layer in REQUIRED:
            check("layer %s enforced" % layer, state(layer) == "enforced", "%s: %s" % (state(layer), detail(layer)))
        check("layer pid_namespace absent, teardown sweeps by uid (no CAP_SYS_ADMIN)",
              state("pid_namespace") == "absent" and "sweeps by uid" in detail("pid_namespace"),
              "%s: %s" % (state("pid_namespace"), detail("pid_namespace")))
        check("layer private_proc absent (no mount namespace without CAP_SYS_ADMIN)",
              state("private_proc") == "absent", "%s: %s" % (state("private_proc"), detail("private_proc")))
        td = r.get("teardown") or {}
        check("teardown by uid sweep, no survivors, no errors, socket removed",
              td.get("method") == "uid_sweep" and td.get("survivors") == [] and not td.get("errors")
              and td.get("socket_removed") is True, json.dumps(td))
        leaked = [p for p in r.get("private") or [] if p.get("leaked_into")]
        check("no private file leaked into the workspace", not leaked, json.dumps(leaked))
    if case == "baseline":
        check("layer landlock enforced", state("landlock") == "enforced", "%s: %s" % (state("landlock"), detail("landlock")))
        check("layer landlock_scope enforced or absent with a reason",
              state("landlock_scope") == "enforced" or (state("landlock_scope") == "absent" and detail("landlock_scope")),
              "%s: %s" % (state("landlock_scope"), detail("landlock_scope")))
        ag = r.get("agent") or {}
        check("the demo agent exited 0 (honest work done, every cheat blocked)", ag.get("exit_code") == 0,
              "exit_code %s signal %s" % (ag.get("exit_code"), ag.get("signal")))
    if case == "allowed":
        check("layer landlock recorded absent", state("landlock") == "absent",
              "%s: %s" % (state("landlock"), detail("landlock")))
    if case == "refused":
        check("status isolation_failed, exit_code 4",
              r.get("status") == "isolation_failed" and r.get("exit_code") == 4,
              "%s %s" % (r.get("status"), r.get("exit_code")))
        check("the reason names Landlock", "landlock" in (r.get("reason") or "").lower(), r.get("reason"))
        check("no agent turn ran", not (r.get("agent") or {}).get("turns"), json.dumps((r.get("agent") or {}).get("turns")))


main()
for ok, desc, found in results:
    found = " | ".join(str(found).strip().splitlines())
    print(("ok %s" % desc) if ok else ("not ok %s: found %s" % (desc, found)))
