#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The scripted model servers of tests/agents/ for real_agents.bats, with one difference: a
{"hang": true} turn hangs one request only (tests/agents/ makes it sticky), so a turn that
proctor discards after limits.turn_timeout_s can be followed by a turn that completes. Drops stay
sticky (the CLI's retries must not get past them). The wire formats are tests/agents/'s.

usage: model.py anthropic|openai SCRIPT [--log FILE] [--port-file FILE]
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "agents"))

import scripted_model as sm  # noqa: E402


class OneHangCursor(sm.Cursor):
    """As sm.Cursor, but a hang turn is consumed by the request it hangs."""

    def take(self):
        with self.lock:
            if self.next >= len(self.turns):
                return None, None
            i = self.next
            turn = self.turns[i]
            if "drop" not in turn:
                self.next += 1
            return i, turn


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("anthropic", "openai"):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    vendor = sys.argv.pop(1)
    sm.Cursor = OneHangCursor  # sm.main() builds its cursor from the module's Cursor
    if vendor == "anthropic":
        import model_anthropic as m
        return sm.main(m.AnthropicHandler, "Scripted Anthropic API (one-shot hangs).")
    import model_openai as m
    return sm.main(m.OpenAIHandler, "Scripted OpenAI Responses API (one-shot hangs).")


if __name__ == "__main__":
    sys.exit(main())
