// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: validating send work requests from a user ring.
 */
#include <linux/module.h>
#include <linux/overflow.h>
#include <kunit/visibility.h>

#include "srnic_compat.h"
#include "srnic_wqe.h"

#if SRNIC_HAVE_FLUSH
/* struct srnic_uflush lies over rxe_send_wr's wr.flush. */
static_assert(offsetof(struct rxe_send_wr, wr.flush.remote_addr) ==
	      offsetof(struct rxe_send_wr, wr) +
	      offsetof(struct srnic_uflush, remote_addr));
static_assert(offsetof(struct rxe_send_wr, wr.flush.length) ==
	      offsetof(struct rxe_send_wr, wr) +
	      offsetof(struct srnic_uflush, length));
static_assert(offsetof(struct rxe_send_wr, wr.flush.rkey) ==
	      offsetof(struct rxe_send_wr, wr) +
	      offsetof(struct srnic_uflush, rkey));
static_assert(offsetof(struct rxe_send_wr, wr.flush.type) ==
	      offsetof(struct rxe_send_wr, wr) +
	      offsetof(struct srnic_uflush, type));
static_assert(offsetof(struct rxe_send_wr, wr.flush.level) ==
	      offsetof(struct rxe_send_wr, wr) +
	      offsetof(struct srnic_uflush, level));
#endif

#define SRNIC_SEND_FLAGS (IB_SEND_FENCE | IB_SEND_SIGNALED | \
			  IB_SEND_SOLICITED | IB_SEND_INLINE)

/* The work request opcodes each QP type may post (IBA 11.4.1.1). */
static bool srnic_wqe_opcode_ok(enum ib_qp_type type, u32 opcode)
{
	switch (opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
	case IB_WR_REG_MR:
		return type == IB_QPT_RC || type == IB_QPT_UC;
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_SEND_WITH_INV:
	case SRNIC_WR_ATOMIC_WRITE:
		return type == IB_QPT_RC;
	case SRNIC_WR_FLUSH:
		return SRNIC_HAVE_FLUSH && type == IB_QPT_RC;
	default:
		return false;
	}
}

static bool srnic_wqe_is_atomic(u32 opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/**
 * srnic_wqe_from_user() - validate a send WQE copied from a user ring
 * @lim: the send queue's type and limits
 * @u: the copy: a whole ring element (srnic_user_wqe_size() bytes), in
 *	kernel memory, read from the ring exactly once
 * @w: filled in; srnic_send_wqe_size() bytes
 *
 * Every field is checked against what the QP allows: the opcode for the
 * QP type, the send flags, the SGE count, the inline size, atomic length
 * and alignment, a UD address handle. The message length is recomputed
 * from the SGEs; the length librxe stored is ignored (librxe 44 leaves it
 * wrong on some ibv_wr_* paths), except for inline data, where it is the
 * data's size and is bounded by the QP's inline limit.
 *
 * Context: any; never sleeps.
 * Return: 0, -EINVAL for a WQE the QP cannot execute (the QP goes to the
 * error state), -EOPNOTSUPP for an operation srnic does not implement.
 */
int srnic_wqe_from_user(const struct srnic_wqe_limits *lim,
			const struct rxe_send_wqe *u,
			struct srnic_send_wqe *w)
{
	u32 opcode = u->wr.opcode, flags = u->wr.send_flags;
	u32 i, n, len = 0;

	if (!srnic_wqe_opcode_ok(lim->type, opcode))
		return opcode > SRNIC_WR_ATOMIC_WRITE ? -EINVAL : -EOPNOTSUPP;
	/* A user ring's bytes never become a kernel pointer. */
	if (opcode == IB_WR_REG_MR && !lim->kernel)
		return -EINVAL;
	if (flags & ~SRNIC_SEND_FLAGS)
		return -EINVAL;

	w->wr_id = u->wr.wr_id;
	w->opcode = opcode;
	w->send_flags = flags;
	w->imm = 0;
	w->inv_rkey = 0;
	w->remote_addr = 0;
	w->rkey = 0;
	w->compare_add = 0;
	w->swap = 0;
	w->ah_num = 0;
	w->remote_qpn = 0;
	w->remote_qkey = 0;

	/* Local operations: no data, nothing on the wire. */
	switch (opcode) {
	case IB_WR_LOCAL_INV:
		w->inv_rkey = u->wr.ex.invalidate_rkey;
		w->num_sge = 0;
		w->length = 0;
		return 0;
	case IB_WR_REG_MR:
		w->reg.mr = u->wr.wr.reg.mr;
		w->reg.key = u->wr.wr.reg.key;
		w->reg.access = u->wr.wr.reg.access;
		w->num_sge = 0;
		w->length = 0;
		return w->reg.mr ? 0 : -EINVAL;
	case IB_WR_BIND_MW:
		w->mw.addr = u->wr.wr.mw.addr;
		w->mw.length = u->wr.wr.mw.length;
		w->mw.mr_lkey = u->wr.wr.mw.mr_lkey;
		w->mw.mw_rkey = u->wr.wr.mw.mw_rkey;
		w->mw.new_rkey = u->wr.wr.mw.rkey;
		w->mw.access = u->wr.wr.mw.access;
		w->num_sge = 0;
		w->length = 0;
		return 0;
	}

	switch (opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		w->imm = u->wr.ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
		w->inv_rkey = u->wr.ex.invalidate_rkey;
		break;
	}
	if (srnic_wqe_is_atomic(opcode)) {
		w->remote_addr = u->wr.wr.atomic.remote_addr;
		w->rkey = u->wr.wr.atomic.rkey;
		w->compare_add = u->wr.wr.atomic.compare_add;
		w->swap = u->wr.wr.atomic.swap;
		if (w->remote_addr & 7)
			return -EINVAL;
	} else if (opcode == SRNIC_WR_FLUSH) {
		/*
		 * RDMA Flush: no data; a placement type srnic offers (global
		 * visibility; persistence is asked of the responder, which
		 * refuses it unless its memory has it) and a known level.
		 */
		const struct srnic_uflush *f = (const void *)&u->wr.wr;

		if (flags & IB_SEND_INLINE)
			return -EINVAL;
		if (!f->type || (f->type & ~(SRNIC_FLUSH_GLOBAL |
					     SRNIC_FLUSH_PERSISTENT)) ||
		    (f->level != SRNIC_FLUSH_RANGE &&
		     f->level != SRNIC_FLUSH_MR))
			return -EINVAL;
		w->remote_addr = f->remote_addr;
		w->rkey = f->rkey;
		w->flush.len = f->length;
		w->flush.type = f->type;
		w->flush.level = f->level;
		w->num_sge = 0;
		w->length = 0;
		return 0;
	} else if (opcode == SRNIC_WR_ATOMIC_WRITE) {
		/*
		 * RDMA Atomic Write: 8 bytes, carried in the WQE itself where
		 * the SGEs would be, stored at an aligned remote address.
		 */
		if (flags & IB_SEND_INLINE)
			return -EINVAL;
		w->remote_addr = u->wr.wr.rdma.remote_addr;
		w->rkey = u->wr.wr.rdma.rkey;
		memcpy(&w->swap, u->dma.inline_data, sizeof(w->swap));
		w->num_sge = 0;
		w->length = sizeof(w->swap);
		return w->remote_addr & 7 ? -EINVAL : 0;
	} else if (opcode == IB_WR_RDMA_WRITE ||
		   opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
		   opcode == IB_WR_RDMA_READ) {
		w->remote_addr = u->wr.wr.rdma.remote_addr;
		w->rkey = u->wr.wr.rdma.rkey;
	}
	if (lim->type == IB_QPT_UD || lim->type == IB_QPT_GSI) {
		w->ah_num = u->wr.wr.ud.ah_num;
		w->remote_qpn = u->wr.wr.ud.remote_qpn & 0xffffff;
		w->remote_qkey = u->wr.wr.ud.remote_qkey;
		if (!w->ah_num)
			return -EINVAL;
	}

	if (flags & IB_SEND_INLINE) {
		if (opcode == IB_WR_RDMA_READ || srnic_wqe_is_atomic(opcode))
			return -EINVAL;
		len = u->dma.length;
		if (len > lim->max_inline)
			return -EINVAL;
		memcpy(w->inline_data, u->dma.inline_data, len);
		w->num_sge = 0;
		w->length = len;
		return 0;
	}

	n = u->dma.num_sge;
	if (n > lim->max_sge)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct rxe_sge *s = &u->dma.sge[i];

		w->sge[i].addr = s->addr;
		w->sge[i].length = s->length;
		w->sge[i].lkey = s->lkey;
		if (check_add_overflow(len, s->length, &len))
			return -EINVAL;
	}
	if (len > SRNIC_MAX_MSG_SIZE)
		return -EINVAL;
	if (srnic_wqe_is_atomic(opcode) && len != sizeof(u64))
		return -EINVAL;
	w->num_sge = n;
	w->length = len;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_wqe_from_user);
