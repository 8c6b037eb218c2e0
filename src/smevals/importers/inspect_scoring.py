"""An Inspect scorer (and the multiple_choice() solver) given as Python call text, e.g.
`match(location="begin", numeric=True)`, read without running anything: the smevals Check
that decides as inspect_ai 0.3.285's scorer does, or why it cannot.

includes(ignore_case) → `contains` with `any: true` (and `casefold: true`); match(location,
ignore_case, numeric) → `inspect_match`; exact() → `inspect_exact`; choice() →
`inspect_choice` (the prompt built as multiple_choice() builds it, in smevals' words);
model_graded_fact() and model_graded_qa() → a judge Check (its verdict is the judge's).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from smevals.importers.pf_source import ImportInputError

JUDGED = ("a judge Check: its verdict is the judge model's, with smevals' judge prompt, not "
          "Inspect's grading template")
KNOWN = "includes(), match(), exact(), choice(), model_graded_fact(), model_graded_qa()"


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


def parse_call(text: str, what: str) -> Call:
    """`name(literal, key=literal)` read by Python's parser (never evaluated)."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise ImportInputError(f"{what}: {text!r} is not a call such as match(numeric=True)"
                               ) from None
    if isinstance(node, ast.Name):
        return Call(node.id)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        raise ImportInputError(f"{what}: {text!r} is not a call such as match(numeric=True)")
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except ValueError:
        raise ImportInputError(f"{what}: {text!r}: only literal arguments (strings, numbers, "
                               "True/False) can be read") from None
    return Call(node.func.id, args, kwargs)


def _options(call: Call, names: tuple[str, ...], what: str) -> dict[str, Any]:
    if len(call.args) > len(names):
        raise ImportInputError(f"{what}: {call.name}() takes at most {len(names)} positional "
                               "argument(s)")
    given = dict(zip(names, call.args, strict=False)) | call.kwargs
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise ImportInputError(f"{what}: {call.name}() has no argument {unknown[0]!r} "
                               f"(it takes {', '.join(names) or 'none'})")
    return given


@dataclass
class Scoring:
    check: dict[str, Any]
    exact: bool = True
    why: str = ""
    multiple_choice: bool = False
    multiple_correct: bool = False
    cot: bool = False


def scoring(text: str) -> Scoring:
    """The Check (and how faithfully it keeps the scorer) of `--scorer TEXT`."""
    what = "--scorer"
    call = parse_call(text, what)
    base: dict[str, Any] = {"name": call.name, "if_task_has": "expected"}
    if call.name == "includes":
        opts = _options(call, ("ignore_case",), what)
        check = {**base, "checker": "contains", "value": {"task": "expected"}, "any": True}
        check.update({"casefold": True} if opts.get("ignore_case", True) else
                     {"case_sensitive": True})
        return Scoring(check)
    if call.name == "match":
        opts = _options(call, ("location", "ignore_case", "numeric"), what)
        if opts.get("location", "end") not in ("begin", "end", "any", "exact"):
            raise ImportInputError(f"{what}: match() location must be begin, end, any or exact")
        return Scoring({**base, "checker": "inspect_match", "target": {"task": "expected"},
                        **opts})
    if call.name == "exact":
        _options(call, (), what)
        return Scoring({**base, "checker": "inspect_exact", "target": {"task": "expected"}})
    if call.name == "choice":
        _options(call, (), what)
        return Scoring({**base, "checker": "inspect_choice", "target": {"task": "expected"},
                        "choices": {"task": "choices"}}, multiple_choice=True)
    if call.name in ("model_graded_fact", "model_graded_qa"):
        check = {**base, "checker": "llm_answer_match" if call.name == "model_graded_fact"
                 else "llm_judge"}
        if call.name == "model_graded_fact":
            check["expected"] = {"task": "expected"}
        else:
            check["rubric"] = "The answer meets this criterion: {{expected}}"
        return Scoring(check, exact=False, why=JUDGED)
    raise ImportInputError(f"{what}: {call.name}() has no counterpart; smevals reads {KNOWN}")


def multiple_choice(text: str | None, scored: Scoring) -> Scoring:
    """`--solver multiple_choice(multiple_correct=True)` (choice() implies it)."""
    if text is None:
        return scored
    call = parse_call(text, "--solver")
    if call.name == "generate":
        if scored.multiple_choice:
            raise ImportInputError("--solver: choice() reads what multiple_choice() asks for; "
                                   "give --solver 'multiple_choice()'")
        return scored
    if call.name != "multiple_choice":
        raise ImportInputError(f"--solver: {call.name}() has no counterpart; smevals reads "
                               "generate() and multiple_choice()")
    opts = _options(call, ("template", "cot", "multiple_correct", "max_tokens"), "--solver")
    if "template" in opts:
        raise ImportInputError("--solver: a multiple_choice() template is not read; the "
                               "prompt is smevals' wording of Inspect's")
    scored.multiple_choice = True
    scored.multiple_correct = bool(opts.get("multiple_correct", False))
    if scored.check.get("checker") == "inspect_choice" and scored.multiple_correct:
        scored.check["multiple_correct"] = True
    scored.cot = bool(opts.get("cot", False))
    return scored


def letter(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else str(index - 25)


def choice_prompt(question: str, choices: list[Any], multiple: bool, cot: bool) -> str:
    """The question as multiple_choice() asks it: an instruction naming the answer form,
    the question, and the choices lettered `A) ...` (smevals' wording of the instruction)."""
    letters = ",".join(letter(i) for i in range(len(choices)))
    what = ("one or more of the letters" if multiple else "one of the letters")
    where = ("End your reply with a last line" if cot else "Reply with just one line")
    think = " Think it through step by step first." if cot else ""
    head = (f"Answer this multiple-choice question.{think} {where} of the form "
            f"'ANSWER: $LETTER{'S' if multiple else ''}', where $LETTER{'S' if multiple else ''} "
            f"is {what} {letters}.")
    options = "\n".join(f"{letter(i)}) {c}" for i, c in enumerate(choices))
    return f"{head}\n\n{question}\n\n{options}"
