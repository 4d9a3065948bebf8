// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: validated receive. Every RoCEv2 packet passes these checks, in
 * this order, before anything looks at its payload:
 *
 *   UDP length within the buffer -> addressed to one of the device's
 *   GIDs (or to another srnic device of the namespace: handed to it) ->
 *   headers parse (opcode known, lengths
 *   and pad consistent) -> ICRC -> destination QP exists, is of the
 *   packet's transport (RC, UC, or UD/GSI) and is in a state that
 *   receives -> P_Key -> RC/UC: the source address is the QP's peer;
 *   UD: the Q_Key is the QP's (the GSI QP's is the well-known one)
 *
 * then RC requests go to the responder (srnic_resp.c) and responses to
 * the completer (srnic_comp.c), which check PSNs, opcode sequences, keys
 * and bounds; UC and UD packets to their own receive paths. A packet
 * that fails is dropped and counted.
 */
#include <kunit/visibility.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ipv6.h>
#include <rdma/ib_mad.h>

#include "srnic.h"

/* The source (@src) or destination address of a packet, as a GID. */
static void srnic_rx_gid(const u8 *l3, bool src, union ib_gid *gid)
{
	if ((l3[0] >> 4) == 4) {
		const struct iphdr *ip4 = (const void *)l3;

		ipv6_addr_set_v4mapped(src ? ip4->saddr : ip4->daddr,
				       (struct in6_addr *)gid);
	} else {
		const struct ipv6hdr *ip6 = (const void *)l3;

		memcpy(gid, src ? &ip6->saddr : &ip6->daddr, sizeof(*gid));
	}
}

/* The packet came from the QP's peer (its destination GID). */
static bool srnic_rx_from_peer(struct srnic_qp *qp, const u8 *l3)
{
	union ib_gid src;

	srnic_rx_gid(l3, true, &src);
	return !memcmp(&src, &qp->av.dgid, sizeof(src));
}

/* A packet of @transport may be for a QP of this type. */
static bool srnic_rx_transport_ok(const struct srnic_qp *qp, u8 transport)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return transport == SRNIC_TRANSPORT_RC;
	case IB_QPT_UC:
		return transport == SRNIC_TRANSPORT_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return transport == SRNIC_TRANSPORT_UD;
	default:
		return false;
	}
}

/**
 * srnic_rx() - receive one RoCEv2 packet
 * @sdev: the device it arrived on
 * @skb: the packet, linear, network and transport headers set; consumed
 * @local: built by srnic_xmit() for an address of this host and handed
 *	over without leaving the kernel (the loopback route): its ICRC was
 *	not computed and is not checked, as an RNIC's internal loopback
 *	does not put a packet on the wire. Every other check stays. A
 *	packet from the network stack is never @local.
 *
 * Context: softirq, under rcu_read_lock().
 */
void srnic_rx(struct srnic_dev *sdev, struct sk_buff *skb, bool local)
{
	const struct udphdr *uh = udp_hdr(skb);
	const u8 *l3 = skb_network_header(skb);
	const u8 *bth = (const u8 *)(uh + 1);
	enum srnic_pkt_err perr;
	enum ib_qp_state state;
	struct srnic_pkt pkt;
	struct srnic_qp *qp;
	union ib_gid dgid;
	u32 ulen, len;
	u8 transport;

	ulen = ntohs(uh->len);
	if (ulen < sizeof(*uh) || bth + (ulen - sizeof(*uh)) >
	    skb_tail_pointer(skb) || l3 >= (const u8 *)uh) {
		srnic_counter_inc(sdev, SRNIC_CNT_RCVD_PKTS);
		goto malformed;
	}
	/*
	 * Addressed to one of this device's GIDs, or to another device of
	 * the namespace (reached through this one's netdev or loopback).
	 */
	srnic_rx_gid(l3, false, &dgid);
	if (unlikely(!srnic_gid_local(sdev, &dgid))) {
		struct srnic_dev *owner = srnic_gid_owner(sdev, &dgid);

		if (!owner) {
			srnic_counter_inc(sdev, SRNIC_CNT_RCVD_PKTS);
			srnic_counter_inc(sdev, SRNIC_CNT_DGID_ERR);
			goto drop;
		}
		sdev = owner;
	}
	srnic_counter_inc(sdev, SRNIC_CNT_RCVD_PKTS);
	len = ulen - sizeof(*uh);
	perr = srnic_pkt_parse(&pkt, bth, len);
	if (perr)
		goto malformed;
	if (!local && srnic_icrc(l3, bth + len - SRNIC_ICRC_SIZE - l3) !=
	    get_unaligned_le32(bth + len - SRNIC_ICRC_SIZE)) {
		srnic_counter_inc(sdev, SRNIC_CNT_ICRC_ERR);
		goto drop;
	}
	transport = pkt.opcode & SRNIC_TRANSPORT_MASK;
	if (transport != SRNIC_TRANSPORT_RC && transport != SRNIC_TRANSPORT_UC &&
	    transport != SRNIC_TRANSPORT_UD)
		goto drop;	/* CNP, RD, XRC: not implemented */

	qp = xa_load(&sdev->qp_xa, pkt.qpn);
	if (!qp || !srnic_rx_transport_ok(qp, transport) ||
	    READ_ONCE(qp->dead)) {
		srnic_counter_inc(sdev, SRNIC_CNT_NO_QP);
		goto drop;
	}
	state = READ_ONCE(qp->state);
	if (state < IB_QPS_RTR || state == IB_QPS_ERR ||
	    (pkt.pkey & 0x7fff) != 0x7fff)
		goto drop;

	if (transport == SRNIC_TRANSPORT_UD) {
		/* The GSI QP's Q_Key is fixed (IBA 13.5.3.3). */
		if (pkt.qkey != (pkt.qpn == 1 ? IB_QP1_QKEY : qp->qkey)) {
			srnic_counter_inc(sdev, SRNIC_CNT_QKEY_ERR);
			goto drop;
		}
		if (!srnic_resp_ud_rx(qp, &pkt, bth + pkt.hdr_len, skb))
			goto drop;
		srnic_skb_consume(skb);
		return;
	}
	if (!qp->av_valid || !srnic_rx_from_peer(qp, l3))
		goto drop;
	if (transport == SRNIC_TRANSPORT_UC)
		srnic_resp_uc_rx(qp, &pkt, bth + pkt.hdr_len);
	else if (pkt.info->flags & SRNIC_OPF_REQ)
		srnic_resp_rx(qp, &pkt, bth + pkt.hdr_len);
	else
		srnic_comp_rx(qp, &pkt, bth + pkt.hdr_len);
	srnic_skb_consume(skb);
	return;

malformed:
	srnic_counter_inc(sdev, SRNIC_CNT_MALFORMED);
drop:
	srnic_counter_inc(sdev, SRNIC_CNT_RX_DROPPED);
	kfree_skb(skb);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_rx);
