# SPDX-License-Identifier: GPL-2.0
#
# srnic: the project's targets. The module itself is built by Kbuild.
#
#   make [KVER=...]      build srnic.ko for one kernel (default below)
#   make modules-all     build for every supported kernel installed
#   make lint            W=1, sparse and checkpatch --strict, both kernels
#   make demo            set up, boot a guest, show srnic working
#   make bench           srnic beside rdma_rxe (perftest), a table of ratios
#   make bench-twohost   srnic beside rdma_rxe between two guests (6.1, 6.12)
#   make bench-qps       1 to 1024 active QPs: throughput, prefetch stalls,
#                        pool slots in use (two pool sizes) beside rdma_rxe
#   make check           set up, lint, build, every test kind on both
#                        kernels, two guests, KUnit and the debug kernel,
#                        at the gate volumes (<= 55 min warm): what CI runs
#   make check-full      the same at the soak volumes, plus the in-tree
#                        KUnit build (not run by CI)
#   make kselftest-tree  selftests/ as a kselftest target of a kernel tree
#   make kunit-intree    the driver in a kernel tree, kunit.py run
#   make install         srnic.ko into /lib/modules/KVER/updates, depmod
#                        (every supported kernel; make uninstall undoes it)
#   make dkms            the same through DKMS (make dkms-remove undoes it)
#   make deb             build/deb/srnic-dkms_VERSION_all.deb
#
# Each kernel gets its own build tree, build/<kver>/, a copy of the
# sources: Kbuild writes objects next to them, and the two kernels'
# objects must not mix.

SHELL := /bin/bash
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

# Supported kernels: Debian 12's 6.1 and bookworm-backports' 6.12.
KVERS ?= $(shell $(TOP)/scripts/kvers.sh)
KVER ?= $(shell $(TOP)/scripts/kvers.sh --default)
KDIR ?= /lib/modules/$(KVER)/build
BUILD := $(TOP)/build
SRNIC_VERSION := $(shell $(TOP)/scripts/version.sh)

SRCS := Kbuild kunit/Kbuild \
	$(shell cd $(TOP) && find drivers include kunit selftests/kmod -name '*.[ch]')

.PHONY: all modules modules-all lint sparse checkpatch doccheck demo check check-full clean deps \
	selftests-build bench bench-qps bench-twohost

all: modules

deps:
	$(TOP)/scripts/deps.sh

# Copy the sources, build, and fail on any warning (the kernel's build
# prints them; W=1 adds the extra ones, KBUILD_EXTRA=C=2 runs sparse).
modules:
	@test -n "$(KVER)" || { echo "no supported kernel headers (run make deps)"; exit 1; }
	@mkdir -p $(BUILD)/$(KVER)
	@cd $(TOP) && cp --parents -u $(SRCS) $(BUILD)/$(KVER)/
	@echo "  BUILD   srnic.ko for $(KVER) $(KBUILD_EXTRA)"
	@$(MAKE) -s -C $(KDIR) M=$(BUILD)/$(KVER) W=1 $(KBUILD_EXTRA) \
		SRNIC_VERSION=$(SRNIC_VERSION) modules \
		2>&1 | tee $(BUILD)/$(KVER)/build.log | grep -v 'Skipping BTF generation'; \
	 test $${PIPESTATUS[0]} -eq 0
	@if grep -E 'warning|error' $(BUILD)/$(KVER)/build.log; then \
		echo "srnic: diagnostics building for $(KVER)"; exit 1; fi

modules-all:
	@test -n "$(KVERS)" || { echo "no supported kernel headers (run make deps)"; exit 1; }
	@for v in $(KVERS); do $(MAKE) -s modules KVER=$$v || exit 1; done

# sparse: C=2 checks every file; any sparse message fails the build.
sparse:
	@test -n "$(KVERS)" || { echo "no supported kernel headers (run make deps)"; exit 1; }
	@for v in $(KVERS); do \
		touch $(BUILD)/$$v/Kbuild 2>/dev/null; \
		$(MAKE) -s modules KVER=$$v KBUILD_EXTRA="C=2" || exit 1; done

# The selftests' C programs run in the guest, which shares this root.
selftests-build:
	@mkdir -p $(BUILD)/selftests
	@$(MAKE) -s -C $(TOP)/selftests OUT=$(BUILD)/selftests

checkpatch:
	$(TOP)/scripts/checkpatch.sh

# kernel-doc -Wall, and srnic.rst's source-file table against the files.
doccheck:
	@$(TOP)/scripts/doccheck.sh

lint: sparse checkpatch doccheck
	@echo "lint: clean (W=1, sparse, checkpatch --strict, kernel-doc -Wall) for: $(KVERS)"

demo:
	$(TOP)/scripts/demo.sh

bench:
	$(TOP)/scripts/bench.sh

bench-qps:
	SRNIC_BENCH_MODE=qps $(TOP)/scripts/bench.sh

bench-twohost:
	SRNIC_BENCH_MODE=twohost $(TOP)/scripts/bench.sh

check:
	$(TOP)/scripts/check.sh

check-full:
	$(TOP)/scripts/check.sh --full

# selftests/ as the kselftest target drivers/infiniband/srnic of Debian's
# 6.1 tree, run both ways kselftest offers in a stock 6.1 guest; and the
# driver dropped into that tree, its KUnit suites run by kunit.py.
.PHONY: kselftest-tree kunit-intree
kselftest-tree:
	$(TOP)/scripts/kselftest-tree.sh $(KSFT_ARGS)

kunit-intree:
	$(TOP)/scripts/kunit-intree.sh $(KUNIT_INTREE_ARGS)

# Installed like a driver (scripts/install.sh): then "rdma link add"
# loads srnic by itself.
.PHONY: install uninstall dkms dkms-remove deb
install uninstall dkms dkms-remove deb:
	@$(TOP)/scripts/install.sh $@

clean:
	rm -rf $(BUILD)

# The debug/KUnit test kernel (KASAN, lockdep, UBSAN, kmemleak...), built
# once into ${SRNIC_CACHE:-/var/cache/srnic}/testkernel/; "make kunit" boots
# it and runs the KUnit suites (KUNIT_ARGS=--selftests: the selftests).
.PHONY: kunit testkernel
kunit:
	$(TOP)/scripts/kunit.sh $(KUNIT_ARGS)

testkernel:
	$(TOP)/scripts/testkernel.sh
