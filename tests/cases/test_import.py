"""`smevals import ai-eval-forge`: the Eval, its recorded Runs, and `smevals grade` reaching
ai-eval-forge's verdicts and scores on a case file that uses every check type."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import SMEVALS, Result, grades_by_task, run_cli
from tests.helpers.forge_expected import DATA, EXPECTED

# The generated checker program runs `python3` (or the interpreter of `smevals` on PATH).
PATH = {"PATH": f"{Path(SMEVALS).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def smevals(*args: str, cwd: Path) -> Result:
    return run_cli(*args, cwd=cwd, env=PATH)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """every-type.jsonl imported and graded once (read only)."""
    work = tmp_path_factory.mktemp("import")
    shutil.copy(DATA / "every-type.jsonl", work / "cases.jsonl")
    res = smevals("import", "ai-eval-forge", "cases.jsonl", "-o", "ev", "--model", "forge-run",
                  cwd=work)
    assert res.code == 0, res.both
    assert res.out == ("Imported 18 case(s) from cases.jsonl into ev: 18 task(s), config "
                       "'imported', grader 'default', 18 Run(s) of model 'forge-run'\n"
                       "Next: smevals grade ev && smevals report ev\n")
    graded = smevals("grade", "ev", cwd=work)
    assert graded.code == 1, graded.both
    assert "Graded 18 Run(s): 12 pass, 6 fail" in graded.out
    return work


def grades(ev: Path) -> dict[str, dict[str, Any]]:
    """The newest Grade of each task."""
    return {task: records[-1] for task, records in grades_by_task(ev).items()}


def test_grade_reaches_ai_eval_forge_verdicts_and_scores(imported: Path) -> None:
    got = grades(imported / "ev")
    assert len(got) == 18
    for case_id, passed, score, checks in EXPECTED:
        record = got[case_id]
        assert record["outcome"] == ("pass" if passed else "fail"), case_id
        assert record["score"] == score, case_id
        details = record["checks"][0]["details"]
        assert [(c["type"], c["passed"], c["score"], c["min"], c["detail"])
                for c in details["checks"]] == checks


def test_the_eval_validates_and_its_runs_are_current(imported: Path) -> None:
    res = smevals("validate", "ev", cwd=imported)
    assert res.out == "OK: 1 eval, 18 tasks, 1 config, 1 grader; no problems\n"
    res = smevals("run", "ev", "-c", "imported", "-m", "forge-run", "-n", "1", "--dry-run",
                  cwd=imported)
    assert res.code == 0, res.both
    assert res.out.startswith("ev: 0 Run(s) to make with config 'imported' (18 task/model "
                              "pair(s), 18 with earlier Runs of the same inputs)\n")


def test_tasks_configs_and_usage(imported: Path) -> None:
    ev = imported / "ev"
    assert (ev / "tasks" / "meta-case.yaml").read_text() == """\
# yaml-language-server: $schema=../.smevals/schemas/task.schema.json
# Imported from ai-eval-forge case 'meta-case' (cases.jsonl:17).
case_id: meta-case
prompt: What is 2+2?
tags:
- math
grading:
  expected: '4'
  checks:
  - type: token_f1
    min: 0.65
"""
    assert (ev / "configs" / "imported.yaml").read_text().endswith(
        "runner: smevals:replay\nresponses: imported.jsonl\nmodel: forge-run\n")
    runs = {json.loads(p.read_text())["task"]["name"]: json.loads(p.read_text())
            for p in (ev / "results" / "runs").glob("*/*/*/*/run.json")}
    assert runs["meta-case"]["usage"] == {"cost_usd": 0.0015, "latency_ms": 250.0}
    assert runs["case-17"]["usage"] == {"cost_usd": 0.001, "latency_ms": 83.0}
    assert runs["exact-pass"]["usage"] is None
    assert (ev / "results" / "runs" / "actual-object" / "imported" / "forge-run").is_dir()
    out = next((ev / "results" / "runs" / "exact-pass").glob("*/*/*/output.txt"))
    assert out.read_text() == "  Paris  "


def test_fixing_an_answer_key_regrades_without_a_new_run(imported: Path, tmp_path: Path
                                                         ) -> None:
    shutil.copytree(imported / "ev", tmp_path / "ev")
    task = tmp_path / "ev" / "tasks" / "json-field-wrong.yaml"
    task.write_text(task.read_text().replace("value: 4", "value: 3"))
    res = smevals("grade", "ev", cwd=tmp_path)
    assert res.code == 0, res.both
    assert "Graded 1 Run(s): 1 pass, 0 fail" in res.out
    assert "Skipped 17 Run(s) already graded by this grader version" in res.out
    assert len(list((tmp_path / "ev" / "results" / "runs").glob("*/*/*/*/run.json"))) == 18


def test_import_refuses_bad_input_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"id": "x", "checks": [{"type": "js_expression"}]}\n')
    res = smevals("import", "ai-eval-forge", "bad.jsonl", cwd=tmp_path)
    assert res.code == 2
    assert res.err.startswith("Error: bad.jsonl:1: case 'x': checks[0]: unknown check type "
                              "'js_expression'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]
    (tmp_path / "dup.jsonl").write_text('{"id": "a"}\n{"id": "a"}\n')
    res = smevals("import", "ai-eval-forge", "dup.jsonl", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: dup.jsonl:2: case id 'a' is used twice (first at "
                                      "dup.jsonl:1); every case needs its own id\n")


def test_import_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "Greeting One", "actual": "hi", '
                                          '"expected": "hi"}\n')
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "keep.txt").write_text("mine\n")
    res = smevals("import", "ai-eval-forge", "cases.jsonl", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: cases already exists and is not empty; choose "
                                      "another folder with -o\n")
    res = smevals("import", "ai-eval-forge", "cases.jsonl", "-o", "other", cwd=tmp_path)
    assert res.code == 0, res.both
    names = sorted(p.name for p in (tmp_path / "other" / "tasks").iterdir())
    assert names == ["greeting-one-78a01566.yaml"]      # the store's safe-name rule
    assert "case_id: Greeting One\n" in (tmp_path / "other" / "tasks" / names[0]).read_text()
    res = smevals("grade", "other", cwd=tmp_path)
    assert (res.code, "Graded 1 Run(s): 1 pass, 0 fail" in res.out) == (0, True)
