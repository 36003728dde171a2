/* SPDX-License-Identifier: MIT */
/* diag.h: a bounded list of user-facing messages ("FILE: responses[3].argv: must be ...").
 * Loaders collect every error instead of stopping at the first; commands print them. */
#ifndef PROCTOR_DIAG_H
#define PROCTOR_DIAG_H

#include <stddef.h>

#define DIAG_MAX_MESSAGES 200

enum diag_level { DIAG_ERROR, DIAG_WARNING };

struct diag_msg {
	enum diag_level level;
	char *text;
};

struct diag {
	struct diag_msg *msgs;
	size_t n, cap;
	size_t errors, warnings; /* counted even past DIAG_MAX_MESSAGES */
};

void diag_init(struct diag *d);
void diag_free(struct diag *d);
void diag_add(struct diag *d, enum diag_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define diag_error(d, ...) diag_add((d), DIAG_ERROR, __VA_ARGS__)
#define diag_warn(d, ...) diag_add((d), DIAG_WARNING, __VA_ARGS__)

#endif
