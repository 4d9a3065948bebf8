// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: memory regions.
 *
 * A key is (index << 8) | key byte: the index finds the MR in the
 * device's table; the key byte advances each time the index is reused, so
 * a key of a destroyed MR misses the MR that reuses its index (for the
 * next 255 reuses). lkey and rkey are the same key.
 *
 * The data path finds MRs by key with srnic_mr_get() (RCU, no lock) and
 * holds a reference while it touches the memory; deregistration unlinks
 * the MR, then waits for those references before unpinning the pages.
 *
 * Fast registration (kernel users): alloc_mr() makes an MR with a page
 * list and no valid key; map_mr_sg() fills the list; a Fast Register
 * work request, executed in send queue order, gives it its key, range and
 * rights; Local Invalidate or a Send with Invalidate takes them away
 * again. Its pages are kernel memory the consumer owns.
 */
#include <linux/completion.h>
#include <kunit/visibility.h>

#include "srnic.h"

/*
 * Rights srnic implements; optional flags (relaxed ordering) are ignored.
 * Flush for global visibility from 6.2 on (0 before).
 */
#define SRNIC_MR_ACCESS_FLAGS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			       IB_ACCESS_MW_BIND | IB_ZERO_BASED | \
			       SRNIC_ACCESS_FLUSH_GLOBAL)

/**
 * srnic_mr_alloc() - allocate an MR and reserve its key
 * @sdev: the device
 * @pd: its protection domain
 * @access: IB_ACCESS_* rights (optional flags ignored)
 *
 * The caller sets the range, then makes the MR findable by its key with
 * srnic_mr_publish().
 *
 * Context: process context.
 * Return: the MR or an ERR_PTR: -EOPNOTSUPP for rights srnic does not
 * implement, -ENOMEM past max_mr.
 */
struct srnic_mr *srnic_mr_alloc(struct srnic_dev *sdev, struct ib_pd *pd,
				int access)
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
	mr->pd = pd;
	mr->access = access;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->done);
	/* Reserve the index; srnic_mr_publish() stores the MR. */
	err = xa_alloc_cyclic_irq(&sdev->mr_xa, &mr->index, NULL,
				  XA_LIMIT(1, SRNIC_MAX_MR), &sdev->mr_next,
				  GFP_KERNEL);
	if (err < 0)
		goto out_free;
	/* Under the xarray's allocation, which owns the index now. */
	key = (mr->index << 8) | ++sdev->mr_keygen[mr->index];
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->key = key;
	return mr;

out_free:
	kfree(mr);
out_put:
	srnic_obj_put(&sdev->n_mr);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_mr_alloc);

/**
 * srnic_mr_publish() - make a complete MR findable by its key
 * @sdev: the device
 * @mr: the MR, its range set
 *
 * Context: any.
 */
void srnic_mr_publish(struct srnic_dev *sdev, struct srnic_mr *mr)
{
	if (!mr->fr_pages) {
		/* Pairs with srnic_mr_get()'s acquire: the fields are set. */
		smp_store_release(&mr->valid, true);
	}
	/* The slot is reserved: storing into it allocates nothing. */
	xa_store_irq(&sdev->mr_xa, mr->index, mr, GFP_ATOMIC);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_mr_publish);

static void srnic_mr_finish(struct srnic_dev *sdev, struct srnic_mr *mr);

/**
 * srnic_mr_destroy() - unlink an MR, wait for its users, free it
 * @sdev: the device
 * @mr: the MR; its pages are unpinned once nobody uses them
 *
 * Context: process context, may sleep.
 */
void srnic_mr_destroy(struct srnic_dev *sdev, struct srnic_mr *mr)
{
	xa_erase_irq(&sdev->mr_xa, mr->index);
	srnic_mr_finish(sdev, mr);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_mr_destroy);

/* Wait for the users of an unlinked MR, then free it. */
static void srnic_mr_finish(struct srnic_dev *sdev, struct srnic_mr *mr)
{
	srnic_mr_put(mr);
	wait_for_completion(&mr->done);
	kvfree(mr->pages);
	kfree(mr->fr_pages);
	ib_umem_release(mr->umem);
	srnic_obj_put(&sdev->n_mr);
	kfree_rcu(mr, rcu);
}

/**
 * srnic_mr_entry() - the MR in a key table entry
 * @entry: what xa_load() returned from srnic_dev::mr_xa
 *
 * Context: any.
 * Return: the MR, or NULL if the entry is empty or a window.
 */
struct srnic_mr *srnic_mr_entry(void *entry)
{
	return entry && !xa_pointer_tag(entry) ? entry : NULL;
}

/**
 * srnic_mr_bind_window() - count a window bound to an MR
 * @sdev: the device
 * @mr: the MR, held
 *
 * Serialised with deregistration by the key table's lock: either the
 * window is counted and deregistration refuses, or the MR is already
 * unlinked and the bind fails.
 *
 * Context: any; never sleeps.
 * Return: true if counted.
 */
bool srnic_mr_bind_window(struct srnic_dev *sdev, struct srnic_mr *mr)
{
	unsigned long flags;
	bool ok;

	xa_lock_irqsave(&sdev->mr_xa, flags);
	ok = srnic_mr_entry(xa_load(&sdev->mr_xa, mr->index)) == mr;
	if (ok)
		atomic_inc(&mr->n_mw);
	xa_unlock_irqrestore(&sdev->mr_xa, flags);
	return ok;
}

/**
 * srnic_mr_get() - find an MR by key and hold it
 * @sdev: the device
 * @key: an lkey or rkey
 * @type: which one @key is
 *
 * Context: any; never sleeps.
 * Return: the MR, held (srnic_mr_put()), or NULL if no live MR has @key.
 */
struct srnic_mr *srnic_mr_get(struct srnic_dev *sdev, u32 key,
			      enum srnic_key_type type)
{
	struct srnic_mr *mr;

	rcu_read_lock();
	mr = srnic_mr_entry(xa_load(&sdev->mr_xa, key >> 8));
	/* lkey and rkey are one key; the type documents the caller. */
	/* Acquire: pairs with the release that made the MR valid. */
	if (mr && (!smp_load_acquire(&mr->valid) || READ_ONCE(mr->key) != key))
		mr = NULL;
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_mr_get);

/**
 * srnic_mr_put() - drop a reference from srnic_mr_get()
 * @mr: the MR
 *
 * Context: any; never sleeps.
 */
void srnic_mr_put(struct srnic_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->done);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_mr_put);

/**
 * srnic_mr_range_ok() - does [@addr, @addr + @len) lie in a range
 * @start: first address of the range
 * @length: bytes in the range
 * @addr: first address accessed
 * @len: bytes accessed; 0 touches nothing and is always within
 *
 * Written so that no sum can wrap: an access whose end overflows 64 bits
 * is outside every range.
 *
 * Context: any.
 * Return: true if every byte accessed is in the range.
 */
bool srnic_mr_range_ok(u64 start, u64 length, u64 addr, u64 len)
{
	u64 off;

	if (!len)
		return true;
	if (addr < start)
		return false;
	off = addr - start;
	return off < length && len <= length - off;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_mr_range_ok);

/**
 * srnic_mr_check() - may a request touch these bytes of this MR
 * @mr: the MR, found by its key
 * @pd: the PD of the QP making the access
 * @addr: first address
 * @len: bytes
 * @access: the rights needed: IB_ACCESS_LOCAL_WRITE to write through an
 *	lkey, IB_ACCESS_REMOTE_READ/WRITE/ATOMIC for an rkey; 0 to read
 *	through an lkey
 *
 * Context: any.
 * Return: 0, -EPERM if the MR belongs to another PD, -EACCES if it lacks
 * a right, -ERANGE if a byte lies outside it.
 */
int srnic_mr_check(const struct srnic_mr *mr, const struct ib_pd *pd,
		   u64 addr, u64 len, int access)
{
	if (mr->pd != pd)
		return -EPERM;
	if ((mr->access & access) != access)
		return -EACCES;
	if (!srnic_mr_range_ok(mr->iova, mr->length, addr, len))
		return -ERANGE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_mr_check);

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

	struct srnic_dev *sdev = to_sdev(ibpd->device);

	mr = srnic_mr_alloc(sdev, ibpd, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->iova = 0;
	mr->length = U64_MAX;
	srnic_mr_publish(sdev, mr);
	return &mr->ibmr;
}

/**
 * srnic_mr_map_pages() - build a user MR's page array
 * @mr: the MR, its umem pinned
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
static int srnic_mr_map_pages(struct srnic_mr *mr)
{
	struct ib_umem *umem = mr->umem;
	struct sg_page_iter iter;
	size_t n = ib_umem_num_pages(umem), i = 0;

	mr->pages = kvmalloc_array(n, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(i >= n))
			break;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	mr->npages = i;
	mr->page_off = ib_umem_offset(umem);
	return 0;
}

/**
 * srnic_reg_user_mr() - register user memory
 * @ibpd: the PD
 * @start: user virtual address of the memory
 * @length: bytes, 0..max_mr_size
 * @iova: the address remote peers use for @start; with IB_ZERO_BASED
 *	in @access the MR's addresses are offsets from its first byte
 * @access: access rights
 * @udata: unused
 *
 * The pages are pinned (ib_umem) for the MR's lifetime. A zero-length
 * MR pins nothing; it has keys, and only zero-byte accesses pass its
 * range check (IBA 10.6.3: the length of a region may be zero).
 *
 * Context: process context.
 * Return: the MR or an ERR_PTR: -EINVAL for a bad length or wrapping
 * range, -EOPNOTSUPP for unsupported rights (on-demand paging),
 * -ENOMEM past max_mr.
 */
struct ib_mr *srnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibpd->device);
	struct srnic_mr *mr;
	struct ib_umem *umem;

	if (access & IB_ZERO_BASED)
		iova = 0;
	if (length > sdev->attr.max_mr_size ||
	    iova + length < iova || start + length < start) {
		srnic_dbg(sdev, "bad range start %#llx iova %#llx length %#llx\n",
			  start, iova, length);
		return ERR_PTR(-EINVAL);
	}
	mr = srnic_mr_alloc(sdev, ibpd, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->user = true;
	mr->start = start;
	mr->iova = iova;
	if (!length) {
		srnic_mr_publish(sdev, mr);
		return &mr->ibmr;
	}

	umem = ib_umem_get(&sdev->ibdev, start, length, mr->access);
	if (IS_ERR(umem)) {
		srnic_dbg(sdev, "pinning %#llx+%#llx failed: %ld\n", start,
			  length, PTR_ERR(umem));
		srnic_mr_destroy(sdev, mr);
		return ERR_CAST(umem);
	}
	mr->umem = umem;
	mr->length = length;
	if (srnic_mr_map_pages(mr)) {
		srnic_mr_destroy(sdev, mr);
		return ERR_PTR(-ENOMEM);
	}
	srnic_mr_publish(sdev, mr);
	return &mr->ibmr;
}

/**
 * srnic_alloc_mr() - an MR for fast registration (kernel users)
 * @ibpd: the PD
 * @type: IB_MR_TYPE_MEM_REG (page lists without gaps)
 * @max_num_sg: pages it can map, 1..max_fast_reg_page_list_len
 *
 * Context: process context.
 * Return: the MR, not valid until a Fast Register, or an ERR_PTR:
 * -EINVAL for another type or too many pages, -ENOMEM past max_mr.
 */
struct ib_mr *srnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct srnic_dev *sdev = to_sdev(ibpd->device);
	struct srnic_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG || !max_num_sg ||
	    max_num_sg > sdev->attr.max_fast_reg_page_list_len)
		return ERR_PTR(-EINVAL);
	mr = srnic_mr_alloc(sdev, ibpd, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->fr_pages = kcalloc(max_num_sg, sizeof(*mr->fr_pages), GFP_KERNEL);
	if (!mr->fr_pages) {
		srnic_mr_destroy(sdev, mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->fr_max = max_num_sg;
	srnic_mr_publish(sdev, mr);
	return &mr->ibmr;
}

static int srnic_fr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct srnic_mr *mr = to_smr(ibmr);

	if (mr->fr_n >= mr->fr_max)
		return -ENOMEM;
	mr->fr_pages[mr->fr_n++] = addr;
	return 0;
}

/**
 * srnic_map_mr_sg() - give a fast-registration MR its pages
 * @ibmr: the MR, not valid (the consumer's contract)
 * @sg: DMA-mapped scatterlist (srnic's DMA addresses are kernel virtual)
 * @sg_nents: entries
 * @sg_offset: offset into the first entry, or NULL
 *
 * The core splits the list into ibmr->page_size pages and sets the MR's
 * iova and length; the next Fast Register makes them live.
 *
 * Context: any.
 * Return: entries mapped (the core's ib_sg_to_pages() semantics).
 */
int srnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct srnic_mr *mr = to_smr(ibmr);

	if (!mr->fr_pages || !is_power_of_2(ibmr->page_size))
		return -EINVAL;
	mr->fr_n = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      srnic_fr_set_page);
}

/**
 * srnic_mr_fast_reg() - execute a Fast Register work request
 * @qp: the kernel QP that posted it
 * @w: the request: the MR, its new key (same index, any key byte) and
 *	rights
 *
 * The MR must be a fast-registration MR of the QP's PD that is not valid
 * (IBA 10.6.3.x: registering a valid MR is an error).
 *
 * Context: the transmit engine, under req.lock.
 * Return: IB_WC_SUCCESS or IB_WC_MW_BIND_ERR.
 */
enum ib_wc_status srnic_mr_fast_reg(struct srnic_qp *qp,
				    const struct srnic_send_wqe *w)
{
	struct srnic_mr *mr = to_smr(w->reg.mr);
	int access = w->reg.access & ~IB_ACCESS_OPTIONAL;

	/* Zero-based fast registration: not offered. */
	if (!mr->fr_pages || mr->pd != qp->ibqp.pd ||
	    (w->reg.key >> 8) != mr->index || READ_ONCE(mr->valid) ||
	    (access & ~SRNIC_MR_ACCESS_FLAGS) || (access & IB_ZERO_BASED) ||
	    !mr->ibmr.length)
		return IB_WC_MW_BIND_ERR;
	/* Every byte of the range lies in a listed page. */
	if ((mr->ibmr.iova & (mr->ibmr.page_size - 1)) + mr->ibmr.length >
	    (u64)mr->fr_n * mr->ibmr.page_size)
		return IB_WC_MW_BIND_ERR;
	mr->iova = mr->ibmr.iova;
	mr->length = mr->ibmr.length;
	mr->access = access;
	WRITE_ONCE(mr->key, w->reg.key);
	/* Pairs with srnic_mr_get()'s acquire: range, rights, key first. */
	smp_store_release(&mr->valid, true);
	return IB_WC_SUCCESS;
}

/**
 * srnic_rereg_user_mr() - change an MR's translation, PD or rights
 * @ibmr: the MR
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD, IB_MR_REREG_ACCESS
 * @start: with TRANS, the new user address
 * @length: with TRANS, the new length
 * @iova: with TRANS, the new I/O virtual address
 * @access: with ACCESS, the new rights (checked by the core)
 * @ibpd: the PD the MR is to have (the old one without IB_MR_REREG_PD)
 * @udata: unused
 *
 * Always a new registration with what changed and what did not, which
 * the core puts in the old one's place before deregistering it: the MR
 * gets new keys (IBA 11.2.8.x allows it), and a request in flight with
 * the old keys either completes against the old MR or misses.
 *
 * Context: process context.
 * Return: the new MR, or an ERR_PTR: -EINVAL for an MR without user
 * memory, -EBUSY while windows are bound to it, else as
 * srnic_reg_user_mr(); the old MR is then unchanged.
 */
struct ib_mr *srnic_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srnic_mr *old = to_smr(ibmr);

	if (!old->user)
		return ERR_PTR(-EINVAL);
	/* The core deregisters the old MR: it must not have windows. */
	if (atomic_read(&old->n_mw))
		return ERR_PTR(-EBUSY);
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = old->start;
		length = old->length;
		iova = old->iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = old->access;
	if (!(flags & IB_MR_REREG_PD))
		ibpd = old->pd;
	return srnic_reg_user_mr(ibpd, start, length, iova, access, udata);
}

/**
 * srnic_dereg_mr() - deregister an MR
 * @ibmr: the MR
 * @udata: unused
 *
 * Context: process context.
 * Return: 0, or -EBUSY while memory windows are bound to it (IBA
 * 10.6.7.2.6); it stays registered then.
 */
int srnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibmr->device);
	struct srnic_mr *mr = to_smr(ibmr);

	xa_lock_irq(&sdev->mr_xa);
	if (atomic_read(&mr->n_mw)) {
		xa_unlock_irq(&sdev->mr_xa);
		srnic_dbg(sdev, "MR %#x has bound memory windows\n", ibmr->lkey);
		return -EBUSY;
	}
	__xa_erase(&sdev->mr_xa, mr->index);
	xa_unlock_irq(&sdev->mr_xa);
	srnic_mr_finish(sdev, mr);
	return 0;
}
