"""Model judges: llm_judge, llm_score, llm_category, llm_answer_match, llm_pairwise.

Each builds its prompt from a template (a shipped default, or the Check's `template` /
`template_file` and `system`), asks the judge of its judge block (smevals.judges) and reads
the verdict. A judge that cannot be reached, or answers with something that is not a
verdict, makes the Check an `error` (not a fail); a bad option or a judge of the Run's
model family fails it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smevals.checkers.base import (
    ANY,
    NONEMPTY,
    UNIT,
    Checker,
    CheckInput,
    CheckResult,
    checker,
    fail,
    str_list,
)
from smevals.checkers.inputs import input_text
from smevals.judges import images as judge_images
from smevals.judges.settings import JUDGE_SCHEMA

CHECKERS: dict[str, Checker] = {}

_COMMON = {
    "judge": JUDGE_SCHEMA,
    "template": {"type": "string", "pattern": r"\S", "x-expect": "a non-blank prompt template"},
    "template_file": {"type": "string", "minLength": 1,
                      "x-expect": "a template file, relative to the grader file"},
    "system": {"type": "string", "pattern": r"\S", "x-expect": "a non-blank system prompt"},
    "images": judge_images.OPTION,
}
_SCALE = {"type": "array", "minItems": 2, "maxItems": 2,
          "items": {"type": "number", "x-expect": "a number"},
          "x-expect": "[lowest, highest], two numbers"}
_RUBRIC = {"type": "string", "pattern": r"\S", "x-expect": "a non-blank rubric"}
DEFAULT_CRITERIA = "Which response does the task better: more correct, complete and helpful?"


def _template_problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    found = judge_images.problems(opts)
    if "template" in opts and "template_file" in opts:
        found.append(("template_file", "give only one of 'template', 'template_file'"))
    return found


def _score_problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    scale = opts.get("scale")
    if isinstance(scale, list) and len(scale) == 2 and all(
            isinstance(x, int | float) for x in scale) and not scale[0] < scale[1]:
        return [("scale", f"the lowest score must be below the highest, got {scale}")]
    return _template_problems(opts)


def _category_problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    cats = opts.get("categories")
    passing = opts.get("passing")
    out = _template_problems(opts)
    if not isinstance(cats, list) or not all(isinstance(c, str) for c in cats):
        return out
    low = [c.strip().lower() for c in cats]
    if len(cats) < 2:
        out.append(("categories", "list at least two categories"))
    if len(set(low)) != len(low):
        out.append(("categories", "categories must differ (ignoring case)"))
    if isinstance(passing, list):
        unknown = [p for p in passing if isinstance(p, str) and p.strip().lower() not in low]
        if unknown:
            out.append(("passing", f"not among the categories: {', '.join(unknown)}"))
    return out


def _pairwise_problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    out = _template_problems(opts)
    if "reference_config" in opts and "reference_model" not in opts:
        out.append(("reference_config", "needs 'reference_model'"))
    return out


@checker(
    CHECKERS, "llm_judge",
    "Model judge: a rubric -> pass/fail ({\"reason\", \"pass\"}).",
    properties={**_COMMON, "rubric": _RUBRIC},
    required=("rubric",), task_keys={"rubric": ("rubric",)},
    problems=_template_problems,
)
def llm_judge(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    (verdict,), usage = _ask(opts, inp, "judge", {"rubric": opts["rubric"]})
    return _result(verdict["pass"], 1.0 if verdict["pass"] else 0.0, verdict, usage)


@checker(
    CHECKERS, "llm_score",
    "Model judge: a rubric and a scale -> a score in [0, 1], passing at `threshold`.",
    properties={**_COMMON, "rubric": _RUBRIC, "scale": _SCALE, "threshold": UNIT},
    required=("rubric", "threshold"), task_keys={"rubric": ("rubric",)},
    aliases={"min_score": "threshold"},
    problems=_score_problems,
)
def llm_score(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    low, high = opts.get("scale", [1, 5])
    values = {"rubric": opts["rubric"], "scale_min": f"{low:g}", "scale_max": f"{high:g}"}
    (verdict,), usage = _ask(opts, inp, "score", values, scale=(low, high))
    score = (verdict["score"] - low) / (high - low)
    ok = score >= opts["threshold"]
    return _result(ok, score, verdict, usage)


@checker(
    CHECKERS, "llm_category",
    "Model judge: one of the listed categories; passes when it is in `passing`.",
    properties={**_COMMON, "rubric": _RUBRIC, "categories": str_list(),
                "passing": str_list()},
    required=("categories", "passing"),
    aliases={"passing_categories": "passing", "prompt": "rubric"},
    problems=_category_problems,
)
def llm_category(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    cats = [c.strip() for c in opts["categories"]]
    values = {"rubric": opts.get("rubric", ""), "categories": ", ".join(cats)}
    (verdict,), usage = _ask(opts, inp, "category", values, categories=cats)
    passing = {p.strip().lower() for p in opts["passing"]}
    ok = verdict["category"].lower() in passing
    result = _result(ok, 1.0 if ok else 0.0, verdict, usage)
    result.tags = [verdict["category"]]
    return result


@checker(
    CHECKERS, "llm_answer_match",
    "Model judge: does the output mean the same as the expected answer?",
    properties={**_COMMON, "expected": {**ANY, "not": {"type": "null"},
                                        "x-expect": "the expected answer"}},
    required=("expected",), task_keys={"expected": ("expected",)},
    problems=_template_problems,
)
def llm_answer_match(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    (verdict,), usage = _ask(opts, inp, "match", {"expected": opts["expected"]})
    return _result(verdict["match"], 1.0 if verdict["match"] else 0.0, verdict, usage)


@checker(
    CHECKERS, "llm_pairwise",
    "Model judge: the output against a reference, asked in both orders (a flip is a tie).",
    properties={**_COMMON, "rubric": _RUBRIC, "reference": {**ANY, "not": {"type": "null"},
                                                            "x-expect": "the reference"},
                "reference_model": NONEMPTY, "reference_config": NONEMPTY,
                "threshold": UNIT},
    required=(("reference", "reference_model"),),
    aliases={"criteria": "rubric", "baseline": "reference"},
    problems=_pairwise_problems,
)
def llm_pairwise(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    reference = _reference(opts, inp)
    verdicts, usage = _ask(opts, inp, "pairwise",
                           {"rubric": opts.get("rubric", DEFAULT_CRITERIA)},
                           reference=reference)
    first, second = verdicts      # candidate as A, then candidate as B
    points = {("AB", "A"): 1.0, ("AB", "B"): 0.0, ("BA", "B"): 1.0, ("BA", "A"): 0.0}
    each = [points.get(("AB", first["winner"]), 0.5), points.get(("BA", second["winner"]), 0.5)]
    score = sum(each) / 2
    ok = score >= opts.get("threshold", 0.5)
    outcome = {1.0: "win", 0.0: "loss"}.get(score, "tie")
    flipped = sorted(each) == [0.0, 1.0]
    result = CheckResult(ok=ok, score=score,
                         notes="" if ok else f"the reference is preferred ({outcome})",
                         details={"outcome": outcome, "flipped": flipped,
                                  "reasons": [first["reason"], second["reason"]],
                                  "judge": usage})
    result.tags = [f"pairwise_{outcome}"]
    return result


def _reference(opts: dict[str, Any], inp: CheckInput) -> str:
    from smevals.judges.templates import as_text

    if "reference" in opts:
        return as_text(opts["reference"])
    ctx = inp.judge
    model = opts["reference_model"]
    found = None if ctx is None or ctx.find_output is None else \
        ctx.find_output(model, opts.get("reference_config"))
    if found is None:
        from smevals.checkers.base import CheckError

        where = f" (config {opts['reference_config']})" if "reference_config" in opts else ""
        raise CheckError(f"no successful Run of model {model!r}{where} for this Task to "
                         "compare with (run it, then grade again)")
    return found


def _result(ok: bool, score: float, verdict: dict[str, Any], usage: dict[str, Any]
            ) -> CheckResult:
    reason = verdict.get("reason", "")
    return CheckResult(ok=ok, score=score, notes="" if ok else f"judge: {reason}"[:500],
                       details={"reason": reason, "judge": usage})


def _ask(opts: dict[str, Any], inp: CheckInput, kind: str, values: dict[str, Any],
         categories: list[str] | None = None, scale: tuple[float, float] = (0, 1),
         reference: str | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from smevals.judges import asking

    _label, output = input_text(opts, inp)
    images = judge_images.load(opts, inp)
    return asking.ask_check(opts, inp, kind, values, output, categories, scale, reference,
                            _template_text(opts, inp), images)


def _template_text(opts: dict[str, Any], inp: CheckInput) -> str | None:
    if "template" in opts:
        return str(opts["template"])
    if "template_file" not in opts:
        return None
    base = inp.judge.grader_dir if inp.judge is not None else None
    path = Path(opts["template_file"])
    if not path.is_absolute() and base is not None:
        path = Path(base) / path
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        fail(f"option 'template_file': cannot read {opts['template_file']}: {error}")
