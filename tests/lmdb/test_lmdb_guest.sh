#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_lmdb_guest.sh - an unmodified LMDB program (lmdb_commits) on a real
# fsdax file, under the LD_PRELOAD shim and with the kernel's msync, in the
# dax-vm guest booted with the backports kernel:
#
#   ../shared/dax-vm/run --kernel backports -- tests/lmdb/test_lmdb_guest.sh build
#
# (.ci/realdax.sh runs it in its backports boot.)  In $DAX_VM_FSDAX_DIR:
#   1. lmdb_commits creates two environments (before the daemon: LMDB
#      refuses a zero-filled file), then daxtrackd starts on a private
#      socket, config, state and runtime directory with a region on the
#      second's data.mdb (the daemon must take the existing file as it is:
#      checked by its checksum);
#   2. commits/s: N transactions with the kernel's msync on the first, then
#      N under LD_PRELOAD=libdaxtrack-preload.so on the second, and N more
#      with the shim in whole-range mode (DAXTRACK_TRACK=0: each msync
#      persists its whole range), ROUNDS times in turns; verify, mdb_stat,
#      mdb_dump of the first;
#   3. a run with the shim's trace (DAXTRACK_PRELOAD_TRACE) and the
#      program's page diff, during which the daemon is killed (SIGKILL) and
#      started again: the run must finish without an error; the same on
#      the socket path (DAXTRACK_FAST_PATH=0: each msync an FSYNC to the
#      daemon), where the new daemon must count the client tracking; a run
#      killed itself (SIGKILL) and verified against its stamp; after each, verify,
#      mdb_stat, mdb_dump; tests/preload-trace-check.py (its lines
#      "lmdb-trace-check: ..."): every page a commit changed was flushed
#      and drained before its msync returned (on real DAX only: elsewhere
#      the daemon flushes, and the trace has no flushes).
# Prints "lmdb: commits/s (median of ...): kernel msync X, shim Y
# (shim/kernel = R); runs: ..." and the closing line
# "test_lmdb_guest: N passed, N failed"; exit 0 only if all passed.
#
# Usage: test_lmdb_guest.sh [--no-shim] BUILD_DIR
#   --no-shim  steps 2 and 3 run without LD_PRELOAD (the kernel's msync
#              under a running daemon): for a tree without lib/preload.
#              Without it, a missing libdaxtrack-preload.so is a failure,
#              never a skip.
# Environment: DAX_VM_FSDAX_DIR (else a directory of /dev/shm: the host,
# no real DAX), DT_LMDB_COMMITS (N, default 1000), DT_LMDB_ROUNDS (the
# measured runs of each, in turns, default 3), DT_LMDB_CHECKED (the commits
# of the checked run, default 300).
set -uo pipefail

SHIM=1
if [[ ${1:-} == --no-shim ]]; then
	SHIM=0
	shift
fi
if [[ $# -ne 1 || ! -d $1 ]]; then
	sed -n '4,45s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
fi
B=$(cd "$1" && pwd -P)
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
N=${DT_LMDB_COMMITS:-1000}
ROUNDS=${DT_LMDB_ROUNDS:-3}
CHECKED=${DT_LMDB_CHECKED:-300}
PROG=$B/tests/lmdb/lmdb_commits
DAEMON=$B/daemon/daxtrackd
CTL=$B/tools/daxtrackctl/daxtrackctl
PRELOAD=$B/lib/preload/libdaxtrack-preload.so
CHECK=$SRC/../preload-trace-check.py
TAG=lmdb
FINISH_NAME=test_lmdb_guest
# shellcheck source=tests/preload-test-lib.sh
. "$SRC/../preload-test-lib.sh"

base=${DAX_VM_FSDAX_DIR:-}
if [[ -z $base ]]; then
	base=$(mktemp -d /dev/shm/test_lmdb_guest.XXXXXX) || exit 1
	readonly scratch=$base
	trap 'kill_daemon; rm -rf "$scratch"' EXIT
	echo "lmdb: DAX_VM_FSDAX_DIR is not set: running in $base (no real DAX)"
fi
W=$base/lmdb
D=$W/daemon
SOCK=$D/daxtrackd.sock
rm -rf "$W" && mkdir -p "$D" || exit 1
for p in "$PROG" "$DAEMON" "$CTL"; do
	[[ -x $p ]] || { fail "$p is missing (build it)"; finish; }
done
for t in mdb_stat mdb_dump python3; do
	command -v "$t" >/dev/null || { fail "$t is missing (.ci/install-deps.sh)"; finish; }
done
if [[ $SHIM -eq 1 && ! -f $PRELOAD ]]; then
	fail "the shim $PRELOAD is missing (build it, or --no-shim for a tree without it)"
	finish
fi

# db_checks DIR STAMP: the program's verify, mdb_stat and mdb_dump.
db_checks()
{
	local dir=$1 stamp=$2 n

	check "verify $dir" "$PROG" verify ${stamp:+-s "$stamp"} "$dir"
	check "mdb_stat $dir" mdb_stat -e "$dir"
	n=$(mdb_dump "$dir" | grep -c '^ 6b6579')
	if [[ $n -eq 1024 ]]; then
		pass "mdb_dump $dir: 1024 keys"
	else
		fail "mdb_dump $dir: $n keys, expected 1024"
	fi
}

# ---- 1. two environments, daxtrackd with a region on the second ----
check "create $W/kernel" "$PROG" create "$W/kernel"
DB=$W/shim

# The environment under the shim: LD_PRELOAD (unless --no-shim) and the socket.
shim_env=(env DAXTRACK_SOCKET="$SOCK")
[[ $SHIM -eq 1 ]] && shim_env+=(LD_PRELOAD="$PRELOAD")

check "create $DB" "$PROG" create "$DB"
start_on_region lmdb "$DB/data.mdb" ""

# ---- 2. commits/s: the kernel's msync and the shim, in turns ----
for r in $(seq "$ROUNDS"); do
	check "kernel msync: $N commits (round $r)" run_rate kernel "$PROG" run "$W/kernel" "$N"
	check "shim: $N commits (round $r)" run_rate shim "${shim_env[@]}" "$PROG" run "$DB" "$N"
	[[ $SHIM -eq 1 ]] && check "shim, whole-range: $N commits (round $r)" run_rate whole \
		"${shim_env[@]}" DAXTRACK_TRACK=0 "$PROG" run "$DB" "$N"
done
db_checks "$W/kernel" ""

# ---- 3. the shim: the daemon killed, the program killed ----

# The checked run: trace and page diff, the daemon killed and started again.
# The program's page diff goes into the shim's trace file (both append).
# On real DAX its msyncs persist in-process and need no daemon: the client
# need not reconnect while it runs (printed, not checked).
from=$(committed "$DB")
across_restart "checked run" $((from + CHECKED / 4)) "${shim_env[@]}" \
	DAXTRACK_PRELOAD_TRACE="$W/trace" "$PROG" run -s "$W/stamp" -d "$W/trace" -p 2 "$DB" "$CHECKED"
echo "lmdb: checked run: after the restart, while the run lasted:" \
	"${seen:-no tracking client seen}"
db_checks "$DB" "$W/stamp"
if [[ $SHIM -eq 1 && -z ${DAX_VM_FSDAX_DIR:-} ]]; then
	# Not persistent memory: the daemon flushes (msync), the trace has no F.
	echo "lmdb: no trace check without real DAX"
elif [[ $SHIM -eq 1 ]]; then
	check "trace: every changed page flushed before its msync returned" \
		python3 "$CHECK" --name lmdb "$W/trace"
fi

# The socket path (DAXTRACK_FAST_PATH=0): each msync is an FSYNC to the
# daemon, so the kill interrupts them: the client reconnects, resends, and
# the new daemon must count it as tracking.
from=$(committed "$DB")
across_restart "socket path" $((from + 50)) "${shim_env[@]}" DAXTRACK_FAST_PATH=0 \
	"$PROG" run -s "$W/stamp" -p 2 "$DB" 200
if [[ $SHIM -eq 1 && -n $seen ]]; then
	pass "socket path: the new daemon counts the client ($seen)"
elif [[ $SHIM -eq 1 ]]; then
	fail "socket path: the new daemon never counted the client tracking while it ran"
fi
db_checks "$DB" "$W/stamp"

from=$(committed "$DB")
# A run killed itself: LMDB's last commit is there, as its stamp says.
db_checks_stamped() { db_checks "$DB" "$W/stamp"; }
kill_run $((from + 50)) db_checks_stamped "${shim_env[@]}" "$PROG" run -s "$W/stamp" -p 1 \
	"$DB" 100000
check "daxtrackd still serves" "$CTL" -s "$SOCK" status
stop_daemon
db_checks "$DB" "$W/stamp"

what=shim
[[ $SHIM -eq 1 ]] || what="no-shim"
print_rates "$what"
finish
