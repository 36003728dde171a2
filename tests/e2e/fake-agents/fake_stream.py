#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# fake_stream.py: an agent that speaks exactly the event shapes of Claude Code's stream-json
# (system/init with session_id, assistant, user tool results, result with usage) or Codex's
# exec --json (thread.started with thread_id, turn.started, item.*, turn.completed/turn.failed),
# for fast tests of proctor run's turn handling without the real CLIs. The prompt (last
# argument, or stdin) steers it: "call uip ARGS" runs the mocked CLI through a shell the way a
# Bash tool would; "crash" exits without the end-of-turn event; "garbage" prints no JSON;
# "hang" never ends the turn; "fail" ends the turn failed; "deep" prints events nested 256 and
# 2,047 arrays and objects deep (as deep as a record may be, and as deep as jansson parses).
import json, os, subprocess, sys, time, uuid

def out(o):
    sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()

def main():
    style = sys.argv[1]               # "stream-json" or "exec-json"
    args = sys.argv[2:]
    resume = None
    if "--resume" in args:
        resume = args[args.index("--resume") + 1]
    prompt = args[-1] if args and args[-1] != "-" else sys.stdin.read()
    sid = resume or str(uuid.UUID(int=os.getpid()))
    if prompt.startswith("garbage"):
        print("this is not the event format you are looking for")
        return 0
    if prompt.startswith("hang"):
        out({"type": "system", "subtype": "init", "session_id": sid} if style == "stream-json"
            else {"type": "thread.started", "thread_id": sid})
        time.sleep(3600)
    if style == "stream-json":
        out({"type": "system", "subtype": "init", "session_id": sid, "cwd": os.getcwd(), "tools": ["Bash"]})
    else:
        out({"type": "thread.started", "thread_id": sid})
        out({"type": "turn.started"})
    text = "resumed " + resume if resume else "first turn"
    if prompt.startswith("deep"):
        for k in (255, 2046):  # json.dumps recurses per level: written by hand
            sys.stdout.write('{"type":"assistant","deep":' + "[" * k + "1" + "]" * k + "}\n")
        sys.stdout.flush()
    if prompt.startswith("call "):
        cmd = prompt[5:]
        r = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True)
        text = r.stdout.strip() or r.stderr.strip()
        if style == "stream-json":
            out({"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": cmd}}]}})
            out({"type": "user", "message": {"content": [{"type": "tool_result", "content": text}]}})
        else:
            out({"type": "item.completed", "item": {"type": "command_execution", "command": cmd, "aggregated_output": text, "exit_code": r.returncode}})
    if prompt.startswith("crash"):
        return 3
    usage = {"input_tokens": 10, "output_tokens": 5}
    if style == "stream-json":
        out({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}})
        out({"type": "result", "subtype": "error_during_execution" if prompt.startswith("fail") else "success",
             "is_error": prompt.startswith("fail"), "session_id": sid, "result": "it failed" if prompt.startswith("fail") else text,
             "usage": usage})
    else:
        out({"type": "item.completed", "item": {"type": "agent_message", "text": text}})
        if prompt.startswith("fail"):
            out({"type": "turn.failed", "error": {"message": "it failed"}})
        else:
            out({"type": "turn.completed", "usage": usage})
    return 0

sys.exit(main())
