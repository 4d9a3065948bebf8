// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: completion queues.
 *
 * A CQ is a ring of CQEs. For a user CQ the ring is mapped by the process
 * and polled by librxe without a system call; a kernel CQ is polled through
 * poll_cq. srnic_cq_post() is the one place a CQE is published, and it is
 * where the ordering contract is kept: every store the caller made before
 * (payload placed into memory regions) is ordered before the CQE stores by
 * dma_wmb(), and the CQE stores before the producer index by its release
 * store. A consumer that sees the index sees the CQE and the data.
 */
#include "srnic.h"

static int srnic_cq_check_cqe(struct srnic_dev *sdev, int cqe)
{
	if (cqe <= 0 || cqe > sdev->attr.max_cqe) {
		srnic_dbg(sdev, "cqe %d outside 1..%d\n", cqe,
			  sdev->attr.max_cqe);
		return -EINVAL;
	}
	return 0;
}

/**
 * srnic_create_cq() - create a completion queue
 * @ibcq: the CQ (allocated by the core)
 * @attr: cqe count, flags, completion vector
 * @uattrs: for a user CQ, receives the ring's mmap cookie
 *
 * Context: process context.
 * Return: 0 or -errno.
 */
int srnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct srnic_cq_uarg *uattrs)
{
	struct ib_udata *udata = srnic_cq_udata(uattrs);
	struct srnic_dev *sdev = to_sdev(ibcq->device);
	struct srnic_cq *cq = to_scq(ibcq);
	struct rxe_create_cq_resp resp = {};
	u32 num = attr->cqe;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->comp_vector >= sdev->ibdev.num_comp_vectors)
		return -EINVAL;
	err = srnic_cq_check_cqe(sdev, attr->cqe);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!srnic_obj_get(&sdev->n_cq, sdev->attr.max_cq))
		return -ENOMEM;

	spin_lock_init(&cq->lock);
	cq->is_user = !!udata;
	err = srnic_queue_init(&cq->queue, &num, sizeof(union srnic_cqe),
			       udata ? SRNIC_QUEUE_TO_USER :
				       SRNIC_QUEUE_KERNEL);
	if (err)
		goto out_put;
	if (udata) {
		err = srnic_queue_publish(&cq->queue, srnic_udata_uctx(udata),
					  &resp.mi);
		if (err)
			goto out_queue;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto out_queue;
	}
	ibcq->cqe = num;
	return 0;

out_queue:
	srnic_queue_cleanup(&cq->queue);
out_put:
	srnic_obj_put(&sdev->n_cq);
	return err;
}

/**
 * srnic_destroy_cq() - destroy a completion queue
 * @ibcq: the CQ; the core guarantees no QP uses it
 * @udata: unused
 *
 * Context: process context.
 * Return: 0.
 */
int srnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct srnic_cq *cq = to_scq(ibcq);

	srnic_queue_cleanup(&cq->queue);
	srnic_obj_put(&to_sdev(ibcq->device)->n_cq);
	return 0;
}

/* A send WQE posted to @qp has not completed yet. */
static bool srnic_cq_sq_pending(struct srnic_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	const struct srnic_queue *q = &qp->sq.queue;

	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return false;
	return (srnic_queue_producer(q) - READ_ONCE(qp->req.comp)) &
	       q->index_mask;
}

/*
 * Before a CQ shrinks, the send queues it completes for get a moment (at
 * most SRNIC_CQ_SETTLE_MS) to complete what was posted before the call
 * (a UD Send completes as it leaves): completions already on their way
 * count as being on the CQ, as on a NIC that completes at once. The scan
 * is bounded by the device's QPs, in process context.
 */
#define SRNIC_CQ_SETTLE_MS	200

static void srnic_cq_settle(struct srnic_dev *sdev, struct srnic_cq *cq)
{
	unsigned long end = jiffies + msecs_to_jiffies(SRNIC_CQ_SETTLE_MS);
	struct srnic_qp *qp;
	unsigned long i;
	bool busy;

	for (;;) {
		busy = false;
		/* QP destroy waits for RCU readers after erasing. */
		rcu_read_lock();
		xa_for_each(&sdev->qp_xa, i, qp) {
			if (qp->ibqp.send_cq == &cq->ibcq &&
			    srnic_cq_sq_pending(qp)) {
				busy = true;
				break;
			}
		}
		rcu_read_unlock();
		if (!busy || time_after(jiffies, end))
			return;
		usleep_range(500, 1000);
	}
}

/**
 * srnic_resize_cq() - change the number of CQEs
 * @ibcq: the CQ
 * @cqe: new minimum capacity; must hold the CQEs present
 * @udata: for a user CQ, receives the new ring's mmap cookie; librxe
 *	unmaps the old ring and maps the new one
 *
 * Context: process context.
 * Return: 0 or -errno.
 */
int srnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibcq->device);
	struct srnic_cq *cq = to_scq(ibcq);
	struct rxe_resize_cq_resp __user *uresp = udata ? udata->outbuf : NULL;
	u32 num = cqe;
	int err;

	err = srnic_cq_check_cqe(sdev, cqe);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(*uresp))
		return -EINVAL;
	if (num < ibcq->cqe)
		srnic_cq_settle(sdev, cq);
	err = srnic_queue_resize(&cq->queue, &cq->lock, &num,
				 udata ? srnic_udata_uctx(udata) : NULL,
				 uresp ? &uresp->mi : NULL);
	if (err)
		return err;
	ibcq->cqe = num;
	return 0;
}

/**
 * srnic_cq_post() - publish one completion
 * @cq: the CQ
 * @cqe: the completion, in the CQ's format (uwc for user CQs)
 * @solicited: the completed message asked for a solicited event
 *
 * The ordering contract: stores the caller made before this call (placed
 * payload) → dma_wmb() → CQE stores → release store of the producer
 * index → completion event. A CQ that overruns reports IB_EVENT_CQ_ERR
 * and the completion is lost; the caller moves the QP to error.
 *
 * Context: any (softirq from the pipeline); never sleeps.
 * Return: 0, or -EOVERFLOW if the CQ was full.
 */
int srnic_cq_post(struct srnic_cq *cq, const union srnic_cqe *cqe,
		  bool solicited)
{
	unsigned long flags;
	bool notify = false;

	/* Placed payload before the CQE that announces it. */
	dma_wmb();

	spin_lock_irqsave(&cq->lock, flags);
	if (unlikely(srnic_queue_full(&cq->queue))) {
		bool first = !cq->overflow;

		cq->overflow = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (first && cq->ibcq.event_handler) {
			struct ib_event ev = {
				.device = cq->ibcq.device,
				.element.cq = &cq->ibcq,
				.event = IB_EVENT_CQ_ERR,
			};

			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		}
		return -EOVERFLOW;
	}
	memcpy(srnic_queue_addr(&cq->queue, srnic_queue_producer(&cq->queue)),
	       cqe, sizeof(*cqe));
	srnic_queue_advance_producer(&cq->queue);
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}

/**
 * srnic_poll_cq() - take completions from a kernel CQ
 * @ibcq: the CQ
 * @num_entries: room in @wc
 * @wc: filled in
 *
 * Context: any; never sleeps.
 * Return: the number of completions taken, or -EINVAL for a user CQ
 * (librxe polls the mapped ring itself).
 */
int srnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct srnic_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int n = 0;

	if (cq->is_user)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && !srnic_queue_empty(&cq->queue)) {
		const union srnic_cqe *cqe;

		cqe = srnic_queue_addr(&cq->queue,
				       srnic_queue_consumer(&cq->queue));
		wc[n++] = cqe->ibwc;
		srnic_queue_advance_consumer(&cq->queue);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * srnic_req_notify_cq() - arm the completion event
 * @ibcq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, optionally
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * Context: any; never sleeps.
 * Return: 1 if missed events were asked for and the CQ is not empty,
 * else 0.
 */
int srnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct srnic_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* IB_CQ_NEXT_COMP covers the solicited ones too. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    !srnic_queue_empty(&cq->queue))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
