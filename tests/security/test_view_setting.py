"""Issue 34 item 1, the setting: `sandbox: {expose: [...]}` adds read-only paths (checked,
recorded); a machine that cannot build the view refuses the Run or the Check before
anything starts; `view: host` runs with the machine's files in sight, and says so; the
extra binds a caller adds (Policy.binds) and `inside`; bubblewrap leaves no process."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from smevals.evaldef.load import display_path as shown
from smevals.proc import contain
from smevals.proc.policy import Policy
from smevals.proc.sandbox import Bind, SandboxRefused, describe, inside, run_sandboxed
from smevals.proc.sandbox import sandbox_env as scrubbed
from tests.helpers import Result, grade_records
from tests.helpers.backends import forget, use
from tests.helpers.hostile import CONFIG, MARK, TASK, bash, hostile_eval, session
from tests.helpers.records import run_dirs, runs

if not sys.platform.startswith("linux"):
    pytest.skip("the sandbox's namespaces are Linux's", allow_module_level=True)

CLI = Callable[..., Result]
MISSING = "No such file or directory"


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    """No answer about the machine's containment outlives a test that changed it."""
    forget()
    yield
    forget()


def outputs(run_dir: Path) -> list[str]:
    return [entry["output"] for entry in map(json.loads, (run_dir / "transcript.jsonl").open())
            if entry["type"] == "tool_result"]


def toolchain(root: Path) -> Path:
    """A folder outside the view, as a toolchain a Task needs: bin/tool."""
    tool = root / "bin" / "tool"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho tool ran\n")
    tool.chmod(0o755)
    return root


def test_an_exposed_path_is_readable_not_writable_and_recorded(cli: CLI, tmp_path: Path) -> None:
    tools = toolchain(tmp_path / "toolchain")
    exposed = TASK + f"sandbox:\n  expose: [{tools}]\n"
    ev = hostile_eval(tmp_path / "ev", task=exposed)
    command = f"{tools}/bin/tool; echo x > {tools}/new"
    session(ev, "m", bash(command))
    res = cli("run", str(ev), "-m", "m")
    assert res.code == 0, res.both
    [record], [folder] = runs(ev), run_dirs(ev)
    base = describe(Policy(1, {}))
    assert record["usage"]["sandbox"] == f"{base}, exposing {tools}"
    assert outputs(folder) == [f"tool ran\nbash: line 1: {tools}/new: Read-only file system\n"
                               f"[exited with code 1]"]
    assert not (tools / "new").exists()
    (ev / "tasks" / "impl.yaml").write_text(TASK)              # not exposed: not there
    assert cli("run", str(ev), "-m", "m").code == 0
    [newest] = [d for d in run_dirs(ev) if d != folder]
    assert outputs(newest)[0].startswith(f"bash: line 1: {tools}/bin/tool: {MISSING}\n")
    assert json.loads((newest / "run.json").read_text())["usage"]["sandbox"] == base


def test_expose_must_be_absolute_existing_and_outside_the_eval(cli: CLI, tmp_path: Path) -> None:
    ev = hostile_eval(tmp_path / "ev", task=TASK + "sandbox:\n  expose: [opt/go]\n")
    res = cli("validate", str(ev))
    assert res.code == 2
    assert f"{shown(ev)}/tasks/impl.yaml:6:12: sandbox.expose[0]: " in res.err, res.err
    for path, why in ((tmp_path / "nothing", f"'{tmp_path / 'nothing'}' does not exist here"),
                      (tmp_path, f"'{tmp_path}' holds the Eval's folder (its hidden files and "
                                 f"its results); expose only what the Task needs"),
                      (Path("/"), "'/' is the whole machine"),
                      (Path("/dev/shm"), "'/dev/shm' lies in /dev, where the sandbox puts its "
                                         "own; expose a path elsewhere")):
        (ev / "tasks" / "impl.yaml").write_text(TASK + f"sandbox:\n  expose: [/usr, {path}]\n")
        session(ev, "m", bash("true"))
        res = cli("run", str(ev), "-m", "m")
        assert (res.code, res.out) == (2, "")
        assert res.err == f"Error: {shown(ev)}/tasks/impl.yaml:6:18: sandbox.expose[1]: {why}\n"
        assert not (ev / "results").exists()


def test_where_no_view_can_be_built_run_and_grade_refuse_before_anything(
        cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ev = hostile_eval(tmp_path / "ev")
    session(ev, "m", bash(f"touch {tmp_path}/ran"))
    assert cli("run", str(ev), "-m", "m").code == 0                 # a store to grade
    (tmp_path / "ran").unlink(missing_ok=True)
    # a machine whose unshare cannot make the view: its probe fails
    monkeypatch.setattr(contain, "_view_starts", lambda box, path: "simulated: no namespaces")
    forget()
    res = cli("run", str(ev), "-m", "m")
    why = ("backend 'auto' cannot build the program's own view of the filesystem here ({}), "
           "so it would see every file of the machine; this machine gives: {}; `view: host` "
           "runs it with the machine's files in sight")
    ways = "; ".join(dict.fromkeys(
        f"{w.name}: simulated: no namespaces" if shutil.which(w.backend)
        else f"{w.backend}: not installed" for w in contain._WAYS))
    gives = ", ".join(contain.available())
    assert (res.code, res.out) == (2, "")
    assert res.err == (f"Error: {shown(ev)}/configs/default.yaml:1:1: sandbox: "
                       f"{why.format(ways, gives)}\n")
    assert len(runs(ev)) == 1 and not (tmp_path / "ran").exists()
    res = cli("grade", str(ev))
    assert (res.code, res.err) == (2, f"Error: {shown(ev)}/graders/default.yaml:2:5: "
                                      f"checks[0].sandbox: {why.format(ways, gives)}\n")
    assert not (ev / "results" / "grades").exists()
    # a machine with neither bubblewrap nor unshare: the same, before anything
    monkeypatch.undo()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    forget()
    res = cli("run", str(ev), "-m", "m")
    none = why.format("bwrap: not installed; unshare: not installed", "none")
    assert (res.code, res.err) == (2, f"Error: {shown(ev)}/configs/default.yaml:1:1: "
                                      f"sandbox: {none}\n")


def test_view_host_runs_with_the_machines_files_and_says_so(cli: CLI, tmp_path: Path) -> None:
    ev = hostile_eval(tmp_path / "ev", configs={"default": CONFIG + "sandbox: {view: host}\n"})
    session(ev, "m", bash(f"cat {ev}/hidden/impl/test_hidden_impl.py | grep -c {MARK}; pwd"))
    res = cli("run", str(ev), "-m", "m")
    assert res.code == 0, res.both
    [record], [folder] = runs(ev), run_dirs(ev)
    assert record["usage"]["sandbox"].endswith(", host view")
    assert record["usage"]["sandbox"] == describe(Policy(1, {}, view="host", read_only=bool(
        contain.find("auto", False, True))))
    [text] = outputs(folder)
    assert text.startswith("1\n/") and not text.startswith("1\n/workspace")
    graded = ("checks:\n  - checker: match_output\n    expected_output: ok\n"
              "    sandbox: {view: host}\n")
    (ev / "graders" / "host.yaml").write_text(graded)
    assert cli("grade", str(ev), "-g", "host").code in (0, 1)
    [grade] = grade_records(ev)
    assert grade["checks"][0]["details"]["sandbox"].endswith(", host view")


def test_a_callers_binds_and_paths_inside_the_view(tmp_path: Path) -> None:
    work, home, out, data = (tmp_path / name for name in ("work", "home", "out", "data"))
    for folder in (work, home, out, data):
        folder.mkdir()
    (data / "fixture.txt").write_text("fixture")
    binds = (Bind(str(out), "/smevals/out", writable=True), Bind(str(data), "/smevals/data"))
    env = {**scrubbed(os.environ, home), "REPORT": str(out / "r.xml"), "PLACES": f"{work}:/usr"}
    policy = Policy(20, env, binds=binds)
    code = ("import os; open(os.environ['REPORT'], 'w').write(open('/smevals/data/fixture.txt')"
            ".read()); print(os.environ['PLACES'], os.environ['HOME']);\n"
            "try:\n    open('/smevals/data/x', 'w')\nexcept OSError as e:\n    print(e.strerror)")
    res = run_sandboxed([sys.executable, "-c", code], work, policy)
    assert (res.exit_code, res.stderr) == (0, b"")
    assert res.stdout == b"/workspace:/usr /home/sandbox\nRead-only file system\n"
    assert (out / "r.xml").read_text() == "fixture"
    assert inside(policy, work, work / "a" / "b.py") == "/workspace/a/b.py"
    assert inside(Policy(1, {}, view="host"), work, work / "b.py") == str(work / "b.py")
    for target in ("/workspace/out", "/proc/x", "/", "/home/sandbox"):
        with pytest.raises(SandboxRefused, match=f"cannot put {out} at {target} in the view"):
            run_sandboxed(["true"], work, Policy(20, env, binds=(Bind(str(out), target),)))


def test_bwrap_leaves_no_process_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bubblewrap's own process 1 told bubblewrap the program's status before it had ended
    itself, so that it was sometimes found running (and killed) after bubblewrap: `left 1
    process running at its end`, more often when it had processes to end (about 1 run in
    30 of this program here). The program is process 1 now (`--as-pid-1`)."""
    program = ["sh", "-c", "for i in 1 2 3 4 5 6 7 8; do sleep 30 & done"]
    with use("bwrap", monkeypatch):
        for view in ("private", "host"):
            policy = Policy(20, scrubbed(os.environ, tmp_path), view=view)
            left = [run_sandboxed(program, tmp_path, policy).leftovers for _ in range(40)]
            assert left == [0] * 40


def test_a_program_is_shown_with_its_npm_package_and_node_by_its_name(tmp_path: Path) -> None:
    """As a harness is run: its executable a link into an npm package (its whole
    `node_modules` tree comes with it: the dependencies Node resolves beside it, and
    nothing outside), and `node` looked up on the program's PATH."""
    package = tmp_path / "lib" / "node_modules" / "@acme" / "agent"
    (package / "bin").mkdir(parents=True)
    (package / "lib").mkdir()
    (package / "lib" / "data.txt").write_text("from the package")
    (package / "bin" / "cli.sh").write_text(
        '#!/bin/sh\ncat "$(dirname "$0")/../lib/data.txt"; echo\n'
        'cat "$(dirname "$0")/../../../dep/index.js"; echo\n'
        'cat "$(dirname "$0")/../../../../other.txt" 2>/dev/null || echo hidden; node\n')
    (package / "bin" / "cli.sh").chmod(0o755)
    (tmp_path / "lib" / "node_modules" / "dep").mkdir()
    (tmp_path / "lib" / "node_modules" / "dep" / "index.js").write_text("a dependency")
    (tmp_path / "lib" / "other.txt").write_text("not the package's")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "agent").symlink_to(package / "bin" / "cli.sh")
    (bin_dir / "node").write_text("#!/bin/sh\necho node ran\n")
    (bin_dir / "node").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {**scrubbed(os.environ, work), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    policy = Policy(20, env, programs=("node",))
    res = run_sandboxed([str(bin_dir / "agent")], work, policy)
    assert (res.exit_code, res.stdout, res.stderr) == (
        0, b"from the package\na dependency\nhidden\nnode ran\n", b"")
