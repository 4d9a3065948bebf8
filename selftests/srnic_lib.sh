# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# srnic helpers for the selftests, on top of lib.sh (KTAP, namespaces).
#
#	srnic_load [PARAM=V...]		insmod the srnic.ko built for this kernel
#	srnic_unload			rmmod srnic (if loaded)
#	srnic_two_hosts			namespaces NS_A, NS_B joined by a veth
#					pair (VETH_A in NS_A, VETH_B in NS_B)
#	srnic_link_add NS NAME NETDEV	"rdma link add NAME type srnic" in NS
#	srnic_gid_wait DEV ADDR		wait for DEV's RoCEv2 GID of ADDR,
#					print its index
#	srnic_run_pair DESC PORT SRV -- CLI	a server in NS_B, its client
#					in NS_A: one KTAP point
# SRNIC_SELFTESTS: this folder, in the srnic checkout (selftests/) or as
# a kselftest target of a kernel tree, source or installed; SRNIC_TOP:
# the checkout.
SRNIC_SELFTESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRNIC_TOP=$(cd "$SRNIC_SELFTESTS/.." && pwd)
# shellcheck source=selftests/lib.sh
. "$SRNIC_SELFTESTS/lib.sh"

# In a kselftest tree the programs sit beside the scripts, and srnic.ko is
# the installed module unless SRNIC_KO names one.
if [ -f "$SRNIC_SELFTESTS/../../../kselftest/runner.sh" ]; then
	SRNIC_BIN=${SRNIC_BIN:-$SRNIC_SELFTESTS}
	SRNIC_KO=${SRNIC_KO:-$(modinfo -n srnic 2>/dev/null)}
fi
SRNIC_KO=${SRNIC_KO:-$SRNIC_TOP/build/$(uname -r)/srnic.ko}
SRNIC_BIN=${SRNIC_BIN:-$SRNIC_TOP/build/selftests}
SRNIC_TMP=$(mktemp -d)
defer rm -rf "$SRNIC_TMP"

srnic_require() {
	require_root
	require_cmd rdma ip ibv_devices ibv_devinfo
	[ -f "$SRNIC_KO" ] || ktap_skip_rest "no $SRNIC_KO (run make)"
}

srnic_load() {
	local dep
	lsmod | grep -q '^srnic ' && return 0
	# insmod does not resolve dependencies: load them from the running
	# kernel's tree first (ib_core, ib_uverbs, the UDP tunnel helpers).
	for dep in $(modinfo -F depends "$SRNIC_KO" | tr , ' '); do
		modprobe "$dep" || return 1
	done
	insmod "$SRNIC_KO" "$@"
}

srnic_unload() {
	! lsmod | grep -q '^srnic ' || rmmod srnic
}

srnic_two_hosts() {
	setup_ns NS_A NS_B && setup_veth_pair "$NS_A" "$NS_B"
}

srnic_link_add() {	# NS NAME NETDEV
	ip netns exec "$1" rdma link add "$2" type srnic netdev "$3"
}

# srnic_link_up NS NAME NETDEV: "rdma link add" as one KTAP point; the
# test bails out without the device, which is deleted at exit.
srnic_link_up() {
	ktap_test_result "rdma link add $2 type srnic netdev $3 (in $1)" \
		srnic_link_add "$1" "$2" "$3" || srnic_bail "no device"
	defer rdma link delete "$2"
}

srnic_gid_wait() {	# DEV ADDR
	local idx
	wait_until 10 rdma_gid_index "$1" "$2" >/dev/null || return 1
	idx=$(rdma_gid_index "$1" "$2") && echo "$idx"
}

# show_file FILE [MAXLINES]: FILE as "# " diagnostics, its tail if long.
show_file() {
	local n
	n=$(wc -l <"$1")
	[ "$n" -le "${2:-60}" ] || ktap_print_msg "... (${n} lines, last ${2:-60})"
	tail -n "${2:-60}" "$1" | sed 's/^/#   /'
}

# srnic_bail: a step the rest of the test depends on failed; stop here
# (the plan mismatch fails the test).
srnic_bail() {
	ktap_print_msg "bailing out: $*"
	ktap_finished
}

# ktap_from_tap WANT WHAT: a test program's TAP on stdin as this test's
# KTAP points, its other lines as diagnostics; the points it did not
# report, up to WANT, fail as "WHAT N: did not run".
ktap_from_tap() {
	local line n=0
	while IFS= read -r line; do
		case $line in
		"ok "*) ktap_test_pass "${line#ok * }"; n=$((n + 1)) ;;
		"not ok "*) ktap_test_fail "${line#not ok * }"; n=$((n + 1)) ;;
		"1.."*) ;;
		*) printf '# %s\n' "$line" ;;
		esac
	done
	while [ $n -lt "$1" ]; do
		ktap_test_fail "$2 $((n + 1)): did not run"
		n=$((n + 1))
	done
}

# srnic_run_pair DESC PORT SERVER... -- CLIENT...: one KTAP point, the
# server in NS_B (listening on TCP PORT), the client in NS_A, 60 s each;
# both must exit 0.
srnic_run_pair() {
	local desc=$1 port=$2 srv=() cli=() spid src=0 crc=0
	shift 2
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	ip netns exec "$NS_B" timeout 60 "${srv[@]}" >"$SRNIC_TMP/srv" 2>&1 &
	spid=$!
	wait_until 20 server_listening "$NS_B" "$port" ||
		ktap_print_msg "nothing listens on port $port after 20 s"
	ip netns exec "$NS_A" timeout 60 "${cli[@]}" >"$SRNIC_TMP/cli" 2>&1 || crc=$?
	wait "$spid" || src=$?
	if [ $src -eq 0 ] && [ $crc -eq 0 ]; then
		ktap_test_pass "$desc"
	else
		ktap_print_msg "server exit $src, client exit $crc"
		show_file "$SRNIC_TMP/srv" 20
		show_file "$SRNIC_TMP/cli" 20
		ktap_test_fail "$desc"
	fi
}

# rdma_dev_exists NAME: the RDMA device is registered.
rdma_dev_exists() {
	[ -e "/sys/class/infiniband/$1" ]
}
