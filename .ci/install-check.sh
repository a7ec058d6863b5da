#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# install-check.sh - install daxtrack as a user would and check the result.
#
# Usage: .ci/install-check.sh BUILD_DIR
#
# Configures BUILD_DIR with --prefix=/usr, installs it into BUILD_DIR/dest
# (DESTDIR) and checks, each check printing "install: NAME: ok" or
# "install: NAME: FAILED (reason)":
#   symbols-LIB   every symbol of LIB's .sym is exported with its version
#   preload       libdaxtrack-preload.so is installed in libdir and exports
#                 exactly the interposers of lib/preload/preload.sym
#   pc-LIB        pkg-config --libs: libdaxtrack brings -lurcu-memb,
#                 libdaxtrack-client neither liburcu nor libdaxtrack
#   ext-engine    tests/install/ext_engine.c, built only from the installed
#                 headers, libraries and pkg-config files, runs
#   ext-client    tests/install/ext_client.c, built the same way, persists a
#                 store through the installed daxtrackd
#   units-verify  systemd-analyze verify of the installed units
#   units-security  systemd-analyze security --offline=true: at most 2.0
# Exits 1 if any check failed.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
src=$PWD
build=${1:?usage: install-check.sh BUILD_DIR}
dest=$build/dest
failures=0

ok() { echo "install: $1: ok${2:+ ($2)}"; }
bad() { echo "install: $1: FAILED ($2)"; failures=$((failures + 1)); }

if [[ -f $build/build.ninja ]]; then
	meson setup --reconfigure "$build" --prefix=/usr -Dtests=false -Dwerror=true -Dsystemd=enabled -Dcxl=enabled >/dev/null
else
	rm -rf "$build"
	meson setup "$build" --prefix=/usr -Dtests=false -Dwerror=true -Dsystemd=enabled -Dcxl=enabled >/dev/null
fi || { bad setup "meson setup failed"; exit 1; }
ninja -C "$build" >/dev/null || { bad build "ninja failed"; exit 1; }
rm -rf "$dest"
DESTDIR=$(realpath -m "$dest") meson install -C "$build" --no-rebuild >/dev/null ||
	{ bad install "meson install failed"; exit 1; }
dest=$(realpath "$dest")

libdir=$(dirname "$(find "$dest" -name libdaxtrack.pc -print -quit)")
libdir=${libdir%/pkgconfig}
[[ -d $libdir ]] || { bad install "no libdaxtrack.pc under $dest"; exit 1; }

# check_symbols LIB SYMFILE: each global of SYMFILE exported as NAME@@VERSION.
check_symbols()
{
	local lib=$1 sym=$2 version exported missing=()
	version=$(sed -n 's/^\([A-Z0-9_]*\) {.*/\1/p' "$sym" | head -n 1)
	exported=$(nm -D --defined-only --with-symbol-versions "$libdir/$lib.so" | awk '{print $3}')
	while read -r name; do
		grep -qxF "$name@@$version" <<<"$exported" || missing+=("$name")
	done < <(sed -n '/^global:/,/^local:/{/^[[:space:]]*[a-z_0-9]*;/s/[[:space:];]//gp}' "$sym")
	if [[ ${#missing[@]} -eq 0 ]]; then
		ok "symbols-$lib" "$(grep -c "@@$version" <<<"$exported") symbols, $version"
	else
		bad "symbols-$lib" "not exported as @@$version: ${missing[*]}"
	fi
}
check_symbols libdaxtrack lib/core/libdaxtrack.sym
check_symbols libdaxtrack-client lib/client/libdaxtrack-client.sym

# The LD_PRELOAD shim: beside the libraries, exporting its interposers and nothing else.
preload=$libdir/libdaxtrack-preload.so
if [[ ! -f $preload ]]; then
	bad preload "not installed in ${libdir#"$dest"}"
else
	want=$(sed -n '/^global:/,/^local:/{/^[[:space:]]*[a-z_0-9]*;/s/[[:space:];]//gp}' \
		lib/preload/preload.sym | sort)
	got=$(nm -D --defined-only "$preload" | awk '{print $3}' | sort)
	if [[ $want == "$got" ]]; then
		ok preload "$(wc -w <<<"$got") symbols: $(paste -sd " " <<<"$got")"
	else
		bad preload "exports $(paste -sd " " <<<"$got"), not $(paste -sd " " <<<"$want")"
	fi
fi

# pkg-config as a user: only the installed files, paths under DESTDIR.
export PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_LIBDIR=$libdir/pkgconfig:$(pkg-config --variable pc_path pkg-config)
engine_libs=$(pkg-config --libs libdaxtrack) || bad pc-libdaxtrack "pkg-config failed"
client_libs=$(pkg-config --libs libdaxtrack-client) || bad pc-libdaxtrack-client "pkg-config failed"
if [[ " $engine_libs " == *" -lurcu-memb "* ]]; then
	ok pc-libdaxtrack "$engine_libs"
else
	bad pc-libdaxtrack "--libs lacks -lurcu-memb: $engine_libs"
fi
if [[ $client_libs == *urcu* || " $client_libs " == *" -ldaxtrack "* ]]; then
	bad pc-libdaxtrack-client "--libs names the engine: $client_libs"
else
	ok pc-libdaxtrack-client "$client_libs"
fi

work=$(mktemp -d)
trap 'kill "$daemon_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
daemon_pid=

# build_ext NAME PKG: compile tests/install/NAME.c against the installed PKG.
build_ext()
{
	# shellcheck disable=SC2046
	cc -std=gnu11 -Wall -Wextra -Werror -o "$work/$1" "$src/tests/install/$1.c" \
		$(pkg-config --cflags --libs "$2") 2>"$work/$1.err"
}
export LD_LIBRARY_PATH=$libdir

if ! build_ext ext_engine libdaxtrack; then
	bad ext-engine "does not build: $(head -c 300 "$work/ext_engine.err")"
elif out=$("$work/ext_engine" 2>&1); then
	ok ext-engine "$out"
else
	bad ext-engine "$out"
fi

# The installed daemon on a file region in a private directory.
cat >"$work/daxtrackd.conf" <<CONF
[daemon]
socket = $work/d.sock
state_dir = $work/state

[region "ext"]
path = $work/ext.region
size = 4M
CONF
mkdir -p "$work/state"
"$dest/usr/sbin/daxtrackd" --foreground --config "$work/daxtrackd.conf" 2>"$work/daemon.log" &
daemon_pid=$!
for _ in $(seq 100); do
	[[ -S $work/d.sock ]] && break
	sleep 0.1
done
if ! build_ext ext_client libdaxtrack-client; then
	bad ext-client "does not build: $(head -c 300 "$work/ext_client.err")"
elif ldd "$work/ext_client" | grep -q 'liburcu\|libdaxtrack\.so'; then
	bad ext-client "links the engine: $(ldd "$work/ext_client" | grep 'urcu\|daxtrack\.so')"
elif out=$("$work/ext_client" "$work/d.sock" ext 2>&1); then
	ok ext-client "$out"
else
	bad ext-client "$out; daemon log: $(tail -n 3 "$work/daemon.log")"
fi
kill -TERM "$daemon_pid" 2>/dev/null
wait "$daemon_pid" 2>/dev/null
daemon_pid=

# The units as installed, with ExecStart= pointing into DESTDIR.
units=$work/units
mkdir -p "$units"
for unit in daxtrackd.service daxtrackd.socket; do
	file=$(find "$dest" -path "*/systemd/system/$unit" -print -quit)
	[[ -n $file ]] || { bad units-verify "$unit not installed"; continue; }
	sed "s|=/usr/sbin/|=$dest/usr/sbin/|" "$file" >"$units/$unit"
done
if out=$(systemd-analyze verify --man=no "$units/daxtrackd.service" "$units/daxtrackd.socket" 2>&1); then
	ok units-verify
else
	bad units-verify "$(tr '\n' ' ' <<<"$out")"
fi
out=$(systemd-analyze security --offline=true --no-pager "$units/daxtrackd.service" 2>&1)
score=$(sed -n 's/.*Overall exposure level for daxtrackd.service: \([0-9.]*\).*/\1/p' <<<"$out")
if [[ -z $score ]]; then
	bad units-security "no score: $(tail -n 2 <<<"$out" | tr '\n' ' ')"
elif awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then
	ok units-security "exposure $score"
else
	bad units-security "exposure $score > 2.0"
fi

exit $((failures > 0))
