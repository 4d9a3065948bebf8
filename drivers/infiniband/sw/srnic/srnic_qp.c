// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: queue pairs: creation with rings in librxe's layout, the state
 * machine with attribute validation, query and destroy, and posting
 * receives for kernel QPs.
 */
#include <kunit/visibility.h>

#include "srnic.h"
#include "srnic_transport.h"

/* Access rights a QP can grant to remote requests. */
/*
 * The remote rights a QP may grant. Both Flush rights are accepted: the
 * connection manager grants both whenever the device offers either
 * (cm_init_qp_init_attr()); a persistent Flush still fails, at the key,
 * since no srnic MR has IB_ACCESS_FLUSH_PERSISTENT.
 */
#define SRNIC_QP_ACCESS_FLAGS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			       SRNIC_ACCESS_FLUSH_GLOBAL | \
			       SRNIC_ACCESS_FLUSH_PERSISTENT)

/* Attributes srnic does not implement: alternate paths, resizing, rate. */
#define SRNIC_QP_UNSUPPORTED_MASK (IB_QP_ALT_PATH | IB_QP_CAP | \
				   IB_QP_RATE_LIMIT)

static int srnic_qp_check_cap(struct srnic_dev *sdev,
			      const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > sdev->attr.max_qp_wr ||
	    cap->max_send_sge > sdev->attr.max_send_sge ||
	    cap->max_inline_data > SRNIC_MAX_INLINE) {
		srnic_dbg(sdev, "send queue caps %u/%u/%u over the limits\n",
			  cap->max_send_wr, cap->max_send_sge,
			  cap->max_inline_data);
		return -EINVAL;
	}
	if (init->srq)
		return 0;
	if (cap->max_recv_wr > sdev->attr.max_qp_wr ||
	    cap->max_recv_sge > sdev->attr.max_recv_sge) {
		srnic_dbg(sdev, "receive queue caps %u/%u over the limits\n",
			  cap->max_recv_wr, cap->max_recv_sge);
		return -EINVAL;
	}
	return 0;
}

/*
 * A send WQE is struct rxe_send_wqe followed by the SGE list, which
 * doubles as the inline data area, as in librxe.
 */
static int srnic_qp_init_sq(struct srnic_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 payload, num = max_t(u32, cap->max_send_wr, 1);
	int err;

	payload = max_t(u32, cap->max_send_sge * sizeof(struct rxe_sge),
			cap->max_inline_data);
	payload = max_t(u32, payload, sizeof(struct rxe_sge));
	err = srnic_queue_init(&qp->sq.queue, &num,
			       sizeof(struct rxe_send_wqe) + payload,
			       qp->is_user ? SRNIC_QUEUE_FROM_USER :
					     SRNIC_QUEUE_KERNEL);
	if (err)
		return err;
	spin_lock_init(&qp->sq.lock);
	qp->sq.max_wr = num;
	qp->sq.max_sge = payload / sizeof(struct rxe_sge);
	qp->sq.max_inline = payload;
	cap->max_send_wr = num;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	return 0;
}

static int srnic_qp_init_rq(struct srnic_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 sge = max_t(u32, cap->max_recv_sge, 1);
	u32 num = max_t(u32, cap->max_recv_wr, 1);
	int err;

	err = srnic_queue_init(&qp->rq.queue, &num,
			       sizeof(struct rxe_recv_wqe) +
			       sge * sizeof(struct rxe_sge),
			       qp->is_user ? SRNIC_QUEUE_FROM_USER :
					     SRNIC_QUEUE_KERNEL);
	if (err)
		return err;
	spin_lock_init(&qp->rq.lock);
	qp->rq.max_wr = num;
	qp->rq.max_sge = sge;
	cap->max_recv_wr = num;
	cap->max_recv_sge = sge;
	return 0;
}

static int srnic_qp_alloc_qpn(struct srnic_dev *sdev, struct srnic_qp *qp,
			      enum ib_qp_type type)
{
	u32 qpn;
	int err;

	if (type == IB_QPT_GSI) {
		/* One GSI QP per port, created by the MAD layer. */
		err = xa_insert_irq(&sdev->qp_xa, 1, qp, GFP_KERNEL);
		qpn = 1;
	} else {
		err = xa_alloc_cyclic_irq(&sdev->qp_xa, &qpn, qp,
					  XA_LIMIT(SRNIC_MIN_QPN, SRNIC_MAX_QPN),
					  &sdev->qpn_next, GFP_KERNEL);
		if (err > 0)
			err = 0;
	}
	if (err)
		return err == -EBUSY ? -EEXIST : err;
	qp->ibqp.qp_num = qpn;
	return 0;
}

/**
 * srnic_create_qp() - create a queue pair
 * @ibqp: the QP (allocated by the core; PD, CQs and SRQ set)
 * @init: type and capabilities; the capabilities are rounded up to what
 *	the rings provide and reported back
 * @udata: for a user QP, receives the rings' mmap cookies
 *
 * Context: process context.
 * Return: 0 or -errno: -EOPNOTSUPP for QP types and creation flags srnic
 * does not implement, -EINVAL for capabilities over the device limits,
 * -ENOMEM past max_qp.
 */
int srnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibqp->device);
	struct srnic_qp *qp = to_sqp(ibqp);
	struct rxe_create_qp_resp resp = {};
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata)
			return -EINVAL;
		break;
	default:
		srnic_dbg(sdev, "QP type %d not supported\n", init->qp_type);
		return -EOPNOTSUPP;
	}
	if (init->create_flags) {
		srnic_dbg(sdev, "create flags %#x not supported\n",
			  init->create_flags);
		return -EOPNOTSUPP;
	}
	if (init->port_num > 1 || !init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (init->srq && to_ssrq(init->srq)->is_user != !!udata)
		return -EINVAL;
	err = srnic_qp_check_cap(sdev, init);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	/* max_qp counts the consumers' QPs, not the core's GSI QP. */
	if (init->qp_type != IB_QPT_GSI &&
	    !srnic_obj_get(&sdev->n_qp, sdev->attr.max_qp))
		return -ENOMEM;

	mutex_init(&qp->state_lock);
	qp->state = IB_QPS_RESET;
	qp->is_user = !!udata;
	qp->srq = to_ssrq(init->srq);
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->port_num = 1;
	qp->path_mtu = IB_MTU_1024;
	qp->mtu = ib_mtu_enum_to_int(IB_MTU_1024);
	qp->ibqp.qp_type = init->qp_type;

	err = srnic_qp_init_sq(qp, init);
	if (err)
		goto out_put;
	if (qp->srq) {
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
	} else {
		err = srnic_qp_init_rq(qp, init);
		if (err)
			goto out_sq;
	}
	err = srnic_req_init(qp);
	if (err)
		goto out_rq;

	if (udata) {
		struct ib_ucontext *uctx = srnic_udata_uctx(udata);

		if (!qp->srq) {
			err = srnic_queue_publish(&qp->rq.queue, uctx,
						  &resp.rq_mi);
			if (err)
				goto out_req;
		}
		err = srnic_queue_publish(&qp->sq.queue, uctx, &resp.sq_mi);
		if (err)
			goto out_req;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto out_req;
	}

	err = srnic_qp_alloc_qpn(sdev, qp, init->qp_type);
	if (err)
		goto out_req;
	srnic_dbg_qp(qp, "created, type %d, sq %u x %u, rq %u x %u%s\n",
		     init->qp_type, qp->sq.max_wr, qp->sq.max_sge,
		     qp->rq.max_wr, qp->rq.max_sge, udata ? ", user" : "");
	return 0;

out_req:
	srnic_req_cleanup(qp);
out_rq:
	if (!qp->srq)
		srnic_queue_cleanup(&qp->rq.queue);
out_sq:
	srnic_queue_cleanup(&qp->sq.queue);
out_put:
	if (init->qp_type != IB_QPT_GSI)
		srnic_obj_put(&sdev->n_qp);
	return err;
}

/**
 * srnic_check_qp_attr() - validate a modify_qp request
 * @dattr: the device's attributes (limits)
 * @type: the QP type
 * @cur: the QP's current state
 * @attr: the attributes
 * @mask: which of them are set
 *
 * The state transition and the attribute mask are checked against the IBA
 * table (ib_modify_qp_is_ok()); then each attribute against its range and
 * the device limits. (The core has already masked PSNs to 24 bits and
 * resolved the source GID.)
 *
 * Context: any.
 * Return: 0, -EINVAL for an illegal request, -EOPNOTSUPP for an attribute
 * srnic does not implement.
 */
int srnic_check_qp_attr(const struct ib_device_attr *dattr,
			enum ib_qp_type type, enum ib_qp_state cur,
			const struct ib_qp_attr *attr, int mask)
{
	enum ib_qp_state new = (mask & IB_QP_STATE) ? attr->qp_state : cur;

	if ((mask & IB_QP_STATE) && attr->qp_state > IB_QPS_ERR)
		return -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	if (!ib_modify_qp_is_ok(cur, new, type, mask))
		return -EINVAL;
	if (mask & SRNIC_QP_UNSUPPORTED_MASK)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SRNIC_MAX_PKEYS)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SRNIC_QP_ACCESS_FLAGS))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && (attr->dest_qp_num & ~0xffffffU))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > dattr->max_qp_init_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > dattr->max_qp_rd_atom)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_check_qp_attr);

/* Caller holds qp->state_lock. */
static void srnic_qp_reset(struct srnic_qp *qp)
{
	/*
	 * The receive path drops packets in RESET; one already past its
	 * state check (under RCU) is done after this, and so is anything it
	 * started: then stop the pipeline.
	 */
	synchronize_net();
	srnic_qp_quiesce(qp);
	srnic_req_reset(qp);
	spin_lock_irq(&qp->sq.lock);
	srnic_queue_reset(&qp->sq.queue);
	spin_unlock_irq(&qp->sq.lock);
	if (!qp->srq) {
		spin_lock_irq(&qp->rq.lock);
		srnic_queue_reset(&qp->rq.queue);
		spin_unlock_irq(&qp->rq.lock);
	}
	spin_lock_bh(&qp->resp.lock);
	qp->resp.last_wqe = false;
	spin_unlock_bh(&qp->resp.lock);
	qp->av_valid = false;
}

/**
 * srnic_qp_event() - report an asynchronous event on a QP
 * @qp: the QP
 * @type: the event
 *
 * Nothing is reported for a QP being destroyed.
 *
 * Context: any; never sleeps (the core's and uverbs' handlers do not).
 */
void srnic_qp_event(struct srnic_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler && !READ_ONCE(qp->dead))
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/**
 * srnic_modify_qp() - change a QP's state and attributes
 * @ibqp: the QP
 * @attr: the attributes
 * @mask: which of them are set
 * @udata: librxe sends no driver data
 *
 * All-or-nothing: an invalid request changes nothing.
 *
 * Context: process context.
 * Return: 0 or -errno (see srnic_check_qp_attr()).
 */
int srnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibqp->device);
	struct srnic_qp *qp = to_sqp(ibqp);
	enum ib_qp_state old;
	struct srnic_av av;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	mutex_lock(&qp->state_lock);
	/*
	 * Only the error path changes the state behind state_lock (to ERR,
	 * from softirq): the transition below is made from this state or
	 * not at all.
	 */
	old = READ_ONCE(qp->state);
	err = srnic_check_qp_attr(&sdev->attr, ibqp->qp_type, old, attr, mask);
	if (!err && (mask & IB_QP_AV))
		err = srnic_av_from_attr(sdev, &av, &attr->ah_attr);
	if (err) {
		srnic_dbg_qp(qp, "modify from state %d, mask %#x refused: %d\n",
			     old, mask, err);
		goto out;
	}

	/* Room to replay as many atomics as the requester may send. */
	if (ibqp->qp_type == IB_QPT_RC &&
	    (mask & (IB_QP_STATE | IB_QP_MAX_DEST_RD_ATOMIC))) {
		err = srnic_resp_size_ares(qp, mask & IB_QP_MAX_DEST_RD_ATOMIC ?
					   attr->max_dest_rd_atomic :
					   qp->max_dest_rd_atomic);
		if (err)
			goto out;
	}

	if (mask & IB_QP_AV) {
		qp->av = av;
		qp->av_valid = true;
		dst_cache_reset(&qp->dst_cache);
	}
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn;
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn;
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PATH_MTU) {
		qp->path_mtu = attr->path_mtu;
		qp->mtu = ib_mtu_enum_to_int(attr->path_mtu);
	}
	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		qp->sqd_notify = attr->en_sqd_async_notify;

	if (mask & IB_QP_STATE) {
		enum ib_qp_state new = attr->qp_state;

		srnic_dbg_qp(qp, "state %d -> %d\n", old, new);
		if (new == IB_QPS_RESET)
			WRITE_ONCE(qp->state, new);
		if (new == IB_QPS_RESET && old != IB_QPS_RESET)
			srnic_qp_reset(qp);
		if (new == IB_QPS_RTR && old != IB_QPS_RTR) {
			spin_lock_bh(&qp->resp.lock);
			qp->resp.epsn = qp->rq_psn;
			qp->resp.apsn = 0;
			if (qp->resp.ares)
				memset(qp->resp.ares, 0, qp->resp.nares *
				       sizeof(*qp->resp.ares));
			qp->resp.msn = 0;
			qp->resp.comm_est = false;
			spin_unlock_bh(&qp->resp.lock);
		}
		if (new == IB_QPS_RTS && old == IB_QPS_RTR)
			srnic_req_start(qp);
		if (new == IB_QPS_RESET || new == IB_QPS_ERR) {
			WRITE_ONCE(qp->state, new);
		} else if (cmpxchg(&qp->state, old, new) != old) {
			/* It failed meanwhile: it stays in ERR, flushed. */
			srnic_dbg_qp(qp, "failed during the move to %d\n", new);
			err = -EINVAL;
			goto out;
		}
		if (new == IB_QPS_ERR && old != IB_QPS_ERR)
			srnic_qp_error(qp);
		if (new == IB_QPS_RTS && old != IB_QPS_RTS)
			srnic_req_kick(qp);
		/* Requests already issued go on; nothing new is issued. */
		if (new == IB_QPS_SQD && qp->sqd_notify)
			srnic_qp_event(qp, IB_EVENT_SQ_DRAINED);
	}
out:
	mutex_unlock(&qp->state_lock);
	return err;
}

/**
 * srnic_query_qp() - report a QP's attributes
 * @ibqp: the QP
 * @attr: filled in
 * @mask: ignored: every attribute is reported
 * @init: filled in with the creation attributes
 *
 * Context: process context.
 * Return: 0.
 */
int srnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct srnic_dev *sdev = to_sdev(ibqp->device);
	struct srnic_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	mutex_lock(&qp->state_lock);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = qp->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->rq_psn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access_flags;
	attr->pkey_index = qp->pkey_index;
	attr->port_num = qp->port_num;
	attr->en_sqd_async_notify = qp->sqd_notify;
	attr->sq_draining = 0;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	if (qp->av_valid)
		srnic_av_to_attr(sdev, &qp->av, &attr->ah_attr);
	mutex_unlock(&qp->state_lock);

	attr->cap.max_send_wr = qp->sq.max_wr;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;
	if (!qp->srq) {
		attr->cap.max_recv_wr = qp->rq.max_wr;
		attr->cap.max_recv_sge = qp->rq.max_sge;
	}

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	init->port_num = qp->port_num;
	return 0;
}

/**
 * srnic_destroy_qp() - destroy a queue pair
 * @ibqp: the QP
 * @udata: unused
 *
 * Context: process context.
 * Return: 0.
 */
int srnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibqp->device);
	struct srnic_qp *qp = to_sqp(ibqp);

	WRITE_ONCE(qp->dead, true);
	xa_erase_irq(&sdev->qp_xa, ibqp->qp_num);
	/* Receivers that found the QP are done with it after this. */
	synchronize_net();
	srnic_qp_quiesce(qp);
	srnic_req_cleanup(qp);
	if (!qp->srq)
		srnic_queue_cleanup(&qp->rq.queue);
	srnic_queue_cleanup(&qp->sq.queue);
	mutex_destroy(&qp->state_lock);
	if (ibqp->qp_type != IB_QPT_GSI)
		srnic_obj_put(&sdev->n_qp);
	return 0;
}

/**
 * srnic_qp_fail() - move a QP to the error state, flush it, report why
 * @qp: the QP
 * @ev: the affiliated asynchronous error to report (IB_EVENT_QP_FATAL,
 *	_REQ_ERR, _ACCESS_ERR), or 0 for none
 *
 * Every outstanding send WQE completes with IB_WC_WR_FLUSH_ERR (after any
 * error completion already posted), then every posted receive. Called
 * again (a doorbell in the error state) it flushes what was posted since.
 * @ev is reported once the QP is in the error state; then a QP on an SRQ
 * reports IB_EVENT_QP_LAST_WQE_REACHED, once.
 *
 * Context: any; never sleeps.
 */
void srnic_qp_fail(struct srnic_qp *qp, enum ib_event_type ev)
{
	enum ib_qp_state s = READ_ONCE(qp->state);
	bool last_wqe;

	/*
	 * Not behind the back of a reset in progress (modify_qp holds
	 * state_lock, which this cannot take): a QP moved to RESET stays
	 * there, and its reset fences the paths that call this.
	 */
	do {
		if (s == IB_QPS_RESET)
			return;
	} while (!try_cmpxchg(&qp->state, &s, IB_QPS_ERR));

	spin_lock_bh(&qp->req.lock);
	qp->req.flushing = true;
	srnic_flush_sq(qp);
	qp->xport->stop(qp, false);
	spin_unlock_bh(&qp->req.lock);

	spin_lock_bh(&qp->resp.lock);
	srnic_flush_rq(qp);
	srnic_resp_drop_state(qp);
	/*
	 * The responder rechecks the state under this lock: from here on the
	 * QP takes nothing more from its SRQ (IBA 11.6.3.1, "last WQE").
	 */
	last_wqe = qp->srq && !qp->resp.last_wqe;
	qp->resp.last_wqe = true;
	spin_unlock_bh(&qp->resp.lock);
	if (ev)
		srnic_qp_event(qp, ev);
	if (last_wqe)
		srnic_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/**
 * srnic_qp_error() - move a QP to the error state and flush it
 * @qp: the QP
 *
 * srnic_qp_fail() without an error event (the cause was reported as a
 * completion status, or the consumer asked for it).
 *
 * Context: any; never sleeps.
 */
void srnic_qp_error(struct srnic_qp *qp)
{
	srnic_qp_fail(qp, 0);
}
