/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic_test: what the selftests' C programs share.
 *
 * Plain libibverbs on top of one device: opening it and picking its
 * RoCEv2 GID, QPs and their state transitions, buffers and MRs, posting
 * and polling with timeouts; TAP output; the TCP rendezvous of a client
 * and a server (parameters, QP numbers, PSNs, GIDs and MRs, barriers);
 * deterministic pseudo-random data and checksums.
 *
 * Every function works on what it is given: the library keeps no state of
 * its own, so one program may run any number of tests, or two ends in two
 * threads, without one seeing the other's. Diagnostics go to stdout as
 * TAP comments ("# ..."), one whole line at a time.
 */
#ifndef SRNIC_TEST_H
#define SRNIC_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include <infiniband/verbs.h>

/* Exit status of a test program (kselftest's). */
#define ST_EXIT_PASS	0
#define ST_EXIT_FAIL	1
#define ST_EXIT_SKIP	4

#define ST_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The compiler checks a format and its arguments as printf()'s, without
 * evaluating them: the printing macros below are checked like printf().
 */
#define ST_FMT_CHECK(...)	((void)sizeof(printf(__VA_ARGS__)))

/* --- time ---------------------------------------------------------------- */

double st_now_s(void);
long long st_now_ms(void);
void st_sleep_ms(unsigned int ms);

/* --- diagnostics and TAP ------------------------------------------------- */

void st_diag_line(const char *who, const char *fmt, ...);
void st_bail(const char *what);

/* st_diag(WHO, FMT, ...): st_diag_line(), its format checked. */
#define st_diag(who, ...)						\
	(ST_FMT_CHECK(__VA_ARGS__), st_diag_line(who, __VA_ARGS__))

/**
 * struct st_tap - one TAP stream: its counters.
 * @n: test points printed so far
 * @failed: of those, "not ok"
 * @skipped: of those, "ok ... # SKIP"
 * @planned: the plan line was printed first (st_tap_plan())
 *
 * Zero-initialise it; nothing else is needed.
 */
struct st_tap {
	int n, failed, skipped;
	bool planned;
};

void st_tap_plan(struct st_tap *t, int n);
bool st_tap_point(struct st_tap *t, bool ok, const char *skip,
		  const char *fmt, ...);
int st_tap_skip_all(struct st_tap *t, const char *reason);
void st_tap_totals(const struct st_tap *t);
int st_tap_end(struct st_tap *t);

/* st_tap_ok(T, OK, FMT, ...): "ok N DESC" or "not ok N DESC"; OK. */
#define st_tap_ok(t, ok, ...)						\
	(ST_FMT_CHECK(__VA_ARGS__), st_tap_point(t, ok, NULL, __VA_ARGS__))

/* st_tap_skip(T, REASON, FMT, ...): "ok N DESC # SKIP REASON". */
#define st_tap_skip(t, reason, ...)					\
	(ST_FMT_CHECK(__VA_ARGS__), st_tap_point(t, true, reason, __VA_ARGS__))

/* --- device and GID ------------------------------------------------------ */

/**
 * struct st_dev - an open device, port 1, and the GID it sends from.
 * @ctx: the verbs context
 * @attr: ibv_query_device()
 * @port_attr: ibv_query_port() of @port, at open
 * @port: the port (1)
 * @gid_index: the GID picked (st_gid_pick()), -1 before
 * @gid: its value
 * @mtu: the path MTU to use: the port's active MTU unless set otherwise
 */
struct st_dev {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr port_attr;
	__u8 port;
	int gid_index;
	union ibv_gid gid;
	enum ibv_mtu mtu;
};

/* st_gid_pick() flags */
#define ST_GID_V4	0x1	/* only an IPv4-mapped GID will do */

struct ibv_context *st_open_device(const char *name);
int st_dev_open(struct st_dev *d, const char *name);
void st_dev_close(struct st_dev *d);
int st_gid_pick(struct st_dev *d, int index, unsigned int flags);
int st_gid_find(struct st_dev *d, const char *addr);
const char *st_gid_str(const union ibv_gid *gid, char *buf, size_t len);
enum ibv_mtu st_mtu_enum(int bytes);
__u64 st_hw_counter(const char *dev, int port, const char *name);

/* --- QPs ----------------------------------------------------------------- */

/**
 * struct st_path - what RTR and RTS of a connected QP need.
 * @dgid: the peer's GID
 * @sgid_index: the local GID's index
 * @port: the local port
 * @mtu: the path MTU
 * @dest_qpn: the peer's QP number
 * @rq_psn: the first PSN expected from the peer (the peer's send PSN)
 * @sq_psn: the first PSN sent
 * @max_dest_rd_atomic: RC: Reads/atomics the peer may have outstanding here
 * @min_rnr_timer: RC: the RNR NAK timer code this side sends
 * @max_rd_atomic: RC: Reads/atomics this side may have outstanding
 * @timeout: RC: local ACK timeout exponent
 * @retry_cnt: RC: transport retries
 * @rnr_retry: RC: RNR retries (7: forever)
 */
struct st_path {
	union ibv_gid dgid;
	__u8 sgid_index, port;
	enum ibv_mtu mtu;
	__u32 dest_qpn, rq_psn, sq_psn;
	__u8 max_dest_rd_atomic, min_rnr_timer;
	__u8 max_rd_atomic, timeout, retry_cnt, rnr_retry;
};

struct ibv_qp *st_qp_create(struct ibv_pd *pd, struct ibv_cq *scq,
			    struct ibv_cq *rcq, enum ibv_qp_type type,
			    const struct ibv_qp_cap *cap);
int st_qp_init(struct ibv_qp *qp, __u8 port, unsigned int access);
int st_qp_rtr(struct ibv_qp *qp, const struct st_path *p);
int st_qp_rts(struct ibv_qp *qp, const struct st_path *p);
int st_qp_ud_ready(struct ibv_qp *qp, __u8 port, __u32 qkey, __u32 sq_psn);
int st_qp_state(struct ibv_qp *qp);
const char *st_qp_state_str(int state);

/* --- memory -------------------------------------------------------------- */

void *st_buf_alloc(size_t len, int fill);
struct ibv_mr *st_mr_reg(struct ibv_pd *pd, void *buf, size_t len,
			 int access, const char *who);

/* --- work requests and completions --------------------------------------- */

void st_wr_init(struct ibv_send_wr *wr, struct ibv_sge *sge,
		enum ibv_wr_opcode op, __u64 wr_id, void *buf, __u32 len,
		__u32 lkey, __u64 raddr, __u32 rkey, unsigned int flags);
int st_post_recv(struct ibv_qp *qp, __u64 wr_id, void *buf, __u32 len,
		 __u32 lkey);
int st_post_send(struct ibv_qp *qp, enum ibv_wr_opcode op, __u64 wr_id,
		 void *buf, __u32 len, __u32 lkey, __u64 raddr, __u32 rkey,
		 __u32 imm, unsigned int flags);
int st_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms);
int st_post_wait(struct ibv_qp *qp, struct ibv_cq *cq,
		 struct ibv_send_wr *wr, int ms);
const char *st_wc_str(int status);

/* --- pseudo-random data and checksums ------------------------------------ */

__u64 st_rnd_next(__u64 *state);
__u64 st_rnd_seed(__u64 a, __u64 b);
void st_rnd_fill(void *buf, size_t len, __u64 seed);
__u64 st_hash(__u64 h, const void *buf, size_t len);
void st_pattern_fill(void *buf, size_t len, __u32 seed);
bool st_pattern_check(const void *buf, size_t len, __u32 seed);

/* --- the rings of the rxe ABI ------------------------------------------- */

struct rxe_queue_buf;

/**
 * struct st_range - one mapping of the process.
 * @start: its first address
 * @end: one past its last
 */
struct st_range {
	uintptr_t start, end;
};

int st_uverbs_maps(struct st_range *out, int max);
bool st_ring_plausible(const struct rxe_queue_buf *q, size_t len);
void *st_ring_slot(struct rxe_queue_buf *q, __u32 idx);
int st_send_doorbell(struct ibv_qp *qp);
int st_doorbell_handle(int cmd_fd, __u32 qp_handle);
int st_modify_state_handle(int cmd_fd, __u32 qp_handle, int state);

/* --- the client/server rendezvous ---------------------------------------- */

#define ST_MAX_MRS	4
#define ST_CHAN_WAIT_MS	120000	/* how long a peer may stay silent */

/**
 * struct st_chan - the control channel to the peer (a TCP connection or
 * one end of a socketpair).
 * @fd: the socket, -1 when there is none
 * @who: the name diagnostics carry ("client", "server"), or NULL
 * @wait_ms: how long a read waits for the peer; 0: ST_CHAN_WAIT_MS
 */
struct st_chan {
	int fd;
	const char *who;
	int wait_ms;
};

/**
 * struct st_mr_desc - a remote MR as the peer announced it.
 * @addr: its address in the peer
 * @rkey: its remote key
 * @len: its length
 */
struct st_mr_desc {
	__u64 addr;
	__u32 rkey;
	__u32 len;
};

/**
 * struct st_peer - what one end of a connection tells the other.
 * @qpn: its QP number
 * @psn: its first send PSN
 * @gid: its GID
 * @nmr: entries of @mr in use
 * @mr: MRs the peer may reach
 */
struct st_peer {
	__u32 qpn, psn;
	union ibv_gid gid;
	__u32 nmr;
	struct st_mr_desc mr[ST_MAX_MRS];
};

int st_tcp_listen_accept(const char *port);
int st_tcp_connect(const char *host, const char *port, int wait_s);
void st_chan_close(struct st_chan *ch);
int st_chan_write(struct st_chan *ch, const void *buf, size_t len);
int st_chan_read(struct st_chan *ch, void *buf, size_t len);
int st_chan_send_u64s(struct st_chan *ch, const __u64 *v, int n);
int st_chan_recv_u64s(struct st_chan *ch, __u64 *v, int n);
int st_chan_send_u64(struct st_chan *ch, __u64 v);
int st_chan_recv_u64(struct st_chan *ch, __u64 *v);
int st_chan_sync(struct st_chan *ch);
int st_chan_swap(struct st_chan *ch, const __u64 *mine, __u64 *theirs, int n);
void st_peer_add_mr(struct st_peer *pi, const struct ibv_mr *mr);
int st_chan_exchange(struct st_chan *ch, const struct st_peer *mine,
		     struct st_peer *theirs);

#endif /* SRNIC_TEST_H */
