#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run srnic's selftests (inside a guest) as one KTAP stream, the way the
# kernel's kselftest runner does: each test program is one top-level test,
# its own TAP lines nested below it. Exit 0 when none failed.
#
#	run_kselftests.sh [TEST...]	(default: every test in TESTS below,
#					less $SRNIC_SELFTESTS_SKIP)
cd "$(dirname "$0")" || exit 1

TESTS="vm_smoke.sh srnic_basic.sh srnic_bad_input.sh srnic_hostile.sh srnic_vfuzz.sh srnic_fuzz_rx.sh srnic_kqp.sh rdma_core_tests.sh srnic_cm.sh srnic_clients.sh srnic_nvme.sh srnic_nfs.sh srnic_rc.sh srnic_interop.sh srnic_matrix.sh srnic_wire.sh srnic_soak.sh srnic_noipv6.sh"
[ $# -gt 0 ] && TESTS="$*"
# SRNIC_SELFTESTS_SKIP: tests this run leaves out (make check's gate on its
# second kernel: the wire check, whose packets the same code builds).
for t in ${SRNIC_SELFTESTS_SKIP:-}; do
	TESTS=$(printf '%s\n' $TESTS | grep -vx -- "$t" | tr '\n' ' ')
done

n=0 pass=0 fail=0 skip=0
echo "TAP version 13"
echo "1..$(wc -w <<<"$TESTS")"
for t in $TESTS; do
	n=$((n + 1))
	echo "# selftests: srnic: $t"
	start=$(date +%s)
	./"$t" 2>&1 | sed 's/^/  /'
	rc=${PIPESTATUS[0]}
	secs=$(($(date +%s) - start))
	case $rc in
	0) echo "ok $n selftests: srnic: $t (${secs}s)"; pass=$((pass + 1)) ;;
	4) echo "ok $n selftests: srnic: $t # SKIP"; skip=$((skip + 1)) ;;
	*) echo "not ok $n selftests: srnic: $t # exit=$rc (${secs}s)"; fail=$((fail + 1)) ;;
	esac
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail -eq 0 ]
