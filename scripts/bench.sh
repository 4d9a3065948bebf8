#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: srnic beside rdma_rxe, measured by perftest in a QEMU guest
# of each supported kernel (KVER=... for one), the table of ratios written
# to the output folder (SRNIC_OUT, default a new dir under
# /var/tmp/srnic-out). A benchmark: its numbers never fail anything.
# SRNIC_BENCH_MODE=qps (make bench-qps): the active-QP-count benchmark of
# the prefetch pool and transmit gate instead (scripts/bench-guest.sh).
# SRNIC_BENCH_MODE=twohost (make bench-twohost): srnic and rdma_rxe between
# the two guests of scripts/vm-pair.sh instead (scripts/bench-twohost.sh).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/deps.sh
kvers=${KVER:-$(scripts/kvers.sh)}
out=${SRNIC_OUT:-/var/tmp/srnic-out}/bench-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
make -s modules-all selftests-build
if [ "${SRNIC_BENCH_MODE:-}" = twohost ]; then
	# make bench-twohost: the two guests of vm-pair.sh (6.1 and 6.12)
	echo "bench: two guests as two hosts (scripts/vm-pair.sh)"
	scripts/vm-pair.sh --timeout 3000 --out "$out/twohost" -- \
		scripts/bench-twohost.sh || echo "bench: the pair failed"
	cp "$out"/twohost/b/bench-twohost.md "$out/" 2>/dev/null &&
		cat "$out/bench-twohost.md"
	echo "bench: results in $out"
	exit 0
fi
for k in $kvers; do
	echo "bench: booting $k in a QEMU guest (TCG)"
	scripts/vm.sh --kernel "$k" --timeout 1800 --out "$out/guest-$k" \
		-- scripts/bench-guest.sh || echo "bench: the $k guest failed"
	cp "$out/guest-$k"/bench*.md "$out/" 2>/dev/null || true
done
echo
for t in "$out"/bench-*.md; do
	[ -e "$t" ] && cat "$t" && echo
done
echo "bench: results in $out"
