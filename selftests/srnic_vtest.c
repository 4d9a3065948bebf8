// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_vtest: verbs-level checks through the stock libibverbs and librxe.
 *
 *   srnic_vtest limits DEV     every out-of-range verbs argument is refused
 *                              with the right errno, the advertised limit
 *                              itself is accepted, nothing changes on error
 *   srnic_vtest hold DEV SECS  open DEV with a PD, CQ and QP, print "ready",
 *                              then wait up to SECS for an async event and
 *                              print its name; exit 0 on DEVICE_FATAL
 *                              (SECS 0: exit 0 right after "ready")
 *
 * Output is TAP; exit status 0 when every case passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include <srnic/limits.h>

#include "srnic_test.h"

/* What every check works on: a device, its port 1, a PD and a CQ. */
struct vt {
	struct st_tap tap;
	struct st_dev d;	/* its GID: picked by check_qp_modify() */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

/* errno of a verb that returns a pointer: 0 on success (object freed). */
#define PTR_ERRNO(expr, destroy) ({					\
	void *__p;							\
	int __e;							\
									\
	errno = 0;							\
	__p = (expr);							\
	__e = __p ? 0 : (errno ? errno : -1);				\
	if (__p)							\
		destroy(__p);						\
	__e;								\
})

static int cq_destroy(void *p) { return ibv_destroy_cq(p); }
static int qp_destroy(void *p) { return ibv_destroy_qp(p); }
static int mr_destroy(void *p) { return ibv_dereg_mr(p); }
static int srq_destroy(void *p) { return ibv_destroy_srq(p); }
static int ah_destroy(void *p) { return ibv_destroy_ah(p); }

static void expect_errno(struct st_tap *t, int got, int want, const char *what)
{
	if (got == want)
		st_tap_ok(t, 1, "%s -> %s", what, want ? strerror(want) : "ok");
	else
		st_tap_ok(t, 0, "%s -> %s (expected %s)", what,
			  got ? (got > 0 ? strerror(got) : "failed without errno") :
				"ok",
			  want ? strerror(want) : "ok");
}

static void check_cq(struct vt *v)
{
	const struct ibv_device_attr *da = &v->d.attr;
	struct ibv_context *ctx = v->d.ctx;
	struct st_tap *t = &v->tap;
	struct ibv_cq *cq;
	char buf[64];

	expect_errno(t, PTR_ERRNO(ibv_create_cq(ctx, 0, NULL, NULL, 0),
				  cq_destroy), EINVAL, "create_cq cqe=0");
	snprintf(buf, sizeof(buf), "create_cq cqe=max_cqe (%d)", da->max_cqe);
	expect_errno(t, PTR_ERRNO(ibv_create_cq(ctx, da->max_cqe, NULL, NULL, 0),
				  cq_destroy), 0, buf);
	expect_errno(t, PTR_ERRNO(ibv_create_cq(ctx, da->max_cqe + 1, NULL, NULL,
						0), cq_destroy),
		     EINVAL, "create_cq cqe=max_cqe+1");
	expect_errno(t, PTR_ERRNO(ibv_create_cq(ctx, 4, NULL, NULL,
						ctx->num_comp_vectors),
				  cq_destroy), EINVAL,
		     "create_cq comp_vector=num_comp_vectors");

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq) {
		st_tap_ok(t, 0, "create_cq 16");
		return;
	}
	expect_errno(t, ibv_resize_cq(cq, da->max_cqe + 1), EINVAL,
		     "resize_cq to max_cqe+1");
	expect_errno(t, ibv_resize_cq(cq, 0), EINVAL, "resize_cq to 0");
	expect_errno(t, ibv_resize_cq(cq, 100), 0, "resize_cq 16 -> 100");
	st_tap_ok(t, cq->cqe >= 100, "resized CQ reports cqe %d >= 100", cq->cqe);
	expect_errno(t, ibv_resize_cq(cq, 8), 0, "resize_cq 100 -> 8 (empty)");
	ibv_destroy_cq(cq);
}

static void check_qp_create(struct vt *v)
{
	const struct ibv_device_attr *da = &v->d.attr;
	struct ibv_pd *pd = v->pd;
	struct ibv_cq *cq = v->cq;
	struct st_tap *t = &v->tap;
	struct ibv_qp_cap ok = { .max_send_wr = da->max_qp_wr,
				 .max_recv_wr = da->max_qp_wr,
				 .max_send_sge = da->max_sge,
				 .max_recv_sge = da->max_sge };
	struct ibv_qp_cap cap;
	struct ibv_qp *qp;

	qp = st_qp_create(pd, cq, cq, IBV_QPT_RC, &ok);
	st_tap_ok(t, !!qp, "create_qp RC at max_qp_wr %d / max_sge %d", da->max_qp_wr,
		  da->max_sge);
	if (qp)
		ibv_destroy_qp(qp);

	cap = ok;
	cap.max_send_wr++;
	expect_errno(t, PTR_ERRNO(st_qp_create(pd, cq, cq, IBV_QPT_RC, &cap), qp_destroy),
		     EINVAL, "create_qp max_send_wr=max_qp_wr+1");
	cap = ok;
	cap.max_recv_wr++;
	expect_errno(t, PTR_ERRNO(st_qp_create(pd, cq, cq, IBV_QPT_RC, &cap), qp_destroy),
		     EINVAL, "create_qp max_recv_wr=max_qp_wr+1");
	cap = ok;
	cap.max_send_sge++;
	expect_errno(t, PTR_ERRNO(st_qp_create(pd, cq, cq, IBV_QPT_RC, &cap), qp_destroy),
		     EINVAL, "create_qp max_send_sge=max_sge+1");
	cap = ok;
	cap.max_recv_sge++;
	expect_errno(t, PTR_ERRNO(st_qp_create(pd, cq, cq, IBV_QPT_RC, &cap), qp_destroy),
		     EINVAL, "create_qp max_recv_sge=max_sge+1");
	cap = ok;
	cap.max_inline_data = SRNIC_MAX_INLINE + 1;
	expect_errno(t, PTR_ERRNO(st_qp_create(pd, cq, cq, IBV_QPT_RC, &cap), qp_destroy),
		     EINVAL, "create_qp max_inline_data=max+1");
	cap = ok;
	cap.max_inline_data = SRNIC_MAX_INLINE;
	qp = st_qp_create(pd, cq, cq, IBV_QPT_UD, &cap);
	st_tap_ok(t, qp && qp->qp_type == IBV_QPT_UD, "create_qp UD max_inline_data=%d",
		  SRNIC_MAX_INLINE);
	if (qp)
		ibv_destroy_qp(qp);
	qp = st_qp_create(pd, cq, cq, IBV_QPT_UC, NULL);
	st_tap_ok(t, !!qp, "create_qp UC");
	if (qp)
		ibv_destroy_qp(qp);
}

struct modify_case {
	const char *what;
	struct ibv_qp_attr attr;
	int mask;
};

static void modify_refused_with(struct st_tap *t, struct ibv_qp *qp,
				const struct modify_case *c, int want)
{
	struct ibv_qp_attr attr = c->attr;
	int before = st_qp_state(qp);
	int err = ibv_modify_qp(qp, &attr, c->mask);

	expect_errno(t, err, want, c->what);
	st_tap_ok(t, st_qp_state(qp) == before, "  ... QP state unchanged (%d)", before);
}

static void modify_refused(struct st_tap *t, struct ibv_qp *qp,
			   const struct modify_case *c)
{
	modify_refused_with(t, qp, c, EINVAL);
}

static void check_qp_modify(struct vt *v)
{
	const struct ibv_device_attr *da = &v->d.attr;
	struct st_tap *t = &v->tap;
	const int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS;
	const int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	const int rts_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			     IBV_QP_MAX_QP_RD_ATOMIC;
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_qp_attr rtr = { .qp_state = IBV_QPS_RTR,
				   .path_mtu = IBV_MTU_1024, .dest_qp_num = 0x11,
				   .rq_psn = 1, .max_dest_rd_atomic = 1,
				   .min_rnr_timer = 12,
				   .ah_attr = { .is_global = 1, .port_num = 1,
						.grh = { .hop_limit = 64 } } };
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS, .timeout = 14,
				   .retry_cnt = 7, .rnr_retry = 7, .sq_psn = 1,
				   .max_rd_atomic = 1 };
	struct modify_case c;
	struct ibv_qp *qp;

	/* The first RoCEv2 (IPv4-mapped) GID the port has. */
	if (st_gid_pick(&v->d, -1, ST_GID_V4)) {
		st_tap_ok(t, 0, "port 1 has an IPv4-mapped GID");
		return;
	}
	rtr.ah_attr.grh.sgid_index = v->d.gid_index;
	rtr.ah_attr.grh.dgid = v->d.gid;

	qp = st_qp_create(v->pd, v->cq, v->cq, IBV_QPT_RC, NULL);
	if (!qp) {
		st_tap_ok(t, 0, "create_qp RC");
		return;
	}

	c = (struct modify_case){ "RESET -> RTR (skips INIT)", rtr, rtr_mask };
	modify_refused(t, qp, &c);
	c = (struct modify_case){ "RESET -> INIT without port/access",
				  init, IBV_QP_STATE };
	modify_refused(t, qp, &c);
	c = (struct modify_case){ "RESET -> INIT port_num=2", init, init_mask };
	c.attr.port_num = 2;
	modify_refused(t, qp, &c);
	c = (struct modify_case){ "RESET -> INIT pkey_index=1", init,
				  init_mask };
	c.attr.pkey_index = 1;
	modify_refused(t, qp, &c);
	c = (struct modify_case){ "RESET -> INIT access flag MW_BIND", init,
				  init_mask };
	c.attr.qp_access_flags |= IBV_ACCESS_MW_BIND;
	modify_refused(t, qp, &c);
	expect_errno(t, ibv_modify_qp(qp, &init, init_mask), 0, "RESET -> INIT");

	c = (struct modify_case){ "INIT -> RTR path_mtu=6", rtr, rtr_mask };
	c.attr.path_mtu = 6;
	modify_refused(t, qp, &c);
	c = (struct modify_case){ "INIT -> RTR dest_qp_num=2^24", rtr,
				  rtr_mask };
	c.attr.dest_qp_num = 1 << 24;
	modify_refused(t, qp, &c);
	c = (struct modify_case){ "INIT -> RTR max_dest_rd_atomic=max+1", rtr,
				  rtr_mask };
	c.attr.max_dest_rd_atomic = da->max_qp_rd_atom + 1;
	modify_refused(t, qp, &c);
	c = (struct modify_case){ "INIT -> RTR min_rnr_timer=32", rtr,
				  rtr_mask };
	c.attr.min_rnr_timer = 32;
	modify_refused(t, qp, &c);
	c = (struct modify_case){ "INIT -> RTR without GRH", rtr, rtr_mask };
	c.attr.ah_attr.is_global = 0;
	modify_refused(t, qp, &c);
	/* The core looks the GID up before srnic sees the request. */
	c = (struct modify_case){ "INIT -> RTR sgid_index of an empty GID entry", rtr,
				  rtr_mask };
	c.attr.ah_attr.grh.sgid_index = 250;	/* an empty entry */
	modify_refused_with(t, qp, &c, ENODATA);
	expect_errno(t, ibv_modify_qp(qp, &rtr, rtr_mask), 0, "INIT -> RTR");

	c = (struct modify_case){ "RTR -> RTS timeout=32", rts, rts_mask };
	c.attr.timeout = 32;
	modify_refused(t, qp, &c);
	c = (struct modify_case){ "RTR -> RTS retry_cnt=8", rts, rts_mask };
	c.attr.retry_cnt = 8;
	modify_refused(t, qp, &c);
	c = (struct modify_case){ "RTR -> RTS rnr_retry=8", rts, rts_mask };
	c.attr.rnr_retry = 8;
	modify_refused(t, qp, &c);
	c = (struct modify_case){ "RTR -> RTS max_rd_atomic=max+1", rts,
				  rts_mask };
	c.attr.max_rd_atomic = da->max_qp_init_rd_atom + 1;
	modify_refused(t, qp, &c);
	/* The core masks PSNs to 24 bits (and logs it) before srnic. */
	rts.sq_psn = (1 << 24) | 5;
	expect_errno(t, ibv_modify_qp(qp, &rts, rts_mask), 0, "RTR -> RTS");
	c = (struct modify_case){ "RTS -> INIT", init, IBV_QP_STATE };
	modify_refused(t, qp, &c);

	{
		struct ibv_qp_init_attr qinit;
		struct ibv_qp_attr q;

		ibv_query_qp(qp, &q, IBV_QP_STATE, &qinit);
		st_tap_ok(t, q.qp_state == IBV_QPS_RTS && q.dest_qp_num == 0x11 &&
			  q.timeout == 14 && q.path_mtu == IBV_MTU_1024 &&
			  q.sq_psn == 5 && q.rq_psn == 1 &&
			  q.ah_attr.grh.sgid_index == v->d.gid_index &&
			  q.max_dest_rd_atomic == 1,
			  "query_qp reports what modify_qp set");
	}

	/*
	 * The doorbell accepts work in RTS; the peer does not exist, so the
	 * WQE is still outstanding when the QP is destroyed under it.
	 */
	{
		struct ibv_send_wr wr = { .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad;

		st_tap_ok(t, ibv_post_send(qp, &wr, &bad) == 0,
			  "post_send on an RTS QP is accepted");
	}
	expect_errno(t, ibv_destroy_qp(qp), 0,
		     "destroy_qp with a send outstanding");
}

static void check_mr(struct vt *v)
{
	struct ibv_pd *pd = v->pd;
	struct st_tap *t = &v->tap;
	size_t len = 1 << 16;
	char *buf = malloc(len);

	expect_errno(t, PTR_ERRNO(ibv_reg_mr(pd, buf, len,
					     IBV_ACCESS_REMOTE_WRITE),
				  mr_destroy), EINVAL,
		     "reg_mr REMOTE_WRITE without LOCAL_WRITE");
	/* IBA 10.6.3: a region's length may be zero (issue 19). */
	expect_errno(t, PTR_ERRNO(ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE),
				  mr_destroy), 0, "reg_mr length 0");
	expect_errno(t, PTR_ERRNO(ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
					     IBV_ACCESS_ZERO_BASED), mr_destroy),
		     0, "reg_mr ZERO_BASED");
	expect_errno(t, PTR_ERRNO(ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
					     IBV_ACCESS_MW_BIND), mr_destroy),
		     0, "reg_mr MW_BIND (memory windows)");
	expect_errno(t, PTR_ERRNO(ibv_reg_mr(pd, (void *)(uintptr_t)-4096, 8192,
					     IBV_ACCESS_LOCAL_WRITE), mr_destroy),
		     EINVAL, "reg_mr range wrapping the address space");
	expect_errno(t, PTR_ERRNO(ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
					     IBV_ACCESS_REMOTE_WRITE |
					     IBV_ACCESS_REMOTE_READ |
					     IBV_ACCESS_REMOTE_ATOMIC),
				  mr_destroy), 0, "reg_mr all remote rights");
	free(buf);
}

static void check_srq(struct vt *v)
{
	const struct ibv_device_attr *da = &v->d.attr;
	struct ibv_pd *pd = v->pd;
	struct st_tap *t = &v->tap;
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 16,
						    .max_sge = 1 } };
	struct ibv_srq_init_attr bad;
	struct ibv_srq_attr sa;
	struct ibv_srq *srq;

	bad = init;
	bad.attr.max_wr = 0;
	expect_errno(t, PTR_ERRNO(ibv_create_srq(pd, &bad), srq_destroy), EINVAL,
		     "create_srq max_wr=0");
	bad = init;
	bad.attr.max_wr = da->max_srq_wr + 1;
	expect_errno(t, PTR_ERRNO(ibv_create_srq(pd, &bad), srq_destroy), EINVAL,
		     "create_srq max_wr=max_srq_wr+1");
	bad = init;
	bad.attr.max_sge = da->max_srq_sge + 1;
	expect_errno(t, PTR_ERRNO(ibv_create_srq(pd, &bad), srq_destroy), EINVAL,
		     "create_srq max_sge=max_srq_sge+1");
	bad = init;
	bad.attr.srq_limit = 17;
	expect_errno(t, PTR_ERRNO(ibv_create_srq(pd, &bad), srq_destroy), EINVAL,
		     "create_srq srq_limit > max_wr");

	srq = ibv_create_srq(pd, &init);
	if (!srq) {
		st_tap_ok(t, 0, "create_srq max_wr=16");
		return;
	}
	sa.srq_limit = 1000;
	expect_errno(t, ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL,
		     "modify_srq limit > max_wr");
	sa.max_wr = 200;
	expect_errno(t, ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), 0,
		     "modify_srq resize 16 -> 200");
	memset(&sa, 0, sizeof(sa));
	ibv_query_srq(srq, &sa);
	st_tap_ok(t, sa.max_wr >= 200, "query_srq max_wr %u >= 200", sa.max_wr);
	sa.srq_limit = 100;
	expect_errno(t, ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0,
		     "modify_srq limit 100");
	ibv_destroy_srq(srq);
}

static void check_ah(struct vt *v)
{
	struct ibv_pd *pd = v->pd;
	struct st_tap *t = &v->tap;
	struct ibv_ah_attr attr = { .is_global = 1, .port_num = 1,
				    .grh = { .hop_limit = 1,
					     .sgid_index = 250 } };

	expect_errno(t, PTR_ERRNO(ibv_create_ah(pd, &attr), ah_destroy), ENODATA,
		     "create_ah sgid_index of an empty GID entry");
	attr.is_global = 0;
	attr.grh.sgid_index = 0;
	st_tap_ok(t, PTR_ERRNO(ibv_create_ah(pd, &attr), ah_destroy) != 0,
		  "create_ah without GRH refused");
}

/*
 * A ring's mmap cookie maps once: find the CQ ring librxe mapped (its
 * offset is in /proc/self/maps) and map it again.
 */
static void check_mmap(struct vt *v)
{
	struct ibv_context *ctx = v->d.ctx;
	struct st_tap *t = &v->tap;
	unsigned long start, end, off;
	char line[512], path[256];
	int found = 0;
	struct ibv_cq *cq;
	FILE *maps;
	void *p;

	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!cq) {
		st_tap_ok(t, 0, "create_cq for mmap checks");
		return;
	}
	maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof(line), maps)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %255s", &start, &end,
			   &off, path) < 3)
			continue;
		if (strstr(path, "/dev/infiniband/uverbs")) {
			found = 1;
			break;
		}
	}
	if (maps)
		fclose(maps);
	st_tap_ok(t, found, "librxe mapped a ring from the uverbs device");
	if (found) {
		p = mmap(NULL, end - start, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ctx->cmd_fd, off);
		st_tap_ok(t, p == MAP_FAILED, "second mmap of the same cookie refused (%s)",
			  p == MAP_FAILED ? strerror(errno) : "mapped");
		if (p != MAP_FAILED)
			munmap(p, end - start);
	}
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ctx->cmd_fd,
		 (off_t)0x7fff0000 << 12);
	st_tap_ok(t, p == MAP_FAILED, "mmap of an unknown cookie refused");
	if (p != MAP_FAILED)
		munmap(p, 4096);
	ibv_destroy_cq(cq);
}

enum obj_kind { OBJ_PD, OBJ_CQ, OBJ_QP, OBJ_MR, OBJ_SRQ, OBJ_AH, OBJ_NR };

static const char * const obj_name[OBJ_NR] = {
	"PD", "CQ", "QP", "MR", "SRQ", "AH",
};

static void *obj_create(enum obj_kind k, struct vt *v, void *buf)
{
	struct ibv_srq_init_attr sinit = { .attr = { .max_wr = 1,
						     .max_sge = 1 } };
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1,
				  .grh = { .hop_limit = 1 } };

	switch (k) {
	case OBJ_PD:
		return ibv_alloc_pd(v->d.ctx);
	case OBJ_CQ:
		return ibv_create_cq(v->d.ctx, 1, NULL, NULL, 0);
	case OBJ_QP:
		return st_qp_create(v->pd, v->cq, v->cq, IBV_QPT_RC, NULL);
	case OBJ_MR:
		return ibv_reg_mr(v->pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	case OBJ_SRQ:
		return ibv_create_srq(v->pd, &sinit);
	case OBJ_AH:
		ah.grh.sgid_index = v->d.gid_index;
		ah.grh.dgid = v->d.gid;
		return ibv_create_ah(v->pd, &ah);
	default:
		return NULL;
	}
}

static void obj_destroy(enum obj_kind k, void *obj)
{
	switch (k) {
	case OBJ_PD:
		ibv_dealloc_pd(obj);
		break;
	case OBJ_CQ:
		ibv_destroy_cq(obj);
		break;
	case OBJ_QP:
		ibv_destroy_qp(obj);
		break;
	case OBJ_MR:
		ibv_dereg_mr(obj);
		break;
	case OBJ_SRQ:
		ibv_destroy_srq(obj);
		break;
	case OBJ_AH:
		ibv_destroy_ah(obj);
		break;
	default:
		break;
	}
}

/* Create objects until refused; return how many, destroy them all. */
static int obj_fill(enum obj_kind k, struct vt *v, void *buf, int cap,
		    int *err)
{
	void **objs = calloc(cap + 1, sizeof(*objs));
	int n = 0, i;

	*err = 0;
	while (n <= cap) {
		errno = 0;
		objs[n] = obj_create(k, v, buf);
		if (!objs[n]) {
			*err = errno;
			break;
		}
		n++;
	}
	for (i = 0; i < n; i++)
		obj_destroy(k, objs[i]);
	free(objs);
	return n;
}

/*
 * Each object limit is enforced, and no refused or failed verb leaked an
 * object: exhaust the limit (the module is loaded with small ones), and do
 * it again. Runs last, after every bad-input case above.
 */
static void check_exhaust(struct vt *v)
{
	const struct ibv_device_attr *da = &v->d.attr;
	struct st_tap *t = &v->tap;
	const int limit[OBJ_NR] = {
		da->max_pd, da->max_cq, da->max_qp, da->max_mr, da->max_srq,
		da->max_ah,
	};
	/*
	 * Already in use: this program's PD and CQ, and what the kernel MAD
	 * layer holds on every device: a PD, a CQ, and the PD's internal DMA
	 * MR (srnic has no local DMA lkey). Its GSI QP is not counted.
	 */
	const int held[OBJ_NR] = { 1 + 1, 1 + 1, 0, 0 + 1, 0, 0 };
	void *buf = malloc(4096);
	int k, round;

	for (k = 0; k < OBJ_NR; k++) {
		int want = limit[k] - held[k], n, err;

		if (limit[k] > 64) {
			st_tap_skip(t, "too large to exhaust (load srnic with max_*=)",
				    "%s limit %d", obj_name[k], limit[k]);
			continue;
		}
		if (k == OBJ_AH && v->d.gid_index < 0) {
			st_tap_ok(t, 0, "AH limit: no RoCEv2 GID to build AHs with");
			continue;
		}
		for (round = 1; round <= 2; round++) {
			n = obj_fill(k, v, buf, want + 1, &err);
			st_tap_ok(t, n == want && err == ENOMEM,
				  "%s limit %d: %d more created, next refused with %s (round %d)",
				  obj_name[k], limit[k], n, strerror(err), round);
		}
	}
	free(buf);
}

static int cmd_limits(const char *dev)
{
	struct vt v = {};
	struct st_tap *t = &v.tap;
	const struct ibv_device_attr *da = &v.d.attr;
	char why[128];
	int rc;

	rc = st_dev_open(&v.d, dev);
	if (rc == -ENODEV || rc == -ENOENT) {
		snprintf(why, sizeof(why), "cannot open %s", dev);
		return st_tap_skip_all(t, why);
	}
	if (rc) {
		st_tap_ok(t, 0, "query_device");
		return ST_EXIT_FAIL;
	}
	st_tap_ok(t, da->max_qp_wr == SRNIC_MAX_QP_WR &&
		  da->max_sge == SRNIC_MAX_SGE && da->max_cqe == SRNIC_MAX_CQE,
		  "query_device reports srnic's limits");
	printf("# limits: max_pd %d max_cq %d max_qp %d max_mr %d max_srq %d max_ah %d\n",
	       da->max_pd, da->max_cq, da->max_qp, da->max_mr, da->max_srq,
	       da->max_ah);
	v.pd = ibv_alloc_pd(v.d.ctx);
	v.cq = ibv_create_cq(v.d.ctx, 64, NULL, NULL, 0);
	if (!v.pd || !v.cq) {
		st_tap_ok(t, 0, "alloc_pd + create_cq");
		return ST_EXIT_FAIL;
	}
	check_cq(&v);
	check_qp_create(&v);
	check_qp_modify(&v);
	check_mr(&v);
	check_srq(&v);
	check_ah(&v);
	check_mmap(&v);
	check_exhaust(&v);
	ibv_destroy_cq(v.cq);
	ibv_dealloc_pd(v.pd);
	st_dev_close(&v.d);
	return st_tap_end(t);
}

static int cmd_hold(const char *dev, int secs)
{
	struct ibv_async_event ev;
	struct ibv_context *ctx;
	struct pollfd pfd;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	ctx = st_open_device(dev);
	if (!ctx) {
		fprintf(stderr, "cannot open %s\n", dev);
		return 2;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : NULL;
	qp = cq ? st_qp_create(pd, cq, cq, IBV_QPT_RC, NULL) : NULL;
	if (!qp) {
		fprintf(stderr, "cannot create objects on %s\n", dev);
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	if (!secs)
		goto out;

	pfd.fd = ctx->async_fd;
	pfd.events = POLLIN;
	fcntl(ctx->async_fd, F_SETFL, O_NONBLOCK);
	for (;;) {
		if (poll(&pfd, 1, secs * 1000) <= 0) {
			printf("timeout\n");
			return 1;
		}
		if (ibv_get_async_event(ctx, &ev))
			continue;
		printf("event %s%s\n", ibv_event_type_str(ev.event_type),
		       ev.event_type == IBV_EVENT_DEVICE_FATAL ?
		       " (DEVICE_FATAL)" : "");
		fflush(stdout);
		ibv_ack_async_event(&ev);
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			break;
	}
out:
	/* After DEVICE_FATAL the device is gone: teardown must still work. */
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("closed\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "limits"))
		return cmd_limits(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "hold"))
		return cmd_hold(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: %s limits DEV | hold DEV SECS\n", argv[0]);
	return 2;
}
