/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic: a software RDMA NIC that turns an Ethernet netdev into a RoCEv2
 * device. This header holds the device and verbs object types and the
 * interfaces between the driver's files (one file per mechanism).
 */
#ifndef SRNIC_H
#define SRNIC_H

#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <rdma/rdma_user_rxe.h>

#include <srnic/limits.h>
#include "srnic_compat.h"

#define SRNIC_DRV_NAME		"srnic"
#define SRNIC_LINK_TYPE		"srnic"
/* The rdma_rxe user ABI that librxe checks (RXE_UVERBS_ABI_VERSION). */
#define SRNIC_UVERBS_ABI_VERSION	2
#define SRNIC_ROCE_UDP_PORT	4791

struct srnic_net;

/* Hardware counters, reported through "rdma statistic". See srnic_stats.c. */
enum srnic_counter {
	SRNIC_CNT_SENT_PKTS,
	SRNIC_CNT_RCVD_PKTS,
	SRNIC_CNT_RX_DROPPED,
	SRNIC_CNT_LINK_DOWNED,
	SRNIC_NUM_COUNTERS
};

/**
 * struct srnic_dev - one srnic RDMA device, bound to one Ethernet netdev
 * @ibdev: the core's device; first member (INIT_RDMA_OBJ_SIZE needs it)
 * @list: entry in the driver's device list, under srnic_devices_lock
 * @ndev: the netdev; NULL once it unregistered (device is being removed)
 * @ndev_tracker: reference tracker for the hold on @ndev
 * @net: namespace of @ndev at creation: the device's UDP socket lives there
 * @ifindex: @ndev's ifindex in @net, how the receive path finds the device
 * @sn: per-namespace state holding the UDP tunnel sockets (srnic_net.c)
 * @registered: ib_register_device() succeeded and nobody removed it yet
 * @ndev_gone: the netdev unregistered while the device was being created
 * @attr: device attributes, fixed at creation
 * @n_*: object counts, each bounded by the matching attribute
 * @qp_xa: QP number to QP
 * @ah_xa: AH number (what librxe puts in UD WQEs) to AH
 * @mr_xa: memory key index to MR
 * @srq_xa: SRQ number to SRQ
 * @mr_keygen: per key index, the low byte of its last key: each reuse
 *	of an index gets the next byte, so a stale key misses
 * @counters: hardware counters
 */
struct srnic_dev {
	struct ib_device ibdev;
	struct list_head list;
	struct net_device __rcu *ndev;
	netdevice_tracker ndev_tracker;
	struct net *net;
	int ifindex;
	struct srnic_net *sn;
	bool registered;
	bool ndev_gone;
	struct ib_device_attr attr;

	atomic_t n_ucontext;
	atomic_t n_pd;
	atomic_t n_ah;
	atomic_t n_cq;
	atomic_t n_qp;
	atomic_t n_srq;
	atomic_t n_mr;

	struct xarray qp_xa;
	u32 qpn_next;
	struct xarray ah_xa;
	u32 ah_next;
	struct xarray mr_xa;
	u32 mr_next;
	u8 *mr_keygen;
	struct xarray srq_xa;
	u32 srq_next;

	atomic64_t counters[SRNIC_NUM_COUNTERS];
};

static inline struct srnic_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct srnic_dev, ibdev);
}

static inline void srnic_counter_inc(struct srnic_dev *sdev,
				     enum srnic_counter c)
{
	atomic64_inc(&sdev->counters[c]);
}

#define srnic_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define srnic_dbg_qp(qp, fmt, ...)					\
	do {								\
		const struct srnic_qp *__qp = (qp);			\
									\
		ibdev_dbg(__qp->ibqp.device, "QP%u %s: " fmt,		\
			  __qp->ibqp.qp_num, __func__, ##__VA_ARGS__);	\
	} while (0)

/*
 * Shared rings (srnic_queue.c), laid out as rdma_rxe's struct
 * rxe_queue_buf so that the stock librxe drives them.
 *
 * Index ownership: the side that produces owns the producer index, the
 * side that consumes owns the consumer index. The kernel never trusts an
 * index that user space can write: it keeps its own copy of the index it
 * owns (@index) and masks every index it reads.
 */
enum srnic_queue_type {
	SRNIC_QUEUE_KERNEL,	/* kernel produces and consumes (kernel QP/CQ) */
	SRNIC_QUEUE_TO_USER,	/* kernel produces, user consumes (CQ) */
	SRNIC_QUEUE_FROM_USER,	/* user produces, kernel consumes (SQ/RQ/SRQ) */
};

struct srnic_mmap_entry;

/**
 * struct srnic_queue - a ring of fixed-size elements
 * @buf: header and elements; vmalloc_user() memory when user-mapped
 * @buf_size: bytes in @buf
 * @log2_elem_size: element size is 1 << this
 * @index_mask: number of slots - 1 (slots are a power of two; one is
 *	always left empty to tell full from empty, as librxe expects)
 * @index: the kernel's private index (see enum srnic_queue_type)
 * @type: who produces and who consumes
 * @mmap: the mmap cookie handed to user space, NULL for kernel queues
 */
struct srnic_queue {
	struct rxe_queue_buf *buf;
	size_t buf_size;
	u32 log2_elem_size;
	u32 index_mask;
	u32 index;
	enum srnic_queue_type type;
	struct srnic_mmap_entry *mmap;
};

int srnic_queue_init(struct srnic_queue *q, u32 *num_elem, size_t elem_size,
		     enum srnic_queue_type type);
void srnic_queue_cleanup(struct srnic_queue *q);
int srnic_queue_publish(struct srnic_queue *q, struct ib_ucontext *uctx,
			struct mminfo *mi);
u32 srnic_queue_producer(const struct srnic_queue *q);
u32 srnic_queue_consumer(const struct srnic_queue *q);
void srnic_queue_advance_producer(struct srnic_queue *q);
void srnic_queue_advance_consumer(struct srnic_queue *q);
u32 srnic_queue_count(const struct srnic_queue *q);
void srnic_queue_reset(struct srnic_queue *q);
int srnic_queue_resize(struct srnic_queue *q, spinlock_t *lock,
		       u32 *num_elem);

static inline u32 srnic_queue_capacity(const struct srnic_queue *q)
{
	return q->index_mask;
}

static inline bool srnic_queue_empty(const struct srnic_queue *q)
{
	return srnic_queue_count(q) == 0;
}

static inline bool srnic_queue_full(const struct srnic_queue *q)
{
	return srnic_queue_count(q) == q->index_mask;
}

static inline void *srnic_queue_addr(const struct srnic_queue *q, u32 index)
{
	return q->buf->data + ((size_t)(index & q->index_mask) <<
			       q->log2_elem_size);
}

/* srnic_mmap.c */
int srnic_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void srnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
struct srnic_mmap_entry *srnic_mmap_entry_insert(struct ib_ucontext *uctx,
						 void *addr, size_t size,
						 u64 *offset);
void srnic_mmap_entry_remove(struct srnic_mmap_entry *entry);

struct srnic_ucontext {
	struct ib_ucontext ibuc;
};

/* The user context a verb's udata came with; NULL for kernel callers. */
static inline struct ib_ucontext *srnic_udata_uctx(struct ib_udata *udata)
{
	struct srnic_ucontext *uc;

	uc = rdma_udata_to_drv_context(udata, struct srnic_ucontext, ibuc);
	return uc ? &uc->ibuc : NULL;
}

struct srnic_pd {
	struct ib_pd ibpd;
};

static inline struct srnic_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct srnic_pd, ibpd);
}

/**
 * struct srnic_av - a resolved RoCEv2 address vector
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @sgid_index: index of the source GID in the port's table
 * @sgid: the source GID (IPv4-mapped or IPv6 address)
 * @dgid: the destination GID
 * @dmac: destination MAC, resolved by the core for RoCE
 * @flow_label: IPv6 flow label
 * @hop_limit: IP TTL / hop limit
 * @traffic_class: IP DSCP/ECN byte
 * @sl: service level (kept for query; RoCE carries it as priority)
 * @static_rate: kept for query
 */
struct srnic_av {
	u8 network_type;
	u8 sgid_index;
	union ib_gid sgid;
	union ib_gid dgid;
	u8 dmac[ETH_ALEN];
	u32 flow_label;
	u8 hop_limit;
	u8 traffic_class;
	u8 sl;
	u8 static_rate;
};

int srnic_av_from_attr(struct srnic_dev *sdev, struct srnic_av *av,
		       const struct rdma_ah_attr *attr);
void srnic_av_to_attr(struct srnic_dev *sdev, const struct srnic_av *av,
		      struct rdma_ah_attr *attr);

struct srnic_ah {
	struct ib_ah ibah;
	struct srnic_av av;
	u32 ah_num;
};

static inline struct srnic_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct srnic_ah, ibah);
}

/*
 * A CQ element: user CQs hold struct ib_uverbs_wc (what librxe reads),
 * kernel CQs struct ib_wc. One size for both keeps the ring code shared.
 */
union srnic_cqe {
	struct ib_wc ibwc;
	struct ib_uverbs_wc uwc;
};

/**
 * struct srnic_cq - a completion queue
 * @ibcq: the core's CQ
 * @lock: serialises producers (completion engine, flush) and, for kernel
 *	CQs, poll_cq; also protects @notify and resize
 * @queue: the ring
 * @is_user: the ring is mapped by a user process (elements are
 *	ib_uverbs_wc, consumer index is untrusted)
 * @notify: armed notification (0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP)
 * @overflow: the CQ overran; IB_EVENT_CQ_ERR was delivered
 */
struct srnic_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* see above */
	struct srnic_queue queue;
	bool is_user;
	u8 notify;
	bool overflow;
};

static inline struct srnic_cq *to_scq(struct ib_cq *ibcq)
{
	return ibcq ? container_of(ibcq, struct srnic_cq, ibcq) : NULL;
}

int srnic_cq_post(struct srnic_cq *cq, const union srnic_cqe *cqe,
		  bool solicited);

/**
 * struct srnic_wq - a work queue (SQ, RQ or SRQ ring)
 * @queue: the ring
 * @lock: producer lock for kernel posts and resize
 * @max_wr: capacity reported to the consumer
 * @max_sge: scatter/gather entries per WQE
 * @max_inline: inline bytes per send WQE
 */
struct srnic_wq {
	struct srnic_queue queue;
	spinlock_t lock;	/* producer lock, see above */
	u32 max_wr;
	u32 max_sge;
	u32 max_inline;
};

/**
 * struct srnic_srq - a shared receive queue
 * @ibsrq: the core's SRQ
 * @rq: the receive ring
 * @srq_num: number reported to librxe
 * @limit: armed limit (0: disarmed)
 * @is_user: the ring is user-mapped
 */
struct srnic_srq {
	struct ib_srq ibsrq;
	struct srnic_wq rq;
	u32 srq_num;
	u32 limit;
	bool is_user;
};

static inline struct srnic_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return ibsrq ? container_of(ibsrq, struct srnic_srq, ibsrq) : NULL;
}

/**
 * struct srnic_qp - a queue pair
 * @ibqp: the core's QP
 * @state_lock: serialises modify_qp and guards the attributes below
 * @state: current state
 * @is_user: the rings are user-mapped
 * @sq: send ring
 * @rq: receive ring (unused with an SRQ)
 * @srq: the SRQ, if any
 * @sq_sig_all: every send WR generates a completion
 * @attr fields: the values last set by modify_qp, reported by query_qp
 * @av: the primary path
 */
struct srnic_qp {
	struct ib_qp ibqp;
	struct mutex state_lock;	/* see above */
	enum ib_qp_state state;
	bool is_user;
	struct srnic_wq sq;
	struct srnic_wq rq;
	struct srnic_srq *srq;
	bool sq_sig_all;

	u32 qkey;
	u32 sq_psn;
	u32 rq_psn;
	u32 dest_qpn;
	int access_flags;
	enum ib_mtu path_mtu;
	u16 pkey_index;
	u8 port_num;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 min_rnr_timer;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	bool sqd_notify;
	bool av_valid;
	struct srnic_av av;
};

static inline struct srnic_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct srnic_qp, ibqp);
}

/**
 * struct srnic_mr - a memory region
 * @ibmr: the core's MR
 * @umem: pinned user pages, NULL for a DMA MR
 * @pd: its PD (the core sets ibmr.pd only after registration returns)
 * @iova: first virtual address the MR covers
 * @length: bytes covered
 * @access: IB_ACCESS_* rights
 * @index: key index in srnic_dev::mr_xa
 * @ref: users: the registration, plus every lookup in flight
 * @done: completed when the last user is gone (deregistration waits)
 * @rcu: frees the MR after lookups that may still see it are over
 */
struct srnic_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	struct ib_pd *pd;
	u64 iova;
	u64 length;
	int access;
	u32 index;
	refcount_t ref;
	struct completion done;
	struct rcu_head rcu;
};

/* Which key of an MR a request names. */
enum srnic_key_type {
	SRNIC_LKEY,
	SRNIC_RKEY,
};

static inline struct srnic_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct srnic_mr, ibmr);
}

/* srnic_main.c */
struct net_device *srnic_ndev_get(struct srnic_dev *sdev);

/* srnic_net.c */
int srnic_net_init(void);
void srnic_net_exit(void);
struct srnic_net *srnic_net_get(struct net *net, const char *ndev_name);
void srnic_net_put(struct srnic_net *sn);
int srnic_net_add_dev(struct srnic_net *sn, struct srnic_dev *sdev,
		      int ifindex);
void srnic_net_del_dev(struct srnic_net *sn, struct srnic_dev *sdev,
		       int ifindex);
void srnic_unregister_net_devices(struct net *net);

/* srnic_verbs.c */
int srnic_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int srnic_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int srnic_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
enum rdma_link_layer srnic_get_link_layer(struct ib_device *ibdev, u32 port);
int srnic_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int srnic_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void srnic_dealloc_ucontext(struct ib_ucontext *ibuc);
void srnic_disassociate_ucontext(struct ib_ucontext *ibuc);
int srnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int srnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int srnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata);
int srnic_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int srnic_destroy_ah(struct ib_ah *ibah, u32 flags);
void srnic_init_device_attr(struct srnic_dev *sdev, struct net_device *ndev);

/* srnic_cq.c */
int srnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct srnic_cq_uarg *uattrs);
int srnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int srnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int srnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int srnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/* srnic_qp.c */
int srnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int srnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int srnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int srnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int srnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int srnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int srnic_check_qp_attr(const struct ib_device_attr *dattr,
			enum ib_qp_type type, enum ib_qp_state cur,
			const struct ib_qp_attr *attr, int mask);
int srnic_wq_post_recv(struct srnic_wq *wq, const struct ib_recv_wr *wr);

/* srnic_srq.c */
int srnic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int srnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int srnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int srnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int srnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

/* srnic_mr.c */
struct ib_mr *srnic_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *srnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
int srnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct srnic_mr *srnic_mr_alloc(struct srnic_dev *sdev, struct ib_pd *pd,
				int access);
void srnic_mr_publish(struct srnic_dev *sdev, struct srnic_mr *mr);
void srnic_mr_destroy(struct srnic_dev *sdev, struct srnic_mr *mr);
struct srnic_mr *srnic_mr_get(struct srnic_dev *sdev, u32 key,
			      enum srnic_key_type type);
void srnic_mr_put(struct srnic_mr *mr);
bool srnic_mr_range_ok(u64 start, u64 length, u64 addr, u64 len);
int srnic_mr_check(const struct srnic_mr *mr, const struct ib_pd *pd,
		   u64 addr, u64 len, int access);

/* srnic_stats.c */
struct rdma_hw_stats *srnic_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int srnic_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);

/* srnic_main.c: bounded object counts */
static inline bool srnic_obj_get(atomic_t *count, u32 max)
{
	if (atomic_inc_return(count) > max) {
		atomic_dec(count);
		return false;
	}
	return true;
}

static inline void srnic_obj_put(atomic_t *count)
{
	atomic_dec(count);
}

#endif /* SRNIC_H */
