#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-main.sh - build daxtrack (release) and run the main job.
#
# Usage: .ci/run-main.sh [-b BUILD_DIR]
#
# The main job ($DT_MAIN_JOB, default "daemon"):
#   daemon  start daxtrackd on its embedded default region (no configuration
#           file: a 64 MiB file in /var/lib/daxtrack), run the example client
#           dt-example against it, show `daxtrackctl status` and
#           `daxtrackctl list --dirty default`, then stop the daemon with
#           SIGTERM (it writes everything back and exits 0).
#   bench   dt-bench, every section.
# The socket is $DAXTRACK_SOCKET or /run/daxtrack/daxtrackd.sock.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD_DIR=${DT_MAIN_BUILD_DIR:-build-release}
if [[ ${1-} == -b || ${1-} == --build-dir ]]; then
	BUILD_DIR=${2:?missing build directory}
	shift 2
fi
JOB=${DT_MAIN_JOB:-daemon}
SOCK=${DAXTRACK_SOCKET:-/run/daxtrack/daxtrackd.sock}

build()
{
	if [[ -f $BUILD_DIR/build.ninja ]]; then
		meson setup --reconfigure "$BUILD_DIR" -Dbuildtype=release -Dtests=false
	else
		rm -rf "$BUILD_DIR"
		meson setup "$BUILD_DIR" -Dbuildtype=release -Dtests=false
	fi
	ninja -C "$BUILD_DIR"
}

daemon_pid=
stop_daemon()
{
	[[ -n $daemon_pid ]] || return 0
	kill -TERM "$daemon_pid" 2>/dev/null || true
	wait "$daemon_pid"
	local rc=$?
	daemon_pid=
	return $rc
}

job_daemon()
{
	local daemon=$BUILD_DIR/daemon/daxtrackd
	local ctl=$BUILD_DIR/tools/daxtrackctl/daxtrackctl
	local example=$BUILD_DIR/tools/dt-example

	echo "run-main: $daemon --foreground --socket $SOCK"
	"$daemon" --foreground --socket "$SOCK" &
	daemon_pid=$!
	trap 'stop_daemon' EXIT
	for _ in $(seq 100); do
		"$ctl" -s "$SOCK" version >/dev/null 2>&1 && "$ctl" -s "$SOCK" regions \
			>/dev/null 2>&1 && break
		kill -0 "$daemon_pid" 2>/dev/null || { echo "run-main: daxtrackd exited"; exit 1; }
		sleep 0.1
	done
	echo
	echo "run-main: $example -s $SOCK -n 16"
	"$example" -s "$SOCK" -n 16
	echo
	echo "run-main: daxtrackctl status"
	"$ctl" -s "$SOCK" status
	echo
	echo "run-main: daxtrackctl list --dirty default"
	"$ctl" -s "$SOCK" list --dirty default
	echo
	echo "run-main: stopping daxtrackd (SIGTERM)"
	trap - EXIT
	stop_daemon
	echo "run-main: daxtrackd exited 0"
}

build
case $JOB in
daemon)
	job_daemon
	;;
bench)
	"$BUILD_DIR/tools/dt-bench"
	;;
*)
	echo "run-main: unknown job '$JOB' (DT_MAIN_JOB)" >&2
	exit 2
	;;
esac
