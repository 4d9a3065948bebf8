#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srnic_clients: what users run, written by nobody here (issue 19).
#
#  - qperf with -cm1 (rdma_cm): every RC test (bandwidth, bidirectional
#    bandwidth, latency, RDMA Read and Write bandwidth and latency, Write
#    polling latency, compare-and-swap and fetch-and-add): srnic0 (NS_A)
#    -> srnic1 (NS_B); then rdma_rxe (rxe0, initial namespace) -> srnic2
#    (NS_B) and srnic2 -> rxe0 for SRNIC_QPERF_RXE_TESTS (every test in
#    make check-full). qperf's UC and UD tests cannot run on RoCE: qperf
#    sets those QPs up without rdma_cm and without a GRH (modify to RTR
#    and create_ah fail with EINVAL on rdma_rxe alike): skipped, saying so
#  - libfabric's verbs provider (fi_pingpong -c: every byte checked):
#    -p verbs -e msg, -p "verbs;ofi_rxm" -e rdm, srnic <-> srnic and
#    rdma_rxe -> srnic. rxm's endpoint opens a CQ of 262144 entries
#    (its MSG sizes, 128 + 128, times FI_UNIVERSE_SIZE, 1024) without
#    looking at max_cqe: fi_enable() fails with EINVAL on a device that
#    offers fewer (rdma_rxe: 32767; srnic: 524287). The provider only
#    looks at interfaces whose name
#    starts with FI_VERBS_IFACE ("ib" by default): it is set to the veth
#    interface, as it must be for any Ethernet netdev (rdma_rxe too).
#  - UCX's ucx_perftest over rc_verbs (with ud_verbs for UCX's wire-up)
#    and over ud_verbs alone: tag matching latency and bandwidth, put,
#    get, atomic add, fetch-and-add, swap and compare-and-swap (UCP
#    emulates atomics over UD), srnic <-> srnic and rdma_rxe -> srnic.
#    UCX before 1.19 reads a RoCE datagram's L3 type from ibv_wc.sl as
#    mlx5 reports it (2: IPv4); srnic reports it so. rdma_rxe does not,
#    and UCX drops every IPv4 datagram rdma_rxe delivers: the rdma_rxe
#    rows run with UCX_UD_VERBS_ETH_DGID_CHECK=n.
#
# A test passes when the client exits 0 within its time and reports a
# non-zero figure (qperf) or its last transfer (fi_pingpong). Figures are
# printed; nothing is judged on their size. SRNIC_CLIENTS_REF=1 (make
# check-full) also runs each qperf test on srnic alone (srnic0 to itself)
# and on rdma_rxe alone (rxe0 to itself), the same topology for both,
# and prints them beside the others; qperf's UC and UD tests are tried
# on rdma_rxe alone there too.
#
# Environment: SRNIC_CLIENTS_SECS (qperf -t, 2), SRNIC_QPERF_TESTS,
# SRNIC_QPERF_RXE_TESTS, SRNIC_UCX_TESTS, SRNIC_CLIENTS_REF,
# SRNIC_FI_ITERS (fi_pingpong -I, 50).
. "$(dirname "$0")/srnic_lib.sh"

# qperf -t 1 measures nothing under TCG (0 bytes/sec, rdma_rxe too).
SECS=${SRNIC_CLIENTS_SECS:-2}
[ "$SECS" -ge 2 ] || SECS=2
QTESTS=${SRNIC_QPERF_TESTS:-"rc_bw rc_bi_bw rc_lat rc_rdma_read_bw rc_rdma_read_lat rc_rdma_write_bw rc_rdma_write_lat rc_rdma_write_poll_lat rc_compare_swap_mr rc_fetch_add_mr"}
UTESTS="uc_bw uc_lat uc_rdma_write_bw uc_rdma_write_lat uc_rdma_write_poll_lat ud_bw ud_lat"
RTESTS=${SRNIC_QPERF_RXE_TESTS:-$QTESTS}
REF=${SRNIC_CLIENTS_REF:-0}
FI_ITERS=${SRNIC_FI_ITERS:-50}

UTLS=${SRNIC_UCX_TESTS:-"tag_lat tag_bw ucp_put_lat ucp_put_bw ucp_get ucp_add ucp_fadd ucp_swap ucp_cswap"}

srnic_require
require_cmd qperf fi_pingpong ucx_perftest timeout
nq=$(wc -w <<<"$QTESTS") nr=$(wc -w <<<"$RTESTS")
ktap_print_header
# Devices (2), qperf srnic <-> srnic, rdma_rxe both ways, fi_pingpong
# (2 kinds x 2 pairs, and rxm at 4 KiB with rdma_rxe), kernel log, unload.
nu=$(wc -w <<<"$UTLS")
ktap_set_plan $((2 + nq + $(wc -w <<<"$UTESTS") + 2 * nr + 5 + 3 * nu + 2))
dmesg_mark

srnic_load || srnic_bail "no module"
defer srnic_unload
srnic_two_hosts || srnic_bail "veth"
A4=$VETH_A_IP4 B4=$VETH_B_IP4 VA=$VETH_A VB=$VETH_B
add_srnic01() {
	srnic_link_add "$NS_A" srnic0 "$VA" &&
		srnic_link_add "$NS_B" srnic1 "$VB"
}
ktap_test_result "rdma link add srnic0 ($NS_A), srnic1 ($NS_B)" add_srnic01 ||
	srnic_bail "no srnic devices"
srnic_gid_wait srnic0 "$A4" >/dev/null || srnic_bail "no srnic0 GID"
srnic_gid_wait srnic1 "$B4" >/dev/null || srnic_bail "no srnic1 GID"

have_rxe=0
if modprobe rdma_rxe 2>/dev/null && setup_veth_pair - "$NS_B"; then
	R4=$VETH_A_IP4 S4=$VETH_B_IP4 VR=$VETH_A VS=$VETH_B
	add_rxe_srnic2() {
		rdma link add rxe0 type rxe netdev "$VR" &&
			srnic_link_add "$NS_B" srnic2 "$VS"
	}
	ktap_test_result "rdma link add rxe0 (initial namespace), srnic2 ($NS_B)" \
		add_rxe_srnic2 && have_rxe=1
	srnic_gid_wait rxe0 "$R4" >/dev/null || have_rxe=0
	srnic_gid_wait srnic2 "$S4" >/dev/null || have_rxe=0
else
	ktap_test_skip "rdma link add rxe0, srnic2" "no rdma_rxe module"
fi

# in NS CMD...: CMD in namespace NS ("-": the initial one).
in_ns() {
	local ns=$1
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}

QPORT=19765
# qperf_server NS: a qperf server in NS, on a new port ($QPORT).
qperf_server() {
	QPORT=$((QPORT + 1))
	in_ns "$1" qperf -lp "$QPORT" >"$SRNIC_TMP/qperf-srv.$QPORT" 2>&1 &
	QPID=$!
	wait_until 10 server_listening "$1" "$QPORT" ||
		ktap_print_msg "qperf listens on nothing after 10 s"
}

qperf_server_stop() {
	kill "$QPID" 2>/dev/null
	wait "$QPID" 2>/dev/null
}

# qperf_one NS ADDR TEST: one qperf client run; its first figure
# ("44.5 MB/sec") in $QFIG. Returns its status (124: timed out).
qperf_one() {
	local out=$SRNIC_TMP/qperf-cli rc=0
	QFIG=
	in_ns "$1" timeout $((SECS * 3 + 30)) qperf -lp "$QPORT" -cm1 -t "$SECS" \
		"$2" "$3" >"$out" 2>&1 || rc=$?
	QFIG=$(awk -F' = ' 'NF == 2 { gsub(/^ +| +$/, "", $2); print $2; exit }' "$out")
	case $QFIG in 0\ * | 0) [ $rc -ne 0 ] || rc=1 ;; esac
	if [ $rc -ne 0 ] || [ -z "$QFIG" ]; then
		sed 's/^/#   /' "$out" | tail -8
		[ $rc -ne 0 ] || rc=1
	fi
	return $rc
}

declare -A FIG
# qperf_row DESC NS ADDR KEY TEST: one KTAP point; the figure in FIG[KEY].
qperf_row() {
	local desc=$1 ns=$2 addr=$3 key=$4 t=$5 rc=0
	qperf_one "$ns" "$addr" "$t" || rc=$?
	FIG[$key]=$QFIG
	if [ $rc -eq 0 ]; then
		ktap_test_pass "$desc: qperf -cm1 $t ($QFIG)"
	else
		ktap_test_fail "$desc: qperf -cm1 $t (exit $rc)"
	fi
}

qperf_server "$NS_B"
for t in $QTESTS; do
	qperf_row "srnic -> srnic" "$NS_A" "$B4" "ss:$t" "$t"
done
for t in $UTESTS; do
	ktap_test_skip "srnic -> srnic: qperf $t" \
		"qperf sets up UC/UD QPs without rdma_cm and without a GRH, which RoCE needs"
done
if [ $have_rxe -eq 1 ]; then
	for t in $RTESTS; do
		qperf_row "rdma_rxe -> srnic" - "$S4" "rs:$t" "$t"
	done
fi
qperf_server_stop
if [ $have_rxe -eq 1 ]; then
	qperf_server -
	for t in $RTESTS; do
		qperf_row "srnic -> rdma_rxe" "$NS_B" "$R4" "sr:$t" "$t"
	done
	# The reference: rdma_rxe to itself (no second rdma_rxe namespace).
	if [ "$REF" = 1 ]; then
		for t in $QTESTS $UTESTS; do
			qperf_one - "$R4" "$t" || QFIG="failed ($?)"
			FIG[rr:$t]=$QFIG
		done
	fi
	qperf_server_stop
fi
# srnic to itself, the same topology as the reference.
if [ "$REF" = 1 ]; then
	qperf_server "$NS_A"
	for t in $QTESTS; do
		qperf_one "$NS_A" "$A4" "$t" || QFIG="failed ($?)"
		FIG[s0:$t]=$QFIG
	done
	qperf_server_stop
fi
if [ $have_rxe -ne 1 ]; then
	for t in $RTESTS; do
		ktap_test_skip "rdma_rxe -> srnic: qperf -cm1 $t" "no rdma_rxe"
		ktap_test_skip "srnic -> rdma_rxe: qperf -cm1 $t" "no rdma_rxe"
	done
fi

hdr="qperf -cm1 -t $SECS: srnic -> srnic | rdma_rxe -> srnic | srnic -> rdma_rxe"
[ "$REF" = 1 ] && hdr="$hdr | srnic alone | rdma_rxe alone (loopback)"
ktap_print_msg "$hdr"
for t in $QTESTS; do
	ktap_print_msg "$(printf '%-24s %-14s %-14s %-14s %-14s %s' "$t" \
		"${FIG[ss:$t]:--}" "${FIG[rs:$t]:--}" "${FIG[sr:$t]:--}" \
		"${FIG[s0:$t]:-}" "${FIG[rr:$t]:-}")"
done
if [ "$REF" = 1 ]; then
	for t in $UTESTS; do
		ktap_print_msg "$(printf '%-24s rdma_rxe alone: %s' "$t" "${FIG[rr:$t]:--}")"
	done
fi

# fi_pingpong's own control port: with -B/-P set, an rxm endpoint's
# fi_enable() fails with EINVAL (the port also names its address); the
# runs are one after the other.
FIPORT=47592
# fi_pair DESC SRV_NS SRV_IFACE SRV_DEV CLI_NS CLI_IFACE CLI_DEV ADDR
# ARGS...: one fi_pingpong server and client, data checked; FI_PAIR_ENV:
# more of libfabric's variables for both. The domain
# (the RDMA device) is named: every device is visible in every namespace
# (rdma's shared netns mode), and rxm takes the first it is given.
fi_pair() {
	local desc=$1 sns=$2 sif=$3 sdev=$4 cns=$5 cif=$6 cdev=$7 addr=$8
	local so=$SRNIC_TMP/fi-srv co=$SRNIC_TMP/fi-cli spid rc=0
	shift 8
	# shellcheck disable=SC2086 # FI_PAIR_ENV: words, or nothing
	in_ns "$sns" env FI_VERBS_IFACE="$sif" ${FI_PAIR_ENV:-} timeout 90 \
		fi_pingpong -d "$sdev" -c -I "$FI_ITERS" "$@" >"$so" 2>&1 &
	spid=$!
	wait_until 10 server_listening "$sns" "$FIPORT" ||
		ktap_print_msg "fi_pingpong listens on nothing after 10 s"
	# shellcheck disable=SC2086
	in_ns "$cns" env FI_VERBS_IFACE="$cif" ${FI_PAIR_ENV:-} timeout 80 \
		fi_pingpong -d "$cdev" -c -I "$FI_ITERS" "$@" "$addr" \
		>"$co" 2>&1 || rc=$?
	if ! wait "$spid" && [ $rc -eq 0 ]; then
		rc=1	# the server failed
	fi
	sed 's/^/#   /' "$co" | tail -4
	if [ $rc -eq 0 ] && grep -qE '^[0-9]+[kmg]? +[0-9]+ +=' "$co"; then
		ktap_test_pass "$desc: fi_pingpong -c $*"
	else
		sed 's/^/#   server: /' "$so" | tail -4
		ktap_test_fail "$desc: fi_pingpong -c $* (exit $rc)"
	fi
}

# 1 MiB messages (-S all goes to 8 MiB: minutes under TCG).
for ep in "-p verbs -e msg -S 1048576" "-p verbs;ofi_rxm -e rdm -S 1048576"; do
	# shellcheck disable=SC2086
	set -- $ep
	fi_pair "srnic -> srnic" "$NS_B" "$VB" srnic1 "$NS_A" "$VA" srnic0 \
		"$B4" "$@"
	if [ $have_rxe -eq 1 ] && [[ $ep == *ofi_rxm* ]]; then
		# rdma_rxe's 32767 CQEs: rxm's endpoint CQ is made to fit
		# (256 x 64 entries), or rdma_rxe fails fi_enable(). 4 KiB
		# messages go eagerly (Sends); 1 MiB ones by rxm's rendezvous:
		# each side RDMA-Reads the other's buffer, and rdma_rxe sends
		# a 1 MiB Read's 1024 responses in one burst, more than the
		# receiving CPU's backlog takes (net.core.netdev_max_backlog,
		# 1000): the tail is dropped, srnic asks again when its ACK
		# timer fires (rdma_cm's, from the path's packet lifetime:
		# hundreds of ms) and fi_pingpong's 50 round
		# trips outlast its timeout. A deeper backlog for that row
		# (ib_read_bw of 1 MiB from rdma_rxe: one timer retry per
		# Read, 8.5 MB/s, at 1000; none, 20.2 MB/s, at 4096).
		FI_PAIR_ENV=FI_UNIVERSE_SIZE=64 \
		fi_pair "rdma_rxe -> srnic" "$NS_B" "$VS" srnic2 - "$VR" rxe0 \
			"$S4" -p "verbs;ofi_rxm" -e rdm -S 4096
		backlog=$(sysctl -n net.core.netdev_max_backlog)
		sysctl -qw net.core.netdev_max_backlog=4096
		FI_PAIR_ENV=FI_UNIVERSE_SIZE=64 \
		fi_pair "rdma_rxe -> srnic (netdev_max_backlog 4096)" "$NS_B" "$VS" srnic2 - "$VR" rxe0 \
			"$S4" "$@"
		sysctl -qw net.core.netdev_max_backlog="$backlog"
	elif [ $have_rxe -eq 1 ]; then
		fi_pair "rdma_rxe -> srnic" "$NS_B" "$VS" srnic2 - "$VR" rxe0 \
			"$S4" "$@"
	else
		ktap_test_skip "rdma_rxe -> srnic: fi_pingpong $ep" "no rdma_rxe"
		[[ $ep != *ofi_rxm* ]] ||
			ktap_test_skip "rdma_rxe -> srnic: fi_pingpong -S 4096" "no rdma_rxe"
	fi
done

UPORT=13400
# ucx_pair DESC SRV_NS SRV_DEV CLI_NS CLI_DEV ADDR TLS TEST [ENV...]: one
# ucx_perftest server and client.
ucx_pair() {
	local desc=$1 sns=$2 sdev=$3 cns=$4 cdev=$5 addr=$6 tls=$7 t=$8 spid
	local so=$SRNIC_TMP/ucx-srv co=$SRNIC_TMP/ucx-cli rc=0 n=2000 fig
	shift 8
	case $t in *_bw | ucp_get | ucp_add) n=500 ;; esac
	UPORT=$((UPORT + 1))
	in_ns "$sns" env UCX_NET_DEVICES="$sdev:1" UCX_TLS="$tls" "$@" \
		timeout 120 ucx_perftest -p "$UPORT" >"$so" 2>&1 &
	spid=$!
	wait_until 10 server_listening "$sns" "$UPORT" ||
		ktap_print_msg "ucx_perftest listens on nothing after 10 s"
	in_ns "$cns" env UCX_NET_DEVICES="$cdev:1" UCX_TLS="$tls" "$@" \
		timeout 110 ucx_perftest -p "$UPORT" -t "$t" -n "$n" "$addr" \
		>"$co" 2>&1 || rc=$?
	if ! wait "$spid" && [ $rc -eq 0 ]; then
		rc=1
	fi
	# The final row: "Final: ITERS LAT_50 LAT_AVG LAT_ALL BW_AVG ...".
	fig=$(awk '/Final:/ { print $4 " us, " $7 " MB/s"; exit }' "$co")
	if [ $rc -eq 0 ] && [ -n "$fig" ]; then
		ktap_test_pass "$desc: ucx_perftest $tls -t $t ($fig)"
	else
		grep -v '^ *[0-9]* *0x\|^ *[0-9]*  /' "$co" | tail -5 | sed 's/^/#   /'
		ktap_test_fail "$desc: ucx_perftest $tls -t $t (exit $rc)"
	fi
}

for t in $UTLS; do
	ucx_pair "srnic -> srnic" "$NS_B" srnic1 "$NS_A" srnic0 "$B4" \
		rc_verbs,ud_verbs "$t"
done
for t in $UTLS; do
	ucx_pair "srnic -> srnic" "$NS_B" srnic1 "$NS_A" srnic0 "$B4" \
		ud_verbs "$t"
done
for t in $UTLS; do
	if [ $have_rxe -eq 1 ]; then
		ucx_pair "rdma_rxe -> srnic" "$NS_B" srnic2 - rxe0 "$S4" \
			rc_verbs,ud_verbs "$t" UCX_UD_VERBS_ETH_DGID_CHECK=n
	else
		ktap_test_skip "rdma_rxe -> srnic: ucx_perftest -t $t" "no rdma_rxe"
	fi
done

ktap_kernel_log_clean
[ $have_rxe -eq 1 ] && rdma link delete rxe0
# srnic first: rmmod rdma_rxe unregisters every RDMA_DRIVER_RXE device.
ktap_test_result "rmmod srnic" srnic_unload
rmmod rdma_rxe 2>/dev/null
ktap_finished
