"""`smevals init`: a new Eval that validates and runs at once; copies of the shipped suites."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = "agent-tools, code-localization, haiku, json-extraction, pelican, python-stdout, " \
           "rag-citations, reward-hacking, safety, spec-implementation, support-replies, " \
           "svg-artifacts, text-to-sql"
SCHEMAS = [f".smevals/schemas/{k}.schema.json"
           for k in ("config", "eval", "fixture", "grader", "task")]
SCHEMA = re.compile(rb"^# yaml-language-server: \$schema=\S+\n")


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and "results" not in p.relative_to(root).parts)


def test_init_makes_an_eval_that_validates_runs_and_passes(tmp_path: Path) -> None:
    res = run_cli("init", "x", cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.out.endswith("Created x. Next: smevals run x -g && smevals report x\n")
    assert files(tmp_path / "x") == [*SCHEMAS, "configs/default.yaml", "configs/run.sh",
                                     "eval.yaml", "graders/check.py",
                                     "graders/default.fixtures/capital.yaml",
                                     "graders/default.fixtures/sentence.yaml",
                                     "graders/default.fixtures/wrong-city.yaml",
                                     "graders/default.yaml", "tasks/capital.yaml"]
    assert run_cli("validate", "x", cwd=tmp_path).out == \
        "OK: 1 eval, 1 task, 1 config, 1 grader; no problems\n"
    res = run_cli("run", "x", "-g", cwd=tmp_path)
    assert res.code == 0, res.both
    assert "grade: pass score=1" in res.out
    assert res.out.endswith("1 ok, 0 failed\n")


def test_init_example_copies_the_suite_without_results(tmp_path: Path) -> None:
    res = run_cli("init", "--example", "haiku", "y", cwd=tmp_path)
    assert res.code == 0, res.both
    assert files(tmp_path / "y") == [*SCHEMAS, *files(ROOT / "suites" / "haiku")]
    for rel in files(ROOT / "suites" / "haiku"):     # the same, but for the schema comments
        copied = (tmp_path / "y" / rel).read_bytes()
        assert SCHEMA.sub(b"", copied) == SCHEMA.sub(b"", (ROOT / "suites" / "haiku" / rel)
                                                     .read_bytes())
    assert (tmp_path / "y" / "checkers" / "haiku-structure").stat().st_mode & 0o111
    res = run_cli("run", "y", "-m", "tiny-poet", "-g", cwd=tmp_path)
    assert res.code == 0, res.both          # tiny-poet's first samples all pass
    assert res.out.endswith("5 ok, 0 failed\n")


def test_init_unknown_example_lists_the_examples(tmp_path: Path) -> None:
    res = run_cli("init", "--example", "nope", "z", cwd=tmp_path)
    assert (res.code, res.out) == (2, "")
    assert res.err == f"Error: no example named 'nope' - available: {EXAMPLES}\n"
    assert not (tmp_path / "z").exists()


def test_init_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "notes.txt").write_text("mine\n")
    res = run_cli("init", "x", cwd=tmp_path)
    assert res.code == 2
    assert res.err == "Error: x already exists and is not empty\n"
    assert files(tmp_path / "x") == ["notes.txt"]
