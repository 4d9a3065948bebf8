// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srnic: hooks that break srnic on purpose, so that the tests can show
 * they fail when the contract they check is broken. Built only into test
 * builds (CONFIG_SRNIC_TEST_HOOKS: the Kbuild of a checkout, unless
 * SRNIC_PACKAGE=1; off in a kernel tree unless chosen), never into the
 * module that make install, DKMS and the Debian package ship.
 *
 * debug_late_place: RDMA Write payload is placed from a workqueue, 2-3 ms
 * after the completions that must follow it: the Write ->
 * Write-with-Immediate ordering tests (srnic_rc.sh) must see stale bytes.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "srnic.h"

static bool srnic_debug_late_place;
module_param_named(debug_late_place, srnic_debug_late_place, bool, 0644);
MODULE_PARM_DESC(debug_late_place,
		 "TEST BUILDS ONLY: place RDMA Write payload from a workqueue, after the completions that should follow it (breaks the Write -> Write-with-Immediate ordering on purpose, to show the ordering test can fail)");

struct srnic_late_place {
	struct work_struct work;
	struct srnic_mr *mr;
	u64 va;
	u32 len;
	u8 data[];
};

static void srnic_late_place_work(struct work_struct *work)
{
	struct srnic_late_place *lp =
		container_of(work, struct srnic_late_place, work);

	usleep_range(2000, 3000);
	/* A copy into a remapped MR is dropped. */
	if (srnic_mr_copy(lp->mr, lp->va, lp->data, lp->len, true))
		pr_debug("srnic: late placement into a remapped MR dropped\n");
	srnic_mr_put(lp->mr);
	kfree(lp);
}

/**
 * srnic_hook_late_place() - defer a Write's placement, if asked to
 * @mr: the target MR, its key checked
 * @va: where in @mr
 * @data: the payload
 * @len: its length
 *
 * Context: softirq (the responder).
 * Return: true if the payload will be placed later (by a work item that
 * holds a reference on @mr), false if the caller places it now.
 */
bool srnic_hook_late_place(struct srnic_mr *mr, u64 va, const u8 *data,
			   u32 len)
{
	struct srnic_late_place *lp;

	if (likely(!READ_ONCE(srnic_debug_late_place)))
		return false;
	lp = kmalloc(struct_size(lp, data, len), GFP_ATOMIC);
	if (!lp || !refcount_inc_not_zero(&mr->ref)) {
		kfree(lp);
		return false;
	}
	INIT_WORK(&lp->work, srnic_late_place_work);
	lp->mr = mr;
	lp->va = va;
	lp->len = len;
	memcpy(lp->data, data, len);
	schedule_work(&lp->work);
	return true;
}
