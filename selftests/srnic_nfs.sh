#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NFS over RDMA on srnic: the in-kernel NFS server (nfsd, NFSv4.2, its
# RDMA listener on port 20049) in this namespace exports a tmpfs through
# srnic0; a client in a namespace of its own mounts it with proto=rdma
# through srnic1 and runs fio with verification (every block written is
# read back and checked). Then, with fio running, the client's device is
# deleted ("rdma link delete" under I/O): the mount (soft, short timeouts)
# errors cleanly, fio ends, the client unmounts, nothing hangs; the
# server stops and its device deletes; no splat.
#
# Environment: SRNIC_NFS_SIZE (fio's file, 16M), SRNIC_NFS_BS (64k).
. "$(dirname "$0")/srnic_lib.sh"

SIZE=${SRNIC_NFS_SIZE:-16M}
BS=${SRNIC_NFS_BS:-64k}
PORT=20049

srnic_require
require_cmd rpc.nfsd rpc.mountd exportfs mount.nfs fio timeout
# A kernel without the NFS server or NFS/RDMA (the debug test kernel)
# cannot run this test at all.
for m in nfsd rpcrdma nfsv4; do
	modprobe -q "$m" 2>/dev/null || ktap_skip_rest "no $m module"
done
ktap_print_header
ktap_set_plan 12

dmesg_mark
ktap_test_result "insmod srnic.ko" srnic_load || srnic_bail "no module"
defer srnic_unload
setup_ns NS_A && setup_veth_pair "$NS_A" - ||
	ktap_skip_rest "cannot create namespaces/veth"
CLI_IP=$VETH_A_IP4 SRV_IP=$VETH_B_IP4
ktap_test_result "rdma link add srnic0 (server, this namespace) and srnic1 (client, $NS_A)" \
	eval 'rdma link add srnic0 type srnic netdev "$VETH_B" &&
	      srnic_link_add "$NS_A" srnic1 "$VETH_A"' || srnic_bail "no device"
defer rdma link delete srnic0
defer rdma link delete srnic1
srnic_gid_wait srnic0 "$SRV_IP" >/dev/null && srnic_gid_wait srnic1 "$CLI_IP" >/dev/null ||
	ktap_print_msg "no RoCEv2 GID yet"

# The server: an NFSv4-only nfsd (no rpcbind), a 10 s lease, the grace
# period ended at once; mountd answers the kernel's export upcalls.
EXPORT=$SRNIC_TMP/export
mkdir -p "$EXPORT" /proc/fs/nfsd
nfsd_stop() {
	rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
	pkill -x rpc.mountd 2>/dev/null
	umount "$EXPORT" 2>/dev/null
	true
}
nfsd_start() {
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	mount -t tmpfs -o size=256M tmpfs "$EXPORT" || return 1
	mkdir -p /var/lib/nfs/v4recovery
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	exportfs -o rw,no_root_squash,insecure,fsid=0,no_subtree_check \
		"$CLI_IP:$EXPORT" || return 1
	rpc.mountd -N 2 -N 3 || return 1
	rpc.nfsd -N 3 -U --rdma=$PORT 4 || return 1
	grep -q "rdma $PORT" /proc/fs/nfsd/portlist || return 1
	[ ! -w /proc/fs/nfsd/v4_end_grace ] || echo Y >/proc/fs/nfsd/v4_end_grace
}
defer nfsd_stop
if ktap_test_result "nfsd: NFSv4 export of a tmpfs, RDMA listener on port $PORT" nfsd_start; then
	ktap_print_msg "portlist: $(tr '\n' ' ' </proc/fs/nfsd/portlist)"
else
	srnic_bail "no NFS server"
fi

# The client: one script in NS_A (its mount lives in that script's mount
# namespace, "ip netns exec" making one per call); each phase prints a
# "phase NAME RC" line.
MNT=$SRNIC_TMP/mnt
mkdir -p "$MNT"
cat >"$SRNIC_TMP/client.sh" <<CLIENT
#!/bin/bash
phase() { echo "phase \$1 \$2"; }
mount -t nfs4 -o proto=rdma,port=$PORT,soft,timeo=30,retrans=2,vers=4.2 \
	$SRV_IP:/ $MNT
rc=\$?
phase mount \$rc
[ \$rc -eq 0 ] || exit 1
grep " $MNT " /proc/mounts
fio --name=verify --directory=$MNT --rw=randwrite --bs=$BS --size=$SIZE \
	--ioengine=psync --direct=1 --verify=crc32c --do_verify=1 \
	--verify_fatal=1 --output-format=terse --minimal >$SRNIC_TMP/fio1.txt 2>&1
phase fio \$?
rm -f $MNT/verify.0.0
sync
# Under I/O: a fio the device deletion interrupts.
fio --name=busy --directory=$MNT --rw=randrw --bs=$BS --size=$SIZE \
	--ioengine=psync --direct=1 --time_based --runtime=600 \
	>$SRNIC_TMP/fio2.txt 2>&1 &
pid=\$!
echo "busy \$pid" >$SRNIC_TMP/busy
wait \$pid
phase busy \$?
timeout 120 umount -f $MNT
rc=\$?
echo "umount -f: \$rc"
[ \$rc -eq 0 ] || { timeout 60 umount -l $MNT; rc=\$?; echo "umount -l: \$rc"; }
phase umount \$rc
CLIENT
chmod +x "$SRNIC_TMP/client.sh"
ip netns exec "$NS_A" timeout 900 "$SRNIC_TMP/client.sh" >"$SRNIC_TMP/client.out" 2>&1 &
cpid=$!
phase_rc() {	# NAME: the rc the client reported for phase NAME
	sed -n "s/^phase $1 //p" "$SRNIC_TMP/client.out"
}
wait_until 120 grep -q "^phase mount" "$SRNIC_TMP/client.out"
if [ "$(phase_rc mount)" = 0 ]; then
	ktap_test_pass "client ($NS_A): mount -t nfs4 -o proto=rdma,port=$PORT $SRV_IP:/"
else
	show_file "$SRNIC_TMP/client.out" 20
	ktap_test_fail "client ($NS_A): mount -t nfs4 -o proto=rdma,port=$PORT $SRV_IP:/"
fi
wait_until 600 grep -q "^phase fio" "$SRNIC_TMP/client.out"
# terse v3 (fio's --minimal layout): fields 6 and 7 the KiB read and
# KiB/s, 47 and 48 the same written.
io=$(awk -F';' 'NF > 48 { print "written " $47 " KiB at " $48 " KiB/s, read back " $6 " KiB at " $7 " KiB/s" }' "$SRNIC_TMP/fio1.txt")
if [ "$(phase_rc fio)" = 0 ] && [ -n "$io" ]; then
	ktap_test_pass "fio randwrite $SIZE in $BS blocks, crc32c verified: $io"
else
	show_file "$SRNIC_TMP/fio1.txt" 20
	ktap_test_fail "fio randwrite $SIZE in $BS blocks, crc32c verified"
fi
if grep -q "^busy " "$SRNIC_TMP/busy" 2>/dev/null; then
	sleep 5
	ktap_test_result "rdma link delete srnic1 under I/O (client side, fio running)" \
		timeout 120 rdma link delete srnic1
else
	ktap_test_fail "rdma link delete srnic1 under I/O: fio did not start"
fi
if wait_until 300 grep -q "^phase busy" "$SRNIC_TMP/client.out"; then
	ktap_test_pass "fio under the deletion ended (exit $(phase_rc busy): the soft mount's I/O errors)"
	ktap_print_msg "$(tail -n 3 "$SRNIC_TMP/fio2.txt")"
else
	ktap_test_fail "fio under the deletion ended within 300 s"
fi
if wait_until 200 grep -q "^phase umount" "$SRNIC_TMP/client.out" &&
   [ "$(phase_rc umount)" = 0 ]; then
	ktap_test_pass "client unmounted ($(grep '^umount' "$SRNIC_TMP/client.out" | tr '\n' ' '))"
else
	show_file "$SRNIC_TMP/client.out" 20
	ktap_test_fail "client unmounted"
fi
kill "$cpid" 2>/dev/null
wait "$cpid" 2>/dev/null

ktap_test_result "nfsd stopped (rpc.nfsd 0, exportfs -ua)" nfsd_stop
ktap_test_result "rdma link delete srnic0 (server side)" timeout 120 rdma link delete srnic0
ktap_test_result "rmmod srnic" srnic_unload
ktap_kernel_log_clean
ktap_finished
