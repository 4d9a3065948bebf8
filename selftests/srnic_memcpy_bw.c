// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_memcpy_bw: single-core memcpy bandwidth, the limit a software
 * RNIC's copies run against (make bench reports srnic beside it).
 *
 *   srnic_memcpy_bw [SECONDS] [BUFFER_MIB]   (default 1 s, 64 MiB)
 *
 * Prints one line: "memcpy <N> MiB/s", in perftest's unit (its "MB/sec"
 * are 2^20 bytes per second).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srnic_test.h"

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, t0, el;
	size_t n = (size_t)(argc > 2 ? atoi(argv[2]) : 64) << 20;
	unsigned long long moved = 0;
	char *a, *b;

	if (secs <= 0 || !n) {
		fprintf(stderr, "usage: srnic_memcpy_bw [SECONDS] [BUFFER_MIB]\n");
		return 2;
	}
	a = malloc(n);
	b = malloc(n);
	if (!a || !b) {
		perror("malloc");
		return 1;
	}
	memset(a, 1, n);
	memset(b, 2, n);
	t0 = st_now_s();
	do {
		memcpy(b, a, n);
		/* the copy must happen: b is "used" */
		__asm__ __volatile__("" : : "r"(b) : "memory");
		moved += n;
		el = st_now_s() - t0;
	} while (el < secs);
	printf("memcpy %.0f MiB/s\n", moved / el / (1 << 20));
	free(a);
	free(b);
	return 0;
}
