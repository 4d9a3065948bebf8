#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the supported kernels that are installed (image and headers), one
# per line, oldest first: the newest Debian 6.1 and the newest 6.12.
# --default prints one: the running kernel if supported, else the first.
set -u
vers=
for series in 6.1 6.12; do
	v=$(ls -d /usr/src/linux-headers-"$series".*-amd64 2>/dev/null |
	    sed 's|/usr/src/linux-headers-||' | grep -v -- '-rt-\|-cloud-' |
	    sort -V | tail -n1)
	[ -n "$v" ] && [ -e "/lib/modules/$v/build" ] && vers="$vers $v"
done
if [ "${1:-}" = --default ]; then
	for v in $vers; do
		[ "$v" = "$(uname -r)" ] && { echo "$v"; exit 0; }
	done
	set -- $vers
	echo "${1:-}"
	exit 0
fi
for v in $vers; do echo "$v"; done
