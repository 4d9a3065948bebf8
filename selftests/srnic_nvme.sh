#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A kernel RDMA user that needs fast registration: NVMe over Fabrics. The
# stock kernel's nvmet-rdma exports a memory-backed null_blk namespace
# through srnic0, the stock nvme-rdma host connects to it with nvme-cli,
# and fio writes and reads 256 MiB at random offsets with crc32c
# verification. Then "rdma link delete" takes the device away under I/O:
# the I/O fails or the controller goes to reconnecting, the host
# disconnects cleanly, and the kernel log shows no splat.
#
# nvme-rdma and nvmet-rdma create their rdma_cm IDs in the initial network
# namespace only (rdma_create_id(&init_net, ...) in both, 6.1 and 6.12),
# so host and target share one srnic device there, on a veth end: the
# host's commands and the target's RDMA Reads/Writes and Sends with
# Invalidate go through srnic's loopback path, every one a RoCEv2 packet
# through the full transmit and receive pipelines.
#
# Environment: SRNIC_NVME_SIZE (fio bytes, 256M).
. "$(dirname "$0")/srnic_lib.sh"

SIZE=${SRNIC_NVME_SIZE:-256M}
NQN=nqn.2026-12.org.srnic:selftest
CFS=/sys/kernel/config/nvmet

srnic_require
require_cmd nvme fio timeout
for m in nvmet nvmet-rdma nvme-rdma null_blk configfs; do
	modprobe "$m" 2>/dev/null || ktap_skip_rest "no $m module"
done
ktap_print_header
ktap_set_plan 10
dmesg_mark

srnic_load || srnic_bail "no module"
defer srnic_unload
setup_ns NS_B || srnic_bail "netns"
setup_veth_pair - "$NS_B" || srnic_bail "veth"
IP=$VETH_A_IP4
ktap_test_result "rdma link add srnic0 (initial namespace, $VETH_A)" \
	rdma link add srnic0 type srnic netdev "$VETH_A" || srnic_bail "no srnic0"
srnic_gid_wait srnic0 "$IP" >/dev/null || srnic_bail "no srnic0 GID"

mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
# A memory-backed null_blk: it keeps what is written, for fio to verify.
rmmod null_blk 2>/dev/null
modprobe null_blk nr_devices=1 memory_backed=1 gb=1 ||
	srnic_bail "null_blk memory_backed"
target_up() {
	mkdir "$CFS/subsystems/$NQN" &&
	echo 1 >"$CFS/subsystems/$NQN/attr_allow_any_host" &&
	mkdir "$CFS/subsystems/$NQN/namespaces/1" &&
	echo /dev/nullb0 >"$CFS/subsystems/$NQN/namespaces/1/device_path" &&
	echo 1 >"$CFS/subsystems/$NQN/namespaces/1/enable" &&
	mkdir "$CFS/ports/1" &&
	echo rdma >"$CFS/ports/1/addr_trtype" &&
	echo ipv4 >"$CFS/ports/1/addr_adrfam" &&
	echo "$IP" >"$CFS/ports/1/addr_traddr" &&
	echo 4420 >"$CFS/ports/1/addr_trsvcid" &&
	ln -s "$CFS/subsystems/$NQN" "$CFS/ports/1/subsystems/$NQN"
}
target_down() {
	rm -f "$CFS/ports/1/subsystems/$NQN"
	rmdir "$CFS/ports/1" 2>/dev/null
	echo 0 >"$CFS/subsystems/$NQN/namespaces/1/enable" 2>/dev/null
	rmdir "$CFS/subsystems/$NQN/namespaces/1" 2>/dev/null
	rmdir "$CFS/subsystems/$NQN" 2>/dev/null
}
defer target_down
ktap_test_result "nvmet-rdma target: null_blk namespace on $IP:4420" target_up ||
	srnic_bail "no target"

defer "nvme disconnect -n $NQN >/dev/null 2>&1"
ktap_test_result "nvme connect -t rdma (nvme-rdma host over srnic0)" \
	timeout 60 nvme connect -t rdma -a "$IP" -s 4420 -n "$NQN" ||
	srnic_bail "no connection"
DEV=
for _ in $(seq 50); do
	DEV=$(ls /sys/class/nvme-subsystem/*/ 2>/dev/null | grep -m1 '^nvme[0-9]*n[0-9]*$')
	[ -n "$DEV" ] && [ -b "/dev/$DEV" ] && break
	sleep 0.2
done
[ -b "/dev/$DEV" ] || srnic_bail "no namespace block device"
ktap_print_msg "namespace: /dev/$DEV ($(cat /sys/block/"$DEV"/size) sectors)"

# fio_run NAME RW: SIZE bytes, 4-64 KiB blocks, verified with crc32c.
fio_run() {
	timeout 900 fio --name="$1" --filename="/dev/$DEV" --rw="$2" \
		--bsrange=4k-64k --size="$SIZE" --direct=1 --ioengine=libaio \
		--iodepth=16 --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--randrepeat=1 --output="$SRNIC_TMP/fio-$1.txt"
}
if fio_run randwrite randwrite; then
	grep -E 'WRITE:|READ:|err=' "$SRNIC_TMP/fio-randwrite.txt" | sed 's/^/# /'
	ktap_test_pass "fio --verify=crc32c: $SIZE random writes, read back and verified, 0 errors"
else
	tail -n 20 "$SRNIC_TMP/fio-randwrite.txt" | sed 's/^/# /'
	ktap_test_fail "fio --verify=crc32c: $SIZE random writes, read back and verified"
fi
# The verify pass of a second job reads what the first wrote.
if timeout 900 fio --name=readback --filename="/dev/$DEV" --rw=randread \
	--bsrange=4k-64k --size="$SIZE" --direct=1 --ioengine=libaio \
	--iodepth=16 --verify=crc32c --verify_only=1 --verify_fatal=1 \
	--randrepeat=1 --output="$SRNIC_TMP/fio-readback.txt"; then
	grep -E 'READ:|err=' "$SRNIC_TMP/fio-readback.txt" | sed 's/^/# /'
	ktap_test_pass "fio --verify_only: the same $SIZE read again at random, verified"
else
	tail -n 20 "$SRNIC_TMP/fio-readback.txt" | sed 's/^/# /'
	ktap_test_fail "fio --verify_only: the same $SIZE read again at random"
fi
cnt=$(rdma statistic show link srnic0/1 | grep -o 'sent_pkts [0-9]*')
ktap_print_msg "srnic0 $cnt"

# The device goes away under I/O.
timeout 120 fio --name=yank --filename="/dev/$DEV" --rw=randrw \
	--bs=64k --size="$SIZE" --direct=1 --ioengine=libaio --iodepth=16 \
	--time_based --runtime=60 --output="$SRNIC_TMP/fio-yank.txt" &
FIO=$!
sleep 3
ktap_test_result "rdma link delete srnic0 under I/O" rdma link delete srnic0
# The host notices; the I/O ends (errors or requeued until the
# controller gives up) within the controller's loss timeout.
nvme disconnect -n "$NQN" >/dev/null 2>&1
wait_until 90 bash -c "! kill -0 $FIO 2>/dev/null"
if kill -0 "$FIO" 2>/dev/null; then
	kill -9 "$FIO"
	ktap_test_fail "fio ends after the device is gone"
else
	ktap_test_pass "fio ends after the device is gone"
fi
ktap_test_result "nvme host disconnected, no controller left" \
	bash -c "! ls /sys/class/nvme-fabrics/ctl/ 2>/dev/null | grep -q nvme"
target_down
ktap_test_result "rmmod nvme-rdma nvmet-rdma, then srnic" \
	bash -c "rmmod nvme_rdma nvmet_rdma && rmmod srnic"
ktap_kernel_log_clean
ktap_finished
