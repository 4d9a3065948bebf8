#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel RDMA users over srnic: srnic_kqp.ko (selftests/kmod/srnic_kqp.c)
# drives two kernel RC QPs of one srnic device, connected to each other
# over the device's own RoCEv2 GID, through the kernel verbs API only:
# send/receive with scatter/gather, immediate data, RDMA Write, Write with
# Immediate, Read, atomics, inline and unsignaled sends, fast registration
# (IB_WR_REG_MR, IB_WR_LOCAL_INV, Send with Invalidate, registering a valid
# MR), and the error paths a kernel caller sees (-EINVAL, -ENOMEM, remote
# access errors, flushes). The module runs every check inside module_init and logs one
# "srnic_kqp: ok N - ..." or "srnic_kqp: not ok N - ..." line per check;
# each becomes one KTAP line here, its "srnic_kqp: # ..." lines
# diagnostics. insmod succeeds only if every check passed.
#
# Set-up: srnic0 on VETH_A in NS_A (srnic_two_hosts), created inside NS_A;
# the module is loaded from NS_A once srnic0 has its IPv4 RoCEv2 GID.
#
# Environment:
#	SRNIC_KQP_KO	the module (build/$(uname -r)/srnic_kqp.ko)
. "$(dirname "$0")/srnic_lib.sh"

KQP_KO=${SRNIC_KQP_KO:-$SRNIC_TOP/build/$(uname -r)/srnic_kqp.ko}
# The module's checks, set-up included: kqp_checks[] in srnic_kqp.c + 1.
KQP_CHECKS=22
KMEMLEAK=/sys/kernel/debug/kmemleak

srnic_require
[ -f "$KQP_KO" ] || ktap_skip_rest "no $KQP_KO (run make)"
ktap_print_header
ktap_set_plan $((KQP_CHECKS + 9))

dmesg_mark
[ -w "$KMEMLEAK" ] && echo clear >"$KMEMLEAK" 2>/dev/null
ktap_test_result "insmod srnic.ko" srnic_load || srnic_bail "no module"
defer srnic_unload
srnic_two_hosts || ktap_skip_rest "cannot create namespaces/veth"

srnic_link_up "$NS_A" srnic0 "$VETH_A"

idx=$(srnic_gid_wait srnic0 "$VETH_A_IP4") &&
	ktap_test_pass "srnic0 has the RoCEv2 GID of $VETH_A_IP4 (index $idx)" ||
	{ ktap_test_fail "srnic0 has the RoCEv2 GID of $VETH_A_IP4"; srnic_bail "no GID"; }

# --- the module ---------------------------------------------------------------

defer rmmod srnic_kqp
kmark=$(dmesg_now)
start=$(date +%s)
out=$(ip netns exec "$NS_A" insmod "$KQP_KO" dev=srnic0 2>&1)
rc=$?
ktap_print_msg "insmod srnic_kqp.ko dev=srnic0: exit $rc after $(($(date +%s) - start)) s${out:+: $out}"
# The module's lines, without the timestamps and the prefix.
klog=$(dmesg_since "$kmark" | sed -n 's/^\[[^]]*\] //; s/^srnic_kqp: //p')
printf '%s\n' "$klog" >"${SRNIC_OUT:-$SRNIC_TMP}/srnic_kqp.log" 2>/dev/null

next=1
while IFS= read -r l; do
	case $l in
	"# "*)
		ktap_print_msg "srnic_kqp: ${l#\# }" ;;
	"1.."*)
		[ "${l#1..}" = "$KQP_CHECKS" ] ||
			ktap_print_msg "srnic_kqp plans ${l#1..} checks, this script $KQP_CHECKS" ;;
	"ok "*" - "* | "not ok "*" - "*)
		res=${l%% - *} desc=${l#* - }
		num=${res##* }
		while [ "$next" -lt "$num" ] && [ "$next" -le "$KQP_CHECKS" ]; do
			ktap_test_fail "srnic_kqp check $next: not reported"
			next=$((next + 1))
		done
		if [ "${res% *}" = ok ]; then
			ktap_test_pass "srnic_kqp: $desc"
		else
			ktap_test_fail "srnic_kqp: $desc"
		fi
		next=$((num + 1)) ;;
	*)
		[ -z "$l" ] || ktap_print_msg "srnic_kqp: $l" ;;
	esac
done <<<"$klog"
while [ "$next" -le "$KQP_CHECKS" ]; do
	ktap_test_fail "srnic_kqp check $next: not run"
	next=$((next + 1))
done

[ $rc -eq 0 ] && ktap_test_pass "insmod srnic_kqp.ko dev=srnic0 succeeds (every check passed)" ||
	ktap_test_fail "insmod srnic_kqp.ko dev=srnic0 succeeds (every check passed)"
if lsmod | grep -q '^srnic_kqp '; then
	ktap_test_result "rmmod srnic_kqp" rmmod srnic_kqp
else
	ktap_test_skip "rmmod srnic_kqp" "not loaded"
fi

# --- teardown -----------------------------------------------------------------

ktap_test_result "rdma link delete srnic0" rdma link delete srnic0
ktap_test_result "rmmod srnic" srnic_unload

# kmemleak (the debug test kernel): nothing may leak. It reports objects
# older than 5 s only. Under scripts/kunit-guest.sh, which scans after
# the tests and tells whose each leak is (SRNIC_KMEMLEAK_RUNNER_SCANS),
# that scan is the verdict: a second one here would cost 20 s for nothing.
if [ -n "${SRNIC_KMEMLEAK_RUNNER_SCANS:-}" ]; then
	ktap_test_skip "kmemleak: no new leak" "the runner scans after the tests"
elif [ -w "$KMEMLEAK" ] && sleep 6 && echo scan 2>/dev/null >"$KMEMLEAK"; then
	leaks=$(cat "$KMEMLEAK")
	[ -z "$leaks" ] && ktap_test_pass "kmemleak: no new leak" ||
		{ printf '%s\n' "$leaks" | head -n 60 | sed 's/^/# /'
		  ktap_test_fail "kmemleak: no new leak"; }
else
	ktap_test_skip "kmemleak: no new leak" "no $KMEMLEAK, or kmemleak off"
fi

ktap_kernel_log_clean
ktap_finished
