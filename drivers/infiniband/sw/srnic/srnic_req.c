// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the requester.
 *
 * Serving a QP at its gate (srnic_gate.c) takes WQEs from its pool head
 * in ring order into the QP's window (assigning PSNs), executes local
 * operations in send queue order, and builds the request packets. The
 * requester enforces fences and max_rd_atomic; whether a packet may go
 * (the unacknowledged-PSN window), what to send again and when is the
 * QP's transport's (srnic_transport.h; go-back-N, srnic_gbn.c, rewinds
 * the transmit position to the oldest unacknowledged PSN).
 *
 * Locking: req.lock (BH) protects the window and positions.
 */
#include <linux/module.h>
#include <rdma/ib_verbs.h>

#include "srnic.h"
#include "srnic_transport.h"

/**
 * srnic_req_swqe() - a window entry
 * @qp: the QP
 * @index: ring index of the WQE
 *
 * Context: under req.lock.
 * Return: the entry.
 */
struct srnic_swqe *srnic_req_swqe(struct srnic_qp *qp, u32 index)
{
	return (void *)(qp->req.window +
			(size_t)(index & qp->sq.queue.index_mask) *
			qp->req.stride);
}

/**
 * srnic_req_has_work() - could the transmit engine send for this QP now?
 * @qp: the QP
 *
 * True if packets of issued WQEs remain, or WQEs wait in the pool or in
 * the ring: what an ACK or a response may have unblocked (window space,
 * a fence, the rd_atomic limit). A QP that only awaits responses has
 * none, and waking it would cost a gate round (and maybe an IPI) per
 * response packet for nothing.
 *
 * Context: under req.lock.
 * Return: true if a gate round would find something to do.
 */
bool srnic_req_has_work(struct srnic_qp *qp)
{
	struct srnic_req *req = &qp->req;

	return req->cur != req->issue || READ_ONCE(req->pfq.count) ||
	       srnic_pf_pending(qp) || req->bad_wqe;
}

/* Check that the WQE's local buffers may be used, before it is issued. */
static int srnic_req_check_sges(struct srnic_qp *qp,
				const struct srnic_send_wqe *w)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	int access = 0;
	u32 i;

	if (w->opcode == IB_WR_RDMA_READ || srnic_op_is_rd_atomic(w->opcode))
		access = IB_ACCESS_LOCAL_WRITE;
	for (i = 0; i < w->num_sge; i++) {
		const struct ib_sge *sge = &w->sge[i];
		struct srnic_mr *mr;
		int err;

		if (!sge->length)
			continue;
		mr = srnic_mr_get(sdev, sge->lkey, SRNIC_LKEY);
		if (!mr)
			return -EINVAL;
		err = srnic_mr_check(mr, qp->ibqp.pd, sge->addr, sge->length,
				     access);
		srnic_mr_put(mr);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The completion status of a WQE that cannot be executed as issued:
 * local buffers it may not use, a UD message longer than one packet.
 */
static enum ib_wc_status srnic_req_check(struct srnic_qp *qp,
					 const struct srnic_send_wqe *w)
{
	if (srnic_qp_is_ud(qp) && w->length > qp->mtu)
		return IB_WC_LOC_LEN_ERR;
	if (srnic_req_check_sges(qp, w))
		return IB_WC_LOC_PROT_ERR;
	return IB_WC_SUCCESS;
}

static u32 srnic_wqe_npkts(struct srnic_qp *qp, const struct srnic_send_wqe *w)
{
	if (w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    w->opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
		return 1;
	return max_t(u32, 1, DIV_ROUND_UP(w->length, qp->mtu));
}

static bool srnic_op_is_local(u32 wr_opcode)
{
	return wr_opcode == IB_WR_BIND_MW || wr_opcode == IB_WR_LOCAL_INV ||
	       wr_opcode == IB_WR_REG_MR;
}

/*
 * Execute a local operation, in send queue order (when its turn to issue
 * comes). Returns its completion status.
 */
static enum ib_wc_status srnic_req_local(struct srnic_qp *qp,
					 const struct srnic_send_wqe *w)
{
	if (w->opcode == IB_WR_BIND_MW)
		return srnic_mw_bind(qp, w);
	if (w->opcode == IB_WR_REG_MR)
		return srnic_mr_fast_reg(qp, w);
	return srnic_invalidate(qp, w->inv_rkey, false) ? IB_WC_LOC_QP_OP_ERR :
							 IB_WC_SUCCESS;
}

/*
 * Take the next WQE from the pool into the window. Returns 1 if one was
 * issued (or completed at once in error), 0 if none can be now.
 */
static int srnic_req_issue(struct srnic_qp *qp)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;
	struct srnic_send_wqe *w;
	struct srnic_swqe *s;
	bool rd_atomic;
	u32 max_rd;

	/*
	 * The QP's pool share ran dry with WQEs posted: the engine fetches
	 * them itself rather than wait for the prefetch work (a doorbell
	 * whose work has not run yet, while an ACK let the engine in). Only
	 * if the pool has no slot for it is that a stall.
	 */
	if (!READ_ONCE(req->pfq.count) && srnic_pf_pending(qp))
		srnic_req_fetch(qp);
	if (req->bad_wqe &&
	    (req->issue & qp->sq.queue.index_mask) == req->bad_index) {
		/* The malformed WQE's turn: it completes in error. */
		const struct rxe_send_wqe *u;

		s = srnic_req_swqe(qp, req->issue);
		u = srnic_queue_addr(&qp->sq.queue, req->issue);
		memset(&s->wqe, 0, sizeof(s->wqe));
		s->wqe.wr_id = READ_ONCE(u->wr.wr_id);
		s->wqe.opcode = IB_WR_SEND;
		s->npkts = 0;
		s->state = SRNIC_SWQE_DONE;
		s->status = IB_WC_LOC_QP_OP_ERR;
		req->issue++;
		req->cur = req->issue;
		req->cur_pkt = 0;
		return 1;
	}

	w = srnic_pf_head(&sdev->pool, &req->pfq,
			  srnic_queue_producer(&qp->sq.queue));
	if (!w)
		return 0;
	rd_atomic = srnic_op_is_rd_atomic(w->opcode);
	max_rd = max_t(u32, qp->max_rd_atomic, 1);
	if (((w->send_flags & IB_SEND_FENCE) && req->rd_atomic) ||
	    (rd_atomic && req->rd_atomic >= max_rd)) {
		srnic_pf_set_blocked(&sdev->pool, &req->pfq, true);
		return 0;
	}

	s = srnic_req_swqe(qp, req->issue);
	/* The SGE list runs past the struct: copy the QP's WQE size. */
	memcpy((u8 *)s + offsetof(struct srnic_swqe, wqe), w,
	       srnic_send_wqe_size(&req->lim));
	srnic_pf_pop(&sdev->pool, &req->pfq);

	s->first_psn = req->psn;
	s->npkts = srnic_wqe_npkts(qp, &s->wqe);
	s->read_off = 0;
	s->state = SRNIC_SWQE_ISSUED;
	s->status = IB_WC_SUCCESS;
	s->status = srnic_req_check(qp, &s->wqe);
	if (!s->status && srnic_op_is_local(s->wqe.opcode))
		s->status = srnic_req_local(qp, &s->wqe);
	if (s->status || srnic_op_is_local(s->wqe.opcode)) {
		/* Done at issue: nothing goes on the wire. */
		s->state = SRNIC_SWQE_DONE;
		s->npkts = 0;
		req->issue++;
		req->cur = req->issue;
		req->cur_pkt = 0;
		return 1;
	}
	if (rd_atomic) {
		req->rd_atomic++;
		srnic_pf_set_may_block(&sdev->pool, &req->pfq, true);
	}
	req->issue++;
	return 1;
}

static u8 srnic_req_rc_opcode(u32 wr_op, bool first, bool last)
{
	switch (wr_op) {
	case IB_WR_SEND:
		return first ? (last ? SRNIC_OP_SEND_ONLY : SRNIC_OP_SEND_FIRST) :
			       (last ? SRNIC_OP_SEND_LAST :
				       SRNIC_OP_SEND_MIDDLE);
	case IB_WR_SEND_WITH_IMM:
		return first ? (last ? SRNIC_OP_SEND_ONLY_IMM :
				       SRNIC_OP_SEND_FIRST) :
			       (last ? SRNIC_OP_SEND_LAST_IMM :
				       SRNIC_OP_SEND_MIDDLE);
	case IB_WR_SEND_WITH_INV:
		return first ? (last ? SRNIC_OP_SEND_ONLY_INV :
				       SRNIC_OP_SEND_FIRST) :
			       (last ? SRNIC_OP_SEND_LAST_INV :
				       SRNIC_OP_SEND_MIDDLE);
	case IB_WR_RDMA_WRITE:
		return first ? (last ? SRNIC_OP_WRITE_ONLY :
				       SRNIC_OP_WRITE_FIRST) :
			       (last ? SRNIC_OP_WRITE_LAST :
				       SRNIC_OP_WRITE_MIDDLE);
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return first ? (last ? SRNIC_OP_WRITE_ONLY_IMM :
				       SRNIC_OP_WRITE_FIRST) :
			       (last ? SRNIC_OP_WRITE_LAST_IMM :
				       SRNIC_OP_WRITE_MIDDLE);
	case IB_WR_RDMA_READ:
		return SRNIC_OP_READ_REQUEST;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return SRNIC_OP_COMPARE_SWAP;
	case SRNIC_WR_ATOMIC_WRITE:
		return SRNIC_OP_ATOMIC_WRITE;
	case SRNIC_WR_FLUSH:
		return SRNIC_OP_FLUSH;
	default:
		return SRNIC_OP_FETCH_ADD;
	}
}

/* The BTH opcode of a request packet: the QP's transport, the WQE's op. */
static u8 srnic_req_opcode(struct srnic_qp *qp, u32 wr_op, bool first,
			   bool last)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UC:
		return SRNIC_TRANSPORT_UC |
		       srnic_req_rc_opcode(wr_op, first, last);
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return SRNIC_TRANSPORT_UD |
		       (wr_op == IB_WR_SEND_WITH_IMM ? SRNIC_OP_SEND_ONLY_IMM :
						       SRNIC_OP_SEND_ONLY);
	default:
		return srnic_req_rc_opcode(wr_op, first, last);
	}
}

/*
 * The R_Key of a Read request; @unsent is 0 for its first transmission.
 * A zero-length Read names no memory and its R_Key is not checked
 * (C9-88), but rdma_rxe answers a repeated one only if the R_Key is the
 * one it recorded: the request's own on 6.1 (which looks the key up again
 * for the repeat: 0 is a remote access error there), 0 on 6.12 (which
 * records 0 for every zero-length Read and silently drops a repeat with
 * another key). So the first request carries the work request's R_Key
 * and the repeats alternate, the work request's first: a lost response
 * to a zero-length Read is sent again by either, not a retry error.
 */
static u32 srnic_read_rkey(const struct srnic_qp *qp,
			   const struct srnic_send_wqe *w, u32 unsent)
{
	if (w->length || !unsent)
		return w->rkey;
	return (qp->retry_cnt - qp->req.retry_left) & 1 ? w->rkey : 0;
}

/* Build the packet at the transmit position. Returns 0 or -errno. */
static int srnic_req_build(struct srnic_qp *qp, struct srnic_swqe *s,
			   struct sk_buff_head *out)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;
	struct srnic_send_wqe *w = &s->wqe;
	u32 k = req->cur_pkt, off = k * qp->mtu, len = 0;
	bool first = k == 0, last = k + 1 >= s->npkts;
	/* PSNs from the transmit position up to the first one never sent. */
	u32 unsent = srnic_psn_dist(req->max_psn, req->psn);
	u32 psn0 = req->psn;
	struct srnic_pkt pkt = {};
	struct sk_buff *skb;
	u8 *data;
	int err;

	pkt.opcode = srnic_req_opcode(qp, w->opcode, first, last);
	pkt.qpn = qp->dest_qpn;
	pkt.pkey = 0xffff;
	pkt.psn = req->psn;
	if (srnic_qp_is_ud(qp)) {
		/* A Q_Key with the high bit set means "use the QP's own". */
		pkt.qpn = w->remote_qpn;
		pkt.qkey = (w->remote_qkey & BIT(31)) ? qp->qkey :
							w->remote_qkey;
		pkt.src_qpn = qp->ibqp.qp_num;
	}

	switch (w->opcode) {
	case IB_WR_RDMA_READ:
		pkt.va = w->remote_addr + off;
		pkt.rkey = srnic_read_rkey(qp, w, unsent);
		pkt.dma_len = w->length - off;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		pkt.va = w->remote_addr;
		pkt.rkey = w->rkey;
		pkt.swap_add = w->swap;
		pkt.compare = w->compare_add;
		break;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		pkt.va = w->remote_addr;
		pkt.rkey = w->rkey;
		pkt.swap_add = w->compare_add;
		break;
	case SRNIC_WR_FLUSH:
		pkt.va = w->remote_addr;
		pkt.rkey = w->rkey;
		pkt.dma_len = w->flush.len;
		pkt.flush_type = w->flush.type;
		pkt.flush_level = w->flush.level;
		pkt.ack_req = true;
		break;
	default:
		len = min(qp->mtu, w->length - off);
		pkt.va = w->remote_addr;
		pkt.rkey = w->rkey;
		pkt.dma_len = w->length;
		pkt.imm = w->imm;
		pkt.inv_rkey = w->inv_rkey;
		pkt.se = last && (w->send_flags & IB_SEND_SOLICITED);
		pkt.ack_req = qp->ibqp.qp_type == IB_QPT_RC &&
			      srnic_ack_req_needed(k, last, 32);
		break;
	}

	skb = srnic_pkt_skb(&pkt, len, &data);
	if (!skb)
		return -ENOMEM;
	if (w->opcode == SRNIC_WR_ATOMIC_WRITE) {
		memcpy(data, &w->swap, len);
	} else if (len) {
		if (w->send_flags & IB_SEND_INLINE) {
			memcpy(data, w->inline_data + off, len);
		} else {
			err = srnic_sge_copy(sdev, qp->ibqp.pd, w->sge,
					     w->num_sge, off, data, len, false);
			if (err) {
				kfree_skb(skb);
				return err;
			}
		}
	}
	if (srnic_qp_is_ud(qp)) {
		struct srnic_skb_cb *cb = srnic_skb_cb(skb);

		memcpy(cb->sgid, w->av.sgid.raw, sizeof(cb->sgid));
		memcpy(cb->dgid, w->av.dgid.raw, sizeof(cb->dgid));
		cb->flow_label = w->av.flow_label;
		cb->tclass = w->av.traffic_class;
		cb->hop_limit = w->av.hop_limit;
		cb->v6 = w->av.network_type == RDMA_NETWORK_IPV6;
		cb->ud = 1;
		cb->sport = rdma_get_udp_sport(w->av.flow_label,
					       qp->ibqp.qp_num, w->remote_qpn);
	}
	__skb_queue_tail(out, skb);

	if (w->opcode == IB_WR_RDMA_READ) {
		/* One request covers every remaining response PSN. */
		req->psn = srnic_psn_add(s->first_psn, s->npkts);
		req->cur_pkt = s->npkts;
	} else {
		req->psn = srnic_psn_add(req->psn, 1);
		req->cur_pkt++;
	}
	if (srnic_psn_dist(req->psn, psn0) > unsent)
		req->max_psn = req->psn;
	if (req->cur_pkt >= s->npkts) {
		req->cur++;
		req->cur_pkt = 0;
	}
	if (w->opcode == IB_WR_SEND || w->opcode == IB_WR_SEND_WITH_IMM ||
	    w->opcode == IB_WR_SEND_WITH_INV)
		srnic_counter_inc(sdev, SRNIC_CNT_RDMA_SENDS);
	return 0;
}

/**
 * srnic_req_next() - the requester's next step at the gate
 * @qp: the QP being served
 * @out: where a built packet is queued
 *
 * One packet from the transmit position, or one WQE that completed at
 * issue (a local operation such as a Bind MW, or an error). A WQE done at
 * issue costs the round as a packet does: a poster of local operations
 * alone cannot keep the engine running.
 *
 * Context: softirq (the gate's engine), under req.lock.
 * Return: 1 if a packet was queued or a WQE completed, 0 if there is
 * nothing to do now.
 */
int srnic_req_next(struct srnic_qp *qp, struct sk_buff_head *out)
{
	struct srnic_req *req = &qp->req;
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct srnic_swqe *s;
	u32 idx;
	int err;

	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return 0;
	if (req->flushing || !qp->xport->may_send(qp, NULL))
		return 0;
	if (req->cur == req->issue) {
		if (state == IB_QPS_SQD || !srnic_req_issue(qp))
			return 0;
		s = srnic_req_swqe(qp, req->issue - 1);
		if (s->state == SRNIC_SWQE_DONE) {
			/* Completed at issue: a local operation, or an error. */
			srnic_req_complete(qp);
			return s->status ? 0 : 1;
		}
	}
	idx = req->cur;
	s = srnic_req_swqe(qp, idx);
	if (!qp->xport->may_send(qp, s))
		return 0;
	err = srnic_req_build(qp, s, out);
	if (err == -ENOMEM)
		return 0;
	if (err) {
		/* A local buffer became invalid after issue. */
		s->state = SRNIC_SWQE_DONE;
		s->status = IB_WC_LOC_PROT_ERR;
		srnic_req_complete(qp);
		return 0;
	}
	if (qp->ibqp.qp_type != IB_QPT_RC) {
		/*
		 * UC and UD: nothing is acknowledged. A WQE is done once its
		 * last packet is built (its data copied into the packets).
		 */
		req->una = req->psn;
		if (req->cur != idx) {
			s->state = SRNIC_SWQE_DONE;
			srnic_req_complete(qp);
		}
	}
	return 1;
}

/**
 * srnic_req_init() - the requester state of a new QP
 * @qp: the QP, its send ring created
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int srnic_req_init(struct srnic_qp *qp)
{
	struct srnic_req *req = &qp->req;
	u32 slots = qp->sq.queue.index_mask + 1;
	int err;

	/* Standard RoCEv2's go-back-N: the only reliability mechanism yet. */
	qp->xport = &srnic_xport_gbn;
	spin_lock_init(&req->lock);
	req->lim.type = qp->ibqp.qp_type;
	req->lim.max_sge = qp->sq.max_sge;
	req->lim.max_inline = qp->sq.max_inline;
	req->lim.kernel = !qp->is_user;
	req->stride = ALIGN(offsetof(struct srnic_swqe, wqe) +
			    srnic_send_wqe_size(&req->lim), 8);
	req->window = kvcalloc(slots, req->stride, GFP_KERNEL);
	req->fetch_size = 1U << qp->sq.queue.log2_elem_size;
	req->fetch_buf = kmalloc(req->fetch_size, GFP_KERNEL);
	if (!req->window || !req->fetch_buf) {
		err = -ENOMEM;
		goto out;
	}
	err = srnic_pfq_init(&req->pfq, qp->sq.queue.index_mask, 0);
	if (err)
		goto out;
	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err) {
		srnic_pfq_cleanup(&to_sdev(qp->ibqp.device)->pool, &req->pfq);
		goto out;
	}
	srnic_doorbell_init(qp);
	srnic_gate_qp_init(&qp->gq, 0);
	qp->xport->init(qp);
	qp->tx_cpu = srnic_req_pick_cpu();
	srnic_resp_init(qp);
	return 0;
out:
	kfree(req->fetch_buf);
	kvfree(req->window);
	return err;
}

/**
 * srnic_req_cleanup() - free the requester state
 * @qp: the QP, quiesced
 *
 * Context: process context.
 */
void srnic_req_cleanup(struct srnic_qp *qp)
{
	srnic_pfq_cleanup(&to_sdev(qp->ibqp.device)->pool, &qp->req.pfq);
	dst_cache_destroy(&qp->dst_cache);
	kfree(qp->req.fetch_buf);
	kvfree(qp->req.window);
	srnic_resp_reset(qp);
	kfree(qp->resp.ares);
}

/**
 * srnic_req_start() - the QP enters RTS: start from its send PSN
 * @qp: the QP; caller holds state_lock
 *
 * Context: process context.
 */
void srnic_req_start(struct srnic_qp *qp)
{
	struct srnic_req *req = &qp->req;

	spin_lock_bh(&req->lock);
	req->psn = qp->sq_psn;
	req->una = qp->sq_psn;
	req->max_psn = qp->sq_psn;
	qp->xport->start(qp);
	/* Strict priority (a demonstration policy): lower service level first. */
	qp->gq.prio = qp->av.sl;
	req->sport = rdma_get_udp_sport(qp->av.flow_label, qp->ibqp.qp_num,
					qp->dest_qpn);
	/* UD messages are one packet of at most the port's MTU. */
	if (srnic_qp_is_ud(qp))
		qp->mtu = srnic_port_mtu(to_sdev(qp->ibqp.device));
	spin_unlock_bh(&req->lock);
	dst_cache_reset(&qp->dst_cache);
}

/**
 * srnic_req_reset() - back to RESET: forget all work
 * @qp: the QP, quiesced; caller holds state_lock
 *
 * Context: process context.
 */
void srnic_req_reset(struct srnic_qp *qp)
{
	struct srnic_req *req = &qp->req;

	srnic_pf_restart(&to_sdev(qp->ibqp.device)->pool, &req->pfq, 0);
	spin_lock_bh(&req->lock);
	req->comp = 0;
	req->issue = 0;
	req->cur = 0;
	req->cur_pkt = 0;
	req->rd_atomic = 0;
	req->bad_wqe = false;
	req->ring_bad = false;
	req->flushing = false;
	req->rnr_wait = false;
	req->read_map_valid = false;
	spin_unlock_bh(&req->lock);
	srnic_resp_reset(qp);
}
