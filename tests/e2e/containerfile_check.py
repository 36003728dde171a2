#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""containerfile_check.py CONTAINERFILE TOP BUILD: check a Containerfile's final stage against
what the built binaries really load, without a container runtime.

 - every shared library `ldd` reports for BUILD/proctor and BUILD/proctor-shim, and every library
   proctor dlopens (each `#define ..._SONAME "lib..."` under TOP/src, found with ldconfig -p), is
   owned (`dpkg -S`) by a package the final stage installs with apt-get;
 - the final stage installs no -dev package and no compiler or build tool;
 - the build stage installs the -dev package owning each pkg-config module of the Makefile's
   PKGS, runs make and `make install DESTDIR=/staging PREFIX=/usr`;
 - the final stage copies /staging from the build stage and its ENTRYPOINT is
   ["/usr/bin/proctor", "run"].

ARG defaults are expanded (a build may add more with --build-arg; the defaults are what ships).
Prints one line per finding and exits 1 on any, else prints what it checked and exits 0."""
import glob
import json
import os
import re
import shlex
import subprocess
import sys

# No compiler, assembler, linker or build driver in the final stage.
FORBIDDEN = re.compile(r"^(build-essential|gcc(-\d+)?|g\+\+(-\d+)?|cpp(-\d+)?|clang(-\d+)?|"
                       r"llvm(-\d+)?|tcc|make|cmake|ninja-build|meson|binutils.*|pkg-config|"
                       r"pkgconf|libc6-dev|libtool|autoconf|automake|bats|libcmocka.*)$")


def logical_lines(text):
    """Containerfile instructions: comments dropped, backslash continuations joined."""
    out, cur = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not cur and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):  # a comment inside a continued instruction
            continue
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        out.append(cur + line)
        cur = ""
    if cur:
        out.append(cur)
    return out


def parse(path):
    """[{name, base, lines: [(INSTR, args)], args: {ARG: default}}] in order; global ARGs too."""
    stages, global_args = [], {}
    for line in logical_lines(open(path, encoding="utf-8").read()):
        instr, _, rest = line.partition(" ")
        instr, rest = instr.upper(), rest.strip()
        if instr == "FROM":
            words = rest.split()
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else str(len(stages))
            stages.append({"name": name, "base": words[0], "lines": [], "args": dict(global_args)})
            continue
        if instr == "ARG":
            k, _, v = rest.partition("=")
            v = shlex.split(v)[0] if v.strip() else ""
            (stages[-1]["args"] if stages else global_args)[k.strip()] = v
            if not stages:
                continue
        if not stages:
            continue
        stages[-1]["lines"].append((instr, rest))
    return stages


def expand(s, args):
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: args.get(m.group(1), ""), s)


def apt_packages(stage):
    """Packages named after `apt-get install` (options left out) in the stage's RUN lines."""
    pkgs = []
    for instr, rest in stage["lines"]:
        if instr != "RUN":
            continue
        for cmd in re.split(r"&&|;|\|\|", expand(rest, stage["args"])):
            words = shlex.split(cmd)
            words = [w for w in words if "=" not in w or w.startswith("-")]  # VAR=x prefixes
            for i in range(len(words) - 1):
                if words[i] in ("apt-get", "apt") and words[i + 1] == "install":
                    pkgs += [w for w in words[i + 2:] if not w.startswith("-")]
    return pkgs


def runs(stage):
    return [expand(rest, stage["args"]) for instr, rest in stage["lines"] if instr == "RUN"]


def dpkg_owner(path):
    """The package that owns path (trying the path, its real path and the /usr-merged forms)."""
    cands = [path, os.path.realpath(path)]
    for p in list(cands):
        if p.startswith("/usr/"):
            cands.append(p[4:])
        else:
            cands.append("/usr" + p)
    for p in cands:
        r = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout.split(":", 1)[0].strip().split(",")[0].strip()
    return None


def ldd_libs(binary):
    r = subprocess.run(["ldd", binary], capture_output=True, text=True)
    libs = []
    for line in r.stdout.splitlines():
        line = line.strip()
        m = re.match(r"\S+ => (/\S+)", line) or re.match(r"(/\S+) \(", line)
        if m:
            libs.append(m.group(1))
    return libs


def dlopened(top):
    names = set()
    for f in glob.glob(os.path.join(top, "src", "**", "*.c"), recursive=True):
        for m in re.finditer(r'#define\s+\w*SONAME\s+"([^"]+)"', open(f, encoding="utf-8").read()):
            names.add(m.group(1))
    return sorted(names)


def ldconfig_path(soname):
    """Where the dynamic loader finds soname (ldconfig -p), for this machine's word size."""
    r = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True)
    want = "x86-64" if os.uname().machine == "x86_64" else ""
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if m and m.group(1) == soname and want in m.group(2):
            return m.group(3)
    return None


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: containerfile_check.py CONTAINERFILE TOP BUILD")
    cf, top, build = sys.argv[1:]
    bad = []
    stages = parse(cf)
    if len(stages) < 2:
        print(f"{cf}: {len(stages)} stage(s); want a build stage and a final stage")
        return 1
    final, builders = stages[-1], stages[:-1]
    final_pkgs = apt_packages(final)
    final_set = set(final_pkgs)

    # 1. Every library the binaries load comes from a package the final stage installs.
    libs = []
    for b in ("proctor", "proctor-shim"):
        path = os.path.join(build, b)
        if not os.access(path, os.X_OK):
            print(f"{path}: not built")
            return 1
        libs += [(b, lib) for lib in ldd_libs(path)]
    for soname in dlopened(top):
        p = ldconfig_path(soname)
        if not p:
            bad.append(f"dlopen {soname}: not found on this host (ldconfig -p)")
            continue
        libs.append(("proctor (dlopen)", p))
    if not any(lib.endswith("libc.so.6") for _, lib in libs):
        bad.append("ldd found no libc.so.6 for proctor: the check would prove nothing")
    owners = {}
    for who, lib in libs:
        pkg = dpkg_owner(lib)
        if not pkg:
            bad.append(f"{who}: {lib}: no Debian package owns it (dpkg -S)")
            continue
        owners[lib] = pkg
        if pkg not in final_set:
            bad.append(f"{who}: {lib} comes from {pkg}, which the final stage does not install")

    # 2. Nothing to build with in the final stage.
    for p in final_pkgs:
        if p.endswith("-dev") or FORBIDDEN.match(p):
            bad.append(f"final stage installs {p}: a -dev package, compiler or build tool")
    for instr, rest in final["lines"]:
        if instr == "RUN" and re.search(r"(^|&&|;|\|\|)\s*(make|cc|gcc|clang)\s", rest):
            bad.append(f"final stage builds something: RUN {rest[:60]}")

    # 3. The build stage: the -dev package of every pkg-config module the Makefile links or loads.
    build_pkgs = set(p for s in builders for p in apt_packages(s))
    mk = open(os.path.join(top, "Makefile"), encoding="utf-8").read()
    m = re.search(r"^PKGS\s*:?=\s*(.+)$", mk, re.M)
    for mod in (m.group(1).split() if m else []):
        pcdir = subprocess.run(["pkg-config", "--variable=pcfiledir", mod], capture_output=True, text=True)
        pc = os.path.join(pcdir.stdout.strip(), mod + ".pc")
        pkg = dpkg_owner(pc) if pcdir.returncode == 0 else None
        if not pkg:
            bad.append(f"pkg-config module {mod}: no package owns {pc}")
        elif pkg not in build_pkgs:
            bad.append(f"build stage lacks {pkg} (pkg-config module {mod} of the Makefile's PKGS)")
    build_runs = " && ".join(r for s in builders for r in runs(s))
    if not re.search(r"\bmake\b(?! install)", build_runs):
        bad.append("build stage never runs make")
    if not re.search(r"\bmake install(?=.*\bDESTDIR=/staging\b)(?=.*\bPREFIX=/usr\b)", build_runs):
        bad.append("build stage lacks `make install DESTDIR=/staging PREFIX=/usr`")

    # 4. The final stage takes the staged install and runs proctor run.
    names = {s["name"] for s in builders}
    copies = [rest for instr, rest in final["lines"] if instr == "COPY"]
    if not any(re.match(r"--from=(\S+)\s+/staging/?\s+/$", c) and
               re.match(r"--from=(\S+)", c).group(1) in names for c in copies):
        bad.append("final stage does not COPY --from=<build stage> /staging/ /")
    eps = [rest for instr, rest in final["lines"] if instr == "ENTRYPOINT"]
    try:
        ep = json.loads(eps[-1]) if eps else None
    except ValueError:
        ep = None
    if ep != ["/usr/bin/proctor", "run"]:
        bad.append(f"final ENTRYPOINT is {eps[-1] if eps else 'missing'}, not [\"/usr/bin/proctor\", \"run\"]")

    for b in bad:
        print(b)
    if bad:
        return 1
    print("ok: final stage installs " + " ".join(final_pkgs))
    for lib, pkg in sorted(owners.items()):
        print(f"  {lib} <- {pkg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
