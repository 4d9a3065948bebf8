// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the transmit gate (see srnic_sched.h).
 *
 * The gate is plain data under one lock: the transmit engine asks it who
 * runs next (srnic_gate_pick()), sends while srnic_gate_may_send() allows,
 * accounting each packet (srnic_gate_sent()), and hands the QP back
 * (srnic_gate_done()). A QP whose head WQE cannot issue (blocked fence,
 * window full) is simply not handed back with work; it is woken when the
 * obstacle clears.
 */
#include <linux/module.h>
#include <kunit/visibility.h>

#include "srnic_sched.h"

static const char * const srnic_gate_names[SRNIC_GATE_NR_POLICIES] = {
	[SRNIC_GATE_DRR] = "drr",
	[SRNIC_GATE_RR] = "rr",
	[SRNIC_GATE_STRICT] = "strict",
};

/**
 * srnic_gate_policy_name() - a policy's name, as the sysfs tunable shows it
 * @policy: the policy
 *
 * Context: any.
 * Return: the name, or NULL for no such policy.
 */
const char *srnic_gate_policy_name(enum srnic_gate_policy policy)
{
	return policy < SRNIC_GATE_NR_POLICIES ? srnic_gate_names[policy] :
						 NULL;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_policy_name);

/**
 * srnic_gate_init() - set up a gate
 * @gate: the gate
 * @policy: the policy
 * @quantum: DRR bytes per round (at least one packet's worth)
 * @budget: packets per round (at least 1)
 *
 * Context: any.
 */
void srnic_gate_init(struct srnic_gate *gate, enum srnic_gate_policy policy,
		     u32 quantum, u32 budget)
{
	spin_lock_init(&gate->lock);
	INIT_LIST_HEAD(&gate->active);
	gate->policy = policy;
	gate->quantum = max_t(u32, quantum, 1);
	gate->budget = max_t(u32, budget, 1);
	gate->rounds = 0;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_init);

/**
 * srnic_gate_set_policy() - change the policy of a live gate
 * @gate: the gate
 * @policy: the new policy
 *
 * Context: any.
 * Return: 0, or -EINVAL for no such policy.
 */
int srnic_gate_set_policy(struct srnic_gate *gate,
			  enum srnic_gate_policy policy)
{
	if (policy >= SRNIC_GATE_NR_POLICIES)
		return -EINVAL;
	spin_lock_bh(&gate->lock);
	gate->policy = policy;
	spin_unlock_bh(&gate->lock);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_set_policy);

/**
 * srnic_gate_qp_init() - a QP's gate state
 * @gq: the state
 * @prio: its strict priority (lower first)
 *
 * Context: any.
 */
void srnic_gate_qp_init(struct srnic_gate_qp *gq, u8 prio)
{
	INIT_LIST_HEAD(&gq->node);
	gq->queued = false;
	gq->running = false;
	gq->rewake = false;
	gq->prio = prio;
	gq->deficit = 0;
	gq->sent = 0;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_qp_init);

/**
 * srnic_gate_wake() - a QP has issuable work
 * @gate: the gate
 * @gq: the QP; joins the tail unless queued; if being served, it goes
 *	back to the tail when done (its service may have looked before the
 *	work the wake announces was there)
 *
 * Context: any but hard interrupt; never sleeps.
 * Return: true if @gq joined the list now: the caller makes sure the gate
 * runs. False if it was queued already or is being served (the engine
 * serving it sees it again).
 */
bool srnic_gate_wake(struct srnic_gate *gate, struct srnic_gate_qp *gq)
{
	bool joined = false;

	spin_lock_bh(&gate->lock);
	if (gq->running) {
		gq->rewake = true;
	} else if (!gq->queued) {
		list_add_tail(&gq->node, &gate->active);
		gq->queued = true;
		joined = true;
	}
	spin_unlock_bh(&gate->lock);
	return joined;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_wake);

/**
 * srnic_gate_remove() - take a QP out of the gate (destroy, reset)
 * @gate: the gate
 * @gq: the QP
 *
 * A QP being served cannot be removed: its engine still uses it. The
 * caller, which has stopped everything that wakes the QP, retries until
 * the service is over.
 *
 * Context: any but hard interrupt; never sleeps.
 * Return: true if @gq is out of the gate, false if it is being served.
 */
bool srnic_gate_remove(struct srnic_gate *gate, struct srnic_gate_qp *gq)
{
	bool out = true;

	spin_lock_bh(&gate->lock);
	if (gq->running) {
		out = false;
	} else {
		if (gq->queued)
			list_del_init(&gq->node);
		gq->queued = false;
		gq->rewake = false;
		gq->deficit = 0;
	}
	spin_unlock_bh(&gate->lock);
	return out;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_remove);

/**
 * srnic_gate_pending() - does a QP wait in the gate?
 * @gate: the gate
 *
 * Context: any but hard interrupt; never sleeps.
 * Return: true if the active list is not empty.
 */
bool srnic_gate_pending(struct srnic_gate *gate)
{
	bool pending;

	spin_lock_bh(&gate->lock);
	pending = !list_empty(&gate->active);
	spin_unlock_bh(&gate->lock);
	return pending;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_pending);

/*
 * Start a round of @gq, as srnic_gate_pick() does. Caller holds the lock.
 */
static void srnic_gate_start_round(struct srnic_gate *gate,
				   struct srnic_gate_qp *gq)
{
	gq->running = true;
	gq->sent = 0;
	if (gate->policy == SRNIC_GATE_DRR)
		gq->deficit += gate->quantum;
	gate->rounds++;
}

/**
 * srnic_gate_claim() - serve an idle QP at an idle gate now
 * @gate: the gate
 * @gq: the QP
 *
 * For a caller that runs the QP's round itself instead of waking the
 * gate's engine: granted only if no QP waits in the gate (the caller
 * cuts no line) and @gq is neither waiting nor being served (one round of
 * a QP at a time). The round is the engine's: the same budget and
 * quantum, counted in @gate's rounds, ended by srnic_gate_done().
 *
 * Context: any but hard interrupt; never sleeps.
 * Return: true if the round is the caller's.
 */
bool srnic_gate_claim(struct srnic_gate *gate, struct srnic_gate_qp *gq)
{
	bool ok;

	spin_lock_bh(&gate->lock);
	ok = !gq->queued && !gq->running && list_empty(&gate->active);
	if (ok)
		srnic_gate_start_round(gate, gq);
	spin_unlock_bh(&gate->lock);
	return ok;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_claim);

/**
 * srnic_gate_pick() - the QP to serve next
 * @gate: the gate
 *
 * Round-robin policies take the head of the list; strict priority the
 * first QP of the lowest priority value. The QP leaves the list while it
 * is served and gets a fresh budget (and, under DRR, a quantum).
 *
 * Context: any; never sleeps.
 * Return: the QP, or NULL if none has work.
 */
struct srnic_gate_qp *srnic_gate_pick(struct srnic_gate *gate)
{
	struct srnic_gate_qp *gq = NULL, *it;

	spin_lock_bh(&gate->lock);
	if (gate->policy == SRNIC_GATE_STRICT) {
		list_for_each_entry(it, &gate->active, node)
			if (!gq || it->prio < gq->prio)
				gq = it;
	} else {
		gq = list_first_entry_or_null(&gate->active,
					      struct srnic_gate_qp, node);
	}
	if (gq) {
		list_del_init(&gq->node);
		gq->queued = false;
		srnic_gate_start_round(gate, gq);
	}
	spin_unlock_bh(&gate->lock);
	return gq;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_pick);

/**
 * srnic_gate_may_send() - may the QP being served send another packet
 * @gate: the gate
 * @gq: the QP, from srnic_gate_pick()
 *
 * Context: the transmit engine serving @gq.
 * Return: true while within the budget (and, under DRR, the deficit).
 */
bool srnic_gate_may_send(struct srnic_gate *gate, struct srnic_gate_qp *gq)
{
	if (gq->sent >= READ_ONCE(gate->budget))
		return false;
	return READ_ONCE(gate->policy) != SRNIC_GATE_DRR || gq->deficit > 0;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_may_send);

/**
 * srnic_gate_sent() - account one packet to the QP being served
 * @gq: the QP
 * @bytes: its length on the wire
 *
 * Context: the transmit engine serving @gq.
 */
void srnic_gate_sent(struct srnic_gate_qp *gq, u32 bytes)
{
	gq->sent++;
	gq->deficit -= bytes;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_sent);

/**
 * srnic_gate_done() - the QP's round is over
 * @gate: the gate
 * @gq: the QP
 * @more: it still has issuable work: back to the tail (so does a QP
 *	woken while it was served)
 *
 * A QP without work forfeits its deficit (DRR keeps no credit for idle
 * QPs); one that stopped on its budget keeps what is left of it.
 *
 * Context: any; never sleeps.
 */
void srnic_gate_done(struct srnic_gate *gate, struct srnic_gate_qp *gq,
		     bool more)
{
	spin_lock_bh(&gate->lock);
	gq->running = false;
	if (more || gq->rewake) {
		list_add_tail(&gq->node, &gate->active);
		gq->queued = true;
		if (gq->deficit > (s64)gate->quantum)
			gq->deficit = gate->quantum;
	} else {
		gq->deficit = 0;
	}
	gq->rewake = false;
	spin_unlock_bh(&gate->lock);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gate_done);
