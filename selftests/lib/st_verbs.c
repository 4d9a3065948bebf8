// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_test: devices, GIDs, QPs, memory, work requests, completions.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srnic_test.h"

/* --- device and GID ------------------------------------------------------ */

/**
 * st_open_device() - open an RDMA device by name.
 * @name: its name, or NULL for the first device
 *
 * Return: its context, or NULL (errno ENODEV when there is no such device).
 */
struct ibv_context *st_open_device(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n && !ctx; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		errno = ENODEV;
	return ctx;
}

/**
 * st_dev_open() - open a device and query it and its port 1.
 * @d: filled in; no GID is picked yet (st_gid_pick())
 * @name: the device's name, or NULL for the first device
 *
 * Return: 0; -ENODEV when there is no RDMA device at all, -ENOENT when
 * there is none of that name (both: skip the test); -EIO when the
 * queries failed (errno says why).
 */
int st_dev_open(struct st_dev *d, const char *name)
{
	struct ibv_device **list;
	int n = 0;

	memset(d, 0, sizeof(*d));
	d->port = 1;
	d->gid_index = -1;
	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	if (!n)
		return -ENODEV;
	d->ctx = st_open_device(name);
	if (!d->ctx)
		return -ENOENT;
	if (ibv_query_device(d->ctx, &d->attr) ||
	    ibv_query_port(d->ctx, d->port, &d->port_attr))
		return -EIO;
	d->mtu = d->port_attr.active_mtu;
	return 0;
}

/**
 * st_dev_close() - close what st_dev_open() opened.
 * @d: the device
 */
void st_dev_close(struct st_dev *d)
{
	if (d->ctx)
		ibv_close_device(d->ctx);
	d->ctx = NULL;
}

/**
 * st_gid_pick() - pick the GID to send from, by index or by kind.
 * @d: the device; sets @d->gid_index and @d->gid
 * @index: that GID table entry; < 0: the first RoCEv2 IPv4-mapped GID,
 *	   else (without ST_GID_V4 in @flags) the first RoCEv2 IPv6 GID
 * @flags: ST_GID_V4
 *
 * Return: 0, or -1 when there is none.
 */
int st_gid_pick(struct st_dev *d, int index, unsigned int flags)
{
	static const __u8 v4map[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_gid_entry e;
	int i, v6 = -1;

	if (index >= 0) {
		if (ibv_query_gid(d->ctx, d->port, index, &d->gid))
			return -1;
		d->gid_index = index;
		return 0;
	}
	for (i = 0; i < d->port_attr.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(d->ctx, d->port, i, &e, 0))
			continue;
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (!memcmp(e.gid.raw, v4map, sizeof(v4map))) {
			d->gid_index = i;
			d->gid = e.gid;
			return 0;
		}
		if (v6 < 0)
			v6 = i;
	}
	if (v6 < 0 || (flags & ST_GID_V4))
		return -1;
	d->gid_index = v6;
	return ibv_query_gid(d->ctx, d->port, v6, &d->gid) ? -1 : 0;
}

/**
 * st_gid_find() - pick the RoCEv2 GID of an IP address.
 * @d: the device; sets @d->gid_index and @d->gid
 * @addr: an IPv4 or IPv6 address in text form
 *
 * Return: 0, or -1 when the port has no RoCEv2 GID of @addr.
 */
int st_gid_find(struct st_dev *d, const char *addr)
{
	struct ibv_gid_entry e;
	union ibv_gid want = {};
	int i;

	if (inet_pton(AF_INET, addr, want.raw + 12) == 1) {
		want.raw[10] = 0xff;
		want.raw[11] = 0xff;
	} else if (inet_pton(AF_INET6, addr, want.raw) != 1) {
		return -1;
	}
	for (i = 0; i < d->port_attr.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(d->ctx, d->port, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(e.gid.raw, want.raw, sizeof(want.raw))) {
			d->gid_index = i;
			d->gid = e.gid;
			return 0;
		}
	}
	return -1;
}

/**
 * st_gid_str() - a GID in IPv6 text form.
 * @gid: the GID
 * @buf: where (INET6_ADDRSTRLEN bytes)
 * @len: its size
 *
 * Return: @buf.
 */
const char *st_gid_str(const union ibv_gid *gid, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid->raw, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/**
 * st_mtu_enum() - the ibv_mtu of a size in bytes.
 * @bytes: 256, 512, 1024, 2048 or 4096
 *
 * Return: the enum, 0 for any other size.
 */
enum ibv_mtu st_mtu_enum(int bytes)
{
	enum ibv_mtu m;

	for (m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
		if (bytes == 128 << m)
			return m;
	return 0;
}

/**
 * st_hw_counter() - one of a port's hardware counters, from sysfs.
 * @dev: the device's name
 * @port: the port
 * @name: the counter (rdma statistic's name)
 *
 * Return: its value, or ~0 if it cannot be read.
 */
__u64 st_hw_counter(const char *dev, int port, const char *name)
{
	unsigned long long v = 0;
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/hw_counters/%s", dev, port,
		 name);
	f = fopen(path, "r");
	if (!f)
		return ~0ULL;
	if (fscanf(f, "%llu", &v) != 1)
		v = ~0ULL;
	fclose(f);
	return v;
}

/* --- QPs ----------------------------------------------------------------- */

/**
 * st_qp_create() - a QP in RESET.
 * @pd: its PD
 * @scq: its send CQ
 * @rcq: its receive CQ
 * @type: IBV_QPT_RC, _UC or _UD
 * @cap: its queues; NULL: 4 WRs and 1 SGE each way
 *
 * Return: the QP, or NULL (errno).
 */
struct ibv_qp *st_qp_create(struct ibv_pd *pd, struct ibv_cq *scq,
			    struct ibv_cq *rcq, enum ibv_qp_type type,
			    const struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr init = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	if (cap)
		init.cap = *cap;
	return ibv_create_qp(pd, &init);
}

/* ibv_modify_qp(), its errno value also in errno. */
static int qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	int ret = ibv_modify_qp(qp, a, mask);

	if (ret)
		errno = ret;
	return ret;
}

/**
 * st_qp_init() - RESET -> INIT (P_Key index 0).
 * @qp: the QP
 * @port: its port
 * @access: its remote access flags (IBV_ACCESS_REMOTE_*)
 *
 * Return: 0, or an errno value (errno is set too).
 */
int st_qp_init(struct ibv_qp *qp, __u8 port, unsigned int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = port,
		.qp_access_flags = access,
	};

	return qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/**
 * st_qp_rtr() - INIT -> RTR, connected as @p says (hop limit 64).
 * @qp: an RC or UC QP
 * @p: the path; RC also takes its responder fields
 *
 * Return: 0, or an errno value (errno is set too).
 */
int st_qp_rtr(struct ibv_qp *qp, const struct st_path *p)
{
	bool rc = qp->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = p->mtu,
		.dest_qp_num = p->dest_qpn,
		.rq_psn = p->rq_psn,
		.max_dest_rd_atomic = p->max_dest_rd_atomic,
		.min_rnr_timer = p->min_rnr_timer,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = p->dgid, .hop_limit = 64,
				 .sgid_index = p->sgid_index },
			.port_num = p->port,
		},
	};

	return qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			 (rc ? IBV_QP_MAX_DEST_RD_ATOMIC |
			       IBV_QP_MIN_RNR_TIMER : 0));
}

/**
 * st_qp_rts() - RTR -> RTS.
 * @qp: an RC or UC QP
 * @p: the path: its send PSN; RC also its requester fields
 *
 * Return: 0, or an errno value (errno is set too).
 */
int st_qp_rts(struct ibv_qp *qp, const struct st_path *p)
{
	bool rc = qp->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = p->sq_psn,
		.timeout = p->timeout,
		.retry_cnt = p->retry_cnt,
		.rnr_retry = p->rnr_retry,
		.max_rd_atomic = p->max_rd_atomic,
	};

	return qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			 (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

/**
 * st_qp_ud_ready() - a UD QP from RESET to RTS.
 * @qp: the QP
 * @port: its port
 * @qkey: its Q_Key
 * @sq_psn: its send PSN
 *
 * Return: 0, or an errno value (errno is set too).
 */
int st_qp_ud_ready(struct ibv_qp *qp, __u8 port, __u32 qkey, __u32 sq_psn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = port,
				 .qkey = qkey };
	int ret;

	ret = qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			IBV_QP_PORT | IBV_QP_QKEY);
	if (ret)
		return ret;
	a.qp_state = IBV_QPS_RTR;
	ret = qp_modify(qp, &a, IBV_QP_STATE);
	if (ret)
		return ret;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	return qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/**
 * st_qp_state() - a QP's current state.
 * @qp: the QP
 *
 * Return: its enum ibv_qp_state, or -1 if the query failed.
 */
int st_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

/**
 * st_qp_state_str() - the name of a QP state ("RTS"), "?" for others.
 * @state: an enum ibv_qp_state
 */
const char *st_qp_state_str(int state)
{
	static const char *const n[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return state >= 0 && state < (int)ST_ARRAY_SIZE(n) && n[state] ?
	       n[state] : "?";
}

/* --- memory -------------------------------------------------------------- */

/**
 * st_buf_alloc() - a page-aligned buffer, whole pages, every byte @fill.
 * @len: bytes at least (0: one page)
 * @fill: the byte value
 *
 * Return: the buffer (free() it), or NULL.
 */
void *st_buf_alloc(size_t len, int fill)
{
	void *p;

	len = (len + 4095) & ~(size_t)4095;
	if (!len)
		len = 4096;
	if (posix_memalign(&p, 4096, len))
		return NULL;
	memset(p, fill, len);
	return p;
}

/**
 * st_mr_reg() - register an MR; a diagnostic if that fails.
 * @pd: its PD
 * @buf: the memory
 * @len: its length
 * @access: IBV_ACCESS_* flags
 * @who: the name the diagnostic carries, or NULL
 *
 * Return: the MR, or NULL (errno).
 */
struct ibv_mr *st_mr_reg(struct ibv_pd *pd, void *buf, size_t len,
			 int access, const char *who)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);

	if (!mr)
		st_diag(who, "reg_mr %zu bytes access %#x: %s", len, access,
			strerror(errno));
	return mr;
}

/* --- work requests and completions --------------------------------------- */

/**
 * st_wr_init() - a send work request with one SGE (none if @buf is NULL).
 * @wr: the request, zeroed first
 * @sge: its SGE
 * @op: the opcode
 * @wr_id: its id
 * @buf: local memory, or NULL
 * @len: its length
 * @lkey: its local key
 * @raddr: RDMA: the remote address
 * @rkey: RDMA: the remote key
 * @flags: IBV_SEND_* flags
 */
void st_wr_init(struct ibv_send_wr *wr, struct ibv_sge *sge,
		enum ibv_wr_opcode op, __u64 wr_id, void *buf, __u32 len,
		__u32 lkey, __u64 raddr, __u32 rkey, unsigned int flags)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)buf;
	sge->length = len;
	sge->lkey = lkey;
	wr->wr_id = wr_id;
	wr->opcode = op;
	wr->sg_list = sge;
	wr->num_sge = buf ? 1 : 0;
	wr->send_flags = flags;
	wr->wr.rdma.remote_addr = raddr;
	wr->wr.rdma.rkey = rkey;
}

/**
 * st_post_recv() - post one receive WQE (no SGE if @buf is NULL).
 * @qp: the QP
 * @wr_id: its id
 * @buf: where the message goes, or NULL
 * @len: its room
 * @lkey: its local key
 *
 * Return: 0, or ibv_post_recv()'s errno value.
 */
int st_post_recv(struct ibv_qp *qp, __u64 wr_id, void *buf, __u32 len,
		 __u32 lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = buf ? 1 : 0 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/**
 * st_post_send() - post one send work request with one SGE.
 * @qp: the QP
 * @op: the opcode
 * @wr_id: its id
 * @buf: local memory, or NULL
 * @len: its length
 * @lkey: its local key
 * @raddr: RDMA: the remote address
 * @rkey: RDMA: the remote key
 * @imm: immediate data (host order)
 * @flags: IBV_SEND_* flags
 *
 * Return: 0, or ibv_post_send()'s errno value.
 */
int st_post_send(struct ibv_qp *qp, enum ibv_wr_opcode op, __u64 wr_id,
		 void *buf, __u32 len, __u32 lkey, __u64 raddr, __u32 rkey,
		 __u32 imm, unsigned int flags)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	st_wr_init(&wr, &sge, op, wr_id, buf, len, lkey, raddr, rkey, flags);
	wr.imm_data = htonl(imm);
	return ibv_post_send(qp, &wr, &bad);
}

/**
 * st_poll_one() - wait up to @ms for one completion, polling.
 * @cq: the CQ
 * @wc: the completion
 * @ms: how long
 *
 * Return: 1, 0 if none came, < 0 if polling failed.
 */
int st_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	long long end = st_now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		usleep(200);
	} while (st_now_ms() < end);
	return 0;
}

/**
 * st_post_wait() - post one signalled work request, wait for its completion.
 * @qp: the QP
 * @cq: its send CQ
 * @wr: the request (IBV_SEND_SIGNALED is added)
 * @ms: how long to wait
 *
 * Return: the completion's status, -1 if posting failed or none came.
 */
int st_post_wait(struct ibv_qp *qp, struct ibv_cq *cq,
		 struct ibv_send_wr *wr, int ms)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, wr, &bad))
		return -1;
	if (st_poll_one(cq, &wc, ms) <= 0)
		return -1;
	return wc.status;
}

/**
 * st_wc_str() - a completion status's name; "no completion" for < 0.
 * @status: an enum ibv_wc_status, or -1 (st_post_wait())
 */
const char *st_wc_str(int status)
{
	return status < 0 ? "no completion" : ibv_wc_status_str(status);
}
