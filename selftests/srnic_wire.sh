#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Wire truth: capture srnic <-> rdma_rxe traffic on the veth and have two
# referees srnic did not write look at every RoCEv2 packet
# (selftests/srnic_wire.py): tshark's InfiniBand dissector (the opcode's
# extended headers present, no malformed packet, no expert warning) and
# an ICRC recomputed with zlib's CRC-32 from the RoCEv2 annex.
#
# Topology as in srnic_interop.sh: rdma_rxe (rxe0) on a veth end in the
# initial namespace, srnic (srnic1) on the other end in its own; the
# traffic: srnic_rc_test order (multi-packet Writes and a Write with
# Immediate with payload), integrity (Write, Read, Send), fence (Reads,
# atomics), awrite (6.2+: rdma_rxe on 6.1 has no Atomic Write), order
# over IPv6, each side in turn the requester.
#
# The capture stays in $SRNIC_OUT/srnic_wire/.
. "$(dirname "$0")/srnic_lib.sh"

RC_TEST=$SRNIC_BIN/srnic_rc_test
PORT=18800

srnic_require
require_cmd ss timeout tshark dumpcap python3
[ -x "$RC_TEST" ] || ktap_skip_rest "no $RC_TEST (run make)"
modprobe rdma_rxe 2>/dev/null || ktap_skip_rest "no rdma_rxe module"
ktap_print_header
ktap_set_plan 8
dmesg_mark

LOGDIR=$SRNIC_TMP
if [ -n "$SRNIC_OUT" ] && mkdir -p "$SRNIC_OUT/srnic_wire" 2>/dev/null; then
	LOGDIR=$SRNIC_OUT/srnic_wire
fi
CAP=$LOGDIR/roce.pcap

srnic_load || srnic_bail "no module"
defer srnic_unload
setup_ns NS_B || srnic_bail "netns"
setup_veth_pair - "$NS_B" 8 || srnic_bail "veth"
rdma link add rxe0 type rxe netdev "$VETH_A" || srnic_bail "no rxe0"
srnic_link_add "$NS_B" srnic1 "$VETH_B" || srnic_bail "no srnic1"
in_b() { ip netns exec "$NS_B" bash -c ". '$SRNIC_TOP/selftests/srnic_lib.sh'; $*"; }
GA=$(srnic_gid_wait rxe0 "$VETH_A_IP4") || srnic_bail "no rxe0 GID"
GB=$(in_b srnic_gid_wait srnic1 "$VETH_B_IP4") || srnic_bail "no srnic1 GID"
GA6=$(srnic_gid_wait rxe0 "$VETH_A_IP6") || GA6=$GA
GB6=$(in_b srnic_gid_wait srnic1 "$VETH_B_IP6") || GB6=$GB

# Capture everything to UDP port 4791 on the initial namespace's end.
rm -f "$CAP"
dumpcap -q -i "$VETH_A" -P -f "udp dst port 4791" -w "$CAP" \
	>"$LOGDIR/dumpcap.log" 2>&1 &
CAP_PID=$!
for _ in $(seq 50); do
	[ -s "$CAP" ] && break
	sleep 0.1
done
ktap_test_result "dumpcap on $VETH_A" kill -0 "$CAP_PID"

# xfer SRNIC_REQUESTS(0|1) GID_RXE GID_SRNIC ARGS...: srnic_rc_test with
# the server on the other side. Returns its status.
xfer() {
	local srnic_req=$1 ga=$2 gb=$3 spid rc=0
	shift 3
	if [ "$srnic_req" = 1 ]; then
		timeout 120 "$RC_TEST" --dev rxe0 --gid-index "$ga" --port "$PORT" \
			--server "$@" >"$LOGDIR/$PORT.srv" 2>&1 &
		spid=$!
		wait_until 10 eval "ss -Hltn 'sport = :$PORT' | grep -q ."
		ip netns exec "$NS_B" timeout 120 "$RC_TEST" --dev srnic1 \
			--gid-index "$gb" --port "$PORT" --connect "$VETH_A_IP4" \
			"$@" >"$LOGDIR/$PORT.cli" 2>&1 || rc=1
	else
		ip netns exec "$NS_B" timeout 120 "$RC_TEST" --dev srnic1 \
			--gid-index "$gb" --port "$PORT" --server "$@" \
			>"$LOGDIR/$PORT.srv" 2>&1 &
		spid=$!
		wait_until 10 eval "ip netns exec '$NS_B' ss -Hltn 'sport = :$PORT' | grep -q ."
		timeout 120 "$RC_TEST" --dev rxe0 --gid-index "$ga" --port "$PORT" \
			--connect "$VETH_B_IP4" "$@" >"$LOGDIR/$PORT.cli" 2>&1 || rc=1
	fi
	wait "$spid" || rc=1
	[ $rc -eq 0 ] || sed 's/^/# /' "$LOGDIR/$PORT.cli" | tail -n 3
	PORT=$((PORT + 1))
	return $rc
}

traffic() {
	local both=(0 1) d ok=0
	for d in "${both[@]}"; do
		xfer "$d" "$GA" "$GB" --gens 50 --imm-len 3000 order || ok=1
		xfer "$d" "$GA" "$GB" --bytes 4M integrity || ok=1
		xfer "$d" "$GA" "$GB" --gens 50 fence || ok=1
		xfer "$d" "$GA6" "$GB6" --gens 20 order || ok=1
	done
	return $ok
}
ktap_test_result "traffic both ways: order, integrity, fence, order over IPv6" \
	traffic

kv=$(uname -r)
kv=${kv%%-*}
if [ "$(printf '%s\n' 6.2 "${kv%.*}" | sort -V | head -n1)" = 6.2 ]; then
	ktap_test_result "traffic both ways: awrite" \
		eval 'xfer 0 "$GA" "$GB" --gens 20 awrite && xfer 1 "$GA" "$GB" --gens 20 awrite'
else
	ktap_test_skip "traffic both ways: awrite" \
		"rdma_rxe on $(uname -r) has no RDMA Atomic Write (6.2+)"
fi

sleep 0.5
kill -INT "$CAP_PID" 2>/dev/null
wait "$CAP_PID" 2>/dev/null
ktap_print_msg "capture: $(stat -c %s "$CAP" 2>/dev/null || echo 0) bytes in $CAP"

out=$LOGDIR/check.txt
python3 "$SRNIC_TOP/selftests/srnic_wire.py" "$CAP" \
	"$VETH_B_IP4,$VETH_B_IP6" >"$out" 2>&1
rc=$?
sed -n 's/^# /# /p' "$out" | head -n 60
grep -v '^#' "$out" | sed 's/^/# /'
grep -q '^srnic: [1-9][0-9]* RoCEv2 packets, 0 bad' "$out"
ktap_test_result "every srnic packet dissects with its headers, no expert warning, ICRC valid" \
	test $? -eq 0
grep -q '^rdma_rxe: [1-9][0-9]* RoCEv2 packets, 0 bad' "$out"
ktap_test_result "every rdma_rxe packet passes the same checks (the checker agrees with rxe)" \
	test $? -eq 0
[ $rc -eq 0 ] || ktap_print_msg "srnic_wire.py exited $rc"

ktap_test_result "rdma link delete srnic1" rdma link delete srnic1
rdma link delete rxe0
rmmod rdma_rxe 2>/dev/null
ktap_test_result "rmmod srnic" srnic_unload
splats=$(dmesg_splats)
[ -z "$splats" ] && ktap_test_pass "kernel log clean" ||
	{ ktap_print_msg "$splats"; ktap_test_fail "kernel log clean"; }
ktap_finished
