"""`smevals export`: the files of each format (golden CSV and JSON lines of the qa store),
Parquet's types, files replaced whole, damage left out, and every bad input named with
exit 2 before anything is written."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.analysis.figures import cli
from tests.helpers import git
from tests.report.builder import Builder, make_qa, state1

GOLDEN = Path(__file__).parent / "golden"
INSTALL = "pip install 'pandas>=2.1' 'pyarrow>=14' where smevals is installed"


@pytest.fixture
def qa(tmp_path: Path) -> Builder:
    return state1(make_qa(tmp_path / "work" / "qa"))


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("SMEVALS_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    assert path.exists(), f"missing golden file {path}: run with SMEVALS_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_files_match_their_golden_files(qa: Builder, fmt: str) -> None:
    work = qa.root.parent
    res = cli("export", "qa", "--format", fmt, "-o", "out", cwd=work)
    assert (res.code, res.out, res.err) == (
        0, f"Wrote out/runs.{fmt} (21 rows)\nWrote out/checks.{fmt} (17 rows)\n", "")
    for table in ("runs", "checks"):
        golden(f"{table}.{fmt}", (work / "out" / f"{table}.{fmt}").read_text())
    assert sorted(os.listdir(work / "out")) == [f"checks.{fmt}", f"runs.{fmt}"]


def test_parquet_has_typed_columns_and_the_rows_of_the_other_formats(qa: Builder) -> None:
    import duckdb
    from pyarrow import parquet

    work = qa.root.parent
    for fmt in ("parquet", "csv", "jsonl"):
        assert cli("export", "qa", "--format", fmt, "-o", "out", cwd=work).code == 0
    schema = parquet.read_schema(work / "out" / "runs.parquet")
    assert {name: str(schema.field(name).type) for name in (
        "sample", "passed", "counted", "score", "started", "tags", "metric.exact",
        "metric.latency", "task.prompt")} == {
        "sample": "int64", "passed": "int64", "counted": "bool", "score": "double",
        "started": "timestamp[us, tz=UTC]", "tags": "string", "metric.exact": "bool",
        "metric.latency": "double", "task.prompt": "string"}
    query = ("SELECT run_id, counted, left_out, passed, score, strftime(started, '%c') "
             "FROM '{}' ORDER BY run_id")
    rows = [duckdb.execute(query.format(work / "out" / f"runs.{fmt}")).fetchall()
            for fmt in ("parquet", "csv", "jsonl")]
    assert rows[0] == rows[1] == rows[2] and len(rows[0]) == 21
    first = json.loads((work / "out" / "runs.jsonl").read_text().splitlines()[0])
    assert (first["left_out"], first["passed"], first["started"]) == \
        ("stale", None, "2026-01-02T03:37:00Z")


def test_files_are_replaced_whole(qa: Builder) -> None:
    work = qa.root.parent
    (work / "out").mkdir()
    (work / "out" / "runs.csv").write_text("old\n")
    assert cli("export", "qa", "--format", "csv", "-o", "out", cwd=work).code == 0
    assert (work / "out" / "runs.csv").read_text().startswith("eval,task,config,model,")
    assert sorted(os.listdir(work / "out")) == ["checks.csv", "runs.csv"]     # no temporary


def test_damaged_objects_are_left_out_and_named(qa: Builder) -> None:
    work = qa.root.parent
    record = qa.root / "results" / qa.made["large-beta"].rel / "run.json"
    record.write_bytes(record.read_bytes().replace(b'"sample"', b'"sample" ', 1))
    res = cli("export", "qa", "--format", "csv", "-o", "out", cwd=work)
    assert res.code == 0
    assert res.out == "Wrote out/runs.csv (20 rows)\nWrote out/checks.csv (16 rows)\n"
    assert res.err.startswith("Warning: 1 damaged object(s) left out (nothing in them was "
                              "counted); run `smevals verify` for details:\n  qa/results/"
                              f"{qa.made['large-beta'].rel}: ")
    assert qa.made["large-beta"].id not in (work / "out" / "runs.csv").read_text()


@pytest.mark.parametrize(("args", "error"), [
    (["nowhere"], "nowhere: no such file or folder"),
    (["qa", "-m", "nobody"], "no Runs match -m nobody in qa/results"),
    (["qa", "--grader-version", "01", "--any-version"],
     "--grader-version and --any-version exclude each other"),
    (["qa", "-o", "taken.txt"], "Usage: smevals export [OPTIONS] EVAL_OR_SUITE...\nTry "
     "'smevals export --help' for help.\n\nError: Invalid value for '-o' / '--output': "
     "Directory 'taken.txt' is a file."),
    (["qa", "-o", "taken.txt/sub"],
     "--output: cannot make the folder taken.txt/sub: Not a directory"),
    (["qa", "--history", "3", "--rev", "HEAD"],
     "--history reads the commits along HEAD; it does not go with --rev"),
    (["qa", "--history", "3"], "qa is not inside a git repository, so log cannot read its "
     "history"),
    (["qa", "--format", "xlsx"], "Usage: smevals export [OPTIONS] EVAL_OR_SUITE...\nTry "
     "'smevals export --help' for help.\n\nError: Invalid value for '--format': 'xlsx' is not "
     "one of 'parquet', 'csv', 'jsonl'."),
    (["qa", "--history", "0"], "Usage: smevals export [OPTIONS] EVAL_OR_SUITE...\nTry "
     "'smevals export --help' for help.\n\nError: Invalid value for '--history': 0 is not in "
     "the range x>=1."),
])
def test_bad_input_exits_2_and_writes_nothing(qa: Builder, args: list[str], error: str) -> None:
    work = qa.root.parent
    (work / "taken.txt").write_text("x\n")
    res = cli("export", *args, cwd=work)
    shown = error if error.startswith("Usage:") else f"Error: {error}"
    assert (res.code, res.out, res.err) == (2, "", f"{shown}\n")
    assert sorted(os.listdir(work)) == ["qa", "taken.txt"]


def test_at_a_revision_and_an_unknown_one(qa: Builder) -> None:
    work = qa.root.parent
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "state 1")
    qa.run("more", "alpha", "small", sample=7)
    res = cli("export", "qa", "--rev", "HEAD", "--format", "csv", "-o", "out", cwd=work)
    assert res.out == "Wrote out/runs.csv (21 rows)\nWrote out/checks.csv (17 rows)\n"
    res = cli("export", "qa", "--rev", "nope", "-o", "out2", cwd=work)
    assert (res.code, res.err) == (2, "Error: unknown revision 'nope'\n")
    assert not (work / "out2").exists()


def test_parquet_without_the_extra(qa: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)        # as if it were not installed
    work = qa.root.parent
    res = cli("export", "qa", "-o", "out", cwd=work)
    assert (res.code, res.out, res.err) == (
        2, "", f"Error: --format parquet needs the optional `analysis` extra (pandas and "
               f"pyarrow), which is not installed: {INSTALL}\n")
    assert not (work / "out").exists()
    res = cli("export", "qa", "--format", "csv", "-o", "out", cwd=work)
    assert (res.code, res.out) == (0, "Wrote out/runs.csv (21 rows)\nWrote out/checks.csv "
                                      "(17 rows)\n")
