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
#include <linux/module.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
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
 * The receive entry point. The RC receive pipeline is built on top of this
 * in srnic_rx.c; until a packet has a consumer it is dropped and counted,
 * never silently.
 */
static int srnic_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct srnic_net *sn = net_generic(sock_net(sk), srnic_net_id);
	struct srnic_dev *sdev;

	rcu_read_lock();
	sdev = skb->dev ? xa_load(&sn->devs, skb->dev->ifindex) : NULL;
	if (sdev) {
		srnic_counter_inc(sdev, SRNIC_CNT_RCVD_PKTS);
		srnic_counter_inc(sdev, SRNIC_CNT_RX_DROPPED);
	}
	rcu_read_unlock();
	kfree_skb(skb);
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
		.local_udp_port = htons(SRNIC_ROCE_UDP_PORT),
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
		if (!err && IS_ENABLED(CONFIG_IPV6))
			err = srnic_udp_sock_create(net, true, &sn->sock6);
		if (err) {
			srnic_net_release_socks(sn);
			if (err == -EADDRINUSE)
				pr_err("%s: cannot use %s: UDP port %u is already in use in its network namespace (rdma_rxe owns it in the initial namespace while loaded)\n",
				       SRNIC_DRV_NAME, ndev_name,
				       SRNIC_ROCE_UDP_PORT);
			else
				pr_err("%s: cannot use %s: RoCEv2 UDP socket: %d\n",
				       SRNIC_DRV_NAME, ndev_name, err);
		}
	}
	if (!err)
		sn->users++;
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
	if (!WARN_ON_ONCE(!sn->users) && !--sn->users)
		srnic_net_release_socks(sn);
	mutex_unlock(&sn->lock);
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
