#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srnic_soak.sh - verified traffic while the machine around it changes.
#
# A steady pair (srnic0 in NS_A <-> srnic1 in NS_B) carries checked traffic
# on several QPs at once, each loop one connection after another until the
# churn is over: srnic_rc_test order (Writes then a Write with Immediate,
# every byte of each generation checked when its notification arrives),
# srnic_rc_test integrity (Writes read back and compared) and rping -V
# (rdma_cm, every byte of every ping). Meanwhile, one after another:
#
#  - a churn pair (srnic2 in NS_C <-> srnic3 in NS_D) with its own rping -V
#    loop: its netdev goes down and up three times, its device is deleted
#    under traffic and added again, and the loop must run again after that;
#  - a namespace is deleted with a device in it whose QPs carry traffic
#    (srnic4 in NS_E, used by processes of NS_D: RDMA devices are shared
#    between namespaces): the device goes, its processes end (no verb
#    hangs);
#  - rdma_rxe is loaded beside srnic, carries rping -V to srnic and its
#    device is deleted;
#  - the steady pair's own netdev goes down for a second: RC retransmission
#    carries its traffic over the gap.
#
# Every run of the steady loops must pass; no run of any loop may report
# wrong data. Then rdma_rxe is unloaded under the steady pair's traffic:
# ib_unregister_driver(RDMA_DRIVER_RXE) takes srnic's devices too (srnic
# speaks rdma_rxe's ABI under its driver id, see srnic.rst); the processes
# must see the device go and end in bounded time, without wrong data, and
# srnic must create working devices again. Last: rmmod and a clean kernel
# log (scripts/kunit.sh --selftests adds kmemleak on the debug kernel).
#
# Environment (the defaults are make check-full's soak volumes; make check
# runs less): SRNIC_SOAK_SECONDS (the steady traffic besides the events'
# own time; 300), SRNIC_SOAK_GENS (generations per order run, 1000),
# SRNIC_SOAK_BYTES (bytes per integrity run, 64M), SRNIC_SOAK_PINGS (pings
# per steady rping run, 500; the churn pair's runs a quarter of that).

. "$(dirname "$0")/srnic_lib.sh"

SECS=${SRNIC_SOAK_SECONDS:-300}
GENS=${SRNIC_SOAK_GENS:-1000}
BYTES=${SRNIC_SOAK_BYTES:-64M}
PINGS=${SRNIC_SOAK_PINGS:-500}
RC_TEST=$SRNIC_BIN/srnic_rc_test
LOG=$SRNIC_TMP
[ -n "${SRNIC_OUT:-}" ] && LOG=$SRNIC_OUT/srnic_soak && mkdir -p "$LOG"
STOP=$LOG/stop HOLD=$LOG/hold
T=$((SECS * 4 + 300))	# one run's limit: a hang fails, it does not block

srnic_require
require_cmd rping timeout ss
[ -x "$RC_TEST" ] || ktap_skip_rest "no $RC_TEST (run make)"
ktap_print_header
ktap_set_plan 21
dmesg_mark

ktap_test_result "insmod srnic" srnic_load || srnic_bail "no module"
setup_ns NS_A NS_B NS_C NS_D || srnic_bail "namespaces"
setup_veth_pair "$NS_A" "$NS_B" || srnic_bail "veth A-B"
VA=$VETH_A VB=$VETH_B AA4=$VETH_A_IP4 AB4=$VETH_B_IP4
setup_veth_pair "$NS_C" "$NS_D" || srnic_bail "veth C-D"
VC=$VETH_A VD=$VETH_B CD4=$VETH_B_IP4
srnic_link_up "$NS_A" srnic0 "$VA"
srnic_link_up "$NS_B" srnic1 "$VB"
srnic_link_up "$NS_C" srnic2 "$VC"
srnic_link_up "$NS_D" srnic3 "$VD"
GA=$(srnic_gid_wait srnic0 "$AA4") && GB=$(srnic_gid_wait srnic1 "$AB4") ||
	srnic_bail "no GIDs"

# --- loops ---------------------------------------------------------------------

# loop NAME SRV_NS CLI_NS PORT SERVER... -- CLIENT...: runs the pair again
# and again (@PORT@ in the words becomes a new port each time) until $STOP
# exists; one line "RUN CLIENT_RC SERVER_RC" per run in $LOG/NAME.runs
# (CLIENT_RC "nolisten": the server never listened).
loop() {
	local name=$1 sns=$2 cns=$3 port=$4 srv=() cli=() n=0 spid crc src
	shift 4
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	: >"$LOG/$name.runs"
	while [ ! -e "$STOP" ]; do
		# No new connection while the steady pair's link is down.
		while [ -e "$HOLD" ]; do sleep 0.2; done
		ip netns exec "$sns" timeout -k 5 $((T + 10)) \
			"${srv[@]//@PORT@/$port}" >"$LOG/$name.$n.srv" 2>&1 &
		spid=$!
		crc=0 src=0
		# Slow to start on the debug kernel: minutes, not seconds.
		if wait_until 120 server_listening "$sns" "$port"; then
			# The hold may have begun while the server started.
			while [ -e "$HOLD" ]; do sleep 0.2; done
			ip netns exec "$cns" timeout -k 5 "$T" \
				"${cli[@]//@PORT@/$port}" >"$LOG/$name.$n.cli" 2>&1 ||
				crc=$?
		else
			crc=nolisten
		fi
		# A server whose client failed may wait for a disconnect that
		# the link flap or the device's deletion lost (rdma_cm's DREQ
		# retries): 10 s, then it goes; after a good run, up to 60.
		timeout $([ "$crc" = 0 ] && echo 60 || echo 10) \
			tail --pid="$spid" -f /dev/null
		kill "$spid" 2>/dev/null
		wait "$spid" || src=$?
		echo "$n $crc $src" >>"$LOG/$name.runs"
		n=$((n + 1)) port=$((port + 1))
		# A failed run (the churn pair's device gone) tries again soon.
		[ "$crc$src" = 00 ] || sleep 1
	done
}

LOOPS=()
start_loop() {	# NAME ARGS...: loop in the background
	loop "$@" &
	LOOPS+=($!)
	defer kill "$!"
}

runs() {	# NAME: the runs so far
	wc -l <"$LOG/$1.runs"
}

# bad_data NAME: the lines of NAME's runs that report wrong data (not an
# error: a byte that differs).
bad_data() {
	cat "$LOG/$1".*.{cli,srv} 2>/dev/null |
		grep -E "data mismatch|stale_bytes [1-9]|bad_gens [1-9]|MISMATCH|differ"
}

# steady_ok NAME: every run of NAME passed, and there was at least one.
steady_ok() {
	local name=$1 n bad
	n=$(runs "$name")
	bad=$(awk '$2 != 0 || $3 != 0' "$LOG/$name.runs")
	ktap_print_msg "$name: $n runs, failed: ${bad:-none}"
	if [ -n "$bad" ]; then
		set -- $bad
		show_file "$LOG/$name.$1.cli" 15
		show_file "$LOG/$name.$1.srv" 8
		return 1
	fi
	[ "$n" -gt 0 ]
}

wait_runs() {	# NAME N SECS: NAME has done at least N runs
	local end=$((SECONDS + $3))
	while [ "$(runs "$1")" -lt "$2" ]; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.5
	done
}

wait_ok_run() {	# NAME N SECS: a run of NAME from the Nth on passed
	local end=$((SECONDS + $3))
	until awk -v n="$2" '$1 >= n && $2 == 0 && $3 == 0 { f = 1 } END { exit !f }' \
		"$LOG/$1.runs"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.5
	done
}

stop_loops() {
	touch "$STOP"
	wait "${LOOPS[@]}"
	LOOPS=()
	rm -f "$STOP"
}

port_is() {	# DEV STATE: the port's state, as rdma link prints it
	rdma link show "$1/1" 2>/dev/null | grep -q " state $2 "
}

# The steady pair: three loops, three QPs (and rdma_cm's) at a time.
RC=("$RC_TEST" -v --port @PORT@ --timeout 18)
start_loop order "$NS_B" "$NS_A" 19000 \
	"${RC[@]}" --dev srnic1 --gid-index "$GB" --server --gens "$GENS" order -- \
	"${RC[@]}" --dev srnic0 --gid-index "$GA" --connect "$AB4" --gens "$GENS" order
start_loop integrity "$NS_B" "$NS_A" 19500 \
	"${RC[@]}" --dev srnic1 --gid-index "$GB" --server --bytes "$BYTES" integrity -- \
	"${RC[@]}" --dev srnic0 --gid-index "$GA" --connect "$AB4" --bytes "$BYTES" integrity
start_loop rping "$NS_B" "$NS_A" 20000 \
	rping -s -V -a "$AB4" -p @PORT@ -C "$PINGS" -- \
	rping -c -V -a "$AB4" -p @PORT@ -C "$PINGS"
# The churn pair.
start_loop churn "$NS_D" "$NS_C" 20500 \
	rping -s -V -a "$CD4" -p @PORT@ -C $((PINGS / 4 + 1)) -- \
	rping -c -V -a "$CD4" -p @PORT@ -C $((PINGS / 4 + 1))
T0=$(date +%s)
PART=$((SECS / 3))
wait_runs churn 1 $((T / 2))
sleep "$PART"

# --- the churn -------------------------------------------------------------------

flap() {	# NS DEV DEVICE SECS: DEV down for SECS, up; DEVICE's port follows
	ip -n "$1" link set "$2" down
	wait_until 10 port_is "$3" DOWN || return 1
	sleep "$4"
	ip -n "$1" link set "$2" up
	wait_until 10 port_is "$3" ACTIVE
}
flaps() {
	local _
	for _ in 1 2 3; do
		flap "$NS_C" "$VC" srnic2 1 || return 1
		sleep 2
	done
}
n=$(runs churn)
ktap_test_result "churn pair: netdev down and up 3 times under rping, port follows" flaps
ktap_test_result "churn pair: rping runs again after the flaps" \
	wait_ok_run churn "$n" 120

relink() {
	timeout 60 rdma link delete srnic2 && ! rdma_dev_exists srnic2 &&
		srnic_link_add "$NS_C" srnic2 "$VC"
}
sleep 2
ktap_test_result "churn pair: rdma link delete srnic2 under traffic, add it again" relink
n=$(runs churn)
ktap_test_result "churn pair: rping runs again on the new srnic2" \
	wait_ok_run churn "$n" 120

# A namespace deleted with a device whose QPs carry traffic. The device
# srnic4 sits on NS_E's end of a veth to NS_D (srnic5 on NS_D's end); the
# processes using both live in NS_D, so NS_E has none to keep it alive.
nsdel() {
	local ge g5 spid cpid rc5=0
	setup_ns NS_E || return 1
	setup_veth_pair "$NS_E" "$NS_D" || return 1
	srnic_link_add "$NS_E" srnic4 "$VETH_A" &&
		srnic_link_add "$NS_D" srnic5 "$VETH_B" || return 1
	ge=$(srnic_gid_wait srnic4 "$VETH_A_IP4") &&
		g5=$(srnic_gid_wait srnic5 "$VETH_B_IP4") || return 1
	ip netns exec "$NS_D" ip link set lo up
	ip netns exec "$NS_D" timeout -k 5 "$T" "$RC_TEST" -v --port 21000 \
		--dev srnic5 --gid-index "$g5" --server --cq-wait 10 \
		--gens 1000000 order \
		>"$LOG/nsdel.srv" 2>&1 &
	spid=$!
	wait_until 120 server_listening "$NS_D" 21000 || return 1
	ip netns exec "$NS_D" timeout -k 5 "$T" "$RC_TEST" -v --port 21000 \
		--dev srnic4 --gid-index "$ge" --connect 127.0.0.1 --cq-wait 10 \
		--gens 1000000 order >"$LOG/nsdel.cli" 2>&1 &
	cpid=$!
	wait_until 30 grep -q "peer qpn" "$LOG/nsdel.cli" || return 1
	sleep 3
	ip netns del "$NS_E"
	# The namespace is torn down by a work item: slow on the debug kernel.
	wait_until 120 eval '! rdma_dev_exists srnic4' || {
		ktap_print_msg "srnic4 still there 120 s after its namespace went"
		return 1
	}
	# The client's device is gone: it fails; the server follows.
	wait_until 60 eval '! kill -0 $cpid 2>/dev/null' || {
		ktap_print_msg "the client did not end within 60 s"
		return 1
	}
	wait "$cpid" && { ktap_print_msg "the client passed?"; return 1; }
	timeout 60 tail --pid="$spid" -f /dev/null
	kill "$spid" 2>/dev/null
	wait "$spid" || rc5=$?
	ktap_print_msg "client: $(tail -n 2 "$LOG/nsdel.cli" | tr '\n' ' ')"
	ktap_print_msg "server exit $rc5: $(tail -n 1 "$LOG/nsdel.srv")"
	# srnic5's netdev, the veth's other end, went with the namespace.
	wait_until 120 eval '! rdma_dev_exists srnic5'
}
ktap_test_result "namespace deleted with a device under traffic: the device goes, its processes end" nsdel

# rdma_rxe beside srnic: load, rping -V to srnic, delete its device.
rxe() {
	local rpid rrc=0
	modprobe rdma_rxe || return 1
	setup_veth_pair - "$NS_D" || return 1
	rdma link add rxe0 type rxe netdev "$VETH_A" &&
		srnic_link_add "$NS_D" srnic6 "$VETH_B" || return 1
	wait_until 10 rdma_gid_index rxe0 "$VETH_A_IP4" >/dev/null &&
		wait_until 10 rdma_gid_index srnic6 "$VETH_B_IP4" >/dev/null ||
		return 1
	ip netns exec "$NS_D" timeout -k 5 120 rping -s -V -a "$VETH_B_IP4" \
		-p 21500 -C 100 >"$LOG/rxe.srv" 2>&1 &
	rpid=$!
	wait_until 120 server_listening "$NS_D" 21500 &&
		timeout -k 5 120 rping -c -V -a "$VETH_B_IP4" -p 21500 -C 100 \
		>"$LOG/rxe.cli" 2>&1 || rrc=$?
	wait "$rpid" || rrc=$((rrc + 1000))
	ktap_print_msg "rdma_rxe -> srnic6: rping -V -C 100 exit $rrc"
	[ $rrc -eq 0 ] || { show_file "$LOG/rxe.cli" 5; return 1; }
	timeout 60 rdma link delete rxe0 && timeout 60 rdma link delete srnic6
}
if modprobe -n rdma_rxe 2>/dev/null; then
	ktap_test_result "rdma_rxe loaded beside srnic: rping -V from rxe0 to srnic, rxe0 deleted" rxe
else
	ktap_test_skip "rdma_rxe loaded beside srnic" "rdma_rxe not available"
fi

# The steady pair's own netdev down for a second: its QPs retransmit
# (ACK timeout 18: about 1 s a try, 7 tries; rdma_cm's QPs alike).
# The loops start no new connection meanwhile (rdma_cm's address
# resolution fails while the link is down: that is not the transport's).
n=$(runs order)
touch "$HOLD"
# A client that started just before the hold connects first: rdma_cm's
# address resolution and connection take well under this on a stock
# kernel, and what is connected then rides the flap out.
sleep 5
ktap_test_result "steady pair: netdev down for 1 s, up again" \
	flap "$NS_A" "$VA" srnic0 1
wait_until 10 ip netns exec "$NS_A" ping -c 1 -W 1 "$AB4" >/dev/null
rm -f "$HOLD"
ktap_test_result "steady pair: an order run ends after the flap" \
	wait_runs order $((n + 1)) $((T / 2))

# The rest of the time, then stop.
sleep $((SECS - PART))
stop_loops
ktap_print_msg "steady traffic for $(($(date +%s) - T0)) s"
ktap_test_result "steady order runs (Write x 4 + Write with Immediate, every byte): all passed" \
	steady_ok order
ktap_test_result "steady integrity runs (Writes read back): all passed" \
	steady_ok integrity
ktap_test_result "steady rping -V runs: all passed" steady_ok rping
churn_bad() {
	ktap_print_msg "churn: $(runs churn) runs, $(awk '$2 == 0 && $3 == 0' "$LOG/churn.runs" | wc -l) passed"
	! bad_data churn && ! bad_data order && ! bad_data integrity &&
		! bad_data rping
}
ktap_test_result "no run of any loop reported wrong data" churn_bad

# --- rdma_rxe unloaded under the steady pair's traffic --------------------------

unload_rxe() {
	local cpid spid
	ip netns exec "$NS_B" timeout -k 5 "$T" rping -s -V -a "$AB4" -p 22000 \
		-C 1000000 >"$LOG/unload.srv" 2>&1 &
	spid=$!
	wait_until 120 server_listening "$NS_B" 22000 || return 1
	ip netns exec "$NS_A" timeout -k 5 "$T" rping -c -V -a "$AB4" -p 22000 \
		-C 1000000 >"$LOG/unload.cli" 2>&1 &
	cpid=$!
	sleep 3
	kill -0 "$cpid" || { ktap_print_msg "rping ended early"; return 1; }
	timeout 120 rmmod rdma_rxe || { ktap_print_msg "rmmod rdma_rxe failed"; return 1; }
	wait_until 30 eval '! rdma_dev_exists srnic0 && ! rdma_dev_exists srnic1' ||
		{ ktap_print_msg "srnic devices still there"; return 1; }
	wait_until 60 eval '! kill -0 $cpid 2>/dev/null && ! kill -0 $spid 2>/dev/null' || {
		ktap_print_msg "rping still running 60 s after its device went"
		return 1
	}
	wait "$cpid"
	wait "$spid"
	! grep -h "data mismatch" "$LOG"/unload.*
}
if lsmod | grep -q '^rdma_rxe '; then
	ktap_test_result "rmmod rdma_rxe under traffic: srnic's devices go (driver id), rping ends, no wrong data" \
		unload_rxe
else
	ktap_test_skip "rmmod rdma_rxe under traffic" "rdma_rxe not loaded"
fi

again() {
	local ga gb srv
	for d in srnic0:"$NS_A":"$VA" srnic1:"$NS_B":"$VB" srnic2:"$NS_C":"$VC" \
		 srnic3:"$NS_D":"$VD"; do
		IFS=: read -r dev ns nd <<<"$d"
		rdma_dev_exists "$dev" || srnic_link_add "$ns" "$dev" "$nd" || return 1
	done
	ga=$(srnic_gid_wait srnic0 "$AA4") && gb=$(srnic_gid_wait srnic1 "$AB4") ||
		return 1
	ip netns exec "$NS_B" timeout -k 5 "$T" "${RC[@]//@PORT@/22500}" --dev srnic1 \
		--gid-index "$gb" --server --gens "$GENS" order >"$LOG/again.srv" 2>&1 &
	srv=$!
	wait_until 120 server_listening "$NS_B" 22500 &&
		ip netns exec "$NS_A" timeout -k 5 "$T" "${RC[@]//@PORT@/22500}" \
		--dev srnic0 --gid-index "$ga" --connect "$AB4" --gens "$GENS" order \
		>"$LOG/again.cli" 2>&1 && wait "$srv" ||
		{ show_file "$LOG/again.cli" 10; return 1; }
	ktap_print_msg "$(tail -n 1 "$LOG/again.cli")"
}
ktap_test_result "devices created again: an order run passes" again

for d in srnic0 srnic1 srnic2 srnic3; do
	rdma_dev_exists "$d" && timeout 60 rdma link delete "$d"
done
ktap_test_result "rmmod srnic" srnic_unload
ktap_kernel_log_clean
ktap_finished
