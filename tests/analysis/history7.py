"""A git history of seven commits of the qa Eval (tests/report/builder.py) for the analysis
tests: every kind of Run left out (failed, stale, ungraded, older version, errored), a
regrade with an edited grader, judge usage, a skipped Check, a damaged record and its
repair, a deleted Task."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from smevals.grade.version import grader_version, grading_hash
from smevals.spec.load import load_eval
from smevals.store.records import CheckRecord, GradeFields, JudgeUsage, Outcome
from tests.report.builder import Builder, commit, git, make_qa, state1, state2, state3

SUBJECTS = ("state 1: every kind of Run left out", "state 2: grader edited, regraded",
            "state 3: new Runs, a Task and a model", "a damaged run record",
            "the run record repaired", "task gamma deleted", "judged Runs, one errored")


def graded(b: Builder, key: str, outcome: str, score: float | None,
           checks: list[CheckRecord], judge: JudgeUsage) -> None:
    """A Grade of the current grader with these Checks and judge usage."""
    run = b.made[key]
    grader = b.ev.graders["default"]
    task = b.ev.task(run.record["task"]["name"])
    record: GradeFields = {
        "eval": "qa",
        "run": {"id": run.id, "rel": run.rel, "task": run.record["task"]["name"],
                "config": run.record["config"]["name"], "model": run.record["model"]},
        "grader": {"name": "default", "version": grader_version(grader), "file": "grader.yaml"},
        "grading_hash": grading_hash(dict(task.grading) if task else {}),
        "method": "last", "graded": b.stamp(), "outcome": cast(Outcome, outcome),
        "score": score, "tags": [], "metrics": {"judged": True}, "checks": checks,
        "judge": judge}
    staging = b.store.stage("grade")
    (staging.dir / "grader.yaml").write_bytes(grader.raw)
    rec = run.record
    staging.commit(record, ["default", rec["task"]["name"], rec["config"]["name"],
                            rec["model"]])


def history7(repo: Path) -> list[str]:
    """Make the seven commits; their shas, oldest first."""
    git(repo, "init", "-q", "-b", "main")
    qa = make_qa(repo / "qa")
    b = state1(qa)
    shas = []

    def done(subject: str) -> None:
        commit(repo, subject)
        shas.append(git(repo, "rev-parse", "HEAD").strip())

    done(SUBJECTS[0])
    state2(b)
    done(SUBJECTS[1])
    state3(b)
    done(SUBJECTS[2])
    record = qa / "results" / b.made["large-beta"].rel / "run.json"
    good = record.read_bytes()
    record.write_bytes(good.replace(b'"sample"', b'"sample" ', 1))
    done(SUBJECTS[3])
    record.write_bytes(good)
    done(SUBJECTS[4])
    (qa / "tasks" / "gamma.yaml").unlink()
    b.ev = load_eval(qa, cached=False)
    done(SUBJECTS[5])
    for i, (model, outcome) in enumerate([("judged", "pass"), ("judged", "fail"),
                                          ("judged", "error")]):
        key = f"judged-{i}"
        b.run(key, "alpha", model, sample=i)
        checks: list[CheckRecord] = [
            {"checker": "contains", "ok": outcome != "fail", "score": 1.0 if outcome != "fail"
             else 0.0},
            {"checker": "llm_judge", "name": "judge", "ok": outcome == "pass",
             "score": 0.75 if outcome == "pass" else None, "error": outcome == "error"},
            {"checker": "contains", "skipped": True}]
        graded(b, key, outcome, 0.75 if outcome == "pass" else None, checks,
               {"calls": 1, "cached": i, "input_tokens": 100 + i, "cost_usd": 0.1 * (i + 1)})
    done(SUBJECTS[6])
    return shas
