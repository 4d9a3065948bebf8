/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic: the transmit gate, which decides which QP sends next.
 *
 * QPs with an issuable WQE wait in the gate's active list. Each service
 * of a QP ("a round") sends at most a budget of packets and, under
 * deficit round-robin, at most its deficit of bytes (a quantum is added
 * per round); a QP with more to send goes back to the tail. So a busy QP
 * cannot starve another, and QPs sending large messages get no more bytes
 * than QPs sending small ones.
 *
 * Strict priority exists only to demonstrate the failure it causes: a QP
 * whose fence clears never runs again while a higher-priority QP always
 * has work.
 */
#ifndef SRNIC_SCHED_H
#define SRNIC_SCHED_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

enum srnic_gate_policy {
	SRNIC_GATE_DRR,		/* deficit round-robin by bytes (default) */
	SRNIC_GATE_RR,		/* round-robin by packets */
	SRNIC_GATE_STRICT,	/* strict priority: demonstration only */
	SRNIC_GATE_NR_POLICIES
};

/**
 * struct srnic_gate - a device's transmit gate
 * @lock: protects the list and every member's gate state
 * @policy: the policy
 * @quantum: bytes added to a QP's deficit per round (DRR)
 * @budget: most packets a QP sends per round
 * @active: QPs with issuable work, in service order
 * @rounds: services granted (tx_gate_rounds)
 */
struct srnic_gate {
	spinlock_t lock;	/* see above */
	enum srnic_gate_policy policy;
	u32 quantum;
	u32 budget;
	struct list_head active;
	u64 rounds;
};

/**
 * struct srnic_gate_qp - a QP's place at the gate
 * @node: entry in srnic_gate::active while @queued
 * @queued: waiting in the active list
 * @running: being served (picked, not yet done)
 * @rewake: woken while @running: back in the list when done, even if
 *	the service ran out of work (the wake found new work after it looked)
 * @prio: strict priority: lower is served first
 * @deficit: DRR: bytes the QP may still send this round
 * @sent: packets sent in the current round
 */
struct srnic_gate_qp {
	struct list_head node;
	bool queued;
	bool running;
	bool rewake;
	u8 prio;
	s64 deficit;
	u32 sent;
};

void srnic_gate_init(struct srnic_gate *gate, enum srnic_gate_policy policy,
		     u32 quantum, u32 budget);
int srnic_gate_set_policy(struct srnic_gate *gate,
			  enum srnic_gate_policy policy);
void srnic_gate_qp_init(struct srnic_gate_qp *gq, u8 prio);
bool srnic_gate_wake(struct srnic_gate *gate, struct srnic_gate_qp *gq);
bool srnic_gate_remove(struct srnic_gate *gate, struct srnic_gate_qp *gq);
bool srnic_gate_pending(struct srnic_gate *gate);
bool srnic_gate_claim(struct srnic_gate *gate, struct srnic_gate_qp *gq);
struct srnic_gate_qp *srnic_gate_pick(struct srnic_gate *gate);
bool srnic_gate_may_send(struct srnic_gate *gate, struct srnic_gate_qp *gq);
void srnic_gate_sent(struct srnic_gate_qp *gq, u32 bytes);
void srnic_gate_done(struct srnic_gate *gate, struct srnic_gate_qp *gq,
		     bool more);
const char *srnic_gate_policy_name(enum srnic_gate_policy policy);

#endif /* SRNIC_SCHED_H */
