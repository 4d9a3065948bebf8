# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What counts as a kernel splat, defined once. Sourced by selftests/lib.sh
# (the end-of-test kernel-log check of every selftest), scripts/vm.sh
# (--fail-on-splat, on the guest's whole log) and scripts/kunit.sh.
#
#	kernel_splats [FILE...]		print the splat lines of FILE (or stdin)

# Reports of a bug, a sanitizer, lockdep, a hang or a leak.
KERNEL_SPLAT_RE='BUG:|WARNING:|Oops|KASAN|UBSAN|possible circular locking|sleeping function called from invalid context|kmemleak|general protection fault|Call Trace|soft lockup|hard LOCKUP|blocked for more than|rcu.*detected stall|Kernel panic'
# Not splats: what a CONFIG_DEBUG_KMEMLEAK kernel (the test kernel of
# scripts/testkernel.sh) always logs at boot, and the line of "echo off"
# (scripts/kunit-guest.sh, SRNIC_KMEMLEAK_UNTRACKED; when kmemleak
# disables itself on an error, the error's own line is still a splat).
# Its leak reports still count.
KERNEL_SPLAT_BENIGN_RE='kmemleak: (Kernel memory leak detector (initialized|disabled)|Automatic memory scanning thread (started|ended))'
# kmemleak's summary of a scan that scripts/kunit.sh asked for: a splat
# for everyone else, judged by the leaks' owner there.
KERNEL_KMEMLEAK_SCAN_RE='kmemleak: [0-9]+ new suspected memory leaks'

kernel_splats() {
	grep -aE "$KERNEL_SPLAT_RE" "$@" | grep -avE "$KERNEL_SPLAT_BENIGN_RE" | tr -d '\r'
}
