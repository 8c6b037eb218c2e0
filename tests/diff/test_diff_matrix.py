"""The diff matrix: for each kind of change a repository sees, `diff A B`, `diff B A` and
`diff A` (B checked out in the working tree), in Markdown and JSON, through the CLI.

One git repository holds a Suite of two Evals (`e0`, `e1`) graded at a base commit; each
change kind is a branch made from it as a user would make it (edit, then `run -g` or
`grade`, then commit). The grader versions expected on each side are the ones `grade`
printed when it graded at that state, never worked out by the code under test. The same
table is the source of the docs' "what each kind of change looks like" (docs/diff.md).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, run_cli, write

RUNNER = """#!/bin/sh
printf '%s: %s\\n' "$SMEVALS_MODEL" "$SMEVALS_PROMPT"
"""
OUTER = "#!/bin/sh\nexit 0\n"                  # checkers/outer, named as ../checkers/outer
BESIDE = "#!/bin/sh\nexit 0\n"                 # graders/beside, named as ./beside
CHECK_PY = """#!/usr/bin/env python3
import os
import sys

from rules import FAILING

sys.exit(os.environ["SMEVALS_TASK"] in FAILING)
"""                                             # graders/check.py, importing graders/rules.py
RULES = "FAILING = ()\n"
GRADER = """checks:
  - checker: contains
    value: {task: expected}
  - checker: ../checkers/outer
  - checker: ./beside
  - checker: ./check.py
"""
TASKS = ("alpha", "beta", "gamma", "delta")


def task_yaml(name: str, prompt: str | None = None) -> str:
    return f"prompt: {prompt or 'say ' + name}\ngrading:\n  expected: say {name}\n"


def smevals(repo: Path, *args: str) -> tuple[int, str, str]:
    res = run_cli(*args, cwd=repo, env={"SOURCE_DATE_EPOCH": "1767322800",
                                        "SMEVALS_CACHE_DIR": str(repo.parent / "_cache")})
    return res.code, res.out, res.err


def graded_versions(repo: Path, codes: tuple[int, ...] = (0,)) -> dict[str, str]:
    """The grader version of each Eval, as `smevals grade` says it grades with."""
    code, out, err = smevals(repo, "grade", "suite")
    assert code in codes, err
    return dict(re.findall(r"^(\w+): grading \d+ Run\(s\) with grader version (\w+)$", out,
                           re.M))


def matrix_eval(root: Path, tasks: tuple[str, ...]) -> None:
    write(root / "eval.yaml", f"name: {root.name}\n")
    for name in tasks:
        write(root / "tasks" / f"{name}.yaml", task_yaml(name))
    write(root / "configs" / "default.yaml", "runner: ../bin/run.sh\nmodel: m1\n")
    write(root / "bin" / "run.sh", RUNNER, executable=True)
    write(root / "checkers" / "outer", OUTER, executable=True)
    write(root / "graders" / "beside", BESIDE, executable=True)
    write(root / "graders" / "check.py", CHECK_PY, executable=True)
    write(root / "graders" / "rules.py", RULES)
    write(root / "graders" / "default.yaml", GRADER)


@dataclass
class Kind:
    """A change, what to do after it, and what `diff BASE KIND` must say about e1 (or about
    the Eval named by `eval`)."""

    change: object                              # callable(repo) making the edit
    then: tuple[tuple[str, ...], ...]           # smevals commands after the edit
    version_changed: bool = False
    changed_files: tuple[str, ...] = ()         # what diff names as the version's cause
    flips: tuple[tuple[str, str], ...] = ()     # (task, direction) of A -> B
    stale_b: dict[str, int] = field(default_factory=dict)
    added: dict[str, list[str]] = field(default_factory=dict)    # tasks / models / configs
    removed: dict[str, list[str]] = field(default_factory=dict)
    added_runs: int = 0
    removed_runs: int = 0
    eval: str = "e1"
    status: str = "both"
    ungraded_b: int = 0                         # Runs of B left out: no current Grade
    errored_b: int = 0                          # Runs of B left out: their Grade is an error
    codes: tuple[int, ...] = (0, 1)             # exit codes `then` may give


def _edit(rel: str, old: str, new: str):
    def change(repo: Path) -> None:
        path = repo / "suite" / rel
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))
    return change


def _remove(rel: str):
    def change(repo: Path) -> None:
        git(repo, "rm", "-rq", f"suite/{rel}")
    return change


def _new_eval(repo: Path) -> None:
    matrix_eval(repo / "suite" / "e2", ("one", "two"))


GRADE = (("grade", "suite"),)
RUN = (("run", "suite", "-n", "1", "-g"),)
FAILS_GAMMA = '#!/bin/sh\n[ "$SMEVALS_TASK" = gamma ] && exit 1\nexit 0\n'
FAILS_DELTA = '#!/bin/sh\n[ "$SMEVALS_TASK" = delta ] && exit 1\nexit 0\n'
NO_VERDICT = ("  - checker: ./beside\n  - {checker: custom_webhook, url: 'http://127.0.0.1:9/',"
              " allow_private: true, timeout: 2}\n")     # nothing listens: no verdict

KINDS: dict[str, Kind] = {
    "answer_key": Kind(_edit("e1/tasks/beta.yaml", "expected: say beta", "expected: nope"),
                       GRADE, flips=(("beta", "pass->fail"),)),
    "checker_through_dotdot": Kind(_edit("e1/checkers/outer", OUTER, FAILS_GAMMA), GRADE,
                                   version_changed=True, flips=(("gamma", "pass->fail"),),
                                   changed_files=("checkers/outer",)),
    "checker_beside_grader": Kind(_edit("e1/graders/beside", BESIDE, FAILS_DELTA), GRADE,
                                  version_changed=True, flips=(("delta", "pass->fail"),),
                                  changed_files=("graders/beside",)),
    "imported_module": Kind(_edit("e1/graders/rules.py", RULES, 'FAILING = ("beta",)\n'),
                            GRADE, version_changed=True, flips=(("beta", "pass->fail"),),
                            changed_files=("graders/rules.py",)),
    "runner_program": Kind(_edit("e1/bin/run.sh", "\\n'", " (v2)\\n'"), RUN,
                           stale_b={"runner changed": 4}, added_runs=4),
    "grader_yaml": Kind(_edit("e1/graders/default.yaml", "  - checker: ./beside\n",
                              "  - checker: ./beside\n  - checker: not_regex\n"
                              "    pattern: alpha\n"), GRADE,
                        version_changed=True, flips=(("alpha", "pass->fail"),),
                        changed_files=("graders/default.yaml",)),
    "config_setting": Kind(_edit("e1/configs/default.yaml", "model: m1\n",
                                 "model: m1\ntemperature: 0.5\n"), RUN,
                           stale_b={"config changed": 4}, added_runs=4),
    "task_edited": Kind(_edit("e1/tasks/alpha.yaml", "prompt: say alpha", "prompt: say alpha!"),
                        RUN, stale_b={"task edited": 1}, added_runs=1),
    "new_model": Kind(lambda repo: None, (("run", "suite/e1", "-m", "m2", "-n", "1", "-g"),),
                      added={"models": ["m2"]}, added_runs=4),
    "deleted_task": Kind(_remove("e1/tasks/delta.yaml"), (),
                         stale_b={"task deleted": 1}, removed={"tasks": ["delta"]}),
    "new_eval": Kind(_new_eval, RUN, eval="e2", status="added",
                     added={"tasks": ["one", "two"], "models": ["m1"], "configs": ["default"]},
                     added_runs=2),
    "answer_key_ungraded": Kind(_edit("e1/tasks/beta.yaml", "expected: say beta",
                                      "expected: nope"), (), ungraded_b=1),
    "checker_ungraded": Kind(_edit("e1/checkers/outer", OUTER, FAILS_GAMMA), (),
                             version_changed=True, ungraded_b=4,
                             changed_files=("checkers/outer",)),
    "errored": Kind(_edit("e1/graders/default.yaml", "  - checker: ./beside\n", NO_VERDICT),
                    GRADE, version_changed=True, errored_b=4, codes=(2,),
                    changed_files=("graders/default.yaml",)),
    "removed_eval": Kind(_remove("e0"), (), eval="e0", status="removed",
                         removed={"tasks": ["zeta"], "models": ["m1"], "configs": ["default"]},
                         removed_runs=1),
}


@dataclass
class History:
    repo: Path
    versions: dict[str, dict[str, str]]     # branch -> eval -> grader version graded there


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    repo = tmp_path_factory.mktemp("matrix") / "repo"
    matrix_eval(repo / "suite" / "e0", ("zeta",))
    matrix_eval(repo / "suite" / "e1", TASKS)
    git(repo, "init", "-q", "-b", "base")
    code, out, err = smevals(repo, "run", "suite", "-g")
    assert code == 0, err
    base = graded_versions(repo)
    assert sorted(base) == ["e0", "e1"]
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    versions = {"base": base}
    for name, kind in KINDS.items():
        git(repo, "checkout", "-q", "-b", name, "base")
        kind.change(repo)                                     # type: ignore[operator]
        for command in kind.then:
            code, out, err = smevals(repo, *command)
            assert code in kind.codes, err
        if kind.ungraded_b:                     # committed ungraded; the version comes after
            git(repo, "add", "-A")
            git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", name)
            versions[name] = graded_versions(repo, (0, 1))
            git(repo, "clean", "-fdq")
            continue
        versions[name] = graded_versions(repo, kind.codes)
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", name)
    git(repo, "checkout", "-q", "base")
    return History(repo, versions)


def expected(history: History, name: str, forward: bool) -> dict[str, Any]:
    """What diff must say about the changed Eval, A -> B (forward: A is base)."""
    kind = KINDS[name]
    v_base = history.versions["base"].get(kind.eval, "-")
    v_kind = history.versions[name].get(kind.eval, "-")
    if kind.status == "added":
        v_base = "-"
    if kind.status == "removed":
        v_kind = "-"
    flips = [(task, d) for task, d in kind.flips]
    stale: tuple[dict[str, int], dict[str, int]] = ({}, dict(kind.stale_b))
    missing = ((0, 0), (kind.ungraded_b, kind.errored_b))
    added, removed = dict(kind.added), dict(kind.removed)
    status = kind.status
    if not forward:
        v_base, v_kind = v_kind, v_base
        flips = [(t, "fail->pass" if d == "pass->fail" else "pass->fail") for t, d in flips]
        stale = (stale[1], stale[0])
        missing = (missing[1], missing[0])
        added, removed = removed, added
        status = {"added": "removed", "removed": "added"}.get(status, status)
    return {"version_a": v_base, "version_b": v_kind, "flips": flips, "stale": stale,
            "changed_files": list(kind.changed_files),
            "added": added, "removed": removed, "status": status,
            "added_runs": kind.added_runs if forward else kind.removed_runs,
            "removed_runs": kind.removed_runs if forward else kind.added_runs,
            "missing": missing, "incomplete": forward and any(missing[1]),
            "exit": 1 if forward and any(missing[1]) or any(d == "pass->fail"
                                                           for _t, d in flips) else 0}


def check_json(doc: dict[str, Any], want: dict[str, Any], eval_name: str) -> None:
    entries = {e["eval"]: e for e in doc["evals"]}
    ev = entries[eval_name]
    assert (ev["version_a"], ev["version_b"]) == (want["version_a"], want["version_b"])
    assert ev["version_changed"] == (want["version_a"] != want["version_b"])
    assert ev["version_changed_files"] == want["changed_files"]
    assert ev["status"] == want["status"]
    assert sorted((f["task"], f["direction"]) for f in ev["flips"]) == want["flips"]
    stale_a, stale_b = want["stale"]
    for side, reasons in (("a", stale_a), ("b", stale_b)):
        assert ev["stale"][side] == {"left_out": sum(reasons.values()), "reasons": {
            why.replace(" ", "_"): n for why, n in reasons.items()}}
    for what in ("tasks", "models", "configs"):
        assert ev["added"][what] == want["added"].get(what, [])
        assert ev["removed"][what] == want["removed"].get(what, [])
    assert (len(ev["added"]["runs"]), len(ev["removed"]["runs"])) == (
        want["added_runs"], want["removed_runs"])
    missing: tuple[tuple[int, int], tuple[int, int]] = want["missing"]
    for side, (ungraded, errored) in zip("ab", missing, strict=True):
        assert (ev["left_out"][side]["ungraded"], ev["left_out"][side]["errored"]) == (
            ungraded, errored)
        assert sum(g["left_out"][side]["ungraded"] + g["left_out"][side]["errored"]
                   for g in ev["groups"]) == ungraded + errored
    others = [e for name, e in entries.items() if name != eval_name]
    assert all(not e["flips"] and e["status"] == "both" and not e["stale"]["a"]["left_out"]
               and not e["stale"]["b"]["left_out"] and e["left_out"]["b"]["ungraded"] == 0
               for e in others)
    assert doc["regression"]["tripped"] == bool(want["exit"])
    assert bool(doc["regression"]["incomplete"]) == want["incomplete"]


def _listing(items: list[str]) -> str:
    return f"{len(items)} ({', '.join(items)})" if items else "none"


def _stale(reasons: dict[str, int]) -> str:
    total = sum(reasons.values())
    return "none" if not total else f"{total} (" + ", ".join(
        f"{why}: {n}" for why, n in reasons.items()) + ")"


def check_markdown(text: str, want: dict[str, Any], eval_name: str) -> None:
    section = text.split(f"\n## {eval_name}\n", 1)[1].split("\n## ", 1)[0]
    changed = "changed" if want["version_a"] != want["version_b"] else "unchanged"
    if want["changed_files"]:
        changed += ": " + ", ".join(want["changed_files"])
    stale_a, stale_b = want["stale"]
    flips: list[tuple[str, str]] = want["flips"]
    lines = [f"- Grader: default, version {want['version_a']} in A, {want['version_b']} in B "
             f"({changed})",
             f"- Stale Runs left out: A {_stale(stale_a)}; B {_stale(stale_b)}",
             f"- Flips: {sum(d == 'pass->fail' for _t, d in flips)} pass -> fail, "
             f"{sum(d == 'fail->pass' for _t, d in flips)} fail -> pass"]
    for word, key in (("Added", "added"), ("Removed", "removed")):
        for what in ("tasks", "models", "configs"):
            items = want[key].get(what, [])
            lines.append(f"- {word} {what}: {_listing(items)}")
    if want["status"] != "both":
        where = "B only" if want["status"] == "added" else "A only"
        lines.append(f"- Eval {want['status']}: it is in {where}")
    (ungraded_a, errored_a), (ungraded_b, errored_b) = want["missing"]
    if ungraded_a or ungraded_b:
        lines.append("- Ungraded Runs left out (no Grade of the side's grader version and "
                     f"answer keys): A {ungraded_a}; B {ungraded_b}")
    if errored_a or errored_b:
        lines.append("- Errored Grades left out (a judge or webhook gave no verdict; neither "
                     f"pass nor fail): A {errored_a}; B {errored_b}")
    if ungraded_a or ungraded_b or errored_a or errored_b:
        lines.append(f"| default | m1 | {ungraded_a} | {ungraded_b} | {errored_a} | {errored_b} "
                     "| 0 | 0 |")
    for line in lines:
        assert f"\n{line}" in "\n" + section, (line, section)


DIRECTIONS = ("A B", "B A", "A worktree")


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("name", list(KINDS))
def test_matrix(history: History, name: str, direction: str) -> None:
    repo = history.repo
    forward = direction != "B A"
    if direction == "A worktree":
        git(repo, "checkout", "-q", name)
        revs: tuple[str, ...] = ("base",)
    else:
        git(repo, "checkout", "-q", "base")
        revs = ("base", name) if forward else (name, "base")
    try:
        want = expected(history, name, forward)
        code, out, err = smevals(repo, "diff", *revs, "suite", "--format", "json",
                                 "--fail-on-regression=flip")
        assert code == want["exit"], err
        check_json(json.loads(out), want, KINDS[name].eval)
        code, text, err = smevals(repo, "diff", *revs, "suite", "--fail-on-regression=flip")
        assert code == want["exit"], err
        check_markdown(text, want, KINDS[name].eval)
        assert ("incomplete evidence: " in err) == want["incomplete"]
        if want["incomplete"]:
            code, _text, err = smevals(repo, "diff", *revs, "suite", "--fail-on-regression=flip",
                                       "--allow-incomplete")
            assert code == 0, err
    finally:
        git(repo, "checkout", "-q", "base")


@pytest.mark.parametrize("name", ["checker_through_dotdot", "imported_module", "runner_program",
                                  "deleted_task"])
def test_report_at_a_revision_agrees_with_diff(history: History, name: str) -> None:
    repo = history.repo
    code, out, _err = smevals(repo, "diff", "base", name, "suite", "--format", "json")
    entry = {e["eval"]: e for e in json.loads(out)["evals"]}["e1"]
    for rev, side in (("base", "a"), (name, "b")):
        code, out, err = smevals(repo, "report", "suite/e1", "--rev", rev, "--format", "json")
        assert code == 0, err
        (report,) = json.loads(out)["evals"]
        assert report["grader_version"] == entry[f"version_{side}"]
        assert report["summary"]["stale_excluded"] == entry["stale"][side]["left_out"]
        assert report["summary"]["stale_reasons"] == entry["stale"][side]["reasons"]
        groups = [g[side] for g in entry["groups"] if g[side]]
        assert report["summary"]["graded"] == sum(g["runs"] for g in groups)
        assert report["summary"]["passed"] == sum(g["passed"] for g in groups)


@pytest.mark.parametrize("name", ["checker_through_dotdot", "new_eval"])
def test_build_diff_agrees_with_diff(history: History, name: str, tmp_path: Path) -> None:
    from smevals.site import jsdata

    repo = history.repo
    git(repo, "checkout", "-q", name)
    try:
        code, out, _err = smevals(repo, "diff", "base", name, "suite", "--format", "json")
        entries = {e["eval"]: e for e in json.loads(out)["evals"]}
        code, _out, err = smevals(repo, "build", "suite", "-o", str(tmp_path / "site"),
                                  "--diff", "base", name)
        assert code == 0, err
        for ev, entry in entries.items():
            if entry["status"] == "removed":
                continue
            _key, page = jsdata.decode((tmp_path / "site" / "data" / ev / "diff.js")
                                       .read_bytes())
            assert page["diff"] == entry
    finally:
        git(repo, "checkout", "-q", "base")


DESCRIBED = {
    "answer_key": "An answer key under a Task's `grading:`, then `smevals grade`",
    "checker_through_dotdot": "A checker program named as `../checkers/x`, then `smevals grade`",
    "checker_beside_grader": "A checker program beside the grader (`./x`), then `smevals grade`",
    "imported_module": "A module a checker program imports (`graders/rules.py`), then "
                       "`smevals grade`",
    "runner_program": "The runner program (`../bin/run.sh`), then `smevals run -n 1 -g`",
    "grader_yaml": "The grader YAML (a Check added), then `smevals grade`",
    "config_setting": "A config setting (`temperature: 0.5`), then `smevals run -n 1 -g`",
    "task_edited": "A Task's prompt, then `smevals run -n 1 -g`",
    "new_model": "A new model (`smevals run -m m2 -n 1 -g`)",
    "deleted_task": "A Task file deleted (nothing re-run)",
    "new_eval": "A new Eval in the Suite, run with `smevals run -n 1 -g`",
    "removed_eval": "An Eval removed from the Suite (its folder deleted)",
    "answer_key_ungraded": "An answer key, not graded",
    "checker_ungraded": "A checker program, not graded",
    "errored": "A Check that gets no verdict (a webhook that does not answer), then "
               "`smevals grade`",
}


def docs_table() -> str:
    """The table of docs/diff.md, made from KINDS: what `diff A B` says about the changed
    Eval when B is A plus the change (4 Tasks, one model, one Run each)."""
    lines = ["| change in B | grader version | flips A → B | stale Runs left out in B "
             "| added (+) and removed (−) | ungraded or errored in B "
             "| `--fail-on-regression=flip` |",
             "|---|---|---|---|---|---|---|"]
    for name, kind in KINDS.items():
        version = "changed" if kind.version_changed else "unchanged"
        if kind.changed_files:
            version += f" ({', '.join(f'`{f}`' for f in kind.changed_files)})"
        if kind.status != "both":
            version = f"Eval {kind.status}"
        flips = ", ".join(f"{task} {d.replace('->', ' → ')}" for task, d in kind.flips)
        stale = ", ".join(f"{n} ({why})" for why, n in kind.stale_b.items())
        moved = [f"+{n} Run{'s' * (n > 1)}" for n in [kind.added_runs] if n]
        moved += [f"−{n} Run{'s' * (n > 1)}" for n in [kind.removed_runs] if n]
        for sign, change in (("+", kind.added), ("−", kind.removed)):
            moved += [f"{sign}{what[:-1]} {', '.join(items)}" for what, items in change.items()]
        missing = [f"{n} {what}" for n, what in ((kind.ungraded_b, "ungraded"),
                                                 (kind.errored_b, "errored")) if n]
        gate = ("exit 1: incomplete evidence" if missing else
                "exit 1: regression" if any(d == "pass->fail" for _t, d in kind.flips)
                else "exit 0")
        lines.append(f"| {DESCRIBED[name]} | {version} | {flips or 'none'} | {stale or 'none'} "
                     f"| {'; '.join(moved) or 'none'} | {', '.join(missing) or 'none'} "
                     f"| {gate} |")
    return "\n".join(lines) + "\n"


def test_the_docs_list_what_each_change_looks_like() -> None:
    page = Path(__file__).parents[2] / "docs" / "diff.md"
    assert set(DESCRIBED) == set(KINDS)
    assert docs_table() in page.read_text(encoding="utf-8"), (
        "docs/diff.md is out of date; its table must be:\n" + docs_table())
