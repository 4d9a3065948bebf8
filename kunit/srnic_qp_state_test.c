// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: QP state transitions and attribute validation
 * (srnic_check_qp_attr()), against the IBA modify-QP table (IBA 1.4,
 * section 11.2.4.2, table 98) written out here independently: required
 * attributes missing, attributes not allowed for the transition, illegal
 * transitions and out-of-range values are refused; legal requests pass.
 */
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "srnic.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

struct trans {
	enum ib_qp_type type;
	enum ib_qp_state cur, next;
	int req, opt;
};

#define RC_RTR_REQ (IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | \
		    IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | \
		    IB_QP_MIN_RNR_TIMER)
#define RC_RTS_REQ (IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT | \
		    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC)
#define RC_RTS_OPT (IB_QP_CUR_STATE | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | \
		    IB_QP_MIN_RNR_TIMER | IB_QP_PATH_MIG_STATE)
#define INIT_REQ (IB_QP_PKEY_INDEX | IB_QP_PORT)

static const struct trans legal[] = {
	{ IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT, INIT_REQ | IB_QP_ACCESS_FLAGS, 0 },
	{ IB_QPT_RC, IB_QPS_INIT, IB_QPS_INIT, 0,
	  IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS },
	{ IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, RC_RTR_REQ,
	  IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX },
	{ IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS, RC_RTS_REQ, RC_RTS_OPT },
	{ IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS, 0,
	  IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS | IB_QP_ALT_PATH |
	  IB_QP_PATH_MIG_STATE | IB_QP_MIN_RNR_TIMER },
	{ IB_QPT_RC, IB_QPS_RTS, IB_QPS_SQD, 0, IB_QP_EN_SQD_ASYNC_NOTIFY },
	{ IB_QPT_RC, IB_QPS_SQD, IB_QPS_RTS, 0, RC_RTS_OPT },
	{ IB_QPT_UC, IB_QPS_RESET, IB_QPS_INIT, INIT_REQ | IB_QP_ACCESS_FLAGS, 0 },
	{ IB_QPT_UC, IB_QPS_INIT, IB_QPS_RTR,
	  IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN,
	  IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX },
	{ IB_QPT_UC, IB_QPS_RTR, IB_QPS_RTS, IB_QP_SQ_PSN,
	  IB_QP_CUR_STATE | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS |
	  IB_QP_PATH_MIG_STATE },
	{ IB_QPT_UD, IB_QPS_RESET, IB_QPS_INIT, INIT_REQ | IB_QP_QKEY, 0 },
	{ IB_QPT_UD, IB_QPS_INIT, IB_QPS_RTR, 0, IB_QP_PKEY_INDEX | IB_QP_QKEY },
	{ IB_QPT_UD, IB_QPS_RTR, IB_QPS_RTS, IB_QP_SQ_PSN,
	  IB_QP_CUR_STATE | IB_QP_QKEY },
	{ IB_QPT_UD, IB_QPS_RTS, IB_QPS_RTS, 0, IB_QP_CUR_STATE | IB_QP_QKEY },
	/* The special QPs' port is fixed: no IB_QP_PORT. */
	{ IB_QPT_GSI, IB_QPS_RESET, IB_QPS_INIT, IB_QP_PKEY_INDEX | IB_QP_QKEY,
	  0 },
	{ IB_QPT_GSI, IB_QPS_RTR, IB_QPS_RTS, IB_QP_SQ_PSN,
	  IB_QP_CUR_STATE | IB_QP_QKEY },
};

/* Attributes srnic does not implement, though the table allows them. */
#define UNSUPPORTED (IB_QP_ALT_PATH)

static const struct {
	enum ib_qp_state cur, next;
} illegal[] = {
	{ IB_QPS_RESET, IB_QPS_RTR }, { IB_QPS_RESET, IB_QPS_RTS },
	{ IB_QPS_RESET, IB_QPS_SQD }, { IB_QPS_INIT, IB_QPS_RTS },
	{ IB_QPS_INIT, IB_QPS_SQD }, { IB_QPS_RTR, IB_QPS_INIT },
	{ IB_QPS_RTR, IB_QPS_RTR }, { IB_QPS_RTS, IB_QPS_INIT },
	{ IB_QPS_RTS, IB_QPS_RTR }, { IB_QPS_SQD, IB_QPS_INIT },
	{ IB_QPS_ERR, IB_QPS_INIT }, { IB_QPS_ERR, IB_QPS_RTS },
	{ IB_QPS_ERR, IB_QPS_RTR },
};

static const struct ib_device_attr dattr = {
	.max_qp_rd_atom = SRNIC_MAX_QP_RD_ATOM,
	.max_qp_init_rd_atom = SRNIC_MAX_QP_INIT_RD_ATOM,
};

/* A request with every attribute set to a valid value. */
static void valid_attr(struct ib_qp_attr *a, enum ib_qp_state cur,
		       enum ib_qp_state next)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = next;
	a->cur_qp_state = cur;
	a->path_mtu = IB_MTU_1024;
	a->path_mig_state = IB_MIG_MIGRATED;
	a->qkey = 0x11111111;
	a->rq_psn = 1;
	a->sq_psn = 2;
	a->dest_qp_num = 0x12;
	a->qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	a->pkey_index = 0;
	a->port_num = 1;
	a->max_rd_atomic = 1;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = 12;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
}

static int check(const struct trans *t, int mask)
{
	struct ib_qp_attr a;

	valid_attr(&a, t->cur, t->next);
	return srnic_check_qp_attr(&dattr, t->type, t->cur, &a,
				   mask | IB_QP_STATE);
}

static void srnic_qp_state_legal(struct kunit *test)
{
	int i, bit;

	for (i = 0; i < ARRAY_SIZE(legal); i++) {
		const struct trans *t = &legal[i];

		KUNIT_EXPECT_EQ_MSG(test, check(t, t->req), 0,
				    "type %d %d->%d required only", t->type,
				    t->cur, t->next);
		for (bit = 0; bit < 21; bit++) {
			int m = BIT(bit);

			if (!(t->opt & m))
				continue;
			KUNIT_EXPECT_EQ_MSG(test, check(t, t->req | m),
					    (m & UNSUPPORTED) ? -EOPNOTSUPP : 0,
					    "type %d %d->%d optional %#x",
					    t->type, t->cur, t->next, m);
		}
	}
}

static void srnic_qp_state_required(struct kunit *test)
{
	int i, bit;

	for (i = 0; i < ARRAY_SIZE(legal); i++) {
		const struct trans *t = &legal[i];

		for (bit = 0; bit < 21; bit++) {
			int m = BIT(bit);

			if (!(t->req & m))
				continue;
			KUNIT_EXPECT_EQ_MSG(test, check(t, t->req & ~m), -EINVAL,
					    "type %d %d->%d without %#x",
					    t->type, t->cur, t->next, m);
		}
	}
}

static void srnic_qp_state_not_allowed(struct kunit *test)
{
	int i, bit;

	for (i = 0; i < ARRAY_SIZE(legal); i++) {
		const struct trans *t = &legal[i];

		/* Bits 1..20: every standard attribute but the state. */
		for (bit = 1; bit < 21; bit++) {
			int m = BIT(bit);

			if ((t->req | t->opt) & m)
				continue;
			KUNIT_EXPECT_EQ_MSG(test, check(t, t->req | m), -EINVAL,
					    "type %d %d->%d with %#x",
					    t->type, t->cur, t->next, m);
		}
	}
}

static void srnic_qp_state_illegal_transitions(struct kunit *test)
{
	static const enum ib_qp_type types[] = {
		IB_QPT_RC, IB_QPT_UC, IB_QPT_UD,
	};
	int i, j;

	for (j = 0; j < ARRAY_SIZE(types); j++)
		for (i = 0; i < ARRAY_SIZE(illegal); i++) {
			struct trans t = { types[j], illegal[i].cur,
					   illegal[i].next, 0, 0 };
			int any = RC_RTR_REQ | RC_RTS_REQ | INIT_REQ |
				  IB_QP_ACCESS_FLAGS | IB_QP_QKEY;

			KUNIT_EXPECT_EQ_MSG(test, check(&t, 0), -EINVAL,
					    "type %d %d->%d", t.type, t.cur,
					    t.next);
			KUNIT_EXPECT_EQ_MSG(test, check(&t, any), -EINVAL,
					    "type %d %d->%d, all attrs", t.type,
					    t.cur, t.next);
		}
	/*
	 * To RESET from every state and to ERR from every state but RESET
	 * (a QP that never left RESET has nothing to flush; the kernel's
	 * table, which every Linux driver follows, refuses it), with no
	 * attributes.
	 */
	for (j = 0; j < ARRAY_SIZE(types); j++)
		for (i = IB_QPS_RESET; i <= IB_QPS_ERR; i++) {
			struct trans r = { types[j], i, IB_QPS_RESET, 0, 0 };
			struct trans e = { types[j], i, IB_QPS_ERR, 0, 0 };

			KUNIT_EXPECT_EQ(test, check(&r, 0), 0);
			KUNIT_EXPECT_EQ_MSG(test, check(&e, 0),
					    i == IB_QPS_RESET ? -EINVAL : 0,
					    "type %d %d->ERR", types[j], i);
		}
}

static void srnic_qp_state_ranges(struct kunit *test)
{
	const struct trans *init = &legal[0], *rtr = &legal[2], *rts = &legal[3];
	struct ib_qp_attr a;

#define REFUSE(t, field, val, err) do {					\
	const struct trans *__t = (t);					\
									\
	valid_attr(&a, __t->cur, __t->next);				\
	a.field = (val);						\
	KUNIT_EXPECT_EQ_MSG(test, srnic_check_qp_attr(&dattr, __t->type,	\
			    __t->cur, &a, __t->req | IB_QP_STATE), (err),	\
			    "%s", #field);				\
} while (0)

	REFUSE(init, port_num, 0, -EINVAL);
	REFUSE(init, port_num, 2, -EINVAL);
	REFUSE(init, pkey_index, SRNIC_MAX_PKEYS, -EINVAL);
	REFUSE(init, qp_access_flags, IB_ACCESS_MW_BIND, -EINVAL);
	REFUSE(init, qp_access_flags, IB_ACCESS_ON_DEMAND, -EINVAL);
	REFUSE(rtr, path_mtu, 0, -EINVAL);
	REFUSE(rtr, path_mtu, IB_MTU_4096 + 1, -EINVAL);
	REFUSE(rtr, dest_qp_num, 1 << 24, -EINVAL);
	REFUSE(rtr, min_rnr_timer, 32, -EINVAL);
	REFUSE(rtr, max_dest_rd_atomic, SRNIC_MAX_QP_RD_ATOM + 1, -EINVAL);
	REFUSE(rts, timeout, 32, -EINVAL);
	REFUSE(rts, retry_cnt, 8, -EINVAL);
	REFUSE(rts, rnr_retry, 8, -EINVAL);
	REFUSE(rts, max_rd_atomic, SRNIC_MAX_QP_INIT_RD_ATOM + 1, -EINVAL);
	/* The edges themselves pass. */
	REFUSE(rtr, path_mtu, IB_MTU_4096, 0);
	REFUSE(rtr, path_mtu, IB_MTU_256, 0);
	REFUSE(rtr, dest_qp_num, 0xffffff, 0);
	REFUSE(rtr, min_rnr_timer, 31, 0);
	REFUSE(rtr, max_dest_rd_atomic, SRNIC_MAX_QP_RD_ATOM, 0);
	REFUSE(rts, timeout, 31, 0);
	REFUSE(rts, max_rd_atomic, SRNIC_MAX_QP_INIT_RD_ATOM, 0);
#undef REFUSE

	/* cur_qp_state must be the QP's state. */
	valid_attr(&a, IB_QPS_RTS, IB_QPS_RTS);
	a.cur_qp_state = IB_QPS_SQD;
	KUNIT_EXPECT_EQ(test, srnic_check_qp_attr(&dattr, IB_QPT_RC, IB_QPS_RTS,
						  &a, IB_QP_STATE |
						  IB_QP_CUR_STATE), -EINVAL);
	/* Only the migrated path state (no APM). */
	valid_attr(&a, IB_QPS_RTS, IB_QPS_RTS);
	a.path_mig_state = IB_MIG_ARMED;
	KUNIT_EXPECT_EQ(test, srnic_check_qp_attr(&dattr, IB_QPT_RC, IB_QPS_RTS,
						  &a, IB_QP_STATE |
						  IB_QP_PATH_MIG_STATE),
			-EOPNOTSUPP);
	/* A state past ERR. */
	valid_attr(&a, IB_QPS_RTS, IB_QPS_ERR + 1);
	KUNIT_EXPECT_EQ(test, srnic_check_qp_attr(&dattr, IB_QPT_RC, IB_QPS_RTS,
						  &a, IB_QP_STATE), -EINVAL);
}

static struct kunit_case srnic_qp_state_cases[] = {
	KUNIT_CASE(srnic_qp_state_legal),
	KUNIT_CASE(srnic_qp_state_required),
	KUNIT_CASE(srnic_qp_state_not_allowed),
	KUNIT_CASE(srnic_qp_state_illegal_transitions),
	KUNIT_CASE(srnic_qp_state_ranges),
	{}
};

static struct kunit_suite srnic_qp_state_suite = {
	.name = "srnic_qp_state",
	.test_cases = srnic_qp_state_cases,
};

kunit_test_suite(srnic_qp_state_suite);

MODULE_DESCRIPTION("KUnit tests for srnic QP state transitions");
MODULE_LICENSE("GPL");
