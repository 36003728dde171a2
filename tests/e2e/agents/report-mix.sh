#!/bin/sh
# SPDX-License-Identifier: MIT
# Gives proctor report something in every section: a uip call a rule serves, one that falls
# through to the default near a rule, one passed through to the real tool, and a write outside
# the workspace put to the guard's PreToolUse hook as Claude Code would (the hook's command from
# $PROCTOR_GUARD_SETTINGS), which denies it and logs the denial.
uip or jobs list >/dev/null 2>&1
uip or jobs lst --folder Shared >/dev/null 2>&1
uip docs ask hello >/dev/null 2>&1
pt=$?
hook=$(python3 -c 'import json, os
s = json.load(open(os.environ["PROCTOR_GUARD_SETTINGS"]))
print(s["hooks"]["PreToolUse"][0]["hooks"][0]["command"])')
verdict=$(printf '{"hook_event_name":"PreToolUse","session_id":"s","cwd":"%s","tool_name":"Write","tool_input":{"file_path":"/etc/planted","content":"x"}}' "$PWD" |
	sh -c "$hook")
printf '{"agent":"report-mix","passthrough_exit":%d,"verdict":%s}\n' "$pt" "${verdict:-null}"
exit 0
