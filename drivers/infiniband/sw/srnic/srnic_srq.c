// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: shared receive queues.
 */
#include "srnic.h"

static int srnic_srq_check(struct srnic_dev *sdev, u32 max_wr, u32 limit)
{
	if (!max_wr || max_wr > sdev->attr.max_srq_wr) {
		srnic_dbg(sdev, "max_wr %u outside 1..%u\n", max_wr,
			  sdev->attr.max_srq_wr);
		return -EINVAL;
	}
	if (limit > max_wr)
		return -EINVAL;
	return 0;
}

/**
 * srnic_create_srq() - create a shared receive queue
 * @ibsrq: the SRQ (allocated by the core)
 * @init: type and attributes; max_wr and max_sge are rounded up to what
 *	the ring provides and reported back
 * @udata: for a user SRQ, receives the ring's mmap cookie and SRQ number
 *
 * Context: process context.
 * Return: 0 or -errno.
 */
int srnic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibsrq->device);
	struct srnic_srq *srq = to_ssrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	struct rxe_create_srq_resp resp = {};
	u32 num = attr->max_wr, sge = max_t(u32, attr->max_sge, 1);
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	err = srnic_srq_check(sdev, attr->max_wr, attr->srq_limit);
	if (err)
		return err;
	if (attr->max_sge > sdev->attr.max_srq_sge)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!srnic_obj_get(&sdev->n_srq, sdev->attr.max_srq))
		return -ENOMEM;

	srq->is_user = !!udata;
	srq->limit = attr->srq_limit;
	spin_lock_init(&srq->rq.lock);
	err = srnic_queue_init(&srq->rq.queue, &num,
			       sizeof(struct rxe_recv_wqe) +
			       sge * sizeof(struct rxe_sge),
			       udata ? SRNIC_QUEUE_FROM_USER :
				       SRNIC_QUEUE_KERNEL);
	if (err)
		goto out_put;
	srq->rq.max_wr = num;
	srq->rq.max_sge = sge;

	err = xa_alloc_cyclic_irq(&sdev->srq_xa, &srq->srq_num, srq,
				  XA_LIMIT(1, SRNIC_MAX_SRQ), &sdev->srq_next,
				  GFP_KERNEL);
	if (err < 0)
		goto out_queue;

	if (udata) {
		err = srnic_queue_publish(&srq->rq.queue,
					  srnic_udata_uctx(udata), &resp.mi);
		if (err)
			goto out_erase;
		resp.srq_num = srq->srq_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto out_erase;
	}
	attr->max_wr = num;
	attr->max_sge = sge;
	return 0;

out_erase:
	xa_erase_irq(&sdev->srq_xa, srq->srq_num);
out_queue:
	srnic_queue_cleanup(&srq->rq.queue);
out_put:
	srnic_obj_put(&sdev->n_srq);
	return err;
}

/**
 * srnic_modify_srq() - resize an SRQ or arm its limit
 * @ibsrq: the SRQ
 * @attr: new max_wr and/or srq_limit
 * @mask: IB_SRQ_MAX_WR and/or IB_SRQ_LIMIT
 * @udata: for a user SRQ resize, struct rxe_modify_srq_cmd: where to
 *	write the new ring's mmap cookie
 *
 * Context: process context.
 * Return: 0 or -errno.
 */
int srnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibsrq->device);
	struct srnic_srq *srq = to_ssrq(ibsrq);
	struct rxe_modify_srq_cmd cmd = {};
	u32 max_wr = (mask & IB_SRQ_MAX_WR) ? attr->max_wr : srq->rq.max_wr;
	u32 limit = (mask & IB_SRQ_LIMIT) ? attr->srq_limit : srq->limit;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	err = srnic_srq_check(sdev, max_wr, limit);
	if (err)
		return err;

	if (mask & IB_SRQ_MAX_WR) {
		if (udata) {
			if (udata->inlen < sizeof(cmd))
				return -EINVAL;
			err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
			if (err)
				return err;
		}
		err = srnic_queue_resize(&srq->rq.queue, &srq->rq.lock,
					 &max_wr,
					 udata ? srnic_udata_uctx(udata) : NULL,
					 u64_to_user_ptr(cmd.mmap_info_addr));
		if (err)
			return err;
		srq->rq.max_wr = max_wr;
	}
	if (mask & IB_SRQ_LIMIT)
		srq->limit = limit;
	return 0;
}

/**
 * srnic_query_srq() - report an SRQ's attributes
 * @ibsrq: the SRQ
 * @attr: filled in
 *
 * Context: process context.
 * Return: 0.
 */
int srnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct srnic_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

/**
 * srnic_destroy_srq() - destroy an SRQ; the core guarantees no QP uses it
 * @ibsrq: the SRQ
 * @udata: unused
 *
 * Context: process context.
 * Return: 0.
 */
int srnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibsrq->device);
	struct srnic_srq *srq = to_ssrq(ibsrq);

	xa_erase_irq(&sdev->srq_xa, srq->srq_num);
	srnic_queue_cleanup(&srq->rq.queue);
	srnic_obj_put(&sdev->n_srq);
	return 0;
}

