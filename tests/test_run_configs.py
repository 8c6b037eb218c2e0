"""eval.yaml `configs`: the Configs `smevals run` uses when no -c is given (each in turn);
without it, `default`; -c still chooses; a name that is no Config is bad input."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import run_cli, write


def _eval(root: Path, head: str) -> Path:
    write(root / "eval.yaml", head)
    write(root / "tasks/t.yaml", "prompt: p\n")
    for name in ("terse", "chatty"):
        write(root / f"configs/{name}.yaml", f"runner: smevals:replay\nresponses: r.jsonl\n"
                                             f"model: {name}-model\n")
    write(root / "configs/r.jsonl", '{"task": "t", "model": "terse-model", "output": "a"}\n'
                                    '{"task": "t", "model": "chatty-model", "output": "b"}\n')
    return root


def test_an_evals_configs_run_without_c(tmp_path: Path) -> None:
    ev = _eval(tmp_path / "ev", "configs: [terse, chatty]\n")
    assert run_cli("validate", str(ev)).code == 0
    dry = run_cli("run", str(ev), "--dry-run")
    assert dry.code == 0, dry.both
    assert dry.out == (
        "ev: 1 Run(s) to make with config 'terse' (1 task/model pair(s), 0 with earlier Runs "
        "of the same inputs)\n  t / terse / terse-model: 0 Run(s) exist, would run 1\n"
        "ev: 1 Run(s) to make with config 'chatty' (1 task/model pair(s), 0 with earlier Runs "
        "of the same inputs)\n  t / chatty / chatty-model: 0 Run(s) exist, would run 1\n")
    ran = run_cli("run", str(ev), "-j", "1")
    assert ran.code == 0, ran.both
    assert ran.out.endswith("2 ok, 0 failed\n")
    only = run_cli("run", str(ev), "-c", "chatty", "--dry-run")       # -c still chooses
    assert "with config 'terse'" not in only.out
    assert "t / chatty / chatty-model: 1 Run(s) exist, would run 1" in only.out


def test_without_configs_run_uses_default_and_says_how_to_choose(tmp_path: Path) -> None:
    ev = _eval(tmp_path / "ev", "description: x\n")
    res = run_cli("run", str(ev), "--dry-run")
    assert res.code == 2
    assert res.err == ("Error: ev: no config named 'default' - available configs: chatty, "
                       "terse; give -c NAME (repeatable), or list the Configs to run without -c "
                       "under `configs:` in eval.yaml\n")
    write(ev / "configs/default.yaml", "runner: smevals:replay\nresponses: r.jsonl\n"
                                       "model: terse-model\n")
    res = run_cli("run", str(ev), "--dry-run")
    assert res.code == 0, res.both
    assert res.out.startswith("ev: 1 Run(s) to make with config 'default'")


def test_a_listed_config_that_does_not_exist_is_bad_input(tmp_path: Path) -> None:
    ev = _eval(tmp_path / "ev", "configs:\n  - terse\n  - chaty\n")
    for command in ("validate", "run"):
        res = run_cli(command, str(ev))
        assert res.code == 2, res.both
        assert "eval.yaml:3:5: configs[1]: no config named 'chaty' in configs/ (have: chatty, " \
               "terse)" in res.err, res.err
    assert not (ev / "results").exists()
    write(ev / "eval.yaml", "configs: []\n")
    res = run_cli("validate", str(ev))
    assert res.code == 2
    assert "eval.yaml:1:10: configs:" in res.err, res.err
