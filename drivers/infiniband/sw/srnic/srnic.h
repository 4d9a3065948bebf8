/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic: a software RDMA NIC that turns an Ethernet netdev into a RoCEv2
 * device. This header holds the device and verbs object types and the
 * interfaces between the driver's files (one file per mechanism).
 */
#ifndef SRNIC_H
#define SRNIC_H

#include <linux/hashtable.h>
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <rdma/rdma_user_rxe.h>
#include <net/dst_cache.h>

#include <srnic/limits.h>
#include "srnic_compat.h"
#include "srnic_pkt.h"
#include "srnic_prefetch.h"
#include "srnic_mr.h"
#include "srnic_queue.h"
#include "srnic_sched.h"
#include "srnic_wqe.h"

#define SRNIC_DRV_NAME		"srnic"
#define SRNIC_LINK_TYPE		"srnic"
/* The rdma_rxe user ABI that librxe checks (RXE_UVERBS_ABI_VERSION). */
#define SRNIC_UVERBS_ABI_VERSION	2

struct srnic_net;

/* Hardware counters, reported through "rdma statistic". See srnic_stats.c. */
enum srnic_counter {
	SRNIC_CNT_SENT_PKTS,
	SRNIC_CNT_RCVD_PKTS,
	SRNIC_CNT_RX_DROPPED,
	SRNIC_CNT_LINK_DOWNED,
	SRNIC_CNT_ICRC_ERR,
	SRNIC_CNT_MALFORMED,
	SRNIC_CNT_NO_QP,
	SRNIC_CNT_DUP_REQ,
	SRNIC_CNT_OOS_REQ,
	SRNIC_CNT_RCVD_RNR,
	SRNIC_CNT_SEND_RNR,
	SRNIC_CNT_RCVD_SEQ_ERR,
	SRNIC_CNT_STALE_NAK,
	SRNIC_CNT_RETRY_EXC,
	SRNIC_CNT_RNR_RETRY_EXC,
	SRNIC_CNT_COMP_RETRY,
	SRNIC_CNT_RETRANSMITS,
	SRNIC_CNT_SEND_ERR,
	SRNIC_CNT_RDMA_SENDS,
	SRNIC_CNT_RDMA_RECVS,
	SRNIC_CNT_ACKS_SENT,
	SRNIC_CNT_NAKS_SENT,
	SRNIC_CNT_BAD_WQE,
	SRNIC_CNT_QKEY_ERR,
	SRNIC_CNT_UD_NO_RWQE,
	SRNIC_CNT_UC_DROPPED,
	SRNIC_CNT_DGID_ERR,
	SRNIC_CNT_DOORBELL_FETCH,
	SRNIC_NUM_COUNTERS
};

/* Statistics read from the prefetch pool, after the counters. */
enum srnic_pool_stat {
	SRNIC_STAT_PF_FETCHED = SRNIC_NUM_COUNTERS,
	SRNIC_STAT_PF_IN_USE,
	SRNIC_STAT_PF_STALLS,
	SRNIC_STAT_PF_RECLAIMS,
	SRNIC_STAT_PF_PINNED,
	SRNIC_STAT_GATE_ROUNDS,
	SRNIC_NUM_STATS
};

/**
 * struct srnic_counters - one CPU's share of a device's counters
 * @v: indexed by enum srnic_counter
 */
struct srnic_counters {
	u64 v[SRNIC_NUM_COUNTERS];
};

/**
 * struct srnic_txgate - one CPU's transmit gate of a device
 * @gate: which of the CPU's QPs sends next (srnic_sched.h)
 * @task: the transmit engine: serves the QPs @gate picks
 * @cpu: the CPU; @task runs only there
 * @ipi_busy: a request to run @task on @cpu is on its way (@csd in use)
 * @csd: asks @cpu to schedule @task
 */
struct srnic_txgate {
	struct srnic_gate gate;
	struct tasklet_struct task;
	int cpu;
	atomic_t ipi_busy;
	call_single_data_t csd;
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
 * @port_up: the port state last reported (a port event is sent when it
 *	changes, not for every netdev notification)
 * @attr: device attributes, fixed at creation
 * @n_ucontext: user contexts (each object count below is bounded by the
 *	matching attribute of @attr)
 * @n_pd: protection domains
 * @n_ah: address handles
 * @n_cq: completion queues
 * @n_qp: QPs (not QP1)
 * @n_srq: shared receive queues
 * @n_mr: memory regions
 * @n_mw: memory windows
 * @qp_xa: QP number to QP
 * @qpn_next: where the cyclic allocation of QP numbers goes on
 * @ah_xa: AH number (what librxe puts in UD WQEs) to AH
 * @ah_next: where the cyclic allocation of AH numbers goes on
 * @mr_xa: memory key index to MR, or to a memory window (a tagged entry:
 *	srnic_mw.c)
 * @mr_next: where the cyclic allocation of key indices goes on
 * @srq_xa: SRQ number to SRQ
 * @srq_next: where the cyclic allocation of SRQ numbers goes on
 * @mr_keygen: per key index, the low byte of its last key: each reuse
 *	of an index gets the next byte, so a stale key misses
 * @gid_lock: serialises changes of @gids
 * @gids: the port's RoCEv2 GIDs, kept by the core through add_gid and
 *	del_gid; the receive path (under RCU) takes only packets addressed
 *	to one of them
 * @pool: the WQE prefetch pool shared by the device's QPs
 * @pool_cfg_lock: serialises changes of @pool's tunables and of the
 *	gates' policy (sysfs)
 * @txgates: the transmit gates, one per CPU
 * @gate_policy: their policy
 * @doorbell_run_max: the largest message (bytes) an idle QP's doorbell
 *	transmits on the posting CPU (srnic_doorbell_idle()); a larger one
 *	goes to the gate's engine and the doorbell returns at once (sysfs)
 * @atomic_lock: makes each atomic operation atomic with respect to every
 *	other one the device executes, whichever QP it arrives on
 * @counters: hardware counters, one set per CPU (srnic_counter_inc() is a
 *	plain per-CPU increment: no shared cache line between the CPU that
 *	transmits and the one that receives); srnic_counter_read() sums them
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
	bool port_up;
	struct ib_device_attr attr;

	atomic_t n_ucontext;
	atomic_t n_pd;
	atomic_t n_ah;
	atomic_t n_cq;
	atomic_t n_qp;
	atomic_t n_srq;
	atomic_t n_mr;
	atomic_t n_mw;

	struct xarray qp_xa;
	u32 qpn_next;
	struct xarray ah_xa;
	u32 ah_next;
	struct xarray mr_xa;
	u32 mr_next;
	u8 *mr_keygen;
	struct xarray srq_xa;
	u32 srq_next;

	spinlock_t gid_lock;	/* see above */
	DECLARE_HASHTABLE(gids, 6);

	struct srnic_pool pool;
	struct mutex pool_cfg_lock;	/* see above */
	struct srnic_txgate __percpu *txgates;
	enum srnic_gate_policy gate_policy;
	u32 doorbell_run_max;
	spinlock_t atomic_lock;	/* see above */

	struct srnic_counters __percpu *counters;
};

static inline struct srnic_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct srnic_dev, ibdev);
}

static inline void srnic_counter_inc(struct srnic_dev *sdev,
				     enum srnic_counter c)
{
	this_cpu_inc(sdev->counters->v[c]);
}

u64 srnic_counter_read(struct srnic_dev *sdev, enum srnic_counter c);

#define srnic_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define srnic_dbg_qp(qp, fmt, ...)					\
	do {								\
		const struct srnic_qp *__qp = (qp);			\
									\
		ibdev_dbg(__qp->ibqp.device, "QP%u %s: " fmt,		\
			  __qp->ibqp.qp_num, __func__, ##__VA_ARGS__);	\
	} while (0)

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
 * struct srnic_wc_src - where a datagram came from, for its completion
 * @qpn: the source QP (DETH)
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @has_smac: @smac is known (the packet came in over Ethernet)
 * @smac: the source MAC
 */
struct srnic_wc_src {
	u32 qpn;
	u8 network_type;
	bool has_smac;
	u8 smac[ETH_ALEN];
};

/**
 * struct srnic_recv_wc - what a receive completion says of its message
 * @op: IB_WC_RECV or IB_WC_RECV_RDMA_WITH_IMM
 * @byte_len: bytes placed (a datagram's 40-byte GRH area included)
 * @imm: immediate data, network order (with IB_WC_WITH_IMM)
 * @inv_rkey: the key a Send with Invalidate invalidated (with
 *	IB_WC_WITH_INVALIDATE)
 * @flags: IB_WC_WITH_IMM, IB_WC_WITH_INVALIDATE (kernel values)
 * @solicited: the message asked for a solicited event
 * @src: a datagram's source (UD, GSI), else NULL
 */
struct srnic_recv_wc {
	enum ib_wc_opcode op;
	u32 byte_len;
	__be32 imm;
	u32 inv_rkey;
	int flags;
	bool solicited;
	const struct srnic_wc_src *src;
};

struct srnic_qp;
bool srnic_wc_send(struct srnic_qp *qp, u64 wr_id, enum ib_wc_status status,
		   u32 wr_opcode, u32 byte_len);
void srnic_wc_flush_sq(struct srnic_qp *qp, u64 wr_id, u32 wr_opcode);
bool srnic_wc_recv(struct srnic_qp *qp, u64 wr_id, enum ib_wc_status status,
		   const struct srnic_recv_wc *rwc);
bool srnic_wc_recv_err(struct srnic_qp *qp, u64 wr_id,
		       enum ib_wc_status status, u32 byte_len);
void srnic_wc_flush_rq(struct srnic_qp *qp, u64 wr_id);

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

/* Read response packets a requester places ahead of a missing one. */
#define SRNIC_READ_AHEAD	4096
/* Where a send WQE in the requester's window stands. */
enum srnic_swqe_state {
	SRNIC_SWQE_ISSUED,	/* taken from the pool, PSNs assigned */
	SRNIC_SWQE_DONE,	/* acknowledged / all responses placed */
};

/**
 * struct srnic_swqe - a send WQE in the requester's window
 * @first_psn: PSN of its first packet
 * @npkts: PSNs it uses (request packets; a Read: response packets)
 * @read_off: Read: response bytes placed so far
 * @state: enum srnic_swqe_state
 * @status: IB_WC_SUCCESS, or the error it completes with
 * @wqe: the validated WQE, copied from the prefetch pool at issue
 *
 * The window lives in kernel memory from issue to completion: the ring
 * slot may be reused by the consumer only after completion, but the
 * pipeline never reads it again after the prefetch.
 */
struct srnic_swqe {
	u32 first_psn;
	u32 npkts;
	u32 read_off;
	u8 state;
	u8 status;
	struct srnic_send_wqe wqe;	/* flexible: last */
};

/**
 * struct srnic_req - the requester side of an RC QP
 * @lock: protects everything below; taken in softirq context
 * @lim: the send queue's limits, for WQE validation
 * @pfq: the QP's share of the device's prefetch pool
 * @pf_work: the prefetch stage (device workqueue)
 * @timer: retransmission / RNR wait timer
 * @window: the issued WQEs, one entry of @stride bytes per ring slot
 * @stride: bytes per @window entry
 * @comp: ring index of the oldest WQE not yet completed
 * @issue: ring index of the next WQE to take from the pool
 * @cur: ring index of the WQE being transmitted (@comp..@issue)
 * @cur_pkt: its next packet (index within the message)
 * @psn: PSN of that packet
 * @una: oldest unacknowledged PSN
 * @rd_atomic: Read/Atomic WQEs issued and not complete
 * @retry_left: retries left before IB_WC_RETRY_EXC_ERR
 * @rnr_left: RNR retries left (7: infinite)
 * @rnr_wait: waiting out an RNR NAK's timer
 * @timer_psn: @una when the timer was armed (no progress: retransmit)
 * @max_psn: one past the highest PSN sent
 * @gap_pending: a missing response was asked for again at @gap_psn; later
 *	evidence of the same gap does not ask again (no retransmission storm)
 * @gap_psn: see @gap_pending
 * @bad_wqe: the prefetch stage found a WQE the QP cannot execute, at
 *	ring index @bad_index: it completes in error when its turn comes
 * @bad_index: see @bad_wqe
 * @ring_bad: the send ring's producer index went back behind WQEs already
 *	read (the ring is inconsistent): the QP fails with
 *	IB_EVENT_QP_FATAL once req.lock is dropped (srnic_req_ring_check())
 * @fetch_buf: the prefetch stage's copy of one ring element
 * @fetch_size: bytes per ring element
 * @flushing: the QP is in error: everything completes with flush status
 * @sport: UDP source port of the QP's flow
 * @read_seen: Read response packets placed past the first missing one,
 *	bit (index in the Read % SRNIC_READ_AHEAD), for the Read whose first
 *	PSN is @read_map_psn (@read_map_valid)
 * @read_map_psn: see @read_seen
 * @read_map_valid: see @read_seen
 */
struct srnic_req {
	spinlock_t lock;	/* see above */
	struct srnic_wqe_limits lim;
	struct srnic_pfq pfq;
	struct work_struct pf_work;
	struct timer_list timer;
	u8 *window;
	u32 stride;
	u32 comp;
	u32 issue;
	u32 cur;
	u32 cur_pkt;
	u32 psn;
	u32 una;
	u32 rd_atomic;
	u8 retry_left;
	u8 rnr_left;
	bool rnr_wait;
	u32 timer_psn;
	u32 max_psn;
	bool gap_pending;
	u32 gap_psn;
	bool bad_wqe;
	u32 bad_index;
	bool ring_bad;
	void *fetch_buf;
	u32 fetch_size;
	bool flushing;
	u16 sport;
	DECLARE_BITMAP(read_seen, SRNIC_READ_AHEAD);
	u32 read_map_psn;
	bool read_map_valid;
};

/**
 * struct srnic_rwqe - a receive WQE the responder took from the RQ/SRQ
 * @wr_id: the consumer's cookie
 * @num_sge: entries in @sge
 * @length: bytes the SGEs cover
 * @sge: the buffers
 */
struct srnic_rwqe {
	u64 wr_id;
	u32 num_sge;
	u32 length;
	struct ib_sge sge[SRNIC_MAX_SGE];
};

/**
 * struct srnic_read_job - a response the responder still has to send
 * @list: entry in srnic_resp::reads, in PSN order
 * @small: a response without payload waiting behind Read responses (an
 *	ACK, NAK, atomic or Atomic Write/Flush response: responses leave in
 *	PSN order), described by @opcode, @psn, @syndrome, @msn, @orig and
 *	built when its turn comes; false for a Read, described by @rkey,
 *	@va, @resid, @psn and @first
 * @opcode: small: the response's opcode
 * @syndrome: small: its AETH syndrome
 * @msn: small: its MSN
 * @orig: small: an atomic response's original value
 * @rkey: the Read's R_Key, looked up again for each response packet
 *	(nothing is held between packets)
 * @va: next byte to send
 * @resid: bytes left
 * @psn: PSN of the next response packet
 * @first: the next packet is the first of the response
 */
struct srnic_read_job {
	struct list_head list;
	bool small;
	u8 opcode;
	u8 syndrome;
	u32 msn;
	u64 orig;
	u32 rkey;
	u64 va;
	u32 resid;
	u32 psn;
	bool first;
};

/**
 * struct srnic_atomic_res - an executed atomic, for duplicate requests
 * @apsn: its PSN unwrapped (struct srnic_resp's @apsn when it executed):
 *	a duplicate matches only the very request, never one 2^24 PSNs
 *	earlier
 * @orig: the value it returned
 * @valid: the entry holds a result
 */
struct srnic_atomic_res {
	u64 apsn;
	u64 orig;
	bool valid;
};

/**
 * struct srnic_resp - the responder side of an RC QP
 * @lock: protects everything below; taken in softirq context
 * @epsn: next expected request PSN
 * @msn: messages completed (AETH MSN)
 * @in_op: SRNIC_OPF_SEND or SRNIC_OPF_WRITE while a multi-packet message
 *	is in progress (a middle or last packet must follow), else 0
 * @wrkey: the in-progress Write's R_Key (looked up again per packet:
 *	nothing is held between packets)
 * @wva: where its next byte goes
 * @wresid: bytes of it still to come
 * @have_rwqe: @rwqe holds the receive WQE the current Send consumes
 * @rwqe: that WQE
 * @roff: bytes of the current Send placed so far
 * @nak_sent: a PSN sequence NAK went out; stay quiet until @epsn arrives
 * @uc_lost: UC: the message being received lost packets; the rest of it
 *	is dropped until a packet starts a message (counted once)
 * @comm_est: a packet arrived in RTR and IB_EVENT_COMM_EST was reported
 *	(once per connection: cleared on the move to RTR)
 * @last_wqe: the QP (on an SRQ) went to error and
 *	IB_EVENT_QP_LAST_WQE_REACHED was reported (cleared on reset)
 * @ac: ACK coalescing
 * @reads: Read requests being answered and the small responses waiting
 *	behind them, oldest first
 * @nreads: Reads in @reads (bounded by max_dest_rd_atomic)
 * @nsmall: small responses in @reads other than plain ACKs and NAKs
 *	(bounded by max_dest_rd_atomic too; plain ACKs coalesce)
 * @sending: response packets were built and may not have left yet: a
 *	small response built now would overtake them, so it waits as a job,
 *	and a round at the QP's gate builds none (set by the receive path's
 *	Read response, srnic_resp_read_now())
 * @apsn: @epsn unwrapped: PSNs taken since the move to RTR
 * @ares: the results of the last @nares atomics, a ring: as many as the
 *	requester may have outstanding (max_dest_rd_atomic), so that any
 *	duplicate it may send finds its original result
 * @nares: entries in @ares (sized by modify_qp)
 * @ares_next: where the next result goes
 */
struct srnic_resp {
	spinlock_t lock;	/* see above */
	u32 epsn;
	u32 msn;
	u16 in_op;
	u32 wrkey;
	u64 wva;
	u32 wresid;
	bool have_rwqe;
	struct srnic_rwqe rwqe;
	u32 roff;
	bool nak_sent;
	bool uc_lost;
	bool comm_est;
	bool last_wqe;
	struct srnic_ack_coalesce ac;
	struct list_head reads;
	u32 nreads;
	u32 nsmall;
	bool sending;
	u64 apsn;
	struct srnic_atomic_res *ares;
	u32 nares;
	u32 ares_next;
};

/**
 * struct srnic_qp - a queue pair
 * @ibqp: the core's QP
 * @state_lock: serialises modify_qp and guards the attributes below
 * @state: current state
 * @is_user: the rings are user-mapped
 * @dead: being destroyed: the pipeline stages stop rearming
 * @xport: its reliability mechanism (srnic_transport.h)
 * @gq: its place at its CPU's transmit gate (the gate's lock guards it)
 * @tx_cpu: the CPU whose transmit gate serves the QP: every packet of the
 *	QP leaves from one CPU, so per-CPU queues on the way (a veth peer's
 *	backlog, a NIC's transmit queue picked by CPU) cannot reorder them
 * @sq: send ring
 * @rq: receive ring (unused with an SRQ)
 * @srq: the SRQ, if any
 * @sq_sig_all: every send WR generates a completion
 * @qkey: the Q_Key (UD, GSI)
 * @sq_psn: the send PSN set by modify_qp
 * @rq_psn: the expected receive PSN set by modify_qp
 * @dest_qpn: the connected peer's QP number (RC, UC)
 * @access_flags: remote access the responder allows (IB_ACCESS_REMOTE_*)
 * @path_mtu: the path MTU as modify_qp set it
 * @pkey_index: P_Key index (only the default P_Key exists)
 * @port_num: the port (always 1)
 * @max_rd_atomic: Reads and atomics this QP may have outstanding
 * @max_dest_rd_atomic: Reads and atomics it accepts outstanding
 * @min_rnr_timer: the RNR NAK timer it sends
 * @timeout: the local ACK timeout exponent (4.096 us << @timeout; 0:
 *	infinite)
 * @retry_cnt: transport retries before IBV_WC_RETRY_EXC_ERR
 * @rnr_retry: RNR retries before IBV_WC_RNR_RETRY_EXC_ERR (7: infinite)
 * @sqd_notify: raise IB_EVENT_SQ_DRAINED when SQD drains
 * @av_valid: @av has been set
 * @av: the primary path
 * @mtu: path MTU in bytes
 * @dst_cache: the route to @av's destination
 * @req: requester state
 * @resp: responder state
 */
struct srnic_qp {
	struct ib_qp ibqp;
	struct mutex state_lock;	/* see above */
	enum ib_qp_state state;
	bool is_user;
	bool dead;
	const struct srnic_xport_ops *xport;
	struct srnic_gate_qp gq;
	int tx_cpu;
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
	u32 mtu;
	struct dst_cache dst_cache;

	struct srnic_req req;
	struct srnic_resp resp;
};

static inline struct srnic_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct srnic_qp, ibqp);
}

/* UD and GSI QPs: datagrams, each WQE with its own destination. */
static inline bool srnic_qp_is_ud(const struct srnic_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/**
 * struct srnic_skb_cb - a datagram's destination, carried by the packet
 * @sgid: source GID
 * @dgid: destination GID
 * @flow_label: IPv6 flow label
 * @sport: UDP source port
 * @tclass: traffic class
 * @hop_limit: TTL / hop limit
 * @ud: the fields above are set (else the packet follows its QP's path)
 * @v6: IPv6 GIDs (else IPv4)
 *
 * A copy, not a pointer into the window: the window entry of a UD WQE
 * completed at build time may be reused before the packet leaves. Lives
 * in skb->cb until srnic_xmit() reads it; the IP layer owns cb from there.
 */
struct srnic_skb_cb {
	u8 sgid[16];
	u8 dgid[16];
	u32 flow_label;
	u16 sport;
	u8 tclass;
	u8 hop_limit;
	u8 ud;
	u8 v6;
};

static inline struct srnic_skb_cb *srnic_skb_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct srnic_skb_cb) > sizeof(skb->cb));
	return (struct srnic_skb_cb *)skb->cb;
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
void srnic_gid_init(struct srnic_dev *sdev);
void srnic_gid_cleanup(struct srnic_dev *sdev);
int srnic_add_gid(const struct ib_gid_attr *attr, void **context);
int srnic_del_gid(const struct ib_gid_attr *attr, void **context);
bool srnic_gid_local(struct srnic_dev *sdev, const union ib_gid *gid);
struct srnic_dev *srnic_gid_owner(struct srnic_dev *sdev,
				  const union ib_gid *gid);
#if IS_ENABLED(CONFIG_KUNIT)
struct srnic_net *srnic_net_kunit_new(void);
int srnic_net_kunit_add(struct srnic_net *sn, unsigned long index,
			struct srnic_dev *sdev);
void srnic_net_kunit_free(struct srnic_net *sn);
#endif

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
u32 srnic_port_mtu(struct srnic_dev *sdev);
int srnic_ah_av(struct srnic_dev *sdev, struct ib_pd *pd, u32 ah_num,
		struct srnic_av *av);

/* srnic_cq.c */
int srnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct srnic_cq_uarg *uattrs);
int srnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int srnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int srnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int srnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/* srnic_qp.c: QPs and their state machine, the error transition too */
void srnic_qp_error(struct srnic_qp *qp);
void srnic_qp_fail(struct srnic_qp *qp, enum ib_event_type ev);
void srnic_qp_event(struct srnic_qp *qp, enum ib_event_type type);
int srnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int srnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int srnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int srnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int srnic_check_qp_attr(const struct ib_device_attr *dattr,
			enum ib_qp_type type, enum ib_qp_state cur,
			const struct ib_qp_attr *attr, int mask);

/* srnic_srq.c */
int srnic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int srnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int srnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int srnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);

static inline bool srnic_op_is_rd_atomic(u32 wr_opcode)
{
	return wr_opcode == IB_WR_RDMA_READ ||
	       wr_opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* srnic_frag.c: packet buffers from recycled pages */
int srnic_frag_init(void);
void srnic_frag_exit(void);
void *srnic_frag_alloc(unsigned int size);
unsigned long srnic_frag_fills(void);

/* srnic_net.c: the wire */
struct sk_buff *srnic_skb_alloc(u32 len);
void srnic_skb_consume(struct sk_buff *skb);
struct sk_buff *srnic_pkt_skb(struct srnic_pkt *pkt, u32 paylen, u8 **data);
u8 *srnic_build_send(struct srnic_qp *qp, struct sk_buff_head *out,
		     struct srnic_pkt *pkt, u32 paylen);
int srnic_xmit(struct srnic_qp *qp, struct sk_buff *skb);

/* srnic_rx.c: validated receive */
void srnic_rx(struct srnic_dev *sdev, struct sk_buff *skb, bool local);

/* srnic_doorbell.c: the doorbell and the prefetch stage */
/*
 * The largest message an idle QP's doorbell sends itself, by default
 * (each device's doorbell_run_max, in sysfs): one page, a packet at path
 * MTU 4096. The round trip of a larger one (packets built here, then
 * received, placed and acknowledged in this CPU's softirq when bottom
 * halves come back on) would hold the poster for as long as the transfer
 * takes: a process posting a thousand 64 KiB messages before it polls
 * would post them one transfer at a time.
 */
#define SRNIC_DOORBELL_RUN_MAX	4096

int srnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int srnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int srnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
int srnic_wq_post_recv(struct srnic_wq *wq, const struct ib_recv_wr *wr);
int srnic_tx_module_init(void);
void srnic_tx_module_exit(void);
void srnic_doorbell_init(struct srnic_qp *qp);
void srnic_req_doorbell(struct srnic_qp *qp);
int srnic_req_fetch(struct srnic_qp *qp);
bool srnic_req_ring_check(struct srnic_qp *qp);
bool srnic_pf_pending(struct srnic_qp *qp);

/* srnic_gate.c: the transmit gate */
int srnic_dp_dev_init(struct srnic_dev *sdev);
void srnic_dp_dev_cleanup(struct srnic_dev *sdev);
int srnic_set_gate_policy(struct srnic_dev *sdev,
			  enum srnic_gate_policy policy);
u64 srnic_gate_rounds(struct srnic_dev *sdev);
int srnic_req_pick_cpu(void);
void srnic_req_kick(struct srnic_qp *qp);
void srnic_req_kick_later(struct srnic_qp *qp);
bool srnic_gate_serve_now(struct srnic_qp *qp);
void srnic_qp_quiesce(struct srnic_qp *qp);

/* srnic_req.c: the requester, its window and retransmission */
int srnic_req_init(struct srnic_qp *qp);
void srnic_req_cleanup(struct srnic_qp *qp);
void srnic_req_start(struct srnic_qp *qp);
void srnic_req_reset(struct srnic_qp *qp);
bool srnic_req_has_work(struct srnic_qp *qp);
int srnic_req_next(struct srnic_qp *qp, struct sk_buff_head *out);
struct srnic_swqe *srnic_req_swqe(struct srnic_qp *qp, u32 index);

/* srnic_comp.c: the completer and flushing */
void srnic_comp_rx(struct srnic_qp *qp, struct srnic_pkt *pkt,
		   const u8 *payload);
void srnic_req_complete(struct srnic_qp *qp);
void srnic_flush_sq(struct srnic_qp *qp);
void srnic_flush_rq(struct srnic_qp *qp);
void srnic_req_fail(struct srnic_qp *qp, u32 index, enum ib_wc_status st);
u32 srnic_req_discard(struct srnic_qp *qp);

/* srnic_resp_uc_ud.c: the UC and UD responders */
void srnic_resp_uc_rx(struct srnic_qp *qp, struct srnic_pkt *pkt,
		      const u8 *payload);
bool srnic_resp_ud_rx(struct srnic_qp *qp, struct srnic_pkt *pkt,
		      const u8 *payload, struct sk_buff *skb);

/* srnic_resp.c: the RC responder (shared with UC and UD: srnic_resp.h) */
void srnic_resp_rx(struct srnic_qp *qp, struct srnic_pkt *pkt,
		   const u8 *payload);
void srnic_resp_init(struct srnic_qp *qp);
void srnic_resp_reset(struct srnic_qp *qp);
int srnic_resp_size_ares(struct srnic_qp *qp, u32 n);
void srnic_resp_drop_state(struct srnic_qp *qp);
int srnic_rwqe_take(struct srnic_qp *qp, struct srnic_rwqe *rw);

/* srnic_resp_tx.c: the RC responder's responses, in PSN order */
int srnic_resp_tx(struct srnic_qp *qp, struct sk_buff_head *out, int budget);
void srnic_resp_tx_done(struct srnic_qp *qp);

/* srnic_hooks.c: test builds only (CONFIG_SRNIC_TEST_HOOKS) */
#if IS_ENABLED(CONFIG_SRNIC_TEST_HOOKS)
bool srnic_hook_late_place(struct srnic_mr *mr, u64 va, const u8 *data,
			   u32 len);
#else
static inline bool srnic_hook_late_place(struct srnic_mr *mr, u64 va,
					 const u8 *data, u32 len)
{
	return false;
}
#endif

/* srnic_stats.c */
extern const struct attribute_group srnic_attr_group;
struct rdma_hw_stats *srnic_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int srnic_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
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
