// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_test: time, diagnostics, TAP output, pseudo-random data.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "srnic_test.h"

/* --- time ---------------------------------------------------------------- */

/**
 * st_now_s() - the monotonic clock in seconds.
 */
double st_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/**
 * st_now_ms() - the monotonic clock in milliseconds.
 */
long long st_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/**
 * st_sleep_ms() - sleep @ms milliseconds, through signals.
 * @ms: how long
 */
void st_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* --- diagnostics --------------------------------------------------------- */

/**
 * st_diag_line() - print one diagnostic line, "# [WHO] TEXT" (or "# TEXT").
 * @who: the name of the side speaking, or NULL
 * @fmt: printf format of TEXT
 *
 * The line is written whole even when several threads print. Call it as
 * st_diag(), which has the compiler check the format.
 */
void st_diag_line(const char *who, const char *fmt, ...)
{
	va_list ap;

	flockfile(stdout);
	if (who)
		printf("# [%s] ", who);
	else
		printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	funlockfile(stdout);
}

/**
 * st_bail() - give up: "Bail out! WHAT: strerror(errno)", exit 1.
 * @what: what failed
 */
void st_bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(ST_EXIT_FAIL);
}

/* --- TAP ----------------------------------------------------------------- */

/**
 * st_tap_plan() - print the plan "1..N" before the test points.
 * @t: the stream
 * @n: how many test points follow
 *
 * Without it, st_tap_end() prints the plan after the last point.
 */
void st_tap_plan(struct st_tap *t, int n)
{
	printf("1..%d\n", n);
	fflush(stdout);
	t->planned = true;
}

/**
 * st_tap_point() - one test point: "ok N DESC", "not ok N DESC" or
 * "ok N DESC # SKIP REASON".
 * @t: the stream
 * @ok: its result
 * @skip: NULL, or why it was skipped
 * @fmt: printf format of DESC
 *
 * Call it as st_tap_ok() or st_tap_skip(), which check the format.
 *
 * Return: @ok.
 */
bool st_tap_point(struct st_tap *t, bool ok, const char *skip,
		  const char *fmt, ...)
{
	va_list ap;

	flockfile(stdout);
	printf("%sok %d ", ok ? "" : "not ", ++t->n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (skip)
		printf(" # SKIP %s", skip);
	putchar('\n');
	fflush(stdout);
	funlockfile(stdout);
	if (!ok)
		t->failed++;
	if (skip)
		t->skipped++;
	return ok;
}

/**
 * st_tap_skip_all() - nothing can run: "1..0 # SKIP REASON".
 * @t: the stream (no point printed yet)
 * @reason: why
 *
 * Return: ST_EXIT_SKIP, the program's exit status.
 */
int st_tap_skip_all(struct st_tap *t, const char *reason)
{
	printf("1..0 # SKIP %s\n", reason);
	fflush(stdout);
	t->planned = true;
	return ST_EXIT_SKIP;
}

/**
 * st_tap_totals() - the kselftest totals line of the stream so far.
 * @t: the stream
 */
void st_tap_totals(const struct st_tap *t)
{
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       t->n - t->failed - t->skipped, t->failed, t->skipped);
	fflush(stdout);
}

/**
 * st_tap_end() - finish the stream: the plan, if it was not printed first.
 * @t: the stream
 *
 * Return: the exit status: ST_EXIT_FAIL if a point failed, ST_EXIT_SKIP if
 * every point was skipped, else ST_EXIT_PASS.
 */
int st_tap_end(struct st_tap *t)
{
	if (!t->planned) {
		printf("1..%d\n", t->n);
		fflush(stdout);
		t->planned = true;
	}
	if (t->failed)
		return ST_EXIT_FAIL;
	return t->n && t->skipped == t->n ? ST_EXIT_SKIP : ST_EXIT_PASS;
}

/* --- pseudo-random data and checksums ------------------------------------ */

/**
 * st_rnd_next() - the next number of a xorshift64* sequence.
 * @state: the sequence (never 0)
 */
__u64 st_rnd_next(__u64 *state)
{
	__u64 x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/**
 * st_rnd_seed() - a non-zero seed mixed from two numbers.
 * @a: one
 * @b: the other
 */
__u64 st_rnd_seed(__u64 a, __u64 b)
{
	__u64 s = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	return s ? s : 1;
}

/**
 * st_rnd_fill() - fill @buf with the sequence of @seed.
 * @buf: where
 * @len: bytes
 * @seed: the same seed gives the same bytes
 */
void st_rnd_fill(void *buf, size_t len, __u64 seed)
{
	__u8 *p = buf;
	__u64 s = seed ? seed : 1, v;

	while (len >= 8) {
		v = st_rnd_next(&s);
		memcpy(p, &v, 8);
		p += 8;
		len -= 8;
	}
	v = st_rnd_next(&s);
	memcpy(p, &v, len);
}

/**
 * st_hash() - an order-sensitive 64-bit hash (multiply-xorshift per word).
 * @h: the hash so far (any start value)
 * @buf: more data
 * @len: its bytes
 *
 * Return: the hash with @buf added.
 */
__u64 st_hash(__u64 h, const void *buf, size_t len)
{
	const __u8 *p = buf;
	__u64 w;

	h ^= len * 0xff51afd7ed558ccdull;
	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	while (len--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

static __u8 pattern_byte(size_t i, __u32 seed)
{
	return (__u8)(seed * 131 + (__u32)i * 7 + (__u32)(i >> 8));
}

/**
 * st_pattern_fill() - a cheap pattern: byte i derived from @seed and i.
 * @buf: where
 * @len: bytes
 * @seed: which pattern
 */
void st_pattern_fill(void *buf, size_t len, __u32 seed)
{
	__u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern_byte(i, seed);
}

/**
 * st_pattern_check() - whether @buf holds st_pattern_fill()'s bytes.
 * @buf: what to check
 * @len: bytes
 * @seed: the pattern expected
 */
bool st_pattern_check(const void *buf, size_t len, __u32 seed)
{
	const __u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern_byte(i, seed))
			return false;
	return true;
}
