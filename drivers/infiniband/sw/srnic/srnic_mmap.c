// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: mapping rings into user space.
 *
 * Each ring a process may map gets a cookie from the core's mmap entry
 * table (rdma_user_mmap_entry_insert()); the create/resize response hands
 * the cookie to librxe as struct mminfo's offset. A cookie maps once: a
 * second mmap() of the same offset fails, so one ring never has two
 * mappings to reason about.
 *
 * Once published, the ring's memory belongs to its entry and is freed with
 * it (srnic_mmap_free()), when neither the object nor an mmap() in progress
 * uses it: a process racing destroy against mmap cannot make the kernel
 * map freed memory. A finished mapping holds a reference on each page it
 * inserted, so a process that keeps a destroyed object's ring mapped keeps
 * a harmless orphan.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "srnic.h"

/**
 * struct srnic_mmap_entry - one mappable ring
 * @rdma: the core's entry (offset cookie, refcount)
 * @addr: the vmalloc_user() memory; the entry owns it
 * @size: bytes at @addr
 * @mapped: set by the first successful mmap()
 */
struct srnic_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *addr;
	size_t size;
	atomic_t mapped;
};

static struct srnic_mmap_entry *
to_smmap(struct rdma_user_mmap_entry *rdma_entry)
{
	return container_of(rdma_entry, struct srnic_mmap_entry, rdma);
}

/**
 * srnic_mmap_entry_insert() - create the cookie for a ring
 * @uctx: the process's context
 * @addr: vmalloc_user() memory; on success the entry owns it
 * @size: its size
 * @offset: returned mmap offset
 *
 * Context: process context, may sleep.
 * Return: the entry or an ERR_PTR.
 */
struct srnic_mmap_entry *srnic_mmap_entry_insert(struct ib_ucontext *uctx,
						 void *addr, size_t size,
						 u64 *offset)
{
	struct srnic_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	entry->addr = addr;
	entry->size = size;
	atomic_set(&entry->mapped, 0);
	err = rdma_user_mmap_entry_insert(uctx, &entry->rdma, PAGE_ALIGN(size));
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	*offset = rdma_user_mmap_get_offset(&entry->rdma);
	return entry;
}

/**
 * srnic_mmap_entry_remove() - withdraw a cookie (object destroyed/resized)
 * @entry: the entry
 *
 * The entry and its memory are freed through srnic_mmap_free() once no
 * mmap() is using them.
 *
 * Context: process context.
 */
void srnic_mmap_entry_remove(struct srnic_mmap_entry *entry)
{
	rdma_user_mmap_entry_remove(&entry->rdma);
}

/**
 * srnic_mmap_free() - the core releases an entry
 * @rdma_entry: the entry
 *
 * Context: process context.
 */
void srnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct srnic_mmap_entry *entry = to_smmap(rdma_entry);

	vfree(entry->addr);
	kfree(entry);
}

/**
 * srnic_mmap() - map a ring for librxe
 * @uctx: the process's context
 * @vma: the mapping; must be shared, cover exactly the ring (the core
 *	checks the page count) and be the cookie's first mapping
 *
 * Context: process context (mmap_lock held for write).
 * Return: 0 or -errno.
 */
int srnic_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct srnic_mmap_entry *entry;
	int err;

	rdma_entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma_entry) {
		ibdev_dbg(uctx->device, "mmap: no ring at offset %#lx (%lu pages)\n",
			  vma->vm_pgoff << PAGE_SHIFT, vma_pages(vma));
		return -EINVAL;
	}
	entry = to_smmap(rdma_entry);
	if (atomic_cmpxchg(&entry->mapped, 0, 1)) {
		ibdev_dbg(uctx->device, "mmap: ring at offset %#lx already mapped\n",
			  vma->vm_pgoff << PAGE_SHIFT);
		err = -EBUSY;
		goto out_put;
	}
	err = remap_vmalloc_range(vma, entry->addr, 0);
	if (err)
		atomic_set(&entry->mapped, 0);
out_put:
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}
