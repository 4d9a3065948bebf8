#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srnic as an installed driver (make install, make dkms or the srnic-dkms
# package on the host whose root this guest sees): modinfo finds it under
# /lib/modules/KVER/updates/ with its version; "rdma link add ... type
# srnic" loads it by itself (no insmod: the kernel asks modprobe for
# rdma-link-srnic, the module's alias); two devices between namespaces
# pass ibv_rc_pingpong traffic; the devices delete, modprobe -r unloads,
# the kernel log stays clean. Skips when srnic is not installed.
#
# Environment: SRNIC_AUTOLOAD_VERSION, the version that must be installed
# (scripts/package-test.sh passes scripts/version.sh's).
. "$(dirname "$0")/srnic_lib.sh"

require_root
require_cmd rdma ip modinfo modprobe ibv_rc_pingpong timeout
k=$(uname -r)
file=$(modinfo -F filename srnic 2>/dev/null) ||
	ktap_skip_rest "srnic is not installed for $k (make install, make dkms or the srnic-dkms package)"
ktap_print_header
ktap_set_plan 8
dmesg_mark

ver=$(modinfo -F version srnic)
want=${SRNIC_AUTOLOAD_VERSION:-$ver}
ktap_print_msg "installed: $file, version $ver"
if [[ $file == /lib/modules/$k/updates/* ]] && [ "$ver" = "$want" ]; then
	ktap_test_pass "modinfo srnic: under /lib/modules/$k/updates, version $ver"
else
	ktap_test_fail "modinfo srnic: under /lib/modules/$k/updates, version $want"
fi
if lsmod | grep -q '^srnic '; then
	ktap_test_fail "srnic is not loaded before the first rdma link add"
else
	ktap_test_pass "srnic is not loaded before the first rdma link add"
fi
defer eval '! lsmod | grep -q "^srnic " || modprobe -r srnic'

srnic_two_hosts || ktap_skip_rest "cannot create namespaces/veth"
srnic_link_up "$NS_A" srnic0 "$VETH_A"
if lsmod | grep -q '^srnic ' && [ "$(cat /sys/module/srnic/version)" = "$want" ]; then
	ktap_test_pass "rdma link add loaded srnic by itself (/sys/module/srnic/version $want)"
else
	ktap_test_fail "rdma link add loaded srnic by itself (/sys/module/srnic/version $want)"
fi
srnic_link_up "$NS_B" srnic1 "$VETH_B"

ga=$(srnic_gid_wait srnic0 "$VETH_A_IP4") &&
	gb=$(srnic_gid_wait srnic1 "$VETH_B_IP4") ||
	ktap_print_msg "no RoCEv2 GID of $VETH_A_IP4 or $VETH_B_IP4"
srnic_run_pair "ibv_rc_pingpong -n 200 -s 65536 between srnic0 and srnic1" 7473 \
	ibv_rc_pingpong -d srnic1 -g "${gb:-1}" -p 7473 -n 200 -s 65536 -c -- \
	ibv_rc_pingpong -d srnic0 -g "${ga:-1}" -p 7473 -n 200 -s 65536 -c "$VETH_B_IP4"

ktap_test_result "rdma link delete srnic0 and srnic1, modprobe -r srnic" \
	eval 'rdma link delete srnic0 && rdma link delete srnic1 && modprobe -r srnic'
ktap_kernel_log_clean
ktap_finished
