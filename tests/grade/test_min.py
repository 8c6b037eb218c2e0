"""A Check's `min` is its pass mark, as in ai-eval-forge: the Check passes iff it produced a
score and the score reaches `min` (end to end through `smevals run -g` and `validate`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import smevals
from smevals.errors import SmevalsError
from tests.helpers import make_eval
from tests.helpers.checkers import version_changed

PROGRAM = """\
#!/bin/sh
printf '%s' "$SMEVALS_CHECK_OUT"
exit "${SMEVALS_CHECK_CODE:-0}"
"""


def grade(cli, tmp_path: Path, checks: str, code: int) -> dict[str, Any]:
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hi\n"},
                   configs={"default": "runner: ./say.sh\nmodel: m\n"},
                   files={"configs/say.sh": "#!/bin/sh\necho alpha beta\n",
                          "graders/prog": PROGRAM},
                   graders={"default": "checks:\n" + checks})
    res = cli("run", str(ev), "-g")
    assert res.code == code, res.both
    (path,) = (ev / "results" / "grades").rglob("grade.json")
    out: dict[str, Any] = json.loads(path.read_text())
    return out


CONTAINS = "  - checker: contains\n    value: [alpha, gamma]\n"


def test_the_issues_example_passes_as_in_ai_eval_forge(cli, tmp_path: Path) -> None:
    record = grade(cli, tmp_path / "with", CONTAINS + "    min: 0.5\n", 0)
    assert record["outcome"] == "pass"
    (check,) = record["checks"]
    assert (check["ok"], check["score"]) == (True, 0.5)
    assert check["notes"] == ("score 0.5 reaches the check's min 0.5; without min: "
                              "1/2 substrings found in output.txt; missing 'gamma'")
    (check,) = grade(cli, tmp_path / "without", CONTAINS, 1)["checks"]   # the checker decides
    assert (check["ok"], check["score"]) == (False, 0.5)


def test_a_score_below_min_fails(cli, tmp_path: Path) -> None:
    checks = "  - checker: contains\n    value: [alpha, gamma, delta]\n    min: 0.5\n"
    (check,) = grade(cli, tmp_path, checks, 1)["checks"]
    assert check["ok"] is False
    assert check["notes"] == ("score 0.333333 is below the check's min 0.5; "
                              "1/3 substrings found in output.txt; missing 'gamma', 'delta'")


def prog(out: str, code: int = 0, **extra: object) -> str:
    lines = ["  - checker: ./prog", f"    out: {json.dumps(out)}", f"    code: {code}"]
    return "\n".join(lines + [f"    {k}: {json.dumps(v)}" for k, v in extra.items()]) + "\n"


def test_min_decides_unless_the_check_failed_closed(cli, tmp_path: Path) -> None:
    table = [
        # a program's score decides, not its exit status
        (prog('{"score": 0.9}', code=1, min=0.5), True,
         "score 0.9 reaches the check's min 0.5; without min: checker exited with status 1"),
        (prog('{"score": 0.4}', min=0.5), False, "score 0.4 is below the check's min 0.5"),
        # fail closed whatever the min: no score, a broken checker, a promise not kept
        (prog("", min=0.5), False, "the check sets min 0.5 but produced no score"),
        (prog('{"score": 0.9, "metrics": {"m": "x"}}', min=0.5), False,
         "metric 'm' must be a finite number or a boolean, got 'x'"),
        (prog('{"score": 0.9}', min=0.5, creates="made.txt"), False,
         "did not create promised file(s): made.txt"),
        # min: 0 keeps a score without ever failing on it
        ("  - checker: json_valid\n    min: 0\n", True,
         "score 0 reaches the check's min 0; without min: output.txt is not valid JSON: "
         "Expecting value: line 1 column 1 (char 0)"),
    ]
    record = grade(cli, tmp_path, "".join(check for check, _ok, _notes in table), 1)
    assert [(c["ok"], c["notes"]) for c in record["checks"]] == [
        (ok, notes) for _check, ok, notes in table]


def validate(cli, tmp_path: Path, grader: str) -> tuple[str, list[str]]:
    make_eval(tmp_path / "ev", graders={"default": grader})
    res = cli("validate", "ev", cwd=tmp_path)      # paths are shown as given
    assert (res.code, res.out) == (2, ""), res.both
    return "ev/graders/default.yaml", res.err.splitlines()


def test_validate_names_bad_min_values(cli, tmp_path: Path) -> None:
    where, lines = validate(cli, tmp_path / "values", "checks:\n"
                            "  - checker: token_f1\n    value: a\n    min: 2\n"
                            "  - checker: token_f1\n    value: a\n    min: -0.1\n"
                            "  - checker: token_f1\n    value: a\n    min: '0.5'\n")
    assert lines == [f"{where}:4:10: checks[0].min: must be <= 1, got 2",
                     f"{where}:7:10: checks[1].min: must be >= 0, got -0.1",
                     f"{where}:10:10: checks[2].min: expected a number, got '0.5'",
                     "3 problems found"]
    # `min` beside the checker's own pass mark: two pass marks, one would be ignored
    where, lines = validate(
        cli, tmp_path / "marks", "checks:\n"
        "  - checker: token_f1\n    value: a\n    threshold: 0.2\n    min: 0.5\n"
        "  - checker: llm_score\n    rubric: r\n    min_score: 0.5\n    min: 0.5\n"
        "  - checker: localization_f1\n    reference: a.py\n    file_threshold: 1\n"
        "    min: 0.5\n")
    mark = "`min` is this Check's pass mark and replaces its `{}`: keep one of them"
    assert lines == [f"{where}:5:5: checks[0].min: " + mark.format("threshold"),
                     f"{where}:9:5: checks[1].min: " + mark.format("min_score"),
                     f"{where}:13:5: checks[2].min: " + mark.format("file_threshold"),
                     "3 problems found"]


def test_run_refuses_min_beside_threshold_before_any_run(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", graders={
        "default": "checks:\n  - checker: token_f1\n    value: a\n    threshold: 0.2\n"
                   "    min: 0.5\n"})
    res = cli("run", str(ev), "-g")
    assert res.code == 2
    assert "checks[0].min: `min` is this Check's pass mark and replaces its `threshold`" in res.err
    assert not (ev / "results").exists()


def test_the_library_uses_the_same_rule() -> None:
    for spec, ok in [
        ({"checker": "contains", "value": ["a", "c"], "min": 0.5}, True),
        ({"checker": "contains", "value": ["a", "c", "d"], "min": 0.5}, False),
        ({"checker": "contains", "value": "a", "min": 0.5}, False),   # no score to judge
    ]:
        assert smevals.check(spec, "a b")["ok"] is ok, spec


def test_the_library_refuses_min_beside_threshold() -> None:
    with pytest.raises(SmevalsError, match="replaces its `threshold`"):
        smevals.check({"checker": "token_f1", "value": "a", "threshold": 0, "min": 0.5}, "a")


def test_grades_made_when_min_only_tightened_are_of_another_version(cli, tmp_path: Path
                                                                   ) -> None:
    cases: list[tuple[list[dict[str, Any]], bool]] = [
        ([{"checker": "contains", "value": ["a", "b"], "min": 0.5}], True),
        ([{"checker": "contains", "value": ["a", "b"]}], False)]
    for checks, changed in cases:
        assert version_changed(cli, tmp_path / str(changed), checks) is changed
