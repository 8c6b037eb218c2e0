"""The `sandbox:` setting of a Config, a Task or a Check: `validate` checks its shape;
`run`, `grade` and `run -g` refuse (exit 2, before anything starts) what this machine
cannot give, at the setting that asks for it; match_output runs under it and says so."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from smevals.proc.contain import available, containment
from smevals.proc.setting import SCHEMA, Setting
from smevals.schemas import load_schema
from smevals.spec.load import display_path as shown
from tests.helpers import Result, make_eval

if not sys.platform.startswith("linux"):
    pytest.skip("the sandbox's namespaces are Linux's", allow_module_level=True)

CLI = Callable[..., Result]
LOCAL = containment()
MARKER_RUNNER = "#!/bin/sh\ntouch \"$SMEVALS_EVAL_DIR/runner-started\"\necho 42\n"


def test_the_packaged_schemas_hold_the_one_shape_of_the_setting() -> None:
    assert load_schema("config")["properties"]["sandbox"] == SCHEMA
    assert load_schema("task")["properties"]["sandbox"] == SCHEMA
    assert set(SCHEMA["properties"]) == set(Setting.__dataclass_fields__)


def test_layers_merge_key_by_key_the_task_winning() -> None:
    merged = Setting.merged({"backend": "unshare", "env": ["A"]}, None, {"network": True})
    assert merged == Setting(backend="unshare", env=("A",), network=True)
    with pytest.raises(ValueError, match=r"^sandbox.backend: invalid value 'lxc'$"):
        Setting.merged({"backend": "lxc"})
    with pytest.raises(ValueError, match=r"^sandbox: unknown key 'netwrk' \(allowed: "):
        Setting.merged({"netwrk": True})


def test_validate_checks_the_shape_wherever_it_is_given(cli: CLI, tmp_path: Path) -> None:
    ev = make_eval(
        tmp_path / "ev",
        tasks={"t": "prompt: p\nsandbox:\n  memory_mb: 1\n"},
        configs={"default": "runner: ./echo.sh\nmodel: m\nsandbox:\n  backend: lxc\n"},
        graders={"default": "checks:\n  - checker: match_output\n    expected_output: 1\n"
                            "    sandbox:\n      require: 'yes'\n"})
    res = cli("validate", str(ev))
    assert res.code == 2
    assert "configs/default.yaml:4:12: sandbox.backend: must be one of auto, bwrap, unshare, " \
           "docker, podman, none, got 'lxc'" in res.err, res.err
    assert "tasks/t.yaml:3:14: sandbox.memory_mb: must be >= 16, got 1" in res.err
    assert "graders/default.yaml:4:5: checks[0].sandbox.require: expected true or false, got " \
           "\"yes\"" in res.err


def test_run_refuses_a_backend_this_machine_cannot_give_before_any_runner(
        cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text("#!/bin/sh\nexit 1\n")       # a client, no daemon
    (bin_dir / "docker").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./echo.sh\nmodel: m\nsandbox:\n"
                                       "  backend: docker\n"},
                   files={"configs/echo.sh": MARKER_RUNNER})
    res = cli("run", str(ev))
    assert (res.code, res.out) == (2, "")
    at = shown(ev)
    assert res.err == (
        f"Error: {at}/configs/default.yaml:3:1: sandbox: backend 'docker' cannot be used here "
        f"({bin_dir}/docker info failed: its daemon does not answer); this machine gives: "
        f"{', '.join(available())}\n")
    assert not (ev / "runner-started").exists() and not (ev / "results").exists()


def test_a_tasks_requirement_is_refused_at_the_task(cli: CLI, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev",
                   tasks={"ok": "prompt: p\n", "strict": "prompt: p\nsandbox:\n  require: true\n"},
                   configs={"default": "runner: ./echo.sh\nmodel: m\nsandbox:\n"
                                       "  backend: none\n  view: host\n"},
                   files={"configs/echo.sh": MARKER_RUNNER})
    res = cli("run", str(ev))
    assert res.code == 2
    at = shown(ev)
    assert res.err == (
        f"Error: {at}/tasks/strict.yaml:2:1: sandbox: require: true asks for the network and "
        f"other processes to be hidden, and the strongest containment here is 'none'; this "
        f"machine gives: {', '.join(available())}\n")
    assert not (ev / "runner-started").exists()
    assert cli("run", str(ev), "-t", "ok").code == 0          # a Task that asks nothing runs


def test_grade_and_run_g_refuse_a_checks_sandbox_before_grading(cli: CLI, tmp_path: Path) -> None:
    strict = ("checks:\n  - checker: match_output\n    expected_output: 42\n"
              "    sandbox: {backend: none, require: true}\n")
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   graders={"default": "checks:\n  - checker: contains\n    value: '4'\n",
                            "strict": strict},
                   files={"configs/echo.sh": MARKER_RUNNER})
    assert cli("run", str(ev)).code == 0
    at = shown(ev)
    why = (f"Error: {at}/graders/strict.yaml:4:5: checks[0].sandbox: require: true asks for the "
           f"network and other processes to be hidden, and the strongest containment here is "
           f"'none'; this machine gives: {', '.join(available())}\n")
    res = cli("grade", str(ev), "-g", "strict")
    assert (res.code, res.err) == (2, why)
    assert not (ev / "results" / "grades").exists()
    (ev / "runner-started").unlink()
    res = cli("run", str(ev), "-n", "2", "-g", "strict")
    assert (res.code, res.err) == (2, why)
    assert not (ev / "runner-started").exists()


def test_match_output_runs_under_the_tasks_setting_and_says_so(cli: CLI, tmp_path: Path) -> None:
    if not LOCAL.processes:
        pytest.skip("no PID namespace can be made here")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        program = ("```python\nimport os, socket\n"
                   f"socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), 3)\n"
                   "print(os.environ.get('MODEL_URL'))\n```\n")
        ev = make_eval(
            tmp_path / "ev",
            tasks={"t": "prompt: p\nsandbox:\n  network: true\n  env: [MODEL_URL]\n"},
            graders={"default": "checks:\n  - checker: match_output\n"
                                "    expected_output: http://m\n    sandbox: {require: true}\n"},
            files={"configs/echo.sh": "#!/bin/sh\ncat <<'EOF'\n" + program + "EOF\n"})
        res = cli("run", str(ev), "-g", "default", env={"MODEL_URL": "http://m"})
    assert res.code == 0, res.err
    (grade,) = (ev / "results" / "grades").rglob("grade.json")
    assert json.loads(grade.read_text())["checks"][0]["details"] == {
        "sandbox": f"{LOCAL.name}, network allowed"}


def test_check_refuses_a_checks_sandbox_with_an_error_naming_it(cli: CLI) -> None:
    spec = json.dumps({"checker": "match_output", "expected_output": "1",
                       "sandbox": {"backend": "none", "require": True}})
    res = cli("check", spec, "--output", "print(1)")
    assert (res.code, json.loads(res.out)) == (2, {
        "ok": False, "error": True, "details": {"sandbox": "none"},
        "notes": "sandbox: require: true asks for the network and other processes to be "
                 "hidden, and the strongest containment here is 'none'; this machine gives: "
                 f"{', '.join(available())}"})
    bad = json.dumps({"checker": "match_output", "expected_output": "1"})
    res = cli("check", bad, "--output", "print(1)", "--task",
              json.dumps({"sandbox": {"backend": "lxc"}}))
    assert (res.code, json.loads(res.out)["notes"]) == (
        2, "the Task's sandbox.backend: invalid value 'lxc'")


def test_command_runs_under_the_tasks_setting_and_says_so(cli: CLI, tmp_path: Path) -> None:
    if not LOCAL.processes:
        pytest.skip("no PID namespace can be made here")
    check = ("checks:\n  - checker: command\n"
             "    command: 'test \"$MODEL_URL\" = http://m && test -z \"$OTHER_TOKEN\"'\n"
             "    sandbox: {require: true}\n")
    ev = make_eval(tmp_path / "ev",
                   tasks={"t": "prompt: p\nsandbox:\n  network: true\n  env: [MODEL_URL]\n"},
                   graders={"default": check},
                   files={"configs/echo.sh": "#!/bin/sh\necho 42\n"})
    env = {"MODEL_URL": "http://m", "OTHER_TOKEN": "s3cret"}
    res = cli("run", str(ev), "-g", "default", env=env)
    assert res.code == 0, res.err
    (grade,) = (ev / "results" / "grades").rglob("grade.json")
    assert json.loads(grade.read_text())["checks"][0]["details"]["sandbox"] == (
        f"{LOCAL.name}, network allowed")          # in its own view of the filesystem
    strict = check.replace("{require: true}", "{backend: none, require: true}")
    (ev / "graders" / "strict.yaml").write_text(strict)
    res = cli("grade", str(ev), "-g", "strict", env=env)
    assert res.code == 2 and "graders/strict.yaml:4:5: checks[0].sandbox: require" in res.err
