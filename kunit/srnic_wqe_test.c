// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: validation of send WQEs from a user ring (srnic_wqe.c) against
 * every field a hostile process can set, plus random garbage.
 */
#include <kunit/test.h>
#include <linux/random.h>

#include "srnic_compat.h"
#include "srnic_wqe.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

struct wqe_ctx {
	struct srnic_wqe_limits lim;
	struct rxe_send_wqe *u;
	struct srnic_send_wqe *w;
	size_t usize;
};

static void ctx_init(struct kunit *test, struct wqe_ctx *c,
		     enum ib_qp_type type, u32 max_sge, u32 max_inline)
{
	c->lim.type = type;
	c->lim.max_sge = max_sge;
	c->lim.max_inline = max_inline;
	c->lim.kernel = false;
	c->usize = srnic_user_wqe_size(&c->lim);
	c->u = kunit_kzalloc(test, c->usize, GFP_KERNEL);
	c->w = kunit_kzalloc(test, srnic_send_wqe_size(&c->lim), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->u);
	KUNIT_ASSERT_NOT_NULL(test, c->w);
}

/* A valid WQE: @nsge SGEs of @seglen bytes each. */
static void good(struct wqe_ctx *c, u32 opcode, u32 nsge, u32 seglen)
{
	u32 i;

	memset(c->u, 0, c->usize);
	c->u->wr.wr_id = 0x1122334455667788ULL;
	c->u->wr.opcode = opcode;
	c->u->wr.send_flags = IB_SEND_SIGNALED;
	c->u->wr.wr.rdma.remote_addr = 0x7f0000001000ULL;
	c->u->wr.wr.rdma.rkey = 0xabcd;
	if (opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		c->u->wr.wr.atomic.remote_addr = 0x7f0000002000ULL;
		c->u->wr.wr.atomic.rkey = 0xabce;
		c->u->wr.wr.atomic.compare_add = 5;
		c->u->wr.wr.atomic.swap = 6;
	}
	if (c->lim.type == IB_QPT_UD) {
		c->u->wr.wr.ud.ah_num = 3;
		c->u->wr.wr.ud.remote_qpn = 0x12;
		c->u->wr.wr.ud.remote_qkey = 0x11111111;
	}
	c->u->dma.num_sge = nsge;
	for (i = 0; i < nsge; i++) {
		c->u->dma.sge[i].addr = 0x10000 + i * 0x1000;
		c->u->dma.sge[i].length = seglen;
		c->u->dma.sge[i].lkey = 0x100 + i;
	}
	/* librxe 44 can leave this wrong: it must not matter. */
	c->u->dma.length = 0xdeadbeef;
}

/* A Flush WQE as the rxe ABI of 6.2+ lays it out (wr.flush). */
static void flush_wqe(struct wqe_ctx *c, u8 type, u8 level)
{
	struct srnic_uflush *f;

	good(c, SRNIC_WR_FLUSH, 0, 0);
	f = (void *)&c->u->wr.wr;
	f->remote_addr = 0x7f0000004000ULL;
	f->length = 4096;
	f->rkey = 0xabcf;
	f->type = type;
	f->level = level;
}

static int run(struct wqe_ctx *c)
{
	return srnic_wqe_from_user(&c->lim, c->u, c->w);
}

static void srnic_wqe_valid(struct kunit *test)
{
	static const u32 rc_ops[] = {
		IB_WR_SEND, IB_WR_SEND_WITH_IMM, IB_WR_RDMA_WRITE,
		IB_WR_RDMA_WRITE_WITH_IMM, IB_WR_RDMA_READ, IB_WR_SEND_WITH_INV,
	};
	struct wqe_ctx c;
	int i;

	ctx_init(test, &c, IB_QPT_RC, 4, 64);
	for (i = 0; i < ARRAY_SIZE(rc_ops); i++) {
		good(&c, rc_ops[i], 4, 1000);
		KUNIT_EXPECT_EQ_MSG(test, run(&c), 0, "opcode %u", rc_ops[i]);
		KUNIT_EXPECT_EQ(test, c.w->length, 4000U);
		KUNIT_EXPECT_EQ(test, c.w->num_sge, 4U);
		KUNIT_EXPECT_EQ(test, c.w->sge[3].lkey, 0x103U);
		KUNIT_EXPECT_EQ(test, c.w->wr_id, 0x1122334455667788ULL);
		KUNIT_EXPECT_EQ(test, c.w->opcode, rc_ops[i]);
	}
	good(&c, IB_WR_RDMA_WRITE, 0, 0);
	KUNIT_EXPECT_EQ(test, run(&c), 0);
	KUNIT_EXPECT_EQ(test, c.w->length, 0U);
	KUNIT_EXPECT_EQ(test, c.w->remote_addr, 0x7f0000001000ULL);
	KUNIT_EXPECT_EQ(test, c.w->rkey, 0xabcdU);

	good(&c, IB_WR_ATOMIC_FETCH_AND_ADD, 1, 8);
	KUNIT_EXPECT_EQ(test, run(&c), 0);
	KUNIT_EXPECT_EQ(test, c.w->remote_addr, 0x7f0000002000ULL);
	KUNIT_EXPECT_EQ(test, c.w->compare_add, 5ULL);
	KUNIT_EXPECT_EQ(test, c.w->swap, 6ULL);

	good(&c, IB_WR_SEND_WITH_IMM, 0, 0);
	c.u->wr.send_flags |= IB_SEND_INLINE | IB_SEND_SOLICITED |
			      IB_SEND_FENCE;
	c.u->wr.ex.imm_data = cpu_to_be32(0x01020304);
	c.u->dma.length = 64;
	memset(c.u->dma.inline_data, 0x5a, 64);
	KUNIT_EXPECT_EQ(test, run(&c), 0);
	KUNIT_EXPECT_EQ(test, c.w->length, 64U);
	KUNIT_EXPECT_EQ(test, c.w->inline_data[63], 0x5a);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(c.w->imm), 0x01020304U);

	/* Atomic Write: the 8 bytes travel in the WQE, byte for byte. */
	good(&c, SRNIC_WR_ATOMIC_WRITE, 0, 0);
	c.u->wr.wr.rdma.remote_addr = 0x7f0000003008ULL;
	c.u->wr.wr.rdma.rkey = 0x4321;
	memcpy(c.u->dma.inline_data, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	c.u->dma.length = 8;
	KUNIT_EXPECT_EQ(test, run(&c), 0);
	KUNIT_EXPECT_EQ(test, c.w->length, 8U);
	KUNIT_EXPECT_EQ(test, c.w->num_sge, 0U);
	KUNIT_EXPECT_EQ(test, c.w->rkey, 0x4321U);
	KUNIT_EXPECT_EQ(test, c.w->remote_addr, 0x7f0000003008ULL);
	KUNIT_EXPECT_EQ(test, memcmp(&c.w->swap,
				     "\x01\x02\x03\x04\x05\x06\x07\x08", 8), 0);

	ctx_init(test, &c, IB_QPT_UD, 2, 0);
	good(&c, IB_WR_SEND, 2, 100);
	KUNIT_EXPECT_EQ(test, run(&c), 0);
	KUNIT_EXPECT_EQ(test, c.w->ah_num, 3U);
	KUNIT_EXPECT_EQ(test, c.w->remote_qpn, 0x12U);
	KUNIT_EXPECT_EQ(test, c.w->remote_qkey, 0x11111111U);
}

static void srnic_wqe_hostile(struct kunit *test)
{
	struct wqe_ctx c;

	ctx_init(test, &c, IB_QPT_RC, 4, 64);

	good(&c, 0xffffffff, 1, 8);
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	/* Fast registration carries a kernel pointer: never from a user ring. */
	good(&c, IB_WR_REG_MR, 1, 8);
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	c.lim.kernel = true;
	good(&c, IB_WR_REG_MR, 1, 8);
	c.u->wr.wr.reg.mr = NULL;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);	/* no MR */
	c.lim.kernel = false;
	/* Local operations: their fields, no data. */
	good(&c, IB_WR_LOCAL_INV, 1, 8);
	c.u->wr.ex.invalidate_rkey = 0x1234;
	KUNIT_EXPECT_EQ(test, run(&c), 0);
	KUNIT_EXPECT_EQ(test, c.w->inv_rkey, 0x1234U);
	KUNIT_EXPECT_EQ(test, c.w->length, 0U);
	good(&c, IB_WR_BIND_MW, 1, 8);
	c.u->wr.wr.mw.mw_rkey = 0x100;
	c.u->wr.wr.mw.rkey = 0x101;
	c.u->wr.wr.mw.length = 1ULL << 33;
	KUNIT_EXPECT_EQ(test, run(&c), 0);
	KUNIT_EXPECT_EQ(test, c.w->mw.new_rkey, 0x101U);
	KUNIT_EXPECT_EQ(test, c.w->mw.length, 1ULL << 33);

	good(&c, IB_WR_SEND, 1, 8);
	c.u->wr.send_flags |= IB_SEND_IP_CSUM;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	good(&c, IB_WR_SEND, 1, 8);
	c.u->wr.send_flags = 0x80000000;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);

	good(&c, IB_WR_SEND, 4, 8);
	c.u->dma.num_sge = 5;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	c.u->dma.num_sge = 0xffffffff;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);

	/* SGE lengths that wrap 32 bits, and a sum past max_msg_sz. */
	good(&c, IB_WR_SEND, 2, 0x80000000);
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	good(&c, IB_WR_SEND, 3, 0x7fffffff);
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	good(&c, IB_WR_SEND, 1, SRNIC_MAX_MSG_SIZE);
	KUNIT_EXPECT_EQ(test, run(&c), 0);
	good(&c, IB_WR_SEND, 2, SRNIC_MAX_MSG_SIZE / 2 + 1);
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);

	/* Inline: too long, or on an operation that reads into memory. */
	good(&c, IB_WR_SEND, 0, 0);
	c.u->wr.send_flags |= IB_SEND_INLINE;
	c.u->dma.length = 65;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	c.u->dma.length = 0xffffffff;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	good(&c, IB_WR_RDMA_READ, 0, 0);
	c.u->wr.send_flags |= IB_SEND_INLINE;
	c.u->dma.length = 8;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);

	/* Atomics: 8 bytes, 8-byte aligned target. */
	good(&c, IB_WR_ATOMIC_CMP_AND_SWP, 1, 4);
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	good(&c, IB_WR_ATOMIC_CMP_AND_SWP, 2, 8);
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	good(&c, IB_WR_ATOMIC_CMP_AND_SWP, 1, 8);
	c.u->wr.wr.atomic.remote_addr |= 4;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	good(&c, SRNIC_WR_ATOMIC_WRITE, 0, 0);
	c.u->wr.wr.rdma.remote_addr = 0x7f0000003004ULL;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	good(&c, SRNIC_WR_ATOMIC_WRITE, 0, 0);
	c.u->wr.send_flags |= IB_SEND_INLINE;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);

	/* RDMA Flush (6.2 and later): a known type and level, no data. */
	flush_wqe(&c, SRNIC_FLUSH_GLOBAL, SRNIC_FLUSH_RANGE);
#if SRNIC_HAVE_FLUSH
	KUNIT_EXPECT_EQ(test, run(&c), 0);
	KUNIT_EXPECT_EQ(test, c.w->remote_addr, 0x7f0000004000ULL);
	KUNIT_EXPECT_EQ(test, c.w->rkey, 0xabcfU);
	KUNIT_EXPECT_EQ(test, c.w->flush.len, 4096U);
	KUNIT_EXPECT_EQ(test, c.w->length, 0U);
	KUNIT_EXPECT_EQ(test, c.w->num_sge, 0U);
	flush_wqe(&c, SRNIC_FLUSH_GLOBAL | SRNIC_FLUSH_PERSISTENT,
		  SRNIC_FLUSH_MR);
	KUNIT_EXPECT_EQ(test, run(&c), 0);
	flush_wqe(&c, 0, SRNIC_FLUSH_RANGE);
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	flush_wqe(&c, 4, SRNIC_FLUSH_RANGE);
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	flush_wqe(&c, SRNIC_FLUSH_GLOBAL, 2);
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	flush_wqe(&c, SRNIC_FLUSH_GLOBAL, SRNIC_FLUSH_RANGE);
	c.u->wr.send_flags |= IB_SEND_INLINE;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
#else
	KUNIT_EXPECT_EQ(test, run(&c), -EOPNOTSUPP);
#endif

	/* Operations the QP type cannot do. */
	ctx_init(test, &c, IB_QPT_UC, 4, 64);
	good(&c, IB_WR_RDMA_READ, 1, 8);
	KUNIT_EXPECT_EQ(test, run(&c), -EOPNOTSUPP);
	good(&c, IB_WR_ATOMIC_FETCH_AND_ADD, 1, 8);
	KUNIT_EXPECT_EQ(test, run(&c), -EOPNOTSUPP);
	good(&c, SRNIC_WR_ATOMIC_WRITE, 0, 0);
	KUNIT_EXPECT_EQ(test, run(&c), -EOPNOTSUPP);
	flush_wqe(&c, SRNIC_FLUSH_GLOBAL, SRNIC_FLUSH_RANGE);
	KUNIT_EXPECT_EQ(test, run(&c), -EOPNOTSUPP);
	good(&c, IB_WR_RDMA_WRITE_WITH_IMM, 1, 8);
	KUNIT_EXPECT_EQ(test, run(&c), 0);

	ctx_init(test, &c, IB_QPT_UD, 4, 64);
	good(&c, IB_WR_RDMA_WRITE, 1, 8);
	KUNIT_EXPECT_EQ(test, run(&c), -EOPNOTSUPP);
	good(&c, IB_WR_SEND, 1, 8);
	c.u->wr.wr.ud.ah_num = 0;
	KUNIT_EXPECT_EQ(test, run(&c), -EINVAL);
	good(&c, IB_WR_SEND, 1, 8);
	c.u->wr.wr.ud.remote_qpn = 0xff000012;
	KUNIT_EXPECT_EQ(test, run(&c), 0);
	KUNIT_EXPECT_EQ(test, c.w->remote_qpn, 0x12U);
}

/* Random bytes in every field: refused or consistent, never out of bounds. */
static void srnic_wqe_garbage(struct kunit *test)
{
	static const enum ib_qp_type types[] = {
		IB_QPT_RC, IB_QPT_UC, IB_QPT_UD,
	};
	int i, accepted = 0;

	for (i = 0; i < 3000; i++) {
		struct wqe_ctx c;
		int err;

		ctx_init(test, &c, types[i % 3], 1 + i % 32, (i * 7) % 513);
		get_random_bytes(c.u, c.usize);
		/* Sometimes nearly valid, to get past the first checks. */
		if (i & 1) {
			c.u->wr.opcode %= 8;
			c.u->wr.send_flags &= 0xf;
			c.u->dma.num_sge %= 40;
		}
		err = run(&c);
		if (err) {
			KUNIT_EXPECT_TRUE(test, err == -EINVAL ||
					  err == -EOPNOTSUPP);
		} else {
			accepted++;
			KUNIT_EXPECT_LE(test, c.w->num_sge, c.lim.max_sge);
			KUNIT_EXPECT_LE(test, c.w->length, SRNIC_MAX_MSG_SIZE);
			if (c.w->send_flags & IB_SEND_INLINE)
				KUNIT_EXPECT_LE(test, c.w->length,
						c.lim.max_inline);
		}
		/* Per round, so memory stays bounded. */
		kunit_kfree(test, c.u);
		kunit_kfree(test, c.w);
	}
	kunit_info(test, "%d of 3000 random WQEs accepted", accepted);
}

static struct kunit_case srnic_wqe_cases[] = {
	KUNIT_CASE(srnic_wqe_valid),
	KUNIT_CASE(srnic_wqe_hostile),
	KUNIT_CASE(srnic_wqe_garbage),
	{}
};

static struct kunit_suite srnic_wqe_suite = {
	.name = "srnic_wqe",
	.test_cases = srnic_wqe_cases,
};

kunit_test_suite(srnic_wqe_suite);

MODULE_DESCRIPTION("KUnit tests for srnic send WQE validation");
MODULE_LICENSE("GPL");
