// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: packet buffers from pages that are used again, not allocated
 * again (stage 4).
 *
 * A page fragment cache (what network drivers receive into, and what
 * napi_alloc_frag() hands out) carves one high-order page; when the page
 * is used up it takes a new one unless every fragment of the old one has
 * been freed, which with a window of packets in flight is never. Kernels
 * built with init_on_alloc (Debian's, Fedora's, Ubuntu's) zero every page
 * they hand out: a profile of a 64 KiB RDMA Write stream in a 6.1 guest
 * (bpftrace, 499 Hz over 10 s) found a quarter of the kernel's samples in
 * clear_page_erms under the fragment cache's refill.
 *
 * srnic's cache keeps up to SRNIC_FRAG_PAGES pages per CPU. A page is
 * carved front to back; when it is used up the CPU moves on to the next
 * page none of whose fragments is still out, and carves it again without
 * it being freed or zeroed. Only when every page is still in use is one
 * let go (it is freed when its last fragment is) and a new one taken.
 *
 * Each page carries a reference per fragment handed out plus the bias the
 * cache holds (the page fragment cache's own scheme): the cache holds
 * @bias references, a fragment takes one of them with it, and freeing the
 * fragment (skb_free_frag(), page_frag_free()) drops it. A page whose
 * count equals the cache's bias has no fragment out, and none can appear:
 * only a fragment's holder could take another reference.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/page_ref.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <kunit/visibility.h>

#include "srnic.h"

#define SRNIC_FRAG_ORDER	3
#define SRNIC_FRAG_SIZE		(PAGE_SIZE << SRNIC_FRAG_ORDER)
/* Pages per CPU: up to 1 MiB a CPU with 4 KiB pages. */
#define SRNIC_FRAG_PAGES	32
/* More references than fragments one page can hold. */
#define SRNIC_FRAG_BIAS		(SRNIC_FRAG_SIZE / SMP_CACHE_BYTES + 1)

/**
 * struct srnic_frag_page - a page of a CPU's cache
 * @page: the page (compound, SRNIC_FRAG_ORDER), or NULL
 * @bias: references to @page the cache holds
 */
struct srnic_frag_page {
	struct page *page;
	unsigned int bias;
};

/**
 * struct srnic_frag_cache - one CPU's packet buffer pages
 * @slot: the pages
 * @cur: the slot being carved
 * @off: the next free byte of it
 * @fills: pages taken from the page allocator
 */
struct srnic_frag_cache {
	struct srnic_frag_page slot[SRNIC_FRAG_PAGES];
	unsigned int cur;
	unsigned int off;
	unsigned long fills;
};

static struct srnic_frag_cache __percpu *srnic_frag_caches;

/* Give up the cache's references; the page goes with its last fragment. */
static void srnic_frag_release(struct srnic_frag_page *s)
{
	page_ref_sub(s->page, s->bias - 1);
	put_page(s->page);
	s->page = NULL;
}

static bool srnic_frag_fill(struct srnic_frag_page *s)
{
	s->page = alloc_pages(GFP_ATOMIC | __GFP_COMP | __GFP_NOWARN |
			      __GFP_NORETRY | __GFP_NOMEMALLOC,
			      SRNIC_FRAG_ORDER);
	if (!s->page)
		return false;
	page_ref_add(s->page, SRNIC_FRAG_BIAS - 1);
	s->bias = SRNIC_FRAG_BIAS;
	return true;
}

/*
 * Move to a page with no fragment out; failing that to a new page in an
 * empty slot; failing that (every page in use) let the next page go and
 * take a new one in its place.
 */
static bool srnic_frag_next(struct srnic_frag_cache *c)
{
	struct srnic_frag_page *s;
	unsigned int i, k;
	int empty = -1;

	for (i = 1; i <= SRNIC_FRAG_PAGES; i++) {
		k = (c->cur + i) % SRNIC_FRAG_PAGES;
		s = &c->slot[k];
		if (!s->page) {
			if (empty < 0)
				empty = k;
			continue;
		}
		if (page_ref_count(s->page) == s->bias)
			goto found;
	}
	if (empty >= 0) {
		k = empty;
		s = &c->slot[k];
	} else {
		k = (c->cur + 1) % SRNIC_FRAG_PAGES;
		s = &c->slot[k];
		srnic_frag_release(s);
	}
	if (!srnic_frag_fill(s))
		return false;
	c->fills++;
found:
	/* Enough references for every fragment this carving may hand out. */
	if (s->bias != SRNIC_FRAG_BIAS) {
		page_ref_add(s->page, SRNIC_FRAG_BIAS - s->bias);
		s->bias = SRNIC_FRAG_BIAS;
	}
	c->cur = k;
	c->off = 0;
	return true;
}

/**
 * srnic_frag_alloc() - a packet buffer for build_skb()
 * @size: bytes, the skb_shared_info included (SKB_DATA_ALIGN()ed)
 *
 * Context: bottom halves off, not in a hard interrupt (the cache is the
 * CPU's: nothing else on it may run meanwhile).
 * Return: the buffer, freed as any page fragment; NULL if @size is over
 * a page of the cache or no page could be had (use another allocator).
 */
void *srnic_frag_alloc(unsigned int size)
{
	struct srnic_frag_cache *c = this_cpu_ptr(srnic_frag_caches);
	struct srnic_frag_page *s = &c->slot[c->cur];
	void *va;

	size = ALIGN(size, SMP_CACHE_BYTES);
	if (size > SRNIC_FRAG_SIZE)
		return NULL;
	if (!s->page || c->off + size > SRNIC_FRAG_SIZE) {
		if (!srnic_frag_next(c))
			return NULL;
		s = &c->slot[c->cur];
	}
	va = page_address(s->page) + c->off;
	c->off += size;
	s->bias--;
	return va;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_frag_alloc);

/**
 * srnic_frag_fills() - pages this CPU's cache took from the page allocator
 *
 * Context: bottom halves off (the count is the CPU's).
 * Return: the count since the module loaded.
 */
unsigned long srnic_frag_fills(void)
{
	return this_cpu_ptr(srnic_frag_caches)->fills;
}
EXPORT_SYMBOL_IF_KUNIT(srnic_frag_fills);

/**
 * srnic_frag_init() - the per-CPU caches, empty
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int srnic_frag_init(void)
{
	srnic_frag_caches = alloc_percpu(struct srnic_frag_cache);
	return srnic_frag_caches ? 0 : -ENOMEM;
}

/**
 * srnic_frag_exit() - give the caches' pages up
 *
 * Buffers still in flight keep their pages until they are freed.
 *
 * Context: module exit, after every device is gone.
 */
void srnic_frag_exit(void)
{
	int cpu, i;

	for_each_possible_cpu(cpu) {
		struct srnic_frag_cache *c = per_cpu_ptr(srnic_frag_caches,
							 cpu);

		for (i = 0; i < SRNIC_FRAG_PAGES; i++)
			if (c->slot[i].page)
				srnic_frag_release(&c->slot[i]);
	}
	free_percpu(srnic_frag_caches);
	srnic_frag_caches = NULL;
}
