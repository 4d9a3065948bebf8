// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the UC and UD responders. They place with the RC responder's
 * Send and Write code (srnic_resp.c) and act on the same named outcomes,
 * but answer nothing on the wire: UC loses a message it cannot execute,
 * UD drops a datagram.
 */
#include <linux/etherdevice.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "srnic.h"
#include "srnic_resp.h"

/* UC: the message being received is lost; count it once. */
static void srnic_resp_uc_lost(struct srnic_qp *qp)
{
	if (qp->resp.uc_lost)
		return;
	qp->resp.uc_lost = true;
	srnic_counter_inc(to_sdev(qp->ibqp.device), SRNIC_CNT_UC_DROPPED);
}

/* UC: give up the message in progress (its receive WQE is kept). */
static void srnic_resp_uc_abort(struct srnic_qp *qp)
{
	struct srnic_resp *resp = &qp->resp;

	if (!resp->in_op)
		return;
	srnic_resp_uc_lost(qp);
	resp->in_op = 0;
}

/**
 * srnic_resp_uc_rx() - a UC request packet
 * @qp: the UC QP, in RTR or RTS
 * @pkt: the packet, from the QP's peer
 * @payload: its payload
 *
 * UC has no acknowledgements and no retransmission (IBA 9.7.5.1.x): a
 * missing packet loses the message it belonged to. The responder drops
 * packets until one starts a message; a Send that lost packets leaves its
 * receive WQE for the next Send. A message the responder cannot execute
 * (a bad R_Key, no receive WQE for a Send) is dropped silently; only
 * local errors complete a receive WQE in error, and they fail the QP.
 *
 * Context: softirq.
 */
void srnic_resp_uc_rx(struct srnic_qp *qp, struct srnic_pkt *pkt,
		      const u8 *payload)
{
	struct srnic_resp *resp = &qp->resp;
	enum srnic_resp_verdict v = SRNIC_RESP_OK;
	u16 flags = pkt->info->flags;
	bool comm_est = false;
	bool fail = false;

	if (READ_ONCE(qp->req.flushing))
		return;
	spin_lock_bh(&resp->lock);
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		goto out;
	if (READ_ONCE(qp->state) == IB_QPS_RTR && !resp->comm_est) {
		resp->comm_est = true;
		comm_est = true;
	}
	if (pkt->psn != resp->epsn) {
		srnic_counter_inc(to_sdev(qp->ibqp.device),
				  SRNIC_CNT_OOS_REQ);
		srnic_resp_uc_abort(qp);
		resp->epsn = pkt->psn;	/* resynchronised on the sender */
	}
	/* A new message cuts off the one in progress. */
	if (flags & SRNIC_OPF_FIRST) {
		srnic_resp_uc_abort(qp);
		resp->uc_lost = false;
	} else if (!(flags & resp->in_op)) {
		srnic_resp_uc_lost(qp);	/* the rest of a lost message */
		goto take;
	}

	if (flags & SRNIC_OPF_SEND)
		v = srnic_resp_send(qp, pkt, payload);
	else
		v = srnic_resp_write(qp, pkt, payload);
	switch (v) {
	case SRNIC_RESP_OK:
	case SRNIC_RESP_DONE:
	case SRNIC_RESP_DROP_NOMEM:
	case SRNIC_RESP_DROP_CQE:
		break;
	default:
		if (srnic_resp_answers[v].uc_fail) {
			fail = true;
			break;
		}
		/* No receive WQE, an access or length violation. */
		resp->in_op = flags & (SRNIC_OPF_SEND | SRNIC_OPF_WRITE);
		srnic_resp_uc_abort(qp);
		break;
	}
take:
	/* Whatever became of it, the packet's PSN is taken. */
	srnic_resp_advance(resp, 1, v == SRNIC_RESP_DONE);
out:
	spin_unlock_bh(&resp->lock);
	if (comm_est)
		srnic_qp_event(qp, IB_EVENT_COMM_EST);
	if (fail)
		srnic_qp_error(qp);
}

/**
 * srnic_resp_ud_rx() - a datagram for a UD or GSI QP
 * @qp: the QP, in RTR or RTS; its Q_Key checked
 * @pkt: the packet
 * @payload: its payload
 * @skb: the packet's buffer, network header set
 *
 * The receive buffer gets the 40-byte network header area first (IBA
 * 11.4.1.2; for IPv4, 20 zero bytes and the IPv4 header, as the core's
 * ib_get_gids_from_rdma_hdr() reads it), then the payload. A datagram
 * with no receive WQE posted is dropped (UD has no RNR); one too long for
 * its WQE completes that WQE with IB_WC_LOC_LEN_ERR, and the QP goes on
 * (on QP1, one longer than a MAD is dropped first).
 *
 * Context: softirq.
 * Return: false if the datagram was dropped (the caller counts it).
 */
bool srnic_resp_ud_rx(struct srnic_qp *qp, struct srnic_pkt *pkt,
		      const u8 *payload, struct sk_buff *skb)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	const u8 *l3 = skb_network_header(skb);
	struct srnic_wc_src src = { .qpn = pkt->src_qpn };
	struct srnic_recv_wc rwc = { .op = IB_WC_RECV, .src = &src };
	enum ib_wc_status status = IB_WC_SUCCESS;
	u32 len = sizeof(union rdma_network_hdr) + pkt->paylen;
	struct srnic_rwqe *rw = &qp->resp.rwqe;
	union rdma_network_hdr grh;
	int err, flags = 0;
	bool posted;

	if (READ_ONCE(qp->req.flushing))
		return false;
	/*
	 * QP1 carries MADs, at most IB_MGMT_MAD_SIZE bytes. The MAD layer
	 * takes a receive that completes in error for its QP's end and does
	 * not post that buffer again: a longer datagram completing one with
	 * a length error loses it for good, and a peer sending as many as
	 * QP1 has receives (512) silences rdma_cm on the device. It is
	 * dropped, counted as malformed, before it takes a receive.
	 */
	if (qp->ibqp.qp_type == IB_QPT_GSI && pkt->paylen > IB_MGMT_MAD_SIZE) {
		srnic_counter_inc(sdev, SRNIC_CNT_MALFORMED);
		return false;
	}
	memset(&grh, 0, sizeof(grh));
	if ((l3[0] >> 4) == 4) {
		memcpy(&grh.roce4grh, l3, sizeof(grh.roce4grh));
		src.network_type = RDMA_NETWORK_IPV4;
	} else {
		memcpy(&grh.ibgrh, l3, sizeof(grh.ibgrh));
		src.network_type = RDMA_NETWORK_IPV6;
	}
	if (skb_mac_header_was_set(skb) &&
	    skb_mac_header_len(skb) >= ETH_HLEN) {
		ether_addr_copy(src.smac, eth_hdr(skb)->h_source);
		src.has_smac = true;
	}
	if (pkt->info->flags & SRNIC_OPF_IMM)
		flags |= IB_WC_WITH_IMM;

	spin_lock_bh(&qp->resp.lock);
	err = srnic_rwqe_take(qp, rw);
	if (err == -EAGAIN) {
		spin_unlock_bh(&qp->resp.lock);
		srnic_counter_inc(sdev, SRNIC_CNT_UD_NO_RWQE);
		return false;
	}
	if (err)
		status = IB_WC_LOC_QP_OP_ERR;
	else if (len > rw->length)
		status = IB_WC_LOC_LEN_ERR;
	else if (srnic_sge_copy(sdev, srnic_rwqe_pd(qp), rw->sge, rw->num_sge,
				0, &grh, sizeof(grh), true) ||
		 srnic_sge_copy(sdev, srnic_rwqe_pd(qp), rw->sge, rw->num_sge,
				sizeof(grh), (void *)payload, pkt->paylen,
				true))
		status = IB_WC_LOC_PROT_ERR;
	rwc.byte_len = status ? 0 : len;
	rwc.imm = pkt->imm;
	rwc.flags = flags;
	rwc.solicited = pkt->se;
	posted = srnic_wc_recv(qp, rw->wr_id, status, &rwc);
	spin_unlock_bh(&qp->resp.lock);
	/*
	 * A datagram too long for the buffer, or an SGE it cannot be placed
	 * through, fails that receive only: the QP lives (anyone can send
	 * such a datagram to QP1 with the GSI Q_Key; rdma_cm must survive
	 * it). A receive WQE that is garbage is the owner's ring gone bad:
	 * that fails the QP.
	 */
	if (status == IB_WC_LOC_QP_OP_ERR)
		srnic_qp_error(qp);
	else if (posted)
		srnic_counter_inc(sdev, SRNIC_CNT_RDMA_RECVS);
	return true;
}
