#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kunit.sh - make kunit: srnic's KUnit suites, or its selftests, on the
# debug test kernel (KASAN, lockdep, UBSAN, kmemleak, debugobjects...).
#
# Usage:
#   scripts/kunit.sh [--timeout SECS] [--mem MB] [MODULE.ko|NAME...]
#       Build the test kernel if needed (scripts/testkernel.sh) and srnic for
#       it, boot it (scripts/vm.sh --fail-on-splat), load srnic.ko and then
#       each KUnit module (default: build/<kver>/kunit/*.ko; if there are
#       none yet, the kernel's own example suites); parse the KTAP with the
#       kernel's kunit.py and print a summary.  A NAME is a module of the
#       test kernel (e.g. list-test).
#   scripts/kunit.sh --example [--timeout SECS]
#       The known-good in-tree suites (kunit-example-test list-test): checks
#       the plumbing.
#   scripts/kunit.sh --selftests [--timeout SECS] [--mem MB] [TEST...]
#       selftests/run_kselftests.sh [TEST...] in the test kernel, so that the
#       sanitizers watch the real data path.
#   scripts/kunit.sh --parse FILE
#       Only parse and summarize a KTAP file (no kernel, no guest).
#
# Every run also scans kmemleak after the tests: a leak whose backtrace is
# in srnic (or in an unloaded module's address range srnic had) fails the
# run; others are warnings.  Results: a directory under ${SRNIC_OUT:-/var/tmp/srnic-out}/
# (kunit.ktap, kunit.json, selftests.ktap, kmemleak*.txt, dmesg.log, ...).
#
# Exit status: 0 all passed; 1 a failed/crashed case, no test run, a kernel
# splat, an srnic leak, or a build/boot failure; 2 usage.
set -u

me=kunit.sh
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "$me: error: $*" >&2; exit 1; }
msg() { echo "$me: $*" >&2; }
usage() { sed -n '/^# Usage:/,/^# Every run/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

mode=kunit timeout_s='' mem_mb='' parse_file=''
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--selftests) mode=selftests; shift ;;
	--example) mode=example; shift ;;
	--parse) [ $# -ge 2 ] || usage; mode=parse; parse_file=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--mem) [ $# -ge 2 ] || usage; mem_mb=$2; shift 2 ;;
	-h|--help) usage ;;
	--) shift; args+=("$@"); break ;;
	-*) echo "$me: unknown option '$1'" >&2; usage ;;
	*) args+=("$1"); shift ;;
	esac
done
EXAMPLE_MODULES="kunit-example-test list-test"

# --- summaries ---------------------------------------------------------------

# parse_ktap KTAP JSON: kunit.py's own report, then one line per suite and
# the totals.  Fails on any failed or crashed case, or when none ran.
parse_ktap() {
	local ktap=$1 json=$2 prc
	[ -s "$ktap" ] || { msg "FAILED: no KTAP results ($ktap missing or empty)"; return 1; }
	python3 "$TK_SRC/tools/testing/kunit/kunit.py" parse --json="$json" "$ktap" |
		grep -v '^\[[0-9:]*\] Test results stored in'
	prc=${PIPESTATUS[0]}
	[ -s "$json" ] || { msg "FAILED: kunit.py parse wrote no JSON (exit $prc)"; return 1; }
	python3 - "$json" "$prc" <<'EOF'
import json, sys
top = json.load(open(sys.argv[1]))
prc = int(sys.argv[2])
rank = {"SKIP": 0, "PASS": 1, "FAIL": 2, "ERROR": 3}
def worst(group):
	st = [c["status"] for c in group["test_cases"]] + [worst(g) for g in group["sub_groups"]]
	if not st:
		return "ERROR"
	w = max(st, key=lambda s: rank.get(s, 3))
	return w if w != "SKIP" or all(s == "SKIP" for s in st) else "PASS"
tot = {"PASS": 0, "FAIL": 0, "SKIP": 0, "ERROR": 0}
bad = []
nsuites = 0
print("kunit summary:")
for s in top["sub_groups"] + top["test_cases"]:
	nsuites += 1
	if "sub_groups" not in s:	# a suite without cases (e.g. a module that did not load)
		print(f"  {s['name']:40s} {s['status']}: no test cases")
		bad.append(s["name"])
		tot["ERROR"] += 1
		continue
	cnt = {"PASS": 0, "FAIL": 0, "SKIP": 0, "ERROR": 0}
	for c in s["test_cases"]:
		cnt[c["status"] if c["status"] in cnt else "FAIL"] += 1
		if c["status"] in ("FAIL", "ERROR"):
			bad.append(f"{s['name']}.{c['name'] or '<missing result>'} ({c['status']})")
	for g in s["sub_groups"]:	# a parameterized case
		st = worst(g)
		cnt[st] += 1
		if st in ("FAIL", "ERROR"):
			bad.append(f"{s['name']}.{g['name']} ({st})")
	n = sum(cnt.values())
	for k in tot:
		tot[k] += cnt[k]
	print(f"  {s['name']:40s} {n:3d} cases: {cnt['PASS']} passed, {cnt['FAIL']} failed,"
	      f" {cnt['SKIP']} skipped, {cnt['ERROR']} crashed")
ncases = sum(tot.values())
print(f"kunit: {nsuites} suites, {ncases} cases: {tot['PASS']} passed, {tot['FAIL']} failed,"
      f" {tot['SKIP']} skipped, {tot['ERROR']} crashed")
for b in bad:
	print(f"kunit: FAILED: {b}")
ok = prc == 0 and not bad and tot["PASS"] + tot["SKIP"] > 0 and ncases > 0
if ncases == 0:
	print("kunit: FAILED: no test case ran")
elif prc != 0 and not bad:
	print(f"kunit: FAILED: kunit.py parse reported errors (exit {prc}), see above")
sys.exit(0 if ok else 1)
EOF
}

# kmemleak_verdict DIR: sort the leaks found after the tests by owner.
kmemleak_verdict() {
	local d=$1
	if [ -e "$d/kmemleak-unavailable" ]; then
		msg "warning: kmemleak was not available in the guest"
		return 0
	fi
	[ -f "$d/kmemleak.txt" ] || { msg "FAILED: no kmemleak scan result (guest died early?)"; return 1; }
	python3 - "$d/kmemleak.txt" "$d/modules-seen.txt" "$d/kmemleak-boot.txt" <<'EOF'
import re, sys
leaks = open(sys.argv[1], errors="replace").read()
ranges = []
try:
	for line in open(sys.argv[2]):
		try:	# a read racing a module load may be torn: skip it
			name, size, addr = line.split()
			base = int(addr, 16)
			if base:
				ranges.append((name, base, base + int(size)))
		except ValueError:
			pass
except FileNotFoundError:
	pass
try:
	boot = open(sys.argv[3], errors="replace").read().count("unreferenced object")
	boot = f" ({boot} from boot, cleared before the tests)"
except FileNotFoundError:
	boot = ""
# "    [<%p>] %pS", %p may read "(____ptrval____)"
frame = re.compile(r"^[ \t]+\[<[^>]*>\][ \t]+(\S+)(?:[ \t]+\[([^\]]+)\])?", re.M)
mine, maybe, other = [], [], []
for block in re.split(r"(?m)^(?=unreferenced object)", leaks):
	if not block.startswith("unreferenced object"):
		continue
	owner = None
	for sym, mod in frame.findall(block):
		if (mod or "").startswith("srnic") or sym.startswith("srnic"):
			owner = "srnic"
			break
		if sym.startswith("0x"):	# a module unloaded since
			a = int(sym, 16)
			names = {n for n, lo, hi in ranges if lo <= a < hi}
			if any(n.startswith("srnic") for n in names):
				owner = ("srnic:" if all(n.startswith("srnic") for n in names)
					 else "maybe:") + ",".join(sorted(names))
	(maybe if (owner or "").startswith("maybe:") else mine if owner else other).append(
		(owner, block.rstrip()))
print(f"kmemleak: {len(mine) + len(maybe)} leak(s) attributed to srnic, {len(other)} other(s){boot}")
for owner, b in mine + maybe:
	kind, _, names = owner.partition(":")
	note = "" if not names else f" [in unloaded module {names}]" if kind == "srnic" \
		else f" [in an unloaded module's range, one of {names}: probably srnic]"
	print(f"kmemleak: FAILED: srnic leak{note}:\n" + "\n".join("    " + l for l in b.splitlines()))
for _, b in other:
	print("kmemleak: warning: leak not attributed to srnic:\n" +
	      "\n".join("    " + l for l in b.splitlines()[:14]))
sys.exit(1 if mine or maybe else 0)
EOF
}

if [ $mode = parse ]; then
	[ -r "$parse_file" ] || die "cannot read $parse_file"
	env=$("$top/scripts/testkernel.sh" --print 2>/dev/null) ||
		die "the test kernel is not built (its kunit.py is used): run scripts/testkernel.sh"
	eval "$env"
	json=$(mktemp "${TMPDIR:-/tmp}/kunit-json.XXXXXX")
	parse_ktap "$(realpath "$parse_file")" "$json"
	rc=$?
	rm -f "$json"
	exit $rc
fi

# --- the kernel and srnic for it ----------------------------------------------

t_start=$(date +%s)
env=$("$top/scripts/testkernel.sh") || die "no test kernel"
eval "$env"
msg "test kernel $TK_VER ($TK_IMAGE)"
make -C "$top" -s modules KVER="$TK_VER" KDIR="$TK_KDIR" || die "building srnic for $TK_VER failed"
[ -f "$top/build/$TK_VER/srnic.ko" ] || die "no $top/build/$TK_VER/srnic.ko"
if [ $mode = selftests ]; then
	make -C "$top" -s selftests-build || die "make selftests-build failed"
fi

mods=()
case $mode in
example)
	read -ra mods <<<"$EXAMPLE_MODULES" ;;
kunit)
	if [ ${#args[@]} -gt 0 ]; then
		for m in "${args[@]}"; do
			if [ -f "$m" ]; then mods+=("$(realpath "$m")")
			elif [[ $m == *.ko ]]; then die "no such module file: $m"
			else mods+=("$m")
			fi
		done
	else
		# The KUnit modules this build made (stale copies may linger).
		order=$top/build/$TK_VER/modules.order
		while read -r m; do
			m=${m%.o}; m=${m%.ko}.ko
			[[ $m == /* ]] || m=$top/build/$TK_VER/$m
			[ -f "$m" ] && mods+=("$m")
		done < <(grep -E '(^|/)kunit/[^/]+\.k?o$' "$order" 2>/dev/null)
		if [ ${#mods[@]} -eq 0 ]; then
			msg "no $top/build/$TK_VER/kunit/*.ko: running the in-tree example suites ($EXAMPLE_MODULES)"
			read -ra mods <<<"$EXAMPLE_MODULES"
		fi
	fi ;;
esac

base=${SRNIC_OUT:-/var/tmp/srnic-out}
mkdir -p "$base"
out=$(mktemp -d "$(realpath "$base")/$mode-$(date +%Y%m%d-%H%M%S)-XXXX")
t_built=$(date +%s)

# --- the guest ---------------------------------------------------------------

cd "$top" || exit 1
if [ $mode = selftests ]; then
	guest=(selftests "${args[@]}")
	timeout_s=${timeout_s:-3600}
	mem_mb=${mem_mb:-3072}
else
	guest=(kunit "${mods[@]}")
	timeout_s=${timeout_s:-900}
	# Small: kmemleak's scan time grows with the guest's memory.
	mem_mb=${mem_mb:-1024}
fi
scripts/vm.sh --kernel "$TK_IMAGE" --moddir "$TK_MODDIR" --fail-on-splat --mem "$mem_mb" \
	--timeout "$timeout_s" --out "$out" -- "$top/scripts/kunit-guest.sh" "${guest[@]}"
vmrc=$?
t_ran=$(date +%s)

fail=0
splat=0
case $vmrc in
0) ;;
124|125|130)
	msg "FAILED: the guest did not finish (vm.sh exit $vmrc; console: $out/console.log)"
	fail=1 ;;
126)
	# vm.sh's splat check also matches kmemleak's "N new suspected memory
	# leaks" line, printed by our own scans: those are judged below, by
	# owner.  Any other splat line stands.
	# shellcheck source=selftests/kernel_log.sh
	. "$top/selftests/kernel_log.sh"
	klog=$out/dmesg.log
	[ -s "$klog" ] || klog=$out/console.log
	rest=$(kernel_splats "$klog" | grep -avE "$KERNEL_KMEMLEAK_SCAN_RE" || true)
	if [ -n "$rest" ]; then
		splat=1
		fail=1
		msg "FAILED: kernel splat (sanitizer/lockdep/WARN report) in $klog"
	else
		msg "note: the only splat lines are kmemleak's scan summaries: leaks are judged below"
		grc=$(cat "$out/exit-status" 2>/dev/null || echo 125)
		[ "$grc" = 0 ] || { msg "FAILED: guest command exit status $grc"; fail=1; }
	fi ;;
*)
	msg "FAILED: guest command exit status $vmrc (output: $out/output.log)"
	fail=1 ;;
esac

echo
if [ $mode = selftests ]; then
	if [ -s "$out/selftests.ktap" ]; then
		echo "selftests on $TK_VER:"
		grep -E '^(not )?ok [0-9]+ ' "$out/selftests.ktap" | sed 's/^/  /'
		grep -E '^  +not ok ' "$out/selftests.ktap" | sed 's/^ */  failed subtest: /'
		grep -E '^# Totals' "$out/selftests.ktap" | sed 's/^# /  /'
	else
		msg "FAILED: no selftests output"
		fail=1
	fi
else
	parse_ktap "$out/kunit.ktap" "$out/kunit.json" || fail=1
fi
kmemleak_verdict "$out" || fail=1

if [ $splat -eq 1 ]; then
	msg "kernel splat lines:"
	printf '%s\n' "$rest" | sed 's/^/    /' >&2
fi
msg "times: kernel+build $((t_built - t_start)) s, guest $((t_ran - t_built)) s; results in $out"
if [ $fail -ne 0 ]; then
	msg "FAILED"
	exit 1
fi
msg "PASSED"
exit 0
