#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Make rdma_rxe emit RoCEv2 packets, for ICRC test vectors.

    rxe-icrc-vectors.py DEV DEST_IPV4 DEST_IPV6

Run by scripts/rxe-icrc-vectors.sh inside a guest: DEV is an rdma_rxe
device whose netdev reaches DEST_* (a namespace with no RDMA device, where
the packets are captured). Each QP is brought to RTS against a made-up
remote QP, and one of each request is posted: the first transmission of
each is what the capture keeps (retries are dropped by the capture script).
"""
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute, AH, GID
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR


def gid_index(ctx, addr):
    want = addr if ":" in addr else "::ffff:" + addr
    for i in range(16):
        try:
            g = ctx.query_gid(1, i)
        except Exception:
            continue
        # pyverbs prints GIDs as 8 groups of 4 hex digits.
        raw = bytes.fromhex(str(g).replace(":", ""))
        import ipaddress
        if ipaddress.ip_address(raw) == ipaddress.ip_address(want):
            return i
    raise SystemExit("no GID for " + addr)


def dgid(addr):
    import ipaddress
    ip = ipaddress.ip_address(addr if ":" in addr else "::ffff:" + addr)
    h = ip.packed.hex()
    return GID(":".join(h[i:i + 4] for i in range(0, 32, 4)))


def main():
    dev, dst4, dst6 = sys.argv[1:4]
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 256)
    buf = bytearray(range(256)) * 16
    mr = MR(pd, len(buf), e.IBV_ACCESS_LOCAL_WRITE)
    mr.write(bytes(buf), len(buf))
    cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                max_recv_sge=1)
    for dst in (dst4, dst6):
        sgid = gid_index(ctx, dst4.rsplit(".", 1)[0] + ".1" if dst == dst4
                         else dst.rsplit(":", 1)[0] + ":1")
        gr = GlobalRoute(dgid=dgid(dst), sgid_index=sgid, hop_limit=64)
        ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)

        # UD: SEND_ONLY with immediate and 13 bytes.
        ud = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq,
                               cap=cap))
        ua = QPAttr()
        ua.qkey = 0x11111111
        ua.port_num = 1
        ud.to_rts(ua)
        ah = AH(pd, attr=ah_attr)
        wr = SendWR(opcode=e.IBV_WR_SEND_WITH_IMM, num_sge=1,
                    sg=[SGE(mr.buf, 13, mr.lkey)])
        wr.imm_data = 0x12345678
        wr.set_wr_ud(ah, 0x13, 0x11111111)
        ud.post_send(wr)

        # RC: Write-with-Imm, Send, Read, CmpSwap, FetchAdd.
        rc = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                               cap=cap))
        qa = QPAttr()
        qa.port_num = 1
        qa.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE
        qa.ah_attr = ah_attr
        qa.dest_qp_num = 0x14
        qa.path_mtu = e.IBV_MTU_1024
        qa.rq_psn = 0x100
        qa.sq_psn = 0xfffffe
        qa.max_rd_atomic = 4
        qa.max_dest_rd_atomic = 4
        qa.timeout = 20
        qa.retry_cnt = 1
        qa.rnr_retry = 1
        qa.min_rnr_timer = 12
        rc.to_rts(qa)
        w = SendWR(opcode=e.IBV_WR_RDMA_WRITE_WITH_IMM, num_sge=1,
                   sg=[SGE(mr.buf, 37, mr.lkey)])
        w.imm_data = 0xcafef00d
        w.set_wr_rdma(0x5678, 0x7f0000001000)
        rc.post_send(w)
        rc.post_send(SendWR(opcode=e.IBV_WR_SEND, num_sge=1,
                            sg=[SGE(mr.buf + 100, 1100, mr.lkey)]))
        r = SendWR(opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                   sg=[SGE(mr.buf, 64, mr.lkey)])
        r.set_wr_rdma(0x5678, 0x7f0000002000)
        rc.post_send(r)
        for op in (e.IBV_WR_ATOMIC_CMP_AND_SWP, e.IBV_WR_ATOMIC_FETCH_AND_ADD):
            a = SendWR(opcode=op, num_sge=1, sg=[SGE(mr.buf, 8, mr.lkey)])
            a.set_wr_atomic(0x5678, 0x7f0000003000, 0x1111222233334444,
                            0x5555666677778888)
            rc.post_send(a)
        time.sleep(1)
    time.sleep(2)


if __name__ == "__main__":
    main()
