// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_test: the rings of the rxe user ABI, as a test that writes them
 * itself sees them: found among the process's uverbs mappings, their
 * elements addressed, the send doorbell rung.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "srnic_test.h"

/**
 * st_uverbs_maps() - the process's mappings of a uverbs device
 * @out: filled in
 * @max: room in @out
 *
 * Return: the number found, or -1 if /proc/self/maps cannot be read.
 */
int st_uverbs_maps(struct st_range *out, int max)
{
	char line[512], path[256];
	unsigned long s, e;
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < max) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &s, &e,
			   path) < 2)
			continue;
		if (strstr(path, "/infiniband/uverbs")) {
			out[n].start = s;
			out[n].end = e;
			n++;
		}
	}
	fclose(f);
	return n;
}

/**
 * st_ring_plausible() - does a mapping of @len bytes hold an rxe ring?
 * @q: its start
 * @len: its length
 *
 * Return: true if the header's geometry fits the mapping.
 */
bool st_ring_plausible(const struct rxe_queue_buf *q, size_t len)
{
	__u64 slots = (__u64)q->index_mask + 1;

	if (len < sizeof(*q) || q->log2_elem_size < 4 ||
	    q->log2_elem_size > 16 || slots & (slots - 1) || slots > 1 << 20)
		return false;
	return sizeof(*q) + (slots << q->log2_elem_size) <= len &&
	       q->producer_index <= q->index_mask &&
	       q->consumer_index <= q->index_mask;
}

/**
 * st_ring_slot() - the element at a ring index
 * @q: the ring
 * @idx: the index (masked here)
 *
 * Return: its address.
 */
void *st_ring_slot(struct rxe_queue_buf *q, __u32 idx)
{
	return q->data + ((size_t)(idx & q->index_mask) << q->log2_elem_size);
}

/**
 * st_send_doorbell() - the send doorbell of the rxe ABI
 * @qp: the QP
 *
 * A POST_SEND command with no work requests, as librxe rings it after
 * writing the send ring itself.
 *
 * Return: 0 or -1 (errno set).
 */
int st_send_doorbell(struct ibv_qp *qp)
{
	return st_doorbell_handle(qp->context->cmd_fd, qp->handle);
}

/**
 * st_doorbell_handle() - the send doorbell by handle
 * @cmd_fd: the device context's command file
 * @qp_handle: the QP's uverbs handle
 *
 * st_send_doorbell() without the QP's library structure: a thread may
 * ring it while another destroys the QP (the kernel then refuses the
 * handle).
 *
 * Return: 0 or -1 (errno set).
 */
int st_doorbell_handle(int cmd_fd, __u32 qp_handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} c;
	struct ib_uverbs_post_send_resp resp;

	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = qp_handle;
	c.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return write(cmd_fd, &c, sizeof(c)) == sizeof(c) ? 0 : -1;
}

/**
 * st_modify_state_handle() - move a QP to a state, by handle
 * @cmd_fd: the device context's command file
 * @qp_handle: the QP's uverbs handle
 * @state: the enum ibv_qp_state
 *
 * The uverbs MODIFY_QP command with IBV_QP_STATE alone, without the
 * QP's library structure (see st_doorbell_handle()). The library's idea
 * of the QP's state is not updated.
 *
 * Return: 0 or -1 (errno set).
 */
int st_modify_state_handle(int cmd_fd, __u32 qp_handle, int state)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_modify_qp cmd;
	} c;

	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_MODIFY_QP;
	c.hdr.in_words = sizeof(c) / 4;
	c.cmd.qp_handle = qp_handle;
	c.cmd.attr_mask = IBV_QP_STATE;
	c.cmd.qp_state = state;
	return write(cmd_fd, &c, sizeof(c)) == sizeof(c) ? 0 : -1;
}
