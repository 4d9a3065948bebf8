#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-twohost, inside each of the two guests of scripts/vm-pair.sh
# (side a: the newest 6.1, side b: the newest 6.12, one vCPU each, one
# virtio link over a Unix stream socket): srnic <-> srnic and rdma_rxe <->
# rdma_rxe across the two kernels, the same perftest cases over the same
# link, the two drivers' runs interleaved (each round loads one driver on
# both sides, runs every case, then the other). The server runs on side a,
# the client on side b; side b writes the table (both kernels named) to
# its output folder as bench-twohost.md. Here, unlike make bench, every
# packet crosses a real link and each end has its own kernel and CPU: the
# ICRC is computed and checked, nothing is loopback.
#
# SRNIC_BENCH_REPS rounds (3). A benchmark: it never fails on numbers; a
# run that fails reports "-".
set -u
. "$(dirname "$0")/../selftests/srnic_lib.sh"
. "$(dirname "$0")/../selftests/twohost_lib.sh"
. "$(dirname "$0")/bench_lib.sh"

REPS=${SRNIC_BENCH_REPS:-3}
OUT=${SRNIC_OUT:-$SRNIC_TMP}
RAW=$OUT/bench-twohost-raw.txt
TABLE=$OUT/bench-twohost.md

# name|tool|args|kind: bw (MiB/s, BW average), lat (usec typical, p99)
CASES=(
	"ib_write_bw 64 KiB|ib_write_bw|-s 65536 -n 1000|bw"
	"ib_write_bw 4 KiB|ib_write_bw|-s 4096 -n 5000|bw"
	"ib_read_bw 64 KiB|ib_read_bw|-s 65536 -n 500|bw"
	"ib_send_lat 2 B|ib_send_lat|-s 2 -n 1000|lat"
	"ib_write_lat 2 B|ib_write_lat|-s 2 -n 1000|lat"
	"ib_read_lat 2 B|ib_read_lat|-s 2 -n 1000|lat"
)

ktap_print_header
th_require
srnic_require
require_cmd ib_write_bw ib_read_bw ib_send_lat ib_write_lat ib_read_lat timeout
ktap_set_plan $((2 + REPS * 2 * (${#CASES[@]} + 2)))
ktap_print_msg "side $TH_SIDE, kernel $(uname -r)"
ktap_test_run "link 0 up (side $TH_SIDE)" th_link_up 0 || srnic_bail "no link"
th_barrier link-up 300 || srnic_bail "the other guest did not come up"
th_mark kernel "$(uname -r)"
PEER_KERNEL=$(th_wait kernel)
ktap_test_result "ping the other host" wait_until 20 ping -c 1 -W 1 "$TH_PEER_IP4"

dev_up() {	# srnic|rxe
	case $1 in
	srnic) srnic_load || return 1 ;;
	rxe) modprobe rdma_rxe || return 1 ;;
	esac
	rdma link add "${1}0" type "$1" netdev "$TH_IF" || return 1
	DEV=${1}0
	GID=$(srnic_gid_wait "$DEV" "$TH_IP4")
}

dev_down() {
	rdma link delete "$DEV" || return 1
	case $DEV in
	srnic*) srnic_unload ;;
	rxe*) modprobe -r rdma_rxe ;;
	esac
}

: >"$RAW"
PORT=18900
for ((r = 1; r <= REPS; r++)); do
	for drv in srnic rxe; do
		ktap_test_run "round $r: ${drv}0 on $TH_IF" dev_up $drv ||
			srnic_bail "no ${drv}0"
		th_barrier "up-$r-$drv" 300 || srnic_bail "the other side has no device"
		for c in "${CASES[@]}"; do
			IFS='|' read -r name tool args kind <<<"$c"
			PORT=$((PORT + 1))
			# shellcheck disable=SC2086
			th_step "round $r: $drv: $name" a $PORT \
				$tool -F -d "$DEV" -x "$GID" -p $PORT $args -- \
				$tool -F -d "$DEV" -x "$GID" -p $PORT $args "$TH_PEER_IP4"
			[ "$TH_SIDE" = b ] || continue
			line=$(awk '/#bytes/ { getline; print; exit }' \
				"$OUT/step$TH_STEP.log" 2>/dev/null)
			# shellcheck disable=SC2086
			set -- $line
			case $kind in
			bw) v=${4:-} ;;
			lat) v="${5:-} ${8:-}" ;;
			esac
			[ -n "${v// /}" ] && echo "$name|$drv|$v" >>"$RAW"
		done
		th_barrier "done-$r-$drv" 600 || srnic_bail "the other side did not finish"
		ktap_test_run "round $r: ${drv}0 removed" dev_down
	done
done

if [ "$TH_SIDE" = b ]; then
	{
		echo "### make bench-twohost: server $PEER_KERNEL (side a), client $(uname -r) (side b)"
		echo
		echo "Two QEMU TCG guests, 1 vCPU each, one virtio link over a Unix stream socket;"
		echo "srnic <-> srnic and rdma_rxe <-> rdma_rxe, $REPS interleaved rounds, perftest -F;"
		echo "median (min-max) over the rounds."
		echo
		echo "| case | srnic | rdma_rxe | srnic/rxe |"
		echo "|---|---|---|---|"
		for c in "${CASES[@]}"; do
			IFS='|' read -r name tool args kind <<<"$c"
			if [ "$kind" = bw ]; then
				read -r sm sl sh <<<"$(stat "$name" srnic 1)"
				read -r rm rl rh <<<"$(stat "$name" rxe 1)"
				echo "| $name, MiB/s (\`$args\`) | $(cell "$sm" "$sl" "$sh" 1) | $(cell "$rm" "$rl" "$rh" 1) | $(ratio "$sm" "$rm") |"
			else
				for f in 1 2; do
					read -r sm sl sh <<<"$(stat "$name" srnic $f)"
					read -r rm rl rh <<<"$(stat "$name" rxe $f)"
					what=$([ $f = 1 ] && echo typical || echo p99)
					echo "| $name $what, usec (\`$args\`) | $(cell "$sm" "$sl" "$sh" 1) | $(cell "$rm" "$rl" "$rh" 1) | $(ratio "$sm" "$rm") |"
				done
			fi
		done
	} >"$TABLE"
	sed "s/^/# /" "$TABLE"
fi
ktap_finished
