"""A deterministic fixture store: Runs and Grades written through the store's Staging API
with fixed timestamps, so every id (a hash of the content) is the same on every machine.

`make_qa(root)` writes the "qa" Eval; `state1` .. `state3` add the Runs and Grades that
the report and diff tests read (state 2 regrades with an edited grader, state 3 adds Runs,
a task and a model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from smevals.evaldef.load import load_eval
from smevals.grade.version import grader_version, grading_hash
from smevals.run.plan import inputs_of, resolve_runner
from smevals.store.read import Obj, Store
from smevals.store.records import CheckRecord, GradeFields, Outcome, RunFields
from tests.helpers import git as plain_git

BASE = datetime(2026, 1, 2, 3, 0, 0, tzinfo=UTC)
OLD_VERSION = "0123456789ab"

TASKS = {
    "alpha": "prompt: What is alpha?\n",
    "beta": "prompt: What is beta?\n",
    "gamma": "prompt: What is gamma?\n",
    "delta": "prompt: What is 2 + 2?\ngrading:\n  answer: '4'\n",
}
RUNNER = "#!/bin/sh\necho \"$SMEVALS_MODEL answers $SMEVALS_TASK\"\n"
GRADER_V1 = "checks:\n  - checker: contains\n    value: answers\n"
GRADER_V2 = "checks:\n  - checker: contains\n    name: answered\n    value: answers\n"


def write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def make_qa(root: Path) -> Path:
    write(root / "eval.yaml", "name: qa\ndescription: fixture for report and diff\n")
    for name, text in TASKS.items():
        write(root / "tasks" / f"{name}.yaml", text)
    write(root / "configs" / "default.yaml", "runner: ./run.sh\nmodel: small\n")
    write(root / "configs" / "alt.yaml", "runner: ./run.sh\nmodel: small\ntemperature: 1\n")
    write(root / "configs" / "run.sh", RUNNER, 0o755)
    write(root / "graders" / "default.yaml", GRADER_V1)
    return root


@dataclass
class Builder:
    root: Path
    clock: int = 0
    made: dict[str, Obj[RunFields]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.ev = load_eval(self.root)
        self.store = Store(self.root / "results")

    def stamp(self) -> str:
        self.clock += 1
        return (BASE + timedelta(minutes=self.clock)).isoformat().replace("+00:00", "Z")

    def run(self, key: str, task: str, model: str, config: str = "default", ok: bool = True,
            stale: bool = False, sample: int = 0) -> Obj[RunFields]:
        spec = self.ev.configs[config]
        doc = self.ev.task(task)
        assert doc is not None
        inputs = inputs_of(doc, spec, resolve_runner(spec), model)
        if stale:
            inputs = {**inputs, "hash": "0" * 64, "task": "0" * 64}
        started = self.stamp()
        record: RunFields = {
            "eval": "qa", "task": doc.doc, "grading": doc.grading,
            "config": {**spec.doc, "name": config, "runner": "./run.sh", "model": model},
            "model": model, "inputs": inputs, "sample": sample, "started": started,
            "ended": started, "duration_seconds": 0.25, "exit_code": 0 if ok else 1,
            "status": "ok" if ok else "failed",
            "failure": None if ok else {"kind": "exit", "detail": "runner exited with status 1"},
            "text": {"output_bytes_replaced": False, "stderr_bytes_replaced": False},
            "usage": None, "provenance": {},
        }
        staging = self.store.stage("run")
        (staging.dir / "output.txt").write_text(f"{model} answers {task} (sample {sample})\n")
        written = staging.commit(record, [task, config, model])
        self.made[key] = Obj("run", written.id, written.rel, record)
        return self.made[key]

    def grade(self, key: str, outcome: str, score: float | None = None,
              tags: tuple[str, ...] = (), metrics: dict[str, Any] | None = None,
              version: str | None = None) -> None:
        run = self.made[key]
        grader = self.ev.graders["default"]
        task = self.ev.task(run.record["task"]["name"])
        check: CheckRecord = {"checker": "contains", "ok": outcome == "pass", "seconds": 0.0}
        if outcome != "pass":
            check["notes"] = "output.txt lacks it"
        record: GradeFields = {
            "eval": "qa",
            "run": {"id": run.id, "rel": run.rel, "task": run.record["task"]["name"],
                    "config": run.record["config"]["name"], "model": run.record["model"]},
            "grader": {"name": "default", "version": version or grader_version(grader),
                       "file": "grader.yaml"},
            "grading_hash": grading_hash(dict(task.grading) if task else {}),
            "method": "last", "graded": self.stamp(), "duration_seconds": 0.01,
            "outcome": cast(Outcome, outcome), "score": score, "tags": list(tags),
            "metrics": metrics or {},
            "checks": [check],
        }
        staging = self.store.stage("grade")
        (staging.dir / "grader.yaml").write_bytes(grader.raw)
        rec = run.record
        staging.commit(record, ["default", rec["task"]["name"], rec["config"]["name"],
                                rec["model"]])


SMALL = [("alpha", [("pass", 1.0), ("pass", 0.9), ("pass", 0.8)]),
         ("beta", [("pass", 0.7), ("fail", 0.2), ("pass", 0.6)]),
         ("gamma", [("fail", 0.1), ("fail", 0.0), ("fail", 0.2)]),
         ("delta", [("pass", 1.0)])]
LARGE = [("alpha", "pass", 1.0), ("beta", "pass", 0.9), ("gamma", "fail", 0.3),
         ("delta", "pass", 0.8)]


def state1(root: Path) -> Builder:
    """Runs of three models and two configs, with every kind of exclusion."""
    b = Builder(root)
    for task, results in SMALL:
        for sample, (outcome, score) in enumerate(results):
            key = f"small-{task}-{sample}"
            b.run(key, task, "small", sample=sample)
            tags = ("hat",) if task == "alpha" and sample < 2 else ("bike",) * (outcome == "fail")
            metrics = {"latency": 1.0 + sample, "exact": outcome == "pass"}
            b.grade(key, outcome, score, tags, metrics)
    for task, outcome, score in LARGE:
        b.run(f"large-{task}", task, "large")
        b.grade(f"large-{task}", outcome, score, (), {"latency": 4.0 + len(task)})
    b.run("medium-alpha", "alpha", "medium")
    b.grade("medium-alpha", "pass", 0.6, ("hat",))
    b.run("tiny-alpha", "alpha", "tiny")
    b.grade("tiny-alpha", "fail", None)
    b.run("tiny-beta", "beta", "tiny", ok=False)
    b.run("tiny-gamma", "gamma", "tiny")
    b.run("tiny-delta", "delta", "tiny")
    b.grade("tiny-delta", "pass", 1.0, version=OLD_VERSION)
    b.run("alt-alpha", "alpha", "small", config="alt", stale=True)
    b.grade("alt-alpha", "pass", 0.5)
    b.run("alt-beta", "beta", "small", config="alt")
    b.grade("alt-beta", "pass", 0.6)
    return b


SMALL_V2 = {"beta": [("pass", 0.7), ("pass", 0.5), ("pass", 0.6)],
            "gamma": [("pass", 0.6), ("pass", 0.7), ("fail", 0.2)]}
LARGE_V2 = {"alpha": ("pass", 0.8), "beta": ("fail", 0.3), "gamma": ("fail", 0.1),
            "delta": ("pass", 0.7)}


def state2(b: Builder) -> None:
    """Edit the grader and regrade every Run graded in state 1 (the same Runs)."""
    write(b.root / "graders" / "default.yaml", GRADER_V2)
    b.ev = load_eval(b.root)
    for task, results in SMALL:
        for sample, old in enumerate(results):
            outcome, score = SMALL_V2[task][sample] if task in SMALL_V2 else old
            b.grade(f"small-{task}-{sample}", outcome, score, (),
                    {"latency": 1.0 + sample, "exact": outcome == "pass"})
    for task, (outcome, score) in LARGE_V2.items():
        b.grade(f"large-{task}", outcome, score)
    b.grade("medium-alpha", "pass", 0.6, ("hat",))
    b.grade("tiny-alpha", "fail", None)
    b.grade("alt-alpha", "pass", 0.5)
    b.grade("alt-beta", "pass", 0.6)


def state3(b: Builder) -> None:
    """New Runs: a second sample, a new model and a new task."""
    write(b.root / "tasks" / "epsilon.yaml", "prompt: What is epsilon?\n")
    b.ev = load_eval(b.root)
    b.run("large-alpha-1", "alpha", "large", sample=1)
    b.grade("large-alpha-1", "pass", 1.0)
    b.run("huge-alpha", "alpha", "huge")
    b.grade("huge-alpha", "pass", 1.0)
    b.run("large-epsilon", "epsilon", "large")
    b.grade("large-epsilon", "pass", 0.9)


def git(repo: Path, *args: str) -> str:
    """git at the history's fixed date, with the repository as HOME."""
    return plain_git(repo, *args, env={"GIT_AUTHOR_DATE": "2026-01-02T03:00:00Z",
                                       "GIT_COMMITTER_DATE": "2026-01-02T03:00:00Z",
                                       "HOME": str(repo)})


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def history(repo: Path) -> Builder:
    """A git repository with four commits: the Eval without a store, state 1, state 2
    (grader edited and every Run regraded), state 3 (new Runs, task and model)."""
    git(repo, "init", "-q", "-b", "main")
    make_qa(repo / "qa")
    commit(repo, "eval only")
    b = state1(repo / "qa")
    commit(repo, "state 1")
    state2(b)
    commit(repo, "state 2: grader edited, regraded")
    state3(b)
    commit(repo, "state 3: new runs")
    return b
