#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srnic installed like a driver, for every supported kernel whose headers
# are installed (scripts/kvers.sh; KVERS="..." to choose):
#
#   install.sh install       make install: srnic.ko built without the test
#                            modules, modules_install into
#                            /lib/modules/KVER/updates/, depmod
#   install.sh uninstall     make uninstall: that srnic.ko removed, depmod
#   install.sh dkms          make dkms: the sources as /usr/src/srnic-VER/,
#                            dkms add, build and install for each kernel
#   install.sh dkms-remove   make dkms-remove: every srnic version removed
#                            from DKMS and /usr/src
#   install.sh deb           make deb: build/deb/srnic-dkms_VER_all.deb
#                            (debhelper, dh_dkms)
#   install.sh stage DIR     the package's source tree (Kbuild, drivers,
#                            include, dkms.conf, VERSION) into DIR
#
# Once installed (any way), "rdma link add NAME type srnic netdev DEV"
# loads srnic by itself: the module's alias rdma-link-srnic, depmod.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
VER=$(scripts/version.sh)
KVERS=${KVERS:-$(scripts/kvers.sh)}
[ -n "$KVERS" ] || { echo "install.sh: no supported kernel headers (make deps)" >&2; exit 1; }

# stage DIR: the sources a package builds from, the version written in.
stage() {
	rm -rf "$1"
	mkdir -p "$1"
	find Kbuild drivers include \( -name Kbuild -o -name '*.[ch]' \) -print0 |
		xargs -0 cp --parents -t "$1"
	echo "$VER" >"$1/VERSION"
	sed "s/#MODULE_VERSION#/$VER/" dkms.conf >"$1/dkms.conf"
}

case ${1:-} in
stage)
	stage "$2"
	;;
install)
	for k in $KVERS; do
		d=$top/build/install/$k
		stage "$d"
		echo "  BUILD   srnic.ko $VER for $k"
		make -s -j"$(nproc)" -C "/lib/modules/$k/build" M="$d" \
			SRNIC_PACKAGE=1 modules
		echo "  INSTALL /lib/modules/$k/updates/srnic.ko"
		$SUDO make -s -C "/lib/modules/$k/build" M="$d" \
			INSTALL_MOD_DIR=updates modules_install
		$SUDO depmod -a "$k"
	done
	;;
uninstall)
	for k in $KVERS; do
		found=
		for f in /lib/modules/"$k"/updates/srnic.ko*; do
			[ -e "$f" ] || continue
			echo "  REMOVE  $f"
			$SUDO rm -f "$f"
			found=1
		done
		[ -z "$found" ] || $SUDO depmod -a "$k"
	done
	;;
dkms)
	command -v dkms >/dev/null || { echo "install.sh: no dkms (make deps)" >&2; exit 1; }
	src=/usr/src/srnic-$VER
	if $SUDO dkms status -m srnic -v "$VER" | grep -q .; then
		$SUDO dkms remove -m srnic -v "$VER" --all
	fi
	tmp=$(mktemp -d)
	stage "$tmp/srnic"
	$SUDO rm -rf "$src"
	$SUDO cp -a "$tmp/srnic" "$src"
	rm -rf "$tmp"
	$SUDO dkms add -m srnic -v "$VER"
	for k in $KVERS; do
		$SUDO dkms build -m srnic -v "$VER" -k "$k"
		$SUDO dkms install -m srnic -v "$VER" -k "$k"
	done
	$SUDO dkms status -m srnic
	;;
dkms-remove)
	command -v dkms >/dev/null || exit 0
	for v in $($SUDO dkms status -m srnic | sed -n 's|^srnic/\([^,:]*\).*|\1|p' | sort -u); do
		$SUDO dkms remove -m srnic -v "$v" --all
		$SUDO rm -rf "/usr/src/srnic-$v"
	done
	;;
deb)
	command -v dpkg-buildpackage >/dev/null || { echo "install.sh: no dpkg-buildpackage (make deps)" >&2; exit 1; }
	d=$top/build/deb/srnic-$VER
	stage "$d"
	mkdir -p "$d/debian/source"
	cp scripts/deb/control scripts/deb/rules scripts/deb/copyright "$d/debian/"
	echo "3.0 (native)" >"$d/debian/source/format"
	cat >"$d/debian/changelog" <<-CL
	srnic ($VER) unstable; urgency=medium

	  * srnic $VER, built from $(git rev-parse HEAD 2>/dev/null || echo "a source tree").

	 -- srnic developers <srnic@localhost>  $(date -R)
	CL
	rm -f "$top"/build/deb/srnic-dkms_*.deb
	(cd "$d" && dpkg-buildpackage -b -us -uc -tc) >"$top/build/deb/build.log" 2>&1 ||
		{ tail -n 30 "$top/build/deb/build.log"; exit 1; }
	ls "$top"/build/deb/srnic-dkms_"$VER"_all.deb
	;;
*)
	sed -n '3,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
