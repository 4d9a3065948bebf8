// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the completer (ACKs, NAKs, Read and Atomic responses at the
 * requester), retiring the send window in order, and flushing a QP in
 * error (the completions themselves: srnic_cq.c; the error transition:
 * srnic_qp.c).
 *
 * Requester completions come out in send-queue order: a WQE completes
 * when it and every WQE before it is done, so the window is retired from
 * its oldest end only. A response that arrives out of sequence is never
 * placed: it triggers go-back-N from the first missing PSN.
 */
#include <rdma/ib_verbs.h>

#include "srnic.h"

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
		del_timer(&req->timer);
}

/*
 * A response is missing at @psn: go back to it, once per gap. Responses
 * still in flight past the gap say the same thing again and are ignored
 * until the gap fills (or the retransmission timer decides).
 */
static void srnic_req_gap(struct srnic_qp *qp, u32 psn)
{
	struct srnic_req *req = &qp->req;

	if (req->gap_pending && req->gap_psn == psn)
		return;
	req->gap_pending = true;
	req->gap_psn = psn;
	srnic_req_rewind(qp, psn);
	srnic_req_kick(qp);
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

/*
 * Everything up to and including @psn is acknowledged. A Read or Atomic
 * WQE in that range whose response has not arrived was lost: go back to
 * it. Returns true if the window moved.
 */
static bool srnic_ack_upto(struct srnic_qp *qp, u32 psn)
{
	struct srnic_req *req = &qp->req;
	u32 una = srnic_psn_add(psn, 1);
	u32 out = srnic_psn_dist(req->max_psn, req->una);
	/* PSNs counted from una - 1: @psn acknowledges 0 .. out of them. */
	u32 base = srnic_psn_add(req->una, -1);
	u32 rel = srnic_psn_dist(psn, base);
	bool moved = false;
	u32 i;

	if (rel > out)
		return false;	/* older than una - 1: nothing new */
	for (i = req->comp; i != req->issue; i++) {
		struct srnic_swqe *s = srnic_req_swqe(qp, i);
		u32 last = srnic_psn_add(s->first_psn, s->npkts - 1);

		if (s->state == SRNIC_SWQE_DONE)
			continue;
		if (rel < srnic_psn_dist(last, base))
			break;
		if (srnic_op_is_rd_atomic(s->wqe.opcode)) {
			/*
			 * Responses lost though later PSNs got through: the
			 * oldest unacknowledged PSN is the first one missing.
			 */
			una = srnic_psn_add(s->first_psn,
					    s->read_off / qp->mtu);
			srnic_req_gap(qp, una);
			break;
		}
		s->state = SRNIC_SWQE_DONE;
		moved = true;
	}
	if (una != req->una && srnic_psn_dist(una, req->una) <= out) {
		req->una = una;
		moved = true;
	}
	return moved;
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
static struct srnic_swqe *srnic_req_find(struct srnic_qp *qp, u32 psn)
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

static enum ib_wc_status srnic_nak_status(u8 code)
{
	switch (code) {
	case SRNIC_NAK_REM_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case SRNIC_NAK_REM_OP_ERR:
		return IB_WC_REM_OP_ERR;
	case SRNIC_NAK_INVALID_RD_REQ:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_REM_INV_REQ_ERR;
	}
}

/* The RNR NAK timer field (IBA table 45), in microseconds. */
static const u32 srnic_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* Fail the WQE holding @psn with @status; the QP then goes to error. */
static void srnic_req_fail_locked(struct srnic_qp *qp, struct srnic_swqe *s,
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
		return srnic_ack_upto(qp, pkt->psn);
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
		srnic_req_push_timer(qp);	/* a replay of what we have */
		return false;
	}
	if (idx - k >= SRNIC_READ_AHEAD) {
		srnic_req_gap(qp, srnic_psn_add(s->first_psn, k));
		srnic_req_push_timer(qp);
		return false;
	}

	/*
	 * Everything before the Read is implicitly acknowledged; a Read or
	 * atomic before it still missing responses means this one came out
	 * of order (srnic_ack_upto() asked for the missing ones again).
	 */
	srnic_ack_upto(qp, srnic_psn_add(s->first_psn, -1));
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
		srnic_req_gap(qp, srnic_psn_add(s->first_psn, k));
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
		srnic_req_gap(qp, req->una);
	if (!moved)
		srnic_req_push_timer(qp);
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
	srnic_ack_upto(qp, srnic_psn_add(s->first_psn, -1));
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

/* An ACK, RNR NAK or NAK. */
static bool srnic_comp_ack(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;
	u8 type = pkt->syndrome & SRNIC_AETH_TYPE_MASK;
	u8 value = pkt->syndrome & SRNIC_AETH_VALUE_MASK;
	struct srnic_swqe *s;
	bool acked;

	switch (type) {
	case SRNIC_AETH_ACK:
		return srnic_ack_upto(qp, pkt->psn);
	case SRNIC_AETH_RNR_NAK:
		srnic_counter_inc(sdev, SRNIC_CNT_RCVD_RNR);
		srnic_ack_upto(qp, srnic_psn_add(pkt->psn, -1));
		s = srnic_req_find(qp, pkt->psn);
		if (!s)
			return false;
		if (!req->rnr_left) {
			srnic_counter_inc(sdev, SRNIC_CNT_RNR_RETRY_EXC);
			srnic_req_fail_locked(qp, s, IB_WC_RNR_RETRY_EXC_ERR);
			return true;
		}
		if (req->rnr_left != 7)
			req->rnr_left--;
		srnic_req_rewind(qp, pkt->psn);
		req->rnr_wait = true;
		mod_timer(&req->timer, jiffies +
			  usecs_to_jiffies(srnic_rnr_usecs[value]) + 1);
		return true;
	case SRNIC_AETH_NAK:
		acked = srnic_ack_upto(qp, srnic_psn_add(pkt->psn, -1));
		s = srnic_req_find(qp, pkt->psn);
		if (!s)
			return acked;
		if (value == SRNIC_NAK_PSN_SEQ_ERR) {
			srnic_counter_inc(sdev, SRNIC_CNT_RCVD_SEQ_ERR);
			/*
			 * The later packets of a message an RNR NAK stopped
			 * (a responder such as rdma_rxe NAKs the first one
			 * out of sequence): the RNR timer resends them.
			 */
			if (req->rnr_wait)
				return acked;
			if (!req->retry_left) {
				srnic_counter_inc(sdev, SRNIC_CNT_RETRY_EXC);
				srnic_req_fail_locked(qp, s,
						      IB_WC_RETRY_EXC_ERR);
				return true;
			}
			req->retry_left--;
			srnic_req_rewind(qp, pkt->psn);
			srnic_req_kick(qp);
			return true;
		}
		srnic_req_fail_locked(qp, s, srnic_nak_status(value));
		return true;
	default:
		return false;
	}
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
	u8 type = pkt->syndrome & SRNIC_AETH_TYPE_MASK;
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
				srnic_req_push_timer(qp);
			goto out;
		}
	}

	una = req->una;
	switch (pkt->opcode) {
	case SRNIC_OP_ACKNOWLEDGE:
		moved = srnic_comp_ack(qp, pkt);
		break;
	case SRNIC_OP_ATOMIC_ACKNOWLEDGE:
		moved = srnic_comp_atomic(qp, pkt);
		break;
	default:
		moved = srnic_comp_read(qp, pkt, payload);
		break;
	}
	if (moved) {
		/*
		 * Forward progress renews the retry budgets; a NAK that
		 * acknowledges nothing new does not. Else the sequence NAKs
		 * answering the rest of a multi-packet message after its RNR
		 * NAK renewed rnr_left each round, and a Send into an empty
		 * receive queue never ended in IB_WC_RNR_RETRY_EXC_ERR.
		 */
		bool progress = pkt->opcode != SRNIC_OP_ACKNOWLEDGE ||
				type == SRNIC_AETH_ACK || req->una != una;

		if (progress)
			req->retry_left = qp->retry_cnt;
		if (progress && type != SRNIC_AETH_RNR_NAK)
			req->rnr_left = qp->rnr_retry;
		srnic_req_complete(qp);
		if (!req->rnr_wait &&
		    req->max_psn != req->una)
			srnic_req_arm_timer(qp);
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
