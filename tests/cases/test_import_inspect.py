"""`smevals import inspect`: Inspect datasets (CSV, JSON, JSONL) to an Eval, graded end to
end against a fake OpenAI server; the bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

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
        "  2 chat input(s): the user messages' text became the prompt\n"
        "  2 id(s) changed to be valid, unique Task names\n"
        "  1 sample(s) without a target (the grader's Check skips them)\n"
        "  1 sample(s) with `files`: not imported\n"
        "Next: smevals validate ev && smevals run ev -m MODEL\n")
    rows = [json.loads(r) for r in (tmp_path / "ev/tasks/math.jsonl").read_text().splitlines()]
    assert rows == [
        {"name": "q1", "prompt": "What is 2+2?", "grading": {"expected": "4"}},
        {"name": "q_1", "prompt": "Capital of France?", "level": 2, "metadata_name": "x",
         "grading": {"expected": ["Paris", "France"]}},
        {"name": "q1-2", "prompt": "Say anything."},
        {"name": "7", "prompt": "Say OK", "choices": ["ok", "no"], "grading": {"expected": "ok"}},
    ]
    assert sorted(p.name for p in (tmp_path / "ev").rglob("*") if p.is_file()) == [
        "default.yaml", "default.yaml", "eval.yaml", "math.jsonl"]
    with (tmp_path / "ev/configs/default.yaml").open("a") as f:
        f.write(f"base_url: {fake_openai.base_url}\n")
    answers = {"What is 2+2?": "The answer is 4.", "Capital of France?": "paris, france",
               "Say anything.": "anything", "Say OK": "no"}
    fake_openai.respond_with(lambda req: Scripted(200, completion(
        answers[req.body["messages"][-1]["content"]])))
    ran = run_cli("run", "ev", "-m", "demo", "-g", cwd=tmp_path)
    assert ran.code == 1, ran.both
    outcomes = {rec["run"]["task"]: (rec["outcome"], len(rec["checks"]))
                for rec in grade_records(tmp_path / "ev")}
    assert outcomes == {"q1": ("pass", 1), "q_1": ("pass", 1), "q1-2": ("pass", 0),
                        "7": ("fail", 1)}


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
])
def test_inspect_bad_input_exits_2(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / name).write_text(text)
    res = run_cli("import", "inspect", name, "ev", cwd=tmp_path)
    assert res.code == 2, res.both
    assert res.err.startswith(f"Error: {message}"), res.err
    assert not (tmp_path / "ev").exists()


def test_inspect_target_folder_not_empty(tmp_path: Path) -> None:
    write(tmp_path / "d.jsonl", '{"input": "a"}\n')
    write(tmp_path / "ev/x", "x\n")
    res = run_cli("import", "inspect", "d.jsonl", "ev", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: ev already exists and is not empty; choose "
                                      "another folder\n")
