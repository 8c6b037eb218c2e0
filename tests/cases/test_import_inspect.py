"""`smevals import inspect`: Inspect datasets (CSV, JSON, JSONL) to an Eval, graded end to
end against a fake OpenAI server; the bad inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import grade_records, run_cli, write
from tools.fake_openai import Scripted, completion

SAMPLES = "\n".join(json.dumps(s) for s in [
    {"id": "q1", "input": "What is 2+2?", "target": "4"},
    {"id": "q/1", "input": [{"role": "system", "content": "Be brief."},
                            {"role": "user", "content": "Capital of France?"}],
     "target": ["Paris", "France"], "metadata": {"level": 2, "name": "x"},
     "files": {"a.txt": "b"}},
    {"id": "q1", "input": "Say anything.", "target": ""},
    {"id": 7, "input": [{"role": "user", "content": [{"type": "text", "text": "Say OK"}]}],
     "target": "ok", "choices": ["ok", "no"]},
]) + "\n"


def test_inspect_jsonl_becomes_an_eval_that_runs_and_grades(tmp_path: Path,
                                                            fake_openai) -> None:
    write(tmp_path / "math.jsonl", SAMPLES)
    res = run_cli("import", "inspect", "math.jsonl", "ev", cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.out == (
        "Imported math.jsonl into ev: 4 Task(s) in tasks/math.jsonl, config 'default' (a "
        "stub: give it a model), grader 'default'\n"
        "  scorer includes(): kept exactly (the Check 'contains' decides as Inspect 0.3.285's "
        "scorer)\n"
        "  2 chat input(s) kept as messages\n"
        "  2 id(s) changed to be valid, unique Task names\n"
        "  1 sample(s) without a target: no Check applies, their Grades are errors ('no Check "
        "applied'): q1-2 (math.jsonl:3)\n"
        "  1 sample(s) with `files`: not imported\n"
        "Next: smevals validate ev && smevals run ev --dry-run -m MODEL\n")
    rows = [json.loads(r) for r in (tmp_path / "ev/tasks/math.jsonl").read_text().splitlines()]
    assert rows == [
        {"name": "q1", "prompt": "What is 2+2?", "grading": {"expected": "4"}},
        {"name": "q_1", "messages": [{"role": "system", "content": "Be brief."},
                                     {"role": "user", "content": "Capital of France?"}],
         "level": 2, "metadata_name": "x", "grading": {"expected": ["Paris", "France"]}},
        {"name": "q1-2", "prompt": "Say anything."},
        {"name": "7", "messages": [{"role": "user", "content": [{"type": "text",
                                                                 "text": "Say OK"}]}],
         "choices": ["ok", "no"], "grading": {"expected": "ok"}},
    ]
    assert sorted(p.name for p in (tmp_path / "ev").rglob("*") if p.is_file()) == [
        "README.md", "default.yaml", "default.yaml", "eval.yaml", "math.jsonl"]
    assert run_cli("run", "ev", "--dry-run", "-m", "MODEL", cwd=tmp_path).code == 0
    with (tmp_path / "ev/configs/default.yaml").open("a") as f:
        f.write(f"base_url: {fake_openai.base_url}\n")

    def answer(req: Any) -> Scripted:
        last = req.body["messages"][-1]["content"]
        text = last if isinstance(last, str) else last[0]["text"]
        return Scripted(200, completion({"What is 2+2?": "The answer is 4.",
                                         "Capital of France?": "It is PARIS.",
                                         "Say anything.": "anything", "Say OK": "no"}[text]))

    fake_openai.respond_with(answer)
    ran = run_cli("run", "ev", "-m", "demo", "-g", cwd=tmp_path)
    assert ran.code == 2, ran.both            # the sample without a target has no verdict
    sent = {r.body["messages"][-1]["content"] if isinstance(r.body["messages"][-1]["content"],
            str) else "parts": r.body["messages"] for r in fake_openai.requests}
    assert sent["Capital of France?"] == [{"role": "system", "content": "Be brief."},
                                          {"role": "user", "content": "Capital of France?"}]
    outcomes = {rec["run"]["task"]: (rec["outcome"], [c["name"] for c in rec["checks"]])
                for rec in grade_records(tmp_path / "ev")}
    assert outcomes == {"q1": ("pass", ["includes"]), "q_1": ("pass", ["includes"]),
                        "q1-2": ("error", ["no Check applied"]), "7": ("fail", ["includes"])}


# (scorer, solver, answer, target, choices, Inspect 0.3.285's verdict)
SCORED = [
    ("includes()", None, "It is in Paris", ["Paris", "Lyon"], None, True),
    ("includes()", None, "It is in Lyon", ["Paris", "Lyon"], None, True),      # any item
    ("includes()", None, "Marseille", ["Paris", "Lyon"], None, False),
    ("includes(ignore_case=False)", None, "paris", "Paris", None, False),
    ("match()", None, "The answer: Paris.", "paris", None, True),
    ("match()", None, "Paris is the answer", "Paris", None, False),           # at the end
    ("match(location='begin')", None, "Paris is the answer", "Paris", None, True),
    ("match(numeric=True)", None, "So it is 2 + 23 = 25", "25", None, True),
    ("match(numeric=True)", None, "It is 125", "25", None, False),
    ("match(numeric=True)", None, "2.0", ["2", "2.0"], None, True),
    ("exact()", None, "The Hello World!", "hello world", None, True),
    ("choice()", None, "ANSWER: B", "B", ["Venus", "Mars", "Earth"], True),
    ("choice()", None, "Mars, obviously. But B", "B", ["Venus", "Mars", "Earth"], False),
    ("choice()", None, "ANSWER: A", "B", ["Venus", "Mars", "Earth"], False),
    ("choice()", "multiple_choice(multiple_correct=True)", "ANSWER: B, C", ["B", "C"],
     ["Venus", "Mars", "Earth"], True),
]


@pytest.mark.parametrize(("scorer", "solver", "answer", "target", "choices", "verdict"),
                         SCORED)
def test_inspect_scorers_are_kept(tmp_path: Path, scorer: str, solver: str | None,
                                  answer: str, target: Any, choices: Any,
                                  verdict: bool) -> None:
    sample = {"id": "s", "input": "Q?", "target": target,
              **({"choices": choices} if choices else {})}
    write(tmp_path / "d.jsonl", json.dumps(sample) + "\n")
    res = run_cli("import", "inspect", "d.jsonl", "ev", "--scorer", scorer,
                  *(["--solver", solver] if solver else []), cwd=tmp_path)
    assert res.code == 0, res.both
    write(tmp_path / "ev/configs/default.yaml", "runner: smevals:replay\nresponses: r.jsonl\n"
                                               "model: m\n")
    write(tmp_path / "ev/configs/r.jsonl", json.dumps({"task": "s", "model": "m",
                                                       "output": answer}) + "\n")
    ran = run_cli("run", "ev", "-g", cwd=tmp_path)
    assert ran.code == (0 if verdict else 1), ran.both
    if choices:
        prompt = json.loads((tmp_path / "ev/tasks/d.jsonl").read_text())["prompt"]
        assert prompt.endswith("Q?\n\nA) Venus\nB) Mars\nC) Earth")
        assert "'ANSWER: $LETTER" in prompt


def test_inspect_system_message_and_judged_scorer(tmp_path: Path) -> None:
    write(tmp_path / "d.jsonl", '{"input": "Q?", "target": "x"}\n')
    res = run_cli("import", "inspect", "d.jsonl", "ev", "--scorer", "model_graded_fact()",
                  "--system", "Answer briefly.", cwd=tmp_path)
    assert res.code == 0, res.both
    assert "  scorer model_graded_fact(): kept by another rule: a judge Check" in res.out
    assert (tmp_path / "ev/configs/default.yaml").read_text().endswith(
        "runner: smevals:openai\nsystem: Answer briefly.\n")
    assert "checker: llm_answer_match" in (tmp_path / "ev/graders/default.yaml").read_text()


def test_inspect_csv_and_json(tmp_path: Path) -> None:
    write(tmp_path / "d.csv", "input,target,id,category\nSay hi,hi,a,greet\nSay bye,bye,,x\n")
    res = run_cli("import", "inspect", "d.csv", "ev", cwd=tmp_path)
    assert res.code == 0, res.both
    assert (tmp_path / "ev/tasks/d.jsonl").read_text() == (
        '{"name": "a", "prompt": "Say hi", "category": "greet", "grading": {"expected": "hi"}}\n'
        '{"name": "d-2", "prompt": "Say bye", "category": "x", "grading": {"expected": "bye"}}\n')
    write(tmp_path / "d.json", '[{"input": "a", "target": ["x", "y"]}]')
    assert run_cli("import", "inspect", "d.json", "ev2", cwd=tmp_path).code == 0
    assert (tmp_path / "ev2/tasks/d.jsonl").read_text() == (
        '{"name": "d-1", "prompt": "a", "grading": {"expected": ["x", "y"]}}\n')
    assert run_cli("validate", "ev", "ev2", cwd=tmp_path).code == 0


@pytest.mark.parametrize(("name", "text", "message"), [
    ("d.jsonl", '{"input": "a"}\n{"input": \n', "d.jsonl:2: not valid JSON"),
    ("d.jsonl", '{"input": "a"}\n[1]\n', "d.jsonl:2: a sample must be a JSON object"),
    ("d.jsonl", '{"target": "a"}\n', "d.jsonl:1: the sample has no `input`"),
    ("d.csv", "input,target\na,b\nc\n", "d.csv:3: the row has 1 cells, the header 2"),
    ("d.json", '{"input": "a"}', "d.json:1: a JSON dataset must be a list of samples"),
    ("d.jsonl", '{"input": [{"role": "assistant", "content": "x"}]}\n',
     "d.jsonl:1: input: expected a string or a list of chat messages"),
    ("d.txt", "x\n", "d.txt: not a dataset file"),
    ("d.jsonl", "", "d.jsonl: no samples"),
    ("d.jsonl", '{"input": "a", "target": "A"}\n', "--scorer: pattern() has no counterpart"),
    ("d.jsonl", '{"input": "a", "target": "A"}\n', "--scorer: 'match(' is not a call"),
    ("d.jsonl", '{"input": "a", "target": "A"}\n', "--scorer: match() has no argument 'x'"),
    ("d.jsonl", '{"input": "a", "target": "A"}\n', "d.jsonl:1: choices: multiple_choice() "
     "needs a list of choices"),
])
def test_inspect_bad_input_exits_2(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / name).write_text(text)
    scorer = {"--scorer: pattern": "pattern()", "--scorer: 'match(": "match(",
              "--scorer: match()": "match(x=1)", "d.jsonl:1: choices": "choice()"}
    given = next((v for k, v in scorer.items() if message.startswith(k)), "includes()")
    res = run_cli("import", "inspect", name, "ev", "--scorer", given, cwd=tmp_path)
    assert res.code == 2, res.both
    assert res.err.startswith(f"Error: {message}"), res.err
    assert not (tmp_path / "ev").exists()


def test_inspect_target_folder_not_empty(tmp_path: Path) -> None:
    write(tmp_path / "d.jsonl", '{"input": "a"}\n')
    write(tmp_path / "ev/x", "x\n")
    res = run_cli("import", "inspect", "d.jsonl", "ev", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: ev already exists and is not empty; choose "
                                      "another folder\n")
