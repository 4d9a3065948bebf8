#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ICRC test vectors from an independent implementation: run inside a guest
# (scripts/vm.sh -- scripts/rxe-icrc-vectors.sh), make rdma_rxe send one
# of each request over IPv4 and IPv6 to a namespace with no RDMA device,
# capture there, and print each packet's first transmission (IP header
# to ICRC) as C initializers for kunit/srnic_icrc_test.c.
. "$(dirname "$0")/../selftests/srnic_lib.sh"

modprobe rdma_rxe || exit 1
setup_ns NS_B
setup_veth_pair - "$NS_B" 9 || exit 1
rdma link add rxe0 type rxe netdev "$VETH_A" || exit 1
defer rmmod rdma_rxe
defer rdma link delete rxe0
wait_until 10 rdma_gid_index rxe0 "$VETH_A_IP6" >/dev/null
pcap=$SRNIC_TMP/rxe.pcap
ip netns exec "$NS_B" dumpcap -q -i "$VETH_B" -f "udp port 4791" -w "$pcap" &
cap=$!
sleep 2
/usr/bin/python3 "$(dirname "$0")/rxe-icrc-vectors.py" rxe0 "$VETH_B_IP4" "$VETH_B_IP6"
sleep 1
kill -INT $cap
wait $cap
/usr/bin/python3 - "$pcap" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
# pcapng (dumpcap's default): walk Enhanced Packet Blocks.
off, seen, n = 0, set(), 0
while off + 12 <= len(data):
    btype, blen = struct.unpack_from("<II", data, off)
    if btype == 6:
        caplen = struct.unpack_from("<I", data, off + 20)[0]
        frame = data[off + 28: off + 28 + caplen]
        l3 = frame[14:]
        v6 = l3[0] >> 4 == 6
        iplen = 40 if v6 else (l3[0] & 15) * 4
        bth = l3[iplen + 8:]
        key = (v6, bth[0], bth[8:12])      # opcode, PSN: first copy only
        if key not in seen:
            seen.add(key)
            n += 1
            print("\t/* rdma_rxe, IPv%d, opcode %#04x, %d bytes */" %
                  (6 if v6 else 4, bth[0], len(l3)))
            lines = ["".join("\\x%02x" % b for b in l3[i:i + 16])
                     for i in range(0, len(l3), 16)]
            print("\tVEC(\"" + "\"\n\t    \"".join(lines) + "\"),")
    off += blen
print("/* %d packets */" % n)
PY
