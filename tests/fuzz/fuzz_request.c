/* SPDX-License-Identifier: MIT */
/* fuzz_request.c: mockd's request-line parser, the boundary every agent call crosses. */
#include <stdint.h>
#include <string.h>

#include "../../src/mock/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mock_request req;
	const char *why;

	if (mock_request_parse((const char *)data, size, &req, &why) == 0) {
		for (size_t i = 0; i < req.argc; i++)
			(void)strlen(req.argv[i]);
		mock_request_free(&req);
	}
	return 0;
}
