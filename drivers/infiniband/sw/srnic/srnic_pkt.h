/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic: RoCEv2 transport packets: the opcode table, header build and
 * parse, 24-bit PSN arithmetic and the ICRC.
 *
 * Two layers, as in rdma_rxe: struct srnic_bth & co. (roce_hdr.h) are the
 * raw wire headers; struct srnic_pkt is a packet's fields in host order.
 * Byte order is converted in srnic_pkt.c only.
 */
#ifndef SRNIC_PKT_H
#define SRNIC_PKT_H

#include <linux/types.h>
#include <linux/bits.h>
#include <srnic/roce_hdr.h>

/* Largest payload of one packet: the largest path MTU. */
#define SRNIC_MAX_PAYLOAD	4096

/* Extended headers an opcode carries; they follow the BTH in this order. */
enum srnic_hdr_bit {
	SRNIC_HDR_DETH		= BIT(0),
	SRNIC_HDR_RETH		= BIT(1),
	SRNIC_HDR_ATMETH	= BIT(2),
	SRNIC_HDR_AETH		= BIT(3),
	SRNIC_HDR_ATMACK	= BIT(4),
	SRNIC_HDR_IMMDT		= BIT(5),
	SRNIC_HDR_IETH		= BIT(6),
	SRNIC_HDR_FETH		= BIT(7),	/* before the RETH */
};

/* What an opcode is. */
enum srnic_op_flag {
	SRNIC_OPF_PAYLOAD	= BIT(0),	/* may carry payload */
	SRNIC_OPF_FIRST		= BIT(1),	/* starts a message */
	SRNIC_OPF_LAST		= BIT(2),	/* ends a message */
	SRNIC_OPF_REQ		= BIT(3),	/* requester to responder */
	SRNIC_OPF_SEND		= BIT(4),
	SRNIC_OPF_WRITE		= BIT(5),
	SRNIC_OPF_READ		= BIT(6),	/* request or response */
	SRNIC_OPF_ATOMIC	= BIT(7),	/* request or response */
	SRNIC_OPF_ACK		= BIT(8),
	SRNIC_OPF_IMM		= BIT(9),
	SRNIC_OPF_INV		= BIT(10),
	SRNIC_OPF_AWRITE	= BIT(11),	/* RDMA Atomic Write */
	SRNIC_OPF_FLUSH		= BIT(12),	/* RDMA Flush */
};

/**
 * struct srnic_opinfo - one opcode
 * @name: for logs and tests
 * @hdrs: SRNIC_HDR_* extended headers present
 * @flags: SRNIC_OPF_*
 * @hdr_len: BTH plus extended headers, in bytes
 */
struct srnic_opinfo {
	const char *name;
	u8 hdrs;
	u16 flags;
	u8 hdr_len;
};

const struct srnic_opinfo *srnic_opinfo(u8 opcode);

/* Why a packet was refused by srnic_pkt_parse(); 0 is "valid". */
enum srnic_pkt_err {
	SRNIC_PKT_OK = 0,
	SRNIC_PKT_ERR_SHORT,		/* shorter than its headers + ICRC */
	SRNIC_PKT_ERR_TVER,		/* transport header version not 0 */
	SRNIC_PKT_ERR_OPCODE,		/* unknown or unsupported opcode */
	SRNIC_PKT_ERR_PAD,		/* pad count does not fit the packet */
	SRNIC_PKT_ERR_LENGTH,		/* payload where none is allowed, too
					 * long, or not 4-byte aligned with pad
					 */
	SRNIC_PKT_ERR_NUM
};

/**
 * struct srnic_pkt - a transport packet's fields, in host order
 * @opcode: the BTH opcode
 * @info: its opcode table entry (set by parse; build looks it up)
 * @se: solicited event
 * @mig: migration state bit
 * @pad: pad bytes after the payload (0..3)
 * @pkey: partition key
 * @fecn: forward ECN bit (BTH)
 * @becn: backward ECN bit (BTH)
 * @qpn: destination QP
 * @ack_req: acknowledge request
 * @psn: packet sequence number
 * @hdr_len: bytes of BTH and extended headers
 * @paylen: payload bytes, without pad
 * @va: RETH/AtomicETH virtual address
 * @rkey: RETH/AtomicETH remote key
 * @dma_len: RETH DMA length
 * @flush_type: FETH placement type (IB_FLUSH_GLOBAL, _PERSISTENT)
 * @flush_level: FETH selectivity level (IB_FLUSH_RANGE, _MR)
 * @syndrome: AETH syndrome
 * @msn: AETH message sequence number
 * @swap_add: AtomicETH swap or add data
 * @compare: AtomicETH compare data
 * @orig: AtomicAckETH original remote data
 * @imm: immediate data, in network order as it travels to the CQE
 * @inv_rkey: IETH key to invalidate
 * @qkey: DETH queue key
 * @src_qpn: DETH source QP
 */
struct srnic_pkt {
	u8 opcode;
	const struct srnic_opinfo *info;
	bool se;
	bool mig;
	u8 pad;
	u16 pkey;
	bool fecn;
	bool becn;
	u32 qpn;
	bool ack_req;
	u32 psn;
	u32 hdr_len;
	u32 paylen;

	u64 va;
	u32 rkey;
	u32 dma_len;
	u8 flush_type;
	u8 flush_level;
	u8 syndrome;
	u32 msn;
	u64 swap_add;
	u64 compare;
	u64 orig;
	__be32 imm;
	u32 inv_rkey;
	u32 qkey;
	u32 src_qpn;
};

enum srnic_pkt_err srnic_pkt_parse(struct srnic_pkt *pkt, const void *buf,
				   u32 len);
int srnic_pkt_build(struct srnic_pkt *pkt, void *buf, u32 size);

/* 24-bit PSN arithmetic: every comparison is modulo 2^24. */
#define SRNIC_PSN_MASK		SRNIC_BTH_PSN_MASK
/* Half the PSN space: the window in which "before" is meaningful. */
#define SRNIC_PSN_HALF		BIT(23)

static inline u32 srnic_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SRNIC_PSN_MASK;
}

/* Signed distance a - b, in -2^23 .. 2^23 - 1. */
static inline s32 srnic_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static inline bool srnic_psn_before(u32 a, u32 b)
{
	return srnic_psn_diff(a, b) < 0;
}

/*
 * Distance from @b forward to @a, in 0 .. 2^24 - 1. The requester's
 * outstanding PSNs, [una, max_psn), may span exactly 2^23 (IBA's limit:
 * one 2 GiB Read at path MTU 256), where the signed distance wraps: its
 * window tests count forward from una with this.
 */
static inline u32 srnic_psn_dist(u32 a, u32 b)
{
	return (a - b) & SRNIC_PSN_MASK;
}

/*
 * Where a response's @psn lies for a requester whose outstanding PSNs are
 * [@una, @max_psn), counted forward from @una: in flight; ahead (the 2^23
 * PSNs after max_psn, never sent); or behind una (the rest). When 2^23
 * are in flight, the whole space is in flight or ahead.
 */
enum srnic_psn_win {
	SRNIC_PSN_IN_FLIGHT,
	SRNIC_PSN_AHEAD,
	SRNIC_PSN_BEHIND,
};

static inline enum srnic_psn_win srnic_psn_window_of(u32 psn, u32 una,
						     u32 max_psn)
{
	u32 off = srnic_psn_dist(psn, una);
	u32 flight = srnic_psn_dist(max_psn, una);

	if (off < flight)
		return SRNIC_PSN_IN_FLIGHT;
	return off - flight < SRNIC_PSN_HALF ? SRNIC_PSN_AHEAD :
					       SRNIC_PSN_BEHIND;
}

/*
 * PSNs from @una up to the transmit position @psn, which never passes
 * @max_psn: 0 when @psn lies behind @una (a late ACK acknowledged packets
 * being sent again), counted back from max_psn so that a flight of 2^23
 * is measured right.
 */
static inline u32 srnic_psn_sent(u32 psn, u32 una, u32 max_psn)
{
	u32 flight = srnic_psn_dist(max_psn, una);
	u32 unsent = srnic_psn_dist(max_psn, psn);

	return unsent >= flight ? 0 : flight - unsent;
}

/* @psn lies in [@start, @start + @size), modulo 2^24. */
static inline bool srnic_psn_in_window(u32 psn, u32 start, u32 size)
{
	return ((psn - start) & SRNIC_PSN_MASK) < size;
}

/*
 * ACK coalescing at the responder: an RC responder need not acknowledge
 * every packet. It must answer at once when the requester set AckReq,
 * for a NAK, and it bounds how many packets go unacknowledged; in
 * between it defers (a timer sends the deferred ACK).
 */
enum srnic_ack_action {
	SRNIC_ACK_DEFER,	/* no ACK now */
	SRNIC_ACK_NOW,		/* send an ACK covering everything so far */
};

/**
 * struct srnic_ack_coalesce - a responder's unacknowledged packets
 * @pending: valid packets received since the last ACK sent
 */
struct srnic_ack_coalesce {
	u32 pending;
};

enum srnic_ack_action srnic_ack_decide(struct srnic_ack_coalesce *ac,
				       bool ack_req, bool nak, u32 max_pending);
bool srnic_ack_req_needed(u32 psn_in_msg, bool last, u32 every);

/* srnic_icrc.c */
u32 srnic_icrc(const void *l3, u32 len);

#endif /* SRNIC_PKT_H */
