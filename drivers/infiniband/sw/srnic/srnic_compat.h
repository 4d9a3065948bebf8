/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic: the one place where kernel version differences live.
 *
 * The tree builds against Debian 12's 6.1 and bookworm-backports' 6.12.
 * Everything that differs between the two is wrapped here, so the rest of
 * the driver is written against one API.
 */
#ifndef SRNIC_COMPAT_H
#define SRNIC_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/*
 * v6.10 changed .create_cq to take the uverbs attribute bundle instead of
 * the driver udata ("RDMA: Pass uverbs_attr_bundle as part of '.create_cq'
 * API"). The driver udata is the bundle's driver_udata; kernel callers
 * pass a NULL bundle.
 */
#if KERNEL_VERSION(6, 10, 0) <= LINUX_VERSION_CODE
#define srnic_cq_uarg uverbs_attr_bundle

static inline struct ib_udata *srnic_cq_udata(struct srnic_cq_uarg *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define srnic_cq_uarg ib_udata

static inline struct ib_udata *srnic_cq_udata(struct srnic_cq_uarg *udata)
{
	return udata;
}
#endif

/* v6.12 moved the unaligned access helpers to <linux/unaligned.h>. */
#if KERNEL_VERSION(6, 12, 0) <= LINUX_VERSION_CODE
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * RDMA Atomic Write arrived in v6.2 ("RDMA: Extend RDMA kernel verbs ABI
 * to support atomic write"). The values are the user ABI's (the work
 * request opcode librxe writes into the ring, the completion opcode
 * libibverbs reads), so srnic uses them on 6.1 as well, where the stock
 * rdma-core provider already posts them.
 */
#define SRNIC_WR_ATOMIC_WRITE	15	/* IB_UVERBS_WR_ATOMIC_WRITE */
#define SRNIC_WC_ATOMIC_WRITE	9	/* IB_UVERBS_WC_ATOMIC_WRITE */
#if KERNEL_VERSION(6, 2, 0) <= LINUX_VERSION_CODE
static_assert(SRNIC_WR_ATOMIC_WRITE == IB_WR_ATOMIC_WRITE);
static_assert(SRNIC_WC_ATOMIC_WRITE == IB_WC_ATOMIC_WRITE);
#define SRNIC_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#else
#define SRNIC_DEVICE_ATOMIC_WRITE	0
#endif

/*
 * RDMA Flush arrived in v6.2 as well ("RDMA: Extend RDMA kernel verbs ABI
 * to support flush"), with the MR and QP access rights that allow it. On
 * 6.1 the core refuses those rights, so no MR could be flushed: srnic
 * offers Flush on 6.2 and later only. The placement type srnic offers is
 * global visibility; it has no persistent memory.
 */
#define SRNIC_WR_FLUSH		14	/* IB_UVERBS_WR_FLUSH */
#define SRNIC_WC_FLUSH		8	/* IB_UVERBS_WC_FLUSH */
#define SRNIC_FLUSH_GLOBAL	1	/* IB_FLUSH_GLOBAL */
#define SRNIC_FLUSH_PERSISTENT	2	/* IB_FLUSH_PERSISTENT */
#define SRNIC_FLUSH_RANGE	0	/* IB_FLUSH_RANGE */
#define SRNIC_FLUSH_MR		1	/* IB_FLUSH_MR */
#if KERNEL_VERSION(6, 2, 0) <= LINUX_VERSION_CODE
static_assert(SRNIC_WR_FLUSH == IB_WR_FLUSH);
static_assert(SRNIC_WC_FLUSH == IB_WC_FLUSH);
static_assert(SRNIC_FLUSH_GLOBAL == IB_FLUSH_GLOBAL);
static_assert(SRNIC_FLUSH_PERSISTENT == IB_FLUSH_PERSISTENT);
static_assert(SRNIC_FLUSH_RANGE == IB_FLUSH_RANGE);
static_assert(SRNIC_FLUSH_MR == IB_FLUSH_MR);
#define SRNIC_HAVE_FLUSH		1
#define SRNIC_DEVICE_FLUSH_GLOBAL	IB_DEVICE_FLUSH_GLOBAL
#define SRNIC_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#define SRNIC_ACCESS_FLUSH_PERSISTENT	IB_ACCESS_FLUSH_PERSISTENT
#else
#define SRNIC_HAVE_FLUSH		0
#define SRNIC_DEVICE_FLUSH_GLOBAL	0
#define SRNIC_ACCESS_FLUSH_GLOBAL	0
#define SRNIC_ACCESS_FLUSH_PERSISTENT	0
#endif

/*
 * The flush work request in a user ring: struct rxe_send_wr's wr.flush
 * since v6.2 (the 6.1 uAPI header lacks the member), over the same bytes
 * as wr.rdma.
 */
struct srnic_uflush {
	__aligned_u64 remote_addr;
	__u32 length;
	__u32 rkey;
	__u8 type;
	__u8 level;
};

#endif /* SRNIC_COMPAT_H */
