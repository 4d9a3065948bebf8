// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the completer (ACKs, NAKs, Read and Atomic responses at the
 * requester), retiring the send window in order, and flushing a QP in
 * error (the completions themselves: srnic_cq.c; the error transition:
 * srnic_qp.c).
 *
 * Requester completions come out in send-queue order: a WQE completes
 * when it and every WQE before it is done, so the window is retired from
 * its oldest end only. What an ACK or NAK means, and what a missing
 * response asks for again, is the QP's transport's (srnic_transport.h;
 * go-back-N: everything from the first missing PSN).
 */
#include <rdma/ib_verbs.h>

#include "srnic.h"
#include "srnic_transport.h"

/**
 * srnic_req_complete() - retire done WQEs from the window's oldest end
 * @qp: the QP
 *
 * Posts their completions (signaled ones, and every error) and returns
 * their ring slots to the producer. A WQE that completed in error stops
 * the QP: the caller moves it to error after dropping req.lock.
 *
 * Context: under req.lock.
 */
void srnic_req_complete(struct srnic_qp *qp)
{
	struct srnic_req *req = &qp->req;

	while (req->comp != req->issue && !req->flushing) {
		struct srnic_swqe *s = srnic_req_swqe(qp, req->comp);
		const struct srnic_send_wqe *w = &s->wqe;

		if (s->state != SRNIC_SWQE_DONE)
			break;
		/*
		 * The ring slot first: a consumer that sees the completion
		 * may post again at once and must find the slot free.
		 */
		req->comp++;
		srnic_queue_advance_consumer(&qp->sq.queue);
		if (s->status || qp->sq_sig_all ||
		    (w->send_flags & IB_SEND_SIGNALED))
			srnic_wc_send(qp, w->wr_id, s->status, w->opcode,
				      w->length);
		if (s->status)
			req->flushing = true;
	}
	if (req->comp == req->cur && req->cur == req->issue)
		qp->xport->stop(qp, false);
}

/* A Read or Atomic WQE finished: a fence or the rd_atomic limit may lift. */
static void srnic_req_rd_done(struct srnic_qp *qp)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;

	if (!WARN_ON_ONCE(!req->rd_atomic))
		req->rd_atomic--;
	srnic_pf_set_may_block(&sdev->pool, &req->pfq, req->rd_atomic > 0);
	srnic_pf_set_blocked(&sdev->pool, &req->pfq, false);
}

/* The oldest WQE not done yet, or NULL. */
static struct srnic_swqe *srnic_req_first_open(struct srnic_qp *qp)
{
	struct srnic_req *req = &qp->req;
	u32 i;

	for (i = req->comp; i != req->issue; i++) {
		struct srnic_swqe *s = srnic_req_swqe(qp, i);

		if (s->state != SRNIC_SWQE_DONE)
			return s;
	}
	return NULL;
}

/* The WQE whose PSN range holds @psn, or NULL. */
struct srnic_swqe *srnic_req_find(struct srnic_qp *qp, u32 psn)
{
	struct srnic_req *req = &qp->req;
	u32 i;

	for (i = req->comp; i != req->issue; i++) {
		struct srnic_swqe *s = srnic_req_swqe(qp, i);
		u32 d = srnic_psn_dist(psn, s->first_psn);

		if (d < s->npkts)
			return s->state == SRNIC_SWQE_DONE ? NULL : s;
	}
	return NULL;
}

/* Fail the WQE holding @psn with @status; the QP then goes to error. */
void srnic_req_fail_locked(struct srnic_qp *qp, struct srnic_swqe *s,
			   enum ib_wc_status status)
{
	s->state = SRNIC_SWQE_DONE;
	s->status = status;
	srnic_req_complete(qp);
}

/* Bytes Read response packet @idx of @s carries. */
static u32 srnic_read_pkt_len(struct srnic_qp *qp, struct srnic_swqe *s,
			      u32 idx)
{
	return min(qp->mtu, s->wqe.length - idx * qp->mtu);
}

/*
 * Packets before @k of @s are placed: move the placed prefix over the
 * packets already placed past it. The PSN after the prefix is the oldest
 * unacknowledged one (counted in packets: the last may be short).
 */
static void srnic_read_advance(struct srnic_qp *qp, struct srnic_swqe *s,
			       u32 k)
{
	struct srnic_req *req = &qp->req;

	while (k < s->npkts &&
	       test_bit(k % SRNIC_READ_AHEAD, req->read_seen)) {
		clear_bit(k % SRNIC_READ_AHEAD, req->read_seen);
		s->read_off += srnic_read_pkt_len(qp, s, k);
		k++;
	}
	req->una = srnic_psn_add(s->first_psn, k);
}

/*
 * A Read response packet. Packet @idx of a Read always carries the bytes
 * at offset @idx * MTU, so it is placed wherever it arrives in the window
 * of SRNIC_READ_AHEAD packets past the first missing one: after a loss the
 * rest of the stream (and of any replay) still counts, and one repeated
 * request usually fills every hole. That matters against responders that
 * serve a repeated Read request only after the stream in progress, to its
 * end (rdma_rxe): asking again at each hole would cost a whole replay per
 * lost packet. So the requester asks once per hole: when it first sees
 * the hole, or when a stream ends (its last packet came) with holes left
 * that it has not asked for yet; the timer covers lost requests.
 */
static bool srnic_comp_read(struct srnic_qp *qp, struct srnic_pkt *pkt,
			    const u8 *payload)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_swqe *s = srnic_req_find(qp, pkt->psn);
	struct srnic_req *req = &qp->req;
	u32 k, idx, off;
	bool last, moved = false;
	int err;

	if (s && (s->wqe.opcode == SRNIC_WR_ATOMIC_WRITE ||
		  s->wqe.opcode == SRNIC_WR_FLUSH)) {
		/* Answered like a Read with nothing to read (or ACKed). */
		if (pkt->opcode != SRNIC_OP_READ_RESPONSE_ONLY || pkt->paylen) {
			srnic_counter_inc(sdev, SRNIC_CNT_MALFORMED);
			return false;
		}
		return qp->xport->acked(qp, pkt->psn);
	}
	if (!s || s->wqe.opcode != IB_WR_RDMA_READ)
		return false;
	k = s->read_off / qp->mtu;
	idx = srnic_psn_dist(pkt->psn, s->first_psn);
	last = pkt->opcode == SRNIC_OP_READ_RESPONSE_LAST ||
	       pkt->opcode == SRNIC_OP_READ_RESPONSE_ONLY;
	/*
	 * A responder (re)starts with a FIRST (or ONLY) packet at the PSN
	 * asked for; LAST/ONLY is the Read's last packet, and every packet
	 * but the last is MTU-sized.
	 */
	if ((idx + 1 == s->npkts) != last ||
	    pkt->paylen != srnic_read_pkt_len(qp, s, idx)) {
		srnic_counter_inc(sdev, SRNIC_CNT_MALFORMED);
		return false;
	}
	if (idx < k) {
		qp->xport->alive(qp);	/* a replay of what we have */
		return false;
	}
	if (idx - k >= SRNIC_READ_AHEAD) {
		qp->xport->lost(qp, srnic_psn_add(s->first_psn, k));
		qp->xport->alive(qp);
		return false;
	}

	/*
	 * Everything before the Read is implicitly acknowledged; a Read or
	 * atomic before it still missing responses means this one came out
	 * of order (srnic_ack_upto() asked for the missing ones again).
	 */
	qp->xport->acked(qp, srnic_psn_add(s->first_psn, -1));
	if (srnic_req_first_open(qp) != s)
		return false;
	if (!req->read_map_valid || req->read_map_psn != s->first_psn) {
		bitmap_zero(req->read_seen, SRNIC_READ_AHEAD);
		req->read_map_psn = s->first_psn;
		req->read_map_valid = true;
	}
	if (idx != k && test_bit(idx % SRNIC_READ_AHEAD, req->read_seen))
		goto placed;		/* placed from an earlier stream */
	off = idx * qp->mtu;
	err = srnic_sge_copy(sdev, qp->ibqp.pd, s->wqe.sge, s->wqe.num_sge,
			     off, (void *)payload, pkt->paylen, true);
	if (err) {
		srnic_req_fail_locked(qp, s, IB_WC_LOC_PROT_ERR);
		return true;
	}
	if (idx != k) {
		set_bit(idx % SRNIC_READ_AHEAD, req->read_seen);
		/* A response packet was lost: ask again from it, once. */
		qp->xport->lost(qp, srnic_psn_add(s->first_psn, k));
		goto placed;
	}
	s->read_off += pkt->paylen;
	srnic_read_advance(qp, s, idx + 1);
	req->gap_pending = false;
	moved = true;
	if (s->read_off == s->wqe.length) {
		req->read_map_valid = false;
		s->state = SRNIC_SWQE_DONE;
		srnic_req_rd_done(qp);
		return true;
	}
placed:
	if (last)	/* the stream ended with holes left */
		qp->xport->lost(qp, req->una);
	if (!moved)
		qp->xport->alive(qp);
	return moved;
}

static bool srnic_comp_atomic(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_swqe *s = srnic_req_find(qp, pkt->psn);
	u64 orig = pkt->orig;
	int err;

	if (!s || (s->wqe.opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
		   s->wqe.opcode != IB_WR_ATOMIC_FETCH_AND_ADD))
		return false;
	qp->xport->acked(qp, srnic_psn_add(s->first_psn, -1));
	if (srnic_req_first_open(qp) != s)
		return false;
	err = srnic_sge_copy(sdev, qp->ibqp.pd, s->wqe.sge, s->wqe.num_sge, 0,
			     &orig, sizeof(orig), true);
	if (err) {
		srnic_req_fail_locked(qp, s, IB_WC_LOC_PROT_ERR);
		return true;
	}
	qp->req.una = srnic_psn_add(pkt->psn, 1);
	s->state = SRNIC_SWQE_DONE;
	srnic_req_rd_done(qp);
	return true;
}

/**
 * srnic_comp_rx() - a response packet for the requester
 * @qp: the QP
 * @pkt: the parsed, validated packet
 * @payload: its payload
 *
 * Context: softirq (receive path).
 */
void srnic_comp_rx(struct srnic_qp *qp, struct srnic_pkt *pkt,
		   const u8 *payload)
{
	struct srnic_req *req = &qp->req;
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool moved = false, fail;
	enum srnic_psn_win win;
	u32 una;

	if (state != IB_QPS_RTS && state != IB_QPS_SQD && state != IB_QPS_SQE)
		return;
	spin_lock_bh(&req->lock);
	if (req->flushing)
		goto out;
	/* Only responses to PSNs sent and not yet acknowledged count. */
	win = srnic_psn_window_of(pkt->psn, req->una, req->max_psn);
	if (win == SRNIC_PSN_AHEAD)
		goto out;
	if (win == SRNIC_PSN_BEHIND) {
		if (pkt->opcode != SRNIC_OP_ACKNOWLEDGE) {
			/* A replay of Read responses we already have. */
			if (pkt->opcode >= SRNIC_OP_READ_RESPONSE_FIRST &&
			    pkt->opcode <= SRNIC_OP_READ_RESPONSE_ONLY)
				qp->xport->alive(qp);
			goto out;
		}
	}

	una = req->una;
	switch (pkt->opcode) {
	case SRNIC_OP_ACKNOWLEDGE:
		moved = qp->xport->ack(qp, pkt);
		break;
	case SRNIC_OP_ATOMIC_ACKNOWLEDGE:
		moved = srnic_comp_atomic(qp, pkt);
		break;
	default:
		moved = srnic_comp_read(qp, pkt, payload);
		break;
	}
	if (moved) {
		qp->xport->progress(qp, pkt, una);
		srnic_req_complete(qp);
		if (srnic_req_has_work(qp))
			srnic_req_kick(qp);
	}
out:
	fail = req->flushing;
	spin_unlock_bh(&req->lock);
	if (fail)
		srnic_qp_error(qp);
}

/**
 * srnic_req_fail() - complete the WQE at @index in error, fail the QP
 * @qp: the QP
 * @index: ring index of the oldest incomplete WQE
 * @status: its completion status
 *
 * Context: any; never sleeps.
 */
void srnic_req_fail(struct srnic_qp *qp, u32 index, enum ib_wc_status status)
{
	spin_lock_bh(&qp->req.lock);
	if (!qp->req.flushing && index == qp->req.comp &&
	    qp->req.comp != qp->req.issue)
		srnic_req_fail_locked(qp, srnic_req_swqe(qp, index), status);
	qp->req.flushing = true;
	spin_unlock_bh(&qp->req.lock);
	srnic_qp_error(qp);
}

/**
 * srnic_req_discard() - forget the WQEs a refused doorbell announced
 * @qp: a user QP in RESET, INIT or RTR; caller holds state_lock
 *
 * librxe writes its WQEs into the ring before it rings the doorbell, and
 * does not take them back when the doorbell fails: a post to a QP that
 * cannot send yet returned an error, so those WQEs must never execute
 * (IBA 10.8.3.1: a WR the verb refused is not posted) - not when the QP
 * reaches RTS either. They are released unread, with no completion; a
 * QP that cannot send has issued nothing, so every WQE in the ring is one
 * of them.
 *
 * Context: process context.
 * Return: how many were discarded (at most the ring's size).
 */
u32 srnic_req_discard(struct srnic_qp *qp)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;
	u32 mask = qp->sq.queue.index_mask, n = 0;
	u32 prod;

	spin_lock_bh(&req->lock);
	/* Read once: a bound on the loop, whatever user space writes. */
	prod = srnic_queue_producer(&qp->sq.queue);
	if (req->comp == req->issue) {
		while ((req->comp & mask) != (prod & mask) && n <= mask) {
			req->comp++;
			srnic_queue_advance_consumer(&qp->sq.queue);
			n++;
		}
		req->issue = req->comp;
		req->cur = req->comp;
		req->cur_pkt = 0;
		srnic_pf_restart(&sdev->pool, &req->pfq, req->comp);
	}
	spin_unlock_bh(&req->lock);
	return n;
}

/**
 * srnic_flush_sq() - complete every send WQE left with flush status
 * @qp: the QP, in error
 *
 * Issued WQEs first, then those posted and not issued yet.
 *
 * Context: under req.lock.
 */
void srnic_flush_sq(struct srnic_qp *qp)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;
	u32 prod = srnic_queue_producer(&qp->sq.queue);
	u32 mask = qp->sq.queue.index_mask;

	while (req->comp != req->issue) {
		struct srnic_swqe *s = srnic_req_swqe(qp, req->comp);

		req->comp++;
		srnic_queue_advance_consumer(&qp->sq.queue);
		srnic_wc_flush_sq(qp, s->wqe.wr_id, s->wqe.opcode);
	}
	/* Posted, not issued: the ring still holds them. */
	while ((req->comp & mask) != (prod & mask)) {
		const struct rxe_send_wqe *u;
		u64 wr_id;
		u32 op;

		u = srnic_queue_addr(&qp->sq.queue, req->comp);
		wr_id = READ_ONCE(u->wr.wr_id);
		op = READ_ONCE(u->wr.opcode);
		req->comp++;
		srnic_queue_advance_consumer(&qp->sq.queue);
		srnic_wc_flush_sq(qp, wr_id, op);
	}
	req->issue = req->comp;
	req->cur = req->comp;
	req->cur_pkt = 0;
	req->rd_atomic = 0;
	req->bad_wqe = false;
	srnic_pf_restart(&sdev->pool, &req->pfq, req->comp);
}

/**
 * srnic_flush_rq() - complete every posted receive with flush status
 * @qp: the QP, in error; an SRQ's entries stay for other QPs
 *
 * Context: under resp.lock.
 */
void srnic_flush_rq(struct srnic_qp *qp)
{
	struct srnic_resp *resp = &qp->resp;
	struct srnic_queue *q = &qp->rq.queue;
	u32 n;

	if (resp->have_rwqe) {
		srnic_wc_flush_rq(qp, resp->rwqe.wr_id);
		resp->have_rwqe = false;
	}
	if (qp->srq)
		return;
	/*
	 * The producer index is read once: user space may keep moving it,
	 * and this runs with bottom halves off: at most the ring's capacity
	 * is flushed. What is posted after the read is flushed next time
	 * (a send doorbell in the error state flushes again).
	 */
	for (n = srnic_queue_count(q); n; n--) {
		const struct rxe_recv_wqe *u;
		u64 wr_id;

		u = srnic_queue_addr(q, srnic_queue_consumer(q));
		wr_id = READ_ONCE(u->wr_id);
		srnic_queue_advance_consumer(q);
		srnic_wc_flush_rq(qp, wr_id);
	}
}
