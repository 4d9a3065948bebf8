#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install everything srnic's build, demo and tests need on Debian 12.
# Idempotent: a second run with everything present does nothing but check.
set -eu

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

K61=${SRNIC_K61:-6.1.0-*-amd64}
BPO_LIST=/etc/apt/sources.list.d/srnic-bookworm-backports.list

need_update=0
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "deps: adding bookworm-backports to apt sources ($BPO_LIST)"
	echo "deb http://deb.debian.org/debian bookworm-backports main" |
		$SUDO tee "$BPO_LIST" >/dev/null
	need_update=1
fi

pkgs="build-essential bc bison flex libelf-dev libssl-dev dwarves
      kmod cpio busybox-static qemu-system-x86 sparse
      linux-image-amd64 linux-headers-amd64 linux-source-6.1
      rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev
      perftest rdmacm-utils qperf python3-pyverbs iproute2 tshark
      python3 ethtool iputils-ping nvme-cli fio rsync ucx-utils libfabric-bin
      dkms dh-dkms debhelper xz-utils nfs-kernel-server nfs-common"
bpo_pkgs="linux-image-6.12*-amd64 linux-headers-6.12*-amd64"

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
have_bpo=0
ls /boot/vmlinuz-6.12.*+deb12-amd64 >/dev/null 2>&1 &&
	ls -d /usr/src/linux-headers-6.12.*+deb12-amd64 >/dev/null 2>&1 && have_bpo=1

if [ -z "$missing" ] && [ $have_bpo -eq 1 ] && [ $need_update -eq 0 ]; then
	echo "deps: all present"
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# The guests boot with scripts/vm.sh's own small initramfs: skip Debian's
# (slow) initramfs generation when a kernel package is installed.
export INITRD=No
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
$SUDO apt-get update -q
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -q --no-install-recommends $missing
fi
if [ $have_bpo -eq 0 ]; then
	# The generic flavour only: not -rt, -cloud, -dbg or -unsigned.
	img=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' |
	      awk '{print $1}' | sort -V | tail -n1)
	[ -n "$img" ] || { echo "deps: no 6.12 kernel in bookworm-backports" >&2; exit 1; }
	hdr=${img/linux-image/linux-headers}
	echo "deps: installing $img $hdr from bookworm-backports"
	$SUDO apt-get install -y -q --no-install-recommends -t bookworm-backports "$img" "$hdr"
fi
echo "deps: done"
