"""A Config's `prompt_template` and `system` with `{{task.KEY}}` placeholders, end to end:
several Configs over the same Tasks (`-c a -c b`), what runners get and Runs record, stale
Runs after a template edit, the checks before any Run, and `report`/`diff` filtering."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from smevals.spec.template import TemplateError, as_text, placeholders, substitute
from tests.helpers import git, make_eval, write

SHOW = """
#!/bin/sh
printf 'prompt=%s|system=%s|task_prompt=%s\\n' "$SMEVALS_PROMPT" "${SMEVALS_SYSTEM-unset}" \\
  "$SMEVALS_TASK_PROMPT"
"""
TASKS = {
    "egypt": "prompt: Say hi\ncountry: Egypt\nn: 0.5\ntags: {k: 1}\n",
    "france": "country: France\nn: 3\ntags: [a, b]\ngrading:\n  expected: Paris\n",
}
TERSE = """\
runner: ./show.sh
model: m1
prompt_template: 'Capital of {{task.country}}? n={{ task.n }} tags={{task.tags}} \\{{task.x}} {{ x'
system: Answer for {{task.country}} ({{task.name}}).
"""
CHATTY = """\
runner: ./show.sh
model: m1
prompt_template: |
  Tell me about {{task.country}}.
"""


def templated_eval(root: Path, **configs: str) -> Path:
    return make_eval(root, tasks=TASKS, configs={"terse": TERSE, "chatty": CHATTY, **configs},
                     files={"configs/show.sh": SHOW},
                     graders={"default": "checks:\n  - checker: contains\n    value: prompt=\n"})


def runs(ev: Path) -> dict[tuple[str, str], tuple[dict[str, Any], str]]:
    """Each Run's record and output, by (task, config)."""
    out = {}
    for path in sorted((ev / "results").rglob("run.json")):
        rec = json.loads(path.read_text())
        out[(rec["task"]["name"], rec["config"]["name"])] = (
            rec, (path.parent / "output.txt").read_text())
    return out


def test_each_config_fills_its_template_for_every_task_and_an_edit_stales_only_its_runs(
        tmp_path: Path, cli) -> None:
    ev = templated_eval(tmp_path / "ev")
    res = cli("run", str(ev), "-c", "terse", "-c", "chatty", "-c", "terse")
    assert res.code == 0, res.both
    assert res.out.splitlines()[:2] == [
        "ev: 2 Run(s) to make with config 'terse' (2 task/model pair(s), 0 with earlier Runs of "
        "the same inputs)",
        "ev: 2 Run(s) to make with config 'chatty' (2 task/model pair(s), 0 with earlier Runs of "
        "the same inputs)"]
    made = runs(ev)
    assert sorted(made) == [("egypt", "chatty"), ("egypt", "terse"), ("france", "chatty"),
                            ("france", "terse")]
    terse = 'Capital of France? n=3 tags=["a", "b"] {{task.x}} {{ x'
    assert made[("france", "terse")][1] == (
        f"prompt={terse}|system=Answer for France (france).|task_prompt={terse}\n")
    assert made[("egypt", "terse")][1].startswith(
        'prompt=Capital of Egypt? n=0.5 tags={"k": 1} {{task.x}} {{ x|system=Answer for Egypt '
        "(egypt).|")
    assert made[("egypt", "chatty")][1] == (
        "prompt=Tell me about Egypt.\n|system=unset|task_prompt=Tell me about Egypt.\n\n")
    rec = made[("france", "terse")][0]
    assert rec["task"] == {"name": "france", "country": "France", "n": 3, "tags": ["a", "b"],
                           "prompt": terse}
    assert rec["grading"] == {"expected": "Paris"}
    assert rec["config"]["system"] == "Answer for France (france)."
    assert rec["config"]["prompt_template"].startswith("Capital of {{task.country}}?")

    write(ev / "configs/chatty.yaml", CHATTY.replace("Tell me", "Tell me all"))
    res = cli("run", str(ev), "-c", "terse", "-c", "chatty", "--dry-run")
    assert (res.code, res.err) == (0, "")
    assert res.out.splitlines() == [
        "ev: 2 Run(s) to make with config 'terse' (2 task/model pair(s), 2 with earlier Runs of "
        "the same inputs)",
        "  egypt / terse / m1: 1 Run(s) exist, would run 1",
        "  france / terse / m1: 1 Run(s) exist, would run 1",
        "ev: 2 Run(s) to make with config 'chatty' (2 task/model pair(s), 0 with earlier Runs of "
        "the same inputs; 2 stale Run(s) not counted: config changed)",
        "  egypt / chatty / m1: 0 current Run(s) + 1 stale (config changed), would run 1",
        "  france / chatty / m1: 0 current Run(s) + 1 stale (config changed), would run 1"]


def test_a_single_config_flag_still_runs_that_config_alone(tmp_path: Path, cli) -> None:
    ev = templated_eval(tmp_path / "ev")
    res = cli("run", str(ev), "--config", "chatty", "-t", "france")
    assert res.code == 0, res.both
    assert list(runs(ev)) == [("france", "chatty")]


BAD = """\
runner: ./show.sh
model: m1
prompt_template: |
  Q: {{task.question}} {{task.expected}}
  {{task.grading.expected}} {{output}} {{task.question}}
system: "{{task.country}}: {{ task.prompt }}"
"""
BAD_PROBLEMS = [
    "ev/configs/bad.yaml:4:6: prompt_template: {{task.question}}: 2 Tasks have no key 'question': "
    "egypt, france",
    "ev/configs/bad.yaml:4:24: prompt_template: {{task.expected}}: 2 Tasks have no key 'expected' "
    "(some only under `grading`, which runners never see): egypt, france",
    "ev/configs/bad.yaml:5:3: prompt_template: {{task.grading.expected}}: grading keys are only "
    "for checkers: runners never see them, nor do templates",
    "ev/configs/bad.yaml:5:29: prompt_template: {{output}}: a Config's template takes only "
    "{{task.KEY}} placeholders (write \\{{ for a literal {{)",
    "ev/configs/bad.yaml:6:28: system: {{task.prompt}}: Task 'france' (ev/tasks/france.yaml) has "
    "no key 'prompt'",
]


def test_a_placeholder_no_task_can_fill_stops_validate_and_run_before_any_run(
        tmp_path: Path, cli) -> None:
    templated_eval(tmp_path / "ev", bad=BAD,       # null is unset, as for built-ins' keys
                   unset="runner: ./show.sh\nprompt_template:\nsystem: null\n")
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.code == 2
    assert (res.out, res.err.splitlines()) == ("", [*BAD_PROBLEMS, "5 problems found"])
    res = cli("run", "ev", "-c", "terse", "-c", "bad", cwd=tmp_path)
    assert (res.code, res.out) == (2, "")
    assert res.err == "Error: " + "\n".join(BAD_PROBLEMS) + "\n"
    assert not (tmp_path / "ev" / "results").exists()


def test_one_task_lacking_a_key_is_named_with_a_hint(tmp_path: Path, cli) -> None:
    tasks = {**TASKS, "peru": "prompt: p\ncountri: Peru\n"}
    make_eval(tmp_path / "ev", tasks=tasks, configs={"default": CHATTY},
              files={"configs/show.sh": SHOW})
    res = cli("run", "ev", "-t", "egypt", "--dry-run", cwd=tmp_path)
    assert res.code == 0, res.both                      # only the Tasks that would run count
    res = cli("run", "ev", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: ev/configs/default.yaml:4:17: prompt_template: "
                                   "{{task.country}}: Task 'peru' (ev/tasks/peru.yaml) has no "
                                   "key 'country' (did you mean 'countri'?)\n")


def test_the_openai_runner_sends_the_resolved_system_and_prompt(tmp_path: Path, cli,
                                                                fake_openai) -> None:
    fake_openai.reply("Paris")
    config = (f"runner: smevals:openai\nbase_url: {fake_openai.base_url}\nmodel: m\n"
              "system: 'You know {{task.country}}.'\n"
              "prompt_template: 'Capital of {{task.country}}?'\n")
    ev = make_eval(tmp_path / "ev", tasks={"france": TASKS["france"]},
                   configs={"default": config}, files={})
    res = cli("run", str(ev))
    assert res.code == 0, res.both
    [request] = fake_openai.requests
    assert request.body["messages"] == [
        {"role": "system", "content": "You know France."},
        {"role": "user", "content": "Capital of France?"}]


def test_a_judge_sees_the_prompt_that_was_asked(tmp_path: Path, cli, fake_openai) -> None:
    from tests.judges.helpers import answer_with, user_messages

    answer_with(fake_openai, lambda _user: {"reason": "fine", "pass": True})
    grader = (f"judge: {{model: judge-x, base_url: '{fake_openai.base_url}', retries: 0}}\n"
              "checks:\n  - checker: llm_judge\n    rubric: Is it fine?\n"
              "    template: 'Asked: {{prompt}} ({{task.country}})'\n")
    ev = make_eval(tmp_path / "ev", tasks=TASKS, configs={"chatty": CHATTY},
                   files={"configs/show.sh": SHOW}, graders={"default": grader})
    res = cli("run", str(ev), "-c", "chatty", "-g")
    assert res.code == 0, res.both
    assert sorted(user_messages(fake_openai)) == [
        "Asked: Tell me about Egypt.\n (Egypt)", "Asked: Tell me about France.\n (France)"]


def test_report_and_diff_take_several_configs(tmp_path: Path, cli) -> None:
    ev = templated_eval(tmp_path / "ev", plain="runner: ./show.sh\nmodel: m1\n")
    assert cli("run", str(ev), "-c", "terse", "-c", "chatty", "-c", "plain", "-g").code == 0
    res = cli("report", "ev", "-c", "chatty", "-c", "terse", cwd=tmp_path)
    assert res.code == 0, res.both
    assert "- Filters: -c chatty -c terse" in res.out
    board = [line for line in res.out.splitlines() if line[:3] in ("1. ", "2. ", "3. ")]
    configs = [re.search(r"\((\w+), \d+ runs?\b", line) for line in board]
    assert sorted(m.group(1) for m in configs if m) == ["chatty", "terse"], board
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base")
    write(ev / "configs/chatty.yaml", CHATTY.replace("Tell me", "Tell me all"))
    assert cli("run", str(ev), "-c", "chatty", "-c", "plain", "-g").code == 0
    res = cli("diff", "ev", "-c", "chatty", "-c", "terse", "--format", "json", cwd=tmp_path)
    assert res.code == 0, res.both
    (diffed,) = json.loads(res.out)["evals"]
    assert sorted({g["config"] for g in diffed["groups"]}) == ["chatty", "terse"]
    added = [json.loads(next((ev / "results").rglob(f"{rid}/run.json")).read_text())
             for rid in diffed["added"]["runs"]]
    assert sorted((r["config"]["name"], r["task"]["prompt"]) for r in added) == [
        ("chatty", "Tell me all about Egypt.\n"), ("chatty", "Tell me all about France.\n")]


@pytest.mark.parametrize(("template", "expected"), [
    (r"\{{task.a}} {{task.a}}", "{{task.a}} 1"),
    ("{{ task.a }}{{task.b}}", "1[true, null]"),
    ("{{ not a placeholder }} {{", "{{ not a placeholder }} {{"),
    (r"a \{ b \\{{task.a}}", r"a \{ b \{{task.a}}"),
    ("{{task.d}} {{task.e}}", '2024-01-31 {"x": [1.5, "é"]}'),
])
def test_substitute_escapes_and_json(template: str, expected: str) -> None:
    values = {"task.a": 1, "task.b": [True, None], "task.d": date(2024, 1, 31),
              "task.e": {"x": [1.5, "é"]}}
    assert substitute(template, lambda name: as_text(values[name])) == expected


def test_placeholders_lists_names_as_written_and_unknown_names_raise() -> None:
    assert placeholders(r"{{ task.a }} \{{task.b}} {{task.c}}") == [
        ("task.a", "{{ task.a }}"), ("task.c", "{{task.c}}")]

    def refuse(name: str) -> str:
        raise TemplateError(name)

    with pytest.raises(TemplateError, match="task.z"):
        substitute("x {{task.z}}", refuse)


CHAT = """\
runner: smevals:openai
model: small
base_url: {url}
prompt_template:
  - role: system
    content: You answer for {{{{task.country}}}}.
  - role: user
    content: 'Capital of {{{{task.country}}}}? n={{{{task.n}}}}'
  - role: assistant
    content: [{{type: text, text: 'Ask {{{{task.kind}}}}'}}, {{type: other}}]
"""


def test_a_chat_message_list_template_becomes_the_tasks_messages(cli, tmp_path: Path,
                                                                fake_openai) -> None:
    ev = tmp_path / "ev"
    write(ev / "eval.yaml", "description: x\n")
    write(ev / "tasks/t.jsonl", '{"name": "fr", "country": "France", "n": 3, "kind": "x", '
                                '"prompt": "replaced"}\n')
    write(ev / "configs/default.yaml", CHAT.format(url=fake_openai.base_url))
    fake_openai.reply("Paris")
    res = cli("run", str(ev))
    assert res.code == 0, res.both
    assert fake_openai.requests[0].body["messages"] == [
        {"role": "system", "content": "You answer for France."},
        {"role": "user", "content": "Capital of France? n=3"},
        {"role": "assistant", "content": [{"type": "text", "text": "Ask x"}, {"type": "other"}]}]
    record = json.loads(next((ev / "results").rglob("run.json")).read_text())
    assert "prompt" not in record["task"]
    assert record["task"]["messages"][1] == {"role": "user", "content": "Capital of France? n=3"}
    write(ev / "tasks/t.jsonl", '{"name": "fr", "country": "France", "n": 3}\n')
    bad = cli("validate", str(ev))
    assert bad.code == 2
    assert bad.err.startswith(f"{ev}/configs/default.yaml:10:39: prompt_template: "
                              "{{task.kind}}: Task 'fr'"), bad.err
    write(ev / "configs/default.yaml", "runner: smevals:openai\nprompt_template: [{role: user}]\n")
    bad = cli("validate", str(ev))
    assert bad.code == 2
    assert "configs/default.yaml:2:19: prompt_template[0]: 'content' is required" in bad.err
