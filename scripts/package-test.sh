#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check's "package" stage: srnic installs like a driver, on the host
# whose root the guests see, for every supported kernel, three ways, and
# each leaves the host as it found it:
#
#  1. make deb, then apt-get install the srnic-dkms package: DKMS builds
#     srnic.ko for each kernel (dkms status), modinfo -k shows the version;
#     a guest of each kernel runs selftests/srnic_autoload.sh ("rdma link
#     add" loads the installed module by itself, traffic passes); apt-get
#     purge removes every srnic.ko again.
#  2. make install / make uninstall: srnic.ko under updates/, modinfo
#     shows it, then it is gone.
#  3. make dkms / make dkms-remove: DKMS from the checkout, the same.
#
# Output: one "ok"/"not ok" line per step; the guests' folders under
# ${SRNIC_OUT:-/var/tmp/srnic-out}/package. Exit 0 when every step passed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
out=${SRNIC_OUT:-/var/tmp/srnic-out}/package
mkdir -p "$out"
ver=$(scripts/version.sh)
kvers=$(scripts/kvers.sh | tr "\n" " ")
kvers=${kvers% }
n=0 failed=0
export DEBIAN_FRONTEND=noninteractive

point() {	# RESULT DESC
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}

step() {	# DESC CMD...: CMD's output to the log, one point with its seconds
	local desc=$1 log=$out/step$((n + 1)).log rc=0 t0=$SECONDS
	shift
	"$@" >"$log" 2>&1 || rc=$?
	[ $rc -eq 0 ] || tail -n 25 "$log" | sed 's/^/#   /'
	point $rc "$desc ($((SECONDS - t0)) s)"
}

# Every srnic.ko under some kernel's updates/ (make install's, DKMS's).
installed() {
	find /lib/modules/*/updates -name 'srnic.ko*' 2>/dev/null
}

# No srnic of any kind left on the host: run first and at exit.
clean_host() {
	if dpkg-query -W -f='${Status}' srnic-dkms 2>/dev/null | grep -q installed; then
		$SUDO apt-get purge -y -q srnic-dkms
	fi
	scripts/install.sh dkms-remove
	scripts/install.sh uninstall
}

# modinfo -k of each kernel: srnic, version $ver, under updates/$1.
modinfo_all() {
	local k f v
	for k in $kvers; do
		f=$(modinfo -k "$k" -F filename srnic) || return 1
		v=$(modinfo -k "$k" -F version srnic) || return 1
		echo "$k: $f $v"
		[[ $f == /lib/modules/$k/updates/$1* ]] && [ "$v" = "$ver" ] || return 1
		# A shipped module has no test hooks (srnic_hooks.c).
		if modinfo -k "$k" -F parm srnic | grep -q debug_; then
			echo "$k: the installed srnic has test hooks:"
			modinfo -k "$k" -F parm srnic | grep debug_
			return 1
		fi
	done
}

dkms_installed() {
	local k
	for k in $kvers; do
		dkms status -m srnic -v "$ver" -k "$k" | grep ': installed' || return 1
	done
}

none_left() {
	local f
	f=$(installed)
	[ -z "$f" ] || { echo "left: $f"; return 1; }
	! dkms status -m srnic 2>/dev/null | grep -q . || { dkms status -m srnic; return 1; }
	[ -z "$(ls -d /usr/src/srnic-* 2>/dev/null)" ]
}

# A guest of kernel $1 runs srnic_autoload.sh: passed, not skipped.
guest_autoload() {
	env SRNIC_AUTOLOAD_VERSION="$ver" scripts/vm.sh --kernel "$1" --timeout 400 \
		--fail-on-splat --out "$out/guest-$1" -- \
		selftests/run_kselftests.sh srnic_autoload.sh | tee "$out/guest-$1.log" || return 1
	grep -q '^ok 1 selftests: srnic: srnic_autoload.sh ([0-9]*s)$' "$out/guest-$1.log"
}

if [ "${1:-}" = --none-left ]; then
	none_left
	exit
fi
clean_host >"$out/clean-before.log" 2>&1
trap 'clean_host >"$out/clean-after.log" 2>&1' EXIT
echo "# srnic $ver, kernels: $kvers"

# 1. The Debian package.
step "make deb: build/deb/srnic-dkms_${ver}_all.deb" make -s deb
deb=build/deb/srnic-dkms_${ver}_all.deb
step "apt-get install the package: DKMS builds srnic.ko for each kernel" \
	$SUDO apt-get install -y -q "./$deb"
step "dkms status: srnic $ver installed for $kvers" dkms_installed
step "modinfo -k: srnic $ver under updates/dkms for each kernel, no test hooks" modinfo_all dkms/
for k in $kvers; do
	step "guest $k: rdma link add loads the installed srnic (srnic_autoload.sh)" \
		guest_autoload "$k"
done
step "apt-get purge srnic-dkms: no srnic.ko left" \
	bash -c "$SUDO apt-get purge -y -q srnic-dkms && scripts/package-test.sh --none-left"

# 2. make install / make uninstall.
step "make install: srnic.ko into updates/ of each kernel" make -s install
step "modinfo -k: srnic $ver under updates/ for each kernel, no test hooks" modinfo_all srnic.ko
step "make uninstall: no srnic.ko left" \
	bash -c "make -s uninstall && scripts/package-test.sh --none-left"

# 3. make dkms / make dkms-remove.
step "make dkms: DKMS builds and installs srnic $ver for each kernel" make -s dkms
step "modinfo -k: srnic $ver under updates/dkms for each kernel, no test hooks" modinfo_all dkms/
step "make dkms-remove: no srnic.ko, no DKMS tree, no /usr/src/srnic-* left" \
	bash -c "make -s dkms-remove && scripts/package-test.sh --none-left"

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]
