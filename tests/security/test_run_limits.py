"""Issue 34 item 5 and issue 41 item 4: what a runner leaves is bounded in size and count
before any of it is read (a 10 GB sparse file is refused by its size, never hashed), the Run
fails naming the file and the setting that raises the limit, and `build` never copies more
of one Run than that limit.

The limits are lowered through their settings so that a megabyte stands for the hundreds of
the defaults.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from smevals.site import jsdata
from tests.conftest import make_eval, run_cli

QUICK = 60                      # seconds: hashing 10 GB would take longer than this


def eval_with(root: Path, runner: str, task: str = "prompt: p\n",
              files: dict[str, str] | None = None) -> Path:
    return make_eval(root / "ev", tasks={"t": task},
                     configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                     files={"configs/r.sh": "#!/bin/sh\necho answer\n" + runner,
                            **(files or {})})


def only_run(ev: Path) -> tuple[Path, dict[str, Any]]:
    (folder,) = (ev / "results" / "runs").glob("*/*/*/*")
    return folder, json.loads((folder / "run.json").read_text())


def paths(record: dict[str, Any]) -> list[str]:
    return [f["path"] for f in record["files"]]


def test_a_sparse_file_of_10_gb_fails_the_run_by_its_size(tmp_path: Path) -> None:
    ev = eval_with(tmp_path, "truncate -s 10G big.bin\necho kept > a.txt\necho no > c.txt\n")
    res = run_cli("run", str(ev), timeout=QUICK)
    assert res.code == 1, res.both
    folder, record = only_run(ev)
    assert (record["status"], record["failure"]) == ("failed", {"kind": "artifact", "detail": (
        "big.bin (10737418240 bytes) takes the runner's files past the 256 MB a Run may keep "
        "(SMEVALS_MAX_RUN_MB raises it): it was not kept (and 1 more after it), and the Run "
        "counts as failed")})
    assert paths(record) == ["a.txt", "output.txt"]
    assert sorted(p.name for p in folder.iterdir()) == ["a.txt", "output.txt", "run.json"]
    assert run_cli("verify", str(ev)).code == 0
    site = tmp_path / "site"
    assert run_cli("build", str(ev), "-o", str(site)).code == 0
    assert sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) < 1 << 20


def test_the_size_limit_is_on_all_the_files_and_its_setting_raises_it(tmp_path: Path) -> None:
    ev = eval_with(tmp_path, "head -c 600000 /dev/zero > a.bin\nmkdir d\n"
                             "head -c 600000 /dev/zero > d/b.bin\n")
    res = run_cli("run", str(ev), env={"SMEVALS_MAX_RUN_MB": "1"})
    assert res.code == 1, res.both
    _folder, record = only_run(ev)
    assert record["failure"]["detail"] == (
        "d/b.bin (600000 bytes) takes the runner's files past the 1 MB a Run may keep "
        "(SMEVALS_MAX_RUN_MB raises it): it was not kept, and the Run counts as failed")
    assert paths(record) == ["a.bin", "output.txt"]
    res = run_cli("run", str(ev), "-n", "2", env={"SMEVALS_MAX_RUN_MB": "1.5"})
    assert res.code == 0, res.both


def test_the_count_limit_names_the_first_file_past_it(tmp_path: Path) -> None:
    ev = eval_with(tmp_path, "mkdir sub\nfor i in $(seq 10 39); do echo $i > sub/f$i; done\n")
    res = run_cli("run", str(ev), env={"SMEVALS_MAX_RUN_FILES": "10"})
    assert res.code == 1, res.both
    _folder, record = only_run(ev)
    assert record["failure"]["detail"] == (
        "sub/f19 is past the 10 files and folders a Run may keep (SMEVALS_MAX_RUN_FILES "
        "raises it): it was not kept (and 20 more after it), and the Run counts as failed")
    assert paths(record) == ["output.txt", *(f"sub/f{i}" for i in range(10, 19))]
    assert run_cli("run", str(ev), "-n", "2", env={"SMEVALS_MAX_RUN_FILES": "31"}).code == 0


def test_folders_nested_too_deep_are_not_kept(tmp_path: Path) -> None:
    ev = eval_with(tmp_path, "mkdir -p $(seq -s / 1 70)\necho deep > $(seq -s / 1 70)/x\n")
    res = run_cli("run", str(ev))
    assert res.code == 1, res.both
    _folder, record = only_run(ev)
    deep = "/".join(str(i) for i in range(1, 65))
    assert record["failure"]["detail"] == (
        f"{deep} is a folder nested 64 deep, past the 64 levels a Run may hold: it was not "
        "kept, and the Run counts as failed")
    assert paths(record) == ["output.txt"]


def test_unchanged_starting_files_do_not_count(tmp_path: Path) -> None:
    start = {f"start/f{i}.txt": f"{i}\n" for i in range(10, 20)}
    ev = eval_with(tmp_path, "echo new > new.txt\necho changed > f10.txt\n",
                   task="prompt: p\nworkspace: start\n", files=start)
    res = run_cli("run", str(ev), env={"SMEVALS_MAX_RUN_FILES": "2"})
    assert res.code == 0, res.both
    _folder, record = only_run(ev)
    assert record["workspace"]["changed"] == ["f10.txt"]
    assert record["workspace"]["added"] == ["new.txt"]
    res = run_cli("run", str(ev), "-n", "2", env={"SMEVALS_MAX_RUN_FILES": "1"})
    assert res.code == 1
    assert "new.txt is past the 1 files and folders a Run may keep" in res.out


def test_a_malformed_setting_is_refused_before_any_runner_starts(tmp_path: Path) -> None:
    ev = eval_with(tmp_path, "touch ran\n")
    for setting, value, said in (
            ("SMEVALS_MAX_RUN_MB", "big", "SMEVALS_MAX_RUN_MB: 'big' is not a size in "
                                          "megabytes (a number above 0)"),
            ("SMEVALS_MAX_RUN_FILES", "1.5", "SMEVALS_MAX_RUN_FILES: '1.5' is not a number of "
                                             "files (a whole number above 0)")):
        res = run_cli("run", str(ev), env={setting: value})
        assert (res.code, res.err) == (2, f"Error: {said}\n"), res.both
    assert not (ev / "results").exists()


def test_build_copies_no_more_of_a_run_than_its_limit(tmp_path: Path) -> None:
    ev = eval_with(tmp_path, "head -c 600000 /dev/urandom > a.bin\n"
                             "head -c 600000 /dev/urandom > b.bin\n"
                             "head -c 2000000 /dev/urandom > c.bin\n")
    assert run_cli("run", str(ev)).code == 0
    site = tmp_path / "site"
    res = run_cli("build", str(ev), "-o", str(site), env={"SMEVALS_MAX_RUN_MB": "1"})
    assert res.code == 0, res.both
    folder, _record = only_run(ev)
    (page,) = (site / "data").rglob("runs/*.js")
    files = {f["path"]: f for f in jsdata.decode(page.read_bytes())[1]["files"]}
    not_shown = ("not copied into the site: it takes the Run's files past the 1 MB a Run may "
                 "keep (SMEVALS_MAX_RUN_MB raises it)")
    assert "href" in files["a.bin"] and "not_shown" not in files["a.bin"]
    assert files["b.bin"] == {"path": "b.bin", "size": 600000, "kind": "binary",
                              "not_shown": not_shown}
    assert files["c.bin"] == {"path": "c.bin", "size": 2000000, "kind": "binary",
                              "not_shown": not_shown}
    copied = sum(p.stat().st_size for p in (site / "files").rglob("*") if p.is_file())
    assert 600000 <= copied <= 1 << 20
    assert (folder / "c.bin").stat().st_size == 2000000


def test_generated_noise_is_removed_before_the_limits_count_what_is_kept(tmp_path: Path) -> None:
    """A `node_modules/` of more files than a Run may keep is noise, never kept: it is removed
    first (`workspace_ignore`'s defaults), so it does not fail the Run; the same files under
    a name that is kept do."""
    make = "mkdir -p {d}\nfor i in 1 2 3 4 5 6; do echo $i > {d}/f$i.js; done\necho kept > a.txt\n"
    ev = eval_with(tmp_path, make.format(d="node_modules/pkg"))
    res = run_cli("run", str(ev), env={"SMEVALS_MAX_RUN_FILES": "4"})
    assert res.code == 0, res.both
    _, record = only_run(ev)
    assert record["status"] == "ok"
    assert paths(record) == ["a.txt", "output.txt"]
    assert (record["ignored"]["files"], record["ignored"]["rules"][-1]) == (6, "node_modules/")
    kept = eval_with(tmp_path / "kept", make.format(d="lib/pkg"))
    res = run_cli("run", str(kept), env={"SMEVALS_MAX_RUN_FILES": "4"})
    assert res.code == 1, res.both
    assert only_run(kept)[1]["failure"]["kind"] == "artifact"
