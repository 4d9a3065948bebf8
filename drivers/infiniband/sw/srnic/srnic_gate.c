// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the transmit gate.
 *
 *   prefetch (srnic_doorbell.c) --> pool --> TX gate --> requester, responder
 *
 * Each QP belongs to one CPU's transmit gate (srnic_sched.h: the policy
 * and its fairness accounting); the gate's tasklet, the transmit engine,
 * serves the QPs with work in the order the gate's policy picks (deficit
 * round-robin by bytes by default). A round of a QP sends its responder
 * packets first, then what the requester (srnic_req.c) builds, at most
 * srnic_tx_budget packets (and, under DRR, the QP's deficit of bytes) per
 * round. A QP that cannot send leaves the gate until an ACK, a response
 * or a doorbell wakes it, so a QP blocked on a fence costs the others
 * nothing. A kick from another CPU reaches the gate's CPU by an IPI.
 *
 * Locking: req.lock (BH) protects the window and positions. Packets are
 * built under it and sent after it is dropped: nothing is ever handed to
 * the network stack, which may loop straight back into srnic_rx(), with a
 * QP lock held.
 */
#include <linux/module.h>
#include <linux/smp.h>
#include <rdma/ib_verbs.h>

#include "srnic.h"
#include "srnic_transport.h"

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

static void srnic_txgate_task(struct tasklet_struct *t);
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
	sdev->doorbell_run_max = SRNIC_DOORBELL_RUN_MAX;
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

static atomic_t srnic_tx_next_cpu = ATOMIC_INIT(0);

/**
 * srnic_req_pick_cpu() - the CPU whose gate a new QP joins
 *
 * Spreads the QPs' transmit engines over the online CPUs.
 *
 * Context: process context.
 * Return: a CPU number.
 */
int srnic_req_pick_cpu(void)
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
 *
 * @now: from process context with bottom halves enabled (the prefetch
 * work, a doorbell), a tasklet scheduled bare waits for ksoftirqd or the
 * next interrupt; scheduled with bottom halves off, it runs on
 * local_bh_enable(), here, before the caller goes on. @now picks the
 * second; a doorbell that must return at once picks the first.
 */
static void srnic_txgate_run(struct srnic_txgate *g, bool now)
{
	bool bh = now && !in_interrupt() && !irqs_disabled();

	if (bh)
		local_bh_disable();
	if (g->cpu == get_cpu() || !cpu_online(g->cpu)) {
		tasklet_schedule(&g->task);
	} else if (!atomic_xchg(&g->ipi_busy, 1) &&
		   smp_call_function_single_async(g->cpu, &g->csd)) {
		/* The CPU went offline: run here. */
		atomic_set(&g->ipi_busy, 0);
		tasklet_schedule(&g->task);
	}
	put_cpu();
	if (bh)
		local_bh_enable();
}

static void __srnic_req_kick(struct srnic_qp *qp, bool now)
{
	struct srnic_txgate *g;

	if (READ_ONCE(qp->dead))
		return;
	g = per_cpu_ptr(to_sdev(qp->ibqp.device)->txgates, qp->tx_cpu);
	if (srnic_gate_wake(&g->gate, &qp->gq))
		srnic_txgate_run(g, now);
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
	__srnic_req_kick(qp, true);
}

/**
 * srnic_req_kick_later() - wake a QP at its gate, not in this context
 * @qp: the QP
 *
 * As srnic_req_kick(), but from process context the engine does not run
 * before this returns: it runs in ksoftirqd, on the next interrupt, or on
 * the gate's CPU. For a doorbell handing on a message too large to send
 * while the poster waits.
 *
 * Context: any but hard interrupt.
 */
void srnic_req_kick_later(struct srnic_qp *qp)
{
	__srnic_req_kick(qp, false);
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
	struct srnic_gate_qp *gq = &qp->gq;
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
		qp->xport->sent(qp);
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
		srnic_req_doorbell(qp);
	return more;
}

/**
 * srnic_gate_serve_now() - an idle QP's round, on this CPU, now
 * @qp: the QP, with nothing in flight, its first WQEs just fetched by its
 *	doorbell
 *
 * Waking the gate's engine would cost a tasklet run, and when the QP's
 * gate is another CPU's an IPI there: for a QP alone at an idle gate the
 * round runs here instead, with bottom halves off, exactly as the engine
 * runs it (srnic_gate_claim(): the gate's budget and quantum, and no
 * second round of the QP anywhere meanwhile; a wake in between puts it
 * back in the gate when the round ends). Nothing of an RC QP is in flight
 * (all acknowledged), so no earlier packet of it is queued on another
 * CPU's path to overtake; UC and UD QPs are served here only on their
 * gate's CPU.
 * Bottom halves come back on before the round ends: what the round sent
 * into this CPU's receive backlog (a veth peer) is delivered before the
 * engine may send the QP's next packets from its own CPU.
 *
 * Context: any. Only process context with interrupts enabled serves (in
 * softirq the backlog would wait for the softirq loop): elsewhere it
 * returns false.
 * Return: false if it did not serve the QP: the caller kicks it.
 */
bool srnic_gate_serve_now(struct srnic_qp *qp)
{
	struct srnic_txgate *g = per_cpu_ptr(to_sdev(qp->ibqp.device)->txgates,
					     qp->tx_cpu);
	bool more;

	if (in_interrupt() || irqs_disabled() || READ_ONCE(qp->dead))
		return false;
	local_bh_disable();
	/*
	 * UC and UD acknowledge nothing: their last packets may still wait
	 * on the gate CPU's path, so they take the round only there.
	 */
	if ((qp->ibqp.qp_type != IB_QPT_RC &&
	     qp->tx_cpu != smp_processor_id()) ||
	    !srnic_gate_claim(&g->gate, &qp->gq)) {
		local_bh_enable();
		return false;
	}
	more = srnic_req_serve(qp, &g->gate);
	local_bh_enable();
	srnic_gate_done(&g->gate, &qp->gq, more);
	/*
	 * The QP back in the gate: woken meanwhile (an ACK), served here at
	 * once; more to send than a round, served by the engine while the
	 * poster goes on.
	 */
	if (srnic_gate_pending(&g->gate))
		srnic_txgate_run(g, !more);
	return true;
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
		more = srnic_req_serve(container_of(gq, struct srnic_qp, gq),
				       &g->gate);
		sent += gq->sent;
		srnic_gate_done(&g->gate, gq, more);
	}
	if (srnic_gate_pending(&g->gate))
		tasklet_schedule(&g->task);
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
					     qp->tx_cpu);

	cancel_work_sync(&qp->req.pf_work);
	qp->xport->stop(qp, true);
	/* Out of the gate; if its engine is serving the QP, wait for it. */
	while (!srnic_gate_remove(&g->gate, &qp->gq))
		cond_resched();
	/* What that last round may have started. */
	cancel_work_sync(&qp->req.pf_work);
	qp->xport->stop(qp, true);
}
