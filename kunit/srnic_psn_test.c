// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: 24-bit PSN arithmetic across the wrap, window checks, and the
 * ACK coalescing decisions.
 */
#include <kunit/test.h>

#include "srnic_pkt.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static void srnic_psn_add_wraps(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, srnic_psn_add(0, 1), 1U);
	KUNIT_EXPECT_EQ(test, srnic_psn_add(0xffffff, 1), 0U);
	KUNIT_EXPECT_EQ(test, srnic_psn_add(0xfffffe, 5), 3U);
	KUNIT_EXPECT_EQ(test, srnic_psn_add(0x123456, 0x1000000), 0x123456U);
}

static void srnic_psn_diff_signed(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, srnic_psn_diff(5, 3), 2);
	KUNIT_EXPECT_EQ(test, srnic_psn_diff(3, 5), -2);
	/* Across the wrap, in both directions. */
	KUNIT_EXPECT_EQ(test, srnic_psn_diff(1, 0xffffff), 2);
	KUNIT_EXPECT_EQ(test, srnic_psn_diff(0xffffff, 1), -2);
	KUNIT_EXPECT_EQ(test, srnic_psn_diff(0, 0xffffff), 1);
	/* The edges of the half space. */
	KUNIT_EXPECT_EQ(test, srnic_psn_diff(0x7fffff, 0), 0x7fffff);
	KUNIT_EXPECT_EQ(test, srnic_psn_diff(0x800000, 0), -0x800000);
	/* Bits above 24 are ignored. */
	KUNIT_EXPECT_EQ(test, srnic_psn_diff(0xff000005, 3), 2);
}

static void srnic_psn_before_after(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, srnic_psn_before(0xfffff0, 0x10));
	KUNIT_EXPECT_FALSE(test, srnic_psn_before(0x10, 0xfffff0));
	KUNIT_EXPECT_FALSE(test, srnic_psn_before(7, 7));
	KUNIT_EXPECT_TRUE(test, srnic_psn_before(0, 0x7fffff));
	KUNIT_EXPECT_FALSE(test, srnic_psn_before(0, 0x800001));
}

static void srnic_psn_window(struct kunit *test)
{
	/* [0xfffffe, 0xfffffe + 4) = {0xfffffe, 0xffffff, 0, 1} */
	KUNIT_EXPECT_TRUE(test, srnic_psn_in_window(0xfffffe, 0xfffffe, 4));
	KUNIT_EXPECT_TRUE(test, srnic_psn_in_window(0xffffff, 0xfffffe, 4));
	KUNIT_EXPECT_TRUE(test, srnic_psn_in_window(0, 0xfffffe, 4));
	KUNIT_EXPECT_TRUE(test, srnic_psn_in_window(1, 0xfffffe, 4));
	KUNIT_EXPECT_FALSE(test, srnic_psn_in_window(2, 0xfffffe, 4));
	KUNIT_EXPECT_FALSE(test, srnic_psn_in_window(0xfffffd, 0xfffffe, 4));
	KUNIT_EXPECT_FALSE(test, srnic_psn_in_window(5, 5, 0));
	/* The largest window: everything but the PSN just before it. */
	KUNIT_EXPECT_TRUE(test, srnic_psn_in_window(3, 5, 0xffffff));
	KUNIT_EXPECT_FALSE(test, srnic_psn_in_window(4, 5, 0xffffff));
}

/* Exhaustive around the wrap: diff and add are inverse. */
/*
 * The requester's window, counted from una: the edges, the wrap, and a
 * flight of exactly 2^23 PSNs (a 2 GiB Read at path MTU 256), where the
 * signed distance cannot tell in flight from behind.
 */
static void srnic_psn_requester_window(struct kunit *test)
{
	const u32 una = 0xfffff0, max = srnic_psn_add(una, 32);
	u32 full;

	KUNIT_EXPECT_EQ(test, srnic_psn_window_of(una, una, max),
			SRNIC_PSN_IN_FLIGHT);
	KUNIT_EXPECT_EQ(test, srnic_psn_window_of(srnic_psn_add(una, 31), una,
						  max), SRNIC_PSN_IN_FLIGHT);
	KUNIT_EXPECT_EQ(test, srnic_psn_window_of(max, una, max),
			SRNIC_PSN_AHEAD);
	KUNIT_EXPECT_EQ(test, srnic_psn_window_of(srnic_psn_add(una, -1), una,
						  max), SRNIC_PSN_BEHIND);
	/* Nothing in flight: una itself was never sent. */
	KUNIT_EXPECT_EQ(test, srnic_psn_window_of(una, una, una),
			SRNIC_PSN_AHEAD);
	KUNIT_EXPECT_EQ(test, srnic_psn_window_of(srnic_psn_add(una, -1), una,
						  una), SRNIC_PSN_BEHIND);
	/* 2^23 in flight: its last PSN is in flight, not behind una. */
	full = srnic_psn_add(una, SRNIC_PSN_HALF);
	KUNIT_EXPECT_EQ(test, srnic_psn_window_of(srnic_psn_add(full, -1), una,
						  full), SRNIC_PSN_IN_FLIGHT);
	KUNIT_EXPECT_EQ(test, srnic_psn_window_of(full, una, full),
			SRNIC_PSN_AHEAD);
	KUNIT_EXPECT_EQ(test, srnic_psn_window_of(srnic_psn_add(una, -1), una,
						  full), SRNIC_PSN_AHEAD);
	/* The signed distance gets that last PSN wrong. */
	KUNIT_EXPECT_LT(test, srnic_psn_diff(srnic_psn_add(una, -1), una), 0);
}

/* How far the transmit position is past una, including behind it. */
static void srnic_psn_sent_counts(struct kunit *test)
{
	const u32 una = 0xfffffe, max = srnic_psn_add(una, 10);

	KUNIT_EXPECT_EQ(test, srnic_psn_sent(max, una, max), 10U);
	KUNIT_EXPECT_EQ(test, srnic_psn_sent(una, una, max), 0U);
	KUNIT_EXPECT_EQ(test, srnic_psn_sent(srnic_psn_add(una, 4), una, max),
			4U);
	/* Rewound, then a late ACK moved una past the position. */
	KUNIT_EXPECT_EQ(test, srnic_psn_sent(srnic_psn_add(una, -3), una, max),
			0U);
	KUNIT_EXPECT_EQ(test, srnic_psn_sent(srnic_psn_add(una, -3), una, una),
			0U);
	/* A full 2^23 flight. */
	KUNIT_EXPECT_EQ(test, srnic_psn_sent(srnic_psn_add(una, SRNIC_PSN_HALF),
					     una,
					     srnic_psn_add(una, SRNIC_PSN_HALF)),
			(u32)SRNIC_PSN_HALF);
}

static void srnic_psn_add_diff_inverse(struct kunit *test)
{
	u32 base, n;

	for (base = 0xffff00; base != 0x100; base = srnic_psn_add(base, 1))
		for (n = 0; n < 512; n += 7)
			KUNIT_ASSERT_EQ(test,
					srnic_psn_diff(srnic_psn_add(base, n),
						       base), (s32)n);
}

/* The responder's ACK coalescing decisions. */
static void srnic_psn_ack_coalescing(struct kunit *test)
{
	struct srnic_ack_coalesce ac = {};
	int i;

	/* Deferred up to the bound, then one ACK covers them all. */
	for (i = 1; i < 4; i++)
		KUNIT_EXPECT_EQ_MSG(test, srnic_ack_decide(&ac, false, false, 4),
				    SRNIC_ACK_DEFER, "packet %d", i);
	KUNIT_EXPECT_EQ(test, ac.pending, 3U);
	KUNIT_EXPECT_EQ(test, srnic_ack_decide(&ac, false, false, 4),
			SRNIC_ACK_NOW);
	KUNIT_EXPECT_EQ(test, ac.pending, 0U);
	/* AckReq answers at once, however few are pending. */
	KUNIT_EXPECT_EQ(test, srnic_ack_decide(&ac, true, false, 4),
			SRNIC_ACK_NOW);
	/* A NAK goes at once and does not count as a received packet. */
	KUNIT_EXPECT_EQ(test, srnic_ack_decide(&ac, false, false, 4),
			SRNIC_ACK_DEFER);
	KUNIT_EXPECT_EQ(test, srnic_ack_decide(&ac, false, true, 4),
			SRNIC_ACK_NOW);
	KUNIT_EXPECT_EQ(test, ac.pending, 0U);
	/* A bound of 0 or 1: every packet is acknowledged. */
	KUNIT_EXPECT_EQ(test, srnic_ack_decide(&ac, false, false, 0),
			SRNIC_ACK_NOW);
	KUNIT_EXPECT_EQ(test, srnic_ack_decide(&ac, false, false, 1),
			SRNIC_ACK_NOW);

	/* The requester asks on the last packet and every N-th. */
	KUNIT_EXPECT_TRUE(test, srnic_ack_req_needed(0, true, 0));
	KUNIT_EXPECT_FALSE(test, srnic_ack_req_needed(0, false, 0));
	KUNIT_EXPECT_FALSE(test, srnic_ack_req_needed(6, false, 8));
	KUNIT_EXPECT_TRUE(test, srnic_ack_req_needed(7, false, 8));
	KUNIT_EXPECT_FALSE(test, srnic_ack_req_needed(8, false, 8));
	KUNIT_EXPECT_TRUE(test, srnic_ack_req_needed(15, false, 8));
}

static struct kunit_case srnic_psn_cases[] = {
	KUNIT_CASE(srnic_psn_add_wraps),
	KUNIT_CASE(srnic_psn_diff_signed),
	KUNIT_CASE(srnic_psn_before_after),
	KUNIT_CASE(srnic_psn_window),
	KUNIT_CASE(srnic_psn_requester_window),
	KUNIT_CASE(srnic_psn_sent_counts),
	KUNIT_CASE(srnic_psn_add_diff_inverse),
	KUNIT_CASE(srnic_psn_ack_coalescing),
	{}
};

static struct kunit_suite srnic_psn_suite = {
	.name = "srnic_psn",
	.test_cases = srnic_psn_cases,
};

kunit_test_suite(srnic_psn_suite);

MODULE_DESCRIPTION("KUnit tests for srnic PSN arithmetic");
MODULE_LICENSE("GPL");
