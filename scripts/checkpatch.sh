#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.pl --strict over every C source and header of the project.
# checkpatch.pl comes from Debian's linux-source-6.1 package, extracted
# once into the cache (it needs its spelling and const-struct lists).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${SRNIC_CACHE:-/var/cache/srnic}
cp_dir=$cache/checkpatch
tarball=$(ls /usr/src/linux-source-6.1*.tar.xz 2>/dev/null | sort -V | tail -n1)

if [ ! -x "$cp_dir/scripts/checkpatch.pl" ]; then
	[ -n "$tarball" ] || { echo "checkpatch: linux-source-6.1 not installed (make deps)" >&2; exit 1; }
	mkdir -p "$cp_dir"
	base=$(basename "$tarball" .tar.xz)
	tar -C "$cp_dir" --strip-components=1 -xJf "$tarball" \
		"$base/scripts/checkpatch.pl" "$base/scripts/spelling.txt" \
		"$base/scripts/const_structs.checkpatch"
fi

cd "$top"
files=$(find drivers include kunit selftests -name '*.[ch]' 2>/dev/null | sort)
cp() {
	"$cp_dir/scripts/checkpatch.pl" --strict --no-tree --terse --show-types \
		--ignore FILE_PATH_CHANGES "$@"
}
# --no-tree: out of tree. Every style rule applies, with one exception:
# the compat header is the one place that compares kernel versions.
compat=drivers/infiniband/sw/srnic/srnic_compat.h
rc=0
# shellcheck disable=SC2086
cp -f $(echo "$files" | grep -v "^$compat\$") || rc=1
cp --ignore LINUX_VERSION_CODE -f "$compat" || rc=1
if [ $rc -ne 0 ]; then
	echo "checkpatch: problems found" >&2
	exit 1
fi
echo "checkpatch: $(echo "$files" | wc -w) files clean"
