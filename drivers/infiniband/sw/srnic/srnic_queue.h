/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic: the shared rings (srnic_queue.c) and their mmap cookies
 * (srnic_mmap.c).
 */
#ifndef SRNIC_QUEUE_H
#define SRNIC_QUEUE_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

struct srnic_mmap_entry;

/*
 * Shared rings (srnic_queue.c), laid out as rdma_rxe's struct
 * rxe_queue_buf so that the stock librxe drives them.
 *
 * Index ownership: the side that produces owns the producer index, the
 * side that consumes owns the consumer index. The kernel never trusts an
 * index that user space can write: it keeps its own copy of the index it
 * owns (@index) and masks every index it reads.
 */
enum srnic_queue_type {
	SRNIC_QUEUE_KERNEL,	/* kernel produces and consumes (kernel QP/CQ) */
	SRNIC_QUEUE_TO_USER,	/* kernel produces, user consumes (CQ) */
	SRNIC_QUEUE_FROM_USER,	/* user produces, kernel consumes (SQ/RQ/SRQ) */
};

/**
 * struct srnic_queue - a ring of fixed-size elements
 * @buf: header and elements; vmalloc_user() memory when user-mapped
 * @buf_size: bytes in @buf
 * @log2_elem_size: element size is 1 << this
 * @index_mask: number of slots - 1 (slots are a power of two; one is
 *	always left empty to tell full from empty, as librxe expects)
 * @index: the kernel's private index (see enum srnic_queue_type)
 * @type: who produces and who consumes
 * @mmap: the mmap cookie handed to user space, NULL for kernel queues
 */
struct srnic_queue {
	struct rxe_queue_buf *buf;
	size_t buf_size;
	u32 log2_elem_size;
	u32 index_mask;
	u32 index;
	enum srnic_queue_type type;
	struct srnic_mmap_entry *mmap;
};

int srnic_queue_init(struct srnic_queue *q, u32 *num_elem, size_t elem_size,
		     enum srnic_queue_type type);
void srnic_queue_cleanup(struct srnic_queue *q);
int srnic_queue_publish(struct srnic_queue *q, struct ib_ucontext *uctx,
			struct mminfo *mi);
u32 srnic_queue_producer(const struct srnic_queue *q);
u32 srnic_queue_consumer(const struct srnic_queue *q);
void srnic_queue_advance_producer(struct srnic_queue *q);
void srnic_queue_advance_consumer(struct srnic_queue *q);
u32 srnic_queue_count(const struct srnic_queue *q);
void srnic_queue_reset(struct srnic_queue *q);
int srnic_queue_resize(struct srnic_queue *q, spinlock_t *lock,
		       u32 *num_elem, struct ib_ucontext *uctx,
		       void __user *mi_dst);

static inline bool srnic_queue_empty(const struct srnic_queue *q)
{
	return srnic_queue_count(q) == 0;
}

static inline bool srnic_queue_full(const struct srnic_queue *q)
{
	return srnic_queue_count(q) == q->index_mask;
}

static inline void *srnic_queue_addr(const struct srnic_queue *q, u32 index)
{
	return q->buf->data + ((size_t)(index & q->index_mask) <<
			       q->log2_elem_size);
}

/* srnic_mmap.c: the rings' mmap cookies */
int srnic_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void srnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
struct srnic_mmap_entry *srnic_mmap_entry_insert(struct ib_ucontext *uctx,
						 void *addr, size_t size,
						 u64 *offset);
void srnic_mmap_entry_remove(struct srnic_mmap_entry *entry);

#endif /* SRNIC_QUEUE_H */
