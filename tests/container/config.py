#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""config.py: write an OCI runtime config.json (as `runc spec` would) for a baseline pod.

It mirrors what a Kubernetes kubelet asks of the runtime for a pod that passes the Pod Security
"baseline" level with allowPrivilegeEscalation: false, running as root:
  - capabilities: only CHOWN DAC_OVERRIDE FOWNER KILL SETGID SETPCAP SETUID, in the bounding,
    effective and permitted sets; none inheritable or ambient (--caps changes the list, which is
    how make test-container breaks proctor on purpose);
  - noNewPrivileges: true (allowPrivilegeEscalation: false);
  - the runtime's default seccomp profile: the containers-common one, converted by
    seccomp_oci.py for these capabilities (--errno NAME=N adds rules: gVisor emulation);
  - its own pid, mount, ipc, uts and network namespaces: the entrypoint is PID 1 and, with no
    CAP_SYS_ADMIN, cannot make namespaces of its own;
  - a read-only root filesystem with tmpfs /tmp and /run, runc's masked and read-only /proc
    paths, and two bind mounts: --out as /out (read-write) and --suite as /suite (read-only).
No linux.resources section: limits are not what this test is about, and with no cgroupsPath runc
puts the container in a cgroup of its own name under the caller's (see run.sh).

usage: config.py --rootfs DIR --out DIR --suite DIR [--caps A,B] [--errno NAME=N]... -- ARGV...
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seccomp_oci  # noqa: E402

BASELINE_CAPS = "CHOWN,DAC_OVERRIDE,FOWNER,KILL,SETGID,SETPCAP,SETUID"


def config(rootfs, out, suite, caps, seccomp, argv, hostname="proctor-test"):
    capset = [seccomp_oci.cap_name(c) for c in caps]
    return {
        "ociVersion": "1.0.2-dev",
        "process": {
            "terminal": False,
            "user": {"uid": 0, "gid": 0},
            "args": argv,
            "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "HOME=/root", "LANG=C.UTF-8"],
            "cwd": "/",
            "capabilities": {"bounding": capset, "effective": capset, "permitted": capset,
                             "inheritable": [], "ambient": []},
            "noNewPrivileges": True,
        },
        "root": {"path": rootfs, "readonly": True},
        "hostname": hostname,
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
             "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
            {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
             "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
            {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
             "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
            {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
             "options": ["nosuid", "noexec", "nodev"]},
            {"destination": "/sys", "type": "sysfs", "source": "sysfs",
             "options": ["nosuid", "noexec", "nodev", "ro"]},
            {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
             "options": ["nosuid", "nodev", "mode=1777"]},
            {"destination": "/run", "type": "tmpfs", "source": "tmpfs",
             "options": ["nosuid", "nodev", "mode=755"]},
            {"destination": "/out", "type": "bind", "source": out, "options": ["rbind", "rw"]},
            {"destination": "/suite", "type": "bind", "source": suite,
             "options": ["rbind", "ro", "nosuid", "nodev"]},
        ],
        "linux": {
            "namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount")],
            "seccomp": seccomp,
            "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
                            "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                            "/proc/sched_debug", "/proc/scsi", "/sys/firmware"],
            "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                              "/proc/sysrq-trigger"],
        },
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rootfs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--caps", default=BASELINE_CAPS)
    ap.add_argument("--errno", action="append", default=[], metavar="NAME=N")
    ap.add_argument("--profile", default="/usr/share/containers/seccomp.json")
    ap.add_argument("--no-seccomp", action="store_true", help="no seccomp filter (run.sh's probe)")
    ap.add_argument("argv", nargs="+")
    a = ap.parse_args()
    caps = [c for c in a.caps.split(",") if c]
    with open(a.profile) as f:
        profile = json.load(f)
    arch = seccomp_oci.UNAME_TO_GOARCH.get(os.uname().machine, "amd64")
    sc = seccomp_oci.convert(profile, caps, arch, seccomp_oci.kernel_tuple(os.uname().release),
                             dict(e.split("=", 1) for e in a.errno))
    c = config(a.rootfs, a.out, a.suite, caps, sc, a.argv)
    if a.no_seccomp:
        del c["linux"]["seccomp"]
    json.dump(c, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
