// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: memory regions.
 *
 * A key is (index << 8) | key byte: the index finds the MR in the
 * device's table, the rolling key byte makes a key from a destroyed MR
 * miss even when its index is reused. lkey and rkey are the same key.
 */
#include "srnic.h"

/* Rights srnic implements; optional flags (relaxed ordering) are ignored. */
#define SRNIC_MR_ACCESS_FLAGS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

static struct srnic_mr *srnic_mr_alloc(struct srnic_dev *sdev, int access)
{
	struct srnic_mr *mr;
	u32 key;
	int err;

	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~SRNIC_MR_ACCESS_FLAGS) {
		srnic_dbg(sdev, "access flags %#x not supported\n", access);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!srnic_obj_get(&sdev->n_mr, sdev->attr.max_mr))
		return ERR_PTR(-ENOMEM);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		err = -ENOMEM;
		goto out_put;
	}
	err = xa_alloc_cyclic_irq(&sdev->mr_xa, &mr->index, mr,
				  XA_LIMIT(1, SRNIC_MAX_MR), &sdev->mr_next,
				  GFP_KERNEL);
	if (err < 0)
		goto out_free;
	key = (mr->index << 8) | (atomic_inc_return(&sdev->mr_key) & 0xff);
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->access = access;
	return mr;

out_free:
	kfree(mr);
out_put:
	srnic_obj_put(&sdev->n_mr);
	return ERR_PTR(err);
}

static void srnic_mr_free(struct srnic_dev *sdev, struct srnic_mr *mr)
{
	xa_erase_irq(&sdev->mr_xa, mr->index);
	kfree(mr);
	srnic_obj_put(&sdev->n_mr);
}

/**
 * srnic_get_dma_mr() - an MR covering all kernel memory (kernel ULPs)
 * @ibpd: the PD
 * @access: access rights
 *
 * Context: process context.
 * Return: the MR or an ERR_PTR.
 */
struct ib_mr *srnic_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct srnic_mr *mr;

	mr = srnic_mr_alloc(to_sdev(ibpd->device), access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->iova = 0;
	mr->length = U64_MAX;
	return &mr->ibmr;
}

/**
 * srnic_reg_user_mr() - register user memory
 * @ibpd: the PD
 * @start: user virtual address of the memory
 * @length: bytes, 1..max_mr_size
 * @iova: the address remote peers use for @start
 * @access: access rights
 * @udata: unused
 *
 * The pages are pinned (ib_umem) for the MR's lifetime.
 *
 * Context: process context.
 * Return: the MR or an ERR_PTR: -EINVAL for a bad length or wrapping
 * range, -EOPNOTSUPP for unsupported rights (memory windows, on-demand
 * paging), -ENOMEM past max_mr.
 */
struct ib_mr *srnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibpd->device);
	struct srnic_mr *mr;
	struct ib_umem *umem;

	if (!length || length > sdev->attr.max_mr_size ||
	    iova + length < iova || start + length < start) {
		srnic_dbg(sdev, "bad range start %#llx iova %#llx length %#llx\n",
			  start, iova, length);
		return ERR_PTR(-EINVAL);
	}
	mr = srnic_mr_alloc(sdev, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	umem = ib_umem_get(&sdev->ibdev, start, length, mr->access);
	if (IS_ERR(umem)) {
		srnic_dbg(sdev, "pinning %#llx+%#llx failed: %ld\n", start,
			  length, PTR_ERR(umem));
		srnic_mr_free(sdev, mr);
		return ERR_CAST(umem);
	}
	mr->umem = umem;
	mr->iova = iova;
	mr->length = length;
	return &mr->ibmr;
}

/**
 * srnic_dereg_mr() - deregister an MR
 * @ibmr: the MR
 * @udata: unused
 *
 * Context: process context.
 * Return: 0.
 */
int srnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct srnic_mr *mr = to_smr(ibmr);

	ib_umem_release(mr->umem);
	srnic_mr_free(to_sdev(ibmr->device), mr);
	return 0;
}
