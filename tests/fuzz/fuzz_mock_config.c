/* SPDX-License-Identifier: MIT */
/* fuzz_mock_config.c: mockd's server config loader (mock-config.json): what it accepts has every
 * field mockd relies on (a tool name, a fixture path, a request budget that is never 0). */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../src/lib/diag.h"
#include "../../src/mock/fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/proctor-fuzz-XXXXXX";
	struct mock_config *c = NULL;
	struct diag d;
	int fd = mkstemp(path);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	diag_init(&d);
	if (mock_config_load(path, &d, &c) == 0) {
		if (!c->ntools || d.errors)
			abort();
		for (size_t i = 0; i < c->ntools; i++)
			if (!c->tools[i].tool || !c->tools[i].fixture || !c->tools[i].max_requests ||
			    !c->tools[i].passthrough_timeout_ms)
				abort();
		if (!c->unknown_tool_max_requests)
			abort();
		mock_config_free(c);
	} else if (!d.errors) {
		abort(); /* a refusal always says why */
	}
	diag_free(&d);
	unlink(path);
	return 0;
}
