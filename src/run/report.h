/* SPDX-License-Identifier: MIT */
/* report.h: `proctor report`: what happened in a run, from its result.json, mockd's journal and
 * (for near misses and unused rules, as root) the staged fixtures, for a person or a machine. */
#ifndef PROCTOR_RUN_REPORT_H
#define PROCTOR_RUN_REPORT_H

#include <jansson.h>
#include <stdbool.h>

#include "../lib/buf.h"
#include "../lib/diag.h"

#define REPORT_MAX_RESULT_BYTES (4u << 20)
#define REPORT_MAX_DEFAULTED 50
#define REPORT_MAX_NEAR 3

/* The report as JSON: {"result", "defaulted", "unused_rules", "fixtures_read"}. -errno with a
 * message in `d` when result.json cannot be read. */
int report_json(const char *run_dir, struct diag *d, json_t **ret);
/* The same as text for a person. */
int report_text(const json_t *report, struct buf *out);

#endif
