/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * srnic device limits: what ibv_query_device() reports and what the verbs
 * enforce. One table, shared by the module and its tests, so a test can
 * probe exactly the advertised edge (limit accepted, limit + 1 refused).
 */
#ifndef SRNIC_LIMITS_H
#define SRNIC_LIMITS_H

#define SRNIC_VENDOR_ID			0xFFFFFF
#define SRNIC_MAX_UCONTEXT		512
#define SRNIC_MAX_PD			0x10000
#define SRNIC_MAX_AH			0x4000
#define SRNIC_MAX_CQ			0x4000
/*
 * libfabric's rxm (over verbs) opens one CQ of (128 + 128) x 1024 =
 * 262144 entries per endpoint by default (its MSG rx/tx sizes times
 * FI_UNIVERSE_SIZE) and does not look at max_cqe.
 */
#define SRNIC_MAX_CQE			((1 << 19) - 1)
#define SRNIC_MAX_QP			0x4000
#define SRNIC_MAX_QP_WR			0x4000
#define SRNIC_MAX_SGE			32
#define SRNIC_MAX_INLINE		(SRNIC_MAX_SGE * 16)
#define SRNIC_MAX_SRQ			0x1000
#define SRNIC_MAX_SRQ_WR		0x4000
#define SRNIC_MAX_SRQ_SGE		SRNIC_MAX_SGE
#define SRNIC_MAX_MR			0x10000
#define SRNIC_MAX_MR_SIZE		0x10000000000ULL	/* 1 TiB */
#define SRNIC_MAX_FR_PAGES		512	/* pages per fast registration */
#define SRNIC_MAX_QP_RD_ATOM		128
#define SRNIC_MAX_QP_INIT_RD_ATOM	128
#define SRNIC_MAX_RES_RD_ATOM		(SRNIC_MAX_QP * SRNIC_MAX_QP_RD_ATOM)
#define SRNIC_MAX_PKEYS			1
#define SRNIC_GID_TBL_LEN		1024
#define SRNIC_LOCAL_CA_ACK_DELAY	15

/* QPN 0 and 1 are the special QPs; ordinary QPs are numbered from here. */
#define SRNIC_MIN_QPN			16
#define SRNIC_MAX_QPN			((1 << 24) - 1)

#endif /* SRNIC_LIMITS_H */
