// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the RoCEv2 invariant CRC (IBA annex A17.3.3).
 *
 * The ICRC is the Ethernet CRC-32 of the packet from the IP header up to
 * the ICRC, preceded by 8 bytes of ones standing in for the InfiniBand
 * LRH, with every field a router may change replaced by ones: the IPv4
 * type of service, TTL and header checksum, the IPv6 traffic class, flow
 * label and hop limit, the UDP checksum, and the BTH's reserved byte after
 * the P_Key (FECN, BECN, resv6). It travels as the complement, least
 * significant byte first.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/module.h>
#include <kunit/visibility.h>

#include "srnic_pkt.h"

/* IPv4 with the largest options + UDP + BTH. */
#define SRNIC_ICRC_MASKED_MAX	(60 + sizeof(struct udphdr) + \
				 sizeof(struct srnic_bth))

/**
 * srnic_icrc() - compute a RoCEv2 packet's ICRC
 * @l3: the packet from its IPv4 or IPv6 header on, linear
 * @len: bytes from the IP header up to (not including) the ICRC
 *
 * Context: any.
 * Return: the ICRC, to be stored with put_unaligned_le32(); 0 if @len is
 * too short for the headers (a caller that validated lengths never sees
 * this).
 */
u32 srnic_icrc(const void *l3, u32 len)
{
	static const u8 lrh_ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	u8 masked[SRNIC_ICRC_MASKED_MAX];
	const u8 *p = l3;
	u32 iplen, hlen, crc;

	if (len < sizeof(struct iphdr))
		return 0;
	if ((p[0] >> 4) == 4) {
		iplen = (p[0] & 0x0f) * 4;
		if (iplen < sizeof(struct iphdr))
			return 0;
	} else {
		iplen = sizeof(struct ipv6hdr);
	}
	hlen = iplen + sizeof(struct udphdr) + sizeof(struct srnic_bth);
	if (len < hlen)
		return 0;

	memcpy(masked, p, hlen);
	if ((p[0] >> 4) == 4) {
		struct iphdr *ip4 = (struct iphdr *)masked;

		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->check = (__force __sum16)0xffff;
	} else {
		/* Version stays; traffic class and flow label go to ones. */
		masked[0] |= 0x0f;
		masked[1] = 0xff;
		masked[2] = 0xff;
		masked[3] = 0xff;
		((struct ipv6hdr *)masked)->hop_limit = 0xff;
	}
	((struct udphdr *)(masked + iplen))->check = (__force __sum16)0xffff;
	/* BTH byte 4: FECN, BECN and resv6. */
	masked[iplen + sizeof(struct udphdr) + 4] = 0xff;

	crc = crc32_le(~0U, lrh_ones, sizeof(lrh_ones));
	crc = crc32_le(crc, masked, hlen);
	crc = crc32_le(crc, p + hlen, len - hlen);
	return ~crc;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_icrc);
