#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kselftest-tree.sh - srnic's selftests as kernel CI runs them: dropped into
# a kernel tree as the kselftest target drivers/infiniband/srnic, run both
# ways kselftest offers, in a guest (scripts/vm.sh).
#
# Usage:
#   scripts/kselftest-tree.sh [--kernel VER] [--tests "T.sh ..."] [--timeout SECS]
#
#   --kernel VER   the guest's kernel (default: the first of scripts/kvers.sh,
#                  Debian's stock 6.1); srnic.ko must be built for it
#                  (make -s modules-all).
#   --tests LIST   the TEST_PROGS to run (default: $SRNIC_KSFT_TESTS, else
#                  "srnic_basic.sh srnic_bad_input.sh"; "all": every one).
#   --timeout SECS the guest's (default 1800).
#
# On the host: the selftests directory of Debian's linux-source-6.1
# (tools/testing/selftests and the one file of scripts/ its Makefile
# includes), extracted once into ${SRNIC_CACHE:-/var/cache/srnic}/kselftest/;
# "make -C selftests kernel-tree" copies srnic's selftests into it as
# tools/testing/selftests/drivers/infiniband/srnic/; the kselftest Makefile
# builds the C programs there, and kselftest_install.sh installs the
# target into the cache's install/ (the guest cannot build fast under TCG,
# and cannot see the host's /tmp).  In the guest, as root:
#   1. make -C tools/testing/selftests TARGETS=drivers/infiniband/srnic run_tests
#   2. install/run_kselftest.sh -c drivers/infiniband/srnic
# Each must exit 0 and print "ok N selftests: drivers/infiniband/srnic: T"
# for every test T, without "# SKIP": a skipped test shows nothing here.
# The tests load build/<kver>/srnic.ko (SRNIC_KO) and run the programs the
# kselftest build made (SRNIC_BIN: the target's own directory).
#
# Results: a directory under ${SRNIC_OUT:-/var/tmp/srnic-out}/ (run_tests.tap,
# run_kselftest.tap, their exit statuses, vm.sh's logs).
# Exit status: 0 both ways passed; 1 a failure; 2 usage.
set -u

me=kselftest-tree.sh
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "$me: error: $*" >&2; exit 1; }
msg() { echo "$me: $*" >&2; }
usage() { sed -n '/^# Usage:/,/^# On the host:/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

TARGET=drivers/infiniband/srnic

# --- guest side: kselftest-tree.sh --guest TREE INSTALL TESTS -------------------
if [ "${1:-}" = --guest ]; then
	tree=$2 inst=$3
	out=${SRNIC_OUT:?not in a scripts/vm.sh guest}
	SRNIC_KO=$top/build/$(uname -r)/srnic.ko
	SRNIC_KQP_KO=$top/build/$(uname -r)/srnic_kqp.ko
	SRNIC_TESTS=$4
	export SRNIC_KO SRNIC_KQP_KO SRNIC_TESTS
	t0=$(date +%s)
	SRNIC_BIN=$tree/tools/testing/selftests/$TARGET \
		make -C "$tree/tools/testing/selftests" TARGETS=$TARGET run_tests \
		>"$out/run_tests.tap" 2>&1
	echo $? >"$out/run_tests.rc"
	t1=$(date +%s)
	SRNIC_BIN=$inst/$TARGET "$inst/run_kselftest.sh" -c $TARGET \
		>"$out/run_kselftest.tap" 2>&1
	echo $? >"$out/run_kselftest.rc"
	t2=$(date +%s)
	echo "run_tests=$((t1 - t0)) run_kselftest=$((t2 - t1))" >"$out/times"
	exit 0
fi

# --- host side -----------------------------------------------------------------
kver='' tests=${SRNIC_KSFT_TESTS:-"srnic_basic.sh srnic_bad_input.sh"} timeout_s=1800
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || usage; kver=$2; shift 2 ;;
	--tests) [ $# -ge 2 ] || usage; tests=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "$me: unknown argument '$1'" >&2; usage ;;
	esac
done
[ -n "$kver" ] || kver=$("$top/scripts/kvers.sh" | head -n1)
[ -n "$kver" ] || die "no supported kernel installed (run make deps)"
[ -f "$top/build/$kver/srnic.ko" ] ||
	die "no build/$kver/srnic.ko (run make -s modules-all selftests-build)"
# Every test of run_kselftests.sh must be a TEST_PROGS of the Makefile.
progs=$(env -u SRNIC_TESTS make -s --no-print-directory -C "$top/selftests" -f - print <<'EOF'
include Makefile
print:
	@echo $(TEST_PROGS)
EOF
) || die "cannot read TEST_PROGS from selftests/Makefile"
runner=$(sed -n 's/^TESTS="\(.*\)"$/\1/p' "$top/selftests/run_kselftests.sh")
[ "$(echo "$progs" | tr ' ' '\n' | sort)" = "$(echo "$runner" | tr ' ' '\n' | sort)" ] ||
	die "selftests/Makefile's TEST_PROGS ($progs) are not run_kselftests.sh's TESTS ($runner)"
[ "$tests" != all ] || tests=$progs
for t in $tests; do
	[ -f "$top/selftests/$t" ] || die "no selftests/$t"
done

for c in make gcc rsync flock; do	# kselftest's install step copies with rsync
	command -v $c >/dev/null || die "'$c' not found (run scripts/deps.sh)"
done
tarball=/usr/src/linux-source-6.1.tar.xz
[ -r "$tarball" ] || die "no $tarball (run scripts/deps.sh: linux-source-6.1)"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || srcver=unknown
cache=${SRNIC_CACHE:-/var/cache/srnic}/kselftest
base=$cache/$srcver
tree=$base/linux-source-6.1
inst=$base/install
mkdir -p "$base" || die "cannot create $base"
exec 9>"$cache/.lock"
flock 9

t_start=$(date +%s)
if [ ! -f "$base/.extracted" ]; then
	msg "extracting tools/testing/selftests of $tarball -> $base"
	rm -rf "$tree"
	nice -n 10 tar -C "$base" -xJf "$tarball" linux-source-6.1/tools/testing/selftests \
		linux-source-6.1/scripts/subarch.include || die "extracting $tarball failed"
	touch "$base/.extracted"
fi
t_extract=$(date +%s)

# A fresh copy of the target every run, then the kselftest build and install.
ksft=$tree/tools/testing/selftests
make -s -C "$top/selftests" kernel-tree KTREE="$tree" || die "make kernel-tree failed"
log=$base/build.log
export SRNIC_TESTS=$tests	# selftests/Makefile: TEST_PROGS
if ! make -C "$ksft" TARGETS=$TARGET >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "the kselftest build failed (log: $log)"
fi
rm -rf "$inst"
mkdir -p "$inst"
# kselftest_install.sh passes no arguments to make: TARGETS through MAKEFLAGS
# (from the environment, its "TARGETS += ..." would add every target).
if ! (cd "$ksft" && MAKEFLAGS="TARGETS=$TARGET" ./kselftest_install.sh "$inst") >>"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "kselftest_install.sh failed (log: $log)"
fi
want=$(for t in $tests; do echo "$TARGET:$t"; done)
[ "$(cat "$inst/kselftest-list.txt")" = "$want" ] ||
	die "$inst/kselftest-list.txt is not the tests asked for: $(tr '\n' ' ' <"$inst/kselftest-list.txt")"
for f in $tests srnic_vtest srnic_rc_test srnic_memcpy_bw srnic_ops_test srnic_hostile \
	settings config; do
	[ -e "$inst/$TARGET/$f" ] || die "kselftest_install.sh did not install $f"
done

# Until the tests find their neighbours beside themselves: they name
# "$SRNIC_TOP/selftests/...", SRNIC_TOP being srnic_lib.sh's directory's parent.
for d in "$ksft/drivers/infiniband" "$inst/drivers/infiniband"; do
	if grep -qs 'SRNIC_TOP/selftests/' "$d/srnic/"*.sh; then
		ln -sfn srnic "$d/selftests"
	else
		rm -f "$d/selftests"
	fi
done
t_built=$(date +%s)
msg "kernel tree $tree: built and installed ($((t_built - t_extract)) s; tests: $tests)"

outbase=${SRNIC_OUT:-/var/tmp/srnic-out}
mkdir -p "$outbase"
out=$(mktemp -d "$(realpath "$outbase")/kselftest-tree-$(date +%Y%m%d-%H%M%S)-XXXX")
cd "$top" || exit 1
"$top/scripts/vm.sh" --kernel "$kver" --timeout "$timeout_s" --fail-on-splat --out "$out" -- \
	"$top/scripts/kselftest-tree.sh" --guest "$tree" "$inst" "$tests"
vmrc=$?
t_ran=$(date +%s)

fail=0
[ $vmrc -eq 0 ] || { msg "FAILED: the guest (vm.sh exit $vmrc; $out/console.log)"; fail=1; }
# check WAY: its exit status and one "ok" line per test, none skipped.
check() {
	local way=$1 tap=$out/$1.tap rc t ok=0
	rc=$(cat "$out/$way.rc" 2>/dev/null || echo none)
	if [ ! -s "$tap" ]; then
		msg "FAILED: $way: no output"
		return 1
	fi
	echo "$way (exit $rc):"
	grep -E '^(not )?ok [0-9]+ selftests: ' "$tap" | sed 's/^/  /'
	[ "$rc" = 0 ] || { msg "FAILED: $way exited $rc"; ok=1; }
	if grep -qE '^not ok [0-9]+ selftests: ' "$tap"; then
		msg "FAILED: $way: a test failed ($tap)"
		ok=1
	fi
	for t in $tests; do
		if ! grep -qE "^ok [0-9]+ selftests: $TARGET: ${t//./\\.}\$" "$tap"; then
			msg "FAILED: $way: no 'ok N selftests: $TARGET: $t' (failed, skipped or not run)"
			ok=1
		fi
	done
	return $ok
}
check run_tests || fail=1
check run_kselftest || fail=1

times=$(cat "$out/times" 2>/dev/null)
msg "times: extract $((t_extract - t_start)) s, build+install $((t_built - t_extract)) s," \
	"guest $((t_ran - t_built)) s (${times:-no times}); results in $out"
if [ $fail -ne 0 ]; then
	msg "FAILED"
	exit 1
fi
msg "PASSED"
exit 0
