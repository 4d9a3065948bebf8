#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check a capture of RoCEv2 traffic, independently of srnic's code.

    srnic_wire.py CAPTURE.pcap SRNIC_ADDR[,SRNIC_ADDR...]
    srnic_wire.py --self-check CAPTURE.pcap SRNIC_ADDR[,...] OUT.pcap

Two referees look at every UDP packet to port 4791:

- tshark (Wireshark's InfiniBand dissector) must dissect it as InfiniBand
  with the extended headers its BTH opcode calls for, and flag nothing
  (no malformed packet, no expert warning or error);
- the ICRC is recomputed here from the RoCEv2 annex with zlib's CRC-32
  (the IP/UDP/BTH fields a router may change masked to ones, 8 bytes of
  ones for the LRH, the complement sent least significant byte first) and
  must match the packet's last four bytes.

Packets sent from one of SRNIC_ADDR are srnic's; the others (rdma_rxe's)
are checked the same way, which also shows the checker agrees with an
implementation srnic did not write. Prints KTAP-style "# " diagnostics
and one summary line per verdict; exit 0 if every packet passed.
"""
import collections
import ipaddress
import struct
import subprocess
import sys
import zlib

ROCE_PORT = 4791

# Extended headers each RC opcode carries (IBA 9.2-9.4), as tshark names
# a field of each; Atomic Write is 0x1d (IBA memory placement annex).
RETH, AETH, IMM, IETH = ("infiniband.reth.va", "infiniband.aeth.syndrome",
                         "infiniband.immdt", "infiniband.ieth")
ATMETH = "infiniband.atomiceth.swapdt"
ATMACK = "infiniband.atomicacketh.origremdt"
OPS = {
    0x00: ("SEND_FIRST", []), 0x01: ("SEND_MIDDLE", []),
    0x02: ("SEND_LAST", []), 0x03: ("SEND_LAST_IMM", [IMM]),
    0x04: ("SEND_ONLY", []), 0x05: ("SEND_ONLY_IMM", [IMM]),
    0x06: ("WRITE_FIRST", [RETH]), 0x07: ("WRITE_MIDDLE", []),
    0x08: ("WRITE_LAST", []), 0x09: ("WRITE_LAST_IMM", [IMM]),
    0x0a: ("WRITE_ONLY", [RETH]), 0x0b: ("WRITE_ONLY_IMM", [RETH, IMM]),
    0x0c: ("READ_REQUEST", [RETH]), 0x0d: ("READ_RESPONSE_FIRST", [AETH]),
    0x0e: ("READ_RESPONSE_MIDDLE", []), 0x0f: ("READ_RESPONSE_LAST", [AETH]),
    0x10: ("READ_RESPONSE_ONLY", [AETH]), 0x11: ("ACKNOWLEDGE", [AETH]),
    0x12: ("ATOMIC_ACKNOWLEDGE", [AETH, ATMACK]),
    0x13: ("COMPARE_SWAP", [ATMETH]), 0x14: ("FETCH_ADD", [ATMETH]),
    0x16: ("SEND_LAST_INV", [IETH]), 0x17: ("SEND_ONLY_INV", [IETH]),
    # Wireshark 4.0 (Debian 12) names this opcode but does not dissect
    # its headers: atomic_write_ok() checks their layout instead.
    0x1d: ("ATOMIC_WRITE", []),
}
ATOMIC_WRITE = 0x1d

FIELDS = ["frame.number", "infiniband.bth.opcode", "_ws.malformed",
          "_ws.expert.severity", "_ws.expert.message"] + \
    sorted({f for _, hs in OPS.values() for f in hs})


def pcap_packets(path):
    """Yield (frame number, link type, bytes) from a classic pcap file."""
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            return
        magic = struct.unpack("<I", hdr[:4])[0]
        if magic in (0xa1b2c3d4, 0xa1b23c4d):
            end = "<"
        elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
            end = ">"
        else:
            raise SystemExit("not a classic pcap file: " + path)
        link = struct.unpack(end + "I", hdr[20:24])[0]
        n = 0
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            incl = struct.unpack(end + "IIII", rec)[2]
            n += 1
            yield n, link, f.read(incl)


def l3_of(link, frame):
    """The IP packet in a captured frame, or None."""
    if link == 1:           # Ethernet
        off, etype = 14, struct.unpack(">H", frame[12:14])[0]
        while etype in (0x8100, 0x88a8):
            etype = struct.unpack(">H", frame[off + 2:off + 4])[0]
            off += 4
        return frame[off:] if etype in (0x0800, 0x86dd) else None
    if link == 113:         # Linux cooked capture
        etype = struct.unpack(">H", frame[14:16])[0]
        return frame[16:] if etype in (0x0800, 0x86dd) else None
    if link in (12, 101):   # raw IP
        return frame
    return None


def roce(l3):
    """(src address, IP header length, UDP payload end) or None."""
    ver = l3[0] >> 4
    if ver == 4:
        ihl = (l3[0] & 0xf) * 4
        if l3[9] != 17:
            return None
        total = struct.unpack(">H", l3[2:4])[0]
        src = ipaddress.ip_address(l3[12:16])
    elif ver == 6:
        ihl = 40
        if l3[6] != 17:
            return None
        total = 40 + struct.unpack(">H", l3[4:6])[0]
        src = ipaddress.ip_address(l3[8:24])
    else:
        return None
    dport = struct.unpack(">H", l3[ihl + 2:ihl + 4])[0]
    if dport != ROCE_PORT:
        return None
    return src, ihl, min(total, len(l3))


def atomic_write_ok(l3, ihl, end):
    """An RDMA Atomic Write (IBA memory placement annex): BTH, RETH, 8
    bytes of data, ICRC, nothing else; the RETH's DMA length is 8 and its
    virtual address 8-byte aligned."""
    bth = ihl + 8
    if end - bth != 12 + 16 + 8 + 4 or (l3[bth + 1] >> 4) & 3:
        return False                    # the size, no pad
    va, _, dmalen = struct.unpack(">QII", bytes(l3[bth + 12:bth + 28]))
    return dmalen == 8 and va % 8 == 0


def icrc_of(l3, ihl, end):
    """The ICRC of l3[:end - 4], as an integer sent little-endian."""
    pkt = bytearray(l3[:end])
    if pkt[0] >> 4 == 4:
        pkt[1] = 0xff                   # type of service
        pkt[8] = 0xff                   # TTL
        pkt[10:12] = b"\xff\xff"        # header checksum
    else:
        pkt[0] |= 0x0f                  # traffic class, flow label
        pkt[1:4] = b"\xff\xff\xff"
        pkt[7] = 0xff                   # hop limit
    pkt[ihl + 6:ihl + 8] = b"\xff\xff"  # UDP checksum
    pkt[ihl + 8 + 4] = 0xff             # BTH: FECN, BECN, resv6
    return zlib.crc32(b"\xff" * 8 + bytes(pkt[:-4])) & 0xffffffff


def icrc_ok(l3, ihl, end):
    """Recompute the ICRC over l3[:end - 4] and compare."""
    return struct.unpack("<I", bytes(l3[end - 4:end]))[0] == \
        icrc_of(l3, ihl, end)


def payload_heuristics():
    """The dissectors Wireshark tries on an InfiniBand payload."""
    res = subprocess.run(["tshark", "-G", "heuristic-decodes"],
                         capture_output=True, text=True, check=False)
    return [f[1] for f in (l.split("\t") for l in res.stdout.splitlines())
            if len(f) >= 2 and f[0] == "infiniband.payload" and
            f[1] != "ethertype"]


def tshark_rows(path):
    """frame number -> dict of the fields, for UDP 4791 frames.

    Two settings keep the referee to the transport: the payload is test
    data, not an upper-layer protocol, so the heuristic payload dissectors
    are off (RPC-over-RDMA's throws on a 0-byte Send, rxe's and srnic's
    alike); and a zero UDP checksum over IPv6 is what RoCEv2 senders put
    there (the ICRC covers the packet; RFC 6935 allows zero for tunnels),
    so it is not flagged (the ICRC is checked here instead).
    """
    cmd = ["tshark", "-n", "-r", path, "-Y", "udp.dstport == %d" % ROCE_PORT,
           "-o", "udp.ignore_ipv6_zero_checksum:TRUE",
           "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"]
    for h in payload_heuristics():
        cmd += ["--disable-protocol", h]
    # Ethernet over InfiniBand: the ethertype protocol stays (Ethernet
    # needs it), its InfiniBand payload heuristic goes.
    cmd += ["--disable-heuristic", "eth_over_ib"]
    for f in FIELDS:
        cmd += ["-e", f]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode:
        raise SystemExit("tshark failed: " + res.stderr.strip())
    rows = {}
    for line in res.stdout.splitlines():
        vals = line.split("|")
        row = dict(zip(FIELDS, vals))
        rows[int(row["frame.number"])] = row
    return rows


def check(path, mine):
    """Check every RoCEv2 packet of a capture.

    Returns (frame -> list of problems for bad frames, Counter of packets
    per sender, Counter of bad packets per sender, Counter of opcodes).
    """
    rows = tshark_rows(path)
    seen = collections.Counter()
    bad = collections.Counter()
    total = collections.Counter()
    problems = {}
    for n, link, frame in pcap_packets(path):
        l3 = l3_of(link, frame)
        r = roce(l3) if l3 else None
        if not r:
            continue
        src, ihl, end = r
        who = "srnic" if src in mine else "rdma_rxe"
        total[who] += 1
        why = []
        if not icrc_ok(l3, ihl, end):
            why.append("ICRC mismatch")
        row = rows.get(n)
        if row is None or not row.get("infiniband.bth.opcode"):
            why.append("not dissected as InfiniBand")
        else:
            op = int(row["infiniband.bth.opcode"], 0)
            name, hdrs = OPS.get(op, ("opcode %#x" % op, None))
            seen[(who, name)] += 1
            if hdrs is None:
                why.append("opcode %#x not an RC opcode srnic uses" % op)
            else:
                why += ["no %s" % h for h in hdrs if not row.get(h)]
            if op == ATOMIC_WRITE and not atomic_write_ok(l3, ihl, end):
                why.append("Atomic Write headers: not RETH + 8 bytes")
            if row.get("_ws.malformed"):
                why.append("malformed")
            sev = row.get("_ws.expert.severity", "")
            if sev and int(sev, 0) >= 0x00600000:   # warning and above
                why.append("expert: " + row.get("_ws.expert.message", ""))
        if why:
            bad[who] += 1
            problems[n] = (src, who, why)
    return problems, total, bad, seen


def mutate(path, mine, out):
    """Write to OUT three of srnic's packets from PATH: one as captured,
    one with a payload byte flipped (only the ICRC can tell), and an
    ACKNOWLEDGE relabelled ATOMIC_ACKNOWLEDGE, its ICRC recomputed (only
    the dissector can tell: the AtomicAckETH is missing); and, if the
    capture has one, an Atomic Write with a DMA length of 16, its ICRC
    recomputed (only atomic_write_ok() can tell). Returns the frame
    numbers in OUT, or None."""
    with open(path, "rb") as f:
        head = f.read(24)
    end_ = "<" if struct.unpack("<I", head[:4])[0] in (0xa1b2c3d4,
                                                       0xa1b23c4d) else ">"
    intact = flipped = relabelled = awrite = None
    for _, link, frame in pcap_packets(path):
        l3 = l3_of(link, frame)
        r = roce(l3) if l3 else None
        if not r or r[0] not in mine:
            continue
        src, ihl, end = r
        off = len(frame) - len(l3)
        bth = off + ihl + 8
        op = frame[bth]
        if intact is None:
            intact = bytes(frame)
        elif flipped is None and end - (ihl + 8) > 12 + 4 + 8 and \
                op in (0x00, 0x01, 0x07, 0x0e):
            f2 = bytearray(frame)
            f2[bth + 12 + 4] ^= 0x5a
            flipped = bytes(f2)
        elif relabelled is None and op == 0x11 and end - (ihl + 8) == 20:
            f2 = bytearray(frame)
            f2[bth] = 0x12
            crc = icrc_of(bytes(f2[off:]), ihl, end)
            f2[off + end - 4:off + end] = struct.pack("<I", crc)
            relabelled = bytes(f2)
        elif awrite is None and op == ATOMIC_WRITE:
            f2 = bytearray(frame)       # DMA length 16: not 8 bytes
            f2[bth + 12 + 15] = 16
            crc = icrc_of(bytes(f2[off:]), ihl, end)
            f2[off + end - 4:off + end] = struct.pack("<I", crc)
            awrite = bytes(f2)
        if intact and flipped and relabelled and awrite:
            break
    if not (intact and flipped and relabelled):
        return None
    frames = [intact, flipped, relabelled] + ([awrite] if awrite else [])
    with open(out, "wb") as f:
        f.write(head)
        for fr in frames:
            f.write(struct.pack(end_ + "IIII", 0, 0, len(fr), len(fr)))
            f.write(fr)
    return tuple(range(1, len(frames) + 1))


def self_check(path, mine, out):
    """The checker must flag what it is meant to flag (see mutate())."""
    frames = mutate(path, mine, out)
    if frames is None:
        print("self-check: the capture lacks the packets to mutate")
        return 1
    problems = check(out, mine)[0]
    got = {n: problems.get(n, (None, None, []))[2] for n in frames}
    for n in frames:
        print("# mutated frame %d: %s" % (n, "; ".join(got[n]) or "passes"))
    ok = (not got[1] and got[2] == ["ICRC mismatch"] and got[3] and
          "ICRC mismatch" not in got[3])
    if 4 in got:                # an Atomic Write with a bad DMA length
        ok = ok and got[4] == ["Atomic Write headers: not RETH + 8 bytes"]
    print("self-check: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--self-check":
        mine = {ipaddress.ip_address(a) for a in sys.argv[3].split(",")}
        return self_check(sys.argv[2], mine, sys.argv[4])
    path, addrs = sys.argv[1], sys.argv[2]
    mine = {ipaddress.ip_address(a) for a in addrs.split(",")}
    problems, total, bad, seen = check(path, mine)
    for n in sorted(problems)[:20]:
        src, who, why = problems[n]
        print("# frame %d from %s (%s): %s" % (n, src, who, "; ".join(why)))
    for (who, name), k in sorted(seen.items()):
        print("# %-8s %-22s %d" % (who, name, k))
    ok = True
    for who in ("srnic", "rdma_rxe"):
        print("%s: %d RoCEv2 packets, %d bad (dissection, headers, ICRC)" %
              (who, total[who], bad[who]))
        ok = ok and not bad[who]
    if not total["srnic"]:
        print("srnic: no packets captured")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
