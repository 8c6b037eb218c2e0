"""match_output: extraction, interpreters, limits and artifacts."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from smevals.checkers.inputs import fenced_block
from smevals.proc.contain import containment
from tests.helpers.checkers import run

FENCED = "Sure!\n```python\nprint(6 * 7)\n```\nThat prints 42."


def match(output: str, expected: str = "42", **kw: object) -> dict[str, object]:
    """The result, less `details.sandbox`, which must name the containment in force."""
    opts = {"expected_output": expected, **kw.pop("opts", {})}  # type: ignore[dict-item]
    result = run("match_output", opts, output, **kw).as_dict()  # type: ignore[arg-type]
    details = result.get("details", {})
    if "sandbox" in details:
        assert details.pop("sandbox") == containment().name
        if not details:
            del result["details"]
    return result


TABLE = [
    (FENCED, "42", {}, {"ok": True, "score": 1.0}),
    ("print(42)", " 42\n", {}, {"ok": True, "score": 1.0}),
    ("print(41)", "42", {}, "stdout does not match expected_output"),
    ("import sys; sys.exit(3)", "", {}, "program exited with code 3"),
    ("import sys; print(42); sys.exit(1)", "42", {}, "program exited with code 1"),
    ("echo 42", "42", {"language": "bash"}, {"ok": True, "score": 1.0}),
    ("```sh\necho 42\n```", "42", {"language": "sh"}, {"ok": True, "score": 1.0}),
    ("print(42)", "42", {"command": [sys.executable, "-I"]}, {"ok": True, "score": 1.0}),
    ("print(42)", "42", {"command": [sys.executable, "{file}"]}, {"ok": True, "score": 1.0}),
    ("x", "42", {"language": "cobol"}, "unknown language 'cobol'"),
    ("", "42", {}, "no program found"),
]


@pytest.mark.parametrize("output,expected,opts,want", TABLE)
def test_table(output: str, expected: str, opts: dict[str, object], want: object) -> None:
    result = match(output, expected, opts=opts)
    if isinstance(want, dict):
        assert result == want
    else:
        assert result["ok"] is False and str(want) in str(result["notes"])


def test_missing_expected_output_fails_closed() -> None:
    result = run("match_output", {}, "print(42)").as_dict()
    assert result == {
        "ok": False,
        "notes": "option 'expected_output': missing required option "
        "(and the Task has no 'expected_output' key)",
    }


@pytest.mark.parametrize("expected", ["42", 42])
def test_expected_output_from_the_task(expected: object) -> None:
    assert run("match_output", {}, "print(42)", task={"expected_output": expected}).ok


def test_infinite_loop_times_out() -> None:
    result = match("while True:\n    pass\n", timeout=1)
    assert result["ok"] is False
    assert result["notes"] == "program timed out after 1 s"
    assert result["details"]["timed_out"] is True  # type: ignore[index]


def test_ten_megabytes_of_output_is_capped(tmp_path: Path) -> None:
    result = match("import sys\nsys.stdout.write('x' * 10_000_000)\n", workspace=tmp_path)
    assert result["ok"] is False
    assert "stdout passed the output cap of 1048576 bytes" in str(result["notes"])
    assert (tmp_path / "match_output.stdout.txt").stat().st_size == 1024 * 1024


def test_output_cap_option() -> None:
    result = match("print('x' * 100)", "x" * 100, opts={"max_output_bytes": 10})
    assert "cap of 10 bytes" in str(result["notes"])


def test_memory_limit() -> None:
    result = match("x = bytearray(600 * 1024 * 1024)\nprint(42)", opts={"memory_mb": 256})
    assert result["ok"] is False and "code 1" in str(result["notes"])


def test_stderr_is_kept_apart(tmp_path: Path) -> None:
    program = "import sys\nprint('oops', file=sys.stderr)\nprint(42)\n"
    assert match(program, workspace=tmp_path) == {"ok": True, "score": 1.0}
    assert (tmp_path / "match_output.stdout.txt").read_text() == "42\n"
    assert (tmp_path / "match_output.stderr.txt").read_text() == "oops\n"
    assert (tmp_path / "match_output.exit_code.txt").read_text() == "0\n"
    assert (tmp_path / "match_output.program.py").read_text() == program


def test_named_checks_keep_their_artifacts_apart(tmp_path: Path) -> None:
    match("print(42)", workspace=tmp_path, check_name="first")
    match("print(1)", "1", workspace=tmp_path, check_name="second try")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "match_output.first.program.py" in names
    assert "match_output.second_try.stdout.txt" in names


def test_runs_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("42")
    assert match("print(open('data.txt').read())", workspace=tmp_path)["ok"] is True


def test_stdin_is_closed() -> None:
    assert match("import sys\nprint(len(sys.stdin.read()) + 42)")["ok"] is True


def test_background_children_are_killed() -> None:
    program = "import subprocess\nsubprocess.Popen(['sleep', '30'])\nprint(42)\n"
    assert match(program, timeout=5)["ok"] is True


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_node() -> None:
    assert match("```js\nconsole.log(6 * 7)\n```", opts={"language": "node"})["ok"] is True


def test_extraction_rules() -> None:
    tags = frozenset({"python", "py"})
    assert fenced_block("```bash\necho\n```\n```py\nprint(1)\n```", tags) == "print(1)"
    assert fenced_block("```\nprint(2)\n```", tags) == "print(2)"
    assert fenced_block("print(3)", tags) == "print(3)"
