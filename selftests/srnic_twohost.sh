#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two hosts, two kernels: runs on both guests of scripts/vm-pair.sh at once
# (side a: 6.1, side b: 6.12 by default), joined by link 0. Each side
# prints the KTAP lines of its own ends; the pair passes when both do.
#
#  1. srnic <-> srnic, each side the requester in turn: srnic_rc_test order
#     (Write x K + Write with Immediate, every byte of every generation
#     checked when the Immediate lands), integrity (Writes and Sends of a
#     seeded stream, read back with RDMA Reads and hashed), rping -V
#     (rdma_cm), ibv_rc_pingpong, ib_write_bw and ib_write_lat (perftest).
#  2. srnic on side a <-> rdma_rxe on side b (initial namespace), each side
#     the requester in turn: order, integrity, rping -V.
#  3. the same with the kernels swapped: rdma_rxe on side a, srnic on b.
#
# Environment: SRNIC_TH_GENS (order generations, 500), SRNIC_TH_BYTES
# (integrity bytes, 32M), SRNIC_TH_PINGS (rping, 200); make check-full
# runs larger volumes.
. "$(dirname "$0")/srnic_lib.sh"
. "$(dirname "$0")/twohost_lib.sh"

GENS=${SRNIC_TH_GENS:-500}
BYTES=${SRNIC_TH_BYTES:-32M}
PINGS=${SRNIC_TH_PINGS:-200}
RC_TEST=$SRNIC_BIN/srnic_rc_test

ktap_print_header
th_require
srnic_require
require_cmd rping ibv_rc_pingpong ib_write_bw ib_write_lat ss timeout
[ -x "$RC_TEST" ] || ktap_skip_rest "no $RC_TEST (run make selftests-build)"
ktap_set_plan 33
dmesg_mark
ktap_print_msg "side $TH_SIDE, kernel $(uname -r)"

ktap_test_run "link 0 up (side $TH_SIDE)" th_link_up 0 ||
	srnic_bail "no link"
ktap_print_msg "link 0: $TH_IF $TH_IP4 $TH_IP6, peer $TH_PEER_IP4"
th_barrier link-up 300 || srnic_bail "the other guest did not come up"
ktap_test_result "ping the other host over link 0" \
	wait_until 20 ping -c 1 -W 1 "$TH_PEER_IP4"

# dev_up TYPE NAME: this side's RDMA device on the link; sets DEV, GID.
dev_up() {
	case $1 in
	srnic) srnic_load || return 1 ;;
	rxe) modprobe rdma_rxe || return 1 ;;
	esac
	rdma link add "$2" type "$1" netdev "$TH_IF" || return 1
	DEV=$2
	GID=$(srnic_gid_wait "$DEV" "$TH_IP4")
}

dev_down() {
	rdma link delete "$DEV" || return 1
	case $DEV in
	srnic*) srnic_unload ;;
	rxe*) rmmod rdma_rxe ;;
	esac
}

PORT=18600
# rc_step DESC SRV_SIDE TEST ARGS...: one srnic_rc_test TEST across the
# pair, its server on SRV_SIDE; both ends take ARGS.
rc_step() {
	local desc=$1 srv=$2 test=$3
	shift 3
	PORT=$((PORT + 1))
	th_step "$desc" "$srv" $PORT \
		"$RC_TEST" --dev "$DEV" --gid-index "$GID" --port $PORT \
		--server "$@" "$test" -- \
		"$RC_TEST" --dev "$DEV" --gid-index "$GID" --port $PORT \
		--connect "$TH_PEER_IP4" "$@" "$test"
}

# rc_steps WHAT: srnic_rc_test order and integrity, then rping, each with
# side a as the requester, then side b.
rc_steps() {
	local what=$1 req srv
	for req in a b; do
		srv=$([ $req = a ] && echo b || echo a)
		rc_step "$what: requester $req: order --gens $GENS" "$srv" \
			order --gens "$GENS"
		rc_step "$what: requester $req: integrity --bytes $BYTES" "$srv" \
			integrity --bytes "$BYTES"
		PORT=$((PORT + 1))
		th_step "$what: client $req: rping -V -C $PINGS" "$srv" $PORT \
			rping -s -V -a "$TH_IP4" -p $PORT -C "$PINGS" -- \
			rping -c -V -a "$TH_PEER_IP4" -p $PORT -C "$PINGS"
	done
}

# 1. srnic <-> srnic
ktap_test_run "srnic0 on $TH_IF" dev_up srnic srnic0 || srnic_bail "no srnic0"
th_barrier srnic-srnic || srnic_bail "the other side has no device"
rc_steps "srnic <-> srnic"
for req in a b; do
	srv=$([ $req = a ] && echo b || echo a)
	PORT=$((PORT + 1))
	th_step "srnic <-> srnic: client $req: ibv_rc_pingpong" "$srv" $PORT \
		ibv_rc_pingpong -d "$DEV" -g "$GID" -p $PORT -n 200 -- \
		ibv_rc_pingpong -d "$DEV" -g "$GID" -p $PORT -n 200 "$TH_PEER_IP4"
	PORT=$((PORT + 1))
	th_step "srnic <-> srnic: client $req: ib_write_bw" "$srv" $PORT \
		ib_write_bw -d "$DEV" -x "$GID" -p $PORT -n 500 -F -- \
		ib_write_bw -d "$DEV" -x "$GID" -p $PORT -n 500 -F "$TH_PEER_IP4"
	PORT=$((PORT + 1))
	th_step "srnic <-> srnic: client $req: ib_write_lat" "$srv" $PORT \
		ib_write_lat -d "$DEV" -x "$GID" -p $PORT -n 500 -F -- \
		ib_write_lat -d "$DEV" -x "$GID" -p $PORT -n 500 -F "$TH_PEER_IP4"
done
th_barrier srnic-srnic-done 600 || srnic_bail "the other side did not finish"

# 2. and 3. srnic <-> rdma_rxe across the two kernels: side b, then side
# a, runs rdma_rxe in its initial namespace.
for rxe_side in b a; do
	ktap_test_run "$DEV removed" dev_down
	if [ "$TH_SIDE" = "$rxe_side" ]; then
		ktap_test_run "rxe0 on $TH_IF" dev_up rxe rxe0 ||
			srnic_bail "no rxe0"
	else
		ktap_test_run "srnic0 on $TH_IF" dev_up srnic srnic0 ||
			srnic_bail "no srnic0"
	fi
	th_barrier "rxe-$rxe_side" || srnic_bail "the other side has no device"
	rc_steps "rdma_rxe on side $rxe_side"
	th_barrier "rxe-$rxe_side-done" 600 || srnic_bail "the other side did not finish"
done

ktap_test_run "$DEV removed" dev_down
ktap_kernel_log_clean
ktap_finished
