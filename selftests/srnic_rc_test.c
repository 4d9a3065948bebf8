// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_rc_test: RC data-path checks through plain libibverbs.
 *
 * Two processes joined by TCP (the server listens), or one process with
 * both ends on one device (--loop: two threads joined by a socketpair):
 *
 *   srnic_rc_test [OPTIONS] --server SUBCOMMAND
 *   srnic_rc_test [OPTIONS] --connect ADDR SUBCOMMAND
 *   srnic_rc_test [OPTIONS] --loop SUBCOMMAND
 *
 * The client drives; the server takes the test parameters from the client.
 * Subcommands (the client, or the --loop run, prints one summary line):
 *
 *   order      K RDMA Writes fill the server's buffer with generation byte
 *              g, then a Write with Immediate carries g; on its CQE the
 *              server checks that every byte is g, then acks with a Send.
 *   integrity  per chunk: Write random data, Read it back and compare;
 *              Send it and let the server checksum what it received.
 *   retry      Write to a peer QP that was destroyed / moved to ERR:
 *              expect IBV_WC_RETRY_EXC_ERR.
 *   rnr        Send with no receive posted: rnr_retry 7 succeeds once the
 *              receive is posted; rnr_retry 0 gives IBV_WC_RNR_RETRY_EXC_ERR.
 *   access     Writes/Reads outside what an MR allows: expect
 *              IBV_WC_REM_ACCESS_ERR and the target memory unchanged.
 *   fair       the fenced-QP scenario: QP1 posts 100 WRs, the 10th fenced
 *              behind the 9th, a Read (whose responses the test set-up
 *              drops for a while); QP2 streams Writes meanwhile and must keep at
 *              least 80% of the throughput it has alone; QP1's WRs then
 *              complete in order and the fence held (the fenced Write
 *              carries what the Read fetched).
 *   scribble   (--loop only) write garbage into a victim QP's send ring
 *              (the rdma_rxe ABI ring, mmapped from the uverbs device) and
 *              ring the doorbell; a healthy QP pair must keep working.
 *
 * Exit status: 0 pass, 1 fail, 4 skip (with the reason on stdout).
 *
 * Adding an RC test: write its two ends, NAME_server() and NAME_client(),
 * each an int (*)(struct role *r) returning ST_EXIT_PASS/FAIL/SKIP, and
 * append one row to rc_tests[] at the end of this file:
 * { .name = "NAME", .server = NAME_server, .client = NAME_client }.
 * order_server()/order_client() show the shape: conn_create() makes a QP,
 * conn_setup() swaps QPN, PSN, GID and MRs with the peer over r->ch and
 * brings the QP to RTS, st_chan_sync(&r->ch) is a barrier, both ends end
 * with final_verdict(), and the client prints the one summary line.
 * Append rows, never insert: a test's number is its place in the table.
 * A new option is a struct params field (and params_to_wire/_from_wire,
 * NPARAMS), a num_opts[] row and a help_text[] line. What is not RC
 * specific (devices, QPs, work requests, TAP, the rendezvous) lives in
 * lib/srnic_test.h.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "srnic_test.h"

#define HELLO_MAGIC	0x53524354u	/* "SRCT" */
#define HELLO_VERSION	1
#define PEER_DONE_GRACE_S 5		/* see wait_cqe_ms() */

/* Test parameters: the client's are sent to the server in the hello. */
struct params {
	__u32 test;
	__u32 gens;		/* order */
	__u32 writes;	/* order: K */
	__u32 size;		/* order: bytes per write */
	__u32 imm_len;	/* order: payload of the Write with Immediate */
	__u64 bytes;		/* integrity */
	__u32 chunk;		/* integrity */
	__u32 rounds;	/* scribble */
	__s32 timeout;	/* local ACK timeout exponent, -1: per test */
	__s32 retry_cnt;	/* -1: per test */
	__s32 min_rnr_timer;	/* -1: per test */
	__u32 rnr_delay_ms;	/* rnr: when the receive is posted */
	__u64 seed;
};

#define NPARAMS 13	/* fields of struct params on the wire */

static const char *test_name(__u64 id);

struct options {
	const char *dev;
	int gid_index;		/* -1: the first RoCEv2 IPv4 GID */
	int mtu;		/* bytes; 0: the port's active MTU */
	const char *port;
	bool server, loop;
	const char *connect;
	int cq_wait_s;
	const char *scribble_mode;
	bool strict;		/* scribble: a stalled victim fails */
	bool no_fence;		/* fence: leave IBV_SEND_FENCE off */
	int idle_ms;		/* xfer: the client's pause after each cell */
	int xfer_max;		/* xfer: the largest size class run */
	int window_ms;		/* fair: each measuring window */
	int verbose;
	struct params p;
};

/* One side of a test: the client drives, the server follows. */
struct role {
	const char *name;
	bool server;
	bool quiet;		/* the --loop server: no summary line */
	struct st_chan ch;	/* the control channel to the peer */
	struct st_dev *dev;
	struct ibv_pd *pd;
	struct params p;
	int cq_wait_ms;
	int verbose;
	__u64 send_ops;		/* QPs get the ibv_wr_* API for these */
	__u8 rd_atomic;		/* max_rd_atomic/max_dest_rd_atomic; 0: 16 */
};

struct conn {
	struct role *r;
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	__u32 psn;
	bool armed;
	bool shared_cq;		/* the CQ belongs to another conn */
};

struct qp_params {
	__u8 timeout, retry_cnt, rnr_retry, min_rnr_timer;
};

static struct options opt = {
	.gid_index = -1,
	.port = "18515",
	.cq_wait_s = 30,
	.scribble_mode = "mixed",
	.window_ms = 2000,
	.xfer_max = 4 << 20,
	.p = {
		.gens = 10000, .writes = 4, .size = 16384, .imm_len = 0,
		.bytes = 256ull << 20, .chunk = 1u << 20, .rounds = 1000,
		.timeout = -1, .retry_cnt = -1, .min_rnr_timer = -1,
		.rnr_delay_ms = 100,
	},
};

/* SIGTERM/SIGINT (e.g. from timeout(1)): stop, report what was done. */
static int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
}

static bool stopped(void)
{
	return __atomic_load_n(&stop_flag, __ATOMIC_RELAXED);
}

/* A summary line built piece by piece. */
struct line {
	char buf[1024];
	size_t len;
};

#define line_add(l, ...)						\
	do {								\
		struct line *__l = (l);					\
		size_t __room = sizeof(__l->buf) - __l->len;		\
		int __n = snprintf(__l->buf + __l->len, __room,		\
				   __VA_ARGS__);			\
									\
		if (__n > 0)						\
			__l->len += (size_t)__n < __room ? (size_t)__n :	\
				    __room - 1;				\
	} while (0)

static void line_print(struct line *l)
{
	flockfile(stdout);
	puts(l->buf);
	fflush(stdout);
	funlockfile(stdout);
}

/* --- the hello: the client's parameters ---------------------------------- */

static void params_to_wire(const struct params *p, __u64 *w)
{
	w[0] = p->test;
	w[1] = p->gens;
	w[2] = p->writes;
	w[3] = p->size;
	w[4] = p->imm_len;
	w[5] = p->bytes;
	w[6] = p->chunk;
	w[7] = p->rounds;
	w[8] = (__u32)p->timeout;
	w[9] = (__u32)p->retry_cnt;
	w[10] = (__u32)p->min_rnr_timer;
	w[11] = p->rnr_delay_ms;
	w[12] = p->seed;
}

static void params_from_wire(struct params *p, const __u64 *w)
{
	p->test = w[0];
	p->gens = w[1];
	p->writes = w[2];
	p->size = w[3];
	p->imm_len = w[4];
	p->bytes = w[5];
	p->chunk = w[6];
	p->rounds = w[7];
	p->timeout = (__s32)w[8];
	p->retry_cnt = (__s32)w[9];
	p->min_rnr_timer = (__s32)w[10];
	p->rnr_delay_ms = w[11];
	p->seed = w[12];
}

/* The client sends its parameters; the server adopts them. */
static int hello(struct role *r)
{
	__u64 w[2 + NPARAMS];

	if (!r->server) {
		w[0] = HELLO_MAGIC;
		w[1] = HELLO_VERSION;
		params_to_wire(&r->p, w + 2);
		return st_chan_send_u64s(&r->ch, w, 2 + NPARAMS);
	}
	if (st_chan_recv_u64s(&r->ch, w, 2 + NPARAMS))
		return -1;
	if (w[0] != HELLO_MAGIC || w[1] != HELLO_VERSION) {
		st_diag(r->name, "peer is not srnic_rc_test version %d", HELLO_VERSION);
		return -1;
	}
	if (w[2] != r->p.test) {
		st_diag(r->name, "peer runs '%s', this side '%s'", test_name(w[2]),
			test_name(r->p.test));
		return -1;
	}
	params_from_wire(&r->p, w + 2);
	return 0;
}

/* --- device, QPs, work requests ------------------------------------------ */

/* 0 ok, 4 skip (no such device), 1 error */
static int dev_open(struct st_dev *d, const struct options *o)
{
	char g[INET6_ADDRSTRLEN];
	int rc;

	rc = st_dev_open(d, o->dev);
	if (rc == -ENODEV) {
		printf("%s: SKIP no RDMA device\n", test_name(o->p.test));
		return ST_EXIT_SKIP;
	}
	if (rc == -ENOENT) {
		printf("%s: SKIP no RDMA device %s\n", test_name(o->p.test),
		       o->dev ? o->dev : "");
		return ST_EXIT_SKIP;
	}
	if (rc) {
		st_diag(NULL, "query device/port: %s", strerror(errno));
		return ST_EXIT_FAIL;
	}
	if (d->port_attr.state != IBV_PORT_ACTIVE)
		st_diag(NULL, "warning: port %d is not ACTIVE (%d)", d->port,
			d->port_attr.state);
	if (st_gid_pick(d, o->gid_index, 0)) {
		st_diag(NULL, "no usable GID%s on %s", o->gid_index >= 0 ?
			" at that index" : " (RoCE v2)",
			ibv_get_device_name(d->ctx->device));
		return ST_EXIT_FAIL;
	}
	if (o->mtu)
		d->mtu = st_mtu_enum(o->mtu);
	if (o->verbose)
		st_diag(NULL, "%s port %d gid[%d] %s mtu %d",
			ibv_get_device_name(d->ctx->device), d->port,
			d->gid_index, st_gid_str(&d->gid, g, sizeof(g)),
			128 << d->mtu);
	return 0;
}

static void conn_destroy(struct conn *c)
{
	if (c->qp)
		ibv_destroy_qp(c->qp);
	if (c->cq && !c->shared_cq)
		ibv_destroy_cq(c->cq);
	if (c->chan && !c->shared_cq)
		ibv_destroy_comp_channel(c->chan);
	memset(c, 0, sizeof(*c));
}

/*
 * An RC QP in INIT, with its own CQ and completion channel, or with those
 * of @cq_from.
 */
static int conn_create_ex(struct conn *c, struct role *r, struct ibv_pd *pd,
			  __u32 sq, __u32 rq,
			  const struct conn *cq_from)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = sq, .max_recv_wr = rq,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	__u64 s = st_rnd_seed((uintptr_t)c, st_now_s() * 1e9);

	memset(c, 0, sizeof(*c));
	c->r = r;
	c->psn = st_rnd_next(&s) & 0xffffff;
	if (cq_from) {
		c->shared_cq = true;
		c->chan = cq_from->chan;
		c->cq = cq_from->cq;
		goto create_qp;
	}
	c->chan = ibv_create_comp_channel(r->dev->ctx);
	if (!c->chan) {
		st_diag(r->name, "create_comp_channel: %s", strerror(errno));
		goto out_destroy;
	}
	if (fcntl(c->chan->fd, F_SETFL,
		  fcntl(c->chan->fd, F_GETFL) | O_NONBLOCK)) {
		st_diag(r->name, "fcntl: %s", strerror(errno));
		goto out_destroy;
	}
	c->cq = ibv_create_cq(r->dev->ctx, sq + rq + 1, NULL, c->chan, 0);
	if (!c->cq) {
		st_diag(r->name, "create_cq %u: %s", sq + rq + 1, strerror(errno));
		goto out_destroy;
	}
create_qp:
	ia.send_cq = c->cq;
	ia.recv_cq = c->cq;
	if (r->send_ops) {
		struct ibv_qp_init_attr_ex iax = {
			.qp_type = ia.qp_type, .cap = ia.cap,
			.send_cq = c->cq, .recv_cq = c->cq, .pd = pd,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.send_ops_flags = r->send_ops,
		};

		c->qp = ibv_create_qp_ex(r->dev->ctx, &iax);
	} else {
		c->qp = ibv_create_qp(pd, &ia);
	}
	if (!c->qp) {
		st_diag(r->name, "create_qp: %s", strerror(errno));
		goto out_destroy;
	}
	if (st_qp_init(c->qp, r->dev->port, IBV_ACCESS_LOCAL_WRITE |
		       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		       IBV_ACCESS_REMOTE_ATOMIC)) {
		st_diag(r->name, "modify_qp INIT: %s", strerror(errno));
		goto out_destroy;
	}
	return 0;

out_destroy:
	conn_destroy(c);
	return -1;
}

static int conn_create(struct conn *c, struct role *r, struct ibv_pd *pd,
		       __u32 sq, __u32 rq)
{
	return conn_create_ex(c, r, pd, sq, rq, NULL);
}

static int conn_connect_qp(struct ibv_qp *qp, struct role *r, __u32 psn,
			   const struct st_peer *pi,
			   const struct qp_params *qpp)
{
	const struct ibv_device_attr *da = &r->dev->attr;
	struct st_path path = {
		.dgid = pi->gid, .sgid_index = r->dev->gid_index,
		.port = r->dev->port, .mtu = r->dev->mtu,
		.dest_qpn = pi->qpn, .rq_psn = pi->psn, .sq_psn = psn,
		.max_dest_rd_atomic = r->rd_atomic ? r->rd_atomic :
				      da->max_qp_rd_atom < 16 ?
				      da->max_qp_rd_atom : 16,
		.min_rnr_timer = qpp->min_rnr_timer,
		.max_rd_atomic = r->rd_atomic ? r->rd_atomic :
				 da->max_qp_init_rd_atom < 16 ?
				 da->max_qp_init_rd_atom : 16,
		.timeout = qpp->timeout, .retry_cnt = qpp->retry_cnt,
		.rnr_retry = qpp->rnr_retry,
	};

	if (st_qp_rtr(qp, &path)) {
		st_diag(r->name, "modify_qp RTR: %s", strerror(errno));
		return -1;
	}
	if (st_qp_rts(qp, &path)) {
		st_diag(r->name, "modify_qp RTS: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void local_info(struct conn *c, struct st_peer *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->qpn = c->qp->qp_num;
	pi->psn = c->psn;
	pi->gid = c->r->dev->gid;
}

/* QP attributes: per-test defaults, overridden by the options. */
static struct qp_params qp_params(const struct params *p, __u8 timeout,
				  __u8 retry_cnt, __u8 rnr_retry,
				  __u8 min_rnr_timer)
{
	struct qp_params q = { timeout, retry_cnt, rnr_retry, min_rnr_timer };

	if (p->timeout >= 0)
		q.timeout = p->timeout;
	if (p->retry_cnt >= 0)
		q.retry_cnt = p->retry_cnt;
	if (p->min_rnr_timer >= 0)
		q.min_rnr_timer = p->min_rnr_timer;
	return q;
}

/* Exchange info (with the MRs in @pi) and bring the QP to RTS. */
static int conn_setup(struct conn *c, struct st_peer *mine,
		      struct st_peer *theirs, const struct qp_params *qpp)
{
	char g[INET6_ADDRSTRLEN];

	mine->qpn = c->qp->qp_num;
	mine->psn = c->psn;
	mine->gid = c->r->dev->gid;
	if (st_chan_exchange(&c->r->ch, mine, theirs))
		return -1;
	if (c->r->verbose)
		st_diag(c->r->name, "qpn %#x -> peer qpn %#x psn %#x gid %s", mine->qpn,
			theirs->qpn, theirs->psn,
			st_gid_str(&theirs->gid, g, sizeof(g)));
	return conn_connect_qp(c->qp, c->r, c->psn, theirs, qpp);
}

static int post_recv(struct conn *c, __u64 wr_id, void *buf, __u32 len,
		     __u32 lkey)
{
	int rc = st_post_recv(c->qp, wr_id, buf, len, lkey);

	if (rc)
		st_diag(c->r->name, "%s: %s", __func__, strerror(rc));
	return rc;
}

static int post_send1(struct conn *c, enum ibv_wr_opcode op, __u64 wr_id,
		      void *buf, __u32 len, __u32 lkey, __u64 raddr,
		      __u32 rkey, __u32 imm)
{
	int rc = st_post_send(c->qp, op, wr_id, buf, len, lkey, raddr, rkey,
			      imm, IBV_SEND_SIGNALED);

	if (rc)
		st_diag(c->r->name, "post_send: %s", strerror(rc));
	return rc;
}

/*
 * One completion, waiting up to the role's CQ timeout on the completion
 * channel.  Returns 0, or -1 on timeout or error.  While waiting, a closed
 * control channel (the peer failed) ends the wait at once, a message from
 * the peer (it is done, or gave up) within PEER_DONE_GRACE_S.
 */
static int wait_cqe_ms(struct conn *c, struct ibv_wc *wc, int ms)
{
	struct pollfd pfd[2] = {
		{ .fd = c->chan->fd, .events = POLLIN },
		{ .fd = c->r->ch.fd, .events = POLLIN },
	};
	double end = st_now_s() + ms / 1000.0;
	int n, nfds = c->r->ch.fd >= 0 ? 2 : 1, left;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	char b;

	for (;;) {
		n = ibv_poll_cq(c->cq, 1, wc);
		if (n > 0)
			return 0;
		if (n < 0) {
			st_diag(c->r->name, "poll_cq failed");
			return -1;
		}
		if (!c->armed) {
			if (ibv_req_notify_cq(c->cq, 0)) {
				st_diag(c->r->name, "req_notify_cq failed");
				return -1;
			}
			c->armed = true;
			continue;	/* a CQE may have raced the arming */
		}
		left = (end - st_now_s()) * 1000;
		if (left <= 0)
			return -1;
		if (stopped()) {
			st_diag(c->r->name, "interrupted");
			return -1;
		}
		n = poll(pfd, nfds, left);
		if (n < 0 && errno != EINTR)
			return -1;
		if (nfds == 2 && (pfd[1].revents & (POLLIN | POLLHUP))) {
			if (recv(c->r->ch.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
				st_diag(c->r->name, "peer closed the control channel");
				return -1;
			}
			/*
			 * The peer went on to its report: either this CQE
			 * is about to arrive, or the peer stopped early.
			 */
			nfds = 1;
			if (end > st_now_s() + PEER_DONE_GRACE_S)
				end = st_now_s() + PEER_DONE_GRACE_S;
		}
		if (pfd[0].revents & POLLIN &&
		    !ibv_get_cq_event(c->chan, &ev_cq, &ev_ctx)) {
			ibv_ack_cq_events(ev_cq, 1);
			c->armed = false;
		}
	}
}

static int wait_cqe(struct conn *c, struct ibv_wc *wc)
{
	int rc = wait_cqe_ms(c, wc, c->r->cq_wait_ms);

	if (rc && !stopped())
		st_diag(c->r->name, "no completion within %d ms", c->r->cq_wait_ms);
	return rc;
}

/* Wait for a successful completion of @wr_id; anything else fails. */
static int expect_ok(struct conn *c, __u64 wr_id, const char *what)
{
	struct ibv_wc wc;

	if (wait_cqe(c, &wc)) {
		st_diag(c->r->name, "%s: no completion", what);
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != wr_id) {
		st_diag(c->r->name, "%s: wr_id %#llx status %s (%d) vendor_err %#x",
			what, (unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status), wc.status, wc.vendor_err);
		return -1;
	}
	return 0;
}

static struct ibv_mr *reg(struct role *r, struct ibv_pd *pd, void *buf,
			  size_t len, int access)
{
	return st_mr_reg(pd, buf, len, access, r->name);
}

/* The end-of-test verdict both sides agree on. */
static int final_verdict(struct role *r, __u64 my_fail, __u64 *peer)
{
	if (st_chan_swap(&r->ch, &my_fail, peer, 1))
		return ST_EXIT_FAIL;
	return my_fail || *peer ? ST_EXIT_FAIL : ST_EXIT_PASS;
}

/* --- order ---------------------------------------------------------------- */

enum { WR_ACK = 1, WR_IMM, WR_WRITE, WR_RECV, WR_READ, WR_SEND, WR_PROBE };

static inline __u8 gen_byte(__u32 g)
{
	return 1 + g % 251;
}

/* Bytes of buf[0..len) that are not @b. */
static __u64 count_not(const __u8 *buf, size_t len, __u8 b, size_t *first)
{
	__u64 pat = 0x0101010101010101ull * b, w, n = 0;
	size_t i = 0, j;

	*first = len;
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, buf + i, 8);
		if (w == pat)
			continue;
		for (j = i; j < i + 8; j++)
			if (buf[j] != b) {
				if (*first == len)
					*first = j;
				n++;
			}
	}
	for (; i < len; i++)
		if (buf[i] != b) {
			if (*first == len)
				*first = i;
			n++;
		}
	return n;
}

static int order_server(struct role *r)
{
	const struct params *p = &r->p;
	size_t len = (size_t)p->writes * p->size, first;
	__u64 stale = 0, bad_gens = 0, errors = 0, peer_fail, n;
	struct qp_params qpp = qp_params(p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs;
	__u32 g, imm, acks_out = 0;
	struct ibv_mr *mr = NULL;
	struct ibv_wc wc;
	struct conn c;
	__u8 *buf;
	int rc = ST_EXIT_FAIL;

	buf = st_buf_alloc(len, 0);
	if (!buf || conn_create(&c, r, r->pd, 4, 4))
		goto out_free;
	mr = reg(r, r->pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
		 IBV_ACCESS_REMOTE_WRITE);
	if (!mr || post_recv(&c, WR_RECV, NULL, 0, 0))
		goto out_destroy;
	st_peer_add_mr(&mine, mr);
	if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch))
		goto out_destroy;

	for (g = 1; g <= p->gens && !errors; ) {
		if (wait_cqe(&c, &wc)) {
			st_diag(r->name, "generation %u: no Write with Immediate", g);
			errors++;
			break;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			st_diag(r->name, "generation %u: %s CQE status %s (%d)", g,
				wc.wr_id == WR_ACK ? "ack send" : "recv",
				ibv_wc_status_str(wc.status), wc.status);
			errors++;
			break;
		}
		if (wc.wr_id == WR_ACK) {
			acks_out--;
			continue;
		}
		imm = ntohl(wc.imm_data);
		if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		    !(wc.wc_flags & IBV_WC_WITH_IMM) || imm != g ||
		    wc.byte_len != p->imm_len) {
			st_diag(r->name, "generation %u: CQE opcode %d flags %#x imm %u",
				g, wc.opcode, wc.wc_flags, imm);
			st_diag(r->name, "byte_len %u; want RECV_RDMA_WITH_IMM imm %u len %u",
				wc.byte_len, g, p->imm_len);
			errors++;
			break;
		}
		n = count_not(buf, len, gen_byte(g), &first);
		if (n) {
			if (bad_gens < 10)
				st_diag(r->name,
					"gen %u: %llu stale bytes, first at %zu: %#x, want %#x",
					g, n, first, buf[first], gen_byte(g));
			stale += n;
			bad_gens++;
		}
		if (post_recv(&c, WR_RECV, NULL, 0, 0) ||
		    post_send1(&c, IBV_WR_SEND_WITH_IMM, WR_ACK, NULL, 0, 0,
			       0, 0, g)) {
			errors++;
			break;
		}
		acks_out++;
		g++;
	}
	while (acks_out && !errors) {
		if (expect_ok(&c, WR_ACK, "ack send"))
			errors++;
		acks_out--;
	}
	{
		__u64 mine_v[3] = { stale, bad_gens, errors }, peer_v[3];

		if (st_chan_swap(&r->ch, mine_v, peer_v, 3))
			goto out_destroy;
	}
	rc = final_verdict(r, stale || bad_gens || errors, &peer_fail);
	if (!r->quiet)
		printf("order(server): %s gens %u stale_bytes %llu bad_gens %llu errors %llu\n",
		       rc ? "FAIL" : "PASS", g - 1, stale, bad_gens,
		       errors);
out_destroy:
	conn_destroy(&c);
	if (mr)
		ibv_dereg_mr(mr);
out_free:
	free(buf);
	return rc;
}

/*
 * The sender of order and awrite: K Writes of generation g, then the
 * notification (a Write with Immediate, or for awrite an RDMA Atomic
 * Write of g into the flag after the data), then wait for its completion
 * and the receiver's Send.
 */
static int order_run(struct role *r, bool aw)
{
	struct line sum = {};
	const struct params *p = &r->p;
	size_t len = (size_t)p->writes * p->size;
	size_t flag_off = (len + 7) & ~(size_t)7;
	struct qp_params qpp = qp_params(p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs;
	struct ibv_send_wr *wrs = NULL, *bad;
	struct ibv_sge *sges = NULL;
	__u64 errors = 0, peer_fail, peer_v[3] = { 0, 0, 1 }, g64;
	struct ibv_mr *mr = NULL;
	struct ibv_qp_ex *qpx = NULL;
	bool got_note, got_ack;
	struct ibv_wc wc;
	double t0, el = 0;
	__u32 g, i;
	struct conn c;
	__u8 *buf;
	int rc = ST_EXIT_FAIL;

	buf = st_buf_alloc(len, 0);
	wrs = calloc(p->writes + 1, sizeof(*wrs));
	sges = calloc(p->writes + 1, sizeof(*sges));
	if (aw)
		r->send_ops = IBV_QP_EX_WITH_RDMA_WRITE |
			      IBV_QP_EX_WITH_ATOMIC_WRITE;
	if (!buf || !wrs || !sges ||
	    conn_create(&c, r, r->pd, p->writes + 2, 4))
		goto out_free;
	if (aw)
		qpx = ibv_qp_to_qp_ex(c.qp);
	mr = reg(r, r->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if ((aw && !qpx) || !mr || post_recv(&c, WR_ACK, NULL, 0, 0) ||
	    conn_setup(&c, &mine, &theirs, &qpp))
		goto out_destroy;
	if (theirs.nmr < 1 || theirs.mr[0].len < (aw ? flag_off + 8 : len)) {
		st_diag(r->name, "peer buffer too small");
		goto out_destroy;
	}
	if (st_chan_sync(&r->ch))
		goto out_destroy;

	t0 = st_now_s();
	for (g = 1; g <= p->gens && !errors && !stopped(); g++) {
		if (r->verbose && g % 1000 == 0)
			st_diag(r->name, "generation %u, %.0f gens/s", g,
				g / (st_now_s() - t0));
		memset(buf, gen_byte(g), len);
		for (i = 0; i < p->writes; i++) {
			st_wr_init(&wrs[i], &sges[i], IBV_WR_RDMA_WRITE,
				   WR_WRITE, buf + (size_t)i * p->size, p->size,
				   mr->lkey, theirs.mr[0].addr +
				   (size_t)i * p->size, theirs.mr[0].rkey, 0);
			wrs[i].next = &wrs[i + 1];
		}
		if (aw) {
			wrs[i - 1].next = NULL;
		} else {
			st_wr_init(&wrs[i], &sges[i], IBV_WR_RDMA_WRITE_WITH_IMM,
				   WR_IMM, p->imm_len ? buf : NULL, p->imm_len,
				   mr->lkey, theirs.mr[0].addr, theirs.mr[0].rkey,
				   IBV_SEND_SIGNALED);
			wrs[i].imm_data = htonl(g);
		}
		i = ibv_post_send(c.qp, wrs, &bad);
		if (!i && aw) {
			g64 = g;
			ibv_wr_start(qpx);
			qpx->wr_id = WR_IMM;
			qpx->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_atomic_write(qpx, theirs.mr[0].rkey,
					    theirs.mr[0].addr + flag_off, &g64);
			i = ibv_wr_complete(qpx);
		}
		if (i) {
			st_diag(r->name, "generation %u: post: %s", g, strerror(i));
			errors++;
			break;
		}
		got_note = false;
		got_ack = false;
		while (!got_note || !got_ack) {
			if (wait_cqe(&c, &wc)) {
				st_diag(r->name, "generation %u: waiting for the %s", g,
					got_note ? "ack" : aw ?
					"Atomic Write completion" :
					"Write completion");
				errors++;
				break;
			}
			if (wc.status != IBV_WC_SUCCESS) {
				st_diag(r->name, "generation %u: wr_id %u status %s (%d)",
					g, (unsigned int)wc.wr_id,
					ibv_wc_status_str(wc.status), wc.status);
				errors++;
				break;
			}
			if (wc.wr_id == WR_IMM) {
				if (aw && wc.opcode != IBV_WC_ATOMIC_WRITE) {
					st_diag(r->name, "Atomic Write CQE opcode %d",
						wc.opcode);
					errors++;
					break;
				}
				got_note = true;
			} else if (wc.wr_id == WR_ACK) {
				if (ntohl(wc.imm_data) != g) {
					st_diag(r->name, "ack for %u, expected %u",
						ntohl(wc.imm_data), g);
					errors++;
					break;
				}
				got_ack = true;
				if (post_recv(&c, WR_ACK, NULL, 0, 0)) {
					errors++;
					break;
				}
			}
		}
	}
	el = st_now_s() - t0;
	{
		__u64 mine_v[3] = { 0, 0, errors };

		if (st_chan_swap(&r->ch, mine_v, peer_v, 3))
			goto out_destroy;
	}
	rc = final_verdict(r, errors || stopped(), &peer_fail);
	line_add(&sum, "%s: %s gens %u writes %u x %u B + ",
		 test_name(p->test),
		 stopped() ? "INTERRUPTED" : rc ? "FAIL" : "PASS", g - 1,
		 p->writes, p->size);
	if (aw)
		line_add(&sum, "atomic write");
	else
		line_add(&sum, "imm %u B", p->imm_len);
	line_add(&sum, " stale_bytes %llu bad_gens %llu errors %llu/%llu",
		 peer_v[0], peer_v[1], errors, peer_v[2]);
	line_add(&sum, " elapsed %.2f s %.1f MB/s %.0f gens/s", el,
		 el > 0 ? (g - 1) * (double)len / el / 1e6 : 0,
		 el > 0 ? (g - 1) / el : 0);
	line_print(&sum);
out_destroy:
	conn_destroy(&c);
	if (mr)
		ibv_dereg_mr(mr);
out_free:
	free(sges);
	free(wrs);
	free(buf);
	return rc;
}

/* --- awrite: K Writes, then an RDMA Atomic Write of a flag ------------------ */

/*
 * The seeds' "data before notification" with the notification an RDMA
 * Atomic Write: the receiver gets no CQE at all; it watches an 8-byte flag
 * after the data in its own memory and, when the flag says generation g,
 * every byte before it must be g's.
 */
static int awrite_server(struct role *r)
{
	const struct params *p = &r->p;
	size_t len = (size_t)p->writes * p->size, first;
	__u64 stale = 0, bad_gens = 0, errors = 0, peer_fail, n;
	struct qp_params qpp = qp_params(p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs;
	struct ibv_mr *mr = NULL;
	__u64 *flag, f = 0;
	struct conn c;
	double dl;
	__u8 *buf;
	__u32 g;
	int rc = ST_EXIT_FAIL;

	len = (len + 7) & ~(size_t)7;
	buf = st_buf_alloc(len + sizeof(*flag), 0);
	if (!buf || conn_create(&c, r, r->pd, 4, 4))
		goto out_free;
	flag = (__u64 *)(buf + len);
	mr = reg(r, r->pd, buf, len + sizeof(*flag), IBV_ACCESS_LOCAL_WRITE |
		 IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		goto out_destroy;
	st_peer_add_mr(&mine, mr);
	if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch))
		goto out_destroy;

	for (g = 1; g <= p->gens && !errors; g++) {
		dl = st_now_s() + r->cq_wait_ms / 1000.0;
		while ((f = __atomic_load_n(flag, __ATOMIC_ACQUIRE)) != g) {
			if (f > g || st_now_s() > dl || stopped())
				break;
			sched_yield();
		}
		if (f != g) {
			st_diag(r->name, "generation %u: flag is %llu", g, f);
			errors++;
			break;
		}
		n = count_not(buf, (size_t)p->writes * p->size, gen_byte(g),
			      &first);
		if (n) {
			if (bad_gens < 10)
				st_diag(r->name,
					"gen %u: %llu stale bytes, first at %zu: %#x, want %#x",
					g, n, first, buf[first], gen_byte(g));
			stale += n;
			bad_gens++;
		}
		if (post_send1(&c, IBV_WR_SEND_WITH_IMM, WR_ACK, NULL, 0, 0,
			       0, 0, g) || expect_ok(&c, WR_ACK, "ack send")) {
			errors++;
			break;
		}
	}
	{
		__u64 mine_v[3] = { stale, bad_gens, errors }, peer_v[3];

		if (st_chan_swap(&r->ch, mine_v, peer_v, 3))
			goto out_destroy;
	}
	rc = final_verdict(r, stale || bad_gens || errors, &peer_fail);
	if (!r->quiet)
		printf("awrite(server): %s gens %u stale_bytes %llu bad_gens %llu errors %llu\n",
		       rc ? "FAIL" : "PASS", g - 1, stale, bad_gens, errors);
out_destroy:
	conn_destroy(&c);
	if (mr)
		ibv_dereg_mr(mr);
out_free:
	free(buf);
	return rc;
}

/* --- fence: IBV_SEND_FENCE and max_rd_atomic under load ------------------- */

#define FENCE_READS	8	/* small Reads per generation */
#define FENCE_ATOMICS	4	/* Fetch&Adds per generation */
#define FENCE_RD_ATOMIC	2	/* max_rd_atomic = max_dest_rd_atomic */
#define FENCE_SMALL	64

/*
 * The server only offers memory: X and Y (--size bytes each) and an 8-byte
 * counter. Both ends allow FENCE_RD_ATOMIC Reads/atomics in flight, so a
 * requester that issued more would be refused by the responder.
 */
static int fence_server(struct role *r)
{
	const struct params *p = &r->p;
	size_t len = 2 * (size_t)p->size + 8;
	struct qp_params qpp = qp_params(p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs;
	__u64 peer_fail, cnt, mine_v[3] = { 0, 0, 0 }, peer_v[3];
	struct ibv_mr *mr = NULL;
	struct conn c;
	__u8 *buf;
	int rc = ST_EXIT_FAIL;

	r->rd_atomic = FENCE_RD_ATOMIC;
	buf = st_buf_alloc(len, 0);
	if (!buf || conn_create(&c, r, r->pd, 4, 4))
		goto out_free;
	mr = reg(r, r->pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
		 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		 IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		goto out_destroy;
	st_peer_add_mr(&mine, mr);
	if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch) ||
	    st_chan_swap(&r->ch, mine_v, peer_v, 3))
		goto out_destroy;
	/* The client's generations are done: the counter says how many. */
	memcpy(&cnt, buf + 2 * (size_t)p->size, 8);
	if (cnt != peer_v[0] * FENCE_ATOMICS) {
		st_diag(r->name, "counter %llu after %llu generations, want %llu", cnt,
			peer_v[0], peer_v[0] * FENCE_ATOMICS);
		mine_v[2] = 1;
	}
	if (st_chan_swap(&r->ch, mine_v, peer_v, 3))
		goto out_destroy;
	rc = final_verdict(r, mine_v[2], &peer_fail);
out_destroy:
	conn_destroy(&c);
	if (mr)
		ibv_dereg_mr(mr);
out_free:
	free(buf);
	return rc;
}

/*
 * Each generation g, in one post:
 *   Write g's bytes -> X; Read X -> L; Write L -> Y (FENCE); Read Y -> M;
 *   FENCE_READS Reads of X; FENCE_ATOMICS Fetch&Adds of the counter.
 * The fenced Write may not start before the Read into L completes: if it
 * did, Y (and so M) would hold the previous generation. The burst keeps
 * more Reads/atomics posted than max_rd_atomic allows in flight.
 */
static int fence_client(struct role *r)
{
	enum { NWR = 4 + FENCE_READS + FENCE_ATOMICS };
	struct line sum = {};
	const struct params *p = &r->p;
	size_t sz = p->size, first, len = 4 * sz + FENCE_READS * FENCE_SMALL +
		    FENCE_ATOMICS * 8;
	struct qp_params qpp = qp_params(p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs;
	struct ibv_send_wr wrs[NWR], *bad;
	struct ibv_sge sges[NWR];
	__u64 errors = 0, stale_y = 0, stale_l = 0, bad_small = 0;
	__u64 bad_atomic = 0, peer_fail, peer_v[3] = { 0, 0, 1 }, n, orig;
	__u8 *buf, *w, *l, *m, *small, *orig_buf;
	__u64 raddr, counter;
	struct ibv_mr *mr = NULL;
	__u32 rkey, g, i, k;
	struct ibv_wc wc;
	double t0, el = 0;
	struct conn c;
	int rc = ST_EXIT_FAIL;

	r->rd_atomic = FENCE_RD_ATOMIC;
	buf = st_buf_alloc(len, 0);
	if (!buf || conn_create(&c, r, r->pd, NWR + 2, 4))
		goto out_free;
	w = buf;
	l = w + sz;
	m = l + sz;
	small = m + sz + sz;
	orig_buf = small + FENCE_READS * FENCE_SMALL;
	mr = reg(r, r->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || conn_setup(&c, &mine, &theirs, &qpp))
		goto out_destroy;
	if (theirs.nmr < 1 || theirs.mr[0].len < 2 * sz + 8) {
		st_diag(r->name, "peer buffer too small");
		goto out_destroy;
	}
	raddr = theirs.mr[0].addr;
	rkey = theirs.mr[0].rkey;
	counter = raddr + 2 * sz;
	if (st_chan_sync(&r->ch))
		goto out_destroy;

	t0 = st_now_s();
	for (g = 1; g <= p->gens && !errors && !stopped(); g++) {
		memset(w, gen_byte(g), sz);
		st_wr_init(&wrs[0], &sges[0], IBV_WR_RDMA_WRITE, WR_WRITE, w, sz,
			   mr->lkey, raddr, rkey, 0);
		st_wr_init(&wrs[1], &sges[1], IBV_WR_RDMA_READ, WR_READ, l, sz,
			   mr->lkey, raddr, rkey, 0);
		st_wr_init(&wrs[2], &sges[2], IBV_WR_RDMA_WRITE, WR_WRITE, l, sz,
			   mr->lkey, raddr + sz, rkey,
			   opt.no_fence ? 0 : IBV_SEND_FENCE);
		st_wr_init(&wrs[3], &sges[3], IBV_WR_RDMA_READ, WR_READ, m, sz,
			   mr->lkey, raddr + sz, rkey, 0);
		for (k = 4, i = 0; i < FENCE_READS; i++, k++)
			st_wr_init(&wrs[k], &sges[k], IBV_WR_RDMA_READ, WR_READ,
				   small + i * FENCE_SMALL, FENCE_SMALL, mr->lkey,
				   raddr + i * FENCE_SMALL, rkey, 0);
		for (i = 0; i < FENCE_ATOMICS; i++) {
			st_wr_init(&wrs[k], &sges[k], IBV_WR_ATOMIC_FETCH_AND_ADD,
				   WR_PROBE, orig_buf + i * 8, 8, mr->lkey, 0, 0,
				   0);
			wrs[k].wr.atomic.remote_addr = counter;
			wrs[k].wr.atomic.rkey = rkey;
			wrs[k].wr.atomic.compare_add = 1;
			k++;
		}
		wrs[k - 1].send_flags |= IBV_SEND_SIGNALED;
		for (i = 0; i + 1 < k; i++)
			wrs[i].next = &wrs[i + 1];
		i = ibv_post_send(c.qp, wrs, &bad);
		if (i) {
			st_diag(r->name, "generation %u: post_send: %s", g, strerror(i));
			errors++;
			break;
		}
		if (wait_cqe(&c, &wc) || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != WR_PROBE) {
			st_diag(r->name, "generation %u: completion %s (%d) wr_id %u", g,
				ibv_wc_status_str(wc.status), wc.status,
				(unsigned int)wc.wr_id);
			errors++;
			break;
		}
		n = count_not(l, sz, gen_byte(g), &first);
		stale_l += n;
		n = count_not(m, sz, gen_byte(g), &first);
		if (n && stale_y < 10 * sz)
			st_diag(r->name,
				"gen %u: Y has %llu stale bytes, first at %zu: %#x, want %#x",
				g, n, first, m[first], gen_byte(g));
		stale_y += n;
		bad_small += count_not(small, FENCE_READS * FENCE_SMALL,
				       gen_byte(g), &first);
		for (i = 0; i < FENCE_ATOMICS; i++) {
			memcpy(&orig, orig_buf + i * 8, 8);
			if (orig != (__u64)(g - 1) * FENCE_ATOMICS + i) {
				if (bad_atomic < 10)
					st_diag(r->name, "gen %u: fetch_add %u returned %llu",
						g, i, orig);
				bad_atomic++;
			}
		}
	}
	el = st_now_s() - t0;
	{
		__u64 mine_v[3] = { g - 1, 0, 0 };

		if (st_chan_swap(&r->ch, mine_v, peer_v, 3))
			goto out_destroy;
		mine_v[2] = errors || stale_l || stale_y || bad_small ||
			    bad_atomic;
		if (st_chan_swap(&r->ch, mine_v, peer_v, 3))
			goto out_destroy;
	}
	rc = final_verdict(r, errors || stale_l || stale_y || bad_small ||
			   bad_atomic || stopped(), &peer_fail);
	line_add(&sum, "fence: %s gens %u %s rd_atomic %u",
		 stopped() ? "INTERRUPTED" : rc ? "FAIL" : "PASS", g - 1,
		 opt.no_fence ? "NO FENCE" : "fenced", FENCE_RD_ATOMIC);
	line_add(&sum, " stale_bytes %llu (read %llu) bad_reads %llu",
		 stale_y, stale_l, bad_small);
	line_add(&sum, " bad_atomics %llu errors %llu counter %s", bad_atomic,
		 errors, peer_v[2] ? "WRONG" : "ok");
	line_add(&sum, " elapsed %.2f s %.0f gens/s", el,
		 el > 0 ? (g - 1) / el : 0);
	line_print(&sum);
out_destroy:
	conn_destroy(&c);
	if (mr)
		ibv_dereg_mr(mr);
out_free:
	free(buf);
	return rc;
}

/* --- solicit: solicited-only CQ events ----------------------------------- */

/* A completion event within @ms? Consumes it (the CQ is then unarmed). */
static int chan_event(struct conn *c, int ms)
{
	struct pollfd pfd = { .fd = c->chan->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (poll(&pfd, 1, ms) <= 0 || !(pfd.revents & POLLIN) ||
	    ibv_get_cq_event(c->chan, &ev_cq, &ev_ctx))
		return 0;
	ibv_ack_cq_events(ev_cq, 1);
	return 1;
}

/* Take every completion in the CQ; each must be a successful @op. */
static int drain_cq(struct conn *c, enum ibv_wc_opcode op, int *bad)
{
	struct ibv_wc wc;
	int n = 0;

	while (ibv_poll_cq(c->cq, 1, &wc) > 0) {
		n++;
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != op) {
			st_diag(c->r->name, "CQE status %s opcode %d, want opcode %d",
				ibv_wc_status_str(wc.status), wc.opcode, op);
			(*bad)++;
		}
	}
	return n;
}

/*
 * The receiver arms its CQ for solicited events only: three unsolicited
 * Sends complete without an event; a solicited Send, then a solicited
 * Write with Immediate, each raise one; armed for any completion, an
 * unsolicited Send raises one.
 */
static int solicit_server(struct role *r)
{
	struct qp_params qpp = qp_params(&r->p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs;
	__u64 peer_fail;
	struct conn c;
	int i, n, ev, bad = 0;
	int rc = ST_EXIT_FAIL;

	if (conn_create(&c, r, r->pd, 4, 8))
		return rc;
	for (i = 0; i < 8; i++)
		if (post_recv(&c, WR_RECV, NULL, 0, 0))
			goto out;
	if (conn_setup(&c, &mine, &theirs, &qpp) ||
	    ibv_req_notify_cq(c.cq, 1) || st_chan_sync(&r->ch))
		goto out;

	if (st_chan_sync(&r->ch))		/* three unsolicited Sends done */
		goto out;
	ev = chan_event(&c, 500);
	n = drain_cq(&c, IBV_WC_RECV, &bad);
	st_diag(r->name, "3 unsolicited Sends: %d CQEs, %d events (want 3, 0)", n, ev);
	bad += n != 3 || ev;

	if (ibv_req_notify_cq(c.cq, 1) || st_chan_sync(&r->ch))
		goto out;	/* solicited Send */
	ev = chan_event(&c, r->cq_wait_ms);
	n = drain_cq(&c, IBV_WC_RECV, &bad);
	st_diag(r->name, "solicited Send: %d CQEs, %d events (want 1, 1)", n, ev);
	bad += n != 1 || !ev;

	if (ibv_req_notify_cq(c.cq, 1) || st_chan_sync(&r->ch))
		goto out;	/* solicited Write with Immediate */
	ev = chan_event(&c, r->cq_wait_ms);
	n = drain_cq(&c, IBV_WC_RECV_RDMA_WITH_IMM, &bad);
	st_diag(r->name, "solicited Write with Immediate: %d CQEs, %d events (want 1, 1)",
		n, ev);
	bad += n != 1 || !ev;

	if (ibv_req_notify_cq(c.cq, 0) || st_chan_sync(&r->ch))
		goto out;	/* unsolicited Send, armed for any */
	ev = chan_event(&c, r->cq_wait_ms);
	n = drain_cq(&c, IBV_WC_RECV, &bad);
	st_diag(r->name, "unsolicited Send, armed for any: %d CQEs, %d events (want 1, 1)",
		n, ev);
	bad += n != 1 || !ev;

	rc = final_verdict(r, bad, &peer_fail);
	if (!r->quiet)
		printf("solicit(server): %s\n", rc ? "FAIL" : "PASS");
out:
	conn_destroy(&c);
	return rc;
}

static int solicit_send(struct conn *c, enum ibv_wr_opcode op,
			unsigned int flags)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	st_wr_init(&wr, &sge, op, WR_SEND, NULL, 0, 0, 0, 0,
		   IBV_SEND_SIGNALED | flags);
	wr.imm_data = htonl(7);
	if (ibv_post_send(c->qp, &wr, &bad))
		return -1;
	return expect_ok(c, WR_SEND, "send");
}

static int solicit_client(struct role *r)
{
	struct qp_params qpp = qp_params(&r->p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs;
	__u64 peer_fail, err = 1;
	struct line sum = {};
	struct conn c;
	int i, rc = ST_EXIT_FAIL;

	if (conn_create(&c, r, r->pd, 4, 1))
		return rc;
	if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch))
		goto out;
	for (i = 0; i < 3; i++)
		if (solicit_send(&c, IBV_WR_SEND, 0))
			goto out;
	if (st_chan_sync(&r->ch) || st_chan_sync(&r->ch) ||
	    solicit_send(&c, IBV_WR_SEND, IBV_SEND_SOLICITED) ||
	    st_chan_sync(&r->ch) ||
	    solicit_send(&c, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_SEND_SOLICITED) ||
	    st_chan_sync(&r->ch) || solicit_send(&c, IBV_WR_SEND, 0))
		goto out;
	err = 0;
out:
	rc = final_verdict(r, err, &peer_fail);
	line_add(&sum, "solicit: %s (the receiver's verdict: %s)",
		 rc ? "FAIL" : "PASS", peer_fail ? "FAIL" : "PASS");
	line_print(&sum);
	conn_destroy(&c);
	return rc;
}

/* --- overrun: a CQ too small for the traffic ------------------------------ */

#define OVERRUN_SENDS 64

/*
 * The receiver's QP completes into an 8-entry CQ nobody polls, with 64
 * receives posted. The CQ must fill, report IBV_EVENT_CQ_ERR, keep the
 * completions it holds intact, and the QP must go to the error state.
 */
static int overrun_server(struct role *r)
{
	struct qp_params qpp = qp_params(&r->p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs;
	struct ibv_context *ctx = r->dev->ctx;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ae;
	struct conn c, small = {};
	int i, n = 0, bad = 0, cq_err = 0, st;
	__u64 peer_fail, acked;
	double end;
	int rc = ST_EXIT_FAIL;

	small.cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!small.cq) {
		st_diag(r->name, "create_cq 8: %s", strerror(errno));
		return rc;
	}
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) |
	      O_NONBLOCK);
	if (conn_create_ex(&c, r, r->pd, 4, OVERRUN_SENDS, &small))
		goto out_cq;
	for (i = 0; i < OVERRUN_SENDS; i++)
		if (post_recv(&c, WR_RECV, NULL, 0, 0))
			goto out;
	if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch))
		goto out;

	end = st_now_s() + r->cq_wait_ms / 1000.0;
	while (!cq_err && st_now_s() < end) {
		if (poll(&pfd, 1, 200) <= 0 || ibv_get_async_event(ctx, &ae))
			continue;
		st_diag(r->name, "async event: %s", ibv_event_type_str(ae.event_type));
		if (ae.event_type == IBV_EVENT_CQ_ERR &&
		    ae.element.cq == small.cq)
			cq_err = 1;
		ibv_ack_async_event(&ae);
	}
	c.cq = small.cq;
	n = drain_cq(&c, IBV_WC_RECV, &bad);
	/* The QP's move to the error state follows the event. */
	for (i = 0; i < 40 && (st = st_qp_state(c.qp)) != IBV_QPS_ERR; i++)
		st_sleep_ms(50);
	st_diag(r->name, "CQ of %d entries: %d completions, CQ_ERR %s, QP %s",
		small.cq->cqe, n, cq_err ? "reported" : "MISSING",
		st_qp_state_str(st));
	bad += !cq_err || n != small.cq->cqe || st != IBV_QPS_ERR;
	/* Nothing acknowledged that did not complete here. */
	if (st_chan_recv_u64(&r->ch, &acked) || st_chan_sync(&r->ch))
		goto out;
	if (acked != (__u64)n) {
		st_diag(r->name, "the sender saw %llu Sends succeed, %d completed here",
			acked, n);
		bad++;
	}
	rc = final_verdict(r, bad, &peer_fail);
	if (!r->quiet)
		printf("overrun(server): %s\n", rc ? "FAIL" : "PASS");
out:
	conn_destroy(&c);
out_cq:
	ibv_destroy_cq(small.cq);
	return rc;
}

static int overrun_client(struct role *r)
{
	struct qp_params qpp = qp_params(&r->p, 10, 1, 7, 12);
	struct st_peer mine = {}, theirs;
	struct ibv_send_wr wr, *bad;
	int i, ok = 0, failed = 0;
	__u64 peer_fail, err = 1;
	struct line sum = {};
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct conn c;
	int rc = ST_EXIT_FAIL;

	if (conn_create(&c, r, r->pd, OVERRUN_SENDS, 1))
		return rc;
	if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch))
		goto out;
	for (i = 0; i < OVERRUN_SENDS; i++) {
		st_wr_init(&wr, &sge, IBV_WR_SEND, WR_SEND, NULL, 0, 0, 0, 0,
			   IBV_SEND_SIGNALED);
		if (ibv_post_send(c.qp, &wr, &bad))
			goto out;
	}
	/* Every Send completes: the first ones fine, the rest in error. */
	for (i = 0; i < OVERRUN_SENDS; i++) {
		if (wait_cqe(&c, &wc))
			goto out;
		if (wc.status == IBV_WC_SUCCESS)
			ok++;
		else
			failed++;
	}
	st_diag(r->name, "sends: %d completed, %d in error", ok, failed);
	err = 0;
out:
	if (st_chan_send_u64(&r->ch, ok) || st_chan_sync(&r->ch))
		err = 1;
	rc = final_verdict(r, err, &peer_fail);
	line_add(&sum, "overrun: %s sends ok %d failed %d (the receiver's verdict: %s)",
		 rc ? "FAIL" : "PASS", ok, failed, peer_fail ? "FAIL" : "PASS");
	line_print(&sum);
	conn_destroy(&c);
	return rc;
}

/* --- xfer: every opcode at every size class -------------------------------- */

#define XFER_MAX	(4u << 20)
#define XFER_GUARD	64		/* bytes after the message that stay */
#define XFER_A0		0x1122334455667788ull
#define XFER_DONE	~0ull

static const struct {
	const char *name;
	enum ibv_wr_opcode op;
} xfer_ops[] = {
	{ "Send", IBV_WR_SEND }, { "Send+Imm", IBV_WR_SEND_WITH_IMM },
	{ "Write", IBV_WR_RDMA_WRITE },
	{ "Write+Imm", IBV_WR_RDMA_WRITE_WITH_IMM },
	{ "Read", IBV_WR_RDMA_READ }, { "CmpSwap", IBV_WR_ATOMIC_CMP_AND_SWP },
	{ "FetchAdd", IBV_WR_ATOMIC_FETCH_AND_ADD },
};

static bool xfer_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* Bytes [0, len) are the seed's pattern, [len, len + guard) are @guard. */
static bool xfer_check(const __u8 *buf, __u8 *scratch, size_t len,
		       __u64 seed, __u8 guard)
{
	size_t i;

	st_rnd_fill(scratch, len, seed);
	if (memcmp(buf, scratch, len))
		return false;
	for (i = len; i < len + XFER_GUARD; i++)
		if (buf[i] != guard)
			return false;
	return true;
}

/*
 * The responder side of one message at a time: the client names the
 * operation and size, the server prepares its memory (and a receive),
 * the client runs it, the server checks what arrived and reports.
 */
static int xfer_server(struct role *r)
{
	const size_t blen = XFER_MAX + XFER_GUARD;
	struct qp_params qpp = qp_params(&r->p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs;
	struct ibv_mr *mr = NULL, *rmr = NULL, *amr = NULL;
	__u8 *sbuf, *rbuf, *scratch;
	__u64 cell[3], *aword, peer_fail, fails = 0, bad;
	enum ibv_wr_opcode op;
	struct ibv_wc wc;
	struct conn c;
	size_t len;
	int rc = ST_EXIT_FAIL;

	sbuf = st_buf_alloc(blen, 0);
	rbuf = st_buf_alloc(blen, 0);
	scratch = st_buf_alloc(blen, 0);
	aword = st_buf_alloc(64, 0);
	if (!sbuf || !rbuf || !scratch || !aword ||
	    conn_create(&c, r, r->pd, 4, 4))
		goto out_free;
	mr = reg(r, r->pd, sbuf, blen, IBV_ACCESS_LOCAL_WRITE |
		 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	rmr = reg(r, r->pd, rbuf, blen, IBV_ACCESS_LOCAL_WRITE);
	amr = reg(r, r->pd, aword, 64, IBV_ACCESS_LOCAL_WRITE |
		  IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr || !rmr || !amr)
		goto out_destroy;
	st_peer_add_mr(&mine, mr);
	st_peer_add_mr(&mine, amr);
	if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch))
		goto out_destroy;

	for (;;) {
		if (st_chan_recv_u64s(&r->ch, cell, 3))	/* op, size, seed */
			goto out_destroy;
		if (cell[0] == XFER_DONE)
			break;
		op = cell[0];
		len = cell[1];
		if (len > XFER_MAX)
			goto out_destroy;
		st_rnd_fill(sbuf, len, cell[2] + 1);
		memset(sbuf + len, 0xa5, XFER_GUARD);
		memset(rbuf, 0xee, len + XFER_GUARD);
		*aword = XFER_A0;
		if ((op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
		     op == IBV_WR_RDMA_WRITE_WITH_IMM) &&
		    post_recv(&c, WR_RECV, rbuf, len + XFER_GUARD / 2,
			      rmr->lkey))
			goto out_destroy;
		/* ready; the client is done */
		if (st_chan_sync(&r->ch) || st_chan_sync(&r->ch))
			goto out_destroy;

		bad = 0;
		if (op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
		    op == IBV_WR_RDMA_WRITE_WITH_IMM) {
			bool imm = op != IBV_WR_SEND;

			if (wait_cqe(&c, &wc) || wc.status != IBV_WC_SUCCESS ||
			    wc.opcode != (op == IBV_WR_RDMA_WRITE_WITH_IMM ?
					  IBV_WC_RECV_RDMA_WITH_IMM :
					  IBV_WC_RECV) ||
			    wc.byte_len != len ||
			    !!(wc.wc_flags & IBV_WC_WITH_IMM) != imm ||
			    (imm && ntohl(wc.imm_data) != (__u32)cell[2])) {
				st_diag(r->name, "%s %zu: receive CQE status %s opcode %d",
					op == IBV_WR_RDMA_WRITE_WITH_IMM ?
					"Write+Imm" : "Send", len,
					ibv_wc_status_str(wc.status), wc.opcode);
				st_diag(r->name, "byte_len %u flags %#x", wc.byte_len,
					wc.wc_flags);
				bad++;
			}
		}
		switch (op) {
		case IBV_WR_SEND:
		case IBV_WR_SEND_WITH_IMM:
			bad += !xfer_check(rbuf, scratch, len, cell[2], 0xee);
			break;
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			bad += !xfer_check(sbuf, scratch, len, cell[2], 0xa5);
			break;
		case IBV_WR_RDMA_READ:
			bad += !xfer_check(sbuf, scratch, len, cell[2] + 1,
					   0xa5);
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
			bad += *aword != cell[2];
			break;
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			bad += *aword != XFER_A0 + cell[2];
			break;
		default:
			bad++;
		}
		fails += !!bad;
		if (st_chan_send_u64(&r->ch, bad))
			goto out_destroy;
	}
	rc = final_verdict(r, fails, &peer_fail);
	if (!r->quiet)
		printf("xfer(server): %s, %llu cells failed here\n",
		       rc ? "FAIL" : "PASS", fails);
out_destroy:
	conn_destroy(&c);
	if (mr)
		ibv_dereg_mr(mr);
	if (rmr)
		ibv_dereg_mr(rmr);
	if (amr)
		ibv_dereg_mr(amr);
out_free:
	free(aword);
	free(scratch);
	free(rbuf);
	free(sbuf);
	return rc;
}

static int xfer_client(struct role *r)
{
	const size_t blen = XFER_MAX + XFER_GUARD;
	struct qp_params qpp = qp_params(&r->p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs;
	size_t mtu = 128u << r->dev->mtu, sizes[] = {
		0, 1, mtu - 1, mtu, mtu + 1, 65536, XFER_MAX,
	};
	__u64 cell[3], v, fails = 0, cells = 0, peer_fail, orig;
	struct ibv_send_wr wr, *bad_wr;
	struct ibv_mr *mr = NULL;
	__u8 *lbuf, *scratch;
	unsigned int k, j;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct conn c;
	bool ok;
	int rc = ST_EXIT_FAIL;

	lbuf = st_buf_alloc(blen, 0);
	scratch = st_buf_alloc(blen, 0);
	if (!lbuf || !scratch || conn_create(&c, r, r->pd, 4, 4))
		goto out_free;
	mr = reg(r, r->pd, lbuf, blen, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch))
		goto out_destroy;
	if (theirs.nmr < 2 || theirs.mr[0].len < blen) {
		st_diag(r->name, "peer buffers too small");
		goto out_destroy;
	}

	for (k = 0; k < ST_ARRAY_SIZE(xfer_ops) && !stopped(); k++) {
		enum ibv_wr_opcode op = xfer_ops[k].op;

		for (j = 0; j < ST_ARRAY_SIZE(sizes); j++) {
			size_t len = xfer_atomic(op) ? 8 : sizes[j];

			if (xfer_atomic(op) && j)
				break;
			if (len > (size_t)opt.xfer_max)
				continue;
			cell[0] = op;
			cell[1] = len;
			cell[2] = st_rnd_seed(r->p.seed, cells * 8 + k) & 0xffffffffu;
			if (st_chan_send_u64s(&r->ch, cell, 3))
				goto out_destroy;
			if (op == IBV_WR_RDMA_READ || xfer_atomic(op))
				memset(lbuf, 0xdd, len + XFER_GUARD);
			else
				st_rnd_fill(lbuf, len, cell[2]);
			if (st_chan_sync(&r->ch))
				goto out_destroy;
			st_wr_init(&wr, &sge, op, WR_PROBE, lbuf, len, mr->lkey,
				   theirs.mr[0].addr, theirs.mr[0].rkey,
				   IBV_SEND_SIGNALED);
			wr.imm_data = htonl((__u32)cell[2]);
			if (xfer_atomic(op)) {
				wr.wr.atomic.remote_addr = theirs.mr[1].addr;
				wr.wr.atomic.rkey = theirs.mr[1].rkey;
				wr.wr.atomic.compare_add =
					op == IBV_WR_ATOMIC_CMP_AND_SWP ?
					XFER_A0 : cell[2];
				wr.wr.atomic.swap = cell[2];
			}
			ok = !ibv_post_send(c.qp, &wr, &bad_wr) &&
			     !wait_cqe(&c, &wc) && wc.status == IBV_WC_SUCCESS &&
			     wc.wr_id == WR_PROBE;
			if (!ok)
				st_diag(r->name, "%s %zu: completion %s (%d)",
					xfer_ops[k].name, len,
					ibv_wc_status_str(wc.status), wc.status);
			if (st_chan_sync(&r->ch) || st_chan_recv_u64(&r->ch, &v))
				goto out_destroy;
			if (ok && op == IBV_WR_RDMA_READ)
				ok = xfer_check(lbuf, scratch, len,
						cell[2] + 1, 0xdd);
			if (ok && xfer_atomic(op)) {
				memcpy(&orig, lbuf, 8);
				ok = orig == XFER_A0;
			}
			ok = ok && !v;
			printf("xfer: %-9s %8zu B %s%s\n", xfer_ops[k].name,
			       len, ok ? "ok" : "FAIL",
			       v ? " (responder side wrong)" : "");
			fails += !ok;
			cells++;
			if (!ok)
				break;
			/*
			 * Idle, nothing outstanding: a requester that still
			 * thinks something is unacknowledged times out now
			 * (with a short --timeout and few retries, fails).
			 */
			if (opt.idle_ms)
				usleep(opt.idle_ms * 1000);
		}
		if (fails)
			break;
	}
	cell[0] = XFER_DONE;
	if (st_chan_send_u64s(&r->ch, cell, 3))
		goto out_destroy;
	rc = final_verdict(r, fails || stopped(), &peer_fail);
	printf("xfer: %s %llu cells, %llu failed, path MTU %zu\n",
	       rc ? "FAIL" : "PASS", cells, fails, mtu);
out_destroy:
	conn_destroy(&c);
	if (mr)
		ibv_dereg_mr(mr);
out_free:
	free(scratch);
	free(lbuf);
	return rc;
}

/* --- integrity ------------------------------------------------------------ */

#define INTEG_RECVS 8
/*
 * Each buffer is registered one page longer than it is used. rdma_rxe of
 * 6.1 (rxe_mr_copy()) reads one pointer past its MR's map array when a
 * copy ends exactly at the end of an MR of a multiple of 256 pages (1 MiB,
 * integrity's default chunk): harmless on the stock kernel, a KASAN
 * report on the debug kernel, in rdma_rxe's own code whichever end it is.
 */
#define INTEG_PAD	4096

static __u32 integ_chunk_len(const struct params *p, __u64 i)
{
	__u64 off = i * p->chunk;

	return p->bytes - off < p->chunk ? p->bytes - off : p->chunk;
}

/* Sends vary in length to cover partial last packets. */
static __u32 integ_send_len(const struct params *p, __u64 i)
{
	__u32 len = integ_chunk_len(p, i), cut = (i % 5) * 1237;

	return len > cut ? len - cut : len;
}

static int integrity_server(struct role *r)
{
	const struct params *p = &r->p;
	__u64 nchunks = (p->bytes + p->chunk - 1) / p->chunk, got = 0;
	__u64 sum = 0, errors = 0, peer_v[3], peer_fail;
	struct qp_params qpp = qp_params(p, 14, 7, 7, 12);
	struct ibv_mr *mr = NULL, *rmr = NULL;
	struct st_peer mine = {}, theirs;
	__u8 *buf, *rbuf;
	__u32 want;
	struct ibv_wc wc;
	struct conn c;
	int i, rc = ST_EXIT_FAIL;

	buf = st_buf_alloc(p->chunk + INTEG_PAD, 0);
	rbuf = st_buf_alloc((size_t)p->chunk * INTEG_RECVS + INTEG_PAD, 0);
	if (!buf || !rbuf || conn_create(&c, r, r->pd, 4, INTEG_RECVS))
		goto out_free;
	mr = reg(r, r->pd, buf, p->chunk + INTEG_PAD, IBV_ACCESS_LOCAL_WRITE |
		 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	rmr = reg(r, r->pd, rbuf, (size_t)p->chunk * INTEG_RECVS + INTEG_PAD,
		  IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !rmr)
		goto out_destroy;
	for (i = 0; i < INTEG_RECVS; i++)
		if (post_recv(&c, i, rbuf + (size_t)i * p->chunk, p->chunk,
			      rmr->lkey))
			goto out_destroy;
	st_peer_add_mr(&mine, mr);
	if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch))
		goto out_destroy;

	for (got = 0; got < nchunks; got++) {
		if (wait_cqe(&c, &wc)) {
			st_diag(r->name, "chunk %llu: no Send arrived", got);
			errors++;
			break;
		}
		want = integ_send_len(p, got);
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
		    wc.byte_len != want || wc.wr_id >= INTEG_RECVS) {
			st_diag(r->name,
				"chunk %llu: recv status %s opcode %d byte_len %u (want %u)",
				got, ibv_wc_status_str(wc.status), wc.opcode,
				wc.byte_len, want);
			errors++;
			break;
		}
		i = wc.wr_id;
		sum = st_hash(sum, rbuf + (size_t)i * p->chunk,
			      wc.byte_len);
		if (post_recv(&c, i, rbuf + (size_t)i * p->chunk, p->chunk,
			      rmr->lkey)) {
			errors++;
			break;
		}
	}
	{
		__u64 mine_v[3] = { sum, got, errors };

		if (st_chan_swap(&r->ch, mine_v, peer_v, 3))
			goto out_destroy;
	}
	/* The client compares the checksums and reports the verdict. */
	rc = final_verdict(r, errors, &peer_fail);
	if (!r->quiet)
		printf("integrity(server): %s sends %llu checksum %#llx errors %llu\n",
		       rc ? "FAIL" : "PASS", got, sum, errors);
out_destroy:
	conn_destroy(&c);
	if (mr)
		ibv_dereg_mr(mr);
	if (rmr)
		ibv_dereg_mr(rmr);
out_free:
	free(rbuf);
	free(buf);
	return rc;
}

static int integrity_client(struct role *r)
{
	struct line out = {};
	const struct params *p = &r->p;
	__u64 nchunks = (p->bytes + p->chunk - 1) / p->chunk, i;
	__u64 sum = 0, mism = 0, errors = 0, peer_v[3] = { 0 }, peer_fail;
	struct qp_params qpp = qp_params(p, 14, 7, 7, 12);
	struct ibv_mr *wmr = NULL, *rdmr = NULL;
	struct st_peer mine = {}, theirs;
	struct ibv_send_wr wr[2], *bad;
	struct ibv_sge sge[2];
	__u8 *wbuf, *rdbuf;
	__u32 len, j;
	double t0, el;
	size_t first;
	struct conn c;
	int rc = ST_EXIT_FAIL, e;

	wbuf = st_buf_alloc(p->chunk + INTEG_PAD, 0);
	rdbuf = st_buf_alloc(p->chunk + INTEG_PAD, 0);
	if (!wbuf || !rdbuf || conn_create(&c, r, r->pd, 4, 1))
		goto out_free;
	wmr = reg(r, r->pd, wbuf, p->chunk + INTEG_PAD, IBV_ACCESS_LOCAL_WRITE);
	rdmr = reg(r, r->pd, rdbuf, p->chunk + INTEG_PAD, IBV_ACCESS_LOCAL_WRITE);
	if (!wmr || !rdmr || conn_setup(&c, &mine, &theirs, &qpp))
		goto out_destroy;
	if (theirs.nmr < 1 || theirs.mr[0].len < p->chunk) {
		st_diag(r->name, "peer buffer too small");
		goto out_destroy;
	}
	if (st_chan_sync(&r->ch))
		goto out_destroy;

	t0 = st_now_s();
	for (i = 0; i < nchunks && !errors && !stopped(); i++) {
		if (r->verbose && i && i % 64 == 0)
			st_diag(r->name, "chunk %llu, %.1f MB/s", i,
				3.0 * i * p->chunk / (st_now_s() - t0) / 1e6);
		len = integ_chunk_len(p, i);
		st_rnd_fill(wbuf, len, st_rnd_seed(p->seed, i));
		memset(rdbuf, 0xa5 ^ (__u8)i, len);
		st_wr_init(&wr[0], &sge[0], IBV_WR_RDMA_WRITE, WR_WRITE, wbuf,
			   len, wmr->lkey, theirs.mr[0].addr, theirs.mr[0].rkey,
			   0);
		st_wr_init(&wr[1], &sge[1], IBV_WR_RDMA_READ, WR_READ, rdbuf,
			   len, rdmr->lkey, theirs.mr[0].addr, theirs.mr[0].rkey,
			   IBV_SEND_SIGNALED);
		wr[0].next = &wr[1];
		e = ibv_post_send(c.qp, wr, &bad);
		if (e) {
			st_diag(r->name, "chunk %llu: post_send: %s", i,
				strerror(e));
			errors++;
			break;
		}
		if (expect_ok(&c, WR_READ, "Write+Read")) {
			st_diag(r->name, "chunk %llu (offset %llu)", i,
				i * p->chunk);
			errors++;
			break;
		}
		if (memcmp(wbuf, rdbuf, len)) {
			__u64 n = 0;

			first = len;
			for (j = 0; j < len; j++)
				if (wbuf[j] != rdbuf[j]) {
					if (first == len)
						first = j;
					n++;
				}
			if (mism == 0 || n)
				st_diag(r->name,
					"chunk %llu: %llu bytes read wrong, first %zu: %#x != %#x",
					i, n, first, rdbuf[first], wbuf[first]);
			mism += n;
		}
		len = integ_send_len(p, i);
		sum = st_hash(sum, wbuf, len);
		if (post_send1(&c, IBV_WR_SEND, WR_SEND, wbuf, len, wmr->lkey,
			       0, 0, 0) ||
		    expect_ok(&c, WR_SEND, "Send")) {
			st_diag(r->name, "chunk %llu (Send of %u bytes)", i, len);
			errors++;
			break;
		}
	}
	el = st_now_s() - t0;
	{
		__u64 mine_v[3] = { sum, i, errors };

		if (st_chan_swap(&r->ch, mine_v, peer_v, 3))
			goto out_destroy;
	}
	if (!errors && peer_v[0] != sum) {
		st_diag(r->name, "checksum of the Sends: sent %#llx, peer got %#llx",
			sum, peer_v[0]);
		errors++;
	}
	rc = final_verdict(r, errors || mism || stopped(), &peer_fail);
	line_add(&out, "integrity: %s bytes %llu chunk %u chunks %llu",
		 stopped() ? "INTERRUPTED" : rc ? "FAIL" : "PASS", p->bytes,
		 p->chunk, i);
	line_add(&out, " mismatches %llu checksum %s (%#llx) errors %llu/%llu",
		 mism, peer_v[0] == sum ? "ok" : "MISMATCH", sum, errors,
		 peer_v[2]);
	line_add(&out, " elapsed %.2f s %.1f MB/s (write+read+send)", el,
		 el > 0 ? 3.0 * (double)i * p->chunk / el / 1e6 : 0);
	line_print(&out);
out_destroy:
	conn_destroy(&c);
	if (wmr)
		ibv_dereg_mr(wmr);
	if (rdmr)
		ibv_dereg_mr(rdmr);
out_free:
	free(rdbuf);
	free(wbuf);
	return rc;
}

/* --- retry ---------------------------------------------------------------- */

enum { RETRY_DESTROYED, RETRY_ERR_STATE, RETRY_CASES };

static const char *const retry_case_names[RETRY_CASES] = {
	"peer QP destroyed", "peer QP in ERR",
};

static int retry_server(struct role *r)
{
	struct qp_params qpp = qp_params(&r->p, 14, 7, 7, 12);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct st_peer mine, theirs;
	__u64 v, peer_fail, fail = 0;
	struct ibv_mr *mr = NULL;
	__u8 *buf;
	struct conn c;
	int k, rc = ST_EXIT_FAIL;

	buf = st_buf_alloc(4096, 0x5a);
	if (!buf)
		return rc;
	mr = reg(r, r->pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
		 IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		goto out_free;
	for (k = 0; k < RETRY_CASES; k++) {
		if (conn_create(&c, r, r->pd, 4, 4))
			goto out_free;
		memset(&mine, 0, sizeof(mine));
		st_peer_add_mr(&mine, mr);
		if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch)) {
			conn_destroy(&c);
			goto out_free;
		}
		if (k == RETRY_DESTROYED) {
			ibv_destroy_qp(c.qp);
			c.qp = NULL;
		} else if (ibv_modify_qp(c.qp, &a, IBV_QP_STATE)) {
			st_diag(r->name, "modify_qp ERR: %s", strerror(errno));
			fail++;
		}
		/* tell the client the peer QP is gone; wait for its result */
		if (st_chan_sync(&r->ch) || st_chan_recv_u64(&r->ch, &v)) {
			conn_destroy(&c);
			goto out_free;
		}
		conn_destroy(&c);
	}
	rc = final_verdict(r, fail, &peer_fail);
out_free:
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
	return rc;
}

static int retry_client(struct role *r)
{
	struct qp_params qpp = qp_params(&r->p, 10, 1, 7, 12);
	struct st_peer mine, theirs;
	__u64 peer_fail, fail = 0;
	struct ibv_mr *mr = NULL;
	char res[RETRY_CASES][160];
	struct ibv_wc wc;
	__u8 *buf;
	double t0, ms;
	struct conn c;
	int k, st, rc = ST_EXIT_FAIL;

	buf = st_buf_alloc(4096, 0x11);
	if (!buf)
		return rc;
	mr = reg(r, r->pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		goto out_free;
	for (k = 0; k < RETRY_CASES; k++) {
		if (conn_create(&c, r, r->pd, 4, 4))
			goto out_free;
		memset(&mine, 0, sizeof(mine));
		if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch) ||
		    st_chan_sync(&r->ch)) {
			conn_destroy(&c);
			goto out_free;
		}
		t0 = st_now_s();
		if (post_send1(&c, IBV_WR_RDMA_WRITE, WR_WRITE, buf, 64,
			       mr->lkey, theirs.mr[0].addr, theirs.mr[0].rkey,
			       0)) {
			conn_destroy(&c);
			goto out_free;
		}
		if (wait_cqe(&c, &wc)) {
			snprintf(res[k], sizeof(res[k]),
				 "%s: no completion in %d ms",
				 retry_case_names[k], r->cq_wait_ms);
			fail++;
		} else {
			ms = (st_now_s() - t0) * 1000;
			st = st_qp_state(c.qp);
			snprintf(res[k], sizeof(res[k]),
				 "%s: %s after %.0f ms, QP %s",
				 retry_case_names[k],
				 ibv_wc_status_str(wc.status), ms,
				 st_qp_state_str(st));
			if (wc.status != IBV_WC_RETRY_EXC_ERR ||
			    st != IBV_QPS_ERR)
				fail++;
		}
		st_diag(r->name, "%s", res[k]);
		if (st_chan_send_u64(&r->ch, fail)) {
			conn_destroy(&c);
			goto out_free;
		}
		conn_destroy(&c);
	}
	rc = final_verdict(r, fail, &peer_fail);
	printf("retry: %s timeout %u retry_cnt %u; %s; %s\n",
	       rc ? "FAIL" : "PASS", qpp.timeout, qpp.retry_cnt, res[0],
	       res[1]);
out_free:
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
	return rc;
}

/* --- rnr ------------------------------------------------------------------ */

#define RNR_LEN 4096

static int rnr_server(struct role *r)
{
	struct qp_params qpp = qp_params(&r->p, 14, 7, 7, 1);
	struct st_peer mine, theirs;
	__u64 v, peer_fail, fail = 0;
	struct ibv_mr *mr = NULL;
	size_t first;
	__u8 *buf;
	struct conn c;
	int k, rc = ST_EXIT_FAIL;

	buf = st_buf_alloc(RNR_LEN, 0);
	if (!buf)
		return rc;
	mr = reg(r, r->pd, buf, RNR_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		goto out_free;
	for (k = 0; k < 2; k++) {
		if (conn_create(&c, r, r->pd, 4, 4))
			goto out_free;
		memset(&mine, 0, sizeof(mine));
		if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch) ||
		    st_chan_recv_u64(&r->ch, &v)) {	/* the Send is posted */
			conn_destroy(&c);
			goto out_free;
		}
		if (k == 0) {
			st_sleep_ms(r->p.rnr_delay_ms);
			memset(buf, 0, RNR_LEN);
			if (post_recv(&c, WR_RECV, buf, RNR_LEN, mr->lkey) ||
			    expect_ok(&c, WR_RECV, "recv after RNR")) {
				fail++;
			} else if (count_not(buf, RNR_LEN, 0x3c, &first)) {
				st_diag(r->name, "received data wrong at %zu", first);
				fail++;
			}
		}
		/* the client's verdict on this case */
		if (st_chan_send_u64(&r->ch, fail) || st_chan_recv_u64(&r->ch, &v)) {
			conn_destroy(&c);
			goto out_free;
		}
		conn_destroy(&c);
	}
	rc = final_verdict(r, fail, &peer_fail);
out_free:
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
	return rc;
}

static int rnr_client(struct role *r)
{
	struct st_peer mine, theirs;
	__u64 v, peer_fail, fail = 0;
	struct ibv_mr *mr = NULL;
	char res[2][160];
	struct qp_params qpp;
	struct ibv_wc wc;
	double t0, ms;
	__u8 *buf;
	struct conn c;
	int k, rc = ST_EXIT_FAIL;

	buf = st_buf_alloc(RNR_LEN, 0x3c);
	if (!buf)
		return rc;
	mr = reg(r, r->pd, buf, RNR_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		goto out_free;
	for (k = 0; k < 2; k++) {
		/* (a) rnr_retry 7 = retry forever, (b) 0 = never */
		qpp = qp_params(&r->p, 14, 7, k == 0 ? 7 : 0, 1);
		if (conn_create(&c, r, r->pd, 4, 4))
			goto out_free;
		memset(&mine, 0, sizeof(mine));
		if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch)) {
			conn_destroy(&c);
			goto out_free;
		}
		t0 = st_now_s();
		if (post_send1(&c, IBV_WR_SEND, WR_SEND, buf, RNR_LEN,
			       mr->lkey, 0, 0, 0) || st_chan_send_u64(&r->ch, 1)) {
			conn_destroy(&c);
			goto out_free;
		}
		if (wait_cqe(&c, &wc)) {
			snprintf(res[k], sizeof(res[k]),
				 "rnr_retry %u: no completion", qpp.rnr_retry);
			fail++;
		} else {
			ms = (st_now_s() - t0) * 1000;
			snprintf(res[k], sizeof(res[k]),
				 "rnr_retry %u: %s after %.0f ms",
				 qpp.rnr_retry, ibv_wc_status_str(wc.status),
				 ms);
			if (k == 0 && (wc.status != IBV_WC_SUCCESS ||
				       ms < r->p.rnr_delay_ms * 0.9))
				fail++;
			if (k == 1 && wc.status != IBV_WC_RNR_RETRY_EXC_ERR)
				fail++;
		}
		st_diag(r->name, "%s", res[k]);
		if (st_chan_recv_u64(&r->ch, &v) || st_chan_send_u64(&r->ch, fail)) {
			conn_destroy(&c);
			goto out_free;
		}
		fail += v;
		conn_destroy(&c);
	}
	rc = final_verdict(r, fail, &peer_fail);
	printf("rnr: %s (a) %s (receive posted after %u ms); (b) %s\n",
	       rc ? "FAIL" : "PASS", res[0], r->p.rnr_delay_ms, res[1]);
out_free:
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
	return rc;
}

/* --- access --------------------------------------------------------------- */

#define ACC_LEN 4096

enum { MR_RW, MR_RO, MR_WO, MR_N };	/* the server's three target MRs */

struct access_case {
	const char *name;
	enum ibv_wr_opcode op;
	int mr;
	__s64 off;		/* from the MR's start */
	__u32 len;
	bool bad_rkey;
	bool ok;		/* a control case that must succeed */
};

static const struct access_case access_cases[] = {
	{ "control: Write inside the MR", IBV_WR_RDMA_WRITE, MR_RW, 128, 64,
	  false, true },
	{ "Write with a wrong rkey", IBV_WR_RDMA_WRITE, MR_RW, 0, 64, true,
	  false },
	{ "Write 1 byte past the MR end", IBV_WR_RDMA_WRITE, MR_RW, ACC_LEN,
	  1, false, false },
	{ "Write straddling the MR end", IBV_WR_RDMA_WRITE, MR_RW,
	  ACC_LEN - 8, 16, false, false },
	{ "Write 1 byte before the MR start", IBV_WR_RDMA_WRITE, MR_RW, -1,
	  1, false, false },
	{ "Write to an MR without REMOTE_WRITE", IBV_WR_RDMA_WRITE, MR_RO,
	  0, 64, false, false },
	{ "Read from an MR without REMOTE_READ", IBV_WR_RDMA_READ, MR_WO, 0,
	  64, false, false },
	{ "control: Read inside the MR", IBV_WR_RDMA_READ, MR_RO, 256, 64,
	  false, true },
	{ "Atomic Write to an MR without REMOTE_WRITE", IBV_WR_ATOMIC_WRITE,
	  MR_RO, 8, 8, false, false },
	{ "Atomic Write just past the MR end", IBV_WR_ATOMIC_WRITE, MR_RW,
	  ACC_LEN, 8, false, false },
	{ "Atomic Write with a wrong rkey", IBV_WR_ATOMIC_WRITE, MR_RW, 64, 8,
	  true, false },
	{ "control: Atomic Write inside the MR", IBV_WR_ATOMIC_WRITE, MR_RW,
	  512, 8, false, true },
};

#define ACCESS_NCASES ST_ARRAY_SIZE(access_cases)

static __u8 acc_pattern(int mr, size_t i)
{
	return (__u8)(0x40 + 17 * mr + i * 7);
}

static int access_server(struct role *r)
{
	struct qp_params qpp = qp_params(&r->p, 14, 7, 7, 12);
	static const int acc[MR_N] = {
		[MR_RW] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
		[MR_RO] = IBV_ACCESS_REMOTE_READ,
		[MR_WO] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};
	__u8 *buf[MR_N] = {}, *want[MR_N] = {};
	struct ibv_mr *mr[MR_N] = {};
	struct st_peer mine, theirs;
	__u64 v, bad, fail = 0, peer_fail;
	const struct access_case *ac;
	size_t i, first = 0;
	struct conn c;
	int m, rc = ST_EXIT_FAIL;
	unsigned int k;

	/* one spare page each side, so no MR borders another */
	for (m = 0; m < MR_N; m++) {
		buf[m] = st_buf_alloc(3 * ACC_LEN, 0xee);
		want[m] = st_buf_alloc(ACC_LEN, 0);
		if (!buf[m] || !want[m])
			goto out_free;
		for (i = 0; i < ACC_LEN; i++)
			want[m][i] = acc_pattern(m, i);
		memcpy(buf[m] + ACC_LEN, want[m], ACC_LEN);
		mr[m] = reg(r, r->pd, buf[m] + ACC_LEN, ACC_LEN, acc[m]);
		if (!mr[m])
			goto out_free;
	}
	for (k = 0; k < ACCESS_NCASES; k++) {
		ac = &access_cases[k];
		if (conn_create(&c, r, r->pd, 4, 4))
			goto out_free;
		memset(&mine, 0, sizeof(mine));
		for (m = 0; m < MR_N; m++)
			st_peer_add_mr(&mine, mr[m]);
		if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch) ||
		    st_chan_recv_u64(&r->ch, &v)) {	/* the client's completion */
			conn_destroy(&c);
			goto out_free;
		}
		if (ac->ok && (ac->op == IBV_WR_RDMA_WRITE ||
			       ac->op == IBV_WR_ATOMIC_WRITE))
			for (i = 0; i < ac->len; i++)	/* what it wrote */
				want[ac->mr][ac->off + i] =
					(__u8)(0xc0 + k + i);
		bad = 0;
		for (m = 0; m < MR_N; m++) {
			for (i = 0; i < 3 * ACC_LEN; i++) {
				__u8 w = i < ACC_LEN || i >= 2 * ACC_LEN ?
					0xee : want[m][i - ACC_LEN];

				if (buf[m][i] != w) {
					if (!bad)
						first = i;
					bad++;
				}
			}
			if (bad) {
				st_diag(r->name, "%s: MR %d: %llu bytes changed, first at %zd",
					ac->name, m, bad, (ssize_t)first - ACC_LEN);
				fail++;
				/* start the next case from what is there */
				memcpy(want[m], buf[m] + ACC_LEN, ACC_LEN);
				bad = 0;
			}
		}
		if (st_chan_send_u64(&r->ch, fail)) {
			conn_destroy(&c);
			goto out_free;
		}
		conn_destroy(&c);
	}
	rc = final_verdict(r, fail, &peer_fail);
out_free:
	for (m = 0; m < MR_N; m++) {
		if (mr[m])
			ibv_dereg_mr(mr[m]);
		free(buf[m]);
		free(want[m]);
	}
	return rc;
}

static int access_client(struct role *r)
{
	struct qp_params qpp = qp_params(&r->p, 14, 7, 7, 12);
	struct st_peer mine, theirs;
	const struct access_case *ac;
	__u64 v, fail = 0, mem_fail = 0, peer_fail, raddr;
	enum ibv_wc_status want;
	struct ibv_mr *mr = NULL;
	char line[1024] = "";
	struct ibv_wc wc;
	unsigned int k;
	size_t i, off = 0;
	__u32 rkey;
	__u8 *buf;
	struct conn c;
	int rc = ST_EXIT_FAIL, ok;

	buf = st_buf_alloc(ACC_LEN, 0);
	if (!buf)
		return rc;
	mr = reg(r, r->pd, buf, ACC_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		goto out_free;
	for (k = 0; k < ACCESS_NCASES; k++) {
		ac = &access_cases[k];
		want = ac->ok ? IBV_WC_SUCCESS : IBV_WC_REM_ACCESS_ERR;
		for (i = 0; i < ACC_LEN; i++)
			buf[i] = (__u8)(0xc0 + k + i);
		r->send_ops = ac->op == IBV_WR_ATOMIC_WRITE ?
			       IBV_QP_EX_WITH_ATOMIC_WRITE : 0;
		if (conn_create(&c, r, r->pd, 4, 4))
			goto out_free;
		memset(&mine, 0, sizeof(mine));
		if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch)) {
			conn_destroy(&c);
			goto out_free;
		}
		if (theirs.nmr != MR_N) {
			st_diag(r->name, "peer exposes %u MRs, want %d", theirs.nmr,
				MR_N);
			conn_destroy(&c);
			goto out_free;
		}
		raddr = theirs.mr[ac->mr].addr + ac->off;
		rkey = theirs.mr[ac->mr].rkey;
		if (ac->bad_rkey)
			rkey ^= 0x00ff0000;
		if (ac->op == IBV_WR_ATOMIC_WRITE) {
			struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(c.qp);

			ibv_wr_start(qpx);
			qpx->wr_id = WR_PROBE;
			qpx->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_atomic_write(qpx, rkey, raddr, buf);
			if (ibv_wr_complete(qpx)) {
				conn_destroy(&c);
				goto out_free;
			}
		} else if (post_send1(&c, ac->op, WR_PROBE, buf, ac->len,
				      mr->lkey, raddr, rkey, 0)) {
			conn_destroy(&c);
			goto out_free;
		}
		if (wait_cqe(&c, &wc)) {
			wc.status = -1;
			ok = 0;
		} else {
			ok = wc.status == want;
		}
		if (ok && ac->ok && ac->op == IBV_WR_RDMA_READ)
			for (i = 0; i < ac->len; i++)
				if (buf[i] != acc_pattern(ac->mr, ac->off + i))
					ok = 0;
		if (st_chan_send_u64(&r->ch, wc.status) || st_chan_recv_u64(&r->ch, &v)) {
			conn_destroy(&c);
			goto out_free;
		}
		st_diag(r->name, "%-40s -> %s%s%s", ac->name,
			(int)wc.status < 0 ? "no completion" :
			ibv_wc_status_str(wc.status),
			ok ? "" : " (WRONG)",
			v > mem_fail ? ", target memory CHANGED" : "");
		if (!ok) {
			fail++;
			off += snprintf(line + off, sizeof(line) - off,
					"%s[%u] %s", off ? ", " : "", k,
					(int)wc.status < 0 ? "none" :
					ibv_wc_status_str(wc.status));
			if (off >= sizeof(line))
				off = sizeof(line) - 1;
		}
		mem_fail = v;
		conn_destroy(&c);
	}
	rc = final_verdict(r, fail, &peer_fail);
	printf("access: %s cases %zu wrong_status %llu memory_changed %llu%s%s\n",
	       rc ? "FAIL" : "PASS", ACCESS_NCASES, fail, mem_fail,
	       off ? " wrong: " : "", line);
out_free:
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
	return rc;
}

/* --- scribble ------------------------------------------------------------- */

struct scribble {
	struct role *r;
	struct ibv_pd *vpd;		/* victim PD: nothing else lives in it */
	__u8 *vbuf;
	struct ibv_mr *vmr;
	struct conn vhold;		/* owns the victim's CQ */
	struct conn va, vb;		/* victim and its peer */
	struct rxe_queue_buf *sq;
	struct conn ha, hb;		/* the healthy pair */
	__u8 *hsrc, *hdst, *hrcv;
	struct ibv_mr *hsrc_mr, *hdst_mr, *hrcv_mr;
	struct st_peer ha_info, hb_info;
	__u64 rnd;
	/* counters */
	__u64 victim_err, victim_ok, victim_stalled, victim_stuck;
	__u64 healthy_ok;
	__u64 posted_fail, cqes, flushed;
	__u64 mode_count[3];
};

static const char *const scr_mode_names[] = { "random", "fields", "opcode" };

#define SCR_LEN		8192
#define SCR_MAGIC	0x5343524942424c45ull	/* "SCRIBBLE" */
#define SCR_REAL	0x5245414c57524954ull	/* "REALWRIT" */

static int scr_connect_pair(struct scribble *s, struct conn *a,
			    struct conn *b, const struct qp_params *qpp)
{
	struct st_peer ia, ib;

	local_info(a, &ia);
	local_info(b, &ib);
	if (conn_connect_qp(a->qp, s->r, a->psn, &ib, qpp) ||
	    conn_connect_qp(b->qp, s->r, b->psn, &ia, qpp))
		return -1;
	return 0;
}

/*
 * Create the victim pair; find its send ring: of the uverbs mappings that
 * the QP's creation added, the one whose slot holds our probe's wr_id.
 */
static int scr_victim_up(struct scribble *s, struct st_range *before,
			 struct st_range *after, int max)
{
	struct qp_params qpp = { .timeout = 8, .retry_cnt = 0,
				 .rnr_retry = 0, .min_rnr_timer = 1 };
	int nb, na, i, j;
	struct rxe_queue_buf *q;
	struct ibv_wc wc;

	/* the CQ predates the snapshot: its ring holds the probe's wr_id too */
	while (ibv_poll_cq(s->vhold.cq, 1, &wc) > 0)
		;
	s->sq = NULL;
	nb = st_uverbs_maps(before, max);
	if (conn_create_ex(&s->va, s->r, s->vpd, 16, 1, &s->vhold))
		return -1;
	na = st_uverbs_maps(after, max);
	if (conn_create(&s->vb, s->r, s->vpd, 4, 4) ||
	    scr_connect_pair(s, &s->va, &s->vb, &qpp))
		return -1;
	if (post_send1(&s->va, IBV_WR_RDMA_WRITE, SCR_MAGIC, s->vbuf, 64,
		       s->vmr->lkey, (uintptr_t)s->vbuf + 4096, s->vmr->rkey,
		       0) || expect_ok(&s->va, SCR_MAGIC, "victim probe"))
		return -1;
	for (i = 0; i < na && nb >= 0; i++) {
		for (j = 0; j < nb; j++)
			if (before[j].start == after[i].start)
				break;
		if (j < nb)
			continue;
		q = (struct rxe_queue_buf *)after[i].start;
		if (!st_ring_plausible(q, after[i].end - after[i].start))
			continue;
		if (!memcmp(st_ring_slot(q, q->producer_index - 1),
			    &(__u64){ SCR_MAGIC }, 8)) {
			s->sq = q;
			return 0;
		}
	}
	return 1;
}

/* Overwrite a few send ring slots; producer index past them. */
static int scr_corrupt(struct scribble *s, int mode)
{
	struct rxe_queue_buf *q = s->sq;
	__u32 prod = __atomic_load_n(&q->producer_index, __ATOMIC_ACQUIRE);
	__u32 cons = __atomic_load_n(&q->consumer_index, __ATOMIC_ACQUIRE);
	size_t esz = (size_t)1 << q->log2_elem_size, wsz, off;
	__u32 free_slots = (cons - prod - 1) & q->index_mask;
	__u32 n = 1 + st_rnd_next(&s->rnd) % 4, i, k, nw;
	__u8 tmpl[1 << 16];
	__u8 *slot;
	__u64 v;

	if (free_slots < n + 2)
		return -1;
	/* the probe's WQE: a valid template */
	memcpy(tmpl, st_ring_slot(q, prod - 1), esz);
	wsz = sizeof(struct rxe_send_wqe) + sizeof(struct rxe_sge);
	if (wsz > esz)
		wsz = esz;
	for (i = 0; i < n; i++) {
		slot = st_ring_slot(q, prod + i);
		switch (mode) {
		case 0:		/* all random */
			st_rnd_fill(slot, esz, st_rnd_next(&s->rnd));
			break;
		case 1:		/* valid WQE, a few random 32-bit words */
			memcpy(slot, tmpl, esz);
			nw = 1 + st_rnd_next(&s->rnd) % 4;
			for (k = 0; k < nw; k++) {
				off = (st_rnd_next(&s->rnd) % (wsz / 4)) * 4;
				v = st_rnd_next(&s->rnd);
				/* half of them: small values, e.g. opcodes */
				if (v & 1)
					v = (v >> 1) % 40;
				memcpy(slot + off, &v, 4);
			}
			break;
		default:	/* valid WQE, another opcode and flags */
			memcpy(slot, tmpl, esz);
			((struct rxe_send_wqe *)slot)->wr.opcode =
				st_rnd_next(&s->rnd) % 24;
			((struct rxe_send_wqe *)slot)->wr.send_flags =
				st_rnd_next(&s->rnd) & 0x1f;
			break;
		}
	}
	__atomic_store_n(&q->producer_index, (prod + n) & q->index_mask,
			 __ATOMIC_RELEASE);
	return 0;
}

/*
 * After the doorbell: gather completions until the real WR's (flushed or
 * not).  An error completion moves the QP to ERR and flushes what follows,
 * so once one is seen the rest must come soon.
 */
static void scr_outcome(struct scribble *s, __u64 round)
{
	double end = st_now_s() + 3, err_at = 0;
	bool done = false;
	struct ibv_wc wc;
	const char *what;
	int st;

	while (!done && st_now_s() < end) {
		if (err_at && st_now_s() > err_at + 0.15)
			break;
		if (wait_cqe_ms(&s->va, &wc, 100))
			continue;
		s->cqes++;
		if (wc.status == IBV_WC_WR_FLUSH_ERR)
			s->flushed++;
		if (wc.status != IBV_WC_SUCCESS && !err_at)
			err_at = st_now_s();
		if (wc.wr_id == SCR_REAL)
			done = true;
	}
	st = st_qp_state(s->va.qp);
	if (done && (err_at || st == IBV_QPS_ERR)) {
		s->victim_err++;
		what = "error, queue flushed";
	} else if (done) {
		s->victim_ok++;
		what = "no error";
	} else if (err_at || st == IBV_QPS_ERR) {
		s->victim_stalled++;
		what = "STALLED: error but the WQEs behind it never completed";
	} else {
		s->victim_stuck++;
		what = "STUCK: no completion at all";
	}
	if (s->r->verbose > 1 || (!done && s->victim_stalled +
				  s->victim_stuck <= 3))
		st_diag(s->r->name, "round %llu: victim %s (QP %s)", round, what,
			st_qp_state_str(st));
}

/* Write random data, Send it too; both must arrive intact. */
static int scr_healthy(struct scribble *s, __u64 round)
{
	struct ibv_wc wc;
	int got = 0;

	st_rnd_fill(s->hsrc, SCR_LEN, st_rnd_seed(s->rnd, round));
	memset(s->hrcv, 0, SCR_LEN);
	if (post_recv(&s->hb, WR_RECV, s->hrcv, SCR_LEN, s->hrcv_mr->lkey) ||
	    post_send1(&s->ha, IBV_WR_RDMA_WRITE, WR_WRITE, s->hsrc, SCR_LEN,
		       s->hsrc_mr->lkey, (uintptr_t)s->hdst,
		       s->hdst_mr->rkey, 0) ||
	    expect_ok(&s->ha, WR_WRITE, "healthy Write") ||
	    post_send1(&s->ha, IBV_WR_SEND, WR_SEND, s->hsrc, SCR_LEN,
		       s->hsrc_mr->lkey, 0, 0, 0) ||
	    expect_ok(&s->ha, WR_SEND, "healthy Send"))
		return -1;
	if (wait_cqe(&s->hb, &wc) || wc.status != IBV_WC_SUCCESS ||
	    wc.byte_len != SCR_LEN) {
		st_diag(s->r->name, "healthy recv: %s len %u",
			ibv_wc_status_str(wc.status), wc.byte_len);
		return -1;
	}
	if (memcmp(s->hsrc, s->hdst, SCR_LEN))
		got |= 1;
	if (memcmp(s->hsrc, s->hrcv, SCR_LEN))
		got |= 2;
	if (got) {
		st_diag(s->r->name, "round %llu: healthy pair data wrong (%s%s)",
			round, got & 1 ? "Write" : "", got & 2 ? " Send" : "");
		return -1;
	}
	s->healthy_ok++;
	return 0;
}

static int scribble_run(struct role *r)
{
	struct line sum = {};
	struct qp_params qpp = qp_params(&r->p, 14, 7, 7, 12);
	struct st_range *before = NULL, *after = NULL;
	struct scribble s = { .r = r };
	const char *mode_opt = opt.scribble_mode;
	int rc = ST_EXIT_FAIL, e, mode;
	__u64 round = 1, skipped = 0;
	double t0 = st_now_s();

	s.rnd = st_rnd_seed(r->p.seed, 0x5c);
	before = calloc(4096, sizeof(*before));
	after = calloc(4096, sizeof(*after));
	s.vpd = ibv_alloc_pd(r->dev->ctx);
	s.vbuf = st_buf_alloc(SCR_LEN, 0);
	s.hsrc = st_buf_alloc(SCR_LEN, 0);
	s.hdst = st_buf_alloc(SCR_LEN, 0);
	s.hrcv = st_buf_alloc(SCR_LEN, 0);
	if (!before || !after || !s.vpd || !s.vbuf || !s.hsrc || !s.hdst ||
	    !s.hrcv)
		goto out;
	s.vmr = reg(r, s.vpd, s.vbuf, SCR_LEN, IBV_ACCESS_LOCAL_WRITE |
		    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	s.hsrc_mr = reg(r, r->pd, s.hsrc, SCR_LEN, IBV_ACCESS_LOCAL_WRITE);
	s.hdst_mr = reg(r, r->pd, s.hdst, SCR_LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	s.hrcv_mr = reg(r, r->pd, s.hrcv, SCR_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!s.vmr || !s.hsrc_mr || !s.hdst_mr || !s.hrcv_mr ||
	    conn_create(&s.vhold, r, s.vpd, 32, 32) ||
	    conn_create(&s.ha, r, r->pd, 8, 8) ||
	    conn_create(&s.hb, r, r->pd, 8, 8) ||
	    scr_connect_pair(&s, &s.ha, &s.hb, &qpp))
		goto out;
	if (scr_healthy(&s, 0)) {
		st_diag(r->name, "the healthy pair fails before any scribbling");
		goto out;
	}

	t0 = st_now_s();
	for (round = 1; round <= r->p.rounds; round++) {
		if (stopped()) {
			st_diag(r->name, "interrupted in round %llu", round);
			goto out;
		}
		e = scr_victim_up(&s, before, after, 4096);
		if (e < 0) {
			st_diag(r->name, "round %llu: cannot set up the victim",
				round);
			goto out_victim;
		}
		if (e > 0) {
			puts("scribble: SKIP no send ring in the uverbs mmaps (not rxe ABI?)");
			rc = ST_EXIT_SKIP;
			goto out_victim;
		}
		for (mode = 0; mode < 3; mode++)
			if (!strcmp(mode_opt, scr_mode_names[mode]))
				break;
		if (mode == 3)
			mode = round % 3;
		if (r->verbose > 1)
			st_diag(r->name, "round %llu: %s scribble", round,
				scr_mode_names[mode]);
		if (scr_corrupt(&s, mode)) {
			skipped++;
		} else {
			s.mode_count[mode]++;
			/* the real WR lands after the garbage; doorbell */
			if (post_send1(&s.va, IBV_WR_RDMA_WRITE, SCR_REAL,
				       s.vbuf, 64, s.vmr->lkey,
				       (uintptr_t)s.vbuf + 4096, s.vmr->rkey,
				       0))
				s.posted_fail++;
			scr_outcome(&s, round);
		}
		conn_destroy(&s.va);
		conn_destroy(&s.vb);
		if (scr_healthy(&s, round)) {
			st_diag(r->name, "round %llu: the healthy pair broke",
				round);
			goto out;
		}
		if (r->verbose && round % 100 == 0)
			st_diag(r->name,
				"round %llu: victim err %llu ok %llu stalled %llu stuck %llu",
				round, s.victim_err, s.victim_ok, s.victim_stalled,
				s.victim_stuck);
	}
	rc = ST_EXIT_PASS;
	if (opt.strict && (s.victim_stalled || s.victim_stuck)) {
		st_diag(r->name, "--strict: every victim must complete or flush");
		rc = ST_EXIT_FAIL;
	}
	if (skipped)
		st_diag(r->name, "%llu rounds found the ring too full", skipped);
	goto out;
out_victim:
	conn_destroy(&s.va);
	conn_destroy(&s.vb);
out:
	if (rc != ST_EXIT_SKIP) {
		line_add(&sum, "scribble: %s rounds %llu", rc ? "FAIL" : "PASS",
			 round - 1);
		line_add(&sum, " (random %llu fields %llu opcode %llu)",
			 s.mode_count[0], s.mode_count[1], s.mode_count[2]);
		line_add(&sum, " victim_errors %llu victim_ok %llu",
			 s.victim_err, s.victim_ok);
		line_add(&sum, " victim_stalled %llu victim_stuck %llu",
			 s.victim_stalled, s.victim_stuck);
		line_add(&sum, " cqes %llu (flushed %llu)", s.cqes, s.flushed);
		line_add(&sum, " post_fail %llu healthy_transfers %llu",
			 s.posted_fail, s.healthy_ok);
		line_add(&sum, " elapsed %.1f s", st_now_s() - t0);
		line_print(&sum);
	}
	conn_destroy(&s.ha);
	conn_destroy(&s.hb);
	conn_destroy(&s.vhold);
	if (s.vmr)
		ibv_dereg_mr(s.vmr);
	if (s.hsrc_mr)
		ibv_dereg_mr(s.hsrc_mr);
	if (s.hdst_mr)
		ibv_dereg_mr(s.hdst_mr);
	if (s.hrcv_mr)
		ibv_dereg_mr(s.hrcv_mr);
	if (s.vpd)
		ibv_dealloc_pd(s.vpd);
	free(s.vbuf);
	free(s.hsrc);
	free(s.hdst);
	free(s.hrcv);
	free(before);
	free(after);
	return rc;
}

/* --- fair: the fenced-QP scenario of the WQE-prefetch chapter ------------- */

#define FAIR_WRS	100	/* QP1's work requests */
#define FAIR_READ	9	/* the Read (wr_id), responses held back */
#define FAIR_FENCED	10	/* the fenced Write of what it read */
#define FAIR_SMALL	256	/* bytes per QP1 WR */
#define FAIR_DEPTH	16	/* QP2's Writes in flight */
#define FAIR_PATTERN	0x5a

/*
 * Server memory: X (FAIR_SMALL, the pattern, Read by QP1), Y (FAIR_SMALL,
 * the fenced Write's target), Z (FAIR_SMALL, QP1's other Writes), then
 * QP2's sink of --size bytes.
 */
static int fair_server(struct role *r)
{
	const struct params *p = &r->p;
	size_t len = 3 * FAIR_SMALL + (size_t)p->size;
	struct qp_params qpp = qp_params(p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs1, theirs2;
	__u64 peer_fail, v = 0, peer_v = 0, n = 0;
	struct ibv_mr *mr = NULL;
	struct conn c1 = {}, c2 = {};
	size_t first;
	__u8 *buf;
	int rc = ST_EXIT_FAIL;

	buf = st_buf_alloc(len, 0);
	if (!buf || conn_create(&c1, r, r->pd, 4, 4) ||
	    conn_create(&c2, r, r->pd, 4, 4))
		goto out_destroy;
	memset(buf, FAIR_PATTERN, FAIR_SMALL);
	mr = reg(r, r->pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
		 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		goto out_destroy;
	st_peer_add_mr(&mine, mr);
	if (conn_setup(&c1, &mine, &theirs1, &qpp) ||
	    conn_setup(&c2, &mine, &theirs2, &qpp) || st_chan_sync(&r->ch) ||
	    st_chan_swap(&r->ch, &v, &peer_v, 1))
		goto out_destroy;
	/* The client is done: Y holds what the fenced Write carried. */
	n = count_not(buf + FAIR_SMALL, FAIR_SMALL, FAIR_PATTERN, &first);
	if (n)
		st_diag(r->name, "Y: %llu bytes not what the Read got (at %zu: %#x): fence broken",
			n, first, buf[FAIR_SMALL + first]);
	rc = final_verdict(r, n != 0, &peer_fail);
out_destroy:
	conn_destroy(&c2);
	conn_destroy(&c1);
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
	return rc;
}

struct fair_qp1 {
	struct conn *c;
	__u32 done;		/* completions seen, in order */
	__u32 bad;		/* out of order or failed */
	double read_done;	/* when the Read completed; 0: not yet */
};

/* One of QP1's completions: check its order, note the Read's. */
static void fair_take_qp1(struct role *r, struct fair_qp1 *q,
			  const struct ibv_wc *wc)
{
	q->done++;
	if (wc->status != IBV_WC_SUCCESS || wc->wr_id != q->done) {
		if (q->bad++ < 5)
			st_diag(r->name, "QP1: CQE %u: wr_id %llu %s, want %u success",
				q->done, (unsigned long long)wc->wr_id,
				ibv_wc_status_str(wc->status), q->done);
	}
	if (wc->wr_id == FAIR_READ)
		q->read_done = st_now_s();
}

/* Take QP1's completions that are there. */
static void fair_poll_qp1(struct role *r, struct fair_qp1 *q)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(q->c->cq, 1, &wc) > 0)
		fair_take_qp1(r, q, &wc);
}

/*
 * QP2 streams Writes for @ms, FAIR_DEPTH in flight; returns the bytes
 * completed within the window per second, or a negative value on error.
 * QP1's completions (@q, may be NULL) are taken within the window.
 */
static double fair_stream(struct role *r, struct conn *c2, __u8 *src,
			  __u32 lkey, __u64 raddr, __u32 rkey, int ms,
			  struct fair_qp1 *q)
{
	__u32 size = r->p.size, inflight = 0;
	double t0 = st_now_s(), end = t0 + ms / 1000.0, t;
	__u64 bytes = 0;
	struct ibv_wc wc[FAIR_DEPTH];
	int i, n;

	for (;;) {
		t = st_now_s();
		while (t < end && inflight < FAIR_DEPTH) {
			if (post_send1(c2, IBV_WR_RDMA_WRITE, WR_WRITE, src,
				       size, lkey, raddr, rkey, 0))
				return -1;
			inflight++;
		}
		if (!inflight)
			break;
		n = ibv_poll_cq(c2->cq, FAIR_DEPTH, wc);
		if (n < 0)
			return -1;
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				st_diag(r->name, "QP2: Write: %s",
					ibv_wc_status_str(wc[i].status));
				return -1;
			}
			inflight--;
			if (t < end)
				bytes += size;
		}
		if (q && t < end)
			fair_poll_qp1(r, q);
		if (stopped() || st_now_s() > end + 30) {
			st_diag(r->name, "QP2: %u Writes not completed 30 s after the window",
				inflight);
			return -1;
		}
	}
	return bytes / (end - t0);
}

static int fair_client(struct role *r)
{
	struct line sum = {};
	const struct params *p = &r->p;
	size_t len = (size_t)p->size + 2 * FAIR_SMALL;
	struct qp_params qpp2 = qp_params(p, 14, 7, 7, 12);
	/*
	 * QP1 asks again for the Read whose responses the set-up drops until
	 * the window is over: every 1 s (timeout 18), 7 times at most.
	 */
	struct qp_params qpp1 = { 18, 7, 7, 12 };
	struct st_peer mine = {}, theirs1, theirs2;
	struct ibv_send_wr wrs[FAIR_WRS], *bad;
	struct ibv_sge sges[FAIR_WRS];
	__u64 fail = 0, peer_fail, v = 0, peer_v, raddr;
	struct fair_qp1 q = {};
	struct ibv_mr *mr = NULL;
	struct conn c1 = {}, c2 = {};
	double alone1, alone2, fenced, alone, t_post, in_window;
	__u32 rkey, i, done_in_window;
	__u8 *buf, *l, *w;
	int rc = ST_EXIT_FAIL;

	buf = st_buf_alloc(len, 0x33);
	if (!buf || conn_create(&c1, r, r->pd, FAIR_WRS + 1, 1) ||
	    conn_create(&c2, r, r->pd, FAIR_DEPTH + 1, 1))
		goto out_destroy;
	l = buf + p->size;
	w = l + FAIR_SMALL;
	mr = reg(r, r->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || conn_setup(&c1, &mine, &theirs1, &qpp1) ||
	    conn_setup(&c2, &mine, &theirs2, &qpp2))
		goto out_destroy;
	if (theirs1.nmr < 1 ||
	    theirs1.mr[0].len < 3 * FAIR_SMALL + (size_t)p->size) {
		st_diag(r->name, "peer buffer too small");
		goto out_destroy;
	}
	raddr = theirs1.mr[0].addr;
	rkey = theirs1.mr[0].rkey;
	if (st_chan_sync(&r->ch))
		goto out_destroy;
	q.c = &c1;

	/* Warm up (routes, caches, the CPU's frequency of the moment). */
	if (fair_stream(r, &c2, buf, mr->lkey, raddr + 3 * FAIR_SMALL, rkey,
			opt.window_ms / 3, &q) < 0)
		goto out_destroy;
	/*
	 * Every window polls QP1's CQ too (empty when QP1 is idle), so the
	 * process does the same work in each.
	 */
	alone1 = fair_stream(r, &c2, buf, mr->lkey, raddr + 3 * FAIR_SMALL,
			     rkey, opt.window_ms, &q);
	if (alone1 < 0)
		goto out_destroy;

	/* QP1: Writes 1-8, the Read 9 (X -> L), FENCE Write 10 (L -> Y), ... */
	for (i = 0; i < FAIR_WRS; i++) {
		__u32 id = i + 1;

		if (id == FAIR_READ)
			st_wr_init(&wrs[i], &sges[i], IBV_WR_RDMA_READ, id, l,
				   FAIR_SMALL, mr->lkey, raddr, rkey,
				   IBV_SEND_SIGNALED);
		else if (id == FAIR_FENCED)
			st_wr_init(&wrs[i], &sges[i], IBV_WR_RDMA_WRITE, id, l,
				   FAIR_SMALL, mr->lkey, raddr + FAIR_SMALL, rkey,
				   IBV_SEND_SIGNALED | IBV_SEND_FENCE);
		else
			st_wr_init(&wrs[i], &sges[i], IBV_WR_RDMA_WRITE, id, w,
				   FAIR_SMALL, mr->lkey, raddr + 2 * FAIR_SMALL,
				   rkey, IBV_SEND_SIGNALED);
		wrs[i].next = i + 1 < FAIR_WRS ? &wrs[i + 1] : NULL;
	}
	t_post = st_now_s();
	i = ibv_post_send(c1.qp, wrs, &bad);
	if (i) {
		st_diag(r->name, "QP1: post_send: %s", strerror(i));
		goto out_destroy;
	}
	printf("# fenced window begins\n");
	fflush(stdout);
	fenced = fair_stream(r, &c2, buf, mr->lkey, raddr + 3 * FAIR_SMALL,
			     rkey, opt.window_ms, &q);
	/* The window's end, not when its last Writes drained. */
	in_window = t_post + opt.window_ms / 1000.0;
	done_in_window = q.done;
	if (fenced < 0)
		goto out_destroy;
	printf("# fenced window ends\n");
	fflush(stdout);

	/* Everything of QP1's, in order, once the Read's responses come. */
	while (q.done < FAIR_WRS && !stopped()) {
		struct ibv_wc wc;

		if (wait_cqe(&c1, &wc))
			break;
		fair_take_qp1(r, &q, &wc);
	}
	alone2 = fair_stream(r, &c2, buf, mr->lkey, raddr + 3 * FAIR_SMALL,
			     rkey, opt.window_ms, &q);
	if (alone2 < 0)
		goto out_destroy;
	alone = (alone1 + alone2) / 2;

	if (q.done != FAIR_WRS || q.bad) {
		st_diag(r->name, "QP1: %u of %u completions, %u wrong", q.done,
			FAIR_WRS, q.bad);
		fail = 1;
	}
	/* The scenario holds only if QP1 stayed fenced through the window. */
	if (!q.read_done || q.read_done < in_window) {
		st_diag(r->name,
			"the Read completed %.0f ms after the post, in the window: not held back",
			q.read_done ? (q.read_done - t_post) * 1e3 : -1.0);
		fail = 1;
	}
	if (done_in_window != FAIR_READ - 1) {
		st_diag(r->name,
			"QP1: %u completions during the window, want the %u before the Read",
			done_in_window, FAIR_READ - 1);
		fail = 1;
	}
	if (fenced < 0.8 * alone) {
		st_diag(r->name,
			"QP2 beside fenced QP1: %.1f MiB/s, %.0f%% of alone (%.1f, %.1f) < 80%%",
			fenced / 1048576, 100 * fenced / alone, alone1 / 1048576,
			alone2 / 1048576);
		fail = 1;
	}
	if (st_chan_swap(&r->ch, &v, &peer_v, 1))
		goto out_destroy;
	rc = final_verdict(r, fail || stopped(), &peer_fail);
	line_add(&sum, "fair: %s QP2 %u B Writes: alone %.1f/%.1f MiB/s, ",
		 stopped() ? "INTERRUPTED" : rc ? "FAIL" : "PASS", p->size,
		 alone1 / 1048576, alone2 / 1048576);
	line_add(&sum, "while QP1 fenced %.1f MiB/s (%.0f%%);", fenced / 1048576,
		 alone > 0 ? 100 * fenced / alone : 0);
	line_add(&sum, " QP1 %u/%u in order, Read done after %.0f ms, fence %s",
		 q.done - q.bad, FAIR_WRS,
		 q.read_done ? (q.read_done - t_post) * 1e3 : -1.0,
		 peer_fail ? "BROKEN" : "held");
	line_print(&sum);
out_destroy:
	conn_destroy(&c2);
	conn_destroy(&c1);
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
	return rc;
}

/* --- the tests, roles, main ---------------------------------------------- */

static int order_client(struct role *r)
{
	return order_run(r, false);
}

static int awrite_client(struct role *r)
{
	return order_run(r, true);
}

/* --- bigread -------------------------------------------------------------- */

/*
 * bigread: one Read of --size bytes (up to 2 GiB), then a Write and a
 * Read of 4 KiB behind it. At path MTU 256 a 2 GiB Read takes 2^23
 * response PSNs, IBA's whole outstanding window: the requester must send
 * it alone and go on after it (the PSNs after it were once taken for
 * "behind the oldest unacknowledged" and the QP hung). The server's
 * buffer is random data by 1 MiB chunks; the client checks every byte.
 */
#define BIGREAD_CHUNK	(1024u * 1024)
#define BIGREAD_TAIL	4096u

static void bigread_fill(__u8 *buf, size_t len, __u64 seed)
{
	size_t off;

	for (off = 0; off < len; off += BIGREAD_CHUNK)
		st_rnd_fill(buf + off, len - off < BIGREAD_CHUNK ?
				len - off : BIGREAD_CHUNK,
			    st_rnd_seed(seed, off / BIGREAD_CHUNK));
}

static int bigread_server(struct role *r)
{
	const struct params *p = &r->p;
	struct qp_params qpp = qp_params(p, 14, 7, 7, 12);
	struct st_peer mine = {}, theirs;
	struct ibv_mr *mr = NULL;
	__u64 peer_fail, done;
	struct conn c;
	__u8 *buf;
	int rc = ST_EXIT_FAIL;

	buf = st_buf_alloc(p->size, 0);
	if (!buf || conn_create(&c, r, r->pd, 4, 1))
		goto out_free;
	bigread_fill(buf, p->size, p->seed);
	mr = reg(r, r->pd, buf, p->size, IBV_ACCESS_LOCAL_WRITE |
		 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		goto out_destroy;
	st_peer_add_mr(&mine, mr);
	if (conn_setup(&c, &mine, &theirs, &qpp) || st_chan_sync(&r->ch))
		goto out_destroy;
	/*
	 * The client reads, writes and reads again, then says it is done:
	 * wait for that in silence (a message would cut its CQ wait short).
	 */
	r->ch.wait_ms = r->cq_wait_ms;
	if (st_chan_recv_u64(&r->ch, &done))
		goto out_destroy;
	rc = final_verdict(r, 0, &peer_fail);
out_destroy:
	conn_destroy(&c);
	if (mr)
		ibv_dereg_mr(mr);
out_free:
	free(buf);
	return rc;
}

static int bigread_client(struct role *r)
{
	const struct params *p = &r->p;
	struct qp_params qpp = qp_params(p, 14, 7, 7, 12);
	struct ibv_mr *mr = NULL, *tmr = NULL;
	struct st_peer mine = {}, theirs;
	__u8 *buf, *want, *tail;
	__u64 bad = 0, first = 0, peer_fail, off;
	size_t n, j;
	double t0;
	struct conn c;
	int rc = ST_EXIT_FAIL, fail = 1;

	buf = st_buf_alloc(p->size, 0);
	want = st_buf_alloc(BIGREAD_CHUNK, 0);
	tail = st_buf_alloc(2 * BIGREAD_TAIL, 0);
	if (!buf || !want || !tail || conn_create(&c, r, r->pd, 4, 1))
		goto out_free;
	memset(buf, 0x5a, p->size);
	mr = reg(r, r->pd, buf, p->size, IBV_ACCESS_LOCAL_WRITE);
	tmr = reg(r, r->pd, tail, 2 * BIGREAD_TAIL, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !tmr || conn_setup(&c, &mine, &theirs, &qpp))
		goto out_destroy;
	if (theirs.nmr < 1 || theirs.mr[0].len < p->size ||
	    p->size < BIGREAD_TAIL) {
		st_diag(r->name, "peer buffer too small (or --size < 4096)");
		if (st_chan_sync(&r->ch))
			goto out_destroy;
		goto out_verdict;
	}
	if (st_chan_sync(&r->ch))
		goto out_destroy;
	t0 = st_now_s();
	if (post_send1(&c, IBV_WR_RDMA_READ, WR_READ, buf, p->size, mr->lkey,
		       theirs.mr[0].addr, theirs.mr[0].rkey, 0) ||
	    expect_ok(&c, WR_READ, "the big Read"))
		goto out_verdict;
	if (!r->quiet)
		printf("# bigread: %u bytes in %.1f s\n", p->size,
		       st_now_s() - t0);
	/* Traffic after it: a Write, and a Read of what it wrote. */
	st_rnd_fill(tail, BIGREAD_TAIL, st_rnd_seed(p->seed, ~0ull));
	memset(tail + BIGREAD_TAIL, 0, BIGREAD_TAIL);
	if (post_send1(&c, IBV_WR_RDMA_WRITE, WR_WRITE, tail, BIGREAD_TAIL,
		       tmr->lkey, theirs.mr[0].addr, theirs.mr[0].rkey, 0) ||
	    expect_ok(&c, WR_WRITE, "the Write after it") ||
	    post_send1(&c, IBV_WR_RDMA_READ, WR_READ, tail + BIGREAD_TAIL,
		       BIGREAD_TAIL, tmr->lkey, theirs.mr[0].addr,
		       theirs.mr[0].rkey, 0) ||
	    expect_ok(&c, WR_READ, "the Read after it"))
		goto out_verdict;
	if (memcmp(tail, tail + BIGREAD_TAIL, BIGREAD_TAIL)) {
		st_diag(r->name, "the Read after the big one read wrong bytes");
		goto out_verdict;
	}
	for (off = 0; off < p->size; off += n) {
		n = p->size - off < BIGREAD_CHUNK ? p->size - off :
						     BIGREAD_CHUNK;
		st_rnd_fill(want, n, st_rnd_seed(p->seed, off / BIGREAD_CHUNK));
		if (!memcmp(buf + off, want, n))
			continue;
		for (j = 0; j < n; j++)
			if (buf[off + j] != want[j] && !bad++)
				first = off + j;
	}
	if (bad)
		st_diag(r->name, "%llu bytes read wrong, the first at %llu",
			bad, first);
	fail = bad != 0;
out_verdict:
	if (st_chan_send_u64(&r->ch, 1))
		goto out_destroy;
	rc = final_verdict(r, fail, &peer_fail);
	if (!r->quiet)
		printf("bigread: %s (%u bytes, MTU %d)\n", rc ? "FAIL" : "PASS",
		       p->size, 128 << r->dev->mtu);
out_destroy:
	conn_destroy(&c);
	if (mr)
		ibv_dereg_mr(mr);
	if (tmr)
		ibv_dereg_mr(tmr);
out_free:
	free(tail);
	free(want);
	free(buf);
	return rc;
}

typedef int (*role_fn)(struct role *r);

/* rc_tests[] flags */
#define RC_SOLO		0x1	/* --loop only: .client drives both ends */

/*
 * The tests, by their subcommand name. A test's number (its place here,
 * from 1) goes to the server in the hello: append new tests at the end.
 */
static const struct rc_test {
	const char *name;
	role_fn server, client;
	unsigned int flags;
} rc_tests[] = {
	{ .name = "order", .server = order_server, .client = order_client },
	{ .name = "integrity", .server = integrity_server, .client = integrity_client },
	{ .name = "retry", .server = retry_server, .client = retry_client },
	{ .name = "rnr", .server = rnr_server, .client = rnr_client },
	{ .name = "access", .server = access_server, .client = access_client },
	{ .name = "scribble", .client = scribble_run, .flags = RC_SOLO },
	{ .name = "awrite", .server = awrite_server, .client = awrite_client },
	{ .name = "fence", .server = fence_server, .client = fence_client },
	{ .name = "solicit", .server = solicit_server, .client = solicit_client },
	{ .name = "overrun", .server = overrun_server, .client = overrun_client },
	{ .name = "xfer", .server = xfer_server, .client = xfer_client },
	{ .name = "fair", .server = fair_server, .client = fair_client },
	{ .name = "bigread", .server = bigread_server, .client = bigread_client },
};

/* Test number @id (from 1), NULL if there is none. */
static const struct rc_test *rc_test(__u64 id)
{
	return id >= 1 && id <= ST_ARRAY_SIZE(rc_tests) ? &rc_tests[id - 1] :
	       NULL;
}

static const char *test_name(__u64 id)
{
	return rc_test(id) ? rc_test(id)->name : "?";
}

static int role_run(struct role *r)
{
	int rc;

	r->pd = ibv_alloc_pd(r->dev->ctx);
	if (!r->pd) {
		st_diag(r->name, "alloc_pd: %s", strerror(errno));
		rc = ST_EXIT_FAIL;
	} else if (hello(r)) {
		rc = ST_EXIT_FAIL;
	} else {
		rc = r->server ? rc_test(r->p.test)->server(r) :
				 rc_test(r->p.test)->client(r);
	}
	/* the peer sees EOF at once if this side failed */
	st_chan_close(&r->ch);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	return rc;
}

static void *role_thread(void *arg)
{
	struct role *r = arg;

	return (void *)(intptr_t)role_run(r);
}

static const char *const help_text[] = {
	"srnic_rc_test [OPTIONS] (--server | --connect ADDR | --loop) TEST",
	"TEST: order | awrite | fence | solicit | overrun | xfer |",
	"      integrity | retry | rnr | access | fair | bigread |",
	"      scribble (--loop)",
	"  --dev NAME         RDMA device (default: the first)",
	"  --gid-index N      GID index (default: first RoCEv2 IPv4 GID)",
	"  --mtu BYTES        path MTU 256..4096 (default: port active MTU)",
	"  --port TCPPORT     control connection port (default 18515)",
	"  --cq-wait SECS     longest wait for one completion (default 30)",
	"  --timeout N        local ACK timeout exponent (14; retry: 10)",
	"  --retry-cnt N      transport retries (7; retry: 1)",
	"  --min-rnr-timer N  responder RNR NAK timer code (12; rnr: 1)",
	"  --seed N           data seed (default: from the clock)",
	"  -v, --verbose      more diagnostics (twice: even more)",
	"order:     --gens N (10000) --writes K (4) --size BYTES (16K)",
	"           --imm-len N (0)",
	"awrite:    order with an RDMA Atomic Write of the generation into",
	"           a flag after the data, watched in memory: --gens --writes",
	"           --size",
	"fence:     per generation Write X, Read X->L, FENCE Write L->Y,",
	"           Read Y, 8 Reads, 4 Fetch&Adds; max_rd_atomic 2:",
	"           --gens N --size BYTES (X, Y); --no-fence (must fail)",
	"xfer:      Send, Send+Imm, Write, Write+Imm, Read at 0, 1, MTU-1,",
	"           MTU, MTU+1 bytes, 64 KiB, 4 MiB; CmpSwap, FetchAdd;",
	"           --idle MS: pause after each cell (nothing outstanding);",
	"           --xfer-max BYTES: only the size classes up to BYTES",
	"fair:      QP1: 100 WRs, the 10th fenced behind a Read whose",
	"           responses the set-up drops until the fenced window is",
	"           over (QP1 retransmits every 1 s); QP2:",
	"           Writes of --size BYTES, 16 in flight, alone for --window",
	"           MS (2000), while QP1 is fenced, alone again; fenced >= 80%",
	"integrity: --bytes N (256M) --chunk N (1M)",
	"rnr:       --rnr-delay MS (100)",
	"bigread:   one Read of --size BYTES (up to 2G), then a Write and",
	"           a Read behind it; every byte checked (2G at --mtu 256:",
	"           2^23 PSNs, the whole outstanding window)",
	"scribble:  --rounds N (1000)",
	"           --scribble-mode mixed|random|fields|opcode (mixed)",
	"           --strict: fail if a victim stalls (error, no flush)",
	"Sizes take K, M, G suffixes.  Exit: 0 pass, 1 fail, 4 skip.",
};

static void print_help(FILE *f)
{
	size_t i;

	fputs("usage: ", f);
	for (i = 0; i < ST_ARRAY_SIZE(help_text); i++)
		fprintf(f, "%s\n", help_text[i]);
}

static __u64 parse_num(const char *s, const char *what)
{
	static const char suffix[] = "kmg";
	const char *sfx;
	char *end;
	__u64 v;

	errno = 0;
	v = strtoull(s, &end, 0);
	sfx = *end ? strchr(suffix, *end | 0x20) : NULL;
	if (sfx) {
		v <<= 10 * (sfx - suffix + 1);
		end++;
	}
	if (errno || *end || *s == '-' || end == s) {
		fprintf(stderr, "bad %s: %s\n", what, s);
		exit(2);
	}
	return v;
}

/* --name, what it sets: an option taking a number */
struct num_opt {
	const char *name;
	void *var;
	int size;	/* of *var: 4 or 8 */
};

static const struct num_opt num_opts[] = {
	{ "gid-index", &opt.gid_index, 4 }, { "mtu", &opt.mtu, 4 },
	{ "cq-wait", &opt.cq_wait_s, 4 }, { "gens", &opt.p.gens, 4 },
	{ "writes", &opt.p.writes, 4 }, { "size", &opt.p.size, 4 },
	{ "imm-len", &opt.p.imm_len, 4 }, { "bytes", &opt.p.bytes, 8 },
	{ "chunk", &opt.p.chunk, 4 }, { "rounds", &opt.p.rounds, 4 },
	{ "timeout", &opt.p.timeout, 4 },
	{ "retry-cnt", &opt.p.retry_cnt, 4 },
	{ "min-rnr-timer", &opt.p.min_rnr_timer, 4 },
	{ "rnr-delay", &opt.p.rnr_delay_ms, 4 },
	{ "seed", &opt.p.seed, 8 },
	{ "idle", &opt.idle_ms, 4 }, { "xfer-max", &opt.xfer_max, 4 },
	{ "window", &opt.window_ms, 4 },
};

#define O_NUM 0x100	/* getopt value of num_opts[i]: O_NUM + i */

enum {
	O_DEV = 0x200, O_PORT, O_SERVER, O_CONNECT, O_LOOP, O_SMODE,
	O_STRICT, O_NO_FENCE,
};

static void check_args(void)
{
	const struct params *p = &opt.p;
	const char *m = opt.scribble_mode;

	if (opt.mtu && !st_mtu_enum(opt.mtu)) {
		fprintf(stderr, "--mtu: 256, 512, 1024, 2048 or 4096\n");
		exit(2);
	}
	if (strcmp(m, "mixed") && strcmp(m, "random") &&
	    strcmp(m, "fields") && strcmp(m, "opcode")) {
		fprintf(stderr, "--scribble-mode: mixed, random, fields or opcode\n");
		exit(2);
	}
	if (p->timeout > 31 || p->retry_cnt > 7 || p->min_rnr_timer > 31 ||
	    !p->writes || !p->size || !p->chunk || !p->bytes || !p->gens ||
	    ((__u64)p->writes * p->size > 1u << 30 &&
	     strcmp(rc_test(p->test)->name, "bigread")) ||
	    p->size > 1u << 31 ||
	    p->imm_len > p->writes * p->size || p->chunk > 1u << 30) {
		fprintf(stderr, "parameter out of range\n");
		exit(2);
	}
}

static void parse_args(int argc, char **argv)
{
	struct option lo[ST_ARRAY_SIZE(num_opts) + 11] = {
		{ "dev", 1, NULL, O_DEV }, { "port", 1, NULL, O_PORT },
		{ "server", 0, NULL, O_SERVER },
		{ "connect", 1, NULL, O_CONNECT }, { "loop", 0, NULL, O_LOOP },
		{ "scribble-mode", 1, NULL, O_SMODE },
		{ "strict", 0, NULL, O_STRICT },
		{ "no-fence", 0, NULL, O_NO_FENCE },
		{ "verbose", 0, NULL, 'v' }, { "help", 0, NULL, 'h' },
	};
	const struct num_opt *no;
	size_t i, n = 10;
	int c, t;
	__u64 v;

	for (i = 0; i < ST_ARRAY_SIZE(num_opts); i++, n++) {
		lo[n].name = num_opts[i].name;
		lo[n].has_arg = 1;
		lo[n].val = O_NUM + i;
	}
	while ((c = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
		if (c >= O_NUM && c < O_NUM + (int)ST_ARRAY_SIZE(num_opts)) {
			no = &num_opts[c - O_NUM];
			v = parse_num(optarg, no->name);
			if (no->size == 8)
				*(__u64 *)no->var = v;
			else
				*(__u32 *)no->var = v;
			continue;
		}
		switch (c) {
		case O_DEV:
			opt.dev = optarg;
			break;
		case O_PORT:
			opt.port = optarg;
			break;
		case O_SERVER:
			opt.server = true;
			break;
		case O_CONNECT:
			opt.connect = optarg;
			break;
		case O_LOOP:
			opt.loop = true;
			break;
		case O_SMODE:
			opt.scribble_mode = optarg;
			break;
		case O_STRICT:
			opt.strict = true;
			break;
		case O_NO_FENCE:
			opt.no_fence = true;
			break;
		case 'v':
			opt.verbose++;
			break;
		case 'h':
			print_help(stdout);
			exit(0);
		default:
			print_help(stderr);
			exit(2);
		}
	}
	if (optind != argc - 1) {
		print_help(stderr);
		exit(2);
	}
	for (t = 1; rc_test(t); t++)
		if (!strcmp(argv[optind], rc_test(t)->name))
			opt.p.test = t;
	if (!rc_test(opt.p.test) ||
	    opt.server + !!opt.connect + opt.loop != 1 ||
	    (rc_test(opt.p.test)->flags & RC_SOLO && !opt.loop)) {
		print_help(stderr);
		exit(2);
	}
	check_args();
	if (!opt.p.seed)
		opt.p.seed = st_rnd_seed(getpid(), st_now_s() * 1e9);
}

int main(int argc, char **argv)
{
	struct role srv = { .name = "server", .server = true,
			    .ch = { .fd = -1, .who = "server" } };
	struct role cli = { .name = "client",
			    .ch = { .fd = -1, .who = "client" } };
	pthread_t th;
	struct st_dev d;
	void *ret;
	int rc, sv[2];

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	rc = dev_open(&d, &opt);
	if (rc)
		return rc;
	srv.dev = &d;
	cli.dev = &d;
	srv.p = opt.p;
	cli.p = opt.p;
	srv.cq_wait_ms = opt.cq_wait_s * 1000;
	cli.cq_wait_ms = srv.cq_wait_ms;
	srv.verbose = opt.verbose;
	cli.verbose = opt.verbose;

	if (rc_test(opt.p.test)->flags & RC_SOLO) {
		cli.name = rc_test(opt.p.test)->name;
		cli.pd = ibv_alloc_pd(d.ctx);
		rc = cli.pd ? rc_test(opt.p.test)->client(&cli) : ST_EXIT_FAIL;
		if (cli.pd)
			ibv_dealloc_pd(cli.pd);
	} else if (opt.loop) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
			perror("socketpair");
			return ST_EXIT_FAIL;
		}
		srv.ch.fd = sv[0];
		cli.ch.fd = sv[1];
		srv.quiet = true;
		if (pthread_create(&th, NULL, role_thread, &srv)) {
			perror("pthread_create");
			return ST_EXIT_FAIL;
		}
		rc = role_run(&cli);
		pthread_join(th, &ret);
		if ((intptr_t)ret != ST_EXIT_PASS && rc == ST_EXIT_PASS)
			rc = (intptr_t)ret;
	} else if (opt.server) {
		srv.ch.fd = st_tcp_listen_accept(opt.port);
		rc = srv.ch.fd < 0 ? ST_EXIT_FAIL : role_run(&srv);
	} else {
		cli.ch.fd = st_tcp_connect(opt.connect, opt.port, 20);
		rc = cli.ch.fd < 0 ? ST_EXIT_FAIL : role_run(&cli);
	}
	st_dev_close(&d);
	return rc;
}
