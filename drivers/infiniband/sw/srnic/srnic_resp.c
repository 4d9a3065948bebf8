// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the RC responder: placement of Sends and Writes, Reads,
 * atomics, duplicates, and what each outcome answers (the responses
 * leave through srnic_resp_tx.c; UC and UD: srnic_resp_uc_ud.c).
 *
 * Requests are executed strictly in PSN order: a packet ahead of the
 * expected PSN is answered with one PSN sequence NAK and dropped, so when
 * a message's last packet is placed every earlier packet of the QP has
 * been placed too. The receive completion is posted after the placement
 * (srnic_cq_post() then orders payload stores before the CQE): this is
 * the Write → Write-with-Immediate guarantee.
 *
 * Every check happens before a byte moves: opcode sequence, lengths
 * against the path MTU and the message, the rkey's MR, PD, rights and
 * bounds for the whole RETH range, the receive WQE's buffers.
 */
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "srnic.h"
#include "srnic_resp.h"
#include "srnic_transport.h"

#define SRNIC_RESP_NAK(verdict, nak, event, uc)				\
	[verdict] = { .name = #verdict + sizeof("SRNIC_RESP_ERR_") - 1,	\
		      .syndrome = SRNIC_AETH_NAK | (nak), .ev = (event),	\
		      .uc_fail = (uc) }
#define SRNIC_RESP_INV(verdict, uc)					\
	SRNIC_RESP_NAK(verdict, SRNIC_NAK_INVALID_REQ, IB_EVENT_QP_REQ_ERR, uc)
#define SRNIC_RESP_ACC(verdict)						\
	SRNIC_RESP_NAK(verdict, SRNIC_NAK_REM_ACCESS, IB_EVENT_QP_ACCESS_ERR, \
		       false)
#define SRNIC_RESP_OPE(verdict)						\
	SRNIC_RESP_NAK(verdict, SRNIC_NAK_REM_OP_ERR, IB_EVENT_QP_FATAL, true)

const struct srnic_resp_answer srnic_resp_answers[SRNIC_RESP_NR_VERDICTS] = {
	[SRNIC_RESP_OK] = { .name = "ok" },
	[SRNIC_RESP_DONE] = { .name = "done" },
	[SRNIC_RESP_RNR] = { .name = "rnr" },
	[SRNIC_RESP_DROP_NOMEM] = { .name = "drop_nomem" },
	[SRNIC_RESP_DROP_CQE] = { .name = "drop_cqe" },
	SRNIC_RESP_INV(SRNIC_RESP_ERR_SEQUENCE, false),
	SRNIC_RESP_INV(SRNIC_RESP_ERR_OPCODE, false),
	SRNIC_RESP_INV(SRNIC_RESP_ERR_PKT_LEN, false),
	SRNIC_RESP_INV(SRNIC_RESP_ERR_MSG_LEN, false),
	SRNIC_RESP_INV(SRNIC_RESP_ERR_ALIGN, false),
	SRNIC_RESP_INV(SRNIC_RESP_ERR_FLUSH, false),
	SRNIC_RESP_INV(SRNIC_RESP_ERR_RECV_LEN, true),
	SRNIC_RESP_INV(SRNIC_RESP_ERR_INVALIDATE, true),
	SRNIC_RESP_ACC(SRNIC_RESP_ERR_QP_ACCESS),
	SRNIC_RESP_ACC(SRNIC_RESP_ERR_RKEY),
	SRNIC_RESP_ACC(SRNIC_RESP_ERR_REMAPPED),
	SRNIC_RESP_OPE(SRNIC_RESP_ERR_RWQE),
	SRNIC_RESP_OPE(SRNIC_RESP_ERR_RECV_PROT),
};

/* Returns 0, or -EFAULT: the MR was remapped after its key check. */
static int srnic_place_write(struct srnic_mr *mr, u64 va, const u8 *data,
			     u32 len)
{
	if (unlikely(srnic_hook_late_place(mr, va, data, len)))
		return 0;
	return srnic_mr_copy(mr, va, (void *)data, len, true);
}

/* Take the element at the consumer index; caller excludes consumers. */
static int srnic_wq_take(struct srnic_wq *wq, struct srnic_rwqe *rw)
{
	struct srnic_queue *q = &wq->queue;
	const struct rxe_recv_wqe *u;
	u32 i, n, len = 0;
	int err = 0;

	if (srnic_queue_empty(q))
		return -EAGAIN;
	u = srnic_queue_addr(q, srnic_queue_consumer(q));
	rw->wr_id = READ_ONCE(u->wr_id);
	n = READ_ONCE(u->dma.num_sge);
	if (n > wq->max_sge) {
		err = -EINVAL;
	} else {
		for (i = 0; i < n; i++) {
			rw->sge[i].addr = READ_ONCE(u->dma.sge[i].addr);
			rw->sge[i].length = READ_ONCE(u->dma.sge[i].length);
			rw->sge[i].lkey = READ_ONCE(u->dma.sge[i].lkey);
			if (check_add_overflow(len, rw->sge[i].length, &len))
				err = -EINVAL;
		}
		rw->num_sge = n;
		rw->length = len;
	}
	srnic_queue_advance_consumer(q);
	return err;
}

/**
 * srnic_rwqe_take() - take the next receive WQE from the RQ or SRQ
 * @qp: the QP
 * @rw: filled in: a validated copy
 *
 * The element is read once; the SGE count is bounded by the queue's
 * max_sge, the length recomputed. An SRQ whose armed limit is crossed
 * reports IB_EVENT_SRQ_LIMIT_REACHED.
 *
 * Context: under resp.lock.
 * Return: 0, -EAGAIN if none is posted, -EINVAL if the element is garbage
 * (it is consumed; @rw->wr_id is its cookie).
 */
int srnic_rwqe_take(struct srnic_qp *qp, struct srnic_rwqe *rw)
{
	struct srnic_srq *srq = qp->srq;
	bool limit_event = false;
	unsigned long flags;
	int err;

	if (!srq)
		return srnic_wq_take(&qp->rq, rw);

	spin_lock_irqsave(&srq->rq.lock, flags);
	err = srnic_wq_take(&srq->rq, rw);
	if (err != -EAGAIN && srq->limit &&
	    srnic_queue_count(&srq->rq.queue) < srq->limit) {
		srq->limit = 0;
		limit_event = true;
	}
	spin_unlock_irqrestore(&srq->rq.lock, flags);

	if (limit_event && srq->ibsrq.event_handler) {
		struct ib_event ev = {
			.device = srq->ibsrq.device,
			.element.srq = &srq->ibsrq,
			.event = IB_EVENT_SRQ_LIMIT_REACHED,
		};

		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	return err;
}

/*
 * The PD a receive WQE's L_Keys are checked against: an SRQ's own (IBA
 * 10.2.9: an SRQ belongs to a PD, which may differ from the QP's).
 */
struct ib_pd *srnic_rwqe_pd(const struct srnic_qp *qp)
{
	return qp->srq ? qp->srq->ibsrq.pd : qp->ibqp.pd;
}

/* Make sure the current message has a receive WQE. */
static enum srnic_resp_verdict srnic_resp_need_rwqe(struct srnic_qp *qp)
{
	struct srnic_resp *resp = &qp->resp;
	int err;

	if (resp->have_rwqe)
		return SRNIC_RESP_OK;
	err = srnic_rwqe_take(qp, &resp->rwqe);
	if (err == -EAGAIN)
		return SRNIC_RESP_RNR;
	if (err) {
		srnic_wc_recv_err(qp, resp->rwqe.wr_id, IB_WC_LOC_QP_OP_ERR, 0);
		return SRNIC_RESP_ERR_RWQE;
	}
	resp->have_rwqe = true;
	return SRNIC_RESP_OK;
}

/* Payload length rules: full MTU until the last packet. */
static bool srnic_resp_len_ok(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	if (pkt->paylen > qp->mtu)
		return false;
	if (!(pkt->info->flags & SRNIC_OPF_LAST))
		return pkt->paylen == qp->mtu;
	return true;
}

enum srnic_resp_verdict srnic_resp_send(struct srnic_qp *qp,
					struct srnic_pkt *pkt,
					const u8 *payload)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_resp *resp = &qp->resp;
	struct srnic_recv_wc rwc = { .op = IB_WC_RECV };
	enum srnic_resp_verdict v;
	bool posted;
	int err;

	if (!srnic_resp_len_ok(qp, pkt))
		return SRNIC_RESP_ERR_PKT_LEN;
	v = srnic_resp_need_rwqe(qp);
	if (v)
		return v;
	/*
	 * A Send takes its receive WQE at its first packet; a Write with
	 * Immediate at its last, where resp->roff counts what it wrote.
	 */
	if (pkt->info->flags & SRNIC_OPF_FIRST)
		resp->roff = 0;
	if (pkt->paylen > resp->rwqe.length - resp->roff) {
		srnic_wc_recv_err(qp, resp->rwqe.wr_id, IB_WC_LOC_LEN_ERR,
				  resp->roff);
		resp->have_rwqe = false;
		return SRNIC_RESP_ERR_RECV_LEN;
	}
	err = srnic_sge_copy(sdev, srnic_rwqe_pd(qp), resp->rwqe.sge,
			     resp->rwqe.num_sge, resp->roff, (void *)payload,
			     pkt->paylen, true);
	if (err) {
		srnic_wc_recv_err(qp, resp->rwqe.wr_id, IB_WC_LOC_PROT_ERR,
				  resp->roff);
		resp->have_rwqe = false;
		return SRNIC_RESP_ERR_RECV_PROT;
	}
	resp->roff += pkt->paylen;
	if (!(pkt->info->flags & SRNIC_OPF_LAST)) {
		resp->in_op = SRNIC_OPF_SEND;
		return SRNIC_RESP_OK;
	}
	if (pkt->info->flags & SRNIC_OPF_IMM) {
		rwc.flags |= IB_WC_WITH_IMM;
		rwc.imm = pkt->imm;
	}
	if (pkt->info->flags & SRNIC_OPF_INV) {
		/* Send with Invalidate: the key dies before the completion. */
		if (srnic_invalidate(qp, pkt->inv_rkey, true)) {
			srnic_wc_recv_err(qp, resp->rwqe.wr_id,
					  IB_WC_REM_INV_REQ_ERR, resp->roff);
			resp->have_rwqe = false;
			return SRNIC_RESP_ERR_INVALIDATE;
		}
		rwc.flags |= IB_WC_WITH_INVALIDATE;
		rwc.inv_rkey = pkt->inv_rkey;
	}
	rwc.byte_len = resp->roff;
	rwc.solicited = pkt->se;
	posted = srnic_wc_recv(qp, resp->rwqe.wr_id, IB_WC_SUCCESS, &rwc);
	resp->have_rwqe = false;
	if (!posted)
		return SRNIC_RESP_DROP_CQE;	/* no ACK */
	resp->in_op = 0;
	srnic_counter_inc(sdev, SRNIC_CNT_RDMA_RECVS);
	return SRNIC_RESP_DONE;
}

/*
 * Look up and check an rkey for [va, va + len); *addr is the MR address
 * of va (a zero-based window's va is an offset into it).
 */
enum srnic_resp_verdict srnic_resp_rkey(struct srnic_qp *qp, u32 rkey,
					u64 va, u32 len, int access,
					struct srnic_mr **mrp, u64 *addr)
{
	*mrp = NULL;
	*addr = va;
	if (!(qp->access_flags & access))
		return SRNIC_RESP_ERR_QP_ACCESS;
	if (!len)
		return SRNIC_RESP_OK;	/* C9-88: no key, no address checked */
	/* An MR's key or a memory window's (srnic_mw.c). */
	if (srnic_rkey_get(qp, rkey, va, len, access, mrp, addr))
		return SRNIC_RESP_ERR_RKEY;
	return SRNIC_RESP_OK;
}

/*
 * An RDMA Write packet. The first packet checks the R_Key for the whole
 * message; nothing is held between packets (a peer that never sends the
 * rest must not keep a deregistration waiting): each later packet looks
 * the key up again for its own bytes, so a key deregistered or
 * invalidated meanwhile fails the rest of the message.
 */
enum srnic_resp_verdict srnic_resp_write(struct srnic_qp *qp,
					 struct srnic_pkt *pkt,
					 const u8 *payload)
{
	struct srnic_resp *resp = &qp->resp;
	u32 flags = pkt->info->flags;
	struct srnic_mr *mr = NULL;
	enum srnic_resp_verdict v;
	u64 addr = 0;

	if (!srnic_resp_len_ok(qp, pkt))
		return SRNIC_RESP_ERR_PKT_LEN;
	if (flags & SRNIC_OPF_FIRST) {
		if (pkt->dma_len > SRNIC_MAX_MSG_SIZE)
			return SRNIC_RESP_ERR_MSG_LEN;
		v = srnic_resp_rkey(qp, pkt->rkey, pkt->va, pkt->dma_len,
				    IB_ACCESS_REMOTE_WRITE, &mr, &addr);
		if (v)
			return v;
		resp->wrkey = pkt->rkey;
		resp->wva = pkt->va;
		resp->wresid = pkt->dma_len;
		resp->roff = 0;
	}
	if (pkt->paylen > resp->wresid ||
	    ((flags & SRNIC_OPF_LAST) && pkt->paylen != resp->wresid)) {
		v = SRNIC_RESP_ERR_MSG_LEN;
		goto out;
	}
	if (!(flags & SRNIC_OPF_FIRST) && pkt->paylen) {
		v = srnic_resp_rkey(qp, resp->wrkey, resp->wva, pkt->paylen,
				    IB_ACCESS_REMOTE_WRITE, &mr, &addr);
		if (v)
			goto out;
	}
	/* Write-with-Imm consumes a receive WQE: have it before placing. */
	if (flags & SRNIC_OPF_IMM) {
		v = srnic_resp_need_rwqe(qp);
		if (v)
			goto out;	/* RNR on a first packet: the retry starts over */
	}
	if (pkt->paylen &&
	    srnic_place_write(mr, addr, payload, pkt->paylen)) {
		v = SRNIC_RESP_ERR_REMAPPED;	/* invalidated meanwhile */
		goto out;
	}
	resp->wva += pkt->paylen;
	resp->wresid -= pkt->paylen;
	resp->roff += pkt->paylen;
	v = SRNIC_RESP_OK;
	if (!(flags & SRNIC_OPF_LAST)) {
		resp->in_op = SRNIC_OPF_WRITE;
		goto out;
	}
	resp->in_op = 0;
	v = SRNIC_RESP_DONE;
	if (flags & SRNIC_OPF_IMM) {
		const struct srnic_recv_wc rwc = {
			.op = IB_WC_RECV_RDMA_WITH_IMM,
			.byte_len = resp->roff,
			.imm = pkt->imm,
			.flags = IB_WC_WITH_IMM,
			.solicited = pkt->se,
		};

		resp->have_rwqe = false;
		if (!srnic_wc_recv(qp, resp->rwqe.wr_id, IB_WC_SUCCESS, &rwc))
			v = SRNIC_RESP_DROP_CQE;
	}
out:
	if (mr)
		srnic_mr_put(mr);
	return v;
}

/*
 * RDMA Atomic Write: 8 bytes to an aligned address, stored at once and
 * atomically with respect to the device's other atomics. Ordered, like
 * every request, after the Writes before it: the responder executes in
 * PSN order. A duplicate is acknowledged, never stored again (a later
 * value may already be there).
 */
/*
 * The response to an RDMA Atomic Write: an RDMA Read Response Only without
 * payload, as rdma_rxe answers it and expects it (srnic's requester also
 * takes a plain ACK).
 */
static void srnic_resp_awrite_reply(struct srnic_pkt *reply)
{
	reply->opcode = SRNIC_OP_READ_RESPONSE_ONLY;
	reply->syndrome = SRNIC_AETH_ACK | SRNIC_AETH_NO_CREDIT;
}

/* The same response, again, to a duplicate. */
static void srnic_resp_awrite_ack(struct srnic_qp *qp,
				  struct sk_buff_head *out, u32 psn)
{
	struct srnic_pkt rsp = { .psn = psn, .msn = qp->resp.msn };

	srnic_resp_awrite_reply(&rsp);
	srnic_resp_small(qp, out, &rsp);
}

static enum srnic_resp_verdict srnic_resp_atomic_write(struct srnic_qp *qp,
						       struct srnic_pkt *pkt,
						       const u8 *payload,
						       struct srnic_pkt *reply)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	enum srnic_resp_verdict v;
	struct srnic_mr *mr;
	u64 val, addr;
	int err;

	if (pkt->dma_len != sizeof(val) || pkt->paylen != sizeof(val))
		return SRNIC_RESP_ERR_MSG_LEN;
	if (pkt->va & 7)
		return SRNIC_RESP_ERR_ALIGN;
	v = srnic_resp_rkey(qp, pkt->rkey, pkt->va, sizeof(val),
			    IB_ACCESS_REMOTE_WRITE, &mr, &addr);
	if (v)
		return v;
	memcpy(&val, payload, sizeof(val));
	/* The Writes before it are visible before the 8 bytes are. */
	smp_wmb();
	spin_lock(&sdev->atomic_lock);
	err = srnic_mr_store64(mr, addr, val);
	spin_unlock(&sdev->atomic_lock);
	srnic_mr_put(mr);
	if (err)
		return SRNIC_RESP_ERR_REMAPPED;
	srnic_resp_awrite_reply(reply);
	return SRNIC_RESP_DONE;
}

/*
 * RDMA Flush (IBA 1.5 memory placement extensions): make what the requests
 * before it placed globally visible. The responder places in PSN order
 * with CPU stores, so by now that is a full barrier away. Persistence
 * would need persistent memory: no srnic MR has the right
 * (IB_ACCESS_FLUSH_PERSISTENT needs IB_DEVICE_FLUSH_PERSISTENT, which
 * srnic does not offer), so a persistent Flush fails the key check. The
 * QP must allow the placement type (else an invalid request, as rdma_rxe
 * answers), the key must grant it over the range, or over nothing for a
 * Flush of the whole region (selectivity level 1). Answered like an
 * Atomic Write, by a zero-length RDMA Read Response Only.
 */
static enum srnic_resp_verdict srnic_resp_flush(struct srnic_qp *qp,
						struct srnic_pkt *pkt,
						struct srnic_pkt *reply)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_mr *mr;
	int access = 0;
	u64 addr;

	if (!pkt->flush_type ||
	    (pkt->flush_type & ~(SRNIC_FLUSH_GLOBAL | SRNIC_FLUSH_PERSISTENT)) ||
	    pkt->flush_level > SRNIC_FLUSH_MR)
		return SRNIC_RESP_ERR_FLUSH;
	if (pkt->flush_type & SRNIC_FLUSH_GLOBAL)
		access |= SRNIC_ACCESS_FLUSH_GLOBAL;
	if (pkt->flush_type & SRNIC_FLUSH_PERSISTENT)
		access |= SRNIC_ACCESS_FLUSH_PERSISTENT;
	if (!access || (qp->access_flags & access) != access)
		return SRNIC_RESP_ERR_FLUSH;
	if (pkt->flush_level == SRNIC_FLUSH_MR) {
		mr = srnic_mr_get(sdev, pkt->rkey, SRNIC_RKEY);
		if (!mr)
			return SRNIC_RESP_ERR_RKEY;
		if (srnic_mr_check(mr, qp->ibqp.pd, mr->iova, mr->length,
				   access)) {
			srnic_mr_put(mr);
			return SRNIC_RESP_ERR_RKEY;
		}
	} else if (!pkt->dma_len) {
		mr = NULL;	/* an empty range: nothing to check */
	} else if (srnic_rkey_get(qp, pkt->rkey, pkt->va, pkt->dma_len,
				  access, &mr, &addr)) {
		return SRNIC_RESP_ERR_RKEY;
	}
	/* Every store placing the requests before this one, made visible. */
	smp_mb();
	if (mr)
		srnic_mr_put(mr);
	srnic_resp_awrite_reply(reply);
	return SRNIC_RESP_DONE;
}

/* Queue the responses to a Read request (new or repeated). */
static enum srnic_resp_verdict srnic_resp_read(struct srnic_qp *qp,
					       struct srnic_pkt *pkt)
{
	struct srnic_resp *resp = &qp->resp;
	struct srnic_read_job *job;
	enum srnic_resp_verdict v;
	struct srnic_mr *mr;
	u64 addr;

	if (pkt->dma_len > SRNIC_MAX_MSG_SIZE)
		return SRNIC_RESP_ERR_MSG_LEN;
	/* Checked for the whole range now, again per response packet. */
	v = srnic_resp_rkey(qp, pkt->rkey, pkt->va, pkt->dma_len,
			    IB_ACCESS_REMOTE_READ, &mr, &addr);
	if (v)
		return v;
	if (mr)
		srnic_mr_put(mr);
	job = kmalloc(sizeof(*job), GFP_ATOMIC);
	if (!job)
		return SRNIC_RESP_DROP_NOMEM;
	job->small = false;
	job->rkey = pkt->rkey;
	job->va = pkt->va;
	job->resid = pkt->dma_len;
	job->psn = pkt->psn;
	job->first = true;
	srnic_resp_room_for_read(qp);
	list_add_tail(&job->list, &resp->reads);
	resp->nreads++;
	return SRNIC_RESP_DONE;
}

static enum srnic_resp_verdict srnic_resp_atomic(struct srnic_qp *qp,
						 struct srnic_pkt *pkt,
						 struct srnic_pkt *reply)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_resp *resp = &qp->resp;
	struct srnic_atomic_res *res;
	enum srnic_resp_verdict v;
	struct srnic_mr *mr;
	u64 orig, val, addr;
	int err;

	if (pkt->va & 7)
		return SRNIC_RESP_ERR_ALIGN;
	v = srnic_resp_rkey(qp, pkt->rkey, pkt->va, sizeof(u64),
			    IB_ACCESS_REMOTE_ATOMIC, &mr, &addr);
	if (v)
		return v;

	spin_lock(&sdev->atomic_lock);
	err = srnic_mr_copy(mr, addr, &orig, sizeof(orig), false);
	if (!err) {
		if (pkt->opcode == SRNIC_OP_COMPARE_SWAP)
			val = orig == pkt->compare ? pkt->swap_add : orig;
		else
			val = orig + pkt->swap_add;
		err = srnic_mr_copy(mr, addr, &val, sizeof(val), true);
	}
	spin_unlock(&sdev->atomic_lock);
	srnic_mr_put(mr);
	if (err)
		return SRNIC_RESP_ERR_REMAPPED;

	if (resp->nares) {
		res = &resp->ares[resp->ares_next];
		resp->ares_next = (resp->ares_next + 1) % resp->nares;
		res->apsn = resp->apsn;
		res->orig = orig;
		res->valid = true;
	}
	reply->opcode = SRNIC_OP_ATOMIC_ACKNOWLEDGE;
	reply->syndrome = SRNIC_AETH_ACK | SRNIC_AETH_NO_CREDIT;
	reply->orig = orig;
	return SRNIC_RESP_DONE;
}

/* A request with a PSN already executed. */
static enum srnic_resp_verdict srnic_resp_duplicate(struct srnic_qp *qp,
						    struct srnic_pkt *pkt,
						    struct sk_buff_head *out)
{
	struct srnic_resp *resp = &qp->resp;
	enum srnic_resp_verdict v;
	struct srnic_pkt ack = {};
	u64 apsn;
	u32 i;

	srnic_counter_inc(to_sdev(qp->ibqp.device), SRNIC_CNT_DUP_REQ);
	switch (pkt->opcode) {
	case SRNIC_OP_READ_REQUEST:
		/*
		 * The requester went back to this PSN: everything it still
		 * needs is at or after it and will be asked for again, so
		 * responses still queued from here on are dropped rather
		 * than sent twice.
		 * The answer is regenerated from memory, the R_Key checked
		 * again: if it was invalidated meanwhile, the requester gets
		 * the remote access error NAK, not silence.
		 */
		srnic_resp_drop_reads(qp, pkt->psn, false);
		v = srnic_resp_read(qp, pkt);
		if (v != SRNIC_RESP_DONE)
			return v;
		/* Queued again (the PSNs were taken the first time). */
		srnic_req_kick(qp);
		return SRNIC_RESP_OK;
	case SRNIC_OP_COMPARE_SWAP:
	case SRNIC_OP_FETCH_ADD:
		/*
		 * Never executed twice: the recorded result is replayed.
		 * (The loop is bounded by max_dest_rd_atomic.)
		 */
		apsn = resp->apsn + srnic_psn_diff(pkt->psn, resp->epsn);
		for (i = 0; i < resp->nares; i++) {
			struct srnic_atomic_res *res = &resp->ares[i];

			if (!res->valid || res->apsn != apsn)
				continue;
			ack.opcode = SRNIC_OP_ATOMIC_ACKNOWLEDGE;
			ack.psn = pkt->psn;
			ack.syndrome = SRNIC_AETH_ACK | SRNIC_AETH_NO_CREDIT;
			ack.msn = resp->msn;
			ack.orig = res->orig;
			srnic_resp_small(qp, out, &ack);
			break;
		}
		break;
	case SRNIC_OP_ATOMIC_WRITE:
	case SRNIC_OP_FLUSH:
		/* Acknowledged again, never stored (or flushed) again. */
		srnic_resp_awrite_ack(qp, out, pkt->psn);
		break;
	default:
		/* Sends and Writes are acknowledged, not executed again. */
		if (pkt->ack_req)
			srnic_resp_ack(qp, out,
				       SRNIC_AETH_ACK | SRNIC_AETH_NO_CREDIT,
				       srnic_psn_add(resp->epsn, -1));
	}
	return SRNIC_RESP_OK;
}

static u32 srnic_read_npkts(struct srnic_qp *qp, u32 len)
{
	return max_t(u32, 1, DIV_ROUND_UP(len, qp->mtu));
}

/**
 * srnic_resp_rx() - a request packet for the responder
 * @qp: the QP
 * @pkt: the parsed packet (ICRC, lengths and QP checked)
 * @payload: its payload
 *
 * Context: softirq (receive path).
 */
void srnic_resp_rx(struct srnic_qp *qp, struct srnic_pkt *pkt,
		   const u8 *payload)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_resp *resp = &qp->resp;
	enum ib_qp_state state = READ_ONCE(qp->state);
	const struct srnic_resp_answer *answer;
	enum srnic_resp_verdict v = SRNIC_RESP_OK;
	u16 flags = pkt->info->flags;
	struct srnic_pkt reply = {};	/* opcode 0 is a request: none */
	struct sk_buff_head out;
	enum ib_event_type ev = 0;
	bool comm_est = false, read_now = false, failed = false;
	struct sk_buff *skb;

	/*
	 * A QP going to error (a completion was lost to a full CQ, a WQE
	 * failed) acknowledges nothing more: what it cannot complete, the
	 * requester must not believe delivered.
	 */
	if (state < IB_QPS_RTR || state == IB_QPS_ERR ||
	    READ_ONCE(qp->req.flushing))
		return;
	__skb_queue_head_init(&out);

	spin_lock_bh(&resp->lock);
	/* srnic_qp_error() flushed the queues meanwhile: take nothing. */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		goto out;
	switch (qp->xport->rx_check(qp, pkt, &out)) {
	case SRNIC_RX_NEW:
		break;
	case SRNIC_RX_DUP:
		v = srnic_resp_duplicate(qp, pkt, &out);
		if (v)
			goto verdict;	/* a Read whose R_Key died meanwhile */
		goto out;
	default:
		goto out;
	}
	/* The first packet in RTR establishes the connection (IBA 11.6.3). */
	if (unlikely(state == IB_QPS_RTR) && !resp->comm_est) {
		resp->comm_est = true;
		comm_est = true;
	}

	/* The opcode must continue the message in progress, or start one. */
	if (resp->in_op ? (flags & SRNIC_OPF_FIRST) || !(flags & resp->in_op) :
			  !(flags & SRNIC_OPF_FIRST))
		v = SRNIC_RESP_ERR_SEQUENCE;
	else if (flags & SRNIC_OPF_SEND)
		v = srnic_resp_send(qp, pkt, payload);
	else if (flags & SRNIC_OPF_FLUSH)
		v = srnic_resp_flush(qp, pkt, &reply);
	else if (flags & SRNIC_OPF_AWRITE)
		v = srnic_resp_atomic_write(qp, pkt, payload, &reply);
	else if (flags & SRNIC_OPF_WRITE)
		v = srnic_resp_write(qp, pkt, payload);
	else if (flags & SRNIC_OPF_READ)
		v = srnic_resp_read(qp, pkt);
	else if (flags & SRNIC_OPF_ATOMIC)
		v = srnic_resp_atomic(qp, pkt, &reply);
	else
		v = SRNIC_RESP_ERR_OPCODE;

verdict:
	switch (v) {
	case SRNIC_RESP_OK:
	case SRNIC_RESP_DONE:
		srnic_resp_advance(resp, flags & SRNIC_OPF_READ ?
				   srnic_read_npkts(qp, pkt->dma_len) : 1,
				   v == SRNIC_RESP_DONE);
		if (reply.opcode) {
			/* An atomic's, Atomic Write's or Flush's response. */
			reply.psn = pkt->psn;
			reply.msn = resp->msn;
			srnic_resp_small(qp, &out, &reply);
		} else if (!(flags & SRNIC_OPF_READ)) {
			qp->xport->rx_ack(qp, pkt, &out);
		} else {
			/* Answered here, or by the QP's round at its gate. */
			read_now = srnic_resp_read_now(qp, &out, &failed);
			if (failed)
				ev = IB_EVENT_QP_ACCESS_ERR;
		}
		break;
	case SRNIC_RESP_RNR:
		srnic_counter_inc(sdev, SRNIC_CNT_SEND_RNR);
		qp->xport->rx_rnr(qp, pkt, &out);
		break;
	default:
		answer = &srnic_resp_answers[v];
		if (!answer->syndrome)
			break;	/* dropped: the requester asks again */
		srnic_dbg_qp(qp, "PSN %#x opcode %#x: %s, NAK %#x\n", pkt->psn,
			     pkt->opcode, answer->name, answer->syndrome);
		srnic_resp_ack_how(qp, &out, answer->syndrome, pkt->psn, true);
		ev = answer->ev;
		break;
	}
out:
	spin_unlock_bh(&resp->lock);
	while ((skb = __skb_dequeue(&out)))
		srnic_xmit(qp, skb);
	if (read_now)
		srnic_resp_read_sent(qp);
	if (comm_est)
		srnic_qp_event(qp, IB_EVENT_COMM_EST);
	if (ev)
		srnic_qp_fail(qp, ev);
}

/**
 * srnic_resp_drop_state() - forget every message in progress
 * @qp: the QP
 *
 * Drops the queued responses and the Write in progress. (Nothing holds an
 * MR between packets, so no peer can delay a deregistration.)
 *
 * Context: under resp.lock.
 */
void srnic_resp_drop_state(struct srnic_qp *qp)
{
	struct srnic_resp *resp = &qp->resp;

	srnic_resp_drop_reads(qp, 0, true);
	resp->in_op = 0;
}

/**
 * srnic_resp_init() - the responder state of a new QP
 * @qp: the QP
 *
 * Context: process context.
 */
void srnic_resp_init(struct srnic_qp *qp)
{
	spin_lock_init(&qp->resp.lock);
	INIT_LIST_HEAD(&qp->resp.reads);
}

/**
 * srnic_resp_reset() - the responder back to its initial state
 * @qp: the QP
 *
 * Context: any; never sleeps.
 */
void srnic_resp_reset(struct srnic_qp *qp)
{
	struct srnic_resp *resp = &qp->resp;

	spin_lock_bh(&resp->lock);
	srnic_resp_drop_state(qp);
	resp->have_rwqe = false;
	resp->nak_sent = false;
	resp->ac.pending = 0;
	resp->sending = false;
	resp->msn = 0;
	resp->ares_next = 0;
	if (resp->ares)
		memset(resp->ares, 0, resp->nares * sizeof(*resp->ares));
	spin_unlock_bh(&resp->lock);
}

/**
 * srnic_resp_size_ares() - room for the results of @n atomics
 * @qp: the QP (RC)
 * @n: its max_dest_rd_atomic
 *
 * Context: process context, state_lock held.
 * Return: 0 or -ENOMEM.
 */
int srnic_resp_size_ares(struct srnic_qp *qp, u32 n)
{
	struct srnic_resp *resp = &qp->resp;
	struct srnic_atomic_res *ares, *old;

	n = max_t(u32, n, 1);
	if (n == resp->nares)
		return 0;
	ares = kcalloc(n, sizeof(*ares), GFP_KERNEL);
	if (!ares)
		return -ENOMEM;
	spin_lock_bh(&resp->lock);
	old = resp->ares;
	resp->ares = ares;
	resp->nares = n;
	resp->ares_next = 0;
	spin_unlock_bh(&resp->lock);
	kfree(old);
	return 0;
}
