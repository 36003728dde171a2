#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# parallel_check.py: what a suite run through GNU parallel left in OUT (tests/e2e/parallel.bats).
#
#   parallel_check.py rows OUT
#       one line per OUT/<id>/result.json, in byte order of the ids:
#       "<dir> <task_id> <status> <exit_code> <suite.index> <mock calls> <survivors>"
#   parallel_check.py overlap OUT
#       when each run held its identity slot: from the end of staging (the slot is taken at its
#       start, and staging runs nothing as the agent's uid) to finished_at, that is
#       [finished_at - (total - validate - stage) ms, finished_at]. started_at would not do: a
#       run starts before it takes its slot (it validates the task, and may wait for a slot), so
#       a run that takes the slot another just released starts before that one finished (seen
#       under ASan). Prints "concurrent=K uids=U clashes=C": K the most runs holding a slot at
#       one instant, U the agent uids used (comma-separated), C the pairs of runs that held the
#       same agent uid at once (must be 0: a slot is one run's).
#       Also checks each run's agent_uid and agent_gid are its identity slot plus the bases.
#   parallel_check.py joblog FILE
#       GNU parallel's --joblog: "<index>:<exit>" for every job, sorted by index.
import datetime
import json
import os
import sys


def results(out):
    for d in sorted(os.listdir(out)):
        if d.startswith("."):
            continue
        p = os.path.join(out, d, "result.json")
        yield d, json.load(open(p))


def when(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def rows(out):
    for d, r in results(out):
        suite = r.get("suite") or {}
        mocks = r.get("mocks") or {}
        print(d, r["task_id"], r["status"], r["exit_code"], suite.get("index"), mocks.get("calls"),
              len(r["teardown"]["survivors"]))


def overlap(out):
    runs, bad = [], 0
    for d, r in results(out):
        ident = r["identity"]
        if ident is None:
            continue
        if (ident["agent_uid"] - ident["slot"], ident["agent_gid"] - ident["slot"]) not in \
                ((2000, 2000), (2040, 2040)):
            print("%s: agent uid %d gid %d is not slot %d of its bases" %
                  (d, ident["agent_uid"], ident["agent_gid"], ident["slot"]), file=sys.stderr)
            bad += 1
        dur, end = r["durations_ms"], when(r["finished_at"])
        held = (dur["total"] - dur["validate"] - dur["stage"]) / 1000.0
        runs.append((end - held, end, ident["agent_uid"], d))
    clashes, most = bad, 0
    for i, (s1, e1, u1, d1) in enumerate(runs):
        alive = sum(1 for s2, e2, _, _ in runs if s2 <= s1 < e2)
        most = max(most, alive)
        for s2, e2, u2, d2 in runs[i + 1:]:
            if s1 < e2 and s2 < e1 and u1 == u2:
                print("%s and %s overlapped with agent uid %d" % (d1, d2, u1), file=sys.stderr)
                clashes += 1
    uids = ",".join(str(u) for u in sorted({u for _, _, u, _ in runs}))
    print("concurrent=%d uids=%s clashes=%d" % (most, uids, clashes))


def joblog(path):
    jobs = []
    for line in open(path).read().splitlines()[1:]:
        f = line.split("\t")
        # Seq Host Starttime JobRuntime Send Receive Exitval Signal Command (with --index N).
        argv = f[8].split()
        jobs.append((int(argv[argv.index("--index") + 1]), int(f[6])))
    print(" ".join("%d:%d" % j for j in sorted(jobs)))


if __name__ == "__main__":
    {"rows": rows, "overlap": overlap, "joblog": joblog}[sys.argv[1]](sys.argv[2])
