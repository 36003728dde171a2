/* SPDX-License-Identifier: MIT */
/* log.h: terminal messages for commands (src/cli, src/proctor.c). Library code never logs. */
#ifndef PROCTOR_LOG_H
#define PROCTOR_LOG_H

#include <stdnoreturn.h>

/* The name messages are prefixed with, e.g. "proctor mockd". */
void log_set_prog(const char *prog);
const char *log_prog(void);
void log_set_verbose(int verbose);

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print one line and exit with `status`. */
noreturn void die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* As die(), with ": strerror(-err)" appended. */
noreturn void die_errno(int status, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
