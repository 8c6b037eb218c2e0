"""Generated noise (`__pycache__/`, `*.pyc`, `.pytest_cache/`, `node_modules/`) is left out of
a Run by default: not kept as an artifact, not hashed into the record, not in
`workspace.diff`; `workspace_ignore:` on the Task or the Config changes the rules, and `[]`
keeps everything, hashed as any kept file (issue 37, docs/agents.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from smevals.run.ignore import DEFAULT, matcher
from tests.helpers import make_eval
from tests.helpers.records import run_dirs

NOISY = r"""
#!/bin/sh
printf 'def f():\n    return 2\n' > app.py
mkdir -p __pycache__ pkg/__pycache__ node_modules/left-pad .pytest_cache/v
printf 'xx' > __pycache__/app.cpython-311.pyc
printf 'yyy' > pkg/__pycache__/m.cpython-311.pyc
printf 'z' > stray.pyc
printf 'module.exports = 1\n' > node_modules/left-pad/index.js
ln -s /etc/passwd node_modules/link
printf '{}' > .pytest_cache/v/cache
printf 'kept\n' > notes.log
echo done
"""
KEPT = ["app.py", "notes.log", "output.txt", "workspace.diff"]


def _eval(root: Path, task: str = "", config: str = "") -> Path:
    return make_eval(root, tasks={"fix": f"prompt: fix it\nworkspace: start\n{task}"},
                     configs={"default": f"runner: ./agent.sh\nmodel: m1\n{config}"},
                     files={"configs/agent.sh": NOISY,
                            "start/app.py": "def f():\n    return 1\n",
                            "start/node_modules/vendored/index.js": "vendored\n"})


def _record(ev: Path) -> tuple[Path, dict[str, Any]]:
    (run,) = run_dirs(ev)
    return run, json.loads((run / "run.json").read_text())


def test_noise_is_left_out_of_the_run_and_its_diff(cli, tmp_path: Path) -> None:
    ev = _eval(tmp_path / "ev")
    assert cli("run", str(ev)).code == 0
    run, record = _record(ev)
    assert [f["path"] for f in record["files"]] == KEPT
    # the agent's six, and the vendored starting file (copied in, removed with the rest)
    assert record["ignored"] == {"rules": list(DEFAULT), "files": 7,
                                 "bytes": 2 + 3 + 1 + 19 + 0 + 2 + 9}
    # a vendored starting file the rules match is not taken for one the agent deleted
    assert record["workspace"]["changed"] == ["app.py"]
    assert record["workspace"]["deleted"] == []
    assert record["workspace"]["added"] == ["notes.log"]
    diff = (run / "workspace.diff").read_text()
    assert "diff --git a/app.py b/app.py" in diff
    assert "pyc" not in diff and "node_modules" not in diff and "pytest_cache" not in diff
    assert not (run / "node_modules").exists() and not (run / "__pycache__").exists()
    assert (Path("/etc/passwd")).exists()           # the link went, never its target
    assert cli("verify", str(ev)).code == 0


def test_an_empty_list_keeps_everything_hashed(cli, tmp_path: Path) -> None:
    ev = _eval(tmp_path / "ev", config="workspace_ignore: []\n")
    assert cli("run", str(ev)).code == 0
    run, record = _record(ev)
    assert "ignored" not in record
    files = {f["path"]: f for f in record["files"]}
    assert files["__pycache__/app.cpython-311.pyc"]["size"] == 2
    assert "sha256" in files["node_modules/left-pad/index.js"]
    assert files["node_modules/link"]["symlink"] == "/etc/passwd"
    assert "a/stray.pyc" in (run / "workspace.diff").read_text()
    assert cli("verify", str(ev)).code == 0


def test_the_tasks_rules_come_before_the_configs(cli, tmp_path: Path) -> None:
    ev = _eval(tmp_path / "ev", task="workspace_ignore: ['*.log', node_modules/]\n",
               config="workspace_ignore: []\n")
    assert cli("run", str(ev)).code == 0
    _run, record = _record(ev)
    assert record["ignored"] == {"rules": ["*.log", "node_modules/"], "files": 4,
                                 "bytes": 5 + 19 + 0 + 9}
    paths = [f["path"] for f in record["files"]]
    assert "notes.log" not in paths and "stray.pyc" in paths
    assert "__pycache__/app.cpython-311.pyc" in paths


@pytest.mark.parametrize(("value", "said"), [
    ("node_modules/", "workspace_ignore"),
    ("['/abs']", "workspace_ignore"),
    ("['']", "workspace_ignore"),
])
def test_a_bad_rule_list_exits_2_naming_the_field(cli, tmp_path: Path, value: str,
                                                  said: str) -> None:
    ev = _eval(tmp_path / "ev", task=f"workspace_ignore: {value}\n")
    for command in ("validate", "run"):
        res = cli(command, str(ev))
        assert res.code == 2, res.out
        assert "tasks/fix.yaml:3" in res.err and said in res.err, res.err
    assert not (ev / "results").exists()


@pytest.mark.parametrize(("rel", "folder", "ignored"), [
    ("__pycache__", True, True), ("a/b/__pycache__", True, True),
    ("__pycache__", False, False),            # a file of that name is not the folder
    ("x.pyc", False, True), ("deep/x.pyc", False, True), ("x.py", False, False),
    ("node_modules", True, True), ("output.txt", False, False),
])
def test_the_default_rules(rel: str, folder: bool, ignored: bool) -> None:
    assert matcher(DEFAULT)(rel, folder) is ignored


def test_a_rule_with_a_slash_is_a_path_from_the_top() -> None:
    match = matcher(("build/*.o", "output.txt"))
    assert match("build/a.o", False) and not match("src/build/a.o", False)
    assert not match("output.txt", False)      # smevals' own files are never noise
