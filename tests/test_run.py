"""`smevals run` end to end: the runner contract, failures, top-up, concurrency, timeouts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.helpers import SMEVALS, make_eval, wait_for, write
from tests.helpers.records import run_dirs, runs

ENV_RUNNER = """
#!/bin/sh
env | grep '^SMEVALS_' | grep -v '^SMEVALS_CACHE_DIR\\|^SMEVALS_REQUIRE_' | sort
pwd
"""


def test_runner_gets_the_contract_environment(cli, tmp_path: Path) -> None:
    ev = make_eval(
        tmp_path / "ev",
        tasks={"alpha": "prompt: Say hi\nmax tokens: 5\nnested: {a: 1}\ngrading:\n  secret: 42\n"},
        configs={"default": "runner: ./env.sh\nmodel: m1\ntemperature: 0.25\nflag: true\n"},
        files={"configs/env.sh": ENV_RUNNER})
    res = cli("run", str(ev), env={"SMEVALS_TASK_STALE": "x"})
    assert res.code == 0, res.err
    (run_dir,) = run_dirs(ev)
    lines = (run_dir / "output.txt").read_text().splitlines()
    workspace = lines[-1]
    env = dict(line.split("=", 1) for line in lines[:-1])
    config = json.loads(env.pop("SMEVALS_CONFIG"))
    assert config == {"flag": True, "model": "m1", "name": "default",
                      "runner": str(ev / "configs" / "env.sh"), "temperature": 0.25}
    assert env == {
        "SMEVALS_CONFIG_DIR": str(ev / "configs"),
        "SMEVALS_CONFIG_FLAG": "True",
        "SMEVALS_CONFIG_MODEL": "m1",
        "SMEVALS_CONFIG_NAME": "default",
        "SMEVALS_CONFIG_RUNNER": str(ev / "configs" / "env.sh"),
        "SMEVALS_CONFIG_TEMPERATURE": "0.25",
        "SMEVALS_EVAL_DIR": str(ev),
        "SMEVALS_MODEL": "m1",
        "SMEVALS_PROMPT": "Say hi",
        "SMEVALS_RUN_DIR": workspace,
        "SMEVALS_SAMPLE": "0",
        "SMEVALS_TASK": "alpha",
        "SMEVALS_TASK_MAX_TOKENS": "5",
        "SMEVALS_TASK_NAME": "alpha",
        "SMEVALS_TASK_PROMPT": "Say hi",
        "SMEVALS_USAGE_FILE": workspace + "/smevals-usage.json",
    }
    assert workspace.startswith(str(ev / "results" / ".staging" / "run-"))


def test_prompt_variable_only_when_the_task_has_one(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"bare": "question: what?\n"},
                   configs={"default": "runner: ./env.sh\nmodel: m1\n"},
                   files={"configs/env.sh": ENV_RUNNER})
    assert cli("run", str(ev)).code == 0
    text = (run_dirs(ev)[0] / "output.txt").read_text()
    assert "SMEVALS_PROMPT=" not in text
    assert "SMEVALS_TASK_QUESTION=what?" in text


def test_run_record_output_stderr_artifacts(cli, tmp_path: Path) -> None:
    runner = """
    #!/bin/sh
    printf 'line one\\r\\nline two\\rline three\\n'
    echo 'a warning' >&2
    mkdir -p sub && echo data > sub/artifact.txt
    ln -s /etc/passwd link
    """
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   files={"configs/r.sh": runner})
    res = cli("run", str(ev))
    assert res.code == 0, res.err
    (run_dir,) = run_dirs(ev)
    assert (run_dir / "output.txt").read_bytes() == b"line one\nline two\nline three\n"
    assert (run_dir / "stderr.txt").read_text() == "a warning\n"
    assert (run_dir / "sub" / "artifact.txt").read_text() == "data\n"
    assert os.readlink(run_dir / "link") == "/etc/passwd"
    rec = runs(ev)[0]
    assert [f["path"] for f in rec["files"]] == ["link", "output.txt", "stderr.txt",
                                                 "sub/artifact.txt"]
    assert rec["files"][0] == {"path": "link", "symlink": "/etc/passwd"}
    assert rec["status"] == "ok" and rec["exit_code"] == 0 and rec["failure"] is None
    assert rec["text"] == {"output_bytes_replaced": False, "stderr_bytes_replaced": False}
    assert oct((run_dir / "output.txt").stat().st_mode & 0o777) == "0o444"
    assert set(rec["provenance"]) == {"smevals", "python", "platform", "git"}
    assert len(rec["inputs"]["hash"]) == 64
    assert run_dir.name.startswith(rec["started"][:10].replace("-", ""))


def test_no_stderr_file_when_runner_prints_nothing_there(cli, evaldir: Path) -> None:
    assert cli("run", str(evaldir), "-t", "one").code == 0
    (run_dir,) = run_dirs(evaldir)
    assert sorted(p.name for p in run_dir.iterdir()) == ["output.txt", "run.json"]
    assert (run_dir / "output.txt").read_text() == "m1 says: hello one\n"


def test_undecodable_bytes_are_replaced_and_noted(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   files={"configs/r.sh": "#!/bin/sh\nprintf 'caf\\351\\n'\nprintf '\\377' >&2\n"})
    assert cli("run", str(ev)).code == 0
    (run_dir,) = run_dirs(ev)
    assert (run_dir / "output.txt").read_text(encoding="utf-8") == "caf\ufffd\n"
    assert runs(ev)[0]["text"] == {"output_bytes_replaced": True, "stderr_bytes_replaced": True}


def test_failed_run_is_kept_and_exit_1(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   files={"configs/r.sh": "#!/bin/sh\necho partial\nexit 3\n"})
    res = cli("run", str(ev))
    assert res.code == 1
    assert res.err == "Error: 1 run(s) failed\n"
    assert "t / default / m1 ... FAILED (exited with status 3)" in res.out
    rec = runs(ev)[0]
    assert rec["status"] == "failed"
    assert rec["exit_code"] == 3
    assert rec["failure"] == {"kind": "exit", "detail": "exited with status 3"}
    assert (run_dirs(ev)[0] / "output.txt").read_text() == "partial\n"


def test_runner_killed_by_signal(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   files={"configs/r.sh": "#!/bin/sh\nkill -9 $$\n"})
    assert cli("run", str(ev)).code == 1
    assert runs(ev)[0]["failure"] == {"kind": "signal", "detail": "killed by signal SIGKILL"}


def test_usage_file_is_recorded_and_a_bad_one_noted(cli, tmp_path: Path) -> None:
    runner = """
    #!/bin/sh
    echo answer
    if [ "$SMEVALS_TASK" = good ]; then
      printf '{"input_tokens": 3, "output_tokens": 4, "cost_usd": 0.01, "latency_ms": 12.5,
      "tool_calls": [{"name": "search", "arguments": {"q": "x"}}]}' > "$SMEVALS_USAGE_FILE"
    else
      printf '{"input_tokens": -1}' > "$SMEVALS_USAGE_FILE"
    fi
    """
    ev = make_eval(tmp_path / "ev", tasks={"good": "prompt: p\n", "bad": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   files={"configs/r.sh": runner})
    assert cli("run", str(ev)).code == 0
    bad, good = runs(ev)
    assert good["usage"] == {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7,
                             "cost_usd": 0.01, "latency_ms": 12.5,
                             "tool_calls": [{"name": "search", "arguments": {"q": "x"}}]}
    assert bad["usage"] is None
    assert bad["usage_error"] == ("smevals-usage.json does not match usage.schema.json at "
                                  "input_tokens: -1 is less than the minimum of 0")
    assert all(f["path"] != "smevals-usage.json" for f in good["files"])


def test_runner_writing_the_record_name_is_refused(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   files={"configs/r.sh": "#!/bin/sh\necho hi\necho '{}' > run.json\n"})
    assert cli("run", str(ev)).code == 1
    rec = runs(ev)[0]
    assert rec["failure"]["kind"] == "artifact"
    assert "the runner wrote 'run.json'" in rec["failure"]["detail"]
    assert cli("verify", str(ev)).code == 0


def test_models_and_slugged_folders(cli, evaldir: Path) -> None:
    res = cli("run", str(evaldir), "-m", "My Model", "-m", "m1", "-t", "one")
    assert res.code == 0
    models = sorted(p.name for p in (evaldir / "results" / "runs" / "one" / "default").iterdir())
    assert models == ["m1", "my-model-e84ac3f6"]
    assert {r["model"] for r in runs(evaldir)} == {"My Model", "m1"}


def test_top_up_counts_same_inputs_only(cli, evaldir: Path) -> None:
    assert cli("run", str(evaldir), "-n", "2").code == 0
    assert len(runs(evaldir)) == 4
    again = cli("run", str(evaldir), "-n", "2")
    assert again.code == 0
    assert "0 Run(s) to make" in again.out
    assert len(runs(evaldir)) == 4
    write(evaldir / "tasks" / "one.yaml", "prompt: a changed prompt\n")
    assert cli("run", str(evaldir), "-n", "2").code == 0
    counts: dict[str, int] = {}
    for rec in runs(evaldir):
        counts[rec["task"]["name"]] = counts.get(rec["task"]["name"], 0) + 1
    assert counts == {"one": 4, "two": 2}
    assert [r["sample"] for r in runs(evaldir) if r["task"]["name"] == "one"] == [0, 0, 1, 1]


def test_answer_key_edit_never_forces_a_rerun(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\ngrading:\n  expected: a\n"})
    assert cli("run", str(ev), "-n", "1").code == 0
    write(ev / "tasks" / "t.yaml", "prompt: p\ngrading:\n  expected: b\n")
    res = cli("run", str(ev), "-n", "1")
    assert "0 Run(s) to make" in res.out
    assert len(runs(ev)) == 1


def test_top_up_passes_are_balanced(cli, evaldir: Path) -> None:
    res = cli("run", str(evaldir), "-n", "2", "-j", "1", "-m", "a", "-m", "b")
    order = [line.split(" ... ")[0] for line in res.out.splitlines() if " ... " in line]
    assert order == ["one / default / a", "one / default / b", "two / default / a",
                     "two / default / b"] * 2


def test_persistently_failing_pair_is_tried_once_per_invocation(cli, tmp_path: Path) -> None:
    runner = "#!/bin/sh\nif [ -f \"$SMEVALS_EVAL_DIR/fixed\" ]; then echo ok; else exit 1; fi\n"
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   files={"configs/r.sh": runner})
    res = cli("run", str(ev), "-n", "2")
    assert res.code == 1
    assert res.err == "Error: 2 run(s) failed\n"
    assert len(runs(ev)) == 2
    (ev / "fixed").write_text("")
    assert cli("run", str(ev), "-n", "2").code == 0
    assert [r["status"] for r in runs(ev)].count("ok") == 2
    assert "0 Run(s) to make" in cli("run", str(ev), "-n", "2").out


def test_parallel_equals_serial(cli, tmp_path: Path) -> None:
    runner = "#!/bin/sh\necho \"$SMEVALS_TASK $SMEVALS_MODEL $SMEVALS_SAMPLE\"\n"
    outcomes = []
    for jobs in ("1", "4"):
        ev = make_eval(tmp_path / f"ev{jobs}", tasks={f"t{i}": f"prompt: p{i}\n" for i in range(5)},
                       configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                       files={"configs/r.sh": runner})
        assert cli("run", str(ev), "-n", "3", "-j", jobs, "-m", "a", "-m", "b").code == 0
        outcomes.append(sorted(
            (r["task"]["name"], r["model"], r["sample"], r["inputs"]["hash"],
             (d / "output.txt").read_text())
            for d in run_dirs(ev) for r in [json.loads((d / "run.json").read_text())]))
    assert len(outcomes[0]) == 30
    assert outcomes[0] == outcomes[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/status").read_text().count("State:\tZ")


def test_timeout_kills_the_whole_process_group(cli, tmp_path: Path) -> None:
    runner = """
    #!/bin/sh
    sleep 60 &
    echo $! > "$SMEVALS_EVAL_DIR/child.pid"
    echo started
    wait
    """
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\ntimeout: 30\n"},
                   files={"configs/r.sh": runner})
    res = cli("run", str(ev), "--timeout", "1")
    assert res.code == 1
    rec = runs(ev)[0]
    assert rec["failure"] == {"kind": "timeout", "detail": "timed out after 1s; the runner and "
                                                           "every process it started were killed"}
    assert rec["exit_code"] is None
    assert (run_dirs(ev)[0] / "output.txt").read_text() == "started\n"
    child = int((ev / "child.pid").read_text())
    wait_for(lambda: not _alive(child), "the runner's child to be gone", seconds=10)


def test_sigint_mid_session_keeps_only_complete_runs(cli, tmp_path: Path) -> None:
    runner = "#!/bin/sh\necho start\n: > \"$SMEVALS_EVAL_DIR/started.$$\"\nsleep 3\necho done\n"
    ev = make_eval(tmp_path / "ev", tasks={f"t{i}": f"prompt: p{i}\n" for i in range(8)},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   files={"configs/r.sh": runner})
    proc = subprocess.Popen([SMEVALS, "run", str(ev), "-j", "4", "-n", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: any(ev.glob("started.*")), "a runner to start")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "Interrupted" in err
    assert runs(ev) == []
    assert sorted(p.name for p in (ev / "results" / ".staging").iterdir()) == [".claims",
                                                                             ".gitignore"]
    assert cli("verify", str(ev)).code == 0
    fast = "#!/bin/sh\necho quick\n"
    write(ev / "configs" / "r.sh", fast, executable=True)
    resumed = cli("run", str(ev), "-j", "4", "-n", "1")
    assert resumed.code == 0
    assert len(runs(ev)) == 8


def test_sigterm_stops_too(tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   files={"configs/r.sh": "#!/bin/sh\n: > \"$SMEVALS_EVAL_DIR/started\"\n"
                                          "sleep 30\n"})
    proc = subprocess.Popen([SMEVALS, "run", str(ev)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_for((ev / "started").exists, "the runner to start")
    proc.terminate()
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert runs(ev) == []


def test_dry_run_lists_and_runs_nothing(cli, evaldir: Path) -> None:
    assert cli("run", str(evaldir), "-t", "one").code == 0
    res = cli("run", str(evaldir), "-n", "2", "--dry-run")
    assert res.code == 0
    name = evaldir.name
    assert res.out == (
        f"{name}: 3 Run(s) to make with config 'default' (2 task/model pair(s), 1 with earlier "
        "Runs of the same inputs)\n"
        "  one / default / m1: 1 Run(s) exist, would run 1\n"
        "  two / default / m1: 0 Run(s) exist, would run 2\n")
    assert len(runs(evaldir)) == 1


def test_unknown_task_config_and_missing_model(cli, evaldir: Path) -> None:
    res = cli("run", str(evaldir), "-t", "nope")
    assert (res.code, res.err) == (2, "Error: ev: no such task(s): nope - available tasks: "
                                      "one, two\n")
    res = cli("run", str(evaldir), "-c", "prod")
    assert (res.code, res.err) == (2, "Error: ev: no config named 'prod' - available configs: "
                                      "default\n")
    write(evaldir / "configs" / "nomodel.yaml", "runner: ./echo.sh\n")
    res = cli("run", str(evaldir), "-c", "nomodel")
    assert res.code == 2
    assert res.err.endswith("config 'nomodel' names no model; add `model:` to it or pass "
                            "-m MODEL\n")
    assert not (evaldir / "results").exists()


def test_invalid_eval_exits_2_before_any_runner(cli, evaldir: Path) -> None:
    write(evaldir / "tasks" / "two.yaml", "prompt: a\nprompt: b\n")
    res = cli("run", str(evaldir))
    assert res.code == 2
    assert "tasks/two.yaml:2:1: duplicate key 'prompt' (first defined on line 1)" in res.err
    assert not (evaldir / "results").exists()


def test_missing_or_non_executable_runner_reported_first(cli, evaldir: Path) -> None:
    (evaldir / "configs" / "echo.sh").chmod(0o644)
    res = cli("run", str(evaldir))
    assert res.code == 2
    assert "is not executable (chmod +x echo.sh)" in res.err
    (evaldir / "configs" / "echo.sh").unlink()
    res = cli("run", str(evaldir))
    assert res.code == 2
    assert f"runner {evaldir}/configs/echo.sh is not a file" in res.err
    assert not (evaldir / "results").exists()


def test_bare_g_does_not_swallow_the_eval_path(cli, evaldir: Path) -> None:
    res = cli("run", "-g", str(evaldir), "-t", "one")
    assert res.code == 0, res.err
    assert "\n    grade: pass\n" in res.out
    assert len(list((evaldir / "results" / "grades" / "default").rglob("grade.json"))) == 1


def test_store_option_and_env(cli, evaldir: Path, tmp_path: Path) -> None:
    assert cli("run", str(evaldir), "--store", str(tmp_path / "shared")).code == 0
    assert len(list((tmp_path / "shared" / "ev" / "runs").rglob("run.json"))) == 2
    assert not (evaldir / "results").exists()
    env = {"SMEVALS_STORE": str(tmp_path / "env-store")}
    assert cli("run", str(evaldir), env=env).code == 0
    assert len(list((tmp_path / "env-store" / "ev" / "runs").rglob("run.json"))) == 2


def test_replay_runner_end_to_end(cli, tmp_path: Path) -> None:
    lines = [{"task": "t", "model": "good", "output": f"answer {i}\n",
              "usage": {"input_tokens": 2, "output_tokens": 3}} for i in range(2)]
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n", "u": "prompt: q\n"},
                   configs={"default": "runner: smevals:replay\nresponses: r.jsonl\nmodel: good\n"},
                   files={"configs/r.jsonl": "".join(json.dumps(x) + "\n" for x in lines)})
    res = cli("run", str(ev), "-n", "2")
    assert res.code == 1
    good = [r for r in runs(ev) if r["status"] == "ok"]
    assert [(r["task"]["name"], r["sample"]) for r in good] == [("t", 0), ("t", 1)]
    assert [r["usage"]["total_tokens"] for r in good] == [5, 5]
    outputs = sorted((d / "output.txt").read_text() for d in run_dirs(ev)
                     if (d / "output.txt").read_text())
    assert outputs == ["answer 0\n", "answer 1\n"]
    failed = [r for r in runs(ev) if r["status"] == "failed"]
    assert len(failed) == 2 and failed[0]["task"]["name"] == "u"


def test_openai_runner_end_to_end(cli, tmp_path: Path, fake_openai) -> None:
    fake_openai.reply("Hello from the fake server",
                      usage={"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12})
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: say hello\n"},
                   configs={"default": f"runner: smevals:openai\nbase_url: {fake_openai.base_url}\n"
                                       "model: fake-1\ntemperature: 0\n"})
    res = cli("run", str(ev))
    assert res.code == 0, res.err
    rec = runs(ev)[0]
    assert (run_dirs(ev)[0] / "output.txt").read_text() == "Hello from the fake server"
    assert rec["usage"]["input_tokens"] == 7
    assert rec["usage"]["output_tokens"] == 5
    assert rec["usage"]["http_status"] == 200
    body = fake_openai.requests[0].body
    assert body["model"] == "fake-1"
    assert body["messages"] == [{"role": "user", "content": "say hello"}]


@pytest.mark.parametrize("command", [["run"], ["run", "--dry-run"], ["report"], ["grade"]])
@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_model_name_is_refused(cli, tmp_path: Path, command: list[str],
                                        name: str) -> None:
    ev = make_eval(tmp_path / "ev")
    res = cli(*command, str(ev), "-m", name)
    assert res.code == 2
    assert res.err.splitlines()[-1] == "Error: Invalid value for '-m' / '--model': a name " \
                                       "cannot be empty"
    assert not (ev / "results").exists()
