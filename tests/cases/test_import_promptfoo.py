"""`smevals import promptfoo`: promptfoo's own example configs (tests/cases/data/promptfoo,
MIT, see its NOTICE) imported, validated and dry-run; a small config graded end to end
against a fake OpenAI server; the bad inputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import grade_records, run_cli, write
from tools.fake_openai import Scripted, completion

CORPUS = Path(__file__).parent / "data" / "promptfoo"

# example: (Tasks, Configs, Checks, assertions kept exactly / by another rule / not
# imported, the other items left out as "line: what", the Tasks with no Check)
EXPECTED = {
    "getting-started": (2, ["prompt1-gpt-4.1", "prompt2-gpt-4.1", "prompt1-o4-mini",
                            "prompt2-o4-mini"], 2, (2, 0, 0), [], []),
    "simple-csv": (4, ["prompts-1", "prompts-2"], 1, (4, 0, 0), [
        "prompts.txt: template expression '{{ (style_config | load).tone }}'",
        "prompts.txt: template expression '{{ (style_config | load).length }}'"], []),
    "csv-metadata": (3, ["default"], 2, (3, 3, 0), [], []),
    "eval-self-grading": (2, ["prompts-1", "prompts-2"], 2, (2, 2, 0), [], []),
    "openai-function-call": (4, ["functions-defined-in-external-file",
                                 "functions-defined-in-config"], 3, (3, 0, 3), [
        "promptfooconfig.yaml:6: provider 'openai:chat:gpt-4.1-mini' config.functions",
        "promptfooconfig.yaml:10: provider 'openai:chat:gpt-4.1-mini' config.functions"],
        ["test-2", "test-3", "test-4"]),
    "simple-test": (5, ["prompts-1", "prompts-2"], 6, (6, 1, 1), [
        "promptfooconfig.yaml:52: top-level key outputPath"], []),
    "json-output": (2, ["default"], 4, (2, 2, 1), [], []),
    "openai-tools-call": (4, ["default"], 4, (3, 1, 3), [
        "promptfooconfig.yaml:8: provider 'openai:chat:gpt-6-luna' config.reasoning_effort",
        "promptfooconfig.yaml:8: provider 'openai:chat:gpt-6-luna' config.verbosity"],
        ["test-3", "test-4"]),
    "mmlu": (5, ["gpt-4o-mini", "o1-preview", "o1-mini"], 1, (5, 0, 0), [], []),
    "eval-customer-support-rubric": (4, ["default"], 5, (0, 20, 0), [
        "promptfooconfig.yaml:11: provider 'echo'",
        "promptfooconfig.yaml:17: test options.provider",
        "tests.csv:4: column __threshold",
        "tests.csv:5: column __threshold"], []),
}


def _items(out: str, example: str, header: str) -> list[str]:
    """The "file:line: what" of each line listed under `header` (paths made relative)."""
    lines = out.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(header)), None)
    if start is None:
        return []
    prefix = f"  {CORPUS / example}/"
    found = []
    for line in lines[start + 1:]:
        if not line.startswith(prefix):
            break
        where, what = line[len(prefix):].split(": ")[:2]
        found.append(f"{where}: {what}")
    return found


@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_promptfoo_example_imports_validates_and_dry_runs(example: str, tmp_path: Path) -> None:
    tasks, configs, checks, fates, skipped, no_check = EXPECTED[example]
    out = tmp_path / "ev"
    res = run_cli("import", "promptfoo", str(CORPUS / example / "promptfooconfig.yaml"),
                  str(out))
    assert res.code == 0, res.both
    first = res.out.splitlines()[0]
    assert first.endswith(f": {tasks} Task(s) in tasks/tests.jsonl, {len(configs)} Config(s) "
                          f"({', '.join(configs)}), grader 'default' with {checks} Check(s)")
    assert f"Assertions: {fates[0]} kept exactly, {fates[1]} kept by another rule, " \
           f"{fates[2]} not imported" in res.out
    assert _items(res.out, example, "Not imported: ") == skipped
    readme = (out / "README.md").read_text()
    assert f"{fates[0]} kept exactly, {fates[1]} kept by another rule, {fates[2]} not " \
           "imported." in readme
    if skipped:
        assert f"## Not imported ({len(skipped)})" in readme
    for name in no_check:
        assert f"- {name} (`" in readme
    if not (skipped or no_check or fates[1] or fates[2]):
        assert "Everything was imported, each assertion kept exactly." in res.out
    rows = (out / "tasks" / "tests.jsonl").read_text().splitlines()
    assert len(rows) == tasks
    assert sorted(p.stem for p in (out / "configs").glob("*.yaml")) == sorted(configs)
    valid = run_cli("validate", str(out))
    assert valid.code == 0, valid.both
    next_line = res.out.splitlines()[-1]
    assert next_line.startswith(f"Next: smevals validate {out} && smevals run {out} --dry-run")
    dry = run_cli(*next_line.split(" && ")[1].split()[1:])     # the Next command, as printed
    assert dry.code == 0, dry.both
    assert dry.out.count("would run 1") == tasks * len(configs)


def test_promptfoo_templates_vars_and_per_test_checks(tmp_path: Path) -> None:
    ex = CORPUS / "simple-test"
    out = tmp_path / "ev"
    assert run_cli("import", "promptfoo", str(ex / "promptfooconfig.yaml"), str(out)).code == 0
    rows = [json.loads(line) for line in (out / "tasks/tests.jsonl").read_text().splitlines()]
    assert rows[0] == {"name": "test-1", "body": "Yes", "description": "Check for exact match",
                       "grading": {"equals_1": "Yarr"}}
    assert rows[4]["grading"] == {"llm_rubric_1": "Is spoken like a pirate",
                                  "icontains_1": "arrr"}       # the $ref'd template too
    assert (out / "configs/prompts-2.yaml").read_text() == (
        "runner: smevals:openai\nmodel: gpt-4.1-mini\nprompt_template: 'Pretend you''re a "
        "pirate and speak these words: {{task.body}}'\n")
    grader = (out / "graders/default.yaml").read_text()
    assert "- name: icontains\n  checker: contains\n  value:\n    task: icontains_1\n  " \
           "case_sensitive: false\n  if_task_has: icontains_1\n" in grader
    mmlu = tmp_path / "mmlu"
    assert run_cli("import", "promptfoo", str(CORPUS / "mmlu/promptfooconfig.yaml"),
                   str(mmlu)).code == 0
    first = json.loads((mmlu / "tasks/tests.jsonl").read_text().splitlines()[0])
    assert first["grading"] == {"equals_1": "2"}       # defaultTest's '{{answer}}', filled in


CONFIG = """
prompts:
  - 'Capital of {{{{country}}}}?'
providers:
  - id: openai:chat:small
    config:
      apiBaseUrl: {url}
      temperature: 0
  - ollama:chat:llama3.2
defaultTest:
  assert:
    - type: not-icontains
      value: sorry
tests:
  - vars: {{country: France}}
    assert:
      - type: icontains
        value: paris
      - type: starts-with
        value: The
        weight: 2
      - type: equals
        value: The capital is Paris.
  - vars: {{country: Japan}}
    assert:
      - type: contains-any
        value: [Tokyo, Edo]
  - vars: {{country: [Peru, Chile], name: x}}
    assert:
      - type: regex
        value: '^[LS]\\w+$'
      - type: webhook
        value: http://localhost/hook
"""


def test_promptfoo_import_runs_and_grades_each_test_with_its_own_checks(
        tmp_path: Path, fake_openai) -> None:
    write(tmp_path / "pf.yaml", CONFIG.format(url=fake_openai.base_url))
    res = run_cli("import", "promptfoo", "pf.yaml", "ev", cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.out == (
        "Imported pf.yaml into ev: 4 Task(s) in tasks/tests.jsonl, 2 Config(s) (small, "
        "llama3.2), grader 'default' with 6 Check(s)\n"
        "Assertions: 10 kept exactly, 0 kept by another rule, 2 not imported (each below, and "
        "in ev/README.md):\n"
        "  pf.yaml:31: webhook assertion (test-3, test-4): not imported: calls a webhook with "
        "promptfoo's payload: see custom_webhook in the judges docs to port it by hand\n"
        "Next: smevals validate ev && smevals run ev --dry-run\n")
    assert (tmp_path / "ev/eval.yaml").read_text() == (
        "description: Imported from the promptfoo config pf.yaml\nconfigs:\n- small\n"
        "- llama3.2\n")
    assert (tmp_path / "ev/configs/small.yaml").read_text() == (
        f"runner: smevals:openai\nmodel: small\nbase_url: {fake_openai.base_url}\n"
        "temperature: 0\nprompt_template: Capital of {{task.country}}?\n")
    rows = [json.loads(r) for r in (tmp_path / "ev/tasks/tests.jsonl").read_text().splitlines()]
    assert rows[2:] == [       # a list var makes one test per item, as promptfoo does
        {"name": "test-3", "country": "Peru", "var_name": "x", "grading": {"regex_1": "^[LS]"
                                                                          "[0-9A-Za-z_]+\\z"}},
        {"name": "test-4", "country": "Chile", "var_name": "x",
         "grading": {"regex_1": "^[LS][0-9A-Za-z_]+\\z"}}]
    assert run_cli("run", "ev", "--dry-run", cwd=tmp_path).code == 0     # every Config
    for answer in ("The capital is Paris.", "Tokyo, sorry", "Lima", "santiago"):
        fake_openai.reply(answer)
    ran = run_cli("run", "ev", "-c", "small", "-j", "1", "-g", cwd=tmp_path)
    assert ran.code == 1, ran.both
    assert [r.body["messages"][-1]["content"] for r in fake_openai.requests] == [
        "Capital of France?", "Capital of Japan?", "Capital of Peru?", "Capital of Chile?"]
    grades = {rec["run"]["task"]: (rec["outcome"], [(c["name"], c["ok"]) for c in rec["checks"]])
              for rec in grade_records(tmp_path / "ev")}
    assert grades == {
        "test-1": ("pass", [("not-icontains", True), ("icontains", True),
                            ("starts-with", True), ("equals", True)]),
        "test-2": ("fail", [("not-icontains", False), ("contains-any", True)]),
        "test-3": ("pass", [("not-icontains", True), ("regex", True)]),
        "test-4": ("fail", [("not-icontains", True), ("regex", False)]),
    }


STRICT = """
prompts: [prompts/ask.txt]
providers:
  - id: openai:chat:small
    config: {{apiBaseUrl: {url}}}
tests:
  - vars: {{word: Yarr}}
    assert:
      - type: equals
        value: Yarr
      - type: equals
        value: {{"n": 1, "ok": true}}
      - type: javascript
        value: output.trim() === context.vars.word
      - type: python
        value: file://checks/check.py:first
      - type: contains-all
        value: ' Yarr'
      {rubrics}
"""
RUBRICS = """- type: llm-rubric
        value: sounds like a pirate
      - type: llm-rubric
        value: is short"""


def test_promptfoo_check_names_are_distinct_and_scripts_come_along(tmp_path: Path) -> None:
    write(tmp_path / "pf.yaml", STRICT.format(url="http://127.0.0.1:9/v1", rubrics=RUBRICS))
    write(tmp_path / "prompts/ask.txt", "Say {{word}} like a pirate.\n")
    write(tmp_path / "checks/check.py", "def first(output, context):\n    return True\n")
    res = run_cli("import", "promptfoo", "pf.yaml", "ev", cwd=tmp_path)
    assert res.code == 0, res.both
    assert "Assertions: 5 kept exactly, 2 kept by another rule, 0 not imported" in res.out
    assert (tmp_path / "ev/configs/default.yaml").read_text().endswith(
        "prompt_template: Say {{task.word}} like a pirate.\n")    # a path without file://
    grader = (tmp_path / "ev/graders/default.yaml").read_text()
    names = [line[len("- name: "):] for line in grader.splitlines()
             if line.startswith("- name: ")]
    assert names == ["equals", "equals-2", "javascript", "python", "contains-all",
                     "llm-rubric", "llm-rubric-2"]
    assert "  script: promptfoo/checks/check.py\n  function: first\n" in grader
    assert (tmp_path / "ev/graders/promptfoo/checks/check.py").read_text().startswith(
        "def first(")
    readme = (tmp_path / "ev/README.md").read_text()
    assert "- `pf.yaml:20`: llm-rubric assertion (test-1): kept by another rule: a judge " \
           "Check" in readme


@pytest.mark.parametrize(("answer", "verdicts"), [
    ("Yarr", [True, False, True, True, True]),
    ("Yarr  ", [False, False, True, True, True]),     # promptfoo's equals is strict
    ("yarr", [False, False, False, False, False]),
    ('{"ok": true, "n": 1.0}', [False, True, False, False, False]),
    ("Ye say Yarr", [False, False, False, True, True]),
])
def test_promptfoo_assertions_decide_as_promptfoo_does(tmp_path: Path, fake_openai,
                                                      answer: str, verdicts: list[bool]) -> None:
    write(tmp_path / "pf.yaml", STRICT.format(url=fake_openai.base_url, rubrics=""))
    write(tmp_path / "prompts/ask.txt", "Say {{word}} like a pirate.\n")
    write(tmp_path / "checks/check.py", "def first(output, context):\n"
                                        "    return {'pass': output[:1] == 'Y', 'score': 0.5, "
                                        "'reason': 'first letter'}\n")
    assert run_cli("import", "promptfoo", "pf.yaml", "ev", cwd=tmp_path).code == 0
    fake_openai.reply(answer)
    ran = run_cli("run", "ev", "-g", cwd=tmp_path)
    assert ran.code == (0 if all(verdicts) else 1), ran.both
    assert fake_openai.requests[0].body["messages"] == [
        {"role": "user", "content": "Say Yarr like a pirate."}]
    (record,) = grade_records(tmp_path / "ev")
    assert [c["ok"] for c in record["checks"]] == verdicts, record["checks"]


CHAT = """
prompts:
  - prompts/chat.json
  - id: prompts/plain.txt
    label: plain
providers: [{{id: openai:chat:small, config: {{apiBaseUrl: {url}}}}}]
defaultTest:
  vars: {{system_message: file://system.txt}}
tests:
  - vars: {{topic: 'fish "and" chips'}}
"""


def test_promptfoo_chat_prompts_are_kept_as_messages(tmp_path: Path, fake_openai) -> None:
    write(tmp_path / "pf.yaml", CHAT.format(url=fake_openai.base_url))
    write(tmp_path / "prompts/chat.json", json.dumps([
        {"role": "system", "content": "{{system_message}}"},
        {"role": "user", "content": "Tell me about {{topic}}"}]))
    write(tmp_path / "prompts/plain.txt", "About {{ topic }}\n---\nMore on {{topic}}\n")
    write(tmp_path / "system.txt", "Be 'brief'.\n\n")
    res = run_cli("import", "promptfoo", "pf.yaml", "ev", cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.out.splitlines()[0].endswith("3 Config(s) (chat, plain-1, plain-2), no grader")
    assert "Tasks with no Check (1; their Grades are errors, 'no Check applied'): test-1 " \
           "(pf.yaml:9)" in res.out
    assert (tmp_path / "ev/configs/chat.yaml").read_text().endswith(
        "prompt_template:\n- role: system\n  content: '{{task.system_message}}'\n"
        "- role: user\n  content: Tell me about {{task.topic}}\n")
    fake_openai.respond_with(lambda req: Scripted(200, completion("ok")))
    assert run_cli("run", "ev", cwd=tmp_path).code == 0
    sent = sorted(json.dumps(r.body["messages"]) for r in fake_openai.requests)
    assert sent == sorted(json.dumps(m) for m in [
        [{"role": "system", "content": "Be 'brief'."},
         {"role": "user", "content": 'Tell me about fish "and" chips'}],
        [{"role": "user", "content": 'About fish "and" chips'}],
        [{"role": "user", "content": 'More on fish "and" chips'}]])


@pytest.mark.parametrize(("text", "files", "message"), [
    ("prompts: [a\n", {}, "pf.yaml:2:1: not valid YAML"),
    ("- just\n- a list\n", {}, "pf.yaml:1: not a promptfoo config"),
    ("prompts: [file://missing.txt]\nproviders: [openai:x]\n", {},
     "pf.yaml:1: prompts: file://missing.txt: no such file"),
    ("prompts: [missing.txt]\nproviders: [openai:x]\n", {},
     "pf.yaml:1: prompts: missing.txt: no such file"),
    ("prompts:\n  - file:///etc/shadow\n", {},
     "pf.yaml:2: prompts: file:///etc/shadow: outside the config's folder"),
    ("prompts: [../x/*.txt]\n", {"../x/a.txt": "hi"},
     "pf.yaml:1: prompts: ../x/*.txt: outside the config's folder"),
    ("prompts: [hi]\ntests:\n  - vars: {a: file:///etc/passwd}\n", {},
     "pf.yaml:3: vars.a: file:///etc/passwd: outside the config's folder"),
    ("prompts: [hi]\ntests: file:///etc/hosts\n", {},
     "pf.yaml:2: tests: file:///etc/hosts: outside the config's folder"),
    ("prompts: [hi]\ntests:\n  - assert:\n      - type: python\n        value: "
     "file://../c.py\n", {"../c.py": "x"},
     "pf.yaml:4: assert.value: file://../c.py: outside the config's folder"),
    ("prompts: [hi]\ntests:\n  - assert:\n      - type: equals\n        value: "
     "file://link.txt\n", {"link.txt": "@/etc/hostname"},
     "pf.yaml:4: assert.value: file://link.txt: outside the config's folder"),
    ("prompts: [hi]\ntests: file://t.csv\n", {"t.csv": "a,b\n1,2\n3\n"},
     "t.csv:3: the row has 1 cells, the header 2"),
    ("prompts: [hi]\ntests: file://t.jsonl\n", {"t.jsonl": '{"a": 1}\n{bad\n'},
     "t.jsonl:2: not valid JSON"),
])
def test_promptfoo_bad_input_exits_2(tmp_path: Path, text: str, files: dict[str, str],
                                     message: str) -> None:
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg/pf.yaml").write_text(text)
    for name, body in files.items():
        path = tmp_path / "cfg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if body.startswith("@"):
            path.symlink_to(body[1:])           # a link leading out of the folder
        else:
            path.write_text(body)
    res = run_cli("import", "promptfoo", "cfg/pf.yaml", "ev", cwd=tmp_path)
    assert res.code == 2, res.both
    assert res.err.startswith(f"Error: cfg/{message}"), res.err
    assert "Traceback" not in res.both
    assert not (tmp_path / "ev").exists()


def test_promptfoo_target_not_empty_and_missing_example_file(tmp_path: Path) -> None:
    write(tmp_path / "ev/keep.txt", "x\n")
    res = run_cli("import", "promptfoo", str(CORPUS / "getting-started/promptfooconfig.yaml"),
                  str(tmp_path / "ev"))
    assert res.code == 2
    assert res.err == f"Error: {tmp_path / 'ev'} already exists and is not empty; choose " \
                      "another folder\n"
    shutil.rmtree(tmp_path / "ev")
    res = run_cli("import", "promptfoo", str(CORPUS / "ollama/promptfooconfig.yaml"),
                  str(tmp_path / "ev"))
    assert res.code == 2
    assert res.err == (f"Error: {CORPUS / 'ollama/promptfooconfig.yaml'}:5: prompts: "
                       "file://prompts/openai_prompt.json: no such file\n")


def test_promptfoo_alias_bomb_is_bad_input(tmp_path: Path) -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]"
              for p, c in zip("abcdefg", "bcdefgh", strict=True)]
    (tmp_path / "pf.yaml").write_text("\n".join(lines) + "\nprompts: [*h]\n")
    res = run_cli("import", "promptfoo", "pf.yaml", "ev", cwd=tmp_path)
    assert res.code == 2, res.both
    assert res.err.startswith("Error: pf.yaml:"), res.err
    assert "alias bomb" in res.err


LEVENSHTEIN = """
prompts: ['Spell {{{{word}}}}']
providers:
  - id: openai:chat:small
    config: {{apiBaseUrl: {url}}}
tests:
  - vars: {{word: necessary}}
    assert:
      - type: levenshtein
        value: necessary
        threshold: 1
  - vars: {{word: rhythm}}
    assert:
      - type: levenshtein
        value: rhythm
  - vars: {{word: queue}}
    assert:
      - type: levenshtein
        value: queue
        threshold: 0
      - type: not-levenshtein
        value: queue
      - type: levenshtein
        value: queue
        threshold: -1
"""


def test_promptfoo_levenshtein_is_imported_and_graded(tmp_path: Path, fake_openai) -> None:
    write(tmp_path / "pf.yaml", LEVENSHTEIN.format(url=fake_openai.base_url))
    res = run_cli("import", "promptfoo", "pf.yaml", "ev", cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.out.splitlines()[:4] == [
        "Imported pf.yaml into ev: 3 Task(s) in tasks/tests.jsonl, 1 Config(s) (default), "
        "grader 'default' with 3 Check(s)",
        "Assertions: 3 kept exactly, 0 kept by another rule, 2 not imported (each below, and "
        "in ev/README.md):",
        "  pf.yaml:20: not-levenshtein assertion (test-3): not imported: no built-in checks "
        "the opposite of levenshtein",
        "  pf.yaml:22: levenshtein assertion (test-3): not imported: levenshtein needs a "
        "non-negative threshold"]
    grader = (tmp_path / "ev/graders/default.yaml").read_text()
    assert "- name: levenshtein\n  checker: levenshtein\n  value:\n    task: levenshtein_1\n" \
           "  max_distance: 1\n  utf16: true\n  if_task_has: levenshtein_1\n" in grader
    assert "  max_distance: 5\n  utf16: true\n  if_task_has: levenshtein_2\n" in grader
    rows = [json.loads(line) for line in (tmp_path / "ev/tasks/tests.jsonl").read_text()
            .splitlines()]
    assert [r["grading"] for r in rows] == [
        {"levenshtein_1": "necessary"}, {"levenshtein_2": "rhythm"},
        {"levenshtein_3": "queue"}]
    assert run_cli("validate", "ev", cwd=tmp_path).code == 0
    for answer in ("neccessary", "rythm", "queue!"):
        fake_openai.reply(answer)
    ran = run_cli("run", "ev", "-j", "1", "-g", cwd=tmp_path)
    assert ran.code == 1, ran.both
    checks = {rec["run"]["task"]: [(c["ok"], c.get("details")) for c in rec["checks"]]
              for rec in grade_records(tmp_path / "ev")}
    assert checks == {"test-1": [(True, {"distance": 1})], "test-2": [(True, {"distance": 1})],
                      "test-3": [(False, {"distance": 1})]}


def test_promptfoo_prompt_options_are_reported(tmp_path: Path) -> None:
    write(tmp_path / "pf.yaml",
          "prompts:\n  - raw: 'Solve {{p}}'\n    label: json\n    config:\n"
          "      response_format: {type: json_object}\nproviders: [openai:m]\n"
          "tests:\n  - vars: {p: '1+1'}\n    assert:\n      - type: is-json\n")
    res = run_cli("import", "promptfoo", "pf.yaml", "ev", cwd=tmp_path)
    assert res.code == 0, res.both
    assert "  pf.yaml:2: prompt config: a prompt's own provider options (config) and other " \
           "keys have no counterpart: the request sent may differ\n" in res.out
