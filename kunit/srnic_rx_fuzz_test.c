// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the receive path fuzzed. Mutated transport packets (every known
 * opcode and random ones, truncated at every length, header fields at
 * their edges, random bits flipped, pad counts and payload lengths round
 * their limits) go through
 *
 *  - srnic_pkt_parse(), each one at the very end of its buffer so that
 *    KASAN sees any read past it, its verdict checked against an oracle
 *    written here from IBA 9.2-9.4 and its fields against the bytes;
 *  - srnic_rx(), the validated receive path, as whole IPv4 and IPv6
 *    RoCEv2 packets (a share with a correct ICRC) at two devices that are
 *    never registered: every packet must be counted where the oracle
 *    says (rcvd_pkts, rx_dropped, rcvd_malformed, rcvd_icrc_err,
 *    rcvd_dgid_err, rcvd_no_qp), on the device its destination names.
 *
 * SRNIC_FUZZ_PARSE + SRNIC_FUZZ_RX cases, 1.1 million, from a fixed seed
 * (printed): the same cases every run.
 */
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/prandom.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ipv6.h>

#include "srnic.h"
#include "srnic_pkt.h"

/* A parse error, for the test's messages (the driver only counts them). */
static const char *srnic_fuzz_err_name(enum srnic_pkt_err err)
{
	static const char * const names[SRNIC_PKT_ERR_NUM] = {
		[SRNIC_PKT_OK] = "ok",
		[SRNIC_PKT_ERR_SHORT] = "short",
		[SRNIC_PKT_ERR_TVER] = "bad transport version",
		[SRNIC_PKT_ERR_OPCODE] = "bad opcode",
		[SRNIC_PKT_ERR_PAD] = "bad pad count",
		[SRNIC_PKT_ERR_LENGTH] = "bad payload length",
	};

	return err < SRNIC_PKT_ERR_NUM ? names[err] : "?";
}

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define SRNIC_FUZZ_PARSE	1000000
#ifndef SRNIC_FUZZ_RX		/* kunit/Kbuild: SRNIC_KUNIT_FUZZ_RX */
#define SRNIC_FUZZ_RX		100000
#endif
#define SRNIC_FUZZ_SEED		0x5e1c0ffeeULL
/* The largest packet built: headers, a payload past the limit, pad. */
#define FUZZ_BUF		(40 + 4200 + 8)

/*
 * The oracle's opcode table, from IBA 9.2-9.4 (and 1.5 for Flush and
 * Atomic Write): the header length of each opcode srnic implements, and
 * whether it carries a payload. Any other opcode is refused.
 */
static const struct {
	u8 opcode;
	u8 hdr_len;
	bool payload;
} fuzz_ops[] = {
	/* RC */
	{ 0x00, 12, true }, { 0x01, 12, true }, { 0x02, 12, true },
	{ 0x03, 16, true }, { 0x04, 12, true }, { 0x05, 16, true },
	{ 0x06, 28, true }, { 0x07, 12, true }, { 0x08, 12, true },
	{ 0x09, 16, true }, { 0x0a, 28, true }, { 0x0b, 32, true },
	{ 0x0c, 28, false }, { 0x0d, 16, true }, { 0x0e, 12, true },
	{ 0x0f, 16, true }, { 0x10, 16, true }, { 0x11, 16, false },
	{ 0x12, 24, false }, { 0x13, 40, false }, { 0x14, 40, false },
	{ 0x16, 16, true }, { 0x17, 16, true }, { 0x1c, 32, false },
	{ 0x1d, 28, true },
	/* UC */
	{ 0x20, 12, true }, { 0x21, 12, true }, { 0x22, 12, true },
	{ 0x23, 16, true }, { 0x24, 12, true }, { 0x25, 16, true },
	{ 0x26, 28, true }, { 0x27, 12, true }, { 0x28, 12, true },
	{ 0x29, 16, true }, { 0x2a, 28, true }, { 0x2b, 32, true },
	/* UD */
	{ 0x64, 20, true }, { 0x65, 24, true },
};

static int fuzz_op_index(u8 opcode)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(fuzz_ops); i++)
		if (fuzz_ops[i].opcode == opcode)
			return i;
	return -1;
}

/* What srnic_pkt_parse() must answer for @len bytes at @b. */
static enum srnic_pkt_err fuzz_oracle(const u8 *b, u32 len)
{
	u32 rest, pad;
	int i;

	if (len < 12 + 4)
		return SRNIC_PKT_ERR_SHORT;
	if (b[1] & 0x0f)
		return SRNIC_PKT_ERR_TVER;
	i = fuzz_op_index(b[0]);
	if (i < 0)
		return SRNIC_PKT_ERR_OPCODE;
	if (len < fuzz_ops[i].hdr_len + 4)
		return SRNIC_PKT_ERR_SHORT;
	rest = len - fuzz_ops[i].hdr_len - 4;
	pad = (b[1] >> 4) & 3;
	if (pad > rest)
		return SRNIC_PKT_ERR_PAD;
	if (!fuzz_ops[i].payload)
		return rest ? (pad ? SRNIC_PKT_ERR_PAD : SRNIC_PKT_ERR_LENGTH) :
			      SRNIC_PKT_OK;
	if (rest - pad > SRNIC_MAX_PAYLOAD || rest % 4)
		return SRNIC_PKT_ERR_LENGTH;
	return SRNIC_PKT_OK;
}

struct fuzz_ctx {
	struct rnd_state rnd;
	u8 *buf;		/* FUZZ_BUF bytes, kmalloc'ed: KASAN-bounded */
};

static u32 fuzz_rand(struct fuzz_ctx *f, u32 n)
{
	return n ? prandom_u32_state(&f->rnd) % n : 0;
}

/* A payload length, often at an edge. */
static u32 fuzz_paylen(struct fuzz_ctx *f)
{
	static const u32 edges[] = {
		0, 1, 2, 3, 4, 5, 7, 8, 9, 255, 256, 1023, 1024, 1025,
		4092, 4093, 4094, 4095, 4096, 4097, 4100, 4104,
	};

	if (fuzz_rand(f, 4))
		return edges[fuzz_rand(f, ARRAY_SIZE(edges))];
	return fuzz_rand(f, 4200);
}

/* A 32-bit header field, often at an edge. */
static u32 fuzz_u32(struct fuzz_ctx *f)
{
	static const u32 edges[] = {
		0, 1, 2, 0x7f, 0x80, 0xff, 0xffff, 0x7fffff, 0x800000,
		0xffffff, 0x1000000, 0x7fffffff, 0x80000000, 0xfffffffe,
		0xffffffff,
	};

	if (fuzz_rand(f, 2))
		return edges[fuzz_rand(f, ARRAY_SIZE(edges))];
	return prandom_u32_state(&f->rnd);
}

/*
 * One mutated transport packet at @p (room: FUZZ_BUF); returns its
 * length. Starts from a well-formed packet of a random known opcode (or
 * a random opcode byte), then applies none, one or two mutations. The
 * payload bytes are random only if @payload (the ICRC covers them; the
 * parser never reads them).
 */
static u32 fuzz_packet(struct fuzz_ctx *f, u8 *p, bool payload)
{
	u32 len, paylen, hdr, k, n;
	u8 op;
	int i;

	op = fuzz_rand(f, 8) ? fuzz_ops[fuzz_rand(f, ARRAY_SIZE(fuzz_ops))].opcode :
			       fuzz_rand(f, 256);
	i = fuzz_op_index(op);
	hdr = i < 0 ? 12 : fuzz_ops[i].hdr_len;
	paylen = (i >= 0 && fuzz_ops[i].payload) ? fuzz_paylen(f) : 0;
	/* Random header bytes, then the BTH as a sender would write it. */
	prandom_bytes_state(&f->rnd, p, hdr);
	for (k = 0; k + 4 <= hdr; k += 4)
		put_unaligned_be32(fuzz_u32(f), p + k);
	p[0] = op;
	p[1] = (fuzz_rand(f, 4) << 4) & ~0x0f;	/* pad, TVer 0 */
	if (fuzz_rand(f, 2))
		p[1] = (p[1] & 0x0f) | ((-paylen & 3) << 4);
	paylen += (p[1] >> 4) & 3;
	len = hdr + paylen + 4;
	if (payload)
		prandom_bytes_state(&f->rnd, p + hdr, paylen + 4);

	n = fuzz_rand(f, 3);
	while (n--) {
		switch (fuzz_rand(f, 6)) {
		case 0:		/* truncated anywhere */
			len = fuzz_rand(f, len + 1);
			break;
		case 1:		/* extended */
			k = min_t(u32, fuzz_rand(f, 64), FUZZ_BUF - len);
			prandom_bytes_state(&f->rnd, p + len, k);
			len += k;
			break;
		case 2:		/* a bit flipped in the headers */
			k = fuzz_rand(f, min_t(u32, len ? len : 1, 48) * 8);
			if (k / 8 < len)
				p[k / 8] ^= BIT(k % 8);
			break;
		case 3:		/* the flags byte at random */
			p[1] = fuzz_rand(f, 256);
			break;
		case 4:		/* the opcode at random */
			p[0] = fuzz_rand(f, 256);
			break;
		default:	/* 4-byte granularity off by 1..3 */
			k = 1 + fuzz_rand(f, 3);
			len = len > k ? len - k : len + k;
			break;
		}
		len = min_t(u32, len, FUZZ_BUF);
	}
	return len;
}

/* The parser: verdict and fields against the oracle, 1 million cases. */
static void srnic_fuzz_parse(struct kunit *test)
{
	struct fuzz_ctx *f = test->priv;
	u32 c, len, bad = 0, ok = 0, errs[SRNIC_PKT_ERR_NUM] = {};
	u8 *tmp, *at;

	tmp = kunit_kzalloc(test, FUZZ_BUF, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tmp);
	for (c = 0; c < SRNIC_FUZZ_PARSE; c++) {
		enum srnic_pkt_err want, got;
		struct srnic_pkt pkt;

		len = fuzz_packet(f, tmp, false);
		/*
		 * The packet ends where the buffer does; its headers (at most
		 * 40 bytes) are copied, the rest is never read.
		 */
		at = f->buf + FUZZ_BUF - len;
		memcpy(at, tmp, min_t(u32, len, 64));
		want = fuzz_oracle(at, len);
		got = srnic_pkt_parse(&pkt, at, len);
		errs[got < SRNIC_PKT_ERR_NUM ? got : 0]++;
		if (got != want) {
			if (bad++ < 10)
				KUNIT_FAIL(test, "case %u: op %#x flags %#x len %u: %s, oracle %s",
					   c, at[0], len > 1 ? at[1] : 0, len,
					   srnic_fuzz_err_name(got),
					   srnic_fuzz_err_name(want));
			continue;
		}
		if (got != SRNIC_PKT_OK)
			continue;
		ok++;
		if (pkt.hdr_len + pkt.paylen + pkt.pad + 4 != len ||
		    pkt.opcode != at[0] || pkt.pad != ((at[1] >> 4) & 3) ||
		    pkt.qpn != (get_unaligned_be32(at + 4) & 0xffffff) ||
		    pkt.psn != (get_unaligned_be32(at + 8) & 0xffffff) ||
		    pkt.ack_req != !!(at[8] & 0x80) ||
		    pkt.paylen > SRNIC_MAX_PAYLOAD) {
			if (bad++ < 10)
				KUNIT_FAIL(test, "case %u: op %#x len %u: hdr %u pay %u pad %u",
					   c, at[0], len, pkt.hdr_len,
					   pkt.paylen, pkt.pad);
		}
		if (!(c % 4096))
			cond_resched();
	}
	kunit_info(test, "%u cases: %u parsed, short %u, tver %u, opcode %u, pad %u, length %u; %u wrong\n",
		   SRNIC_FUZZ_PARSE, ok, errs[SRNIC_PKT_ERR_SHORT],
		   errs[SRNIC_PKT_ERR_TVER], errs[SRNIC_PKT_ERR_OPCODE],
		   errs[SRNIC_PKT_ERR_PAD], errs[SRNIC_PKT_ERR_LENGTH], bad);
	KUNIT_EXPECT_EQ(test, bad, 0);
	/* The mutations reach every verdict, and a good share parses. */
	KUNIT_EXPECT_GT(test, ok, SRNIC_FUZZ_PARSE / 10);
	for (c = 1; c < SRNIC_PKT_ERR_NUM; c++)
		KUNIT_EXPECT_GT_MSG(test, errs[c], 1000, "%s",
				    srnic_fuzz_err_name(c));
}

/* --- srnic_rx() at two unregistered devices -------------------------- */

#define FUZZ_NCNT	6

static const enum srnic_counter fuzz_cnt[FUZZ_NCNT] = {
	SRNIC_CNT_RCVD_PKTS, SRNIC_CNT_RX_DROPPED, SRNIC_CNT_MALFORMED,
	SRNIC_CNT_ICRC_ERR, SRNIC_CNT_DGID_ERR, SRNIC_CNT_NO_QP,
};

static const char * const fuzz_cnt_name[FUZZ_NCNT] = {
	"rcvd_pkts", "rx_dropped", "rcvd_malformed", "rcvd_icrc_err",
	"rcvd_dgid_err", "rcvd_no_qp",
};

struct fuzz_dev {
	struct srnic_dev *sdev;
	union ib_gid gid4, gid6;
	void *ctx4, *ctx6;
};

static void fuzz_dev_add_gid(struct kunit *test, struct fuzz_dev *d,
			     const union ib_gid *gid, void **ctx)
{
	struct ib_gid_attr attr = {
		.device = &d->sdev->ibdev,
		.gid = *gid,
	};

	KUNIT_ASSERT_EQ(test, srnic_add_gid(&attr, ctx), 0);
}

static int fuzz_dev_init(struct kunit *test, struct fuzz_dev *d,
			 struct srnic_net *sn, u8 host)
{
	d->sdev = kunit_kzalloc(test, sizeof(*d->sdev), GFP_KERNEL);
	if (!d->sdev)
		return -ENOMEM;
	d->sdev->counters = alloc_percpu(struct srnic_counters);
	if (!d->sdev->counters)
		return -ENOMEM;
	xa_init(&d->sdev->qp_xa);
	srnic_gid_init(d->sdev);
	ipv6_addr_set_v4mapped(htonl(0x0a630000 | host),
			       (struct in6_addr *)&d->gid4);
	memset(&d->gid6, 0, sizeof(d->gid6));
	d->gid6.raw[0] = 0xfd;
	d->gid6.raw[15] = host;
	fuzz_dev_add_gid(test, d, &d->gid4, &d->ctx4);
	fuzz_dev_add_gid(test, d, &d->gid6, &d->ctx6);
	return srnic_net_kunit_add(sn, host, d->sdev);
}

/* The L3 and UDP headers of a RoCEv2 packet to @dst; returns their length. */
static u32 fuzz_l3(struct fuzz_ctx *f, u8 *p, bool v6, const union ib_gid *dst,
		   u32 blen)
{
	struct udphdr *uh;
	u32 l3len;

	if (v6) {
		struct ipv6hdr *ip6 = (void *)p;

		memset(ip6, 0, sizeof(*ip6));
		ip6->version = 6;
		ip6->payload_len = htons(sizeof(*uh) + blen);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		ip6->saddr.s6_addr[0] = 0xfd;
		ip6->saddr.s6_addr[15] = 200;
		memcpy(&ip6->daddr, dst->raw, sizeof(ip6->daddr));
		l3len = sizeof(*ip6);
	} else {
		struct iphdr *ip4 = (void *)p;

		memset(ip4, 0, sizeof(*ip4));
		ip4->version = 4;
		ip4->ihl = 5;
		ip4->tot_len = htons(sizeof(*ip4) + sizeof(*uh) + blen);
		ip4->ttl = 64;
		ip4->protocol = IPPROTO_UDP;
		ip4->saddr = htonl(0x0a6300c8);
		memcpy(&ip4->daddr, &dst->raw[12], 4);
		l3len = sizeof(*ip4);
	}
	uh = (void *)(p + l3len);
	uh->source = htons(49152 + fuzz_rand(f, 16384));
	uh->dest = htons(SRNIC_ROCE_V2_PORT);
	uh->len = htons(sizeof(*uh) + blen);
	uh->check = 0;
	return l3len + sizeof(*uh);
}

/* Which counters of which device the oracle expects one packet to move. */
enum { W_RCVD, W_DROP, W_MAL, W_ICRC, W_DGID, W_NOQP };

static void fuzz_rx_expect(const u8 *frame, u32 total, u32 hlen, int owner,
			   s64 want[2][FUZZ_NCNT])
{
	const struct udphdr *uh = (const void *)(frame + hlen -
						 sizeof(*uh));
	u32 ulen = ntohs(uh->len), len;
	const u8 *bth = frame + hlen;
	u8 t;

	/* The UDP length and the destination: counted where it came in. */
	if (ulen < sizeof(*uh) || ulen - sizeof(*uh) > total - hlen) {
		want[0][W_RCVD]++;
		want[0][W_DROP]++;
		want[0][W_MAL]++;
		return;
	}
	if (owner < 0) {
		want[0][W_RCVD]++;
		want[0][W_DROP]++;
		want[0][W_DGID]++;
		return;
	}
	/* The rest on the device the destination names. */
	want[owner][W_RCVD]++;
	want[owner][W_DROP]++;		/* no QP exists */
	len = ulen - sizeof(*uh);
	if (fuzz_oracle(bth, len) != SRNIC_PKT_OK) {
		want[owner][W_MAL]++;
		return;
	}
	if (srnic_icrc(frame, hlen + len - 4) !=
	    get_unaligned_le32(bth + len - 4)) {
		want[owner][W_ICRC]++;
		return;
	}
	t = bth[0] & 0xe0;
	if (t == 0x00 || t == 0x20 || t == 0x60)
		want[owner][W_NOQP]++;
}

/*
 * Each device's counters against the oracle after case @c; a difference
 * is reported (the first ten) and taken as the new baseline, so that
 * each wrong case counts once. Returns the counters that differed.
 */
static u32 fuzz_rx_check(struct kunit *test, const struct fuzz_dev *dev,
			 s64 want[2][FUZZ_NCNT], u32 c, u32 bad)
{
	u32 n = 0, k;
	s64 got;
	int d;

	for (d = 0; d < 2; d++) {
		for (k = 0; k < FUZZ_NCNT; k++) {
			got = srnic_counter_read(dev[d].sdev, fuzz_cnt[k]);
			if (got == want[d][k])
				continue;
			if (bad + n++ < 10)
				KUNIT_FAIL(test, "case %u: dev%d %s %lld, oracle %lld",
					   c, d, fuzz_cnt_name[k], got,
					   want[d][k]);
			want[d][k] = got;
		}
	}
	return n;
}

static void srnic_fuzz_rx(struct kunit *test)
{
	s64 want[2][FUZZ_NCNT] = {};
	struct fuzz_ctx *f = test->priv;
	u32 c, k, hlen, blen, total, good_icrc = 0, bad = 0;
	struct fuzz_dev dev[2];
	struct srnic_net *sn;
	union ib_gid foreign;
	u8 *frame;
	int d;

	sn = srnic_net_kunit_new();
	KUNIT_ASSERT_NOT_NULL(test, sn);
	frame = kunit_kzalloc(test, 40 + 8 + FUZZ_BUF, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, frame);
	KUNIT_ASSERT_EQ(test, fuzz_dev_init(test, &dev[0], sn, 1), 0);
	KUNIT_ASSERT_EQ(test, fuzz_dev_init(test, &dev[1], sn, 2), 0);

	for (c = 0; c < SRNIC_FUZZ_RX; c++) {
		bool v6 = !fuzz_rand(f, 4);
		const union ib_gid *dst;
		struct sk_buff *skb;
		int owner;

		/* To the device it reaches, to the other one, or to nobody. */
		k = fuzz_rand(f, 20);
		owner = k < 16 ? 0 : k < 18 ? 1 : -1;
		if (owner >= 0) {
			dst = v6 ? &dev[owner].gid6 : &dev[owner].gid4;
		} else {
			foreign = v6 ? dev[0].gid6 : dev[0].gid4;
			foreign.raw[15] = 3 + fuzz_rand(f, 250);
			dst = &foreign;
		}
		blen = fuzz_packet(f, frame + 48, true);
		hlen = fuzz_l3(f, frame, v6, dst, blen);
		if (hlen != 48)
			memmove(frame + hlen, frame + 48, blen);
		total = hlen + blen;
		/* A correct ICRC for most that have room for one. */
		if (blen >= 16 && fuzz_rand(f, 10) < 6) {
			put_unaligned_le32(srnic_icrc(frame, total - 4),
					   frame + total - 4);
			good_icrc++;
		}
		/* Now and then a UDP length that lies. */
		if (!fuzz_rand(f, 16))
			((struct udphdr *)(frame + hlen - 8))->len =
				htons(fuzz_rand(f, 2) ? fuzz_rand(f, 8) :
				      8 + blen + 1 + fuzz_rand(f, 64));
		fuzz_rx_expect(frame, total, hlen, owner, want);

		skb = alloc_skb(total, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		skb_put_data(skb, frame, total);
		skb_reset_network_header(skb);
		skb_set_transport_header(skb, hlen - sizeof(struct udphdr));
		rcu_read_lock();
		local_bh_disable();
		srnic_rx(dev[0].sdev, skb, false);
		local_bh_enable();
		rcu_read_unlock();

		bad += fuzz_rx_check(test, dev, want, c, bad);
		if (!(c % 1024))
			cond_resched();
	}
	for (d = 0; d < 2; d++)
		kunit_info(test, "srnic%d: rcvd_pkts %lld rx_dropped %lld malformed %lld icrc_err %lld dgid_err %lld no_qp %lld\n",
			   d, want[d][0], want[d][1], want[d][2], want[d][3],
			   want[d][4], want[d][5]);
	kunit_info(test, "%u packets (%u with a correct ICRC); %u miscounted\n",
		   SRNIC_FUZZ_RX, good_icrc, bad);
	KUNIT_EXPECT_EQ(test, bad, 0);
	/* Every class of drop was reached, and packets got as far as a QP. */
	for (k = W_MAL; k < FUZZ_NCNT; k++)
		KUNIT_EXPECT_GT_MSG(test, want[0][k] + want[1][k], 100, "%s",
				    fuzz_cnt_name[k]);
	KUNIT_EXPECT_GT(test, want[1][W_RCVD], 1000);

	for (d = 0; d < 2; d++) {
		srnic_gid_cleanup(dev[d].sdev);
		xa_destroy(&dev[d].sdev->qp_xa);
		free_percpu(dev[d].sdev->counters);
	}
	srnic_net_kunit_free(sn);
}

static int srnic_fuzz_init(struct kunit *test)
{
	struct fuzz_ctx *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	f->buf = kunit_kmalloc(test, FUZZ_BUF, GFP_KERNEL);
	if (!f->buf)
		return -ENOMEM;
	prandom_seed_state(&f->rnd, SRNIC_FUZZ_SEED);
	kunit_info(test, "seed %#llx\n", SRNIC_FUZZ_SEED);
	test->priv = f;
	return 0;
}

static struct kunit_case srnic_rx_fuzz_cases[] = {
	KUNIT_CASE(srnic_fuzz_parse),
	KUNIT_CASE(srnic_fuzz_rx),
	{}
};

static struct kunit_suite srnic_rx_fuzz_suite = {
	.name = "srnic_rx_fuzz",
	.init = srnic_fuzz_init,
	.test_cases = srnic_rx_fuzz_cases,
};

kunit_test_suite(srnic_rx_fuzz_suite);

MODULE_DESCRIPTION("srnic KUnit: the receive path fuzzed");
MODULE_LICENSE("GPL");
