// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the WQE prefetch pool (see srnic_prefetch.h for the policy).
 *
 * Locking: every function takes the pool lock with bottom halves off: the
 * prefetch worker runs in process context, the transmit gate in softirq.
 * The fetch callback runs under the lock and must not sleep; it reads the
 * ring, which is kernel memory (mapped into the process, not copied from
 * it), so it need not.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <kunit/visibility.h>

#include "srnic_prefetch.h"

/* A FIFO entry: the slot index, and whether its WQE is fenced. */
#define PF_FENCED	BIT(31)
#define PF_SLOT(e)	((e) & ~PF_FENCED)

static bool srnic_pool_cfg_ok(const struct srnic_pool_cfg *cfg)
{
	return cfg->nslots >= 1 && cfg->nslots <= (1U << 20) &&
	       cfg->per_qp_cap >= 1 && cfg->per_qp_cap <= cfg->nslots &&
	       cfg->lookahead >= 1;
}

static int srnic_pool_alloc(struct srnic_pool *pool, u32 nslots)
{
	u32 i;

	pool->slots = vzalloc(array_size(nslots, pool->slot_size));
	pool->free = kvmalloc_array(nslots, sizeof(*pool->free), GFP_KERNEL);
	if (!pool->slots || !pool->free) {
		vfree(pool->slots);
		kvfree(pool->free);
		return -ENOMEM;
	}
	/* Lowest index on top: deterministic, which the tests rely on. */
	for (i = 0; i < nslots; i++)
		pool->free[i] = nslots - 1 - i;
	pool->nfree = nslots;
	return 0;
}

/**
 * srnic_pool_init() - set up a device's pool
 * @pool: the pool
 * @cfg: tunables; per_qp_cap must not exceed nslots
 * @slot_size: bytes per slot
 *
 * Context: process context.
 * Return: 0, -EINVAL for a bad configuration, -ENOMEM.
 */
int srnic_pool_init(struct srnic_pool *pool, const struct srnic_pool_cfg *cfg,
		    u32 slot_size)
{
	if (!srnic_pool_cfg_ok(cfg) || !slot_size)
		return -EINVAL;
	memset(pool, 0, sizeof(*pool));
	spin_lock_init(&pool->lock);
	INIT_LIST_HEAD(&pool->holders);
	pool->cfg = *cfg;
	pool->slot_size = slot_size;
	return srnic_pool_alloc(pool, cfg->nslots);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pool_init);

/**
 * srnic_pool_cleanup() - free a pool; every QP has left it
 * @pool: the pool
 *
 * Context: process context.
 */
void srnic_pool_cleanup(struct srnic_pool *pool)
{
	WARN_ON_ONCE(!list_empty(&pool->holders));
	vfree(pool->slots);
	kvfree(pool->free);
	pool->slots = NULL;
	pool->free = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pool_cleanup);

/**
 * srnic_pool_set_cfg() - change the tunables of a live pool
 * @pool: the pool
 * @cfg: the new tunables
 *
 * The cap, lookahead and fence bound apply at once (a QP over a lowered
 * cap keeps what it holds and fetches no more until it is under it).
 * The slot count can only change while no slot is in use.
 *
 * Context: process context.
 * Return: 0, -EINVAL for a bad configuration, -EBUSY to resize a pool in
 * use, -ENOMEM.
 */
int srnic_pool_set_cfg(struct srnic_pool *pool,
		       const struct srnic_pool_cfg *cfg)
{
	struct srnic_pool old;
	int err;

	if (!srnic_pool_cfg_ok(cfg))
		return -EINVAL;
	if (cfg->nslots == pool->cfg.nslots) {
		spin_lock_bh(&pool->lock);
		pool->cfg = *cfg;
		spin_unlock_bh(&pool->lock);
		return 0;
	}

	old.slot_size = pool->slot_size;
	err = srnic_pool_alloc(&old, cfg->nslots);
	if (err)
		return err;
	spin_lock_bh(&pool->lock);
	if (pool->nfree != pool->cfg.nslots) {
		spin_unlock_bh(&pool->lock);
		vfree(old.slots);
		kvfree(old.free);
		return -EBUSY;
	}
	swap(pool->slots, old.slots);
	swap(pool->free, old.free);
	pool->nfree = old.nfree;
	pool->cfg = *cfg;
	spin_unlock_bh(&pool->lock);
	vfree(old.slots);
	kvfree(old.free);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pool_set_cfg);

/**
 * srnic_pfq_init() - set up a QP's share
 * @pfq: the QP's state
 * @ring_mask: its send ring's index mask (slots - 1)
 * @start: the ring index fetching starts at (the consumer index)
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int srnic_pfq_init(struct srnic_pfq *pfq, u32 ring_mask, u32 start)
{
	memset(pfq, 0, sizeof(*pfq));
	INIT_LIST_HEAD(&pfq->node);
	/* Never more fetched than the ring holds. */
	pfq->fifo_mask = ring_mask;
	pfq->fifo = kvmalloc_array(ring_mask + 1, sizeof(*pfq->fifo),
				   GFP_KERNEL);
	if (!pfq->fifo)
		return -ENOMEM;
	pfq->ring_mask = ring_mask;
	pfq->next = start & ring_mask;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pfq_init);

/**
 * srnic_pfq_cleanup() - a QP leaves the pool, returning its slots
 * @pool: the pool
 * @pfq: the QP's state
 *
 * Context: process context.
 */
void srnic_pfq_cleanup(struct srnic_pool *pool, struct srnic_pfq *pfq)
{
	srnic_pf_drop_all(pool, pfq);
	kvfree(pfq->fifo);
	pfq->fifo = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pfq_cleanup);

static void *srnic_pool_slot(struct srnic_pool *pool, u32 slot)
{
	return pool->slots + (size_t)slot * pool->slot_size;
}

static u32 srnic_pfq_entry(const struct srnic_pfq *pfq, u32 pos)
{
	return pfq->fifo[(pfq->head + pos) & pfq->fifo_mask];
}

/* Position + 1 of the first fenced WQE at or after @from, 0 if none. */
static u32 srnic_pfq_find_fence(const struct srnic_pfq *pfq, u32 from)
{
	u32 pos;

	for (pos = from; pos < pfq->count; pos++)
		if (srnic_pfq_entry(pfq, pos) & PF_FENCED)
			return pos + 1;
	return 0;
}

/* Caller holds the lock. Gives back @pfq's youngest fetched WQE. */
static void srnic_pfq_unfetch_tail(struct srnic_pool *pool,
				   struct srnic_pfq *pfq)
{
	u32 e = srnic_pfq_entry(pfq, pfq->count - 1);

	pool->free[pool->nfree++] = PF_SLOT(e);
	pfq->count--;
	pfq->next = (pfq->next - 1) & pfq->ring_mask;
	if (pfq->fence_at > pfq->count)
		pfq->fence_at = 0;
	if (!pfq->count)
		list_del_init(&pfq->node);
}

/*
 * Caller holds the lock; the pool is empty and @taker wants a slot. Take
 * one that a QP holds but cannot use: behind its blocked fence. From the
 * QP pinning the most, its youngest WQE.
 */
static bool srnic_pool_reclaim(struct srnic_pool *pool,
			       struct srnic_pfq *taker)
{
	struct srnic_pfq *pfq, *victim = NULL;

	list_for_each_entry(pfq, &pool->holders, node) {
		if (pfq == taker || !pfq->blocked || pfq->count < 2)
			continue;
		if (!victim || pfq->count > victim->count)
			victim = pfq;
	}
	if (!victim)
		return false;
	srnic_pfq_unfetch_tail(pool, victim);
	victim->reclaimed++;
	pool->reclaims++;
	return true;
}

/*
 * Caller holds the lock. A fence may block now: give back the WQEs
 * fetched more than fence_ahead past it (fetched before the Read or
 * Atomic issued, when nothing could block). They are reclaimed from a QP
 * that cannot use them; it reads them again from the ring once the fence
 * clears.
 */
static void srnic_pfq_trim(struct srnic_pool *pool, struct srnic_pfq *pfq)
{
	u32 keep;

	if (!(pfq->may_block || pfq->blocked) || !pfq->fence_at)
		return;
	keep = pfq->fence_at + pool->cfg.fence_ahead;
	while (pfq->count > keep) {
		srnic_pfq_unfetch_tail(pool, pfq);
		pfq->reclaimed++;
		pool->reclaims++;
	}
}

/* Caller holds the lock: how many WQEs @pfq may hold now. */
static u32 srnic_pfq_limit(const struct srnic_pool *pool,
			   const struct srnic_pfq *pfq)
{
	u32 limit = min(pool->cfg.per_qp_cap, pool->cfg.lookahead);

	if ((pfq->may_block || pfq->blocked) && pfq->fence_at)
		limit = min(limit, pfq->fence_at + pool->cfg.fence_ahead);
	return limit;
}

/**
 * srnic_pf_fetch() - read a QP's posted WQEs ahead into the pool
 * @pool: the pool
 * @pfq: the QP's state
 * @prod: the ring's producer index, as user space wrote it
 * @cons: the ring's consumer index: the oldest WQE not completed (the
 *	kernel's own index, never read from the ring)
 * @fetch: reads and validates one ring element into a slot
 * @ctx: for @fetch
 *
 * Fetches in ring order while the QP is under its limits and slots are
 * free or reclaimable. The ring holds (@prod - @cons) & mask WQEs; the
 * ones from @cons up to the fetch position were read already (issued or
 * fetched), so at most the rest is read. However @prod moves, no element
 * is read twice and the QP never holds more WQEs than its ring (and FIFO)
 * has slots.
 *
 * Context: any; never sleeps (nor may @fetch).
 * Return: WQEs fetched, the -errno of @fetch for an invalid WQE (the
 * WQEs before it stay fetched), or -EPROTO if @prod went back behind
 * WQEs already read: the ring is inconsistent.
 */
int srnic_pf_fetch(struct srnic_pool *pool, struct srnic_pfq *pfq, u32 prod,
		   u32 cons, srnic_pf_fetch_t fetch, void *ctx)
{
	u32 slot, posted, taken, avail, n = 0;
	int ret;

	spin_lock_bh(&pool->lock);
	posted = (prod - cons) & pfq->ring_mask;
	taken = (pfq->next - cons) & pfq->ring_mask;
	if (taken > posted) {
		spin_unlock_bh(&pool->lock);
		return -EPROTO;
	}
	avail = posted - taken;
	while (n < avail && pfq->count < srnic_pfq_limit(pool, pfq)) {
		if (!pool->nfree && !srnic_pool_reclaim(pool, pfq))
			break;
		slot = pool->free[--pool->nfree];
		ret = fetch(ctx, pfq->next, srnic_pool_slot(pool, slot));
		if (ret < 0) {
			pool->free[pool->nfree++] = slot;
			spin_unlock_bh(&pool->lock);
			return ret;
		}
		if (ret > 0) {
			slot |= PF_FENCED;
			if (!pfq->fence_at)
				pfq->fence_at = pfq->count + 1;
		}
		pfq->fifo[(pfq->head + pfq->count) & pfq->fifo_mask] = slot;
		if (!pfq->count++)
			list_add_tail(&pfq->node, &pool->holders);
		pfq->next = (pfq->next + 1) & pfq->ring_mask;
		pool->fetched++;
		n++;
	}
	spin_unlock_bh(&pool->lock);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pf_fetch);

/**
 * srnic_pf_head() - the WQE the gate issues next
 * @pool: the pool
 * @pfq: the QP's state
 * @prod: the ring's producer index
 *
 * Finding work posted but not fetched yet is a stall: counted once per
 * WQE.
 *
 * Context: any; never sleeps.
 * Return: the head WQE's slot (valid until srnic_pf_pop() or a drop),
 * or NULL.
 */
void *srnic_pf_head(struct srnic_pool *pool, struct srnic_pfq *pfq, u32 prod)
{
	void *wqe = NULL;

	spin_lock_bh(&pool->lock);
	if (pfq->count) {
		wqe = srnic_pool_slot(pool, PF_SLOT(srnic_pfq_entry(pfq, 0)));
	} else if (pfq->next != (prod & pfq->ring_mask) &&
		   pfq->stall_mark != pfq->next + 1) {
		pfq->stall_mark = pfq->next + 1;
		pfq->stalls++;
		pool->stalls++;
	}
	spin_unlock_bh(&pool->lock);
	return wqe;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pf_head);

/**
 * srnic_pf_pop() - the gate took the head WQE; free its slot
 * @pool: the pool
 * @pfq: the QP's state; must have a head
 *
 * Context: any; never sleeps.
 */
void srnic_pf_pop(struct srnic_pool *pool, struct srnic_pfq *pfq)
{
	spin_lock_bh(&pool->lock);
	if (!WARN_ON_ONCE(!pfq->count)) {
		pool->free[pool->nfree++] = PF_SLOT(srnic_pfq_entry(pfq, 0));
		pfq->head = (pfq->head + 1) & pfq->fifo_mask;
		pfq->count--;
		pfq->blocked = false;
		if (pfq->fence_at > 1)
			pfq->fence_at--;
		else if (pfq->fence_at == 1)
			pfq->fence_at = srnic_pfq_find_fence(pfq, 0);
		if (!pfq->count)
			list_del_init(&pfq->node);
	}
	spin_unlock_bh(&pool->lock);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pf_pop);

/**
 * srnic_pf_set_blocked() - the gate found the head fenced and blocked,
 *	or no longer
 * @pool: the pool
 * @pfq: the QP's state
 * @blocked: whether the head cannot issue
 *
 * While blocked, every WQE the QP holds but its head is pinned: it may be
 * reclaimed by a QP that needs the slot.
 *
 * Context: any; never sleeps.
 */
void srnic_pf_set_blocked(struct srnic_pool *pool, struct srnic_pfq *pfq,
			  bool blocked)
{
	spin_lock_bh(&pool->lock);
	pfq->blocked = blocked && pfq->count;
	srnic_pfq_trim(pool, pfq);
	spin_unlock_bh(&pool->lock);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pf_set_blocked);

/**
 * srnic_pf_set_may_block() - whether a fence would block now
 * @pool: the pool
 * @pfq: the QP's state
 * @may_block: the QP has a Read or Atomic outstanding
 *
 * While a fence may block, read-ahead stops fence_ahead WQEs past the
 * first fenced WQE fetched, and WQEs fetched beyond that before are given
 * back (counted as reclaims).
 *
 * Context: any; never sleeps.
 */
void srnic_pf_set_may_block(struct srnic_pool *pool, struct srnic_pfq *pfq,
			    bool may_block)
{
	spin_lock_bh(&pool->lock);
	pfq->may_block = may_block;
	srnic_pfq_trim(pool, pfq);
	spin_unlock_bh(&pool->lock);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pf_set_may_block);

/**
 * srnic_pf_drop_all() - give back every slot of a QP, unfetching its WQEs
 * @pool: the pool
 * @pfq: the QP's state; fetching resumes at its old head
 *
 * Context: any; never sleeps.
 * Return: WQEs unfetched.
 */
u32 srnic_pf_drop_all(struct srnic_pool *pool, struct srnic_pfq *pfq)
{
	u32 n;

	spin_lock_bh(&pool->lock);
	n = pfq->count;
	while (pfq->count)
		srnic_pfq_unfetch_tail(pool, pfq);
	pfq->blocked = false;
	pfq->fence_at = 0;
	spin_unlock_bh(&pool->lock);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pf_drop_all);

/**
 * srnic_pf_restart() - give back every slot and fetch next from @start
 * @pool: the pool
 * @pfq: the QP's state
 * @start: ring index of the next WQE to fetch (the ring was reset or
 *	flushed up to here)
 *
 * Context: any; never sleeps.
 */
void srnic_pf_restart(struct srnic_pool *pool, struct srnic_pfq *pfq,
		      u32 start)
{
	srnic_pf_drop_all(pool, pfq);
	spin_lock_bh(&pool->lock);
	pfq->next = start & pfq->ring_mask;
	pfq->stall_mark = 0;
	pfq->may_block = false;
	spin_unlock_bh(&pool->lock);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pf_restart);

/**
 * srnic_pool_in_use() - slots holding a fetched WQE
 * @pool: the pool
 *
 * Context: any.
 * Return: the count.
 */
u32 srnic_pool_in_use(struct srnic_pool *pool)
{
	u32 n;

	spin_lock_bh(&pool->lock);
	n = pool->cfg.nslots - pool->nfree;
	spin_unlock_bh(&pool->lock);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pool_in_use);

/**
 * srnic_pool_pinned() - slots held behind a blocked fence
 * @pool: the pool
 *
 * Context: any.
 * Return: the count.
 */
u32 srnic_pool_pinned(struct srnic_pool *pool)
{
	struct srnic_pfq *pfq;
	u32 n = 0;

	spin_lock_bh(&pool->lock);
	list_for_each_entry(pfq, &pool->holders, node)
		if (pfq->blocked)
			n += pfq->count - 1;
	spin_unlock_bh(&pool->lock);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_pool_pinned);
