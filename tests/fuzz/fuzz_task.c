/* SPDX-License-Identifier: MIT */
/* fuzz_task.c: the task file parser (written by people, read by root). */
#include <stdint.h>

#include "../../src/lib/diag.h"
#include "../../src/run/task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag d;
	struct task t;

	diag_init(&d);
	if (task_parse("/fuzz/task.json", (const char *)data, size, &d, &t) == 0)
		task_free(&t);
	diag_free(&d);
	return 0;
}
