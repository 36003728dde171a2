/* SPDX-License-Identifier: MIT */
/* util.h: small parsing and time helpers shared by every command. */
#ifndef PROCTOR_UTIL_H
#define PROCTOR_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Strict decimal parse within [min, max]: no sign, no spaces, no trailing junk. 0 or -EINVAL/-ERANGE. */
int parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *ret);
/* Octal file mode such as "0660" (at most 07777). */
int parse_mode(const char *s, unsigned *ret);
/* Milliseconds on CLOCK_MONOTONIC. */
uint64_t now_mono_ms(void);
/* In a child about to exec: every signal back to its default action, none blocked (a parent's
 * ignored SIGPIPE, SIGXFSZ or SIGINT would otherwise be inherited through exec). */
void signals_reset(void);
/* Sleep `ms` milliseconds (a signal may end it early: callers poll a clock). */
void sleep_ms(unsigned ms);
/* Milliseconds since the epoch on CLOCK_REALTIME. */
int64_t now_epoch_ms(void);
/* `ms` since the epoch as RFC 3339 UTC with milliseconds, "2026-12-01T02:03:04.005Z" (years
 * past 9999 are cut to fit). */
#define TIME_RFC3339_MS_SIZE 32
void time_rfc3339_ms(int64_t ms, char out[TIME_RFC3339_MS_SIZE]);
/* Seconds since the epoch on CLOCK_REALTIME, with sub-second part. */
double now_real(void);
/* True when `s` (of length n) is valid UTF-8 with no NUL bytes. */
bool utf8_valid(const char *s, size_t n);
/* Append `s` to `out`, replacing each invalid UTF-8 sequence (and NUL) by U+FFFD. */
struct buf;
int utf8_sanitize(struct buf *out, const char *s, size_t n);
/* A copy of `s` safe to print on a terminal: control characters (C0, DEL and C1), backslash and
 * invalid UTF-8 become C escapes (\n, \t, \\, \xNN), so a file name cannot move the cursor,
 * start an escape sequence or forge a line. Caller frees; NULL on ENOMEM. */
char *str_escape(const char *s);

#endif
