#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The documentation lint of make lint:
#  - kernel-doc -Wall over the driver, the shared headers and the KUnit
#    suites: every documented function has its parameters and Return:,
#    every documented struct its members (the kernel-doc script of the
#    newest installed headers: 6.1's has no -Wall);
#  - Documentation/srnic.rst's source-file table names every file of
#    drivers/infiniband/sw/srnic/, and no file that is not there.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
rc=0

kd=$(ls /usr/src/linux-headers-*-common/scripts/kernel-doc \
	/usr/src/linux-headers-*/scripts/kernel-doc 2>/dev/null | sort -V | tail -n1)
[ -n "$kd" ] || { echo "doccheck: no kernel-doc script (make deps installs the headers)" >&2; exit 1; }
files=$(find drivers include kunit -name '*.[ch]' | sort)
# shellcheck disable=SC2086
out=$("$kd" -Wall -none $files 2>&1) || true
if echo "$out" | grep -q .; then
	echo "$out" >&2
	echo "doccheck: kernel-doc -Wall: $(echo "$out" | grep -c warning) warning(s)" >&2
	rc=1
fi

# The table: the first column of the first table after "Source files"
# (between its first two "===  ===" rules). "srnic_x.c, .h" names
# srnic_x.c and srnic_x.h.
drv=drivers/infiniband/sw/srnic
listed=$(awk '/^Source files$/ { on = 1 } on && /^=+  +=+$/ { if (++rule == 2) exit; next }
	on && rule == 1 && /^[^ ]/ { print }' Documentation/srnic.rst |
	sed 's/  .*//' | tr -d ' ' | tr ',' '\n' |
	awk '/^\./ { sub(/\.[ch]$/, "", base); print base $0; next }
	     { base = $0; print }' | grep -v '^$' | sort -u)
present=$(cd "$drv" && ls | sort)
if [ "$listed" != "$present" ]; then
	echo "doccheck: Documentation/srnic.rst's source-file table and $drv differ" \
		"(< table, > directory):" >&2
	diff <(echo "$listed") <(echo "$present") | grep '^[<>]' >&2 || true
	rc=1
fi
[ $rc -eq 0 ] && echo "doccheck: kernel-doc -Wall clean ($(echo "$files" | wc -w) files), source-file table matches $drv"
exit $rc
