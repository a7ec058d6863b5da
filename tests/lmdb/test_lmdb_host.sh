#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_lmdb_host.sh - the host side of the LMDB test: lmdb_commits creates,
# commits (with its stamp and page diff) and verifies an environment in a
# temporary directory (on /dev/shm when it exists), LMDB's own mdb_stat and
# mdb_dump read it, and tests/preload-trace-check.py accepts a trace built
# from the diff as the shim would write it and rejects one with a page not flushed, no
# drain, a flush after the msync returned, or no commit lines.  The run under the shim on real DAX is tests/lmdb/lmdb-guest.sh.
#
# Usage: test_lmdb_host.sh LMDB_COMMITS TRACE_CHECK
set -uo pipefail

prog=$1
check=$2
passed=0
failed=0

ok()
{
	if "${@:2}" >"$tmp/out" 2>&1; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $1"
		cat "$tmp/out"
	fi
}

# not_ok NAME CMD...: CMD must fail.
not_ok()
{
	if "${@:2}" >"$tmp/out" 2>&1; then
		failed=$((failed + 1))
		echo "FAIL $1: succeeded"
		cat "$tmp/out"
	else
		passed=$((passed + 1))
	fi
}

base=/dev/shm
[[ -d $base && -w $base ]] || base=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$base/test_lmdb_host.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
env=$tmp/env

# synth_trace DIFFLOG [drop-page|no-drain|late-flush|separate|daemon|daemon-short]:
# the trace of LMDB 0.9's two msyncs a commit, every changed page flushed and
# one drain, with the program's C lines between (but with "separate"), or
# with one fault; "daemon": the fifth commit's first msync answered by the
# daemon (an S line for the whole map instead of F and D lines), a good
# trace; "daemon-short": the same, the S line covering the first page only.
synth_trace()
{
	awk -v fault="${2:-}" '{
		print "M begin 0 4194304"
		if (fault ~ /^daemon/ && NR == 5) {
			print "S 0 " (fault == "daemon" ? 4194304 : 4096)
			print "M end 0"
			print "M begin 0 4096"
			print "M end 0"
			print
			next
		}
		for (i = 3; i <= NF; i++)
			if (!(fault == "drop-page" && NR == 7 && i == NF))
				print "F " $i * 4096 " 4096"
		if (!(fault == "no-drain" && NR == 9))
			print "D"
		print "M end 0"
		print "M begin 0 4096"
		print "M end 0"
		if (fault == "late-flush" && NR == 11)
			print "F 8192 4096\nD"
		if (fault != "separate")
			print
	}' "$1"
}

ok "create" "$prog" create "$env"
ok "run 200 with stamp and diff" "$prog" run -s "$tmp/stamp" -d "$tmp/diff" "$env" 200
ok "run 300 more" "$prog" run -s "$tmp/stamp" "$env" 300
ok "verify against the stamp" "$prog" verify -s "$tmp/stamp" "$env"
echo "$(($(cat "$tmp/stamp") - 5))" >"$tmp/old-stamp"
not_ok "verify against a stamp 5 transactions behind" "$prog" verify -s "$tmp/old-stamp" "$env"
if command -v mdb_stat >/dev/null; then
	ok "mdb_stat" mdb_stat -e "$env"
	grep -q 'Entries: 1025$' "$tmp/out" || { echo "FAIL mdb_stat: not 1025 entries"; \
		cat "$tmp/out"; failed=$((failed + 1)); }
	ok "mdb_dump" mdb_dump "$env"
	[[ $(grep -c '^ 6b6579' "$tmp/out") -eq 1024 ]] || { echo "FAIL mdb_dump: not 1024 keys"; \
		failed=$((failed + 1)); }
fi

synth_trace "$tmp/diff" >"$tmp/trace"
ok "trace check of a good trace" python3 "$check" "$tmp/trace"
synth_trace "$tmp/diff" drop-page >"$tmp/trace"
not_ok "trace check of a page not flushed" python3 "$check" "$tmp/trace"
grep -q 'transaction 6: pages changed but not flushed' "$tmp/out" ||
	{ echo "FAIL trace check: the page not flushed is not named"; failed=$((failed + 1)); }
synth_trace "$tmp/diff" daemon >"$tmp/trace"
ok "trace check of a commit the daemon flushed (S)" python3 "$check" "$tmp/trace"
grep -q '1 persists answered by the daemon' "$tmp/out" ||
	{ echo "FAIL trace check: the S line is not counted"; failed=$((failed + 1)); }
synth_trace "$tmp/diff" daemon-short >"$tmp/trace"
not_ok "trace check of an S line short of a changed page" python3 "$check" "$tmp/trace"
synth_trace "$tmp/diff" no-drain >"$tmp/trace"
not_ok "trace check of a flush without drain" python3 "$check" "$tmp/trace"
synth_trace "$tmp/diff" late-flush >"$tmp/trace"
not_ok "trace check of a flush after the msync returned" python3 "$check" "$tmp/trace"
synth_trace "$tmp/diff" separate >"$tmp/trace"
not_ok "trace check of a trace without commit lines" python3 "$check" "$tmp/trace"
ok "trace check of a trace and a separate page log" python3 "$check" "$tmp/trace" "$tmp/diff"
head -n 7 "$tmp/diff" >"$tmp/diff7"
not_ok "trace check of 200 commits' trace against 7 commits" \
	python3 "$check" "$tmp/trace" "$tmp/diff7"
echo "F ? 4096" >>"$tmp/trace"
not_ok "trace check of a flush outside the region" python3 "$check" "$tmp/trace" "$tmp/diff"

echo "test_lmdb_host: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
