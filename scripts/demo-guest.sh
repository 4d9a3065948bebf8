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

say "Move a tensor: RDMA Writes, then Write-with-Immediate as the doorbell"
cat <<'TXT'
  Host A writes a 1 MiB tensor into host B's registered buffer with 16
  RDMA Writes of 64 KiB, then posts an RDMA Write-with-Immediate carrying
  the generation number. Host B, on that completion, checks every byte of
  the tensor is the new generation (the "data before notification"
  guarantee), then answers with a Send; 200 generations.
TXT
RC_TEST=$SRNIC_BIN/srnic_rc_test
GA=$(srnic_gid_wait srnic0 "$VETH_A_IP4")
GB=$(srnic_gid_wait srnic1 "$VETH_B_IP4")
ip netns exec "$NS_B" timeout 120 "$RC_TEST" --dev srnic1 --gid-index "$GB" \
	--server --gens 200 --writes 16 --size 64K order \
	>"$SRNIC_TMP/demo-srv.log" 2>&1 &
wait_listen() {	# NS: until a server listens on TCP 18515 there
	for _ in $(seq 100); do
		ip netns exec "$1" ss -Hltn "sport = :18515" | grep -q . && return
		sleep 0.1
	done
}
wait_listen "$NS_B"
run ip netns exec "$NS_A" timeout 120 "$RC_TEST" --dev srnic0 \
	--gid-index "$GA" --connect "$VETH_B_IP4" --gens 200 --writes 16 \
	--size 64K order
wait
sed 's/^/  receiver: /' "$SRNIC_TMP/demo-srv.log"

say "Latency and bandwidth (perftest, 200 iterations)"
ip netns exec "$NS_B" timeout 60 ib_write_lat -d srnic1 -x "$GB" -n 200 \
	>/dev/null 2>&1 &
wait_listen "$NS_B"
ip netns exec "$NS_A" timeout 60 ib_write_lat -d srnic0 -x "$GA" -n 200 \
	"$VETH_B_IP4" 2>&1 | grep -A1 '#bytes' | sed 's/^/  /'
wait
ip netns exec "$NS_B" timeout 60 ib_write_bw -d srnic1 -x "$GB" -n 200 \
	>/dev/null 2>&1 &
wait_listen "$NS_B"
ip netns exec "$NS_A" timeout 60 ib_write_bw -d srnic0 -x "$GA" -n 200 \
	"$VETH_B_IP4" 2>&1 | grep -A1 '#bytes' | sed 's/^/  /'
wait

say "Counters after the traffic (rdma statistic)"
run ip netns exec "$NS_A" rdma statistic show link srnic0/1

say "Tear down"
run rdma link delete srnic0
run rdma link delete srnic1
run rmmod srnic
echo
echo "demo: done"
