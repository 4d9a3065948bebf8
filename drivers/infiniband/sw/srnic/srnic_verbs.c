// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: device, port, user context, protection domain and address handle
 * verbs.
 */
#include <linux/module.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "srnic.h"

/*
 * Bytes of RoCEv2 framing inside the Ethernet MTU: IPv6 (40) + UDP (8) +
 * BTH (12) + the largest extended headers (RETH 16 + ImmDt 4 or AtomicETH
 * 28) + ICRC (4). The active MTU is the largest IB MTU the rest can carry.
 */
#define SRNIC_ROCE_OVERHEAD	(40 + 8 + 12 + 28 + 4)

static enum ib_mtu srnic_active_mtu(unsigned int eth_mtu)
{
	static const enum ib_mtu mtus[] = {
		IB_MTU_4096, IB_MTU_2048, IB_MTU_1024, IB_MTU_512, IB_MTU_256,
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(mtus); i++)
		if (ib_mtu_enum_to_int(mtus[i]) + SRNIC_ROCE_OVERHEAD <= eth_mtu)
			return mtus[i];
	return IB_MTU_256;
}

/*
 * Load-time defaults for the object limits of new devices: an
 * administrator can make them smaller (never larger) than the built-in
 * maxima, e.g. to share a host between tenants; the tests use small values
 * to exhaust each limit quickly.
 */
static unsigned int max_qp = SRNIC_MAX_QP;
module_param(max_qp, uint, 0444);
MODULE_PARM_DESC(max_qp, "QPs per device, 1.." __stringify(SRNIC_MAX_QP));
static unsigned int max_cq = SRNIC_MAX_CQ;
module_param(max_cq, uint, 0444);
MODULE_PARM_DESC(max_cq, "CQs per device, 1.." __stringify(SRNIC_MAX_CQ));
static unsigned int max_mr = SRNIC_MAX_MR;
module_param(max_mr, uint, 0444);
MODULE_PARM_DESC(max_mr, "MRs per device, 1.." __stringify(SRNIC_MAX_MR));
static unsigned int max_pd = SRNIC_MAX_PD;
module_param(max_pd, uint, 0444);
MODULE_PARM_DESC(max_pd, "PDs per device, 1.." __stringify(SRNIC_MAX_PD));
static unsigned int max_srq = SRNIC_MAX_SRQ;
module_param(max_srq, uint, 0444);
MODULE_PARM_DESC(max_srq, "SRQs per device, 1.." __stringify(SRNIC_MAX_SRQ));
static unsigned int max_ah = SRNIC_MAX_AH;
module_param(max_ah, uint, 0444);
MODULE_PARM_DESC(max_ah, "AHs per device, 1.." __stringify(SRNIC_MAX_AH));

/**
 * srnic_init_device_attr() - the device's advertised limits
 * @sdev: the device
 * @ndev: its netdev
 *
 * Only capabilities that work are advertised; every limit here is
 * enforced by the verb that creates the object.
 *
 * Context: process context.
 */
void srnic_init_device_attr(struct srnic_dev *sdev, struct net_device *ndev)
{
	struct ib_device_attr *a = &sdev->attr;

	memset(a, 0, sizeof(*a));
	a->vendor_id = SRNIC_VENDOR_ID;
	a->sys_image_guid = sdev->ibdev.node_guid;
	a->max_mr_size = SRNIC_MAX_MR_SIZE;
	a->page_size_cap = PAGE_SIZE;
	a->max_qp = clamp_val(max_qp, 1, SRNIC_MAX_QP);
	a->max_qp_wr = SRNIC_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_SRQ_RESIZE | IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_MEM_MGT_EXTENSIONS |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B |
			      SRNIC_DEVICE_ATOMIC_WRITE |
			      SRNIC_DEVICE_FLUSH_GLOBAL;
	/* "rdma link delete" may remove the device. */
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	a->max_send_sge = SRNIC_MAX_SGE;
	a->max_recv_sge = SRNIC_MAX_SGE;
	a->max_sge_rd = SRNIC_MAX_SGE;
	a->max_cq = clamp_val(max_cq, 1, SRNIC_MAX_CQ);
	a->max_cqe = SRNIC_MAX_CQE;
	a->max_mr = clamp_val(max_mr, 1, SRNIC_MAX_MR);
	a->max_mw = a->max_mr;
	a->max_fast_reg_page_list_len = SRNIC_MAX_FR_PAGES;
	a->max_pd = clamp_val(max_pd, 1, SRNIC_MAX_PD);
	a->max_qp_rd_atom = SRNIC_MAX_QP_RD_ATOM;
	a->max_qp_init_rd_atom = SRNIC_MAX_QP_INIT_RD_ATOM;
	a->max_res_rd_atom = SRNIC_MAX_RES_RD_ATOM;
	a->atomic_cap = IB_ATOMIC_HCA;
	a->max_ah = clamp_val(max_ah, 1, SRNIC_MAX_AH);
	a->max_srq = clamp_val(max_srq, 1, SRNIC_MAX_SRQ);
	a->max_srq_wr = SRNIC_MAX_SRQ_WR;
	a->max_srq_sge = SRNIC_MAX_SRQ_SGE;
	a->max_pkeys = SRNIC_MAX_PKEYS;
	a->local_ca_ack_delay = SRNIC_LOCAL_CA_ACK_DELAY;
}

/**
 * srnic_query_device() - report the device attributes
 * @ibdev: the device
 * @attr: filled in
 * @udata: librxe sends no driver data
 *
 * Context: process context.
 * Return: 0, or -EINVAL if driver data was passed.
 */
int srnic_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	*attr = to_sdev(ibdev)->attr;
	return 0;
}

/**
 * srnic_port_mtu() - the port's active MTU in bytes
 * @sdev: the device
 *
 * What fits in one packet on the netdev: a UD message's limit.
 *
 * Context: any.
 * Return: 256..4096.
 */
u32 srnic_port_mtu(struct srnic_dev *sdev)
{
	unsigned int mtu = ETH_DATA_LEN;
	struct net_device *ndev;

	ndev = srnic_ndev_get(sdev);
	if (ndev) {
		mtu = READ_ONCE(ndev->mtu);
		dev_put(ndev);
	}
	return ib_mtu_enum_to_int(srnic_active_mtu(mtu));
}

/**
 * srnic_query_port() - report the port, which follows the netdev
 * @ibdev: the device
 * @port: 1
 * @attr: filled in (zeroed by the core)
 *
 * Context: process context, may sleep (reads the link speed under RTNL).
 * Return: 0 or -errno.
 */
int srnic_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct srnic_dev *sdev = to_sdev(ibdev);
	struct net_device *ndev;
	bool up = false;
	unsigned int mtu = ETH_DATA_LEN;

	ndev = srnic_ndev_get(sdev);
	if (ndev) {
		up = netif_running(ndev) && netif_carrier_ok(ndev);
		mtu = READ_ONCE(ndev->mtu);
		dev_put(ndev);
	}

	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = srnic_active_mtu(mtu);
	attr->gid_tbl_len = SRNIC_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = 1U << 31;
	attr->pkey_tbl_len = SRNIC_MAX_PKEYS;
	attr->max_vl_num = 1;
	attr->ip_gids = true;
	if (ndev)
		ib_get_eth_speed(ibdev, port, &attr->active_speed,
				 &attr->active_width);
	else
		attr->active_width = IB_WIDTH_1X;
	return 0;
}

/**
 * srnic_get_port_immutable() - fixed port properties: RoCEv2 only
 * @ibdev: the device
 * @port: 1
 * @immutable: filled in
 *
 * Context: process context, during registration.
 * Return: 0 or -errno.
 */
int srnic_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = SRNIC_MAX_PKEYS;
	immutable->gid_tbl_len = SRNIC_GID_TBL_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

/**
 * srnic_get_link_layer() - Ethernet
 * @ibdev: the device
 * @port: 1
 *
 * Context: any.
 * Return: IB_LINK_LAYER_ETHERNET.
 */
enum rdma_link_layer srnic_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/**
 * srnic_query_pkey() - the one P_Key: the default, full membership
 * @ibdev: the device
 * @port: 1
 * @index: must be 0
 * @pkey: filled in
 *
 * Context: any.
 * Return: 0, or -EINVAL for an index past the table.
 */
int srnic_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index >= SRNIC_MAX_PKEYS)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/**
 * srnic_alloc_ucontext() - a process opens the device
 * @ibuc: the context (allocated by the core)
 * @udata: librxe sends no driver data
 *
 * Each context pins the module: "rmmod srnic" while a process has the
 * device open reports the module busy. The core does not pin it for us,
 * because srnic supports disassociation (a removed device's processes get
 * IB_EVENT_DEVICE_FATAL instead of blocking the removal).
 *
 * Context: process context.
 * Return: 0 or -errno.
 */
int srnic_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibuc->device);

	if (!srnic_obj_get(&sdev->n_ucontext, SRNIC_MAX_UCONTEXT))
		return -ENOMEM;
	if (!try_module_get(THIS_MODULE)) {
		srnic_obj_put(&sdev->n_ucontext);
		return -ENODEV;
	}
	return 0;
}

/**
 * srnic_dealloc_ucontext() - a process closed the device (or lost it)
 * @ibuc: the context
 *
 * Context: process context.
 */
void srnic_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	srnic_obj_put(&to_sdev(ibuc->device)->n_ucontext);
	module_put(THIS_MODULE);
}

/**
 * srnic_disassociate_ucontext() - the device goes away under a process
 * @ibuc: the context
 *
 * Nothing to do: rings mapped by the process are plain pages that its
 * mappings keep alive, and every object is destroyed by the core.
 *
 * Context: process context.
 */
void srnic_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * srnic_alloc_pd() - allocate a protection domain
 * @ibpd: the PD (allocated by the core)
 * @udata: unused
 *
 * Context: process context.
 * Return: 0, or -ENOMEM past max_pd.
 */
int srnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibpd->device);

	return srnic_obj_get(&sdev->n_pd, sdev->attr.max_pd) ? 0 : -ENOMEM;
}

/**
 * srnic_dealloc_pd() - free a protection domain
 * @ibpd: the PD
 * @udata: unused
 *
 * Context: process context.
 * Return: 0.
 */
int srnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	srnic_obj_put(&to_sdev(ibpd->device)->n_pd);
	return 0;
}

/**
 * srnic_av_from_attr() - resolve an address vector for RoCEv2
 * @sdev: the device
 * @av: filled in
 * @attr: the core's attribute, with its source GID attribute resolved
 *
 * Context: any.
 * Return: 0, or -EINVAL if @attr is not a usable RoCEv2 path.
 */
int srnic_av_from_attr(struct srnic_dev *sdev, struct srnic_av *av,
		       const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	enum rdma_network_type ntype;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH)) {
		srnic_dbg(sdev, "address vector without GRH\n");
		return -EINVAL;
	}
	if (rdma_ah_get_port_num(attr) != 1)
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr)
		return -EINVAL;
	ntype = rdma_gid_attr_network_type(sgid_attr);
	if (ntype != RDMA_NETWORK_IPV4 && ntype != RDMA_NETWORK_IPV6) {
		srnic_dbg(sdev, "source GID %u is not a RoCEv2 GID\n",
			  grh->sgid_index);
		return -EINVAL;
	}

	memset(av, 0, sizeof(*av));
	av->network_type = ntype;
	av->sgid_index = grh->sgid_index;
	av->sgid = sgid_attr->gid;
	av->dgid = grh->dgid;
	av->flow_label = grh->flow_label;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->sl = rdma_ah_get_sl(attr);
	av->static_rate = rdma_ah_get_static_rate(attr);
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	return 0;
}

/**
 * srnic_av_to_attr() - report an address vector (query_ah, query_qp)
 * @sdev: the device
 * @av: the address vector
 * @attr: filled in; carries no GID attribute reference
 *
 * Context: any.
 */
void srnic_av_to_attr(struct srnic_dev *sdev, const struct srnic_av *av,
		      struct rdma_ah_attr *attr)
{
	union ib_gid dgid = av->dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_static_rate(attr, av->static_rate);
	rdma_ah_set_grh(attr, &dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
}

/**
 * srnic_create_ah() - create an address handle
 * @ibah: the AH (allocated by the core)
 * @init_attr: attribute and flags; without RDMA_CREATE_AH_SLEEPABLE the
 *	caller may be atomic
 * @udata: for librxe, receives the AH number it puts in UD WQEs
 *
 * Context: any unless RDMA_CREATE_AH_SLEEPABLE.
 * Return: 0 or -errno.
 */
int srnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_sdev(ibah->device);
	struct srnic_ah *ah = to_sah(ibah);
	gfp_t gfp = (init_attr->flags & RDMA_CREATE_AH_SLEEPABLE) ?
		    GFP_KERNEL : GFP_ATOMIC;
	struct rxe_create_ah_resp resp = {};
	unsigned long flags;
	int err;

	err = srnic_av_from_attr(sdev, &ah->av, init_attr->ah_attr);
	if (err)
		return err;
	if (udata && udata->outlen && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!srnic_obj_get(&sdev->n_ah, sdev->attr.max_ah))
		return -ENOMEM;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	err = __xa_alloc_cyclic(&sdev->ah_xa, &ah->ah_num, ah,
				XA_LIMIT(1, SRNIC_MAX_AH), &sdev->ah_next, gfp);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	if (err < 0)
		goto out_put;

	if (udata && udata->outlen) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto out_erase;
	}
	return 0;

out_erase:
	xa_erase_irq(&sdev->ah_xa, ah->ah_num);
out_put:
	srnic_obj_put(&sdev->n_ah);
	return err;
}

/**
 * srnic_query_ah() - report an address handle
 * @ibah: the AH
 * @attr: filled in
 *
 * Context: any.
 * Return: 0.
 */
int srnic_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	srnic_av_to_attr(to_sdev(ibah->device), &to_sah(ibah)->av, attr);
	return 0;
}

/**
 * srnic_destroy_ah() - destroy an address handle
 * @ibah: the AH
 * @flags: RDMA_DESTROY_AH_SLEEPABLE or not
 *
 * Context: any unless RDMA_DESTROY_AH_SLEEPABLE.
 * Return: 0.
 */
int srnic_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct srnic_dev *sdev = to_sdev(ibah->device);
	struct srnic_ah *ah = to_sah(ibah);
	unsigned long irqflags;

	xa_lock_irqsave(&sdev->ah_xa, irqflags);
	__xa_erase(&sdev->ah_xa, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ah_xa, irqflags);
	srnic_obj_put(&sdev->n_ah);
	return 0;
}

/**
 * srnic_ah_av() - the address vector of an AH, by the number in a UD WQE
 * @sdev: the device
 * @pd: the posting QP's PD: the AH must belong to it
 * @ah_num: the number
 * @av: filled in with a copy
 *
 * Context: any; never sleeps.
 * Return: 0, or -EINVAL if no such AH exists in @pd.
 */
int srnic_ah_av(struct srnic_dev *sdev, struct ib_pd *pd, u32 ah_num,
		struct srnic_av *av)
{
	struct srnic_ah *ah;
	unsigned long flags;
	int err = -EINVAL;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	ah = xa_load(&sdev->ah_xa, ah_num);
	if (ah && ah->ibah.pd == pd) {
		*av = ah->av;
		err = 0;
	}
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	return err;
}
