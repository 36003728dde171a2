/* SPDX-License-Identifier: MIT */
/* diag.c: collected diagnostics. Allocation failure drops the message but keeps the count, so
 * an error is never lost from the verdict even when its text is. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void diag_init(struct diag *d)
{
	d->msgs = NULL;
	d->n = d->cap = 0;
	d->errors = d->warnings = 0;
}

void diag_free(struct diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->msgs[i].text);
	free(d->msgs);
	diag_init(d);
}

void diag_add(struct diag *d, enum diag_level level, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;

	if (level == DIAG_ERROR)
		d->errors++;
	else
		d->warnings++;
	if (d->n >= DIAG_MAX_MESSAGES)
		return;
	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 8;
		struct diag_msg *m = realloc(d->msgs, ncap * sizeof(*m));

		if (!m)
			return;
		d->msgs = m;
		d->cap = ncap;
	}
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text)
		return;
	d->msgs[d->n].level = level;
	d->msgs[d->n].text = text;
	d->n++;
}
