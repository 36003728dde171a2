/* SPDX-License-Identifier: MIT */
/* fuzz_frame.c: the worker frame decoder, which the orchestrator (root) runs on bytes from the
 * worker (the agent's uid). Decodes every frame in the input, as the orchestrator's loop does. */
#include <stdint.h>
#include <string.h>

#include "../../src/run/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char nonce[FRAME_NONCE_LEN] = { 'p', 'r', 'o', 'c', 't', 'o', 'r', '-',
							      'f', 'u', 'z', 'z', '-', 'n', 'c', 'e' };
	size_t off = 0;

	for (;;) {
		const char *why = NULL;
		size_t used = 0;
		json_t *j = NULL;
		int r = frame_decode(nonce, (const char *)data + off, size - off, &used, &j, &why);

		if (r <= 0)
			break;
		if (json_object_get(j, "stream") && !json_is_object(j))
			break;
		json_decref(j);
		off += used;
	}
	return 0;
}
