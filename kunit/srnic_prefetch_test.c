// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the WQE prefetch pool (srnic_prefetch.c) in isolation.
 *
 * A "ring" here is an array of u32: element i holds i, and a fence flag.
 * Fetching copies the value into the slot, so the order the gate pops
 * WQEs in shows whether anything was lost, duplicated or reordered.
 *
 * The central case is the scenario of the WQE-prefetch chapter: a pool of
 * 100 slots; QP1 posts 100 WRs whose 10th is fenced behind an outstanding
 * RDMA Read; QP2 arrives while QP1 is blocked.
 */
#include <kunit/test.h>
#include <linux/random.h>

#include "srnic_prefetch.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define RING	256	/* ring slots; holds 255 WQEs */

struct fake_qp {
	struct srnic_pfq pfq;
	bool fenced[RING];
	u32 prod;		/* producer index */
	u32 posted;		/* WQEs posted */
	u32 popped;		/* WQEs the gate took */
	u32 expect;		/* next value the gate must see */
	bool bad;		/* a value came out of order */
};

static int fake_fetch(void *ctx, u32 index, void *slot)
{
	struct fake_qp *qp = ctx;

	*(u32 *)slot = index;
	return qp->fenced[index] ? 1 : 0;
}

static void qp_init(struct kunit *test, struct fake_qp *qp)
{
	memset(qp, 0, sizeof(*qp));
	KUNIT_ASSERT_EQ(test, srnic_pfq_init(&qp->pfq, RING - 1, 0), 0);
}

static void post(struct fake_qp *qp, u32 n)
{
	qp->prod = (qp->prod + n) & (RING - 1);
	qp->posted += n;
}

/* The gate's pops complete at once here: the consumer is what it took. */
static int fetch(struct srnic_pool *pool, struct fake_qp *qp)
{
	return srnic_pf_fetch(pool, &qp->pfq, qp->prod, qp->popped,
			      fake_fetch, qp);
}

/* The gate takes up to @n WQEs, checking ring order. */
static u32 issue(struct srnic_pool *pool, struct fake_qp *qp, u32 n)
{
	u32 done = 0, *wqe;

	while (done < n && (wqe = srnic_pf_head(pool, &qp->pfq, qp->prod))) {
		if (*wqe != (qp->expect & (RING - 1)))
			qp->bad = true;
		qp->expect++;
		srnic_pf_pop(pool, &qp->pfq);
		qp->popped++;
		done++;
	}
	return done;
}

static struct srnic_pool *new_pool(struct kunit *test, u32 nslots, u32 cap,
				   u32 lookahead, u32 fence_ahead)
{
	struct srnic_pool_cfg cfg = { nslots, cap, lookahead, fence_ahead };
	struct srnic_pool *pool = kunit_kzalloc(test, sizeof(*pool),
						GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pool);
	KUNIT_ASSERT_EQ(test, srnic_pool_init(pool, &cfg, sizeof(u32)), 0);
	return pool;
}

/*
 * The fence has cleared: both QPs run to the end of their 100 WRs, QP1
 * issuing @burst1 per turn, QP2 5. Every WQE must come out once, in
 * order, and the pool end empty. Frees everything.
 */
static void run_out_both(struct kunit *test, struct srnic_pool *pool,
			 struct fake_qp *qp1, struct fake_qp *qp2, u32 burst1)
{
	while (qp1->popped < 100 || qp2->popped < 100) {
		fetch(pool, qp1);
		fetch(pool, qp2);
		issue(pool, qp1, burst1);
		issue(pool, qp2, 5);
	}
	KUNIT_EXPECT_FALSE(test, qp1->bad);
	KUNIT_EXPECT_FALSE(test, qp2->bad);
	KUNIT_EXPECT_EQ(test, qp1->popped, 100U);
	KUNIT_EXPECT_EQ(test, qp2->popped, 100U);
	KUNIT_EXPECT_EQ(test, srnic_pool_in_use(pool), 0U);
	srnic_pfq_cleanup(pool, &qp1->pfq);
	srnic_pfq_cleanup(pool, &qp2->pfq);
	srnic_pool_cleanup(pool);
}

static void srnic_prefetch_fenced_scenario(struct kunit *test)
{
	struct srnic_pool *pool = new_pool(test, 100, 100, 100, 2);
	struct fake_qp *qp1 = kunit_kzalloc(test, sizeof(*qp1), GFP_KERNEL);
	struct fake_qp *qp2 = kunit_kzalloc(test, sizeof(*qp2), GFP_KERNEL);
	u32 *head;

	KUNIT_ASSERT_NOT_NULL(test, qp1);
	KUNIT_ASSERT_NOT_NULL(test, qp2);
	qp_init(test, qp1);
	qp_init(test, qp2);

	/* QP1: 100 WRs, the 10th fenced, a Read outstanding. */
	qp1->fenced[9] = true;
	srnic_pf_set_may_block(pool, &qp1->pfq, true);
	post(qp1, 100);
	KUNIT_EXPECT_EQ(test, fetch(pool, qp1), 12);
	/* WRs 1-9 issue; WR 10 blocks on its fence. */
	KUNIT_EXPECT_EQ(test, issue(pool, qp1, 9), 9U);
	head = srnic_pf_head(pool, &qp1->pfq, qp1->prod);
	KUNIT_ASSERT_NOT_NULL(test, head);
	KUNIT_EXPECT_EQ(test, *head, 9U);
	srnic_pf_set_blocked(pool, &qp1->pfq, true);
	KUNIT_EXPECT_EQ(test, fetch(pool, qp1), 0);
	/* Read-ahead stops a small bound past the blocked fence. */
	KUNIT_EXPECT_LE(test, qp1->pfq.count, 1U + 2);
	KUNIT_EXPECT_EQ(test, srnic_pool_pinned(pool), qp1->pfq.count - 1);

	/* QP2 arrives and gets far more than the 9 slots of no policy. */
	post(qp2, 100);
	fetch(pool, qp2);
	KUNIT_EXPECT_GE(test, qp2->pfq.count, 50U);
	KUNIT_EXPECT_EQ(test, qp2->pfq.count, 99U);
	/* It reclaimed QP1's pinned slots, keeping QP1's head. */
	KUNIT_EXPECT_EQ(test, qp1->pfq.count, 1U);
	KUNIT_EXPECT_EQ(test, pool->reclaims, 2ULL);
	KUNIT_EXPECT_EQ(test, qp1->pfq.reclaimed, 2ULL);
	KUNIT_EXPECT_EQ(test, srnic_pool_in_use(pool), 100U);

	/* QP2 runs while QP1 waits. */
	KUNIT_EXPECT_EQ(test, issue(pool, qp2, 60), 60U);

	/* The Read completes: the fence clears, QP1 resumes in order. */
	srnic_pf_set_may_block(pool, &qp1->pfq, false);
	srnic_pf_set_blocked(pool, &qp1->pfq, false);
	run_out_both(test, pool, qp1, qp2, 7);
}

/*
 * The scenario as the driver meets it: QP1's WRs are fetched before its
 * Read issues, when no fence can block, so the read-ahead bound cannot
 * apply yet; QP1 takes its whole cap. When the Read issues the fence may
 * block: the WQEs fetched more than fence_ahead past it go back to the
 * pool at once (reclaims), QP2 finds the slots, and once the fence clears
 * QP1 reads them again and issues every WQE once, in order.
 */
static void srnic_prefetch_fence_after_fetch(struct kunit *test)
{
	struct srnic_pool *pool = new_pool(test, 100, 64, 64, 4);
	struct fake_qp *qp1 = kunit_kzalloc(test, sizeof(*qp1), GFP_KERNEL);
	struct fake_qp *qp2 = kunit_kzalloc(test, sizeof(*qp2), GFP_KERNEL);
	u32 *head;

	KUNIT_ASSERT_NOT_NULL(test, qp1);
	KUNIT_ASSERT_NOT_NULL(test, qp2);
	qp_init(test, qp1);
	qp_init(test, qp2);

	qp1->fenced[9] = true;
	post(qp1, 100);
	KUNIT_EXPECT_EQ(test, fetch(pool, qp1), 64);
	/* WRs 1-8 issue, then the Read (WR 9): a fence may block now. */
	KUNIT_EXPECT_EQ(test, issue(pool, qp1, 9), 9U);
	srnic_pf_set_may_block(pool, &qp1->pfq, true);
	KUNIT_EXPECT_EQ(test, qp1->pfq.count, 1U + 4);
	KUNIT_EXPECT_EQ(test, qp1->pfq.reclaimed, 50ULL);
	KUNIT_EXPECT_EQ(test, pool->reclaims, 50ULL);
	/* WR 10 blocks on its fence; the 4 behind it are pinned. */
	head = srnic_pf_head(pool, &qp1->pfq, qp1->prod);
	KUNIT_ASSERT_NOT_NULL(test, head);
	KUNIT_EXPECT_EQ(test, *head, 9U);
	srnic_pf_set_blocked(pool, &qp1->pfq, true);
	KUNIT_EXPECT_EQ(test, srnic_pool_pinned(pool), 4U);
	KUNIT_EXPECT_EQ(test, fetch(pool, qp1), 0);
	/* QP2 gets its full cap, not the 36 slots QP1 would have left. */
	post(qp2, 100);
	KUNIT_EXPECT_EQ(test, fetch(pool, qp2), 64);
	KUNIT_EXPECT_EQ(test, issue(pool, qp2, 64), 64U);

	/* The Read completes: QP1 re-reads the given-back WQEs, in order. */
	srnic_pf_set_may_block(pool, &qp1->pfq, false);
	srnic_pf_set_blocked(pool, &qp1->pfq, false);
	run_out_both(test, pool, qp1, qp2, 5);
}

static void srnic_prefetch_caps(struct kunit *test)
{
	struct srnic_pool *pool = new_pool(test, 64, 8, 16, 2);
	struct fake_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct srnic_pool_cfg cfg = pool->cfg;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp_init(test, qp);
	post(qp, 100);
	KUNIT_EXPECT_EQ(test, fetch(pool, qp), 8);
	KUNIT_EXPECT_EQ(test, fetch(pool, qp), 0);
	/* Raised live: the QP may fetch more; lookahead still bounds it. */
	cfg.per_qp_cap = 32;
	KUNIT_EXPECT_EQ(test, srnic_pool_set_cfg(pool, &cfg), 0);
	KUNIT_EXPECT_EQ(test, fetch(pool, qp), 8);
	KUNIT_EXPECT_EQ(test, qp->pfq.count, 16U);
	/* Resizing a pool in use is refused; bad values too. */
	cfg.nslots = 128;
	KUNIT_EXPECT_EQ(test, srnic_pool_set_cfg(pool, &cfg), -EBUSY);
	cfg.nslots = 64;
	cfg.per_qp_cap = 65;
	KUNIT_EXPECT_EQ(test, srnic_pool_set_cfg(pool, &cfg), -EINVAL);
	cfg.per_qp_cap = 8;
	cfg.lookahead = 0;
	KUNIT_EXPECT_EQ(test, srnic_pool_set_cfg(pool, &cfg), -EINVAL);
	/* Dropped WQEs are fetched again, in order. */
	KUNIT_EXPECT_EQ(test, srnic_pf_drop_all(pool, &qp->pfq), 16U);
	KUNIT_EXPECT_EQ(test, srnic_pool_in_use(pool), 0U);
	cfg.nslots = 128;
	cfg.lookahead = 16;
	cfg.per_qp_cap = 32;
	KUNIT_EXPECT_EQ(test, srnic_pool_set_cfg(pool, &cfg), 0);
	while (qp->popped < 100) {
		fetch(pool, qp);
		issue(pool, qp, 3);
	}
	KUNIT_EXPECT_FALSE(test, qp->bad);
	srnic_pfq_cleanup(pool, &qp->pfq);
	srnic_pool_cleanup(pool);
}

static void srnic_prefetch_stalls(struct kunit *test)
{
	struct srnic_pool *pool = new_pool(test, 16, 16, 16, 2);
	struct fake_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp_init(test, qp);
	/* Nothing posted: no stall. */
	KUNIT_EXPECT_NULL(test, srnic_pf_head(pool, &qp->pfq, qp->prod));
	KUNIT_EXPECT_EQ(test, pool->stalls, 0ULL);
	/* Posted, not fetched: one stall, however often the gate looks. */
	post(qp, 3);
	KUNIT_EXPECT_NULL(test, srnic_pf_head(pool, &qp->pfq, qp->prod));
	KUNIT_EXPECT_NULL(test, srnic_pf_head(pool, &qp->pfq, qp->prod));
	KUNIT_EXPECT_EQ(test, pool->stalls, 1ULL);
	fetch(pool, qp);
	KUNIT_EXPECT_EQ(test, issue(pool, qp, 3), 3U);
	post(qp, 1);
	KUNIT_EXPECT_NULL(test, srnic_pf_head(pool, &qp->pfq, qp->prod));
	KUNIT_EXPECT_EQ(test, pool->stalls, 2ULL);
	KUNIT_EXPECT_EQ(test, qp->pfq.stalls, 2ULL);
	srnic_pfq_cleanup(pool, &qp->pfq);
	srnic_pool_cleanup(pool);
}

/*
 * Random interleavings of posting, fetching, fences blocking and
 * clearing, and issuing on four QPs sharing a small pool: every WQE comes
 * out exactly once, in ring order, and the pool ends empty.
 */
static void srnic_prefetch_random(struct kunit *test)
{
	struct srnic_pool *pool = new_pool(test, 12, 6, 8, 1);
	struct fake_qp *qps = kunit_kcalloc(test, 4, sizeof(*qps), GFP_KERNEL);
	u32 round, i;

	KUNIT_ASSERT_NOT_NULL(test, qps);
	for (i = 0; i < 4; i++) {
		u32 k;

		qp_init(test, &qps[i]);
		for (k = 0; k < RING; k++)
			qps[i].fenced[k] = !(get_random_u32() % 7);
	}
	for (round = 0; round < 20000; round++) {
		struct fake_qp *qp = &qps[get_random_u32() % 4];

		switch (get_random_u32() % 6) {
		case 0:
			/* The ring holds RING - 1 WQEs at most. */
			if (qp->posted - qp->popped < RING - 9)
				post(qp, 1 + get_random_u32() % 8);
			break;
		case 1:
		case 2:
			fetch(pool, qp);
			break;
		case 3:
			srnic_pf_set_blocked(pool, &qp->pfq,
					     get_random_u32() & 1);
			srnic_pf_set_may_block(pool, &qp->pfq,
					       get_random_u32() & 1);
			break;
		default:
			if (!qp->pfq.blocked)
				issue(pool, qp, 1 + get_random_u32() % 3);
			break;
		}
		KUNIT_ASSERT_LE(test, qp->pfq.count, pool->cfg.per_qp_cap);
	}
	for (i = 0; i < 4; i++) {
		srnic_pf_set_blocked(pool, &qps[i].pfq, false);
		srnic_pf_set_may_block(pool, &qps[i].pfq, false);
	}
	for (round = 0; round < 10000; round++)
		for (i = 0; i < 4; i++) {
			fetch(pool, &qps[i]);
			issue(pool, &qps[i], 4);
		}
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_FALSE_MSG(test, qps[i].bad, "QP %u order", i);
		KUNIT_EXPECT_EQ_MSG(test, qps[i].popped, qps[i].posted,
				    "QP %u", i);
		srnic_pfq_cleanup(pool, &qps[i].pfq);
	}
	KUNIT_EXPECT_EQ(test, srnic_pool_in_use(pool), 0U);
	kunit_info(test, "reclaims %llu stalls %llu", pool->reclaims,
		   pool->stalls);
	srnic_pool_cleanup(pool);
}

/*
 * A hostile producer index: user space writes any value at any time. On an
 * 8-slot ring (7 WQEs at most) under a cap of 64, whatever the index says,
 * the QP never holds more WQEs than the ring has, never reads an element
 * twice, and an index moved back behind what was read is refused
 * (-EPROTO) without changing anything.
 */
static void srnic_prefetch_hostile_prod(struct kunit *test)
{
	struct srnic_pool *pool = new_pool(test, 64, 64, 64, 2);
	struct fake_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	const u32 mask = 7;
	u32 round, before, taken, *wqe;
	int n;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	KUNIT_ASSERT_EQ(test, srnic_pfq_init(&qp->pfq, mask, 0), 0);

	/* A full ring, then the index walked one further: wraps to empty. */
	qp->prod = 7;
	KUNIT_EXPECT_EQ(test, fetch(pool, qp), 7);
	qp->prod = 0;
	KUNIT_EXPECT_EQ(test, fetch(pool, qp), -EPROTO);
	KUNIT_EXPECT_EQ(test, qp->pfq.count, 7U);
	/* Every value: never more than the ring, nothing read twice. */
	for (qp->prod = 0; qp->prod <= mask; qp->prod++) {
		n = fetch(pool, qp);
		KUNIT_EXPECT_TRUE(test, n == 0 || n == -EPROTO);
		KUNIT_EXPECT_EQ(test, qp->pfq.count, 7U);
	}
	KUNIT_EXPECT_EQ(test, srnic_pool_in_use(pool), 7U);

	/* Random indices between random pops: ring order, bounded. */
	for (round = 0; round < 20000; round++) {
		if (get_random_u32() & 1) {
			qp->prod = get_random_u32();
			before = qp->pfq.count;
			taken = (qp->pfq.next - qp->popped) & mask;
			n = fetch(pool, qp);
			if (((qp->prod - qp->popped) & mask) < taken) {
				KUNIT_ASSERT_EQ(test, n, -EPROTO);
				KUNIT_ASSERT_EQ(test, qp->pfq.count, before);
			}
		} else {
			while ((wqe = srnic_pf_head(pool, &qp->pfq,
						    qp->prod))) {
				if (*wqe != (qp->popped & mask))
					qp->bad = true;
				srnic_pf_pop(pool, &qp->pfq);
				qp->popped++;
				if (get_random_u32() & 1)
					break;
			}
		}
		KUNIT_ASSERT_LE(test, qp->pfq.count, mask);
		KUNIT_ASSERT_LE(test, (qp->pfq.next - qp->popped) & mask,
				mask);
		KUNIT_ASSERT_EQ(test, srnic_pool_in_use(pool), qp->pfq.count);
	}
	KUNIT_EXPECT_FALSE(test, qp->bad);
	srnic_pfq_cleanup(pool, &qp->pfq);
	KUNIT_EXPECT_EQ(test, srnic_pool_in_use(pool), 0U);
	srnic_pool_cleanup(pool);
}

static struct kunit_case srnic_prefetch_cases[] = {
	KUNIT_CASE(srnic_prefetch_fenced_scenario),
	KUNIT_CASE(srnic_prefetch_fence_after_fetch),
	KUNIT_CASE(srnic_prefetch_caps),
	KUNIT_CASE(srnic_prefetch_stalls),
	KUNIT_CASE(srnic_prefetch_random),
	KUNIT_CASE(srnic_prefetch_hostile_prod),
	{}
};

static struct kunit_suite srnic_prefetch_suite = {
	.name = "srnic_prefetch",
	.test_cases = srnic_prefetch_cases,
};

kunit_test_suite(srnic_prefetch_suite);

MODULE_DESCRIPTION("KUnit tests for the srnic WQE prefetch pool");
MODULE_LICENSE("GPL");
