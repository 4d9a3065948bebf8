// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: moving bytes to and from registered memory.
 *
 * A user MR keeps an array of its pinned pages, so the byte at MR address
 * va is found by arithmetic, never by walking a scatterlist. A DMA MR
 * (kernel users) covers kernel virtual addresses: srnic's "DMA addresses"
 * are kernel virtual addresses (the device has no DMA device, so the core
 * maps with ib_uses_virt_dma()). A fast-registration MR keeps the kernel
 * virtual address of each of its pages (ibmr.page_size bytes each).
 *
 * Nothing here checks keys, rights or bounds: callers do that with
 * srnic_mr_check() before any byte moves.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <rdma/ib_umem.h>
#include <kunit/visibility.h>

#include "srnic.h"

/*
 * Fast registration: the kernel address of MR address @va, and how many
 * bytes from it on lie in the same page; NULL if no listed page holds it.
 * The consumer may invalidate the MR and map a new, shorter page list
 * while a remote request that passed the key check copies (the check and
 * the copy are not atomic with respect to map_mr_sg()): the page number
 * is bounded by the list as it is now, and a miss is that request's
 * failure, not the kernel's.
 */
static u8 *srnic_fr_addr(const struct srnic_mr *mr, u64 va, u32 *room)
{
	u32 ps = mr->ibmr.page_size;
	u64 off = va - (READ_ONCE(mr->iova) & ~(u64)(ps - 1));
	u64 pg = off / ps;

	if (pg >= READ_ONCE(mr->fr_n))
		return NULL;
	*room = ps - (off & (ps - 1));
	return (u8 *)(uintptr_t)(mr->fr_pages[pg] + (off & (ps - 1)));
}

/**
 * srnic_mr_store64() - store 8 bytes into an MR with one store
 * @mr: the MR
 * @va: an 8-byte aligned MR address; [@va, @va + 8) checked to lie in @mr
 * @val: the bytes, in the order they are to appear in memory
 *
 * An RDMA Atomic Write is seen by a CPU reading the target as the old or
 * the new 8 bytes, never a mix. If the MR's I/O address and its pages
 * disagree on alignment (a user MR registered at an odd iova), no single
 * store exists and the bytes are copied.
 *
 * Context: any; never sleeps.
 * Return: 0, or -EFAULT as srnic_mr_copy().
 */
int srnic_mr_store64(struct srnic_mr *mr, u64 va, u64 val)
{
	u64 off;
	u8 *addr;

	if (mr->fr_pages) {
		u32 room;

		addr = srnic_fr_addr(mr, va, &room);
		if (addr && !((uintptr_t)addr & 7)) {
			WRITE_ONCE(*(u64 *)addr, val);
			return 0;
		}
		return srnic_mr_copy(mr, va, &val, sizeof(val), true);
	}
	if (mr->user && !mr->umem)
		return -EFAULT;	/* zero-length: never passes a range check */
	if (!mr->umem) {
		WRITE_ONCE(*(u64 *)(uintptr_t)va, val);
		return 0;
	}
	off = va - mr->iova + mr->page_off;
	if ((off & 7) || WARN_ON_ONCE((off >> PAGE_SHIFT) >= mr->npages))
		return srnic_mr_copy(mr, va, &val, sizeof(val), true);
	addr = kmap_local_page(mr->pages[off >> PAGE_SHIFT]);
	WRITE_ONCE(*(u64 *)(addr + (off & ~PAGE_MASK)), val);
	flush_dcache_page(mr->pages[off >> PAGE_SHIFT]);
	kunmap_local(addr);
	return 0;
}

/**
 * srnic_mr_copy() - copy between a buffer and an MR
 * @mr: the MR
 * @va: first MR address; [@va, @va + @len) checked to lie in @mr
 * @buf: kernel buffer
 * @len: bytes
 * @to_mr: copy @buf into the MR, else the MR into @buf
 *
 * Context: any; never sleeps.
 * Return: 0, or -EFAULT if a fast-registration MR's page list no longer
 * holds the range (remapped after the key check): then nothing more is
 * copied, and a copy out of the MR leaves @buf zeroed past what was
 * copied.
 */
int srnic_mr_copy(struct srnic_mr *mr, u64 va, void *buf, u32 len,
		  bool to_mr)
{
	u64 off;

	if (!len)
		return 0;
	while (mr->fr_pages && len) {
		u32 room, n;
		u8 *addr = srnic_fr_addr(mr, va, &room);

		if (!addr) {
			/* Remapped under us: no stale byte leaves. */
			if (!to_mr)
				memset(buf, 0, len);
			return -EFAULT;
		}
		n = min(len, room);
		if (to_mr)
			memcpy(addr, buf, n);
		else
			memcpy(buf, addr, n);
		buf += n;
		len -= n;
		va += n;
	}
	if (mr->fr_pages)
		return 0;
	if (mr->user && !mr->umem) {
		if (!to_mr)
			memset(buf, 0, len);
		return -EFAULT;	/* zero-length: never passes a range check */
	}
	if (!mr->umem) {
		void *addr = (void *)(uintptr_t)va;

		if (to_mr)
			memcpy(addr, buf, len);
		else
			memcpy(buf, addr, len);
		return 0;
	}

	off = va - mr->iova + mr->page_off;
	while (len) {
		u64 pg = off >> PAGE_SHIFT;
		u32 po = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - po);
		u8 *addr;

		if (WARN_ON_ONCE(pg >= mr->npages)) {
			if (!to_mr)
				memset(buf, 0, len);
			return -EFAULT;
		}
		addr = kmap_local_page(mr->pages[pg]);
		if (to_mr) {
			memcpy(addr + po, buf, n);
			flush_dcache_page(mr->pages[pg]);
		} else {
			memcpy(buf, addr + po, n);
		}
		kunmap_local(addr);
		buf += n;
		len -= n;
		off += n;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_mr_copy);

/**
 * srnic_sge_copy() - copy between a buffer and a scatter/gather list
 * @sdev: the device (finds the MRs by lkey)
 * @pd: the PD of the QP whose WQE the SGEs belong to
 * @sge: the list
 * @num_sge: entries in @sge
 * @off: message offset of the first byte
 * @buf: kernel buffer
 * @len: bytes
 * @to_mem: scatter @buf into the SGEs (needs IB_ACCESS_LOCAL_WRITE),
 *	else gather from them
 *
 * Every SGE touched is checked (key, PD, right, bounds) before its bytes
 * move.
 *
 * Context: any; never sleeps.
 * Return: 0; -EINVAL for an unknown key or bytes beyond the list;
 * -EPERM, -EACCES, -ERANGE as srnic_mr_check(); -EFAULT as
 * srnic_mr_copy().
 */
int srnic_sge_copy(struct srnic_dev *sdev, struct ib_pd *pd,
		   const struct ib_sge *sge, u32 num_sge, u32 off, void *buf,
		   u32 len, bool to_mem)
{
	u32 i = 0;

	while (i < num_sge && off >= sge[i].length) {
		off -= sge[i].length;
		i++;
	}
	while (len) {
		struct srnic_mr *mr;
		u32 n;
		int err;

		if (i >= num_sge)
			return -EINVAL;
		n = min(len, sge[i].length - off);
		mr = srnic_mr_get(sdev, sge[i].lkey, SRNIC_LKEY);
		if (!mr)
			return -EINVAL;
		err = srnic_mr_check(mr, pd, sge[i].addr + off, n,
				     to_mem ? IB_ACCESS_LOCAL_WRITE : 0);
		if (!err)
			err = srnic_mr_copy(mr, sge[i].addr + off, buf, n,
					    to_mem);
		srnic_mr_put(mr);
		if (err)
			return err;
		buf += n;
		len -= n;
		off = 0;
		i++;
	}
	return 0;
}
