"""The tool_* checkers read the Run's transcript.jsonl before usage.tool_calls, end to end: a
program runner writes both (they disagree), or leaves a link under the transcript's name."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import grade_records, make_eval

RUNNER = """#!/bin/sh
case "$SMEVALS_TASK" in
  both)
    printf '%s\\n' '{"type":"message","role":"user","text":"find it"}' \\
      '{"type":"tool_call","id":"1","name":"search","arguments":"{\\"q\\": \\"cats\\"}"}' \\
      'not a transcript line' \\
      '{"type":"tool_call","id":"2","name":"fetch","arguments":{"url":"https://x"}}' \\
      > transcript.jsonl
    echo '{"tool_calls": [{"name": "delete", "arguments": {}}]}' > "$SMEVALS_USAGE_FILE" ;;
  link)
    ln -s /etc/hostname transcript.jsonl
    echo '{"tool_calls": [{"name": "search", "arguments": {}}]}' > "$SMEVALS_USAGE_FILE" ;;
  usage)
    echo '{"tool_calls": [{"name": "delete", "arguments": {}}]}' > "$SMEVALS_USAGE_FILE" ;;
esac
echo done
"""

GRADER = """
checks:
  - checker: tool_sequence
    tools: [search, fetch]
  - checker: tool_not_called
    tools: [delete]
  - checker: tool_argument_assertion
    tool: search
    path: q
    equals: cats
"""


def test_the_transcript_comes_before_usage(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={name: "prompt: go\n" for name in
                                           ("both", "link", "usage")},
                   configs={"default": "runner: ./agent.sh\nmodel: m1\n"},
                   files={"configs/agent.sh": RUNNER}, graders={"default": GRADER})
    assert cli("run", "-g", str(ev)).code == 1
    checks = {g["run"]["task"]: [(c["ok"], c.get("notes", "")) for c in g["checks"]]
              for g in grade_records(ev)}
    assert checks["both"] == [(True, ""), (True, ""), (True, "")]
    refused = (False, "transcript.jsonl is a symbolic link: not followed")
    assert checks["link"] == [refused, refused, refused]
    assert checks["usage"] == [
        (False, "the call sequence does not contain 'search', 'fetch' in order"),
        (False, "called: 'delete'"), (False, "'search' was not called")]
