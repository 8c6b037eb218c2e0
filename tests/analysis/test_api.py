"""The read API of `import smevals`: typed records made lazily from the store's own records,
the same errors as the command line, the DataFrame backends, a missing extra, and values no
schema shapes (usage, Task keys) made safe for every table format."""

from __future__ import annotations

import inspect
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import smevals
from smevals.grade.version import grader_version
from smevals.run.plan import inputs_of, resolve_runner
from smevals.store.read import Obj
from smevals.store.records import RunFields
from tests.analysis.figures import cli, report_json
from tests.analysis.history7 import graded
from tests.helpers import git, write
from tests.report.builder import Builder, make_qa, state1

INSTALL = "pip install 'pandas>=2.1' 'pyarrow>=14' where smevals is installed"


@pytest.fixture
def qa(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Builder:
    """The qa Eval in state 1 (every kind of Run left out), the working folder above it."""
    root = make_qa(tmp_path / "work" / "qa")
    monkeypatch.chdir(tmp_path / "work")
    return state1(root)


def test_runs_are_typed_records_made_one_at_a_time_from_the_stores_own(qa: Builder) -> None:
    assert inspect.isgenerator(smevals.runs("qa"))
    found = list(smevals.runs("qa"))
    assert all(isinstance(r, smevals.RunResult) for r in found)
    assert Counter(r.left_out for r in found) == {None: 17, "failed": 1, "stale": 1,
                                                  "ungraded": 1, "older_version": 1}
    small = next(r for r in found if (r.task, r.config, r.model, r.sample) ==
                 ("alpha", "default", "small", 0))
    version = grader_version(qa.ev.graders["default"])
    assert small._asdict() | {"run_record": None, "grade_record": None} == {
        "eval": "qa", "task": "alpha", "config": "default", "model": "small", "sample": 0,
        "run_id": qa.made["small-alpha-0"].id, "run_rel": qa.made["small-alpha-0"].rel,
        "status": "ok", "failure": None, "started": "2026-01-02T03:01:00Z",
        "ended": "2026-01-02T03:01:00Z", "duration_seconds": 0.25, "counted": True,
        "left_out": None, "stale": False, "grader": "default", "grade_id": small.grade_id,
        "grade_rel": f"grades/default/alpha/default/small/{small.grade_id}",
        "grader_version": version, "graded": "2026-01-02T03:02:00Z", "outcome": "pass",
        "passed": True, "score": 1.0, "tags": ("hat",), "input_tokens": None,
        "output_tokens": None, "total_tokens": None, "cost_usd": None, "latency_ms": None,
        "judge_calls": None, "judge_cached": None, "judge_input_tokens": None,
        "judge_output_tokens": None, "judge_cost_usd": None, "commit": None,
        "run_commit": None, "store": "qa/results",
        "task_keys": {"name": "alpha", "prompt": "What is alpha?"},
        "metrics": {"latency": 1.0, "exact": True}, "usage": {}, "run_record": None,
        "grade_record": None}
    # references to the records the store read, never copies
    assert small.task_keys is small.run_record["task"]
    assert small.grade_record is not None and small.metrics is small.grade_record["metrics"]
    assert [c._asdict() for c in small.checks()] == [{
        "eval": "qa", "task": "alpha", "config": "default", "model": "small", "sample": 0,
        "run_id": small.run_id, "grade_id": small.grade_id, "grader_version": version,
        "counted": True, "position": 1, "check": "contains", "checker": "contains",
        "verdict": "pass", "passed": True, "score": None, "notes": None, "commit": None}]
    failed = next(r for r in found if r.left_out == "failed")
    assert (failed.status, failed.failure, failed.counted, failed.grade_id, failed.passed,
            failed.checks()) == ("failed", "exit", False, None, None, [])


def test_errored_grades_and_their_checks(qa: Builder) -> None:
    for i, outcome in enumerate(("pass", "error")):
        qa.run(f"j{i}", "beta", "judged", sample=i)
        graded(qa, f"j{i}", outcome, 0.5 if outcome == "pass" else None,
               [{"checker": "llm_judge", "ok": outcome == "pass", "error": outcome == "error",
                 "score": 0.5 if outcome == "pass" else None},
                {"checker": "contains", "skipped": True, "score": 1.0}],
               {"calls": 1, "cost_usd": 0.5})
    runs = [r for r in smevals.runs("qa", models=["judged"])]
    assert [(r.counted, r.left_out, r.outcome, r.passed, r.score, r.judge_cost_usd)
            for r in runs] == [(True, None, "pass", True, 0.5, 0.5),
                               (False, "error", "error", None, None, 0.5)]
    checks = smevals.checks_df("qa", models=["judged"])
    assert checks[["counted", "check", "verdict", "passed", "score"]].astype(object).where(
        checks[["counted", "check", "verdict", "passed", "score"]].notna(), None
    ).values.tolist() == [[True, "llm_judge", "pass", 1, 0.5],
                          [True, "contains", "skipped", None, None],
                          [False, "llm_judge", "error", None, None],
                          [False, "contains", "skipped", None, None]]


def test_evals_are_read_one_at_a_time(qa: Builder, tmp_path: Path) -> None:
    """A Suite whose second Eval has no such grader: the first one is read and given
    before the second one fails (report, reading them all first, fails at once)."""
    write(tmp_path / "work" / "zz" / "eval.yaml", "name: zz\n")
    write(tmp_path / "work" / "zz" / "tasks" / "a.yaml", "prompt: a\n")
    write(tmp_path / "work" / "zz" / "configs" / "default.yaml", "runner: ./r.sh\n")
    write(tmp_path / "work" / "zz" / "graders" / "other.yaml",
          "checks:\n  - checker: contains\n    value: a\n")
    evals = smevals.evals(".")
    first = next(evals)
    assert (first.name, first.summary["runs"], first.summary["graded"]) == ("qa", 21, 17)
    with pytest.raises(smevals.SmevalsError) as caught:
        next(evals)
    res = cli("report", ".", cwd=tmp_path / "work")
    assert (res.code, res.err) == (2, f"Error: {caught.value}\n")


@pytest.mark.parametrize(("args", "options"), [
    (["nowhere"], {}),
    (["qa", "-m", "nobody"], {"models": ["nobody"]}),
    (["qa", "-g", "strict"], {"grader": "strict"}),
    (["qa", "--grader-version", "01", "--any-version"], {"grader_version": "01",
                                                         "any_version": True}),
    (["qa", "--rev", "HEAD"], {"rev": "HEAD"}),
    (["empty"], {}),
])
def test_errors_are_the_command_lines(qa: Builder, tmp_path: Path, args: list[str],
                                      options: dict[str, Any]) -> None:
    make_qa(tmp_path / "work" / "empty")
    res = cli("report", *args, cwd=tmp_path / "work")
    assert res.code == 2 and res.err.startswith("Error: ")
    for call in (smevals.runs, smevals.checks, smevals.runs_df, smevals.checks_df):
        with pytest.raises(smevals.SmevalsError) as caught:
            list(call(args[0], **options))
        assert res.err == f"Error: {caught.value}\n", call


def test_the_same_at_a_revision(qa: Builder, tmp_path: Path) -> None:
    repo = tmp_path / "work"
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "state 1")
    sha = git(repo, "rev-parse", "HEAD").strip()
    qa.run("more", "alpha", "small", sample=7)
    qa.grade("more", "fail", 0.0)
    now, then = smevals.runs_df("qa"), smevals.runs_df("qa", rev="HEAD")
    assert (len(now), len(then)) == (22, 21)
    assert (set(now["commit"].isna()), set(then["commit"])) == ({True}, {sha})
    assert set(then["store"]) == {"HEAD:qa/results"}
    with pytest.raises(smevals.SmevalsError, match="^unknown revision 'nope'$"):
        smevals.runs_df("qa", rev="nope")


def test_the_backends_hold_the_same_table(qa: Builder) -> None:
    arrow = smevals.runs_df("qa", backend="arrow")
    frame = smevals.runs_df("qa")
    polars = smevals.runs_df("qa", backend="polars")
    assert list(frame.columns) == arrow.column_names == polars.columns
    assert polars.to_dicts() == arrow.to_pylist()
    assert {c: str(frame[c].dtype) for c in ("passed", "counted", "score", "started",
                                             "metric.exact", "metric.latency")} == {
        "passed": "Int64", "counted": "boolean", "score": "float64",
        "started": "datetime64[us, UTC]", "metric.exact": "boolean",
        "metric.latency": "float64"}
    assert frame.groupby(["config", "model"])["passed"].mean().to_dict() == {
        ("alt", "small"): 1.0, ("default", "large"): 0.75, ("default", "medium"): 1.0,
        ("default", "small"): 0.6, ("default", "tiny"): 0.0}
    with pytest.raises(smevals.SmevalsError, match="^backend: 'excel' is not one of pandas, "
                                                   "polars, arrow$"):
        smevals.runs_df("qa", backend="excel")


@pytest.mark.parametrize("missing", ["pyarrow", "pandas"])
def test_a_missing_extra_names_the_install_line(qa: Builder, missing: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, missing, None)           # as if it were not installed
    for name in ("runs_df", "checks_df", "history_df"):
        with pytest.raises(smevals.SmevalsError) as caught:
            getattr(smevals, name)("qa")
        assert str(caught.value) == (f"{name} needs the optional `analysis` extra (pandas and "
                                     f"pyarrow), which is not installed: {INSTALL}")
    assert len(list(smevals.runs("qa"))) == 21                # the records need neither


def test_polars_missing(qa: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "polars", None)
    with pytest.raises(smevals.SmevalsError) as caught:
        smevals.runs_df("qa", backend="polars")
    assert str(caught.value) == ("runs_df needs polars, which is not installed: "
                                 "pip install 'polars>=0.20' where smevals is installed")


def forge(b: Builder, sample: int, task: dict[str, Any], usage: Any, provenance: Any) -> str:
    """A Run of alpha by the model `forged` whose record holds what no schema shapes: odd
    usage, provenance and Task keys (sound otherwise: it hashes to its id), graded pass."""
    spec = b.ev.configs["default"]
    alpha = b.ev.task("alpha")
    assert alpha is not None
    started = b.stamp()
    record: RunFields = {
        "eval": "qa", "task": {"name": "alpha", **task}, "grading": {},
        "config": {**spec.doc, "name": "default", "runner": "./run.sh", "model": "forged"},
        "model": "forged", "inputs": inputs_of(alpha, spec, resolve_runner(spec), "forged"),
        "sample": sample, "started": started, "ended": started, "duration_seconds": 0.5,
        "exit_code": 0, "status": "ok", "failure": None, "usage": usage,
        "provenance": provenance}
    staging = b.store.stage("run")
    (staging.dir / "output.txt").write_text("x\n")
    written = staging.commit(record, ["alpha", "default", "forged"])
    b.made[f"forged-{sample}"] = Obj("run", written.id, written.rel, record)
    b.grade(f"forged-{sample}", "pass", 1.0)
    return written.id


def test_values_no_schema_shapes(qa: Builder, tmp_path: Path) -> None:
    huge = 2**63 + 5                    # a record holds whole numbers up to 2**64 - 1
    forge(qa, 0, {"n": 3, "big": huge, "tags": ["a", "b"], "flag": True},
          {"input_tokens": "12", "output_tokens": True, "total_tokens": huge,
           "cost_usd": "0.1", "latency_ms": 5}, {"git": {"commit": 7}})
    forge(qa, 1, {"n": "three", "big": 1, "flag": False}, {"cost_usd": float("inf")},
          {"git": {"commit": "abc"}})
    forge(qa, 2, {}, None, {"git": "not a mapping"})
    frame = smevals.runs_df("qa", models=["forged"])
    cells = frame[["sample", "input_tokens", "output_tokens", "total_tokens", "cost_usd",
                   "latency_ms", "run_commit", "task.n", "task.big", "task.tags",
                   "task.flag"]].astype(object)
    assert cells.where(cells.notna(), None).values.tolist() == [
        [0, None, None, None, None, 5.0, None, "3", str(huge), '["a","b"]', True],
        [1, None, None, None, None, None, "abc", "three", "1", None, False],
        [2, None, None, None, None, None, None, None, None, None, None]]
    res = cli("export", "qa", "-m", "forged", "-o", "out", cwd=tmp_path / "work")
    assert res.code == 0, res.both
    import duckdb

    assert duckdb.execute("SELECT \"task.big\" FROM 'out/runs.parquet' ORDER BY 1").fetchall() \
        == [("1",), (str(huge),), (None,)]


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'smevals' has no attribute 'nope'"):
        smevals.nope  # noqa: B018


def test_a_shared_store(qa: Builder, tmp_path: Path) -> None:
    """`store=` is `--store`: one folder per Eval in a store shared by Evals."""
    work = tmp_path / "work"
    (work / "shared").mkdir()
    (work / "qa" / "results").rename(work / "shared" / "qa")
    frame = smevals.runs_df("qa", store="shared")
    doc = report_json(work, "qa", "--store", "shared")["evals"][0]
    assert (len(frame), int(frame["counted"].sum()), set(frame["store"])) == (
        doc["summary"]["runs"], doc["summary"]["graded"], {"shared/qa"})
    with pytest.raises(smevals.SmevalsError) as caught:
        smevals.runs_df("qa")
    assert str(caught.value) == "no Runs in qa/results"


@pytest.mark.parametrize(("args", "options"), [
    (["qa"], {}),
    (["qa", "-n", "0"], {"n": 0}),
    (["nowhere"], {}),
])
def test_the_history_errors_are_logs(qa: Builder, tmp_path: Path, args: list[str],
                                     options: dict[str, Any]) -> None:
    res = cli("log", *args, cwd=tmp_path / "work")
    assert res.code == 2
    for call in (smevals.log, smevals.history_df):
        with pytest.raises(smevals.SmevalsError) as caught:
            call(args[0], **options)
        message = str(caught.value)
        assert res.err.endswith(f"Error: {message}\n") if "-n" not in args else \
            message == "-n: 0 is not a positive number of commits"


def test_the_arguments_as_python_gives_them(qa: Builder) -> None:
    """A name alone is one name, paths may be Path objects, and what is not a name or an
    empty model is refused."""
    assert {r.task for r in smevals.runs(qa.root, tasks="beta")} == {"beta"}
    assert len(list(smevals.runs([Path("qa"), "qa"]))) == 21      # one Eval, once
    with pytest.raises(smevals.SmevalsError, match=r"^tasks: expected names \(strings\), "
                                                   r"got \(1,\)$"):
        smevals.runs("qa", tasks=[1])  # type: ignore[list-item]
    with pytest.raises(smevals.SmevalsError, match="^--model: a name cannot be empty$"):
        smevals.runs("qa", models=[" "])
