"""A Task's `workspace:` end to end: validated, copied in, hashed into the inputs (stale after
an edit), and the Run keeps only what the agent changed, with `workspace.diff`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import git, grade_records, make_eval, write
from tests.helpers.records import run_dirs

AGENT = r"""
#!/bin/sh
printf 'def f():\n    return 2\n' > src/a.py
rm gone.txt
mkdir -p docs && printf 'new\n' > docs/new.txt
printf '\000\001\002' > bin.dat
printf '\000old' > data.bin && printf '\000new' > data.bin
ln -s /etc/passwd link
mkfifo pipe
printf 'forged\n' > workspace.diff
printf 'also forged\n' > transcript.jsonl
echo done
"""

DIFF = """\
diff --git a/bin.dat b/bin.dat
new file
Binary files /dev/null and b/bin.dat differ
diff --git a/data.bin b/data.bin
Binary files a/data.bin and b/data.bin differ
diff --git a/docs/new.txt b/docs/new.txt
new file
--- /dev/null
+++ b/docs/new.txt
@@ -0,0 +1 @@
+new
diff --git a/gone.txt b/gone.txt
deleted file
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-gone
diff --git a/link b/link
new file
b/link is a symlink to '/etc/passwd' (never followed); not diffed
diff --git a/pipe b/pipe
new file
b/pipe is a special file (a FIFO, socket or device; never opened); not diffed
diff --git a/src/a.py b/src/a.py
--- a/src/a.py
+++ b/src/a.py
@@ -1,2 +1,2 @@
 def f():
-    return 1
+    return 2
"""


def _agent_eval(root: Path, runner: str = AGENT) -> Path:
    return make_eval(root, tasks={"fix": "prompt: fix it\nworkspace: workspaces/app\n"},
                     configs={"default": "runner: ./agent.sh\nmodel: m1\n"},
                     files={"configs/agent.sh": runner,
                            "workspaces/app/src/a.py": "def f():\n    return 1\n",
                            "workspaces/app/keep.txt": "keep\n",
                            "workspaces/app/gone.txt": "gone\n",
                            "workspaces/app/data.bin": "old\n",
                            "workspaces/app/tool.sh": "#!/bin/sh\necho tool\n"})


def test_the_run_keeps_what_changed_and_the_diff(cli, tmp_path: Path) -> None:
    ev = _agent_eval(tmp_path / "ev")
    res = cli("run", str(ev))
    assert res.code == 0, res.err
    (run,) = run_dirs(ev)
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "ok"
    assert record["workspace"] == {
        "hash": record["inputs"]["workspace"],
        "changed": ["data.bin", "src/a.py"],
        "added": ["bin.dat", "docs/new.txt", "link", "pipe"],
        "deleted": ["gone.txt"],
    }
    # unchanged starting files (keep.txt, tool.sh) are not stored again; the forged
    # reserved files are not the agent's work and never enter the diff
    assert [f["path"] for f in record["files"]] == [
        "bin.dat", "data.bin", "docs/new.txt", "link", "output.txt", "pipe", "src/a.py",
        "transcript.jsonl", "workspace.diff"]
    assert (run / "workspace.diff").read_text() == DIFF
    assert (run / "src" / "a.py").read_text() == "def f():\n    return 2\n"
    assert os.readlink(run / "link") == "/etc/passwd"


def test_the_runner_starts_in_a_copy_of_the_starting_files(cli, tmp_path: Path) -> None:
    runner = "#!/bin/sh\nfind . -type f -exec ls -l {} + | awk '{print $1, $NF}' | sort\n"
    ev = _agent_eval(tmp_path / "ev", runner)
    assert cli("run", str(ev)).code == 0
    (run,) = run_dirs(ev)
    assert (run / "output.txt").read_text() == (
        "-rw-r--r-- ./data.bin\n-rw-r--r-- ./gone.txt\n-rw-r--r-- ./keep.txt\n"
        "-rw-r--r-- ./src/a.py\n-rwxr-xr-x ./tool.sh\n")
    record = json.loads((run / "run.json").read_text())
    assert record["workspace"]["changed"] == record["workspace"]["deleted"] == []
    assert [f["path"] for f in record["files"]] == ["output.txt"]     # no diff: no change
    assert (ev / "workspaces" / "app" / "gone.txt").read_text() == "gone\n"


def test_a_list_of_files_and_a_builtin_runner(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev",
                   tasks={"one": "prompt: hi\nworkspace: [src/a.py, README.md]\n"},
                   configs={"default": "runner: smevals:replay\nmodel: m1\n"
                                       "responses: r.jsonl\n"},
                   files={"src/a.py": "x = 1\n", "README.md": "# r\n",
                          "configs/r.jsonl": '{"task": "one", "model": "m1", "output": "a"}\n'})
    res = cli("run", str(ev))
    assert res.code == 0, res.err
    (run,) = run_dirs(ev)
    record = json.loads((run / "run.json").read_text())
    assert record["workspace"]["added"] == []
    assert [f["path"] for f in record["files"]] == ["output.txt"]


def test_editing_a_starting_file_makes_earlier_runs_stale(cli, tmp_path: Path) -> None:
    ev = _agent_eval(tmp_path / "ev", "#!/bin/sh\necho ok\n")
    assert cli("run", str(ev)).code == 0
    res = cli("run", str(ev), "-n", "1", "--dry-run")
    assert "1 Run(s) exist, would run 0" in res.out
    (ev / "workspaces" / "app" / "keep.txt").write_text("edited\n")
    res = cli("run", str(ev), "-n", "1", "--dry-run")
    assert res.code == 0, res.err
    assert ("fix / default / m1: 0 current Run(s) + 1 stale (workspace changed), would run 1"
            in res.out)
    res = cli("report", str(ev), "--format", "json")
    assert json.loads(res.out)["evals"][0]["summary"]["stale_reasons"] == {"workspace_changed": 1}
    (ev / "workspaces" / "app" / "new.txt").write_text("a new starting file\n")
    (ev / "workspaces" / "app" / "keep.txt").write_text("keep\n")
    res = cli("run", str(ev), "-n", "1", "--dry-run")
    assert "1 stale (workspace changed)" in res.out


def test_a_changed_config_is_not_called_a_changed_workspace(cli, tmp_path: Path) -> None:
    """`run --dry-run` reads the brief view of the Runs, which kept no workspace digest: a
    changed config read as "config changed, workspace changed" (issue 35)."""
    ev = _agent_eval(tmp_path / "ev", "#!/bin/sh\necho ok\n")
    assert cli("run", str(ev)).code == 0
    config = ev / "configs" / "default.yaml"
    config.write_text(config.read_text() + "description: changed\n")
    res = cli("run", str(ev), "-n", "1", "--dry-run")
    assert "fix / default / m1: 0 current Run(s) + 1 stale (config changed), would run 1" \
        in res.out, res.out
    res = cli("report", str(ev), "--format", "json")
    assert json.loads(res.out)["evals"][0]["summary"]["stale_reasons"] == {"config_changed": 1}


def test_diff_between_two_commits_says_workspace_changed(cli, tmp_path: Path) -> None:
    ev = _agent_eval(tmp_path / "ev", "#!/bin/sh\necho ok\n")
    write(ev / "graders" / "default.yaml", "checks:\n  - checker: contains\n    value: ok\n")
    git(ev, "init", "-q")
    assert cli("run", str(ev), "-g").code == 0
    git(ev, "add", "-A")
    git(ev, "commit", "-qm", "one")
    (ev / "workspaces" / "app" / "src" / "a.py").write_text("def f():\n    return 3\n")
    assert cli("run", str(ev), "-n", "1", "-g").code == 0
    git(ev, "add", "-A")
    git(ev, "commit", "-qm", "two")
    res = cli("diff", "HEAD~1", "HEAD", str(ev))
    assert res.code == 0, res.err
    assert "- Stale Runs left out: A none; B 1 (workspace changed: 1)" in res.out


@pytest.mark.parametrize(("workspace", "make", "message"), [
    ("workspaces/none", None, "no such folder 'workspaces/none' in the Eval folder"),
    ("/etc", None, "the folder must be a relative path, not '/etc'"),
    ("../outside", None, "the folder may not contain '..' ('../outside')"),
    ("[workspaces/app/a.txt, ../b.txt]", None, "the file may not contain '..' ('../b.txt')"),
    ("workspaces/app", "symlink", "'workspaces/app/out' is a symlink to '/etc'; a workspace "
                                  "holds regular files and folders only"),
    ("workspaces/app", "fifo", "'workspaces/app/pipe' is a FIFO; a workspace holds regular "
                               "files and folders only"),
    ("workspaces/app", "reserved", "'output.txt' is a name smevals keeps for itself at the top "
                                   "of a Run; rename that starting file"),
    ("workspaces/link", "linked", "'workspaces/link' is or passes through a symlink; a "
                                  "starting file must be a regular file inside the Eval"),
    ("workspaces/app/a.txt", None, "'workspaces/app/a.txt' is a regular file, not a folder"),
    ("[workspaces/app]", None, "'workspaces/app' is a folder, not a regular file"),
    ("7", None, "expected a string or a list, got 7"),
    (".", None, "must be a folder inside the Eval, not the Eval itself"),
    ("workspaces/app", "badname", "'workspaces/app/bad\\xff.txt': the file name is not valid "
                                  "UTF-8; rename it"),
])
def test_a_bad_workspace_is_refused_at_its_line(cli, tmp_path: Path, workspace: str,
                                                 make: str | None, message: str) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"one": f"prompt: hi\nworkspace: {workspace}\n"},
                   files={"configs/echo.sh": "#!/bin/sh\necho hi\n",
                          "workspaces/app/a.txt": "a\n"})
    app = ev / "workspaces" / "app"
    if make == "symlink":
        (app / "out").symlink_to("/etc")
    elif make == "fifo":
        os.mkfifo(app / "pipe")
    elif make == "reserved":
        (app / "output.txt").write_text("x\n")
    elif make == "linked":
        (ev / "workspaces" / "link").symlink_to(app)
    elif make == "badname":
        (app / os.fsdecode(b"bad\xff.txt")).write_text("x\n")
    for command in ("validate", "run"):
        res = cli(command, str(ev))
        assert res.code == 2, res.out
        # a list item is named at that item
        col = (35 if "b.txt" in workspace else 13 if workspace.startswith("[")
               else 12 if workspace == "7" else 1)
        assert f"tasks/one.yaml:2:{col}: workspace: {message}" in res.err
    assert not (ev / "results").exists()


def test_a_workspace_over_the_size_limit_is_refused(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"one": "workspace: big\n"},
                   files={"configs/echo.sh": "#!/bin/sh\necho hi\n", "big/a.txt": "x" * 600_000})
    res = cli("validate", str(ev), env={"SMEVALS_MAX_WORKSPACE_MB": "0.5"})
    assert res.code == 2
    assert ("tasks/one.yaml:1:1: workspace: holds 600000 bytes, above the 0.5 MB limit of a "
            "workspace (SMEVALS_MAX_WORKSPACE_MB raises it)") in res.err
    assert cli("validate", str(ev)).code == 0


TREE_CHECKER = """
#!/bin/sh
cd "$SMEVALS_RUN_WORKSPACE" || exit 1
pwd
find . | sort
cat src/a.py
"""


def test_a_checker_program_sees_the_final_tree(cli, tmp_path: Path) -> None:
    ev = _agent_eval(tmp_path / "ev")
    write(ev / "graders" / "default.yaml", "checks:\n  - checker: ./tree.sh\n")
    write(ev / "graders" / "tree.sh", TREE_CHECKER, executable=True)
    res = cli("run", str(ev), "-g")
    assert res.code == 0, res.err
    (grade,) = grade_records(ev)
    # starting files kept (keep.txt, tool.sh), deleted ones gone (gone.txt), the Run's files
    # on top; its links, FIFOs and the names smevals keeps for itself are not part of it
    where, listing = grade["checks"][0]["details"]["output"].split("\n", 1)
    assert not Path(where).exists()             # removed with the Grade
    assert listing == (
        ".\n./bin.dat\n./data.bin\n./docs\n./docs/new.txt\n./keep.txt\n./src\n./src/a.py\n"
        "./tool.sh\ndef f():\n    return 2")
    # the starting files edited since: the Check is refused, never run on other files
    (ev / "workspaces" / "app" / "keep.txt").write_text("edited\n")
    res = cli("regrade", str(ev), "--include-stale")
    assert res.code == 1
    (_, newest) = sorted(grade_records(ev), key=lambda g: str(g["graded"]))
    note = newest["checks"][0]["notes"]
    assert note.startswith("SMEVALS_RUN_WORKSPACE: the Task's starting files changed since "
                           "this Run was made (workspace hash ")
    assert note.endswith("in the Eval); the Check is not run against other files: run the "
                         "Task again")


def test_the_editor_schemas_know_the_workspace_key_and_record_field(cli, tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    from tests.helpers.schemas import PACKAGED

    task = Draft202012Validator(json.loads((PACKAGED / "task.schema.json").read_text()))
    assert task.is_valid({"workspace": "workspaces/app"})
    assert task.is_valid({"workspace": ["a.py", "src/b.py"]})
    assert not any(task.is_valid({"workspace": bad}) for bad in (7, [], "", [""], {"a": 1}))
    ev = _agent_eval(tmp_path / "ev")
    assert cli("run", str(ev)).code == 0
    (run,) = run_dirs(ev)
    record = json.loads((run / "run.json").read_text())
    schema = Draft202012Validator(json.loads((PACKAGED / "run.schema.json").read_text()))
    assert schema.is_valid(record)
    assert not schema.is_valid({**record, "workspace": {"hash": "x"}})


def test_a_large_diff_is_capped_at_a_line(cli, tmp_path: Path) -> None:
    runner = "#!/bin/sh\nseq 1 3000 > a.txt\nseq 1 3000 > b.txt\n"
    ev = _agent_eval(tmp_path / "ev", runner)
    res = cli("run", str(ev), env={"SMEVALS_MAX_DIFF_MB": "0.01"})
    assert res.code == 0, res.err
    (run,) = run_dirs(ev)
    record = json.loads((run / "run.json").read_text())
    data = (run / "workspace.diff").read_bytes()
    whole = 2 * (len("diff --git a/a.txt b/a.txt\nnew file\n--- /dev/null\n+++ b/a.txt\n"
                     "@@ -0,0 +1,3000 @@\n") + sum(len(f"+{n}\n") for n in range(1, 3001)))
    assert record["truncated"] == {"workspace.diff": {"kept_bytes": len(data),
                                                      "written_bytes": whole}}
    assert 10485 - 10 < len(data) <= 10485 and data.endswith(b"\n")
    assert data.startswith(b"diff --git a/a.txt b/a.txt\n")


def test_links_the_agent_leaves_in_place_of_starting_files_are_never_followed(
        cli, tmp_path: Path) -> None:
    runner = ('#!/bin/sh\nrm -r src && ln -s "$SMEVALS_EVAL_DIR/workspaces/app/src" src\n'
              "rm keep.txt && ln -s /etc/passwd keep.txt\n")
    ev = _agent_eval(tmp_path / "ev", runner)
    write(ev / "graders" / "default.yaml", "checks:\n  - checker: ./tree.sh\n")
    write(ev / "graders" / "tree.sh", TREE_CHECKER.replace("cat src/a.py", "true"),
          executable=True)
    res = cli("run", str(ev), "-g")
    assert res.code == 0, res.err
    (run,) = run_dirs(ev)
    record = json.loads((run / "run.json").read_text())
    assert {k: record["workspace"][k] for k in ("changed", "added", "deleted")} == {
        "changed": ["keep.txt"], "added": ["src"], "deleted": ["src/a.py"]}
    diff = (run / "workspace.diff").read_text()
    assert "b/keep.txt is a symlink to '/etc/passwd' (never followed); not diffed\n" in diff
    assert "-    return 1\n" in diff                  # src/a.py deleted, its link not read
    assert (ev / "workspaces" / "app" / "src" / "a.py").read_text() == "def f():\n    return 1\n"
    (grade,) = grade_records(ev)
    listing = grade["checks"][0]["details"]["output"].split("\n", 1)[1]
    assert listing == ".\n./data.bin\n./gone.txt\n./tool.sh"     # neither link is recreated


def test_a_file_made_a_folder_and_a_folder_made_a_file(cli, tmp_path: Path) -> None:
    runner = ("#!/bin/sh\nrm data.bin && mkdir data.bin && echo x > data.bin/x.txt\n"
              "rm -r src && echo file > src\n")
    ev = _agent_eval(tmp_path / "ev", runner)
    write(ev / "graders" / "default.yaml", "checks:\n  - checker: ./tree.sh\n")
    write(ev / "graders" / "tree.sh", TREE_CHECKER.replace("cat src/a.py", "cat src"),
          executable=True)
    assert cli("run", str(ev), "-g").code == 0
    (run,) = run_dirs(ev)
    record = json.loads((run / "run.json").read_text())
    assert {k: record["workspace"][k] for k in ("changed", "added", "deleted")} == {
        "changed": [], "added": ["data.bin/x.txt", "src"], "deleted": ["data.bin", "src/a.py"]}
    (grade,) = grade_records(ev)
    assert grade["checks"][0]["details"]["output"].split("\n", 1)[1] == (
        ".\n./data.bin\n./data.bin/x.txt\n./gone.txt\n./keep.txt\n./src\n./tool.sh\nfile")


def test_starting_files_edited_after_the_plan_fail_the_run(cli, tmp_path: Path) -> None:
    runner = ('#!/bin/sh\n[ "$SMEVALS_TASK" = a ] && '
              'echo edited > "$SMEVALS_EVAL_DIR/workspaces/b/x.txt"\necho ran\n')
    ev = make_eval(tmp_path / "ev", tasks={"a": "prompt: a\n", "b": "prompt: b\nworkspace: "
                                           "workspaces/b\n"},
                   configs={"default": "runner: ./agent.sh\nmodel: m1\n"},
                   files={"configs/agent.sh": runner, "workspaces/b/x.txt": "x\n"})
    res = cli("run", str(ev), "-j", "1")
    assert res.code == 1
    runs = {json.loads(p.read_text())["task"]["name"]: json.loads(p.read_text())
            for p in (ev / "results" / "runs").rglob("run.json")}
    assert runs["a"]["status"] == "ok"
    assert runs["b"]["failure"] == {"kind": "launch", "detail": "workspace: the starting "
                                    "files changed since the Run was planned"}
    assert [f["path"] for f in runs["b"]["files"]] == ["output.txt"]     # the runner never ran
    assert "workspace" not in runs["b"]
