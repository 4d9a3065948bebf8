// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the transmit gate (srnic_sched.c) in isolation: round-robin and
 * deficit round-robin serve a QP whose fence clears within one round;
 * strict priority starves it (the failure the WQE-prefetch chapter
 * describes, asserted so the demonstration stays true); DRR shares bytes
 * fairly between QPs of different packet sizes; budgets and removal; a
 * wake while the QP is being served is not lost; an idle QP's round
 * claimed by its doorbell.
 */
#include <kunit/test.h>

#include "srnic_sched.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

struct fake_qp {
	struct srnic_gate_qp gq;
	u32 pkt;		/* bytes per packet */
	long backlog;		/* packets left; < 0: endless */
	u64 packets, bytes, services;
};

/* One service by the transmit engine; returns the QP served. */
static struct fake_qp *serve(struct srnic_gate *gate)
{
	struct srnic_gate_qp *gq = srnic_gate_pick(gate);
	struct fake_qp *qp;

	if (!gq)
		return NULL;
	qp = container_of(gq, struct fake_qp, gq);
	qp->services++;
	while (qp->backlog && srnic_gate_may_send(gate, gq)) {
		srnic_gate_sent(gq, qp->pkt);
		qp->packets++;
		qp->bytes += qp->pkt;
		if (qp->backlog > 0)
			qp->backlog--;
	}
	srnic_gate_done(gate, gq, qp->backlog != 0);
	return qp;
}

static void fake_init(struct fake_qp *qp, u8 prio, u32 pkt, long backlog)
{
	memset(qp, 0, sizeof(*qp));
	srnic_gate_qp_init(&qp->gq, prio);
	qp->pkt = pkt;
	qp->backlog = backlog;
}

/*
 * QP2 always has work; QP1 is fenced (not at the gate) for 10 rounds,
 * then its fence clears. Return how many services it took QP1 to run,
 * or 0 if it never ran in 1000.
 */
static int fence_clears(struct kunit *test, enum srnic_gate_policy policy)
{
	struct srnic_gate gate;
	struct fake_qp qp1, qp2;
	int i;

	srnic_gate_init(&gate, policy, 4096, 16);
	fake_init(&qp1, 1, 1024, 100);	/* lower priority under STRICT */
	fake_init(&qp2, 0, 1024, -1);
	srnic_gate_wake(&gate, &qp2.gq);
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_PTR_EQ(test, serve(&gate), &qp2);
	srnic_gate_wake(&gate, &qp1.gq);
	for (i = 1; i <= 1000; i++)
		if (serve(&gate) == &qp1)
			return i;
	return 0;
}

static void srnic_sched_fence_round_robin(struct kunit *test)
{
	int n;

	n = fence_clears(test, SRNIC_GATE_RR);
	KUNIT_EXPECT_GE(test, n, 1);
	KUNIT_EXPECT_LE(test, n, 2);
	n = fence_clears(test, SRNIC_GATE_DRR);
	KUNIT_EXPECT_GE(test, n, 1);
	KUNIT_EXPECT_LE(test, n, 2);
}

static void srnic_sched_fence_strict_starves(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, fence_clears(test, SRNIC_GATE_STRICT), 0);
}

static void srnic_sched_drr_bytes(struct kunit *test)
{
	struct srnic_gate gate;
	struct fake_qp big, small;
	int i;

	srnic_gate_init(&gate, SRNIC_GATE_DRR, 4096, 64);
	fake_init(&big, 0, 4096, -1);
	fake_init(&small, 0, 256, -1);
	srnic_gate_wake(&gate, &big.gq);
	srnic_gate_wake(&gate, &small.gq);
	for (i = 0; i < 2000; i++)
		serve(&gate);
	/* Equal bytes within one quantum, not equal packets. */
	KUNIT_EXPECT_LE(test, abs((s64)big.bytes - (s64)small.bytes), 4096LL);
	KUNIT_EXPECT_EQ(test, small.packets, 16 * big.packets);
	KUNIT_EXPECT_EQ(test, gate.rounds, 2000ULL);

	/* Round-robin by packets would give the big QP 16 times the bytes. */
	srnic_gate_init(&gate, SRNIC_GATE_RR, 4096, 4);
	fake_init(&big, 0, 4096, -1);
	fake_init(&small, 0, 256, -1);
	srnic_gate_wake(&gate, &big.gq);
	srnic_gate_wake(&gate, &small.gq);
	for (i = 0; i < 2000; i++)
		serve(&gate);
	KUNIT_EXPECT_EQ(test, big.bytes, 16 * small.bytes);
}

static void srnic_sched_budget_and_remove(struct kunit *test)
{
	struct srnic_gate gate;
	struct fake_qp a, b;
	int i;

	srnic_gate_init(&gate, SRNIC_GATE_RR, 4096, 8);
	fake_init(&a, 0, 100, 20);
	fake_init(&b, 0, 100, -1);
	KUNIT_EXPECT_TRUE(test, srnic_gate_wake(&gate, &a.gq));
	KUNIT_EXPECT_TRUE(test, srnic_gate_wake(&gate, &b.gq));
	/* Already queued: no-op, and the caller need not run the gate. */
	KUNIT_EXPECT_FALSE(test, srnic_gate_wake(&gate, &a.gq));
	KUNIT_EXPECT_TRUE(test, srnic_gate_pending(&gate));
	KUNIT_EXPECT_PTR_EQ(test, serve(&gate), &a);
	KUNIT_EXPECT_EQ(test, a.packets, 8ULL);	/* the budget */
	KUNIT_EXPECT_PTR_EQ(test, serve(&gate), &b);
	KUNIT_EXPECT_PTR_EQ(test, serve(&gate), &a);
	KUNIT_EXPECT_PTR_EQ(test, serve(&gate), &b);
	KUNIT_EXPECT_PTR_EQ(test, serve(&gate), &a);
	KUNIT_EXPECT_EQ(test, a.packets, 20ULL);
	/* Out of work: no longer at the gate. */
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_PTR_EQ(test, serve(&gate), &b);
	KUNIT_EXPECT_TRUE(test, srnic_gate_remove(&gate, &b.gq));
	KUNIT_EXPECT_FALSE(test, srnic_gate_pending(&gate));
	KUNIT_EXPECT_NULL(test, serve(&gate));
	KUNIT_EXPECT_EQ(test, srnic_gate_set_policy(&gate,
						    SRNIC_GATE_NR_POLICIES),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_gate_set_policy(&gate, SRNIC_GATE_STRICT),
			0);
	KUNIT_EXPECT_STREQ(test, srnic_gate_policy_name(SRNIC_GATE_DRR), "drr");
}

/*
 * The engine serves a QP, finds no work and is about to hand it back;
 * meanwhile an ACK opens the QP's window and wakes it. The wake must not
 * be lost (the QP goes back to the gate), and a QP being served cannot
 * be removed (destroy waits for the round to end).
 */
static void srnic_sched_wake_while_served(struct kunit *test)
{
	struct srnic_gate gate;
	struct srnic_gate_qp *gq;
	struct fake_qp a;

	srnic_gate_init(&gate, SRNIC_GATE_DRR, 4096, 8);
	fake_init(&a, 0, 100, 0);
	KUNIT_EXPECT_TRUE(test, srnic_gate_wake(&gate, &a.gq));
	gq = srnic_gate_pick(&gate);
	KUNIT_EXPECT_PTR_EQ(test, gq, &a.gq);
	/* Served: the engine will see it again, nothing to schedule. */
	KUNIT_EXPECT_FALSE(test, srnic_gate_wake(&gate, &a.gq));
	KUNIT_EXPECT_FALSE(test, srnic_gate_remove(&gate, &a.gq));
	srnic_gate_done(&gate, gq, false);
	KUNIT_EXPECT_TRUE(test, srnic_gate_pending(&gate));
	a.backlog = 3;
	KUNIT_EXPECT_PTR_EQ(test, serve(&gate), &a);
	KUNIT_EXPECT_EQ(test, a.packets, 3ULL);
	/* No wake this time: out of the gate. */
	KUNIT_EXPECT_FALSE(test, srnic_gate_pending(&gate));
	KUNIT_EXPECT_TRUE(test, srnic_gate_remove(&gate, &a.gq));
	KUNIT_EXPECT_EQ(test, gate.rounds, 2ULL);
}

/*
 * The doorbell of an idle QP runs the QP's round itself (srnic_gate_claim):
 * granted only at an idle gate to a QP neither waiting nor served, with
 * the engine's budget; a wake during that round is kept, and no second
 * round of the QP is granted meanwhile, by claim or by the engine.
 */
static void srnic_sched_claim(struct kunit *test)
{
	struct srnic_gate gate;
	struct fake_qp a, b;

	srnic_gate_init(&gate, SRNIC_GATE_DRR, 4096, 8);
	fake_init(&a, 0, 100, 20);
	fake_init(&b, 0, 100, -1);
	/* Another QP waits: no line is cut. */
	srnic_gate_wake(&gate, &b.gq);
	KUNIT_EXPECT_FALSE(test, srnic_gate_claim(&gate, &a.gq));
	KUNIT_EXPECT_PTR_EQ(test, serve(&gate), &b);
	srnic_gate_remove(&gate, &b.gq);
	/* A waiting QP is the engine's. */
	srnic_gate_wake(&gate, &a.gq);
	KUNIT_EXPECT_FALSE(test, srnic_gate_claim(&gate, &a.gq));
	srnic_gate_remove(&gate, &a.gq);

	KUNIT_EXPECT_TRUE(test, srnic_gate_claim(&gate, &a.gq));
	KUNIT_EXPECT_EQ(test, gate.rounds, 2ULL);
	/* One round at a time: not again, not by the engine. */
	KUNIT_EXPECT_FALSE(test, srnic_gate_claim(&gate, &a.gq));
	KUNIT_EXPECT_FALSE(test, srnic_gate_wake(&gate, &a.gq));
	KUNIT_EXPECT_TRUE(test, !srnic_gate_pick(&gate));
	KUNIT_EXPECT_FALSE(test, srnic_gate_remove(&gate, &a.gq));
	/* The engine's budget: 8 packets of 20. */
	while (srnic_gate_may_send(&gate, &a.gq) && a.backlog) {
		srnic_gate_sent(&a.gq, a.pkt);
		a.packets++;
		a.backlog--;
	}
	KUNIT_EXPECT_EQ(test, a.packets, 8ULL);
	srnic_gate_done(&gate, &a.gq, false);
	/* The wake during the round put it back: the engine serves it. */
	KUNIT_EXPECT_TRUE(test, srnic_gate_pending(&gate));
	KUNIT_EXPECT_PTR_EQ(test, serve(&gate), &a);
	KUNIT_EXPECT_EQ(test, a.packets, 16ULL);
}

static struct kunit_case srnic_sched_cases[] = {
	KUNIT_CASE(srnic_sched_fence_round_robin),
	KUNIT_CASE(srnic_sched_fence_strict_starves),
	KUNIT_CASE(srnic_sched_drr_bytes),
	KUNIT_CASE(srnic_sched_budget_and_remove),
	KUNIT_CASE(srnic_sched_wake_while_served),
	KUNIT_CASE(srnic_sched_claim),
	{}
};

static struct kunit_suite srnic_sched_suite = {
	.name = "srnic_sched",
	.test_cases = srnic_sched_cases,
};

kunit_test_suite(srnic_sched_suite);

MODULE_DESCRIPTION("KUnit tests for the srnic transmit gate");
MODULE_LICENSE("GPL");
