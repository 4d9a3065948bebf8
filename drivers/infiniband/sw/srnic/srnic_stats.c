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
