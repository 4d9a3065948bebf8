#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A hostile peer on the wire: mutated RoCEv2 packets at live QPs.

    srnic_fuzz.py fuzz IFACE COUNT SEED [PPS]
    srnic_fuzz.py probe IFACE DST_MAC SRC_IP DST_IP COUNT [SIZE]

fuzz: on IFACE (a packet socket: run it in the attacker's namespace),
learn from the RoCEv2 packets this host's own RDMA traffic sends (real
QPNs, PSNs, rkeys, virtual addresses, opcodes in sequence) and send COUNT
mutations of the most recent ones out of IFACE: bits flipped, opcodes
replaced, truncated and extended, header fields set to their edges (PSNs
around the live one and at wrap, DMA lengths 0 / 2^31 / 2^32-1,
addresses near 2^64, pad counts that do not fit, another QPN, QP1 with
the GSI Q_Key), the IP and UDP lengths kept consistent, the ICRC
recomputed for about 60 % of them so that they pass the integrity check
and reach the transport's own checks. At most PPS packets a second
(default 4000), so that the receiver's backlog does not drop them.

probe: COUNT well-formed UD Send Only packets to QP1 (the GSI Q_Key,
correct ICRC, SIZE bytes of payload: 256, a MAD, by default) for DST_IP,
sent out of IFACE to DST_MAC, 50 a millisecond at most.

Both print one line "sent N icrc_good G icrc_bad B short S" (short:
shorter than a BTH and an ICRC; the ICRC counts are of the others; for
fuzz also how many of each mutation) and exit 0 if every packet left.
"""
import random
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
GSI_QKEY = 0x80010000

# Extended headers after the BTH, by opcode (IBA 9.2-9.4, the memory
# placement annex): name and size.
RETH, AETH, IMM, IETH, DETH, ATOMIC, ATOMICACK, FETH, AWDATA = (
    ("RETH", 16), ("AETH", 4), ("IMM", 4), ("IETH", 4), ("DETH", 8),
    ("AtomicETH", 28), ("AtomicAckETH", 8), ("FETH", 4), ("data", 8))
LAYOUT = {
    0x00: [], 0x01: [], 0x02: [], 0x03: [IMM], 0x04: [], 0x05: [IMM],
    0x06: [RETH], 0x07: [], 0x08: [], 0x09: [IMM], 0x0a: [RETH],
    0x0b: [RETH, IMM], 0x0c: [RETH], 0x0d: [AETH], 0x0e: [], 0x0f: [AETH],
    0x10: [AETH], 0x11: [AETH], 0x12: [AETH, ATOMICACK], 0x13: [ATOMIC],
    0x14: [ATOMIC], 0x16: [IETH], 0x17: [IETH], 0x1c: [FETH, RETH],
    0x1d: [RETH, AWDATA], 0x64: [DETH], 0x65: [DETH, IMM],
}
for _op in range(0x0c):                 # UC: RC's Send and Write layouts
    LAYOUT[0x20 + _op] = LAYOUT[_op]

EDGE32 = [0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff]
EDGE64 = [0, 1, 0xfffffffffffff000, 0xfffffffffffffff8,
          0xffffffffffffffff, 0x7fffffffffffffff]


def ipv4_csum(hdr):
    s = 0
    for i in range(0, len(hdr), 2):
        s += (hdr[i] << 8) | hdr[i + 1]
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def icrc(l3, ihl):
    """The RoCEv2 ICRC of an IPv4 packet l3 (its last 4 bytes excluded)."""
    p = bytearray(l3)
    p[1] = 0xff                         # type of service
    p[8] = 0xff                         # TTL
    p[10:12] = b"\xff\xff"              # header checksum
    p[ihl + 6:ihl + 8] = b"\xff\xff"    # UDP checksum
    p[ihl + 8 + 4] = 0xff               # BTH: FECN, BECN, resv6
    return zlib.crc32(b"\xff" * 8 + bytes(p[:-4])) & 0xffffffff


def finish(eth, l3, ihl, good):
    """Fix the IP and UDP lengths and checksum; the ICRC if @good."""
    l3 = bytearray(l3)
    struct.pack_into(">H", l3, 2, len(l3))
    struct.pack_into(">H", l3, 10, 0)
    struct.pack_into(">H", l3, 10, ipv4_csum(l3[:ihl]))
    struct.pack_into(">H", l3, ihl + 4, len(l3) - ihl)
    struct.pack_into(">H", l3, ihl + 6, 0)
    if good and len(l3) >= ihl + 8 + 12 + 4:
        struct.pack_into("<I", l3, len(l3) - 4, icrc(l3, ihl))
    return bytes(eth) + bytes(l3)


def roce_of(frame):
    """(ethernet header, IPv4 packet, IP header length) or None."""
    if len(frame) < 14 + 20 + 8 + 12 + 4 or frame[12:14] != b"\x08\x00":
        return None
    l3 = frame[14:]
    ihl = (l3[0] & 0xf) * 4
    if l3[0] >> 4 != 4 or l3[9] != 17 or len(l3) < ihl + 8 + 16:
        return None
    if struct.unpack(">H", l3[ihl + 2:ihl + 4])[0] != ROCE_PORT:
        return None
    total = struct.unpack(">H", l3[2:4])[0]
    return frame[:14], bytearray(l3[:total]), ihl


def fields(op):
    """(name, offset from the BTH, size) of each extended header."""
    out, off = [], 12
    for name, size in LAYOUT.get(op, []):
        out.append((name, off, size))
        off += size
    return out


class Mutator:
    def __init__(self, rng):
        self.rng = rng
        self.qpns = set()
        self.count = {}

    def mutate(self, l3, ihl):
        """A mutated copy of the transport part of l3 (in place)."""
        r = self.rng
        b = ihl + 8                     # the BTH
        op = l3[b]
        kinds = ["flip", "opcode", "truncate", "extend", "psn", "field",
                 "pad", "qpn", "gsi", "payload", "ackreq", "tver"]
        kind = r.choice(kinds)
        self.count[kind] = self.count.get(kind, 0) + 1
        if kind == "flip":
            for _ in range(r.randint(1, 4)):
                i = r.randrange(b, len(l3))
                l3[i] ^= 1 << r.randrange(8)
        elif kind == "opcode":
            l3[b] = r.choice(list(LAYOUT)) if r.random() < 0.7 else \
                r.randrange(256)
        elif kind == "truncate":
            del l3[b + r.randrange(len(l3) - b):]
        elif kind == "extend":
            l3 += bytes(r.randrange(256) for _ in range(r.choice(
                [1, 3, 4, 8, 64, 256, 1024])))
        elif kind == "psn":
            psn = struct.unpack(">I", b"\0" + bytes(l3[b + 9:b + 12]))[0]
            psn = (psn + r.choice([-1, 1, 2, -2, 1 << 23, (1 << 23) + 1,
                                   -(1 << 23), 0x800, 0])) & 0xffffff
            if r.random() < 0.2:
                psn = r.choice([0, 0xffffff, 0x7fffff, 0x800000])
            l3[b + 9:b + 12] = struct.pack(">I", psn)[1:]
        elif kind == "field":
            fs = fields(op)
            if fs:
                name, off, size = r.choice(fs)
                o = b + off
                if name in ("RETH", "AtomicETH") and o + 16 <= len(l3):
                    which = r.randrange(3)
                    if which == 0:
                        struct.pack_into(">Q", l3, o, r.choice(EDGE64))
                    elif which == 1:
                        struct.pack_into(">I", l3, o + 8,
                                         r.choice(EDGE32 + [r.getrandbits(32)]))
                    elif name == "RETH":
                        struct.pack_into(">I", l3, o + 12, r.choice(EDGE32))
                    else:
                        struct.pack_into(">Q", l3, o + 12, r.choice(EDGE64))
                elif o + size <= len(l3):
                    for i in range(size):
                        l3[o + i] = r.randrange(256) if r.random() < 0.5 \
                            else 0xff
        elif kind == "pad":
            l3[b + 1] = (l3[b + 1] & ~0x30) | (r.randrange(4) << 4)
        elif kind == "qpn":
            qpn = r.choice(sorted(self.qpns) + [0, 1, 2, 0xffffff,
                                                r.getrandbits(24)])
            l3[b + 5:b + 8] = struct.pack(">I", qpn)[1:]
        elif kind == "gsi":
            # A UD Send to QP1 with the well-known Q_Key: anyone may.
            tail = bytes(r.randrange(256) for _ in range(r.choice(
                [0, 4, 24, 256, 257, 1000])))
            bth = bytearray(l3[b:b + 12])
            bth[0] = 0x64
            bth[1] &= 0xcf
            bth[5:8] = b"\0\0\1"
            deth = struct.pack(">II", GSI_QKEY, r.getrandbits(24))
            l3[b:] = bytes(bth) + deth + tail + b"\0\0\0\0"
        elif kind == "payload":
            start = b + 12 + sum(s for _, _, s in fields(op))
            for i in range(start, len(l3) - 4):
                if r.random() < 0.1:
                    l3[i] = r.randrange(256)
        elif kind == "ackreq":
            l3[b + 8] ^= 0x80
        elif kind == "tver":
            l3[b + 1] = (l3[b + 1] & 0xf0) | r.randrange(1, 16)
        return l3


def fuzz(iface, count, seed, pps):
    rng = random.Random(seed)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.setblocking(False)
    m = Mutator(rng)
    recent = []                         # the last packets of our traffic
    sent = good = bad = short = 0
    start = time.monotonic()
    idle_since = start
    while sent < count:
        # Learn from what our own QPs sent since the last round.
        while True:
            try:
                frame, addr = s.recvfrom(65535)
            except BlockingIOError:
                break
            if addr[2] != PACKET_OUTGOING:
                continue
            r = roce_of(frame)
            if r:
                recent.append(r)
                m.qpns.add(struct.unpack(">I", b"\0" +
                                         bytes(r[1][r[2] + 13:r[2] + 16]))[0])
                if len(recent) > 256:
                    del recent[:128]
        if not recent:
            if time.monotonic() - idle_since > 60:
                print("# no RoCEv2 traffic to learn from on %s" % iface)
                break
            time.sleep(0.05)
            continue
        eth, l3, ihl = rng.choice(recent)
        l3 = m.mutate(bytearray(l3), ihl)
        ok = rng.random() < 0.6
        frame = finish(eth, l3, ihl, ok)
        try:
            s.send(frame)
        except OSError:
            time.sleep(0.01)
            continue
        sent += 1
        if len(l3) < ihl + 8 + 12 + 4:
            short += 1                  # the UDP layer may drop it itself
        elif ok:
            good += 1
        else:
            bad += 1
        # Pace: at most pps a second.
        ahead = sent / pps - (time.monotonic() - start)
        if ahead > 0.01:
            time.sleep(ahead)
    secs = time.monotonic() - start
    print("# mutations: " + " ".join("%s %d" % kv for kv in
                                     sorted(m.count.items())))
    print("# %d QPNs seen; %.1f s, %.0f packets/s" %
          (len(m.qpns), secs, sent / secs if secs else 0))
    print("sent %d icrc_good %d icrc_bad %d short %d" % (sent, good, bad,
                                                          short))
    return 0 if sent == count else 1


def mac_bytes(mac):
    return bytes(int(x, 16) for x in mac.split(":"))


def probe(iface, dst_mac, src_ip, dst_ip, count, size=256):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    src_mac = s.getsockname()[4]
    eth = mac_bytes(dst_mac) + src_mac + b"\x08\x00"
    sent = 0
    for i in range(count):
        ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 0, i, 0x4000,
                                   64, 17, 0, socket.inet_aton(src_ip),
                                   socket.inet_aton(dst_ip)))
        udp = struct.pack(">HHHH", 49152 + i % 1000, ROCE_PORT, 0, 0)
        bth = struct.pack(">BBHI I", 0x64, 0, 0xffff, 1, i & 0xffffff)
        deth = struct.pack(">II", GSI_QKEY, 0x10)
        l3 = ip + udp + bth + deth + bytes(size) + b"\0\0\0\0"
        s.send(finish(eth, l3, 20, True))
        sent += 1
        if sent % 50 == 0:
            time.sleep(0.001)
    print("sent %d icrc_good %d icrc_bad 0 short 0" % (sent, sent))
    return 0


def main():
    a = sys.argv[1:]
    if len(a) in (4, 5) and a[0] == "fuzz":
        return fuzz(a[1], int(a[2]), int(a[3]),
                    int(a[4]) if len(a) == 5 else 4000)
    if len(a) in (6, 7) and a[0] == "probe":
        return probe(a[1], a[2], a[3], a[4], int(a[5]),
                     int(a[6]) if len(a) == 7 else 256)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
