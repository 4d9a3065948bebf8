#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The life of one srnic device, seen by stock tools: insmod; "rdma link add"
# on a veth inside a namespace; rdma link/dev/statistic; ibv_devices and
# ibv_devinfo -v through the stock rdma-core rxe provider, with sane
# attributes and the RoCEv2 GIDs of the veth's addresses; port state and
# MTU following the netdev; "rdma link delete"; rmmod.
. "$(dirname "$0")/srnic_lib.sh"

srnic_require
ktap_print_header
ktap_set_plan 21

dmesg_mark
ktap_test_result "insmod srnic.ko" srnic_load || srnic_bail "no module"
defer srnic_unload
srnic_two_hosts || ktap_skip_rest "cannot create namespaces/veth"

srnic_link_up "$NS_A" srnic0 "$VETH_A"

# The netdev is shown to its own namespace only.
out=$(ip netns exec "$NS_A" rdma link show srnic0/1 2>&1)
ktap_print_msg "$out"
if grep -q "state ACTIVE" <<<"$out" && grep -q "netdev $VETH_A" <<<"$out"; then
	ktap_test_pass "rdma link show: port ACTIVE on $VETH_A"
else
	ktap_test_fail "rdma link show: port ACTIVE on $VETH_A"
fi

out=$(ip netns exec "$NS_A" ibv_devices 2>&1)
ktap_print_msg "$(grep srnic0 <<<"$out")"
mac=$(ip -n "$NS_A" -br link show "$VETH_A" | awk '{print $3}')
# Node GUID is the EUI-64 of the MAC: aa:bb:cc:dd:ee:ff -> a8bbccfffeddeeff
IFS=: read -r m1 m2 m3 m4 m5 m6 <<<"$mac"
guid=$(printf '%02x%s%sfffe%s%s%s' $((0x$m1 ^ 2)) "$m2" "$m3" "$m4" "$m5" "$m6")
if grep -Eq "^[[:space:]]*srnic0[[:space:]]+$guid\$" <<<"$out"; then
	ktap_test_pass "ibv_devices lists srnic0 with node GUID from the MAC ($guid)"
else
	ktap_print_msg "expected GUID $guid (MAC $mac)"
	ktap_test_fail "ibv_devices lists srnic0 with node GUID from the MAC ($guid)"
fi

info=$(ip netns exec "$NS_A" ibv_devinfo -d srnic0 -v 2>&1)
printf '%s\n' "$info" > "${SRNIC_OUT:-/tmp}/ibv_devinfo-srnic0.txt"
field() { awk -v k="$1:" '$1 == k { print $2; exit }' <<<"$info"; }
[ "$(field transport)" = "InfiniBand" ] && [ "$(field link_layer)" = "Ethernet" ] &&
	ktap_test_pass "ibv_devinfo: stock provider opens srnic0, link_layer Ethernet" ||
	ktap_test_fail "ibv_devinfo: stock provider opens srnic0, link_layer Ethernet"
limits_ok=1
for kv in max_qp:16384 max_qp_wr:16384 max_sge:32 max_cq:16384 max_cqe:524287 \
	  max_mr:65536 max_pd:65536 max_srq:4096 max_srq_wr:16384 \
	  max_qp_rd_atom:128 max_ah:16384 max_pkeys:1 phys_port_cnt:1; do
	v=$(field "${kv%%:*}")
	[ "$v" = "${kv#*:}" ] || { ktap_print_msg "${kv%%:*} = '$v', expected ${kv#*:}"; limits_ok=0; }
done
[ $limits_ok -eq 1 ] && ktap_test_pass "ibv_devinfo: advertised limits" ||
	ktap_test_fail "ibv_devinfo: advertised limits"
[ "$(field state)" = "PORT_ACTIVE" ] && [ "$(field active_mtu)" = "1024" ] &&
	[ "$(field max_mtu)" = "4096" ] &&
	ktap_test_pass "ibv_devinfo: port ACTIVE, active_mtu 1024 for a 1500 netdev" ||
	ktap_test_fail "ibv_devinfo: port ACTIVE, active_mtu 1024 for a 1500 netdev"

ip4=$(srnic_gid_wait srnic0 "$VETH_A_IP4") &&
	ktap_test_pass "RoCEv2 GID of $VETH_A_IP4 at index $ip4" ||
	ktap_test_fail "RoCEv2 GID of $VETH_A_IP4"
ip6=$(srnic_gid_wait srnic0 "$VETH_A_IP6") &&
	ktap_test_pass "RoCEv2 GID of $VETH_A_IP6 at index $ip6" ||
	ktap_test_fail "RoCEv2 GID of $VETH_A_IP6"
ktap_print_msg "$(ip netns exec "$NS_A" ibv_devinfo -d srnic0 -v | grep GID)"
if ibv_devinfo -d srnic0 -v | grep -q "RoCE v1"; then
	ktap_test_fail "only RoCEv2 GIDs (no RoCE v1)"
else
	ktap_test_pass "only RoCEv2 GIDs (no RoCE v1)"
fi

ip -n "$NS_A" addr add 10.98.7.1/24 dev "$VETH_A"
srnic_gid_wait srnic0 10.98.7.1 >/dev/null &&
	ktap_test_pass "a new address gets a GID" ||
	ktap_test_fail "a new address gets a GID"
ip -n "$NS_A" addr del 10.98.7.1/24 dev "$VETH_A"
wait_until 10 eval '! rdma_gid_index srnic0 10.98.7.1 >/dev/null' &&
	ktap_test_pass "a removed address loses its GID" ||
	ktap_test_fail "a removed address loses its GID"

port_state() { ip netns exec "$NS_A" ibv_devinfo -d srnic0 | awk '$1 == "state:" { print $2 }'; }
ip -n "$NS_A" link set "$VETH_A" down
wait_until 5 eval '[ "$(port_state)" = PORT_DOWN ]' &&
	ktap_test_pass "netdev down -> port DOWN" ||
	ktap_test_fail "netdev down -> port DOWN"
ip -n "$NS_A" link set "$VETH_A" up
wait_until 5 eval '[ "$(port_state)" = PORT_ACTIVE ]' &&
	ktap_test_pass "netdev up -> port ACTIVE" ||
	ktap_test_fail "netdev up -> port ACTIVE"
ip -n "$NS_A" link set "$VETH_A" mtu 9000
ip -n "$NS_B" link set "$VETH_B" mtu 9000
mtu=$(ip netns exec "$NS_A" ibv_devinfo -d srnic0 | awk '$1 == "active_mtu:" { print $2 }')
[ "$mtu" = 4096 ] && ktap_test_pass "netdev MTU 9000 -> active_mtu 4096" ||
	ktap_test_fail "netdev MTU 9000 -> active_mtu 4096 (got $mtu)"

stats=$(rdma statistic show link srnic0/1 2>&1)
ktap_print_msg "$stats"
grep -q "rcvd_pkts" <<<"$stats" && grep -q "link_downed [1-9]" <<<"$stats" &&
	ktap_test_pass "rdma statistic: counters, link_downed counted" ||
	ktap_test_fail "rdma statistic: counters, link_downed counted"

out=$(rdma dev show srnic0 2>&1)
ktap_print_msg "$out"
grep -q "node_guid" <<<"$out" && ktap_test_pass "rdma dev show srnic0" ||
	ktap_test_fail "rdma dev show srnic0"

ktap_test_result "rdma link delete srnic0" rdma link delete srnic0
! rdma_dev_exists srnic0 && ktap_test_pass "srnic0 is gone" ||
	ktap_test_fail "srnic0 is gone"
ktap_test_result "rmmod srnic" srnic_unload
ktap_kernel_log_clean
ktap_finished
