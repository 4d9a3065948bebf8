// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_vfuzz: a verbs sequence fuzzer, in the manner of syzkaller's
 * programs: random sequences of every verb on every object, legal and not.
 *
 * Worker processes (--procs, each its own device context) keep pools of
 * PDs, MRs (zero-length, unaligned, odd access flags, unmapped memory),
 * memory windows of both types, CQs (resized), completion channels, SRQs
 * (modified, armed), RC, UC and UD QPs (with and without an SRQ) and
 * address handles, and run random actions on them: create and destroy
 * any object in any order (a PD, CQ, SRQ or channel that is still in use
 * must refuse: that is checked), modify_qp to any state with random
 * attribute masks and values, connect pairs of their own QPs through the
 * device's own GID so that traffic flows, post sends with any opcode
 * (invalid ones too), flags, SGE count and valid or garbage addresses and
 * keys (through ibv_post_send and, on QPs made by ibv_create_qp_ex, the
 * ibv_wr_*() builders and setters), post receives likewise, poll, arm
 * and read completion events, bind windows, query everything, destroy
 * or move QPs, CQs and MRs while work is outstanding, and write the
 * rings the rxe ABI shares with the kernel (indices, elements, the
 * header) followed by a doorbell. In half the lives a second thread
 * rings doorbells and moves QPs between states by handle meanwhile. A
 * worker's life ends after a random number of actions, half the time
 * with every object destroyed in order and half the time by exiting with
 * everything alive (maybe mid-traffic); a new life starts until the time
 * or the actions are used up.
 *
 * Errors from the verbs are expected: they are counted by action and
 * errno, completions by status, asynchronous events by type. What fails
 * the run:
 *   - a worker killed by a signal: SIGALRM means one verb did not return
 *     in --hang-secs; a worker that cannot be reaped is stuck in the kernel,
 *   - a rule broken: an object destroyed while another used it, a destroy
 *     that fails in dependency order, the device that cannot be opened,
 *   - the check after the fuzz: a fresh context, PD, CQ and RC pair must
 *     move 1 MiB by RDMA Write and 4 KiB by Send, every byte right.
 *
 * Usage: srnic_vfuzz --dev DEV [--gid-index N] [--seed S] [--seconds S |
 *		      --ops N] [--procs P] [--hang-secs S] [-v]
 *
 * Output: TAP (three points: the fuzz, the rules, the check after), the
 * seed and the summary as diagnostics. --procs 1 and the seed replay a
 * run's action sequence (timing aside); -v prints each life's seed.
 * Exit status: 0 passed, 1 failed, 4 nothing could run.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "srnic_test.h"

#define N_PD		4
#define N_MR		20
#define N_MW		12
#define N_CH		3
#define N_CQ		10
#define N_SRQ		4
#define N_QP		16
#define N_AH		6
#define N_RING		64
#define MAX_MAPS	256
#define MAX_WR		8	/* work requests per post */
#define MAX_SGE		40	/* room for more than the device's max */
#define ARENA_LEN	(4u << 20)
#define PAGE		4096u
#define N_ERRNO		134
#define N_WC		32
#define N_EV		32
#define MAX_PROCS	8

static struct {
	const char *dev;
	int gid_index;
	__u64 seed;
	unsigned int seconds, procs, hang_secs;
	__u64 ops;
	int verbose;
} opt = { .gid_index = -1, .seconds = 60, .procs = 1, .hang_secs = 120 };

static const char *const who = "vfuzz";

/* --- actions and what they returned --------------------------------------- */

enum act {
	A_ALLOC_PD,
	A_DEALLOC_PD,
	A_REG_MR,
	A_DEREG_MR,
	A_ALLOC_MW,
	A_DEALLOC_MW,
	A_BIND_MW,
	A_CREATE_CH,
	A_DESTROY_CH,
	A_CREATE_CQ,
	A_RESIZE_CQ,
	A_DESTROY_CQ,
	A_POLL_CQ,
	A_NOTIFY_CQ,
	A_CQ_EVENT,
	A_CREATE_SRQ,
	A_MODIFY_SRQ,
	A_QUERY_SRQ,
	A_DESTROY_SRQ,
	A_POST_SRQ_RECV,
	A_CREATE_QP,
	A_MODIFY_QP,
	A_CONNECT,
	A_UD_READY,
	A_QUERY_QP,
	A_DESTROY_QP,
	A_POST_SEND,
	A_POST_SEND_EX,
	A_POST_RECV,
	A_CREATE_AH,
	A_DESTROY_AH,
	A_QUERY,
	A_TRAFFIC,
	A_SCRIBBLE,
	A_DOORBELL,
	A_ASYNC,
	N_ACT
};

/* An action's result: 0 done, an errno value, or SKIP (nothing to do it to). */
#define SKIP	(-1)

/* What a worker slot counts, in memory its parent reads (MAP_SHARED). */
struct stats {
	__u64 calls[N_ACT], ok[N_ACT], skipped[N_ACT];
	__u64 err[N_ACT][N_ERRNO];
	__u64 wc[N_WC + 1];	/* by status; the last: out of range */
	__u64 ev[N_EV + 1];
	__u64 wrs, cqes, scribbles, lives, clean_exits;
	__u64 race_doorbells, race_moves;	/* the racing thread's */
	__u64 violations;
	int last_act;
	__u64 life_seed;
	char first_violation[200];
	/* A fatal signal's own account, written by the worker's handler. */
	int crash_sig, crash_code;
	__u64 crash_addr;
};

static struct stats *all_stats;	/* [MAX_PROCS] */
static struct stats *st;	/* this worker's */

/* A rule broken: counted, the first one kept for the summary. */
static void violation_line(const char *fmt, ...)
{
	va_list ap;

	if (!st->violations++) {
		va_start(ap, fmt);
		vsnprintf(st->first_violation, sizeof(st->first_violation),
			  fmt, ap);
		va_end(ap);
	}
}

/* violation(FMT, ...): violation_line(), its format checked. */
#define violation(...)							\
	(ST_FMT_CHECK(__VA_ARGS__), violation_line(__VA_ARGS__))

/* --- the pools ------------------------------------------------------------ */

struct fz_mr {
	struct ibv_mr *mr;
	int pd;
	__u8 *addr;	/* inside the arena, or NULL */
	size_t len;
	int access;
};

struct fz_mw {
	struct ibv_mw *mw;
	int pd;
	__u32 rkey;	/* as last bound (type 2: ours to choose) */
};

struct fz_cq {
	struct ibv_cq *cq;
	int ch;
};

struct fz_srq {
	struct ibv_srq *srq;
	int pd;
	__u32 max_sge;
};

struct fz_qp {
	struct ibv_qp *qp;
	int pd, scq, rcq, srq;
	struct ibv_qp_cap cap;
	int peer;	/* the QP it was connected to, -1 */
	__u32 qkey;
	struct ibv_qp_ex *qpx;	/* made by create_qp_ex: the ibv_wr_* API */
	__u64 ops;		/* its send_ops_flags */
};

struct fz_ah {
	struct ibv_ah *ah;
	int pd;
};

enum ring_owner { R_QP, R_CQ, R_SRQ };

/* A ring mapped from the uverbs device, and the object it belongs to. */
struct fz_ring {
	uintptr_t start, end;
	enum ring_owner kind;
	int idx;
};

struct fuzz {
	struct st_dev d;
	__u64 rnd;
	__u8 *arena;
	struct ibv_pd *pd[N_PD];
	struct fz_mr mr[N_MR];
	struct fz_mw mw[N_MW];
	struct ibv_comp_channel *ch[N_CH];
	struct fz_cq cq[N_CQ];
	struct fz_srq srq[N_SRQ];
	struct fz_qp qp[N_QP];
	struct fz_ah ah[N_AH];
	struct fz_ring ring[N_RING];
	int nring;
	int handle[N_QP];	/* the QPs' uverbs handles, -1: none (atomic) */
	struct st_range maps[MAX_MAPS];
};

static __u64 rnd(struct fuzz *f)
{
	return st_rnd_next(&f->rnd);
}

static __u32 below(struct fuzz *f, __u32 n)
{
	return n ? (__u32)(rnd(f) % n) : 0;
}

/* True one time in @n. */
static bool one_in(struct fuzz *f, __u32 n)
{
	return !below(f, n);
}

/* A number as a fuzzer likes them: edges more often than chance. */
static __u64 interesting(struct fuzz *f)
{
	static const __u64 v[] = {
		0, 1, 2, 7, 8, 63, 64, 255, 256, 4095, 4096, 4097, 65535,
		65536, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
		0xffffffffffffffffull, 0x8000000000000000ull, 1ull << 32,
	};

	return one_in(f, 2) ? v[below(f, ST_ARRAY_SIZE(v))] : rnd(f);
}

/* Is slot @i of a pool live? One predicate per pool. */
typedef bool (*live_fn)(struct fuzz *f, int i);

static bool pd_live(struct fuzz *f, int i)
{
	return f->pd[i];
}

static bool mr_live(struct fuzz *f, int i)
{
	return f->mr[i].mr;
}

static bool mw_live(struct fuzz *f, int i)
{
	return f->mw[i].mw;
}

static bool ch_live(struct fuzz *f, int i)
{
	return f->ch[i];
}

static bool cq_live(struct fuzz *f, int i)
{
	return f->cq[i].cq;
}

static bool srq_live(struct fuzz *f, int i)
{
	return f->srq[i].srq;
}

static bool qp_live(struct fuzz *f, int i)
{
	return f->qp[i].qp;
}

static bool ah_live(struct fuzz *f, int i)
{
	return f->ah[i].ah;
}

/* A random one of @n slots for which @ok holds: its index, or -1. */
static int pick(struct fuzz *f, int n, live_fn ok)
{
	int i, start = below(f, n);

	for (i = 0; i < n; i++)
		if (ok(f, (start + i) % n))
			return (start + i) % n;
	return -1;
}

/* The first of @n slots that is not live, or -1. */
static int first_free(struct fuzz *f, int n, live_fn live)
{
	int i;

	for (i = 0; i < n; i++)
		if (!live(f, i))
			return i;
	return -1;
}

/* --- the rings ------------------------------------------------------------ */

/*
 * After a verb that maps or unmaps rings: forget the rings that are gone,
 * and give the new ones to the object that just acted (@kind, @idx). The
 * worker runs one thread, so nothing else maps meanwhile.
 */
static void rings_sync(struct fuzz *f, enum ring_owner kind, int idx)
{
	int n = st_uverbs_maps(f->maps, MAX_MAPS), i, j;

	for (i = 0; i < f->nring; i++) {
		for (j = 0; j < n; j++)
			if (f->maps[j].start == f->ring[i].start &&
			    f->maps[j].end == f->ring[i].end)
				break;
		if (j == n) {
			f->ring[i--] = f->ring[--f->nring];
			continue;
		}
	}
	for (j = 0; j < n && idx >= 0; j++) {
		for (i = 0; i < f->nring; i++)
			if (f->maps[j].start == f->ring[i].start)
				break;
		if (i < f->nring || f->nring == N_RING ||
		    !st_ring_plausible((void *)f->maps[j].start,
				       f->maps[j].end - f->maps[j].start))
			continue;
		f->ring[f->nring].start = f->maps[j].start;
		f->ring[f->nring].end = f->maps[j].end;
		f->ring[f->nring].kind = kind;
		f->ring[f->nring].idx = idx;
		f->nring++;
	}
}

/*
 * The library addresses elements by its own index of a ring unmasked
 * (the producer of a send or receive ring, the consumer of a CQ): a
 * scribbled value stays for the kernel to see (at a doorbell, a flush,
 * a packet's arrival) until the library is about to use the ring, and
 * is put back in range just before.
 */
static void rings_tame(struct fuzz *f, enum ring_owner kind, int idx)
{
	int i;

	for (i = 0; i < f->nring; i++) {
		struct rxe_queue_buf *q = (void *)f->ring[i].start;
		__u32 *own;

		if (f->ring[i].kind != kind || f->ring[i].idx != idx)
			continue;
		own = kind == R_CQ ? &q->consumer_index : &q->producer_index;
		if (__atomic_load_n(own, __ATOMIC_RELAXED) > q->index_mask)
			__atomic_and_fetch(own, q->index_mask,
					   __ATOMIC_RELEASE);
	}
}

/* --- memory --------------------------------------------------------------- */

/* An address and length in the arena, @max bytes at most. */
static __u8 *arena_span(struct fuzz *f, size_t max, size_t *len)
{
	size_t off = below(f, ARENA_LEN);

	*len = max ? below(f, (__u32)max + 1) : 0;
	if (off + *len > ARENA_LEN)
		*len = ARENA_LEN - off;
	return f->arena + off;
}

/*
 * [@addr, @addr + @len) lies in the arena. No sum that can wrap: a
 * zero-length MR may sit at any address, 0xffffffffffffffff too.
 */
static bool in_arena(struct fuzz *f, __u64 addr, __u64 len)
{
	__u64 lo = (uintptr_t)f->arena, hi = lo + ARENA_LEN;

	return addr >= lo && addr <= hi && len <= hi - addr;
}

/* Memory no MR may pin: not mapped, not canonical, the guard page. */
static __u64 bad_address(struct fuzz *f)
{
	static const __u64 v[] = {
		0, 0x10, 0x7ffffffff000ull, 0xffff800000000000ull,
		0xffffffffffffffffull, 0x8000000000000000ull,
	};

	if (one_in(f, 3))
		return (uintptr_t)f->arena + ARENA_LEN;	/* the guard page */
	return v[below(f, ST_ARRAY_SIZE(v))];
}

static int access_flags(struct fuzz *f)
{
	static const int common = IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND;

	if (one_in(f, 8))
		return (int)rnd(f);
	if (one_in(f, 3))
		return (int)(rnd(f) & 0x3f);
	return common;
}

static int act_alloc_pd(struct fuzz *f)
{
	int i = first_free(f, N_PD, pd_live);

	if (i < 0)
		return SKIP;
	f->pd[i] = ibv_alloc_pd(f->d.ctx);
	return f->pd[i] ? 0 : errno;
}

static bool pd_used(struct fuzz *f, int pd)
{
	int i;

	for (i = 0; i < N_MR; i++)
		if (f->mr[i].mr && f->mr[i].pd == pd)
			return true;
	for (i = 0; i < N_MW; i++)
		if (f->mw[i].mw && f->mw[i].pd == pd)
			return true;
	for (i = 0; i < N_SRQ; i++)
		if (f->srq[i].srq && f->srq[i].pd == pd)
			return true;
	for (i = 0; i < N_QP; i++)
		if (f->qp[i].qp && f->qp[i].pd == pd)
			return true;
	for (i = 0; i < N_AH; i++)
		if (f->ah[i].ah && f->ah[i].pd == pd)
			return true;
	return false;
}

static int act_dealloc_pd(struct fuzz *f)
{
	int i = pick(f, N_PD, pd_live), ret;
	bool used;

	if (i < 0)
		return SKIP;
	used = pd_used(f, i);
	ret = ibv_dealloc_pd(f->pd[i]);
	if (!ret) {
		if (used)
			violation("dealloc_pd of a PD in use succeeded");
		f->pd[i] = NULL;
	}
	return ret;
}

static int act_reg_mr(struct fuzz *f)
{
	int i = first_free(f, N_MR, mr_live), pd = pick(f, N_PD, pd_live);
	struct fz_mr *m;
	void *addr;
	size_t len;

	if (i < 0 || pd < 0)
		return SKIP;
	m = &f->mr[i];
	m->access = access_flags(f);
	switch (below(f, 8)) {
	case 0:		/* zero length */
		addr = arena_span(f, 0, &len);
		break;
	case 1:		/* memory that is not there */
		addr = (void *)(uintptr_t)bad_address(f);
		len = one_in(f, 2) ? PAGE : (size_t)interesting(f);
		break;
	case 2:		/* across the end of the arena into the guard page */
		addr = f->arena + ARENA_LEN - 1 - below(f, PAGE);
		len = PAGE + below(f, PAGE);
		break;
	case 3:		/* the whole arena */
		addr = f->arena;
		len = ARENA_LEN;
		break;
	default:	/* some of it, unaligned */
		addr = arena_span(f, 256 * 1024, &len);
		break;
	}
	m->mr = ibv_reg_mr(f->pd[pd], addr, len, m->access);
	if (!m->mr)
		return errno;
	m->pd = pd;
	m->addr = addr;
	m->len = len;
	return 0;
}

static int act_dereg_mr(struct fuzz *f)
{
	int i = pick(f, N_MR, mr_live), ret;

	if (i < 0)
		return SKIP;
	ret = ibv_dereg_mr(f->mr[i].mr);
	if (!ret)
		f->mr[i].mr = NULL;
	return ret;
}

static int act_alloc_mw(struct fuzz *f)
{
	int i = first_free(f, N_MW, mw_live), pd = pick(f, N_PD, pd_live);
	enum ibv_mw_type t = one_in(f, 2) ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2;

	if (i < 0 || pd < 0)
		return SKIP;
	if (one_in(f, 16))
		t = (enum ibv_mw_type)below(f, 8);
	f->mw[i].mw = ibv_alloc_mw(f->pd[pd], t);
	if (!f->mw[i].mw)
		return errno;
	f->mw[i].pd = pd;
	f->mw[i].rkey = f->mw[i].mw->rkey;
	return 0;
}

static int act_dealloc_mw(struct fuzz *f)
{
	int i = pick(f, N_MW, mw_live), ret;

	if (i < 0)
		return SKIP;
	ret = ibv_dealloc_mw(f->mw[i].mw);
	if (!ret)
		f->mw[i].mw = NULL;
	return ret;
}

/* --- CQs and channels ----------------------------------------------------- */

static int act_create_ch(struct fuzz *f)
{
	int i = first_free(f, N_CH, ch_live);

	if (i < 0)
		return SKIP;
	f->ch[i] = ibv_create_comp_channel(f->d.ctx);
	if (!f->ch[i])
		return errno;
	fcntl(f->ch[i]->fd, F_SETFL, fcntl(f->ch[i]->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

static int act_destroy_ch(struct fuzz *f)
{
	int i = pick(f, N_CH, ch_live), j, ret;
	bool used = false;

	if (i < 0)
		return SKIP;
	for (j = 0; j < N_CQ; j++)
		used |= f->cq[j].cq && f->cq[j].ch == i;
	ret = ibv_destroy_comp_channel(f->ch[i]);
	if (!ret) {
		if (used)
			violation("destroy_comp_channel of one in use succeeded");
		f->ch[i] = NULL;
	}
	return ret;
}

/*
 * A CQ size: mostly small, an edge value in 1 of 8, max_cqe - 1 .. + 1
 * in 1 of 32 (a 64 MiB ring at srnic's max_cqe: rarer, so that the
 * lives' CQs stay within a small guest's memory).
 */
static int cqe_count(struct fuzz *f)
{
	switch (below(f, 32)) {
	case 0 ... 3:
		return (int)interesting(f);
	case 4:
		return f->d.attr.max_cqe + (int)below(f, 3) - 1;
	default:
		return 1 + below(f, 512);
	}
}

static int act_create_cq(struct fuzz *f)
{
	int i = first_free(f, N_CQ, cq_live), ch = -1;
	int vec = one_in(f, 8) ? (int)interesting(f) : 0;

	if (i < 0)
		return SKIP;
	if (one_in(f, 2))
		ch = pick(f, N_CH, ch_live);
	f->cq[i].cq = ibv_create_cq(f->d.ctx, cqe_count(f), NULL,
				    ch >= 0 ? f->ch[ch] : NULL, vec);
	if (!f->cq[i].cq)
		return errno;
	f->cq[i].ch = ch;
	rings_sync(f, R_CQ, i);
	return 0;
}

static int act_resize_cq(struct fuzz *f)
{
	int i = pick(f, N_CQ, cq_live), ret;

	if (i < 0)
		return SKIP;
	ret = ibv_resize_cq(f->cq[i].cq, cqe_count(f));
	rings_sync(f, R_CQ, i);
	return ret;
}

/* Destroy CQ @i: a QP that uses it must make that fail. */
static int destroy_cq(struct fuzz *f, int i)
{
	bool used = false;
	int j, ret;

	for (j = 0; j < N_QP; j++)
		used |= f->qp[j].qp && (f->qp[j].scq == i || f->qp[j].rcq == i);
	ret = ibv_destroy_cq(f->cq[i].cq);
	if (!ret) {
		if (used)
			violation("a CQ in use was destroyed");
		f->cq[i].cq = NULL;
		rings_sync(f, R_CQ, -1);
	}
	return ret;
}

static int act_destroy_cq(struct fuzz *f)
{
	int i = pick(f, N_CQ, cq_live);

	return i < 0 ? SKIP : destroy_cq(f, i);
}

static void count_wc(const struct ibv_wc *wc, int n)
{
	int i;

	for (i = 0; i < n; i++)
		st->wc[wc[i].status < N_WC ? wc[i].status : N_WC]++;
	st->cqes += n;
}

static int poll_cq_idx(struct fuzz *f, int i, int max)
{
	struct ibv_wc wc[16];
	int n, total = 0;

	rings_tame(f, R_CQ, i);
	while (total < max) {
		n = ibv_poll_cq(f->cq[i].cq, 16, wc);
		if (n < 0)
			return n;
		if (!n)
			break;
		count_wc(wc, n);
		total += n;
	}
	return total;
}

static int act_poll_cq(struct fuzz *f)
{
	int i = pick(f, N_CQ, cq_live);

	if (i < 0)
		return SKIP;
	return poll_cq_idx(f, i, 1 + below(f, 256)) < 0 ? EIO : 0;
}

static int act_notify_cq(struct fuzz *f)
{
	int i = pick(f, N_CQ, cq_live);

	if (i < 0)
		return SKIP;
	return ibv_req_notify_cq(f->cq[i].cq, (int)below(f, 3));
}

/* Read the events a channel has; each is acknowledged at once. */
static int act_cq_event(struct fuzz *f)
{
	int i = pick(f, N_CH, ch_live), n = 0;
	struct ibv_cq *cq;
	void *ctx;

	if (i < 0)
		return SKIP;
	while (n < 64 && !ibv_get_cq_event(f->ch[i], &cq, &ctx)) {
		ibv_ack_cq_events(cq, 1);
		if (one_in(f, 2))
			ibv_req_notify_cq(cq, 0);
		n++;
	}
	return n ? 0 : errno;
}

/* --- SRQs ----------------------------------------------------------------- */

static int act_create_srq(struct fuzz *f)
{
	int i = first_free(f, N_SRQ, srq_live), pd = pick(f, N_PD, pd_live);
	struct ibv_srq_init_attr a = {};

	if (i < 0 || pd < 0)
		return SKIP;
	a.attr.max_wr = one_in(f, 8) ? (__u32)interesting(f) :
			1 + below(f, 256);
	a.attr.max_sge = one_in(f, 8) ? (__u32)interesting(f) :
			 below(f, f->d.attr.max_srq_sge + 2);
	a.attr.srq_limit = one_in(f, 2) ? below(f, a.attr.max_wr + 2) : 0;
	f->srq[i].srq = ibv_create_srq(f->pd[pd], &a);
	if (!f->srq[i].srq)
		return errno;
	f->srq[i].pd = pd;
	f->srq[i].max_sge = a.attr.max_sge;
	rings_sync(f, R_SRQ, i);
	return 0;
}

static int act_modify_srq(struct fuzz *f)
{
	int i = pick(f, N_SRQ, srq_live), mask, ret;
	struct ibv_srq_attr a = {};

	if (i < 0)
		return SKIP;
	mask = one_in(f, 8) ? (int)rnd(f) :
	       (int)below(f, 4) & (IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT);
	a.max_wr = one_in(f, 8) ? (__u32)interesting(f) : 1 + below(f, 512);
	a.srq_limit = one_in(f, 8) ? (__u32)interesting(f) : below(f, 256);
	a.max_sge = (__u32)rnd(f);
	ret = ibv_modify_srq(f->srq[i].srq, &a, mask);
	rings_sync(f, R_SRQ, i);
	return ret;
}

static int act_query_srq(struct fuzz *f)
{
	int i = pick(f, N_SRQ, srq_live);
	struct ibv_srq_attr a;

	if (i < 0)
		return SKIP;
	return ibv_query_srq(f->srq[i].srq, &a);
}

static int act_destroy_srq(struct fuzz *f)
{
	int i = pick(f, N_SRQ, srq_live), j, ret;
	bool used = false;

	if (i < 0)
		return SKIP;
	for (j = 0; j < N_QP; j++)
		used |= f->qp[j].qp && f->qp[j].srq == i;
	ret = ibv_destroy_srq(f->srq[i].srq);
	if (!ret) {
		if (used)
			violation("destroy_srq of an SRQ in use succeeded");
		f->srq[i].srq = NULL;
		rings_sync(f, R_SRQ, -1);
	}
	return ret;
}

static bool qp_connected_type(struct fuzz *f, int q)
{
	return f->qp[q].qp && (f->qp[q].qp->qp_type == IBV_QPT_RC ||
			       f->qp[q].qp->qp_type == IBV_QPT_UC);
}

static bool qp_has_peer(struct fuzz *f, int q)
{
	return f->qp[q].qp && f->qp[q].peer >= 0 &&
	       f->qp[f->qp[q].peer].qp;
}

static bool qp_is_ud(struct fuzz *f, int q)
{
	return f->qp[q].qp && f->qp[q].qp->qp_type == IBV_QPT_UD;
}

/* --- SGEs and work requests ----------------------------------------------- */

/*
 * A live MR of @pd (any PD if @pd < 0) with all of @access: its index, or
 * -1. Starts at a random slot.
 */
static int pick_mr(struct fuzz *f, int pd, int access)
{
	int i, start = below(f, N_MR);

	for (i = 0; i < N_MR; i++) {
		struct fz_mr *m = &f->mr[(start + i) % N_MR];

		if (m->mr && (pd < 0 || m->pd == pd) && m->addr &&
		    (m->access & access) == access)
			return (start + i) % N_MR;
	}
	return -1;
}

/*
 * One SGE: valid (in a live MR of @pd, so that traffic really moves) or,
 * unless @inl, garbage. Inline data is copied by the library: it must be
 * readable memory, so it is always in the arena.
 */
static void make_sge(struct fuzz *f, struct ibv_sge *s, int pd, bool inl,
		     bool valid, bool recv)
{
	int m = one_in(f, valid ? 16 : 4) ? -1 : pick_mr(f, pd, 0);
	size_t len;

	if (m >= 0 && !one_in(f, valid ? 50 : 10)) {
		struct fz_mr *r = &f->mr[m];
		size_t off = r->len ? below(f, r->len) : 0;
		size_t room = r->len - off;

		s->addr = (uintptr_t)r->addr + off;
		s->lkey = r->mr->lkey;
		if (valid && recv) {	/* room for any send */
			s->length = room;
			return;
		}
		s->length = below(f, (__u32)(room > 8192 ? 8192 : room) + 1);
		if (!valid && one_in(f, 16))	/* past its end */
			s->length = room + 1 + below(f, 64);
		return;
	}
	if (inl) {
		s->addr = (uintptr_t)arena_span(f, 512, &len);
		s->length = len;
	} else {
		s->addr = one_in(f, 2) ? bad_address(f) :
			  (uintptr_t)arena_span(f, 0, &len) ^ rnd(f) % 4096;
		s->length = one_in(f, 2) ? (__u32)interesting(f) :
			    below(f, 65536);
	}
	s->lkey = m >= 0 ? f->mr[m].mr->lkey : (__u32)interesting(f);
}

/*
 * An rkey: of an MR or a window, or made up. @pd >= 0: mostly an MR of
 * that PD (the peer's), its address with room for 8 KiB where it can.
 */
static __u32 pick_rkey(struct fuzz *f, __u64 *addr, int pd)
{
	int m;

	if (pd >= 0) {
		m = pick_mr(f, pd, IBV_ACCESS_REMOTE_WRITE);
		if (m >= 0 && !one_in(f, 8)) {
			struct fz_mr *r = &f->mr[m];

			*addr = ((uintptr_t)r->addr +
				 below(f, r->len > 8192 ? r->len - 8192 : 1)) &
				~7ull;
			if (*addr < (uintptr_t)r->addr)
				*addr = (uintptr_t)r->addr;
			return r->mr->rkey;
		}
	}
	if (one_in(f, 3)) {
		m = pick(f, N_MW, mw_live);
		if (m >= 0) {
			int r = pick_mr(f, f->mw[m].pd, 0);

			*addr = r >= 0 ? (uintptr_t)f->mr[r].addr : rnd(f);
			return f->mw[m].rkey;
		}
	}
	m = pick_mr(f, -1, one_in(f, 2) ? IBV_ACCESS_REMOTE_WRITE : 0);
	if (m >= 0 && !one_in(f, 8)) {
		struct fz_mr *r = &f->mr[m];

		*addr = (uintptr_t)r->addr + (r->len ? below(f, r->len) : 0);
		if (one_in(f, 4))
			*addr &= ~7ull;	/* atomics want 8-byte alignment */
		return r->mr->rkey;
	}
	*addr = one_in(f, 2) ? rnd(f) : bad_address(f);
	return (__u32)interesting(f);
}

static const enum ibv_wr_opcode opcodes[] = {
	IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
	IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
	IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
	IBV_WR_SEND_WITH_INV, IBV_WR_TSO, IBV_WR_DRIVER1,
	(enum ibv_wr_opcode)14,	/* FLUSH */
	(enum ibv_wr_opcode)15,	/* ATOMIC_WRITE */
};

/*
 * A send work request for QP @q. @valid: an opcode of its type on valid
 * memory (traffic that can succeed). Pointers the library follows (the
 * UD address handle, a window and an MR to bind) are always live ones.
 */
static bool make_send_wr(struct fuzz *f, int q, struct ibv_send_wr *wr,
			 struct ibv_sge *sge, bool valid)
{
	struct fz_qp *p = &f->qp[q];
	int max_sge = p->cap.max_send_sge, n, i, ah = -1, peer;
	__u64 raddr;
	bool ud = p->qp->qp_type == IBV_QPT_UD;
	unsigned int flags;

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = rnd(f);
	if (valid) {
		static const enum ibv_wr_opcode rc[] = {
			IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
			IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ,
			IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP,
		};
		__u32 nop = p->qp->qp_type == IBV_QPT_RC ? ST_ARRAY_SIZE(rc) :
			    ud ? 2 : 4;

		wr->opcode = ud ? rc[2 + below(f, 2)] : rc[below(f, nop)];
		flags = IBV_SEND_SIGNALED;
		if (one_in(f, 4))
			flags |= IBV_SEND_FENCE;
		if (one_in(f, 4))
			flags |= IBV_SEND_SOLICITED;
	} else {
		wr->opcode = one_in(f, 6) ? (enum ibv_wr_opcode)interesting(f) :
			     opcodes[below(f, ST_ARRAY_SIZE(opcodes))];
		flags = one_in(f, 8) ? (unsigned int)rnd(f) :
			(unsigned int)below(f, 32);
	}
	if (p->cap.max_inline_data && one_in(f, 6))
		flags |= IBV_SEND_INLINE;
	wr->send_flags = flags;
	wr->imm_data = htonl((__u32)rnd(f));
	n = valid ? !!max_sge : (int)below(f, max_sge + 3);
	if (n > MAX_SGE)
		n = MAX_SGE;
	for (i = 0; i < n; i++)
		make_sge(f, &sge[i], p->pd, flags & IBV_SEND_INLINE, valid,
			 false);
	if ((flags & IBV_SEND_INLINE) && n) {
		__u32 room = p->cap.max_inline_data + (one_in(f, 4) ? 8 : 0);

		/* The library adds the lengths in 32 bits: keep it honest. */
		for (i = 0; i < n; i++) {
			uintptr_t lo = (uintptr_t)f->arena;

			if (sge[i].length > room)
				sge[i].length = room;
			/* The library reads it: in the arena, all of it. */
			if (!in_arena(f, sge[i].addr, sge[i].length))
				sge[i].addr = lo;
			room -= sge[i].length;
		}
	}
	wr->sg_list = sge;
	wr->num_sge = n;
	if (ud) {
		ah = pick(f, N_AH, ah_live);
		if (ah < 0)
			return false;
		wr->wr.ud.ah = f->ah[ah].ah;
		i = pick(f, N_QP, qp_live);
		wr->wr.ud.remote_qpn = one_in(f, 8) || i < 0 ?
				       (__u32)interesting(f) :
				       f->qp[i].qp->qp_num;
		wr->wr.ud.remote_qkey = one_in(f, 8) || i < 0 ?
					(__u32)rnd(f) : f->qp[i].qkey;
		return true;
	}
	peer = p->peer >= 0 && f->qp[p->peer].qp ? f->qp[p->peer].pd : -1;
	wr->wr.rdma.rkey = pick_rkey(f, &raddr, valid ? peer : -1);
	wr->wr.rdma.remote_addr = raddr;
	switch (wr->opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wr->wr.atomic.rkey = wr->wr.rdma.rkey;
		wr->wr.atomic.remote_addr = wr->wr.rdma.remote_addr;
		wr->wr.atomic.compare_add = rnd(f);
		wr->wr.atomic.swap = rnd(f);
		if (valid && n) {
			sge[0].length = 8;
			/* Inline, the library reads those 8 bytes too. */
			if ((flags & IBV_SEND_INLINE) &&
			    !in_arena(f, sge[0].addr, 8))
				sge[0].addr = (uintptr_t)f->arena;
		}
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		wr->invalidate_rkey = pick_rkey(f, &raddr, -1);
		break;
	case IBV_WR_BIND_MW: {
		int w = pick(f, N_MW, mw_live), m = pick_mr(f, -1, 0);

		if (w < 0 || m < 0) {
			wr->opcode = IBV_WR_SEND;
			break;
		}
		wr->num_sge = 0;
		wr->imm_data = 0;
		wr->bind_mw.mw = f->mw[w].mw;
		wr->bind_mw.rkey = ibv_inc_rkey(f->mw[w].rkey);
		f->mw[w].rkey = wr->bind_mw.rkey;
		wr->bind_mw.bind_info.mr = f->mr[m].mr;
		wr->bind_mw.bind_info.addr = (uintptr_t)f->mr[m].addr +
					     below(f, f->mr[m].len + 1);
		wr->bind_mw.bind_info.length = one_in(f, 4) ?
			interesting(f) : below(f, f->mr[m].len + 1);
		wr->bind_mw.bind_info.mw_access_flags = access_flags(f);
		break;
	}
	default:
		break;
	}
	return true;
}

static int post_sends(struct fuzz *f, int q, int nwr, bool valid)
{
	struct ibv_send_wr wr[MAX_WR], *bad;
	static struct ibv_sge sge[MAX_WR][MAX_SGE];
	int i, ret;

	for (i = 0; i < nwr; i++) {
		if (!make_send_wr(f, q, &wr[i], sge[i], valid))
			return SKIP;
		wr[i].next = i + 1 < nwr ? &wr[i + 1] : NULL;
	}
	rings_tame(f, R_QP, q);
	ret = ibv_post_send(f->qp[q].qp, wr, &bad);
	st->wrs += nwr;
	return ret;
}

static int post_recvs(struct fuzz *f, int q, int srq, int nwr, bool valid)
{
	struct ibv_recv_wr wr[MAX_WR], *bad;
	static struct ibv_sge sge[MAX_WR][MAX_SGE];
	int i, j, pd, max;

	if (srq >= 0) {
		pd = f->srq[srq].pd;
		max = f->srq[srq].max_sge;
	} else {
		pd = f->qp[q].pd;
		max = f->qp[q].cap.max_recv_sge;
	}
	for (i = 0; i < nwr; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = rnd(f);
		wr[i].num_sge = valid ? !!max : (int)below(f, max + 2);
		if (wr[i].num_sge > MAX_SGE)
			wr[i].num_sge = MAX_SGE;
		for (j = 0; j < wr[i].num_sge; j++)
			make_sge(f, &sge[i][j], pd, false, valid, true);
		wr[i].sg_list = sge[i];
		wr[i].next = i + 1 < nwr ? &wr[i + 1] : NULL;
	}
	st->wrs += nwr;
	if (srq >= 0) {
		rings_tame(f, R_SRQ, srq);
		return ibv_post_srq_recv(f->srq[srq].srq, wr, &bad);
	}
	rings_tame(f, R_QP, q);
	return ibv_post_recv(f->qp[q].qp, wr, &bad);
}

static int act_post_send(struct fuzz *f)
{
	int q = pick(f, N_QP, qp_live);

	if (q < 0)
		return SKIP;
	return post_sends(f, q, 1 + below(f, MAX_WR), one_in(f, 3));
}

static int act_post_recv(struct fuzz *f)
{
	int q = pick(f, N_QP, qp_live);

	if (q < 0 || f->qp[q].srq >= 0)
		return SKIP;
	return post_recvs(f, q, -1, 1 + below(f, MAX_WR), one_in(f, 2));
}

static int act_post_srq_recv(struct fuzz *f)
{
	int s = pick(f, N_SRQ, srq_live);

	if (s < 0)
		return SKIP;
	return post_recvs(f, -1, s, 1 + below(f, MAX_WR), one_in(f, 2));
}

static int act_bind_mw(struct fuzz *f)
{
	int q = pick(f, N_QP, qp_connected_type), w = pick(f, N_MW, mw_live);
	int m, i;
	bool valid = !one_in(f, 3);
	struct ibv_mw_bind b = {};
	size_t off;

	if (q < 0 || w < 0)
		return SKIP;
	/* Valid: a QP and an MR (with MW_BIND) of the window's PD. */
	for (i = 0; valid && i < N_QP; i++)
		if (f->qp[i].qp && f->qp[i].pd == f->mw[w].pd &&
		    qp_connected_type(f, i))
			q = i;
	m = pick_mr(f, valid ? f->mw[w].pd : -1,
		    valid ? IBV_ACCESS_MW_BIND : 0);
	if (m < 0)
		return SKIP;
	off = below(f, f->mr[m].len + 1);
	b.wr_id = rnd(f);
	b.send_flags = one_in(f, 2) ? IBV_SEND_SIGNALED : 0;
	b.bind_info.mr = f->mr[m].mr;
	b.bind_info.addr = (uintptr_t)f->mr[m].addr + off;
	b.bind_info.length = !valid && one_in(f, 4) ? interesting(f) :
			     below(f, f->mr[m].len - off + 1);
	b.bind_info.mw_access_flags = valid ?
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ :
		access_flags(f) & ~IBV_ACCESS_ZERO_BASED;
	/* Type 2: a Bind MW work request, its rkey ours to choose. */
	if (f->mw[w].mw->type != IBV_MW_TYPE_1) {
		struct ibv_send_wr wr = {}, *bad;
		int ret;

		wr.wr_id = b.wr_id;
		wr.opcode = IBV_WR_BIND_MW;
		wr.send_flags = b.send_flags;
		wr.bind_mw.mw = f->mw[w].mw;
		wr.bind_mw.rkey = ibv_inc_rkey(f->mw[w].rkey);
		wr.bind_mw.bind_info = b.bind_info;
		rings_tame(f, R_QP, q);
		ret = ibv_post_send(f->qp[q].qp, &wr, &bad);
		if (!ret)
			f->mw[w].rkey = wr.bind_mw.rkey;
		return ret;
	}
	rings_tame(f, R_QP, q);
	if (ibv_bind_mw(f->qp[q].qp, f->mw[w].mw, &b))
		return errno ? errno : EINVAL;
	f->mw[w].rkey = f->mw[w].mw->rkey;
	return 0;
}

/* The send_ops_flags librxe 44 takes for a QP type. */
static __u64 ops_of(enum ibv_qp_type t)
{
	__u64 uc = IBV_QP_EX_WITH_RDMA_WRITE |
		   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
		   IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_BIND_MW |
		   IBV_QP_EX_WITH_SEND_WITH_INV;

	switch (t) {
	case IBV_QPT_RC:
		return uc | IBV_QP_EX_WITH_RDMA_READ |
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		       IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_ATOMIC_WRITE;
	case IBV_QPT_UC:
		return uc;
	default:
		return IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	}
}

static bool qp_is_ex(struct fuzz *f, int q)
{
	return f->qp[q].qp && f->qp[q].qpx;
}

/* One builder of @p's own operations (the others are NULL in librxe). */
static void wr_build(struct fuzz *f, struct fz_qp *p, struct ibv_qp_ex *x)
{
	static const __u64 all_ops[] = {
		IBV_QP_EX_WITH_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
		IBV_QP_EX_WITH_SEND, IBV_QP_EX_WITH_SEND_WITH_IMM,
		IBV_QP_EX_WITH_RDMA_READ, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
		IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, IBV_QP_EX_WITH_LOCAL_INV,
		IBV_QP_EX_WITH_BIND_MW, IBV_QP_EX_WITH_SEND_WITH_INV,
		IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	__u64 raddr, bit = 0, v;
	int j, w, m, peer;
	struct ibv_mw_bind_info bi = {};
	__u32 rkey;

	for (j = 0; j < 64; j++) {
		bit = all_ops[below(f, ST_ARRAY_SIZE(all_ops))];
		if (p->ops & bit)
			break;
	}
	if (!(p->ops & bit))
		bit = IBV_QP_EX_WITH_SEND;
	peer = p->peer >= 0 && f->qp[p->peer].qp ? f->qp[p->peer].pd : -1;
	rkey = pick_rkey(f, &raddr, peer);
	switch (bit) {
	case IBV_QP_EX_WITH_RDMA_WRITE:
		ibv_wr_rdma_write(x, rkey, raddr);
		break;
	case IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(x, rkey, raddr, (__u32)rnd(f));
		break;
	case IBV_QP_EX_WITH_SEND_WITH_IMM:
		ibv_wr_send_imm(x, (__u32)rnd(f));
		break;
	case IBV_QP_EX_WITH_RDMA_READ:
		ibv_wr_rdma_read(x, rkey, raddr);
		break;
	case IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP:
		ibv_wr_atomic_cmp_swp(x, rkey, raddr, rnd(f), rnd(f));
		break;
	case IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD:
		ibv_wr_atomic_fetch_add(x, rkey, raddr, rnd(f));
		break;
	case IBV_QP_EX_WITH_LOCAL_INV:
		ibv_wr_local_inv(x, rkey);
		break;
	case IBV_QP_EX_WITH_SEND_WITH_INV:
		ibv_wr_send_inv(x, rkey);
		break;
	case IBV_QP_EX_WITH_ATOMIC_WRITE:
		v = rnd(f);
		ibv_wr_atomic_write(x, rkey, raddr, &v);
		break;
	case IBV_QP_EX_WITH_BIND_MW:
		w = pick(f, N_MW, mw_live);
		m = pick_mr(f, -1, 0);
		if (w < 0 || m < 0) {
			ibv_wr_send(x);
			break;
		}
		bi.mr = f->mr[m].mr;
		bi.addr = (uintptr_t)f->mr[m].addr;
		bi.length = below(f, f->mr[m].len + 1);
		bi.mw_access_flags = access_flags(f);
		f->mw[w].rkey = ibv_inc_rkey(f->mw[w].rkey);
		ibv_wr_bind_mw(x, f->mw[w].mw, f->mw[w].rkey, &bi);
		break;
	default:
		ibv_wr_send(x);
		break;
	}
}

/* The data of the WR just built: an SGE, a list, inline data or a list. */
static void wr_data(struct fuzz *f, struct fz_qp *p, struct ibv_qp_ex *x)
{
	struct ibv_data_buf bufs[4];
	struct ibv_sge sge[MAX_SGE];
	size_t room, len;
	int j, m;

	switch (below(f, 5)) {
	case 0:
		make_sge(f, &sge[0], p->pd, false, one_in(f, 2), false);
		ibv_wr_set_sge(x, sge[0].lkey, sge[0].addr, sge[0].length);
		break;
	case 1:
		m = below(f, p->cap.max_send_sge + 2);
		if (m > MAX_SGE)
			m = MAX_SGE;
		for (j = 0; j < m; j++)
			make_sge(f, &sge[j], p->pd, false, one_in(f, 2), false);
		ibv_wr_set_sge_list(x, m, sge);
		break;
	case 2:
		bufs[0].addr = arena_span(f, p->cap.max_inline_data + 8, &len);
		ibv_wr_set_inline_data(x, bufs[0].addr, len);
		break;
	case 3:
		room = p->cap.max_inline_data;
		m = below(f, 5);
		for (j = 0; j < m; j++) {
			bufs[j].addr = arena_span(f, room, &len);
			bufs[j].length = len;
			room -= len;
		}
		ibv_wr_set_inline_data_list(x, m, bufs);
		break;
	default:	/* none: zero length */
		break;
	}
}

/*
 * Work requests through ibv_wr_*(). librxe 44 leaves dma.length wrong
 * on the list setters (the kernel recomputes it); its inline list checks
 * each buffer, not their sum, against max_inline, so the sum is kept
 * within it here (else the library itself writes past the element).
 */
static int act_post_send_ex(struct fuzz *f)
{
	int q = pick(f, N_QP, qp_is_ex), n, i, ah, o;
	struct ibv_qp_ex *x;
	struct fz_qp *p;

	if (q < 0)
		return SKIP;
	p = &f->qp[q];
	x = p->qpx;
	ah = pick(f, N_AH, ah_live);
	if (p->qp->qp_type == IBV_QPT_UD && ah < 0)
		return SKIP;
	rings_tame(f, R_QP, q);
	ibv_wr_start(x);
	n = 1 + below(f, MAX_WR);
	for (i = 0; i < n; i++) {
		x->wr_id = rnd(f);
		x->wr_flags = one_in(f, 4) ? (unsigned int)below(f, 32) :
			      IBV_SEND_SIGNALED;
		wr_build(f, p, x);
		if (p->qp->qp_type == IBV_QPT_UD) {
			o = pick(f, N_QP, qp_live);
			ibv_wr_set_ud_addr(x, f->ah[ah].ah,
					   o >= 0 ? f->qp[o].qp->qp_num :
					   (__u32)rnd(f),
					   o >= 0 ? f->qp[o].qkey : 0);
		}
		wr_data(f, p, x);
	}
	st->wrs += n;
	if (one_in(f, 8)) {
		ibv_wr_abort(x);
		return 0;
	}
	return ibv_wr_complete(x);
}

/* --- QPs ------------------------------------------------------------------ */

static int act_create_qp(struct fuzz *f)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	};
	/* Not XRC's types: the library follows their pointers. */
	static const enum ibv_qp_type bad_types[] = {
		0, 1, 5, IBV_QPT_RAW_PACKET, IBV_QPT_DRIVER,
	};
	int i = first_free(f, N_QP, qp_live), pd = pick(f, N_PD, pd_live);
	int scq = pick(f, N_CQ, cq_live), rcq = pick(f, N_CQ, cq_live);
	int srq = -1;
	struct ibv_qp_init_attr a = {};
	struct fz_qp *q;

	if (i < 0 || pd < 0 || scq < 0 || rcq < 0)
		return SKIP;
	q = &f->qp[i];
	if (one_in(f, 16))
		a.qp_type = bad_types[below(f, ST_ARRAY_SIZE(bad_types))];
	else
		a.qp_type = types[below(f, ST_ARRAY_SIZE(types))];
	a.send_cq = f->cq[scq].cq;
	a.recv_cq = f->cq[rcq].cq;
	if (one_in(f, 3)) {
		srq = pick(f, N_SRQ, srq_live);
		a.srq = srq >= 0 ? f->srq[srq].srq : NULL;
	}
	a.sq_sig_all = one_in(f, 4);
	a.cap.max_send_wr = one_in(f, 8) ? (__u32)interesting(f) :
			    below(f, 128);
	a.cap.max_recv_wr = one_in(f, 8) ? (__u32)interesting(f) :
			    below(f, 128);
	a.cap.max_send_sge = one_in(f, 8) ? (__u32)interesting(f) :
			     below(f, f->d.attr.max_sge + 2);
	a.cap.max_recv_sge = one_in(f, 8) ? (__u32)interesting(f) :
			     below(f, f->d.attr.max_sge + 2);
	a.cap.max_inline_data = one_in(f, 8) ? (__u32)interesting(f) :
				one_in(f, 2) ? below(f, 600) : 0;
	q->qpx = NULL;
	q->ops = 0;
	if (one_in(f, 3)) {	/* the extended API: ibv_wr_*() posts */
		struct ibv_qp_init_attr_ex ax = {
			.send_cq = a.send_cq, .recv_cq = a.recv_cq,
			.srq = a.srq, .cap = a.cap, .qp_type = a.qp_type,
			.sq_sig_all = a.sq_sig_all,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = f->pd[pd],
		};

		ax.send_ops_flags = ops_of(a.qp_type);
		if (one_in(f, 8))
			ax.send_ops_flags = rnd(f);
		q->qp = ibv_create_qp_ex(f->d.ctx, &ax);
		if (q->qp) {
			q->qpx = ibv_qp_to_qp_ex(q->qp);
			q->ops = ax.send_ops_flags;
			a.cap = ax.cap;
		}
	} else {
		q->qp = ibv_create_qp(f->pd[pd], &a);
	}
	if (!q->qp)
		return errno;
	q->pd = pd;
	q->scq = scq;
	q->rcq = rcq;
	q->srq = a.srq ? srq : -1;
	q->cap = a.cap;
	q->peer = -1;
	q->qkey = (__u32)rnd(f) & 0x7fffffff;
	rings_sync(f, R_QP, i);
	__atomic_store_n(&f->handle[i], (int)q->qp->handle, __ATOMIC_RELEASE);
	return 0;
}

static void forget_peer(struct fuzz *f, int q)
{
	int i;

	for (i = 0; i < N_QP; i++)
		if (f->qp[i].peer == q)
			f->qp[i].peer = -1;
}

static int destroy_qp(struct fuzz *f, int i)
{
	int ret = ibv_destroy_qp(f->qp[i].qp);

	if (!ret) {
		f->qp[i].qp = NULL;
		__atomic_store_n(&f->handle[i], -1, __ATOMIC_RELEASE);
		forget_peer(f, i);
		rings_sync(f, R_QP, -1);
	}
	return ret;
}

static int act_destroy_qp(struct fuzz *f)
{
	int i = pick(f, N_QP, qp_live);

	return i < 0 ? SKIP : destroy_qp(f, i);
}

static int qp_to(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* Every attribute random, a random mask, a random (or legal) state. */
static int act_modify_qp(struct fuzz *f)
{
	int q = pick(f, N_QP, qp_live), mask, o;
	struct ibv_qp_attr a;

	if (q < 0)
		return SKIP;
	if (one_in(f, 3))	/* a plain move: legal from some states */
		return qp_to(f->qp[q].qp, (enum ibv_qp_state)below(f, 7));
	st_rnd_fill(&a, sizeof(a), rnd(f));
	a.qp_state = (enum ibv_qp_state)below(f, 8);
	mask = (int)(rnd(f) & ((1 << 21) - 1));
	if (one_in(f, 16))
		mask = (int)rnd(f);
	if (!one_in(f, 8))
		mask |= IBV_QP_STATE;
	if (one_in(f, 2)) {	/* closer to what passes the checks */
		a.cur_qp_state = st_qp_state(f->qp[q].qp);
		a.port_num = f->d.port;
		a.pkey_index = 0;
		a.path_mtu = (enum ibv_mtu)(1 + below(f, 5));
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = f->d.port;
		a.ah_attr.grh.dgid = f->d.gid;
		a.ah_attr.grh.sgid_index = f->d.gid_index;
		a.ah_attr.grh.hop_limit = 64;
		o = pick(f, N_QP, qp_live);
		a.dest_qp_num = o >= 0 ? f->qp[o].qp->qp_num : 1;
		a.timeout = below(f, 16);
		a.retry_cnt = below(f, 8);
		a.rnr_retry = below(f, 8);
		a.min_rnr_timer = below(f, 32);
		a.max_rd_atomic = below(f, 20);
		a.max_dest_rd_atomic = below(f, 20);
		a.qp_access_flags = access_flags(f);
		a.sq_draining = 0;
		mask &= ~(IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE);
	}
	/* The core logs every PSN over 24 bits: not each time. */
	if (!one_in(f, 16)) {
		a.sq_psn &= 0xffffff;
		a.rq_psn &= 0xffffff;
	}
	return ibv_modify_qp(f->qp[q].qp, &a, mask);
}

/*
 * RESET -> INIT -> RTR -> RTS for two RC or UC QPs (or one, to itself),
 * each the other's destination through the device's own GID.
 */
static int connect_one(struct fuzz *f, int q, int peer, __u32 sq_psn,
		       __u32 rq_psn)
{
	struct ibv_qp *qp = f->qp[q].qp;
	struct st_path p = {
		.dgid = f->d.gid, .sgid_index = f->d.gid_index,
		.port = f->d.port, .dest_qpn = f->qp[peer].qp->qp_num,
		.rq_psn = rq_psn, .sq_psn = sq_psn,
		.mtu = one_in(f, 4) ? (enum ibv_mtu)(1 + below(f, 5)) :
		       f->d.mtu,
		.max_dest_rd_atomic = below(f, 17),
		.min_rnr_timer = below(f, 32),
		.max_rd_atomic = below(f, 17),
		/* Short: a dead peer's retries end soon. */
		.timeout = 8 + below(f, 8), .retry_cnt = below(f, 8),
		.rnr_retry = below(f, 8),
	};
	int access = one_in(f, 4) ? access_flags(f) :
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	int ret;

	ret = qp_to(qp, IBV_QPS_RESET);
	if (!ret)
		ret = st_qp_init(qp, f->d.port, access);
	if (!ret)
		ret = st_qp_rtr(qp, &p);
	if (!ret)
		ret = st_qp_rts(qp, &p);
	return ret;
}

static int act_connect(struct fuzz *f)
{
	int a = pick(f, N_QP, qp_connected_type), b, i, ret;
	__u32 pa = (__u32)rnd(f) & 0xffffff, pb = (__u32)rnd(f) & 0xffffff;

	if (a < 0)
		return SKIP;
	b = a;
	if (!one_in(f, 6)) {	/* else to itself */
		for (i = 0; i < N_QP; i++) {
			b = (a + 1 + i) % N_QP;
			if (b != a && f->qp[b].qp &&
			    f->qp[b].qp->qp_type == f->qp[a].qp->qp_type)
				break;
		}
		if (i == N_QP)
			return SKIP;
	}
	ret = connect_one(f, a, b, pa, pb);
	if (!ret && b != a)
		ret = connect_one(f, b, a, pb, pa);
	if (!ret) {
		forget_peer(f, a);
		forget_peer(f, b);
		f->qp[a].peer = b;
		f->qp[b].peer = a;
	}
	return ret;
}

static int act_ud_ready(struct fuzz *f)
{
	int q = pick(f, N_QP, qp_is_ud), ret;

	if (q < 0)
		return SKIP;
	ret = qp_to(f->qp[q].qp, IBV_QPS_RESET);
	return ret ? ret : st_qp_ud_ready(f->qp[q].qp, f->d.port,
					   f->qp[q].qkey,
					   (__u32)rnd(f) & 0xffffff);
}

static int act_query_qp(struct fuzz *f)
{
	int q = pick(f, N_QP, qp_live);
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (q < 0)
		return SKIP;
	return ibv_query_qp(f->qp[q].qp, &a, one_in(f, 8) ? (int)rnd(f) :
			    (int)(rnd(f) & ((1 << 21) - 1)), &init);
}

static int act_create_ah(struct fuzz *f)
{
	int i = first_free(f, N_AH, ah_live), pd = pick(f, N_PD, pd_live);
	struct ibv_ah_attr a = {};

	if (i < 0 || pd < 0)
		return SKIP;
	if (one_in(f, 8))
		st_rnd_fill(&a, sizeof(a), rnd(f));
	a.is_global = !one_in(f, 8);
	a.port_num = one_in(f, 8) ? below(f, 256) : f->d.port;
	a.grh.sgid_index = one_in(f, 8) ? below(f, 256) :
			   (__u32)f->d.gid_index;
	a.grh.dgid = f->d.gid;
	if (one_in(f, 16))	/* nobody's: no route in the namespace */
		memset(a.grh.dgid.raw, 0x20, 8);
	a.grh.hop_limit = below(f, 256);
	a.sl = below(f, 16);
	f->ah[i].ah = ibv_create_ah(f->pd[pd], &a);
	if (!f->ah[i].ah)
		return errno;
	f->ah[i].pd = pd;
	return 0;
}

static int act_destroy_ah(struct fuzz *f)
{
	int i = pick(f, N_AH, ah_live), ret;

	if (i < 0)
		return SKIP;
	ret = ibv_destroy_ah(f->ah[i].ah);
	if (!ret)
		f->ah[i].ah = NULL;
	return ret;
}

static int act_query(struct fuzz *f)
{
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	__u16 pkey;

	switch (below(f, 4)) {
	case 0:
		return ibv_query_device_ex(f->d.ctx, NULL, &dx);
	case 1:
		return ibv_query_port(f->d.ctx, one_in(f, 4) ? below(f, 4) : 1,
				      &pa);
	case 2:
		return ibv_query_gid(f->d.ctx, 1, one_in(f, 2) ?
				     (int)interesting(f) : (int)below(f, 8),
				     &gid) ? EINVAL : 0;
	default:
		return ibv_query_pkey(f->d.ctx, 1, (int)below(f, 4), &pkey) ?
		       EINVAL : 0;
	}
}

/* Acknowledge whatever asynchronous events are there. */
static int act_async(struct fuzz *f)
{
	struct pollfd p = { .fd = f->d.ctx->async_fd, .events = POLLIN };
	struct ibv_async_event e;
	int n = 0;

	while (n < 64 && poll(&p, 1, 0) == 1 &&
	       !ibv_get_async_event(f->d.ctx, &e)) {
		st->ev[e.event_type < N_EV ? e.event_type : N_EV]++;
		ibv_ack_async_event(&e);
		n++;
	}
	return 0;
}

/* --- traffic, and what happens to it midway ------------------------------- */

/*
 * Valid work on a connected pair (receives first, then sends, Writes,
 * Reads and atomics into the peer's memory), polled a little; then, now
 * and then, something done to it while it is in flight.
 */
static int act_traffic(struct fuzz *f)
{
	int a = pick(f, N_QP, qp_has_peer), n = 1 + below(f, MAX_WR);
	int b, ret, i, scq, rcq;
	long long end;

	if (a < 0 && !act_connect(f))	/* no pair yet: make one */
		a = pick(f, N_QP, qp_has_peer);
	if (a < 0)
		return SKIP;
	b = f->qp[a].peer;
	if (f->qp[b].srq < 0 || f->srq[f->qp[b].srq].srq)
		post_recvs(f, b, f->qp[b].srq, n, true);
	ret = post_sends(f, a, n, true);
	switch (below(f, 12)) {
	case 0:
		destroy_qp(f, a);
		break;
	case 1:
		destroy_qp(f, b);
		break;
	case 2:
		i = pick_mr(f, f->qp[a].pd, 0);
		if (i >= 0 && !ibv_dereg_mr(f->mr[i].mr))
			f->mr[i].mr = NULL;
		break;
	case 3:
		qp_to(f->qp[a].qp, (enum ibv_qp_state)below(f, 7));
		break;
	case 4:
		qp_to(f->qp[b].qp, (enum ibv_qp_state)below(f, 7));
		break;
	case 5:		/* the QP, then its CQs at once (EBUSY or gone) */
		scq = f->qp[a].scq;
		rcq = f->qp[a].rcq;
		if (destroy_qp(f, a))
			break;
		if (f->cq[scq].cq)
			destroy_cq(f, scq);
		if (f->cq[rcq].cq)
			destroy_cq(f, rcq);
		break;
	default:
		break;
	}
	end = st_now_ms() + below(f, 30);
	do {
		for (i = 0; i < 2; i++) {
			int q = i ? b : a;

			if (f->qp[q].qp && f->cq[f->qp[q].scq].cq)
				poll_cq_idx(f, f->qp[q].scq, 64);
			if (f->qp[q].qp && f->cq[f->qp[q].rcq].cq)
				poll_cq_idx(f, f->qp[q].rcq, 64);
		}
	} while (st_now_ms() < end);
	return ret;
}

/* --- ring scribbles ------------------------------------------------------- */

static void scribble_bytes(struct fuzz *f, __u8 *p, size_t len)
{
	size_t off;
	__u32 v;

	switch (below(f, 3)) {
	case 0:		/* all of it */
		st_rnd_fill(p, len, rnd(f));
		break;
	default:	/* a few words, edge values */
		for (off = below(f, 6); off < 6; off++) {
			v = (__u32)interesting(f);
			memcpy(p + (below(f, len / 4) * 4), &v, 4);
		}
		break;
	}
}

/*
 * Write one ring of a live object as nobody should: its indices, its
 * elements, fake WQEs past the producer, its header (put back after the
 * doorbell, because the library follows it); then ring the doorbell.
 */
static int act_scribble(struct fuzz *f)
{
	struct rxe_queue_buf *q;
	struct fz_ring *r;
	__u32 mask, lg, k, n, prod;
	size_t esz;

	if (!f->nring)
		return SKIP;
	r = &f->ring[below(f, f->nring)];
	q = (struct rxe_queue_buf *)r->start;
	mask = q->index_mask;
	lg = q->log2_elem_size;
	esz = (size_t)1 << lg;
	st->scribbles++;
	switch (below(f, 6)) {
	case 0:
		__atomic_store_n(&q->producer_index, one_in(f, 2) ?
				 (__u32)rnd(f) & mask : (__u32)interesting(f),
				 __ATOMIC_RELEASE);
		break;
	case 1:
		__atomic_store_n(&q->consumer_index, one_in(f, 2) ?
				 (__u32)rnd(f) & mask : (__u32)interesting(f),
				 __ATOMIC_RELEASE);
		break;
	case 2:		/* elements the kernel has yet to read, or any */
		n = 1 + below(f, 4);
		for (k = 0; k < n; k++) {
			prod = q->consumer_index + below(f, mask + 1);
			scribble_bytes(f, st_ring_slot(q, prod), esz);
		}
		break;
	case 3:		/* made-up WQEs, posted by index alone */
		n = 1 + below(f, mask + 1);
		prod = q->producer_index;
		for (k = 0; k < n && k < 16; k++)
			scribble_bytes(f, st_ring_slot(q, prod + k), esz);
		__atomic_store_n(&q->producer_index, (prod + n) & mask,
				 __ATOMIC_RELEASE);
		break;
	case 4: {	/* the header the kernel must not believe */
		__u32 m = (__u32)interesting(f), l = (__u32)interesting(f);

		q->index_mask = m;
		q->log2_elem_size = l;
		if (r->kind == R_QP && f->qp[r->idx].qp)
			st_send_doorbell(f->qp[r->idx].qp);
		q->index_mask = mask;
		q->log2_elem_size = lg;
		return 0;
	}
	default:	/* a valid element's fields, one at a time */
		scribble_bytes(f, st_ring_slot(q, q->producer_index - 1),
			       esz < 64 ? esz : 64);
		break;
	}
	if (r->kind == R_QP && f->qp[r->idx].qp && !one_in(f, 5))
		return st_send_doorbell(f->qp[r->idx].qp) ? errno : 0;
	return 0;
}

static int act_doorbell(struct fuzz *f)
{
	int q = pick(f, N_QP, qp_live);

	if (q < 0)
		return SKIP;
	return st_send_doorbell(f->qp[q].qp) ? errno : 0;
}

/* --- a worker ------------------------------------------------------------- */

/* Every action, its name in the summary, and how often it is drawn. */
static const struct {
	const char *name;
	unsigned int weight;
	int (*fn)(struct fuzz *f);
} acts[N_ACT] = {
	[A_ALLOC_PD] = { "ALLOC_PD", 3, act_alloc_pd },
	[A_DEALLOC_PD] = { "DEALLOC_PD", 2, act_dealloc_pd },
	[A_REG_MR] = { "REG_MR", 6, act_reg_mr },
	[A_DEREG_MR] = { "DEREG_MR", 3, act_dereg_mr },
	[A_ALLOC_MW] = { "ALLOC_MW", 3, act_alloc_mw },
	[A_DEALLOC_MW] = { "DEALLOC_MW", 2, act_dealloc_mw },
	[A_BIND_MW] = { "BIND_MW", 3, act_bind_mw },
	[A_CREATE_CH] = { "CREATE_CH", 1, act_create_ch },
	[A_DESTROY_CH] = { "DESTROY_CH", 1, act_destroy_ch },
	[A_CREATE_CQ] = { "CREATE_CQ", 4, act_create_cq },
	[A_RESIZE_CQ] = { "RESIZE_CQ", 2, act_resize_cq },
	[A_DESTROY_CQ] = { "DESTROY_CQ", 2, act_destroy_cq },
	[A_POLL_CQ] = { "POLL_CQ", 10, act_poll_cq },
	[A_NOTIFY_CQ] = { "NOTIFY_CQ", 3, act_notify_cq },
	[A_CQ_EVENT] = { "CQ_EVENT", 3, act_cq_event },
	[A_CREATE_SRQ] = { "CREATE_SRQ", 2, act_create_srq },
	[A_MODIFY_SRQ] = { "MODIFY_SRQ", 2, act_modify_srq },
	[A_QUERY_SRQ] = { "QUERY_SRQ", 1, act_query_srq },
	[A_DESTROY_SRQ] = { "DESTROY_SRQ", 1, act_destroy_srq },
	[A_POST_SRQ_RECV] = { "POST_SRQ_RECV", 4, act_post_srq_recv },
	[A_CREATE_QP] = { "CREATE_QP", 6, act_create_qp },
	[A_MODIFY_QP] = { "MODIFY_QP", 8, act_modify_qp },
	[A_CONNECT] = { "CONNECT", 6, act_connect },
	[A_UD_READY] = { "UD_READY", 2, act_ud_ready },
	[A_QUERY_QP] = { "QUERY_QP", 2, act_query_qp },
	[A_DESTROY_QP] = { "DESTROY_QP", 3, act_destroy_qp },
	[A_POST_SEND] = { "POST_SEND", 12, act_post_send },
	[A_POST_SEND_EX] = { "POST_SEND_EX", 5, act_post_send_ex },
	[A_POST_RECV] = { "POST_RECV", 6, act_post_recv },
	[A_CREATE_AH] = { "CREATE_AH", 2, act_create_ah },
	[A_DESTROY_AH] = { "DESTROY_AH", 1, act_destroy_ah },
	[A_QUERY] = { "QUERY", 2, act_query },
	[A_TRAFFIC] = { "TRAFFIC", 12, act_traffic },
	[A_SCRIBBLE] = { "SCRIBBLE", 8, act_scribble },
	[A_DOORBELL] = { "DOORBELL", 2, act_doorbell },
	[A_ASYNC] = { "ASYNC", 2, act_async },
};

static int pick_action(struct fuzz *f)
{
	static unsigned int total;
	unsigned int r, i;

	if (!total)
		for (i = 0; i < N_ACT; i++)
			total += acts[i].weight;
	r = below(f, total);
	for (i = 0; r >= acts[i].weight; i++)
		r -= acts[i].weight;
	return i;
}

static void run_action(struct fuzz *f, int a)
{
	int ret;

	st->last_act = a;
	alarm(opt.hang_secs);
	errno = 0;
	ret = acts[a].fn(f);
	alarm(0);
	st->calls[a]++;
	if (ret == SKIP)
		st->skipped[a]++;
	else if (!ret)
		st->ok[a]++;
	else
		st->err[a][ret > 0 && ret < N_ERRNO ? ret : 0]++;
}

/* A destroy in dependency order failed: nothing should have used it. */
static void must(int ret, const char *what)
{
	if (ret)
		violation("destroying everything in order: %s: %s", what,
			  strerror(ret));
}

/* Every live object destroyed, users before what they use; each must go. */
static void destroy_all(struct fuzz *f)
{
	int i;

	act_async(f);
	for (i = 0; i < N_QP; i++)
		if (f->qp[i].qp)
			must(ibv_destroy_qp(f->qp[i].qp), "destroy_qp");
	for (i = 0; i < N_AH; i++)
		if (f->ah[i].ah)
			must(ibv_destroy_ah(f->ah[i].ah), "destroy_ah");
	for (i = 0; i < N_MW; i++)
		if (f->mw[i].mw)
			must(ibv_dealloc_mw(f->mw[i].mw), "dealloc_mw");
	for (i = 0; i < N_MR; i++)
		if (f->mr[i].mr)
			must(ibv_dereg_mr(f->mr[i].mr), "dereg_mr");
	for (i = 0; i < N_SRQ; i++)
		if (f->srq[i].srq)
			must(ibv_destroy_srq(f->srq[i].srq), "destroy_srq");
	for (i = 0; i < N_CQ; i++)
		if (f->cq[i].cq)
			must(ibv_destroy_cq(f->cq[i].cq), "destroy_cq");
	for (i = 0; i < N_CH; i++)
		if (f->ch[i])
			must(ibv_destroy_comp_channel(f->ch[i]),
			     "destroy_comp_channel");
	for (i = 0; i < N_PD; i++)
		if (f->pd[i])
			must(ibv_dealloc_pd(f->pd[i]), "dealloc_pd");
	st_dev_close(&f->d);
}

/*
 * A second thread in half the lives: doorbells and state moves (ERR,
 * RESET, SQD, RTS) on the worker's QPs by handle, at random moments of
 * whatever the first thread is doing to them, destroys included. It
 * never touches a library structure, so a QP the first thread destroys
 * is only a handle the kernel refuses.
 */
struct racer {
	struct fuzz *f;
	__u64 rnd;
	bool stop;	/* atomic */
	pthread_t thread;
};

static void *racer_main(void *arg)
{
	static const int moves[] = {
		IBV_QPS_ERR, IBV_QPS_RESET, IBV_QPS_SQD, IBV_QPS_RTS,
	};
	struct racer *r = arg;
	int fd = r->f->d.ctx->cmd_fd, h, i;
	__u64 v;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		v = st_rnd_next(&r->rnd);
		for (i = 0, h = -1; i < N_QP && h < 0; i++)
			h = __atomic_load_n(&r->f->handle[(v + i) % N_QP],
					    __ATOMIC_ACQUIRE);
		if (h >= 0 && (v >> 8) % 8) {
			st_doorbell_handle(fd, h);
			__atomic_add_fetch(&st->race_doorbells, 1,
					   __ATOMIC_RELAXED);
		} else if (h >= 0) {
			st_modify_state_handle(fd, h, moves[(v >> 16) % 4]);
			__atomic_add_fetch(&st->race_moves, 1,
					   __ATOMIC_RELAXED);
		}
		usleep((v >> 24) % 200);
	}
	return NULL;
}

/*
 * A worker killed by a fault says where: the signal, its code and the
 * faulting address go to the shared stats for the parent's line, the
 * call chain to stderr (library offsets, for addr2line). Then the
 * signal ends the process as it would have.
 */
static void crash_handler(int sig, siginfo_t *si, void *uc)
{
	void *bt[32];
	int n;

	(void)uc;
	st->crash_sig = sig;
	st->crash_code = si->si_code;
	st->crash_addr = (__u64)(uintptr_t)si->si_addr;
	n = backtrace(bt, 32);
	backtrace_symbols_fd(bt, n, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void crash_handlers(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE };
	struct sigaction sa = {};
	unsigned int i;

	sa.sa_sigaction = crash_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ST_ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
}

/*
 * One life of a worker: open the device, @nops actions (fewer if
 * @deadline comes first, unless --ops counts), then either destroy
 * everything in order or exit with it all alive. Never returns.
 */
static void worker_life(__u64 seed, __u64 nops, long long deadline)
{
	static struct fuzz fz;
	struct fuzz *f = &fz;
	struct racer r = {};
	bool race;
	__u64 i;

	memset(f, 0, sizeof(*f));
	memset(f->handle, 0xff, sizeof(f->handle));
	f->rnd = seed;
	st->life_seed = seed;
	st->lives++;
	st->crash_sig = 0;
	crash_handlers();
	alarm(opt.hang_secs);
	if (st_dev_open(&f->d, opt.dev) ||
	    st_gid_pick(&f->d, opt.gid_index, 0)) {
		violation("the device cannot be opened: %s", strerror(errno));
		_exit(3);
	}
	fcntl(f->d.ctx->async_fd, F_SETFL,
	      fcntl(f->d.ctx->async_fd, F_GETFL) | O_NONBLOCK);
	f->arena = mmap(NULL, ARENA_LEN + PAGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->arena == MAP_FAILED)
		_exit(3);
	mprotect(f->arena + ARENA_LEN, PAGE, PROT_NONE);
	st_rnd_fill(f->arena, ARENA_LEN, seed);
	/* A start: a PD and a CQ, so that the first actions find something. */
	run_action(f, A_ALLOC_PD);
	run_action(f, A_CREATE_CQ);
	r.f = f;
	r.rnd = seed ^ 0x7ace;
	race = one_in(f, 2) && !pthread_create(&r.thread, NULL, racer_main, &r);
	for (i = 0; i < nops; i++) {
		if (!opt.ops && st_now_ms() >= deadline)
			break;
		run_action(f, pick_action(f));
	}
	if (race && one_in(f, 2))
		_exit(0);	/* mid-race, everything alive */
	if (race) {
		__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
		pthread_join(r.thread, NULL);
	}
	if (one_in(f, 2)) {
		alarm(opt.hang_secs);
		destroy_all(f);
		alarm(0);
		st->clean_exits++;
	} else if (one_in(f, 2)) {
		/* Leave with work in flight. */
		for (i = 0; i < 4; i++)
			run_action(f, A_TRAFFIC);
	}
	_exit(0);
}

struct slot {
	pid_t pid;
	__u64 life;
	bool done;
	__u64 seen;		/* its actions when last looked at */
	long long moved;	/* when they last changed */
};

static __u64 actions_of(const struct stats *s)
{
	__u64 n = 0;
	int a;

	for (a = 0; a < N_ACT; a++)
		n += s->calls[a];
	return n;
}

static __u64 life_seed(unsigned int w, __u64 life)
{
	return st_rnd_seed(opt.seed + w, life);
}

/* --- the check after ------------------------------------------------------ */

#define CHECK_LEN	(1024u * 1024)

/* A fresh context and RC pair: 1 MiB by RDMA Write, 4 KiB by Send. */
static bool check_after(char *why, size_t whylen)
{
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_mr *smr = NULL, *dmr = NULL;
	struct ibv_qp *a = NULL, *b = NULL;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	__u8 *src = NULL, *dst = NULL;
	struct st_path pa = {};
	struct st_dev d;
	struct ibv_wc wc;
	bool ok = false;
	size_t i;
	int ret;

	alarm(opt.hang_secs);
	ret = st_dev_open(&d, opt.dev);
	if (ret || st_gid_pick(&d, opt.gid_index, 0)) {
		snprintf(why, whylen, "the device cannot be opened (%d)", ret);
		return false;
	}
	pd = ibv_alloc_pd(d.ctx);
	cq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
	src = st_buf_alloc(CHECK_LEN, 0);
	dst = st_buf_alloc(CHECK_LEN, 0);
	if (!pd || !cq || !src || !dst) {
		snprintf(why, whylen, "no PD or CQ: %s", strerror(errno));
		goto out;
	}
	st_rnd_fill(src, CHECK_LEN, opt.seed ^ 0xc4ec);
	smr = st_mr_reg(pd, src, CHECK_LEN, IBV_ACCESS_LOCAL_WRITE, who);
	dmr = st_mr_reg(pd, dst, CHECK_LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE, who);
	a = st_qp_create(pd, cq, cq, IBV_QPT_RC, &cap);
	b = st_qp_create(pd, cq, cq, IBV_QPT_RC, &cap);
	if (!smr || !dmr || !a || !b) {
		snprintf(why, whylen, "no MR or QP: %s", strerror(errno));
		goto out;
	}
	pa.dgid = d.gid;
	pa.sgid_index = d.gid_index;
	pa.port = d.port;
	pa.mtu = d.mtu;
	pa.max_dest_rd_atomic = 1;
	pa.max_rd_atomic = 1;
	pa.min_rnr_timer = 1;
	pa.timeout = 14;
	pa.retry_cnt = 7;
	pa.rnr_retry = 7;
	pa.dest_qpn = b->qp_num;
	pa.sq_psn = 0x1234;
	pa.rq_psn = 0x1234;
	ret = st_qp_init(a, d.port, IBV_ACCESS_REMOTE_WRITE) ||
	      st_qp_init(b, d.port, IBV_ACCESS_REMOTE_WRITE) ||
	      st_qp_rtr(a, &pa);
	pa.dest_qpn = a->qp_num;
	ret = ret || st_qp_rtr(b, &pa) || st_qp_rts(b, &pa);
	pa.dest_qpn = b->qp_num;
	ret = ret || st_qp_rts(a, &pa);
	if (ret) {
		snprintf(why, whylen, "the RC pair does not connect: %s",
			 strerror(errno));
		goto out;
	}
	if (st_post_recv(b, 2, dst, 4096, dmr->lkey) ||
	    st_post_send(a, IBV_WR_RDMA_WRITE, 1, src, CHECK_LEN, smr->lkey,
			 (uintptr_t)dst, dmr->rkey, 0, IBV_SEND_SIGNALED)) {
		snprintf(why, whylen, "post: %s", strerror(errno));
		goto out;
	}
	if (st_poll_one(cq, &wc, 60000) <= 0 || wc.status || wc.wr_id != 1) {
		snprintf(why, whylen, "the 1 MiB Write did not complete well");
		goto out;
	}
	for (i = 0; i < CHECK_LEN && dst[i] == src[i]; i++)
		;
	if (i < CHECK_LEN) {
		snprintf(why, whylen, "the 1 MiB Write: byte %zu differs", i);
		goto out;
	}
	memset(dst, 0, 4096);
	if (st_post_send(a, IBV_WR_SEND, 3, src + 4096, 4096, smr->lkey, 0, 0,
			 0, IBV_SEND_SIGNALED)) {
		snprintf(why, whylen, "post: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < 2; i++)
		if (st_poll_one(cq, &wc, 60000) <= 0 || wc.status ||
		    (wc.wr_id != 2 && wc.wr_id != 3)) {
			snprintf(why, whylen, "the Send did not complete well");
			goto out;
		}
	if (memcmp(dst, src + 4096, 4096)) {
		snprintf(why, whylen, "the 4 KiB Send's data differs");
		goto out;
	}
	ok = true;
out:
	if (a)
		ibv_destroy_qp(a);
	if (b)
		ibv_destroy_qp(b);
	if (smr)
		ibv_dereg_mr(smr);
	if (dmr)
		ibv_dereg_mr(dmr);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	st_dev_close(&d);
	free(src);
	free(dst);
	alarm(0);
	return ok;
}

/* --- the summary ---------------------------------------------------------- */

static void summary(const struct stats *t)
{
	static const char *const ev_name[N_EV + 1] = {
		[IBV_EVENT_CQ_ERR] = "CQ_ERR",
		[IBV_EVENT_QP_FATAL] = "QP_FATAL",
		[IBV_EVENT_QP_REQ_ERR] = "QP_REQ_ERR",
		[IBV_EVENT_QP_ACCESS_ERR] = "QP_ACCESS_ERR",
		[IBV_EVENT_COMM_EST] = "COMM_EST",
		[IBV_EVENT_SQ_DRAINED] = "SQ_DRAINED",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ_LIMIT",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "LAST_WQE",
		[IBV_EVENT_PORT_ACTIVE] = "PORT_ACTIVE",
		[IBV_EVENT_GID_CHANGE] = "GID_CHANGE",
	};
	char line[1024];
	int a, e, n;

	for (a = 0; a < N_ACT; a++) {
		n = snprintf(line, sizeof(line), "%-14s %7llu calls %7llu ok %6llu skipped",
			     acts[a].name, (unsigned long long)t->calls[a],
			     (unsigned long long)t->ok[a],
			     (unsigned long long)t->skipped[a]);
		for (e = 0; e < N_ERRNO && n < (int)sizeof(line) - 40; e++)
			if (t->err[a][e])
				n += snprintf(line + n, sizeof(line) - n, " %s:%llu",
					      e ? strerrorname_np(e) : "other",
					      (unsigned long long)t->err[a][e]);
		st_diag(who, "%s", line);
	}
	/* A CQ's producer index scribbled makes its zeroes "success". */
	n = snprintf(line, sizeof(line),
		     "completions polled %llu (some made up by CQ scribbles):",
		     (unsigned long long)t->cqes);
	for (e = 0; e <= N_WC && n < (int)sizeof(line) - 60; e++)
		if (t->wc[e])
			n += snprintf(line + n, sizeof(line) - n, " %s:%llu",
				      e < N_WC ? ibv_wc_status_str(e) :
				      "garbage", (unsigned long long)t->wc[e]);
	st_diag(who, "%s", line);
	n = snprintf(line, sizeof(line), "async events:");
	for (e = 0; e <= N_EV && n < (int)sizeof(line) - 40; e++)
		if (t->ev[e])
			n += snprintf(line + n, sizeof(line) - n, " %s:%llu",
				      ev_name[e] ? ev_name[e] : "other",
				      (unsigned long long)t->ev[e]);
	st_diag(who, "%s", line);
}

static void stats_add(struct stats *t, const struct stats *s)
{
	const __u64 *src = (const __u64 *)s;
	__u64 *dst = (__u64 *)t;
	size_t i;

	/* Every counter is a __u64 up to violations. */
	for (i = 0; i <= offsetof(struct stats, violations) / 8; i++)
		dst[i] += src[i];
}

/* The parent's view of its workers. */
struct supervisor {
	struct slot slot[MAX_PROCS];
	unsigned int crashed, stuck;
	__u64 per_worker;	/* --ops: each worker's share */
	long long deadline;
};

/* A running worker: still moving? One that outlived its alarm is killed. */
static void watch(struct supervisor *sv, unsigned int w)
{
	const struct stats *s = &all_stats[w];
	struct slot *sl = &sv->slot[w];
	long long now = st_now_ms();

	if (actions_of(s) != sl->seen) {
		sl->seen = actions_of(s);
		sl->moved = now;
		return;
	}
	if (now - sl->moved <= 2000LL * opt.hang_secs)
		return;
	/* Its alarm did not end it: it is stuck in the kernel. */
	st_diag(who, "worker %u stuck in %s (pid %d, seed %#llx): killed", w,
		acts[s->last_act].name, sl->pid,
		(unsigned long long)s->life_seed);
	kill(sl->pid, SIGKILL);
	sv->stuck++;
	sl->done = true;
	sl->moved = LLONG_MAX / 2;
}

/* A worker's life ended with @status: a crash unless it exited with 0. */
static void reaped(struct supervisor *sv, unsigned int w, int status)
{
	const struct stats *s = &all_stats[w];
	bool sig = WIFSIGNALED(status);

	sv->slot[w].pid = 0;
	if (!sig && !WEXITSTATUS(status))
		return;
	sv->crashed++;
	st_diag(who, "worker %u life %llu (seed %#llx): %s %d during %s%s", w,
		(unsigned long long)sv->slot[w].life,
		(unsigned long long)s->life_seed, sig ? "signal" : "exit",
		sig ? WTERMSIG(status) : WEXITSTATUS(status),
		acts[s->last_act].name,
		sig && WTERMSIG(status) == SIGALRM ?
		": a verb did not return" : "");
	if (sig && s->crash_sig == WTERMSIG(status))
		st_diag(who, "worker %u: signal %d code %d at address %#llx (call chain above)",
			w, s->crash_sig, s->crash_code,
			(unsigned long long)s->crash_addr);
}

/* Worker @w's next life, unless its work is done: started? */
static bool start_life(struct supervisor *sv, unsigned int w)
{
	__u64 done = actions_of(&all_stats[w]), seed, r, n;
	struct slot *sl = &sv->slot[w];

	if ((opt.ops && done >= sv->per_worker) ||
	    (!opt.ops && st_now_ms() >= sv->deadline) || sv->crashed > 4) {
		sl->done = true;
		return false;
	}
	sl->life++;
	seed = life_seed(w, sl->life);
	r = seed;
	n = 50 + st_rnd_next(&r) % 1500;
	if (opt.ops && n > sv->per_worker - done)
		n = sv->per_worker - done;
	if (opt.verbose)
		st_diag(who, "worker %u life %llu: seed %#llx, %llu actions",
			w, (unsigned long long)sl->life,
			(unsigned long long)seed, (unsigned long long)n);
	fflush(stdout);
	sl->pid = fork();
	if (sl->pid < 0)
		st_bail("fork failed");
	if (!sl->pid) {
		st = &all_stats[w];
		worker_life(seed, n, sv->deadline);
	}
	sl->moved = st_now_ms();
	return true;
}

/* The workers' lives, one after another, until time or actions run out. */
static void supervise(struct supervisor *sv)
{
	long long stuck_until = 0;
	unsigned int w, running;
	int status;
	pid_t r;

	for (;;) {
		running = 0;
		for (w = 0; w < opt.procs; w++) {
			struct slot *sl = &sv->slot[w];

			if (sl->pid > 0) {
				status = 0;
				r = waitpid(sl->pid, &status, WNOHANG);
				if (!r) {
					watch(sv, w);
					running++;
					continue;
				}
				reaped(sv, w, status);
			}
			if (!sl->done && start_life(sv, w))
				running++;
		}
		if (!running || (sv->stuck && st_now_ms() > stuck_until))
			return;
		if (sv->stuck && !stuck_until)	/* a while to be reaped */
			stuck_until = st_now_ms() + 5000;
		st_sleep_ms(20);
	}
}

/* The summary and the three TAP points. */
static void report(struct supervisor *sv, struct st_tap *tap, long long t0)
{
	struct stats total = {};
	char why[200] = "";
	unsigned int w;
	__u64 n;
	bool ok;

	for (w = 0; w < opt.procs; w++) {
		stats_add(&total, &all_stats[w]);
		if (all_stats[w].violations)
			st_diag(who, "worker %u: %llu rules broken, first: %s",
				w, (unsigned long long)all_stats[w].violations,
				all_stats[w].first_violation);
	}
	summary(&total);
	n = actions_of(&total);
	st_diag(who, "%llu actions in %lld s: %llu work requests, %llu ring scribbles",
		(unsigned long long)n, (st_now_ms() - t0) / 1000,
		(unsigned long long)total.wrs,
		(unsigned long long)total.scribbles);
	st_diag(who, "%llu lives, %llu ended by destroying everything",
		(unsigned long long)total.lives,
		(unsigned long long)total.clean_exits);
	st_diag(who, "racing threads: %llu doorbells, %llu state moves",
		(unsigned long long)total.race_doorbells,
		(unsigned long long)total.race_moves);
	st_tap_ok(tap, !sv->crashed && !sv->stuck && n > 0,
		  "fuzz: %llu actions, %u workers crashed or hung, %u stuck in the kernel",
		  (unsigned long long)n, sv->crashed, sv->stuck);
	st_tap_ok(tap, !total.violations,
		  "rules: %llu objects destroyed while in use or not in order",
		  (unsigned long long)total.violations);
	if (sv->stuck) {
		st_tap_ok(tap, false, "check after: not run, a worker is stuck");
		return;
	}
	ok = check_after(why, sizeof(why));
	st_tap_ok(tap, ok,
		  "check after: a fresh RC pair moves 1 MiB by Write and 4 KiB by Send%s%s",
		  ok ? "" : ": ", why);
}

/* --- main ----------------------------------------------------------------- */

static void print_usage(void)
{
	fputs("usage: srnic_vfuzz --dev DEV [--gid-index N] [--seed S] [--seconds S | --ops N]\n"
	      "                   [--procs P] [--hang-secs S] [-v]\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "ops", required_argument, NULL, 'o' },
		{ "procs", required_argument, NULL, 'p' },
		{ "hang-secs", required_argument, NULL, 'h' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct supervisor sv = {};
	struct st_tap tap = {};
	struct st_dev d;
	long long t0;
	int c;

	opt.seed = (__u64)time(NULL) ^ (__u64)getpid() << 16;
	while ((c = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			opt.dev = optarg;
			break;
		case 'g':
			opt.gid_index = atoi(optarg);
			break;
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			opt.seconds = strtoul(optarg, NULL, 0);
			break;
		case 'o':
			opt.ops = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			opt.procs = strtoul(optarg, NULL, 0);
			break;
		case 'h':
			opt.hang_secs = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			opt.verbose++;
			break;
		default:
			print_usage();
		}
	}
	if (!opt.dev || !opt.procs || opt.procs > MAX_PROCS || !opt.hang_secs)
		print_usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);

	/* The device is there and has a GID; closed again before the fork. */
	if (st_dev_open(&d, opt.dev) || st_gid_pick(&d, opt.gid_index, 0))
		return st_tap_skip_all(&tap, "cannot open the device or pick a GID");
	opt.gid_index = d.gid_index;	/* the lives need not search */
	st_dev_close(&d);
	all_stats = mmap(NULL, sizeof(*all_stats) * MAX_PROCS,
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			 -1, 0);
	if (all_stats == MAP_FAILED)
		st_bail("out of memory");
	st_tap_plan(&tap, 3);
	st_diag(who, "seed %#llx, %u process%s, %s %llu",
		(unsigned long long)opt.seed, opt.procs,
		opt.procs > 1 ? "es" : "",
		opt.ops ? "actions" : "seconds",
		opt.ops ? (unsigned long long)opt.ops :
		(unsigned long long)opt.seconds);
	if (opt.ops)
		sv.per_worker = (opt.ops + opt.procs - 1) / opt.procs;

	t0 = st_now_ms();
	sv.deadline = t0 + (long long)opt.seconds * 1000;
	supervise(&sv);
	report(&sv, &tap, t0);
	st_diag(who, "seed %#llx", (unsigned long long)opt.seed);
	return st_tap_end(&tap);
}
