"""Issue 24 item 12: oversized records, usage files and responses are refused before they are
parsed, with the limit and the setting that raises it named; plans are counted, not held.

The limits are lowered through their settings so that a few megabytes stand for the hundreds
of megabytes of the issue (bench/memory.py measures the peak memory on the real sizes).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import make_eval, run_cli
from tools.fake_openai import FakeOpenAI, Scripted

MB = 1 << 20


def _big_json(path: Path, size: int) -> None:
    item = b'{"a": 1, "b": [1, 2, 3]},'
    path.write_bytes(b'{"items": [' + item * (size // len(item)) + b'{}]}')


def _graded(tmp_path: Path) -> tuple[Path, Path]:
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hello\n"})
    assert run_cli("run", "-g", str(ev)).code == 0
    grade = next((ev / "results" / "grades").rglob("grade.json"))
    grade.chmod(0o644)
    return ev, grade


def test_a_record_above_the_limit_is_damage_named_never_parsed(tmp_path: Path) -> None:
    ev, grade = _graded(tmp_path)
    _big_json(grade, 2 * MB)
    size = grade.stat().st_size
    env = {"SMEVALS_MAX_RECORD_MB": "1"}
    said = (f"grade.json is {size} bytes, above the 1 MB limit of a record "
            "(SMEVALS_MAX_RECORD_MB raises it)")
    verify = run_cli("verify", str(ev), env=env)
    assert verify.code == 1
    assert f"{grade.relative_to(tmp_path)}: {said}" in verify.out
    report = run_cli("report", str(ev), env=env, cwd=tmp_path)
    assert report.code == 0
    assert said in report.err
    assert "Graded: 0 runs (0 failed, 1 ungraded)" in report.out
    # committed, it is refused the same way when read out of git
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                                                 "commit", "-qm", "big"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)
    report = run_cli("report", "--rev", "HEAD", str(ev), env=env, cwd=tmp_path)
    assert report.code == 0, report.err
    assert said in report.err
    assert "Graded: 0 runs (0 failed, 1 ungraded)" in report.out
    # raised, the limit lets the record be read: it is then damaged for what it says
    verify = run_cli("verify", str(ev), env={"SMEVALS_MAX_RECORD_MB": "3"})
    assert verify.code == 1
    assert "above the" not in verify.out
    assert "record does not match grade.schema.json at '': 'kind' is a required property" \
        in verify.out


def test_a_large_record_breaking_its_schema_is_described_lazily(tmp_path: Path) -> None:
    """Within the limit, a record of more than 1 MB that breaks its schema is described by
    its first violations, worded as for a small one (jsonschema-rs copied the record for
    each error: 800 MB for 2 MB)."""
    ev, grade = _graded(tmp_path)
    record = json.loads(grade.read_bytes())
    small = dict(record, outcome="maybe")
    grade.write_text(json.dumps(small))
    said_small = run_cli("verify", str(ev)).out
    grade.write_text(json.dumps({**small, "notes": ["x" * 100] * 20_000}))
    assert grade.stat().st_size > MB
    said_large = run_cli("verify", str(ev)).out
    line = "record does not match grade.schema.json at 'outcome': 'maybe' is not one of"
    assert line in said_small
    assert line in said_large


def test_a_usage_file_above_the_limit_is_noted_and_the_run_kept(tmp_path: Path) -> None:
    runner = ("#!/bin/sh\nhead -c 2100000 /dev/zero | tr '\\0' ' ' > \"$SMEVALS_USAGE_FILE\"\n"
              "echo says hi\n")
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hello\n"},
                   files={"configs/echo.sh": runner})
    result = run_cli("run", str(ev), env={"SMEVALS_MAX_USAGE_MB": "2"})
    assert result.code == 0, result.err
    run = json.loads(next((ev / "results" / "runs").rglob("run.json")).read_bytes())
    assert run["usage_error"] == ("smevals-usage.json is 2100000 bytes, above the 2 MB limit of "
                                  "a usage file (SMEVALS_MAX_USAGE_MB raises it)")
    assert run.get("usage") is None


def _answers_with(server: FakeOpenAI, size: int) -> None:
    server.respond_with(lambda _request: Scripted(200, b" " * size))


def test_a_model_response_above_the_limit_fails_the_run(tmp_path: Path,
                                                        fake_openai: FakeOpenAI) -> None:
    _answers_with(fake_openai, 3 * MB)
    config = f"runner: smevals:openai\nmodel: m1\nbase_url: '{fake_openai.base_url}'\n"
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hello\n"},
                   configs={"default": config}, files={})
    result = run_cli("run", str(ev), env={"SMEVALS_MAX_RESPONSE_MB": "2"})
    assert result.code == 1
    run = json.loads(next((ev / "results" / "runs").rglob("run.json")).read_bytes())
    assert run["failure"]["detail"] == (
        f"smevals:openai: {fake_openai.base_url}/chat/completions: the response body is above "
        "the 2 MB limit "
        "of a response (SMEVALS_MAX_RESPONSE_MB raises it)")
    assert len(fake_openai.requests) == 1            # never retried


def test_a_judge_response_above_the_limit_is_an_error_grade(tmp_path: Path,
                                                            fake_openai: FakeOpenAI) -> None:
    _answers_with(fake_openai, 3 * MB)
    grader = (f"judge: {{model: j, base_url: '{fake_openai.base_url}'}}\n"
              "checks:\n  - checker: llm_judge\n    rubric: Is it polite?\n")
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hello\n"},
                   graders={"default": grader})
    assert run_cli("run", str(ev)).code == 0
    result = run_cli("grade", str(ev), env={"SMEVALS_MAX_RESPONSE_MB": "2"})
    assert result.code == 2
    grade = json.loads(next((ev / "results" / "grades").rglob("grade.json")).read_bytes())
    assert grade["outcome"] == "error"
    assert "the response body is above the 2 MB limit of a response " \
           "(SMEVALS_MAX_RESPONSE_MB raises it)" in json.dumps(grade)
    assert len(fake_openai.requests) == 1


def test_a_malformed_limit_setting_is_a_usage_error(tmp_path: Path) -> None:
    ev, _grade = _graded(tmp_path)
    for value in ("abc", "0", "-1", "nan", "inf"):
        result = run_cli("report", str(ev), env={"SMEVALS_MAX_RECORD_MB": value})
        assert result.code == 2, (value, result.err)
        assert result.err.strip() == (f"Error: SMEVALS_MAX_RECORD_MB: '{value}' is not a size "
                                      "in megabytes (a number above 0)")


def test_a_plan_of_a_million_runs_is_counted(tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hello\n"})
    result = run_cli("run", "-n", "1000000", "--dry-run", str(ev), timeout=60)
    assert result.code == 0, result.err
    assert "1000000 Run(s) to make with config 'default'" in result.out
    assert "one / default / m1: 0 Run(s) exist, would run 1000000" in result.out
