/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic: work requests as the pipeline holds them.
 *
 * A user QP's send WQE lives in a ring the process can rewrite at any
 * moment. The prefetch stage copies each WQE out of the ring once, then
 * srnic_wqe_from_user() validates the copy and turns it into a struct
 * srnic_send_wqe in kernel memory: nothing the process writes afterwards
 * changes a WQE in flight, and nothing it wrote is trusted unchecked.
 */
#ifndef SRNIC_WQE_H
#define SRNIC_WQE_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

/* Largest message: the port's max_msg_sz. */
#define SRNIC_MAX_MSG_SIZE	BIT(31)

/**
 * struct srnic_wqe_limits - what a QP's send queue was created with
 * @type: the QP type
 * @max_sge: scatter/gather entries per WQE
 * @max_inline: inline data bytes per WQE
 * @kernel: a kernel QP: its ring is written by srnic_post_send() only, so
 *	kernel-only operations (fast registration, which carries an MR
 *	pointer) are accepted from it
 */
struct srnic_wqe_limits {
	enum ib_qp_type type;
	u32 max_sge;
	u32 max_inline;
	bool kernel;
};

/**
 * struct srnic_av - a resolved RoCEv2 address vector
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @sgid_index: index of the source GID in the port's table
 * @sgid: the source GID (IPv4-mapped or IPv6 address)
 * @dgid: the destination GID
 * @dmac: destination MAC, resolved by the core for RoCE
 * @flow_label: IPv6 flow label
 * @hop_limit: IP TTL / hop limit
 * @traffic_class: IP DSCP/ECN byte
 * @sl: service level (kept for query; RoCE carries it as priority)
 * @static_rate: kept for query
 */
struct srnic_av {
	u8 network_type;
	u8 sgid_index;
	union ib_gid sgid;
	union ib_gid dgid;
	u8 dmac[ETH_ALEN];
	u32 flow_label;
	u8 hop_limit;
	u8 traffic_class;
	u8 sl;
	u8 static_rate;
};

/**
 * struct srnic_send_wqe - a validated send work request
 * @wr_id: the consumer's cookie
 * @opcode: IB_WR_*
 * @send_flags: IB_SEND_FENCE, _SIGNALED, _SOLICITED, _INLINE
 * @imm: immediate data (network order, as it goes on the wire)
 * @inv_rkey: key to invalidate at the responder (SEND_WITH_INV)
 * @remote_addr: RDMA and atomic target address
 * @rkey: RDMA and atomic target key
 * @compare_add: CmpSwap compare value / FetchAdd addend
 * @swap: CmpSwap swap value; the 8 data bytes of an Atomic Write
 * @ah_num: UD address handle number
 * @remote_qpn: UD destination QP
 * @remote_qkey: UD destination Q_Key
 * @av: UD: the address handle's address vector, copied at prefetch (the
 *	handle may be destroyed once the WQE is posted)
 * @mw: Bind Memory Window: the window's current key (@mw.mw_rkey), its
 *	key after the bind (@mw.new_rkey), the MR (@mw.mr_lkey), the range
 *	and the rights it is to grant
 * @reg: Fast Register (kernel QPs only): the MR, its key and rights
 * @flush: RDMA Flush: the range's length (RETH DMA length; the range
 *	starts at @remote_addr), the placement type and selectivity level
 * @length: message bytes, recomputed from the SGEs (or the inline size)
 * @num_sge: entries in @sge (0 for inline data)
 * @sge: the local buffers; for inline data, @inline_data instead
 * @inline_data: the data itself, @length bytes
 */
struct srnic_send_wqe {
	u64 wr_id;
	u32 opcode;
	u32 send_flags;
	__be32 imm;
	u32 inv_rkey;
	u64 remote_addr;
	u32 rkey;
	u64 compare_add;
	u64 swap;
	union {
		struct {
			u32 ah_num;
			u32 remote_qpn;
			u32 remote_qkey;
			struct srnic_av av;
		};
		struct {
			u64 addr;
			u64 length;
			u32 mr_lkey;
			u32 mw_rkey;
			u32 new_rkey;
			u32 access;
		} mw;
		struct {
			struct ib_mr *mr;
			u32 key;
			u32 access;
		} reg;
		struct {
			u32 len;
			u8 type;
			u8 level;
		} flush;
	};
	u32 length;
	u32 num_sge;
	union {
		DECLARE_FLEX_ARRAY(struct ib_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

/* Bytes a struct srnic_send_wqe needs for a QP's limits. */
static inline size_t srnic_send_wqe_size(const struct srnic_wqe_limits *lim)
{
	return sizeof(struct srnic_send_wqe) +
	       max_t(size_t, lim->max_sge * sizeof(struct ib_sge),
		     lim->max_inline);
}

/* Bytes of a user ring element holding such a WQE. */
static inline size_t srnic_user_wqe_size(const struct srnic_wqe_limits *lim)
{
	return sizeof(struct rxe_send_wqe) +
	       max_t(size_t, lim->max_sge * sizeof(struct rxe_sge),
		     lim->max_inline);
}

int srnic_wqe_from_user(const struct srnic_wqe_limits *lim,
			const struct rxe_send_wqe *u,
			struct srnic_send_wqe *w);

#endif /* SRNIC_WQE_H */
