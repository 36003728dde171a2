#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""seccomp_oci.py: convert a moby/containers seccomp profile to an OCI runtime linux.seccomp.

The profile Debian ships in golang-github-containers-common (/usr/share/containers/seccomp.json)
is the format Docker and Podman read, not the one runc reads: it lists architectures in an
"archMap" and gives rules "includes"/"excludes" conditions on the container's capabilities, the
CPU architecture and the kernel version. A container engine resolves those conditions when it
creates a container; this does the same for one capability set and one architecture, as
moby's profiles/seccomp and containers/common's pkg/seccomp do:

  archMap       keep the entry of the native architecture with its subArchitectures
                (x86_64: SCMP_ARCH_X86_64, SCMP_ARCH_X86, SCMP_ARCH_X32)
  excludes      drop the rule if the architecture is listed, if ANY listed capability is held,
                or if the kernel is at least minKernel
  includes      drop the rule unless the architecture is listed, unless ALL listed capabilities
                are held, or if the kernel is older than minKernel
  errnoRet      kept (a rule with only an "errno" name gets its number); defaultErrnoRet kept

`--errno NAME=N` (repeatable) makes syscall NAME fail with errno N: NAME is removed from every
rule first (libseccomp refuses two rules with different actions for one syscall) and one
SCMP_ACT_ERRNO rule is added. make test-container uses it to emulate gVisor, where the Landlock
calls return ENOSYS (38).

usage: seccomp_oci.py [--caps CHOWN,SETUID,...] [--arch amd64] [--kernel 6.1] [--errno NAME=N]...
                      [PROFILE] > linux-seccomp.json
"""
import argparse
import errno as errno_mod
import json
import os
import re
import sys

# Go's GOARCH names (used in includes/excludes "arches") to libseccomp's, for archMap.
GOARCH_TO_SCMP = {
    "amd64": "SCMP_ARCH_X86_64", "386": "SCMP_ARCH_X86", "arm64": "SCMP_ARCH_AARCH64",
    "arm": "SCMP_ARCH_ARM", "ppc64le": "SCMP_ARCH_PPC64LE", "s390x": "SCMP_ARCH_S390X",
    "riscv64": "SCMP_ARCH_RISCV64", "mips64": "SCMP_ARCH_MIPS64", "mips64le": "SCMP_ARCH_MIPSEL64",
}
UNAME_TO_GOARCH = {"x86_64": "amd64", "aarch64": "arm64", "i686": "386", "armv7l": "arm",
                   "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64"}


def kernel_tuple(s):
    """'6.1.0-18-amd64' -> (6, 1)"""
    m = re.match(r"(\d+)(?:\.(\d+))?", s)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else (0, 0)


def cap_name(c):
    c = c.strip().upper()
    return c if c.startswith("CAP_") else "CAP_" + c


def applies(rule, arch, caps, kernel):
    """Whether the rule is part of the profile for this architecture, capabilities and kernel."""
    inc = rule.get("includes") or {}
    exc = rule.get("excludes") or {}
    if arch in (exc.get("arches") or []):
        return False
    if any(cap_name(c) in caps for c in (exc.get("caps") or [])):
        return False
    if exc.get("minKernel") and kernel >= kernel_tuple(exc["minKernel"]):
        return False
    if inc.get("arches") and arch not in inc["arches"]:
        return False
    if inc.get("caps") and not all(cap_name(c) in caps for c in inc["caps"]):
        return False
    if inc.get("minKernel") and kernel < kernel_tuple(inc["minKernel"]):
        return False
    return True


def errno_number(rule):
    if rule.get("errnoRet") is not None:
        return int(rule["errnoRet"])
    if rule.get("errno"):
        return getattr(errno_mod, rule["errno"])
    return None


def convert(profile, caps, arch="amd64", kernel=(99, 0), errno_overrides=None):
    caps = {cap_name(c) for c in caps}
    out = {"defaultAction": profile["defaultAction"]}
    if profile.get("defaultErrnoRet") is not None:
        out["defaultErrnoRet"] = int(profile["defaultErrnoRet"])
    elif profile.get("defaultErrno"):
        out["defaultErrnoRet"] = getattr(errno_mod, profile["defaultErrno"])
    native = GOARCH_TO_SCMP[arch]
    if profile.get("archMap"):
        for a in profile["archMap"]:
            if a["architecture"] == native:
                out["architectures"] = [native] + list(a.get("subArchitectures") or [])
    elif profile.get("architectures"):
        out["architectures"] = list(profile["architectures"])
    if profile.get("flags"):
        out["flags"] = list(profile["flags"])
    overrides = dict(errno_overrides or {})
    syscalls = []
    for rule in profile.get("syscalls") or []:
        if not applies(rule, arch, caps, kernel):
            continue
        names = list(rule.get("names") or []) + ([rule["name"]] if rule.get("name") else [])
        names = [n for n in names if n not in overrides]
        if not names:
            continue
        r = {"names": names, "action": rule["action"]}
        if rule.get("args"):
            r["args"] = [{k: a[k] for k in ("index", "value", "valueTwo", "op") if k in a}
                         for a in rule["args"]]
        n = errno_number(rule)
        if n is not None and rule["action"] in ("SCMP_ACT_ERRNO", "SCMP_ACT_TRACE"):
            r["errnoRet"] = n
        syscalls.append(r)
    for name, n in overrides.items():
        syscalls.append({"names": [name], "action": "SCMP_ACT_ERRNO", "errnoRet": int(n)})
    out["syscalls"] = syscalls
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile", nargs="?", default="/usr/share/containers/seccomp.json")
    ap.add_argument("--caps", default="", help="comma-separated capabilities the container holds")
    ap.add_argument("--arch", default=UNAME_TO_GOARCH.get(os.uname().machine, "amd64"))
    ap.add_argument("--kernel", default=os.uname().release)
    ap.add_argument("--errno", action="append", default=[], metavar="NAME=N")
    a = ap.parse_args()
    with open(a.profile) as f:
        profile = json.load(f)
    overrides = dict(e.split("=", 1) for e in a.errno)
    caps = [c for c in a.caps.split(",") if c]
    json.dump(convert(profile, caps, a.arch, kernel_tuple(a.kernel), overrides), sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
