"""An Eval to explore: four tasks, two models, two samples each, two Checks (`tone`, a judge
replayed offline; `fixed`, `contains`), so every filter of the Eval page has its
own rows; the Runs of `alpha` leave a `transcript.jsonl` and a `workspace.diff`.

| task  | good-1                          | bad-1                             |
| ----- | ------------------------------- | --------------------------------- |
| alpha | pass, pass (transcript, diff)   | fail, fail (tone; a hostile transcript) |
| beta  | pass, fail (flaky: no "fixed")  | fail, fail (tone)                 |
| gamma | pass, pass (usage.tool_calls)   | runner failed, runner failed      |
| delta | error, error (the judge's answer is no verdict)                     |
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals.site import jsdata
from tests.helpers import make_eval, run_cli

RUNNER = r"""#!/bin/sh
case "$SMEVALS_TASK:$SMEVALS_MODEL:$SMEVALS_SAMPLE" in
  alpha:good-1:*)
    echo "fixed the parser"
    cp "$SMEVALS_EVAL_DIR/configs/good.jsonl" transcript.jsonl
    cp "$SMEVALS_EVAL_DIR/configs/work.diff" workspace.diff ;;
  alpha:bad-1:*)
    echo "fixed, sort of"
    cp "$SMEVALS_EVAL_DIR/configs/bad.jsonl" transcript.jsonl
    {
      printf '%s' '{"type":"tool_result","id":"big","name":"cat","output":"'
      head -c 5242880 /dev/zero | tr '\0' 'x'
      printf '%s\n' '"}'
      printf '%s\n' '{"type":"surprise","payload":{"html":"<script>window.PWNED=3</script>"}}'
    } >> transcript.jsonl ;;
  beta:good-1:1) echo "gave up on the zebra" ;;
  beta:good-1:*) echo "fixed: all tests pass" ;;
  beta:bad-1:*) echo "fixed halfway" ;;
  gamma:good-1:*)
    echo "fixed gamma"
    printf '%s\n' '{"tool_calls": [{"name": "search", "arguments": {"q": "<b>gamma</b>"}},
                    "list_files"]}' > "$SMEVALS_USAGE_FILE" ;;
  gamma:bad-1:*) echo "crashed" >&2; exit 3 ;;
  *) echo "fixed nothing, a quiet penguin" ;;
esac
"""

GOOD: list[dict[str, Any]] = [
    {"type": "message", "role": "user", "text": "Fix the parser", "turn": 0},
    {"type": "message", "role": "assistant", "text": "I will read the file first.", "turn": 0,
     "t": 0.5},
    {"type": "tool_call", "id": "c1", "name": "read_file", "arguments": {"path": "parser.py"},
     "turn": 0},
    {"type": "tool_result", "id": "c1", "name": "read_file", "output": "No such file: parser.py",
     "is_error": True, "turn": 0},
    {"type": "tool_call", "id": "c2", "name": "bash", "arguments": {"cmd": "seq 1 400"},
     "turn": 1},
    {"type": "tool_result", "id": "c2", "name": "bash", "exit_code": 0, "turn": 1,
     "output": "\n".join(str(n) for n in range(1, 401))},
    {"type": "message", "role": "assistant", "text": "Done: the parser is fixed.", "turn": 2,
     "t": 3.25},
]

# the first four lines; the runner adds a 5 MiB line and an event of an unknown type
BAD = "\n".join([
    json.dumps({"type": "message", "role": "assistant",
                "text": '<script>window.PWNED = "transcript"; alert(1)</script>'
                        '<img src=x onerror="window.PWNED=2">'}),
    "not json at all <b>bold</b>",
    '["a list", "not an entry"]',
    json.dumps({"type": "tool_call", "id": "<i>x</i>", "name": "<b>bash</b>",
                "arguments": "{not json <script>"})]) + "\n"

DIFF = """\
diff --git a/parser.py b/parser.py
--- a/parser.py
+++ b/parser.py
@@ -1,4 +1,3 @@
 def parse(text):
-    return text.split(",")
--- not a header: a removed line
+    return [p.strip() for p in text.split(",")]  # <script>window.PWNED = "diff"</script>
 # end
"""

GRADER = """
checks:
  - checker: llm_judge
    name: tone
    rubric: Is the answer polite?
    judge: {backend: replay, responses: answers.jsonl}
  - checker: contains
    name: fixed
    value: fixed
"""

ANSWERS = """\
{"task": "delta", "answer": "not a verdict"}
{"model": "bad-1", "check": "tone", "verdict": {"reason": "<b>rude</b>", "pass": false}}
{"check": "tone", "verdict": {"reason": "polite enough", "pass": true}}
"""

MODELS = ("good-1", "bad-1")
TASKS = ("alpha", "beta", "gamma", "delta")


def make_agentish(root: Path) -> Path:
    ev = make_eval(root, name="agentish",
                   tasks={t: f"prompt: Please fix {t}\n" for t in TASKS},
                   configs={"default": "runner: ./agent.sh\nmodel: good-1\n"},
                   graders={"default": GRADER},
                   files={"configs/agent.sh": RUNNER, "graders/answers.jsonl": ANSWERS})
    # written as they are (make_eval dedents its files)
    (ev / "configs" / "good.jsonl").write_text("".join(json.dumps(e) + "\n" for e in GOOD))
    (ev / "configs" / "bad.jsonl").write_text(BAD)
    (ev / "configs" / "work.diff").write_text(DIFF)
    return ev


@dataclass
class AgentSite:
    """The agentish Eval, run and graded, built into a static site."""

    ev: Path
    site: Path
    env: dict[str, str]

    @property
    def index(self) -> str:
        return (self.site / "index.html").as_uri()

    def data(self, key: str) -> Any:
        return jsdata.decode((self.site / "data" / f"{key}.js").read_bytes())[1]

    def run_id(self, task: str, model: str, sample: int) -> str:
        found: str = next(r["id"] for r in self.data("agentish/explore")["runs"]
                          if (r["task"], r["model"], r["sample"]) == (task, model, sample))
        return found


def build_agentish(root: Path) -> AgentSite:
    env = {"SMEVALS_CACHE_DIR": str(root / "cache"), "SOURCE_DATE_EPOCH": "1767322800"}
    ev = make_agentish(root / "agentish")
    made = run_cli("run", str(ev), "-m", MODELS[0], "-m", MODELS[1], "-n", "2", "-g", env=env)
    assert "14 ok, 2 failed" in made.both, (made.code, made.both)
    built = run_cli("build", "-o", str(root / "site"), str(ev), env=env)
    assert built.code == 0, built.both
    return AgentSite(ev, root / "site", env)
