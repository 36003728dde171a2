#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of the scripted model servers themselves (no agent CLI needed): the script format and
its errors, the Anthropic and OpenAI SSE event sequences, turn consumption, side queries,
expectations, drop and the request log. Run: python3 tests/agents/test_models.py"""

import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scripted_model as sm  # noqa: E402


def sse_events(raw):
    """[(event, data)] of an SSE body."""
    out = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        lines = dict(ln.split(": ", 1) for ln in block.split("\n"))
        out.append((lines["event"], json.loads(lines["data"])))
    return out


class ScriptFormat(unittest.TestCase):
    def bad(self, doc, needle):
        with self.assertRaises(sm.ScriptError) as cm:
            sm.parse_script(json.dumps(doc))
        self.assertIn(needle, str(cm.exception))

    def test_script__accepts_every_turn_kind(self):
        turns = sm.parse_script(json.dumps({"turns": [
            {"tool_calls": [{"tool": "bash", "command": "ls"},
                            {"tool": "write", "path": "/w/a", "content": "x"},
                            {"tool": "edit", "path": "/w/a", "old": "x", "new": "y"},
                            {"tool": "apply_patch", "patch": "*** Begin Patch"},
                            {"tool": "raw", "name": "Read", "input": {"file_path": "/w/a"}}]},
            {"text": "t", "usage": {"input_tokens": 3, "output_tokens": 4}, "expect": "ls"},
            {"drop": "mid"}, {"drop": "before"}, {"hang": True}]}))
        self.assertEqual(len(turns), 5)

    def test_script__errors_name_turn_and_key(self):
        self.bad([], "exactly one key")
        self.bad({"turns": []}, "1..1000")
        self.bad({"turns": [{"text": "a", "colour": 1}]}, "turns[0]: unknown key colour")
        self.bad({"turns": [{"text": "a"}, {}]}, "turns[1]: needs exactly one of")
        self.bad({"turns": [{"tool_calls": [], "text": "a"}]}, "turns[0].tool_calls")
        self.bad({"turns": [{"tool_calls": [{"tool": "rm"}]}]}, "turns[0].tool_calls[0].tool")
        self.bad({"turns": [{"tool_calls": [{"tool": "bash"}]}]}, "bash takes exactly")
        self.bad({"turns": [{"tool_calls": [{"tool": "bash", "command": 1}]}]},
                 "turns[0].tool_calls[0].command: must be a string")
        self.bad({"turns": [{"drop": "later"}]}, "turns[0].drop")
        self.bad({"turns": [{"text": "a", "usage": {"input_tokens": -1}}]}, "turns[0].usage")

    def test_script__size_limit(self):
        with self.assertRaises(sm.ScriptError):
            sm.parse_script(" " * (sm.MAX_SCRIPT_BYTES + 1))


class ServerCase(unittest.TestCase):
    module = None

    def start(self, turns):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        with open(os.path.join(d, "s.json"), "w") as f:
            json.dump({"turns": turns}, f)
        self.log_path = os.path.join(d, "log.jsonl")
        port_file = os.path.join(d, "port")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, self.module),
                                      os.path.join(d, "s.json"), "--log", self.log_path,
                                      "--port-file", port_file])
        for _ in range(200):
            if os.path.exists(port_file):
                break
            time.sleep(0.02)
        with open(port_file) as f:
            self.port = int(f.read())

    def tearDown(self):
        self.proc.kill()
        self.proc.wait()
        self.dir.cleanup()

    def post(self, path, body):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        try:
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def log(self):
        with open(self.log_path) as f:
            return [json.loads(ln) for ln in f]


class Anthropic(ServerCase):
    module = "model_anthropic.py"
    TOOLS = [{"name": "Bash", "input_schema": {}}, {"name": "Write", "input_schema": {}}]

    def req(self, text="hi", tools=True):
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": text}]}
        if tools:
            body["tools"] = self.TOOLS
        return self.post("/v1/messages?beta=true", body)

    def test_anthropic__tool_turn_streams_tool_use_blocks(self):
        self.start([{"tool_calls": [{"tool": "bash", "command": "echo hi > x.txt"},
                                    {"tool": "write", "path": "/w/f", "content": "c"}]}])
        status, raw = self.req()
        self.assertEqual(status, 200)
        ev = sse_events(raw)
        self.assertEqual([e for e, _ in ev], [
            "message_start", "content_block_start", "content_block_delta", "content_block_stop",
            "content_block_start", "content_block_delta", "content_block_stop",
            "message_delta", "message_stop"])
        self.assertEqual(ev[1][1]["content_block"]["name"], "Bash")
        self.assertEqual(ev[1][1]["content_block"]["id"], "toolu_000_00")
        self.assertEqual(json.loads(ev[2][1]["delta"]["partial_json"])["command"],
                         "echo hi > x.txt")
        self.assertEqual(json.loads(ev[5][1]["delta"]["partial_json"]),
                         {"file_path": "/w/f", "content": "c"})
        self.assertEqual(ev[7][1]["delta"]["stop_reason"], "tool_use")

    def test_anthropic__text_turn_ends_turn_with_usage(self):
        self.start([{"text": "done", "usage": {"input_tokens": 7, "output_tokens": 3}}])
        ev = sse_events(self.req()[1])
        self.assertEqual(ev[0][1]["message"]["usage"]["input_tokens"], 7)
        self.assertEqual(ev[2][1]["delta"], {"type": "text_delta", "text": "done"})
        self.assertEqual(ev[-2][1]["delta"]["stop_reason"], "end_turn")
        self.assertEqual(ev[-2][1]["usage"]["output_tokens"], 3)

    def test_anthropic__side_query_consumes_no_turn(self):
        self.start([{"text": "first"}, {"text": "second"}])
        self.req(tools=False)
        self.assertEqual(sse_events(self.req()[1])[2][1]["delta"]["text"], "first")
        self.assertEqual(sse_events(self.req()[1])[2][1]["delta"]["text"], "second")
        self.assertEqual(sse_events(self.req()[1])[2][1]["delta"]["text"], "SCRIPT EXHAUSTED")
        self.assertEqual([r["action"] for r in self.log()],
                         ["side_query", "answer", "answer", "exhausted"])

    def test_anthropic__expect_failure_is_answered_and_logged(self):
        self.start([{"text": "ok", "expect": "fixture-answer-42"}])
        ev = sse_events(self.req("nothing here")[1])
        self.assertIn("SCRIPT EXPECTATION FAILED", ev[2][1]["delta"]["text"])
        self.assertEqual(self.log()[0]["action"], "expect_failed")

    def test_anthropic__drop_is_sticky(self):
        self.start([{"drop": "before"}])
        for _ in range(2):
            with self.assertRaises((http.client.HTTPException, ConnectionError)):
                self.req()
        self.assertEqual([r["action"] for r in self.log()], ["drop_before", "drop_before"])

    def test_anthropic__log_keeps_messages_and_shortens_tools(self):
        self.start([{"text": "ok"}])
        self.req("the tool said 42")
        rec = self.log()[0]
        self.assertEqual(rec["body"]["tools"], ["Bash", "Write"])
        self.assertEqual(rec["body"]["messages"][0]["content"], "the tool said 42")
        self.assertEqual((rec["path"], rec["turn"], rec["seq"]), ("/v1/messages?beta=true", 0, 1))

    def test_anthropic__count_tokens_and_unknown_path(self):
        self.start([{"text": "ok"}])
        self.assertEqual(self.post("/v1/messages/count_tokens", {})[0], 200)
        self.assertEqual(self.post("/v1/other", {})[0], 404)


class OpenAI(ServerCase):
    module = "model_openai.py"

    def req(self, tools):
        return self.post("/v1/responses", {"model": "m", "stream": True, "input": [],
                                           "tools": tools})

    def test_openai__bash_becomes_the_offered_shell_tool(self):
        self.start([{"tool_calls": [{"tool": "bash", "command": "echo hi"}]}] * 3)
        fn = [{"type": "function", "name": "exec_command"}]
        ev = sse_events(self.req(fn)[1])
        self.assertEqual([e for e, _ in ev], ["response.created", "response.output_item.added",
                                              "response.output_item.done", "response.completed"])
        item = ev[2][1]["item"]
        self.assertEqual((item["type"], item["name"], item["call_id"]),
                         ("function_call", "exec_command", "call_000_00"))
        self.assertEqual(json.loads(item["arguments"]), {"cmd": "echo hi"})
        item = sse_events(self.req([{"type": "function", "name": "shell"}])[1])[2][1]["item"]
        self.assertEqual(json.loads(item["arguments"])["command"], ["bash", "-c", "echo hi"])
        item = sse_events(self.req([{"type": "local_shell"}])[1])[2][1]["item"]
        self.assertEqual(item["type"], "local_shell_call")

    def test_openai__write_is_an_apply_patch(self):
        self.start([{"tool_calls": [{"tool": "write", "path": "/w/a", "content": "x\ny\n"}]}])
        item = sse_events(self.req([{"type": "custom", "name": "apply_patch"}])[1])[2][1]["item"]
        self.assertEqual(item["type"], "custom_tool_call")
        self.assertEqual(item["input"],
                         "*** Begin Patch\n*** Add File: /w/a\n+x\n+y\n*** End Patch")

    def test_openai__text_turn_completes_with_usage(self):
        self.start([{"text": "done", "usage": {"input_tokens": 5, "output_tokens": 2}}])
        ev = sse_events(self.req([{"type": "function", "name": "exec_command"}])[1])
        self.assertEqual(ev[2][1]["delta"], "done")
        done = ev[-1][1]["response"]
        self.assertEqual(done["status"], "completed")
        self.assertEqual(done["output"][0]["content"][0]["text"], "done")
        self.assertEqual((done["usage"]["input_tokens"], done["usage"]["output_tokens"]), (5, 2))

    def test_openai__no_shell_tool_is_a_script_error(self):
        self.start([{"tool_calls": [{"tool": "bash", "command": "ls"}]}])
        status, raw = self.req([{"type": "function", "name": "view_image"}])
        self.assertEqual(status, 500)
        self.assertIn(b"no shell tool", raw)

    def test_openai__drop_mid_sends_created_then_closes(self):
        self.start([{"drop": "mid"}])
        try:
            status, raw = self.req([{"type": "function", "name": "exec_command"}])
        except (http.client.HTTPException, ConnectionError):
            raw = b""
        self.assertNotIn(b"response.completed", raw)
        self.assertEqual(self.log()[0]["action"], "drop_mid")


class TapResult(unittest.TextTestResult):
    """One TAP line per test (for tests/run.sh's tally)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.n = 0

    def _tap(self, test, ok, note=""):
        self.n += 1
        print("%s %d - %s%s" % ("ok" if ok else "not ok", self.n, test.id(), note), flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._tap(test, True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._tap(test, False)

    def addError(self, test, err):
        super().addError(test, err)
        self._tap(test, False)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._tap(test, True, " # skip " + reason)


if __name__ == "__main__":
    if sys.argv[1:] == ["--tap"]:
        suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
        print("1..%d" % suite.countTestCases())
        r = unittest.TextTestRunner(stream=sys.stderr, verbosity=0,
                                    resultclass=TapResult).run(suite)
        sys.exit(0 if r.wasSuccessful() else 1)
    unittest.main(verbosity=2)
