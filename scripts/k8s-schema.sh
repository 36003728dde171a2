#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Kubernetes API schemas that tests/e2e/deploy.bats validates deploy/kubernetes/job.yaml
# against, offline: the npm package kubernetes-models (JSON Schema validators compiled with ajv
# from the Kubernetes OpenAPI spec, one per API type; 4.5.1 covers batch/v1 Job's
# backoffLimitPerIndex, maxFailedIndexes, podFailurePolicy and successPolicy, and runs on node >= 14),
# pinned by scripts/k8s-schema/package-lock.json (versions and tarball hashes), into a cache
# directory outside the repository, and print that directory:
#
#   PROCTOR_K8S_SCHEMA_DIR=/var/cache/proctor/k8s-schema
#
# Idempotent: when the pinned tree is there it installs nothing. scripts/k8s-validate.js uses it.
set -eu

VERSION=4.5.1

usage() {
	cat <<USAGE
usage: scripts/k8s-schema.sh [--check] [--help]

Install kubernetes-models $VERSION from the npm registry into \$PROCTOR_K8S_SCHEMA_DIR (default
/var/cache/proctor/k8s-schema), then print PROCTOR_K8S_SCHEMA_DIR=DIR. Does nothing when the pinned
version is installed. Needs node and npm (scripts/agents.sh installs them).

  --check   install nothing: print the directory and exit 0 when installed, else exit 1
  --help    this text

Exit status: 0 ok, 1 not installed (--check) or install failed, 2 usage error.
USAGE
}

# shellcheck disable=SC2034 # read by npm-pinned.sh
NAME=k8s-schema
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/npm-pinned.sh
. "$HERE/npm-pinned.sh"
pinned_args "$@"
pinned_dir "${PROCTOR_K8S_SCHEMA_DIR:-/var/cache/proctor/k8s-schema}" PROCTOR_K8S_SCHEMA_DIR

# installed DIR: the pinned lock file was installed there and the package is the pinned version.
installed() {
	cmp -s "$1/package-lock.json" "$HERE/k8s-schema/package-lock.json" &&
	[ "$(sed -n 's/^  "version": "\([^"]*\)",*$/\1/p' "$1/node_modules/kubernetes-models/package.json" \
		2>/dev/null | head -n 1)" = "$VERSION" ] &&
	[ -f "$1/node_modules/kubernetes-models/_schemas/IoK8sApiBatchV1JobSpec.js" ]
}

if installed "$DIR"; then
	echo "PROCTOR_K8S_SCHEMA_DIR=$DIR"
	exit 0
fi
if [ "$check" -eq 1 ]; then
	echo "k8s-schema: kubernetes-models $VERSION is not installed in $DIR (run scripts/k8s-schema.sh)" >&2
	exit 1
fi
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	die "node and npm are missing (apt-get install nodejs npm, or scripts/agents.sh as root)"
fi

verify() { :; }
pinned_install "$HERE/k8s-schema" "installing kubernetes-models $VERSION into $DIR" --omit=optional
echo "PROCTOR_K8S_SCHEMA_DIR=$DIR"
