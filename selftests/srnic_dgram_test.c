// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_dgram_test: the unreliable transports, UD and UC, end to end
 * through the stock libibverbs and librxe. One process drives both ends:
 * a QP on DEV_A sends to a QP on DEV_B (two devices, usually on the two
 * ends of a veth pair, so every packet crosses the wire).
 *
 *   srnic_dgram_test ud DEV_A DEV_B
 *	a datagram arrives with its 40-byte GRH area (IPv4 header at byte
 *	20, the sender's address in it), src_qp and IBV_WC_GRH; a Q_Key
 *	mismatch is dropped and counted (rcvd_qkey_err); the Q_Key high bit
 *	means "the sender QP's own"; immediate data; inline data; no receive
 *	WQE: dropped and counted (ud_no_recv_wqe), nothing lingers; a
 *	message over the MTU completes with IBV_WC_LOC_LEN_ERR; an AH of
 *	another PD fails the WQE; a receive buffer too small completes with
 *	IBV_WC_LOC_LEN_ERR
 *
 *   srnic_dgram_test uc DEV_A DEV_B MSGS SIZE EXPECT
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
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#define QKEY		0x11111111u
#define GRH_LEN		40
#define BUF_SIZE	(1024 * 1024)

static int tap_n, tap_failed;

static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_failed++;
}

static void die(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One end: a device, its RoCEv2 IPv4 GID, a PD, CQs, a buffer. */
struct end {
	const char *name;
	struct ibv_context *ctx;
	int gid_index;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	__u8 *buf;
	struct ibv_qp *qp;
	enum ibv_mtu mtu;
};

static void end_open(struct end *e, const char *name)
{
	struct ibv_device **list;
	struct ibv_port_attr pa;
	int i, n;

	e->name = name;
	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list");
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			e->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!e->ctx)
		die(name);
	e->gid_index = -1;
	for (i = 0; i < 16 && e->gid_index < 0; i++) {
		if (ibv_query_gid(e->ctx, 1, i, &e->gid))
			break;
		if (e->gid.raw[10] == 0xff && e->gid.raw[11] == 0xff)
			e->gid_index = i;
	}
	if (e->gid_index < 0) {
		errno = ENOENT;
		die("no IPv4 RoCEv2 GID");
	}
	if (ibv_query_port(e->ctx, 1, &pa))
		die("ibv_query_port");
	e->mtu = pa.active_mtu;
	e->pd = ibv_alloc_pd(e->ctx);
	e->scq = ibv_create_cq(e->ctx, 1024, NULL, NULL, 0);
	e->rcq = ibv_create_cq(e->ctx, 1024, NULL, NULL, 0);
	e->buf = aligned_alloc(4096, BUF_SIZE);
	if (!e->pd || !e->scq || !e->rcq || !e->buf)
		die("resources");
	memset(e->buf, 0, BUF_SIZE);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!e->mr)
		die("ibv_reg_mr");
}

static __u64 hw_counter(const struct end *e, const char *name)
{
	char path[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", e->name,
		 name);
	f = fopen(path, "r");
	if (!f)
		return ~0ULL;
	if (fscanf(f, "%llu", &v) != 1)
		v = ~0ULL;
	fclose(f);
	return v;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Wait up to @ms for one completion; 0 if none came. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	long long end = now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		usleep(200);
	} while (now_ms() < end);
	return 0;
}

static struct ibv_qp *qp_create(struct end *e, enum ibv_qp_type type,
				__u32 depth)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->scq, .recv_cq = e->rcq, .qp_type = type,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &ia);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

static void ud_ready(struct ibv_qp *qp, __u32 qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		die("UD to INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("UD to RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 7;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD to RTS");
}

static struct ibv_ah *ah_to(struct ibv_pd *pd, const struct end *from,
			    const struct end *to)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = to->gid, .sgid_index = from->gid_index,
			 .hop_limit = 64 },
	};

	return ibv_create_ah(pd, &aa);
}

static void post_recv(struct end *e, struct ibv_qp *qp, __u64 id,
		      __u32 off, __u32 len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + off, .length = len,
			       .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("ibv_post_recv");
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

static void fill(__u8 *p, __u32 len, __u32 seed)
{
	__u32 i;

	for (i = 0; i < len; i++)
		p[i] = (__u8)(seed * 131 + i * 7 + (i >> 8));
}

static int check(const __u8 *p, __u32 len, __u32 seed)
{
	__u32 i;

	for (i = 0; i < len; i++)
		if (p[i] != (__u8)(seed * 131 + i * 7 + (i >> 8)))
			return 0;
	return 1;
}

/* Send one datagram A -> B; the send completion's status, or -1. */
static int ud_one(struct end *a, struct ibv_qp *qa, struct ibv_ah *ah,
		  struct end *b, __u32 qkey, __u32 len, int flags,
		  __u32 imm)
{
	struct ibv_wc wc;

	fill(a->buf, len, len);
	if (ud_send(a, qa, ah, b->qp->qp_num, qkey, 0, len, flags, imm))
		return -1;
	if (!poll_one(a->scq, &wc, 2000))
		return -1;
	return wc.status;
}

static void test_ud(struct end *a, struct end *b)
{
	__u32 mtu = 128u << a->mtu, len = 200;
	struct ibv_qp *qa = qp_create(a, IBV_QPT_UD, 64);
	struct ibv_ah *ah = ah_to(a->pd, a, b);
	struct ibv_pd *pd2 = ibv_alloc_pd(a->ctx);
	struct ibv_ah *ah2 = pd2 ? ah_to(pd2, a, b) : NULL;
	__u64 before;
	struct ibv_wc wc;
	struct in_addr sa;
	int st, got, ok;

	if (!ah || !ah2)
		die("ibv_create_ah");
	b->qp = qp_create(b, IBV_QPT_UD, 64);
	ud_ready(qa, 0x22222222);
	ud_ready(b->qp, QKEY);

	/* A datagram, its GRH area and completion. */
	post_recv(b, b->qp, 1, 0, GRH_LEN + 4096);
	st = ud_one(a, qa, ah, b, QKEY, len, 0, 0);
	got = poll_one(b->rcq, &wc, 2000);
	memcpy(&sa, b->buf + 20 + 12, 4);
	ok = st == IBV_WC_SUCCESS && got && wc.status == IBV_WC_SUCCESS &&
	     wc.byte_len == GRH_LEN + len && wc.src_qp == qa->qp_num &&
	     (wc.wc_flags & IBV_WC_GRH) && wc.opcode == IBV_WC_RECV &&
	     !(wc.wc_flags & IBV_WC_WITH_IMM) &&
	     (b->buf[20] >> 4) == 4 && b->buf[20 + 9] == 17 &&
	     !memcmp(&sa, &a->gid.raw[12], 4) &&
	     check(b->buf + GRH_LEN, len, len);
	tap(ok, "UD: %u B after the GRH area (IPv4 hdr of %s), len %u, src_qp %u, WC_GRH",
	    len, inet_ntoa(sa), got ? wc.byte_len : 0, got ? wc.src_qp : 0);

	/* A Q_Key mismatch is dropped and counted; the WQE stays posted. */
	before = hw_counter(b, "rcvd_qkey_err");
	post_recv(b, b->qp, 2, 0, GRH_LEN + 4096);
	st = ud_one(a, qa, ah, b, QKEY + 1, len, 0, 0);
	got = poll_one(b->rcq, &wc, 300);
	tap(st == IBV_WC_SUCCESS && !got &&
	    hw_counter(b, "rcvd_qkey_err") == before + 1,
	    "UD: a Q_Key mismatch is dropped, counted in rcvd_qkey_err (%llu -> %llu), no completion",
	    (unsigned long long)before,
	    (unsigned long long)hw_counter(b, "rcvd_qkey_err"));

	/* High bit: the sender QP's Q_Key (0x22222222: mismatch). */
	before = hw_counter(b, "rcvd_qkey_err");
	st = ud_one(a, qa, ah, b, 0x80000000u, len, 0, 0);
	got = poll_one(b->rcq, &wc, 300);
	ok = !got && hw_counter(b, "rcvd_qkey_err") == before + 1;
	{
		struct ibv_qp_attr qa_attr = { .qkey = QKEY };

		ibv_modify_qp(qa, &qa_attr, IBV_QP_QKEY);
	}
	st = ud_one(a, qa, ah, b, 0x80000000u, len, 0, 0);
	got = poll_one(b->rcq, &wc, 2000);
	tap(ok && st == IBV_WC_SUCCESS && got && wc.wr_id == 2 &&
	    wc.status == IBV_WC_SUCCESS,
	    "UD: a Q_Key with the high bit set uses the sender QP's own (refused, then accepted)");

	/* Immediate data and inline data. */
	post_recv(b, b->qp, 3, 0, GRH_LEN + 4096);
	st = ud_one(a, qa, ah, b, QKEY, 48, IBV_SEND_INLINE, 0xabcd1234);
	got = poll_one(b->rcq, &wc, 2000);
	tap(st == IBV_WC_SUCCESS && got && wc.status == IBV_WC_SUCCESS &&
	    (wc.wc_flags & IBV_WC_WITH_IMM) &&
	    ntohl(wc.imm_data) == 0xabcd1234 && wc.byte_len == GRH_LEN + 48 &&
	    check(b->buf + GRH_LEN, 48, 48),
	    "UD: Send with Immediate, inline data: imm and bytes arrive");

	/* Zero bytes. */
	post_recv(b, b->qp, 4, 0, GRH_LEN + 4096);
	st = ud_one(a, qa, ah, b, QKEY, 0, 0, 0);
	got = poll_one(b->rcq, &wc, 2000);
	tap(st == IBV_WC_SUCCESS && got && wc.status == IBV_WC_SUCCESS &&
	    wc.byte_len == GRH_LEN,
	    "UD: a zero-length datagram completes with byte_len 40");

	/* No receive WQE: dropped, counted, nothing lingers. */
	before = hw_counter(b, "ud_no_recv_wqe");
	st = ud_one(a, qa, ah, b, QKEY, len, 0, 0);
	usleep(300000);
	post_recv(b, b->qp, 5, 0, GRH_LEN + 4096);
	got = poll_one(b->rcq, &wc, 300);
	tap(st == IBV_WC_SUCCESS && !got &&
	    hw_counter(b, "ud_no_recv_wqe") == before + 1,
	    "UD: with no receive WQE the datagram is dropped and counted in ud_no_recv_wqe");
	st = ud_one(a, qa, ah, b, QKEY, len, 0, 0);
	got = poll_one(b->rcq, &wc, 2000);
	tap(got && wc.wr_id == 5 && wc.status == IBV_WC_SUCCESS,
	    "UD: the next datagram takes the receive WQE posted later");

	/* Too long for the receive buffer: IBV_WC_LOC_LEN_ERR there. */
	post_recv(b, b->qp, 6, 0, GRH_LEN + 16);
	st = ud_one(a, qa, ah, b, QKEY, 64, 0, 0);
	got = poll_one(b->rcq, &wc, 2000);
	tap(st == IBV_WC_SUCCESS && got && wc.wr_id == 6 &&
	    wc.status == IBV_WC_LOC_LEN_ERR,
	    "UD: a datagram longer than the receive buffer completes it with IBV_WC_LOC_LEN_ERR (%s)",
	    got ? ibv_wc_status_str(wc.status) : "no completion");

	/* Over the MTU: IBV_WC_LOC_LEN_ERR at the sender. */
	st = ud_one(a, qa, ah, b, QKEY, mtu + 4, 0, 0);
	tap(st == IBV_WC_LOC_LEN_ERR,
	    "UD: a message over the path MTU (%u) completes with IBV_WC_LOC_LEN_ERR (%s)",
	    mtu, st < 0 ? "none" : ibv_wc_status_str(st));
	ibv_destroy_qp(qa);

	/* An AH of another PD. */
	qa = qp_create(a, IBV_QPT_UD, 64);
	ud_ready(qa, QKEY);
	st = ud_one(a, qa, ah2, b, QKEY, len, 0, 0);
	tap(st > 0, "UD: an AH of another PD fails the WQE (%s)",
	    st < 0 ? "no completion" : ibv_wc_status_str(st));
	ibv_destroy_qp(qa);
	ibv_destroy_qp(b->qp);
	b->qp = NULL;
	ibv_destroy_ah(ah);
	ibv_destroy_ah(ah2);
	ibv_dealloc_pd(pd2);
}

static void uc_connect(struct ibv_qp *qp, const struct end *self,
		       const struct end *peer, __u32 dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("UC to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = self->mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = 100;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = self->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		die("UC to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 100;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UC to RTS");
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
	    !check(b->buf + boff + 4, size - 4, s))
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
	__u64 before = hw_counter(b, "uc_msgs_dropped");
	struct uc_stats st = { .first = 1 };
	__u32 slots = 64, seq, done = 0, i;
	struct ibv_qp *qa;
	long long quiet;
	struct ibv_wc wc;

	if ((__u64)size * slots * 2 > BUF_SIZE || size < 8 || msgs > 1000) {
		errno = EINVAL;
		die("MSGS over 1000 or SIZE out of range");
	}
	qa = qp_create(a, IBV_QPT_UC, 128);
	b->qp = qp_create(b, IBV_QPT_UC, 1024);
	uc_connect(qa, a, b, b->qp->qp_num);
	uc_connect(b->qp, b, a, qa->qp_num);
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
			if (!poll_one(a->scq, &wc, 2000))
				die("UC send completion");
			if (wc.status != IBV_WC_SUCCESS)
				st.errors++;
			done++;
		}
		fill(a->buf + off + 4, size - 4, seq);
		memcpy(a->buf + off, &seq, sizeof(seq));
		if (ibv_post_send(qa, &wr, &bad))
			die("ibv_post_send");
		usleep(500);
		while (ibv_poll_cq(b->rcq, 1, &wc) == 1)
			uc_recv(b, &wc, size, slots, &st);
	}
	while (done < msgs) {
		if (!poll_one(a->scq, &wc, 2000))
			die("UC send completion");
		if (wc.status != IBV_WC_SUCCESS)
			st.errors++;
		done++;
	}
	/* Whatever is still on its way. */
	quiet = now_ms() + 500;
	while (now_ms() < quiet) {
		if (ibv_poll_cq(b->rcq, 1, &wc) != 1) {
			usleep(1000);
			continue;
		}
		quiet = now_ms() + 500;
		uc_recv(b, &wc, size, slots, &st);
	}
	printf("# UC: %u x %u B sent, %u delivered, %u damaged, %u late, %u errors, lost +%llu\n",
	       msgs, size, st.delivered, st.damaged, st.disorder, st.errors,
	       (unsigned long long)(hw_counter(b, "uc_msgs_dropped") - before));
	tap(!st.damaged && !st.disorder && !st.errors && st.delivered,
	    "UC: every delivered message intact and in order, no error completion");
	if (expect_all)
		tap(st.delivered == msgs,
		    "UC: on a clean link every message arrives (%u of %u)",
		    st.delivered, msgs);
	else
		tap(st.delivered < msgs &&
		    hw_counter(b, "uc_msgs_dropped") > before,
		    "UC: on a lossy link messages with a PSN gap are dropped (%u of %u delivered) and counted",
		    st.delivered, msgs);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(b->qp);
	b->qp = NULL;
}

int main(int argc, char **argv)
{
	struct end a = {}, b = {};

	if (argc < 4) {
		fprintf(stderr, "usage: %s ud DEV_A DEV_B | uc DEV_A DEV_B MSGS SIZE all|loss\n",
			argv[0]);
		return 2;
	}
	end_open(&a, argv[2]);
	end_open(&b, argv[3]);
	if (!strcmp(argv[1], "ud")) {
		test_ud(&a, &b);
	} else if (!strcmp(argv[1], "uc") && argc == 7) {
		test_uc(&a, &b, strtoul(argv[4], NULL, 0),
			strtoul(argv[5], NULL, 0), !strcmp(argv[6], "all"));
	} else {
		fprintf(stderr, "unknown mode %s\n", argv[1]);
		return 2;
	}
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
