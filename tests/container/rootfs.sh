#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rootfs.sh CACHE: print the path of a cached Debian bookworm root filesystem for make
# test-container, building it first when absent (debootstrap --variant=minbase, a few minutes).
#
# It holds only what proctor needs at run time, found with `ldd build/proctor build/proctor-shim`
# and by reading examples/troubleshoot/agent.sh:
#   libjansson4          linked by proctor (proctor-shim is static)
#   libssl3 libcap-ng0   dlopen'ed by proctor (libcrypto to hash bundles, libcap-ng to drop
#                        privileges): ldd does not show them
#   python3 procps       the demo agent's ptrace and TIOCSTI attempts (python3 with ctypes),
#                        pkill; minbase already has bash, dash, coreutils, sed, grep, findutils,
#                        util-linux (setsid)
# The directory is named after a hash of the suite, variant, mirror and package list, so a change
# to any of them builds a new one; it is built under a temporary name and renamed when complete,
# so an interrupted build is never used. proctor itself is not in it: run.sh installs it each run.
set -euo pipefail

cache=${1:?usage: rootfs.sh CACHE}
suite=bookworm
variant=minbase
pkgs="libjansson4 libssl3 libcap-ng0 python3 procps"

# The mirror the host already uses for bookworm (deb822 .sources or one-line sources.list).
mirror=$(python3 - <<'PY'
import glob, re
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")) + ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        text = open(path).read()
    except OSError:
        continue
    if path.endswith(".sources"):
        for stanza in re.split(r"\n\s*\n", text):
            f = {}
            for line in stanza.splitlines():
                if ":" in line and not line.startswith("#"):
                    k, v = line.split(":", 1)
                    f[k.strip().lower()] = v.split()
            if "bookworm" in f.get("suites", []) and "deb" in f.get("types", []):
                print(f["uris"][0]); raise SystemExit
    else:
        for line in text.splitlines():
            w = re.sub(r"\[[^]]*\]", "", line).split()
            if len(w) >= 3 and w[0] == "deb" and w[2] == "bookworm":
                print(w[1]); raise SystemExit
print("http://deb.debian.org/debian")
PY
)

key=$(printf '%s\n' "$suite" "$variant" "$mirror" "$pkgs" | sha256sum | cut -c1-16)
dir=$cache/rootfs-$key
if [ -x "$dir/usr/bin/python3" ]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9   # another run building the same tree: wait for it, then use it
if [ ! -x "$dir/usr/bin/python3" ]; then
	tmp=$dir.tmp
	rm -rf "$tmp"
	echo "rootfs: debootstrap --variant=$variant $suite from $mirror with: $pkgs" >&2
	if ! debootstrap --variant="$variant" --include="${pkgs// /,}" "$suite" "$tmp" "$mirror" \
		>"$cache/debootstrap.log" 2>&1; then
		tail -n 20 "$cache/debootstrap.log" >&2
		echo "rootfs: debootstrap failed (log: $cache/debootstrap.log)" >&2
		exit 1
	fi
	rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*
	mv "$tmp" "$dir"
fi
echo "$dir"
