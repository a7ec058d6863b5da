#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-deps.sh PROGRAM ARCHIVE... - PROGRAM is a client of daxtrackd only:
# it needs libdaxtrack-client.so, it needs neither liburcu nor the engine's
# libdaxtrack.so, it names no urcu symbol, and it defines none of the global
# symbols of ARCHIVE... (the daemon's core, the engine: static libraries
# whose objects must not have been linked in).  Exit 77 (skip) without
# binutils.
set -u
export LC_ALL=C

prog=$1
shift
for tool in readelf nm; do
	command -v $tool >/dev/null 2>&1 || { echo "no $tool: skipped"; exit 77; }
done

fail=0
bad() {
	echo "$prog: $*"
	fail=1
}

needed=$(readelf -d "$prog" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "$needed" | grep -q '^libdaxtrack-client\.so' || bad "does not need libdaxtrack-client.so"
for lib in $(echo "$needed" | grep -E '^(liburcu|libdaxtrack\.so)'); do
	bad "needs $lib"
done

for sym in $(nm "$prog" | awk '{ print $NF }' | grep -i urcu); do
	bad "names $sym"
done

nm --defined-only "$prog" | awk '{ print $3 }' | sort -u > "${TMPDIR:-/tmp}/deps.$$.prog"
for archive in "$@"; do
	nm --defined-only --extern-only "$archive" 2>/dev/null | awk 'NF == 3 { print $3 }' |
		sort -u > "${TMPDIR:-/tmp}/deps.$$.ar"
	for sym in $(comm -12 "${TMPDIR:-/tmp}/deps.$$.prog" "${TMPDIR:-/tmp}/deps.$$.ar"); do
		bad "defines $sym of $(basename "$archive")"
	done
done
rm -f "${TMPDIR:-/tmp}/deps.$$.prog" "${TMPDIR:-/tmp}/deps.$$.ar"

[ $fail = 0 ] && echo "$prog: needs $(echo $needed); client library only"
exit $fail
