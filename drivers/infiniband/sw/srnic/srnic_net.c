// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: the per-network-namespace RoCEv2 UDP tunnel sockets.
 *
 * A device, its UDP socket and its GIDs belong to the namespace of its
 * netdev. Each namespace that has at least one srnic device owns one IPv4
 * and one IPv6 UDP socket bound to port 4791; every device of that
 * namespace receives through them, found by the ingress netdev's ifindex.
 * The sockets are created with the first device of a namespace and
 * released with the last; a dying namespace first removes its devices.
 */
#include <kunit/visibility.h>
#include <linux/module.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp_tunnel.h>

#include "srnic.h"

/**
 * struct srnic_net - srnic's state in one network namespace
 * @lock: serialises socket setup and teardown and @users
 * @users: devices using the sockets
 * @sock4: the IPv4 socket, NULL when @users is 0
 * @sock6: the IPv6 socket, NULL when @users is 0
 * @devs: ifindex to device, read by the receive path under RCU
 */
struct srnic_net {
	struct mutex lock;	/* see above */
	unsigned int users;
	struct socket *sock4;
	struct socket *sock6;
	struct xarray devs;
};

static unsigned int srnic_net_id __read_mostly;

/*
 * The receive entry point: find the device by the ingress netdev, make
 * the packet linear, hand it to the validated receive path.
 */
static int srnic_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct srnic_net *sn = net_generic(sock_net(sk), srnic_net_id);
	struct srnic_dev *sdev;

	rcu_read_lock();
	sdev = skb->dev ? xa_load(&sn->devs, skb->dev->ifindex) : NULL;
	if (!sdev) {
		rcu_read_unlock();
		kfree_skb(skb);
		return 0;
	}
	if (skb_linearize(skb)) {
		srnic_counter_inc(sdev, SRNIC_CNT_RCVD_PKTS);
		srnic_counter_inc(sdev, SRNIC_CNT_RX_DROPPED);
		rcu_read_unlock();
		kfree_skb(skb);
		return 0;
	}
	srnic_rx(sdev, skb, false);
	rcu_read_unlock();
	return 0;
}

/* Room in front of the BTH: link layer, IPv6 (the larger), UDP. */
#define SRNIC_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
			 sizeof(struct udphdr))

/*
 * The largest buffer taken from the per-CPU page fragment cache: a packet
 * at MTU 4096 with its headers and struct skb_shared_info (about 4.7 KiB)
 * fits.
 */
#define SRNIC_SKB_FRAG_MAX	(2 * PAGE_SIZE)

/*
 * Bottom halves off, outside hard interrupts, interrupts on: the CPU's
 * NAPI caches (page fragments, sk_buff heads) are this context's alone,
 * as in a NAPI poll. The transmit engine, the doorbell's inline round and
 * the receive path run so.
 */
static bool srnic_napi_ctx(void)
{
	return in_softirq() && !in_hardirq() && !irqs_disabled();
}

/**
 * srnic_skb_consume() - free a packet that was used, not dropped
 * @skb: the packet
 *
 * In the context srnic_napi_ctx() names, its sk_buff head goes back to the
 * CPU's cache for the next srnic_skb_alloc(), as a NAPI driver frees a
 * transmitted packet.
 *
 * Context: any.
 */
void srnic_skb_consume(struct sk_buff *skb)
{
	if (srnic_napi_ctx())
		napi_consume_skb(skb, 1);
	else
		consume_skb(skb);
}

/**
 * srnic_skb_alloc() - a packet buffer for a RoCEv2 transport packet
 * @len: bytes from the BTH to the end of the ICRC
 *
 * The buffer is linear, its head a page fragment: a pointer bump, where
 * alloc_skb() would take a kmalloc-2k object for a packet at MTU 1024 and
 * a kmalloc-8k one at MTU 4096. With bottom halves off, a fragment of
 * srnic's own per-CPU cache, whose pages are carved again once their
 * packets are freed (srnic_frag.c: no page zeroed per refill), and the
 * sk_buff head from the NAPI cache srnic_skb_consume() gave heads back
 * to; otherwise the CPU's page fragment cache. alloc_skb() when neither
 * has room (no higher-order page to refill it with).
 *
 * Context: any; never sleeps.
 * Return: the buffer, @len bytes long, data at the BTH; NULL if no memory.
 */
struct sk_buff *srnic_skb_alloc(u32 len)
{
	unsigned int size = SKB_DATA_ALIGN(SRNIC_HEADROOM + len) +
			    SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb = NULL;
	void *data;

	if (size <= SRNIC_SKB_FRAG_MAX) {
		bool napi = srnic_napi_ctx();

		data = napi ? srnic_frag_alloc(size) : netdev_alloc_frag(size);
		if (data) {
			skb = napi ? napi_build_skb(data, size) :
				     build_skb(data, size);
			if (!skb)
				skb_free_frag(data);
		}
	}
	if (!skb)
		skb = alloc_skb(SRNIC_HEADROOM + len, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, SRNIC_HEADROOM);
	skb_put(skb, len);
	return skb;
}

/**
 * srnic_pkt_skb() - a packet with its headers written
 * @pkt: the header fields
 * @paylen: payload bytes
 * @data: set to where the payload goes
 *
 * Pad bytes and the ICRC room follow the payload.
 *
 * Context: any; never sleeps.
 * Return: the packet, or NULL if no memory.
 */
struct sk_buff *srnic_pkt_skb(struct srnic_pkt *pkt, u32 paylen, u8 **data)
{
	const struct srnic_opinfo *info = srnic_opinfo(pkt->opcode);
	struct sk_buff *skb;
	u32 pad = (4 - (paylen & 3)) & 3;
	int hlen;

	if (WARN_ON_ONCE(!info))
		return NULL;
	skb = srnic_skb_alloc(info->hdr_len + paylen + pad + SRNIC_ICRC_SIZE);
	if (!skb)
		return NULL;
	pkt->pad = pad;
	hlen = srnic_pkt_build(pkt, skb->data, skb->len);
	if (WARN_ON_ONCE(hlen < 0)) {
		kfree_skb(skb);
		return NULL;
	}
	*data = skb->data + hlen;
	memset(*data + paylen, 0, pad);
	return skb;
}

/**
 * srnic_build_send() - queue a packet of a QP
 * @qp: the QP it belongs to
 * @out: where the packet is queued for transmission
 * @pkt: the header fields (destination QP and P_Key are set here)
 * @paylen: payload bytes, which the caller writes at the returned address
 *
 * Context: any; never sleeps.
 * Return: where the payload goes, or NULL if no memory.
 */
u8 *srnic_build_send(struct srnic_qp *qp, struct sk_buff_head *out,
		     struct srnic_pkt *pkt, u32 paylen)
{
	struct sk_buff *skb;
	u8 *data;

	pkt->qpn = qp->dest_qpn;
	pkt->pkey = 0xffff;
	skb = srnic_pkt_skb(pkt, paylen, &data);
	if (!skb)
		return NULL;
	__skb_queue_tail(out, skb);
	return data;
}

/* The route to @daddr; @cache (NULL: none) remembers it for the QP. */
static struct dst_entry *srnic_route4(struct dst_cache *cache,
				      struct srnic_dev *sdev, __be32 saddr,
				      __be32 daddr)
{
	struct flowi4 fl4 = {};
	struct rtable *rt;

	rt = cache ? dst_cache_get_ip4(cache, &saddr) : NULL;
	if (rt)
		return &rt->dst;
	fl4.flowi4_oif = sdev->ifindex;
	fl4.flowi4_proto = IPPROTO_UDP;
	fl4.saddr = saddr;
	fl4.daddr = daddr;
	rt = ip_route_output_key(sdev->net, &fl4);
	if (IS_ERR(rt))
		return NULL;
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, fl4.saddr);
	return &rt->dst;
}

static struct dst_entry *srnic_route6(struct dst_cache *cache,
				      struct srnic_dev *sdev,
				      const struct in6_addr *saddr,
				      const struct in6_addr *daddr)
{
	struct flowi6 fl6 = {};
	struct dst_entry *dst;

	if (!IS_ENABLED(CONFIG_IPV6) || !sdev->sn->sock6)
		return NULL;
	dst = cache ? dst_cache_get(cache) : NULL;
	if (dst)
		return dst;
	fl6.flowi6_oif = sdev->ifindex;
	fl6.flowi6_proto = IPPROTO_UDP;
	fl6.saddr = *saddr;
	fl6.daddr = *daddr;
	dst = ipv6_stub->ipv6_dst_lookup_flow(sdev->net, sdev->sn->sock6->sk,
					      &fl6, NULL);
	if (IS_ERR(dst))
		return NULL;
	if (dst->error) {
		dst_release(dst);
		return NULL;
	}
	if (cache)
		dst_cache_set_ip6(cache, dst, &fl6.saddr);
	return dst;
}

/**
 * srnic_xmit() - send one transport packet of a QP
 * @qp: the QP; its address vector says where, unless the packet's
 *	struct srnic_skb_cb names one (a UD datagram)
 * @skb: the packet from the BTH on, ICRC room included; consumed
 *
 * Adds UDP (source port: the QP's flow entropy) and IPv4 or IPv6
 * headers, computes the ICRC over the final headers, and sends through
 * the route to the destination. A packet to an address of this host (two
 * QPs of one device, or two devices of one namespace) goes straight to
 * the receive path, without an ICRC: it never leaves the kernel.
 *
 * Context: any, never under a QP lock (loopback re-enters srnic_rx()).
 * Return: 0 or -errno (the packet is dropped and counted; the
 * retransmission timer recovers).
 */
int srnic_xmit(struct srnic_qp *qp, struct sk_buff *skb)
{
	struct srnic_dev *sdev = to_sdev(qp->ibqp.device);
	const struct srnic_skb_cb *cb = srnic_skb_cb(skb);
	const struct srnic_av *av = &qp->av;
	struct dst_cache *cache = &qp->dst_cache;
	u16 sport = qp->req.sport;
	struct srnic_av dav;
	struct dst_entry *dst;
	struct udphdr *uh;
	bool v4;
	int err;

	if (cb->ud) {
		/* Datagrams go to many places: no per-QP route cache. */
		memset(&dav, 0, sizeof(dav));
		dav.network_type = cb->v6 ? RDMA_NETWORK_IPV6 :
					    RDMA_NETWORK_IPV4;
		memcpy(dav.sgid.raw, cb->sgid, sizeof(cb->sgid));
		memcpy(dav.dgid.raw, cb->dgid, sizeof(cb->dgid));
		dav.flow_label = cb->flow_label;
		dav.traffic_class = cb->tclass;
		dav.hop_limit = cb->hop_limit;
		sport = cb->sport;
		av = &dav;
		cache = NULL;
	}
	v4 = av->network_type == RDMA_NETWORK_IPV4;

	if (v4) {
		__be32 saddr, daddr;

		memcpy(&saddr, &av->sgid.raw[12], sizeof(saddr));
		memcpy(&daddr, &av->dgid.raw[12], sizeof(daddr));
		dst = srnic_route4(cache, sdev, saddr, daddr);
	} else {
		dst = srnic_route6(cache, sdev, (const void *)av->sgid.raw,
				   (const void *)av->dgid.raw);
	}
	if (!dst) {
		srnic_counter_inc(sdev, SRNIC_CNT_SEND_ERR);
		kfree_skb(skb);
		return -EHOSTUNREACH;
	}

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(SRNIC_ROCE_V2_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;
	skb_dst_set(skb, dst);

	if (v4) {
		struct iphdr *iph;

		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
		skb_push(skb, sizeof(*iph));
		skb_reset_network_header(skb);
		iph = ip_hdr(skb);
		iph->version = IPVERSION;
		iph->ihl = sizeof(*iph) >> 2;
		iph->tos = av->traffic_class;
		iph->frag_off = htons(IP_DF);
		iph->ttl = av->hop_limit ?: 64;
		iph->protocol = IPPROTO_UDP;
		memcpy(&iph->saddr, &av->sgid.raw[12], sizeof(iph->saddr));
		memcpy(&iph->daddr, &av->dgid.raw[12], sizeof(iph->daddr));
		/*
		 * An atomic datagram (DF, never fragmented): its ID means
		 * nothing (RFC 6864), so 0, as the kernel gives its own
		 * unconnected DF datagrams, not a hash per packet.
		 */
		iph->id = 0;
		iph->tot_len = htons(skb->len);
		ip_send_check(iph);
		skb->protocol = htons(ETH_P_IP);
	} else {
		struct ipv6hdr *ip6h;

		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
		skb_push(skb, sizeof(*ip6h));
		skb_reset_network_header(skb);
		ip6h = ipv6_hdr(skb);
		ip6_flow_hdr(ip6h, av->traffic_class,
			     htonl(av->flow_label & 0xfffff));
		ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
		ip6h->nexthdr = IPPROTO_UDP;
		ip6h->hop_limit = av->hop_limit ?: 64;
		memcpy(&ip6h->saddr, av->sgid.raw, sizeof(ip6h->saddr));
		memcpy(&ip6h->daddr, av->dgid.raw, sizeof(ip6h->daddr));
		skb->protocol = htons(ETH_P_IPV6);
	}
	srnic_counter_inc(sdev, SRNIC_CNT_SENT_PKTS);

	if (dst->dev->flags & IFF_LOOPBACK) {
		/*
		 * To ourselves: receive it as if it came in on the netdev.
		 * It never leaves the kernel, so no ICRC is computed here
		 * or checked there (the room holds zeroes).
		 */
		put_unaligned_le32(0, skb_tail_pointer(skb) - SRNIC_ICRC_SIZE);
		rcu_read_lock();
		srnic_rx(sdev, skb, true);
		rcu_read_unlock();
		return 0;
	}
	put_unaligned_le32(srnic_icrc(skb_network_header(skb),
				      skb->len - SRNIC_ICRC_SIZE),
			   skb_tail_pointer(skb) - SRNIC_ICRC_SIZE);
	if (v4)
		err = ip_local_out(sdev->net, sdev->sn->sock4->sk, skb);
	else
		err = ip6_local_out(sdev->net, sdev->sn->sock6->sk, skb);
	if (unlikely(net_xmit_eval(err))) {
		srnic_counter_inc(sdev, SRNIC_CNT_SEND_ERR);
		return -EAGAIN;
	}
	return 0;
}

static int srnic_udp_sock_create(struct net *net, bool ipv6,
				 struct socket **sockp)
{
	struct udp_tunnel_sock_cfg tnl_cfg = {
		.encap_type = 1,
		.encap_rcv = srnic_udp_encap_recv,
	};
	struct udp_port_cfg port_cfg = {
		.local_udp_port = htons(SRNIC_ROCE_V2_PORT),
	};
	int err;

	if (ipv6) {
		port_cfg.family = AF_INET6;
		port_cfg.ipv6_v6only = 1;
		port_cfg.local_ip6 = in6addr_any;
	} else {
		port_cfg.family = AF_INET;
		port_cfg.local_ip.s_addr = htonl(INADDR_ANY);
	}
	err = udp_sock_create(net, &port_cfg, sockp);
	if (err)
		return err;
	setup_udp_tunnel_sock(net, *sockp, &tnl_cfg);
	return 0;
}

static void srnic_net_release_socks(struct srnic_net *sn)
{
	if (sn->sock6)
		udp_tunnel_sock_release(sn->sock6);
	if (sn->sock4)
		udp_tunnel_sock_release(sn->sock4);
	sn->sock4 = NULL;
	sn->sock6 = NULL;
}

/*
 * A device's own addresses. The receive path takes a packet only if its
 * destination is one of the device's RoCEv2 GIDs: the IP stack delivers
 * to the namespace's socket whatever is addressed to any local address,
 * and the ingress netdev does not say which device it is for (with two
 * devices in one namespace, a packet for one may come in through the
 * other's netdev, or through loopback). The core keeps the set current
 * through add_gid/del_gid; the receive path reads it under RCU.
 */
struct srnic_gid {
	struct hlist_node node;
	union ib_gid gid;
	struct rcu_head rcu;
};

/*
 * The table's key: the GID folded to 32 bits (hash_add_rcu() hashes it
 * again into a bucket). A few instructions per received packet, where
 * jhash() over 16 bytes was 1.9 % of a Write stream's kernel time. Only
 * the administrator's addresses go into the table, so no peer can choose
 * keys that collide.
 */
static u32 srnic_gid_hash(const union ib_gid *gid)
{
	u64 x = (__force u64)(gid->global.subnet_prefix ^
			      gid->global.interface_id);

	return (u32)(x ^ (x >> 32));
}

/**
 * srnic_gid_init() - an empty GID set
 * @sdev: the device, before ib_register_device() (which adds the default
 *	GID)
 */
void srnic_gid_init(struct srnic_dev *sdev)
{
	spin_lock_init(&sdev->gid_lock);
	hash_init(sdev->gids);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gid_init);

/**
 * srnic_gid_cleanup() - free what the core did not delete
 * @sdev: the device, no longer reachable by the receive path
 */
void srnic_gid_cleanup(struct srnic_dev *sdev)
{
	struct hlist_node *tmp;
	struct srnic_gid *g;
	int bkt;

	hash_for_each_safe(sdev->gids, bkt, tmp, g, node) {
		hash_del(&g->node);
		kfree(g);
	}
}
EXPORT_SYMBOL_IF_KUNIT(srnic_gid_cleanup);

/**
 * srnic_add_gid() - the core added a GID to the port's table
 * @attr: the entry
 * @context: the core's per-entry pointer: set to ours
 *
 * Context: process context (the core's GID table mutex held).
 * Return: 0 or -ENOMEM (the core then does not use the GID).
 */
int srnic_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct srnic_dev *sdev = to_sdev(attr->device);
	struct srnic_gid *g;

	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return -ENOMEM;
	g->gid = attr->gid;
	spin_lock_bh(&sdev->gid_lock);
	hash_add_rcu(sdev->gids, &g->node, srnic_gid_hash(&g->gid));
	spin_unlock_bh(&sdev->gid_lock);
	*context = g;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_add_gid);

/**
 * srnic_del_gid() - the core removed a GID from the port's table
 * @attr: the entry
 * @context: what srnic_add_gid() set
 *
 * Context: process context.
 * Return: 0.
 */
int srnic_del_gid(const struct ib_gid_attr *attr, void **context)
{
	struct srnic_dev *sdev = to_sdev(attr->device);
	struct srnic_gid *g = *context;

	if (!g)
		return 0;
	spin_lock_bh(&sdev->gid_lock);
	hash_del_rcu(&g->node);
	spin_unlock_bh(&sdev->gid_lock);
	kfree_rcu(g, rcu);
	*context = NULL;
	return 0;
}

/**
 * srnic_gid_local() - @gid is one of the device's GIDs
 * @sdev: the device
 * @gid: a packet's destination (IPv4 as v4-mapped)
 *
 * Context: any, under rcu_read_lock().
 * Return: true if it is.
 */
bool srnic_gid_local(struct srnic_dev *sdev, const union ib_gid *gid)
{
	struct srnic_gid *g;

	hash_for_each_possible_rcu(sdev->gids, g, node, srnic_gid_hash(gid))
		if (!memcmp(g->gid.raw, gid->raw, sizeof(gid->raw)))
			return true;
	return false;
}

/**
 * srnic_gid_owner() - the device of @sdev's namespace that owns @gid
 * @sdev: the device the packet reached
 * @gid: its destination
 *
 * The scan is bounded by the devices in the namespace (each made by an
 * administrator), not by anything a peer sends.
 *
 * Context: softirq, under rcu_read_lock().
 * Return: the device, or NULL if none of them has that address.
 */
struct srnic_dev *srnic_gid_owner(struct srnic_dev *sdev,
				  const union ib_gid *gid)
{
	struct srnic_dev *other;
	unsigned long i;

	xa_for_each(&sdev->sn->devs, i, other)
		if (other != sdev && srnic_gid_local(other, gid))
			return other;
	return NULL;
}

#if IS_ENABLED(CONFIG_KUNIT)
/*
 * For KUnit's devices that are never registered: a namespace state with
 * no sockets, whose device table the test fills itself.
 */
struct srnic_net *srnic_net_kunit_new(void)
{
	struct srnic_net *sn = kzalloc(sizeof(*sn), GFP_KERNEL);

	if (sn) {
		mutex_init(&sn->lock);
		xa_init(&sn->devs);
	}
	return sn;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_net_kunit_new);

int srnic_net_kunit_add(struct srnic_net *sn, unsigned long index,
			struct srnic_dev *sdev)
{
	sdev->sn = sn;
	return xa_err(xa_store(&sn->devs, index, sdev, GFP_KERNEL));
}
EXPORT_SYMBOL_IF_KUNIT(srnic_net_kunit_add);

void srnic_net_kunit_free(struct srnic_net *sn)
{
	xa_destroy(&sn->devs);
	kfree(sn);
}
EXPORT_SYMBOL_IF_KUNIT(srnic_net_kunit_free);
#endif

/* Wakes srnic_pernet_exit() when a device drops its namespace state. */
static DECLARE_WAIT_QUEUE_HEAD(srnic_net_wq);
/* How long a dying namespace waits for a queued device removal. */
#define SRNIC_NET_EXIT_WAIT (120 * HZ)

/**
 * srnic_net_get() - take a user reference on a namespace's UDP sockets
 * @net: the namespace of the device's netdev
 * @ndev_name: for the error message
 *
 * Creates the sockets on first use. Port 4791 taken by someone else in
 * @net (in the initial namespace typically rdma_rxe, which binds it when it
 * loads) is reported as a clear error.
 *
 * Context: process context, may sleep.
 * Return: the namespace state, or an ERR_PTR.
 */
struct srnic_net *srnic_net_get(struct net *net, const char *ndev_name)
{
	struct srnic_net *sn = net_generic(net, srnic_net_id);
	int err = 0;

	mutex_lock(&sn->lock);
	if (!sn->users) {
		err = srnic_udp_sock_create(net, false, &sn->sock4);
		if (!err && IS_ENABLED(CONFIG_IPV6)) {
			err = srnic_udp_sock_create(net, true, &sn->sock6);
			/*
			 * Booted with ipv6.disable=1: IPv4 only. The
			 * transmit path finds no IPv6 route without the
			 * socket, and no IPv6 datagram arrives.
			 */
			if (err == -EAFNOSUPPORT) {
				pr_info_once("%s: IPv6 is disabled: RoCEv2 over IPv4 only\n",
					     SRNIC_DRV_NAME);
				sn->sock6 = NULL;
				err = 0;
			}
		}
		if (err) {
			srnic_net_release_socks(sn);
			if (err == -EADDRINUSE)
				pr_err("%s: cannot use %s: UDP port %u is already in use in its network namespace (rdma_rxe owns it in the initial namespace while loaded)\n",
				       SRNIC_DRV_NAME, ndev_name,
				       SRNIC_ROCE_V2_PORT);
			else
				pr_err("%s: cannot use %s: RoCEv2 UDP socket: %d\n",
				       SRNIC_DRV_NAME, ndev_name, err);
		}
	}
	if (!err)
		WRITE_ONCE(sn->users, sn->users + 1);
	mutex_unlock(&sn->lock);
	return err ? ERR_PTR(err) : sn;
}

/**
 * srnic_net_put() - drop a user reference taken by srnic_net_get()
 * @sn: the namespace state
 *
 * Context: process context, may sleep.
 */
void srnic_net_put(struct srnic_net *sn)
{
	mutex_lock(&sn->lock);
	if (!WARN_ON_ONCE(!sn->users)) {
		WRITE_ONCE(sn->users, sn->users - 1);
		if (!sn->users)
			srnic_net_release_socks(sn);
	}
	mutex_unlock(&sn->lock);
	wake_up(&srnic_net_wq);
}

/**
 * srnic_net_add_dev() - let the receive path find a device
 * @sn: the namespace state
 * @sdev: the device
 * @ifindex: its netdev's ifindex
 *
 * Context: process context.
 * Return: 0 or -errno.
 */
int srnic_net_add_dev(struct srnic_net *sn, struct srnic_dev *sdev,
		      int ifindex)
{
	return xa_err(xa_store(&sn->devs, ifindex, sdev, GFP_KERNEL));
}

/**
 * srnic_net_del_dev() - hide a device from the receive path
 * @sn: the namespace state
 * @sdev: the device
 * @ifindex: the ifindex it was added with
 *
 * Waits for receivers that may still look at the device. Only @sdev's own
 * entry goes: the ifindex may already serve a newer device.
 *
 * Context: process context, may sleep.
 */
void srnic_net_del_dev(struct srnic_net *sn, struct srnic_dev *sdev,
		       int ifindex)
{
	if (xa_cmpxchg(&sn->devs, ifindex, sdev, NULL, GFP_KERNEL) == sdev)
		synchronize_net();
}

static int __net_init srnic_pernet_init(struct net *net)
{
	struct srnic_net *sn = net_generic(net, srnic_net_id);

	mutex_init(&sn->lock);
	xa_init(&sn->devs);
	return 0;
}

static void __net_exit srnic_pernet_exit(struct net *net)
{
	struct srnic_net *sn = net_generic(net, srnic_net_id);

	/* The sockets cannot outlive the namespace: nor can its devices. */
	srnic_unregister_net_devices(net);
	/*
	 * A device whose netdev went first (the namespace's devices are
	 * unregistered before its subsystems exit) was queued for removal
	 * by the netdev notifier and is no longer ours to remove: wait for
	 * that removal to drop its reference, or the state freed with the
	 * namespace would be used after it.
	 */
	if (!wait_event_timeout(srnic_net_wq, !READ_ONCE(sn->users),
				SRNIC_NET_EXIT_WAIT))
		pr_err("%s: a device of a dying network namespace is still being removed\n",
		       SRNIC_DRV_NAME);
	mutex_lock(&sn->lock);
	if (WARN_ON_ONCE(sn->users))
		srnic_net_release_socks(sn);
	mutex_unlock(&sn->lock);
	WARN_ON_ONCE(!xa_empty(&sn->devs));
	xa_destroy(&sn->devs);
}

static struct pernet_operations srnic_net_ops = {
	.init = srnic_pernet_init,
	.exit = srnic_pernet_exit,
	.id = &srnic_net_id,
	.size = sizeof(struct srnic_net),
};

/**
 * srnic_net_init() - register the per-namespace state
 *
 * Context: module init.
 * Return: 0 or -errno.
 */
int srnic_net_init(void)
{
	return register_pernet_subsys(&srnic_net_ops);
}

/**
 * srnic_net_exit() - unregister the per-namespace state
 *
 * Context: module exit, after every device is gone.
 */
void srnic_net_exit(void)
{
	unregister_pernet_subsys(&srnic_net_ops);
}
