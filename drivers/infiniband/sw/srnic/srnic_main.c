// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: module init, the ib_device_ops table, "rdma link" support and the
 * netdev notifier.
 *
 * Devices are created with "rdma link add NAME type srnic netdev DEV". They
 * report driver_id RDMA_DRIVER_RXE so that the stock librxe provider binds
 * to them, which obliges us to stay invisible to rdma_rxe itself: the netdev
 * is never attached with ib_device_set_netdev() (rdma_rxe finds its devices
 * with ib_device_get_by_netdev(..., RDMA_DRIVER_RXE) and casts them), only
 * reported through the get_netdev op. srnic tracks its own devices and never
 * calls ib_unregister_driver(); "rmmod rdma_rxe" does, and removes srnic
 * devices too, which dealloc_driver handles like any other removal.
 */
#include <linux/module.h>
#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>

#include "srnic.h"

MODULE_AUTHOR("srnic developers");
MODULE_DESCRIPTION("srnic: software RoCEv2 RDMA NIC");
MODULE_LICENSE("Dual BSD/GPL");
/* scripts/version.sh's, passed by Kbuild; "modinfo srnic" shows it. */
#ifndef SRNIC_VERSION
#define SRNIC_VERSION "0.1.0"
#endif
MODULE_VERSION(SRNIC_VERSION);

/* All srnic devices, registered or being registered. */
static LIST_HEAD(srnic_devices);
static DEFINE_MUTEX(srnic_devices_lock);
static atomic_t srnic_ndevices = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(srnic_devices_wq);

/**
 * srnic_ndev_get() - take a reference on the device's netdev
 * @sdev: the device
 *
 * Context: any; does not sleep.
 * Return: the netdev with a reference the caller drops with dev_put(), or
 * NULL if the netdev has unregistered.
 */
struct net_device *srnic_ndev_get(struct srnic_dev *sdev)
{
	struct net_device *ndev;

	rcu_read_lock();
	ndev = rcu_dereference(sdev->ndev);
	if (ndev)
		dev_hold(ndev);
	rcu_read_unlock();
	return ndev;
}

static struct net_device *srnic_get_netdev(struct ib_device *ibdev, u32 port)
{
	if (port != 1)
		return NULL;
	return srnic_ndev_get(to_sdev(ibdev));
}

/*
 * Drop the device's hold on its netdev. The netdev unregistration path
 * holds its own reference across a grace period after the notifiers ran,
 * so an RCU reader that found the pointer can still dev_hold() it safely.
 */
static void srnic_detach_ndev(struct srnic_dev *sdev)
{
	struct net_device *ndev;

	ndev = rcu_replace_pointer(sdev->ndev, NULL, true);
	if (ndev)
		netdev_put(ndev, &sdev->ndev_tracker);
}

static void srnic_dealloc_driver(struct ib_device *ibdev)
{
	struct srnic_dev *sdev = to_sdev(ibdev);

	mutex_lock(&srnic_devices_lock);
	list_del_init(&sdev->list);
	srnic_detach_ndev(sdev);
	mutex_unlock(&srnic_devices_lock);

	WARN_ON_ONCE(!xa_empty(&sdev->qp_xa) || !xa_empty(&sdev->mr_xa) ||
		     !xa_empty(&sdev->ah_xa) || !xa_empty(&sdev->srq_xa));
	xa_destroy(&sdev->qp_xa);
	xa_destroy(&sdev->ah_xa);
	xa_destroy(&sdev->mr_xa);
	xa_destroy(&sdev->srq_xa);
	kvfree(sdev->mr_keygen);
	srnic_dp_dev_cleanup(sdev);
	srnic_net_del_dev(sdev->sn, sdev, sdev->ifindex);
	srnic_net_put(sdev->sn);
	srnic_gid_cleanup(sdev);
	/* After srnic_net_del_dev(): no receive can count on it any more. */
	free_percpu(sdev->counters);

	if (atomic_dec_and_test(&srnic_ndevices))
		wake_up(&srnic_devices_wq);
}

static const struct ib_device_ops srnic_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = SRNIC_UVERBS_ABI_VERSION,
	.device_group = &srnic_attr_group,

	.add_gid = srnic_add_gid,
	.alloc_hw_port_stats = srnic_alloc_hw_port_stats,
	.alloc_mr = srnic_alloc_mr,
	.alloc_mw = srnic_alloc_mw,
	.fill_res_qp_entry = srnic_fill_res_qp_entry,
	.alloc_pd = srnic_alloc_pd,
	.alloc_ucontext = srnic_alloc_ucontext,
	.create_ah = srnic_create_ah,
	.create_cq = srnic_create_cq,
	.create_qp = srnic_create_qp,
	.create_srq = srnic_create_srq,
	.create_user_ah = srnic_create_ah,
	.dealloc_driver = srnic_dealloc_driver,
	.dealloc_mw = srnic_dealloc_mw,
	.dealloc_pd = srnic_dealloc_pd,
	.dealloc_ucontext = srnic_dealloc_ucontext,
	.del_gid = srnic_del_gid,
	.dereg_mr = srnic_dereg_mr,
	.destroy_ah = srnic_destroy_ah,
	.destroy_cq = srnic_destroy_cq,
	.destroy_qp = srnic_destroy_qp,
	.destroy_srq = srnic_destroy_srq,
	.disassociate_ucontext = srnic_disassociate_ucontext,
	.get_dma_mr = srnic_get_dma_mr,
	.get_hw_stats = srnic_get_hw_stats,
	.get_link_layer = srnic_get_link_layer,
	.get_netdev = srnic_get_netdev,
	.get_port_immutable = srnic_get_port_immutable,
	.map_mr_sg = srnic_map_mr_sg,
	.mmap = srnic_mmap,
	.mmap_free = srnic_mmap_free,
	.modify_qp = srnic_modify_qp,
	.modify_srq = srnic_modify_srq,
	.poll_cq = srnic_poll_cq,
	.post_recv = srnic_post_recv,
	.post_send = srnic_post_send,
	.post_srq_recv = srnic_post_srq_recv,
	.query_ah = srnic_query_ah,
	.query_device = srnic_query_device,
	.query_pkey = srnic_query_pkey,
	.query_port = srnic_query_port,
	.query_qp = srnic_query_qp,
	.query_srq = srnic_query_srq,
	.reg_user_mr = srnic_reg_user_mr,
	.rereg_user_mr = srnic_rereg_user_mr,
	.req_notify_cq = srnic_req_notify_cq,
	.resize_cq = srnic_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, srnic_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, srnic_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, srnic_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, srnic_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, srnic_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, srnic_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, srnic_ucontext, ibuc),
};

/* Caller holds srnic_devices_lock. */
static struct srnic_dev *srnic_find_by_ndev(struct net_device *ndev)
{
	struct srnic_dev *sdev;

	list_for_each_entry(sdev, &srnic_devices, list)
		if (rcu_access_pointer(sdev->ndev) == ndev)
			return sdev;
	return NULL;
}

static int srnic_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct srnic_dev *sdev, *other;
	struct ib_device *ibdev;
	bool alive, deleted;
	int err;

	if (ndev->type != ARPHRD_ETHER) {
		pr_err("%s: cannot create %s: %s is not an Ethernet device (type %u)\n",
		       SRNIC_DRV_NAME, ibdev_name, ndev->name, ndev->type);
		return -EINVAL;
	}
	ibdev = ib_device_get_by_name(ibdev_name, RDMA_DRIVER_UNKNOWN);
	if (ibdev) {
		ib_device_put(ibdev);
		pr_err("%s: cannot create %s: an RDMA device of that name exists\n",
		       SRNIC_DRV_NAME, ibdev_name);
		return -EEXIST;
	}

	sdev = ib_alloc_device(srnic_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	INIT_LIST_HEAD(&sdev->list);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->srq_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	sdev->net = dev_net(ndev);
	sdev->ifindex = ndev->ifindex;
	srnic_gid_init(sdev);
	sdev->mr_keygen = kvcalloc(SRNIC_MAX_MR + 1, 1, GFP_KERNEL);
	sdev->counters = alloc_percpu(struct srnic_counters);
	if (!sdev->mr_keygen || !sdev->counters) {
		err = -ENOMEM;
		goto out_dealloc;
	}
	err = srnic_dp_dev_init(sdev);
	if (err)
		goto out_dealloc;

	sdev->sn = srnic_net_get(sdev->net, ndev->name);
	if (IS_ERR(sdev->sn)) {
		err = PTR_ERR(sdev->sn);
		goto out_dealloc;
	}

	/*
	 * Publish the device under RTNL, so that the netdev notifier either
	 * sees it or the netdev is seen still registered here: a device is
	 * never left bound to a netdev that is gone.
	 */
	rtnl_lock();
	mutex_lock(&srnic_devices_lock);
	other = srnic_find_by_ndev(ndev);
	if (other) {
		pr_err("%s: cannot create %s: %s already has RDMA device %s\n",
		       SRNIC_DRV_NAME, ibdev_name, ndev->name,
		       dev_name(&other->ibdev.dev));
		err = -EEXIST;
	} else if (ndev->reg_state != NETREG_REGISTERED) {
		err = -ENODEV;
	} else {
		netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
		rcu_assign_pointer(sdev->ndev, ndev);
		list_add_tail(&sdev->list, &srnic_devices);
		atomic_inc(&srnic_ndevices);
		err = 0;
	}
	mutex_unlock(&srnic_devices_lock);
	rtnl_unlock();
	if (err)
		goto out_put_net;

	ibdev = &sdev->ibdev;
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->local_dma_lkey = 0;
	/*
	 * Write-path commands the core leaves off by default and librxe
	 * uses: the send doorbell and arming a CQ.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid, ndev->dev_addr);
	snprintf(ibdev->node_desc, sizeof(ibdev->node_desc), "srnic %s",
		 ndev->name);
	srnic_init_device_attr(sdev, ndev);
	ib_set_device_ops(ibdev, &srnic_dev_ops);

	/*
	 * Found by the receive path from now on (it drops what is not
	 * addressed to the device's GIDs: none until registration adds
	 * them). dealloc_driver removes the entry on every way out.
	 */
	err = srnic_net_add_dev(sdev->sn, sdev, sdev->ifindex);
	if (err) {
		ib_dealloc_device(ibdev);
		return err;
	}

	/*
	 * Once registered, the device may be deleted at any time (rdma link
	 * delete, its netdev going): our own reference keeps its memory
	 * until we are done with it here.
	 */
	get_device(&ibdev->dev);
	err = ib_register_device(ibdev, ibdev_name, NULL);
	if (err) {
		pr_err("%s: cannot register %s on %s: %d\n", SRNIC_DRV_NAME,
		       ibdev_name, ndev->name, err);
		/* Unwound by dealloc_driver, as after any unregistration. */
		ib_dealloc_device(ibdev);
		put_device(&ibdev->dev);
		return err;
	}

	mutex_lock(&srnic_devices_lock);
	/* Deleted by someone else already: dealloc_driver took it off. */
	deleted = list_empty(&sdev->list);
	sdev->registered = !deleted && !sdev->ndev_gone;
	sdev->port_up = sdev->registered && netif_running(ndev) &&
			netif_carrier_ok(ndev);
	alive = sdev->registered;
	mutex_unlock(&srnic_devices_lock);
	if (alive)
		ibdev_info(ibdev, "created on %s\n", ndev->name);
	else if (!deleted)	/* its netdev went: nobody queued the removal */
		ib_unregister_device(ibdev);
	put_device(&ibdev->dev);
	return alive ? 0 : -ENODEV;

out_put_net:
	srnic_net_put(sdev->sn);
out_dealloc:
	srnic_dp_dev_cleanup(sdev);
	kvfree(sdev->mr_keygen);
	free_percpu(sdev->counters);
	ib_dealloc_device(&sdev->ibdev);
	return err;
}

static struct rdma_link_ops srnic_link_ops = {
	.type = SRNIC_LINK_TYPE,
	.newlink = srnic_newlink,
};

/* Report the port going up or down, once per change. */
static void srnic_port_event(struct srnic_dev *sdev, bool up)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
		.event = up ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR,
	};

	lockdep_assert_held(&srnic_devices_lock);
	if (!sdev->registered || sdev->port_up == up)
		return;
	sdev->port_up = up;
	if (!up)
		srnic_counter_inc(sdev, SRNIC_CNT_LINK_DOWNED);
	ib_dispatch_event(&ev);
}

static int srnic_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct srnic_dev *sdev;

	mutex_lock(&srnic_devices_lock);
	sdev = srnic_find_by_ndev(ndev);
	if (!sdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		/*
		 * Unregistration takes RTNL inside the core, which we hold
		 * here: queue it. The device stops using the netdev now.
		 */
		srnic_detach_ndev(sdev);
		sdev->ndev_gone = true;
		if (sdev->registered) {
			sdev->registered = false;
			ibdev_info(&sdev->ibdev, "%s unregistered: removing device\n",
				   ndev->name);
			ib_unregister_device_queued(&sdev->ibdev);
		}
		break;
	case NETDEV_UP:
	case NETDEV_CHANGE:
		srnic_port_event(sdev,
				 netif_running(ndev) && netif_carrier_ok(ndev));
		break;
	case NETDEV_DOWN:
		srnic_port_event(sdev, false);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&srnic_devices_lock);
	return NOTIFY_OK;
}

static struct notifier_block srnic_netdev_nb = {
	.notifier_call = srnic_netdev_event,
};

/**
 * srnic_unregister_net_devices() - remove devices, synchronously
 * @net: remove the devices whose netdev was in @net; NULL: all devices
 *
 * Used at module unload and when a network namespace dies (the device's
 * UDP socket cannot outlive its namespace).
 *
 * Context: process context, may sleep; RTNL not held.
 */
void srnic_unregister_net_devices(struct net *net)
{
	struct srnic_dev *sdev;

	for (;;) {
		bool found = false;

		mutex_lock(&srnic_devices_lock);
		list_for_each_entry(sdev, &srnic_devices, list) {
			if (net && sdev->net != net)
				continue;
			/* Keeps the memory alive across unregistration. */
			get_device(&sdev->ibdev.dev);
			list_del_init(&sdev->list);
			sdev->registered = false;
			found = true;
			break;
		}
		mutex_unlock(&srnic_devices_lock);
		if (!found)
			break;
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}

static int __init srnic_init(void)
{
	int err;

	err = srnic_frag_init();
	if (err)
		return err;
	err = srnic_tx_module_init();
	if (err)
		goto out_frag;
	err = srnic_net_init();
	if (err)
		goto out_tx;
	err = register_netdevice_notifier(&srnic_netdev_nb);
	if (err)
		goto out_net;
	rdma_link_register(&srnic_link_ops);
	pr_info("%s: loaded\n", SRNIC_DRV_NAME);
	return 0;

out_net:
	srnic_net_exit();
out_tx:
	srnic_tx_module_exit();
out_frag:
	srnic_frag_exit();
	return err;
}

static void __exit srnic_exit(void)
{
	rdma_link_unregister(&srnic_link_ops);
	srnic_unregister_net_devices(NULL);
	/* Removals queued by the netdev notifier or by other drivers. */
	wait_event(srnic_devices_wq, !atomic_read(&srnic_ndevices));
	unregister_netdevice_notifier(&srnic_netdev_nb);
	srnic_net_exit();
	srnic_tx_module_exit();
	srnic_frag_exit();
	pr_info("%s: unloaded\n", SRNIC_DRV_NAME);
}

module_init(srnic_init);
module_exit(srnic_exit);

MODULE_ALIAS_RDMA_LINK(SRNIC_LINK_TYPE);
