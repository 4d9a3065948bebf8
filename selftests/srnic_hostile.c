// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_hostile: hostile user space against an RDMA device, case by case,
 * each beside a victim.
 *
 * Every case runs an attacker in this process while a victim process
 * (forked first; its own device context, PD, CQs and QPs) moves verified
 * traffic on the same device: RDMA Writes and Sends of its own seeded
 * data, every byte and every completion checked. The attacker writes the
 * rings it shares with the kernel as no library would (the rxe ABI: the
 * rings are mapped from the uverbs device; the send doorbell is a
 * POST_SEND command with no work requests). A case passes when
 *   - the attacker's QP fails alone and in bounded time (or, where the
 *     case says so, ends its work), with every verb returning,
 *   - nothing of the victim's reaches the attacker: its peer's memory
 *     holds no victim byte and its CQs no victim wr_id, and
 *   - the victim saw only its own data and completions, all successful.
 * The kernel log is the calling script's to check.
 *
 * Usage: srnic_hostile --dev DEV [--gid-index N] [--rounds N] [-v] [CASE...]
 *
 * Cases (all by default):
 *   sq-prod-back    the send ring full and prefetched in SQD, its producer
 *                   index set back to the consumer and one WQE posted
 *                   there (the index walked once round the ring), then
 *                   back to RTS
 *   sq-prod-random  --rounds QPs of 2 to 64 ring slots: valid WQEs posted,
 *                   then random producer index values, each with a
 *                   doorbell, in RTS and in SQD
 *   rq-prod-spin    a thread keeps moving the receive ring's producer
 *                   index while the QP is moved to ERR: the modify
 *                   returns and at most the ring's capacity is flushed
 *   local-op-budget 512 Bind MW work requests (local operations: nothing
 *                   goes on the wire) in one post: they complete, and
 *                   cost the transmit gate at least one round per
 *                   tx_budget of them (the hw counter tx_gate_rounds)
 *
 * Exit status: 0 all passed, 1 a case failed, 4 nothing could run (no
 * rings of the rxe ABI found, for example).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "srnic_test.h"

#define VIC_WRID	0x5649430000000000ull	/* "VIC" in the top bytes */
#define ATK_WRID	0x41544b0000000000ull	/* "ATK" */
#define WRID_TAG(w)	((w) & 0xffffff0000000000ull)
#define VIC_MARK	0x214d495443495621ull	/* "!VICTIM!" */
#define PROBE_WRID	(ATK_WRID | 0xfeedull)
#define VIC_LEN		4096
#define SINK_LEN	(1024 * 1024)

static struct {
	const char *dev;
	int gid_index;
	unsigned int rounds;
	int verbose;
} opt = { .gid_index = -1, .rounds = 200 };

static const char *const who = "hostile";

/* --- one device, QP pairs on it -------------------------------------------- */

/*
 * A connected RC pair on one device: @a sends, @b receives (loopback
 * through the device's own GID). Each QP has its own CQ.
 */
struct pair {
	struct ibv_pd *pd;
	struct ibv_cq *acq, *bcq;
	struct ibv_qp *a, *b;
};

/* The pair's CQs: first, so that its QPs' rings can be told from theirs. */
static int pair_cqs(struct st_dev *d, struct ibv_pd *pd, struct pair *p,
		    int cqe)
{
	memset(p, 0, sizeof(*p));
	p->pd = pd;
	p->acq = ibv_create_cq(d->ctx, cqe, NULL, NULL, 0);
	p->bcq = ibv_create_cq(d->ctx, 256, NULL, NULL, 0);
	return p->acq && p->bcq ? 0 : -1;
}

static int pair_qps(struct st_dev *d, struct pair *p,
		    const struct ibv_qp_cap *acap)
{
	struct ibv_qp_cap bcap = { .max_send_wr = 4, .max_recv_wr = 64,
				   .max_send_sge = 1, .max_recv_sge = 1 };
	unsigned int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ;
	struct st_path pa = {
		.dgid = d->gid, .sgid_index = d->gid_index, .port = d->port,
		.mtu = d->mtu, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.max_rd_atomic = 1, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7,
	};
	struct st_path pb = pa;

	p->a = st_qp_create(p->pd, p->acq, p->acq, IBV_QPT_RC, acap);
	p->b = st_qp_create(p->pd, p->bcq, p->bcq, IBV_QPT_RC, &bcap);
	if (!p->a || !p->b)
		return -1;
	pa.dest_qpn = p->b->qp_num;
	pa.rq_psn = 0x200;
	pa.sq_psn = 0x100;
	pb.dest_qpn = p->a->qp_num;
	pb.rq_psn = 0x100;
	pb.sq_psn = 0x200;
	if (st_qp_init(p->a, d->port, access) ||
	    st_qp_init(p->b, d->port, access) || st_qp_rtr(p->a, &pa) ||
	    st_qp_rtr(p->b, &pb) || st_qp_rts(p->a, &pa) ||
	    st_qp_rts(p->b, &pb))
		return -1;
	return 0;
}

static int pair_up(struct st_dev *d, struct ibv_pd *pd, struct pair *p,
		   const struct ibv_qp_cap *acap, int cqe)
{
	return pair_cqs(d, pd, p, cqe) || pair_qps(d, p, acap) ? -1 : 0;
}

static void pair_down(struct pair *p)
{
	if (p->a)
		ibv_destroy_qp(p->a);
	if (p->b)
		ibv_destroy_qp(p->b);
	if (p->acq)
		ibv_destroy_cq(p->acq);
	if (p->bcq)
		ibv_destroy_cq(p->bcq);
	memset(p, 0, sizeof(*p));
}

static int modify_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* --- the rings of the rxe ABI ---------------------------------------------- */

#define MAX_MAPS	4096

static __u32 ring_prod(struct rxe_queue_buf *q)
{
	return __atomic_load_n(&q->producer_index, __ATOMIC_ACQUIRE);
}

static __u32 ring_cons(struct rxe_queue_buf *q)
{
	return __atomic_load_n(&q->consumer_index, __ATOMIC_ACQUIRE);
}

static void ring_set_prod(struct rxe_queue_buf *q, __u32 v)
{
	__atomic_store_n(&q->producer_index, v, __ATOMIC_RELEASE);
}

/*
 * Of the mappings added between two snapshots, the ring whose element
 * before the producer index starts with @wr_id (send and receive WQEs
 * both begin with it).
 */
static struct rxe_queue_buf *ring_find(const struct st_range *before, int nb,
				       const struct st_range *after, int na,
				       __u64 wr_id)
{
	struct rxe_queue_buf *q;
	int i, j;

	for (i = 0; i < na; i++) {
		for (j = 0; j < nb; j++)
			if (before[j].start == after[i].start)
				break;
		if (j < nb)
			continue;
		q = (struct rxe_queue_buf *)after[i].start;
		if (st_ring_plausible(q, after[i].end - after[i].start) &&
		    !memcmp(st_ring_slot(q, q->producer_index - 1), &wr_id, 8))
			return q;
	}
	return NULL;
}

/* --- the victim ------------------------------------------------------------ */

/* What the victim reports when told to stop. */
struct vic_result {
	__u64 gens;		/* Write + Send generations verified */
	__u64 errors;		/* completions or data not its own */
	int setup_failed;
	char first[160];	/* the first error */
};

static void vic_fill(__u8 *buf, __u64 gen)
{
	__u64 *w = (__u64 *)buf;
	size_t i;

	st_rnd_fill(buf, VIC_LEN, st_rnd_seed(0x51c7, gen));
	/* A marker every 64 bytes: a victim byte anywhere is found. */
	for (i = 0; i < VIC_LEN / 8; i += 8) {
		w[i] = VIC_MARK;
		w[i + 1] = gen;
	}
}

static void vic_error_line(struct vic_result *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->errors++) {
		va_start(ap, fmt);
		vsnprintf(r->first, sizeof(r->first), fmt, ap);
		va_end(ap);
	}
}

/* vic_error(R, FMT, ...): record an error, its format checked. */
#define vic_error(r, ...)						\
	(ST_FMT_CHECK(__VA_ARGS__), vic_error_line(r, __VA_ARGS__))

/* One completion on @cq, which must be @wr_id and successful. */
static void vic_expect(struct vic_result *r, struct ibv_cq *cq, __u64 wr_id,
		       const char *what)
{
	struct ibv_wc wc;

	if (st_poll_one(cq, &wc, 10000) <= 0) {
		vic_error(r, "%s %#llx: no completion in 10 s", what,
			  (unsigned long long)wr_id);
		return;
	}
	if (wc.wr_id != wr_id || wc.status != IBV_WC_SUCCESS)
		vic_error(r, "%s: wr_id %#llx status %s, expected %#llx success",
			  what, (unsigned long long)wc.wr_id,
			  ibv_wc_status_str(wc.status),
			  (unsigned long long)wr_id);
}

/*
 * The victim: until @stop_fd reads EOF, Write one generation into its
 * peer's memory and Send it into a posted receive; check both completions
 * and every byte. Reports on @res_fd.
 */
static void victim(int ready_fd, int stop_fd, int res_fd)
{
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 4,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct vic_result r = {};
	struct ibv_mr *smr = NULL, *dmr = NULL, *rmr = NULL;
	__u8 *src, *dst, *rcv;
	struct ibv_pd *pd = NULL;
	struct pollfd pfd = { .fd = stop_fd, .events = POLLIN };
	struct pair p = {};
	struct st_dev d;
	__u64 gen;

	if (st_dev_open(&d, opt.dev) || st_gid_pick(&d, opt.gid_index, 0)) {
		r.setup_failed = 1;
		goto out;
	}
	pd = ibv_alloc_pd(d.ctx);
	src = st_buf_alloc(VIC_LEN, 0);
	dst = st_buf_alloc(VIC_LEN, 0);
	rcv = st_buf_alloc(VIC_LEN, 0);
	if (!pd || !src || !dst || !rcv || pair_up(&d, pd, &p, &cap, 64)) {
		r.setup_failed = 1;
		goto out;
	}
	smr = st_mr_reg(pd, src, VIC_LEN, IBV_ACCESS_LOCAL_WRITE, "victim");
	dmr = st_mr_reg(pd, dst, VIC_LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE, "victim");
	rmr = st_mr_reg(pd, rcv, VIC_LEN, IBV_ACCESS_LOCAL_WRITE, "victim");
	if (!smr || !dmr || !rmr) {
		r.setup_failed = 1;
		goto out;
	}
	if (write(ready_fd, "r", 1) != 1)
		goto out;
	for (gen = 1; !poll(&pfd, 1, 0); gen++) {
		struct ibv_wc wc;

		vic_fill(src, gen);
		memset(rcv, 0, VIC_LEN);
		if (st_post_recv(p.b, VIC_WRID | gen, rcv, VIC_LEN,
				 rmr->lkey) ||
		    st_post_send(p.a, IBV_WR_RDMA_WRITE, VIC_WRID | gen, src,
				 VIC_LEN, smr->lkey, (uintptr_t)dst, dmr->rkey,
				 0, IBV_SEND_SIGNALED) ||
		    st_post_send(p.a, IBV_WR_SEND, VIC_WRID | gen | 1ull << 32,
				 src, VIC_LEN, smr->lkey, 0, 0, 0,
				 IBV_SEND_SIGNALED)) {
			vic_error(&r, "gen %llu: post failed: %s",
				  (unsigned long long)gen, strerror(errno));
			break;
		}
		vic_expect(&r, p.acq, VIC_WRID | gen, "Write");
		vic_expect(&r, p.acq, VIC_WRID | gen | 1ull << 32, "Send");
		if (st_poll_one(p.bcq, &wc, 10000) <= 0)
			vic_error(&r, "gen %llu: no receive completion",
				  (unsigned long long)gen);
		else if (wc.wr_id != (VIC_WRID | gen) ||
			 wc.status != IBV_WC_SUCCESS || wc.byte_len != VIC_LEN)
			vic_error(&r, "gen %llu: receive wr_id %#llx %s len %u",
				  (unsigned long long)gen,
				  (unsigned long long)wc.wr_id,
				  ibv_wc_status_str(wc.status), wc.byte_len);
		if (memcmp(dst, src, VIC_LEN))
			vic_error(&r, "gen %llu: the Write's data is not its own",
				  (unsigned long long)gen);
		if (memcmp(rcv, src, VIC_LEN))
			vic_error(&r, "gen %llu: the Send's data is not its own",
				  (unsigned long long)gen);
		if (r.errors)
			break;
		r.gens++;
	}
out:
	if (write(res_fd, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	_exit(0);
}

struct vic {
	pid_t pid;
	int stop_fd, res_fd;
};

static int vic_start(struct vic *v)
{
	int ready[2], stop[2], res[2];
	char c;

	if (pipe(ready) || pipe(stop) || pipe(res))
		return -1;
	fflush(stdout);
	v->pid = fork();
	if (v->pid < 0)
		return -1;
	if (!v->pid) {
		close(ready[0]);
		close(stop[1]);
		close(res[0]);
		victim(ready[1], stop[0], res[1]);
	}
	close(ready[1]);
	close(stop[0]);
	close(res[1]);
	v->stop_fd = stop[1];
	v->res_fd = res[0];
	/* Ready, or EOF after a failed set-up. */
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		close(v->stop_fd);
		close(v->res_fd);
		waitpid(v->pid, NULL, 0);
		return -1;
	}
	close(ready[0]);
	return 0;
}

/* Stop the victim; its verdict. Lets it run @ms more first. */
static bool vic_stop(struct vic *v, int ms, const char *name)
{
	struct vic_result r = {};
	bool ok;

	st_sleep_ms(ms);
	close(v->stop_fd);
	if (read(v->res_fd, &r, sizeof(r)) != sizeof(r))
		r.setup_failed = 1;
	close(v->res_fd);
	waitpid(v->pid, NULL, 0);
	ok = !r.setup_failed && !r.errors && r.gens > 0;
	if (r.setup_failed)
		st_diag(name, "the victim could not set up");
	else if (r.errors)
		st_diag(name, "victim: %llu errors, first: %s",
			(unsigned long long)r.errors, r.first);
	else if (opt.verbose || !r.gens)
		st_diag(name, "victim: %llu generations verified",
			(unsigned long long)r.gens);
	return ok;
}

/* --- the attacker's side --------------------------------------------------- */

struct atk {
	struct st_dev *d;
	struct ibv_pd *pd;
	__u8 *src, *sink;
	struct ibv_mr *smr, *kmr;
	struct st_range *before, *after;
	__u64 cqes, foreign;	/* completions seen; of them not its own */
};

/* A pair whose send ring (or receive ring, @recv) is found; 1: none. */
static int atk_pair(struct atk *k, struct pair *p, __u32 send_wr,
		    __u32 recv_wr, int cqe, bool recv,
		    struct rxe_queue_buf **ring)
{
	struct ibv_qp_cap cap = { .max_send_wr = send_wr,
				  .max_recv_wr = recv_wr, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	int nb, na;
	struct ibv_wc wc;

	/* The CQ rings hold the probe's wr_id too: created before. */
	if (pair_cqs(k->d, k->pd, p, cqe))
		return -1;
	nb = st_uverbs_maps(k->before, MAX_MAPS);
	if (pair_qps(k->d, p, &cap))
		return -1;
	na = st_uverbs_maps(k->after, MAX_MAPS);
	if (recv) {
		if (st_post_recv(p->a, PROBE_WRID, k->src, 64, k->smr->lkey))
			return -1;
	} else {
		if (st_post_send(p->a, IBV_WR_RDMA_WRITE, PROBE_WRID, k->src,
				 64, k->smr->lkey, (uintptr_t)k->sink,
				 k->kmr->rkey, 0, IBV_SEND_SIGNALED) ||
		    st_poll_one(p->acq, &wc, 10000) <= 0 ||
		    wc.status != IBV_WC_SUCCESS)
			return -1;
	}
	*ring = ring_find(k->before, nb, k->after, na, PROBE_WRID);
	return *ring ? 0 : 1;
}

/* Drain @cq for @ms; every wr_id must be the attacker's own. */
static void atk_drain(struct atk *k, struct ibv_cq *cq, int ms)
{
	long long end = st_now_ms() + ms;
	struct ibv_wc wc[16];
	int n, i;

	while (st_now_ms() < end) {
		n = ibv_poll_cq(cq, 16, wc);
		if (n <= 0) {
			usleep(1000);
			continue;
		}
		for (i = 0; i < n; i++) {
			k->cqes++;
			if (WRID_TAG(wc[i].wr_id) == VIC_WRID &&
			    !k->foreign++)
				st_diag(who, "a victim wr_id on the attacker's CQ: %#llx",
					(unsigned long long)wc[i].wr_id);
		}
	}
}

/* The attacker's sink must hold no victim byte. */
static bool sink_clean(struct atk *k, const char *name)
{
	const __u64 *w = (const __u64 *)k->sink;
	size_t i;

	for (i = 0; i < SINK_LEN / 8; i++)
		if (w[i] == VIC_MARK) {
			st_diag(name, "victim data in the attacker's peer memory at offset %zu",
				i * 8);
			return false;
		}
	return true;
}

/* Wait until @qp is in ERR (or @ms passed); its state. */
static int wait_err(struct ibv_qp *qp, int ms)
{
	long long end = st_now_ms() + ms;
	int s;

	while ((s = st_qp_state(qp)) != IBV_QPS_ERR && st_now_ms() < end)
		usleep(2000);
	return s;
}

/* Fill the ring from its producer index with copies of its last WQE. */
static __u32 ring_fill(struct rxe_queue_buf *q, __u32 n)
{
	size_t esz = (size_t)1 << q->log2_elem_size;
	__u32 prod = ring_prod(q), i;
	struct rxe_send_wqe *w;

	for (i = 0; i < n; i++) {
		w = st_ring_slot(q, prod + i);
		memcpy(w, st_ring_slot(q, prod - 1), esz);
		w->wr.wr_id = ATK_WRID | (prod + i);
		w->wr.send_flags = IBV_SEND_SIGNALED;
	}
	ring_set_prod(q, (prod + n) & q->index_mask);
	return n;
}

/*
 * sq-prod-back: in SQD the requester issues nothing, but the prefetch
 * stage still reads ahead. Fill the ring, let it be read, then set the
 * producer index back to the consumer and post one WQE there: an index
 * that says the ring holds one WQE, while all of them were read.
 */
static bool case_sq_prod_back(struct atk *k)
{
	const char *name = "sq-prod-back";
	struct rxe_queue_buf *q;
	struct pair p;
	__u32 cons, round;
	int e, st;
	bool ok = true;

	e = atk_pair(k, &p, 16, 4, 256, false, &q);
	if (e) {
		st_diag(name, e > 0 ? "no send ring found" : "set-up failed");
		pair_down(&p);
		return false;
	}
	if (modify_state(p.a, IBV_QPS_SQD)) {
		st_diag(name, "modify to SQD: %s", strerror(errno));
		ok = false;
	}
	for (round = 0; ok && round < 4; round++) {
		/* A full ring: mask - 1 slots past the probe. */
		cons = ring_cons(q);
		ring_fill(q, (cons - ring_prod(q) - 1) & q->index_mask);
		st_send_doorbell(p.a);
		st_sleep_ms(100);
		/* The index back to the consumer, one WQE written there. */
		ring_set_prod(q, cons);
		ring_fill(q, 1);
		st_send_doorbell(p.a);
		st_sleep_ms(100);
	}
	modify_state(p.a, IBV_QPS_RTS);
	st_send_doorbell(p.a);
	st = wait_err(p.a, 5000);
	atk_drain(k, p.acq, 500);
	if (st != IBV_QPS_ERR) {
		st_diag(name, "the attacker's QP is %s, not ERR",
			st_qp_state_str(st));
		ok = false;
	}
	pair_down(&p);
	return ok;
}

/*
 * sq-prod-random: QPs of 2 to 64 slots; the ring filled with valid WQEs
 * part way, then random producer index values, each with a doorbell, half
 * of the QPs in SQD. Each QP must end: in ERR or with its work done.
 */
static bool case_sq_prod_random(struct atk *k)
{
	const char *name = "sq-prod-random";
	__u64 rnd = st_rnd_seed(0xa77a, opt.rounds), ended = 0, failed = 0;
	struct rxe_queue_buf *q;
	unsigned int r, i, writes;
	struct pair p;
	bool ok = true;
	int e, st;

	for (r = 0; r < opt.rounds && ok; r++) {
		__u32 wr = 1u << (st_rnd_next(&rnd) % 6);	/* 1..32 */

		e = atk_pair(k, &p, wr, 4, 512, false, &q);
		if (e) {
			st_diag(name, "round %u: %s", r,
				e > 0 ? "no send ring found" : "set-up failed");
			pair_down(&p);
			return false;
		}
		if (st_rnd_next(&rnd) & 1)
			modify_state(p.a, IBV_QPS_SQD);
		ring_fill(q, st_rnd_next(&rnd) %
			  ((ring_cons(q) - ring_prod(q) - 1) & q->index_mask));
		writes = 1 + st_rnd_next(&rnd) % 8;
		for (i = 0; i < writes; i++) {
			ring_set_prod(q, (__u32)st_rnd_next(&rnd) &
					 q->index_mask);
			st_send_doorbell(p.a);
			if (st_rnd_next(&rnd) & 1)
				st_sleep_ms(st_rnd_next(&rnd) % 20);
		}
		if (st_qp_state(p.a) == IBV_QPS_SQD)
			modify_state(p.a, IBV_QPS_RTS);
		st_send_doorbell(p.a);
		st_sleep_ms(50);
		st = st_qp_state(p.a);
		if (st != IBV_QPS_ERR && st != IBV_QPS_RTS) {
			st_diag(name, "round %u: the attacker's QP is %s", r,
				st_qp_state_str(st));
			ok = false;
		}
		failed += st == IBV_QPS_ERR;
		atk_drain(k, p.acq, 20);
		/* Destroy must return whatever is in flight. */
		pair_down(&p);
		ended++;
	}
	if (opt.verbose)
		st_diag(name, "%llu QPs, %llu of them failed",
			(unsigned long long)ended, (unsigned long long)failed);
	return ok;
}

struct spin {
	struct rxe_queue_buf *q;
	bool stop;		/* atomic accesses only */
	__u64 writes;
};

/* Keep the ring half full whatever the kernel consumes: never empty. */
static void *spin_thread(void *arg)
{
	struct spin *s = arg;
	__u32 mask = s->q->index_mask;

	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		ring_set_prod(s->q, (ring_cons(s->q) + mask / 2) & mask);
		s->writes++;
	}
	return NULL;
}

/*
 * rq-prod-spin: the receive ring's producer index keeps moving while the
 * QP goes to ERR. The flush must end and take at most the ring.
 */
static bool case_rq_prod_spin(struct atk *k)
{
	const char *name = "rq-prod-spin";
	cpu_set_t cpu, all;
	struct spin s = {};
	struct rxe_queue_buf *q;
	struct ibv_wc wc[64];
	pthread_t th;
	struct pair p;
	long long t0, ms;
	__u64 flushed = 0;
	bool ok = true;
	int e, n, i;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		st_diag(name, "one CPU: nothing moves the index while the kernel flushes");
		return true;
	}
	e = atk_pair(k, &p, 4, 1024, 4096, true, &q);
	if (e) {
		st_diag(name, e > 0 ? "no receive ring found" : "set-up failed");
		pair_down(&p);
		return false;
	}
	s.q = q;
	/* The thread on CPU 0, the modify on CPU 1: truly side by side. */
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&cpu);
	CPU_SET(0, &cpu);
	if (pthread_create(&th, NULL, spin_thread, &s)) {
		pair_down(&p);
		return false;
	}
	pthread_setaffinity_np(th, sizeof(cpu), &cpu);
	CPU_ZERO(&cpu);
	CPU_SET(1, &cpu);
	sched_setaffinity(0, sizeof(cpu), &cpu);
	st_sleep_ms(20);
	t0 = st_now_ms();
	e = modify_state(p.a, IBV_QPS_ERR);
	ms = st_now_ms() - t0;
	__atomic_store_n(&s.stop, true, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	sched_setaffinity(0, sizeof(all), &all);
	if (e) {
		st_diag(name, "modify to ERR: %s", strerror(e));
		ok = false;
	}
	for (;;) {
		n = ibv_poll_cq(p.acq, 64, wc);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++)
			flushed += wc[i].status == IBV_WC_WR_FLUSH_ERR;
	}
	/* The ring's capacity, and the one receive taken before. */
	if (flushed > (__u64)q->index_mask + 1) {
		st_diag(name, "%llu receives flushed from a ring of %u slots",
			(unsigned long long)flushed, q->index_mask + 1);
		ok = false;
	}
	if (opt.verbose || !ok)
		st_diag(name, "modify to ERR took %lld ms, %llu flushed, %llu index writes",
			ms, (unsigned long long)flushed,
			(unsigned long long)s.writes);
	pair_down(&p);
	return ok;
}

static unsigned long module_param(const char *name, unsigned long dflt)
{
	char path[128];
	unsigned long v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/srnic/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return dflt;
	if (fscanf(f, "%lu", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

/*
 * local-op-budget: 512 type 2 windows bound through the send queue in one
 * post. Nothing goes on the wire, but each costs the gate as a packet
 * does: at least 512 / tx_budget rounds.
 */
static bool case_local_op_budget(struct atk *k)
{
	const char *name = "local-op-budget";
	const unsigned int nmw = 512;
	unsigned long budget = module_param("tx_budget", 64);
	struct ibv_qp_cap cap = { .max_send_wr = nmw, .max_recv_wr = 4,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_send_wr *wrs = calloc(nmw, sizeof(*wrs)), *bad;
	struct ibv_mw **mws = calloc(nmw, sizeof(*mws));
	__u64 r0, r1, good = 0, seen = 0;
	struct ibv_mr *mr = NULL;
	struct ibv_wc wc[64];
	struct pair p = {};
	bool ok = false;
	unsigned int i;
	long long end;
	int n, j;

	if (!wrs || !mws || pair_up(k->d, k->pd, &p, &cap, 1024))
		goto out;
	mr = st_mr_reg(k->pd, k->sink, SINK_LEN, IBV_ACCESS_LOCAL_WRITE |
		       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND, name);
	if (!mr)
		goto out;
	for (i = 0; i < nmw; i++) {
		mws[i] = ibv_alloc_mw(k->pd, IBV_MW_TYPE_2);
		if (!mws[i]) {
			st_diag(name, "alloc_mw %u: %s", i, strerror(errno));
			goto out;
		}
		wrs[i].wr_id = ATK_WRID | i;
		wrs[i].opcode = IBV_WR_BIND_MW;
		wrs[i].send_flags = IBV_SEND_SIGNALED;
		wrs[i].bind_mw.mw = mws[i];
		wrs[i].bind_mw.rkey = ibv_inc_rkey(mws[i]->rkey);
		wrs[i].bind_mw.bind_info.mr = mr;
		wrs[i].bind_mw.bind_info.addr = (uintptr_t)k->sink;
		wrs[i].bind_mw.bind_info.length = 4096;
		wrs[i].bind_mw.bind_info.mw_access_flags =
			IBV_ACCESS_REMOTE_WRITE;
		wrs[i].next = i + 1 < nmw ? &wrs[i + 1] : NULL;
	}
	r0 = st_hw_counter(opt.dev, k->d->port, "tx_gate_rounds");
	if (ibv_post_send(p.a, wrs, &bad)) {
		st_diag(name, "post of %u binds: %s", nmw, strerror(errno));
		goto out;
	}
	end = st_now_ms() + 20000;
	while (seen < nmw && st_now_ms() < end) {
		n = ibv_poll_cq(p.acq, 64, wc);
		for (j = 0; j < n; j++) {
			seen++;
			good += wc[j].status == IBV_WC_SUCCESS;
		}
		if (n <= 0)
			usleep(1000);
	}
	/* sysfs caches hw counters for their lifespan (10 ms). */
	st_sleep_ms(100);
	r1 = st_hw_counter(opt.dev, k->d->port, "tx_gate_rounds");
	ok = seen == nmw && good == nmw;
	if (!ok)
		st_diag(name, "%llu of %u binds completed, %llu successfully",
			(unsigned long long)seen, nmw,
			(unsigned long long)good);
	if (r0 == ~0ULL || r1 == ~0ULL) {
		st_diag(name, "no tx_gate_rounds counter");
		ok = false;
	} else if (r1 - r0 < nmw / budget) {
		st_diag(name, "%u binds cost %llu gate rounds, fewer than %lu (tx_budget %lu)",
			nmw, (unsigned long long)(r1 - r0), nmw / budget,
			budget);
		ok = false;
	} else if (opt.verbose) {
		st_diag(name, "%u binds: %llu gate rounds (tx_budget %lu)",
			nmw, (unsigned long long)(r1 - r0), budget);
	}
out:
	pair_down(&p);
	for (i = 0; mws && i < nmw; i++)
		if (mws[i])
			ibv_dealloc_mw(mws[i]);
	if (mr)
		ibv_dereg_mr(mr);
	free(wrs);
	free(mws);
	return ok;
}

struct hcase {
	const char *name;
	bool (*run)(struct atk *k);
	bool victim;	/* the gate's round counter is device-wide: alone */
	const char *what;
};

static const struct hcase cases[] = {
	{ "sq-prod-back", case_sq_prod_back, true,
	  "send ring index set back behind what was read, in SQD: the QP fails alone" },
	{ "sq-prod-random", case_sq_prod_random, true,
	  "random send ring index values with doorbells: every QP ends alone" },
	{ "rq-prod-spin", case_rq_prod_spin, true,
	  "receive ring index moving during the flush to ERR: bounded" },
	{ "local-op-budget", case_local_op_budget, false,
	  "512 Bind MW in one post cost the transmit gate rounds" },
};

static void print_usage(void)
{
	size_t i;

	fputs("usage: srnic_hostile --dev DEV [--gid-index N] [--rounds N] [-v]",
	      stderr);
	fputs(" [CASE...]\ncases:", stderr);
	for (i = 0; i < ST_ARRAY_SIZE(cases); i++)
		fprintf(stderr, " %s", cases[i].name);
	fprintf(stderr, "\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	bool want[ST_ARRAY_SIZE(cases)];
	struct st_tap tap = {};
	struct atk k = {};
	struct st_dev d;
	int c, planned = 0;
	size_t i;

	while ((c = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			opt.dev = optarg;
			break;
		case 'g':
			opt.gid_index = atoi(optarg);
			break;
		case 'r':
			opt.rounds = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			opt.verbose++;
			break;
		default:
			print_usage();
		}
	}
	if (!opt.dev)
		print_usage();
	for (i = 0; i < ST_ARRAY_SIZE(cases); i++)
		want[i] = optind == argc;
	for (c = optind; c < argc; c++) {
		for (i = 0; i < ST_ARRAY_SIZE(cases); i++)
			if (!strcmp(argv[c], cases[i].name))
				break;
		if (i == ST_ARRAY_SIZE(cases))
			print_usage();
		want[i] = true;
	}
	for (i = 0; i < ST_ARRAY_SIZE(cases); i++)
		planned += want[i];
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (st_dev_open(&d, opt.dev) || st_gid_pick(&d, opt.gid_index, 0))
		return st_tap_skip_all(&tap, "cannot open the device or pick a GID");
	k.d = &d;
	k.pd = ibv_alloc_pd(d.ctx);
	k.src = st_buf_alloc(4096, 'A');
	k.sink = st_buf_alloc(SINK_LEN, 0);
	k.before = calloc(MAX_MAPS, sizeof(*k.before));
	k.after = calloc(MAX_MAPS, sizeof(*k.after));
	if (!k.pd || !k.src || !k.sink || !k.before || !k.after)
		st_bail("out of memory");
	k.smr = st_mr_reg(k.pd, k.src, 4096, IBV_ACCESS_LOCAL_WRITE, who);
	k.kmr = st_mr_reg(k.pd, k.sink, SINK_LEN, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			  who);
	if (!k.smr || !k.kmr)
		st_bail("cannot register the attacker's memory");

	st_tap_plan(&tap, planned);
	for (i = 0; i < ST_ARRAY_SIZE(cases); i++) {
		struct vic v;
		bool ok, vok = true;

		if (!want[i])
			continue;
		k.foreign = 0;
		if (cases[i].victim && vic_start(&v)) {
			st_tap_ok(&tap, false, "%s: the victim did not start",
				  cases[i].name);
			continue;
		}
		ok = cases[i].run(&k);
		if (cases[i].victim)
			vok = vic_stop(&v, 300, cases[i].name);
		ok = ok && vok && !k.foreign && sink_clean(&k, cases[i].name);
		memset(k.sink, 0, SINK_LEN);
		st_tap_ok(&tap, ok, "%s: %s", cases[i].name, cases[i].what);
	}
	return st_tap_end(&tap);
}
