"""`choose` (one pass for report and diff) picks what `grades_by_run` + `counts` pick."""

from __future__ import annotations

from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from smevals.grade.select import Choice, choose, counts, grades_by_run
from smevals.store.read import Obj
from smevals.store.records import GradeBrief


def grade(i: int, rel: str, grader: str, version: str, graded: str, task: str,
          ghash: Any) -> Obj[GradeBrief]:
    record = {"grader": {"name": grader, "version": version}, "graded": graded,
              "run": {"rel": rel, "task": task}, "grading_hash": ghash}
    return Obj("grade", f"2026-{i:04d}", f"grades/{grader}/{i}",
               cast(GradeBrief, record))       # only what choosing a Grade reads


GRADES = st.lists(st.tuples(st.sampled_from(["runs/a", "runs/b", "runs/c"]),
                            st.sampled_from(["g", "g", "other"]),
                            st.sampled_from(["v1", "v1x", "v2"]),
                            st.sampled_from(["2026-01-01", "2026-01-02", "2026-01-03"]),
                            st.sampled_from(["t1", "t2"]),
                            st.sampled_from(["h1", "h2", None, ["odd"]])), max_size=12)
CHOICES = st.sampled_from([Choice("g", "v1"), Choice("g", "v1", {"t1": "h1"}),
                           Choice("g", None, any_version=True), Choice("g", "v2"),
                           Choice("other", "v1x", {"t2": "h2"})])


@settings(max_examples=300)
@given(GRADES, CHOICES)
def test_choose_agrees_with_the_history_of_each_run(items, choice):
    grades = [grade(i, *item) for i, item in enumerate(items)]
    chosen, newest = choose(grades, choice)
    history = grades_by_run(grades, choice.grader)
    assert set(newest) == set(history)
    for rel, past in history.items():
        assert newest[rel] is past[-1]
        counted = [g for g in past if counts(g, choice)]
        assert chosen.get(rel) is (counted[-1] if counted else None)
    assert set(chosen) <= set(history)
