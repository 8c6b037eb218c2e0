"""`smevals import promptfoo`: promptfoo's own example configs (tests/cases/data/promptfoo,
MIT, see its NOTICE) imported, validated and dry-run; a small config graded end to end
against a fake OpenAI server; the bad inputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import grade_records, run_cli, write

CORPUS = Path(__file__).parent / "data" / "promptfoo"

# example: (Tasks, Configs, Checks, the skipped items as "line: what" without the reason)
EXPECTED = {
    "getting-started": (2, ["prompt1-gpt-4.1", "prompt2-gpt-4.1", "prompt1-o4-mini",
                            "prompt2-o4-mini"], 2, []),
    "simple-csv": (4, ["prompts-1", "prompts-2"], 1, [
        "prompts.txt: template expression '{{ (style_config | load).tone }}'",
        "prompts.txt: template expression '{{ (style_config | load).length }}'"]),
    "csv-metadata": (3, ["default"], 2, []),
    "eval-self-grading": (2, ["prompts-1", "prompts-2"], 1, [
        "promptfooconfig.yaml:12: javascript assertion"]),
    "openai-function-call": (4, ["functions-defined-in-external-file",
                                 "functions-defined-in-config"], 1, [
        "promptfooconfig.yaml:6: provider 'openai:chat:gpt-4.1-mini' config.functions",
        "promptfooconfig.yaml:10: provider 'openai:chat:gpt-4.1-mini' config.functions",
        "promptfooconfig.yaml:40: is-valid-openai-function-call assertion",
        "promptfooconfig.yaml:41: javascript assertion",
        "promptfooconfig.yaml:43: javascript assertion",
        "promptfooconfig.yaml:49: equals assertion",
        "promptfooconfig.yaml:54: similar assertion"]),
    "simple-test": (5, ["prompts-1", "prompts-2"], 4, [
        "promptfooconfig.yaml:52: top-level key outputPath",
        "promptfooconfig.yaml:32: javascript assertion",
        "promptfooconfig.yaml:34: python assertion",
        "promptfooconfig.yaml:38: similar assertion"]),
    "json-output": (2, ["default"], 2, [
        "promptfooconfig.yaml:20: test key options",
        "promptfooconfig.yaml:14: javascript assertion",
        "promptfooconfig.yaml:36: javascript assertion",
        "promptfooconfig.yaml:39: contains-any assertion"]),
    "openai-tools-call": (4, ["default"], 2, [
        "promptfooconfig.yaml:8: provider 'openai:chat:gpt-6-luna' config.reasoning_effort",
        "promptfooconfig.yaml:8: provider 'openai:chat:gpt-6-luna' config.verbosity",
        "promptfooconfig.yaml:41: test key options",
        "promptfooconfig.yaml:33: is-valid-openai-tools-call assertion",
        "promptfooconfig.yaml:34: javascript assertion",
        "promptfooconfig.yaml:36: javascript assertion",
        "promptfooconfig.yaml:52: equals assertion",
        "promptfooconfig.yaml:57: similar assertion"]),
    "mmlu": (5, ["gpt-4o-mini", "o1-preview", "o1-mini"], 1, []),
    "eval-customer-support-rubric": (4, ["default"], 5, [
        "promptfooconfig.yaml:11: provider 'echo'",
        "tests.csv:4: column __threshold",
        "tests.csv:5: column __threshold",
        "promptfooconfig.yaml:17: test key options"]),
}


def _skipped(out: str, example: str) -> list[str]:
    prefix = f"  {CORPUS / example}/"
    return [line[len(prefix):].split(": ")[0] + ": " + line[len(prefix):].split(": ")[1]
            for line in out.splitlines() if line.startswith(prefix)]


@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_promptfoo_example_imports_validates_and_dry_runs(example: str, tmp_path: Path) -> None:
    tasks, configs, checks, skipped = EXPECTED[example]
    out = tmp_path / "ev"
    res = run_cli("import", "promptfoo", str(CORPUS / example / "promptfooconfig.yaml"),
                  str(out))
    assert res.code == 0, res.both
    first = res.out.splitlines()[0]
    assert first.endswith(f": {tasks} Task(s) in tasks/tests.jsonl, {len(configs)} Config(s) "
                          f"({', '.join(configs)}), grader 'default' with {checks} Check(s)")
    assert _skipped(res.out, example) == skipped
    if skipped:
        assert f"Not imported: {len(skipped)} item(s) with no counterpart" in res.out
        readme = (out / "README.md").read_text()
        assert f"## Not imported ({len(skipped)})" in readme
    else:
        assert "Everything was imported." in res.out
    rows = (out / "tasks" / "tests.jsonl").read_text().splitlines()
    assert len(rows) == tasks
    assert sorted(p.stem for p in (out / "configs").glob("*.yaml")) == sorted(configs)
    valid = run_cli("validate", str(out))
    assert valid.code == 0, valid.both
    dry = run_cli("run", str(out), "--dry-run", *sum((["-c", c] for c in configs), []),
                  *(["-m", "demo"] if example == "eval-customer-support-rubric" else []))
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
  - vars: {{country: Japan}}
    assert:
      - type: contains-any
        value: [Tokyo, Edo]
  - vars: {{country: Peru, name: x, tags: [a, b]}}
    assert:
      - type: regex
        value: '^L'
      - type: webhook
        value: http://localhost/hook
"""


def test_promptfoo_import_runs_and_grades_each_test_with_its_own_checks(
        tmp_path: Path, fake_openai) -> None:
    write(tmp_path / "pf.yaml", CONFIG.format(url=fake_openai.base_url))
    res = run_cli("import", "promptfoo", "pf.yaml", "ev", cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.out == (
        "Imported pf.yaml into ev: 3 Task(s) in tasks/tests.jsonl, 2 Config(s) (small, "
        "llama3.2), grader 'default' with 5 Check(s)\n"
        "Not imported: 2 item(s) with no counterpart (also in ev/README.md):\n"
        "  pf.yaml:25: var tags: promptfoo makes one test per item of a list var; smevals "
        "keeps one Task with the list\n"
        "  pf.yaml:29: webhook assertion: calls a webhook with promptfoo's payload: see "
        "custom_webhook in the judges docs to port it by hand\n"
        "Next: smevals validate ev && smevals run ev --dry-run\n")
    assert (tmp_path / "ev/configs/small.yaml").read_text() == (
        f"runner: smevals:openai\nmodel: small\nbase_url: {fake_openai.base_url}\n"
        "temperature: 0\nprompt_template: Capital of {{task.country}}?\n")
    assert (tmp_path / "ev/configs/llama3.2.yaml").read_text() == (
        "runner: smevals:openai\nmodel: llama3.2\nbase_url: http://localhost:11434/v1\n"
        "prompt_template: Capital of {{task.country}}?\n")
    peru = json.loads((tmp_path / "ev/tasks/tests.jsonl").read_text().splitlines()[2])
    assert peru == {"name": "test-3", "country": "Peru", "var_name": "x", "tags": ["a", "b"],
                    "grading": {"regex_1": "^L"}}
    for answer in ("The capital is Paris.", "Tokyo, sorry", "Lima"):
        fake_openai.reply(answer)
    ran = run_cli("run", "ev", "-c", "small", "-j", "1", "-g", cwd=tmp_path)
    assert ran.code == 1, ran.both
    assert [r.body["messages"][-1]["content"] for r in fake_openai.requests] == [
        "Capital of France?", "Capital of Japan?", "Capital of Peru?"]
    report = run_cli("report", "ev", "-c", "small", "--format", "json", cwd=tmp_path)
    doc = json.loads(report.out)
    grades = {rec["run"]["task"]: (rec["outcome"], [c["name"] for c in rec["checks"]])
              for rec in grade_records(tmp_path / "ev")}
    assert grades == {
        "test-1": ("pass", ["icontains", "starts-with", "not-icontains"]),
        "test-2": ("fail", ["contains-any", "not-icontains"]),
        "test-3": ("pass", ["regex", "not-icontains"]),
    }
    assert doc, report.both


@pytest.mark.parametrize(("text", "files", "message"), [
    ("prompts: [a\n", {}, "pf.yaml:2:1: not valid YAML"),
    ("- just\n- a list\n", {}, "pf.yaml:1: not a promptfoo config"),
    ("prompts: [file://missing.txt]\nproviders: [openai:x]\n", {},
     "pf.yaml:1: file://missing.txt: no such file"),
    ("prompts: [hi]\ntests: file://t.csv\n", {"t.csv": "a,b\n1,2\n3\n"},
     "t.csv:3: the row has 1 cells, the header 2"),
    ("prompts: [hi]\ntests: file://t.jsonl\n", {"t.jsonl": '{"a": 1}\n{bad\n'},
     "t.jsonl:2: not valid JSON"),
])
def test_promptfoo_bad_input_exits_2(tmp_path: Path, text: str, files: dict[str, str],
                                     message: str) -> None:
    (tmp_path / "pf.yaml").write_text(text)
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    res = run_cli("import", "promptfoo", "pf.yaml", "ev", cwd=tmp_path)
    assert res.code == 2, res.both
    assert res.err.startswith(f"Error: {message}"), res.err
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
    assert res.err == (f"Error: {CORPUS / 'ollama/promptfooconfig.yaml'}:5: "
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
        "Not imported: 2 item(s) with no counterpart (also in ev/README.md):",
        "  pf.yaml:20: not-levenshtein assertion: no built-in checks the opposite of "
        "levenshtein",
        "  pf.yaml:22: levenshtein assertion: levenshtein needs a non-negative threshold"]
    grader = (tmp_path / "ev/graders/default.yaml").read_text()
    assert "- name: levenshtein\n  checker: levenshtein\n  value:\n    task: levenshtein_1\n" \
           "  max_distance: 1\n  if_task_has: levenshtein_1\n" in grader
    assert "  max_distance: 5\n  if_task_has: levenshtein_2\n" in grader       # the default
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
