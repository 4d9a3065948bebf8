// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: transport header build and parse (srnic_pkt.c): the round trip
 * for every opcode and payload size, the exact wire bytes of known
 * packets, and every kind of malformed packet refused.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "srnic_pkt.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* Expected header lengths (BTH + extended headers), from IBA 9.2-9.4. */
static const struct {
	u8 opcode;
	u8 len;
} srnic_expected_len[] = {
	{ 0x00, 12 }, { 0x01, 12 }, { 0x02, 12 }, { 0x03, 16 }, { 0x04, 12 },
	{ 0x05, 16 }, { 0x06, 28 }, { 0x07, 12 }, { 0x08, 12 }, { 0x09, 16 },
	{ 0x0a, 28 }, { 0x0b, 32 }, { 0x0c, 28 }, { 0x0d, 16 }, { 0x0e, 12 },
	{ 0x0f, 16 }, { 0x10, 16 }, { 0x11, 16 }, { 0x12, 24 }, { 0x13, 40 },
	{ 0x14, 40 }, { 0x16, 16 }, { 0x17, 16 }, { 0x1c, 32 }, { 0x1d, 28 },
	{ 0x20, 12 }, { 0x21, 12 }, { 0x22, 12 }, { 0x23, 16 }, { 0x24, 12 },
	{ 0x25, 16 }, { 0x26, 28 }, { 0x27, 12 }, { 0x28, 12 }, { 0x29, 16 },
	{ 0x2a, 28 }, { 0x2b, 32 },
	{ 0x64, 20 }, { 0x65, 24 },
};

static void srnic_pkt_opcode_table(struct kunit *test)
{
	int i, known = 0, op;

	for (i = 0; i < ARRAY_SIZE(srnic_expected_len); i++) {
		const struct srnic_opinfo *info;

		info = srnic_opinfo(srnic_expected_len[i].opcode);
		KUNIT_ASSERT_NOT_NULL_MSG(test, info, "opcode %#x",
					  srnic_expected_len[i].opcode);
		KUNIT_EXPECT_EQ_MSG(test, info->hdr_len,
				    srnic_expected_len[i].len, "opcode %#x (%s)",
				    srnic_expected_len[i].opcode, info->name);
	}
	/* The length is the BTH plus the headers the opcode says it has. */
	for (op = 0; op < 256; op++) {
		const struct srnic_opinfo *info = srnic_opinfo(op);
		int len = 12;

		if (!info)
			continue;
		len += (info->hdrs & SRNIC_HDR_DETH) ? 8 : 0;
		len += (info->hdrs & SRNIC_HDR_RETH) ? 16 : 0;
		len += (info->hdrs & SRNIC_HDR_ATMETH) ? 28 : 0;
		len += (info->hdrs & SRNIC_HDR_AETH) ? 4 : 0;
		len += (info->hdrs & SRNIC_HDR_ATMACK) ? 8 : 0;
		len += (info->hdrs & SRNIC_HDR_IMMDT) ? 4 : 0;
		len += (info->hdrs & SRNIC_HDR_IETH) ? 4 : 0;
		len += (info->hdrs & SRNIC_HDR_FETH) ? 4 : 0;
		KUNIT_EXPECT_EQ_MSG(test, (int)info->hdr_len, len, "%s",
				    info->name);
	}
	/* Nothing else is known: no RD, XRC, CNP, resync, or UC reads. */
	for (op = 0; op < 256; op++)
		known += !!srnic_opinfo(op);
	KUNIT_EXPECT_EQ(test, known, (int)ARRAY_SIZE(srnic_expected_len));
}

static void srnic_pkt_fill(struct srnic_pkt *pkt, u8 opcode, u32 seed)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = opcode;
	pkt->se = seed & 1;
	pkt->mig = seed & 2;
	pkt->fecn = seed & 4;
	pkt->becn = seed & 8;
	pkt->ack_req = seed & 16;
	pkt->pkey = 0xffff - seed;
	pkt->qpn = (0x123456 + seed) & SRNIC_BTH_QPN_MASK;
	pkt->psn = (0xfffffe + seed) & SRNIC_PSN_MASK;
}

/* Set the extended header fields the opcode carries, to odd values. */
static void srnic_pkt_fill_ext(struct srnic_pkt *pkt, u32 seed)
{
	u8 h = srnic_opinfo(pkt->opcode)->hdrs;

	if (h & SRNIC_HDR_DETH) {
		pkt->qkey = 0x80010000 + seed;
		pkt->src_qpn = 0xabcdef - seed;
	}
	if (h & (SRNIC_HDR_RETH | SRNIC_HDR_ATMETH)) {
		pkt->va = 0x8877665544332211ULL + seed;
		pkt->rkey = 0xdeadbe00 + seed;
	}
	if (h & SRNIC_HDR_RETH)
		pkt->dma_len = 0x10000 + seed;
	if (h & SRNIC_HDR_ATMETH) {
		pkt->swap_add = 0x0102030405060708ULL * (seed + 1);
		pkt->compare = ~pkt->swap_add;
	}
	if (h & SRNIC_HDR_AETH) {
		pkt->syndrome = SRNIC_AETH_NAK | SRNIC_NAK_REM_ACCESS;
		pkt->msn = 0xfedcba - seed;
	}
	if (h & SRNIC_HDR_ATMACK)
		pkt->orig = 0xfeedfacecafebeefULL ^ seed;
	if (h & SRNIC_HDR_IMMDT)
		pkt->imm = cpu_to_be32(0xc0ffee00 + seed);
	if (h & SRNIC_HDR_IETH)
		pkt->inv_rkey = 0x5a5a0000 + seed;
	if (h & SRNIC_HDR_FETH) {
		pkt->flush_type = 1 + seed % 2;
		pkt->flush_level = seed % 2;
	}
}

static void srnic_pkt_expect_same(struct kunit *test,
				  const struct srnic_pkt *a,
				  const struct srnic_pkt *b)
{
	KUNIT_EXPECT_EQ(test, a->opcode, b->opcode);
	KUNIT_EXPECT_EQ(test, a->se, b->se);
	KUNIT_EXPECT_EQ(test, a->mig, b->mig);
	KUNIT_EXPECT_EQ(test, a->pad, b->pad);
	KUNIT_EXPECT_EQ(test, a->pkey, b->pkey);
	KUNIT_EXPECT_EQ(test, a->fecn, b->fecn);
	KUNIT_EXPECT_EQ(test, a->becn, b->becn);
	KUNIT_EXPECT_EQ(test, a->qpn, b->qpn);
	KUNIT_EXPECT_EQ(test, a->ack_req, b->ack_req);
	KUNIT_EXPECT_EQ(test, a->psn, b->psn);
	KUNIT_EXPECT_EQ(test, a->hdr_len, b->hdr_len);
	KUNIT_EXPECT_EQ(test, a->va, b->va);
	KUNIT_EXPECT_EQ(test, a->rkey, b->rkey);
	KUNIT_EXPECT_EQ(test, a->dma_len, b->dma_len);
	KUNIT_EXPECT_EQ(test, a->syndrome, b->syndrome);
	KUNIT_EXPECT_EQ(test, a->msn, b->msn);
	KUNIT_EXPECT_EQ(test, a->swap_add, b->swap_add);
	KUNIT_EXPECT_EQ(test, a->compare, b->compare);
	KUNIT_EXPECT_EQ(test, a->orig, b->orig);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(a->imm), be32_to_cpu(b->imm));
	KUNIT_EXPECT_EQ(test, a->inv_rkey, b->inv_rkey);
	KUNIT_EXPECT_EQ(test, a->qkey, b->qkey);
	KUNIT_EXPECT_EQ(test, a->src_qpn, b->src_qpn);
	KUNIT_EXPECT_EQ(test, a->flush_type, b->flush_type);
	KUNIT_EXPECT_EQ(test, a->flush_level, b->flush_level);
}

/* Every opcode, with every payload size class it allows. */
static void srnic_pkt_round_trip(struct kunit *test)
{
	static const u32 sizes[] = { 0, 1, 2, 3, 4, 5, 255, 1024, 4095, 4096 };
	u8 *buf = kunit_kzalloc(test, 64 + SRNIC_MAX_PAYLOAD + 8, GFP_KERNEL);
	int op, i, n = 0;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (op = 0; op < 256; op++) {
		const struct srnic_opinfo *info = srnic_opinfo(op);

		if (!info)
			continue;
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			struct srnic_pkt in, out;
			u32 pay = sizes[i], len;
			int hlen;

			if (pay && !(info->flags & SRNIC_OPF_PAYLOAD))
				break;
			srnic_pkt_fill(&in, op, op + i);
			srnic_pkt_fill_ext(&in, op * 16 + i);
			in.pad = (4 - (pay & 3)) & 3;
			hlen = srnic_pkt_build(&in, buf, 64);
			KUNIT_ASSERT_EQ_MSG(test, hlen, (int)info->hdr_len,
					    "%s", info->name);
			memset(buf + hlen, 0xa5, pay + in.pad + 4);
			len = hlen + pay + in.pad + SRNIC_ICRC_SIZE;
			KUNIT_ASSERT_EQ_MSG(test, srnic_pkt_parse(&out, buf, len),
					    SRNIC_PKT_OK, "%s payload %u",
					    info->name, pay);
			in.paylen = pay;
			KUNIT_EXPECT_EQ(test, out.paylen, pay);
			KUNIT_EXPECT_PTR_EQ(test, out.info, info);
			srnic_pkt_expect_same(test, &in, &out);
			n++;
		}
	}
	kunit_info(test, "%d opcode/payload combinations", n);
}

/* Known packets, byte for byte (fields from IBA 9.2). */
static void srnic_pkt_wire_bytes(struct kunit *test)
{
	static const u8 write_only[] = {
		0x0a, 0x80 | 0x20, 0xff, 0xff,	/* RC WRITE_ONLY, SE, pad 2 */
		0x00, 0x12, 0x34, 0x56,		/* QP 0x123456 */
		0x80, 0xab, 0xcd, 0xef,		/* AckReq, PSN 0xabcdef */
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,	/* VA */
		0xde, 0xad, 0xbe, 0xef,		/* R_Key */
		0x00, 0x00, 0x01, 0x02,		/* DMA length 258 */
	};
	static const u8 ud_send_imm[] = {
		0x65, 0x00, 0xff, 0xff,		/* UD SEND_ONLY_IMM */
		0x00, 0x00, 0x00, 0x01,		/* QP 1 */
		0x00, 0x00, 0x00, 0x07,		/* PSN 7 */
		0x80, 0x01, 0x00, 0x00,		/* Q_Key 0x80010000 */
		0x00, 0x00, 0x00, 0x2a,		/* source QP 42 */
		0x01, 0x02, 0x03, 0x04,		/* immediate */
	};
	static const u8 nak[] = {
		0x11, 0x00, 0xff, 0xff,		/* RC ACKNOWLEDGE */
		0x00, 0x00, 0x00, 0x11,
		0x00, 0x00, 0x00, 0x05,
		0x62, 0x00, 0x01, 0x00,		/* NAK remote access, MSN 256 */
	};
	struct srnic_pkt pkt;
	u8 buf[64];

	srnic_pkt_fill(&pkt, 0, 0);
	pkt.opcode = SRNIC_TRANSPORT_RC | SRNIC_OP_WRITE_ONLY;
	pkt.se = true;
	pkt.pad = 2;
	pkt.pkey = 0xffff;
	pkt.qpn = 0x123456;
	pkt.ack_req = true;
	pkt.psn = 0xabcdef;
	pkt.va = 0x1122334455667788ULL;
	pkt.rkey = 0xdeadbeef;
	pkt.dma_len = 258;
	KUNIT_ASSERT_EQ(test, srnic_pkt_build(&pkt, buf, sizeof(buf)),
			(int)sizeof(write_only));
	KUNIT_EXPECT_TRUE_MSG(test, !memcmp(buf, write_only, sizeof(write_only)),
			      "built %*ph", (int)sizeof(write_only), buf);

	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = SRNIC_TRANSPORT_UD | SRNIC_OP_SEND_ONLY_IMM;
	pkt.pkey = 0xffff;
	pkt.qpn = 1;
	pkt.psn = 7;
	pkt.qkey = 0x80010000;
	pkt.src_qpn = 42;
	pkt.imm = cpu_to_be32(0x01020304);
	KUNIT_ASSERT_EQ(test, srnic_pkt_build(&pkt, buf, sizeof(buf)),
			(int)sizeof(ud_send_imm));
	KUNIT_EXPECT_TRUE_MSG(test, !memcmp(buf, ud_send_imm, sizeof(ud_send_imm)),
			      "built %*ph", (int)sizeof(ud_send_imm), buf);

	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = SRNIC_OP_ACKNOWLEDGE;
	pkt.pkey = 0xffff;
	pkt.qpn = 0x11;
	pkt.psn = 5;
	pkt.syndrome = SRNIC_AETH_NAK | SRNIC_NAK_REM_ACCESS;
	pkt.msn = 256;
	KUNIT_ASSERT_EQ(test, srnic_pkt_build(&pkt, buf, sizeof(buf)),
			(int)sizeof(nak));
	KUNIT_EXPECT_TRUE_MSG(test, !memcmp(buf, nak, sizeof(nak)),
			      "built %*ph", (int)sizeof(nak), buf);

	/* Too little room, unknown opcode, bad pad: refused. */
	pkt.opcode = SRNIC_OP_COMPARE_SWAP;
	KUNIT_EXPECT_EQ(test, srnic_pkt_build(&pkt, buf, 39), -ENOSPC);
	pkt.opcode = 0x15;
	KUNIT_EXPECT_EQ(test, srnic_pkt_build(&pkt, buf, sizeof(buf)), -EINVAL);
	pkt.opcode = SRNIC_OP_SEND_ONLY;
	pkt.pad = 4;
	KUNIT_EXPECT_EQ(test, srnic_pkt_build(&pkt, buf, sizeof(buf)), -EINVAL);
}

/* Build a valid packet of @opcode with @pay payload bytes into @buf. */
static u32 srnic_pkt_make(struct kunit *test, u8 *buf, u8 opcode, u32 pay)
{
	struct srnic_pkt pkt;
	int hlen;

	srnic_pkt_fill(&pkt, opcode, 3);
	srnic_pkt_fill_ext(&pkt, 3);
	pkt.pad = (4 - (pay & 3)) & 3;
	hlen = srnic_pkt_build(&pkt, buf, 64);
	KUNIT_EXPECT_GT(test, hlen, 0);
	memset(buf + hlen, 0, pay + pkt.pad + SRNIC_ICRC_SIZE);
	return hlen + pay + pkt.pad + SRNIC_ICRC_SIZE;
}

static void srnic_pkt_malformed(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 64 + 2 * SRNIC_MAX_PAYLOAD, GFP_KERNEL);
	struct srnic_pkt pkt;
	static const u8 bad_ops[] = {
		0x15, 0x18, 0x19, 0x1a, 0x1b, 0x1e, 0x1f,	/* reserved RC */
		0x2c, 0x2d, 0x31, 0x33, 0x34, 0x36,	/* UC: no read/ack/atomic/inv */
		0x3c, 0x3d,				/* UC: no flush, atomic write */
		0x40, 0x44,				/* RD */
		0x60, 0x61, 0x62, 0x66, 0x6a, 0x6c,	/* UD: send only, nothing else */
		0x80, 0x81, 0xa0, 0xa4, 0xe0, 0xff,	/* CNP, XRC, reserved */
	};
	u32 len;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);

	/* Truncated: below BTH + ICRC, and below the extended headers. */
	len = srnic_pkt_make(test, buf, SRNIC_OP_SEND_ONLY, 0);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, 0), SRNIC_PKT_ERR_SHORT);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, 15), SRNIC_PKT_ERR_SHORT);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len), SRNIC_PKT_OK);
	len = srnic_pkt_make(test, buf, SRNIC_OP_WRITE_ONLY, 0);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len - 1),
			SRNIC_PKT_ERR_SHORT);
	len = srnic_pkt_make(test, buf, SRNIC_OP_COMPARE_SWAP, 0);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, 12 + 27 + 4),
			SRNIC_PKT_ERR_SHORT);

	/* Transport header version. */
	len = srnic_pkt_make(test, buf, SRNIC_OP_SEND_ONLY, 8);
	buf[1] |= 1;
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len), SRNIC_PKT_ERR_TVER);

	/* Opcodes unknown, or illegal for their transport. */
	for (i = 0; i < ARRAY_SIZE(bad_ops); i++) {
		len = srnic_pkt_make(test, buf, SRNIC_OP_SEND_ONLY, 0);
		buf[0] = bad_ops[i];
		KUNIT_EXPECT_EQ_MSG(test, srnic_pkt_parse(&pkt, buf, len + 64),
				    SRNIC_PKT_ERR_OPCODE, "opcode %#x",
				    bad_ops[i]);
	}

	/* Pad count larger than what follows the headers. */
	len = srnic_pkt_make(test, buf, SRNIC_OP_SEND_ONLY, 0);
	buf[1] = 3 << SRNIC_BTH_PAD_SHIFT;
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len), SRNIC_PKT_ERR_PAD);
	/* Pad on an opcode that carries no payload. */
	len = srnic_pkt_make(test, buf, SRNIC_OP_ACKNOWLEDGE, 0);
	buf[1] = 1 << SRNIC_BTH_PAD_SHIFT;
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len + 4),
			SRNIC_PKT_ERR_PAD);
	/* Payload on opcodes that carry none. */
	len = srnic_pkt_make(test, buf, SRNIC_OP_ACKNOWLEDGE, 0);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len + 4),
			SRNIC_PKT_ERR_LENGTH);
	len = srnic_pkt_make(test, buf, SRNIC_OP_READ_REQUEST, 0);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len + 8),
			SRNIC_PKT_ERR_LENGTH);
	len = srnic_pkt_make(test, buf, SRNIC_OP_COMPARE_SWAP, 0);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len + 4),
			SRNIC_PKT_ERR_LENGTH);
	/* Payload + pad not a multiple of 4 (pad/length mismatch). */
	len = srnic_pkt_make(test, buf, SRNIC_OP_SEND_ONLY, 5);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len), SRNIC_PKT_OK);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len + 1),
			SRNIC_PKT_ERR_LENGTH);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len - 1),
			SRNIC_PKT_ERR_LENGTH);
	/* Oversized payload: more than the largest MTU. */
	len = srnic_pkt_make(test, buf, SRNIC_OP_WRITE_MIDDLE,
			     SRNIC_MAX_PAYLOAD);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len), SRNIC_PKT_OK);
	len = srnic_pkt_make(test, buf, SRNIC_OP_WRITE_MIDDLE,
			     SRNIC_MAX_PAYLOAD + 4);
	KUNIT_EXPECT_EQ(test, srnic_pkt_parse(&pkt, buf, len),
			SRNIC_PKT_ERR_LENGTH);
}

static struct kunit_case srnic_pkt_cases[] = {
	KUNIT_CASE(srnic_pkt_opcode_table),
	KUNIT_CASE(srnic_pkt_round_trip),
	KUNIT_CASE(srnic_pkt_wire_bytes),
	KUNIT_CASE(srnic_pkt_malformed),
	{}
};

static struct kunit_suite srnic_pkt_suite = {
	.name = "srnic_pkt",
	.test_cases = srnic_pkt_cases,
};

kunit_test_suite(srnic_pkt_suite);

MODULE_DESCRIPTION("KUnit tests for srnic packet build and parse");
MODULE_LICENSE("GPL");
