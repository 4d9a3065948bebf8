#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# testkernel.sh - build (once) and describe srnic's debug/KUnit test kernel.
#
# Usage:
#   scripts/testkernel.sh            build it unless cached, then print it
#   scripts/testkernel.sh --print    print it; exit 1 if it is not built
#
# Output (stdout, eval-able; everything else goes to stderr):
#   TK_VER=<kernelrelease>  TK_IMAGE=<bzImage, for scripts/vm.sh --kernel>
#   TK_MODDIR=<INSTALL_MOD_PATH, for vm.sh --moddir>
#   TK_KDIR=<O= build tree: make -C $TK_KDIR M=... modules>
#   TK_SRC=<kernel source tree (tools/testing/kunit/kunit.py)>
#
# The kernel is Debian's linux-source-6.1 (/usr/src/linux-source-6.1.tar.xz,
# SRNIC_LINUX_SOURCE overrides) configured as "make allnoconfig" +
# kunit/guest.config + kunit/.kunitconfig + "make olddefconfig"; every
# y/m/value the fragments ask for is checked to be in the final .config.
# Cache: ${SRNIC_CACHE:-/var/cache/srnic}/testkernel/
#   src/<source version>/               the extracted source (shared)
#   <source version>-<fragments hash>/  build/ (O=), mods/, build.log, env,
#                                       done (written last: an interrupted
#                                       build is resumed, never used)
# Concurrent invocations serialize on a lock; a cached kernel needs none.
set -eu

me=testkernel.sh
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "$me: error: $*" >&2; exit 1; }
msg() { echo "$me: $*" >&2; }

print_only=0
case ${1:-} in
--print) print_only=1 ;;
'') ;;
-h|--help) sed -n '/^# Usage:/,/^# Cache:/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 0 ;;
*) die "unknown argument '$1' (try --help)" ;;
esac

# Bump when the recipe below changes in a way that changes the kernel.
RECIPE=3
frags=("$top/kunit/guest.config" "$top/kunit/.kunitconfig")
for f in "${frags[@]}"; do [ -r "$f" ] || die "missing $f"; done

tarball=${SRNIC_LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
[ -r "$tarball" ] || die "no $tarball (run scripts/deps.sh: linux-source-6.1)"
srcver=
if [ -z "${SRNIC_LINUX_SOURCE:-}" ]; then
	srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
fi
[ -n "$srcver" ] || srcver=custom-$(sha256sum "$tarball" | cut -c1-12)
srcver=${srcver//[^A-Za-z0-9.+_-]/_}

hash=$( { echo "recipe=$RECIPE"; cat "${frags[@]}"; } | sha256sum | cut -c1-12)
root=${SRNIC_CACHE:-/var/cache/srnic}/testkernel
dir=$root/$srcver-$hash
srcroot=$root/src/$srcver
bld=$dir/build
mods=$dir/mods
log=$dir/build.log

# The bzImage: KASAN and PVH do not mix (see kunit/guest.config), so vm.sh
# finds no PVH note in it and boots it as a bzImage.
print_env() {
	cat <<EOF
TK_VER=$(cat "$dir/kernelrelease")
TK_IMAGE=$bld/arch/x86/boot/bzImage
TK_MODDIR=$mods
TK_KDIR=$bld
TK_SRC=$(cat "$dir/source")
EOF
}

if [ -f "$dir/done" ]; then print_env; exit 0; fi
[ $print_only -eq 0 ] || { msg "not built: $dir (run scripts/testkernel.sh)"; exit 1; }

mkdir -p "$root"
exec 9>"$root/.lock"
if ! flock -n 9; then
	msg "waiting for another testkernel.sh ($root/.lock)"
	flock 9
fi
if [ -f "$dir/done" ]; then print_env; exit 0; fi	# built meanwhile

for t in make gcc flex bison bc perl xz tar depmod; do
	command -v "$t" >/dev/null || die "'$t' not found (run scripts/deps.sh)"
done
[ -e /usr/include/libelf.h ] || die "libelf-dev missing (run scripts/deps.sh)"

start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# --- the source, once per source version ---------------------------------------
if [ ! -f "$srcroot/.done" ]; then
	msg "extracting $tarball -> $srcroot"
	rm -rf "$srcroot" "$srcroot.tmp"
	mkdir -p "$srcroot.tmp"
	tar -C "$srcroot.tmp" -xf "$tarball"
	mv "$srcroot.tmp" "$srcroot"
	touch "$srcroot/.done"
fi
src=$(find "$srcroot" -mindepth 2 -maxdepth 2 -name Makefile -printf '%h\n' | head -n1)
if [ -z "$src" ] || [ ! -f "$src/tools/testing/kunit/kunit.py" ]; then
	die "$srcroot: no kernel source tree with tools/testing/kunit/kunit.py"
fi

# --- configure ---------------------------------------------------------------
mkdir -p "$bld"
[ -f "$log" ] && msg "resuming an unfinished build in $dir"
echo "=== $(date -Is) testkernel.sh: $srcver-$hash, load $load0" >>"$log"

# A clean make environment: nothing from the caller's shell may change the
# kernel (LOCALVERSION from the environment would change its version).
unset LOCALVERSION KBUILD_OUTPUT KCONFIG_CONFIG ARCH CROSS_COMPILE CC LD \
	KCFLAGS KCPPFLAGS KBUILD_EXTRA_SYMBOLS INSTALL_MOD_PATH M V W C \
	MAKEFLAGS MAKELEVEL MFLAGS
kmake() { make -C "$src" O="$bld" ARCH=x86_64 "$@"; }

step() {	# DESCRIPTION CMD...: run, log; on failure show the log's tail
	local what=$1
	shift
	msg "$what"
	echo "=== $what" >>"$log"
	if ! "$@" >>"$log" 2>&1; then
		tail -n 40 "$log" | sed 's/^/    /' >&2
		die "$what failed (log: $log)"
	fi
}

# shellcheck disable=SC2016 # $1.. expand in the sh -c
step "configuring (allnoconfig + fragments + olddefconfig)" sh -c '
	set -e
	make -s -C "$1" O="$2" ARCH=x86_64 allnoconfig
	"$1/scripts/kconfig/merge_config.sh" -m -O "$2" "$2/.config" "$3" "$4"
	make -s -C "$1" O="$2" ARCH=x86_64 olddefconfig
' sh "$src" "$bld" "${frags[@]}"

# Every symbol the fragments set must have its value; every "is not set"
# must be unset.  Kconfig silently drops what it cannot satisfy.
bad=$(awk '
	FNR == NR { have[$0] = 1; next }
	/^CONFIG_[A-Za-z0-9_]+=/ { if (!($0 in have)) print FILENAME, $0; next }
	/^# CONFIG_[A-Za-z0-9_]+ is not set/ {
		if (($2 "=y") in have || ($2 "=m") in have) print FILENAME, "unset:" $2
	}
' "$bld/.config" "${frags[@]}" | while read -r file want; do
	sym=${want#unset:}; sym=${sym%%=*}
	got=$(grep -E "^($sym=|# $sym is not set)" "$bld/.config" ||
	      echo "absent (unmet dependencies)")
	echo "${file#"$top"/}: wants ${want/unset:/unset }, got $got"
done)
if [ -n "$bad" ]; then
	echo "$bad" >>"$log"
	echo "$me: error: the kernel config lacks what the fragments ask for:" >&2
	printf '    %s\n' "${bad//$'\n'/$'\n'    }" >&2
	die "fix kunit/guest.config or kunit/.kunitconfig (dependencies: make -C $src O=$bld menuconfig, '/' search)"
fi

# --- build and install -----------------------------------------------------------
jobs=$(nproc)
step "building bzImage + modules (make -j$jobs; log $log)" kmake -j"$jobs" bzImage modules
kver=$(kmake -s kernelrelease)
[ -n "$kver" ] || die "no kernelrelease"
# shellcheck disable=SC2016 # $1.. expand in the sh -c
step "installing modules for $kver" sh -c '
	set -e
	rm -rf "$3"
	make -C "$1" O="$2" ARCH=x86_64 INSTALL_MOD_PATH="$3" modules_install
' sh "$src" "$bld" "$mods"
[ -f "$bld/Module.symvers" ] || die "no $bld/Module.symvers"
[ -f "$mods/lib/modules/$kver/modules.builtin" ] || die "modules_install left no modules.builtin"

echo "$kver" >"$dir/kernelrelease"
echo "$src" >"$dir/source"
secs=$(($(date +%s) - start))
note="built $kver in $((secs / 60))m$((secs % 60))s on $jobs CPUs (load at start: $load0, at end: $(cut -d' ' -f1-3 /proc/loadavg))"
echo "=== $note" >>"$log"
msg "$note"
date -Is >"$dir/done"
print_env
