// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the doorbell and the prefetch stage.
 *
 *   post_send (doorbell) --> prefetch work --> pool --> TX gate (srnic_gate.c)
 *
 * The doorbell only schedules the QP's prefetch work; kernel requests are
 * first written into the QP's ring exactly as librxe writes a user QP's,
 * and kernel receives into the receive ring the receive pipeline reads.
 * The prefetch work (the pipeline's workqueue) reads WQEs ahead of the
 * consumer index into the device's pool (srnic_prefetch.c): each ring
 * element is copied once, validated, and kept in kernel memory, then the
 * QP is woken at its gate.
 */
#include <linux/module.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "srnic.h"

static struct workqueue_struct *srnic_wq;

/**
 * srnic_tx_module_init() - create the pipeline's workqueue
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int srnic_tx_module_init(void)
{
	srnic_wq = alloc_workqueue("srnic", WQ_HIGHPRI, 0);
	return srnic_wq ? 0 : -ENOMEM;
}

/**
 * srnic_tx_module_exit() - destroy the pipeline's workqueue
 *
 * Context: module exit.
 */
void srnic_tx_module_exit(void)
{
	destroy_workqueue(srnic_wq);
}

/* The prefetch callback: one ring element, copied once, validated. */
static int srnic_pf_fetch_one(void *ctx, u32 index, void *slot)
{
	struct srnic_qp *qp = ctx;
	struct srnic_send_wqe *w = slot;
	int err;

	memcpy(qp->req.fetch_buf, srnic_queue_addr(&qp->sq.queue, index),
	       qp->req.fetch_size);
	err = srnic_wqe_from_user(&qp->req.lim, qp->req.fetch_buf, w);
	if (err)
		return err;
	/* UD: where to, copied now: the AH may go once the WQE is posted. */
	if (srnic_qp_is_ud(qp)) {
		err = srnic_ah_av(to_sdev(qp->ibqp.device), qp->ibqp.pd,
				  w->ah_num, &w->av);
		if (err)
			return err;
	}
	return (w->send_flags & IB_SEND_FENCE) ? 1 : 0;
}

/**
 * srnic_req_fetch() - read posted WQEs into the QP's share of the pool
 * @qp: the QP; it has no malformed WQE yet
 *
 * As far as the pool's policy lets it. A malformed WQE stops fetching
 * there: it completes in error when its turn comes.
 *
 * Context: under req.lock (the prefetch work, or the gate's engine when
 * the QP's share ran dry).
 * Return: the number fetched or -errno.
 */
int srnic_req_fetch(struct srnic_qp *qp)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	int n;

	n = srnic_pf_fetch(&sdev->pool, &qp->req.pfq,
			   srnic_queue_producer(&qp->sq.queue), qp->req.comp,
			   srnic_pf_fetch_one, qp);
	if (n < 0) {
		/*
		 * A malformed WQE, or a producer index moved back behind
		 * WQEs already read (-EPROTO): either way the QP fails at
		 * the fetch position, alone.
		 */
		qp->req.bad_wqe = true;
		qp->req.bad_index = qp->req.pfq.next;
		qp->req.ring_bad = n == -EPROTO;
		srnic_counter_inc(sdev, SRNIC_CNT_BAD_WQE);
		srnic_dbg_qp(qp, "%s at %u: %d\n", n == -EPROTO ?
			     "send ring producer index went back" :
			     "malformed WQE", qp->req.bad_index, n);
	}
	return n;
}

/**
 * srnic_req_ring_check() - fail a QP whose send ring went inconsistent
 * @qp: the QP
 *
 * At once, alone, with an affiliated asynchronous error.
 *
 * Context: softirq or process context; no lock of the QP held.
 * Return: true if it failed the QP.
 */
bool srnic_req_ring_check(struct srnic_qp *qp)
{
	bool bad;

	if (likely(!READ_ONCE(qp->req.ring_bad)))
		return false;
	spin_lock_bh(&qp->req.lock);
	bad = qp->req.ring_bad;
	qp->req.ring_bad = false;
	spin_unlock_bh(&qp->req.lock);
	if (bad)
		srnic_qp_fail(qp, IB_EVENT_QP_FATAL);
	return bad;
}

static void srnic_pf_work(struct work_struct *work)
{
	struct srnic_qp *qp = container_of(work, struct srnic_qp, req.pf_work);
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool wake;
	int n;

	if (READ_ONCE(qp->dead))
		return;
	if (state == IB_QPS_ERR) {
		srnic_qp_error(qp);
		return;
	}
	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return;

	spin_lock_bh(&qp->req.lock);
	if (qp->req.bad_wqe || qp->req.flushing) {
		spin_unlock_bh(&qp->req.lock);
		return;
	}
	n = srnic_req_fetch(qp);
	/*
	 * Wake the engine for what was fetched, and when the QP has nothing
	 * fetched at all (the pool is exhausted: it must ask again). A QP
	 * that fetched nothing because it is at its own limit (cap,
	 * lookahead, a blocked fence) has nothing new to send: waking it
	 * would bounce between this work and the engine until the limit
	 * lifts, burning the CPU other QPs need.
	 */
	wake = n != 0 ||
	       (!READ_ONCE(qp->req.pfq.count) && srnic_pf_pending(qp));
	spin_unlock_bh(&qp->req.lock);
	if (srnic_req_ring_check(qp))
		return;
	if (wake)
		srnic_req_kick(qp);
}

/**
 * srnic_pf_pending() - is there posted work the prefetcher has not read?
 * @qp: the QP
 *
 * Context: under req.lock.
 * Return: true if the ring holds WQEs past the fetch position (and none
 * of them was malformed).
 */
bool srnic_pf_pending(struct srnic_qp *qp)
{
	u32 prod = srnic_queue_producer(&qp->sq.queue);

	return !qp->req.bad_wqe &&
	       READ_ONCE(qp->req.pfq.next) != (prod & qp->sq.queue.index_mask);
}

/**
 * srnic_doorbell_init() - a new QP's prefetch work
 * @qp: the QP
 *
 * Context: process context.
 */
void srnic_doorbell_init(struct srnic_qp *qp)
{
	INIT_WORK(&qp->req.pf_work, srnic_pf_work);
}

/* Write one kernel work request into the send ring. */
static int srnic_post_one(struct srnic_qp *qp, const struct ib_send_wr *wr)
{
	struct srnic_wq *sq = &qp->sq;
	struct rxe_send_wqe *u;
	u32 i, len = 0;

	if (unlikely(wr->num_sge < 0 || wr->num_sge > sq->max_sge))
		return -EINVAL;
	/*
	 * No kernel user posts Atomic Write or Flush: struct ib_send_wr has
	 * no place for their data or their placement type.
	 */
	if (unlikely(wr->opcode == SRNIC_WR_ATOMIC_WRITE ||
		     wr->opcode == SRNIC_WR_FLUSH))
		return -EOPNOTSUPP;
	if (unlikely(srnic_queue_full(&sq->queue)))
		return -ENOMEM;

	u = srnic_queue_addr(&sq->queue, srnic_queue_producer(&sq->queue));
	memset(u, 0, sizeof(*u));
	u->wr.wr_id = wr->wr_id;
	u->wr.opcode = wr->opcode;
	u->wr.send_flags = wr->send_flags;
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		u->wr.ex.imm_data = wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		u->wr.ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		u->wr.wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		u->wr.wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		u->wr.wr.reg.mr = reg_wr(wr)->mr;
		u->wr.wr.reg.key = reg_wr(wr)->key;
		u->wr.wr.reg.access = reg_wr(wr)->access;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		u->wr.wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		u->wr.wr.atomic.rkey = atomic_wr(wr)->rkey;
		u->wr.wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		u->wr.wr.atomic.swap = atomic_wr(wr)->swap;
		break;
	default:
		break;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		u8 *p = u->dma.inline_data;

		for (i = 0; i < wr->num_sge; i++) {
			u32 n = wr->sg_list[i].length;

			if (len + n > sq->max_inline)
				return -EINVAL;
			memcpy(p + len, (void *)(uintptr_t)wr->sg_list[i].addr,
			       n);
			len += n;
		}
	} else {
		for (i = 0; i < wr->num_sge; i++) {
			u->dma.sge[i].addr = wr->sg_list[i].addr;
			u->dma.sge[i].length = wr->sg_list[i].length;
			u->dma.sge[i].lkey = wr->sg_list[i].lkey;
			len += wr->sg_list[i].length;
		}
		u->dma.num_sge = wr->num_sge;
	}
	if (srnic_qp_is_ud(qp)) {
		u->wr.wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		u->wr.wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
		u->wr.wr.ud.ah_num = to_sah(ud_wr(wr)->ah)->ah_num;
	}
	u->dma.length = len;
	u->dma.resid = len;
	srnic_queue_advance_producer(&sq->queue);
	return 0;
}

/**
 * srnic_req_doorbell() - schedule the prefetch stage
 * @qp: the QP
 *
 * Context: any.
 */
void srnic_req_doorbell(struct srnic_qp *qp)
{
	queue_work(srnic_wq, &qp->req.pf_work);
}

/*
 * Nothing of the QP in flight: nothing fetched, nothing issued and
 * unsent, nothing unacknowledged, the prefetch work not pending. Read
 * without req.lock it is a hint; under it, the answer.
 */
static bool srnic_req_quiet(const struct srnic_req *req)
{
	return READ_ONCE(req->cur) == READ_ONCE(req->issue) &&
	       READ_ONCE(req->una) == READ_ONCE(req->max_psn) &&
	       !READ_ONCE(req->pfq.count) && !work_pending(&req->pf_work);
}

/*
 * The doorbell of a QP with nothing in flight (srnic_req_quiet()): no
 * other stage holds work of it, so handing the WQEs to the prefetch work would
 * only add a kworker's wake-up, a context switch away from the poster.
 * The doorbell runs the prefetch stage itself, once, and, if the first
 * WQE is a small message (at most the device's doorbell_run_max bytes),
 * the QP's first gate round on this CPU if its gate is idle
 * (srnic_gate_serve_now()), else wakes it there. A larger message goes
 * to the gate's engine without running here (srnic_req_kick_later()):
 * the poster does not wait for its transfer. What the pool's limits
 * leave unread the round hands to the work, as always. Under load every
 * doorbell goes to the work. Returns false if it did not run (the caller
 * queues the work).
 */
static bool srnic_doorbell_idle(struct srnic_qp *qp)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;
	bool idle, wake = false, small = true;
	const struct srnic_send_wqe *w;
	int n = 0;

	if (irqs_disabled() || in_hardirq())
		return false;
	/*
	 * A busy QP's doorbell goes to the work without taking req.lock: its
	 * spin_unlock_bh() would run this CPU's pending softirqs (the
	 * traffic of every QP) in the poster's system call, up to 2 ms a
	 * doorbell under load. The unlocked look is a hint; idleness is
	 * decided under the lock.
	 */
	if (!srnic_req_quiet(req))
		return false;
	spin_lock_bh(&req->lock);
	idle = READ_ONCE(qp->state) == IB_QPS_RTS && !req->bad_wqe &&
	       !req->flushing && srnic_req_quiet(req);
	if (idle) {
		n = srnic_req_fetch(qp);
		wake = n != 0 ||
		       (!READ_ONCE(req->pfq.count) && srnic_pf_pending(qp));
		if (n > 0) {
			w = srnic_pf_head(&sdev->pool, &req->pfq,
					  srnic_queue_producer(&qp->sq.queue));
			small = w && w->length <= READ_ONCE(sdev->doorbell_run_max);
		}
	}
	spin_unlock_bh(&req->lock);
	if (!idle)
		return false;
	srnic_counter_inc(sdev, SRNIC_CNT_DOORBELL_FETCH);
	if (srnic_req_ring_check(qp))
		return true;
	if (!wake)
		return true;
	if (!small)
		srnic_req_kick_later(qp);
	else if (!srnic_gate_serve_now(qp))
		srnic_req_kick(qp);
	return true;
}

/**
 * srnic_post_send() - the send doorbell
 * @ibqp: the QP
 * @wr: work requests (kernel QPs), or none (librxe's doorbell: the
 *	process wrote the ring itself)
 * @bad_wr: the first request not posted
 *
 * Kernel requests are written into the QP's ring, exactly as librxe
 * writes a user QP's. Either way the doorbell schedules the prefetch
 * stage, or, for a QP with nothing in flight, runs it and wakes the QP at
 * its gate (srnic_doorbell_idle()): no packet is built in the caller's
 * context unless the QP's gate engine runs on this CPU when bottom halves
 * come back on.
 *
 * Context: any, never sleeps, for kernel QPs; process context for user
 * QPs (a refused doorbell takes state_lock to discard what it covered).
 * Return: 0, -EINVAL (QP not ready to send, bad request), -ENOMEM (ring
 * full), -EOPNOTSUPP (an operation kernel users cannot post).
 */
int srnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct srnic_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;
	int err = 0;

	if (unlikely(state < IB_QPS_RTS)) {
		*bad_wr = wr;
		if (qp->is_user) {
			/* librxe's doorbell: the WQEs are in the ring. */
			mutex_lock(&qp->state_lock);
			if (READ_ONCE(qp->state) < IB_QPS_RTS)
				srnic_req_discard(qp);
			mutex_unlock(&qp->state_lock);
		}
		return -EINVAL;
	}
	if (!qp->is_user) {
		spin_lock_irqsave(&qp->sq.lock, flags);
		for (; wr; wr = wr->next) {
			err = srnic_post_one(qp, wr);
			if (err) {
				*bad_wr = wr;
				break;
			}
		}
		spin_unlock_irqrestore(&qp->sq.lock, flags);
	}
	if (!srnic_doorbell_idle(qp))
		srnic_req_doorbell(qp);
	return err;
}

/**
 * srnic_wq_post_recv() - write one receive WQE into a kernel ring
 * @wq: the RQ or SRQ; caller holds @wq->lock
 * @wr: the request
 *
 * Context: any; never sleeps.
 * Return: 0, -EINVAL for too many SGEs, -ENOMEM if the ring is full.
 */
int srnic_wq_post_recv(struct srnic_wq *wq, const struct ib_recv_wr *wr)
{
	struct rxe_recv_wqe *wqe;
	u32 length = 0;
	int i;

	if (unlikely(wr->num_sge < 0 || wr->num_sge > wq->max_sge))
		return -EINVAL;
	if (unlikely(srnic_queue_full(&wq->queue)))
		return -ENOMEM;

	wqe = srnic_queue_addr(&wq->queue, srnic_queue_producer(&wq->queue));
	wqe->wr_id = wr->wr_id;
	wqe->dma.num_sge = wr->num_sge;
	wqe->dma.cur_sge = 0;
	wqe->dma.sge_offset = 0;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->dma.sge[i].addr = wr->sg_list[i].addr;
		wqe->dma.sge[i].length = wr->sg_list[i].length;
		wqe->dma.sge[i].lkey = wr->sg_list[i].lkey;
		length += wr->sg_list[i].length;
	}
	wqe->dma.length = length;
	wqe->dma.resid = length;
	srnic_queue_advance_producer(&wq->queue);
	return 0;
}

/**
 * srnic_post_recv() - post receive WQEs on a kernel QP
 * @ibqp: the QP; user QPs post into their mapped ring directly
 * @wr: the requests
 * @bad_wr: the first request not posted
 *
 * Receives can be posted in every state but RESET; they wait in the ring
 * for the receive pipeline.
 *
 * Context: any; never sleeps.
 * Return: 0 or -errno.
 */
int srnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct srnic_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (unlikely(qp->is_user || qp->srq)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (unlikely(READ_ONCE(qp->state) == IB_QPS_RESET)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = srnic_wq_post_recv(&qp->rq, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	/* In the error state receives complete at once, flushed. */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		srnic_req_doorbell(qp);
	return err;
}

/**
 * srnic_post_srq_recv() - post receive WQEs on a kernel SRQ
 * @ibsrq: the SRQ; user SRQs post into their mapped ring directly
 * @wr: the requests
 * @bad_wr: the first request not posted
 *
 * Context: any; never sleeps.
 * Return: 0 or -errno.
 */
int srnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct srnic_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (unlikely(srq->is_user)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = srnic_wq_post_recv(&srq->rq, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return err;
}
