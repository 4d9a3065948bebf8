# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Two guests as two hosts (scripts/vm-pair.sh): the rendezvous between the
# two sides and the links. Sourced after srnic_lib.sh by a test that runs on
# both sides at once; SRNIC_SIDE (a or b), SRNIC_PEER_SIDE, SRNIC_LINKS and
# SRNIC_SYNC (a folder both guests share, uncached) come from vm-pair.sh.
#
#	th_mark NAME [VALUE]	this side reached NAME (VALUE for the peer)
#	th_wait NAME [SECS]	wait until the peer reached NAME (default
#				120 s); prints its VALUE; fails on timeout
#				or when a guest has aborted the pair
#	th_barrier NAME [SECS]	th_mark NAME; th_wait NAME
#	th_link_up I		bring link I up: sets TH_IF (the ifname),
#				TH_IP4/TH_IP6 (this side), TH_PEER_IP4/6
#	th_step DESC SRV_SIDE PORT SRV_CMD... -- CLI_CMD...
#				one client/server step across the pair: the
#				server on SRV_SIDE, the client on the other;
#				each side prints one KTAP line for its end.
#				PORT: the port the server listens on (TCP
#				or rdma_cm) before the client may start;
#				either end is killed when the pair is
#				aborted (a guest died)

th_require() {
	[ -n "${SRNIC_SIDE:-}" ] && [ -n "${SRNIC_SYNC:-}" ] ||
		ktap_skip_rest "not one of two guests (run it through scripts/vm-pair.sh)"
	[ -d "$SRNIC_SYNC" ] || ktap_skip_rest "no rendezvous folder $SRNIC_SYNC"
	TH_SIDE=$SRNIC_SIDE TH_PEER=$SRNIC_PEER_SIDE
	TH_STEP=0
}

th_mark() {	# NAME [VALUE]
	local f=$SRNIC_SYNC/$TH_SIDE.$1
	printf '%s\n' "${2:-}" >"$f.tmp" && mv -f "$f.tmp" "$f"
}

th_wait() {	# NAME [SECS]
	local f=$SRNIC_SYNC/$TH_PEER.$1 end=$(($(date +%s) + ${2:-120}))
	while [ ! -e "$f" ]; do
		if [ -e "$SRNIC_SYNC/abort" ]; then
			echo "th_wait $1: the pair was aborted: $(cat "$SRNIC_SYNC/abort")" >&2
			return 1
		fi
		if [ "$(date +%s)" -ge "$end" ]; then
			echo "th_wait $1: side $TH_PEER did not arrive in ${2:-120} s" >&2
			return 1
		fi
		sleep 0.2
	done
	cat "$f"
}

th_barrier() {	# NAME [SECS]
	th_mark "$1" && th_wait "$@" >/dev/null
}

# The NIC of link I: vm-pair.sh gives it MAC 52:54:00:5a:0S:ii.
th_link_up() {	# I
	local i=$1 s p mac
	case $TH_SIDE in a) s=1 p=2 ;; *) s=2 p=1 ;; esac
	mac=52:54:00:5a:0$s:$(printf %02x "$i")
	lsmod | grep -q '^virtio_net ' || modprobe virtio_net || return 1
	wait_until 10 eval "ip -o link | grep -qi 'link/ether $mac'" || return 1
	TH_IF=$(ip -o link | grep -i "link/ether $mac" | awk -F': ' '{ print $2 }')
	TH_IP4=10.98.$i.$s TH_PEER_IP4=10.98.$i.$p
	TH_IP6=fd00:98:$i::$s TH_PEER_IP6=fd00:98:$i::$p
	ip addr add "$TH_IP4/24" dev "$TH_IF" &&
	ip addr add "$TH_IP6/64" dev "$TH_IF" nodad &&
	ip link set "$TH_IF" up
}

# th_reap PID: wait for PID, a step's end, and return its status; kill it
# (status 125) when the pair is aborted: its peer is gone.
th_reap() {	# PID
	while kill -0 "$1" 2>/dev/null; do
		if [ -e "$SRNIC_SYNC/abort" ]; then
			kill "$1" 2>/dev/null
			wait "$1" 2>/dev/null
			echo "th_reap: the pair was aborted: $(cat "$SRNIC_SYNC/abort")" >&2
			return 125
		fi
		sleep 0.2
	done
	wait "$1"
}

# th_diag: this side's link and device state, twice 2 s apart (are the
# counters moving?): the NIC's per-queue counters (a transmit queue the
# host no longer drains, a receive ring it no longer fills), the qdisc's
# backlog, interrupts, free memory, and the RDMA device's counters.
# Written to the results folder when a step fails.
th_diag() {
	local i
	for i in 1 2; do
		echo "== th_diag $i, $(cut -d' ' -f1 /proc/uptime) s"
		ip -s -s link show dev "$TH_IF"
		ethtool -S "$TH_IF" 2>&1 | grep -v ': 0$'
		tc -s qdisc show dev "$TH_IF"
		grep -i virtio /proc/interrupts
		grep -E '^(MemFree|MemAvailable|Slab):' /proc/meminfo
		cat /proc/net/softnet_stat
		[ -z "${DEV:-}" ] || rdma statistic show link "$DEV/1" 2>&1
		[ $i = 2 ] || nap 2
	done
}

th_step() {	# DESC SRV_SIDE PORT SRV_CMD... -- CLI_CMD...
	local desc=$1 srv_side=$2 port=$3 srv=() spid rc=0 name log
	shift 3
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	# A dead peer fails the step it died in; the rest is not run.
	[ ! -e "$SRNIC_SYNC/abort" ] ||
		srnic_bail "the pair was aborted: $(cat "$SRNIC_SYNC/abort")"
	TH_STEP=$((TH_STEP + 1))
	name=step$TH_STEP
	log=$SRNIC_TMP/$name
	if [ "$TH_SIDE" = "$srv_side" ]; then
		timeout 300 "${srv[@]}" >"$log" 2>&1 &
		spid=$!
		wait_until 30 server_listening - "$port"
		th_mark "$name.ready"
		th_reap "$spid" || rc=$?
		th_mark "$name.done" "$rc"
		th_wait "$name.done" 330 >/dev/null
		desc="$desc [server end]"
	else
		if th_wait "$name.ready" 120 >/dev/null; then
			timeout 300 "$@" >"$log" 2>&1 &
			th_reap $! || rc=$?
		else
			rc=125
			echo "the server never became ready" >"$log"
		fi
		th_mark "$name.done" "$rc"
		th_wait "$name.done" 330 >/dev/null
		desc="$desc [client end]"
	fi
	cp "$log" "${SRNIC_OUT:-$SRNIC_TMP}/$name.log" 2>/dev/null
	if [ $rc -eq 0 ]; then
		tail -n 1 "$log" | sed 's/^/# /'
		ktap_test_pass "$desc"
	else
		ktap_print_msg "exit $rc"
		th_diag >"${SRNIC_OUT:-$SRNIC_TMP}/$name.diag" 2>&1
		tail -n 6 "$log" | sed 's/^/# /'
		ktap_test_fail "$desc"
	fi
}
