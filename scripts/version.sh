#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print srnic's version: the VERSION file of a staged source tree (the
# Debian package's, DKMS's), else, in a git checkout, 0.1.N+gCOMMIT (N:
# commits on the branch; ".dirty" when the work tree has changes).
# MODULE_VERSION, the DKMS version and the package version are this.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
if [ -f "$top/VERSION" ]; then
	cat "$top/VERSION"
	exit 0
fi
if n=$(git -C "$top" rev-list --count HEAD 2>/dev/null) &&
   c=$(git -C "$top" rev-parse --short=7 HEAD 2>/dev/null); then
	d=
	git -C "$top" diff --quiet HEAD -- 2>/dev/null || d=.dirty
	echo "0.1.$n+g$c$d"
	exit 0
fi
echo 0.1.0
