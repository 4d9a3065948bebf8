// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_kqp: kernel queue pairs over an RDMA device, for the selftests.
 *
 *	insmod srnic_kqp.ko dev=srnic0
 *
 * runs every check inside module_init, through the kernel verbs API only,
 * the way a kernel ULP uses a device: a PD with the unsafe global rkey,
 * two directly polled CQs, and two RC QPs of the device connected to each
 * other over its own RoCEv2 GID (self-loopback). Buffers are kmalloc'ed
 * and DMA mapped with ib_dma_map_single(); the local key is the PD's
 * local_dma_lkey, the remote key the PD's unsafe_global_rkey.
 *
 * Each check prints one line, "srnic_kqp: ok N - WHAT" or
 * "srnic_kqp: not ok N - WHAT", after "srnic_kqp: # ..." lines saying
 * what went wrong; the first line is the plan "srnic_kqp: 1..N", the last
 * "srnic_kqp: PASS N checks" or "srnic_kqp: FAIL ...". insmod succeeds
 * only if every check passed (rmmod the module then); otherwise it fails
 * with -EIO, or -ENODEV/-EINVAL if the device cannot be used at all.
 * Everything is released before module_init returns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *kqp_dev;
module_param_named(dev, kqp_dev, charp, 0444);
MODULE_PARM_DESC(dev, "the RDMA device to test, e.g. srnic0");

#define KQP_PORT	1
#define KQP_A		0	/* the requester */
#define KQP_B		1	/* the responder */
#define KQP_BUF_LEN	(256 * 1024)
#define KQP_RDMA_LEN	(200 * 1024)
#define KQP_GAP		64	/* canary bytes around every piece */
#define KQP_CANARY	0xa5
#define KQP_CQE		512
#define KQP_WR		127	/* a power of two minus one: no rounding */
#define KQP_SGE		4
#define KQP_INLINE	128
#define KQP_INL_LEN	4096
#define KQP_RING	64
#define KQP_RING_SIGNAL	16
#define KQP_RING_LEN	256
#define KQP_TIMEOUT	(5 * HZ)
/* Near the 24-bit wrap: the requester's PSNs wrap during the tests. */
#define KQP_PSN_A	0xffffc0
#define KQP_PSN_B	0x000100

#define kqp_err(fmt, ...)	pr_err("# " fmt "\n", ##__VA_ARGS__)
#define kqp_note(fmt, ...)	pr_info("# " fmt "\n", ##__VA_ARGS__)

struct kqp_buf {
	u8 *va;
	u64 dma;
	size_t len;
};

struct kqp {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq[2];
	struct ib_qp *qp[2];
	struct ib_mr *atomic_mr;
	struct ib_qp_cap cap;
	union ib_gid gid;
	u8 sgid_index;
	u8 dmac[ETH_ALEN];
	struct kqp_buf src, dst, rd, atom;
	u8 *inl;	/* inline data: CPU addresses, never mapped */
	u8 *want;	/* expected bytes, built by the CPU */
	struct ib_wc *wc;
	bool pair_bad;	/* reconnect before the next check */
	int nr, nr_failed;
};

/* What one work completion must say. */
struct kqp_want {
	int side;
	u64 wr_id;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	bool has_len;
	u32 len;
	int flags;	/* IB_WC_WITH_IMM / IB_WC_WITH_INVALIDATE */
	__be32 imm;
};

static const char *const kqp_side[] = { "requester", "responder" };

/* --- buffers --------------------------------------------------------- */

static void kqp_fill(u8 *p, size_t len, u32 seed)
{
	u32 x = seed | 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (u8)x;
	}
}

static int kqp_buf_alloc(struct kqp *t, struct kqp_buf *b, size_t len)
{
	b->va = kmalloc(len, GFP_KERNEL);
	if (!b->va)
		return -ENOMEM;
	b->dma = ib_dma_map_single(t->dev, b->va, len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(t->dev, b->dma)) {
		kfree(b->va);
		b->va = NULL;
		return -ENOMEM;
	}
	b->len = len;
	return 0;
}

static void kqp_buf_free(struct kqp *t, struct kqp_buf *b)
{
	if (!b->va)
		return;
	ib_dma_unmap_single(t->dev, b->dma, b->len, DMA_BIDIRECTIONAL);
	kfree(b->va);
	b->va = NULL;
}

/* The buffers' ownership moves to the device before posting... */
static void kqp_to_dev(struct kqp *t)
{
	struct kqp_buf *b[] = { &t->src, &t->dst, &t->rd, &t->atom };
	int i;

	for (i = 0; i < ARRAY_SIZE(b); i++)
		ib_dma_sync_single_for_device(t->dev, b[i]->dma, b[i]->len,
					      DMA_BIDIRECTIONAL);
}

/* ...and back to the CPU once the completions are in. */
static void kqp_to_cpu(struct kqp *t)
{
	struct kqp_buf *b[] = { &t->src, &t->dst, &t->rd, &t->atom };
	int i;

	for (i = 0; i < ARRAY_SIZE(b); i++)
		ib_dma_sync_single_for_cpu(t->dev, b[i]->dma, b[i]->len,
					   DMA_BIDIRECTIONAL);
}

static struct ib_sge kqp_sge(struct kqp *t, struct kqp_buf *b, size_t off,
			     u32 len)
{
	struct ib_sge sge = {
		.addr = b->dma + off,
		.length = len,
		.lkey = t->pd->local_dma_lkey,
	};

	return sge;
}

/*
 * Pieces of a buffer, KQP_GAP canary bytes before, between and after
 * them: @offs gets each piece's offset. Returns the bytes spanned.
 */
static size_t kqp_layout(const u32 *lens, int n, size_t *offs)
{
	size_t off = KQP_GAP;
	int i;

	for (i = 0; i < n; i++) {
		offs[i] = off;
		off += lens[i] + KQP_GAP;
	}
	return off;
}

/* SGEs for the pieces of a buffer. */
static void kqp_sges(struct kqp *t, struct kqp_buf *b, const u32 *lens,
		     const size_t *offs, int n, struct ib_sge *sge)
{
	int i;

	for (i = 0; i < n; i++)
		sge[i] = kqp_sge(t, b, offs[i], lens[i]);
}

/* The message the pieces of @buf make, into t->want. */
static void kqp_gather(struct kqp *t, const u8 *buf, const u32 *lens,
		       const size_t *offs, int n)
{
	size_t pos = 0;
	int i;

	for (i = 0; i < n; i++) {
		memcpy(t->want + pos, buf + offs[i], lens[i]);
		pos += lens[i];
	}
}

static int kqp_canary_ok(const char *what, const u8 *buf, size_t from,
			 size_t to)
{
	const u8 *bad;

	if (to <= from)
		return 0;
	bad = memchr_inv(buf + from, KQP_CANARY, to - from);
	if (!bad)
		return 0;
	kqp_err("%s: byte %zu outside the target was overwritten (%#x)",
		what, (size_t)(bad - buf), *bad);
	return -EIO;
}

static int kqp_bytes_ok(const char *what, const u8 *got, size_t got_off,
			const u8 *want, size_t len)
{
	size_t i;

	if (!memcmp(got, want, len))
		return 0;
	for (i = 0; i < len && got[i] == want[i]; i++)
		;
	kqp_err("%s: byte %zu is %#x, expected %#x (%zu bytes compared)",
		what, got_off + i, got[i], want[i], len);
	return -EIO;
}

/*
 * The @len bytes of t->want must fill the pieces of @buf in order, and
 * every byte around them, and past the message, must be canary.
 */
static int kqp_scatter_ok(struct kqp *t, const char *what, const u8 *buf,
			  const u32 *lens, const size_t *offs, int n, u32 len)
{
	size_t pos = 0, prev = 0;
	int i, err = 0;

	for (i = 0; i < n; i++) {
		u32 take = min_t(u32, lens[i], len - pos);

		err = err ?: kqp_canary_ok(what, buf, prev, offs[i]);
		err = err ?: kqp_bytes_ok(what, buf + offs[i], offs[i],
					  t->want + pos, take);
		err = err ?: kqp_canary_ok(what, buf, offs[i] + take,
					   offs[i] + lens[i]);
		pos += take;
		prev = offs[i] + lens[i];
	}
	err = err ?: kqp_canary_ok(what, buf, prev, prev + KQP_GAP);
	if (!err && pos != len) {
		kqp_err("%s: %u bytes do not fit the pieces", what, len);
		err = -EIO;
	}
	return err;
}

/* --- completions ----------------------------------------------------- */

/* Exactly @n completions of one side into t->wc, within KQP_TIMEOUT. */
static int kqp_poll(struct kqp *t, int side, int n, const char *what)
{
	unsigned long end = jiffies + KQP_TIMEOUT;
	int got = 0, ret;

	if (n > KQP_CQE) {
		kqp_err("%s: cannot wait for %d completions", what, n);
		return -EINVAL;
	}
	while (got < n) {
		ret = ib_poll_cq(t->cq[side], n - got, t->wc + got);
		if (ret < 0) {
			kqp_err("%s: ib_poll_cq (%s): %d", what,
				kqp_side[side], ret);
			return ret;
		}
		got += ret;
		if (got == n)
			break;
		if (time_after(jiffies, end)) {
			kqp_err("%s: %s CQ: %d of %d completions after %u ms",
				what, kqp_side[side], got, n,
				jiffies_to_msecs(KQP_TIMEOUT));
			return -ETIMEDOUT;
		}
		usleep_range(20, 100);
	}
	return 0;
}

/* No completion may arrive on @side (given 20 ms to show up). */
static int kqp_poll_none(struct kqp *t, int side, const char *what)
{
	struct ib_wc wc;
	int ret;

	msleep(20);
	ret = ib_poll_cq(t->cq[side], 1, &wc);
	if (!ret)
		return 0;
	if (ret < 0)
		kqp_err("%s: ib_poll_cq (%s): %d", what, kqp_side[side], ret);
	else
		kqp_err("%s: unexpected %s completion: wr_id %llu status %s opcode %d",
			what, kqp_side[side], wc.wr_id,
			ib_wc_status_msg(wc.status), wc.opcode);
	return -EIO;
}

static int kqp_wc_ok(struct kqp *t, const char *what, const struct ib_wc *wc,
		     const struct kqp_want *w)
{
	int flags = wc->wc_flags & (IB_WC_WITH_IMM | IB_WC_WITH_INVALIDATE);
	int err = 0;

	if (wc->wr_id != w->wr_id) {
		kqp_err("%s: %s wc wr_id %llu, expected %llu", what,
			kqp_side[w->side], wc->wr_id, w->wr_id);
		err = -EIO;
	}
	if (wc->qp != t->qp[w->side]) {
		kqp_err("%s: %s wc qp is QP %u, expected QP %u", what,
			kqp_side[w->side], wc->qp ? wc->qp->qp_num : 0,
			t->qp[w->side]->qp_num);
		err = -EIO;
	}
	if (wc->status != w->status) {
		kqp_err("%s: %s wc wr_id %llu status \"%s\" (%d), expected \"%s\"",
			what, kqp_side[w->side], wc->wr_id,
			ib_wc_status_msg(wc->status), wc->status,
			ib_wc_status_msg(w->status));
		return -EIO;
	}
	/* An error completion's other fields are undefined. */
	if (w->status != IB_WC_SUCCESS)
		return err;
	if (wc->opcode != w->opcode) {
		kqp_err("%s: %s wc opcode %d, expected %d", what,
			kqp_side[w->side], wc->opcode, w->opcode);
		err = -EIO;
	}
	if (w->has_len && wc->byte_len != w->len) {
		kqp_err("%s: %s wc byte_len %u, expected %u", what,
			kqp_side[w->side], wc->byte_len, w->len);
		err = -EIO;
	}
	if (flags != w->flags) {
		kqp_err("%s: %s wc_flags %#x, expected %#x", what,
			kqp_side[w->side], wc->wc_flags, w->flags);
		err = -EIO;
	}
	if ((w->flags & IB_WC_WITH_IMM) && wc->ex.imm_data != w->imm) {
		kqp_err("%s: %s wc imm_data %#x, expected %#x", what,
			kqp_side[w->side], be32_to_cpu(wc->ex.imm_data),
			be32_to_cpu(w->imm));
		err = -EIO;
	}
	return err;
}

/* One completion on w->side, as @w says. */
static int kqp_expect(struct kqp *t, const char *what,
		      const struct kqp_want *w)
{
	int err = kqp_poll(t, w->side, 1, what);

	return err ?: kqp_wc_ok(t, what, &t->wc[0], w);
}

/* --- posting --------------------------------------------------------- */

static int kqp_post_recv(struct kqp *t, int side, u64 wr_id,
			 struct ib_sge *sge, int n)
{
	const struct ib_recv_wr *bad = NULL;
	struct ib_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = n,
	};
	int ret;

	ret = ib_post_recv(t->qp[side], &wr, &bad);
	if (ret)
		kqp_err("ib_post_recv (%s, wr_id %llu): %d", kqp_side[side],
			wr_id, ret);
	return ret;
}

static int kqp_post_send(struct kqp *t, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad = NULL;
	int ret;

	ret = ib_post_send(t->qp[KQP_A], wr, &bad);
	if (ret)
		kqp_err("ib_post_send (wr_id %llu): %d, bad_wr wr_id %llu",
			wr->wr_id, ret, bad ? bad->wr_id : 0);
	return ret;
}

/* --- the QP pair ------------------------------------------------------- */

static int kqp_modify(struct kqp *t, int side, struct ib_qp_attr *attr,
		      int mask, const char *state)
{
	int ret = ib_modify_qp(t->qp[side], attr, mask);

	if (ret)
		kqp_err("ib_modify_qp(%s -> %s): %d", kqp_side[side], state,
			ret);
	return ret;
}

static int kqp_connect(struct kqp *t)
{
	static const u32 psn[2] = { KQP_PSN_A, KQP_PSN_B };
	struct ib_qp_attr attr;
	int i, err;

	for (i = 0; i < 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IB_QPS_INIT;
		attr.pkey_index = 0;
		attr.port_num = KQP_PORT;
		attr.qp_access_flags = IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_ATOMIC;
		err = kqp_modify(t, i, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
				 IB_QP_PORT | IB_QP_ACCESS_FLAGS, "INIT");
		if (err)
			return err;
	}
	for (i = 0; i < 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IB_QPS_RTR;
		attr.path_mtu = IB_MTU_1024;
		attr.dest_qp_num = t->qp[!i]->qp_num;
		attr.rq_psn = psn[!i];
		attr.max_dest_rd_atomic = 4;
		attr.min_rnr_timer = 12;
		attr.ah_attr.type = rdma_ah_find_type(t->dev, KQP_PORT);
		rdma_ah_set_port_num(&attr.ah_attr, KQP_PORT);
		rdma_ah_set_sl(&attr.ah_attr, 0);
		rdma_ah_set_grh(&attr.ah_attr, &t->gid, 0, t->sgid_index, 64,
				0);
		ether_addr_copy(attr.ah_attr.roce.dmac, t->dmac);
		err = kqp_modify(t, i, &attr, IB_QP_STATE | IB_QP_AV |
				 IB_QP_PATH_MTU | IB_QP_DEST_QPN |
				 IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
				 IB_QP_MIN_RNR_TIMER, "RTR");
		if (err)
			return err;
	}
	for (i = 0; i < 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IB_QPS_RTS;
		attr.timeout = 14;
		attr.retry_cnt = 7;
		attr.rnr_retry = 7;
		attr.sq_psn = psn[i];
		attr.max_rd_atomic = 4;
		err = kqp_modify(t, i, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
				 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
				 IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC, "RTS");
		if (err)
			return err;
	}
	return 0;
}

static void kqp_drain(struct kqp *t)
{
	int i;

	for (i = 0; i < 2; i++)
		while (ib_poll_cq(t->cq[i], KQP_CQE, t->wc) > 0)
			;
}

static void kqp_destroy_qps(struct kqp *t)
{
	int i, ret;

	for (i = 0; i < 2; i++) {
		if (!t->qp[i])
			continue;
		ret = ib_destroy_qp(t->qp[i]);
		if (ret)
			kqp_err("ib_destroy_qp (%s): %d", kqp_side[i], ret);
		t->qp[i] = NULL;
	}
	/* What the old QPs left in the CQs is no check's business. */
	kqp_drain(t);
}

/* A fresh pair of connected QPs, replacing any old one. */
static int kqp_pair(struct kqp *t)
{
	struct ib_qp_init_attr init;
	struct ib_qp *qp;
	int i;

	kqp_destroy_qps(t);
	for (i = 0; i < 2; i++) {
		memset(&init, 0, sizeof(init));
		init.qp_type = IB_QPT_RC;
		init.sq_sig_type = IB_SIGNAL_REQ_WR;
		init.send_cq = t->cq[i];
		init.recv_cq = t->cq[i];
		init.cap.max_send_wr = KQP_WR;
		init.cap.max_recv_wr = KQP_WR;
		init.cap.max_send_sge = KQP_SGE;
		init.cap.max_recv_sge = KQP_SGE;
		init.cap.max_inline_data = KQP_INLINE;
		qp = ib_create_qp(t->pd, &init);
		if (IS_ERR(qp)) {
			kqp_err("ib_create_qp (%s): %ld", kqp_side[i],
				PTR_ERR(qp));
			return PTR_ERR(qp);
		}
		t->qp[i] = qp;
		/* The core hands back what the device made of the caps. */
		if (i && memcmp(&t->cap, &init.cap, sizeof(init.cap))) {
			kqp_err("the two QPs got different caps");
			return -EIO;
		}
		t->cap = init.cap;
	}
	if (t->cap.max_send_wr < KQP_WR || t->cap.max_recv_wr < KQP_WR ||
	    t->cap.max_send_sge < KQP_SGE || t->cap.max_recv_sge < KQP_SGE ||
	    t->cap.max_inline_data < KQP_INLINE ||
	    t->cap.max_inline_data >= KQP_INL_LEN) {
		kqp_err("caps %u/%u WRs, %u/%u SGEs, %u inline: not what was asked",
			t->cap.max_send_wr, t->cap.max_recv_wr,
			t->cap.max_send_sge, t->cap.max_recv_sge,
			t->cap.max_inline_data);
		return -EIO;
	}
	t->pair_bad = false;
	return kqp_connect(t);
}

/* --- set-up ------------------------------------------------------------ */

static bool kqp_gid_v4(const struct ib_gid_attr *attr)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw);
}

/* The port's RoCEv2 GID to loop back over: IPv4 first, never link-local. */
static int kqp_find_gid(struct kqp *t)
{
	const struct ib_gid_attr *attr, *best = NULL;
	struct ib_port_attr pa;
	struct net_device *ndev;
	int i, ret;

	ret = ib_query_port(t->dev, KQP_PORT, &pa);
	if (ret) {
		kqp_err("ib_query_port: %d", ret);
		return ret;
	}
	if (pa.state != IB_PORT_ACTIVE || pa.active_mtu < IB_MTU_1024) {
		kqp_err("port %d: state %d, active_mtu %d: not ACTIVE with MTU 1024",
			KQP_PORT, pa.state, pa.active_mtu);
		return -ENETDOWN;
	}
	for (i = 0; i < pa.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(t->dev, KQP_PORT, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP ||
		    rdma_link_local_addr((struct in6_addr *)attr->gid.raw) ||
		    (best && (kqp_gid_v4(best) || !kqp_gid_v4(attr)))) {
			rdma_put_gid_attr(attr);
			continue;
		}
		if (best)
			rdma_put_gid_attr(best);
		best = attr;
	}
	if (!best) {
		kqp_err("port %d has no RoCEv2 GID but link-local ones",
			KQP_PORT);
		return -ENOENT;
	}
	t->gid = best->gid;
	t->sgid_index = best->index;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(best);
	ret = PTR_ERR_OR_ZERO(ndev);
	if (!ret) {
		ether_addr_copy(t->dmac, ndev->dev_addr);
		kqp_note("port %d: RoCEv2 GID %u %pI6c on %s %pM, MTU %d",
			 KQP_PORT, t->sgid_index, t->gid.raw, ndev->name,
			 t->dmac, ib_mtu_enum_to_int(pa.active_mtu));
	}
	rcu_read_unlock();
	rdma_put_gid_attr(best);
	if (ret)
		kqp_err("GID index %u has no netdev: %d", t->sgid_index, ret);
	return ret;
}

/*
 * An rkey that grants REMOTE_ATOMIC on kernel memory. The PD's unsafe
 * global rkey does not (ib_alloc_pd() asks for REMOTE_READ and
 * REMOTE_WRITE only), and kernel ULPs register memory for remote access
 * with fast registration (ib_alloc_mr() and IB_WR_REG_MR), which the
 * device may not offer. Then the MR is made as ib_alloc_pd() makes the
 * PD's own: with the device's get_dma_mr op.
 */
static int kqp_atomic_mr(struct kqp *t)
{
	struct ib_mr *mr;

	mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(mr)) {
		kqp_note("ib_alloc_mr (fast registration): %ld", PTR_ERR(mr));
	} else {
		kqp_note("ib_alloc_mr (fast registration) works");
		ib_dereg_mr(mr);
	}
	if (!t->dev->ops.get_dma_mr) {
		kqp_err("the device has no get_dma_mr op");
		return -EOPNOTSUPP;
	}
	mr = t->dev->ops.get_dma_mr(t->pd, IB_ACCESS_LOCAL_WRITE |
					   IB_ACCESS_REMOTE_ATOMIC);
	if (IS_ERR(mr)) {
		kqp_err("get_dma_mr(LOCAL_WRITE | REMOTE_ATOMIC): %ld",
			PTR_ERR(mr));
		return PTR_ERR(mr);
	}
	mr->device = t->dev;
	mr->pd = t->pd;
	mr->type = IB_MR_TYPE_DMA;
	mr->uobject = NULL;
	mr->need_inval = false;
	t->atomic_mr = mr;
	kqp_note("atomics target a DMA MR from the get_dma_mr op, rkey %#x",
		 mr->rkey);
	return 0;
}

static int kqp_setup(struct kqp *t)
{
	int i, err;

	t->dev = ib_device_get_by_name(kqp_dev, RDMA_DRIVER_UNKNOWN);
	if (!t->dev) {
		kqp_err("no RDMA device %s", kqp_dev);
		return -ENODEV;
	}
	if (!rdma_protocol_roce_udp_encap(t->dev, KQP_PORT)) {
		kqp_err("%s port %d does not speak RoCEv2", kqp_dev, KQP_PORT);
		return -EINVAL;
	}
	kqp_note("%s: %s DMA; max_send_sge %d, max_qp_wr %d, atomic_cap %d",
		 kqp_dev, ib_uses_virt_dma(t->dev) ? "virtual" : "real",
		 t->dev->attrs.max_send_sge, t->dev->attrs.max_qp_wr,
		 t->dev->attrs.atomic_cap);

	t->wc = kcalloc(KQP_CQE, sizeof(*t->wc), GFP_KERNEL);
	t->want = kmalloc(KQP_BUF_LEN, GFP_KERNEL);
	t->inl = kmalloc(KQP_INL_LEN, GFP_KERNEL);
	if (!t->wc || !t->want || !t->inl)
		return -ENOMEM;
	err = kqp_buf_alloc(t, &t->src, KQP_BUF_LEN);
	err = err ?: kqp_buf_alloc(t, &t->dst, KQP_BUF_LEN);
	err = err ?: kqp_buf_alloc(t, &t->rd, KQP_BUF_LEN);
	err = err ?: kqp_buf_alloc(t, &t->atom, 64);
	if (err) {
		kqp_err("buffers: %d", err);
		return err;
	}

	t->pd = ib_alloc_pd(t->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(t->pd)) {
		err = PTR_ERR(t->pd);
		t->pd = NULL;
		kqp_err("ib_alloc_pd(IB_PD_UNSAFE_GLOBAL_RKEY): %d", err);
		return err;
	}
	kqp_note("PD: local_dma_lkey %#x, unsafe_global_rkey %#x",
		 t->pd->local_dma_lkey, t->pd->unsafe_global_rkey);
	for (i = 0; i < 2; i++) {
		t->cq[i] = ib_alloc_cq(t->dev, NULL, KQP_CQE, 0,
				       IB_POLL_DIRECT);
		if (IS_ERR(t->cq[i])) {
			err = PTR_ERR(t->cq[i]);
			t->cq[i] = NULL;
			kqp_err("ib_alloc_cq (%s): %d", kqp_side[i], err);
			return err;
		}
	}
	err = kqp_find_gid(t);
	/* Without it, only the atomic checks fail. */
	if (!err)
		kqp_atomic_mr(t);
	err = err ?: kqp_pair(t);
	if (!err)
		kqp_note("QPs %u and %u: %u WRs, %u SGEs, %u inline bytes",
			 t->qp[KQP_A]->qp_num, t->qp[KQP_B]->qp_num,
			 t->cap.max_send_wr, t->cap.max_send_sge,
			 t->cap.max_inline_data);
	return err;
}

static void kqp_teardown(struct kqp *t)
{
	int i;

	if (t->cq[0] && t->cq[1])
		kqp_destroy_qps(t);
	for (i = 0; i < 2; i++)
		if (t->cq[i])
			ib_free_cq(t->cq[i]);
	if (t->atomic_mr)
		t->dev->ops.dereg_mr(t->atomic_mr, NULL);
	if (t->pd)
		ib_dealloc_pd(t->pd);
	kqp_buf_free(t, &t->atom);
	kqp_buf_free(t, &t->rd);
	kqp_buf_free(t, &t->dst);
	kqp_buf_free(t, &t->src);
	kfree(t->inl);
	kfree(t->want);
	kfree(t->wc);
	if (t->dev)
		ib_device_put(t->dev);
}

/* --- fast registration ------------------------------------------------ */

/* A fast-registration MR over dst[KQP_GAP, KQP_GAP + KQP_RDMA_LEN). */
struct kqp_fr {
	struct ib_mr *mr;
	struct scatterlist sg;
	bool mapped;
};

static int kqp_fr_get(struct kqp *t, struct kqp_fr *f, const char *what)
{
	f->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG,
			    KQP_RDMA_LEN / PAGE_SIZE + 2);
	if (IS_ERR(f->mr)) {
		kqp_err("%s: ib_alloc_mr: %ld", what, PTR_ERR(f->mr));
		return PTR_ERR(f->mr);
	}
	sg_init_one(&f->sg, t->dst.va + KQP_GAP, KQP_RDMA_LEN);
	if (ib_dma_map_sg(t->dev, &f->sg, 1, DMA_BIDIRECTIONAL) != 1) {
		kqp_err("%s: ib_dma_map_sg failed", what);
		return -EIO;
	}
	f->mapped = true;
	return 0;
}

static void kqp_fr_put(struct kqp *t, struct kqp_fr *f)
{
	if (f->mapped)
		ib_dma_unmap_sg(t->dev, &f->sg, 1, DMA_BIDIRECTIONAL);
	if (!IS_ERR_OR_NULL(f->mr))
		ib_dereg_mr(f->mr);
}

/*
 * Map the pages, give the MR its next key byte, post IB_WR_REG_MR on the
 * responder (whose memory it is) and expect @status.
 */
static int kqp_fr_reg(struct kqp *t, struct kqp_fr *f, u64 wr_id,
		      enum ib_wc_status status, const char *what)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_reg_wr wr = {};
	int n, err;

	n = ib_map_mr_sg(f->mr, &f->sg, 1, NULL, PAGE_SIZE);
	if (n != 1) {
		kqp_err("%s: ib_map_mr_sg: %d", what, n);
		return n < 0 ? n : -EIO;
	}
	ib_update_fast_reg_key(f->mr, ib_inc_rkey(f->mr->rkey) & 0xff);
	wr.wr.wr_id = wr_id;
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.mr = f->mr;
	wr.key = f->mr->rkey;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		    IB_ACCESS_REMOTE_READ;
	err = ib_post_send(t->qp[KQP_B], &wr.wr, &bad);
	if (err) {
		kqp_err("%s: ib_post_send(IB_WR_REG_MR): %d", what, err);
		return err;
	}
	return kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_B, .wr_id = wr_id, .status = status,
		.opcode = IB_WC_REG_MR });
}

/* The requester writes @seed's bytes through the MR; expect @status. */
static int kqp_fr_write(struct kqp *t, struct kqp_fr *f, u32 seed, u64 wr_id,
			enum ib_wc_status status, const char *what)
{
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	int err;

	kqp_fill(t->src.va, KQP_RDMA_LEN, seed);
	sge = kqp_sge(t, &t->src, 0, KQP_RDMA_LEN);
	kqp_to_dev(t);
	wr.wr.wr_id = wr_id;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = f->mr->iova;
	wr.rkey = f->mr->rkey;
	err = kqp_post_send(t, &wr.wr);
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_A, .wr_id = wr_id, .status = status,
		.opcode = IB_WC_RDMA_WRITE });
	kqp_to_cpu(t);
	return err;
}

/* dst holds @seed's bytes where the MR maps, canaries around them. */
static int kqp_fr_landed(struct kqp *t, u32 seed, const char *what)
{
	u32 len = KQP_RDMA_LEN;
	size_t off = KQP_GAP;

	kqp_fill(t->want, len, seed);
	return kqp_scatter_ok(t, what, t->dst.va, &len, &off, 1, len);
}

static int kqp_t_fr_write_inv(struct kqp *t)
{
	static const char what[] = "fast registration";
	struct kqp_fr f = {};
	int err;

	memset(t->dst.va, KQP_CANARY, KQP_BUF_LEN);
	err = kqp_fr_get(t, &f, what);
	err = err ?: kqp_fr_reg(t, &f, 0x900, IB_WC_SUCCESS, what);
	err = err ?: kqp_fr_write(t, &f, 0x9090, 0x901, IB_WC_SUCCESS, what);
	err = err ?: kqp_fr_landed(t, 0x9090, what);
	if (!err) {
		const struct ib_send_wr *bad = NULL;
		struct ib_send_wr inv = {
			.wr_id = 0x902, .opcode = IB_WR_LOCAL_INV,
			.send_flags = IB_SEND_SIGNALED,
			.ex.invalidate_rkey = f.mr->rkey,
		};

		err = ib_post_send(t->qp[KQP_B], &inv, &bad);
		err = err ?: kqp_expect(t, what, &(struct kqp_want){
			.side = KQP_B, .wr_id = 0x902,
			.opcode = IB_WC_LOCAL_INV });
	}
	/* Invalidated: the key reaches nothing, the memory is unchanged. */
	err = err ?: kqp_fr_write(t, &f, 0x1111, 0x903, IB_WC_REM_ACCESS_ERR,
				  what);
	err = err ?: kqp_fr_landed(t, 0x9090, what);
	t->pair_bad = true;
	kqp_fr_put(t, &f);
	return err;
}

static int kqp_t_fr_send_inv(struct kqp *t)
{
	static const char what[] = "send with invalidate";
	struct kqp_fr f = {};
	struct ib_sge sge, rsge;
	int err;

	memset(t->dst.va, KQP_CANARY, KQP_BUF_LEN);
	err = kqp_fr_get(t, &f, what);
	err = err ?: kqp_fr_reg(t, &f, 0xa00, IB_WC_SUCCESS, what);
	rsge = kqp_sge(t, &t->rd, 0, 64);
	err = err ?: kqp_post_recv(t, KQP_B, 0xa01, &rsge, 1);
	if (!err) {
		struct ib_send_wr wr = {
			.wr_id = 0xa02, .opcode = IB_WR_SEND_WITH_INV,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1, .ex.invalidate_rkey = f.mr->rkey,
		};

		sge = kqp_sge(t, &t->src, 0, 64);
		err = kqp_post_send(t, &wr);
		err = err ?: kqp_expect(t, what, &(struct kqp_want){
			.side = KQP_A, .wr_id = 0xa02, .opcode = IB_WC_SEND });
		err = err ?: kqp_expect(t, what, &(struct kqp_want){
			.side = KQP_B, .wr_id = 0xa01, .opcode = IB_WC_RECV,
			.has_len = true, .len = 64,
			.flags = IB_WC_WITH_INVALIDATE });
		if (!err && t->wc[0].ex.invalidate_rkey != f.mr->rkey) {
			kqp_err("%s: wc invalidate_rkey %#x, expected %#x",
				what, t->wc[0].ex.invalidate_rkey,
				f.mr->rkey);
			err = -EIO;
		}
	}
	err = err ?: kqp_fr_write(t, &f, 0x2222, 0xa03, IB_WC_REM_ACCESS_ERR,
				  what);
	t->pair_bad = true;
	/* Invalidated, the MR registers again under its next key. */
	err = err ?: kqp_pair(t);
	if (!err)
		t->pair_bad = false;
	err = err ?: kqp_fr_reg(t, &f, 0xa04, IB_WC_SUCCESS, what);
	err = err ?: kqp_fr_write(t, &f, 0xa0a0, 0xa05, IB_WC_SUCCESS, what);
	err = err ?: kqp_fr_landed(t, 0xa0a0, what);
	kqp_fr_put(t, &f);
	return err;
}

static int kqp_t_fr_valid(struct kqp *t)
{
	static const char what[] = "fast register of a valid MR";
	struct kqp_fr f = {};
	int err;

	err = kqp_fr_get(t, &f, what);
	err = err ?: kqp_fr_reg(t, &f, 0xb00, IB_WC_SUCCESS, what);
	err = err ?: kqp_fr_reg(t, &f, 0xb01, IB_WC_MW_BIND_ERR, what);
	t->pair_bad = true;
	kqp_fr_put(t, &f);
	return err;
}

/* --- checks ------------------------------------------------------------ */

/*
 * Send @len bytes (with immediate data if @imm), gathered from 3 pieces
 * of src (1 for fewer than 7 bytes), scattered into 2 receive pieces of
 * dst with room to spare.
 */
static int kqp_send_recv(struct kqp *t, u32 len, bool imm, const char *what)
{
	const __be32 imm_data = cpu_to_be32(0x5e4d0000 | len);
	u32 slen[3], rlen[2];
	size_t soff[3], roff[2];
	struct ib_sge ssge[3], rsge[2];
	struct ib_send_wr wr = {};
	int ns = 1, err;

	if (len >= 7) {
		slen[0] = len / 7;
		slen[1] = 2 * slen[0];
		slen[2] = len - 3 * slen[0];
		ns = 3;
	} else {
		slen[0] = len;
	}
	rlen[0] = len > 10 ? len / 2 + 5 : len;
	rlen[1] = len - rlen[0] + 32;
	kqp_layout(slen, ns, soff);
	kqp_layout(rlen, 2, roff);

	kqp_fill(t->src.va, KQP_BUF_LEN, len);
	memset(t->dst.va, KQP_CANARY, KQP_BUF_LEN);
	kqp_gather(t, t->src.va, slen, soff, ns);
	kqp_sges(t, &t->src, slen, soff, ns, ssge);
	kqp_sges(t, &t->dst, rlen, roff, 2, rsge);
	kqp_to_dev(t);

	err = kqp_post_recv(t, KQP_B, 0x100 + len, rsge, 2);
	if (err)
		return err;
	wr.wr_id = 0x200 + len;
	wr.opcode = imm ? IB_WR_SEND_WITH_IMM : IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.sg_list = ssge;
	wr.num_sge = ns;
	if (imm)
		wr.ex.imm_data = imm_data;
	err = kqp_post_send(t, &wr);
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_A, .wr_id = wr.wr_id, .opcode = IB_WC_SEND });
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_B, .wr_id = 0x100 + len, .opcode = IB_WC_RECV,
		.has_len = true, .len = len,
		.flags = imm ? IB_WC_WITH_IMM : 0, .imm = imm_data });
	if (err)
		return err;
	kqp_to_cpu(t);
	return kqp_scatter_ok(t, what, t->dst.va, rlen, roff, 2, len);
}

static int kqp_t_send_1(struct kqp *t)
{
	return kqp_send_recv(t, 1, false, "send 1 byte");
}

static int kqp_t_send_mtu(struct kqp *t)
{
	return kqp_send_recv(t, 1025, false, "send 1025 bytes");
}

static int kqp_t_send_64k(struct kqp *t)
{
	return kqp_send_recv(t, 65536, false, "send 65536 bytes");
}

static int kqp_t_send_imm(struct kqp *t)
{
	return kqp_send_recv(t, 3000, true, "send with immediate");
}

static int kqp_t_write(struct kqp *t)
{
	static const char what[] = "rdma write";
	u32 slen[2] = { 100000, KQP_RDMA_LEN - 100000 }, dlen = KQP_RDMA_LEN;
	size_t soff[2], doff;
	struct ib_sge sge[2];
	struct ib_rdma_wr wr = {};
	int err;

	kqp_layout(slen, 2, soff);
	kqp_layout(&dlen, 1, &doff);
	kqp_fill(t->src.va, KQP_BUF_LEN, 0x3a3a);
	memset(t->dst.va, KQP_CANARY, KQP_BUF_LEN);
	kqp_gather(t, t->src.va, slen, soff, 2);
	kqp_sges(t, &t->src, slen, soff, 2, sge);
	kqp_to_dev(t);

	wr.wr.wr_id = 0x300;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = sge;
	wr.wr.num_sge = 2;
	wr.remote_addr = t->dst.dma + doff;
	wr.rkey = t->pd->unsafe_global_rkey;
	err = kqp_post_send(t, &wr.wr);
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_A, .wr_id = 0x300, .opcode = IB_WC_RDMA_WRITE });
	/* A plain write consumes no receive and completes nothing there. */
	err = err ?: kqp_poll_none(t, KQP_B, what);
	if (err)
		return err;
	kqp_to_cpu(t);
	return kqp_scatter_ok(t, what, t->dst.va, &dlen, &doff, 1, dlen);
}

/* An RDMA Write with Immediate of @len bytes, into dst. */
static int kqp_write_imm(struct kqp *t, u32 len)
{
	const __be32 imm = cpu_to_be32(0xd00d0000 | len);
	u32 rlen = 64;
	size_t doff, roff;
	struct ib_sge sge, rsge;
	struct ib_rdma_wr wr = {};
	char what[64];
	int err;

	snprintf(what, sizeof(what), "rdma write with immediate, %u bytes",
		 len);
	kqp_layout(&len, 1, &doff);
	kqp_layout(&rlen, 1, &roff);
	kqp_fill(t->src.va, KQP_BUF_LEN, len);
	memset(t->dst.va, KQP_CANARY, KQP_BUF_LEN);
	memset(t->rd.va, KQP_CANARY, KQP_BUF_LEN);
	memcpy(t->want, t->src.va, len);
	sge = kqp_sge(t, &t->src, 0, len);
	rsge = kqp_sge(t, &t->rd, roff, rlen);
	kqp_to_dev(t);

	err = kqp_post_recv(t, KQP_B, 0x401, &rsge, 1);
	if (err)
		return err;
	wr.wr.wr_id = 0x400;
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.ex.imm_data = imm;
	wr.remote_addr = t->dst.dma + doff;
	wr.rkey = t->pd->unsafe_global_rkey;
	err = kqp_post_send(t, &wr.wr);
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_A, .wr_id = 0x400, .opcode = IB_WC_RDMA_WRITE });
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_B, .wr_id = 0x401,
		.opcode = IB_WC_RECV_RDMA_WITH_IMM, .has_len = true,
		.len = len, .flags = IB_WC_WITH_IMM, .imm = imm });
	if (err)
		return err;
	kqp_to_cpu(t);
	err = kqp_scatter_ok(t, what, t->dst.va, &len, &doff, 1, len);
	/* The data went to the remote address, not the receive buffer. */
	return err ?: kqp_canary_ok(what, t->rd.va, 0, KQP_BUF_LEN);
}

/* One packet, then 9: byte_len is the whole write's. */
static int kqp_t_write_imm(struct kqp *t)
{
	int err = kqp_write_imm(t, 1000);

	/* After a wrong completion the pair can still go on. */
	if (err == -ETIMEDOUT)
		return err;
	return kqp_write_imm(t, 8195) ?: err;
}

static int kqp_t_read(struct kqp *t)
{
	static const char what[] = "rdma read";
	u32 rlen[3] = { 51200, 71680, KQP_RDMA_LEN - 51200 - 71680 };
	size_t roff[3];
	struct ib_sge sge[3];
	struct ib_rdma_wr wr = {};
	int err;

	kqp_layout(rlen, 3, roff);
	kqp_fill(t->dst.va, KQP_BUF_LEN, 0x5c5c);
	memset(t->rd.va, KQP_CANARY, KQP_BUF_LEN);
	memcpy(t->want, t->dst.va + 512, KQP_RDMA_LEN);
	kqp_sges(t, &t->rd, rlen, roff, 3, sge);
	kqp_to_dev(t);

	wr.wr.wr_id = 0x500;
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = sge;
	wr.wr.num_sge = 3;
	wr.remote_addr = t->dst.dma + 512;
	wr.rkey = t->pd->unsafe_global_rkey;
	err = kqp_post_send(t, &wr.wr);
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_A, .wr_id = 0x500, .opcode = IB_WC_RDMA_READ,
		.has_len = true, .len = KQP_RDMA_LEN });
	err = err ?: kqp_poll_none(t, KQP_B, what);
	if (err)
		return err;
	kqp_to_cpu(t);
	err = kqp_scatter_ok(t, what, t->rd.va, rlen, roff, 3, KQP_RDMA_LEN);
	/* And the source is as it was. */
	return err ?: kqp_bytes_ok("rdma read, source", t->dst.va + 512, 512,
				   t->want, KQP_RDMA_LEN);
}

/*
 * One atomic on the 8 bytes at atom[0], its original value returned into
 * atom[@res]; atom[1..3] start as canary.
 */
static int kqp_atomic(struct kqp *t, const char *what, enum ib_wr_opcode op,
		      u32 rkey, u64 cmp_add, u64 swap, int res,
		      enum ib_wc_status status)
{
	struct ib_sge sge = kqp_sge(t, &t->atom, res * sizeof(u64),
				    sizeof(u64));
	struct ib_atomic_wr wr = {};
	int err;

	wr.wr.wr_id = 0x900 + res;
	wr.wr.opcode = op;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = t->atom.dma;
	wr.compare_add = cmp_add;
	wr.swap = swap;
	wr.rkey = rkey;
	kqp_to_dev(t);
	err = kqp_post_send(t, &wr.wr);
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_A, .wr_id = wr.wr.wr_id, .status = status,
		.opcode = op == IB_WR_ATOMIC_FETCH_AND_ADD ? IB_WC_FETCH_ADD :
							    IB_WC_COMP_SWAP,
		.has_len = true, .len = sizeof(u64) });
	kqp_to_cpu(t);
	return err;
}

static int kqp_u64_ok(const char *what, const char *which, u64 got, u64 want)
{
	if (got == want)
		return 0;
	kqp_err("%s: %s is %#llx, expected %#llx", what, which, got, want);
	return -EIO;
}

/* The rkey for the atomics, if the set-up found a way to make one. */
static int kqp_atomic_rkey(struct kqp *t, const char *what, u32 *rkey)
{
	if (!t->atomic_mr) {
		kqp_err("%s: no MR with REMOTE_ATOMIC (see the set-up)", what);
		return -EOPNOTSUPP;
	}
	*rkey = t->atomic_mr->rkey;
	return 0;
}

static void kqp_atom_init(struct kqp *t, u64 val)
{
	u64 *a = (u64 *)t->atom.va;

	memset(a, KQP_CANARY, t->atom.len);
	a[0] = val;
}

static int kqp_t_fetch_add(struct kqp *t)
{
	static const char what[] = "fetch&add";
	const u64 orig = 0x1122334455667788ULL, add = 0x0101010101010101ULL;
	u64 *a = (u64 *)t->atom.va;
	u32 rkey;
	int err;

	err = kqp_atomic_rkey(t, what, &rkey);
	if (err)
		return err;
	kqp_atom_init(t, orig);
	err = kqp_atomic(t, what, IB_WR_ATOMIC_FETCH_AND_ADD, rkey, add, 0, 1,
			 IB_WC_SUCCESS);
	err = err ?: kqp_u64_ok(what, "the value returned", a[1], orig);
	err = err ?: kqp_u64_ok(what, "the target", a[0], orig + add);
	return err ?: kqp_canary_ok(what, t->atom.va, 16, t->atom.len);
}

static int kqp_t_cmp_swap(struct kqp *t)
{
	static const char what[] = "compare&swap";
	const u64 orig = 0x0123456789abcdefULL, swap = 0xfedcba9876543210ULL;
	u64 *a = (u64 *)t->atom.va;
	u32 rkey;
	int err;

	err = kqp_atomic_rkey(t, what, &rkey);
	if (err)
		return err;
	kqp_atom_init(t, orig);
	/* Equal: swapped. */
	err = kqp_atomic(t, what, IB_WR_ATOMIC_CMP_AND_SWP, rkey, orig, swap,
			 1, IB_WC_SUCCESS);
	err = err ?: kqp_u64_ok(what, "the value returned (equal)", a[1],
				orig);
	err = err ?: kqp_u64_ok(what, "the target (equal)", a[0], swap);
	/* Not equal: the target stays, its value is returned. */
	err = err ?: kqp_atomic(t, what, IB_WR_ATOMIC_CMP_AND_SWP, rkey, orig,
				0x5555, 2, IB_WC_SUCCESS);
	err = err ?: kqp_u64_ok(what, "the value returned (not equal)", a[2],
				swap);
	err = err ?: kqp_u64_ok(what, "the target (not equal)", a[0], swap);
	return err ?: kqp_canary_ok(what, t->atom.va, 24, t->atom.len);
}

static int kqp_t_inline(struct kqp *t)
{
	static const char what[] = "inline send";
	u32 len = t->cap.max_inline_data, rlen = len + 32;
	size_t roff;
	struct ib_sge sge[2], rsge;
	struct ib_send_wr wr = {};
	int err;

	kqp_layout(&rlen, 1, &roff);
	kqp_fill(t->inl, KQP_INL_LEN, 0x6d6d);
	memcpy(t->want, t->inl, len);
	memset(t->dst.va, KQP_CANARY, KQP_BUF_LEN);
	/* Inline data is read from CPU addresses when posted: no key. */
	sge[0].addr = (uintptr_t)t->inl;
	sge[0].length = len / 3;
	sge[0].lkey = 0;
	sge[1].addr = (uintptr_t)t->inl + len / 3;
	sge[1].length = len - len / 3;
	sge[1].lkey = 0;
	rsge = kqp_sge(t, &t->dst, roff, rlen);
	kqp_to_dev(t);

	err = kqp_post_recv(t, KQP_B, 0x601, &rsge, 1);
	if (err)
		return err;
	wr.wr_id = 0x600;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;
	wr.sg_list = sge;
	wr.num_sge = 2;
	err = kqp_post_send(t, &wr);
	/* Posted means copied: the buffer is free again. */
	memset(t->inl, 0, KQP_INL_LEN);
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_A, .wr_id = 0x600, .opcode = IB_WC_SEND });
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_B, .wr_id = 0x601, .opcode = IB_WC_RECV,
		.has_len = true, .len = len });
	if (err)
		return err;
	kqp_to_cpu(t);
	return kqp_scatter_ok(t, what, t->dst.va, &rlen, &roff, 1, len);
}

static int kqp_t_unsignaled(struct kqp *t)
{
	static const char what[] = "unsignaled sends";
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	u32 len = KQP_RING * KQP_RING_LEN;
	size_t off = 0;
	int i, err;

	kqp_fill(t->src.va, KQP_BUF_LEN, 0x7e7e);
	memset(t->dst.va, KQP_CANARY, KQP_BUF_LEN);
	memcpy(t->want, t->src.va, len);
	kqp_to_dev(t);
	for (i = 0; i < KQP_RING; i++) {
		sge = kqp_sge(t, &t->dst, i * KQP_RING_LEN, KQP_RING_LEN);
		err = kqp_post_recv(t, KQP_B, i, &sge, 1);
		if (err)
			return err;
	}
	for (i = 0; i < KQP_RING; i++) {
		sge = kqp_sge(t, &t->src, i * KQP_RING_LEN, KQP_RING_LEN);
		wr.wr_id = i;
		wr.opcode = IB_WR_SEND;
		wr.send_flags = i % KQP_RING_SIGNAL == KQP_RING_SIGNAL - 1 ?
				IB_SEND_SIGNALED : 0;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		err = kqp_post_send(t, &wr);
		if (err)
			return err;
	}
	/* Every message arrives, in order... */
	err = kqp_poll(t, KQP_B, KQP_RING, what);
	for (i = 0; !err && i < KQP_RING; i++)
		err = kqp_wc_ok(t, what, &t->wc[i], &(struct kqp_want){
			.side = KQP_B, .wr_id = i, .opcode = IB_WC_RECV,
			.has_len = true, .len = KQP_RING_LEN });
	/* ...but only the signaled sends complete. */
	err = err ?: kqp_poll(t, KQP_A, KQP_RING / KQP_RING_SIGNAL, what);
	for (i = 0; !err && i < KQP_RING / KQP_RING_SIGNAL; i++)
		err = kqp_wc_ok(t, what, &t->wc[i], &(struct kqp_want){
			.side = KQP_A,
			.wr_id = (i + 1) * KQP_RING_SIGNAL - 1,
			.opcode = IB_WC_SEND });
	err = err ?: kqp_poll_none(t, KQP_A, what);
	if (err)
		return err;
	kqp_to_cpu(t);
	return kqp_scatter_ok(t, what, t->dst.va, &len, &off, 1, len);
}

static int kqp_t_too_many_sge(struct kqp *t)
{
	static const char what[] = "num_sge > max_send_sge";
	u32 n = t->cap.max_send_sge + 1;
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr wr1 = {}, wr2 = {};
	struct ib_sge sge, *sges;
	u32 i;
	int ret, err = 0;

	sges = kcalloc(n, sizeof(*sges), GFP_KERNEL);
	if (!sges)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		sges[i] = kqp_sge(t, &t->src, i, 1);
	sge = kqp_sge(t, &t->src, 0, 8);
	kqp_to_dev(t);
	/* A good write, then one with too many SGEs. */
	wr1.wr.wr_id = 0x701;
	wr1.wr.opcode = IB_WR_RDMA_WRITE;
	wr1.wr.send_flags = IB_SEND_SIGNALED;
	wr1.wr.sg_list = &sge;
	wr1.wr.num_sge = 1;
	wr1.wr.next = &wr2.wr;
	wr1.remote_addr = t->dst.dma;
	wr1.rkey = t->pd->unsafe_global_rkey;
	wr2 = wr1;
	wr2.wr.wr_id = 0x702;
	wr2.wr.sg_list = sges;
	wr2.wr.num_sge = n;
	wr2.wr.next = NULL;
	ret = ib_post_send(t->qp[KQP_A], &wr1.wr, &bad);
	if (ret != -EINVAL || bad != &wr2.wr) {
		kqp_err("%s: ib_post_send: %d, bad_wr %s; expected -EINVAL, the second WR",
			what, ret, !bad ? "NULL" :
			bad == &wr1.wr ? "the first WR" :
			bad == &wr2.wr ? "the second WR" : "elsewhere");
		err = -EIO;
	}
	/* The first one went. */
	if (bad != &wr1.wr)
		err = err ?: kqp_expect(t, what, &(struct kqp_want){
			.side = KQP_A, .wr_id = 0x701,
			.opcode = IB_WC_RDMA_WRITE });
	err = err ?: kqp_poll_none(t, KQP_A, what);
	kfree(sges);
	return err;
}

static int kqp_t_too_many_rsge(struct kqp *t)
{
	static const char what[] = "num_sge > max_recv_sge";
	u32 n = t->cap.max_recv_sge + 1;
	const struct ib_recv_wr *bad = NULL;
	struct ib_recv_wr rwr = {};
	struct ib_send_wr wr = {};
	struct ib_sge sge, *sges;
	u32 i;
	int ret, err = 0;

	sges = kcalloc(n, sizeof(*sges), GFP_KERNEL);
	if (!sges)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		sges[i] = kqp_sge(t, &t->dst, i * 16, 16);
	kqp_fill(t->src.va, KQP_BUF_LEN, 0x8f8f);
	memset(t->dst.va, KQP_CANARY, KQP_BUF_LEN);
	kqp_to_dev(t);
	rwr.wr_id = 0x7ff;
	rwr.sg_list = sges;
	rwr.num_sge = n;
	ret = ib_post_recv(t->qp[KQP_B], &rwr, &bad);
	kfree(sges);
	if (ret != -EINVAL || bad != &rwr) {
		kqp_err("%s: ib_post_recv returned %d, bad_wr %sset; expected -EINVAL",
			what, ret, bad == &rwr ? "" : "not ");
		return -EIO;
	}
	/* Nothing was posted: the next send lands in the next receive. */
	sge = kqp_sge(t, &t->dst, 0, 64);
	err = kqp_post_recv(t, KQP_B, 0x703, &sge, 1);
	if (err)
		return err;
	sge = kqp_sge(t, &t->src, 0, 16);
	wr.wr_id = 0x704;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	err = kqp_post_send(t, &wr);
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_A, .wr_id = 0x704, .opcode = IB_WC_SEND });
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_B, .wr_id = 0x703, .opcode = IB_WC_RECV,
		.has_len = true, .len = 16 });
	kqp_to_cpu(t);
	return err ?: kqp_bytes_ok(what, t->dst.va, 0, t->src.va, 16);
}

static int kqp_t_inline_too_big(struct kqp *t)
{
	static const char what[] = "inline over max_inline_data";
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr wr = {};
	struct ib_sge sge = {
		.addr = (uintptr_t)t->inl,
		.length = t->cap.max_inline_data + 1,
	};
	int ret;

	wr.wr_id = 0x705;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ret = ib_post_send(t->qp[KQP_A], &wr, &bad);
	if (ret != -EINVAL || bad != &wr) {
		kqp_err("%s: ib_post_send of %u inline bytes: %d, bad_wr %sset",
			what, sge.length, ret, bad == &wr ? "" : "not ");
		return -EIO;
	}
	return kqp_poll_none(t, KQP_A, what);
}

/*
 * One WR more than the send queue holds, in one chain. The receiver has
 * no receive posted, so the sends wait (RNR) and free no slot while the
 * chain is posted: the last WR must be refused with -ENOMEM. Then the
 * receives go up and every posted send completes.
 */
static int kqp_t_sq_full(struct kqp *t)
{
	static const char what[] = "send queue full";
	u32 i, n = t->cap.max_send_wr + 1, posted;
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *wrs;
	struct ib_sge *sges, sge;
	int ret, err = 0;

	if (t->cap.max_recv_wr < t->cap.max_send_wr || n > KQP_CQE) {
		kqp_err("%s: send queue %u, receive queue %u, CQ %d: no test",
			what, t->cap.max_send_wr, t->cap.max_recv_wr, KQP_CQE);
		return -EIO;
	}
	wrs = kcalloc(n, sizeof(*wrs), GFP_KERNEL);
	sges = kcalloc(n, sizeof(*sges), GFP_KERNEL);
	if (!wrs || !sges) {
		err = -ENOMEM;
		goto out;
	}
	kqp_fill(t->src.va, KQP_BUF_LEN, 0x9a9a);
	memset(t->dst.va, KQP_CANARY, KQP_BUF_LEN);
	memcpy(t->want, t->src.va, (n - 1) * 8);
	kqp_to_dev(t);
	for (i = 0; i < n; i++) {
		sges[i] = kqp_sge(t, &t->src, i * 8, 8);
		wrs[i].wr_id = i;
		wrs[i].opcode = IB_WR_SEND;
		wrs[i].send_flags = IB_SEND_SIGNALED;
		wrs[i].sg_list = &sges[i];
		wrs[i].num_sge = 1;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
	}
	ret = ib_post_send(t->qp[KQP_A], wrs, &bad);
	posted = ret ? (u32)(bad ? bad - wrs : 0) : n;
	if (ret != -ENOMEM || bad != &wrs[n - 1]) {
		kqp_err("%s: %u WRs on a %u-WR send queue: %d, %u posted",
			what, n, t->cap.max_send_wr, ret, posted);
		err = -EIO;
	}
	/* Let what was posted through, and check it all arrived. */
	for (i = 0; i < posted; i++) {
		sge = kqp_sge(t, &t->dst, i * 8, 8);
		ret = kqp_post_recv(t, KQP_B, i, &sge, 1);
		if (ret) {
			err = ret;
			goto out;
		}
	}
	ret = kqp_poll(t, KQP_B, posted, what);
	for (i = 0; !ret && i < posted; i++)
		ret = kqp_wc_ok(t, what, &t->wc[i], &(struct kqp_want){
			.side = KQP_B, .wr_id = i, .opcode = IB_WC_RECV,
			.has_len = true, .len = 8 });
	ret = ret ?: kqp_poll(t, KQP_A, posted, what);
	for (i = 0; !ret && i < posted; i++)
		ret = kqp_wc_ok(t, what, &t->wc[i], &(struct kqp_want){
			.side = KQP_A, .wr_id = i, .opcode = IB_WC_SEND });
	if (!ret && posted == n - 1) {
		kqp_to_cpu(t);
		ret = kqp_bytes_ok(what, t->dst.va, 0, t->want, posted * 8);
	}
	err = err ?: ret;
out:
	kfree(sges);
	kfree(wrs);
	return err;
}

/* The requester QP's state, or -errno. */
static int kqp_state(struct kqp *t, const char *what)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int ret;

	ret = ib_query_qp(t->qp[KQP_A], &attr, IB_QP_STATE, &init);
	if (ret) {
		kqp_err("%s: ib_query_qp: %d", what, ret);
		return ret;
	}
	return attr.qp_state;
}

/* Wait for the requester QP to report the error state. */
static int kqp_wait_error(struct kqp *t, const char *what)
{
	unsigned long end = jiffies + KQP_TIMEOUT;
	int state;

	for (;;) {
		state = kqp_state(t, what);
		if (state < 0)
			return state;
		if (state == IB_QPS_ERR)
			return 0;
		if (time_after(jiffies, end))
			break;
		usleep_range(100, 200);
	}
	kqp_err("%s: the requester QP is in state %d, not IB_QPS_ERR",
		what, state);
	return -EIO;
}

static int kqp_t_bad_rkey(struct kqp *t)
{
	static const char what[] = "wrong rkey";
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	int err;

	kqp_fill(t->src.va, KQP_BUF_LEN, 0xabab);
	memset(t->dst.va, KQP_CANARY, KQP_BUF_LEN);
	sge = kqp_sge(t, &t->src, 0, 64);
	kqp_to_dev(t);
	wr.wr.wr_id = 0x800;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = t->dst.dma + KQP_GAP;
	wr.rkey = t->pd->unsafe_global_rkey ^ 0x5a;
	err = kqp_post_send(t, &wr.wr);
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_A, .wr_id = 0x800,
		.status = IB_WC_REM_ACCESS_ERR });
	err = err ?: kqp_wait_error(t, what);
	kqp_to_cpu(t);
	return err ?: kqp_canary_ok(what, t->dst.va, 0, KQP_BUF_LEN);
}

/* In the error state, every WR posted completes flushed. */
static int kqp_t_flush(struct kqp *t)
{
	static const char what[] = "flush";
	struct ib_send_wr wr1 = {};
	struct ib_rdma_wr wr2 = {};
	struct ib_qp_attr attr = {};
	struct ib_sge sge, rsge;
	int i, err;

	/* The pair is fresh if the previous check failed: break it. */
	err = kqp_state(t, what);
	if (err < 0)
		return err;
	if (err != IB_QPS_ERR) {
		kqp_note("%s: moving the requester to IB_QPS_ERR with ib_modify_qp",
			 what);
		attr.qp_state = IB_QPS_ERR;
		err = kqp_modify(t, KQP_A, &attr, IB_QP_STATE, "ERR");
		if (err)
			return err;
	}
	memset(t->dst.va, KQP_CANARY, KQP_BUF_LEN);
	sge = kqp_sge(t, &t->src, 0, 64);
	rsge = kqp_sge(t, &t->dst, 0, 64);
	kqp_to_dev(t);
	wr1.wr_id = 0x801;
	wr1.opcode = IB_WR_SEND;
	wr1.send_flags = IB_SEND_SIGNALED;
	wr1.sg_list = &sge;
	wr1.num_sge = 1;
	wr1.next = &wr2.wr;
	wr2.wr.wr_id = 0x802;
	wr2.wr.opcode = IB_WR_RDMA_WRITE;
	wr2.wr.send_flags = IB_SEND_SIGNALED;
	wr2.wr.sg_list = &sge;
	wr2.wr.num_sge = 1;
	wr2.remote_addr = t->dst.dma + KQP_GAP;
	wr2.rkey = t->pd->unsafe_global_rkey;
	err = kqp_post_send(t, &wr1);
	err = err ?: kqp_poll(t, KQP_A, 2, what);
	for (i = 0; !err && i < 2; i++)
		err = kqp_wc_ok(t, what, &t->wc[i], &(struct kqp_want){
			.side = KQP_A, .wr_id = 0x801 + i,
			.status = IB_WC_WR_FLUSH_ERR });
	/* A receive posted now is flushed too. */
	err = err ?: kqp_post_recv(t, KQP_A, 0x803, &rsge, 1);
	err = err ?: kqp_expect(t, what, &(struct kqp_want){
		.side = KQP_A, .wr_id = 0x803, .status = IB_WC_WR_FLUSH_ERR });
	kqp_to_cpu(t);
	err = err ?: kqp_canary_ok(what, t->dst.va, 0, KQP_BUF_LEN);
	t->pair_bad = true;
	return err;
}

static int kqp_t_global_rkey_atomic(struct kqp *t)
{
	static const char what[] = "atomic via the global rkey";
	const u64 orig = 0x0f0e0d0c0b0a0908ULL;
	u64 *a = (u64 *)t->atom.va;
	int err;

	kqp_atom_init(t, orig);
	err = kqp_atomic(t, what, IB_WR_ATOMIC_FETCH_AND_ADD,
			 t->pd->unsafe_global_rkey, 1, 0, 1,
			 IB_WC_REM_ACCESS_ERR);
	err = err ?: kqp_u64_ok(what, "the target", a[0], orig);
	t->pair_bad = true;
	return err ?: kqp_canary_ok(what, t->atom.va, 8, t->atom.len);
}

struct kqp_check {
	const char *name;
	int (*fn)(struct kqp *t);
};

static const struct kqp_check kqp_checks[] = {
	{ "send/recv 1 byte", kqp_t_send_1 },
	{ "send/recv 1025 bytes (1 MTU + 1), 3 SGEs into 2", kqp_t_send_mtu },
	{ "send/recv 65536 bytes, 3 SGEs into 2", kqp_t_send_64k },
	{ "send with immediate: IB_WC_WITH_IMM and the value",
	  kqp_t_send_imm },
	{ "rdma write 204800 bytes through the PD's unsafe global rkey",
	  kqp_t_write },
	{ "rdma write with immediate, 1 and 9 packets: IB_WC_RECV_RDMA_WITH_IMM, byte_len",
	  kqp_t_write_imm },
	{ "rdma read 204800 bytes into 3 SGEs", kqp_t_read },
	{ "atomic fetch&add: old value returned, target added to",
	  kqp_t_fetch_add },
	{ "atomic compare&swap: swaps if equal, else only returns",
	  kqp_t_cmp_swap },
	{ "inline send of max_inline_data bytes, copied when posted",
	  kqp_t_inline },
	{ "unsignaled sends: 64 posted, every 16th signaled",
	  kqp_t_unsignaled },
	{ "post_send num_sge > max_send_sge: -EINVAL, bad_wr, WR before posted",
	  kqp_t_too_many_sge },
	{ "post_recv num_sge > max_recv_sge: -EINVAL, bad_wr, nothing posted",
	  kqp_t_too_many_rsge },
	{ "post_send inline data over max_inline_data: -EINVAL",
	  kqp_t_inline_too_big },
	{ "post_send past the send queue's size: -ENOMEM, bad_wr the WR that does not fit",
	  kqp_t_sq_full },
	{ "fast reg: REG_MR, a Write lands; LOCAL_INV, then REM_ACCESS_ERR",
	  kqp_t_fr_write_inv },
	{ "fast reg: Send with Invalidate: the key reported, dead, reusable",
	  kqp_t_fr_send_inv },
	{ "IB_WR_REG_MR of a valid MR: IB_WC_MW_BIND_ERR", kqp_t_fr_valid },
	{ "rdma write with a wrong rkey: IB_WC_REM_ACCESS_ERR, QP in error",
	  kqp_t_bad_rkey },
	{ "WRs posted in the error state: IB_WC_WR_FLUSH_ERR", kqp_t_flush },
	{ "atomic via the unsafe global rkey (no REMOTE_ATOMIC): IB_WC_REM_ACCESS_ERR",
	  kqp_t_global_rkey_atomic },
};

static void kqp_report(struct kqp *t, const char *name, int err)
{
	t->nr++;
	if (err) {
		t->nr_failed++;
		pr_err("not ok %d - %s\n", t->nr, name);
	} else {
		pr_info("ok %d - %s\n", t->nr, name);
	}
}

static void kqp_run(struct kqp *t, const struct kqp_check *c)
{
	int err = 0;

	if (t->pair_bad) {
		err = kqp_pair(t);
		if (err)
			kqp_err("no connected QP pair for this check: %d", err);
	}
	if (!err) {
		err = c->fn(t);
		/* After a failure, whatever is left in flight goes. */
		if (err)
			t->pair_bad = true;
	}
	kqp_report(t, c->name, err);
}

static int __init kqp_init(void)
{
	int total = ARRAY_SIZE(kqp_checks) + 1, i, err;
	struct kqp *t;

	if (!kqp_dev || !*kqp_dev) {
		pr_err("FAIL: no device; load with dev=<RDMA device>\n");
		return -EINVAL;
	}
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	pr_info("1..%d\n", total);
	err = kqp_setup(t);
	kqp_report(t, "set-up: PD, CQs, RC QP pair connected over the device's own GID",
		   err);
	for (i = 0; !err && i < ARRAY_SIZE(kqp_checks); i++)
		kqp_run(t, &kqp_checks[i]);
	kqp_teardown(t);

	if (err) {
		pr_err("FAIL: set-up failed (%d), %d checks not run\n", err,
		       total - 1);
		err = err == -ENODEV || err == -EINVAL ? err : -EIO;
	} else if (t->nr_failed) {
		pr_err("FAIL %d of %d checks\n", t->nr_failed, t->nr);
		err = -EIO;
	} else {
		pr_info("PASS %d checks\n", t->nr);
	}
	kfree(t);
	return err;
}

/* Everything happened in kqp_init(): nothing is left to undo. */
static void __exit kqp_exit(void)
{
}

module_init(kqp_init);
module_exit(kqp_exit);

MODULE_DESCRIPTION("srnic selftest: kernel RC QPs through the verbs API");
MODULE_LICENSE("GPL");
