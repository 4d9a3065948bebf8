#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The interop matrix: srnic and rdma_rxe, each in turn the requester, move
# every RC operation (Send, Send with Immediate, RDMA Write, Write with
# Immediate, RDMA Read, CmpSwap, FetchAdd) at every size class (0, 1,
# MTU-1, MTU, MTU+1 bytes, 64 KiB, 4 MiB; atomics 8) with the data and
# both sides' completions checked (srnic_rc_test xfer), at path MTU 1024
# and 4096, over IPv4 and IPv6 GIDs, without and with netem loss 1% on
# the link (retransmission across the two implementations).
#
# Topology as in srnic_interop.sh: rxe0 on a veth end in the initial
# namespace, srnic1 on the other end in its own. The table is printed and
# kept in $SRNIC_OUT/srnic_matrix/matrix.md.
. "$(dirname "$0")/srnic_lib.sh"

RC_TEST=$SRNIC_BIN/srnic_rc_test
PORT=18900

srnic_require
require_cmd ss timeout tc
[ -x "$RC_TEST" ] || ktap_skip_rest "no $RC_TEST (run make)"
modprobe rdma_rxe 2>/dev/null || ktap_skip_rest "no rdma_rxe module"
modprobe sch_netem 2>/dev/null
ktap_print_header
ktap_set_plan 20
dmesg_mark

LOGDIR=$SRNIC_TMP
if [ -n "$SRNIC_OUT" ] && mkdir -p "$SRNIC_OUT/srnic_matrix" 2>/dev/null; then
	LOGDIR=$SRNIC_OUT/srnic_matrix
fi
TABLE=$LOGDIR/matrix.md

srnic_load || srnic_bail "no module"
defer srnic_unload
setup_ns NS_B || srnic_bail "netns"
setup_veth_pair - "$NS_B" 9 || srnic_bail "veth"
ip link set "$VETH_A" mtu 9000
ip -n "$NS_B" link set "$VETH_B" mtu 9000
ktap_test_result "rdma link add rxe0 (initial namespace, $VETH_A)" \
	rdma link add rxe0 type rxe netdev "$VETH_A"
ktap_test_result "rdma link add srnic1 ($NS_B, $VETH_B)" \
	srnic_link_add "$NS_B" srnic1 "$VETH_B"
in_b() { ip netns exec "$NS_B" bash -c ". '$SRNIC_TOP/selftests/srnic_lib.sh'; $*"; }
GA4=$(srnic_gid_wait rxe0 "$VETH_A_IP4") || srnic_bail "no rxe0 GID"
GB4=$(in_b srnic_gid_wait srnic1 "$VETH_B_IP4") || srnic_bail "no srnic1 GID"
GA6=$(srnic_gid_wait rxe0 "$VETH_A_IP6") || srnic_bail "no rxe0 IPv6 GID"
GB6=$(in_b srnic_gid_wait srnic1 "$VETH_B_IP6") || srnic_bail "no srnic1 IPv6 GID"

netem() {	# ARGS...: on both ends ("" removes)
	tc qdisc del dev "$VETH_A" root 2>/dev/null
	tc -n "$NS_B" qdisc del dev "$VETH_B" root 2>/dev/null
	[ $# -eq 0 ] && return 0
	tc qdisc add dev "$VETH_A" root netem "$@" &&
		tc -n "$NS_B" qdisc add dev "$VETH_B" root netem "$@"
}

# cell REQUESTER MTU IP LOSS: one srnic_rc_test xfer run, one KTAP line
# and one table row.
cell() {
	local req=$1 mtu=$2 ipv=$3 loss=$4 ga gb spid rc=0 so co row op
	local desc="xfer: $req requests, MTU $mtu, IPv$ipv, loss $loss"
	so=$LOGDIR/$PORT.srv co=$LOGDIR/$PORT.cli
	if [ "$ipv" = 4 ]; then ga=$GA4 gb=$GB4; else ga=$GA6 gb=$GB6; fi
	if [ "$loss" = 0% ]; then netem; else netem loss "$loss"; fi
	if [ "$req" = srnic ]; then
		timeout 300 "$RC_TEST" --dev rxe0 --gid-index "$ga" --mtu "$mtu" \
			--port "$PORT" --timeout 12 --server xfer >"$so" 2>&1 &
		spid=$!
		wait_until 10 eval "ss -Hltn 'sport = :$PORT' | grep -q ."
		ip netns exec "$NS_B" timeout 300 "$RC_TEST" --dev srnic1 \
			--gid-index "$gb" --mtu "$mtu" --port "$PORT" --timeout 12 \
			--connect "$VETH_A_IP4" xfer >"$co" 2>&1 || rc=1
	else
		ip netns exec "$NS_B" timeout 300 "$RC_TEST" --dev srnic1 \
			--gid-index "$gb" --mtu "$mtu" --port "$PORT" --timeout 12 \
			--server xfer >"$so" 2>&1 &
		spid=$!
		wait_until 10 eval "ip netns exec '$NS_B' ss -Hltn 'sport = :$PORT' | grep -q ."
		timeout 300 "$RC_TEST" --dev rxe0 --gid-index "$ga" --mtu "$mtu" \
			--port "$PORT" --timeout 12 --connect "$VETH_B_IP4" xfer \
			>"$co" 2>&1 || rc=1
	fi
	wait "$spid" || rc=1
	netem
	PORT=$((PORT + 1))
	row="| $req | $mtu | IPv$ipv | $loss |"
	for op in Send Send+Imm Write Write+Imm Read CmpSwap FetchAdd; do
		row+=" $(awk -v o="$op" '$1 == "xfer:" && $2 == o { n++; if ($5 == "ok") k++ }
			END { printf "%d/%d", k, n }' "$co") |"
	done
	echo "$row" >>"$TABLE"
	tail -n 1 "$co" | sed 's/^/# /'
	if [ $rc -eq 0 ]; then
		ktap_test_pass "$desc"
	else
		grep -v ' ok$' "$co" | tail -n 5 | sed 's/^/# client: /'
		tail -n 3 "$so" | sed 's/^/# server: /'
		ktap_test_fail "$desc"
	fi
}

{
	echo "| requester | path MTU | GIDs | netem loss | Send | Send+Imm | Write | Write+Imm | Read | CmpSwap | FetchAdd |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >"$TABLE"
for loss in 0% 1%; do
	for ipv in 4 6; do
		for mtu in 1024 4096; do
			for req in srnic rdma_rxe; do
				cell "$req" "$mtu" "$ipv" "$loss"
			done
		done
	done
done
ktap_print_msg "sizes per operation: 0, 1, MTU-1, MTU, MTU+1, 64 KiB, 4 MiB (atomics: 8); ok/run"
sed 's/^/# /' "$TABLE"

# srnic's device first: unloading rdma_rxe would remove it too.
ktap_test_result "rdma link delete srnic1" rdma link delete srnic1
rdma link delete rxe0
rmmod rdma_rxe 2>/dev/null
splats=$(dmesg_splats)
[ -z "$splats" ] && ktap_test_pass "kernel log clean" ||
	{ ktap_print_msg "$splats"; ktap_test_fail "kernel log clean"; }
ktap_finished
