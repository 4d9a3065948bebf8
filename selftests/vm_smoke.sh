#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm_smoke.sh - prove the guest harness: network namespaces + veth, the
# stock rdma_rxe driver, libibverbs and real RDMA traffic.  KTAP output.
# Runs as root inside the guest:
#
#	scripts/vm.sh [--kernel VER] -- selftests/vm_smoke.sh
#
# How stock rxe (seen on Debian 6.1 and 6.12) behaves with network namespaces:
#  - "rdma link add" from inside a netns works (the netdev is looked up in the
#    caller's netns) and, in the default "shared" rdma netns mode, the device
#    shows in every netns (ibv_devices in ns A and ns B both list it).
#  - Its GID table holds the netdev's addresses, RoCE v2 only: typically
#    0 = fe80:: link-local, 1 = ::ffff:<IPv4>, 2 = the global IPv6.  Look the
#    index up (rdma_gid_index in lib.sh), don't hard-code it.
#  - With "rdma system set netns exclusive" (possible only while no other
#    netns exists) the device lands in init_net whoever creates it, and rxe
#    cannot be moved ("rdma dev set rxe0 netns X": Operation not supported).
#  - No traffic flows if the netdev is not in init_net: rxe's UDP sockets
#    (port 4791) and route lookups live in init_net only (upstream added
#    per-netns sockets later, rxe_ns.c).  The first send completes in error
#    ("local QP operation error" on 6.1, "Work Request Flushed Error" on
#    6.12), even in loopback on one device.
#  - Two rxe devices on the two ends of a veth in the same netns cannot talk
#    either: the peer's address is local, so it is routed through lo and
#    modify-QP-to-RTR fails.
#  - What works: one rxe device whose netdev is in init_net, with both ends
#    of the connection on it (rxe loops the packets back internally), as
#    blktests and rdma-core's tests use rxe.
# So the cross-netns ping-pong is skipped unless this kernel's rxe has netns
# support (rxe_ns_pernet_sk4 in kallsyms) or SRNIC_SMOKE_XNS=1 forces it.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

PINGPONG_ITERS=100
PINGPONG_PORT=18515
TMP=$(mktemp -d)
defer rm -rf "$TMP"

nsexec() {	# NS CMD...: run CMD in netns NS ("-": the current one)
	local ns=$1
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}

# shellcheck disable=SC2317 # called through wait_until
listening() {	# NS PORT
	nsexec "$1" ss -Hltn "sport = :$2" | grep -q .
}

# pingpong DESC SRV_NS SRV_DEV SRV_GID CLI_NS CLI_DEV CLI_GID SRV_ADDR:
# ibv_rc_pingpong server in SRV_NS on SRV_DEV, client in CLI_NS on CLI_DEV,
# connecting (TCP, for the QP info exchange) to SRV_ADDR.  One TAP line.
pingpong() {
	local desc=$1 sns=$2 sdev=$3 sgid=$4 cns=$5 cdev=$6 cgid=$7 addr=$8
	local port=$PINGPONG_PORT spid rc=0 src=0
	PINGPONG_PORT=$((PINGPONG_PORT + 1))

	nsexec "$sns" timeout 60 ibv_rc_pingpong -d "$sdev" -g "$sgid" -p "$port" \
		-n "$PINGPONG_ITERS" >"$TMP/server" 2>&1 &
	spid=$!
	if ! wait_until 10 listening "$sns" "$port"; then
		echo "server not listening on $port" >"$TMP/client"
		rc=1
	else
		nsexec "$cns" timeout 60 ibv_rc_pingpong -d "$cdev" -g "$cgid" -p "$port" \
			-n "$PINGPONG_ITERS" "$addr" >"$TMP/client" 2>&1 || rc=$?
	fi
	[ $rc -eq 0 ] || kill "$spid" 2>/dev/null
	wait "$spid" || src=$?
	if [ $rc -eq 0 ] && [ $src -eq 0 ] &&
	   grep -q "$PINGPONG_ITERS iters in" "$TMP/client"; then
		ktap_print_msg "$(grep 'iters in' "$TMP/client")"
		ktap_test_pass "$desc"
	else
		ktap_print_msg "client (rc=$rc):"
		sed 's/^/#   /' "$TMP/client"
		ktap_print_msg "server (rc=$src):"
		sed 's/^/#   /' "$TMP/server"
		ktap_test_fail "$desc"
	fi
}

# link_add NS NAME NETDEV ADDR: "rdma link add" from netns NS, then wait for
# the RoCE v2 GID of ADDR; sets GID_IDX.  One TAP line.
link_add() {
	local ns=$1 name=$2 netdev=$3 addr=$4 out where
	where="netns ${ns/#-/init_net}"
	GID_IDX=
	defer rdma link delete "$name"
	if ! out=$(nsexec "$ns" rdma link add "$name" type rxe netdev "$netdev" 2>&1); then
		ktap_print_msg "$out"
		ktap_test_fail "rdma link add $name netdev $netdev ($where)"
		return 1
	fi
	if ! wait_until 10 rdma_gid_index "$name" "$addr" >/dev/null; then
		ibv_devinfo -d "$name" -v 2>&1 | grep GID | sed 's/^/# /'
		ktap_test_fail "rdma link add $name netdev $netdev ($where): no RoCE v2 GID for $addr"
		return 1
	fi
	GID_IDX=$(rdma_gid_index "$name" "$addr")
	ktap_test_pass "rdma link add $name netdev $netdev ($where), RoCE v2 GID[$GID_IDX] = $addr"
}

ktap_print_header
require_root
require_cmd ip rdma ibv_devices ibv_devinfo ibv_rc_pingpong modprobe ping ss timeout
modinfo rdma_rxe >/dev/null 2>&1 || ktap_skip_rest "no rdma_rxe module for $(uname -r)"
ktap_set_plan 14
dmesg_mark
ktap_print_msg "kernel $(uname -r)"

# 1-2: two namespaces joined by a veth pair, plus a veth from init_net (the
# only netns where stock rxe carries traffic) to ns B.
setup_ns NS_A NS_B
setup_veth_pair "$NS_A" "$NS_B"
A_IF=$VETH_A A_IP4=$VETH_A_IP4 B_IF=$VETH_B B_IP4=$VETH_B_IP4
ktap_test_result "veth $NS_A <-> $NS_B: IPv4 ping" \
	ip netns exec "$NS_A" ping -c 1 -W 5 "$VETH_B_IP4"
ktap_test_result "veth $NS_A <-> $NS_B: IPv6 ping" \
	ip netns exec "$NS_A" ping -6 -c 1 -W 5 "$VETH_B_IP6"
setup_veth_pair - "$NS_B"
I_IF=$VETH_A I_IP4=$VETH_A_IP4 I_IP6=$VETH_A_IP6

# 3
ktap_test_result "modprobe rdma_rxe" modprobe rdma_rxe
defer modprobe -r rdma_rxe

# 4-6: a device on the veth end in ns A, seen from ns A
link_add "$NS_A" rxe0 "$A_IF" "$A_IP4"
A_GID=$GID_IDX
ktap_test_result "ibv_devices in $NS_A lists rxe0" \
	sh -c "ip netns exec '$NS_A' ibv_devices | grep -qw rxe0"
ktap_test_result "ibv_devinfo -d rxe0 in $NS_A: port 1 PORT_ACTIVE" \
	sh -c "ip netns exec '$NS_A' ibv_devinfo -d rxe0 -i 1 | grep -q PORT_ACTIVE"

# 7-8: its peer in ns B, and traffic between the two
link_add "$NS_B" rxe1 "$B_IF" "$B_IP4"
B_GID=$GID_IDX
if [ -z "$A_GID" ] || [ -z "$B_GID" ]; then
	ktap_test_skip "ibv_rc_pingpong rxe0 ($NS_A) <-> rxe1 ($NS_B)" "a device is missing"
elif grep -qw rxe_ns_pernet_sk4 /proc/kallsyms || [ "${SRNIC_SMOKE_XNS:-0}" = 1 ]; then
	pingpong "ibv_rc_pingpong rxe0 ($NS_A) <-> rxe1 ($NS_B)" \
		"$NS_B" rxe1 "$B_GID" "$NS_A" rxe0 "$A_GID" "$B_IP4"
else
	ktap_test_skip "ibv_rc_pingpong rxe0 ($NS_A) <-> rxe1 ($NS_B)" \
		"this rxe has no netns support: no traffic outside init_net"
fi

# 9-11: a device in init_net, ping-pong in loopback over IPv4 and IPv6 GIDs
link_add - rxe2 "$I_IF" "$I_IP4"
I_GID4=$GID_IDX
I_GID6=$(wait_until 10 rdma_gid_index rxe2 "$I_IP6" >/dev/null && rdma_gid_index rxe2 "$I_IP6")
if [ -n "$I_GID4" ]; then
	pingpong "ibv_rc_pingpong loopback on rxe2 (init_net), IPv4 GID[$I_GID4]" \
		- rxe2 "$I_GID4" - rxe2 "$I_GID4" 127.0.0.1
else
	ktap_test_skip "ibv_rc_pingpong loopback on rxe2, IPv4 GID" "no rxe2"
fi
if [ -n "$I_GID6" ]; then
	pingpong "ibv_rc_pingpong loopback on rxe2 (init_net), IPv6 GID[$I_GID6]" \
		- rxe2 "$I_GID6" - rxe2 "$I_GID6" 127.0.0.1
else
	ktap_test_skip "ibv_rc_pingpong loopback on rxe2, IPv6 GID" "no IPv6 GID"
fi

# 12-14: teardown, and the kernel log
# shellcheck disable=SC2016 # expanded by that sh
ktap_test_result "rdma link delete rxe0 rxe1 rxe2" \
	sh -c 'for d in rxe0 rxe1 rxe2; do rdma link delete $d || exit 1; done
	       [ -z "$(rdma link show)" ]'
ktap_test_result "modprobe -r rdma_rxe" modprobe -r rdma_rxe
ktap_kernel_log_clean "no kernel warnings/oopses during the test"

ktap_finished
