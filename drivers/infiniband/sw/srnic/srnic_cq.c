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
 *
 * The pipeline completes work through one helper per meaning: a send
 * queue completion (srnic_wc_send), a receive completion (srnic_wc_recv,
 * srnic_wc_recv_err) and a flush (srnic_wc_flush_sq, srnic_wc_flush_rq).
 */
#include <linux/etherdevice.h>

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

/* What libibverbs reads in ibv_wc.wc_flags (enum ibv_wc_flags). */
#define SRNIC_UWC_GRH		BIT(0)
#define SRNIC_UWC_WITH_IMM	BIT(1)
#define SRNIC_UWC_WITH_INV	BIT(3)
/* ibv_wc.sl of a RoCEv2 datagram over IPv4 (mlx5's packet type 2). */
#define SRNIC_UWC_SL_ROCE_IPV4	2

static enum ib_wc_opcode srnic_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case SRNIC_WR_ATOMIC_WRITE:
		return (enum ib_wc_opcode)SRNIC_WC_ATOMIC_WRITE;
	case SRNIC_WR_FLUSH:
		return (enum ib_wc_opcode)SRNIC_WC_FLUSH;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

/*
 * The fields every completion has, in the CQ's format: struct
 * ib_uverbs_wc (what librxe reads) for a user CQ, struct ib_wc for a
 * kernel one.
 */
static void srnic_cqe_init(union srnic_cqe *cqe, const struct srnic_cq *cq,
			   struct srnic_qp *qp, u64 wr_id,
			   enum ib_wc_status status, enum ib_wc_opcode op,
			   u32 byte_len)
{
	memset(cqe, 0, sizeof(*cqe));
	if (cq->is_user) {
		cqe->uwc.wr_id = wr_id;
		cqe->uwc.status = status;
		cqe->uwc.opcode = op;
		cqe->uwc.byte_len = byte_len;
		cqe->uwc.qp_num = qp->ibqp.qp_num;
		cqe->uwc.port_num = 1;
	} else {
		cqe->ibwc.wr_id = wr_id;
		cqe->ibwc.status = status;
		cqe->ibwc.opcode = op;
		cqe->ibwc.byte_len = byte_len;
		cqe->ibwc.qp = &qp->ibqp;
		cqe->ibwc.port_num = 1;
	}
}

/* Publish a QP's completion; if the CQ overflowed, the QP goes to error. */
static bool srnic_wc_post(struct srnic_qp *qp, struct srnic_cq *cq,
			  const union srnic_cqe *cqe, bool solicited)
{
	if (srnic_cq_post(cq, cqe, solicited)) {
		/* Completions would be lost: the QP goes to error. */
		WRITE_ONCE(qp->req.flushing, true);
		srnic_req_kick(qp);
		return false;
	}
	return true;
}

/**
 * srnic_wc_send() - a send queue completion
 * @qp: the QP
 * @wr_id: the WQE's cookie
 * @status: IB_WC_*
 * @wr_opcode: the WQE's opcode (IB_WR_*), which names the completion's
 * @byte_len: the requested length
 *
 * Context: any; never sleeps.
 * Return: true if posted, false if the send CQ was full (the QP goes to
 * error).
 */
bool srnic_wc_send(struct srnic_qp *qp, u64 wr_id, enum ib_wc_status status,
		   u32 wr_opcode, u32 byte_len)
{
	struct srnic_cq *cq = to_scq(qp->ibqp.send_cq);
	union srnic_cqe cqe;

	srnic_cqe_init(&cqe, cq, qp, wr_id, status, srnic_wc_opcode(wr_opcode),
		       byte_len);
	return srnic_wc_post(qp, cq, &cqe, false);
}

/**
 * srnic_wc_flush_sq() - a send WQE flushed by a QP in error
 * @qp: the QP
 * @wr_id: the WQE's cookie
 * @wr_opcode: its opcode (IB_WR_*)
 *
 * Context: any; never sleeps.
 */
void srnic_wc_flush_sq(struct srnic_qp *qp, u64 wr_id, u32 wr_opcode)
{
	srnic_wc_send(qp, wr_id, IB_WC_WR_FLUSH_ERR, wr_opcode, 0);
}

/**
 * srnic_wc_recv() - a receive completion
 * @qp: the QP whose receive WQE (its own or its SRQ's) completes
 * @wr_id: the receive WQE's cookie
 * @status: IB_WC_*
 * @rwc: what the message was: opcode, length, immediate data or
 *	invalidated key, solicited event, a datagram's source
 *
 * A datagram's completion (@rwc->src) says IB_WC_GRH (the buffer starts
 * with the network header) and its source QP, and for kernel consumers
 * (the MAD layer builds its reply's address from them) the network
 * header type and source MAC.
 *
 * Context: any; never sleeps.
 * Return: true if posted, false if the receive CQ was full (it is lost,
 * the QP goes to error: the caller must not report the message as
 * delivered).
 */
bool srnic_wc_recv(struct srnic_qp *qp, u64 wr_id, enum ib_wc_status status,
		   const struct srnic_recv_wc *rwc)
{
	struct srnic_cq *cq = to_scq(qp->ibqp.recv_cq);
	const struct srnic_wc_src *src = rwc->src;
	union srnic_cqe cqe;

	srnic_cqe_init(&cqe, cq, qp, wr_id, status, rwc->op, rwc->byte_len);
	if (cq->is_user) {
		struct ib_uverbs_wc *uwc = &cqe.uwc;

		uwc->src_qp = src ? src->qpn : qp->dest_qpn;
		if (rwc->flags & IB_WC_WITH_IMM) {
			uwc->ex.imm_data = rwc->imm;
			uwc->wc_flags |= SRNIC_UWC_WITH_IMM;
		}
		if (rwc->flags & IB_WC_WITH_INVALIDATE) {
			uwc->ex.invalidate_rkey = rwc->inv_rkey;
			uwc->wc_flags |= SRNIC_UWC_WITH_INV;
		}
		if (src) {
			uwc->wc_flags |= SRNIC_UWC_GRH;
			/*
			 * RoCE has no service level: the field says what the
			 * GRH area holds, as mlx5 reports it (2: an IPv4
			 * header at byte 20). UCX before 1.19 reads it so,
			 * and without it drops every IPv4 datagram as
			 * addressed to a foreign GID.
			 */
			if (src->network_type == RDMA_NETWORK_IPV4)
				uwc->sl = SRNIC_UWC_SL_ROCE_IPV4;
		}
	} else {
		struct ib_wc *wc = &cqe.ibwc;

		wc->src_qp = src ? src->qpn : qp->dest_qpn;
		wc->wc_flags = rwc->flags;
		if (rwc->flags & IB_WC_WITH_IMM)
			wc->ex.imm_data = rwc->imm;
		if (rwc->flags & IB_WC_WITH_INVALIDATE)
			wc->ex.invalidate_rkey = rwc->inv_rkey;
		if (src) {
			wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
			wc->network_hdr_type = src->network_type;
			if (src->has_smac) {
				ether_addr_copy(wc->smac, src->smac);
				wc->wc_flags |= IB_WC_WITH_SMAC;
			}
		}
	}
	return srnic_wc_post(qp, cq, &cqe, rwc->solicited);
}

/**
 * srnic_wc_recv_err() - a receive WQE that completes in error
 * @qp: the QP
 * @wr_id: the receive WQE's cookie
 * @status: the error (IB_WC_LOC_LEN_ERR, IB_WC_LOC_PROT_ERR, ...)
 * @byte_len: bytes placed before the error
 *
 * Context: any; never sleeps.
 * Return: true if posted, false if the receive CQ was full.
 */
bool srnic_wc_recv_err(struct srnic_qp *qp, u64 wr_id,
		       enum ib_wc_status status, u32 byte_len)
{
	const struct srnic_recv_wc rwc = {
		.op = IB_WC_RECV,
		.byte_len = byte_len,
	};

	return srnic_wc_recv(qp, wr_id, status, &rwc);
}

/**
 * srnic_wc_flush_rq() - a receive WQE flushed by a QP in error
 * @qp: the QP
 * @wr_id: the receive WQE's cookie
 *
 * Context: any; never sleeps.
 */
void srnic_wc_flush_rq(struct srnic_qp *qp, u64 wr_id)
{
	srnic_wc_recv_err(qp, wr_id, IB_WC_WR_FLUSH_ERR, 0);
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
