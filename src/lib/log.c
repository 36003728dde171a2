/* SPDX-License-Identifier: MIT */
/* log.c: one-line messages on stderr, prefixed with the program name. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "proctor";
static int verbose_level;

void log_set_prog(const char *p)
{
	prog = p;
}

const char *log_prog(void)
{
	return prog;
}

void log_set_verbose(int v)
{
	verbose_level = v;
}

__attribute__((format(printf, 2, 0))) static void vlog(const char *level, const char *fmt, va_list ap, int err)
{
	char msg[4096];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err)
		fprintf(stderr, "%s: %s%s: %s\n", prog, level, msg, strerror(err));
	else
		fprintf(stderr, "%s: %s%s\n", prog, level, msg);
}

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap, 0);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap, 0);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (!verbose_level)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap, 0);
	va_end(ap);
}

noreturn void die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap, 0);
	va_end(ap);
	exit(status);
}

noreturn void die_errno(int status, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap, err < 0 ? -err : err);
	va_end(ap);
	exit(status);
}
