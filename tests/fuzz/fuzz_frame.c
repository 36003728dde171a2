/* SPDX-License-Identifier: MIT */
/* fuzz_frame.c: what the orchestrator (root) does with bytes from the worker (the agent's uid).
 * First the frame decoder alone, every frame of the input, as the orchestrator's loop does.
 * Then the whole of run_pump over a socketpair: whatever the frames, every line it writes to
 * events.jsonl must be one record, as doc/RESULT.md pins it (exactly seq, ts, stream, turn,
 * truncated and text or event; seq counting from 1), each event is either written or counted
 * lost, and the file holds nothing else. A violation aborts. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../src/run/frame.h"
#include "../../src/run/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned char nonce[FRAME_NONCE_LEN] = { 'p', 'r', 'o', 'c', 't', 'o', 'r', '-',
						      'f', 'u', 'z', 'z', '-', 'n', 'c', 'e' };

/* The fuzzer input is at most this much (a socketpair holds it without a reader). */
#define PUMP_MAX_INPUT (64u * 1024)

static void check_record(const char *line, size_t n, unsigned long long seq)
{
	json_t *j = json_loadb(line, n, JSON_REJECT_DUPLICATES, NULL), *text, *ev;
	const char *stream = json_string_value(json_object_get(j, "stream"));

	if (!json_is_object(j) || json_object_size(j) != 6 ||
	    json_integer_value(json_object_get(j, "seq")) != (json_int_t)seq ||
	    !json_is_string(json_object_get(j, "ts")) || !stream || strcmp(stream, "stdout") != 0 ||
	    !json_is_integer(json_object_get(j, "turn")) || !json_is_boolean(json_object_get(j, "truncated")))
		abort();
	text = json_object_get(j, "text");
	ev = json_object_get(j, "event");
	if (text ? !json_is_string(text) || ev : !json_is_object(ev))
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)line[i] >= 0x80 || line[i] == '\r')
			abort();
	json_decref(j);
}

static void pump_all(const uint8_t *data, size_t size)
{
	struct run r;
	json_t *resp = NULL;
	int sv[2];
	char *text;
	off_t len;
	unsigned long long lines = 0;

	memset(&r, 0, sizeof(r));
	if (size > PUMP_MAX_INPUT || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	r.sock = sv[0];
	memcpy(r.nonce, nonce, FRAME_NONCE_LEN);
	buf_init(&r.in, FRAME_HEADER_LEN + FRAME_MAX_BODY);
	r.events_fd = memfd_create("events", MFD_CLOEXEC);
	r.stderr_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (r.events_fd < 0 || r.stderr_fd < 0 || write(sv[1], data, size) != (ssize_t)size)
		abort();
	close(sv[1]);
	while (run_pump(&r, 3, &resp) >= 0) {
		json_decref(resp);
		resp = NULL;
	}
	if (resp)
		abort(); /* nothing is handed back with an error */
	len = lseek(r.events_fd, 0, SEEK_END);
	if (len < 0 || (unsigned long long)len != r.events_bytes || !(text = malloc((size_t)len + 1)) ||
	    pread(r.events_fd, text, (size_t)len, 0) != len)
		abort();
	for (char *p = text, *end = text + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl)
			abort(); /* a line written in part */
		check_record(p, (size_t)(nl - p), ++lines);
		p = nl + 1;
	}
	if (lines + r.events_lost != r.events)
		abort();
	free(text);
	buf_free(&r.in);
	buf_free(&r.events_out);
	close(r.events_fd);
	close(r.stderr_fd);
	close(sv[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	for (;;) {
		const char *why = NULL;
		size_t used = 0;
		json_t *j = NULL;
		int r = frame_decode(nonce, (const char *)data + off, size - off, &used, &j, &why);

		if (r <= 0)
			break;
		json_decref(j);
		off += used;
	}
	pump_all(data, size);
	return 0;
}
