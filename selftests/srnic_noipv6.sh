#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srnic on a host booted with ipv6.disable=1 (issue 18): no IPv6 socket
# can exist there, so srnic runs RoCEv2 over IPv4 alone. The module
# loads, "rdma link add" creates the device, the port has its IPv4 GID
# and no other, rdma_cm (rping -V, every byte checked) and verbs
# (ibv_rc_pingpong) traffic pass between two namespaces, and the device
# and module go away cleanly. Before the fix "rdma link add" failed with
# EAFNOSUPPORT. On a kernel with IPv6 this test skips: make check boots a
# guest with ipv6.disable=1 for it (SRNIC_NOIPV6_REQUIRED=1: fail, not
# skip, when IPv6 is enabled).
. "$(dirname "$0")/srnic_lib.sh"

srnic_require
require_cmd rping ibv_rc_pingpong timeout
if [ -d /proc/sys/net/ipv6 ]; then
	# make check's stage sets SRNIC_NOIPV6_REQUIRED=1: a skip there
	# would hide a guest that did not get ipv6.disable=1.
	if [ "${SRNIC_NOIPV6_REQUIRED:-0}" = 1 ]; then
		ktap_print_header
		ktap_set_plan 1
		ktap_test_fail "IPv6 is disabled (/proc/sys/net/ipv6 is there)"
		ktap_finished
	fi
	ktap_skip_rest "IPv6 is enabled here (boot with ipv6.disable=1)"
fi
ktap_print_header
ktap_set_plan 10

dmesg_mark
ktap_test_result "insmod srnic.ko" srnic_load || srnic_bail "no module"
defer srnic_unload
srnic_two_hosts || ktap_skip_rest "cannot create namespaces/veth"

srnic_link_up "$NS_A" srnic0 "$VETH_A"
srnic_link_up "$NS_B" srnic1 "$VETH_B"

ga=$(srnic_gid_wait srnic0 "$VETH_A_IP4") &&
	gb=$(srnic_gid_wait srnic1 "$VETH_B_IP4") &&
	ktap_test_pass "RoCEv2 GIDs of $VETH_A_IP4 ($ga) and $VETH_B_IP4 ($gb)" ||
	ktap_test_fail "RoCEv2 GIDs of $VETH_A_IP4 and $VETH_B_IP4"
# Besides the IPv4 one, only the default GID the RDMA core derives from
# the node GUID (fe80::/64, index 0): no IPv6 address, no IPv6 GID.
gids=$(ibv_devinfo -d srnic0 -v | sed -n 's/^[[:space:]]*GID\[ *[0-9]*\]:[[:space:]]*\([^,]*\), RoCE v2$/\1/p')
ktap_print_msg "srnic0's GIDs: ${gids//$'\n'/ }"
if [ "$(grep -vc -e '^fe80:' -e "^::ffff:$VETH_A_IP4\$" <<<"$gids")" -eq 0 ] &&
   [ "$(grep -c '^fe80:' <<<"$gids")" -le 1 ]; then
	ktap_test_pass "srnic0's GIDs: the default one and IPv4, no IPv6 address"
else
	ktap_test_fail "srnic0's GIDs: the default one and IPv4, no IPv6 address"
fi

srnic_run_pair "rping -V -C 200 over IPv4 (rdma_cm)" 7471 \
	rping -s -V -a "$VETH_B_IP4" -p 7471 -C 200 -- \
	rping -c -V -a "$VETH_B_IP4" -p 7471 -C 200
srnic_run_pair "ibv_rc_pingpong -n 200 -s 65536 over IPv4 GIDs" 7472 \
	ibv_rc_pingpong -d srnic1 -g "$gb" -p 7472 -n 200 -s 65536 -c -- \
	ibv_rc_pingpong -d srnic0 -g "$ga" -p 7472 -n 200 -s 65536 -c "$VETH_B_IP4"

ktap_test_result "rdma link delete srnic0 and srnic1" \
	eval 'rdma link delete srnic0 && rdma link delete srnic1'
ktap_test_result "rmmod srnic" srnic_unload
ktap_kernel_log_clean
ktap_finished
