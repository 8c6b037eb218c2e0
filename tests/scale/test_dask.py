"""`run --dask` and `grade --dask` on a LocalCluster of 2 worker processes (one per module)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from collections import Counter
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.helpers import SMEVALS, make_eval, run_cli

# Found without importing it here (half a second in every test process that collects this
# module); imported by the fixture that starts the cluster.
pytestmark = pytest.mark.skipif(find_spec("distributed") is None,
                                reason="the dask extra (distributed) is not installed")

DETERMINISTIC = {"default": """
checks:
  - checker: contains
    value: p1
"""}


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", resources={"GPU": 1})
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def _cells(store: Path) -> Counter[tuple[str, str, int, str]]:
    found: Counter[tuple[str, str, int, str]] = Counter()
    for path in store.glob("runs/*/*/*/*/run.json"):
        rec = json.loads(path.read_text())
        found[(rec["task"]["name"], rec["model"], rec["sample"], rec["status"])] += 1
    return found


def _grades(store: Path) -> Counter[tuple[str, int, str, float | None]]:
    runs = {p.parent.name: json.loads(p.read_text())
            for p in store.glob("runs/*/*/*/*/run.json")}
    found: Counter[tuple[str, int, str, float | None]] = Counter()
    for path in store.glob("grades/**/grade.json"):
        rec = json.loads(path.read_text())
        run = runs[rec["run"]["id"]]
        found[(run["task"]["name"], run["sample"], rec["outcome"], rec["score"])] += 1
    return found


def test_dask_run_equals_a_local_run(cli, tmp_path: Path, scheduler: str) -> None:
    ev = make_eval(tmp_path / "ev", graders=DETERMINISTIC,
                   tasks={"t1": "prompt: p1\n", "t2": "prompt: p2\n"})
    local, remote = tmp_path / "local", tmp_path / "remote"
    assert cli("run", str(ev), "-n", "3", "-g", "--store", str(local)).code == 1
    res = cli("run", str(ev), "-n", "3", "-g", "--dask", scheduler, "--store", str(remote))
    assert res.code == 1, res.both
    lines = res.out.splitlines()
    assert lines[0] == ("ev: 6 Run(s) to make with config 'default' (2 task/model pair(s), "
                        "0 with earlier Runs of the same inputs)")
    assert lines[-1] == "6 ok, 0 failed"
    assert res.out.count("    grade: pass") == 3 and res.out.count("    grade: fail") == 3
    assert res.err.splitlines()[-1] == "Error: 3 run(s) graded as fail"
    assert cli("verify", str(ev), "--store", str(remote)).code == 0
    assert _cells(remote / "ev") == _cells(local / "ev")
    assert _grades(remote / "ev") == _grades(local / "ev")
    more = cli("run", str(ev), "-n", "4", "--dask", scheduler, "--store", str(remote))
    assert more.code == 0 and more.out.splitlines()[0].startswith("ev: 2 Run(s) to make")
    assert sum(_cells(remote / "ev").values()) == 8


def test_worker_killed_mid_attempt(cli, tmp_path: Path, scheduler: str) -> None:
    mark = tmp_path / "killed"
    runner = f"""
    #!/bin/sh
    if [ "$SMEVALS_TASK" = t1 ] && mkdir {mark} 2>/dev/null; then
      kill -9 $PPID
      sleep 2
    fi
    sleep 0.2
    echo "$SMEVALS_PROMPT says"
    """
    ev = make_eval(tmp_path / "ev", tasks={f"t{i}": f"prompt: p{i}\n" for i in range(3)},
                   files={"configs/echo.sh": runner})
    res = cli("run", str(ev), "-n", "2", env={"SMEVALS_DASK": scheduler})
    assert res.code == 0, res.both
    assert mark.is_dir()
    assert res.out.splitlines()[-1] == "6 ok, 0 failed"
    cells = _cells(ev / "results")
    assert cells == Counter({(f"t{i}", "m1", s, "ok"): 1 for i in range(3) for s in (0, 1)})
    verify = cli("verify", str(ev))
    assert verify.code == 0, verify.both


def test_dask_grade_equals_a_local_grade(cli, tmp_path: Path, scheduler: str) -> None:
    ev = make_eval(tmp_path / "ev", graders=DETERMINISTIC,
                   tasks={"t1": "prompt: p1\n", "t2": "prompt: p2\n"})
    assert cli("run", str(ev), "-n", "2").code == 0
    shutil.copytree(ev / "results", tmp_path / "copy" / "ev")
    assert cli("grade", str(ev), "--store", str(tmp_path / "copy")).code == 1
    res = cli("grade", str(ev), "--dask", scheduler, "--dask-resources", "GPU=1")
    assert res.code == 1, res.both
    assert "Graded 4 Run(s): 2 pass, 2 fail" in res.out
    assert _grades(ev / "results") == _grades(tmp_path / "copy" / "ev")
    assert cli("verify", str(ev)).code == 0
    again = cli("grade", str(ev), "--dask", scheduler)
    assert "Graded 0 Run(s)" in again.out


def test_ctrl_c_keeps_what_arrived_and_resumes(tmp_path: Path, scheduler: str) -> None:
    fast = tmp_path / "fast"
    runner = f"""
    #!/bin/sh
    [ "$SMEVALS_TASK" = t0 ] || [ -e {fast} ] || sleep 1.5
    echo "$SMEVALS_PROMPT says"
    """
    ev = make_eval(tmp_path / "ev", tasks={f"t{i}": f"prompt: p{i}\n" for i in range(6)},
                   files={"configs/echo.sh": runner})
    proc = subprocess.Popen([SMEVALS, "run", str(ev), "--dask", scheduler],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("ev: 6 Run(s) to make")
    assert proc.stdout.readline().startswith("t0 / default / m1 ... ok")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Interrupted: the Runs above are kept" in err
    assert _cells(ev / "results") == Counter({("t0", "m1", 0, "ok"): 1})
    assert [p.name for p in (ev / "results" / ".staging").iterdir()] == [".gitignore"]
    fast.touch()
    resumed = run_cli("run", str(ev), "-n", "1", "--dask", scheduler)
    assert resumed.code == 0, resumed.both
    assert resumed.out.splitlines()[0].startswith("ev: 5 Run(s) to make")
    assert sorted(_cells(ev / "results")) == [(f"t{i}", "m1", 0, "ok") for i in range(6)]


def test_unreachable_scheduler_exits_2(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev")
    res = cli("run", str(ev), "--dask", "tcp://127.0.0.1:9", env={"SMEVALS_DASK_TIMEOUT": "0.5"})
    assert res.code == 2, res.both
    assert res.err.startswith("Error: --dask tcp://127.0.0.1:9: cannot reach the Dask "
                              "scheduler: ")
    assert not list((ev / "results").glob("runs/*"))


def test_bad_dask_resources_exit_2(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev")
    res = cli("run", str(ev), "--dask", "tcp://127.0.0.1:9", "--dask-resources", "GPU")
    assert res.code == 2
    assert res.err == "Error: --dask-resources: 'GPU' is not NAME=AMOUNT (for example GPU=1)\n"
    res = cli("grade", str(ev), "--dask-resources", "GPU=1")
    assert res.code == 2
    assert "--dask-resources needs --dask ADDRESS (or SMEVALS_DASK)" in res.err


def test_dask_workers_use_and_fill_the_judge_cache(cli, tmp_path: Path, scheduler: str,
                                                   fake_openai) -> None:
    from tests.helpers.judges import answer_with, judge_eval, newest

    answer_with(fake_openai, lambda user: {"reason": "fine", "pass": True})
    ev = judge_eval(tmp_path / "ev", fake_openai,
                    "  - checker: llm_judge\n    rubric: Is it polite?\n")
    assert cli("run", str(ev)).code == 0
    first = cli("grade", str(ev), "--dask", scheduler)
    assert "Graded 2 Run(s): 2 pass, 0 fail" in first.out, first.both
    assert len(fake_openai.requests) == 2
    keys = {c["cache_key"] for t in ("one", "two") for c in json.loads(
        (Path(newest(ev, t)["_dir"]) / "judge-1-llm-judge.json").read_text())["calls"]}
    kept = {p.name.split(".")[0] for p in (ev / "results" / "judges").glob("*/*.json")}
    assert kept == keys and len(kept) == 2
    again = cli("regrade", str(ev), "--dask", scheduler)
    assert "Graded 2 Run(s): 2 pass, 0 fail" in again.out, again.both
    assert len(fake_openai.requests) == 2
    assert newest(ev, "one")["judge"] == {"calls": 0, "cached": 1, "input_tokens": 0,
                                          "output_tokens": 0}
    # run -g: Runs one and two say what their earlier Runs said, so only three is asked.
    (ev / "tasks" / "three.yaml").write_text("prompt: hello three\n")
    made = cli("run", str(ev), "-g", "--dask", scheduler)
    assert made.code == 0 and made.out.count("    grade: pass") == 3, made.both
    assert len(fake_openai.requests) == 3
    assert len(list((ev / "results" / "judges").glob("*/*.json"))) == 3
    assert cli("verify", str(ev)).out == "OK: 15 object(s) verified, no problems\n"


def test_dask_run_of_a_task_with_starting_files(cli, tmp_path: Path, scheduler: str) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\nworkspace: start\n"},
                   graders={"default": "checks:\n  - checker: command\n"
                                       "    command: cat a.txt b.txt\n"},
                   files={"configs/echo.sh": "#!/bin/sh\necho b > b.txt\nrm a.txt\n",
                          "start/a.txt": "a\n", "start/.hidden": "h\n"})
    res = cli("run", str(ev), "-g", "--dask", scheduler)
    assert res.code == 1, res.err            # a.txt was deleted: `cat` fails
    (run,) = (ev / "results" / "runs").rglob("run.json")
    record = json.loads(run.read_text())
    assert record["status"] == "ok"              # the worker copied the dot file too
    assert record["workspace"]["deleted"] == ["a.txt"]
    assert record["workspace"]["added"] == ["b.txt"]
    (grade,) = (ev / "results" / "grades").rglob("grade.json")
    check = json.loads(grade.read_text())["checks"][0]
    assert check["notes"] == "command exited with code 1"


def test_the_scratch_stores_are_in_the_workers_own_folder(scheduler: str) -> None:
    """So that Dask removes them with the worker, and purges those of a killed worker
    (test_worker_killed_mid_attempt left one in the temporary directory per session)."""
    distributed = pytest.importorskip("distributed")

    def where() -> tuple[str, str]:
        from smevals.scale.worker import _scratch

        return str(_scratch().root), distributed.get_worker().local_directory

    with distributed.Client(scheduler) as client:
        workers = sorted(client.scheduler_info()["workers"])
        found = client.gather([client.submit(where, workers=[address], pure=False)
                               for address in workers])
        assert len(found) == 2
        for pair in found:
            store, own = (Path(one) for one in pair)
            assert store.parent.parent == own and store.parent.name.startswith(
                "smevals-worker-"), pair
