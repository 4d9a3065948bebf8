#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kunit-intree.sh - srnic dropped into a kernel tree, its KUnit suites run
# the way kernel CI runs them:
#   ./tools/testing/kunit/kunit.py run --kunitconfig=drivers/infiniband/sw/srnic
#
# Usage:
#   scripts/kunit-intree.sh [--arch um|x86_64] [--timeout SECS] [--jobs N]
#
#   --arch     um (default): User Mode Linux, the kernel is a host program;
#              x86_64: a bzImage booted in QEMU (TCG here).
#   --timeout  kunit.py's limit for running the tests (default 600 s; the
#              build is not counted).
#   --jobs     make -j (default: nproc).
#
# The tree: Debian's linux-source-6.1 (/usr/src/linux-source-6.1.tar.xz),
# extracted once into ${SRNIC_CACHE:-/var/cache/srnic}/intree/<version>/ and
# reused; kunit.py's build directories (build-<arch>/) sit beside it, so a
# second run only rebuilds what changed.  Each run drops the driver in
# afresh as drivers/infiniband/sw/srnic/: its sources, Kconfig, Makefile
# and .kunitconfig, the suites of kunit/ beside them, include/srnic/ under
# include/; and hooks it into drivers/infiniband/Kconfig and
# drivers/infiniband/sw/Makefile (once).
#
# Passes when kunit.py passes and every suite of kunit/ ran, every case
# passed (none skipped, crashed or missing).  Results: a directory under
# ${SRNIC_OUT:-/var/tmp/srnic-out}/ (kunit.log, kunit.json).
# Exit status: 0 passed; 1 failed; 2 usage.
set -u

me=kunit-intree.sh
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "$me: error: $*" >&2; exit 1; }
msg() { echo "$me: $*" >&2; }
usage() { sed -n '/^# Usage:/,/^# The tree:/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

arch=um timeout_s=600 jobs=$(nproc)
while [ $# -gt 0 ]; do
	case $1 in
	--arch) [ $# -ge 2 ] || usage; arch=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "$me: unknown argument '$1'" >&2; usage ;;
	esac
done
case $arch in
um|x86_64) ;;
*) echo "$me: --arch um or x86_64" >&2; usage ;;
esac
for c in make gcc flex bison bc python3 xz tar flock; do
	command -v $c >/dev/null || die "'$c' not found (run scripts/deps.sh)"
done
[ "$arch" = um ] || command -v qemu-system-x86_64 >/dev/null ||
	die "qemu-system-x86_64 not found (run scripts/deps.sh)"

tarball=/usr/src/linux-source-6.1.tar.xz
[ -r "$tarball" ] || die "no $tarball (run scripts/deps.sh: linux-source-6.1)"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || srcver=unknown
cache=${SRNIC_CACHE:-/var/cache/srnic}/intree
base=$cache/$srcver
tree=$base/linux-source-6.1
bld=$base/build-$arch
mkdir -p "$base" || die "cannot create $base"
exec 9>"$cache/.lock"
if ! flock -n 9; then
	msg "waiting for another kunit-intree.sh ($cache/.lock)"
	flock 9
fi

t_start=$(date +%s)
if [ ! -f "$base/.extracted" ]; then
	msg "extracting $tarball -> $base"
	rm -rf "$tree" "$base"/build-*
	nice -n 10 tar -C "$base" -xJf "$tarball" || die "extracting $tarball failed"
	[ -f "$tree/tools/testing/kunit/kunit.py" ] || die "no kunit.py in $tree"
	touch "$base/.extracted"
fi

# --- drop the driver in ---------------------------------------------------------
# cp -p keeps the mtimes: unchanged files are not rebuilt.
drv=$tree/drivers/infiniband/sw/srnic
rm -rf "$drv"
mkdir -p "$drv/include/srnic"
cd "$top" || exit 1
cp -p drivers/infiniband/sw/srnic/*.[ch] drivers/infiniband/sw/srnic/Kconfig \
	drivers/infiniband/sw/srnic/Makefile drivers/infiniband/sw/srnic/.kunitconfig \
	kunit/srnic_*_test.c "$drv/" || die "copying the driver failed"
cp -p include/srnic/*.h "$drv/include/srnic/" || die "copying include/srnic failed"

# The Kconfig inside the "if INFINIBAND_USER_ACCESS || !INFINIBAND_USER_ACCESS"
# block, beside siw's, so that srnic=y cannot link against a modular uverbs.
kc=$tree/drivers/infiniband/Kconfig
src_srnic='source "drivers/infiniband/sw/srnic/Kconfig"'
if ! grep -qxF "$src_srnic" "$kc"; then
	grep -qx 'source "drivers/infiniband/sw/siw/Kconfig"' "$kc" || die "$kc: no siw line"
	sed -i "\\|^source \"drivers/infiniband/sw/siw/Kconfig\"\$|a $src_srnic" "$kc"
	grep -qxF "$src_srnic" "$kc" || die "$kc: adding the srnic line failed"
fi
mk=$tree/drivers/infiniband/sw/Makefile
# shellcheck disable=SC2016 # a make variable
obj_srnic='obj-$(CONFIG_RDMA_SRNIC)		+= srnic/'
grep -qxF "$obj_srnic" "$mk" || echo "$obj_srnic" >>"$mk"

# What must run: every suite of kunit/, every case.
suites=$(sed -n 's/^[[:space:]]*\.name[[:space:]]*=[[:space:]]*"\(srnic[a-z0-9_]*\)",$/\1/p' \
	kunit/srnic_*_test.c | sort)
nsuites=$(echo "$suites" | wc -w)
ncases=$(cat kunit/srnic_*_test.c | grep -cE '^[[:space:]]*KUNIT_CASE(_PARAM)?\(')
[ "$nsuites" -gt 0 ] || die "no suites found in kunit/"

# --- kunit.py ------------------------------------------------------------------
base_out=${SRNIC_OUT:-/var/tmp/srnic-out}
mkdir -p "$base_out"
out=$(mktemp -d "$(realpath "$base_out")/kunit-intree-$arch-$(date +%Y%m%d-%H%M%S)-XXXX")
msg "kunit.py run --arch=$arch ($nsuites suites, $ncases cases expected; build dir $bld)"
unset KBUILD_OUTPUT KCONFIG_CONFIG ARCH CROSS_COMPILE CC LD KCFLAGS KCPPFLAGS \
	INSTALL_MOD_PATH M V W C MAKEFLAGS MAKELEVEL MFLAGS
cd "$tree" || exit 1
t_run=$(date +%s)
nice -n 10 python3 tools/testing/kunit/kunit.py run --kunitconfig=drivers/infiniband/sw/srnic \
	--arch="$arch" --build_dir="$bld" --jobs="$jobs" --timeout="$timeout_s" \
	--json="$out/kunit.json" >"$out/kunit.log" 2>&1
krc=$?
t_end=$(date +%s)
grep -vE '^\[[0-9:]+\] +(Elapsed time|Test results stored)' "$out/kunit.log" |
	grep -E '\] (=+|Starting|Configuring|Building|Populating|Testing|Completed|.*(PASSED|FAILED|SKIPPED|CRASHED|Error|error))' |
	sed 's/^/  /' | tail -n 80

fail=0
[ $krc -eq 0 ] || { msg "FAILED: kunit.py exited $krc (log: $out/kunit.log)"; fail=1; }
# shellcheck disable=SC2086 # one argument per suite
python3 - "$out/kunit.json" "$ncases" $suites <<'EOF' || fail=1
import json, sys
path, want_cases, want = sys.argv[1], int(sys.argv[2]), set(sys.argv[3:])
try:
	top = json.load(open(path))
except (OSError, ValueError) as e:
	print(f"kunit-intree: FAILED: no results ({e})")
	sys.exit(1)
ok = True
seen, ncases, npass = set(), 0, 0
for s in top.get("sub_groups", []):
	if not s["name"].startswith("srnic"):
		continue
	seen.add(s["name"])
	cases = [(c["name"], c["status"]) for c in s.get("test_cases", [])]
	cases += [(g["name"], g["status"]) for g in s.get("sub_groups", [])]
	good = sum(st == "PASS" for _, st in cases)
	ncases += len(cases)
	npass += good
	print(f"  {s['name']:24s} {len(cases):3d} cases, {good} passed")
	for name, st in cases:
		if st != "PASS":
			print(f"kunit-intree: FAILED: {s['name']}.{name}: {st}")
			ok = False
for name in sorted(want - seen):
	print(f"kunit-intree: FAILED: suite {name} did not run")
	ok = False
if ncases != want_cases:
	print(f"kunit-intree: FAILED: {ncases} cases ran, kunit/ has {want_cases}")
	ok = False
print(f"kunit-intree: {len(seen)} suites, {ncases} cases, {npass} passed")
sys.exit(0 if ok else 1)
EOF

msg "times: $arch build+run $((t_end - t_run)) s (extract and drop-in $((t_run - t_start)) s); results in $out"
if [ $fail -ne 0 ]; then
	msg "FAILED"
	exit 1
fi
msg "PASSED"
exit 0
