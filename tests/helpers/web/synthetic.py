"""A synthetic Eval of 10,000 graded Runs (100 tasks x 10 models x 10 samples), made in
memory: enough to measure the Eval page of a big store without writing 20,000 objects."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from smevals.evaldef.model import Eval, Task
from smevals.grade.select import Choice
from smevals.report.document import CURRENT, EvalReport
from smevals.report.rows import collect
from smevals.site.data import Loaded
from smevals.store.read import Obj, Store
from smevals.store.records import GradeBrief, RunBrief

TASKS, MODELS, SAMPLES = 100, 10, 10
TAGS = ("too_long", "wrong_format", "refused", "hallucinated", "partial")


def _pair(t: int, m: int, s: int) -> tuple[Obj[RunBrief], Obj[GradeBrief]]:
    task, model = f"task-{t:03d}", f"model-{m:02d}"
    stamp = f"20260101T{t % 24:02d}{m:02d}{s:02d}Z"
    rid = f"{stamp}-{t:04d}{m:04d}{s:04d}"
    rel = f"runs/{task}/default/{model}/{rid}"
    run = Obj("run", rid, rel, cast(RunBrief, {
        "task": {"name": task}, "config": {"name": "default"}, "model": model, "status": "ok",
        "sample": s, "started": "2026-01-01T00:00:00Z"}))
    passed = (t * 7 + m * 3 + s) % 10 < m
    score = ((t + s) % 11) / 10 if passed else ((t + m) % 5) / 10
    tags = [TAGS[(t + s) % len(TAGS)]] if not passed else []
    grade = Obj("grade", "g" + rid, "grades/default/" + rel[5:],
                cast(GradeBrief, {"run": {"rel": rel, "id": rid, "task": task, "config": "default",
                         "model": model},
                 "grader": {"name": "default", "version": "v1"},
                 "outcome": "pass" if passed else "fail", "score": score, "tags": tags,
                 "metrics": {}, "graded": "2026-01-01T01:00:00Z"}))
    return run, grade


def big_eval(root: Path) -> Loaded:
    pairs = [_pair(t, m, s) for t in range(TASKS) for m in range(MODELS) for s in range(SAMPLES)]
    runs, grades = [p[0] for p in pairs], [p[1] for p in pairs]
    collected = collect(runs, grades, Choice("default", "v1"))
    report = EvalReport("big", "big", "big/results", "default", "v1", CURRENT, collected)
    tasks = tuple(Task(f"task-{t:03d}", root, {"prompt": f"Task {t}"}, {}) for t in range(TASKS))
    ev = Eval("big", root, "10,000 graded Runs", tasks)
    return Loaded("big", ev, Store(root), report, "2026-01-01T00:00:00Z")
