#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A scripted OpenAI Responses API on loopback for Codex (a model_providers entry with
wire_api = "responses" in CODEX_HOME/config.toml): replays a script of model turns (format in
scripted_model.py) as streamed SSE responses. It owns the wire format only.

A request to /v1/responses is a turn of the agent when it offers tools (Codex's main loop always
does); other requests get a short text answer and consume nothing. A script's "bash" call is sent
as whichever shell tool the request offered (exec_command, shell_command, shell, or the built-in
local_shell), "apply_patch" as the apply_patch tool (custom/freeform or function), "write" as an
apply_patch that adds the file. /v1/models is answered; any other path gets 404 and is logged.

usage: model_openai.py SCRIPT [--log FILE] [--port-file FILE]
"""

import json
import sys

import scripted_model as sm

MODEL = "gpt-scripted"
SIDE_ANSWER = "ok"


def offered(body):
    """Map tool name -> tool type ("function", "custom", "local_shell", ...) of the request."""
    out = {}
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            name = sm.tool_name(t)
            if isinstance(name, str):
                out[name] = t.get("type")
    return out


def shell_item(call_id, command, tools):
    if "exec_command" in tools:
        return function_call(call_id, "exec_command", {"cmd": command})
    if "shell_command" in tools:
        return function_call(call_id, "shell_command", {"command": command})
    if "shell" in tools:
        return function_call(call_id, "shell", {"command": ["bash", "-c", command]})
    if "local_shell" in tools:
        return {"type": "local_shell_call", "id": "lsh_" + call_id, "call_id": call_id,
                "status": "completed",
                "action": {"type": "exec", "command": ["bash", "-c", command], "env": {}}}
    raise sm.ScriptError("the request offers no shell tool (tools: %s)" % sorted(tools))


def patch_item(call_id, patch, tools):
    kind = tools.get("apply_patch")
    if kind == "custom":
        return {"type": "custom_tool_call", "id": "ctc_" + call_id, "call_id": call_id,
                "name": "apply_patch", "input": patch, "status": "completed"}
    if kind == "function":
        return function_call(call_id, "apply_patch", {"input": patch})
    # No apply_patch tool offered: Codex still intercepts apply_patch run through its shell.
    return shell_item(call_id, "apply_patch <<'PROCTOR_PATCH'\n%s\nPROCTOR_PATCH" % patch, tools)


def function_call(call_id, name, args):
    return {"type": "function_call", "id": "fc_" + call_id, "call_id": call_id, "name": name,
            "arguments": json.dumps(args), "status": "completed"}


def add_file_patch(path, content):
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "*** Begin Patch\n*** Add File: %s\n%s\n*** End Patch" % (
        path, "\n".join("+" + ln for ln in lines))


def edit_patch(path, old, new):
    body = "\n".join(["-" + ln for ln in old.split("\n")] + ["+" + ln for ln in new.split("\n")])
    return "*** Begin Patch\n*** Update File: %s\n@@\n%s\n*** End Patch" % (path, body)


def call_item(t, c, call, tools):
    call_id = "call_%03d_%02d" % (t, c)
    kind = call["tool"]
    if kind == "bash":
        return shell_item(call_id, call["command"], tools)
    if kind == "apply_patch":
        return patch_item(call_id, call["patch"], tools)
    if kind == "write":
        return patch_item(call_id, add_file_patch(call["path"], call["content"]), tools)
    if kind == "edit":
        return patch_item(call_id, edit_patch(call["path"], call["old"], call["new"]), tools)
    if kind == "raw":
        return function_call(call_id, call["name"], call["input"])
    raise sm.ScriptError("turns[%d].tool_calls[%d]: unknown tool %s" % (t, c, kind))


def message_item(item_id, text):
    return {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def response(resp_id, status, output, usage_in, usage_out):
    r = {"id": resp_id, "object": "response", "created_at": 1700000000, "status": status,
         "model": MODEL, "output": output}
    if status == "completed":
        r["usage"] = {"input_tokens": usage_in, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": usage_out,
                      "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": usage_in + usage_out}
    return r


class OpenAIHandler(sm.Handler):
    def handle_any(self, body):
        path = self.path.split("?", 1)[0]
        if self.command == "GET" and path == "/v1/models":
            self.log(body, None, "models")
            self.send_json(200, {"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 1700000000, "owned_by": "proctor"}],
                "models": []})
        elif self.command == "POST" and path == "/v1/responses" and isinstance(body, dict):
            self.respond(body)
        else:
            self.log(body, None, "not_found")
            self.send_json(404, {"error": {"type": "not_found", "message": "no such path"}})

    def respond(self, body):
        if not body.get("tools"):
            self.log(body, None, "side_query")
            self.answer("resp_side_%d" % self.server.request_log.seq,
                        [message_item("msg_side", SIDE_ANSWER)], 1, 1)
            return
        index, turn = self.server.cursor.take()
        if turn is None:
            self.log(body, None, "exhausted")
            self.answer("resp_exhausted", [message_item("msg_exhausted", "SCRIPT EXHAUSTED")],
                        1, 1)
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
            self.answer("resp_%03d" % index, [message_item("msg_%03d" % index, failed)], 1, 1)
            return
        if turn.get("drop") == "mid":
            self.log(body, index, "drop_mid")
            self.start_sse()
            self.sse("response.created", {"type": "response.created", "sequence_number": 0,
                                          "response": response("resp_%03d" % index,
                                                               "in_progress", [], 0, 0)})
            self.drop()
            return
        try:
            output = self.output_for(index, turn, offered(body))
        except sm.ScriptError as e:
            self.log(body, index, "script_error", error=str(e))
            self.send_json(500, {"error": {"type": "server_error", "message": str(e)}})
            return
        usage_in, usage_out = sm.turn_usage(turn)
        self.log(body, index, "answer", output_types=[o["type"] for o in output])
        self.answer("resp_%03d" % index, output, usage_in, usage_out)

    @staticmethod
    def output_for(index, turn, tools):
        output = []
        if turn.get("text"):
            output.append(message_item("msg_%03d" % index, turn["text"]))
        for c, call in enumerate(turn.get("tool_calls", [])):
            output.append(call_item(index, c, call, tools))
        return output

    def answer(self, resp_id, output, usage_in, usage_out):
        self.start_sse()
        seq = [0]

        def ev(kind, **data):
            data = dict(type=kind, sequence_number=seq[0], **data)
            seq[0] += 1
            self.sse(kind, data)

        ev("response.created", response=response(resp_id, "in_progress", [], 0, 0))
        for i, item in enumerate(output):
            ev("response.output_item.added", output_index=i, item=item)
            if item["type"] == "message":
                text = item["content"][0]["text"]
                ev("response.output_text.delta", item_id=item["id"], output_index=i,
                   content_index=0, delta=text)
                ev("response.output_text.done", item_id=item["id"], output_index=i,
                   content_index=0, text=text)
            ev("response.output_item.done", output_index=i, item=item)
        ev("response.completed",
           response=response(resp_id, "completed", output, usage_in, usage_out))


if __name__ == "__main__":
    sys.exit(sm.main(OpenAIHandler, "Scripted OpenAI Responses API on 127.0.0.1."))
