# SPDX-License-Identifier: MIT
"""The shared half of the scripted model servers: script loading, the turn cursor, the request
log and the loopback HTTP server. It does not know any vendor's wire format (model_anthropic.py
and model_openai.py do).

A script is a JSON object {"turns": [TURN, ...]}. Each TURN is what the model answers to the
next turn-consuming request (one that offers tools, i.e. the agent's main loop):

  {"text": "final answer"}                                   final text, end of the agent's turn
  {"tool_calls": [CALL, ...], "text": "optional preamble"}  tool calls; the CLI runs them and
                                                             sends the results in its next request
  {"drop": "before"}   close the connection without answering (sticky: every later request is
                       dropped too, so the CLI's retries cannot get past it)
  {"drop": "mid"}      send the start of a streamed answer, then close the connection (sticky)
  {"hang": true}       accept the request and never answer (sticky; for turn timeouts)

Optional keys on any TURN: "usage": {"input_tokens": N, "output_tokens": N}; "expect": a string
the request must contain (else the server answers an error text naming it, so a test fails).

CALL is one of
  {"tool": "bash", "command": "echo hi > x.txt"}
  {"tool": "write", "path": "/abs/file", "content": "..."}
  {"tool": "edit", "path": "/abs/file", "old": "...", "new": "..."}
  {"tool": "apply_patch", "patch": "*** Begin Patch ..."}        (Codex)
  {"tool": "raw", "name": "ToolName", "input": {...}}           sent as given
Each vendor module maps these to the tool names its CLI offered in the request.

Every request is logged as one JSON line (--log): its sequence number, method, path, the turn it
consumed (or null), the action taken, and the request body with tool definitions and the system
prompt shortened to their names and lengths. Tests read it to see what the CLI sent back.
"""

import argparse
import http.server
import json
import os
import socket
import sys
import threading

MAX_SCRIPT_BYTES = 1 << 20
MAX_TURNS = 1000
MAX_REQUEST_BYTES = 32 << 20
MAX_CALLS_PER_TURN = 64

TURN_KEYS = {"text", "tool_calls", "drop", "hang", "usage", "expect"}
CALL_KEYS = {
    "bash": {"command"},
    "write": {"path", "content"},
    "edit": {"path", "old", "new"},
    "apply_patch": {"patch"},
    "raw": {"name", "input"},
}


class ScriptError(ValueError):
    """A script that does not follow the format; the message names the turn and key."""


def _check_call(t, c, call):
    where = "turns[%d].tool_calls[%d]" % (t, c)
    if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
        raise ScriptError("%s: must be an object with a string \"tool\"" % where)
    want = CALL_KEYS.get(call["tool"])
    if want is None:
        raise ScriptError("%s.tool: unknown tool %r (one of %s)"
                          % (where, call["tool"], ", ".join(sorted(CALL_KEYS))))
    have = set(call) - {"tool"}
    if have != want:
        raise ScriptError("%s: %s takes exactly %s, got %s"
                          % (where, call["tool"], sorted(want), sorted(have)))
    for k in want - {"input"}:
        if not isinstance(call[k], str):
            raise ScriptError("%s.%s: must be a string" % (where, k))
    if call["tool"] == "raw" and not isinstance(call["input"], dict):
        raise ScriptError("%s.input: must be an object" % where)


def _check_turn(t, turn):
    where = "turns[%d]" % t
    if not isinstance(turn, dict):
        raise ScriptError("%s: must be an object" % where)
    unknown = set(turn) - TURN_KEYS
    if unknown:
        raise ScriptError("%s: unknown key %s" % (where, sorted(unknown)[0]))
    kinds = [k for k in ("tool_calls", "drop", "hang") if k in turn]
    if len(kinds) > 1 or (not kinds and "text" not in turn):
        raise ScriptError("%s: needs exactly one of text, tool_calls, drop, hang" % where)
    if "text" in turn and not isinstance(turn["text"], str):
        raise ScriptError("%s.text: must be a string" % where)
    if "drop" in turn and turn["drop"] not in ("before", "mid"):
        raise ScriptError("%s.drop: must be \"before\" or \"mid\"" % where)
    if "hang" in turn and turn["hang"] is not True:
        raise ScriptError("%s.hang: must be true" % where)
    if "expect" in turn and not isinstance(turn["expect"], str):
        raise ScriptError("%s.expect: must be a string" % where)
    if "usage" in turn:
        u = turn["usage"]
        if (not isinstance(u, dict) or set(u) - {"input_tokens", "output_tokens"}
                or not all(isinstance(v, int) and v >= 0 for v in u.values())):
            raise ScriptError("%s.usage: must be {input_tokens, output_tokens} integers" % where)
    if "tool_calls" in turn:
        calls = turn["tool_calls"]
        if not isinstance(calls, list) or not 1 <= len(calls) <= MAX_CALLS_PER_TURN:
            raise ScriptError("%s.tool_calls: must be a list of 1..%d calls"
                              % (where, MAX_CALLS_PER_TURN))
        for c, call in enumerate(calls):
            _check_call(t, c, call)


def parse_script(text):
    """Parse and validate a script; raises ScriptError naming the first fault."""
    if len(text) > MAX_SCRIPT_BYTES:
        raise ScriptError("script: larger than %d bytes" % MAX_SCRIPT_BYTES)
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise ScriptError("script: not JSON: %s" % e) from None
    if not isinstance(doc, dict) or set(doc) != {"turns"} or not isinstance(doc["turns"], list):
        raise ScriptError("script: must be an object with exactly one key, \"turns\" (a list)")
    if not 1 <= len(doc["turns"]) <= MAX_TURNS:
        raise ScriptError("turns: must hold 1..%d turns" % MAX_TURNS)
    for t, turn in enumerate(doc["turns"]):
        _check_turn(t, turn)
    return doc["turns"]


class Cursor:
    """The position in the script, shared by the server's threads. Drop and hang turns are
    sticky: they are returned again for every later request."""

    def __init__(self, turns):
        self.turns = turns
        self.next = 0
        self.lock = threading.Lock()

    def take(self):
        """Return (index, turn) for the next turn-consuming request; (None, None) past the end."""
        with self.lock:
            if self.next >= len(self.turns):
                return None, None
            i = self.next
            turn = self.turns[i]
            if "drop" not in turn and "hang" not in turn:
                self.next += 1
            return i, turn


class Log:
    def __init__(self, path):
        self.lock = threading.Lock()
        self.seq = 0
        self.f = open(path, "a", encoding="utf-8") if path else None

    def write(self, record):
        with self.lock:
            self.seq += 1
            record = dict(record, seq=self.seq)
            if self.f:
                self.f.write(json.dumps(record, sort_keys=True) + "\n")
                self.f.flush()


def shorten_body(body):
    """The body as logged: tool definitions reduced to their names, system prompts to lengths."""
    if not isinstance(body, dict):
        return body
    out = dict(body)
    if isinstance(out.get("tools"), list):
        out["tools"] = [tool_name(t) for t in out["tools"]]
    for k in ("system", "instructions"):
        if k in out:
            out[k] = {"chars": len(json.dumps(out[k]))}
    return out


def tool_name(t):
    if not isinstance(t, dict):
        return None
    if isinstance(t.get("name"), str):
        return t["name"]
    if isinstance(t.get("function"), dict):
        return t["function"].get("name")
    return t.get("type")


class Handler(http.server.BaseHTTPRequestHandler):
    """Base handler: reads the body with a limit, logs, dispatches to the vendor's do_post()."""

    protocol_version = "HTTP/1.1"
    server_version = "proctor-scripted-model/1"

    def log_message(self, fmt, *args):  # noqa: D401 - quiet; the JSON log is the record
        return

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n < 0 or n > MAX_REQUEST_BYTES:
            raise ValueError("request body of %d bytes (limit %d)" % (n, MAX_REQUEST_BYTES))
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("Content-Encoding") == "zstd":
            raise ValueError("zstd request bodies are not supported")
        if self.headers.get("Content-Encoding") in ("gzip", "deflate"):
            import zlib
            raw = zlib.decompress(raw, 47)
        return json.loads(raw) if raw else None

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, event, data):
        self.wfile.write(("event: %s\ndata: %s\n\n" % (event, json.dumps(data))).encode())
        self.wfile.flush()

    def drop(self):
        """Close the connection abruptly (RST where possible), answering nothing more."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def hang(self):
        self.server.hang_event.wait()
        self.close_connection = True

    def log(self, body, turn_index, action, **extra):
        rec = {"method": self.command, "path": self.path, "turn": turn_index, "action": action,
               "body": shorten_body(body)}
        rec.update(extra)
        self.server.request_log.write(rec)

    def do_GET(self):
        self.handle_any(None)

    def do_POST(self):
        try:
            body = self.read_body()
        except ValueError as e:
            self.server.request_log.write({"method": "POST", "path": self.path,
                                           "action": "bad_request", "error": str(e)})
            self.send_json(400, {"error": {"type": "invalid_request_error", "message": str(e)}})
            return
        self.handle_any(body)

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def handle_any(self, body):
        raise NotImplementedError


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def turn_usage(turn, default_in=10, default_out=5):
    u = (turn or {}).get("usage", {})
    return u.get("input_tokens", default_in), u.get("output_tokens", default_out)


def expect_failure(turn, body):
    """The error text when the turn's "expect" string is not in the request, else None."""
    want = (turn or {}).get("expect")
    if want is None:
        return None
    if want in json.dumps(body, ensure_ascii=False):
        return None
    return "SCRIPT EXPECTATION FAILED: the request does not contain %r" % want


def main(handler_class, description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("script", help="the JSON script of model turns")
    ap.add_argument("--log", help="append one JSON line per request to this file")
    ap.add_argument("--port-file", help="write the port here (else print it on stdout)")
    ap.add_argument("--port", type=int, default=0, help="port (default: chosen by the OS)")
    a = ap.parse_args()
    try:
        with open(a.script, encoding="utf-8") as f:
            turns = parse_script(f.read(MAX_SCRIPT_BYTES + 1))
    except (OSError, ScriptError) as e:
        print("%s: %s" % (a.script, e), file=sys.stderr)
        return 2
    srv = Server(("127.0.0.1", a.port), handler_class)
    srv.cursor = Cursor(turns)
    srv.request_log = Log(a.log)
    srv.hang_event = threading.Event()
    port = srv.server_address[1]
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, a.port_file)
    else:
        print(port, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
