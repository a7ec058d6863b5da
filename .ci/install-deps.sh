#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# install-deps.sh - install what daxtrack's build and tests need on Debian 12.
#
# Run as root (or with sudo available).  Idempotent: when every package is
# already installed it does not touch apt at all, so repeated runs are quick.
set -euo pipefail

PACKAGES=(
	build-essential		# gcc, make, libc headers
	meson
	ninja-build
	pkg-config
	clang			# ThreadSanitizer builds, later libFuzzer
	libclang-rt-14-dev	# clang's sanitizer and fuzzer runtimes
	liburcu-dev		# the tree's RCU readers (urcu-memb)
	libpmem-dev		# the daemon (persistent memory)
	libndctl-dev		# the daemon (DAX namespaces)
	libcxl-dev		# CXL memdevs, regions, health (optional in meson)
	libsystemd-dev		# the daemon (sd_notify, socket activation)
	systemd			# systemd.pc (unit dir), systemd-socket-activate for the tests
	libjson-c-dev		# daxtrackctl --json
	bash-completion		# daxtrackctl's completion install dir
	valgrind		# memcheck run of the unit suite
	python3			# test result parsing (meson needs it too)
	scdoc			# man pages
	liblmdb-dev		# tests/lmdb: an unmodified LMDB program (optional in meson)
	lmdb-utils		# mdb_stat, mdb_dump: LMDB's own check of that test's database
	libgdbm-dev		# tests/dbs: an unmodified GDBM program (optional in meson)
	gdbmtool		# GDBM's own reading of that test's database
	libtdb-dev		# tests/dbs: an unmodified TDB program (optional in meson)
	tdb-tools		# tdbtool check: TDB's own check of that test's database
	libjudy-dev		# dt-bench tree: JudyL, the comparison (optional in meson)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	if [[ $status != "install ok installed" ]]; then
		missing+=("$pkg")
	fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
	echo "install-deps: all ${#PACKAGES[@]} packages already installed"
	exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
	if ! command -v sudo >/dev/null; then
		echo "install-deps: must run as root (missing: ${missing[*]})" >&2
		exit 1
	fi
	SUDO=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
echo "install-deps: done"
