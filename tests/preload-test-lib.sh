# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# preload-test-lib.sh - what the tests of unmodified programs under the
# LD_PRELOAD shim share (tests/lmdb/test_lmdb_guest.sh, tests/dbs/test_db.sh):
# sourced, after the caller has set
#   TAG      the prefix of the lines it prints ("lmdb", "gdbm", "tdb")
#   DAEMON   daxtrackd, CTL daxtrackctl
#   D        the daemon's directory (its daxtrackd.conf, written by the
#            caller; daxtrackd.log), SOCK its socket
#   W        the work directory (W/stamp: the program's stamp)
#   PROG     the program (PROG verify DB prints "verify: N transactions")
# Counts passed and failed; daemon_pid is the running daemon's.

passed=0
failed=0
daemon_pid=
declare -A rate=([kernel]="" [shim]="")

pass() { passed=$((passed + 1)); echo "ok $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }

# check NAME CMD...: one check, CMD's output in the log.
check()
{
	local name=$1

	shift
	if "$@"; then
		pass "$name"
	else
		fail "$name (exit $?)"
	fi
}

# kill_daemon: kill -9 the daemon if one runs (the EXIT trap, set here: a
# caller that sets its own calls it there too, so that a script that dies
# on an error leaves no daemon behind).
kill_daemon()
{
	[[ -z $daemon_pid ]] || kill -9 "$daemon_pid" 2>/dev/null
}
trap kill_daemon EXIT

# finish: kill the daemon if it runs, print the closing line
# "${FINISH_NAME}: N passed, N failed" and exit (0 only if all passed).
finish()
{
	[[ -n $daemon_pid ]] && kill -9 "$daemon_pid" 2>/dev/null
	echo "$FINISH_NAME: $passed passed, $failed failed"
	[[ $failed -eq 0 ]]
	exit
}

# run_rate KEY CMD...: a run of the program; its commits/s added to rate[KEY].
run_rate()
{
	local key=$1 out

	shift
	out=$("$@")
	local rc=$?
	echo "$out"
	rate[$key]+=" $(sed -nE 's/.* ([0-9]+) commits\/s.*/\1/p' <<<"$out")"
	return $rc
}

# median N...: the middle one.
median()
{
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# start_daemon: daxtrackd on D's configuration and SOCK, until it answers.
start_daemon()
{
	"$DAEMON" --foreground --config "$D/daxtrackd.conf" --socket "$SOCK" -v \
		>>"$D/daxtrackd.log" 2>&1 &
	daemon_pid=$!
	for _ in $(seq 200); do
		"$CTL" -s "$SOCK" status >/dev/null 2>&1 && return 0
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "daxtrackd did not come up; its log:"
	cat "$D/daxtrackd.log"
	return 1
}

# start_on_region NAME FILE NOTE: daxtrackd with one region, NAME, on the
# existing FILE (create = no, no size: it follows the file), NOTE said in the
# check's name; the daemon must leave FILE as it was (its checksum and size).
# Finishes the test if the daemon does not come up.
start_on_region()
{
	local sum size

	sum=$(cksum <"$2")
	size=$(stat -c %s "$2")
	cat >"$D/daxtrackd.conf" <<CONF
[daemon]
state_dir = $D/state
runtime_dir = $D/run
workers = 2

[region "$1"]
path = $2
create = no
CONF
	check "daxtrackd starts with the region on $2 ($size bytes$3)" start_daemon
	[[ -n $daemon_pid ]] && kill -0 "$daemon_pid" 2>/dev/null || finish
	"$CTL" -s "$SOCK" status
	if [[ $(cksum <"$2") == "$sum" && $(stat -c %s "$2") == "$size" ]]; then
		pass "the daemon left the existing $2 as it was"
	else
		fail "the daemon changed $2 (size $(stat -c %s "$2"), was $size)"
	fi
}

# stop_daemon: SIGTERM, and it must exit 0.
stop_daemon()
{
	local rc

	kill -TERM "$daemon_pid"
	wait "$daemon_pid"
	rc=$?
	daemon_pid=
	[[ $rc -eq 0 ]] && pass "daxtrackd stops cleanly" || fail "daxtrackd exited $rc on SIGTERM"
}

# committed DB: the count of transactions committed in DB (PROG's verify).
committed()
{
	"$PROG" verify "$1" | sed -nE 's/.*verify: ([0-9]+) transactions.*/\1/p'
}

# wait_stamp FILE COUNT PID: until the stamp says COUNT commits or PID ends.
wait_stamp()
{
	local n

	while kill -0 "$3" 2>/dev/null; do
		n=
		[[ -f $1 ]] && read -r n <"$1"
		[[ -n $n && $n -ge $2 ]] && return 0
		sleep 0.05
	done
	return 1
}

# across_restart LABEL COUNT CMD...: run CMD (the program's run -s $W/stamp)
# in the background, kill -9 the daemon once the stamp says COUNT commits,
# start it again; the run must finish without an error.  Sets seen: the new
# daemon's "tracking:" line while the run lasted, if it counted a client.
across_restart()
{
	local label=$1 count=$2 pid rc

	shift 2
	"$@" &
	pid=$!
	seen=
	if ! wait_stamp "$W/stamp" "$count" "$pid"; then
		wait "$pid"
		fail "$label: the run ended (exit $?) before the daemon could be killed"
		return
	fi
	kill -9 "$daemon_pid"
	wait "$daemon_pid" 2>/dev/null
	echo "$TAG: $label: daxtrackd killed after $(tr -d ' ' <"$W/stamp") commits"
	sleep 0.3
	check "$label: daxtrackd starts again" start_daemon
	while [[ -z $seen ]] && kill -0 "$pid" 2>/dev/null; do
		seen=$("$CTL" -s "$SOCK" status 2>/dev/null | grep -E '^tracking: [1-9]')
		[[ -n $seen ]] || sleep 0.2
	done
	wait "$pid"
	rc=$?
	if [[ $rc -eq 0 ]]; then
		pass "$label: the run across the daemon's restart finished"
	else
		fail "$label: the run across the daemon's restart exited $rc"
	fi
}

# kill_run COUNT VERIFY CMD...: run CMD (the program's run -s $W/stamp
# -p MS) in the background, kill -9 it once the stamp says COUNT commits
# (in its pause after that commit, most often), then run VERIFY (a function
# of the caller: the database's checks against the stamp).
kill_run()
{
	local count=$1 verify=$2 pid

	shift 2
	"$@" &
	pid=$!
	if wait_stamp "$W/stamp" "$count" "$pid"; then
		kill -9 "$pid"
		wait "$pid" 2>/dev/null
		echo "$TAG: the program killed after $(tr -d ' ' <"$W/stamp") commits"
		"$verify"
	else
		wait "$pid"
		fail "the run to kill ended (exit $?) before it was killed"
	fi
}

# print_rates WHAT: "TAG: commits/s (median of ROUNDS runs of N): kernel
# msync K, WHAT S (WHAT/kernel = R)...; runs: ..." from rate[kernel],
# rate[shim] and, when set, rate[whole].
print_rates()
{
	local what=$1 k s w=

	[[ -n ${rate[kernel]// /} && -n ${rate[shim]// /} ]] || return 0
	# shellcheck disable=SC2086
	k=$(median ${rate[kernel]})
	# shellcheck disable=SC2086
	s=$(median ${rate[shim]})
	# shellcheck disable=SC2086
	[[ -n ${rate[whole]:-} ]] && w=", whole-range (DAXTRACK_TRACK=0) $(median ${rate[whole]})"
	echo "$TAG: commits/s (median of $ROUNDS runs of $N): kernel msync $k, $what $s" \
		"($what/kernel = $(awk -v a="$s" -v b="$k" 'BEGIN { printf "%.2f", a / b }'))$w;" \
		"runs: kernel${rate[kernel]}, $what${rate[shim]}${w:+, whole-range${rate[whole]}}"
}
