#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check / make check-full: every kind of test, from a fresh Debian 12
# machine.
#
#   scripts/check.sh [--full] [--only STAGE[,STAGE...]]
#
# Stages, each one line "== NAME: ok|FAILED (N s)" and one row of the
# stage table printed at the end (and written to RESULTS/stages.txt):
#   deps            install what is needed (scripts/deps.sh)
#   lint            W=1 + sparse builds and checkpatch --strict, both kernels
#   build           srnic.ko for both kernels and the selftests' programs
#   selftests-VER   each stock kernel in a guest, every selftest there,
#                   failing on any failed test or kernel splat
#   noipv6          the newest stock kernel booted with ipv6.disable=1:
#                   selftests/srnic_noipv6.sh (srnic over IPv4 alone)
#   twohost         two guests, 6.1 and 6.12, as two hosts over a QEMU
#                   link: srnic <-> srnic and srnic <-> rdma_rxe
#                   (selftests/srnic_twohost.sh through scripts/vm-pair.sh)
#   kselftest       selftests/ as a kselftest target of Debian's 6.1 tree:
#                   make run_tests, and kselftest_install.sh +
#                   run_kselftest.sh (scripts/kselftest-tree.sh, a subset)
#   kunit           the debug test kernel (KUnit, KASAN, lockdep, UBSAN,
#                   kmemleak; built once and cached) and every kunit/ suite
#   selftests-debug srnic's selftests on that kernel: the sanitizers watch
#                   the real data path (check-full: selftests-debug-1 to
#                   -4, four guests, each part's tests below)
#   package         srnic installed like a driver on this host, then
#                   removed: make deb + apt-get install (DKMS), make
#                   install, make dkms; a guest of each kernel loads the
#                   installed module by "rdma link add" alone
#                   (scripts/package-test.sh, selftests/srnic_autoload.sh)
#   kunit-intree    (--full only) the driver dropped into linux-source-6.1,
#                   kunit.py run --kunitconfig=drivers/infiniband/sw/srnic
#
# Volumes. make check (the gate, what .ci/run runs) runs every test kind
# on every kernel with the gate volumes below; make check-full (--full)
# runs the soak volumes: the selftests' own defaults (10000 ordering
# generations, 1000 scribble rounds, 256 MiB integrity, rping 1000, ...)
# on both stock kernels and on the debug kernel (the verbs fuzzer 300 s
# on each), the rdma_rxe reference rows of the rdma-core table, larger
# two-host volumes, and the in-tree KUnit build. The volumes are set
# here and nowhere else.
#
# Results: ${SRNIC_CHECK_OUT:-/var/tmp/srnic-check/<date>}: one log per
# stage, the guests' folders, stages.txt. Exit 0 when every stage passed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
export SRNIC_CACHE=${SRNIC_CACHE:-/var/cache/srnic}

full=0 only=
while [ $# -gt 0 ]; do
	case $1 in
	--full) full=1; shift ;;
	--only) only=,$2,; shift 2 ;;
	*) echo "usage: $0 [--full] [--only STAGE,...]" >&2; exit 2 ;;
	esac
done
tier=$([ $full -eq 1 ] && echo check-full || echo check)
out=${SRNIC_CHECK_OUT:-/var/tmp/srnic-check/$(date +%Y%m%d-%H%M%S)-$tier}
mkdir -p "$out"
out=$(realpath "$out")

# --- volumes -------------------------------------------------------------------

if [ $full -eq 1 ]; then
	# The stock kernels' guests get 6 GiB: srnic_rc's bigread registers
	# 2 GiB on each side.
	stock_vol=(SRNIC_RC_BIGREAD=1 SRNIC_CLIENTS_REF=1) stock_vol2=()
	stock_mem=(--mem 6144)
	ksft_vol=(SRNIC_KSFT_TESTS=all)
	kunit_vol=()
	twohost_vol=(SRNIC_TH_GENS=5000 SRNIC_TH_BYTES=256M SRNIC_TH_PINGS=1000)
	debug_vol=(SRNIC_RDMA_CORE_NO_REF=1 SRNIC_SOAK_SECONDS=60 SRNIC_SOAK_GENS=100
		   SRNIC_SOAK_BYTES=8M SRNIC_SOAK_PINGS=80)
	# On the debug kernel the soak volumes outlast a session (2026-12-07:
	# srnic_bad_input 524 s, srnic_hostile 534, srnic_vfuzz 386, then
	# srnic_fuzz_rx's 100000 packets not sent after 24 minutes), so
	# check-full runs them in four parts, each a guest boot and a stage of
	# its own that --only can run alone: the error paths, the users
	# (rdma-core, rdma_cm, interop, the wire), srnic_rc, and the soak. The
	# test kernel has no NVMe target and no NFS server: srnic_nvme and
	# srnic_nfs run on the stock kernels only.
	debug_parts=("srnic_basic.sh srnic_bad_input.sh srnic_hostile.sh
		      srnic_vfuzz.sh srnic_fuzz_rx.sh srnic_kqp.sh"
		     "rdma_core_tests.sh srnic_cm.sh srnic_interop.sh
		      srnic_wire.sh"
		     srnic_rc.sh srnic_soak.sh)
	debug_timeout=7200
else
	# A fraction of the soak volumes (ordering generations 15%, scribble
	# rounds and integrity bytes 25%, pings 30%, NVMe I/O 25%); every step
	# still runs. The rdma_rxe reference rows of the rdma-core table are
	# check-full's (the srnic rows and their verdicts stay).
	stock_mem=()
	stock_vol=(SRNIC_RC_GENS=1500 SRNIC_RC_ROUNDS=250 SRNIC_RC_BYTES=64M
		   SRNIC_CM_PINGS=300 SRNIC_NVME_SIZE=64M
		   SRNIC_HOSTILE_ROUNDS=250 SRNIC_FUZZ_PKTS=20000
		   SRNIC_VFUZZ_SECONDS=40 SRNIC_RDMA_CORE_NO_REF=1
		   SRNIC_SOAK_SECONDS=20 SRNIC_SOAK_GENS=200 SRNIC_SOAK_BYTES=8M
		   SRNIC_SOAK_PINGS=100 SRNIC_SELFTESTS_SKIP=srnic_soak.sh
		   SRNIC_CLIENTS_SECS=2 SRNIC_FI_ITERS=10
		   "SRNIC_QPERF_RXE_TESTS=rc_bw rc_lat rc_rdma_write_bw rc_fetch_add_mr"
		   "SRNIC_UCX_TESTS=tag_lat tag_bw ucp_put_bw ucp_get ucp_fadd")
	# The second stock kernel: the interop matrix's lossy half only (its
	# loss-free cells ran on the first), and no wire check (srnic's
	# packets are built by the same code on both; it ran on the first).
	# The soak runs there, not on the first: the device and namespace
	# teardown it drives is the kernel's (check-full runs it on 6.1 and
	# the debug kernel too).
	# The fuzz's mutations are the same on both: a quarter of them there;
	# the verbs fuzzer's sequences differ by seed, not by kernel: 20 s.
	# The real clients (qperf, UCX, libfabric) run on both (issue 19:
	# each kernel's rdma_rxe beside them, 119 s on 6.12); NFS over RDMA
	# on the first only (the kernel's NFS/RDMA code over the same verbs;
	# check-full runs it on both and on the debug kernel). What the
	# second kernel repeats of the module's own logic runs at a third of
	# the first's volume: the hostile rings' random rounds (54 s of
	# srnic_hostile at 250), the ordering generations through netem (39
	# s at 1500) and the scribble rounds; of the clients, every srnic row
	# and the rdma_rxe rows' bandwidth and latency.
	stock_vol2=("SRNIC_MATRIX_LOSS=1%"
		    "SRNIC_SELFTESTS_SKIP=srnic_wire.sh srnic_nfs.sh"
		    SRNIC_FUZZ_PKTS=5000 SRNIC_VFUZZ_SECONDS=20
		    SRNIC_HOSTILE_ROUNDS=80 SRNIC_RC_GENS=500 SRNIC_RC_ROUNDS=80
		    "SRNIC_QPERF_RXE_TESTS=rc_bw rc_lat"
		    "SRNIC_UCX_TESTS=tag_lat tag_bw ucp_put_bw ucp_fadd")
	# KUnit: srnic_fuzz_rx's whole packets a fifth (its 1,000,000
	# parser cases stay).
	kunit_vol=(SRNIC_KUNIT_FUZZ_RX=20000)
	# kselftest: the runner's ways with one test (the rest ran above).
	ksft_vol=(SRNIC_KSFT_TESTS=srnic_basic.sh)
	twohost_vol=(SRNIC_TH_GENS=500 SRNIC_TH_BYTES=32M SRNIC_TH_PINGS=200)
	# The sanitizers make every step about ten times slower (srnic_basic:
	# 30 s on 6.12, 167 s on the debug kernel; srnic_cm 124 s and 640
	# s): smaller still, rdma-core's files that reach the driver's verbs
	# and data paths most (MRs, QPs, extended QPs), srnic_cm without its
	# rdma_rxe steps (the stock kernels ran them), and the RC steps that
	# reach each mechanism once (ordering, fences, access checks, ring
	# scribbles, retry, RNR).
	# "fair" (a throughput verdict in 1.5 s windows) is not selected:
	# every step goes through the same transmit gate.
	# kmemleak watches the error-path tests (run first); then it scans
	# and is switched off for rdma-core's files, srnic_cm and srnic_rc,
	# whose data paths the other sanitizers still watch: its bookkeeping
	# of every allocation doubles each process start there (those three
	# took 430 s with it, 186 s without; check-full keeps it on).
	debug_vol=(SRNIC_RC_GENS=200 SRNIC_RC_ROUNDS=50 SRNIC_RC_BYTES=32M
		   SRNIC_CM_PINGS=60 SRNIC_CM_NO_RXE=1 SRNIC_RDMA_CORE_NO_REF=1
		   SRNIC_HOSTILE_ROUNDS=30 SRNIC_FUZZ_PKTS=1500 SRNIC_FUZZ_PPS=1000
		   SRNIC_VFUZZ_SECONDS=30
		   "SRNIC_RDMA_CORE_MODULES=test_mr test_qp test_qpex"
		   "SRNIC_KMEMLEAK_UNTRACKED=rdma_core_tests.sh srnic_cm.sh srnic_rc.sh"
		   "SRNIC_RC_ONLY=pingpong \(4 KiB|order \(|fence --gens|access|scribble|retry|rnr")
	# srnic_basic is check-full's there: the device set-up and teardown it
	# checks every other test drives under the sanitizers too (55 s).
	debug_tests=(srnic_bad_input.sh srnic_hostile.sh
		     srnic_vfuzz.sh srnic_fuzz_rx.sh srnic_kqp.sh
		     rdma_core_tests.sh srnic_cm.sh srnic_rc.sh)
	# Not the soak: on the debug kernel even SRNIC_SOAK_SECONDS=10 with
	# 50 generations a run took over 25 minutes (every run a new
	# connection and process under KASAN); check-full runs it there.
	debug_parts=("${debug_tests[*]}") debug_timeout=4200
fi

# --- stages --------------------------------------------------------------------

# stage NAME CMD...: run a stage, its output to $out/NAME.log (and to
# stdout unless QUIET=1: a stage beside another prints its start and end
# only, and its log's tail when it fails); its row of the stage table to
# $out/rows/. Returns the stage's status.
mkdir -p "$out/rows" "$out/why"
rm -f "$out"/rows/* "$out"/why/*
stage() {
	local name=$1 start rc secs n
	shift
	if [ -n "$only" ] && [[ $only != *",$name,"* ]]; then
		return 0
	fi
	start=$(date +%s)
	n=$(printf '%02d' "$(ls "$out/rows" | wc -l)")
	printf '%-26s %7s  running\n' "$name" - >"$out/rows/$n-$name"
	echo "== $name"
	if [ "${QUIET:-0}" = 1 ]; then
		"$@" >"$out/$name.log" 2>&1
	else
		"$@" > >(tee "$out/$name.log") 2>&1
	fi
	rc=$?
	secs=$(($(date +%s) - start))
	if [ $rc -eq 0 ]; then
		printf '%-26s %7d  passed\n' "$name" "$secs" >"$out/rows/$n-$name"
		echo "== $name: ok ($secs s)"
	else
		printf '%-26s %7d  FAILED (exit %d)\n' "$name" "$secs" "$rc" >"$out/rows/$n-$name"
		why "$out/$name.log" >"$out/why/$n-$name"
		if [ "${QUIET:-0}" = 1 ]; then
			echo "== $name: the last 60 lines of its log:"
			tail -n 60 "$out/$name.log" | sed "s/^/[$name] /"
		fi
		echo "== $name: FAILED, exit $rc ($secs s; log $out/$name.log)"
	fi
	return $rc
}

# Why a stage failed, in a few lines of its log: the failed test points
# (TAP "not ok", with the test they belong to), the guest runner's verdict
# and the first lines of a kernel splat.  Printed under the stage table, so
# that the tail of a CI log names the failure.
why() {
	grep -E '^# selftests: [^ ]+: ' "$1" | tail -n 1 | sed 's/^# selftests: [^ ]*: /last test started: /'
	grep -E '^ *not ok |^not ok |vm\.sh: FAILED|twohost.*FAILED|Kernel panic|BUG:|Oops:|WARNING:|general protection|KASAN|UBSAN|kunit.*(FAILED|CRASHED)|^make.*Error' "$1" |
		awk '!seen[$0]++' | head -n 12 | cut -c1-200
}

pass=0 fail=0
table() {
	local f total=$(($(date +%s) - t0))
	pass=$(cat "$out"/rows/* 2>/dev/null | grep -c ' passed$')
	fail=$(cat "$out"/rows/* 2>/dev/null | grep -vc ' passed$')
	{
		echo "make $tier, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$top" rev-parse --short HEAD 2>/dev/null)"
		printf '%-26s %7s  %s\n' stage seconds result
		for f in "$out"/rows/*; do [ -e "$f" ] && cat "$f"; done
		printf '%-26s %7d  %d passed, %d failed\n' total "$total" "$pass" "$fail"
	} | tee "$out/stages.txt"
}

# The slowest test points of the run (each guest's times.tsv: seconds
# since the point before, selftests/lib.sh), to $out/slowest.txt: where
# the next cut of the gate's time should look first.
slowest() {
	local f l
	find "$out" -name times.tsv | sort | while read -r f; do
		l=${f#"$out"/}
		l=${l%/times.tsv}
		l=${l%%/*-20??????-??????-????}	# kunit.sh's mktemp folder
		sed "s|^|$l\t|" "$f"
	done | sort -t "$(printf '\t')" -k2,2nr | head -n 25 |
		awk -F '\t' '{ printf "%5d s  %-22s %-20s %s\n", $2, $1, $3, $4 }' |
		tee "$out/slowest.txt"
}

t0=$(date +%s)
finish() {
	echo
	echo "the slowest test points:"
	slowest
	echo
	table
	for f in "$out"/why/*; do
		[ -s "$f" ] || continue
		echo "why ${f##*/[0-9][0-9]-}:"
		sed 's/^/    /' "$f"
	done
	echo "results: $out"
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}

stage deps scripts/deps.sh || finish
# -j2: each kernel's sparse build beside checkpatch, two jobs at a time
# (63 -> 38 s here).
stage lint make -s -j2 lint
stage build make -s -j2 modules-all selftests-build || finish

# The stock kernels' guests (lane 1), then KUnit and the debug kernel's
# guest (lane 2). SRNIC_CHECK_LANES=1 runs the two lanes side by side,
# each guest with its 2 vCPUs: not the default, because it saves little
# (the guests are CPU-bound under TCG: srnic_bad_input took 92 s beside
# the debug guest, 80 s without it) and timing makes two tests fail there:
# srnic_rc's "fair" (two QPs' throughputs compared in 1.5 s windows: run
# alone after the lanes then) and rdma-core's test_resize_cq, which
# expects its posted sends' completions in the CQ by the time it
# resizes (srnic produces them asynchronously: a starved guest has not
# yet). Measured again on 2026-12-07: a serial run keeps the host 40-60 %
# busy in the stock kernels' stages, yet side by side the host was 93 %
# busy and everything ran at about half speed (kunit 431 s against 205
# alone; on 6.1 rdma_core_tests 153 s against 64, srnic_cm 101 against
# 43, srnic_fuzz_rx 88 against 42): four vCPU threads on two cores, and a
# preempted vCPU holding a guest spinlock leaves the other spinning. The
# two-host stage, two guests of its own, runs last.
lanes=${SRNIC_CHECK_LANES:-0}
rc_skip=()
[ "$lanes" = 1 ] && rc_skip=(SRNIC_RC_SKIP=^fair)
lane1() {
	local k vol=("${stock_vol[@]}")
	for k in $(scripts/kvers.sh); do
		stage "selftests-$k" env "${vol[@]}" "${rc_skip[@]}" \
			scripts/vm.sh --kernel "$k" --timeout 3000 --fail-on-splat \
			"${stock_mem[@]}" --out "$out/guest-$k" -- \
			selftests/run_kselftests.sh
		vol+=("${stock_vol2[@]}")
	done
	# A host booted with ipv6.disable=1: srnic over IPv4 alone (the
	# newest stock kernel, one short test).
	k=$(scripts/kvers.sh | tail -n 1)
	stage noipv6 env SRNIC_NOIPV6_REQUIRED=1 scripts/vm.sh --kernel "$k" --timeout 600 --fail-on-splat \
		--append ipv6.disable=1 --out "$out/noipv6" -- \
		selftests/run_kselftests.sh srnic_noipv6.sh
	if [ -x scripts/kselftest-tree.sh ]; then
		mkdir -p "$out/kselftest"
		stage kselftest env SRNIC_OUT="$out/kselftest" "${ksft_vol[@]}" \
			scripts/kselftest-tree.sh
	fi
}
lane2() {
	# Results under this run's folder, not srnic-out: slowest() reads
	# the debug guest's times.tsv there too.
	stage kunit env SRNIC_OUT="$out/kunit" "${kunit_vol[@]}" scripts/kunit.sh --timeout 1800
	local i name tests
	for i in "${!debug_parts[@]}"; do
		name=selftests-debug
		[ ${#debug_parts[@]} -eq 1 ] || name=$name-$((i + 1))
		read -r -a tests <<<"${debug_parts[$i]//$'\n'/ }"
		stage "$name" env SRNIC_OUT="$out/${name#selftests-}" "${debug_vol[@]}" \
			scripts/kunit.sh --selftests --timeout "$debug_timeout" "${tests[@]}"
	done
}
if [ "$lanes" = 1 ]; then
	QUIET=1 lane1 &
	l1=$!
	QUIET=1 lane2 &
	l2=$!
	trap 'kill 0' INT TERM HUP
	wait $l1 $l2
	trap - INT TERM HUP
	for k in $(scripts/kvers.sh); do
		stage "rc-fair-$k" env SRNIC_RC_ONLY=^fair scripts/vm.sh --kernel "$k" \
			--timeout 900 --fail-on-splat --out "$out/fair-$k" -- \
			selftests/run_kselftests.sh srnic_rc.sh
	done
else
	lane1
	lane2
fi

stage twohost env "${twohost_vol[@]}" scripts/vm-pair.sh --timeout 1500 \
	--fail-on-splat --out "$out/twohost" -- selftests/srnic_twohost.sh

stage package env SRNIC_OUT="$out" scripts/package-test.sh

if [ $full -eq 1 ] && [ -x scripts/kunit-intree.sh ]; then
	stage kunit-intree scripts/kunit-intree.sh
fi
finish
