#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# realdax.sh - the real-DAX suite: daxtrack on a real fsdax ext4 -o dax file
# and a real devdax device, in the QEMU guest of ../shared/dax-vm/run (two
# emulated NVDIMMs), in ONE boot.
#
# Usage: .ci/realdax.sh BUILD_DIR
#
# BUILD_DIR is a configured meson build directory (never -march=native: the
# guest runs under TCG, which lacks AVX-512).  The script builds the four
# programs it needs in it (ninja, a no-op when up to date), then runs in the
# guest, from the repository root:
#   test_realdax_daemon  daxtrackd + the client library on both regions
#   test_region_realdax  the daemon's region layer on both (tests/daemon)
#   first_touch          figures only: the first-store cost per page of a
#                        sparse, a fallocated and a written MAP_SYNC file
#                        (printed as "realdax: first-touch: ...", not counted)
#   persist_msync        figures only: the fast path's persist of 1/64/4096
#                        pages against the kernel's msync() of the same pages
#                        and against the in-process floor, on fsdax and devdax
#                        ("realdax: persist-msync: ...", not counted)
# Their full output goes to BUILD_DIR/realdax-logs/; their closing lines
# are printed, as "realdax: PROG: N passed, N failed", and the last line is
# "realdax: N passed, N failed" (the sum; a program that dies without its
# closing line counts as one failure).
#
# The VM not starting (../shared/dax-vm missing, `run` exiting 125, or the
# timeout before the guest ran anything) is a failure, said plainly:
# "realdax: the VM could not start (exit N): ...".  Exit status: 0 only if
# every check passed; 1 otherwise; 2 for a usage error.
#
# Environment: DT_REALDAX_TIMEOUT (seconds for boot + tests, default 420),
# DT_FIRST_TOUCH_SECS (first_touch's time budget per file, default 15),
# DT_DAX_VM_RUN (the run script, default ../shared/dax-vm/run).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

VM_RUN=${DT_DAX_VM_RUN:-../shared/dax-vm/run}
TIMEOUT=${DT_REALDAX_TIMEOUT:-420}
FIRST_TOUCH_SECS=${DT_FIRST_TOUCH_SECS:-15}

usage()
{
	sed -n '4,31s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
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
	tests/realdax/first_touch tests/realdax/persist_msync)
if ! ninja -C "$BUILD_ABS" "${TARGETS[@]}" >"$BUILD_ABS/realdax-build.log" 2>&1; then
	tail -n 30 "$BUILD_ABS/realdax-build.log"
	fail_summary "building ${TARGETS[*]} in $BUILD failed"
fi

# The guest sees the current directory read-write at the same path; a build
# directory elsewhere is shared too.
VM_ARGS=(--timeout "$TIMEOUT")
case $BUILD_ABS/ in
"$REPO"/*) ;;
*) VM_ARGS+=(--rw "$BUILD_ABS") ;;
esac

OUT=$BUILD_ABS/realdax-logs
rm -rf "$OUT"
mkdir -p "$OUT" || fail_summary "cannot create $OUT"

if [[ ! -f $VM_RUN ]]; then
	fail_summary "the VM could not start (exit 127): $VM_RUN is missing"
fi

# Runs in the guest: sh -c GUEST realdax-guest REPO BUILD OUT.  Each step's
# output goes to OUT/STEP.log; printed: its rc and time, its FAIL lines and
# its closing line.  Exit 0 only if both steps exited 0.
# shellcheck disable=SC2016
GUEST='
cd "$1" || exit 3
b=$2
out=$3
all=0
echo "realdax-guest: start"
step() {
	name=$1
	shift
	t0=$(date +%s.%N)
	"$@" >"$out/$name.log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	secs=$(echo "$t0 $t1" | awk "{printf \"%.1f\", \$2 - \$1}")
	echo "realdax-step $name rc=$rc time=${secs}s"
	grep -E "^FAIL |^$name: [0-9]+ passed, [0-9]+ failed\$" "$out/$name.log"
	[ "$rc" -eq 0 ] || all=1
}
step test_realdax_daemon "$b/tests/realdax/test_realdax_daemon" "$b/daemon/daxtrackd"
step test_region_realdax "$b/tests/daemon/test_region_realdax"
"$b/tests/realdax/first_touch" -t "$4" "$DAX_VM_FSDAX_DIR" >"$out/first_touch.log" 2>&1
grep "^first-touch:" "$out/first_touch.log"
"$b/tests/realdax/persist_msync" "$b/daemon/daxtrackd" "$DAX_VM_FSDAX_DIR" "$DAX_VM_DEVDAX" \
	>"$out/persist_msync.log" 2>&1
grep "^persist-msync:" "$out/persist_msync.log"
echo "realdax-guest: done"
exit $all
'

tmp=$(mktemp -d) || fail_summary "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

t0=$SECONDS
bash "$VM_RUN" "${VM_ARGS[@]}" -- sh -c "$GUEST" realdax-guest "$REPO" "$BUILD_ABS" "$OUT" \
	"$FIRST_TOUCH_SECS" \
	>"$tmp/out" 2>"$tmp/err" </dev/null
vm_rc=$?
wall=$((SECONDS - t0))

grep -E '^dax-vm: ' "$tmp/err" | sed 's/^/realdax: /'
grep -E '^first-touch: ' "$tmp/out" | sed 's/^/realdax: /'
grep -E '^persist-msync: ' "$tmp/out" | sed 's/^/realdax: /'

if ! grep -q '^realdax-guest: start$' "$tmp/out"; then
	if grep -qv '^dax-vm: ' "$tmp/err"; then
		echo "realdax: ---- the VM's stderr (last 25 lines) ----"
		grep -v '^dax-vm: ' "$tmp/err" | tail -n 25
	fi
	case $vm_rc in
	124) why="no command ran within the ${TIMEOUT}s timeout" ;;
	125) why="the VM could not be set up (see its console above)" ;;
	*) why="the guest never ran the suite" ;;
	esac
	fail_summary "the VM could not start (exit $vm_rc): $why"
fi

passed=0
failed=0
for prog in test_realdax_daemon test_region_realdax; do
	line=$(grep -E "^realdax-step $prog rc=" "$tmp/out")
	closing=$(grep -E "^$prog: [0-9]+ passed, [0-9]+ failed$" "$tmp/out" | tail -n 1)
	if [[ -z $line ]]; then
		echo "realdax: $prog: did not run or did not finish"
		failed=$((failed + 1))
		continue
	fi
	rc=${line#*rc=}
	rc=${rc%% *}
	secs=${line##*time=}
	if [[ -n $closing ]]; then
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
		echo "realdax: ---- $prog output ($OUT/$prog.log) ----"
		cat "$OUT/$prog.log" 2>/dev/null || grep -E '^FAIL ' "$tmp/out"
	fi
done

if ! grep -q '^realdax-guest: done$' "$tmp/out"; then
	echo "realdax: the run in the VM did not finish (exit $vm_rc; timeout ${TIMEOUT}s)"
	grep -v '^dax-vm: ' "$tmp/err" | tail -n 25
	failed=$((failed + 1))
elif [[ $vm_rc -ne 0 && $failed -eq 0 ]]; then
	echo "realdax: the VM exited $vm_rc with every check passed"
	failed=$((failed + 1))
fi
if [[ $passed -eq 0 && $failed -eq 0 ]]; then
	echo "realdax: no check ran"
	failed=1
fi
echo "realdax: VM wall time ${wall}s (one boot), logs in $OUT"
echo "realdax: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
