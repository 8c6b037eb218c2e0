"""Hostile YAML is bounded: an alias bomb is refused with file:line and exit 2 by every
loading command; ordinary anchors and aliases keep working."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import make_eval, write

QUICK = 30          # seconds: an unbounded expansion would never finish (or eat all memory)


def bomb(levels: int) -> str:
    """A "billion laughs" task: each level repeats the one above nine times."""
    lines = ["prompt: hi", 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("levels", [6, 9])
@pytest.mark.parametrize("command", [["validate"], ["run"], ["run", "--dry-run"], ["report"],
                                     ["grade"], ["build", "-o", "site"]])
def test_an_alias_bomb_is_refused_by_every_loading_command(cli, tmp_path: Path, levels: int,
                                                           command: list[str]):
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hello\n", "bomb": bomb(levels)})
    assert len(bomb(9)) < 450
    res = cli(*command, str(ev), cwd=tmp_path, timeout=QUICK)
    assert res.code == 2, res.both
    found = [text for text in res.err.splitlines() if "bomb.yaml" in text]
    assert len(found) == 1, res.err
    assert found[0].removeprefix("Error: ").startswith(
        "ev/tasks/bomb.yaml:7:5: aliases expand this document to ")
    assert found[0].endswith("more than 100,000 above its own size (an alias bomb?)")
    assert not (ev / "results").exists()


def test_a_recursive_alias_is_refused(cli, tmp_path: Path):
    ev = make_eval(tmp_path / "ev", tasks={"loop": "prompt: hi\nitems: &a [1, *a]\n"})
    res = cli("validate", str(ev), cwd=tmp_path, timeout=QUICK)
    assert res.code == 2
    assert res.err.splitlines()[0] == (
        "ev/tasks/loop.yaml:2:8: an alias refers to a node that contains it (a recursive "
        "document cannot be loaded)")


DRY_GRADER = """
checks:
  - &says
    checker: contains
    value: says
  - <<: *says
    value: hello
"""


def test_a_bomb_is_located_and_ordinary_anchors_keep_working(cli, tmp_path: Path):
    ev = make_eval(tmp_path / "ev", tasks={"bomb": bomb(9)}, graders={"default": DRY_GRADER})
    write(ev / "tasks" / "wide.yaml", "prompt: hello wide\nrows: &row [1, 2, 3]\n"
          + "".join(f"r{i}: *row\n" for i in range(2000)))
    res = cli("validate", str(ev), cwd=tmp_path, timeout=QUICK)
    assert res.code == 2
    assert res.err.splitlines() == [
        "ev/tasks/bomb.yaml:7:5: aliases expand this document to 490,329,066 nodes, more "
        "than 100,000 above its own size (an alias bomb?)", "1 problem found"]
    (ev / "tasks" / "bomb.yaml").unlink()
    res = cli("run", str(ev), "-g", cwd=tmp_path, timeout=QUICK)
    assert res.code == 0, res.both
    assert res.out.splitlines()[-1] == "1 ok, 0 failed"
