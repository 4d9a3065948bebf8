// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: memory windows (IBA 10.6.7), and the one path by which remote
 * requests find memory: an R_Key names either an MR or a window onto one.
 *
 * Windows share the MRs' key space: a window's index is reserved in the
 * same table and its entry is tagged, so one lookup tells an MR's key
 * from a window's. A window is bound and invalidated by work requests,
 * executed by the requester in send-queue order (librxe posts type 1
 * binds as IBV_WR_BIND_MW too):
 *
 *   type 1: bound by any QP of its PD; a bind gives it a new key byte;
 *	a zero-length bind unbinds it; never invalidated by a request
 *   type 2 (2B): bound only while free, through one QP, and usable only
 *	through that QP; freed by Local Invalidate or Send with Invalidate
 *
 * A bound window keeps its MR from being deregistered (-EBUSY, IBA
 * 10.6.7.2.6); remote accesses take a reference on the MR for as long as
 * they touch it, as with an MR's own key. A window's fields change under
 * its lock; readers copy what they need under it, within an RCU read
 * section that dealloc waits out before the core frees the window.
 */
#include <kunit/visibility.h>

#include "srnic.h"

/* The tag of a window's entry in srnic_dev::mr_xa. */
#define SRNIC_MW_TAG	1

/* Rights a window can grant. */
#define SRNIC_MW_ACCESS (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC)

/**
 * srnic_alloc_mw() - allocate a memory window
 * @ibmw: the window (allocated by the core; type and PD set)
 * @udata: unused
 *
 * Context: process context.
 * Return: 0, -EINVAL for a type other than 1 and 2, -ENOMEM past max_mw.
 */
int srnic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibmw->device);
	struct srnic_mw *mw = to_smw(ibmw);
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (!srnic_obj_get(&sdev->n_mw, sdev->attr.max_mw))
		return -ENOMEM;
	spin_lock_init(&mw->lock);
	err = xa_alloc_cyclic_irq(&sdev->mr_xa, &mw->index,
				  xa_tag_pointer(mw, SRNIC_MW_TAG),
				  XA_LIMIT(1, SRNIC_MAX_MR), &sdev->mr_next,
				  GFP_KERNEL);
	if (err < 0) {
		srnic_obj_put(&sdev->n_mw);
		return err;
	}
	/* As an MR's key: the index and the next byte for it. */
	ibmw->rkey = (mw->index << 8) | ++sdev->mr_keygen[mw->index];
	return 0;
}

/* Unbind: the window grants nothing. Caller holds mw->lock. */
static void srnic_mw_unbind(struct srnic_mw *mw)
{
	if (mw->mr)
		atomic_dec(&mw->mr->n_mw);
	mw->mr = NULL;
	mw->valid = false;
	mw->qpn = 0;
}

/**
 * srnic_dealloc_mw() - free a memory window
 * @ibmw: the window
 *
 * Context: process context, may sleep.
 * Return: 0.
 */
int srnic_dealloc_mw(struct ib_mw *ibmw)
{
	struct srnic_dev *sdev = to_sdev(ibmw->device);
	struct srnic_mw *mw = to_smw(ibmw);
	unsigned long flags;

	xa_erase_irq(&sdev->mr_xa, mw->index);
	spin_lock_irqsave(&mw->lock, flags);
	/* A bind that found it before the erase must not bind it again. */
	mw->dead = true;
	srnic_mw_unbind(mw);
	spin_unlock_irqrestore(&mw->lock, flags);
	/* Lookups that found it are over before the core frees it. */
	synchronize_rcu();
	srnic_obj_put(&sdev->n_mw);
	return 0;
}

/* The window with @key's index, or NULL. Caller in an RCU read section. */
static struct srnic_mw *srnic_mw_find(struct srnic_dev *sdev, u32 key)
{
	void *entry = xa_load(&sdev->mr_xa, key >> 8);

	if (!entry || xa_pointer_tag(entry) != SRNIC_MW_TAG)
		return NULL;
	return xa_untag_pointer(entry);
}

/**
 * srnic_mw_bind() - execute a Bind Memory Window request
 * @qp: the QP that posted it
 * @w: the request: mw_rkey names the window, new_rkey is its key after
 *	the bind, mr_lkey the MR, [addr, addr + length) the range, access
 *	the rights
 *
 * Context: the transmit engine, under req.lock.
 * Return: IB_WC_SUCCESS or IB_WC_MW_BIND_ERR.
 */
enum ib_wc_status srnic_mw_bind(struct srnic_qp *qp,
				const struct srnic_send_wqe *w)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	enum ib_wc_status st = IB_WC_MW_BIND_ERR;
	struct srnic_mr *mr = NULL;
	unsigned long flags;
	struct srnic_mw *mw;
	int need = 0;

	/* Local write means nothing for a window. */
	if (w->mw.access & ~(SRNIC_MW_ACCESS | IB_ACCESS_LOCAL_WRITE |
			     IB_ZERO_BASED))
		return st;
	if (w->mw.access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC))
		need = IB_ACCESS_LOCAL_WRITE;	/* IBA 10.6.7.2.1 */

	rcu_read_lock();
	/*
	 * The verb names the window by its handle, not its key (IBA
	 * 10.6.7.2): the index in mw_rkey finds it, whatever key byte the
	 * consumer last knew (librxe never updates a type 2 window's
	 * ibv_mw.rkey); the PD check keeps it to the consumer's own windows.
	 */
	mw = srnic_mw_find(sdev, w->mw.mw_rkey);
	if (!mw || mw->ibmw.pd != qp->ibqp.pd)
		goto out;
	/* Zero-based: type 2 only (IBA o10-36.2.2). */
	if ((w->mw.access & IB_ZERO_BASED) && mw->ibmw.type != IB_MW_TYPE_2)
		goto out;
	if (w->mw.length || mw->ibmw.type == IB_MW_TYPE_2) {
		mr = srnic_mr_get(sdev, w->mw.mr_lkey, SRNIC_LKEY);
		if (!mr || mr->pd != qp->ibqp.pd ||
		    !(mr->access & IB_ACCESS_MW_BIND) ||
		    (mr->access & need) != need ||
		    !srnic_mr_range_ok(mr->iova, mr->length, w->mw.addr,
				       w->mw.length))
			goto out;
	}
	spin_lock_irqsave(&mw->lock, flags);
	if (mw->dead || (mw->ibmw.type == IB_MW_TYPE_2 && mw->valid)) {
		spin_unlock_irqrestore(&mw->lock, flags);
		goto out;	/* a bound type 2 window must be freed first */
	}
	srnic_mw_unbind(mw);
	/* The consumer owns the key byte only; the index is the window's. */
	mw->ibmw.rkey = (mw->index << 8) | (w->mw.new_rkey & 0xff);
	if (mr && !srnic_mr_bind_window(sdev, mr)) {
		spin_unlock_irqrestore(&mw->lock, flags);
		goto out;	/* the MR is being deregistered */
	}
	if (mr) {
		mw->mr = mr;
		mw->addr = w->mw.addr;
		mw->length = w->mw.length;
		mw->access = w->mw.access & (SRNIC_MW_ACCESS | IB_ZERO_BASED);
		mw->qpn = mw->ibmw.type == IB_MW_TYPE_2 ? qp->ibqp.qp_num : 0;
		mw->valid = true;
	}
	spin_unlock_irqrestore(&mw->lock, flags);
	st = IB_WC_SUCCESS;
out:
	rcu_read_unlock();
	if (mr)
		srnic_mr_put(mr);
	return st;
}

/**
 * srnic_invalidate() - invalidate an R_Key (Local Invalidate, or the
 *	responder's half of Send with Invalidate)
 * @qp: the QP the request came through
 * @rkey: the key
 * @remote: Send with Invalidate: the window must serve @qp
 *
 * A fast-registration MR or a type 2 window of the QP's PD can be
 * invalidated (IBA 10.6.7.2.5; a window remotely only through the QP it
 * is bound to, 9.4.1.4); the key stops working for new requests at once.
 * A request already executing with it (a Read being answered) holds the
 * MR and completes.
 *
 * Context: softirq or the transmit engine; never sleeps.
 * Return: 0, or -EINVAL if @rkey names nothing invalidatable.
 */
int srnic_invalidate(struct srnic_qp *qp, u32 rkey, bool remote)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	unsigned long flags;
	struct srnic_mw *mw;
	int err = -EINVAL;

	rcu_read_lock();
	mw = srnic_mw_find(sdev, rkey);
	if (!mw) {
		/* A fast-registration MR of the PD (IBA 10.6.3.x). */
		struct srnic_mr *mr = srnic_mr_entry(xa_load(&sdev->mr_xa,
							     rkey >> 8));
		bool valid = false;

		if (mr) {
			/* Pairs with srnic_mr_fast_reg()'s release. */
			valid = smp_load_acquire(&mr->valid);
		}
		if (valid && mr->fr_pages && mr->pd == qp->ibqp.pd &&
		    READ_ONCE(mr->key) == rkey) {
			WRITE_ONCE(mr->valid, false);
			err = 0;
		}
	} else if (mw->ibmw.type == IB_MW_TYPE_2 &&
		   mw->ibmw.pd == qp->ibqp.pd) {
		spin_lock_irqsave(&mw->lock, flags);
		if (mw->valid && mw->ibmw.rkey == rkey &&
		    (!remote || mw->qpn == qp->ibqp.qp_num)) {
			srnic_mw_unbind(mw);
			err = 0;
		}
		spin_unlock_irqrestore(&mw->lock, flags);
	}
	rcu_read_unlock();
	return err;
}

/**
 * srnic_rkey_get() - find the memory a remote request may touch
 * @qp: the QP the request arrived on
 * @rkey: its R_Key: an MR's or a window's
 * @va: first address
 * @len: bytes (> 0)
 * @access: the right needed (IB_ACCESS_REMOTE_*)
 * @mrp: set to the MR holding the bytes, held (srnic_mr_put())
 * @addr: set to the MR address of @va (what srnic_mr_copy() takes)
 *
 * For an MR: its PD, rights and range; @va is an MR address (a
 * zero-based MR's addresses start at 0). For a window: bound, its PD,
 * its QP (type 2), its rights and range; the bytes are the MR's at the
 * same addresses, or, for a zero-based window, @va is an offset from
 * the window's first byte.
 *
 * Context: any; never sleeps.
 * Return: 0 or -errno (-EPERM, -EACCES, -ERANGE, -ENOENT).
 */
int srnic_rkey_get(struct srnic_qp *qp, u32 rkey, u64 va, u64 len,
		   int access, struct srnic_mr **mrp, u64 *addr)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_mr *mr = NULL;
	unsigned long flags;
	struct srnic_mw *mw;
	int err = -ENOENT;

	*mrp = NULL;
	*addr = va;
	rcu_read_lock();
	mw = srnic_mw_find(sdev, rkey);
	if (!mw) {
		rcu_read_unlock();
		mr = srnic_mr_get(sdev, rkey, SRNIC_RKEY);
		if (!mr)
			return -ENOENT;
		err = srnic_mr_check(mr, qp->ibqp.pd, va, len, access);
		if (err) {
			srnic_mr_put(mr);
			return err;
		}
		*mrp = mr;
		return 0;
	}
	spin_lock_irqsave(&mw->lock, flags);
	if (!mw->valid || mw->ibmw.rkey != rkey)
		err = -ENOENT;
	else if (mw->ibmw.pd != qp->ibqp.pd ||
		 (mw->ibmw.type == IB_MW_TYPE_2 &&
		  mw->qpn != qp->ibqp.qp_num))
		err = -EPERM;
	else if ((mw->access & access) != access)
		err = -EACCES;
	else if (!srnic_mr_range_ok((mw->access & IB_ZERO_BASED) ? 0 : mw->addr,
				    mw->length, va, len))
		err = -ERANGE;
	else if (refcount_inc_not_zero(&mw->mr->ref))
		mr = mw->mr;
	if (mr && (mw->access & IB_ZERO_BASED))
		*addr = mw->addr + va;
	spin_unlock_irqrestore(&mw->lock, flags);
	rcu_read_unlock();
	if (!mr)
		return err;
	*mrp = mr;
	return 0;
}
