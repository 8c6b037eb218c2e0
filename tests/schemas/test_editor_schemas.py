"""Editor schemas that work offline: every `# yaml-language-server: $schema=` comment in the
shipped suites and in what `init`, `init --example` and `schemas --write` make resolves,
relative to its file, to a JSON Schema that exists, is valid, is the one for that kind of
file, and accepts the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from smevals.cli import cli
from smevals.commands.init import shipped_suites
from tests.helpers import make_eval, run_cli, write
from tests.helpers.schemas import PACKAGED, resolve_all

ROOT = Path(__file__).resolve().parents[2]
OLD = "# yaml-language-server: $schema=https://smevals.dev/schemas/{}.schema.json\n"


def test_every_comment_in_the_shipped_suites_resolves_in_the_checkout_and_the_package() -> None:
    suites = ROOT / "suites"
    kinds = resolve_all(suites)
    assert set(kinds) == {"eval", "task", "config", "grader", "fixture"}
    assert kinds["eval"] == len([p for p in suites.iterdir() if (p / "eval.yaml").is_file()])
    # installed, the suites sit in the package (smevals/suites) beside smevals/schemas
    assert resolve_all(suites, base=ROOT / "src" / "smevals" / "suites") == kinds


def test_init_writes_the_schemas_and_points_every_file_at_them(tmp_path: Path) -> None:
    res = run_cli("init", "x", cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.out.splitlines()[-6:-1] == [f"  x/.smevals/schemas/{k}.schema.json" for k in
                                          ("eval", "task", "config", "grader", "fixture")]
    x = tmp_path / "x"
    assert (x / "tasks" / "capital.yaml").read_text().startswith(
        "# yaml-language-server: $schema=../.smevals/schemas/task.schema.json\n")
    assert (x / "graders" / "default.fixtures" / "capital.yaml").read_text().startswith(
        "# yaml-language-server: $schema=../../.smevals/schemas/fixture.schema.json\n")
    assert resolve_all(x) == {"eval": 1, "task": 1, "config": 1, "grader": 1, "fixture": 3}


@pytest.mark.parametrize("example", shipped_suites())
def test_init_example_points_the_copy_at_its_own_schemas(tmp_path: Path, example: str) -> None:
    res = CliRunner().invoke(cli, ["init", "--example", example, str(tmp_path / "y")])
    assert res.exit_code == 0, res.output
    y = tmp_path / "y"
    assert sorted(p.name for p in (y / ".smevals" / "schemas").iterdir()) == [
        f"{k}.schema.json" for k in ("config", "eval", "fixture", "grader", "task")]
    assert resolve_all(y) == resolve_all(ROOT / "suites" / example)
    assert (y / "eval.yaml").read_text().startswith(
        "# yaml-language-server: $schema=.smevals/schemas/eval.schema.json\n")


def old_eval(root: Path) -> Path:
    """An Eval as the old `init` wrote it: comments with an address nobody serves."""
    ev = make_eval(root / "suite" / "ev", tasks={"one": OLD.format("task") + "prompt: hi\n"},
                   graders={"default": OLD.format("grader") + "checks: [{checker: contains, "
                            "value: hi}]\n"})
    (ev / "eval.yaml").write_text(OLD.format("eval") + "description: old\n")
    (ev / "configs" / "default.yaml").write_bytes(
        (OLD.format("config") + "runner: ./echo.sh\nmodel: m1\n").replace("\n", "\r\n").encode())
    (ev / "configs" / "default.yaml").chmod(0o640)
    return ev


def test_schemas_write_points_an_old_eval_at_a_folder_of_the_project(tmp_path: Path) -> None:
    ev = old_eval(tmp_path)
    write(ev / "tasks" / "plain.yaml", "prompt: no comment\n")
    outside = write(tmp_path / "elsewhere.yaml", OLD.format("task") + "prompt: not mine\n")
    (ev / "tasks" / "linked.yaml").symlink_to(outside)
    os.mkfifo(ev / "tasks" / "pipe.yaml")
    artifact = write(ev / "results" / "runs" / "one" / "a.yaml", OLD.format("task"))
    res = run_cli("schemas", "--write", "schemas", "suite", cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.out == "".join(f"  schemas/{k}.schema.json\n" for k in
                              ("eval", "task", "config", "grader", "fixture")) + (
        "  suite/ev/eval.yaml\n  suite/ev/tasks/one.yaml\n  suite/ev/configs/default.yaml\n"
        "  suite/ev/graders/default.yaml\nPointed 4 YAML file(s) at schemas\n")
    assert (ev / "tasks" / "one.yaml").read_text() == \
        "# yaml-language-server: $schema=../../../schemas/task.schema.json\nprompt: hi\n"
    config = ev / "configs" / "default.yaml"
    assert config.read_bytes() == (b"# yaml-language-server: $schema=../../../schemas/"
                                   b"config.schema.json\r\nrunner: ./echo.sh\r\nmodel: m1\r\n")
    assert config.stat().st_mode & 0o777 == 0o640
    # not an authoring file's comment, or not a file of ours: untouched
    assert (ev / "tasks" / "plain.yaml").read_text() == "prompt: no comment\n"
    assert outside.read_text() == OLD.format("task") + "prompt: not mine\n"
    assert (ev / "tasks" / "linked.yaml").is_symlink()
    assert artifact.read_text() == OLD.format("task")
    for name in ("pipe", "linked", "plain"):
        (ev / "tasks" / f"{name}.yaml").unlink()
    assert resolve_all(tmp_path / "suite") == {"eval": 1, "task": 1, "config": 1, "grader": 1}
    # pointed already: nothing to change
    again = run_cli("schemas", "--write", "schemas", "suite", cwd=tmp_path)
    assert again.out.endswith("\nPointed 0 YAML file(s) at schemas\n")


def test_schemas_write_replaces_a_link_and_never_writes_through_it(tmp_path: Path) -> None:
    victim = write(tmp_path / "victim.json", "mine\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "task.schema.json").symlink_to(victim)
    res = run_cli("schemas", "--write", "out", cwd=tmp_path)
    assert (res.code, res.err) == (0, "")
    assert victim.read_text() == "mine\n"
    for kind in ("eval", "task", "config", "grader", "fixture"):
        written = tmp_path / "out" / f"{kind}.schema.json"
        assert not written.is_symlink()
        assert written.read_bytes() == (PACKAGED / written.name).read_bytes()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        f"{k}.schema.json" for k in ("eval", "task", "config", "grader", "fixture"))


def test_schemas_bad_input_exits_2(tmp_path: Path) -> None:
    write(tmp_path / "file", "x\n")
    (tmp_path / "empty").mkdir()
    assert run_cli("schemas", "--write", "file", cwd=tmp_path).err.endswith(
        "Error: Invalid value for '--write': Directory 'file' is a file.\n")
    missing = run_cli("schemas", cwd=tmp_path)
    assert (missing.code, missing.err.splitlines()[-1]) == (
        2, "Error: Missing option '--write'.")
    res = run_cli("schemas", "--write", "out", "empty", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: empty is not an Eval or a Suite: no eval.yaml in "
                                      "it or in any folder below it\n")
    assert not (tmp_path / "out").exists()
