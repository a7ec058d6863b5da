#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# realdax.sh - the real-DAX suite: daxtrack on a real fsdax ext4 -o dax file
# and a real devdax device, in the QEMU guest of ../shared/dax-vm/run (two
# emulated NVDIMMs and, with --cxl, two emulated CXL type-3 pmem devices),
# in TWO boots: the stock kernel (6.1), then the backports kernel (6.12,
# --kernel backports) for transparent tracking.
#
# Usage: .ci/realdax.sh BUILD_DIR
#
# BUILD_DIR is a configured meson build directory (never -march=native: the
# guest runs under TCG, which lacks AVX-512).  The script builds the programs
# it needs in it (ninja, a no-op when up to date), then runs in the guest,
# from the repository root.  The stock boot:
#   test_realdax_daemon  daxtrackd + the client library on both regions
#   test_region_realdax  the daemon's region layer on both (tests/daemon)
#   test_resize_realdax  a region file without a size on ext4-DAX, truncated
#                        and grown under the daemon's and a client's MAP_SYNC
#                        mappings (a device DAX cannot change size)
#   first_touch          figures only: the first-store cost per page of a
#                        sparse, a fallocated and a written MAP_SYNC file
#                        (printed as "realdax: first-touch: ...", not counted)
#   persist_msync        figures only: the fast path's persist of 1/64/4096
#                        pages against the kernel's msync() of the same pages
#                        and against the in-process floor, on fsdax and devdax
#                        ("realdax: persist-msync: ...", not counted)
#   test_track_realdax   on 6.1 every dt_client_track() must be refused
#                        cleanly
# Both boots, on the CXL devices (small: CXL memory is slow under TCG):
#   test_cxl_realdax     test_realdax_daemon with DT_REALDAX_CXL=1: the same
#                        checks on a 16 MiB file of the CXL fsdax mount
#                        (MAP_SYNC) and the CXL devdax device (namespace
#                        matching, the flush log, persist, kill -9 and
#                        recovery), the CXL request, DEEP counted on CXL
#   check_cxl_ctl        daxtrackctl's namespaces, regions, --cxl and JSON,
#                        from the daemon and --local, against `cxl list` and
#                        `ndctl list -b CXL` (tests/realdax/check_cxl_ctl.py)
# The backports boot (each program counts as one test, pass or fail):
#   test_lmdb_guest      an unmodified LMDB program under the LD_PRELOAD shim
#                        and with the kernel's msync, the daemon killed in the
#                        middle, LMDB's own tools and the shim's trace checking
#                        (tests/lmdb/test_lmdb_guest.sh); its figures are
#                        printed as "realdax: lmdb: ..." and
#                        "realdax: lmdb-trace-check: ..."
#   test_db_gdbm,        unmodified GDBM and TDB programs the same way, on
#   test_db_tdb          files that grow under a region that follows them,
#                        with gdbmtool and `tdbtool check`
#                        (tests/dbs/test_db.sh); their figures printed as
#                        "realdax: gdbm: ...", "realdax: tdb: ..." and
#                        "realdax: gdbm-trace-check: ..." (tdb-...).  TDB
#                        runs 100 commits a run (the shim makes its commits
#                        ~40x slower under TCG: a tracking probe at each of
#                        its mmaps), and its trace check does not fail on the
#                        flushes the shim's trace cannot place (F ?: those
#                        of a file grown since the region was attached)
#   test_track_realdax   dt_client_track() on fsdax (exact pages) and devdax
#                        (refused, no SIGBUS)
#   test_preload         the shim's own test (tests/preload) on the fsdax
#                        mount and the device DAX (msync made to work there)
#   test_bench_track     `dt-bench track` on the fsdax file; its figures
#                        printed as "realdax: bench-track: ..."
# Their full output goes to BUILD_DIR/realdax-logs/stock/ and .../backports/;
# their closing lines are printed, as "realdax: PROG: N passed, N failed",
# and the last line is "realdax: N passed, N failed" (the sum; a program that
# dies without its closing line counts as one failure).
#
# A guest kernel that panics before the first program of the suite starts
# (while booting, or as perf_hold's first events flip the static keys) is
# booted once more (said as "realdax: the NAME guest kernel panicked before
# the suite's first program ..."); a second panic, or one once a program
# started, fails.
# The VM not starting (../shared/dax-vm missing, `run` exiting 125, or the
# timeout before the guest ran anything) is a failure, said plainly:
# "realdax: the VM could not start (exit N): ..." (for the stock boot the
# script stops there).  Exit status: 0 only if every check passed; 1
# otherwise; 2 for a usage error.
#
# Environment: DT_REALDAX_TIMEOUT (seconds for boot + tests of the stock
# boot, default 540), DT_REALDAX_BP_TIMEOUT (the backports boot, default
# 1200), DT_FIRST_TOUCH_SECS (first_touch's time budget per file, default
# 15), DT_DAX_VM_RUN (the run script, default ../shared/dax-vm/run).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

VM_RUN=${DT_DAX_VM_RUN:-../shared/dax-vm/run}
TIMEOUT=${DT_REALDAX_TIMEOUT:-540}
BP_TIMEOUT=${DT_REALDAX_BP_TIMEOUT:-1200}
FIRST_TOUCH_SECS=${DT_FIRST_TOUCH_SECS:-15}

usage()
{
	sed -n '4,77s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

# fail_summary REASON: one plain line, the summary, exit 1.
fail_summary()
{
	echo "realdax: $1"
	echo "realdax: 0 passed, 1 failed"
	exit 1
}

if [[ $# -ne 1 || $1 == -h || $1 == --help ]]; then
	usage
	[[ $# -eq 1 ]] && exit 0
	exit 2
fi
BUILD=$1
[[ -f $BUILD/build.ninja ]] || fail_summary "$BUILD is not a configured meson build directory"
BUILD_ABS=$(cd "$BUILD" && pwd -P) || fail_summary "cannot enter $BUILD"
REPO=$(pwd -P)

if grep -qs -- '-march=native' "$BUILD_ABS/build.ninja"; then
	fail_summary "$BUILD is built with -march=native (the TCG guest lacks AVX-512): reconfigure"
fi

TARGETS=(daemon/daxtrackd tests/realdax/test_realdax_daemon tests/daemon/test_region_realdax
	tests/realdax/first_touch tests/realdax/persist_msync tests/lmdb/lmdb_commits
	tools/daxtrackctl/daxtrackctl lib/preload/libdaxtrack-preload.so
	tests/preload/test_preload tests/preload/preload_victim tests/realdax/test_track_realdax
	tools/dt-bench tests/realdax/test_resize_realdax tests/dbs/gdbm_commits tests/dbs/tdb_commits
	tests/realdax/perf_hold)
for prog in lmdb/lmdb_commits:LMDB:liblmdb-dev dbs/gdbm_commits:GDBM:libgdbm-dev \
	dbs/tdb_commits:TDB:libtdb-dev; do
	IFS=: read -r target lib pkg <<<"$prog"
	if ! ninja -C "$BUILD_ABS" -t query "tests/$target" >/dev/null 2>&1; then
		fail_summary "$BUILD has no tests/$target: $lib was not found when it was set up\
 (.ci/install-deps.sh installs $pkg; then meson setup --reconfigure)"
	fi
done
if ! ninja -C "$BUILD_ABS" "${TARGETS[@]}" >"$BUILD_ABS/realdax-build.log" 2>&1; then
	tail -n 30 "$BUILD_ABS/realdax-build.log"
	fail_summary "building ${TARGETS[*]} in $BUILD failed"
fi

# The guest sees the current directory read-write at the same path; a build
# directory elsewhere is shared too.
VM_ARGS=()
case $BUILD_ABS/ in
"$REPO"/*) ;;
*) VM_ARGS+=(--rw "$BUILD_ABS") ;;
esac

OUT=$BUILD_ABS/realdax-logs
rm -rf "$OUT"
mkdir -p "$OUT/stock" "$OUT/backports" || fail_summary "cannot create $OUT"

if [[ ! -f $VM_RUN ]]; then
	fail_summary "the VM could not start (exit 127): $VM_RUN is missing"
fi

# Both guests start with this: sh -c STEP... realdax-guest REPO BUILD OUT ...
# (OUT: the boot's own directory of logs).
# Each step's output goes to OUT/STEP.log; printed: its rc and time, its FAIL
# lines and its closing line.  Exit 0 only if every step exited 0.
# shellcheck disable=SC2016
STEP='
cd "$1" || exit 3
b=$2
out=$3
all=0
echo "realdax-guest: start"
step() {
	name=$1
	shift
	echo "realdax-step-start $name"
	t0=$(date +%s.%N)
	"$@" >"$out/$name.log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	secs=$(echo "$t0 $t1" | awk "{printf \"%.1f\", \$2 - \$1}")
	echo "realdax-step $name rc=$rc time=${secs}s"
	grep -E "^FAIL |^$name: [0-9]+ passed, [0-9]+ failed\$" "$out/$name.log"
	[ "$rc" -eq 0 ] || all=1
}
cxl_steps() {
	step test_cxl_realdax env DT_REALDAX_CXL=1 "$b/tests/realdax/test_realdax_daemon" \
		"$b/daemon/daxtrackd"
	step check_cxl_ctl python3 tests/realdax/check_cxl_ctl.py "$b/daemon/daxtrackd" \
		"$b/tools/daxtrackctl/daxtrackctl"
}
'

# The stock boot: sh -c GUEST realdax-guest REPO BUILD OUT FIRST_TOUCH_SECS.
# shellcheck disable=SC2016
GUEST=$STEP'
step test_realdax_daemon "$b/tests/realdax/test_realdax_daemon" "$b/daemon/daxtrackd"
step test_region_realdax "$b/tests/daemon/test_region_realdax"
step test_resize_realdax "$b/tests/realdax/test_resize_realdax" "$b/daemon/daxtrackd"
step test_track_realdax "$b/tests/realdax/test_track_realdax" "$b/daemon/daxtrackd"
cxl_steps
"$b/tests/realdax/first_touch" -t "$4" "$DAX_VM_FSDAX_DIR" >"$out/first_touch.log" 2>&1
grep "^first-touch:" "$out/first_touch.log"
"$b/tests/realdax/persist_msync" "$b/daemon/daxtrackd" "$DAX_VM_FSDAX_DIR" "$DAX_VM_DEVDAX" \
	>"$out/persist_msync.log" 2>&1
grep "^persist-msync:" "$out/persist_msync.log"
echo "realdax-guest: done"
exit $all
'

# The backports boot: sh -c GUEST_BP realdax-guest REPO BUILD OUT.
# The first per-task perf event of the system and the last one flip static
# keys in the guest kernel (text patching), and TCG has been seen to take
# that patching for a stray int3 and panic the guest (kernel 6.12, QEMU TCG,
# 2 vCPUs).  For the whole boot tests/realdax/perf_hold holds one event of
# each kind open, so that those keys stay enabled and the tracking
# processes' fault recordings (every step keeps them, as shipped) never
# flip them.  It is never stopped: the guest powers off at once after the
# command (dax-vm's poweroff -f) with its events still open.  The first step
# starts once it holds them (its "holding" line, 30 s at most), so that a
# panic of that flip comes before any step (boot_panic_retry).
# shellcheck disable=SC2016
GUEST_BP=$STEP'
"$b/tests/realdax/perf_hold" > "$out/perf_hold.log" 2>&1 &
for _ in $(seq 300); do
	grep -q "^perf_hold: holding" "$out/perf_hold.log" 2>/dev/null && break
	sleep 0.1
done
step test_lmdb_guest bash tests/lmdb/test_lmdb_guest.sh "$b"
grep -E "^lmdb(-trace-check)?: " "$out/test_lmdb_guest.log"
step test_db_gdbm env DT_DB_TRACE_ACROSS_KILL=1 bash tests/dbs/test_db.sh gdbm "$b"
grep -E "^gdbm(-trace-check)?: " "$out/test_db_gdbm.log"
step test_db_tdb env DT_DB_COMMITS=100 DT_DB_CHECKED=100 \
	bash tests/dbs/test_db.sh tdb "$b"
grep -E "^tdb(-trace-check)?: " "$out/test_db_tdb.log"
step test_track_realdax "$b/tests/realdax/test_track_realdax" "$b/daemon/daxtrackd"
step test_preload env DT_PRELOAD_SO="$b/lib/preload/libdaxtrack-preload.so" \
	DT_PRELOAD_VICTIM="$b/tests/preload/preload_victim" DT_PRELOAD_DIR="$DAX_VM_FSDAX_DIR" \
	DT_PRELOAD_DEVDAX="$DAX_VM_DEVDAX" "$b/tests/preload/test_preload"
cxl_steps
step test_bench_track env DT_BENCH_TMPDIR="$DAX_VM_FSDAX_DIR" "$b/tools/dt-bench" track
sed -n "s/^ *\(track\.[a-z]\)/bench-track: \1/p" "$out/test_bench_track.log"
echo "realdax-guest: done"
exit $all
'

tmp=$(mktemp -d) || fail_summary "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# boot NAME KERNEL TIMEOUT GUEST ARG...: one VM run; its stdout in
# $tmp/NAME.out, its stderr in $tmp/NAME.err; sets vm_rc and wall.
boot()
{
	local name=$1 kernel=$2 timeout=$3 guest=$4 t0=$SECONDS

	shift 4
	bash "$VM_RUN" "${VM_ARGS[@]}" --cxl --kernel "$kernel" --timeout "$timeout" -- \
		sh -c "$guest" realdax-guest "$REPO" "$BUILD_ABS" "$OUT/$name" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null
	vm_rc=$?
	wall=$((SECONDS - t0))
	grep -E '^dax-vm: ' "$tmp/$name.err" | sed 's/^/realdax: /'
}

# boot_panic_retry NAME KERNEL TIMEOUT GUEST ARG...: boot; if the guest
# kernel panicked before any program of the suite started (the 6.12 kernel
# under TCG sometimes takes an oops in its own text patching at boot, or when
# perf_hold's first events flip the static keys), say so and boot once more:
# no program ran.  A panic once a program started is never retried.
boot_panic_retry()
{
	boot "$@"
	grep -q '^realdax-step-start ' "$tmp/$1.out" && return
	grep -q 'Kernel panic' "$tmp/$1.err" || return
	echo "realdax: the $1 guest kernel panicked before the suite's first program:" \
		"$(grep -m1 -E 'Oops|BUG:' "$tmp/$1.err" | sed 's/^ *| *//')"
	echo "realdax: booting the $1 guest once more"
	boot "$@"
}

# not_started NAME TIMEOUT: if the guest never ran the suite, print why (and
# return 0).
not_started()
{
	local why

	grep -q '^realdax-guest: start$' "$tmp/$1.out" && return 1
	if grep -qv '^dax-vm: ' "$tmp/$1.err"; then
		echo "realdax: ---- the VM's stderr (last 25 lines) ----"
		grep -v '^dax-vm: ' "$tmp/$1.err" | tail -n 25
	fi
	case $vm_rc in
	124) why="no command ran within the ${2}s timeout" ;;
	125) why="the VM could not be set up (see its console above)" ;;
	*) why="the guest never ran the suite" ;;
	esac
	echo "realdax: the VM could not start (exit $vm_rc): $why"
	return 0
}

# count NAME PROG ONE: add PROG's result in boot NAME to passed and failed:
# its closing line's counts, or with ONE=1 one test (passed if it exited 0).
count()
{
	local name=$1 prog=$2 one=$3 line closing rc secs p f

	line=$(grep -E "^realdax-step $prog rc=" "$tmp/$name.out")
	closing=$(grep -E "^$prog: [0-9]+ passed, [0-9]+ failed$" "$tmp/$name.out" | tail -n 1)
	if [[ -z $line ]]; then
		echo "realdax: $prog: did not run or did not finish"
		failed=$((failed + 1))
		return
	fi
	rc=${line#*rc=}
	rc=${rc%% *}
	secs=${line##*time=}
	if [[ $one -eq 1 ]]; then
		p=$((rc == 0))
		echo "realdax: $prog: $p passed, $((1 - p)) failed (exit $rc, $secs${closing:+; $closing})"
		passed=$((passed + p))
		failed=$((failed + 1 - p))
	elif [[ -n $closing ]]; then
		read -r p f < <(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/' \
			<<<"$closing")
		passed=$((passed + p))
		failed=$((failed + f))
		echo "realdax: $closing (exit $rc, $secs)"
		if [[ $rc -ne 0 && $f -eq 0 ]]; then
			failed=$((failed + 1))
		fi
	else
		echo "realdax: $prog: no closing line (exit $rc, $secs)"
		failed=$((failed + 1))
	fi
	if [[ $rc -ne 0 ]]; then
		echo "realdax: ---- $prog output ($OUT/$name/$prog.log) ----"
		cat "$OUT/$name/$prog.log" 2>/dev/null || grep -E '^FAIL ' "$tmp/$name.out"
	fi
}

# finished NAME TIMEOUT: the guest's run ended, and its exit agrees.
finished()
{
	if ! grep -q '^realdax-guest: done$' "$tmp/$1.out"; then
		echo "realdax: the run in the VM did not finish (exit $vm_rc; timeout ${2}s)"
		grep -v '^dax-vm: ' "$tmp/$1.err" | tail -n 25
		failed=$((failed + 1))
	elif [[ $vm_rc -ne 0 && $failed -eq 0 ]]; then
		echo "realdax: the VM exited $vm_rc with every check passed"
		failed=$((failed + 1))
	fi
}

passed=0
failed=0
boot_panic_retry stock stock "$TIMEOUT" "$GUEST" "$FIRST_TOUCH_SECS"
wall_stock=$wall
grep -E '^(first-touch|persist-msync): ' "$tmp/stock.out" | sed 's/^/realdax: /'
if not_started stock "$TIMEOUT"; then
	echo "realdax: 0 passed, 1 failed"
	exit 1
fi
for prog in test_realdax_daemon test_region_realdax test_resize_realdax; do
	count stock "$prog" 0
done
count stock test_track_realdax 0
count stock test_cxl_realdax 0
count stock check_cxl_ctl 0
finished stock "$TIMEOUT"

# dt-bench track's collect figures make a 1 GiB region: two 2 GiB NVDIMMs.
VM_ARGS+=(--pmem-gib 2)
boot_panic_retry backports backports "$BP_TIMEOUT" "$GUEST_BP"
wall_bp=$wall
grep -E '^((lmdb|gdbm|tdb)(-trace-check)?|bench-track): ' "$tmp/backports.out" |
	sed 's/^/realdax: /'
if not_started backports "$BP_TIMEOUT"; then
	failed=$((failed + 1))
else
	count backports test_lmdb_guest 1
	count backports test_db_gdbm 1
	count backports test_db_tdb 1
	count backports test_track_realdax 1
	count backports test_preload 0
	count backports test_cxl_realdax 0
	count backports check_cxl_ctl 0
	count backports test_bench_track 1
	finished backports "$BP_TIMEOUT"
fi

if [[ $passed -eq 0 && $failed -eq 0 ]]; then
	echo "realdax: no check ran"
	failed=1
fi
echo "realdax: VM wall time ${wall_stock}s (stock) + ${wall_bp}s (backports), logs in $OUT"
echo "realdax: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
