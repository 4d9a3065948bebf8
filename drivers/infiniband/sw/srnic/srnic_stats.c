// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: hardware counters, shown by "rdma statistic show link DEV/1"
 * (names follow rdma_rxe's where the meaning is the same), and the
 * prefetch pool's tunables and the transmit gates' policy as sysfs
 * attributes of the device (/sys/class/infiniband/DEV/prefetch_*,
 * tx_gate_policy).
 */
#include <linux/device.h>
#include <linux/kstrtox.h>
#include <linux/sysfs.h>
#include <kunit/visibility.h>
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>

#include "srnic.h"

static const struct rdma_stat_desc srnic_counter_descs[] = {
	[SRNIC_CNT_SENT_PKTS].name = "sent_pkts",
	[SRNIC_CNT_RCVD_PKTS].name = "rcvd_pkts",
	[SRNIC_CNT_RX_DROPPED].name = "rx_dropped",
	[SRNIC_CNT_LINK_DOWNED].name = "link_downed",
	[SRNIC_CNT_ICRC_ERR].name = "rcvd_icrc_err",
	[SRNIC_CNT_MALFORMED].name = "rcvd_malformed",
	[SRNIC_CNT_NO_QP].name = "rcvd_no_qp",
	[SRNIC_CNT_DUP_REQ].name = "duplicate_request",
	[SRNIC_CNT_OOS_REQ].name = "out_of_seq_request",
	[SRNIC_CNT_RCVD_RNR].name = "rcvd_rnr_err",
	[SRNIC_CNT_SEND_RNR].name = "send_rnr_err",
	[SRNIC_CNT_RCVD_SEQ_ERR].name = "rcvd_seq_err",
	[SRNIC_CNT_STALE_NAK].name = "rcvd_stale_nak",
	[SRNIC_CNT_RETRY_EXC].name = "retry_exceeded_err",
	[SRNIC_CNT_RNR_RETRY_EXC].name = "retry_rnr_exceeded_err",
	[SRNIC_CNT_COMP_RETRY].name = "completer_retry_err",
	[SRNIC_CNT_RETRANSMITS].name = "retransmits",
	[SRNIC_CNT_SEND_ERR].name = "send_err",
	[SRNIC_CNT_RDMA_SENDS].name = "rdma_sends",
	[SRNIC_CNT_RDMA_RECVS].name = "rdma_recvs",
	[SRNIC_CNT_ACKS_SENT].name = "acks_sent",
	[SRNIC_CNT_NAKS_SENT].name = "naks_sent",
	[SRNIC_CNT_BAD_WQE].name = "bad_wqe",
	[SRNIC_CNT_QKEY_ERR].name = "rcvd_qkey_err",
	[SRNIC_CNT_UD_NO_RWQE].name = "ud_no_recv_wqe",
	[SRNIC_CNT_UC_DROPPED].name = "uc_msgs_dropped",
	[SRNIC_CNT_DGID_ERR].name = "rcvd_dgid_err",
	[SRNIC_CNT_DOORBELL_FETCH].name = "doorbell_fetches",
	[SRNIC_STAT_PF_FETCHED].name = "prefetch_fetched",
	[SRNIC_STAT_PF_IN_USE].name = "prefetch_slots_in_use",
	[SRNIC_STAT_PF_STALLS].name = "prefetch_stalls",
	[SRNIC_STAT_PF_RECLAIMS].name = "prefetch_reclaims",
	[SRNIC_STAT_PF_PINNED].name = "slots_pinned_by_fence",
	[SRNIC_STAT_GATE_ROUNDS].name = "tx_gate_rounds",
};

static_assert(ARRAY_SIZE(srnic_counter_descs) == SRNIC_NUM_STATS);

/**
 * srnic_alloc_hw_port_stats() - describe the port counters
 * @ibdev: the device
 * @port: 1
 *
 * Context: process context.
 * Return: the counter set, or NULL.
 */
struct rdma_hw_stats *srnic_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	return rdma_alloc_hw_stats_struct(srnic_counter_descs,
					  ARRAY_SIZE(srnic_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * srnic_counter_read() - a counter's value: the sum of every CPU's share
 * @sdev: the device
 * @c: the counter
 *
 * Context: any.
 * Return: the count (a snapshot: other CPUs may be counting meanwhile).
 */
u64 srnic_counter_read(struct srnic_dev *sdev, enum srnic_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(sdev->counters, cpu)->v[c]);
	return sum;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_counter_read);

/**
 * srnic_get_hw_stats() - read the counters
 * @ibdev: the device
 * @stats: filled in
 * @port: 1
 * @index: unused: all counters are read
 *
 * Context: process context.
 * Return: the number of counters.
 */
int srnic_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct srnic_dev *sdev = to_sdev(ibdev);
	struct srnic_pool *pool = &sdev->pool;
	int i;

	for (i = 0; i < SRNIC_NUM_COUNTERS; i++)
		stats->value[i] = srnic_counter_read(sdev, i);
	spin_lock_bh(&pool->lock);
	stats->value[SRNIC_STAT_PF_FETCHED] = pool->fetched;
	stats->value[SRNIC_STAT_PF_STALLS] = pool->stalls;
	stats->value[SRNIC_STAT_PF_RECLAIMS] = pool->reclaims;
	spin_unlock_bh(&pool->lock);
	stats->value[SRNIC_STAT_PF_IN_USE] = srnic_pool_in_use(pool);
	stats->value[SRNIC_STAT_PF_PINNED] = srnic_pool_pinned(pool);
	stats->value[SRNIC_STAT_GATE_ROUNDS] = srnic_gate_rounds(sdev);
	return SRNIC_NUM_STATS;
}

/**
 * srnic_fill_res_qp_entry() - a QP's driver attributes for "rdma resource
 *	show qp ... -dd": its share of the prefetch pool and its CPU
 * @msg: the netlink message
 * @ibqp: the QP
 *
 * Context: process context.
 * Return: 0 or -EMSGSIZE.
 */
int srnic_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct srnic_qp *qp = to_sqp(ibqp);
	struct srnic_pool *pool = &to_sdev(ibqp->device)->pool;
	struct nlattr *table;
	u64 stalls, reclaimed;
	u32 held;

	spin_lock_bh(&pool->lock);
	held = qp->req.pfq.count;
	stalls = qp->req.pfq.stalls;
	reclaimed = qp->req.pfq.reclaimed;
	spin_unlock_bh(&pool->lock);
	/* Driver attributes go in a table of their own. */
	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "prefetch_slots_held", held) ||
	    rdma_nl_put_driver_u64(msg, "prefetch_stalls", stalls) ||
	    rdma_nl_put_driver_u64(msg, "prefetch_reclaimed", reclaimed) ||
	    rdma_nl_put_driver_u32(msg, "tx_cpu", qp->tx_cpu)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/* The srnic device behind one of its sysfs files. */
static struct srnic_dev *srnic_dev_of(struct device *dev)
{
	return rdma_device_to_drv_device(dev, struct srnic_dev, ibdev);
}

/*
 * The pool's tunables, one file each: read the value, write a new one.
 * A write is checked whole by srnic_pool_set_cfg(): -EINVAL for a value
 * out of range (slots 1..1048576, 1 <= per-QP cap <= slots, lookahead
 * >= 1), -EBUSY to resize the pool while WQEs sit in it.
 */
enum srnic_pool_knob {
	SRNIC_KNOB_SLOTS,
	SRNIC_KNOB_PER_QP_CAP,
	SRNIC_KNOB_LOOKAHEAD,
	SRNIC_KNOB_FENCE_AHEAD,
};

static u32 *srnic_knob(struct srnic_pool_cfg *cfg, enum srnic_pool_knob k)
{
	switch (k) {
	case SRNIC_KNOB_SLOTS:
		return &cfg->nslots;
	case SRNIC_KNOB_PER_QP_CAP:
		return &cfg->per_qp_cap;
	case SRNIC_KNOB_LOOKAHEAD:
		return &cfg->lookahead;
	default:
		return &cfg->fence_ahead;
	}
}

static ssize_t srnic_knob_show(struct device *dev, char *buf,
			       enum srnic_pool_knob k)
{
	struct srnic_dev *sdev = srnic_dev_of(dev);
	struct srnic_pool_cfg cfg;

	spin_lock_bh(&sdev->pool.lock);
	cfg = sdev->pool.cfg;
	spin_unlock_bh(&sdev->pool.lock);
	return sysfs_emit(buf, "%u\n", *srnic_knob(&cfg, k));
}

static ssize_t srnic_knob_store(struct device *dev, const char *buf,
				size_t count, enum srnic_pool_knob k)
{
	struct srnic_dev *sdev = srnic_dev_of(dev);
	struct srnic_pool_cfg cfg;
	u32 v;
	int err;

	err = kstrtou32(buf, 0, &v);
	if (err)
		return err;
	mutex_lock(&sdev->pool_cfg_lock);
	spin_lock_bh(&sdev->pool.lock);
	cfg = sdev->pool.cfg;
	spin_unlock_bh(&sdev->pool.lock);
	*srnic_knob(&cfg, k) = v;
	err = srnic_pool_set_cfg(&sdev->pool, &cfg);
	mutex_unlock(&sdev->pool_cfg_lock);
	return err ?: count;
}

#define SRNIC_KNOB_ATTR(_name, _knob)					\
static const enum srnic_pool_knob _name##_knob = (_knob);		\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return srnic_knob_show(dev, buf, _name##_knob);			\
}									\
static ssize_t _name##_store(struct device *dev,			\
			     struct device_attribute *attr,		\
			     const char *buf, size_t count)		\
{									\
	return srnic_knob_store(dev, buf, count, _name##_knob);		\
}									\
static DEVICE_ATTR_RW(_name)

SRNIC_KNOB_ATTR(prefetch_slots, SRNIC_KNOB_SLOTS);
SRNIC_KNOB_ATTR(prefetch_per_qp_cap, SRNIC_KNOB_PER_QP_CAP);
SRNIC_KNOB_ATTR(prefetch_lookahead, SRNIC_KNOB_LOOKAHEAD);
SRNIC_KNOB_ATTR(prefetch_fence_ahead, SRNIC_KNOB_FENCE_AHEAD);

/*
 * The transmit gates' policy: "drr" (default), "rr", or "strict" (lower
 * service level first; it starves QPs and exists to show that).
 */
static ssize_t tx_gate_policy_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct srnic_dev *sdev = srnic_dev_of(dev);

	return sysfs_emit(buf, "%s\n",
			  srnic_gate_policy_name(READ_ONCE(sdev->gate_policy)));
}

static ssize_t tx_gate_policy_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t count)
{
	struct srnic_dev *sdev = srnic_dev_of(dev);
	enum srnic_gate_policy p;
	int err = -EINVAL;

	for (p = 0; p < SRNIC_GATE_NR_POLICIES; p++)
		if (sysfs_streq(buf, srnic_gate_policy_name(p)))
			break;
	mutex_lock(&sdev->pool_cfg_lock);
	if (p < SRNIC_GATE_NR_POLICIES)
		err = srnic_set_gate_policy(sdev, p);
	mutex_unlock(&sdev->pool_cfg_lock);
	return err ?: count;
}
static DEVICE_ATTR_RW(tx_gate_policy);

/*
 * The largest message (bytes) an idle QP's doorbell transmits on the
 * posting CPU; 0: every doorbell hands its WQEs on. At most the largest
 * message, 2^31 bytes: -EINVAL beyond.
 */
static ssize_t doorbell_run_max_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct srnic_dev *sdev = srnic_dev_of(dev);

	return sysfs_emit(buf, "%u\n", READ_ONCE(sdev->doorbell_run_max));
}

static ssize_t doorbell_run_max_store(struct device *dev,
				      struct device_attribute *attr,
				      const char *buf, size_t count)
{
	struct srnic_dev *sdev = srnic_dev_of(dev);
	u32 v;
	int err;

	err = kstrtou32(buf, 0, &v);
	if (err)
		return err;
	if (v > SRNIC_MAX_MSG_SIZE)
		return -EINVAL;
	WRITE_ONCE(sdev->doorbell_run_max, v);
	return count;
}
static DEVICE_ATTR_RW(doorbell_run_max);

static struct attribute *srnic_attrs[] = {
	&dev_attr_prefetch_slots.attr,
	&dev_attr_prefetch_per_qp_cap.attr,
	&dev_attr_prefetch_lookahead.attr,
	&dev_attr_prefetch_fence_ahead.attr,
	&dev_attr_tx_gate_policy.attr,
	&dev_attr_doorbell_run_max.attr,
	NULL
};

/*
 * ib_verbs.h asks new drivers for netlink instead of device_group; the
 * rdma tool has no attribute for a driver's own tunables, so these are
 * sysfs files, as the issue that asked for them says.
 */
const struct attribute_group srnic_attr_group = {
	.attrs = srnic_attrs,
};
