#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Hostile user space: srnic_hostile's cases, each an attacker writing the
# rings it shares with the kernel as no library would, beside a victim
# process whose own traffic is verified (both on srnic0, in a namespace,
# through the device's own GID). Each case is one KTAP line; after them,
# the kernel log must be clean and the module must unload.
#
# Environment: SRNIC_HOSTILE_ROUNDS (QPs of the sq-prod-random case, 1000;
# make check runs 250, 50 on the debug kernel).
. "$(dirname "$0")/srnic_lib.sh"

ROUNDS=${SRNIC_HOSTILE_ROUNDS:-1000}
HOSTILE=$SRNIC_BIN/srnic_hostile

srnic_require
require_cmd timeout
[ -x "$HOSTILE" ] || ktap_skip_rest "no $HOSTILE (run make selftests-build)"
ktap_print_header
ktap_set_plan 9

dmesg_mark
ktap_test_result "insmod srnic.ko" srnic_load || srnic_bail "no module"
srnic_two_hosts || ktap_skip_rest "cannot create namespaces/veth"
ktap_test_result "rdma link add srnic0 ($NS_A)" \
	srnic_link_add "$NS_A" srnic0 "$VETH_A" || srnic_bail "no device"
GID=$(srnic_gid_wait srnic0 "$VETH_A_IP4") || srnic_bail "no GID"

# srnic_hostile's TAP lines, one KTAP line each.
rc=0
# In the initial namespace: a namespace's sysfs has no hw_counters.
out=$(timeout 600 "$HOSTILE" --dev srnic0 \
	--gid-index "$GID" --rounds "$ROUNDS" -v 2>&1) || rc=$?
ktap_from_tap 4 "srnic_hostile case" <<<"$out"
[ $rc -eq 0 ] || ktap_print_msg "srnic_hostile exit $rc"

ktap_test_result "rdma link delete srnic0" \
	ip netns exec "$NS_A" rdma link delete srnic0
ktap_test_result "rmmod srnic" srnic_unload
ktap_kernel_log_clean
ktap_finished
