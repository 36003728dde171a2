/* SPDX-License-Identifier: MIT */
/* fuzz_suite.c: the JSON Lines suite parser (a file of task paths, read by root for every index). */
#include <stdint.h>

#include "../../src/run/suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[SUITE_WHY_SIZE];
	struct suite s;

	if (suite_parse_lines("/fuzz/suite.jsonl", "/fuzz/suite.jsonl", (const char *)data, size, &s, why) == 0)
		suite_free(&s);
	return 0;
}
