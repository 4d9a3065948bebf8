# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for srnic's kselftest-style shell tests.  Source it from bash:
#
#	. "$(dirname "$0")/lib.sh"
#
# The tests run as root inside the QEMU guest of scripts/vm.sh (they need
# modules and namespaces); results go to stdout as KTAP/TAP, extra files to
# "$SRNIC_OUT" when set.
#
# KTAP: modelled on tools/testing/selftests/kselftest/ktap_helpers.sh
#	ktap_print_header; ktap_set_plan N
#	ktap_test_pass DESC | ktap_test_fail DESC | ktap_test_skip DESC REASON
#	ktap_test_result DESC CMD...	(pass/fail by CMD's status)
#	ktap_test_run DESC CMD...	(the same, CMD in this shell)
#	ktap_print_msg TEXT		(a "# TEXT" diagnostic line)
#	(with SRNIC_TIMES=FILE, each test point appends "SECS<TAB>TEST<TAB>
#	 N DESC" to FILE: the seconds since the previous point, for the
#	 slowest-steps list of scripts/check.sh)
#	ktap_finished			(totals; exit 1 on any fail or a plan
#					 mismatch, 4 if all skipped, else 0)
# Namespaces and cleanup: modelled on tools/testing/selftests/net/lib.sh
#	setup_ns VAR...			(VAR=<lowercase var>-XXXXXX, a new netns)
#	setup_veth_pair NS_A NS_B	(veth NS_A<->NS_B ("-": current netns),
#					 10.99.X.0/24 and fd00:99:X::/64, X
#					 allocated; permanent neighbour
#					 entries both ways;
#					 sets VETH_A VETH_B
#					 VETH_A_IP4 VETH_B_IP4 VETH_A_IP6 VETH_B_IP6)
#	defer CMD...			(run CMD at exit, last registered first)
#	cleanup_all			(run deferred cmds, delete the netns)
#	require_root; require_cmd CMD...	(skip the rest if not met)
#	wait_until SECS CMD...		(poll CMD every 0.1 s until it succeeds)
# Kernel log
#	dmesg_mark; dmesg_splats	(print BUG/WARNING/Oops/... lines logged
#					 since the mark; fails if there are none)
#	ktap_kernel_log_clean [DESC]	(one KTAP line: no splat since the mark)
# RDMA
#	rdma_gid_index DEV ADDR [PORT]	(index of the RoCE v2 GID for ADDR)
#	server_listening NS PORT	(a TCP socket or rdma_cm ID listens)

KSFT_PASS=0
KSFT_FAIL=1
KSFT_XFAIL=2
KSFT_XPASS=3
KSFT_SKIP=4
export KSFT_PASS KSFT_FAIL KSFT_XFAIL KSFT_XPASS KSFT_SKIP

KTAP_TESTNO=1
KTAP_CNT_PASS=0
KTAP_CNT_FAIL=0
KTAP_CNT_SKIP=0
KTAP_CNT_XFAIL=0
KTAP_PLAN=
KTAP_HEADER_DONE=0
KTAP_LAST_T=$EPOCHSECONDS
# In a guest of scripts/vm.sh the times go to its results folder.
if [ -z "${SRNIC_TIMES+set}" ] && [ -n "${SRNIC_OUT:-}" ]; then
	export SRNIC_TIMES=$SRNIC_OUT/times.tsv
fi

# --- KTAP --------------------------------------------------------------------

ktap_print_header() {
	[ "$KTAP_HEADER_DONE" -eq 1 ] && return
	echo "TAP version 13"
	KTAP_HEADER_DONE=1
}

ktap_print_msg() {
	echo "# $*"
}

ktap_set_plan() {
	KTAP_PLAN=$1
	echo "1..$1"
}

__ktap_test() {	# RESULT DESC [DIRECTIVE]
	local directive=${3:+ # $3} now=$EPOCHSECONDS

	echo "$1 $KTAP_TESTNO $2$directive"
	# bash's own clock and $0: no fork per test point
	if [ -n "${SRNIC_TIMES:-}" ]; then
		printf '%d\t%s\t%d %s\n' $((now - KTAP_LAST_T)) "${0##*/}" \
			"$KTAP_TESTNO" "$2" >>"$SRNIC_TIMES"
		KTAP_LAST_T=$now
	fi
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
}

ktap_test_pass() {
	__ktap_test "ok" "$1"
	KTAP_CNT_PASS=$((KTAP_CNT_PASS + 1))
}

ktap_test_fail() {
	__ktap_test "not ok" "$1"
	KTAP_CNT_FAIL=$((KTAP_CNT_FAIL + 1))
}

# ktap_test_xfail DESC REASON: a known failure that is not srnic's (the
# reason names whose, with the evidence in Documentation/srnic.rst).
ktap_test_xfail() {
	__ktap_test "ok" "$1" "XFAIL $2"
	KTAP_CNT_XFAIL=$((KTAP_CNT_XFAIL + 1))
}

ktap_test_skip() {	# DESC [REASON]
	__ktap_test "ok" "$1" "SKIP${2:+ $2}"
	KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1))
}

# ktap_test_result DESC CMD...: run CMD, pass or fail on its exit status.
# CMD's output is shown as "# " diagnostics so the TAP stream stays parsable.
ktap_test_result() {
	local desc=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ $rc -eq 0 ]; then
		ktap_test_pass "$desc"
	else
		[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
		ktap_print_msg "'$*' exited $rc"
		ktap_test_fail "$desc"
	fi
	return $rc
}

# ktap_test_run DESC CMD...: ktap_test_result with CMD in this shell, so
# that the variables it sets stay set (its output goes through a file).
ktap_test_run() {
	local desc=$1 f rc=0
	shift
	f=$(mktemp)
	"$@" >"$f" 2>&1 || rc=$?
	if [ $rc -eq 0 ]; then
		ktap_test_pass "$desc"
	else
		sed 's/^/# /' "$f"
		ktap_print_msg "'$*' exited $rc"
		ktap_test_fail "$desc"
	fi
	rm -f "$f"
	return $rc
}

ktap_print_totals() {
	echo "# Totals: pass:$KTAP_CNT_PASS fail:$KTAP_CNT_FAIL xfail:$KTAP_CNT_XFAIL xpass:0 skip:$KTAP_CNT_SKIP error:0"
}

ktap_finished() {
	local ran=$((KTAP_TESTNO - 1))

	ktap_print_totals
	if [ -n "$KTAP_PLAN" ] && [ "$ran" -ne "$KTAP_PLAN" ]; then
		ktap_print_msg "planned $KTAP_PLAN tests but ran $ran"
		exit "$KSFT_FAIL"
	fi
	[ "$KTAP_CNT_FAIL" -eq 0 ] || exit "$KSFT_FAIL"
	if [ "$KTAP_CNT_PASS" -eq 0 ] && [ "$KTAP_CNT_SKIP" -gt 0 ]; then
		exit "$KSFT_SKIP"
	fi
	exit "$KSFT_PASS"
}

# Skip whatever is left: the whole test if no plan was printed yet, else
# every remaining planned test; then exit through ktap_finished.
ktap_skip_rest() {	# REASON
	if [ -z "$KTAP_PLAN" ]; then
		ktap_print_header
		echo "1..0 # SKIP $1"
		exit "$KSFT_SKIP"
	fi
	while [ "$KTAP_TESTNO" -le "$KTAP_PLAN" ]; do
		ktap_test_skip "test $KTAP_TESTNO" "$1"
	done
	ktap_finished
}

require_root() {
	[ "$(id -u)" -eq 0 ] || ktap_skip_rest "needs root"
}

require_cmd() {	# CMD...
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || ktap_skip_rest "'$c' not installed"
	done
}

# nap SECS: sleep without a process: read's timeout on a pipe that no one
# writes to (this shell holds its only write end). A fork and exec cost
# 0.1-0.2 s of guest CPU on the debug kernel (KASAN, kmemleak, lockdep
# under TCG): a poll loop that runs /bin/sleep and date every 0.1 s keeps
# a vCPU busy there.
exec {__NAP_FD}<> <(:)
nap() {
	read -r -t "$1" -u "$__NAP_FD" _ || :
}

wait_until() {	# SECS CMD...
	local end=$((EPOCHSECONDS + $1))
	shift
	until "$@"; do
		[ "$EPOCHSECONDS" -lt "$end" ] || return 1
		nap 0.1
	done
}

# --- cleanup -----------------------------------------------------------------

DEFER_CMDS=()	# each entry: one command, already shell-quoted
NS_LIST=()

# defer CMD...: run CMD at exit (cleanup_all), the latest deferred first.
defer() {
	DEFER_CMDS+=("$(printf '%q ' "$@")")
}

cleanup_ns() {	# NS...
	local ns
	for ns in "$@"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
}

cleanup_all() {
	local i
	for ((i = ${#DEFER_CMDS[@]} - 1; i >= 0; i--)); do
		eval "${DEFER_CMDS[i]}" >/dev/null 2>&1 || true
	done
	DEFER_CMDS=()
	[ ${#NS_LIST[@]} -eq 0 ] || cleanup_ns "${NS_LIST[@]}"
	NS_LIST=()
}

# Keep the test's own exit status: the trap must not replace it.
__lib_exit() {
	local rc=$?
	cleanup_all
	exit "$rc"
}
trap __lib_exit EXIT

# --- namespaces --------------------------------------------------------------

# setup_ns VAR...: for each VAR, create netns "<var>-XXXXXX" (unique, so
# parallel runs and leftovers do not clash), bring lo up, and set VAR to its
# name.  The netns are deleted by cleanup_all.
setup_ns() {
	local var ns
	for var in "$@"; do
		ns="${var,,}-$(mktemp -u XXXXXX)"
		ip netns add "$ns" || return 1
		NS_LIST+=("$ns")
		ip -n "$ns" link set lo up || return 1
		printf -v "$var" '%s' "$ns"
	done
}

# Subnets are allocated, never picked: X is the lowest number not held by
# any test running in this system (a directory under /run, made
# atomically), released at exit.
VETH_SUBNETS=/run/srnic-subnets

__veth_subnet_alloc() {	# sets VETH_X
	local x
	mkdir -p "$VETH_SUBNETS" || return 1
	for x in $(seq 1 250); do
		if mkdir "$VETH_SUBNETS/$x" 2>/dev/null; then
			VETH_X=$x
			defer rmdir "$VETH_SUBNETS/$x"
			return 0
		fi
	done
	echo "setup_veth_pair: no free subnet under $VETH_SUBNETS" >&2
	return 1
}

__ip_in() {	# NS ARGS...: ip in netns NS, "-" being the current one
	local ns=$1
	shift
	if [ "$ns" = - ]; then ip "$@"; else ip -n "$ns" "$@"; fi
}

# setup_veth_pair NS_A NS_B: a veth pair with one end in each netns
# (namespace names, e.g. "$NS_A"; "-" is the current netns), addresses
# 10.99.X.1/24 + fd00:99:X::1/64 on the NS_A end and .2 / ::2 on the NS_B
# end, both up, each end's neighbour entry for the other permanent
# (__veth_neigh_permanent).  X is allocated (__veth_subnet_alloc).  Exports VETH_A
# VETH_B (ifnames: vethXa, vethXb), VETH_A_IP4 VETH_B_IP4 VETH_A_IP6
# VETH_B_IP6 (addresses, no prefix length; the IPv6 ones empty on a kernel
# booted with ipv6.disable=1).  A veth end in the current netns
# is deleted by cleanup_all; the others go with their netns.
setup_veth_pair() {
	local a=$1 b=$2 x in_a=() in_b=()
	__veth_subnet_alloc || return 1
	x=$VETH_X
	VETH_A=veth${x}a VETH_B=veth${x}b
	VETH_A_IP4=10.99.$x.1 VETH_B_IP4=10.99.$x.2
	VETH_A_IP6=fd00:99:$x::1 VETH_B_IP6=fd00:99:$x::2
	export VETH_A VETH_B VETH_A_IP4 VETH_B_IP4 VETH_A_IP6 VETH_B_IP6

	[ "$a" = - ] || in_a=(netns "$a")
	[ "$b" = - ] || in_b=(netns "$b")
	ip link add "$VETH_A" "${in_a[@]}" type veth peer name "$VETH_B" "${in_b[@]}" || return 1
	if [ "$a" = - ]; then defer ip link del "$VETH_A"
	elif [ "$b" = - ]; then defer ip link del "$VETH_B"
	fi
	__ip_in "$a" addr add "$VETH_A_IP4/24" dev "$VETH_A" &&
	__ip_in "$b" addr add "$VETH_B_IP4/24" dev "$VETH_B" &&
	if [ -d /proc/sys/net/ipv6 ]; then
		__ip_in "$a" addr add "$VETH_A_IP6/64" dev "$VETH_A" nodad &&
		__ip_in "$b" addr add "$VETH_B_IP6/64" dev "$VETH_B" nodad ||
			return 1
	else	# booted with ipv6.disable=1: IPv4 only
		VETH_A_IP6='' VETH_B_IP6=''
	fi &&
	__ip_in "$a" link set "$VETH_A" up &&
	__ip_in "$b" link set "$VETH_B" up &&
	__veth_neigh_permanent "$a" "$b"
}

# __veth_neigh_permanent NS_A NS_B: each end knows the other's MAC for
# good (IPv4 and IPv6). Tests put netem loss on these links; a lost ARP
# or neighbour solicitation would then fail a modify_qp to RTR (the RDMA
# core resolves the destination MAC within 1 s: ETIMEDOUT) or an rdma_cm
# address resolution, a failure of the test's link, not of the driver.
# No test changes a veth end's MAC address.
__veth_neigh_permanent() {
	local a=$1 b=$2 mac_a mac_b v ip_a ip_b
	mac_a=$(__ip_in "$a" -br link show dev "$VETH_A" | awk '{ print $3 }')
	mac_b=$(__ip_in "$b" -br link show dev "$VETH_B" | awk '{ print $3 }')
	[ -n "$mac_a" ] && [ -n "$mac_b" ] || return 1
	for v in 4 6; do
		ip_a=VETH_A_IP$v ip_b=VETH_B_IP$v
		[ -n "${!ip_a}" ] || continue	# ipv6.disable=1
		__ip_in "$a" neigh replace "${!ip_b}" lladdr "$mac_b" \
			dev "$VETH_A" nud permanent &&
		__ip_in "$b" neigh replace "${!ip_a}" lladdr "$mac_a" \
			dev "$VETH_B" nud permanent || return 1
	done
}

# --- kernel log --------------------------------------------------------------

# The splat expression is shared with scripts/vm.sh and scripts/kunit.sh.
# shellcheck source=selftests/kernel_log.sh
. "$(dirname "${BASH_SOURCE[0]}")/kernel_log.sh"
DMESG_MARK=0

# The kernel log is a ring: once it is full (a fuzz's warnings about bad
# MADs fill it), old lines go and a line count no longer marks a place.
# A mark is the timestamp of the last line (dmesg_now); dmesg_since MARK
# prints the lines after it (a line without a timestamp goes with the
# line before it).
dmesg_now() {
	dmesg | awk '/^\[ *[0-9]+\.[0-9]+\]/ { t = $0 }
		END { sub(/^\[ */, "", t); sub(/\].*/, "", t); print t == "" ? 0 : t }'
}

dmesg_since() {	# MARK
	dmesg | awk -v m="${1:-0}" '/^\[ *[0-9]+\.[0-9]+\]/ {
		t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t); on = t + 0 > m + 0 } on'
}

dmesg_mark() {
	DMESG_MARK=$(dmesg_now)
}

# dmesg_splats: the splat lines logged since dmesg_mark; fails if none.
dmesg_splats() {
	dmesg_since "$DMESG_MARK" | kernel_splats
}

# ktap_kernel_log_clean [DESC]: the end-of-test check, one KTAP line:
# passes when nothing since dmesg_mark is a splat, else prints the lines.
ktap_kernel_log_clean() {
	local desc=${1:-kernel log clean} splats
	splats=$(dmesg_splats)
	if [ -z "$splats" ]; then
		ktap_test_pass "$desc"
	else
		printf '%s\n' "$splats" | sed 's/^/# /'
		ktap_test_fail "$desc"
	fi
}

# --- RDMA --------------------------------------------------------------------

# server_listening NS PORT: a TCP socket (in netns NS, "-": the current
# one) or an rdma_cm ID (rdma resource show cm_id) listens on PORT. A
# server is started, then waited for with wait_until: no fixed sleep.
server_listening() {
	local nsx=()
	[ "$1" = - ] || nsx=(ip netns exec "$1")
	"${nsx[@]}" ss -Hltn "sport = :$2" 2>/dev/null | grep -q . && return 0
	rdma resource show cm_id 2>/dev/null |
		grep -qE "state LISTEN .*src-addr [^ ]*:$2( |\$)"
}

# rdma_gid_index DEV ADDR [PORT]: print the index of DEV's RoCE v2 GID for
# the IP address ADDR (IPv4 as a.b.c.d, found as ::ffff:a.b.c.d; IPv6 in the
# compressed form ibv_devinfo prints).  Fails if there is none (yet): GIDs are
# added asynchronously after the address or the device appears, so poll with
# wait_until.  The GID table is per device, whatever netns asks.
rdma_gid_index() {
	local dev=$1 addr=$2 port=${3:-1}
	case $addr in *.*.*.*) addr=::ffff:$addr ;; esac
	ibv_devinfo -d "$dev" -i "$port" -v 2>/dev/null |
		sed -n 's/^[[:space:]]*GID\[ *\([0-9]*\)\]:[[:space:]]*\([^,]*\), RoCE v2$/\1 \2/p' |
		awk -v a="$addr" '$2 == a { print $1; found = 1; exit } END { exit !found }'
}
