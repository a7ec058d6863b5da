#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-tests.sh - build and run every test configuration of daxtrack.
#
# Usage: .ci/run-tests.sh [-b BUILD_ROOT] [CONFIG...]
#
# Configurations (default: all, in this order):
#   plain     map_shift=6 (default), all suites
#   s3        map_shift=3, all suites
#   s4        map_shift=4, all suites
#   asan      -Db_sanitize=address,undefined, all suites
#   tsan      -Db_sanitize=thread with clang, the concurrency suite
#   valgrind  memcheck over the unit suite of the plain build
#   fuzz      the libFuzzer targets: corpus replay, then $DT_FUZZ_SECONDS
#             (default 60) each (.ci/fuzz.sh)
#   realdax   the real-DAX programs in the dax-vm guest (.ci/realdax.sh), a
#             stock and a backports boot; a VM that cannot start is a failure
#   install   meson install into a DESTDIR, external programs built from the
#             installed files only, symbol versions, systemd units verified
#             and their security score (.ci/install-check.sh)
#
# Each configuration gets its own build directory under BUILD_ROOT (default
# ./build-ci, or $DT_BUILD_ROOT), configured with -Dwerror=true and
# -Dsystemd=enabled -Dcxl=enabled (these tests may not drop out).  Every test
# result counts: OK and EXPECTEDFAIL pass; FAIL, TIMEOUT, ERROR,
# UNEXPECTEDPASS and SKIP fail.  A configuration that does not configure or
# build, or runs no test, counts as one failure.  The last line printed is
# "N passed, N failed"; the exit status is 1 if anything failed or nothing
# ran, else 0.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

ALL_CONFIGS=(plain s3 s4 asan tsan valgrind fuzz realdax install)
BUILD_ROOT=${DT_BUILD_ROOT:-build-ci}
VALGRIND_SCALE=${DT_VALGRIND_SCALE:-0.05}
MESON_TEST=(meson test --no-rebuild --print-errorlogs --num-processes 2)

usage()
{
	sed -n '4,25s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

configs=()
while [[ $# -gt 0 ]]; do
	case $1 in
	-b | --build-root)
		[[ $# -ge 2 ]] || { usage >&2; exit 2; }
		BUILD_ROOT=$2
		shift 2
		;;
	-h | --help)
		usage
		exit 0
		;;
	all)
		configs+=("${ALL_CONFIGS[@]}")
		shift
		;;
	plain | s3 | s4 | asan | tsan | valgrind | fuzz | realdax | install)
		configs+=("$1")
		shift
		;;
	*)
		echo "run-tests: unknown configuration '$1'" >&2
		usage >&2
		exit 2
		;;
	esac
done
[[ ${#configs[@]} -gt 0 ]] || configs=("${ALL_CONFIGS[@]}")

PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || PYTHON=python3

total_passed=0
total_failed=0
summary=()

# setup_and_build DIR [MESON_OPTION...]: configure (or reconfigure) and build.
# The C compiler comes from $CC at first configuration.
setup_and_build()
{
	local dir=$1
	shift

	if [[ -f $dir/build.ninja ]]; then
		if ! meson setup --reconfigure "$dir" -Dwerror=true -Dsystemd=enabled -Dcxl=enabled "$@"; then
			echo "run-tests: reconfigure of $dir failed, starting afresh"
			rm -rf "$dir"
		fi
	elif [[ -e $dir ]]; then
		rm -rf "$dir"
	fi
	if [[ ! -f $dir/build.ninja ]]; then
		meson setup "$dir" -Dwerror=true -Dsystemd=enabled -Dcxl=enabled "$@" || return 1
	fi
	ninja -C "$dir" || return 1
}

# count_results LOGFILE: prints "PASSED FAILED" then one "name (result)" line
# for each test that did not pass.
count_results()
{
	"$PYTHON" - "$1" <<'PYEOF'
import json
import sys

passed = failed = 0
bad = []
with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
    for line in log:
        line = line.strip()
        if not line:
            continue
        try:
            res = json.loads(line)
        except ValueError:
            failed += 1
            bad.append(("<unparsable testlog line>", "ERROR"))
            continue
        result = str(res.get("result", "ERROR"))
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        else:
            failed += 1
            bad.append((res.get("name", "?"), result))
print(passed, failed)
for name, result in bad:
    print("%s (%s)" % (name, result))
PYEOF
}

# run_suite CONFIG DIR LOGBASE [MESON_TEST_ARG...]: runs meson test with the
# environment given by the caller and sets $passed, $failed, $failed_names.
run_suite()
{
	local config=$1 dir=$2 logbase=$3 rc counts log
	shift 3

	# meson appends the wrapper's name to the log base: testlog-X-valgrind.json
	rm -f "$dir/meson-logs/$logbase".json "$dir/meson-logs/$logbase"-*.json
	"${MESON_TEST[@]}" -C "$dir" --logbase "$logbase" "$@"
	rc=$?
	log=$(ls "$dir/meson-logs/$logbase".json "$dir/meson-logs/$logbase"-*.json 2>/dev/null |
	      head -n 1)
	log=${log:-$dir/meson-logs/$logbase.json}
	passed=0
	failed=0
	failed_names=""
	if [[ ! -s $log ]]; then
		echo "run-tests: $config: no test results in $log (meson test exit $rc)"
		failed=1
		failed_names="(no tests ran)"
		return
	fi
	if ! counts=$(count_results "$log"); then
		echo "run-tests: $config: could not parse $log"
		failed=1
		failed_names="(unparsable results)"
		return
	fi
	read -r passed failed <<<"$(head -n 1 <<<"$counts")"
	failed_names=$(tail -n +2 <<<"$counts" | paste -sd '|' | sed 's/|/, /g')
	if [[ $((passed + failed)) -eq 0 ]]; then
		failed=1
		failed_names="(no tests ran)"
	elif [[ $rc -ne 0 && $failed -eq 0 ]]; then
		echo "run-tests: $config: meson test exited $rc with no failed test"
		failed=1
		failed_names="(meson test exit $rc)"
	fi
}

run_config()
{
	local config=$1
	local dir=$BUILD_ROOT/$config

	passed=0
	failed=0
	failed_names=""
	case $config in
	plain)
		setup_and_build "$dir" -Dmap_shift=6 || { build_failed; return; }
		run_suite "$config" "$dir" "testlog-$config"
		;;
	s3 | s4)
		setup_and_build "$dir" -Dmap_shift="${config#s}" || { build_failed; return; }
		run_suite "$config" "$dir" "testlog-$config"
		;;
	asan)
		setup_and_build "$dir" -Db_sanitize=address,undefined -Db_lundef=false ||
			{ build_failed; return; }
		ASAN_OPTIONS=detect_leaks=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
			run_suite "$config" "$dir" "testlog-$config" --timeout-multiplier 2
		;;
	tsan)
		local wrapper=()
		# TSan of clang 14 cannot map its shadow with more ASLR entropy.
		if [[ $(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0) -gt 28 ]] &&
		   command -v setarch >/dev/null; then
			wrapper=(--wrapper "setarch $(uname -m) -R")
		fi
		CC=clang setup_and_build "$dir" -Db_sanitize=thread -Db_lundef=false ||
			{ build_failed; return; }
		local tsan_options="halt_on_error=1 second_deadlock_stack=1"
		[[ ! -f tests/tsan.supp ]] || tsan_options+=" suppressions=$PWD/tests/tsan.supp"
		TSAN_OPTIONS=$tsan_options \
			run_suite "$config" "$dir" "testlog-$config" --suite concurrency \
			--timeout-multiplier 2 "${wrapper[@]}"
		;;
	valgrind)
		# Reuses (or makes) the plain build.
		dir=$BUILD_ROOT/plain
		setup_and_build "$dir" -Dmap_shift=6 || { build_failed; return; }
		DT_TEST_SCALE=$VALGRIND_SCALE \
			run_suite "$config" "$dir" "testlog-$config" --suite unit \
			--timeout-multiplier 4 --wrapper \
			'valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect -q'
		;;
	fuzz)
		# Each fuzz target counts as one test.
		local out rc
		out=$(bash .ci/fuzz.sh "$dir" 2>&1)
		rc=$?
		echo "$out"
		passed=$(grep -cE '^fuzz [a-z_]+: ok' <<<"$out")
		failed=$(grep -cE '^fuzz [a-z_]+: FAILED' <<<"$out")
		failed_names=$(grep -E '^fuzz [a-z_]+: FAILED' <<<"$out" | paste -sd ';')
		if [[ $rc -ne 0 && $failed -eq 0 ]]; then
			failed=1
			failed_names="(fuzz.sh exit $rc)"
		fi
		if [[ $((passed + failed)) -eq 0 ]]; then
			failed=1
			failed_names="(no fuzzer ran)"
		fi
		;;
	install)
		# Each check counts as one test.
		local out rc
		out=$(bash .ci/install-check.sh "$dir" 2>&1)
		rc=$?
		echo "$out"
		passed=$(grep -cE '^install: [a-z_-]+: ok' <<<"$out")
		failed=$(grep -cE '^install: [a-z_-]+: FAILED' <<<"$out")
		failed_names=$(grep -E '^install: [a-z_-]+: FAILED' <<<"$out" | cut -d: -f2 | paste -sd ',')
		if [[ $rc -ne 0 && $failed -eq 0 ]]; then
			failed=1
			failed_names="(install-check.sh exit $rc)"
		fi
		if [[ $((passed + failed)) -eq 0 ]]; then
			failed=1
			failed_names="(no install check ran)"
		fi
		;;
	realdax)
		# Each program run in the guest counts as one test.
		dir=$BUILD_ROOT/plain
		setup_and_build "$dir" -Dmap_shift=6 || { build_failed; return; }
		local out rc
		out=$(bash .ci/realdax.sh "$dir" 2>&1)
		rc=$?
		echo "$out"
		passed=$(grep -cE '^realdax: test_[a-z_]+: [0-9]+ passed, 0 failed \(exit 0' \
			 <<<"$out")
		failed=$(grep -E '^realdax: test_[a-z_]+:' <<<"$out" |
			 grep -cvE ': [0-9]+ passed, 0 failed \(exit 0')
		failed_names=$(grep -E '^realdax: test_[a-z_]+:' <<<"$out" |
			       grep -vE ': [0-9]+ passed, 0 failed \(exit 0' | paste -sd ';')
		if [[ $rc -ne 0 && $failed -eq 0 ]]; then
			failed=1
			failed_names="(realdax.sh exit $rc)"
		fi
		if [[ $((passed + failed)) -eq 0 ]]; then
			failed=1
			failed_names="(no real-DAX program ran)"
		fi
		;;
	esac
}

build_failed()
{
	echo "run-tests: configuration or build failed"
	passed=0
	failed=1
	failed_names="(configure/build)"
}

fmt_time()
{
	printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
}

mkdir -p "$BUILD_ROOT" || exit 2
start_all=$SECONDS
for config in "${configs[@]}"; do
	echo
	dir=$BUILD_ROOT/$config
	[[ $config != valgrind && $config != realdax ]] || dir=$BUILD_ROOT/plain
	echo "=== config $config ($dir) ==="
	start=$SECONDS
	run_config "$config"
	elapsed=$(fmt_time $((SECONDS - start)))
	line="config $config: $passed passed, $failed failed [$elapsed]"
	[[ $failed -eq 0 ]] || line+=" failing: $failed_names"
	echo "$line"
	summary+=("$line")
	total_passed=$((total_passed + passed))
	total_failed=$((total_failed + failed))
done

echo
echo "=== summary (total $(fmt_time $((SECONDS - start_all)))) ==="
printf '%s\n' "${summary[@]}"
echo "$total_passed passed, $total_failed failed"
if [[ $total_failed -ne 0 || $total_passed -eq 0 ]]; then
	exit 1
fi
exit 0
