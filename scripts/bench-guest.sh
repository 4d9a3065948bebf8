#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, inside the guest: srnic and rdma_rxe measured back to back
# by perftest on the same kernel, the same veth pair, in one boot.
#
# Topology: one veth pair; srnic0 on one end (in a namespace: srnic and
# rdma_rxe cannot share the initial namespace's UDP port 4791), rxe0 on
# the other end in the initial namespace. Each device is measured against
# itself (perftest's server and client on the same device): rdma_rxe only
# carries traffic in the initial namespace, and two rxe devices there
# cannot reach each other, so self-loopback is the one path both drivers
# can run the same way in one guest.
#
# Each case runs SRNIC_BENCH_REPS times (3) per driver, a fixed number of
# iterations (a few seconds a run here; SRNIC_BENCH_SCALE multiplies the
# bandwidth cases'), latency 1000; perftest's duration mode (-D) reported
# 0 MB/s for runs that had completed work under TCG, so it is not used. A
# run that does not finish in 90 s reports nothing ("-"). The table shows
# the median and the spread (min-max), the ratio srnic/rxe of the
# medians, and guest CPU time per GiB moved (busy time of all vCPUs over
# the second after the first second of a bandwidth run, both ends of the
# test included). A benchmark, not a test: it never fails on numbers.
#
# SRNIC_BENCH_MODE=qps (make bench-qps): instead, ib_write_bw -q N for N =
# 1, 16, 256, 1024 active QPs (4 KiB Writes, up to 128 posted per QP:
# more than the 64 a QP's transmit window holds at MTU 1024, so the rest
# wait in the pool; 16384 in all at most, the most perftest's one CQ
# takes on rdma_rxe; 80 MiB per run, 256 MiB at 1024 QPs), srnic with two pool
# sizes (prefetch_slots 1024 and 128) beside rdma_rxe, SRNIC_BENCH_REPS
# runs each (SRNIC_BENCH_QPS overrides the QP counts): throughput, the
# prefetch stall rate (stalls per WQE fetched over the runs) and the pool
# slots in use (sampled every 0.5 s while WQEs are being fetched: median
# and max). The iterations are a multiple of the CQ moderation (-Q 16;
# perftest's default at this depth is 100): perftest credits a QP
# cq_mod WQEs per completion and stops polling once the credits reach
# the total, so with 1280 iterations a QP whose credits lagged waited
# for ever to post its last WQEs (seen with 16 QPs: its completion sat
# in the CQ, unpolled).
set -u
. "$(dirname "$0")/../selftests/srnic_lib.sh"
. "$(dirname "$0")/bench_lib.sh"

REPS=${SRNIC_BENCH_REPS:-3}
SCALE=${SRNIC_BENCH_SCALE:-1}	# iterations: a few seconds a run here
OUT=${SRNIC_OUT:-$SRNIC_TMP}
RAW=$OUT/bench-raw-$(uname -r).txt
TABLE=$OUT/bench-$(uname -r).md
LOGS=$OUT/bench-logs-$(uname -r)	# every perftest run's output
PORT=19000
HZ=$(getconf CLK_TCK)

# name|tool|args|kind: bw (MiB/s), rate (Mpps), lat (usec typical, p99)
CASES=(
	"ib_write_bw 64 B|ib_write_bw|-s 64 -n $((50000 * SCALE))|rate"
	"ib_write_bw 4 KiB|ib_write_bw|-s 4096 -n $((20000 * SCALE))|bw"
	"ib_write_bw 64 KiB|ib_write_bw|-s 65536 -n $((2000 * SCALE))|bw"
	"ib_read_bw 64 KiB|ib_read_bw|-s 65536 -n $((2000 * SCALE))|bw"
	"ib_send_bw 4 KiB|ib_send_bw|-s 4096 -n $((20000 * SCALE))|bw"
	"ib_write_bw -q 16 64 KiB|ib_write_bw|-q 16 -s 65536 -n $((200 * SCALE))|bw"
	"ib_send_lat 2 B|ib_send_lat|-s 2 -n 1000|lat"
	"ib_write_lat 2 B|ib_write_lat|-s 2 -n 1000|lat"
	"ib_read_lat 2 B|ib_read_lat|-s 2 -n 1000|lat"
	"ib_send_lat 2 B, CPU-bound load|ib_send_lat|-s 2 -n 1000|lat|load"
)
# SRNIC_BENCH_CASES: an extended regular expression; only the cases whose
# name matches it run (all of them by default).
CASES_RE=${SRNIC_BENCH_CASES:-.}

busy_jiffies() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}

wait_listen() {	# NS|- PORT
	local x=()
	[ "$1" = - ] || x=(ip netns exec "$1")
	for _ in $(seq 150); do
		"${x[@]}" ss -Hltn "sport = :$2" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# A CPU-bound competitor on every vCPU while a "load" case runs (nice 0,
# as perftest): a busy host, where a wake-up left to ksoftirqd or a
# kworker waits for the scheduler.
LOAD_PIDS=()
load_start() {
	local i
	for ((i = 0; i < $(nproc); i++)); do
		(while :; do :; done) &
		LOAD_PIDS+=($!)
	done
}
load_stop() {
	[ ${#LOAD_PIDS[@]} -gt 0 ] || return 0
	kill "${LOAD_PIDS[@]}" 2>/dev/null
	wait "${LOAD_PIDS[@]}" 2>/dev/null
	LOAD_PIDS=()
}

# run1 NS|- DEV GID IP TOOL KIND ARGS...: one perftest run on DEV to
# itself, on TCP port $PORT (the caller moves to a fresh port for every
# run: run1 runs in a subshell). Prints "value [p99]
# [cpu_jiffies_per_second]" or nothing; both ends' output stays in $LOGS.
run1() {
	local ns=$1 dev=$2 gid=$3 ip=$4 tool=$5 kind=$6 x=() spid cpid j0 j1
	local out=$LOGS/$PORT-$dev-client.txt line
	shift 6
	[ "$ns" = - ] || x=(ip netns exec "$ns")
	"${x[@]}" timeout 90 "$tool" -F -d "$dev" -x "$gid" -p "$PORT" "$@" \
		>"$LOGS/$PORT-$dev-server.txt" 2>&1 &
	spid=$!
	if ! wait_listen "$ns" "$PORT"; then
		kill "$spid" 2>/dev/null
		return
	fi
	"${x[@]}" timeout 90 "$tool" -F -d "$dev" -x "$gid" -p "$PORT" "$@" \
		"$ip" >"$out" 2>&1 &
	cpid=$!
	j0= j1=
	if [ "$kind" != lat ]; then
		# one second of steady state, after set-up
		sleep 1
		j0=$(busy_jiffies)
		sleep 1
		j1=$(busy_jiffies)
	fi
	wait "$cpid"
	wait "$spid"
	line=$(awk '/#bytes/ { getline; print; exit }' "$out")
	[ -n "$line" ] || { sed 's/^/# /' "$out" >&2; return; }
	set -- $line
	case $kind in
	bw)	echo "$4 $((j1 - j0))" ;;
	rate)	echo "$5 $((j1 - j0)) $4" ;;
	lat)	echo "$5 $8" ;;
	esac
}

# --- set-up ------------------------------------------------------------------

srnic_load || { echo "cannot load $SRNIC_KO"; exit 1; }
defer srnic_unload
modprobe rdma_rxe || { echo "no rdma_rxe module"; exit 1; }
defer modprobe -r rdma_rxe
setup_ns NS_A || exit 1
setup_veth_pair "$NS_A" - 3 || exit 1
srnic_link_add "$NS_A" srnic0 "$VETH_A" || exit 1
rdma link add rxe0 type rxe netdev "$VETH_B" || exit 1
defer rdma link delete rxe0
defer rdma link delete srnic0
GS=$(srnic_gid_wait srnic0 "$VETH_A_IP4") || { echo "no srnic0 GID"; exit 1; }
GR=$(srnic_gid_wait rxe0 "$VETH_B_IP4") || { echo "no rxe0 GID"; exit 1; }

echo "bench: $(uname -r), $(nproc) vCPUs, $REPS runs per case, iterations x$SCALE"
echo "bench: srnic0 on $VETH_A ($NS_A), rxe0 on $VETH_B (initial namespace); each to itself"
: >"$RAW"
rm -rf "$LOGS"
mkdir -p "$LOGS"

if [ "${SRNIC_BENCH_MODE:-}" = qps ]; then
	QTABLE=$OUT/bench-qps-$(uname -r).md
	SYSD=/sys/class/infiniband/srnic0
	stat1() {	# NAME: srnic0's counter
		rdma statistic show link srnic0/1 |
			awk -v n="$1" '{ for (i = 1; i < NF; i++) if ($i == n) print $(i + 1) }'
	}
	sampler() {	# FILE: "fetched in_use" every 0.5 s until killed
		while :; do
			echo "$(stat1 prefetch_fetched) $(stat1 prefetch_slots_in_use)" >>"$1"
			sleep 0.5
		done
	}
	record() {	# NAME DRV MIBS: one run's throughput, into $RAW
		# perftest printed 0.00 for a few runs that completed every
		# WQE: not a measurement, counted apart
		case $3 in
		0.00 | '') BAD[$2]=$((${BAD[$2]:-0} + 1)) ;;
		*) echo "$1|$2|$3" >>"$RAW" ;;
		esac
	}
	{
		echo "### make bench-qps: active QPs, srnic (two pool sizes) vs rdma_rxe, $(uname -r)"
		echo
		echo "QEMU TCG, $(nproc) vCPUs; ib_write_bw -q N -s 4096 -t depth -Q 16, each device to"
		echo "itself, $REPS runs each: median (min-max) of the runs perftest did not report"
		echo "as 0.00 MiB/s (those are counted apart). Stall rate = prefetch_stalls /"
		echo "prefetch_fetched over all runs. Slots in use: sampled every 0.5 s while"
		echo "WQEs were being fetched (set-up and tear-down excluded): median / max."
		echo
		echo "| QPs | depth | pool slots | srnic MiB/s | rdma_rxe MiB/s | srnic/rxe | 0.00 runs srnic/rxe | WQEs fetched | stalls | stall rate | slots in use (median/max) |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|"
	} >"$QTABLE"
	for n in ${SRNIC_BENCH_QPS:-1 16 256 1024}; do
		iters=$((20480 / n))
		[ "$iters" -ge 64 ] || iters=64
		# perftest's one send CQ holds depth x QPs (rdma_rxe: < 32768)
		depth=$((16384 / n))
		[ "$depth" -le 128 ] || depth=128
		args=(-q "$n" -s 4096 -t "$depth" -Q 16 -n "$iters")
		declare -A F=() ST=() BAD=()
		for slots in 1024 128; do
			: >"$LOGS/slots-$n-$slots.txt"
		done
		for ((r = 1; r <= REPS; r++)); do
			v=$(run1 - rxe0 "$GR" "$VETH_B_IP4" ib_write_bw bw "${args[@]}")
			PORT=$((PORT + 1))
			record "qps $n" rxe "${v%% *}"
			for slots in 1024 128; do
				echo "$slots" >"$SYSD/prefetch_slots" ||
					echo "bench: cannot set prefetch_slots $slots"
				f0=$(stat1 prefetch_fetched) s0=$(stat1 prefetch_stalls)
				sampler "$LOGS/slots-$n-$slots.txt" &
				sp=$!
				v=$(run1 "$NS_A" srnic0 "$GS" "$VETH_A_IP4" ib_write_bw bw "${args[@]}")
				kill "$sp" 2>/dev/null
				wait "$sp" 2>/dev/null
				PORT=$((PORT + 1))
				f1=$(stat1 prefetch_fetched) s1=$(stat1 prefetch_stalls)
				record "qps $n" "srnic-$slots" "${v%% *}"
				F[$slots]=$((${F[$slots]:-0} + f1 - f0))
				ST[$slots]=$((${ST[$slots]:-0} + s1 - s0))
				echo "bench: $n QPs, $slots slots, run $r: srnic ${v%% *} MiB/s, fetched $((f1 - f0)) stalls $((s1 - s0))"
			done
		done
		read -r rm rl rh < <(stat "qps $n" rxe 1)
		for slots in 1024 128; do
			read -r sm sl sh < <(stat "qps $n" "srnic-$slots" 1)
			# a sample counts if WQEs were fetched since the one before
			inuse=$(awk 'NR > 1 && $1 != last { print $2 } { last = $1 }' \
				"$LOGS/slots-$n-$slots.txt" | sort -n |
				awk '{ v[k++] = $1 } END {
					if (!k) print "- / -"
					else print v[int((k - 1) / 2)] " / " v[k - 1] }')
			sr=$(awk -v f="${F[$slots]}" -v st="${ST[$slots]}" \
				'BEGIN { if (f) printf "%.3f%%", 100 * st / f; else print "-" }')
			echo "| $n | $depth | $slots | $(cell "$sm" "$sl" "$sh" 2) |" \
				"$(cell "$rm" "$rl" "$rh" 2) | $(ratio "$sm" "$rm") |" \
				"${BAD[srnic-$slots]:-0}/${BAD[rxe]:-0} | ${F[$slots]} |" \
				"${ST[$slots]} | $sr | $inuse |" >>"$QTABLE"
		done
		unset F ST BAD
		echo 1024 >"$SYSD/prefetch_slots"
	done
	echo
	cat "$QTABLE"
	echo "bench: table in $QTABLE"
	exit 0
fi

# --- measure -----------------------------------------------------------------

RUN_CASES=()
for c in "${CASES[@]}"; do
	[[ ${c%%|*} =~ $CASES_RE ]] && RUN_CASES+=("$c")
done
for c in "${RUN_CASES[@]}"; do
	IFS='|' read -r name tool args kind load <<<"$c"
	for ((r = 1; r <= REPS; r++)); do
		[ "$load" = load ] && load_start
		# shellcheck disable=SC2086
		v=$(run1 "$NS_A" srnic0 "$GS" "$VETH_A_IP4" "$tool" "$kind" $args)
		PORT=$((PORT + 1))
		echo "$name|srnic|$v" >>"$RAW"
		# shellcheck disable=SC2086
		v=$(run1 - rxe0 "$GR" "$VETH_B_IP4" "$tool" "$kind" $args)
		PORT=$((PORT + 1))
		echo "$name|rxe|$v" >>"$RAW"
		load_stop
		echo "bench: $name run $r: $(tail -n 2 "$RAW" | cut -d'|' -f2,3 | tr '\n' ' ')"
	done
done
mc=$(taskset -c 0 "$SRNIC_BIN/srnic_memcpy_bw" 2 64 | awk '{ print $2 }')

# --- report ------------------------------------------------------------------

cpu_per_gib() {	# NAME DRV: CPU seconds per GiB over the medians
	local j bw
	read -r j _ < <(stat "$1" "$2" 2)
	read -r bw _ < <(stat "$1" "$2" 1)
	awk -v j="$j" -v bw="$bw" -v hz="$HZ" '
		BEGIN { if (j == "-" || bw <= 0) print "-"; else printf "%.2f", j / hz / (bw / 1024) }'
}

{
	echo "### make bench: srnic vs rdma_rxe, $(uname -r)"
	echo
	echo "QEMU TCG, $(nproc) vCPUs, one boot; each device to itself on the same veth pair;"
	echo "$REPS runs per case: median (min-max). Bandwidth in MiB/s (perftest's MB/sec),"
	echo "message rate in Mpps, latency in usec (lower is better). CPU: guest"
	echo "CPU seconds (all vCPUs, both ends) per GiB moved. Every run: perftest"
	echo "\`TOOL -F -d DEV -x GID ARGS\` (server, then client with the address), ARGS:"
	for c in "${RUN_CASES[@]}"; do
		IFS='|' read -r name tool args kind load <<<"$c"
		echo "${name}: \`$args\`${load:+, one busy loop per vCPU beside it}."
	done
	echo
	echo "| case | srnic | rdma_rxe | srnic/rxe | CPU s/GiB srnic | CPU s/GiB rxe |"
	echo "|---|---|---|---|---|---|"
	for c in "${RUN_CASES[@]}"; do
		IFS='|' read -r name tool args kind load <<<"$c"
		read -r sm sl sh < <(stat "$name" srnic 1)
		read -r rm rl rh < <(stat "$name" rxe 1)
		case $kind in
		rate)
			echo "| $name, Mpps | $(cell "$sm" "$sl" "$sh" 3) | $(cell "$rm" "$rl" "$rh" 3) | $(ratio "$sm" "$rm") | - | - |" ;;
		bw)
			echo "| $name, MiB/s | $(cell "$sm" "$sl" "$sh" 1) | $(cell "$rm" "$rl" "$rh" 1) | $(ratio "$sm" "$rm") | $(cpu_per_gib "$name" srnic) | $(cpu_per_gib "$name" rxe) |" ;;
		lat)
			echo "| $name typical, usec | $(cell "$sm" "$sl" "$sh" 1) | $(cell "$rm" "$rl" "$rh" 1) | $(ratio "$sm" "$rm") | - | - |"
			read -r sm sl sh < <(stat "$name" srnic 2)
			read -r rm rl rh < <(stat "$name" rxe 2)
			echo "| $name p99, usec | $(cell "$sm" "$sl" "$sh" 1) | $(cell "$rm" "$rl" "$rh" 1) | $(ratio "$sm" "$rm") | - | - |" ;;
		esac
	done
	echo
	echo "Single-core memcpy in the same guest: ${mc:-?} MiB/s."
} >"$TABLE"
echo
cat "$TABLE"
echo
echo "bench: table in $TABLE, raw runs in $RAW"
