// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: rings shared with user space in rdma_rxe's layout.
 *
 * struct rxe_queue_buf (uapi rdma_user_rxe.h) is a header holding
 * log2_elem_size, index_mask and the producer and consumer indices on
 * separate cache lines, followed by 2^n elements. Indices are stored
 * already masked; the ring is full when producer + 1 == consumer.
 *
 * User space can write the whole buffer at any time. So the kernel keeps
 * the index it owns in struct srnic_queue::index and only ever stores that
 * to the buffer; it masks every index it loads; and it never reads the
 * header's geometry back.
 */
#include <linux/vmalloc.h>
#include <linux/log2.h>

#include "srnic_queue.h"

/**
 * srnic_queue_init() - allocate a ring
 * @q: the queue to set up
 * @num_elem: in: elements wanted (>= 1); out: usable capacity
 * @elem_size: bytes per element; rounded up to a power of two
 * @type: who produces and who consumes
 *
 * Context: process context, may sleep.
 * Return: 0 or -errno.
 */
int srnic_queue_init(struct srnic_queue *q, u32 *num_elem, size_t elem_size,
		     enum srnic_queue_type type)
{
	u32 slots;

	if (!*num_elem || *num_elem >= (1U << 24) || !elem_size)
		return -EINVAL;

	slots = roundup_pow_of_two(*num_elem + 1);
	q->log2_elem_size = order_base_2(elem_size);
	q->index_mask = slots - 1;
	q->type = type;
	q->index = 0;
	q->mmap = NULL;
	q->buf_size = sizeof(*q->buf) + ((size_t)slots << q->log2_elem_size);

	/* Zeroed, page-backed and mappable as is. */
	q->buf = vmalloc_user(q->buf_size);
	if (!q->buf)
		return -ENOMEM;
	q->buf->log2_elem_size = q->log2_elem_size;
	q->buf->index_mask = q->index_mask;
	*num_elem = q->index_mask;
	return 0;
}

/**
 * srnic_queue_publish() - make a ring mappable by its owner's process
 * @q: the queue
 * @uctx: the process's context
 * @mi: filled with the mmap offset cookie and size for the response
 *
 * Context: process context, may sleep.
 * Return: 0 or -errno.
 */
int srnic_queue_publish(struct srnic_queue *q, struct ib_ucontext *uctx,
			struct mminfo *mi)
{
	u64 offset;

	q->mmap = srnic_mmap_entry_insert(uctx, q->buf, q->buf_size, &offset);
	if (IS_ERR(q->mmap)) {
		int err = PTR_ERR(q->mmap);

		q->mmap = NULL;
		return err;
	}
	mi->offset = offset;
	mi->size = q->buf_size;
	mi->pad = 0;
	return 0;
}

/**
 * srnic_queue_cleanup() - release a ring
 * @q: the queue
 *
 * A published ring's memory goes with its mmap entry (srnic_mmap.c); a
 * process may keep it mapped, holding the pages until it unmaps.
 *
 * Context: process context, may sleep.
 */
void srnic_queue_cleanup(struct srnic_queue *q)
{
	if (q->mmap)
		srnic_mmap_entry_remove(q->mmap);	/* owns q->buf */
	else
		vfree(q->buf);
	q->mmap = NULL;
	q->buf = NULL;
}

/**
 * srnic_queue_producer() - the producer index
 * @q: the queue
 *
 * For a ring user space produces into, the loaded index is masked and
 * the load is an acquire, so the element stores it covers are visible.
 *
 * Context: any; caller serialises against other consumers.
 * Return: the producer index, within the ring.
 */
u32 srnic_queue_producer(const struct srnic_queue *q)
{
	switch (q->type) {
	case SRNIC_QUEUE_TO_USER:
		return q->index;
	case SRNIC_QUEUE_FROM_USER:
		/* Pairs with librxe's release store after writing the WQE. */
		return smp_load_acquire(&q->buf->producer_index) &
		       q->index_mask;
	default:
		/* Kernel producers post on any CPU. */
		return smp_load_acquire(&q->buf->producer_index);
	}
}

/**
 * srnic_queue_consumer() - the consumer index
 * @q: the queue
 *
 * Context: any; caller serialises against other producers.
 * Return: the consumer index, within the ring.
 */
u32 srnic_queue_consumer(const struct srnic_queue *q)
{
	switch (q->type) {
	case SRNIC_QUEUE_TO_USER:
		/* Pairs with librxe's release store after reading the CQE. */
		return smp_load_acquire(&q->buf->consumer_index) &
		       q->index_mask;
	case SRNIC_QUEUE_FROM_USER:
		return q->index;
	default:
		return q->buf->consumer_index;
	}
}

/**
 * srnic_queue_count() - elements between consumer and producer
 * @q: the queue
 *
 * Context: any.
 * Return: the number of produced, unconsumed elements.
 */
u32 srnic_queue_count(const struct srnic_queue *q)
{
	return (srnic_queue_producer(q) - srnic_queue_consumer(q)) &
	       q->index_mask;
}

/**
 * srnic_queue_advance_producer() - publish the element at the producer index
 * @q: a queue the kernel produces into
 *
 * The release store orders every store to the element (and everything
 * the caller stored before, such as placed payload) before the index.
 *
 * Context: any; caller holds the producer lock.
 */
void srnic_queue_advance_producer(struct srnic_queue *q)
{
	u32 next;

	if (WARN_ON_ONCE(q->type == SRNIC_QUEUE_FROM_USER))
		return;
	next = (srnic_queue_producer(q) + 1) & q->index_mask;
	if (q->type == SRNIC_QUEUE_TO_USER)
		q->index = next;
	/* The element (and what the caller stored before) first. */
	smp_store_release(&q->buf->producer_index, next);
}

/**
 * srnic_queue_advance_consumer() - release the element at the consumer index
 * @q: a queue the kernel consumes from
 *
 * Context: any; caller holds the consumer lock.
 */
void srnic_queue_advance_consumer(struct srnic_queue *q)
{
	u32 next;

	if (WARN_ON_ONCE(q->type == SRNIC_QUEUE_TO_USER))
		return;
	next = (srnic_queue_consumer(q) + 1) & q->index_mask;
	if (q->type == SRNIC_QUEUE_FROM_USER)
		q->index = next;
	/* Done reading the element before the producer may reuse it. */
	smp_store_release(&q->buf->consumer_index, next);
}

/**
 * srnic_queue_reset() - empty a ring (QP reset)
 * @q: the queue
 *
 * Context: caller excludes producers and consumers.
 */
void srnic_queue_reset(struct srnic_queue *q)
{
	q->index = 0;
	WRITE_ONCE(q->buf->producer_index, 0);
	WRITE_ONCE(q->buf->consumer_index, 0);
	memset(q->buf->data, 0, (size_t)(q->index_mask + 1) <<
	       q->log2_elem_size);
}

/**
 * srnic_queue_resize() - move a ring's elements into a ring of a new size
 * @q: the queue; keeps its type and element size
 * @lock: taken while elements move, excluding the kernel side
 * @num_elem: in: elements wanted; out: new capacity
 * @uctx: for a user queue, the process's context, else NULL
 * @mi_dst: for a user queue, where the process wants the new ring's
 *	struct mminfo (its mmap cookie and size)
 *
 * A user queue's new ring is published and the process told of it before
 * the queue moves to it: a failure to publish or to write @mi_dst leaves
 * the queue on the ring the process has mapped. Fails with -EINVAL if
 * the elements present do not fit. On failure @q is unchanged.
 *
 * Context: process context, may sleep; @lock must not be held.
 * Return: 0 or -errno.
 */
int srnic_queue_resize(struct srnic_queue *q, spinlock_t *lock,
		       u32 *num_elem, struct ib_ucontext *uctx,
		       void __user *mi_dst)
{
	struct srnic_queue nq;
	size_t esz = (size_t)1 << q->log2_elem_size;
	struct mminfo mi;
	u32 n, i, cons;
	int err;

	err = srnic_queue_init(&nq, num_elem, esz, q->type);
	if (err)
		return err;
	if (uctx) {
		err = srnic_queue_publish(&nq, uctx, &mi);
		if (err)
			goto out_new;
		if (copy_to_user(mi_dst, &mi, sizeof(mi))) {
			err = -EFAULT;
			goto out_new;
		}
	}

	spin_lock_irq(lock);
	n = srnic_queue_count(q);
	if (n > nq.index_mask) {
		spin_unlock_irq(lock);
		err = -EINVAL;
		goto out_new;
	}
	cons = srnic_queue_consumer(q);
	for (i = 0; i < n; i++)
		memcpy(srnic_queue_addr(&nq, i),
		       srnic_queue_addr(q, cons + i), esz);
	nq.buf->producer_index = n;
	nq.buf->consumer_index = 0;
	nq.index = q->type == SRNIC_QUEUE_TO_USER ? n : 0;
	swap(*q, nq);
	spin_unlock_irq(lock);

	/* The old ring: unpublished and freed (a mapping keeps its pages). */
	srnic_queue_cleanup(&nq);
	return 0;

out_new:
	/* The new ring, never used: withdrawn (if published) and freed. */
	srnic_queue_cleanup(&nq);
	return err;
}
