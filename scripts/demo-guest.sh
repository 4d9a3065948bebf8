#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo, inside the guest: two hosts (network namespaces) joined by a
# veth pair, an srnic device on each end, and what rdma-core's stock tools
# see of them.
set -u
. "$(dirname "$0")/../selftests/srnic_lib.sh"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@" 2>&1 | sed 's/^/  /'; }

say "Load srnic ($(uname -r))"
srnic_load || { echo "cannot load $SRNIC_KO"; exit 1; }
defer srnic_unload
run modinfo -F description "$SRNIC_KO"

say "Two hosts: namespaces joined by a veth pair"
srnic_two_hosts || exit 1
echo "  host A: $NS_A, $VETH_A $VETH_A_IP4 $VETH_A_IP6"
echo "  host B: $NS_B, $VETH_B $VETH_B_IP4 $VETH_B_IP6"

say "Create one RDMA device per host"
run ip netns exec "$NS_A" rdma link add srnic0 type srnic netdev "$VETH_A"
run ip netns exec "$NS_B" rdma link add srnic1 type srnic netdev "$VETH_B"
defer rdma link delete srnic0
defer rdma link delete srnic1
srnic_gid_wait srnic0 "$VETH_A_IP4" >/dev/null
srnic_gid_wait srnic1 "$VETH_B_IP4" >/dev/null
run ip netns exec "$NS_A" rdma link show
run ip netns exec "$NS_A" ibv_devices

say "The device through the stock rdma-core rxe provider"
run ip netns exec "$NS_A" ibv_devinfo -d srnic0

say "Its limits (enforced by the verbs)"
ip netns exec "$NS_A" ibv_devinfo -d srnic0 -v |
	grep -E '^\s+(max_(qp|qp_wr|sge|cq|cqe|mr|mr_size|pd|srq|srq_wr|ah|qp_rd_atom)|atomic_cap|page_size_cap):' |
	sed 's/^\s*/  /'

say "RoCEv2 GIDs: the veth's addresses, managed by the kernel"
ip netns exec "$NS_A" ibv_devinfo -d srnic0 -v | grep 'GID\[' | sed 's/^\s*/  /'

say "Port state follows the netdev"
run ip -n "$NS_A" link set "$VETH_A" down
sleep 0.5
ip netns exec "$NS_A" ibv_devinfo -d srnic0 | grep -E 'state:' | sed 's/^\s*/  /'
run ip -n "$NS_A" link set "$VETH_A" up
sleep 0.5
ip netns exec "$NS_A" ibv_devinfo -d srnic0 | grep -E 'state:' | sed 's/^\s*/  /'

say "Counters (rdma statistic)"
run rdma statistic show link srnic0/1

say "What works in this version"
cat <<'TXT'
  Control path: devices, ports, GIDs, PD/AH/CQ/QP/SRQ/MR verbs with their
  rings mapped into user space in rdma_rxe's layout, validated and limited.
  Not yet: moving data. post_send is refused with EOPNOTSUPP rather than
  pretending; the RoCEv2 pipeline (prefetch, TX gate, RX, completion) is
  the next step (Documentation/srnic.rst, "Known limitations").
TXT

say "Tear down"
run rdma link delete srnic0
run rdma link delete srnic1
run rmmod srnic
echo
echo "demo: done"
