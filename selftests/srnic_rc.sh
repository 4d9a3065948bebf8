#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC traffic over srnic, seen by stock tools and by srnic_rc_test: two
# namespaces joined by a veth pair, a srnic device on each end (srnic0 on
# VETH_A in NS_A, srnic1 on VETH_B in NS_B).
#
#   ibv_rc_pingpong   plain (and its Sends fetched by their own doorbells:
#                     doorbell_fetches), -s 1 MiB, -m 4096 (veth MTU 9000), -e;
#                     ibv_srq_pingpong (16 QPs sharing an SRQ)
#   perftest          send/write/read/atomic bw, send/write/read lat:
#                     between the namespaces, and on self-loopback (both
#                     ends on srnic0)
#   srnic_rc_test     order (Write x K + Write with Immediate: no stale
#                     byte; netem loss/reorder/delay; and on loopback),
#                     awrite (the same with an RDMA Atomic Write flag),
#                     fence (IBV_SEND_FENCE, max_rd_atomic 2 under load),
#                     solicit (solicited events), overrun (CQ overrun),
#                     IPv6 GIDs, path MTU 256 and 512,
#                     integrity (netem loss/duplicate), retry, rnr,
#                     access, scribble (loopback), bigread (check-full:
#                     2 GiB Read at path MTU 256, 2^23 PSNs),
#                     fair (the fenced-QP scenario: srnic1's Read
#                     responses held back by netem on a u32 filter;
#                     default pool and a pool of 100 slots)
#
# Each step is one KTAP line, under "timeout $SRNIC_RC_TIMEOUT".  On a
# failure: both ends' output, rdma statistic of both devices, new kernel
# log lines.  The outputs are kept in $SRNIC_OUT/srnic_rc/ too.
#
# Environment:
#	SRNIC_RC_TIMEOUT	seconds per step (300)
#	SRNIC_RC_NETEM_TIMEOUT	seconds for the netem steps (900: under TCG,
#				order --gens 10000 through that netem took
#				330 s)
#	SRNIC_RC_GENS		order generations (10000)
#	SRNIC_RC_BYTES		integrity bytes (256M)
#	SRNIC_RC_ROUNDS		scribble rounds (1000)
#	SRNIC_RC_ACK_TIMEOUT	local ACK timeout exponent of the netem steps
#				(12, 16.7 ms; the debug-kernel stage uses 14)
#	SRNIC_RC_NETEM_ORDER	netem of the order/awrite/fence steps, both
#				ways ("loss 1% reorder 5% delay 1ms 1ms")
#	SRNIC_RC_ONLY		ERE: run only the steps whose name matches
#				(set-up and teardown always run)
#	SRNIC_RC_SKIP		ERE: skip the steps whose name matches (make
#				check runs "fair", a throughput verdict, in a
#				guest of its own while nothing else runs)
#	SRNIC_RC_BIGREAD=1	run bigread, a 2 GiB Read at path MTU 256
#				(make check-full: the guest needs 6 GiB)
#	SRNIC_RC_KEEP_GOING=1	go on after the first traffic step failed
#				(by default the rest is skipped: each would
#				only wait for its timeout)
. "$(dirname "$0")/srnic_lib.sh"

T=${SRNIC_RC_TIMEOUT:-300}
T_NETEM=${SRNIC_RC_NETEM_TIMEOUT:-900}
GENS=${SRNIC_RC_GENS:-10000}
BYTES=${SRNIC_RC_BYTES:-256M}
ROUNDS=${SRNIC_RC_ROUNDS:-1000}
ACK_TO=${SRNIC_RC_ACK_TIMEOUT:-12}
RC_TEST=$SRNIC_BIN/srnic_rc_test
PERFTESTS=(ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat
	   ib_write_lat ib_read_lat)
LOGDIR=$SRNIC_TMP
if [ -n "$SRNIC_OUT" ] && mkdir -p "$SRNIC_OUT/srnic_rc" 2>/dev/null; then
	LOGDIR=$SRNIC_OUT/srnic_rc
fi

srnic_require
require_cmd tc ss timeout ibv_rc_pingpong "${PERFTESTS[@]}"
[ -x "$RC_TEST" ] || ktap_skip_rest "no $RC_TEST (run make)"
ktap_print_header
ktap_set_plan 53

# --- helpers -----------------------------------------------------------------

PORT=18600
BROKEN=			# the traffic step that failed first

tcp_listening() {	# NS PORT
	ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q .
}

rc_text() {	# EXIT-STATUS
	case $1 in
	124) echo "124 (timed out after ${T}s)" ;;
	137) echo "137 (killed after the timeout)" ;;
	*) echo "$1" ;;
	esac
}

diagnostics() {	# after a failed step
	local dev
	for dev in srnic0 srnic1; do
		rdma_dev_exists "$dev" || continue
		ktap_print_msg "rdma statistic show link $dev/1:"
		rdma statistic show link "$dev/1" 2>&1 | fold -w 100 | sed 's/^/#   /'
	done
	ktap_print_msg "rdma resource show qp:"
	rdma resource show qp 2>&1 | head -n 20 | sed 's/^/#   /'
	ktap_print_msg "new kernel log lines:"
	dmesg_since "$DMESG_STEP" | tail -n 30 | sed 's/^/#   /'
}

# selected DESC: SRNIC_RC_ONLY and SRNIC_RC_SKIP let it run.
selected() {
	{ [ -z "$SRNIC_RC_ONLY" ] || grep -Eq -- "$SRNIC_RC_ONLY" <<<"$1"; } &&
		{ [ -z "${SRNIC_RC_SKIP:-}" ] || ! grep -Eq -- "$SRNIC_RC_SKIP" <<<"$1"; }
}

# step DESC: whether to run it (SRNIC_RC_ONLY, SRNIC_RC_SKIP, an earlier
# failure).
step() {
	if [ -n "$SRNIC_RC_ONLY" ] && ! grep -Eq -- "$SRNIC_RC_ONLY" <<<"$1"; then
		ktap_test_skip "$1" "not selected by SRNIC_RC_ONLY"
		return 1
	fi
	if [ -n "${SRNIC_RC_SKIP:-}" ] && grep -Eq -- "$SRNIC_RC_SKIP" <<<"$1"; then
		ktap_test_skip "$1" "run apart (SRNIC_RC_SKIP)"
		return 1
	fi
	if [ -n "$BROKEN" ] && [ "${SRNIC_RC_KEEP_GOING:-0}" != 1 ]; then
		ktap_test_skip "$1" "RC traffic already failed ($BROKEN)"
		return 1
	fi
	DMESG_STEP=$(dmesg_now)
	return 0
}

step_failed() {	# DESC
	diagnostics
	[ -n "$BROKEN" ] || BROKEN=$1
	ktap_test_fail "$1"
}

# pair DESC SRV_NS CLI_NS: run SRV[@] in SRV_NS in the background; once it
# listens on $PORT, CLI[@] in CLI_NS.  Passes if both exit 0 (4 from the
# client: skip).  Shows the last lines of the client's output (its summary)
# on success, both outputs on failure.
pair() {
	local desc=$1 sns=$2 cns=$3 so co spid crc=0 src=0 i
	local tag=$KTAP_TESTNO-${SRV[0]##*/}
	so=$LOGDIR/$tag.server.log co=$LOGDIR/$tag.client.log
	step "$desc" || return 0

	ip netns exec "$sns" timeout -k 5 $((T + 10)) "${SRV[@]}" >"$so" 2>&1 &
	spid=$!
	if ! wait_until 30 tcp_listening "$sns" "$PORT"; then
		ktap_print_msg "server never listened on port $PORT: ${SRV[*]}"
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		show_file "$so"
		step_failed "$desc"
		PORT=$((PORT + 1))
		return 0
	fi
	ip netns exec "$cns" timeout -k 20 "$T" "${CLI[@]}" >"$co" 2>&1 || crc=$?
	# The server ends with the client (or soon after a failed one).
	for ((i = 0; i < 150; i++)); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.2
	done
	kill "$spid" 2>/dev/null
	wait "$spid" || src=$?
	PORT=$((PORT + 1))

	if [ $crc -eq 0 ] && [ $src -eq 0 ]; then
		show_file "$co" "${SHOW_LINES:-3}"
		ktap_test_pass "$desc"
	elif [ $crc -eq "$KSFT_SKIP" ]; then
		show_file "$co" 5
		ktap_test_skip "$desc" "$(grep -m1 SKIP "$co")"
	else
		ktap_print_msg "client exited $(rc_text $crc): ${CLI[*]}"
		show_file "$co"
		ktap_print_msg "server exited $(rc_text $src): ${SRV[*]}"
		show_file "$so"
		step_failed "$desc"
	fi
}

# single DESC NS CMD...: one process (srnic_rc_test --loop).
single() {
	local desc=$1 ns=$2 out rc=0
	shift 2
	out=$LOGDIR/$KTAP_TESTNO-single.log
	step "$desc" || return 0
	ip netns exec "$ns" timeout -k 20 "$T" "$@" >"$out" 2>&1 || rc=$?
	if [ $rc -eq 0 ]; then
		show_file "$out" 2
		ktap_test_pass "$desc"
	elif [ $rc -eq "$KSFT_SKIP" ]; then
		show_file "$out" 5
		ktap_test_skip "$desc" "$(grep -m1 SKIP "$out")"
	else
		ktap_print_msg "exited $(rc_text $rc): $*"
		show_file "$out"
		step_failed "$desc"
	fi
}

netem() {	# ARGS...: the same netem qdisc on both veth ends ("" removes)
	ip -n "$NS_A" link show "$VETH_A" >/dev/null 2>&1 || return 1
	tc -n "$NS_A" qdisc del dev "$VETH_A" root 2>/dev/null
	tc -n "$NS_B" qdisc del dev "$VETH_B" root 2>/dev/null
	[ $# -eq 0 ] && return 0
	tc -n "$NS_A" qdisc add dev "$VETH_A" root netem "$@" &&
		tc -n "$NS_B" qdisc add dev "$VETH_B" root netem "$@"
}

# --- set-up ------------------------------------------------------------------

dmesg_mark
ktap_test_result "insmod srnic.ko" srnic_load || srnic_bail "no module"
defer srnic_unload
srnic_two_hosts || ktap_skip_rest "cannot create namespaces/veth"
modprobe sch_netem 2>/dev/null

srnic_link_up "$NS_A" srnic0 "$VETH_A"
srnic_link_up "$NS_B" srnic1 "$VETH_B"
# Background servers still running hold the devices: stop them first.
defer eval 'jobs -p | xargs -r kill'

if GA=$(srnic_gid_wait srnic0 "$VETH_A_IP4") &&
   GB=$(srnic_gid_wait srnic1 "$VETH_B_IP4"); then
	ktap_test_pass "RoCEv2 GIDs: srnic0 $VETH_A_IP4 at $GA, srnic1 $VETH_B_IP4 at $GB"
else
	ktap_test_fail "RoCEv2 GIDs of $VETH_A_IP4 and $VETH_B_IP4"
	srnic_bail "no GIDs"
fi
if GA6=$(srnic_gid_wait srnic0 "$VETH_A_IP6") &&
   GB6=$(srnic_gid_wait srnic1 "$VETH_B_IP6"); then
	ktap_test_pass "RoCEv2 IPv6 GIDs: srnic0 $VETH_A_IP6 at $GA6, srnic1 $VETH_B_IP6 at $GB6"
else
	ktap_test_fail "RoCEv2 GIDs of $VETH_A_IP6 and $VETH_B_IP6"
	GA6=$GA GB6=$GB
fi

# --- ibv_rc_pingpong ---------------------------------------------------------

pingpong() {	# DESC ARGS...: ibv_rc_pingpong -c between the namespaces
	local desc=$1
	shift
	SRV=(ibv_rc_pingpong -c -d srnic1 -g "$GB" -p "$PORT" "$@")
	CLI=(ibv_rc_pingpong -c -d srnic0 -g "$GA" -p "$PORT" "$@" "$VETH_B_IP4")
	SHOW_LINES=2 pair "$desc" "$NS_B" "$NS_A"
}

link_cnt() {	# DEV NAME: one counter of DEV's port
	rdma statistic show link "$1/1" |
		tr ' ' '\n' | awk -v n="$2" 'f { print; exit } $0 == n { f = 1 }'
}

db0=$(link_cnt srnic0 doorbell_fetches)
pingpong "ibv_rc_pingpong (4 KiB x 1000, MTU 1024)"
# A ping-pong posts each Send on a QP with nothing in flight: its doorbell
# runs the prefetch stage itself instead of waiting for a kworker (the
# latency fast path). At least a quarter of the client's 1000 Sends (the
# ACK of the previous one may come after the reply that frees the next).
db1=$(link_cnt srnic0 doorbell_fetches)
if step "idle-QP doorbells fetch themselves (doorbell_fetches)"; then
	n=$(( ${db1:-0} - ${db0:-0} ))
	if [ "$n" -ge 250 ]; then
		ktap_test_pass "idle-QP doorbells fetch themselves ($n of 1000 Sends)"
	else
		ktap_print_msg "doorbell_fetches moved by $n (${db0:-?} -> ${db1:-?}) over 1000 ping-pong Sends"
		step_failed "idle-QP doorbells fetch themselves (doorbell_fetches)"
	fi
fi
pingpong "ibv_rc_pingpong -s 1048576 -n 100" -s 1048576 -n 100
ip -n "$NS_A" link set "$VETH_A" mtu 9000
ip -n "$NS_B" link set "$VETH_B" mtu 9000
ktap_print_msg "veth MTU 9000: active_mtu $(ibv_devinfo -d srnic0 | awk '$1 == "active_mtu:" { print $2 }')"
pingpong "ibv_rc_pingpong -m 4096 (veth MTU 9000)" -m 4096
pingpong "ibv_rc_pingpong -e (CQ events)" -e

# A shared receive queue: 16 QPs on each side draw from one SRQ.
SRV=(ibv_srq_pingpong -d srnic1 -g "$GB" -p "$PORT" -q 16 -n 200)
CLI=(ibv_srq_pingpong -d srnic0 -g "$GA" -p "$PORT" -q 16 -n 200 "$VETH_B_IP4")
SHOW_LINES=2 pair "ibv_srq_pingpong -q 16 -n 200 (SRQ)" "$NS_B" "$NS_A"

# --- perftest ----------------------------------------------------------------

for t in "${PERFTESTS[@]}"; do
	SRV=("$t" -F -n 200 -d srnic1 -x "$GB" -p "$PORT")
	CLI=("$t" -F -n 200 -d srnic0 -x "$GA" -p "$PORT" "$VETH_B_IP4")
	SHOW_LINES=2 pair "$t -n 200 between namespaces" "$NS_B" "$NS_A"
done
for t in "${PERFTESTS[@]}"; do
	SRV=("$t" -F -n 200 -d srnic0 -x "$GA" -p "$PORT")
	CLI=("$t" -F -n 200 -d srnic0 -x "$GA" -p "$PORT" "$VETH_A_IP4")
	SHOW_LINES=2 pair "$t -n 200 on loopback (srnic0 to itself)" "$NS_A" "$NS_A"
done

# --- srnic_rc_test -----------------------------------------------------------

rc_test() {	# DESC TEST ARGS...: srnic_rc_test between the namespaces
	local desc=$1
	shift
	SRV=("$RC_TEST" -v --dev srnic1 --gid-index "${RC_GB:-$GB}"
	     --port "$PORT" --server "$@")
	CLI=("$RC_TEST" -v --dev srnic0 --gid-index "${RC_GA:-$GA}"
	     --port "$PORT" --connect "$VETH_B_IP4" "$@")
	SHOW_LINES=1 pair "$desc" "$NS_B" "$NS_A"
}

# netem_test DESC ARGS...: rc_test through NETEM_ORDER on both veth ends.
netem_test() {
	local desc="$1, netem ${NETEM_ORDER[*]}"
	shift
	if netem "${NETEM_ORDER[@]}"; then
		T=$T_NETEM rc_test "$desc" "$@"
	else
		ktap_test_fail "$desc: cannot add netem"
	fi
	netem
}

# must_see_stale DESC LATE_PLACE ARGS...: srnic_rc_test --loop ARGS on
# srnic0 (with debug_late_place=LATE_PLACE) must fail with stale bytes:
# the test is sensitive to what it checks. debug_late_place is a test
# hook (srnic_hooks.c), absent from a module built with SRNIC_PACKAGE=1.
must_see_stale() {
	local desc=$1 knob=$2 out=$LOGDIR/$KTAP_TESTNO-stale.log rc=0
	local hook=/sys/module/srnic/parameters/debug_late_place
	shift 2
	step "$desc" || return 0
	if [ ! -e "$hook" ]; then
		[ "$knob" = 0 ] || {
			ktap_test_skip "$desc" "this srnic.ko has no test hooks (built with SRNIC_PACKAGE=1)"
			return 0
		}
	else
		echo "$knob" > "$hook"
	fi
	ip netns exec "$NS_A" timeout -k 20 "$T" "$RC_TEST" -v --dev srnic0 \
		--gid-index "$GA" --loop --gens 200 "$@" >"$out" 2>&1 || rc=$?
	[ ! -e "$hook" ] || echo 0 > "$hook"
	show_file "$out" 2
	if [ $rc -eq 1 ] && grep -Eq 'stale_bytes [1-9]' "$out"; then
		ktap_test_pass "$desc"
	else
		ktap_print_msg "expected exit 1 with stale bytes, got $(rc_text $rc)"
		ktap_test_fail "$desc"
	fi
}

# The ordering contract under loss, reordering and jitter.  Timeout 12
# (16 ms): a lost tail costs a retransmit timer, not 67 ms. It holds on
# the debug kernel too, where one 16-packet round can take 76 ms, since
# the timer runs from the newest packet sent (it ran from the oldest
# unacknowledged one, timed every such round out, and failed 4 runs of
# 4 there with RETRY_EXC_ERR).
read -ra NETEM_ORDER <<<"${SRNIC_RC_NETEM_ORDER:-loss 1% reorder 5% delay 1ms 1ms}"
netem_test "order (write_imm_order) --gens $GENS" --gens "$GENS" \
	--timeout "$ACK_TO" order
# The same contract with an RDMA Atomic Write as the notification.
netem_test "awrite (Writes + Atomic Write flag) --gens $((GENS / 20))" \
	--gens $((GENS / 20)) --timeout "$ACK_TO" awrite
single "order (write_imm_order) --gens $GENS on loopback" "$NS_A" \
	"$RC_TEST" -v --dev srnic0 --gid-index "$GA" --loop --gens "$GENS" order
single "awrite --gens $((GENS / 2)) on loopback" "$NS_A" \
	"$RC_TEST" -v --dev srnic0 --gid-index "$GA" --loop --gens $((GENS / 2)) \
	awrite

# IBV_SEND_FENCE and max_rd_atomic = max_dest_rd_atomic = 2 under load:
# a fenced Write of what a Read just fetched, Reads and atomics bursting
# past the limit. Without the fence flag the test must see stale bytes.
netem_test "fence --gens $((GENS / 40))" --gens $((GENS / 40)) \
	--timeout "$ACK_TO" \
	fence
single "fence --gens $((GENS / 4)) on loopback" "$NS_A" \
	"$RC_TEST" -v --dev srnic0 --gid-index "$GA" --loop --gens $((GENS / 4)) \
	fence
must_see_stale "fence --no-fence sees stale bytes (sensitivity)" 0 \
	--no-fence fence

# RoCEv2 over IPv6 (UDP over IPv6, the ICRC over the IPv6 header), and
# the smallest path MTUs (many packets per message).
RC_GA=$GA6 RC_GB=$GB6 rc_test "order --gens $((GENS / 10)) over IPv6 GIDs" \
	--gens $((GENS / 10)) order
RC_GA=$GA6 RC_GB=$GB6 rc_test "integrity --bytes 32M over IPv6 GIDs" \
	--bytes 32M integrity
rc_test "integrity --bytes 16M at path MTU 256" --mtu 256 --bytes 16M \
	integrity
rc_test "order --gens $((GENS / 10)) --imm-len 5000 at path MTU 512" \
	--mtu 512 --gens $((GENS / 10)) --imm-len 5000 order

# The ordering tests must be able to fail: with debug_late_place srnic
# places Write payload after the completions, and stale bytes must show.
must_see_stale "order sees stale bytes with debug_late_place=1 (sensitivity)" 1 \
	order
must_see_stale "awrite sees stale bytes with debug_late_place=1 (sensitivity)" 1 \
	awrite

rc_test "integrity --bytes $BYTES, no netem" --bytes "$BYTES" integrity
# Every operation at every size; between cells the link idles 100 ms with
# nothing outstanding, under a 10 ms timer and 2 retries: a requester that
# still counts a PSN as unacknowledged (e.g. after a Read whose last
# packet is short) times out, fails its QP and the next cell.
rc_test "xfer: every operation and size class, idle between: no spurious timeout" \
	--mtu 1024 --timeout 8 --retry-cnt 2 --idle 100 xfer

# Go-back-N under loss and duplication, with Reads in flight.
NETEM_INTEG=(loss 2% duplicate 1%)
if netem "${NETEM_INTEG[@]}"; then
	rc_test "integrity --bytes $BYTES, netem ${NETEM_INTEG[*]}" \
		--bytes "$BYTES" --timeout "$ACK_TO" integrity
else
	ktap_test_fail "integrity: cannot add netem ${NETEM_INTEG[*]}"
fi
netem

# The fenced-QP scenario of the WQE-prefetch chapter, end to end: srnic0's
# QP1 posts 100 WRs, the 10th fenced behind the 9th, a Read whose
# responses are dropped on $VETH_B (a clsact egress u32 filter on the BTH
# opcode, RDMA Read Response First/Middle/Last/Only: nothing else is
# touched) until the client's 2 s measuring window is over; then QP1's
# retransmission timer (1 s) asks again and the Read completes. QP2
# streams Writes meanwhile, on a link limited to 64 Mbit/s, and must keep
# 80% of its throughput alone. The
# pool counters before and after, and the QPs' pool shares while QP1 is
# still fenced, are printed. (netem delaying those responses instead
# reprogrammed its watchdog timer at every dequeue while it held one,
# which under TCG cost QP2's packets up to a third of their rate: a
# price of the method, not of srnic.)
FAIR_STATS='prefetch_|slots_pinned_by_fence|tx_gate_rounds'
fair_hold() {	# on|off: drop srnic1's Read responses
	local op
	tc -n "$NS_B" qdisc del dev "$VETH_B" clsact 2>/dev/null
	[ "$1" = on ] || return 0
	modprobe -q sch_ingress 2>/dev/null
	modprobe -q cls_u32 2>/dev/null
	modprobe -q act_gact 2>/dev/null
	tc -n "$NS_B" qdisc add dev "$VETH_B" clsact || return 1
	for op in "0x0d 0xff" "0x0e 0xfe" "0x10 0xff"; do
		# shellcheck disable=SC2086
		tc -n "$NS_B" filter add dev "$VETH_B" egress protocol ip \
			prio 1 u32 match ip protocol 17 0xff \
			match ip dport 4791 0xffff match u8 $op at 28 \
			action drop || return 1
	done
}
fair_stats() {	# LABEL: srnic0's pool and gate counters
	ktap_print_msg "$1: $(rdma statistic show link srnic0/1 |
		awk -v re="$FAIR_STATS" '{ for (i = 1; i < NF; i++)
			if ($i ~ re) printf "%s %s ", $i, $(i + 1) }')"
}
fair() {	# DESC SLOTS
	local desc=$1 slots=$2 sysd=/sys/class/infiniband/srnic0 snap watcher
	local co=$LOGDIR/$KTAP_TESTNO-srnic_rc_test.client.log
	snap=$LOGDIR/$KTAP_TESTNO-fair-qps.log
	# Not selected: no set-up (step() reports the skip).
	selected "$desc" || { step "$desc"; return; }
	# srnic0's link rate-limited to 64 Mbit/s, a third of what QP2 reaches
	# here unlimited: the windows then measure the gate's share, not the
	# TCG guest's CPU of the moment (unlimited, two windows alone seconds
	# apart differed by up to 40%). Queue room for everything in flight.
	if ! tc -n "$NS_A" qdisc replace dev "$VETH_A" root tbf rate 64mbit \
		burst 64kb limit 4mb || ! fair_hold on; then
		step "$desc" && ktap_test_fail "$desc: cannot add the tc set-up"
		fair_hold off
		tc -n "$NS_A" qdisc del dev "$VETH_A" root 2>/dev/null
		return
	fi
	echo "$slots" > "$sysd/prefetch_slots" ||
		ktap_print_msg "cannot set prefetch_slots $slots"
	ktap_print_msg "pool: $(for k in prefetch_slots prefetch_per_qp_cap \
		prefetch_lookahead prefetch_fence_ahead tx_gate_policy; do
		printf '%s %s ' "$k" "$(cat "$sysd/$k")"; done)"
	fair_stats before
	rm -f "$co"
	# Once the window is over: the QPs' pool shares (QP1 still fenced),
	# then the Read's responses may pass. Watched with builtins, one fork
	# per 0.5 s (a poller forking grep and date ten times a second cost
	# the measured QP a third of its throughput here).
	( for ((i = 0; i < 240; i++)); do
		mapfile -t lines <"$co" 2>/dev/null
		[[ "${lines[*]}" == *"fenced window ends"* ]] && break
		sleep 0.5
	  done
	  rdma -dd resource show qp link srnic0/1 >"$snap" 2>&1
	  fair_hold off ) &
	watcher=$!
	rc_test "$desc" --size 4096 --window 2000 fair
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
	fair_hold off
	tc -n "$NS_A" qdisc del dev "$VETH_A" root 2>/dev/null
	fair_stats after
	if [ -s "$snap" ]; then
		ktap_print_msg "srnic0's QPs after the window, QP1 still fenced:"
		grep -E 'prefetch|tx_cpu' "$snap" | sed 's/^/#   /'
	fi
	echo 1024 > "$sysd/prefetch_slots"
}
fair "fair: QP2 keeps >= 80% while QP1 waits on its Read (default pool)" 1024
fair "fair: QP2 keeps >= 80% while QP1 waits on its Read (pool of 100 slots)" 100

rc_test "solicit: solicited-only CQ events (Send, Write with Immediate)" \
	solicit
rc_test "overrun: a full CQ reports CQ_ERR, its QP goes to error" overrun
rc_test "retry: unresponsive peer -> RETRY_EXC_ERR" retry
rc_test "rnr: rnr_retry 7 waits for the receive, 0 -> RNR_RETRY_EXC_ERR" rnr
rc_test "access: bad rkey/bounds/rights -> REM_ACCESS_ERR, memory intact" \
	access
# IBA's largest Read: 2 GiB at path MTU 256 is 2^23 response PSNs, half
# the PSN space, all outstanding at once. check-full's (a 6 GiB guest:
# 2 GiB registered on each side); then a Write and a Read on the same QP.
# ACK timeout 16 (268 ms): a Read lost in part is asked for again from
# its first missing PSN and served to its end, millions of packets; a
# guest starved of CPU must not run out of retries meanwhile.
desc="bigread: one 2 GiB Read at path MTU 256 (2^23 PSNs), then Write + Read"
mem_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
if [ "${SRNIC_RC_BIGREAD:-0}" != 1 ]; then
	ktap_test_skip "$desc" "make check-full's (SRNIC_RC_BIGREAD=1)"
elif [ "$mem_kb" -lt $((5 * 1024 * 1024)) ]; then
	ktap_test_skip "$desc" "needs a guest of 6 GiB ($((mem_kb / 1024)) MiB)"
else
	T=900 rc_test "$desc" --mtu 256 --size 2G --cq-wait 900 --timeout 16 bigread
fi
single "scribble --rounds $ROUNDS: garbage in a victim's send ring" "$NS_A" \
	"$RC_TEST" -v --dev srnic0 --gid-index "$GA" --loop --rounds "$ROUNDS" \
	--strict scribble

# --- teardown ----------------------------------------------------------------

jobs -p | xargs -r kill 2>/dev/null
wait 2>/dev/null
ktap_kernel_log_clean
ktap_test_result "rdma link delete srnic0 srnic1" \
	eval 'timeout 60 rdma link delete srnic0 && timeout 60 rdma link delete srnic1'
ktap_test_result "rmmod srnic" timeout 60 rmmod srnic
ktap_finished
