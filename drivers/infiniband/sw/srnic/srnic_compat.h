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

#endif /* SRNIC_COMPAT_H */
