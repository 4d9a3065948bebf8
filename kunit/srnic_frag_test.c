// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: srnic's per-CPU packet buffer pages (srnic_frag.c). Buffers never
 * overlap; a page is carved again once every buffer on it is freed, with
 * no new page taken; a page with a buffer still out is never carved again.
 * Each buffer is written whole while it is held, so that on a KASAN kernel
 * a page freed under a live buffer is reported.
 */
#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/sort.h>

#include "srnic.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define FRAG_SZ		4096u
#define PAGE_FRAGS	((PAGE_SIZE << 3) / FRAG_SZ)	/* per cache page */
#define CACHE_PAGES	32	/* SRNIC_FRAG_PAGES: the most a CPU keeps */
#define HELD_MAX	((CACHE_PAGES + 8) * PAGE_FRAGS)

static int cmp_ptr(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* Every buffer aligned, on one page, and no two overlapping. */
static void expect_disjoint(struct kunit *test, void **v, unsigned int n,
			    unsigned int sz)
{
	unsigned long *a = kunit_kcalloc(test, n, sizeof(*a), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, a);
	for (i = 0; i < n; i++) {
		a[i] = (unsigned long)v[i];
		KUNIT_EXPECT_EQ(test, a[i] % SMP_CACHE_BYTES, 0UL);
		KUNIT_EXPECT_PTR_EQ(test, virt_to_head_page(v[i]),
				    virt_to_head_page(v[i] + sz - 1));
	}
	sort(a, n, sizeof(*a), cmp_ptr, NULL);
	for (i = 1; i < n; i++)
		KUNIT_EXPECT_GE_MSG(test, a[i], a[i - 1] + sz,
				    "buffers %u and %u overlap", i - 1, i);
}

static void *frag_get(struct kunit *test)
{
	void *v;

	local_bh_disable();
	v = srnic_frag_alloc(FRAG_SZ);
	local_bh_enable();
	KUNIT_ASSERT_NOT_NULL(test, v);
	memset(v, 0xa5, FRAG_SZ);
	return v;
}

static void frag_put(void *v)
{
	memset(v, 0x5a, FRAG_SZ);
	skb_free_frag(v);
}

static unsigned long fills(void)
{
	unsigned long n;

	local_bh_disable();
	n = srnic_frag_fills();
	local_bh_enable();
	return n;
}

/* Take buffers into v[] until one lands on a page other than @on. */
static struct page *carve_past(struct kunit *test, void **v, unsigned int *n,
			       struct page *on)
{
	struct page *p;

	do {
		KUNIT_ASSERT_LT(test, *n, 4 * PAGE_FRAGS);
		v[*n] = frag_get(test);
		p = virt_to_head_page(v[(*n)++]);
	} while (p == on);
	return p;
}

/*
 * Carve on until a page P2 has been carved whole (P1 before it, the first
 * buffer of P3 after it), free P2's buffers, carve past P3: the next page
 * comes with no page taken from the allocator (P2, or an idle page of
 * earlier runs), and it is not P1, whose buffers are still held.
 */
static void srnic_frag_reuses_idle_page(struct kunit *test)
{
	void **v = kunit_kcalloc(test, 4 * PAGE_FRAGS, sizeof(*v), GFP_KERNEL);
	struct page *p1, *p2, *p3, *p4;
	unsigned int n = 0, i;
	unsigned long before;

	KUNIT_ASSERT_NOT_NULL(test, v);
	/* The cache is the CPU's: stay on one. */
	migrate_disable();
	p1 = carve_past(test, v, &n, NULL);
	p2 = carve_past(test, v, &n, p1);
	p3 = carve_past(test, v, &n, p2);
	for (i = 0; i < n; i++) {
		if (virt_to_head_page(v[i]) == p2) {
			frag_put(v[i]);
			v[i] = NULL;
		}
	}
	before = fills();
	p4 = carve_past(test, v, &n, p3);
	KUNIT_EXPECT_EQ(test, fills(), before);
	KUNIT_EXPECT_PTR_NE(test, p4, p1);
	migrate_enable();
	for (i = 0; i < n; i++)
		if (v[i])
			frag_put(v[i]);
}

/*
 * Hold more buffers than the cache has pages for: every buffer is its
 * own (no page carved again under a live one), and past the cache's
 * pages (some of which may be idle pages of earlier cases, carved again)
 * new ones are taken.
 */
static void srnic_frag_busy_pages_not_reused(struct kunit *test)
{
	void **v = kunit_kcalloc(test, HELD_MAX, sizeof(*v), GFP_KERNEL);
	unsigned long before;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, v);
	migrate_disable();
	before = fills();
	for (i = 0; i < HELD_MAX; i++)
		v[i] = frag_get(test);
	KUNIT_EXPECT_GE(test, fills() - before,
			(unsigned long)(HELD_MAX / PAGE_FRAGS - CACHE_PAGES - 1));
	migrate_enable();
	expect_disjoint(test, v, HELD_MAX, FRAG_SZ);
	/* Still intact: nothing else wrote into a held buffer. */
	for (i = 0; i < HELD_MAX; i++)
		KUNIT_EXPECT_EQ(test, ((u8 *)v[i])[FRAG_SZ - 1], 0xa5);
	for (i = 0; i < HELD_MAX; i++)
		frag_put(v[i]);
}

/* Mixed sizes: aligned, within one page each, disjoint. */
static void srnic_frag_mixed_sizes(struct kunit *test)
{
	static const unsigned int sz[] = { 64, 320, 1500, 2048, 4500, 9000 };
	void **v = kunit_kcalloc(test, 600, sizeof(*v), GFP_KERNEL);
	unsigned int i, k;

	KUNIT_ASSERT_NOT_NULL(test, v);
	for (k = 0; k < ARRAY_SIZE(sz); k++) {
		for (i = 0; i < 100; i++) {
			local_bh_disable();
			v[k * 100 + i] = srnic_frag_alloc(sz[k]);
			local_bh_enable();
			KUNIT_ASSERT_NOT_NULL(test, v[k * 100 + i]);
			memset(v[k * 100 + i], k, sz[k]);
		}
		expect_disjoint(test, v + k * 100, 100, sz[k]);
	}
	for (i = 0; i < 600; i++)
		skb_free_frag(v[i]);
	/* Over a cache page: refused, for another allocator to serve. */
	local_bh_disable();
	KUNIT_EXPECT_NULL(test, srnic_frag_alloc((PAGE_SIZE << 3) + 1));
	local_bh_enable();
}

static struct kunit_case srnic_frag_cases[] = {
	KUNIT_CASE(srnic_frag_reuses_idle_page),
	KUNIT_CASE(srnic_frag_busy_pages_not_reused),
	KUNIT_CASE(srnic_frag_mixed_sizes),
	{}
};

static struct kunit_suite srnic_frag_suite = {
	.name = "srnic_frag",
	.test_cases = srnic_frag_cases,
};

kunit_test_suite(srnic_frag_suite);

MODULE_DESCRIPTION("KUnit tests for srnic's packet buffer pages");
MODULE_LICENSE("GPL");
