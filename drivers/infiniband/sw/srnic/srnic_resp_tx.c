// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: what the RC responder sends, in PSN order: ACKs and NAKs,
 * atomic, Atomic Write and Flush responses, and Read responses, which the
 * QP's round at its gate segments from queued jobs (srnic_resp_tx()).
 *
 * A response without payload waits behind queued Read responses as a
 * small job; plain ACKs and NAKs replace one another at the tail, other
 * small responses and Read jobs are bounded by max_dest_rd_atomic: what a
 * peer's requests make the responder queue is bounded.
 */
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "srnic.h"
#include "srnic_resp.h"

/*
 * Send a response without payload (ACK, NAK, atomic or Atomic Write and
 * Flush response) in PSN order. With Read responses queued, or built and
 * perhaps not gone yet (resp.sending), it waits behind them as a job and
 * is built when its turn comes: no packet is allocated for it now. A
 * plain ACK or NAK replaces one waiting at the tail (both are cumulative:
 * the newer says what the older did, and more); other small responses
 * are bounded by max_dest_rd_atomic, beyond which they are dropped (the
 * requester asks again). So a peer repeating requests during one long
 * Read grows nothing. Returns true if the response was built or queued.
 */
bool srnic_resp_small(struct srnic_qp *qp, struct sk_buff_head *out,
		      const struct srnic_pkt *pkt)
{
	struct srnic_resp *resp = &qp->resp;
	bool plain = pkt->opcode == SRNIC_OP_ACKNOWLEDGE;
	struct srnic_read_job *job = NULL;
	struct srnic_pkt p = *pkt;

	if (list_empty(&resp->reads) && !READ_ONCE(resp->sending))
		return !!srnic_build_send(qp, out, &p, 0);
	if (!list_empty(&resp->reads))
		job = list_last_entry(&resp->reads, struct srnic_read_job,
				      list);
	if (!(plain && job && job->small &&
	      job->opcode == SRNIC_OP_ACKNOWLEDGE)) {
		if (!plain &&
		    resp->nsmall >= max_t(u32, qp->max_dest_rd_atomic, 1))
			return false;
		job = kzalloc(sizeof(*job), GFP_ATOMIC);
		if (!job)
			return false;
		job->small = true;
		list_add_tail(&job->list, &resp->reads);
		if (!plain)
			resp->nsmall++;
	}
	job->opcode = pkt->opcode;
	job->psn = pkt->psn;
	job->syndrome = pkt->syndrome;
	job->msn = pkt->msn;
	job->orig = pkt->orig;
	srnic_req_kick(qp);
	return true;
}

/*
 * An ACK or NAK for @psn, in PSN order (srnic_resp_small()); @now: built
 * at once, ahead of queued Read responses (a NAK that fails the QP: the
 * queue is dropped with it).
 */
void srnic_resp_ack_how(struct srnic_qp *qp, struct sk_buff_head *out,
			u8 syndrome, u32 psn, bool now)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_pkt pkt = {
		.opcode = SRNIC_OP_ACKNOWLEDGE,
		.psn = psn,
		.syndrome = syndrome,
		.msn = qp->resp.msn,
	};
	bool sent;

	sent = now ? !!srnic_build_send(qp, out, &pkt, 0) :
		     srnic_resp_small(qp, out, &pkt);
	if (sent)
		srnic_counter_inc(sdev, (syndrome & SRNIC_AETH_TYPE_MASK) ==
				  SRNIC_AETH_ACK ? SRNIC_CNT_ACKS_SENT :
						   SRNIC_CNT_NAKS_SENT);
}

/**
 * srnic_resp_ack() - an ACK or NAK for @psn, in PSN order
 * @qp: the QP
 * @out: where a response built now is queued
 * @syndrome: its AETH syndrome
 * @psn: its PSN
 *
 * Context: under resp.lock.
 */
void srnic_resp_ack(struct srnic_qp *qp, struct sk_buff_head *out,
		    u8 syndrome, u32 psn)
{
	srnic_resp_ack_how(qp, out, syndrome, psn, false);
}

static void srnic_read_job_free(struct srnic_qp *qp,
				struct srnic_read_job *job)
{
	list_del(&job->list);
	if (job->small) {
		if (job->opcode != SRNIC_OP_ACKNOWLEDGE)
			qp->resp.nsmall--;
	} else {
		qp->resp.nreads--;
	}
	kfree(job);
}

/*
 * Forget the Read responses not sent yet from @psn on (all of them if
 * @all). Responses before @psn stay: they answer requests the requester
 * repeats after this one, in the same go-back-N burst.
 */
void srnic_resp_drop_reads(struct srnic_qp *qp, u32 psn, bool all)
{
	struct srnic_read_job *job, *tmp;

	list_for_each_entry_safe(job, tmp, &qp->resp.reads, list)
		if (all || !srnic_psn_before(job->psn, psn))
			srnic_read_job_free(qp, job);
}

/*
 * Make room for a Read: at most max_dest_rd_atomic response jobs are
 * queued. A requester within its limit never awaits more than that many
 * Reads and completes them in order, so when the queue is full, the
 * oldest job answers a duplicate request that arrived after the requester
 * had what it asked for (reordering delivers those late), and it goes.
 * Like a hardware responder recycling its oldest resource, this never
 * refuses the Read a requester waits for; a requester beyond its limit
 * loses its oldest responses and retries them.
 */
void srnic_resp_room_for_read(struct srnic_qp *qp)
{
	struct srnic_resp *resp = &qp->resp;
	struct srnic_read_job *job, *old;

	while (resp->nreads >= max_t(u32, qp->max_dest_rd_atomic, 1)) {
		old = NULL;
		list_for_each_entry(job, &resp->reads, list)
			if (!job->small &&
			    (!old || srnic_psn_before(job->psn, old->psn)))
				old = job;
		srnic_read_job_free(qp, old);
	}
}

/*
 * Build up to @budget response packets from the jobs in @qp's queue, in
 * order, into @out. Sets *@failed if a Read's key died on the way (the
 * queue is dropped, a NAK built): the caller fails the QP. Under
 * resp.lock; returns the packets built.
 */
static int __srnic_resp_tx(struct srnic_qp *qp, struct sk_buff_head *out,
			   int budget, bool *failed)
{
	struct srnic_resp *resp = &qp->resp;
	struct srnic_read_job *job;
	struct srnic_mr *mr = NULL;
	u64 addr;
	int n = 0;

	while (n < budget &&
	       (job = list_first_entry_or_null(&resp->reads,
					       struct srnic_read_job, list))) {
		u32 len = min(qp->mtu, job->resid);
		bool last = job->resid <= qp->mtu;
		struct srnic_pkt pkt = {};
		u8 *data;

		if (job->small) {
			pkt.opcode = job->opcode;
			pkt.psn = job->psn;
			pkt.syndrome = job->syndrome;
			pkt.msn = job->msn;
			pkt.orig = job->orig;
			if (!srnic_build_send(qp, out, &pkt, 0))
				break;
			srnic_read_job_free(qp, job);
			n++;
			continue;
		}
		pkt.opcode = job->first ?
			(last ? SRNIC_OP_READ_RESPONSE_ONLY :
				SRNIC_OP_READ_RESPONSE_FIRST) :
			(last ? SRNIC_OP_READ_RESPONSE_LAST :
				SRNIC_OP_READ_RESPONSE_MIDDLE);
		pkt.psn = job->psn;
		pkt.syndrome = SRNIC_AETH_ACK | SRNIC_AETH_NO_CREDIT;
		pkt.msn = resp->msn;
		/*
		 * Nothing is held between packets: the key is looked up for
		 * each one, so a deregistered or invalidated key ends the
		 * response with a remote access error NAK for this PSN.
		 */
		if (len && srnic_resp_rkey(qp, job->rkey, job->va, len,
					   IB_ACCESS_REMOTE_READ, &mr, &addr)) {
			srnic_resp_ack_how(qp, out, SRNIC_AETH_NAK |
					   SRNIC_NAK_REM_ACCESS, job->psn,
					   true);
			srnic_resp_drop_reads(qp, 0, true);
			*failed = true;
			break;
		}
		data = srnic_build_send(qp, out, &pkt, len);
		if (!data) {
			if (mr)
				srnic_mr_put(mr);
			break;
		}
		if (len) {
			int err = srnic_mr_copy(mr, addr, data, len, false);

			srnic_mr_put(mr);
			mr = NULL;
			if (err) {
				/* Remapped after the check: this packet goes. */
				kfree_skb(__skb_dequeue_tail(out));
				srnic_resp_ack_how(qp, out, SRNIC_AETH_NAK |
						   SRNIC_NAK_REM_ACCESS,
						   job->psn, true);
				srnic_resp_drop_reads(qp, 0, true);
				*failed = true;
				break;
			}
		}
		job->va += len;
		job->resid -= len;
		job->psn = srnic_psn_add(job->psn, 1);
		job->first = false;
		n++;
		if (last)
			srnic_read_job_free(qp, job);
	}
	/* Until they have left, later small responses queue behind them. */
	if (n)
		WRITE_ONCE(resp->sending, true);
	return n;
}

/**
 * srnic_resp_tx() - build Read response packets
 * @qp: the QP
 * @out: where they are queued
 * @budget: most packets to build
 *
 * Nothing while packets built elsewhere may not have left yet
 * (resp.sending: the QP's own round clears it once its packets are
 * transmitted, so at the start of a round it is set only by a response
 * the receive path built, srnic_resp_read_now()): the next ones must not
 * overtake it; that path wakes the QP at its gate again once it has left.
 *
 * Context: the QP's transmit tasklet.
 * Return: packets built.
 */
int srnic_resp_tx(struct srnic_qp *qp, struct sk_buff_head *out, int budget)
{
	struct srnic_resp *resp = &qp->resp;
	bool failed = false;
	int n = 0;

	spin_lock_bh(&resp->lock);
	if (!READ_ONCE(resp->sending))
		n = __srnic_resp_tx(qp, out, budget, &failed);
	spin_unlock_bh(&resp->lock);
	if (failed)
		srnic_qp_fail(qp, IB_EVENT_QP_ACCESS_ERR);
	return n;
}

/**
 * srnic_resp_read_now() - answer a new one-packet Read in the receive path
 * @qp: the QP; caller holds resp.lock
 * @out: where the response is queued; the caller transmits it, then calls
 *	srnic_resp_read_sent()
 * @failed: set if the Read's key died meanwhile (the caller fails the QP)
 *
 * A Read answered by one packet, with nothing ahead of it in the queue
 * and nothing built still on its way, is answered here, as an ACK or an
 * atomic response is: waking the QP's gate would cost a tasklet run, and
 * an IPI when that gate is another CPU's, on every Read's round trip. A
 * longer Read, or one behind others, is segmented by the QP's rounds at
 * its gate. Until srnic_resp_read_sent(), resp.sending holds: later
 * small responses queue behind it and the gate builds none.
 *
 * Return: true if it was built here; false: the QP was woken at its gate
 * to send it.
 */
bool srnic_resp_read_now(struct srnic_qp *qp, struct sk_buff_head *out,
			 bool *failed)
{
	struct srnic_resp *resp = &qp->resp;
	struct srnic_read_job *job;

	/* Alone in the queue: the Read just queued (srnic_resp_read()). */
	job = list_first_entry(&resp->reads, struct srnic_read_job, list);
	if (list_is_singular(&resp->reads) && job->resid <= qp->mtu &&
	    !READ_ONCE(resp->sending) && __srnic_resp_tx(qp, out, 1, failed))
		return true;
	if (!*failed)
		srnic_req_kick(qp);
	return false;
}

/**
 * srnic_resp_read_sent() - the response srnic_resp_read_now() built has left
 * @qp: the QP
 *
 * Context: softirq (receive path), after transmitting it.
 */
void srnic_resp_read_sent(struct srnic_qp *qp)
{
	struct srnic_resp *resp = &qp->resp;
	bool more;

	spin_lock_bh(&resp->lock);
	WRITE_ONCE(resp->sending, false);
	more = !list_empty(&resp->reads);
	spin_unlock_bh(&resp->lock);
	/* Responses queued meanwhile: the gate builds them now. */
	if (more)
		srnic_req_kick(qp);
}

/**
 * srnic_resp_tx_done() - the packets srnic_resp_tx() built have left
 * @qp: the QP
 *
 * Context: the QP's transmit tasklet, after transmitting them.
 */
void srnic_resp_tx_done(struct srnic_qp *qp)
{
	/*
	 * No lock on this per-round path: a receiver that still sees true
	 * queues its response as a job and kicks the gate, which is only
	 * later, never out of order.
	 */
	WRITE_ONCE(qp->resp.sending, false);
}
