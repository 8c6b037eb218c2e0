"""B's verdict of A's Runs, for the grader part of a split (`smevals.diff.split`), and what
changed in the grader, in words.

B's verdict of a Run of A comes, in this order, from:

1. B's own rows: the Run is counted on side B too (the usual case: `smevals grade` after
   a grader change grades every current Run with the new version);
2. the Grades either side's store keeps of it (B's store, then A's: `smevals regrade`
   keeps the Grades of both versions), chosen as side B chooses (the newest Grade of B's
   grader version and answer keys);
3. a re-scoring of its Grade on side A, when the two graders differ only in `scoring:`
   (method, pass threshold) and their Checks, programs and answer keys are the same: B's
   scoring applied to the Checks' results A's Grade recorded is exactly the Grade B's
   grader would give (offline, no checker runs).

A Run of A none of these gives a verdict for (a Check changed and the Run was never graded
by B's version, e.g. a Task B deleted) is left out of both parts of the split and counted.
Nothing here runs a checker or calls a model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from smevals.diff.compare import EvalDiff
from smevals.diff.split import Verdict, split
from smevals.evaldef.model import Grader
from smevals.grade.score import grade_outcome, grade_score
from smevals.grade.select import choose
from smevals.sides.read import Side
from smevals.store.read import Obj
from smevals.store.records import GradeBrief

LOOKS = ("description", "name")         # grader keys that change no verdict


def attach(diff: EvalDiff, a: Side, b: Side) -> None:
    """Split each config x model of `diff` whose sides count different grader versions."""
    if not diff.version_changed or a.store is None or b.store is None:
        return
    changed = diff.changed_files
    under_b, rescored = verdicts_under_b(a, b, same_checks(a, b, changed))
    words = change_words(a, b, changed)
    for group in diff.groups:
        if group.a is None or group.b is None:
            continue
        group.split = split(group.a.rows, group.b.rows, under_b, rescored, words, diff.alpha)
        if group.split is None:
            group.unsplit = (f"none of A's {group.a.n} Runs has a verdict of B's grader "
                             "version (graded by it in neither store, and not re-scorable)")


def verdicts_under_b(a: Side, b: Side, same_checks: bool) -> tuple[dict[str, Verdict],
                                                                     frozenset[str]]:
    """B's verdict of each Run A counts that has one (by Run rel), and the rels of those
    re-scored from A's Grade."""
    counted = {r.run.rel: (r.score, r.passed) for r in b.report.collected.rows}
    rows_a = a.report.collected.rows
    out = {r.run.rel: counted[r.run.rel] for r in rows_a if r.run.rel in counted}
    missing = [r for r in rows_a if r.run.rel not in out]
    if missing and b.choice is not None:
        chosen = choose(list(_grades(a, b)), b.choice)[0]
        for row in missing:
            grade = chosen.get(row.run.rel)
            if grade is not None and grade.record.get("outcome") in ("pass", "fail"):
                out[row.run.rel] = _verdict(grade.record)
    rescored = set()
    grader = _grader(b)
    if same_checks and grader is not None:
        for row in missing:
            if row.run.rel not in out:
                found = rescore(grader, row.grade.record)
                if found is not None:
                    out[row.run.rel] = found
                    rescored.add(row.run.rel)
    return out, frozenset(rescored)


def _grades(a: Side, b: Side) -> Iterable[Obj[GradeBrief]]:
    """Every Grade of both stores, each once (B's first: the same object is in both)."""
    seen: set[str] = set()
    for side in (b, a):
        for grade in side.store.grades(brief=True) if side.store is not None else []:
            if grade.rel not in seen:
                seen.add(grade.rel)
                yield grade


def _verdict(record: GradeBrief) -> Verdict:
    score = record.get("score")
    number = float(score) if isinstance(score, int | float) and not isinstance(score, bool) \
        else None
    return number, record.get("outcome") == "pass"


def _grader(side: Side) -> Grader | None:
    if side.ev is None:
        return None
    return side.ev.graders.get(side.report.grader)


def rescore(grader: Grader, record: GradeBrief) -> Verdict | None:
    """The score and outcome `grader`'s scoring gives the Checks' results of `record` (the
    brief view keeps every Check's ok, skipped, error and score); None for a record whose
    Checks cannot be read, or whose outcome would be an error (no verdict)."""
    checks = record.get("checks")
    if not isinstance(checks, list) or not all(isinstance(c, dict) and isinstance(
            c.get("ok"), bool) for c in checks):
        return None
    results: list[Any] = [dict(c) for c in checks]
    score = grade_score(grader, results)
    outcome = grade_outcome(grader, results, score)
    return None if outcome == "error" else (score, outcome == "pass")


def same_checks(a: Side, b: Side, changed: list[str]) -> bool:
    """Whether B's grader is A's with another `scoring:` only: the same Checks, the same
    programs and files (only the grader file changed), unweighted (a Grade records no
    weights), on the same answer keys (the Grades of A are of A's; B's choice says B's)."""
    ga, gb = _grader(a), _grader(b)
    if ga is None or gb is None or not changed:
        return False
    if any(name != _key(gb) for name in changed):
        return False
    if gb.method == "weighted" and any(c.weight != 1.0 for c in gb.checks):
        return False
    return _kept(ga.doc) == _kept(gb.doc) and _answer_keys(a, b)


def _key(grader: Grader) -> str:
    return f"graders/{grader.path.name}"


def _kept(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in (*LOOKS, "scoring")}


def _answer_keys(a: Side, b: Side) -> bool:
    """The Tasks both sides define have the same answer keys (a Task B deleted is graded on
    the copy its Runs keep, as A graded it)."""
    keys_a = a.choice.grading if a.choice is not None else None
    keys_b = b.choice.grading if b.choice is not None else None
    if keys_a is None or keys_b is None:
        return False
    return all(keys_a[t] == keys_b[t] for t in keys_a.keys() & keys_b.keys())


def change_words(a: Side, b: Side, changed: list[str]) -> str:
    """What changed in the grader from A to B: `mean → min`, `pass_threshold 0.5 → 0.8`,
    the Checks added, removed or changed (by label), else the files that changed."""
    ga, gb = _grader(a), _grader(b)
    if ga is None or gb is None:
        return f"grader version {a.report.version} → {b.report.version}"
    parts = []
    if ga.method != gb.method:
        parts.append(f"{ga.method} → {gb.method}")
    if ga.pass_threshold != gb.pass_threshold:
        parts.append(f"pass_threshold {_num(ga.pass_threshold)} → {_num(gb.pass_threshold)}")
    parts += _checks_words(ga, gb)
    others = [name for name in changed if name != _key(gb)]
    if others or not parts:
        parts.append(", ".join(others or changed) + " changed" if (others or changed)
                     else f"grader version {a.report.version} → {b.report.version}")
    return "; ".join(parts)


def _checks_words(ga: Grader, gb: Grader) -> list[str]:
    """The Checks added, removed, renamed (the same Check under another `name`) and
    changed, by label."""
    a = {c.label: c.spec for c in ga.checks}
    b = {c.label: c.spec for c in gb.checks}
    added = [n for n in b if n not in a]
    removed = [n for n in a if n not in b]
    renamed = []
    for old in list(removed):
        new = next((n for n in added if _unnamed(a[old]) == _unnamed(b[n])), None)
        if new is not None:
            renamed.append(f"{old} → {new}")
            removed.remove(old)
            added.remove(new)
    changed = [n for n in b if n in a and a[n] != b[n]]
    return [f"Checks {what}: {', '.join(names)}" for what, names in
            (("added", added), ("removed", removed), ("renamed", renamed),
             ("changed", changed)) if names]


def _unnamed(spec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k != "name"}


def _num(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"
