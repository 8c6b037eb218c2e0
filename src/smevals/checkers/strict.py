"""equals: the output is exactly the value, as promptfoo's `equals` assertion decides.

A string value is compared with the whole output, character for character: no trimming, no
case or white-space folding (`exact` folds both). A number or a boolean is compared as the
text JavaScript writes for it (`5`, `0.5`, `1e+21`, `true`). A mapping, a list or null is
compared with the output parsed as JSON (strict JSON, as JavaScript's JSON.parse reads it):
equal when they are the same JSON value, numbers by value (`1` and `1.0` are one number,
`0` and `-0` are not), keys in any order, lists in order, types never mixed (`true` is not
`1`). An output that is not JSON fails.
"""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

from smevals.checkers.base import BOOL, Checker, CheckInput, CheckResult, binary, checker
from smevals.checkers.inputs import input_text

CHECKERS: dict[str, Checker] = {}


def js_text(value: object) -> str:
    """`String(value)` in JavaScript, for a string, a boolean or a number."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return js_number(float(value)) if abs(value) >= 2 ** 53 else str(value)
    if isinstance(value, float):
        return js_number(value)
    return str(value)


def js_number(x: float) -> str:
    """A double as JavaScript's Number.prototype.toString writes it (ECMA-262's
    Number::toString: the shortest digits that read back as the same double)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    if x < 0:
        return "-" + js_number(-x)
    digits, exponent = _shortest(x)          # x = 0.DIGITS * 10**exponent
    k, n = len(digits), exponent
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    sign = "+" if n - 1 >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{head}e{sign}{abs(n - 1)}"


def _shortest(x: float) -> tuple[str, int]:
    """The shortest decimal digits of `x` (Python's repr gives them) and the exponent n with
    x = 0.DIGITS * 10**n."""
    mantissa, _, exp = repr(x).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    shift = len(whole.lstrip("0")) if whole.strip("0") else -(len(frac) - len(frac.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    return digits, shift + (int(exp) if exp else 0)


def same_json(a: object, b: object) -> bool:
    """Node's util.isDeepStrictEqual over two parsed JSON values."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        fa, fb = float(a), float(b)
        return fa == fb and (fa != 0 or math.copysign(1, fa) == math.copysign(1, fb))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is None and b is None
    return type(a) is type(b) and a == b


def _reject(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _integer(text: str) -> int | float:
    return -0.0 if text == "-0" else int(text)


_JSON = json.JSONDecoder(parse_constant=_reject, parse_int=_integer)


def _parse(text: str) -> Any:
    """JSON.parse: strict JSON (white space only ` \\t\\n\\r` around it), `-0` kept
    negative; ValueError when it is not one JSON value."""
    start = len(text) - len(text.lstrip(" \t\n\r"))
    value, end = _JSON.raw_decode(text, start)
    if text[end:].strip(" \t\n\r"):
        raise ValueError("extra data after the JSON value")
    return value


def _excerpt(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@checker(
    CHECKERS,
    "equals",
    "The output is exactly the value (no trimming or case folding); a mapping, list or null "
    "value: the output parsed as JSON is that value (promptfoo's equals).",
    properties={"value": {}, "negate": BOOL},
    required=("value",),
    task_keys={"value": ("expected",)},
)
def equals(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    value = opts["value"]
    negate = bool(opts.get("negate", False))
    if isinstance(value, dict | list) or value is None:
        try:
            same = same_json(value, _parse(text))
        except ValueError:
            same = False
        want = json.dumps(value, ensure_ascii=False)
    else:
        want = js_text(value)
        same = text == want
    ok = same != negate
    notes = (f"{label} equals {_excerpt(want)!r}" if negate else
             f"{label} is not exactly {_excerpt(want)!r}")
    return binary(ok, notes, expected=_excerpt(want), got=_excerpt(text))
