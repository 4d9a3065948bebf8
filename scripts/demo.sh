#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: from a fresh Debian 12 machine, install what is needed, build
# srnic, boot a guest (the stock kernel KVER, default Debian's 6.1) and
# show srnic at work there (scripts/demo-guest.sh).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/deps.sh
kver=${KVER:-$(scripts/kvers.sh | head -n1)}
make -s modules KVER="$kver"
make -s selftests-build
echo "demo: booting $kver in a QEMU guest (TCG, no network to the outside)"
exec scripts/vm.sh --kernel "$kver" --timeout 600 -- scripts/demo-guest.sh
