"""`smevals check` through a subprocess: exact stdout and exit codes 0 / 1 / 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ENTRY = "from smevals.cli import check_cmd, main; main()"


def smevals_check(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, "check", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def test_pass_exits_0() -> None:
    proc = smevals_check('{"checker": "contains", "value": "hel"}', "--output", "hello")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, '{\n  "ok": true\n}\n', "")


def test_fail_exits_1_and_prints_the_result() -> None:
    proc = smevals_check('{"type": "contains", "value": "zzz"}', "--output", "hello")
    assert proc.returncode == 1
    assert proc.stdout == (
        '{\n  "notes": "output.txt does not contain \'zzz\'",\n  "ok": false\n}\n'
    )


def test_scored_result() -> None:
    proc = smevals_check(
        '{"type": "token_f1", "value": "a b", "threshold": 0.5}', "--output", "a c"
    )
    assert proc.returncode == 0
    assert proc.stdout == (
        '{\n  "metrics": {\n    "token_f1": 0.5\n  },\n  "ok": true,\n  "score": 0.5\n}\n'
    )


@pytest.mark.parametrize(
    "spec,message",
    [
        ('{"checker": "nope"}', "Error: unknown checker 'nope'"),
        ('{"checker": "contains", "valeu": "x"}', "Error: invalid check 'contains': valeu: "),
        ("not json", "Error: SPEC_JSON is not valid JSON"),
        ("[1]", "Error: SPEC_JSON must be a JSON object, not list"),
    ],
)
def test_bad_spec_exits_2(spec: str, message: str) -> None:
    proc = smevals_check(spec, "--output", "x")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(message)


def test_output_file_and_task(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("The answer: 42\n", encoding="utf-8")
    proc = smevals_check(
        '{"checker": "contains"}',
        "--output-file",
        str(out),
        "--task",
        '{"grading": {"expected": "42"}}',
    )
    assert (proc.returncode, proc.stdout) == (0, '{\n  "ok": true\n}\n')


def test_stdin_and_usage() -> None:
    proc = smevals_check(
        '{"type": "cost_threshold", "max_usd": 0.01}',
        "--usage",
        '{"cost_usd": 0.5}',
        stdin="anything",
    )
    assert proc.returncode == 1
    assert '"notes": "cost_usd 0.5 exceeds the ceiling 0.01"' in proc.stdout


def test_spec_from_a_file(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text('{"checker": "regex", "pattern": "^4\\\\d$"}', encoding="utf-8")
    proc = smevals_check(f"@{spec}", "--output", "42")
    assert (proc.returncode, proc.stdout) == (0, '{\n  "ok": true,\n  "score": 1.0\n}\n')


def test_output_and_output_file_conflict() -> None:
    proc = smevals_check('{"checker": "json_valid"}', "--output", "1", "--output-file", "x")
    assert proc.returncode == 2 and "not both" in proc.stderr


def test_bad_usage_json_exits_2() -> None:
    proc = smevals_check('{"checker": "json_valid"}', "--output", "1", "--usage", "[]")
    assert proc.returncode == 2 and "--usage must be a JSON object" in proc.stderr
