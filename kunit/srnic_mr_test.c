// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: memory region keys and access checks (srnic_mr.c): lookup by
 * lkey/rkey, stale keys, PD match, access rights, bounds including
 * zero-length and last-byte accesses and address overflow, the object
 * limit.
 */
#include <kunit/test.h>

#include "srnic.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static void srnic_mr_range(struct kunit *test)
{
	static const struct {
		u64 start, length, addr, len;
		bool ok;
		const char *what;
	} c[] = {
		{ 0x1000, 0x100, 0x1000, 0x100, true, "whole region" },
		{ 0x1000, 0x100, 0x1000, 0x101, false, "one byte too long" },
		{ 0x1000, 0x100, 0x10ff, 1, true, "last byte" },
		{ 0x1000, 0x100, 0x1100, 1, false, "one past the end" },
		{ 0x1000, 0x100, 0x0fff, 1, false, "one before the start" },
		{ 0x1000, 0x100, 0x0fff, 2, false, "straddles the start" },
		{ 0x1000, 0x100, 0x10f0, 0x20, false, "straddles the end" },
		{ 0x1000, 0x100, 0x1000, 0, true, "zero length at start" },
		{ 0x1000, 0x100, 0xdead0000, 0, true, "zero length anywhere" },
		{ 0x1000, 0, 0x1000, 1, false, "empty region" },
		{ U64_MAX - 7, 8, U64_MAX - 1, 4, false, "end wraps past 2^64" },
		{ U64_MAX - 7, 8, U64_MAX, 1, true, "last byte of the space" },
		{ 0x1000, 0x100, 0x1010, U64_MAX, false, "huge length" },
		{ 0, U64_MAX, U64_MAX - 1, 1, true, "DMA MR" },
		{ 0, U64_MAX, 0, U64_MAX, true, "DMA MR, all of it" },
		{ 0, U64_MAX, 1, U64_MAX, false, "DMA MR, one too far" },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    srnic_mr_range_ok(c[i].start, c[i].length,
						      c[i].addr, c[i].len),
				    c[i].ok, "%s", c[i].what);
}

static void srnic_mr_rights(struct kunit *test)
{
	struct ib_pd pd_a, pd_b;
	struct srnic_mr mr = {
		.pd = &pd_a, .iova = 0x10000, .length = 0x1000,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ,
	};

	KUNIT_EXPECT_EQ(test, srnic_mr_check(&mr, &pd_a, 0x10000, 16, 0), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_check(&mr, &pd_a, 0x10000, 16,
					     IB_ACCESS_LOCAL_WRITE), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_check(&mr, &pd_a, 0x10000, 16,
					     IB_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_check(&mr, &pd_b, 0x10000, 16, 0),
			-EPERM);
	KUNIT_EXPECT_EQ(test, srnic_mr_check(&mr, &pd_a, 0x10000, 16,
					     IB_ACCESS_REMOTE_WRITE), -EACCES);
	KUNIT_EXPECT_EQ(test, srnic_mr_check(&mr, &pd_a, 0x10000, 8,
					     IB_ACCESS_REMOTE_ATOMIC), -EACCES);
	KUNIT_EXPECT_EQ(test, srnic_mr_check(&mr, &pd_a, 0x10ff8, 16,
					     IB_ACCESS_REMOTE_READ), -ERANGE);
	KUNIT_EXPECT_EQ(test, srnic_mr_check(&mr, &pd_a, 0x10ff8, 8,
					     IB_ACCESS_REMOTE_READ), 0);
	/* PD first, then rights, then range. */
	KUNIT_EXPECT_EQ(test, srnic_mr_check(&mr, &pd_b, 0, 1,
					     IB_ACCESS_REMOTE_WRITE), -EPERM);
	KUNIT_EXPECT_EQ(test, srnic_mr_check(&mr, &pd_a, 0, 1,
					     IB_ACCESS_REMOTE_WRITE), -EACCES);
}

static struct srnic_dev *fake_dev(struct kunit *test, u32 max_mr)
{
	struct srnic_dev *sdev = kunit_kzalloc(test, sizeof(*sdev), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sdev);
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	sdev->attr.max_mr = max_mr;
	sdev->mr_keygen = kunit_kzalloc(test, SRNIC_MAX_MR + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sdev->mr_keygen);
	return sdev;
}

static struct srnic_mr *new_mr(struct kunit *test, struct srnic_dev *sdev,
			       struct ib_pd *pd)
{
	struct srnic_mr *mr = srnic_mr_alloc(sdev, pd, IB_ACCESS_LOCAL_WRITE);

	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	mr->iova = 0x1000;
	mr->length = 0x1000;
	return mr;
}

static void srnic_mr_lookup(struct kunit *test)
{
	struct srnic_dev *sdev = fake_dev(test, 8);
	struct srnic_mr *a, *b, *got;
	struct ib_pd pd;

	a = new_mr(test, sdev, &pd);
	/* Reserved but not published: not findable yet. */
	KUNIT_EXPECT_NULL(test, srnic_mr_get(sdev, a->ibmr.lkey, SRNIC_LKEY));
	srnic_mr_publish(sdev, a);
	b = new_mr(test, sdev, &pd);
	srnic_mr_publish(sdev, b);
	KUNIT_EXPECT_NE(test, a->ibmr.lkey, b->ibmr.lkey);

	got = srnic_mr_get(sdev, a->ibmr.lkey, SRNIC_LKEY);
	KUNIT_EXPECT_PTR_EQ(test, got, a);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 2U);
	srnic_mr_put(got);
	got = srnic_mr_get(sdev, b->ibmr.rkey, SRNIC_RKEY);
	KUNIT_EXPECT_PTR_EQ(test, got, b);
	srnic_mr_put(got);
	/* Right index, wrong key byte: a miss. */
	KUNIT_EXPECT_NULL(test, srnic_mr_get(sdev, a->ibmr.lkey ^ 0x01,
					     SRNIC_LKEY));
	KUNIT_EXPECT_NULL(test, srnic_mr_get(sdev, 0, SRNIC_LKEY));
	KUNIT_EXPECT_NULL(test, srnic_mr_get(sdev, 0xffffffff, SRNIC_RKEY));

	srnic_mr_destroy(sdev, a);
	srnic_mr_destroy(sdev, b);
	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->n_mr), 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&sdev->mr_xa));
	rcu_barrier();
	xa_destroy(&sdev->mr_xa);
}

/*
 * A destroyed MR's key never finds the MR that reuses its index, even
 * when the reuse comes after a multiple of 256 allocations.
 */
static void srnic_mr_stale_key(struct kunit *test)
{
	struct srnic_dev *sdev = fake_dev(test, 2);
	struct srnic_mr *mr, *other;
	struct ib_pd pd;
	u32 old, idx;
	int i;

	mr = new_mr(test, sdev, &pd);
	srnic_mr_publish(sdev, mr);
	old = mr->ibmr.rkey;
	idx = mr->index;
	srnic_mr_destroy(sdev, mr);
	KUNIT_EXPECT_NULL(test, srnic_mr_get(sdev, old, SRNIC_RKEY));

	/*
	 * The cyclic allocation comes back to the index only after the
	 * last one: start it near there (all 64 Ki indices one by one took
	 * 45 s under KASAN), it still wraps.
	 */
	sdev->mr_next = SRNIC_MAX_MR - 3;
	for (i = 0; i < 2 * SRNIC_MAX_MR; i++) {
		other = new_mr(test, sdev, &pd);
		srnic_mr_publish(sdev, other);
		if (other->index == idx)
			break;
		srnic_mr_destroy(sdev, other);
	}
	KUNIT_ASSERT_EQ(test, other->index, idx);
	KUNIT_EXPECT_EQ(test, i, 4);	/* MAX - 3 .. MAX, then the wrap */
	KUNIT_EXPECT_NE(test, other->ibmr.rkey, old);
	KUNIT_EXPECT_NULL(test, srnic_mr_get(sdev, old, SRNIC_RKEY));
	srnic_mr_destroy(sdev, other);
	rcu_barrier();
	xa_destroy(&sdev->mr_xa);
}

static void srnic_mr_limits(struct kunit *test)
{
	struct srnic_dev *sdev = fake_dev(test, 2);
	struct srnic_mr *a, *b, *c;
	struct ib_pd pd;

	/* Zero-based MRs and windows are implemented (issue 19). */
	c = srnic_mr_alloc(sdev, &pd, IB_ZERO_BASED | IB_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c));
	srnic_mr_destroy(sdev, c);
	c = srnic_mr_alloc(sdev, &pd, IB_ACCESS_ON_DEMAND);
	KUNIT_EXPECT_EQ(test, PTR_ERR(c), -EOPNOTSUPP);
	/* Memory-window bind rights are implemented (srnic_mw.c). */
	c = srnic_mr_alloc(sdev, &pd, IB_ACCESS_LOCAL_WRITE |
			   IB_ACCESS_MW_BIND);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c));
	srnic_mr_destroy(sdev, c);
	a = new_mr(test, sdev, &pd);
	b = new_mr(test, sdev, &pd);
	c = srnic_mr_alloc(sdev, &pd, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(c), -ENOMEM);
	srnic_mr_destroy(sdev, a);
	c = srnic_mr_alloc(sdev, &pd, IB_ACCESS_RELAXED_ORDERING);
	KUNIT_EXPECT_FALSE(test, IS_ERR(c));
	if (!IS_ERR(c)) {
		/* Optional flags are accepted and dropped. */
		KUNIT_EXPECT_EQ(test, c->access, 0);
		srnic_mr_destroy(sdev, c);
	}
	srnic_mr_destroy(sdev, b);
	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->n_mr), 0);
	rcu_barrier();
	xa_destroy(&sdev->mr_xa);
}

/*
 * A fast-registration MR whose page list is rewritten (invalidated and
 * mapped again, shorter) while a remote request that passed the key check
 * copies: the copy stops at the list's end, fails, and leaves no stale
 * byte in the buffer that goes on the wire; no warning (a peer times it).
 */
static void srnic_mr_copy_remapped(struct kunit *test)
{
	u8 *pg0 = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	u8 *pg1 = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	u8 *buf = kunit_kmalloc(test, 64, GFP_KERNEL);
	u64 pages[2];
	struct srnic_mr mr = {
		.iova = 0x40000, .length = 2 * PAGE_SIZE,
		.fr_pages = pages, .fr_n = 2, .fr_max = 2,
	};

	KUNIT_ASSERT_NOT_NULL(test, pg0);
	KUNIT_ASSERT_NOT_NULL(test, pg1);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	pages[0] = (uintptr_t)pg0;
	pages[1] = (uintptr_t)pg1;
	mr.ibmr.page_size = PAGE_SIZE;
	memset(pg0, 0xa5, PAGE_SIZE);
	memset(pg1, 0x5a, PAGE_SIZE);

	/* Across the page boundary, both pages listed. */
	KUNIT_EXPECT_EQ(test, srnic_mr_copy(&mr, 0x40000 + PAGE_SIZE - 32, buf,
					    64, false), 0);
	KUNIT_EXPECT_EQ(test, buf[0], 0xa5);
	KUNIT_EXPECT_EQ(test, buf[63], 0x5a);

	/* Remapped to one page after the check: the rest is zeroes. */
	mr.fr_n = 1;
	memset(buf, 0xcc, 64);
	KUNIT_EXPECT_EQ(test, srnic_mr_copy(&mr, 0x40000 + PAGE_SIZE - 32, buf,
					    64, false), -EFAULT);
	KUNIT_EXPECT_EQ(test, buf[31], 0xa5);
	KUNIT_EXPECT_EQ(test, buf[32], 0);
	KUNIT_EXPECT_EQ(test, buf[63], 0);
	/* Into the MR: the missing page is not written, the copy fails. */
	memset(buf, 0x11, 64);
	KUNIT_EXPECT_EQ(test, srnic_mr_copy(&mr, 0x40000 + PAGE_SIZE, buf, 8,
					    true), -EFAULT);
	KUNIT_EXPECT_EQ(test, pg1[0], 0x5a);
	/* Emptied altogether (map_mr_sg() starts from 0). */
	mr.fr_n = 0;
	KUNIT_EXPECT_EQ(test, srnic_mr_copy(&mr, 0x40000, buf, 8, false),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, buf[0], 0);
}

static struct kunit_case srnic_mr_cases[] = {
	KUNIT_CASE(srnic_mr_range),
	KUNIT_CASE(srnic_mr_rights),
	KUNIT_CASE(srnic_mr_lookup),
	KUNIT_CASE(srnic_mr_stale_key),
	KUNIT_CASE(srnic_mr_limits),
	KUNIT_CASE(srnic_mr_copy_remapped),
	{}
};

static struct kunit_suite srnic_mr_suite = {
	.name = "srnic_mr",
	.test_cases = srnic_mr_cases,
};

kunit_test_suite(srnic_mr_suite);

MODULE_DESCRIPTION("KUnit tests for srnic memory region checks");
MODULE_LICENSE("GPL");
