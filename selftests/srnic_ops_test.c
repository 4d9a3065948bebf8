// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_ops_test: what stock programs do not show, end to end through
 * the stock libibverbs and librxe: UD and UC details, memory windows,
 * rereg. One process drives both ends:
 * a QP on DEV_A sends to a QP on DEV_B (two devices, usually on the two
 * ends of a veth pair, so every packet crosses the wire).
 *
 *   srnic_ops_test ud DEV_A DEV_B
 *	a datagram arrives with its 40-byte GRH area (IPv4 header at byte
 *	20, the sender's address in it), src_qp and IBV_WC_GRH; a Q_Key
 *	mismatch is dropped and counted (rcvd_qkey_err); the Q_Key high bit
 *	means "the sender QP's own"; immediate data; inline data; no receive
 *	WQE: dropped and counted (ud_no_recv_wqe), nothing lingers; a
 *	message over the MTU completes with IBV_WC_LOC_LEN_ERR; an AH of
 *	another PD fails the WQE; a receive buffer too small completes with
 *	IBV_WC_LOC_LEN_ERR
 *
 *   srnic_ops_test mw DEV_A DEV_B
 *	memory windows on B reached by A's requests: bind and use; an MR
 *	with a bound window refuses deregistration (EBUSY); a type 2 window
 *	serves only the QP it was bound through; a Write past the window;
 *	binding a bound type 2 window, beyond the MR, to an MR without
 *	MW_BIND: IBV_WC_MW_BIND_ERR; Local Invalidate; Send with Invalidate
 *	of a type 1 window: invalid request at both ends; Local Invalidate
 *	while a Read through the window is answered: the Read completes
 *	whole or fails, later ones fail
 *
 *   srnic_ops_test rereg DEV_A DEV_B
 *	an MR on B reregistered through the uverbs command ABI (the stock
 *	librxe has no rereg_mr): new translation (old key dead, old memory
 *	untouched), rights, PD (a QP of the old PD refused, of the new one
 *	served); remote write without local write refused
 *
 *   srnic_ops_test events DEV_A DEV_B
 *	asynchronous events at B, read from its async fd: IBV_EVENT_COMM_EST
 *	(once) when a Send reaches a QP in RTR; IBV_EVENT_SQ_DRAINED at A
 *	(SQD with notification, then RTS again); an SRQ's limit event (none
 *	at the limit, one below it, then disarmed); the SRQ resized with
 *	WQEs posted; IBV_EVENT_QP_LAST_WQE_REACHED for a QP on the SRQ moved
 *	to error, whose error flushes none of the SRQ's WQEs; a bad R_Key:
 *	IBV_EVENT_QP_ACCESS_ERR then LAST_WQE_REACHED; a receive WQE with a
 *	bad L_Key: IBV_EVENT_QP_FATAL
 *
 *   srnic_ops_test edge DEV_A DEV_B
 *	RC, UC and UD at the advertised limits: QPs with max_send_sge =
 *	max_recv_sge = 32 and max_inline_data 512 (one more of either
 *	refused); Sends gathered from 32 SGEs and scattered into 32; inline
 *	Sends and Writes of 512 bytes (the source overwritten right after
 *	posting), 513 refused at post; zero-length Send, Send with
 *	Immediate, Write, Write with Immediate, Read; Writes gathered from
 *	and Reads scattered into 32 SGEs
 *
 *   srnic_ops_test flush DEV_A DEV_B
 *	RDMA Flush from A to B (rdma-core 44 has no ibv_wr_flush(): A's QP is
 *	made through the uverbs commands and the Flush WQEs written into its
 *	ring as the rxe ABI of 6.2+ lays them out): Write then Flush of its
 *	range (global visibility), Flush of a whole region, past the region,
 *	through a key without the Flush right, for persistence, to a QP
 *	without the Flush right; on a kernel without Flush: the right is
 *	refused and a Flush WQE fails
 *
 *   srnic_ops_test verbs DEV_A DEV_B
 *	verbs semantics of IBA chapters 10 and 11 (issue 19): a type 2
 *	window's bind takes only the key byte of the request's rkey
 *	(rebinding to another QP, key reuse, the next key byte, dealloc
 *	while bound, an unsignaled bind, a bind's completion through a
 *	completion channel; type 1 rebinds, a zero-based type 1 bind
 *	fails); zero-length MRs, zero-byte Send/Write/Read through them,
 *	with keys of nothing (C9-88) and just past an MR; zero-based MRs
 *	and type 2 windows; a Send into an empty SRQ or RQ ends in
 *	IBV_WC_RNR_RETRY_EXC_ERR after rnr_retry; posts refused in RESET,
 *	INIT and RTR never execute later; an SRQ's receive WQEs are checked
 *	against the SRQ's PD, not the QP's
 *
 *   srnic_ops_test uc DEV_A DEV_B MSGS SIZE EXPECT
 *	MSGS Sends and Writes with Immediate of SIZE bytes (several
 *	packets each), each carrying its sequence number and a pattern
 *	derived from it; the receiver checks every message it completes.
 *	EXPECT "all": every message arrives; "loss" (run over a lossy
 *	link): some are lost, uc_msgs_dropped counts them, none arrives
 *	damaged, each receive WQE a lost Send had started is reused (one
 *	completion per delivered message, in order).
 *
 * Output is TAP; exit status 0 when every case passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "srnic_test.h"

#define QKEY		0x11111111u
#define GRH_LEN		40
#define BUF_SIZE	(1024 * 1024)

/*
 * One end: a device, its RoCEv2 IPv4 GID, a PD, CQs, a buffer; the TAP
 * stream both ends report to.
 */
struct end {
	const char *name;
	struct st_dev d;
	struct st_tap *tap;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	__u8 *buf;
	struct ibv_qp *qp;
};

static void end_open(struct end *e, const char *name, struct st_tap *tap)
{
	int rc;

	e->name = name;
	e->tap = tap;
	rc = st_dev_open(&e->d, name);
	if (rc) {
		if (rc != -EIO)
			errno = -rc;
		st_bail(name);
	}
	if (st_gid_pick(&e->d, -1, ST_GID_V4)) {
		errno = ENOENT;
		st_bail("no IPv4 RoCEv2 GID");
	}
	e->pd = ibv_alloc_pd(e->d.ctx);
	e->scq = ibv_create_cq(e->d.ctx, 1024, NULL, NULL, 0);
	e->rcq = ibv_create_cq(e->d.ctx, 1024, NULL, NULL, 0);
	e->buf = st_buf_alloc(BUF_SIZE, 0);
	if (!e->pd || !e->scq || !e->rcq || !e->buf)
		st_bail("resources");
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!e->mr)
		st_bail("ibv_reg_mr");
}

/* Print @e's non-zero hw counters (after a failure: what was dropped). */
static void dump_counters(const struct end *e)
{
	static const char *const names[] = {
		"rcvd_pkts", "sent_pkts", "rx_dropped", "rcvd_seq_err",
		"out_of_seq_request", "duplicate_request", "send_err",
		"rcvd_qkey_err", "ud_no_recv_wqe", "uc_msgs_dropped",
		"rcvd_no_qp", "rcvd_malformed", "rcvd_icrc_err",
	};
	unsigned int i;
	__u64 v;

	printf("# %s:", e->name);
	for (i = 0; i < ST_ARRAY_SIZE(names); i++) {
		v = st_hw_counter(e->name, 1, names[i]);
		if (v && v != ~0ULL)
			printf(" %s %llu", names[i], (unsigned long long)v);
	}
	printf("\n");
}

static struct ibv_qp *qp_create(struct end *e, enum ibv_qp_type type,
				__u32 depth)
{
	struct ibv_qp_cap cap = { .max_send_wr = depth, .max_recv_wr = depth,
				  .max_send_sge = 1, .max_recv_sge = 1,
				  .max_inline_data = 64 };
	struct ibv_qp *qp = st_qp_create(e->pd, e->scq, e->rcq, type, &cap);

	if (!qp)
		st_bail("ibv_create_qp");
	return qp;
}

static void ud_ready(struct ibv_qp *qp, __u32 qkey)
{
	if (st_qp_ud_ready(qp, 1, qkey, 7))
		st_bail("UD to RTS");
}

static struct ibv_ah *ah_to(struct ibv_pd *pd, const struct end *from,
			    const struct end *to)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = to->d.gid, .sgid_index = from->d.gid_index,
			 .hop_limit = 64 },
	};

	return ibv_create_ah(pd, &aa);
}

static void post_recv(struct end *e, struct ibv_qp *qp, __u64 id,
		      __u32 off, __u32 len)
{
	if (st_post_recv(qp, id, e->buf + off, len, e->mr->lkey))
		st_bail("ibv_post_recv");
}

static int ud_send(struct end *e, struct ibv_qp *qp, struct ibv_ah *ah,
		   __u32 rqpn, __u32 qkey, __u32 off, __u32 len,
		   int flags, __u32 imm)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + off, .length = len,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = off, .sg_list = &sge, .num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | flags,
		.imm_data = htonl(imm),
		.wr.ud = { .ah = ah, .remote_qpn = rqpn,
			   .remote_qkey = qkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* Send one datagram A -> B; the send completion's status, or -1. */
static int ud_one(struct end *a, struct ibv_qp *qa, struct ibv_ah *ah,
		  struct end *b, __u32 qkey, __u32 len, int flags,
		  __u32 imm)
{
	struct ibv_wc wc;

	st_pattern_fill(a->buf, len, len);
	if (ud_send(a, qa, ah, b->qp->qp_num, qkey, 0, len, flags, imm))
		return -1;
	if (!st_poll_one(a->scq, &wc, 2000))
		return -1;
	return wc.status;
}

static void test_ud(struct end *a, struct end *b)
{
	struct st_tap *tap = a->tap;
	__u32 mtu = 128u << a->d.mtu, len = 200;
	struct ibv_qp *qa = qp_create(a, IBV_QPT_UD, 64);
	struct ibv_ah *ah = ah_to(a->pd, a, b);
	struct ibv_pd *pd2 = ibv_alloc_pd(a->d.ctx);
	struct ibv_ah *ah2 = pd2 ? ah_to(pd2, a, b) : NULL;
	__u64 before;
	struct ibv_wc wc;
	struct in_addr sa;
	int st, got, ok;

	if (!ah || !ah2)
		st_bail("ibv_create_ah");
	b->qp = qp_create(b, IBV_QPT_UD, 64);
	ud_ready(qa, 0x22222222);
	ud_ready(b->qp, QKEY);

	/* A datagram, its GRH area and completion. */
	post_recv(b, b->qp, 1, 0, GRH_LEN + 4096);
	st = ud_one(a, qa, ah, b, QKEY, len, 0, 0);
	got = st_poll_one(b->rcq, &wc, 2000);
	memcpy(&sa, b->buf + 20 + 12, 4);
	ok = st == IBV_WC_SUCCESS && got && wc.status == IBV_WC_SUCCESS &&
	     wc.byte_len == GRH_LEN + len && wc.src_qp == qa->qp_num &&
	     (wc.wc_flags & IBV_WC_GRH) && wc.opcode == IBV_WC_RECV &&
	     !(wc.wc_flags & IBV_WC_WITH_IMM) &&
	     (b->buf[20] >> 4) == 4 && b->buf[20 + 9] == 17 &&
	     !memcmp(&sa, &a->d.gid.raw[12], 4) &&
	     st_pattern_check(b->buf + GRH_LEN, len, len);
	st_tap_ok(tap, ok,
		  "UD: %u B after the GRH area (IPv4 hdr of %s), len %u, src_qp %u, WC_GRH",
		  len, inet_ntoa(sa), got ? wc.byte_len : 0, got ? wc.src_qp : 0);

	/* A Q_Key mismatch is dropped and counted; the WQE stays posted. */
	before = st_hw_counter(b->name, 1, "rcvd_qkey_err");
	post_recv(b, b->qp, 2, 0, GRH_LEN + 4096);
	st = ud_one(a, qa, ah, b, QKEY + 1, len, 0, 0);
	got = st_poll_one(b->rcq, &wc, 300);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && !got &&
		  st_hw_counter(b->name, 1, "rcvd_qkey_err") == before + 1,
		  "UD: a Q_Key mismatch is dropped, counted in rcvd_qkey_err (%llu -> %llu), no completion",
		  (unsigned long long)before,
		  (unsigned long long)st_hw_counter(b->name, 1, "rcvd_qkey_err"));

	/* High bit: the sender QP's Q_Key (0x22222222: mismatch). */
	before = st_hw_counter(b->name, 1, "rcvd_qkey_err");
	st = ud_one(a, qa, ah, b, 0x80000000u, len, 0, 0);
	got = st_poll_one(b->rcq, &wc, 300);
	ok = !got && st_hw_counter(b->name, 1, "rcvd_qkey_err") == before + 1;
	{
		struct ibv_qp_attr qa_attr = { .qkey = QKEY };

		ibv_modify_qp(qa, &qa_attr, IBV_QP_QKEY);
	}
	st = ud_one(a, qa, ah, b, 0x80000000u, len, 0, 0);
	got = st_poll_one(b->rcq, &wc, 2000);
	st_tap_ok(tap, ok && st == IBV_WC_SUCCESS && got && wc.wr_id == 2 &&
		  wc.status == IBV_WC_SUCCESS,
		  "UD: a Q_Key with the high bit set uses the sender QP's own (refused, then accepted)");

	/* Immediate data and inline data. */
	post_recv(b, b->qp, 3, 0, GRH_LEN + 4096);
	st = ud_one(a, qa, ah, b, QKEY, 48, IBV_SEND_INLINE, 0xabcd1234);
	got = st_poll_one(b->rcq, &wc, 2000);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && got && wc.status == IBV_WC_SUCCESS &&
		  (wc.wc_flags & IBV_WC_WITH_IMM) &&
		  ntohl(wc.imm_data) == 0xabcd1234 && wc.byte_len == GRH_LEN + 48 &&
		  st_pattern_check(b->buf + GRH_LEN, 48, 48),
		  "UD: Send with Immediate, inline data: imm and bytes arrive");

	/* Zero bytes. */
	post_recv(b, b->qp, 4, 0, GRH_LEN + 4096);
	st = ud_one(a, qa, ah, b, QKEY, 0, 0, 0);
	got = st_poll_one(b->rcq, &wc, 2000);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && got && wc.status == IBV_WC_SUCCESS &&
		  wc.byte_len == GRH_LEN,
		  "UD: a zero-length datagram completes with byte_len 40");

	/* No receive WQE: dropped, counted, nothing lingers. */
	before = st_hw_counter(b->name, 1, "ud_no_recv_wqe");
	st = ud_one(a, qa, ah, b, QKEY, len, 0, 0);
	usleep(300000);
	post_recv(b, b->qp, 5, 0, GRH_LEN + 4096);
	got = st_poll_one(b->rcq, &wc, 300);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && !got &&
		  st_hw_counter(b->name, 1, "ud_no_recv_wqe") == before + 1,
		  "UD: with no receive WQE the datagram is dropped and counted in ud_no_recv_wqe");
	st = ud_one(a, qa, ah, b, QKEY, len, 0, 0);
	got = st_poll_one(b->rcq, &wc, 2000);
	st_tap_ok(tap, got && wc.wr_id == 5 && wc.status == IBV_WC_SUCCESS,
		  "UD: the next datagram takes the receive WQE posted later");

	/* Too long for the receive buffer: IBV_WC_LOC_LEN_ERR there. */
	post_recv(b, b->qp, 6, 0, GRH_LEN + 16);
	st = ud_one(a, qa, ah, b, QKEY, 64, 0, 0);
	got = st_poll_one(b->rcq, &wc, 2000);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && got && wc.wr_id == 6 &&
		  wc.status == IBV_WC_LOC_LEN_ERR,
		  "UD: a datagram longer than the receive buffer completes it with IBV_WC_LOC_LEN_ERR (%s)",
		  got ? ibv_wc_status_str(wc.status) : "no completion");
	/* One datagram's error is that datagram's: the QP lives on. */
	post_recv(b, b->qp, 7, 0, GRH_LEN + 4096);
	st = ud_one(a, qa, ah, b, QKEY, len, 0, 0);
	got = st_poll_one(b->rcq, &wc, 2000);
	st_tap_ok(tap, got && wc.wr_id == 7 && wc.status == IBV_WC_SUCCESS &&
		  st_qp_state(b->qp) == IBV_QPS_RTS,
		  "UD: after that error the QP stays in RTS and receives the next datagram (%s, QP %s)",
		  got ? ibv_wc_status_str(wc.status) : "no completion",
		  st_qp_state_str(st_qp_state(b->qp)));

	/* Over the MTU: IBV_WC_LOC_LEN_ERR at the sender. */
	st = ud_one(a, qa, ah, b, QKEY, mtu + 4, 0, 0);
	st_tap_ok(tap, st == IBV_WC_LOC_LEN_ERR,
		  "UD: a message over the path MTU (%u) completes with IBV_WC_LOC_LEN_ERR (%s)",
		  mtu, st < 0 ? "none" : ibv_wc_status_str(st));
	ibv_destroy_qp(qa);

	/* An AH of another PD. */
	qa = qp_create(a, IBV_QPT_UD, 64);
	ud_ready(qa, QKEY);
	st = ud_one(a, qa, ah2, b, QKEY, len, 0, 0);
	st_tap_ok(tap, st > 0, "UD: an AH of another PD fails the WQE (%s)",
		  st < 0 ? "no completion" : ibv_wc_status_str(st));
	ibv_destroy_qp(qa);
	ibv_destroy_qp(b->qp);
	b->qp = NULL;
	ibv_destroy_ah(ah);
	ibv_destroy_ah(ah2);
	ibv_dealloc_pd(pd2);
}

/* The attributes of every connected QP here; the path is set per QP. */
static const struct st_path ops_path = {
	.port = 1, .rq_psn = 100, .sq_psn = 100,
	.max_dest_rd_atomic = 4, .min_rnr_timer = 1,
	.max_rd_atomic = 4, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
};

static void qp_to_rts(struct ibv_qp *qp)
{
	if (st_qp_rts(qp, &ops_path))
		st_bail("to RTS");
}

/*
 * Move a UC or RC QP to RTR, connected to @dqpn on @peer, with the remote
 * rights REMOTE_WRITE (RC: and REMOTE_READ) and @extra; @rts: and on.
 */
static void qp_connect_to(struct ibv_qp *qp, const struct end *self,
			  const struct end *peer, __u32 dqpn, int extra,
			  int rts)
{
	int rc = qp->qp_type == IBV_QPT_RC;
	struct st_path p = ops_path;

	p.dgid = peer->d.gid;
	p.sgid_index = self->d.gid_index;
	p.mtu = self->d.mtu;
	p.dest_qpn = dqpn;
	if (st_qp_init(qp, 1, IBV_ACCESS_REMOTE_WRITE |
		       (rc ? IBV_ACCESS_REMOTE_READ : 0) | extra))
		st_bail("to INIT");
	if (st_qp_rtr(qp, &p))
		st_bail("to RTR");
	if (rts)
		qp_to_rts(qp);
}

static void qp_connect(struct ibv_qp *qp, const struct end *self,
		       const struct end *peer, __u32 dqpn)
{
	qp_connect_to(qp, self, peer, dqpn, 0, 1);
}

/* An RC QP to RTS whose remote rights are REMOTE_WRITE plus @extra. */
static void qp_connect_acc(struct ibv_qp *qp, const struct end *self,
			   const struct end *peer, __u32 dqpn, int extra)
{
	qp_connect_to(qp, self, peer, dqpn, extra, 1);
}

/* What the UC receiver saw. */
struct uc_stats {
	__u32 delivered, damaged, disorder, errors, last;
	int first;
};

/*
 * A receive completion at B: the message's sequence number is its
 * immediate (Writes) or its first 4 bytes (Sends, in the WQE's buffer).
 */
static void uc_recv(struct end *b, struct ibv_wc *wc, __u32 size,
		    __u32 slots, struct uc_stats *st)
{
	int is_write = wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM;
	__u32 s, boff;

	if (wc->status != IBV_WC_SUCCESS) {
		st->errors++;
		return;
	}
	if (is_write) {
		s = ntohl(wc->imm_data);
		boff = (s % slots) * size;
	} else {
		boff = (slots + wc->wr_id % slots) * size;
		memcpy(&s, b->buf + boff, sizeof(s));
	}
	if (wc->byte_len != size || (int)(s & 1) != is_write ||
	    !st_pattern_check(b->buf + boff + 4, size - 4, s))
		st->damaged++;
	if (!st->first && s <= st->last)
		st->disorder++;
	st->first = 0;
	st->last = s;
	st->delivered++;
}

/*
 * UC: MSGS messages A -> B, even ones Sends, odd ones Writes with
 * Immediate into slot (seq % 64) of B's buffer, the immediate their seq.
 * Every message delivered consumes one receive WQE: B posts MSGS.
 */
static void test_uc(struct end *a, struct end *b, __u32 msgs,
		    __u32 size, int expect_all)
{
	struct st_tap *tap = a->tap;
	__u64 before = st_hw_counter(b->name, 1, "uc_msgs_dropped");
	struct uc_stats st = { .first = 1 };
	__u32 slots = 64, seq, done = 0, i;
	long long quiet, deadline;
	struct ibv_qp *qa;
	struct ibv_wc wc;

	if ((__u64)size * slots * 2 > BUF_SIZE || size < 8 || msgs > 1000) {
		errno = EINVAL;
		st_bail("MSGS over 1000 or SIZE out of range");
	}
	qa = qp_create(a, IBV_QPT_UC, 128);
	b->qp = qp_create(b, IBV_QPT_UC, 1024);
	qp_connect(qa, a, b, b->qp->qp_num);
	qp_connect(b->qp, b, a, qa->qp_num);
	/* Sends land in the upper half of B's buffer, Writes the lower. */
	for (i = 0; i < msgs; i++)
		post_recv(b, b->qp, i, (slots + i % slots) * size, size);

	for (seq = 0; seq < msgs; seq++) {
		__u32 off = (seq % slots) * size;
		struct ibv_sge sge = { .addr = (uintptr_t)a->buf + off,
				       .length = size, .lkey = a->mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = seq, .sg_list = &sge, .num_sge = 1,
			.send_flags = IBV_SEND_SIGNALED,
			.imm_data = htonl(seq),
		}, *bad;

		if (seq & 1) {
			wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			wr.wr.rdma.remote_addr = (uintptr_t)b->buf + off;
			wr.wr.rdma.rkey = b->mr->rkey;
		} else {
			wr.opcode = IBV_WR_SEND;
		}
		/* Pace: at most 8 posted and not completed. */
		while (seq - done >= 8) {
			if (!st_poll_one(a->scq, &wc, 2000))
				st_bail("UC send completion");
			if (wc.status != IBV_WC_SUCCESS)
				st.errors++;
			done++;
		}
		st_pattern_fill(a->buf + off + 4, size - 4, seq);
		memcpy(a->buf + off, &seq, sizeof(seq));
		if (ibv_post_send(qa, &wr, &bad))
			st_bail("ibv_post_send");
		/*
		 * UC has no flow control: a sender faster than the receiver
		 * overruns the queues on the way (a veth backlog, a sanitizer
		 * kernel). Pace on delivery: at most 8 messages past the last
		 * one B completed, or 100 ms (a lost one never completes).
		 */
		deadline = st_now_ms() + 100;
		do {
			while (ibv_poll_cq(b->rcq, 1, &wc) == 1)
				uc_recv(b, &wc, size, slots, &st);
			if ((st.first ? seq + 1 : seq - st.last) <= 8)
				break;
			usleep(200);
		} while (st_now_ms() < deadline);
	}
	while (done < msgs) {
		if (!st_poll_one(a->scq, &wc, 2000))
			st_bail("UC send completion");
		if (wc.status != IBV_WC_SUCCESS)
			st.errors++;
		done++;
	}
	/* Whatever is still on its way. */
	quiet = st_now_ms() + 500;
	while (st_now_ms() < quiet) {
		if (ibv_poll_cq(b->rcq, 1, &wc) != 1) {
			usleep(1000);
			continue;
		}
		quiet = st_now_ms() + 500;
		uc_recv(b, &wc, size, slots, &st);
	}
	printf("# UC: %u x %u B sent, %u delivered, %u damaged, %u late, %u errors, lost +%llu\n",
	       msgs, size, st.delivered, st.damaged, st.disorder, st.errors,
	       (unsigned long long)(st_hw_counter(b->name, 1, "uc_msgs_dropped") - before));
	st_tap_ok(tap, !st.damaged && !st.disorder && !st.errors && st.delivered,
		  "UC: every delivered message intact and in order, no error completion");
	if (expect_all)
		st_tap_ok(tap, st.delivered == msgs,
			  "UC: on a clean link every message arrives (%u of %u)",
			  st.delivered, msgs);
	else
		st_tap_ok(tap, st.delivered < msgs &&
			  st_hw_counter(b->name, 1, "uc_msgs_dropped") > before,
			  "UC: on a lossy link messages with a PSN gap are dropped (%u of %u delivered) and counted",
			  st.delivered, msgs);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(b->qp);
	b->qp = NULL;
}

/* An RC pair: qa on A connected to qb on B (both recreated). */
struct rc_pair {
	struct ibv_qp *qa, *qb;
};

static void rc_pair_new(struct rc_pair *p, struct end *a, struct end *b)
{
	if (p->qa)
		ibv_destroy_qp(p->qa);
	if (p->qb)
		ibv_destroy_qp(p->qb);
	p->qa = qp_create(a, IBV_QPT_RC, 64);
	p->qb = qp_create(b, IBV_QPT_RC, 64);
	qp_connect(p->qa, a, b, p->qb->qp_num);
	qp_connect(p->qb, b, a, p->qa->qp_num);
}

/* A's RDMA Write (or Read) of @len bytes at @raddr with @rkey. */
static int rdma_op(struct end *a, struct ibv_qp *qa, enum ibv_wr_opcode op,
		   __u64 raddr, __u32 rkey, __u32 len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)a->buf, .length = len,
			       .lkey = a->mr->lkey };
	struct ibv_send_wr wr = {
		.opcode = op, .sg_list = &sge, .num_sge = 1,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	return st_post_wait(qa, a->scq, &wr, 5000);
}

/* Bind a type 2 window through @qp's send queue; its new key in *@rkey. */
static int bind2(struct end *b, struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mr *mr, __u64 addr, __u64 len, __u32 *rkey)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW };
	int st;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ;
	st = st_post_wait(qp, b->scq, &wr, 5000);
	/* librxe names the window by mw->rkey: the caller tracks it. */
	if (st == IBV_WC_SUCCESS)
		mw->rkey = wr.bind_mw.rkey;
	if (rkey)
		*rkey = wr.bind_mw.rkey;
	return st;
}

/*
 * Memory windows: A is the requester, B's MR (bm, with MW_BIND) is
 * reached through a window bound on B.
 */
static void test_mw(struct end *a, struct end *b)
{
	struct st_tap *tap = a->tap;
	__u32 wlen = 256 * 1024, rkey = 0, off = 512 * 1024;
	struct ibv_mr *bm = ibv_reg_mr(b->pd, b->buf + off, wlen,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(b->pd, IBV_MW_TYPE_2);
	struct ibv_mw *mw1 = ibv_alloc_mw(b->pd, IBV_MW_TYPE_1);
	__u64 base = (uintptr_t)b->buf + off;
	struct rc_pair p = {}, p2 = {};
	struct ibv_send_wr wr;
	__u64 retx;
	struct ibv_wc wc;
	int st, st2, got;

	if (!bm || !mw || !mw1)
		st_bail("MR with MW_BIND / ibv_alloc_mw");
	rc_pair_new(&p, a, b);

	st = bind2(b, p.qb, mw, bm, base, 64 * 1024, &rkey);
	st_pattern_fill(a->buf, 4096, 9);
	st2 = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, base + 1000, rkey, 4096);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS &&
		  st_pattern_check(b->buf + off + 1000, 4096, 9),
		  "MW type 2: bound through B's QP, A's RDMA Write through it lands (%s, %s)",
		  st_wc_str(st), st_wc_str(st2));

	errno = 0;
	st = ibv_dereg_mr(bm);
	st_tap_ok(tap, st == EBUSY || errno == EBUSY,
		  "MW: deregistering an MR with a bound window is refused with EBUSY (%d)",
		  st);

	/* Another QP of B's PD: a type 2 window serves only its own. */
	rc_pair_new(&p2, a, b);
	st = rdma_op(a, p2.qa, IBV_WR_RDMA_WRITE, base, rkey, 64);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "MW type 2: a Write arriving on another QP of the PD gets a remote access error (%s)",
		  st_wc_str(st));

	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, base + 64 * 1024 - 8, rkey, 16);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "MW: a Write past the window's end (inside the MR) gets a remote access error (%s)",
		  st_wc_str(st));

	rc_pair_new(&p, a, b);
	st = bind2(b, p.qb, mw, bm, base, 4096, NULL);
	st_tap_ok(tap, st == IBV_WC_MW_BIND_ERR,
		  "MW type 2: binding a window that is bound fails with IBV_WC_MW_BIND_ERR (%s)",
		  st_wc_str(st));

	rc_pair_new(&p, a, b);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = rkey;
	st = st_post_wait(p.qb, b->scq, &wr, 5000);
	st2 = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, base, rkey, 64);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_REM_ACCESS_ERR,
		  "MW type 2: Local Invalidate succeeds, then its key gets a remote access error (%s, %s)",
		  st_wc_str(st), st_wc_str(st2));

	rc_pair_new(&p, a, b);
	st = bind2(b, p.qb, mw, bm, base, wlen + 4096, NULL);
	st_tap_ok(tap, st == IBV_WC_MW_BIND_ERR,
		  "MW: a bind beyond its MR fails with IBV_WC_MW_BIND_ERR (%s)",
		  st_wc_str(st));

	rc_pair_new(&p, a, b);
	st = bind2(b, p.qb, mw, b->mr, (uintptr_t)b->buf, 4096, NULL);
	st_tap_ok(tap, st == IBV_WC_MW_BIND_ERR,
		  "MW: a bind to an MR without MW_BIND access fails with IBV_WC_MW_BIND_ERR (%s)",
		  st_wc_str(st));

	/* Send with Invalidate of a type 1 window: an invalid request. */
	rc_pair_new(&p, a, b);
	{
		struct ibv_mw_bind bind = {
			.send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .mr = bm, .addr = base, .length = 4096,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
		};

		st = ibv_bind_mw(p.qb, mw1, &bind) ? -1 :
		     (st_poll_one(b->scq, &wc, 5000) ? (int)wc.status : -1);
	}
	post_recv(b, p.qb, 77, 0, 4096);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.invalidate_rkey = mw1->rkey;
	st2 = st_post_wait(p.qa, a->scq, &wr, 5000);
	got = st_poll_one(b->rcq, &wc, 2000);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_REM_INV_REQ_ERR && got &&
		  wc.wr_id == 77 && wc.status == IBV_WC_REM_INV_REQ_ERR,
		  "MW type 1: Send with Invalidate of its key is an invalid request at both ends (%s, %s)",
		  st_wc_str(st2), got ? ibv_wc_status_str(wc.status) : "no completion");

	/* Invalidate while a Read through the window is being answered. */
	rc_pair_new(&p, a, b);
	st = bind2(b, p.qb, mw, bm, base, wlen, &rkey);
	st_pattern_fill(b->buf + off, wlen, 5);
	memset(a->buf, 0, wlen);
	st2 = rdma_op(a, p.qa, IBV_WR_RDMA_READ, base, rkey, wlen);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS &&
		  st_pattern_check(a->buf, wlen, 5),
		  "MW: a %u KiB Read through the window returns its bytes (%s, %s)",
		  wlen / 1024, st_wc_str(st), st_wc_str(st2));
	{
		struct ibv_sge sge = { .addr = (uintptr_t)a->buf,
				       .length = wlen, .lkey = a->mr->lkey };
		struct ibv_send_wr rd = {
			.opcode = IBV_WR_RDMA_READ, .sg_list = &sge,
			.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = base, .rkey = rkey },
		}, *bad;
		struct ibv_send_wr inv = {
			.opcode = IBV_WR_LOCAL_INV,
			.send_flags = IBV_SEND_SIGNALED,
			.invalidate_rkey = rkey,
		};

		memset(a->buf, 0, wlen);
		retx = st_hw_counter(a->name, 1, "retransmits");
		if (ibv_post_send(p.qa, &rd, &bad))
			st_bail("post Read");
		usleep(2000);
		st2 = st_post_wait(p.qb, b->scq, &inv, 5000);
		got = st_poll_one(a->scq, &wc, 5000);
	}
	printf("# Read of %u KiB, window invalidated 2 ms after posting: %s (go-back-N: %llu)\n",
	       wlen / 1024, got ? ibv_wc_status_str(wc.status) : "no completion",
	       (unsigned long long)(st_hw_counter(a->name, 1, "retransmits") - retx));
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS && got &&
		  ((wc.status == IBV_WC_SUCCESS && st_pattern_check(a->buf, wlen, 5)) ||
			wc.status == IBV_WC_REM_ACCESS_ERR),
		  "MW: Local Invalidate during a Read through the window: the Read completes whole or fails with a remote access error");
	rc_pair_new(&p, a, b);
	st = rdma_op(a, p.qa, IBV_WR_RDMA_READ, base, rkey, 64);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "MW: after that, a Read with the key gets a remote access error (%s)",
		  st_wc_str(st));

	st = ibv_dealloc_mw(mw1);
	st2 = ibv_dealloc_mw(mw);
	st_tap_ok(tap, !st && !st2 && !ibv_dereg_mr(bm),
		  "MW: windows deallocated, then the MR deregisters");
	ibv_destroy_qp(p.qa);
	ibv_destroy_qp(p.qb);
	ibv_destroy_qp(p2.qa);
	ibv_destroy_qp(p2.qb);
}

/*
 * Reregister an MR through the kernel's uverbs write ABI: the stock
 * librxe has no rereg_mr, so libibverbs cannot reach the kernel's. The
 * handle stays; the new keys come back. Returns 0 or an errno.
 */
static int raw_rereg(struct ibv_context *ctx, struct ibv_mr *mr, __u32 flags,
		     void *addr, __u64 len, int access, struct ibv_pd *pd,
		     __u32 *lkey, __u32 *rkey)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_rereg_mr cmd;
	} req = {};
	struct ib_uverbs_rereg_mr_resp resp = {};

	req.hdr.command = IB_USER_VERBS_CMD_REREG_MR;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.mr_handle = mr->handle;
	req.cmd.flags = flags;
	req.cmd.start = (uintptr_t)addr;
	req.cmd.length = len;
	req.cmd.hca_va = (uintptr_t)addr;
	req.cmd.pd_handle = pd ? pd->handle : 0;
	req.cmd.access_flags = access;
	if (write(ctx->cmd_fd, &req, sizeof(req)) != sizeof(req))
		return errno;
	*lkey = resp.lkey;
	*rkey = resp.rkey;
	return 0;
}

/* rereg: an MR on B reached by A's RDMA Writes, reregistered in turn. */
static void test_rereg(struct end *a, struct end *b)
{
	struct st_tap *tap = a->tap;
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	__u8 *x = b->buf + 256 * 1024, *y = b->buf + 512 * 1024;
	struct ibv_mr *m = ibv_reg_mr(b->pd, x, 8192, rw);
	struct ibv_pd *pd2 = ibv_alloc_pd(b->d.ctx);
	__u32 lkey = 0, rkey = 0;
	struct rc_pair p = {};
	int err, st;

	if (!m || !pd2)
		st_bail("reg_mr / alloc_pd");
	rc_pair_new(&p, a, b);
	st_pattern_fill(a->buf, 4096, 1);
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, (uintptr_t)x, m->rkey, 4096);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st_pattern_check(x, 4096, 1),
		  "rereg: before, a Write lands in the MR (%s)", st_wc_str(st));

	memset(y, 0, 8192);
	err = raw_rereg(b->d.ctx, m, IBV_REREG_MR_CHANGE_TRANSLATION, y, 8192, 0, NULL,
			&lkey, &rkey);
	st_pattern_fill(a->buf, 4096, 2);
	st = err ? -1 :
	     rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, (uintptr_t)y, rkey, 4096);
	st_tap_ok(tap, !err && st == IBV_WC_SUCCESS && st_pattern_check(y, 4096, 2) &&
		  st_pattern_check(x, 4096, 1),
		  "rereg translation: the new keys reach the new memory, the old stays untouched (%s, %s)",
		  strerror(err), st_wc_str(st));
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, (uintptr_t)x, m->rkey, 64);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "rereg translation: the old key gets a remote access error (%s)",
		  st_wc_str(st));

	rc_pair_new(&p, a, b);
	m->rkey = rkey;
	err = raw_rereg(b->d.ctx, m, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0,
			IBV_ACCESS_LOCAL_WRITE, NULL, &lkey, &rkey);
	st = err ? -1 :
	     rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, (uintptr_t)y, rkey, 64);
	st_tap_ok(tap, !err && st == IBV_WC_REM_ACCESS_ERR,
		  "rereg access: without remote write, a Write gets a remote access error (%s, %s)",
		  strerror(err), st_wc_str(st));

	err = raw_rereg(b->d.ctx, m, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0,
			IBV_ACCESS_REMOTE_WRITE, NULL, &lkey, &rkey);
	st_tap_ok(tap, err == EINVAL,
		  "rereg access: remote write without local write is refused with EINVAL (%s)",
		  strerror(err));

	rc_pair_new(&p, a, b);
	err = raw_rereg(b->d.ctx, m, IBV_REREG_MR_CHANGE_ACCESS | IBV_REREG_MR_CHANGE_PD, NULL,
			0, rw, pd2, &lkey, &rkey);
	st = err ? -1 :
	     rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, (uintptr_t)y, rkey, 64);
	st_tap_ok(tap, !err && st == IBV_WC_REM_ACCESS_ERR,
		  "rereg PD: a QP of the old PD gets a remote access error (%s, %s)",
		  strerror(err), st_wc_str(st));
	{
		struct ibv_pd *keep = b->pd;

		b->pd = pd2;
		rc_pair_new(&p, a, b);
		b->pd = keep;
	}
	st_pattern_fill(a->buf, 64, 3);
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, (uintptr_t)y, rkey, 64);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st_pattern_check(y, 64, 3),
		  "rereg PD: a QP of the new PD writes through it (%s)", st_wc_str(st));

	ibv_destroy_qp(p.qa);
	ibv_destroy_qp(p.qb);
	st_tap_ok(tap, !ibv_dereg_mr(m) && !ibv_dealloc_pd(pd2),
		  "rereg: the MR deregisters by its handle, the new PD deallocates");
}

/* --- events: asynchronous events reach user space ------------------------ */

/*
 * Count the asynchronous events of @type on @elem (a QP, CQ or SRQ)
 * arriving on @ctx within @ms; others are printed. @first: return at the
 * first match instead of waiting out @ms. @order, when given, collects
 * the matching-element event types in arrival order (up to 8).
 */
static int async_events(struct ibv_context *ctx, enum ibv_event_type type,
			void *elem, int ms, int first, int *order)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	long long end = st_now_ms() + ms, left;
	struct ibv_async_event ev;
	int seen = 0, n = 0;

	fcntl(ctx->async_fd, F_SETFL,
	      fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	while (!(first && seen) && (left = end - st_now_ms()) > 0) {
		if (poll(&pfd, 1, left) <= 0 || ibv_get_async_event(ctx, &ev))
			continue;
		if ((void *)ev.element.qp == elem && order && n < 8)
			order[n++] = ev.event_type;
		if (ev.event_type == type && (void *)ev.element.qp == elem)
			seen++;
		else
			printf("# async event on %s: %s\n",
			       ibv_get_device_name(ctx->device),
			       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	return seen;
}

/* A Send of @len bytes from A's buffer; its completion status. */
static int send_one(struct end *a, struct ibv_qp *qa, __u32 len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)a->buf, .length = len,
			       .lkey = a->mr->lkey };
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &sge,
				  .num_sge = 1 };

	return st_post_wait(qa, a->scq, &wr, 5000);
}

static void post_srq_recv(struct end *b, struct ibv_srq *srq, __u64 id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)b->buf + id % 64 * 64,
			       .length = 64, .lkey = b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_srq_recv(srq, &wr, &bad))
		st_bail("ibv_post_srq_recv");
}

static struct ibv_qp *qp_on_srq(struct end *e, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->scq, .recv_cq = e->rcq, .srq = srq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &ia);

	if (!qp)
		st_bail("ibv_create_qp on an SRQ");
	return qp;
}

/* Receive completions at B within @ms: how many succeeded; ids marked. */
static int recv_many(struct end *b, int want, __u8 *seen, int nseen, int ms)
{
	long long end = st_now_ms() + ms;
	struct ibv_wc wc;
	int ok = 0, got = 0;

	while (got < want && st_now_ms() < end) {
		if (!st_poll_one(b->rcq, &wc, 50))
			continue;
		got++;
		if (wc.status == IBV_WC_SUCCESS && wc.wr_id < (__u64)nseen &&
		    !seen[wc.wr_id]++)
			ok++;
		else if (wc.status != IBV_WC_SUCCESS)
			printf("# receive %llu: %s\n",
			       (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status));
	}
	return ok;
}

/*
 * COMM_EST, the SRQ limit and resize, LAST_WQE_REACHED, affiliated
 * errors (ACCESS_ERR, QP_FATAL): each seen through B's async fd.
 */
static void test_events(struct end *a, struct end *b)
{
	struct st_tap *tap = a->tap;
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16,
						  .max_sge = 1 } };
	struct ibv_qp *qa, *qb, *qa2, *qb2;
	struct ibv_srq_attr sa = {};
	struct ibv_srq *srq;
	__u8 seen[128] = {};
	int st, i, n, ev[8] = {}, ok, est;
	struct ibv_wc wc;

	/* COMM_EST: B's QP is only in RTR when A's first Send arrives. */
	qa = qp_create(a, IBV_QPT_RC, 16);
	qb = qp_create(b, IBV_QPT_RC, 16);
	qp_connect(qa, a, b, qb->qp_num);
	qp_connect_to(qb, b, a, qa->qp_num, 0, 0);
	post_recv(b, qb, 1, 0, 64);
	post_recv(b, qb, 2, 64, 64);
	st = send_one(a, qa, 64);
	ok = st_poll_one(b->rcq, &wc, 2000) && wc.status == IBV_WC_SUCCESS;
	est = async_events(b->d.ctx, IBV_EVENT_COMM_EST, qb, 2000, 1, NULL);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && ok && est == 1,
		  "RC: a Send reaching a QP in RTR completes at both ends (%s, %s) and reports IBV_EVENT_COMM_EST",
		  st_wc_str(st), ok ? "received" : "not received");
	qp_to_rts(qb);
	st = send_one(a, qa, 64);
	ok = st_poll_one(b->rcq, &wc, 2000) && wc.status == IBV_WC_SUCCESS;
	est = async_events(b->d.ctx, IBV_EVENT_COMM_EST, qb, 300, 0, NULL);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && ok && est == 0,
		  "RC: COMM_EST is reported once (%d more after RTS)", est);
	{
		struct ibv_qp_attr qs = { .qp_state = IBV_QPS_SQD,
					  .en_sqd_async_notify = 1 };

		st = ibv_modify_qp(qa, &qs, IBV_QP_STATE |
				   IBV_QP_EN_SQD_ASYNC_NOTIFY);
		est = async_events(a->d.ctx, IBV_EVENT_SQ_DRAINED, qa, 2000, 1,
				   NULL);
		qs.qp_state = IBV_QPS_RTS;
		ok = !st && !ibv_modify_qp(qa, &qs, IBV_QP_STATE);
		post_recv(b, qb, 3, 0, 64);
		st = send_one(a, qa, 64);
		ok = ok && st == IBV_WC_SUCCESS &&
		     st_poll_one(b->rcq, &wc, 2000) && wc.status == IBV_WC_SUCCESS;
		st_tap_ok(tap, est == 1 && ok,
			  "RC: to SQD with notification: IBV_EVENT_SQ_DRAINED; back to RTS, a Send completes (%s)",
			  st_wc_str(st));
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);

	/* The SRQ limit: armed at 8 of 16, reported when fewer remain. */
	srq = ibv_create_srq(b->pd, &si);
	if (!srq)
		st_bail("ibv_create_srq");
	for (i = 0; i < 16; i++)
		post_srq_recv(b, srq, i);
	sa.srq_limit = 8;
	if (ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT))
		st_bail("ibv_modify_srq limit");
	qa = qp_create(a, IBV_QPT_RC, 16);
	qb = qp_on_srq(b, srq);
	qp_connect(qa, a, b, qb->qp_num);
	qp_connect(qb, b, a, qa->qp_num);
	for (i = 0, st = 0; i < 8 && !st; i++)
		st = send_one(a, qa, 64);
	n = recv_many(b, 8, seen, 128, 3000);
	est = async_events(b->d.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, srq, 300, 0,
			   NULL);
	st_tap_ok(tap, !st && n == 8 && est == 0,
		  "SRQ: 8 Sends received, no limit event while 8 of 16 remain (limit 8): %d received, %d events",
		  n, est);
	st = send_one(a, qa, 64);
	n = recv_many(b, 1, seen, 128, 3000);
	est = async_events(b->d.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, srq, 2000, 1,
			   NULL);
	memset(&sa, 0, sizeof(sa));
	if (ibv_query_srq(srq, &sa))
		st_bail("ibv_query_srq");
	st_tap_ok(tap, !st && n == 1 && est == 1 && sa.srq_limit == 0,
		  "SRQ: IBV_EVENT_SRQ_LIMIT_REACHED when 7 remain; the limit disarms (srq_limit %u)",
		  sa.srq_limit);

	/* Resize with 7 WQEs posted: they survive, 57 more fit. */
	memset(&sa, 0, sizeof(sa));
	sa.max_wr = 64;
	st = ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
	memset(&sa, 0, sizeof(sa));
	ibv_query_srq(srq, &sa);
	st_tap_ok(tap, !st && sa.max_wr >= 64, "SRQ: resized 16 -> %u (ibv_modify_srq: %s)",
		  sa.max_wr, strerror(st));
	for (i = 16; i < 16 + 57; i++)
		post_srq_recv(b, srq, i);
	for (i = 0, st = 0; i < 64 && !st; i++)
		st = send_one(a, qa, 64);
	n = recv_many(b, 64, seen, 128, 5000);
	for (i = 0, ok = 0; i < 16 + 57; i++)
		ok += seen[i] == 1;
	st_tap_ok(tap, !st && n == 64 && ok == 73,
		  "SRQ: the 7 WQEs posted before the resize and 57 after serve 64 Sends (%d received, %d of 73 WQEs used once)",
		  n, ok);

	/* LAST_WQE_REACHED: a QP on the SRQ moved to error. */
	for (i = 73; i < 73 + 8; i++)
		post_srq_recv(b, srq, i);
	memset(&sa, 0, sizeof(sa));
	{
		struct ibv_qp_attr qa_err = { .qp_state = IBV_QPS_ERR };

		st = ibv_modify_qp(qb, &qa_err, IBV_QP_STATE);
	}
	est = async_events(b->d.ctx, IBV_EVENT_QP_LAST_WQE_REACHED, qb, 2000, 1,
			   NULL);
	st_tap_ok(tap, !st && est == 1,
		  "SRQ: a QP moved to error reports IBV_EVENT_QP_LAST_WQE_REACHED");
	/* Its error flushed none of the SRQ's WQEs: another QP uses them. */
	qa2 = qp_create(a, IBV_QPT_RC, 16);
	qb2 = qp_on_srq(b, srq);
	qp_connect(qa2, a, b, qb2->qp_num);
	qp_connect(qb2, b, a, qa2->qp_num);
	for (i = 0, st = 0; i < 8 && !st; i++)
		st = send_one(a, qa2, 64);
	n = recv_many(b, 8, seen, 128, 3000);
	st_tap_ok(tap, !st && n == 8,
		  "SRQ: the error flushed none of the SRQ's WQEs: 8 Sends to another QP on it received (%d)",
		  n);

	/* An affiliated error on a QP on the SRQ: the error, then last WQE. */
	memset(ev, 0, sizeof(ev));
	st = rdma_op(a, qa2, IBV_WR_RDMA_WRITE, (uintptr_t)b->buf,
		     b->mr->rkey ^ 0x5a5a00, 64);
	est = async_events(b->d.ctx, IBV_EVENT_QP_LAST_WQE_REACHED, qb2, 2000,
			   1, ev);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR && est == 1 &&
		  ev[0] == IBV_EVENT_QP_ACCESS_ERR &&
		  ev[1] == IBV_EVENT_QP_LAST_WQE_REACHED,
		  "RC: a Write with a bad R_Key: %s at the requester; IBV_EVENT_QP_ACCESS_ERR then IBV_EVENT_QP_LAST_WQE_REACHED at the responder (%s, %s)",
		  st_wc_str(st), ibv_event_type_str(ev[0]),
		  ibv_event_type_str(ev[1]));
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_qp(qa2);
	ibv_destroy_qp(qb2);
	while (st_poll_one(b->rcq, &wc, 100))
		;
	st_tap_ok(tap, !ibv_destroy_srq(srq), "SRQ: destroyed after its QPs");

	/* QP_FATAL: a receive WQE B cannot write through (bad L_Key). */
	qa = qp_create(a, IBV_QPT_RC, 16);
	qb = qp_create(b, IBV_QPT_RC, 16);
	qp_connect(qa, a, b, qb->qp_num);
	qp_connect(qb, b, a, qa->qp_num);
	{
		struct ibv_sge sge = { .addr = (uintptr_t)b->buf,
				       .length = 64,
				       .lkey = b->mr->lkey ^ 0x5a5a00 };
		struct ibv_recv_wr wr = { .wr_id = 9, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (ibv_post_recv(qb, &wr, &bad))
			st_bail("ibv_post_recv");
	}
	st = send_one(a, qa, 64);
	ok = st_poll_one(b->rcq, &wc, 2000) ? (int)wc.status : -1;
	est = async_events(b->d.ctx, IBV_EVENT_QP_FATAL, qb, 2000, 1, NULL);
	st_tap_ok(tap, st == IBV_WC_REM_OP_ERR && ok == IBV_WC_LOC_PROT_ERR && est == 1,
		  "RC: a receive WQE with a bad L_Key: %s at the requester, %s at the responder, IBV_EVENT_QP_FATAL",
		  st_wc_str(st), st_wc_str(ok));
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
}

/* --- edge: the advertised limits, inline and zero-length, every QP type --- */

#define EDGE_SGE	32
#define EDGE_INLINE	512
#define EDGE_SRC	0		/* A: gather sources, 64 KiB apart */
#define EDGE_DST	(512 * 1024)	/* B: scatter targets / Write target */

struct edge {
	struct end *a, *b;
	enum ibv_qp_type type;
	struct ibv_qp *qa, *qb;
	struct ibv_ah *ah;
	struct ibv_mr *rmr;	/* B's target, remote read and write */
	const char *tname;
};

static struct ibv_qp *edge_qp(struct end *e, enum ibv_qp_type type,
			      __u32 sge, __u32 inl)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->scq, .recv_cq = e->rcq, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = sge, .max_recv_sge = sge,
			 .max_inline_data = inl },
	};

	return ibv_create_qp(e->pd, &ia);
}

/* SGE i of a gather or scatter list: @n entries over @total bytes. */
static __u32 edge_len(__u32 i, __u32 n, __u32 total, __u32 salt)
{
	__u32 base = total / n, j, sum = 0;

	if (i + 1 < n)
		return base - base / 4 + (i * salt) % (base / 2 + 1);
	for (j = 0; j + 1 < n; j++)
		sum += base - base / 4 + (j * salt) % (base / 2 + 1);
	return total - sum;
}

static void edge_sges(struct ibv_sge *sg, __u32 n, __u8 *base, __u32 lkey,
		      __u32 total, __u32 salt)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		sg[i].addr = (uintptr_t)base + i * 4096 + i;
		sg[i].length = edge_len(i, n, total, salt);
		sg[i].lkey = lkey;
	}
}

/* Gather @sg into @out; the bytes' count. */
static __u32 edge_gather(const struct ibv_sge *sg, __u32 n, __u8 *out,
			 __u32 max)
{
	__u32 i, off = 0, l;

	for (i = 0; i < n && off < max; i++) {
		l = sg[i].length < max - off ? sg[i].length : max - off;
		memcpy(out + off, (void *)(uintptr_t)sg[i].addr, l);
		off += l;
	}
	return off;
}

/* Wait for B's receive; its status (-1: none), byte_len, opcode, imm. */
static int edge_recv(struct edge *x, struct ibv_wc *wc)
{
	if (!st_poll_one(x->b->rcq, wc, 3000))
		return -1;
	return wc->status;
}

/* A zero-length Send from A to B, received: what A sent before is placed. */
static int edge_fence(struct edge *x, char *why, size_t wl)
{
	struct ibv_recv_wr rwr = { .wr_id = 78 }, *rbad;
	struct ibv_send_wr wr = { .wr_id = 6, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int st, rst;

	if (ibv_post_recv(x->qb, &rwr, &rbad) ||
	    ibv_post_send(x->qa, &wr, &bad)) {
		snprintf(why, wl, "fence Send: %s", strerror(errno));
		return 0;
	}
	st = st_poll_one(x->a->scq, &wc, 3000) ? (int)wc.status : -1;
	rst = edge_recv(x, &wc);
	if (st != IBV_WC_SUCCESS || rst != IBV_WC_SUCCESS || wc.wr_id != 78) {
		snprintf(why, wl, "fence Send: requester %s, responder %s",
			 st_wc_str(st), st_wc_str(rst));
		return 0;
	}
	return 1;
}

/*
 * Post one request of @op from A: @n gather entries of @total bytes
 * (n == 0: zero length), inline if @inl; B posted @rn scatter entries.
 * Checks the completions and the bytes; returns 1 when all is well.
 */
static int edge_xfer(struct edge *x, enum ibv_wr_opcode op, __u32 n,
		     __u32 total, int inl, __u32 rn, char *why, size_t wl)
{
	static __u8 want[64 * 1024], got[64 * 1024];
	struct end *a = x->a, *b = x->b;
	struct ibv_sge sg[EDGE_SGE], rsg[EDGE_SGE + 1];
	int ud = x->type == IBV_QPT_UD, recv = op != IBV_WR_RDMA_WRITE &&
		 op != IBV_WR_RDMA_READ, imm = op == IBV_WR_SEND_WITH_IMM ||
		 op == IBV_WR_RDMA_WRITE_WITH_IMM;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_wc wc, rwc;
	__u32 i, rtotal = total + (ud ? GRH_LEN : 0), skip;
	__u8 *src = a->buf + EDGE_SRC, *dst = b->buf + EDGE_DST;
	int st, rst = IBV_WC_SUCCESS;

	memset(b->buf + EDGE_DST, 0, 256 * 1024);
	for (i = 0; i < 256 * 1024; i++)
		src[i] = (__u8)(i * 7 + total + op);
	edge_sges(sg, n, src, a->mr->lkey, total, 37);
	if (op == IBV_WR_RDMA_READ) {	/* A reads B's bytes into @sg */
		memcpy(dst, src, total);
		memcpy(want, dst, total);
		memset(src, 0, 256 * 1024);
	} else {
		edge_gather(sg, n, want, sizeof(want));
	}
	if (recv && (op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
		     imm)) {
		/* rn scatter entries over rtotal bytes (GRH area first) */
		edge_sges(rsg, rn, dst, b->mr->lkey, rtotal, 53);
		rwr.wr_id = 77;
		rwr.sg_list = rn ? rsg : NULL;
		rwr.num_sge = rn;
		if (ibv_post_recv(x->qb, &rwr, &rbad)) {
			snprintf(why, wl, "post_recv: %s", strerror(errno));
			return 0;
		}
	}
	wr.wr_id = 5;
	wr.opcode = op;
	wr.sg_list = n ? sg : NULL;
	wr.num_sge = n;
	wr.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0);
	wr.imm_data = htonl(0x1234abcd);
	if (ud) {
		wr.wr.ud.ah = x->ah;
		wr.wr.ud.remote_qpn = x->qb->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	} else if (op != IBV_WR_SEND && op != IBV_WR_SEND_WITH_IMM) {
		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = x->rmr->rkey;
	}
	if (ibv_post_send(x->qa, &wr, &bad)) {
		snprintf(why, wl, "post_send: %s", strerror(errno));
		return 0;
	}
	/* Inline data was copied at post time: the source may change. */
	if (inl)
		memset(a->buf + EDGE_SRC, 0xee, 256 * 1024);
	st = st_poll_one(a->scq, &wc, 3000) ? (int)wc.status : -1;
	if (recv && (op == IBV_WR_SEND || imm))
		rst = edge_recv(x, &rwc);
	if (st != IBV_WC_SUCCESS || rst != IBV_WC_SUCCESS) {
		snprintf(why, wl, "requester %s, responder %s", st_wc_str(st),
			 st_wc_str(rst));
		return 0;
	}
	if (recv && (op == IBV_WR_SEND || imm)) {
		enum ibv_wc_opcode want_op = op == IBV_WR_RDMA_WRITE_WITH_IMM ?
			      IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;

		if (rwc.opcode != want_op || rwc.byte_len != rtotal ||
		    !!(rwc.wc_flags & IBV_WC_WITH_IMM) != imm ||
		    (imm && rwc.imm_data != htonl(0x1234abcd))) {
			snprintf(why, wl, "receive: opcode %d byte_len %u flags %#x",
				 rwc.opcode, rwc.byte_len, rwc.wc_flags);
			return 0;
		}
	}
	/* The bytes: B's scatter list (past the GRH area), B's target or A's. */
	if (op == IBV_WR_RDMA_READ) {
		edge_gather(sg, n, got, sizeof(got));
	} else if (op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM) {
		__u8 tmp[64 * 1024 + GRH_LEN];

		edge_gather(rsg, rn, tmp, rtotal);
		skip = ud ? GRH_LEN : 0;
		memcpy(got, tmp + skip, total);
	} else {
		/*
		 * A UC Write completes when sent: a zero-length Send after
		 * it on the same QP arrives after it was placed.
		 */
		if (x->type == IBV_QPT_UC && op == IBV_WR_RDMA_WRITE &&
		    !edge_fence(x, why, wl))
			return 0;
		memcpy(got, dst, total);
	}
	if (total && memcmp(got, want, total)) {
		for (i = 0; i < total && got[i] == want[i]; i++)
			;
		{
			__u32 j, at = ~0u, e;

			for (j = 0; j + 16 <= total && at == ~0u; j++)
				if (!memcmp(want + j, got + i, 16))
					at = j;
			for (e = i; e < total && got[e] != want[e]; e++)
				;
			snprintf(why, wl,
				 "data differ at byte %u of %u (to %u): got %02x%02x%02x%02x want %02x%02x%02x%02x, found at %d",
				 i, total, e, got[i], got[i + 1], got[i + 2],
				 got[i + 3], want[i], want[i + 1], want[i + 2],
				 want[i + 3], (int)at);
		}
		return 0;
	}
	snprintf(why, wl, "%u bytes", total);
	return 1;
}

static void test_edge_type(struct end *a, struct end *b, enum ibv_qp_type t)
{
	struct st_tap *tap = a->tap;
	struct edge x = { .a = a, .b = b, .type = t };
	int ud = t == IBV_QPT_UD, rc = t == IBV_QPT_RC;
	__u32 big = ud ? 128u << a->d.mtu : 6000;
	struct ibv_qp *q;
	char why[160];
	int ok;

	x.tname = rc ? "RC" : ud ? "UD" : "UC";
	/* One over each limit is refused. */
	q = edge_qp(a, t, EDGE_SGE + 1, 0);
	st_tap_ok(tap, !q && errno, "%s: create_qp with max_send_sge %d refused (%s)",
		  x.tname, EDGE_SGE + 1, strerror(errno));
	if (q)
		ibv_destroy_qp(q);
	q = edge_qp(a, t, 1, EDGE_INLINE + 1);
	st_tap_ok(tap, !q && errno, "%s: create_qp with max_inline_data %d refused (%s)",
		  x.tname, EDGE_INLINE + 1, strerror(errno));
	if (q)
		ibv_destroy_qp(q);

	x.qa = edge_qp(a, t, EDGE_SGE, EDGE_INLINE);
	x.qb = edge_qp(b, t, EDGE_SGE, EDGE_INLINE);
	if (!x.qa || !x.qb) {
		st_tap_ok(tap, 0,
			  "%s: create_qp at max_send_sge = max_recv_sge = %d, max_inline_data %d",
			  x.tname, EDGE_SGE, EDGE_INLINE);
		return;
	}
	st_tap_ok(tap, 1, "%s: create_qp at max_send_sge = max_recv_sge = %d, max_inline_data %d",
		  x.tname, EDGE_SGE, EDGE_INLINE);
	x.rmr = ibv_reg_mr(b->pd, b->buf + EDGE_DST, 256 * 1024,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	if (!x.rmr)
		st_bail("ibv_reg_mr");
	if (ud) {
		ud_ready(x.qa, QKEY);
		ud_ready(x.qb, QKEY);
		x.ah = ah_to(a->pd, a, b);
		if (!x.ah)
			st_bail("ibv_create_ah");
	} else {
		qp_connect(x.qa, a, b, x.qb->qp_num);
		qp_connect(x.qb, b, a, x.qa->qp_num);
	}

	ok = edge_xfer(&x, IBV_WR_SEND, EDGE_SGE, big, 0, EDGE_SGE, why,
		       sizeof(why));
	st_tap_ok(tap, ok, "%s: Send gathered from %d SGEs, scattered into %d: %s",
		  x.tname, EDGE_SGE, EDGE_SGE, why);
	ok = edge_xfer(&x, IBV_WR_SEND, 3, EDGE_INLINE, 1, 1, why,
		       sizeof(why));
	st_tap_ok(tap, ok,
		  "%s: inline Send of %d bytes from 3 SGEs, source overwritten once posted: %s",
		  x.tname, EDGE_INLINE, why);
	ok = edge_xfer(&x, IBV_WR_SEND, 0, 0, 0, 1, why, sizeof(why));
	st_tap_ok(tap, ok, "%s: zero-length Send (no SGE): %s", x.tname, why);
	/* UD: one SGE for the GRH area */
	ok = edge_xfer(&x, IBV_WR_SEND_WITH_IMM, 0, 0, 0, ud, why,
		       sizeof(why));
	st_tap_ok(tap, ok, "%s: zero-length Send with Immediate into a WQE with %d SGEs: %s",
		  x.tname, ud, why);
	{
		struct ibv_sge sg = { .addr = (uintptr_t)a->buf,
				      .length = EDGE_INLINE + 1,
				      .lkey = a->mr->lkey };
		struct ibv_send_wr wr = { .opcode = IBV_WR_SEND,
					  .sg_list = &sg, .num_sge = 1,
					  .send_flags = IBV_SEND_INLINE |
							IBV_SEND_SIGNALED },
				   *bad;
		int err;

		wr.wr.ud.ah = x.ah;
		wr.wr.ud.remote_qpn = x.qb->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
		err = ibv_post_send(x.qa, &wr, &bad);
		st_tap_ok(tap, err != 0, "%s: inline Send of %d bytes refused at post (%s)",
			  x.tname, EDGE_INLINE + 1, strerror(err));
	}
	if (!ud) {
		ok = edge_xfer(&x, IBV_WR_RDMA_WRITE, EDGE_SGE, 6000, 0, 0,
			       why, sizeof(why));
		st_tap_ok(tap, ok, "%s: Write gathered from %d SGEs: %s", x.tname,
			  EDGE_SGE, why);
		ok = edge_xfer(&x, IBV_WR_RDMA_WRITE, 2, EDGE_INLINE, 1, 0,
			       why, sizeof(why));
		st_tap_ok(tap, ok, "%s: inline Write of %d bytes: %s", x.tname,
			  EDGE_INLINE, why);
		ok = edge_xfer(&x, IBV_WR_RDMA_WRITE, 0, 0, 0, 0, why,
			       sizeof(why));
		st_tap_ok(tap, ok, "%s: zero-length Write: %s", x.tname, why);
		ok = edge_xfer(&x, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 0, 0, 0,
			       why, sizeof(why));
		st_tap_ok(tap, ok, "%s: zero-length Write with Immediate: %s", x.tname,
			  why);
		ok = edge_xfer(&x, IBV_WR_RDMA_WRITE_WITH_IMM, EDGE_SGE, 6000,
			       0, 1, why, sizeof(why));
		st_tap_ok(tap, ok, "%s: Write with Immediate gathered from %d SGEs: %s",
			  x.tname, EDGE_SGE, why);
	}
	if (rc) {
		ok = edge_xfer(&x, IBV_WR_RDMA_READ, EDGE_SGE, 6000, 0, 0,
			       why, sizeof(why));
		st_tap_ok(tap, ok, "RC: Read scattered into %d SGEs: %s", EDGE_SGE, why);
		ok = edge_xfer(&x, IBV_WR_RDMA_READ, 0, 0, 0, 0, why,
			       sizeof(why));
		st_tap_ok(tap, ok, "RC: zero-length Read: %s", why);
	}
	if (tap->failed) {
		dump_counters(a);
		dump_counters(b);
	}
	ibv_destroy_qp(x.qa);
	ibv_destroy_qp(x.qb);
	if (x.ah)
		ibv_destroy_ah(x.ah);
	ibv_dereg_mr(x.rmr);
}

static void test_edge(struct end *a, struct end *b)
{
	test_edge_type(a, b, IBV_QPT_RC);
	test_edge_type(a, b, IBV_QPT_UC);
	test_edge_type(a, b, IBV_QPT_UD);
}

/* --- flush: RDMA Flush through the rxe user ABI -------------------------- */

/*
 * The stock rdma-core 44 has no ibv_wr_flush(): the requester QP is made
 * through the uverbs commands librxe itself issues, its send ring mapped
 * here, and Flush WQEs written into it the way a newer librxe does (the
 * 6.2+ rxe ABI: wr.flush over wr.rdma). Its completions arrive in a
 * librxe CQ. The same code drives an rdma_rxe requester.
 */
#define WR_FLUSH		14	/* IB_UVERBS_WR_FLUSH */
#define WC_FLUSH		8	/* IB_UVERBS_WC_FLUSH */
#define ACC_FLUSH_GLOBAL	0x100	/* IB_UVERBS_ACCESS_FLUSH_GLOBAL */
#define ACC_FLUSH_PERSISTENT	0x200
#define FLUSH_GLOBAL		1
#define FLUSH_PERSISTENT	2
#define FLUSH_RANGE		0
#define FLUSH_MR		1

struct uflush {
	__aligned_u64 remote_addr;
	__u32 length;
	__u32 rkey;
	__u8 type;
	__u8 level;
};

struct raw_qp {
	struct ibv_qp ev;	/* what async events name (libibverbs acks) */
	struct end *e;
	__u32 handle, qpn;
	struct rxe_queue_buf *sq;
	size_t sq_len;
};

static int raw_cmd(struct ibv_context *ctx, void *req, size_t len)
{
	return write(ctx->cmd_fd, req, len) == (ssize_t)len ? 0 : errno;
}

static int raw_qp_create(struct raw_qp *r, struct end *e)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_qp cmd;
	} req = {};
	struct {
		struct ib_uverbs_create_qp_resp base;
		struct rxe_create_qp_resp drv;
	} resp = {};
	void *p;
	int err;

	memset(r, 0, sizeof(*r));
	r->e = e;
	pthread_mutex_init(&r->ev.mutex, NULL);
	pthread_cond_init(&r->ev.cond, NULL);
	req.hdr.command = IB_USER_VERBS_CMD_CREATE_QP;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.user_handle = (uintptr_t)&r->ev;
	req.cmd.pd_handle = e->pd->handle;
	req.cmd.send_cq_handle = e->scq->handle;
	req.cmd.recv_cq_handle = e->rcq->handle;
	req.cmd.max_send_wr = 16;
	req.cmd.max_recv_wr = 1;
	req.cmd.max_send_sge = 1;
	req.cmd.max_recv_sge = 1;
	req.cmd.qp_type = IBV_QPT_RC;
	err = raw_cmd(e->d.ctx, &req, sizeof(req));
	if (err)
		return err;
	r->handle = resp.base.qp_handle;
	r->qpn = resp.base.qpn;
	r->sq_len = resp.drv.sq_mi.size;
	p = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 e->d.ctx->cmd_fd, resp.drv.sq_mi.offset);
	if (p == MAP_FAILED)
		return errno;
	r->sq = p;
	return 0;
}

static void raw_qp_destroy(struct raw_qp *r)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_qp cmd;
	} req = {};
	struct ib_uverbs_destroy_qp_resp resp;

	if (r->sq)
		munmap(r->sq, r->sq_len);
	req.hdr.command = IB_USER_VERBS_CMD_DESTROY_QP;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.qp_handle = r->handle;
	raw_cmd(r->e->d.ctx, &req, sizeof(req));
}

/* INIT, RTR (to @dqpn on @peer), RTS, as qp_connect_to() does. */
static int raw_qp_connect(struct raw_qp *r, const struct end *peer,
			  __u32 dqpn)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_modify_qp cmd;
	} req;
	struct ib_uverbs_modify_qp *c = &req.cmd;
	int err;

	memset(&req, 0, sizeof(req));
	req.hdr.command = IB_USER_VERBS_CMD_MODIFY_QP;
	req.hdr.in_words = sizeof(req) / 4;
	c->qp_handle = r->handle;
	c->qp_state = IBV_QPS_INIT;
	c->port_num = 1;
	c->attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       IBV_QP_ACCESS_FLAGS;
	err = raw_cmd(r->e->d.ctx, &req, sizeof(req));
	if (err)
		return err;
	c->qp_state = IBV_QPS_RTR;
	c->path_mtu = r->e->d.mtu;
	c->dest_qp_num = dqpn;
	c->rq_psn = 100;
	c->max_dest_rd_atomic = 4;
	c->min_rnr_timer = 1;
	memcpy(c->dest.dgid, peer->d.gid.raw, 16);
	c->dest.sgid_index = r->e->d.gid_index;
	c->dest.hop_limit = 64;
	c->dest.is_global = 1;
	c->dest.port_num = 1;
	c->attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	err = raw_cmd(r->e->d.ctx, &req, sizeof(req));
	if (err)
		return err;
	memset(c, 0, sizeof(*c));
	c->qp_handle = r->handle;
	c->qp_state = IBV_QPS_RTS;
	c->sq_psn = 100;
	c->timeout = 14;
	c->retry_cnt = 7;
	c->rnr_retry = 7;
	c->max_rd_atomic = 4;
	c->attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC;
	return raw_cmd(r->e->d.ctx, &req, sizeof(req));
}

/*
 * Write a Flush (or, @len_write > 0, an RDMA Write of that many bytes
 * from A's buffer) into the ring and ring the doorbell.
 */
static int raw_post(struct raw_qp *r, __u32 opcode, __u64 raddr,
		    __u32 rkey, __u32 len, __u8 type, __u8 level)
{
	struct rxe_queue_buf *q = r->sq;
	__u32 prod = q->producer_index;
	__u32 cons = __atomic_load_n(&q->consumer_index, __ATOMIC_ACQUIRE);
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} req = {};
	struct ib_uverbs_post_send_resp resp;
	struct rxe_send_wqe *w;

	if (((prod + 1) & q->index_mask) == (cons & q->index_mask))
		return -1;	/* full */
	w = (void *)(q->data + ((size_t)(prod & q->index_mask) <<
				q->log2_elem_size));
	memset(w, 0, (size_t)1 << q->log2_elem_size);
	w->wr.wr_id = opcode;
	w->wr.opcode = opcode;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	w->iova = raddr;
	if (opcode == WR_FLUSH) {
		struct uflush *f = (void *)&w->wr.wr;

		f->remote_addr = raddr;
		f->length = len;
		f->rkey = rkey;
		f->type = type;
		f->level = level;
		w->dma.length = len;
		w->dma.resid = len;
	} else {
		w->wr.wr.rdma.remote_addr = raddr;
		w->wr.wr.rdma.rkey = rkey;
		w->dma.length = len;
		w->dma.resid = len;
		w->dma.num_sge = 1;
		w->dma.sge[0].addr = (uintptr_t)r->e->buf;
		w->dma.sge[0].length = len;
		w->dma.sge[0].lkey = r->e->mr->lkey;
	}
	__atomic_store_n(&q->producer_index, (prod + 1) & q->index_mask,
			 __ATOMIC_RELEASE);
	req.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.qp_handle = r->handle;
	req.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return raw_cmd(r->e->d.ctx, &req, sizeof(req));
}

/* Post and wait: the completion's status (-1: none), its opcode. */
static int raw_do(struct raw_qp *r, __u32 opcode, __u64 raddr, __u32 rkey,
		  __u32 len, __u8 type, __u8 level, int *wc_op)
{
	struct ibv_wc wc;

	int err = raw_post(r, opcode, raddr, rkey, len, type, level);

	if (err) {
		printf("# post of opcode %u: %s\n", opcode,
		       err < 0 ? "ring full" : strerror(err));
		return -1;
	}
	if (!st_poll_one(r->e->scq, &wc, 5000))
		return -1;
	if (wc_op)
		*wc_op = wc.opcode;
	return wc.status;
}

/* A fresh pair: A's raw QP @r connected to a new RC QP on B, returned. */
static struct ibv_qp *flush_pair(struct raw_qp *r, struct end *a,
				 struct end *b, int access)
{
	struct ibv_qp *qb = qp_create(b, IBV_QPT_RC, 16);

	if (raw_qp_create(r, a))
		st_bail("raw create_qp");
	qp_connect_acc(qb, b, a, r->qpn, access);
	if (raw_qp_connect(r, b, qb->qp_num))
		st_bail("raw modify_qp");
	return qb;
}

static void test_flush(struct end *a, struct end *b)
{
	struct st_tap *tap = a->tap;
	__u32 off = 512 * 1024, len = 64 * 1024;
	__u8 *t = b->buf + off;
	struct ibv_mr *fm, *nm;
	struct ibv_qp *qb;
	struct raw_qp r;
	int st, op = -1, i, ok;

	/* B's target: Flush rights for global visibility, or not. */
	fm = ibv_reg_mr(b->pd, t, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | ACC_FLUSH_GLOBAL);
	nm = ibv_reg_mr(b->pd, t + len, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!nm)
		st_bail("ibv_reg_mr");
	qb = qp_create(b, IBV_QPT_RC, 16);
	if (raw_qp_create(&r, a))
		st_bail("raw create_qp");
	if (!fm) {
		/*
		 * A kernel without Flush (6.1): the core refuses the right;
		 * a Flush posted anyway fails its WQE, nothing else.
		 */
		st_tap_ok(tap, errno == EINVAL || errno == EOPNOTSUPP,
			  "no Flush in this kernel: reg_mr with IB_ACCESS_FLUSH_GLOBAL refused (%s)",
			  strerror(errno));
		qp_connect_acc(qb, b, a, r.qpn, 0);
		if (raw_qp_connect(&r, b, qb->qp_num))
			st_bail("raw modify_qp");
		st = raw_do(&r, WR_FLUSH, (uintptr_t)t + len, nm->rkey, 64,
			    FLUSH_GLOBAL, FLUSH_RANGE, NULL);
		st_tap_ok(tap, st > 0, "no Flush in this kernel: a Flush WQE fails (%s)",
			  st_wc_str(st));
		goto out;
	}
	st_tap_ok(tap, 1, "reg_mr with IB_ACCESS_FLUSH_GLOBAL");
	errno = 0;
	{
		struct ibv_mr *pm = ibv_reg_mr(b->pd, t, len,
					       IBV_ACCESS_LOCAL_WRITE |
					       ACC_FLUSH_PERSISTENT);

		st_tap_ok(tap, !pm, "reg_mr with IB_ACCESS_FLUSH_PERSISTENT refused (%s): no pmem",
			  pm ? "accepted" : strerror(errno));
		if (pm)
			ibv_dereg_mr(pm);
	}
	qp_connect_acc(qb, b, a, r.qpn, ACC_FLUSH_GLOBAL);
	if (raw_qp_connect(&r, b, qb->qp_num))
		st_bail("raw modify_qp");

	/* Writes, then a Flush of their range: both complete, bytes there. */
	for (i = 0; i < 4096; i++)
		a->buf[i] = (__u8)(i * 13 + 5);
	memset(t, 0, 8192);
	st = raw_do(&r, IBV_WR_RDMA_WRITE, (uintptr_t)t, fm->rkey, 4096, 0, 0,
		    NULL);
	ok = st;
	st = raw_do(&r, WR_FLUSH, (uintptr_t)t, fm->rkey, 4096, FLUSH_GLOBAL,
		    FLUSH_RANGE, &op);
	st_tap_ok(tap, ok == IBV_WC_SUCCESS && st == IBV_WC_SUCCESS && op == WC_FLUSH &&
		  !memcmp(t, a->buf, 4096),
		  "Write (%s) then Flush (global, range): %s, completion opcode %d, data %s",
		  st_wc_str(ok), st_wc_str(st), op,
		  memcmp(t, a->buf, 4096) ? "NOT placed" : "placed");
	st = raw_do(&r, WR_FLUSH, 0, fm->rkey, 0, FLUSH_GLOBAL, FLUSH_MR, &op);
	st_tap_ok(tap, st == IBV_WC_SUCCESS, "Flush of the whole region (level MR): %s",
		  st_wc_str(st));
	st = raw_do(&r, WR_FLUSH, (uintptr_t)t + len - 64, fm->rkey, 128,
		    FLUSH_GLOBAL, FLUSH_RANGE, NULL);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "Flush of a range past the region: %s", st_wc_str(st));
	raw_qp_destroy(&r);
	ibv_destroy_qp(qb);

	/* An MR without the Flush right. */
	qb = flush_pair(&r, a, b, ACC_FLUSH_GLOBAL);
	st = raw_do(&r, WR_FLUSH, (uintptr_t)t + len, nm->rkey, 64,
		    FLUSH_GLOBAL, FLUSH_RANGE, NULL);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "Flush through a key without the Flush right: %s", st_wc_str(st));
	raw_qp_destroy(&r);
	ibv_destroy_qp(qb);

	/* Persistence asked of memory that has none. */
	qb = flush_pair(&r, a, b, ACC_FLUSH_GLOBAL);
	st = raw_do(&r, WR_FLUSH, (uintptr_t)t, fm->rkey, 64,
		    FLUSH_PERSISTENT, FLUSH_RANGE, NULL);
	st_tap_ok(tap, st == IBV_WC_REM_INV_REQ_ERR,
		  "Flush for persistence to a QP that does not allow it: %s",
		  st_wc_str(st));
	raw_qp_destroy(&r);
	ibv_destroy_qp(qb);

	/*
	 * A QP may allow both placement types (the connection manager
	 * grants both): persistence still fails, at the key.
	 */
	qb = flush_pair(&r, a, b, ACC_FLUSH_GLOBAL | ACC_FLUSH_PERSISTENT);
	st = raw_do(&r, WR_FLUSH, (uintptr_t)t, fm->rkey, 64,
		    FLUSH_PERSISTENT, FLUSH_RANGE, NULL);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "Flush for persistence to a QP that allows it, through a key without it: %s",
		  st_wc_str(st));
	raw_qp_destroy(&r);
	ibv_destroy_qp(qb);

	/* A responder QP without the Flush right: invalid request. */
	qb = flush_pair(&r, a, b, 0);
	st = raw_do(&r, WR_FLUSH, (uintptr_t)t, fm->rkey, 64, FLUSH_GLOBAL,
		    FLUSH_RANGE, NULL);
	st_tap_ok(tap, st == IBV_WC_REM_INV_REQ_ERR,
		  "Flush to a QP without the Flush right: %s", st_wc_str(st));
out:
	raw_qp_destroy(&r);
	ibv_destroy_qp(qb);
	if (fm)
		ibv_dereg_mr(fm);
	ibv_dereg_mr(nm);
}

/*
 * The verbs semantics of IBA chapters 10 and 11 that conformance suites
 * and real clients rely on (issue 19): A is the requester, B the
 * responder and the owner of the memory, as in test_mw().
 */

/* Post a Bind MW for @mw with key @key and @access; its status, or -1. */
static int bind_key(struct end *b, struct ibv_qp *qp, struct ibv_mw *mw,
		    struct ibv_mr *mr, __u64 addr, __u64 len, __u32 key,
		    unsigned int access)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW, .wr_id = 0xb1 };

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	return st_post_wait(qp, b->scq, &wr, 5000);
}

/* Move @qp through INIT and RTR to RTS, with @rnr_retry RNR retries. */
static void qp_connect_rnr(struct ibv_qp *qp, const struct end *self,
			   const struct end *peer, __u32 dqpn, __u8 rnr_retry)
{
	struct st_path p = ops_path;

	p.dgid = peer->d.gid;
	p.sgid_index = self->d.gid_index;
	p.mtu = self->d.mtu;
	p.dest_qpn = dqpn;
	p.rnr_retry = rnr_retry;
	if (st_qp_init(qp, 1, IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ) ||
	    st_qp_rtr(qp, &p) || st_qp_rts(qp, &p))
		st_bail("connect");
}

/* Nothing more on @cq within @ms: 1 if it stayed empty. */
static int cq_quiet(struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc;

	if (!st_poll_one(cq, &wc, ms))
		return 1;
	printf("# unexpected completion: wr_id %#llx %s\n",
	       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	return 0;
}

/* (a) type 2 windows bound through the send queue. */
static void verbs_mw(struct end *a, struct end *b, struct ibv_mr *bm,
		     __u64 base)
{
	struct st_tap *tap = a->tap;
	struct ibv_mw *mw = ibv_alloc_mw(b->pd, IBV_MW_TYPE_2);
	unsigned int rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct rc_pair p = {}, p2 = {};
	__u32 alloc_key, key, wrong;
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	int st, st2, st3;

	if (!mw)
		st_bail("ibv_alloc_mw");
	alloc_key = mw->rkey;
	rc_pair_new(&p, a, b);
	rc_pair_new(&p2, a, b);

	/* Only the key byte comes from the request (IBA 10.6.7.2.3). */
	wrong = ((alloc_key >> 8) ^ 0x5a5a5a) << 8 | 0x3c;
	key = (alloc_key & ~0xffu) | 0x3c;
	st = bind_key(b, p.qb, mw, bm, base, 65536, wrong, rw);
	st_pattern_fill(a->buf, 4096, 21);
	st2 = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, base + 512, key, 4096);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS &&
		  st_pattern_check(b->buf + (base - (uintptr_t)b->buf) + 512,
				   4096, 21),
		  "MW type 2: a bind takes the key byte of the request's rkey %#x, the index stays the window's: %#x works (%s, %s)",
		  wrong, key, st_wc_str(st), st_wc_str(st2));
	rc_pair_new(&p, a, b);
	st = bind_key(b, p.qb, mw, bm, base, 65536, wrong, rw);
	st_tap_ok(tap, st == IBV_WC_MW_BIND_ERR,
		  "MW type 2: binding it again while bound fails (%s)",
		  st_wc_str(st));

	/* Rebind to another QP, with the same key byte, by the old name. */
	rc_pair_new(&p, a, b);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = key;
	st = st_post_wait(p.qb, b->scq, &wr, 5000);
	st2 = bind_key(b, p2.qb, mw, bm, base, 65536, key, rw);
	st_pattern_fill(a->buf, 256, 22);
	st3 = rdma_op(a, p2.qa, IBV_WR_RDMA_WRITE, base, key, 256);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS &&
		  st3 == IBV_WC_SUCCESS &&
		  st_pattern_check(b->buf + (base - (uintptr_t)b->buf), 256,
				   22),
		  "MW type 2: invalidated, then bound again to another QP with the same key (key reuse, ibv_mw.rkey never updated): %s, %s, Write %s",
		  st_wc_str(st), st_wc_str(st2), st_wc_str(st3));
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, base, key, 64);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "MW type 2: the QP it was bound through before gets a remote access error (%s)",
		  st_wc_str(st));

	/* A new key byte, the consumer tracking the key in mw->rkey. */
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = key;
	st = st_post_wait(p2.qb, b->scq, &wr, 5000);
	mw->rkey = key;
	st2 = bind_key(b, p2.qb, mw, bm, base, 65536, ibv_inc_rkey(key), rw);
	st3 = rdma_op(a, p2.qa, IBV_WR_RDMA_WRITE, base, ibv_inc_rkey(key), 64);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS &&
		  st3 == IBV_WC_SUCCESS,
		  "MW type 2: rebound with the next key byte (%s, %s, Write %s)",
		  st_wc_str(st), st_wc_str(st2), st_wc_str(st3));
	st = rdma_op(a, p2.qa, IBV_WR_RDMA_WRITE, base, key, 64);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "MW type 2: the previous key is dead (%s)", st_wc_str(st));
	ibv_dealloc_mw(mw);

	/* Deallocated while bound: the key dies at once. */
	mw = ibv_alloc_mw(b->pd, IBV_MW_TYPE_2);
	if (!mw)
		st_bail("ibv_alloc_mw");
	rc_pair_new(&p2, a, b);
	key = (mw->rkey & ~0xffu) | 0x42;
	st = bind_key(b, p2.qb, mw, bm, base, 4096, key, rw);
	st2 = rdma_op(a, p2.qa, IBV_WR_RDMA_WRITE, base, key, 64);
	st3 = ibv_dealloc_mw(mw);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS && !st3,
		  "MW type 2: bound, used (%s, %s), deallocated while bound (%d)",
		  st_wc_str(st), st_wc_str(st2), st3);
	st = rdma_op(a, p2.qa, IBV_WR_RDMA_WRITE, base, key, 64);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "MW type 2: after the dealloc its key gets a remote access error on its own QP (%s)",
		  st_wc_str(st));

	/* Unsignaled bind on a QP with sq_sig_all = 0. */
	mw = ibv_alloc_mw(b->pd, IBV_MW_TYPE_2);
	if (!mw)
		st_bail("ibv_alloc_mw");
	rc_pair_new(&p, a, b);
	{
		struct ibv_send_wr bw = { .opcode = IBV_WR_BIND_MW,
					  .wr_id = 0x51 }, *bad;
		struct ibv_sge sge = { .addr = (uintptr_t)b->buf,
				       .length = 8, .lkey = b->mr->lkey };
		struct ibv_send_wr w2 = {
			.opcode = IBV_WR_RDMA_WRITE, .wr_id = 0x52,
			.sg_list = &sge, .num_sge = 1,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)a->buf,
				     .rkey = a->mr->rkey },
		};

		key = (mw->rkey & ~0xffu) | 0x77;
		bw.bind_mw.mw = mw;
		bw.bind_mw.rkey = key;
		bw.bind_mw.bind_info.mr = bm;
		bw.bind_mw.bind_info.addr = base;
		bw.bind_mw.bind_info.length = 4096;
		bw.bind_mw.bind_info.mw_access_flags = rw;
		bw.next = &w2;
		st = ibv_post_send(p.qb, &bw, &bad);
		st2 = st_poll_one(b->scq, &wc, 5000) ? (int)wc.status : -1;
		st3 = st2 == IBV_WC_SUCCESS && wc.wr_id == 0x52 &&
		      cq_quiet(b->scq, 200);
	}
	st2 = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, base, key, 64);
	st_tap_ok(tap, !st && st3 && st2 == IBV_WC_SUCCESS,
		  "MW type 2: an unsignaled bind completes silently (one completion, the signaled Write's) and binds (Write through it: %s)",
		  st_wc_str(st2));

	/* A completion channel sees a bind's completion. */
	{
		struct ibv_comp_channel *ch =
			ibv_create_comp_channel(b->d.ctx);
		struct ibv_cq *cq = ch ? ibv_create_cq(b->d.ctx, 16, NULL,
						       ch, 0) : NULL;
		struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 8,
					  .max_send_sge = 1,
					  .max_recv_sge = 1 };
		struct ibv_qp *qb = cq ? st_qp_create(b->pd, cq, b->rcq,
						      IBV_QPT_RC, &cap) : NULL;
		struct ibv_qp *qa = qp_create(a, IBV_QPT_RC, 8);
		struct ibv_cq *ev_cq = NULL;
		void *ev_ctx;
		struct pollfd pfd;
		int got = 0;

		if (!qb)
			st_bail("completion channel CQ / QP");
		qp_connect(qa, a, b, qb->qp_num);
		qp_connect(qb, b, a, qa->qp_num);
		rc_pair_new(&p, a, b);
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.invalidate_rkey = key;
		st = st_post_wait(p.qb, b->scq, &wr, 5000);
		ibv_req_notify_cq(cq, 0);
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_BIND_MW;
		wr.wr_id = 0x53;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = key;
		wr.bind_mw.bind_info.mr = bm;
		wr.bind_mw.bind_info.addr = base;
		wr.bind_mw.bind_info.length = 4096;
		wr.bind_mw.bind_info.mw_access_flags = rw;
		{
			struct ibv_send_wr *bad;

			st2 = ibv_post_send(qb, &wr, &bad);
		}
		pfd.fd = ch->fd;
		pfd.events = POLLIN;
		if (!st2 && poll(&pfd, 1, 5000) == 1 &&
		    !ibv_get_cq_event(ch, &ev_cq, &ev_ctx)) {
			ibv_ack_cq_events(ev_cq, 1);
			got = ev_cq == cq && ibv_poll_cq(cq, 1, &wc) == 1 &&
			      wc.wr_id == 0x53 &&
			      wc.status == IBV_WC_SUCCESS &&
			      wc.opcode == IBV_WC_BIND_MW;
		}
		st3 = rdma_op(a, qa, IBV_WR_RDMA_WRITE, base, key, 64);
		st_tap_ok(tap, st == IBV_WC_SUCCESS && got &&
			  st3 == IBV_WC_SUCCESS,
			  "MW type 2: a bind's completion (IBV_WC_BIND_MW) wakes a completion channel; the window serves its QP (%s)",
			  st_wc_str(st3));
		ibv_destroy_qp(qa);
		ibv_destroy_qp(qb);
		ibv_destroy_cq(cq);
		ibv_destroy_comp_channel(ch);
	}

	/* Type 1: ibv_bind_mw twice; the first key dies. */
	{
		struct ibv_mw *mw1 = ibv_alloc_mw(b->pd, IBV_MW_TYPE_1);
		struct ibv_mw_bind bind = {
			.wr_id = 0x54, .send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .mr = bm, .addr = base, .length = 4096,
				       .mw_access_flags = rw },
		};
		__u32 k1;

		if (!mw1)
			st_bail("ibv_alloc_mw type 1");
		st = ibv_bind_mw(p.qb, mw1, &bind) ? -1 :
		     (st_poll_one(b->scq, &wc, 5000) ? (int)wc.status : -1);
		k1 = mw1->rkey;
		st2 = ibv_bind_mw(p.qb, mw1, &bind) ? -1 :
		      (st_poll_one(b->scq, &wc, 5000) ? (int)wc.status : -1);
		st3 = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, base, mw1->rkey, 64);
		st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS &&
			  st3 == IBV_WC_SUCCESS && k1 != mw1->rkey,
			  "MW type 1: bound twice by ibv_bind_mw, the second key works (%s, %s, %s)",
			  st_wc_str(st), st_wc_str(st2), st_wc_str(st3));
		st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, base, k1, 64);
		st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
			  "MW type 1: the first key is dead after the rebind (%s)",
			  st_wc_str(st));
		rc_pair_new(&p, a, b);
		st = bind_key(b, p.qb, mw1, bm, base, 4096,
			      ibv_inc_rkey(mw1->rkey),
			      rw | IBV_ACCESS_ZERO_BASED);
		st_tap_ok(tap, st == IBV_WC_MW_BIND_ERR,
			  "MW type 1: a zero-based bind fails (IBA o10-36.2.2): %s",
			  st_wc_str(st));
		rc_pair_new(&p, a, b);
		ibv_dealloc_mw(mw1);
	}
	ibv_dealloc_mw(mw);
	ibv_destroy_qp(p.qa);
	ibv_destroy_qp(p.qb);
	ibv_destroy_qp(p2.qa);
	ibv_destroy_qp(p2.qb);
}

/* A zero-byte Send from A with @nsge SGEs on @lkey; both statuses. */
static int zero_send(struct end *a, struct end *b, struct rc_pair *p,
		     int nsge, __u32 lkey, int *rst, __u32 *rlen)
{
	struct ibv_sge sge = { .addr = (uintptr_t)a->buf, .length = 0,
			       .lkey = lkey };
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &sge,
				  .num_sge = nsge };
	struct ibv_wc wc;
	int st;

	post_recv(b, p->qb, 0x60, 0, 64);
	st = st_post_wait(p->qa, a->scq, &wr, 5000);
	*rst = st_poll_one(b->rcq, &wc, 5000) ? (int)wc.status : -1;
	*rlen = *rst >= 0 ? wc.byte_len : ~0u;
	return st;
}

/* (b) zero-length MRs and zero-byte operations. */
static void verbs_zero(struct end *a, struct end *b)
{
	struct st_tap *tap = a->tap;
	struct ibv_mr *za = ibv_reg_mr(a->pd, a->buf, 0, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *zb = ibv_reg_mr(b->pd, b->buf + 4096, 0,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ);
	struct ibv_mr *sm = ibv_reg_mr(b->pd, b->buf + 8192, 4096,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ);
	__u64 past = (uintptr_t)b->buf + 8192 + 4096;
	struct rc_pair p = {};
	int st, st2, rst;
	__u32 rlen;

	st_tap_ok(tap, za && zb && sm,
		  "zero-length MRs register (IBA 10.6.3.1: a region's length may be 0): %s",
		  za && zb ? "yes" : strerror(errno));
	if (!za || !zb || !sm)
		goto out;
	rc_pair_new(&p, a, b);
	st = zero_send(a, b, &p, 1, za->lkey, &rst, &rlen);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && rst == IBV_WC_SUCCESS && !rlen,
		  "zero-byte Send through a zero-length MR's lkey: %s, receive %s, %u bytes",
		  st_wc_str(st), st_wc_str(rst), rlen);
	st = zero_send(a, b, &p, 0, 0, &rst, &rlen);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && rst == IBV_WC_SUCCESS && !rlen,
		  "zero-byte Send without SGEs: %s, receive %s, %u bytes",
		  st_wc_str(st), st_wc_str(rst), rlen);
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, (uintptr_t)b->buf + 4096,
		     zb->rkey, 0);
	st2 = rdma_op(a, p.qa, IBV_WR_RDMA_READ, (uintptr_t)b->buf + 4096,
		      zb->rkey, 0);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS,
		  "zero-byte Write and Read with a zero-length MR's rkey: %s, %s",
		  st_wc_str(st), st_wc_str(st2));
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, 0x1234, 0xdeadbe00, 0);
	st2 = rdma_op(a, p.qa, IBV_WR_RDMA_READ, 0x1234, 0xdeadbe00, 0);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS,
		  "zero-byte Write and Read with a key and address of nothing: not validated (C9-88): %s, %s",
		  st_wc_str(st), st_wc_str(st2));
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, past, sm->rkey, 0);
	st2 = rdma_op(a, p.qa, IBV_WR_RDMA_READ, past, sm->rkey, 0);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS,
		  "zero-byte Write and Read just past an MR's end: %s, %s",
		  st_wc_str(st), st_wc_str(st2));
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, past - 1, sm->rkey, 1);
	st_tap_ok(tap, st == IBV_WC_SUCCESS,
		  "a 1-byte Write at an MR's last byte: %s", st_wc_str(st));
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, past, sm->rkey, 1);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "a 1-byte Write just past an MR's end: %s", st_wc_str(st));
	rc_pair_new(&p, a, b);
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, (uintptr_t)b->buf + 4096,
		     zb->rkey, 1);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "a 1-byte Write into a zero-length MR: %s", st_wc_str(st));
	rc_pair_new(&p, a, b);
	{
		struct ibv_sge sge = { .addr = (uintptr_t)a->buf, .length = 1,
				       .lkey = za->lkey };
		struct ibv_send_wr wr = { .opcode = IBV_WR_SEND,
					  .sg_list = &sge, .num_sge = 1 };

		post_recv(b, p.qb, 0x61, 0, 64);
		st = st_post_wait(p.qa, a->scq, &wr, 5000);
	}
	st_tap_ok(tap, st == IBV_WC_LOC_PROT_ERR,
		  "a 1-byte Send from a zero-length MR: %s", st_wc_str(st));
	ibv_destroy_qp(p.qa);
	ibv_destroy_qp(p.qb);
out:
	if (za)
		ibv_dereg_mr(za);
	if (zb)
		ibv_dereg_mr(zb);
	if (sm)
		ibv_dereg_mr(sm);
}

/* (c) zero-based MRs and type 2 windows. */
static void verbs_zero_based(struct end *a, struct end *b, struct ibv_mr *bm,
			     __u64 base)
{
	struct st_tap *tap = a->tap;
	__u32 off = 0x40000, len = 65536;
	struct ibv_mr *zm = ibv_reg_mr(b->pd, b->buf + off, len,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_ZERO_BASED);
	struct ibv_mw *mw = ibv_alloc_mw(b->pd, IBV_MW_TYPE_2);
	__u8 *bbase = b->buf + (base - (uintptr_t)b->buf);
	struct rc_pair p = {};
	int st, st2;
	__u32 key;

	st_tap_ok(tap, !!zm, "a zero-based MR registers: %s",
		  zm ? "yes" : strerror(errno));
	if (!zm || !mw)
		goto out;
	rc_pair_new(&p, a, b);
	st_pattern_fill(a->buf, 4096, 31);
	memset(b->buf + off, 0, 8192);
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, 0x100, zm->rkey, 4096);
	st_tap_ok(tap, st == IBV_WC_SUCCESS &&
		  st_pattern_check(b->buf + off + 0x100, 4096, 31),
		  "zero-based MR: a Write to address 0x100 lands 0x100 bytes into it (%s)",
		  st_wc_str(st));
	st_pattern_fill(b->buf + off + 0x2000, 4096, 32);
	memset(a->buf, 0, 4096);
	st = rdma_op(a, p.qa, IBV_WR_RDMA_READ, 0x2000, zm->rkey, 4096);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st_pattern_check(a->buf, 4096, 32),
		  "zero-based MR: a Read of address 0x2000 returns the bytes 0x2000 into it (%s)",
		  st_wc_str(st));
	/* B's own Send through the zero-based lkey, by offset. */
	{
		struct ibv_sge sge = { .addr = 0x2000, .length = 64,
				       .lkey = zm->lkey };
		struct ibv_send_wr wr = { .opcode = IBV_WR_SEND,
					  .sg_list = &sge, .num_sge = 1 };
		struct ibv_wc wc;

		memset(a->buf + 8192, 0, 64);
		if (st_post_recv(p.qa, 0x62, a->buf + 8192, 64, a->mr->lkey))
			st_bail("post recv");
		st = st_post_wait(p.qb, b->scq, &wr, 5000);
		st2 = st_poll_one(a->rcq, &wc, 5000) ? (int)wc.status : -1;
		st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS &&
			  !memcmp(a->buf + 8192, b->buf + off + 0x2000, 64),
			  "zero-based MR: a Send gathers from the lkey's offset 0x2000 (%s, receive %s)",
			  st_wc_str(st), st_wc_str(st2));
	}
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, len - 8, zm->rkey, 16);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "zero-based MR: a Write past its length: %s", st_wc_str(st));

	/* A zero-based type 2 window 4096 bytes into bm. */
	rc_pair_new(&p, a, b);
	key = (mw->rkey & ~0xffu) | 0x21;
	st = bind_key(b, p.qb, mw, bm, base + 4096, 8192, key,
		      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		      IBV_ACCESS_ZERO_BASED);
	st_pattern_fill(a->buf, 1024, 33);
	memset(bbase + 4096, 0, 8192);
	st2 = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, 0x10, key, 1024);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS &&
		  st_pattern_check(bbase + 4096 + 0x10, 1024, 33),
		  "zero-based type 2 window: a Write to address 0x10 lands 0x10 bytes into the window (%s, %s)",
		  st_wc_str(st), st_wc_str(st2));
	memset(a->buf, 0, 1024);
	st = rdma_op(a, p.qa, IBV_WR_RDMA_READ, 0x10, key, 1024);
	st_tap_ok(tap, st == IBV_WC_SUCCESS && st_pattern_check(a->buf, 1024, 33),
		  "zero-based type 2 window: a Read of address 0x10 returns them (%s)",
		  st_wc_str(st));
	st = rdma_op(a, p.qa, IBV_WR_RDMA_WRITE, 8192 - 8, key, 16);
	st_tap_ok(tap, st == IBV_WC_REM_ACCESS_ERR,
		  "zero-based type 2 window: a Write past its length (inside the MR): %s",
		  st_wc_str(st));
	ibv_destroy_qp(p.qa);
	ibv_destroy_qp(p.qb);
out:
	if (mw)
		ibv_dealloc_mw(mw);
	if (zm)
		ibv_dereg_mr(zm);
}

/*
 * (d) RNR: a Send to an empty SRQ, and to an empty RQ, rnr_retry 0 and
 * 3; a multi-packet Send after the one receive WQE was used.
 */
static void verbs_rnr(struct end *a, struct end *b)
{
	struct st_tap *tap = a->tap;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(b->pd, &sa);
	struct ibv_qp *qa, *qb;
	long long t0;
	int st, i;

	if (!srq)
		st_bail("ibv_create_srq");
	/*
	 * Cases 4 and 5: 16 KiB Sends (16 packets at MTU 1024), the SRQ
	 * emptied by the first.
	 */
	for (i = 0; i < 6; i++) {
		__u8 retry = i & 2 ? 3 : i < 4 ? 0 : 2;
		__u32 len = i < 4 ? 64 : 16384;

		qa = qp_create(a, IBV_QPT_RC, 8);
		qb = i & 1 ? qp_create(b, IBV_QPT_RC, 8) : qp_on_srq(b, srq);
		qp_connect_rnr(qa, a, b, qb->qp_num, retry);
		qp_connect_rnr(qb, b, a, qa->qp_num, retry);
		if (i >= 4) {
			struct ibv_wc wc;

			if ((i & 1) &&
			    st_post_recv(qb, 0x90, b->buf, len, b->mr->lkey))
				st_bail("post recv");
			if (!(i & 1)) {
				struct ibv_sge sge = {
					.addr = (uintptr_t)b->buf,
					.length = len, .lkey = b->mr->lkey };
				struct ibv_recv_wr rw = {
					.wr_id = 0x90, .sg_list = &sge,
					.num_sge = 1 }, *bad;

				if (ibv_post_srq_recv(srq, &rw, &bad))
					st_bail("post srq recv");
			}
			st = send_one(a, qa, len);
			if (st != IBV_WC_SUCCESS ||
			    !st_poll_one(b->rcq, &wc, 2000))
				printf("# first 16 KiB Send: %s\n", st_wc_str(st));
		}
		t0 = st_now_ms();
		st = send_one(a, qa, len);
		st_tap_ok(tap, st == IBV_WC_RNR_RETRY_EXC_ERR,
			  "a %u-byte Send into an empty %s, rnr_retry %u: RNR NAKed, then %s at the sender after %lld ms",
			  len, i & 1 ? "receive queue" : "SRQ", retry,
			  st_wc_str(st), st_now_ms() - t0);
		ibv_destroy_qp(qa);
		ibv_destroy_qp(qb);
	}
	ibv_destroy_srq(srq);
}

/* (e) posts refused before RTS never execute. */
static void verbs_early_post(struct end *a, struct end *b)
{
	static const char *const states[] = { "RESET", "INIT", "RTR" };
	struct st_tap *tap = a->tap;
	struct ibv_qp *qa = qp_create(a, IBV_QPT_RC, 16);
	struct ibv_qp *qb = qp_create(b, IBV_QPT_RC, 16);
	int refused[3], i, st, untouched = 1, only = 0;
	struct st_path pa = ops_path;
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	pa.dgid = b->d.gid;
	pa.sgid_index = a->d.gid_index;
	pa.mtu = a->d.mtu;
	pa.dest_qpn = qb->qp_num;
	qp_connect_to(qb, b, a, qa->qp_num, 0, 1);
	memset(b->buf, 0, 4 * 4096);
	for (i = 0; i <= 3; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)a->buf + i * 4096,
				       .length = 4096, .lkey = a->mr->lkey };
		struct ibv_send_wr wr = {
			.opcode = IBV_WR_RDMA_WRITE, .wr_id = 0x70 + i,
			.sg_list = &sge, .num_sge = 1,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)b->buf + i * 4096,
				     .rkey = b->mr->rkey },
		};

		st_pattern_fill(a->buf + i * 4096, 4096, 40 + i);
		if (i == 1 && st_qp_init(qa, 1, 0))
			st_bail("to INIT");
		if (i == 2 && st_qp_rtr(qa, &pa))
			st_bail("to RTR");
		if (i == 3 && st_qp_rts(qa, &pa))
			st_bail("to RTS");
		st = ibv_post_send(qa, &wr, &bad);
		if (i < 3)
			refused[i] = st != 0;
		else if (st)
			st_bail("post in RTS");
	}
	for (i = 0; i < 3; i++)
		st_tap_ok(tap, refused[i],
			  "a post to a QP in %s is refused", states[i]);
	while (st_poll_one(a->scq, &wc, 1000)) {
		if (wc.wr_id == 0x73 && wc.status == IBV_WC_SUCCESS)
			only++;
		else
			only = -100;
		printf("# completion %#llx: %s\n", (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status));
	}
	for (i = 0; i < 3 * 4096; i++)
		if (b->buf[i])
			untouched = 0;
	st_tap_ok(tap, only == 1 && untouched &&
		  st_pattern_check(b->buf + 3 * 4096, 4096, 43),
		  "posts refused in RESET, INIT and RTR never execute once the QP is in RTS: one completion (the Write posted in RTS), their targets untouched");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
}

/* (f) an SRQ's receive WQEs are checked against the SRQ's PD. */
static void verbs_srq_pd(struct end *a, struct end *b)
{
	struct st_tap *tap = a->tap;
	struct ibv_pd *pd2 = ibv_alloc_pd(b->d.ctx);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = pd2 ? ibv_create_srq(pd2, &sa) : NULL;
	struct ibv_mr *m2 = pd2 ? ibv_reg_mr(pd2, b->buf + 16384, 4096,
					     IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp *qa, *qb;
	struct ibv_sge sge;
	struct ibv_recv_wr rw = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;
	int st, rst;

	if (!srq || !m2)
		st_bail("PD, SRQ, MR");
	qa = qp_create(a, IBV_QPT_RC, 8);
	qb = qp_on_srq(b, srq);	/* the QP in b->pd, the SRQ in pd2 */
	qp_connect(qa, a, b, qb->qp_num);
	qp_connect(qb, b, a, qa->qp_num);
	sge = (struct ibv_sge){ .addr = (uintptr_t)b->buf + 16384,
				.length = 64, .lkey = m2->lkey };
	rw.wr_id = 0x80;
	if (ibv_post_srq_recv(srq, &rw, &bad))
		st_bail("post srq recv");
	st_pattern_fill(a->buf, 64, 50);
	st = send_one(a, qa, 64);
	rst = st_poll_one(b->rcq, &wc, 5000) ? (int)wc.status : -1;
	st_tap_ok(tap, st == IBV_WC_SUCCESS && rst == IBV_WC_SUCCESS &&
		  st_pattern_check(b->buf + 16384, 64, 50),
		  "SRQ of another PD than its QP's: a receive through an MR of the SRQ's PD succeeds (%s, %s)",
		  st_wc_str(st), st_wc_str(rst));
	sge = (struct ibv_sge){ .addr = (uintptr_t)b->buf, .length = 64,
				.lkey = b->mr->lkey };
	rw.wr_id = 0x81;
	if (ibv_post_srq_recv(srq, &rw, &bad))
		st_bail("post srq recv");
	st = send_one(a, qa, 64);
	rst = st_poll_one(b->rcq, &wc, 5000) ? (int)wc.status : -1;
	st_tap_ok(tap, rst == IBV_WC_LOC_PROT_ERR &&
		  st == IBV_WC_REM_OP_ERR,
		  "SRQ: a receive WQE through an MR of the QP's PD but not the SRQ's: local protection error at the receiver (%s), remote operational error at the sender (%s)",
		  st_wc_str(rst), st_wc_str(st));
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_srq(srq);
	ibv_dereg_mr(m2);
	ibv_dealloc_pd(pd2);
}

/*
 * A resize the process cannot be told of: RESIZE_CQ with a response it
 * cannot take, MODIFY_SRQ (max_wr) with an mmap_info_addr it cannot
 * take, both through the uverbs write ABI. Each fails with EFAULT and
 * changes nothing: the CQ and the SRQ stay on the rings the library has
 * mapped, so a receive posted there still lands and completes there.
 * Then the library's own resizes work.
 */
static int raw_resize_cq(struct ibv_cq *cq, int cqe, __u64 response)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_resize_cq cmd;
	} req = {};

	req.hdr.command = IB_USER_VERBS_CMD_RESIZE_CQ;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = (sizeof(struct ib_uverbs_resize_cq_resp) +
			     sizeof(struct rxe_resize_cq_resp)) / 4;
	req.cmd.response = response;
	req.cmd.cq_handle = cq->handle;
	req.cmd.cqe = cqe;
	return write(cq->context->cmd_fd, &req, sizeof(req)) == sizeof(req) ?
	       0 : errno;
}

static int raw_resize_srq(struct ibv_srq *srq, __u32 max_wr, __u64 mi_addr)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_modify_srq cmd;
		struct rxe_modify_srq_cmd drv;
	} req = {};

	req.hdr.command = IB_USER_VERBS_CMD_MODIFY_SRQ;
	req.hdr.in_words = sizeof(req) / 4;
	req.cmd.srq_handle = srq->handle;
	req.cmd.attr_mask = IBV_SRQ_MAX_WR;
	req.cmd.max_wr = max_wr;
	req.drv.mmap_info_addr = mi_addr;
	return write(srq->context->cmd_fd, &req, sizeof(req)) == sizeof(req) ?
	       0 : errno;
}

/* One Send from @qa into @srq, completing on @cq: its status, -1 if none. */
static int srq_send(struct end *a, struct ibv_qp *qa, struct end *b,
		    struct ibv_srq *srq, struct ibv_cq *cq, __u64 id)
{
	struct ibv_wc wc;
	int st;

	post_srq_recv(b, srq, id);
	st_pattern_fill(a->buf, 64, (unsigned int)id);
	st = send_one(a, qa, 64);
	if (st != IBV_WC_SUCCESS || st_poll_one(cq, &wc, 5000) <= 0)
		return -1;
	if (wc.wr_id != id ||
	    !st_pattern_check(b->buf + id % 64 * 64, 64, (unsigned int)id))
		return -2;
	return (int)wc.status;
}

static void verbs_resize_fault(struct end *a, struct end *b)
{
	struct st_tap *tap = a->tap;
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(b->pd, &si);
	struct ibv_cq *cq = ibv_create_cq(b->d.ctx, 32, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = b->scq, .recv_cq = cq, .srq = srq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
	};
	struct ibv_srq_attr sa = {};
	struct ibv_qp *qa, *qb;
	int ecq, esrq, st, st2, max_wr, max_wr0, cqe0;

	if (!srq || !cq || ibv_query_srq(srq, &sa))
		st_bail("SRQ, CQ");
	max_wr0 = (int)sa.max_wr;
	cqe0 = cq->cqe;
	qb = ibv_create_qp(b->pd, &ia);
	if (!qb)
		st_bail("QP on the SRQ");
	qa = qp_create(a, IBV_QPT_RC, 8);
	qp_connect(qa, a, b, qb->qp_num);
	qp_connect(qb, b, a, qa->qp_num);

	/* Page 0: never mapped, every write there faults. */
	ecq = raw_resize_cq(cq, 256, 0x10);
	esrq = raw_resize_srq(srq, 64, 0x10);
	max_wr = ibv_query_srq(srq, &sa) ? -1 : (int)sa.max_wr;
	st = srq_send(a, qa, b, srq, cq, 5);
	st_tap_ok(tap, ecq == EFAULT && esrq == EFAULT && max_wr == max_wr0 &&
		  st == IBV_WC_SUCCESS,
		  "resize that cannot be reported (bad response / mmap_info_addr): CQ %s, SRQ %s; nothing changed: SRQ max_wr %d (was %d), a Send into the SRQ completes on the CQ (%s)",
		  strerror(ecq), strerror(esrq), max_wr, max_wr0,
		  st >= 0 ? st_wc_str(st) : "no completion");

	ecq = ibv_resize_cq(cq, 256);
	sa.max_wr = 64;
	esrq = ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
	max_wr = ibv_query_srq(srq, &sa) ? -1 : (int)sa.max_wr;
	st2 = srq_send(a, qa, b, srq, cq, 6);
	st_tap_ok(tap, !ecq && !esrq && max_wr >= 64 && cq->cqe >= 256 &&
		  cq->cqe != cqe0 &&
		  st2 == IBV_WC_SUCCESS,
		  "then the library's resizes: CQ to %d, SRQ to %d (%s, %s); a Send lands (%s)",
		  cq->cqe, max_wr, strerror(ecq), strerror(esrq),
		  st2 >= 0 ? st_wc_str(st2) : "no completion");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
}

static void test_verbs(struct end *a, struct end *b)
{
	__u32 off = 512 * 1024, wlen = 256 * 1024;
	struct ibv_mr *bm = ibv_reg_mr(b->pd, b->buf + off, wlen,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_MW_BIND);
	__u64 base = (uintptr_t)b->buf + off;

	if (!bm)
		st_bail("MR with MW_BIND");
	verbs_mw(a, b, bm, base);
	verbs_zero(a, b);
	verbs_zero_based(a, b, bm, base);
	verbs_rnr(a, b);
	verbs_early_post(a, b);
	verbs_srq_pd(a, b);
	verbs_resize_fault(a, b);
	if (ibv_dereg_mr(bm))
		st_tap_ok(a->tap, 0, "the windows' MR deregisters at the end");
}

int main(int argc, char **argv)
{
	struct st_tap tap = {};
	struct end a = {}, b = {};

	if (argc < 4) {
		fprintf(stderr,
			"usage: %s ud|mw|rereg|events|edge|flush|verbs A B | uc A B MSGS SIZE all|loss\n",
			argv[0]);
		return 2;
	}
	end_open(&a, argv[2], &tap);
	end_open(&b, argv[3], &tap);
	if (!strcmp(argv[1], "ud")) {
		test_ud(&a, &b);
	} else if (!strcmp(argv[1], "rereg")) {
		test_rereg(&a, &b);
	} else if (!strcmp(argv[1], "mw")) {
		test_mw(&a, &b);
	} else if (!strcmp(argv[1], "events")) {
		test_events(&a, &b);
	} else if (!strcmp(argv[1], "edge")) {
		test_edge(&a, &b);
	} else if (!strcmp(argv[1], "flush")) {
		test_flush(&a, &b);
	} else if (!strcmp(argv[1], "verbs")) {
		test_verbs(&a, &b);
	} else if (!strcmp(argv[1], "uc") && argc == 7) {
		test_uc(&a, &b, strtoul(argv[4], NULL, 0),
			strtoul(argv[5], NULL, 0), !strcmp(argv[6], "all"));
	} else {
		fprintf(stderr, "unknown mode %s\n", argv[1]);
		return 2;
	}
	return st_tap_end(&tap);
}
