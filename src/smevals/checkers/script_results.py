"""What a promptfoo javascript or python assertion returned, read as promptfoo 0.121 reads
it, and the two harness programs that run one (written for smevals; they read
`input.json` in their folder and write `result.json` there).

JavaScript: a boolean is the verdict; a number passes above 0, or at `threshold` and
above; an object with a boolean `pass`, a numeric `score` and a string `reason` gives
those; anything else, or an exception, fails. `negate` (promptfoo's `not-`) flips a
verdict, never a failure to run.

Python: the same, plus the text `true`/`false` (any case), a JSON object given as text, a
`pass_` key for `pass`, a number given as text (its leading number, as JavaScript's
parseFloat reads it), and `threshold` also applies to an object's score.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from smevals.checkers.base import CheckResult

HARNESS_JS = r"""'use strict';
const fs = require('fs');
const path = require('path');
const { pathToFileURL } = require('url');

const given = JSON.parse(fs.readFileSync('input.json', 'utf8'));

function gradingResult(r) {
  return typeof r === 'object' && r !== null && typeof r.pass === 'boolean' &&
    typeof r.score === 'number' && typeof r.reason === 'string' &&
    ['namedScores', 'namedScoreWeights', 'tokensUsed'].every(
      (k) => r[k] === undefined || typeof r[k] === 'object') &&
    (r.componentResults === undefined || Array.isArray(r.componentResults)) &&
    (r.assertion === undefined || r.assertion === null || typeof r.assertion === 'object') &&
    (r.comment === undefined || typeof r.comment === 'string');
}

// The last `;` outside a string literal, or -1.
function lastSemicolon(code) {
  let quote = null;
  let last = -1;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    let slashes = 0;
    for (let j = i - 1; j >= 0 && code[j] === '\\'; j--) slashes++;
    const escaped = slashes % 2 === 1;
    if (!escaped && (c === '"' || c === "'" || c === '`')) {
      if (quote === null) quote = c;
      else if (quote === c) quote = null;
    }
    if (c === ';' && quote === null) last = i;
  }
  return last;
}

// One line of code as a function body: `return` before its (last) expression.
function bodyOf(line) {
  const code = line.trim().replace(/;+\s*$/, '');
  if (/^(const|let|var)\s/.test(code)) {
    const at = lastSemicolon(code);
    if (at !== -1) {
      const rest = code.slice(at + 1).trim();
      if (rest) return code.slice(0, at + 1) + ' return ' + rest;
    }
    return code;
  }
  return 'return ' + code;
}

function checked(result) {
  if (typeof result === 'boolean' || typeof result === 'number' || gradingResult(result)) {
    return result;
  }
  throw new Error('Custom function must return a boolean, number, or GradingResult object. ' +
    'Got type ' + typeof result + ': ' + JSON.stringify(result));
}

async function fromScript(output, context) {
  const loaded = await import(pathToFileURL(path.resolve(given.script)).href);
  const mod = (loaded && loaded.default && loaded.default.default) ||
    (loaded && loaded.default) || loaded;
  const name = given.function;
  let fn = null;
  if (name && typeof mod[name] === 'function') fn = mod[name];
  else if (typeof mod === 'function') fn = mod;
  else if (mod && typeof mod.default === 'function') fn = mod.default;
  if (fn === null) throw new Error(given.script + ' must export a function');
  const value = await fn(output, context);
  if (!['boolean', 'number', 'object'].includes(typeof value)) {
    throw new Error('Javascript assertion script must return a boolean, number, or object');
  }
  return value;
}

async function main() {
  let out;
  try {
    let result;
    if (given.script) {
      result = await fromScript(given.output, given.context);
    } else {
      const code = given.code.trimEnd();
      const body = code.includes('\n') ? code : bodyOf(code);
      result = await new Function('output', 'context', 'process', body)(
        given.output, given.context, process);
    }
    result = checked(await result);
    if (typeof result === 'object') {
      out = { kind: 'object', pass: result.pass,
              score: Number.isFinite(result.score) ? result.score : null,
              reason: result.reason };
    } else {
      out = { kind: typeof result,
              value: typeof result === 'number' && !Number.isFinite(result) ?
                String(result) : result };
    }
  } catch (err) {
    out = { kind: 'error', message: String(err && err.message !== undefined ? err.message : err) };
  }
  fs.writeFileSync('result.json', JSON.stringify(out));
}

main();
"""

HARNESS_PY = r'''import asyncio
import importlib.util
import inspect
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "input.json"), encoding="utf-8") as fp:
    GIVEN = json.load(fp)


def as_module(code):
    """Inline code as promptfoo wraps it: one line is returned, several lines are the body
    of `main(output, context)` (indented like the code's first indented line)."""
    if "\n" in code:
        indent = "    "
        for line in code.split("\n"):
            stripped = line.lstrip()
            if stripped and line != stripped:
                indent = line[: len(line) - len(stripped)]
                break
        body = "\n".join(indent + line for line in code.split("\n"))
    else:
        body = "    return " + code
    return "import json\n\ndef main(output, context):\n" + body + "\n"


def load(path):
    sys.path.insert(0, HERE)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    if GIVEN.get("script"):
        module = load(os.path.join(HERE, GIVEN["script"]))
        name = GIVEN.get("function") or "get_assert"
    else:
        path = os.path.join(HERE, "script.py")
        with open(path, "w", encoding="utf-8") as fp:
            fp.write(as_module(GIVEN["code"]))
        module, name = load(path), "main"
    if "." in name:
        owner, method = name.split(".", 1)
        fn = getattr(getattr(module, owner), method)
    else:
        fn = getattr(module, name)
    args = (GIVEN["output"], GIVEN["context"])
    return asyncio.run(fn(*args)) if inspect.iscoroutinefunction(fn) else fn(*args)


try:
    OUT = {"kind": "result", "value": main()}
    TEXT = json.dumps(OUT, ensure_ascii=False, allow_nan=False)
except BaseException as exc:  # the assertion failed to run: promptfoo fails it
    TEXT = json.dumps({"kind": "error", "message": f"{type(exc).__name__}: {exc}"})
with open(os.path.join(HERE, "result.json"), "w", encoding="utf-8") as fp:
    fp.write(TEXT)
'''


def _verdict(passed: bool, score: float | None, reason: str, negate: bool,
             details: dict[str, Any]) -> CheckResult:
    ok = passed != negate
    shown = None if score is None else min(max(score, 0.0), 1.0)
    metrics: dict[str, float | bool] = {}
    if score is not None and shown != score:
        metrics["assertion_score"] = score        # promptfoo keeps scores outside 0..1
    notes = "" if ok else (reason if ok == passed else f"the assertion returned {passed} "
                           "(negated)")
    return CheckResult(ok=ok, score=shown, notes=notes, details=details, metrics=metrics)


def _failed(reason: str, details: dict[str, Any]) -> CheckResult:
    """It did not run, or returned nothing promptfoo reads: a fail, whatever `negate`."""
    return CheckResult(ok=False, score=0.0, notes=reason[:2000], details=details)


def _number_verdict(value: float, threshold: float | None, negate: bool,
                    details: dict[str, Any]) -> CheckResult:
    passed = value > 0 if threshold is None else value >= threshold
    why = f"the assertion returned {value:g}" + ("" if threshold is None else
                                                f" (threshold {threshold:g})")
    return _verdict(passed, value if math.isfinite(value) else None, why, negate, details)


def read_js(result: dict[str, Any], threshold: float | None, negate: bool,
            details: dict[str, Any]) -> CheckResult:
    kind = result.get("kind")
    if kind == "boolean" and isinstance(result.get("value"), bool):
        return _verdict(result["value"], 1.0 if result["value"] != negate else 0.0,
                        "the assertion returned false", negate, details)
    if kind == "number":
        value = result.get("value")
        number = float(value) if isinstance(value, int | float) else _float(str(value))
        return _number_verdict(number, threshold, negate, details)
    if kind == "object" and isinstance(result.get("pass"), bool):
        score = result.get("score")
        return _verdict(result["pass"], float(score) if isinstance(score, int | float) else
                        None, str(result.get("reason") or "the assertion did not pass"),
                        negate, details)
    return _failed(f"the assertion threw an error: {result.get('message', '')}", details)


def read_python(result: dict[str, Any], threshold: float | None, negate: bool,
                details: dict[str, Any]) -> CheckResult:
    if result.get("kind") != "result":
        return _failed(f"Python code execution failed: {result.get('message', '')}", details)
    value = result.get("value")
    try:
        return _python_value(value, threshold, negate, details)
    except ValueError as exc:
        return _failed(f"Python code execution failed: {exc}", details)


def _python_value(value: object, threshold: float | None, negate: bool,
                  details: dict[str, Any]) -> CheckResult:
    lowered = value.lower() if isinstance(value, str) else None
    if value is True or value is False or lowered in ("true", "false"):
        passed = value is True or lowered == "true"
        return _verdict(passed, 1.0 if passed != negate else 0.0,
                        "the assertion returned false", negate, details)
    if isinstance(value, str) and value.startswith("{"):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"Invalid JSON: {exc} when parsing result") from None
        if not isinstance(value, dict):
            raise ValueError("a Python assertion must return a boolean, number, or "
                             "{pass, score, reason} object")
        return _object(value, threshold, negate, details)
    if isinstance(value, dict | list):
        return _object(value, threshold, negate, details)
    number = float(value) if isinstance(value, int | float) else _float(
        "null" if value is None else str(value))
    if math.isnan(number):
        raise ValueError(f"a Python assertion must return a boolean, number, or "
                         f"{{pass, score, reason}} object, not {value!r}"[:300])
    return _number_verdict(number, threshold, negate, details)


def _object(value: dict[str, Any] | list[Any], threshold: float | None, negate: bool,
            details: dict[str, Any]) -> CheckResult:
    doc = dict(value) if isinstance(value, dict) else {}
    if "pass_" in doc and "pass" not in doc:
        doc["pass"] = doc["pass_"]
    score = doc.get("score")
    if not (isinstance(doc.get("pass"), bool) and isinstance(score, int | float)
            and not isinstance(score, bool) and isinstance(doc.get("reason"), str)):
        raise ValueError("a Python assertion must return a boolean, number, or "
                         "{pass, score, reason} object")
    passed, reason = doc["pass"], doc["reason"]
    if threshold is not None and score < threshold:
        passed = False
        reason = f"Python score {score} is less than threshold {threshold}: {reason}"
    return _verdict(passed, float(score), reason or "the assertion did not pass", negate,
                    details)


_LEADING_NUMBER = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


def _float(text: str) -> float:
    """JavaScript's parseFloat: the number at the start of the text (after white space),
    NaN when there is none."""
    m = _LEADING_NUMBER.match(text.lstrip())
    if m is None:
        return math.nan
    word = m.group(0)
    return float(word.replace("Infinity", "inf"))
