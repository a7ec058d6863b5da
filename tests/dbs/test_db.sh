#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_db.sh - an unmodified GDBM or TDB program (gdbm_commits, tdb_commits)
# under the LD_PRELOAD shim and with the kernel's msync, on a file that grows
# under a daxtrackd region that follows it.  On the host (meson, the unit
# suite: a directory of /dev/shm) and in the dax-vm guest booted
# with the backports kernel, on ext4-DAX:
#
#   ../shared/dax-vm/run --kernel backports -- tests/dbs/test_db.sh gdbm build
#
# (.ci/realdax.sh runs it, for both, in its backports boot.)  In
# $DAX_VM_FSDAX_DIR/DB (else a directory of /dev/shm):
#   1. the program creates two databases (each a non-zero multiple of 4096
#      bytes: what a region file must be when the daemon starts), then
#      daxtrackd starts on a private socket, config, state and runtime
#      directory with a region without "size =" on the second (it follows
#      the file as it grows); the daemon must leave the file as it was;
#   2. a run of CHECKED commits with the shim's trace (DAXTRACK_PRELOAD_TRACE)
#      and the program's page diff in the same file, during which the file
#      grows, then a run of 100 during which the daemon is killed (SIGKILL)
#      and started again: the runs must finish without an error, the daemon
#      must have followed the growth (its log's "grew from"); the
#      database's checks; tests/preload-trace-check.py: every page a commit
#      changed was flushed (and drained) or flushed by the daemon before the
#      commit's last persist returned.  With DT_DB_TRACE_ACROSS_KILL=1 the
#      daemon is killed during the traced run (as the LMDB test does, and
#      .ci/realdax.sh for GDBM), else in a run of its own after it;
#   3. commits/s: the first database brought to the same count, then N
#      transactions with the kernel's msync on the first and N under
#      LD_PRELOAD=libdaxtrack-preload.so on the second, ROUNDS times in
#      turns; the database's checks of the first;
#   4. a run killed itself (SIGKILL, in its pause after a commit: GDBM has
#      no recovery of an update cut in the middle) and the database's checks
#      against its stamp; the daemon still serves, stops cleanly at SIGTERM,
#      and the checks once more.
# The database's checks: the program's verify (every record against what
# the committed transactions put; the count against the stamp), then the
# database's own tool: GDBM's `gdbmtool -r FILE count` and `list` (every
# bucket read), TDB's `tdbtool FILE check`; each must count the records the
# verify counted.
# Prints "DB: commits/s (median of ...): kernel msync X, shim Y (shim/kernel
# = R); runs: ..." and the closing line "test_db_DB: N passed, N failed";
# exit 0 only if all passed.
#
# Usage: test_db.sh gdbm|tdb BUILD_DIR
# Environment: DAX_VM_FSDAX_DIR, DT_DB_COMMITS (N, default 1000),
# DT_DB_ROUNDS (default 3), DT_DB_CHECKED (the commits of the checked run,
# default 300), DT_DB_UNPLACED_OK=1 (the trace check with --unplaced-ok:
# for a shim whose trace cannot place the flushes of a file grown since
# the region was attached), DT_DB_TRACE_ACROSS_KILL=1 (above).
set -uo pipefail

if [[ $# -ne 2 || ! $1 =~ ^(gdbm|tdb)$ || ! -d $2 ]]; then
	sed -n '4,51s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
fi
TAG=$1
B=$(cd "$2" && pwd -P)
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
N=${DT_DB_COMMITS:-1000}
ROUNDS=${DT_DB_ROUNDS:-3}
CHECKED=${DT_DB_CHECKED:-300}
PROG=$B/tests/dbs/${TAG}_commits
DAEMON=$B/daemon/daxtrackd
CTL=$B/tools/daxtrackctl/daxtrackctl
PRELOAD=$B/lib/preload/libdaxtrack-preload.so
CHECK=$SRC/../preload-trace-check.py
FINISH_NAME=test_db_$TAG
# shellcheck source=tests/preload-test-lib.sh
. "$SRC/../preload-test-lib.sh"

base=${DAX_VM_FSDAX_DIR:-}
if [[ -z $base ]]; then
	base=$(mktemp -d "/dev/shm/test_db_$TAG.XXXXXX") || exit 1
	readonly scratch=$base
	trap 'kill_daemon; rm -rf "$scratch"' EXIT
	echo "$TAG: DAX_VM_FSDAX_DIR is not set: running in $base (no real DAX)"
fi
W=$base/$TAG
D=$W/daemon
SOCK=$D/daxtrackd.sock
DB=$W/shim.$TAG
KDB=$W/kernel.$TAG
rm -rf "$W" && mkdir -p "$D" || exit 1
tool=gdbmtool
[[ $TAG == tdb ]] && tool=tdbtool
for p in "$PROG" "$DAEMON" "$CTL" "$PRELOAD"; do
	[[ -e $p ]] || { fail "$p is missing (build it)"; finish; }
done
for t in "$tool" python3; do
	command -v "$t" >/dev/null || { fail "$t is missing (.ci/install-deps.sh)"; finish; }
done

# records FILE: the count of records the database's own tool finds.
records()
{
	if [[ $TAG == gdbm ]]; then
		gdbmtool -q -N -r "$1" count | sed -nE 's/^There (are|is) ([0-9]+) items?.*/\2/p'
	else
		tdbtool "$1" check | sed -nE 's/^Database integrity is OK and has ([0-9]+) records.*/\1/p'
	fi
}

# db_checks FILE [STAMP]: the program's verify, then the database's own tool.
db_checks()
{
	local file=$1 stamp=${2:-} out keys n listed

	out=$("$PROG" verify ${stamp:+-s "$stamp"} "$file")
	check "verify $file" test $? -eq 0
	echo "$out"
	keys=$(sed -nE 's/.*verify: [0-9]+ transactions, ([0-9]+) keys.*/\1/p' <<<"$out")
	n=$(records "$file")
	if [[ -n $keys && $n == $((keys + 1)) ]]; then
		pass "$tool: $file: $n records"
	else
		fail "$tool: $file: '$n' records, expected $((${keys:-0} + 1)) (the keys and the count)"
		[[ $TAG == tdb ]] && tdbtool "$file" check
	fi
	[[ $TAG == gdbm ]] || return
	listed=$(gdbmtool -q -N -r "$file" list | wc -l)
	if [[ $listed == "$n" ]]; then
		pass "gdbmtool list: $file: $listed records"
	else
		fail "gdbmtool list: $file: $listed records, count says $n"
	fi
}

# ---- 1. two databases, daxtrackd with a region on the second ----
check "create $KDB" "$PROG" create "$KDB"
check "create $DB" "$PROG" create "$DB"
size0=$(stat -c %s "$DB")
start_on_region "$TAG" "$DB" ", no size: it follows the file"

shim_env=(env DAXTRACK_SOCKET="$SOCK" LD_PRELOAD="$PRELOAD")

# ---- 2. the checked run: trace and page diff; the daemon killed ----
traced=("${shim_env[@]}" DAXTRACK_PRELOAD_TRACE="$W/trace" "$PROG" run -s "$W/stamp" \
	-d "$W/trace" -p 2 "$DB" "$CHECKED")
if [[ ${DT_DB_TRACE_ACROSS_KILL:-0} == 1 ]]; then
	across_restart "checked run" $((CHECKED / 4)) "${traced[@]}"
else
	check "checked run" "${traced[@]}"
	from=$(committed "$DB")
	across_restart "run across a restart" $((from + 25)) "${shim_env[@]}" "$PROG" run \
		-s "$W/stamp" -p 2 "$DB" 100
fi
echo "$TAG: after the restart, while the run lasted: ${seen:-no tracking client seen}"
db_checks "$DB" "$W/stamp"
unplaced=()
if [[ ${DT_DB_UNPLACED_OK:-0} == 1 ]]; then
	unplaced=(--unplaced-ok)
	echo "$TAG: DT_DB_UNPLACED_OK=1: commits with a flush the shim's trace could not place" \
		"(F ?) are counted, their pages not checked"
fi
check "trace: every changed page flushed before its commit's last persist returned" \
	python3 "$CHECK" --name "$TAG" "${unplaced[@]}" "$W/trace"
echo "$TAG: the file grew from $size0 bytes to $(stat -c %s "$DB") in the checked run"
if grep -qE "region \"$TAG\".*grew from" "$D/daxtrackd.log"; then
	pass "the daemon followed the file's growth ($(grep -cE "region \"$TAG\".*grew from" \
		"$D/daxtrackd.log") times logged)"
else
	fail "the daemon never logged the growth of $DB"
fi

# ---- 3. commits/s: the kernel's msync and the shim, in turns ----
# The first database is brought to where the checked run left the second.
check "kernel msync: $CHECKED commits (not measured)" "$PROG" run "$KDB" "$CHECKED"
for r in $(seq "$ROUNDS"); do
	check "kernel msync: $N commits (round $r)" run_rate kernel "$PROG" run "$KDB" "$N"
	check "shim: $N commits (round $r)" run_rate shim "${shim_env[@]}" "$PROG" run "$DB" "$N"
done
db_checks "$KDB"
echo "$TAG: file sizes after the measured runs: kernel $(stat -c %s "$KDB")," \
	"shim $(stat -c %s "$DB")"

# ---- 4. the program killed ----
db_checks_stamped() { db_checks "$DB" "$W/stamp"; }
from=$(committed "$DB")
kill_run $((from + 20)) db_checks_stamped "${shim_env[@]}" "$PROG" run -s "$W/stamp" -p 200 \
	"$DB" 100000
check "daxtrackd still serves" "$CTL" -s "$SOCK" status
"$CTL" -s "$SOCK" stats | grep -E 'region|truncat|sigbus'
stop_daemon
db_checks "$DB" "$W/stamp"
print_rates shim
finish
