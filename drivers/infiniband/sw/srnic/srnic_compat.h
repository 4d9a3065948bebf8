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

#endif /* SRNIC_COMPAT_H */
