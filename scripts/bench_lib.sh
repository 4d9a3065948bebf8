# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The benchmarks' statistics, sourced by scripts/bench-guest.sh (make
# bench, bench-qps) and scripts/bench-twohost.sh (make bench-twohost).
# $RAW: one line per run, "NAME|DRV|VALUE [VALUE...]".
#
#	stat NAME DRV FIELD	"median min max" of that field over the runs
#				("- - -" if none)
#	cell MEDIAN MIN MAX DECIMALS	"median (min-max)", or "-"
#	ratio A B		A / B, or "-"

stat() {	# NAME DRV FIELD
	awk -F'|' -v n="$1" -v d="$2" -v f="$3" '
		$1 == n && $2 == d { split($3, a, " "); if (a[f] != "") v[k++] = a[f] }
		END {
			if (!k) { print "- - -"; exit }
			for (i = 0; i < k; i++)
				for (j = i + 1; j < k; j++)
					if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			print (v[int((k - 1) / 2)] + v[int(k / 2)]) / 2, v[0], v[k - 1]
		}' "$RAW"
}

cell() {	# MEDIAN MIN MAX DECIMALS
	[ "$1" = - ] && { echo "-"; return; }
	printf "%.${4}f (%.${4}f-%.${4}f)" "$1" "$2" "$3"
}

ratio() {	# A B
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else if (a / b < 0.1) printf "%.3f", a / b; else printf "%.2f", a / b }'
}
