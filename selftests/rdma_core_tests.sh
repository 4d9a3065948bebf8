#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own test suite (python3-pyverbs ships it under
# /usr/share/doc/rdma-core/tests) against srnic, and against rdma_rxe in the
# same guest as the reference: per test file, pass/fail/skip counts for
# both, every srnic skip with its reason.
#
#   rdma_core_tests.sh [-x FILE] [MODULE...]
#
# The default modules (or $SRNIC_RDMA_CORE_MODULES): every test file that
# is not vendor-specific (mlx5, efa, CUDA): device, PD, CQ, MR, QP,
# addresses, atomics, CQ events, extended QPs and CQs, relaxed ordering,
# shared PD, parent domain, ODP, fork, rdma_cm, flow steering, RSS, tag
# matching. The last three need raw packet QPs or tag matching, which no
# software RoCE device offers, and the suite skips them; test_rdmacm
# finds a device's IP address through /sys/class/infiniband/DEV/device/
# net, which a device on a veth (no parent device) lacks: it skips too,
# for srnic and rdma_rxe alike (rdma_cm is tested by srnic_cm.sh). FILE (default rdma_core_excluded.txt) lists tests srnic
# does not run yet, one regex per line, each group under a "#@ reason"
# line; they are reported as skipped with that reason. Every other test
# must pass or be skipped by the suite itself.
. "$(dirname "$0")/srnic_lib.sh"

srnic_require
require_cmd /usr/bin/python3
[ -d /usr/share/doc/rdma-core/tests ] || ktap_skip_rest "python3-pyverbs tests not installed"

EXCLUDE_FILE=$SRNIC_SELFTESTS/rdma_core_excluded.txt
while getopts x: o; do
	case $o in
	x) EXCLUDE_FILE=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
EXCLUDES=$(grep -v '^#' "$EXCLUDE_FILE")
DEFAULT_MODULES="test_device test_pd test_cq test_mr test_qp test_addr \
	test_atomic test_cq_events test_qpex test_cqex test_relaxed_ordering \
	test_shared_pd test_parent_domain test_odp test_fork test_rdmacm \
	test_flow test_rss_traffic test_tag_matching"
MODULES=${*:-${SRNIC_RDMA_CORE_MODULES:-$DEFAULT_MODULES}}

# exclusion_reason NAME: the "#@" reason of the group whose regex matches.
exclusion_reason() {
	awk -v name="$1" '/^#@/ { why = substr($0, 4); next }
		/^#/ || !NF { next }
		name ~ $0 { print why; exit }' "$EXCLUDE_FILE"
}

# The suite, unpacked where the guest may write.
TESTS=$SRNIC_TMP/rdma-core/tests
mkdir -p "$TESTS"
cp -r /usr/share/doc/rdma-core/tests/. "$TESTS/"
gunzip -f "$TESTS"/*.gz

ktap_print_header
ktap_set_plan $(($(wc -w <<<"$MODULES") + 3))
dmesg_mark

srnic_load || srnic_bail "no module"
defer srnic_unload
srnic_two_hosts || srnic_bail "veth"
srnic_link_add "$NS_A" srnic0 "$VETH_A" || srnic_bail "no srnic0"
defer rdma link delete srnic0
wait_until 10 rdma_gid_index srnic0 "$VETH_A_IP4" >/dev/null

# rdma_rxe as the reference: the initial namespace, on its own veth
# (SRNIC_RDMA_CORE_NO_REF=1: srnic only, e.g. where the sanitizers would
# only slow the reference down).
have_rxe=0
if [ -z "${SRNIC_RDMA_CORE_NO_REF:-}" ] && modprobe rdma_rxe 2>/dev/null; then
	setup_veth_pair - "$NS_B"
	rdma link add rxe0 type rxe netdev "$VETH_A" && have_rxe=1
	wait_until 10 rdma_gid_index rxe0 "$VETH_A_IP4" >/dev/null
fi

# run_suite NS DEV MODULE...: "RESULT|test.id[|why]" lines
# (rdma_core_run.py), every file in one Python process (its start and
# pyverbs' import cost 2-4 s a file under TCG: one process instead of 19
# saves about 40 s a kernel). Each file's lines are picked out by
# module_lines.
run_suite() {
	local ns=$1 dev=$2 out=${SRNIC_OUT:-$SRNIC_TMP}
	local nsexec=()
	shift 2
	[ "$ns" = - ] || nsexec=(ip netns exec "$ns")
	(cd "$TESTS" && timeout 1800 "${nsexec[@]}" /usr/bin/python3 \
		"$SRNIC_SELFTESTS/rdma_core_run.py" "$TESTS" "$dev" "$@" \
		2>"$out/$dev-rdma-core.log")
}

# module_lines MODULE: the lines of stdin that are that file's: a test's
# id (tests.MODULE.Class.test) or a set-up error's
# ("setUpClass (tests.MODULE.Class)", "setUpModule (tests.MODULE)").
module_lines() {
	grep -E "^[A-Z]+\|[^|]*tests\.$1([.)]|\$|\|)" || :
}

excluded() {	# NAME
	[ -n "$EXCLUDES" ] && grep -qE -f <(printf '%s\n' "$EXCLUDES") <<<"$1"
}

total_p=0 total_f=0 total_s=0
table="file|srnic pass/fail/skip|rdma_rxe pass/fail/skip"
# shellcheck disable=SC2086 # MODULES: words
all_srn=$(run_suite "$NS_A" srnic0 $MODULES)
all_ref=
# shellcheck disable=SC2086
[ $have_rxe -eq 1 ] && all_ref=$(run_suite - rxe0 $MODULES)
for mod in $MODULES; do
	srn=$(module_lines "$mod" <<<"$all_srn")
	ref=$(module_lines "$mod" <<<"$all_ref")
	p=0 f=0 s=0 bad=
	printf '%s\n' "$srn" > "${SRNIC_OUT:-$SRNIC_TMP}/srnic0-$mod.results"
	printf '%s\n' "$ref" > "${SRNIC_OUT:-$SRNIC_TMP}/rxe0-$mod.results"
	while IFS='|' read -r res name why; do
		[ -n "$res" ] || continue
		if excluded "$name"; then
			s=$((s + 1))
			ktap_print_msg "  $name: skipped: $(exclusion_reason "$name") (was $res)"
			continue
		fi
		case $res in
		PASS) p=$((p + 1)) ;;
		SKIP) s=$((s + 1)); ktap_print_msg "  $name: skipped $why" ;;
		FAIL)
			f=$((f + 1))
			ktap_print_msg "  $name: FAILED: $why"
			if grep -q "^PASS|$name\$" <<<"$ref"; then
				bad="$bad $name(rxe passes)"
			else
				bad="$bad $name"
			fi ;;
		esac
	done <<<"$srn"
	rp=$(grep -c '^PASS' <<<"$ref"); rf=$(grep -c '^FAIL' <<<"$ref"); rs=$(grep -c '^SKIP' <<<"$ref")
	[ $have_rxe -eq 1 ] || { rp=-; rf=-; rs=-; }
	table="$table
$mod|$p/$f/$s|$rp/$rf/$rs"
	total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
	# A file whose every test the suite skips (no such feature) is fine.
	if [ $f -eq 0 ] && [ $((p + s)) -gt 0 ]; then
		ktap_test_pass "$mod: $p passed, $s skipped"
	else
		ktap_print_msg "failed:$bad"
		ktap_test_fail "$mod: $p passed, $f failed, $s skipped"
	fi
done
column -t -s'|' <<<"$table" | sed 's/^/# /'
printf '%s\n' "$table" > "${SRNIC_OUT:-$SRNIC_TMP}/rdma-core-tests-$(uname -r).txt"
ktap_print_msg "srnic total: $total_p passed, $total_f failed, $total_s skipped"

# Before rdma_rxe goes: its unload removes srnic devices too.
ktap_test_result "rdma link delete srnic0" rdma link delete srnic0
[ $have_rxe -eq 1 ] && { rdma link delete rxe0; rmmod rdma_rxe; }
ktap_test_result "rmmod srnic" srnic_unload
ktap_kernel_log_clean
ktap_finished
