#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Drive a real mockd through the real shim for every scenario of a fixture corpus.

For each rule: its own argv, the argv with extra flags (--output json --limit 50), and its
flags in --f=v form must be answered with the stdout of the first matching rule in file order.
The expectation comes from an independent model of ARCHITECTURE.md section 4 written here in
Python, not from proctor's matcher.

usage: corpus_check.py PROCTOR SHIM CORPUS_DIR WORKDIR
prints "checked N scenarios, M calls, F failures" and exits non-zero on any failure.
"""
import json
import os
import subprocess
import sys

NOISE = ("--output",)


def tokens(argv, noise=NOISE):
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        has_eq = a.startswith("-") and "=" in a
        flag = a.split("=", 1)[0] if has_eq else a
        if flag in noise:
            if not has_eq and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                i += 1
            i += 1
            continue
        if has_eq:
            f, v = a.split("=", 1)
            out.append(f)
            if v:
                out.append(v)
        else:
            out.append(a)
        i += 1
    return out


def expected(fixture, prefixes, argv):
    rules = fixture["responses"]
    for r in rules:
        if r.get("match_mode", "exact") == "exact" and r["argv"] == argv:
            return r
    key = sorted(tokens(argv))
    for r in rules:
        if r.get("match_mode") == "normalized" and sorted(tokens(r["argv"])) == key:
            return r
    have = set(tokens(argv))
    for r in rules:
        if r.get("match_mode") == "subset" and set(tokens(r["argv"])) <= have:
            return r
    if any(argv[: len(p)] == p for p in prefixes):
        return None  # passthrough: not checked here
    return fixture.get("default", {"exit_code": 2, "stdout": None})


def eq_form(argv):
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--") and "=" not in a and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            out.append(a + "=" + argv[i + 1])
            i += 2
        else:
            out.append(a)
            i += 1
    return out


def run_scenario(proctor, shim_dir, config_path, work):
    cfg = json.load(open(config_path))
    sock = os.path.join(work, "mock.sock")
    r, w = os.pipe()
    daemon = subprocess.Popen([proctor, "mockd", "--config", config_path, "--socket", sock,
                               "--ready-fd", str(w)], pass_fds=(w,), stderr=subprocess.PIPE)
    os.close(w)
    if os.read(r, 1) != b"\n":
        raise RuntimeError(f"{config_path}: mockd did not start: {daemon.stderr.read().decode()}")
    os.close(r)
    calls = failures = 0
    env = dict(os.environ, PROCTOR_MOCK_SOCKET=sock)
    try:
        for tool in cfg["tools"]:
            fixture = json.load(open(os.path.join(os.path.dirname(config_path), tool["fixture"])))
            prefixes = tool.get("passthrough_argv_prefixes", [])
            for idx, rule in enumerate(fixture["responses"]):
                variants = [rule["argv"], rule["argv"] + ["--output", "json", "--limit", "50"], eq_form(rule["argv"])]
                for argv in variants:
                    want = expected(fixture, prefixes, argv)
                    if want is None:
                        continue
                    got = subprocess.run([os.path.join(shim_dir, tool["tool"])] + argv, env=env,
                                         capture_output=True)
                    calls += 1
                    ok = got.returncode == want.get("exit_code", 0)
                    if want.get("stdout") is not None:
                        ok = ok and got.stdout == want.get("stdout", "").encode()
                    if not ok:
                        failures += 1
                        if failures <= 5:
                            print(f"FAIL {config_path} responses[{idx}] argv={argv}: exit {got.returncode}",
                                  file=sys.stderr)
    finally:
        daemon.terminate()
        daemon.wait()
    return calls, failures


def main():
    proctor, shim, corpus, work = sys.argv[1:5]
    shim_dir = os.path.join(work, "bin")
    os.makedirs(shim_dir, exist_ok=True)
    configs = sorted(os.path.join(d, "mock-config.json") for d, _, files in os.walk(corpus)
                     if "mock-config.json" in files)
    total_calls = total_fail = 0
    for config in configs:
        for tool in json.load(open(config))["tools"]:
            link = os.path.join(shim_dir, tool["tool"])
            if not os.path.islink(link):
                os.symlink(shim, link)
        calls, fails = run_scenario(proctor, shim_dir, config, work)
        total_calls += calls
        total_fail += fails
    print(f"checked {len(configs)} scenarios, {total_calls} calls, {total_fail} failures")
    return 1 if total_fail or not configs else 0


if __name__ == "__main__":
    sys.exit(main())
