#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-libs.sh PCDIR CLIENT_SO CLIENT_SYM ENGINE_SO ENGINE_SYM - the split
# that daxtrackctl and applications rely on:
# - libdaxtrack-client.so needs no liburcu, exports exactly the symbols of
#   its .sym, all versioned LIBDAXTRACK_CLIENT_1, and its pkg-config module
#   (PCDIR: meson-private/, the .pc files as installed) requires nothing but
#   libpmem (privately: the in-process persist of the fast path);
# - libdaxtrack.so exports exactly its .sym, versioned LIBDAXTRACK_1, and
#   its module requires liburcu-memb, so --libs names -lurcu-memb;
# - no symbol is exported by both.
# Exit 77 (skip) without binutils or pkg-config.
set -u
export LC_ALL=C

pcdir=$1 client=$2 client_sym=$3 engine=$4 engine_sym=$5
for tool in readelf nm pkg-config; do
	command -v $tool >/dev/null 2>&1 || { echo "no $tool: skipped"; exit 77; }
done
tmp=$(mktemp -d) || exit 1
fail=0
bad() {
	echo "$*" >&2
	fail=1
}

# The exported symbols of $1 must be those of the version script $2, in node $3.
check_exports() {
	nm -D --defined-only "$1" | awk '$2 != "A" { print $3 }' | sort > "$tmp/exports"
	sed -n 's/^[[:space:]]*\(dt_[a-z0-9_]*\);.*/\1/p' "$2" | sort > "$tmp/sym"
	if ! sed 's/@@.*//' "$tmp/exports" | diff "$tmp/sym" - > "$tmp/diff"; then
		bad "$(basename "$1"): exports differ from $(basename "$2"):" \
			"$(grep '^[<>]' "$tmp/diff" | tr '\n' ' ')"
	fi
	for s in $(grep -v "@@$3\$" "$tmp/exports"); do
		bad "$(basename "$1"): $s is not versioned $3"
	done
	sed 's/@@.*//' "$tmp/exports"
}

check_exports "$client" "$client_sym" LIBDAXTRACK_CLIENT_1 > "$tmp/client.names"
check_exports "$engine" "$engine_sym" LIBDAXTRACK_1 > "$tmp/engine.names"
for s in $(comm -12 "$tmp/client.names" "$tmp/engine.names"); do
	bad "$s is exported by both libraries"
done

readelf -d "$client" | grep NEEDED | grep -q urcu && bad "$(basename "$client") needs liburcu"
readelf -d "$engine" | grep NEEDED | grep -q 'liburcu-memb' ||
	bad "$(basename "$engine") does not need liburcu-memb"

export PKG_CONFIG_PATH="$pcdir"
req=$(pkg-config --print-requires libdaxtrack-client
	pkg-config --print-requires-private libdaxtrack-client | grep -v '^libpmem')
[ -z "$req" ] || bad "libdaxtrack-client.pc requires $req"
libs=$(pkg-config --libs libdaxtrack-client) || bad "pkg-config libdaxtrack-client failed"
case " $libs " in
*urcu*) bad "pkg-config --libs libdaxtrack-client: $libs" ;;
*-ldaxtrack-client*) ;;
*) bad "pkg-config --libs libdaxtrack-client: $libs" ;;
esac
pkg-config --print-requires libdaxtrack | grep -q '^liburcu-memb' ||
	bad "libdaxtrack.pc does not require liburcu-memb"
libs=$(pkg-config --libs libdaxtrack) || bad "pkg-config libdaxtrack failed"
case " $libs " in
*" -ldaxtrack "*-lurcu-memb*) ;;
*) bad "pkg-config --libs libdaxtrack: $libs" ;;
esac

[ $fail = 0 ] && echo "client: $(wc -l < "$tmp/client.names") symbols, engine:" \
	"$(wc -l < "$tmp/engine.names") symbols; pkg-config: libdaxtrack: $libs"
rm -rf "$tmp"	# not with a trap: dash leaks it, and the unit suite runs under valgrind
exit $fail
