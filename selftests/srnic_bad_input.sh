#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad input and teardown: every refusal is a clear -errno plus a kernel log
# line that says why, loses nothing and leaves no splat.
#  - rdma link add: missing netdev, non-Ethernet netdev (lo), the same
#    netdev twice, a name in use, UDP 4791 taken (rdma_rxe loaded)
#  - the pool and gate tunables in sysfs: bad values refused (EINVAL),
#    nothing changed; good ones read back
#  - verbs arguments out of range (srnic_vtest limits), object limits
#    exhausted twice (nothing leaked by the refusals)
#  - a user context sees its link go down and up (IB_EVENT_PORT_ERR,
#    IB_EVENT_PORT_ACTIVE)
#  - the netdev deleted under a live device with a user context: the device
#    goes, the process gets IB_EVENT_DEVICE_FATAL; a namespace deleted
#    under a live device
#  - rmmod with devices present; rmmod while a process holds a context
#  - rdma_rxe loaded, used and unloaded beside live srnic devices
. "$(dirname "$0")/srnic_lib.sh"

srnic_require
VTEST=$SRNIC_BIN/srnic_vtest
[ -x "$VTEST" ] || ktap_skip_rest "no $VTEST (run make selftests-build)"
ktap_print_header
ktap_set_plan 25

dmesg_mark
# Small object limits, so the test can exhaust each one.
ktap_test_result "insmod srnic.ko with small object limits" \
	srnic_load max_pd=8 max_cq=8 max_qp=8 max_mr=8 max_srq=4 max_ah=8 ||
	srnic_bail "no module"
defer srnic_unload
srnic_two_hosts || srnic_bail "cannot create namespaces/veth"
A1=$VETH_A B1=$VETH_B A1_IP4=$VETH_A_IP4

# link_add_refused DESC LOGPATTERN NS NAME NETDEV
link_add_refused() {
	local desc=$1 pat=$2 out rc=0 mark
	shift 2
	mark=$(dmesg_now)
	out=$(srnic_link_add "$@" 2>&1) || rc=$?
	ktap_print_msg "rdma: $out"
	if [ $rc -eq 0 ]; then
		rdma link delete "$2" 2>/dev/null
		ktap_test_fail "$desc: accepted"
		return
	fi
	if rdma_dev_exists "$2" && [ "$2" != srnic0 ]; then
		ktap_test_fail "$desc: refused but $2 exists"
		return
	fi
	if [ -n "$pat" ] && ! dmesg_since "$mark" | grep -q "$pat"; then
		ktap_print_msg "no kernel log line matching '$pat'"
		ktap_test_fail "$desc"
		return
	fi
	[ -n "$pat" ] && ktap_print_msg "log: $(dmesg_since "$mark" | grep "$pat")"
	ktap_test_pass "$desc"
}

link_add_refused "link add on a missing netdev" "" "$NS_A" srnicx nosuch0
link_add_refused "link add on lo (not Ethernet)" "lo is not an Ethernet device" \
	"$NS_A" srnicx lo
srnic_link_add "$NS_A" srnic0 "$A1" || srnic_bail "no device"
link_add_refused "link add twice on one netdev" "$A1 already has RDMA device srnic0" \
	"$NS_A" srnic1 "$A1"
link_add_refused "link add with a name in use" "an RDMA device of that name exists" \
	"$NS_B" srnic0 "$B1"

wait_until 10 rdma_gid_index srnic0 "$A1_IP4" >/dev/null
out=$(ip netns exec "$NS_A" "$VTEST" limits srnic0 2>&1)
rc=$?
printf '%s\n' "$out" > "${SRNIC_OUT:-/tmp}/srnic_vtest-limits.tap"
printf '%s\n' "$out" | sed 's/^/# /'
nok=$(grep -c '^ok' <<<"$out")
nfail=$(grep -c '^not ok' <<<"$out")
[ $rc -eq 0 ] && [ "$nfail" -eq 0 ] && [ "$nok" -gt 50 ] &&
	ktap_test_pass "verbs arguments: srnic_vtest limits ($nok checks)" ||
	ktap_test_fail "verbs arguments: srnic_vtest limits ($nfail of $((nok + nfail)) failed)"

# The pool and gate tunables: each bad value is refused with EINVAL and
# changes nothing; good values are taken and read back.
tunables() {
	local d=/sys/class/infiniband/srnic0 kv k v before err bad=0
	for kv in "prefetch_slots 0" "prefetch_slots 2000000" \
		  "prefetch_slots 12abc" "prefetch_per_qp_cap 0" \
		  "prefetch_per_qp_cap 5000" "prefetch_lookahead 0" \
		  "prefetch_fence_ahead -1" "tx_gate_policy fifo" \
		  "tx_gate_policy drr2" "doorbell_run_max 2147483649" \
		  "doorbell_run_max -1" "doorbell_run_max 4k"; do
		read -r k v <<<"$kv"
		before=$(cat "$d/$k")
		err=$( { echo "$v" >"$d/$k"; } 2>&1)
		if ! grep -q "Invalid argument" <<<"$err" ||
		   [ "$(cat "$d/$k")" != "$before" ]; then
			ktap_print_msg "$k <- '$v': '$err', now $(cat "$d/$k") (was $before)"
			bad=1
		fi
	done
	for kv in "prefetch_slots 100" "prefetch_per_qp_cap 8" \
		  "prefetch_lookahead 16" "prefetch_fence_ahead 0" \
		  "tx_gate_policy strict" "tx_gate_policy rr" \
		  "tx_gate_policy drr" "prefetch_fence_ahead 4" \
		  "prefetch_lookahead 64" "prefetch_per_qp_cap 64" \
		  "prefetch_slots 1024" "doorbell_run_max 0" \
		  "doorbell_run_max 2147483648" "doorbell_run_max 4096"; do
		read -r k v <<<"$kv"
		if ! echo "$v" >"$d/$k" || [ "$(cat "$d/$k")" != "$v" ]; then
			ktap_print_msg "$k <- $v: refused or reads $(cat "$d/$k")"
			bad=1
		fi
	done
	ktap_print_msg "$(for k in prefetch_slots prefetch_per_qp_cap \
		prefetch_lookahead prefetch_fence_ahead tx_gate_policy \
		doorbell_run_max; do
		printf '%s=%s ' "$k" "$(cat "$d/$k")"; done)"
	return $bad
}
ktap_test_result "sysfs tunables: bad values refused (EINVAL), good ones read back" \
	tunables

# UDP 4791: rdma_rxe binds it in the initial namespace when it loads.
if modprobe rdma_rxe 2>/dev/null; then
	setup_veth_pair - "$NS_B" || srnic_bail "veth"
	mark=$(dmesg_now)
	if rdma link add srnici type srnic netdev "$VETH_A" 2>/dev/null; then
		rdma link delete srnici
		ktap_test_fail "link add in a namespace where UDP 4791 is taken: accepted"
	else
		log=$(dmesg_since "$mark" | grep "UDP port 4791 is already in use")
		ktap_print_msg "log: $log"
		[ -n "$log" ] && ! rdma_dev_exists srnici &&
			ktap_test_pass "link add where UDP 4791 is taken (rdma_rxe): refused, reason logged" ||
			ktap_test_fail "link add where UDP 4791 is taken (rdma_rxe): refused, reason logged"
	fi
	rmmod rdma_rxe
	ip link del "$VETH_A" 2>/dev/null
	# Unloading rdma_rxe took srnic0 with it (see the end of the test).
	rdma_dev_exists srnic0 || srnic_link_add "$NS_A" srnic0 "$A1"
else
	ktap_test_skip "link add where UDP 4791 is taken" "rdma_rxe not available"
fi

# A process holds a context; its netdev goes away.
setup_ns NS_C
setup_veth_pair "$NS_C" "$NS_B"
srnic_link_add "$NS_C" srnicc "$VETH_A" || srnic_bail "srnicc"
hold_out=$SRNIC_TMP/hold.out
ip netns exec "$NS_C" "$VTEST" hold srnicc 60 >"$hold_out" 2>&1 &
hold=$!
wait_until 20 grep -q ready "$hold_out" || ktap_print_msg "holder: $(cat "$hold_out")"
# Port events first: the link goes down and comes back.
ip -n "$NS_C" link set "$VETH_A" down
wait_until 20 grep -q "event port error" "$hold_out" &&
	ktap_test_pass "link down: the process got IB_EVENT_PORT_ERR" ||
	ktap_test_fail "link down: the process got IB_EVENT_PORT_ERR"
ip -n "$NS_C" link set "$VETH_A" up
# One event per change: the carrier's later NETDEV_CHANGE adds none.
wait_until 20 grep -q "event port active" "$hold_out" && sleep 2 &&
	[ "$(grep -c "event port active" "$hold_out")" -eq 1 ] &&
	ktap_test_pass "link up: the process got IB_EVENT_PORT_ACTIVE, once" ||
	ktap_test_fail "link up: the process got IB_EVENT_PORT_ACTIVE, once"
ip -n "$NS_C" link del "$VETH_A"
wait_until 30 eval '! rdma_dev_exists srnicc' &&
	ktap_test_pass "netdev deleted under a live device: device removed" ||
	ktap_test_fail "netdev deleted under a live device: device removed"
wait_until 30 eval '! kill -0 $hold 2>/dev/null'
wait "$hold"
rc=$?
ktap_print_msg "holder: $(tr '\n' ' ' <"$hold_out")"
[ $rc -eq 0 ] && grep -q "(DEVICE_FATAL)" "$hold_out" &&
	grep -q closed "$hold_out" &&
	ktap_test_pass "the process got IB_EVENT_DEVICE_FATAL and closed cleanly" ||
	ktap_test_fail "the process got IB_EVENT_DEVICE_FATAL and closed cleanly"

# A namespace deleted under a live device (its veth goes with it, and
# the namespace's UDP sockets must be gone before the namespace is).
setup_ns NS_D
setup_veth_pair "$NS_D" "$NS_B"
srnic_link_add "$NS_D" srnicd "$VETH_A" || srnic_bail "srnicd"
ip netns del "$NS_D"
wait_until 30 eval '! rdma_dev_exists srnicd' &&
	ktap_test_pass "namespace deleted under a live device: device removed" ||
	ktap_test_fail "namespace deleted under a live device: device removed"

# rmmod while a process holds a context: busy until it exits.
srnic_link_add "$NS_B" srnic2 "$B1" || srnic_bail "srnic2"
ip netns exec "$NS_B" "$VTEST" hold srnic2 60 >"$hold_out" 2>&1 &
hold=$!
wait_until 20 grep -q ready "$hold_out"
if rmmod srnic 2>/dev/null; then
	ktap_test_fail "rmmod while a process holds a context: refused"
	srnic_bail "module gone"
fi
ktap_print_msg "$(rdma dev)"
rdma_dev_exists srnic2 && rdma_dev_exists srnic0 &&
	ktap_test_pass "rmmod while a process holds a context: refused, devices intact" ||
	ktap_test_fail "rmmod while a process holds a context: refused, devices intact"
kill "$hold"
wait "$hold" 2>/dev/null
wait_until 10 eval '[ "$(cat /sys/module/srnic/refcnt)" = 0 ]'
ktap_test_result "rmmod after the process exited, with 2 devices present" rmmod srnic
! rdma_dev_exists srnic0 && ! rdma_dev_exists srnic2 &&
	ktap_test_pass "rmmod removed every device" ||
	ktap_test_fail "rmmod removed every device"

# rdma_rxe beside live srnic devices: load, use, unload.
srnic_load || srnic_bail "reload"
srnic_link_add "$NS_A" srnic0 "$A1" || srnic_bail "srnic0 again"
srnic_link_add "$NS_B" srnic2 "$B1" || srnic_bail "srnic2 again"
if modprobe rdma_rxe 2>/dev/null; then
	setup_veth_pair - "$NS_C" || srnic_bail "veth"
	ktap_test_result "rdma_rxe: rdma link add rxe0 beside srnic devices" \
		rdma link add rxe0 type rxe netdev "$VETH_A"
	wait_until 10 rdma_gid_index rxe0 "$VETH_A_IP4" >/dev/null
	ktap_test_result "rdma_rxe: rxe0 usable (objects through the rxe provider)" \
		"$VTEST" hold rxe0 0
	# rdma_rxe's netdev notifier sees srnic's netdevs' events.
	ip -n "$NS_A" link set "$A1" down; ip -n "$NS_A" link set "$A1" up
	ip -n "$NS_A" link set "$A1" mtu 4000
	rdma_dev_exists srnic0 && rdma_dev_exists srnic2 && rdma_dev_exists rxe0 &&
		ktap_test_pass "netdev events beside rdma_rxe: all devices intact" ||
		ktap_test_fail "netdev events beside rdma_rxe: all devices intact"
	ktap_test_result "rdma link delete rxe0" rdma link delete rxe0
	ktap_test_result "rmmod rdma_rxe with srnic devices live" rmmod rdma_rxe
	# ib_unregister_driver(RDMA_DRIVER_RXE) takes srnic's devices too.
	! rdma_dev_exists srnic0 && ! rdma_dev_exists srnic2 &&
		ktap_test_pass "rmmod rdma_rxe removed the srnic devices cleanly (documented)" ||
		ktap_test_fail "rmmod rdma_rxe removed the srnic devices cleanly (documented)"
	srnic_link_add "$NS_A" srnic0 "$A1" &&
		ip netns exec "$NS_A" ibv_devinfo -d srnic0 >/dev/null &&
		ktap_test_pass "srnic creates devices again after rdma_rxe left" ||
		ktap_test_fail "srnic creates devices again after rdma_rxe left"
else
	for t in 1 2 3 4 5 6 7; do
		ktap_test_skip "rdma_rxe beside srnic ($t)" "rdma_rxe not available"
	done
fi
ktap_test_result "rmmod srnic" srnic_unload
ktap_kernel_log_clean
ktap_finished
