"""Issue 29's side-by-side eval: 20 questions as 20 YAML Task files (plus eval.yaml, a
config and a grader: 23 files) and as one `tasks/questions.jsonl` with a prompt template
(3 files of at most 40 lines, plus the same eval.yaml) give the same report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers import run_cli, write
from tools.fake_openai import Scripted, completion

CAPITALS = [("France", "Paris"), ("Japan", "Tokyo"), ("Peru", "Lima"), ("Italy", "Rome"),
            ("Spain", "Madrid"), ("Egypt", "Cairo"), ("Kenya", "Nairobi"), ("Chile", "Santiago"),
            ("Cuba", "Havana"), ("Greece", "Athens"), ("Norway", "Oslo"), ("Poland", "Warsaw"),
            ("Canada", "Ottawa"), ("Austria", "Vienna"), ("Ireland", "Dublin"),
            ("Portugal", "Lisbon"), ("Hungary", "Budapest"), ("Sweden", "Stockholm"),
            ("Finland", "Helsinki"), ("Australia", "Canberra")]
WRONG = {"Canada": "Toronto", "Australia": "Sydney", "Chile": "Valparaiso"}
PROMPT = "Capital of {}? One word."
IDENTITY = ("run_id", "run_rel", "run_dir", "grade_id", "grade_rel", "started", "graded",
            "duration_seconds")
GRADER = "checks:\n  - checker: contains\n    value: {task: expected}\n"


def _answer(request: Any) -> Scripted:
    prompt = request.body["messages"][-1]["content"]
    country = next(c for c, _ in CAPITALS if PROMPT.format(c) == prompt)
    return Scripted(200, completion(WRONG.get(country, dict(CAPITALS)[country])))


def _many_files(root: Path, url: str) -> None:
    write(root / "eval.yaml", "description: capitals\n")
    for i, (country, capital) in enumerate(CAPITALS, 1):
        write(root / "tasks" / f"q{i:02d}.yaml",
              f"prompt: {PROMPT.format(country)}\ngrading:\n  expected: {capital}\n")
    write(root / "configs/default.yaml", f"runner: smevals:openai\nmodel: m\nbase_url: {url}\n")
    write(root / "graders/default.yaml", GRADER)


def _three_files(root: Path, url: str) -> None:
    write(root / "eval.yaml", "description: capitals\n")
    write(root / "tasks/questions.jsonl", "".join(
        json.dumps({"name": f"q{i:02d}", "country": c, "grading": {"expected": cap}}) + "\n"
        for i, (c, cap) in enumerate(CAPITALS, 1)))
    write(root / "configs/default.yaml", f"runner: smevals:openai\nmodel: m\nbase_url: {url}\n"
          f"prompt_template: \"{PROMPT.format('{{task.country}}')}\"\n")
    write(root / "graders/default.yaml", GRADER)


def _report(root: Path) -> dict[str, Any]:
    ran = run_cli("run", str(root), "-g", "-j", "2")
    assert ran.code == 1, ran.both              # three wrong answers
    res = run_cli("report", str(root), "--format", "json")
    assert res.code == 0, res.both
    [ev] = json.loads(res.out)["evals"]
    for key in ("path", "store"):
        ev.pop(key)
    for row in ev["rows"]:          # which records, and when: not figures
        for key in IDENTITY:
            row.pop(key)
    return dict(ev)


def test_side_by_side_eval_gives_the_same_report(tmp_path: Path, fake_openai) -> None:
    fake_openai.respond_with(_answer)
    many, three = tmp_path / "a" / "capitals", tmp_path / "b" / "capitals"
    _many_files(many, fake_openai.base_url)
    _three_files(three, fake_openai.base_url)
    assert len([p for p in many.rglob("*") if p.is_file()]) == 23
    data = [three / "tasks/questions.jsonl", three / "configs/default.yaml",
            three / "graders/default.yaml"]
    assert sorted(p for p in three.rglob("*") if p.is_file()) == sorted(
        [three / "eval.yaml", *data])
    assert sum(len(p.read_text().splitlines()) for p in data) <= 40
    a, b = _report(many), _report(three)
    assert a["summary"]["passed"] == 17 and a["summary"]["failed"] == 3
    assert a == b
