#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The wire is hostile: a peer sends mutated RoCEv2 packets at live QPs
# while another peer's verified traffic runs through the same device.
#
# Topology (one guest): host A (srnic0) and the attacker C (srnic2) each
# have a veth to host B, which has srnic1 (facing A) and srnic3 (facing
# C). C runs its own RDMA traffic with B (perftest Send/Write/Read/
# atomics, RC and UD, both sides the requester, rping through rdma_cm)
# so that its QPs on srnic3 are live; selftests/srnic_fuzz.py in C's
# namespace learns real QPNs, PSNs, rkeys and addresses from that
# traffic and sends mutations of it (SRNIC_FUZZ_PKTS, default 100000;
# about 60 % with a correct ICRC). Meanwhile A and B run rping -V
# (every byte checked).
#
#  - destination: a packet for srnic1's address that comes in through
#    srnic3's netdev is srnic1's (counted there, not on srnic3); one for
#    an address of B that no srnic device has is dropped and counted in
#    rcvd_dgid_err
#  - QP1: 1000 datagrams longer than a MAD are dropped and counted, and
#    rdma_cm still serves (each completing a receive in error would cost
#    the MAD layer a buffer for good)
#  - the fuzz: every packet sent; A <-> B's verified traffic intact; the
#    packets with a bad ICRC all counted as dropped (icrc_err, malformed
#    or rcvd_dgid_err) by srnic3; srnic3 still serves a new rdma_cm
#    connection afterwards (QP1 alive); no splat; the module unloads
#
# Environment: SRNIC_FUZZ_PKTS, SRNIC_FUZZ_SEED (default: random, printed),
# SRNIC_FUZZ_PPS (packets a second, 4000).
. "$(dirname "$0")/srnic_lib.sh"

PKTS=${SRNIC_FUZZ_PKTS:-100000}
SEED=${SRNIC_FUZZ_SEED:-$RANDOM$RANDOM}
PPS=${SRNIC_FUZZ_PPS:-4000}
FUZZ=$(dirname "$0")/srnic_fuzz.py

srnic_require
require_cmd python3 rping ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw \
	timeout
ktap_print_header
ktap_set_plan 11
dmesg_mark

srnic_load || srnic_bail "no module"
defer srnic_unload
setup_ns NS_A NS_B NS_C || srnic_bail "namespaces"
setup_veth_pair "$NS_A" "$NS_B" || srnic_bail "veth"
A_IF=$VETH_A B_IF=$VETH_B A_IP=$VETH_A_IP4 B_IP=$VETH_B_IP4
setup_veth_pair "$NS_C" "$NS_B" || srnic_bail "veth"
C_IF=$VETH_A B3_IF=$VETH_B C_IP=$VETH_A_IP4 B3_IP=$VETH_B_IP4
# An address of B that no srnic device has; C reaches both it and
# srnic1's address through B's end of the C link.
NOBODY=10.98.$((RANDOM % 200 + 1)).9
ip -n "$NS_B" addr add "$NOBODY/32" dev lo
ip -n "$NS_C" route add "$NOBODY/32" via "$B3_IP"
ip -n "$NS_C" route add "$B_IP/32" via "$B3_IP"
sysctl -qw net.core.netdev_max_backlog=20000

add_links() {
	srnic_link_add "$NS_A" srnic0 "$A_IF" &&
		srnic_link_add "$NS_B" srnic1 "$B_IF" &&
		srnic_link_add "$NS_C" srnic2 "$C_IF" &&
		srnic_link_add "$NS_B" srnic3 "$B3_IF"
}
ktap_test_result "rdma link add srnic0 (A), srnic1 + srnic3 (B), srnic2 (C)" \
	add_links || srnic_bail "no srnic devices"
defer rdma link delete srnic0
defer rdma link delete srnic1
defer rdma link delete srnic2
defer rdma link delete srnic3
GA=$(srnic_gid_wait srnic0 "$A_IP") && GB=$(srnic_gid_wait srnic1 "$B_IP") &&
	GC=$(srnic_gid_wait srnic2 "$C_IP") &&
	GB3=$(srnic_gid_wait srnic3 "$B3_IP") || srnic_bail "no GIDs"

# cnt NS DEV NAME: one counter of an RDMA device.
cnt() {
	ip netns exec "$1" rdma statistic show link "$2/1" |
		tr ' ' '\n' | awk -v n="$3" 'f { print; exit } $0 == n { f = 1 }'
}

# Both probes go out of C's end, to B's end of the C link.
B3_MAC=$(ip -n "$NS_B" -br link show "$B3_IF" | awk '{ print $3 }')
probe() {	# DST COUNT [SIZE]
	ip netns exec "$NS_C" python3 "$FUZZ" probe "$C_IF" "$B3_MAC" \
		"$C_IP" "$@" >/dev/null
}

aftercm() {	# PORT: srnic3 serves a new rdma_cm connection
	local rc=0
	# Minutes, not seconds, under TCG with other guests beside.
	ip netns exec "$NS_B" timeout 120 rping -s -V -a "$B3_IP" -p "$1" -C 50 >/dev/null 2>&1 &
	wait_until 30 server_listening "$NS_B" "$1"
	ip netns exec "$NS_C" timeout 120 rping -c -V -a "$B3_IP" -p "$1" -C 50 || rc=$?
	wait $! || rc=$?
	return $rc
}

r1=$(cnt "$NS_B" srnic1 rcvd_pkts) r3=$(cnt "$NS_B" srnic3 rcvd_pkts)
probe "$B_IP" 100
sleep 1
d1=$(($(cnt "$NS_B" srnic1 rcvd_pkts) - r1))
d3=$(($(cnt "$NS_B" srnic3 rcvd_pkts) - r3))
ktap_print_msg "100 datagrams for $B_IP (srnic1) in through $B3_IF (srnic3): srnic1 +$d1, srnic3 +$d3"
if [ "$d1" -ge 100 ] && [ "$d3" -eq 0 ]; then
	ktap_test_pass "destination: a packet for srnic1's address through srnic3's netdev is srnic1's"
else
	ktap_test_fail "destination: a packet for srnic1's address through srnic3's netdev is srnic1's"
fi

e3=$(cnt "$NS_B" srnic3 rcvd_dgid_err) r1=$(cnt "$NS_B" srnic1 rcvd_pkts)
probe "$NOBODY" 100
sleep 1
de=$(($(cnt "$NS_B" srnic3 rcvd_dgid_err) - e3))
d1=$(($(cnt "$NS_B" srnic1 rcvd_pkts) - r1))
ktap_print_msg "100 datagrams for $NOBODY (no srnic device): srnic3 rcvd_dgid_err +$de, srnic1 rcvd_pkts +$d1"
if [ "$de" -eq 100 ] && [ "$d1" -eq 0 ]; then
	ktap_test_pass "destination: a packet for an address no srnic device has is dropped, counted in rcvd_dgid_err"
else
	ktap_test_fail "destination: a packet for an address no srnic device has is dropped, counted in rcvd_dgid_err"
fi

# QP1 and datagrams longer than a MAD: one completing a receive in error
# costs the MAD layer that buffer for good (it does not post it again),
# so 1000 of them, more than QP1's 512 receives, would silence rdma_cm.
m3=$(cnt "$NS_B" srnic3 rcvd_malformed)
probe "$B3_IP" 1000 260
sleep 1
dm=$(($(cnt "$NS_B" srnic3 rcvd_malformed) - m3))
ktap_print_msg "1000 datagrams of 260 bytes for srnic3's QP1: rcvd_malformed +$dm"
if [ "$dm" -gt 512 ] && aftercm 19398; then
	ktap_test_pass "QP1: datagrams longer than a MAD dropped and counted, rdma_cm still served"
else
	ktap_test_fail "QP1: datagrams longer than a MAD dropped and counted, rdma_cm still served"
fi

# C's own traffic with B, round after round until told to stop: its QPs
# on srnic3 are the fuzzer's targets. Failures are expected (the fuzzer
# breaks them) and ignored.
STOP=$SRNIC_TMP/stop
generator() {
	local port=19500 i=0 cmd srv cli
	local cmds=("ib_send_bw -n 200" "ib_write_bw -n 200" "ib_read_bw -n 100"
		    "ib_atomic_bw -n 100" "ib_send_bw -c UD -n 200"
		    "ib_write_bw -c UC -n 200" "ib_send_bw -n 100 -s 8192")
	while [ ! -e "$STOP" ]; do
		cmd=${cmds[$((i % ${#cmds[@]}))]}
		if [ $((i / ${#cmds[@]} % 2)) -eq 0 ]; then
			srv=("$NS_B" srnic3 "$GB3") cli=("$NS_C" srnic2 "$GC" "$B3_IP")
		else
			srv=("$NS_C" srnic2 "$GC") cli=("$NS_B" srnic3 "$GB3" "$C_IP")
		fi
		# shellcheck disable=SC2086
		ip netns exec "${srv[0]}" timeout 20 $cmd -d "${srv[1]}" \
			-x "${srv[2]}" -p $port >/dev/null 2>&1 &
		sleep 0.5
		# shellcheck disable=SC2086
		ip netns exec "${cli[0]}" timeout 20 $cmd -d "${cli[1]}" \
			-x "${cli[2]}" -p $port "${cli[3]}" >/dev/null 2>&1
		wait
		ip netns exec "$NS_B" timeout 10 rping -s -a "$B3_IP" -p $((port + 1)) -C 20 \
			>/dev/null 2>&1 &
		sleep 0.3
		ip netns exec "$NS_C" timeout 10 rping -c -a "$B3_IP" -p $((port + 1)) -C 20 \
			>/dev/null 2>&1
		wait
		port=$((port + 2)) i=$((i + 1))
	done
}

names="rcvd_pkts rx_dropped rcvd_icrc_err rcvd_malformed rcvd_no_qp rcvd_dgid_err duplicate_request out_of_seq_request naks_sent"
declare -A before
for n in $names; do
	before[$n]=$(cnt "$NS_B" srnic3 "$n")
	[ -n "${before[$n]}" ] || srnic_bail "srnic3 has no counter $n"
done

# A <-> B: rounds of rping -V (every byte of every ping checked) until
# told to stop, at least one.
verified() {
	local r=0 f=0 port=19300 spid
	while [ ! -e "$STOP" ] || [ $r -eq 0 ]; do
		ip netns exec "$NS_B" timeout 60 rping -s -V -a "$B_IP" -p $port \
			-C 200 >"$SRNIC_TMP/vs" 2>&1 &
		spid=$!
		wait_until 20 server_listening "$NS_B" $port
		if ! ip netns exec "$NS_A" timeout 60 rping -c -V -a "$B_IP" \
		     -p $port -C 200 >"$SRNIC_TMP/vc" 2>&1 || ! wait $spid; then
			f=$((f + 1))
			cp "$SRNIC_TMP/vc" "$SRNIC_TMP/vc.failed"
			cp "$SRNIC_TMP/vs" "$SRNIC_TMP/vs.failed"
		fi
		r=$((r + 1)) port=$((port + 1))
	done
	echo "$r $f" >"$SRNIC_TMP/verified"
}

generator &
gpid=$!
verified &
vpid=$!

ktap_print_msg "fuzz: $PKTS packets, seed $SEED, at most $PPS a second"
frc=0
ip netns exec "$NS_C" python3 "$FUZZ" fuzz "$C_IF" "$PKTS" "$SEED" "$PPS" \
	>"$SRNIC_TMP/fuzz" 2>&1 || frc=$?
sed 's/^\([^#]\)/# \1/' "$SRNIC_TMP/fuzz"
read -r _ sent _ good _ badicrc _ short < <(grep '^sent ' "$SRNIC_TMP/fuzz")
if [ $frc -eq 0 ] && [ "${sent:-0}" -eq "$PKTS" ]; then
	ktap_test_pass "fuzz: $sent mutated packets at srnic3's live QPs (${good:-0} with a correct ICRC)"
else
	ktap_test_fail "fuzz: $PKTS mutated packets at srnic3's live QPs (sent ${sent:-0}, exit $frc)"
fi

touch "$STOP"
wait "$vpid" "$gpid"
read -r rounds vfail <"$SRNIC_TMP/verified"
if [ "${vfail:-1}" -eq 0 ]; then
	ktap_test_pass "verified traffic A <-> B intact during the fuzz ($rounds rounds of rping -V -C 200)"
else
	show_file "$SRNIC_TMP/vc.failed" 10
	show_file "$SRNIC_TMP/vs.failed" 10
	ktap_test_fail "verified traffic A <-> B intact during the fuzz ($vfail of $rounds rping -V rounds failed)"
fi

declare -A delta
line=
for n in $names; do
	delta[$n]=$(($(cnt "$NS_B" srnic3 "$n") - before[$n]))
	line+=" $n +${delta[$n]}"
done
ktap_print_msg "srnic3:$line"
dropped=$((delta[rcvd_icrc_err] + delta[rcvd_malformed] + delta[rcvd_dgid_err]))
if [ "$dropped" -ge "${badicrc:-1}" ] && [ "${delta[rx_dropped]}" -ge "$dropped" ]; then
	ktap_test_pass "every packet with a bad ICRC dropped and counted ($dropped >= ${badicrc:-?})"
else
	ktap_test_fail "every packet with a bad ICRC dropped and counted ($dropped < ${badicrc:-?}, or rx_dropped +${delta[rx_dropped]})"
fi

ktap_test_result "after the fuzz srnic3 serves a new rdma_cm connection (rping -V -C 50)" \
	aftercm 19399

ktap_kernel_log_clean
for d in srnic0 srnic1 srnic2 srnic3; do rdma link delete "$d" 2>/dev/null; done
ktap_test_result "the devices are deleted and srnic unloads" srnic_unload
ktap_test_result "no srnic device left" bash -c '! ls /sys/class/infiniband | grep -q srnic'
ktap_finished
