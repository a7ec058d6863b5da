#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fuzz.sh - build the libFuzzer targets of tests/fuzz and run them.
#
# Usage: .ci/fuzz.sh [BUILD_DIR]          bounded run (CI)
#        .ci/fuzz.sh --long [BUILD_DIR]   run every fuzzer until interrupted
#
# BUILD_DIR (default build-ci/fuzz) is configured with clang (CC, default
# clang), -Dfuzz=true, ASan+UBSan and -fsanitize=fuzzer-no-link, and only the
# four fuzzers are built.  The bounded run then, for each of fuzz_proto,
# fuzz_tree, fuzz_config and fuzz_dlog:
#   1. replays its committed corpus (tests/fuzz/corpus/TARGET, -runs=0);
#   2. fuzzes for $DT_FUZZ_SECONDS (default 60) seconds, starting from a
#      temporary copy of the corpus (nothing is ever written into the
#      repository), and prints executions per second and libFuzzer's final
#      cov: and ft: figures, then "fuzz TARGET: ok" or
#      "fuzz TARGET: FAILED (crash file PATH)".
# A crash, a leak, a sanitizer report, a timeout (-timeout, 30 s an input)
# or an out-of-memory is a failure; crash files are kept under
# BUILD_DIR/fuzz-artifacts/.  The last line is "N passed, N failed"; the exit
# status is 1 if anything failed.
#
# --long runs the four fuzzers at once, with no time limit, on corpora
# kept in BUILD_DIR/fuzz-long/TARGET (seeded from the committed ones, growing
# from run to run), until Ctrl-C; then it prints the same figures.  To
# fold new inputs back into the repository by hand, minimised:
#   BUILD_DIR/tests/fuzz/TARGET -merge=1 tests/fuzz/corpus/TARGET BUILD_DIR/fuzz-long/TARGET
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

TARGETS=(fuzz_proto fuzz_tree fuzz_config fuzz_dlog)
SECONDS_EACH=${DT_FUZZ_SECONDS:-60}
# Per-input limits: a hang (an entry lock never released) is a failure.
FUZZ_FLAGS=(-timeout=30 -rss_limit_mb=2048 -print_final_stats=1)

usage()
{
	sed -n '4,28s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

long=false
case ${1:-} in
--long)
	long=true
	shift
	;;
-h | --help)
	usage
	exit 0
	;;
esac
[[ $# -le 1 ]] || { usage >&2; exit 2; }
BUILD=${1:-build-ci/fuzz}
if ! [[ $SECONDS_EACH =~ ^[0-9]+$ ]] || [[ $SECONDS_EACH -lt 1 ]]; then
	echo "fuzz: DT_FUZZ_SECONDS must be a positive integer" >&2
	exit 2
fi

export CC=${CC:-clang}
# Make every sanitizer report fatal, so that libFuzzer records the input.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}

build()
{
	local opts=(-Dfuzz=true -Dtests=true -Db_sanitize=address,undefined -Db_lundef=false
		-Dc_args=-fsanitize=fuzzer-no-link -Dwerror=true)

	if [[ -f $BUILD/build.ninja ]]; then
		meson setup --reconfigure "$BUILD" "${opts[@]}" >"$BUILD/fuzz-setup.log" 2>&1 ||
			{ cat "$BUILD/fuzz-setup.log"; return 1; }
	else
		mkdir -p "$(dirname "$BUILD")"
		meson setup "$BUILD" "${opts[@]}" >/tmp/fuzz-setup.$$.log 2>&1 ||
			{ cat /tmp/fuzz-setup.$$.log; rm -f /tmp/fuzz-setup.$$.log; return 1; }
		rm -f /tmp/fuzz-setup.$$.log
	fi
	ninja -C "$BUILD" "${TARGETS[@]/#/tests/fuzz/}"
}

if ! build; then
	echo "fuzz: the fuzz configuration does not build (clang with libFuzzer needed)"
	echo "0 passed, 1 failed"
	exit 1
fi

ARTIFACTS=$BUILD/fuzz-artifacts
mkdir -p "$ARTIFACTS"
WORK=$(mktemp -d /tmp/dtfuzz.XXXXXX) || exit 2
cleanup()
{
	rm -rf "$WORK"
}
trap cleanup EXIT

# figures LOG: "N execs/s, cov: C ft: F, corpus U units" from libFuzzer's output.
figures()
{
	local log=$1 rate cov ft corp last

	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	last=$(grep -E '^#[0-9]+[[:space:]]+(DONE|INITED|NEW|REDUCE|pulse)' "$log" | tail -n 1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
	echo "${rate:-?} execs/s, cov: ${cov:-?} ft: ${ft:-?}, corpus ${corp:-?} units"
}

# crash_file LOG: the input libFuzzer saved, copied to $ARTIFACTS.
crash_file()
{
	local f

	f=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$1" | tail -n 1)
	if [[ -n $f && -f $f ]]; then
		cp "$f" "$ARTIFACTS/" && echo "$ARTIFACTS/$(basename "$f")" && return
	fi
	echo "none saved: see $ARTIFACTS/$(basename "$1")"
}

# run_bounded TARGET: replay, then fuzz for SECONDS_EACH.  Return 0 if clean.
run_bounded()
{
	local t=$1 exe=$BUILD/tests/fuzz/$1 dir=$WORK/$1 rc n

	mkdir -p "$dir/tmp"
	n=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
	TMPDIR=$dir/tmp "$exe" "${FUZZ_FLAGS[@]}" -runs=0 -artifact_prefix="$dir/replay-" \
		"tests/fuzz/corpus/$t" >"$dir/replay.log" 2>&1
	rc=$?
	if [[ $rc -ne 0 ]]; then
		cp "$dir/replay.log" "$ARTIFACTS/$t-replay.log"
		grep -E 'ERROR|SUMMARY|MISMATCH|fuzz_' "$dir/replay.log" | head -n 20
		echo "fuzz $t: corpus replay failed"
		echo "fuzz $t: FAILED (crash file $(crash_file "$dir/replay.log"))"
		return 1
	fi
	echo "fuzz $t: corpus replayed, $n inputs, $(figures "$dir/replay.log")"

	cp -r "tests/fuzz/corpus/$t" "$dir/corpus"
	TMPDIR=$dir/tmp "$exe" "${FUZZ_FLAGS[@]}" -max_total_time="$SECONDS_EACH" \
		-artifact_prefix="$dir/" "$dir/corpus" >"$dir/fuzz.log" 2>&1
	rc=$?
	echo "fuzz $t: ${SECONDS_EACH} s, $(figures "$dir/fuzz.log")"
	if [[ $rc -ne 0 ]] || grep -q 'Test unit written to' "$dir/fuzz.log"; then
		cp "$dir/fuzz.log" "$ARTIFACTS/$t.log"
		grep -E '==ERROR|SUMMARY|MISMATCH|^fuzz_|runtime error' "$dir/fuzz.log" | head -n 20
		echo "fuzz $t: FAILED (crash file $(crash_file "$dir/fuzz.log"))"
		return 1
	fi
	echo "fuzz $t: ok"
}

run_long()
{
	local t pids=() logs=()

	echo "fuzz: running ${TARGETS[*]} until interrupted (Ctrl-C)"
	for t in "${TARGETS[@]}"; do
		local corpus=$BUILD/fuzz-long/$t

		if [[ ! -d $corpus ]]; then
			mkdir -p "$corpus"
			cp "tests/fuzz/corpus/$t"/* "$corpus/"
		fi
		mkdir -p "$WORK/$t/tmp"
		TMPDIR=$WORK/$t/tmp "$BUILD/tests/fuzz/$t" "${FUZZ_FLAGS[@]}" \
			-artifact_prefix="$ARTIFACTS/$t-" "$corpus" >"$WORK/$t.log" 2>&1 &
		pids+=($!)
		logs+=("$WORK/$t.log")
		echo "fuzz $t: pid $!, corpus $corpus, log $WORK/$t.log"
	done
	trap 'echo; echo "fuzz: interrupted, stopping"; kill -INT "${pids[@]}" 2>/dev/null' INT TERM
	local failed=0 i rc
	for i in "${!pids[@]}"; do
		# wait returns early when the trap runs: wait again for the real exit.
		while kill -0 "${pids[$i]}" 2>/dev/null; do
			wait "${pids[$i]}"
		done
		wait "${pids[$i]}"
		rc=$?
		t=${TARGETS[$i]}
		cp "${logs[$i]}" "$ARTIFACTS/$t-long.log"
		echo "fuzz $t: $(figures "${logs[$i]}")"
		if grep -q 'Test unit written to' "${logs[$i]}"; then
			echo "fuzz $t: FAILED (crash file $(crash_file "${logs[$i]}"))"
			failed=$((failed + 1))
		elif [[ $rc -ne 0 && $rc -ne 130 && $rc -ne 72 ]]; then
			echo "fuzz $t: FAILED (exit status $rc, log $ARTIFACTS/$t-long.log)"
			failed=$((failed + 1))
		else
			echo "fuzz $t: ok"
		fi
	done
	echo "$(( ${#TARGETS[@]} - failed )) passed, $failed failed"
	[[ $failed -eq 0 ]]
}

if $long; then
	run_long
	exit $?
fi

passed=0
failed=0
for t in "${TARGETS[@]}"; do
	if run_bounded "$t"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
