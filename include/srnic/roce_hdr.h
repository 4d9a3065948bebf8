/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * RoCEv2 wire formats: the InfiniBand transport headers carried in UDP
 * (destination port 4791), as the IBA specification (volume 1, chapter 9)
 * and its RoCEv2 annex (A17) define them.
 *
 * Every multi-byte field is big-endian and typed __be16/__be32/__be64, so
 * sparse checks every conversion; sub-byte fields are reached through the
 * masks below, never through bitfields. Shared by the module, its KUnit
 * suites and the selftests.
 */
#ifndef SRNIC_ROCE_HDR_H
#define SRNIC_ROCE_HDR_H

#include <linux/types.h>

#define SRNIC_ROCE_V2_PORT	4791

/* Base Transport Header, 12 bytes, in every packet. */
struct srnic_bth {
	__u8	opcode;
	__u8	flags;		/* SE | M | PadCnt | TVer */
	__be16	pkey;
	__be32	qpn;		/* F | B | resv6 | DestQP */
	__be32	apsn;		/* AckReq | resv7 | PSN */
};

#define SRNIC_BTH_SE		0x80	/* solicited event */
#define SRNIC_BTH_MIG		0x40	/* migration state */
#define SRNIC_BTH_PAD_MASK	0x30
#define SRNIC_BTH_PAD_SHIFT	4
#define SRNIC_BTH_TVER_MASK	0x0f
#define SRNIC_BTH_QPN_MASK	0x00ffffff
#define SRNIC_BTH_FECN		0x80000000	/* in qpn */
#define SRNIC_BTH_BECN		0x40000000	/* in qpn */
#define SRNIC_BTH_RESV8A_MASK	0xff000000	/* qpn bits masked by the ICRC */
#define SRNIC_BTH_ACK_REQ	0x80000000	/* in apsn */
#define SRNIC_BTH_PSN_MASK	0x00ffffff

/* RDMA Extended Transport Header (Write first/only, Read request). */
struct srnic_reth {
	__be64	va;
	__be32	rkey;
	__be32	len;
};

/* ACK Extended Transport Header (ACK, Read response first/last/only). */
struct srnic_aeth {
	__be32	smsn;		/* Syndrome | MSN */
};

#define SRNIC_AETH_SYN_SHIFT	24
#define SRNIC_AETH_MSN_MASK	0x00ffffff
/* Syndrome: top 3 bits the type, low 5 bits credits/timer/NAK code. */
#define SRNIC_AETH_TYPE_MASK	0xe0
#define SRNIC_AETH_ACK		0x00
#define SRNIC_AETH_RNR_NAK	0x20
#define SRNIC_AETH_NAK		0x60
#define SRNIC_AETH_VALUE_MASK	0x1f
#define SRNIC_NAK_PSN_SEQ_ERR	0x00
#define SRNIC_NAK_INVALID_REQ	0x01
#define SRNIC_NAK_REM_ACCESS	0x02
#define SRNIC_NAK_REM_OP_ERR	0x03
#define SRNIC_NAK_INVALID_RD_REQ 0x04
#define SRNIC_AETH_NO_CREDIT	0x1f	/* invalid credit count */

/* Atomic Extended Transport Header (CmpSwap, FetchAdd), 28 bytes. */
struct srnic_atmeth {
	__be64	va;
	__be32	rkey;
	__be64	swap_add;
	__be64	compare;
} __packed;

/* Atomic ACK Extended Transport Header. */
struct srnic_atmack {
	__be64	orig;
} __packed;

/* Immediate data, Invalidate ETH. */
struct srnic_immdt {
	__be32	imm;
};

struct srnic_ieth {
	__be32	rkey;
};

/*
 * FLUSH Extended Transport Header (IBA 1.5 memory placement extensions):
 * the placement type (1 global visibility, 2 persistence) in bits 3:0,
 * the selectivity level (0 the RETH's range, 1 the whole region) in bits
 * 5:4. It precedes the RETH.
 */
struct srnic_feth {
	__be32	bits;
};

#define SRNIC_FETH_PLT_MASK	0x0000000f
#define SRNIC_FETH_SEL_MASK	0x00000030
#define SRNIC_FETH_SEL_SHIFT	4

/* Datagram Extended Transport Header (UD). */
struct srnic_deth {
	__be32	qkey;
	__be32	sqp;		/* resv8 | SrcQP */
};

#define SRNIC_ICRC_SIZE		4

/*
 * Opcodes: the top three bits select the transport, the low five the
 * operation.
 */
#define SRNIC_TRANSPORT_MASK	0xe0
#define SRNIC_TRANSPORT_RC	0x00
#define SRNIC_TRANSPORT_UC	0x20
#define SRNIC_TRANSPORT_RD	0x40
#define SRNIC_TRANSPORT_UD	0x60
#define SRNIC_TRANSPORT_CNP	0x80
#define SRNIC_TRANSPORT_XRC	0xa0
#define SRNIC_OP_MASK		0x1f

enum srnic_op {
	SRNIC_OP_SEND_FIRST			= 0x00,
	SRNIC_OP_SEND_MIDDLE			= 0x01,
	SRNIC_OP_SEND_LAST			= 0x02,
	SRNIC_OP_SEND_LAST_IMM			= 0x03,
	SRNIC_OP_SEND_ONLY			= 0x04,
	SRNIC_OP_SEND_ONLY_IMM			= 0x05,
	SRNIC_OP_WRITE_FIRST			= 0x06,
	SRNIC_OP_WRITE_MIDDLE			= 0x07,
	SRNIC_OP_WRITE_LAST			= 0x08,
	SRNIC_OP_WRITE_LAST_IMM			= 0x09,
	SRNIC_OP_WRITE_ONLY			= 0x0a,
	SRNIC_OP_WRITE_ONLY_IMM			= 0x0b,
	SRNIC_OP_READ_REQUEST			= 0x0c,
	SRNIC_OP_READ_RESPONSE_FIRST		= 0x0d,
	SRNIC_OP_READ_RESPONSE_MIDDLE		= 0x0e,
	SRNIC_OP_READ_RESPONSE_LAST		= 0x0f,
	SRNIC_OP_READ_RESPONSE_ONLY		= 0x10,
	SRNIC_OP_ACKNOWLEDGE			= 0x11,
	SRNIC_OP_ATOMIC_ACKNOWLEDGE		= 0x12,
	SRNIC_OP_COMPARE_SWAP			= 0x13,
	SRNIC_OP_FETCH_ADD			= 0x14,
	SRNIC_OP_SEND_LAST_INV			= 0x16,
	SRNIC_OP_SEND_ONLY_INV			= 0x17,
	SRNIC_OP_FLUSH				= 0x1c,	/* RC only */
	SRNIC_OP_ATOMIC_WRITE			= 0x1d,	/* RC only */
};

#endif /* SRNIC_ROCE_HDR_H */
