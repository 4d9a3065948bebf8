#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The verbs sequence fuzzer: srnic_vfuzz's worker processes run random
# sequences of every verb on every object of srnic0 (in a namespace,
# loopback through its own GID), legal and not, destroys mid-traffic
# and ring scribbles among them. Its three TAP lines (no worker crashed
# or hung, no object destroyed while in use, a fresh RC pair still moves
# 1 MiB right) are KTAP lines here; then every object of the device is
# gone again (rdma resource), the device deletes, the module unloads
# and the kernel log is clean (on the debug kernel: KASAN, lockdep and,
# through scripts/kunit.sh, kmemleak).
#
# Environment: SRNIC_VFUZZ_SECONDS (300, as make check-full runs it; make
# check runs 40 on the first stock kernel, 20 on the second, 45 on the
# debug kernel), SRNIC_VFUZZ_PROCS (worker processes
# side by side, 2), SRNIC_VFUZZ_SEED (replay a run: the seed is printed),
# SRNIC_VFUZZ_OPS (instead of a time, that many actions: with the seed,
# the same lives as a run that did that many, on a slower machine too).
. "$(dirname "$0")/srnic_lib.sh"

SECS=${SRNIC_VFUZZ_SECONDS:-300}
PROCS=${SRNIC_VFUZZ_PROCS:-2}
VFUZZ=$SRNIC_BIN/srnic_vfuzz

srnic_require
require_cmd timeout
[ -x "$VFUZZ" ] || ktap_skip_rest "no $VFUZZ (run make selftests-build)"
ktap_print_header
ktap_set_plan 9

dmesg_mark
ktap_test_result "insmod srnic.ko" srnic_load || srnic_bail "no module"
defer srnic_unload
srnic_two_hosts || ktap_skip_rest "cannot create namespaces/veth"
srnic_link_up "$NS_A" srnic0 "$VETH_A"
GID=$(srnic_gid_wait srnic0 "$VETH_A_IP4") || srnic_bail "no GID"

# The device's objects before (the core's own: QP1's), to compare after.
res_count() {
	rdma resource show srnic0 2>/dev/null | sed 's/^[0-9]*: srnic0: //'
}
before=$(res_count)

seed=()
[ -n "${SRNIC_VFUZZ_SEED:-}" ] && seed=(--seed "$SRNIC_VFUZZ_SEED")
amount=(--seconds "$SECS")
[ -n "${SRNIC_VFUZZ_OPS:-}" ] && amount=(--ops "$SRNIC_VFUZZ_OPS")
ktap_print_msg "srnic_vfuzz: $SECS s, $PROCS processes"
# Its lines as they come (a wedged kernel still shows how far it got);
# the seed comes first. A verb that never returns ends its worker in
# 120 s, one stuck in the kernel is reported in 240 s: the timeout is
# the last resort.
ktap_from_tap 3 "srnic_vfuzz point" < <(timeout $((SECS + 600)) "$VFUZZ" --dev srnic0 --gid-index "$GID" \
	"${amount[@]}" --procs "$PROCS" "${seed[@]}" 2>&1
	echo "$?" >"$SRNIC_TMP/rc")
rc=$(cat "$SRNIC_TMP/rc" 2>/dev/null || echo 1)
[ "$rc" -eq 0 ] || ktap_print_msg "srnic_vfuzz exit $rc"

# Every process has exited: what the fuzz created is gone.
after=$(res_count)
ktap_print_msg "resources before: $before"
ktap_print_msg "resources after:  $after"
if [ -n "$after" ] && [ "$after" = "$before" ]; then
	ktap_test_pass "rdma resource: every object of the fuzz is gone"
else
	ktap_test_fail "rdma resource: every object of the fuzz is gone"
fi

ktap_test_result "rdma link delete srnic0" rdma link delete srnic0
ktap_test_result "rmmod srnic" srnic_unload
ktap_kernel_log_clean
ktap_finished
