#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pss_baseline.py FILE.yaml...: check every pod (a Pod, or the pod template of a Job, CronJob,
Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController or PodTemplate) against the
Pod Security Standards "baseline" level, as Pod Security Admission enforces it
(kubernetes.io/docs/concepts/security/pod-security-standards, and the checks of
k8s.io/pod-security-admission/policy):

  HostProcess        windowsOptions.hostProcess (pod, every container): unset or false
  Host namespaces    spec.hostNetwork, hostPID, hostIPC: unset or false
  Privileged         securityContext.privileged of every container: unset or false
  Capabilities       capabilities.add of every container: only AUDIT_WRITE CHOWN DAC_OVERRIDE
                     FOWNER FSETID KILL MKNOD NET_BIND_SERVICE SETFCAP SETGID SETPCAP SETUID
                     SYS_CHROOT
  HostPath volumes   spec.volumes[*].hostPath: unset
  Host ports         ports[*].hostPort of every container: unset or 0
  AppArmor           appArmorProfile.type (pod, every container): unset, RuntimeDefault or
                     Localhost; annotations container.apparmor.security.beta.kubernetes.io/*:
                     unset, runtime/default or localhost/*
  SELinux            seLinuxOptions.type (pod, every container): unset, "", container_t,
                     container_init_t, container_kvm_t or container_engine_t; .user, .role: unset
  /proc mount type   securityContext.procMount of every container: unset or Default
  Seccomp            seccompProfile.type (pod, every container): not Unconfined
  Sysctls            spec.securityContext.sysctls[*].name: only the safe set below

"Every container" means containers, initContainers and ephemeralContainers. Prints one line per
violation ("FILE: KIND NAME: control: detail") and exits 1 on any; else one "baseline: ok" line per
pod and exit 0. Exit 2 on usage or unreadable input."""
import sys

import yaml

CAPS = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
        "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
           "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
           "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
           "net.ipv4.tcp_keepalive_probes"}
APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
TEMPLATE_KINDS = {"Job", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController"}


def pod_of(doc):
    """(metadata, spec) of the pod a document makes, or None when it makes none."""
    kind = doc.get("kind")
    if kind == "Pod":
        return doc.get("metadata") or {}, doc.get("spec") or {}
    if kind in TEMPLATE_KINDS:
        t = (doc.get("spec") or {}).get("template") or {}
        return t.get("metadata") or {}, t.get("spec") or {}
    if kind == "CronJob":
        t = ((((doc.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}).get("template")) or {}
        return t.get("metadata") or {}, t.get("spec") or {}
    if kind == "PodTemplate":
        t = doc.get("template") or {}
        return t.get("metadata") or {}, t.get("spec") or {}
    return None


def containers(spec):
    for field in ("containers", "initContainers", "ephemeralContainers"):
        for i, c in enumerate(spec.get(field) or []):
            yield f"{field}[{i}] {c.get('name', '?')}", c


def check(meta, spec):
    """Every baseline violation of one pod, as "control: detail" strings."""
    v = []
    psc = spec.get("securityContext") or {}
    ctrs = list(containers(spec))

    def sc(c):
        return c.get("securityContext") or {}

    # HostProcess
    if (psc.get("windowsOptions") or {}).get("hostProcess"):
        v.append("HostProcess: spec.securityContext.windowsOptions.hostProcess is true")
    for name, c in ctrs:
        if (sc(c).get("windowsOptions") or {}).get("hostProcess"):
            v.append(f"HostProcess: {name}: windowsOptions.hostProcess is true")
    # Host namespaces
    for f in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(f):
            v.append(f"Host namespaces: spec.{f} is true")
    # Privileged containers
    for name, c in ctrs:
        if sc(c).get("privileged"):
            v.append(f"Privileged containers: {name}: securityContext.privileged is true")
    # Capabilities
    for name, c in ctrs:
        extra = sorted(set((sc(c).get("capabilities") or {}).get("add") or []) - CAPS)
        if extra:
            v.append(f"Capabilities: {name}: capabilities.add has {', '.join(extra)} (beyond the baseline set)")
    # HostPath volumes
    for i, vol in enumerate(spec.get("volumes") or []):
        if vol.get("hostPath") is not None:
            v.append(f"HostPath volumes: spec.volumes[{i}] {vol.get('name', '?')} is a hostPath")
    # Host ports
    for name, c in ctrs:
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                v.append(f"Host ports: {name}: hostPort {p['hostPort']}")
    # AppArmor
    for where, s in [("spec.securityContext", psc)] + [(n, sc(c)) for n, c in ctrs]:
        t = (s.get("appArmorProfile") or {}).get("type")
        if t is not None and t not in ("RuntimeDefault", "Localhost"):
            v.append(f"AppArmor: {where}: appArmorProfile.type {t}")
    for k, val in ((meta.get("annotations") or {}).items()):
        if k.startswith(APPARMOR_PREFIX) and val and val != "runtime/default" and not str(val).startswith("localhost/"):
            v.append(f"AppArmor: annotation {k}={val}")
    # SELinux
    for where, s in [("spec.securityContext", psc)] + [(n, sc(c)) for n, c in ctrs]:
        o = s.get("seLinuxOptions")
        if o is None:
            continue
        if o.get("type", "") not in SELINUX_TYPES:
            v.append(f"SELinux: {where}: seLinuxOptions.type {o.get('type')}")
        for f in ("user", "role"):
            if o.get(f):
                v.append(f"SELinux: {where}: seLinuxOptions.{f} is set")
    # /proc mount type
    for name, c in ctrs:
        pm = sc(c).get("procMount")
        if pm not in (None, "Default"):
            v.append(f"/proc mount type: {name}: procMount {pm}")
    # Seccomp
    for where, s in [("spec.securityContext", psc)] + [(n, sc(c)) for n, c in ctrs]:
        if (s.get("seccompProfile") or {}).get("type") == "Unconfined":
            v.append(f"Seccomp: {where}: seccompProfile.type Unconfined")
    # Sysctls
    for s in psc.get("sysctls") or []:
        if s.get("name") not in SYSCTLS:
            v.append(f"Sysctls: {s.get('name')} is not in the safe set")
    return v


def main(paths):
    if not paths:
        print("usage: pss_baseline.py FILE.yaml...", file=sys.stderr)
        return 2
    bad = pods = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                docs = [d for d in yaml.safe_load_all(f) if isinstance(d, dict)]
        except (OSError, yaml.YAMLError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 2
        for doc in docs:
            pod = pod_of(doc)
            if pod is None:
                continue
            pods += 1
            what = f"{doc.get('kind')} {(doc.get('metadata') or {}).get('name', '?')}"
            found = check(*pod)
            for msg in found:
                print(f"{path}: {what}: {msg}")
            bad += len(found)
            if not found:
                print(f"{path}: {what}: baseline: ok")
    if not pods:
        print(f"{' '.join(paths)}: no pod or pod template to check", file=sys.stderr)
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
