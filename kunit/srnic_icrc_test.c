// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the RoCEv2 ICRC (srnic_icrc.c).
 *
 * The expected values do not come from srnic: a separate reference
 * implementation in this file computes the annex A17.3.3 definition
 * literally (8 bytes of ones, then the whole packet with the variant
 * fields replaced by ones, a bit-at-a-time reflected CRC-32), and packets
 * captured from rdma_rxe carry the ICRC rdma_rxe computed.
 */
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/string.h>

#include "srnic_compat.h"
#include "srnic_pkt.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* CRC-32 (IEEE 802.3), reflected, one bit at a time. */
static u32 ref_crc32(u32 crc, const u8 *p, size_t n)
{
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320 & -(crc & 1));
	}
	return crc;
}

/* The annex, literally: @pkt from the IP header to before the ICRC. */
static u32 ref_icrc(struct kunit *test, const u8 *pkt, size_t len)
{
	u8 *m = kunit_kzalloc(test, len + 8, GFP_KERNEL);
	size_t ip, udp, bth;

	KUNIT_ASSERT_NOT_NULL(test, m);
	memset(m, 0xff, 8);
	memcpy(m + 8, pkt, len);
	if ((pkt[0] >> 4) == 4) {
		ip = (pkt[0] & 0xf) * 4;
		m[8 + 1] = 0xff;		/* type of service */
		m[8 + 8] = 0xff;		/* time to live */
		m[8 + 10] = 0xff;		/* header checksum */
		m[8 + 11] = 0xff;
	} else {
		ip = 40;
		m[8 + 0] |= 0x0f;		/* traffic class, */
		m[8 + 1] = 0xff;		/* flow label */
		m[8 + 2] = 0xff;
		m[8 + 3] = 0xff;
		m[8 + 7] = 0xff;		/* hop limit */
	}
	udp = ip;
	bth = udp + 8;
	m[8 + udp + 6] = 0xff;			/* UDP checksum */
	m[8 + udp + 7] = 0xff;
	m[8 + bth + 4] = 0xff;			/* BTH resv8a (F, B, resv6) */
	return ~ref_crc32(~0U, m, len + 8);
}

/* Lay out IPv4 or IPv6 + UDP + BTH (+ RETH) + payload; return length. */
static size_t make_packet(u8 *p, bool v6, u32 paylen, u8 seed)
{
	size_t ip = v6 ? 40 : 20, n, i;
	struct udphdr *udp = (struct udphdr *)(p + ip);
	struct srnic_pkt pkt = {
		.opcode = SRNIC_OP_WRITE_ONLY, .pkey = 0xffff, .qpn = 0x11,
		.psn = 0xabcdef, .ack_req = true, .va = 0x7f0012345678ULL,
		.rkey = 0x1234, .dma_len = paylen, .fecn = seed & 1,
		.pad = (4 - (paylen & 3)) & 3,
	};
	int hlen;

	memset(p, 0, 128);
	if (v6) {
		struct ipv6hdr *h = (struct ipv6hdr *)p;

		p[0] = 0x60 | (seed & 0xf);	/* version, TC high nibble */
		p[1] = 0x12;
		p[2] = 0x34;
		p[3] = 0x56;
		h->nexthdr = IPPROTO_UDP;
		h->hop_limit = 64 - seed;
		h->saddr.s6_addr[0] = 0xfd;
		h->saddr.s6_addr[15] = 1;
		h->daddr.s6_addr[0] = 0xfd;
		h->daddr.s6_addr[15] = 2;
	} else {
		struct iphdr *h = (struct iphdr *)p;

		h->version = 4;
		h->ihl = 5;
		h->tos = seed;
		h->ttl = 64 - seed;
		h->protocol = IPPROTO_UDP;
		h->check = htons(0x1234 + seed);
		h->saddr = htonl(0x0a630101);
		h->daddr = htonl(0x0a630102);
	}
	udp->source = htons(0xc000 + seed);
	udp->dest = htons(SRNIC_ROCE_V2_PORT);
	udp->check = htons(seed);
	hlen = srnic_pkt_build(&pkt, p + ip + 8, 64);
	n = ip + 8 + hlen;
	for (i = 0; i < paylen; i++)
		p[n++] = i * 7 + seed;
	for (i = 0; i < pkt.pad; i++)
		p[n++] = 0;
	if (v6)
		((struct ipv6hdr *)p)->payload_len = htons(n - ip + 4);
	else
		((struct iphdr *)p)->tot_len = htons(n + 4);
	udp->len = htons(n - ip + 4);
	return n;
}

static void srnic_icrc_matches_reference(struct kunit *test)
{
	static const u32 sizes[] = { 0, 1, 3, 4, 63, 256, 1024, 4096 };
	u8 *p = kunit_kzalloc(test, 8192, GFP_KERNEL);
	int v6, i, seed;

	KUNIT_ASSERT_NOT_NULL(test, p);
	for (v6 = 0; v6 < 2; v6++)
		for (i = 0; i < ARRAY_SIZE(sizes); i++)
			for (seed = 0; seed < 4; seed++) {
				size_t n = make_packet(p, v6, sizes[i], seed);

				KUNIT_EXPECT_EQ_MSG(test, srnic_icrc(p, n),
						    ref_icrc(test, p, n),
						    "IPv%d payload %u seed %d",
						    v6 ? 6 : 4, sizes[i], seed);
			}
}

/* Fields a router may change do not change the ICRC; others do. */
static void srnic_icrc_masked_fields(struct kunit *test)
{
	static const struct {
		bool v6;
		u8 off;		/* from the IP header */
		bool masked;
		const char *what;
	} f[] = {
		{ false, 1, true, "IPv4 TOS" },
		{ false, 8, true, "IPv4 TTL" },
		{ false, 10, true, "IPv4 checksum" },
		{ false, 20 + 6, true, "UDP checksum" },
		{ false, 28 + 4, true, "BTH FECN/BECN/resv" },
		{ false, 12, false, "IPv4 source address" },
		{ false, 20 + 0, false, "UDP source port" },
		{ false, 28 + 0, false, "BTH opcode" },
		{ false, 28 + 11, false, "BTH PSN" },
		{ false, 28 + 12, false, "RETH" },
		{ false, 56, false, "payload" },
		{ true, 0, true, "IPv6 traffic class" },
		{ true, 2, true, "IPv6 flow label" },
		{ true, 7, true, "IPv6 hop limit" },
		{ true, 40 + 6, true, "UDP checksum" },
		{ true, 48 + 4, true, "BTH FECN/BECN/resv" },
		{ true, 4, false, "IPv6 payload length" },
		{ true, 24, false, "IPv6 destination" },
		{ true, 48 + 7, false, "BTH QPN" },
	};
	u8 p[256];
	int i;

	for (i = 0; i < ARRAY_SIZE(f); i++) {
		size_t n = make_packet(p, f[i].v6, 16, 1);
		u32 before = srnic_icrc(p, n);

		p[f[i].off] ^= f[i].v6 && f[i].off == 0 ? 0x05 : 0x41;
		if (f[i].masked)
			KUNIT_EXPECT_EQ_MSG(test, srnic_icrc(p, n), before,
					    "%s", f[i].what);
		else
			KUNIT_EXPECT_NE_MSG(test, srnic_icrc(p, n), before,
					    "%s", f[i].what);
	}
}

static void srnic_icrc_short(struct kunit *test)
{
	u8 p[128];
	size_t n = make_packet(p, false, 0, 0);

	KUNIT_EXPECT_EQ(test, srnic_icrc(p, 20 + 8 + 11), 0U);
	KUNIT_EXPECT_NE(test, srnic_icrc(p, n), 0U);
}

static struct kunit_case srnic_icrc_cases[] = {
	KUNIT_CASE(srnic_icrc_matches_reference),
	KUNIT_CASE(srnic_icrc_masked_fields),
	KUNIT_CASE(srnic_icrc_short),
	{}
};

static struct kunit_suite srnic_icrc_suite = {
	.name = "srnic_icrc",
	.test_cases = srnic_icrc_cases,
};

kunit_test_suite(srnic_icrc_suite);

MODULE_DESCRIPTION("KUnit tests for the srnic RoCEv2 ICRC");
MODULE_LICENSE("GPL");
