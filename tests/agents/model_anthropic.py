#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A scripted Anthropic Messages API on loopback for Claude Code (ANTHROPIC_BASE_URL): replays a
script of model turns (format in scripted_model.py) as streamed SSE messages. It owns the wire
format only; it does not decide anything from the request beyond which requests are turns.

A request is a turn of the agent when it offers tools (Claude Code's main loop always does);
other requests to /v1/messages (side queries such as a title or a quota probe) get a short text
answer and consume nothing. /v1/messages/count_tokens and /v1/models are answered; any other
path gets 404 and is logged.

usage: model_anthropic.py SCRIPT [--log FILE] [--port-file FILE]
"""

import json
import sys

import scripted_model as sm

MODEL = "claude-scripted"
SIDE_ANSWER = "ok"


def tool_use(t, c, call):
    """The (name, input) Claude Code expects for a script CALL."""
    kind = call["tool"]
    if kind == "bash":
        return "Bash", {"command": call["command"], "description": "scripted command"}
    if kind == "write":
        return "Write", {"file_path": call["path"], "content": call["content"]}
    if kind == "edit":
        return "Edit", {"file_path": call["path"], "old_string": call["old"],
                        "new_string": call["new"]}
    if kind == "raw":
        return call["name"], call["input"]
    raise sm.ScriptError("turns[%d].tool_calls[%d]: %s is not a Claude Code tool" % (t, c, kind))


def blocks_for(index, turn):
    """The content blocks and stop reason of a turn's answer."""
    blocks = []
    if turn.get("text"):
        blocks.append({"type": "text", "text": turn["text"]})
    for c, call in enumerate(turn.get("tool_calls", [])):
        name, inp = tool_use(index, c, call)
        blocks.append({"type": "tool_use", "id": "toolu_%03d_%02d" % (index, c),
                       "name": name, "input": inp})
    return blocks, ("tool_use" if turn.get("tool_calls") else "end_turn")


def message(msg_id, blocks, stop, usage_in, usage_out):
    return {"id": msg_id, "type": "message", "role": "assistant", "model": MODEL,
            "content": blocks, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": usage_in, "output_tokens": usage_out,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


class AnthropicHandler(sm.Handler):
    def handle_any(self, body):
        path = self.path.split("?", 1)[0]
        if self.command == "POST" and path == "/v1/messages/count_tokens":
            self.log(body, None, "count_tokens")
            self.send_json(200, {"input_tokens": 10})
        elif self.command == "GET" and path == "/v1/models":
            self.log(body, None, "models")
            self.send_json(200, {"data": [{"type": "model", "id": MODEL, "display_name": MODEL,
                                           "created_at": "2025-01-01T00:00:00Z"}],
                                 "has_more": False, "first_id": MODEL, "last_id": MODEL})
        elif self.command == "POST" and path == "/v1/messages" and isinstance(body, dict):
            self.messages(body)
        else:
            self.log(body, None, "not_found")
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": "no such path"}})

    def messages(self, body):
        if not body.get("tools"):
            self.log(body, None, "side_query")
            self.answer(body, "msg_side_%d" % self.server.request_log.seq,
                        [{"type": "text", "text": SIDE_ANSWER}], "end_turn", 1, 1)
            return
        index, turn = self.server.cursor.take()
        if turn is None:
            self.log(body, None, "exhausted")
            self.answer(body, "msg_exhausted", [{"type": "text", "text": "SCRIPT EXHAUSTED"}],
                        "end_turn", 1, 1)
            return
        if "hang" in turn:
            self.log(body, index, "hang")
            self.hang()
            return
        if turn.get("drop") == "before":
            self.log(body, index, "drop_before")
            self.drop()
            return
        failed = sm.expect_failure(turn, body)
        if failed:
            self.log(body, index, "expect_failed", error=failed)
            self.answer(body, "msg_%03d" % index, [{"type": "text", "text": failed}],
                        "end_turn", 1, 1)
            return
        if turn.get("drop") == "mid":
            self.log(body, index, "drop_mid")
            self.start_sse()
            self.sse("message_start", {"type": "message_start",
                                       "message": message("msg_%03d" % index, [], None, 1, 1)})
            self.drop()
            return
        try:
            blocks, stop = blocks_for(index, turn)
        except sm.ScriptError as e:
            self.log(body, index, "script_error", error=str(e))
            self.send_json(500, {"type": "error", "error": {"type": "api_error",
                                                            "message": str(e)}})
            return
        usage_in, usage_out = sm.turn_usage(turn)
        self.log(body, index, "answer", stop_reason=stop)
        self.answer(body, "msg_%03d" % index, blocks, stop, usage_in, usage_out)

    def answer(self, body, msg_id, blocks, stop, usage_in, usage_out):
        if not body.get("stream"):
            self.send_json(200, message(msg_id, blocks, stop, usage_in, usage_out))
            return
        self.start_sse()
        self.sse("message_start", {"type": "message_start",
                                   "message": message(msg_id, [], None, usage_in, 1)})
        for i, b in enumerate(blocks):
            self.stream_block(i, b)
        self.sse("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": usage_out}})
        self.sse("message_stop", {"type": "message_stop"})

    def stream_block(self, i, b):
        if b["type"] == "text":
            self.sse("content_block_start", {"type": "content_block_start", "index": i,
                                             "content_block": {"type": "text", "text": ""}})
            delta = {"type": "text_delta", "text": b["text"]}
        else:
            start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            self.sse("content_block_start", {"type": "content_block_start", "index": i,
                                             "content_block": start})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
        self.sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                         "delta": delta})
        self.sse("content_block_stop", {"type": "content_block_stop", "index": i})


if __name__ == "__main__":
    sys.exit(sm.main(AnthropicHandler, "Scripted Anthropic Messages API on 127.0.0.1."))
