/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic: the transport seam. The reliability mechanism of a QP (its PSN
 * window, what an ACK or NAK means, what to retransmit and when, what the
 * responder takes, acknowledges and NAKs) is one table of operations;
 * the requester (srnic_req.c), the gate (srnic_gate.c), the completer
 * (srnic_comp.c) and the responder (srnic_resp.c) call only these, and
 * placement and completion do not know which mechanism runs.
 *
 * Go-back-N, standard RoCEv2 (srnic_gbn.c), is the first implementation;
 * selective repeat over several paths, negotiated between srnic peers,
 * the second. UC and UD QPs carry the table too: nothing answers them, so
 * only may_send() is ever asked.
 */
#ifndef SRNIC_TRANSPORT_H
#define SRNIC_TRANSPORT_H

#include "srnic.h"

/* What the responder's transport makes of a request's PSN. */
enum srnic_rx_class {
	SRNIC_RX_NEW,	/* the next request: the responder executes it */
	SRNIC_RX_DUP,	/* one already executed: replayed or acknowledged */
	SRNIC_RX_DROP,	/* not now (the transport answered it if it must) */
};

/**
 * struct srnic_xport_ops - a reliability mechanism
 * @name: for logs and the QP's restrack entry
 * @init: a new QP (process context): set up timers
 * @start: the QP enters RTS: the retry budgets from its attributes
 * @stop: stop the timers (@sync: wait for a running one; process context)
 * @may_send: may the requester send the next packet now: of @s, or of
 *	whatever comes next if @s is NULL
 * @sent: the gate's round put packets of the QP on the wire
 * @acked: every PSN up to and including @psn is acknowledged (also what a
 *	Read or atomic response implies); returns true if the window moved
 * @ack: an ACK, RNR NAK or NAK; returns true if the window moved or a WQE
 *	completed
 * @lost: the response at @psn is missing though later ones arrived
 * @alive: the responder answered with something the requester cannot use
 *	(a replay of what it has): it is alive, retransmit later
 * @progress: the window moved on @pkt (@una: the oldest unacknowledged PSN
 *	before it): renew the retry budgets, rearm the timer
 * @rx_check: a request packet at the responder: new, duplicate or dropped
 *	(a packet ahead of the expected PSN is NAKed here); under resp.lock
 * @rx_ack: the responder took @pkt (no response of its own): acknowledge
 *	it, now or coalesced; under resp.lock
 * @rx_rnr: no receive WQE for @pkt: RNR NAK it; under resp.lock
 *
 * Requester operations run under req.lock unless said otherwise.
 */
struct srnic_xport_ops {
	const char *name;
	void (*init)(struct srnic_qp *qp);
	void (*start)(struct srnic_qp *qp);
	void (*stop)(struct srnic_qp *qp, bool sync);
	bool (*may_send)(struct srnic_qp *qp, const struct srnic_swqe *s);
	void (*sent)(struct srnic_qp *qp);
	bool (*acked)(struct srnic_qp *qp, u32 psn);
	bool (*ack)(struct srnic_qp *qp, const struct srnic_pkt *pkt);
	void (*lost)(struct srnic_qp *qp, u32 psn);
	void (*alive)(struct srnic_qp *qp);
	void (*progress)(struct srnic_qp *qp, const struct srnic_pkt *pkt,
			 u32 una);
	enum srnic_rx_class (*rx_check)(struct srnic_qp *qp,
					const struct srnic_pkt *pkt,
					struct sk_buff_head *out);
	void (*rx_ack)(struct srnic_qp *qp, const struct srnic_pkt *pkt,
		       struct sk_buff_head *out);
	void (*rx_rnr)(struct srnic_qp *qp, const struct srnic_pkt *pkt,
		       struct sk_buff_head *out);
};

/* srnic_gbn.c: go-back-N, standard RoCEv2 */
extern const struct srnic_xport_ops srnic_xport_gbn;

/* What the completer lends a transport (srnic_comp.c), under req.lock. */
struct srnic_swqe *srnic_req_find(struct srnic_qp *qp, u32 psn);
void srnic_req_fail_locked(struct srnic_qp *qp, struct srnic_swqe *s,
			   enum ib_wc_status status);

#endif /* SRNIC_TRANSPORT_H */
