/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic: the WQE prefetch pool, the software analogue of an RNIC's on-chip
 * WQE cache.
 *
 * A device has one pool of a fixed number of slots. The prefetch stage
 * reads each QP's send WQEs ahead of its consumer index into slots (each
 * WQE read from the ring once, validated, copied); the transmit gate takes
 * them from the head in ring order. The pool is shared, so its allocation
 * is a policy:
 *
 *  - a QP holds at most per_qp_cap slots and reads at most lookahead WQEs
 *    ahead of its head;
 *  - behind a fenced WQE that cannot issue (Read/Atomic outstanding), it
 *    reads at most fence_ahead more: slots behind a blocked fence are
 *    pinned, unusable;
 *  - a QP that finds the pool empty reclaims slots that another QP holds
 *    but cannot use (behind its blocked fence), youngest first; the
 *    reclaimed WQEs are read again from the ring later, which stays the
 *    source of truth (reclaim, not eviction: nothing is lost);
 *  - the gate reaching a WQE that is posted but not fetched yet is a
 *    stall, counted, never a silent wait.
 *
 * The pool is plain data under one lock: the prefetch worker, the gate
 * and the KUnit suite drive it the same way.
 */
#ifndef SRNIC_PREFETCH_H
#define SRNIC_PREFETCH_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/**
 * struct srnic_pool_cfg - the pool's tunables
 * @nslots: slots in the pool
 * @per_qp_cap: most slots one QP may hold
 * @lookahead: most WQEs a QP reads ahead of its head
 * @fence_ahead: most WQEs read past a fenced WQE that may block
 */
struct srnic_pool_cfg {
	u32 nslots;
	u32 per_qp_cap;
	u32 lookahead;
	u32 fence_ahead;
};

/**
 * struct srnic_pool - the device's prefetch pool
 * @lock: protects everything below and every member QP's state
 * @cfg: the tunables
 * @slot_size: bytes per slot (the largest validated WQE)
 * @slots: slot memory, @cfg.nslots * @slot_size bytes
 * @free: free slot indices, a stack
 * @nfree: entries in @free
 * @holders: QPs holding at least one slot
 * @fetched: WQEs read into slots
 * @stalls: times the gate found its next WQE posted but not fetched
 * @reclaims: slots reclaimed from a QP that could not use them
 */
struct srnic_pool {
	spinlock_t lock;	/* see above */
	struct srnic_pool_cfg cfg;
	u32 slot_size;
	u8 *slots;
	u32 *free;
	u32 nfree;
	struct list_head holders;
	u64 fetched;
	u64 stalls;
	u64 reclaims;
};

/**
 * struct srnic_pfq - one QP's share of the pool
 * @node: entry in srnic_pool::holders while @count > 0
 * @fifo: slot indices of the fetched WQEs, head first (ring order)
 * @fifo_mask: capacity of @fifo - 1 (a power of two >= any cap)
 * @head: position of the head in @fifo
 * @count: WQEs fetched and not yet taken by the gate
 * @next: ring index of the next WQE to fetch
 * @ring_mask: the send ring's index mask
 * @fence_at: fetched WQEs up to and including the first fenced one, 0 if
 *	none is fetched
 * @may_block: a fence would block now (Read/Atomic outstanding)
 * @blocked: the gate found the head fenced and blocked
 * @stall_mark: ring index + 1 of the last stall counted, so a stall is
 *	counted once per WQE however often the gate looks
 * @stalls: this QP's stalls
 * @reclaimed: slots reclaimed from this QP
 */
struct srnic_pfq {
	struct list_head node;
	u32 *fifo;
	u32 fifo_mask;
	u32 head;
	u32 count;
	u32 next;
	u32 ring_mask;
	u32 fence_at;
	bool may_block;
	bool blocked;
	u32 stall_mark;
	u64 stalls;
	u64 reclaimed;
};

/*
 * Reads ring element @index into @slot: validated, in kernel memory.
 * Returns 0, 1 if the WQE is fenced, or -errno for a WQE the QP cannot
 * execute (fetching stops there; the caller fails the QP).
 */
typedef int (*srnic_pf_fetch_t)(void *ctx, u32 index, void *slot);

int srnic_pool_init(struct srnic_pool *pool, const struct srnic_pool_cfg *cfg,
		    u32 slot_size);
void srnic_pool_cleanup(struct srnic_pool *pool);
int srnic_pool_set_cfg(struct srnic_pool *pool,
		       const struct srnic_pool_cfg *cfg);

int srnic_pfq_init(struct srnic_pfq *pfq, u32 ring_mask, u32 start);
void srnic_pfq_cleanup(struct srnic_pool *pool, struct srnic_pfq *pfq);
int srnic_pf_fetch(struct srnic_pool *pool, struct srnic_pfq *pfq, u32 prod,
		   u32 cons, srnic_pf_fetch_t fetch, void *ctx);
void *srnic_pf_head(struct srnic_pool *pool, struct srnic_pfq *pfq,
		    u32 prod);
void srnic_pf_pop(struct srnic_pool *pool, struct srnic_pfq *pfq);
void srnic_pf_set_blocked(struct srnic_pool *pool, struct srnic_pfq *pfq,
			  bool blocked);
void srnic_pf_set_may_block(struct srnic_pool *pool, struct srnic_pfq *pfq,
			    bool may_block);
u32 srnic_pf_drop_all(struct srnic_pool *pool, struct srnic_pfq *pfq);
void srnic_pf_restart(struct srnic_pool *pool, struct srnic_pfq *pfq,
		      u32 start);
u32 srnic_pool_in_use(struct srnic_pool *pool);
u32 srnic_pool_pinned(struct srnic_pool *pool);

#endif /* SRNIC_PREFETCH_H */
