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
# Immediate with payload), fence (Reads, atomics), xfer (every operation
# at every size class up to 4 MiB), awrite (6.2+:
# rdma_rxe on 6.1 has no Atomic Write), order over IPv6, each side in
# turn the requester.
#
# The checker's own sensitivity is a step too: a corrupted payload byte
# and a relabelled opcode must be flagged. The capture stays in
# $SRNIC_OUT/srnic_wire/.
. "$(dirname "$0")/srnic_lib.sh"
. "$(dirname "$0")/srnic_pair_lib.sh"

srnic_require
require_cmd ss timeout tshark dumpcap python3
[ -x "$SRNIC_BIN/srnic_rc_test" ] || ktap_skip_rest "no srnic_rc_test (run make)"
modprobe rdma_rxe 2>/dev/null || ktap_skip_rest "no rdma_rxe module"
ktap_print_header
ktap_set_plan 11
dmesg_mark

LOGDIR=$SRNIC_TMP
if [ -n "$SRNIC_OUT" ] && mkdir -p "$SRNIC_OUT/srnic_wire" 2>/dev/null; then
	LOGDIR=$SRNIC_OUT/srnic_wire
fi
CAP=$LOGDIR/roce.pcap
pair_setup

# Capture everything to UDP port 4791 on the initial namespace's end.
rm -f "$CAP"
dumpcap -q -i "$VETH_A" -P -f "udp dst port 4791" -w "$CAP" \
	>"$LOGDIR/dumpcap.log" 2>&1 &
CAP_PID=$!
wait_until 5 test -s "$CAP"
ktap_test_result "dumpcap on $VETH_A" kill -0 "$CAP_PID"

traffic() {
	local req ok=0 n=0
	for req in srnic rdma_rxe; do
		# xfer up to 64 KiB: a message of 64 packets has every
		# header a 4 MiB one has (with its 4 MiB cells the checker
		# dissected 62,000 packets, without them 20,000).
		for args in "--gens 50 --imm-len 3000 order" \
			    "--gens 50 fence" "--xfer-max 65536 xfer"; do
			n=$((n + 1))
			# shellcheck disable=SC2086
			pair_rc "$req" "$GA4" "$GB4" "$LOGDIR/$n" $args || {
				ktap_print_msg "$req requests, $args: failed"
				tail -n 3 "$LOGDIR/$n.cli" | sed 's/^/# /'
				ok=1
			}
		done
		n=$((n + 1))
		pair_rc "$req" "$GA6" "$GB6" "$LOGDIR/$n" --gens 20 order || ok=1
	done
	return $ok
}
ktap_test_result "traffic both ways: order, fence, xfer, order over IPv6" \
	traffic

if pair_has_atomic_write; then
	ktap_test_result "traffic both ways: awrite" \
		eval 'pair_rc srnic "$GA4" "$GB4" "$LOGDIR/aw1" --gens 20 awrite &&
		      pair_rc rdma_rxe "$GA4" "$GB4" "$LOGDIR/aw2" --gens 20 awrite'
else
	ktap_test_skip "traffic both ways: awrite" \
		"rdma_rxe on $(uname -r) has no RDMA Atomic Write (6.2+)"
fi

sleep 0.5
kill -INT "$CAP_PID" 2>/dev/null
wait "$CAP_PID" 2>/dev/null
ktap_print_msg "capture: $(stat -c %s "$CAP" 2>/dev/null || echo 0) bytes in $CAP"

out=$LOGDIR/check.txt
python3 "$SRNIC_SELFTESTS/srnic_wire.py" "$CAP" \
	"$VETH_B_IP4,$VETH_B_IP6" >"$out" 2>&1
rc=$?
sed 's/^[^#]/# &/' "$out" | head -n 80
[ $rc -le 1 ] || ktap_print_msg "srnic_wire.py exited $rc"
ktap_test_result "every srnic packet dissects with its headers, no expert warning, ICRC valid" \
	grep -Eq '^srnic: [1-9][0-9]* RoCEv2 packets, 0 bad' "$out"
ktap_test_result "every rdma_rxe packet passes the same checks (the checker agrees with rxe)" \
	grep -Eq '^rdma_rxe: [1-9][0-9]* RoCEv2 packets, 0 bad' "$out"
# The checker's own sensitivity: of three of srnic's packets, it must pass
# the intact one and flag the one with a flipped payload byte (ICRC) and
# the ACK relabelled as an Atomic ACK with a valid ICRC (dissector).
python3 "$SRNIC_SELFTESTS/srnic_wire.py" --self-check "$CAP" \
	"$VETH_B_IP4,$VETH_B_IP6" "$LOGDIR/mutated.pcap" >"$out.self" 2>&1
sed 's/^[^#]/# &/' "$out.self"
ktap_test_result "the checker flags a flipped payload byte and a missing extended header" \
	grep -q '^self-check: ok' "$out.self"

pair_teardown
ktap_finished
