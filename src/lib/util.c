/* SPDX-License-Identifier: MIT */
/* util.c: number parsing, clocks, UTF-8 validation, escaping for the terminal. */
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"

/* The FORTIFY level glibc applied to this build: __USE_FORTIFY_LEVEL, which <features.h> derives
 * from _FORTIFY_SOURCE and the optimisation level (0 when either is off, as under the
 * sanitizers). Kept in both binaries as a string so tests/e2e/hardening.bats can read it from
 * the installed file, like checksec: the __*_chk imports alone cannot tell level 3 from 2. */
#define UTIL_STR_(x) #x
#define UTIL_STR(x) UTIL_STR_(x)
__attribute__((used)) static const char fortify_level[] = "proctor-fortify-level=" UTIL_STR(__USE_FORTIFY_LEVEL);

int parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *ret)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end)
		return errno == ERANGE ? -ERANGE : -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse_mode(const char *s, unsigned *ret)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '7')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || *end || v > 07777)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

uint64_t now_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void signals_reset(void)
{
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL); /* SIGKILL and SIGSTOP refuse: they are default anyway */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int64_t now_epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void time_rfc3339_ms(int64_t ms, char out[TIME_RFC3339_MS_SIZE])
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char tmp[64];

	gmtime_r(&s, &tm);
	snprintf(tmp, sizeof(tmp), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
	memcpy(out, tmp, TIME_RFC3339_MS_SIZE - 1);
	out[TIME_RFC3339_MS_SIZE - 1] = '\0';
}

double now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Length of the valid UTF-8 sequence at s (n bytes available), or 0 when invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len, i;
	unsigned cp;

	if (c == 0)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		size_t l = utf8_seq(p + i, n - i);

		if (!l)
			return false;
		i += l;
	}
	return true;
}

int utf8_sanitize(struct buf *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0;
	int r;

	while (i < n) {
		size_t l = utf8_seq(p + i, n - i);

		if (l) {
			i += l;
			continue;
		}
		r = buf_append(out, s + start, i - start);
		if (r < 0)
			return r;
		r = buf_append(out, "\xef\xbf\xbd", 3);
		if (r < 0)
			return r;
		i++;
		start = i;
	}
	return buf_append(out, s + start, i - start);
}

char *str_escape(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;
	char *out = malloc(n * 4 + 1), *o = out;

	if (!out)
		return NULL;
	while (i < n) {
		size_t l = utf8_seq(p + i, n - i);
		/* U+0080..U+009F (C2 80..C2 9F) are C1 controls: CSI is U+009B on a UTF-8 terminal */
		bool c1 = l == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0;

		if (l > 1 && !c1) {
			memcpy(o, p + i, l);
			o += l, i += l;
		} else if (l == 1 && p[i] >= 0x20 && p[i] != 0x7f && p[i] != '\\') {
			*o++ = (char)p[i++];
		} else if (p[i] == '\n' || p[i] == '\t' || p[i] == '\\') {
			*o++ = '\\';
			*o++ = p[i] == '\n' ? 'n' : p[i] == '\t' ? 't' : '\\';
			i++;
		} else {
			o += sprintf(o, "\\x%02x", p[i++]);
		}
	}
	*o = '\0';
	return out;
}
