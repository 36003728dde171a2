#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages proctor builds and tests with (GNU parallel: tests/e2e/parallel.bats
# and bench/suite_parallel.sh run a suite through it). Idempotent: installs only what is
# missing, and refreshes the package lists first only when something is missing (a fresh machine
# has none). Must run as root. `deps.sh fuzz` also installs libFuzzer for `make fuzz`, `deps.sh
# lint` clang-format, clang-tidy and cppcheck for `make lint`, `deps.sh container` runc,
# debootstrap and the containers default seccomp profile for `make test-container`; `deps.sh all`
# (CI) installs everything any make target uses, in one go.
set -eu

PKGS="build-essential pkg-config libjansson-dev libssl-dev libcap-ng-dev libcmocka-dev bats
      python3 python3-yaml procps util-linux mandoc gcovr binutils clang parallel"
if [ "${1:-}" = fuzz ] || [ "${1:-}" = all ]; then
	PKGS="$PKGS libclang-rt-dev"
fi
if [ "${1:-}" = lint ] || [ "${1:-}" = all ]; then
	PKGS="$PKGS clang-format clang-tidy cppcheck"
fi
if [ "${1:-}" = container ] || [ "${1:-}" = all ]; then
	PKGS="$PKGS runc debootstrap golang-github-containers-common"
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing:$missing" >&2
	echo "deps: run as root: apt-get update && apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi

echo "deps: installing:$missing"
# A fresh machine's apt-daily may hold the dpkg lock for a while after boot: wait for it.
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -q
# shellcheck disable=SC2086
apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
