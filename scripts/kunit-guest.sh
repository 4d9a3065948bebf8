#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kunit-guest.sh - the guest side of scripts/kunit.sh; runs inside the test
# kernel's guest (scripts/vm.sh), writes its results to $SRNIC_OUT.
#
#   kunit-guest.sh kunit MODULE...     load srnic.ko, then each KUnit module
#                                      (a .ko path, or a module name of the
#                                      test kernel); KTAP -> kunit.ktap
#   kunit-guest.sh selftests [TEST...] selftests/run_kselftests.sh [TEST...]
#                                      -> selftests.ktap
#
# Both modes also scan kmemleak after the tests (kmemleak.txt), and record
# every module seen loaded with its address range (modules-seen.txt), so
# that scripts/kunit.sh can tell whose leak a backtrace into an unloaded
# module is.
# Exit status: 0 when everything loaded, ran and unloaded (KUnit verdicts
# are the host's job); else 1.
set -u

out=${SRNIC_OUT:?not in a scripts/vm.sh guest}
top=$(cd "$(dirname "$0")/.." && pwd)
kver=$(uname -r)
dbg=/sys/kernel/debug
leak=$dbg/kmemleak
rc=0
late=()

say() { echo "kunit-guest: $*"; }
err() { echo "kunit-guest: ERROR: $*"; rc=1; }

mountpoint -q "$dbg" || mount -t debugfs debugfs "$dbg" || err "cannot mount debugfs"

# --- module address ranges ---------------------------------------------------
# /proc/modules: name size refs deps state address.  Polled in the background
# (a module that lives less than the period may be missed).
watch_modules() {
	local name size addr k
	local -A seen
	while :; do
		while read -r name size _ _ _ addr _; do
			k="$name $size $addr"
			[ -n "${seen[$k]:-}" ] && continue
			seen[$k]=1
			echo "$k" >>"$out/modules-seen.txt"
		done </proc/modules
		# read's timeout as the sleep, as selftests/lib.sh's nap (not
		# sourced here: it sets an EXIT trap): no process every 0.5 s
		read -r -t 0.5 -u "$nap" _ || :
	done
}
exec {nap}<> <(:)
: >"$out/modules-seen.txt"
watch_modules &
watcher=$!
stop_watch() {
	sleep 0.6	# one more round
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
}

# --- kmemleak ----------------------------------------------------------------
# A leaked object is reported once it is older than 5 s and was found
# unreferenced (with an unchanged checksum) by two scans: hence the sleep
# and the double scan.
kmemleak_scan() {	# FILE
	[ -w "$leak" ] || return 0
	sleep 5
	if ! { echo scan >"$leak" && echo scan >"$leak"; }; then
		say "kmemleak scan failed"
	fi
	cat "$leak" >"$1"
}

# kmemleak_verdict_scan WHAT: the scan scripts/kunit.sh judges
# (kmemleak.txt), and one line saying what it found after WHAT.
kmemleak_verdict_scan() {
	local t0=$EPOCHSECONDS
	kmemleak_scan "$out/kmemleak.txt"
	say "kmemleak: $(grep -c '^unreferenced object' "$out/kmemleak.txt") suspected leak(s) $1 ($((EPOCHSECONDS - t0)) s to scan)"
}
if [ -w "$leak" ]; then
	# No periodic scan thread (CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN=n): the only
	# scan is ours, after the tests.  What boot leaked shows up there too,
	# with backtraces that are not srnic's.  SRNIC_KMEMLEAK_BASELINE=1
	# scans and clears before the tests (about 25 s more under TCG).
	echo scan=off >"$leak"
	if [ -n "${SRNIC_KMEMLEAK_BASELINE:-}" ]; then
		t0=$(date +%s)
		kmemleak_scan "$out/kmemleak-boot.txt"
		echo clear >"$leak"
		say "kmemleak baseline: $(grep -c '^unreferenced object' "$out/kmemleak-boot.txt") object(s) from boot, cleared ($(($(date +%s) - t0)) s)"
	fi
else
	say "WARNING: no $leak (kernel without CONFIG_DEBUG_KMEMLEAK, or kmemleak disabled itself: see dmesg)"
	: >"$out/kmemleak-unavailable"
fi

# --- KUnit -------------------------------------------------------------------

# Load a module file: its dependencies from this kernel's tree first.
load_ko() {	# FILE [PARAM...]
	local f=$1 dep
	shift
	for dep in $(modinfo -F depends "$f" | tr , ' '); do
		# srnic.ko itself is no module of this kernel's tree
		[ -d "/sys/module/$dep" ] || modprobe "$dep" || return 1
	done
	insmod "$f" "$@"
}
modname() { modinfo -F name "$1" 2>/dev/null || basename "${1%.ko}" | tr - _; }

# The KTAP of one suite from debugfs, top-level result renumbered to N.  The
# 6.1 kernel keeps at most 512 bytes of log per test case: a case with a long
# log loses its result line.  Then the suite is taken from the kernel log.
suite_ktap() {	# SUITE N
	local f=$dbg/kunit/$1/results plan got
	plan=$(sed -n 's/^    1\.\.\([0-9]*\)$/\1/p' "$f" | head -n1)
	got=$(grep -cE '^    (not )?ok [0-9]+ ' "$f")
	if [ -n "$plan" ] && [ "$got" = "$plan" ]; then
		tail -n +3 "$f" | sed -E '$s/^(not )?ok [0-9]+ /\1ok '"$2"' /'
		return
	fi
	say "suite $1: debugfs results truncated ($got of ${plan:-?} results): using the kernel log" >&2
	dmesg -t 2>/dev/null | awk -v s="$1" -v n="$2" '
		$0 == "    # Subtest: " s { on = 1; print "    KTAP version 1"; print; next }
		on && match($0, "^(not )?ok [0-9]+ ") {
			rest = substr($0, RLENGTH + 1)
			if (rest == s || index(rest, s " ") == 1) {
				sub(/ok [0-9]+ /, "ok " n " ")
				print
				exit
			}
		}
		on && /^    / { print }
	'
}

suite_list() {
	local d
	for d in "$dbg"/kunit/*/; do
		[ -d "$d" ] && basename "$d"
	done
}

run_kunit() {
	local srnic=$top/build/$kver/srnic.ko m name before suites s n=0 loaded="" ok
	mkdir -p "$out/kunit"
	: >"$out/kunit/suites.ktap"
	if [ -n "${SRNIC_KUNIT_NO_SRNIC:-}" ]; then
		say "not loading srnic.ko (SRNIC_KUNIT_NO_SRNIC)"
	elif load_ko "$srnic"; then
		say "loaded $srnic"
	else
		err "cannot load $srnic"
		return
	fi
	for m in "$@"; do
		before=$(suite_list)
		case $m in
		*.ko) name=$(modname "$m"); load_ko "$m" && ok=1 || ok=0 ;;
		*) name=$(modprobe -R "$m" 2>/dev/null || echo "$m"); modprobe "$m" && ok=1 || ok=0 ;;
		esac
		if [ $ok -eq 0 ]; then
			err "cannot load $m"
			n=$((n + 1))
			echo "not ok $n $name # module failed to load" >>"$out/kunit/suites.ktap"
			continue
		fi
		loaded="$name $loaded"
		suites=$(suite_list | grep -vxF -f <(echo "$before") || true)
		if [ -z "$suites" ]; then
			err "$m: no KUnit suite appeared in $dbg/kunit"
			n=$((n + 1))
			echo "not ok $n $name # no KUnit suite" >>"$out/kunit/suites.ktap"
			continue
		fi
		for s in $suites; do
			n=$((n + 1))
			cp "$dbg/kunit/$s/results" "$out/kunit/$s.debugfs.txt"
			suite_ktap "$s" "$n" >>"$out/kunit/suites.ktap"
		done
		say "$name: suite(s) $(echo "$suites" | tr '\n' ' ')"
	done
	{ echo "KTAP version 1"; echo "1..$n"; cat "$out/kunit/suites.ktap"; } >"$out/kunit.ktap"
	dmesg -t >"$out/kunit/dmesg.txt" 2>/dev/null
	for m in $loaded; do
		rmmod "$m" || err "rmmod $m failed"
	done
	if [ -z "${SRNIC_KUNIT_NO_SRNIC:-}" ]; then
		rmmod srnic || err "rmmod srnic failed"
	fi
}

# --- main --------------------------------------------------------------------
mode=${1:-}
[ $# -gt 0 ] && shift
case $mode in
kunit)
	run_kunit "$@"
	;;
selftests)
	# SRNIC_KMEMLEAK_UNTRACKED: tests to run after the others with
	# kmemleak off (make check's debug stage: kmemleak's bookkeeping of
	# every allocation doubles the time of everything on this kernel,
	# and the data-path tests gain the most from running without it;
	# KASAN, lockdep, UBSAN and the debug objects still watch them).
	# The others run first, then the scan, then tracking stops.
	late=()
	if [ -n "${SRNIC_KMEMLEAK_UNTRACKED:-}" ] && [ -w "$leak" ]; then
		early=()
		for t in "$@"; do
			if [[ " $SRNIC_KMEMLEAK_UNTRACKED " == *" $t "* ]]; then
				late+=("$t")
			else
				early+=("$t")
			fi
		done
		set -- "${early[@]}"
	fi
	# This script scans kmemleak after them: a test need not.
	[ -w "$leak" ] && export SRNIC_KMEMLEAK_RUNNER_SCANS=1
	# (No argument would mean every test: when all are late, none here.)
	if [ ${#late[@]} -eq 0 ] || [ $# -gt 0 ]; then
		"$top/selftests/run_kselftests.sh" "$@" | tee "$out/selftests.ktap"
		[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
	fi
	if [ ${#late[@]} -gt 0 ]; then
		kmemleak_verdict_scan "after ${*:-no test}; off for ${late[*]}"
		echo off >"$leak"
		unset SRNIC_KMEMLEAK_RUNNER_SCANS
		"$top/selftests/run_kselftests.sh" "${late[@]}" | tee -a "$out/selftests.ktap"
		[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
	fi
	# A test that died early may leave its modules behind.
	lsmod | grep -q '^srnic ' && { say "srnic still loaded after the selftests: unloading"; rmmod srnic; }
	;;
*)
	echo "usage: kunit-guest.sh kunit MODULE... | selftests [TEST...]" >&2
	exit 2
	;;
esac

if [ -w "$leak" ] && [ ${#late[@]} -eq 0 ]; then
	kmemleak_verdict_scan "after the tests"
fi
stop_watch
exit $rc
