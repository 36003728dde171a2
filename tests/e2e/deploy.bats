#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The shipped deployment files (doc/SCALE.md), each checked against what it claims:
#  - deploy/kubernetes/job.yaml validates offline against the Kubernetes API schema (the npm
#    package kubernetes-models, pinned and installed by scripts/k8s-schema.sh; skipped with the
#    reason when it cannot be installed), with unknown fields refused; it passes the Pod Security
#    Standards "baseline" checker (pss_baseline.py), which must refuse copies with SYS_ADMIN,
#    privileged, hostPID and each other baseline control broken; its podFailurePolicy maps exit 4
#    to FailIndex, 3 to Count and disruptions to Ignore, restartPolicy Never, completionMode
#    Indexed, the exact capability set, the suite and the results volumes.
#  - deploy/slurm/proctor-array.sbatch parses (bash -n), runs one index of a real suite with the
#    real proctor as SLURM_ARRAY_TASK_ID says (root), and requeues on exit 3 only (a fake proctor
#    and scontrol).
#  - Containerfile: containerfile_check.py checks its final stage's packages against ldd and the
#    libraries proctor dlopens, and that it has no -dev package and no compiler.
# Run as root under `flock /tmp/proctor-e2e.lock` (the Slurm run uses uids 2000 and 2100).

bats_require_minimum_version 1.5.0
load helpers

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
JOB=$TOP/deploy/kubernetes/job.yaml
SBATCH=$TOP/deploy/slurm/proctor-array.sbatch
AGENTS=$BATS_TEST_DIRNAME/agents
CHECK=$BATS_TEST_DIRNAME/result_check.py
RUN_UIDS=2000,2001,2100,2101

setup() {
	T=$(mktemp -d /tmp/proctor-deploy-XXXXXX)
	chmod 0755 "$T"
	procs_mark
	# The YAML files need PyYAML (Debian: python3-yaml, which scripts/deps.sh installs).
	PY=python3
	"$PY" -c 'import yaml' 2>/dev/null || PY=/usr/bin/python3
}

teardown() {
	[ -n "${T:-}" ] || return 0
	procs_left_fail
}

need_yaml() {
	"$PY" -c 'import yaml' 2>/dev/null || skip "python3 cannot import yaml (sh scripts/deps.sh installs python3-yaml)"
}

# mutate EXPR OUT: a copy of job.yaml with the Python statement EXPR applied to the document d
# (the pod spec is p, its first container c).
mutate() {
	"$PY" - "$JOB" "$2" "$1" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
p = d["spec"]["template"]["spec"]
c = p["containers"][0]
exec(sys.argv[3])
yaml.safe_dump(d, open(sys.argv[2], "w"))
PY
}

# jq-free access to the manifest: jobq 'python expression over d'.
jobq() { "$PY" -c "import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$JOB" "$1"; }

@test "k8s: job.yaml validates offline against the Kubernetes batch/v1 Job schema, unknown fields refused" {
	need_yaml
	command -v node >/dev/null || skip "node is not installed (scripts/k8s-schema.sh needs node and npm)"
	if ! out=$(sh "$TOP/scripts/k8s-schema.sh" --check 2>&1); then
		[ "$(id -u)" -eq 0 ] || [ -n "${PROCTOR_K8S_SCHEMA_DIR:-}" ] ||
			skip "the Kubernetes schemas are not installed and installing them needs root: sudo sh scripts/k8s-schema.sh"
		out=$(sh "$TOP/scripts/k8s-schema.sh" 2>&1) ||
			skip "the Kubernetes schemas (npm kubernetes-models) could not be installed, no registry? $(echo "$out" | tail -n 1)"
	fi
	dir=$(echo "$out" | sed -n 's/^PROCTOR_K8S_SCHEMA_DIR=//p')
	[ -d "$dir" ]
	"$PY" "$BATS_TEST_DIRNAME/k8s_yaml.py" "$JOB" >"$T/job.json"
	run node "$BATS_TEST_DIRNAME/k8s_validate.js" "$dir" "$T/job.json"
	[ "$status" -eq 0 ]
	[ "$output" = "ok batch/v1 Job #0 proctor-suite" ]
	# The validator can fail: a wrong enum, a wrong type and a misspelt key are each refused.
	mutate 'd["spec"]["completionMode"] = "indexed"; d["spec"]["completions"] = "100"; c["imagePullPolicy "] = "x"' "$T/bad.yaml"
	"$PY" "$BATS_TEST_DIRNAME/k8s_yaml.py" "$T/bad.yaml" >"$T/bad.json"
	run node "$BATS_TEST_DIRNAME/k8s_validate.js" "$dir" "$T/bad.json"
	[ "$status" -eq 1 ]
	[[ "$output" == *"/spec/completionMode: enum"* ]]
	[[ "$output" == *"/spec/completions: type"* ]]
	[[ "$output" == *"/spec/template/spec/containers/0/imagePullPolicy : unknown field"* ]]
}

@test "k8s: job.yaml passes the Pod Security Standards baseline checker with exactly the 7 capabilities" {
	need_yaml
	run "$PY" "$BATS_TEST_DIRNAME/pss_baseline.py" "$JOB"
	[ "$status" -eq 0 ]
	[ "$output" = "$JOB: Job proctor-suite: baseline: ok" ]
	[ "$(jobq 'sorted(d["spec"]["template"]["spec"]["containers"][0]["securityContext"]["capabilities"]["add"])')" = \
		"['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'SETGID', 'SETPCAP', 'SETUID']" ]
	[ "$(jobq 'd["spec"]["template"]["spec"]["containers"][0]["securityContext"]["capabilities"]["drop"]')" = "['ALL']" ]
	[ "$(jobq '[c.get("securityContext", {}).get(k) for c in d["spec"]["template"]["spec"]["containers"] for k in ("runAsUser", "allowPrivilegeEscalation", "privileged")]')" = "[0, False, False]" ]
	[ "$(jobq '[x["seccompProfile"]["type"] for x in (d["spec"]["template"]["spec"]["securityContext"], d["spec"]["template"]["spec"]["containers"][0]["securityContext"])]')" = \
		"['RuntimeDefault', 'RuntimeDefault']" ]
	[ "$(jobq '[k for k in ("hostPID", "hostNetwork", "hostIPC") if d["spec"]["template"]["spec"].get(k)]')" = "[]" ]
	# The namespace label the Job is meant for is documented in the file.
	grep -q 'pod-security.kubernetes.io/enforce=baseline' "$JOB"
}

@test "k8s: the baseline checker refuses SYS_ADMIN, privileged, hostPID and every other baseline control" {
	need_yaml
	local i=0 expr want
	while IFS='|' read -r want expr; do
		i=$((i + 1))
		mutate "$expr" "$T/bad-$i.yaml"
		run "$PY" "$BATS_TEST_DIRNAME/pss_baseline.py" "$T/bad-$i.yaml"
		echo "case $i ($want): status $status: $output"
		[ "$status" -eq 1 ]
		[[ "$output" == *": Job proctor-suite: $want"* ]]
	done <<'CASES'
Capabilities: containers[0] proctor: capabilities.add has SYS_ADMIN|c["securityContext"]["capabilities"]["add"].append("SYS_ADMIN")
Capabilities: containers[0] proctor: capabilities.add has NET_RAW|c["securityContext"]["capabilities"]["add"].append("NET_RAW")
Privileged containers: containers[0] proctor|c["securityContext"]["privileged"] = True
Host namespaces: spec.hostPID|p["hostPID"] = True
Host namespaces: spec.hostNetwork|p["hostNetwork"] = True
Host namespaces: spec.hostIPC|p["hostIPC"] = True
HostPath volumes: spec.volumes[1] results|p["volumes"][1] = {"name": "results", "hostPath": {"path": "/srv/results"}}
Host ports: containers[0] proctor: hostPort 8080|c["ports"] = [{"containerPort": 8080, "hostPort": 8080}]
Seccomp: spec.securityContext: seccompProfile.type Unconfined|p["securityContext"]["seccompProfile"]["type"] = "Unconfined"
Seccomp: containers[0] proctor: seccompProfile.type Unconfined|c["securityContext"]["seccompProfile"]["type"] = "Unconfined"
/proc mount type: containers[0] proctor: procMount Unmasked|c["securityContext"]["procMount"] = "Unmasked"
AppArmor: containers[0] proctor: appArmorProfile.type Unconfined|c["securityContext"]["appArmorProfile"] = {"type": "Unconfined"}
AppArmor: annotation container.apparmor.security.beta.kubernetes.io/proctor=unconfined|d["spec"]["template"]["metadata"]["annotations"] = {"container.apparmor.security.beta.kubernetes.io/proctor": "unconfined"}
SELinux: spec.securityContext: seLinuxOptions.type spc_t|p["securityContext"]["seLinuxOptions"] = {"type": "spc_t"}
SELinux: containers[0] proctor: seLinuxOptions.user is set|c["securityContext"]["seLinuxOptions"] = {"user": "system_u"}
Sysctls: kernel.msgmax is not in the safe set|p["securityContext"]["sysctls"] = [{"name": "kernel.msgmax", "value": "1"}]
HostProcess: spec.securityContext.windowsOptions.hostProcess is true|p["securityContext"]["windowsOptions"] = {"hostProcess": True}
Privileged containers: initContainers[0] init|p["initContainers"] = [{"name": "init", "image": "x", "securityContext": {"privileged": True}}]
CASES
	[ "$i" -eq 18 ]
}

@test "k8s: Indexed, restartPolicy Never, podFailurePolicy 4 FailIndex, 3 Count, disruptions Ignore; suite and results volumes" {
	need_yaml
	[ "$(jobq 'd["apiVersion"], d["kind"]')" = "('batch/v1', 'Job')" ]
	[ "$(jobq 'd["spec"]["completionMode"]')" = Indexed ]
	[ "$(jobq 'd["spec"]["template"]["spec"]["restartPolicy"]')" = Never ]
	[ "$(jobq 'd["spec"]["backoffLimitPerIndex"] >= 1 and d["spec"]["maxFailedIndexes"] >= 0')" = True ]
	[ "$(jobq 'all(isinstance(d["spec"][k], int) and d["spec"][k] > 0 for k in ("completions", "parallelism"))')" = True ]
	# Each exit code's action, as the Job controller reads the rules: the first match wins.
	rule() { jobq "next((r['action'] for r in d['spec']['podFailurePolicy']['rules'] if $1), None)"; }
	[ "$(rule '"onExitCodes" in r and r["onExitCodes"]["operator"] == "In" and 4 in r["onExitCodes"]["values"]')" = FailIndex ]
	[ "$(rule '"onExitCodes" in r and r["onExitCodes"]["operator"] == "In" and 3 in r["onExitCodes"]["values"]')" = Count ]
	[ "$(rule 'any(c["type"] == "DisruptionTarget" for c in r.get("onPodConditions", []))')" = Ignore ]
	[ "$(jobq '{r["onExitCodes"]["containerName"] for r in d["spec"]["podFailurePolicy"]["rules"] if "onExitCodes" in r}')" = "{'proctor'}" ]
	# A disrupted pod exits 3 (SIGTERM becomes a teardown): Ignore must come before Count.
	[ "$(jobq '[r["action"] for r in d["spec"]["podFailurePolicy"]["rules"]].index("Ignore") < [r["action"] for r in d["spec"]["podFailurePolicy"]["rules"]].index("Count")')" = True ]
	# The container runs proctor run on the suite; the index comes from JOB_COMPLETION_INDEX.
	[ "$(jobq '" ".join(d["spec"]["template"]["spec"]["containers"][0]["command"] + d["spec"]["template"]["spec"]["containers"][0]["args"])')" = \
		"/usr/bin/proctor run --suite /suite/suite.jsonl --out /results --termination-log /dev/termination-log --quiet" ]
	[ "$(jobq 'd["spec"]["template"]["spec"]["containers"][0]["terminationMessagePolicy"]')" = FallbackToLogsOnError ]
	[ "$(jobq 'd["spec"]["template"]["spec"]["containers"][0].get("terminationMessagePath", "/dev/termination-log")')" = /dev/termination-log ]
	[ "$(jobq '{m["mountPath"]: (m.get("readOnly", False), [v for v in d["spec"]["template"]["spec"]["volumes"] if v["name"] == m["name"]][0].keys() - {"name"}) for m in d["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]}')" = \
		"{'/suite': (True, {'persistentVolumeClaim'}), '/results': (False, {'persistentVolumeClaim'})}" ]
	[ "$(jobq 'd["spec"]["template"]["spec"]["automountServiceAccountToken"]')" = False ]
}

@test "slurm: the array script parses, refuses to run outside an array, requeues on exit 3 only" {
	run bash -n "$SBATCH"
	[ "$status" -eq 0 ]
	grep -Eq '^#SBATCH --array=0-[0-9]+' "$SBATCH"
	grep -q '^#SBATCH --requeue' "$SBATCH"
	# A fake proctor (exits $FAKE_RC, records its argv and index) and scontrol (records its argv);
	# as another user than root the script goes through sudo -n, faked too.
	mkdir "$T/bin"
	printf '#!/bin/sh\necho "$* idx=$SLURM_ARRAY_TASK_ID" >>"%s/proctor.log"\nexit "$FAKE_RC"\n' "$T" >"$T/bin/proctor"
	printf '#!/bin/sh\necho "$*" >>"%s/scontrol.log"\n' "$T" >"$T/bin/scontrol"
	printf '#!/bin/sh\n[ "$1" = -n ] && shift\nexec "$@"\n' >"$T/bin/sudo"
	chmod +x "$T/bin/"*
	sb() { run env -u JOB_COMPLETION_INDEX PATH="$T/bin:$PATH" PROCTOR="$T/bin/proctor" PROCTOR_SUITE=/s/suite.jsonl \
		PROCTOR_OUT=/o SLURM_ARRAY_JOB_ID=77 SLURM_ARRAY_TASK_ID=5 "$@" bash "$SBATCH"; }
	sb FAKE_RC=0
	[ "$status" -eq 0 ]
	[ "$(cat "$T/proctor.log")" = "run --quiet --suite /s/suite.jsonl --out /o idx=5" ]
	sb FAKE_RC=4
	[ "$status" -eq 4 ]
	[[ "$output" == *"exit 4): not retried"* ]]
	[ ! -e "$T/scontrol.log" ]
	sb FAKE_RC=3 SLURM_RESTART_COUNT=1
	[ "$status" -eq 3 ]
	[ "$(cat "$T/scontrol.log")" = "requeue 77_5" ]
	sb FAKE_RC=3 SLURM_RESTART_COUNT=2
	[ "$status" -eq 3 ]
	[[ "$output" == *"not requeued (restarts: 2 of 2)"* ]]
	[ "$(wc -l <"$T/scontrol.log")" -eq 1 ]
	run env -u SLURM_ARRAY_TASK_ID PROCTOR="$T/bin/proctor" bash "$SBATCH"
	[ "$status" -eq 2 ]
	[[ "$output" == *"SLURM_ARRAY_TASK_ID is not set"* ]]
}

@test "slurm: the array script runs index SLURM_ARRAY_TASK_ID of a real suite with the real proctor into OUT/<id>/" {
	[ "$(id -u)" -eq 0 ] || skip "proctor run needs root"
	"$PROCTOR" doctor --json | tr -d '\n ' | grep -q '"check":"landlock","ok":true' ||
		skip "no Landlock on this kernel: proctor run refuses to run without it"
	mkdir -p "$T/s/ws"
	cp "$AGENTS/exit-at-once.sh" "$T/s/"
	for id in a b; do
		printf '{"version":1,"id":"task-%s","workspace":{"from":"ws"},"agent":{"kind":"command","command":["./exit-at-once.sh","0"]},"limits":{"timeout_s":30}}\n' \
			"$id" >"$T/s/$id.json"
	done
	printf '"s/a.json"\n"s/b.json"\n' >"$T/suite.jsonl"
	run --separate-stderr env -u JOB_COMPLETION_INDEX PROCTOR="$PROCTOR" PROCTOR_SUITE="$T/suite.jsonl" \
		PROCTOR_OUT="$T/out" SLURM_ARRAY_JOB_ID=9 SLURM_ARRAY_TASK_ID=1 bash "$SBATCH"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "proctor-array: index 1 done (exit 0); results under $T/out" ]
	python3 "$CHECK" "$T/out/task-b/result.json" --status completed --exit-code 0
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); s = r["suite"]
assert (s["index"], s["index_from"], r["task_file"]) == (1, "SLURM_ARRAY_TASK_ID", sys.argv[2]), s' \
		"$T/out/task-b/result.json" "$T/s/b.json"
	[ "$(ls "$T/out")" = task-b ]
}

@test "Containerfile: the final stage installs every runtime library's package (ldd, dlopen), no -dev package, no compiler" {
	command -v dpkg >/dev/null || skip "dpkg is not installed: the check maps libraries to Debian packages"
	[ -z "${SANITIZE:-}" ] || skip "a sanitized build links the sanitizer runtimes, which the image does not ship"
	run python3 "$BATS_TEST_DIRNAME/containerfile_check.py" "$TOP/Containerfile" "$TOP" "$PROCTOR_BUILD"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "ok: final stage installs "* ]]
	for pkg in libjansson4 libssl3 libcap-ng0 libc6; do
		[[ "$output" == *" <- $pkg"* ]]
	done
	# The check can fail: the image without libssl3 (libcrypto is dlopened) and with a compiler.
	sed 's/ libssl3 / /; s/^ARG AGENT_PACKAGES=""/ARG AGENT_PACKAGES="gcc"/' "$TOP/Containerfile" >"$T/Containerfile"
	run python3 "$BATS_TEST_DIRNAME/containerfile_check.py" "$T/Containerfile" "$TOP" "$PROCTOR_BUILD"
	[ "$status" -eq 1 ]
	[[ "$output" == *"libcrypto.so.3 comes from libssl3, which the final stage does not install"* ]]
	[[ "$output" == *"final stage installs gcc"* ]]
}

@test "doc: SCALE.md describes every shipped file and README links it" {
	for f in Containerfile deploy/kubernetes/job.yaml deploy/slurm/proctor-array.sbatch; do
		[ -f "$TOP/$f" ]
		grep -qF "$f" "$TOP/doc/SCALE.md"
	done
	grep -qF '](doc/SCALE.md)' "$TOP/README.md"
	grep -q -- '--sshloginfile' "$TOP/doc/SCALE.md"
}
