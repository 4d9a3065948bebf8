/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic: what the responders share (srnic_resp.c and srnic_resp_tx.c for
 * RC, srnic_resp_uc_ud.c for UC and UD): the named outcomes of a request
 * packet, what each answers, the one place the responder's PSN and MSN
 * advance, the Send and Write placement both connected services run, and
 * how responses leave in PSN order.
 */
#ifndef SRNIC_RESP_H
#define SRNIC_RESP_H

#include "srnic.h"

/*
 * What the responder made of a request packet, one name per outcome (as
 * rdma_rxe's resp_states name its responder's). srnic_resp_answers[]
 * says what each one answers: the NAK and the asynchronous event of an RC
 * QP that fails, and whether a UC QP fails too. Only srnic_resp_rx() and
 * srnic_resp_uc_rx() act on an outcome; the handlers only name it.
 */
enum srnic_resp_verdict {
	SRNIC_RESP_OK,		/* taken; the message goes on */
	SRNIC_RESP_DONE,	/* taken, and the message is complete */
	SRNIC_RESP_RNR,		/* no receive WQE posted: RNR NAK */
	SRNIC_RESP_DROP_NOMEM,	/* no memory for a Read's job: dropped */
	SRNIC_RESP_DROP_CQE,	/* the receive CQE was lost (CQ overrun) */
	/* NAK invalid request */
	SRNIC_RESP_ERR_SEQUENCE,	/* opcode does not fit the message */
	SRNIC_RESP_ERR_OPCODE,		/* opcode the RC responder lacks */
	SRNIC_RESP_ERR_PKT_LEN,		/* payload against the path MTU */
	SRNIC_RESP_ERR_MSG_LEN,		/* against the RETH length or limit */
	SRNIC_RESP_ERR_ALIGN,		/* an atomic's address not aligned */
	SRNIC_RESP_ERR_FLUSH,		/* a Flush type or level not allowed */
	SRNIC_RESP_ERR_RECV_LEN,	/* longer than the receive WQE */
	SRNIC_RESP_ERR_INVALIDATE,	/* a key Send with Invalidate may not kill */
	/* NAK remote access error */
	SRNIC_RESP_ERR_QP_ACCESS,	/* the QP does not allow the operation */
	SRNIC_RESP_ERR_RKEY,		/* R_Key: unknown, PD, rights, bounds */
	SRNIC_RESP_ERR_REMAPPED,	/* the MR was remapped after its check */
	/* NAK remote operational error */
	SRNIC_RESP_ERR_RWQE,		/* the receive WQE could not be read */
	SRNIC_RESP_ERR_RECV_PROT,	/* its buffers failed their L_Key check */
	SRNIC_RESP_NR_VERDICTS
};

/**
 * struct srnic_resp_answer - what an outcome answers
 * @name: for the debug log
 * @syndrome: the NAK's AETH syndrome that fails an RC QP, 0 if none
 * @ev: the asynchronous event of that failure
 * @uc_fail: a local error that completed (or could not read) a receive
 *	WQE: it fails a UC QP too; other errors lose one UC message
 */
struct srnic_resp_answer {
	const char *name;
	u8 syndrome;
	u8 ev;
	bool uc_fail;
};

extern const struct srnic_resp_answer srnic_resp_answers[SRNIC_RESP_NR_VERDICTS];

/*
 * The one place the responder's expected PSN, atomic sequence and MSN
 * move on: @npsn PSNs taken (a Read request takes one per response
 * packet), @done if they end a message.
 */
static inline void srnic_resp_advance(struct srnic_resp *resp, u32 npsn, bool done)
{
	resp->epsn = srnic_psn_add(resp->epsn, npsn);
	resp->apsn += npsn;
	if (done)
		resp->msn++;
}

struct ib_pd *srnic_rwqe_pd(const struct srnic_qp *qp);
enum srnic_resp_verdict srnic_resp_rkey(struct srnic_qp *qp, u32 rkey,
					u64 va, u32 len, int access,
					struct srnic_mr **mrp, u64 *addr);

/* srnic_resp_tx.c: responses in PSN order */
bool srnic_resp_small(struct srnic_qp *qp, struct sk_buff_head *out,
		      const struct srnic_pkt *pkt);
void srnic_resp_ack_how(struct srnic_qp *qp, struct sk_buff_head *out,
			u8 syndrome, u32 psn, bool now);
void srnic_resp_ack(struct srnic_qp *qp, struct sk_buff_head *out,
		    u8 syndrome, u32 psn);
void srnic_resp_drop_reads(struct srnic_qp *qp, u32 psn, bool all);
bool srnic_resp_read_now(struct srnic_qp *qp, struct sk_buff_head *out,
			 bool *failed);
void srnic_resp_read_sent(struct srnic_qp *qp);
void srnic_resp_room_for_read(struct srnic_qp *qp);
enum srnic_resp_verdict srnic_resp_send(struct srnic_qp *qp,
					struct srnic_pkt *pkt,
					const u8 *payload);
enum srnic_resp_verdict srnic_resp_write(struct srnic_qp *qp,
					 struct srnic_pkt *pkt,
					 const u8 *payload);

#endif /* SRNIC_RESP_H */
