// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the requester's transmit pipeline.
 *
 *   post_send (doorbell) --> prefetch work --> pool --> TX gate --> wire
 *
 * The doorbell only schedules the QP's prefetch work. The prefetch work
 * (device workqueue) reads WQEs ahead of the consumer index into the
 * device's pool: each ring element is copied once, validated, and kept in
 * kernel memory. Each QP belongs to one CPU's transmit gate
 * (srnic_sched.h); the gate's tasklet, the transmit engine, serves the
 * QPs with work in the order the gate's policy picks (deficit
 * round-robin by bytes by default). Serving a QP takes WQEs from its pool
 * head in ring order into the QP's window (assigning PSNs), builds packets
 * and hands them to the wire, at most srnic_tx_budget packets (and, under
 * DRR, the QP's deficit of bytes) per round. The engine enforces fences,
 * max_rd_atomic and the unacknowledged-PSN window: a QP that cannot send
 * leaves the gate until an ACK, a response or a doorbell wakes it, so a
 * QP blocked on a fence costs the others nothing. The retransmission
 * timer and the completer (srnic_comp.c) move
 * the window: go-back-N rewinds the transmit position to the oldest
 * unacknowledged PSN.
 *
 * Locking: req.lock (BH) protects the window and positions. Packets are
 * built under it and sent after it is dropped: nothing is ever handed to
 * the network stack, which may loop straight back into srnic_rx(), with a
 * QP lock held.
 */
#include <linux/module.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "srnic.h"

static unsigned int srnic_tx_budget = 64;
module_param_named(tx_budget, srnic_tx_budget, uint, 0644);
MODULE_PARM_DESC(tx_budget, "most packets a QP sends per transmit gate round (default 64)");

/* DRR: bytes a QP may send per round, 16 packets of the largest MTU. */
#define SRNIC_GATE_QUANTUM	(16 * 4096)
/*
 * An engine run ends after this many rounds or once it has sent a round's
 * budget of packets in all, whichever comes first; it then reschedules
 * itself if QPs still wait. Between runs the softirq loop processes
 * received packets: one run of 16 full rounds (1024 packets) overflows a
 * veth peer's backlog (1000 packets) and go-back-N pays for it.
 */
#define SRNIC_GATE_ROUNDS	16

static struct workqueue_struct *srnic_wq;

static void srnic_txgate_task(struct tasklet_struct *t);
static bool srnic_pf_pending(struct srnic_qp *qp);
static void srnic_txgate_ipi(void *info);

/* Default pool configuration (per device through sysfs: srnic_stats.c). */
static const struct srnic_pool_cfg srnic_pool_defaults = {
	.nslots = 1024,
	.per_qp_cap = 64,
	.lookahead = 64,
	.fence_ahead = 4,
};

static const struct srnic_wqe_limits srnic_max_limits = {
	.type = IB_QPT_RC,
	.max_sge = SRNIC_MAX_SGE,
	.max_inline = SRNIC_MAX_INLINE,
};

/**
 * srnic_tx_module_init() - create the pipeline's workqueue
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int srnic_tx_module_init(void)
{
	srnic_wq = alloc_workqueue("srnic", WQ_HIGHPRI, 0);
	return srnic_wq ? 0 : -ENOMEM;
}

/**
 * srnic_tx_module_exit() - destroy the pipeline's workqueue
 *
 * Context: module exit.
 */
void srnic_tx_module_exit(void)
{
	destroy_workqueue(srnic_wq);
}

/**
 * srnic_dp_dev_init() - a device's data path state
 * @sdev: the device
 *
 * Context: process context.
 * Return: 0 or -errno.
 */
int srnic_dp_dev_init(struct srnic_dev *sdev)
{
	int cpu, err;

	spin_lock_init(&sdev->atomic_lock);
	mutex_init(&sdev->pool_cfg_lock);
	sdev->gate_policy = SRNIC_GATE_DRR;
	sdev->txgates = alloc_percpu(struct srnic_txgate);
	if (!sdev->txgates)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct srnic_txgate *g = per_cpu_ptr(sdev->txgates, cpu);

		srnic_gate_init(&g->gate, sdev->gate_policy,
				SRNIC_GATE_QUANTUM,
				max_t(u32, READ_ONCE(srnic_tx_budget), 1));
		tasklet_setup(&g->task, srnic_txgate_task);
		g->cpu = cpu;
		atomic_set(&g->ipi_busy, 0);
		INIT_CSD(&g->csd, srnic_txgate_ipi, g);
	}
	err = srnic_pool_init(&sdev->pool, &srnic_pool_defaults,
			      srnic_send_wqe_size(&srnic_max_limits));
	if (err) {
		free_percpu(sdev->txgates);
		sdev->txgates = NULL;
	}
	return err;
}

/**
 * srnic_dp_dev_cleanup() - free a device's data path state
 * @sdev: the device; every QP is gone
 *
 * Context: process context.
 */
void srnic_dp_dev_cleanup(struct srnic_dev *sdev)
{
	int cpu;

	if (sdev->txgates) {
		for_each_possible_cpu(cpu) {
			struct srnic_txgate *g = per_cpu_ptr(sdev->txgates,
							     cpu);

			while (atomic_read_acquire(&g->ipi_busy))
				cpu_relax();
			tasklet_kill(&g->task);
		}
		free_percpu(sdev->txgates);
		sdev->txgates = NULL;
	}
	if (sdev->pool.slots)
		srnic_pool_cleanup(&sdev->pool);
}

/**
 * srnic_set_gate_policy() - change the transmit gates' policy
 * @sdev: the device
 * @policy: the new policy
 *
 * Takes effect at the gates' next pick; QPs keep their places.
 *
 * Context: process context, under sdev->pool_cfg_lock.
 * Return: 0 or -EINVAL.
 */
int srnic_set_gate_policy(struct srnic_dev *sdev,
			  enum srnic_gate_policy policy)
{
	int cpu, err;

	if (policy >= SRNIC_GATE_NR_POLICIES)
		return -EINVAL;
	for_each_possible_cpu(cpu) {
		err = srnic_gate_set_policy(&per_cpu_ptr(sdev->txgates,
							 cpu)->gate, policy);
		if (err)
			return err;
	}
	WRITE_ONCE(sdev->gate_policy, policy);
	return 0;
}

/**
 * srnic_gate_rounds() - rounds the device's gates have granted
 * @sdev: the device
 *
 * Context: any but hard interrupt.
 * Return: the sum over the CPUs' gates (tx_gate_rounds).
 */
u64 srnic_gate_rounds(struct srnic_dev *sdev)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct srnic_gate *gate = &per_cpu_ptr(sdev->txgates,
						       cpu)->gate;

		spin_lock_bh(&gate->lock);
		sum += gate->rounds;
		spin_unlock_bh(&gate->lock);
	}
	return sum;
}

/**
 * srnic_req_swqe() - a window entry
 * @qp: the QP
 * @index: ring index of the WQE
 *
 * Context: under req.lock.
 * Return: the entry.
 */
struct srnic_swqe *srnic_req_swqe(struct srnic_qp *qp, u32 index)
{
	return (void *)(qp->req.window +
			(size_t)(index & qp->sq.queue.index_mask) *
			qp->req.stride);
}

/* The prefetch callback: one ring element, copied once, validated. */
static int srnic_pf_fetch_one(void *ctx, u32 index, void *slot)
{
	struct srnic_qp *qp = ctx;
	struct srnic_send_wqe *w = slot;
	int err;

	memcpy(qp->req.fetch_buf, srnic_queue_addr(&qp->sq.queue, index),
	       qp->req.fetch_size);
	err = srnic_wqe_from_user(&qp->req.lim, qp->req.fetch_buf, w);
	if (err)
		return err;
	/* UD: where to, copied now: the AH may go once the WQE is posted. */
	if (srnic_qp_is_ud(qp)) {
		err = srnic_ah_av(to_sdev(qp->ibqp.device), qp->ibqp.pd,
				  w->ah_num, &w->av);
		if (err)
			return err;
	}
	return (w->send_flags & IB_SEND_FENCE) ? 1 : 0;
}

/*
 * Read the QP's posted WQEs into its share of the pool, as far as the
 * pool's policy lets it. A malformed WQE stops fetching there: it
 * completes in error when its turn comes. Returns the number fetched or
 * -errno. Caller holds req.lock; the QP has no malformed WQE yet.
 */
static int srnic_req_fetch(struct srnic_qp *qp)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	int n;

	n = srnic_pf_fetch(&sdev->pool, &qp->req.pfq,
			   srnic_queue_producer(&qp->sq.queue), qp->req.comp,
			   srnic_pf_fetch_one, qp);
	if (n < 0) {
		/*
		 * A malformed WQE, or a producer index moved back behind
		 * WQEs already read (-EPROTO): either way the QP fails at
		 * the fetch position, alone.
		 */
		qp->req.bad_wqe = true;
		qp->req.bad_index = qp->req.pfq.next;
		qp->req.ring_bad = n == -EPROTO;
		srnic_counter_inc(sdev, SRNIC_CNT_BAD_WQE);
		srnic_dbg_qp(qp, "%s at %u: %d\n", n == -EPROTO ?
			     "send ring producer index went back" :
			     "malformed WQE", qp->req.bad_index, n);
	}
	return n;
}

/*
 * A QP whose send ring went inconsistent fails at once, alone, with an
 * affiliated asynchronous error. Returns true if it did. Caller holds no
 * lock of the QP.
 */
static bool srnic_req_ring_check(struct srnic_qp *qp)
{
	bool bad;

	if (likely(!READ_ONCE(qp->req.ring_bad)))
		return false;
	spin_lock_bh(&qp->req.lock);
	bad = qp->req.ring_bad;
	qp->req.ring_bad = false;
	spin_unlock_bh(&qp->req.lock);
	if (bad)
		srnic_qp_fail(qp, IB_EVENT_QP_FATAL);
	return bad;
}

static void srnic_pf_work(struct work_struct *work)
{
	struct srnic_qp *qp = container_of(work, struct srnic_qp, req.pf_work);
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool wake;
	int n;

	if (READ_ONCE(qp->dead))
		return;
	if (state == IB_QPS_ERR) {
		srnic_qp_error(qp);
		return;
	}
	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return;

	spin_lock_bh(&qp->req.lock);
	if (qp->req.bad_wqe || qp->req.flushing) {
		spin_unlock_bh(&qp->req.lock);
		return;
	}
	n = srnic_req_fetch(qp);
	/*
	 * Wake the engine for what was fetched, and when the QP has nothing
	 * fetched at all (the pool is exhausted: it must ask again). A QP
	 * that fetched nothing because it is at its own limit (cap,
	 * lookahead, a blocked fence) has nothing new to send: waking it
	 * would bounce between this work and the engine until the limit
	 * lifts, burning the CPU other QPs need.
	 */
	wake = n != 0 ||
	       (!READ_ONCE(qp->req.pfq.count) && srnic_pf_pending(qp));
	spin_unlock_bh(&qp->req.lock);
	if (srnic_req_ring_check(qp))
		return;
	if (wake)
		srnic_req_kick(qp);
}

/* Is there posted work the prefetcher has not read yet? */
static bool srnic_pf_pending(struct srnic_qp *qp)
{
	u32 prod = srnic_queue_producer(&qp->sq.queue);

	return !qp->req.bad_wqe &&
	       READ_ONCE(qp->req.pfq.next) != (prod & qp->sq.queue.index_mask);
}

/**
 * srnic_req_has_work() - could the transmit engine send for this QP now?
 * @qp: the QP
 *
 * True if packets of issued WQEs remain, or WQEs wait in the pool or in
 * the ring: what an ACK or a response may have unblocked (window space,
 * a fence, the rd_atomic limit). A QP that only awaits responses has
 * none, and waking it would cost a gate round (and maybe an IPI) per
 * response packet for nothing.
 *
 * Context: under req.lock.
 */
bool srnic_req_has_work(struct srnic_qp *qp)
{
	struct srnic_req *req = &qp->req;

	return req->cur != req->issue || READ_ONCE(req->pfq.count) ||
	       srnic_pf_pending(qp) || req->bad_wqe;
}

static atomic_t srnic_tx_next_cpu = ATOMIC_INIT(0);

/* Spread the QPs' transmit tasklets over the online CPUs. */
static int srnic_req_pick_cpu(void)
{
	unsigned int n = atomic_inc_return(&srnic_tx_next_cpu);

	return cpumask_local_spread(n % num_online_cpus(), NUMA_NO_NODE);
}

/* On the gate's CPU, in hard interrupt context: the engine runs next. */
static void srnic_txgate_ipi(void *info)
{
	struct srnic_txgate *g = info;

	tasklet_schedule(&g->task);
	/* The last access to @g: srnic_dp_dev_cleanup() waits for it. */
	atomic_set_release(&g->ipi_busy, 0);
}

/*
 * Make sure the gate's engine runs, on the gate's CPU. A tasklet runs on
 * the CPU that schedules it, so a kick from elsewhere asks that CPU by an
 * IPI. A request already on its way (@ipi_busy) covers this kick too: its
 * handler has not scheduled the engine yet, or has and the engine has not
 * run yet (it cannot while the handler holds that CPU).
 */
static void srnic_txgate_run(struct srnic_txgate *g)
{
	if (g->cpu == get_cpu() || !cpu_online(g->cpu)) {
		tasklet_schedule(&g->task);
	} else if (!atomic_xchg(&g->ipi_busy, 1) &&
		   smp_call_function_single_async(g->cpu, &g->csd)) {
		/* The CPU went offline: run here. */
		atomic_set(&g->ipi_busy, 0);
		tasklet_schedule(&g->task);
	}
	put_cpu();
}

/**
 * srnic_req_kick() - the QP may have something to send: wake it at its gate
 * @qp: the QP
 *
 * Every QP is served by one CPU's gate. If each kick (doorbell, ACK,
 * timer) ran the QP where it came from, two runs on two CPUs would hand
 * packets to two CPUs' receive backlogs (veth) or transmit queues, which
 * reorders them: the responder sees PSN gaps and go-back-N resends what
 * was never lost. A kick that finds the QP queued or being served costs
 * a lock and nothing else.
 *
 * Context: any but hard interrupt.
 */
void srnic_req_kick(struct srnic_qp *qp)
{
	struct srnic_txgate *g;

	if (READ_ONCE(qp->dead))
		return;
	g = per_cpu_ptr(to_sdev(qp->ibqp.device)->txgates, qp->req.cpu);
	if (srnic_gate_wake(&g->gate, &qp->req.gq))
		srnic_txgate_run(g);
}

static unsigned long srnic_req_timeout(struct srnic_qp *qp)
{
	u64 ns = 4096ULL << qp->timeout;

	return max_t(u64, nsecs_to_jiffies64(ns), msecs_to_jiffies(10));
}

/**
 * srnic_req_arm_timer() - (re)start the retransmission timer
 * @qp: the QP, with unacknowledged packets
 *
 * A timeout of 0 means "infinite": never retransmit on time.
 *
 * Context: under req.lock.
 */
void srnic_req_arm_timer(struct srnic_qp *qp)
{
	if (!qp->timeout || qp->dead)
		return;
	qp->req.timer_psn = qp->req.una;
	mod_timer(&qp->req.timer, jiffies + srnic_req_timeout(qp));
}

/**
 * srnic_req_push_timer() - the responder is alive: retransmit later
 * @qp: the QP
 *
 * For Read responses the requester cannot use: a replay still streaming
 * past a gap, or a replay for a Read already complete. The responder works
 * through its requests in order and is busy with ours; asking again now
 * would only queue one more replay behind the current one (rdma_rxe serves
 * each repeated Read request to its end). The timer still fires, and
 * counts a retry, once such responses stop coming.
 *
 * Context: under req.lock.
 */
void srnic_req_push_timer(struct srnic_qp *qp)
{
	if (qp->timeout && !qp->dead && timer_pending(&qp->req.timer))
		mod_timer(&qp->req.timer, jiffies + srnic_req_timeout(qp));
}

/**
 * srnic_req_rewind() - go back N: transmit again from @psn
 * @qp: the QP
 * @psn: the oldest PSN the responder has not acknowledged
 *
 * Context: under req.lock.
 */
void srnic_req_rewind(struct srnic_qp *qp, u32 psn)
{
	struct srnic_req *req = &qp->req;
	u32 i;

	for (i = req->comp; i != req->issue; i++) {
		struct srnic_swqe *s = srnic_req_swqe(qp, i);
		s32 d = srnic_psn_diff(psn, s->first_psn);

		if (s->state == SRNIC_SWQE_DONE || d >= (s32)s->npkts)
			continue;
		if (d < 0)
			d = 0;
		if (s->wqe.opcode == IB_WR_RDMA_READ)
			d = s->read_off / qp->mtu;
		req->cur = i;
		req->cur_pkt = d;
		req->psn = srnic_psn_add(s->first_psn, d);
		srnic_counter_inc(to_sdev(qp->ibqp.device),
				  SRNIC_CNT_RETRANSMITS);
		return;
	}
	req->cur = req->issue;
	req->cur_pkt = 0;
	req->psn = req->max_psn;
}

/* Check that the WQE's local buffers may be used, before it is issued. */
static int srnic_req_check_sges(struct srnic_qp *qp,
				const struct srnic_send_wqe *w)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	int access = 0;
	u32 i;

	if (w->opcode == IB_WR_RDMA_READ || srnic_op_is_rd_atomic(w->opcode))
		access = IB_ACCESS_LOCAL_WRITE;
	for (i = 0; i < w->num_sge; i++) {
		const struct ib_sge *sge = &w->sge[i];
		struct srnic_mr *mr;
		int err;

		if (!sge->length)
			continue;
		mr = srnic_mr_get(sdev, sge->lkey, SRNIC_LKEY);
		if (!mr)
			return -EINVAL;
		err = srnic_mr_check(mr, qp->ibqp.pd, sge->addr, sge->length,
				     access);
		srnic_mr_put(mr);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The completion status of a WQE that cannot be executed as issued:
 * local buffers it may not use, a UD message longer than one packet.
 */
static enum ib_wc_status srnic_req_check(struct srnic_qp *qp,
					 const struct srnic_send_wqe *w)
{
	if (srnic_qp_is_ud(qp) && w->length > qp->mtu)
		return IB_WC_LOC_LEN_ERR;
	if (srnic_req_check_sges(qp, w))
		return IB_WC_LOC_PROT_ERR;
	return IB_WC_SUCCESS;
}

static u32 srnic_wqe_npkts(struct srnic_qp *qp, const struct srnic_send_wqe *w)
{
	if (w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    w->opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
		return 1;
	return max_t(u32, 1, DIV_ROUND_UP(w->length, qp->mtu));
}

static bool srnic_op_is_local(u32 wr_opcode)
{
	return wr_opcode == IB_WR_BIND_MW || wr_opcode == IB_WR_LOCAL_INV ||
	       wr_opcode == IB_WR_REG_MR;
}

/*
 * Execute a local operation, in send queue order (when its turn to issue
 * comes). Returns its completion status.
 */
static enum ib_wc_status srnic_req_local(struct srnic_qp *qp,
					 const struct srnic_send_wqe *w)
{
	if (w->opcode == IB_WR_BIND_MW)
		return srnic_mw_bind(qp, w);
	if (w->opcode == IB_WR_REG_MR)
		return srnic_mr_fast_reg(qp, w);
	return srnic_invalidate(qp, w->inv_rkey, false) ? IB_WC_LOC_QP_OP_ERR :
							 IB_WC_SUCCESS;
}

/*
 * Take the next WQE from the pool into the window. Returns 1 if one was
 * issued (or completed at once in error), 0 if none can be now.
 */
static int srnic_req_issue(struct srnic_qp *qp)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;
	struct srnic_send_wqe *w;
	struct srnic_swqe *s;
	bool rd_atomic;
	u32 max_rd;

	/*
	 * The QP's pool share ran dry with WQEs posted: the engine fetches
	 * them itself rather than wait for the prefetch work (a doorbell
	 * whose work has not run yet, while an ACK let the engine in). Only
	 * if the pool has no slot for it is that a stall.
	 */
	if (!READ_ONCE(req->pfq.count) && srnic_pf_pending(qp))
		srnic_req_fetch(qp);
	if (req->bad_wqe &&
	    (req->issue & qp->sq.queue.index_mask) == req->bad_index) {
		/* The malformed WQE's turn: it completes in error. */
		const struct rxe_send_wqe *u;

		s = srnic_req_swqe(qp, req->issue);
		u = srnic_queue_addr(&qp->sq.queue, req->issue);
		memset(&s->wqe, 0, sizeof(s->wqe));
		s->wqe.wr_id = READ_ONCE(u->wr.wr_id);
		s->wqe.opcode = IB_WR_SEND;
		s->npkts = 0;
		s->state = SRNIC_SWQE_DONE;
		s->status = IB_WC_LOC_QP_OP_ERR;
		req->issue++;
		req->cur = req->issue;
		req->cur_pkt = 0;
		return 1;
	}

	w = srnic_pf_head(&sdev->pool, &req->pfq,
			  srnic_queue_producer(&qp->sq.queue));
	if (!w)
		return 0;
	rd_atomic = srnic_op_is_rd_atomic(w->opcode);
	max_rd = max_t(u32, qp->max_rd_atomic, 1);
	if (((w->send_flags & IB_SEND_FENCE) && req->rd_atomic) ||
	    (rd_atomic && req->rd_atomic >= max_rd)) {
		srnic_pf_set_blocked(&sdev->pool, &req->pfq, true);
		return 0;
	}

	s = srnic_req_swqe(qp, req->issue);
	/* The SGE list runs past the struct: copy the QP's WQE size. */
	memcpy((u8 *)s + offsetof(struct srnic_swqe, wqe), w,
	       srnic_send_wqe_size(&req->lim));
	srnic_pf_pop(&sdev->pool, &req->pfq);

	s->first_psn = req->psn;
	s->npkts = srnic_wqe_npkts(qp, &s->wqe);
	s->read_off = 0;
	s->state = SRNIC_SWQE_ISSUED;
	s->status = IB_WC_SUCCESS;
	s->status = srnic_req_check(qp, &s->wqe);
	if (!s->status && srnic_op_is_local(s->wqe.opcode))
		s->status = srnic_req_local(qp, &s->wqe);
	if (s->status || srnic_op_is_local(s->wqe.opcode)) {
		/* Done at issue: nothing goes on the wire. */
		s->state = SRNIC_SWQE_DONE;
		s->npkts = 0;
		req->issue++;
		req->cur = req->issue;
		req->cur_pkt = 0;
		return 1;
	}
	if (rd_atomic) {
		req->rd_atomic++;
		srnic_pf_set_may_block(&sdev->pool, &req->pfq, true);
	}
	req->issue++;
	return 1;
}

/*
 * Allocate a packet of @paylen payload bytes with @pkt's headers written;
 * *@data is where the payload goes. Pad bytes and the ICRC room follow.
 */
static struct sk_buff *srnic_pkt_skb(struct srnic_pkt *pkt, u32 paylen,
				     u8 **data)
{
	const struct srnic_opinfo *info = srnic_opinfo(pkt->opcode);
	struct sk_buff *skb;
	u32 pad = (4 - (paylen & 3)) & 3;
	int hlen;

	if (WARN_ON_ONCE(!info))
		return NULL;
	skb = srnic_skb_alloc(info->hdr_len + paylen + pad + SRNIC_ICRC_SIZE);
	if (!skb)
		return NULL;
	pkt->pad = pad;
	hlen = srnic_pkt_build(pkt, skb->data, skb->len);
	if (WARN_ON_ONCE(hlen < 0)) {
		kfree_skb(skb);
		return NULL;
	}
	*data = skb->data + hlen;
	memset(*data + paylen, 0, pad);
	return skb;
}

/**
 * srnic_build_send() - queue a packet of a QP
 * @qp: the QP it belongs to
 * @out: where the packet is queued for transmission
 * @pkt: the header fields (destination QP and P_Key are set here)
 * @paylen: payload bytes, which the caller writes at the returned address
 *
 * Context: any; never sleeps.
 * Return: where the payload goes, or NULL if no memory.
 */
u8 *srnic_build_send(struct srnic_qp *qp, struct sk_buff_head *out,
		     struct srnic_pkt *pkt, u32 paylen)
{
	struct sk_buff *skb;
	u8 *data;

	pkt->qpn = qp->dest_qpn;
	pkt->pkey = 0xffff;
	skb = srnic_pkt_skb(pkt, paylen, &data);
	if (!skb)
		return NULL;
	__skb_queue_tail(out, skb);
	return data;
}

static u8 srnic_req_rc_opcode(u32 wr_op, bool first, bool last)
{
	switch (wr_op) {
	case IB_WR_SEND:
		return first ? (last ? SRNIC_OP_SEND_ONLY : SRNIC_OP_SEND_FIRST) :
			       (last ? SRNIC_OP_SEND_LAST :
				       SRNIC_OP_SEND_MIDDLE);
	case IB_WR_SEND_WITH_IMM:
		return first ? (last ? SRNIC_OP_SEND_ONLY_IMM :
				       SRNIC_OP_SEND_FIRST) :
			       (last ? SRNIC_OP_SEND_LAST_IMM :
				       SRNIC_OP_SEND_MIDDLE);
	case IB_WR_SEND_WITH_INV:
		return first ? (last ? SRNIC_OP_SEND_ONLY_INV :
				       SRNIC_OP_SEND_FIRST) :
			       (last ? SRNIC_OP_SEND_LAST_INV :
				       SRNIC_OP_SEND_MIDDLE);
	case IB_WR_RDMA_WRITE:
		return first ? (last ? SRNIC_OP_WRITE_ONLY :
				       SRNIC_OP_WRITE_FIRST) :
			       (last ? SRNIC_OP_WRITE_LAST :
				       SRNIC_OP_WRITE_MIDDLE);
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return first ? (last ? SRNIC_OP_WRITE_ONLY_IMM :
				       SRNIC_OP_WRITE_FIRST) :
			       (last ? SRNIC_OP_WRITE_LAST_IMM :
				       SRNIC_OP_WRITE_MIDDLE);
	case IB_WR_RDMA_READ:
		return SRNIC_OP_READ_REQUEST;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return SRNIC_OP_COMPARE_SWAP;
	case SRNIC_WR_ATOMIC_WRITE:
		return SRNIC_OP_ATOMIC_WRITE;
	case SRNIC_WR_FLUSH:
		return SRNIC_OP_FLUSH;
	default:
		return SRNIC_OP_FETCH_ADD;
	}
}

/* The BTH opcode of a request packet: the QP's transport, the WQE's op. */
static u8 srnic_req_opcode(struct srnic_qp *qp, u32 wr_op, bool first,
			   bool last)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UC:
		return SRNIC_TRANSPORT_UC |
		       srnic_req_rc_opcode(wr_op, first, last);
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return SRNIC_TRANSPORT_UD |
		       (wr_op == IB_WR_SEND_WITH_IMM ? SRNIC_OP_SEND_ONLY_IMM :
						       SRNIC_OP_SEND_ONLY);
	default:
		return srnic_req_rc_opcode(wr_op, first, last);
	}
}

/* Build the packet at the transmit position. Returns 0 or -errno. */
static int srnic_req_build(struct srnic_qp *qp, struct srnic_swqe *s,
			   struct sk_buff_head *out)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;
	struct srnic_send_wqe *w = &s->wqe;
	u32 k = req->cur_pkt, off = k * qp->mtu, len = 0;
	bool first = k == 0, last = k + 1 >= s->npkts;
	/* PSNs from the transmit position up to the first one never sent. */
	u32 unsent = srnic_psn_dist(req->max_psn, req->psn);
	u32 psn0 = req->psn;
	struct srnic_pkt pkt = {};
	struct sk_buff *skb;
	u8 *data;
	int err;

	pkt.opcode = srnic_req_opcode(qp, w->opcode, first, last);
	pkt.qpn = qp->dest_qpn;
	pkt.pkey = 0xffff;
	pkt.psn = req->psn;
	if (srnic_qp_is_ud(qp)) {
		/* A Q_Key with the high bit set means "use the QP's own". */
		pkt.qpn = w->remote_qpn;
		pkt.qkey = (w->remote_qkey & BIT(31)) ? qp->qkey :
							w->remote_qkey;
		pkt.src_qpn = qp->ibqp.qp_num;
	}

	switch (w->opcode) {
	case IB_WR_RDMA_READ:
		pkt.va = w->remote_addr + off;
		pkt.rkey = w->rkey;
		pkt.dma_len = w->length - off;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		pkt.va = w->remote_addr;
		pkt.rkey = w->rkey;
		pkt.swap_add = w->swap;
		pkt.compare = w->compare_add;
		break;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		pkt.va = w->remote_addr;
		pkt.rkey = w->rkey;
		pkt.swap_add = w->compare_add;
		break;
	case SRNIC_WR_FLUSH:
		pkt.va = w->remote_addr;
		pkt.rkey = w->rkey;
		pkt.dma_len = w->flush.len;
		pkt.flush_type = w->flush.type;
		pkt.flush_level = w->flush.level;
		pkt.ack_req = true;
		break;
	default:
		len = min(qp->mtu, w->length - off);
		pkt.va = w->remote_addr;
		pkt.rkey = w->rkey;
		pkt.dma_len = w->length;
		pkt.imm = w->imm;
		pkt.inv_rkey = w->inv_rkey;
		pkt.se = last && (w->send_flags & IB_SEND_SOLICITED);
		pkt.ack_req = qp->ibqp.qp_type == IB_QPT_RC &&
			      srnic_ack_req_needed(k, last, 32);
		break;
	}

	skb = srnic_pkt_skb(&pkt, len, &data);
	if (!skb)
		return -ENOMEM;
	if (w->opcode == SRNIC_WR_ATOMIC_WRITE) {
		memcpy(data, &w->swap, len);
	} else if (len) {
		if (w->send_flags & IB_SEND_INLINE) {
			memcpy(data, w->inline_data + off, len);
		} else {
			err = srnic_sge_copy(sdev, qp->ibqp.pd, w->sge,
					     w->num_sge, off, data, len, false);
			if (err) {
				kfree_skb(skb);
				return err;
			}
		}
	}
	if (srnic_qp_is_ud(qp)) {
		struct srnic_skb_cb *cb = srnic_skb_cb(skb);

		memcpy(cb->sgid, w->av.sgid.raw, sizeof(cb->sgid));
		memcpy(cb->dgid, w->av.dgid.raw, sizeof(cb->dgid));
		cb->flow_label = w->av.flow_label;
		cb->tclass = w->av.traffic_class;
		cb->hop_limit = w->av.hop_limit;
		cb->v6 = w->av.network_type == RDMA_NETWORK_IPV6;
		cb->ud = 1;
		cb->sport = rdma_get_udp_sport(w->av.flow_label,
					       qp->ibqp.qp_num, w->remote_qpn);
	}
	__skb_queue_tail(out, skb);

	if (w->opcode == IB_WR_RDMA_READ) {
		/* One request covers every remaining response PSN. */
		req->psn = srnic_psn_add(s->first_psn, s->npkts);
		req->cur_pkt = s->npkts;
	} else {
		req->psn = srnic_psn_add(req->psn, 1);
		req->cur_pkt++;
	}
	if (srnic_psn_dist(req->psn, psn0) > unsent)
		req->max_psn = req->psn;
	if (req->cur_pkt >= s->npkts) {
		req->cur++;
		req->cur_pkt = 0;
	}
	if (w->opcode == IB_WR_SEND || w->opcode == IB_WR_SEND_WITH_IMM ||
	    w->opcode == IB_WR_SEND_WITH_INV)
		srnic_counter_inc(sdev, SRNIC_CNT_RDMA_SENDS);
	return 0;
}

/*
 * One packet from the transmit position, or one WQE that completed at
 * issue (a local operation such as a Bind MW, or an error). Returns 1 if
 * a packet was queued or a WQE completed, 0 if there is nothing to do
 * now. A WQE done at issue costs the round as a packet does: a poster of
 * local operations alone cannot keep the engine running.
 */
static int srnic_req_next(struct srnic_qp *qp, struct sk_buff_head *out)
{
	struct srnic_req *req = &qp->req;
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct srnic_swqe *s;
	u32 idx, sent;
	int err;

	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return 0;
	if (req->rnr_wait || req->flushing)
		return 0;
	sent = srnic_psn_sent(req->psn, req->una, req->max_psn);
	if (sent >= SRNIC_MAX_INFLIGHT)
		return 0;
	if (req->cur == req->issue) {
		if (state == IB_QPS_SQD || !srnic_req_issue(qp))
			return 0;
		s = srnic_req_swqe(qp, req->issue - 1);
		if (s->state == SRNIC_SWQE_DONE) {
			/* Completed at issue: a local operation, or an error. */
			srnic_req_complete(qp);
			return s->status ? 0 : 1;
		}
	}
	idx = req->cur;
	s = srnic_req_swqe(qp, idx);
	/*
	 * A Read's one request claims every response PSN: it waits until
	 * they fit in IBA's 2^23 outstanding PSNs (a 2 GiB Read at MTU 256
	 * takes all of them: it goes out alone).
	 */
	if (s->wqe.opcode == IB_WR_RDMA_READ &&
	    sent + s->npkts - req->cur_pkt > SRNIC_PSN_HALF)
		return 0;
	err = srnic_req_build(qp, s, out);
	if (err == -ENOMEM)
		return 0;
	if (err) {
		/* A local buffer became invalid after issue. */
		s->state = SRNIC_SWQE_DONE;
		s->status = IB_WC_LOC_PROT_ERR;
		srnic_req_complete(qp);
		return 0;
	}
	if (qp->ibqp.qp_type != IB_QPT_RC) {
		/*
		 * UC and UD: nothing is acknowledged. A WQE is done once its
		 * last packet is built (its data copied into the packets).
		 */
		req->una = req->psn;
		if (req->cur != idx) {
			s->state = SRNIC_SWQE_DONE;
			srnic_req_complete(qp);
		}
	}
	return 1;
}

/* Account the packets queued on @out from @from on to the QP's round. */
static void srnic_gate_account(struct srnic_gate_qp *gq,
			       struct sk_buff_head *out, struct sk_buff *from)
{
	struct sk_buff *skb = from ? from->next : out->next;

	for (; skb != (struct sk_buff *)out; skb = skb->next)
		srnic_gate_sent(gq, skb->len);
}

/*
 * One round of a QP at its gate: responder packets (ACKs, Read responses,
 * atomic responses) first, then requester packets, while the gate allows.
 * Returns true if the QP stopped on the gate's limits with more to send.
 */
static bool srnic_req_serve(struct srnic_qp *qp, struct srnic_gate *gate)
{
	struct srnic_gate_qp *gq = &qp->req.gq;
	u32 budget = READ_ONCE(gate->budget);
	struct sk_buff_head out;
	struct sk_buff *skb;
	bool refetch, more;
	u32 issued, built = 0;
	int n;

	if (READ_ONCE(qp->dead))
		return false;
	__skb_queue_head_init(&out);

	n = srnic_resp_tx(qp, &out, budget);
	srnic_gate_account(gq, &out, NULL);
	more = n >= budget;

	spin_lock_bh(&qp->req.lock);
	issued = qp->req.issue;
	while (!more) {
		if (!srnic_gate_may_send(gate, gq)) {
			more = true;
			break;
		}
		skb = skb_peek_tail(&out);
		if (srnic_req_next(qp, &out) <= 0)
			break;
		if (skb_peek_tail(&out) == skb) {
			/* A WQE done at issue: one packet's worth, no bytes. */
			srnic_gate_sent(gq, 0);
			continue;
		}
		srnic_gate_account(gq, &out, skb);
		built++;
	}
	/*
	 * The ACK timeout runs from the newest packet sent, not the oldest
	 * unacknowledged one: a burst that takes longer to send than the
	 * timeout (a slow CPU, a long retransmission) must not time itself
	 * out and go back before its end has left. Once per round, not per
	 * packet.
	 */
	if (built && qp->ibqp.qp_type == IB_QPT_RC)
		srnic_req_arm_timer(qp);
	/*
	 * Fetch more if this round took WQEs from the pool (the lookahead
	 * moved) or found it empty; not if the QP sits at its own limit.
	 */
	refetch = srnic_pf_pending(qp) &&
		  (qp->req.issue != issued || !READ_ONCE(qp->req.pfq.count));
	spin_unlock_bh(&qp->req.lock);

	while ((skb = __skb_dequeue(&out)))
		srnic_xmit(qp, skb);
	if (n)
		srnic_resp_tx_done(qp);

	if (srnic_req_ring_check(qp))
		return false;
	/* A WQE completed in error (or the CQ overflowed): fail the QP. */
	if (READ_ONCE(qp->req.flushing) &&
	    READ_ONCE(qp->state) != IB_QPS_ERR) {
		srnic_qp_error(qp);
		return false;
	}
	if (refetch)
		queue_work(srnic_wq, &qp->req.pf_work);
	return more;
}

/*
 * The transmit engine of one CPU: serves the QPs its gate picks, a round
 * each, at most SRNIC_GATE_ROUNDS rounds and about a round's budget of
 * packets per run; then yields the CPU (to the softirq loop: received
 * packets, other tasklets) and runs again if QPs still wait.
 */
static void srnic_txgate_task(struct tasklet_struct *t)
{
	struct srnic_txgate *g = from_tasklet(g, t, task);
	u32 budget = READ_ONCE(g->gate.budget), sent = 0;
	struct srnic_gate_qp *gq;
	int rounds;
	bool more;

	for (rounds = 0; rounds < SRNIC_GATE_ROUNDS && sent < budget;
	     rounds++) {
		gq = srnic_gate_pick(&g->gate);
		if (!gq)
			return;
		more = srnic_req_serve(container_of(gq, struct srnic_qp, req.gq),
				       &g->gate);
		sent += gq->sent;
		srnic_gate_done(&g->gate, gq, more);
	}
	if (srnic_gate_pending(&g->gate))
		tasklet_schedule(&g->task);
}

static void srnic_req_timer(struct timer_list *t)
{
	struct srnic_qp *qp = from_timer(qp, t, req.timer);
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	struct srnic_req *req = &qp->req;
	bool fail = false;

	spin_lock_bh(&req->lock);
	if (qp->dead || req->flushing)
		goto out;
	if (req->rnr_wait) {
		req->rnr_wait = false;
		srnic_req_arm_timer(qp);
		srnic_req_kick(qp);
		goto out;
	}
	if (req->max_psn == req->una)
		goto out;		/* nothing outstanding */
	if (req->una != req->timer_psn) {
		srnic_req_arm_timer(qp);	/* progress was made */
		goto out;
	}
	srnic_counter_inc(sdev, SRNIC_CNT_COMP_RETRY);
	if (!req->retry_left) {
		srnic_counter_inc(sdev, SRNIC_CNT_RETRY_EXC);
		fail = true;
		goto out;
	}
	req->retry_left--;
	req->gap_pending = false;
	srnic_req_rewind(qp, req->una);
	srnic_req_arm_timer(qp);
	srnic_req_kick(qp);
out:
	spin_unlock_bh(&req->lock);
	if (fail)
		srnic_req_fail(qp, req->comp, IB_WC_RETRY_EXC_ERR);
}

/**
 * srnic_req_init() - the requester state of a new QP
 * @qp: the QP, its send ring created
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int srnic_req_init(struct srnic_qp *qp)
{
	struct srnic_req *req = &qp->req;
	u32 slots = qp->sq.queue.index_mask + 1;
	int err;

	spin_lock_init(&req->lock);
	req->lim.type = qp->ibqp.qp_type;
	req->lim.max_sge = qp->sq.max_sge;
	req->lim.max_inline = qp->sq.max_inline;
	req->lim.kernel = !qp->is_user;
	req->stride = ALIGN(offsetof(struct srnic_swqe, wqe) +
			    srnic_send_wqe_size(&req->lim), 8);
	req->window = kvcalloc(slots, req->stride, GFP_KERNEL);
	req->fetch_size = 1U << qp->sq.queue.log2_elem_size;
	req->fetch_buf = kmalloc(req->fetch_size, GFP_KERNEL);
	if (!req->window || !req->fetch_buf) {
		err = -ENOMEM;
		goto out;
	}
	err = srnic_pfq_init(&req->pfq, qp->sq.queue.index_mask, 0);
	if (err)
		goto out;
	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err) {
		srnic_pfq_cleanup(&to_sdev(qp->ibqp.device)->pool, &req->pfq);
		goto out;
	}
	INIT_WORK(&req->pf_work, srnic_pf_work);
	srnic_gate_qp_init(&req->gq, 0);
	timer_setup(&req->timer, srnic_req_timer, 0);
	req->cpu = srnic_req_pick_cpu();
	srnic_resp_init(qp);
	return 0;
out:
	kfree(req->fetch_buf);
	kvfree(req->window);
	return err;
}

/**
 * srnic_qp_quiesce() - stop every pipeline stage of a QP
 * @qp: the QP; nothing rearms its stages any more: it is being destroyed
 *	(@qp->dead set, receivers done with it after synchronize_net()) or
 *	in RESET (the receive path drops its packets)
 *
 * Context: process context, may sleep.
 */
void srnic_qp_quiesce(struct srnic_qp *qp)
{
	struct srnic_txgate *g = per_cpu_ptr(to_sdev(qp->ibqp.device)->txgates,
					     qp->req.cpu);

	cancel_work_sync(&qp->req.pf_work);
	del_timer_sync(&qp->req.timer);
	/* Out of the gate; if its engine is serving the QP, wait for it. */
	while (!srnic_gate_remove(&g->gate, &qp->req.gq))
		cond_resched();
	/* What that last round may have started. */
	cancel_work_sync(&qp->req.pf_work);
	del_timer_sync(&qp->req.timer);
}

/**
 * srnic_req_cleanup() - free the requester state
 * @qp: the QP, quiesced
 *
 * Context: process context.
 */
void srnic_req_cleanup(struct srnic_qp *qp)
{
	srnic_pfq_cleanup(&to_sdev(qp->ibqp.device)->pool, &qp->req.pfq);
	dst_cache_destroy(&qp->dst_cache);
	kfree(qp->req.fetch_buf);
	kvfree(qp->req.window);
	srnic_resp_reset(qp);
	kfree(qp->resp.ares);
}

/**
 * srnic_req_start() - the QP enters RTS: start from its send PSN
 * @qp: the QP; caller holds state_lock
 *
 * Context: process context.
 */
void srnic_req_start(struct srnic_qp *qp)
{
	struct srnic_req *req = &qp->req;

	spin_lock_bh(&req->lock);
	req->psn = qp->sq_psn;
	req->una = qp->sq_psn;
	req->max_psn = qp->sq_psn;
	req->retry_left = qp->retry_cnt;
	req->rnr_left = qp->rnr_retry;
	req->rnr_wait = false;
	/* Strict priority (a demonstration policy): lower service level first. */
	req->gq.prio = qp->av.sl;
	req->sport = rdma_get_udp_sport(qp->av.flow_label, qp->ibqp.qp_num,
					qp->dest_qpn);
	/* UD messages are one packet of at most the port's MTU. */
	if (srnic_qp_is_ud(qp))
		qp->mtu = srnic_port_mtu(to_sdev(qp->ibqp.device));
	spin_unlock_bh(&req->lock);
	dst_cache_reset(&qp->dst_cache);
}

/**
 * srnic_req_reset() - back to RESET: forget all work
 * @qp: the QP, quiesced; caller holds state_lock
 *
 * Context: process context.
 */
void srnic_req_reset(struct srnic_qp *qp)
{
	struct srnic_req *req = &qp->req;

	srnic_pf_restart(&to_sdev(qp->ibqp.device)->pool, &req->pfq, 0);
	spin_lock_bh(&req->lock);
	req->comp = 0;
	req->issue = 0;
	req->cur = 0;
	req->cur_pkt = 0;
	req->rd_atomic = 0;
	req->bad_wqe = false;
	req->ring_bad = false;
	req->flushing = false;
	req->rnr_wait = false;
	req->read_map_valid = false;
	spin_unlock_bh(&req->lock);
	srnic_resp_reset(qp);
}

/* Write one kernel work request into the send ring. */
static int srnic_post_one(struct srnic_qp *qp, const struct ib_send_wr *wr)
{
	struct srnic_wq *sq = &qp->sq;
	struct rxe_send_wqe *u;
	u32 i, len = 0;

	if (unlikely(wr->num_sge < 0 || wr->num_sge > sq->max_sge))
		return -EINVAL;
	/*
	 * No kernel user posts Atomic Write or Flush: struct ib_send_wr has
	 * no place for their data or their placement type.
	 */
	if (unlikely(wr->opcode == SRNIC_WR_ATOMIC_WRITE ||
		     wr->opcode == SRNIC_WR_FLUSH))
		return -EOPNOTSUPP;
	if (unlikely(srnic_queue_full(&sq->queue)))
		return -ENOMEM;

	u = srnic_queue_addr(&sq->queue, srnic_queue_producer(&sq->queue));
	memset(u, 0, sizeof(*u));
	u->wr.wr_id = wr->wr_id;
	u->wr.opcode = wr->opcode;
	u->wr.send_flags = wr->send_flags;
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		u->wr.ex.imm_data = wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		u->wr.ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		u->wr.wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		u->wr.wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		u->wr.wr.reg.mr = reg_wr(wr)->mr;
		u->wr.wr.reg.key = reg_wr(wr)->key;
		u->wr.wr.reg.access = reg_wr(wr)->access;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		u->wr.wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		u->wr.wr.atomic.rkey = atomic_wr(wr)->rkey;
		u->wr.wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		u->wr.wr.atomic.swap = atomic_wr(wr)->swap;
		break;
	default:
		break;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		u8 *p = u->dma.inline_data;

		for (i = 0; i < wr->num_sge; i++) {
			u32 n = wr->sg_list[i].length;

			if (len + n > sq->max_inline)
				return -EINVAL;
			memcpy(p + len, (void *)(uintptr_t)wr->sg_list[i].addr,
			       n);
			len += n;
		}
	} else {
		for (i = 0; i < wr->num_sge; i++) {
			u->dma.sge[i].addr = wr->sg_list[i].addr;
			u->dma.sge[i].length = wr->sg_list[i].length;
			u->dma.sge[i].lkey = wr->sg_list[i].lkey;
			len += wr->sg_list[i].length;
		}
		u->dma.num_sge = wr->num_sge;
	}
	if (srnic_qp_is_ud(qp)) {
		u->wr.wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		u->wr.wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
		u->wr.wr.ud.ah_num = to_sah(ud_wr(wr)->ah)->ah_num;
	}
	u->dma.length = len;
	u->dma.resid = len;
	srnic_queue_advance_producer(&sq->queue);
	return 0;
}

/**
 * srnic_req_doorbell() - schedule the prefetch stage
 * @qp: the QP
 *
 * Context: any.
 */
void srnic_req_doorbell(struct srnic_qp *qp)
{
	queue_work(srnic_wq, &qp->req.pf_work);
}

/**
 * srnic_post_send() - the send doorbell
 * @ibqp: the QP
 * @wr: work requests (kernel QPs), or none (librxe's doorbell: the
 *	process wrote the ring itself)
 * @bad_wr: the first request not posted
 *
 * Kernel requests are written into the QP's ring, exactly as librxe
 * writes a user QP's. Either way the doorbell only schedules the
 * prefetch stage: no packet is built in the caller's context.
 *
 * Context: any, never sleeps, for kernel QPs; process context for user
 * QPs (a refused doorbell takes state_lock to discard what it covered).
 * Return: 0, -EINVAL (QP not ready to send, bad request), -ENOMEM (ring
 * full), -EOPNOTSUPP (an operation kernel users cannot post).
 */
int srnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct srnic_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;
	int err = 0;

	if (unlikely(state < IB_QPS_RTS)) {
		*bad_wr = wr;
		if (qp->is_user) {
			/* librxe's doorbell: the WQEs are in the ring. */
			mutex_lock(&qp->state_lock);
			if (READ_ONCE(qp->state) < IB_QPS_RTS)
				srnic_req_discard(qp);
			mutex_unlock(&qp->state_lock);
		}
		return -EINVAL;
	}
	if (!qp->is_user) {
		spin_lock_irqsave(&qp->sq.lock, flags);
		for (; wr; wr = wr->next) {
			err = srnic_post_one(qp, wr);
			if (err) {
				*bad_wr = wr;
				break;
			}
		}
		spin_unlock_irqrestore(&qp->sq.lock, flags);
	}
	srnic_req_doorbell(qp);
	return err;
}
