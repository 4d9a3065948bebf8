#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-pair.sh - two QEMU (TCG) guests as two hosts, joined by Ethernet links.
#
# Usage:
#   scripts/vm-pair.sh [--kernel-a VER|IMAGE] [--kernel-b VER|IMAGE]
#                      [--links N] [--timeout SECS] [--out DIR] [--mem MB]
#                      [--smp N] [--tcp] [--fail-on-splat] -- COMMAND [ARGS...]
#
#   --kernel-a/-b   each side's kernel (default: the newest 6.1 on side a,
#                   the newest 6.12 on side b; scripts/kvers.sh).
#   --links N       N point-to-point links (default 1): link i is a
#                   virtio-net NIC in each guest, MAC 52:54:00:5a:0S:ii
#                   (S = 1 on side a, 2 on side b), carried over a Unix
#                   stream socket (QEMU's stream netdev; side a listens):
#                   lossless, without TCP's Nagle delays (vm.sh --link),
#                   and the traffic never leaves this host.
#   --tcp           carry the links over TCP connections on 127.0.0.1
#                   instead (QEMU's socket netdev): every frame sent
#                   behind an unacknowledged one waits for a delayed ACK
#                   (ib_write_lat: 22 ms instead of 0.42 ms).
#   --smp N         vCPUs per guest (default 1: two guests on two cores).
#   --mem MB        memory per guest (default 2048).
#   --timeout SECS  per guest (default 900).
#   --out DIR       results: DIR/a and DIR/b (scripts/vm.sh's files for each
#                   guest) and DIR/sync, the rendezvous folder both share.
#   --fail-on-splat passed to both guests: either kernel log's splat fails.
#
# Both guests run COMMAND (in the same checkout, see vm.sh) with
# SRNIC_SIDE=a or b, SRNIC_PEER_SIDE, SRNIC_LINKS=N and SRNIC_SYNC (the
# shared folder; selftests/twohost_lib.sh has the rendezvous helpers).
# When one guest ends with a non-zero status, DIR/sync/abort is written so
# that the other stops waiting for it.
#
# Exit status: 0 when both guests' commands exited 0 (and, with
# --fail-on-splat, neither kernel log has a splat); else side a's non-zero
# vm.sh status, or side b's; 2 usage error.
set -eu

me=vm-pair.sh
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "$me: error: $*" >&2; exit 2; }
usage() {
	sed -n '/^# Usage:/,/^# Both guests/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

ka='' kb='' nlinks=1 timeout_s=900 out='' mem=2048 smp=1 splat=() tcp=0
while [ $# -gt 0 ]; do
	case $1 in
	--kernel-a) [ $# -ge 2 ] || usage; ka=$2; shift 2 ;;
	--kernel-b) [ $# -ge 2 ] || usage; kb=$2; shift 2 ;;
	--links) [ $# -ge 2 ] || usage; nlinks=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
	--mem) [ $# -ge 2 ] || usage; mem=$2; shift 2 ;;
	--smp) [ $# -ge 2 ] || usage; smp=$2; shift 2 ;;
	--fail-on-splat) splat=(--fail-on-splat); shift ;;
	--tcp) tcp=1; shift ;;
	--) shift; break ;;
	-h|--help) usage ;;
	*) die "unknown option '$1' (the command goes after --)" ;;
	esac
done
[ $# -gt 0 ] || usage
case $nlinks in ''|*[!0-9]*) die "--links needs a number" ;; esac
[ "$nlinks" -ge 1 ] && [ "$nlinks" -le 16 ] || die "--links: 1 to 16"

vers=$("$top/scripts/kvers.sh")
[ -n "$ka" ] || ka=$(echo "$vers" | grep '^6\.1\.' | tail -n1)
[ -n "$kb" ] || kb=$(echo "$vers" | grep '^6\.12\.' | tail -n1)
[ -n "$ka" ] && [ -n "$kb" ] || die "no 6.1 and 6.12 kernels installed (run scripts/deps.sh)"

if [ -z "$out" ]; then
	base=${SRNIC_OUT:-/var/tmp/srnic-out}
	mkdir -p "$base"
	out=$(mktemp -d "$(realpath "$base")/$(date +%Y%m%d-%H%M%S)-pair-XXXX")
fi
mkdir -p "$out/a" "$out/b"
out=$(realpath "$out")
rm -rf "$out/sync"
mkdir -p "$out/sync"

# The guests' monitors (vm.sh --monitor), and the links' Unix sockets:
# in a short folder of their own (a socket path has at most 107 bytes).
sockdir=$(mktemp -d /tmp/srnic-pair.XXXXXX)
trap 'rm -rf "$sockdir"' EXIT

# Each link's endpoint: a Unix socket in $sockdir, or with --tcp a port
# free on 127.0.0.1 now.
ends=()
if [ $tcp -eq 1 ]; then
	port_used() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
	p=$((20000 + RANDOM % 20000))
	while [ ${#ends[@]} -lt "$nlinks" ]; do
		p=$((p + 1))
		[ $p -lt 65000 ] || p=20001
		port_used "$p" || ends+=("$p")
	done
	end_up() { port_used "$1"; }
else
	for ((i = 0; i < nlinks; i++)); do ends+=("$sockdir/link$i"); done
	end_up() { [ -S "$1" ]; }
fi
links_a=() links_b=()
for ((i = 0; i < nlinks; i++)); do
	links_a+=(--link "listen:${ends[$i]}:52:54:00:5a:01:$(printf %02x "$i")")
	links_b+=(--link "connect:${ends[$i]}:52:54:00:5a:02:$(printf %02x "$i")")
done

side() {	# SIDE PEER KERNEL LINKS...: one guest; its lines prefixed
	local s=$1 peer=$2 k=$3 rc=0
	shift 3
	SRNIC_SIDE=$s SRNIC_PEER_SIDE=$peer SRNIC_LINKS=$nlinks \
		"$top/scripts/vm.sh" --kernel "$k" --smp "$smp" --mem "$mem" \
		--timeout "$timeout_s" --out "$out/$s" --sync "$out/sync" \
		--monitor "$sockdir/$s.monitor" \
		"${splat[@]}" "$@" 2>&1 | sed -u "s/^/[$s] /"
	rc=${PIPESTATUS[0]}
	echo "$rc" >"$out/$s.rc"
	[ "$rc" -eq 0 ] || echo "$s exited $rc" >>"$out/sync/abort"
	return 0
}

# When a step fails, a guest writes its link's state to NAME.diag
# (selftests/twohost_lib.sh th_diag); the host side of the same links is
# in the QEMUs: both guests' virtio-net queues, as each QEMU sees them,
# to DIR/NAME.queues (a transmit queue the guest filled and its QEMU
# stopped draining, or a receive ring QEMU found empty and is waiting
# for the guest to refill).
watch_diag() {
	local f n s
	while :; do
		for f in "$out"/a/*.diag "$out"/b/*.diag; do
			[ -e "$f" ] || continue
			n=${f##*/}
			n=$out/${n%.diag}.queues
			[ -e "$n" ] && continue
			for s in a b; do
				echo "== side $s"
				"$top/scripts/qemu-hmp.py" "$sockdir/$s.monitor" --virtio-net 2>&1
			done >"$n"
		done
		sleep 2
	done
}

echo "$me: side a: $ka, side b: $kb, $nlinks link(s), out $out"
side a b "$ka" "${links_a[@]}" -- "$@" &
pid_a=$!
trap 'kill $pid_a 2>/dev/null' INT TERM HUP
# Side b's QEMU connects at start: wait until side a's listens (its
# initramfs may have to be built first).
for ((i = 0; i < 3000; i++)); do
	up=0
	for p in "${ends[@]}"; do end_up "$p" && up=$((up + 1)); done
	[ $up -eq "$nlinks" ] && break
	kill -0 $pid_a 2>/dev/null || break
	sleep 0.1
done
side b a "$kb" "${links_b[@]}" -- "$@" &
pid_b=$!
watch_diag &
pid_w=$!
trap 'kill $pid_a $pid_b $pid_w 2>/dev/null' INT TERM HUP
wait $pid_a || true
wait $pid_b || true
kill $pid_w 2>/dev/null
wait $pid_w 2>/dev/null || true
trap - INT TERM HUP

rc_a=$(cat "$out/a.rc" 2>/dev/null || echo 125)
rc_b=$(cat "$out/b.rc" 2>/dev/null || echo 125)
echo "$me: side a ($ka) exit $rc_a, side b ($kb) exit $rc_b; results in $out"
[ "$rc_a" -eq 0 ] || exit "$rc_a"
exit "$rc_b"
