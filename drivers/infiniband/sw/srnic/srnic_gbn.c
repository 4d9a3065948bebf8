// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: go-back-N, the reliability of standard RoCEv2 RC, behind the
 * transport seam (srnic_transport.h).
 *
 * The requester keeps at most SRNIC_MAX_INFLIGHT PSNs unacknowledged. An
 * ACK acknowledges every PSN up to its own; a PSN sequence NAK, a missing
 * Read or atomic response or the retransmission timer sends everything
 * again from the oldest PSN not acknowledged; an RNR NAK waits out its
 * timer first. Retries are counted against retry_cnt and rnr_retry, and
 * forward progress renews both.
 *
 * The responder takes only the expected PSN: a packet ahead of it is
 * answered with one PSN sequence NAK per gap and dropped, one behind it
 * is a duplicate. ACKs are coalesced (srnic_ack_decide()).
 */
#include <rdma/ib_verbs.h>

#include "srnic.h"
#include "srnic_resp.h"
#include "srnic_transport.h"

/* Packets a requester may have sent and not seen acknowledged. */
#define SRNIC_MAX_INFLIGHT	256

static unsigned long srnic_gbn_timeout(struct srnic_qp *qp)
{
	u64 ns = 4096ULL << qp->timeout;

	return max_t(u64, nsecs_to_jiffies64(ns), msecs_to_jiffies(10));
}

/**
 * srnic_gbn_sent() - (re)start the retransmission timer
 * @qp: the QP, with unacknowledged packets
 *
 * A timeout of 0 means "infinite": never retransmit on time.
 *
 * Context: under req.lock.
 */
static void srnic_gbn_sent(struct srnic_qp *qp)
{
	if (!qp->timeout || qp->dead)
		return;
	qp->req.timer_psn = qp->req.una;
	mod_timer(&qp->req.timer, jiffies + srnic_gbn_timeout(qp));
}

/**
 * srnic_gbn_alive() - the responder is alive: retransmit later
 * @qp: the QP
 *
 * For Read responses the requester cannot use: a replay still streaming
 * past a gap, or a replay for a Read already complete. The responder works
 * through its requests in order and is busy with ours; asking again now
 * would only queue one more replay behind the current one (rdma_rxe serves
 * each repeated Read request to its end). The timer still fires, and
 * counts a retry, once such responses stop coming.
 *
 * Context: under req.lock.
 */
static void srnic_gbn_alive(struct srnic_qp *qp)
{
	if (qp->timeout && !qp->dead && timer_pending(&qp->req.timer))
		mod_timer(&qp->req.timer, jiffies + srnic_gbn_timeout(qp));
}

/**
 * srnic_gbn_rewind() - go back N: transmit again from @psn
 * @qp: the QP
 * @psn: the oldest PSN the responder has not acknowledged
 *
 * Context: under req.lock.
 */
static void srnic_gbn_rewind(struct srnic_qp *qp, u32 psn)
{
	struct srnic_req *req = &qp->req;
	u32 i;

	for (i = req->comp; i != req->issue; i++) {
		struct srnic_swqe *s = srnic_req_swqe(qp, i);
		s32 d = srnic_psn_diff(psn, s->first_psn);

		if (s->state == SRNIC_SWQE_DONE || d >= (s32)s->npkts)
			continue;
		if (d < 0)
			d = 0;
		if (s->wqe.opcode == IB_WR_RDMA_READ)
			d = s->read_off / qp->mtu;
		req->cur = i;
		req->cur_pkt = d;
		req->psn = srnic_psn_add(s->first_psn, d);
		srnic_counter_inc(to_sdev(qp->ibqp.device),
				  SRNIC_CNT_RETRANSMITS);
		return;
	}
	req->cur = req->issue;
	req->cur_pkt = 0;
	req->psn = req->max_psn;
}

static void srnic_gbn_timer(struct timer_list *t)
{
	struct srnic_qp *qp = from_timer(qp, t, req.timer);
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;
	bool fail = false;

	spin_lock_bh(&req->lock);
	if (qp->dead || req->flushing)
		goto out;
	if (req->rnr_wait) {
		req->rnr_wait = false;
		srnic_gbn_sent(qp);
		srnic_req_kick(qp);
		goto out;
	}
	if (req->max_psn == req->una)
		goto out;		/* nothing outstanding */
	if (req->una != req->timer_psn) {
		srnic_gbn_sent(qp);	/* progress was made */
		goto out;
	}
	srnic_counter_inc(sdev, SRNIC_CNT_COMP_RETRY);
	ibdev_dbg(&sdev->ibdev,
		  "qp %u: ack timeout: una %#x max %#x psn %#x wqe %u..%u cur %u+%u retries left %u\n",
		  qp->ibqp.qp_num, req->una, req->max_psn, req->psn, req->comp,
		  req->issue, req->cur, req->cur_pkt, req->retry_left);
	if (!req->retry_left) {
		srnic_counter_inc(sdev, SRNIC_CNT_RETRY_EXC);
		fail = true;
		goto out;
	}
	req->retry_left--;
	req->gap_pending = false;
	srnic_gbn_rewind(qp, req->una);
	srnic_gbn_sent(qp);
	srnic_req_kick(qp);
out:
	spin_unlock_bh(&req->lock);
	if (fail)
		srnic_req_fail(qp, req->comp, IB_WC_RETRY_EXC_ERR);
}

/*
 * A response is missing at @psn: go back to it, once per gap. Responses
 * still in flight past the gap say the same thing again and are ignored
 * until the gap fills (or the retransmission timer decides).
 */
static void srnic_gbn_lost(struct srnic_qp *qp, u32 psn)
{
	struct srnic_req *req = &qp->req;

	if (req->gap_pending && req->gap_psn == psn)
		return;
	req->gap_pending = true;
	req->gap_psn = psn;
	srnic_gbn_rewind(qp, psn);
	srnic_req_kick(qp);
}

/*
 * Everything up to and including @psn is acknowledged. A Read or Atomic
 * WQE in that range whose response has not arrived was lost: go back to
 * it. Returns true if the window moved.
 */
static bool srnic_gbn_acked(struct srnic_qp *qp, u32 psn)
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
			srnic_gbn_lost(qp, una);
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

/* An ACK, RNR NAK or NAK. */
static bool srnic_gbn_ack(struct srnic_qp *qp, const struct srnic_pkt *pkt)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;
	u8 type = pkt->syndrome & SRNIC_AETH_TYPE_MASK;
	u8 value = pkt->syndrome & SRNIC_AETH_VALUE_MASK;
	struct srnic_swqe *s;
	bool acked;

	switch (type) {
	case SRNIC_AETH_ACK:
		return srnic_gbn_acked(qp, pkt->psn);
	case SRNIC_AETH_RNR_NAK:
		srnic_counter_inc(sdev, SRNIC_CNT_RCVD_RNR);
		srnic_gbn_acked(qp, srnic_psn_add(pkt->psn, -1));
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
		srnic_gbn_rewind(qp, pkt->psn);
		req->rnr_wait = true;
		mod_timer(&req->timer, jiffies +
			  usecs_to_jiffies(srnic_rnr_usecs[value]) + 1);
		return true;
	case SRNIC_AETH_NAK:
		acked = srnic_gbn_acked(qp, srnic_psn_add(pkt->psn, -1));
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
			/*
			 * A NAK overtaken by a later ACK or NAK (it names a
			 * PSN already acknowledged), or a copy of the one
			 * already acted on: going back again would resend
			 * what the responder holds and spend a retry on it.
			 * With reordering both ways a storm of such NAKs
			 * exhausted retry_cnt on a live link.
			 */
			if (srnic_psn_diff(pkt->psn, req->una) < 0 ||
			    (req->gap_pending && req->gap_psn == pkt->psn)) {
				srnic_counter_inc(sdev, SRNIC_CNT_STALE_NAK);
				return acked;
			}
			ibdev_dbg(&sdev->ibdev,
				  "qp %u: sequence NAK %#x: una %#x max %#x psn %#x retries left %u\n",
				  qp->ibqp.qp_num, pkt->psn, req->una,
				  req->max_psn, req->psn, req->retry_left);
			if (!req->retry_left) {
				srnic_counter_inc(sdev, SRNIC_CNT_RETRY_EXC);
				srnic_req_fail_locked(qp, s,
						      IB_WC_RETRY_EXC_ERR);
				return true;
			}
			req->retry_left--;
			srnic_gbn_lost(qp, pkt->psn);
			return true;
		}
		srnic_req_fail_locked(qp, s, srnic_nak_status(value));
		return true;
	default:
		return false;
	}
}

static void srnic_gbn_init(struct srnic_qp *qp)
{
	timer_setup(&qp->req.timer, srnic_gbn_timer, 0);
}

static void srnic_gbn_start(struct srnic_qp *qp)
{
	struct srnic_req *req = &qp->req;

	req->retry_left = qp->retry_cnt;
	req->rnr_left = qp->rnr_retry;
	req->rnr_wait = false;
}

static void srnic_gbn_stop(struct srnic_qp *qp, bool sync)
{
	if (sync)
		del_timer_sync(&qp->req.timer);
	else
		del_timer(&qp->req.timer);
}

static bool srnic_gbn_may_send(struct srnic_qp *qp,
			       const struct srnic_swqe *s)
{
	struct srnic_req *req = &qp->req;
	u32 sent;

	if (req->rnr_wait)
		return false;
	sent = srnic_psn_sent(req->psn, req->una, req->max_psn);
	if (sent >= SRNIC_MAX_INFLIGHT)
		return false;
	/*
	 * A Read's one request claims every response PSN: it waits until
	 * they fit in IBA's 2^23 outstanding PSNs (a 2 GiB Read at MTU 256
	 * takes all of them: it goes out alone).
	 */
	return !s || s->wqe.opcode != IB_WR_RDMA_READ ||
	       sent + s->npkts - req->cur_pkt <= SRNIC_PSN_HALF;
}

static void srnic_gbn_progress(struct srnic_qp *qp,
			       const struct srnic_pkt *pkt, u32 una)
{
	struct srnic_req *req = &qp->req;
	u8 type = pkt->syndrome & SRNIC_AETH_TYPE_MASK;
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
	if (!req->rnr_wait && req->max_psn != req->una)
		srnic_gbn_sent(qp);
}

static enum srnic_rx_class srnic_gbn_rx_check(struct srnic_qp *qp,
					      const struct srnic_pkt *pkt,
					      struct sk_buff_head *out)
{
	struct srnic_resp *resp = &qp->resp;
	s32 d = srnic_psn_diff(pkt->psn, resp->epsn);

	if (d > 0) {
		srnic_counter_inc(to_sdev(qp->ibqp.device),
				  SRNIC_CNT_OOS_REQ);
		if (!resp->nak_sent) {
			resp->nak_sent = true;
			srnic_resp_ack(qp, out, SRNIC_AETH_NAK |
				       SRNIC_NAK_PSN_SEQ_ERR, resp->epsn);
		}
		return SRNIC_RX_DROP;
	}
	if (d < 0)
		return SRNIC_RX_DUP;
	resp->nak_sent = false;
	return SRNIC_RX_NEW;
}

static void srnic_gbn_rx_ack(struct srnic_qp *qp, const struct srnic_pkt *pkt,
			     struct sk_buff_head *out)
{
	if (srnic_ack_decide(&qp->resp.ac, pkt->ack_req, false, 64) ==
	    SRNIC_ACK_NOW)
		srnic_resp_ack(qp, out, SRNIC_AETH_ACK | SRNIC_AETH_NO_CREDIT,
			       pkt->psn);
}

static void srnic_gbn_rx_rnr(struct srnic_qp *qp, const struct srnic_pkt *pkt,
			     struct sk_buff_head *out)
{
	/*
	 * The rest of the message is out of sequence now: dropped silently
	 * until the requester resends this PSN, not NAKed (a sequence NAK
	 * would send it back before the RNR delay).
	 */
	qp->resp.nak_sent = true;
	srnic_resp_ack(qp, out, SRNIC_AETH_RNR_NAK |
		       (qp->min_rnr_timer & SRNIC_AETH_VALUE_MASK), pkt->psn);
}

const struct srnic_xport_ops srnic_xport_gbn = {
	.name = "go-back-n",
	.init = srnic_gbn_init,
	.start = srnic_gbn_start,
	.stop = srnic_gbn_stop,
	.may_send = srnic_gbn_may_send,
	.sent = srnic_gbn_sent,
	.acked = srnic_gbn_acked,
	.ack = srnic_gbn_ack,
	.lost = srnic_gbn_lost,
	.alive = srnic_gbn_alive,
	.progress = srnic_gbn_progress,
	.rx_check = srnic_gbn_rx_check,
	.rx_ack = srnic_gbn_rx_ack,
	.rx_rnr = srnic_gbn_rx_rnr,
};
