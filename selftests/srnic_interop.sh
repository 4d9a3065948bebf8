#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Interoperability with rdma_rxe on the wire: rdma_rxe in the initial
# namespace (the only one where it carries traffic), srnic in another,
# joined by a veth pair. srnic_rc_test moves data both ways, each side in
# turn the requester:
#
#   order      RDMA Writes, then Write with Immediate, every byte checked on
#              the Write-with-Imm completion, a Send back
#   integrity  RDMA Write, Read-back and Send of checksummed chunks
#   fence      Read, fenced Write of what it read, Reads and Fetch&Adds
#              with max_rd_atomic 2
#   awrite     RDMA Writes, then an RDMA Atomic Write flag (rdma_rxe has
#              it from 6.2: skipped on 6.1)
#   order over IPv6 GIDs
#
# Environment: SRNIC_INTEROP_GENS (300), SRNIC_INTEROP_BYTES (16M).
. "$(dirname "$0")/srnic_lib.sh"

GENS=${SRNIC_INTEROP_GENS:-300}
BYTES=${SRNIC_INTEROP_BYTES:-16M}
RC_TEST=$SRNIC_BIN/srnic_rc_test
PORT=18700

srnic_require
require_cmd ss timeout
[ -x "$RC_TEST" ] || ktap_skip_rest "no $RC_TEST (run make)"
modprobe rdma_rxe 2>/dev/null || ktap_skip_rest "no rdma_rxe module"
ktap_print_header
ktap_set_plan 15
dmesg_mark

srnic_load || srnic_bail "no module"
defer srnic_unload
setup_ns NS_B || srnic_bail "netns"
setup_veth_pair - "$NS_B" || srnic_bail "veth"
ktap_test_result "rdma link add rxe0 (initial namespace, $VETH_A)" \
	rdma link add rxe0 type rxe netdev "$VETH_A"
ktap_test_result "rdma link add srnic1 ($NS_B, $VETH_B)" \
	srnic_link_add "$NS_B" srnic1 "$VETH_B"
GA=$(srnic_gid_wait rxe0 "$VETH_A_IP4") || srnic_bail "no rxe0 GID"
GB=$(ip netns exec "$NS_B" bash -c ". '$SRNIC_SELFTESTS/srnic_lib.sh'; \
	srnic_gid_wait srnic1 $VETH_B_IP4") || srnic_bail "no srnic1 GID"
GA6=$(srnic_gid_wait rxe0 "$VETH_A_IP6") || GA6=
GB6=$(ip netns exec "$NS_B" bash -c ". '$SRNIC_SELFTESTS/srnic_lib.sh'; \
	srnic_gid_wait srnic1 $VETH_B_IP6") || GB6=

# xfer DESC SRV_NS SRV_DEV SRV_GID CLI_NS CLI_DEV CLI_GID ADDR ARGS...
xfer() {
	local desc=$1 sns=$2 sdev=$3 sg=$4 cns=$5 cdev=$6 cg=$7 addr=$8
	local so=$SRNIC_TMP/$PORT.srv co=$SRNIC_TMP/$PORT.cli crc=0 src=0 spid
	local sx=() cx=()
	shift 8
	[ "$sns" = - ] || sx=(ip netns exec "$sns")
	[ "$cns" = - ] || cx=(ip netns exec "$cns")
	"${sx[@]}" timeout 300 "$RC_TEST" --dev "$sdev" --gid-index "$sg" \
		--port "$PORT" --server "$@" >"$so" 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		"${sx[@]}" ss -Hltn "sport = :$PORT" | grep -q . && break
		sleep 0.1
	done
	"${cx[@]}" timeout 300 "$RC_TEST" --dev "$cdev" --gid-index "$cg" \
		--port "$PORT" --connect "$addr" "$@" >"$co" 2>&1 || crc=$?
	wait "$spid" || src=$?
	PORT=$((PORT + 1))
	tail -n 1 "$co" | sed 's/^/# /'
	if [ $crc -eq 0 ] && [ $src -eq 0 ]; then
		ktap_test_pass "$desc"
	else
		ktap_print_msg "client exit $crc, server exit $src"
		sed 's/^/# client: /' "$co" | tail -n 5
		sed 's/^/# server: /' "$so" | tail -n 5
		ktap_test_fail "$desc"
	fi
}

xfer "order: rdma_rxe writes to srnic (--gens $GENS)" \
	"$NS_B" srnic1 "$GB" - rxe0 "$GA" "$VETH_B_IP4" --gens "$GENS" order
xfer "order: srnic writes to rdma_rxe (--gens $GENS)" \
	- rxe0 "$GA" "$NS_B" srnic1 "$GB" "$VETH_A_IP4" --gens "$GENS" order
xfer "integrity: rdma_rxe Write/Read/Send with srnic (--bytes $BYTES)" \
	"$NS_B" srnic1 "$GB" - rxe0 "$GA" "$VETH_B_IP4" --bytes "$BYTES" \
	integrity
xfer "integrity: srnic Write/Read/Send with rdma_rxe (--bytes $BYTES)" \
	- rxe0 "$GA" "$NS_B" srnic1 "$GB" "$VETH_A_IP4" --bytes "$BYTES" \
	integrity

xfer "fence: rdma_rxe Reads, fenced Writes, atomics with srnic (--gens $GENS)" \
	"$NS_B" srnic1 "$GB" - rxe0 "$GA" "$VETH_B_IP4" --gens "$GENS" fence
xfer "fence: srnic Reads, fenced Writes, atomics with rdma_rxe (--gens $GENS)" \
	- rxe0 "$GA" "$NS_B" srnic1 "$GB" "$VETH_A_IP4" --gens "$GENS" fence

# rdma_rxe learnt RDMA Atomic Write in 6.2.
kv=$(uname -r)
kv=${kv%%-*}
if [ "$(printf '%s\n' 6.2 "${kv%.*}" | sort -V | head -n1)" = 6.2 ]; then
	xfer "awrite: rdma_rxe Atomic Write flag to srnic (--gens $GENS)" \
		"$NS_B" srnic1 "$GB" - rxe0 "$GA" "$VETH_B_IP4" --gens "$GENS" \
		awrite
	xfer "awrite: srnic Atomic Write flag to rdma_rxe (--gens $GENS)" \
		- rxe0 "$GA" "$NS_B" srnic1 "$GB" "$VETH_A_IP4" --gens "$GENS" \
		awrite
else
	ktap_test_skip "awrite: rdma_rxe Atomic Write flag to srnic" \
		"rdma_rxe on $(uname -r) has no RDMA Atomic Write (6.2+)"
	ktap_test_skip "awrite: srnic Atomic Write flag to rdma_rxe" \
		"rdma_rxe on $(uname -r) has no RDMA Atomic Write (6.2+)"
fi

if [ -n "$GA6" ] && [ -n "$GB6" ]; then
	xfer "order over IPv6: rdma_rxe writes to srnic (--gens $GENS)" \
		"$NS_B" srnic1 "$GB6" - rxe0 "$GA6" "$VETH_B_IP4" \
		--gens "$GENS" order
	xfer "order over IPv6: srnic writes to rdma_rxe (--gens $GENS)" \
		- rxe0 "$GA6" "$NS_B" srnic1 "$GB6" "$VETH_A_IP4" \
		--gens "$GENS" order
else
	ktap_test_fail "order over IPv6: no IPv6 RoCEv2 GIDs (rxe0 '$GA6', srnic1 '$GB6')"
	ktap_test_fail "order over IPv6: srnic writes to rdma_rxe"
fi

# srnic's device first: unloading rdma_rxe would remove it too.
ktap_test_result "rdma link delete srnic1" rdma link delete srnic1
rdma link delete rxe0
rmmod rdma_rxe 2>/dev/null
ktap_test_result "rmmod srnic" srnic_unload
ktap_kernel_log_clean
ktap_finished
