/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic: registered memory: MRs and memory windows, their keys, and the
 * copies to and from them (srnic_mr.c, srnic_mw.c, srnic_mem.c).
 */
#ifndef SRNIC_MR_H
#define SRNIC_MR_H

#include <linux/completion.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "srnic_wqe.h"

struct srnic_dev;
struct srnic_qp;

/**
 * struct srnic_mr - a memory region
 * @ibmr: the core's MR
 * @umem: pinned user pages; NULL for a DMA MR and a zero-length user MR
 * @user: user memory (a zero-length MR has no @umem, and no byte)
 * @start: user MRs: the user address of the first byte
 * @pd: its PD (the core sets ibmr.pd only after registration returns)
 * @iova: first virtual address the MR covers (0 for a zero-based MR)
 * @length: bytes covered
 * @access: IB_ACCESS_* rights
 * @index: key index in srnic_dev::mr_xa
 * @pages: the pinned pages, in order (user MRs)
 * @npages: entries in @pages
 * @page_off: offset of the MR's first byte in @pages[0]
 * @key: the key that finds it now (lkey = rkey); set at publish, and for
 *	a fast-registration MR by each Fast Register
 * @valid: the key works: set at publish; a fast-registration MR is valid
 *	from a Fast Register to the next invalidation. Set with release
 *	after the fields above it, read with acquire before them
 * @fr_pages: fast registration: the pages map_mr_sg() gave, kernel
 *	virtual addresses of ibmr.page_size chunks (NULL for other MRs)
 * @fr_max: capacity of @fr_pages
 * @fr_n: entries in @fr_pages
 * @ref: users: the registration, plus every lookup in flight
 * @n_mw: memory windows bound to it (it cannot be deregistered then)
 * @done: completed when the last user is gone (deregistration waits)
 * @rcu: frees the MR after lookups that may still see it are over
 */
struct srnic_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	bool user;
	u64 start;
	struct ib_pd *pd;
	u64 iova;
	u64 length;
	int access;
	u32 index;
	struct page **pages;
	u32 npages;
	u32 page_off;
	u32 key;
	bool valid;
	u64 *fr_pages;
	u32 fr_max;
	u32 fr_n;
	refcount_t ref;
	atomic_t n_mw;
	struct completion done;
	struct rcu_head rcu;
};

/**
 * struct srnic_mw - a memory window
 * @ibmw: the core's window (type, PD, current rkey)
 * @lock: guards the binding below and @ibmw.rkey; any context
 * @index: key index in srnic_dev::mr_xa
 * @valid: bound: remote requests with @ibmw.rkey may use it
 * @mr: the MR it is bound to (counted in its n_mw)
 * @addr: first address it grants
 * @length: bytes it grants
 * @access: IB_ACCESS_REMOTE_* it grants
 * @qpn: type 2: the QP it was bound through, the only one it serves
 * @dead: being deallocated: no bind may take it any more
 */
struct srnic_mw {
	struct ib_mw ibmw;
	spinlock_t lock;	/* see above */
	u32 index;
	bool valid;
	struct srnic_mr *mr;
	u64 addr;
	u64 length;
	int access;
	u32 qpn;
	bool dead;
};

static inline struct srnic_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct srnic_mw, ibmw);
}

/* Which key of an MR a request names. */
enum srnic_key_type {
	SRNIC_LKEY,
	SRNIC_RKEY,
};

static inline struct srnic_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct srnic_mr, ibmr);
}

/* srnic_mr.c: MRs and the key table */
struct srnic_mr *srnic_mr_entry(void *entry);
struct ib_mr *srnic_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *srnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *srnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int srnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
enum ib_wc_status srnic_mr_fast_reg(struct srnic_qp *qp,
				    const struct srnic_send_wqe *w);
struct ib_mr *srnic_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata);
int srnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct srnic_mr *srnic_mr_alloc(struct srnic_dev *sdev, struct ib_pd *pd,
				int access);
void srnic_mr_publish(struct srnic_dev *sdev, struct srnic_mr *mr);
void srnic_mr_destroy(struct srnic_dev *sdev, struct srnic_mr *mr);
struct srnic_mr *srnic_mr_get(struct srnic_dev *sdev, u32 key,
			      enum srnic_key_type type);
void srnic_mr_put(struct srnic_mr *mr);
bool srnic_mr_range_ok(u64 start, u64 length, u64 addr, u64 len);
bool srnic_mr_bind_window(struct srnic_dev *sdev, struct srnic_mr *mr);

/* srnic_mw.c */
int srnic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int srnic_dealloc_mw(struct ib_mw *ibmw);
enum ib_wc_status srnic_mw_bind(struct srnic_qp *qp,
				const struct srnic_send_wqe *w);
int srnic_invalidate(struct srnic_qp *qp, u32 rkey, bool remote);
int srnic_rkey_get(struct srnic_qp *qp, u32 rkey, u64 va, u64 len,
		   int access, struct srnic_mr **mrp, u64 *addr);
int srnic_mr_check(const struct srnic_mr *mr, const struct ib_pd *pd,
		   u64 addr, u64 len, int access);

/* srnic_mem.c: moving bytes to and from registered memory */
int srnic_mr_copy(struct srnic_mr *mr, u64 va, void *buf, u32 len,
		  bool to_mr);
int srnic_mr_store64(struct srnic_mr *mr, u64 va, u64 val);
int srnic_sge_copy(struct srnic_dev *sdev, struct ib_pd *pd,
		   const struct ib_sge *sge, u32 num_sge, u32 off, void *buf,
		   u32 len, bool to_mem);

#endif /* SRNIC_MR_H */
