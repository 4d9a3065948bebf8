# SPDX-License-Identifier: GPL-2.0
#
# srnic beside rdma_rxe on one veth pair, for the tests that make the two
# talk (sourced after srnic_lib.sh): rxe0 on VETH_A in the initial
# namespace (the only one where rdma_rxe carries traffic), srnic1 on
# VETH_B in namespace NS_B (srnic and rdma_rxe cannot share the initial
# namespace's UDP port 4791).

# pair_setup: two KTAP lines (the devices); bails out if the
# topology cannot be built. Sets GA4 GB4 GA6 GB6 (rxe0's and srnic1's
# RoCEv2 GID indexes, IPv4 and IPv6).
pair_setup() {
	srnic_load || srnic_bail "no module"
	defer srnic_unload
	setup_ns NS_B || srnic_bail "netns"
	setup_veth_pair - "$NS_B" || srnic_bail "veth"
	ktap_test_result "rdma link add rxe0 (initial namespace, $VETH_A)" \
		rdma link add rxe0 type rxe netdev "$VETH_A" ||
		srnic_bail "no rxe0"
	ktap_test_result "rdma link add srnic1 ($NS_B, $VETH_B)" \
		srnic_link_add "$NS_B" srnic1 "$VETH_B" ||
		srnic_bail "no srnic1"
	GA4=$(srnic_gid_wait rxe0 "$VETH_A_IP4") || srnic_bail "no rxe0 GID"
	GB4=$(pair_in_b srnic_gid_wait srnic1 "$VETH_B_IP4") ||
		srnic_bail "no srnic1 GID"
	GA6=$(srnic_gid_wait rxe0 "$VETH_A_IP6") ||
		srnic_bail "no rxe0 IPv6 GID"
	GB6=$(pair_in_b srnic_gid_wait srnic1 "$VETH_B_IP6") ||
		srnic_bail "no srnic1 IPv6 GID"
}

pair_in_b() {	# CMD...: a srnic_lib.sh function or command in NS_B
	ip netns exec "$NS_B" bash -c ". '$SRNIC_SELFTESTS/srnic_lib.sh'; $*"
}

# pair_rc REQUESTER(srnic|rdma_rxe) GID_RXE GID_SRNIC LOG ARGS...: one
# srnic_rc_test run, its server on the other side; outputs in LOG.srv
# and LOG.cli. Returns 0 if both ends passed.
pair_rc() {
	local req=$1 ga=$2 gb=$3 log=$4 spid rc=0
	shift 4
	local port=$((18000 + ${PAIR_RUN:=0}))
	PAIR_RUN=$((PAIR_RUN + 1))
	if [ "$req" = srnic ]; then
		timeout 300 "$SRNIC_BIN/srnic_rc_test" --dev rxe0 --gid-index "$ga" \
			--port "$port" --server "$@" >"$log.srv" 2>&1 &
		spid=$!
		wait_until 10 eval "ss -Hltn 'sport = :$port' | grep -q ."
		ip netns exec "$NS_B" timeout 300 "$SRNIC_BIN/srnic_rc_test" \
			--dev srnic1 --gid-index "$gb" --port "$port" \
			--connect "$VETH_A_IP4" "$@" >"$log.cli" 2>&1 || rc=1
	else
		ip netns exec "$NS_B" timeout 300 "$SRNIC_BIN/srnic_rc_test" \
			--dev srnic1 --gid-index "$gb" --port "$port" --server "$@" \
			>"$log.srv" 2>&1 &
		spid=$!
		wait_until 10 eval "ip netns exec '$NS_B' ss -Hltn 'sport = :$port' | grep -q ."
		timeout 300 "$SRNIC_BIN/srnic_rc_test" --dev rxe0 --gid-index "$ga" \
			--port "$port" --connect "$VETH_B_IP4" "$@" \
			>"$log.cli" 2>&1 || rc=1
	fi
	wait "$spid" || rc=1
	return $rc
}

# pair_has_atomic_write: rdma_rxe learnt RDMA Atomic Write in 6.2.
pair_has_atomic_write() {
	local kv
	kv=$(uname -r)
	kv=${kv%%-*}
	[ "$(printf '%s\n' 6.2 "${kv%.*}" | sort -V | head -n1)" = 6.2 ]
}

# pair_teardown: srnic's device first (unloading rdma_rxe would remove
# it too), then the kernel log; three KTAP lines.
pair_teardown() {
	ktap_test_result "rdma link delete srnic1" rdma link delete srnic1
	rdma link delete rxe0
	rmmod rdma_rxe 2>/dev/null
	ktap_test_result "rmmod srnic" srnic_unload
	ktap_kernel_log_clean
}
