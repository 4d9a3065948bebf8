// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the opcode table, and building and parsing transport headers.
 *
 * Parsing validates everything a packet says about itself before any of
 * it is believed: the header version, an opcode legal for its transport,
 * headers that fit, a pad count that fits, payload only where the opcode
 * allows it, at most one MTU of it, and a 4-byte aligned payload + pad.
 * Checks that need the QP (state, PSN, keys) come later in the receive
 * pipeline.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#include <kunit/visibility.h>

#include "srnic_compat.h"
#include "srnic_pkt.h"

#define OP(_t, _op, _name, _hdrs, _flags, _len)			\
	[SRNIC_TRANSPORT_##_t | SRNIC_OP_##_op] = {			\
		.name = #_t "_" _name, .hdrs = (_hdrs),			\
		.flags = (_flags), .hdr_len = (_len),			\
	}

#define P	SRNIC_OPF_PAYLOAD
#define F	SRNIC_OPF_FIRST
#define L	SRNIC_OPF_LAST
#define Q	SRNIC_OPF_REQ
#define SND	(SRNIC_OPF_SEND | Q | P)
#define WR	(SRNIC_OPF_WRITE | Q | P)
#define RDR	(SRNIC_OPF_READ | P)
#define IMM	SRNIC_OPF_IMM
#define INV	SRNIC_OPF_INV
#define H_RETH	SRNIC_HDR_RETH
#define H_IMM	SRNIC_HDR_IMMDT
#define H_AETH	SRNIC_HDR_AETH

/*
 * IBA 9.2-9.4: which opcodes exist for which transport, the extended
 * headers each carries and the resulting header length (BTH 12, DETH 8,
 * RETH 16, AtomicETH 28, AETH 4, AtomicAckETH 8, ImmDt 4, IETH 4,
 * FETH 4).
 */
static const struct srnic_opinfo srnic_opcodes[256] = {
	OP(RC, SEND_FIRST, "SEND_FIRST", 0, SND | F, 12),
	OP(RC, SEND_MIDDLE, "SEND_MIDDLE", 0, SND, 12),
	OP(RC, SEND_LAST, "SEND_LAST", 0, SND | L, 12),
	OP(RC, SEND_LAST_IMM, "SEND_LAST_WITH_IMMEDIATE", H_IMM,
	   SND | L | IMM, 16),
	OP(RC, SEND_ONLY, "SEND_ONLY", 0, SND | F | L, 12),
	OP(RC, SEND_ONLY_IMM, "SEND_ONLY_WITH_IMMEDIATE", H_IMM,
	   SND | F | L | IMM, 16),
	OP(RC, WRITE_FIRST, "RDMA_WRITE_FIRST", H_RETH, WR | F, 28),
	OP(RC, WRITE_MIDDLE, "RDMA_WRITE_MIDDLE", 0, WR, 12),
	OP(RC, WRITE_LAST, "RDMA_WRITE_LAST", 0, WR | L, 12),
	OP(RC, WRITE_LAST_IMM, "RDMA_WRITE_LAST_WITH_IMMEDIATE", H_IMM,
	   WR | L | IMM, 16),
	OP(RC, WRITE_ONLY, "RDMA_WRITE_ONLY", H_RETH, WR | F | L, 28),
	OP(RC, WRITE_ONLY_IMM, "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
	   H_RETH | H_IMM, WR | F | L | IMM, 32),
	OP(RC, READ_REQUEST, "RDMA_READ_REQUEST", H_RETH,
	   SRNIC_OPF_READ | Q | F | L, 28),
	OP(RC, READ_RESPONSE_FIRST, "RDMA_READ_RESPONSE_FIRST", H_AETH,
	   RDR | F, 16),
	OP(RC, READ_RESPONSE_MIDDLE, "RDMA_READ_RESPONSE_MIDDLE", 0, RDR, 12),
	OP(RC, READ_RESPONSE_LAST, "RDMA_READ_RESPONSE_LAST", H_AETH,
	   RDR | L, 16),
	OP(RC, READ_RESPONSE_ONLY, "RDMA_READ_RESPONSE_ONLY", H_AETH,
	   RDR | F | L, 16),
	OP(RC, ACKNOWLEDGE, "ACKNOWLEDGE", H_AETH, SRNIC_OPF_ACK | F | L, 16),
	OP(RC, ATOMIC_ACKNOWLEDGE, "ATOMIC_ACKNOWLEDGE",
	   H_AETH | SRNIC_HDR_ATMACK, SRNIC_OPF_ATOMIC | F | L, 24),
	OP(RC, COMPARE_SWAP, "COMPARE_SWAP", SRNIC_HDR_ATMETH,
	   SRNIC_OPF_ATOMIC | Q | F | L, 40),
	OP(RC, FETCH_ADD, "FETCH_ADD", SRNIC_HDR_ATMETH,
	   SRNIC_OPF_ATOMIC | Q | F | L, 40),
	OP(RC, SEND_LAST_INV, "SEND_LAST_WITH_INVALIDATE", SRNIC_HDR_IETH,
	   SND | L | INV, 16),
	OP(RC, SEND_ONLY_INV, "SEND_ONLY_WITH_INVALIDATE", SRNIC_HDR_IETH,
	   SND | F | L | INV, 16),
	/* IBA 1.5 (Flush): FETH and RETH, no payload. */
	OP(RC, FLUSH, "FLUSH", SRNIC_HDR_FETH | H_RETH,
	   Q | F | L | SRNIC_OPF_FLUSH, 32),
	/* IBA 1.5 (Atomic Write): RETH and exactly 8 bytes of payload. */
	OP(RC, ATOMIC_WRITE, "RDMA_ATOMIC_WRITE", H_RETH,
	   WR | F | L | SRNIC_OPF_AWRITE, 28),

	OP(UC, SEND_FIRST, "SEND_FIRST", 0, SND | F, 12),
	OP(UC, SEND_MIDDLE, "SEND_MIDDLE", 0, SND, 12),
	OP(UC, SEND_LAST, "SEND_LAST", 0, SND | L, 12),
	OP(UC, SEND_LAST_IMM, "SEND_LAST_WITH_IMMEDIATE", H_IMM,
	   SND | L | IMM, 16),
	OP(UC, SEND_ONLY, "SEND_ONLY", 0, SND | F | L, 12),
	OP(UC, SEND_ONLY_IMM, "SEND_ONLY_WITH_IMMEDIATE", H_IMM,
	   SND | F | L | IMM, 16),
	OP(UC, WRITE_FIRST, "RDMA_WRITE_FIRST", H_RETH, WR | F, 28),
	OP(UC, WRITE_MIDDLE, "RDMA_WRITE_MIDDLE", 0, WR, 12),
	OP(UC, WRITE_LAST, "RDMA_WRITE_LAST", 0, WR | L, 12),
	OP(UC, WRITE_LAST_IMM, "RDMA_WRITE_LAST_WITH_IMMEDIATE", H_IMM,
	   WR | L | IMM, 16),
	OP(UC, WRITE_ONLY, "RDMA_WRITE_ONLY", H_RETH, WR | F | L, 28),
	OP(UC, WRITE_ONLY_IMM, "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
	   H_RETH | H_IMM, WR | F | L | IMM, 32),

	OP(UD, SEND_ONLY, "SEND_ONLY", SRNIC_HDR_DETH, SND | F | L, 20),
	OP(UD, SEND_ONLY_IMM, "SEND_ONLY_WITH_IMMEDIATE",
	   SRNIC_HDR_DETH | H_IMM, SND | F | L | IMM, 24),
};

#undef P
#undef F
#undef L
#undef Q
#undef SND
#undef WR
#undef RDR
#undef IMM
#undef INV
#undef H_RETH
#undef H_IMM
#undef H_AETH
#undef OP

/**
 * srnic_opinfo() - look an opcode up
 * @opcode: the BTH opcode
 *
 * Context: any.
 * Return: the table entry, or NULL for an opcode srnic does not know or
 * that is illegal for its transport (e.g. a Read on UC).
 */
const struct srnic_opinfo *srnic_opinfo(u8 opcode)
{
	const struct srnic_opinfo *info = &srnic_opcodes[opcode];

	return info->name ? info : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_opinfo);

/**
 * srnic_pkt_parse() - validate a transport packet and read its headers
 * @pkt: filled in on success
 * @buf: the packet from the BTH on (the UDP payload)
 * @len: bytes at @buf, ICRC included
 *
 * Context: any.
 * Return: SRNIC_PKT_OK, or why the packet must be dropped.
 */
enum srnic_pkt_err srnic_pkt_parse(struct srnic_pkt *pkt, const void *buf,
				   u32 len)
{
	const struct srnic_bth *bth = buf;
	const struct srnic_opinfo *info;
	const u8 *p;
	u32 rest, qpn, apsn;

	if (len < sizeof(*bth) + SRNIC_ICRC_SIZE)
		return SRNIC_PKT_ERR_SHORT;
	if (bth->flags & SRNIC_BTH_TVER_MASK)
		return SRNIC_PKT_ERR_TVER;
	info = srnic_opinfo(bth->opcode);
	if (!info)
		return SRNIC_PKT_ERR_OPCODE;
	if (len < info->hdr_len + SRNIC_ICRC_SIZE)
		return SRNIC_PKT_ERR_SHORT;

	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = bth->opcode;
	pkt->info = info;
	pkt->se = bth->flags & SRNIC_BTH_SE;
	pkt->mig = bth->flags & SRNIC_BTH_MIG;
	pkt->pad = (bth->flags & SRNIC_BTH_PAD_MASK) >> SRNIC_BTH_PAD_SHIFT;
	pkt->pkey = be16_to_cpu(bth->pkey);
	qpn = be32_to_cpu(bth->qpn);
	pkt->qpn = qpn & SRNIC_BTH_QPN_MASK;
	pkt->fecn = qpn & SRNIC_BTH_FECN;
	pkt->becn = qpn & SRNIC_BTH_BECN;
	apsn = be32_to_cpu(bth->apsn);
	pkt->ack_req = apsn & SRNIC_BTH_ACK_REQ;
	pkt->psn = apsn & SRNIC_BTH_PSN_MASK;
	pkt->hdr_len = info->hdr_len;

	rest = len - info->hdr_len - SRNIC_ICRC_SIZE;
	if (pkt->pad > rest)
		return SRNIC_PKT_ERR_PAD;
	pkt->paylen = rest - pkt->pad;
	if (!(info->flags & SRNIC_OPF_PAYLOAD)) {
		if (rest)
			return pkt->pad ? SRNIC_PKT_ERR_PAD :
					  SRNIC_PKT_ERR_LENGTH;
	} else if (pkt->paylen > SRNIC_MAX_PAYLOAD || rest % 4) {
		return SRNIC_PKT_ERR_LENGTH;
	}

	p = (const u8 *)(bth + 1);
	if (info->hdrs & SRNIC_HDR_DETH) {
		const struct srnic_deth *deth = (const void *)p;

		pkt->qkey = be32_to_cpu(deth->qkey);
		pkt->src_qpn = be32_to_cpu(deth->sqp) & SRNIC_BTH_QPN_MASK;
		p += sizeof(*deth);
	}
	if (info->hdrs & SRNIC_HDR_FETH) {
		u32 bits = get_unaligned_be32(p);

		pkt->flush_type = bits & SRNIC_FETH_PLT_MASK;
		pkt->flush_level = (bits & SRNIC_FETH_SEL_MASK) >>
				   SRNIC_FETH_SEL_SHIFT;
		p += sizeof(struct srnic_feth);
	}
	if (info->hdrs & SRNIC_HDR_RETH) {
		const struct srnic_reth *reth = (const void *)p;

		pkt->va = get_unaligned_be64(&reth->va);
		pkt->rkey = be32_to_cpu(reth->rkey);
		pkt->dma_len = be32_to_cpu(reth->len);
		p += sizeof(*reth);
	}
	if (info->hdrs & SRNIC_HDR_ATMETH) {
		const struct srnic_atmeth *atm = (const void *)p;

		pkt->va = get_unaligned_be64(&atm->va);
		pkt->rkey = get_unaligned_be32(&atm->rkey);
		pkt->swap_add = get_unaligned_be64(&atm->swap_add);
		pkt->compare = get_unaligned_be64(&atm->compare);
		p += sizeof(*atm);
	}
	if (info->hdrs & SRNIC_HDR_AETH) {
		u32 smsn = get_unaligned_be32(p);

		pkt->syndrome = smsn >> SRNIC_AETH_SYN_SHIFT;
		pkt->msn = smsn & SRNIC_AETH_MSN_MASK;
		p += sizeof(struct srnic_aeth);
	}
	if (info->hdrs & SRNIC_HDR_ATMACK) {
		pkt->orig = get_unaligned_be64(p);
		p += sizeof(struct srnic_atmack);
	}
	if (info->hdrs & SRNIC_HDR_IMMDT) {
		pkt->imm = cpu_to_be32(get_unaligned_be32(p));
		p += sizeof(struct srnic_immdt);
	}
	if (info->hdrs & SRNIC_HDR_IETH) {
		pkt->inv_rkey = get_unaligned_be32(p);
		p += sizeof(struct srnic_ieth);
	}
	return SRNIC_PKT_OK;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pkt_parse);

/**
 * srnic_pkt_build() - write a packet's BTH and extended headers
 * @pkt: the fields; @pkt->opcode selects the headers, @pkt->pad is
 *	written as given (the caller pads the payload to 4 bytes)
 * @buf: where the BTH goes
 * @size: room at @buf
 *
 * Context: any.
 * Return: bytes written (the header length), -EINVAL for an opcode
 * srnic does not know, -ENOSPC if the headers do not fit.
 */
int srnic_pkt_build(struct srnic_pkt *pkt, void *buf, u32 size)
{
	const struct srnic_opinfo *info = srnic_opinfo(pkt->opcode);
	struct srnic_bth *bth = buf;
	u8 *p;

	if (!info || pkt->pad > 3)
		return -EINVAL;
	if (size < info->hdr_len)
		return -ENOSPC;
	pkt->info = info;
	pkt->hdr_len = info->hdr_len;

	bth->opcode = pkt->opcode;
	bth->flags = (pkt->se ? SRNIC_BTH_SE : 0) |
		     (pkt->mig ? SRNIC_BTH_MIG : 0) |
		     (pkt->pad << SRNIC_BTH_PAD_SHIFT);
	bth->pkey = cpu_to_be16(pkt->pkey);
	bth->qpn = cpu_to_be32((pkt->qpn & SRNIC_BTH_QPN_MASK) |
			       (pkt->fecn ? SRNIC_BTH_FECN : 0) |
			       (pkt->becn ? SRNIC_BTH_BECN : 0));
	bth->apsn = cpu_to_be32((pkt->psn & SRNIC_BTH_PSN_MASK) |
				(pkt->ack_req ? SRNIC_BTH_ACK_REQ : 0));

	p = (u8 *)(bth + 1);
	if (info->hdrs & SRNIC_HDR_DETH) {
		struct srnic_deth *deth = (void *)p;

		deth->qkey = cpu_to_be32(pkt->qkey);
		deth->sqp = cpu_to_be32(pkt->src_qpn & SRNIC_BTH_QPN_MASK);
		p += sizeof(*deth);
	}
	if (info->hdrs & SRNIC_HDR_FETH) {
		put_unaligned_be32((pkt->flush_type & SRNIC_FETH_PLT_MASK) |
				   ((pkt->flush_level << SRNIC_FETH_SEL_SHIFT) &
				    SRNIC_FETH_SEL_MASK), p);
		p += sizeof(struct srnic_feth);
	}
	if (info->hdrs & SRNIC_HDR_RETH) {
		struct srnic_reth *reth = (void *)p;

		put_unaligned_be64(pkt->va, &reth->va);
		reth->rkey = cpu_to_be32(pkt->rkey);
		reth->len = cpu_to_be32(pkt->dma_len);
		p += sizeof(*reth);
	}
	if (info->hdrs & SRNIC_HDR_ATMETH) {
		struct srnic_atmeth *atm = (void *)p;

		put_unaligned_be64(pkt->va, &atm->va);
		put_unaligned_be32(pkt->rkey, &atm->rkey);
		put_unaligned_be64(pkt->swap_add, &atm->swap_add);
		put_unaligned_be64(pkt->compare, &atm->compare);
		p += sizeof(*atm);
	}
	if (info->hdrs & SRNIC_HDR_AETH) {
		put_unaligned_be32((u32)pkt->syndrome << SRNIC_AETH_SYN_SHIFT |
				   (pkt->msn & SRNIC_AETH_MSN_MASK), p);
		p += sizeof(struct srnic_aeth);
	}
	if (info->hdrs & SRNIC_HDR_ATMACK) {
		put_unaligned_be64(pkt->orig, p);
		p += sizeof(struct srnic_atmack);
	}
	if (info->hdrs & SRNIC_HDR_IMMDT) {
		put_unaligned_be32(be32_to_cpu(pkt->imm), p);
		p += sizeof(struct srnic_immdt);
	}
	if (info->hdrs & SRNIC_HDR_IETH) {
		put_unaligned_be32(pkt->inv_rkey, p);
		p += sizeof(struct srnic_ieth);
	}
	return p - (u8 *)buf;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pkt_build);

/**
 * srnic_ack_decide() - does this packet call for an ACK now
 * @ac: the responder's coalescing state
 * @ack_req: the packet's AckReq bit
 * @nak: the packet is answered with a NAK (always sent at once)
 * @max_pending: most packets left unacknowledged (>= 1)
 *
 * Context: the responder, serialised per QP.
 * Return: SRNIC_ACK_NOW (the state restarts) or SRNIC_ACK_DEFER.
 */
enum srnic_ack_action srnic_ack_decide(struct srnic_ack_coalesce *ac,
				       bool ack_req, bool nak, u32 max_pending)
{
	if (!nak)
		ac->pending++;
	if (nak || ack_req || ac->pending >= max(max_pending, 1U)) {
		ac->pending = 0;
		return SRNIC_ACK_NOW;
	}
	return SRNIC_ACK_DEFER;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_ack_decide);

/**
 * srnic_ack_req_needed() - should a request packet carry AckReq
 * @psn_in_msg: the packet's index within its message (0 for the first)
 * @last: it is the message's last packet
 * @every: also ask every this many packets within a long message (0:
 *	only on the last packet)
 *
 * The requester asks for an ACK at the end of every message, so each
 * completes promptly, and periodically within long ones, so its window
 * keeps moving.
 *
 * Context: any.
 * Return: whether to set AckReq.
 */
bool srnic_ack_req_needed(u32 psn_in_msg, bool last, u32 every)
{
	return last || (every && (psn_in_msg + 1) % every == 0);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_ack_req_needed);
