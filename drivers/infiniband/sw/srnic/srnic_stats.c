// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: hardware counters, shown by "rdma statistic show link DEV/1".
 * Names follow rdma_rxe's where the meaning is the same.
 */
#include <rdma/ib_verbs.h>

#include "srnic.h"

static const struct rdma_stat_desc srnic_counter_descs[] = {
	[SRNIC_CNT_SENT_PKTS].name = "sent_pkts",
	[SRNIC_CNT_RCVD_PKTS].name = "rcvd_pkts",
	[SRNIC_CNT_RX_DROPPED].name = "rx_dropped",
	[SRNIC_CNT_LINK_DOWNED].name = "link_downed",
	[SRNIC_CNT_ICRC_ERR].name = "rcvd_icrc_err",
	[SRNIC_CNT_MALFORMED].name = "rcvd_malformed",
	[SRNIC_CNT_NO_QP].name = "rcvd_no_qp",
	[SRNIC_CNT_DUP_REQ].name = "duplicate_request",
	[SRNIC_CNT_OOS_REQ].name = "out_of_seq_request",
	[SRNIC_CNT_RCVD_RNR].name = "rcvd_rnr_err",
	[SRNIC_CNT_SEND_RNR].name = "send_rnr_err",
	[SRNIC_CNT_RCVD_SEQ_ERR].name = "rcvd_seq_err",
	[SRNIC_CNT_RETRY_EXC].name = "retry_exceeded_err",
	[SRNIC_CNT_RNR_RETRY_EXC].name = "retry_rnr_exceeded_err",
	[SRNIC_CNT_COMP_RETRY].name = "completer_retry_err",
	[SRNIC_CNT_RETRANSMITS].name = "retransmits",
	[SRNIC_CNT_SEND_ERR].name = "send_err",
	[SRNIC_CNT_RDMA_SENDS].name = "rdma_sends",
	[SRNIC_CNT_RDMA_RECVS].name = "rdma_recvs",
	[SRNIC_CNT_ACKS_SENT].name = "acks_sent",
	[SRNIC_CNT_NAKS_SENT].name = "naks_sent",
	[SRNIC_CNT_BAD_WQE].name = "bad_wqe",
};

static_assert(ARRAY_SIZE(srnic_counter_descs) == SRNIC_NUM_COUNTERS);

/**
 * srnic_alloc_hw_port_stats() - describe the port counters
 * @ibdev: the device
 * @port: 1
 *
 * Context: process context.
 * Return: the counter set, or NULL.
 */
struct rdma_hw_stats *srnic_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	return rdma_alloc_hw_stats_struct(srnic_counter_descs,
					  ARRAY_SIZE(srnic_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * srnic_get_hw_stats() - read the counters
 * @ibdev: the device
 * @stats: filled in
 * @port: 1
 * @index: unused: all counters are read
 *
 * Context: process context.
 * Return: the number of counters.
 */
int srnic_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct srnic_dev *sdev = to_sdev(ibdev);
	int i;

	for (i = 0; i < SRNIC_NUM_COUNTERS; i++)
		stats->value[i] = atomic64_read(&sdev->counters[i]);
	return SRNIC_NUM_COUNTERS;
}
